// Mesh queries against brute force, for every tree kind:
// - the same float leaf test run over all triangles (or all candidate pairs
//   of a sort-and-sweep that knows nothing of trees) must give identical
//   result sets: the trees may only skip work, never answers;
// - the double-precision reference (tests/common/mesh_reference.h) must agree
//   except on pairs, rays and boxes touching within float rounding.
// Real meshes (bunny00, armadillo, the IFC house, a terrain) and random soups.
//
// CAROM_TEST_LIGHT=1 (set by the valgrind pass of scripts/test.sh, which runs
// everything 50 times slower) keeps every code path but drops the heaviest
// real-mesh poses, the exact double pass on real meshes, and most of the
// random rays and boxes.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carom/carom.h"
#include "mesh_io.h"
#include "mesh_reference.h"
#include "core/internal.h"
#include "mid/mesh_query.h"
#include "reference.h"
#include "test_poses.h"

static bool light(void) {
    const char* e = getenv("CAROM_TEST_LIGHT");
    return e && *e && strcmp(e, "0") != 0;
}

// Every tree kind with its default leaves, and the boxtree with leaves of
// one triangle.
static const carom_mesh_desc TREES[] = {{CAROM_TREE_AABB, 0},
                                        {CAROM_TREE_AABB_SAH, 0},
                                        {CAROM_TREE_BOXTREE, 0},
                                        {CAROM_TREE_BOXTREE, 1}};
#define TREE_COUNT ((int)(sizeof TREES / sizeof *TREES))

// Leaf sizes besides the defaults, for the soups' rays, boxes and casts:
// leaves of up to 16 triangles in either kind of tree, so that a soup of
// ten or sixteen is one leaf in some and a few in others.
static const carom_mesh_desc LEAF_SIZE_TREES[] = {
    {CAROM_TREE_AABB_SAH, 0}, {CAROM_TREE_BOXTREE, 2}, {CAROM_TREE_BOXTREE, 3},
    {CAROM_TREE_BOXTREE, 5},  {CAROM_TREE_BOXTREE, 8}, {CAROM_TREE_BOXTREE, 16},
    {CAROM_TREE_AABB_SAH, 1}, {CAROM_TREE_AABB, 16}};
#define LEAF_SIZE_TREE_COUNT ((int)(sizeof LEAF_SIZE_TREES / sizeof *LEAF_SIZE_TREES))
#define MAX_TREES 8
_Static_assert(sizeof TREES / sizeof *TREES <= MAX_TREES, "a check builds every tree at once");
_Static_assert(sizeof LEAF_SIZE_TREES / sizeof *LEAF_SIZE_TREES <= MAX_TREES,
               "a check builds every tree at once");

// --- fixtures ------------------------------------------------------------------

// Real meshes are parsed once per run (the IFC house takes a while) and
// shared read-only by the tests; the group teardown frees them.
#define CACHE_SIZE 8
static struct {
    const char* name;
    mesh_data md;
} g_cache[CACHE_SIZE];

static mesh_data load(const char* name) {
    int i = 0;
    for (; i < CACHE_SIZE && g_cache[i].name; ++i) {
        if (strcmp(g_cache[i].name, name) == 0) return g_cache[i].md;
    }
    assert_true(i < CACHE_SIZE);
    if (mesh_load_named(name, &g_cache[i].md) != MESH_OK) {
        fail_msg("cannot load %s from %s (run scripts/fetch-data.sh)", name, mesh_data_dir());
    }
    g_cache[i].name = name;
    return g_cache[i].md;
}

static int free_cache(void** state) {
    (void)state;
    for (int i = 0; i < CACHE_SIZE && g_cache[i].name; ++i) mesh_free(&g_cache[i].md);
    return 0;
}

// A soup of n random triangles of size ~`size` in a cube of half side
// `spread`, with a few degenerate ones mixed in.
static mesh_data make_soup(int n, double spread, double size, unsigned long long seed) {
    mesh_data md = {3 * n, malloc(sizeof(float[3]) * 3 * (size_t)n), n,
                    malloc(sizeof(int[3]) * (size_t)n)};
    ref_rng rng = {seed};
    for (int t = 0; t < n; ++t) {
        double c[3];
        for (int k = 0; k < 3; ++k) c[k] = ref_rng_uniform(&rng, -spread, spread);
        for (int j = 0; j < 3; ++j) {
            for (int k = 0; k < 3; ++k) {
                md.vertices[3 * t + j][k] = (float)(c[k] + ref_rng_uniform(&rng, -size, size));
            }
            md.triangles[t][j] = 3 * t + j;
        }
        if (t % 37 == 5) md.triangles[t][2] = md.triangles[t][1];  // zero area
    }
    return md;
}

// A soup of slivers: each triangle a random segment of length up to
// 2 * `size` with its third corner `width` off the segment's middle, so its
// normal is far shorter than its edges squared.
static mesh_data make_slivers(int n, double spread, double size, double width,
                              unsigned long long seed) {
    mesh_data md = make_soup(n, spread, size, seed);
    ref_rng rng = {seed + 1};
    for (int t = 0; t < n; ++t) {
        float* v0 = md.vertices[3 * t];
        float* v1 = md.vertices[3 * t + 1];
        float* v2 = md.vertices[3 * t + 2];
        double off[3];
        for (int k = 0; k < 3; ++k) off[k] = ref_rng_uniform(&rng, -width, width);
        for (int k = 0; k < 3; ++k) v2[k] = (float)(0.5 * ((double)v0[k] + v1[k]) + off[k]);
        md.triangles[t][2] = 3 * t + 2;
    }
    return md;
}

static carom_mesh build_tree(const mesh_data* md, carom_mesh_desc desc) {
    carom_mesh m;
    assert_int_equal(carom_mesh_create((const vec3s*)md->vertices, md->vertex_count,
                                       &md->triangles[0][0], md->triangle_count, &desc, &m),
                     CAROM_OK);
    return m;
}

static carom_mesh build(const mesh_data* md, carom_tree_kind kind) {
    return build_tree(md, (carom_mesh_desc){kind, 0});
}

static double mesh_size(const mesh_data* md) {
    double s = 0;
    for (int i = 0; i < md->vertex_count; ++i) {
        for (int k = 0; k < 3; ++k) s = fmax(s, fabs(md->vertices[i][k]));
    }
    return s;
}

static void pose_to_double(carom_xform xf, double rot[3][3], double trans[3]) {
    double q[4] = {xf.q.x, xf.q.y, xf.q.z, xf.q.w};
    ref_quat_to_matrix(q, rot);
    for (int k = 0; k < 3; ++k) trans[k] = xf.p.raw[k];
}

// b's frame into a's: x_a = Ra^T (Rb x + pb - pa).
static void relative_pose(carom_xform pa, carom_xform pb, double rot[3][3], double trans[3]) {
    double ra[3][3], rb[3][3], ta[3], tb[3];
    pose_to_double(pa, ra, ta);
    pose_to_double(pb, rb, tb);
    for (int i = 0; i < 3; ++i) {
        trans[i] = 0;
        for (int j = 0; j < 3; ++j) {
            rot[i][j] = 0;
            for (int k = 0; k < 3; ++k) rot[i][j] += ra[k][i] * rb[k][j];
            trans[i] += ra[j][i] * (tb[j] - ta[j]);
        }
    }
}

// --- pair sets ------------------------------------------------------------------

typedef struct pair_set {
    carom_triangle_pair* p;
    int n, cap;
} pair_set;

static bool collect_pair(void* user, carom_triangle_pair pair) {
    pair_set* s = user;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->p = realloc(s->p, sizeof *s->p * (size_t)s->cap);
    }
    s->p[s->n++] = pair;
    return true;
}

static int pair_order(const void* x, const void* y) {
    const carom_triangle_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static void sort_pairs(pair_set* s) {
    if (s->n > 1) qsort(s->p, (size_t)s->n, sizeof *s->p, pair_order);
}

static bool pair_in(const pair_set* s, carom_triangle_pair q) {
    return s->n > 0 && bsearch(&q, s->p, (size_t)s->n, sizeof q, pair_order) != NULL;
}

static void assert_same_pairs(const pair_set* x, const pair_set* y) {
    assert_int_equal(x->n, y->n);
    for (int i = 0; i < x->n; ++i) {
        assert_int_equal(x->p[i].a, y->p[i].a);
        assert_int_equal(x->p[i].b, y->p[i].b);
    }
}

static void corners(const carom_mesh* m, int t, vec3s v[3]) {
    carom_mesh_corners c = carom_mesh_triangle(m, t);
    v[0] = c.a;
    v[1] = c.b;
    v[2] = c.c;
}

// Triangle t of the data a mesh is built from.
static void data_corners(const mesh_data* md, int t, vec3s v[3]) {
    for (int c = 0; c < 3; ++c) memcpy(&v[c], md->vertices[md->triangles[t][c]], sizeof(float[3]));
}

static bool flat(const carom_mesh* m, int t) {
    return m->data->ids[m->data->position[t]] & MID_DEGENERATE_BIT;
}

// The brute force of carom_mesh_collide: its leaf test on every candidate
// pair from the tree-free sort-and-sweep of the reference.
static pair_set brute_force_pairs(const mesh_data* da, const carom_mesh* a, carom_xform pa,
                                  const mesh_data* db, const carom_mesh* b, carom_xform pb) {
    double rot[3][3], trans[3];
    relative_pose(pa, pb, rot, trans);
    mid_pair_frame f;
    assert_true(mid_pair_frame_init(a, pa, b, pb, &f));
    ref_pair_list cand = {0};
    // Candidates with a generous band: the float test must never accept a
    // pair whose exact boxes are further apart than float rounding.
    double band = 1e-4 * (mesh_size(da) + mesh_size(db));
    assert_int_equal(ref_mesh_box_candidates(da->vertices, da->triangles, da->triangle_count,
                                             db->vertices, db->triangles, db->triangle_count, rot,
                                             trans, band, &cand),
                     0);
    pair_set s = {0};
    for (int i = 0; i < cand.count; ++i) {
        int ta = cand.pairs[i].a, tb = cand.pairs[i].b;
        if (flat(a, ta) || flat(b, tb)) continue;
        vec3s va[3], vb[3];
        corners(a, ta, va);
        corners(b, tb, vb);
        if (mid_pair_frame_triangles(&f, va, vb)) collect_pair(&s, (carom_triangle_pair){ta, tb});
    }
    ref_pair_list_free(&cand);
    sort_pairs(&s);
    return s;
}

// carom's pairs against the exact double answer: a pair may differ only when
// the reference calls it touching within `tol` (distance when carom reports
// it, penetration depth when carom misses it).
static void check_against_reference(const pair_set* got, const mesh_data* da, carom_xform pa,
                                    const mesh_data* db, carom_xform pb, double tol) {
    double rot[3][3], trans[3];
    relative_pose(pa, pb, rot, trans);
    ref_pair_list exact = {0};
    assert_int_equal(ref_mesh_pairs(da->vertices, da->triangles, da->triangle_count, db->vertices,
                                     db->triangles, db->triangle_count, rot, trans, 0.0, &exact),
                     0);
    int missed = 0, extra = 0;
    for (int i = 0; i < exact.count; ++i) {
        const ref_mesh_pair* r = &exact.pairs[i];
        if (r->degenerate) continue;
        if (!pair_in(got, (carom_triangle_pair){r->a, r->b})) {
            ++missed;
            if (r->depth > tol) fail_msg("missed pair (%d, %d), depth %g", r->a, r->b, r->depth);
        }
    }
    for (int i = 0; i < got->n; ++i) {
        double ta[3][3], tb[3][3];
        ref_mesh_triangle(da->vertices, da->triangles, got->p[i].a, NULL, NULL, ta);
        ref_mesh_triangle(db->vertices, db->triangles, got->p[i].b, rot, trans, tb);
        if (!ref_tri_tri_intersect(ta, tb)) {
            ++extra;
            double d = ref_tri_tri_separation(ta, tb);
            if (d > tol) fail_msg("false pair (%d, %d), distance %g", got->p[i].a, got->p[i].b, d);
        }
    }
    // Disagreements are rare touching cases, never a pattern.
    assert_true(missed + extra <= 2 + got->n / 1000);
    ref_pair_list_free(&exact);
}

// The same query with the meshes' roles swapped, each pair turned back: it
// runs in b's frame rather than a's, so its rounding differs, and a pair
// may come out differently only when the double reference calls it
// touching within `tol` (signed distance), and only rarely.
static void check_swapped(const carom_mesh* ma, const mesh_data* da, carom_xform pa,
                          const carom_mesh* mb, const mesh_data* db, carom_xform pb,
                          const pair_set* truth, double tol) {
    pair_set s = {0};
    carom_mesh_query_result r = carom_mesh_collide(mb, pb, ma, pa, collect_pair, &s);
    assert_int_equal(r.state, CAROM_DONE);
    for (int i = 0; i < s.n; ++i) s.p[i] = (carom_triangle_pair){s.p[i].b, s.p[i].a};
    sort_pairs(&s);
    double rot[3][3], trans[3];
    relative_pose(pa, pb, rot, trans);
    int differ = 0;
    for (int pass = 0; pass < 2; ++pass) {
        const pair_set* x = pass ? truth : &s;
        const pair_set* y = pass ? &s : truth;
        for (int i = 0; i < x->n; ++i) {
            if (pair_in(y, x->p[i])) continue;
            ++differ;
            double ta[3][3], tb[3][3];
            ref_mesh_triangle(da->vertices, da->triangles, x->p[i].a, NULL, NULL, ta);
            ref_mesh_triangle(db->vertices, db->triangles, x->p[i].b, rot, trans, tb);
            double d = ref_tri_tri_signed_distance(ta, tb);
            if (fabs(d) > tol) {
                fail_msg("pair (%d, %d) %s only with the roles swapped, signed distance %g",
                         x->p[i].a, x->p[i].b, pass ? "missing" : "found", d);
            }
        }
    }
    assert_true(differ <= 2 + truth->n / 1000);
    free(s.p);
}

// One collide case for every pair of tree kinds: identical sets from every
// tree, equal to brute force, close to the reference; first hit is one of
// them; a short buffer reports the true count.
static void check_collide(const mesh_data* da, const mesh_data* db, carom_xform pa, carom_xform pb,
                          int min_pairs, bool with_reference, bool all_kind_pairs) {
    carom_mesh ma[TREE_COUNT], mb[TREE_COUNT];
    for (int k = 0; k < TREE_COUNT; ++k) {
        ma[k] = build_tree(da, TREES[k]);
        mb[k] = build_tree(db, TREES[k]);
    }
    pair_set truth = brute_force_pairs(da, &ma[0], pa, db, &mb[0], pb);
    const double swap_tol = 1e-5 * (mesh_size(da) + mesh_size(db) + fabs(pb.p.x) + fabs(pb.p.y) +
                                    fabs(pb.p.z) + fabs(pa.p.x) + fabs(pa.p.y) + fabs(pa.p.z));
    if (truth.n < min_pairs) fail_msg("%d pairs, expected at least %d", truth.n, min_pairs);
    if (with_reference && !light()) {
        double tol = 1e-5 * (mesh_size(da) + mesh_size(db) + fabs(pb.p.x) + fabs(pb.p.y));
        check_against_reference(&truth, da, pa, db, pb, tol);
    }
    for (int i = 0; i < TREE_COUNT; ++i) {
        for (int j = 0; j < TREE_COUNT; ++j) {
            // On big meshes: each tree with itself, and the midpoint AABB
            // tree (TREES[0]) with the default boxtree (TREES[2]).
            if (!all_kind_pairs && i != j && !(i == 0 && j == 2)) continue;
            pair_set s = {0};
            carom_mesh_query_result r = carom_mesh_collide(&ma[i], pa, &mb[j], pb, collect_pair, &s);
            assert_int_equal(r.state, CAROM_DONE);
            assert_int_equal(r.found, s.n);
            sort_pairs(&s);
            assert_same_pairs(&s, &truth);
            free(s.p);
            carom_triangle_pair first;
            r = carom_mesh_collide_pairs(&ma[i], pa, &mb[j], pb, true, &first, 1);
            assert_int_equal(r.found, truth.n > 0);
            if (truth.n > 0) assert_true(pair_in(&truth, first));
            check_swapped(&ma[i], da, pa, &mb[j], db, pb, &truth, swap_tol);
        }
    }
    carom_triangle_pair few[3];
    carom_mesh_query_result r = carom_mesh_collide_pairs(&ma[0], pa, &mb[0], pb, false, few, 3);
    assert_int_equal(r.found, truth.n);
    for (int i = 0; i < 3 && i < truth.n; ++i) assert_true(pair_in(&truth, few[i]));
    free(truth.p);
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh_destroy(&ma[k]);
        carom_mesh_destroy(&mb[k]);
    }
}

