// carom_bench_mid's mesh-against-mesh cases: every intersecting triangle pair
// and the first one, at one pose and over many random poses (sweeps).
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

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
    c->xa = bench_pose_xform(&s->pa);
    c->xb = bench_pose_xform(&s->pb);
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

void collide_case_run(const collide_spec* spec, mid_mesh* a, mid_mesh* b,
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

// All pairs take about as long at every pose of a sweep, so 32 poses give
// a steady mean. A first hit is heavy-tailed: over random near-coincident
// bunny poses carom's box tests to it run from 60 to over 5,000 (a median
// of 70 and a mean of about 190), so that one pose in 32 could move the
// mean by a factor of two and turn which of two walks looked faster. First
// hits are timed over 256 poses, of which the all-pairs sweep takes the
// first 32.
enum {
    SWEEP_POSES = 32,
    QUICK_SWEEP_POSES = 8,
    FIRST_SWEEP_POSES = 256,
    QUICK_FIRST_SWEEP_POSES = 32,
    SWEEP_BISECTIONS = 40
};

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
                                       int count)
{
    sweep_pose_set p;
    p.count = count;
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
    bool shows_carom_wrong[FIRST_SWEEP_POSES] = {false};
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

void sweep_case_run(const sweep_spec* spec, mid_mesh* a, mid_mesh* b,
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
    const int all_count = opt->quick ? QUICK_SWEEP_POSES : SWEEP_POSES;
    const int first_count = opt->quick ? QUICK_FIRST_SWEEP_POSES : FIRST_SWEEP_POSES;
    sweep_pose_set poses = sweep_poses_make(spec, a, b, run_first ? first_count : all_count);
    long long reference_pairs = 0;
    int touching = 0;
    for (int i = 0; i < poses.count; i++) {
        reference_pairs += poses.setups[i].nref;
        touching += poses.setups[i].nref > 0;
    }
    bench_note("case %s: %d poses, %d with intersecting pairs (%lld pairs in all, carom, AABB "
               "tree)", spec->name, poses.count, touching, reference_pairs);
    if (run_all) {
        sweep_pose_set leading = poses;  // the first all_count poses
        leading.count = all_count;
        sweep_mode(spec, &leading, false, opt);
    }
    if (run_first) {
        sweep_mode(spec, &poses, true, opt);
    }
    sweep_poses_free(&poses);
}
