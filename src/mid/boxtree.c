// Zachmann's boxtree: the AABB tree's midpoint splits, but each child keeps
// only the one face of its box that differs from its parent's.
//
// Zachmann (2002) moves one face of each child, on the split axis, and adds
// one-child nodes to cut empty space where a child's box leaves much of it.
// Those nodes would double the node count, and the budget here is 8 bytes
// per triangle. Instead each child moves the two of its six faces that
// remove the most of its parent's volume, with 8-bit planes: 8 bytes per
// inner node, one triangle per leaf. (Measured on bunny against bunny: one
// 16-bit face per child needed 4x the triangle tests of the AABB tree.)
#include "mid/walk.h"

// The smallest code whose max face still covers `value`, or the largest
// whose min face does: plane positions are monotonic in the code, and the
// extreme codes reproduce the parent's face exactly, so the search always
// ends on a conservative plane.
static unsigned quantize(float lo, float hi, float inv_extent, float value, bool max_face) {
    float extent = hi - lo;
    // Faces the child shares with its parent keep the parent's plane, the
    // extreme code, without any search.
    if (!(extent > 0.0f) || (max_face ? value >= hi : value <= lo)) return max_face ? 255u : 0u;
    float f = (value - lo) * inv_extent * MID_BOXTREE_QUANT;
    f = f < 0.0f ? 0.0f : (f > MID_BOXTREE_QUANT ? MID_BOXTREE_QUANT : f);
    long q = (long)f;  // floor, f being >= 0
    if (max_face && (float)q < f) ++q;
    // The estimate can miss by rounding; step outward until the plane covers
    // the value (at most a step or two; the extreme codes always do).
    if (max_face) {
        while (q < 255 && mid_boxtree_plane(lo, hi, (unsigned)q, true) < value) ++q;
    } else {
        while (q > 0 && mid_boxtree_plane(lo, hi, (unsigned)q, false) > value) --q;
    }
    return (unsigned)q;
}

// The pair code of faces f1 < f2 (the inverse of MID_FACE_PAIRS).
static unsigned pair_code(unsigned f1, unsigned f2) {
    // Pairs are listed in order: those starting with face f begin at
    // f * (11 - f) / 2.
    return f1 * (11 - f1) / 2 + (f2 - f1 - 1);
}

// Picks the pair of `parent`'s faces whose move to the child's true box
// `tmin..tmax` leaves the smallest box; writes the pair code and the two
// quantized planes. Most faces are shared with the parent and cannot move,
// so only the movable ones are weighed.
static void choose_faces(vec3s pmin, vec3s pmax, vec3s inv_extent, vec3s tmin, vec3s tmax,
                         unsigned* pair, uint8_t plane[2]) {
    // keep[f]: the fraction of the parent's extent that moving face f keeps,
    // estimated from the exact values; only the two chosen faces are then
    // quantized (rounded outward), which moves them by under 1/255.
    float keep[6];
    for (unsigned axis = 0; axis < 3; ++axis) {
        float lo = pmin.raw[axis], hi = pmax.raw[axis];
        float inv = inv_extent.raw[axis];
        keep[2 * axis] = hi > lo ? (hi - tmin.raw[axis]) * inv : 1.0f;
        keep[2 * axis + 1] = hi > lo ? (tmax.raw[axis] - lo) * inv : 1.0f;
    }
    // Both faces of one axis keep their overlap, k_min + k_max - 1; faces of
    // two axes keep the product, best with each axis's better face.
    float same[3], better_keep[3];
    unsigned better[3];
    for (unsigned axis = 0; axis < 3; ++axis) {
        same[axis] = keep[2 * axis] + keep[2 * axis + 1] - 1.0f;
        better[axis] = keep[2 * axis + 1] < keep[2 * axis] ? 2 * axis + 1 : 2 * axis;
        better_keep[axis] = keep[better[axis]];
    }
    unsigned f1 = 0, f2 = 1;
    float best = same[0];
    if (same[1] < best) best = same[1], f1 = 2, f2 = 3;
    if (same[2] < best) best = same[2], f1 = 4, f2 = 5;
    float p01 = better_keep[0] * better_keep[1], p02 = better_keep[0] * better_keep[2],
          p12 = better_keep[1] * better_keep[2];
    if (p01 < best) best = p01, f1 = better[0], f2 = better[1];
    if (p02 < best) best = p02, f1 = better[0], f2 = better[2];
    if (p12 < best) f1 = better[1], f2 = better[2];
    *pair = pair_code(f1, f2);  // f1 < f2 by construction
    unsigned faces[2] = {f1, f2};
    for (int i = 0; i < 2; ++i) {
        unsigned axis = faces[i] >> 1;
        bool max_face = faces[i] & 1;
        float value = max_face ? tmax.raw[axis] : tmin.raw[axis];
        plane[i] = (uint8_t)quantize(pmin.raw[axis], pmax.raw[axis], inv_extent.raw[axis], value,
                                     max_face);
    }
}

