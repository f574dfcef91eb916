// The broad phase: every kind against the double-precision reference
// (tests/common/broad_reference.h) on every scene kind, frame after frame,
// with moves, removals and re-insertions; the discrete kinds against each
// other bit for bit; exact answers for constructed motions; events; the
// space-time SAP's strengths (no false pairs, no swaps for a convoy); and
// every kind of bad input.
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "broad_reference.h"
#include "carom/carom.h"
#include "test_failing_alloc.h"

static bool light(void) {
    const char* v = getenv("CAROM_TEST_LIGHT");
    return v && *v && strcmp(v, "0") != 0;
}

// ---- the configurations under test -----------------------------------------------------

enum {
    CONFIG_BRUTE_FORCE,
    CONFIG_SAP,
    CONFIG_SPACETIME,
    CONFIG_GRID_ALL,
    CONFIG_GRID_CENTRE,
    CONFIG_HASH,
    CONFIG_TREE,
    CONFIG_COUNT
};

static const char* const config_names[CONFIG_COUNT] = {
    "brute-force", "sap", "spacetime-sap", "grid-all-cells", "grid-centre-cell", "hash", "tree",
};

static carom_broad_desc config_desc(int config, carom_aabb world) {
    carom_broad_desc d = {0};
    switch (config) {
        case CONFIG_BRUTE_FORCE: d.kind = CAROM_BROAD_BRUTE_FORCE; break;
        case CONFIG_SAP: d.kind = CAROM_BROAD_SAP; break;
        case CONFIG_SPACETIME: d.kind = CAROM_BROAD_SPACETIME_SAP; break;
        case CONFIG_GRID_ALL: d.kind = CAROM_BROAD_GRID; d.grid_strategy = CAROM_GRID_ALL_CELLS; break;
        case CONFIG_GRID_CENTRE:
            d.kind = CAROM_BROAD_GRID;
            d.grid_strategy = CAROM_GRID_CENTRE_CELL;
            break;
        case CONFIG_HASH: d.kind = CAROM_BROAD_HASH; break;
        case CONFIG_TREE: d.kind = CAROM_BROAD_TREE; break;
    }
    d.world = world;
    return d;
}

static bool is_discrete(int config) { return config != CONFIG_SPACETIME; }

// ---- helpers ------------------------------------------------------------------------------

static carom_aabb box3(float x0, float y0, float z0, float x1, float y1, float z1) {
    return (carom_aabb){{{x0, y0, z0}}, {{x1, y1, z1}}};
}

static vec3s vec(float x, float y, float z) { return (vec3s){{x, y, z}}; }

static const vec3s still = {{0.0f, 0.0f, 0.0f}};

static void check_against_reference(const ref_broad_list* ref, const carom_broad* broad,
                                    const char* what) {
    carom_broad_pairs got = carom_broad_pair_list(broad);
    ref_broad_report r = ref_broad_compare(ref, got.items, got.count, REF_BROAD_TIME_TOL);
    if (!r.ok) {
        char buf[400];
        fail_msg("%s: %s", what, ref_broad_report_message(&r, buf, sizeof buf));
    }
}

static bool same_pairs(carom_broad_pairs x, carom_broad_pairs y) {
    if (x.count != y.count) return false;
    for (int i = 0; i < x.count; i++) {
        if (x.items[i].a != y.items[i].a || x.items[i].b != y.items[i].b ||
            x.items[i].time != y.items[i].time)
            return false;
    }
    return true;
}

static bool pair_less(carom_broad_pair x, carom_broad_pair y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
}

// Begin events are exactly the pairs of `now` missing from `before`, end
// events the other way round, both in (a, b) order. The end events are read
// first every other call, so that either view may be the one that derives
// them.
static void check_events(const carom_broad_pair* before, int nb, carom_broad_pairs now,
                         const carom_broad* broad, const char* what) {
    static int calls;
    const bool ends_first = calls++ % 2 == 1;
    carom_broad_pairs ends = {NULL, 0};
    if (ends_first) ends = carom_broad_end_events(broad);
    carom_broad_pairs begins = carom_broad_begin_events(broad);
    if (!ends_first) ends = carom_broad_end_events(broad);
    int i = 0, j = 0, b = 0, e = 0;
    while (i < nb || j < now.count) {
        if (j == now.count || (i < nb && pair_less(before[i], now.items[j]))) {
            if (e >= ends.count || ends.items[e].a != before[i].a || ends.items[e].b != before[i].b)
                fail_msg("%s: end event %d wrong", what, e);
            e++;
            i++;
        } else if (i == nb || pair_less(now.items[j], before[i])) {
            if (b >= begins.count || begins.items[b].a != now.items[j].a ||
                begins.items[b].b != now.items[j].b)
                fail_msg("%s: begin event %d wrong", what, b);
            b++;
            j++;
        } else {
            i++;
            j++;
        }
    }
    assert_int_equal(b, begins.count);
    assert_int_equal(e, ends.count);
}

static carom_broad_pair* copy_pairs(carom_broad_pairs p) {
    carom_broad_pair* c = malloc(sizeof *c * (size_t)(p.count + 1));
    assert_non_null(c);
    if (p.count) memcpy(c, p.items, sizeof *c * (size_t)p.count);
    return c;
}

// ---- random scenes against the reference ------------------------------------------------------

// Runs `frames` steps of a scene through every configuration. Movers are
// moved each step; static proxies are left alone, so kinds that keep state
// between steps see only what changed. Every few frames some proxies are
// removed and later inserted again, and some are removed and inserted again
// within one step, into each other's slots. Ids are:
// - IDS_SPREAD: spread over the whole int range;
// - IDS_DENSE: a shuffled run of n consecutive ints straddling zero;
// - IDS_SLOTS: 0 to n - 1 in insertion order, so that every id is its slot
//   (the update's fast path) until proxies removed apart come back in
//   another order; those removed and inserted within one step come back in
//   reverse, into their own slots.
typedef enum id_scheme { IDS_SPREAD, IDS_DENSE, IDS_SLOTS } id_scheme;

