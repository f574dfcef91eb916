/* Checks the mid-phase reference (mesh_reference.h): the exact predicates
 * against 128-bit integer determinants, each query against analytic
 * answers, triangle intersection against reference.h's independent
 * distances on integer grids (every degenerate and touching case) and on
 * random pairs, the sweep against the all-pairs loop, rays against segment
 * distances, boxes against qhull polytope distances. Prints
 * "N passed, N failed" last and exits nonzero on any failure.
 * `selftest_mesh_reference --timing` also times ref_mesh_pairs on
 * bunny00 against itself turned by 0.3 rad (needs the data directory). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include "mesh_io.h"
#include "mesh_reference.h"
#include "reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__extension__ typedef __int128 i128; /* exact determinants of small integers */

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

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void set3(double r[3], double x, double y, double z)
{
    r[0] = x;
    r[1] = y;
    r[2] = z;
}

/* Builds a triangle from nine numbers. */
static void tri9(double t[3][3], double ax, double ay, double az, double bx, double by, double bz, double cx,
                 double cy, double cz)
{
    set3(t[0], ax, ay, az);
    set3(t[1], bx, by, bz);
    set3(t[2], cx, cy, cz);
}

static void random_rotation(ref_rng* rng, double rot[3][3])
{
    double q[4];
    ref_rng_unit_quat(rng, q);
    ref_quat_to_matrix(q, rot);
}

static void apply(double rot[3][3], const double x[3], const double trans[3], double r[3])
{
    for (int k = 0; k < 3; k++)
        r[k] = rot[k][0] * x[0] + rot[k][1] * x[1] + rot[k][2] * x[2] + trans[k];
}

/* ---- exact predicates ---------------------------------------------------------- */

static int sign128(i128 x)
{
    return (x > 0) - (x < 0);
}

/* Points near the line y = x, one ulp apart (Shewchuk's classic picture of
 * a failing orient2d): the exact sign comes from the coordinates scaled by
 * 2^53, which are integers. */
static void test_orient2d_ulp_grid(void)
{
    double u = ldexp(1.0, -53);
    int bad = 0, naive_wrong = 0;
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < 64; j++) {
            double a[2] = {0.5 + i * u, 0.5 + j * u}, b[2] = {12, 12}, c[2] = {24, 24};
            i128 ax = ((i128)1 << 52) + i, ay = ((i128)1 << 52) + j, b1 = (i128)12 << 53, c1 = (i128)24 << 53;
            i128 det = (ax - c1) * (b1 - c1) - (ay - c1) * (b1 - c1);
            bad += ref_orient2d(a, b, c) != sign128(det);
            double naive = (a[0] - c[0]) * (b[1] - c[1]) - (a[1] - c[1]) * (b[0] - c[0]);
            naive_wrong += (naive > 0) - (naive < 0) != sign128(det);
        }
    }
    CHECK(bad == 0);
    CHECK(naive_wrong > 0); /* the grid does defeat plain double */
    /* antisymmetry and exact zero */
    double p[2] = {0.1, 0.7}, q[2] = {0.3, 0.2}, r[2] = {0.9, 0.4};
    CHECK(ref_orient2d(p, q, r) == -ref_orient2d(q, p, r) && ref_orient2d(p, q, r) != 0);
    CHECK(ref_orient2d(p, q, q) == 0 && ref_orient2d(p, p, p) == 0);
}

static int orient3d_i128(const long long a[3], const long long b[3], const long long c[3], const long long d[3])
{
    i128 ad[3], bd[3], cd[3];
    for (int k = 0; k < 3; k++) {
        ad[k] = (i128)a[k] - d[k];
        bd[k] = (i128)b[k] - d[k];
        cd[k] = (i128)c[k] - d[k];
    }
    i128 det = ad[0] * (bd[1] * cd[2] - bd[2] * cd[1]) + ad[1] * (bd[2] * cd[0] - bd[0] * cd[2]) +
               ad[2] * (bd[0] * cd[1] - bd[1] * cd[0]);
    return sign128(det);
}

static long long rand_int(ref_rng* rng, long long lo, long long hi)
{
    return lo + (long long)(ref_rng_next(rng) % (unsigned long long)(hi - lo + 1));
}

/* Nearly coplanar integer points: d is an integer combination of a, b, c
 * nudged by at most one unit, far from the origin, then scaled by a power
 * of two (exact). Over half are exactly coplanar. */
static void test_orient3d_near_coplanar(void)
{
    ref_rng rng = {11};
    int bad = 0, zero = 0, antisym = 0;
    for (int trial = 0; trial < 20000; trial++) {
        long long a[3], b[3], c[3], d[3];
        long long s = rand_int(&rng, -256, 256), t = rand_int(&rng, -256, 256), off = 1LL << 31;
        for (int k = 0; k < 3; k++) {
            a[k] = rand_int(&rng, -(1 << 20), 1 << 20) + off;
            b[k] = rand_int(&rng, -(1 << 20), 1 << 20) + off;
            c[k] = rand_int(&rng, -(1 << 20), 1 << 20) + off;
            d[k] = a[k] + s * (b[k] - a[k]) + t * (c[k] - a[k]) + (trial % 2 ? rand_int(&rng, -1, 1) : 0);
        }
        double scale = ldexp(1.0, (int)rand_int(&rng, -40, 10));
        double fa[3], fb[3], fc[3], fd[3];
        for (int k = 0; k < 3; k++) {
            fa[k] = (double)a[k] * scale;
            fb[k] = (double)b[k] * scale;
            fc[k] = (double)c[k] * scale;
            fd[k] = (double)d[k] * scale;
        }
        int want = orient3d_i128(a, b, c, d), got = ref_orient3d(fa, fb, fc, fd);
        bad += got != want;
        zero += want == 0;
        antisym += ref_orient3d(fb, fa, fc, fd) != -got || ref_orient3d(fa, fb, fd, fc) != -got;
    }
    CHECK(bad == 0);
    CHECK(antisym == 0);
    CHECK(zero > 10000);
}

/* Well-conditioned random points: the filter answers; it must agree with
 * the exact path, reached here through integer copies of the coordinates. */
