// Triangle meshes and their trees: validation, tree invariants for every
// tree kind, depth bounds on hostile inputs, refit, allocation failure.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carom/carom.h"
#include "test_failing_alloc.h"
#include "mesh_io.h"
#include "mid/walk.h"
#include "reference.h"

static const carom_tree_kind KINDS[] = {CAROM_TREE_AABB, CAROM_TREE_AABB_SAH, CAROM_TREE_BOXTREE};
#define KIND_COUNT 3

// A random soup: n triangles with corners near random centres in a cube.
typedef struct soup {
    vec3s* v;
    int* idx;
    int n;
} soup;

static soup make_soup(int n, float spread, float size, unsigned long long seed) {
    soup s = {malloc(sizeof(vec3s) * 3 * (size_t)n), malloc(sizeof(int) * 3 * (size_t)n), n};
    ref_rng rng = {seed};
    for (int t = 0; t < n; ++t) {
        vec3s c = {{(float)ref_rng_uniform(&rng, -spread, spread),
                    (float)ref_rng_uniform(&rng, -spread, spread),
                    (float)ref_rng_uniform(&rng, -spread, spread)}};
        for (int k = 0; k < 3; ++k) {
            s.v[3 * t + k] = (vec3s){{c.x + (float)ref_rng_uniform(&rng, -size, size),
                                      c.y + (float)ref_rng_uniform(&rng, -size, size),
                                      c.z + (float)ref_rng_uniform(&rng, -size, size)}};
            s.idx[3 * t + k] = 3 * t + k;
        }
    }
    return s;
}

static void free_soup(soup* s) {
    free(s->v);
    free(s->idx);
}

static bool box_contains(const mid_walk_node* n, vec3s p) {
    for (int k = 0; k < 3; ++k) {
        if (p.raw[k] < n->lo[k] || p.raw[k] > n->hi[k]) return false;
    }
    return true;
}

static bool box_within(const mid_walk_node* inner, const mid_walk_node* outer) {
    return box_contains(outer, f4_to(inner->lo)) && box_contains(outer, f4_to(inner->hi));
}

// Walks a boxtree: every triangle in exactly one leaf and inside its
// leaf's box, leaves no larger than the leaf size and nodes larger, every
// box inside its parent's, children's ranges tiling their parent's, depth
// as reported and within the cap; counts the inner nodes and marks their
// slots in `used` (each once).
static void walk(const mid_tree* t, const mid_walk_node* n, int depth, int* seen, int* max_depth,
                 int* inner, bool* used) {
    const carom_mesh* m = t->mesh;
    assert_true(depth <= CAROM_MESH_MAX_DEPTH);
    if (depth > *max_depth) *max_depth = depth;
    const struct carom_mesh_data* d = m->data;
    if (n->leaf) {
        assert_true(n->count >= 1 && n->count <= d->leaf_size);
        for (int p = n->first; p < n->first + n->count; ++p) {
            vec3s v[3];
            mid_triangle(d, p, v);
            for (int k = 0; k < 3; ++k) assert_true(box_contains(n, v[k]));
            seen[d->ids[p] & MID_ID_MASK]++;
        }
        return;
    }
    assert_true(n->count > d->leaf_size);
    ++*inner;
    assert_true(n->index >= 0 && (size_t)n->index < m->tree_bytes / sizeof(mid_boxtree_node));
    assert_false(used[n->index]);
    used[n->index] = true;
    mid_walk_node l, r;
    mid_walk_children(t, n, &l, &r);
    assert_true(box_within(&l, n) && box_within(&r, n));
    assert_int_equal(l.first, n->first);
    assert_int_equal(l.count + r.count, n->count);
    assert_true(l.count > 0 && r.count > 0);
    walk(t, &l, depth + 1, seen, max_depth, inner, used);
    walk(t, &r, depth + 1, seen, max_depth, inner, used);
}

// The box of triangles [first, first + count), from their corners.
static void range_box(const struct carom_mesh_data* d, int first, int count, float min[3],
                      float max[3]) {
    for (int k = 0; k < 3; ++k) {
        min[k] = INFINITY;
        max[k] = -INFINITY;
    }
    for (int p = first; p < first + count; ++p) {
        vec3s v[3];
        mid_triangle(d, p, v);
        for (int c = 0; c < 3; ++c) {
            for (int k = 0; k < 3; ++k) {
                min[k] = fminf(min[k], v[c].raw[k]);
                max[k] = fmaxf(max[k], v[c].raw[k]);
            }
        }
    }
}

