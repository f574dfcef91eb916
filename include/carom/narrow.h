/// carom — narrow phase: GJK distance and boolean intersection between two
/// posed convex shapes.
///
/// Both queries validate everything they are handed (shapes, poses, cache)
/// and report bad input as `CAROM_INVALID_INPUT` in the result; they never
/// allocate, never crash and stop after at most `CAROM_GJK_MAX_ITERATIONS`
/// support calls.
#ifndef CAROM_NARROW_H
#define CAROM_NARROW_H

#include "shape.h"

CAROM_EXTERN_C_BEGIN

/// The cap on GJK iterations (support calls) in one query.
#define CAROM_GJK_MAX_ITERATIONS 64

/// GJK stops when the distance estimate can improve by no more than this
/// fraction of itself (dimensionless). Distances are therefore accurate to
/// about this relative error, and to float precision relative to the size of
/// the shapes and their separation. Curved cores (cylinders, cones) converge
/// slowly, and where float rounding stops the descent first the distance is
/// an upper bound within about 1e-5 of the pair's scale (see below).
#define CAROM_GJK_RELATIVE_TOLERANCE 1e-5f

/// Surfaces closer than this fraction of the pair's scale count as touching:
/// distance 0, overlap. The scale is fixed by the shapes and the pose (the
/// sum of the shapes' extents and the distance between their origins; for
/// user callbacks, the largest support point seen), so both queries decide
/// touching pairs alike, up to rounding at the threshold itself.
#define CAROM_GJK_TOUCH_TOLERANCE 1e-6f

/// Float's floor: GJK in float cannot always close the gap between its upper
/// and lower distance bounds for curved shapes in near contact (seen: an
/// upper bound 1e-5 of the scale above a true contact). When it stops there,
/// with the lower bound not proving separation and the upper bound within
/// this fraction of the pair's scale, the pair counts as touching.
#define CAROM_GJK_FLOOR_TOLERANCE 1e-4f

/// Per-pair memory that lets GJK start where the last query ended. Owned by
/// the caller, one per shape pair and order; zero-initialise it (`{0}`) before
/// first use. A cache from another pair, or holding garbage, never changes an
/// answer beyond the tolerances above: indices out of range are ignored,
/// repeated points dropped, and a start that stalls is restarted from
/// scratch. It only costs iterations.
///
/// For shapes whose support points carry vertex indices (points, segments,
/// triangles, boxes, hulls, and affine images of those without radius) the
/// cache keeps the final simplex as index pairs: the next query rebuilds it
/// at the new poses without any support search, and on coherent motion often
/// finishes after one support call, or none when the rebuilt simplex still
/// encloses the origin. Otherwise it keeps the last separating axis.
typedef struct carom_gjk_cache {
    vec3s axis;      ///< last separating axis / search direction, in A's local frame
    int count;       ///< simplex vertices kept, 0 to 4
    int index_a[4];  ///< their vertex indices on A
    int index_b[4];  ///< their vertex indices on B
    int hint_a;      ///< last support vertex on A (hill-climbing start on hulls)
    int hint_b;      ///< last support vertex on B
    int valid;       ///< 0: empty; 2: the last query proved a separating axis (tried first next time); 1: otherwise
} carom_gjk_cache;

/// The core features that carry the closest points: up to 3 feature indices
/// on one shape (1 = vertex, 2 = edge, 3 = face), as returned by the
/// support mapping (-1 for shapes without indices: sphere, cylinder, ...).
/// After GJK recovers from a float stall (about 1 in 1,000 near-contact
/// pairs) one entry may be -1 on any shape: the recovered point is a blend
/// of vertices rather than one of them.
typedef struct carom_witness {
    int count;
    int index[3];
} carom_witness;

/// Result of carom_gjk_distance. Points and normal are in world coordinates.
typedef struct carom_distance_result {
    vec3s point_a;       ///< closest point on A's surface (radius included)
    vec3s point_b;       ///< closest point on B's surface (radius included)
    vec3s normal;        ///< unit separating axis from A to B; zero when overlapping
    float distance;      ///< >= 0; 0 when the shapes touch or overlap
    bool overlap;        ///< shapes touch or overlap (distance == 0)
    int iterations;      ///< support calls made (0 when a cached simplex already answers)
    carom_witness witness_a;
    carom_witness witness_b;
    carom_query_state state;
} carom_distance_result;

/// Distance and closest points between shape `a` at pose `xf_a` and `b` at
/// `xf_b`. Rounded shapes are handled as core + radius.
///
/// When the shapes overlap (their surfaces are within the touch tolerance or
/// interpenetrate) `distance` is 0, `overlap` is true, `normal` is zero, and
/// `point_a == point_b` is a point in both shapes (to the tolerances).
/// Penetration depth is a separate query.
///
/// Sizes and distances between about 1e-12 and 1e11 units are handled alike
/// (the solver rescales internally); accuracy is relative to the pair's
/// scale.
///
/// `cache` may be NULL; otherwise it is read as a warm start and written.
/// States: CAROM_DONE; CAROM_INVALID_INPUT (NULL shape, invalid shape or
/// pose, or a support point that is not finite: a callback returning NaN, or
/// affine maps whose products overflow float); and CAROM_MAX_ITERATIONS (the
/// cap was hit: best answer so far, an upper bound).
CAROM_API carom_distance_result carom_gjk_distance(const carom_shape* a, carom_xform xf_a,
                                                   const carom_shape* b, carom_xform xf_b,
                                                   carom_gjk_cache* cache);

/// Result of carom_gjk_intersect.
typedef struct carom_intersect_result {
    bool overlap;    ///< the shapes touch or overlap
    int iterations;  ///< support calls made; 0 or 1 on coherent motion with a cache
    carom_query_state state;
} carom_intersect_result;

/// Boolean intersection of `a` at `xf_a` and `b` at `xf_b`. Stops as soon as
/// a separating axis is proven (the slides' v.w > 0 test) and writes that axis
/// to `cache`, so that on coherent motion the next call usually proves
/// separation with a single support call. Shapes within the touch tolerance
/// count as overlapping. `cache` may be NULL. States as for
/// carom_gjk_distance.
CAROM_API carom_intersect_result carom_gjk_intersect(const carom_shape* a, carom_xform xf_a,
                                                     const carom_shape* b, carom_xform xf_b,
                                                     carom_gjk_cache* cache);

CAROM_EXTERN_C_END

#endif
