/* Checks the broad-phase reference: the sweep time against hand-worked
 * cases, against swapping its arguments and against sampling the motion;
 * the pruned pair lists against testing every pair; the borderline band on
 * constructed cases; the comparison on lists damaged on purpose; and the
 * scene generators' densities, roles, determinism and id shuffling. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "broad_reference.h"
#include "reference.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Sweep time of a box at [lo, hi] moving by d against one at [blo, bhi]
 * moving by bd, from vectors written inline. */
static double sweep(const double lo[3], const double hi[3], const double d[3], const double blo[3],
                    const double bhi[3], const double bd[3])
{
    return ref_broad_sweep_time(lo, hi, d, blo, bhi, bd);
}

static carom_aabb aabb(float x0, float y0, float z0, float x1, float y1, float z1)
{
    carom_aabb b;
    b.min = (vec3s){{x0, y0, z0}};
    b.max = (vec3s){{x1, y1, z1}};
    return b;
}

static vec3s vec(float x, float y, float z)
{
    return (vec3s){{x, y, z}};
}

/* ---- the sweep time ------------------------------------------------------------ */

static const double unit_lo[3] = {0, 0, 0}, unit_hi[3] = {1, 1, 1}, still[3] = {0, 0, 0};

static void test_sweep_analytic(void** state)
{
    (void)state;
    /* Head on: b's near face at 3 reaches a's at 1 after 2 of its 4 units. */
    const double b_lo[3] = {3, 0, 0}, b_hi[3] = {4, 1, 1};
    const double left4[3] = {-4, 0, 0}, left2[3] = {-2, 0, 0}, left_short[3] = {-1.999, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, still, b_lo, b_hi, left4) == 0.5);
    /* Touching exactly at the end of the step counts; a hair short does not. */
    assert_true(sweep(unit_lo, unit_hi, still, b_lo, b_hi, left2) == 1.0);
    assert_true(sweep(unit_lo, unit_hi, still, b_lo, b_hi, left_short) == -1.0);
    /* Meeting after the step: never during it. */
    const double left1[3] = {-1, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, still, b_lo, b_hi, left1) == -1.0);
    /* Both moving: a +1 and b -1 close the gap of 2 at t = 1. */
    const double right1[3] = {1, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, right1, b_lo, b_hi, left1) == 1.0);

    /* Through and out within the step: b from [-5, -4] to [5, 6] crosses
     * [0, 1] during t in [0.4, 0.6]; neither end overlaps. */
    const double c_lo[3] = {-5, 0, 0}, c_hi[3] = {-4, 1, 1}, right10[3] = {10, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, still, c_lo, c_hi, right10) == 0.4);
    assert_true(sweep(c_lo, c_hi, right10, unit_lo, unit_hi, still) == 0.4);

    /* Parallel motion, apart on y: never, whatever the speed. */
    const double p_lo[3] = {0, 2, 0}, p_hi[3] = {1, 3, 1}, same[3] = {7, 0, -3};
    assert_true(sweep(unit_lo, unit_hi, same, p_lo, p_hi, same) == -1.0);
    /* Parallel motion while overlapping: overlapping throughout, so 0. */
    const double q_lo[3] = {0.5, 0.5, 0.5}, q_hi[3] = {2, 2, 2};
    assert_true(sweep(unit_lo, unit_hi, same, q_lo, q_hi, same) == 0.0);

    /* No relative motion (w = 0): overlapping, touching, a hair apart. */
    assert_true(sweep(unit_lo, unit_hi, still, q_lo, q_hi, still) == 0.0);
    const double t_lo[3] = {1, 0, 0}, t_hi[3] = {2, 1, 1};
    assert_true(sweep(unit_lo, unit_hi, still, t_lo, t_hi, still) == 0.0);
    const double g_lo[3] = {1 + 1e-12, 0, 0}, g_hi[3] = {2, 1, 1};
    assert_true(sweep(unit_lo, unit_hi, still, g_lo, g_hi, still) == -1.0);

    /* Overlapping on x throughout while y and z approach: y overlaps for
     * t in [0.5, 1], z for [0.5625, 0.8125]; the later start wins. */
    const double y_lo[3] = {0.5, 3, 5.5}, y_hi[3] = {1.5, 4, 6.5}, yz[3] = {0, -4, -8};
    assert_true(sweep(unit_lo, unit_hi, still, y_lo, y_hi, yz) == 0.5625);
    /* Overlapping on x at the start but leaving (t <= 0.25) before y
     * arrives (t >= 0.5): never all three at once. */
    const double x_lo[3] = {0.5, 3, 0}, x_hi[3] = {1.5, 4, 1}, away[3] = {2, -4, 0};
    assert_true(sweep(unit_lo, unit_hi, still, x_lo, x_hi, away) == -1.0);
    /* Touching at the start and separating: the instant t = 0 counts. */
    const double sep[3] = {1, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, still, t_lo, t_hi, sep) == 0.0);
    /* Overlapping at the start and moving: 0, not negative. */
    assert_true(sweep(unit_lo, unit_hi, still, q_lo, q_hi, left4) == 0.0);
    /* Zero-size boxes (points) meeting exactly. */
    const double pt[3] = {0.5, 0.5, -1}, up2[3] = {0, 0, 2};
    assert_true(sweep(unit_lo, unit_hi, still, pt, pt, up2) == 0.5);
    /* NaN anywhere: never. */
    const double bad[3] = {NAN, 0, 0};
    assert_true(sweep(unit_lo, unit_hi, still, b_lo, b_hi, bad) == -1.0);
    assert_true(sweep(unit_lo, unit_hi, bad, b_lo, b_hi, left4) == -1.0);
}