// A leaf's slab holds every corner of its triangles, closely: its bounds
// are the least and greatest projections on its normal of the corners'
// offsets from `centre` (computed here in double), padded by no more than
// a few float roundings of the offsets; the normal is unit, or (1, 0, 0)
// where the leaf's normals cancel.
static void check_slab(const struct carom_mesh_data* d, int first, int count,
                       const mid_leaf_slab* s, const float centre[3]) {
    double length2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        assert_true(isfinite(s->normal[k]));
        length2 += (double)s->normal[k] * s->normal[k];
    }
    assert_true(fabs(length2 - 1.0) < 1e-6);
    double lo = INFINITY, hi = -INFINITY, size = 0.0;
    for (int p = first; p < first + count; ++p) {
        vec3s v[3];
        mid_triangle(d, p, v);
        for (int c = 0; c < 3; ++c) {
            double x = 0.0;
            for (int k = 0; k < 3; ++k) {
                double offset = (double)v[c].raw[k] - centre[k];
                x += (double)s->normal[k] * offset;
                size = fmax(size, fabs(offset));
            }
            lo = fmin(lo, x);
            hi = fmax(hi, x);
        }
    }
    assert_true(s->lo <= lo && s->hi >= hi);
    double loose = 24.0 * FLT_EPSILON * size;
    assert_true(lo - s->lo <= loose && s->hi - hi <= loose);
}

// Walks an AABB tree's wide node w: leaves come in tree order (`next` is
// the first triangle the next leaf must start at), every lane in use is
// exactly the centre and half extents of the box of the triangles
// below it, unused lanes are empty, leaves hold 1 to leaf_size triangles
// and cover every triangle once, children come after their parents, and
// each leaf's slab (counted in slabs_seen) holds its triangles.
// Gives w's box (the union of its lanes') and the most wide nodes on a path
// from w down to a leaf.
static int walk_wide(const struct carom_mesh_data* d, int w, int* seen, int* slabs_seen, int* next,
                     float min[3], float max[3]) {
    const mid_wide_node* n = &d->wide_nodes[w];
    assert_true(n->count >= 2 && n->count <= 4);
    for (int k = 0; k < 3; ++k) {
        min[k] = INFINITY;
        max[k] = -INFINITY;
    }
    int levels = 0;
    for (int i = 0; i < 4; ++i) {
        if (i >= n->count) {
            for (int k = 0; k < 3; ++k) {
                assert_true(n->center[k][i] == 0.0f);
                assert_true(n->half[k][i] == -MID_WIDE_EMPTY);
            }
            continue;
        }
        float lo[3], hi[3];
        int32_t child = n->child[i];
        if (child < 0) {
            int first = mid_leaf_first(child), count = mid_leaf_count(child);
            assert_true(count >= 1 && count <= d->leaf_size);
            assert_int_equal(first, *next);  // lanes in tree order
            *next += count;
            const mid_leaf_slab* slab = mid_wide_slab(d->leaf_slabs, n, i);
            assert_true(slab >= d->leaf_slabs && slab < d->leaf_slabs + d->leaf_count);
            slabs_seen[slab - d->leaf_slabs]++;
            const float centre[3] = {n->center[0][i], n->center[1][i], n->center[2][i]};
            check_slab(d, first, count, slab, centre);
            range_box(d, first, count, lo, hi);
            for (int p = first; p < first + count; ++p) seen[d->ids[p] & MID_ID_MASK]++;
        } else {
            assert_true(child > w && child < d->wide_count);
            int below = walk_wide(d, child, seen, slabs_seen, next, lo, hi);
            if (below > levels) levels = below;
        }
        for (int k = 0; k < 3; ++k) {
            assert_true(n->center[k][i] == (lo[k] + hi[k]) * 0.5f);
            assert_true(n->half[k][i] == (hi[k] - lo[k]) * 0.5f);
            min[k] = fminf(min[k], lo[k]);
            max[k] = fmaxf(max[k], hi[k]);
        }
    }
    return levels + 1;
}

