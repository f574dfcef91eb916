// carom_bench_mid's build cases: each tree built and freed.
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

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

void build_case_run(const char* name, const mid_mesh* mesh, const bench_options* opt)
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

// ---- refitting the trees ---------------------------------------------------------------

// A deforming mesh: every vertex moved by a smooth wave, REFIT_AMPLITUDE of
// the mesh's size, REFIT_WAVES waves across it, in frames that differ by
// the wave's phase. Each refit goes to the next frame, so every one moves
// every vertex.
#define REFIT_AMPLITUDE 0.01
#define REFIT_WAVES 3.0
#define REFIT_TWO_PI 6.283185307179586
enum { REFIT_FRAMES = 2, REFIT_RAYS = 4096, QUICK_REFIT_RAYS = 512 };

static void deform(const mid_mesh* m, double phase, float (*out)[3])
{
    const double a = REFIT_AMPLITUDE * m->size, w = REFIT_TWO_PI * REFIT_WAVES / m->size;
    for (int i = 0; i < m->data.vertex_count; i++) {
        const double x = m->data.vertices[i][0], y = m->data.vertices[i][1],
                     z = m->data.vertices[i][2];
        out[i][0] = (float)(x + a * sin(w * y + phase));
        out[i][1] = (float)(y + a * sin(w * z + phase));
        out[i][2] = (float)(z + a * sin(w * x + phase));
    }
}

typedef struct refit_ctx {
    impl_id id;
    int repeat;
    int next;  // the frame the next refit goes to
    int vertex_count;
    const vec3s* const* frames;  // carom's frames
    carom_mesh mesh;             // carom: a tree of its own, which the refits change
    void* model;                 // FCL's BVHModel or Bullet's shape, likewise its own
    void* refit;                 // the peer's prepared refit
    int failures;
    carom_status status;
} refit_ctx;

static void run_refit(void* arg)
{
    refit_ctx* c = arg;
    for (int r = 0; r < c->repeat; r++) {
        const int f = c->next;
        c->next = (c->next + 1) % REFIT_FRAMES;
        if (is_carom(c->id)) {
            carom_status st = carom_mesh_refit(&c->mesh, c->frames[f], c->vertex_count);
            if (st != CAROM_OK) {
                c->failures++;
                c->status = st;
            }
        } else if (c->id == IMPL_BULLET) {
            bench_bullet_refit(c->refit, f);
        } else if (bench_fcl_refit(c->refit, f) != 0) {
            c->failures++;
        }
    }
}

static void refit_ctx_init(refit_ctx* c, impl_id id, const mid_mesh* m, const vec3s* const* frames,
                           const float* const* flat)
{
    memset(c, 0, sizeof *c);
    c->id = id;
    c->repeat = 1;
    c->vertex_count = m->data.vertex_count;
    c->frames = frames;
    if (is_carom(id)) {
        if (carom_build(m, (int)id, &c->mesh) != CAROM_OK) {
            fail("carom could not build the mesh to refit");
        }
        return;
    }
    if (id == IMPL_BULLET) {
        c->model = bench_bullet_mesh_build(&m->desc);
        c->refit = c->model ? bench_bullet_refit_prepare(c->model, flat, REFIT_FRAMES,
                                                         c->vertex_count)
                            : NULL;
    } else {
        c->model = bench_fcl_mesh_build(&m->desc, BENCH_FCL_OBBRSS);
        c->refit = c->model ? bench_fcl_refit_prepare(c->model, flat, REFIT_FRAMES, c->vertex_count)
                            : NULL;
    }
    if (c->refit == NULL) {
        fail("a peer's refit could not be prepared");
    }
}

static void refit_ctx_free(refit_ctx* c)
{
    carom_mesh_destroy(&c->mesh);
    if (c->id == IMPL_BULLET) {
        bench_bullet_refit_destroy(c->refit);
        bench_bullet_mesh_destroy(c->model);
    } else if (c->model != NULL) {
        bench_fcl_refit_destroy(c->refit);
        bench_fcl_mesh_destroy(c->model);
    }
}

