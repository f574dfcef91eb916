/* Brute-force references for the mid phase; see mesh_reference.h.
 *
 * Every yes/no answer reduces to signs of orientation determinants, and each
 * sign is exact: a double evaluation is trusted when it clears a forward
 * error bound; a repeated point (shared mesh vertices) is an exact 0; else
 * the determinant is expanded into a sum of products of three numbers (the
 * coordinate differences when those are exact, else the raw coordinates),
 * each product split into four doubles by error-free transformations, and
 * the sum accumulated exactly as a nonoverlapping expansion (Shewchuk,
 * "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric
 * Predicates", 1997), whose sign is that of its largest component. The
 * geometry on top is then a chain of
 * closed-set facts that hold without any tolerance:
 * - two closed triangles meet iff an edge of one meets the other (their
 *   common part is a segment or polygon whose ends or corners lie on edges);
 * - a segment crossing a triangle's plane meets the triangle iff its line
 *   passes on the same side of all three edges (the Plücker test);
 * - coplanar sets meet iff they meet in all three coordinate projections
 *   (each projection is necessary, and one of them is one-to-one on the
 *   plane), so no projection axis has to be chosen from rounded normals.
 * Measures (distances, depths, margins) are plain double arithmetic. */
#include "mesh_reference.h"

#include "reference.h"
#include "ref_vec.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 0, 1 and the TS 18661-3 values 16, 32, 64 all round double operations to
 * double; 2 (x87) and 128 carry excess precision, -1 says nothing. */
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD < 0 || FLT_EVAL_METHOD == 2 || FLT_EVAL_METHOD > 64
#error "the exact predicates need every double operation rounded to double"
#endif

/* ---- vectors ---------------------------------------------------------------- */


static double v_len(const double a[3])
{
    return sqrt(v_dot(a, a));
}

/* Minimum and maximum of three finite numbers, inline (fmin and fmax are
 * library calls that also handle NaN, which the hot loops never see). */
static inline double min3(double a, double b, double c)
{
    double m = a < b ? a : b;
    return m < c ? m : c;
}

static inline double max3(double a, double b, double c)
{
    double m = a > b ? a : b;
    return m > c ? m : c;
}

/* ---- exact arithmetic ----------------------------------------------------------- */

/* a + b == *s + *e exactly (Knuth's two-sum, no ordering of |a|, |b|
 * needed). Has no multiplication, so FMA contraction cannot touch it. */
static void two_sum(double a, double b, double* s, double* e)
{
    double x = a + b;
    double bv = x - a;
    double av = x - bv;
    *e = (a - av) + (b - bv);
    *s = x;
}

#ifndef FP_FAST_FMA
/* Veltkamp's split: a == *hi + *lo with both halves of at most 26
 * significant bits, so products of halves are exact. */
static void split(double a, double* hi, double* lo)
{
    double c = 134217729.0 * a; /* 2^27 + 1 */
    double big = c - a;
    *hi = c - big;
    *lo = a - *hi;
}
#endif

/* a * b == *p + *e exactly (no underflow assumed). With a hardware fma the
 * error is one fused operation; without one, Dekker's product, which is safe
 * from contraction precisely because there is no fma to contract into (the
 * compiler defines FP_FAST_FMA whenever it could fuse). */
static void two_product(double a, double b, double* p, double* e)
{
    double x = a * b;
#ifdef FP_FAST_FMA
    *e = fma(a, b, -x);
#else
    double ahi, alo, bhi, blo;
    split(a, &ahi, &alo);
    split(b, &bhi, &blo);
    double err1 = x - ahi * bhi;
    double err2 = err1 - alo * bhi;
    double err3 = err2 - ahi * blo;
    *e = alo * blo - err3;
#endif
    *p = x;
}

/* An exact sum under construction: a nonoverlapping expansion, components
 * in increasing magnitude, zeros dropped. Each added double lengthens it by
 * at most one component; orient3d adds at most 96. */
enum { EXACT_MAX = 100 };
typedef struct exact_sum {
    double e[EXACT_MAX];
    int n;
} exact_sum;

/* Shewchuk's GROW-EXPANSION with zero elimination. Writing e[m] while
 * reading e[i] is safe because m <= i. */
static void exact_add(exact_sum* s, double b)
{
    double q = b;
    int m = 0;
    for (int i = 0; i < s->n; i++) {
        double h;
        two_sum(q, s->e[i], &q, &h);
        if (h != 0.0)
            s->e[m++] = h;
    }
    if (q != 0.0)
        s->e[m++] = q;
    s->n = m;
}

/* Adds x * y exactly. */
static void exact_add_product2(exact_sum* s, double x, double y)
{
    double p, e;
    two_product(x, y, &p, &e);
    exact_add(s, p);
    exact_add(s, e);
}

/* Adds x * y * z exactly: x * y = p + pe, then p * z and pe * z split too. */
static void exact_add_product3(exact_sum* s, double x, double y, double z)
{
    double p, pe, q, qe, r, re;
    two_product(x, y, &p, &pe);
    two_product(p, z, &q, &qe);
    two_product(pe, z, &r, &re);
    exact_add(s, q);
    exact_add(s, qe);
    exact_add(s, r);
    exact_add(s, re);
}

/* The largest component of a nonoverlapping expansion outweighs all the
 * others together, so it carries the sign. */
static int exact_sign(const exact_sum* s)
{
    if (s->n == 0)
        return 0;
    return s->e[s->n - 1] > 0.0 ? 1 : -1;
}

/* ---- orientation predicates -------------------------------------------------- */

static int sign_of(double x)
{
    return (x > 0.0) - (x < 0.0);
}