static void check_tree(const carom_mesh* m) {
    int* seen = calloc((size_t)m->triangle_count, sizeof(int));
    const struct carom_mesh_data* d = m->data;
    float min[3], max[3];
    if (m->tree == CAROM_TREE_BOXTREE) {
        int max_depth = 0, inner = 0;
        const size_t slots = m->tree_bytes / sizeof(mid_boxtree_node);
        bool* used = calloc(slots + 1, sizeof *used);
        mid_tree t = mid_tree_of(m);
        mid_walk_node root;
        mid_walk_root(&t, &root);
        walk(&t, &root, 0, seen, &max_depth, &inner, used);
        assert_int_equal(max_depth, m->depth);
        assert_int_equal(inner, m->node_count);
        // Slots no node uses (under leaves) are zero.
        static const mid_boxtree_node zero;
        for (size_t i = 0; i < slots; ++i) {
            if (!used[i]) assert_memory_equal(&d->box_nodes[i], &zero, sizeof zero);
        }
        free(used);
        assert_null(d->wide_nodes);
        range_box(d, 0, m->triangle_count, min, max);
    } else if (m->node_count > 0) {
        // A wide node stands for a binary node at an even depth and holds
        // its grandchildren, or its children where they are leaves: a leaf
        // at binary depth D is below (D + 1) / 2 of them. The build reports
        // the binary depth.
        assert_non_null(d->wide_nodes);
        assert_int_equal(m->node_count, d->wide_count);
        assert_true(m->tree_bytes == (size_t)d->wide_count * sizeof(mid_wide_node) +
                                         (size_t)d->leaf_count * sizeof(mid_leaf_slab));
        // Every leaf has a slab of its own.
        assert_non_null(d->leaf_slabs);
        int* slabs_seen = calloc((size_t)d->leaf_count, sizeof(int));
        int next = 0;
        int levels = walk_wide(d, 0, seen, slabs_seen, &next, min, max);
        for (int i = 0; i < d->leaf_count; ++i) assert_int_equal(slabs_seen[i], 1);
        free(slabs_seen);
        assert_int_equal(next, m->triangle_count);
        assert_int_equal(levels, (m->depth + 1) / 2);
        assert_true(m->depth <= CAROM_MESH_MAX_DEPTH);
    } else {
        // One leaf: no node at all.
        assert_null(d->wide_nodes);
        const float centre[3] = {(d->root_min.x + d->root_max.x) * 0.5f,
                                 (d->root_min.y + d->root_max.y) * 0.5f,
                                 (d->root_min.z + d->root_max.z) * 0.5f};
        check_slab(d, 0, m->triangle_count, &d->root_slab, centre);
        assert_true(m->triangle_count <= d->leaf_size);
        assert_int_equal(m->depth, 0);
        range_box(d, 0, m->triangle_count, min, max);
        for (int p = 0; p < m->triangle_count; ++p) seen[d->ids[p] & MID_ID_MASK]++;
    }
    for (int i = 0; i < m->triangle_count; ++i) assert_int_equal(seen[i], 1);
    // The root's box: the box of every triangle.
    assert_true(d->root_min.x == min[0] && d->root_min.y == min[1] && d->root_min.z == min[2]);
    assert_true(d->root_max.x == max[0] && d->root_max.y == max[1] && d->root_max.z == max[2]);
    free(seen);
}

static void test_tree_invariants_on_soups(void** state) {
    (void)state;
    int sizes[] = {1, 2, 3, 17, 500};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        soup so = make_soup(sizes[s], 5.0f, 0.5f, 11 + s);
        for (int k = 0; k < KIND_COUNT; ++k) {
            for (int leaf = 0; leaf <= 16; leaf += leaf < 4 ? 1 : 4) {
                carom_mesh_desc desc = {KINDS[k], leaf};
                carom_mesh m;
                assert_int_equal(carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &m), CAROM_OK);
                assert_int_equal(m.triangle_count, so.n);
                check_tree(&m);
                for (int t = 0; t < so.n; ++t) {
                    carom_mesh_corners c = carom_mesh_triangle(&m, t);
                    assert_memory_equal(&c.a, &so.v[3 * t], sizeof(vec3s));
                    assert_memory_equal(&c.c, &so.v[3 * t + 2], sizeof(vec3s));
                }
                carom_mesh_destroy(&m);
                assert_null(m.data);
            }
        }
        free_soup(&so);
    }
}

// Zachmann's budget: the boxtree's nodes take at most 8 bytes per triangle,
// whatever the leaf size: a slot for each of triangle_count - 1 nodes, none
// when every triangle fits one leaf; with leaves of one, every slot is a
// node.
static void test_boxtree_memory(void** state) {
    (void)state;
    soup small = make_soup(5, 1.0f, 0.4f, 4);
    for (int leaf = 1; leaf <= 16; ++leaf) {
        carom_mesh_desc desc = {CAROM_TREE_BOXTREE, leaf};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(small.v, 15, small.idx, 5, &desc, &m), CAROM_OK);
        assert_int_equal(m.tree_bytes, leaf < 5 ? 4 * sizeof(mid_boxtree_node) : 0);
        if (leaf >= 5) assert_int_equal(m.node_count, 0);
        check_tree(&m);
        carom_mesh_destroy(&m);
    }
    free_soup(&small);
    soup so = make_soup(1000, 5.0f, 0.5f, 3);
    for (int leaf = 0; leaf <= 16; ++leaf) {
        carom_mesh_desc desc = {CAROM_TREE_BOXTREE, leaf};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &m), CAROM_OK);
        assert_int_equal(m.tree_bytes, (size_t)(so.n - 1) * sizeof(mid_boxtree_node));
        assert_true(m.tree_bytes <= 8 * (size_t)so.n);
        if (leaf == 1) {
            assert_int_equal(m.node_count, so.n - 1);
        } else {
            // A leaf holds at least one triangle and a node splits more than
            // a leaf's worth.
            const int size = leaf ? leaf : CAROM_MESH_DEFAULT_BOXTREE_LEAF_SIZE;
            assert_true(m.node_count < so.n && m.node_count >= so.n / size - 1);
        }
        check_tree(&m);
        carom_mesh_destroy(&m);
    }
    free_soup(&so);
}

