/* Brute-force reference geometry; see reference.h.
 *
 * The one idea used throughout: the distance between two convex sets is the
 * minimum over a complete list of candidate point pairs, where every
 * candidate is a genuine point of each set. A wrong candidate can then only
 * make a result larger, never smaller, and a complete list guarantees the
 * true closest pair is among them. Internally everything works on squared
 * distances; the square root is taken once at the public boundary. */
#include "reference.h"
#include "ref_vec.h"

#include <libqhull_r/libqhull_r.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- vectors ---------------------------------------------------------------- */


static double v_dist2(const double a[3], const double b[3])
{
    double d[3];
    v_sub(d, a, b);
    return v_dot(d, d);
}

/* Copies into an optional output. */
static void v_out(double* r, const double a[3])
{
    if (r) {
        r[0] = a[0];
        r[1] = a[1];
        r[2] = a[2];
    }
}

static void v_copy(double r[3], const double a[3])
{
    v_out(r, a);
}

/* a + t (b - a), returning the endpoints exactly at t = 0 and t = 1 so that
 * vertex witnesses are bit-exact vertices. */
static void v_lerp(double r[3], const double a[3], const double b[3], double t)
{
    if (t >= 1.0) {
        v_copy(r, b);
        return;
    }
    for (int k = 0; k < 3; k++)
        r[k] = a[k] + t * (b[k] - a[k]);
}

static double clamp01(double t)
{
    return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
}

/* ---- primitive pairs (squared) -------------------------------------------- */

/* The closest point of a segment to p is the clamped projection: the squared
 * distance along the segment is a convex parabola in t. */
static double pt_seg_sq(const double p[3], const double a[3], const double b[3], double q[3])
{
    double ab[3], ap[3];
    v_sub(ab, b, a);
    v_sub(ap, p, a);
    double len2 = v_dot(ab, ab);
    double t = len2 > 0.0 ? clamp01(v_dot(ap, ab) / len2) : 0.0;
    v_lerp(q, a, b, t);
    return v_dist2(p, q);
}

/* Candidates for two segments: each endpoint against the other segment (the
 * boundary of the parameter square), plus the single critical point of the
 * two lines when it lies inside both. Parallel lines have no unique critical
 * point but then the boundary attains the minimum, so skipping is exact. */
static double seg_seg_sq(const double a0[3], const double a1[3], const double b0[3], const double b1[3],
                         double ca[3], double cb[3])
{
    double q[3];
    double best = pt_seg_sq(a0, b0, b1, cb);
    v_copy(ca, a0);
    double d = pt_seg_sq(a1, b0, b1, q);
    if (d < best) {
        best = d;
        v_copy(ca, a1);
        v_copy(cb, q);
    }
    d = pt_seg_sq(b0, a0, a1, q);
    if (d < best) {
        best = d;
        v_copy(ca, q);
        v_copy(cb, b0);
    }
    d = pt_seg_sq(b1, a0, a1, q);
    if (d < best) {
        best = d;
        v_copy(ca, q);
        v_copy(cb, b1);
    }

    double da[3], db[3], r[3];
    v_sub(da, a1, a0);
    v_sub(db, b1, b0);
    v_sub(r, a0, b0);
    double aa = v_dot(da, da), bb = v_dot(db, db), ab = v_dot(da, db);
    double ar = v_dot(da, r), br = v_dot(db, r);
    double denom = aa * bb - ab * ab;
    if (denom > 0.0) {
        /* Even when denom is tiny and s, t inaccurate, the points built from
         * them are still on the segments: the candidate stays an upper bound. */
        double s = (ab * br - bb * ar) / denom;
        double t = (aa * br - ab * ar) / denom;
        if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
            double p[3];
            v_lerp(p, a0, a1, s);
            v_lerp(q, b0, b1, t);
            d = v_dist2(p, q);
            if (d < best) {
                best = d;
                v_copy(ca, p);
                v_copy(cb, q);
            }
        }
    }
    return best;
}

/* ---- triangles -------------------------------------------------------------- */

/* A triangle with what the pair test and the pruning need. A segment or a
 * point is a triangle with repeated corners (nn == 0). */
typedef struct tri_ref {
    const double* v[3];
    double n[3]; /* cross(v1 - v0, v2 - v0), not normalised */
    double nn;   /* |n|^2, 0 for a degenerate triangle */
    double c[3]; /* bounding sphere: centroid and farthest corner */
    double r;
    double lb; /* lower bound on the distance to the other polytope */
} tri_ref;

static void tri_ref_init(tri_ref* t, const double* a, const double* b, const double* c)
{
    double e1[3], e2[3];
    t->v[0] = a;
    t->v[1] = b;
    t->v[2] = c;
    v_sub(e1, b, a);
    v_sub(e2, c, a);
    v_cross(t->n, e1, e2);
    t->nn = v_dot(t->n, t->n);
    for (int k = 0; k < 3; k++)
        t->c[k] = (a[k] + b[k] + c[k]) / 3.0;
    t->r = sqrt(fmax(v_dist2(t->c, a), fmax(v_dist2(t->c, b), v_dist2(t->c, c))));
    t->lb = 0.0;
}

