// Query set-up shared by the tree traversals and, through the tests, by the
// brute-force loops they are checked against: both must transform the query
// and run the leaf test the same way for their result sets to be equal.
#ifndef CAROM_MESH_QUERY_H
#define CAROM_MESH_QUERY_H

#include "core/simd.h"
#include "mid/mesh_internal.h"

// A world box in a mesh's frame: centre, the box's axes as the rows of `rot`
// (the mesh's rotation), half extents.
typedef struct mid_box_query {
    carom_rot rot;
    vec3s abs_row[3];
    vec3s center;
    vec3s half;
    vec3s extent;  // the box's half extents along the mesh's axes
    float slack;
    // For the leaf test, in double: half extents (center and half are the
    // mesh-frame centre and these, rounded), so that a box far longer than
    // its distance from a triangle keeps its near face (in float, y in
    // [-3.6e8, 5] came out as [-3.6e8, 0]); and the box's centre less the
    // pose's origin, in the world's frame.
    double half_d[3], from_pose_d[3];
} mid_box_query;

bool mid_box_query_init(const carom_mesh* mesh, carom_xform pose, carom_aabb box, mid_box_query* q);
// The leaf test of carom_mesh_overlap_box on one triangle (mesh frame).
bool mid_box_query_triangle(const mid_box_query* q, const vec3s v[3]);

// A world ray in a mesh's frame.
typedef struct mid_ray {
    f4 origin4, inv_dir4, slack4;
    carom_rot rot;
    vec3s origin, dir;
    float slack;
} mid_ray;

bool mid_ray_init(const carom_mesh* mesh, carom_xform pose, carom_ray ray, mid_ray* q);

// Mesh b's frame relative to mesh a's: x_a = rot * x_b + trans.
typedef struct mid_pair_frame {
    f4 col[3];         // rot's columns
    f4 trans4;
    carom_rot rot;
    vec3s trans;
    float slack;
} mid_pair_frame;

bool mid_pair_frame_init(const carom_mesh* a, carom_xform pose_a, const carom_mesh* b,
                         carom_xform pose_b, mid_pair_frame* f);
// The leaf test of carom_mesh_collide: triangle va of a against vb of b,
// each in its own mesh's frame.
bool mid_pair_frame_triangles(const mid_pair_frame* f, const vec3s va[3], const vec3s vb[3]);
// The same on four-lane corners (lane 3 zero); the traversal runs the same
// steps on the triangles it keeps prepared.
bool mid_pair_frame_triangles_f4(const mid_pair_frame* f, const f4 va[3], const f4 vb[3]);

// carom_mesh_collide_pairs with first_only into `pair` (may be NULL), its
// queue of node pairs held to `queue_capacity` (clamped to 1 to 512, the
// public query's), so that the tests reach the walk a full queue falls
// back on.
carom_mesh_query_result mid_mesh_first_hit(const carom_mesh* a, carom_xform pose_a,
                                           const carom_mesh* b, carom_xform pose_b,
                                           carom_triangle_pair* pair, int queue_capacity);

// The leaf test of carom_mesh_shape_cast: the shape at `relative` (mesh
// frame) moved by `translation` against triangle v; true on a hit.
struct carom_cast_result;
bool mid_cast_triangle(const carom_shape* shape, carom_xform relative, vec3s translation,
                       const vec3s v[3], struct carom_cast_result* out);

#endif