// A boxtree child's box (mid_boxtree_child, which the build and the walks
// share) moves exactly the two faces its pair code names, each to the plane
// mid_boxtree_plane gives, bit for bit, and keeps the parent's other four:
// every pair, extreme and middle codes, in a box of three distinct extents
// (where a face moved on the wrong axis or side shows) and in one with a
// flat axis.
static void test_boxtree_child_planes(void** state) {
    (void)state;
    const f4 boxes[2][2] = {{{-1.5f, 0.25f, 3.0f, 0.0f}, {2.0f, 1.0f, 7.5f, 0.0f}},
                            {{-1.5f, 0.25f, 3.0f, 0.0f}, {2.0f, 0.25f, 7.5f, 0.0f}}};
    const uint8_t codes[][2] = {{0, 255}, {255, 0}, {17, 200}, {128, 128}, {1, 254}};
    for (int b = 0; b < 2; ++b) {
        const f4 lo = boxes[b][0], hi = boxes[b][1];
        for (unsigned pair = 0; pair < MID_BOXTREE_PAIRS; ++pair) {
            for (size_t c = 0; c < sizeof codes / sizeof codes[0]; ++c) {
                f4 child_lo, child_hi;
                mid_boxtree_child(lo, hi, pair, codes[c], &child_lo, &child_hi);
                float want_lo[3] = {lo[0], lo[1], lo[2]}, want_hi[3] = {hi[0], hi[1], hi[2]};
                for (int j = 0; j < 2; ++j) {
                    const int face = MID_FACE_PAIRS[pair][j], axis = face >> 1;
                    const float plane =
                        mid_boxtree_plane(lo[axis], hi[axis], codes[c][j], face & 1);
                    if (face & 1) {
                        want_hi[axis] = plane;
                    } else {
                        want_lo[axis] = plane;
                    }
                }
                for (int k = 0; k < 3; ++k) {
                    float got_lo = child_lo[k], got_hi = child_hi[k];
                    assert_memory_equal(&got_lo, &want_lo[k], sizeof got_lo);
                    assert_memory_equal(&got_hi, &want_hi[k], sizeof got_hi);
                }
            }
        }
    }
}

// Hostile layouts for a midpoint split: a geometric cluster (each triangle
// half the distance of the last from the origin, so every split peels off
// one) and many copies of one triangle (no plane separates them). Depth must
// stay within the cap and every triangle must still be found.
static void test_depth_is_bounded(void** state) {
    (void)state;
    enum { N = 400 };
    vec3s* v = malloc(sizeof(vec3s) * 3 * N);
    int* idx = malloc(sizeof(int) * 3 * N);
    for (int layout = 0; layout < 2; ++layout) {
        for (int t = 0; t < N; ++t) {
            float x = layout == 0 ? ldexpf(1.0f, -(t % 120)) : 1.0f;
            float s = layout == 0 ? x * 0.1f : 0.5f;
            v[3 * t] = (vec3s){{x, 0, 0}};
            v[3 * t + 1] = (vec3s){{x + s, 0, 0}};
            v[3 * t + 2] = (vec3s){{x, s, 0}};
            for (int k = 0; k < 3; ++k) idx[3 * t + k] = 3 * t + k;
        }
        for (int k = 0; k < KIND_COUNT; ++k) {
            carom_mesh_desc desc = {KINDS[k], 1};
            carom_mesh m;
            assert_int_equal(carom_mesh_create(v, 3 * N, idx, N, &desc, &m), CAROM_OK);
            assert_true(m.depth <= CAROM_MESH_MAX_DEPTH);
            check_tree(&m);
            carom_mesh_destroy(&m);
        }
    }
    free(v);
    free(idx);
}

