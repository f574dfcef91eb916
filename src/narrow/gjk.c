// GJK distance and boolean intersection (Gilbert, Johnson, Keerthi 1988, in
// the form of van den Bergen's "Collision Detection in Interactive 3D
// Environments"): a sequence of simplices inside the configuration space
// obstacle A - B, each closer to the origin, built from support points.
//
// Everything runs in A's local frame, so A's support needs no transform and
// B's needs one rotation per call. Shapes are cores plus radii: the loop sees
// only the cores, and the radii are applied to the final answer.
#include <float.h>
#include <string.h>

#include "carom/narrow.h"
#include "narrow/simplex.h"  // the simplex, its solver and the pair in A's frame, shared with the casts

// --- query set-up and the per-pair cache ----------------------------------------

// Validates the inputs and puts B in A's frame.
static bool pair_setup(gjk_pair* pair, const carom_shape* a, carom_xform xf_a, const carom_shape* b,
                       carom_xform xf_b, const carom_gjk_cache* cache) {
    if (!carom_shape_is_valid(a) || !carom_shape_is_valid(b) || !carom_xform_is_valid(xf_a) ||
        !carom_xform_is_valid(xf_b)) {
        return false;
    }
    relative_pose(pair, xf_a, xf_b);
    pair->a = a;
    pair->b = b;
    pair->hint_a = cache && cache->valid ? cache->hint_a : -1;
    pair->hint_b = cache && cache->valid ? cache->hint_b : -1;
    float extent_a = carom_shape_extent(a), extent_b = carom_shape_extent(b);
    pair->scale = extent_a > 0.0f && extent_b > 0.0f ? extent_a + extent_b + sqrtf(f4_len2(pair->pos_b)) : 0.0f;
    return true;
}

// The first search direction: the cached axis when there is a usable one,
// otherwise from B's origin towards A's.
static f4 initial_axis(const gjk_pair* pair, const carom_gjk_cache* cache) {
    // Unit length: a cached axis with a denormal squared length (garbage, or
    // an axis from touching shapes) would round |v| down and inflate the
    // lower bound v.w / |v| into a false proof of separation.
    if (cache && cache->valid && carom_vec3_is_valid(cache->axis)) {
        f4 axis = f4_from(cache->axis);
        float len2 = f4_len2(axis);
        if (len2 >= FLT_MIN) return axis * (1.0f / sqrtf(len2));
    }
    float len2 = f4_len2(pair->pos_b);
    return len2 >= FLT_MIN ? -pair->pos_b : f4_make(1.0f, 0.0f, 0.0f);
}

// Rebuilds the cached simplex at the current poses from its vertex indices:
// each vertex of A minus each vertex of B is a point of the CSO, so the
// rebuilt simplex is a valid start without a single support search.
static bool simplex_from_cache(const gjk_pair* pair, const carom_gjk_cache* cache, gjk_simplex* s) {
    if (!cache || !cache->valid || cache->count < 1 || cache->count > 4) return false;
    int n = 0;
    for (int i = 0; i < cache->count; ++i) {
        vec3s va, vb;
        if (!carom_core_vertex(pair->a, cache->index_a[i], &va) || !carom_core_vertex(pair->b, cache->index_b[i], &vb)) {
            return false;
        }
        s->ia[n] = cache->index_a[i];
        s->ib[n] = cache->index_b[i];
        s->wa[n] = f4_from(va);
        s->wb[n] = f4_rot_apply(&pair->rot_b, f4_from(vb)) + pair->pos_b;
        s->w[n] = s->wa[n] - s->wb[n];
        // A cache holding the same point twice (garbage, or a degenerate
        // shape) would give the solver a zero-length edge: keep one.
        bool repeated = false;
        for (int j = 0; j < n; ++j) repeated |= f4_equal3(s->w[j], s->w[n]);
        if (!repeated) n++;
    }
    s->count = n;
    s->mask = (1u << n) - 1u;
    return true;
}

// carom_gjk_cache.valid: written by a query that ended apart by a separating
// axis, or otherwise.
#define CACHE_SEPARATED 2
#define CACHE_WRITTEN 1

