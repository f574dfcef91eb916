// GJK distance and intersection: analytic answers for every primitive pair
// that has one, invariants (symmetry, witnesses on the shapes, distance >= 0,
// intersect agreeing with distance), randomized pairs of hulls against the
// double-precision brute-force reference, coherence, and bad input.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carom/carom.h"
#include "core/internal.h"
#include "mesh_io.h"
#include "reference.h"
#include "test_poses.h"

static void assert_near(float got, float want, float tol) {
    if (!(fabsf(got - want) <= tol)) fail_msg("got %.9g, want %.9g (tol %.3g)", (double)got, (double)want, (double)tol);
}

static void assert_vec_near(vec3s a, vec3s b, float tol) {
    if (!(fabsf(a.x - b.x) <= tol && fabsf(a.y - b.y) <= tol && fabsf(a.z - b.z) <= tol)) {
        fail_msg("(%g %g %g) != (%g %g %g)", (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y,
                 (double)b.z);
    }
}

// Distance, with the invariants every answer must satisfy checked on the way:
// swapping A and B gives the same distance (the closest points need not be
// the same pair: parallel faces have many), and intersect agrees with
// distance == 0.
static carom_distance_result distance(const carom_shape* a, carom_xform xa, const carom_shape* b, carom_xform xb) {
    carom_distance_result r = carom_gjk_distance(a, xa, b, xb, NULL);
    assert_int_equal(r.state, CAROM_DONE);
    assert_true(r.distance >= 0.0f);
    carom_distance_result s = carom_gjk_distance(b, xb, a, xa, NULL);
    assert_int_equal(s.state, CAROM_DONE);
    float scale = 1e-5f * (1.0f + r.distance + sqrtf(v3_len2(v3_sub(xa.p, xb.p))));
    assert_near(s.distance, r.distance, scale);
    assert_true(r.overlap == s.overlap);
    if (!r.overlap) {
        assert_near(sqrtf(v3_len2(v3_sub(s.point_b, s.point_a))), r.distance, scale);
        // The points are distance apart along the normal.
        assert_near(sqrtf(v3_len2(v3_sub(r.point_b, r.point_a))), r.distance, scale);
        assert_near(v3_dot(v3_sub(r.point_b, r.point_a), r.normal), r.distance, scale);
    }
    carom_intersect_result x = carom_gjk_intersect(a, xa, b, xb, NULL);
    assert_int_equal(x.state, CAROM_DONE);
    if (r.distance > 1e-4f) assert_false(x.overlap);
    if (r.overlap) assert_true(x.overlap);
    return r;
}

// --- analytic answers -----------------------------------------------------------

static void test_sphere_sphere(void** state) {
    (void)state;
    carom_shape a = carom_sphere(1.0f), b = carom_sphere(0.5f);
    carom_distance_result r = distance(&a, at(0, 0, 0), &b, at(3, 4, 0));
    assert_near(r.distance, 3.5f, 1e-5f);
    assert_vec_near(r.point_a, v3(0.6f, 0.8f, 0), 1e-5f);
    assert_vec_near(r.point_b, v3(2.7f, 3.6f, 0), 1e-5f);
    assert_vec_near(r.normal, v3(0.6f, 0.8f, 0), 1e-5f);
    assert_int_equal(r.witness_a.count, 1);

    // Touching exactly and overlapping.
    r = distance(&a, at(0, 0, 0), &b, at(1.5f, 0, 0));
    assert_true(r.overlap);
    assert_near(r.distance, 0.0f, 0.0f);
    r = distance(&a, at(0, 0, 0), &b, at(1.2f, 0, 0));
    assert_true(r.overlap);
    // Concentric: the cores coincide.
    r = distance(&a, at(1, 1, 1), &b, at(1, 1, 1));
    assert_true(r.overlap);
    assert_vec_near(r.point_a, v3(1, 1, 1), 1e-6f);
}

// Regression: overlapping shapes whose cores were within the sum of the
// radii (but not touching) got the cores' midpoint as their common point,
// which lies outside the shape of smaller radius: a point 0.5 inside a
// unit sphere was given a "common point" 0.25 off itself. The common point
// now divides the stretch between the cores by the radii.
static void test_overlap_point_in_both(void** state) {
    (void)state;
    carom_shape point = carom_point(v3(0, 0, 0)), ball = carom_sphere(1.0f);
    carom_distance_result r = distance(&point, at(0, 0, 0), &ball, at(0.5f, 0, 0));
    assert_true(r.overlap);
    assert_vec_near(r.point_a, v3(0, 0, 0), 1e-6f);
    assert_vec_near(r.point_b, r.point_a, 0.0f);
    r = distance(&ball, at(0.5f, 0, 0), &point, at(0, 0, 0));
    assert_vec_near(r.point_a, v3(0, 0, 0), 1e-6f);
    // A segment inside a capsule of radius 2 whose axis is 1.5 away: the
    // common point is on the segment, within 2 of the axis.
    carom_shape segment = carom_segment(v3(-1, 0, 0), v3(1, 0, 0));
    carom_shape capsule = carom_capsule(v3(-1, 0, 0), v3(1, 0, 0), 2.0f);
    r = distance(&segment, at(0, 0, 0), &capsule, at(0, 1.5f, 0));
    assert_true(r.overlap);
    assert_near(r.point_a.y, 0.0f, 1e-6f);
    assert_near(r.point_a.z, 0.0f, 1e-6f);
    assert_true(fabsf(r.point_a.x) <= 1.0f + 1e-6f);
    // Two spheres of different radii overlapping: within both.
    carom_shape small = carom_sphere(0.25f);
    r = distance(&ball, at(0, 0, 0), &small, at(1.1f, 0, 0));
    assert_true(r.overlap);
    assert_true(sqrtf(v3_len2(r.point_a)) <= 1.0f + 1e-6f);
    assert_true(sqrtf(v3_len2(v3_sub(r.point_a, v3(1.1f, 0, 0)))) <= 0.25f + 1e-6f);
}

// Regression: GJK stopped as converged when a support point came back that
// its simplex already held, though its bounds were still far apart. On a
// thin simplex (a needle hull, 1.8 long and 0.01 thick) rounding makes that
// happen early: against a point 8.8e-8 from the needle it answered 6.96e-4
// (7.1e-5 with the shapes swapped). A repeated support now goes through the
// same remedies as a step that makes no progress. Found by fuzzing; the
// double answer, 8.84e-8, is certified by a support-plane lower bound.
static void test_needle_repeated_support(void** state) {
    (void)state;
    static const vec3s needle[9] = {
        {{0x1.3d448ap-1f, -0x1.039f5p-12f, 0x1.70c446p-19f}},
        {{0x1.77b028p-4f, -0x1.e3f0aap-9f, 0x1.3c3d82p-19f}},
        {{-0x1.35425ep-1f, -0x1.57286ap-9f, -0x1.dd6d2cp-19f}},
        {{-0x1.d40b96p-2f, 0x1.15327ep-9f, 0x1.0388fap-15f}},
        {{-0x1.25b5ccp-2f, 0x1.069398p-17f, -0x1.38ae8cp-8f}},
        {{0x1.d68f6ap-1f, -0x1.2417f6p-14f, -0x1.384fbap-8f}},
        {{0x1.91b32ap-1f, 0x1.0a3eeep-9f, 0x1.1a094cp-15f}},
        {{-0x1.aa51bap-1f, 0x1.9b16eap-13f, -0x1.543466p-20f}},
        {{-0x1.c595d2p-1f, 0x1.eb0cb2p-17f, 0x1.cc7552p-8f}},
    };
    carom_hull hull;
    assert_int_equal(carom_hull_build(&hull, needle, 9), CAROM_OK);
    carom_shape a = carom_hull_shape(&hull);
    carom_shape b = carom_point(v3(-0x1.519ad4p-3f, -0x1.da60fap-3f, -0x1.e2c37ap-4f));
    carom_xform xa = {v3(0x1.637b7ap+0f, -0x1.062ae4p+1f, -0x1.1e2cc2p+0f),
                      {{-0x1.854e8ap-3f, -0x1.a0f136p-1f, 0x1.fc2bfep-4f, -0x1.117cfp-1f}}};
    carom_xform xb = {v3(0x1.40791ep+0f, -0x1.065c92p+1f, -0x1.55b494p-1f),
                      {{-0x1.413634p-2f, 0x1.c8dcb8p-1f, 0x1.022b9p-4f, -0x1.46198ep-2f}}};
    // The pair's scale is about 1.7: the distance within 1e-5 of it.
    const float exact = 8.8357e-8f, tol = 1.7e-5f;
    carom_distance_result r = carom_gjk_distance(&a, xa, &b, xb, NULL);
    assert_int_equal(r.state, CAROM_DONE);
    assert_near(r.distance, exact, tol);
    r = carom_gjk_distance(&b, xb, &a, xa, NULL);
    assert_near(r.distance, exact, tol);
    carom_hull_destroy(&hull);
}

static void test_sphere_box(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3)), ball = carom_sphere(0.5f);
    // Face region.
    carom_distance_result r = distance(&box, at(0, 0, 0), &ball, at(0, 5, 0.5f));
    assert_near(r.distance, 2.5f, 1e-5f);
    assert_vec_near(r.point_a, v3(0, 2, 0.5f), 1e-5f);
    // Edge region: nearest is the edge x = 1, y = 2.
    r = distance(&box, at(0, 0, 0), &ball, at(4, 6, 1));
    assert_near(r.distance, 5.0f - 0.5f, 1e-5f);
    assert_vec_near(r.point_a, v3(1, 2, 1), 1e-5f);
    assert_int_equal(r.witness_a.count, 2);
    // Corner region.
    r = distance(&box, at(0, 0, 0), &ball, at(2, 3, 4));
    assert_near(r.distance, sqrtf(3.0f) - 0.5f, 1e-5f);
    assert_vec_near(r.point_a, v3(1, 2, 3), 1e-5f);
    assert_int_equal(r.witness_a.count, 1);
    assert_int_equal(r.witness_a.index[0], 7);  // the +x+y+z corner
    // Rotated box: 45 degrees about z, corner pointing along x at sqrt(2).
    carom_shape cube = carom_box(v3(1, 1, 1));
    r = distance(&cube, carom_xform_make(v3(0, 0, 0), v3(0, 0, 1), (float)M_PI_4), &ball, at(3, 0, 0));
    assert_near(r.distance, 3.0f - sqrtf(2.0f) - 0.5f, 2e-5f);
}

