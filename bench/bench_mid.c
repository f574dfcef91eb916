// carom_bench_mid: the mid phase (triangle meshes and their trees) against
// FCL's BVHModel<OBBRSS> and BVHModel<AABB> and Bullet's quantized
// btBvhTriangleMeshShape, on identical inputs, in one process.
//
// Cases (README.md, "carom_bench_mid"):
//   bunny-grazing/{all,first}     two bunny00 copies barely touching
//   bunny-deep/{all,first}        the second copy a quarter of the size off, turned
//   bunny-coincident/{all,first}  the second copy turned 0.01 rad about the centre
//   armadillo-bunny/{all,first}   the armadillo scaled to the bunny's size, overlapping
//   bunny-grazing-sweep/{all,first}     32 random grazing poses, and the like
//   bunny-deep-sweep/{all,first}        for deep, near-coincident (0.01 rad)
//   bunny-coincident-sweep/{all,first}  and armadillo-bunny (deep) poses: the
//   armadillo-bunny-sweep/{all,first}   mean time per query
//   build-bunny, build-armadillo  building each tree
//   ray-bunny, ray-house          closest-hit ray casts
// "all" collects every intersecting triangle pair, "first" stops at the
// first. The reference pair set is carom's AABB tree; every other answer is
// compared with it, and the pairs that differ are settled in double
// precision (mesh_reference.h: exact intersection, distance or depth).
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <carom/carom.h>
#include <carom/mid.h>

#include "harness.h"
#include "mesh_io.h"
#include "peers_mid.h"
#include "mesh_reference.h"
#include "reference.h"

// ---- sizes and tolerances -----------------------------------------------------

enum {
    RAYS = 4096,
    QUICK_RAYS = 512,
    // Rays whose answers all agree are still checked against the double
    // reference on this many of them (spread over the set), so that carom's
    // own line is checked too; disputed rays are all resolved, up to
    // MAX_RESOLVED.
    RAY_SAMPLE = 256,
    QUICK_RAY_SAMPLE = 32,
    MAX_RESOLVED = 512,
    MAX_IMPLS = 8,
};

// A timed run repeats a query until it lasts about this long (a first-hit
// query takes microseconds; a clock read costs ~20 ns), so that every
// implementation is timed over several milliseconds per round.
#define TARGET_RUN_NS 5e6
#define QUICK_TARGET_RUN_NS 2e6

// Pairs and rays within this distance of touching (relative to the larger
// mesh's size) may go either way: the inputs are float, and float triangle
// tests after a float change of frame are accurate to a few 1e-7 of the size.
#define TOUCH_BAND 1e-5
// Ray hits agree when their points along the ray are this close (relative
// to the mesh size).
#define RAY_TOL 1e-4

static void fail(const char* what)
{
    fprintf(stderr, "carom_bench_mid: %s\n", what);
    exit(1);
}

static void* xmalloc(size_t size)
{
    void* p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        fail("out of memory");
    }
    return p;
}

// ---- poses (double, then rounded to float once) ---------------------------------

static void quat_axis_angle(const double axis[3], double angle, double q[4])
{
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double s = sin(0.5 * angle) / len;
    q[0] = axis[0] * s, q[1] = axis[1] * s, q[2] = axis[2] * s, q[3] = cos(0.5 * angle);
}

// out = a * b (apply b first), quaternions (x, y, z, w).
static void quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

// out = m v, m row-major (a double[3][3] passed as &m[0][0]).
static void mat_apply(const double* m, const double v[3], double out[3])
{
    for (int i = 0; i < 3; i++) {
        out[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
    }
}

// A pose as the peers get it (float) and as carom gets it.
static bench_pose make_pose(const double p[3], const double q[4])
{
    bench_pose pose;
    for (int k = 0; k < 3; k++) {
        pose.p[k] = (float)p[k];
    }
    for (int k = 0; k < 4; k++) {
        pose.q[k] = (float)q[k];
    }
    return pose;
}

static carom_xform to_xform(const bench_pose* p)
{
    carom_xform xf;
    for (int k = 0; k < 3; k++) {
        xf.p.raw[k] = p->p[k];
    }
    for (int k = 0; k < 4; k++) {
        xf.q.raw[k] = p->q[k];
    }
    return xf;
}

// The pose every case gives its first mesh (and the ray cases their mesh):
// not the identity, so that every implementation pays for its change of
// frame. 0.6 rad about (1, 2, 3), at (0.25, -0.5, 1).
static bench_pose pose_first(void)
{
    const double axis[3] = {1, 2, 3}, p[3] = {0.25, -0.5, 1.0};
    double q[4];
    quat_axis_angle(axis, 0.6, q);
    return make_pose(p, q);
}

// The second mesh's pose: in the first mesh's frame, turned by `angle` about
// `axis` through `centre` (the second mesh's box centre), then moved by
// `offset`. world = Ra (c + Rd (x - c) + t) + pa.
static bench_pose pose_relative(const bench_pose* first, const double centre[3], const double axis[3],
                                double angle, const double offset[3])
{
    double qa[4] = {first->q[0], first->q[1], first->q[2], first->q[3]};
    double qd[4], qb[4], rd[3][3], ra[3][3], rc[3], local[3], world[3], p[3];
    quat_axis_angle(axis, angle, qd);
    quat_mul(qa, qd, qb);
    ref_quat_to_matrix(qd, rd);
    ref_quat_to_matrix(qa, ra);
    mat_apply(&rd[0][0], centre, rc);
    for (int k = 0; k < 3; k++) {
        local[k] = centre[k] - rc[k] + offset[k];
    }
    mat_apply(&ra[0][0], local, world);
    for (int k = 0; k < 3; k++) {
        p[k] = first->p[k] + world[k];
    }
    return make_pose(p, qb);
}

// Point x of a mesh's local frame in world coordinates, in double.
typedef struct frame {
    double r[3][3];
    double t[3];
} frame;

static frame frame_of(const bench_pose* p)
{
    frame f;
    double q[4] = {p->q[0], p->q[1], p->q[2], p->q[3]};
    ref_quat_to_matrix(q, f.r);
    for (int k = 0; k < 3; k++) {
        f.t[k] = p->p[k];
    }
    return f;
}

static void frame_apply(const frame* f, const float x[3], double out[3])
{
    const double v[3] = {x[0], x[1], x[2]};
    mat_apply(&f->r[0][0], v, out);
    for (int k = 0; k < 3; k++) {
        out[k] += f->t[k];
    }
}

// ---- meshes -----------------------------------------------------------------------

typedef enum impl_id {
    IMPL_CAROM = 0,    // CAROM_TREE_AABB
    IMPL_CAROM_BOXTREE,
    IMPL_CAROM_SAH,
    IMPL_FCL_OBBRSS,
    IMPL_FCL_AABB,
    IMPL_BULLET,
    IMPL_CAROM_ANY,    // ray casts only: the AABB tree in CAROM_RAY_ANY mode
    IMPL_COUNT
} impl_id;

static const char* const IMPL_NAME[IMPL_COUNT] = {
    "carom", "carom-boxtree", "carom-sah", "fcl-obbrss", "fcl-aabb", "bullet-bvh", "carom-any",
};

static const carom_tree_kind CAROM_KIND[3] = {CAROM_TREE_AABB, CAROM_TREE_BOXTREE,
                                              CAROM_TREE_AABB_SAH};

static bool is_carom(impl_id id)
{
    return id <= IMPL_CAROM_SAH || id == IMPL_CAROM_ANY;
}

enum { MESH_BUNNY, MESH_ARMADILLO, MESH_HOUSE, MESH_COUNT };

typedef struct mid_mesh {
    const char* name;
    mesh_data data;     // float vertices (recentred/scaled as loaded) and triangles
    vec3s* vertices;    // the same vertices for carom
    bench_mesh desc;    // the same arrays for the peers
    float lo[3], hi[3]; // bounds, local frame
    double centre[3];   // box centre, local frame
    float size;         // largest extent
    carom_mesh carom[3]; // built on first use, one per tree kind
    bool carom_built[3];
    void* fcl[2];       // BVHModel<OBBRSS>, BVHModel<AABB>, built on first use
    void* bullet;       // built on first use
} mid_mesh;

static void mesh_bounds(mid_mesh* m)
{
    for (int k = 0; k < 3; k++) {
        m->lo[k] = INFINITY, m->hi[k] = -INFINITY;
    }
    for (int i = 0; i < m->data.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            m->lo[k] = fminf(m->lo[k], m->data.vertices[i][k]);
            m->hi[k] = fmaxf(m->hi[k], m->data.vertices[i][k]);
        }
    }
    m->size = fmaxf(m->hi[0] - m->lo[0], fmaxf(m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]));
    for (int k = 0; k < 3; k++) {
        m->centre[k] = 0.5 * ((double)m->lo[k] + m->hi[k]);
    }
}