/* Where x lies over triangle t, seen along t's normal: when inside
 * (boundary included), writes the triangle's point under x as a convex
 * combination of its corners. Built that way the point is on the triangle
 * even for a sliver whose normal is mostly rounding noise, so candidates made
 * from it stay genuine. The weights are signed areas; they sum to |n|^2. */
static int point_over(const tri_ref* t, const double x[3], double q[3])
{
    if (!(t->nn > 0.0))
        return 0;
    double lam[3], sum = 0.0;
    for (int k = 0; k < 3; k++) {
        double e[3], w[3], c[3];
        v_sub(e, t->v[(k + 2) % 3], t->v[(k + 1) % 3]);
        v_sub(w, x, t->v[(k + 1) % 3]);
        v_cross(c, e, w);
        lam[k] = v_dot(c, t->n); /* corner k's weight: the area opposite it */
        if (lam[k] < 0.0)
            return 0;
        sum += lam[k];
    }
    if (!(sum > 0.0))
        return 0;
    for (int i = 0; i < 3; i++)
        q[i] = (lam[0] * t->v[0][i] + lam[1] * t->v[1][i] + lam[2] * t->v[2][i]) / sum;
    return 1;
}

/* The only interior candidate of a triangle for a point: the point of the
 * face straight under p, when there is one. INFINITY otherwise; the edges
 * supply the remaining candidates. */
static double pt_face_sq(const double p[3], const tri_ref* t, double q[3])
{
    return point_over(t, p, q) ? v_dist2(p, q) : INFINITY;
}

/* Where segment p0-p1 crosses triangle t's plane over the triangle: x on the
 * segment, q on the triangle. They agree up to rounding, and are then made
 * exactly equal, unless t is a sliver whose plane is too ill-defined to say;
 * the pair is an honest candidate either way. A segment lying in the plane
 * is left to the other candidates, which then find 0 up to rounding. */
static int edge_crossing(const double p0[3], const double p1[3], const tri_ref* t, double x[3], double q[3])
{
    if (!(t->nn > 0.0))
        return 0;
    double w0[3], w1[3];
    v_sub(w0, p0, t->v[0]);
    v_sub(w1, p1, t->v[0]);
    double h0 = v_dot(w0, t->n), h1 = v_dot(w1, t->n);
    if ((h0 > 0.0 && h1 > 0.0) || (h0 < 0.0 && h1 < 0.0) || h0 == h1)
        return 0;
    v_lerp(x, p0, p1, h0 / (h0 - h1));
    if (!point_over(t, x, q))
        return 0;
    double rounding = 1e-12 * (fabs(x[0]) + fabs(x[1]) + fabs(x[2]) + t->r);
    if (v_dist2(x, q) <= rounding * rounding)
        v_copy(q, x);
    return 1;
}

/* Keeps the pair (p, q) if it beats the best so far. */
static void offer(double* best, const double p[3], const double q[3], double pa[3], double pb[3])
{
    double d = v_dist2(p, q);
    if (d < *best) {
        *best = d;
        v_copy(pa, p);
        v_copy(pb, q);
    }
}

/* Squared distance between two triangles. They intersect iff an edge of one
 * meets the other (the intersection segment on the planes' common line ends
 * on an edge). Otherwise the closest pair has a point on an edge of one or
 * the other; its partner is on an edge (edge-edge) or inside a face
 * (vertex-face: an edge point closest to a face interior can slide to a
 * vertex). So 6 crossings, 9 edge pairs and 6 vertex-face candidates are
 * complete. */
static double tri_tri_sq(const tri_ref* a, const tri_ref* b, double pa[3], double pb[3])
{
    double best = INFINITY, p[3], q[3];
    offer(&best, a->v[0], b->v[0], pa, pb); /* any genuine pair starts it */
    for (int k = 0; k < 3; k++) {
        if (edge_crossing(a->v[k], a->v[(k + 1) % 3], b, p, q))
            offer(&best, p, q, pa, pb);
        if (edge_crossing(b->v[k], b->v[(k + 1) % 3], a, q, p))
            offer(&best, p, q, pa, pb);
        if (best == 0.0)
            return 0.0;
    }
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            seg_seg_sq(a->v[i], a->v[(i + 1) % 3], b->v[j], b->v[(j + 1) % 3], p, q);
            offer(&best, p, q, pa, pb);
        }
    }
    for (int k = 0; k < 3; k++) {
        if (point_over(b, a->v[k], q))
            offer(&best, a->v[k], q, pa, pb);
        if (point_over(a, b->v[k], p))
            offer(&best, p, b->v[k], pa, pb);
    }
    return best;
}

/* ---- public primitive pairs ------------------------------------------------- */

