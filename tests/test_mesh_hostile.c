// Hostile input for the triangle-mesh API (mid.h), from fixed seeds: meshes
// of duplicate and coincident vertices, repeated, collinear and zero-area
// triangles, grids, fans and clusters, at scales from 1e-20 to near
// CAROM_MAX_COORDINATE, and the inputs mid.h rejects. Creates must give
// exactly mid.h's status and a mesh that gives its input back; queries on
// invalid input exactly CAROM_INVALID_INPUT, an otherwise zero result and no
// callback. On valid input every tree kind and leaf size must answer alike,
// a refit as a fresh build does, and some answers are known outright: a box
// around the mesh finds every triangle of nonzero area, a ray or a ball sent
// square onto one hits in time, a mesh meets itself in every such triangle,
// a cast's normal is unit.
//
// A shape cast is cast.h's GJK cast, whose accuracy narrow.h promises for
// sizes and distances from about 1e-12 to 1e11 only: casts are held to it
// (unit normals, balls hitting in time) within that range, while what mid.h
// promises of its own is checked at every scale. CAROM_TEST_LIGHT=1 (the
// valgrind pass of scripts/test.sh) asks fewer random queries and refits at
// every other scale.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carom/carom.h"
#include "mesh_reference.h"
#include "reference.h"
#include "test_poses.h"

static bool light(void) {
    const char* e = getenv("CAROM_TEST_LIGHT");
    return e && *e && strcmp(e, "0") != 0;
}

// The case under way, named in every failure: its seed, layout and scale
// reproduce it.
static char g_case[160];