static void cache_store(carom_gjk_cache* cache, f4 axis, const gjk_pair* pair, const gjk_simplex* s, bool separated) {
    if (!cache) return;
    if (f4_len2(axis) > 0.0f) cache->axis = f4_to(axis);
    cache->hint_a = pair->hint_a;
    cache->hint_b = pair->hint_b;
    int n = 0;
    bool indexed = true;
    for (int i = 0; i < 4; ++i) {
        if (!(s->mask & (1u << i))) continue;
        cache->index_a[n] = s->ia[i];
        cache->index_b[n] = s->ib[i];
        indexed &= s->ia[i] >= 0 && s->ib[i] >= 0;
        n++;
    }
    cache->count = indexed ? n : 0;
    cache->valid = separated ? CACHE_SEPARATED : CACHE_WRITTEN;
}

static float simplex_scale2(const gjk_simplex* s) {
    float m = 0.0f;
    for (int i = 0; i < 4; ++i) {
        if (s->mask & (1u << i)) m = max_f(m, f4_len2(s->w[i]));
    }
    return m;
}

// --- the core loop ---------------------------------------------------------------------

// Replaces the simplex by one vertex: its closest point, as the pair of
// points on A and B that make it. No vertex indices go with it (-1).
static void collapse_to_point(gjk_simplex* s) {
    f4 pa = f4_zero(), pb = f4_zero();
    for (int i = 0; i < 4; ++i) {
        if (!(s->mask & (1u << i))) continue;
        pa += s->wa[i] * s->bary[i];
        pb += s->wb[i] * s->bary[i];
    }
    s->wa[0] = pa;
    s->wb[0] = pb;
    s->w[0] = pa - pb;
    s->ia[0] = s->ib[0] = -1;
    s->bary[0] = 1.0f;
    s->mask = 1u;
    s->count = 1;
}

// Result of the core loop, before radii and frames.
typedef struct gjk_outcome {
    f4 v;             // closest point of the core CSO found, or the last axis
    float scale;      // the pair's scale (or the largest |w| seen): tolerances are relative to it
    int iterations;
    bool cores_touch; // cores overlap or are within stop_radius + touch tolerance
    bool separated;   // (stop_on_axis) a separating axis was proven
    bool unfinished;  // hit the iteration cap
    bool at_floor;    // stopped by float's floor before the bounds met
    float lower;      // best lower bound on the core distance seen
    bool invalid;     // a support returned a non-finite point
} gjk_outcome;

