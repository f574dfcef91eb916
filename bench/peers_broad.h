/// The C interface between the broad-phase benchmark (bench "broad") and its
/// peers: Bullet's btDbvtBroadphase and btAxisSweep3 / bt32BitAxisSweep3
/// (peers_broad_bullet.cpp) and FCL's DynamicAABBTreeCollisionManager,
/// SaPCollisionManager and SpatialHashingCollisionManager
/// (peers_broad_fcl.cpp). Each library lives in its own translation unit,
/// apart from the other peers, so that the heavy C++ headers compile once.
///
/// A scene is n axis-aligned boxes in float, 6 floats per box
/// (min x, min y, min z, max x, max y, max z), with ids 0 .. n-1 given by
/// their position in the array. Every peer follows the same protocol:
///
///   create (n boxes)            -> initial state, pairs() valid at once
///   update (boxes, moved ids)   -> the broad-phase step of one frame
///   pairs  (out, capacity)      -> the overlapping pairs of the current state
///
/// A frame's cost is update() followed by pairs(). pairs() reports the exact
/// pair set: every (a, b) with a < b whose current float boxes overlap,
/// touching included (min <= max on all three axes, both ways), each pair
/// once, in no particular order. Where a library reports candidates
/// (fattened boxes, quantized boxes, shared grid cells, stale cache
/// entries), the peer filters them with that exact test on the current
/// float boxes inside its pair loop, as a user of the library would have
/// to; the filter is part of the timed cost.
///
/// Nothing here allocates or frees except create and destroy, apart from
/// whatever the libraries allocate inside their own update and pair steps.
#ifndef CAROM_BENCH_PEERS_BROAD_H
#define CAROM_BENCH_PEERS_BROAD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The initial scene handed to every peer's create function. Borrowed: the
/// peers copy what they keep.
typedef struct bench_broad_scene {
    const float* boxes;   ///< 6 floats per box: min x y z, max x y z; min <= max
    int n;                ///< box count (> 0); box i has id i
    float world_min[3];   ///< bounds enclosing every box of every frame
    float world_max[3];   ///< (btAxisSweep3 quantizes within them; FCL's
                          ///< spatial hash covers them with its grid)
    float cell_size;      ///< FCL spatial hash only: edge of a grid cell (> 0)
    int hash_table_size;  ///< FCL spatial hash only: buckets; 0 picks
                          ///< max(n, 1000) (FCL's own default is 1000)
} bench_broad_scene;

/// ---- Bullet 3.24 (float) ----

typedef enum bench_broad_bullet_kind {
    /// btDbvtBroadphase with its default btHashedOverlappingPairCache.
    BENCH_BROAD_BULLET_DBVT = 0,
    /// btAxisSweep3 (16-bit quantization, at most 16384 proxies), or
    /// bt32BitAxisSweep3 (32-bit) when n > 16000; the ray-cast accelerator
    /// (a second, btDbvtBroadphase copy of the scene) is disabled.
    BENCH_BROAD_BULLET_SAP,
} bench_broad_bullet_kind;

/// One Bullet broad phase over a scene (opaque).
typedef struct bench_broad_bullet bench_broad_bullet;

/// Creates the broad phase and one proxy per box (createProxy, in id
/// order), then runs one calculateOverlappingPairs so that pairs() answers
/// for the initial boxes. Axis sweep insertion is O(n) per proxy: about 2 s
/// for 10k boxes, which is setup, not timed. Returns NULL when the scene is
/// invalid (n <= 0, no boxes, empty world bounds) or on allocation failure.
/// The caller owns the result and frees it with bench_broad_bullet_destroy.
bench_broad_bullet* bench_broad_bullet_create(bench_broad_bullet_kind kind,
                                              const bench_broad_scene* scene);

/// The implementation's name for the JSON lines: "bullet-dbvt",
/// "bullet-sap" (btAxisSweep3) or "bullet-sap32" (bt32BitAxisSweep3). A
/// static string.
const char* bench_broad_bullet_name(const bench_broad_bullet* peer);

/// One frame's broad-phase step. `boxes` is the full array of the n current
/// boxes (same layout as the scene's); only the ids in `moved_ids`
/// (`moved_count` of them, each in [0, n), no repeats) are read, copied and
/// handed to setAabb; every other proxy keeps its box. Then
/// calculateOverlappingPairs runs (no dispatcher: there is no narrow phase).
/// Never fails.
void bench_broad_bullet_update(bench_broad_bullet* peer, const float* boxes, const int* moved_ids,
                               int moved_count);

/// Walks the overlapping pair cache and writes the exact pairs of the
/// current boxes (a < b, two ints per pair) to `out_pairs`, at most
/// `capacity` pairs (out_pairs may be NULL when capacity is 0). Returns the
/// number of exact pairs, which may exceed `capacity`: then only the first
/// `capacity` were written and a call with a larger array gives them all.
/// The cache is not modified.
int bench_broad_bullet_pairs(bench_broad_bullet* peer, int* out_pairs, int capacity);