static void test_invalid_arguments(void** state) {
    (void)state;
    vec3s v[4] = {{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}, {{0, 0, 1}}};
    int idx[6] = {0, 1, 2, 0, 2, 3};
    carom_mesh m;
    memset(&m, 0xab, sizeof m);
    assert_int_equal(carom_mesh_create(NULL, 4, idx, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_null(m.data);
    assert_int_equal(carom_mesh_create(v, 4, NULL, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, NULL, NULL), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 0, idx, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, 0, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, -1, idx, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, -5, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, CAROM_MESH_MAX_TRIANGLES + 1, NULL, &m),
                     CAROM_ERR_CAPACITY);
    carom_mesh_desc bad_leaf = {CAROM_TREE_AABB, 17}, bad_kind = {(carom_tree_kind)7, 0},
                    negative_leaf = {CAROM_TREE_AABB, -1};
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, &bad_leaf, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, &bad_kind, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, &negative_leaf, &m), CAROM_ERR_INVALID_ARG);
    int out_of_range[6] = {0, 1, 2, 0, 2, 4}, negative[6] = {0, 1, 2, 0, -1, 3};
    assert_int_equal(carom_mesh_create(v, 4, out_of_range, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_create(v, 4, negative, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
    float bad_values[] = {NAN, INFINITY, -INFINITY, 2e12f};
    for (int i = 0; i < 4; ++i) {
        vec3s w[4];
        memcpy(w, v, sizeof w);
        w[3].raw[i % 3] = bad_values[i];
        assert_int_equal(carom_mesh_create(w, 4, idx, 2, NULL, &m), CAROM_ERR_INVALID_ARG);
        assert_null(m.data);
    }
    // Destroy tolerates NULL and zeroed meshes; refit rejects bad calls and
    // leaves the mesh as it was.
    carom_mesh_destroy(NULL);
    carom_mesh zero = {0};
    carom_mesh_destroy(&zero);
    // The default tree, with no description or a zeroed one, is SAH's.
    carom_mesh_desc zeroed = {0};
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, &zeroed, &m), CAROM_OK);
    assert_int_equal(m.tree, CAROM_TREE_AABB_SAH);
    carom_mesh_destroy(&m);
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, NULL, &m), CAROM_OK);
    assert_int_equal(m.tree, CAROM_TREE_AABB_SAH);
    assert_int_equal(carom_mesh_refit(&m, v, 3), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_refit(&m, NULL, 4), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_refit(NULL, v, 4), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_mesh_refit(&zero, v, 4), CAROM_ERR_INVALID_ARG);
    vec3s w[4];
    memcpy(w, v, sizeof w);
    w[1].y = NAN;
    assert_int_equal(carom_mesh_refit(&m, w, 4), CAROM_ERR_INVALID_ARG);
    carom_mesh_corners c = carom_mesh_triangle(&m, 0);
    assert_true(c.b.x == 1.0f && c.b.y == 0.0f);
    c = carom_mesh_triangle(&m, 2);
    assert_true(c.a.x == 0.0f && c.b.x == 0.0f && c.c.x == 0.0f);
    c = carom_mesh_triangle(NULL, 0);
    assert_true(c.a.x == 0.0f);
    carom_mesh_destroy(&m);
}

// Zero-area triangles (repeated and collinear corners) are kept and counted,
// and the tree still bounds them.
static void test_degenerate_triangles(void** state) {
    (void)state;
    vec3s v[5] = {{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}, {{2, 0, 0}}, {{0, 0, 1}}};
    int idx[12] = {0, 1, 2, 0, 0, 4, 0, 1, 3, 0, 2, 4};
    for (int k = 0; k < KIND_COUNT; ++k) {
        carom_mesh_desc desc = {KINDS[k], 0};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(v, 5, idx, 4, &desc, &m), CAROM_OK);
        assert_int_equal(m.degenerate_count, 2);
        check_tree(&m);
        // Refit into a configuration where a third becomes flat.
        vec3s w[5];
        memcpy(w, v, sizeof w);
        w[4] = (vec3s){{0, 2, 0}};
        assert_int_equal(carom_mesh_refit(&m, w, 5), CAROM_OK);
        assert_int_equal(m.degenerate_count, 3);
        check_tree(&m);
        carom_mesh_destroy(&m);
    }
}

// Leaves whose normals cancel: a double-sided soup (each triangle twice,
// the second wound the other way) and a mesh of zero-area triangles only,
// which gives every leaf the fallback normal (1, 0, 0). Every slab must
// still hold its leaf (check_tree), at every leaf size.
static void test_slabs_where_normals_cancel(void** state) {
    (void)state;
    soup so = make_soup(200, 3.0f, 0.5f, 77);
    vec3s* v = malloc(sizeof(vec3s) * 3 * (size_t)so.n);
    int* idx = malloc(sizeof(int) * 6 * (size_t)so.n);
    memcpy(v, so.v, sizeof(vec3s) * 3 * (size_t)so.n);
    for (int t = 0; t < so.n; ++t) {
        int* a = &idx[6 * t];
        a[0] = so.idx[3 * t], a[1] = so.idx[3 * t + 1], a[2] = so.idx[3 * t + 2];
        a[3] = so.idx[3 * t], a[4] = so.idx[3 * t + 2], a[5] = so.idx[3 * t + 1];
    }
    for (int leaf = 2; leaf <= 16; leaf *= 2) {
        carom_mesh_desc desc = {CAROM_TREE_AABB, leaf};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(v, 3 * so.n, idx, 2 * so.n, &desc, &m), CAROM_OK);
        check_tree(&m);
        carom_mesh_destroy(&m);
    }
    // Collinear corners: every triangle has zero area.
    for (int i = 0; i < 3 * so.n; ++i) v[i] = (vec3s){{(float)i * 0.01f, (float)i * 0.02f, 0.5f}};
    carom_mesh_desc desc = {CAROM_TREE_AABB, 4};
    carom_mesh m;
    assert_int_equal(carom_mesh_create(v, 3 * so.n, idx, 2 * so.n, &desc, &m), CAROM_OK);
    assert_int_equal(m.degenerate_count, 2 * so.n);
    check_tree(&m);
    const struct carom_mesh_data* d = m.data;
    assert_true(d->leaf_count > 1);
    for (int i = 0; i < d->leaf_count; ++i) {
        assert_true(d->leaf_slabs[i].normal[0] == 1.0f && d->leaf_slabs[i].normal[1] == 0.0f &&
                    d->leaf_slabs[i].normal[2] == 0.0f);
    }
    carom_mesh_destroy(&m);
    free(v);
    free(idx);
    free_soup(&so);
}