// Loads a mesh. With `size` > 0 it is moved so that its box centre is the
// origin and scaled so that its largest extent is `size`; otherwise it is
// kept as the file has it.
static void mesh_open(mid_mesh* m, const char* name, const char* file, float size)
{
    memset(m, 0, sizeof *m);
    m->name = name;
    int rc = mesh_load_named(file, &m->data);
    if (rc != MESH_OK) {
        fprintf(stderr, "carom_bench_mid: cannot load %s/%s: %s (run scripts/fetch-data.sh, or set "
                        "CAROM_DATA_DIR)\n",
                mesh_data_dir(), file, mesh_strerror(rc));
        exit(1);
    }
    mesh_bounds(m);
    if (size > 0) {
        const float s = size / m->size;
        for (int i = 0; i < m->data.vertex_count; i++) {
            for (int k = 0; k < 3; k++) {
                float* v = &m->data.vertices[i][k];
                *v = (float)((*v - m->centre[k]) * s);
            }
        }
        mesh_bounds(m);
    }
    m->vertices = xmalloc(sizeof(vec3s) * (size_t)m->data.vertex_count);
    for (int i = 0; i < m->data.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            m->vertices[i].raw[k] = m->data.vertices[i][k];
        }
    }
    m->desc.vertices = &m->data.vertices[0][0];
    m->desc.vertex_count = m->data.vertex_count;
    m->desc.triangles = &m->data.triangles[0][0];
    m->desc.triangle_count = m->data.triangle_count;
}

static carom_status carom_build(const mid_mesh* m, int kind, carom_mesh* out)
{
    carom_mesh_desc desc = {0};
    desc.tree = CAROM_KIND[kind];
    return carom_mesh_create(m->vertices, m->data.vertex_count, &m->data.triangles[0][0],
                             m->data.triangle_count, &desc, out);
}

static const carom_mesh* mesh_carom(mid_mesh* m, int kind)
{
    if (!m->carom_built[kind]) {
        carom_status st = carom_build(m, kind, &m->carom[kind]);
        if (st != CAROM_OK) {
            fprintf(stderr, "carom_bench_mid: carom_mesh_create(%s, %s): %s\n", m->name,
                    IMPL_NAME[kind], carom_status_string(st));
            exit(1);
        }
        m->carom_built[kind] = true;
    }
    return &m->carom[kind];
}

static void* mesh_fcl(mid_mesh* m, bench_fcl_bv bv)
{
    if (m->fcl[bv] == NULL) {
        m->fcl[bv] = bench_fcl_mesh_build(&m->desc, bv);
        if (m->fcl[bv] == NULL) {
            fail("FCL could not build a BVHModel");
        }
    }
    return m->fcl[bv];
}

static void* mesh_bullet(mid_mesh* m)
{
    if (m->bullet == NULL) {
        m->bullet = bench_bullet_mesh_build(&m->desc);
        if (m->bullet == NULL) {
            fail("Bullet could not build a btBvhTriangleMeshShape");
        }
    }
    return m->bullet;
}

static void mesh_close(mid_mesh* m)
{
    for (int k = 0; k < 3; k++) {
        carom_mesh_destroy(&m->carom[k]);
    }
    for (int k = 0; k < 2; k++) {
        if (m->fcl[k] != NULL) {
            bench_fcl_mesh_destroy(m->fcl[k]);
        }
    }
    if (m->bullet != NULL) {
        bench_bullet_mesh_destroy(m->bullet);
    }
    free(m->vertices);
    mesh_free(&m->data);
}

// Triangle t of a mesh at a pose, world coordinates, double.
static void world_triangle(const mid_mesh* m, const frame* f, int t, double out[3][3])
{
    for (int j = 0; j < 3; j++) {
        frame_apply(f, m->data.vertices[m->data.triangles[t][j]], out[j]);
    }
}

// ---- timing -----------------------------------------------------------------------

// One implementation's slot in a case: bench_impl plus how many queries one
// call of its run function makes (ops) and how often the run repeats them.
typedef struct timed_slot {
    bench_impl impl;
    impl_id id;
    int* repeat;  // points into the implementation's context
    int ops;
} timed_slot;

// Sets each slot's repeat count from `single_ns` (one untimed run that
// produced the answers), times every slot with bench_measure (interleaved,
// median) and divides by the queries per round.
static void measure_slots(timed_slot* slots, const double* single_ns, int count,
                          const bench_options* opt)
{
    bench_impl impls[MAX_IMPLS];
    const double target = opt->quick ? QUICK_TARGET_RUN_NS : TARGET_RUN_NS;
    for (int k = 0; k < count; k++) {
        if (slots[k].repeat != NULL) {
            double r = single_ns[k] > 0 ? ceil(target / single_ns[k]) : 1.0;
            *slots[k].repeat = (int)fmin(fmax(r, 1.0), 100000.0);
        }
        impls[k] = slots[k].impl;
    }
    bench_measure(impls, count, 1, opt->reps);
    for (int k = 0; k < count; k++) {
        double per = (double)slots[k].ops * (slots[k].repeat != NULL ? *slots[k].repeat : 1);
        slots[k].impl.ns_per_op = impls[k].ns_per_op / per;
        slots[k].impl.ns_min = impls[k].ns_min / per;
    }
}

// ---- triangle pairs ----------------------------------------------------------------

static int pair_compare(const void* x, const void* y)
{
    const bench_tri_pair* a = x;
    const bench_tri_pair* b = y;
    if (a->a != b->a) {
        return (a->a > b->a) - (a->a < b->a);
    }
    return (a->b > b->b) - (a->b < b->b);
}

// Sorts and removes repeats; returns the new count.
static int pairs_unique(bench_tri_pair* p, int n)
{
    qsort(p, (size_t)n, sizeof *p, pair_compare);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m == 0 || pair_compare(&p[m - 1], &p[i]) != 0) {
            p[m++] = p[i];
        }
    }
    return m;
}

static bool pairs_contain(const bench_tri_pair* sorted, int n, bench_tri_pair p)
{
    return bsearch(&p, sorted, (size_t)n, sizeof p, pair_compare) != NULL;
}

// Where one triangle pair stands in double precision (mesh_reference.h):
// both triangles moved to world in double from the same floats and poses
// every implementation got; then the exact intersection predicate, and the
// distance when they are apart or minus the penetration depth when they
// intersect. `degenerate`: one of them has zero area, which carom never
// reports (mid.h).
typedef struct pair_geometry {
    const mid_mesh* a;
    const mid_mesh* b;
    frame fa, fb;
} pair_geometry;

static double pair_separation(const pair_geometry* g, bench_tri_pair p, bool* degenerate)
{
    double ta[3][3], tb[3][3];
    world_triangle(g->a, &g->fa, p.a, ta);
    world_triangle(g->b, &g->fb, p.b, tb);
    *degenerate = ref_mesh_triangle_degenerate(g->a->data.vertices, g->a->data.triangles, p.a) ||
                  ref_mesh_triangle_degenerate(g->b->data.vertices, g->b->data.triangles, p.b);
    return ref_tri_tri_signed_distance(ta, tb);
}

// How one implementation's pair set differs from the reference set, each
// differing pair settled by its double separation s: |s| <= band is
// touching (either answer is right), s > band means the pair must not be
// reported, s < -band that it must.
typedef struct pair_diff {
    int missing;         // in the reference, not here
    int extra;           // here, not in the reference
    int touching;        // differing pairs within the band
    double max_touching; // largest |s| among them
    int degenerate;      // differing pairs with a zero-area triangle (carom skips them)
    int wrong_here;      // this implementation on the wrong side of the band
    double max_wrong_here;
    int wrong_ref;       // the reference (carom) on the wrong side
    double max_wrong_ref;
} pair_diff;

static void settle(pair_diff* d, double s, bool degenerate, bool reported_here, double band)
{
    if (degenerate) {
        d->degenerate++;
        return;
    }
    if (fabs(s) <= band) {
        d->touching++;
        d->max_touching = fmax(d->max_touching, fabs(s));
        return;
    }
    // Reported but apart, or not reported but intersecting: wrong.
    bool here_wrong = reported_here ? s > 0 : s < 0;
    if (here_wrong) {
        d->wrong_here++;
        d->max_wrong_here = fmax(d->max_wrong_here, fabs(s));
    } else {
        d->wrong_ref++;
        d->max_wrong_ref = fmax(d->max_wrong_ref, fabs(s));
    }
}

// `verbose_name`: print the first few differing pairs to stderr under it.
static pair_diff pairs_diff(const pair_geometry* g, const bench_tri_pair* ref, int nref,
                            const bench_tri_pair* got, int ngot, double band,
                            const char* verbose_name)
{
    pair_diff d = {0};
    int i = 0, j = 0;
    while (i < nref || j < ngot) {
        int c = i >= nref ? 1 : j >= ngot ? -1 : pair_compare(&ref[i], &got[j]);
        if (c == 0) {
            i++, j++;
            continue;
        }
        const bool extra = c > 0;
        const bench_tri_pair p = extra ? got[j++] : ref[i++];
        bool degenerate;
        const double s = pair_separation(g, p, &degenerate);
        d.missing += !extra;
        d.extra += extra;
        settle(&d, s, degenerate, extra, band);
        if (verbose_name != NULL && d.missing + d.extra <= 8) {
            bench_note("  %s: pair (%d,%d) %s, %s %.3g%s", verbose_name, p.a, p.b,
                       extra ? "extra" : "missing", s > 0 ? "apart by" : "overlapping by",
                       fabs(s), degenerate ? " (zero-area triangle)" : "");
        }
    }
    return d;
}

