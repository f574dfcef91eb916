// carom_bench_broad: the broad phase against Bullet (btDbvtBroadphase,
// btAxisSweep3) and FCL (DynamicAABBTree, SaP, SpatialHashing managers) on
// identical frames of moving boxes, in one process, plus brute force and a
// lower-bound reference (one radix sort of the endpoints and writing the
// true pair list).
//
// Cases (README.md, "carom_bench_broad"), each at 1k, 10k, 100k and 1M
// boxes (--quick: 1k and 10k):
//   uniform  ~1 pair per box, every box moving a small step each frame
//   dense    ~10 pairs per box, every box moving
//   static   ~1 pair per box, 1% of the boxes moving
//   mixed    sizes over a factor 100 plus a few huge boxes (the grid's weak case)
//   convoy   a third of the world moving as one block through the rest
// A frame moves the movers (insert/move calls for carom, setAabb or
// setTransform for the peers), runs the broad phase and collects the pair
// list. Every implementation answers "which boxes overlap now"; its pairs on
// every frame of the first pass are compared with the reference (the
// double-precision reference up to 20k boxes, above that carom's brute-force
// -free consensus: the grid's list, which every other answer must equal).
//
// The swept question ("which boxes meet during the step, and when") is
// answered by carom's space-time SAP and by encapsulation (the incremental
// SAP on boxes around start and end): lines with "question":"swept", whose
// false_pairs counts the pairs examined that never meet.
//
// Timing: frames are played forward, then backward, then forward..., each
// pass timed as a whole per implementation, implementations interleaved
// pass by pass; ns_per_op is the median time per frame.
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <carom/carom.h>

#include "broad_lower_bound.h"
#include "broad_reference.h"
#include "harness.h"
#include "peers_broad.h"

enum { MAX_IMPLS = 24 };

static void fail(const char* what) {
    fprintf(stderr, "carom_bench_broad: %s\n", what);
    exit(1);
}

static void* xmalloc(size_t size) {
    void* p = malloc(size > 0 ? size : 1);
    if (!p) fail("out of memory");
    return p;
}

// ---- frames ---------------------------------------------------------------------------------

// Every frame's boxes (6 floats each) and displacements to the next frame.
typedef struct frames {
    int n;
    int count;          // frames
    float* boxes;       // count * n * 6
    vec3s* moves;       // count * n
    int* movers;        // ids that move
    int mover_count;
    float world_min[3], world_max[3];
    // The reference pair list of each frame (discrete) and of each step
    // (swept, frame f to f + 1), as sorted (a, b) arrays.
    carom_broad_pair** pairs;
    int* pair_count;
    carom_broad_pair** swept;
    int* swept_count;
    int** lb_pairs;  // the discrete lists again as int pairs, the lower bound's input
} frames;

static const float* frame_boxes(const frames* fr, int f) { return fr->boxes + (size_t)f * fr->n * 6; }
_Static_assert(sizeof(carom_aabb) == 6 * sizeof(float), "a frame's box is a carom_aabb");

static carom_aabb box_at(const frames* fr, int f, int i) {
    const float* b = frame_boxes(fr, f) + (size_t)i * 6;
    return (carom_aabb){{{b[0], b[1], b[2]}}, {{b[3], b[4], b[5]}}};
}

static void store_frame(frames* fr, int f, const ref_broad_scene* scene) {
    float* b = fr->boxes + (size_t)f * fr->n * 6;
    for (int i = 0; i < fr->n; i++) {
        carom_aabb x = scene->boxes[i];
        float* o = b + (size_t)i * 6;
        o[0] = x.min.x, o[1] = x.min.y, o[2] = x.min.z, o[3] = x.max.x, o[4] = x.max.y, o[5] = x.max.z;
        fr->moves[(size_t)f * fr->n + i] = scene->displacements[i];
        for (int k = 0; k < 3; k++) {
            if (x.min.raw[k] < fr->world_min[k]) fr->world_min[k] = x.min.raw[k];
            if (x.max.raw[k] > fr->world_max[k]) fr->world_max[k] = x.max.raw[k];
        }
    }
}