static void run_scene_ids(ref_broad_scene_kind kind, int n, double moving, double step,
                          int frames, double offset, double band, id_scheme ids) {
    ref_broad_scene_desc sd = {0};
    sd.kind = kind;
    sd.n = n;
    sd.seed = 1000u + (unsigned)kind * 17u + (unsigned)n;
    sd.moving = moving;
    sd.step = step;
    sd.offset = offset;
    sd.box_size = offset > 1e6 ? offset * 1e-3 : 1.0;
    ref_broad_scene scene;
    assert_int_equal(ref_broad_scene_make(&scene, &sd), 0);
    if (ids != IDS_SLOTS)
        assert_int_equal(ref_broad_scene_shuffle_ids(&scene, 77u + (unsigned)kind), 0);
    if (ids == IDS_DENSE) {
        // The shuffled ids' ranks, shifted to straddle zero.
        int* rank = calloc((size_t)n, sizeof *rank);
        assert_non_null(rank);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) rank[i] += scene.ids[j] < scene.ids[i];
        for (int i = 0; i < n; i++) scene.ids[i] = rank[i] - n / 2;
        free(rank);
    }

    carom_broad broads[CONFIG_COUNT];
    // The lists of the last two updates, for the events.
    carom_broad_pair* before[CONFIG_COUNT] = {0};
    int before_count[CONFIG_COUNT] = {0};
    carom_broad_pair* previous[CONFIG_COUNT] = {0};
    int previous_count[CONFIG_COUNT] = {0};
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad_desc d = config_desc(c, scene.world);
        assert_int_equal(carom_broad_create(&d, &broads[c]), CAROM_OK);
        for (int i = 0; i < n; i++)
            assert_int_equal(carom_broad_insert(&broads[c], scene.ids[i], scene.boxes[i],
                                                scene.displacements[i]),
                             CAROM_OK);
    }
    bool* out = calloc((size_t)n, sizeof *out);  // removed from every broad phase
    int* again_index = malloc(sizeof *again_index * (size_t)n);
    assert_true(out && again_index);
    int* present_ids = malloc(sizeof *present_ids * (size_t)n);
    carom_aabb* present_boxes = malloc(sizeof *present_boxes * (size_t)n);
    vec3s* present_moves = malloc(sizeof *present_moves * (size_t)n);
    assert_true(present_ids && present_boxes && present_moves);

    for (int f = 0; f < frames; f++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (out[i]) continue;
            present_ids[m] = scene.ids[i];
            present_boxes[m] = scene.boxes[i];
            present_moves[m] = scene.displacements[i];
            m++;
        }
        ref_broad_list ref;
        assert_int_equal(ref_broad_reference(&ref, m, present_ids, present_boxes, present_moves, band), 0);
        for (int c = 0; c < CONFIG_COUNT; c++) {
            char what[160];
            snprintf(what, sizeof what, "%s, %s scene of %d, frame %d", config_names[c],
                     ref_broad_scene_kind_name(kind), n, f);
            carom_broad_stats stats;
            assert_int_equal(carom_broad_update(&broads[c], &stats), CAROM_OK);
            assert_int_equal(stats.proxies, m);
            check_against_reference(&ref, &broads[c], what);
            // The events are derived when first asked for: read at once
            // (f % 3 == 0), never (1: the next update's must not depend on
            // it), or only after this frame's removes and moves (2).
            carom_broad_pairs list = carom_broad_pair_list(&broads[c]);
            if (f % 3 == 0) check_events(before[c], before_count[c], list, &broads[c], what);
            // The discrete kinds run one exact test on the same fat boxes:
            // their lists are identical, times included.
            if (c != CONFIG_BRUTE_FORCE && is_discrete(c) &&
                !same_pairs(carom_broad_pair_list(&broads[c]),
                            carom_broad_pair_list(&broads[CONFIG_BRUTE_FORCE])))
                fail_msg("%s: differs from brute force", what);
            free(previous[c]);
            previous[c] = before[c];
            previous_count[c] = before_count[c];
            before[c] = copy_pairs(list);
            before_count[c] = list.count;
        }
        ref_broad_list_free(&ref);

        ref_broad_scene_advance(&scene, 0.3);
        // Every other frame the moves go in one carom_broad_move_many call,
        // after the removes and inserts.
        const bool batch = f % 2 == 1;
        int batch_count = 0;
        int again_count = 0;
        for (int i = 0; i < n; i++) {
            bool leave = f % 3 == 2 && !out[i] && (i * 7 + f) % 41 == 0;
            bool back = f % 3 == 1 && out[i];
            bool again = f % 3 == 0 && !out[i] && (i * 13 + f) % 37 == 0;
            if (again) {
                again_index[again_count++] = i;
                continue;
            }
            bool move = !leave && !back && !out[i] && scene.roles[i] != REF_ROLE_STATIC;
            if (move && batch) {
                present_ids[batch_count] = scene.ids[i];
                present_boxes[batch_count] = scene.boxes[i];
                present_moves[batch_count++] = scene.displacements[i];
                continue;
            }
            for (int c = 0; c < CONFIG_COUNT; c++) {
                carom_broad* b = &broads[c];
                if (leave) {
                    assert_int_equal(carom_broad_remove(b, scene.ids[i]), CAROM_OK);
                } else if (back) {
                    assert_int_equal(carom_broad_insert(b, scene.ids[i], scene.boxes[i],
                                                        scene.displacements[i]),
                                     CAROM_OK);
                } else if (move) {
                    assert_int_equal(carom_broad_move(b, scene.ids[i], scene.boxes[i],
                                                      scene.displacements[i]),
                                     CAROM_OK);
                }
            }
            if (leave) out[i] = true;
            if (back) out[i] = false;
        }
        // All of them out, then all back in the same order: the freed
        // slots are taken in reverse, so most ids change slot.
        for (int c = 0; c < CONFIG_COUNT; c++) {
            for (int k = 0; k < again_count; k++)
                assert_int_equal(carom_broad_remove(&broads[c], scene.ids[again_index[k]]), CAROM_OK);
            for (int k = 0; k < again_count; k++) {
                int i = again_index[ids == IDS_SLOTS ? again_count - 1 - k : k];
                assert_int_equal(carom_broad_insert(&broads[c], scene.ids[i], scene.boxes[i],
                                                    scene.displacements[i]),
                                 CAROM_OK);
            }
        }
        for (int c = 0; batch && c < CONFIG_COUNT; c++) {
            int applied = -1;
            assert_int_equal(carom_broad_move_many(&broads[c], batch_count, present_ids,
                                                   present_boxes, present_moves, &applied),
                             CAROM_OK);
            assert_int_equal(applied, batch_count);
        }
        for (int c = 0; f % 3 == 2 && c < CONFIG_COUNT; c++) {
            char what[160];
            snprintf(what, sizeof what, "%s, %s scene of %d, events of frame %d read late",
                     config_names[c], ref_broad_scene_kind_name(kind), n, f);
            check_events(previous[c], previous_count[c],
                         (carom_broad_pairs){before[c], before_count[c]}, &broads[c], what);
        }
    }
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad_destroy(&broads[c]);
        free(before[c]);
        free(previous[c]);
    }
    free(out);
    free(again_index);
    free(present_ids);
    free(present_boxes);
    free(present_moves);
    ref_broad_scene_free(&scene);
}

static void run_scene(ref_broad_scene_kind kind, int n, double moving, double step, int frames,
                      double offset, double band) {
    run_scene_ids(kind, n, moving, step, frames, offset, band, IDS_SPREAD);
    run_scene_ids(kind, n, moving, step, frames, offset, band, IDS_DENSE);
}

static int scene_size(void) { return light() ? 300 : 1500; }
static int scene_frames(void) { return light() ? 3 : 7; }

static void test_uniform_all_moving(void** state) {
    (void)state;
    run_scene(REF_SCENE_UNIFORM, scene_size(), 1.0, 0.05, scene_frames(), 0.0, REF_BROAD_BAND);
}

static void test_uniform_few_moving(void** state) {
    (void)state;
    run_scene(REF_SCENE_UNIFORM, scene_size(), 0.03, 0.2, scene_frames(), 0.0, REF_BROAD_BAND);
}

static void test_clustered(void** state) {
    (void)state;
    run_scene(REF_SCENE_CLUSTERED, scene_size(), 0.5, 0.1, scene_frames(), 0.0, REF_BROAD_BAND);
}

static void test_mixed_sizes(void** state) {
    (void)state;
    run_scene(REF_SCENE_MIXED_SIZES, scene_size(), 0.5, 0.1, scene_frames(), 0.0, REF_BROAD_BAND);
}

static void test_convoy(void** state) {
    (void)state;
    run_scene(REF_SCENE_CONVOY, scene_size(), 0.3, 0.5, scene_frames(), 0.0, REF_BROAD_BAND);
}

