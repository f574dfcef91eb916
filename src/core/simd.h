// A four-lane float vector for the hot loops (GJK and support mappings),
// through GCC/clang vector extensions: one register per point where vec3s
// (a union with an array) costs three scalars and shuffles at every call.
// Lane 3 is kept zero, so dot products and lengths need not mask it.
#ifndef CAROM_SIMD_H
#define CAROM_SIMD_H

#include <stdint.h>

#include "core/internal.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

typedef float f4 __attribute__((vector_size(16)));
typedef int32_t i4 __attribute__((vector_size(16)));

static inline f4 f4_make(float x, float y, float z) { return (f4){x, y, z, 0.0f}; }
static inline f4 f4_from(vec3s v) { return (f4){v.x, v.y, v.z, 0.0f}; }
static inline vec3s f4_to(f4 v) { return v3(v[0], v[1], v[2]); }
static inline f4 f4_zero(void) { return (f4){0.0f, 0.0f, 0.0f, 0.0f}; }
// Rows x, y, z, w of four (x, y, z, w) vectors: eight shuffles.
static inline void f4_transpose4(f4 t0, f4 t1, f4 t2, f4 t3, f4 out[4]) {
    f4 lo01 = __builtin_shufflevector(t0, t1, 0, 4, 1, 5);  // x0 x1 y0 y1
    f4 lo23 = __builtin_shufflevector(t2, t3, 0, 4, 1, 5);
    f4 hi01 = __builtin_shufflevector(t0, t1, 2, 6, 3, 7);  // z0 z1 w0 w1
    f4 hi23 = __builtin_shufflevector(t2, t3, 2, 6, 3, 7);
    out[0] = __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5);
    out[1] = __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7);
    out[2] = __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5);
    out[3] = __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7);
}
static inline float f4_dot(f4 a, f4 b) {
    f4 m = a * b;
    return m[0] + m[1] + m[2];
}
static inline float f4_len2(f4 a) { return f4_dot(a, a); }
static inline f4 f4_cross(f4 a, f4 b) {
    f4 a1 = __builtin_shufflevector(a, a, 1, 2, 0, 3);
    f4 b1 = __builtin_shufflevector(b, b, 1, 2, 0, 3);
    f4 c = a * b1 - a1 * b;
    return __builtin_shufflevector(c, c, 1, 2, 0, 3);
}
// |x| with the sign of s, lane by lane.
static inline f4 f4_copysign(f4 x, f4 s) {
    const i4 sign = (i4)(f4){-0.0f, -0.0f, -0.0f, -0.0f};
    return (f4)(((i4)x & ~sign) | ((i4)s & sign));
}
static inline f4 f4_select(i4 mask, f4 a, f4 b) { return (f4)(((i4)a & mask) | ((i4)b & ~mask)); }
static inline f4 f4_abs(f4 a) { return (f4)((i4)a & ~(i4)(f4){-0.0f, -0.0f, -0.0f, -0.0f}); }
// a < b ? a : b and a > b ? a : b lane by lane (b where either is a NaN),
// one instruction each: minps and maxps are defined that way, where the
// select would be a compare and three logic operations.
static inline f4 f4_min(f4 a, f4 b) {
#if defined(__SSE__)
    return (f4)_mm_min_ps((__m128)a, (__m128)b);
#else
    return f4_select(a < b, a, b);
#endif
}
static inline f4 f4_max(f4 a, f4 b) {
#if defined(__SSE__)
    return (f4)_mm_max_ps((__m128)a, (__m128)b);
#else
    return f4_select(a > b, a, b);
#endif
}
// The largest of the first three lanes, as
// a[0] > a[1] ? (a[0] > a[2] ? a[0] : a[2]) : (a[1] > a[2] ? a[1] : a[2])
// (NaNs and signed zeros included) without its branches.
static inline float f4_max3(f4 a) {
    f4 m = f4_max(a, __builtin_shufflevector(a, a, 1, 1, 1, 1));
    return f4_max(m, __builtin_shufflevector(a, a, 2, 2, 2, 2))[0];
}
// Bit i set where lane i (of the first three) has its sign bit clear.
static inline int f4_positive_mask3(f4 a) {
#if defined(__SSE__)
    return ~_mm_movemask_ps((__m128)a) & 7;
#else
    return !signbit(a[0]) | !signbit(a[1]) << 1 | !signbit(a[2]) << 2;
#endif
}
// Bit i set where lane i (of the first three) of a comparison result is true.
static inline int i4_mask3(i4 m) {
#if defined(__SSE__)
    return _mm_movemask_ps((__m128)m) & 7;
#else
    return (m[0] != 0) | (m[1] != 0) << 1 | (m[2] != 0) << 2;
#endif
}
// The same over all four lanes.
static inline int i4_mask4(i4 m) {
#if defined(__SSE__)
    return _mm_movemask_ps((__m128)m);
#else
    return (m[0] != 0) | (m[1] != 0) << 1 | (m[2] != 0) << 2 | (m[3] != 0) << 3;
#endif
}
static inline bool f4_equal3(f4 a, f4 b) { return a[0] == b[0] && a[1] == b[1] && a[2] == b[2]; }

// A rotation kept both ways round, so that R v and R^T v are each three
// broadcast multiply-adds.
typedef struct f4_rot {
    f4 col[3];  // columns of R
    f4 row[3];  // rows of R (columns of R^T)
} f4_rot;

static inline f4 f4_rot_apply(const f4_rot* r, f4 v) {
    return r->col[0] * v[0] + r->col[1] * v[1] + r->col[2] * v[2];
}
static inline f4 f4_rot_apply_transposed(const f4_rot* r, f4 v) {
    return r->row[0] * v[0] + r->row[1] * v[1] + r->row[2] * v[2];
}

#endif