static void pair_diff_text(const pair_diff* d, char* text, size_t size)
{
    int n = d->missing + d->extra;
    if (n == 0) {
        snprintf(text, size, "ok");
        return;
    }
    int w = snprintf(text, size, "%d pairs differ (%d missing, %d extra)", n, d->missing, d->extra);
    if (d->touching == n) {
        snprintf(text + w, size - (size_t)w, ", all within %.1e of touching", d->max_touching);
        return;
    }
    if (d->degenerate > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d with a zero-area triangle", d->degenerate);
    }
    if (d->wrong_here > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d wrong here by up to %.2g", d->wrong_here,
                      d->max_wrong_here);
    }
    if (d->wrong_ref > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d wrong in carom by up to %.2g", d->wrong_ref,
                      d->max_wrong_ref);
    }
    if (d->touching > 0) {
        snprintf(text + w, size - (size_t)w, ", %d touching", d->touching);
    }
}

// Differences of several poses, summed, so that a sweep's line reads as
// one case's does.
static void pair_diff_add(pair_diff* sum, const pair_diff* d)
{
    sum->missing += d->missing;
    sum->extra += d->extra;
    sum->touching += d->touching;
    sum->max_touching = fmax(sum->max_touching, d->max_touching);
    sum->degenerate += d->degenerate;
    sum->wrong_here += d->wrong_here;
    sum->max_wrong_here = fmax(sum->max_wrong_here, d->max_wrong_here);
    sum->wrong_ref += d->wrong_ref;
    sum->max_wrong_ref = fmax(sum->max_wrong_ref, d->max_wrong_ref);
}

// ---- mesh against mesh ----------------------------------------------------------------

typedef struct collide_ctx {
    impl_id id;
    bool first_only;
    int repeat;
    // carom
    const carom_mesh* ma;
    const carom_mesh* mb;
    carom_xform xa, xb;
    carom_triangle_pair* carom_pairs;
    carom_mesh_query_result result;
    // FCL
    void* fcl;
    bench_tri_pair* fcl_pairs;
    int capacity;
    int found;  // pairs the last call reported
} collide_ctx;

static void run_collide(void* arg)
{
    collide_ctx* c = arg;
    for (int r = 0; r < c->repeat; r++) {
        if (is_carom(c->id)) {
            c->result = carom_mesh_collide_pairs(c->ma, c->xa, c->mb, c->xb, c->first_only,
                                                 c->carom_pairs, c->capacity);
            c->found = c->result.found;
        } else {
            c->found = bench_fcl_collide(c->fcl, c->first_only, c->fcl_pairs, c->capacity);
        }
    }
}

// One untimed call that fills the answers, growing the buffer until it
// holds every pair; returns its duration.
static double collide_once(collide_ctx* c)
{
    for (;;) {
        c->repeat = 1;
        double t0 = bench_now_ns();
        run_collide(c);
        double t = bench_now_ns() - t0;
        if (c->found <= c->capacity) {
            return t;
        }
        c->capacity = c->found + c->found / 4;
        free(c->carom_pairs);
        free(c->fcl_pairs);
        c->carom_pairs = xmalloc(sizeof(carom_triangle_pair) * (size_t)c->capacity);
        c->fcl_pairs = xmalloc(sizeof(bench_tri_pair) * (size_t)c->capacity);
    }
}

// The pairs of the last call as bench_tri_pair (the FCL buffer is reused).
static bench_tri_pair* collide_pairs(collide_ctx* c)
{
    if (is_carom(c->id)) {
        for (int i = 0; i < c->found; i++) {
            c->fcl_pairs[i].a = c->carom_pairs[i].a;
            c->fcl_pairs[i].b = c->carom_pairs[i].b;
        }
    }
    return c->fcl_pairs;
}

// Everything the lines of one case share.
typedef struct collide_setup {
    const char* name;  // "bunny-deep"
    mid_mesh* a;       // the first mesh, at pose_first()
    mid_mesh* b;       // the second, at pose_relative(...)
    bench_pose pa, pb;
    pair_geometry geometry;
    double band;
    bench_tri_pair* ref;  // carom (AABB tree), all pairs, sorted
    int nref;
} collide_setup;

static void collide_ctx_init(collide_ctx* c, impl_id id, bool first_only, const collide_setup* s)
{
    memset(c, 0, sizeof *c);
    c->id = id;
    c->first_only = first_only;
    c->xa = to_xform(&s->pa);
    c->xb = to_xform(&s->pb);
    if (is_carom(id)) {
        c->ma = mesh_carom(s->a, (int)id);
        c->mb = mesh_carom(s->b, (int)id);
    } else {
        bench_fcl_bv bv = id == IMPL_FCL_OBBRSS ? BENCH_FCL_OBBRSS : BENCH_FCL_AABB;
        c->fcl = bench_fcl_collide_prepare(mesh_fcl(s->a, bv), &s->pa, mesh_fcl(s->b, bv),
                                           &s->pb);
        if (c->fcl == NULL) {
            fail("FCL collide could not be prepared");
        }
    }
    c->capacity = 1024;
    c->carom_pairs = xmalloc(sizeof(carom_triangle_pair) * (size_t)c->capacity);
    c->fcl_pairs = xmalloc(sizeof(bench_tri_pair) * (size_t)c->capacity);
}

static void collide_ctx_free(collide_ctx* c)
{
    if (c->fcl != NULL) {
        bench_fcl_collide_destroy(c->fcl);
    }
    free(c->carom_pairs);
    free(c->fcl_pairs);
}

// The check of a first-hit answer: the pair must be in the reference set,
// or within the touching band.
static void first_check(const collide_setup* s, const bench_tri_pair* got, int found, char* text,
                        size_t size, int* wrong_ref)
{
    if (found == 0) {
        if (s->nref == 0) {
            snprintf(text, size, "ok");
        } else {
            snprintf(text, size, "no pair reported, carom finds %d", s->nref);
        }
        return;
    }
    if (pairs_contain(s->ref, s->nref, got[0])) {
        snprintf(text, size, "ok");
        return;
    }
    bool degenerate;
    double sep = pair_separation(&s->geometry, got[0], &degenerate);
    if (degenerate) {
        snprintf(text, size, "pair (%d,%d) has a zero-area triangle", got[0].a, got[0].b);
    } else if (fabs(sep) <= s->band) {
        snprintf(text, size, "pair (%d,%d) not in carom's set, within %.1e of touching", got[0].a,
                 got[0].b, fabs(sep));
    } else if (sep > 0) {
        snprintf(text, size, "pair (%d,%d) is %.2g apart", got[0].a, got[0].b, sep);
    } else {
        snprintf(text, size, "pair (%d,%d) overlaps by %.2g but carom misses it", got[0].a,
                 got[0].b, -sep);
        (*wrong_ref)++;
    }
}

typedef struct collide_line {
    char check[200];
    int unique;      // distinct pairs (all mode)
    int duplicates;  // reported more than once
    pair_diff diff;
} collide_line;

static void collide_emit(const collide_setup* s, const char* mode, const timed_slot* slot,
                         const collide_ctx* c, const collide_line* line, double fcl_ns)
{
    char case_name[64];
    snprintf(case_name, sizeof case_name, "%s/%s", s->name, mode);
    bench_json j;
    bench_json_begin(&j, "mid", case_name, slot->impl.name, 1, slot->impl.ns_per_op, line->check);
    bench_json_str(&j, "mode", mode);
    char meshes[64];
    snprintf(meshes, sizeof meshes, "%s-%s", s->a->name, s->b->name);
    bench_json_str(&j, "meshes", meshes);
    bench_json_int(&j, "triangles_a", s->a->data.triangle_count);
    bench_json_int(&j, "triangles_b", s->b->data.triangle_count);
    if (strcmp(mode, "all") == 0) {
        bench_json_int(&j, "pairs", line->unique);
        bench_json_int(&j, "duplicates", line->duplicates);
        bench_json_int(&j, "missing", line->diff.missing);
        bench_json_int(&j, "extra", line->diff.extra);
    } else {
        bench_json_int(&j, "pairs", c->found);
        bench_json_int(&j, "reference_pairs", s->nref);
    }
    if (is_carom(c->id)) {
        bench_json_int(&j, "node_tests", c->result.node_tests);
        bench_json_int(&j, "triangle_tests", c->result.triangle_tests);
    }
    bench_json_num(&j, "ns_min", slot->impl.ns_min);
    bench_json_int(&j, "repeat", c->repeat);
    if (c->id != IMPL_FCL_OBBRSS && fcl_ns > 0) {
        bench_json_num(&j, "ratio_vs_fcl_obbrss", slot->impl.ns_per_op / fcl_ns);
    }
    bench_json_emit(&j);
}

