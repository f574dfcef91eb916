// Zachmann's boxtree: the AABB tree's midpoint splits, but each child keeps
// only the one face of its box that differs from its parent's.
//
// Zachmann (2002) moves one face of each child, on the split axis, and adds
// one-child nodes to cut empty space where a child's box leaves much of it.
// Those nodes would double the node count, and the budget here is 8 bytes
// per triangle. Instead each child moves the two of its six faces that
// remove the most of its parent's volume, with 8-bit planes: 8 bytes per
// inner node. (Measured on bunny against bunny: one 16-bit face per child
// needed 4x the triangle tests of the AABB tree.)
//
// Nodes sit in slots named by triangle positions (mid_boxtree_node), so no
// node stores a link. Leaves hold up to the mesh's leaf size: four by
// default, which takes about half the time of leaves of one on mesh
// against mesh and builds about as fast as the midpoint AABB tree (README,
// "Meshes", has the measurements).
#include <string.h>

#include "mid/build_rec.h"

// --- choosing a child's faces -------------------------------------------------

// A parent's box as both its children's face choices read it.
typedef struct face_frame {
    f4 lo, hi;
    f4 inv;       // 1 / extent, 0 where the extent is 0
    f4 step;      // extent / 255, rounded as mid_boxtree_plane rounds it
    f4 closed;    // 1 where the extent is 0, else 0
    i4 open;      // extent > 0
    bool finite;  // no extent so small (subnormal) that its inverse overflows
} face_frame;

static inline face_frame frame_of(f4 lo, f4 hi) {
    const f4 one = {1.0f, 1.0f, 1.0f, 1.0f}, inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    f4 e = hi - lo;
    i4 open = e > f4_zero();
    // 1 / 0 is infinite on a closed axis (and lane 3), then masked to 0.
    face_frame p = {lo, hi, (f4)((i4)(one / e) & open), e * (1.0f / MID_BOXTREE_QUANT),
                    (f4)((i4)one & ~open), open, false};
    p.finite = i4_mask4(p.inv < inf) == 15;
    return p;
}

// The codes of all six faces of the child's true box `tlo..thi` in the
// frame's box, a face per lane (min faces, max faces): for a min face the
// largest code whose plane is at or below the value, for a max face the
// smallest at or above it, as mid_boxtree_plane places them. Plane
// positions are monotonic in the code, and the extreme codes reproduce the
// parent's face exactly, so the search always ends on a conservative plane.
// Six on four-lane vectors cost less than two picked out as scalars.
static void quantize(const face_frame* p, f4 tlo, f4 thi, i4* qmin, i4* qmax) {
    const f4 zero = f4_zero();
    const f4 quant = {MID_BOXTREE_QUANT, MID_BOXTREE_QUANT, MID_BOXTREE_QUANT, MID_BOXTREE_QUANT};
    const i4 top = {255, 255, 255, 255};
    // Faces the child shares with its parent keep the parent's plane, the
    // extreme code, without any search.
    i4 search_min = p->open & (tlo > p->lo);
    i4 search_max = p->open & (thi < p->hi);
    // The estimate, clamped to the codes (a NaN, from the infinite inverse
    // of a subnormal extent, to 0, where the search starts from the bottom).
    f4 fmin = f4_min(f4_max((tlo - p->lo) * p->inv * quant, zero), quant);
    f4 fmax = f4_min(f4_max((thi - p->lo) * p->inv * quant, zero), quant);
    i4 lo_code = __builtin_convertvector(fmin, i4);  // floor, f being >= 0
    i4 hi_code = __builtin_convertvector(fmax, i4);
    hi_code -= __builtin_convertvector(hi_code, f4) < fmax;  // ceil
    // The estimate can miss by rounding; step outward until the plane covers
    // the value (at most a step or two; the extreme codes always do). Lanes
    // step independently, so each ends where its own search would.
    for (;;) {
        i4 down = search_min & (lo_code > 0) &
                  (p->lo + __builtin_convertvector(lo_code, f4) * p->step > tlo);
        i4 up = search_max & (hi_code < top) &
                (p->hi - __builtin_convertvector(top - hi_code, f4) * p->step < thi);
        if (!i4_mask4(down | up)) break;
        lo_code += down;  // true lanes are -1
        hi_code -= up;
    }
    *qmin = lo_code & search_min;
    *qmax = (hi_code & search_max) | (top & ~search_max);
}