// Runs GJK on the cores until one of: the cores are proven within
// `stop_radius` (plus the touch tolerance) of each other; with
// `stop_on_axis`, a plane is found separating them by more than that (the
// boolean query); otherwise the distance is known to the relative tolerance.
//
// Nothing here squares a squared length: products of four coordinates
// overflow float from ~1e9 (the solver rescales for its own products).
static gjk_outcome gjk_cores(gjk_pair* pair, const carom_gjk_cache* cache, gjk_simplex* s, float stop_radius,
                             bool stop_on_axis) {
    const float tol = CAROM_GJK_TOUCH_TOLERANCE;
    gjk_outcome out = {.v = f4_zero(), .scale = pair->scale, .lower = -FLT_MAX};
    f4 v;
    float vv;
    // A boolean query whose last answer was a separating axis tries that axis
    // first: on coherent motion it usually separates again with one support
    // call, cheaper than rebuilding the simplex. Otherwise the rebuilt
    // simplex may already enclose the origin (no support call at all).
    bool axis_first = stop_on_axis && cache && cache->valid == CACHE_SEPARATED;
    if (!axis_first && simplex_from_cache(pair, cache, s)) {
        v = simplex_solve(s);
        vv = f4_len2(v);
        if (pair->scale == 0.0f) out.scale = sqrtf(simplex_scale2(s));
        float touch = stop_radius + tol * out.scale;
        if (s->count == 4 || vv <= touch * touch) {
            out.v = v;
            out.cores_touch = true;
            return out;
        }
    } else {
        s->mask = 0;
        s->count = 0;
        v = initial_axis(pair, cache);
        vv = FLT_MAX;  // v is a direction, not yet a point of the CSO
    }
    bool collapsed = false, restarted = false;
    gjk_simplex before_restart;  // written when restarting, read only after
    f4 v_before_restart = v;
    float vv_before_restart = FLT_MAX;
    for (;;) {
        if (out.iterations == CAROM_GJK_MAX_ITERATIONS) {
            // Curved cores in near contact can creep towards each other for
            // the whole budget without ever stalling outright: judge the
            // result by the float-floor rule too.
            out.unfinished = true;
            out.at_floor = true;
            break;
        }
        int slot = add_support(s, pair, -v);
        out.iterations++;
        f4 w = s->w[slot];
        float w2 = f4_len2(w);
        if (!(w2 <= FLT_MAX)) {  // NaN or overflow: a callback or an affine chain ran wild
            out.invalid = true;
            break;
        }
        if (pair->scale == 0.0f && w2 > out.scale * out.scale) out.scale = sqrtf(w2);
        float vw = f4_dot(v, w), v_len = sqrtf(f4_len2(v));
        if (v_len > 0.0f) out.lower = max_f(out.lower, vw / v_len);
        // The plane through w normal to v separates the origin from the core
        // CSO by vw/|v|: apart when that beats the radii, the touch tolerance
        // and the rounding of v.w. Closer calls run on to convergence and
        // are decided as the distance query decides them, so the two agree.
        if (stop_on_axis && vw > (stop_radius + (tol + 8.0f * FLT_EPSILON) * out.scale) * v_len) {
            out.separated = true;
            break;
        }
        bool repeated = false;
        if (s->count > 0) {
            // vw/|v| is a lower bound on the distance and |v| an upper one;
            // stop when the gap is within the tolerance, relative to |v| and
            // to float rounding of v.w at the scale of the shapes.
            float gap = vv - vw - CAROM_GJK_RELATIVE_TOLERANCE * vv;
            if (gap <= 8.0f * FLT_EPSILON * v_len * out.scale) break;
            repeated = simplex_has_point(s, slot);
        }
        if (!repeated) {
            gjk_simplex_saved saved;
            f4 v_new = simplex_push(s, slot, &saved);
            float vv_new = f4_len2(v_new);
            float touch = stop_radius + tol * out.scale;
            if (s->count == 4 || vv_new <= touch * touch) {
                v = v_new;
                out.cores_touch = true;
                break;
            }
            if (vv_new < vv) {
                v = v_new;
                vv = vv_new;
                collapsed = false;
                continue;
            }
            simplex_restore(s, &saved);
        }
        // No progress although the bounds are still apart: rounding in this
        // simplex (a sliver, or one rebuilt from a cache) hides the descent,
        // or gives back a support point it already holds (a needle hull
        // against a point stopped 4e-4 of the scale high, 8,000 times the
        // true distance). Keep the old simplex. First remedy: keep only its
        // closest point, as a single vertex (pa and pb are convex
        // combinations of support points, so pa - pb is a point of the
        // CSO); the next support makes a well-conditioned segment with it.
        // Curved cores in near contact otherwise stopped 1.5e-5 short of
        // touching. Second remedy, once: start afresh from the current
        // direction (a long thin simplex from a cache stopped 8e-4 high).
        // The closer answer stands.
        if (!collapsed) {
            collapse_to_point(s);
            collapsed = true;
            continue;
        }
        if (!restarted) {
            restarted = true;
            before_restart = *s;
            v_before_restart = v;
            vv_before_restart = vv;
            s->mask = 0;
            s->count = 0;
            vv = FLT_MAX;
            collapsed = false;
            continue;
        }
        // Remedies spent. A repeated support with the bounds apart is no
        // sign of float's floor on curved cores: the answer stands as it is.
        out.at_floor = !repeated;
        break;
    }
    // After a restart the closer of the two answers stands, whichever way
    // the loop ended (a restart on the last iteration leaves no simplex).
    if (restarted && !out.cores_touch && !out.separated &&
        (s->count == 0 || vv_before_restart < f4_len2(v))) {
        *s = before_restart;
        v = v_before_restart;
    }
    out.v = v;
    return out;
}

static void closest_points(const gjk_simplex* s, f4* pa, f4* pb) {
    *pa = *pb = f4_zero();
    for (int i = 0; i < 4; ++i) {
        if (!(s->mask & (1u << i))) continue;
        *pa += s->wa[i] * s->bary[i];
        *pb += s->wb[i] * s->bary[i];
    }
}

static carom_witness witness_of(const gjk_simplex* s, const int* features) {
    carom_witness w = {0, {-1, -1, -1}};
    for (int i = 0; i < 4 && w.count < 3; ++i) {
        if (!(s->mask & (1u << i))) continue;
        int f = features[i];
        bool seen = false;
        for (int j = 0; j < w.count; ++j) seen |= (w.index[j] == f);
        if (!seen || f < 0) w.index[w.count++] = f;
    }
    return w;
}

// --- the queries ------------------------------------------------------------------------