static int same_point(const double a[3], const double b[3])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

/* det(x, y, z) = x . (y x z) of raw coordinates, scaled by sign (+-1),
 * added exactly. */
static void exact_add_det3(exact_sum* s, double sign, const double x[3], const double y[3], const double z[3])
{
    exact_add_product3(s, sign * x[0], y[1], z[2]);
    exact_add_product3(s, -sign * x[0], y[2], z[1]);
    exact_add_product3(s, sign * x[1], y[2], z[0]);
    exact_add_product3(s, -sign * x[1], y[0], z[2]);
    exact_add_product3(s, sign * x[2], y[0], z[1]);
    exact_add_product3(s, -sign * x[2], y[1], z[0]);
}

/* 1 when the three differences x - d came out exact (Sterbenz: nearby
 * coordinates, or small integers), written to r. */
static int exact_differences(double r[3], const double x[3], const double d[3])
{
    int exact = 1;
    for (int k = 0; k < 3; k++) {
        double tail;
        two_sum(x[k], -d[k], &r[k], &tail);
        exact &= tail == 0.0;
    }
    return exact;
}

/* The determinant exactly. When the differences a - d, b - d, c - d are
 * exact, from them (6 products of three); otherwise by multilinearity,
 * det(a-d, b-d, c-d) = det(a,b,c) - det(b,c,d) + det(a,c,d) - det(a,b,d),
 * from raw coordinates (24 products). */
static int orient3d_exact(const double a[3], const double b[3], const double c[3], const double d[3])
{
    exact_sum s;
    s.n = 0;
    double ad[3], bd[3], cd[3];
    if (exact_differences(ad, a, d) & exact_differences(bd, b, d) & exact_differences(cd, c, d)) {
        exact_add_det3(&s, 1.0, ad, bd, cd);
        return exact_sign(&s);
    }
    exact_add_det3(&s, 1.0, a, b, c);
    exact_add_det3(&s, -1.0, b, c, d);
    exact_add_det3(&s, 1.0, a, c, d);
    exact_add_det3(&s, -1.0, a, b, d);
    return exact_sign(&s);
}

int ref_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double ad[3], bd[3], cd[3];
    v_sub(ad, a, d);
    v_sub(bd, b, d);
    v_sub(cd, c, d);
    double bc_x = bd[1] * cd[2] - bd[2] * cd[1];
    double bc_y = bd[2] * cd[0] - bd[0] * cd[2];
    double bc_z = bd[0] * cd[1] - bd[1] * cd[0];
    double det = ad[0] * bc_x + ad[1] * bc_y + ad[2] * bc_z;
    double permanent = fabs(ad[0]) * (fabs(bd[1] * cd[2]) + fabs(bd[2] * cd[1])) +
                       fabs(ad[1]) * (fabs(bd[2] * cd[0]) + fabs(bd[0] * cd[2])) +
                       fabs(ad[2]) * (fabs(bd[0] * cd[1]) + fabs(bd[1] * cd[0]));
    /* Shewchuk's bound is 7.8e-16 * permanent; five times that also covers
     * a compiler fusing some of the products above into fmas. */
    if (fabs(det) > 4e-15 * permanent)
        return sign_of(det);
    /* Meshes share vertices: a repeated point is an exact 0 for free. */
    if (same_point(a, b) || same_point(a, c) || same_point(a, d) || same_point(b, c) || same_point(b, d) ||
        same_point(c, d))
        return 0;
    return orient3d_exact(a, b, c, d);
}

/* (ax - cx)(by - cy) - (ay - cy)(bx - cx), expanded over raw coordinates
 * (the cx * cy terms cancel). */
static int orient2_exact(double ax, double ay, double bx, double by, double cx, double cy)
{
    exact_sum s;
    s.n = 0;
    exact_add_product2(&s, ax, by);
    exact_add_product2(&s, -ax, cy);
    exact_add_product2(&s, -cx, by);
    exact_add_product2(&s, -ay, bx);
    exact_add_product2(&s, ay, cx);
    exact_add_product2(&s, cy, bx);
    return exact_sign(&s);
}

static int orient2(double ax, double ay, double bx, double by, double cx, double cy)
{
    double left = (ax - cx) * (by - cy);
    double right = (ay - cy) * (bx - cx);
    double det = left - right;
    /* Shewchuk's bound is 3.3e-16 * (|left| + |right|); kept generous. */
    if (fabs(det) > 2e-15 * (fabs(left) + fabs(right)))
        return sign_of(det);
    if ((ax == bx && ay == by) || (ax == cx && ay == cy) || (bx == cx && by == cy))
        return 0;
    return orient2_exact(ax, ay, bx, by, cx, cy);
}

int ref_orient2d(const double a[2], const double b[2], const double c[2])
{
    return orient2(a[0], a[1], b[0], b[1], c[0], c[1]);
}

/* ---- closed tests in a coordinate projection ------------------------------------ */

/* A point projected by dropping coordinate k; dropping takes no rounding. */
typedef struct pt2 {
    double x, y;
} pt2;

static pt2 drop_axis(const double p[3], int k)
{
    pt2 r = {p[(k + 1) % 3], p[(k + 2) % 3]};
    return r;
}

static int orient_pt2(pt2 a, pt2 b, pt2 c)
{
    return orient2(a.x, a.y, b.x, b.y, c.x, c.y);
}

/* For r collinear with p and q: r is on the closed segment iff it is in the
 * segment's box (for p == q the box is the point). */
static int in_box2(pt2 p, pt2 q, pt2 r)
{
    return fmin(p.x, q.x) <= r.x && r.x <= fmax(p.x, q.x) && fmin(p.y, q.y) <= r.y && r.y <= fmax(p.y, q.y);
}

