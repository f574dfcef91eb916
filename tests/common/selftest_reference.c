/* Checks the reference geometry against analytic answers, against an
 * unpruned brute force, and against optimality certificates; times the
 * polytope distance; checks mesh loading. Prints "N passed, N failed" last
 * and exits nonzero on any failure. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "mesh_io.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef const double (*cpts)[3];

static int passed, failed;

static void check(int ok, const char* what, int line)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL line %d: %s\n", line, what);
    }
}
#define CHECK(cond) check((cond) != 0, #cond, __LINE__)
#define NEAR(got, want, tol) check(fabs((got) - (want)) <= (tol), #got " == " #want, __LINE__)

static int vec_near(const double a[3], double x, double y, double z, double tol)
{
    return fabs(a[0] - x) <= tol && fabs(a[1] - y) <= tol && fabs(a[2] - z) <= tol;
}

static double vdist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---- shape makers ------------------------------------------------------------ */

static void box_points(double p[8][3], double lo, double hi, double dx)
{
    for (int i = 0; i < 8; i++) {
        p[i][0] = (i & 1 ? hi : lo) + dx;
        p[i][1] = i & 2 ? hi : lo;
        p[i][2] = i & 4 ? hi : lo;
    }
}

static int build_box(ref_polytope* out, double lo, double hi, double dx)
{
    double p[8][3];
    box_points(p, lo, hi, dx);
    return ref_polytope_build(out, (cpts)p, 8);
}

static void random_pose(ref_rng* rng, double rot[3][3], double trans[3], double spread)
{
    double q[4];
    ref_rng_unit_quat(rng, q);
    ref_quat_to_matrix(q, rot);
    for (int k = 0; k < 3; k++)
        trans[k] = ref_rng_uniform(rng, -spread, spread);
}

/* ---- certificates ------------------------------------------------------------ */

/* Distance from x to p by the slowest honest method: every triangle. */
static double point_to_boundary(const ref_polytope* p, const double x[3])
{
    if (p->ntris == 0)
        return ref_point_segment(x, p->verts[0], p->verts[p->nverts - 1], NULL);
    double best = INFINITY;
    for (int i = 0; i < p->ntris; i++) {
        const int* t = p->tris[i];
        best = fmin(best, ref_point_triangle(x, p->verts[t[0]], p->verts[t[1]], p->verts[t[2]], NULL));
    }
    return best;
}

static int point_in(const ref_polytope* p, const double x[3], double tol)
{
    if (!p->planes)
        return point_to_boundary(p, x) <= tol;
    for (int i = 0; i < p->ntris; i++) {
        const double* pl = p->planes[i];
        if (pl[0] * x[0] + pl[1] * x[1] + pl[2] * x[2] + pl[3] > tol)
            return 0;
    }
    return 1;
}

/* d is the distance iff pa is in a, pb in b, |pa - pb| = d, and for d > 0 the
 * slab between the planes through pa and pb normal to pa - pb holds no vertex
 * of either (the KKT conditions of the closest-pair problem). */
static int certified(const ref_polytope* a, const ref_polytope* b, double d, const double pa[3],
                     const double pb[3], double tol)
{
    if (!(d >= 0.0) || !point_in(a, pa, tol) || !point_in(b, pb, tol) || fabs(vdist(pa, pb) - d) > tol)
        return 0;
    if (d <= tol)
        return 1;
    /* w's direction is only as good as tol / d; far vertices magnify that. */
    double reach = 0.0;
    for (int i = 0; i < a->nverts; i++)
        reach = fmax(reach, vdist(a->verts[i], pa));
    for (int i = 0; i < b->nverts; i++)
        reach = fmax(reach, vdist(b->verts[i], pb));
    tol *= 1.0 + reach / d;
    double w[3] = {(pa[0] - pb[0]) / d, (pa[1] - pb[1]) / d, (pa[2] - pb[2]) / d};
    double ha = w[0] * pa[0] + w[1] * pa[1] + w[2] * pa[2];
    double hb = w[0] * pb[0] + w[1] * pb[1] + w[2] * pb[2];
    for (int i = 0; i < a->nverts; i++)
        if (w[0] * a->verts[i][0] + w[1] * a->verts[i][1] + w[2] * a->verts[i][2] < ha - tol)
            return 0;
    for (int i = 0; i < b->nverts; i++)
        if (w[0] * b->verts[i][0] + w[1] * b->verts[i][1] + w[2] * b->verts[i][2] > hb + tol)
            return 0;
    return 1;
}

/* The definition, unpruned: containment by one vertex each way, else the
 * minimum over all triangle pairs. */