// The pair code of faces f1 < f2 (the inverse of MID_FACE_PAIRS): pairs are
// listed in order, and those starting with face f begin at f * (11 - f) / 2.
#define PAIR_CODE(f1, f2) ((f1) * (11 - (f1)) / 2 + (f2) - (f1) - 1)
// Axis a's better face, given the axes whose max face is better (bits).
#define BETTER(a, upper) (2 * (a) + ((upper) >> (a) & 1))
#define BOTH(a) {PAIR_CODE(2 * (a), 2 * (a) + 1), PAIR_CODE(2 * (a), 2 * (a) + 1),       \
                 PAIR_CODE(2 * (a), 2 * (a) + 1), PAIR_CODE(2 * (a), 2 * (a) + 1),       \
                 PAIR_CODE(2 * (a), 2 * (a) + 1), PAIR_CODE(2 * (a), 2 * (a) + 1),       \
                 PAIR_CODE(2 * (a), 2 * (a) + 1), PAIR_CODE(2 * (a), 2 * (a) + 1)}
#define ACROSS_ONE(a, b, u) PAIR_CODE(BETTER(a, u), BETTER(b, u))
#define ACROSS(a, b) {ACROSS_ONE(a, b, 0), ACROSS_ONE(a, b, 1), ACROSS_ONE(a, b, 2),            \
                      ACROSS_ONE(a, b, 3), ACROSS_ONE(a, b, 4), ACROSS_ONE(a, b, 5),            \
                      ACROSS_ONE(a, b, 6), ACROSS_ONE(a, b, 7)}

// The pair code of each candidate, in the order they are weighed (both faces
// of axis 0, 1, 2, then the better faces of axes 0 and 1, 0 and 2, 1 and
// 2), by which axes' max face is the better one.
static const uint8_t CANDIDATE_PAIRS[6][8] = {BOTH(0),     BOTH(1),     BOTH(2),
                                              ACROSS(0, 1), ACROSS(0, 2), ACROSS(1, 2)};