static void test_orient3d_random(void)
{
    ref_rng rng = {12};
    int bad = 0;
    for (int trial = 0; trial < 20000; trial++) {
        long long p[4][3];
        double f[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) {
                p[i][k] = rand_int(&rng, -(1LL << 30), 1LL << 30);
                f[i][k] = (double)p[i][k];
            }
        bad += ref_orient3d(f[0], f[1], f[2], f[3]) != orient3d_i128(p[0], p[1], p[2], p[3]);
    }
    CHECK(bad == 0);
    /* sign convention: d on the side (b - a) x (c - a) points to is negative */
    double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, up[3] = {0, 0, 1}, down[3] = {0, 0, -1};
    CHECK(ref_orient3d(a, b, c, up) == -1 && ref_orient3d(a, b, c, down) == 1);
}

/* ---- triangle against triangle: analytic ------------------------------------------ */

static int tt(double a[3][3], double b[3][3])
{
    return ref_tri_tri_intersect(a, b);
}

static void test_tri_tri_analytic(void)
{
    double a[3][3], b[3][3];
    tri9(a, -1, -1, 0, 2, -1, 0, -1, 2, 0);
    /* crossing: a vertical triangle through the horizontal one */
    tri9(b, 0, 0, -1, 0.5, 0, 1, 0, 0.5, 1);
    CHECK(tt(a, b) && tt(b, a));
    /* piercing: an edge of b through a's interior; depth is how far b's
     * lower tip goes below (pulling b up 0.1 leaves it touching) */
    tri9(b, 0, 0, -0.1, 0.2, 0, 3, 0, 0.2, 3);
    CHECK(tt(a, b));
    NEAR(ref_tri_tri_penetration(a, b), 0.1, 1e-15);
    NEAR(ref_tri_tri_signed_distance(a, b), -0.1, 1e-15);
    /* parallel, separated */
    tri9(b, -1, -1, 1e-9, 2, -1, 1e-9, -1, 2, 1e-9);
    CHECK(!tt(a, b));
    NEAR(ref_tri_tri_separation(a, b), 1e-9, 1e-20);
    NEAR(ref_tri_tri_signed_distance(a, b), 1e-9, 1e-20);
    CHECK(ref_tri_tri_penetration(a, b) == 0.0);
    /* a vertex on the face, and a hair above it */
    tri9(b, 0.25, 0.25, 0, 1, 1, 3, -1, 1, 3);
    CHECK(tt(a, b) && ref_tri_tri_penetration(a, b) == 0.0);
    b[0][2] = 1e-80;
    CHECK(!tt(a, b));
    /* vertex to vertex */
    tri9(b, -1, -1, 0, -2, -2, 1, -3, -1, 1);
    CHECK(tt(a, b));
    /* a vertex on the edge line but outside the edge */
    tri9(b, 3, -1, 0, 4, -1, 1, 4, 0, 1);
    CHECK(!tt(a, b));
    /* skew edges crossing exactly, then a hair apart */
    tri9(b, 0.5, -2, 0, 0.5, 0, 0, 0.5, -2, -1); /* edge (0.5,-2,0)-(0.5,0,0) meets a's edge y = -1 */
    CHECK(tt(a, b));
    tri9(b, 0.5, -2, 0, 0.5, -1 - 1e-15, 0, 0.5, -2, -1);
    CHECK(!tt(a, b));
    tri9(b, 0.5, -2, 1e-80, 0.5, 0, 1e-80, 0.5, -2, 1);
    CHECK(!tt(a, b));
}

static void test_tri_tri_coplanar(void)
{
    double a[3][3], b[3][3];
    tri9(a, 0, 0, 0, 4, 0, 0, 0, 4, 0);
    tri9(b, 1, 1, 0, 5, 1, 0, 1, 5, 0); /* overlapping */
    CHECK(tt(a, b) && tt(b, a));
    CHECK(ref_tri_tri_penetration(a, b) == 0.0); /* a nudge along z separates */
    tri9(b, 3, 3, 0, 5, 3, 0, 3, 5, 0); /* disjoint beyond the hypotenuse */
    CHECK(!tt(a, b));
    NEAR(ref_tri_tri_separation(a, b), sqrt(2.0), 1e-15);
    tri9(b, 2, 2, 0, 5, 2, 0, 2, 5, 0); /* touching the hypotenuse at a vertex */
    CHECK(tt(a, b));
    tri9(b, 4, 0, 0, 6, 0, 0, 6, -3, 0); /* vertex to vertex */
    CHECK(tt(a, b));
    tri9(b, 1, 1, 0, 2, 1, 0, 1, 2, 0); /* contained */
    CHECK(tt(a, b) && tt(b, a));
    tri9(b, 1, 0, 0, 3, 0, 0, 2, -1, 0); /* sharing part of an edge, outside */
    CHECK(tt(a, b));
    tri9(b, 1, -1e-80, 0, 3, -1e-80, 0, 2, -1, 0); /* a hair off it */
    CHECK(!tt(a, b));
    /* coplanar in a plane no coordinate plane is parallel to: z = x + 2y */
    tri9(a, 0, 0, 0, 4, 0, 4, 0, 4, 8);
    tri9(b, 1, 1, 3, 5, 1, 7, 1, 5, 11);
    CHECK(tt(a, b));
    tri9(b, 3, 3, 9, 5, 3, 11, 3, 5, 13);
    CHECK(!tt(a, b));
    /* the same plane seen edge-on in the xy projection: x = y */
    tri9(a, 0, 0, 0, 1, 1, 0, 0, 0, 1);
    tri9(b, 2, 2, 0, 3, 3, 0, 2, 2, 1);
    CHECK(!tt(a, b)); /* overlapping in xy, disjoint in the plane */
}