typedef struct boxtree_builder {
    mid_build* b;            // NULL when refitting
    struct carom_mesh_data* d;
    mid_boxtree_node* nodes;
    int depth;
} boxtree_builder;

static void triangle_box(const boxtree_builder* bb, int position, vec3s* min, vec3s* max) {
    vec3s v[3];
    mid_triangle(bb->d, position, v);
    *min = v3_min(v[0], v3_min(v[1], v[2]));
    *max = v3_max(v[0], v3_max(v[1], v[2]));
}

// The true box of triangles [first, first + count) in tree order.
static void range_box(const boxtree_builder* bb, int first, int count, vec3s* min, vec3s* max) {
    if (bb->b) {
        mid_range_box(bb->b, first, count, min, max);
        return;
    }
    triangle_box(bb, first, min, max);
    for (int i = first + 1; i < first + count; ++i) {
        vec3s lo, hi;
        triangle_box(bb, i, &lo, &hi);
        *min = v3_min(*min, lo);
        *max = v3_max(*max, hi);
    }
}

// Node `index` covers `count` >= 2 triangles from `first`; `tmin..tmax` is
// their true box and `qmin..qmax` the box traversals will see (its parent's,
// with one face moved). A build partitions; a refit keeps the split.
static void build_node(boxtree_builder* bb, int index, int first, int count, vec3s tmin,
                       vec3s tmax, vec3s qmin, vec3s qmax, int depth) {
    if (depth > bb->depth) bb->depth = depth;
    mid_boxtree_node* n = &bb->nodes[index];
    int left = bb->b ? mid_partition(bb->b, first, count, tmin, tmax, depth) : (int)(n->packed >> 8);
    vec3s lmin, lmax, rmin, rmax;
    range_box(bb, first, left, &lmin, &lmax);
    range_box(bb, first + left, count - left, &rmin, &rmax);
    unsigned lpair = 0, rpair = 0;
    // Both children cut the same parent box: its reciprocal extents once.
    vec3s inv;
    for (int k = 0; k < 3; ++k) {
        float e = qmax.raw[k] - qmin.raw[k];
        inv.raw[k] = e > 0.0f ? 1.0f / e : 0.0f;
    }
    choose_faces(qmin, qmax, inv, lmin, lmax, &lpair, &n->plane[0]);
    choose_faces(qmin, qmax, inv, rmin, rmax, &rpair, &n->plane[2]);
    n->packed = (uint32_t)left << 8 | lpair << 4 | rpair;
    // The children's boxes exactly as every walk will compute them.
    f4 lq[2], rq[2];
    mid_boxtree_child(f4_from(qmin), f4_from(qmax), lpair, &n->plane[0], &lq[0], &lq[1]);
    mid_boxtree_child(f4_from(qmin), f4_from(qmax), rpair, &n->plane[2], &rq[0], &rq[1]);
    vec3s lqmin = f4_to(lq[0]), lqmax = f4_to(lq[1]), rqmin = f4_to(rq[0]), rqmax = f4_to(rq[1]);
    if (left > 1) build_node(bb, index + 1, first, left, lmin, lmax, lqmin, lqmax, depth + 1);
    if (count - left > 1) {
        build_node(bb, index + left, first + left, count - left, rmin, rmax, rqmin, rqmax, depth + 1);
    }
    if (depth + 1 > bb->depth) bb->depth = depth + 1;  // the leaves
}

static void set_root(carom_mesh* mesh, boxtree_builder* bb, int count, vec3s* tmin, vec3s* tmax) {
    range_box(bb, 0, count, tmin, tmax);
    mesh->data->root_min = *tmin;
    mesh->data->root_max = *tmax;
}

carom_status mid_boxtree_build(carom_mesh* mesh, mid_build* b) {
    int n = b->count;
    mid_boxtree_node* nodes = NULL;
    if (n > 1) {
        nodes = carom_alloc((size_t)(n - 1) * sizeof *nodes);
        if (!nodes) return CAROM_ERR_OUT_OF_MEMORY;
    }
    boxtree_builder bb = {b, mesh->data, nodes, 0};
    vec3s tmin, tmax;
    set_root(mesh, &bb, n, &tmin, &tmax);
    if (n > 1) build_node(&bb, 0, 0, n, tmin, tmax, tmin, tmax, 0);
    mesh->data->box_nodes = nodes;
    mesh->node_count = n - 1;
    mesh->depth = bb.depth;
    mesh->tree_bytes = (size_t)(n - 1) * sizeof *nodes;
    return CAROM_OK;
}

void mid_boxtree_refit(carom_mesh* mesh) {
    int n = mesh->triangle_count;
    boxtree_builder bb = {NULL, mesh->data, mesh->data->box_nodes, 0};
    vec3s tmin, tmax;
    set_root(mesh, &bb, n, &tmin, &tmax);
    if (n > 1) build_node(&bb, 0, 0, n, tmin, tmax, tmin, tmax, 0);
}
