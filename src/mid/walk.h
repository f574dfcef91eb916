// Walking a mesh's tree on four-lane boxes: the node handle traversals use.
// The AABB tree's wide nodes hold their children's boxes; the boxtree
// derives them from the parent's, with the very operations its build used,
// so they round the same way.
#ifndef CAROM_MID_WALK_H
#define CAROM_MID_WALK_H

#include <float.h>
#include <string.h>

#include "core/simd.h"
#include "mid/mesh_internal.h"

// The boxtree is conservative only because every walk recomputes a child's
// box with exactly the operations and roundings of its build. The library
// is built with -ffp-contract=off for that (no fused multiply-adds); excess
// precision (x87) would break it too.
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "carom's mid phase needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0)"
#endif

static const i4 MID_LANES3 = {-1, -1, -1, 0};

// Four floats from three (the fourth, from the next vertex or field, is
// masked to zero): every caller's block has room after the last triple
// (node fields, the mesh's spare vertex).
static inline f4 mid_load3(const float* p) {
    f4 v;
    memcpy(&v, p, sizeof v);
    return (f4)((i4)v & MID_LANES3);
}

static inline f4 mid_broadcast(f4 v, int i) {
    return i == 0 ? __builtin_shufflevector(v, v, 0, 0, 0, 0)
                  : i == 1 ? __builtin_shufflevector(v, v, 1, 1, 1, 1)
                           : __builtin_shufflevector(v, v, 2, 2, 2, 2);
}

static inline bool mid_any3(i4 m) { return i4_mask3(m) != 0; }

// Triangle at tree position p, corners as four-lane vectors.
static inline void mid_load_triangle(const struct carom_mesh_data* d, int p, f4 v[3]) {
    for (int k = 0; k < 3; ++k) v[k] = mid_load3(d->vertices[d->triangles[p][k]].raw);
}

// The box of triangles [first, first + count) (tree order, count >= 1) from
// the mesh's current vertices, as refits need it. Min and max are exact,
// so it is the box any build computes over the same triangles.
static inline void mid_triangles_box(const struct carom_mesh_data* d, int first, int count,
                                     f4* lo, f4* hi) {
    f4 v[3];
    mid_load_triangle(d, first, v);
    *lo = f4_min(v[0], f4_min(v[1], v[2]));
    *hi = f4_max(v[0], f4_max(v[1], v[2]));
    for (int p = first + 1; p < first + count; ++p) {
        mid_load_triangle(d, p, v);
        *lo = f4_min(*lo, f4_min(v[0], f4_min(v[1], v[2])));
        *hi = f4_max(*hi, f4_max(v[0], f4_max(v[1], v[2])));
    }
}

// Where origin + t * dir crosses each axis's pair of faces of the box
// lo..hi grown by `grow`: the nearer t and the farther, lane by lane.
static inline void mid_slab_span(f4 lo, f4 hi, f4 grow, f4 origin, f4 inv_dir, f4* near,
                                 f4* far) {
    f4 a = (lo - grow - origin) * inv_dir;
    f4 b = (hi + grow - origin) * inv_dir;
    *near = f4_min(a, b);
    *far = f4_max(a, b);
}

// Entry parameter of origin + t * dir, t in [0, t_max], into the box
// lo..hi grown by `grow` on every side, or INFINITY when it misses. inv_dir
// holds 1/dir, infinite for a zero component: the slab is then crossed
// everywhere or nowhere. 0 * inf (a NaN) arises only for an origin exactly
// on a grown face with that component zero; the ray then runs outside the
// box proper, by `grow`, and the NaN makes it miss. Lane 3 is left out.
static inline float mid_slab_enter(f4 lo, f4 hi, f4 grow, f4 origin, f4 inv_dir, float t_max) {
    f4 near, far;
    mid_slab_span(lo, hi, grow, origin, inv_dir, &near, &far);
    float t0 = carom_maxf(carom_maxf(near[0], near[1]), carom_maxf(near[2], 0.0f));
    float t1 = carom_minf(carom_minf(far[0], far[1]), carom_minf(far[2], t_max));
    return t0 <= t1 ? t0 : INFINITY;
}

