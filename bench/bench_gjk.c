// bench_gjk: GJK distance and boolean intersection, carom against libccd, FCL
// and Bullet, on identical inputs, checked against a double-precision
// brute-force reference (carom_testkit's ref_polytope_*).
//
// Cases (see README.md):
//   <pair>/distance            separated pairs of 4096 random pose pairs
//   <pair>/intersect           all 4096 pairs, about 30% overlapping
//   <pair>/coherent-distance   1000 frames of B orbiting and approaching A
//   <pair>/coherent-intersect  the same frames, boolean
// for pairs box-box, geo-geo (hull of CGAL's geosphere, 162 vertices),
// bunny-bunny (hull of CGAL's bunny00) and capsule-box; the coherent cases
// for box-box and geo-geo, where carom keeps a carom_gjk_cache per pair.
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <carom/carom.h>

#include "harness.h"
#include "mesh_io.h"
#include "peers.h"
#include "pose_xform.h"
#include "reference.h"

// ---- sizes ------------------------------------------------------------------

enum {
    RANDOM_PAIRS = 4096,
    // The bunny hull's brute-force reference is the slow part of the run
    // (2632 vertices; ~1.6 ms per query, 7 s for 4096, on this machine).
    // Lower this if the reference gets slower: "pairs" and "n" in the JSON
    // lines always say how many queries a case had.
    BUNNY_PAIRS = 4096,
    COHERENT_FRAMES = 1000,
    QUICK_PAIRS = 256,
    QUICK_BUNNY_PAIRS = 64,
    QUICK_FRAMES = 100,
};

// Agreement tolerances, relative to the size (largest extent) of the larger
// shape of the pair. Inputs are float (carom's precision): a pose component
// near 2 carries a rounding of ~2.4e-7, and a float GJK that stops at a
// relative improvement of 1e-5 is accurate to about that fraction of the
// distance. 1e-4 of the size plus 1e-4 of the distance leaves room for both
// and still catches any wrong answer (a wrong closest feature is off by far
// more on these unit-size shapes).
#define DIST_ABS_TOL 1e-4 // times size
#define DIST_REL_TOL 1e-4 // times the reference distance
// Touching pairs: reference distance in (0, TOUCH_BAND], or overlapping so
// shallowly that shrinking each shape about its centre by at most
// TOUCH_BAND / 2 separates them. Either boolean answer is accepted for them
// (float inputs cannot settle such contacts), and the random distance
// queries leave them out. Absolute: every shape here is about unit size.
#define TOUCH_BAND 1e-5

// ---- shapes -----------------------------------------------------------------

typedef struct gjk_shape {
    const char* name;
    bench_shape desc;          // what the peers see
    bench_hull_geometry geo;   // hull: extreme points and faces (qhull)
    carom_hull hull;           // hull: carom's own build from the same points
    carom_shape carom;
    ref_polytope ref;          // box and hull: local-frame polytope
    ref_polytope ref_small;    // the same shrunk by `shrink` about the origin
    bool is_capsule;           // capsule: segment seg0-seg1 rounded by radius
    double seg0[3], seg1[3], radius;
    double shrink;             // 1 - TOUCH_BAND / 2 / bounding_radius
    double bounding_radius;    // max distance of the shape from its origin
} gjk_shape;

static void fail(const char* what)
{
    fprintf(stderr, "bench_gjk: %s\n", what);
    exit(1);
}

// The reference polytopes of a box or hull from its points (x y z doubles):
// as given, and shrunk about the origin for the touching test. Needs
// bounding_radius.
static void build_reference(gjk_shape* s, const double* pts, int count)
{
    s->shrink = 1.0 - 0.5 * TOUCH_BAND / s->bounding_radius;
    double* small = malloc(sizeof(double) * 3 * (size_t)count);
    if (small == NULL) {
        fail("out of memory");
    }
    for (int i = 0; i < 3 * count; i++) {
        small[i] = pts[i] * s->shrink;
    }
    if (ref_polytope_build(&s->ref, (const double(*)[3])pts, count) != REF_POLYTOPE_OK ||
        ref_polytope_build(&s->ref_small, (const double(*)[3])small, count) != REF_POLYTOPE_OK) {
        fail("reference polytope build failed");
    }
    free(small);
}

