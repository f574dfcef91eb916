/// carom — mid phase: triangle meshes with a bounding-volume tree, and the
/// queries that stand on it (box overlap, ray cast, shape cast, mesh against
/// mesh).
///
/// A mesh copies the caller's vertices and triangle indices: the caller's
/// arrays may be freed as soon as `carom_mesh_create` returns. The tree is
/// built once, in the mesh's local frame; every query takes the mesh's pose
/// and brings the query object into that frame, never the mesh out of it.
///
/// Triangles are reported by their index in the caller's index array
/// (triangle i is indices[3i .. 3i+2]). No query allocates; every traversal
/// stack is bounded by the tree depth, which the build caps at
/// `CAROM_MESH_MAX_DEPTH`, so no query can drop a result for lack of stack.
#ifndef CAROM_MID_H
#define CAROM_MID_H

#include "shape.h"

CAROM_EXTERN_C_BEGIN

/// The deepest tree any build produces (root at depth 0). A split that
/// would go deeper (clusters of tiny triangles far from the rest) switches
/// that subtree to splitting by count, which halves it per level.
#define CAROM_MESH_MAX_DEPTH 96

/// The most triangles one mesh may have (2^24, 16.7 million); more gives
/// `CAROM_ERR_CAPACITY`. The boxtree packs child counts into 24 bits.
#define CAROM_MESH_MAX_TRIANGLES (1 << 24)

/// Which bounding-volume tree a mesh builds.
typedef enum carom_tree_kind {
    /// AABB tree split by a binned surface-area heuristic: 16 bins on each
    /// axis of the centroids' box, the cheapest plane of the three. The
    /// mesh keeps it four-wide: a node per binary node two levels down,
    /// holding the boxes of its (up to four) grandchildren, 132 bytes, and
    /// each leaf's slab along its mean normal (20 bytes); about 15 bytes per
    /// triangle with the default leaf size. The default: it answers mesh
    /// against mesh, most first hits and rays through large triangles
    /// faster than the midpoint split, for a build about 2.2 times as long
    /// (README, "Meshes").
    CAROM_TREE_AABB_SAH = 0,
    /// AABB tree split at the middle of the longest axis of the node's box,
    /// each triangle going to the side holding its centroid (the seed
    /// slides). The same four-wide nodes and queries; the fastest build.
    CAROM_TREE_AABB,
    /// Zachmann's boxtree ("Minimal Hierarchical Collision Detection",
    /// 2002): the midpoint splits, but each child stores only the two
    /// faces of its box that differ most from its parent's, each quantized
    /// to 8 bits within the parent's extent (rounded outward, so boxes stay
    /// conservative); the other faces are inherited. 8 bytes per inner
    /// node. Nodes are placed by their triangles' positions, which needs no
    /// child links: a slot for every inner node a tree of one triangle per
    /// leaf would have, so under 8 bytes per triangle whatever the leaf
    /// size, of which the default leaves use about a third (and none when
    /// every triangle fits one leaf).
    CAROM_TREE_BOXTREE,
} carom_tree_kind;

/// How to build a mesh. `{0}` is valid: an SAH-split AABB tree with the
/// default leaf size.
typedef struct carom_mesh_desc {
    carom_tree_kind tree;
    /// Most triangles in one leaf, 1 to 16; 0 means the tree kind's
    /// default (`CAROM_MESH_DEFAULT_LEAF_SIZE` for the AABB trees,
    /// `CAROM_MESH_DEFAULT_BOXTREE_LEAF_SIZE` for the boxtree).
    int leaf_size;
} carom_mesh_desc;

/// Default triangles per AABB-tree leaf.
#define CAROM_MESH_DEFAULT_LEAF_SIZE 8

/// Default triangles per boxtree leaf: against leaves of one, about half
/// the time for all pairs of triangles mesh against mesh, and a build
/// about as fast as the midpoint AABB tree's, for more triangle tests
/// (README, "Meshes", has the measurements and why not three or five).
#define CAROM_MESH_DEFAULT_BOXTREE_LEAF_SIZE 4