static void test_fast_movers(void** state) {
    (void)state;
    run_scene(REF_SCENE_FAST_MOVERS, scene_size(), 1.0, 0.1, scene_frames(), 0.0, REF_BROAD_BAND);
}

// Ids that are their slots: the update writes the list from its sort keys
// alone, times included (a scene where every box moves and one of fast
// movers, whose times spread over the step), until the ids leave their
// slots; a few proxies are removed while they still hold them.
static void test_ids_are_slots(void** state) {
    (void)state;
    run_scene_ids(REF_SCENE_UNIFORM, scene_size(), 1.0, 0.05, scene_frames(), 0.0,
                  REF_BROAD_BAND, IDS_SLOTS);
    run_scene_ids(REF_SCENE_FAST_MOVERS, scene_size(), 1.0, 0.1, scene_frames(), 0.0,
                  REF_BROAD_BAND, IDS_SLOTS);
}

// The centre-cell grid refills last rebuild's entries while its layout
// holds (boxes keep their cells, or move to others), and builds them anew
// when the layout changes. Against brute force, frame after frame: boxes
// drift and jump; proxies are removed (their entries go) and inserted into
// fresh slots (not among the entries); some grow past the cell (the big
// list) and shrink back; once every box grows enough to change the cell.
// The last frames only move boxes, none big: from the second of them on,
// every alive slot is an entry, and the refill walks the entries alone.
static unsigned refill_random(unsigned* state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static float refill_uniform(unsigned* state, float lo, float hi) {
    return lo + (hi - lo) * (float)refill_random(state) / (float)(1u << 24);
}

// Updates a grid and a brute-force broad phase holding the same proxies;
// true when their pair lists are the same.
static bool update_both_agree(carom_broad* grid, carom_broad* brute, carom_broad_stats* stats) {
    assert_int_equal(carom_broad_update(grid, stats), CAROM_OK);
    assert_int_equal(carom_broad_update(brute, NULL), CAROM_OK);
    return same_pairs(carom_broad_pair_list(grid), carom_broad_pair_list(brute));
}

// With a fixed cell size the layout never changes: every update after the
// first refills (stats.rebuilt false). With the automatic size, the update
// after the boxes grew lays the grid out anew (rebuilt true).
static void run_grid_refill(double cell_size) {
    enum { START = 600, FRAMES = 12, MOST = START + FRAMES * 15 };
    const carom_aabb world = box3(0.0f, 0.0f, 0.0f, 15.0f, 15.0f, 15.0f);
    carom_broad_desc grid_desc = config_desc(CONFIG_GRID_CENTRE, world);
    grid_desc.cell_size = (float)cell_size;
    carom_broad_desc brute_desc = config_desc(CONFIG_BRUTE_FORCE, world);
    carom_broad grid, brute;
    assert_int_equal(carom_broad_create(&grid_desc, &grid), CAROM_OK);
    assert_int_equal(carom_broad_create(&brute_desc, &brute), CAROM_OK);
    float centre[MOST][3], half[MOST];
    bool present[MOST] = {false};
    unsigned rng = 12345u;
    int count = 0;
    for (; count < START; count++) {
        for (int k = 0; k < 3; k++) centre[count][k] = refill_uniform(&rng, 0.0f, 15.0f);
        half[count] = refill_uniform(&rng, 0.3f, 0.7f);
        present[count] = true;
    }
    for (int f = 0; f < FRAMES; f++) {
        // Frames 6 and 7 grow every box threefold, past the cell; frame 8
        // brings them back. Until frame 9, fewer than one box in 64 is six
        // times its size (big), and proxies come and go.
        const float scale = f == 6 || f == 7 ? 3.0f : 1.0f;
        const bool churn = f > 0 && f < 9;
        for (int i = 0; i < count; i++) {
            if (!present[i]) continue;
            for (int k = 0; k < 3; k++) {
                // Most drift a little; one in ten jumps a cell or more.
                float step = refill_random(&rng) % 10 == 0 ? 2.0f : 0.1f;
                centre[i][k] += refill_uniform(&rng, -step, step);
            }
            float h = half[i] * scale * (churn && i % 97 == f % 97 ? 6.0f : 1.0f);
            carom_aabb b = box3(centre[i][0] - h, centre[i][1] - h, centre[i][2] - h,
                                centre[i][0] + h, centre[i][1] + h, centre[i][2] + h);
            carom_status st = f == 0 ? carom_broad_insert(&grid, i, b, still)
                                     : carom_broad_move(&grid, i, b, still);
            assert_int_equal(st, CAROM_OK);
            st = f == 0 ? carom_broad_insert(&brute, i, b, still)
                        : carom_broad_move(&brute, i, b, still);
            assert_int_equal(st, CAROM_OK);
        }
        // Ten removed, fifteen new ones: ten take the freed slots (among the
        // last entries), five fresh ones (not among them).
        for (int r = 0; r < 10 && churn; r++) {
            int i = (int)(refill_random(&rng) % (unsigned)count);
            if (!present[i]) continue;
            assert_int_equal(carom_broad_remove(&grid, i), CAROM_OK);
            assert_int_equal(carom_broad_remove(&brute, i), CAROM_OK);
            present[i] = false;
        }
        for (int r = 0; r < 15 && churn; r++, count++) {
            for (int k = 0; k < 3; k++) centre[count][k] = refill_uniform(&rng, 0.0f, 15.0f);
            half[count] = refill_uniform(&rng, 0.3f, 0.7f);
            present[count] = true;
            float h = half[count];
            carom_aabb b = box3(centre[count][0] - h, centre[count][1] - h, centre[count][2] - h,
                                centre[count][0] + h, centre[count][1] + h, centre[count][2] + h);
            assert_int_equal(carom_broad_insert(&grid, count, b, still), CAROM_OK);
            assert_int_equal(carom_broad_insert(&brute, count, b, still), CAROM_OK);
        }
        carom_broad_stats stats;
        if (!update_both_agree(&grid, &brute, &stats))
            fail_msg("cell %g, frame %d: the centre-cell grid differs from brute force",
                     cell_size, f);
        if (cell_size > 0.0 && f > 0 && stats.rebuilt)
            fail_msg("fixed cell, frame %d: rebuilt rather than refilled", f);
        // Frame 7's update sizes the cell from frame 6's grown boxes.
        if (cell_size == 0.0 && f == 7 && !stats.rebuilt)
            fail_msg("automatic cell, frame 7: the boxes grew, yet the layout held");
    }
    carom_broad_destroy(&grid);
    carom_broad_destroy(&brute);
}

static void test_grid_refill(void** state) {
    (void)state;
    run_grid_refill(1.5);
    run_grid_refill(0.0);
}

// A pair touching at the start of the step and approaching: its time is
// +0, not -0 (the swept test's entry time is then 0 / -1), through both
// ways the pair sort makes the list (ids that are the slots, and others).
static void test_touching_time_is_plus_zero(void** state) {
    (void)state;
    const carom_aabb world = box3(-10, -10, -10, 10, 10, 10);
    const carom_aabb a = box3(0, 0, 0, 1, 1, 1), b = box3(1, 0, 0, 2, 1, 1);
    const int ids[2][2] = {{0, 1}, {7, -3}};
    for (int c = 0; c < CONFIG_COUNT; c++) {
        for (int k = 0; k < 2; k++) {
            carom_broad broad;
            carom_broad_desc d = config_desc(c, world);
            assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
            assert_int_equal(carom_broad_insert(&broad, ids[k][0], a, still), CAROM_OK);
            assert_int_equal(carom_broad_insert(&broad, ids[k][1], b, vec(-1, 0, 0)), CAROM_OK);
            assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
            carom_broad_pairs p = carom_broad_pair_list(&broad);
            assert_int_equal(p.count, 1);
            const int low = ids[k][0] < ids[k][1] ? ids[k][0] : ids[k][1];
            assert_int_equal(p.items[0].a, low);
            assert_int_equal(p.items[0].b, ids[k][0] ^ ids[k][1] ^ low);
            if (p.items[0].time != 0.0f || signbit(p.items[0].time))
                fail_msg("%s, ids %d and %d: time %g", config_names[c], ids[k][0], ids[k][1],
                         (double)p.items[0].time);
            carom_broad_destroy(&broad);
        }
    }
}

// Boxes a thousandth of a 1e9 world in size, 1e9 from the origin: float
// spacing there is 64, so the band is relative to coordinates.
static void test_far_from_origin(void** state) {
    (void)state;
    run_scene(REF_SCENE_UNIFORM, light() ? 200 : 800, 0.5, 0.3, 3, 1e9, REF_BROAD_BAND);
    run_scene(REF_SCENE_FAST_MOVERS, light() ? 200 : 800, 1.0, 0.3, 3, 1e9, REF_BROAD_BAND);
}

// ---- constructed motions --------------------------------------------------------------------

// One pair of boxes in every configuration; returns the first time, or -1
// when no configuration reports the pair (they must all agree).
static float pair_time(carom_aabb a, vec3s da, carom_aabb b, vec3s db) {
    carom_aabb world = box3(-100, -100, -100, 100, 100, 100);
    float first = -2.0f;
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 7, a, da), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, -3, b, db), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        carom_broad_pairs p = carom_broad_pair_list(&broad);
        float t = -1.0f;
        if (p.count == 1) {
            assert_int_equal(p.items[0].a, -3);
            assert_int_equal(p.items[0].b, 7);
            t = p.items[0].time;
        } else {
            assert_int_equal(p.count, 0);
        }
        if (first != -2.0f && t != first)
            fail_msg("%s: time %.9g, other kinds %.9g", config_names[c], (double)t, (double)first);
        first = t;
        carom_broad_destroy(&broad);
    }
    // The public test gives the same answer, either way round.
    assert_true(carom_aabb_sweep_time(a, da, b, db) == first);
    assert_true(carom_aabb_sweep_time(b, db, a, da) == first);
    return first;
}