static void make_box(gjk_shape* s, float half)
{
    memset(s, 0, sizeof *s);
    s->name = "box";
    s->desc.kind = BENCH_SHAPE_BOX;
    for (int k = 0; k < 3; k++) {
        s->desc.half_extents[k] = half;
    }
    s->desc.size = 2.0f * half;
    s->carom = carom_box((vec3s){{half, half, half}});
    double corners[8][3];
    for (int i = 0; i < 8; i++) {
        corners[i][0] = (i & 1) ? half : -half;
        corners[i][1] = (i & 2) ? half : -half;
        corners[i][2] = (i & 4) ? half : -half;
    }
    s->bounding_radius = sqrt(3.0) * half;
    build_reference(s, corners[0], 8);
}

static void make_capsule(gjk_shape* s, float half_height, float radius)
{
    memset(s, 0, sizeof *s);
    s->name = "capsule";
    s->desc.kind = BENCH_SHAPE_CAPSULE;
    s->desc.half_height = half_height;
    s->desc.radius = radius;
    s->desc.size = 2.0f * (half_height + radius);
    s->carom = carom_capsule((vec3s){{0, 0, -half_height}}, (vec3s){{0, 0, half_height}}, radius);
    s->is_capsule = true;
    s->seg0[2] = -half_height;
    s->seg1[2] = half_height;
    s->radius = radius;
    s->bounding_radius = half_height + radius;
    s->shrink = 1.0 - 0.5 * TOUCH_BAND / s->bounding_radius;
}

// The convex hull of a CGAL sample mesh, scaled so that its largest extent is
// 1 and centred on the mean of its hull vertices (a point inside, which
// libccd's MPR needs as the shape's centre).
static void make_hull(gjk_shape* s, const char* name, const char* mesh_name)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    mesh_data mesh;
    int rc = mesh_load_named(mesh_name, &mesh);
    if (rc != MESH_OK) {
        fprintf(stderr, "bench_gjk: cannot load %s/%s: %s (run scripts/fetch-data.sh, or set "
                        "CAROM_DATA_DIR)\n",
                mesh_data_dir(), mesh_name, mesh_strerror(rc));
        exit(1);
    }
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < mesh.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            lo[k] = fminf(lo[k], mesh.vertices[i][k]);
            hi[k] = fmaxf(hi[k], mesh.vertices[i][k]);
        }
    }
    float extent = fmaxf(hi[0] - lo[0], fmaxf(hi[1] - lo[1], hi[2] - lo[2]));
    float* pts = malloc(sizeof(float) * 3 * (size_t)mesh.vertex_count);
    if (pts == NULL || extent <= 0) {
        fail("bad mesh");
    }
    for (int i = 0; i < mesh.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            pts[3 * i + k] = (mesh.vertices[i][k] - 0.5f * (lo[k] + hi[k])) / extent;
        }
    }
    if (bench_hull_compute(pts, mesh.vertex_count, &s->geo) != 0) {
        fail("qhull failed");
    }
    free(pts);
    mesh_free(&mesh);
    double mean[3] = {0, 0, 0};
    for (int i = 0; i < s->geo.point_count; i++) {
        for (int k = 0; k < 3; k++) {
            mean[k] += s->geo.points[3 * i + k];
        }
    }
    for (int k = 0; k < 3; k++) {
        mean[k] /= s->geo.point_count;
    }
    double* dpts = malloc(sizeof(double) * 3 * (size_t)s->geo.point_count);
    vec3s* vpts = malloc(sizeof(vec3s) * (size_t)s->geo.point_count);
    if (dpts == NULL || vpts == NULL) {
        fail("out of memory");
    }
    for (int i = 0; i < s->geo.point_count; i++) {
        double r2 = 0;
        for (int k = 0; k < 3; k++) {
            float v = (float)(s->geo.points[3 * i + k] - mean[k]);
            s->geo.points[3 * i + k] = v;
            vpts[i].raw[k] = v;
            dpts[3 * i + k] = v;
            r2 += (double)v * v;
        }
        s->bounding_radius = fmax(s->bounding_radius, sqrt(r2));
    }
    s->desc.kind = BENCH_SHAPE_HULL;
    s->desc.points = s->geo.points;
    s->desc.point_count = s->geo.point_count;
    s->desc.face_first = s->geo.face_first;
    s->desc.face_vertices = s->geo.face_vertices;
    s->desc.face_count = s->geo.face_count;
    s->desc.size = 1.0f;
    carom_status st = carom_hull_build(&s->hull, vpts, s->geo.point_count);
    if (st != CAROM_OK) {
        fprintf(stderr, "bench_gjk: carom_hull_build(%s): %s\n", name, carom_status_string(st));
        exit(1);
    }
    s->carom = carom_hull_shape(&s->hull);
    build_reference(s, dpts, s->geo.point_count);
    free(dpts);
    free(vpts);
}