static void test_box_box_on_axes(void** state) {
    (void)state;
    carom_shape a = carom_box(v3(0.5f, 0.5f, 0.5f)), b = carom_box(v3(1, 0.25f, 0.25f));
    // Face to face along x, offset in y and z so the faces partly overlap.
    carom_distance_result r = distance(&a, at(0, 0, 0), &b, at(2.0f, 0.3f, -0.2f));
    assert_near(r.distance, 0.5f, 1e-5f);
    assert_near(r.point_a.x, 0.5f, 1e-5f);
    assert_near(r.point_b.x, 1.0f, 1e-5f);
    assert_vec_near(r.normal, v3(1, 0, 0), 1e-5f);
    // Edge to edge: B's x range [1.5, 3.5] and y range [1.5, 2.0] leave a gap
    // of 1 on both axes between parallel edges.
    r = distance(&a, at(0, 0, 0), &b, at(2.5f, 1.75f, 0));
    assert_near(r.distance, sqrtf(2.0f), 1e-5f);
    assert_vec_near(r.point_a, v3(0.5f, 0.5f, r.point_a.z), 1e-5f);
    assert_int_equal(r.witness_a.count, 2);
    // Exactly touching faces, and deep overlap.
    r = distance(&a, at(0, 0, 0), &b, at(1.5f, 0, 0));
    assert_true(r.overlap);
    r = distance(&a, at(0, 0, 0), &b, at(0.1f, 0.1f, 0));
    assert_true(r.overlap);
    // Nearly parallel faces: B turned by 1e-4 rad about z, the gap 1e-3.
    carom_xform xb = carom_xform_make(v3(1.0f + 0.5f + 1e-3f + 0.25f * 1e-4f, 0, 0), v3(0, 0, 1), 1e-4f);
    r = distance(&a, at(0, 0, 0), &b, xb);
    assert_near(r.distance, 1e-3f, 2e-6f);
    assert_vec_near(r.normal, v3(1, 0, 0), 1e-3f);
}