/// A triangle mesh and its tree. Create with `carom_mesh_create`, free with
/// `carom_mesh_destroy`. The fields are read-only for the caller.
typedef struct carom_mesh {
    int vertex_count;
    int triangle_count;
    /// Triangles whose area is zero in float (repeated vertices, collinear
    /// vertices). They are kept and indexed, boxes include them, but they
    /// never report a hit: no query has a normal to give for them.
    int degenerate_count;
    carom_tree_kind tree;
    /// Tree nodes: an AABB tree's four-wide nodes (none for a tree of one
    /// leaf), the boxtree's inner nodes (in triangle_count - 1 slots, which
    /// tree_bytes counts; none when every triangle fits one leaf).
    int node_count;
    int depth;          ///< deepest leaf of the binary splits, at most CAROM_MESH_MAX_DEPTH
    size_t tree_bytes;  ///< memory of the tree alone (nodes, and an AABB tree's leaf slabs)
    size_t total_bytes; ///< everything the mesh owns
    carom_aabb bounds;  ///< box of all vertices, local frame
    struct carom_mesh_data* data; ///< private
} carom_mesh;

/// Copies `vertex_count` vertices and `triangle_count` index triples and
/// builds the tree chosen in `desc` (NULL: defaults).
///
/// Returns:
/// - `CAROM_OK`, with `*out` filled;
/// - `CAROM_ERR_INVALID_ARG`: NULL pointers (arrays may be NULL only with a
///   zero count), negative counts, no triangles, a vertex that is NaN, Inf or
///   beyond `CAROM_MAX_COORDINATE`, an index outside [0, vertex_count), or a
///   leaf size outside [0, 16];
/// - `CAROM_ERR_CAPACITY`: more than `CAROM_MESH_MAX_TRIANGLES` triangles;
/// - `CAROM_ERR_OUT_OF_MEMORY`.
/// On any error `*out` is zeroed and nothing is left allocated.
CAROM_API carom_status carom_mesh_create(const vec3s* vertices, int vertex_count, const int* indices,
                                         int triangle_count, const carom_mesh_desc* desc,
                                         carom_mesh* out);

/// Frees what the mesh owns and zeroes it. NULL and zeroed meshes are fine.
CAROM_API void carom_mesh_destroy(carom_mesh* mesh);

/// Moves the vertices (a deforming mesh) and refits the tree: leaf boxes
/// first, then each parent as the box of its children; the tree's topology
/// is kept, so result sets (pairs, triangles, the closest hit) equal those
/// of a fresh build of the moved vertices, while speed degrades as the
/// motion tangles the tree.
/// `vertex_count` must equal the mesh's. The degenerate count is updated.
/// A boxtree's refit borrows 32 bytes per triangle from the allocator while
/// it runs (its nodes' true boxes, gathered leaves first, before the planes
/// are set from the root down); should that allocation fail, it gathers
/// them node by node instead, for the same tree, more slowly. Linear in the
/// triangles: about 1.0 ms for the bunny (75k triangles) with either AABB
/// tree, 2.0 ms with the boxtree (README, "Meshes").
///
/// Returns `CAROM_OK`, or `CAROM_ERR_INVALID_ARG` (NULL, a count mismatch,
/// or a non-finite or too-large vertex), in which case the mesh is
/// unchanged.
CAROM_API carom_status carom_mesh_refit(carom_mesh* mesh, const vec3s* vertices, int vertex_count);

/// The corners of triangle `triangle` (caller's numbering), local frame.
/// Out-of-range indices give three zero vectors.
typedef struct carom_mesh_corners {
    vec3s a, b, c;
} carom_mesh_corners;
CAROM_API carom_mesh_corners carom_mesh_triangle(const carom_mesh* mesh, int triangle);