// Picks the pair of the parent's faces whose move to the child's true box
// `tlo..thi` leaves the smallest box; writes the two quantized planes and
// returns the pair code. Most faces are shared with the parent and cannot
// move, so only the movable ones are weighed.
static unsigned choose_faces(const face_frame* p, f4 tlo, f4 thi, uint8_t plane[2]) {
    // keep: the fraction of the parent's extent that moving a face keeps
    // (min faces in kmin, max faces in kmax), estimated from the exact
    // values; only the two chosen faces are then quantized (rounded
    // outward), which moves them by under 1/255. Faces of a closed axis keep
    // it all: 0 * 0 + 1 (adding 0 elsewhere turns only -0 into +0, which
    // compares the same).
    const f4 one = {1.0f, 1.0f, 1.0f, 1.0f}, inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    f4 kmin = (p->hi - tlo) * p->inv + p->closed;
    f4 kmax = (thi - p->lo) * p->inv + p->closed;
    // Both faces of one axis keep their overlap, k_min + k_max - 1; faces of
    // two axes keep the product, best with each axis's better face.
    f4 same = kmin + kmax - one;
    i4 upper = kmax < kmin;
    f4 better = f4_min(kmax, kmin);
    f4 prod = better * __builtin_shufflevector(better, better, 1, 2, 0, 3);  // 01 12 20
    // The candidates in order, then lanes that never win. A chain of strict
    // comparisons in this order keeps the first least candidate, which is
    // the first lane equal to the minimum.
    f4 c0 = __builtin_shufflevector(same, prod, 0, 1, 2, 4);  // s0 s1 s2 p01
    f4 c1 = __builtin_shufflevector(prod, inf, 2, 1, 4, 4);   // p02 p12
    if (!p->finite) {
        // An infinite inverse times 0 is a NaN, which never wins the chain
        // unless it starts it, when nothing beats it: -inf there, +inf later.
        const f4 nan_first = {-INFINITY, INFINITY, INFINITY, INFINITY};
        c0 = f4_select(c0 != c0, nan_first, c0);
        c1 = f4_select(c1 != c1, inf, c1);
    }
    f4 m = f4_min(c0, c1);
    m = f4_min(m, __builtin_shufflevector(m, m, 2, 3, 0, 1));
    m = f4_min(m, __builtin_shufflevector(m, m, 1, 0, 3, 2));
    unsigned k = (unsigned)__builtin_ctz((unsigned)(i4_mask4(c0 == m) | i4_mask4(c1 == m) << 4));
    unsigned pair = CANDIDATE_PAIRS[k][i4_mask3(upper)];
    i4 qmin, qmax;
    quantize(p, tlo, thi, &qmin, &qmax);
    // The codes in face order (min 0, max 0, min 1, ...), to index by face.
    i4 codes[2] = {__builtin_shufflevector(qmin, qmax, 0, 4, 1, 5),
                   __builtin_shufflevector(qmin, qmax, 2, 6, 3, 7)};
    int32_t by_face[8];
    memcpy(by_face, codes, sizeof by_face);
    plane[0] = (uint8_t)by_face[MID_FACE_PAIRS[pair][0]];
    plane[1] = (uint8_t)by_face[MID_FACE_PAIRS[pair][1]];
    return pair;
}

// --- build and refit ------------------------------------------------------------

typedef struct boxtree_builder {
    mid_build* b;  // NULL when refitting
    struct carom_mesh_data* d;
    mid_boxtree_node* nodes;
    box_rec* recs;  // the triangles in tree order as far as it is settled
    // A refit's true box of every inner node (lo, hi; by node index), made
    // leaves first, then parents; NULL when that scratch could not be had,
    // and each node then takes its children's boxes from their triangles.
    f4 (*boxes)[2];
    int depth;
    int leaf_size;   // ranges of up to this many triangles are leaves
    int node_count;  // inner nodes made
} boxtree_builder;

// Sets node `n`'s pair codes and planes for its children's true boxes in
// `kid`, cutting the box `qlo..qhi`.
static inline void store_faces(mid_boxtree_node* n, int left, f4 qlo, f4 qhi, const f4 kid[4]) {
    face_frame frame = frame_of(qlo, qhi);  // both children cut the same box
    unsigned lpair = choose_faces(&frame, kid[0], kid[1], &n->plane[0]);
    unsigned rpair = choose_faces(&frame, kid[2], kid[3], &n->plane[2]);
    n->packed = (uint32_t)left << 8 | lpair << 4 | rpair;
}

// A build's node of two triangles when leaves hold one (then a third of all
// nodes): mid_recs_split's choice without a pass, and two leaves. Inlined
// into its parent, which saves a call on each.
CAROM_FORCE_INLINE void build_pair(boxtree_builder* bb, int index, int first, f4 tlo, f4 thi,
                                   f4 qlo, f4 qhi, int depth) {
    if (depth + 1 > bb->depth) bb->depth = depth + 1;
    ++bb->node_count;
    const box_rec* in = bb->recs + first;
    int axis = mid_split_axis(tlo, thi);
    const float mid = 0.5f * (tlo[axis] + thi[axis]);
    const bool left0 = rec_centroid(&in[0], axis) < mid;
    const bool left1 = rec_centroid(&in[1], axis) < mid;
    bool swap;
    if (depth < MID_MEDIAN_DEPTH && left0 != left1) {
        swap = !left0;
    } else {
        swap = rec_before(&in[1], &in[0], axis);  // split by count
    }
    const box_rec* l = &in[swap];
    const box_rec* r = &in[!swap];
    f4 kid[4] = {lanes3(l->lo), l->hi, lanes3(r->lo), r->hi};
    store_faces(&bb->nodes[index], 1, qlo, qhi, kid);
    bb->b->order[first] = rec_id(l);
    bb->b->order[first + 1] = rec_id(r);
}

