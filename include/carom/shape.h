/// carom — convex shapes and their support mappings.
///
/// Every convex query sees a shape only through its support mapping:
/// support(d) is the point of the shape furthest along d. A shape is a small
/// value: a tagged union of a *core* plus a `radius` that rounds it (the
/// Minkowski sum with a ball). Queries work on the cores and add the radii at
/// the end, so a sphere costs what a point costs and a capsule what a segment
/// costs.
///
/// Local frames: boxes are centred on the origin; cylinders and cones are
/// centred on the origin with their axis along +z (the cone's apex at
/// +half_height, its base disc at -half_height).
///
/// Ownership: a shape borrows what it points at (a hull, child shapes, user
/// data); those must outlive every query that uses the shape.
#ifndef CAROM_SHAPE_H
#define CAROM_SHAPE_H

#include "base.h"

CAROM_EXTERN_C_BEGIN

/// The kinds of shape core.
typedef enum carom_shape_type {
    CAROM_SHAPE_POINT = 0,     ///< the origin; with a radius, a sphere
    CAROM_SHAPE_SEGMENT,       ///< segment a-b; with a radius, a capsule
    CAROM_SHAPE_TRIANGLE,      ///< triangle a-b-c
    CAROM_SHAPE_BOX,           ///< centred box of half extents
    CAROM_SHAPE_CYLINDER,      ///< centred, axis +z
    CAROM_SHAPE_CONE,          ///< centred, axis +z, apex up
    CAROM_SHAPE_HULL,          ///< convex polytope built by carom_hull_build
    CAROM_SHAPE_AFFINE,        ///< child mapped by x -> linear * x + translation
    CAROM_SHAPE_MINKOWSKI_SUM, ///< {x + y : x in first, y in second}
    CAROM_SHAPE_CONVEX_HULL,   ///< convex hull of the union of two shapes
    CAROM_SHAPE_CUSTOM,        ///< a user support callback
    CAROM_SHAPE_TYPE_COUNT
} carom_shape_type;

/// Nesting limit for combinators (affine, Minkowski sum, convex hull). A
/// deeper shape, or one that refers to itself, is invalid input.
#define CAROM_MAX_SHAPE_DEPTH 8

/// A user support mapping: writes to `*out` the point of the shape furthest
/// along `direction` (not necessarily unit, never zero) in the shape's local
/// frame, and returns a feature index (a vertex id, say) or -1. It must be
/// pure: the same direction gives the same point. Non-finite output makes the
/// query report `CAROM_INVALID_INPUT`.
typedef int carom_support_fn(const void* user, vec3s direction, vec3s* out);

/// A face plane of a hull: points x on the face satisfy dot(normal, x) ==
/// offset; `normal` is unit and points out.
typedef struct carom_plane {
    vec3s normal;
    float offset;
} carom_plane;

/// A convex polytope with the topology later stages need: face planes and
/// polygons (SAT, manifolds), unique edge directions (SAT), vertex adjacency
/// (hill-climbing support on large hulls). Built by `carom_hull_build`, freed
/// by `carom_hull_destroy`; all arrays live in one allocation owned by the
/// hull. Treat every field as read-only.
typedef struct carom_hull {
    vec3s* vertices;          ///< the hull's extreme points
    int vertex_count;
    carom_plane* planes;      ///< one per face, coplanar facets merged
    int face_count;
    int* face_first;          ///< face f's vertices: face_vertices[face_first[f] .. face_first[f+1])
    int* face_vertices;       ///< counter-clockwise seen from outside
    vec3s* edge_directions;   ///< unit, one per direction (up to sign)
    int edge_direction_count;
    int edge_count;           ///< number of distinct undirected edges
    int* adjacency_first;     ///< vertex v's neighbours: adjacency[adjacency_first[v] .. adjacency_first[v+1])
    int* adjacency;
    vec3s centroid;           ///< mean of the vertices (inside the hull)
    float bounding_radius;    ///< max distance from centroid to a vertex
    carom_aabb bounds;        ///< local bounding box
    /// Where hill climbing starts: a cube map of 6 faces x 8 x 8 cells, each
    /// holding the vertex furthest along its cell's centre direction, so a
    /// climb on a big hull starts within a few edges of its answer.
    int* start_map;
    /// The vertices again, structure-of-arrays for vectorised support scans:
    /// x[0..n4), y[0..n4), z[0..n4) with n4 = vertex_count rounded up to a
    /// multiple of 4, padded with copies of vertex 0.
    float* scan;
    int scan_count;           ///< n4
    void* block;              ///< the single allocation behind every array
} carom_hull;