/// How a query ended and what it cost.
typedef struct carom_mesh_query_result {
    carom_query_state state; ///< CAROM_DONE or CAROM_INVALID_INPUT
    int found;               ///< results reported (pairs, triangles)
    bool stopped;            ///< the callback returned false
    int node_tests;          ///< bounding-volume tests made (boxes; leaf slabs)
    /// Triangles (pairs, for mesh against mesh) reached in leaves and
    /// tested, however early the test settled them.
    int triangle_tests;
} carom_mesh_query_result;

/// Called once per result; return false to stop the query.
typedef bool carom_mesh_triangle_fn(void* user, int triangle);

/// Every triangle of the mesh (at `pose`) that intersects the world box
/// `box`, closed sets: touching counts. The box is brought into the mesh's
/// frame, where it is an oriented box; triangles are tested exactly against
/// it by the separating-axis test (13 axes), in double, on corners taken
/// from the box's centre.
/// Invalid input (NULL mesh or fn, invalid pose or box, or a box whose
/// centre lies beyond `CAROM_MAX_COORDINATE` of the mesh's origin on an axis
/// of the mesh's frame, which never happens when every coordinate of the
/// pose and the box is within a quarter of that limit):
/// `CAROM_INVALID_INPUT` and no calls.
CAROM_API carom_mesh_query_result carom_mesh_overlap_box(const carom_mesh* mesh, carom_xform pose,
                                                         carom_aabb box,
                                                         carom_mesh_triangle_fn* fn, void* user);

/// Where a ray or a cast first meets a mesh.
typedef struct carom_mesh_hit {
    carom_query_state state; ///< CAROM_DONE, CAROM_INVALID_INPUT (and for casts CAROM_MAX_ITERATIONS)
    bool hit;
    int triangle;            ///< caller's triangle index, -1 without a hit
    float fraction;          ///< of the ray's translation, in [0, 1]
    vec3s point;             ///< world contact point
    vec3s normal;            ///< world unit normal: rays, the triangle's, facing the ray's origin; casts, see carom_mesh_shape_cast
} carom_mesh_hit;

/// Which hit a ray cast returns.
typedef enum carom_ray_mode {
    CAROM_RAY_CLOSEST = 0, ///< the hit with the least fraction (ties: lowest triangle index)
    CAROM_RAY_ANY,         ///< the first hit found: cheapest, for visibility tests
} carom_ray_mode;

/// Casts `ray` (world, origin + t * translation for t in [0, 1]) against both
/// sides of every triangle. A ray starting on a triangle hits it at 0. A
/// translation of exactly zero never hits (a point crosses nothing; use
/// carom_mesh_overlap_box for a point query). Invalid input (NULL or
/// invalid mesh, invalid pose or ray, or a ray whose origin or translation
/// in the mesh's frame lies beyond `CAROM_MAX_COORDINATE`, as for
/// carom_mesh_overlap_box) gives `CAROM_INVALID_INPUT` and no hit.
CAROM_API carom_mesh_hit carom_mesh_raycast(const carom_mesh* mesh, carom_xform pose, carom_ray ray,
                                            carom_ray_mode mode);

/// Sweeps the convex `shape` from `shape_pose` along `translation` (world,
/// over t in [0, 1]) and returns its first contact with the mesh (at
/// `pose`): the least fraction over all triangles of the GJK shape cast of
/// cast.h (`carom_gjk_shape_cast`, with its touch tolerance: a shape
/// sliding along the surface within that tolerance touches it at 0), ties
/// to the lowest triangle index. `normal` points from the mesh towards the
/// shape; `point` is on the mesh. A shape touching or overlapping the mesh
/// at the start hits at fraction 0. The shape's swept box walks the tree
/// like a thick ray, nearest node first, and no triangle whose box the
/// sweep reaches later than the best hit so far is cast against.
///
/// `state`: `CAROM_DONE`; `CAROM_INVALID_INPUT` (NULL or invalid mesh or
/// shape, invalid poses, a translation that is not finite or beyond
/// `CAROM_MAX_COORDINATE`, or a shape whose box at the start reaches
/// beyond that limit in the mesh's frame, as for carom_mesh_overlap_box),
/// with no hit; or `CAROM_MAX_ITERATIONS` when the
/// winning triangle's cast hit its iteration cap, in which case `fraction`
/// is still a safe lower bound (see cast.h), but another triangle whose own
/// cast would also have stopped at its cap may have been skipped.
CAROM_API carom_mesh_hit carom_mesh_shape_cast(const carom_mesh* mesh, carom_xform pose,
                                               const carom_shape* shape, carom_xform shape_pose,
                                               vec3s translation);