static void build_node(boxtree_builder* bb, int index, int first, int count, f4 tlo, f4 thi,
                       f4 qlo, f4 qhi, int depth);

// A refit's true box of a child: node `index` over triangles [first, first
// + count), or a leaf's. Min and max are exact, so it is the box of the
// triangles whichever way it is gathered.
static inline void refit_child_box(const boxtree_builder* bb, int index, int first, int count,
                                   f4* lo, f4* hi) {
    if (count > bb->leaf_size && bb->boxes) {
        *lo = bb->boxes[index][0];
        *hi = bb->boxes[index][1];
    } else {
        mid_triangles_box(bb->d, first, count, lo, hi);
    }
}

// The true box of triangles [first, first + count): a leaf's from its
// triangles; node `index`'s, and every node's below it, children first,
// into bb->boxes. The recursion is the tree's depth deep.
static void refit_boxes(boxtree_builder* bb, int index, int first, int count, f4* lo, f4* hi) {
    if (count <= bb->leaf_size) {
        mid_triangles_box(bb->d, first, count, lo, hi);
        return;
    }
    const int left = (int)(bb->nodes[index].packed >> 8);
    f4 l[2], r[2];
    refit_boxes(bb, index + 1, first, left, &l[0], &l[1]);
    refit_boxes(bb, index + left, first + left, count - left, &r[0], &r[1]);
    *lo = f4_min(l[0], r[0]);
    *hi = f4_max(l[1], r[1]);
    bb->boxes[index][0] = *lo;
    bb->boxes[index][1] = *hi;
}

// A build's leaf of `count` triangles from `first`: their place in the
// tree order is final.
static inline void build_leaf(boxtree_builder* bb, int first, int count) {
    for (int i = first; i < first + count; ++i) bb->b->order[i] = rec_id(&bb->recs[i]);
}

// Child `side` (0 left, 1 right) of node `n`, which cuts `qlo..qhi`: a
// child of more triangles than a leaf holds is a node, its box exactly as
// every walk will compute it; others are leaves.
static inline void build_child(boxtree_builder* bb, const mid_boxtree_node* n, int side, int index,
                               int first, int count, f4 tlo, f4 thi, f4 qlo, f4 qhi, int depth) {
    if (count <= bb->leaf_size) {
        if (bb->b) build_leaf(bb, first, count);
        return;
    }
    unsigned pair = side ? n->packed & 15u : (n->packed >> 4) & 15u;
    f4 cq[2];
    mid_boxtree_child(qlo, qhi, pair, &n->plane[2 * side], &cq[0], &cq[1]);
    if (count == 2 && bb->b) {  // two leaves of one triangle
        build_pair(bb, index, first, tlo, thi, cq[0], cq[1], depth);
    } else {
        build_node(bb, index, first, count, tlo, thi, cq[0], cq[1], depth);
    }
}

