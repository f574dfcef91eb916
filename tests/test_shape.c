// Support mappings, bounding boxes and validation of every shape kind.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "carom/carom.h"
#include "core/internal.h"
#include "reference.h"

#define TOL 1e-5f

static void assert_vec_near(vec3s a, vec3s b, float tol) {
    if (fabsf(a.x - b.x) > tol || fabsf(a.y - b.y) > tol || fabsf(a.z - b.z) > tol) {
        fail_msg("(%g %g %g) != (%g %g %g)", (double)a.x, (double)a.y, (double)a.z, (double)b.x, (double)b.y,
                 (double)b.z);
    }
}

static void test_primitive_supports(void** state) {
    (void)state;
    int f;
    carom_shape sphere = carom_sphere(2.0f);
    assert_vec_near(carom_shape_support(&sphere, v3(0, 3, 4), &f), v3(0, 1.2f, 1.6f), TOL);
    assert_int_equal(f, 0);

    carom_shape box = carom_box(v3(1, 2, 3));
    assert_vec_near(carom_shape_support(&box, v3(-1, 0.5f, -2), &f), v3(-1, 2, -3), TOL);
    assert_int_equal(f, 2);  // sign bits: x-, y+, z-

    carom_shape seg = carom_segment(v3(0, 0, -1), v3(0, 0, 1));
    assert_vec_near(carom_shape_support(&seg, v3(0.1f, 0, -1), &f), v3(0, 0, -1), TOL);
    assert_int_equal(f, 0);

    carom_shape capsule = carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.5f);
    assert_vec_near(carom_shape_support(&capsule, v3(1, 0, 1e-3f), &f), v3(0.5f, 0, 1.0005f), 1e-4f);

    carom_shape tri = carom_triangle(v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0));
    assert_vec_near(carom_shape_support(&tri, v3(-1, 2, 0), &f), v3(0, 1, 0), TOL);
    assert_int_equal(f, 2);

    carom_shape cyl = carom_cylinder(2.0f, 0.5f);
    assert_vec_near(carom_shape_support(&cyl, v3(3, 4, 1), &f), v3(0.3f, 0.4f, 2), TOL);
    assert_vec_near(carom_shape_support(&cyl, v3(0, 0, -1), &f), v3(0, 0, -2), TOL);

    // Cone: apex (0,0,1), base radius 1 at z = -1. Straight up: the apex;
    // sideways: the rim; straight down: the base centre.
    carom_shape cone = carom_cone(1.0f, 1.0f);
    assert_vec_near(carom_shape_support(&cone, v3(0, 0, 1), &f), v3(0, 0, 1), TOL);
    assert_vec_near(carom_shape_support(&cone, v3(1, 0, 0), &f), v3(1, 0, -1), TOL);
    assert_vec_near(carom_shape_support(&cone, v3(0, 0, -1), &f), v3(0, 0, -1), TOL);
    // The slant's normal is (2, 0, 1)/sqrt5: both apex and rim are support
    // points there; slightly upwards picks the apex.
    assert_vec_near(carom_shape_support(&cone, v3(2, 0, 1.01f), &f), v3(0, 0, 1), TOL);

    // A zero direction is answered, not divided by.
    vec3s p = carom_shape_support(&sphere, v3(0, 0, 0), &f);
    assert_true(isfinite(p.x) && isfinite(p.y) && isfinite(p.z));
    p = carom_shape_support(&cyl, v3(0, 0, 0), NULL);
    assert_true(isfinite(p.x));
}

static int sphere_callback(const void* user, vec3s d, vec3s* out) {
    float r = *(const float*)user;
    float len = sqrtf(v3_len2(d));
    *out = v3_scale(d, r / len);
    return -1;
}

