// GJK ray cast and linear shape cast: van den Bergen, "Ray Casting against
// General Convex Objects with Application to Continuous Collision
// Detection" (2004), the seed slides' "GJK Ray Cast", with Box2D's
// b2ShapeCast treatment of radii.
//
// The target A is static, the moving shape B is translated by t r. Both are
// cores plus radii, sigma = r_A + r_B. In A's frame the cores' configuration
// space obstacle is C = A - B, and B at time t touches A when the ray point
// x = t r is within sigma of C. GJK runs on C as seen from x (simplex points
// p - x), and each support plane it finds is a clipping plane: when the
// plane through the support point p, normal to v, is further than sigma
// (plus the touch tolerance) from x, no point of C is closer, so x advances
// along the ray to where the plane is exactly sigma away. The plane's normal
// is the normal at the hit. The simplex keeps its points across a clip,
// each now seen from the new x.
//
// Invariants, in exact arithmetic: every ray point before the current one
// is more than sigma from C (each was cut off by a plane), so the reported
// fraction never passes the exact time of impact; and the loop stops with a
// hit only when the simplex proves x within sigma plus the touch tolerance
// of C (or GJK's bounds agree to its relative tolerance, or float's floor
// stops it, as in gjk.c).
//
// Termination: every pass makes one support call, and the pass count is
// capped. Each clip moves x towards C by more than the touch tolerance;
// between clips |v| strictly decreases, and a pass that fails to decrease
// it takes one of a fixed number of remedies before the loop gives up.
#include <float.h>
#include <string.h>

#include "carom/cast.h"
#include "narrow/simplex.h"

// Float rounding of dot products at the sweep's scale, as in gjk.c: plane
// tests leave this much (times the scale) of slack.
#define CAST_FLOAT_SLACK (8.0f * FLT_EPSILON)

// With radii of at least this fraction of the scale, the normal at a hit is
// the direction between the cores' closest points, settled as the distance
// query would: the last clipping plane also supports the hit, but on rounded
// edges may tilt by up to sqrt(2 tolerance / sigma) (3e-4 rad seen). With
// thinner or no radii v is within rounding of zero and the plane gives the
// normal, exact on polytope faces. (Settling at a point backed off along the
// plane, for curved cores without radius, came out 3 to 5 times worse.)
#define CAST_NORMAL_FROM_V 1e-3f

// Result of the core loop, in A's frame, before radii and poses.
typedef struct cast_outcome {
    float lambda;      // the ray parameter reached
    f4 v;              // closest point of the simplex, relative to the ray point
    f4 normal;         // the last clipping plane's unit normal (towards the ray), or zero
    float scale;       // the sweep's scale: tolerances are relative to it
    int iterations;    // support calls
    bool clipped;      // the ray point left the start
    bool hit;          // x within sigma + tolerance of C (or given up: unfinished)
    bool unfinished;   // iteration cap, or a float stall beyond the floor tolerance
    bool invalid;      // a support point was not finite
} cast_outcome;

// Replaces the simplex by its closest point, as one vertex: pa and pb are
// convex combinations of support points, so pa - pb is a point of C (gjk.c's
// collapse_to_point, with the ray point's shift).
static void cast_collapse(gjk_simplex* s, f4 x) {
    f4 pa = f4_zero(), pb = f4_zero();
    for (int i = 0; i < 4; ++i) {
        if (!(s->mask & (1u << i))) continue;
        pa += s->wa[i] * s->bary[i];
        pb += s->wb[i] * s->bary[i];
    }
    s->wa[0] = pa;
    s->wb[0] = pb;
    s->w[0] = pa - pb - x;
    s->ia[0] = s->ib[0] = -1;
    s->bary[0] = 1.0f;
    s->mask = 1u;
    s->count = 1;
}

// The normal of the simplex's face (it must hold three points), pointing
// from the origin towards the face as v does. False when the face has no
// normal in float (collinear points, or products beyond float's range).
static bool face_normal(const gjk_simplex* s, f4* out) {
    f4 q[3];
    int k = 0;
    for (int i = 0; i < 4 && k < 3; ++i) {
        if (s->mask & (1u << i)) q[k++] = s->w[i];
    }
    f4 n = f4_cross(q[1] - q[0], q[2] - q[0]);
    // Scaled to a largest component of one: a thin face's cross product
    // can be so small that its squared length is a float denormal (4e-43
    // seen on a face 3e-9 across), and the length the caller takes of it
    // then misses by percents (a hit late, a normal 0.998 long).
    float m = f4_max3(f4_abs(n));
    if (!(m > 0.0f) || !(m <= FLT_MAX)) return false;
    n = n * (1.0f / m);
    *out = f4_dot(n, q[0]) >= 0.0f ? n : -n;
    return true;
}