static void test_capsule_capsule(void** state) {
    (void)state;
    carom_shape a = carom_capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.25f);
    carom_shape b = carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.5f);
    // Crossing at right angles, 2 apart along y.
    carom_distance_result r = distance(&a, at(0, 0, 0), &b, at(0.3f, 2, 0.2f));
    assert_near(r.distance, 2.0f - 0.75f, 1e-5f);
    assert_vec_near(r.point_a, v3(0.3f, 0.25f, 0), 1e-5f);
    // Parallel capsules: segment distance is the offset.
    carom_shape c = carom_capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.5f);
    r = distance(&a, at(0, 0, 0), &c, at(0.5f, 0, 3));
    assert_near(r.distance, 3.0f - 0.75f, 1e-5f);
    // End to end along the axis.
    r = distance(&a, at(0, 0, 0), &c, at(4, 0, 0));
    assert_near(r.distance, 2.0f - 0.75f, 1e-5f);
    // Skew segments within the radii: overlap.
    r = distance(&a, at(0, 0, 0), &b, at(0, 0.7f, 0));
    assert_true(r.overlap);
}

static void test_point_triangle_regions(void** state) {
    (void)state;
    carom_shape tri = carom_triangle(v3(0, 0, 0), v3(2, 0, 0), v3(0, 2, 0));
    carom_shape pt = carom_point(v3(0, 0, 0));
    struct {
        vec3s p, closest;
        int features;
    } cases[] = {
        {v3(0.5f, 0.5f, 3), v3(0.5f, 0.5f, 0), 3},   // face
        {v3(-1, -1, 1), v3(0, 0, 0), 1},             // vertex a
        {v3(3, -1, -1), v3(2, 0, 0), 1},             // vertex b
        {v3(-1, 3, 0), v3(0, 2, 0), 1},              // vertex c
        {v3(1, -2, 0), v3(1, 0, 0), 2},              // edge ab
        {v3(-2, 1, 0.5f), v3(0, 1, 0), 2},           // edge ac
        {v3(2, 2, 0), v3(1, 1, 0), 2},               // edge bc
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        carom_distance_result r = distance(&tri, at(0, 0, 0), &pt, at(cases[i].p.x, cases[i].p.y, cases[i].p.z));
        assert_near(r.distance, sqrtf(v3_len2(v3_sub(cases[i].p, cases[i].closest))), 1e-5f);
        assert_vec_near(r.point_a, cases[i].closest, 1e-5f);
        assert_int_equal(r.witness_a.count, cases[i].features);
    }
    // A point in the triangle's plane, inside it: touching.
    carom_distance_result r = distance(&tri, at(0, 0, 0), &pt, at(0.5f, 0.5f, 0));
    assert_true(r.overlap);
}