/// One overlapping triangle pair: a triangle of the first mesh and one of the
/// second (callers' numbering).
typedef struct carom_triangle_pair {
    int a;
    int b;
} carom_triangle_pair;

/// Called once per overlapping pair; return false to stop (first hit).
typedef bool carom_mesh_pair_fn(void* user, carom_triangle_pair pair);

/// Every pair of intersecting triangles between mesh `a` at `pose_a` and
/// mesh `b` at `pose_b` (closed triangles: touching counts), each pair once,
/// in a deterministic order. Both trees are descended together in `a`'s
/// frame, always unfolding the node with the larger box; node pairs are
/// culled by the separating-axis test on the boxes' six face normals, two
/// AABB-tree leaves also along each one's slab (the thin layer of its mean
/// normal that holds its triangles), and triangle pairs decided by an
/// exact-in-structure triangle–triangle test in float.
/// A callback that returns false stops the walk at once; for the first hit
/// alone, carom_mesh_collide_pairs with `first_only` walks in an order
/// that finds one sooner. Any mix of tree kinds works. Invalid input gives
/// `CAROM_INVALID_INPUT` and no calls.
/// Its working memory is on the stack: about 42 KB (caches of prepared
/// triangles, mostly), plus per level of descent about 370 to 430 bytes
/// between two AABB trees (a wide level of either) and 600 where a boxtree
/// takes part (gcc for x86-64 at -O3 and -O2), plus the callback's own.
/// Trees as deep as a build allows would add at most about 41 KB (two AABB
/// trees), 85 KB (a boxtree and an AABB tree) or 114 KB (two boxtrees);
/// two bunnies of 75k triangles add about 10 KB with AABB trees and 33 KB
/// with boxtrees. A first-hit query of carom_mesh_collide_pairs between two
/// AABB trees takes 8.7 KB more for its queue of node pairs, and up to 170
/// bytes more per level (at most about 68 KB; 23 KB for the bunnies).
CAROM_API carom_mesh_query_result carom_mesh_collide(const carom_mesh* a, carom_xform pose_a,
                                                     const carom_mesh* b, carom_xform pose_b,
                                                     carom_mesh_pair_fn* fn, void* user);

/// Collects pairs into `pairs` (capacity `capacity`); `found` in the result
/// counts all of them, so `found > capacity` means the buffer was short.
/// `first_only` stops at the first pair found, and finds one exactly when
/// carom_mesh_collide would report any. Between two AABB trees it walks
/// first where a crossing is likeliest: the deepest box overlaps first, and
/// after a dead end high in the trees, on from the deepest pair it has met
/// anywhere (a queue of 512 node pairs on the stack; when it is full, pairs
/// are walked at once); where the two meshes' boxes nearly coincide (copies
/// of one surface), depth first, the parts the relative pose moves most
/// first. So its pair may not be the first the callback form reports; it
/// is as deterministic. Over random poses of the benchmark's bunnies this
/// takes 19-30% off the mean time to a first hit (README, "Meshes"). Where
/// a boxtree takes part the walk keeps the trees' order.
CAROM_API carom_mesh_query_result carom_mesh_collide_pairs(const carom_mesh* a, carom_xform pose_a,
                                                           const carom_mesh* b, carom_xform pose_b,
                                                           bool first_only,
                                                           carom_triangle_pair* pairs,
                                                           int capacity);

CAROM_EXTERN_C_END

#endif