static void test_constructed_motions(void** state) {
    (void)state;
    carom_aabb unit = box3(0, 0, 0, 1, 1, 1);
    // Static: overlapping, touching (counts), apart by one float step.
    assert_true(pair_time(unit, still, box3(0.5f, 0.5f, 0.5f, 2, 2, 2), still) == 0.0f);
    assert_true(pair_time(unit, still, box3(1, 0, 0, 2, 1, 1), still) == 0.0f);
    assert_true(pair_time(unit, still, box3(nextafterf(1.0f, 2.0f), 0, 0, 2, 1, 1), still) == -1.0f);
    // Head-on: b from x = 9 towards a, covering 16 in the step: b's low face
    // reaches a's high face when 9 - 16 t = 1, at t = 0.5.
    assert_true(pair_time(unit, still, box3(9, 0, 0, 10, 1, 1), vec(-16, 0, 0)) == 0.5f);
    // Passing clean through within the step: start and end boxes are both
    // clear of a, the sweep is not. b starts at x in [-5, -4] and moves 10.
    assert_true(pair_time(unit, still, box3(-5, 0, 0, -4, 1, 1), vec(10, 0, 0)) == 0.4f);
    // Both moving towards each other, 4 apart, closing speed 8: t = 0.5.
    assert_true(pair_time(unit, vec(4, 0, 0), box3(5, 0, 0, 6, 1, 1), vec(-4, 0, 0)) == 0.5f);
    // Touching exactly at the end of the step counts; just short does not.
    assert_true(pair_time(unit, still, box3(3, 0, 0, 4, 1, 1), vec(-2, 0, 0)) == 1.0f);
    assert_true(pair_time(unit, still, box3(3, 0, 0, 4, 1, 1), vec(-1.875f, 0, 0)) == -1.0f);
    // Moving in parallel: never meet, or overlapping throughout.
    assert_true(pair_time(unit, vec(5, 0, 0), box3(0, 2, 0, 1, 3, 1), vec(5, 0, 0)) == -1.0f);
    assert_true(pair_time(unit, vec(5, 1, 0), box3(0.5f, 0, 0, 1, 1, 1), vec(5, 1, 0)) == 0.0f);
    // Diagonal: x overlaps from t = 0.25, y only from t = 0.5.
    assert_true(pair_time(unit, still, box3(2, 3, 0, 3, 4, 1), vec(-4, -4, 0)) == 0.5f);
    // x leaves before y arrives: no pair, though the fat boxes overlap.
    assert_true(pair_time(unit, still, box3(-0.5f, 3, 0, 0.5f, 4, 1), vec(4, -4, 0)) == -1.0f);
}

// A fast mover crossing a row of static boxes, entirely inside one step:
// every box on its path is a pair with the exact time it is reached, and a
// discrete test of the start and end boxes alone finds none of them.
static void test_fast_mover_crosses_row(void** state) {
    (void)state;
    enum { ROW = 20 };
    carom_aabb world = box3(-10, -10, -10, 60, 10, 10);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        for (int i = 0; i < ROW; i++)
            assert_int_equal(carom_broad_insert(&broad, i, box3(2.0f * (float)i + 1, 0, 0,
                                                               2.0f * (float)i + 2, 1, 1),
                                                still),
                             CAROM_OK);
        // From x in [-2, -1] to [46, 47]: reaches box i (low face 2i + 1)
        // when -1 + 48 t = 2i + 1.
        assert_int_equal(carom_broad_insert(&broad, 100, box3(-2, 0, 0, -1, 1, 1), vec(48, 0, 0)),
                         CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        carom_broad_pairs p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, ROW);
        for (int i = 0; i < ROW; i++) {
            assert_int_equal(p.items[i].a, i);
            assert_int_equal(p.items[i].b, 100);
            float expect = (2.0f * (float)i + 2.0f) / 48.0f;
            if (fabsf(p.items[i].time - expect) > 1e-6f)
                fail_msg("%s: box %d at %.9g, expected %.9g", config_names[c], i,
                         (double)p.items[i].time, (double)expect);
        }
        carom_broad_destroy(&broad);
    }
}

