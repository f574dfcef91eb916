/* Broad-phase reference and scene generators; see broad_reference.h.
 *
 * One pair test, written once, serves three questions by a parameter c,
 * how far apart (c > 0) or how deep (c < 0) two faces may be and still
 * count as overlapping:
 * - c = 0 on the step [0, 1]: the exact answer;
 * - c = +delta on a slightly longer step: the answer with the boxes grown,
 *   the outer edge of the borderline band;
 * - c = -delta on a slightly shorter step: the answer with the boxes
 *   shrunk, the inner edge.
 * Rounding is monotone in c, so the three answers nest (shrunk within exact
 * within grown) in double as they do in the reals; the time bounds of an
 * entry therefore always contain its exact time.
 *
 * In the scene generators every random draw is a statement of its own:
 * the order of evaluation of function arguments and initialisers is
 * unspecified, and two draws in one expression could give different scenes
 * on different compilers. For the same reason they use no libm function
 * whose last bit may differ between libraries (exp and cbrt are done here
 * with the basic operations), and nothing may be fused into a multiply-add:
 * the build passes -ffp-contract=off (gcc ignores the standard pragma below
 * and warns about it; clang honours it). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include "broad_reference.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one pair ----------------------------------------------------------------- */

/* The times t at which [alo, ahi] and [blo + t w, bhi + t w] overlap, faces
 * allowed c apart: t w must lie in [alo - bhi - c, ahi - blo + c]. Writes an
 * empty interval (t0 > t1) when there is none, NaN input included. */
static void axis_times(double alo, double ahi, double blo, double bhi, double w, double c, double* t0,
                       double* t1)
{
    double lower = (alo - bhi) - c;
    double upper = (ahi - blo) + c;
    *t0 = INFINITY;
    *t1 = -INFINITY;
    if (!(lower <= upper) || w != w)
        return; /* shrunk past nothing, or NaN */
    if (w > 0.0) {
        *t0 = lower / w;
        *t1 = upper / w;
    } else if (w < 0.0) {
        *t0 = upper / w;
        *t1 = lower / w;
    } else if (lower <= 0.0 && 0.0 <= upper) {
        *t0 = -INFINITY;
        *t1 = INFINITY;
    }
}

/* Start of the intersection of the three axes' intervals with [wlo, whi];
 * false when it is empty. The start only moves up from wlo, so a -0 from an
 * axis never replaces a +0 window start. */
static bool first_time(const double amin[3], const double amax[3], const double adisp[3], const double bmin[3],
                       const double bmax[3], const double bdisp[3], const double c[3], double wlo, double whi,
                       double* t)
{
    double start = wlo, end = whi;
    for (int k = 0; k < 3; k++) {
        double t0, t1;
        axis_times(amin[k], amax[k], bmin[k], bmax[k], bdisp[k] - adisp[k], c[k], &t0, &t1);
        if (t0 > start)
            start = t0;
        if (t1 < end)
            end = t1;
        if (!(start <= end))
            return false;
    }
    *t = start;
    return true;
}

double ref_broad_sweep_time(const double a_min[3], const double a_max[3], const double a_disp[3],
                            const double b_min[3], const double b_max[3], const double b_disp[3])
{
    static const double exact[3] = {0.0, 0.0, 0.0};
    double t;
    return first_time(a_min, a_max, a_disp, b_min, b_max, b_disp, exact, 0.0, 1.0, &t) ? t : -1.0;
}

/* ---- the reference list ------------------------------------------------------- */

/* A proxy widened to double, with what pruning and the band need. */
typedef struct wide_box {
    double min[3], max[3], disp[3];
    double reach[3];     /* largest magnitude of its coordinates and displacement, per axis */
    double lo[3], hi[3]; /* swept ranges, grown by the band (see swept_ranges) */
    int id;
} wide_box;

/* The swept ranges of a box on the two axes other than the sweep's, apart
 * from the rest for a compact inner loop. */
typedef struct side_ranges {
    double lo1, hi1, lo2, hi2;
} side_ranges;

/* The axis the sweep sorts on; qsort has no context argument. Set only
 * around that qsort. */
static _Thread_local int sort_axis;

static int cmp_wide_lo(const void* pa, const void* pb)
{
    const wide_box* a = pa;
    const wide_box* b = pb;
    int k = sort_axis;
    if (a->lo[k] != b->lo[k])
        return a->lo[k] < b->lo[k] ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id); /* ids are distinct: a total order */
}

static int cmp_int(const void* pa, const void* pb)
{
    int a = *(const int*)pa, b = *(const int*)pb;
    return (a > b) - (a < b);
}