static void test_combinators(void** state) {
    (void)state;
    int f;
    carom_shape unit_box = carom_box(v3(1, 1, 1));
    // Scaling the unit box by diag(2, 3, 4) and moving it gives a box.
    mat3s m = glms_mat3_identity();
    m.m00 = 2.0f, m.m11 = 3.0f, m.m22 = 4.0f;
    carom_shape scaled = carom_affine(&unit_box, m, v3(10, 0, 0));
    assert_vec_near(carom_shape_support(&scaled, v3(1, -1, 1), &f), v3(12, -3, 4), TOL);
    assert_int_equal(f, 5);

    // A shear: x' = x + z. The support of the sheared box along x is the
    // corner with x = z = +1.
    mat3s shear = glms_mat3_identity();
    shear.m20 = 1.0f;  // column 2 (z), row 0 (x)
    carom_shape sheared = carom_affine(&unit_box, shear, v3(0, 0, 0));
    assert_vec_near(carom_shape_support(&sheared, v3(1, 0, 0), &f), v3(2, 1, 1), TOL);

    // Minkowski sum of a box and a sphere: a rounded box.
    carom_shape ball = carom_sphere(0.5f);
    carom_shape rounded = carom_minkowski_sum(&unit_box, &ball);
    assert_vec_near(carom_shape_support(&rounded, v3(1, 0, 0), &f), v3(1.5f, 1, 1), TOL);

    // Convex hull of two spheres: a capsule.
    carom_shape left = carom_affine(&ball, glms_mat3_identity(), v3(-2, 0, 0));
    carom_shape right = carom_affine(&ball, glms_mat3_identity(), v3(2, 0, 0));
    carom_shape hull = carom_convex_hull_of(&left, &right);
    assert_vec_near(carom_shape_support(&hull, v3(1, 0.001f, 0), &f), v3(2.5f, 0.0005f, 0), 1e-3f);
    assert_vec_near(carom_shape_support(&hull, v3(0, 1, 0), &f), v3(-2, 0.5f, 0), TOL);

    float r = 3.0f;
    carom_shape custom = carom_custom(sphere_callback, &r);
    assert_vec_near(carom_shape_support(&custom, v3(0, 0, -2), &f), v3(0, 0, -3), TOL);
    assert_int_equal(f, -1);
}

static void test_aabbs(void** state) {
    (void)state;
    carom_shape capsule = carom_capsule(v3(0, 0, -1), v3(0, 0, 1), 0.5f);
    carom_aabb b = carom_shape_local_aabb(&capsule);
    assert_vec_near(b.min, v3(-0.5f, -0.5f, -1.5f), TOL);
    assert_vec_near(b.max, v3(0.5f, 0.5f, 1.5f), TOL);

    // A unit cube turned 45 degrees about z: the world box is sqrt2 wide.
    carom_shape box = carom_box(v3(1, 1, 1));
    carom_xform xf = carom_xform_make(v3(5, 0, 0), v3(0, 0, 1), (float)M_PI_4);
    b = carom_shape_aabb(&box, xf);
    float s = sqrtf(2.0f);
    assert_vec_near(b.min, v3(5 - s, -s, -1), 1e-5f);
    assert_vec_near(b.max, v3(5 + s, s, 1), 1e-5f);

    // A sphere's world box ignores rotation.
    carom_shape ball = carom_sphere(2.0f);
    b = carom_shape_aabb(&ball, carom_xform_make(v3(1, 1, 1), v3(1, 2, 3), 1.0f));
    assert_vec_near(b.min, v3(-1, -1, -1), 1e-5f);
    assert_vec_near(b.max, v3(3, 3, 3), 1e-5f);

    carom_shape cone = carom_cone(1.0f, 2.0f);
    b = carom_shape_local_aabb(&cone);
    assert_vec_near(b.min, v3(-2, -2, -1), TOL);
    assert_vec_near(b.max, v3(2, 2, 1), TOL);
}