// Refit keeps the topology but every box must bound its triangles again:
// on meshes of one, two and three triangles (a leaf alone; with leaves of
// one, a boxtree of one node) and on a soup of 300.
static void test_refit_bounds_moved_vertices(void** state) {
    (void)state;
    for (int n = 1; n <= 3; ++n) {
        soup small = make_soup(n, 1.0f, 0.4f, 40 + (unsigned)n);
        vec3s moved[9];
        for (int i = 0; i < 3 * n; ++i) {
            vec3s p = small.v[i];
            moved[i] = (vec3s){{p.y + 0.2f, p.z * 1.5f, p.x - 0.3f}};
        }
        for (int k = 0; k < KIND_COUNT; ++k) {
            for (int leaf = 0; leaf <= 1; ++leaf) {
                carom_mesh_desc desc = {KINDS[k], leaf};
                carom_mesh m;
                assert_int_equal(carom_mesh_create(small.v, 3 * n, small.idx, n, &desc, &m),
                                 CAROM_OK);
                const int nodes = m.node_count;
                assert_int_equal(carom_mesh_refit(&m, moved, 3 * n), CAROM_OK);
                assert_int_equal(m.node_count, nodes);
                check_tree(&m);
                carom_mesh_destroy(&m);
            }
        }
        free_soup(&small);
    }
    soup so = make_soup(300, 3.0f, 0.3f, 21);
    vec3s* moved = malloc(sizeof(vec3s) * 3 * (size_t)so.n);
    for (int i = 0; i < 3 * so.n; ++i) {
        vec3s p = so.v[i];
        moved[i] = (vec3s){{p.x + 0.7f * sinf(2.0f * p.y), p.y * 1.3f, p.z - 0.5f * cosf(p.x)}};
    }
    for (int k = 0; k < KIND_COUNT; ++k) {
        for (int leaf = 0; leaf <= 1; ++leaf) {
            carom_mesh_desc desc = {KINDS[k], leaf};
            carom_mesh m;
            assert_int_equal(carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &m), CAROM_OK);
            int nodes = m.node_count;
            assert_int_equal(carom_mesh_refit(&m, moved, 3 * so.n), CAROM_OK);
            assert_int_equal(m.node_count, nodes);
            check_tree(&m);
            carom_mesh_destroy(&m);
        }
    }
    free(moved);
    free_soup(&so);
}