static int cmp_entry(const void* pa, const void* pb)
{
    const ref_broad_entry* a = pa;
    const ref_broad_entry* b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

static bool finite3(vec3s v)
{
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

static void widen(vec3s v, double out[3])
{
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
}

/* Checks and widens the input; NULL on invalid input or out of memory. */
static wide_box* widen_all(int n, const int* ids, const carom_aabb* boxes, const vec3s* displacements)
{
    if (n < 0 || (n > 0 && (!ids || !boxes)))
        return NULL;
    wide_box* w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    int* sorted = malloc((size_t)(n > 0 ? n : 1) * sizeof *sorted);
    if (!w || !sorted)
        goto fail;
    for (int i = 0; i < n; i++) {
        carom_aabb b = boxes[i];
        vec3s d = displacements ? displacements[i] : (vec3s){{0.0f, 0.0f, 0.0f}};
        if (!finite3(b.min) || !finite3(b.max) || !finite3(d) || !(b.min.x <= b.max.x) ||
            !(b.min.y <= b.max.y) || !(b.min.z <= b.max.z))
            goto fail;
        widen(b.min, w[i].min);
        widen(b.max, w[i].max);
        widen(d, w[i].disp);
        for (int k = 0; k < 3; k++)
            w[i].reach[k] = fmax(fmax(fabs(w[i].min[k]), fabs(w[i].max[k])), fabs(w[i].disp[k]));
        w[i].id = ids[i];
        sorted[i] = ids[i];
    }
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    for (int i = 1; i < n; i++)
        if (sorted[i] == sorted[i - 1])
            goto fail;
    free(sorted);
    return w;
fail:
    free(w);
    free(sorted);
    return NULL;
}

/* The swept range of every box on each axis over the step lengthened by tau
 * at both ends, grown by its share of the band plus a rounding margin: two
 * boxes whose ranges are apart on some axis cannot meet even with the band
 * (the band of a pair is at most the sum of the two shares). */
static void swept_ranges(wide_box* w, int n, double band, double tau)
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            double d = w[i].disp[k];
            double grow = (band + 1e-12) * w[i].reach[k];
            w[i].lo[k] = w[i].min[k] + fmin(-tau * d, (1.0 + tau) * d) - grow;
            w[i].hi[k] = w[i].max[k] + fmax(-tau * d, (1.0 + tau) * d) + grow;
        }
    }
}

/* The axis on which the swept ranges overlap least relative to how far the
 * boxes spread: the sweep then visits the fewest pairs. Any axis gives the
 * same answer. */
static int pruning_axis(const wide_box* w, int n)
{
    int best = 0;
    double best_score = INFINITY;
    for (int k = 0; k < 3; k++) {
        double lo = INFINITY, hi = -INFINITY, length = 0.0;
        for (int i = 0; i < n; i++) {
            lo = fmin(lo, w[i].lo[k]);
            hi = fmax(hi, w[i].hi[k]);
            length += w[i].hi[k] - w[i].lo[k];
        }
        double score = length / fmax(hi - lo, 1e-300);
        if (score < best_score) {
            best_score = score;
            best = k;
        }
    }
    return best;
}

/* Tests one candidate with the band; appends an entry when the grown boxes
 * meet. False when out of memory. */
static bool test_pair(const wide_box* p, const wide_box* q, double band, double tau, ref_broad_entry** items,
                      int* count, int* capacity)
{
    static const double exact[3] = {0.0, 0.0, 0.0};
    double grow[3], shrink[3];
    for (int k = 0; k < 3; k++) {
        /* Unmoved faces compare exactly in float as well: no band there. */
        double delta = p->disp[k] == 0.0 && q->disp[k] == 0.0 ? 0.0 : band * fmax(p->reach[k], q->reach[k]);
        grow[k] = delta;
        shrink[k] = -delta;
    }
    double t_out, t_exact, t_in;
    if (!first_time(p->min, p->max, p->disp, q->min, q->max, q->disp, grow, -tau, 1.0 + tau, &t_out))
        return true;
    bool is_pair = first_time(p->min, p->max, p->disp, q->min, q->max, q->disp, exact, 0.0, 1.0, &t_exact);
    bool robust = first_time(p->min, p->max, p->disp, q->min, q->max, q->disp, shrink, tau, 1.0 - tau, &t_in);
    if (*count == *capacity) {
        int cap = *capacity ? 2 * *capacity : 256;
        ref_broad_entry* grown = realloc(*items, (size_t)cap * sizeof *grown);
        if (!grown)
            return false;
        *items = grown;
        *capacity = cap;
    }
    ref_broad_entry* e = &(*items)[(*count)++];
    e->a = p->id < q->id ? p->id : q->id;
    e->b = p->id < q->id ? q->id : p->id;
    e->time = is_pair ? t_exact : -1.0;
    e->time_lo = fmin(fmax(t_out, 0.0), 1.0);
    e->time_hi = robust ? fmin(fmax(t_in, 0.0), 1.0) : 1.0;
    e->borderline = !(is_pair && robust);
    return true;
}