// Encapsulation (the incremental SAP on fat boxes) examines pairs whose fat
// boxes meet though the boxes never do; the space-time SAP examines none.
static void test_spacetime_has_no_false_pairs(void** state) {
    (void)state;
    ref_broad_scene_desc sd = {0};
    sd.kind = REF_SCENE_FAST_MOVERS;
    sd.n = light() ? 500 : 3000;
    sd.seed = 5;
    sd.moving = 1.0;
    sd.step = 0.2;
    ref_broad_scene scene;
    assert_int_equal(ref_broad_scene_make(&scene, &sd), 0);
    carom_broad sap, st;
    carom_broad_desc d = {0};
    assert_int_equal(carom_broad_create(&d, &sap), CAROM_OK);
    d.kind = CAROM_BROAD_SPACETIME_SAP;
    assert_int_equal(carom_broad_create(&d, &st), CAROM_OK);
    for (int i = 0; i < scene.n; i++) {
        assert_int_equal(carom_broad_insert(&sap, scene.ids[i], scene.boxes[i], scene.displacements[i]), CAROM_OK);
        assert_int_equal(carom_broad_insert(&st, scene.ids[i], scene.boxes[i], scene.displacements[i]), CAROM_OK);
    }
    carom_broad_stats s1, s2;
    assert_int_equal(carom_broad_update(&sap, &s1), CAROM_OK);
    assert_int_equal(carom_broad_update(&st, &s2), CAROM_OK);
    assert_int_equal(s1.pairs, s2.pairs);
    assert_true(s1.candidates > s1.pairs);      // encapsulation's false pairs
    assert_true(s2.candidates == s2.pairs);     // none
    carom_broad_destroy(&sap);
    carom_broad_destroy(&st);
    ref_broad_scene_free(&scene);
}

// Boxes moving together never swap endpoints, however far they go.
static void test_convoy_costs_no_swaps(void** state) {
    (void)state;
    carom_broad broad;
    carom_broad_desc d = {0};
    d.kind = CAROM_BROAD_SPACETIME_SAP;
    assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
    enum { SIDE = 10 };
    vec3s v = vec(3.5f, -1.25f, 0.5f);  // several box sizes per step
    carom_aabb boxes[SIDE * SIDE * SIDE];
    for (int i = 0; i < SIDE * SIDE * SIDE; i++) {
        float x = (float)(i % SIDE) * 0.9f, y = (float)(i / SIDE % SIDE) * 0.9f,
              z = (float)(i / (SIDE * SIDE)) * 0.9f;
        boxes[i] = box3(x, y, z, x + 1, y + 1, z + 1);
        assert_int_equal(carom_broad_insert(&broad, i, boxes[i], v), CAROM_OK);
    }
    carom_broad_stats stats;
    assert_int_equal(carom_broad_update(&broad, &stats), CAROM_OK);
    int pairs = stats.pairs;
    assert_true(pairs > 0);
    for (int step = 0; step < 5; step++) {
        for (int i = 0; i < SIDE * SIDE * SIDE; i++) {
            // Offsets that are multiples of a power of two keep box + v exact,
            // so the convoy stays rigid in float.
            boxes[i].min = glms_vec3_add(boxes[i].min, v);
            boxes[i].max = glms_vec3_add(boxes[i].max, v);
            assert_int_equal(carom_broad_move(&broad, i, boxes[i], v), CAROM_OK);
        }
        assert_int_equal(carom_broad_update(&broad, &stats), CAROM_OK);
        assert_int_equal(stats.swaps, 0);
        assert_int_equal(stats.pairs, pairs);
        assert_int_equal(carom_broad_begin_events(&broad).count, 0);
        assert_int_equal(carom_broad_end_events(&broad).count, 0);
    }
    carom_broad_destroy(&broad);
}

// ---- events ---------------------------------------------------------------------------------

