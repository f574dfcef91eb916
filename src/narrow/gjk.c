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
#include "narrow/support.h"

// The simplex lives in four fixed slots; `mask` says which are in use. A new
// support point takes a free slot and reducing the simplex clears bits, so
// no vertex is ever copied inside the loop.
typedef struct gjk_simplex {
    vec3s w[4];      // points of the CSO: wa - wb
    vec3s wa[4];     // support points on A's core
    vec3s wb[4];     // support points on B's core (in A's frame)
    int ia[4], ib[4];  // feature indices, -1 where the shape has none
    float bary[4];   // barycentric weight of each slot in the closest point
    unsigned mask;
    int count;
} gjk_simplex;

// The pair as GJK sees it: B's pose relative to A, and support hints.
typedef struct gjk_pair {
    const carom_shape* a;
    const carom_shape* b;
    carom_rot rot_b;  // B's rotation in A's frame
    vec3s pos_b;      // B's origin in A's frame
    int hint_a, hint_b;
    bool check_support;  // a user callback is involved: check its output
} gjk_pair;

static inline float max_f(float a, float b) { return a > b ? a : b; }

// Adds the support point of the core CSO along d to a free slot; returns it.
CAROM_FORCE_INLINE int add_support(gjk_simplex* s, gjk_pair* p, vec3s d) {
    int slot = __builtin_ctz(~s->mask);
    int fa, fb;
    vec3s wa = carom_support_core(p->a, d, p->hint_a, &fa);
    vec3s db = rot_apply_transposed(&p->rot_b, v3_neg(d));
    vec3s wb = v3_add(rot_apply(&p->rot_b, carom_support_core(p->b, db, p->hint_b, &fb)), p->pos_b);
    s->wa[slot] = wa;
    s->wb[slot] = wb;
    s->w[slot] = v3_sub(wa, wb);
    s->ia[slot] = p->hint_a = fa;
    s->ib[slot] = p->hint_b = fb;
    return slot;
}

// The active slots of each mask in ascending order, and their count.
static const struct {
    int count;
    int slot[4];
} k_slots[16] = {
    {0, {0, 0, 0, 0}}, {1, {0, 0, 0, 0}}, {1, {1, 0, 0, 0}}, {2, {0, 1, 0, 0}},
    {1, {2, 0, 0, 0}}, {2, {0, 2, 0, 0}}, {2, {1, 2, 0, 0}}, {3, {0, 1, 2, 0}},
    {1, {3, 0, 0, 0}}, {2, {0, 3, 0, 0}}, {2, {1, 3, 0, 0}}, {3, {0, 1, 3, 0}},
    {2, {2, 3, 0, 0}}, {3, {0, 2, 3, 0}}, {3, {1, 2, 3, 0}}, {4, {0, 1, 2, 3}},
};

// --- closest point of a simplex to the origin ----------------------------------
//
// The closest-point functions take points and return a bit mask over their
// arguments of the vertices that carry the closest point (its Voronoi
// region), with barycentric weights. The region tests are those of Ericson,
// "Real-Time Collision Detection", 5.1.

static int closest_on_segment(vec3s a, vec3s b, float w[2]) {
    vec3s ab = v3_sub(b, a);
    float len2 = v3_len2(ab);
    float t = len2 > 0.0f ? -v3_dot(a, ab) / len2 : 0.0f;
    if (t <= 0.0f) return w[0] = 1.0f, w[1] = 0.0f, 1;
    if (t >= 1.0f) return w[0] = 0.0f, w[1] = 1.0f, 2;
    w[0] = 1.0f - t, w[1] = t;
    return 3;
}

static float weighted_len2(vec3s a, vec3s b, vec3s c, const float w[3]) {
    return v3_len2(v3_add(v3_add(v3_scale(a, w[0]), v3_scale(b, w[1])), v3_scale(c, w[2])));
}

// A degenerate (zero-area) triangle: the best of its edges.
static int closest_on_flat_triangle(vec3s a, vec3s b, vec3s c, float w[3]) {
    vec3s p[3] = {a, b, c};
    static const int edges[3][2] = {{0, 1}, {1, 2}, {0, 2}};
    float best = FLT_MAX;
    int best_mask = 1;
    for (int e = 0; e < 3; ++e) {
        int i = edges[e][0], j = edges[e][1];
        float t[3] = {0.0f, 0.0f, 0.0f}, tw[2];
        int m = closest_on_segment(p[i], p[j], tw);
        t[i] = tw[0], t[j] = tw[1];
        float d2 = weighted_len2(a, b, c, t);
        if (d2 < best) {
            best = d2;
            best_mask = ((m & 1) ? 1 << i : 0) | ((m & 2) ? 1 << j : 0);
            w[0] = t[0], w[1] = t[1], w[2] = t[2];
        }
    }
    return best_mask;
}