int ref_broad_reference(ref_broad_list* out, int n, const int* ids, const carom_aabb* boxes,
                        const vec3s* displacements, double band)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!(band >= 0.0 && band <= 0.25))
        return -1;
    wide_box* w = widen_all(n, ids, boxes, displacements);
    if (!w)
        return -1;
    double tau = band; /* the step's ends move by as much, relatively */
    swept_ranges(w, n, band, tau);
    int k = pruning_axis(w, n), k1 = (k + 1) % 3, k2 = (k + 2) % 3;
    sort_axis = k;
    qsort(w, (size_t)n, sizeof *w, cmp_wide_lo);
    double* key = malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
    side_ranges* side = malloc((size_t)(n > 0 ? n : 1) * sizeof *side);
    if (!key || !side) {
        free(key);
        free(side);
        free(w);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        key[i] = w[i].lo[k];
        side[i] = (side_ranges){w[i].lo[k1], w[i].hi[k1], w[i].lo[k2], w[i].hi[k2]};
    }

    ref_broad_entry* items = NULL;
    int count = 0, capacity = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        double end = w[i].hi[k];
        side_ranges si = side[i];
        for (int j = i + 1; j < n && key[j] <= end; j++) {
            side_ranges sj = side[j];
            if (sj.lo1 > si.hi1 || si.lo1 > sj.hi1 || sj.lo2 > si.hi2 || si.lo2 > sj.hi2)
                continue;
            if (!test_pair(&w[i], &w[j], band, tau, &items, &count, &capacity)) {
                ok = false;
                break;
            }
        }
    }
    free(key);
    free(side);
    if (!ok) {
        free(items);
        free(w);
        return -1;
    }
    free(w);
    if (count > 0)
        qsort(items, (size_t)count, sizeof *items, cmp_entry);
    out->items = items;
    out->count = count;
    for (int i = 0; i < count; i++) {
        out->pairs += items[i].time >= 0.0;
        out->borderline += items[i].borderline;
    }
    return 0;
}

void ref_broad_list_free(ref_broad_list* list)
{
    if (!list)
        return;
    free(list->items);
    memset(list, 0, sizeof *list);
}

carom_broad_pair* ref_broad_pairs(int n, const int* ids, const carom_aabb* boxes, const vec3s* displacements,
                                  int* count)
{
    ref_broad_list list;
    carom_broad_pair* pairs = NULL;
    if (ref_broad_reference(&list, n, ids, boxes, displacements, 0.0) != 0) {
        if (count)
            *count = -1;
        return NULL;
    }
    /* With no band every entry is an exact pair. */
    if (list.count > 0) {
        pairs = malloc((size_t)list.count * sizeof *pairs);
        if (!pairs) {
            ref_broad_list_free(&list);
            if (count)
                *count = -1;
            return NULL;
        }
        for (int i = 0; i < list.count; i++)
            pairs[i] = (carom_broad_pair){list.items[i].a, list.items[i].b, (float)list.items[i].time};
    }
    if (count)
        *count = list.count;
    ref_broad_list_free(&list);
    return pairs;
}

const ref_broad_entry* ref_broad_find(const ref_broad_list* list, int a, int b)
{
    if (!list || list->count == 0)
        return NULL;
    ref_broad_entry key = {.a = a < b ? a : b, .b = a < b ? b : a};
    return bsearch(&key, list->items, (size_t)list->count, sizeof key, cmp_entry);
}

/* ---- comparing ------------------------------------------------------------------ */