static void test_events(void** state) {
    (void)state;
    carom_aabb world = box3(-10, -10, -10, 10, 10, 10);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        assert_int_equal(carom_broad_pair_list(&broad).count, 0);
        assert_int_equal(carom_broad_insert(&broad, 1, box3(0, 0, 0, 1, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 2, box3(0.5f, 0, 0, 1.5f, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 3, box3(5, 5, 5, 6, 6, 6), still), CAROM_OK);
        carom_broad_stats s;
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(carom_broad_begin_events(&broad).count, 1);
        assert_int_equal(carom_broad_begin_events(&broad).items[0].a, 1);
        assert_int_equal(carom_broad_begin_events(&broad).items[0].b, 2);
        // Nothing changes: no events, the same list.
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(carom_broad_begin_events(&broad).count, 0);
        assert_int_equal(carom_broad_end_events(&broad).count, 0);
        assert_int_equal(s.pairs, 1);
        // 3 moves onto 2 while 1 leaves: one begin, one end.
        assert_int_equal(carom_broad_move(&broad, 3, box3(1.2f, 0, 0, 2, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_move(&broad, 1, box3(-3, 0, 0, -2, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(carom_broad_begin_events(&broad).count, 1);
        assert_int_equal(carom_broad_end_events(&broad).count, 1);
        assert_int_equal(carom_broad_begin_events(&broad).items[0].a, 2);
        assert_int_equal(carom_broad_begin_events(&broad).items[0].b, 3);
        assert_int_equal(carom_broad_end_events(&broad).items[0].a, 1);
        // Removal ends the pair; inserting the id again begins it again.
        assert_int_equal(carom_broad_remove(&broad, 3), CAROM_OK);
        assert_false(carom_broad_contains(&broad, 3));
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(carom_broad_end_events(&broad).count, 1);
        assert_int_equal(s.pairs, 0);
        assert_int_equal(carom_broad_insert(&broad, 3, box3(1.2f, 0, 0, 2, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(carom_broad_begin_events(&broad).count, 1);
        assert_int_equal(s.pairs, 1);
        assert_true(carom_broad_memory(&broad) > 0);
        carom_broad_destroy(&broad);
        assert_null(broad.data);
    }
}

// ---- bad input ------------------------------------------------------------------------------

static void test_create_rejects_bad_descriptions(void** state) {
    (void)state;
    carom_broad b;
    assert_int_equal(carom_broad_create(NULL, NULL), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_create(NULL, &b), CAROM_OK);  // defaults: SAP
    assert_int_equal(b.kind, CAROM_BROAD_SAP);
    carom_broad_destroy(&b);
    carom_broad_destroy(&b);  // twice is harmless
    carom_broad_destroy(NULL);

    carom_broad_desc d = {0};
    d.kind = (carom_broad_kind)99;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    assert_null(b.data);
    d = (carom_broad_desc){0};
    d.grid_strategy = (carom_grid_strategy)7;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d = (carom_broad_desc){0};
    d.kind = CAROM_BROAD_GRID;  // no world
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.world = box3(0, 0, 0, 1, 0, 1);  // flat
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.world = box3(0, 0, 0, NAN, 1, 1);
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.world = box3(0, 0, 0, 1, 1, 1);
    d.cell_size = -1.0f;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.cell_size = NAN;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.cell_size = INFINITY;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.cell_size = 0.0f;
    d.tree_margin = -0.5f;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.tree_margin = 0.0f;
    d.capacity_hint = -1;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_ERR_INVALID_ARG);
    d.capacity_hint = 1000;
    assert_int_equal(carom_broad_create(&d, &b), CAROM_OK);
    carom_broad_destroy(&b);
}

static void test_bad_proxies_change_nothing(void** state) {
    (void)state;
    carom_aabb world = box3(-1e9f, -1e9f, -1e9f, 1e9f, 1e9f, 1e9f);
    carom_aabb good = box3(0, 0, 0, 1, 1, 1);
    carom_aabb bad[] = {
        box3(NAN, 0, 0, 1, 1, 1),     box3(0, 0, 0, INFINITY, 1, 1), box3(0, -INFINITY, 0, 1, 1, 1),
        box3(1, 0, 0, 0, 1, 1),       // inverted
        box3(0, 0, 0, 1, 1, 2e12f),   // beyond CAROM_MAX_COORDINATE
    };
    vec3s bad_moves[] = {vec(NAN, 0, 0), vec(0, INFINITY, 0), vec(0, 0, -2e12f)};
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 5, good, still), CAROM_OK);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            assert_int_equal(carom_broad_insert(&broad, 6, bad[i], still), CAROM_ERR_INVALID_ARG);
            assert_int_equal(carom_broad_move(&broad, 5, bad[i], still), CAROM_ERR_INVALID_ARG);
        }
        for (size_t i = 0; i < sizeof bad_moves / sizeof bad_moves[0]; i++) {
            assert_int_equal(carom_broad_insert(&broad, 6, good, bad_moves[i]), CAROM_ERR_INVALID_ARG);
            assert_int_equal(carom_broad_move(&broad, 5, good, bad_moves[i]), CAROM_ERR_INVALID_ARG);
        }
        assert_false(carom_broad_contains(&broad, 6));
        assert_int_equal(carom_broad_insert(&broad, 5, good, still), CAROM_ERR_DUPLICATE_ID);
        assert_int_equal(carom_broad_move(&broad, 6, good, still), CAROM_ERR_UNKNOWN_ID);
        assert_int_equal(carom_broad_remove(&broad, 6), CAROM_ERR_UNKNOWN_ID);
        assert_int_equal(broad.proxy_count, 1);
        // A zero-size box (a point) is a valid proxy; so are INT_MIN and INT_MAX.
        assert_int_equal(carom_broad_insert(&broad, INT_MIN, box3(1, 1, 1, 1, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, INT_MAX, box3(1, 1, 1, 1, 1, 1), still), CAROM_OK);
        carom_broad_stats s;
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(s.pairs, 3);  // the points touch the box and each other
        carom_broad_pairs p = carom_broad_pair_list(&broad);
        assert_int_equal(p.items[0].a, INT_MIN);
        assert_int_equal(p.items[0].b, 5);
        assert_int_equal(p.items[2].a, 5);
        assert_int_equal(p.items[2].b, INT_MAX);
        carom_broad_destroy(&broad);
    }
    // Calls on NULL or never-created broad phases.
    carom_broad zero = {0};
    assert_int_equal(carom_broad_insert(NULL, 1, good, still), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_insert(&zero, 1, good, still), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_move(&zero, 1, good, still), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_remove(&zero, 1), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_update(&zero, NULL), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_update(NULL, NULL), CAROM_ERR_INVALID_ARG);
    assert_false(carom_broad_contains(&zero, 1));
    assert_int_equal(carom_broad_pair_list(&zero).count, 0);
    assert_int_equal(carom_broad_begin_events(NULL).count, 0);
    assert_int_equal(carom_broad_end_events(&zero).count, 0);
    assert_int_equal(carom_broad_memory(&zero), 0);
    assert_true(carom_aabb_sweep_time(box3(NAN, 0, 0, 1, 1, 1), still, good, still) == -1.0f);
    assert_true(carom_aabb_sweep_time(good, vec(INFINITY, 0, 0), good, still) == -1.0f);
}

// Ids equal to slot numbers take a shortcut past the id map; a slot that
// held the id before, or holds another id now, must not fool it.
// carom_broad_move_many applies moves in order up to the first that fails,
// says how many it applied, and treats NULL displacements as zero.
static void test_move_many(void** state) {
    (void)state;
    carom_aabb world = box3(-100, -100, -100, 100, 100, 100);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 1, box3(0, 0, 0, 1, 1, 1), still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 2, box3(5, 0, 0, 6, 1, 1), still), CAROM_OK);
        int applied = -1;
        assert_int_equal(carom_broad_move_many(&broad, 0, NULL, NULL, NULL, &applied), CAROM_OK);
        assert_int_equal(applied, 0);

        // Id 9 is unknown: id 1 moves onto id 2, which then stays put.
        int ids[] = {1, 9, 2};
        carom_aabb boxes[] = {box3(4, 0, 0, 5.5f, 1, 1), box3(0, 0, 0, 1, 1, 1),
                              box3(40, 0, 0, 41, 1, 1)};
        vec3s moves[] = {still, still, still};
        assert_int_equal(carom_broad_move_many(&broad, 3, ids, boxes, moves, &applied),
                         CAROM_ERR_UNKNOWN_ID);
        assert_int_equal(applied, 1);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        carom_broad_pairs p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, 1);
        assert_int_equal(p.items[0].a, 1);
        assert_int_equal(p.items[0].b, 2);

        // A bad box second: id 2 moves away, id 1 keeps its box.
        int ids2[] = {2, 1};
        carom_aabb boxes2[] = {box3(40, 0, 0, 41, 1, 1), box3(NAN, 0, 0, 1, 1, 1)};
        assert_int_equal(carom_broad_move_many(&broad, 2, ids2, boxes2, NULL, &applied),
                         CAROM_ERR_INVALID_ARG);
        assert_int_equal(applied, 1);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        assert_int_equal(carom_broad_pair_list(&broad).count, 0);

        // No displacements: still boxes, met at time 0; no `applied` asked.
        carom_aabb boxes3[] = {box3(40.5f, 0, 0, 42, 1, 1), box3(39, 0, 0, 41, 1, 1)};
        assert_int_equal(carom_broad_move_many(&broad, 2, ids2, boxes3, NULL, NULL),
                         CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, 1);
        assert_true(p.items[0].time == 0.0f);

        // A moving proxy moved without displacements stops: id 3 sweeps
        // through ids 1 and 2 during the step, then stays where it starts.
        const carom_aabb start = box3(30, 0, 0, 31, 1, 1);
        assert_int_equal(carom_broad_insert(&broad, 3, start, (vec3s){{20, 0, 0}}), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, 3);
        assert_true(p.items[1].b == 3 && p.items[1].time > 0.0f);
        int id3 = 3;
        assert_int_equal(carom_broad_move_many(&broad, 1, &id3, &start, NULL, NULL), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, 1);
        assert_int_equal(p.items[0].b, 2);

        // Bad calls apply nothing.
        assert_int_equal(carom_broad_move_many(&broad, -1, ids, boxes, moves, &applied),
                         CAROM_ERR_INVALID_ARG);
        assert_int_equal(applied, 0);
        assert_int_equal(carom_broad_move_many(&broad, 1, NULL, boxes, moves, &applied),
                         CAROM_ERR_INVALID_ARG);
        assert_int_equal(carom_broad_move_many(&broad, 1, ids, NULL, moves, &applied),
                         CAROM_ERR_INVALID_ARG);
        assert_int_equal(applied, 0);
        carom_broad_destroy(&broad);
    }
    carom_broad zero = {0};
    int id = 1;
    carom_aabb box = box3(0, 0, 0, 1, 1, 1);
    assert_int_equal(carom_broad_move_many(NULL, 1, &id, &box, NULL, NULL), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_broad_move_many(&zero, 1, &id, &box, NULL, NULL), CAROM_ERR_INVALID_ARG);
}

static void test_ids_that_were_slots(void** state) {
    (void)state;
    carom_aabb world = box3(-10, -10, -10, 10, 10, 10);
    carom_aabb unit = box3(0, 0, 0, 1, 1, 1);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        for (int id = 0; id < 3; id++) assert_int_equal(carom_broad_insert(&broad, id, unit, still), CAROM_OK);
        assert_int_equal(carom_broad_remove(&broad, 1), CAROM_OK);
        // Slot 1 is free but still remembers id 1.
        assert_false(carom_broad_contains(&broad, 1));
        assert_int_equal(carom_broad_move(&broad, 1, unit, still), CAROM_ERR_UNKNOWN_ID);
        assert_int_equal(carom_broad_remove(&broad, 1), CAROM_ERR_UNKNOWN_ID);
        // Id 7 reuses slot 1; id 1 comes back in another slot.
        assert_int_equal(carom_broad_insert(&broad, 7, unit, still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 1, box3(5, 5, 5, 6, 6, 6), still), CAROM_OK);
        assert_int_equal(carom_broad_insert(&broad, 1, unit, still), CAROM_ERR_DUPLICATE_ID);
        // Moves by id reach the right proxies: 1 joins the cluster, 2 leaves.
        assert_int_equal(carom_broad_move(&broad, 1, box3(0.5f, 0.5f, 0.5f, 2, 2, 2), still), CAROM_OK);
        assert_int_equal(carom_broad_move(&broad, 2, box3(-9, -9, -9, -8, -8, -8), still), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        carom_broad_pairs p = carom_broad_pair_list(&broad);
        assert_int_equal(p.count, 3);
        assert_int_equal(p.items[0].a, 0);
        assert_int_equal(p.items[0].b, 1);
        assert_int_equal(p.items[1].a, 0);
        assert_int_equal(p.items[1].b, 7);
        assert_int_equal(p.items[2].a, 1);
        assert_int_equal(p.items[2].b, 7);
        carom_broad_destroy(&broad);
    }
}

// Every proxy at one point: n^2/2 pairs, by nature, but no kind may do
// worse than that, and all agree.
// Cells of the centre-cell grid crowded with k small boxes each, in a block
// of 4^3 unit cells (a fixed cell of 1): a box's neighbour runs span 14
// cells, so they hold up to 14 k - 1 boxes. At k = 36 that is 503, the
// most the listing's room past its block limit takes (it keeps room for 14
// times the most boxes one cell holds, up to 512); at k = 39 the listing
// sums each box's runs instead. With `spread_first`, the boxes start one
// to a cell across the world, so the refill that crowds them must count the
// most boxes a cell holds anew. Every box moves every frame; against brute
// force.
static void run_crowded_cells(int k, bool spread_first) {
    const carom_aabb world = box3(0, 0, 0, 20, 20, 20);
    carom_broad_desc grid_desc = config_desc(CONFIG_GRID_CENTRE, world);
    grid_desc.cell_size = 1.0f;
    carom_broad_desc brute_desc = config_desc(CONFIG_BRUTE_FORCE, world);
    carom_broad grid, brute;
    assert_int_equal(carom_broad_create(&grid_desc, &grid), CAROM_OK);
    assert_int_equal(carom_broad_create(&brute_desc, &brute), CAROM_OK);
    const int n = 64 * k;
    int* ids = malloc(sizeof *ids * (size_t)n);
    carom_aabb* boxes = malloc(sizeof *boxes * (size_t)n);
    assert_true(ids && boxes);
    unsigned rng = 7u;
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < n; i++) {
            float c[3];
            if (f == 0 && spread_first) {
                c[0] = (float)(i % 20) + 0.5f;
                c[1] = (float)(i / 20 % 20) + 0.5f;
                c[2] = (float)(i / 400) + 0.5f;
            } else {
                // Cell (x, y, z) of the block, jittered along x inside it.
                const int cell = i / k;
                c[0] = 5.0f + (float)(cell % 4) + refill_uniform(&rng, 0.1f, 0.9f);
                c[1] = 5.5f + (float)(cell / 4 % 4);
                c[2] = 5.5f + (float)(cell / 16);
            }
            const float h = 0.05f;
            boxes[i] = box3(c[0] - h, c[1] - h, c[2] - h, c[0] + h, c[1] + h, c[2] + h);
            ids[i] = i;
            if (f == 0) {
                assert_int_equal(carom_broad_insert(&grid, i, boxes[i], still), CAROM_OK);
                assert_int_equal(carom_broad_insert(&brute, i, boxes[i], still), CAROM_OK);
            }
        }
        if (f > 0) {
            assert_int_equal(carom_broad_move_many(&grid, n, ids, boxes, NULL, NULL), CAROM_OK);
            assert_int_equal(carom_broad_move_many(&brute, n, ids, boxes, NULL, NULL), CAROM_OK);
        }
        carom_broad_stats stats;
        if (!update_both_agree(&grid, &brute, &stats))
            fail_msg("%d boxes a cell, frame %d: the centre-cell grid differs from brute force",
                     k, f);
        // A fixed cell: every update after the first refills.
        if (f > 0 && stats.rebuilt) fail_msg("%d boxes a cell, frame %d: not refilled", k, f);
    }
    free(ids);
    free(boxes);
    carom_broad_destroy(&grid);
    carom_broad_destroy(&brute);
}