static void test_tri_tri_degenerate(void)
{
    double a[3][3], b[3][3];
    tri9(a, -1, -1, 0, 2, -1, 0, -1, 2, 0);
    tri9(b, 0, 0, -1, 0, 0, 1, 0, 0, 0.5); /* collinear: a segment through the face */
    CHECK(ref_tri_degenerate(b) && tt(a, b) && tt(b, a));
    tri9(b, 0, 0, -1, 0, 0, -0.5, 0, 0, -2); /* segment stopping short */
    CHECK(!tt(a, b));
    tri9(b, 0, 0, 0, 0, 0, 0, 0, 0, 0); /* a point on the face */
    CHECK(tt(a, b));
    tri9(b, 0, 0, 1e-80, 0, 0, 1e-80, 0, 0, 1e-80); /* and just above */
    CHECK(!tt(a, b));
    tri9(b, 0.5, -2, 0, 0.5, 0, 0, 0.5, -1.5, 0); /* coplanar segment across an edge */
    CHECK(tt(a, b));
    /* two segments: crossing, collinear overlapping, collinear disjoint, skew */
    tri9(a, 0, 0, 0, 2, 0, 0, 1, 0, 0);
    tri9(b, 1, -1, 0, 1, 1, 0, 1, 1, 0);
    CHECK(tt(a, b));
    tri9(b, 1.5, 0, 0, 3, 0, 0, 4, 0, 0);
    CHECK(tt(a, b));
    tri9(b, 2.5, 0, 0, 3, 0, 0, 4, 0, 0);
    CHECK(!tt(a, b));
    tri9(b, 1, -1, 1e-80, 1, 1, 1e-80, 1, 1, 1e-80);
    CHECK(!tt(a, b));
    tri9(b, 2, 0, 0, 2, 0, 0, 2, 0, 0); /* a point at a segment's end */
    CHECK(tt(a, b));
    CHECK(ref_tri_tri_penetration(a, b) == 0.0);
}

/* ---- triangle against triangle: randomized ------------------------------------------ */

/* Small integer grids make every degenerate and touching case common, and
 * keep apart pairs at least ~0.05 apart, so the distance classifies without
 * doubt. Each pair is also checked under argument swap, corner reordering,
 * and exact translation and scaling. */
static void test_tri_tri_grid(void)
{
    ref_rng rng = {21};
    int bad = 0, variant_bad = 0, hits = 0, degenerate = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double a[3][3], b[3][3];
        int range = trial % 2 ? 3 : 2;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) {
                a[i][k] = (double)rand_int(&rng, 0, range);
                b[i][k] = (double)rand_int(&rng, 0, range);
            }
        int got = tt(a, b);
        double d = ref_tri_tri_separation(a, b);
        bad += got != (d < 1e-9);
        hits += got;
        degenerate += ref_tri_degenerate(a) || ref_tri_degenerate(b);
        double a2[3][3], b2[3][3];
        double shift = ldexp((double)rand_int(&rng, -1000, 1000), (int)rand_int(&rng, -10, 10));
        double scale = ldexp(1.0, (int)rand_int(&rng, -30, 30));
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) {
                a2[i][k] = a[(i + 1) % 3][k] * scale + shift;
                b2[i][k] = b[2 - i][k] * scale + shift;
            }
        variant_bad += tt(b, a) != got || tt(a2, b2) != got || tt(b2, a2) != got;
    }
    CHECK(bad == 0);
    CHECK(variant_bad == 0);
    printf("integer grid: %d of 20000 pairs intersect, %d with a degenerate triangle\n", hits, degenerate);
    CHECK(hits > 3000 && degenerate > 500);
}

/* Coplanar pairs on a 2^-10 grid in z = x + 2y (exact in double): apart
 * pairs are at least ~1e-7 apart. */
static void test_tri_tri_coplanar_random(void)
{
    ref_rng rng = {22};
    int bad = 0, hits = 0;
    for (int trial = 0; trial < 10000; trial++) {
        double t[2][3][3];
        for (int s = 0; s < 2; s++)
            for (int i = 0; i < 3; i++) {
                double x = ldexp((double)rand_int(&rng, 0, 1024), -10);
                double y = ldexp((double)rand_int(&rng, 0, 1024), -10);
                set3(t[s][i], x, y, x + 2 * y);
            }
        int got = tt(t[0], t[1]);
        bad += got != (ref_tri_tri_separation(t[0], t[1]) < 1e-9);
        bad += got != tt(t[1], t[0]);
        hits += got;
    }
    CHECK(bad == 0);
    CHECK(hits > 2000 && hits < 9000);
}

/* A translation of b by the depth along some separating-axis candidate
 * leaves the pair at most touching; any shorter translation, in any
 * direction, leaves it intersecting. */
static int depth_is_tight(double a[3][3], double b[3][3], double depth, ref_rng* rng)
{
    double moved[3][3], u[3];
    for (int trial = 0; trial < 4; trial++) {
        double z = ref_rng_uniform(rng, -1, 1), phi = ref_rng_uniform(rng, 0, 6.283185307179586);
        double rho = sqrt(1 - z * z);
        set3(u, rho * cos(phi), rho * sin(phi), z);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++)
                moved[i][k] = b[i][k] + 0.999 * depth * u[k];
        if (!tt(a, moved))
            return 0;
    }
    double ea[3][3], eb[3][3], axes[11][3];
    int n = 0;
    for (int k = 0; k < 3; k++) {
        for (int c = 0; c < 3; c++) {
            ea[k][c] = a[(k + 1) % 3][c] - a[k][c];
            eb[k][c] = b[(k + 1) % 3][c] - b[k][c];
        }
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++, n++)
            set3(axes[n], ea[i][1] * eb[j][2] - ea[i][2] * eb[j][1], ea[i][2] * eb[j][0] - ea[i][0] * eb[j][2],
                 ea[i][0] * eb[j][1] - ea[i][1] * eb[j][0]);
    set3(axes[n++], ea[0][1] * ea[1][2] - ea[0][2] * ea[1][1], ea[0][2] * ea[1][0] - ea[0][0] * ea[1][2],
         ea[0][0] * ea[1][1] - ea[0][1] * ea[1][0]);
    set3(axes[n++], eb[0][1] * eb[1][2] - eb[0][2] * eb[1][1], eb[0][2] * eb[1][0] - eb[0][0] * eb[1][2],
         eb[0][0] * eb[1][1] - eb[0][1] * eb[1][0]);
    for (int i = 0; i < n; i++) {
        double len = sqrt(axes[i][0] * axes[i][0] + axes[i][1] * axes[i][1] + axes[i][2] * axes[i][2]);
        for (int s = -1; s <= 1; s += 2) {
            for (int v = 0; v < 3; v++)
                for (int k = 0; k < 3; k++)
                    moved[v][k] = b[v][k] + s * (depth * 1.000001 + 1e-12) * axes[i][k] / len;
            if (len > 0 && !tt(a, moved))
                return 1;
        }
    }
    return 0;
}

