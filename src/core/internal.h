// Internal helpers shared by every module: allocation, assertions, and the
// few vector operations cglm's struct API spells at length. Not installed.
#ifndef CAROM_INTERNAL_H
#define CAROM_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "carom/base.h"

// For the few hot functions the compiler's size heuristics would not inline
// (the support switch inside GJK's loop).
#if defined(__GNUC__) || defined(__clang__)
#define CAROM_FORCE_INLINE static inline __attribute__((always_inline))
#else
#define CAROM_FORCE_INLINE static inline
#endif

// --- allocation (all memory goes through the user's hooks) -------------------
void* carom_alloc(size_t size);
void* carom_realloc(void* ptr, size_t size);
void carom_free(void* ptr);

// --- assertions (internal invariants only, never caller input) ---------------
void carom_assert_fail(const char* condition, const char* file, int line);
#define CAROM_ASSERT(c) ((c) ? (void)0 : carom_assert_fail(#c, __FILE__, __LINE__))

// --- validation ---------------------------------------------------------------
static inline bool carom_is_finite_in_range(float x) {
    // Written as a positive test so that NaN fails it.
    return fabsf(x) <= CAROM_MAX_COORDINATE;
}
static inline bool carom_vec3_is_valid(vec3s v) {
    return carom_is_finite_in_range(v.x) && carom_is_finite_in_range(v.y) &&
           carom_is_finite_in_range(v.z);
}

// --- short vector helpers -------------------------------------------------------
static inline vec3s v3(float x, float y, float z) {
    vec3s r = {{x, y, z}};
    return r;
}
static inline vec3s v3_add(vec3s a, vec3s b) { return v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline vec3s v3_sub(vec3s a, vec3s b) { return v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline vec3s v3_scale(vec3s a, float s) { return v3(a.x * s, a.y * s, a.z * s); }
static inline vec3s v3_neg(vec3s a) { return v3(-a.x, -a.y, -a.z); }
static inline float v3_dot(vec3s a, vec3s b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline float v3_len2(vec3s a) { return v3_dot(a, a); }
static inline vec3s v3_cross(vec3s a, vec3s b) {
    return v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
static inline vec3s v3_mad(vec3s a, vec3s b, float s) {  // a + b * s
    return v3(a.x + b.x * s, a.y + b.y * s, a.z + b.z * s);
}
// Plain comparisons, not fminf/fmaxf: those are library calls at -O2 (they
// must order NaN), and every caller here has validated its inputs as finite.
static inline float carom_minf(float a, float b) { return a < b ? a : b; }
static inline float carom_maxf(float a, float b) { return a > b ? a : b; }
static inline vec3s v3_min(vec3s a, vec3s b) {
    return v3(carom_minf(a.x, b.x), carom_minf(a.y, b.y), carom_minf(a.z, b.z));
}
static inline vec3s v3_max(vec3s a, vec3s b) {
    return v3(carom_maxf(a.x, b.x), carom_maxf(a.y, b.y), carom_maxf(a.z, b.z));
}
static inline vec3s v3_abs(vec3s a) { return v3(fabsf(a.x), fabsf(a.y), fabsf(a.z)); }
static inline float v3_max_abs(vec3s a) { return fmaxf(fabsf(a.x), fmaxf(fabsf(a.y), fabsf(a.z))); }

// A rotation as a row-major 3x3 matrix: cheaper than a quaternion when the
// same rotation is applied many times (every support call of a query).
typedef struct carom_rot {
    vec3s row[3];
} carom_rot;

static inline vec3s rot_apply(const carom_rot* r, vec3s v) {
    return v3(v3_dot(r->row[0], v), v3_dot(r->row[1], v), v3_dot(r->row[2], v));
}
static inline vec3s rot_apply_transposed(const carom_rot* r, vec3s v) {
    return v3_add(v3_add(v3_scale(r->row[0], v.x), v3_scale(r->row[1], v.y)),
                  v3_scale(r->row[2], v.z));
}
carom_rot carom_rot_from_quat(versors q);

// Vectors of three doubles, for the few sums float cannot carry (slivers,
// points far from the origin); float inputs and their differences are exact
// in double.
static inline double carom_dot_double(const double a[3], const double b[3]) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline void carom_cross_double(const double a[3], const double b[3], double out[3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

// conj(a) b: b's rotation seen from a's frame. Each component of the vector
// part is a difference of like products, so it is exactly zero when a == b
// (cglm's vector form does not cancel exactly): two equal poses are exactly
// one frame.
static inline versors carom_quat_relative(versors a, versors b) {
    versors r;
    r.x = (a.w * b.x - a.x * b.w) - (a.y * b.z - a.z * b.y);
    r.y = (a.w * b.y - a.y * b.w) - (a.z * b.x - a.x * b.z);
    r.z = (a.w * b.z - a.z * b.w) - (a.x * b.y - a.y * b.x);
    r.w = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
    return r;
}

#endif
