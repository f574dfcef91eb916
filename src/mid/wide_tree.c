// The four-wide nodes of an AABB tree (mid_wide_node) and its leaves'
// slabs (mid_leaf_slab): built by collapsing every other level of the
// binary tree the build makes, and refitted in place, leaves first, to the
// boxes and slabs a fresh build would give.
#include <math.h>

#include "mid/walk.h"

// The slab in float, about `centre` (the leaf box's centre as its lane
// holds it), its bounds padded by a bound on the rounding: with |normal|
// at most 1 + 2^-22 and M the corners' largest offset from the centre on
// any axis, each offset is off by at most 2^-24 M per axis and its
// projection by at most 3 * 2^-24 * |normal|_1 * M, 3.5 epsilon * M in
// all; the padding's own rounding adds less than one more. 8 epsilon * M
// covers them, so every corner lies within the bounds for the stored
// normal.
static void leaf_slab_make(const struct carom_mesh_data* d, int first, int count, f4 centre,
                           mid_leaf_slab* s) {
    _Static_assert(3 * MID_MAX_LEAF_SIZE % 4 == 0, "the corners fill whole groups of four");
    f4 corners[3 * MID_MAX_LEAF_SIZE];
    f4 n = f4_zero();
    for (int t = 0; t < count; ++t) {
        f4* v = &corners[3 * t];
        mid_load_triangle(d, first + t, v);
        n += f4_cross(v[1] - v[0], v[2] - v[0]);
    }
    // The last group of four repeats the first corner, which changes no
    // least or greatest value below.
    for (int k = 3 * count; k % 4 != 0; ++k) corners[k] = corners[0];
    // Scaled to a largest component of 1 first, so that tiny or huge
    // normals neither underflow nor overflow when squared. Normals that
    // cancel: any direction gives a valid slab.
    const float largest = f4_max3(f4_abs(n));
    if (largest > 0.0f && isfinite(largest)) {
        n = n / (f4){largest, largest, largest, 1.0f};
        n = n * (1.0f / sqrtf(f4_dot(n, n)));
    } else {
        n = (f4){1.0f, 0.0f, 0.0f, 0.0f};
    }
    // Four corners at a time, side by side: their offsets from the centre
    // as rows x, y, z, and each offset's projection on n, summed in
    // f4_dot's order (x, then y, then z).
    const f4 nx = mid_broadcast(n, 0), ny = mid_broadcast(n, 1), nz = mid_broadcast(n, 2);
    f4 low4 = {INFINITY, INFINITY, INFINITY, INFINITY}, high4 = -low4, offset = f4_zero();
    for (int k = 0; k < 3 * count; k += 4) {
        f4 rows[4];
        f4_transpose4(corners[k] - centre, corners[k + 1] - centre, corners[k + 2] - centre,
                      corners[k + 3] - centre, rows);
        offset = f4_max(offset, f4_max(f4_abs(rows[0]), f4_max(f4_abs(rows[1]), f4_abs(rows[2]))));
        const f4 x = nx * rows[0] + ny * rows[1] + nz * rows[2];
        low4 = f4_min(low4, x);
        high4 = f4_max(high4, x);
    }
    const float low = carom_minf(carom_minf(low4[0], low4[1]), carom_minf(low4[2], low4[3]));
    const float high = carom_maxf(carom_maxf(high4[0], high4[1]), carom_maxf(high4[2], high4[3]));
    const float largest_offset = carom_maxf(f4_max3(offset), offset[3]);
    const float pad = 8.0f * FLT_EPSILON * largest_offset;
    for (int k = 0; k < 3; ++k) s->normal[k] = n[k];
    s->lo = low - pad;
    s->hi = high + pad;
}

// The slab of leaf lane i of n, about the centre the lane holds.
static void lane_slab_make(struct carom_mesh_data* d, const mid_wide_node* n, int i) {
    const f4 centre = f4_make(n->center[0][i], n->center[1][i], n->center[2][i]);
    leaf_slab_make(d, mid_leaf_first(n->child[i]), mid_leaf_count(n->child[i]), centre,
                       &d->leaf_slabs[n->slab[i]]);
}

// A one-leaf tree's slab, about its root box's centre (as a walk's root
// computes it).
static void root_slab_make(struct carom_mesh_data* d, int count) {
    const f4 centre = (f4_from(d->root_min) + f4_from(d->root_max)) * 0.5f;
    leaf_slab_make(d, 0, count, centre, &d->root_slab);
}

typedef struct wide_builder {
    const mid_aabb_node* nodes;
    mid_wide_node* wide;
    int used;
    int slabs;  // leaf lanes numbered so far
} wide_builder;

// Lane i of w from the box lo..hi.
static void lane_set(mid_wide_node* w, int i, f4 lo, f4 hi) {
    f4 center = (lo + hi) * 0.5f, half = (hi - lo) * 0.5f;
    for (int k = 0; k < 3; ++k) {
        w->center[k][i] = center[k];
        w->half[k][i] = half[k];
    }
}