// The first search direction: from B's origin towards A's (C's middle, seen
// from the start), else along the ray (where C must lie for a hit).
static f4 cast_initial_axis(const gjk_pair* pair, f4 r) {
    if (f4_len2(pair->pos_b) >= FLT_MIN) return -pair->pos_b;
    if (f4_len2(r) >= FLT_MIN) return r;
    return f4_make(1.0f, 0.0f, 0.0f);
}

// Runs the ray cast of x = t r, t in [0, 1], against C inflated by sigma.
// Ends with a hit, a miss (a plane the rest of the ray never reaches), or
// the iteration cap. Every pass makes one support call.
static cast_outcome cast_cores(gjk_pair* pair, f4 r, float sigma, gjk_simplex* s) {
    cast_outcome out = {.lambda = 0.0f, .v = f4_zero(), .normal = f4_zero()};
    const float r_len = sqrtf(f4_len2(r));
    // Every CSO point is within pair->scale of the origin and every ray
    // point within |r|: tolerances relative to their sum do not depend on
    // the path the loop takes. A user callback's size is learnt as it goes.
    float scale = pair->scale + r_len;
    f4 x = f4_zero();
    s->mask = 0;
    s->count = 0;
    f4 v = cast_initial_axis(pair, r);
    float vv = FLT_MAX;  // v is a direction, not yet a point of C - x
    bool collapsed = false, restarted = false, probed = false, tried_probe = false;
    f4 probe = v;  // the search direction when it is not v (see the remedies)
    gjk_simplex before_restart;  // written when restarting, read only after
    f4 v_before_restart = v;
    float vv_before_restart = FLT_MAX;
    for (;;) {
        if (out.iterations == CAROM_CAST_MAX_ITERATIONS) {
            out.hit = out.unfinished = true;
            break;
        }
        // The plane tested below is normal to the search direction d: v,
        // or once per ray point after a stall the simplex face's normal.
        const f4 d = probed ? probe : v;
        const bool along_v = !probed;
        probed = false;
        int slot = add_support(s, pair, -d);
        out.iterations++;
        f4 p = s->w[slot];  // a point of C, unshifted
        float p2 = f4_len2(p);
        if (!(p2 <= FLT_MAX)) {  // NaN or overflow: a callback or an affine chain ran wild
            out.invalid = true;
            return out;
        }
        if (pair->scale == 0.0f) scale = max_f(scale, sqrtf(p2) + r_len);
        const float touch = sigma + CAROM_GJK_TOUCH_TOLERANCE * scale;
        const float slack = CAST_FLOAT_SLACK * scale;
        f4 w = p - x;
        s->w[slot] = w;
        // v is never zero here: a zero v ends the loop as a hit below.
        float d_len = sqrtf(f4_len2(d)), dw = f4_dot(d, w);
        if (dw > (touch + slack) * d_len) {
            // The plane d.y = d.p supports C and is more than touch from
            // x: clip. The ray reaches the plane's sigma-offset at lambda +
            // (d.w - sigma |d|) / d.r, and misses when it runs parallel or
            // away, or is still more than touch from the plane at its end.
            float dr = f4_dot(d, r);
            if (!(dr > 0.0f) || dw - (1.0f - out.lambda) * dr > (touch + slack) * d_len) break;
            float next = carom_minf(out.lambda + (dw - sigma * d_len) / dr, 1.0f);
            // Float spacing of lambda can be coarser than the tolerance on a
            // long sweep: always move, by one ulp at least.
            if (!(next > out.lambda)) next = nextafterf(out.lambda, 2.0f);
            out.lambda = next;
            x = r * out.lambda;
            out.normal = d * (-1.0f / d_len);
            out.clipped = true;
            collapsed = restarted = tried_probe = false;
            // The simplex keeps its points, seen from the new x, plus p (the
            // paper's form). Restarting it from p alone (the slides' form)
            // took two to three times the support calls on curved cores:
            // x then lies on p's tangent plane and p - x points along it.
            for (int i = 0; i < 4; ++i) {
                if (s->mask & (1u << i)) s->w[i] = s->wa[i] - s->wb[i] - x;
            }
            s->w[slot] = p - x;
            s->mask |= 1u << slot;
            s->count++;
            v = simplex_solve(s);
            vv = f4_len2(v);
        } else {
            // x is not cut off: a GJK distance step at fixed x. The bounds
            // vw/|v| <= touch and |v| agreeing to GJK's relative tolerance
            // put x within touch of C, to that tolerance: a hit. (vw/|v| is
            // a bound only for the support along v, not for a probe's.)
            float v_len = sqrtf(f4_len2(v)), vw = f4_dot(v, w);
            if (along_v && s->count > 0 && vv - vw - CAROM_GJK_RELATIVE_TOLERANCE * vv <= slack * v_len) {
                out.hit = true;
                break;
            }
            // A support point already in the simplex, with the bounds still
            // apart, means rounding tilted v (a sliver triangle's weights
            // are good only to ~1e-5 of its size, and v's direction to that
            // over |v|): no progress, not convergence. It once stopped a
            // cast 1.7e-3 short of a 64-gon prism.
            bool progress = false;
            if (s->count == 0 || !simplex_has_point(s, slot)) {
                gjk_simplex_saved saved;
                f4 v_new = simplex_push(s, slot, &saved);
                float vv_new = f4_len2(v_new);
                if (s->count == 4 || vv_new <= touch * touch || vv_new < vv) {
                    v = v_new;
                    vv = vv_new;
                    collapsed = false;
                    progress = true;
                } else {
                    simplex_restore(s, &saved);
                }
            }
            if (!progress) {
                // Rounding hides the descent. v's direction is the suspect:
                // a sliver's weights tilt it (2e-3 rad seen), enough for every
                // support plane along it to pass behind x. The face's own
                // normal does not depend on the weights: try one plane along
                // it (a 64-gon pyramid stalled 100 tolerances short without
                // it). Then gjk.c's remedies, in its order: collapse to the
                // closest point, then once start afresh.
                if (!tried_probe && s->count == 3) {
                    tried_probe = true;
                    if (face_normal(s, &probe)) {
                        probed = true;
                        continue;
                    }
                }
                if (!collapsed) {
                    cast_collapse(s, x);
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
                // Float's floor (curved cores in near contact): touching if
                // the upper bound is within the floor tolerance, as
                // carom_gjk_distance decides; otherwise give up with the
                // safe fraction reached.
                out.hit = true;
                out.unfinished = sqrtf(carom_minf(vv, vv_before_restart)) - sigma > CAROM_GJK_FLOOR_TOLERANCE * scale;
                break;
            }
        }
        if (s->count == 4 || vv <= touch * touch) {
            out.hit = true;
            break;
        }
    }
    // After a restart the closer of the two simplices stands.
    if (restarted && (s->count == 0 || vv_before_restart < f4_len2(v))) {
        *s = before_restart;
        v = v_before_restart;
    }
    out.v = v;
    out.scale = scale;
    return out;
}

// Plain GJK distance steps at a fixed ray point x, from the simplex as the
// cast left it, for the direction between the cores: the cast stops as soon
// as a hit is certain, with v anywhere within the touch distance, not yet
// the closest point. Stops when GJK's bounds agree to its relative
// tolerance, when the cores touch, on the first pass without progress, or
// when `budget` support calls are spent. Writes v, the closest point
// relative to x (the simplex's weights give the witnesses). False when a
// support point is not finite.
static bool settle(gjk_pair* pair, gjk_simplex* s, f4 x, float scale, int budget, int* iterations, f4* v_out) {
    for (int i = 0; i < 4; ++i) {
        if (s->mask & (1u << i)) s->w[i] = s->wa[i] - s->wb[i] - x;
    }
    f4 v = simplex_solve(s);
    float vv = f4_len2(v);
    const float cores_touch = CAROM_GJK_TOUCH_TOLERANCE * scale, slack = CAST_FLOAT_SLACK * scale;
    for (; budget > 0 && s->count < 4 && vv > cores_touch * cores_touch; --budget) {
        int slot = add_support(s, pair, -v);
        ++*iterations;
        f4 w = s->w[slot] - x;
        if (!(f4_len2(w) <= FLT_MAX)) return false;
        s->w[slot] = w;
        float vw = f4_dot(v, w);
        if (vv - vw - CAROM_GJK_RELATIVE_TOLERANCE * vv <= slack * sqrtf(vv) || simplex_has_point(s, slot)) break;
        gjk_simplex_saved saved;
        f4 v_new = simplex_push(s, slot, &saved);
        float vv_new = f4_len2(v_new);
        if (s->count == 4 || vv_new < vv) {
            v = v_new;
            vv = vv_new;
            continue;
        }
        simplex_restore(s, &saved);
        break;
    }
    *v_out = s->count == 4 ? f4_zero() : v;
    return true;
}

static bool pose_and_shape_valid(const carom_shape* shape, carom_xform xf) {
    return carom_shape_is_valid(shape) && carom_xform_is_valid(xf);
}

// Validates, casts the cores and turns the outcome into a world result.
static carom_cast_result cast_shapes(const carom_shape* moving, carom_xform xf_moving, vec3s translation,
                                     const carom_shape* target, carom_xform xf_target) {
    carom_cast_result res;
    memset(&res, 0, sizeof res);
    res.state = CAROM_INVALID_INPUT;
    if (!pose_and_shape_valid(moving, xf_moving) || !pose_and_shape_valid(target, xf_target) ||
        !carom_vec3_is_valid(translation) || !carom_vec3_is_valid(v3_add(xf_moving.p, translation))) {
        return res;
    }
    // Everything in the target's frame: its support needs no transform, and
    // the moving shape's one rotation per call.
    gjk_pair pair;
    relative_pose(&pair, xf_target, xf_moving);
    pair.a = target;
    pair.b = moving;
    pair.hint_a = pair.hint_b = -1;
    float extent_a = carom_shape_extent(target), extent_b = carom_shape_extent(moving);
    pair.scale = extent_a > 0.0f && extent_b > 0.0f ? extent_a + extent_b + sqrtf(f4_len2(pair.pos_b)) : 0.0f;
    carom_rot rot_a = carom_rot_from_quat(xf_target.q);
    f4 r = f4_from(rot_apply_transposed(&rot_a, translation));
    const float ra = target->radius, sigma = target->radius + moving->radius;

    gjk_simplex s;
    cast_outcome g = cast_cores(&pair, r, sigma, &s);
    if (g.invalid) return res;
    res.state = g.unfinished ? CAROM_MAX_ITERATIONS : CAROM_DONE;
    res.iterations = g.iterations;
    if (!g.hit) {
        res.fraction = 1.0f;
        return res;
    }
    res.hit = true;
    res.fraction = g.lambda;
    const f4 x = r * g.lambda;
    const float tol = CAROM_GJK_TOUCH_TOLERANCE * g.scale;
    const int budget = CAROM_CAST_MAX_ITERATIONS - g.iterations;
    f4 v = g.v, n = g.normal;
    float d = sqrtf(f4_len2(v));
    // The normal: the last clipping plane's, unless the direction between
    // the cores' closest points is known better (CAST_NORMAL_FROM_V), or
    // there was no plane (a hit at the start, where only the radii may
    // overlap).
    bool from_v = g.clipped ? sigma >= CAST_NORMAL_FROM_V * g.scale : sigma > 0.0f && d > tol;
    if (from_v && s.count > 0 && s.count < 4) {
        if (!settle(&pair, &s, x, g.scale, budget, &res.iterations, &v)) {
            memset(&res, 0, sizeof res);
            res.state = CAROM_INVALID_INPUT;
            return res;
        }
        d = sqrtf(f4_len2(v));
    }
    // Witnesses: pa on A's core, pb on B's core at time lambda.
    f4 pa = f4_zero(), pb = f4_zero();
    for (int i = 0; i < 4; ++i) {
        if (!(s.mask & (1u << i))) continue;
        pa += s.wa[i] * s.bary[i];
        pb += s.wb[i] * s.bary[i];
    }
    pb += x;
    f4 point;
    if (g.clipped) {
        // v = pa - pb points from B to A.
        if (from_v && d > tol) n = v * (-1.0f / d);
        point = pa + n * ra;
    } else if (d > tol) {
        // Touching or overlapping at the start, the cores apart: only the
        // radii overlap. The point is the middle of the stretch of the
        // segment pa-pb within r_a of pa and r_b of pb (as carom_gjk_distance).
        n = v * (-1.0f / d);
        float lo = fmaxf(-ra, d - moving->radius), hi = fminf(ra, d + moving->radius);
        point = pa + n * (0.5f * (lo + hi));
    } else {
        n = f4_zero();
        point = (pa + pb) * 0.5f;  // the cores' common point; no direction known
    }
    res.point = v3_add(rot_apply(&rot_a, f4_to(point)), xf_target.p);
    res.normal = rot_apply(&rot_a, f4_to(n));
    return res;
}

carom_cast_result carom_gjk_shape_cast(const carom_shape* moving, carom_xform xf_moving, vec3s translation,
                                       const carom_shape* target, carom_xform xf_target) {
    return cast_shapes(moving, xf_moving, translation, target, xf_target);
}

carom_cast_result carom_gjk_raycast(const carom_shape* shape, carom_xform xf, carom_ray ray) {
    // A ray is a point cast: the same loop, with C the target shifted.
    carom_shape point = carom_point(v3(0.0f, 0.0f, 0.0f));
    carom_xform from = carom_xform_identity();
    from.p = ray.origin;
    return cast_shapes(&point, from, ray.translation, shape, xf);
}