static carom_xform about_centre(const mesh_data* md, vec3s axis, float angle, vec3s shift) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < md->vertex_count; ++i) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], md->vertices[i][k]);
            hi[k] = fmax(hi[k], md->vertices[i][k]);
        }
    }
    vec3s c = {{(float)(0.5 * (lo[0] + hi[0])), (float)(0.5 * (lo[1] + hi[1])),
                (float)(0.5 * (lo[2] + hi[2]))}};
    carom_xform xf = carom_xform_make((vec3s){{0, 0, 0}}, axis, angle);
    vec3s rc = carom_xform_vector(xf, c);
    xf.p = glms_vec3_add(glms_vec3_sub(c, rc), shift);
    return xf;
}

// Regression: the in-plane separating axes are products of three edges and
// their projections of four, which overflowed float for triangles near 1e10
// in size, so coplanar triangles 4e9 apart were reported as intersecting,
// and underflow to zero below 1e-10 made every axis fail to separate. The
// test now works on corners relative to one of them, scaled by a power of
// two to unit size.
static void test_collide_coplanar_at_every_scale(void** state) {
    (void)state;
    int idx[3] = {0, 1, 2};
    float scales[] = {1e-20f, 1e-12f, 1e-3f, 1.0f, 1e5f, 1e10f, 1e11f};
    for (size_t i = 0; i < sizeof scales / sizeof *scales; ++i) {
        float L = scales[i];
        vec3s va[3] = {{{0, 0, 0}}, {{L, 0, 0}}, {{0, L, 0}}};
        vec3s apart[3] = {{{L, L, 0}}, {{L, 0.6f * L, 0}}, {{0.6f * L, L, 0}}};
        vec3s across[3] = {{{0.2f * L, 0.2f * L, 0}}, {{2 * L, 0.2f * L, 0}}, {{0.2f * L, 2 * L, 0}}};
        carom_mesh a, b, c;
        assert_int_equal(carom_mesh_create(va, 3, idx, 1, NULL, &a), CAROM_OK);
        assert_int_equal(carom_mesh_create(apart, 3, idx, 1, NULL, &b), CAROM_OK);
        assert_int_equal(carom_mesh_create(across, 3, idx, 1, NULL, &c), CAROM_OK);
        carom_xform id = carom_xform_identity();
        assert_int_equal(carom_mesh_collide_pairs(&a, id, &b, id, false, NULL, 0).found, 0);
        assert_int_equal(carom_mesh_collide_pairs(&a, id, &c, id, false, NULL, 0).found, 1);
        carom_mesh_destroy(&a);
        carom_mesh_destroy(&b);
        carom_mesh_destroy(&c);
    }
}

static void test_collide_soups(void** state) {
    (void)state;
    ref_rng rng = {1234};
    for (int trial = 0; trial < 6; ++trial) {
        mesh_data a = make_soup(300, 2.0, 0.4, 100 + trial);
        mesh_data b = make_soup(250, 2.0, 0.4, 200 + trial);
        carom_xform pa = random_pose(&rng, 0.5f), pb = random_pose(&rng, 0.5f);
        check_collide(&a, &b, pa, pb, 20, true, true);
        mesh_free(&a);
        mesh_free(&b);
    }
    // An AABB tree of one leaf (its root a leaf, no wide node) against full
    // trees of every kind, each way round.
    for (int trial = 0; trial < 3; ++trial) {
        mesh_data small = make_soup(3, 0.3, 1.0, 300 + trial);
        mesh_data big = make_soup(250, 1.0, 0.4, 400 + trial);
        carom_xform pa = random_pose(&rng, 0.2f), pb = random_pose(&rng, 0.2f);
        check_collide(&small, &big, pa, pb, 1, true, true);
        check_collide(&big, &small, pb, pa, 1, true, true);
        mesh_free(&small);
        mesh_free(&big);
    }
}

// AABB trees and boxtrees of every leaf size against each other: the leaf
// pairs go through groups of four boxes (one or two groups a leaf up to
// eight triangles), the pair loop beyond, and the leaf slabs at every size;
// each pair of trees gives brute force's set.
static void test_collide_leaf_sizes(void** state) {
    (void)state;
    ref_rng rng = {4321};
    enum { SIZES = 9 };
    const int sizes[SIZES] = {1, 2, 3, 4, 5, 7, 8, 9, 16};
    const int n = 2 * SIZES;
    for (int trial = 0; trial < 2; ++trial) {
        mesh_data da = make_soup(300, 2.0, 0.4, 500 + trial);
        mesh_data db = make_soup(250, 2.0, 0.4, 600 + trial);
        carom_xform pa = random_pose(&rng, 0.5f), pb = random_pose(&rng, 0.5f);
        carom_mesh ma[2 * SIZES], mb[2 * SIZES];
        for (int i = 0; i < n; ++i) {
            carom_mesh_desc desc = {i < SIZES ? CAROM_TREE_AABB : CAROM_TREE_BOXTREE,
                                    sizes[i % SIZES]};
            assert_int_equal(carom_mesh_create((const vec3s*)da.vertices, da.vertex_count,
                                               &da.triangles[0][0], da.triangle_count, &desc,
                                               &ma[i]),
                             CAROM_OK);
            assert_int_equal(carom_mesh_create((const vec3s*)db.vertices, db.vertex_count,
                                               &db.triangles[0][0], db.triangle_count, &desc,
                                               &mb[i]),
                             CAROM_OK);
        }
        pair_set truth = brute_force_pairs(&da, &ma[0], pa, &db, &mb[0], pb);
        assert_true(truth.n >= 20);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                pair_set got = {0};
                carom_mesh_query_result r =
                    carom_mesh_collide(&ma[i], pa, &mb[j], pb, collect_pair, &got);
                assert_int_equal(r.found, got.n);
                sort_pairs(&got);
                assert_same_pairs(&got, &truth);
                free(got.p);
            }
        }
        free(truth.p);
        for (int i = 0; i < n; ++i) {
            carom_mesh_destroy(&ma[i]);
            carom_mesh_destroy(&mb[i]);
        }
        mesh_free(&da);
        mesh_free(&db);
    }
    // Double-sided soups (each triangle twice, wound both ways): leaves
    // whose normals cancel, so their slabs lean on their boxes alone.
    mesh_data da = make_soup(200, 2.0, 0.4, 700), db = make_soup(200, 2.0, 0.4, 800);
    mesh_data* two[2] = {&da, &db};
    for (int m = 0; m < 2; ++m) {
        mesh_data* md = two[m];
        int (*twice)[3] = malloc(sizeof(int[3]) * 2 * (size_t)md->triangle_count);
        for (int t = 0; t < md->triangle_count; ++t) {
            int* tri = md->triangles[t];
            twice[2 * t][0] = tri[0], twice[2 * t][1] = tri[1], twice[2 * t][2] = tri[2];
            twice[2 * t + 1][0] = tri[0], twice[2 * t + 1][1] = tri[2], twice[2 * t + 1][2] = tri[1];
        }
        free(md->triangles);
        md->triangles = twice;
        md->triangle_count *= 2;
    }
    carom_xform pa = random_pose(&rng, 0.5f), pb = random_pose(&rng, 0.5f);
    check_collide(&da, &db, pa, pb, 20, false, true);
    mesh_free(&da);
    mesh_free(&db);
}

// A flat grid of n by n squares, two triangles each, on the plane
// z = 0.5 x + 0.3 y over [0, 1]^2, moved by d along the plane's unit normal.
static mesh_data make_tilted_grid(int n, double d) {
    const double length = sqrt(1.0 + 0.25 + 0.09);
    const double normal[3] = {-0.5 / length, -0.3 / length, 1.0 / length};
    const int row = n + 1;
    mesh_data md = {row * row, malloc(sizeof(float[3]) * (size_t)(row * row)), 2 * n * n,
                    malloc(sizeof(int[3]) * (size_t)(2 * n * n))};
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j <= n; ++j) {
            const double p[3] = {(double)i / n, (double)j / n, 0.5 * i / n + 0.3 * j / n};
            for (int k = 0; k < 3; ++k) {
                md.vertices[i * row + j][k] = (float)(p[k] + d * normal[k]);
            }
        }
    }
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) {
            const int v00 = i * row + j, v10 = v00 + row, v01 = v00 + 1, v11 = v10 + 1;
            int* t = md.triangles[2 * (i * n + j)];
            t[0] = v00, t[1] = v10, t[2] = v11;
            t[3] = v00, t[4] = v11, t[5] = v01;
        }
    }
    return md;
}

// Parallel copies of a flat patch, 0.01 apart, far closer than the
// thickness of their tilted boxes: the leaves' slabs part every leaf pair
// before any triangle is tested, whether a tree is a single leaf (the
// roots meet) or wide (an unfolding meets a leaf), each way round. Copies
// that coincide do meet, so the trees are not simply apart.
static void test_collide_slabs_part_parallel_leaves(void** state) {
    (void)state;
    ref_rng rng = {2024};
    const struct {
        int n, leaf_size;
    } trees[] = {{1, 8}, {2, 8}, {8, 2}, {8, 8}};
    const int count = (int)(sizeof trees / sizeof trees[0]);
    const carom_tree_kind kinds[] = {CAROM_TREE_AABB, CAROM_TREE_AABB_SAH};
    for (int kind = 0; kind < 2; ++kind) {
        for (int i = 0; i < count; ++i) {
            for (int j = 0; j < count; ++j) {
                mesh_data da = make_tilted_grid(trees[i].n, 0.0);
                mesh_data db = make_tilted_grid(trees[j].n, 0.01);
                mesh_data dc = make_tilted_grid(trees[j].n, 0.0);
                carom_mesh_desc desc_a = {kinds[kind], trees[i].leaf_size};
                carom_mesh_desc desc_b = {kinds[kind], trees[j].leaf_size};
                carom_mesh ma, mb, mc;
                assert_int_equal(carom_mesh_create((const vec3s*)da.vertices, da.vertex_count,
                                                   &da.triangles[0][0], da.triangle_count,
                                                   &desc_a, &ma),
                                 CAROM_OK);
                assert_int_equal(carom_mesh_create((const vec3s*)db.vertices, db.vertex_count,
                                                   &db.triangles[0][0], db.triangle_count,
                                                   &desc_b, &mb),
                                 CAROM_OK);
                assert_int_equal(carom_mesh_create((const vec3s*)dc.vertices, dc.vertex_count,
                                                   &dc.triangles[0][0], dc.triangle_count,
                                                   &desc_b, &mc),
                                 CAROM_OK);
                carom_xform pose = random_pose(&rng, 0.5f);
                for (int way = 0; way < 2; ++way) {
                    const carom_mesh* first = way ? &mb : &ma;
                    const carom_mesh* second = way ? &ma : &mb;
                    pair_set got = {0};
                    carom_mesh_query_result r =
                        carom_mesh_collide(first, pose, second, pose, collect_pair, &got);
                    assert_int_equal(r.state, CAROM_OK);
                    assert_int_equal(got.n, 0);
                    assert_true(r.node_tests > 0);
                    if (r.triangle_tests != 0) {
                        fail_msg("grids of %d and %d squares, leaves of %d and %d: %lld "
                                 "triangle tests",
                                 trees[i].n, trees[j].n, trees[i].leaf_size,
                                 trees[j].leaf_size, (long long)r.triangle_tests);
                    }
                    free(got.p);
                }
                pair_set touching = {0};
                carom_mesh_collide(&ma, pose, &mc, pose, collect_pair, &touching);
                assert_true(touching.n > 0);
                free(touching.p);
                carom_mesh_destroy(&ma);
                carom_mesh_destroy(&mb);
                carom_mesh_destroy(&mc);
                mesh_free(&da);
                mesh_free(&db);
                mesh_free(&dc);
            }
        }
    }
}

// UV spheres about nearly one centre, each vertex's radius jittered: a pole
// row is 2n + 1 vertices on the axis at slightly different heights, so the
// pole fans are slivers with an edge along the axis, and the fans of two
// such spheres, the second turned by up to 1e-7 rad and moved by up to
// 1e-8 of the radius, touch along nearly one line, within float rounding
// of it. The leaf test's segment verdict once trusted plane distances
// below their own error there and answered "meet" where the exact test
// answered "apart" (or the reverse). The two must agree on every pair of
// pole-row triangles whose boxes meet.
static mesh_data make_jittered_uv_sphere(int n, double r, double turn, double shift,
                                         ref_rng* rng) {
    const int row = 2 * n + 1;
    mesh_data md = {(n + 1) * row, malloc(sizeof(float[3]) * (size_t)((n + 1) * row)), 4 * n * n,
                    malloc(sizeof(int[3]) * (size_t)(4 * n * n))};
    const double axis = 1.0 / sqrt(3.0), s = sin(0.5 * turn);
    const double q[4] = {s * axis, -s * axis, s * axis, cos(0.5 * turn)};
    double m[3][3];
    ref_quat_to_matrix(q, m);
    for (int i = 0; i <= n; ++i) {
        for (int j = 0; j < row; ++j) {
            double th = M_PI * i / n, ph = M_PI * j / n;
            double rr = r * (1.0 + 0.05 * ref_rng_uniform(rng, -1, 1));
            double p[3] = {rr * sin(th) * cos(ph), rr * sin(th) * sin(ph), rr * cos(th)};
            for (int k = 0; k < 3; ++k) {
                md.vertices[i * row + j][k] =
                    (float)(m[k][0] * p[0] + m[k][1] * p[1] + m[k][2] * p[2] + shift * (k + 1) * r);
            }
        }
    }
    int k = 0;
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < 2 * n; ++j) {
            int a = i * row + j, b = a + 1, c = a + row, d = c + 1;
            md.triangles[k][0] = a, md.triangles[k][1] = c, md.triangles[k][2] = b, ++k;
            md.triangles[k][0] = b, md.triangles[k][1] = c, md.triangles[k][2] = d, ++k;
        }
    }
    return md;
}