static void free_shape(gjk_shape* s)
{
    bench_hull_free(&s->geo);
    carom_hull_destroy(&s->hull);
    ref_polytope_free(&s->ref);
    ref_polytope_free(&s->ref_small);
}

// ---- reference ----------------------------------------------------------------

// B's polytope moved into A's frame, reused from query to query.
typedef struct ref_scratch {
    ref_polytope moved;
    int capacity_verts, capacity_tris;
} ref_scratch;

static void pose_matrix(const bench_pose* p, double m[3][3])
{
    double q[4] = {p->q[0], p->q[1], p->q[2], p->q[3]};
    ref_quat_to_matrix(q, m);
}

// The relative pose of `to` in the frame of `from`: x_from = r x_to + t.
static void relative_pose(const bench_pose* from, const bench_pose* to, double r[3][3], double t[3])
{
    double ra[3][3], rb[3][3];
    pose_matrix(from, ra);
    pose_matrix(to, rb);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            r[i][j] = ra[0][i] * rb[0][j] + ra[1][i] * rb[1][j] + ra[2][i] * rb[2][j];
        }
        t[i] = 0;
        for (int k = 0; k < 3; k++) {
            t[i] += ra[k][i] * ((double)to->p[k] - from->p[k]);
        }
    }
}

// Reference distance of a at pa and b at pb; with `shrunk`, of the shapes
// shrunk about their origins (the touching test).
static double ref_distance(const gjk_shape* a, const bench_pose* pa, const gjk_shape* b,
                           const bench_pose* pb, bool shrunk, ref_scratch* scratch)
{
    if (a->is_capsule || b->is_capsule) {
        if (a->is_capsule && b->is_capsule) {
            fail("capsule-capsule has no reference here");
        }
        const gjk_shape* cap = a->is_capsule ? a : b;
        const gjk_shape* poly = a->is_capsule ? b : a;
        const bench_pose* pc = a->is_capsule ? pa : pb;
        const bench_pose* pp = a->is_capsule ? pb : pa;
        const double k = shrunk ? cap->shrink : 1.0;
        double r[3][3], t[3], s0[3], s1[3];
        relative_pose(pp, pc, r, t);
        for (int i = 0; i < 3; i++) {
            s0[i] = t[i], s1[i] = t[i];
            for (int j = 0; j < 3; j++) {
                s0[i] += r[i][j] * cap->seg0[j] * k;
                s1[i] += r[i][j] * cap->seg1[j] * k;
            }
        }
        const ref_polytope* p = shrunk ? &poly->ref_small : &poly->ref;
        double d = ref_polytope_segment_distance(p, s0, s1, NULL, NULL) - cap->radius * k;
        return d > 0 ? d : 0;
    }
    // Move a copy of B's local polytope into A's frame.
    const ref_polytope* src = shrunk ? &b->ref_small : &b->ref;
    ref_polytope* m = &scratch->moved;
    if (scratch->capacity_verts < src->nverts || scratch->capacity_tris < src->ntris) {
        free(m->verts);
        free(m->planes);
        m->verts = malloc(sizeof(double[3]) * (size_t)src->nverts);
        m->planes = malloc(sizeof(double[4]) * (size_t)(src->ntris > 0 ? src->ntris : 1));
        if (m->verts == NULL || m->planes == NULL) {
            fail("out of memory");
        }
        scratch->capacity_verts = src->nverts;
        scratch->capacity_tris = src->ntris;
    }
    m->nverts = src->nverts;
    m->ntris = src->ntris;
    m->tris = src->tris;  // shared, never modified by ref_polytope_transform
    memcpy(m->verts, src->verts, sizeof(double[3]) * (size_t)src->nverts);
    memcpy(m->planes, src->planes, sizeof(double[4]) * (size_t)src->ntris);
    double r[3][3], t[3];
    relative_pose(pa, pb, r, t);
    ref_polytope_transform(m, r, t);
    return ref_polytope_distance(shrunk ? &a->ref_small : &a->ref, m, NULL, NULL);
}