static void test_point_plane(void** state) {
    (void)state;
    // A point against the top face of a wide slab, at several heights and
    // positions: the distance is the height above the plane z = 0.
    carom_shape slab = carom_box(v3(100, 100, 1));
    carom_shape pt = carom_point(v3(0, 0, 0));
    for (int i = 0; i < 20; ++i) {
        float h = 0.01f * (float)(i * i) + 1e-3f, x = (float)(i * 7 % 90) - 45.0f;
        carom_distance_result r = distance(&slab, at(0, 0, -1), &pt, at(x, 0.5f * x, h));
        assert_near(r.distance, h, 1e-5f * (1.0f + h));
        assert_vec_near(r.normal, v3(0, 0, 1), 1e-5f);
    }
}

static void test_cylinder_and_cone(void** state) {
    (void)state;
    carom_shape cyl = carom_cylinder(1.0f, 0.5f), pt = carom_point(v3(0, 0, 0));
    assert_near(distance(&cyl, at(0, 0, 0), &pt, at(0.1f, 0.2f, 3)).distance, 2.0f, 1e-5f);  // above the cap
    assert_near(distance(&cyl, at(0, 0, 0), &pt, at(3, 4, 0.5f)).distance, 4.5f, 1e-5f);  // beside the wall
    assert_near(distance(&cyl, at(0, 0, 0), &pt, at(0, 3.5f, 5)).distance, 5.0f, 1e-5f);  // off the rim
    // Cone apex (0,0,1), base radius 1 at z = -1; slant normal (2,0,1)/sqrt5.
    carom_shape cone = carom_cone(1.0f, 1.0f);
    assert_near(distance(&cone, at(0, 0, 0), &pt, at(0, 0, 3)).distance, 2.0f, 1e-5f);
    assert_near(distance(&cone, at(0, 0, 0), &pt, at(0, 0, -4)).distance, 3.0f, 1e-5f);
    // A point out along the slant's normal from its midpoint (0.5, 0, 0).
    vec3s n = v3_scale(v3(2, 0, 1), 1.0f / sqrtf(5.0f));
    vec3s p = v3_mad(v3(0.5f, 0, 0), n, 0.7f);
    assert_near(distance(&cone, at(0, 0, 0), &pt, at(p.x, p.y, p.z)).distance, 0.7f, 1e-5f);
}

static int sphere_callback(const void* user, vec3s d, vec3s* out) {
    float r = *(const float*)user;
    *out = v3_scale(d, r / sqrtf(v3_len2(d)));
    return -1;
}