static void test_tri_tri_random(void)
{
    ref_rng rng = {23};
    int bad = 0, band = 0, hits = 0, loose = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double a[3][3], b[3][3];
        double spread = trial % 2 ? 1.0 : 0.3;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) {
                a[i][k] = ref_rng_uniform(&rng, -1, 1);
                b[i][k] = ref_rng_uniform(&rng, -1, 1) + (k == 0 ? spread : 0);
            }
        int got = tt(a, b);
        double d = ref_tri_tri_separation(a, b);
        if (got) {
            hits++;
            bad += !(d <= 1e-12);
            double depth = ref_tri_tri_penetration(a, b);
            bad += !(depth >= 0.0);
            if (trial % 10 == 0)
                loose += !depth_is_tight(a, b, depth, &rng);
        } else {
            band += d <= 1e-12;
            bad += !(d > 0.0) || ref_tri_tri_penetration(a, b) != 0.0;
        }
    }
    printf("random triangles: %d of 20000 pairs intersect\n", hits);
    CHECK(bad == 0);
    CHECK(band == 0);
    CHECK(loose == 0);
    CHECK(hits > 2000);
}

/* ---- meshes ---------------------------------------------------------------------------- */

typedef struct soup {
    int nv, nt;
    float (*v)[3];
    int (*t)[3];
} soup;

/* n small triangles in the unit cube. Every fifth shares an edge with the
 * one before, and a few are degenerate: a repeated index, three exactly
 * collinear corners. */
static soup make_soup(ref_rng* rng, int n, double size)
{
    soup s = {3 * n, n, malloc((size_t)(3 * n) * sizeof *s.v), malloc((size_t)n * sizeof *s.t)};
    for (int i = 0; i < n; i++) {
        double c[3] = {ref_rng_uniform(rng, 0, 1), ref_rng_uniform(rng, 0, 1), ref_rng_uniform(rng, 0, 1)};
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++)
                s.v[3 * i + j][k] = (float)(c[k] + ref_rng_uniform(rng, -size, size));
        int* t = s.t[i];
        t[0] = 3 * i;
        t[1] = 3 * i + 1;
        t[2] = 3 * i + 2;
        if (i % 5 == 1) {
            t[0] = 3 * (i - 1);
            t[1] = 3 * (i - 1) + 1;
        } else if (i % 37 == 3) {
            t[1] = t[0];
        } else if (i % 41 == 4) {
            for (int j = 1; j < 3; j++)
                for (int k = 0; k < 3; k++)
                    s.v[3 * i + j][k] = s.v[3 * i][k] + (k == 0 ? (float)j * 0.0625f : 0.0f);
        }
    }
    return s;
}

static void soup_free(soup* s)
{
    free(s->v);
    free(s->t);
}

static int same_pair(const ref_mesh_pair* p, const ref_mesh_pair* q)
{
    return p->a == q->a && p->b == q->b && p->intersect == q->intersect && p->degenerate == q->degenerate &&
           p->distance == q->distance && p->depth == q->depth;
}

/* The all-pairs loop, with the predicates the header promises. */
static int brute_pairs(soup* a, soup* b, double rot[3][3], const double trans[3], double band, ref_pair_list* out)
{
    memset(out, 0, sizeof *out);
    out->capacity = a->nt * b->nt;
    out->pairs = malloc((size_t)out->capacity * sizeof *out->pairs);
    double(*cb)[3][3] = malloc((size_t)b->nt * sizeof *cb);
    for (int j = 0; j < b->nt; j++)
        ref_mesh_triangle(b->v, b->t, j, rot, trans, cb[j]);
    for (int i = 0; i < a->nt; i++) {
        double ta[3][3];
        ref_mesh_triangle(a->v, a->t, i, NULL, NULL, ta);
        for (int j = 0; j < b->nt; j++) {
            double(*tb)[3] = cb[j];
            ref_mesh_pair p = {i, j, tt(ta, tb), 0, 0.0, 0.0};
            p.degenerate = ref_mesh_triangle_degenerate(a->v, a->t, i) | (ref_mesh_triangle_degenerate(b->v, b->t, j) << 1);
            if (p.intersect) {
                p.depth = ref_tri_tri_penetration(ta, tb);
            } else {
                if (!(band > 0))
                    continue;
                p.distance = ref_tri_tri_separation(ta, tb);
                if (!(p.distance <= band))
                    continue;
            }
            out->pairs[out->count++] = p;
        }
    }
    free(cb);
    return 0;
}

static int boxes_overlap(double ta[3][3], double tb[3][3], double pad)
{
    for (int k = 0; k < 3; k++) {
        double alo = fmin(ta[0][k], fmin(ta[1][k], ta[2][k])), ahi = fmax(ta[0][k], fmax(ta[1][k], ta[2][k]));
        double blo = fmin(tb[0][k], fmin(tb[1][k], tb[2][k])), bhi = fmax(tb[0][k], fmax(tb[1][k], tb[2][k]));
        if (alo > bhi + pad || blo > ahi + pad)
            return 0;
    }
    return 1;
}

/* Every pair whose boxes overlap within band is a candidate, and every
 * candidate's boxes overlap within band plus the slack. */
static int candidates_ok(soup* a, soup* b, double rot[3][3], const double trans[3], double band,
                         const ref_pair_list* c)
{
    int k = 0, ok = 1;
    for (int i = 0; i < a->nt; i++) {
        for (int j = 0; j < b->nt; j++) {
            double ta[3][3], tb[3][3];
            ref_mesh_triangle(a->v, a->t, i, NULL, NULL, ta);
            ref_mesh_triangle(b->v, b->t, j, rot, trans, tb);
            int listed = k < c->count && c->pairs[k].a == i && c->pairs[k].b == j;
            if (listed) {
                ok &= boxes_overlap(ta, tb, band + 1e-9) && c->pairs[k].intersect == -1;
                k++;
            } else {
                ok &= !boxes_overlap(ta, tb, band);
            }
        }
    }
    return ok && k == c->count;
}

