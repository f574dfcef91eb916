// The private side of carom_mesh: storage, the two node formats, and the
// node handle every traversal walks with, whichever tree it is.
#ifndef CAROM_MESH_INTERNAL_H
#define CAROM_MESH_INTERNAL_H

#include "carom/mid.h"
#include "core/internal.h"

// Triangle ids keep their degenerate flag in a spare high bit: the mesh caps
// triangle counts at 2^24, and the flag is read wherever the id is.
#define MID_DEGENERATE_BIT (1 << 30)
#define MID_ID_MASK (MID_DEGENERATE_BIT - 1)

// Most triangles in a leaf of either tree (carom_mesh_desc.leaf_size).
#define MID_MAX_LEAF_SIZE 16

// Binary AABB tree node, 32 bytes: the build's scratch, collapsed into the
// four-wide nodes the mesh keeps. A leaf holds triangles [first, first +
// count) of the tree-ordered arrays; an inner node (count == 0) has its
// children at `first` and `first + 1`.
typedef struct mid_aabb_node {
    float min[3];
    int32_t first;
    float max[3];
    int32_t count;
} mid_aabb_node;

// A leaf's slab: every point x of its triangles (own frame) has lo <=
// normal . (x - c) <= hi, c the centre of the leaf's box as its lane holds
// it (mid_wide_node; a one-leaf tree's root box). The normal is the
// leaf's area-weighted mean triangle normal (unit, or (1, 0, 0) when the
// normals cancel), so for the small, nearly flat patch of surface a leaf
// holds, the slab is far thinner than its box. Of the leaf pairs whose
// boxes meet in a mesh-against-mesh query, one slab or the other parts
// about half (bunny poses, four triangles a leaf), before any triangle is
// loaded (mesh_collide.c). Any normal gives a valid slab; a good one
// gives a thin slab.
typedef struct mid_leaf_slab {
    float normal[3];
    float lo, hi;
} mid_leaf_slab;
// Mesh against mesh gathers four slabs into lanes as two loads of four
// floats each, from a slab's first float and from its second.
_Static_assert(sizeof(mid_leaf_slab) == 5 * sizeof(float), "a slab is five packed floats");

// An AABB tree as the mesh keeps it: four-wide nodes, which every query on
// it walks (mesh against mesh, rays, shape casts, box queries). A wide node
// stands for an inner node of the binary tree the build makes and holds the
// boxes of its grandchildren (or of a child itself where that child is a
// leaf), two to four of them, lane by lane, so one node of the other mesh,
// one ray or one box meets all four in a few vector operations. A child is
// a wide node (index >= 0) or a leaf (mid_leaf_ref: its triangle range
// packed into a negative int). An unused lane has centre 0 and half
// extents -MID_WIDE_EMPTY, which the box tests reject without a mask (a
// ray's slab test masks it: negative extents would turn its slabs inside
// out). The root's own box is the mesh data's root_min and root_max; a
// tree of one leaf has no wide node. Each leaf lane names its slab
// (mid_leaf_slab). 132 bytes.
typedef struct mid_wide_node {
    float center[3][4];  // [axis][child]
    float half[3][4];    // half extents: (max - min) * 0.5f of the child's box
    int32_t child[4];
    int32_t count;       // lanes in use, 2 to 4
    // A leaf lane's slab in the mesh's leaf_slabs; 0 for others, which a
    // tree with wide nodes always has (it has two leaves or more): mesh
    // against mesh reads every lane's slab and masks the lanes that are not
    // leaves.
    int32_t slab[4];
} mid_wide_node;

// The slab of lane i of n, a leaf lane.
static inline const mid_leaf_slab* mid_wide_slab(const mid_leaf_slab* slabs,
                                                 const mid_wide_node* n, int i) {
    return &slabs[n->slab[i]];
}

// A leaf child: ~(first << MID_LEAF_COUNT_BITS | (count - 1)), negative for
// any first below CAROM_MESH_MAX_TRIANGLES and count up to
// MID_MAX_LEAF_SIZE.
#define MID_LEAF_COUNT_BITS 4
_Static_assert(MID_MAX_LEAF_SIZE <= 1 << MID_LEAF_COUNT_BITS, "a leaf's count fits its bits");
_Static_assert(CAROM_MESH_MAX_TRIANGLES <= 1 << (31 - MID_LEAF_COUNT_BITS),
               "a leaf's first triangle fits its bits");