static void test_validation(void** state) {
    (void)state;
    assert_false(carom_shape_is_valid(NULL));
    carom_shape s = carom_sphere(-1.0f);
    assert_false(carom_shape_is_valid(&s));
    s = carom_sphere(NAN);
    assert_false(carom_shape_is_valid(&s));
    s = carom_sphere(0.0f);  // a point: valid
    assert_true(carom_shape_is_valid(&s));
    s = carom_box(v3(1, 0, 1));
    assert_false(carom_shape_is_valid(&s));
    s = carom_box(v3(1, -1, 1));
    assert_false(carom_shape_is_valid(&s));
    s = carom_box(v3(1, INFINITY, 1));
    assert_false(carom_shape_is_valid(&s));
    s = carom_box(v3(1, 1, 1));
    assert_true(carom_shape_is_valid(&s));
    s = carom_cylinder(0.0f, 1.0f);
    assert_false(carom_shape_is_valid(&s));
    s = carom_cone(1.0f, -1.0f);
    assert_false(carom_shape_is_valid(&s));
    s = carom_capsule(v3(0, 0, 0), v3(NAN, 0, 0), 1.0f);
    assert_false(carom_shape_is_valid(&s));
    s = carom_triangle(v3(0, 0, 0), v3(1, 0, 0), v3(0, 1e13f, 0));
    assert_false(carom_shape_is_valid(&s));
    s = carom_hull_shape(NULL);
    assert_false(carom_shape_is_valid(&s));
    carom_hull empty;
    memset(&empty, 0, sizeof empty);
    s = carom_hull_shape(&empty);
    assert_false(carom_shape_is_valid(&s));
    s = carom_custom(NULL, NULL);
    assert_false(carom_shape_is_valid(&s));
    s.type = (carom_shape_type)42;
    assert_false(carom_shape_is_valid(&s));

    // Combinators: NULL children, non-finite matrices, cycles.
    s = carom_affine(NULL, glms_mat3_identity(), v3(0, 0, 0));
    assert_false(carom_shape_is_valid(&s));
    carom_shape ball = carom_sphere(1.0f);
    mat3s bad = glms_mat3_identity();
    bad.m11 = NAN;
    s = carom_affine(&ball, bad, v3(0, 0, 0));
    assert_false(carom_shape_is_valid(&s));
    carom_shape loop = carom_minkowski_sum(&ball, NULL);
    loop.u.pair.second = &loop;  // refers to itself
    assert_false(carom_shape_is_valid(&loop));
    // Nesting up to the limit is fine; one more is not.
    carom_shape chain[CAROM_MAX_SHAPE_DEPTH + 2];
    chain[0] = ball;
    for (int i = 1; i < CAROM_MAX_SHAPE_DEPTH + 2; ++i) {
        chain[i] = carom_affine(&chain[i - 1], glms_mat3_identity(), v3(0, 0, 0));
    }
    assert_true(carom_shape_is_valid(&chain[CAROM_MAX_SHAPE_DEPTH]));
    assert_false(carom_shape_is_valid(&chain[CAROM_MAX_SHAPE_DEPTH + 1]));
}

// Randomized: every support point is in the shape and maximal along d among
// samples of the shape (checked with the analytic extent for spheres/boxes).
static void test_support_is_extreme(void** state) {
    (void)state;
    ref_rng rng = {12345};
    carom_shape shapes[] = {carom_box(v3(0.3f, 1.0f, 2.0f)), carom_cylinder(1.0f, 0.5f),
                            carom_cone(0.5f, 1.5f), carom_capsule(v3(-1, 0, 0), v3(1, 1, 0), 0.25f)};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; ++k) {
        for (int i = 0; i < 2000; ++i) {
            vec3s d = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                         (float)ref_rng_uniform(&rng, -1, 1));
            vec3s e = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                         (float)ref_rng_uniform(&rng, -1, 1));
            vec3s p = carom_shape_support(&shapes[k], d, NULL);
            vec3s q = carom_shape_support(&shapes[k], e, NULL);
            // q is a point of the shape, so it cannot be further along d than p.
            assert_true(v3_dot(q, d) <= v3_dot(p, d) + 1e-5f);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primitive_supports), cmocka_unit_test(test_combinators),
        cmocka_unit_test(test_aabbs),              cmocka_unit_test(test_validation),
        cmocka_unit_test(test_support_is_extreme),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