double ref_point_segment(const double p[3], const double a[3], const double b[3], double closest[3])
{
    double q[3];
    double d = pt_seg_sq(p, a, b, q);
    v_out(closest, q);
    return sqrt(d);
}

double ref_point_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                          double closest[3])
{
    tri_ref t;
    tri_ref_init(&t, a, b, c);
    double q[3], r[3];
    double best = pt_seg_sq(p, a, b, r);
    for (int k = 1; k < 3; k++) {
        double d = pt_seg_sq(p, t.v[k], t.v[(k + 1) % 3], q);
        if (d < best) {
            best = d;
            v_copy(r, q);
        }
    }
    double d = pt_face_sq(p, &t, q);
    if (d < best) {
        best = d;
        v_copy(r, q);
    }
    v_out(closest, r);
    return sqrt(best);
}

double ref_segment_segment(const double a0[3], const double a1[3], const double b0[3], const double b1[3],
                           double ca[3], double cb[3])
{
    double p[3], q[3];
    double d = seg_seg_sq(a0, a1, b0, b1, p, q);
    v_out(ca, p);
    v_out(cb, q);
    return sqrt(d);
}

double ref_segment_triangle(const double s0[3], const double s1[3], const double a[3], const double b[3],
                            const double c[3], double cs[3], double ct[3])
{
    tri_ref s, t;
    tri_ref_init(&s, s0, s1, s1);
    tri_ref_init(&t, a, b, c);
    double p[3], q[3];
    double d = tri_tri_sq(&s, &t, p, q);
    v_out(cs, p);
    v_out(ct, q);
    return sqrt(d);
}

double ref_triangle_triangle(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                             const double b1[3], const double b2[3], double ca[3], double cb[3])
{
    tri_ref s, t;
    tri_ref_init(&s, a0, a1, a2);
    tri_ref_init(&t, b0, b1, b2);
    double p[3], q[3];
    double d = tri_tri_sq(&s, &t, p, q);
    v_out(ca, p);
    v_out(cb, q);
    return sqrt(d);
}

/* ---- building polytopes ----------------------------------------------------- */

static int alloc_polytope(ref_polytope* out, int nverts, int ntris, int with_planes)
{
    out->nverts = nverts;
    out->ntris = ntris;
    out->verts = malloc(sizeof(double[3]) * (size_t)(nverts > 0 ? nverts : 1));
    out->tris = malloc(sizeof(int[3]) * (size_t)(ntris > 0 ? ntris : 1));
    out->planes = with_planes ? malloc(sizeof(double[4]) * (size_t)(ntris > 0 ? ntris : 1)) : NULL;
    if (!out->verts || !out->tris || (with_planes && !out->planes)) {
        ref_polytope_free(out);
        return REF_POLYTOPE_ERROR;
    }
    return REF_POLYTOPE_OK;
}

/* The affine span of a cloud, found from extreme points: p[i1] farthest from
 * p[0], p[i2] farthest from that line, then the farthest from that plane.
 * frame gets u (along the line), v (in the plane) and the plane's normal. */
typedef struct span {
    int dim;
    double origin[3];
    double frame[3][3];
} span;

static void unit(double r[3], const double a[3])
{
    double len = sqrt(v_dot(a, a));
    for (int k = 0; k < 3; k++)
        r[k] = a[k] / len;
}

static int farthest(const double (*pts)[3], int n, const double o[3], const double* u, const double* nrm,
                    double* dist)
{
    int best = 0;
    *dist = -1.0;
    for (int i = 0; i < n; i++) {
        double w[3], c[3], d;
        v_sub(w, pts[i], o);
        if (nrm) {
            d = fabs(v_dot(w, nrm));
        } else if (u) {
            v_cross(c, w, u);
            d = sqrt(v_dot(c, c));
        } else {
            d = sqrt(v_dot(w, w));
        }
        if (d > *dist) {
            *dist = d;
            best = i;
        }
    }
    return best;
}

static void find_span(const double (*pts)[3], int n, span* s)
{
    double maxabs = 0.0, ext, h, w[3], c[3];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            maxabs = fmax(maxabs, fabs(pts[i][k]));
    v_copy(s->origin, pts[0]);
    int i1 = farthest(pts, n, s->origin, NULL, NULL, &ext);
    /* Relative to the cloud's size, plus the rounding of its coordinates. */
    double tol = 1e-10 * ext + 64.0 * DBL_EPSILON * maxabs;
    s->dim = 0;
    if (ext <= tol)
        return;
    v_sub(w, pts[i1], s->origin);
    unit(s->frame[0], w);
    int i2 = farthest(pts, n, s->origin, s->frame[0], NULL, &h);
    s->dim = 1;
    if (h <= tol)
        return;
    v_sub(w, pts[i2], s->origin);
    v_cross(c, s->frame[0], w);
    unit(s->frame[2], c);
    v_cross(s->frame[1], s->frame[2], s->frame[0]);
    farthest(pts, n, s->origin, NULL, s->frame[2], &h);
    s->dim = h <= tol ? 2 : 3;
}