static void test_leaf_test_pole_fans(void** state) {
    (void)state;
    ref_rng rng = {77};
    const double scales[] = {1e-3, 1.0, 1e3};
    const double moves[3][2] = {{0.0, 1e-8}, {1e-7, 0.0}, {1e-7, 1e-8}};  // turn, shift
    int checked = 0;
    for (int si = 0; si < 3; ++si) {
        for (int mi = 0; mi < 3; ++mi) {
            for (int trial = 0; trial < 4; ++trial) {
                const int na = 9 + 3 * trial, nb = 13 + 2 * trial;
                mesh_data a = make_jittered_uv_sphere(na, scales[si], 0.0, 0.0, &rng);
                mesh_data b =
                    make_jittered_uv_sphere(nb, scales[si], moves[mi][0], moves[mi][1], &rng);
                carom_mesh scene = build(&a, CAROM_TREE_AABB);
                mid_pair_frame f;
                carom_xform id = carom_xform_identity();
                assert_true(mid_pair_frame_init(&scene, id, &scene, id, &f));
                for (int ta = 0; ta < a.triangle_count; ++ta) {
                    const int ring_a = ta / (4 * na);
                    if (ring_a != 0 && ring_a != na - 1) continue;
                    vec3s va[3];
                    data_corners(&a, ta, va);
                    for (int tb = 0; tb < b.triangle_count; ++tb) {
                        const int ring_b = tb / (4 * nb);
                        if (ring_b != 0 && ring_b != nb - 1) continue;
                        vec3s vb[3];
                        data_corners(&b, tb, vb);
                        bool apart = false;  // the leaf test's first step, on float boxes
                        for (int k = 0; k < 3; ++k) {
                            float alo = fminf(va[0].raw[k], fminf(va[1].raw[k], va[2].raw[k]));
                            float ahi = fmaxf(va[0].raw[k], fmaxf(va[1].raw[k], va[2].raw[k]));
                            float blo = fminf(vb[0].raw[k], fminf(vb[1].raw[k], vb[2].raw[k]));
                            float bhi = fmaxf(vb[0].raw[k], fmaxf(vb[1].raw[k], vb[2].raw[k]));
                            apart |= ahi < blo || bhi < alo;
                        }
                        if (apart) continue;
                        ++checked;
                        bool leaf = mid_pair_frame_triangles(&f, va, vb);
                        bool exact = mid_triangles_intersect(va, vb);
                        if (leaf != exact) {
                            fail_msg("scale %g, turn %g, shift %g, rings %d and %d, triangles %d "
                                     "and %d: leaf test %d, exact test %d",
                                     scales[si], moves[mi][0], moves[mi][1], na, nb, ta, tb, leaf,
                                     exact);
                        }
                    }
                }
                carom_mesh_destroy(&scene);
                mesh_free(&a);
                mesh_free(&b);
            }
        }
    }
    assert_true(checked > 1000);
}

// Slivers: the leaf test's plane and segment culls must allow for the
// rounding of normals far shorter than the edges squared.
static void test_collide_slivers(void** state) {
    (void)state;
    ref_rng rng = {99};
    for (int trial = 0; trial < 4; ++trial) {
        mesh_data a = make_slivers(500, 0.3, 0.5, trial % 2 ? 1e-4 : 1e-2, 300 + trial);
        mesh_data b = make_slivers(500, 0.3, 0.5, trial % 2 ? 1e-2 : 1e-4, 400 + trial);
        carom_xform pa = random_pose(&rng, 0.5f), pb = random_pose(&rng, 0.5f);
        check_collide(&a, &b, pa, pb, 10, true, true);
        mesh_free(&a);
        mesh_free(&b);
    }
}

// A sliver's normal is the small difference of products of its long edges,
// so its rounding turns the plane by about epsilon * length / width. A
// triangle that crosses the sliver with its corners far off along the
// sliver's plane and close to it must not be culled by the plane test on
// that rounded normal: B stands square on the sliver's plane, its corners
// 1.5 away and 2e-4 above or below, and cuts through the sliver's middle.
static void test_collide_sliver_planes(void** state) {
    (void)state;
    ref_rng rng = {7};
    const double w = 1e-4, h = 2e-4;
    const double sliver[3][3] = {{-0.5, 0, 0}, {0.5, 0, 0}, {0, w, 0}};
    const double cutter[3][3] = {{1.5, 0.5 * w, -h}, {-1.5, 0.5 * w, h}, {-1.5, 0.5 * w, 3 * h}};
    int idx[3] = {0, 1, 2};
    for (int trial = 0; trial < 2000; ++trial) {
        double q[4], r[3][3];
        ref_rng_unit_quat(&rng, q);
        ref_quat_to_matrix(q, r);
        vec3s va[3], vb[3];
        for (int i = 0; i < 3; ++i) {
            for (int k = 0; k < 3; ++k) {
                double x = 0, y = 0;
                for (int j = 0; j < 3; ++j) {
                    x += r[k][j] * sliver[i][j];
                    y += r[k][j] * cutter[i][j];
                }
                va[i].raw[k] = (float)x;
                vb[i].raw[k] = (float)y;
            }
        }
        // The rounded corners still cross, by the exact answer.
        double ta[3][3], tb[3][3];
        for (int i = 0; i < 3; ++i) {
            for (int k = 0; k < 3; ++k) {
                ta[i][k] = va[i].raw[k];
                tb[i][k] = vb[i].raw[k];
            }
        }
        assert_int_equal(ref_tri_tri_intersect(ta, tb), 1);
        carom_mesh a, b;
        assert_int_equal(carom_mesh_create(va, 3, idx, 1, NULL, &a), CAROM_OK);
        assert_int_equal(carom_mesh_create(vb, 3, idx, 1, NULL, &b), CAROM_OK);
        carom_xform id = carom_xform_identity();
        carom_mesh_query_result res = carom_mesh_collide_pairs(&a, id, &b, id, false, NULL, 0);
        if (res.found != 1) fail_msg("trial %d: the cutter misses the sliver", trial);
        res = carom_mesh_collide_pairs(&b, id, &a, id, false, NULL, 0);
        if (res.found != 1) fail_msg("trial %d: the sliver misses the cutter", trial);
        carom_mesh_destroy(&a);
        carom_mesh_destroy(&b);
    }
}

// Exact answers: crossing triangles, touching at a corner (closed sets),
// a hair apart, coplanar overlap.
static void test_collide_analytic(void** state) {
    (void)state;
    vec3s va[3] = {{{-1, -1, 0}}, {{1, -1, 0}}, {{0, 1, 0}}};
    vec3s vb[3] = {{{0, 0, -1}}, {{0, 0, 1}}, {{0, 2, 0}}};
    int idx[3] = {0, 1, 2};
    carom_mesh a, b;
    assert_int_equal(carom_mesh_create(va, 3, idx, 1, NULL, &a), CAROM_OK);
    assert_int_equal(carom_mesh_create(vb, 3, idx, 1, NULL, &b), CAROM_OK);
    carom_triangle_pair p[2];
    struct {
        carom_xform pose;
        int pairs;
    } cases[] = {
        {at(0, 0, 0), 1},                  // b pierces a
        {at(0, -1.0f, 1.0f), 1},           // b's corner (0,0,-1) lands on a's edge y = -1
        {at(0, -1.001f, 1.0f), 0},         // a hair below that edge
        {at(3.0f, 0, 0), 0},               // far apart
        {carom_xform_make((vec3s){{0, 0, 0}}, (vec3s){{0, 1, 0}}, 1.5707963f), 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        carom_mesh_query_result r =
            carom_mesh_collide_pairs(&a, carom_xform_identity(), &b, cases[i].pose, false, p, 2);
        assert_int_equal(r.state, CAROM_DONE);
        assert_int_equal(r.found, cases[i].pairs);
    }
    // Coplanar: the same triangle shifted in its plane overlaps itself.
    carom_mesh_query_result r = carom_mesh_collide_pairs(&a, carom_xform_identity(), &a,
                                                         at(0.5f, 0.2f, 0), false, p, 2);
    assert_int_equal(r.found, 1);
    r = carom_mesh_collide_pairs(&a, carom_xform_identity(), &a, at(2.5f, 0, 0), false, p, 2);
    assert_int_equal(r.found, 0);
    carom_mesh_destroy(&a);
    carom_mesh_destroy(&b);
}

// Triangles that cross each other's planes meet along the planes' common
// line in one segment each, and intersect when the segments overlap: the
// leaf test decides most such pairs from the segments alone and leaves
// those within its rounding margin to the separating axes. Here A's segment
// on the y axis is [-1, 0.54] and B's is [-3, -1] shifted by dy, at plane
// angles from square to 0.12 rad; no corner lies on the other's plane.
static void test_collide_crossing_segments(void** state) {
    (void)state;
    vec3s va[3] = {{{-1, -1, 0}}, {{1, -1, 0}}, {{0.3f, 1, 0}}};
    vec3s vb[3] = {{{0, -3, -1}}, {{0, -3, 1}}, {{0, 1, 1}}};  // plane x = 0
    int idx[3] = {0, 1, 2};
    carom_mesh a, b;
    assert_int_equal(carom_mesh_create(va, 3, idx, 1, NULL, &a), CAROM_OK);
    assert_int_equal(carom_mesh_create(vb, 3, idx, 1, NULL, &b), CAROM_OK);
    const float angles[] = {0.0f, 0.3f, 0.8f, 1.2f, 1.45f};  // B turned about the y axis
    const struct {
        float dy;
        int pairs;
    } shifts[] = {{-0.1f, 0}, {-1e-3f, 0}, {-1e-4f, 0}, {1e-4f, 1}, {1e-3f, 1}, {0.1f, 1}};
    for (size_t i = 0; i < sizeof angles / sizeof *angles; ++i) {
        for (size_t j = 0; j < sizeof shifts / sizeof *shifts; ++j) {
            carom_xform pose =
                carom_xform_make((vec3s){{0, shifts[j].dy, 0}}, (vec3s){{0, 1, 0}}, angles[i]);
            carom_mesh_query_result r =
                carom_mesh_collide_pairs(&a, carom_xform_identity(), &b, pose, false, NULL, 0);
            if (r.found != shifts[j].pairs) {
                fail_msg("angle %g, dy %g: %d pairs", angles[i], shifts[j].dy, r.found);
            }
            // Swapped, the other triangle's plane leads.
            r = carom_mesh_collide_pairs(&b, pose, &a, carom_xform_identity(), false, NULL, 0);
            assert_int_equal(r.found, shifts[j].pairs);
        }
    }
    // Unturned and unshifted the segments share an end: closed triangles touch.
    carom_mesh_query_result r = carom_mesh_collide_pairs(&a, carom_xform_identity(), &b,
                                                         carom_xform_identity(), false, NULL, 0);
    assert_int_equal(r.found, 1);
    carom_mesh_destroy(&a);
    carom_mesh_destroy(&b);
}

static void cross3(const double u[3], const double v[3], double out[3]) {
    out[0] = u[1] * v[2] - u[2] * v[1];
    out[1] = u[2] * v[0] - u[0] * v[2];
    out[2] = u[0] * v[1] - u[1] * v[0];
}

static double unit3(double v[3]) {
    double l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int k = 0; k < 3; ++k) v[k] /= l;
    return l;
}

// A triangle b 10^-4.5 to 10^-1.5 times a's size touching a (corners va)
// at a corner or along an edge, its plane turned from a's by 1e-6 to 1e-2
// rad or by 0.01 rad to a right angle, with a clear of it, or through it,
// by 1 to 8 times the plane cull's tolerance for b (slack * (|n|_1 + L^2)
// over |n|). The
// exact test takes b's corners from a's first, far away for so small a b,
// which turns b's normal there by up to an epsilon of E * L_b (E that
// distance): the two tests' planes differ most here.
static void tiny_b_at_a(double va[3][3], double size, float slack, ref_rng* rng,
                        vec3s b[3]) {
    int i0 = (int)ref_rng_uniform(rng, 0, 3) % 3;
    const double* v = va[i0];
    double d1[3], d2[3], up[3], e1[3], e2[3], w[3], p[3];
    for (int k = 0; k < 3; ++k) {
        d1[k] = va[(i0 + 1) % 3][k] - v[k];
        d2[k] = va[(i0 + 2) % 3][k] - v[k];
        e1[k] = va[1][k] - va[0][k];
        e2[k] = va[2][k] - va[0][k];
    }
    cross3(e1, e2, up);
    unit3(up);
    bool corner = ref_rng_uniform(rng, 0, 1) < 0.5;
    double along = ref_rng_uniform(rng, 0, 1);
    if (corner) {
        unit3(d1);
        unit3(d2);
        for (int k = 0; k < 3; ++k) w[k] = d1[k] + d2[k];
    } else {
        cross3(up, d1, w);
        if (w[0] * d2[0] + w[1] * d2[1] + w[2] * d2[2] < 0) {
            for (int k = 0; k < 3; ++k) w[k] = -w[k];
        }
    }
    for (int k = 0; k < 3; ++k) p[k] = v[k] + (corner ? 0.0 : along * d1[k]);
    unit3(w);
    double beta = ref_rng_uniform(rng, 0, 1) < 0.5 ? pow(10.0, ref_rng_uniform(rng, -6, -2))
                                                   : ref_rng_uniform(rng, 0.01, 1.5707);
    double flip = ref_rng_uniform(rng, 0, 1) < 0.5 ? -1.0 : 1.0, ny[3], t1[3], t2[3];
    for (int k = 0; k < 3; ++k) ny[k] = flip * cos(beta) * up[k] + sin(beta) * w[k];
    unit3(ny);
    double any[3] = {ref_rng_uniform(rng, -1, 1), ref_rng_uniform(rng, -1, 1),
                     ref_rng_uniform(rng, -1, 1)};
    cross3(ny, any, t1);
    unit3(t1);
    cross3(ny, t1, t2);
    // b in its plane about the origin, then its tolerance, then in place.
    double sy = pow(10.0, ref_rng_uniform(rng, -4.5, -1.5)) * size;
    double theta = ref_rng_uniform(rng, 0, 6.3), vb[3][3];
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < 3; ++i) {
        double a = theta + 2.1 * i + ref_rng_uniform(rng, -0.3, 0.3);
        for (int k = 0; k < 3; ++k) {
            vb[i][k] = sy * (cos(a) * t1[k] + sin(a) * t2[k]);
            lo[k] = fmin(lo[k], vb[i][k]);
            hi[k] = fmax(hi[k], vb[i][k]);
        }
    }
    double f1[3], f2[3], nb[3];
    for (int k = 0; k < 3; ++k) {
        f1[k] = vb[1][k] - vb[0][k];
        f2[k] = vb[2][k] - vb[0][k];
    }
    cross3(f1, f2, nb);
    double l = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    double n1 = fabs(nb[0]) + fabs(nb[1]) + fabs(nb[2]), nl = unit3(nb);
    if (nb[0] * ny[0] + nb[1] * ny[1] + nb[2] * ny[2] < 0) {
        for (int k = 0; k < 3; ++k) nb[k] = -nb[k];
    }
    double h = (double)slack * (n1 + l * l) / nl * pow(10.0, ref_rng_uniform(rng, 0, 0.9)) *
               (ref_rng_uniform(rng, 0, 1) < 0.5 ? -1.0 : 1.0);
    // b's plane h short of the touching point along ny, which a leans away
    // from (a clear of b), or h past it (a through b); b slid in its plane.
    double slide = ref_rng_uniform(rng, 0, 0.3) * sy, phi = ref_rng_uniform(rng, 0, 6.3);
    for (int i = 0; i < 3; ++i) {
        for (int k = 0; k < 3; ++k) {
            b[i].raw[k] = (float)(p[k] - h * nb[k] + vb[i][k] +
                                  slide * (cos(phi) * t1[k] + sin(phi) * t2[k]));
        }
    }
}

