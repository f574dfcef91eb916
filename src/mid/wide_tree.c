// The four-wide nodes of an AABB tree (mid_wide_node): built by collapsing
// every other level of the binary tree the build makes, and refitted in
// place, leaves first, to the boxes that collapse would give.
#include "mid/mesh_internal.h"

typedef struct wide_builder {
    const mid_aabb_node* nodes;
    mid_wide_node* wide;
    int used;
} wide_builder;

// Lane i of w from the box min..max.
static void lane_set(mid_wide_node* w, int i, const float min[3], const float max[3]) {
    for (int k = 0; k < 3; ++k) {
        w->center[k][i] = (min[k] + max[k]) * 0.5f;
        w->half[k][i] = (max[k] - min[k]) * 0.5f;
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
            lane_set(w, i, b->nodes[slot[i]].min, b->nodes[slot[i]].max);
        } else {
            for (int k = 0; k < 3; ++k) {
                w->center[k][i] = 0.0f;
                w->half[k][i] = -MID_WIDE_EMPTY;
            }
        }
        w->child[i] = 0;
    }
    w->count = count;
    for (int i = 0; i < count; ++i) {
        const mid_aabb_node* s = &b->nodes[slot[i]];
        if (s->count > 0) {
            w->child[i] = mid_leaf_ref(s->first, s->count);
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
    d->wide_count = 0;
    mesh->node_count = 0;
    mesh->tree_bytes = 0;
    if (count < 3) return CAROM_OK;  // the root is a leaf: nothing to walk
    // Each wide node stands for a distinct binary inner node, of which a
    // binary tree with n nodes has (n - 1) / 2.
    size_t cap = ((size_t)count - 1) / 2;
    mid_wide_node* wide = carom_alloc(cap * sizeof *wide);
    if (!wide) return CAROM_ERR_OUT_OF_MEMORY;
    wide_builder b = {nodes, wide, 1};
    collapse(&b, 0, 0);
    if ((size_t)b.used < cap) {
        mid_wide_node* shrunk = carom_realloc(wide, (size_t)b.used * sizeof *wide);
        if (shrunk) wide = shrunk;  // keeping the larger block is harmless
    }
    d->wide_nodes = wide;
    d->wide_count = b.used;
    mesh->node_count = b.used;
    mesh->tree_bytes = (size_t)b.used * sizeof *wide;
    return CAROM_OK;
}

// The box of triangles [first, first + count), as the build's
// mid_range_box makes it: min and max are exact, so any order gives the
// same box.
static void leaf_box(const struct carom_mesh_data* d, int first, int count, float min[3],
                     float max[3]) {
    for (int k = 0; k < 3; ++k) {
        min[k] = INFINITY;
        max[k] = -INFINITY;
    }
    for (int t = first; t < first + count; ++t) {
        for (int c = 0; c < 3; ++c) {
            const vec3s v = d->vertices[d->triangles[t][c]];
            for (int k = 0; k < 3; ++k) {
                min[k] = carom_minf(min[k], v.raw[k]);
                max[k] = carom_maxf(max[k], v.raw[k]);
            }
        }
    }
}

// Refits wide node w and everything below it, and gives its box: the
// union of its lanes' boxes, which is the binary node's it stands for.
// Each call goes one wide level down, so the recursion is at most the wide
// depth, about CAROM_MESH_MAX_DEPTH / 2, deep.
static void refit(struct carom_mesh_data* d, int w, float min[3], float max[3]) {
    mid_wide_node* n = &d->wide_nodes[w];
    for (int k = 0; k < 3; ++k) {
        min[k] = INFINITY;
        max[k] = -INFINITY;
    }
    for (int i = 0; i < n->count; ++i) {
        float lo[3], hi[3];
        int32_t child = n->child[i];
        if (child < 0) {
            leaf_box(d, mid_leaf_first(child), mid_leaf_count(child), lo, hi);
        } else {
            refit(d, child, lo, hi);
        }
        lane_set(n, i, lo, hi);
        for (int k = 0; k < 3; ++k) {
            min[k] = carom_minf(min[k], lo[k]);
            max[k] = carom_maxf(max[k], hi[k]);
        }
    }
}

void mid_wide_refit(carom_mesh* mesh) {
    struct carom_mesh_data* d = mesh->data;
    float min[3], max[3];
    if (d->wide_nodes) {
        refit(d, 0, min, max);
    } else {
        leaf_box(d, 0, mesh->triangle_count, min, max);
    }
    d->root_min = v3(min[0], min[1], min[2]);
    d->root_max = v3(max[0], max[1], max[2]);
}