// The reference answers of a case: distance per pair, and the touching flag
// (see TOUCH_BAND). Computed once, shared by every implementation.
typedef struct reference_set {
    double* distance;
    unsigned char* touching;
    int overlaps;  // reference distance 0
    int touching_count;
} reference_set;

static reference_set reference_compute(const gjk_shape* a, const gjk_shape* b, int n,
                                       const bench_pose* pa, const bench_pose* pb)
{
    reference_set r = {0};
    r.distance = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    r.touching = calloc((size_t)(n > 0 ? n : 1), 1);
    if (r.distance == NULL || r.touching == NULL) {
        fail("out of memory");
    }
    ref_scratch scratch = {0};
    double t0 = bench_now_ns();
    for (int i = 0; i < n; i++) {
        double d = ref_distance(a, &pa[i], b, &pb[i], false, &scratch);
        r.distance[i] = d;
        if (d <= 0.0) {
            r.overlaps++;
            r.touching[i] = ref_distance(a, &pa[i], b, &pb[i], true, &scratch) > 0.0;
        } else {
            r.touching[i] = d <= TOUCH_BAND;
        }
        r.touching_count += r.touching[i];
    }
    bench_note("  reference %s-%s: %d queries in %.2f s", a->name, b->name, n,
               (bench_now_ns() - t0) * 1e-9);
    free(scratch.moved.verts);
    free(scratch.moved.planes);
    return r;
}

// ---- poses --------------------------------------------------------------------

static void set_pose(bench_pose* p, const double pos[3], const double q[4])
{
    for (int k = 0; k < 3; k++) {
        p->p[k] = (float)pos[k];
    }
    for (int k = 0; k < 4; k++) {
        p->q[k] = (float)q[k];
    }
}

// Random pairs: the midpoint anywhere in [-1, 1]^3, the centres `r` apart
// along a random direction with r uniform in [r_lo, r_hi], both orientations
// uniformly random.
static void random_pairs(uint64_t seed, int n, double r_lo, double r_hi, bench_pose* pa,
                         bench_pose* pb)
{
    bench_rng rng = bench_rng_seed(seed);
    for (int i = 0; i < n; i++) {
        double mid[3], dir[3], qa[4], qb[4], ca[3], cb[3];
        for (int k = 0; k < 3; k++) {
            mid[k] = bench_rng_range(&rng, -1.0, 1.0);
        }
        bench_rng_direction(&rng, dir);
        double r = bench_rng_range(&rng, r_lo, r_hi);
        bench_rng_quat(&rng, qa);
        bench_rng_quat(&rng, qb);
        for (int k = 0; k < 3; k++) {
            ca[k] = mid[k] - 0.5 * r * dir[k];
            cb[k] = mid[k] + 0.5 * r * dir[k];
        }
        set_pose(&pa[i], ca, qa);
        set_pose(&pb[i], cb, qb);
    }
}

static void axis_angle_quat(const double axis[3], double angle, double q[4])
{
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double s = sin(0.5 * angle) / len;
    q[0] = axis[0] * s, q[1] = axis[1] * s, q[2] = axis[2] * s, q[3] = cos(0.5 * angle);
}

// Coherent motion: A turns slowly in place at (0.3, -0.2, 0.1); B orbits it
// twice while its orbit radius swings three times between r_lo and r_hi and
// it tumbles about a fixed axis. At 1000 frames B moves about 2% of the
// shape size and turns a third of a degree per frame.
static void coherent_frames(int n, double r_lo, double r_hi, bench_pose* pa, bench_pose* pb)
{
    const double pi = 3.14159265358979323846;
    const double center[3] = {0.3, -0.2, 0.1};
    const double axis_a[3] = {0.2, 1.0, 0.3}, axis_b[3] = {1.0, -0.4, 0.7};
    for (int i = 0; i < n; i++) {
        double t = (double)i / n;  // scale so that the motion per frame is the same for any n
        double orbit = 2.0 * 2.0 * pi * t;
        double radius = 0.5 * (r_lo + r_hi) + 0.5 * (r_hi - r_lo) * cos(3.0 * 2.0 * pi * t);
        double qa[4], qb[4], ca[3], cb[3];
        axis_angle_quat(axis_a, 1.5 * t, qa);
        axis_angle_quat(axis_b, 6.0 * t, qb);
        for (int k = 0; k < 3; k++) {
            ca[k] = center[k];
        }
        cb[0] = center[0] + radius * cos(orbit);
        cb[1] = center[1] + radius * sin(orbit);
        cb[2] = center[2] + 0.25 * radius * sin(2.0 * orbit);
        set_pose(&pa[i], ca, qa);
        set_pose(&pb[i], cb, qb);
    }
}