/* Closed segments p-q and r-s meet: a proper crossing, or an endpoint of one
 * on the other. Zero-length segments fall out right: every orientation with
 * a repeated point is 0, and the box test then asks for equality. */
static int seg_seg2(pt2 p, pt2 q, pt2 r, pt2 s)
{
    int d1 = orient_pt2(r, s, p), d2 = orient_pt2(r, s, q);
    int d3 = orient_pt2(p, q, r), d4 = orient_pt2(p, q, s);
    if (d1 * d2 < 0 && d3 * d4 < 0)
        return 1;
    return (d1 == 0 && in_box2(r, s, p)) || (d2 == 0 && in_box2(r, s, q)) || (d3 == 0 && in_box2(p, q, r)) ||
           (d4 == 0 && in_box2(p, q, s));
}

/* p in the closed triangle a, b, c (not collinear): on no edge's strict
 * outside, whichever way the triangle turns. */
static int in_triangle2(pt2 p, pt2 a, pt2 b, pt2 c)
{
    int s0 = orient_pt2(a, b, p), s1 = orient_pt2(b, c, p), s2 = orient_pt2(c, a, p);
    return !((s0 > 0 || s1 > 0 || s2 > 0) && (s0 < 0 || s1 < 0 || s2 < 0));
}

/* Closed segment against closed triangle in projection k. If they meet but
 * no edge meets the segment, the segment is inside, so p is. A triangle
 * that projects to a segment is the union of its edges. */
static int seg_tri2(const double* p, const double* q, const double* const t[3], int k)
{
    pt2 pp = drop_axis(p, k), qq = drop_axis(q, k);
    pt2 a = drop_axis(t[0], k), b = drop_axis(t[1], k), c = drop_axis(t[2], k);
    if (orient_pt2(a, b, c) != 0 && in_triangle2(pp, a, b, c))
        return 1;
    return seg_seg2(pp, qq, a, b) || seg_seg2(pp, qq, b, c) || seg_seg2(pp, qq, c, a);
}

/* ---- closed tests in 3D ----------------------------------------------------------- */

/* Zero area exactly: each component of (b - a) x (c - a) is the orientation
 * in one projection. */
static int degenerate3(const double* const t[3])
{
    for (int k = 0; k < 3; k++)
        if (orient_pt2(drop_axis(t[0], k), drop_axis(t[1], k), drop_axis(t[2], k)) != 0)
            return 0;
    return 1;
}

/* The ends of collinear points: extremes along the axis of largest spread.
 * That axis has nonzero spread unless the points coincide, and along it the
 * order is the order on the line (a difference of distinct doubles is never
 * 0, so the spreads compared are honest up to rounding). */
static void collinear_ends(const double* const t[3], const double** lo, const double** hi)
{
    int axis = 0;
    double best = -1.0;
    for (int k = 0; k < 3; k++) {
        double mn = fmin(t[0][k], fmin(t[1][k], t[2][k])), mx = fmax(t[0][k], fmax(t[1][k], t[2][k]));
        if (mx - mn > best) {
            best = mx - mn;
            axis = k;
        }
    }
    *lo = *hi = t[0];
    for (int i = 1; i < 3; i++) {
        if (t[i][axis] < (*lo)[axis])
            *lo = t[i];
        if (t[i][axis] > (*hi)[axis])
            *hi = t[i];
    }
}

/* Closed segments in 3D: they can only meet when coplanar, and then they
 * meet iff they do in all three projections. */
static int seg_seg3(const double* p, const double* q, const double* r, const double* s)
{
    if (ref_orient3d(p, q, r, s) != 0)
        return 0;
    for (int k = 0; k < 3; k++)
        if (!seg_seg2(drop_axis(p, k), drop_axis(q, k), drop_axis(r, k), drop_axis(s, k)))
            return 0;
    return 1;
}

/* Closed segment p-q against the closed non-degenerate triangle t, given
 * sp, sq: ref_orient3d(t, p) and (t, q). Ends strictly on one side: no.
 * Both in the plane: the projections decide. Otherwise the line crosses the
 * plane at a point of the segment, inside t iff the line passes no edge on
 * the other side from the rest (the three orientations are the point's
 * barycentric areas times one common factor). */
static int seg_tri3(const double* p, const double* q, const double* const t[3], int sp, int sq)
{
    if (sp * sq > 0)
        return 0;
    if (sp == 0 && sq == 0) {
        for (int k = 0; k < 3; k++)
            if (!seg_tri2(p, q, t, k))
                return 0;
        return 1;
    }
    int s0 = ref_orient3d(p, q, t[0], t[1]);
    int s1 = ref_orient3d(p, q, t[1], t[2]);
    int s2 = ref_orient3d(p, q, t[2], t[0]);
    return !((s0 > 0 || s1 > 0 || s2 > 0) && (s0 < 0 || s1 < 0 || s2 < 0));
}

/* A closed segment (p == q: a point) against a closed triangle of any kind. */
static int seg_any_tri(const double* p, const double* q, const double* const t[3], int t_degenerate)
{
    if (t_degenerate) {
        const double *lo, *hi;
        collinear_ends(t, &lo, &hi);
        return seg_seg3(p, q, lo, hi);
    }
    return seg_tri3(p, q, t, ref_orient3d(t[0], t[1], t[2], p), ref_orient3d(t[0], t[1], t[2], q));
}

static int all_strictly_one_side(const int s[3])
{
    return (s[0] > 0 && s[1] > 0 && s[2] > 0) || (s[0] < 0 && s[1] < 0 && s[2] < 0);
}

