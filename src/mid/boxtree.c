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
#include "mid/mesh_internal.h"

// The smallest code whose max face still covers `value`, or the largest
// whose min face does: plane positions are monotonic in the code, and the
// extreme codes reproduce the parent's face exactly, so the search always
// ends on a conservative plane.
static unsigned quantize(float lo, float hi, float value, bool max_face) {
    float extent = hi - lo;
    if (!(extent > 0.0f)) return max_face ? 255u : 0u;
    float f = (value - lo) / extent * MID_BOXTREE_QUANT;
    long q = max_face ? (long)ceilf(f) : (long)floorf(f);
    q = q < 0 ? 0 : (q > 255 ? 255 : q);
    if (max_face) {
        while (q < 255 && mid_boxtree_plane(lo, hi, (unsigned)q, true) < value) ++q;
        while (q > 0 && mid_boxtree_plane(lo, hi, (unsigned)q - 1, true) >= value) --q;
    } else {
        while (q > 0 && mid_boxtree_plane(lo, hi, (unsigned)q, false) > value) --q;
        while (q < 255 && mid_boxtree_plane(lo, hi, (unsigned)q + 1, false) <= value) ++q;
    }
    return (unsigned)q;
}

// Picks the pair of `parent`'s faces whose move to the child's true box
// `tmin..tmax` leaves the smallest box; writes the pair code and the two
// quantized planes.
static void choose_faces(vec3s pmin, vec3s pmax, vec3s tmin, vec3s tmax, unsigned* pair,
                         uint8_t plane[2]) {
    unsigned q[6];
    float keep[6];  // fraction of the parent's extent each face's move keeps
    for (unsigned f = 0; f < 6; ++f) {
        unsigned axis = f >> 1;
        bool max_face = f & 1;
        float lo = pmin.raw[axis], hi = pmax.raw[axis];
        q[f] = quantize(lo, hi, max_face ? tmax.raw[axis] : tmin.raw[axis], max_face);
        float v = mid_boxtree_plane(lo, hi, q[f], max_face);
        keep[f] = hi > lo ? (max_face ? v - lo : hi - v) / (hi - lo) : 1.0f;
    }
    float best = INFINITY;
    for (unsigned k = 0; k < MID_BOXTREE_PAIRS; ++k) {
        unsigned f1 = MID_FACE_PAIRS[k][0], f2 = MID_FACE_PAIRS[k][1];
        // Two faces of one axis keep their overlap; of two axes, the product.
        float volume = (f1 >> 1) == (f2 >> 1) ? keep[f1] + keep[f2] - 1.0f : keep[f1] * keep[f2];
        if (volume < best) {
            best = volume;
            *pair = k;
            plane[0] = (uint8_t)q[f1];
            plane[1] = (uint8_t)q[f2];
        }
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
    choose_faces(qmin, qmax, lmin, lmax, &lpair, &n->plane[0]);
    choose_faces(qmin, qmax, rmin, rmax, &rpair, &n->plane[2]);
    n->packed = (uint32_t)left << 8 | lpair << 4 | rpair;
    // The children's boxes exactly as mid_children will compute them.
    vec3s lqmin = qmin, lqmax = qmax, rqmin = qmin, rqmax = qmax;
    mid_boxtree_child_box(&lqmin, &lqmax, lpair, &n->plane[0]);
    mid_boxtree_child_box(&rqmin, &rqmax, rpair, &n->plane[2]);
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