// The leaf test's culls (triangle boxes, planes on the corners as they
// are, planes and crossing segments on the corners taken from a's first)
// may only settle pairs whose answer is the exact test's. Near-coincident
// pairs probe them where their tolerances matter: b is a copy of a (a
// sliver one time in four; shrunk a thousand times one time in eleven)
// turned by a small angle about a point near it, slid along a's plane by
// up to half a's size, and moved along a's normal by a small height: at
// the rounding level of the scene's coordinates, from 1e-7 to 1e-3 of a's
// size, or not at all. Or b crosses a's plane outside a, from a corner on
// one of a's edges: they touch there, give or take rounding. Triangles of
// size 1e-3 to 1e3, at the origin or far from it, in scenes reaching 2 to
// 2e4 times their size from the origin (the frame's slack grows with the
// scene). Or a tiny b touches a at a corner or edge (tiny_b_at_a). The test
// fails when the near culls' tolerance is cut below the rounding itself
// (to 0.1 epsilon from 256).
static void test_leaf_culls_agree_with_exact(void** state) {
    (void)state;
    ref_rng rng = {2024};
    const double sizes[] = {1e-3, 1.0, 1e3};
    const double scenes[] = {2.0, 200.0, 2e4};
    int trials = light() ? 4000 : 40000, hits = 0, misses = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; ++si) {
        for (size_t sc = 0; sc < sizeof scenes / sizeof *scenes; ++sc) {
            const double size = sizes[si], half_scene = size * scenes[sc];
            // The scene: two triangles at opposite corners of its box.
            float r = (float)half_scene;
            vec3s sv[6] = {{{-r, -r, -r}}, {{-r, -r, -r * 0.99f}}, {{-r, -r * 0.99f, -r}},
                           {{r, r, r}},    {{r, r, r * 0.99f}},    {{r, r * 0.99f, r}}};
            int scene_indices[6] = {0, 1, 2, 3, 4, 5};
            carom_mesh scene;
            assert_int_equal(carom_mesh_create(sv, 6, scene_indices, 2, NULL, &scene), CAROM_OK);
            mid_pair_frame f;
            carom_xform id = carom_xform_identity();
            assert_true(mid_pair_frame_init(&scene, id, &scene, id, &f));
            for (int t = 0; t < trials; ++t) {
                // a: random corners around a centre within half the scene.
                double c[3], va[3][3];
                for (int k = 0; k < 3; ++k) c[k] = ref_rng_uniform(&rng, -0.5, 0.5) * (half_scene - 2 * size);
                bool sliver = t % 4 == 3;
                for (int i = 0; i < 3; ++i) {
                    for (int k = 0; k < 3; ++k) va[i][k] = c[k] + ref_rng_uniform(&rng, -0.5, 0.5) * size;
                }
                if (sliver) {  // the third corner near the first edge's middle
                    double w = pow(10.0, ref_rng_uniform(&rng, -5, -2)) * size;
                    for (int k = 0; k < 3; ++k) {
                        va[2][k] = 0.5 * (va[0][k] + va[1][k]) + ref_rng_uniform(&rng, -1, 1) * w;
                    }
                }
                double e1[3], e2[3], n[3];
                for (int k = 0; k < 3; ++k) {
                    e1[k] = va[1][k] - va[0][k];
                    e2[k] = va[2][k] - va[0][k];
                }
                cross3(e1, e2, n);
                double nl = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
                if (!(nl > 0)) continue;
                // b: a turned about a pivot near its centroid, then lifted.
                double q[4], rot[3][3], pivot[3];
                double angle = t % 5 == 0 ? 0.0 : pow(10.0, ref_rng_uniform(&rng, -7, -1));
                double axis[3] = {ref_rng_uniform(&rng, -1, 1), ref_rng_uniform(&rng, -1, 1),
                                  ref_rng_uniform(&rng, -1, 1)};
                double al = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
                q[3] = cos(0.5 * angle);
                for (int k = 0; k < 3; ++k) q[k] = axis[k] / al * sin(0.5 * angle);
                ref_quat_to_matrix(q, rot);
                int lift_kind = t % 3;
                double lift = lift_kind == 0 ? 0.0
                              : lift_kind == 1 ? ref_rng_uniform(&rng, -30, 30) * 6e-8 * half_scene
                                               : pow(10.0, ref_rng_uniform(&rng, -7, -3)) * size *
                                                     (ref_rng_uniform(&rng, -1, 1) < 0 ? -1 : 1);
                for (int k = 0; k < 3; ++k) {
                    pivot[k] = (va[0][k] + va[1][k] + va[2][k]) / 3.0 +
                               ref_rng_uniform(&rng, -0.3, 0.3) * size;
                }
                double shrink = t % 11 == 10 ? 1e-3 : 1.0;
                // Slid along a's plane by up to half its size.
                double slide[3], along = 0;
                for (int k = 0; k < 3; ++k) {
                    slide[k] = ref_rng_uniform(&rng, -0.5, 0.5) * size;
                    along += slide[k] * n[k] / nl;
                }
                vec3s a3[3], b3[3];
                for (int i = 0; i < 3; ++i) {
                    double d[3] = {va[i][0] - pivot[0], va[i][1] - pivot[1], va[i][2] - pivot[2]};
                    for (int k = 0; k < 3; ++k) {
                        double x = pivot[k] + shrink * (rot[k][0] * d[0] + rot[k][1] * d[1] +
                                                         rot[k][2] * d[2]);
                        a3[i].raw[k] = (float)va[i][k];
                        b3[i].raw[k] = (float)(x + slide[k] + (lift - along) * n[k] / nl);
                    }
                }
                if (t % 7 == 6) {
                    // Instead, b crosses a's plane outside a, from a corner
                    // on the edge a0 a1, give or take rounding: b's segment
                    // on the planes' common line ends where a's does.
                    double s_edge = ref_rng_uniform(&rng, 0.2, 0.8), p[3], m[3], up[3];
                    for (int k = 0; k < 3; ++k) {
                        p[k] = va[0][k] + s_edge * e1[k];
                        up[k] = n[k] / nl;
                    }
                    cross3(e1, up, m);
                    double ml = sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]), inward = 0;
                    for (int k = 0; k < 3; ++k) inward += (va[2][k] - p[k]) * m[k];
                    if (inward > 0) ml = -ml;  // m points away from a2
                    double e1l = sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
                    double off = ref_rng_uniform(&rng, -3, 3) * 1e-7 * size;
                    double hgt = ref_rng_uniform(&rng, -3, 3) * 1e-7 * size;
                    for (int k = 0; k < 3; ++k) {
                        m[k] /= ml;
                        double b0 = p[k] + off * m[k] + hgt * up[k];
                        b3[0].raw[k] = (float)b0;
                        b3[1].raw[k] = (float)(p[k] + 0.5 * size * (m[k] + up[k]) +
                                               0.1 * size * e1[k] / e1l);
                        b3[2].raw[k] = (float)(p[k] + 0.5 * size * (m[k] - up[k]));
                    }
                } else if (t % 13 == 12) {
                    tiny_b_at_a(va, size, f.slack, &rng, b3);
                }
                bool exact = mid_triangles_intersect(a3, b3);
                bool leaf = mid_pair_frame_triangles(&f, a3, b3);
                if (leaf != exact) {
                    fail_msg("size %g, scene %g, trial %d: leaf test %d, exact test %d", size,
                             half_scene, t, leaf, exact);
                }
                // And with the roles swapped.
                if (mid_pair_frame_triangles(&f, b3, a3) != mid_triangles_intersect(b3, a3)) {
                    fail_msg("size %g, scene %g, trial %d, swapped", size, half_scene, t);
                }
                hits += exact;
                misses += !exact;
            }
            carom_mesh_destroy(&scene);
        }
    }
    // Both answers, many times each: the cases straddle the culls' bounds.
    assert_true(hits > trials && misses > trials);
}

static void bounds_of(const mesh_data* md, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; ++k) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (int v = 0; v < md->vertex_count; ++v) {
        for (int k = 0; k < 3; ++k) {
            lo[k] = fmin(lo[k], md->vertices[v][k]);
            hi[k] = fmax(hi[k], md->vertices[v][k]);
        }
    }
}

// A copy of `object` scaled to `fraction` of `scene`'s largest extent and
// centred on the scene's centre. Shares the triangles; free the vertices.
static mesh_data placed_in(const mesh_data* scene, const mesh_data* object, double fraction) {
    double lo[3], hi[3], olo[3], ohi[3];
    bounds_of(scene, lo, hi);
    bounds_of(object, olo, ohi);
    double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
    double oext = fmax(ohi[0] - olo[0], fmax(ohi[1] - olo[1], ohi[2] - olo[2]));
    mesh_data out = *object;
    out.vertices = malloc(sizeof(float[3]) * (size_t)object->vertex_count);
    for (int v = 0; v < object->vertex_count; ++v) {
        for (int k = 0; k < 3; ++k) {
            double local = object->vertices[v][k] - 0.5 * (olo[k] + ohi[k]);
            out.vertices[v][k] = (float)(local / oext * ext * fraction + 0.5 * (lo[k] + hi[k]));
        }
    }
    return out;
}

// The house (IFC: walls, slabs, many coplanar and touching faces) and the
// terrain (a height field), with the bunny dropped into each, where it cuts
// walls or ground.
static void test_collide_house_and_terrain(void** state) {
    (void)state;
    mesh_data bunny = load("meshes/bunny00.off");
    const char* names[] = {"assimp/IFC/AC14-FZK-Haus.ifc", "assimp/HMP/terrain.hmp"};
    for (int i = 0; i < 2; ++i) {
        mesh_data md = load(names[i]);
        mesh_data placed = placed_in(&md, &bunny, 0.2);
        check_collide(&md, &placed, carom_xform_identity(),
                      carom_xform_make((vec3s){{0, 0, 0}}, (vec3s){{0, 0, 1}}, 0.01f), 1, true, false);
        free(placed.vertices);
    }
}

static void test_collide_real_meshes(void** state) {
    (void)state;
    mesh_data bunny = load("meshes/bunny00.off");
    mesh_data armadillo = load("meshes/armadillo.off");
    // Bunny against itself: grazing (shifted almost clear), deep (rotated and
    // shifted a fifth), near-coincident (0.01 rad). Armadillo against bunny.
    // The reference's exact pass runs on the first two only: on the
    // coincident pose nearly every pair is a touching case.
    carom_xform id = carom_xform_identity();
    check_collide(&bunny, &bunny, id,
                  about_centre(&bunny, (vec3s){{0.3f, 1, 0.2f}}, 0.3f, (vec3s){{0.85f, 0, 0}}), 20,
                  true, false);
    if (!light()) {
        check_collide(&bunny, &bunny, id,
                      about_centre(&bunny, (vec3s){{0.3f, 1, 0.2f}}, 0.3f, (vec3s){{0.2f, 0, 0}}),
                      500, true, false);
        check_collide(&bunny, &bunny, id,
                      about_centre(&bunny, (vec3s){{0.3f, 1, 0.2f}}, 0.01f, (vec3s){{0, 0, 0}}),
                      500, false, false);
    }
    mesh_data placed = placed_in(&armadillo, &bunny, 0.6);
    check_collide(&armadillo, &placed, id,
                  about_centre(&placed, (vec3s){{1, 0, 0}}, 0.7f, (vec3s){{0, 0, 0}}), 1, true, false);
    free(placed.vertices);
}

// A first-hit query walks the likeliest crossings first (deepest box
// overlaps; where two meshes run together, the places that moved most), so
// it visits the lanes of an unfolding in an order of its own. Whatever the
// order, it must report a pair exactly when one exists, and a true one.
static void check_first_hit(const mesh_data* da, const carom_mesh* ma, carom_xform pa,
                            const mesh_data* db, const carom_mesh* mb, carom_xform pb,
                            const char* kind, int pose) {
    const pair_set truth = brute_force_pairs(da, ma, pa, db, mb, pb);
    carom_triangle_pair first = {-1, -1};
    carom_mesh_query_result r = carom_mesh_collide_pairs(ma, pa, mb, pb, true, &first, 1);
    assert_int_equal(r.state, CAROM_DONE);
    if (r.found != (truth.n > 0) || (truth.n > 0 && !pair_in(&truth, first))) {
        fail_msg("%s pose %d, trees %d and %d: first hit found %d (%d, %d), %d pairs exist", kind,
                 pose, ma->tree, mb->tree, r.found, first.a, first.b, truth.n);
    }
    // The queue of node pairs held short, so that the walk falls back on
    // walking pairs at once (and with one pair, at almost every unfolding).
    const int capacities[] = {1, 3};
    for (int k = 0; k < 2; ++k) {
        first = (carom_triangle_pair){-1, -1};
        r = mid_mesh_first_hit(ma, pa, mb, pb, &first, capacities[k]);
        assert_int_equal(r.state, CAROM_DONE);
        if (r.found != (truth.n > 0) || (truth.n > 0 && !pair_in(&truth, first))) {
            fail_msg("%s pose %d, trees %d and %d, queue of %d: first hit found %d (%d, %d), %d "
                     "pairs exist",
                     kind, pose, ma->tree, mb->tree, capacities[k], r.found, first.a, first.b,
                     truth.n);
        }
    }
    free(truth.p);
}

// Every tree kind with itself, the SAH tree with the boxtree, both ways.
static void check_first_hit_trees(const mesh_data* da, const carom_mesh ta[TREE_COUNT],
                                  carom_xform pa, const mesh_data* db,
                                  const carom_mesh tb[TREE_COUNT], carom_xform pb,
                                  const char* kind, int pose) {
    for (int i = 0; i < TREE_COUNT; ++i) {
        check_first_hit(da, &ta[i], pa, db, &tb[i], pb, kind, pose);
        check_first_hit(db, &tb[i], pb, da, &ta[i], pa, kind, pose);
    }
    check_first_hit(da, &ta[1], pa, db, &tb[2], pb, kind, pose);
    check_first_hit(db, &tb[2], pb, da, &ta[1], pa, kind, pose);
}

// `rel` (a pose in a's frame) carried into the world by a's pose.
static carom_xform in_frame_of(carom_xform pa, carom_xform rel) {
    carom_xform xf = {carom_xform_point(pa, rel.p), glms_quat_mul(pa.q, rel.q)};
    return xf;
}

// A copy of a sphere of radius about 1 round the origin, blown up by 2%
// but for a dent of 2% inward within `cone` rad of `axis`: the copy meets
// the original only along the rim of the dent.
static mesh_data dented_copy(const mesh_data* md, const double axis[3], double cone) {
    mesh_data out = {md->vertex_count, malloc(sizeof(float[3]) * (size_t)md->vertex_count),
                     md->triangle_count, malloc(sizeof(int[3]) * (size_t)md->triangle_count)};
    memcpy(out.triangles, md->triangles, sizeof(int[3]) * (size_t)md->triangle_count);
    for (int i = 0; i < md->vertex_count; ++i) {
        const float* v = md->vertices[i];
        const double r = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        const double along = (v[0] * axis[0] + v[1] * axis[1] + v[2] * axis[2]) / r;
        const double s = along > cos(cone) ? 0.98 : 1.02;
        for (int k = 0; k < 3; ++k) out.vertices[i][k] = (float)(s * v[k]);
    }
    return out;
}