// ---- the implementations ----------------------------------------------------------------

typedef enum impl_type { IMPL_CAROM, IMPL_BULLET, IMPL_FCL, IMPL_LOWER_BOUND } impl_type;

typedef struct impl {
    const char* name;
    impl_type type;
    bool swept;  // answers the swept question (carom only)
    bool events; // carom: also reads the begin and end events every frame
    carom_broad_desc desc;
    carom_broad broad;
    bench_broad_bullet* bullet;
    bench_broad_fcl* fcl;
    broad_lower_bound* lb;
    int* out;  // peers' pair buffer, 2 ints per pair
    int out_capacity;
    // carom: one frame's moves, handed over in one carom_broad_move_many.
    int* move_ids;
    carom_aabb* move_boxes;
    vec3s* move_displacements;
    double* pass_ns;
    size_t bytes;
    long long pairs, candidates;  // summed over the checked frames
    int wrong_frames;
    int first_wrong_frame;
    int missing, extra;  // on the first wrong frame
    uint32_t sink;
} impl;

static int compare_pairs(const void* x, const void* y) {
    const carom_broad_pair* a = x;
    const carom_broad_pair* b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

// Counts the pairs of `ref` missing from `got` and the other way round;
// both sorted.
static void diff_pairs(const carom_broad_pair* ref, int nr, const carom_broad_pair* got, int ng,
                       int* missing, int* extra) {
    int i = 0, j = 0;
    *missing = *extra = 0;
    while (i < nr || j < ng) {
        int c = i == nr ? 1 : j == ng ? -1 : compare_pairs(&ref[i], &got[j]);
        if (c < 0) (*missing)++, i++;
        else if (c > 0) (*extra)++, j++;
        else i++, j++;
    }
}

static void check_frame(impl* im, const carom_broad_pair* ref, int nr, const carom_broad_pair* got,
                        int ng, int frame) {
    int missing, extra;
    diff_pairs(ref, nr, got, ng, &missing, &extra);
    if (missing + extra == 0) return;
    if (im->wrong_frames++ == 0) {
        im->first_wrong_frame = frame;
        im->missing = missing;
        im->extra = extra;
    }
}

// Collects a peer's pairs, sorted, into `scratch`.
static int peer_pairs(impl* im, carom_broad_pair* scratch) {
    int count;
    for (;;) {
        count = im->type == IMPL_BULLET ? bench_broad_bullet_pairs(im->bullet, im->out, im->out_capacity)
                                        : bench_broad_fcl_pairs(im->fcl, im->out, im->out_capacity);
        if (count <= im->out_capacity) break;
        free(im->out);
        im->out_capacity = count + count / 2;
        im->out = xmalloc(sizeof(int) * 2 * (size_t)im->out_capacity);
    }
    for (int i = 0; i < count; i++) {
        int a = im->out[2 * i], b = im->out[2 * i + 1];
        scratch[i] = (carom_broad_pair){a < b ? a : b, a < b ? b : a, 0.0f};
    }
    qsort(scratch, (size_t)count, sizeof *scratch, compare_pairs);
    return count;
}

static void impl_create(impl* im, const frames* fr, const bench_broad_scene* bs) {
    switch (im->type) {
        case IMPL_CAROM: {
            if (carom_broad_create(&im->desc, &im->broad) != CAROM_OK) fail("carom_broad_create");
            for (int i = 0; i < fr->n; i++) {
                vec3s d = im->swept ? fr->moves[i] : (vec3s){{0, 0, 0}};
                if (carom_broad_insert(&im->broad, i, box_at(fr, 0, i), d) != CAROM_OK)
                    fail("carom_broad_insert");
            }
            if (carom_broad_update(&im->broad, NULL) != CAROM_OK) fail("carom_broad_update");
            im->move_ids = xmalloc(sizeof *im->move_ids * (size_t)(fr->n + 1));
            im->move_boxes = xmalloc(sizeof *im->move_boxes * (size_t)(fr->n + 1));
            im->move_displacements = xmalloc(sizeof *im->move_displacements * (size_t)(fr->n + 1));
            break;
        }
        case IMPL_BULLET:
            im->bullet = bench_broad_bullet_create(im->desc.kind == 0 ? BENCH_BROAD_BULLET_DBVT
                                                                      : BENCH_BROAD_BULLET_SAP,
                                                   bs);
            if (!im->bullet) fail("bullet create");
            im->name = bench_broad_bullet_name(im->bullet);
            break;
        case IMPL_FCL:
            im->fcl = bench_broad_fcl_create((bench_broad_fcl_kind)im->desc.kind, bs);
            if (!im->fcl) fail("fcl create");
            im->name = bench_broad_fcl_name(im->fcl);
            break;
        case IMPL_LOWER_BOUND: {
            int most = 0;
            for (int f = 0; f < fr->count; f++) most = fr->pair_count[f] > most ? fr->pair_count[f] : most;
            im->lb = broad_lower_bound_create(fr->n, most);
            if (!im->lb) fail("lower bound create");
            break;
        }
    }
    im->out_capacity = fr->n * 4 + 1024;
    im->out = xmalloc(sizeof(int) * 2 * (size_t)im->out_capacity);
}

static void impl_destroy(impl* im) {
    carom_broad_destroy(&im->broad);
    bench_broad_bullet_destroy(im->bullet);
    bench_broad_fcl_destroy(im->fcl);
    broad_lower_bound_destroy(im->lb);
    free(im->out);
    free(im->move_ids);
    free(im->move_boxes);
    free(im->move_displacements);
    free(im->pass_ns);
}

// carom's events of the frame, derived when first asked for.
static uint32_t impl_events(const impl* im) {
    return (uint32_t)(carom_broad_begin_events(&im->broad).count +
                      3 * carom_broad_end_events(&im->broad).count);
}

// One frame: frame f's boxes for the movers (going backward, the step is
// played from f + 1 back to f).
static void impl_step(impl* im, const frames* fr, int f, bool backward, carom_broad_stats* stats) {
    const float* boxes = frame_boxes(fr, f);
    switch (im->type) {
        case IMPL_CAROM:
            if (!im->swept && fr->mover_count == fr->n) {
                // Every box moves, with no displacement: the frame's arrays
                // are the call's, as the peers read the frame's boxes in
                // place (movers[i] is i, and a box is six floats in
                // carom_aabb's order).
                if (carom_broad_move_many(&im->broad, fr->n, fr->movers,
                                          (const carom_aabb*)(const void*)boxes, NULL,
                                          NULL) != CAROM_OK)
                    fail("carom_broad_move_many");
                if (carom_broad_update(&im->broad, stats) != CAROM_OK) fail("carom_broad_update");
                im->sink += (uint32_t)carom_broad_pair_list(&im->broad).count;
                if (im->events) im->sink += impl_events(im);
                break;
            }
            for (int m = 0; m < fr->mover_count; m++) {
                int i = fr->movers[m];
                vec3s d = {{0, 0, 0}};
                carom_aabb box = box_at(fr, f, i);
                if (im->swept) {
                    // Forward: from frame f by its displacement. Backward: from
                    // frame f + 1 back by the same displacement.
                    d = fr->moves[(size_t)f * fr->n + i];
                    if (backward) {
                        box = box_at(fr, f + 1, i);
                        d = (vec3s){{-d.x, -d.y, -d.z}};
                    }
                }
                im->move_ids[m] = i;
                im->move_boxes[m] = box;
                im->move_displacements[m] = d;
            }
            if (carom_broad_move_many(&im->broad, fr->mover_count, im->move_ids, im->move_boxes,
                                      im->move_displacements, NULL) != CAROM_OK)
                fail("carom_broad_move_many");
            if (carom_broad_update(&im->broad, stats) != CAROM_OK) fail("carom_broad_update");
            im->sink += (uint32_t)carom_broad_pair_list(&im->broad).count;
            if (im->events) im->sink += impl_events(im);
            break;
        case IMPL_BULLET:
            bench_broad_bullet_update(im->bullet, boxes, fr->movers, fr->mover_count);
            im->sink += (uint32_t)bench_broad_bullet_pairs(im->bullet, im->out, im->out_capacity);
            break;
        case IMPL_FCL:
            bench_broad_fcl_update(im->fcl, boxes, fr->movers, fr->mover_count);
            im->sink += (uint32_t)bench_broad_fcl_pairs(im->fcl, im->out, im->out_capacity);
            break;
        case IMPL_LOWER_BOUND:
            im->sink += broad_lower_bound_run(im->lb, boxes, fr->n, fr->lb_pairs[f], fr->pair_count[f]);
            break;
    }
}

// ---- one case ---------------------------------------------------------------------------------

typedef struct case_desc {
    const char* name;
    ref_broad_scene_kind kind;
    double pairs_per_box;
    double moving;
    double step;
} case_desc;

static void make_frames(frames* fr, const case_desc* cd, int n, int count) {
    ref_broad_scene_desc sd = {0};
    sd.kind = cd->kind;
    sd.n = n;
    sd.seed = 42;
    sd.pairs_per_box = cd->pairs_per_box;
    sd.moving = cd->moving;
    sd.step = cd->step;
    ref_broad_scene scene;
    if (ref_broad_scene_make(&scene, &sd) != 0) fail("scene");
    memset(fr, 0, sizeof *fr);
    fr->n = n;
    fr->count = count;
    fr->boxes = xmalloc(sizeof(float) * 6 * (size_t)n * (size_t)count);
    fr->moves = xmalloc(sizeof(vec3s) * (size_t)n * (size_t)count);
    for (int k = 0; k < 3; k++) fr->world_min[k] = 1e30f, fr->world_max[k] = -1e30f;
    fr->movers = xmalloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++)
        if (scene.roles[i] != REF_ROLE_STATIC) fr->movers[fr->mover_count++] = i;
    for (int f = 0; f < count; f++) {
        store_frame(fr, f, &scene);
        ref_broad_scene_advance(&scene, 0.1);
    }
    ref_broad_scene_free(&scene);
}

