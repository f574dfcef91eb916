// The GJK simplex machinery shared by GJK distance/intersection (gjk.c) and
// the GJK ray and shape casts (gjk_cast.c): the four-slot simplex, the pair
// in A's frame with its four-lane support, the closest-point sub-algorithm
// (signed volumes, rescaled) and the relative pose. Every function is used
// by both files.
//
// The functions stay plain `static`, not `static inline`: gjk.c compiles to
// the same code as when they were its own (an `inline` hint would change
// GCC's inlining choices in GJK's loop).
#ifndef CAROM_NARROW_SIMPLEX_H
#define CAROM_NARROW_SIMPLEX_H

#include <float.h>

#include "narrow/support.h"

// The simplex lives in four fixed slots; `mask` says which are in use. A new
// support point takes a free slot and reducing the simplex clears bits, so
// no vertex is ever copied inside the loop.
typedef struct gjk_simplex {
    f4 w[4];         // points of the CSO: wa - wb
    f4 wa[4];        // support points on A's core
    f4 wb[4];        // support points on B's core (in A's frame)
    int ia[4], ib[4];  // feature indices, -1 where the shape has none
    float bary[4];   // barycentric weight of each slot in the closest point
    unsigned mask;
    int count;
} gjk_simplex;

// The pair as GJK sees it: B's pose relative to A, and support hints.
typedef struct gjk_pair {
    const carom_shape* a;
    const carom_shape* b;
    f4_rot rot_b;     // B's rotation in A's frame
    f4 pos_b;         // B's origin in A's frame
    int hint_a, hint_b;
    // |w| is at most this for every CSO point, so tolerances relative to it
    // do not depend on the path GJK took (0: unknown, use the largest |w|
    // seen). Both queries must agree on touching pairs.
    float scale;
} gjk_pair;

static inline float max_f(float a, float b) { return a > b ? a : b; }