static inline int32_t mid_leaf_ref(int first, int count) {
    return ~(int32_t)((uint32_t)first << MID_LEAF_COUNT_BITS | (uint32_t)(count - 1));
}
static inline int mid_leaf_first(int32_t ref) { return (int)((uint32_t)~ref >> MID_LEAF_COUNT_BITS); }
static inline int mid_leaf_count(int32_t ref) {
    return (int)((uint32_t)~ref & ((1u << MID_LEAF_COUNT_BITS) - 1)) + 1;
}

// Far beyond any coordinate a mesh may have (CAROM_MAX_COORDINATE), yet
// finite through the rotations a walk applies.
#define MID_WIDE_EMPTY 1e30f

// Boxtree inner node, 8 bytes. Nodes are in pre-order; a node covers a range
// of the tree-ordered triangles, of which the left child takes the first
// `left_count` (a range of up to the leaf size is a leaf, not a node). A
// range of c triangles owns c - 1 slots, the inner nodes it would have with
// leaves of one: so the left child is the next slot and the right child is
// `left_count` slots further, and no node stores a link. A leaf's slots
// stay unused (zero): with leaves of four, about two thirds of them on the
// bunny and the armadillo. Each child's box is its
// parent's with two of its six faces moved inward: a pair code (one of the
// 15 unordered face pairs) and two planes quantized to 8 bits within the
// parent's extent on each face's axis.
typedef struct mid_boxtree_node {
    uint32_t packed;   // left_count << 8 | left pair << 4 | right pair
    uint8_t plane[4];  // the left child's two planes, then the right child's
} mid_boxtree_node;

#define MID_BOXTREE_QUANT 255.0f
#define MID_BOXTREE_PAIRS 15

// Face code = axis * 2 + (1 for the max face). Pair k moves faces
// MID_FACE_PAIRS[k][0] and [1]. The pairs in order, as one list that every
// table indexed by pair code is made from (X(first face, second face)).
#define MID_FOR_EACH_FACE_PAIR(X)                                                            \
    X(0, 1) X(0, 2) X(0, 3) X(0, 4) X(0, 5) X(1, 2) X(1, 3) X(1, 4) X(1, 5) X(2, 3) X(2, 4) \
    X(2, 5) X(3, 4) X(3, 5) X(4, 5)
#define MID_FACE_PAIR_ENTRY(f0, f1) {f0, f1},
static const uint8_t MID_FACE_PAIRS[MID_BOXTREE_PAIRS][2] = {
    MID_FOR_EACH_FACE_PAIR(MID_FACE_PAIR_ENTRY)};

struct carom_mesh_data {
    // In the order the tree-ordered triangles first use them, so that a
    // leaf's corners lie together in memory; vertex_slot maps the caller's
    // index to the slot, and every index in `triangles` is a slot. The
    // builds see the caller's order: the vertices move after the tree is
    // made (order_vertices in mesh.c), and the builds index them by the
    // caller's triangles.
    vec3s* vertices;
    int32_t* vertex_slot;
    int32_t (*triangles)[3]; // tree order, vertex slots
    int32_t* ids;            // tree order -> caller's index, | MID_DEGENERATE_BIT
    int32_t* position;       // caller's index -> tree order
    mid_wide_node* wide_nodes;  // NULL for a boxtree or a one-leaf tree
    // The slab of every leaf of the wide nodes, each named by its lane
    // (mid_wide_node.slab), leaf_count of them; a one-leaf tree has none
    // here (its slab is root_slab).
    mid_leaf_slab* leaf_slabs;
    int leaf_count;
    int wide_count;
    mid_boxtree_node* box_nodes;
    vec3s root_min, root_max;  // the root's box (the box of every triangle)
    mid_leaf_slab root_slab;   // an AABB tree of one leaf: that leaf's slab
    int leaf_size;             // most triangles in a leaf; a boxtree's ranges up to it are leaves
};

// The moved face of a boxtree child, from its parent's interval [lo, hi] on
// the face's axis. The max face counts down from hi and the min face up from
// lo, so the extreme codes give the parent's face exactly. The build rounds
// planes outward with this expression; mid_boxtree_child (walk.h) is the
// same arithmetic on four lanes.
static inline float mid_boxtree_plane(float lo, float hi, unsigned q, bool max_face) {
    float step = (hi - lo) * (1.0f / MID_BOXTREE_QUANT);
    return max_face ? hi - (float)(255u - q) * step : lo + (float)q * step;
}

