// Poses, boxes, status strings and the allocator and assert hooks.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "carom/carom.h"
#include "core/internal.h"

static void test_xform_identity_and_make(void** state) {
    (void)state;
    carom_xform id = carom_xform_identity();
    assert_true(carom_xform_is_valid(id));
    vec3s p = carom_xform_point(id, v3(1, 2, 3));
    assert_true(p.x == 1.0f && p.y == 2.0f && p.z == 3.0f);

    // A quarter turn about z maps x to y, then the translation applies.
    carom_xform xf = carom_xform_make(v3(10, 0, 0), v3(0, 0, 2), (float)M_PI_2);
    vec3s q = carom_xform_point(xf, v3(1, 0, 0));
    assert_true(fabsf(q.x - 10.0f) < 1e-6f && fabsf(q.y - 1.0f) < 1e-6f && fabsf(q.z) < 1e-6f);

    // A zero axis means no rotation rather than NaN.
    carom_xform still = carom_xform_make(v3(0, 0, 0), v3(0, 0, 0), 1.0f);
    assert_true(carom_xform_is_valid(still));
    assert_true(still.q.w == 1.0f);
}

static void test_xform_validation(void** state) {
    (void)state;
    carom_xform xf = carom_xform_identity();
    xf.p.x = NAN;
    assert_false(carom_xform_is_valid(xf));
    xf = carom_xform_identity();
    xf.p.y = INFINITY;
    assert_false(carom_xform_is_valid(xf));
    xf = carom_xform_identity();
    xf.p.z = 2e12f;  // beyond CAROM_MAX_COORDINATE
    assert_false(carom_xform_is_valid(xf));
    xf = carom_xform_identity();
    xf.q.w = 1.001f;  // slightly off unit length: accepted, normalized on use
    assert_true(carom_xform_is_valid(xf));
    xf.q.w = 1.2f;  // far off: rejected
    assert_false(carom_xform_is_valid(xf));
    xf.q.w = 0.0f;  // the zero quaternion of `{0}`
    assert_false(carom_xform_is_valid(xf));
    xf.q.w = NAN;
    assert_false(carom_xform_is_valid(xf));
}

static void test_rotation_of_unnormalized_quaternion(void** state) {
    (void)state;
    // A quaternion 0.4% too long must rotate, not scale.
    versors q = glms_quatv(0.7f, glms_vec3_normalize(v3(1, 2, 3)));
    versors q_long = {{q.x * 1.002f, q.y * 1.002f, q.z * 1.002f, q.w * 1.002f}};
    carom_rot r = carom_rot_from_quat(q_long);
    vec3s v = rot_apply(&r, v3(3, -1, 2));
    assert_true(fabsf(v3_len2(v) - 14.0f) < 1e-4f);
}

static void test_aabb_validation(void** state) {
    (void)state;
    carom_aabb box = {v3(0, 0, 0), v3(1, 1, 1)};
    assert_true(carom_aabb_is_valid(box));
    box.min.x = 2.0f;  // inverted
    assert_false(carom_aabb_is_valid(box));
    box.min.x = NAN;
    assert_false(carom_aabb_is_valid(box));
}

static void test_strings(void** state) {
    (void)state;
    assert_string_equal(carom_status_string(CAROM_OK), "ok");
    assert_string_equal(carom_status_string(CAROM_ERR_OUT_OF_MEMORY), "out of memory");
    assert_string_equal(carom_status_string((carom_status)99), "unknown status");
    assert_string_equal(carom_query_state_string(CAROM_DONE), "done");
    assert_string_equal(carom_query_state_string(CAROM_INVALID_INPUT), "invalid input");
    assert_string_equal(carom_query_state_string((carom_query_state)-3), "unknown state");
}

// --- hooks ----------------------------------------------------------------------

static int g_allocations;
static void* counting_realloc(void* ptr, size_t size, void* user) {
    (void)user;
    if (!ptr) g_allocations++;
    return test_realloc(ptr, size);
}
static void counting_free(void* ptr, void* user) {
    (void)user;
    test_free(ptr);
}

static void test_allocator_hook(void** state) {
    (void)state;
    carom_allocator a = {counting_realloc, counting_free, NULL};
    carom_set_allocator(&a);
    g_allocations = 0;
    void* p = carom_alloc(64);
    assert_non_null(p);
    assert_int_equal(((uintptr_t)p) % 16, 0);
    p = carom_realloc(p, 128);
    carom_free(p);
    carom_free(NULL);  // harmless
    assert_int_equal(g_allocations, 1);
    carom_set_allocator(NULL);
}

static const char* g_condition;
static void recording_assert(const char* condition, const char* file, int line) {
    (void)file;
    (void)line;
    g_condition = condition;
}

static void test_assert_hook(void** state) {
    (void)state;
    carom_set_assert_fn(recording_assert);
    int two = 2;
    CAROM_ASSERT(two == 3);
    assert_string_equal(g_condition, "two == 3");
    carom_set_assert_fn(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xform_identity_and_make),
        cmocka_unit_test(test_xform_validation),
        cmocka_unit_test(test_rotation_of_unnormalized_quaternion),
        cmocka_unit_test(test_aabb_validation),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_allocator_hook),
        cmocka_unit_test(test_assert_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