static void test_combinators(void** state) {
    (void)state;
    carom_shape pt = carom_point(v3(0, 0, 0));
    // A unit box scaled by diag(2, 1, 1) equals the box of half extents (2, 1, 1).
    carom_shape unit = carom_box(v3(1, 1, 1));
    mat3s m = glms_mat3_identity();
    m.m00 = 2.0f;
    carom_shape stretched = carom_affine(&unit, m, v3(0, 0, 0));
    assert_near(distance(&stretched, at(0, 0, 0), &pt, at(5, 0.5f, 0)).distance, 3.0f, 1e-5f);
    // Minkowski sum with a sphere equals the rounded box.
    carom_shape ball = carom_sphere(0.5f);
    carom_shape sum = carom_minkowski_sum(&unit, &ball);
    carom_shape rounded = unit;
    rounded.radius = 0.5f;
    carom_xform xf = carom_xform_make(v3(3, 2.5f, 1), v3(1, 1, 0), 0.3f);
    assert_near(distance(&sum, at(0, 0, 0), &pt, xf).distance, distance(&rounded, at(0, 0, 0), &pt, xf).distance,
                2e-5f);
    // The convex hull of two spheres equals a capsule.
    carom_shape left = carom_affine(&ball, glms_mat3_identity(), v3(-1, 0, 0));
    carom_shape right = carom_affine(&ball, glms_mat3_identity(), v3(1, 0, 0));
    carom_shape hull = carom_convex_hull_of(&left, &right);
    carom_shape capsule = carom_capsule(v3(-1, 0, 0), v3(1, 0, 0), 0.5f);
    carom_shape probe = carom_box(v3(0.2f, 0.3f, 0.4f));
    carom_xform xp = carom_xform_make(v3(0.4f, 1.5f, 0.3f), v3(1, 2, 3), 0.9f);
    assert_near(distance(&hull, at(0, 0, 0), &probe, xp).distance,
                distance(&capsule, at(0, 0, 0), &probe, xp).distance, 1e-4f);
    // A custom sphere callback equals the built-in sphere.
    float r = 0.5f;
    carom_shape custom = carom_custom(sphere_callback, &r);
    assert_near(distance(&custom, at(0, 0, 0), &probe, xp).distance, distance(&ball, at(0, 0, 0), &probe, xp).distance,
                1e-4f);
}

static void test_huge_vs_tiny(void** state) {
    (void)state;
    carom_shape huge = carom_box(v3(1e4f, 1e4f, 1e4f)), tiny = carom_sphere(1e-3f);
    carom_distance_result r = distance(&huge, at(0, 0, 0), &tiny, at(0, 0, 1e4f + 0.5f));
    assert_near(r.distance, 0.5f - 1e-3f, 5e-3f);  // float spacing at 1e4 is 1e-3
    r = distance(&huge, at(0, 0, 0), &tiny, at(5, 5, 9999));
    assert_true(r.overlap);
    // Far from the origin: spheres of radius 1e8 around 1e9.
    carom_shape big = carom_sphere(1e8f);
    r = distance(&big, at(1e9f, 0, 0), &big, at(1e9f, 3e8f, 0));
    assert_near(r.distance, 1e8f, 1e8f * 1e-5f);
}

// --- randomized pairs against the brute-force reference ---------------------------

typedef struct test_hull {
    carom_hull hull;
    carom_shape shape;
    float size;
} test_hull;

static void hull_from_points(test_hull* t, const vec3s* pts, int n) {
    assert_int_equal(carom_hull_build(&t->hull, pts, n), CAROM_OK);
    t->shape = carom_hull_shape(&t->hull);
    t->size = t->hull.bounding_radius;
}

// The hull's vertices posed in double, as a reference polytope.
static void reference_of(const carom_hull* h, carom_xform xf, ref_polytope* out) {
    double q[4] = {xf.q.x, xf.q.y, xf.q.z, xf.q.w}, m[3][3];
    ref_quat_to_matrix(q, m);
    double(*pts)[3] = malloc(sizeof(double[3]) * (size_t)h->vertex_count);
    for (int i = 0; i < h->vertex_count; ++i) {
        for (int r = 0; r < 3; ++r) {
            pts[i][r] = m[r][0] * h->vertices[i].x + m[r][1] * h->vertices[i].y + m[r][2] * h->vertices[i].z +
                        xf.p.raw[r];
        }
    }
    assert_int_equal(ref_polytope_build(out, (const double(*)[3])pts, h->vertex_count), REF_POLYTOPE_OK);
    free(pts);
}

// Is p on the posed hull's surface (within tol)?
static void assert_on_hull(const carom_hull* h, carom_xform xf, vec3s p, float tol) {
    carom_rot r = carom_rot_from_quat(xf.q);
    vec3s local = rot_apply_transposed(&r, v3_sub(p, xf.p));
    float worst = -INFINITY;
    for (int f = 0; f < h->face_count; ++f) {
        worst = fmaxf(worst, v3_dot(h->planes[f].normal, local) - h->planes[f].offset);
    }
    if (!(fabsf(worst) <= tol)) fail_msg("witness %g off the hull surface", (double)worst);
}