// One mode (all pairs or first pair) of one case: every implementation,
// timed, checked against the reference set, printed.
static void collide_mode(const collide_setup* s, bool first_only, const bench_options* opt)
{
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH, IMPL_FCL_OBBRSS,
                                  IMPL_FCL_AABB};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    const char* mode = first_only ? "first" : "all";
    collide_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    double single[COUNT];
    for (int k = 0; k < COUNT; k++) {
        collide_ctx_init(&ctx[k], ids[k], first_only, s);
        single[k] = collide_once(&ctx[k]);
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_collide, &ctx[k], 0, 0}, ids[k],
                                &ctx[k].repeat, 1};
    }
    measure_slots(slots, single, COUNT, opt);

    collide_line lines[COUNT];
    int carom_wrong = 0;
    double carom_max_wrong = 0;
    double fcl_ns = 0;
    for (int k = 0; k < COUNT; k++) {
        collide_ctx* c = &ctx[k];
        collide_line* l = &lines[k];
        memset(l, 0, sizeof *l);
        bench_tri_pair* got = collide_pairs(c);
        if (ids[k] == IMPL_FCL_OBBRSS) {
            fcl_ns = slots[k].impl.ns_per_op;
        }
        if (is_carom(c->id) && c->result.state != CAROM_DONE) {
            snprintf(l->check, sizeof l->check, "state %s",
                     carom_query_state_string(c->result.state));
            continue;
        }
        if (first_only) {
            first_check(s, got, c->found, l->check, sizeof l->check, &carom_wrong);
            continue;
        }
        l->unique = pairs_unique(got, c->found);
        l->duplicates = c->found - l->unique;
        l->diff = pairs_diff(&s->geometry, s->ref, s->nref, got, l->unique, s->band,
                             opt->verbose ? IMPL_NAME[ids[k]] : NULL);
        pair_diff_text(&l->diff, l->check, sizeof l->check);
        if (l->duplicates > 0 && strcmp(l->check, "ok") == 0) {
            snprintf(l->check, sizeof l->check, "%d pairs reported twice", l->duplicates);
        }
        carom_wrong = l->diff.wrong_ref > carom_wrong ? l->diff.wrong_ref : carom_wrong;
        carom_max_wrong = fmax(carom_max_wrong, l->diff.max_wrong_ref);
    }
    // carom's own line: the reference, unless another implementation's
    // disagreement shows it on the wrong side of the touching band.
    if (carom_wrong > 0 && strcmp(lines[0].check, "ok") == 0) {
        snprintf(lines[0].check, sizeof lines[0].check,
                 "%d pairs wrong per the double reference, by up to %.2g", carom_wrong,
                 carom_max_wrong);
    }
    for (int k = 0; k < COUNT; k++) {
        collide_emit(s, mode, &slots[k], &ctx[k], &lines[k], fcl_ns);
        collide_ctx_free(&ctx[k]);
    }
}

// A case's setup before its second mesh is placed: the first mesh at
// pose_first(), and the touching band.
static collide_setup collide_setup_of(const char* name, mid_mesh* a, mid_mesh* b)
{
    collide_setup s = {0};
    s.name = name;
    s.a = a;
    s.b = b;
    s.pa = pose_first();
    s.band = TOUCH_BAND * fmax(a->size, b->size);
    s.geometry.a = a;
    s.geometry.b = b;
    s.geometry.fa = frame_of(&s.pa);
    return s;
}

static void collide_setup_place(collide_setup* s, bench_pose pb)
{
    s->pb = pb;
    s->geometry.fb = frame_of(&pb);
}

// The reference set: carom's AABB tree, every pair, untimed; `ref` owns it
// until collide_ctx_free.
static void collide_setup_reference(collide_setup* s, collide_ctx* ref)
{
    collide_ctx_init(ref, IMPL_CAROM, false, s);
    collide_once(ref);
    if (ref->result.state != CAROM_DONE) {
        fail("carom's reference collide did not finish");
    }
    s->ref = collide_pairs(ref);
    s->nref = pairs_unique(s->ref, ref->found);
}

// The collide poses. The first mesh is at pose_first(); the second is
// turned about its own box centre by `angle` about `axis`, then moved by
// `offset`, both in the first mesh's frame.
typedef struct collide_spec {
    const char* name;
    int a, b;  // MESH_*
    double axis[3];
    double angle;
    double offset[3];
    bool quick;  // part of --quick
} collide_spec;

static void collide_case_run(const collide_spec* spec, mid_mesh* a, mid_mesh* b,
                             const bench_options* opt)
{
    char all_name[64], first_name[64];
    snprintf(all_name, sizeof all_name, "%s/all", spec->name);
    snprintf(first_name, sizeof first_name, "%s/first", spec->name);
    bool run_all = bench_case_selected(opt, all_name);
    bool run_first = bench_case_selected(opt, first_name);
    if (!run_all && !run_first) {
        return;
    }
    collide_setup s = collide_setup_of(spec->name, a, b);
    collide_setup_place(&s, pose_relative(&s.pa, b->centre, spec->axis, spec->angle,
                                          spec->offset));
    bench_note("case %s: B at p=(%.6g %.6g %.6g) q=(%.6g %.6g %.6g %.6g)", spec->name, s.pb.p[0],
               s.pb.p[1], s.pb.p[2], s.pb.q[0], s.pb.q[1], s.pb.q[2], s.pb.q[3]);
    collide_ctx ref;
    collide_setup_reference(&s, &ref);
    bench_note("  %d intersecting triangle pairs (carom, AABB tree)", s.nref);

    if (run_all) {
        collide_mode(&s, false, opt);
    }
    if (run_first) {
        collide_mode(&s, true, opt);
    }
    collide_ctx_free(&ref);
}

// ---- many poses ---------------------------------------------------------------------

// Where a first-hit query stops depends on which intersecting pair its walk
// meets first, so one pose says little: turned or moved a little, the same
// meshes can take several times as long, in carom and in FCL alike (all
// pairs, by tens of percent). A sweep times both queries over many poses
// drawn at random (the same poses for every implementation) and gives the
// mean time per query. Each pose turns the second mesh about its box
// centre, about a random axis, by an angle uniform in [0.2, 3] rad, then
// moves it along a random direction:
//   grazing     back from where the meshes stop touching by 0.003 of the
//               size (found by bisection with carom's AABB tree);
//   deep        half that distance;
//   coincident  not at all, and turned only 0.01 rad.
// FCL's AABB models are left out: they rebuild both trees on every query
// (0.1 s on the bunnies).
typedef enum sweep_kind { SWEEP_GRAZING, SWEEP_DEEP, SWEEP_COINCIDENT } sweep_kind;

typedef struct sweep_spec {
    const char* name;
    int a, b;  // MESH_*
    sweep_kind kind;
    uint64_t seed;
    bool quick;  // part of --quick
} sweep_spec;

enum { SWEEP_POSES = 32, QUICK_SWEEP_POSES = 8, SWEEP_BISECTIONS = 40 };

// Whether carom's AABB tree (the reference) finds the meshes meeting.
static bool meshes_meet(const collide_setup* s)
{
    collide_ctx c;
    collide_ctx_init(&c, IMPL_CAROM, true, s);
    c.repeat = 1;
    run_collide(&c);
    bool met = c.found > 0;
    collide_ctx_free(&c);
    return met;
}