// Adds the support point of the core CSO along d to a free slot; returns it.
CAROM_FORCE_INLINE int add_support(gjk_simplex* s, gjk_pair* p, f4 d) {
    int slot = __builtin_ctz(~s->mask);
    int fa, fb;
    f4 wa = carom_support_core4(p->a, d, p->hint_a, &fa);
    f4 db = f4_rot_apply_transposed(&p->rot_b, -d);
    f4 wb = f4_rot_apply(&p->rot_b, carom_support_core4(p->b, db, p->hint_b, &fb)) + p->pos_b;
    s->wa[slot] = wa;
    s->wb[slot] = wb;
    s->w[slot] = wa - wb;
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
// "Real-Time Collision Detection", 5.1, with every division guarded: repeated
// points (a stale cache, a degenerate triangle shape) make zero denominators.

static inline float ratio_or_zero(float num, float den) { return den > 0.0f ? num / den : 0.0f; }

static int closest_on_segment(f4 a, f4 b, float w[2]) {
    f4 ab = b - a;
    float t = ratio_or_zero(-f4_dot(a, ab), f4_len2(ab));
    if (t <= 0.0f) return w[0] = 1.0f, w[1] = 0.0f, 1;
    if (t >= 1.0f) return w[0] = 0.0f, w[1] = 1.0f, 2;
    w[0] = 1.0f - t, w[1] = t;
    return 3;
}

static float weighted_len2(f4 a, f4 b, f4 c, const float w[3]) { return f4_len2(a * w[0] + b * w[1] + c * w[2]); }

// A degenerate (zero-area) triangle: the best of its edges.
static int closest_on_flat_triangle(f4 a, f4 b, f4 c, float w[3]) {
    f4 p[3] = {a, b, c};
    static const int edges[3][2] = {{0, 1}, {1, 2}, {0, 2}};
    float best = FLT_MAX;
    int best_mask = 1;
    w[0] = 1.0f, w[1] = w[2] = 0.0f;
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

// In double: on a sliver (a long cone's side: an apex 270 away, two rim
// points 1 apart) the products of dot products below round in float to more
// than the differences they are taken for.
static int closest_on_triangle(f4 fa, f4 fb, f4 fc, float w[3]) {
    double a[3], ab[3], ac[3], b[3], c[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = fa[k], b[k] = fb[k], c[k] = fc[k];
        ab[k] = b[k] - a[k], ac[k] = c[k] - a[k];
    }
    w[0] = w[1] = w[2] = 0.0f;
    double d1 = -carom_dot_double(ab, a), d2 = -carom_dot_double(ac, a);
    if (d1 <= 0.0 && d2 <= 0.0) return w[0] = 1.0f, 1;
    double d3 = -carom_dot_double(ab, b), d4 = -carom_dot_double(ac, b);
    if (d3 >= 0.0 && d4 <= d3) return w[1] = 1.0f, 2;
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        double t = d1 - d3 > 0.0 ? d1 / (d1 - d3) : 0.0;
        return w[0] = (float)(1.0 - t), w[1] = (float)t, 3;
    }
    double d5 = -carom_dot_double(ab, c), d6 = -carom_dot_double(ac, c);
    if (d6 >= 0.0 && d5 <= d6) return w[2] = 1.0f, 4;
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        double t = d2 - d6 > 0.0 ? d2 / (d2 - d6) : 0.0;
        return w[0] = (float)(1.0 - t), w[2] = (float)t, 5;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        double t = (d4 - d3) + (d5 - d6) > 0.0 ? (d4 - d3) / ((d4 - d3) + (d5 - d6)) : 0.0;
        return w[1] = (float)(1.0 - t), w[2] = (float)t, 6;
    }
    double sum = va + vb + vc;
    // In exact arithmetic sum > 0 here; rounding on a sliver triangle can
    // leave it zero or negative, and then its edges decide.
    if (!(sum > 0.0)) return closest_on_flat_triangle(fa, fb, fc, w);
    // Rounding can leave one weight slightly negative here; clamp it, so
    // that the witness points stay on the shapes.
    va = va > 0.0 ? va : 0.0, vb = vb > 0.0 ? vb : 0.0, vc = vc > 0.0 ? vc : 0.0;
    double inv = 1.0 / (va + vb + vc);
    w[0] = (float)(va * inv), w[1] = (float)(vb * inv), w[2] = (float)(vc * inv);
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

static double triple_double(const double a[3], const double b[3], const double c[3]) {
    double b_x_c[3];
    carom_cross_double(b, c, b_x_c);
    return carom_dot_double(a, b_x_c);
}

// A tetrahedron whose volume is below this fraction of (largest |p|)^3 is
// flat: its sign says nothing, so it never encloses the origin.
#define FLAT_TETRAHEDRON 1e-6
// Rounding in a double triple product of vectors of length s is a few
// double epsilons times s^3; a sub-volume within this many of zero has no
// sign.
#define SUBVOLUME_NOISE (64.0 * DBL_EPSILON)

// The tetrahedron p[0..3] (slots 0..3). Signed volumes decide: the origin is
// inside only when all four sub-volumes clearly share the whole volume's
// sign. Otherwise the closest point lies on a face whose sub-volume has the
// wrong sign or none to speak of (any face, when the tetrahedron is flat),
// and GJK goes on from there, where the distance bounds decide reliably.
// Deciding "inside" from each face's plane, or from sub-volumes within
// rounding of zero, called slivers enclosing when they were not: overlap
// reported for shapes 0.28 (and, near contact, 3e-5) apart.
//
// The volumes are taken in double, where the points and their differences
// are exact. In float their rounding, 32 eps (largest |p|)^3, swamped the
// true sub-volumes of a thin tetrahedron: a point 0.11 inside a plate 200
// across and 0.35 thick gave sub-volumes of about 1 against a noise of 33,
// never counted as inside, and GJK ran its 64 iterations round the plate.
static void solve_tetrahedron(gjk_simplex* s, const f4 p[4]) {
    static const int faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};  // face i is opposite vertex i
    double edge[3][3], to_origin[3];
    for (int k = 0; k < 3; ++k) {
        for (int i = 0; i < 3; ++i) edge[i][k] = (double)p[i + 1][k] - (double)p[0][k];
        to_origin[k] = -(double)p[0][k];
    }
    double volume = triple_double(edge[0], edge[1], edge[2]);
    float size = sqrtf(max_f(max_f(f4_len2(p[0]), f4_len2(p[1])), max_f(f4_len2(p[2]), f4_len2(p[3]))));
    double size3 = (double)size * size * size;
    bool flat = fabs(volume) <= FLAT_TETRAHEDRON * size3;
    // Sub-volumes with the origin in place of each vertex, signed so that
    // positive means the origin is on the inner side of the opposite face.
    double sign = volume > 0.0 ? 1.0 : -1.0;
    double sub[4];
    sub[1] = sign * triple_double(to_origin, edge[1], edge[2]);
    sub[2] = sign * triple_double(edge[0], to_origin, edge[2]);
    sub[3] = sign * triple_double(edge[0], edge[1], to_origin);
    sub[0] = fabs(volume) - sub[1] - sub[2] - sub[3];
    const double noise = SUBVOLUME_NOISE * size3;
    bool inside = !flat && sub[0] > noise && sub[1] > noise && sub[2] > noise && sub[3] > noise;
    if (inside) {
        for (int i = 0; i < 4; ++i) s->bary[i] = (float)(sub[i] / fabs(volume));
        return;
    }
    float best_d2 = FLT_MAX, best_w[3] = {1.0f, 0.0f, 0.0f};
    int best_face = 0, best_region = 1;
    for (int f = 0; f < 4; ++f) {
        if (!flat && sub[f] > noise) continue;  // the origin is clearly on this face's inner side
        float w[3];
        f4 p0 = p[faces[f][0]], p1 = p[faces[f][1]], p2 = p[faces[f][2]];
        int region = closest_on_triangle(p0, p1, p2, w);
        float d2 = weighted_len2(p0, p1, p2, w);
        if (d2 < best_d2) {
            best_d2 = d2, best_face = f, best_region = region;
            best_w[0] = w[0], best_w[1] = w[1], best_w[2] = w[2];
        }
    }
    simplex_keep(s, faces[best_face], best_region, best_w);
}

