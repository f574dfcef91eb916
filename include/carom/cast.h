/// carom — GJK ray cast and linear shape cast against one posed convex shape
/// (van den Bergen, "Ray Casting against General Convex Objects with
/// Application to Continuous Collision Detection", 2004).
///
/// A shape cast is a ray cast in configuration space: the moving shape B
/// translated by t * r touches the static target A when t * r reaches the
/// configuration space obstacle A - B. GJK runs on that obstacle from the
/// ray's start; every support plane that separates the current ray point
/// from it clips the ray, moving the point forward to the plane, until the
/// point is within the touch tolerance of the obstacle (a hit) or the ray
/// leaves the plane behind or passes t = 1 (a miss). Rounded shapes are cast
/// as their cores with the sum of the radii as the separation that counts as
/// contact, so spheres and capsules are exact, not sampled.
///
/// Tolerances, all relative to the sweep's scale s: the sum of the two
/// shapes' extents (radii included), the distance between their origins and
/// the length of the translation.
/// - `fraction` never passes the exact time of impact (up to float rounding
///   of the poses): the shapes are apart for every t below it.
/// - At `fraction` the shapes are within `CAROM_GJK_TOUCH_TOLERANCE` * s of
///   touching, plus float rounding (about another 1e-6 * s) and
///   `CAROM_GJK_RELATIVE_TOLERANCE` of the radii. So `fraction` falls short
///   of the exact time by at most the time the approach takes to close that
///   distance: tiny head-on, longer for a glancing approach. A sweep that
///   grazes a surface within that distance is a hit.
/// - On curved cores (cylinders, cones, user callbacks) float GJK may stall
///   above that; as carom_gjk_distance does, it then accepts a distance up to
///   `CAROM_GJK_FLOOR_TOLERANCE` * s as touching.
/// - A zero translation is an overlap test at t = 0: it never misses a pair
///   carom_gjk_distance calls touching, and hits only pairs within the
///   tolerances above.
///
/// Normals: where the radii add up to at least 1e-3 * s, and at t = 0, the
/// direction between the cores' closest points, as carom_gjk_distance finds
/// it (for a sphere hit head-on, exact; in general it is the normal at the
/// point found, up to the touch distance before the exact one: 1e-3 rad
/// seen for glancing rays). Otherwise the last clipping plane's, a
/// supporting plane through the hit: exact on the faces of polytopes, any
/// normal of the cone at their edges and corners, and on curved cores
/// without radius tilted by up to sqrt(2 h / R) for a touch distance h and
/// a radius of curvature R (1e-2 rad seen on cylinders).
///
/// Both queries validate everything they are handed and report bad input as
/// `CAROM_INVALID_INPUT`; they never allocate, never crash, and stop after at
/// most `CAROM_CAST_MAX_ITERATIONS` support calls.
#ifndef CAROM_CAST_H
#define CAROM_CAST_H

#include "narrow.h"

CAROM_EXTERN_C_BEGIN

/// The cap on support calls in one cast. Casts between polytope cores take
/// about 5 on average and rarely more than 20; curved cores (cylinders,
/// cones) against curved or finely faceted ones about 15 on average and up
/// to about 70, where float GJK creeps along their rims.
#define CAROM_CAST_MAX_ITERATIONS 128

/// Result of carom_gjk_raycast and carom_gjk_shape_cast. Points and normals
/// are in world coordinates.
typedef struct carom_cast_result {
    /// - `CAROM_DONE`: the cast converged; `hit` and the fields below are
    ///   valid.
    /// - `CAROM_INVALID_INPUT`: a NULL or invalid shape, an invalid pose, a
    ///   ray or translation with a NaN, an infinity or a coordinate beyond
    ///   `CAROM_MAX_COORDINATE` (its end point included), or a support point
    ///   that is not finite. `hit` is false and every other field zero.
    /// - `CAROM_MAX_ITERATIONS`: the iteration cap was hit, or float
    ///   rounding stalled GJK above `CAROM_GJK_FLOOR_TOLERANCE`, before the
    ///   tolerance was met. `hit` is true and `fraction` is still a lower
    ///   bound on the time of impact (the shapes are apart below it, so it
    ///   is safe to move to), but the shapes may not touch there. `normal`
    ///   and `point` are the best found, as for a hit.
    carom_query_state state;
    /// The shapes touch at some t in [0, 1] (within the touch tolerance).
    bool hit;
    /// Time of impact in [0, 1], as a fraction of the translation: 0 when
    /// the shapes touch or overlap at the start; 1 on a miss (the whole
    /// translation is free).
    float fraction;
    /// World contact point at the time of impact, on the target's surface
    /// (its radius included). When the shapes overlap at the start, a point
    /// inside both. Zero without a hit.
    vec3s point;
    /// World unit normal at impact, pointing from the target towards the
    /// moving shape (for a ray: the target's outward surface normal). At
    /// t = 0 with only the radii overlapping (or touching) it is the
    /// direction between the cores' closest points, which lets a caller see
    /// whether the motion leaves the contact. Zero without a hit, and at
    /// t = 0 when the cores themselves touch or overlap (no direction known).
    vec3s normal;
    /// Support calls made.
    int iterations;
} carom_cast_result;

/// Ray cast against one posed convex shape: the first point of
/// `ray.origin + t * ray.translation`, t in [0, 1] (both world), within the
/// touch tolerance of `shape` at pose `xf`. It is the shape cast of a point,
/// with the same tolerances. A ray starting inside or on the shape hits at
/// fraction 0 (normal as for any start overlap: zero inside the core, the
/// direction from the core to the origin inside the radius); a zero
/// translation tests the origin point alone. States as in
/// carom_cast_result.
CAROM_API carom_cast_result carom_gjk_raycast(const carom_shape* shape, carom_xform xf, carom_ray ray);

/// Linear shape cast: `moving` at pose `xf_moving` translated by
/// `translation` (world) over t in [0, 1], against `target` at `xf_target`
/// (static). Hit when their distance falls to the touch tolerance (a moving
/// shape that would pass right through a thin target within the step hits
/// it). Shapes touching or overlapping at t = 0 give a hit with fraction 0,
/// whatever the direction of travel; a zero translation is that overlap test
/// alone. No rotation during the sweep. States as in carom_cast_result.
CAROM_API carom_cast_result carom_gjk_shape_cast(const carom_shape* moving, carom_xform xf_moving,
                                                 vec3s translation, const carom_shape* target,
                                                 carom_xform xf_target);

CAROM_EXTERN_C_END

#endif