static int build_point(ref_polytope* out, const double p[3])
{
    if (alloc_polytope(out, 1, 0, 0) != REF_POLYTOPE_OK)
        return REF_POLYTOPE_ERROR;
    v_copy(out->verts[0], p);
    return REF_POLYTOPE_DEGENERATE;
}

/* The two extreme points along the span's line. */
static int build_segment(ref_polytope* out, const double (*pts)[3], int n, const span* s)
{
    int lo = 0, hi = 0;
    double tlo = INFINITY, thi = -INFINITY;
    for (int i = 0; i < n; i++) {
        double w[3];
        v_sub(w, pts[i], s->origin);
        double t = v_dot(w, s->frame[0]);
        if (t < tlo) {
            tlo = t;
            lo = i;
        }
        if (t > thi) {
            thi = t;
            hi = i;
        }
    }
    if (alloc_polytope(out, 2, 0, 0) != REF_POLYTOPE_OK)
        return REF_POLYTOPE_ERROR;
    v_copy(out->verts[0], pts[lo]);
    v_copy(out->verts[1], pts[hi]);
    return REF_POLYTOPE_DEGENERATE;
}

typedef struct planar_pt {
    double x, y;
    int index;
} planar_pt;

static int cmp_planar(const void* pa, const void* pb)
{
    const planar_pt* a = pa;
    const planar_pt* b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    if (a->y != b->y)
        return a->y < b->y ? -1 : 1;
    return 0;
}

static double turn(const planar_pt* o, const planar_pt* a, const planar_pt* b)
{
    return (a->x - o->x) * (b->y - o->y) - (a->y - o->y) * (b->x - o->x);
}

/* Monotone chain over the sorted points; keeps strict left turns only, so the
 * result is the counter-clockwise corner list without collinear points.
 * `hull` needs room for 2n entries; returns the corner count. */
static int planar_hull(const planar_pt* p, int n, planar_pt* hull)
{
    int m = 0;
    for (int i = 0; i < n; i++) { /* lower chain */
        while (m >= 2 && turn(&hull[m - 2], &hull[m - 1], &p[i]) <= 0.0)
            m--;
        hull[m++] = p[i];
    }
    for (int i = n - 2, lower = m + 1; i >= 0; i--) { /* upper chain */
        while (m >= lower && turn(&hull[m - 2], &hull[m - 1], &p[i]) <= 0.0)
            m--;
        hull[m++] = p[i];
    }
    return m > 1 ? m - 1 : m; /* the last point repeats the first */
}

/* A convex polygon in the span's plane, fan triangulated. */
static int build_polygon(ref_polytope* out, const double (*pts)[3], int n, const span* s)
{
    planar_pt* p = malloc(sizeof(planar_pt) * (size_t)n * 3);
    if (!p)
        return REF_POLYTOPE_ERROR;
    planar_pt* hull = p + n;
    for (int i = 0; i < n; i++) {
        double w[3];
        v_sub(w, pts[i], s->origin);
        p[i].x = v_dot(w, s->frame[0]);
        p[i].y = v_dot(w, s->frame[1]);
        p[i].index = i;
    }
    qsort(p, (size_t)n, sizeof(planar_pt), cmp_planar);
    int m = planar_hull(p, n, hull);
    int rc;
    if (m < 3) { /* the tolerance let it through but the chain collapsed */
        span line = *s;
        line.dim = 1;
        rc = m == 1 ? build_point(out, pts[hull[0].index]) : build_segment(out, pts, n, &line);
    } else if (alloc_polytope(out, m, m - 2, 0) != REF_POLYTOPE_OK) {
        rc = REF_POLYTOPE_ERROR;
    } else {
        for (int i = 0; i < m; i++)
            v_copy(out->verts[i], pts[hull[i].index]);
        for (int i = 0; i < m - 2; i++) {
            out->tris[i][0] = 0;
            out->tris[i][1] = i + 1;
            out->tris[i][2] = i + 2;
        }
        rc = REF_POLYTOPE_DEGENERATE;
    }
    free(p);
    return rc;
}

/* Copies qhull's triangulated hull: vertices renumbered densely, triangles
 * turned counter-clockwise seen from outside, one plane per triangle. */