static void test_crowded_cells(void** state) {
    (void)state;
    run_crowded_cells(36, false);
    run_crowded_cells(39, false);
    run_crowded_cells(40, true);
}

static void test_all_at_one_point(void** state) {
    (void)state;
    int n = light() ? 100 : 400;
    carom_aabb world = box3(-1, -1, -1, 1, 1, 1);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        for (int i = 0; i < n; i++)
            assert_int_equal(carom_broad_insert(&broad, i, box3(0, 0, 0, 0, 0, 0), still), CAROM_OK);
        carom_broad_stats s;
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_int_equal(s.pairs, n * (n - 1) / 2);
        carom_broad_destroy(&broad);
    }
    // The centre-cell grid lists each box's candidates in blocks of a few
    // thousand: one cell holding more boxes than a block must grow it.
    int crowd = light() ? 300 : 2500;
    carom_broad broad;
    carom_broad_desc d = config_desc(CONFIG_GRID_CENTRE, world);
    assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
    for (int i = 0; i < crowd; i++)
        assert_int_equal(carom_broad_insert(&broad, i, box3(0, 0, 0, 0, 0, 0), still), CAROM_OK);
    assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
    carom_broad_pairs p = carom_broad_pair_list(&broad);
    assert_int_equal(p.count, crowd * (crowd - 1) / 2);
    for (int k = 0, a = 0, b = 1; k < p.count; k++) {
        assert_int_equal(p.items[k].a, a);
        assert_int_equal(p.items[k].b, b);
        if (++b == crowd) a++, b = a + 1;
    }
    carom_broad_destroy(&broad);
}

// Boxes in a 1e9 world, far outside a grid's world and at its corners.
static void test_outside_the_grid_world(void** state) {
    (void)state;
    carom_aabb world = box3(0, 0, 0, 10, 10, 10);
    int ids[] = {0, 1, 2, 3, 4, 5};
    carom_aabb boxes[] = {
        box3(-1e9f, -1e9f, -1e9f, -1e9f + 1e3f, -1e9f + 1e3f, -1e9f + 1e3f),
        box3(-1e9f + 500, -1e9f + 500, -1e9f + 500, -1e9f + 2e3f, -1e9f + 2e3f, -1e9f + 2e3f),
        box3(1e9f, 1e9f, 1e9f, 1e9f + 64, 1e9f + 64, 1e9f + 64),
        box3(-5e8f, 5, 5, 5e8f, 6, 6),  // a huge box through the world
        box3(4, 4, 4, 6, 6, 6),
        box3(1e9f - 64, 1e9f, 1e9f, 1e9f, 1e9f, 1e9f),  // touches box 2
    };
    ref_broad_list ref;
    assert_int_equal(ref_broad_reference(&ref, 6, ids, boxes, NULL, 0.0), 0);
    assert_int_equal(ref.pairs, 3);
    for (int c = 0; c < CONFIG_COUNT; c++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(c, world);
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        for (int i = 0; i < 6; i++)
            assert_int_equal(carom_broad_insert(&broad, ids[i], boxes[i], still), CAROM_OK);
        assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
        check_against_reference(&ref, &broad, config_names[c]);
        carom_broad_destroy(&broad);
    }
    ref_broad_list_free(&ref);
}