// Random poses of two hulls; compares distance, witnesses and intersection
// with the reference. Returns the number of separated pairs checked.
static int compare_with_reference(const test_hull* a, const test_hull* b, int pairs, unsigned long long seed) {
    ref_rng rng = {seed};
    float spread = 1.2f * (a->size + b->size);
    int separated = 0;
    for (int i = 0; i < pairs; ++i) {
        carom_xform xa = random_pose(&rng, 0.5f * spread), xb = random_pose(&rng, 0.5f * spread);
        ref_polytope pa, pb;
        reference_of(&a->hull, xa, &pa);
        reference_of(&b->hull, xb, &pb);
        double ca[3], cb[3];
        double want = ref_polytope_distance(&pa, &pb, ca, cb);
        ref_polytope_free(&pa);
        ref_polytope_free(&pb);

        carom_distance_result r = distance(&a->shape, xa, &b->shape, xb);
        float scale = a->size + b->size + sqrtf(v3_len2(v3_sub(xa.p, xb.p)));
        float tol = 2e-5f * scale + CAROM_GJK_RELATIVE_TOLERANCE * (float)want;
        if (!(fabs(r.distance - want) <= tol)) {
            fail_msg("pair %d: carom %.9g, reference %.9g (tol %.3g)", i, (double)r.distance, want, (double)tol);
        }
        if (want > tol) {
            separated++;
            assert_false(r.overlap);
            assert_on_hull(&a->hull, xa, r.point_a, tol);
            assert_on_hull(&b->hull, xb, r.point_b, tol);
        }
    }
    return separated;
}

static void random_cloud(ref_rng* rng, vec3s* pts, int n, vec3s half) {
    for (int i = 0; i < n; ++i) {
        pts[i] = v3((float)ref_rng_uniform(rng, -half.x, half.x), (float)ref_rng_uniform(rng, -half.y, half.y),
                    (float)ref_rng_uniform(rng, -half.z, half.z));
    }
}

static void test_random_hulls_vs_reference(void** state) {
    (void)state;
    ref_rng rng = {42};
    for (int round = 0; round < 6; ++round) {
        vec3s pa[40], pb[12];
        random_cloud(&rng, pa, 40, v3(1.0f, 0.5f, 0.25f));
        random_cloud(&rng, pb, 12, v3(0.3f, 0.6f, 0.9f));
        test_hull a, b;
        hull_from_points(&a, pa, 40);
        hull_from_points(&b, pb, 12);
        int separated = compare_with_reference(&a, &b, 150, 1000u + (unsigned)round);
        assert_true(separated > 10);  // the poses exercise both outcomes
        carom_hull_destroy(&a.hull);
        carom_hull_destroy(&b.hull);
    }
}

static void load_mesh_hull(test_hull* t, const char* name, float target_size) {
    mesh_data mesh;
    if (mesh_load_named(name, &mesh) != 0) fail_msg("cannot load %s (run scripts/fetch-data.sh)", name);
    // Centre and scale to about target_size across.
    vec3s lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    vec3s* pts = (vec3s*)(void*)mesh.vertices;
    for (int i = 0; i < mesh.vertex_count; ++i) lo = v3_min(lo, pts[i]), hi = v3_max(hi, pts[i]);
    vec3s c = v3_scale(v3_add(lo, hi), 0.5f);
    float s = target_size / v3_max_abs(v3_sub(hi, lo));
    for (int i = 0; i < mesh.vertex_count; ++i) pts[i] = v3_scale(v3_sub(pts[i], c), s);
    hull_from_points(t, pts, mesh.vertex_count);
    mesh_free(&mesh);
}

static void test_mesh_hulls_vs_reference(void** state) {
    (void)state;
    test_hull geo, bunny;
    load_mesh_hull(&geo, "meshes/geosphere.off", 1.0f);
    load_mesh_hull(&bunny, "meshes/bunny00.off", 1.0f);
    assert_true(compare_with_reference(&geo, &geo, 200, 7) > 20);
    assert_true(compare_with_reference(&geo, &bunny, 40, 8) > 4);
    assert_true(compare_with_reference(&bunny, &bunny, 20, 9) > 2);
    carom_hull_destroy(&geo.hull);
    carom_hull_destroy(&bunny.hull);
}