/// Builds the convex hull of `count` points (copied, not kept), with qhull's
/// default precision handling: facets coplanar to within rounding (about
/// 1e-15 of the cloud's extent, in double) are merged into polygons, and
/// points that close to a face count as on it. Noisier input keeps its
/// small facets; merge it first if fewer faces are wanted. Vertices within
/// four float epsilons of the hull's size, or one of its largest coordinate,
/// of each other in every coordinate are welded into one (qhull, exact in
/// double, keeps them apart, and their sliver faces do not survive float).
///
/// Returns CAROM_OK; CAROM_ERR_INVALID_ARG when `hull` or `points` is NULL,
/// count < 0, or a coordinate is NaN, infinite or beyond
/// CAROM_MAX_COORDINATE; CAROM_ERR_DEGENERATE when fewer than 4 points are
/// distinct or all are coplanar, after welding (use a triangle, segment or
/// point shape);
/// CAROM_ERR_OUT_OF_MEMORY when the allocator fails. On any error `*hull` is
/// zeroed and nothing leaks. qhull's own scratch memory during the build
/// comes from the C library, not the carom allocator.
CAROM_API carom_status carom_hull_build(carom_hull* hull, const vec3s* points, int count);

/// Frees a hull's memory and zeroes it. NULL and zeroed hulls are fine.
CAROM_API void carom_hull_destroy(carom_hull* hull);

/// A shape: a core and a radius. Make them with the constructors below (or
/// fill the union directly). All sizes are in the caller's units.
typedef struct carom_shape {
    carom_shape_type type;
    float radius; ///< rounding radius added to the core, >= 0
    union {
        vec3s point; ///< CAROM_SHAPE_POINT: the centre (usually the origin)
        struct {
            vec3s a, b;
        } segment;
        struct {
            vec3s a, b, c;
        } triangle;
        vec3s half_extents; ///< CAROM_SHAPE_BOX, each > 0
        struct {
            float half_height, radius; ///< both > 0
        } cylinder, cone;
        const carom_hull* hull;
        struct {
            const struct carom_shape* child;
            mat3s linear; ///< finite; may scale, shear or flatten
            vec3s translation;
        } affine;
        struct {
            const struct carom_shape* first;
            const struct carom_shape* second;
        } pair; ///< CAROM_SHAPE_MINKOWSKI_SUM and CAROM_SHAPE_CONVEX_HULL
        struct {
            carom_support_fn* fn;
            const void* user;
        } custom;
    } u;
} carom_shape;

/// A sphere of `radius` centred on the local origin.
CAROM_API carom_shape carom_sphere(float radius);
/// A capsule: the segment a-b rounded by `radius`.
CAROM_API carom_shape carom_capsule(vec3s a, vec3s b, float radius);
/// A box of half extents `half_extents`, centred on the origin.
CAROM_API carom_shape carom_box(vec3s half_extents);
/// A point (radius 0).
CAROM_API carom_shape carom_point(vec3s p);
/// A segment (radius 0).
CAROM_API carom_shape carom_segment(vec3s a, vec3s b);
/// A triangle (radius 0).
CAROM_API carom_shape carom_triangle(vec3s a, vec3s b, vec3s c);
/// A cylinder along z: from -half_height to +half_height.
CAROM_API carom_shape carom_cylinder(float half_height, float radius);
/// A cone along z: base disc of `radius` at -half_height, apex at +half_height.
CAROM_API carom_shape carom_cone(float half_height, float radius);
/// A shape for a built hull (borrowed).
CAROM_API carom_shape carom_hull_shape(const carom_hull* hull);
/// `child` mapped by x -> linear * x + translation (child borrowed).
CAROM_API carom_shape carom_affine(const carom_shape* child, mat3s linear, vec3s translation);
/// The Minkowski sum of two shapes (both borrowed).
CAROM_API carom_shape carom_minkowski_sum(const carom_shape* first, const carom_shape* second);
/// The convex hull of two shapes (both borrowed), e.g. a shape swept along a
/// translation: carom_convex_hull_of(s, affine(s, I, t)).
CAROM_API carom_shape carom_convex_hull_of(const carom_shape* first, const carom_shape* second);
/// A user shape: `fn(user, d, &out)` is its support mapping.
CAROM_API carom_shape carom_custom(carom_support_fn* fn, const void* user);

/// True when the shape and everything it points at is usable by queries:
/// known type, finite values within CAROM_MAX_COORDINATE, radius >= 0,
/// box/cylinder/cone sizes > 0, non-NULL pointers, a built hull, nesting no
/// deeper than CAROM_MAX_SHAPE_DEPTH.
CAROM_API bool carom_shape_is_valid(const carom_shape* shape);

/// The support point of the whole shape (core plus radius) along `direction`
/// in its local frame. `direction` need not be unit; a zero direction gives
/// the support along +x. If `feature` is not NULL it receives the core's
/// feature index (box corner 0..7 as sign bits x|y<<1|z<<2, hull vertex,
/// segment/triangle vertex, 0 for a point) or -1 where the core has none.
/// The shape must be valid (carom_shape_is_valid); this call does not check.
CAROM_API vec3s carom_shape_support(const carom_shape* shape, vec3s direction, int* feature);

/// The shape's bounding box in its local frame, radius included: exact, from
/// six support calls. The shape must be valid.
CAROM_API carom_aabb carom_shape_local_aabb(const carom_shape* shape);

/// The shape's tight bounding box in the world under pose `xf` (six support
/// calls along the world axes, not the local box rotated). The shape and
/// pose must be valid.
CAROM_API carom_aabb carom_shape_aabb(const carom_shape* shape, carom_xform xf);

CAROM_EXTERN_C_END

#endif