// The second mesh's pose for one draw of the sweep's generator.
static bench_pose sweep_pose(const sweep_spec* spec, collide_setup* s, bench_rng* rng)
{
    double axis[3], direction[3], offset[3] = {0, 0, 0};
    bench_rng_direction(rng, axis);
    bench_rng_direction(rng, direction);
    const double angle = spec->kind == SWEEP_COINCIDENT ? 0.01 : bench_rng_range(rng, 0.2, 3.0);
    if (spec->kind == SWEEP_COINCIDENT) {
        return pose_relative(&s->pa, s->b->centre, axis, angle, offset);
    }
    // Touching at `lo`, apart at `hi` (twice the larger size is beyond any
    // contact of two meshes centred on their boxes).
    double lo = 0, hi = 2.0 * fmax(s->a->size, s->b->size);
    for (int i = 0; i < SWEEP_BISECTIONS; i++) {
        const double mid = 0.5 * (lo + hi);
        for (int k = 0; k < 3; k++) {
            offset[k] = mid * direction[k];
        }
        collide_setup_place(s, pose_relative(&s->pa, s->b->centre, axis, angle, offset));
        if (meshes_meet(s)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    const double along = spec->kind == SWEEP_GRAZING ? lo - 0.003 * s->b->size : 0.5 * lo;
    for (int k = 0; k < 3; k++) {
        offset[k] = along * direction[k];
    }
    return pose_relative(&s->pa, s->b->centre, axis, angle, offset);
}

// Every pose of a sweep with its reference pair set, as a case's setup.
typedef struct sweep_pose_set {
    int count;
    collide_setup* setups;
    collide_ctx* refs;  // the reference queries, which own the pair sets
} sweep_pose_set;

static sweep_pose_set sweep_poses_make(const sweep_spec* spec, mid_mesh* a, mid_mesh* b,
                                       const bench_options* opt)
{
    sweep_pose_set p;
    p.count = opt->quick ? QUICK_SWEEP_POSES : SWEEP_POSES;
    p.setups = xmalloc(sizeof *p.setups * (size_t)p.count);
    p.refs = xmalloc(sizeof *p.refs * (size_t)p.count);
    bench_rng rng = bench_rng_seed(spec->seed);
    for (int i = 0; i < p.count; i++) {
        collide_setup* s = &p.setups[i];
        *s = collide_setup_of(spec->name, a, b);
        collide_setup_place(s, sweep_pose(spec, s, &rng));
        collide_setup_reference(s, &p.refs[i]);
        // A pose without pairs would time a miss, not the kind of contact
        // the sweep is named for.
        if (s->nref == 0) {
            fail("a sweep pose has no intersecting pairs");
        }
    }
    return p;
}

static void sweep_poses_free(sweep_pose_set* p)
{
    for (int i = 0; i < p->count; i++) {
        collide_ctx_free(&p->refs[i]);
    }
    free(p->refs);
    free(p->setups);
}

// One implementation's queries (all pairs or first hit), one per pose. Each
// query's own repeat stays at 1, where collide_once left it: a timed run
// repeats the whole sweep instead.
typedef struct sweep_ctx {
    int count;
    collide_ctx* queries;
    int repeat;
} sweep_ctx;

static void run_sweep(void* arg)
{
    sweep_ctx* c = arg;
    for (int r = 0; r < c->repeat; r++) {
        for (int i = 0; i < c->count; i++) {
            run_collide(&c->queries[i]);
        }
    }
}

// One implementation's answers over a sweep, each pose's checked as a
// single case's is (collide_mode).
typedef struct sweep_tally {
    char check[200];
    long long found;  // all: distinct pairs, summed; first: poses with a pair
    long long node_tests, triangle_tests;
} sweep_tally;

// Marks the poses where this implementation shows carom wrong, and sums
// those pairs into *carom_wrong.
static void sweep_check(const sweep_pose_set* poses, sweep_ctx* c, impl_id id, bool first_only,
                        const bench_options* opt, sweep_tally* t, bool* shows_carom_wrong,
                        pair_diff* carom_wrong)
{
    memset(t, 0, sizeof *t);
    memset(carom_wrong, 0, sizeof *carom_wrong);
    int wrong_poses = 0, failed = 0, duplicates = 0;
    char first_failure[200] = "";
    pair_diff diff = {0};
    for (int i = 0; i < poses->count; i++) {
        collide_ctx* q = &c->queries[i];
        const collide_setup* s = &poses->setups[i];
        t->node_tests += q->result.node_tests;
        t->triangle_tests += q->result.triangle_tests;
        char text[200] = "ok";
        if (is_carom(id) && q->result.state != CAROM_DONE) {
            snprintf(text, sizeof text, "state %s", carom_query_state_string(q->result.state));
            failed++;
        } else if (first_only) {
            int wrong_ref = 0;
            first_check(s, collide_pairs(q), q->found, text, sizeof text, &wrong_ref);
            t->found += q->found > 0;
            if (wrong_ref > 0) {
                shows_carom_wrong[i] = true;
            }
        } else {
            bench_tri_pair* got = collide_pairs(q);
            const int unique = pairs_unique(got, q->found);
            const pair_diff d = pairs_diff(&s->geometry, s->ref, s->nref, got, unique, s->band,
                                           opt->verbose ? IMPL_NAME[id] : NULL);
            pair_diff_add(&diff, &d);
            if (d.wrong_ref > 0) {
                shows_carom_wrong[i] = true;
                pair_diff_add(carom_wrong, &d);
            }
            t->found += unique;
            duplicates += q->found - unique;
            if (d.missing + d.extra > 0 || q->found > unique) {
                snprintf(text, sizeof text, "differs");
            }
        }
        if (strcmp(text, "ok") != 0 && wrong_poses++ == 0) {
            snprintf(first_failure, sizeof first_failure, "pose %d: %.160s", i, text);
        }
    }
    snprintf(t->check, sizeof t->check, "ok");
    if (wrong_poses == 0) {
        return;
    }
    if (first_only) {
        if (wrong_poses == 1) {
            snprintf(t->check, sizeof t->check, "%s", first_failure);
        } else {
            snprintf(t->check, sizeof t->check, "%s (%d poses in all)", first_failure,
                     wrong_poses);
        }
        return;
    }
    // All pairs: every pose's differences together, as one case's would
    // read, then what no pair difference shows.
    char text[160];
    pair_diff_text(&diff, text, sizeof text);
    int w = snprintf(t->check, sizeof t->check, "%d of %d poses: %s", wrong_poses, poses->count,
                     text);
    if (duplicates > 0 && w > 0 && (size_t)w < sizeof t->check) {
        w += snprintf(t->check + w, sizeof t->check - (size_t)w, ", %d pairs reported twice",
                      duplicates);
    }
    if (failed > 0 && w > 0 && (size_t)w < sizeof t->check) {
        snprintf(t->check + w, sizeof t->check - (size_t)w, ", %d queries not done", failed);
    }
}

static void sweep_emit(const char* case_name, const char* meshes, bool first_only,
                       const sweep_pose_set* poses, const timed_slot* slot, impl_id id,
                       const sweep_tally* t, int repeat, double fcl_ns)
{
    long long reference_pairs = 0;
    for (int i = 0; i < poses->count; i++) {
        reference_pairs += poses->setups[i].nref;
    }
    bench_json j;
    bench_json_begin(&j, "mid", case_name, slot->impl.name, poses->count, slot->impl.ns_per_op,
                     t->check);
    bench_json_str(&j, "mode", first_only ? "first" : "all");
    bench_json_str(&j, "meshes", meshes);
    bench_json_int(&j, "poses", poses->count);
    bench_json_int(&j, first_only ? "poses_hit" : "pairs", t->found);
    bench_json_int(&j, "reference_pairs", reference_pairs);
    if (is_carom(id)) {
        bench_json_int(&j, "node_tests", t->node_tests);
        bench_json_int(&j, "triangle_tests", t->triangle_tests);
    }
    bench_json_num(&j, "ns_min", slot->impl.ns_min);
    bench_json_int(&j, "repeat", repeat);
    if (id != IMPL_FCL_OBBRSS && fcl_ns > 0) {
        bench_json_num(&j, "ratio_vs_fcl_obbrss", slot->impl.ns_per_op / fcl_ns);
    }
    bench_json_emit(&j);
}

// One mode of a sweep: every implementation over every pose, timed,
// checked, printed.
static void sweep_mode(const sweep_spec* spec, const sweep_pose_set* poses, bool first_only,
                       const bench_options* opt)
{
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH,
                                  IMPL_FCL_OBBRSS};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    sweep_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    double single[COUNT];
    double fcl_ns = 0;
    for (int k = 0; k < COUNT; k++) {
        ctx[k].count = poses->count;
        ctx[k].queries = xmalloc(sizeof *ctx[k].queries * (size_t)poses->count);
        single[k] = 0;
        for (int i = 0; i < poses->count; i++) {
            collide_ctx_init(&ctx[k].queries[i], ids[k], first_only, &poses->setups[i]);
            single[k] += collide_once(&ctx[k].queries[i]);
        }
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_sweep, &ctx[k], 0, 0}, ids[k],
                                &ctx[k].repeat, poses->count};
    }
    measure_slots(slots, single, COUNT, opt);
    for (int k = 0; k < COUNT; k++) {
        if (ids[k] == IMPL_FCL_OBBRSS) {
            fcl_ns = slots[k].impl.ns_per_op;
        }
    }

    // carom's AABB tree is the reference: its line fails when another
    // implementation's disagreement shows it wrong on some pose.
    bool shows_carom_wrong[SWEEP_POSES] = {false};
    pair_diff carom_wrong = {0};
    sweep_tally tally[COUNT];
    for (int k = 0; k < COUNT; k++) {
        pair_diff shown;
        sweep_check(poses, &ctx[k], ids[k], first_only, opt, &tally[k], shows_carom_wrong,
                    &shown);
        if (shown.wrong_ref > carom_wrong.wrong_ref) {
            carom_wrong = shown;  // the implementation that shows the most, as collide_mode
        }
    }
    int carom_wrong_poses = 0;
    for (int i = 0; i < poses->count; i++) {
        carom_wrong_poses += shows_carom_wrong[i];
    }
    if (carom_wrong_poses > 0 && strcmp(tally[0].check, "ok") == 0) {
        if (first_only) {
            snprintf(tally[0].check, sizeof tally[0].check,
                     "carom misses an overlapping pair on %d poses", carom_wrong_poses);
        } else {
            snprintf(tally[0].check, sizeof tally[0].check,
                     "%d pairs wrong per the double reference on %d poses, by up to %.2g",
                     carom_wrong.wrong_ref, carom_wrong_poses, carom_wrong.max_wrong_ref);
        }
    }
    char case_name[64], meshes[64];
    snprintf(case_name, sizeof case_name, "%s/%s", spec->name, first_only ? "first" : "all");
    snprintf(meshes, sizeof meshes, "%s-%s", poses->setups[0].a->name, poses->setups[0].b->name);
    for (int k = 0; k < COUNT; k++) {
        sweep_emit(case_name, meshes, first_only, poses, &slots[k], ids[k], &tally[k],
                   ctx[k].repeat, fcl_ns);
        for (int i = 0; i < poses->count; i++) {
            collide_ctx_free(&ctx[k].queries[i]);
        }
        free(ctx[k].queries);
    }
}

static void sweep_case_run(const sweep_spec* spec, mid_mesh* a, mid_mesh* b,
                           const bench_options* opt)
{
    char all_name[64], first_name[64];
    snprintf(all_name, sizeof all_name, "%s/all", spec->name);
    snprintf(first_name, sizeof first_name, "%s/first", spec->name);
    const bool run_all = bench_case_selected(opt, all_name);
    const bool run_first = bench_case_selected(opt, first_name);
    if (!run_all && !run_first) {
        return;
    }
    sweep_pose_set poses = sweep_poses_make(spec, a, b, opt);
    long long reference_pairs = 0;
    int touching = 0;
    for (int i = 0; i < poses.count; i++) {
        reference_pairs += poses.setups[i].nref;
        touching += poses.setups[i].nref > 0;
    }
    bench_note("case %s: %d poses, %d with intersecting pairs (%lld pairs in all, carom, AABB "
               "tree)", spec->name, poses.count, touching, reference_pairs);
    if (run_all) {
        sweep_mode(spec, &poses, false, opt);
    }
    if (run_first) {
        sweep_mode(spec, &poses, true, opt);
    }
    sweep_poses_free(&poses);
}

