// GJK ray cast and linear shape cast: analytic answers (rays against every
// primitive, spheres against box faces, edges and corners, boxes against
// boxes, a capsule along a wall, grazing misses, start overlap, zero and
// receding translations, tunnelling through thin targets), the invariants of
// every hit (touching at the fraction, apart just before it, the point on
// the target, the normal a supporting plane's), scale, long sweeps, user
// shapes, thousands of random pairs against an exact double reference, and
// bad input.
//
// CAROM_TEST_LIGHT=1 (set by the valgrind pass of scripts/test.sh, which runs
// everything 50 times slower) keeps every test and code path but runs a
// fifth of the random cases.
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
#include "reference.h"
#include "test_poses.h"

static void assert_near(double got, double want, double tol) {
    if (!(fabs(got - want) <= tol)) fail_msg("got %.9g, want %.9g (tol %.3g)", got, want, tol);
}

static void assert_vec_near(vec3s a, vec3s b, float tol) {
    if (!(fabsf(a.x - b.x) <= tol && fabsf(a.y - b.y) <= tol && fabsf(a.z - b.z) <= tol)) {
        fail_msg("(%.7g %.7g %.7g) != (%.7g %.7g %.7g) (tol %.3g)", (double)a.x, (double)a.y, (double)a.z,
                 (double)b.x, (double)b.y, (double)b.z, (double)tol);
    }
}

// The number of random cases: all of them, or a fifth under CAROM_TEST_LIGHT.
static int cases_to_run(int n) {
    const char* e = getenv("CAROM_TEST_LIGHT");
    return e && *e && strcmp(e, "0") != 0 ? n / 5 : n;
}

static vec3s unit(vec3s v) { return v3_scale(v, 1.0f / sqrtf(v3_len2(v))); }

// Random draws one statement at a time: C leaves the order in which a
// call's arguments are evaluated open (gcc and clang differ), and the cases
// must be the same whichever compiler built the test.
static float draw(ref_rng* rng, double lo, double hi) { return (float)ref_rng_uniform(rng, lo, hi); }

static vec3s draw_vec(ref_rng* rng, vec3s lo, vec3s hi) {
    vec3s v;
    v.x = draw(rng, lo.x, hi.x);
    v.y = draw(rng, lo.y, hi.y);
    v.z = draw(rng, lo.z, hi.z);
    return v;
}

static vec3s draw_in_cube(ref_rng* rng, float half) { return draw_vec(rng, v3(-half, -half, -half), v3(half, half, half)); }

// A random pose: a position in the cube of half side `spread`, a uniform
// rotation.
static carom_xform draw_pose(ref_rng* rng, float spread) {
    carom_xform xf;
    xf.p = draw_in_cube(rng, spread);
    double q[4];
    ref_rng_unit_quat(rng, q);
    xf.q.x = (float)q[0], xf.q.y = (float)q[1], xf.q.z = (float)q[2], xf.q.w = (float)q[3];
    return xf;
}

static vec3s draw_direction(ref_rng* rng) {
    double q[4];
    ref_rng_unit_quat(rng, q);  // (x, y, z) of a uniform unit quaternion: a direction, normalised below
    return unit(v3((float)q[0], (float)q[1], (float)q[2]));
}

// The moving shape's pose at time t.
static carom_xform moved(carom_xform xf, vec3s translation, float t) {
    xf.p = v3_mad(xf.p, translation, t);
    return xf;
}

// A shape cast with the invariants of every answer checked on the way:
// converged; a hit's shapes within the touch tolerance at the fraction (by
// carom_gjk_distance) and apart 1e-3 of the sweep before it; a unit normal
// (or zero, only at t = 0); the point within the tolerance of both shapes;
// a miss with fraction 1 and zero vectors. `tol` is the distance tolerance,
// in units.
static carom_cast_result cast(const carom_shape* moving, carom_xform xm, vec3s translation, const carom_shape* target,
                              carom_xform xt, float tol) {
    carom_cast_result r = carom_gjk_shape_cast(moving, xm, translation, target, xt);
    assert_int_equal(r.state, CAROM_DONE);
    assert_true(r.iterations > 0 && r.iterations <= CAROM_CAST_MAX_ITERATIONS);
    if (!r.hit) {
        assert_true(r.fraction == 1.0f);
        assert_true(v3_len2(r.point) == 0.0f && v3_len2(r.normal) == 0.0f);
        return r;
    }
    assert_true(r.fraction >= 0.0f && r.fraction <= 1.0f);
    carom_xform at_hit = moved(xm, translation, r.fraction);
    carom_distance_result d = carom_gjk_distance(target, xt, moving, at_hit, NULL);
    if (!(d.distance <= tol)) fail_msg("distance %g at the fraction %.9g (tol %g)", (double)d.distance, (double)r.fraction, (double)tol);
    if (r.fraction >= 1e-3f) {
        carom_distance_result before = carom_gjk_distance(target, xt, moving, moved(xm, translation, r.fraction - 1e-3f), NULL);
        if (before.overlap) fail_msg("overlap 1e-3 before the fraction %.9g", (double)r.fraction);
    }
    float n2 = v3_len2(r.normal);
    if (r.fraction > 0.0f || n2 > 0.0f) assert_near(n2, 1.0, 1e-5);
    // The point is on (or, at t = 0, in) both shapes.
    carom_shape probe = carom_point(v3(0, 0, 0));
    carom_xform xp = carom_xform_identity();
    xp.p = r.point;
    assert_true(carom_gjk_distance(target, xt, &probe, xp, NULL).distance <= tol);
    assert_true(carom_gjk_distance(moving, at_hit, &probe, xp, NULL).distance <= 2.0f * tol);
    return r;
}

static carom_cast_result ray(const carom_shape* shape, carom_xform xf, vec3s origin, vec3s translation, float tol) {
    carom_ray q = {origin, translation};
    carom_cast_result r = carom_gjk_raycast(shape, xf, q);
    // The same query as a point cast, through the checks above.
    carom_shape point = carom_point(v3(0, 0, 0));
    carom_cast_result c = cast(&point, at(origin.x, origin.y, origin.z), translation, shape, xf, tol);
    assert_int_equal(r.state, c.state);
    assert_true(r.hit == c.hit);
    assert_near(r.fraction, c.fraction, 1e-6);
    assert_vec_near(r.normal, c.normal, 1e-6f);
    return r;
}

// --- rays -----------------------------------------------------------------------------