/// An estimate of the bytes the library holds for the scene, from element
/// counts times element sizes (Bullet exposes no total): proxies or
/// handles, tree nodes or endpoint arrays, and the pair cache's arrays at
/// their capacity. Allocator overhead is not counted; the peer's own copy
/// of the float boxes (used by the exact filter) is not either.
size_t bench_broad_bullet_memory(const bench_broad_bullet* peer);

/// Frees the broad phase, its proxies and the peer. NULL is allowed.
void bench_broad_bullet_destroy(bench_broad_bullet* peer);

/// ---- FCL 0.7 (double) ----

typedef enum bench_broad_fcl_kind {
    BENCH_BROAD_FCL_DYNAMIC_TREE = 0, ///< fcl::DynamicAABBTreeCollisionManagerd
    BENCH_BROAD_FCL_SAP,              ///< fcl::SaPCollisionManagerd
    BENCH_BROAD_FCL_SPATIAL_HASH,     ///< fcl::SpatialHashingCollisionManager<double> (SimpleHashTable)
} bench_broad_fcl_kind;

/// One FCL broad-phase manager over a scene (opaque).
typedef struct bench_broad_fcl bench_broad_fcl;

/// Creates one fcl::CollisionObjectd per box: an fcl::Boxd of the box's
/// extents translated to its centre (in double), its sides grown by a pad
/// of 2^-17 times the scene's largest coordinate magnitude on each side, so
/// that the object's AABB (computeAABB) holds the float box through the
/// rounding of float translations and touching boxes overlap as objects
/// (peers_broad_fcl.cpp explains why FCL's SaP and spatial hash need it).
/// Registers them all with registerObjects and calls setup(). The spatial
/// hash takes scene->cell_size and, as its scene limits, the world bounds
/// grown by the pad; every box of every frame must lie inside the bounds
/// (FCL keeps objects crossing the limits on side lists and can miss pairs
/// whose overlap lies outside them).
/// Returns NULL when the scene is invalid (n <= 0, no boxes, and for the
/// spatial hash cell_size <= 0 or empty world bounds) or on failure. The
/// caller owns the result and frees it with bench_broad_fcl_destroy.
bench_broad_fcl* bench_broad_fcl_create(bench_broad_fcl_kind kind, const bench_broad_scene* scene);

/// The implementation's name for the JSON lines: "fcl-dtree", "fcl-sap" or
/// "fcl-shash". A static string.
const char* bench_broad_fcl_name(const bench_broad_fcl* peer);

/// One frame's broad-phase step. `boxes` is the full array of the n current
/// boxes; only the ids in `moved_ids` (each in [0, n), no repeats) are read
/// and copied. Each moved object gets its new centre as translation, then
/// computeAABB(): the peer assumes boxes keep their size and only
/// translate, as the bench's scenes do. Then the manager updates:
/// update(moved objects) when some moved, the whole-scene update() when all
/// n moved (FCL's faster path for that case: the dynamic tree refits
/// instead of reinserting, the spatial hash refills its table), nothing
/// when none moved. A box that no longer fits its object (it really changed
/// size) gets new Box sides; the SaP peer then rebuilds its manager, since
/// FCL's SaP cannot resize (slow, but correct). Never fails.
void bench_broad_fcl_update(bench_broad_fcl* peer, const float* boxes, const int* moved_ids,
                            int moved_count);

/// Runs the manager's self collision (collide(cdata, callback)) with a
/// callback that never calls the narrow phase: it tests the two boxes'
/// current float values exactly (the objects' AABBs carry the pad) and
/// records the pair if they overlap, then returns false (continue). Writes at most `capacity` pairs (a < b, two
/// ints per pair) to `out_pairs` (may be NULL when capacity is 0) and
/// returns the number of exact pairs, which may exceed `capacity` (a larger
/// array and a second call give them all).
int bench_broad_fcl_pairs(bench_broad_fcl* peer, int* out_pairs, int capacity);

/// An estimate of the bytes FCL holds for the scene, from element counts
/// times element sizes (FCL exposes no total): the collision objects and
/// their Box geometries (FCL's managers need them), plus the manager's own
/// structure (tree nodes and object table; endpoint lists, interval
/// records, object map and pair list; hash buckets, cell entries, object
/// list and map). Allocator overhead is not counted; the peer's own copy of
/// the float boxes is not either.
size_t bench_broad_fcl_memory(const bench_broad_fcl* peer);

/// Frees the manager, the collision objects and the peer. NULL is allowed.
void bench_broad_fcl_destroy(bench_broad_fcl* peer);

#ifdef __cplusplus
}
#endif

#endif