static void test_mesh_pairs_vs_brute(void)
{
    ref_rng rng = {31};
    int degenerate_total = 0;
    for (int round = 0; round < 4; round++) {
        soup a = make_soup(&rng, 160, 0.1), b = make_soup(&rng, 120, 0.1);
        /* turned about the cube's center, and nudged */
        double rot[3][3], mid[3] = {0.5, 0.5, 0.5}, nudge[3] = {0.05, -0.02, 0.03}, zero[3] = {0, 0, 0};
        double trans[3], turned[3];
        random_rotation(&rng, rot);
        apply(rot, mid, zero, turned);
        for (int k = 0; k < 3; k++)
            trans[k] = mid[k] - turned[k] + nudge[k];
        if (round == 0)
            memcpy(b.v, a.v, (size_t)b.nv * sizeof *b.v); /* b's first triangles are a's */
        double band = round % 2 ? 0.02 : 0.0;
        double (*r)[3] = round == 0 ? NULL : rot;
        const double* tr = round == 0 ? NULL : trans;
        ref_pair_list got = {0}, want, cand = {0};
        CHECK(ref_mesh_pairs(a.v, a.t, a.nt, b.v, b.t, b.nt, r, tr, band, &got) == 0);
        brute_pairs(&a, &b, r, tr, band, &want);
        int same = got.count == want.count;
        for (int i = 0; same && i < got.count; i++)
            same = same_pair(&got.pairs[i], &want.pairs[i]);
        CHECK(same);
        int hits = 0, degenerate = 0;
        for (int i = 0; i < got.count; i++) {
            hits += got.pairs[i].intersect;
            degenerate += got.pairs[i].degenerate != 0;
        }
        printf("soups %d x %d, band %g: %d pairs, %d intersecting, %d with a degenerate triangle\n", a.nt, b.nt,
               band, got.count, hits, degenerate);
        CHECK(hits > 20);
        degenerate_total += degenerate;
        CHECK(ref_mesh_box_candidates(a.v, a.t, a.nt, b.v, b.t, b.nt, r, tr, band, &cand) == 0);
        CHECK(candidates_ok(&a, &b, r, tr, band, &cand));
        CHECK(cand.count >= got.count);
        ref_pair_list_free(&got);
        ref_pair_list_free(&want);
        ref_pair_list_free(&cand);
        soup_free(&a);
        soup_free(&b);
    }
    CHECK(degenerate_total > 5);
}

/* A flat 8 x 8 grid against itself: everything is coplanar and touching;
 * exactly the triangles sharing a vertex meet. */
static void test_mesh_pairs_grid(void)
{
    enum { N = 8 };
    float v[(N + 1) * (N + 1)][3];
    int t[2 * N * N][3], n = 0;
    for (int y = 0; y <= N; y++) {
        for (int x = 0; x <= N; x++) {
            v[y * (N + 1) + x][0] = (float)x;
            v[y * (N + 1) + x][1] = (float)y;
            v[y * (N + 1) + x][2] = 0.0f;
        }
    }
    for (int y = 0; y < N; y++) {
        for (int x = 0; x < N; x++) {
            int i = y * (N + 1) + x;
            int q[4] = {i, i + 1, i + N + 2, i + N + 1};
            memcpy(t[n++], (int[3]){q[0], q[1], q[2]}, sizeof t[0]);
            memcpy(t[n++], (int[3]){q[0], q[2], q[3]}, sizeof t[0]);
        }
    }
    ref_pair_list got = {0};
    CHECK(ref_mesh_pairs(v, t, n, v, t, n, NULL, NULL, 0.0, &got) == 0);
    int bad = 0, k = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            int share = 0;
            for (int p = 0; p < 3; p++)
                for (int q = 0; q < 3; q++)
                    share |= t[i][p] == t[j][q];
            int listed = k < got.count && got.pairs[k].a == i && got.pairs[k].b == j;
            bad += share != listed;
            if (listed)
                bad += got.pairs[k++].depth != 0.0;
        }
    }
    CHECK(bad == 0 && k == got.count);
    ref_pair_list_free(&got);
    /* bad arguments */
    ref_pair_list none;
    CHECK(ref_mesh_pairs(v, t, -1, v, t, n, NULL, NULL, 0.0, &none) == -1 && none.count == 0 && !none.pairs);
    CHECK(ref_mesh_pairs(v, t, n, v, t, n, NULL, NULL, -1.0, &none) == -1);
    CHECK(ref_mesh_pairs(NULL, NULL, 0, v, t, n, NULL, NULL, 0.0, &none) == 0 && none.count == 0);
    ref_pair_list_free(&none);
}

/* ---- rays -------------------------------------------------------------------------------- */