// Over random poses of four kinds: grazing (moved back from where the
// meshes part by 0.003 of their size, as the benchmark's sweeps), deep
// (half that way), near-coincident (a mesh against itself turned 0.01 rad,
// where the boxes of the copies nearly coincide) and a dented copy, which
// runs together with the original everywhere but crosses it only along
// the dent's rim: its pairs lie under one lane among many of the
// unfoldings where the boxes coincide. Against the tree-free brute force.
static void test_first_hit_over_random_poses(void** state) {
    (void)state;
    ref_rng rng = {2718};
    mesh_data data[2] = {make_jittered_uv_sphere(16, 1.0, 0.3, 0.0, &rng),
                         make_jittered_uv_sphere(13, 0.8, 1.1, 0.0, &rng)};
    carom_mesh trees[2][TREE_COUNT];
    for (int m = 0; m < 2; ++m) {
        for (int k = 0; k < TREE_COUNT; ++k) trees[m][k] = build_tree(&data[m], TREES[k]);
    }
    const carom_xform pa = carom_xform_make((vec3s){{0.5f, -0.25f, 2}}, (vec3s){{1, 2, 3}}, 0.6f);
    const char* kinds[] = {"grazing", "deep", "near-coincident"};
    const int poses = light() ? 4 : 12;
    int hits = 0;
    for (int kind = 0; kind < 3; ++kind) {
        const int b = kind == 2 ? 0 : 1;  // near-coincident: the mesh against itself
        for (int pose = 0; pose < poses; ++pose) {
            double q[4], dir[3];
            ref_rng_unit_quat(&rng, q);
            const vec3s axis = {{(float)q[0], (float)q[1], (float)q[2] + 1e-3f}};
            const float angle = kind == 2 ? 0.01f : (float)ref_rng_uniform(&rng, 0.2, 3.0);
            for (int k = 0; k < 3; ++k) dir[k] = ref_rng_uniform(&rng, -1, 1);
            const double norm = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]);
            // Where the meshes stop meeting along dir, by bisection on the
            // first hit of the default tree (the brute force then judges).
            double lo = 0, hi = 4.0, along = 0;
            if (kind != 2) {
                for (int step = 0; step < 30; ++step) {
                    const double mid = 0.5 * (lo + hi);
                    const vec3s shift = {{(float)(mid * dir[0] / norm),
                                          (float)(mid * dir[1] / norm),
                                          (float)(mid * dir[2] / norm)}};
                    const carom_xform pb =
                        in_frame_of(pa, about_centre(&data[b], axis, angle, shift));
                    carom_triangle_pair p;
                    if (carom_mesh_collide_pairs(&trees[0][1], pa, &trees[b][1], pb, true, &p, 1)
                            .found > 0) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                along = kind == 0 ? lo - 0.006 : 0.5 * lo;
            }
            const vec3s shift = {{(float)(along * dir[0] / norm), (float)(along * dir[1] / norm),
                                  (float)(along * dir[2] / norm)}};
            const carom_xform pb = in_frame_of(pa, about_centre(&data[b], axis, angle, shift));
            check_first_hit_trees(&data[0], trees[0], pa, &data[b], trees[b], pb, kinds[kind],
                                  pose);
            carom_triangle_pair p;
            hits += carom_mesh_collide_pairs(&trees[0][1], pa, &trees[b][1], pb, true, &p, 1).found;
        }
    }
    // Every pose of every kind meets: grazing ones by 0.003 of the size.
    assert_int_equal(hits, 3 * poses);
    // The dented copies' original: a smooth sphere (the jittered one's
    // vertices put back on the unit sphere), so that the copy blown up by
    // 2% clears it everywhere but at the dent.
    mesh_data smooth = make_jittered_uv_sphere(24, 1.0, 0.3, 0.0, &rng);
    for (int i = 0; i < smooth.vertex_count; ++i) {
        float* v = smooth.vertices[i];
        const double r = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        for (int k = 0; k < 3; ++k) v[k] = (float)(v[k] / r);
    }
    carom_mesh smooth_trees[TREE_COUNT];
    for (int k = 0; k < TREE_COUNT; ++k) smooth_trees[k] = build_tree(&smooth, TREES[k]);
    for (int pose = 0; pose < poses; ++pose) {
        double q[4], axis[3];
        ref_rng_unit_quat(&rng, q);
        const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
        for (int k = 0; k < 3; ++k) axis[k] = q[k] / n;
        mesh_data dented = dented_copy(&smooth, axis, ref_rng_uniform(&rng, 0.1, 0.3));
        carom_mesh dented_trees[TREE_COUNT];
        for (int k = 0; k < TREE_COUNT; ++k) dented_trees[k] = build_tree(&dented, TREES[k]);
        const carom_xform pb = in_frame_of(pa, carom_xform_make((vec3s){{0, 0, 0}},
                                                                (vec3s){{(float)q[1], (float)q[2],
                                                                         (float)q[3]}},
                                                                1e-3f));
        check_first_hit_trees(&smooth, smooth_trees, pa, &dented, dented_trees, pb, "dented copy",
                              pose);
        for (int k = 0; k < TREE_COUNT; ++k) carom_mesh_destroy(&dented_trees[k]);
        mesh_free(&dented);
    }
    for (int k = 0; k < TREE_COUNT; ++k) carom_mesh_destroy(&smooth_trees[k]);
    mesh_free(&smooth);
    for (int m = 0; m < 2; ++m) {
        for (int k = 0; k < TREE_COUNT; ++k) carom_mesh_destroy(&trees[m][k]);
        mesh_free(&data[m]);
    }
}

// --- rays -------------------------------------------------------------------------

// The centre of the mesh's box moved by the pose, and half its diagonal.
static void world_centre(const mesh_data* md, double rot[3][3], const double trans[3],
                         double centre[3], double* radius) {
    double lo[3], hi[3], c[3];
    bounds_of(md, lo, hi);
    *radius = 0;
    for (int k = 0; k < 3; ++k) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        *radius += 0.25 * (hi[k] - lo[k]) * (hi[k] - lo[k]);
    }
    *radius = sqrt(*radius);
    for (int i = 0; i < 3; ++i) {
        centre[i] = trans[i];
        for (int j = 0; j < 3; ++j) centre[i] += rot[i][j] * c[j];
    }
}

typedef struct brute_hit {
    bool hit;
    int triangle;
    float t;
} brute_hit;

static brute_hit brute_force_ray(const carom_mesh* m, carom_xform pose, carom_ray ray) {
    mid_ray q;
    assert_true(mid_ray_init(m, pose, ray, &q));
    brute_hit best = {false, -1, 1.0f};
    for (int t = 0; t < m->triangle_count; ++t) {
        if (flat(m, t)) continue;
        vec3s v[3];
        corners(m, t, v);
        float s;
        if (!mid_ray_triangle(q.origin, q.dir, v, 1.0f, &s)) continue;
        if (!best.hit || s < best.t || (s == best.t && t < best.triangle)) {
            best = (brute_hit){true, t, s};
        }
    }
    return best;
}

static void check_rays(const mesh_data* md, const carom_mesh_desc* trees, int tree_count,
                       carom_xform pose, int count, unsigned long long seed) {
    double rot[3][3], trans[3];
    pose_to_double(pose, rot, trans);
    double size = mesh_size(md) + fabs(pose.p.x) + fabs(pose.p.y) + fabs(pose.p.z);
    double centre[3], radius;
    world_centre(md, rot, trans, centre, &radius);
    carom_mesh m[MAX_TREES];
    for (int k = 0; k < tree_count; ++k) m[k] = build_tree(md, trees[k]);
    ref_rng rng = {seed};
    int hits = 0, disagreements = 0;
    for (int i = 0; i < count; ++i) {
        // From a sphere around the mesh towards a random point inside it,
        // long enough to cross it; every fifth ray short, ending inside.
        double dir[3], o[3], tr[3];
        do {
            for (int k = 0; k < 3; ++k) dir[k] = ref_rng_uniform(&rng, -1, 1);
        } while (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2] > 1);
        double len = sqrt(dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]) + 1e-9;
        double reach = i % 5 == 0 ? 1.2 : 2.5;
        for (int k = 0; k < 3; ++k) {
            double target = centre[k] + ref_rng_uniform(&rng, -0.5, 0.5) * radius;
            o[k] = centre[k] + 1.5 * radius * dir[k] / len;
            tr[k] = (target - o[k]) * reach;
        }
        carom_ray ray = {{{(float)o[0], (float)o[1], (float)o[2]}},
                         {{(float)tr[0], (float)tr[1], (float)tr[2]}}};
        brute_hit truth = brute_force_ray(&m[0], pose, ray);
        hits += truth.hit;
        for (int k = 0; k < tree_count; ++k) {
            carom_mesh_hit h = carom_mesh_raycast(&m[k], pose, ray, CAROM_RAY_CLOSEST);
            assert_int_equal(h.state, CAROM_DONE);
            assert_int_equal(h.hit, truth.hit);
            if (!truth.hit) continue;
            assert_int_equal(h.triangle, truth.triangle);
            assert_true(h.fraction == truth.t);
            assert_true(fabsf(sqrtf(glms_vec3_norm2(h.normal)) - 1.0f) < 1e-5f);
            assert_true(glms_vec3_dot(h.normal, ray.translation) <= 0.0f);
            carom_mesh_hit any = carom_mesh_raycast(&m[k], pose, ray, CAROM_RAY_ANY);
            assert_true(any.hit && any.fraction >= h.fraction);
        }
        // The exact answer: where it differs, the triangle one side hit and
        // the other missed must be grazed (an edge or the plane within float
        // rounding of the ray).
        double ro[3] = {ray.origin.x, ray.origin.y, ray.origin.z};
        double rt[3] = {ray.translation.x, ray.translation.y, ray.translation.z};
        double length = sqrt(rt[0] * rt[0] + rt[1] * rt[1] + rt[2] * rt[2]);
        double tol = 1e-5 * size;
        ref_ray_hit ref;
        ref_ray_mesh_posed(md->vertices, md->triangles, md->triangle_count, rot, trans, ro, rt, &ref);
        bool ref_first = ref.hit && (!truth.hit || ref.t * length < truth.t * length - tol);
        bool carom_first = truth.hit && (!ref.hit || truth.t * length < ref.t * length - tol);
        if (ref_first) {
            ++disagreements;
            assert_true(fabs(ref.margin) <= tol);
        }
        if (carom_first) {
            ++disagreements;
            double tri[3][3];
            ref_mesh_triangle(md->vertices, md->triangles, truth.triangle, rot, trans, tri);
            assert_true(fabs(ref_ray_triangle_margin(ro, rt, tri)) <= tol);
        }
    }
    assert_true(disagreements <= 1 + count / 50);
    assert_true(hits > count / 5);
    for (int k = 0; k < tree_count; ++k) carom_mesh_destroy(&m[k]);
}

static void test_raycast_meshes(void** state) {
    (void)state;
    mesh_data soup = make_soup(400, 2.0, 0.3, 77);
    check_rays(&soup, TREES, TREE_COUNT, carom_xform_identity(), 300, 1);
    check_rays(&soup, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, carom_xform_identity(), 300, 4);
    mesh_free(&soup);
    mesh_data few = make_soup(10, 0.2, 1.0, 91);
    check_rays(&few, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, carom_xform_identity(), 200, 7);
    mesh_free(&few);
    const char* names[] = {"meshes/bunny00.off", "meshes/armadillo.off",
                           "assimp/IFC/AC14-FZK-Haus.ifc", "assimp/HMP/terrain.hmp"};
    ref_rng rng = {5};
    for (int i = 0; i < 4; ++i) {
        mesh_data md = load(names[i]);
        check_rays(&md, TREES, TREE_COUNT, random_pose(&rng, 3.0f), light() ? 10 : 60,
                   10 + (unsigned)i);
    }
}

// Distance from the point to the box of the three corners, in double.
static double distance_to_corners_box(vec3s point, const vec3s c[3]) {
    double sum = 0.0;
    for (int k = 0; k < 3; ++k) {
        double lo = fmin(c[0].raw[k], fmin(c[1].raw[k], c[2].raw[k]));
        double hi = fmax(c[0].raw[k], fmax(c[1].raw[k], c[2].raw[k]));
        double x = point.raw[k], out = x < lo ? lo - x : (x > hi ? x - hi : 0.0);
        sum += out * out;
    }
    return sqrt(sum);
}

// Triangles near 1e-20 in size and position against rays of length about
// 2 that pass near them: the ray test's determinant (two edges and the
// direction) underflowed in float, and a ray "hit" such a triangle 0.5 away
// from it. A hit, if any, must lie within rounding of the ray's own
// coordinates from the triangle.
static void test_raycast_tiny_triangles(void** state) {
    (void)state;
    ref_rng rng = {31};
    for (int trial = 0; trial < 2001; ++trial) {
        vec3s c[3];
        carom_ray ray;
        if (trial == 0) {  // the case found first
            c[0] = v3(0x1p-65f, 0, 0);
            c[1] = v3(0x1.00418ap-65f, 0x1.0624dep-75f, 0);
            c[2] = v3(0x1p-65f, 0x1.0624dep-75f, 0x1.0624dep-75f);
            ray.origin = v3(0x1.e9786ap-1f, -0x1.edd16cp-1f, 0x1.8aea18p-1f);
        } else {
            double size = ldexp(1.0, -(60 + trial % 21));
            double at[3];
            for (int k = 0; k < 3; ++k) at[k] = ref_rng_uniform(&rng, -1, 1) * ldexp(1.0, -60);
            for (int i = 0; i < 3; ++i) {
                c[i] = v3((float)(at[0] + size * ref_rng_uniform(&rng, -1, 1)),
                          (float)(at[1] + size * ref_rng_uniform(&rng, -1, 1)),
                          (float)(at[2] + size * ref_rng_uniform(&rng, -1, 1)));
            }
            ray.origin = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                            (float)ref_rng_uniform(&rng, -1, 1));
        }
        ray.translation = v3_scale(ray.origin, -2.0f);
        int idx[3] = {0, 1, 2};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(c, 3, idx, 1, NULL, &m), CAROM_OK);
        carom_mesh_hit h = carom_mesh_raycast(&m, carom_xform_identity(), ray, CAROM_RAY_CLOSEST);
        assert_int_equal(h.state, CAROM_DONE);
        if (h.hit) {
            double reach = 1e-6 * (sqrt(v3_len2(ray.origin)) + sqrt(v3_len2(ray.translation)));
            double off = distance_to_corners_box(h.point, c);
            if (off > reach) fail_msg("trial %d: hit %g from the triangle", trial, off);
        }
        carom_mesh_destroy(&m);
    }
}