// Every intersecting pair of two carom meshes, sorted, in *pairs (grown as
// needed); returns how many.
static int carom_pair_set(const carom_mesh* a, carom_xform xa, const carom_mesh* b,
                          carom_xform xb, bench_tri_pair** pairs, int* capacity)
{
    carom_triangle_pair* got = xmalloc(sizeof *got * (size_t)*capacity);
    carom_mesh_query_result r = carom_mesh_collide_pairs(a, xa, b, xb, false, got, *capacity);
    if (r.found > *capacity) {
        *capacity = r.found;
        free(got);
        got = xmalloc(sizeof *got * (size_t)*capacity);
        r = carom_mesh_collide_pairs(a, xa, b, xb, false, got, *capacity);
    }
    if (r.state != CAROM_DONE) {
        fail("a refit check's collide did not finish");
    }
    free(*pairs);
    *pairs = xmalloc(sizeof **pairs * (size_t)*capacity);
    for (int i = 0; i < r.found; i++) {
        (*pairs)[i].a = got[i].a;
        (*pairs)[i].b = got[i].b;
    }
    free(got);
    return pairs_unique(*pairs, r.found);
}

// The same for two FCL models (OBBRSS).
static int fcl_pair_set(void* a, const bench_pose* pa, void* b, const bench_pose* pb,
                        bench_tri_pair** pairs, int* capacity)
{
    void* q = bench_fcl_collide_prepare(a, pa, b, pb);
    if (q == NULL) {
        fail("FCL collide could not be prepared");
    }
    free(*pairs);
    *pairs = xmalloc(sizeof **pairs * (size_t)*capacity);
    int found = bench_fcl_collide(q, 0, *pairs, *capacity);
    if (found > *capacity) {
        *capacity = found;
        free(*pairs);
        *pairs = xmalloc(sizeof **pairs * (size_t)*capacity);
        found = bench_fcl_collide(q, 0, *pairs, *capacity);
    }
    bench_fcl_collide_destroy(q);
    return pairs_unique(*pairs, found);
}

// How many of `n` rays a refitted Bullet shape answers otherwise than a
// fresh build of the same vertices: both test the same triangles with the
// same arithmetic, so the closest hits must be the same, bit for bit (two
// triangles hit at exactly the same fraction could come in either order,
// and the triangle reported differ; none does on these rays).
static int bullet_rays_differ(void* refitted, const mid_mesh* moved, const bench_pose* pose,
                              int n)
{
    carom_ray* rays = xmalloc(sizeof *rays * (size_t)n);
    bench_ray* peer_rays = xmalloc(sizeof *peer_rays * (size_t)n);
    bench_ray_hit* hits[2] = {xmalloc(sizeof(bench_ray_hit) * (size_t)n),
                              xmalloc(sizeof(bench_ray_hit) * (size_t)n)};
    make_rays(moved, pose, n, 0x4ef17, rays, peer_rays);
    void* fresh = bench_bullet_mesh_build(&moved->desc);
    void* shapes[2] = {refitted, fresh};
    for (int k = 0; k < 2; k++) {
        void* q = shapes[k] ? bench_bullet_raycast_prepare(shapes[k], pose, peer_rays, n) : NULL;
        if (q == NULL) {
            fail("Bullet ray casts could not be prepared");
        }
        bench_bullet_raycast(q, hits[k]);
        bench_bullet_raycast_destroy(q);
    }
    int differ = 0;
    for (int i = 0; i < n; i++) {
        differ += hits[0][i].hit != hits[1][i].hit || hits[0][i].triangle != hits[1][i].triangle ||
                  hits[0][i].fraction != hits[1][i].fraction;
    }
    bench_bullet_mesh_destroy(fresh);
    free(hits[0]);
    free(hits[1]);
    free(rays);
    free(peer_rays);
    return differ;
}