// mid_slab_enter for two boxes at once, bit for bit: their near and far
// distances side by side (rows x, y, z; lanes near of box 0 and 1, far of
// box 0 and 1), then the same maxima and minima, in the same order.
static inline void mid_slab_enter2(const f4 lo[2], const f4 hi[2], f4 grow, f4 origin, f4 inv_dir,
                                   float t_max, float t[2]) {
    f4 near[2], far[2];
    for (int i = 0; i < 2; ++i) {
        mid_slab_span(lo[i], hi[i], grow, origin, inv_dir, &near[i], &far[i]);
    }
    f4 rows[4];
    f4_transpose4(near[0], near[1], far[0], far[1], rows);
    const f4 zero = f4_zero(), limit = {t_max, t_max, t_max, t_max};
    const f4 t0 = f4_max(f4_max(rows[0], rows[1]), f4_max(rows[2], zero));  // lanes 0, 1
    const f4 t1 = f4_min(f4_min(rows[0], rows[1]), f4_min(rows[2], limit));  // lanes 2, 3
    t[0] = t0[0] <= t1[2] ? t0[0] : INFINITY;
    t[1] = t0[1] <= t1[3] ? t0[1] : INFINITY;
}

typedef struct mid_tree {
    const carom_mesh* mesh;
    const struct carom_mesh_data* d;
    const mid_wide_node* wide;    // an AABB tree's nodes; NULL for a boxtree or a one-leaf tree
    const mid_boxtree_node* box;  // NULL for an AABB tree
} mid_tree;

// A node during a walk: its box (mesh frame, lane 3 zero) and where it is.
typedef struct mid_walk_node {
    f4 lo, hi;
    bool leaf;
    int index;  // inner node: wide node or boxtree node; -1 for a leaf
    int first;  // triangles [first, first + count): a leaf's; a boxtree node's range
    int count;
} mid_walk_node;

static inline mid_tree mid_tree_of(const carom_mesh* mesh) {
    bool box = mesh->tree == CAROM_TREE_BOXTREE;
    mid_tree t = {mesh, mesh->data, box ? NULL : mesh->data->wide_nodes,
                  box ? mesh->data->box_nodes : NULL};
    return t;
}

// The root: the box of every triangle, an inner node unless the tree is one
// leaf (an AABB tree without wide nodes, a boxtree of no more triangles
// than a leaf holds).
static inline void mid_walk_root(const mid_tree* t, mid_walk_node* h) {
    h->lo = f4_from(t->d->root_min);
    h->hi = f4_from(t->d->root_max);
    h->first = 0;
    h->count = t->mesh->triangle_count;
    h->leaf = t->box ? h->count <= t->d->leaf_size : !t->wide;
    h->index = h->leaf ? -1 : 0;
}

// For each pair code (MID_FACE_PAIRS), the lane of its first and of its
// second face among the min faces (lo0, lo1) and the max faces (hi0, hi1):
// a face is in one of its two masks, and no two masks of one kind share a
// lane (two faces of one axis are its min and its max).
typedef struct mid_pair_lanes {
    i4 lo0, lo1, hi0, hi1;
} mid_pair_lanes;

#define MID_LANE_OF(face, want_max) \
    {((face) >> 1) == 0 && ((face) & 1) == (want_max) ? -1 : 0, \
     ((face) >> 1) == 1 && ((face) & 1) == (want_max) ? -1 : 0, \
     ((face) >> 1) == 2 && ((face) & 1) == (want_max) ? -1 : 0, 0}
#define MID_PAIR_LANES(f0, f1) \
    {MID_LANE_OF(f0, 0), MID_LANE_OF(f1, 0), MID_LANE_OF(f0, 1), MID_LANE_OF(f1, 1)},
static const mid_pair_lanes MID_PAIR_LANE_MASKS[MID_BOXTREE_PAIRS] = {
    MID_FOR_EACH_FACE_PAIR(MID_PAIR_LANES)};