// The mesh keeps its vertices in its own order (the order its tree's
// triangles first use them): a grid of shared corners, with vertices no
// triangle uses before, among and after them, gives every triangle's
// corners back by the caller's numbering, after create and after a refit
// that moves every vertex, used or not; the bounds cover the unused ones.
static void test_vertex_order_is_private(void** state) {
    (void)state;
    enum { SIDE = 12, GRID = SIDE * SIDE, UNUSED = 3, NV = GRID + UNUSED };
    enum { NT = 2 * (SIDE - 1) * (SIDE - 1) };
    // The grid's vertex i is the caller's vertex 1 + i + (i >= GRID / 2);
    // vertices 0, GRID / 2 + 1 and NV - 1 are unused, far out so that the
    // bounds show them.
    vec3s v[NV], moved[NV];
    int index_of[GRID];
    for (int i = 0; i < GRID; ++i) index_of[i] = 1 + i + (i >= GRID / 2);
    v[0] = (vec3s){{-50.0f, 0.0f, 0.0f}};
    v[GRID / 2 + 1] = (vec3s){{0.0f, 60.0f, 0.0f}};
    v[NV - 1] = (vec3s){{0.0f, 0.0f, -70.0f}};
    for (int i = 0; i < GRID; ++i) {
        float x = (float)(i % SIDE), y = (float)(i / SIDE);
        v[index_of[i]] = (vec3s){{x, y, 0.3f * sinf(x) * cosf(y)}};
    }
    int idx[3 * NT], t = 0;
    // Rows bottom up, then the triangles reversed. The mesh puts unused
    // vertices last, so vertex 0 at least moves; the test asserts that
    // some vertex did.
    for (int y = 0; y + 1 < SIDE; ++y) {
        for (int x = 0; x + 1 < SIDE; ++x) {
            int a = index_of[y * SIDE + x], b = index_of[y * SIDE + x + 1];
            int c = index_of[(y + 1) * SIDE + x], d = index_of[(y + 1) * SIDE + x + 1];
            int quad[6] = {a, b, d, a, d, c};
            memcpy(&idx[3 * t], quad, sizeof quad);
            t += 2;
        }
    }
    for (int i = 0, j = NT - 1; i < j; ++i, --j) {
        for (int k = 0; k < 3; ++k) {
            int swap = idx[3 * i + k];
            idx[3 * i + k] = idx[3 * j + k];
            idx[3 * j + k] = swap;
        }
    }
    for (int i = 0; i < NV; ++i) {
        moved[i] = (vec3s){{v[i].x * 1.5f + 2.0f, v[i].y - 0.25f * v[i].x, v[i].z + 1.0f}};
    }
    for (int k = 0; k < KIND_COUNT; ++k) {
        carom_mesh_desc desc = {KINDS[k], 0};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(v, NV, idx, NT, &desc, &m), CAROM_OK);
        int moved_vertices = 0;
        for (int i = 0; i < NV; ++i) moved_vertices += m.data->vertex_slot[i] != i;
        assert_true(moved_vertices > 0);
        for (int pass = 0; pass < 2; ++pass) {
            const vec3s* expect = pass == 0 ? v : moved;
            for (int i = 0; i < NT; ++i) {
                carom_mesh_corners c = carom_mesh_triangle(&m, i);
                assert_memory_equal(&c.a, &expect[idx[3 * i]], sizeof(vec3s));
                assert_memory_equal(&c.b, &expect[idx[3 * i + 1]], sizeof(vec3s));
                assert_memory_equal(&c.c, &expect[idx[3 * i + 2]], sizeof(vec3s));
            }
            carom_aabb box = {expect[0], expect[0]};
            for (int i = 1; i < NV; ++i) {
                box.min = v3_min(box.min, expect[i]);
                box.max = v3_max(box.max, expect[i]);
            }
            assert_memory_equal(&m.bounds, &box, sizeof box);
            check_tree(&m);
            if (pass == 0) assert_int_equal(carom_mesh_refit(&m, moved, NV), CAROM_OK);
        }
        carom_mesh_destroy(&m);
    }
}

// Allocation failure at every allocation of every build: out of memory,
// nothing leaked (cmocka's allocator checks at the end of the test).
static void test_out_of_memory(void** state) {
    (void)state;
    soup so = make_soup(40, 2.0f, 0.5f, 5);
    carom_allocator a = {failing_realloc, hooked_free, NULL};
    carom_set_allocator(&a);
    for (int k = 0; k < KIND_COUNT; ++k) {
        int failures = 0;
        for (g_fail_at = 1;; ++g_fail_at) {
            g_count = 0;
            carom_mesh_desc desc = {KINDS[k], 0};
            carom_mesh m;
            carom_status s = carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &m);
            if (s == CAROM_OK) {
                carom_mesh_destroy(&m);
                break;
            }
            assert_int_equal(s, CAROM_ERR_OUT_OF_MEMORY);
            assert_null(m.data);
            failures++;
        }
        assert_true(failures >= 8);
    }
    carom_set_allocator(NULL);
    free_soup(&so);
}

// A boxtree's refit gathers its nodes' true boxes into scratch memory first;
// without it (the allocation fails), each node gathers its children's from
// their triangles, and the tree must come out the same, bit for bit, and
// valid: with leaves of one and of the default size.
static void test_boxtree_refit_without_scratch(void** state) {
    (void)state;
    soup so = make_soup(300, 3.0f, 0.3f, 23);
    vec3s* moved = malloc(sizeof(vec3s) * 3 * (size_t)so.n);
    for (int i = 0; i < 3 * so.n; ++i) {
        vec3s p = so.v[i];
        moved[i] = (vec3s){{p.x - 0.4f * sinf(1.5f * p.z), p.y + 0.3f * cosf(p.x), p.z * 0.8f}};
    }
    for (int leaf = 0; leaf <= 1; ++leaf) {
        carom_mesh_desc desc = {CAROM_TREE_BOXTREE, leaf};
        carom_mesh with, without;
        assert_int_equal(carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &with), CAROM_OK);
        assert_int_equal(carom_mesh_create(so.v, 3 * so.n, so.idx, so.n, &desc, &without),
                         CAROM_OK);
        carom_allocator a = {failing_realloc, hooked_free, NULL};
        carom_set_allocator(&a);
        g_count = 0;
        g_fail_at = 0;  // none fails: the refit borrows its scratch once (and frees it)
        assert_int_equal(carom_mesh_refit(&with, moved, 3 * so.n), CAROM_OK);
        assert_int_equal(g_count, 1);
        g_count = 0;
        g_fail_at = 1;  // that allocation fails
        assert_int_equal(carom_mesh_refit(&without, moved, 3 * so.n), CAROM_OK);
        assert_int_equal(g_count, 1);
        carom_set_allocator(NULL);
        check_tree(&without);
        // The planes are codes; the root's box compares as numbers (a bound
        // of zero may come out with either sign).
        const size_t bytes = (size_t)(so.n - 1) * sizeof(mid_boxtree_node);
        assert_memory_equal(with.data->box_nodes, without.data->box_nodes, bytes);
        for (int k = 0; k < 3; ++k) {
            assert_true(with.data->root_min.raw[k] == without.data->root_min.raw[k]);
            assert_true(with.data->root_max.raw[k] == without.data->root_max.raw[k]);
        }
        carom_mesh_destroy(&with);
        carom_mesh_destroy(&without);
    }
    free(moved);
    free_soup(&so);
}