static double brute_distance(const ref_polytope* a, const ref_polytope* b)
{
    if (point_in(b, a->verts[0], 0.0) && b->planes)
        return 0.0;
    if (point_in(a, b->verts[0], 0.0) && a->planes)
        return 0.0;
    int last_a = a->nverts - 1, last_b = b->nverts - 1;
    int one[1][3] = {{0, last_a, last_a}}, two[1][3] = {{0, last_b, last_b}};
    int (*ta)[3] = a->ntris ? a->tris : one, (*tb)[3] = b->ntris ? b->tris : two;
    int na = a->ntris ? a->ntris : 1, nb = b->ntris ? b->ntris : 1;
    double best = INFINITY;
    for (int i = 0; i < na; i++)
        for (int j = 0; j < nb; j++)
            best = fmin(best, ref_triangle_triangle(a->verts[ta[i][0]], a->verts[ta[i][1]], a->verts[ta[i][2]],
                                                    b->verts[tb[j][0]], b->verts[tb[j][1]], b->verts[tb[j][2]],
                                                    NULL, NULL));
    return best;
}

/* ---- primitive tests ---------------------------------------------------------- */

static void test_point_segment(void)
{
    double a[3] = {0, 0, 0}, b[3] = {2, 0, 0}, c[3];
    NEAR(ref_point_segment((double[3]){1, 1, 0}, a, b, c), 1.0, 1e-15);
    CHECK(vec_near(c, 1, 0, 0, 1e-15));
    NEAR(ref_point_segment((double[3]){-3, 4, 0}, a, b, c), 5.0, 1e-15);
    CHECK(vec_near(c, 0, 0, 0, 0));
    NEAR(ref_point_segment((double[3]){5, 0, 4}, a, b, c), 5.0, 1e-15);
    CHECK(vec_near(c, 2, 0, 0, 0));
    NEAR(ref_point_segment((double[3]){1, 2, 2}, a, a, c), sqrt(9.0), 1e-15); /* degenerate */
}

static void test_point_triangle(void)
{
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, q[3];
    /* face region: straight above */
    NEAR(ref_point_triangle((double[3]){0.2, 0.3, 2}, a, b, c, q), 2.0, 1e-15);
    CHECK(vec_near(q, 0.2, 0.3, 0, 1e-15));
    NEAR(ref_point_triangle((double[3]){0.2, 0.3, -1}, a, b, c, q), 1.0, 1e-15);
    /* vertex regions */
    NEAR(ref_point_triangle((double[3]){-1, -1, 1}, a, b, c, q), sqrt(3.0), 1e-15);
    CHECK(vec_near(q, 0, 0, 0, 0));
    NEAR(ref_point_triangle((double[3]){2, -1, 0}, a, b, c, q), sqrt(2.0), 1e-15);
    CHECK(vec_near(q, 1, 0, 0, 0));
    NEAR(ref_point_triangle((double[3]){-1, 2, 1}, a, b, c, q), sqrt(3.0), 1e-15);
    CHECK(vec_near(q, 0, 1, 0, 0));
    /* edge regions */
    NEAR(ref_point_triangle((double[3]){0.5, -1, 1}, a, b, c, q), sqrt(2.0), 1e-15);
    CHECK(vec_near(q, 0.5, 0, 0, 1e-15));
    NEAR(ref_point_triangle((double[3]){-2, 0.25, 0}, a, b, c, q), 2.0, 1e-15);
    CHECK(vec_near(q, 0, 0.25, 0, 1e-15));
    NEAR(ref_point_triangle((double[3]){1, 1, 1}, a, b, c, q), sqrt(1.5), 1e-15);
    CHECK(vec_near(q, 0.5, 0.5, 0, 1e-15));
    /* inside, on the plane */
    NEAR(ref_point_triangle((double[3]){0.25, 0.25, 0}, a, b, c, q), 0.0, 0);
    /* degenerate: collinear corners act as the segment, equal corners as a point */
    double d[3] = {2, 0, 0};
    NEAR(ref_point_triangle((double[3]){1.5, 1, 0}, a, b, d, q), 1.0, 1e-15);
    CHECK(vec_near(q, 1.5, 0, 0, 1e-15));
    NEAR(ref_point_triangle((double[3]){3, 4, 0}, a, a, a, q), 5.0, 1e-15);
}