static int copy_qhull(qhT* qh, ref_polytope* out, const double (*pts)[3], int n)
{
    facetT* facet;
    vertexT *vertex, **vertexp;
    int* remap = malloc(sizeof(int) * (size_t)n);
    if (!remap || alloc_polytope(out, qh->num_vertices, qh->num_facets, 1) != REF_POLYTOPE_OK) {
        free(remap);
        return REF_POLYTOPE_ERROR;
    }
    memset(remap, 0xff, sizeof(int) * (size_t)n); /* -1: not a hull vertex */
    int nv = 0, nt = 0, ok = 1;
    FORALLvertices
    {
        int id = qh_pointid(qh, vertex->point);
        if (nv >= out->nverts || id < 0 || id >= n) {
            ok = 0;
            break;
        }
        remap[id] = nv;
        v_copy(out->verts[nv++], pts[id]);
    }
    FORALLfacets
    {
        if (!ok || nt >= out->ntris) {
            ok = 0;
            break;
        }
        int k = 0, *t = out->tris[nt];
        FOREACHvertex_(facet->vertices)
        {
            if (k < 3) {
                int id = qh_pointid(qh, vertex->point);
                t[k] = id >= 0 && id < n ? remap[id] : -1;
                ok &= t[k] >= 0;
            }
            k++;
        }
        if (!(ok &= k == 3))
            break;
        double e1[3], e2[3], c[3];
        v_sub(e1, out->verts[t[1]], out->verts[t[0]]);
        v_sub(e2, out->verts[t[2]], out->verts[t[0]]);
        v_cross(c, e1, e2);
        if (v_dot(c, facet->normal) < 0.0) {
            int swap = t[1];
            t[1] = t[2];
            t[2] = swap;
        }
        for (k = 0; k < 3; k++)
            out->planes[nt][k] = facet->normal[k];
        out->planes[nt][3] = facet->offset;
        nt++;
    }
    free(remap);
    ok &= nv == out->nverts && nt == out->ntris;
    return ok ? REF_POLYTOPE_OK : REF_POLYTOPE_ERROR;
}

static int build_qhull(ref_polytope* out, const double (*pts)[3], int n)
{
    coordT* coords = malloc(sizeof(coordT) * 3 * (size_t)n);
    if (!coords)
        return REF_POLYTOPE_ERROR;
    memcpy(coords, pts, sizeof(coordT) * 3 * (size_t)n);
    /* qhull reports precision trouble on its error stream; keep tests quiet. */
    FILE* devnull = fopen("/dev/null", "w");
    FILE* errfile = devnull ? devnull : stderr;
    char options[] = "qhull Qt";
    qhT qh_storage;
    qhT* qh = &qh_storage;
    qh_zero(qh, errfile);
    int rc = REF_POLYTOPE_ERROR;
    if (qh_new_qhull(qh, 3, n, coords, False, options, NULL, errfile) == 0)
        rc = copy_qhull(qh, out, pts, n);
    qh_freeqhull(qh, !qh_ALL);
    int curlong, totlong;
    qh_memfreeshort(qh, &curlong, &totlong);
    if (devnull)
        fclose(devnull);
    free(coords);
    if (rc != REF_POLYTOPE_OK)
        ref_polytope_free(out);
    return rc;
}

int ref_polytope_build(ref_polytope* out, const double (*pts)[3], int n)
{
    if (!out)
        return REF_POLYTOPE_ERROR;
    memset(out, 0, sizeof(*out));
    if (!pts || n < 1)
        return REF_POLYTOPE_ERROR;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            if (!isfinite(pts[i][k]))
                return REF_POLYTOPE_ERROR;
    span s;
    find_span(pts, n, &s);
    switch (s.dim) {
    case 0:
        return build_point(out, pts[0]);
    case 1:
        return build_segment(out, pts, n, &s);
    case 2:
        return build_polygon(out, pts, n, &s);
    default:
        if (build_qhull(out, pts, n) == REF_POLYTOPE_OK)
            return REF_POLYTOPE_OK;
        /* qhull refuses clouds thinner than its own precision allows. */
        return build_polygon(out, pts, n, &s);
    }
}

void ref_polytope_free(ref_polytope* p)
{
    if (!p)
        return;
    free(p->verts);
    free(p->tris);
    free(p->planes);
    memset(p, 0, sizeof(*p));
}

void ref_polytope_transform(ref_polytope* p, double rot[3][3], const double trans[3])
{
    for (int i = 0; i < p->nverts; i++) {
        double x[3];
        v_copy(x, p->verts[i]);
        for (int r = 0; r < 3; r++)
            p->verts[i][r] = v_dot(rot[r], x) + trans[r];
    }
    if (!p->planes)
        return;
    for (int i = 0; i < p->ntris; i++) {
        double n[3];
        v_copy(n, p->planes[i]);
        for (int r = 0; r < 3; r++)
            p->planes[i][r] = v_dot(rot[r], n);
        /* n'.(R x + t) + d' = n.x + d  requires  d' = d - n'.t */
        p->planes[i][3] -= v_dot(p->planes[i], trans);
    }
}

/* ---- polytope distance ------------------------------------------------------
 *
 * Exactness comes from one complete search: every pair of boundary triangles
 * whose conservative lower bound is below the best distance found so far gets
 * the exact triangle-triangle distance, plus a containment test. Everything
 * else (the seed, the local descent, the ordering) only makes the best-so-far
 * small early, so that the bounds discard nearly every pair. */

/* A polytope seen as triangles with bounding spheres and, for the descent,
 * the triangles around each vertex. A point or a segment becomes one
 * degenerate triangle. */