/* Closed triangles meet iff an edge of one meets the other. A degenerate
 * triangle is its own segment, so that segment against the other suffices. */
static int tri_tri(const double* const a[3], const double* const b[3])
{
    int deg_a = degenerate3(a), deg_b = degenerate3(b);
    if (deg_a) {
        const double *lo, *hi;
        collinear_ends(a, &lo, &hi);
        return seg_any_tri(lo, hi, b, deg_b);
    }
    if (deg_b) {
        const double *lo, *hi;
        collinear_ends(b, &lo, &hi);
        return seg_any_tri(lo, hi, a, 0);
    }
    int sa[3], sb[3];
    for (int i = 0; i < 3; i++)
        sb[i] = ref_orient3d(a[0], a[1], a[2], b[i]);
    if (all_strictly_one_side(sb))
        return 0;
    for (int i = 0; i < 3; i++)
        sa[i] = ref_orient3d(b[0], b[1], b[2], a[i]);
    if (all_strictly_one_side(sa))
        return 0;
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3;
        if (seg_tri3(a[k], a[k1], b, sa[k], sa[k1]) || seg_tri3(b[k], b[k1], a, sb[k], sb[k1]))
            return 1;
    }
    return 0;
}

static void rows(double t[3][3], const double* r[3])
{
    r[0] = t[0];
    r[1] = t[1];
    r[2] = t[2];
}

int ref_tri_degenerate(double tri[3][3])
{
    const double* t[3];
    rows(tri, t);
    return degenerate3(t);
}

int ref_tri_tri_intersect(double a[3][3], double b[3][3])
{
    const double *ra[3], *rb[3];
    rows(a, ra);
    rows(b, rb);
    return tri_tri(ra, rb);
}

/* ---- triangle measures ----------------------------------------------------------- */

double ref_tri_tri_separation(double a[3][3], double b[3][3])
{
    return ref_triangle_triangle(a[0], a[1], a[2], b[0], b[1], b[2], NULL, NULL);
}

/* Overlap of the projections on u (any length; normalised here). */
static double overlap_on(const double u_in[3], double a[3][3], double b[3][3])
{
    double len = v_len(u_in);
    double u[3] = {u_in[0] / len, u_in[1] / len, u_in[2] / len};
    double a_lo = INFINITY, a_hi = -INFINITY, b_lo = INFINITY, b_hi = -INFINITY;
    for (int i = 0; i < 3; i++) {
        double pa = v_dot(u, a[i]), pb = v_dot(u, b[i]);
        a_lo = fmin(a_lo, pa);
        a_hi = fmax(a_hi, pa);
        b_lo = fmin(b_lo, pb);
        b_hi = fmax(b_hi, pb);
    }
    return fmin(a_hi - b_lo, b_hi - a_lo);
}

/* Depth of a known intersection. Moving b along any unit u by the overlap
 * on u leaves the two touching, so every axis bounds the depth from above,
 * and the facet normals of a - b (both normals and the edge cross products,
 * for triangles, degenerate ones included) attain it. Zero axes (parallel
 * edges, zero normals) are no facet and are skipped; noisy near-zero ones
 * are still honest upper bounds. No axis at all means a - b is a segment or
 * a point, with no interior: depth 0. */
static double intersection_depth(double a[3][3], double b[3][3])
{
    double ea[3][3], eb[3][3], u[3], n[3];
    for (int k = 0; k < 3; k++) {
        v_sub(ea[k], a[(k + 1) % 3], a[k]);
        v_sub(eb[k], b[(k + 1) % 3], b[k]);
    }
    double best = INFINITY;
    v_cross(n, ea[0], ea[1]);
    if (v_dot(n, n) > 0.0)
        best = fmin(best, overlap_on(n, a, b));
    v_cross(n, eb[0], eb[1]);
    if (v_dot(n, n) > 0.0)
        best = fmin(best, overlap_on(n, a, b));
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            v_cross(u, ea[i], eb[j]);
            if (v_dot(u, u) > 0.0)
                best = fmin(best, overlap_on(u, a, b));
        }
    }
    return best == INFINITY ? 0.0 : fmax(best, 0.0);
}

double ref_tri_tri_penetration(double a[3][3], double b[3][3])
{
    return ref_tri_tri_intersect(a, b) ? intersection_depth(a, b) : 0.0;
}

double ref_tri_tri_signed_distance(double a[3][3], double b[3][3])
{
    if (ref_tri_tri_intersect(a, b))
        return -intersection_depth(a, b);
    return ref_tri_tri_separation(a, b);
}

/* ---- meshes ----------------------------------------------------------------------- */

/* ref_mesh_triangle's body, static so that the loops over whole meshes
 * inline it; one definition keeps the corners of both bit-identical. */
static inline void load_triangle(float (*v)[3], int (*t)[3], int i, double rot[3][3], const double trans[3],
                                 double out[3][3])
{
    const int* corner = t[i];
    for (int c = 0; c < 3; c++) {
        const float* p = v[corner[c]];
        double x0 = p[0], x1 = p[1], x2 = p[2];
        double* r = out[c];
        if (rot) {
            for (int k = 0; k < 3; k++)
                r[k] = rot[k][0] * x0 + rot[k][1] * x1 + rot[k][2] * x2;
        } else {
            r[0] = x0;
            r[1] = x1;
            r[2] = x2;
        }
        if (trans) {
            r[0] += trans[0];
            r[1] += trans[1];
            r[2] += trans[2];
        }
    }
}