static void test_capsule_box_vs_reference(void** state) {
    (void)state;
    ref_rng rng = {77};
    carom_shape box = carom_box(v3(0.5f, 0.3f, 0.2f));
    for (int i = 0; i < 300; ++i) {
        float h = (float)ref_rng_uniform(&rng, 0.05, 0.6), radius = (float)ref_rng_uniform(&rng, 0.05, 0.4);
        carom_shape capsule = carom_capsule(v3(0, 0, -h), v3(0, 0, h), radius);
        carom_xform xa = random_pose(&rng, 0.2f), xb = random_pose(&rng, 1.0f);
        // Reference: the box's 8 corners posed in double against the
        // capsule's segment, minus the radius.
        double q[4] = {xa.q.x, xa.q.y, xa.q.z, xa.q.w}, m[3][3], corners[8][3];
        ref_quat_to_matrix(q, m);
        for (int k = 0; k < 8; ++k) {
            double c[3] = {(k & 1) ? 0.5 : -0.5, (k & 2) ? 0.3 : -0.3, (k & 4) ? 0.2 : -0.2};
            for (int r = 0; r < 3; ++r) corners[k][r] = m[r][0] * c[0] + m[r][1] * c[1] + m[r][2] * c[2] + xa.p.raw[r];
        }
        ref_polytope p;
        assert_int_equal(ref_polytope_build(&p, (const double(*)[3])corners, 8), REF_POLYTOPE_OK);
        double qb[4] = {xb.q.x, xb.q.y, xb.q.z, xb.q.w}, mb[3][3], s0[3], s1[3];
        ref_quat_to_matrix(qb, mb);
        for (int r = 0; r < 3; ++r) {
            s0[r] = -mb[r][2] * h + xb.p.raw[r];
            s1[r] = mb[r][2] * h + xb.p.raw[r];
        }
        double want = ref_polytope_segment_distance(&p, s0, s1, NULL, NULL) - radius;
        ref_polytope_free(&p);
        if (want < 0.0) want = 0.0;
        carom_distance_result r = distance(&box, xa, &capsule, xb);
        assert_near(r.distance, (float)want, 3e-5f);
    }
}

// --- coherence -------------------------------------------------------------------------

// A scripted sequence: a box circling a hull, dipping into contact now and
// then, one intersection test per frame with a per-pair cache. The slides'
// claim is about one iteration per frame; the foundation promises <= 1.2.
static void test_coherent_motion_iterations(void** state) {
    (void)state;
    test_hull geo;
    load_mesh_hull(&geo, "meshes/geosphere.off", 1.0f);
    carom_shape box = carom_box(v3(0.25f, 0.25f, 0.25f));
    carom_gjk_cache cache;
    memset(&cache, 0, sizeof cache);
    int frames = 2000, iterations = 0, contacts = 0;
    for (int f = 0; f < frames; ++f) {
        float t = 6.2831853f * (float)f / (float)frames;
        float radius = 1.05f + 0.25f * sinf(5.0f * t);
        carom_xform xb = carom_xform_make(v3(radius * cosf(t), radius * sinf(t), 0.1f * sinf(3 * t)), v3(1, 2, 3), 2 * t);
        carom_intersect_result x = carom_gjk_intersect(&geo.shape, at(0, 0, 0), &box, xb, &cache);
        assert_int_equal(x.state, CAROM_DONE);
        // The cache never changes the answer.
        carom_intersect_result fresh = carom_gjk_intersect(&geo.shape, at(0, 0, 0), &box, xb, NULL);
        assert_true(x.overlap == fresh.overlap);
        iterations += x.iterations;
        contacts += x.overlap;
    }
    double mean = (double)iterations / frames;
    print_message("coherent motion: %d frames, %d in contact, %.3f iterations per frame\n", frames, contacts, mean);
    assert_true(contacts > frames / 20);
    assert_true(mean <= 1.2);
    carom_hull_destroy(&geo.hull);
}

// The distance cache warm-starts but never changes the answer.
static void test_distance_cache(void** state) {
    (void)state;
    carom_shape a = carom_box(v3(0.5f, 0.5f, 0.5f)), b = carom_cylinder(0.4f, 0.3f);
    carom_gjk_cache cache;
    memset(&cache, 0, sizeof cache);
    int cold = 0, warm = 0;
    for (int f = 0; f < 200; ++f) {
        float t = 0.01f * (float)f;
        carom_xform xb = carom_xform_make(v3(1.5f + 0.3f * sinf(t), 0.2f, 0.1f * t), v3(0, 1, 1), t);
        carom_distance_result w = carom_gjk_distance(&a, at(0, 0, 0), &b, xb, &cache);
        carom_distance_result c = carom_gjk_distance(&a, at(0, 0, 0), &b, xb, NULL);
        assert_near(w.distance, c.distance, 1e-5f);
        warm += w.iterations, cold += c.iterations;
    }
    assert_true(warm < cold);
    // A cache full of garbage is ignored, not trusted.
    cache.axis = v3(NAN, 0, 0);
    cache.hint_a = 123456;
    cache.hint_b = -99;
    carom_distance_result r = carom_gjk_distance(&a, at(0, 0, 0), &b, at(2, 0, 0), &cache);
    assert_int_equal(r.state, CAROM_DONE);
    assert_near(r.distance, 2.0f - 0.5f - 0.3f, 1e-5f);
}