static void test_ray_sphere(void** state) {
    (void)state;
    carom_shape ball = carom_sphere(1.0f);
    carom_cast_result r = ray(&ball, at(1, 2, 3), v3(-4, 2, 3), v3(10, 0, 0), 1e-5f);
    assert_true(r.hit);
    assert_near(r.fraction, 0.4, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_vec_near(r.point, v3(0, 2, 3), 1e-5f);
    // Off centre: enters at (-0.8, 0.6, 0).
    r = ray(&ball, at(0, 0, 0), v3(-4, 0.6f, 0), v3(10, 0, 0), 1e-5f);
    assert_near(r.fraction, 0.32, 1e-6);
    assert_vec_near(r.normal, v3(-0.8f, 0.6f, 0), 1e-5f);
    assert_vec_near(r.point, v3(-0.8f, 0.6f, 0), 1e-5f);
    // Passing 1e-3 outside; stopping 1e-3 short.
    assert_false(ray(&ball, at(0, 0, 0), v3(-4, 1.001f, 0), v3(10, 0, 0), 1e-5f).hit);
    assert_false(ray(&ball, at(0, 0, 0), v3(-4, 0, 0), v3(2.999f, 0, 0), 1e-5f).hit);
    // Reaching the surface exactly at t = 1.
    r = ray(&ball, at(0, 0, 0), v3(-4, 0, 0), v3(3, 0, 0), 1e-5f);
    assert_true(r.hit);
    assert_near(r.fraction, 1.0, 1e-6);
    // From inside: at 0, the normal from the centre towards the origin.
    r = ray(&ball, at(0, 0, 0), v3(0.2f, 0, 0), v3(10, 0, 0), 1e-5f);
    assert_true(r.hit);
    assert_true(r.fraction == 0.0f);
    assert_vec_near(r.normal, v3(1, 0, 0), 1e-6f);
    // From the centre: at 0, no direction.
    r = ray(&ball, at(0, 0, 0), v3(0, 0, 0), v3(10, 0, 0), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_true(v3_len2(r.normal) == 0.0f);
}

static void test_ray_box(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3));
    carom_xform xf = carom_xform_make(v3(5, -1, 2), v3(0, 0, 1), 0.5236f);
    // Work in the box's frame and map to the world.
    vec3s o = carom_xform_point(xf, v3(-4, 0.5f, 0.5f)), d = carom_xform_vector(xf, v3(8, 0, 0));
    carom_cast_result r = ray(&box, xf, o, d, 1e-5f);
    assert_true(r.hit);
    assert_near(r.fraction, 3.0 / 8.0, 1e-6);
    assert_vec_near(r.normal, carom_xform_vector(xf, v3(-1, 0, 0)), 1e-6f);
    assert_vec_near(r.point, carom_xform_point(xf, v3(-1, 0.5f, 0.5f)), 1e-5f);
    // Straight at the edge x = 1, y = 2: any normal between the two faces'.
    o = carom_xform_point(xf, v3(3, 4, 0.5f)), d = carom_xform_vector(xf, v3(-4, -4, 0));
    r = ray(&box, xf, o, d, 1e-5f);
    assert_near(r.fraction, 0.5, 1e-6);
    carom_rot rot = carom_rot_from_quat(xf.q);
    vec3s n = rot_apply_transposed(&rot, r.normal);
    assert_true(n.x >= -1e-6f && n.y >= -1e-6f && fabsf(n.z) <= 1e-6f);
    // At the corner (1, 2, 3).
    o = carom_xform_point(xf, v3(2, 4, 6)), d = carom_xform_vector(xf, v3(-2, -4, -6));
    r = ray(&box, xf, o, d, 1e-5f);
    assert_near(r.fraction, 0.5, 1e-6);
    n = rot_apply_transposed(&rot, r.normal);
    assert_true(n.x >= -1e-6f && n.y >= -1e-6f && n.z >= -1e-6f);
    // Parallel to the face y = 2, 1e-3 outside it: a miss; in its plane:
    // touching from x = -1 on.
    o = carom_xform_point(xf, v3(-4, 2.001f, 0)), d = carom_xform_vector(xf, v3(8, 0, 0));
    assert_false(ray(&box, xf, o, d, 1e-5f).hit);
    o = carom_xform_point(xf, v3(-4, 2, 0));
    r = ray(&box, xf, o, d, 1e-4f);
    assert_true(r.hit);
    assert_near(r.fraction, 3.0 / 8.0, 1e-5);
    // Starting on the surface, leaving it.
    o = carom_xform_point(xf, v3(1, 0, 0)), d = carom_xform_vector(xf, v3(1, 0, 0));
    r = ray(&box, xf, o, d, 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
}

static void test_ray_capsule(void** state) {
    (void)state;
    carom_shape capsule = carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.5f);
    // The side.
    carom_cast_result r = ray(&capsule, at(0, 0, 0), v3(-3, 0, 0.5f), v3(6, 0, 0), 1e-5f);
    assert_near(r.fraction, 2.5 / 6.0, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_vec_near(r.point, v3(-0.5f, 0, 0.5f), 1e-5f);
    // Down the axis onto the top cap, and onto it off the axis.
    r = ray(&capsule, at(0, 0, 0), v3(0, 0, 5), v3(0, 0, -10), 1e-5f);
    assert_near(r.fraction, 0.35, 1e-6);
    assert_vec_near(r.normal, v3(0, 0, 1), 1e-6f);
    r = ray(&capsule, at(0, 0, 0), v3(0.3f, 0, 5), v3(0, 0, -10), 1e-5f);
    assert_near(r.fraction, 0.36, 1e-6);
    assert_vec_near(r.normal, v3(0.6f, 0, 0.8f), 1e-5f);
    assert_vec_near(r.point, v3(0.3f, 0, 1.4f), 1e-5f);
    // Missing the cap by 1e-3.
    assert_false(ray(&capsule, at(0, 0, 0), v3(0.501f, 0, 5), v3(0, 0, -10), 1e-5f).hit);
}

// Curved cores converge more slowly, and the hit is only as good as the
// touch tolerance allows along the approach.
static void test_ray_cylinder_and_cone(void** state) {
    (void)state;
    carom_shape cyl = carom_cylinder(1.0f, 0.5f);
    // The side: enters at (-0.4, 0.3, 0.2), normal (-0.8, 0.6, 0).
    carom_cast_result r = ray(&cyl, at(0, 0, 0), v3(-3, 0.3f, 0.2f), v3(6, 0, 0), 1e-4f);
    assert_near(r.fraction, 2.6 / 6.0, 1e-5);
    assert_vec_near(r.normal, v3(-0.8f, 0.6f, 0), 1e-2f);
    // The cap.
    r = ray(&cyl, at(0, 0, 0), v3(0.2f, 0.1f, 4), v3(0, 0, -6), 1e-4f);
    assert_near(r.fraction, 0.5, 1e-6);
    assert_vec_near(r.normal, v3(0, 0, 1), 1e-5f);
    // Turned on its side (axis along x) at (0, 0, 2): the wall seen from +z.
    carom_xform side = carom_xform_make(v3(0, 0, 2), v3(0, 1, 0), 1.5707963f);
    r = ray(&cyl, side, v3(0.5f, 0, 5), v3(0, 0, -4), 1e-4f);
    assert_near(r.fraction, 2.5 / 4.0, 1e-5);
    assert_vec_near(r.normal, v3(0, 0, 1), 1e-2f);
    // Cone: apex (0,0,1), base radius 1 at z = -1; the slant's normal is
    // (2, 0, 1)/sqrt5; a ray along -x at z = 0 meets it at x = 0.5.
    carom_shape cone = carom_cone(1.0f, 1.0f);
    r = ray(&cone, at(0, 0, 0), v3(3, 0, 0), v3(-5, 0, 0), 1e-4f);
    assert_near(r.fraction, 0.5, 1e-5);
    assert_vec_near(r.normal, unit(v3(2, 0, 1)), 1e-2f);
    assert_false(ray(&cone, at(0, 0, 0), v3(3, 0, 1.01f), v3(-5, 0, 0), 1e-4f).hit);
}

// Random rays with analytic answers: spheres (a point core: exact), and
// cylinders hit on their side (a curved core: GJK converges slowly there),
// at random poses. Glancing rays (under 0.1 of the ray's direction along
// the normal) are left to the tests above.
static void test_random_rays_analytic(void** state) {
    (void)state;
    ref_rng rng = {1988};
    double worst_fraction[2] = {0, 0}, worst_angle[2] = {0, 0};
    int hits[2] = {0, 0}, misses[2] = {0, 0}, iterations[2] = {0, 0}, max_iterations[2] = {0, 0};
    const int count = cases_to_run(1000);
    for (int i = 0; i < count; ++i) {
        int kind = i % 2;  // 0: sphere, 1: cylinder
        float radius = draw(&rng, 0.2, 1.0), half_height = draw(&rng, 0.3, 1.5);
        carom_shape shape = kind == 0 ? carom_sphere(radius) : carom_cylinder(half_height, radius);
        carom_xform xf = draw_pose(&rng, 2.0f);
        // In the shape's frame: from 3 radii out towards a point within 1.2
        // radii of the axis, horizontally for the cylinder.
        vec3s dir = draw_direction(&rng), aim = v3_scale(draw_in_cube(&rng, 1.0f), 1.2f * radius);
        if (kind == 1) {
            float z = draw(&rng, -0.8 * half_height, 0.8 * half_height);
            dir.z = 0.0f, aim.z = 0.0f;
            if (v3_len2(dir) < 1e-4f) dir = v3(1, 0, 0);
            dir = unit(dir);
            dir.z = z, aim.z = z;
        }
        vec3s o = v3_scale(dir, 3.0f * radius + 1.0f);
        if (kind == 1) o.z = dir.z, dir.z = 0.0f;
        vec3s d = v3_scale(v3_sub(aim, o), 2.0f);
        // Analytic: |o + t d|^2 = r^2 (in the plane z = const for the cylinder).
        double ox = o.x, oy = o.y, oz = kind == 0 ? o.z : 0.0, dx = d.x, dy = d.y, dz = kind == 0 ? d.z : 0.0;
        double a = dx * dx + dy * dy + dz * dz, b = ox * dx + oy * dy + oz * dz;
        double c = ox * ox + oy * oy + oz * oz - (double)radius * radius, disc = b * b - a * c;
        carom_cast_result r = carom_gjk_raycast(&shape, xf, (carom_ray){carom_xform_point(xf, o), carom_xform_vector(xf, d)});
        assert_int_equal(r.state, CAROM_DONE);
        iterations[kind] += r.iterations;
        if (r.iterations > max_iterations[kind]) max_iterations[kind] = r.iterations;
        double t = disc >= 0.0 ? (-b - sqrt(disc)) / a : 2.0;
        vec3s n = v3((float)(ox + t * dx), (float)(oy + t * dy), (float)(oz + t * dz));
        double along = disc >= 0.0 ? -v3_dot(unit(n), unit(v3((float)dx, (float)dy, (float)dz))) : 0.0;
        if (t > 1.0 || along < 0.1) {
            // A miss, or glancing: no hit where the line passes clearly
            // outside within the sweep (its closest approach at -b / a).
            double gap = sqrt(fmax(0.0, c + (double)radius * radius - b * b / a)) - radius;
            if (disc < 0.0 && -b / a <= 1.0 && gap > 1e-4) assert_false(r.hit);
            misses[kind] += !r.hit;
            continue;
        }
        assert_true(r.hit);
        hits[kind]++;
        // In distance along the normal, over the scale: what the touch
        // tolerance bounds.
        double scale = (kind == 0 ? radius : sqrt((double)radius * radius + (double)half_height * half_height)) +
                       sqrt(v3_len2(o)) + sqrt(a);
        double err = fabs(r.fraction - t) * along * sqrt(a) / scale;
        carom_rot rot = carom_rot_from_quat(xf.q);
        vec3s local_n = rot_apply_transposed(&rot, r.normal);
        double angle = acos(fmin(1.0, (double)v3_dot(local_n, unit(n))));
        worst_fraction[kind] = fmax(worst_fraction[kind], err);
        worst_angle[kind] = fmax(worst_angle[kind], angle);
    }
    print_message("random rays: spheres %d hits (error %.3g of the scale along the normal, normal %.3g rad, "
                  "iterations %.1f / %d), cylinders %d hits (%.3g, %.3g rad, iterations %.1f / %d)\n",
                  hits[0], worst_fraction[0], worst_angle[0], 2.0 * iterations[0] / count, max_iterations[0], hits[1],
                  worst_fraction[1], worst_angle[1], 2.0 * iterations[1] / count, max_iterations[1]);
    assert_true(hits[0] > count / 5 && hits[1] > count / 5 && misses[0] > count / 50 && misses[1] > count / 50);
    // The sphere within the touch tolerance (1e-6 of the scale) and
    // rounding; the cylinder within float GJK's floor on curved cores
    // (documented as 1e-4, seen 4e-6). The sphere's normal is the direction
    // from its centre to the ray point found, off the true one by that
    // tolerance over the radius and the glancing angle; the cylinder's is
    // its last clipping plane, a tangent plane through a point up to the
    // tolerance h off the surface, which may tilt by sqrt(2 h / radius).
    assert_true(worst_fraction[0] < 2e-6 && worst_angle[0] < 2e-3);
    assert_true(worst_fraction[1] < 1e-5 && worst_angle[1] < 2e-2);
}

// --- shape casts -------------------------------------------------------------------------

// A sphere cast at a box's face, edge and corner: the sphere's centre
// against the box rounded by the radius.
static void test_sphere_cast_box(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3)), ball = carom_sphere(0.5f);
    carom_xform id = at(0, 0, 0);
    // Face x = -1.
    carom_cast_result r = cast(&ball, at(-5, 0.5f, 1), v3(10, 0, 0), &box, id, 1e-5f);
    assert_near(r.fraction, 0.35, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_vec_near(r.point, v3(-1, 0.5f, 1), 1e-5f);
    // Edge x = -1, y = 2: (x + 1)^2 + 0.3^2 = 0.5^2 at x = -1.4.
    r = cast(&ball, at(-5, 2.3f, 0), v3(10, 0, 0), &box, id, 1e-5f);
    assert_near(r.fraction, 0.36, 1e-6);
    assert_vec_near(r.normal, v3(-0.8f, 0.6f, 0), 1e-5f);
    assert_vec_near(r.point, v3(-1, 2, 0), 1e-5f);
    // Corner (-1, 2, 3): (x + 1)^2 = 0.25 - 0.09 - 0.04.
    r = cast(&ball, at(-5, 2.3f, 3.2f), v3(10, 0, 0), &box, id, 1e-5f);
    double x = -1.0 - sqrt(0.12);
    assert_near(r.fraction, (x + 5.0) / 10.0, 2e-6);
    assert_vec_near(r.normal, unit(v3((float)(x + 1.0), 0.3f, 0.2f)), 1e-5f);
    assert_vec_near(r.point, v3(-1, 2, 3), 1e-5f);
    // The same corner, box turned and moved: the answer moves with it.
    carom_xform xf = carom_xform_make(v3(3, -2, 1), v3(1, 2, 3), 0.8f);
    carom_xform start = carom_xform_identity();
    start.p = carom_xform_point(xf, v3(-5, 2.3f, 3.2f));
    r = cast(&ball, start, carom_xform_vector(xf, v3(10, 0, 0)), &box, xf, 1e-5f);
    assert_near(r.fraction, (x + 5.0) / 10.0, 2e-6);
    assert_vec_near(r.point, carom_xform_point(xf, v3(-1, 2, 3)), 2e-5f);
}