void ref_mesh_triangle(float (*v)[3], int (*t)[3], int i, double rot[3][3], const double trans[3],
                       double out[3][3])
{
    load_triangle(v, t, i, rot, trans, out);
}

int ref_mesh_triangle_degenerate(float (*v)[3], int (*t)[3], int i)
{
    double c[3][3];
    ref_mesh_triangle(v, t, i, NULL, NULL, c);
    return ref_tri_degenerate(c);
}

void ref_pair_list_free(ref_pair_list* list)
{
    if (!list)
        return;
    free(list->pairs);
    memset(list, 0, sizeof *list);
}

static int push_pair(ref_pair_list* list, const ref_mesh_pair* p)
{
    if (list->count == list->capacity) {
        if (list->capacity == INT_MAX)
            return -1;
        int cap = list->capacity > INT_MAX / 2 ? INT_MAX : (list->capacity ? 2 * list->capacity : 1024);
        ref_mesh_pair* grown = realloc(list->pairs, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        list->pairs = grown;
        list->capacity = cap;
    }
    list->pairs[list->count++] = *p;
    return 0;
}

/* A triangle's closed box and its index in the mesh. */
typedef struct tri_box {
    double lo[3], hi[3];
    int id;
} tri_box;

/* One mesh in the common frame: corners, exact degeneracy (in the mesh's
 * own float coordinates: a rotation's rounding would hide it), boxes. */
typedef struct mesh_view {
    int n;
    double (*corners)[3][3];
    unsigned char* degenerate;
    tri_box* boxes;
} mesh_view;

static void view_free(mesh_view* m)
{
    free(m->corners);
    free(m->degenerate);
    free(m->boxes);
    memset(m, 0, sizeof *m);
}

static int view_init(mesh_view* m, float (*v)[3], int (*t)[3], int n, double rot[3][3], const double trans[3])
{
    memset(m, 0, sizeof *m);
    m->n = n;
    size_t count = n > 0 ? (size_t)n : 1;
    m->corners = malloc(count * sizeof *m->corners);
    m->degenerate = malloc(count);
    m->boxes = malloc(count * sizeof *m->boxes);
    if (!m->corners || !m->degenerate || !m->boxes) {
        view_free(m);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        m->degenerate[i] = (unsigned char)ref_mesh_triangle_degenerate(v, t, i);
        load_triangle(v, t, i, rot, trans, m->corners[i]);
    }
    return 0;
}

/* Largest coordinate magnitude: the scale of rounding errors. */
static double view_scale(const mesh_view* m)
{
    double s = 0.0;
    for (int i = 0; i < m->n; i++)
        for (int c = 0; c < 3; c++)
            for (int k = 0; k < 3; k++)
                s = fmax(s, fabs(m->corners[i][c][k]));
    return s;
}

/* Closed boxes of the corners, grown by pad on every side. Subtracting a
 * pad >= 0 rounds to at most the exact box's bound, so it never shrinks. */
static void view_boxes(mesh_view* m, double pad)
{
    for (int i = 0; i < m->n; i++) {
        tri_box* b = &m->boxes[i];
        b->id = i;
        for (int k = 0; k < 3; k++) {
            double (*c)[3] = m->corners[i];
            b->lo[k] = min3(c[0][k], c[1][k], c[2][k]) - pad;
            b->hi[k] = max3(c[0][k], c[1][k], c[2][k]) + pad;
        }
    }
}

static int cmp_box_lo(const void* pa, const void* pb)
{
    const tri_box *a = pa, *b = pb;
    if (a->lo[0] != b->lo[0])
        return a->lo[0] < b->lo[0] ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_pair(const void* pa, const void* pb)
{
    const ref_mesh_pair *a = pa, *b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static int overlap_yz(const tri_box* a, const tri_box* b)
{
    return a->lo[1] <= b->hi[1] && b->lo[1] <= a->hi[1] && a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

/* What to do with a pair of overlapping boxes; nonzero stops (out of memory). */
typedef int pair_visit_fn(void* user, int ia, int ib);

/* Both box lists sorted by lo.x, merged in that order (ties: B first). The
 * box met first scans the other list from the merge point for boxes
 * starting before it ends: those overlap it in x, since they start no
 * earlier. Each overlapping pair is met exactly once, by whichever of its
 * boxes comes first in the merge. */
static int sweep(const tri_box* a, int na, const tri_box* b, int nb, pair_visit_fn* visit, void* user)
{
    int i = 0, j = 0;
    while (i < na && j < nb) {
        if (a[i].lo[0] < b[j].lo[0]) {
            for (int k = j; k < nb && b[k].lo[0] <= a[i].hi[0]; k++)
                if (overlap_yz(&a[i], &b[k]) && visit(user, a[i].id, b[k].id))
                    return -1;
            i++;
        } else {
            for (int k = i; k < na && a[k].lo[0] <= b[j].hi[0]; k++)
                if (overlap_yz(&a[k], &b[j]) && visit(user, a[k].id, b[j].id))
                    return -1;
            j++;
        }
    }
    return 0;
}

typedef struct pairs_job {
    const mesh_view* a;
    const mesh_view* b;
    double band;
    ref_pair_list* out;
} pairs_job;

static int visit_candidate(void* user, int ia, int ib)
{
    pairs_job* job = user;
    ref_mesh_pair p = {ia, ib, -1, job->a->degenerate[ia] | (job->b->degenerate[ib] << 1), 0.0, 0.0};
    return push_pair(job->out, &p);
}

static int visit_exact(void* user, int ia, int ib)
{
    pairs_job* job = user;
    double(*ta)[3] = job->a->corners[ia];
    double(*tb)[3] = job->b->corners[ib];
    ref_mesh_pair p = {ia, ib, ref_tri_tri_intersect(ta, tb), job->a->degenerate[ia] | (job->b->degenerate[ib] << 1),
                       0.0, 0.0};
    if (p.intersect) {
        p.depth = intersection_depth(ta, tb);
    } else {
        if (!(job->band > 0.0))
            return 0;
        p.distance = ref_tri_tri_separation(ta, tb);
        if (!(p.distance <= job->band))
            return 0;
    }
    return push_pair(job->out, &p);
}

/* Both views, boxes sorted, then the sweep; the output sorted by (a, b). */
static int mesh_pairs(float (*va)[3], int (*ta)[3], int na, float (*vb)[3], int (*tb)[3], int nb,
                      double rot[3][3], const double trans[3], double band, ref_pair_list* out,
                      pair_visit_fn* visit)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (na < 0 || nb < 0 || !(band >= 0.0) || (na > 0 && (!va || !ta)) || (nb > 0 && (!vb || !tb)))
        return -1;
    mesh_view a, b;
    if (view_init(&a, va, ta, na, NULL, NULL))
        return -1;
    if (view_init(&b, vb, tb, nb, rot, trans)) {
        view_free(&a);
        return -1;
    }
    /* The slack covers the rounding of computed distances (~1e-15 of the
     * coordinates), so a pair at distance <= band is never cut by boxes. */
    double slack = 1e-12 * (fmax(view_scale(&a), view_scale(&b)) + band);
    view_boxes(&a, 0.0);
    view_boxes(&b, band + slack);
    qsort(a.boxes, (size_t)na, sizeof *a.boxes, cmp_box_lo);
    qsort(b.boxes, (size_t)nb, sizeof *b.boxes, cmp_box_lo);
    pairs_job job = {&a, &b, band, out};
    int rc = sweep(a.boxes, na, b.boxes, nb, visit, &job);
    view_free(&a);
    view_free(&b);
    if (rc) {
        ref_pair_list_free(out);
        return -1;
    }
    if (out->count > 1)
        qsort(out->pairs, (size_t)out->count, sizeof *out->pairs, cmp_pair);
    return 0;
}

int ref_mesh_pairs(float (*va)[3], int (*ta)[3], int na, float (*vb)[3], int (*tb)[3], int nb,
                   double rot[3][3], const double trans[3], double band, ref_pair_list* out)
{
    return mesh_pairs(va, ta, na, vb, tb, nb, rot, trans, band, out, visit_exact);
}

int ref_mesh_box_candidates(float (*va)[3], int (*ta)[3], int na, float (*vb)[3], int (*tb)[3], int nb,
                            double rot[3][3], const double trans[3], double band, ref_pair_list* out)
{
    return mesh_pairs(va, ta, na, vb, tb, nb, rot, trans, band, out, visit_candidate);
}

/* ---- rays ---------------------------------------------------------------------------- */

static void ray_end(double q[3], const double origin[3], const double translation[3])
{
    for (int k = 0; k < 3; k++)
        q[k] = origin[k] + translation[k];
}

/* Entry parameter of a segment lying in the plane of t, which it is known
 * to meet: clip [0, 1] by the three edges' half-planes (Cyrus-Beck) in the
 * projection where the normal is largest, the triangle turned to run
 * counter-clockwise there. */
static double coplanar_entry(const double o[3], const double d[3], const double* const t[3])
{
    double e1[3], e2[3], n[3];
    v_sub(e1, t[1], t[0]);
    v_sub(e2, t[2], t[0]);
    v_cross(n, e1, e2);
    int k = fabs(n[0]) > fabs(n[1]) ? (fabs(n[0]) > fabs(n[2]) ? 0 : 2) : (fabs(n[1]) > fabs(n[2]) ? 1 : 2);
    pt2 c[3] = {drop_axis(t[0], k), drop_axis(t[1], k), drop_axis(t[2], k)};
    if (orient_pt2(c[0], c[1], c[2]) < 0) {
        pt2 swap = c[1];
        c[1] = c[2];
        c[2] = swap;
    }
    pt2 p = drop_axis(o, k), dir = drop_axis(d, k);
    double t0 = 0.0;
    for (int i = 0; i < 3; i++) {
        pt2 u = c[i], v = c[(i + 1) % 3];
        double ex = v.x - u.x, ey = v.y - u.y;
        double g0 = ex * (p.y - u.y) - ey * (p.x - u.x); /* >= 0 inside */
        double gd = ex * dir.y - ey * dir.x;
        if (gd > 0.0)
            t0 = fmax(t0, -g0 / gd);
    }
    return fmin(t0, 1.0);
}

/* The least parameter of a known hit. */
static double hit_parameter(const double o[3], const double d[3], const double* const t[3], int sp, int sq)
{
    if (sp == 0 && sq == 0)
        return coplanar_entry(o, d, t);
    if (sp == 0)
        return 0.0;
    if (sq == 0)
        return 1.0;
    double e1[3], e2[3], n[3], w[3];
    v_sub(e1, t[1], t[0]);
    v_sub(e2, t[2], t[0]);
    v_cross(n, e1, e2);
    v_sub(w, t[0], o);
    double den = v_dot(n, d);
    double s = den != 0.0 ? v_dot(n, w) / den : 0.0;
    return fmin(fmax(s, 0.0), 1.0);
}

int ref_ray_triangle(const double origin[3], const double translation[3], double tri[3][3], double* t)
{
    const double* c[3];
    rows(tri, c);
    if (degenerate3(c))
        return 0;
    double q[3];
    ray_end(q, origin, translation);
    int sp = ref_orient3d(c[0], c[1], c[2], origin), sq = ref_orient3d(c[0], c[1], c[2], q);
    if (!seg_tri3(origin, q, c, sp, sq))
        return 0;
    if (t)
        *t = hit_parameter(origin, translation, c, sp, sq);
    return 1;
}

/* Signed distance between the ray's line and the line of edge a-b, positive
 * on the triangle's inside: (a - o) . (e x d) / |e x d| is the Plücker
 * orientation, twice the signed area of (hit, a, b) times n.d; `side` is the
 * sign of n.d. +INFINITY (no constraint) for parallel lines. */
static double edge_margin(const double o[3], const double d[3], const double a[3], const double b[3], double side)
{
    double e[3], w[3], ao[3];
    v_sub(e, b, a);
    v_cross(w, e, d);
    double len = v_len(w);
    if (!(len > 0.0))
        return INFINITY;
    v_sub(ao, a, o);
    return side * v_dot(ao, w) / len;
}

/* Margin when the segment and the plane are not both coplanar: the ends'
 * plane distances, then the edges when the line crosses the plane. */
static double transversal_margin(const double o[3], const double d[3], const double q[3], const double* const t[3],
                                 int sp, int sq)
{
    double e1[3], e2[3], n[3], wo[3], wq[3];
    v_sub(e1, t[1], t[0]);
    v_sub(e2, t[2], t[0]);
    v_cross(n, e1, e2);
    double nl = v_len(n);
    v_sub(wo, o, t[0]);
    v_sub(wq, q, t[0]);
    double ho = v_dot(n, wo) / nl, hq = v_dot(n, wq) / nl;
    double ends = fmin(fabs(ho), fabs(hq));
    double margin = sp * sq <= 0 ? ends : -ends; /* sides from the exact signs */
    double side = sign_of(hq - ho);
    if (side == 0.0)
        return margin;
    for (int k = 0; k < 3; k++)
        margin = fmin(margin, edge_margin(o, d, t[k], t[(k + 1) % 3], side));
    return margin;
}

double ref_ray_triangle_margin(const double origin[3], const double translation[3], double tri[3][3])
{
    const double* c[3];
    rows(tri, c);
    if (degenerate3(c))
        return -INFINITY;
    double q[3];
    ray_end(q, origin, translation);
    int sp = ref_orient3d(c[0], c[1], c[2], origin), sq = ref_orient3d(c[0], c[1], c[2], q);
    int zero_translation = translation[0] == 0.0 && translation[1] == 0.0 && translation[2] == 0.0;
    if ((sp == 0 && sq == 0) || zero_translation) {
        /* In the plane (or a point): no tilt helps, only distance does. */
        if (seg_tri3(origin, q, c, sp, sq))
            return 0.0;
        return -ref_segment_triangle(origin, q, c[0], c[1], c[2], NULL, NULL);
    }
    return transversal_margin(origin, translation, q, c, sp, sq);
}

/* The segment o + s d, s in [0, 1], for the cull below: its box and the
 * reciprocals of d (0 where d is 0, which the slab test treats apart). */
typedef struct seg_cull {
    const double* o;
    const double* d;
    double lo[3], hi[3], inv[3];
} seg_cull;

static void seg_cull_init(seg_cull* sc, const double o[3], const double d[3], const double q[3])
{
    sc->o = o;
    sc->d = d;
    for (int k = 0; k < 3; k++) {
        sc->lo[k] = fmin(o[k], q[k]);
        sc->hi[k] = fmax(o[k], q[k]);
        sc->inv[k] = d[k] != 0.0 ? 1.0 / d[k] : 0.0;
    }
}

/* Whether the segment meets the box of c grown by pad (>= 0) on every
 * side: boxes first, then the slab test. The grown box holds the triangle
 * and its pad-neighbourhood, so a no means no hit and a distance above pad.
 * The caller's pad includes a relative slack for the rounding in here. */
static int segment_near_box(const seg_cull* sc, double c[3][3], double pad)
{
    double enter = 0.0, leave = 1.0;
    for (int k = 0; k < 3; k++) {
        double lo = min3(c[0][k], c[1][k], c[2][k]) - pad;
        double hi = max3(c[0][k], c[1][k], c[2][k]) + pad;
        if (lo > sc->hi[k] || hi < sc->lo[k])
            return 0;
        if (sc->d[k] == 0.0)
            continue; /* inside the slab, by the box test */
        double s0 = (lo - sc->o[k]) * sc->inv[k], s1 = (hi - sc->o[k]) * sc->inv[k];
        if (s0 > s1) {
            double swap = s0;
            s0 = s1;
            s1 = swap;
        }
        enter = enter > s0 ? enter : s0;
        leave = leave < s1 ? leave : s1;
    }
    return enter <= leave;
}

/* What triangle c adds to ref_ray_hit.grazing: |margin| for a hit,
 * max(|margin|, distance) for a miss; INFINITY for zero area. The distance
 * is skipped when |margin| already reaches `best`. */
static double graze(const double o[3], const double d[3], const double q[3], double c[3][3], int hit, double best)
{
    double m = ref_ray_triangle_margin(o, d, c);
    if (m == -INFINITY)
        return INFINITY;
    if (hit || fabs(m) >= best)
        return fabs(m);
    return fmax(fabs(m), ref_segment_triangle(o, q, c[0], c[1], c[2], NULL, NULL));
}

/* Triangles whose box, grown by the best grazing value so far, the segment
 * misses can neither be hit nor lower that value (their distance exceeds
 * it), so they cost a slab test only. */
void ref_ray_mesh_posed(float (*v)[3], int (*t)[3], int n, double rot[3][3], const double trans[3],
                        const double origin[3], const double translation[3], ref_ray_hit* out)
{
    ref_ray_hit r = {0, -1, 0.0, 0, 0.0, INFINITY};
    double q[3];
    ray_end(q, origin, translation);
    seg_cull sc;
    seg_cull_init(&sc, origin, translation, q);
    double reach = fmax(fabs(origin[0]) + fabs(origin[1]) + fabs(origin[2]), fabs(q[0]) + fabs(q[1]) + fabs(q[2]));
    for (int i = 0; i < n; i++) {
        double c[3][3], s;
        load_triangle(v, t, i, rot, trans, c);
        double size = fabs(c[0][0]) + fabs(c[0][1]) + fabs(c[0][2]) + reach;
        if (r.grazing < INFINITY && !segment_near_box(&sc, c, r.grazing + 1e-9 * size))
            continue;
        int hit = ref_ray_triangle(origin, translation, c, &s);
        if (hit) {
            r.count++;
            if (!r.hit || s < r.t) {
                r.hit = 1;
                r.triangle = i;
                r.t = s;
            }
        }
        r.grazing = fmin(r.grazing, graze(origin, translation, q, c, hit, r.grazing));
    }
    if (r.hit) {
        double c[3][3];
        load_triangle(v, t, r.triangle, rot, trans, c);
        r.margin = ref_ray_triangle_margin(origin, translation, c);
    }
    *out = r;
}

void ref_ray_mesh(float (*v)[3], int (*t)[3], int n, const double origin[3], const double translation[3],
                  ref_ray_hit* out)
{
    ref_ray_mesh_posed(v, t, n, NULL, NULL, origin, translation, out);
}

/* ---- oriented box against triangle -------------------------------------------------- */

/* Gap between the projections of box and triangle on u (normalised here),
 * positive when u separates them. rel holds the corners minus the center. */
static double obb_gap(const double u_in[3], double axes[3][3], const double half[3], double rel[3][3])
{
    double len = v_len(u_in);
    double u[3] = {u_in[0] / len, u_in[1] / len, u_in[2] / len};
    double r = 0.0;
    for (int k = 0; k < 3; k++)
        r += half[k] * fabs(v_dot(axes[k], u));
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < 3; i++) {
        double p = v_dot(u, rel[i]);
        lo = fmin(lo, p);
        hi = fmax(hi, p);
    }
    return fmax(lo - r, -r - hi);
}

/* The 13 axes are the facet normals of box - triangle (for a degenerate
 * triangle the nonzero ones still are), so the largest gap is positive iff
 * the two are disjoint, and when they overlap it is minus the penetration
 * depth. With `first`, returns at the first positive gap: the sign of the
 * answer, all a yes/no test needs, is the same. Corners are taken relative
 * to the center to keep rounding small. */
static double obb_sat(const double center[3], double axes[3][3], const double half[3], double tri[3][3], int first)
{
    double rel[3][3], e[3][3], u[3];
    for (int i = 0; i < 3; i++)
        v_sub(rel[i], tri[i], center);
    for (int i = 0; i < 3; i++)
        v_sub(e[i], rel[(i + 1) % 3], rel[i]);
    double best = -INFINITY;
    for (int k = 0; k < 3 && !(first && best > 0.0); k++)
        best = fmax(best, obb_gap(axes[k], axes, half, rel));
    v_cross(u, e[0], e[1]);
    if (v_dot(u, u) > 0.0 && !(first && best > 0.0))
        best = fmax(best, obb_gap(u, axes, half, rel));
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3 && !(first && best > 0.0); i++) {
            v_cross(u, axes[k], e[i]);
            if (v_dot(u, u) > 0.0)
                best = fmax(best, obb_gap(u, axes, half, rel));
        }
    }
    return best;
}