// ---- building the trees ------------------------------------------------------------

typedef struct build_ctx {
    impl_id id;
    const mid_mesh* mesh;
    int failures;         // builds that returned an error
    carom_status status;  // carom: the last error
    bench_tree_info info; // of the last build
    int depth;            // carom
    size_t total_bytes;   // carom: everything the mesh owns
} build_ctx;

// Builds the tree and frees it again: one build per run (each takes
// milliseconds), freeing included in the time.
static void run_build(void* arg)
{
    build_ctx* c = arg;
    if (is_carom(c->id)) {
        carom_mesh m;
        carom_status st = carom_build(c->mesh, (int)c->id, &m);
        if (st != CAROM_OK) {
            c->failures++;
            c->status = st;
            return;
        }
        c->info.node_count = m.node_count;
        c->info.tree_bytes = m.tree_bytes;
        c->depth = m.depth;
        c->total_bytes = m.total_bytes;
        carom_mesh_destroy(&m);
    } else if (c->id == IMPL_BULLET) {
        void* m = bench_bullet_mesh_build(&c->mesh->desc);
        if (m == NULL) {
            c->failures++;
            return;
        }
        c->info = bench_bullet_mesh_info(m);
        bench_bullet_mesh_destroy(m);
    } else {
        void* m = bench_fcl_mesh_build(&c->mesh->desc,
                                       c->id == IMPL_FCL_OBBRSS ? BENCH_FCL_OBBRSS : BENCH_FCL_AABB);
        if (m == NULL) {
            c->failures++;
            return;
        }
        c->info = bench_fcl_mesh_info(m);
        bench_fcl_mesh_destroy(m);
    }
}

static void build_case_run(const char* name, const mid_mesh* mesh, const bench_options* opt)
{
    if (!bench_case_selected(opt, name)) {
        return;
    }
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH,
                                  IMPL_FCL_OBBRSS, IMPL_FCL_AABB, IMPL_BULLET};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    bench_note("case %s: %d triangles, %d vertices", name, mesh->data.triangle_count,
               mesh->data.vertex_count);
    build_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    for (int k = 0; k < COUNT; k++) {
        memset(&ctx[k], 0, sizeof ctx[k]);
        ctx[k].id = ids[k];
        ctx[k].mesh = mesh;
        // No repeat: a build is long enough to time alone.
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_build, &ctx[k], 0, 0}, ids[k], NULL, 1};
    }
    measure_slots(slots, NULL, COUNT, opt);

    double fcl_ns = 0;
    for (int k = 0; k < COUNT; k++) {
        if (ids[k] == IMPL_FCL_OBBRSS && ctx[k].failures == 0) {
            fcl_ns = slots[k].impl.ns_per_op;
        }
    }
    const int tris = mesh->data.triangle_count;
    for (int k = 0; k < COUNT; k++) {
        const build_ctx* c = &ctx[k];
        char check[96];
        if (c->failures == 0) {
            snprintf(check, sizeof check, "ok");
        } else if (is_carom(c->id)) {
            snprintf(check, sizeof check, "%d builds failed: %s", c->failures,
                     carom_status_string(c->status));
        } else {
            snprintf(check, sizeof check, "%d builds failed", c->failures);
        }
        bench_json j;
        bench_json_begin(&j, "mid", name, slots[k].impl.name, 1, slots[k].impl.ns_per_op, check);
        bench_json_str(&j, "mode", "build");
        bench_json_num(&j, "build_ms", slots[k].impl.ns_per_op * 1e-6);
        bench_json_int(&j, "triangles", tris);
        bench_json_int(&j, "nodes", c->info.node_count);
        bench_json_int(&j, "tree_bytes", (long long)c->info.tree_bytes);
        bench_json_num(&j, "bytes_per_triangle", tris > 0 ? (double)c->info.tree_bytes / tris : 0.0);
        if (is_carom(c->id)) {
            bench_json_int(&j, "depth", c->depth);
            bench_json_int(&j, "total_bytes", (long long)c->total_bytes);
        }
        bench_json_num(&j, "ns_min", slots[k].impl.ns_min);
        if (c->id != IMPL_FCL_OBBRSS && fcl_ns > 0) {
            bench_json_num(&j, "ratio_vs_fcl_obbrss", slots[k].impl.ns_per_op / fcl_ns);
        }
        bench_json_emit(&j);
    }
}

// ---- ray casts -------------------------------------------------------------------------

typedef struct ray_ctx {
    impl_id id;
    int repeat;
    const carom_mesh* mesh;
    carom_xform pose;
    carom_ray_mode mode;
    const carom_ray* rays;
    int n;
    void* bullet;
    bench_ray_hit* out;
    int not_done;  // carom answers whose state was not CAROM_DONE
} ray_ctx;

static void run_rays(void* arg)
{
    ray_ctx* c = arg;
    for (int r = 0; r < c->repeat; r++) {
        if (c->bullet != NULL) {
            bench_bullet_raycast(c->bullet, c->out);
            continue;
        }
        int not_done = 0;
        for (int i = 0; i < c->n; i++) {
            carom_mesh_hit h = carom_mesh_raycast(c->mesh, c->pose, c->rays[i], c->mode);
            c->out[i].hit = h.hit;
            c->out[i].triangle = h.triangle;
            c->out[i].fraction = h.fraction;
            not_done += h.state != CAROM_DONE;
        }
        c->not_done = not_done;
    }
}

// Rays from points on a sphere around the mesh (centre of its box, radius
// 0.75 of the box diagonal, uniform directions) through uniform points of
// its box and on as far again, so that every ray crosses the whole box: a
// mix of hits and misses. Built in the mesh's frame, then moved to world
// with its pose and rounded to float once; every implementation gets these
// floats.
static void make_rays(const mid_mesh* m, const bench_pose* pose, int n, uint64_t seed,
                      carom_ray* rays, bench_ray* peer_rays)
{
    const frame f = frame_of(pose);
    double diag = 0;
    for (int k = 0; k < 3; k++) {
        diag += ((double)m->hi[k] - m->lo[k]) * ((double)m->hi[k] - m->lo[k]);
    }
    const double radius = 0.75 * sqrt(diag);
    bench_rng rng = bench_rng_seed(seed);
    for (int i = 0; i < n; i++) {
        double dir[3], origin[3], target[3], local_d[3], world_o[3], world_d[3];
        bench_rng_direction(&rng, dir);
        for (int k = 0; k < 3; k++) {
            origin[k] = m->centre[k] + radius * dir[k];
            target[k] = bench_rng_range(&rng, m->lo[k], m->hi[k]);
            local_d[k] = 2.0 * (target[k] - origin[k]);
        }
        mat_apply(&f.r[0][0], origin, world_o);
        mat_apply(&f.r[0][0], local_d, world_d);
        for (int k = 0; k < 3; k++) {
            rays[i].origin.raw[k] = (float)(world_o[k] + f.t[k]);
            rays[i].translation.raw[k] = (float)world_d[k];
            peer_rays[i].origin[k] = rays[i].origin.raw[k];
            peer_rays[i].translation[k] = rays[i].translation.raw[k];
        }
    }
}

// The double reference of a ray case: the mesh's triangles in world
// coordinates and their boxes grown by the touching band.
typedef struct ray_world {
    const mid_mesh* mesh;
    double (*vertices)[3];
    double (*boxes)[6];  // lo xyz, hi xyz
    double band;
} ray_world;

static ray_world ray_world_make(const mid_mesh* m, const bench_pose* pose, double band)
{
    ray_world w = {m, NULL, NULL, band};
    const frame f = frame_of(pose);
    w.vertices = xmalloc(sizeof(double[3]) * (size_t)m->data.vertex_count);
    w.boxes = xmalloc(sizeof(double[6]) * (size_t)m->data.triangle_count);
    for (int i = 0; i < m->data.vertex_count; i++) {
        frame_apply(&f, m->data.vertices[i], w.vertices[i]);
    }
    for (int t = 0; t < m->data.triangle_count; t++) {
        for (int k = 0; k < 3; k++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int j = 0; j < 3; j++) {
                double v = w.vertices[m->data.triangles[t][j]][k];
                lo = fmin(lo, v), hi = fmax(hi, v);
            }
            w.boxes[t][k] = lo - band;
            w.boxes[t][3 + k] = hi + band;
        }
    }
    return w;
}

// Does segment o + s d, s in [0, 1], meet the box? (slabs)
static bool segment_meets_box(const double o[3], const double d[3], const double box[6])
{
    double s0 = 0, s1 = 1;
    for (int k = 0; k < 3; k++) {
        if (d[k] == 0) {
            if (o[k] < box[k] || o[k] > box[3 + k]) {
                return false;
            }
            continue;
        }
        double a = (box[k] - o[k]) / d[k], b = (box[3 + k] - o[k]) / d[k];
        s0 = fmax(s0, fmin(a, b));
        s1 = fmin(s1, fmax(a, b));
        if (s0 > s1) {
            return false;
        }
    }
    return true;
}