typedef struct poly_view {
    const ref_polytope* p;
    tri_ref* tris;
    int ntris;
    int* first;  /* vertex v's triangles: around[first[v] .. first[v + 1]) */
    int* around;
    int* stamp;  /* per triangle: the last collect() that took it */
    int stamp_id;
    double c[3]; /* bounding sphere of all vertices */
    double r;
} poly_view;

static int corner(const poly_view* v, int t, int k)
{
    return v->p->ntris > 0 ? v->p->tris[t][k] : (k == 0 ? 0 : v->p->nverts - 1);
}

static int view_adjacency(poly_view* v)
{
    int nv = v->p->nverts;
    v->first = calloc((size_t)nv + 1, sizeof(int));
    v->around = malloc(sizeof(int) * 3 * (size_t)v->ntris);
    v->stamp = calloc((size_t)v->ntris, sizeof(int));
    if (!v->first || !v->around || !v->stamp)
        return 0;
    for (int t = 0; t < v->ntris; t++)
        for (int k = 0; k < 3; k++)
            v->first[corner(v, t, k) + 1]++;
    for (int i = 0; i < nv; i++)
        v->first[i + 1] += v->first[i];
    int* fill = malloc(sizeof(int) * (size_t)nv);
    if (!fill)
        return 0;
    memcpy(fill, v->first, sizeof(int) * (size_t)nv);
    for (int t = 0; t < v->ntris; t++)
        for (int k = 0; k < 3; k++)
            v->around[fill[corner(v, t, k)]++] = t;
    free(fill);
    return 1;
}

static int view_init(poly_view* v, const ref_polytope* p)
{
    v->p = p;
    v->ntris = p->ntris > 0 ? p->ntris : 1;
    v->tris = malloc(sizeof(tri_ref) * (size_t)v->ntris);
    if (!v->tris || !view_adjacency(v))
        return 0;
    for (int t = 0; t < v->ntris; t++)
        tri_ref_init(&v->tris[t], p->verts[corner(v, t, 0)], p->verts[corner(v, t, 1)], p->verts[corner(v, t, 2)]);
    v->c[0] = v->c[1] = v->c[2] = 0.0;
    for (int i = 0; i < p->nverts; i++)
        for (int k = 0; k < 3; k++)
            v->c[k] += p->verts[i][k] / p->nverts;
    double r2 = 0.0;
    for (int i = 0; i < p->nverts; i++)
        r2 = fmax(r2, v_dist2(v->c, p->verts[i]));
    v->r = sqrt(r2);
    return 1;
}

static void view_free(poly_view* v)
{
    free(v->tris);
    free(v->first);
    free(v->around);
    free(v->stamp);
}

/* The triangles around the given vertices, each once, with their bounds
 * cleared so the pair search considers them all. */
static int collect(poly_view* v, const int* verts, int nverts, tri_ref** out)
{
    int n = 0, id = ++v->stamp_id;
    for (int i = 0; i < nverts; i++) {
        for (int j = v->first[verts[i]]; j < v->first[verts[i] + 1]; j++) {
            int t = v->around[j];
            if (v->stamp[t] != id) {
                v->stamp[t] = id;
                v->tris[t].lb = -INFINITY;
                out[n++] = &v->tris[t];
            }
        }
    }
    return n;
}