static void test_raycast_analytic(void** state) {
    (void)state;
    vec3s v[4] = {{{-1, -1, 0}}, {{1, -1, 0}}, {{1, 1, 0}}, {{-1, 1, 0}}};
    int idx[6] = {0, 1, 2, 0, 2, 3};
    carom_mesh m;
    assert_int_equal(carom_mesh_create(v, 4, idx, 2, NULL, &m), CAROM_OK);
    carom_xform pose = at(0, 0, 5);
    carom_ray down = {{{0.5f, -0.25f, 9}}, {{0, 0, -8}}};
    carom_mesh_hit h = carom_mesh_raycast(&m, pose, down, CAROM_RAY_CLOSEST);
    assert_true(h.hit);
    assert_int_equal(h.triangle, 0);
    assert_float_equal(h.fraction, 0.5f, 1e-6f);
    assert_float_equal(h.point.z, 5.0f, 1e-5f);
    assert_float_equal(h.normal.z, 1.0f, 1e-6f);
    carom_ray up = {{{0.5f, -0.25f, 1}}, {{0, 0, 8}}};
    h = carom_mesh_raycast(&m, pose, up, CAROM_RAY_CLOSEST);
    assert_true(h.hit);
    assert_float_equal(h.normal.z, -1.0f, 1e-6f);  // faces the ray's origin
    carom_ray short_ray = {{{0.5f, -0.25f, 9}}, {{0, 0, -3.9f}}};
    assert_false(carom_mesh_raycast(&m, pose, short_ray, CAROM_RAY_CLOSEST).hit);
    // Starting on the surface hits at 0; a zero translation never hits.
    carom_ray on = {{{0.5f, -0.25f, 5}}, {{0, 0, 1}}};
    h = carom_mesh_raycast(&m, pose, on, CAROM_RAY_CLOSEST);
    assert_true(h.hit && h.fraction == 0.0f);
    // Regression: a tiny but nonzero translation counted as zero (its squared
    // length underflowed), so a ray starting on the mesh missed.
    carom_ray tiny = {{{0.5f, -0.25f, 5}}, {{0, 0, 1e-23f}}};
    h = carom_mesh_raycast(&m, pose, tiny, CAROM_RAY_CLOSEST);
    assert_true(h.hit && h.fraction == 0.0f && !signbit(h.fraction));
    carom_ray point = {{{0.5f, -0.25f, 5}}, {{0, 0, 0}}};
    h = carom_mesh_raycast(&m, pose, point, CAROM_RAY_CLOSEST);
    assert_int_equal(h.state, CAROM_DONE);
    assert_false(h.hit);
    assert_int_equal(h.triangle, -1);
    // Through the shared diagonal: both triangles at the same fraction, the
    // lower index wins.
    carom_ray diagonal = {{{0.25f, 0.25f, 9}}, {{0, 0, -8}}};
    h = carom_mesh_raycast(&m, pose, diagonal, CAROM_RAY_CLOSEST);
    assert_true(h.hit);
    assert_int_equal(h.triangle, 0);
    carom_mesh_destroy(&m);
}

// --- boxes --------------------------------------------------------------------------

typedef struct id_set {
    int* v;
    int n, cap;
} id_set;

static bool collect_id(void* user, int t) {
    id_set* s = user;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = realloc(s->v, sizeof *s->v * (size_t)s->cap);
    }
    s->v[s->n++] = t;
    return true;
}

static int int_order(const void* x, const void* y) {
    int a = *(const int*)x, b = *(const int*)y;
    return (a > b) - (a < b);
}

static void check_boxes(const mesh_data* md, const carom_mesh_desc* trees, int tree_count,
                        carom_xform pose, int count, unsigned long long seed) {
    double rot[3][3], trans[3];
    pose_to_double(pose, rot, trans);
    double size = mesh_size(md) + fabs(pose.p.x) + fabs(pose.p.y) + fabs(pose.p.z);
    double centre[3], radius;
    world_centre(md, rot, trans, centre, &radius);
    carom_mesh m[MAX_TREES];
    for (int k = 0; k < tree_count; ++k) m[k] = build_tree(md, trees[k]);
    ref_rng rng = {seed};
    int found = 0;
    for (int i = 0; i < count; ++i) {
        carom_aabb box;
        for (int k = 0; k < 3; ++k) {
            double c = centre[k] + ref_rng_uniform(&rng, -0.6, 0.6) * radius;
            double h = ref_rng_uniform(&rng, 0.01, 0.2) * radius;
            box.min.raw[k] = (float)(c - h);
            box.max.raw[k] = (float)(c + h);
        }
        mid_box_query q;
        assert_true(mid_box_query_init(&m[0], pose, box, &q));
        id_set truth = {0};
        for (int t = 0; t < md->triangle_count; ++t) {
            vec3s v[3];
            corners(&m[0], t, v);
            if (!flat(&m[0], t) && mid_box_query_triangle(&q, v)) collect_id(&truth, t);
        }
        found += truth.n;
        for (int k = 0; k < tree_count; ++k) {
            id_set s = {0};
            carom_mesh_query_result r = carom_mesh_overlap_box(&m[k], pose, box, collect_id, &s);
            assert_int_equal(r.state, CAROM_DONE);
            assert_int_equal(r.found, s.n);
            if (s.n > 1) qsort(s.v, (size_t)s.n, sizeof *s.v, int_order);
            assert_int_equal(s.n, truth.n);
            if (s.n) assert_memory_equal(s.v, truth.v, sizeof *s.v * (size_t)s.n);
            free(s.v);
        }
        // The exact test in double: any disagreement is a touching case.
        double center[3], axes[3][3], half[3];
        for (int k = 0; k < 3; ++k) {
            center[k] = 0.5 * ((double)box.min.raw[k] + box.max.raw[k]);
            half[k] = 0.5 * ((double)box.max.raw[k] - box.min.raw[k]);
            for (int j = 0; j < 3; ++j) axes[k][j] = k == j;
        }
        for (int t = 0; t < md->triangle_count; ++t) {
            if (flat(&m[0], t)) continue;
            double tri[3][3];
            ref_mesh_triangle(md->vertices, md->triangles, t, rot, trans, tri);
            bool exact = ref_obb_triangle_intersect(center, axes, half, tri);
            bool got = truth.n > 0 && bsearch(&t, truth.v, (size_t)truth.n, sizeof t, int_order);
            if (exact != got) {
                double margin = ref_obb_triangle_margin(center, axes, half, tri);
                assert_true(fabs(margin) <= 1e-5 * size);
            }
        }
        free(truth.v);
    }
    assert_true(found > count);
    for (int k = 0; k < tree_count; ++k) carom_mesh_destroy(&m[k]);
}

static void test_overlap_box_meshes(void** state) {
    (void)state;
    mesh_data soup = make_soup(400, 2.0, 0.3, 78);
    ref_rng rng = {9};
    check_boxes(&soup, TREES, TREE_COUNT, random_pose(&rng, 1.0f), 60, 2);
    ref_rng leaf_rng = {19};  // its own, to leave the poses below as they were
    check_boxes(&soup, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, random_pose(&leaf_rng, 1.0f), 60, 5);
    mesh_free(&soup);
    mesh_data few = make_soup(16, 0.3, 1.5, 92);
    check_boxes(&few, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, random_pose(&leaf_rng, 1.0f), 60, 8);
    mesh_free(&few);
    const char* names[] = {"meshes/bunny00.off", "assimp/IFC/AC14-FZK-Haus.ifc"};
    for (int i = 0; i < 2; ++i) {
        mesh_data md = load(names[i]);
        check_boxes(&md, TREES, TREE_COUNT, random_pose(&rng, 2.0f), light() ? 3 : 12,
                    20 + (unsigned)i);
    }
}

// --- refit ---------------------------------------------------------------------------

// A refitted tree answers every query exactly as a fresh build of the moved
// vertices does (same sets; order may differ).
static void test_refit_equals_rebuild(void** state) {
    (void)state;
    mesh_data a = make_soup(400, 2.0, 0.3, 31);
    mesh_data moved = make_soup(400, 2.0, 0.3, 31);
    for (int v = 0; v < moved.vertex_count; ++v) {
        float* p = moved.vertices[v];
        float x = p[0], y = p[1], z = p[2];
        p[0] = x + 0.4f * sinf(1.7f * y);
        p[1] = y * 1.2f + 0.3f * cosf(z);
        p[2] = z - 0.5f * sinf(x);
    }
    mesh_data other = make_soup(300, 2.0, 0.3, 32);
    ref_rng rng = {3};
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh refit = build_tree(&a, TREES[k]);
        carom_mesh fresh = build_tree(&moved, TREES[k]);
        carom_mesh b = build_tree(&other, TREES[k]);
        assert_int_equal(carom_mesh_refit(&refit, (const vec3s*)moved.vertices, moved.vertex_count),
                         CAROM_OK);
        for (int trial = 0; trial < 5; ++trial) {
            carom_xform pa = random_pose(&rng, 0.3f), pb = random_pose(&rng, 0.3f);
            pair_set x = {0}, y = {0};
            carom_mesh_collide(&refit, pa, &b, pb, collect_pair, &x);
            carom_mesh_collide(&fresh, pa, &b, pb, collect_pair, &y);
            sort_pairs(&x);
            sort_pairs(&y);
            assert_true(x.n > 0);
            assert_same_pairs(&x, &y);
            free(x.p);
            free(y.p);
            for (int i = 0; i < 20; ++i) {
                carom_ray ray = {{{(float)ref_rng_uniform(&rng, -4, 4), 4.0f,
                                   (float)ref_rng_uniform(&rng, -4, 4)}},
                                 {{(float)ref_rng_uniform(&rng, -2, 2), -8.0f,
                                   (float)ref_rng_uniform(&rng, -2, 2)}}};
                carom_mesh_hit h1 = carom_mesh_raycast(&refit, pa, ray, CAROM_RAY_CLOSEST);
                carom_mesh_hit h2 = carom_mesh_raycast(&fresh, pa, ray, CAROM_RAY_CLOSEST);
                assert_int_equal(h1.hit, h2.hit);
                assert_int_equal(h1.triangle, h2.triangle);
                assert_true(h1.fraction == h2.fraction);
            }
            carom_aabb box = {{{-0.7f, -0.7f, -0.7f}}, {{0.6f, 0.8f, 0.5f}}};
            id_set s1 = {0}, s2 = {0};
            carom_mesh_overlap_box(&refit, pa, box, collect_id, &s1);
            carom_mesh_overlap_box(&fresh, pa, box, collect_id, &s2);
            if (s1.n > 1) qsort(s1.v, (size_t)s1.n, sizeof *s1.v, int_order);
            if (s2.n > 1) qsort(s2.v, (size_t)s2.n, sizeof *s2.v, int_order);
            assert_int_equal(s1.n, s2.n);
            if (s1.n) assert_memory_equal(s1.v, s2.v, sizeof *s1.v * (size_t)s1.n);
            free(s1.v);
            free(s2.v);
        }
        carom_mesh_destroy(&refit);
        carom_mesh_destroy(&fresh);
        carom_mesh_destroy(&b);
    }
    mesh_free(&a);
    mesh_free(&moved);
    mesh_free(&other);
}

// --- shape casts -------------------------------------------------------------------

// The brute force of carom_mesh_shape_cast: its leaf cast on every triangle.
static brute_hit brute_force_cast(const carom_mesh* m, carom_xform pose, const carom_shape* shape,
                                  carom_xform shape_pose, vec3s translation) {
    versors q = glms_quat_normalize(pose.q);
    carom_rot rot = carom_rot_from_quat(q);
    carom_xform relative = {rot_apply_transposed(&rot, glms_vec3_sub(shape_pose.p, pose.p)),
                            glms_quat_mul(glms_quat_conjugate(q), shape_pose.q)};
    vec3s local = rot_apply_transposed(&rot, translation);
    brute_hit best = {false, -1, INFINITY};
    for (int t = 0; t < m->triangle_count; ++t) {
        if (flat(m, t)) continue;
        vec3s v[3];
        corners(m, t, v);
        carom_cast_result r;
        if (!mid_cast_triangle(shape, relative, local, v, &r)) continue;
        if (!best.hit || r.fraction < best.t || (r.fraction == best.t && t < best.triangle)) {
            best = (brute_hit){true, t, r.fraction};
        }
    }
    return best;
}

static void check_casts(const mesh_data* md, const carom_mesh_desc* trees, int tree_count,
                        carom_xform pose, int count, unsigned long long seed) {
    double rot[3][3], trans[3];
    pose_to_double(pose, rot, trans);
    double centre[3], radius;
    world_centre(md, rot, trans, centre, &radius);
    float r = (float)radius;
    carom_mesh m[MAX_TREES];
    for (int k = 0; k < tree_count; ++k) m[k] = build_tree(md, trees[k]);
    carom_shape shapes[3] = {carom_sphere(0.05f * r),
                             carom_capsule((vec3s){{0, 0, -0.04f * r}}, (vec3s){{0, 0, 0.04f * r}},
                                           0.03f * r),
                             carom_box((vec3s){{0.04f * r, 0.02f * r, 0.05f * r}})};
    ref_rng rng = {seed};
    int hits = 0;
    for (int i = 0; i < count; ++i) {
        // From outside the mesh's sphere towards a point inside it.
        carom_xform start = random_pose(&rng, 1.0f);
        double dir[3], len = 0;
        for (int k = 0; k < 3; ++k) {
            dir[k] = ref_rng_uniform(&rng, -1, 1);
            len += dir[k] * dir[k];
        }
        len = sqrt(len) + 1e-9;
        vec3s target;
        for (int k = 0; k < 3; ++k) {
            start.p.raw[k] = (float)(centre[k] + 1.3 * radius * dir[k] / len);
            target.raw[k] = (float)(centre[k] + ref_rng_uniform(&rng, -0.4, 0.4) * radius);
        }
        vec3s translation = glms_vec3_scale(glms_vec3_sub(target, start.p), 1.5f);
        const carom_shape* shape = &shapes[i % 3];
        brute_hit truth = brute_force_cast(&m[0], pose, shape, start, translation);
        hits += truth.hit;
        for (int k = 0; k < tree_count; ++k) {
            carom_mesh_hit h = carom_mesh_shape_cast(&m[k], pose, shape, start, translation);
            assert_true(h.state == CAROM_DONE || h.state == CAROM_MAX_ITERATIONS);
            assert_int_equal(h.hit, truth.hit);
            if (!truth.hit) continue;
            assert_int_equal(h.triangle, truth.triangle);
            assert_true(h.fraction == truth.t);
            assert_true(fabsf(sqrtf(glms_vec3_norm2(h.normal)) - 1.0f) < 1e-3f);
            // At the fraction the shape touches the triangle it reports.
            carom_xform at_hit = start;
            at_hit.p = glms_vec3_add(start.p, glms_vec3_scale(translation, h.fraction));
            vec3s v[3];
            corners(&m[k], h.triangle, v);
            carom_shape tri = carom_triangle(v[0], v[1], v[2]);
            carom_distance_result d = carom_gjk_distance(shape, at_hit, &tri, pose, NULL);
            assert_int_equal(d.state, CAROM_DONE);
            assert_true(d.distance <= 1e-4f * (r + sqrtf(glms_vec3_norm2(translation))));
        }
    }
    assert_true(hits > count / 4);
    for (int k = 0; k < tree_count; ++k) carom_mesh_destroy(&m[k]);
}