static int closest_on_triangle(vec3s a, vec3s b, vec3s c, float w[3]) {
    vec3s ab = v3_sub(b, a), ac = v3_sub(c, a);
    w[0] = w[1] = w[2] = 0.0f;
    float d1 = -v3_dot(ab, a), d2 = -v3_dot(ac, a);
    if (d1 <= 0.0f && d2 <= 0.0f) return w[0] = 1.0f, 1;
    float d3 = -v3_dot(ab, b), d4 = -v3_dot(ac, b);
    if (d3 >= 0.0f && d4 <= d3) return w[1] = 1.0f, 2;
    float vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0f && d1 >= 0.0f && d3 <= 0.0f) {
        float t = d1 / (d1 - d3);
        return w[0] = 1.0f - t, w[1] = t, 3;
    }
    float d5 = -v3_dot(ab, c), d6 = -v3_dot(ac, c);
    if (d6 >= 0.0f && d5 <= d6) return w[2] = 1.0f, 4;
    float vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0f && d2 >= 0.0f && d6 <= 0.0f) {
        float t = d2 / (d2 - d6);
        return w[0] = 1.0f - t, w[2] = t, 5;
    }
    float va = d3 * d6 - d5 * d4;
    if (va <= 0.0f && d4 - d3 >= 0.0f && d5 - d6 >= 0.0f) {
        float t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return w[1] = 1.0f - t, w[2] = t, 6;
    }
    float sum = va + vb + vc;
    // In exact arithmetic sum > 0 here; rounding on a sliver triangle can
    // leave it zero or negative, and then its edges decide.
    if (!(sum > 0.0f)) return closest_on_flat_triangle(a, b, c, w);
    float inv = 1.0f / sum;
    w[0] = va * inv, w[1] = vb * inv, w[2] = vc * inv;
    return 7;
}

// Keeps slots[i] for each bit i of `region`, with weight w[i].
static void simplex_keep(gjk_simplex* s, const int* slots, int region, const float* w) {
    unsigned mask = 0;
    for (int i = 0; i < 3; ++i) {
        if (region & (1 << i)) {
            mask |= 1u << slots[i];
            s->bary[slots[i]] = w[i];
        }
    }
    s->mask = mask;
    s->count = k_slots[mask].count;
}

static float triple(vec3s a, vec3s b, vec3s c) { return v3_dot(a, v3_cross(b, c)); }