// A boxtree child's box from its parent's lo..hi: both faces of `pair`
// moved to their quantized planes, read against the parent's box (a pair
// may be the two faces of one axis). The build and every walk call this one
// function, so they agree to the last bit, which keeps boxes conservative.
// Without a branch on which faces move: each lane takes its plane's code
// from the pair's masks, and lanes no face moves keep the parent's bound.
static inline void mid_boxtree_child(f4 lo, f4 hi, unsigned pair, const uint8_t q[2], f4* child_lo,
                                     f4* child_hi) {
    const mid_pair_lanes* m = &MID_PAIR_LANE_MASKS[pair];
    const f4 step = (hi - lo) * (1.0f / MID_BOXTREE_QUANT);
    // Steps up from lo for a min face, down from hi for a max face, as
    // mid_boxtree_plane counts them (255 - q is exact in float).
    const i4 codes = {q[0], q[1], 0, 0};
    const f4 c = __builtin_convertvector(codes, f4);
    const f4 top = {MID_BOXTREE_QUANT, MID_BOXTREE_QUANT, MID_BOXTREE_QUANT, MID_BOXTREE_QUANT};
    const f4 up0 = __builtin_shufflevector(c, c, 0, 0, 0, 0);
    const f4 up1 = __builtin_shufflevector(c, c, 1, 1, 1, 1);
    const f4 down0 = top - up0, down1 = top - up1;
    const f4 from_lo = (f4)(((i4)up0 & m->lo0) | ((i4)up1 & m->lo1));
    const f4 from_hi = (f4)(((i4)down0 & m->hi0) | ((i4)down1 & m->hi1));
    *child_lo = f4_select(m->lo0 | m->lo1, lo + from_lo * step, lo);
    *child_hi = f4_select(m->hi0 | m->hi1, hi - from_hi * step, hi);
}

// The two children of an inner boxtree node, in their slots
// (mid_boxtree_node). A child of no more triangles than a leaf holds is a
// leaf; the build splits every larger range. (An AABB tree is walked
// through its wide nodes, whose lanes hold the children's boxes.)
static inline void mid_walk_children(const mid_tree* t, const mid_walk_node* h, mid_walk_node* k0,
                                     mid_walk_node* k1) {
    const mid_boxtree_node* b = &t->box[h->index];
    int left = (int)(b->packed >> 8);
    int counts[2] = {left, h->count - left};
    unsigned pairs[2] = {(b->packed >> 4) & 15u, b->packed & 15u};
    mid_walk_node* k[2] = {k0, k1};
    for (int i = 0; i < 2; ++i) {
        f4 lo, hi;
        mid_boxtree_child(h->lo, h->hi, pairs[i], &b->plane[2 * i], &lo, &hi);
        k[i]->lo = lo;
        k[i]->hi = hi;
        k[i]->first = h->first + (i ? left : 0);
        k[i]->count = counts[i];
        k[i]->leaf = counts[i] <= t->d->leaf_size;
        k[i]->index = k[i]->leaf ? -1 : h->index + (i ? left : 1);
    }
}

// A segment origin + t * dir, t in [0, 1], fattened by `grow` on every axis
// (a ray's slack, or a cast shape's half extents), to walk a tree with.
typedef struct mid_sweep {
    f4 origin, inv_dir, grow;  // inv_dir = 1 / dir, see mid_slab_enter
    f4 dir;
} mid_sweep;

// Called for each leaf the sweep reaches. `limit` is the least t that can
// still matter (the best hit so far); the callback lowers it as it finds
// hits, and returns true to end the walk.
typedef bool mid_sweep_leaf_fn(void* ctx, const mid_walk_node* leaf, float* limit);

// Walks the tree nearest node first, skipping every node the sweep enters
// after `*limit` (nodes entered exactly at it are visited, so ties can be
// broken by the callback). The stack is bounded by the depth cap.
void mid_sweep_walk(const mid_tree* t, const mid_sweep* s, float* limit, mid_sweep_leaf_fn* leaf,
                    void* ctx);

#endif