static int nearest_vertex(const ref_polytope* p, const double x[3])
{
    int best = 0;
    double bd = INFINITY;
    for (int i = 0; i < p->nverts; i++) {
        double d = v_dist2(p->verts[i], x);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

/* A first pair: alternate nearest vertices (the distance never grows, so it
 * settles). Any pair of genuine points is a valid upper bound. */
static void seed_pair(const poly_view* a, const poly_view* b, int* ia, int* ib)
{
    *ia = nearest_vertex(a->p, b->c);
    *ib = nearest_vertex(b->p, a->p->verts[*ia]);
    for (int round = 0; round < 32; round++) {
        int na = nearest_vertex(a->p, b->p->verts[*ib]);
        int nb = nearest_vertex(b->p, a->p->verts[na]);
        if (na == *ia && nb == *ib)
            break;
        *ia = na;
        *ib = nb;
    }
}

static double max_along(const ref_polytope* p, const double w[3])
{
    double m = -INFINITY;
    for (int i = 0; i < p->nverts; i++)
        m = fmax(m, v_dot(p->verts[i], w));
    return m;
}

static int inside_planes(const ref_polytope* p, const double x[3])
{
    for (int i = 0; i < p->ntris; i++)
        if (v_dot(p->planes[i], x) + p->planes[i][3] > 0.0)
            return 0;
    return 1;
}

/* A vertex of `a` inside `b` proves they intersect; one containing the other
 * is only caught this way. Only vertices that can be inside are tested: those
 * within b's bounding sphere and not beyond b's extent hb along w. */
static int vertex_inside(const poly_view* a, const poly_view* b, const double w[3], double hb, double slack,
                         double x[3])
{
    if (!b->p->planes)
        return 0;
    double lim = (b->r + slack) * (b->r + slack);
    for (int i = 0; i < a->p->nverts; i++) {
        const double* v = a->p->verts[i];
        if (v_dot(v, w) > hb + slack || v_dist2(v, b->c) > lim)
            continue;
        if (inside_planes(b->p, v)) {
            v_copy(x, v);
            return 1;
        }
    }
    return 0;
}

static int cmp_lb(const void* pa, const void* pb)
{
    double a = (*(const tri_ref* const*)pa)->lb, b = (*(const tri_ref* const*)pb)->lb;
    return a < b ? -1 : (a > b ? 1 : 0);
}

/* Lower bounds for each triangle of `a` against all of `b`: a slab bound
 * (for a unit w, |x - y| >= w.x - w.y >= min over the triangle of w.x minus
 * b's maximum hb along w) and a sphere bound. Keeps those below `limit`,
 * sorted so the likeliest pairs come first. */
static int candidates(const poly_view* a, const poly_view* b, const double w[3], double hb, double slack,
                      double limit, tri_ref** out)
{
    int m = 0;
    for (int i = 0; i < a->ntris; i++) {
        tri_ref* t = &a->tris[i];
        double lo = fmin(v_dot(t->v[0], w), fmin(v_dot(t->v[1], w), v_dot(t->v[2], w)));
        double sphere = sqrt(v_dist2(t->c, b->c)) - t->r - b->r;
        t->lb = fmax(lo - hb, sphere) - slack;
        if (t->lb < limit)
            out[m++] = t;
    }
    qsort(out, (size_t)m, sizeof(*out), cmp_lb);
    return m;
}

/* Best pair so far: squared distance, its square root, its points and, when
 * it came from the pair search, its triangles. */
typedef struct best_pair {
    double d2, d;
    double pa[3], pb[3];
    const tri_ref *ta, *tb;
} best_pair;

/* Separation of two triangles along the line through their sphere centres:
 * a lower bound on their distance (any unit axis gives one), much tighter
 * than the spheres for the long slivers hulls are made of. */
static double axis_gap(const tri_ref* s, const tri_ref* t)
{
    double u[3];
    v_sub(u, s->c, t->c);
    double len = sqrt(v_dot(u, u));
    if (!(len > 0.0))
        return -INFINITY;
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < 3; k++) {
        lo = fmin(lo, v_dot(s->v[k], u));
        hi = fmax(hi, v_dot(t->v[k], u));
    }
    return (lo - hi) / len;
}

/* Exact distances of the pairs whose bounds do not already exceed the best
 * so far. Lists sorted by lb let the loops stop early. */
static void pair_search(tri_ref** ca, int na, tri_ref** cb, int nb, double slack, best_pair* best)
{
    double p[3], q[3];
    for (int i = 0; i < na && ca[i]->lb < best->d; i++) {
        const tri_ref* s = ca[i];
        for (int j = 0; j < nb && cb[j]->lb < best->d; j++) {
            const tri_ref* t = cb[j];
            double reach = best->d + s->r + t->r + slack;
            if (v_dist2(s->c, t->c) >= reach * reach || axis_gap(s, t) - slack >= best->d)
                continue;
            double d2 = tri_tri_sq(s, t, p, q);
            if (d2 < best->d2) {
                best->d2 = d2;
                best->d = sqrt(d2);
                v_copy(best->pa, p);
                v_copy(best->pb, q);
                best->ta = s;
                best->tb = t;
                if (d2 == 0.0)
                    return;
            }
        }
    }
}

/* Local descent from the seed vertices: the triangles around the current
 * pair's corners against each other, moving while it improves. On convex
 * polytopes this usually lands on the closest pair itself, which makes the
 * bounds of the complete search as tight as they can be. */
static void descend(poly_view* a, poly_view* b, int ia, int ib, double slack, best_pair* best, tri_ref** ra,
                    tri_ref** rb)
{
    int va[3] = {ia, ia, ia}, vb[3] = {ib, ib, ib};
    for (int step = 0; step < 64; step++) {
        int na = collect(a, va, 3, ra), nb = collect(b, vb, 3, rb);
        double before = best->d2;
        pair_search(ra, na, rb, nb, slack, best);
        if (best->d2 == 0.0 || !(best->d2 < before))
            return;
        for (int k = 0; k < 3; k++) {
            va[k] = corner(a, (int)(best->ta - a->tris), k);
            vb[k] = corner(b, (int)(best->tb - b->tris), k);
        }
    }
}

static double coord_scale(const ref_polytope* p)
{
    double m = 0.0;
    for (int i = 0; i < p->nverts; i++)
        for (int k = 0; k < 3; k++)
            m = fmax(m, fabs(p->verts[i][k]));
    return m;
}

static void unit_between(double w[3], double minus_w[3], const best_pair* best)
{
    v_sub(w, best->pa, best->pb);
    for (int k = 0; k < 3; k++) {
        w[k] /= best->d;
        minus_w[k] = -w[k];
    }
}

static void distance_views(poly_view* a, poly_view* b, best_pair* best, tri_ref** ca, tri_ref** cb)
{
    /* Bounds are computed in rounded arithmetic; widen them by far more than
     * their rounding so no pair is ever wrongly skipped. */
    double slack = 1e-12 * fmax(coord_scale(a->p), coord_scale(b->p)) + 1e-300;
    double w[3], minus_w[3], x[3];
    int ia, ib;
    seed_pair(a, b, &ia, &ib);
    v_copy(best->pa, a->p->verts[ia]);
    v_copy(best->pb, b->p->verts[ib]);
    best->d2 = v_dist2(best->pa, best->pb);
    best->d = sqrt(best->d2);
    if (best->d2 == 0.0)
        return;
    unit_between(w, minus_w, best);
    if (vertex_inside(a, b, w, max_along(b->p, w), slack, x) ||
        vertex_inside(b, a, minus_w, max_along(a->p, minus_w), slack, x)) {
        best->d2 = best->d = 0.0;
        v_copy(best->pa, x);
        v_copy(best->pb, x);
        return;
    }
    descend(a, b, ia, ib, slack, best, ca, cb);
    if (best->d2 == 0.0)
        return;
    /* The complete search, aimed through the best pair found. */
    unit_between(w, minus_w, best);
    int na = candidates(a, b, w, max_along(b->p, w), slack, best->d, ca);
    int nb = candidates(b, a, minus_w, max_along(a->p, minus_w), slack, best->d, cb);
    pair_search(ca, na, cb, nb, slack, best);
}

double ref_polytope_distance(const ref_polytope* a, const ref_polytope* b, double pa[3], double pb[3])
{
    if (!a || !b || a->nverts < 1 || b->nverts < 1)
        return NAN;
    poly_view va = {0}, vb = {0};
    tri_ref** ca = NULL;
    tri_ref** cb = NULL;
    best_pair best = {.d2 = NAN, .d = NAN};
    if (view_init(&va, a) && view_init(&vb, b)) {
        ca = malloc(sizeof(*ca) * (size_t)va.ntris);
        cb = malloc(sizeof(*cb) * (size_t)vb.ntris);
        if (ca && cb)
            distance_views(&va, &vb, &best, ca, cb);
    }
    free(ca);
    free(cb);
    view_free(&va);
    view_free(&vb);
    v_out(pa, best.pa);
    v_out(pb, best.pb);
    return best.d;
}

double ref_polytope_segment_distance(const ref_polytope* p, const double s0[3], const double s1[3],
                                     double pp[3], double ps[3])
{
    double ends[2][3];
    v_copy(ends[0], s0);
    v_copy(ends[1], s1);
    ref_polytope seg = {.nverts = 2, .verts = ends};
    return ref_polytope_distance(p, &seg, pp, ps);
}

/* ---- helpers for tests ------------------------------------------------------ */

void ref_quat_to_matrix(const double q[4], double m[3][3])
{
    double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    double x = q[0] / len, y = q[1] / len, z = q[2] / len, w = q[3] / len;
    m[0][0] = 1 - 2 * (y * y + z * z);
    m[0][1] = 2 * (x * y - z * w);
    m[0][2] = 2 * (x * z + y * w);
    m[1][0] = 2 * (x * y + z * w);
    m[1][1] = 1 - 2 * (x * x + z * z);
    m[1][2] = 2 * (y * z - x * w);
    m[2][0] = 2 * (x * z - y * w);
    m[2][1] = 2 * (y * z + x * w);
    m[2][2] = 1 - 2 * (x * x + y * y);
}

unsigned long long ref_rng_next(ref_rng* rng)
{
    /* splitmix64: a Weyl sequence through a strong mixer, so every seed,
     * including 0, gives a good stream. */
    unsigned long long z = (rng->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

double ref_rng_uniform(ref_rng* rng, double lo, double hi)
{
    double u = (double)(ref_rng_next(rng) >> 11) * 0x1.0p-53; /* 53 bits: [0, 1) */
    return lo + (hi - lo) * u;
}

void ref_rng_unit_quat(ref_rng* rng, double q[4])
{
    /* Shoemake's subgroup method: uniform on the 3-sphere, hence a uniform
     * rotation (Haar measure). */
    const double two_pi = 6.283185307179586476925286766559;
    double u1 = ref_rng_uniform(rng, 0.0, 1.0);
    double a = two_pi * ref_rng_uniform(rng, 0.0, 1.0);
    double b = two_pi * ref_rng_uniform(rng, 0.0, 1.0);
    double s1 = sqrt(1.0 - u1), s2 = sqrt(u1);
    q[0] = s1 * sin(a);
    q[1] = s1 * cos(a);
    q[2] = s2 * sin(b);
    q[3] = s2 * cos(b);
}