// ---- the implementations as timed batches ---------------------------------------

typedef struct carom_batch {
    const carom_shape* a;
    const carom_shape* b;
    int n;
    carom_xform* xa;
    carom_xform* xb;
    bool use_cache;
    bench_distance* dist;
    unsigned char* hit;
    long long iterations;
    int not_done;
} carom_batch;

static void run_carom_distance(void* ctx)
{
    carom_batch* c = ctx;
    carom_gjk_cache cache = {0};
    carom_gjk_cache* cp = c->use_cache ? &cache : NULL;
    long long iterations = 0;
    int not_done = 0;
    for (int i = 0; i < c->n; i++) {
        carom_distance_result r = carom_gjk_distance(c->a, c->xa[i], c->b, c->xb[i], cp);
        bench_distance* o = &c->dist[i];
        o->distance = r.distance;
        for (int k = 0; k < 3; k++) {
            o->point_a[k] = r.point_a.raw[k];
            o->point_b[k] = r.point_b.raw[k];
        }
        iterations += r.iterations;
        not_done += r.state != CAROM_DONE;
    }
    c->iterations = iterations;
    c->not_done = not_done;
}

static void run_carom_intersect(void* ctx)
{
    carom_batch* c = ctx;
    carom_gjk_cache cache = {0};
    carom_gjk_cache* cp = c->use_cache ? &cache : NULL;
    long long iterations = 0;
    int not_done = 0;
    for (int i = 0; i < c->n; i++) {
        carom_intersect_result r = carom_gjk_intersect(c->a, c->xa[i], c->b, c->xb[i], cp);
        c->hit[i] = r.overlap ? 1 : 0;
        iterations += r.iterations;
        not_done += r.state != CAROM_DONE;
    }
    c->iterations = iterations;
    c->not_done = not_done;
}

typedef struct peer_batch {
    void* peer;
    void (*distance)(void*, bench_distance*);
    void (*intersect)(void*, unsigned char*);
    bench_distance* dist;
    unsigned char* hit;
} peer_batch;

static void run_peer_distance(void* ctx)
{
    peer_batch* p = ctx;
    p->distance(p->peer, p->dist);
}

static void run_peer_intersect(void* ctx)
{
    peer_batch* p = ctx;
    p->intersect(p->peer, p->hit);
}

// ---- one query set: every implementation, timed, checked, printed --------------

typedef struct query_set {
    char case_name[64];   // "box-box/distance"
    const char* shapes;   // "box-box"
    const char* query;    // "distance" or "intersect"
    const gjk_shape* a;
    const gjk_shape* b;
    int n;
    const bench_pose* pa;
    const bench_pose* pb;
    const double* ref;    // reference distance per query
    const unsigned char* touching; // intersect: either answer accepted (may be NULL)
    int pairs;            // pose pairs the case was drawn from
    bool coherent;        // carom also runs with a cache ("carom") and without ("carom-cold")
} query_set;

enum { MAX_IMPLS = 8 };

typedef struct impl_slot {
    bench_impl impl;
    carom_batch carom;   // carom implementations
    peer_batch peer;     // peers
    bool is_carom;
    bench_distance* dist;
    unsigned char* hit;
    bench_check check;
    double max_error;    // distance: largest |d - ref| over all queries
} impl_slot;

static double size_of_pair(const query_set* q)
{
    return fmax(q->a->desc.size, q->b->desc.size);
}