static void test_shape_cast_meshes(void** state) {
    (void)state;
    mesh_data soup = make_soup(300, 2.0, 0.3, 79);
    check_casts(&soup, TREES, TREE_COUNT, carom_xform_identity(), light() ? 12 : 60, 3);
    check_casts(&soup, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, carom_xform_identity(),
                light() ? 12 : 60, 6);
    mesh_free(&soup);
    mesh_data few = make_soup(10, 0.2, 1.0, 93);
    check_casts(&few, LEAF_SIZE_TREES, LEAF_SIZE_TREE_COUNT, carom_xform_identity(), 30, 9);
    mesh_free(&few);
    const char* names[] = {"meshes/bunny00.off", "assimp/HMP/terrain.hmp"};
    ref_rng rng = {6};
    for (int i = 0; i < 2; ++i) {
        mesh_data md = load(names[i]);
        check_casts(&md, TREES, TREE_COUNT, random_pose(&rng, 2.0f), light() ? 2 : 9,
                    30 + (unsigned)i);
    }
}

// A sphere dropped on a floor, a capsule sliding along a wall, a box that
// starts inside.
static void test_shape_cast_analytic(void** state) {
    (void)state;
    vec3s floor[4] = {{{-5, -5, 0}}, {{5, -5, 0}}, {{5, 5, 0}}, {{-5, 5, 0}}};
    int idx[6] = {0, 1, 2, 0, 2, 3};
    carom_mesh m;
    assert_int_equal(carom_mesh_create(floor, 4, idx, 2, NULL, &m), CAROM_OK);
    carom_xform pose = at(0, 0, 1);  // the floor at z = 1
    carom_shape ball = carom_sphere(0.5f);
    carom_mesh_hit h = carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 4), (vec3s){{0, 0, -5}});
    assert_int_equal(h.state, CAROM_DONE);
    assert_true(h.hit);
    assert_float_equal(h.fraction, 0.5f, 1e-4f);  // centre from 4 to 1.5
    assert_float_equal(h.normal.z, 1.0f, 1e-4f);
    assert_float_equal(h.point.z, 1.0f, 1e-4f);
    assert_float_equal(h.point.x, 1.0f, 1e-3f);
    // Moving away, or falling short, misses; a zero translation at rest
    // above the floor misses; overlapping at the start hits at 0.
    assert_false(carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 4), (vec3s){{0, 0, 5}}).hit);
    assert_false(carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 4), (vec3s){{0, 0, -2}}).hit);
    assert_false(carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 4), (vec3s){{0, 0, 0}}).hit);
    h = carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 1.2f), (vec3s){{3, 0, 0}});
    assert_true(h.hit && h.fraction == 0.0f);
    h = carom_mesh_shape_cast(&m, pose, &ball, at(1, 2, 1.2f), (vec3s){{0, 0, 0}});
    assert_true(h.hit && h.fraction == 0.0f);
    // A capsule lying 0.1 above the floor, sliding along it, never touches;
    // tilted down by its own length it does.
    carom_shape capsule = carom_capsule((vec3s){{-1, 0, 0}}, (vec3s){{1, 0, 0}}, 0.25f);
    assert_false(carom_mesh_shape_cast(&m, pose, &capsule, at(0, 0, 1.35f), (vec3s){{3, 2, 0}}).hit);
    h = carom_mesh_shape_cast(&m, pose, &capsule, at(0, 0, 2.25f), (vec3s){{3, 0, -2}});
    assert_true(h.hit);
    assert_float_equal(h.fraction, 0.5f, 1e-4f);
    carom_mesh_destroy(&m);
}

static void test_shape_cast_bad_input(void** state) {
    (void)state;
    vec3s v[3] = {{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}};
    int idx[3] = {0, 1, 2};
    carom_mesh m, zero = {0};
    assert_int_equal(carom_mesh_create(v, 3, idx, 1, NULL, &m), CAROM_OK);
    carom_shape ball = carom_sphere(0.5f), bad = carom_sphere(-1.0f);
    carom_xform id = carom_xform_identity();
    vec3s down = {{0, 0, -2}};
    carom_mesh_hit h = carom_mesh_shape_cast(NULL, id, &ball, at(0, 0, 1), down);
    assert_int_equal(h.state, CAROM_INVALID_INPUT);
    assert_false(h.hit);
    assert_int_equal(h.triangle, -1);
    assert_int_equal(carom_mesh_shape_cast(&zero, id, &ball, at(0, 0, 1), down).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_shape_cast(&m, id, NULL, at(0, 0, 1), down).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_shape_cast(&m, id, &bad, at(0, 0, 1), down).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_shape_cast(&m, at(NAN, 0, 0), &ball, at(0, 0, 1), down).state,
                     CAROM_INVALID_INPUT);
    carom_xform zero_q = {{{0, 0, 1}}, {{0, 0, 0, 0}}};
    assert_int_equal(carom_mesh_shape_cast(&m, id, &ball, zero_q, down).state, CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_shape_cast(&m, id, &ball, at(0, 0, 1), (vec3s){{0, INFINITY, 0}}).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_shape_cast(&m, id, &ball, at(0, 0, 1), (vec3s){{0, 0, 3e12f}}).state,
                     CAROM_INVALID_INPUT);
    h = carom_mesh_shape_cast(&m, id, &ball, at(0.2f, 0.2f, 1), down);
    assert_int_equal(h.state, CAROM_DONE);
    assert_true(h.hit);
    carom_mesh_destroy(&m);
}

// --- bad input -------------------------------------------------------------------------

static bool never_called(void* user, int t) {
    (void)user;
    (void)t;
    fail_msg("callback called on invalid input");
    return true;
}
static bool never_called_pair(void* user, carom_triangle_pair p) {
    (void)user;
    (void)p;
    fail_msg("callback called on invalid input");
    return true;
}
static bool stop_now(void* user, int t) {
    (void)t;
    ++*(int*)user;
    return false;
}

static void test_bad_query_input(void** state) {
    (void)state;
    mesh_data md = make_soup(50, 1.0, 0.5, 4);
    carom_mesh m = build(&md, CAROM_TREE_AABB);
    carom_mesh zero = {0};
    carom_xform id = carom_xform_identity();
    carom_xform nan_pose = at(NAN, 0, 0), zero_q = {{{0, 0, 0}}, {{0, 0, 0, 0}}},
                long_q = {{{0, 0, 0}}, {{0, 0, 0, 1.2f}}}, far = at(2e12f, 0, 0);
    carom_xform bad_poses[] = {nan_pose, zero_q, long_q, far};
    carom_aabb box = {{{-1, -1, -1}}, {{1, 1, 1}}};
    carom_aabb inverted = {{{1, -1, -1}}, {{-1, 1, 1}}}, nan_box = {{{NAN, 0, 0}}, {{1, 1, 1}}};
    carom_ray ray = {{{0, 0, -5}}, {{0, 0, 10}}};
    carom_ray nan_ray = {{{0, NAN, -5}}, {{0, 0, 10}}}, inf_ray = {{{0, 0, -5}}, {{0, INFINITY, 1}}};

    assert_int_equal(carom_mesh_overlap_box(NULL, id, box, never_called, NULL).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_overlap_box(&zero, id, box, never_called, NULL).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_overlap_box(&m, id, box, NULL, NULL).state, CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_overlap_box(&m, id, inverted, never_called, NULL).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_overlap_box(&m, id, nan_box, never_called, NULL).state,
                     CAROM_INVALID_INPUT);
    for (int i = 0; i < 4; ++i) {
        assert_int_equal(carom_mesh_overlap_box(&m, bad_poses[i], box, never_called, NULL).state,
                         CAROM_INVALID_INPUT);
        carom_mesh_hit h = carom_mesh_raycast(&m, bad_poses[i], ray, CAROM_RAY_CLOSEST);
        assert_int_equal(h.state, CAROM_INVALID_INPUT);
        assert_false(h.hit);
        assert_int_equal(carom_mesh_collide(&m, bad_poses[i], &m, id, never_called_pair, NULL).state,
                         CAROM_INVALID_INPUT);
        assert_int_equal(carom_mesh_collide(&m, id, &m, bad_poses[i], never_called_pair, NULL).state,
                         CAROM_INVALID_INPUT);
    }
    assert_int_equal(carom_mesh_raycast(NULL, id, ray, CAROM_RAY_ANY).state, CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_raycast(&m, id, nan_ray, CAROM_RAY_ANY).state, CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_raycast(&m, id, inf_ray, CAROM_RAY_ANY).state, CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_collide(NULL, id, &m, id, never_called_pair, NULL).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_collide(&m, id, &zero, id, never_called_pair, NULL).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_collide(&m, id, &m, id, NULL, NULL).state, CAROM_INVALID_INPUT);
    carom_triangle_pair p;
    assert_int_equal(carom_mesh_collide_pairs(&m, id, &m, id, false, &p, -1).state,
                     CAROM_INVALID_INPUT);
    assert_int_equal(carom_mesh_collide_pairs(&m, id, &m, id, false, NULL, 4).state,
                     CAROM_INVALID_INPUT);
    // A zero-capacity buffer still counts.
    carom_mesh_query_result r = carom_mesh_collide_pairs(&m, id, &m, id, false, NULL, 0);
    assert_int_equal(r.state, CAROM_DONE);
    assert_true(r.found >= md.triangle_count - 2);  // every non-flat triangle meets itself
    // A callback that stops is obeyed at once.
    int calls = 0;
    r = carom_mesh_overlap_box(&m, id, box, stop_now, &calls);
    assert_int_equal(calls, 1);
    assert_true(r.stopped);
    carom_mesh_destroy(&m);
    mesh_free(&md);
}

// Enormous coordinates (a mesh 1e11 from the origin, queried there) work,
// with the float precision that distance allows.
static void test_far_from_origin(void** state) {
    (void)state;
    mesh_data md = make_soup(200, 1e6, 3e5, 8);
    for (int v = 0; v < md.vertex_count; ++v) md.vertices[v][0] += 1e11f;
    carom_mesh m = build(&md, CAROM_TREE_BOXTREE);
    carom_mesh_query_result r = carom_mesh_collide_pairs(&m, carom_xform_identity(), &m,
                                                         carom_xform_identity(), false, NULL, 0);
    assert_int_equal(r.state, CAROM_DONE);
    assert_true(r.found >= md.triangle_count - m.degenerate_count);
    carom_ray ray = {{{1e11f, 0, -5e6f}}, {{0, 0, 1e7f}}};
    carom_mesh_hit h = carom_mesh_raycast(&m, carom_xform_identity(), ray, CAROM_RAY_CLOSEST);
    assert_int_equal(h.state, CAROM_DONE);
    carom_mesh_destroy(&m);
    mesh_free(&md);
}

static bool count_triangle(void* user, int t) {
    (void)t;
    ++*(int*)user;
    return true;
}

// Regression: the shape cast skips a triangle whose plane its sweep reaches
// only after the best hit so far. It took the plane through the triangle's
// first corner along a float normal, which for a sliver (a million times
// longer than wide) is turned by degrees, so the sliver's far corners lay
// well off that plane and a sliver hit first was skipped for a triangle hit
// later (2,889 of 90,000 casts at widths 1e-8 to 1e-7). The cull now takes
// the triangle's range on its normal over all three corners. Here a sliver
// lies across the path of a sphere, a box and a capsule that fall towards a
// large triangle behind it: the mesh's answer must be the least over its
// triangles' own casts, ties to the lower index, bit for bit.
static void test_shape_cast_slivers(void** state) {
    (void)state;
    ref_rng rng = {77};
    int wrong = 0, kept = 0;
    const int trials = light() ? 150 : 1500;
    for (int trial = 0; trial < trials; ++trial) {
        vec3s v[6] = {{{-5, -5, 3}}, {{10, -5, 3}}, {{-5, 10, 3}}};
        double c[3], e[3], w = pow(10.0, ref_rng_uniform(&rng, -8, -4));
        double f = ref_rng_uniform(&rng, 0.2, 0.8);
        for (int k = 0; k < 3; ++k) {
            c[k] = ref_rng_uniform(&rng, -0.3, 0.3);
            e[k] = ref_rng_uniform(&rng, -1, 1);
        }
        for (int k = 0; k < 3; ++k) {
            v[3].raw[k] = (float)c[k];
            v[4].raw[k] = (float)(c[k] + e[k]);
            v[5].raw[k] = (float)(c[k] + f * e[k] + w * ref_rng_uniform(&rng, -1, 1));
        }
        int idx[6] = {0, 1, 2, 3, 4, 5};
        carom_shape shapes[3] = {
            carom_sphere((float)ref_rng_uniform(&rng, 0.01, 0.1)),
            carom_box(v3((float)ref_rng_uniform(&rng, 0.01, 0.1), (float)ref_rng_uniform(&rng, 0.01, 0.1),
                         (float)ref_rng_uniform(&rng, 0.01, 0.1))),
            carom_capsule(v3(-0.05f, 0, 0), v3(0.05f, 0, 0), 0.02f)};
        // From below the sliver's middle, a little aside, up past the big
        // triangle.
        vec3s start = v3((float)(c[0] + 0.5 * e[0] + ref_rng_uniform(&rng, -0.1, 0.1)),
                         (float)(c[1] + 0.5 * e[1] + ref_rng_uniform(&rng, -0.1, 0.1)),
                         (float)(c[2] + 0.5 * e[2] - 0.2));
        vec3s move = v3((float)ref_rng_uniform(&rng, -0.1, 0.1), (float)ref_rng_uniform(&rng, -0.1, 0.1), 4);
        for (int s = 0; s < 3; ++s) {
            carom_xform from = carom_xform_make(start, v3(0.3f, 0.5f, 1), (float)ref_rng_uniform(&rng, 0, 3));
            for (int k = 0; k < TREE_COUNT; ++k) {
                carom_mesh m;
                assert_int_equal(carom_mesh_create(v, 6, idx, 2, &TREES[k], &m), CAROM_OK);
                // The least over the triangles the mesh keeps (the
                // narrowest slivers are of zero area in float, and skipped).
                carom_cast_result best = {0};
                int best_t = -1;
                for (int t = 0; t < 2; ++t) {
                    if (flat(&m, t)) continue;
                    carom_shape tri = carom_triangle(v[3 * t], v[3 * t + 1], v[3 * t + 2]);
                    carom_cast_result r = carom_gjk_shape_cast(&shapes[s], from, move, &tri, carom_xform_identity());
                    if (r.hit && (best_t < 0 || r.fraction < best.fraction)) best = r, best_t = t;
                }
                carom_mesh_hit h = carom_mesh_shape_cast(&m, carom_xform_identity(), &shapes[s], from, move);
                if (h.hit != (best_t >= 0) || (h.hit && (h.triangle != best_t || h.fraction != best.fraction))) {
                    ++wrong;
                    print_message("trial %d shape %d tree %d: triangle %d at %g, its casts say %d at %g\n",
                                  trial, s, k, h.triangle, (double)h.fraction, best_t, (double)best.fraction);
                }
                kept += !flat(&m, 1);
                carom_mesh_destroy(&m);
            }
        }
    }
    // Most slivers are kept: the test is about them.
    assert_true(kept > trials * 3 * TREE_COUNT * 9 / 10);
    assert_int_equal(wrong, 0);
}