#define check(cond)                                             \
    do {                                                        \
        if (!(cond)) fail_msg("%s: failed: %s", g_case, #cond); \
    } while (0)
#define check_equal(got, want)                                                              \
    do {                                                                                    \
        const long long got_ = (got), want_ = (want);                                       \
        if (got_ != want_) fail_msg("%s: %s is %lld, not %lld", g_case, #got, got_, want_); \
    } while (0)

static int below(ref_rng* rng, int n) {
    return (int)(ref_rng_next(rng) % (unsigned long long)n);
}

static bool one_in(ref_rng* rng, int n) {
    return below(rng, n) == 0;
}

static double signed_unit(ref_rng* rng) {
    return ref_rng_uniform(rng, -1.0, 1.0);
}

static vec3s xyz(double x, double y, double z) {
    return (vec3s){{(float)x, (float)y, (float)z}};
}

// b - a, in double, rounded once.
static vec3s minus(vec3s b, vec3s a) {
    return xyz((double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z);
}

static double length3(vec3s v) {
    return sqrt((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z);
}

// A point within `r` of `c` on each axis.
static vec3s point_about(vec3s c, double r, ref_rng* rng) {
    double p[3];
    for (int k = 0; k < 3; ++k) p[k] = c.raw[k] + r * signed_unit(rng);
    return xyz(p[0], p[1], p[2]);
}

// narrow.h's range: a cast is held to GJK's accuracy only where the sizes
// and distances of its sweep lie within it.
static bool gjk_promises(double smallest, double largest) {
    return smallest >= 1e-12 && largest <= 1e11;
}

// --- hostile meshes ---------------------------------------------------------------

enum { MAX_VERTICES = 1200, MAX_TRIANGLES = 800 };

// A mesh as a caller hands it over, and what the test knows of it.
typedef struct mesh_input {
    vec3s v[MAX_VERTICES];
    int idx[3 * MAX_TRIANGLES];
    bool zero[MAX_TRIANGLES];  // triangle t has zero area
    int nv, nt, zero_count;
    double scale;  // the size of its features: queries are made to match
    int finest;    // log2 of its smallest feature
} mesh_input;

static mesh_input g_in, g_moved;

static vec3s corner(const mesh_input* in, int t, int k) {
    return in->v[in->idx[3 * t + k]];
}

// The largest coordinate of triangle t.
static double reach_of(const mesh_input* in, int t) {
    double r = 0.0;
    for (int i = 0; i < 9; ++i) r = fmax(r, fabs(corner(in, t, i / 3).raw[i % 3]));
    return r;
}

// The reference decides zero area exactly, mid.h in float. They agree here:
// zero-area triangles are exactly so (repeated or coincident corners,
// corners on a line along an axis or on an exactly representable one), the
// others far from collinear and no smaller than 2^-66, where their corners'
// products still have 17 bits in float.
static void note_zero_areas(mesh_input* in) {
    in->zero_count = 0;
    for (int t = 0; t < in->nt; ++t) {
        in->zero[t] = ref_mesh_triangle_degenerate((float(*)[3])in->v, (int(*)[3])in->idx, t);
        in->zero_count += in->zero[t];
    }
}

static int add_vertex(mesh_input* in, vec3s p) {
    assert_true(in->nv < MAX_VERTICES);
    in->v[in->nv] = p;
    return in->nv++;
}

static void add_triangle(mesh_input* in, int a, int b, int c) {
    assert_true(in->nt < MAX_TRIANGLES);
    int* t = &in->idx[3 * in->nt++];
    t[0] = a, t[1] = b, t[2] = c;
}

// Random triangles about random centres, some corners shared with earlier
// vertices or copied from them, some triangles repeated as they are or
// reversed, some with a corner repeated.
static void make_soup(mesh_input* in, double s, double o, ref_rng* rng) {
    for (int t = 0, n = 40 + below(rng, 160); t < n; ++t) {
        const vec3s centre = point_about(xyz(o, o, o), s, rng);
        int c[3];
        for (int k = 0; k < 3; ++k) {
            const int choice = in->nv > 0 ? below(rng, 10) : 9;
            const vec3s p = point_about(centre, 0.2 * s, rng);
            c[k] = choice == 0   ? below(rng, in->nv)
                   : choice == 1 ? add_vertex(in, in->v[below(rng, in->nv)])
                                 : add_vertex(in, p);
        }
        if (one_in(rng, 12)) c[2] = c[below(rng, 2)];
        add_triangle(in, c[0], c[1], c[2]);
        if (one_in(rng, 10)) add_triangle(in, c[0], c[1], c[2]);
        if (one_in(rng, 10)) add_triangle(in, c[0], c[2], c[1]);
    }
}

// A corrugated sheet: rows alternately at two heights, half the squares on
// copies of their corners (no shared edges); then triangles along a row
// (collinear) and on one corner thrice.
static void make_grid(mesh_input* in, double s, double o, ref_rng* rng) {
    const int n = 4 + below(rng, 10), first = in->nv;
    for (int i = 0; i < (n + 1) * (n + 1); ++i) {
        const int x = i % (n + 1), y = i / (n + 1);
        add_vertex(
            in, xyz(o + s * (2.0 * x / n - 1), o + s * (2.0 * y / n - 1), o + 0.25 * s * (y % 2)));
    }
    for (int i = 0; i < n * n; ++i) {
        int a = first + i / n * (n + 1) + i % n, b = a + 1, c = a + n + 1, d = c + 1;
        if (one_in(rng, 2)) {
            a = add_vertex(in, in->v[a]), b = add_vertex(in, in->v[b]);
            c = add_vertex(in, in->v[c]), d = add_vertex(in, in->v[d]);
        }
        add_triangle(in, a, b, d);
        add_triangle(in, a, d, c);
    }
    for (int r = 0; r < n; ++r) {
        const int a = first + below(rng, n + 1) * (n + 1) + below(rng, n - 1);
        const int v = first + below(rng, (n + 1) * (n + 1));
        add_triangle(in, a, a + 1, a + 2);
        add_triangle(in, v, v, v);
    }
}

// Three fans about one centre: a ring with repeated corners, one half as
// wide in its plane, one square to both. Odd rings: two opposite corners
// would make a triangle collinear but for rounding.
static void make_fans(mesh_input* in, double s, double o, ref_rng* rng) {
    const int centre = add_vertex(in, xyz(o, o, o));
    for (int fan = 0; fan < 3; ++fan) {
        const int n = 3 + 2 * below(rng, 23), first = in->nv;
        const double radius = fan == 1 ? 0.5 * s : s;
        for (int i = 0; i < n; ++i) {
            const double x = radius * cos(6.283185307179586 * i / n);
            const double y = radius * sin(6.283185307179586 * i / n);
            if (i > 0 && one_in(rng, 6)) {
                add_vertex(in, in->v[in->nv - 1]);
            } else {
                add_vertex(in, xyz(o + x, fan == 2 ? o : o + y, fan == 2 ? o + y : o));
            }
        }
        for (int i = 0; i < n; ++i) add_triangle(in, centre, first + i, first + (i + 1) % n);
    }
}

// Triangles each half the size of the last and half as far from a corner,
// so that every midpoint split peels one off; then one triangle 30 times on
// the same indices and 30 times on copies of them.
static void make_cluster(mesh_input* in, double s, double o, int levels) {
    for (int t = 0; t < levels; ++t) {
        const double x = ldexp(s, -t), h = 0.5 * x;
        add_triangle(in, add_vertex(in, xyz(o + x, o, o)), add_vertex(in, xyz(o + x + h, o, o)),
                     add_vertex(in, xyz(o + x, o + h, o + 0.25 * h)));
    }
    const int a = add_vertex(in, xyz(o - s, o, o)), b = add_vertex(in, xyz(o, o - s, o));
    const int c = add_vertex(in, xyz(o, o, o - s));
    for (int t = 0; t < 30; ++t) add_triangle(in, a, b, c);
    for (int t = 0; t < 30; ++t) {
        add_triangle(in, add_vertex(in, in->v[a]), add_vertex(in, in->v[b]),
                     add_vertex(in, in->v[c]));
    }
}

// Only zero-area triangles: on lines along the axes (lines whatever the
// rounding), on a slanted line whose points are exact (without an offset),
// and on one point.
static void make_degenerate(mesh_input* in, double s, double o, ref_rng* rng) {
    for (int line = 0; line < 5; ++line) {
        const int first = in->nv;
        for (int i = 0; i < 12; ++i) {
            const double k = s * (i - 6) / 8.0;
            double p[3] = {o + 0.5 * s * (line % 3), o - 0.25 * s, o};
            if (line < 3) p[line] += k;
            if (line == 3 && o == 0.0) p[0] = k, p[1] = 2 * k, p[2] = -3 * k;
            add_vertex(in, xyz(p[0], p[1], p[2]));
        }
        for (int t = 0; t < 12; ++t) {
            add_triangle(in, first + below(rng, 12), first + below(rng, 12),
                         first + below(rng, 12));
        }
    }
}

enum { SOUP, GRID, FANS, CLUSTER, DEGENERATE, LAYOUT_COUNT };
static const char* const LAYOUT_NAMES[] = {"soup", "grid", "fans", "cluster", "degenerate"};

// Feature sizes (powers of two, so that grids and lines are exact) and where
// the mesh sits: from 1.4e-20 to 2.7e11, the last reaching 8.2e11 from the
// origin; 4096 at 6.9e10, where floats are 8192 apart, rounds most corners
// onto each other.
static const struct {
    int exponent;
    double offset;
} SCALES[] = {{-66, 0.0},   {-40, 0x1p-38}, {-12, 0.0},    {0, 3.0},
              {12, 0x1p36}, {24, 0.0},      {33, -0x1p34}, {38, 0x1p39}};
#define SCALE_COUNT ((int)(sizeof SCALES / sizeof *SCALES))

// A hostile but valid mesh. A third of the time it also gets vertices at the
// limit itself, unused (they stretch the bounds, and with them every query's
// slack), and half of those a triangle spanning the world.
static void make_mesh(mesh_input* in, int layout, int scale, ref_rng* rng) {
    const int e = SCALES[scale].exponent;
    const double s = ldexp(1.0, e), o = SCALES[scale].offset, l = CAROM_MAX_COORDINATE;
    in->nv = in->nt = 0;
    in->scale = s;
    in->finest = e - 6;
    switch (layout) {
        case SOUP: make_soup(in, s, o, rng); break;
        case GRID: make_grid(in, s, o, rng); break;
        case FANS: make_fans(in, s, o, rng); break;
        case CLUSTER:  // down to 2^-40 of s, but never below 2^-66
            in->finest = e - (e + 66 < 40 ? e + 67 : 41);
            make_cluster(in, s, o, e - in->finest);
            break;
        default: make_degenerate(in, s, o, rng); break;
    }
    if (one_in(rng, 3)) {
        const int a = add_vertex(in, xyz(l, -l, l)), b = add_vertex(in, xyz(-l, l, -l));
        if (one_in(rng, 2)) add_triangle(in, a, b, add_vertex(in, xyz(l, l, -l)));
    }
    note_zero_areas(in);
}

static void name_case(const char* what, unsigned long long seed, int layout, int scale) {
    snprintf(g_case, sizeof g_case, "%s, seed %llu, %s at 2^%d (offset %g)", what, seed,
             LAYOUT_NAMES[layout], SCALES[scale].exponent, SCALES[scale].offset);
}

// --- create -----------------------------------------------------------------------

static bool is_zeroed(const carom_mesh* m) {
    static const carom_mesh zero;
    return memcmp(m, &zero, sizeof zero) == 0;
}

// A created mesh gives its input back: counts, tree kind, zero-area
// triangles, a depth within the cap, the box of every vertex (used or not)
// and each triangle's corners bit for bit; other indices give zero corners.
static void check_mesh_reports(const carom_mesh* m, const mesh_input* in, carom_tree_kind kind) {
    check(m->vertex_count == in->nv && m->triangle_count == in->nt && m->tree == kind);
    check_equal(m->degenerate_count, in->zero_count);
    check(m->depth >= 0 && m->depth <= CAROM_MESH_MAX_DEPTH && m->data != NULL);
    for (int k = 0; k < 3; ++k) {
        float lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < in->nv; ++i)
            lo = fminf(lo, in->v[i].raw[k]), hi = fmaxf(hi, in->v[i].raw[k]);
        check(m->bounds.min.raw[k] == lo && m->bounds.max.raw[k] == hi);
    }
    const int outside[] = {-1, in->nt, INT_MIN, INT_MAX};
    for (int t = -4; t < in->nt; ++t) {
        const carom_mesh_corners none = {0}, c = carom_mesh_triangle(m, t < 0 ? outside[t + 4] : t);
        const carom_mesh_corners want =
            t < 0 ? none
                  : (carom_mesh_corners){corner(in, t, 0), corner(in, t, 1), corner(in, t, 2)};
        check(memcmp(&c, &want, sizeof c) == 0);
    }
}

// Creates `in` with `desc` from copies of its arrays, which are then
// scribbled over: the mesh must have made its own copies.
static carom_mesh build(const mesh_input* in, carom_mesh_desc desc) {
    const size_t vertex_bytes = sizeof(vec3s) * (size_t)in->nv,
                 index_bytes = sizeof(int) * 3 * (size_t)in->nt;
    vec3s* v = memcpy(malloc(vertex_bytes), in->v, vertex_bytes);
    int* idx = memcpy(malloc(index_bytes), in->idx, index_bytes);
    carom_mesh m;
    memset(&m, 0xab, sizeof m);
    check_equal(carom_mesh_create(v, in->nv, idx, in->nt, &desc, &m), CAROM_OK);
    free(memset(v, 0xff, vertex_bytes));
    free(memset(idx, 0x7f, index_bytes));
    return m;
}

// Coordinates no input may hold: NaN, the infinities, the float just past
// the limit, and beyond it by far.
enum { BAD_COORDINATE_COUNT = 6 };
static float bad_coordinate(int i) {
    const float bad[BAD_COORDINATE_COUNT] = {
        NAN, INFINITY, -INFINITY, nextafterf(CAROM_MAX_COORDINATE, INFINITY), -2e12f, 3e38f};
    return bad[i % BAD_COORDINATE_COUNT];
}

// The ways a create can be wrong, each in several variants.
enum {
    BAD_VERTEX,
    BAD_INDEX,
    BAD_VERTEX_COUNT,
    BAD_TRIANGLE_COUNT,
    NULL_ARRAY,
    BAD_DESC,
    NULL_OUT,
    TOO_MANY_TRIANGLES,
    FLAW_COUNT
};

// Creates `in` with one flaw, the `variant`th of its kind: the status must
// be exactly mid.h's, `*out` zeroed, and destroying it (twice) harmless.
static void check_flawed_create(mesh_input* in, int flaw, int variant, ref_rng* rng) {
    const vec3s* vertices = in->v;
    const int* indices = in->idx;
    int nv = in->nv, nt = in->nt;
    carom_mesh_desc desc = {(carom_tree_kind)below(rng, 3), below(rng, 17)};
    const int v = below(rng, nv), i = below(rng, 3 * nt), k = below(rng, 3);
    const vec3s kept_vertex = in->v[v];
    const int kept_index = in->idx[i], bad_counts[] = {0, -1, INT_MIN};
    const int bad_indices[] = {nv, -1, INT_MIN, INT_MAX, nv + 1000};
    const int bad_leaves[] = {17, -1, INT_MAX, INT_MIN, 1000};
    carom_status want = CAROM_ERR_INVALID_ARG;
    switch (flaw) {
        case BAD_VERTEX: in->v[v].raw[k] = bad_coordinate(variant); break;
        case BAD_INDEX: in->idx[i] = bad_indices[variant % 5]; break;
        case BAD_VERTEX_COUNT: nv = bad_counts[variant % 3]; break;
        case BAD_TRIANGLE_COUNT: nt = bad_counts[variant % 3]; break;
        case NULL_ARRAY:  // either, or both with no triangles and maybe no vertices
            if (variant % 4 != 1) vertices = NULL;
            if (variant % 4 != 0) indices = NULL;
            if (variant % 4 >= 2) nt = 0, nv = variant % 4 == 3 ? 0 : nv;
            break;
        case BAD_DESC:
            if (variant % 2) desc.leaf_size = bad_leaves[below(rng, 5)];
            if (variant % 2 == 0) desc.tree = (carom_tree_kind)(one_in(rng, 2) ? 3 : -1);
            break;
        case NULL_OUT: break;
        default:  // only the count is read: the status comes before any index
            nt = variant % 2 ? CAROM_MESH_MAX_TRIANGLES + 1 : INT_MAX;
            want = CAROM_ERR_CAPACITY;
            break;
    }
    carom_mesh m;
    memset(&m, 0xab, sizeof m);
    check_equal(carom_mesh_create(vertices, nv, indices, nt, &desc, flaw == NULL_OUT ? NULL : &m),
                want);
    if (flaw != NULL_OUT) {
        check(is_zeroed(&m));
        carom_mesh_destroy(&m);
        carom_mesh_destroy(&m);
    }
    in->v[v] = kept_vertex;
    in->idx[i] = kept_index;
}

// Every layout at every scale, twice, in every tree kind with leaves of the
// default size, of one, of sixteen and one between, and with no
// description: each mesh gives its input back and a destroyed one is zeroed.
// Then every flaw mid.h names, in several variants.
static void test_create_on_hostile_input(void** state) {
    (void)state;
    for (unsigned long long seed = 0; seed < 2 * LAYOUT_COUNT * SCALE_COUNT; ++seed) {
        const int layout = (int)(seed % LAYOUT_COUNT),
                  scale = (int)(seed / LAYOUT_COUNT % SCALE_COUNT);
        ref_rng rng = {seed};
        make_mesh(&g_in, layout, scale, &rng);
        name_case("create", seed, layout, scale);
        for (int kind = 0; kind < 3; ++kind) {
            const int leaves[] = {0, 1, 16, 2 + below(&rng, 14)};
            for (int l = 0; l < 4; ++l) {
                carom_mesh m = build(&g_in, (carom_mesh_desc){(carom_tree_kind)kind, leaves[l]});
                check_mesh_reports(&m, &g_in, (carom_tree_kind)kind);
                carom_mesh_destroy(&m);
                check(is_zeroed(&m));
            }
        }
        carom_mesh m;
        check_equal(carom_mesh_create(g_in.v, g_in.nv, g_in.idx, g_in.nt, NULL, &m), CAROM_OK);
        check_mesh_reports(&m, &g_in, CAROM_TREE_AABB_SAH);
        carom_mesh_destroy(&m);
        for (int f = 0; f < 6 * FLAW_COUNT; ++f)
            check_flawed_create(&g_in, f % FLAW_COUNT, f / FLAW_COUNT, &rng);
    }
    carom_mesh_destroy(NULL);
}

// --- results ----------------------------------------------------------------------

// Room for one more element in a growing array.
static void* room(void* p, int n, int* cap, size_t size) {
    if (n < *cap) return p;
    *cap = *cap ? 2 * *cap : 64;
    return realloc(p, size * (size_t)*cap);
}

// What a query reported: pairs, or triangles as pairs {t, 0}.
typedef struct found {
    carom_triangle_pair* p;
    int n, cap;
} found;

static bool collect_pair(void* user, carom_triangle_pair pair) {
    found* f = user;
    f->p = room(f->p, f->n, &f->cap, sizeof *f->p);
    f->p[f->n++] = pair;
    return true;
}

static bool collect_triangle(void* user, int t) {
    return collect_pair(user, (carom_triangle_pair){t, 0});
}

static int pair_order(const void* x, const void* y) {
    const carom_triangle_pair *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

// Sorts the results; each must name triangles of nonzero area, once.
static void check_found(found* f, const mesh_input* in, bool pairs) {
    if (f->n > 1) qsort(f->p, (size_t)f->n, sizeof *f->p, pair_order);
    for (int i = 0; i < f->n; ++i) {
        const carom_triangle_pair p = f->p[i];
        check(p.a >= 0 && p.a < in->nt && !in->zero[p.a]);
        check(!pairs || (p.b >= 0 && p.b < in->nt && !in->zero[p.b]));
        check(i == 0 || pair_order(&f->p[i - 1], &p) != 0);
    }
}

// Counts the calls, and returns `go_on`.
typedef struct calls {
    int n;
    bool go_on;
} calls;

static bool count_triangle(void* user, int t) {
    (void)t;
    calls* c = user;
    ++c->n;
    return c->go_on;
}

static bool count_pair(void* user, carom_triangle_pair p) {
    (void)p;
    return count_triangle(user, 0);
}

// --- valid queries near a mesh ----------------------------------------------------

// Every coordinate of a valid query stays within a fifth of the limit: mid.h
// promises a quarter is never out of range, and the rest leaves room for the
// shapes a cast sweeps.
static float within_fifth(double x) {
    const double f = 0.2 * CAROM_MAX_COORDINATE;
    return (float)fmax(-f, fmin(f, x));
}

// The pose with its quaternion scaled by `f`, off unit length.
static carom_xform stretched(carom_xform xf, float f) {
    for (int k = 0; k < 4; ++k) xf.q.raw[k] *= f;
    return xf;
}

// A pose within twice the mesh's scale of the origin, turned three times in
// four; one time in five its quaternion off unit length by 0.8%, within
// CAROM_QUAT_TOLERANCE.
static carom_xform query_pose(const mesh_input* in, ref_rng* rng) {
    carom_xform xf = one_in(rng, 4) ? carom_xform_identity() : random_pose(rng, 1.0f);
    for (int k = 0; k < 3; ++k) xf.p.raw[k] = within_fifth(2.0 * in->scale * signed_unit(rng));
    return one_in(rng, 5) ? stretched(xf, sqrtf(one_in(rng, 2) ? 1.008f : 0.992f)) : xf;
}

static void to_world(carom_xform pose, const double local[3], double world[3]) {
    double q[4] = {pose.q.x, pose.q.y, pose.q.z, pose.q.w}, rot[3][3];
    ref_quat_to_matrix(q, rot);
    for (int i = 0; i < 3; ++i) {
        world[i] =
            pose.p.raw[i] + rot[i][0] * local[0] + rot[i][1] * local[1] + rot[i][2] * local[2];
    }
}

// A world point within `reach` times the mesh's scale of a corner of one of
// its triangles, the mesh at `pose`.
static vec3s point_near(const mesh_input* in, carom_xform pose, double reach, ref_rng* rng) {
    const vec3s c = corner(in, below(rng, in->nt), below(rng, 3));
    double local[3], world[3];
    for (int k = 0; k < 3; ++k) local[k] = c.raw[k] + reach * in->scale * signed_unit(rng);
    to_world(pose, local, world);
    return xyz(within_fifth(world[0]), within_fifth(world[1]), within_fifth(world[2]));
}

// A box about a point near the mesh, a hundredth of its scale to twice it on
// each axis; one time in eight flat on an axis or a point.
static carom_aabb box_near(const mesh_input* in, carom_xform pose, ref_rng* rng) {
    const vec3s c = point_near(in, pose, 1.0, rng);
    const int flat = below(rng, 8);
    carom_aabb box;
    for (int k = 0; k < 3; ++k) {
        const double h =
            flat == k || flat == 3 ? 0.0 : in->scale * pow(10.0, ref_rng_uniform(rng, -2, 0.3));
        box.min.raw[k] = within_fifth(c.raw[k] - h);
        box.max.raw[k] = within_fifth(c.raw[k] + h);
    }
    return box;
}

// A ray between points near the mesh; one time in eight a zero translation,
// one in eight a subnormal one, one in eight a long one through the mesh.
static carom_ray ray_near(const mesh_input* in, carom_xform pose, ref_rng* rng) {
    const vec3s a = point_near(in, pose, 2.0, rng), b = point_near(in, pose, 1.0, rng);
    carom_ray ray = {a, minus(b, a)};
    const int how = below(rng, 8);
    if (how == 0) ray.translation = xyz(0, 0, 0);
    if (how == 1) ray.translation = xyz(0, 1e-40, one_in(rng, 2) ? -1e-45 : 0);
    for (int k = 0; how == 2 && k < 3; ++k) {
        const double d = (double)b.raw[k] - a.raw[k];
        ray.origin.raw[k] = within_fifth(b.raw[k] - 20.0 * d);
        ray.translation.raw[k] =
            (float)((double)within_fifth(b.raw[k] + 20.0 * d) - ray.origin.raw[k]);
    }
    return ray;
}

// A random cast near the mesh: a ball, a point, a capsule, a box, a
// cylinder, a cone, a triangle or a cube flattened by an affine map, a
// thirtieth to half the mesh's scale across, from within twice that scale of
// a corner to within half of one; one time in eight not moving.
typedef struct cast_query {
    carom_xform pose, start;
    carom_shape shape, child;
    vec3s translation;
    double size;
} cast_query;

static void random_cast(const mesh_input* in, ref_rng* rng, cast_query* c) {
    c->pose = query_pose(in, rng);
    const float d = (float)fmin(in->scale * pow(10.0, ref_rng_uniform(rng, -1.5, -0.3)),
                                0.01 * CAROM_MAX_COORDINATE);
    mat3s flatten = GLMS_MAT3_IDENTITY_INIT;
    flatten.raw[2][2] = 0.0f;
    c->child = carom_box(xyz(d, d, d));
    const carom_shape shapes[] = {
        carom_sphere(d), carom_sphere(0.0f), carom_capsule(xyz(-d, 0, 0), xyz(d, d, 0), 0.3f * d),
        carom_box(xyz(d, 0.5 * d, 0.25 * d)), carom_cylinder(d, 0.5f * d), carom_cone(d, 0.7f * d),
        carom_triangle(xyz(-d, 0, 0), xyz(d, 0, 0), xyz(0, d, 0.2 * d)),
        carom_affine(&c->child, flatten, xyz(0, 0, 0))};
    c->shape = shapes[below(rng, 8)];
    c->size = d;
    c->start = random_pose(rng, 1.0f);
    c->start.p = point_near(in, c->pose, 2.0, rng);
    c->translation = minus(point_near(in, c->pose, 0.5, rng), c->start.p);
    if (one_in(rng, 8)) c->translation = xyz(0, 0, 0);
}

// --- answers, and every tree giving the same ones ---------------------------------

// A mesh's answers to a stream of random queries, as numbers to compare
// across meshes. WILD, from a cast stopped at its iteration cap, compares
// equal to anything: mid.h lets such a cast skip a triangle.
typedef struct answers {
    long long* v;
    int n, cap;
} answers;
#define WILD LLONG_MIN

// Casts made, and those that ended within their iteration caps.
static int g_casts, g_casts_done;

static void note(answers* a, long long x) {
    a->v = room(a->v, a->n, &a->cap, sizeof *a->v);
    a->v[a->n++] = x;
}

// Notes a query's results, sorted and checked, and frees them.
static void note_found(answers* a, found* f, const mesh_input* in, bool pairs) {
    check_found(f, in, pairs);
    note(a, f->n);
    for (int i = 0; i < f->n; ++i) note(a, (long long)f->p[i].a * MAX_TRIANGLES + f->p[i].b);
    free(f->p);
}

// A hit names a triangle of nonzero area, at a fraction in [0, 1], with a
// finite point and normal; no hit names none.
static void check_hit(const carom_mesh_hit* h, const mesh_input* in) {
    check(h->hit || h->triangle == -1);
    check(!h->hit || (h->triangle >= 0 && h->triangle < in->nt && !in->zero[h->triangle]));
    check(!h->hit || (h->fraction >= 0.0f && h->fraction <= 1.0f));
    check(isfinite(length3(h->point)) && isfinite(length3(h->normal)));
}

static void note_hit(answers* a, const carom_mesh_hit* h, const mesh_input* in, bool wild) {
    check_hit(h, in);
    uint32_t bits;
    memcpy(&bits, &h->fraction, sizeof bits);
    note(a, wild ? WILD : h->hit);
    note(a, wild ? WILD : h->triangle);
    note(a, wild ? WILD : bits);
}

// A box's triangles; a callback that stops is obeyed at once.
static void answer_box(const carom_mesh* m, const mesh_input* in, ref_rng* rng, answers* a) {
    const carom_xform pose = query_pose(in, rng);
    const carom_aabb box = box_near(in, pose, rng);
    found f = {0};
    calls c = {0, false};
    const carom_mesh_query_result r = carom_mesh_overlap_box(m, pose, box, collect_triangle, &f);
    const carom_mesh_query_result s = carom_mesh_overlap_box(m, pose, box, count_triangle, &c);
    check(r.state == CAROM_DONE && r.found == f.n && !r.stopped && r.found <= r.triangle_tests);
    check(s.state == CAROM_DONE && c.n == (f.n > 0) && s.found == c.n && s.stopped == (c.n > 0));
    note_found(a, &f, in, false);
}

// A ray's closest hit, with a unit normal facing the ray's origin; an
// any-hit hits as well, no nearer; a ray that does not move never hits.
static void answer_ray(const carom_mesh* m, const mesh_input* in, ref_rng* rng, answers* a) {
    const carom_xform pose = query_pose(in, rng);
    const carom_ray ray = ray_near(in, pose, rng);
    const carom_mesh_hit h = carom_mesh_raycast(m, pose, ray, CAROM_RAY_CLOSEST);
    const carom_mesh_hit any = carom_mesh_raycast(m, pose, ray, CAROM_RAY_ANY);
    const double length = length3(ray.translation);
    check(h.state == CAROM_DONE && any.state == CAROM_DONE && any.hit == h.hit);
    check(!h.hit || (length > 0.0 && any.fraction >= h.fraction));
    check(!h.hit || fabs(length3(h.normal) - 1.0) <= 1e-3);
    const vec3s d = ray.translation, n = h.normal;
    check(!h.hit || (double)n.x * d.x + (double)n.y * d.y + (double)n.z * d.z <= 1e-4 * length);
    check_hit(&any, in);
    note_hit(a, &h, in, false);
}

// A cast's first contact. Its normal is unit, or zero at fraction 0 where
// the cores overlap, wherever narrow.h's range holds the cast: its shape no
// smaller than 1e-12, the triangle it hits, its start and the mesh's pose
// within 1e11 of the origin.
static void answer_cast(const carom_mesh* m, const mesh_input* in, ref_rng* rng, answers* a) {
    cast_query c;
    random_cast(in, rng, &c);
    const carom_mesh_hit h = carom_mesh_shape_cast(m, c.pose, &c.shape, c.start, c.translation);
    check(h.state == CAROM_DONE || h.state == CAROM_MAX_ITERATIONS);
    ++g_casts, g_casts_done += h.state == CAROM_DONE;
    note_hit(a, &h, in, h.state != CAROM_DONE);
    const double length = length3(h.normal);
    if (!h.hit || !gjk_promises(c.size, reach_of(in, h.triangle) + 4.0 * in->scale)) return;
    if (fabs(length - 1.0) <= 1e-3 || (h.fraction == 0.0f && length == 0.0)) return;
    fail_msg("%s: a cast (shape type %d) hits triangle %d at %g with a normal of length %.6f",
             g_case, c.shape.type, h.triangle, h.fraction, length);
}

// collide_pairs gives collide's pairs in collide's order: all of them, one
// short (counting them all), none into no buffer, or a first hit alone (one
// of collide's pairs, which its own walk order picks), never writing past
// its capacity; and a callback that stops is obeyed at once.
static void check_pair_buffers(const carom_mesh* a, carom_xform pa, const carom_mesh* b,
                               carom_xform pb, const found* order) {
    const carom_triangle_pair guard = {-7, -7};
    const int capacities[] = {order->n, order->n - 1, 0, 1};
    for (int c = 0; c < 4; ++c) {
        const int cap = capacities[c];
        if (cap < 0) continue;
        carom_triangle_pair* buf = malloc(sizeof *buf * (size_t)(cap + 2));
        for (int i = 0; i < cap + 2; ++i) buf[i] = guard;
        const carom_mesh_query_result r =
            carom_mesh_collide_pairs(a, pa, b, pb, c == 3, cap ? buf : NULL, cap);
        check(r.state == CAROM_DONE && r.found == (c == 3 ? order->n > 0 : order->n));
        for (int i = 0; i < cap + 2; ++i) {
            const bool filled = i < cap && i < r.found;
            if (filled && c == 3) {
                bool among = false;
                for (int k = 0; k < order->n; ++k) among |= pair_order(&buf[i], &order->p[k]) == 0;
                check(among);
            } else {
                check(pair_order(&buf[i], filled ? &order->p[i] : &guard) == 0);
            }
        }
        free(buf);
    }
    calls c = {0, false};
    const carom_mesh_query_result r = carom_mesh_collide(a, pa, b, pb, count_pair, &c);
    check(r.state == CAROM_DONE && c.n == (order->n > 0) && r.found == c.n &&
          r.stopped == (c.n > 0));
}

// The second mesh's pose: the first's (every triangle on itself), the
// first's nudged by a twentieth of the scale and turned by 0.01 rad, or
// another.
static carom_xform second_pose(const mesh_input* in, carom_xform first, ref_rng* rng) {
    const int how = below(rng, 3);
    if (how < 2) return how ? query_pose(in, rng) : first;
    const carom_xform turn = carom_xform_make(xyz(0, 0, 0), xyz(signed_unit(rng), 1, 0.5), 0.01f);
    carom_xform xf = {point_about(first.p, 0.05 * in->scale, rng), glms_quat_mul(first.q, turn.q)};
    for (int k = 0; k < 3; ++k) xf.p.raw[k] = within_fifth(xf.p.raw[k]);
    return xf;
}

// The pairs of `m` with `partner` (which may be `m`), both ways round.
static void answer_pairs(const carom_mesh* m, const carom_mesh* partner, const mesh_input* in,
                         ref_rng* rng, bool buffers, answers* a) {
    const carom_xform pa = query_pose(in, rng), pb = second_pose(in, pa, rng);
    for (int way = 0; way < 2; ++way) {
        const carom_mesh *first = way ? partner : m, *second = way ? m : partner;
        found f = {0};
        const carom_mesh_query_result r =
            carom_mesh_collide(first, pa, second, pb, collect_pair, &f);
        check(r.state == CAROM_DONE && r.found == f.n && !r.stopped);
        if (buffers && way == 0) check_pair_buffers(first, pa, second, pb, &f);
        note_found(a, &f, in, true);
    }
}

// A mesh's answers to random boxes, rays, casts and pairs near `in`, each
// checked as it comes: per round two boxes, three rays and a cast, and a
// pair query every third round (up to two; mesh against mesh costs most).
static void answers_of(const carom_mesh* m, const carom_mesh* partner, const mesh_input* in,
                       unsigned long long seed, int rounds, answers* a) {
    ref_rng rng = {seed};
    for (int i = 0; i < 2 * rounds; ++i) answer_box(m, in, &rng, a);
    for (int i = 0; i < 3 * rounds; ++i) answer_ray(m, in, &rng, a);
    for (int i = 0; i < rounds; ++i) answer_cast(m, in, &rng, a);
    for (int i = 0; i < rounds / 3 && i < 2; ++i)
        answer_pairs(m, partner, in, &rng, i == 0 && m == partner, a);
}

// Every mesh (one input in different trees; or refits and fresh builds)
// answers as the first does, and meets it in the same pairs.
static void check_meshes_agree(const carom_mesh* meshes, int n, const mesh_input* in,
                               unsigned long long seed) {
    const int rounds = light() ? 3 : 12;
    answers first = {0};
    answers_of(&meshes[0], &meshes[0], in, seed, rounds, &first);
    for (int k = 1; k < n; ++k) {
        answers a = {0};
        answers_of(&meshes[k], &meshes[0], in, seed, rounds, &a);
        for (int i = 0; i < a.n && i < first.n; ++i) {
            if (a.v[i] == first.v[i] || a.v[i] == WILD || first.v[i] == WILD) continue;
            fail_msg("%s: mesh %d's answer %d is %lld, mesh 0's %lld", g_case, k, i, a.v[i],
                     first.v[i]);
        }
        check_equal(a.n, first.n);
        free(a.v);
    }
    free(first.v);
}

// Every tree kind with leaves of the default size, of one, of sixteen and of
// one size between.
enum { TREE_COUNT = 7 };
static void build_every_tree(const mesh_input* in, ref_rng* rng, carom_mesh trees[TREE_COUNT]) {
    const carom_mesh_desc descs[TREE_COUNT] = {
        {CAROM_TREE_AABB_SAH, 0},  {CAROM_TREE_AABB, 1},    {CAROM_TREE_BOXTREE, 0},
        {CAROM_TREE_AABB_SAH, 16}, {CAROM_TREE_BOXTREE, 1}, {CAROM_TREE_AABB, 2 + below(rng, 14)},
        {CAROM_TREE_BOXTREE, 16}};
    for (int k = 0; k < TREE_COUNT; ++k) trees[k] = build(in, descs[k]);
}

typedef void mesh_check_fn(const carom_mesh* trees, int n, const mesh_input* in, ref_rng* rng);

// Runs `check_trees` on every tree of each layout at each scale, the cases
// seeded from `seed` on.
static void for_every_mesh(const char* what, unsigned long long seed, mesh_check_fn* check_trees) {
    for (int layout = 0; layout < LAYOUT_COUNT; ++layout) {
        for (int scale = 0; scale < SCALE_COUNT; ++scale) {
            const unsigned long long case_seed =
                seed + (unsigned long long)(layout * SCALE_COUNT + scale);
            ref_rng rng = {case_seed};
            make_mesh(&g_in, layout, scale, &rng);
            name_case(what, case_seed, layout, scale);
            carom_mesh trees[TREE_COUNT];
            build_every_tree(&g_in, &rng, trees);
            check_trees(trees, TREE_COUNT, &g_in, &rng);
            for (int k = 0; k < TREE_COUNT; ++k) carom_mesh_destroy(&trees[k]);
        }
    }
}

static void check_trees_agree(const carom_mesh* trees, int n, const mesh_input* in, ref_rng* rng) {
    check_meshes_agree(trees, n, in, ref_rng_next(rng));
}

// Every tree kind and leaf size gives the same boxes, rays, casts and pairs
// (with the first tree, either way round) on every hostile mesh: a tree may
// only skip work, never answers. Most casts end within their caps.
static void test_every_tree_answers_alike(void** state) {
    (void)state;
    g_casts = g_casts_done = 0;
    for_every_mesh("trees", 1000, check_trees_agree);
    check(g_casts_done * 4 >= g_casts * 3);
}

// --- invalid query input ----------------------------------------------------------

// One query of each kind, valid until a check spoils a part of it. The
// mesh's pose serves every query; the second mesh and its pose only mesh
// against mesh.
typedef struct query_set {
    const carom_mesh *mesh, *other;
    carom_xform pose, other_pose, start;
    carom_aabb box;
    carom_ray ray;
    const carom_shape* shape;
    vec3s push;
} query_set;

enum { BOX = 1, RAY = 2, CAST = 4, COLLIDE = 8, EVERY = 15 };

static void check_result_rejected(carom_mesh_query_result r, int called, bool rejected) {
    check(rejected ? r.state == CAROM_INVALID_INPUT : r.state != CAROM_INVALID_INPUT);
    check(!rejected || (called == 0 && r.found == 0 && !r.stopped && r.node_tests == 0 &&
                        r.triangle_tests == 0));
}

static void check_hit_rejected(carom_mesh_hit h, bool rejected) {
    check(rejected ? h.state == CAROM_INVALID_INPUT : h.state != CAROM_INVALID_INPUT);
    check(!rejected || (!h.hit && h.triangle == -1 && h.fraction == 0.0f &&
                        length3(h.point) == 0.0 && length3(h.normal) == 0.0));
}

// Asks every query of `q`: those in `rejected` must answer exactly
// CAROM_INVALID_INPUT, with an otherwise zero result, no call and an
// untouched buffer, and the others must not.
static void check_rejects(const query_set* q, int rejected) {
    calls c = {0, true};
    carom_mesh_query_result r =
        carom_mesh_overlap_box(q->mesh, q->pose, q->box, count_triangle, &c);
    check_result_rejected(r, c.n, rejected & BOX);
    for (int mode = CAROM_RAY_CLOSEST; mode <= CAROM_RAY_ANY; ++mode) {
        check_hit_rejected(carom_mesh_raycast(q->mesh, q->pose, q->ray, (carom_ray_mode)mode),
                           rejected & RAY);
    }
    check_hit_rejected(carom_mesh_shape_cast(q->mesh, q->pose, q->shape, q->start, q->push),
                       rejected & CAST);
    c.n = 0;
    r = carom_mesh_collide(q->mesh, q->pose, q->other, q->other_pose, count_pair, &c);
    check_result_rejected(r, c.n, rejected & COLLIDE);
    carom_triangle_pair buf[2] = {{-7, -7}, {-7, -7}};
    r = carom_mesh_collide_pairs(q->mesh, q->pose, q->other, q->other_pose, false, buf, 2);
    check_result_rejected(r, 0, rejected & COLLIDE);
    check(!(rejected & COLLIDE) ||
          (buf[0].a == -7 && buf[0].b == -7 && buf[1].a == -7 && buf[1].b == -7));
}

static int nan_support(const void* user, vec3s direction, vec3s* out) {
    (void)user, (void)direction;
    *out = xyz(NAN, 0, 0);
    return -1;
}

// Shapes no query accepts: sizes negative, zero where they must be
// positive, NaN, infinite or too large; corners not finite; an unknown type;
// missing children; a shape nested in itself or too deep; a support mapping
// giving NaN.
static void check_bad_shapes_rejected(const query_set* q) {
    const vec3s o = xyz(0, 0, 0);
    const mat3s id = GLMS_MAT3_IDENTITY_INIT;
    mat3s nan_map = id;
    nan_map.raw[0][1] = NAN;
    carom_shape chain[CAROM_MAX_SHAPE_DEPTH + 2], loop = carom_sphere(1.0f), unknown = loop;
    chain[0] = loop;
    for (int k = 1; k < CAROM_MAX_SHAPE_DEPTH + 2; ++k)
        chain[k] = carom_affine(&chain[k - 1], id, o);
    loop = carom_affine(&loop, id, o);
    unknown.type = CAROM_SHAPE_TYPE_COUNT;
    const carom_shape bad[] = {
        carom_sphere(-1.0f), carom_sphere(NAN), carom_sphere(INFINITY), carom_sphere(2e12f),
        carom_box(xyz(1, 0, 1)), carom_box(xyz(1, -1, 1)), carom_box(xyz(NAN, 1, 1)),
        carom_cylinder(0.0f, 1.0f), carom_cylinder(1.0f, -1.0f), carom_cone(1.0f, 0.0f),
        carom_cone(INFINITY, 1.0f), carom_capsule(xyz(NAN, 0, 0), xyz(1, 0, 0), 0.5f),
        carom_capsule(o, xyz(1, 0, 0), -1e-30f), carom_segment(o, xyz(3e12, 0, 0)),
        carom_triangle(o, xyz(1, 0, 0), xyz(0, INFINITY, 0)), unknown, carom_affine(NULL, id, o),
        carom_affine(&chain[0], nan_map, o), carom_custom(NULL, NULL),
        carom_custom(nan_support, NULL), carom_minkowski_sum(&chain[0], NULL), loop,
        chain[CAROM_MAX_SHAPE_DEPTH + 1]};
    for (size_t s = 0; s < sizeof bad / sizeof *bad; ++s) {
        query_set spoilt = *q;
        spoilt.shape = &bad[s];
        check_rejects(&spoilt, CAST);
    }
}

// Quaternions no pose may have: zero, NaN or infinite parts, off unit length
// beyond CAROM_QUAT_TOLERANCE (|q|^2 of 1.1025, 0.81, 1.0309), and one whose
// square overflows.
static const versors BAD_QUATERNIONS[] = {
    {{0, 0, 0, 0}},    {{NAN, 0, 0, 1}},   {{0, INFINITY, 0, 0}},        {{0, 0, 0, 1.05f}},
    {{0, 0, 0.9f, 0}}, {{1e20f, 0, 0, 0}}, {{0.5f, 0.5f, 0.5f, -0.53f}}, {{0, 0, -INFINITY, 1}}};

// Every query on mesh m (built from `in`), from a valid query near it, with
// one part spoilt at a time; then with parts odd but valid.
static void check_invalid_queries(const carom_mesh* m, const mesh_input* in, ref_rng* rng) {
    static const carom_mesh zeroed;
    const carom_xform id = carom_xform_identity();
    const carom_shape ball = carom_sphere((float)fmin(in->scale, 0.01 * CAROM_MAX_COORDINATE));
    query_set q = {
        .mesh = m, .other = m, .other_pose = id, .shape = &ball, .push = xyz(0, 0, -in->scale)};
    q.pose = query_pose(in, rng);
    q.box = box_near(in, q.pose, rng);
    q.ray = ray_near(in, q.pose, rng);
    q.start = at(0, 0, 0);
    q.start.p = point_near(in, q.pose, 2.0, rng);
    check_rejects(&q, 0);

    // No mesh, or a zeroed one; no callback, shape or pair buffer (or a
    // negative capacity).
    query_set bad = q;
    for (int i = 0; i < 2; ++i) {
        bad = q, bad.mesh = i ? &zeroed : NULL;
        check_rejects(&bad, EVERY);
        bad = q, bad.other = i ? &zeroed : NULL;
        check_rejects(&bad, COLLIDE);
    }
    bad = q, bad.shape = NULL;
    check_rejects(&bad, CAST);
    carom_triangle_pair pair;
    check_result_rejected(carom_mesh_overlap_box(m, q.pose, q.box, NULL, NULL), 0, true);
    check_result_rejected(carom_mesh_collide(m, q.pose, m, id, NULL, NULL), 0, true);
    check_result_rejected(carom_mesh_collide_pairs(m, q.pose, m, id, false, &pair, -1), 0, true);
    check_result_rejected(carom_mesh_collide_pairs(m, q.pose, m, id, false, &pair, INT_MIN), 0,
                          true);
    check_result_rejected(carom_mesh_collide_pairs(m, q.pose, m, id, false, NULL, 3), 0, true);

    // A bad coordinate in each place on each axis, bad quaternions in each
    // pose, boxes inside out by a float's width or by far, bad shapes.
    for (int b = 0; b < BAD_COORDINATE_COUNT * 3; ++b) {
        const int k = b % 3;
        float* places[] = {&bad.pose.p.raw[k],  &bad.other_pose.p.raw[k],   &bad.start.p.raw[k],
                           &bad.box.min.raw[k], &bad.box.max.raw[k],        &bad.ray.origin.raw[k],
                           &bad.push.raw[k],    &bad.ray.translation.raw[k]};
        const int spoils[] = {EVERY, COLLIDE, CAST, BOX, BOX, RAY, CAST, RAY};
        for (int i = 0; i < 8; ++i) {
            bad = q, *places[i] = bad_coordinate(b / 3);
            check_rejects(&bad, spoils[i]);
        }
    }
    for (size_t b = 0; b < sizeof BAD_QUATERNIONS / sizeof *BAD_QUATERNIONS; ++b) {
        versors* places[] = {&bad.pose.q, &bad.other_pose.q, &bad.start.q};
        const int spoils[] = {EVERY, COLLIDE, CAST};
        for (int i = 0; i < 3; ++i) {
            bad = q, *places[i] = BAD_QUATERNIONS[b];
            check_rejects(&bad, spoils[i]);
        }
    }
    for (int k = 0; k < 3; ++k) {
        bad = q, bad.box.min.raw[k] = nextafterf(q.box.max.raw[k], INFINITY);
        check_rejects(&bad, BOX);
        bad.box.min.raw[k] = q.box.max.raw[k];
        bad.box.max.raw[k] = (float)(q.box.max.raw[k] - in->scale - 1e-3 * fabs(q.box.max.raw[k]));
        check_rejects(&bad, BOX);
    }
    check_bad_shapes_rejected(&q);

    // Each pose and part valid, but beyond the limit in the mesh's frame:
    // the mesh at -0.9e12 on every axis, box, ray and shape at +0.9e12 (1.8e12
    // away on some axis of any rotation); a ray whose translation, 0.999e12
    // on every world axis, the mesh's rotation turns onto its x axis
    // (1.73e12); a ball of radius 0.9e12 half the limit away.
    const float f = 0.9f * CAROM_MAX_COORDINATE, g = 0.999f * CAROM_MAX_COORDINATE;
    const float l = CAROM_MAX_COORDINATE;
    bad = q, bad.pose = random_pose(rng, 1.0f), bad.pose.p = xyz(-f, -f, -f);
    bad.box = (carom_aabb){xyz(f - 1, f - 1, f - 1), xyz(f, f, f)};
    bad.ray = (carom_ray){xyz(f, f, f), xyz(0, 0, -1)};
    bad.start.p = xyz(f, f, f);
    check_rejects(&bad, BOX | RAY | CAST);
    const carom_xform onto_x =
        carom_xform_make(xyz(0, 0, 0), xyz(0, -1, 1), acosf(1.0f / sqrtf(3.0f)));
    bad = q, bad.pose = onto_x, bad.ray = (carom_ray){xyz(0, 0, 0), xyz(g, g, g)};
    check_rejects(&bad, RAY);
    const carom_shape huge_ball = carom_sphere(f);
    bad = q, bad.pose = id, bad.shape = &huge_ball, bad.start = at(0.5f * l, 0, 0);
    check_rejects(&bad, CAST);

    // Odd but valid: quaternions off unit length within the tolerance; a
    // point box; a subnormal ray, or one that does not move (and never
    // hits); a ball of radius zero, or a cast that does not move; a box as
    // large as the world; a cast moving 1.73e12 in the mesh's frame (mid.h
    // bounds a cast's translation in the world alone); meshes far apart.
    const carom_shape dot = carom_sphere(0.0f);
    for (int i = 0; i < 2; ++i) {
        bad = q, bad.pose = stretched(random_pose(rng, 0.0f), i ? 0.996f : 1.004f);
        bad.box.max = bad.box.min;
        bad.ray.translation = xyz(i ? 0 : 1e-45, 0, 0);
        bad.push = i ? xyz(0, 0, 0) : bad.push, bad.shape = i ? bad.shape : &dot;
        check_rejects(&bad, 0);
        const carom_mesh_hit h = carom_mesh_raycast(m, bad.pose, bad.ray, CAROM_RAY_ANY);
        check(!i || (!h.hit && h.triangle == -1));
    }
    bad = q, bad.pose = onto_x, bad.push = xyz(g, g, g);
    bad.box = (carom_aabb){xyz(-l, -l, -l), xyz(l, l, l)};
    check_rejects(&bad, 0);
    calls c = {0, true};
    check_equal(carom_mesh_collide(m, at(-l, -l, -l), m, at(l, l, l), count_pair, &c).state,
                CAROM_DONE);
}

// Meshes of every layout at scales across the range, in each tree kind:
// every query on invalid input is rejected exactly (a zeroed mesh, as a
// failed create leaves it, among them), and none on odd but valid input.
static void test_queries_reject_invalid_input(void** state) {
    (void)state;
    for (unsigned long long seed = 0; seed < 3 * LAYOUT_COUNT; ++seed) {
        const int layout = (int)(seed % LAYOUT_COUNT), scale = (int)(seed * 3 % SCALE_COUNT);
        ref_rng rng = {2000 + seed};
        make_mesh(&g_in, layout, scale, &rng);
        name_case("invalid queries", 2000 + seed, layout, scale);
        const carom_tree_kind kind = (carom_tree_kind)(seed / LAYOUT_COUNT % 3);
        carom_mesh m = build(&g_in, (carom_mesh_desc){kind, below(&rng, 17)});
        check_invalid_queries(&m, &g_in, &rng);
        carom_mesh_destroy(&m);
    }
}

// --- refit ------------------------------------------------------------------------

// Gives `to` the triangles of `from` on vertices moved as hostilely as they
// were made: jittered by a fifth of the scale; scattered over it (tangling
// the tree); half of them onto others (zero-area triangles come and go);
// all onto one point; or the whole mesh scaled by a power of two, as far as
// its smallest feature stays at 2^-66 or above and its corners within the
// limit. `from` may be `to`.
static void move_vertices(mesh_input* to, const mesh_input* from, ref_rng* rng) {
    const int how = below(rng, 5);
    double largest = 1e-30;
    for (int i = 0; i < 3 * from->nv; ++i) largest = fmax(largest, fabs(from->v[i / 3].raw[i % 3]));
    const int up = (int)floor(log2(CAROM_MAX_COORDINATE / largest)), down = -66 - from->finest;
    const int power = how == 4 && down < up ? down + below(rng, up - down + 1) : 0;
    for (int i = 0; i < from->nv; ++i) {
        const vec3s v = from->v[i];
        switch (how) {
            case 0: to->v[i] = point_about(v, 0.2 * from->scale, rng); break;
            case 1: to->v[i] = point_about(xyz(0, 0, 0), from->scale, rng); break;
            case 2: to->v[i] = i > 0 && one_in(rng, 2) ? to->v[below(rng, i)] : v; break;
            case 3: to->v[i] = to->v[0]; break;
            default: to->v[i] = xyz(ldexp(v.x, power), ldexp(v.y, power), ldexp(v.z, power)); break;
        }
    }
    if (to != from) memcpy(to->idx, from->idx, sizeof(int) * 3 * (size_t)from->nt);
    to->nv = from->nv, to->nt = from->nt;
    to->scale = ldexp(from->scale, power);
    to->finest = from->finest + power;
    note_zero_areas(to);
}

// Refits that must fail leave the mesh as it was, struct and answers: a bad
// coordinate in any vertex, a wrong count, no vertices, no mesh or a zeroed
// one.
static void check_failed_refits(carom_mesh* m, const mesh_input* in, ref_rng* rng) {
    answers before = {0}, after = {0};
    answers_of(m, m, in, 77, 1, &before);
    const carom_mesh kept = *m;
    vec3s* v = malloc(sizeof(vec3s) * (size_t)(in->nv + 1));
    for (int b = 0; b < BAD_COORDINATE_COUNT; ++b) {
        memcpy(v, in->v, sizeof(vec3s) * (size_t)in->nv);
        v[b == 0 ? in->nv - 1 : below(rng, in->nv)].raw[below(rng, 3)] = bad_coordinate(b);
        check_equal(carom_mesh_refit(m, v, in->nv), CAROM_ERR_INVALID_ARG);
    }
    memcpy(v, in->v, sizeof(vec3s) * (size_t)in->nv);
    v[in->nv] = in->v[0];
    const int counts[] = {in->nv - 1, in->nv + 1, 0, -1, INT_MIN};
    for (int c = 0; c < 5; ++c)
        check_equal(carom_mesh_refit(m, v, counts[c]), CAROM_ERR_INVALID_ARG);
    carom_mesh zeroed = {0};
    check_equal(carom_mesh_refit(m, NULL, in->nv), CAROM_ERR_INVALID_ARG);
    check_equal(carom_mesh_refit(NULL, v, in->nv), CAROM_ERR_INVALID_ARG);
    check_equal(carom_mesh_refit(&zeroed, v, in->nv), CAROM_ERR_INVALID_ARG);
    check(is_zeroed(&zeroed) && memcmp(m, &kept, sizeof kept) == 0);
    free(v);
    check_mesh_reports(m, in, m->tree);
    answers_of(m, m, in, 77, 1, &after);
    check(after.n == before.n && memcmp(after.v, before.v, sizeof *after.v * (size_t)after.n) == 0);
    free(before.v);
    free(after.v);
}

// Each tree kind, refitted twice to hostile new vertices, gives them back as
// a fresh build does, keeps its tree's shape, and answers every query as
// fresh builds of every kind do; refits that must fail change nothing.
static void test_refit_matches_fresh_build(void** state) {
    (void)state;
    for (int layout = 0; layout < LAYOUT_COUNT; ++layout) {
        for (int scale = 0; scale < SCALE_COUNT; scale += light() ? 2 : 1) {
            const unsigned long long seed =
                3000 + (unsigned long long)(layout * SCALE_COUNT + scale);
            ref_rng rng = {seed};
            make_mesh(&g_in, layout, scale, &rng);
            name_case("refit", seed, layout, scale);
            carom_mesh trees[6];
            for (int k = 0; k < 3; ++k) {
                const int leaves[] = {0, 1, 16};
                trees[k] =
                    build(&g_in, (carom_mesh_desc){(carom_tree_kind)k, leaves[below(&rng, 3)]});
                check_failed_refits(&trees[k], &g_in, &rng);
            }
            for (int round = 0; round < 2; ++round) {
                move_vertices(&g_moved, round == 0 ? &g_in : &g_moved, &rng);
                for (int k = 0; k < 3; ++k) {
                    const carom_mesh old = trees[k];
                    check_equal(carom_mesh_refit(&trees[k], g_moved.v, g_moved.nv), CAROM_OK);
                    check_mesh_reports(&trees[k], &g_moved, (carom_tree_kind)k);
                    check(trees[k].node_count == old.node_count && trees[k].depth == old.depth &&
                          trees[k].tree_bytes == old.tree_bytes);
                    check_failed_refits(&trees[k], &g_moved, &rng);
                    trees[3 + k] = build(&g_moved, (carom_mesh_desc){(carom_tree_kind)k, 0});
                }
                check_meshes_agree(trees, 6, &g_moved, ref_rng_next(&rng));
                for (int k = 3; k < 6; ++k) carom_mesh_destroy(&trees[k]);
            }
            for (int k = 0; k < 3; ++k) carom_mesh_destroy(&trees[k]);
        }
    }
}

// --- answers known outright -------------------------------------------------------

// A box around the whole mesh, at the identity and at a turned pose, a
// thousandth of its size larger each way, and on each axis, one time in two,
// stretched on one side by up to 10^12 times the mesh's scale (within the
// limit): it finds every triangle of nonzero area, each of which lies inside
// it.
static void check_box_around_mesh(const carom_mesh* trees, int n, const mesh_input* in,
                                  ref_rng* rng) {
    for (int turned = 0; turned < 2; ++turned) {
        const carom_xform pose =
            turned ? random_pose(rng, (float)fmin(in->scale, 1e9)) : at(0, 0, 0);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int i = 0; i < 3 * in->nt; ++i) {
            const vec3s v = in->v[in->idx[i]];
            const double local[3] = {v.x, v.y, v.z};
            double w[3];
            to_world(pose, local, w);
            for (int k = 0; k < 3; ++k) lo[k] = fmin(lo[k], w[k]), hi[k] = fmax(hi[k], w[k]);
        }
        // At the identity the limit may bound the box; a turned mesh must fit
        // in it.
        double stretch[3];
        int side[3];
        for (int k = 0; k < 3; ++k) {
            stretch[k] = in->scale * pow(10.0, ref_rng_uniform(rng, 0, 12));
            side[k] = below(rng, 4);
        }
        carom_aabb box;
        bool in_range = true;
        for (int k = 0; k < 3; ++k) {
            const double grow = 1e-3 * (hi[k] - lo[k]) + 1e-6 * fmax(fabs(lo[k]), fabs(hi[k])) + 1e-30;
            in_range &= !turned || fmax(grow - lo[k], hi[k] + grow) <= CAROM_MAX_COORDINATE;
            box.min.raw[k] = (float)fmax(lo[k] - grow - (side[k] == 0 ? stretch[k] : 0.0),
                                         -CAROM_MAX_COORDINATE);
            box.max.raw[k] =
                (float)fmin(hi[k] + grow + (side[k] == 1 ? stretch[k] : 0.0), CAROM_MAX_COORDINATE);
        }
        for (int k = 0; in_range && k < n; ++k) {
            found f = {0};
            check_equal(carom_mesh_overlap_box(&trees[k], pose, box, collect_triangle, &f).state,
                        CAROM_DONE);
            check_found(&f, in, false);
            if (f.n != in->nt - in->zero_count) {
                fail_msg(
                    "%s: a box around the whole mesh (tree %d, %s) finds %d of its %d triangles of "
                    "nonzero area",
                    g_case, k, turned ? "turned" : "at the identity", f.n, in->nt - in->zero_count);
            }
            free(f.p);
        }
    }
}

// Every tree finds every triangle of nonzero area in a box around the whole
// mesh, however far the box reaches beyond it.
static void test_box_around_mesh_finds_every_triangle(void** state) {
    (void)state;
    for_every_mesh("box around the mesh", 4000, check_box_around_mesh);
}

// A ray and a ball sent square onto a triangle's centroid from as far off
// its plane as its longest edge hit by the time they reach the plane: at
// most half way. Only triangles whose inscribed circle is wide against the
// rounding of the ray where it crosses them, and whose ray stays well within
// range; the ball only where narrow.h's range holds its cast.
static void check_square_on_hits(const carom_mesh* trees, int n, const mesh_input* in,
                                 ref_rng* rng) {
    for (int i = 0; i < (light() ? 4 : 12); ++i) {
        const int t = below(rng, in->nt);
        const vec3s a = corner(in, t, 0), b = corner(in, t, 1), c = corner(in, t, 2);
        const vec3s u = minus(b, a), w = minus(c, a);
        const double ab = length3(u), bc = length3(minus(c, b)), ca = length3(w);
        const double normal[3] = {(double)u.y * w.z - (double)u.z * w.y,
                                  (double)u.z * w.x - (double)u.x * w.z,
                                  (double)u.x * w.y - (double)u.y * w.x};
        const double area2 =
            sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
        const double longest = fmax(ab, fmax(bc, ca)), inradius = area2 / (ab + bc + ca),
                     far = reach_of(in, t);
        if (in->zero[t] || inradius < 1e-3 * longest || inradius < 1e-4 * (far + longest)) continue;
        if (far + 2.0 * longest > 0.1 * CAROM_MAX_COORDINATE) continue;
        const carom_xform pose = one_in(rng, 2) ? at(0, 0, 0) : random_pose(rng, (float)longest);
        double from[3], to[3], start[3], end[3];
        for (int k = 0; k < 3; ++k) {
            const double centroid = ((double)a.raw[k] + b.raw[k] + c.raw[k]) / 3.0;
            from[k] = centroid + longest * normal[k] / area2;
            to[k] = centroid - longest * normal[k] / area2;
        }
        to_world(pose, from, start);
        to_world(pose, to, end);
        const carom_ray ray = {xyz(start[0], start[1], start[2]),
                               xyz(end[0] - start[0], end[1] - start[1], end[2] - start[2])};
        const carom_shape ball = carom_sphere((float)(0.1 * inradius));
        for (int k = 0; k < n; ++k) {
            const carom_mesh_hit h = carom_mesh_raycast(&trees[k], pose, ray, CAROM_RAY_CLOSEST);
            check(h.state == CAROM_DONE && h.hit && h.fraction <= 0.5f + 1e-4f);
            check(carom_mesh_raycast(&trees[k], pose, ray, CAROM_RAY_ANY).hit);
            if (!gjk_promises(ball.radius, far + 2.0 * longest)) continue;
            const carom_xform ball_pose = {ray.origin, carom_xform_identity().q};
            const carom_mesh_hit cast =
                carom_mesh_shape_cast(&trees[k], pose, &ball, ball_pose, ray.translation);
            check(cast.state == CAROM_DONE || cast.state == CAROM_MAX_ITERATIONS);
            check(cast.hit && cast.fraction <= 0.5f + 1e-3f);
        }
    }
}

// Rays and balls sent square onto triangles of every mesh hit in time, in
// every tree.
static void test_rays_and_balls_hit_square_on(void** state) {
    (void)state;
    for_every_mesh("square on", 5000, check_square_on_hits);
}

// A mesh against itself at one pose (the identity, or random ones, their
// quaternions sometimes off unit length): every triangle of nonzero area
// meets itself, in every tree.
static void check_meets_itself(const carom_mesh* trees, int n, const mesh_input* in, ref_rng* rng) {
    for (int i = 0; i < (light() ? 2 : 4); ++i) {
        const carom_xform pose = i ? query_pose(in, rng) : at(0, 0, 0);
        for (int k = 0; k < n; ++k) {
            found f = {0};
            check_equal(
                carom_mesh_collide(&trees[k], pose, &trees[k], pose, collect_pair, &f).state,
                CAROM_DONE);
            check_found(&f, in, true);
            for (int t = 0; t < in->nt; ++t) {
                const carom_triangle_pair self = {t, t};
                if (in->zero[t] ||
                    (f.n > 0 && bsearch(&self, f.p, (size_t)f.n, sizeof self, pair_order)))
                    continue;
                fail_msg(
                    "%s: triangle %d does not meet itself (tree %d, pose at %g %g %g, turned by %g "
                    "%g %g %g)",
                    g_case, t, k, pose.p.x, pose.p.y, pose.p.z, pose.q.x, pose.q.y, pose.q.z,
                    pose.q.w);
            }
            free(f.p);
        }
    }
}

// Every mesh, in every tree, meets itself at one pose in every triangle of
// nonzero area.
static void test_mesh_meets_itself(void** state) {
    (void)state;
    for_every_mesh("itself", 6000, check_meets_itself);
}

int main(void) {
    // CAROM_TEST_FILTER=pattern runs only the matching tests.
    if (getenv("CAROM_TEST_FILTER")) cmocka_set_test_filter(getenv("CAROM_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_on_hostile_input),
        cmocka_unit_test(test_queries_reject_invalid_input),
        cmocka_unit_test(test_every_tree_answers_alike),
        cmocka_unit_test(test_refit_matches_fresh_build),
        cmocka_unit_test(test_box_around_mesh_finds_every_triangle),
        cmocka_unit_test(test_rays_and_balls_hit_square_on),
        cmocka_unit_test(test_mesh_meets_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