static void run_query_set(const query_set* q, const bench_options* opt)
{
    const bool distance = strcmp(q->query, "distance") == 0;
    const int n = q->n;
    bench_pairs pairs = {&q->a->desc, &q->b->desc, n, q->pa, q->pb};
    carom_xform* xa = malloc(sizeof(carom_xform) * (size_t)(n > 0 ? n : 1));
    carom_xform* xb = malloc(sizeof(carom_xform) * (size_t)(n > 0 ? n : 1));
    if (xa == NULL || xb == NULL) {
        fail("out of memory");
    }
    for (int i = 0; i < n; i++) {
        xa[i] = bench_pose_xform(&q->pa[i]);
        xb[i] = bench_pose_xform(&q->pb[i]);
    }
    void* ccd = distance ? NULL : bench_ccd_prepare(&pairs);
    void* fcl = bench_fcl_prepare(&pairs);
    void* bullet = bench_bullet_prepare(&pairs);
    if ((!distance && ccd == NULL) || fcl == NULL || bullet == NULL) {
        bench_note("  %s: a peer could not be prepared (libccd %s, FCL %s, Bullet %s); its lines "
                   "are missing",
                   q->case_name, distance ? "n/a" : ccd ? "ok" : "failed", fcl ? "ok" : "failed",
                   bullet ? "ok" : "failed");
    }

    impl_slot slots[MAX_IMPLS];
    int count = 0;
    memset(slots, 0, sizeof slots);
    // carom first; on coherent motion with and without its cache.
    for (int cached = q->coherent ? 1 : 0; cached >= 0; cached--) {
        impl_slot* s = &slots[count++];
        s->is_carom = true;
        s->impl.name = q->coherent ? (cached ? "carom" : "carom-cold") : "carom";
        s->carom = (carom_batch){&q->a->carom, &q->b->carom, n, xa, xb, cached != 0};
        s->impl.run = distance ? run_carom_distance : run_carom_intersect;
        s->impl.ctx = &s->carom;
    }
    struct {
        const char* name;
        void* peer;
        void (*distance)(void*, bench_distance*);
        void (*intersect)(void*, unsigned char*);
    } peers[] = {
        {"libccd-gjk", ccd, NULL, bench_ccd_gjk_intersect},
        {"libccd-mpr", ccd, NULL, bench_ccd_mpr_intersect},
        {"fcl", fcl, bench_fcl_distance, bench_fcl_intersect},
        {"bullet-gjk", bullet, bench_bullet_gjk_distance, bench_bullet_gjk_intersect},
        {"bullet-epa2", bullet, bench_bullet_epa2_distance, bench_bullet_epa2_intersect},
    };
    for (size_t k = 0; k < sizeof peers / sizeof peers[0]; k++) {
        if (peers[k].peer == NULL || (distance ? peers[k].distance == NULL : peers[k].intersect == NULL)) {
            continue;
        }
        impl_slot* s = &slots[count++];
        s->impl.name = peers[k].name;
        s->peer = (peer_batch){peers[k].peer, peers[k].distance, peers[k].intersect, NULL, NULL};
        s->impl.run = distance ? run_peer_distance : run_peer_intersect;
        s->impl.ctx = &s->peer;
    }
    for (int k = 0; k < count; k++) {
        impl_slot* s = &slots[k];
        size_t m = (size_t)(n > 0 ? n : 1);
        if (distance) {
            s->dist = calloc(m, sizeof(bench_distance));
        } else {
            s->hit = calloc(m, 1);
        }
        if (distance ? s->dist == NULL : s->hit == NULL) {
            fail("out of memory");
        }
        s->carom.dist = s->peer.dist = s->dist;
        s->carom.hit = s->peer.hit = s->hit;
    }

    bench_impl impls[MAX_IMPLS];
    for (int k = 0; k < count; k++) {
        impls[k] = slots[k].impl;
    }
    bench_measure(impls, count, n, opt->reps);

    // Check every implementation on the answers of its last run.
    const double size = size_of_pair(q);
    double* got = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (got == NULL) {
        fail("out of memory");
    }
    for (int k = 0; k < count; k++) {
        impl_slot* s = &slots[k];
        s->impl = impls[k];
        if (distance) {
            for (int i = 0; i < n; i++) {
                got[i] = s->dist[i].distance;
                double d = got[i] > 0 ? got[i] : 0;
                double e = isfinite(d) ? fabs(d - q->ref[i]) : INFINITY;
                s->max_error = fmax(s->max_error, e);
            }
            s->check = bench_check_distances(q->ref, got, n, DIST_ABS_TOL * size, DIST_REL_TOL);
        } else {
            s->check = bench_check_overlaps(q->ref, q->touching, s->hit, n);
        }
        int w = s->check.worst;
        if (opt->verbose && w >= 0) {
            const bench_pose *a = &q->pa[w], *b = &q->pb[w];
            char answer[64];
            if (distance) {
                snprintf(answer, sizeof answer, "distance %.9g", s->dist[w].distance);
            } else {
                snprintf(answer, sizeof answer, "%s", s->hit[w] ? "overlap" : "separate");
            }
            bench_note("  %s %s: worst query %d: reference distance %.9g, answer %s\n"
                       "    A p=(%.9g %.9g %.9g) q=(%.9g %.9g %.9g %.9g)\n"
                       "    B p=(%.9g %.9g %.9g) q=(%.9g %.9g %.9g %.9g)",
                       q->case_name, s->impl.name, w, q->ref[w], answer, a->p[0], a->p[1],
                       a->p[2], a->q[0], a->q[1], a->q[2], a->q[3], b->p[0], b->p[1], b->p[2],
                       b->q[0], b->q[1], b->q[2], b->q[3]);
        }
    }
    free(got);

    // carom against the fastest peer whose answers are right (or the fastest
    // peer at all when none is).
    int best = -1;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        for (int k = 0; k < count; k++) {
            const impl_slot* s = &slots[k];
            if (s->is_carom || (pass == 0 && s->check.wrong != 0)) {
                continue;
            }
            if (best < 0 || s->impl.ns_per_op < slots[best].impl.ns_per_op) {
                best = k;
            }
        }
    }

    int overlaps = 0;
    for (int i = 0; i < n; i++) {
        overlaps += q->ref[i] <= 0.0;
    }
    for (int k = 0; k < count; k++) {
        const impl_slot* s = &slots[k];
        bench_json j;
        bench_json_begin(&j, "gjk", q->case_name, s->impl.name, n, s->impl.ns_per_op, s->check.text);
        bench_json_str(&j, "query", q->query);
        bench_json_str(&j, "shapes", q->shapes);
        bench_json_int(&j, "pairs", q->pairs);
        if (distance) {
            bench_json_num(&j, "max_error", s->max_error);
        } else {
            bench_json_int(&j, "overlaps", overlaps);
            bench_json_int(&j, "touching", s->check.touching);
        }
        bench_json_num(&j, "ns_min", s->impl.ns_min);
        if (s->is_carom) {
            bench_json_num(&j, "iterations", n > 0 ? (double)s->carom.iterations / n : 0.0);
            bench_json_int(&j, "not_done", s->carom.not_done);
            if (best >= 0 && strcmp(s->impl.name, "carom") == 0) {
                bench_json_num(&j, "ratio_vs_best_peer",
                               s->impl.ns_per_op / slots[best].impl.ns_per_op);
                bench_json_str(&j, "best_peer", slots[best].impl.name);
            }
        }
        bench_json_emit(&j);
    }

    for (int k = 0; k < count; k++) {
        free(slots[k].dist);
        free(slots[k].hit);
    }
    if (ccd != NULL) {
        bench_ccd_destroy(ccd);
    }
    bench_fcl_destroy(fcl);
    bench_bullet_destroy(bullet);
    free(xa);
    free(xb);
}