// Wide node `at` from binary inner node `n`; its wide children follow in
// depth-first order, so every child comes after its parent.
static void collapse(wide_builder* b, int at, int n) {
    const mid_aabb_node* node = &b->nodes[n];
    int slot[4], count = 0;
    for (int i = 0; i < 2; ++i) {
        int k = node->first + i;
        if (b->nodes[k].count > 0) {
            slot[count++] = k;
        } else {
            slot[count++] = b->nodes[k].first;
            slot[count++] = b->nodes[k].first + 1;
        }
    }
    mid_wide_node* w = &b->wide[at];
    for (int i = 0; i < 4; ++i) {
        if (i < count) {
            lane_set(w, i, mid_load3(b->nodes[slot[i]].min), mid_load3(b->nodes[slot[i]].max));
        } else {
            for (int k = 0; k < 3; ++k) {
                w->center[k][i] = 0.0f;
                w->half[k][i] = -MID_WIDE_EMPTY;
            }
        }
        w->child[i] = 0;
    }
    w->count = count;
    for (int i = 0; i < 4; ++i) w->slab[i] = 0;
    for (int i = 0; i < count; ++i) {
        const mid_aabb_node* s = &b->nodes[slot[i]];
        if (s->count > 0) {
            w->child[i] = mid_leaf_ref(s->first, s->count);
            w->slab[i] = b->slabs++;
        } else {
            int child = b->used++;
            w->child[i] = child;
            collapse(b, child, slot[i]);
        }
    }
}

carom_status mid_wide_build(carom_mesh* mesh, const mid_aabb_node* nodes, int count) {
    struct carom_mesh_data* d = mesh->data;
    d->wide_nodes = NULL;
    d->leaf_slabs = NULL;
    d->wide_count = 0;
    mesh->node_count = 0;
    mesh->tree_bytes = 0;
    if (count < 3) return CAROM_OK;  // the root is a leaf: nothing to walk
    // Each wide node stands for a distinct binary inner node, of which a
    // binary tree with n nodes has (n - 1) / 2, and (n + 1) / 2 leaves,
    // each a lane of one wide node.
    size_t cap = ((size_t)count - 1) / 2, leaves = ((size_t)count + 1) / 2;
    mid_wide_node* wide = carom_alloc(cap * sizeof *wide);
    mid_leaf_slab* slabs = carom_alloc(leaves * sizeof *slabs);
    if (!wide || !slabs) {
        carom_free(wide);
        carom_free(slabs);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    wide_builder b = {nodes, wide, 1, 0};
    collapse(&b, 0, 0);
    if ((size_t)b.used < cap) {
        mid_wide_node* shrunk = carom_realloc(wide, (size_t)b.used * sizeof *wide);
        if (shrunk) wide = shrunk;  // keeping the larger block is harmless
    }
    d->wide_nodes = wide;
    d->leaf_slabs = slabs;
    d->wide_count = b.used;
    d->leaf_count = b.slabs;
    mesh->node_count = b.used;
    mesh->tree_bytes = (size_t)b.used * sizeof *wide + (size_t)b.slabs * sizeof *slabs;
    return CAROM_OK;
}

void mid_wide_make_slabs(carom_mesh* mesh) {
    struct carom_mesh_data* d = mesh->data;
    if (!d->wide_nodes) {
        root_slab_make(d, mesh->triangle_count);
        return;
    }
    for (int w = 0; w < d->wide_count; ++w) {
        const mid_wide_node* n = &d->wide_nodes[w];
        for (int i = 0; i < n->count; ++i) {
            if (n->child[i] < 0) lane_slab_make(d, n, i);
        }
    }
}

// Refits wide node w and everything below it, and gives its box: the
// union of its lanes' boxes, which is the binary node's it stands for.
// Each call goes one wide level down, so the recursion is at most the wide
// depth, about CAROM_MESH_MAX_DEPTH / 2, deep.
static void refit(struct carom_mesh_data* d, int w, f4* lo, f4* hi) {
    mid_wide_node* n = &d->wide_nodes[w];
    for (int i = 0; i < n->count; ++i) {
        f4 l, h;
        int32_t child = n->child[i];
        if (child < 0) {
            mid_triangles_box(d, mid_leaf_first(child), mid_leaf_count(child), &l, &h);
        } else {
            refit(d, child, &l, &h);
        }
        lane_set(n, i, l, h);
        if (child < 0) lane_slab_make(d, n, i);
        *lo = i ? f4_min(*lo, l) : l;
        *hi = i ? f4_max(*hi, h) : h;
    }
}

void mid_wide_refit(carom_mesh* mesh) {
    struct carom_mesh_data* d = mesh->data;
    f4 lo, hi;
    if (d->wide_nodes) {
        refit(d, 0, &lo, &hi);
    } else {
        mid_triangles_box(d, 0, mesh->triangle_count, &lo, &hi);
    }
    d->root_min = f4_to(lo);
    d->root_max = f4_to(hi);
    if (!d->wide_nodes) root_slab_make(d, mesh->triangle_count);
}