// The origin's foot on the line through q[0], q[1] (k = 2) or the plane
// through q[0..2] (k = 3), in double; `fallback` when they are degenerate.
static f4 project_origin(const f4 q[3], int k, f4 fallback) {
    double a[3], ab[3], ac[3], foot[3];
    for (int i = 0; i < 3; ++i) {
        a[i] = q[0][i];
        ab[i] = (double)q[1][i] - a[i];
        ac[i] = (double)q[2][i] - a[i];
    }
    double scale;
    if (k == 2) {
        // a - ab (ab.a)/|ab|^2, written as ab x (a x ab) / |ab|^2.
        double a_x_ab[3];
        carom_cross_double(a, ab, a_x_ab);
        carom_cross_double(ab, a_x_ab, foot);
        double len2 = carom_dot_double(ab, ab);
        if (!(len2 > 0.0)) return fallback;
        scale = 1.0 / len2;
    } else {
        carom_cross_double(ab, ac, foot);  // the normal, scaled below onto the plane
        double len2 = carom_dot_double(foot, foot);
        if (!(len2 > 0.0)) return fallback;
        scale = carom_dot_double(foot, a) / len2;
    }
    return f4_make((float)(foot[0] * scale), (float)(foot[1] * scale), (float)(foot[2] * scale));
}

// Reduces the simplex to the vertices carrying its point closest to the
// origin and returns that point (zero when the origin is inside).
//
// The region tests multiply up to four coordinates together, which
// overflows float for shapes of ~1e9 and underflows for ~1e-9; the points are
// therefore rescaled by a power of two (exactly, and only when outside a safe
// range) before solving. The barycentric weights do not depend on the scale.
//
// The point is not taken from the barycentric weights: next to large faces
// that loses its direction to rounding (a 100-unit face 1e-3 away gives a
// normal off by 1e-2). Projecting onto the edge's or face's own normal keeps
// the direction accurate to float precision whatever the size.
static f4 simplex_solve(gjk_simplex* s) {
    const int* slots = k_slots[s->mask].slot;
    int n = s->count;
    f4 p[4];
    f4 big = f4_zero();
    for (int i = 0; i < n; ++i) {
        p[i] = s->w[slots[i]];
        big = f4_max(big, f4_abs(p[i]));
    }
    float largest = f4_max3(big), unscale = 1.0f;
    if (largest > 0.0f && (largest < 0x1p-16f || largest > 0x1p16f)) {
        int e = ilogbf(largest);
        float scale = ldexpf(1.0f, -e);
        unscale = ldexpf(1.0f, e);
        for (int i = 0; i < n; ++i) p[i] *= scale;
    }
    float w[3];
    switch (n) {
        case 1: s->bary[slots[0]] = 1.0f; break;
        case 2: simplex_keep(s, slots, closest_on_segment(p[0], p[1], w), w); break;
        case 3: simplex_keep(s, slots, closest_on_triangle(p[0], p[1], p[2], w), w); break;
        default: solve_tetrahedron(s, p); break;
    }
    if (s->count == 4) return f4_zero();
    // The kept vertices and weights, in the scaled frame.
    f4 q[3] = {f4_zero(), f4_zero(), f4_zero()};
    float qw[3] = {0.0f, 0.0f, 0.0f};
    int k = 0;
    for (int i = 0; i < n; ++i) {
        if (s->mask & (1u << slots[i])) q[k] = p[i], qw[k++] = s->bary[slots[i]];
    }
    // The barycentric point is a true point of the CSO; the projection onto
    // the edge's or face's own normal has the better direction. Use the
    // projection only where the two agree to rounding: for a sliver whose
    // region test rounding got wrong, the plane's closest point lies off the
    // face, inside the true distance (seen: 2e-5 short on a cylinder). The
    // projection is made in double, where a sliver's normal keeps its
    // direction; in float it could move the point by the whole of that
    // allowance, towards the origin as often as not.
    f4 v = q[0] * qw[0] + q[1] * qw[1] + q[2] * qw[2];
    f4 projected = k >= 2 ? project_origin(q, k, v) : v;
    float size = max_f(max_f(f4_len2(q[0]), f4_len2(q[1])), f4_len2(q[2]));
    const float agree = 64.0f * FLT_EPSILON;
    if (f4_len2(projected - v) <= agree * agree * size) v = projected;
    return v * unscale;
}