// Fetches triangle `t` (tree order) in the mesh frame.
static inline void mid_triangle(const struct carom_mesh_data* d, int t, vec3s v[3]) {
    v[0] = d->vertices[d->triangles[t][0]];
    v[1] = d->vertices[d->triangles[t][1]];
    v[2] = d->vertices[d->triangles[t][2]];
}

// The unit normal (v1 - v0) x (v2 - v0) of a triangle in the mesh frame,
// or zero for one of no area. In double: in float the cross product's
// squared length overflows for triangles near 1e10 in size and underflows
// near 1e-10, while double holds every product of float coordinates, and a
// sliver's normal comes out turned by epsilon * length / width, which in
// float is degrees for slivers a millionth as wide as they are long.
static inline vec3s mid_triangle_normal(const vec3s v[3]) {
    double e1[3], e2[3];
    for (int k = 0; k < 3; ++k) {
        e1[k] = (double)v[1].raw[k] - (double)v[0].raw[k];
        e2[k] = (double)v[2].raw[k] - (double)v[0].raw[k];
    }
    double n[3];
    carom_cross_double(e1, e2, n);
    double len = sqrt(carom_dot_double(n, n));
    if (!(len > 0.0)) return v3(0.0f, 0.0f, 0.0f);
    const double inv = 1.0 / len;
    return v3((float)(n[0] * inv), (float)(n[1] * inv), (float)(n[2] * inv));
}

// --- builds and refits (aabb_tree.c, boxtree.c) -----------------------------
// A build's input and output: the caller's triangles, and the tree order
// it writes. Each build carries the triangles' boxes itself (build_rec.h).
typedef struct mid_build {
    const int32_t (*triangles)[3];  // caller order
    int32_t* order;                 // tree order -> caller's index
    int count;
} mid_build;

// Below this depth splits follow the geometry; deeper ones split by count,
// which halves the range per level, so no tree exceeds
// MID_MEDIAN_DEPTH + log2(CAROM_MESH_MAX_TRIANGLES) = 90 < CAROM_MESH_MAX_DEPTH.
#define MID_MEDIAN_DEPTH 64

carom_status mid_aabb_tree_build(carom_mesh* mesh, mid_build* b, bool sah);
// The wide nodes of a binary tree of `count` nodes (a leaf alone gives
// none), and their refit after the vertices moved: leaves first, then
// parents, the same boxes and slabs a fresh build over the same order
// gives.
carom_status mid_wide_build(carom_mesh* mesh, const mid_aabb_node* nodes, int count);
void mid_wide_refit(carom_mesh* mesh);
// mid_wide_build allocates the leaves' slabs; this fills them, once the
// triangles are in tree order (the build orders them after the tree is
// made). Refit remakes them with the boxes.
void mid_wide_make_slabs(carom_mesh* mesh);
carom_status mid_boxtree_build(carom_mesh* mesh, mid_build* b);
void mid_boxtree_refit(carom_mesh* mesh);

// --- exact primitive tests (triangle.c) --------------------------------------
// Closed triangles; false for a degenerate one.
bool mid_triangles_intersect(const vec3s a[3], const vec3s b[3]);
#ifdef CAROM_SIMD_H
// The same on four-lane corners (lane 3 zero).
bool mid_triangles_intersect_f4(const f4 a[3], const f4 b[3]);

// Where a triangle meets a plane that separates its corners: the corners'
// projections p on a line and their signed plane distances s (lanes v0, v1,
// v2, v2; no distance zero) give the range [*lo, *hi] of the line parameter
// over the two edges that cross the plane (Moller's interval test). With
// the distances off by up to `s_error`, an end may be off by up to *error:
// an edge that runs close to the plane meets it at a poorly known point.
static inline void mid_crossing_range(f4 p, f4 s, f4 s_error, float* lo, float* hi,
                                      float* error) {
    f4 p_next = __builtin_shufflevector(p, p, 1, 2, 0, 3);
    f4 s_next = __builtin_shufflevector(s, s, 1, 2, 0, 3);
    i4 crosses = (s < (f4){0, 0, 0, 0}) ^ (s_next < (f4){0, 0, 0, 0});
    // Opposite signs: s - s_next is |s| + |s_next|, free of cancellation.
    f4 inv = (f4){1, 1, 1, 1} / (s - s_next);
    f4 step = p_next - p;
    f4 t = p + step * (s * inv);
    f4 e = f4_abs(step * inv) * s_error;
    const f4 inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    f4 low = f4_select(crosses, t, inf), high = f4_select(crosses, t, -inf);
    e = f4_select(crosses, e, (f4){0, 0, 0, 0});
    *lo = carom_minf(low[0], carom_minf(low[1], low[2]));
    *hi = carom_maxf(high[0], carom_maxf(high[1], high[2]));
    *error = carom_maxf(e[0], carom_maxf(e[1], e[2]));
}