static void solve_tetrahedron(gjk_simplex* s) {
    // Faces as positions in the slot list; the fourth entry is the opposite vertex.
    static const int faces[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
    const vec3s* p = s->w;  // a full simplex occupies slots 0..3 in order
    float best_d2 = FLT_MAX, best_w[3] = {0.0f, 0.0f, 0.0f};
    int best_face = -1, best_region = 0;
    for (int f = 0; f < 4; ++f) {
        vec3s p0 = p[faces[f][0]], p1 = p[faces[f][1]], p2 = p[faces[f][2]];
        vec3s n = v3_cross(v3_sub(p1, p0), v3_sub(p2, p0));
        float side_origin = -v3_dot(n, p0);
        float side_opposite = v3_dot(n, v3_sub(p[faces[f][3]], p0));
        // Outside when the origin and the opposite vertex lie on different
        // sides; a flat tetrahedron (side_opposite == 0) tests every face.
        if (side_origin * side_opposite > 0.0f) continue;
        float w[3];
        int region = closest_on_triangle(p0, p1, p2, w);
        float d2 = weighted_len2(p0, p1, p2, w);
        if (d2 < best_d2) {
            best_d2 = d2, best_face = f, best_region = region;
            best_w[0] = w[0], best_w[1] = w[1], best_w[2] = w[2];
        }
    }
    if (best_face >= 0) {
        simplex_keep(s, faces[best_face], best_region, best_w);
        return;
    }
    // The origin is inside: weights are the sub-volumes over the volume.
    vec3s a = p[0], b = p[1], c = p[2], d = p[3];
    float inv = 1.0f / triple(v3_sub(b, a), v3_sub(c, a), v3_sub(d, a));
    s->bary[1] = triple(v3_neg(a), v3_sub(c, a), v3_sub(d, a)) * inv;
    s->bary[2] = triple(v3_sub(b, a), v3_neg(a), v3_sub(d, a)) * inv;
    s->bary[3] = triple(v3_sub(b, a), v3_sub(c, a), v3_neg(a)) * inv;
    s->bary[0] = 1.0f - s->bary[1] - s->bary[2] - s->bary[3];
}

static vec3s simplex_point(const gjk_simplex* s) {
    vec3s p = v3(0.0f, 0.0f, 0.0f);
    for (int i = 0; i < 4; ++i) {
        if (s->mask & (1u << i)) p = v3_mad(p, s->w[i], s->bary[i]);
    }
    return p;
}

// Reduces the simplex to the vertices carrying its point closest to the
// origin and returns that point (zero when the origin is inside).
//
// The point is not taken from the barycentric weights: next to large faces
// that loses its direction to rounding (a 100-unit face 1e-3 away gives a
// normal off by 1e-2). Projecting onto the edge's or face's own normal keeps
// the direction accurate to float precision whatever the size.
static vec3s simplex_solve(gjk_simplex* s) {
    const int* slots = k_slots[s->mask].slot;
    float w[3];
    switch (s->count) {
        case 1: s->bary[slots[0]] = 1.0f; break;
        case 2: simplex_keep(s, slots, closest_on_segment(s->w[slots[0]], s->w[slots[1]], w), w); break;
        case 3: simplex_keep(s, slots, closest_on_triangle(s->w[slots[0]], s->w[slots[1]], s->w[slots[2]], w), w); break;
        default: solve_tetrahedron(s); break;
    }
    slots = k_slots[s->mask].slot;
    vec3s a = s->w[slots[0]];
    switch (s->count) {
        case 1: return a;
        case 2: {
            // a - ab (ab.a)/|ab|^2, written as ab x (a x ab) / |ab|^2.
            vec3s ab = v3_sub(s->w[slots[1]], a);
            float len2 = v3_len2(ab);
            return len2 > 0.0f ? v3_scale(v3_cross(ab, v3_cross(a, ab)), 1.0f / len2) : a;
        }
        case 3: {
            vec3s nrm = v3_cross(v3_sub(s->w[slots[1]], a), v3_sub(s->w[slots[2]], a));
            float len2 = v3_len2(nrm);
            return len2 > 0.0f ? v3_scale(nrm, v3_dot(nrm, a) / len2) : simplex_point(s);
        }
        default: return v3(0.0f, 0.0f, 0.0f);
    }
}

static bool simplex_has_point(const gjk_simplex* s, int slot) {
    vec3s q = s->w[slot];
    for (int i = 0; i < 4; ++i) {
        if (i == slot || !(s->mask & (1u << i))) continue;
        if (s->w[i].x == q.x && s->w[i].y == q.y && s->w[i].z == q.z) return true;
    }
    return false;
}

// --- query set-up and the per-pair cache ----------------------------------------

static bool pair_setup(gjk_pair* pair, carom_rot* rot_a, const carom_shape* a, carom_xform xf_a,
                       const carom_shape* b, carom_xform xf_b, const carom_gjk_cache* cache) {
    int check_a = carom_shape_check(a), check_b = carom_shape_check(b);
    if (!check_a || !check_b || !carom_xform_is_valid(xf_a) || !carom_xform_is_valid(xf_b)) return false;
    // B's rotation relative to A is conj(q_a) q_b; the matrix normalises it.
    *rot_a = carom_rot_from_quat(xf_a.q);
    pair->rot_b = carom_rot_from_quat(glms_quat_mul(glms_quat_conjugate(xf_a.q), xf_b.q));
    pair->pos_b = rot_apply_transposed(rot_a, v3_sub(xf_b.p, xf_a.p));
    pair->a = a;
    pair->b = b;
    pair->hint_a = cache && cache->valid ? cache->hint_a : -1;
    pair->hint_b = cache && cache->valid ? cache->hint_b : -1;
    pair->check_support = check_a == 2 || check_b == 2;
    return true;
}

// The first search direction: the cached axis when there is a usable one,
// otherwise from B's origin towards A's.
static vec3s initial_axis(const gjk_pair* pair, const carom_gjk_cache* cache) {
    if (cache && cache->valid && carom_vec3_is_valid(cache->axis) && v3_len2(cache->axis) > 0.0f) {
        return cache->axis;
    }
    vec3s axis = v3_neg(pair->pos_b);
    return v3_len2(axis) > 0.0f ? axis : v3(1.0f, 0.0f, 0.0f);
}

// Rebuilds the cached simplex at the current poses from its vertex indices:
// each vertex of A minus each vertex of B is a point of the CSO, so the
// rebuilt simplex is a valid start without a single support search.
static bool simplex_from_cache(const gjk_pair* pair, const carom_gjk_cache* cache, gjk_simplex* s) {
    if (!cache || !cache->valid || cache->count < 1 || cache->count > 4) return false;
    for (int i = 0; i < cache->count; ++i) {
        vec3s b;
        s->ia[i] = cache->index_a[i];
        s->ib[i] = cache->index_b[i];
        if (!carom_core_vertex(pair->a, s->ia[i], &s->wa[i]) || !carom_core_vertex(pair->b, s->ib[i], &b)) {
            return false;
        }
        s->wb[i] = v3_add(rot_apply(&pair->rot_b, b), pair->pos_b);
        s->w[i] = v3_sub(s->wa[i], s->wb[i]);
    }
    s->count = cache->count;
    s->mask = (1u << cache->count) - 1u;
    return true;
}

static void cache_store(carom_gjk_cache* cache, vec3s axis, const gjk_pair* pair, const gjk_simplex* s) {
    if (!cache) return;
    if (v3_len2(axis) > 0.0f) cache->axis = axis;
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
    cache->valid = 1;
}

static float simplex_scale2(const gjk_simplex* s) {
    float m = 0.0f;
    for (int i = 0; i < 4; ++i) {
        if (s->mask & (1u << i)) m = max_f(m, v3_len2(s->w[i]));
    }
    return m;
}

// --- the core loop ---------------------------------------------------------------------

// Result of the core loop, before radii and frames.
typedef struct gjk_outcome {
    vec3s v;          // closest point of the core CSO found, or the last axis
    float scale2;     // largest |w|^2 seen: the size tolerances are relative to
    int iterations;
    bool cores_touch; // cores overlap or are within stop_radius + touch tolerance
    bool separated;   // (stop_on_axis) a separating axis was proven
    bool hit_cap;
    bool invalid;     // a support returned a non-finite point
} gjk_outcome;

// Runs GJK on the cores until one of: the cores are proven within
// `stop_radius` (plus the touch tolerance) of each other; with
// `stop_on_axis`, a plane is found separating them by more than stop_radius
// (the boolean query); otherwise the distance is known to the relative
// tolerance.
static gjk_outcome gjk_cores(gjk_pair* pair, const carom_gjk_cache* cache, gjk_simplex* s, float stop_radius,
                             bool stop_on_axis) {
    gjk_outcome out = {v3(0.0f, 0.0f, 0.0f), 0.0f, 0, false, false, false, false};
    vec3s v;
    float vv;
    if (simplex_from_cache(pair, cache, s)) {
        v = simplex_solve(s);
        vv = v3_len2(v);
        out.scale2 = simplex_scale2(s);
        float touch = stop_radius + CAROM_GJK_TOUCH_TOLERANCE * sqrtf(out.scale2);
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
    for (;;) {
        if (out.iterations == CAROM_GJK_MAX_ITERATIONS) {
            out.hit_cap = true;
            break;
        }
        int slot = add_support(s, pair, v3_neg(v));
        out.iterations++;
        vec3s w = s->w[slot];
        if (pair->check_support && (!carom_vec3_is_valid(s->wa[slot]) || !carom_vec3_is_valid(s->wb[slot]))) {
            out.invalid = true;
            break;
        }
        out.scale2 = max_f(out.scale2, v3_len2(w));
        float vw = v3_dot(v, w);
        if (stop_on_axis && vw > 0.0f && vw * vw > stop_radius * stop_radius * v3_len2(v)) {
            // The plane through w normal to v separates the origin from the
            // core CSO by vw/|v|, more than the radii: apart.
            out.separated = true;
            break;
        }
        if (s->count > 0) {
            // vw/|v| is a lower bound on the distance and |v| an upper one;
            // stop when the gap is within the tolerance, relative to |v| and
            // to float rounding of v.w at the scale of the shapes.
            float gap = vv - vw - CAROM_GJK_RELATIVE_TOLERANCE * vv;
            float rounding = 8.0f * FLT_EPSILON;
            if (gap <= 0.0f || gap * gap <= rounding * rounding * vv * out.scale2) break;
            if (simplex_has_point(s, slot)) break;  // no new support: converged
        }
        s->mask |= 1u << slot;
        s->count++;
        vec3s v_new = simplex_solve(s);
        float vv_new = v3_len2(v_new);
        float touch = stop_radius + CAROM_GJK_TOUCH_TOLERANCE * sqrtf(out.scale2);
        if (s->count == 4 || vv_new <= touch * touch) {
            v = v_new;
            out.cores_touch = true;
            break;
        }
        v = v_new;
        // Rounding stopped the descent: this simplex is as close as the last
        // to float precision, and no closer one will follow.
        if (vv_new >= vv) break;
        vv = vv_new;
    }
    out.v = v;
    return out;
}

static void closest_points(const gjk_simplex* s, vec3s* pa, vec3s* pb) {
    *pa = *pb = v3(0.0f, 0.0f, 0.0f);
    for (int i = 0; i < 4; ++i) {
        if (!(s->mask & (1u << i))) continue;
        *pa = v3_mad(*pa, s->wa[i], s->bary[i]);
        *pb = v3_mad(*pb, s->wb[i], s->bary[i]);
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

carom_distance_result carom_gjk_distance(const carom_shape* a, carom_xform xf_a, const carom_shape* b,
                                         carom_xform xf_b, carom_gjk_cache* cache) {
    carom_distance_result r;
    memset(&r, 0, sizeof r);
    gjk_pair pair;
    carom_rot rot_a;
    if (!pair_setup(&pair, &rot_a, a, xf_a, b, xf_b, cache)) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    float radius = a->radius + b->radius;
    gjk_simplex s;
    gjk_outcome g = gjk_cores(&pair, cache, &s, radius, false);
    if (g.invalid) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    r.iterations = g.iterations;
    r.state = g.hit_cap ? CAROM_MAX_ITERATIONS : CAROM_DONE;
    cache_store(cache, g.v, &pair, &s);

    vec3s pa, pb;
    closest_points(&s, &pa, &pb);
    r.witness_a = witness_of(&s, s.ia);
    r.witness_b = witness_of(&s, s.ib);
    float core_distance = sqrtf(v3_len2(g.v));
    float touch = CAROM_GJK_TOUCH_TOLERANCE * sqrtf(g.scale2);
    if (g.cores_touch || core_distance - radius <= touch) {
        // Overlapping: one point inside both (the cores' common point, or the
        // midpoint between core witnesses when only the radii overlap).
        r.overlap = true;
        pa = pb = v3_scale(v3_add(pa, pb), 0.5f);
    } else {
        // v = pa - pb, so A-to-B is -v.
        vec3s n = v3_scale(g.v, -1.0f / core_distance);
        pa = v3_mad(pa, n, a->radius);
        pb = v3_mad(pb, n, -b->radius);
        r.distance = core_distance - radius;
        r.normal = rot_apply(&rot_a, n);
    }
    r.point_a = v3_add(rot_apply(&rot_a, pa), xf_a.p);
    r.point_b = v3_add(rot_apply(&rot_a, pb), xf_a.p);
    return r;
}

carom_intersect_result carom_gjk_intersect(const carom_shape* a, carom_xform xf_a, const carom_shape* b,
                                           carom_xform xf_b, carom_gjk_cache* cache) {
    carom_intersect_result r = {false, 0, CAROM_DONE};
    gjk_pair pair;
    carom_rot rot_a;
    if (!pair_setup(&pair, &rot_a, a, xf_a, b, xf_b, cache)) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    float radius = a->radius + b->radius;
    gjk_simplex s;
    gjk_outcome g = gjk_cores(&pair, cache, &s, radius, true);
    if (g.invalid) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    r.iterations = g.iterations;
    // Converging without a proof either way (rounding can hide the plane
    // when faces are large next to the gap) decides by the distance
    // estimate, as carom_gjk_distance does; hitting the cap unproven is
    // reported as overlap, the conservative answer.
    float touch = CAROM_GJK_TOUCH_TOLERANCE * sqrtf(g.scale2);
    bool near = sqrtf(v3_len2(g.v)) - radius <= touch;
    r.overlap = !g.separated && (g.cores_touch || g.hit_cap || near);
    r.state = g.hit_cap ? CAROM_MAX_ITERATIONS : CAROM_DONE;
    cache_store(cache, g.v, &pair, &s);
    return r;
}