double ref_obb_triangle_margin(const double center[3], double axes[3][3], const double half[3], double tri[3][3])
{
    return obb_sat(center, axes, half, tri, 0);
}

int ref_obb_triangle_intersect(const double center[3], double axes[3][3], const double half[3], double tri[3][3])
{
    return obb_sat(center, axes, half, tri, 1) <= 0.0;
}

/* Corner i of the box: bit k of i picks the + side of axis k. */
static void obb_corner(double r[3], const double center[3], double axes[3][3], const double half[3], int i)
{
    for (int c = 0; c < 3; c++) {
        r[c] = center[c];
        for (int k = 0; k < 3; k++)
            r[c] += (((i >> k) & 1) ? half[k] : -half[k]) * axes[k][c];
    }
}

/* Outside the box, the nearest box point is on its surface: the minimum
 * over the six faces, two triangles each. */
double ref_obb_triangle_distance(const double center[3], double axes[3][3], const double half[3],
                                 double tri[3][3])
{
    if (ref_obb_triangle_intersect(center, axes, half, tri))
        return 0.0;
    double corner[8][3];
    for (int i = 0; i < 8; i++)
        obb_corner(corner[i], center, axes, half, i);
    double best = INFINITY;
    for (int k = 0; k < 3; k++) {
        int b1 = 1 << ((k + 1) % 3), b2 = 1 << ((k + 2) % 3);
        for (int side = 0; side < 2; side++) {
            int base = side << k;
            const double* q[4] = {corner[base], corner[base | b1], corner[base | b1 | b2], corner[base | b2]};
            best = fmin(best, ref_triangle_triangle(tri[0], tri[1], tri[2], q[0], q[1], q[2], NULL, NULL));
            best = fmin(best, ref_triangle_triangle(tri[0], tri[1], tri[2], q[0], q[2], q[3], NULL, NULL));
        }
    }
    return best;
}