static void test_ray_analytic(void)
{
    double tri[3][3], t = -1;
    tri9(tri, 0, 0, 0, 1, 0, 0, 0, 1, 0);
    double o[3] = {0.25, 0.25, 1}, d[3] = {0, 0, -2};
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.5);
    NEAR(ref_ray_triangle_margin(o, d, tri), 0.25, 1e-15); /* the two legs are nearest */
    set3(o, 0.25, 0.25, -1), set3(d, 0, 0, 2); /* the back side */
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.5);
    set3(o, 0.6, 0.6, 1), set3(d, 0, 0, -2); /* beside the hypotenuse */
    CHECK(!ref_ray_triangle(o, d, tri, &t));
    NEAR(ref_ray_triangle_margin(o, d, tri), -0.2 / sqrt(2.0), 1e-15);
    set3(o, 0.5, 0, 1); /* on an edge, on a vertex */
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.5 && ref_ray_triangle_margin(o, d, tri) == 0.0);
    set3(o, 0, 0, 1);
    CHECK(ref_ray_triangle(o, d, tri, &t) && ref_ray_triangle_margin(o, d, tri) == 0.0);
    set3(o, 0.25, 0.25, 1), set3(d, 0, 0, -0.5); /* stopping short, then just reaching */
    CHECK(!ref_ray_triangle(o, d, tri, &t));
    NEAR(ref_ray_triangle_margin(o, d, tri), -0.5, 1e-15);
    set3(d, 0, 0, -1);
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 1.0 && ref_ray_triangle_margin(o, d, tri) == 0.0);
    set3(o, 0.25, 0.25, 0), set3(d, 0.3, -0.2, 1); /* starting on it */
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.0 && ref_ray_triangle_margin(o, d, tri) == 0.0);
    set3(o, -1, 0.25, 0), set3(d, 2, 0, 0); /* in the plane, through it: entry at x = 0 */
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.5 && ref_ray_triangle_margin(o, d, tri) == 0.0);
    set3(o, -1, 2, 0); /* in the plane, beside it */
    CHECK(!ref_ray_triangle(o, d, tri, &t));
    NEAR(ref_ray_triangle_margin(o, d, tri), -1.0, 1e-15);
    set3(o, 0.25, 0.25, 0), set3(d, 0, 0, 0); /* a point on it, a point off it */
    CHECK(ref_ray_triangle(o, d, tri, &t) && t == 0.0);
    set3(o, 0.25, 0.25, 0.5);
    CHECK(!ref_ray_triangle(o, d, tri, &t));
    NEAR(ref_ray_triangle_margin(o, d, tri), -0.5, 1e-15);
    /* grazing at a shallow angle: tiny margin although the hit point is 0.25
     * inside, since tilting the triangle by 1e-9 would move it far */
    set3(o, -1e6 + 0.25, 0.25, 1e-3), set3(d, 2e6, 0, -2e-3);
    CHECK(ref_ray_triangle(o, d, tri, &t) && fabs(t - 0.5) < 1e-12);
    double m = ref_ray_triangle_margin(o, d, tri);
    CHECK(m > 0 && m < 1e-9);
    /* zero area never hits */
    tri9(tri, 0, 0, 0, 1, 0, 0, 2, 0, 0);
    set3(o, 0.5, 0, 1), set3(d, 0, 0, -2);
    CHECK(!ref_ray_triangle(o, d, tri, &t) && ref_ray_triangle_margin(o, d, tri) == -INFINITY);
}

/* A unit square of two triangles sharing the diagonal; a ray down the
 * diagonal hits both at once, the lower index is reported, and the hit is
 * flagged as grazing. */
static void test_ray_mesh_square(void)
{
    float v[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {7, 7, 7}};
    int t[3][3] = {{0, 1, 2}, {0, 2, 3}, {4, 4, 0}};
    ref_ray_hit h;
    ref_ray_mesh(v, t, 3, (double[3]){0.5, 0.5, 1}, (double[3]){0, 0, -4}, &h);
    CHECK(h.hit && h.triangle == 0 && h.t == 0.25 && h.count == 2 && h.margin == 0.0 && h.grazing == 0.0);
    ref_ray_mesh(v, t, 3, (double[3]){0.7, 0.2, 1}, (double[3]){0, 0, -4}, &h);
    CHECK(h.hit && h.triangle == 0 && h.count == 1);
    NEAR(h.margin, 0.2, 1e-15);
    NEAR(h.grazing, 0.2, 1e-15);
    ref_ray_mesh(v, t, 3, (double[3]){2, 2, 1}, (double[3]){0, 0, -4}, &h);
    CHECK(!h.hit && h.triangle == -1 && h.count == 0 && h.t == 0.0);
    NEAR(h.grazing, sqrt(2.0), 1e-15); /* the corner (1, 1) is nearest */
    /* posed: the square lifted by 1 */
    double rot[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, lift[3] = {0, 0, 1};
    ref_ray_mesh_posed(v, t, 3, rot, lift, (double[3]){0.7, 0.2, 2}, (double[3]){0, 0, -4}, &h);
    CHECK(h.hit && h.t == 0.25);
    ref_ray_mesh(v, t, 0, (double[3]){0.7, 0.2, 2}, (double[3]){0, 0, -4}, &h);
    CHECK(!h.hit && h.grazing == INFINITY);
}

/* Random segments against random triangles: a hit is a zero segment
 * distance, its parameter is where the segment first touches, and the
 * margin's sign agrees. Moving the corners by up to half a clear margin
 * does not change the answer. */
static void test_ray_random(void)
{
    ref_rng rng = {41};
    int bad = 0, band = 0, hits = 0, sign_bad = 0, stable_bad = 0, stable_n = 0;
    for (int trial = 0; trial < 20000; trial++) {
        double tri[3][3], o[3], d[3], q[3], t = -1;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++)
                tri[i][k] = ref_rng_uniform(&rng, -1, 1);
        /* aimed at a point of the triangle's plane near the triangle, from
         * far enough or not quite */
        double u = ref_rng_uniform(&rng, -0.2, 1.2), v = ref_rng_uniform(&rng, -0.2, 1.2) * (1.0 - u);
        double reach = ref_rng_uniform(&rng, 0.5, 2.0);
        for (int k = 0; k < 3; k++) {
            double aim = tri[0][k] + u * (tri[1][k] - tri[0][k]) + v * (tri[2][k] - tri[0][k]);
            o[k] = ref_rng_uniform(&rng, -2, 2);
            d[k] = (aim - o[k]) * reach;
            q[k] = o[k] + d[k];
        }
        int hit = ref_ray_triangle(o, d, tri, &t);
        double dist = ref_segment_triangle(o, q, tri[0], tri[1], tri[2], NULL, NULL);
        double m = ref_ray_triangle_margin(o, d, tri);
        sign_bad += (m > 1e-12 && !hit) || (m < -1e-12 && hit);
        if (hit) {
            hits++;
            double p[3] = {o[0] + t * d[0], o[1] + t * d[1], o[2] + t * d[2]};
            double before[3] = {o[0] + 0.999 * t * d[0], o[1] + 0.999 * t * d[1], o[2] + 0.999 * t * d[2]};
            bad += !(dist <= 1e-12) || !(t >= 0 && t <= 1);
            bad += !(ref_point_triangle(p, tri[0], tri[1], tri[2], NULL) <= 1e-12);
            bad += t > 0 && fabs(m) > 1e-9 && ref_segment_triangle(o, before, tri[0], tri[1], tri[2], NULL, NULL) == 0;
        } else {
            band += dist <= 1e-12;
            bad += !(dist > 0);
        }
        if (fabs(m) > 1e-6) {
            double moved[3][3];
            for (int i = 0; i < 3; i++)
                for (int k = 0; k < 3; k++)
                    moved[i][k] = tri[i][k] + ref_rng_uniform(&rng, -0.28, 0.28) * fabs(m);
            stable_n++;
            stable_bad += ref_ray_triangle(o, d, moved, NULL) != hit;
        }
    }
    CHECK(bad == 0);
    CHECK(band == 0);
    CHECK(sign_bad == 0);
    printf("random rays: %d of 20000 hit; %d of %d perturbed by half the margin flipped\n", hits, stable_bad,
           stable_n);
    CHECK(hits > 6000);
    CHECK(stable_bad == 0);
}