// One ray against one triangle in double: the distance between the
// segment and the triangle, the fraction of the segment's closest point
// (the crossing when they meet), and whether the crossing is certain in
// float: at least the band away from every edge, at more than 0.01 rad to
// the triangle's plane. Nearly parallel crossings report no fraction
// (*fraction = NAN): any point of the overlap will do.
typedef struct ray_segment {
    double o[3], d[3], e[3], dd;
} ray_segment;

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static ray_segment ray_segment_of(const carom_ray* ray)
{
    ray_segment r;
    for (int k = 0; k < 3; k++) {
        r.o[k] = ray->origin.raw[k];
        r.d[k] = ray->translation.raw[k];
        r.e[k] = r.o[k] + r.d[k];
    }
    r.dd = dot3(r.d, r.d);
    return r;
}

static double ray_triangle(const ray_world* w, const ray_segment* r, int tri, double* fraction,
                           bool* robust)
{
    const int* idx = w->mesh->data.triangles[tri];
    const double* v[3] = {w->vertices[idx[0]], w->vertices[idx[1]], w->vertices[idx[2]]};
    double cs[3], ct[3], rel[3], e1[3], e2[3], n[3];
    double dist = ref_segment_triangle(r->o, r->e, v[0], v[1], v[2], cs, ct);
    for (int k = 0; k < 3; k++) {
        rel[k] = cs[k] - r->o[k];
        e1[k] = v[1][k] - v[0][k];
        e2[k] = v[2][k] - v[0][k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double nn = sqrt(dot3(n, n));
    bool steep = nn > 0 && fabs(dot3(n, r->d)) >= 0.01 * nn * sqrt(r->dd);
    *fraction = steep && r->dd > 0 ? dot3(rel, r->d) / r->dd : NAN;
    *robust = dist == 0 && steep;
    for (int j = 0; j < 3 && *robust; j++) {
        *robust = ref_point_segment(ct, v[j], v[(j + 1) % 3], NULL) > w->band;
    }
    return dist;
}

// What the double reference says about one ray: is there a certain hit,
// and where is the nearest one.
typedef struct ray_truth {
    bool robust;
    double f_robust;  // least fraction of a certain hit
} ray_truth;

static ray_truth ray_reference(const ray_world* w, const carom_ray* ray)
{
    ray_truth t = {false, INFINITY};
    const ray_segment r = ray_segment_of(ray);
    for (int tri = 0; tri < w->mesh->data.triangle_count; tri++) {
        if (!segment_meets_box(r.o, r.d, w->boxes[tri])) {
            continue;
        }
        double f;
        bool robust;
        ray_triangle(w, &r, tri, &f, &robust);
        if (robust) {
            t.robust = true;
            t.f_robust = fmin(t.f_robust, f);
        }
    }
    return t;
}

// Is an answer right by the reference? A miss is right when no hit is
// certain. A hit is right when its triangle is within the band of the ray
// at the reported fraction (within ftol) and, for a closest-hit query, no
// certain hit lies nearer (by more than ftol).
static bool ray_judge(const ray_world* w, const carom_ray* ray, const ray_truth* t,
                      const bench_ray_hit* h, bool closest, double ftol)
{
    if (!h->hit) {
        return !t->robust;
    }
    if (h->triangle < 0 || h->triangle >= w->mesh->data.triangle_count) {
        return false;
    }
    const ray_segment r = ray_segment_of(ray);
    double f;
    bool robust;
    if (ray_triangle(w, &r, h->triangle, &f, &robust) > w->band) {
        return false;
    }
    if (!isnan(f) && fabs(h->fraction - f) > ftol) {
        return false;
    }
    return !closest || !t->robust || h->fraction <= t->f_robust + ftol;
}

typedef struct ray_case {
    const char* name;
    mid_mesh* mesh;
    uint64_t seed;
} ray_case;

// How one implementation's rays compare with carom's and with the double
// reference.
typedef struct ray_tally {
    int hits;
    int differ_hit;     // hit against miss, compared with carom
    int differ_frac;    // both hit, fractions apart by more than the tolerance
    double max_frac;    // largest such gap, as a distance (fraction * |translation|)
    int wrong;          // resolved rays this implementation gets wrong
    int wrong_ref;      // differing rays carom gets wrong
    int either;         // differing rays where both answers are accepted
    int unresolved;     // differing rays left unresolved (beyond MAX_RESOLVED)
    char check[200];
} ray_tally;

static double ray_length(const carom_ray* r)
{
    const vec3s d = r->translation;
    return sqrt((double)d.raw[0] * d.raw[0] + (double)d.raw[1] * d.raw[1] +
                (double)d.raw[2] * d.raw[2]);
}

// Does answer h differ from carom's closest hit h0? An any-hit answer may
// lie farther along the ray.
static bool ray_differs(const bench_ray_hit* h0, const bench_ray_hit* h, bool closest, double ftol,
                        ray_tally* t, double length)
{
    if (h0->hit != h->hit) {
        t->differ_hit++;
        return true;
    }
    if (!h->hit) {
        return false;
    }
    double gap = (double)h->fraction - h0->fraction;
    if (closest ? fabs(gap) <= ftol : gap >= -ftol) {
        return false;
    }
    t->differ_frac++;
    t->max_frac = fmax(t->max_frac, fabs(gap) * length);
    return true;
}

static void ray_check_text(ray_tally* t, bool reference, int n, int resolved)
{
    int differ = t->differ_hit + t->differ_frac;
    if (differ == 0 && t->wrong == 0) {
        snprintf(t->check, sizeof t->check, "ok");
    } else if (reference || differ == 0) {
        snprintf(t->check, sizeof t->check, "%d/%d checked rays wrong per the double reference",
                 t->wrong, resolved);
    } else {
        int w = snprintf(t->check, sizeof t->check,
                         "%d/%d differ from carom (%d hit/miss, %d fraction by up to %.2g); double "
                         "reference: %d wrong here, %d in carom, %d either way",
                         differ, n, t->differ_hit, t->differ_frac, t->max_frac, t->wrong,
                         t->wrong_ref, t->either);
        if (t->unresolved > 0) {
            snprintf(t->check + w, sizeof t->check - (size_t)w, ", %d unresolved", t->unresolved);
        }
    }
}

// Compares every implementation with carom (slot 0) and settles the
// differences, plus a spread sample, with the double reference.
static int ray_checks(const ray_world* w, const carom_ray* rays, int n, ray_ctx* ctx,
                      const impl_id* ids, int count, ray_tally* tally, const bench_options* opt)
{
    unsigned char* differs = xmalloc((size_t)n * (size_t)count);
    unsigned char* resolve = calloc((size_t)n, 1);
    if (resolve == NULL) {
        fail("out of memory");
    }
    const double tol = RAY_TOL * w->mesh->size;
    int disputed = 0;
    for (int i = 0; i < n; i++) {
        const double length = ray_length(&rays[i]);
        const double ftol = tol / length;
        bool any = false;
        for (int k = 0; k < count; k++) {
            tally[k].hits += ctx[k].out[i].hit != 0;
            differs[(size_t)i * count + k] =
                k > 0 && ray_differs(&ctx[0].out[i], &ctx[k].out[i], ids[k] != IMPL_CAROM_ANY,
                                     ftol, &tally[k], length);
            any = any || differs[(size_t)i * count + k];
        }
        if (any && disputed < MAX_RESOLVED) {
            resolve[i] = 1;
        }
        disputed += any;
    }
    const int sample = opt->quick ? QUICK_RAY_SAMPLE : RAY_SAMPLE;
    const int stride = n > sample ? n / sample : 1;
    for (int i = 0; i < n; i += stride) {
        resolve[i] = 1;
    }
    int resolved = 0;
    for (int i = 0; i < n; i++) {
        const double ftol = tol / ray_length(&rays[i]);
        ray_truth truth = {false, INFINITY};
        if (resolve[i]) {
            truth = ray_reference(w, &rays[i]);
            resolved++;
        }
        bool carom_ok = !resolve[i] || ray_judge(w, &rays[i], &truth, &ctx[0].out[i], true, ftol);
        for (int k = 0; k < count; k++) {
            bool ok = !resolve[i] || ray_judge(w, &rays[i], &truth, &ctx[k].out[i],
                                               ids[k] != IMPL_CAROM_ANY, ftol);
            tally[k].wrong += !ok;
            if (!ok && opt->verbose && tally[k].wrong <= 4) {
                const bench_ray_hit* h = &ctx[k].out[i];
                bench_note("  ray %d: %s hit=%d triangle=%d fraction=%.9g; reference: %s %.9g", i,
                           IMPL_NAME[ids[k]], h->hit, h->triangle, h->fraction,
                           truth.robust ? "certain hit at" : "no certain hit", truth.f_robust);
            }
            if (!differs[(size_t)i * count + k]) {
                continue;
            }
            if (!resolve[i]) {
                tally[k].unresolved++;
            } else if (ok && carom_ok) {
                tally[k].either++;
            } else if (!carom_ok) {
                tally[k].wrong_ref++;
            }
        }
    }
    if (disputed > 0) {
        bench_note("  %d rays disputed, %d resolved in double", disputed, resolved);
    }
    free(differs);
    free(resolve);
    return resolved;
}

static void ray_case_run(const ray_case* rc, const bench_options* opt)
{
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH, IMPL_CAROM_ANY,
                                  IMPL_BULLET};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    const int n = opt->quick ? QUICK_RAYS : RAYS;
    mid_mesh* m = rc->mesh;
    const bench_pose pose = pose_first();
    carom_ray* rays = xmalloc(sizeof(carom_ray) * (size_t)n);
    bench_ray* peer_rays = xmalloc(sizeof(bench_ray) * (size_t)n);
    make_rays(m, &pose, n, rc->seed, rays, peer_rays);
    bench_note("case %s: %d rays against %d triangles", rc->name, n, m->data.triangle_count);

    ray_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    double single[COUNT];
    for (int k = 0; k < COUNT; k++) {
        ray_ctx* c = &ctx[k];
        memset(c, 0, sizeof *c);
        c->id = ids[k];
        c->repeat = 1;
        c->n = n;
        c->rays = rays;
        c->pose = to_xform(&pose);
        c->out = xmalloc(sizeof(bench_ray_hit) * (size_t)n);
        if (ids[k] == IMPL_BULLET) {
            c->bullet = bench_bullet_raycast_prepare(mesh_bullet(m), &pose, peer_rays, n);
            if (c->bullet == NULL) {
                fail("Bullet ray casts could not be prepared");
            }
        } else {
            c->mesh = mesh_carom(m, ids[k] == IMPL_CAROM_ANY ? 0 : (int)ids[k]);
            c->mode = ids[k] == IMPL_CAROM_ANY ? CAROM_RAY_ANY : CAROM_RAY_CLOSEST;
        }
        double t0 = bench_now_ns();
        run_rays(c);
        single[k] = bench_now_ns() - t0;
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_rays, c, 0, 0}, ids[k], &c->repeat, n};
    }
    measure_slots(slots, single, COUNT, opt);

    ray_world w = ray_world_make(m, &pose, TOUCH_BAND * m->size);
    ray_tally tally[COUNT];
    memset(tally, 0, sizeof tally);
    int resolved = ray_checks(&w, rays, n, ctx, ids, COUNT, tally, opt);
    double bullet_ns = slots[COUNT - 1].impl.ns_per_op;
    for (int k = 0; k < COUNT; k++) {
        ray_check_text(&tally[k], k == 0, n, resolved);
        if (is_carom(ids[k]) && ctx[k].not_done > 0) {
            snprintf(tally[k].check, sizeof tally[k].check, "%d rays not done", ctx[k].not_done);
        }
        bench_json j;
        bench_json_begin(&j, "mid", rc->name, slots[k].impl.name, n, slots[k].impl.ns_per_op,
                         tally[k].check);
        bench_json_str(&j, "mode", ids[k] == IMPL_CAROM_ANY ? "ray-any" : "ray-closest");
        bench_json_int(&j, "triangles", m->data.triangle_count);
        bench_json_int(&j, "hits", tally[k].hits);
        bench_json_int(&j, "resolved", resolved);
        bench_json_num(&j, "ns_min", slots[k].impl.ns_min);
        bench_json_int(&j, "repeat", ctx[k].repeat);
        if (ids[k] != IMPL_BULLET) {
            bench_json_num(&j, "ratio_vs_bullet_bvh", slots[k].impl.ns_per_op / bullet_ns);
        }
        bench_json_emit(&j);
    }
    for (int k = 0; k < COUNT; k++) {
        if (ctx[k].bullet != NULL) {
            bench_bullet_raycast_destroy(ctx[k].bullet);
        }
        free(ctx[k].out);
    }
    free(w.vertices);
    free(w.boxes);
    free(rays);
    free(peer_rays);
}

