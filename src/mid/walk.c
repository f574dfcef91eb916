// The nearest-first walk shared by ray casts and shape casts.
#include "mid/walk.h"

static inline float enter(const mid_sweep* s, const mid_walk_node* n, float limit) {
    return mid_slab_enter(n->lo, n->hi, s->grow, s->origin, s->inv_dir, limit);
}

// On a boxtree each child's box comes from its parent's, so boxes ride on
// the stack. (An AABB tree of one leaf comes here too: its root is a leaf.)
static void walk_boxes(const mid_tree* t, const mid_sweep* s, float* limit,
                       mid_sweep_leaf_fn* leaf, void* ctx) {
    struct {
        mid_walk_node node;
        float t;
    } stack[CAROM_MESH_MAX_DEPTH + 2];
    mid_walk_root(t, &stack[0].node);
    stack[0].t = enter(s, &stack[0].node, *limit);
    int top = stack[0].t <= *limit;
    while (top > 0) {
        --top;
        if (stack[top].t > *limit) continue;
        // Read in place: the children are made before anything is pushed
        // over it.
        const mid_walk_node* n = &stack[top].node;
        if (n->leaf) {
            if (leaf(ctx, n, limit)) return;
            continue;
        }
        mid_walk_node c[2];
        mid_walk_children(t, n, &c[0], &c[1]);
        const f4 lo[2] = {c[0].lo, c[1].lo}, hi[2] = {c[0].hi, c[1].hi};
        float te[2];
        mid_slab_enter2(lo, hi, s->grow, s->origin, s->inv_dir, *limit, te);
        const float t0 = te[0], t1 = te[1];
        int near = t1 < t0;
        float tn = near ? t1 : t0, tf = near ? t0 : t1;
        if (tf <= *limit) {
            stack[top].node = c[1 - near];
            stack[top++].t = tf;
        }
        if (tn <= *limit) {
            stack[top].node = c[near];
            stack[top++].t = tn;
        }
    }
}

// Whether the sweep, inside leaf lane i of n from `near` to `far`, meets
// the leaf's slab (mid_leaf_slab) grown by the sweep's `grow`: a sweep
// that misses it misses the leaf's triangles. Where a leaf's box is much
// larger than the patch of surface it holds (a tilted patch), most sweeps
// through the box pass by the slab. The growth is at least the sweep's
// slack along any normal, which covers the rounding of the projections.
static inline bool meets_slab(const mid_tree* t, const mid_wide_node* n, int i,
                              const mid_sweep* s, float near, float far) {
    const mid_leaf_slab* slab = mid_wide_slab(t->d->leaf_slabs, n, i);
    const f4 normal = mid_load3(slab->normal);
    const f4 centre = f4_make(n->center[0][i], n->center[1][i], n->center[2][i]);
    const float reach = f4_dot(f4_abs(normal), s->grow);
    const float from = f4_dot(normal, s->origin - centre), rate = f4_dot(normal, s->dir);
    const float p0 = from + near * rate, p1 = from + far * rate;
    return carom_maxf(p0, p1) >= slab->lo - reach && carom_minf(p0, p1) <= slab->hi + reach;
}

// On an AABB tree, a step enters four boxes at once: the slab test lane by
// lane, then the boxes entered by `*limit` pushed farthest first. Boxes are
// centre and half extents, as the nodes keep them; `grow` (the sweep's
// slack or the shape's half extents) covers their rounding. A leaf is
// entered only if the sweep meets its slab within its box. The stack
// holds up to three pending boxes per wide level plus one.
static void walk_wide(const mid_tree* t, const mid_sweep* s, float* limit,
                      mid_sweep_leaf_fn* leaf, void* ctx) {
    const mid_wide_node* wide = t->d->wide_nodes;
    struct {
        int ref;
        float t;
    } stack[3 * CAROM_MESH_MAX_DEPTH + 4];
    mid_walk_node root;
    mid_walk_root(t, &root);
    stack[0].ref = 0;
    stack[0].t = enter(s, &root, *limit);
    int top = stack[0].t <= *limit;
    f4 o[3], inv[3], grow[3];
    for (int k = 0; k < 3; ++k) {
        o[k] = mid_broadcast(s->origin, k);
        inv[k] = mid_broadcast(s->inv_dir, k);
        grow[k] = mid_broadcast(s->grow, k);
    }
    while (top > 0) {
        --top;
        if (stack[top].t > *limit) continue;
        int ref = stack[top].ref;
        if (ref < 0) {
            mid_walk_node range = {
                .first = mid_leaf_first(ref), .count = mid_leaf_count(ref), .leaf = true};
            if (leaf(ctx, &range, limit)) return;
            continue;
        }
        const mid_wide_node* n = &wide[ref];
        f4 near = (f4){0, 0, 0, 0};
        f4 exit = (f4){1, 1, 1, 1};  // where the sweep leaves each box
        for (int k = 0; k < 3; ++k) {
            f4 c, e;
            memcpy(&c, n->center[k], sizeof c);
            memcpy(&e, n->half[k], sizeof e);
            f4 a = (c - e - grow[k] - o[k]) * inv[k];
            f4 b = (c + e + grow[k] - o[k]) * inv[k];
            near = f4_max(near, f4_min(a, b));
            exit = f4_min(exit, f4_max(a, b));
        }
        const f4 far = f4_min(exit, (f4){*limit, *limit, *limit, *limit});
        // Unused lanes masked: their negative extents make inverted slabs,
        // which the min/max above would read as a huge box.
        static const i4 lanes[5] = {{0, 0, 0, 0}, {-1, 0, 0, 0}, {-1, -1, 0, 0}, {-1, -1, -1, 0},
                                    {-1, -1, -1, -1}};
        unsigned hit = (unsigned)i4_mask4((near <= far) & lanes[n->count]);
        for (unsigned m = hit; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            // Against the whole stretch inside the box, not only up to
            // `limit`: a ray nearly in a triangle's plane may report a hit
            // at a t that is rounding noise, which a leaf entered before
            // `limit` can still lower.
            if (n->child[i] < 0 && !meets_slab(t, n, i, s, near[i], exit[i])) hit &= ~(1u << i);
        }
        // Farthest first onto the stack, so the nearest is walked next.
        while (hit) {
            int best = __builtin_ctz(hit);
            for (unsigned m = hit & (hit - 1); m; m &= m - 1) {
                int i = __builtin_ctz(m);
                if (near[i] > near[best]) best = i;
            }
            hit &= ~(1u << best);
            stack[top].ref = n->child[best];
            stack[top++].t = near[best];
        }
    }
}

void mid_sweep_walk(const mid_tree* t, const mid_sweep* s, float* limit, mid_sweep_leaf_fn* leaf,
                    void* ctx) {
    if (t->wide) {
        walk_wide(t, s, limit, leaf, ctx);
    } else {
        walk_boxes(t, s, limit, leaf, ctx);
    }
}