static void free_frames(frames* fr) {
    for (int f = 0; f < fr->count; f++) {
        free(fr->pairs[f]);
        free(fr->swept[f]);
        free(fr->lb_pairs[f]);
    }
    free(fr->lb_pairs);
    free(fr->pairs);
    free(fr->pair_count);
    free(fr->swept);
    free(fr->swept_count);
    free(fr->boxes);
    free(fr->moves);
    free(fr->movers);
}

// Reference lists: in double when small enough; otherwise from carom's
// grid (all cells), which every other implementation is then checked against.
static void reference_lists(frames* fr) {
    int n = fr->n;
    fr->pairs = xmalloc(sizeof *fr->pairs * (size_t)fr->count);
    fr->pair_count = xmalloc(sizeof(int) * (size_t)fr->count);
    fr->swept = xmalloc(sizeof *fr->swept * (size_t)fr->count);
    fr->swept_count = xmalloc(sizeof(int) * (size_t)fr->count);
    fr->lb_pairs = xmalloc(sizeof *fr->lb_pairs * (size_t)fr->count);
    int* ids = xmalloc(sizeof(int) * (size_t)n);
    carom_aabb* boxes = xmalloc(sizeof *boxes * (size_t)n);
    for (int i = 0; i < n; i++) ids[i] = i;
    bool exact = n <= 20000;
    carom_broad grid;
    carom_broad_desc gd = {.kind = CAROM_BROAD_GRID, .grid_strategy = CAROM_GRID_ALL_CELLS,
                           .world = {{{fr->world_min[0], fr->world_min[1], fr->world_min[2]}},
                                     {{fr->world_max[0], fr->world_max[1], fr->world_max[2]}}}};
    carom_broad swept_grid;
    if (!exact && (carom_broad_create(&gd, &grid) != CAROM_OK ||
                   carom_broad_create(&gd, &swept_grid) != CAROM_OK))
        fail("reference grid");
    for (int f = 0; f < fr->count; f++) {
        for (int i = 0; i < n; i++) boxes[i] = box_at(fr, f, i);
        const vec3s* moves = fr->moves + (size_t)f * n;
        for (int pass = 0; pass < 2; pass++) {
            const vec3s* d = pass == 0 ? NULL : moves;
            carom_broad_pair* list;
            int count;
            if (exact) {
                list = ref_broad_pairs(n, ids, boxes, d, &count);
                if (count < 0) fail("reference");
            } else {
                carom_broad* g = pass == 0 ? &grid : &swept_grid;
                for (int i = 0; i < n; i++) {
                    vec3s di = d ? d[i] : (vec3s){{0, 0, 0}};
                    carom_status st = f == 0 ? carom_broad_insert(g, i, boxes[i], di)
                                             : carom_broad_move(g, i, boxes[i], di);
                    if (st != CAROM_OK) fail("reference grid insert");
                }
                if (carom_broad_update(g, NULL) != CAROM_OK) fail("reference grid update");
                carom_broad_pairs p = carom_broad_pair_list(g);
                count = p.count;
                list = xmalloc(sizeof *list * (size_t)(count + 1));
                memcpy(list, p.items, sizeof *list * (size_t)count);
            }
            if (pass == 0) fr->pairs[f] = list, fr->pair_count[f] = count;
            else fr->swept[f] = list, fr->swept_count[f] = count;
        }
        fr->lb_pairs[f] = xmalloc(sizeof(int) * 2 * (size_t)(fr->pair_count[f] + 1));
        for (int i = 0; i < fr->pair_count[f]; i++) {
            fr->lb_pairs[f][2 * i] = fr->pairs[f][i].a;
            fr->lb_pairs[f][2 * i + 1] = fr->pairs[f][i].b;
        }
    }
    if (!exact) {
        carom_broad_destroy(&grid);
        carom_broad_destroy(&swept_grid);
    }
    free(ids);
    free(boxes);
}