/* Overlap of the moving boxes at time t, faces allowed `slack` apart. */
static bool overlap_at(const double alo[3], const double ahi[3], const double ad[3], const double blo[3],
                       const double bhi[3], const double bd[3], double t, double slack)
{
    for (int k = 0; k < 3; k++) {
        double a0 = alo[k] + t * ad[k], a1 = ahi[k] + t * ad[k];
        double b0 = blo[k] + t * bd[k], b1 = bhi[k] + t * bd[k];
        if (b0 > a1 + slack || a0 > b1 + slack)
            return false;
    }
    return true;
}

/* A coordinate on a coarse lattice half the time, so that faces touch and
 * displacements coincide often. */
static double coordinate(ref_rng* rng, double lo, double hi)
{
    double x = ref_rng_uniform(rng, lo, hi);
    double coin = ref_rng_uniform(rng, 0.0, 1.0);
    return coin < 0.5 ? floor(x * 4.0) / 4.0 : x;
}

static void test_sweep_symmetry_and_sampling(void** state)
{
    (void)state;
    ref_rng rng = {12345};
    int met = 0, touching = 0;
    for (int iter = 0; iter < 20000; iter++) {
        double alo[3], ahi[3], ad[3], blo[3], bhi[3], bd[3];
        for (int k = 0; k < 3; k++) {
            alo[k] = coordinate(&rng, -2.0, 2.0);
            ahi[k] = alo[k] + coordinate(&rng, 0.0, 1.5);
            blo[k] = coordinate(&rng, -2.0, 2.0);
            bhi[k] = blo[k] + coordinate(&rng, 0.0, 1.5);
            ad[k] = coordinate(&rng, -3.0, 3.0);
            bd[k] = coordinate(&rng, -3.0, 3.0);
        }
        double t = ref_broad_sweep_time(alo, ahi, ad, blo, bhi, bd);
        /* Swapping the boxes negates every difference exactly: same bits. */
        assert_true(ref_broad_sweep_time(blo, bhi, bd, alo, ahi, ad) == t);
        assert_true(t == -1.0 || (t >= 0.0 && t <= 1.0));
        if (t >= 0.0) {
            met++;
            touching += t > 0.0;
            /* They overlap then, and not (by a margin) a little before. */
            assert_true(overlap_at(alo, ahi, ad, blo, bhi, bd, t, 1e-12));
            if (t > 1e-6)
                assert_false(overlap_at(alo, ahi, ad, blo, bhi, bd, t - 1e-6, -1e-13));
        }
        /* No sampled time overlaps (with a margin) before the answer. */
        for (int s = 0; s <= 200; s++) {
            double ts = s / 200.0;
            if (overlap_at(alo, ahi, ad, blo, bhi, bd, ts, -1e-9)) {
                assert_true(t >= 0.0 && t <= ts);
                break;
            }
        }
    }
    /* The cases covered both outcomes and meetings during the step. */
    assert_true(met > 1000 && met < 19000);
    assert_true(touching > 500);
}

/* ---- pair lists ---------------------------------------------------------------- */

static int cmp_int(const void* pa, const void* pb)
{
    int a = *(const int*)pa, b = *(const int*)pb;
    return (a > b) - (a < b);
}