static void test_segment_segment(void)
{
    double ca[3], cb[3];
    double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0};
    /* parallel, overlapping in x on [0.5, 1]: distance 1, witnesses straight across */
    NEAR(ref_segment_segment(a0, a1, (double[3]){0.5, 1, 0}, (double[3]){2, 1, 0}, ca, cb), 1.0, 1e-15);
    CHECK(ca[0] >= 0.5 && ca[0] <= 1.0 && fabs(cb[0] - ca[0]) < 1e-15 && fabs(cb[1] - 1) < 1e-15);
    /* parallel, not overlapping: end to end */
    NEAR(ref_segment_segment(a0, a1, (double[3]){2, 1, 0}, (double[3]){3, 1, 0}, ca, cb), sqrt(2.0), 1e-15);
    CHECK(vec_near(ca, 1, 0, 0, 0) && vec_near(cb, 2, 1, 0, 0));
    /* antiparallel, same answer */
    NEAR(ref_segment_segment(a0, a1, (double[3]){3, 1, 0}, (double[3]){2, 1, 0}, ca, cb), sqrt(2.0), 1e-15);
    /* skew, interiors closest */
    double s0[3] = {-1, 0, 0}, s1[3] = {1, 0, 0};
    NEAR(ref_segment_segment(s0, s1, (double[3]){0, -1, 1}, (double[3]){0, 1, 1}, ca, cb), 1.0, 1e-15);
    CHECK(vec_near(ca, 0, 0, 0, 1e-15) && vec_near(cb, 0, 0, 1, 1e-15));
    /* crossing */
    NEAR(ref_segment_segment(s0, s1, (double[3]){0, -1, 0}, (double[3]){0, 1, 0}, ca, cb), 0.0, 1e-15);
    /* collinear overlapping */
    NEAR(ref_segment_segment(a0, a1, (double[3]){0.5, 0, 0}, (double[3]){3, 0, 0}, ca, cb), 0.0, 1e-15);
    /* degenerate: a point against a segment, two points */
    NEAR(ref_segment_segment(a0, a1, (double[3]){0.5, 2, 0}, (double[3]){0.5, 2, 0}, ca, cb), 2.0, 1e-15);
    CHECK(vec_near(ca, 0.5, 0, 0, 1e-15));
    NEAR(ref_segment_segment(a0, a0, (double[3]){0, 3, 4}, (double[3]){0, 3, 4}, ca, cb), 5.0, 1e-15);
}

static void test_segment_triangle(void)
{
    double a[3] = {-1, -1, 0}, b[3] = {2, -1, 0}, c[3] = {-1, 2, 0}, cs[3], ct[3];
    /* pierces the interior */
    NEAR(ref_segment_triangle((double[3]){0, 0, -1}, (double[3]){0.2, 0.2, 1}, a, b, c, cs, ct), 0.0, 0);
    CHECK(vec_near(cs, 0.1, 0.1, 0, 1e-15) && vec_near(ct, 0.1, 0.1, 0, 1e-15));
    /* parallel above the interior */
    NEAR(ref_segment_triangle((double[3]){0, 0, 0.5}, (double[3]){0.3, 0.2, 0.5}, a, b, c, cs, ct), 0.5, 1e-15);
    /* pointing at the plane from above, stopping short */
    NEAR(ref_segment_triangle((double[3]){0, 0, 3}, (double[3]){0, 0, 1}, a, b, c, cs, ct), 1.0, 1e-15);
    CHECK(vec_near(cs, 0, 0, 1, 0) && vec_near(ct, 0, 0, 0, 1e-15));
    /* passing beside an edge (x + y = 1 from (2,-1) to (-1,2)), skew */
    NEAR(ref_segment_triangle((double[3]){1, 1, -1}, (double[3]){1, 1, 1}, a, b, c, cs, ct), sqrt(0.5), 1e-15);
    CHECK(vec_near(ct, 0.5, 0.5, 0, 1e-15));
}