static int cmp_pair(const void* pa, const void* pb)
{
    const carom_broad_pair* a = pa;
    const carom_broad_pair* b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

/* Records the first offence of a kind: merge offences come in (a, b) order,
 * so the first recorded is the first in that order. */
static void offend(ref_broad_report* r, const char* what, int a, int b, double got, const ref_broad_entry* e)
{
    if (r->first_what)
        return;
    r->first_what = what;
    r->first_a = a;
    r->first_b = b;
    r->first_got = got;
    r->first_ref = e ? e->time : -1.0;
    r->first_lo = e ? e->time_lo : -1.0;
    r->first_hi = e ? e->time_hi : -1.0;
    r->first_borderline = e ? e->borderline : false;
}

ref_broad_report ref_broad_compare(const ref_broad_list* ref, const carom_broad_pair* got, int count,
                                   double time_tol)
{
    ref_broad_report r = {0};
    static const ref_broad_list empty = {0};
    if (!ref)
        ref = &empty;
    if (count < 0 || (count > 0 && !got))
        count = 0;
    r.ref_pairs = ref->pairs;
    r.ref_borderline = ref->borderline;
    r.got_pairs = count;

    /* Form, in the order given. */
    ref_broad_report form = {0};
    for (int i = 0; i < count; i++) {
        const carom_broad_pair* p = &got[i];
        bool bad = p->a >= p->b || !(p->time >= 0.0f && p->time <= 1.0f) ||
                   (i > 0 && cmp_pair(&got[i - 1], p) >= 0);
        if (bad) {
            r.malformed++;
            offend(&form, "malformed", p->a, p->b, p->time, ref_broad_find(ref, p->a, p->b));
        }
    }

    /* Content, on a sorted copy with each pair's ids in order, so a malformed
     * list is still compared pair by pair. */
    carom_broad_pair* sorted = malloc((size_t)(count > 0 ? count : 1) * sizeof *sorted);
    if (!sorted) {
        r.malformed = count > 0 ? count : 1;
        r.first_what = "malformed";
        r.first_a = r.first_b = 0;
        r.first_got = r.first_ref = r.first_lo = r.first_hi = -1.0;
        return r; /* out of memory: cannot vouch for anything */
    }
    for (int i = 0; i < count; i++) {
        sorted[i] = got[i];
        if (sorted[i].a > sorted[i].b) {
            int t = sorted[i].a;
            sorted[i].a = sorted[i].b;
            sorted[i].b = t;
        }
    }
    qsort(sorted, (size_t)count, sizeof *sorted, cmp_pair);

    int i = 0, j = 0;
    while (i < ref->count || j < count) {
        if (j > 0 && j < count && cmp_pair(&sorted[j - 1], &sorted[j]) == 0) {
            j++; /* a repeat, already counted as malformed */
            continue;
        }
        const ref_broad_entry* e = i < ref->count ? &ref->items[i] : NULL;
        const carom_broad_pair* p = j < count ? &sorted[j] : NULL;
        int order = !e ? 1 : !p ? -1 : e->a != p->a ? (e->a < p->a ? -1 : 1) : (e->b > p->b) - (e->b < p->b);
        if (order < 0) { /* in the reference only */
            if (e->time >= 0.0) {
                r.missing++;
                if (!e->borderline) {
                    r.bad_missing++;
                    offend(&r, "missing", e->a, e->b, -1.0, e);
                }
            }
            i++;
        } else if (order > 0) { /* in the list only, and outside the band */
            r.extra++;
            r.bad_extra++;
            offend(&r, "extra", p->a, p->b, p->time, NULL);
            j++;
        } else {
            if (e->time >= 0.0) {
                r.common++;
                r.max_time_error = fmax(r.max_time_error, fabs(p->time - e->time));
            } else {
                r.extra++; /* borderline: forgiven */
            }
            /* A NaN time fails here as well as in the form check. */
            if (!(p->time >= e->time_lo - time_tol && p->time <= e->time_hi + time_tol)) {
                r.bad_time++;
                offend(&r, "time", p->a, p->b, p->time, e);
            }
            i++;
            j++;
        }
    }
    free(sorted);

    if (!r.first_what && form.first_what) {
        r.first_what = form.first_what;
        r.first_a = form.first_a;
        r.first_b = form.first_b;
        r.first_got = form.first_got;
        r.first_ref = form.first_ref;
        r.first_lo = form.first_lo;
        r.first_hi = form.first_hi;
        r.first_borderline = form.first_borderline;
    }
    r.ok = r.bad_missing == 0 && r.bad_extra == 0 && r.bad_time == 0 && r.malformed == 0;
    return r;
}

const char* ref_broad_report_message(const ref_broad_report* r, char* buf, size_t size)
{
    if (!buf || size == 0)
        return buf;
    if (!r) {
        snprintf(buf, size, "no report");
        return buf;
    }
    if (r->ok) {
        snprintf(buf, size,
                 "matches the reference: %d pairs (%d reference entries borderline), %d missing and %d "
                 "extra all borderline, max time error %.3g",
                 r->got_pairs, r->ref_borderline, r->missing, r->extra, r->max_time_error);
        return buf;
    }
    int used = snprintf(buf, size,
                        "differs from the reference: %d pairs, reference %d; %d missing (%d not borderline), "
                        "%d extra (%d outside the band), %d times off, %d malformed, max time error %.3g",
                        r->got_pairs, r->ref_pairs, r->missing, r->bad_missing, r->extra, r->bad_extra,
                        r->bad_time, r->malformed, r->max_time_error);
    if (r->first_what && used >= 0 && (size_t)used < size) {
        char got[32], want[32];
        if (r->first_got >= 0.0)
            snprintf(got, sizeof got, "%.9g", r->first_got);
        else
            snprintf(got, sizeof got, "none");
        if (r->first_ref >= 0.0)
            snprintf(want, sizeof want, "%.9g", r->first_ref);
        else
            snprintf(want, sizeof want, "none");
        if (r->first_lo >= 0.0)
            snprintf(buf + used, size - (size_t)used,
                     "; first: %s pair (%d, %d): got t=%s, reference t=%s in [%.9g, %.9g], %s", r->first_what,
                     r->first_a, r->first_b, got, want, r->first_lo, r->first_hi,
                     r->first_borderline ? "borderline" : "not borderline");
        else
            snprintf(buf + used, size - (size_t)used,
                     "; first: %s pair (%d, %d): got t=%s, not in the reference or its band", r->first_what,
                     r->first_a, r->first_b, got);
    }
    return buf;
}

/* ---- scenes -------------------------------------------------------------------- */

/* splitmix64: a Weyl sequence through a strong mixer, so every seed,
 * including 0, gives a good stream. */
static unsigned long long next_bits(unsigned long long* state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi): 53 random bits scaled. */
static double uniform(unsigned long long* state, double lo, double hi)
{
    double u = (double)(next_bits(state) >> 11) * 0x1.0p-53;
    return lo + (hi - lo) * u;
}

/* Uniform in [0, n), n > 0; the bias of a plain remainder is below 2^-32
 * for any int n, harmless here. */
static int below(unsigned long long* state, int n)
{
    return (int)(next_bits(state) % (unsigned long long)n);
}

/* exp(x) for moderate x from the basic operations: x = k ln 2 + r with
 * |r| <= ln 2 / 2, a Taylor series for e^r (30 terms: far past double
 * precision), then an exact scaling by 2^k. */
static double det_exp(double x)
{
    const double ln2 = 0.69314718055994530942;
    double k = floor(x / ln2 + 0.5);
    double r = x - k * ln2;
    double term = 1.0, sum = 1.0;
    for (int i = 1; i <= 30; i++) {
        term *= r / i;
        sum += term;
    }
    return ldexp(sum, (int)k);
}

/* Cube root of x > 0 from the basic operations: a power-of-two guess within
 * a factor 2, then a fixed number of Newton steps (far more than the
 * quadratic convergence needs), so the result does not depend on a
 * convergence test. */
static double det_cbrt(double x)
{
    int e;
    frexp(x, &e);
    double y = ldexp(1.0, e / 3);
    for (int i = 0; i < 60; i++)
        y = (2.0 * y + x / (y * y)) / 3.0;
    return y;
}

/* A uniformly distributed unit vector, by rejection from the cube. */
static void random_direction(unsigned long long* rng, double u[3])
{
    for (;;) {
        double x = uniform(rng, -1.0, 1.0);
        double y = uniform(rng, -1.0, 1.0);
        double z = uniform(rng, -1.0, 1.0);
        double r2 = x * x + y * y + z * z;
        if (r2 > 1e-4 && r2 <= 1.0) {
            double s = 1.0 / sqrt(r2);
            u[0] = x * s;
            u[1] = y * s;
            u[2] = z * s;
            return;
        }
    }
}

/* Sum of three uniforms on [-sigma, sigma]: bell-shaped, standard deviation
 * sigma, and bounded by 3 sigma, so clusters can be kept apart exactly. */
static double bell(unsigned long long* rng, double sigma)
{
    double x = uniform(rng, -sigma, sigma);
    x += uniform(rng, -sigma, sigma);
    x += uniform(rng, -sigma, sigma);
    return x;
}

static carom_aabb box_at(const double centre[3], const double edge[3])
{
    carom_aabb b;
    b.min.x = (float)(centre[0] - 0.5 * edge[0]);
    b.min.y = (float)(centre[1] - 0.5 * edge[1]);
    b.min.z = (float)(centre[2] - 0.5 * edge[2]);
    b.max.x = (float)(centre[0] + 0.5 * edge[0]);
    b.max.y = (float)(centre[1] + 0.5 * edge[1]);
    b.max.z = (float)(centre[2] + 0.5 * edge[2]);
    return b;
}

static void box_centre(carom_aabb b, double c[3])
{
    c[0] = 0.5 * ((double)b.min.x + b.max.x);
    c[1] = 0.5 * ((double)b.min.y + b.max.y);
    c[2] = 0.5 * ((double)b.min.z + b.max.z);
}

static vec3s to_vec(const double v[3], double scale)
{
    vec3s r;
    r.x = (float)(v[0] * scale);
    r.y = (float)(v[1] * scale);
    r.z = (float)(v[2] * scale);
    return r;
}

static void set_world(ref_broad_scene* s, double side)
{
    float lo = (float)s->desc.offset, hi = (float)(s->desc.offset + side);
    s->world.min = (vec3s){{lo, lo, lo}};
    s->world.max = (vec3s){{hi, hi, hi}};
}

/* Edge of the cube in which n boxes of about unit size (each edge of mean
 * `size`, independent per axis) make `k` pairs per box: two such boxes
 * overlap with probability (2 size / side)^3, and there are n (n - 1) / 2
 * pairs. */
static double uniform_side(int n, double size, double k)
{
    double m = n > 1 ? n - 1 : 1;
    return size * det_cbrt(4.0 * m / k);
}

/* A mover's displacement: random direction, 0.5 to 1.5 times `step` box
 * sizes. */
static vec3s slow_displacement(unsigned long long* rng, const ref_broad_scene_desc* d)
{
    double u[3];
    random_direction(rng, u);
    double length = d->step * d->box_size * uniform(rng, 0.5, 1.5);
    return to_vec(u, length);
}

/* A fast mover's step length: a quarter to a half of the world (tens of box
 * sizes for thousands of boxes), and at least 8 box sizes so an aimed one
 * starts and ends clear of its target. */
static double fast_length(unsigned long long* rng, const ref_broad_scene* s)
{
    double side = (double)s->world.max.x - s->world.min.x;
    double length = uniform(rng, 0.25, 0.5) * side;
    return fmax(length, 8.0 * s->desc.box_size);
}

static vec3s convoy_displacement(unsigned long long* rng, const ref_broad_scene_desc* d)
{
    double u[3] = {1.0, 0.0, 0.0};
    u[1] = uniform(rng, -0.2, 0.2);
    u[2] = uniform(rng, -0.2, 0.2);
    double r = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    return to_vec(u, d->step * d->box_size / r);
}

/* Boxes of about one size, uniform in a cube; the roles are the caller's. */
static void place_uniform(ref_broad_scene* s, double side)
{
    double size = s->desc.box_size, o = s->desc.offset;
    for (int i = 0; i < s->n; i++) {
        double c[3], e[3];
        for (int k = 0; k < 3; k++)
            c[k] = uniform(&s->rng, o, o + side);
        for (int k = 0; k < 3; k++)
            e[k] = size * uniform(&s->rng, 0.5, 1.5);
        s->boxes[i] = box_at(c, e);
    }
    set_world(s, side);
}

/* Which of n items is one of m spread evenly through them (m <= n). */
static bool every(int i, int n, int m)
{
    if (m <= 0)
        return false;
    int stride = n / m;
    return i % stride == stride / 2 && i / stride < m;
}

static void make_uniform(ref_broad_scene* s)
{
    place_uniform(s, uniform_side(s->n, s->desc.box_size, s->desc.pairs_per_box));
}

static int make_clustered(ref_broad_scene* s)
{
    const ref_broad_scene_desc* d = &s->desc;
    int n = s->n;
    int clusters = n / 50 < 1 ? 1 : n / 50 > 6 ? 6 : n / 50;
    double weight[6], total = 0.0, sigma[6], centre[6][3];
    int members[6] = {0};
    for (int c = 0; c < clusters; c++) {
        weight[c] = uniform(&s->rng, 1.0, 4.0);
        total += weight[c];
    }
    int* which = malloc((size_t)(n > 0 ? n : 1) * sizeof *which);
    if (!which)
        return -1;
    for (int i = 0; i < n; i++) {
        double u = uniform(&s->rng, 0.0, total);
        int c = 0;
        while (c < clusters - 1 && u >= weight[c]) {
            u -= weight[c];
            c++;
        }
        which[i] = c;
        members[c]++;
    }
    /* Per axis the difference of two members' positions has standard
     * deviation sigma sqrt 2, density about 1 / (2 sigma sqrt pi) near 0,
     * so two boxes (edges summing to 2 size on average) overlap with
     * probability about (size / (sigma sqrt pi))^3; m members make
     * (m - 1) / 2 times that pairs per box. */
    const double sqrt_pi = 1.7724538509055160273;
    double widest = 0.0;
    for (int c = 0; c < clusters; c++) {
        double m = members[c] > 1 ? members[c] - 1 : 1;
        sigma[c] = d->box_size / sqrt_pi * det_cbrt(m / (2.0 * d->pairs_per_box));
        widest = fmax(widest, sigma[c]);
    }
    /* Clusters reach 3 sigma plus a box from their centre: cells of 8 sigma
     * plus 4 boxes with centres jittered by 5% keep them apart. */
    int g = 1;
    while (g * g * g < clusters)
        g++;
    double cell = 8.0 * widest + 4.0 * d->box_size;
    int cells[216];
    for (int i = 0; i < g * g * g; i++)
        cells[i] = i;
    for (int i = g * g * g - 1; i > 0; i--) {
        int j = below(&s->rng, i + 1);
        int t = cells[i];
        cells[i] = cells[j];
        cells[j] = t;
    }
    for (int c = 0; c < clusters; c++) {
        int cx = cells[c] % g, cy = cells[c] / g % g, cz = cells[c] / (g * g);
        int at[3] = {cx, cy, cz};
        for (int k = 0; k < 3; k++)
            centre[c][k] = d->offset + (at[k] + 0.5) * cell + uniform(&s->rng, -0.05, 0.05) * cell;
    }
    for (int i = 0; i < n; i++) {
        int c = which[i];
        double p[3], e[3];
        for (int k = 0; k < 3; k++)
            p[k] = centre[c][k] + bell(&s->rng, sigma[c]);
        for (int k = 0; k < 3; k++)
            e[k] = d->box_size * uniform(&s->rng, 0.5, 1.5);
        s->boxes[i] = box_at(p, e);
    }
    free(which);
    set_world(s, g * cell);
    return 0;
}

static void make_mixed(ref_broad_scene* s)
{
    const ref_broad_scene_desc* d = &s->desc;
    int n = s->n;
    /* Edges size f g with f log-uniform on [0.1, 10] per box and g uniform on
     * [0.7, 1.3] per axis: two boxes overlap with probability
     * size^3 E[(f1 + f2)^3] / side^3 = size^3 (2 E[f^3] + 6 E[f^2] E[f]) / side^3,
     * with E[f^m] = (10^m - 0.1^m) / (m ln 100). */
    const double lo = 0.1, hi = 10.0, span = 4.6051701859880913680; /* ln 100 */
    double e1 = (hi - lo) / span, e2 = (hi * hi - lo * lo) / (2.0 * span);
    double e3 = (hi * hi * hi - lo * lo * lo) / (3.0 * span);
    double m = n > 1 ? n - 1 : 1;
    double side = d->box_size * det_cbrt(m / (2.0 * d->pairs_per_box) * (2.0 * e3 + 6.0 * e2 * e1));
    int huge = n >= 20 ? 1 + n / 1000 : 0;
    for (int i = 0; i < n; i++) {
        double c[3], e[3];
        for (int k = 0; k < 3; k++)
            c[k] = uniform(&s->rng, d->offset, d->offset + side);
        if (every(i, n, huge)) {
            double big = fmax(0.2 * side, 30.0 * d->box_size);
            for (int k = 0; k < 3; k++)
                e[k] = big * uniform(&s->rng, 1.0, 1.5);
        } else {
            double u = uniform(&s->rng, 0.0, 1.0);
            double f = lo * det_exp(u * span);
            for (int k = 0; k < 3; k++)
                e[k] = d->box_size * f * uniform(&s->rng, 0.7, 1.3);
        }
        s->boxes[i] = box_at(c, e);
    }
    set_world(s, side);
}

/* Aims fast mover i through box `target`: at mid-step their centres
 * coincide, and the mover starts and ends half its step away. */
static void aim(ref_broad_scene* s, int i, int target)
{
    double u[3], c[3], e[3];
    random_direction(&s->rng, u);
    double length = fast_length(&s->rng, s);
    box_centre(s->boxes[target], c);
    vec3s td = s->displacements[target];
    const double half_target[3] = {0.5 * td.x, 0.5 * td.y, 0.5 * td.z};
    e[0] = (double)s->boxes[i].max.x - s->boxes[i].min.x;
    e[1] = (double)s->boxes[i].max.y - s->boxes[i].min.y;
    e[2] = (double)s->boxes[i].max.z - s->boxes[i].min.z;
    for (int k = 0; k < 3; k++)
        c[k] += half_target[k] - 0.5 * length * u[k];
    s->boxes[i] = box_at(c, e);
    s->displacements[i] = to_vec(u, length);
}

static vec3s fast_displacement(ref_broad_scene* s)
{
    double u[3];
    random_direction(&s->rng, u);
    double length = fast_length(&s->rng, s);
    return to_vec(u, length);
}

static int scene_alloc(ref_broad_scene* s, int n)
{
    size_t m = (size_t)(n > 0 ? n : 1);
    s->ids = malloc(m * sizeof *s->ids);
    s->boxes = malloc(m * sizeof *s->boxes);
    s->displacements = calloc(m, sizeof *s->displacements);
    s->roles = calloc(m, sizeof *s->roles);
    return s->ids && s->boxes && s->displacements && s->roles ? 0 : -1;
}

int ref_broad_scene_make(ref_broad_scene* out, const ref_broad_scene_desc* desc)
{
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    if (!desc)
        return -1;
    ref_broad_scene_desc d = *desc;
    if (d.pairs_per_box == 0.0)
        d.pairs_per_box = 1.0;
    if (d.box_size == 0.0)
        d.box_size = 1.0;
    if (d.n < 0 || (unsigned)d.kind > REF_SCENE_FAST_MOVERS || !(d.pairs_per_box > 0.0) ||
        !isfinite(d.pairs_per_box) || !(d.moving >= 0.0 && d.moving <= 1.0) || !(d.step >= 0.0) ||
        !isfinite(d.step) || !(d.box_size > 0.0) || !isfinite(d.box_size) || !(fabs(d.offset) <= 1e11))
        return -1;
    ref_broad_scene* s = out;
    s->desc = d;
    s->n = d.n;
    s->rng = d.seed;
    if (scene_alloc(s, d.n) != 0) {
        ref_broad_scene_free(s);
        return -1;
    }
    for (int i = 0; i < d.n; i++)
        s->ids[i] = i;

    switch (d.kind) {
    case REF_SCENE_UNIFORM:
    case REF_SCENE_CONVOY:
    case REF_SCENE_FAST_MOVERS:
        make_uniform(s);
        break;
    case REF_SCENE_CLUSTERED:
        if (make_clustered(s) != 0) {
            ref_broad_scene_free(s);
            return -1;
        }
        break;
    case REF_SCENE_MIXED_SIZES:
        make_mixed(s);
        break;
    }

    int n = d.n;
    if (d.kind == REF_SCENE_CONVOY) {
        s->convoy = convoy_displacement(&s->rng, &d);
        double edge = d.offset + d.moving * ((double)s->world.max.x - s->world.min.x);
        for (int i = 0; i < n; i++) {
            double c[3];
            box_centre(s->boxes[i], c);
            if (d.moving > 0.0 && c[0] < edge) {
                s->roles[i] = REF_ROLE_CONVOY;
                s->displacements[i] = s->convoy;
            }
        }
        return 0;
    }
    int fast = d.kind == REF_SCENE_FAST_MOVERS && n >= 2 ? (n + 25) / 50 : 0;
    for (int i = 0; i < n; i++) {
        if (every(i, n, fast)) {
            s->roles[i] = REF_ROLE_FAST;
            continue;
        }
        double u = uniform(&s->rng, 0.0, 1.0);
        if (u < d.moving) {
            s->roles[i] = REF_ROLE_MOVER;
            s->displacements[i] = slow_displacement(&s->rng, &d);
        }
    }
    /* Fast movers last, so an aimed one knows where its target will be. */
    int aimed = 0;
    for (int i = 0; i < n; i++) {
        if (s->roles[i] != REF_ROLE_FAST)
            continue;
        if (aimed++ % 2 == 0) {
            /* A target that is not fast itself: index 0 never is, since
             * fast movers are at most one in 25 (stride >= 2). */
            int target = below(&s->rng, n);
            if (s->roles[target] == REF_ROLE_FAST)
                target = 0;
            aim(s, i, target);
        } else {
            s->displacements[i] = fast_displacement(s);
        }
    }
    return 0;
}

void ref_broad_scene_free(ref_broad_scene* scene)
{
    if (!scene)
        return;
    free(scene->ids);
    free(scene->boxes);
    free(scene->displacements);
    free(scene->roles);
    memset(scene, 0, sizeof *scene);
}

/* Turns the displacement back on every axis where the centre c is outside
 * the world and the displacement leads further out. */
static vec3s bounce(const ref_broad_scene* s, const double c[3], vec3s v)
{
    float* d[3] = {&v.x, &v.y, &v.z};
    const float lo[3] = {s->world.min.x, s->world.min.y, s->world.min.z};
    const float hi[3] = {s->world.max.x, s->world.max.y, s->world.max.z};
    for (int k = 0; k < 3; k++)
        if ((c[k] < lo[k] && *d[k] < 0.0f) || (c[k] > hi[k] && *d[k] > 0.0f))
            *d[k] = -*d[k];
    return v;
}

void ref_broad_scene_advance(ref_broad_scene* scene, double renew)
{
    if (!scene)
        return;
    ref_broad_scene* s = scene;
    for (int i = 0; i < s->n; i++) {
        vec3s d = s->displacements[i];
        carom_aabb* b = &s->boxes[i];
        b->min.x += d.x;
        b->min.y += d.y;
        b->min.z += d.z;
        b->max.x += d.x;
        b->max.y += d.y;
        b->max.z += d.z;
    }
    s->frame++;

    /* The convoy turns as one: by the centre of its members' centres. */
    double sum[3] = {0.0, 0.0, 0.0};
    int members = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->roles[i] != REF_ROLE_CONVOY)
            continue;
        double c[3];
        box_centre(s->boxes[i], c);
        for (int k = 0; k < 3; k++)
            sum[k] += c[k];
        members++;
    }
    if (members > 0) {
        if (renew > 0.0) {
            double u = uniform(&s->rng, 0.0, 1.0);
            if (u < renew) {
                vec3s v = convoy_displacement(&s->rng, &s->desc);
                /* Keep heading the way it was going along x; only the drift
                 * changes. */
                if ((v.x > 0.0f) != (s->convoy.x > 0.0f))
                    v.x = -v.x;
                s->convoy = v;
            }
        }
        for (int k = 0; k < 3; k++)
            sum[k] /= members;
        s->convoy = bounce(s, sum, s->convoy);
    }

    for (int i = 0; i < s->n; i++) {
        int role = s->roles[i];
        if (role == REF_ROLE_STATIC)
            continue;
        if (role == REF_ROLE_CONVOY) {
            s->displacements[i] = s->convoy;
            continue;
        }
        if (renew > 0.0) {
            double u = uniform(&s->rng, 0.0, 1.0);
            if (u < renew)
                s->displacements[i] = role == REF_ROLE_FAST ? fast_displacement(s)
                                                            : slow_displacement(&s->rng, &s->desc);
        }
        double c[3];
        box_centre(s->boxes[i], c);
        s->displacements[i] = bounce(s, c, s->displacements[i]);
    }
}