static void test_ray_mesh_vs_loop(void)
{
    ref_rng rng = {42};
    soup s = make_soup(&rng, 300, 0.1);
    int bad = 0, hits = 0;
    for (int trial = 0; trial < 200; trial++) {
        double o[3], d[3];
        for (int k = 0; k < 3; k++) {
            o[k] = ref_rng_uniform(&rng, -0.5, 1.5);
            d[k] = ref_rng_uniform(&rng, 0, 1) - o[k];
        }
        ref_ray_hit h;
        ref_ray_mesh(s.v, s.t, s.nt, o, d, &h);
        int count = 0, best = -1;
        double best_t = 0, grazing = INFINITY;
        for (int i = 0; i < s.nt; i++) {
            double c[3][3], t;
            ref_mesh_triangle(s.v, s.t, i, NULL, NULL, c);
            int hit = ref_ray_triangle(o, d, c, &t);
            if (hit) {
                count++;
                if (best < 0 || t < best_t) {
                    best = i;
                    best_t = t;
                }
            }
            double m = ref_ray_triangle_margin(o, d, c), q[3] = {o[0] + d[0], o[1] + d[1], o[2] + d[2]};
            double dist = ref_segment_triangle(o, q, c[0], c[1], c[2], NULL, NULL);
            if (m != -INFINITY)
                grazing = fmin(grazing, hit ? fabs(m) : fmax(fabs(m), dist));
        }
        hits += h.hit;
        bad += h.hit != (best >= 0) || h.triangle != best || h.t != best_t || h.count != count;
        bad += fabs(h.grazing - grazing) > 1e-15 * grazing;
    }
    CHECK(bad == 0);
    CHECK(hits > 50);
    soup_free(&s);
}

/* ---- boxes ------------------------------------------------------------------------------ */