static bool simplex_has_point(const gjk_simplex* s, int slot) {
    f4 q = s->w[slot];
    for (int i = 0; i < 4; ++i) {
        if (i == slot || !(s->mask & (1u << i))) continue;
        if (f4_equal3(s->w[i], q)) return true;
    }
    return false;
}

// B's pose in A's frame: rotation conj(q_a) q_b as a matrix, and position
// conj(q_a) (p_b - p_a) q_a. Quaternions are normalised on the way, since
// queries accept them off unit length within CAROM_QUAT_TOLERANCE.
static void relative_pose(gjk_pair* pair, carom_xform xf_a, carom_xform xf_b) {
    versors qa = xf_a.q, qb = xf_b.q;
    float ax = -qa.x, ay = -qa.y, az = -qa.z, aw = qa.w;  // conj(q_a)
    float x = aw * qb.x + ax * qb.w + ay * qb.z - az * qb.y;
    float y = aw * qb.y - ax * qb.z + ay * qb.w + az * qb.x;
    float z = aw * qb.z + ax * qb.y - ay * qb.x + az * qb.w;
    float w = aw * qb.w - ax * qb.x - ay * qb.y - az * qb.z;
    float s = 2.0f / (x * x + y * y + z * z + w * w);
    float xx = x * x * s, yy = y * y * s, zz = z * z * s;
    float xy = x * y * s, xz = x * z * s, yz = y * z * s;
    float wx = w * x * s, wy = w * y * s, wz = w * z * s;
    f4_rot* r = &pair->rot_b;
    r->row[0] = f4_make(1.0f - yy - zz, xy - wz, xz + wy);
    r->row[1] = f4_make(xy + wz, 1.0f - xx - zz, yz - wx);
    r->row[2] = f4_make(xz - wy, yz + wx, 1.0f - xx - yy);
    r->col[0] = f4_make(r->row[0][0], r->row[1][0], r->row[2][0]);
    r->col[1] = f4_make(r->row[0][1], r->row[1][1], r->row[2][1]);
    r->col[2] = f4_make(r->row[0][2], r->row[1][2], r->row[2][2]);
    // q d q* = (w^2 - u.u) d + 2 (u.d) u + 2 w (u x d), over |q|^2.
    f4 d = f4_from(xf_b.p) - f4_from(xf_a.p), u = f4_make(ax, ay, az);
    float n = aw * aw + f4_len2(u);
    pair->pos_b = (d * (aw * aw - f4_len2(u)) + u * (2.0f * f4_dot(u, d)) + f4_cross(u, d) * (2.0f * aw)) * (1.0f / n);
}

// The simplex as it was before a trial vertex: slots keep their points, so
// the mask, the count and the weights restore it.
typedef struct gjk_simplex_saved {
    unsigned mask;
    int count;
    float bary[4];
} gjk_simplex_saved;

// Adds the support point already written to `slot` and solves; `saved`
// receives the simplex as it was, for simplex_restore when the new vertex
// brings no progress.
static f4 simplex_push(gjk_simplex* s, int slot, gjk_simplex_saved* saved) {
    *saved = (gjk_simplex_saved){s->mask, s->count, {s->bary[0], s->bary[1], s->bary[2], s->bary[3]}};
    s->mask |= 1u << slot;
    s->count++;
    CAROM_ASSERT(s->count <= 4);
    return simplex_solve(s);
}

static void simplex_restore(gjk_simplex* s, const gjk_simplex_saved* saved) {
    s->mask = saved->mask;
    s->count = saved->count;
    for (int i = 0; i < 4; ++i) s->bary[i] = saved->bary[i];
}

#endif