// True when the distances s (lanes v0, v1, v2, v2) are all nonzero and not
// all of one sign: the triangle crosses the plane.
static inline bool mid_straddles(f4 s) {
    int below = i4_mask4(s < (f4){0, 0, 0, 0}) & 7, above = i4_mask4(s > (f4){0, 0, 0, 0}) & 7;
    return below != 0 && above != 0 && (below | above) == 7;
}

// Moller's interval test for two triangles that may cross each other's
// planes, given their corners side by side (x, y, z; lanes v0, v1, v2, v2;
// from one origin near them), their normals, and each one's corners'
// signed distances from the other's plane with a bound on their error.
// 1 when the segments the triangles cut on the planes' common line overlap
// by more than a margin, 0 when they are apart by more, -1 when the caller
// must decide otherwise: a triangle does not cross the other's plane, a
// corner lies on it or within its distance's error of it, the planes are
// within about 1/20 rad, or the call is too close. The margin is
// `margin_per_d` * |d|_1 (d the line's direction, for the projections'
// rounding; the direction itself is good to a few epsilons over the angle)
// plus the error of each segment's ends that the distances' error causes
// (mid_crossing_range).
static inline int mid_segment_verdict(const f4 a[3], f4 na, f4 a_dist, f4 a_dist_error,
                                      const f4 b[3], f4 nb, f4 b_dist, f4 b_dist_error,
                                      float margin_per_d) {
    if (!mid_straddles(a_dist) || !mid_straddles(b_dist)) return -1;
    // A corner that close may lie on either side, and the edges from it
    // then cross the plane anywhere along them: two triangles that touch
    // along an edge lying in both planes (fans meeting at a pole) got
    // either answer here.
    if (i4_mask3((f4_abs(a_dist) <= a_dist_error) | (f4_abs(b_dist) <= b_dist_error))) return -1;
    f4 d = f4_cross(na, nb);
    f4 dabs = f4_abs(d);
    if (!(f4_max3(dabs) > 0.05f * f4_max3(f4_abs(na)) * f4_max3(f4_abs(nb)))) return -1;
    f4 dx = __builtin_shufflevector(d, d, 0, 0, 0, 0);
    f4 dy = __builtin_shufflevector(d, d, 1, 1, 1, 1);
    f4 dz = __builtin_shufflevector(d, d, 2, 2, 2, 2);
    float alo, ahi, aerr, blo, bhi, berr;
    mid_crossing_range(a[0] * dx + a[1] * dy + a[2] * dz, a_dist, a_dist_error, &alo, &ahi, &aerr);
    mid_crossing_range(b[0] * dx + b[1] * dy + b[2] * dz, b_dist, b_dist_error, &blo, &bhi, &berr);
    float overlap = carom_minf(ahi, bhi) - carom_maxf(alo, blo);
    float margin = margin_per_d * (dabs[0] + dabs[1] + dabs[2]) + aerr + berr;
    return overlap > margin ? 1 : overlap < -margin ? 0 : -1;
}
#endif
// Closed triangle against the box |x_i| <= half_i, triangle in the box's
// frame, in double (mid_box_query_triangle takes the corners there): its
// corners v and its edges e[i] = v[i + 1] - v[i], made by the caller from
// the corners' own differences. v and e are not const only because ISO C
// before C2x refuses a plain double[3][3] argument for a const one; neither
// is written.
bool mid_triangle_box_intersect(double v[3][3], double e[3][3], const double half[3]);
// Ray p + t d, t in [0, t_max], against a closed triangle from either side.
// Writes t on a hit.
bool mid_ray_triangle(vec3s p, vec3s d, const vec3s v[3], float t_max, float* t);

#endif