// What the refit checks compare with: the moved mesh (the first frame) at
// pose_first(), the partner at the bunny-deep pose, and the pairs a fresh
// build of the moved mesh finds with it (midpoint trees, as a set).
typedef struct refit_truth {
    mid_mesh moved;
    mid_mesh* partner;
    bench_pose pa, pb;
    carom_xform xa, xb;
    pair_geometry geometry;
    bench_tri_pair* ref;
    int nref;
    int capacity;  // of the pair buffers
    double band;
} refit_truth;

static void refit_truth_make(refit_truth* t, const mid_mesh* mesh, const float (*first)[3],
                             mid_mesh* partner)
{
    mesh_moved(&t->moved, mesh, "moved", first);
    t->partner = partner;
    t->pa = pose_first();
    const double axis[3] = {1.0, -0.5, 0.3}, offset[3] = {0.22, 0.12, -0.08};
    t->pb = pose_relative(&t->pa, partner->centre, axis, 0.8, offset);
    t->xa = bench_pose_xform(&t->pa);
    t->xb = bench_pose_xform(&t->pb);
    t->geometry = (pair_geometry){&t->moved, partner, frame_of(&t->pa), frame_of(&t->pb)};
    t->capacity = 4096;
    t->ref = NULL;
    t->nref = carom_pair_set(mesh_carom(&t->moved, 0), t->xa, mesh_carom(partner, 0), t->xb,
                             &t->ref, &t->capacity);
    t->band = TOUCH_BAND * mesh->size;
}

static void refit_truth_free(refit_truth* t)
{
    free(t->ref);
    mesh_close(&t->moved);
}

// One implementation's refitted tree (on the first frame) against the
// truth: its check string; *answers gets the pairs or rays compared.
static void refit_check(refit_ctx* c, refit_truth* t, int rays, const bench_options* opt,
                        char* check, size_t size, int* answers)
{
    *answers = 0;
    if (c->failures > 0) {
        if (is_carom(c->id)) {
            snprintf(check, size, "%d refits failed: %s", c->failures,
                     carom_status_string(c->status));
        } else {
            snprintf(check, size, "%d refits failed", c->failures);
        }
        return;
    }
    if (c->id == IMPL_BULLET) {
        *answers = rays;
        const int differ = bullet_rays_differ(c->model, &t->moved, &t->pa, rays);
        if (differ == 0) {
            snprintf(check, size, "ok");
        } else {
            snprintf(check, size, "%d of %d rays differ from a fresh build's", differ, rays);
        }
        return;
    }
    bench_tri_pair* got = NULL;
    int n;
    if (is_carom(c->id)) {
        n = carom_pair_set(&c->mesh, t->xa, mesh_carom(t->partner, (int)c->id), t->xb, &got,
                           &t->capacity);
    } else {
        n = fcl_pair_set(c->model, &t->pa, mesh_fcl(t->partner, BENCH_FCL_OBBRSS), &t->pb, &got,
                         &t->capacity);
    }
    *answers = n;
    pair_diff d = pairs_diff(&t->geometry, t->ref, t->nref, got, n, t->band,
                             opt->verbose ? IMPL_NAME[c->id] : NULL);
    if (is_carom(c->id) && d.missing + d.extra > 0) {
        snprintf(check, size, "%d pairs differ from a fresh build's (%d missing, %d extra)",
                 d.missing + d.extra, d.missing, d.extra);
    } else {
        pair_diff_text(&d, check, size);
    }
    free(got);
}