typedef struct id_slot {
    int id;
    int index;
} id_slot;

static int cmp_slot(const void* pa, const void* pb)
{
    const id_slot* a = pa;
    const id_slot* b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* A uniformly random int from the whole range, without relying on how an
 * out-of-range unsigned converts. */
static int random_int(unsigned long long* rng)
{
    long long v = (long long)(next_bits(rng) >> 32) + INT_MIN;
    return (int)v;
}

int ref_broad_scene_shuffle_ids(ref_broad_scene* scene, unsigned long long seed)
{
    if (!scene)
        return -1;
    int n = scene->n;
    if (n == 0)
        return 0;
    id_slot* slots = malloc((size_t)n * sizeof *slots);
    if (!slots)
        return -1;
    unsigned long long rng = seed;
    static const int special[4] = {INT_MIN, INT_MAX, -1, 0};
    int fixed = n >= 4 ? 4 : 0;
    for (int i = 0; i < n; i++) {
        slots[i].index = i;
        slots[i].id = i < fixed ? special[i] : random_int(&rng);
    }
    /* Redraw repeats until there are none; a repeat of a special value is
     * always redrawn on the random side (index >= fixed). */
    for (;;) {
        qsort(slots, (size_t)n, sizeof *slots, cmp_slot);
        int repeats = 0;
        for (int i = 1; i < n; i++) {
            if (slots[i].id != slots[i - 1].id)
                continue;
            id_slot* redraw = slots[i].index >= fixed ? &slots[i] : &slots[i - 1];
            redraw->id = random_int(&rng);
            repeats++;
        }
        if (repeats == 0)
            break;
    }
    /* Back in index order, then scattered over the proxies. */
    for (int i = 0; i < n; i++)
        scene->ids[slots[i].index] = slots[i].id;
    for (int i = n - 1; i > 0; i--) {
        int j = below(&rng, i + 1);
        int t = scene->ids[i];
        scene->ids[i] = scene->ids[j];
        scene->ids[j] = t;
    }
    free(slots);
    return 0;
}

int ref_broad_scene_reference(const ref_broad_scene* scene, ref_broad_list* out, double band)
{
    if (!scene) {
        if (out)
            memset(out, 0, sizeof *out);
        return -1;
    }
    return ref_broad_reference(out, scene->n, scene->ids, scene->boxes, scene->displacements, band);
}

const char* ref_broad_scene_kind_name(ref_broad_scene_kind kind)
{
    switch (kind) {
    case REF_SCENE_UNIFORM:
        return "uniform";
    case REF_SCENE_CLUSTERED:
        return "clustered";
    case REF_SCENE_MIXED_SIZES:
        return "mixed";
    case REF_SCENE_CONVOY:
        return "convoy";
    case REF_SCENE_FAST_MOVERS:
        return "fast";
    }
    return "?";
}