// ---- cases ------------------------------------------------------------------------

typedef struct gjk_case {
    const char* shapes;
    const gjk_shape* a;
    const gjk_shape* b;
    double r_lo, r_hi;  // centre distance range
    int pairs;
    uint64_t seed;
    bool coherent;
} gjk_case;

// The JSON case names of a case's two query sets, e.g. "geo-geo/distance"
// and "geo-geo/coherent-intersect" (buffers of 64).
static void case_names(const gjk_case* c, char* distance_name, char* intersect_name)
{
    const char* prefix = c->coherent ? "coherent-" : "";
    snprintf(distance_name, 64, "%s/%sdistance", c->shapes, prefix);
    snprintf(intersect_name, 64, "%s/%sintersect", c->shapes, prefix);
}

static void run_case(const gjk_case* c, const bench_options* opt)
{
    int n = c->pairs;
    bench_pose* pa = malloc(sizeof(bench_pose) * (size_t)n);
    bench_pose* pb = malloc(sizeof(bench_pose) * (size_t)n);
    if (pa == NULL || pb == NULL) {
        fail("out of memory");
    }
    if (c->coherent) {
        coherent_frames(n, c->r_lo, c->r_hi, pa, pb);
    } else {
        random_pairs(c->seed, n, c->r_lo, c->r_hi, pa, pb);
    }
    reference_set ref = reference_compute(c->a, c->b, n, pa, pb);
    bench_note("  %s%s: %d/%d overlapping (%.0f%%), %d touching", c->shapes,
               c->coherent ? " coherent" : "", ref.overlaps, n, 100.0 * ref.overlaps / n,
               ref.touching_count);

    query_set q = {0};
    q.shapes = c->shapes;
    q.a = c->a;
    q.b = c->b;
    q.pairs = n;
    q.coherent = c->coherent;

    // Distance: random cases use the separated pairs only (GJK distance is
    // meaningful there; touching ones are left out too); coherent ones every
    // frame (the answer for overlap is 0; negative peer answers count as 0).
    bench_pose* sa = malloc(sizeof(bench_pose) * (size_t)n);
    bench_pose* sb = malloc(sizeof(bench_pose) * (size_t)n);
    double* sref = malloc(sizeof(double) * (size_t)n);
    if (sa == NULL || sb == NULL || sref == NULL) {
        fail("out of memory");
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (c->coherent || (ref.distance[i] > 0.0 && !ref.touching[i])) {
            sa[m] = pa[i], sb[m] = pb[i], sref[m] = ref.distance[i];
            m++;
        }
    }
    char distance_name[64], intersect_name[64];
    case_names(c, distance_name, intersect_name);
    if (bench_case_selected(opt, distance_name)) {
        snprintf(q.case_name, sizeof q.case_name, "%s", distance_name);
        q.query = "distance";
        q.n = m, q.pa = sa, q.pb = sb, q.ref = sref;
        run_query_set(&q, opt);
    }
    if (bench_case_selected(opt, intersect_name)) {
        snprintf(q.case_name, sizeof q.case_name, "%s", intersect_name);
        q.query = "intersect";
        q.n = n, q.pa = pa, q.pb = pb, q.ref = ref.distance, q.touching = ref.touching;
        run_query_set(&q, opt);
    }

    free(sa);
    free(sb);
    free(sref);
    free(ref.distance);
    free(ref.touching);
    free(pa);
    free(pb);
}