// The refit case: each implementation refits a tree of its own to the
// deforming frames, timed per refit. Then, on the frame every one ends at
// (the first), carom's trees and FCL's are checked by mesh against mesh
// with `partner` (undeformed, at the bunny-deep pose): carom's pairs must
// be the set a fresh carom build of the moved vertices finds, FCL's must
// agree with it up to the touching band; Bullet's by ray casts against a
// fresh Bullet build.
void refit_case_run(const char* name, mid_mesh* mesh, mid_mesh* partner, const bench_options* opt)
{
    if (!bench_case_selected(opt, name)) {
        return;
    }
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH,
                                  IMPL_FCL_OBBRSS, IMPL_BULLET};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    const int nv = mesh->data.vertex_count;
    float(*frames[REFIT_FRAMES])[3];
    vec3s* carom_frames[REFIT_FRAMES];
    const float* flat[REFIT_FRAMES];
    for (int f = 0; f < REFIT_FRAMES; f++) {
        frames[f] = xmalloc(sizeof(float[3]) * (size_t)nv);
        deform(mesh, 0.5 + 1.5 * f, frames[f]);
        carom_frames[f] = xmalloc(sizeof(vec3s) * (size_t)nv);
        for (int i = 0; i < nv; i++) {
            for (int k = 0; k < 3; k++) {
                carom_frames[f][i].raw[k] = frames[f][i][k];
            }
        }
        flat[f] = &frames[f][0][0];
    }
    bench_note("case %s: %d triangles, %d vertices, moved by up to %.3g", name,
               mesh->data.triangle_count, nv, REFIT_AMPLITUDE * mesh->size);
    refit_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    double single[COUNT];
    for (int k = 0; k < COUNT; k++) {
        refit_ctx_init(&ctx[k], ids[k], mesh, (const vec3s* const*)carom_frames, flat);
        double t0 = bench_now_ns();
        run_refit(&ctx[k]);
        single[k] = bench_now_ns() - t0;
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_refit, &ctx[k], 0, 0}, ids[k],
                                &ctx[k].repeat, 1};
    }
    measure_slots(slots, single, COUNT, opt);

    refit_truth truth;
    refit_truth_make(&truth, mesh, (const float(*)[3])frames[0], partner);
    bench_note("  %d intersecting triangle pairs with the partner (carom, fresh AABB tree)",
               truth.nref);
    double fcl_ns = 0;
    for (int k = 0; k < COUNT; k++) {
        if (ids[k] == IMPL_FCL_OBBRSS && ctx[k].failures == 0) {
            fcl_ns = slots[k].impl.ns_per_op;
        }
    }
    const int rays = opt->quick ? QUICK_REFIT_RAYS : REFIT_RAYS;
    for (int k = 0; k < COUNT; k++) {
        refit_ctx* c = &ctx[k];
        const int repeat = c->repeat;
        if (c->next != 1) {  // the last refit went to another frame: one more, to the first
            c->repeat = 1;
            c->next = 0;
            run_refit(c);
            c->repeat = repeat;
        }
        char check[160];
        int answers;
        refit_check(c, &truth, rays, opt, check, sizeof check, &answers);
        bench_json j;
        bench_json_begin(&j, "mid", name, slots[k].impl.name, 1, slots[k].impl.ns_per_op, check);
        bench_json_str(&j, "mode", "refit");
        bench_json_num(&j, "refit_ms", slots[k].impl.ns_per_op * 1e-6);
        bench_json_int(&j, "triangles", mesh->data.triangle_count);
        bench_json_int(&j, "vertices", nv);
        bench_json_int(&j, c->id == IMPL_BULLET ? "rays" : "pairs", answers);
        if (c->id != IMPL_BULLET) {
            bench_json_int(&j, "reference_pairs", truth.nref);
        }
        bench_json_num(&j, "ns_min", slots[k].impl.ns_min);
        bench_json_int(&j, "repeat", c->repeat);
        if (c->id != IMPL_FCL_OBBRSS && fcl_ns > 0) {
            bench_json_num(&j, "ratio_vs_fcl_obbrss", slots[k].impl.ns_per_op / fcl_ns);
        }
        bench_json_emit(&j);
        refit_ctx_free(c);
    }
    refit_truth_free(&truth);
    for (int f = 0; f < REFIT_FRAMES; f++) {
        free(frames[f]);
        free(carom_frames[f]);
    }
}
