/// carom — base types shared by every area: status codes, query states,
/// poses, boxes, rays, the allocator and assert hooks.
///
/// Conventions for the whole API:
/// - Units are the caller's (metres, say); every tolerance below is either
///   dimensionless (relative to the size of the shapes involved) or in those
///   units, and says which.
/// - Math types are cglm's struct API (`vec3s`, `versors`, `mat3s`), passed and
///   returned by value. Quaternions are stored x, y, z, w (cglm's order).
/// - Create and build calls return a `carom_status`. Queries never fail
///   with a status: their result carries a `carom_query_state`.
#ifndef CAROM_BASE_H
#define CAROM_BASE_H

#include <stdbool.h>
#include <stddef.h>

#include <cglm/struct.h>

#ifdef __cplusplus
#define CAROM_EXTERN_C_BEGIN extern "C" {
#define CAROM_EXTERN_C_END }
#else
#define CAROM_EXTERN_C_BEGIN
#define CAROM_EXTERN_C_END
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CAROM_API __attribute__((visibility("default")))
#else
#define CAROM_API
#endif

CAROM_EXTERN_C_BEGIN

/// Outcome of a create or build call. `CAROM_OK` is zero.
typedef enum carom_status {
    CAROM_OK = 0,
    /// An argument is NULL, NaN, infinite, negative where a size is wanted,
    /// or otherwise outside what the call documents.
    CAROM_ERR_INVALID_ARG,
    /// The input is well-formed but degenerate for the request (for a hull:
    /// fewer than 4 distinct points, or all points coplanar).
    CAROM_ERR_DEGENERATE,
    /// A caller-provided buffer is too small.
    CAROM_ERR_CAPACITY,
    /// The allocator hook returned NULL. Nothing is leaked.
    CAROM_ERR_OUT_OF_MEMORY,
    /// An id handed to an insert is already present.
    CAROM_ERR_DUPLICATE_ID,
    /// An id handed to a move or remove is not present.
    CAROM_ERR_UNKNOWN_ID,
} carom_status;

/// How a query ended. Geometric outcomes (hit, overlap) are separate fields
/// of each result; this says only whether those fields can be trusted.
typedef enum carom_query_state {
    /// The query converged; every field of the result is valid.
    CAROM_DONE = 0,
    /// Something handed in is NULL, NaN, infinite, a negative or zero size, a
    /// quaternion whose length is off by more than `CAROM_QUAT_TOLERANCE`, or
    /// a coordinate beyond `CAROM_MAX_COORDINATE`. The rest of the result is
    /// zero.
    CAROM_INVALID_INPUT,
    /// The iteration cap was hit before the tolerance was met. The result
    /// holds the best answer found so far, which is a valid upper bound on
    /// the distance.
    CAROM_MAX_ITERATIONS,
} carom_query_state;

/// Quaternions may be off unit length by this much (|q|^2 within 1 +- this);
/// they are normalized before use. Beyond it a query reports
/// `CAROM_INVALID_INPUT`.
#define CAROM_QUAT_TOLERANCE 1e-2f

/// The largest magnitude accepted for any coordinate or size; beyond it
/// queries report `CAROM_INVALID_INPUT`. Squares of coordinates must stay
/// well inside float's range for the queries' tolerances to mean anything.
/// Note that float spacing near 1e9 is 64 units: far from the origin the
/// caller's own inputs carry little precision.
#define CAROM_MAX_COORDINATE 1e12f

/// A rigid pose: rotate by `q` (unit quaternion), then translate by `p`.
/// `carom_xform_identity()` is the identity; `{0}` is not (its quaternion is
/// zero and queries reject it).
typedef struct carom_xform {
    vec3s p;
    versors q;
} carom_xform;

/// An axis-aligned box. Valid when min <= max on every axis.
typedef struct carom_aabb {
    vec3s min;
    vec3s max;
} carom_aabb;

/// A ray or segment: points origin + t * translation for t in [0, 1].
typedef struct carom_ray {
    vec3s origin;
    vec3s translation;
} carom_ray;

/// The identity pose.
CAROM_API carom_xform carom_xform_identity(void);

/// A pose from a position and a rotation of `angle` radians about `axis`
/// (any nonzero length; a zero axis gives no rotation).
CAROM_API carom_xform carom_xform_make(vec3s position, vec3s axis, float angle);

/// Maps a point from the pose's local frame to the world: q * v + p. The
/// quaternion is normalised first, so it may be off unit length.
CAROM_API vec3s carom_xform_point(carom_xform xf, vec3s v);

/// Rotates a direction from the pose's local frame to the world: q * v.
CAROM_API vec3s carom_xform_vector(carom_xform xf, vec3s v);

/// True when `xf` has finite components within `CAROM_MAX_COORDINATE` and a
/// quaternion within `CAROM_QUAT_TOLERANCE` of unit length.
CAROM_API bool carom_xform_is_valid(carom_xform xf);

/// True when `box` is finite and min <= max on every axis.
CAROM_API bool carom_aabb_is_valid(carom_aabb box);

/// A short English name for a status ("ok", "out of memory", ...). Never NULL.
CAROM_API const char* carom_status_string(carom_status status);

/// A short English name for a query state ("done", ...). Never NULL.
CAROM_API const char* carom_query_state_string(carom_query_state state);

/// Memory hooks. Every allocation carom makes goes through them; the one
/// exception is qhull's own scratch memory during carom_hull_build, which
/// comes from the C library and is freed before the build returns. `realloc_fn(NULL, n, user)` allocates; `realloc_fn(p, n,
/// user)` resizes; both return memory aligned to at least 16 bytes, or NULL
/// on failure. `free_fn(NULL, user)` must be harmless.
typedef struct carom_allocator {
    void* (*realloc_fn)(void* ptr, size_t size, void* user);
    void (*free_fn)(void* ptr, void* user);
    void* user;
} carom_allocator;

/// Replaces the allocator (NULL restores the C library's). Set it before
/// creating anything: memory must be freed by the allocator that made it.
/// Not thread-safe with respect to concurrent allocation.
CAROM_API void carom_set_allocator(const carom_allocator* allocator);

/// Called when an internal invariant fails (a carom bug, never bad input) or
/// when stb_ds growth cannot get memory, which it has no way to report. The
/// default prints the message and aborts. A hook that returns lets carom
/// continue with undefined results.
typedef void carom_assert_fn(const char* condition, const char* file, int line);

/// Replaces the assert hook (NULL restores the default).
CAROM_API void carom_set_assert_fn(carom_assert_fn* fn);

CAROM_EXTERN_C_END

#endif