static impl* add_carom(impl* impls, int* count, const char* name, carom_broad_desc d, bool swept,
                       const frames* fr) {
    if (*count >= MAX_IMPLS) fail("too many implementations for MAX_IMPLS");
    impl* im = &impls[(*count)++];
    memset(im, 0, sizeof *im);
    im->name = name;
    im->type = IMPL_CAROM;
    im->swept = swept;
    im->desc = d;
    im->desc.world = (carom_aabb){{{fr->world_min[0], fr->world_min[1], fr->world_min[2]}},
                                  {{fr->world_max[0], fr->world_max[1], fr->world_max[2]}}};
    return im;
}

static void add_peer(impl* impls, int* count, impl_type type, int kind) {
    if (*count >= MAX_IMPLS) fail("too many implementations for MAX_IMPLS");
    impl* im = &impls[(*count)++];
    memset(im, 0, sizeof *im);
    im->type = type;
    im->desc.kind = (carom_broad_kind)kind;
    im->name = type == IMPL_LOWER_BOUND ? "lower-bound" : "?";
}

static void run_case(const bench_options* opt, const case_desc* cd, int n) {
    char case_name[64];
    snprintf(case_name, sizeof case_name, "%s-%dk", cd->name, n / 1000);
    if (!bench_case_selected(opt, case_name)) return;
    int frame_count = n >= 1000000 ? 3 : n >= 100000 ? 6 : opt->quick ? 6 : 12;
    int reps = n >= 1000000 ? 2 : n >= 100000 ? (opt->reps < 5 ? opt->reps : 5) : opt->reps;
    frames fr;
    make_frames(&fr, cd, n, frame_count + 1);
    fr.count = frame_count + 1;
    reference_lists(&fr);
    bench_note("%s: %d boxes, %d movers, %d frames, %d pairs on frame 0", case_name, n,
               fr.mover_count, frame_count, fr.pair_count[0]);

    impl impls[MAX_IMPLS];
    int count = 0;
    add_carom(impls, &count, "carom-sap", (carom_broad_desc){.kind = CAROM_BROAD_SAP}, false, &fr);
    add_carom(impls, &count, "carom-grid-all",
              (carom_broad_desc){.kind = CAROM_BROAD_GRID, .grid_strategy = CAROM_GRID_ALL_CELLS},
              false, &fr);
    add_carom(impls, &count, "carom-grid-centre",
              (carom_broad_desc){.kind = CAROM_BROAD_GRID, .grid_strategy = CAROM_GRID_CENTRE_CELL},
              false, &fr);
    // The same, reading the begin and end events every frame (the others
    // read the pair list only; the events are derived when first asked
    // for).
    add_carom(impls, &count, "carom-grid-centre-events",
              (carom_broad_desc){.kind = CAROM_BROAD_GRID, .grid_strategy = CAROM_GRID_CENTRE_CELL},
              false, &fr)
        ->events = true;
    add_carom(impls, &count, "carom-hash", (carom_broad_desc){.kind = CAROM_BROAD_HASH}, false, &fr);
    add_carom(impls, &count, "carom-tree", (carom_broad_desc){.kind = CAROM_BROAD_TREE}, false, &fr);
    add_carom(impls, &count, "carom-spacetime-sap",
              (carom_broad_desc){.kind = CAROM_BROAD_SPACETIME_SAP}, false, &fr);
    if (n <= 10000)
        add_carom(impls, &count, "carom-brute-force",
                  (carom_broad_desc){.kind = CAROM_BROAD_BRUTE_FORCE}, false, &fr);
    // The space-time SAP's swaps cost a priority-queue update each: beyond
    // 10k only its strong case (the convoy) is run.
    bool convoy = cd->kind == REF_SCENE_CONVOY;
    if (n <= 10000 || (convoy && n <= 100000)) {
        add_carom(impls, &count, "carom-spacetime-sap",
                  (carom_broad_desc){.kind = CAROM_BROAD_SPACETIME_SAP}, true, &fr);
        add_carom(impls, &count, "carom-sap-encapsulation",
                  (carom_broad_desc){.kind = CAROM_BROAD_SAP}, true, &fr);
    }
    add_peer(impls, &count, IMPL_FCL, BENCH_BROAD_FCL_DYNAMIC_TREE);
    add_peer(impls, &count, IMPL_BULLET, BENCH_BROAD_BULLET_DBVT);
    // FCL's SaP and spatial hash already take 10-50x the dynamic tree's time
    // at 10k (list operations in O(n) per update, a std::set per query), and
    // Bullet's axis sweep inserts in O(n) per proxy (minutes beyond 10k).
    // FCL's spatial hash puts a huge box of the mixed scene in every one of
    // the millions of cells it covers, and one frame takes minutes.
    if (n <= 10000) {
        // FCL's SaP keeps its overlapping pairs in a list searched linearly
        // on every change: the dense scene takes minutes per frame at 10k.
        if (n <= 1000 || cd->pairs_per_box <= 1.0) add_peer(impls, &count, IMPL_FCL, BENCH_BROAD_FCL_SAP);
        if (cd->kind != REF_SCENE_MIXED_SIZES)
            add_peer(impls, &count, IMPL_FCL, BENCH_BROAD_FCL_SPATIAL_HASH);
        add_peer(impls, &count, IMPL_BULLET, BENCH_BROAD_BULLET_SAP);
    }
    add_peer(impls, &count, IMPL_LOWER_BOUND, 0);

    // FCL's spatial hash: cells twice the typical box size.
    const float* b0 = frame_boxes(&fr, 0);
    bench_broad_scene bs = {b0, n, {fr.world_min[0], fr.world_min[1], fr.world_min[2]},
                            {fr.world_max[0], fr.world_max[1], fr.world_max[2]},
                            2.0f * (b0[3] - b0[0]), 0};
    int most = 0;
    for (int f = 0; f < fr.count; f++) {
        most = fr.pair_count[f] > most ? fr.pair_count[f] : most;
        most = fr.swept_count[f] > most ? fr.swept_count[f] : most;
    }
    carom_broad_pair* scratch = xmalloc(sizeof *scratch * (size_t)(n * 8 + most + 1024));
    for (int i = 0; i < count; i++) {
        impl* im = &impls[i];
        double t0 = bench_now_ns();
        impl_create(im, &fr, &bs);
        im->pass_ns = xmalloc(sizeof(double) * (size_t)(reps + 1));
        bench_note("  %s%s ready (%.0f ms)", im->name, im->swept ? " (swept)" : "",
                   (bench_now_ns() - t0) * 1e-6);
    }

    // First pass, forward, untimed: check every frame and collect statistics.
    for (int f = 1; f < fr.count - 1; f++) {
        for (int i = 0; i < count; i++) {
            impl* im = &impls[i];
            if (im->type == IMPL_LOWER_BOUND) continue;
            carom_broad_stats st = {0};
            impl_step(im, &fr, f, false, &st);
            if (im->type == IMPL_CAROM) {
                carom_broad_pairs p = carom_broad_pair_list(&im->broad);
                if (im->swept) check_frame(im, fr.swept[f], fr.swept_count[f], p.items, p.count, f);
                else check_frame(im, fr.pairs[f], fr.pair_count[f], p.items, p.count, f);
                im->pairs += p.count;
                im->candidates += st.candidates - st.pairs;
            } else {
                int got = peer_pairs(im, scratch);
                check_frame(im, fr.pairs[f], fr.pair_count[f], scratch, got, f);
                im->pairs += got;
            }
        }
    }
    // Timed passes: backward, forward, ... over frames 1 .. count - 2, every
    // implementation one pass in turn.
    int steps = fr.count - 3;
    for (int r = 0; r < reps; r++) {
        bool backward = r % 2 == 0;
        for (int k = 0; k < count; k++) {
            impl* im = &impls[(k + r) % count];
            double t0 = bench_now_ns();
            for (int s = 0; s < steps; s++) {
                int f = backward ? fr.count - 3 - s : 2 + s;
                impl_step(im, &fr, f, backward, NULL);
            }
            im->pass_ns[r] = (bench_now_ns() - t0) / steps;
        }
    }

    for (int i = 0; i < count; i++) {
        impl* im = &impls[i];
        char check[160] = "ok";
        if (im->wrong_frames)
            snprintf(check, sizeof check, "%d frames differ; frame %d: %d missing, %d extra",
                     im->wrong_frames, im->first_wrong_frame, im->missing, im->extra);
        double ns = bench_median(im->pass_ns, reps);
        size_t bytes = im->type == IMPL_CAROM    ? carom_broad_memory(&im->broad)
                       : im->type == IMPL_BULLET ? bench_broad_bullet_memory(im->bullet)
                       : im->type == IMPL_FCL    ? bench_broad_fcl_memory(im->fcl)
                                                 : 0;
        bench_json j;
        bench_json_begin(&j, "broad", case_name, im->name, n, ns, check);
        bench_json_str(&j, "question", im->swept ? "swept" : "overlap");
        bench_json_num(&j, "ms_per_frame", ns * 1e-6);
        bench_json_int(&j, "movers", fr.mover_count);
        int checked = fr.count - 2;
        if (im->type != IMPL_LOWER_BOUND)
            bench_json_num(&j, "pairs", (double)im->pairs / (checked > 0 ? checked : 1));
        if (im->swept)
            bench_json_num(&j, "false_pairs", (double)im->candidates / (checked > 0 ? checked : 1));
        if (bytes) bench_json_num(&j, "bytes_per_proxy", (double)bytes / n);
        bench_json_emit(&j);
        impl_destroy(im);
    }
    free(scratch);
    free_frames(&fr);
}

int main(int argc, char** argv) {
    bench_options opt = bench_parse_options(argc, argv, "carom_bench_broad");
    const case_desc cases[] = {
        {"uniform", REF_SCENE_UNIFORM, 1.0, 1.0, 0.05},
        {"dense", REF_SCENE_UNIFORM, 10.0, 1.0, 0.05},
        {"static", REF_SCENE_UNIFORM, 1.0, 0.01, 0.05},
        {"mixed", REF_SCENE_MIXED_SIZES, 1.0, 1.0, 0.05},
        {"convoy", REF_SCENE_CONVOY, 1.0, 0.3, 0.5},
    };
    const int sizes[] = {1000, 10000, 100000, 1000000};
    int size_count = opt.quick ? 2 : 4;
    for (int s = 0; s < size_count; s++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run_case(&opt, &cases[c], sizes[s]);
    return 0;
}
