// The four-wide view of an AABB tree (mid_wide_node): built by collapsing
// every other level of the binary tree, and rebuilt the same way after a
// refit, which gives the same layout with the new boxes.
#include "mid/mesh_internal.h"

typedef struct wide_builder {
    const mid_aabb_node* nodes;
    mid_wide_node* wide;
    int used;
} wide_builder;

// Wide node `at` from binary inner node `n`; its wide children follow in
// depth-first order.
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
        const mid_aabb_node* s = i < count ? &b->nodes[slot[i]] : NULL;
        for (int k = 0; k < 3; ++k) {
            // The same roundings as a walk that derives centre and half
            // extents from the binary node's box.
            w->center[k][i] = s ? (s->min[k] + s->max[k]) * 0.5f : 0.0f;
            w->half[k][i] = s ? (s->max[k] - s->min[k]) * 0.5f : -MID_WIDE_EMPTY;
        }
        w->child[i] = 0;
    }
    w->count = count;
    for (int i = 0; i < count; ++i) {
        if (b->nodes[slot[i]].count > 0) {
            w->child[i] = ~slot[i];
        } else {
            int child = b->used++;
            w->child[i] = child;
            collapse(b, child, slot[i]);
        }
    }
}

static int wide_fill(carom_mesh* mesh, mid_wide_node* wide) {
    wide_builder b = {mesh->data->aabb_nodes, wide, 1};
    collapse(&b, 0, 0);
    return b.used;
}

carom_status mid_wide_build(carom_mesh* mesh) {
    struct carom_mesh_data* d = mesh->data;
    if (mesh->node_count < 3) return CAROM_OK;  // the root is a leaf: nothing to walk
    // Each wide node stands for a distinct binary inner node, of which a
    // binary tree with n nodes has (n - 1) / 2.
    size_t cap = ((size_t)mesh->node_count - 1) / 2;
    mid_wide_node* wide = carom_alloc(cap * sizeof *wide);
    if (!wide) return CAROM_ERR_OUT_OF_MEMORY;
    int used = wide_fill(mesh, wide);
    if ((size_t)used < cap) {
        mid_wide_node* shrunk = carom_realloc(wide, (size_t)used * sizeof *wide);
        if (shrunk) wide = shrunk;  // keeping the larger block is harmless
    }
    d->wide_nodes = wide;
    d->wide_count = used;
    mesh->tree_bytes += (size_t)used * sizeof *wide;
    return CAROM_OK;
}

void mid_wide_refit(carom_mesh* mesh) {
    if (mesh->data->wide_nodes) wide_fill(mesh, mesh->data->wide_nodes);
}
