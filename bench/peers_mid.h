/// The C interface between bench_mid.c and the mid-phase peers: FCL's
/// bounding-volume-hierarchy meshes (peers_mid_fcl.cpp) and Bullet's
/// quantized BVH triangle mesh (peers_mid_bullet.cpp). Each peer lives in its
/// own translation unit, apart from the convex-shape peers (peers_fcl.cpp,
/// peers_bullet.cpp), so that the heavy C++ headers compile once per file.
///
/// Meshes are handed over once in float (carom's precision): vertices as
/// x y z triples, triangles as index triples. Triangle i of the caller is
/// triangle i of every peer, so pair and hit answers compare directly.
/// Poses are bench_pose (peers.h): rotate by the unit quaternion
/// (x, y, z, w), then translate; double-precision peers widen them exactly.
#ifndef CAROM_BENCH_PEERS_MID_H
#define CAROM_BENCH_PEERS_MID_H

#include <stddef.h>

#include "peers.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A triangle mesh in its local frame. Borrowed: peers copy what they keep.
typedef struct bench_mesh {
    const float* vertices; ///< x y z per vertex
    int vertex_count;
    const int* triangles;  ///< 3 indices per triangle, each in [0, vertex_count)
    int triangle_count;
} bench_mesh;

/// One intersecting triangle pair: triangle `a` of the first mesh and `b` of
/// the second (the callers' numbering).
typedef struct bench_tri_pair {
    int a;
    int b;
} bench_tri_pair;

/// What a peer tree holds, for the build case.
typedef struct bench_tree_info {
    int node_count;      ///< bounding-volume nodes
    size_t tree_bytes;   ///< memory of the tree's node arrays (see each peer)
} bench_tree_info;

/// ---- FCL 0.7 (double) ----

typedef enum bench_fcl_bv {
    BENCH_FCL_OBBRSS = 0, ///< fcl::BVHModel<fcl::OBBRSSd>
    BENCH_FCL_AABB,       ///< fcl::BVHModel<fcl::AABBd>
} bench_fcl_bv;

/// Builds an fcl::BVHModel of the mesh (beginModel, addSubModel, endModel;
/// FCL's default splitter) with vertices widened to double. Returns NULL on
/// failure. This is the step the build case times.
void* bench_fcl_mesh_build(const bench_mesh* mesh, bench_fcl_bv bv);
/// Node count and the bytes of the BV node array (num_bvs *
/// sizeof(fcl::BVNode<BV>)); vertices, triangles and FCL's primitive index
/// array are not counted, as carom's tree_bytes leaves out its own copies.
bench_tree_info bench_fcl_mesh_info(const void* model);
void bench_fcl_mesh_destroy(void* model);

/// A prepared fcl::collide between two models of the same kind at fixed
/// poses: the transforms and a reusable fcl::CollisionResult are made here,
/// outside the timed loop. NULL when the kinds differ or on failure.
void* bench_fcl_collide_prepare(const void* model_a, const bench_pose* pose_a, const void* model_b,
                                const bench_pose* pose_b);
/// One fcl::collide call, no contact details (enable_contact = false).
/// `first_only`: num_max_contacts = 1 (first hit); otherwise
/// num_max_contacts = SIZE_MAX (every pair). Writes up to `capacity` pairs
/// (Contact::b1, Contact::b2) to `out` (may be NULL with capacity 0) and
/// returns how many contacts FCL reported.
int bench_fcl_collide(void* query, int first_only, bench_tri_pair* out, int capacity);
void bench_fcl_collide_destroy(void* query);

/// A prepared refit of a model from bench_fcl_mesh_build (which the refits
/// change: give it a model of its own) to `frame_count` vertex frames of
/// `vertex_count` vertices each (x y z floats), widened to double here, once.
/// NULL on failure.
void* bench_fcl_refit_prepare(void* model, const float* const* frames, int frame_count,
                              int vertex_count);
/// Moves the model's vertices to frame `frame` and refits its tree bottom up,
/// keeping its topology: beginReplaceModel, replaceSubModel,
/// endReplaceModel(refit = true, bottomup = true), FCL's refit for a
/// deforming model (leaves fitted to their triangles, each parent to its
/// children's volumes). Returns 0, or -1 when FCL reports an error.
int bench_fcl_refit(void* refit, int frame);
void bench_fcl_refit_destroy(void* refit);

/// ---- Bullet 3.24 (float) ----

/// Builds a btBvhTriangleMeshShape (quantized AABB compression on) over a
/// btTriangleIndexVertexArray that owns copies of the arrays. Returns NULL
/// on failure. This is the step the build case times.
void* bench_bullet_mesh_build(const bench_mesh* mesh);
/// Node count (quantized nodes in use) and the bytes of the btOptimizedBvh's
/// node arrays: the contiguous quantized nodes (2 per triangle, 16 bytes
/// each), any leaf nodes it still holds, and the subtree headers (sizes, not
/// capacities).
bench_tree_info bench_bullet_mesh_info(const void* shape);
void bench_bullet_mesh_destroy(void* shape);

/// A prepared refit of a shape from bench_bullet_mesh_build (which the refits
/// change) to `frame_count` vertex frames of `vertex_count` vertices each,
/// copied here. NULL on failure.
void* bench_bullet_refit_prepare(void* shape, const float* const* frames, int frame_count,
                                 int vertex_count);
/// Moves the shape's vertices to frame `frame` as a user would (writes them
/// into the vertex array its btTriangleIndexVertexArray reads, and takes
/// their bounds), then btBvhTriangleMeshShape::refitTree over those bounds:
/// the quantization is redone and every node's box refitted, topology kept.
void bench_bullet_refit(void* refit, int frame);
void bench_bullet_refit_destroy(void* refit);

/// A ray in world coordinates: origin + t * translation for t in [0, 1].
typedef struct bench_ray {
    float origin[3];
    float translation[3];
} bench_ray;

/// The closest hit of one ray.
typedef struct bench_ray_hit {
    int hit;         ///< 0 or 1
    int triangle;    ///< the callers' triangle index, -1 without a hit
    float fraction;  ///< of the ray's translation, in [0, 1]
} bench_ray_hit;

/// A prepared batch of ray casts against a Bullet mesh at `pose`. The rays
/// are copied; the pose's inverse is computed here, and each cast brings its
/// ray into the mesh's frame itself (as carom does), inside the timed loop.
void* bench_bullet_raycast_prepare(const void* shape, const bench_pose* pose, const bench_ray* rays,
                                   int count);
/// Casts every ray of the batch with btBvhTriangleMeshShape::performRaycast
/// and a btTriangleRaycastCallback (flags kF_None: both faces) that keeps
/// the closest hit; out[i] answers ray i.
void bench_bullet_raycast(void* query, bench_ray_hit* out);
void bench_bullet_raycast_destroy(void* query);

#ifdef __cplusplus
}
#endif

#endif