static int cmp_pair(const void* pa, const void* pb)
{
    const carom_broad_pair* a = pa;
    const carom_broad_pair* b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

/* Every pair, no pruning, straight from ref_broad_sweep_time. */
static carom_broad_pair* all_pairs(const ref_broad_scene* s, int* count)
{
    int cap = 1024, m = 0;
    carom_broad_pair* out = malloc((size_t)cap * sizeof *out);
    assert_non_null(out);
    for (int i = 0; i < s->n; i++) {
        for (int j = i + 1; j < s->n; j++) {
            const carom_aabb *a = &s->boxes[i], *b = &s->boxes[j];
            const vec3s *da = &s->displacements[i], *db = &s->displacements[j];
            double alo[3] = {a->min.x, a->min.y, a->min.z}, ahi[3] = {a->max.x, a->max.y, a->max.z};
            double blo[3] = {b->min.x, b->min.y, b->min.z}, bhi[3] = {b->max.x, b->max.y, b->max.z};
            double ad[3] = {da->x, da->y, da->z}, bd[3] = {db->x, db->y, db->z};
            double t = ref_broad_sweep_time(alo, ahi, ad, blo, bhi, bd);
            if (t < 0.0)
                continue;
            if (m == cap) {
                cap *= 2;
                out = realloc(out, (size_t)cap * sizeof *out);
                assert_non_null(out);
            }
            int ia = s->ids[i], ib = s->ids[j];
            out[m++] = (carom_broad_pair){ia < ib ? ia : ib, ia < ib ? ib : ia, (float)t};
        }
    }
    qsort(out, (size_t)m, sizeof *out, cmp_pair);
    *count = m;
    return out;
}

static ref_broad_scene make_scene(ref_broad_scene_kind kind, int n, unsigned long long seed, double moving,
                                  double step)
{
    ref_broad_scene_desc d = {.kind = kind, .n = n, .seed = seed, .pairs_per_box = 1.0, .moving = moving,
                              .step = step};
    ref_broad_scene s;
    assert_int_equal(ref_broad_scene_make(&s, &d), 0);
    return s;
}

static void test_pairs_match_every_pair(void** state)
{
    (void)state;
    for (int kind = REF_SCENE_UNIFORM; kind <= REF_SCENE_FAST_MOVERS; kind++) {
        for (int variant = 0; variant < 2; variant++) {
            ref_broad_scene s = make_scene(kind, 600, 100 + kind, variant ? 0.7 : 0.0, 2.0);
            if (variant)
                assert_int_equal(ref_broad_scene_shuffle_ids(&s, 9), 0);
            int want_count, got_count;
            carom_broad_pair* want = all_pairs(&s, &want_count);
            carom_broad_pair* got = ref_broad_pairs(s.n, s.ids, s.boxes, s.displacements, &got_count);
            assert_int_equal(got_count, want_count);
            assert_true(want_count > 0);
            assert_memory_equal(got, want, (size_t)want_count * sizeof *want);
            for (int i = 0; i < got_count; i++) {
                assert_true(got[i].a < got[i].b);
                assert_true(i == 0 || cmp_pair(&got[i - 1], &got[i]) < 0);
            }

            /* With the band: the same pairs, the same times, every non-pair
             * borderline, and bounds around every time. */
            ref_broad_list list;
            assert_int_equal(ref_broad_scene_reference(&s, &list, REF_BROAD_BAND), 0);
            assert_int_equal(list.pairs, want_count);
            int p = 0;
            for (int i = 0; i < list.count; i++) {
                const ref_broad_entry* e = &list.items[i];
                assert_true(e->a < e->b);
                assert_true(e->time_lo >= 0.0 && e->time_lo <= e->time_hi && e->time_hi <= 1.0);
                if (e->time < 0.0) {
                    assert_true(e->borderline);
                    continue;
                }
                assert_true(e->time_lo <= e->time && e->time <= e->time_hi);
                assert_int_equal(e->a, want[p].a);
                assert_int_equal(e->b, want[p].b);
                assert_true((float)e->time == want[p].time);
                p++;
            }
            assert_int_equal(p, want_count);
            ref_broad_list_free(&list);
            free(want);
            free(got);
            ref_broad_scene_free(&s);
        }
    }
}

/* The sweep finds every pair a test of each pair alone finds, band
 * included: a wide band and fast movers stress the pruning margins. */
static void test_pruning_keeps_band(void** state)
{
    (void)state;
    ref_broad_scene s = make_scene(REF_SCENE_FAST_MOVERS, 260, 77, 1.0, 3.0);
    assert_int_equal(ref_broad_scene_shuffle_ids(&s, 5), 0);
    const double band = 0.01;
    ref_broad_list all;
    assert_int_equal(ref_broad_scene_reference(&s, &all, band), 0);
    assert_true(all.borderline > 0);
    int found = 0;
    for (int i = 0; i < s.n; i++) {
        for (int j = i + 1; j < s.n; j++) {
            int ids[2] = {s.ids[i], s.ids[j]};
            carom_aabb boxes[2] = {s.boxes[i], s.boxes[j]};
            vec3s disp[2] = {s.displacements[i], s.displacements[j]};
            ref_broad_list one;
            assert_int_equal(ref_broad_reference(&one, 2, ids, boxes, disp, band), 0);
            const ref_broad_entry* e = ref_broad_find(&all, ids[0], ids[1]);
            assert_int_equal(one.count, e != NULL);
            if (e) {
                const ref_broad_entry* o = &one.items[0];
                assert_true(o->a == e->a && o->b == e->b && o->borderline == e->borderline);
                assert_true(o->time == e->time && o->time_lo == e->time_lo && o->time_hi == e->time_hi);
                found++;
            }
            ref_broad_list_free(&one);
        }
    }
    assert_int_equal(found, all.count);
    ref_broad_list_free(&all);
    ref_broad_scene_free(&s);
}

/* Entry of the pair (0, 1) between two proxies, or NULL. */
static const ref_broad_entry* two(ref_broad_list* list, carom_aabb a, vec3s da, carom_aabb b, vec3s db)
{
    int ids[2] = {0, 1};
    carom_aabb boxes[2] = {a, b};
    vec3s disp[2] = {da, db};
    ref_broad_list_free(list);
    assert_int_equal(ref_broad_reference(list, 2, ids, boxes, disp, REF_BROAD_BAND), 0);
    assert_true(list->count <= 1);
    return list->count ? &list->items[0] : NULL;
}

static void test_borderline_cases(void** state)
{
    (void)state;
    ref_broad_list list = {0};
    const ref_broad_entry* e;
    carom_aabb a = aabb(0, 0, 0, 1, 1, 1);
    vec3s zero = vec(0, 0, 0);

    /* Static faces touching: a pair, and exactly decidable: not borderline. */
    e = two(&list, a, zero, aabb(1, 0, 0, 2, 1, 1), zero);
    assert_non_null(e);
    assert_true(e->time == 0.0 && !e->borderline);
    /* Static and a float ulp apart: not even an entry. */
    e = two(&list, a, zero, aabb(nextafterf(1, 2), 0, 0, 2, 1, 1), zero);
    assert_null(e);

    /* Touching exactly at the end of the step: a borderline pair. */
    e = two(&list, a, zero, aabb(3, 0, 0, 4, 1, 1), vec(-2, 0, 0));
    assert_non_null(e);
    assert_true(e->time == 1.0 && e->borderline);
    /* Missing by 1e-6 at the end: a borderline non-pair. */
    e = two(&list, a, zero, aabb(3.000001f, 0, 0, 4, 1, 1), vec(-2, 0, 0));
    assert_non_null(e);
    assert_true(e->time == -1.0 && e->borderline);
    assert_true(e->time_lo > 0.99 && e->time_lo <= 1.0);
    /* Missing by 0.1: nothing. */
    e = two(&list, a, zero, aabb(3.1f, 0, 0, 4.1f, 1, 1), vec(-2, 0, 0));
    assert_null(e);
    /* Meeting mid-step with room: a pair, not borderline, tight bounds
     * (the band is 1e-5 of 4, over a closing speed of 4). */
    e = two(&list, a, zero, aabb(3, 0.25f, 0.25f, 4, 0.75f, 0.75f), vec(-4, 0, 0));
    assert_non_null(e);
    assert_true(e->time == 0.5 && !e->borderline);
    assert_true(e->time_lo < 0.5 && e->time_hi > 0.5 && e->time_hi - e->time_lo < 1e-4);
    /* Grazing: sliding along y with faces touching on z. Moving axes carry
     * the band, static z does not: z touching exactly is a robust fact. */
    e = two(&list, a, zero, aabb(0.25f, 3, 1, 0.75f, 4, 2), vec(0, -4, 0));
    assert_non_null(e);
    assert_true(e->time == 0.5 && !e->borderline);
    /* Touching faces on an axis where both move alike: borderline, since a
     * float implementation may round the two moved faces differently. */
    e = two(&list, a, vec(1, 0, 0), aabb(1, 0, 0, 2, 1, 1), vec(1, 0, 0));
    assert_non_null(e);
    assert_true(e->time == 0.0 && e->borderline);
    /* Edges crossing at one instant: x overlaps from t = 0.5 on, y until
     * then. Borderline. */
    e = two(&list, a, zero, aabb(-2, 0, 0, -1, 1, 1), vec(2, 2, 0));
    assert_non_null(e);
    assert_true(e->time == 0.5 && e->borderline);

    /* Far from the origin the band scales with the coordinates: at 1e4 it
     * is 0.1, so stopping 0.05 short is borderline, and a head-on meeting
     * (closing speed 4) gets time bounds 2 * 0.1 / 4 wide. Near the origin
     * the same meeting's bounds are 2 * 4e-5 / 4 wide. */
    const float o = 1e4f;
    carom_aabb far_a = aabb(o, o, o, o + 1, o + 1, o + 1);
    e = two(&list, far_a, zero, aabb(o + 3.05f, o, o, o + 4.05f, o + 1, o + 1), vec(-2, 0, 0));
    assert_non_null(e);
    assert_true(e->time < 0.0 && e->borderline);
    e = two(&list, far_a, zero, aabb(o + 3, o, o, o + 4, o + 1, o + 1), vec(-4, 0, 0));
    assert_non_null(e);
    assert_true(e->time == 0.5 && !e->borderline);
    assert_true(e->time_hi - e->time_lo > 0.04 && e->time_hi - e->time_lo < 0.06);
    e = two(&list, a, zero, aabb(3, 0, 0, 4, 1, 1), vec(-4, 0, 0));
    assert_non_null(e);
    assert_true(e->time == 0.5 && !e->borderline);
    assert_true(e->time_hi - e->time_lo < 3e-5);
    ref_broad_list_free(&list);
}

/* ---- comparing lists ----------------------------------------------------------- */

static ref_broad_report compare(const ref_broad_list* ref, const carom_broad_pair* got, int count)
{
    ref_broad_report r = ref_broad_compare(ref, got, count, REF_BROAD_TIME_TOL);
    char msg[512];
    ref_broad_report_message(&r, msg, sizeof msg);
    assert_true(strlen(msg) > 20);
    assert_true(r.ok == (strncmp(msg, "matches", 7) == 0));
    return r;
}

/* The reference's own exact list as a library would return it. */
static carom_broad_pair* exact_of(const ref_broad_list* ref, int* count)
{
    carom_broad_pair* out = malloc((size_t)(ref->count + 2) * sizeof *out);
    assert_non_null(out);
    int m = 0;
    for (int i = 0; i < ref->count; i++)
        if (ref->items[i].time >= 0.0)
            out[m++] = (carom_broad_pair){ref->items[i].a, ref->items[i].b, (float)ref->items[i].time};
    *count = m;
    return out;
}

static void test_compare(void** state)
{
    (void)state;
    ref_broad_scene s = make_scene(REF_SCENE_FAST_MOVERS, 1500, 3, 0.8, 1.5);
    assert_int_equal(ref_broad_scene_shuffle_ids(&s, 4), 0);
    ref_broad_list ref;
    assert_int_equal(ref_broad_scene_reference(&s, &ref, REF_BROAD_BAND), 0);
    int count;
    carom_broad_pair* got = exact_of(&ref, &count);

    ref_broad_report r = compare(&ref, got, count);
    assert_true(r.ok);
    assert_int_equal(r.common, count);
    assert_int_equal(r.missing + r.extra + r.malformed, 0);
    assert_true(r.max_time_error <= 6e-8); /* rounding to float */
    assert_null(r.first_what);

    /* Drop a pair that is not borderline: caught, and named. One whose
     * time is well defined (tight bounds), for the time checks below. */
    int robust = -1;
    for (int i = 0; i < ref.count && robust < 0; i++) {
        const ref_broad_entry* e = &ref.items[i];
        if (e->time > 0.0 && e->time < 0.9 && !e->borderline && e->time_hi - e->time_lo < 1e-3)
            robust = i;
    }
    assert_true(robust >= 0);
    const ref_broad_entry* victim = &ref.items[robust];
    int at = 0;
    while (got[at].a != victim->a || got[at].b != victim->b)
        at++;
    carom_broad_pair* less = malloc((size_t)count * sizeof *less);
    assert_non_null(less);
    memcpy(less, got, (size_t)at * sizeof *less);
    memcpy(less + at, got + at + 1, (size_t)(count - at - 1) * sizeof *less);
    r = compare(&ref, less, count - 1);
    assert_false(r.ok);
    assert_int_equal(r.missing, 1);
    assert_int_equal(r.bad_missing, 1);
    assert_string_equal(r.first_what, "missing");
    assert_int_equal(r.first_a, victim->a);
    assert_int_equal(r.first_b, victim->b);
    char msg[512];
    assert_non_null(strstr(ref_broad_report_message(&r, msg, sizeof msg), "missing"));

    /* A time off by 1e-2 on that pair: caught. */
    got[at].time += 1e-2f;
    r = compare(&ref, got, count);
    assert_false(r.ok);
    assert_int_equal(r.bad_time, 1);
    assert_string_equal(r.first_what, "time");
    got[at].time -= 1e-2f;
    got[at].time = nextafterf(got[at].time, 2.0f); /* a float ulp: fine */
    r = compare(&ref, got, count);
    assert_true(r.ok);

    /* Out of order, and a > b: malformed, though every pair is there. */
    carom_broad_pair t = got[0];
    got[0] = got[1];
    got[1] = t;
    r = compare(&ref, got, count);
    assert_false(r.ok);
    assert_true(r.malformed >= 1);
    assert_int_equal(r.missing + r.extra, 0);
    got[1] = got[0];
    got[0] = t;
    got[0].a = t.b;
    got[0].b = t.a;
    r = compare(&ref, got, count);
    assert_false(r.ok);
    assert_string_equal(r.first_what, "malformed");
    got[0] = t;
    /* A time outside [0, 1] is malformed too. */
    float keep = got[2].time;
    got[2].time = -0.25f;
    r = compare(&ref, got, count);
    assert_false(r.ok);
    got[2].time = keep;

    /* An extra pair of boxes far apart: caught. Ids of a robust non-pair:
     * two proxies whose swept boxes are apart by a lot. */
    int far_a = INT_MAX, far_b = INT_MAX;
    for (int i = 0; i < s.n && far_a == INT_MAX; i++) {
        for (int j = i + 1; j < s.n; j++) {
            if (s.roles[i] == REF_ROLE_STATIC && s.roles[j] == REF_ROLE_STATIC &&
                fabsf(s.boxes[i].min.x - s.boxes[j].min.x) > 5.0f) {
                far_a = s.ids[i] < s.ids[j] ? s.ids[i] : s.ids[j];
                far_b = s.ids[i] < s.ids[j] ? s.ids[j] : s.ids[i];
                break;
            }
        }
    }
    assert_true(far_a != INT_MAX);
    assert_null(ref_broad_find(&ref, far_a, far_b));
    got[count] = (carom_broad_pair){far_a, far_b, 0.5f};
    qsort(got, (size_t)count + 1, sizeof *got, cmp_pair);
    r = compare(&ref, got, count + 1);
    assert_false(r.ok);
    assert_int_equal(r.bad_extra, 1);
    assert_string_equal(r.first_what, "extra");
    assert_int_equal(r.first_a, far_a);
    free(got);
    free(less);

    /* Borderline differences are forgiven: two proxies touching at t = 1
     * (a borderline pair) left out, two missing by 1e-6 at t = 1 (a
     * borderline non-pair) put in. */
    int ids[4] = {10, 11, -20, -21};
    carom_aabb boxes[4] = {aabb(0, 0, 0, 1, 1, 1), aabb(3, 0, 0, 4, 1, 1), aabb(0, 5, 0, 1, 6, 1),
                           aabb(3.000001f, 5, 0, 4, 6, 1)};
    vec3s disp[4] = {vec(0, 0, 0), vec(-2, 0, 0), vec(0, 0, 0), vec(-2, 0, 0)};
    ref_broad_list small;
    assert_int_equal(ref_broad_reference(&small, 4, ids, boxes, disp, REF_BROAD_BAND), 0);
    assert_int_equal(small.count, 2);
    assert_int_equal(small.pairs, 1);
    assert_int_equal(small.borderline, 2);
    carom_broad_pair forgiven[1] = {{-21, -20, 1.0f}};
    r = compare(&small, forgiven, 1);
    assert_true(r.ok);
    assert_int_equal(r.missing, 1);
    assert_int_equal(r.extra, 1);
    /* ... but a borderline non-pair reported early is still a time error. */
    forgiven[0].time = 0.5f;
    r = compare(&small, forgiven, 1);
    assert_false(r.ok);
    assert_int_equal(r.bad_time, 1);

    /* Empty against empty. */
    ref_broad_list none = {0};
    r = compare(&none, NULL, 0);
    assert_true(r.ok);
    ref_broad_list_free(&small);
    ref_broad_list_free(&ref);
    ref_broad_scene_free(&s);
}

/* ---- scenes -------------------------------------------------------------------- */

static double pairs_per_box(ref_broad_scene* s)
{
    ref_broad_list list;
    assert_int_equal(ref_broad_scene_reference(s, &list, 0.0), 0);
    double k = (double)list.pairs / s->n;
    ref_broad_list_free(&list);
    return k;
}

static void test_scene_density(void** state)
{
    (void)state;
    /* Start-of-step density: nothing moves (fast movers aside). */
    for (int kind = REF_SCENE_UNIFORM; kind <= REF_SCENE_FAST_MOVERS; kind++) {
        for (int want = 1; want <= 4; want *= 4) {
            ref_broad_scene_desc d = {.kind = kind, .n = 2000, .seed = 11, .pairs_per_box = want};
            ref_broad_scene s;
            assert_int_equal(ref_broad_scene_make(&s, &d), 0);
            double k = pairs_per_box(&s);
            double hi = kind == REF_SCENE_FAST_MOVERS ? 3.0 : 2.0; /* fast movers add pairs */
            print_message("%-9s pairs_per_box %d: %.3f\n", ref_broad_scene_kind_name(kind), want, k);
            assert_true(k >= 0.5 * want && k <= hi * want);
            ref_broad_scene_free(&s);
        }
    }
    /* Motion adds pairs, never removes them from the start. */
    ref_broad_scene still_scene = make_scene(REF_SCENE_UNIFORM, 2000, 11, 0.0, 0.0);
    ref_broad_scene moving_scene = make_scene(REF_SCENE_UNIFORM, 2000, 11, 1.0, 2.0);
    assert_true(pairs_per_box(&moving_scene) > pairs_per_box(&still_scene));
    ref_broad_scene_free(&still_scene);
    ref_broad_scene_free(&moving_scene);
}

static bool boxes_overlap(carom_aabb a, carom_aabb b)
{
    return a.min.x <= b.max.x && b.min.x <= a.max.x && a.min.y <= b.max.y && b.min.y <= a.max.y &&
           a.min.z <= b.max.z && b.min.z <= a.max.z;
}

static carom_aabb moved(carom_aabb b, vec3s d)
{
    b.min.x += d.x;
    b.min.y += d.y;
    b.min.z += d.z;
    b.max.x += d.x;
    b.max.y += d.y;
    b.max.z += d.z;
    return b;
}

static float length(vec3s v)
{
    return sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
}

static int index_of(const ref_broad_scene* s, int id)
{
    for (int i = 0; i < s->n; i++)
        if (s->ids[i] == id)
            return i;
    fail_msg("id %d not in the scene", id);
    return -1;
}

static void test_scene_roles(void** state)
{
    (void)state;
    /* Convoy: one displacement for the whole convoy, nothing else moves. */
    ref_broad_scene c = make_scene(REF_SCENE_CONVOY, 2000, 5, 0.3, 1.0);
    int convoy = 0;
    for (int i = 0; i < c.n; i++) {
        vec3s d = c.displacements[i];
        if (c.roles[i] == REF_ROLE_CONVOY) {
            convoy++;
            assert_memory_equal(&d, &c.convoy, sizeof d);
        } else {
            assert_int_equal(c.roles[i], REF_ROLE_STATIC);
            assert_true(d.x == 0.0f && d.y == 0.0f && d.z == 0.0f);
        }
    }
    assert_true(convoy > 400 && convoy < 800);
    assert_true(c.convoy.x > 0.0f && fabsf(length(c.convoy) - 1.0f) < 1e-5f);
    ref_broad_scene_free(&c);

    /* Fast movers: about 2%, crossing tens of boxes, some passing through a
     * box they neither start nor end touching. */
    ref_broad_scene f = make_scene(REF_SCENE_FAST_MOVERS, 5000, 6, 0.5, 0.5);
    int fast = 0, slow = 0;
    for (int i = 0; i < f.n; i++) {
        float l = length(f.displacements[i]);
        if (f.roles[i] == REF_ROLE_FAST) {
            fast++;
            assert_true(l >= 8.0f * 0.9999f);
        } else if (f.roles[i] == REF_ROLE_MOVER) {
            slow++;
            assert_true(l >= 0.25f - 1e-6f && l <= 0.75f + 1e-6f);
        } else {
            assert_true(l == 0.0f);
        }
    }
    assert_int_equal(fast, 100);
    assert_true(slow > 2000 && slow < 2900);
    ref_broad_list list;
    assert_int_equal(ref_broad_scene_reference(&f, &list, 0.0), 0);
    int through = 0;
    for (int i = 0; i < list.count; i++) {
        int a = index_of(&f, list.items[i].a), b = index_of(&f, list.items[i].b);
        carom_aabb a1 = moved(f.boxes[a], f.displacements[a]), b1 = moved(f.boxes[b], f.displacements[b]);
        if (!boxes_overlap(f.boxes[a], f.boxes[b]) && !boxes_overlap(a1, b1))
            through++;
    }
    print_message("fast: %d of %d pairs exist only during the step\n", through, list.pairs);
    assert_true(through >= 100);
    ref_broad_list_free(&list);
    ref_broad_scene_free(&f);

    /* Mixed sizes span two orders of magnitude, plus huge ones. */
    ref_broad_scene m = make_scene(REF_SCENE_MIXED_SIZES, 3000, 8, 0.0, 0.0);
    float smallest = INFINITY, largest = 0.0f;
    int huge = 0;
    for (int i = 0; i < m.n; i++) {
        float e = m.boxes[i].max.x - m.boxes[i].min.x;
        if (e > 13.01f) { /* beyond the largest ordinary edge, 10 * 1.3 */
            huge++;
            continue;
        }
        smallest = fminf(smallest, e);
        largest = fmaxf(largest, e);
    }
    assert_int_equal(huge, 4);
    assert_true(largest / smallest > 50.0f && largest / smallest < 200.0f);
    ref_broad_scene_free(&m);
}

/* FNV-1a over the scene's arrays. */
static unsigned long long scene_hash(const ref_broad_scene* s)
{
    unsigned long long h = 14695981039346656037ULL;
    const unsigned char* parts[4] = {(const void*)s->ids, (const void*)s->boxes, (const void*)s->displacements,
                                     s->roles};
    size_t sizes[4] = {s->n * sizeof *s->ids, s->n * sizeof *s->boxes, s->n * sizeof *s->displacements,
                       s->n * sizeof *s->roles};
    for (int p = 0; p < 4; p++) {
        for (size_t i = 0; i < sizes[p]; i++) {
            h ^= parts[p][i];
            h *= 1099511628211ULL;
        }
    }
    return h;
}

static void test_scene_determinism(void** state)
{
    (void)state;
    /* These values pin the generators' sequences: they must not change with
     * the compiler or the optimisation level (the gcc and clang builds both
     * check them), only when a generator is changed on purpose. */
    static const unsigned long long golden[5] = {
        0x73dca4b042614a3dULL, 0xfab64a75883fd35bULL, 0xc13dff5a5f738627ULL,
        0x993c03bba93d9c22ULL, 0x22bae4b0330c3fd2ULL,
    };
    bool hashes_ok = true;
    for (int kind = REF_SCENE_UNIFORM; kind <= REF_SCENE_FAST_MOVERS; kind++) {
        ref_broad_scene_desc d = {.kind = kind, .n = 700, .seed = 2024, .pairs_per_box = 2.0, .moving = 0.5,
                                  .step = 1.5, .box_size = 0.25, .offset = -100.0};
        ref_broad_scene a, b;
        assert_int_equal(ref_broad_scene_make(&a, &d), 0);
        assert_int_equal(ref_broad_scene_make(&b, &d), 0);
        assert_true(scene_hash(&a) == scene_hash(&b));
        ref_broad_scene_advance(&a, 0.3);
        ref_broad_scene_advance(&b, 0.3);
        assert_int_equal(ref_broad_scene_shuffle_ids(&a, 1), 0);
        assert_int_equal(ref_broad_scene_shuffle_ids(&b, 1), 0);
        unsigned long long h = scene_hash(&a);
        assert_true(h == scene_hash(&b));
        if (h != golden[kind])
            print_message("%-9s hash 0x%016llxULL, expected 0x%016llxULL\n", ref_broad_scene_kind_name(kind), h,
                          golden[kind]);
        hashes_ok &= h == golden[kind];
        ref_broad_scene_free(&b);
        d.seed++;
        assert_int_equal(ref_broad_scene_make(&b, &d), 0);
        assert_true(memcmp(a.boxes, b.boxes, (size_t)a.n * sizeof *a.boxes) != 0);
        ref_broad_scene_free(&a);
        ref_broad_scene_free(&b);
    }
    assert_true(hashes_ok);

    /* Invalid descriptions are refused with the scene zeroed. */
    ref_broad_scene s;
    ref_broad_scene_desc bad = {.n = -1};
    assert_int_equal(ref_broad_scene_make(&s, &bad), -1);
    assert_null(s.boxes);
    bad = (ref_broad_scene_desc){.n = 10, .moving = 1.5};
    assert_int_equal(ref_broad_scene_make(&s, &bad), -1);
    bad = (ref_broad_scene_desc){.n = 10, .step = NAN};
    assert_int_equal(ref_broad_scene_make(&s, &bad), -1);
    bad = (ref_broad_scene_desc){.n = 10, .kind = (ref_broad_scene_kind)99};
    assert_int_equal(ref_broad_scene_make(&s, &bad), -1);
    /* An empty scene is fine. */
    bad = (ref_broad_scene_desc){.n = 0};
    assert_int_equal(ref_broad_scene_make(&s, &bad), 0);
    ref_broad_list list;
    assert_int_equal(ref_broad_scene_reference(&s, &list, REF_BROAD_BAND), 0);
    assert_int_equal(list.count, 0);
    ref_broad_scene_free(&s);
    ref_broad_scene_free(&s); /* twice: zeroed, fine */
}

static void test_scene_advance(void** state)
{
    (void)state;
    ref_broad_scene s = make_scene(REF_SCENE_FAST_MOVERS, 1500, 21, 0.5, 1.0);
    ref_broad_scene c = make_scene(REF_SCENE_CONVOY, 1500, 22, 0.4, 2.0);
    carom_aabb* before = malloc((size_t)s.n * sizeof *before);
    vec3s* disp = malloc((size_t)s.n * sizeof *disp);
    assert_non_null(before);
    assert_non_null(disp);
    double first = pairs_per_box(&s);
    for (int frame = 0; frame < 60; frame++) {
        memcpy(before, s.boxes, (size_t)s.n * sizeof *before);
        memcpy(disp, s.displacements, (size_t)s.n * sizeof *disp);
        ref_broad_scene_advance(&s, 0.1);
        ref_broad_scene_advance(&c, 0.1);
        for (int i = 0; i < s.n; i++) {
            carom_aabb want = moved(before[i], disp[i]);
            assert_memory_equal(&s.boxes[i], &want, sizeof want);
            if (s.roles[i] == REF_ROLE_STATIC)
                assert_true(s.displacements[i].x == 0.0f && s.displacements[i].y == 0.0f &&
                            s.displacements[i].z == 0.0f);
        }
        for (int i = 0; i < c.n; i++)
            if (c.roles[i] == REF_ROLE_CONVOY)
                assert_memory_equal(&c.displacements[i], &c.convoy, sizeof c.convoy);
    }
    assert_int_equal(s.frame, 60);
    /* Bouncing keeps the movers in: the density holds. */
    double last = pairs_per_box(&s);
    print_message("fast movers over 60 steps: %.3f -> %.3f pairs per box\n", first, last);
    assert_true(last > 0.5 * first && last < 2.0 * first);
    float lo = s.world.min.x, hi = s.world.max.x, margin = hi - lo;
    for (int i = 0; i < s.n; i++)
        assert_true(s.boxes[i].min.x > lo - margin && s.boxes[i].max.x < hi + margin);
    free(before);
    free(disp);
    ref_broad_scene_free(&s);
    ref_broad_scene_free(&c);
}

static void test_shuffle_ids(void** state)
{
    (void)state;
    ref_broad_scene s = make_scene(REF_SCENE_UNIFORM, 3000, 31, 0.5, 1.0);
    int before_count, after_count;
    carom_broad_pair* before = ref_broad_pairs(s.n, s.ids, s.boxes, s.displacements, &before_count);
    int* old_ids = malloc((size_t)s.n * sizeof *old_ids);
    assert_non_null(old_ids);
    memcpy(old_ids, s.ids, (size_t)s.n * sizeof *old_ids);
    assert_int_equal(ref_broad_scene_shuffle_ids(&s, 77), 0);

    /* Distinct, the extremes among them, negatives common. */
    int* sorted = malloc((size_t)s.n * sizeof *sorted);
    assert_non_null(sorted);
    memcpy(sorted, s.ids, (size_t)s.n * sizeof *sorted);
    int negative = 0;
    bool has_min = false, has_max = false, has_zero = false, has_minus_one = false;
    for (int i = 0; i < s.n; i++) {
        negative += sorted[i] < 0;
        has_min |= sorted[i] == INT_MIN;
        has_max |= sorted[i] == INT_MAX;
        has_zero |= sorted[i] == 0;
        has_minus_one |= sorted[i] == -1;
    }
    assert_true(has_min && has_max && has_zero && has_minus_one);
    assert_true(negative > s.n / 3 && negative < 2 * s.n / 3);
    qsort(sorted, (size_t)s.n, sizeof *sorted, cmp_int);
    for (int i = 1; i < s.n; i++)
        assert_true(sorted[i - 1] != sorted[i]);
    ref_broad_list check;
    assert_int_equal(ref_broad_scene_reference(&s, &check, 0.0), 0); /* refuses repeats */

    /* The same geometry gives the same pairs under the new names. */
    carom_broad_pair* after = ref_broad_pairs(s.n, s.ids, s.boxes, s.displacements, &after_count);
    assert_int_equal(after_count, before_count);
    for (int i = 0; i < before_count; i++) {
        int a = s.ids[before[i].a], b = s.ids[before[i].b]; /* old ids were indices */
        carom_broad_pair want = {a < b ? a : b, a < b ? b : a, before[i].time};
        carom_broad_pair* hit = bsearch(&want, after, (size_t)after_count, sizeof want, cmp_pair);
        assert_non_null(hit);
        assert_true(hit->time == want.time);
    }

    /* Repeated ids are refused. */
    s.ids[5] = s.ids[9];
    int bad;
    assert_null(ref_broad_pairs(s.n, s.ids, s.boxes, s.displacements, &bad));
    assert_int_equal(bad, -1);
    ref_broad_list_free(&check);
    free(sorted);
    free(old_ids);
    free(before);
    free(after);
    ref_broad_scene_free(&s);
}

static void test_invalid_input(void** state)
{
    (void)state;
    int ids[2] = {1, 2};
    carom_aabb boxes[2] = {aabb(0, 0, 0, 1, 1, 1), aabb(1, 0, 0, 0, 1, 1)}; /* second inverted */
    ref_broad_list list;
    int count;
    assert_int_equal(ref_broad_reference(&list, 2, ids, boxes, NULL, REF_BROAD_BAND), -1);
    assert_null(list.items);
    assert_null(ref_broad_pairs(2, ids, boxes, NULL, &count));
    assert_int_equal(count, -1);
    boxes[1] = aabb(0, 0, 0, 1, 1, NAN);
    assert_int_equal(ref_broad_reference(&list, 2, ids, boxes, NULL, 0.0), -1);
    boxes[1] = aabb(0.5f, 0, 0, 1, 1, 1);
    vec3s disp[2] = {vec(0, 0, 0), vec(INFINITY, 0, 0)};
    assert_int_equal(ref_broad_reference(&list, 2, ids, boxes, disp, 0.0), -1);
    assert_int_equal(ref_broad_reference(&list, 2, ids, boxes, NULL, -1e-5), -1);
    assert_int_equal(ref_broad_reference(&list, -1, ids, boxes, NULL, 0.0), -1);
    /* No displacements: the static overlap list. */
    carom_broad_pair* p = ref_broad_pairs(2, ids, boxes, NULL, &count);
    assert_int_equal(count, 1);
    assert_true(p[0].a == 1 && p[0].b == 2 && p[0].time == 0.0f);
    free(p);
    assert_null(ref_broad_pairs(0, NULL, NULL, NULL, &count));
    assert_int_equal(count, 0);
}

static void test_speed(void** state)
{
    (void)state;
    /* 20000 boxes at one pair per box, half moving: the size tests use. */
    ref_broad_scene s = make_scene(REF_SCENE_UNIFORM, 20000, 41, 0.5, 1.0);
    double t0 = now_ms();
    ref_broad_list list;
    assert_int_equal(ref_broad_scene_reference(&s, &list, REF_BROAD_BAND), 0);
    double ms = now_ms() - t0;
    print_message("reference for 20000 boxes: %d pairs, %d borderline entries, %.0f ms\n", list.pairs,
                  list.borderline, ms);
    assert_true(list.pairs > 15000);
    ref_broad_list_free(&list);
    ref_broad_scene_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep_analytic),
        cmocka_unit_test(test_sweep_symmetry_and_sampling),
        cmocka_unit_test(test_pairs_match_every_pair),
        cmocka_unit_test(test_pruning_keeps_band),
        cmocka_unit_test(test_borderline_cases),
        cmocka_unit_test(test_compare),
        cmocka_unit_test(test_scene_density),
        cmocka_unit_test(test_scene_roles),
        cmocka_unit_test(test_scene_determinism),
        cmocka_unit_test(test_scene_advance),
        cmocka_unit_test(test_shuffle_ids),
        cmocka_unit_test(test_invalid_input),
        cmocka_unit_test(test_speed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