int main(int argc, char** argv)
{
    bench_options opt = bench_parse_options(argc, argv, "bench_gjk");
    const int pairs = opt.quick ? QUICK_PAIRS : RANDOM_PAIRS;
    const int bunny_pairs = opt.quick ? QUICK_BUNNY_PAIRS : BUNNY_PAIRS;
    const int frames = opt.quick ? QUICK_FRAMES : COHERENT_FRAMES;

    gjk_shape box, capsule, geo, bunny;
    make_box(&box, 0.5f);
    make_capsule(&capsule, 0.5f, 0.25f);
    make_hull(&geo, "geo", "meshes/geosphere.off");
    make_hull(&bunny, "bunny", "meshes/bunny00.off");
    bench_note("bench_gjk: geo hull %d vertices, bunny hull %d vertices; %d reps%s",
               geo.geo.point_count, bunny.geo.point_count, opt.reps, opt.quick ? " (quick)" : "");

    // Centre distance ranges give about 30% overlapping pairs (the run
    // prints the actual fraction to stderr, the JSON `overlaps` field too).
    const gjk_case cases[] = {
        {"box-box", &box, &box, 0.6, 3.2, pairs, 0x0b0b, false},
        {"geo-geo", &geo, &geo, 0.5, 2.1, pairs, 0x6e06, false},
        {"bunny-bunny", &bunny, &bunny, 0.4, 2.0, bunny_pairs, 0xb1, false},
        {"capsule-box", &capsule, &box, 0.5, 2.45, pairs, 0xca95, false},
        {"box-box", &box, &box, 1.2, 2.0, frames, 0, true},
        {"geo-geo", &geo, &geo, 0.85, 1.5, frames, 0, true},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char distance_name[64], intersect_name[64];
        case_names(&cases[k], distance_name, intersect_name);
        if (!bench_case_selected(&opt, distance_name) && !bench_case_selected(&opt, intersect_name)) {
            continue;
        }
        bench_note("case %s%s (%d pairs)", cases[k].shapes, cases[k].coherent ? " coherent" : "",
                   cases[k].pairs);
        run_case(&cases[k], &opt);
    }

    free_shape(&box);
    free_shape(&capsule);
    free_shape(&geo);
    free_shape(&bunny);
    return 0;
}