// Many proxies: every fast kind gets the same pairs, without quadratic work
// (a quadratic kind would not finish).
static void test_many_proxies(void** state) {
    (void)state;
    if (light()) skip();
    ref_broad_scene_desc sd = {0};
    sd.kind = REF_SCENE_UNIFORM;
    sd.n = 1000000;
    sd.seed = 9;
    ref_broad_scene scene;
    assert_int_equal(ref_broad_scene_make(&scene, &sd), 0);
    int configs[] = {CONFIG_SAP, CONFIG_GRID_ALL, CONFIG_GRID_CENTRE, CONFIG_HASH, CONFIG_TREE};
    carom_broad_pair* first = NULL;
    int first_count = 0;
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        carom_broad broad;
        carom_broad_desc d = config_desc(configs[k], scene.world);
        d.capacity_hint = scene.n;
        assert_int_equal(carom_broad_create(&d, &broad), CAROM_OK);
        for (int i = 0; i < scene.n; i++)
            assert_int_equal(carom_broad_insert(&broad, scene.ids[i], scene.boxes[i], still), CAROM_OK);
        carom_broad_stats s;
        assert_int_equal(carom_broad_update(&broad, &s), CAROM_OK);
        assert_true(s.pairs > scene.n / 4 && s.pairs < scene.n * 4);
        if (!first) {
            first = copy_pairs(carom_broad_pair_list(&broad));
            first_count = s.pairs;
        } else {
            carom_broad_pairs p = carom_broad_pair_list(&broad);
            if (!same_pairs(p, (carom_broad_pairs){first, first_count}))
                fail_msg("%s differs from sap at 1M proxies", config_names[configs[k]]);
        }
        carom_broad_destroy(&broad);
    }
    free(first);
    ref_broad_scene_free(&scene);
}

// ---- out of memory ----------------------------------------------------------------------------

// Failing each allocation in turn, through creation, 120 insertions and two
// updates: every failure is reported, nothing leaks, and once memory is
// back the broad phase answers correctly. The hash kind is left out: its
// stb_ds map cannot report a failed growth (the header says so).
static void test_out_of_memory(void** state) {
    (void)state;
    enum { N = 120 };
    ref_broad_scene_desc sd = {0};
    sd.kind = REF_SCENE_UNIFORM;
    sd.n = N;
    sd.seed = 3;
    sd.moving = 1.0;
    sd.step = 0.5;
    ref_broad_scene scene;
    assert_int_equal(ref_broad_scene_make(&scene, &sd), 0);
    ref_broad_list ref;
    assert_int_equal(ref_broad_scene_reference(&scene, &ref, REF_BROAD_BAND), 0);
    carom_allocator hooks = {failing_realloc, hooked_free, NULL};
    for (int c = 0; c < CONFIG_COUNT; c++) {
        if (c == CONFIG_HASH) continue;
        int failures = 0;
        for (int fail_at = 1;; fail_at++) {
            g_count = 0;
            g_fail_at = fail_at;
            carom_set_allocator(&hooks);
            carom_broad broad;
            carom_broad_desc d = config_desc(c, scene.world);
            carom_status st = carom_broad_create(&d, &broad);
            if (st != CAROM_OK) {
                assert_int_equal(st, CAROM_ERR_OUT_OF_MEMORY);
                failures++;
                carom_set_allocator(NULL);
                continue;
            }
            for (int i = 0; i < N; i++) {
                st = carom_broad_insert(&broad, scene.ids[i], scene.boxes[i], scene.displacements[i]);
                if (st != CAROM_OK) {
                    assert_int_equal(st, CAROM_ERR_OUT_OF_MEMORY);
                    assert_false(carom_broad_contains(&broad, scene.ids[i]));
                    failures++;
                    g_fail_at = 0;
                    assert_int_equal(carom_broad_insert(&broad, scene.ids[i], scene.boxes[i],
                                                        scene.displacements[i]),
                                     CAROM_OK);
                }
            }
            for (int round = 0; round < 2; round++) {
                // Everything moved (in place) before the second round, so
                // that the grid rebuilds by refilling its cells.
                for (int i = 0; round == 1 && i < N; i++)
                    assert_int_equal(carom_broad_move(&broad, scene.ids[i], scene.boxes[i],
                                                      scene.displacements[i]),
                                     CAROM_OK);
                st = carom_broad_update(&broad, NULL);
                if (st != CAROM_OK) {
                    assert_int_equal(st, CAROM_ERR_OUT_OF_MEMORY);
                    failures++;
                    // A failed update has no events.
                    assert_int_equal(carom_broad_begin_events(&broad).count, 0);
                    assert_int_equal(carom_broad_end_events(&broad).count, 0);
                } else {
                    // Derived now, so that a failure next round must drop
                    // them.
                    (void)carom_broad_begin_events(&broad);
                }
            }
            bool reached = g_count >= fail_at;
            g_fail_at = 0;
            assert_int_equal(carom_broad_update(&broad, NULL), CAROM_OK);
            check_against_reference(&ref, &broad, config_names[c]);
            carom_broad_destroy(&broad);
            carom_set_allocator(NULL);
            if (!reached) break;  // every allocation point has failed once
        }
        assert_true(failures > 3);
    }
    ref_broad_list_free(&ref);
    ref_broad_scene_free(&scene);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constructed_motions),
        cmocka_unit_test(test_fast_mover_crosses_row),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_create_rejects_bad_descriptions),
        cmocka_unit_test(test_bad_proxies_change_nothing),
        cmocka_unit_test(test_move_many),
        cmocka_unit_test(test_ids_that_were_slots),
        cmocka_unit_test(test_all_at_one_point),
        cmocka_unit_test(test_crowded_cells),
        cmocka_unit_test(test_outside_the_grid_world),
        cmocka_unit_test(test_spacetime_has_no_false_pairs),
        cmocka_unit_test(test_convoy_costs_no_swaps),
        cmocka_unit_test(test_uniform_all_moving),
        cmocka_unit_test(test_uniform_few_moving),
        cmocka_unit_test(test_clustered),
        cmocka_unit_test(test_mixed_sizes),
        cmocka_unit_test(test_convoy),
        cmocka_unit_test(test_fast_movers),
        cmocka_unit_test(test_ids_are_slots),
        cmocka_unit_test(test_grid_refill),
        cmocka_unit_test(test_touching_time_is_plus_zero),
        cmocka_unit_test(test_far_from_origin),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_many_proxies),
    };
    // CAROM_TEST_FILTER=pattern runs only the matching tests.
    if (getenv("CAROM_TEST_FILTER")) cmocka_set_test_filter(getenv("CAROM_TEST_FILTER"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