// Regression: a ray's hit normal was the float cross product over the
// square root of its squared length, which overflows for triangles near
// 1e10 in size (normal zero) and underflows near 1e-11 (NaN, or a length
// of 1.01). It is now made in double.
static void test_raycast_normal_at_every_scale(void** state) {
    (void)state;
    for (int e = -22; e <= 11; ++e) {
        float s = (float)pow(10.0, e);
        vec3s v[3] = {{{0, 0, 0}}, {{s, 0, 0}}, {{0, s, 0}}};
        int idx[3] = {0, 1, 2};
        carom_mesh m;
        assert_int_equal(carom_mesh_create(v, 3, idx, 1, NULL, &m), CAROM_OK);
        // Turned, not moved: everything scales with the triangle.
        carom_xform pose = carom_xform_make(v3(0, 0, 0), v3(1, 1, 0), 0.7f);
        carom_ray ray = {carom_xform_point(pose, v3(0.25f * s, 0.25f * s, s)),
                         carom_xform_vector(pose, v3(0, 0, -2.0f * s))};
        carom_mesh_hit h = carom_mesh_raycast(&m, pose, ray, CAROM_RAY_CLOSEST);
        assert_int_equal(h.state, CAROM_DONE);
        if (!h.hit) fail_msg("size 1e%d: no hit", e);
        vec3s want = carom_xform_vector(pose, v3(0, 0, 1));
        for (int k = 0; k < 3; ++k) {
            if (!(fabsf(h.normal.raw[k] - want.raw[k]) <= 1e-5f)) {
                fail_msg("size 1e%d: normal (%g %g %g)", e, (double)h.normal.x, (double)h.normal.y,
                         (double)h.normal.z);
            }
        }
        carom_mesh_destroy(&m);
    }
}

// Regression, three ways the box test lost triangles or found false ones:
// - its normal axis projects products of three coordinates, which in float
//   underflow for meshes below about 1e-15: a triangle 0.23 of its size
//   away from the box was reported;
// - it took the corners from the box's centre in float, so a triangle
//   1e-5 across, 1000 from the centre, rounded to a segment and was missed
//   deep inside the box;
// - it measured the triangle on its normal by the first corner alone, so a
//   sliver, whose float normal is turned by rounding, was missed with all
//   three corners in the box.
// The test now runs in double on every axis, the triangle's range on its
// normal taken over all three corners.
static void test_overlap_box_scales_and_slivers(void** state) {
    (void)state;
    int idx[3] = {0, 1, 2};
    for (int e = -20; e <= 0; ++e) {
        float s = (float)pow(10.0, e);
        vec3s v[3] = {{{s, 0, 0}}, {{0, s, 0}}, {{0, 0, s}}};  // the plane x + y + z = s
        for (int k = 0; k < TREE_COUNT; ++k) {
            carom_mesh m;
            assert_int_equal(carom_mesh_create(v, 3, idx, 1, &TREES[k], &m), CAROM_OK);
            int n = 0;
            carom_aabb apart = {{{0, 0, 0}}, {{0.2f * s, 0.2f * s, 0.2f * s}}};
            carom_aabb touching = {{{0, 0, 0}}, {{0.4f * s, 0.4f * s, 0.4f * s}}};
            carom_mesh_overlap_box(&m, carom_xform_identity(), apart, count_triangle, &n);
            if (n != 0) fail_msg("size 1e%d, tree %d: a triangle 0.23 of its size away found", e, k);
            carom_mesh_overlap_box(&m, carom_xform_identity(), touching, count_triangle, &n);
            if (n != 1) fail_msg("size 1e%d, tree %d: a crossing triangle missed", e, k);
            carom_mesh_destroy(&m);
        }
    }
    vec3s small[3] = {{{1000, 0, 0}}, {{1000, 1e-5f, 0}}, {{1000, 0, 1e-5f}}};
    // 0.12 long, 1.9e-9 wide (found by a fuzzer).
    vec3s sliver[3] = {{{0x1.c865c8p-1f, -0x1.86a6ecp-7f, 0x1.5dae56p-1f}},
                       {{0x1.9a9376p-1f, 0x1.7fa80cp-6f, 0x1.38e51ep-1f}},
                       {{0x1.c912c2p-1f, -0x1.97ba3ap-7f, 0x1.5e3934p-1f}}};
    // And a box far longer than its distance from a triangle, whose near
    // face a float centre and half extent lost (y in [-3.6e8, 5] became
    // [-3.6e8, 0]); a triangle 1e-10 across in a box 1e9 wide, whose
    // corners taken from the box's centre coincide even in double (its
    // edges now come from its own corners).
    vec3s near_face[3] = {{{3, 3, 3}}, {{4, 3, 3}}, {{4, 3.2f, 3}}};
    vec3s speck[3] = {{{0, 0, 0}}, {{1e-10f, 0, 0}}, {{0, 1e-10f, 0}}};
    carom_aabb long_box = {{{2, -3.6e8f, 2}}, {{5, 5, 5}}};
    carom_aabb wide_box = {{{-1e9f, -1e9f, -1e9f}}, {{1e3f, 1e3f, 1e3f}}};
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh a, b;
        assert_int_equal(carom_mesh_create(near_face, 3, idx, 1, &TREES[k], &a), CAROM_OK);
        assert_int_equal(carom_mesh_create(speck, 3, idx, 1, &TREES[k], &b), CAROM_OK);
        assert_int_equal(a.degenerate_count + b.degenerate_count, 0);
        int n = 0;
        carom_mesh_overlap_box(&a, carom_xform_identity(), long_box, count_triangle, &n);
        carom_mesh_overlap_box(&b, carom_xform_identity(), wide_box, count_triangle, &n);
        if (n != 2) fail_msg("tree %d: %d of the two triangles inside long and wide boxes found", k, n);
        carom_mesh_destroy(&a);
        carom_mesh_destroy(&b);
    }
    carom_aabb around_small = {{{-1000, -1000, -1000}}, {{2000, 2000, 2000}}};
    carom_aabb around_sliver = {{{-0x1.16d09cp-5f, -0x1.b7c858p-1f, 0x1.63e494p-4f}},
                                {{0x1.0417c6p+1f, 0x1.6095b2p-1f, 0x1.1678ep+0f}}};
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh a, b;
        assert_int_equal(carom_mesh_create(small, 3, idx, 1, &TREES[k], &a), CAROM_OK);
        assert_int_equal(carom_mesh_create(sliver, 3, idx, 1, &TREES[k], &b), CAROM_OK);
        assert_int_equal(a.degenerate_count + b.degenerate_count, 0);
        int n = 0;
        carom_mesh_overlap_box(&a, carom_xform_identity(), around_small, count_triangle, &n);
        carom_mesh_overlap_box(&b, carom_xform_identity(), around_sliver, count_triangle, &n);
        if (n != 2) fail_msg("tree %d: %d of the two triangles inside their boxes found", k, n);
        carom_mesh_destroy(&a);
        carom_mesh_destroy(&b);
    }
}

// Regression: the leaf test took the box's centre into the mesh's frame,
// R^T (c - p), and turned the corners from it, R (v - R^T (c - p)). The
// float rotation is orthogonal only to about 1e-7, so the box moved by 1e-7
// of its centre's distance from the pose: a unit triangle, turned, inside a
// box 1e-3 larger than it on every side but one, which reaches to 1e9, was
// missed (and so were 993 of 1,001 such boxes). The corners now turn from
// the mesh's origin, R v - (c - p).
static void test_overlap_turned_box_reaching_far(void** state) {
    (void)state;
    vec3s v[3] = {{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}};
    int idx[3] = {0, 1, 2};
    ref_rng rng = {17};
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh m;
        assert_int_equal(carom_mesh_create(v, 3, idx, 1, &TREES[k], &m), CAROM_OK);
        for (int trial = 0; trial < 200; ++trial) {
            vec3s axis = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                            (float)ref_rng_uniform(&rng, -1, 1));
            carom_xform pose = carom_xform_make(v3((float)ref_rng_uniform(&rng, -10, 10), 0, 0), axis,
                                                (float)ref_rng_uniform(&rng, 1e-3, 3));
            vec3s first = carom_xform_point(pose, v[0]);
            carom_aabb box = {glms_vec3_subs(first, 1e-3f), glms_vec3_adds(first, 1e-3f)};
            for (int c = 1; c < 3; ++c) {
                vec3s w = carom_xform_point(pose, v[c]);
                box.min = glms_vec3_minv(box.min, glms_vec3_subs(w, 1e-3f));
                box.max = glms_vec3_maxv(box.max, glms_vec3_adds(w, 1e-3f));
            }
            box.min.raw[trial % 3] = -1e9f;
            int n = 0;
            carom_mesh_query_result r = carom_mesh_overlap_box(&m, pose, box, count_triangle, &n);
            assert_int_equal(r.state, CAROM_DONE);
            if (n != 1) fail_msg("tree %d, trial %d: the triangle inside the box missed", k, trial);
        }
        carom_mesh_destroy(&m);
    }
}

// Regression: the exact triangle test takes the corners from the first
// triangle's first corner; a triangle 1e-5 across piercing one 1500 across
// then lost its shape when it came second (its corners taken from 1000
// away round to a segment), so the pair was found one way round only. The
// smaller triangle now goes first.
static void test_collide_small_through_large(void** state) {
    (void)state;
    vec3s big[3] = {{{1000, -500, -500}}, {{-500, 1000, -500}}, {{-500, -500, 1000}}};
    vec3s tiny[3] = {{{-1e-5f, -1e-5f, -1e-5f}}, {{2e-5f, 1e-5f, 1e-5f}}, {{1e-5f, 2e-5f, 1e-5f}}};
    int idx[3] = {0, 1, 2};
    carom_xform id = carom_xform_identity();
    for (int i = 0; i < TREE_COUNT; ++i) {
        for (int j = 0; j < TREE_COUNT; ++j) {
            carom_mesh a, b;
            assert_int_equal(carom_mesh_create(big, 3, idx, 1, &TREES[i], &a), CAROM_OK);
            assert_int_equal(carom_mesh_create(tiny, 3, idx, 1, &TREES[j], &b), CAROM_OK);
            assert_int_equal(carom_mesh_collide_pairs(&a, id, &b, id, false, NULL, 0).found, 1);
            assert_int_equal(carom_mesh_collide_pairs(&b, id, &a, id, false, NULL, 0).found, 1);
            carom_mesh_destroy(&a);
            carom_mesh_destroy(&b);
        }
    }
}

// Regression: the relative rotation of two poses was the product of their
// matrices, which for two equal poses is the identity only up to rounding
// (entries of 1e-8): a mesh against itself at one pose then met a copy of
// itself turned by that much, and lost most of its pairs with itself (a
// grid at 200 random poses lost 34,251 of 40,000; at the identity, none).
// It now comes from the quaternions' product, whose vector part cancels
// exactly for equal rotations.
static void test_collide_self_at_one_pose(void** state) {
    (void)state;
    mesh_data md = make_soup(60, 1.0, 0.4, 11);
    ref_rng rng = {31};
    for (int k = 0; k < TREE_COUNT; ++k) {
        carom_mesh m = build_tree(&md, TREES[k]);
        for (int trial = 0; trial < 20; ++trial) {
            carom_xform pose = random_pose(&rng, 5.0);
            carom_mesh_query_result r = carom_mesh_collide_pairs(&m, pose, &m, pose, false, NULL, 0);
            assert_int_equal(r.state, CAROM_DONE);
            // Every triangle of nonzero area meets itself (and its soup
            // neighbours): at least one pair per triangle.
            if (r.found < md.triangle_count - m.degenerate_count) {
                fail_msg("tree %d, pose %d: %d pairs for %d triangles", k, trial, r.found,
                         md.triangle_count - m.degenerate_count);
            }
            pair_set s = {0};
            carom_mesh_collide(&m, pose, &m, pose, collect_pair, &s);
            sort_pairs(&s);
            for (int t = 0; t < md.triangle_count; ++t) {
                if (!flat(&m, t) && !pair_in(&s, (carom_triangle_pair){t, t})) {
                    fail_msg("tree %d, pose %d: triangle %d misses itself", k, trial, t);
                }
            }
            free(s.p);
        }
        carom_mesh_destroy(&m);
    }
    mesh_free(&md);
}

// Queries whose object lies beyond CAROM_MAX_COORDINATE of the mesh's
// origin in the mesh's frame are invalid input (mid.h), though each pose
// and box alone is valid; within a quarter of the limit they never are.
static void test_query_range_in_mesh_frame(void** state) {
    (void)state;
    vec3s v[3] = {{{0, 0, 0}}, {{1, 0, 0}}, {{0, 1, 0}}};
    int idx[3] = {0, 1, 2};
    carom_mesh m;
    assert_int_equal(carom_mesh_create(v, 3, idx, 1, NULL, &m), CAROM_OK);
    carom_shape ball = carom_sphere(1.0f);
    for (int quarter = 0; quarter < 2; ++quarter) {
        float x = quarter ? 0.25f * CAROM_MAX_COORDINATE : 0.6f * CAROM_MAX_COORDINATE;
        carom_xform pose = carom_xform_make(v3(-x, -x, -x), v3(1, 1, 1), 2.0f);
        carom_aabb box = {{{x - 1, x - 1, x - 1}}, {{x, x, x}}};
        carom_ray ray = {{{x, x, x}}, {{0, 0, -2}}};
        carom_query_state want = quarter ? CAROM_DONE : CAROM_INVALID_INPUT;
        int n = 0;
        assert_int_equal(carom_mesh_overlap_box(&m, pose, box, count_triangle, &n).state, want);
        assert_int_equal(carom_mesh_raycast(&m, pose, ray, CAROM_RAY_CLOSEST).state, want);
        assert_int_equal(carom_mesh_shape_cast(&m, pose, &ball, at(x, x, x), v3(0, 0, 1)).state, want);
        assert_int_equal(n, 0);
    }
    carom_mesh_destroy(&m);
}

int main(void) {
    // CAROM_TEST_FILTER=pattern runs only the matching tests.
    if (getenv("CAROM_TEST_FILTER")) cmocka_set_test_filter(getenv("CAROM_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collide_analytic),
        cmocka_unit_test(test_collide_crossing_segments),
        cmocka_unit_test(test_leaf_culls_agree_with_exact),
        cmocka_unit_test(test_collide_coplanar_at_every_scale),
        cmocka_unit_test(test_collide_soups),
        cmocka_unit_test(test_collide_leaf_sizes),
        cmocka_unit_test(test_collide_slabs_part_parallel_leaves),
        cmocka_unit_test(test_collide_slivers),
        cmocka_unit_test(test_collide_sliver_planes),
        cmocka_unit_test(test_leaf_test_pole_fans),
        cmocka_unit_test(test_collide_real_meshes),
        cmocka_unit_test(test_first_hit_over_random_poses),
        cmocka_unit_test(test_collide_house_and_terrain),
        cmocka_unit_test(test_raycast_analytic),
        cmocka_unit_test(test_raycast_tiny_triangles),
        cmocka_unit_test(test_raycast_meshes),
        cmocka_unit_test(test_overlap_box_meshes),
        cmocka_unit_test(test_refit_equals_rebuild),
        cmocka_unit_test(test_shape_cast_analytic),
        cmocka_unit_test(test_shape_cast_meshes),
        cmocka_unit_test(test_shape_cast_bad_input),
        cmocka_unit_test(test_bad_query_input),
        cmocka_unit_test(test_far_from_origin),
        cmocka_unit_test(test_shape_cast_slivers),
        cmocka_unit_test(test_raycast_normal_at_every_scale),
        cmocka_unit_test(test_overlap_box_scales_and_slivers),
        cmocka_unit_test(test_overlap_turned_box_reaching_far),
        cmocka_unit_test(test_collide_small_through_large),
        cmocka_unit_test(test_collide_self_at_one_pose),
        cmocka_unit_test(test_query_range_in_mesh_frame),
    };
    return cmocka_run_group_tests(tests, NULL, free_cache);
}