static void test_obb_analytic(void)
{
    double c[3] = {0, 0, 0}, ax[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, h[3] = {1, 1, 1}, tri[3][3];
    tri9(tri, 0.5, 0.5, 0.5, 3, 0, 0, 0, 3, 0.2); /* a corner inside */
    CHECK(ref_obb_triangle_intersect(c, ax, h, tri) && ref_obb_triangle_distance(c, ax, h, tri) == 0.0);
    tri9(tri, -3, -3, 0, 3, -3, 0, 0, 4, 0); /* straddling, no corner inside */
    CHECK(ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_margin(c, ax, h, tri), -1.0, 1e-15); /* lift by 1 along z: touching */
    tri9(tri, -3, -3, 1, 3, -3, 1, 0, 4, 1); /* lying on the top face */
    CHECK(ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_margin(c, ax, h, tri), 0.0, 1e-15);
    tri9(tri, -3, -3, 1.5, 3, -3, 1.5, 0, 4, 1.5); /* above it */
    CHECK(!ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_margin(c, ax, h, tri), 0.5, 1e-15);
    NEAR(ref_obb_triangle_distance(c, ax, h, tri), 0.5, 1e-15);
    /* separated only by the cross product of the box's z edge and the
     * triangle's edge (2.5,-0.3,0)-(-0.3,2.5,0): gap 0.2 / sqrt 2 to the box
     * edge x = y = 1 */
    tri9(tri, 2.5, -0.3, 0, -0.3, 2.5, 0, 3, 3, 4);
    CHECK(!ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_margin(c, ax, h, tri), 0.2 / sqrt(2.0), 1e-15);
    NEAR(ref_obb_triangle_distance(c, ax, h, tri), 0.2 / sqrt(2.0), 1e-15);
    tri9(tri, 2.1, -0.3, 0, -0.3, 2.1, 0, 3, 3, 4); /* pushed in past the edge */
    CHECK(ref_obb_triangle_intersect(c, ax, h, tri));
    /* degenerate triangles: a segment skew to the box edge, then a point */
    tri9(tri, 2.5, -0.25, 0, -0.25, 2.5, 0, 1.125, 1.125, 0);
    CHECK(ref_tri_degenerate(tri) && !ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_margin(c, ax, h, tri), 0.25 / sqrt(2.0), 1e-15);
    NEAR(ref_obb_triangle_distance(c, ax, h, tri), 0.25 / sqrt(2.0), 1e-15);
    tri9(tri, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    CHECK(ref_obb_triangle_intersect(c, ax, h, tri));
    tri9(tri, 1, 1, 1.25, 1, 1, 1.25, 1, 1, 1.25);
    CHECK(!ref_obb_triangle_intersect(c, ax, h, tri));
    NEAR(ref_obb_triangle_distance(c, ax, h, tri), 0.25, 1e-15);
    /* the whole picture turned and moved: same answers up to rounding */
    ref_rng rng = {51};
    double rot[3][3], trans[3] = {3, -2, 5}, c2[3], ax2[3][3], tri2[3][3], zero[3] = {0, 0, 0};
    random_rotation(&rng, rot);
    tri9(tri, 2.5, -0.3, 0, -0.3, 2.5, 0, 3, 3, 4);
    apply(rot, c, trans, c2);
    for (int k = 0; k < 3; k++) {
        apply(rot, ax[k], zero, ax2[k]);
        apply(rot, tri[k], trans, tri2[k]);
    }
    CHECK(!ref_obb_triangle_intersect(c2, ax2, h, tri2));
    NEAR(ref_obb_triangle_margin(c2, ax2, h, tri2), 0.2 / sqrt(2.0), 1e-14);
    NEAR(ref_obb_triangle_distance(c2, ax2, h, tri2), 0.2 / sqrt(2.0), 1e-14);
}

/* Random oriented boxes against random triangles, checked against qhull
 * polytope distances: intersect iff distance 0, the margin is a lower bound
 * on the distance, and the box distance equals the polytope one. */
static void test_obb_random(void)
{
    ref_rng rng = {52};
    int bad = 0, band = 0, hits = 0;
    for (int box = 0; box < 100; box++) {
        double c[3], ax[3][3], h[3], corners[8][3];
        random_rotation(&rng, ax);
        for (int k = 0; k < 3; k++) {
            c[k] = ref_rng_uniform(&rng, -0.5, 0.5);
            h[k] = ref_rng_uniform(&rng, 0.05, 0.8);
        }
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++)
                corners[i][k] = c[k] + (i & 1 ? h[0] : -h[0]) * ax[0][k] + (i & 2 ? h[1] : -h[1]) * ax[1][k] +
                                (i & 4 ? h[2] : -h[2]) * ax[2][k];
        ref_polytope pb;
        ref_polytope_build(&pb, (const double (*)[3])corners, 8);
        for (int trial = 0; trial < 20; trial++) {
            double tri[3][3];
            for (int i = 0; i < 3; i++)
                for (int k = 0; k < 3; k++)
                    tri[i][k] = ref_rng_uniform(&rng, -1.5, 1.5);
            if (trial % 7 == 0)
                memcpy(tri[2], tri[1], sizeof tri[1]); /* a segment */
            ref_polytope pt = {.nverts = 3, .verts = tri, .ntris = 1, .tris = (int[1][3]){{0, 1, 2}}};
            double want = ref_polytope_distance(&pb, &pt, NULL, NULL);
            int hit = ref_obb_triangle_intersect(c, ax, h, tri);
            double m = ref_obb_triangle_margin(c, ax, h, tri);
            double d = ref_obb_triangle_distance(c, ax, h, tri);
            hits += hit;
            if (want > 1e-12)
                bad += hit || !(m <= want + 1e-12) || fabs(d - want) > 1e-12;
            else if (!hit)
                band++;
            else
                bad += d != 0.0 || !(m <= 0.0);
        }
        ref_polytope_free(&pb);
    }
    CHECK(bad == 0);
    CHECK(band == 0);
    CHECK(hits > 300 && hits < 1800);
}

/* ---- timing (on request) --------------------------------------------------------------- */

static void time_bunny(void)
{
    mesh_data m;
    if (mesh_load_named("meshes/bunny00.off", &m) != MESH_OK) {
        CHECK(!"bunny00.off loads");
        return;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m.vertex_count; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], m.vertices[i][k]);
            hi[k] = fmax(hi[k], m.vertices[i][k]);
        }
    /* turned by 0.3 rad about the y axis through the box center */
    double cs = cos(0.3), sn = sin(0.3), rot[3][3] = {{cs, 0, sn}, {0, 1, 0}, {-sn, 0, cs}}, ctr[3], trans[3];
    for (int k = 0; k < 3; k++)
        ctr[k] = 0.5 * (lo[k] + hi[k]);
    for (int k = 0; k < 3; k++)
        trans[k] = ctr[k] - (rot[k][0] * ctr[0] + rot[k][1] * ctr[1] + rot[k][2] * ctr[2]);
    double size = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    double bands[3] = {0.0, 1e-4 * size, 1e-2 * size};
    for (int i = 0; i < 3; i++) {
        ref_pair_list pairs = {0}, cand = {0};
        double t0 = now_ms();
        int rc = ref_mesh_pairs(m.vertices, m.triangles, m.triangle_count, m.vertices, m.triangles,
                                m.triangle_count, rot, trans, bands[i], &pairs);
        double t1 = now_ms();
        rc |= ref_mesh_box_candidates(m.vertices, m.triangles, m.triangle_count, m.vertices, m.triangles,
                                      m.triangle_count, rot, trans, bands[i], &cand);
        double t2 = now_ms();
        int hits = 0;
        for (int p = 0; p < pairs.count; p++)
            hits += pairs.pairs[p].intersect;
        printf("bunny00 x bunny00 (%d triangles), 0.3 rad, band %.3g: %d pairs (%d intersecting) in %.0f ms; "
               "%d box candidates in %.0f ms\n",
               m.triangle_count, bands[i], pairs.count, hits, t1 - t0, cand.count, t2 - t1);
        CHECK(rc == 0 && hits > 0);
        ref_pair_list_free(&pairs);
        ref_pair_list_free(&cand);
    }
    ref_pair_list self = {0};
    double t0 = now_ms();
    CHECK(ref_mesh_pairs(m.vertices, m.triangles, m.triangle_count, m.vertices, m.triangles, m.triangle_count,
                         NULL, NULL, 0.0, &self) == 0);
    printf("bunny00 against itself, identity pose: %d intersecting pairs in %.0f ms\n", self.count, now_ms() - t0);
    ref_pair_list_free(&self);
    mesh_free(&m);
}

int main(int argc, char** argv)
{
    double t0 = now_ms();
    test_orient2d_ulp_grid();
    test_orient3d_near_coplanar();
    test_orient3d_random();
    test_tri_tri_analytic();
    test_tri_tri_coplanar();
    test_tri_tri_degenerate();
    test_tri_tri_grid();
    test_tri_tri_coplanar_random();
    test_tri_tri_random();
    test_mesh_pairs_vs_brute();
    test_mesh_pairs_grid();
    test_ray_analytic();
    test_ray_mesh_square();
    test_ray_random();
    test_ray_mesh_vs_loop();
    test_obb_analytic();
    test_obb_random();
    printf("checks took %.0f ms\n", now_ms() - t0);
    if (argc > 1 && strcmp(argv[1], "--timing") == 0)
        time_bunny();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