// ---- cases ----------------------------------------------------------------------------

typedef struct mesh_table {
    mid_mesh mesh[MESH_COUNT];
    bool loaded[MESH_COUNT];
} mesh_table;

// Meshes load on first use, so that --case loads only what it needs. The
// armadillo is scaled to the bunny's largest extent and centred on its box;
// the bunny and the house stay as their files have them.
static mid_mesh* get_mesh(mesh_table* t, int which)
{
    if (!t->loaded[which]) {
        switch (which) {
        case MESH_BUNNY:
            mesh_open(&t->mesh[which], "bunny", "meshes/bunny00.off", 0);
            break;
        case MESH_ARMADILLO:
            mesh_open(&t->mesh[which], "armadillo", "meshes/armadillo.off",
                      get_mesh(t, MESH_BUNNY)->size);
            break;
        default:
            mesh_open(&t->mesh[which], "house", "assimp/IFC/AC14-FZK-Haus.ifc", 0);
            break;
        }
        t->loaded[which] = true;
        const mid_mesh* m = &t->mesh[which];
        bench_note("%s: %d triangles, %d vertices, size %.6g", m->name, m->data.triangle_count,
                   m->data.vertex_count, m->size);
    }
    return &t->mesh[which];
}

// Cases outside the quick set run under --quick only when --case names them.
static bool wanted(const bench_options* opt, const char* name, bool quick)
{
    if (opt->quick && !quick && opt->only_case == NULL) {
        return false;
    }
    char all_name[80], first_name[80];
    snprintf(all_name, sizeof all_name, "%s/all", name);
    snprintf(first_name, sizeof first_name, "%s/first", name);
    return bench_case_selected(opt, name) || bench_case_selected(opt, all_name) ||
           bench_case_selected(opt, first_name);
}

// The bunny's largest extent is 0.998 (x), its box centre (0.00013,
// 0.00017, -0.0002).
static const collide_spec COLLIDE_SPECS[] = {
    // Moved 0.8 along (1, 0.25, 0.1): the copies begin to touch at 0.8033
    // (found by bisection), so they interpenetrate by ~0.003 along that
    // direction; a few dozen pairs.
    {"bunny-grazing", MESH_BUNNY, MESH_BUNNY, {0.2, 1.0, 0.1}, 0.5,
     {0.772484, 0.193121, 0.0772484}, false},
    // A quarter of the size off and turned 0.8 rad: a large overlap.
    {"bunny-deep", MESH_BUNNY, MESH_BUNNY, {1.0, -0.5, 0.3}, 0.8, {0.22, 0.12, -0.08}, true},
    // Turned 0.01 rad about its centre: the surfaces cross almost everywhere.
    {"bunny-coincident", MESH_BUNNY, MESH_BUNNY, {0.3, 0.9, -0.2}, 0.01, {0, 0, 0}, false},
    // The armadillo (scaled) and the bunny turned 1.2 rad and moved a little.
    {"armadillo-bunny", MESH_ARMADILLO, MESH_BUNNY, {0.4, 0.2, 1.0}, 1.2, {0.1, 0.15, 0.05}, false},
};

static const sweep_spec SWEEP_SPECS[] = {
    {"bunny-grazing-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_GRAZING, 0x67a2e, false},
    {"bunny-deep-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_DEEP, 0xdee9, true},
    {"bunny-coincident-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_COINCIDENT, 0xc0c1, false},
    {"armadillo-bunny-sweep", MESH_ARMADILLO, MESH_BUNNY, SWEEP_DEEP, 0xa7a0, false},
};

static bool reps_given(int argc, char** argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0) {
            return true;
        }
    }
    return false;
}

int main(int argc, char** argv)
{
    bench_options opt = bench_parse_options(argc, argv, "carom_bench_mid");
    if (opt.quick && !reps_given(argc, argv)) {
        // A smoke test: one timed round after the warm-up (FCL's OBBRSS
        // build alone takes ~0.4 s a round).
        opt.reps = 1;
    }
    bench_note("carom_bench_mid: %d reps%s", opt.reps, opt.quick ? " (quick)" : "");
    mesh_table meshes;
    memset(&meshes, 0, sizeof meshes);

    for (size_t k = 0; k < sizeof COLLIDE_SPECS / sizeof COLLIDE_SPECS[0]; k++) {
        const collide_spec* spec = &COLLIDE_SPECS[k];
        if (!wanted(&opt, spec->name, spec->quick)) {
            continue;
        }
        collide_case_run(spec, get_mesh(&meshes, spec->a), get_mesh(&meshes, spec->b), &opt);
    }
    for (size_t k = 0; k < sizeof SWEEP_SPECS / sizeof SWEEP_SPECS[0]; k++) {
        const sweep_spec* spec = &SWEEP_SPECS[k];
        if (!wanted(&opt, spec->name, spec->quick)) {
            continue;
        }
        sweep_case_run(spec, get_mesh(&meshes, spec->a), get_mesh(&meshes, spec->b), &opt);
    }
    if (wanted(&opt, "build-bunny", true)) {
        build_case_run("build-bunny", get_mesh(&meshes, MESH_BUNNY), &opt);
    }
    if (wanted(&opt, "build-armadillo", false)) {
        build_case_run("build-armadillo", get_mesh(&meshes, MESH_ARMADILLO), &opt);
    }
    if (wanted(&opt, "ray-bunny", true)) {
        ray_case rc = {"ray-bunny", get_mesh(&meshes, MESH_BUNNY), 0xb0b};
        ray_case_run(&rc, &opt);
    }
    if (wanted(&opt, "ray-house", true)) {
        ray_case rc = {"ray-house", get_mesh(&meshes, MESH_HOUSE), 0x4005e};
        ray_case_run(&rc, &opt);
    }

    for (int k = 0; k < MESH_COUNT; k++) {
        if (meshes.loaded[k]) {
            mesh_close(&meshes.mesh[k]);
        }
    }
    return 0;
}