static void test_triangle_triangle(void)
{
    double a0[3] = {-1, -1, 0}, a1[3] = {2, -1, 0}, a2[3] = {-1, 2, 0}, ca[3], cb[3];
    /* a vertical triangle crossing the horizontal one */
    double b0[3] = {0, 0, -1}, b1[3] = {0.5, 0, 1}, b2[3] = {0, 0.5, 1};
    NEAR(ref_triangle_triangle(a0, a1, a2, b0, b1, b2, ca, cb), 0.0, 0);
    CHECK(vdist(ca, cb) == 0.0 && fabs(ca[2]) < 1e-15);
    CHECK(ref_point_triangle(ca, b0, b1, b2, NULL) < 1e-15);
    /* the same, with the edge-through-face roles swapped */
    NEAR(ref_triangle_triangle(b0, b1, b2, a0, a1, a2, ca, cb), 0.0, 0);
    /* parallel copies one apart */
    double c0[3] = {-1, -1, 1}, c1[3] = {2, -1, 1}, c2[3] = {-1, 2, 1};
    NEAR(ref_triangle_triangle(a0, a1, a2, c0, c1, c2, ca, cb), 1.0, 1e-15);
    /* vertex down onto the face */
    double d0[3] = {0, 0, 0.25}, d1[3] = {1, 1, 3}, d2[3] = {-1, 1, 3};
    NEAR(ref_triangle_triangle(a0, a1, a2, d0, d1, d2, ca, cb), 0.25, 1e-15);
    CHECK(vec_near(ca, 0, 0, 0, 1e-15) && vec_near(cb, 0, 0, 0.25, 0));
    /* skew edges: a's hypotenuse x + y = 1 under a segment across it */
    double e0[3] = {0, 0, 2}, e1[3] = {2, 2, 2}, e2[3] = {2, 2, 3};
    NEAR(ref_triangle_triangle(a0, a1, a2, e0, e1, e2, ca, cb), 2.0, 1e-15);
    CHECK(vec_near(ca, 0.5, 0.5, 0, 1e-15) && vec_near(cb, 0.5, 0.5, 2, 1e-15));
    /* coplanar overlap: zero up to rounding */
    double f0[3] = {0, 0, 0}, f1[3] = {3, 0, 0}, f2[3] = {0, 3, 0};
    NEAR(ref_triangle_triangle(a0, a1, a2, f0, f1, f2, ca, cb), 0.0, 1e-15);
}

/* Random triangle pairs: each answer must carry its certificate. */
static void test_triangle_pairs_certified(void)
{
    ref_rng rng = {42};
    int bad = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double t[6][3];
        double spread = trial % 2 ? 1.0 : 0.3; /* many intersecting pairs too */
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 3; k++)
                t[i][k] = ref_rng_uniform(&rng, -1, 1) + (i >= 3 && k == 0 ? spread : 0);
        double ca[3], cb[3];
        double d = ref_triangle_triangle(t[0], t[1], t[2], t[3], t[4], t[5], ca, cb);
        ref_polytope pa = {.nverts = 3, .verts = t, .ntris = 1, .tris = (int[1][3]){{0, 1, 2}}};
        ref_polytope pb = {.nverts = 3, .verts = t + 3, .ntris = 1, .tris = (int[1][3]){{0, 1, 2}}};
        bad += !certified(&pa, &pb, d, ca, cb, 1e-12);
    }
    CHECK(bad == 0);
}

/* ---- polytope tests ----------------------------------------------------------- */

static void test_cubes_apart(void)
{
    ref_polytope a, b;
    CHECK(build_box(&a, 0, 1, 0) == REF_POLYTOPE_OK);
    CHECK(build_box(&b, 0, 1, 2) == REF_POLYTOPE_OK);
    CHECK(a.nverts == 8 && a.ntris == 12);
    double pa[3], pb[3];
    NEAR(ref_polytope_distance(&a, &b, pa, pb), 1.0, 1e-15);
    CHECK(pa[0] == 1.0 && pb[0] == 2.0); /* face witnesses */
    CHECK(fabs(pa[1] - pb[1]) < 1e-15 && fabs(pa[2] - pb[2]) < 1e-15);
    CHECK(pa[1] >= 0 && pa[1] <= 1 && pa[2] >= 0 && pa[2] <= 1);
    /* a rigid motion of both changes nothing but the witnesses' frame */
    ref_rng rng = {7};
    double rot[3][3], trans[3];
    random_pose(&rng, rot, trans, 10.0);
    ref_polytope_transform(&a, rot, trans);
    ref_polytope_transform(&b, rot, trans);
    double d = ref_polytope_distance(&a, &b, pa, pb);
    NEAR(d, 1.0, 1e-13);
    CHECK(certified(&a, &b, d, pa, pb, 1e-12));
    ref_polytope_free(&a);
    ref_polytope_free(&b);
}

static void test_cube_contains_cube(void)
{
    ref_polytope big, small;
    build_box(&big, -2, 2, 0);
    build_box(&small, -0.5, 0.5, 0.3);
    double pa[3], pb[3];
    NEAR(ref_polytope_distance(&big, &small, pa, pb), 0.0, 0);
    CHECK(vdist(pa, pb) == 0.0 && point_in(&big, pa, 0) && point_in(&small, pa, 0));
    NEAR(ref_polytope_distance(&small, &big, pa, pb), 0.0, 0);
    /* partial overlap: a corner poking in */
    ref_polytope shifted;
    build_box(&shifted, 1.5, 3, 0);
    NEAR(ref_polytope_distance(&big, &shifted, pa, pb), 0.0, 0);
    CHECK(point_in(&big, pa, 1e-15) && point_in(&shifted, pa, 1e-15));
    ref_polytope_free(&big);
    ref_polytope_free(&small);
    ref_polytope_free(&shifted);
}