// --- bad input ----------------------------------------------------------------------------

static void assert_invalid(const carom_shape* a, carom_xform xa, const carom_shape* b, carom_xform xb) {
    carom_distance_result r = carom_gjk_distance(a, xa, b, xb, NULL);
    assert_int_equal(r.state, CAROM_INVALID_INPUT);
    assert_true(r.distance == 0.0f && r.iterations >= 0);
    carom_intersect_result x = carom_gjk_intersect(a, xa, b, xb, NULL);
    assert_int_equal(x.state, CAROM_INVALID_INPUT);
    assert_false(x.overlap);
}

static int nan_callback(const void* user, vec3s d, vec3s* out) {
    (void)user;
    (void)d;
    *out = v3(NAN, 0, 0);
    return 0;
}

static void test_bad_input(void** state) {
    (void)state;
    carom_shape ok = carom_sphere(1.0f);
    carom_xform id = carom_xform_identity();
    assert_invalid(NULL, id, &ok, id);
    assert_invalid(&ok, id, NULL, id);
    carom_xform nan_pose = at(NAN, 0, 0);
    assert_invalid(&ok, nan_pose, &ok, id);
    carom_xform inf_pose = at(0, INFINITY, 0);
    assert_invalid(&ok, id, &ok, inf_pose);
    carom_xform far = at(0, 0, 1e13f);
    assert_invalid(&ok, id, &ok, far);
    carom_xform zero_q;
    memset(&zero_q, 0, sizeof zero_q);
    assert_invalid(&ok, zero_q, &ok, id);
    carom_xform long_q = id;
    long_q.q.w = 1.5f;
    assert_invalid(&ok, long_q, &ok, id);
    carom_shape neg = carom_sphere(-0.5f);
    assert_invalid(&neg, id, &ok, id);
    carom_shape flat = carom_box(v3(1, 0, 1));
    assert_invalid(&ok, id, &flat, id);
    carom_shape nan_box = carom_box(v3(1, NAN, 1));
    assert_invalid(&nan_box, id, &ok, id);
    carom_shape custom = carom_custom(nan_callback, NULL);
    assert_invalid(&custom, id, &ok, at(3, 0, 0));
    carom_shape loop = carom_affine(NULL, glms_mat3_identity(), v3(0, 0, 0));
    loop.u.affine.child = &loop;
    assert_invalid(&loop, id, &ok, id);

    // A quaternion slightly off unit length is normalized, not rejected, and
    // does not scale the shape.
    carom_xform near_unit = carom_xform_make(v3(3, 0, 0), v3(0, 0, 1), 0.5f);
    near_unit.q.x *= 1.003f, near_unit.q.y *= 1.003f, near_unit.q.z *= 1.003f, near_unit.q.w *= 1.003f;
    carom_distance_result r = carom_gjk_distance(&ok, id, &ok, near_unit, NULL);
    assert_int_equal(r.state, CAROM_DONE);
    assert_near(r.distance, 1.0f, 1e-5f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sphere_sphere),
        cmocka_unit_test(test_overlap_point_in_both),
        cmocka_unit_test(test_needle_repeated_support),
        cmocka_unit_test(test_sphere_box),
        cmocka_unit_test(test_box_box_on_axes),
        cmocka_unit_test(test_capsule_capsule),
        cmocka_unit_test(test_point_triangle_regions),
        cmocka_unit_test(test_point_plane),
        cmocka_unit_test(test_cylinder_and_cone),
        cmocka_unit_test(test_combinators),
        cmocka_unit_test(test_huge_vs_tiny),
        cmocka_unit_test(test_random_hulls_vs_reference),
        cmocka_unit_test(test_mesh_hulls_vs_reference),
        cmocka_unit_test(test_capsule_box_vs_reference),
        cmocka_unit_test(test_coherent_motion_iterations),
        cmocka_unit_test(test_distance_cache),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