// Validates the inputs, runs the core loop and writes the cache. The
// simplex and outcome are meaningful unless CAROM_INVALID_INPUT is returned.
static carom_query_state run_gjk(const carom_shape* a, carom_xform xf_a, const carom_shape* b, carom_xform xf_b,
                                 carom_gjk_cache* cache, bool stop_on_axis, gjk_simplex* s, gjk_outcome* g) {
    gjk_pair pair;
    if (!pair_setup(&pair, a, xf_a, b, xf_b, cache)) return CAROM_INVALID_INPUT;
    *g = gjk_cores(&pair, cache, s, a->radius + b->radius, stop_on_axis);
    if (g->invalid) return CAROM_INVALID_INPUT;
    cache_store(cache, g->v, &pair, s, g->separated);
    return g->unfinished ? CAROM_MAX_ITERATIONS : CAROM_DONE;
}

// Shapes whose cores are within the radii plus the touch tolerance overlap.
// Both queries decide by this, so they agree. When float's floor stopped GJK
// with the bounds still apart (curved cores in near contact: the upper bound
// |v| tiny, the lower bound not proving separation), the pair counts as
// touching if it is within CAROM_GJK_FLOOR_TOLERANCE of the scale.
static bool outcome_overlaps(const gjk_outcome* g, float radius) {
    float gap = sqrtf(f4_len2(g->v)) - radius;
    if (g->cores_touch || gap <= CAROM_GJK_TOUCH_TOLERANCE * g->scale) return true;
    return g->at_floor && gap <= CAROM_GJK_FLOOR_TOLERANCE * g->scale &&
           g->lower - radius <= CAROM_GJK_TOUCH_TOLERANCE * g->scale;
}

carom_distance_result carom_gjk_distance(const carom_shape* a, carom_xform xf_a, const carom_shape* b,
                                         carom_xform xf_b, carom_gjk_cache* cache) {
    carom_distance_result r;
    memset(&r, 0, sizeof r);
    gjk_simplex s;
    gjk_outcome g;
    r.state = run_gjk(a, xf_a, b, xf_b, cache, false, &s, &g);
    if (r.state == CAROM_INVALID_INPUT) return r;
    r.iterations = g.iterations;
    r.witness_a = witness_of(&s, s.ia);
    r.witness_b = witness_of(&s, s.ib);
    f4 pa, pb;
    closest_points(&s, &pa, &pb);
    carom_rot rot_a = carom_rot_from_quat(xf_a.q);
    if (outcome_overlaps(&g, a->radius + b->radius)) {
        r.overlap = true;
        float d = sqrtf(f4_len2(g.v));
        // Not g.cores_touch: that also holds for cores merely within the
        // radii of each other, whose midpoint can lie outside the shape
        // with the smaller radius (a point 0.5 inside a unit sphere).
        if (!(d > 0.0f)) {
            pa = pb = (pa + pb) * 0.5f;  // the cores' common point
        } else {
            // Only the radii overlap: the middle of the stretch of the
            // segment from pa to pb that is within r_a of pa and r_b of pb.
            float lo = fmaxf(-a->radius, d - b->radius), hi = fminf(a->radius, d + b->radius);
            pa = pb = pa - g.v * (0.5f * (lo + hi) / d);
        }
    } else {
        // v = pa - pb, so A-to-B is -v.
        float core_distance = sqrtf(f4_len2(g.v));
        f4 n = g.v * (-1.0f / core_distance);
        pa += n * a->radius;
        pb -= n * b->radius;
        r.distance = core_distance - (a->radius + b->radius);
        r.normal = rot_apply(&rot_a, f4_to(n));
    }
    r.point_a = v3_add(rot_apply(&rot_a, f4_to(pa)), xf_a.p);
    r.point_b = v3_add(rot_apply(&rot_a, f4_to(pb)), xf_a.p);
    return r;
}

carom_intersect_result carom_gjk_intersect(const carom_shape* a, carom_xform xf_a, const carom_shape* b,
                                           carom_xform xf_b, carom_gjk_cache* cache) {
    carom_intersect_result r = {false, 0, CAROM_DONE};
    gjk_simplex s;
    gjk_outcome g;
    r.state = run_gjk(a, xf_a, b, xf_b, cache, true, &s, &g);
    if (r.state == CAROM_INVALID_INPUT) return r;
    r.iterations = g.iterations;
    // Without a separating plane the distance estimate decides (rounding can
    // hide the plane when faces are large next to the gap); hitting the cap
    // unproven is reported as overlap, the conservative answer.
    r.overlap = !g.separated && (g.unfinished || outcome_overlaps(&g, a->radius + b->radius));
    return r;
}