static void test_box_cast_box(void** state) {
    (void)state;
    carom_shape big = carom_box(v3(1, 1, 1)), small = carom_box(v3(0.5f, 0.5f, 0.5f));
    // Face to face.
    carom_cast_result r = cast(&small, at(-5, 0.2f, 0.3f), v3(10, 0, 0), &big, at(0, 0, 0), 1e-5f);
    assert_near(r.fraction, 0.35, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_near(r.point.x, -1.0, 1e-5);
    // The small box turned 45 degrees about z: its edge leads, at
    // 0.5 sqrt2 ahead of its centre.
    carom_xform turned = carom_xform_make(v3(-5, 0.2f, 0.3f), v3(0, 0, 1), 0.78539816f);
    r = cast(&small, turned, v3(10, 0, 0), &big, at(0, 0, 0), 1e-5f);
    assert_near(r.fraction, (5.0 - 1.0 - 0.5 * sqrt(2.0)) / 10.0, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_vec_near(r.point, v3(-1, 0.2f, r.point.z), 1e-5f);
    // The big box turned instead: its edge meets the small box's face.
    carom_xform big_turned = carom_xform_make(v3(0, 0, 0), v3(0, 0, 1), 0.78539816f);
    r = cast(&small, at(-5, 0.1f, 0), v3(10, 0, 0), &big, big_turned, 1e-5f);
    assert_near(r.fraction, (5.0 - 0.5 - sqrt(2.0)) / 10.0, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_vec_near(r.point, v3(-(float)sqrt(2.0), 0, r.point.z), 1e-5f);
    // Diagonal approach, missing by 1e-3 past the corner.
    assert_false(cast(&small, at(-5, 1.501f, 0), v3(10, 0, 0), &big, at(0, 0, 0), 1e-5f).hit);
}

// A capsule (a character) against a wall: the wall's face is x = 0.
static void test_capsule_along_wall(void** state) {
    (void)state;
    carom_shape wall = carom_box(v3(0.5f, 10, 10)), capsule = carom_capsule(v3(0, -0.5f, 0), v3(0, 0.5f, 0), 0.25f);
    carom_xform xw = at(0.5f, 0, 0);
    // Sliding along it, 0.1 and 1e-3 away: misses.
    assert_false(cast(&capsule, at(-0.35f, 0, 0), v3(0, 0, 5), &wall, xw, 1e-5f).hit);
    assert_false(cast(&capsule, at(-0.251f, 0, 0), v3(0, 1, 5), &wall, xw, 1e-5f).hit);
    // Sliding along it in contact: a hit at 0 with the wall's normal.
    carom_cast_result r = cast(&capsule, at(-0.25f, 0, 0), v3(0, 0, 5), &wall, xw, 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    // Into it at a slant: 0.5 to go at 1 per unit of t.
    r = cast(&capsule, at(-0.75f, 0, 0), v3(1, 0, 3), &wall, xw, 1e-5f);
    assert_near(r.fraction, 0.5, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    assert_near(r.point.x, 0.0, 1e-5);
    assert_near(r.point.z, 1.5, 1e-5);
    // Tilted: its end (0.3, 0.5) leads.
    carom_shape tilted = carom_capsule(v3(-0.3f, -0.5f, 0), v3(0.3f, 0.5f, 0), 0.25f);
    r = cast(&tilted, at(-2, 0, 0), v3(4, 0, 0), &wall, xw, 1e-5f);
    assert_near(r.fraction, 1.45 / 4.0, 1e-6);
    assert_vec_near(r.point, v3(0, 0.5f, 0), 1e-5f);
}

// Grazing: passing a surface 1e-4 off is a miss; passing it in contact is a
// hit at the first touch, within what the touch tolerance allows.
static void test_grazing(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3)), ball = carom_sphere(0.5f);
    assert_false(cast(&ball, at(-5, 2.5001f, 0), v3(10, 0, 0), &box, at(0, 0, 0), 1e-5f).hit);
    assert_false(cast(&ball, at(-5, 0, 3.5001f), v3(10, 0, 0.0f), &box, at(0, 0, 0), 1e-5f).hit);
    // Over the top face in contact: the distance to the edge falls to the
    // tolerance (about 1e-6 of the scale, 16 here) within sqrt(2e-5 r) of
    // x = -1.
    carom_cast_result r = cast(&ball, at(-5, 2.5f, 0), v3(10, 0, 0), &box, at(0, 0, 0), 1e-4f);
    assert_true(r.hit);
    assert_true(r.fraction <= 0.4f + 1e-6f && r.fraction >= 0.4f - 5e-4f);
    // A ray past a capsule by 1e-4.
    carom_shape capsule = carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.5f);
    assert_false(ray(&capsule, at(0, 0, 0), v3(-3, 0.5001f, 0), v3(6, 0, 0), 1e-5f).hit);
}

static void test_start_overlapping(void** state) {
    (void)state;
    carom_shape big = carom_box(v3(1, 1, 1)), small = carom_box(v3(0.5f, 0.5f, 0.5f)), ball = carom_sphere(0.5f);
    // Cores overlap: fraction 0, no direction, the point inside both.
    carom_cast_result r = cast(&small, at(0.8f, 0.1f, 0), v3(3, 0, 0), &big, at(0, 0, 0), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_true(v3_len2(r.normal) == 0.0f);
    // Only the radius overlaps: the direction between the cores.
    r = cast(&ball, at(0, 1.3f, 0.2f), v3(0, -3, 0), &big, at(0, 0, 0), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_vec_near(r.normal, v3(0, 1, 0), 1e-6f);
    // Exactly touching faces at the start.
    r = cast(&small, at(-1.5f, 0, 0), v3(1, 0, 0), &big, at(0, 0, 0), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    // Concentric spheres.
    r = cast(&ball, at(2, 2, 2), v3(1, 0, 0), &ball, at(2, 2, 2), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_vec_near(r.point, v3(2, 2, 2), 1e-6f);
}

// A zero translation is an overlap test. It never misses a pair that
// carom_gjk_distance calls touching (a miss needs a plane separating them by
// more than the tolerance), and it hits only pairs within the tolerance.
static void test_zero_translation(void** state) {
    (void)state;
    carom_shape shapes[4] = {carom_box(v3(1, 0.5f, 0.3f)), carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.3f),
                             carom_sphere(0.7f), carom_cylinder(0.5f, 0.4f)};
    ref_rng rng = {404};
    int hits = 0, misses = 0;
    for (int i = 0; i < 400; ++i) {
        int ka = (int)(ref_rng_next(&rng) % 4), kb = (int)(ref_rng_next(&rng) % 4);
        carom_xform xa = draw_pose(&rng, 1.0f);
        carom_xform xb = draw_pose(&rng, 1.0f);
        if (i % 4 == 0) {
            // Put a quarter of the pairs within 1e-7 to 1e-3 of touching.
            carom_distance_result d = carom_gjk_distance(&shapes[kb], xb, &shapes[ka], xa, NULL);
            float gap = powf(10.0f, draw(&rng, -7, -3));
            if (!d.overlap) xa.p = v3_mad(xa.p, d.normal, gap - d.distance);
        }
        carom_cast_result r = carom_gjk_shape_cast(&shapes[ka], xa, v3(0, 0, 0), &shapes[kb], xb);
        assert_int_equal(r.state, CAROM_DONE);
        carom_distance_result d = carom_gjk_distance(&shapes[kb], xb, &shapes[ka], xa, NULL);
        if (r.hit) {
            assert_true(r.fraction == 0.0f);
            if (!(d.distance <= 1e-5f)) fail_msg("case %d: hit at distance %g", i, (double)d.distance);
            hits++;
        } else {
            assert_true(r.fraction == 1.0f);
            assert_false(d.overlap);
            misses++;
        }
    }
    assert_true(hits > 50 && misses > 50);
}

// Moving away: a miss when apart; a hit at 0 when touching (the contract:
// a touching start is a hit whatever the direction), with the normal that
// tells a controller the contact is being left.
static void test_cast_away(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3)), ball = carom_sphere(0.5f);
    assert_false(cast(&ball, at(-2, 0, 0), v3(-10, 0, 0), &box, at(0, 0, 0), 1e-5f).hit);
    assert_false(cast(&ball, at(-2, 0, 0), v3(0, 10, 0), &box, at(0, 0, 0), 1e-5f).hit);
    carom_cast_result r = cast(&ball, at(0, 2.5f, 0), v3(0, 3, 0), &box, at(0, 0, 0), 1e-5f);
    assert_true(r.hit && r.fraction == 0.0f);
    assert_vec_near(r.normal, v3(0, 1, 0), 1e-6f);
    assert_true(v3_dot(r.normal, v3(0, 3, 0)) > 0.0f);
}

// A fast mover passing right through a thin target within one step must
// hit it where it enters, not skip it.
static void test_tunnelling(void** state) {
    (void)state;
    carom_shape plate = carom_box(v3(0.01f, 5, 5)), bullet = carom_sphere(0.05f);
    carom_cast_result r = cast(&bullet, at(-100, 0.3f, 0), v3(200, 0, 0), &plate, at(0, 0, 0), 1e-3f);
    assert_true(r.hit);
    assert_near(r.fraction, (100.0 - 0.06) / 200.0, 2e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    // A box through a triangle (no thickness at all), and a ray through it.
    carom_shape tri = carom_triangle(v3(0, -1, -1), v3(0, 2, -1), v3(0, -1, 2));
    carom_shape box = carom_box(v3(0.1f, 0.1f, 0.1f));
    r = cast(&box, at(-10, 0, 0), v3(20, 0.5f, 0), &tri, at(0, 0, 0), 1e-4f);
    assert_near(r.fraction, 9.9 / 20.0, 1e-6);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
    r = ray(&tri, at(0, 0, 0), v3(50, 0.2f, 0.3f), v3(-100, 0, 0), 1e-4f);
    assert_near(r.fraction, 0.5, 1e-6);
    assert_vec_near(r.normal, v3(1, 0, 0), 1e-6f);
    // Through a thin box turned off every axis, at a slant.
    carom_xform xf = carom_xform_make(v3(1, 2, 3), v3(1, -2, 0.5f), 1.1f);
    carom_shape sheet = carom_box(v3(3, 3, 0.001f));
    vec3s o = carom_xform_point(xf, v3(0.5f, -0.5f, 40)), d = carom_xform_vector(xf, v3(1, 2, -80));
    r = ray(&sheet, xf, o, d, 1e-4f);
    assert_near(r.fraction, (40.0 - 0.001) / 80.0, 1e-6);
    assert_vec_near(r.normal, carom_xform_vector(xf, v3(0, 0, 1)), 1e-5f);
}

// The fraction does not depend on the units.
static void test_scale_invariance(void** state) {
    (void)state;
    const float scales[] = {1e-6f, 1e-3f, 1.0f, 1e3f, 1e6f};
    for (size_t i = 0; i < sizeof scales / sizeof scales[0]; ++i) {
        float L = scales[i];
        carom_shape box = carom_box(v3(L, 2 * L, 3 * L)), ball = carom_sphere(0.5f * L);
        carom_cast_result r = cast(&ball, at(-5 * L, 2.3f * L, 3.2f * L), v3(10 * L, 0, 0), &box, at(0, 0, 0), 1e-5f * L);
        assert_near(r.fraction, (4.0 - sqrt(0.12)) / 10.0, 2e-6);
        assert_vec_near(r.normal, unit(v3(-(float)sqrt(0.12), 0.3f, 0.2f)), 1e-5f);
        carom_shape small = carom_box(v3(0.5f * L, 0.5f * L, 0.5f * L));
        carom_xform turned = carom_xform_make(v3(-5 * L, 0.2f * L, 0.3f * L), v3(1, 1, 1), 0.6f);
        carom_cast_result b = cast(&small, turned, v3(10 * L, 0, 0), &box, at(0, 0, 0), 1e-5f * L);
        carom_xform turned1 = carom_xform_make(v3(-5, 0.2f, 0.3f), v3(1, 1, 1), 0.6f);
        carom_shape box1 = carom_box(v3(1, 2, 3)), small1 = carom_box(v3(0.5f, 0.5f, 0.5f));
        carom_cast_result b1 = cast(&small1, turned1, v3(10, 0, 0), &box1, at(0, 0, 0), 1e-5f);
        assert_near(b.fraction, b1.fraction, 2e-6);
    }
}

// A sweep a million times longer than the shapes: float spacing of the
// fraction (6e-8) is coarser than the touch tolerance there.
static void test_long_sweep(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 1, 1)), ball = carom_sphere(1.0f);
    carom_cast_result r = cast(&ball, at(-1e6f, 0.5f, 0), v3(2e6f, 0, 0), &box, at(0, 0, 0), 4.0f);
    assert_true(r.hit);
    assert_near(r.fraction, (1e6 - 2.0) / 2e6, 2e-6);
    assert_true(r.iterations < 20);
    // Far from the origin, where float spacing is 1 (so the checks in
    // cast(), which move the shapes in the world, cannot be used).
    r = carom_gjk_shape_cast(&ball, at(1e7f - 50, 0.5f, 0), v3(100, 0, 0), &box, at(1e7f, 0, 0));
    assert_true(r.state == CAROM_DONE && r.hit);
    assert_near(r.fraction, 0.48, 1e-5);
    assert_vec_near(r.normal, v3(-1, 0, 0), 1e-6f);
}

static int sphere_callback(const void* user, vec3s d, vec3s* out) {
    float r = *(const float*)user;
    *out = v3_scale(d, r / sqrtf(v3_len2(d)));
    return -1;
}

// Combinators and a user callback (whose size the cast learns as it goes)
// answer as the built-in shapes they equal.
static void test_combinators_and_callbacks(void** state) {
    (void)state;
    carom_shape box = carom_box(v3(1, 2, 3));
    float radius = 0.5f;
    carom_shape custom = carom_custom(sphere_callback, &radius), ball = carom_sphere(0.5f);
    carom_xform start = at(-5, 2.3f, 3.2f);
    carom_cast_result a = cast(&custom, start, v3(10, 0, 0), &box, at(0, 0, 0), 1e-4f);
    carom_cast_result b = cast(&ball, start, v3(10, 0, 0), &box, at(0, 0, 0), 1e-5f);
    assert_near(a.fraction, b.fraction, 2e-5);
    assert_vec_near(a.normal, b.normal, 1e-2f);
    // A box as the Minkowski sum of a box and a sphere, against its rounded twin.
    carom_shape inner = carom_box(v3(0.5f, 0.5f, 0.5f)), sum = carom_minkowski_sum(&inner, &ball);
    carom_shape rounded = inner;
    rounded.radius = 0.5f;
    carom_xform xt = carom_xform_make(v3(0.3f, 0.2f, 0.1f), v3(1, 2, 0), 0.4f);
    a = cast(&sum, at(-4, 1.2f, 0.4f), v3(8, -0.5f, 0), &box, xt, 1e-4f);
    b = cast(&rounded, at(-4, 1.2f, 0.4f), v3(8, -0.5f, 0), &box, xt, 1e-5f);
    assert_near(a.fraction, b.fraction, 2e-5);
    // The convex hull of a sphere and its translate: the swept sphere, a capsule.
    carom_shape ahead = carom_affine(&ball, glms_mat3_identity(), v3(2, 0, 0)), swept = carom_convex_hull_of(&ball, &ahead);
    carom_shape capsule = carom_capsule(v3(0, 0, 0), v3(2, 0, 0), 0.5f);
    a = cast(&box, at(1.5f, 6, 0.2f), v3(0, -8, 0), &swept, at(0, 0, 0), 1e-4f);
    b = cast(&box, at(1.5f, 6, 0.2f), v3(0, -8, 0), &capsule, at(0, 0, 0), 1e-5f);
    assert_near(a.fraction, b.fraction, 2e-5);
    assert_near(b.fraction, (6.0 - 2.0 - 0.5) / 8.0, 1e-6);
}

// --- random pairs against the double reference -------------------------------------------

// The exact time of impact, independently of carom: in double, the
// configuration space obstacle C = A - B of the two cores is the convex
// hull of every difference of their vertices (qhull), and B moved by t r
// touches A when the point t r is within sigma = r_A + r_B of C. That
// distance d(t) is convex in t (a point moving on a line against a convex
// set), so Newton's method from t = 0 never passes the first root: each
// tangent lies below d. It stops at the root, or when a tangent says the
// sweep ends (or turns away) before reaching sigma.
typedef struct sweep_ref {
    ref_polytope cso;
    double r[3];
    double sigma;
    double scale;
} sweep_ref;

static double sweep_distance(const sweep_ref* s, double t, double* slope) {
    double x[3] = {t * s->r[0], t * s->r[1], t * s->r[2]}, c[3], q[3];
    double d = ref_polytope_segment_distance(&s->cso, x, x, c, q);
    if (slope) {
        *slope = 0.0;
        if (d > 0.0) *slope = ((x[0] - c[0]) * s->r[0] + (x[1] - c[1]) * s->r[1] + (x[2] - c[2]) * s->r[2]) / d;
    }
    return d;
}

// True with the first t of contact and the approach speed -d'(t) just
// before it, false when the sweep never comes within sigma.
static bool sweep_toi(const sweep_ref* s, double* t_out, double* speed) {
    double t = 0.0, slope;
    double d = sweep_distance(s, 0.0, &slope);
    *t_out = 0.0;
    *speed = -slope;
    if (d <= s->sigma) return true;
    for (int k = 0; k < 200; ++k) {
        if (!(slope < 0.0)) return false;
        *speed = -slope;
        double next = t + (d - s->sigma) / -slope;
        if (next > 1.0) return false;
        if (!(next > t)) break;
        t = next;
        d = sweep_distance(s, t, &slope);
        if (d - s->sigma <= 1e-13 * s->scale) break;
    }
    *t_out = t;
    return true;
}

// The least distance over the sweep (golden section: d is convex).
static double sweep_min_distance(const sweep_ref* s) {
    double lo = 0.0, hi = 1.0, g = 0.5 * (sqrt(5.0) - 1.0);
    for (int k = 0; k < 80; ++k) {
        double m1 = hi - g * (hi - lo), m2 = lo + g * (hi - lo);
        if (sweep_distance(s, m1, NULL) <= sweep_distance(s, m2, NULL)) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    return fmin(sweep_distance(s, 0.5 * (lo + hi), NULL), fmin(sweep_distance(s, 0.0, NULL), sweep_distance(s, 1.0, NULL)));
}

// A core's vertices posed in the world, in double.
static int core_points(const carom_shape* s, carom_xform xf, double (*out)[3]) {
    vec3s local[64];
    int n = 0;
    switch (s->type) {
        case CAROM_SHAPE_POINT: local[n++] = s->u.point; break;
        case CAROM_SHAPE_SEGMENT: local[n++] = s->u.segment.a, local[n++] = s->u.segment.b; break;
        case CAROM_SHAPE_TRIANGLE:
            local[n++] = s->u.triangle.a, local[n++] = s->u.triangle.b, local[n++] = s->u.triangle.c;
            break;
        case CAROM_SHAPE_BOX: {
            vec3s h = s->u.half_extents;
            for (int k = 0; k < 8; ++k) local[n++] = v3((k & 1) ? h.x : -h.x, (k & 2) ? h.y : -h.y, (k & 4) ? h.z : -h.z);
            break;
        }
        case CAROM_SHAPE_HULL:
            assert_true(s->u.hull->vertex_count <= 64);
            for (int k = 0; k < s->u.hull->vertex_count; ++k) local[n++] = s->u.hull->vertices[k];
            break;
        default: fail_msg("no reference for shape type %d", s->type);
    }
    double q[4] = {xf.q.x, xf.q.y, xf.q.z, xf.q.w}, m[3][3];
    ref_quat_to_matrix(q, m);
    for (int i = 0; i < n; ++i) {
        for (int r = 0; r < 3; ++r) out[i][r] = m[r][0] * local[i].x + m[r][1] * local[i].y + m[r][2] * local[i].z + xf.p.raw[r];
    }
    return n;
}

static double dist_to(const ref_polytope* p, vec3s point, const double shift[3]) {
    double x[3] = {point.x - shift[0], point.y - shift[1], point.z - shift[2]};
    return ref_polytope_segment_distance(p, x, x, NULL, NULL);
}

typedef struct random_shapes {
    carom_hull hulls[4];
    carom_shape shapes[11];  // 4 hulls, 2 boxes, 2 capsules, a sphere, 2 triangles (as mesh casts see them)
    float size[11];          // bounding radius
} random_shapes;

static void make_random_shapes(random_shapes* rs, ref_rng* rng) {
    for (int h = 0; h < 4; ++h) {
        vec3s pts[20];
        int n = 8 + 4 * h;
        vec3s half = draw_vec(rng, v3(0.2f, 0.2f, 0.2f), v3(1, 1, 1));
        for (int i = 0; i < n; ++i) {
            pts[i] = draw_vec(rng, v3_neg(half), half);
        }
        assert_int_equal(carom_hull_build(&rs->hulls[h], pts, n), CAROM_OK);
        rs->shapes[h] = carom_hull_shape(&rs->hulls[h]);
        rs->size[h] = rs->hulls[h].bounding_radius + sqrtf(v3_len2(rs->hulls[h].centroid));
    }
    rs->shapes[4] = carom_box(v3(0.5f, 0.3f, 0.2f));
    rs->shapes[5] = carom_box(v3(1.0f, 0.1f, 0.8f));
    rs->shapes[6] = carom_capsule(v3(0, 0, -0.5f), v3(0, 0, 0.5f), 0.3f);
    rs->shapes[7] = carom_capsule(v3(-0.2f, 0.1f, 0), v3(0.4f, -0.1f, 0.1f), 0.05f);
    rs->shapes[8] = carom_sphere(0.4f);
    rs->shapes[9] = carom_triangle(v3(-0.6f, -0.4f, 0.1f), v3(0.7f, -0.2f, 0), v3(0, 0.8f, -0.1f));
    vec3s corner[3];
    for (int k = 0; k < 3; ++k) corner[k] = draw_in_cube(rng, 1.0f);
    rs->shapes[10] = carom_triangle(corner[0], corner[1], corner[2]);
    for (int k = 4; k < 11; ++k) {
        carom_aabb b = carom_shape_local_aabb(&rs->shapes[k]);
        rs->size[k] = sqrtf(v3_len2(v3_max(v3_abs(b.min), v3_abs(b.max))));
    }
}

typedef struct cast_stats {
    int cases, hits, misses, start_overlaps, rays;
    int grazing_misses;      // carom misses a sweep the reference says touches (by less than the tolerance)
    int grazing_hits;        // carom hits within the tolerance a sweep the reference says misses
    int slow_hits;           // hits approached at under 5% of the sweep's speed
    int errors_over_1e5;     // non-grazing hits with fraction error over 1e-5
    double max_gap;          // most distance beyond sigma at a hit, over the scale
    double min_gap;          // most penetration (negative) at a hit after t = 0, over the scale
    int iterations, max_iterations;
    double max_error;        // |t_ref - fraction| over non-grazing hits
    double max_error_any;    // over every hit both agree on
} cast_stats;

// One random sweep of `moving` (or, when it is NULL, a ray) against
// `target`, checked against the reference.
static void check_random_sweep(const random_shapes* rs, int ka, int kb, ref_rng* rng, cast_stats* st) {
    const carom_shape* target = &rs->shapes[ka];
    carom_shape point = carom_point(v3(0, 0, 0));
    const carom_shape* moving = kb < 0 ? &point : &rs->shapes[kb];
    float size_b = kb < 0 ? 0.0f : rs->size[kb];
    carom_xform xt = draw_pose(rng, 0.3f);
    carom_xform xm = draw_pose(rng, 0.0f);
    if (kb < 0) xm.q = carom_xform_identity().q;
    // Start 1.2 to 3 (scaled by the sizes) away in a random direction, aim at
    // a random point near the target, and travel 0.3 to 2 times that far;
    // one case in ten starts close (often overlapping), one in twenty stands
    // still and one in twenty moves off at random.
    vec3s dir = draw_direction(rng);
    float reach = rs->size[ka] + size_b;
    float dist = reach * draw(rng, 1.2, 3.0);
    int kind = (int)(ref_rng_next(rng) % 20);
    if (kind < 2) dist = reach * draw(rng, 0.0, 0.8);
    xm.p = v3_mad(xt.p, dir, dist);
    float off = 0.4f * reach;
    vec3s aim = v3_add(xt.p, draw_in_cube(rng, off));
    vec3s translation = v3_scale(v3_sub(aim, xm.p), draw(rng, 0.7, 2.0));
    if (kind == 2) translation = v3(0, 0, 0);
    if (kind == 3) translation = draw_in_cube(rng, 3.0f);

    carom_cast_result r;
    if (kb < 0) {
        carom_ray q = {xm.p, translation};
        r = carom_gjk_raycast(target, xt, q);
        st->rays++;
    } else {
        r = carom_gjk_shape_cast(moving, xm, translation, target, xt);
    }
    st->cases++;
    assert_int_equal(r.state, CAROM_DONE);
    st->iterations += r.iterations;
    if (r.iterations > st->max_iterations) st->max_iterations = r.iterations;

    // The reference sweep.
    static double pa[64][3], pb[64][3], diff[64 * 64][3];
    int na = core_points(target, xt, pa), nb = core_points(moving, xm, pb);
    for (int i = 0; i < na; ++i) {
        for (int j = 0; j < nb; ++j) {
            for (int c = 0; c < 3; ++c) diff[i * nb + j][c] = pa[i][c] - pb[j][c];
        }
    }
    sweep_ref s = {.r = {translation.x, translation.y, translation.z}, .sigma = (double)target->radius + moving->radius};
    assert_true(ref_polytope_build(&s.cso, (const double(*)[3])diff, na * nb) >= 0);
    float scale = reach + sqrtf(v3_len2(v3_sub(xm.p, xt.p))) + sqrtf(v3_len2(translation));
    s.scale = scale;
    // carom's touch tolerance is 1e-6 of about this scale; allow twice it
    // and float rounding of the poses.
    const double tol = 4e-6 * scale;
    double t_ref, speed;
    bool ref_hit = sweep_toi(&s, &t_ref, &speed);
    double len = sqrt(v3_len2(translation));

    if (!r.hit) {
        st->misses++;
        // A miss is right unless the sweep comes clearly within sigma.
        if (ref_hit) {
            double least = sweep_min_distance(&s);
            if (least < s.sigma - tol) {
                fail_msg("case %d (%d vs %d): missed, reference hits at %.9g, depth %g", st->cases, kb, ka, t_ref,
                         s.sigma - least);
            }
            st->grazing_misses++;
        }
    } else {
        st->hits++;
        double at_hit = sweep_distance(&s, r.fraction, NULL);
        st->max_gap = fmax(st->max_gap, (at_hit - s.sigma) / scale);
        if (r.fraction > 0.0f) {
            // Never past the first contact, but for carom's float rounding.
            st->min_gap = fmin(st->min_gap, (at_hit - s.sigma) / scale);
            if (!(at_hit >= s.sigma - 1e-6 * scale)) {
                fail_msg("case %d (%d vs %d): penetrating by %g at fraction %.9g", st->cases, kb, ka, s.sigma - at_hit,
                         (double)r.fraction);
            }
        }
        // Touching at the fraction, never clearly past the first contact.
        if (!(fabs(at_hit - s.sigma) <= tol || (r.fraction == 0.0f && at_hit <= s.sigma + tol))) {
            fail_msg("case %d (%d vs %d): distance %.9g at fraction %.9g, want %.9g (reference t %.9g, hit %d)", st->cases,
                     kb, ka, at_hit, (double)r.fraction, s.sigma, t_ref, ref_hit);
        }
        if (!ref_hit) {
            st->grazing_hits++;  // within the tolerance of a sweep that just misses
        } else if (t_ref > 0.0) {
            if (!(r.fraction <= t_ref + 1e-6 + 1e-6 * scale / fmax(speed, 1e-30))) {
                fail_msg("case %d: fraction %.9g after the reference's %.9g", st->cases, (double)r.fraction, t_ref);
            }
            double err = fabs(t_ref - r.fraction);
            st->max_error_any = fmax(st->max_error_any, err);
            // Away from grazing the fraction is within 1e-4 of the sweep.
            if (speed >= 0.05 * len) {
                if (!(err <= 1e-4)) fail_msg("case %d: fraction %.9g, reference %.9g", st->cases, (double)r.fraction, t_ref);
                st->max_error = fmax(st->max_error, err);
                st->errors_over_1e5 += err > 1e-5;
            } else {
                st->slow_hits++;
            }
        }
        if (r.fraction == 0.0f) {
            st->start_overlaps++;
        } else {
            // The normal is a supporting plane's at the contact: every point
            // of C is at least sigma behind the plane through t r.
            vec3s n = r.normal;
            assert_near(v3_len2(n), 1.0, 1e-5);
            double x[3] = {r.fraction * s.r[0], r.fraction * s.r[1], r.fraction * s.r[2]};
            double nx = n.x * x[0] + n.y * x[1] + n.z * x[2], worst = -INFINITY;
            for (int i = 0; i < s.cso.nverts; ++i) {
                worst = fmax(worst, n.x * s.cso.verts[i][0] + n.y * s.cso.verts[i][1] + n.z * s.cso.verts[i][2]);
            }
            if (!(worst <= nx - s.sigma + 1e-5 * scale)) {
                fail_msg("case %d (%d vs %d): normal (%g %g %g) leaves C %g in front of its plane", st->cases, kb, ka,
                         (double)n.x, (double)n.y, (double)n.z, worst - (nx - s.sigma));
            }
            // The point is on the target's surface and on the moving shape's.
            ref_polytope core_a, core_b;
            assert_true(ref_polytope_build(&core_a, (const double(*)[3])pa, na) >= 0);
            assert_true(ref_polytope_build(&core_b, (const double(*)[3])pb, nb) >= 0);
            double zero[3] = {0, 0, 0};
            assert_near(dist_to(&core_a, r.point, zero), target->radius, tol);
            double da = dist_to(&core_b, r.point, x);
            if (!(da <= moving->radius + tol)) fail_msg("case %d: point %g from the moving core", st->cases, da);
            ref_polytope_free(&core_a);
            ref_polytope_free(&core_b);
        }
    }
    ref_polytope_free(&s.cso);
}

// The reference itself, checked on the way: at its time of impact the two
// posed polytopes (not their difference) are sigma apart by
// ref_polytope_distance.
static void check_reference_directly(const random_shapes* rs, ref_rng* rng) {
    int checked = 0;
    for (int i = 0; i < 40; ++i) {
        int ka = (int)(ref_rng_next(rng) % 6), kb = (int)(ref_rng_next(rng) % 6);
        carom_xform xt = draw_pose(rng, 0.3f);
        carom_xform xm = draw_pose(rng, 0.3f);
        xm.p = v3_add(xm.p, v3(-3, 0, 0));
        vec3s translation = v3_add(v3(6, 0, 0), draw_vec(rng, v3(0, -0.1f, -0.1f), v3(0, 0.1f, 0.1f)));
        static double pa[64][3], pb[64][3], diff[64 * 64][3];
        int na = core_points(&rs->shapes[ka], xt, pa), nb = core_points(&rs->shapes[kb], xm, pb);
        for (int a = 0; a < na; ++a) {
            for (int b = 0; b < nb; ++b) {
                for (int c = 0; c < 3; ++c) diff[a * nb + b][c] = pa[a][c] - pb[b][c];
            }
        }
        sweep_ref s = {.r = {translation.x, translation.y, translation.z}, .sigma = 0.0, .scale = 10.0};
        assert_true(ref_polytope_build(&s.cso, (const double(*)[3])diff, na * nb) >= 0);
        double t, speed;
        if (!sweep_toi(&s, &t, &speed)) {
            ref_polytope_free(&s.cso);
            continue;
        }
        checked++;
        for (int b = 0; b < nb; ++b) {
            for (int c = 0; c < 3; ++c) pb[b][c] += t * s.r[c];
        }
        ref_polytope A, B;
        assert_true(ref_polytope_build(&A, (const double(*)[3])pa, na) >= 0);
        assert_true(ref_polytope_build(&B, (const double(*)[3])pb, nb) >= 0);
        assert_near(ref_polytope_distance(&A, &B, NULL, NULL), 0.0, 1e-9);
        // And a little earlier they are apart.
        for (int b = 0; b < nb; ++b) {
            for (int c = 0; c < 3; ++c) pb[b][c] -= 1e-3 * s.r[c];
        }
        ref_polytope_free(&B);
        assert_true(ref_polytope_build(&B, (const double(*)[3])pb, nb) >= 0);
        assert_true(ref_polytope_distance(&A, &B, NULL, NULL) > 1e-6);
        ref_polytope_free(&A);
        ref_polytope_free(&B);
        ref_polytope_free(&s.cso);
    }
    assert_true(checked >= 30);
}

static void test_random_vs_reference(void** state) {
    (void)state;
    ref_rng rng = {20040815};
    random_shapes rs;
    make_random_shapes(&rs, &rng);
    check_reference_directly(&rs, &rng);
    cast_stats st;
    memset(&st, 0, sizeof st);
    const int n = cases_to_run(3000);
    for (int i = 0; i < n; ++i) {
        int ka = (int)(ref_rng_next(&rng) % 11);
        int kb = (int)(ref_rng_next(&rng) % 12) - 1;  // -1: a ray
        check_random_sweep(&rs, ka, kb, &rng, &st);
    }
    print_message("random sweeps: %d (%d rays), %d hits (%d at t = 0, %d slow), %d misses; grazing: %d hits, %d misses; "
                  "fraction error max %.3g (%.3g with slow hits), %d over 1e-5; distance at hits in [%.3g, %.3g] of the scale; "
                  "iterations mean %.2f, max %d\n",
                  st.cases, st.rays, st.hits, st.start_overlaps, st.slow_hits, st.misses, st.grazing_hits,
                  st.grazing_misses, st.max_error, st.max_error_any, st.errors_over_1e5, st.min_gap, st.max_gap, (double)st.iterations / st.cases,
                  st.max_iterations);
    // The cases exercise every outcome, and grazing is rare.
    assert_true(st.hits > st.cases / 3 && st.misses > st.cases / 10);
    assert_true(st.start_overlaps > st.cases / 40);
    assert_true(st.grazing_hits + st.grazing_misses + st.slow_hits < st.cases / 20);
    assert_true(st.max_iterations < CAROM_CAST_MAX_ITERATIONS);
    for (int h = 0; h < 4; ++h) carom_hull_destroy(&rs.hulls[h]);
}

// A 64-gon prism (kind 0, like carom_cylinder(0.5, 0.4)) or pyramid (kind
// 1, like carom_cone(0.5, 0.4)) with its rim at radius 0.4 * grow.
static void build_ngon(carom_hull* hull, int kind, float grow) {
    vec3s pts[2 * 64 + 1];
    int n = 0;
    for (int i = 0; i < 64; ++i) {
        float a = 6.2831853f * (float)i / 64.0f, c = 0.4f * grow * cosf(a), s = 0.4f * grow * sinf(a);
        pts[n++] = v3(c, s, -0.5f);
        if (kind == 0) pts[n++] = v3(c, s, 0.5f);
    }
    if (kind == 1) pts[n++] = v3(0, 0, 0.5f);
    assert_int_equal(carom_hull_build(hull, pts, n), CAROM_OK);
}

static carom_xform pose_bits(float px, float py, float pz, float qx, float qy, float qz, float qw) {
    carom_xform xf = {v3(px, py, pz), {{qx, qy, qz, qw}}};
    return xf;
}

// Regressions, each a sweep against a finely faceted rim where float GJK
// stalls with v's direction tilted (a sliver face: its barycentric weights
// are good to ~1e-5 of its size, so v's direction to that over |v|):
// (a) the support along v came back as a vertex already in the simplex
//     while the bounds were 1.5e-4 apart; that was taken for convergence
//     and reported as a hit 1.5e-4 early. It is a stall now.
// (b) every support plane along the tilted v passed behind the ray point,
//     GJK's remedies did not help, and the cast gave up 8e-4 short
//     (CAROM_MAX_ITERATIONS). A plane along the simplex face's own normal
//     now clips the ray on.
// (c) the support along that face normal was then taken as a bound along
//     v, and its agreement with |v| as convergence: a hit 1.4e-4 early.
static void test_regression_faceted_stalls(void** state) {
    (void)state;
    carom_hull prism, pyramid;
    build_ngon(&prism, 0, 1.0f);
    build_ngon(&pyramid, 1, 1.0f);
    carom_shape sprism = carom_hull_shape(&prism), spyramid = carom_hull_shape(&pyramid);
    carom_shape box = carom_box(v3(0.3f, 0.2f, 0.1f)), cyl = carom_cylinder(0.2f, 0.3f);
    struct {
        const carom_shape* moving;
        const carom_shape* target;
        carom_xform xm, xt;
        vec3s translation;
        float at_least;  // the distance is still above the tolerance before this
    } cases[3] = {
        {&box, &sprism,
         pose_bits(-0x1.0d3092p-2f, -0x1.31e45p+1f, -0x1.5ef3a8p-1f, 0x1.3ed71p-2f, -0x1.598fdcp-2f, 0x1.76ce3ap-5f, -0x1.c63b8ap-1f),
         pose_bits(0x1.0277bap-3f, -0x1.913ef4p-3f, -0x1.ccff8ap-5f, 0x1.bc246ap-2f, 0x1.5d3418p-1f, 0x1.c2991ep-4f, 0x1.2829dep-1f),
         v3(0x1.1652c8p-2f, 0x1.e84486p+1f, 0x1.2f12fcp+0f), 0.4361f},
        {&cyl, &spyramid,
         pose_bits(-0x1.111248p+1f, 0x1.36f6fcp+0f, 0x1.e3ccb2p-2f, 0x1.0ab086p-6f, -0x1.900214p-1f, -0x1.1e06cap-1f, -0x1.1ca73ep-2f),
         pose_bits(-0x1.2a2a3cp-4f, 0x1.88fafap-4f, 0x1.fa08bcp-6f, 0x1.126886p-3f, 0x1.c4d3acp-3f, -0x1.ba6dfp-1f, -0x1.ba2b0cp-2f),
         v3(0x1.b526b4p+1f, -0x1.53fe28p+0f, -0x1.b66d5cp-1f), 0.5093f},
        {&cyl, &spyramid,
         pose_bits(-0x1.b46afap+0f, 0x1.c59faap+0f, -0x1.ce6d5ep-2f, -0x1.936882p-3f, 0x1.ef88p-1f, 0x1.8151b6p-5f, -0x1.31b93p-3f),
         pose_bits(0x1.8fff34p-3f, 0x1.5fee62p-3f, 0x1.231086p-4f, 0x1.7f7448p-5f, -0x1.211218p-1f, -0x1.f7f442p-5f, 0x1.a4bb7cp-1f),
         v3(0x1.724098p+1f, -0x1.781888p+1f, 0x1.4f5f04p-2f), 0.53576f},
    };
    for (int i = 0; i < 3; ++i) {
        carom_cast_result r = cast(cases[i].moving, cases[i].xm, cases[i].translation, cases[i].target, cases[i].xt, 1e-4f);
        assert_true(r.hit);
        if (!(r.fraction >= cases[i].at_least)) fail_msg("case %d: fraction %.9g, want >= %.9g", i, (double)r.fraction, (double)cases[i].at_least);
        carom_distance_result before = carom_gjk_distance(cases[i].target, cases[i].xt, cases[i].moving,
                                                          moved(cases[i].xm, cases[i].translation, cases[i].at_least - 2e-4f), NULL);
        assert_true(before.distance > 1e-4f);  // the bound above is a real one
    }
    carom_hull_destroy(&prism);
    carom_hull_destroy(&pyramid);
}

// Curved cores: casts against cylinders and cones agree with casts against
// inscribed and circumscribed 64-gon prisms and pyramids (as hulls), whose
// fractions bracket the true one. Curved against polygonal rims is where
// float GJK stalls: two regressions came from here (a stall taken for
// convergence, and a probe's support point taken as a bound along v).
static void test_curved_vs_polygons(void** state) {
    (void)state;
    carom_shape curved[2] = {carom_cylinder(0.5f, 0.4f), carom_cone(0.5f, 0.4f)};
    ref_rng rng = {64};
    int checked = 0, cases = 0, total_iterations = 0, max_iterations = 0;
    for (int k = 0; k < 2; ++k) {
        carom_hull inner, outer;
        build_ngon(&inner, k, 1.0f);
        build_ngon(&outer, k, 1.0f / cosf((float)M_PI / 64.0f));
        carom_shape si = carom_hull_shape(&inner), so = carom_hull_shape(&outer);
        carom_shape movers[3] = {carom_box(v3(0.3f, 0.2f, 0.1f)), carom_capsule(v3(0, 0, -0.3f), v3(0, 0, 0.3f), 0.1f),
                                 carom_cylinder(0.2f, 0.3f)};
        for (int i = 0; i < cases_to_run(300); ++i) {
            carom_shape* m = &movers[i % 3];
            carom_xform xt = draw_pose(&rng, 0.2f);
            carom_xform xm = draw_pose(&rng, 0.0f);
            xm.p = v3_scale(draw_direction(&rng), 2.5f);
            vec3s translation = v3_scale(v3_sub(draw_in_cube(&rng, 0.4f), xm.p), 1.5f);
            carom_cast_result c = cast(m, xm, translation, &curved[k], xt, 1e-3f);
            carom_cast_result lo = cast(m, xm, translation, &so, xt, 1e-3f);  // outer: earlier
            carom_cast_result hi = cast(m, xm, translation, &si, xt, 1e-3f);  // inner: later
            cases++;
            total_iterations += c.iterations;
            if (c.iterations > max_iterations) max_iterations = c.iterations;
            if (hi.hit) assert_true(c.hit);
            if (!lo.hit) assert_false(c.hit);
            // Each fraction may fall short of its exact time by as long as
            // the approach takes to close the touch tolerance (1e-6 of a
            // scale of about 8): allow for that, and skip grazing sweeps.
            float speed = -v3_dot(c.normal, translation), slack = 1e-5f + 1e-5f / speed;
            if (c.hit && hi.hit && c.fraction > 0.0f && speed > 0.05f * sqrtf(v3_len2(translation))) {
                if (!(c.fraction >= lo.fraction - slack && c.fraction <= hi.fraction + slack)) {
                    fail_msg("shape %d case %d: %.9g outside [%.9g, %.9g]", k, i, (double)c.fraction, (double)lo.fraction,
                             (double)hi.fraction);
                }
                checked++;
            }
        }
        carom_hull_destroy(&inner);
        carom_hull_destroy(&outer);
    }
    print_message("curved: %d bracketed hits, iterations mean %.1f, max %d\n", checked, (double)total_iterations / cases, max_iterations);
    assert_true(checked > cases / 3);
}

// --- bad input ------------------------------------------------------------------------------

static void assert_invalid_result(carom_cast_result r) {
    assert_int_equal(r.state, CAROM_INVALID_INPUT);
    assert_false(r.hit);
    assert_true(r.fraction == 0.0f && r.iterations == 0);
    assert_true(v3_len2(r.point) == 0.0f && v3_len2(r.normal) == 0.0f);
}

static void assert_cast_invalid(const carom_shape* m, carom_xform xm, vec3s t, const carom_shape* target, carom_xform xt) {
    assert_invalid_result(carom_gjk_shape_cast(m, xm, t, target, xt));
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
    carom_xform id = carom_xform_identity(), there = at(5, 0, 0);
    vec3s go = v3(-10, 0, 0);
    // NULL and invalid shapes, either side.
    assert_cast_invalid(NULL, there, go, &ok, id);
    assert_cast_invalid(&ok, there, go, NULL, id);
    carom_shape neg = carom_sphere(-0.5f), flat = carom_box(v3(1, 0, 1)), nan_box = carom_box(v3(1, NAN, 1));
    assert_cast_invalid(&neg, there, go, &ok, id);
    assert_cast_invalid(&ok, there, go, &flat, id);
    assert_cast_invalid(&nan_box, there, go, &ok, id);
    carom_shape loop = carom_affine(NULL, glms_mat3_identity(), v3(0, 0, 0));
    loop.u.affine.child = &loop;
    assert_cast_invalid(&ok, there, go, &loop, id);
    carom_hull half;
    memset(&half, 0, sizeof half);
    carom_shape unbuilt = carom_hull_shape(&half);
    assert_cast_invalid(&unbuilt, there, go, &ok, id);
    // Invalid poses.
    carom_xform zero_q;
    memset(&zero_q, 0, sizeof zero_q);
    carom_xform long_q = there;
    long_q.q.w = 1.5f;
    assert_cast_invalid(&ok, zero_q, go, &ok, id);
    assert_cast_invalid(&ok, there, go, &ok, long_q);
    assert_cast_invalid(&ok, at(NAN, 0, 0), go, &ok, id);
    assert_cast_invalid(&ok, there, go, &ok, at(0, INFINITY, 0));
    assert_cast_invalid(&ok, at(2e12f, 0, 0), go, &ok, id);
    // Translations: NaN, infinite, beyond the coordinate limit, or ending
    // beyond it.
    assert_cast_invalid(&ok, there, v3(NAN, 0, 0), &ok, id);
    assert_cast_invalid(&ok, there, v3(0, -INFINITY, 0), &ok, id);
    assert_cast_invalid(&ok, there, v3(0, 0, 2e12f), &ok, id);
    assert_cast_invalid(&ok, at(9e11f, 0, 0), v3(9e11f, 0, 0), &ok, id);
    // A support callback returning NaN.
    carom_shape custom = carom_custom(nan_callback, NULL);
    assert_cast_invalid(&custom, there, go, &ok, id);
    assert_cast_invalid(&ok, there, go, &custom, id);

    // Rays: the same classes.
    carom_ray q = {v3(5, 0, 0), go};
    assert_invalid_result(carom_gjk_raycast(NULL, id, q));
    assert_invalid_result(carom_gjk_raycast(&neg, id, q));
    assert_invalid_result(carom_gjk_raycast(&ok, long_q, q));
    assert_invalid_result(carom_gjk_raycast(&ok, at(0, NAN, 0), q));
    assert_invalid_result(carom_gjk_raycast(&custom, id, q));
    carom_ray bad[5] = {{v3(NAN, 0, 0), go}, {v3(5, 0, 0), v3(0, NAN, 0)}, {v3(INFINITY, 0, 0), go},
                        {v3(0, 0, 1.5e12f), go}, {v3(5e11f, 0, 0), v3(6e11f, 0, 0)}};
    for (int i = 0; i < 5; ++i) assert_invalid_result(carom_gjk_raycast(&ok, id, bad[i]));

    // Valid extremes are not rejected: a quaternion slightly off unit length
    // is normalised, a zero translation is an overlap test.
    carom_xform near_unit = carom_xform_make(v3(5, 0, 0), v3(0, 0, 1), 0.5f);
    near_unit.q.x *= 1.003f, near_unit.q.y *= 1.003f, near_unit.q.z *= 1.003f, near_unit.q.w *= 1.003f;
    carom_cast_result r = carom_gjk_shape_cast(&ok, near_unit, go, &ok, id);
    assert_int_equal(r.state, CAROM_DONE);
    assert_near(r.fraction, 0.3, 1e-6);
    carom_ray still = {v3(0.5f, 0, 0), v3(0, 0, 0)};
    r = carom_gjk_raycast(&ok, id, still);
    assert_true(r.state == CAROM_DONE && r.hit && r.fraction == 0.0f);
    still.origin = v3(1.5f, 0, 0);
    r = carom_gjk_raycast(&ok, id, still);
    assert_true(r.state == CAROM_DONE && !r.hit && r.fraction == 1.0f);
}

// Regression: a cylinder cast onto a triangle 3e-9 across hit 6e-4 of the
// cast late (0.910113 against the exact 0.909497, from a double bisection)
// with a normal 0.998 long. The probe along a stalled face's normal was
// that face's raw cross product, whose squared length was a float denormal
// (about 1e-42), so its length, the clip step and the normal were off. The
// probe is now scaled to a largest component of one. Found by fuzzing.
static void test_cast_thin_face_at_tiny_scale(void** state) {
    (void)state;
    carom_shape tri = carom_triangle(v3(-0x1.68ac18p-34f, 0x1.7bd74ep-33f, 0x1.257098p-37f),
                                     v3(0x1.13f03cp-35f, -0x1.50cd7p-34f, -0x1.83f39ap-35f),
                                     v3(-0x1.4622f8p-35f, -0x1.44401cp-32f, 0x1.055d68p-35f));
    carom_shape cylinder = carom_cylinder(0x1.5d5b64p-32f, 0x1.daac4ap-33f);
    carom_xform at_tri = {v3(0x1.d9ae9ep-37f, -0x1.3708e8p-32f, -0x1.5af6d2p-33f),
                          {{-0x1.44a084p-3f, -0x1.34b0c8p-1f, 0x1.0224bap-1f, -0x1.31fd5ap-1f}}};
    carom_xform at_cylinder = {v3(0x1.0628d6p-31f, 0x1.2930dep-32f, -0x1.eb0c52p-31f),
                               {{-0x1.79249ep-2f, 0x1.66f39p-1f, 0x1.679546p-2f, -0x1.ff8598p-2f}}};
    vec3s move = v3(-0x1.7e17e4p-31f, -0x1.98c84ep-32f, 0x1.2199cp-31f);
    carom_cast_result r = carom_gjk_shape_cast(&cylinder, at_cylinder, move, &tri, at_tri);
    assert_int_equal(r.state, CAROM_DONE);
    assert_true(r.hit);
    const float exact = 0.909496981f;
    if (!(r.fraction <= exact + 1e-6f && r.fraction >= exact - 1e-4f)) {
        fail_msg("fraction %.9f, exact %.9f", (double)r.fraction, (double)exact);
    }
    float len = sqrtf(v3_len2(r.normal));
    if (!(fabsf(len - 1.0f) <= 1e-5f)) fail_msg("normal %.7f long", (double)len);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ray_sphere),
        cmocka_unit_test(test_ray_box),
        cmocka_unit_test(test_ray_capsule),
        cmocka_unit_test(test_ray_cylinder_and_cone),
        cmocka_unit_test(test_random_rays_analytic),
        cmocka_unit_test(test_sphere_cast_box),
        cmocka_unit_test(test_box_cast_box),
        cmocka_unit_test(test_capsule_along_wall),
        cmocka_unit_test(test_grazing),
        cmocka_unit_test(test_start_overlapping),
        cmocka_unit_test(test_zero_translation),
        cmocka_unit_test(test_cast_away),
        cmocka_unit_test(test_tunnelling),
        cmocka_unit_test(test_scale_invariance),
        cmocka_unit_test(test_long_sweep),
        cmocka_unit_test(test_combinators_and_callbacks),
        cmocka_unit_test(test_random_vs_reference),
        cmocka_unit_test(test_curved_vs_polygons),
        cmocka_unit_test(test_regression_faceted_stalls),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_cast_thin_face_at_tiny_scale),
    };
    // CAROM_TEST_FILTER=pattern runs only the matching tests.
    if (getenv("CAROM_TEST_FILTER")) cmocka_set_test_filter(getenv("CAROM_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