// Node `index` covers `count` triangles from `first`, more than a leaf
// holds; `tlo..thi` is their true box and `qlo..qhi` the box traversals
// will see (its parent's, with two faces moved). A build partitions; a
// refit keeps the split.
static void build_node(boxtree_builder* bb, int index, int first, int count, f4 tlo, f4 thi,
                       f4 qlo, f4 qhi, int depth) {
    if (depth + 1 > bb->depth) bb->depth = depth + 1;  // its children
    ++bb->node_count;
    mid_boxtree_node* n = &bb->nodes[index];
    f4 kid[4];
    int left;
    if (bb->b) {
        left = mid_recs_split(bb->recs + first, count, tlo, thi, depth, kid);
    } else {
        left = (int)(n->packed >> 8);
        refit_child_box(bb, index + 1, first, left, &kid[0], &kid[1]);
        refit_child_box(bb, index + left, first + left, count - left, &kid[2], &kid[3]);
    }
    store_faces(n, left, qlo, qhi, kid);
    build_child(bb, n, 0, index + 1, first, left, kid[0], kid[1], qlo, qhi, depth + 1);
    build_child(bb, n, 1, index + left, first + left, count - left, kid[2], kid[3], qlo, qhi,
                depth + 1);
}

// A mesh whose triangles all fit one leaf has no nodes. Otherwise the slots
// are zeroed first, and those under leaves stay so: the array's bytes
// depend only on the tree (a refit without scratch is checked against one
// with it, byte for byte).
carom_status mid_boxtree_build(carom_mesh* mesh, mid_build* b) {
    const int n = b->count;
    const bool split = n > mesh->data->leaf_size;
    const size_t slots = split ? (size_t)(n - 1) : 0;
    mid_boxtree_node* nodes = split ? carom_alloc(slots * sizeof *nodes) : NULL;
    box_rec* recs = carom_alloc((size_t)n * sizeof *recs);
    if ((split && !nodes) || !recs) {
        carom_free(nodes);
        carom_free(recs);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    if (split) memset(nodes, 0, slots * sizeof *nodes);
    boxtree_builder bb = {b, mesh->data, nodes, recs, NULL, 0, mesh->data->leaf_size, 0};
    f4 lo, hi;
    mid_recs_start(mesh->data, b, recs, &lo, &hi);
    if (!split) {
        build_leaf(&bb, 0, n);
    } else if (n == 2) {  // leaves of one
        build_pair(&bb, 0, 0, lo, hi, lo, hi, 0);
    } else {
        build_node(&bb, 0, 0, n, lo, hi, lo, hi, 0);
    }
    carom_free(recs);
    mesh->data->box_nodes = nodes;
    mesh->node_count = bb.node_count;
    mesh->depth = bb.depth;
    mesh->tree_bytes = slots * sizeof *nodes;
    return CAROM_OK;
}

// The planes depend on the parent's box as walks see it, which comes from
// the root down, and on the children's true boxes, which come from the
// leaves up: a first pass gathers the true boxes leaves first into a
// scratch array (32 bytes per slot, freed before returning), and the
// second sets the planes from the root down, as a build does. Without the
// scratch, each node gathers its children's boxes from their triangles:
// the same tree (up to the sign of a zero bound), for the tree's depth
// times the box work: with leaves of one triangle, the bunny's refit took
// 4.7 ms that way, 3.8 with the scratch (the best of twenty refits in a
// loop); choosing each child's faces again is most of what is left.
void mid_boxtree_refit(carom_mesh* mesh) {
    int n = mesh->triangle_count;
    boxtree_builder bb = {NULL, mesh->data, mesh->data->box_nodes, NULL, NULL, 0,
                          mesh->data->leaf_size, 0};
    const bool split = n > bb.leaf_size;  // else the root is a leaf
    f4 lo, hi;
    if (split) bb.boxes = carom_alloc((size_t)(n - 1) * sizeof *bb.boxes);
    if (bb.boxes) {
        refit_boxes(&bb, 0, 0, n, &lo, &hi);
    } else {
        mid_triangles_box(bb.d, 0, n, &lo, &hi);
    }
    mesh->data->root_min = f4_to(lo);
    mesh->data->root_max = f4_to(hi);
    if (split) build_node(&bb, 0, 0, n, lo, hi, lo, hi, 0);
    carom_free(bb.boxes);
}