/* Two cubes crossing like a star, so no vertex of either is inside the other:
 * only the edge-face crossings can tell they overlap. */
static void test_cubes_crossing_edges(void)
{
    const double eighth_turn = 0.39269908169872415481; /* pi / 8: half of 45 degrees */
    double p[8][3], q[4] = {0, 0, sin(eighth_turn), cos(eighth_turn)}, rot[3][3];
    ref_polytope a, b;
    box_points(p, -1, 1, 0);
    for (int i = 0; i < 8; i++)
        p[i][2] *= 3; /* tall */
    ref_polytope_build(&a, (cpts)p, 8);
    box_points(p, -1, 1, 0);
    for (int i = 0; i < 8; i++)
        p[i][0] *= 3; /* long in x, rotated 45 degrees about z */
    ref_polytope_build(&b, (cpts)p, 8);
    ref_quat_to_matrix(q, rot);
    ref_polytope_transform(&b, rot, (double[3]){0, 0, 0});
    double pa[3], pb[3];
    NEAR(ref_polytope_distance(&a, &b, pa, pb), 0.0, 0);
    CHECK(point_in(&a, pa, 1e-14) && point_in(&b, pa, 1e-14));
    ref_polytope_free(&a);
    ref_polytope_free(&b);
}

static void test_degenerate_builds(void)
{
    double p[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    ref_polytope pt, seg, tri, quad, cube;
    CHECK(ref_polytope_build(&pt, (cpts)p, 1) == REF_POLYTOPE_DEGENERATE && pt.nverts == 1 && pt.ntris == 0);
    CHECK(ref_polytope_build(&seg, (cpts)p, 2) == REF_POLYTOPE_DEGENERATE && seg.nverts == 2 && seg.ntris == 0);
    CHECK(ref_polytope_build(&tri, (cpts)p, 3) == REF_POLYTOPE_DEGENERATE && tri.nverts == 3 && tri.ntris == 1);
    CHECK(ref_polytope_build(&quad, (cpts)p, 4) == REF_POLYTOPE_DEGENERATE && quad.nverts == 4 && quad.ntris == 2);
    CHECK(!pt.planes && !seg.planes && !tri.planes && !quad.planes);
    ref_polytope none;
    CHECK(ref_polytope_build(&none, (cpts)p, 0) == REF_POLYTOPE_ERROR && none.nverts == 0);
    build_box(&cube, 2, 3, 0); /* [2,3]^3 */
    double pa[3], pb[3];
    NEAR(ref_polytope_distance(&pt, &cube, pa, pb), sqrt(12.0), 1e-14);
    NEAR(ref_polytope_distance(&seg, &cube, pa, pb), sqrt(9.0), 1e-14);
    NEAR(ref_polytope_distance(&quad, &cube, pa, pb), sqrt(6.0), 1e-14); /* (1,1,0) to (2,2,2) */
    NEAR(ref_polytope_distance(&cube, &tri, pa, pb), sqrt(8.5), 1e-14);  /* (.5,.5,0) to (2,2,2) */
    CHECK(vec_near(pa, 2, 2, 2, 0) && vec_near(pb, 0.5, 0.5, 0, 1e-15));
    NEAR(ref_polytope_distance(&tri, &seg, pa, pb), 0.0, 1e-15);
    /* a segment through the cube, both ends outside */
    NEAR(ref_polytope_segment_distance(&cube, (double[3]){0, 2.5, 2.5}, (double[3]){5, 2.5, 2.5}, pa, pb), 0.0,
         0);
    NEAR(ref_polytope_segment_distance(&cube, (double[3]){0, 2.5, 4}, (double[3]){5, 2.5, 4}, pa, pb), 1.0, 1e-15);
    ref_polytope_free(&pt);
    ref_polytope_free(&seg);
    ref_polytope_free(&tri);
    ref_polytope_free(&quad);
    ref_polytope_free(&cube);
}

/* The pruned search must equal the plain minimum over all pairs. */
static void test_random_hulls_vs_brute(void)
{
    ref_rng rng = {2024};
    int mismatch = 0, uncertified = 0, zeros = 0;
    for (int trial = 0; trial < 300; trial++) {
        int na = 1 + trial % 24, nb = 1 + (trial * 7) % 30;
        double pts[64][3];
        ref_polytope a, b;
        for (int i = 0; i < na; i++)
            for (int k = 0; k < 3; k++)
                pts[i][k] = ref_rng_uniform(&rng, -1, 1);
        ref_polytope_build(&a, (cpts)pts, na);
        for (int i = 0; i < nb; i++)
            for (int k = 0; k < 3; k++)
                pts[i][k] = ref_rng_uniform(&rng, -1, 1) + (k == 0 ? 1.5 : 0);
        ref_polytope_build(&b, (cpts)pts, nb);
        double rot[3][3], trans[3], pa[3], pb[3];
        random_pose(&rng, rot, trans, 1.0);
        ref_polytope_transform(&b, rot, trans);
        double d = ref_polytope_distance(&a, &b, pa, pb);
        mismatch += fabs(d - brute_distance(&a, &b)) > 1e-14;
        uncertified += !certified(&a, &b, d, pa, pb, 1e-12);
        zeros += d == 0.0;
        ref_polytope_free(&a);
        ref_polytope_free(&b);
    }
    printf("random hulls: 300 pairs, %d intersecting\n", zeros);
    CHECK(mismatch == 0);
    CHECK(uncertified == 0);
    CHECK(zeros > 20 && zeros < 280); /* both kinds were exercised */
}

static void sphere_cloud(ref_rng* rng, double (*p)[3], int n, double radius)
{
    for (int i = 0; i < n; i++) {
        double q[4];
        ref_rng_unit_quat(rng, q); /* a uniform direction: q's xyz part, normalised */
        double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        for (int k = 0; k < 3; k++)
            p[i][k] = q[k] / len * radius;
    }
}

/* Hulls of points on spheres: every point is a vertex and the triangles are
 * many and small, where the pruning has the most to discard. */
static void test_sphere_hulls_vs_brute(void)
{
    ref_rng rng = {77};
    int mismatch = 0, uncertified = 0, zeros = 0;
    static double p[200][3];
    for (int trial = 0; trial < 12; trial++) {
        int n = 40 + 12 * trial;
        ref_polytope a, b;
        sphere_cloud(&rng, p, n, 1.0);
        ref_polytope_build(&a, (cpts)p, n);
        sphere_cloud(&rng, p, 200 - n, ref_rng_uniform(&rng, 0.5, 1.5));
        ref_polytope_build(&b, (cpts)p, 200 - n);
        double rot[3][3], trans[3], pa[3], pb[3], dir[3];
        random_pose(&rng, rot, dir, 1.0);
        double gap = ref_rng_uniform(&rng, 1.3, 2.6) / vdist(dir, (double[3]){0, 0, 0});
        for (int k = 0; k < 3; k++)
            trans[k] = dir[k] * gap;
        ref_polytope_transform(&b, rot, trans);
        double d = ref_polytope_distance(&a, &b, pa, pb);
        mismatch += fabs(d - brute_distance(&a, &b)) > 1e-14;
        uncertified += !certified(&a, &b, d, pa, pb, 1e-12);
        zeros += d == 0.0;
        ref_polytope_free(&a);
        ref_polytope_free(&b);
    }
    printf("sphere hulls: 12 pairs, %d intersecting\n", zeros);
    CHECK(mismatch == 0);
    CHECK(uncertified == 0);
}

/* Faces a hair apart, in a rotated frame: the distance is still the gap. */
static void test_tiny_gap(void)
{
    ref_polytope a, b;
    build_box(&a, 0, 1, 0);
    build_box(&b, 0, 1, 1.0 + 1e-9);
    ref_rng rng = {11};
    double rot[3][3], trans[3], pa[3], pb[3];
    random_pose(&rng, rot, trans, 3.0);
    ref_polytope_transform(&a, rot, trans);
    ref_polytope_transform(&b, rot, trans);
    double d = ref_polytope_distance(&a, &b, pa, pb);
    NEAR(d, 1e-9, 1e-14);
    CHECK(certified(&a, &b, d, pa, pb, 1e-12));
    /* touching faces: zero */
    ref_polytope c;
    build_box(&c, 0, 1, 1.0);
    NEAR(ref_polytope_distance(&c, &c, pa, pb), 0.0, 0);
    ref_polytope_free(&a);
    build_box(&a, 0, 1, 0);
    NEAR(ref_polytope_distance(&a, &c, pa, pb), 0.0, 1e-15);
    ref_polytope_free(&a);
    ref_polytope_free(&b);
    ref_polytope_free(&c);
}

/* ---- meshes ----------------------------------------------------------------------- */

static int data_available(void)
{
    mesh_data m;
    if (mesh_load_named("meshes/tetrahedron.off", &m) != MESH_OK) {
        printf("SKIP mesh tests: no meshes under %s\n", mesh_data_dir());
        return 0;
    }
    mesh_free(&m);
    return 1;
}

static double (*to_double(const mesh_data* m))[3]
{
    double (*p)[3] = malloc(sizeof(double[3]) * (size_t)m->vertex_count);
    for (int i = 0; i < m->vertex_count; i++)
        for (int k = 0; k < 3; k++)
            p[i][k] = m->vertices[i][k];
    return p;
}

/* geosphere.off pushed onto a sphere of radius 2: a point straight out from a
 * vertex is closest to that vertex (every vertex is on the sphere), a point
 * straight out from a face's centroid is closest to the centroid. */
static void test_geosphere(void)
{
    mesh_data m;
    if (mesh_load_named("meshes/geosphere.off", &m) != MESH_OK) {
        CHECK(!"geosphere.off loads");
        return;
    }
    double (*p)[3] = to_double(&m);
    for (int i = 0; i < m.vertex_count; i++) {
        double len = sqrt(p[i][0] * p[i][0] + p[i][1] * p[i][1] + p[i][2] * p[i][2]);
        for (int k = 0; k < 3; k++)
            p[i][k] *= 2.0 / len;
    }
    ref_polytope s;
    CHECK(ref_polytope_build(&s, (cpts)p, m.vertex_count) == REF_POLYTOPE_OK && s.nverts == 162 && s.ntris == 320);
    double x[3], pa[3], pb[3];
    const double* v = s.verts[17];
    for (int k = 0; k < 3; k++)
        x[k] = v[k] * 1.75; /* |x| = 3.5 */
    NEAR(ref_polytope_segment_distance(&s, x, x, pa, pb), 1.5, 1e-14);
    CHECK(vdist(pa, v) < 1e-14);
    const int* t = s.tris[100];
    const double* n = s.planes[100];
    double c[3];
    for (int k = 0; k < 3; k++) {
        c[k] = (s.verts[t[0]][k] + s.verts[t[1]][k] + s.verts[t[2]][k]) / 3.0;
        x[k] = c[k] + 0.3 * n[k];
    }
    NEAR(ref_polytope_segment_distance(&s, x, x, pa, pb), 0.3, 1e-14);
    CHECK(vdist(pa, c) < 1e-14);
    NEAR(ref_polytope_segment_distance(&s, (double[3]){0.1, 0.2, 0.3}, (double[3]){0.1, 0.2, 0.3}, pa, pb), 0.0, 0);
    NEAR(ref_polytope_segment_distance(&s, (double[3]){-5, 0, 0}, (double[3]){5, 0.1, 0}, pa, pb), 0.0, 0);
    free(p);
    ref_polytope_free(&s);
    mesh_free(&m);
}

static void test_off_loading(void)
{
    mesh_data m;
    char path[4096];
    snprintf(path, sizeof(path), "%s/meshes/bunny00.off", mesh_data_dir());
    int nv = -1, nf = -1;
    FILE* f = fopen(path, "r");
    if (f) {
        CHECK(fscanf(f, "OFF %d %d", &nv, &nf) == 2);
        fclose(f);
    }
    double t0 = now_ms();
    CHECK(mesh_load_named("meshes/bunny00.off", &m) == MESH_OK);
    printf("bunny00.off: %d vertices, %d triangles, loaded in %.1f ms\n", m.vertex_count, m.triangle_count,
           now_ms() - t0);
    CHECK(m.vertex_count == nv && m.triangle_count == nf && nv == 37706 && nf == 75408);
    mesh_free(&m);
    CHECK(mesh_load_named("meshes/cube_quad.off", &m) == MESH_OK && m.vertex_count == 8 && m.triangle_count == 12);
    mesh_free(&m);
    /* comments first, COFF, colours after vertices and faces */
    CHECK(mesh_load_named("meshes/mesh_with_colors.off", &m) == MESH_OK && m.vertex_count == 8 &&
          m.triangle_count == 6);
    mesh_free(&m);
    /* a long CGAL comment block before the header */
    CHECK(mesh_load_named("meshes/sphere966.off", &m) == MESH_OK && m.vertex_count == 926 &&
          m.triangle_count == 1848);
    mesh_free(&m);
    CHECK(mesh_load_named("meshes/no_such_mesh.off", &m) == MESH_ERR_OPEN && m.vertices == NULL);
}

static void test_assimp_loading(void)
{
    const char* files[] = {"assimp/IFC/AC14-FZK-Haus.ifc", "assimp/HMP/terrain.hmp", "assimp/3DS/fels.3ds"};
    for (int i = 0; i < 3; i++) {
        mesh_data m;
        double t0 = now_ms();
        int rc = mesh_load_named(files[i], &m);
        if (rc == MESH_ERR_OPEN) {
            printf("SKIP %s: not under %s\n", files[i], mesh_data_dir());
            continue;
        }
        printf("%s: %d vertices, %d triangles, %.1f ms\n", files[i], m.vertex_count, m.triangle_count,
               now_ms() - t0);
        int indices_ok = 1;
        for (int t = 0; t < m.triangle_count; t++)
            for (int k = 0; k < 3; k++)
                indices_ok &= m.triangles[t][k] >= 0 && m.triangles[t][k] < m.vertex_count;
        CHECK(rc == MESH_OK && m.triangle_count > 0 && indices_ok);
        mesh_free(&m);
    }
}

/* ---- timing ------------------------------------------------------------------------- */

/* Times `reps` queries of b moved to `reps` poses around a, from overlapping
 * to apart; every answer is certified. Separated and intersecting queries are
 * reported apart: they take different paths. */
static void time_queries(const char* name, const ref_polytope* a, const ref_polytope* b, double spacing, int reps)
{
    ref_rng rng = {99};
    double total[2] = {0, 0}, worst[2] = {0, 0};
    int count[2] = {0, 0}, ok = 1;
    for (int r = 0; r < reps; r++) {
        ref_polytope moved = *b;
        moved.verts = malloc(sizeof(double[3]) * (size_t)b->nverts);
        moved.planes = malloc(sizeof(double[4]) * (size_t)b->ntris);
        memcpy(moved.verts, b->verts, sizeof(double[3]) * (size_t)b->nverts);
        memcpy(moved.planes, b->planes, sizeof(double[4]) * (size_t)b->ntris);
        double rot[3][3], trans[3], dir[3], pa[3], pb[3];
        random_pose(&rng, rot, dir, 1.0);
        double f = spacing * (0.6 + 0.6 * r / (reps > 1 ? reps - 1 : 1)) / vdist(dir, (double[3]){0, 0, 0});
        for (int k = 0; k < 3; k++)
            trans[k] = dir[k] * f;
        ref_polytope_transform(&moved, rot, trans);
        double t0 = now_ms();
        double d = ref_polytope_distance(a, &moved, pa, pb);
        double dt = now_ms() - t0;
        int apart = d > 0.0;
        total[apart] += dt;
        worst[apart] = fmax(worst[apart], dt);
        count[apart]++;
        ok &= certified(a, &moved, d, pa, pb, 1e-9 * spacing);
        free(moved.verts);
        free(moved.planes);
    }
    printf("timing %s, %d+%d vertices: %d apart: mean %.3f ms, worst %.3f ms; %d intersecting: mean %.3f ms, "
           "worst %.3f ms\n",
           name, a->nverts, b->nverts, count[1], total[1] / (count[1] ? count[1] : 1), worst[1], count[0],
           total[0] / (count[0] ? count[0] : 1), worst[0]);
    CHECK(ok);
}

static void test_timing_sphere_points(void)
{
    ref_rng rng = {5};
    static double p[3000][3];
    sphere_cloud(&rng, p, 3000, 1.0);
    ref_polytope a;
    double t0 = now_ms();
    CHECK(ref_polytope_build(&a, (cpts)p, 3000) == REF_POLYTOPE_OK && a.nverts == 3000);
    printf("qhull: 3000 points on a sphere in %.1f ms\n", now_ms() - t0);
    time_queries("3000-point spheres", &a, &a, 2.0, 20);
    ref_polytope_free(&a);
}

static void test_timing_meshes(void)
{
    const char* names[] = {"meshes/geosphere.off", "meshes/bunny00.off"};
    for (int i = 0; i < 2; i++) {
        mesh_data m;
        if (mesh_load_named(names[i], &m) != MESH_OK) {
            CHECK(!"mesh loads");
            continue;
        }
        double (*p)[3] = to_double(&m);
        ref_polytope a;
        double t0 = now_ms();
        CHECK(ref_polytope_build(&a, (cpts)p, m.vertex_count) == REF_POLYTOPE_OK);
        printf("qhull: %s, %d points -> %d hull vertices in %.1f ms\n", names[i], m.vertex_count, a.nverts,
               now_ms() - t0);
        double r = 0.0;
        for (int v = 0; v < a.nverts; v++)
            r = fmax(r, vdist(a.verts[v], a.verts[0]));
        time_queries(names[i], &a, &a, r, i == 0 ? 200 : 20);
        ref_polytope_free(&a);
        free(p);
        mesh_free(&m);
    }
}

int main(void)
{
    test_point_segment();
    test_point_triangle();
    test_segment_segment();
    test_segment_triangle();
    test_triangle_triangle();
    test_triangle_pairs_certified();
    test_cubes_apart();
    test_cube_contains_cube();
    test_cubes_crossing_edges();
    test_degenerate_builds();
    test_random_hulls_vs_brute();
    test_sphere_hulls_vs_brute();
    test_tiny_gap();
    test_timing_sphere_points();
    if (data_available()) {
        test_geosphere();
        test_off_loading();
        test_assimp_loading();
        test_timing_meshes();
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