// A refit to the vertices the tree was built on gives the build's tree back,
// every slot bit for bit (the unused ones stay zero), whether or not its
// scratch can be had: for leaves of 1 to 16, on meshes small enough to be
// one leaf, a few leaves, or hundreds.
static void test_boxtree_refit_keeps_its_build(void** state) {
    (void)state;
    const int sizes[] = {1, 2, 3, 4, 5, 17, 300};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
        const int n = sizes[s];
        soup so = make_soup(n, 2.0f, 0.4f, 60 + s);
        for (int leaf = 1; leaf <= 16; ++leaf) {
            for (int fail = 0; fail <= 1; ++fail) {
                carom_mesh_desc desc = {CAROM_TREE_BOXTREE, leaf};
                carom_mesh m;
                assert_int_equal(carom_mesh_create(so.v, 3 * n, so.idx, n, &desc, &m), CAROM_OK);
                const size_t bytes = m.tree_bytes;
                const int nodes = m.node_count, depth = m.depth;
                const vec3s lo = m.data->root_min, hi = m.data->root_max;
                mid_boxtree_node* built = malloc(bytes + 1);
                if (bytes) memcpy(built, m.data->box_nodes, bytes);
                carom_allocator a = {failing_realloc, hooked_free, NULL};
                carom_set_allocator(&a);
                g_count = 0;
                g_fail_at = fail;  // 1: the scratch cannot be had
                assert_int_equal(carom_mesh_refit(&m, so.v, 3 * n), CAROM_OK);
                carom_set_allocator(NULL);
                assert_int_equal(m.tree_bytes, bytes);
                assert_int_equal(m.node_count, nodes);
                assert_int_equal(m.depth, depth);
                if (bytes) assert_memory_equal(m.data->box_nodes, built, bytes);
                for (int k = 0; k < 3; ++k) {
                    assert_true(m.data->root_min.raw[k] == lo.raw[k]);
                    assert_true(m.data->root_max.raw[k] == hi.raw[k]);
                }
                check_tree(&m);
                free(built);
                carom_mesh_destroy(&m);
            }
        }
        free_soup(&so);
    }
}

// The real meshes the queries are tested on build valid trees of every kind.
static void test_real_meshes(void** state) {
    (void)state;
    const char* names[] = {"meshes/bunny00.off", "meshes/armadillo.off"};
    for (int i = 0; i < 2; ++i) {
        mesh_data md;
        if (mesh_load_named(names[i], &md) != MESH_OK) {
            fail_msg("cannot load %s from %s (run scripts/fetch-data.sh)", names[i], mesh_data_dir());
        }
        for (int k = 0; k < KIND_COUNT; ++k) {
            // The boxtree with leaves of one too.
            const int last_leaf = KINDS[k] == CAROM_TREE_BOXTREE ? 1 : 0;
            for (int leaf = 0; leaf <= last_leaf; ++leaf) {
                carom_mesh_desc desc = {KINDS[k], leaf};
                carom_mesh m;
                assert_int_equal(carom_mesh_create((const vec3s*)md.vertices, md.vertex_count,
                                                   &md.triangles[0][0], md.triangle_count, &desc,
                                                   &m),
                                 CAROM_OK);
                check_tree(&m);
                if (KINDS[k] == CAROM_TREE_BOXTREE) {
                    assert_true(m.tree_bytes <= 8 * (size_t)md.triangle_count);
                }
                carom_mesh_destroy(&m);
            }
        }
        mesh_free(&md);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_invariants_on_soups),
        cmocka_unit_test(test_boxtree_memory),
        cmocka_unit_test(test_boxtree_child_planes),
        cmocka_unit_test(test_depth_is_bounded),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_degenerate_triangles),
        cmocka_unit_test(test_slabs_where_normals_cancel),
        cmocka_unit_test(test_refit_bounds_moved_vertices),
        cmocka_unit_test(test_boxtree_refit_without_scratch),
        cmocka_unit_test(test_boxtree_refit_keeps_its_build),
        cmocka_unit_test(test_vertex_order_is_private),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_real_meshes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
