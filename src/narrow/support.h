// Support mappings of shape cores, inline so GJK's loop compiles the tagged
// switch into its body. Directions need not be unit and may be zero.
#ifndef CAROM_NARROW_SUPPORT_H
#define CAROM_NARROW_SUPPORT_H

#include <string.h>

#include "carom/shape.h"
#include "core/internal.h"
#include "core/simd.h"

// Hulls up to this many vertices are scanned in full, four vertices at a
// time: below it the straight-line scan beats hill climbing's dependent
// loads and branches (measured on the 162-vertex geosphere).
#define CAROM_HULL_SCAN_LIMIT 32

// The furthest vertex along d by a vectorised scan of the whole hull.
static inline int hull_scan_index(const carom_hull* hull, vec3s d) {
    const int n4 = hull->scan_count;
    const float* xs = hull->scan;
    f4 best = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
    i4 best_index = {0, 0, 0, 0}, index = {0, 1, 2, 3};
    const i4 step = {4, 4, 4, 4};
    for (int i = 0; i < n4; i += 4) {
        f4 x, y, z;
        memcpy(&x, xs + i, sizeof x);
        memcpy(&y, xs + n4 + i, sizeof y);
        memcpy(&z, xs + 2 * n4 + i, sizeof z);
        f4 dot = x * d.x + y * d.y + z * d.z;
        i4 better = dot > best;  // all ones where the new dot wins
        best = (f4)(((i4)dot & better) | ((i4)best & ~better));
        best_index = (index & better) | (best_index & ~better);
        index += step;
    }
    int k = 0;
    for (int lane = 1; lane < 4; ++lane) {
        if (best[lane] > best[k] || (best[lane] == best[k] && best_index[lane] < best_index[k])) k = lane;
    }
    return best_index[k];
}

// The hill-climbing start map: cube faces (+x, -x, +y, -y, +z, -z), each cut
// into CAROM_HULL_START_RES^2 cells by the two other components over the
// dominant one.
#define CAROM_HULL_START_RES 8
#define CAROM_HULL_START_CELLS (6 * CAROM_HULL_START_RES * CAROM_HULL_START_RES)

static inline int hull_cell_of(vec3s d) {
    float ax = fabsf(d.x), ay = fabsf(d.y), az = fabsf(d.z);
    int face;
    float u, v, m;
    if (ax >= ay && ax >= az) {
        face = d.x >= 0.0f ? 0 : 1, u = d.y, v = d.z, m = ax;
    } else if (ay >= az) {
        face = d.y >= 0.0f ? 2 : 3, u = d.x, v = d.z, m = ay;
    } else {
        face = d.z >= 0.0f ? 4 : 5, u = d.x, v = d.y, m = az;
    }
    if (!(m > 0.0f)) return 0;
    const float half = 0.5f * (float)CAROM_HULL_START_RES;
    int i = (int)((u / m + 1.0f) * half), j = (int)((v / m + 1.0f) * half);
    i = i < 0 ? 0 : (i >= CAROM_HULL_START_RES ? CAROM_HULL_START_RES - 1 : i);
    j = j < 0 ? 0 : (j >= CAROM_HULL_START_RES ? CAROM_HULL_START_RES - 1 : j);
    return (face * CAROM_HULL_START_RES + i) * CAROM_HULL_START_RES + j;
}

// The centre direction of a start-map cell (for building the map).
static inline vec3s carom_hull_cell_direction(int cell) {
    int j = cell % CAROM_HULL_START_RES, i = cell / CAROM_HULL_START_RES % CAROM_HULL_START_RES;
    int face = cell / (CAROM_HULL_START_RES * CAROM_HULL_START_RES);
    float u = ((float)i + 0.5f) * 2.0f / (float)CAROM_HULL_START_RES - 1.0f;
    float v = ((float)j + 0.5f) * 2.0f / (float)CAROM_HULL_START_RES - 1.0f;
    float s = (face & 1) ? -1.0f : 1.0f;
    switch (face >> 1) {
        case 0: return v3(s, u, v);
        case 1: return v3(u, s, v);
        default: return v3(u, v, s);
    }
}

// Support of a hull's vertices; `hint` is where hill climbing starts.
static inline int hull_support_index(const carom_hull* hull, vec3s d, int hint) {
    const vec3s* v = hull->vertices;
    if (hull->vertex_count <= CAROM_HULL_SCAN_LIMIT) return hull_scan_index(hull, d);
    // A vertex no neighbour of which is further along d is the global
    // maximum of a linear function over a convex polytope, so climbing ends
    // at the support. Each step is taken on the rise along the edge,
    // (neighbour - vertex) . d, not on a comparison of the two dots: those
    // round to |v| |d| eps, so twins an ulp apart, or the rim of a thin cap,
    // look level and the climb stopped short of the top; the rise rounds to
    // the edge's length instead. The step count is bounded by the vertex
    // count, so rounding can never make it cycle for ever.
    // Start from the better of the hint (the last answer, often adjacent) and
    // the start map's vertex for d. The vertex climbed to is carried from
    // step to step, not loaded again: that load sat on the climb's critical
    // path (about 4% of GJK's time on the 162-vertex hull).
    int best = hull->start_map[hull_cell_of(d)];
    vec3s top = v[best];
    if (hint >= 0 && hint < hull->vertex_count && v3_dot(v3_sub(v[hint], top), d) > 0.0f) {
        best = hint;
        top = v[hint];
    }
    for (int steps = 0; steps < hull->vertex_count; ++steps) {
        const int from = best;
        vec3s next = top;
        float rise = 0.0f;
        for (int k = hull->adjacency_first[from]; k < hull->adjacency_first[from + 1]; ++k) {
            int n = hull->adjacency[k];
            vec3s p = v[n];
            float r = v3_dot(v3_sub(p, top), d);
            if (r > rise) rise = r, best = n, next = p;
        }
        if (best == from) break;
        top = next;
    }
    return best;
}

vec3s carom_support_full(const carom_shape* shape, vec3s d, int hint, int* feature);

// An upper bound on the distance from the shape's local origin to any of its
// points (radius included), or 0 when unknown (user callbacks). The shape
// must be valid.
float carom_shape_extent(const carom_shape* shape);


// x -> B x + c for an affine shape (cglm matrices are column-major: mRC is
// column R, row C).
static inline vec3s affine_apply(const carom_shape* s, vec3s p) {
    mat3s m = s->u.affine.linear;
    return v3(m.m00 * p.x + m.m10 * p.y + m.m20 * p.z + s->u.affine.translation.x,
              m.m01 * p.x + m.m11 * p.y + m.m21 * p.z + s->u.affine.translation.y,
              m.m02 * p.x + m.m12 * p.y + m.m22 * p.z + s->u.affine.translation.z);
}

// Support of the core (radius excluded). `hint` is a feature index from an
// earlier call on the same shape, or -1.
CAROM_FORCE_INLINE vec3s carom_support_core(const carom_shape* s, vec3s d, int hint, int* feature) {
    switch (s->type) {
        case CAROM_SHAPE_POINT:
            *feature = 0;
            return s->u.point;
        case CAROM_SHAPE_SEGMENT: {
            bool b = v3_dot(s->u.segment.b, d) > v3_dot(s->u.segment.a, d);
            *feature = b;
            return b ? s->u.segment.b : s->u.segment.a;
        }
        case CAROM_SHAPE_TRIANGLE: {
            float da = v3_dot(s->u.triangle.a, d), db = v3_dot(s->u.triangle.b, d),
                  dc = v3_dot(s->u.triangle.c, d);
            if (da >= db && da >= dc) return *feature = 0, s->u.triangle.a;
            if (db >= dc) return *feature = 1, s->u.triangle.b;
            return *feature = 2, s->u.triangle.c;
        }
        case CAROM_SHAPE_BOX: {
            vec3s h = s->u.half_extents;
            *feature = (d.x >= 0.0f) | (d.y >= 0.0f) << 1 | (d.z >= 0.0f) << 2;
            return v3(d.x >= 0.0f ? h.x : -h.x, d.y >= 0.0f ? h.y : -h.y, d.z >= 0.0f ? h.z : -h.z);
        }
        case CAROM_SHAPE_CYLINDER: {
            float r = s->u.cylinder.radius, h = s->u.cylinder.half_height;
            float len = sqrtf(d.x * d.x + d.y * d.y);
            float z = d.z >= 0.0f ? h : -h;
            *feature = -1;
            if (len > 0.0f) return v3(r * d.x / len, r * d.y / len, z);
            return v3(0.0f, 0.0f, z);
        }
        case CAROM_SHAPE_CONE: {
            float r = s->u.cone.radius, h = s->u.cone.half_height;
            float len = sqrtf(d.x * d.x + d.y * d.y);
            // Apex (0,0,h) against the furthest base rim point.
            if (d.z * h >= r * len - d.z * h) return *feature = 0, v3(0.0f, 0.0f, h);
            *feature = -1;
            if (len > 0.0f) return v3(r * d.x / len, r * d.y / len, -h);
            return v3(0.0f, 0.0f, -h);  // straight down: the base centre
        }
        case CAROM_SHAPE_HULL: {
            int i = hull_support_index(s->u.hull, d, hint);
            *feature = i;
            return s->u.hull->vertices[i];
        }
        case CAROM_SHAPE_AFFINE: {
            // s_T(A)(d) = B s_A(B^T d) + c.
            mat3s m = s->u.affine.linear;
            vec3s dt = v3(m.m00 * d.x + m.m01 * d.y + m.m02 * d.z,
                          m.m10 * d.x + m.m11 * d.y + m.m12 * d.z,
                          m.m20 * d.x + m.m21 * d.y + m.m22 * d.z);
            // A flattening matrix can map d to zero: every child point is
            // then equally far along d, and the child is never asked for a
            // zero direction.
            if (dt.x == 0.0f && dt.y == 0.0f && dt.z == 0.0f) dt.x = 1.0f;
            return affine_apply(s, carom_support_full(s->u.affine.child, dt, hint, feature));
        }
        case CAROM_SHAPE_MINKOWSKI_SUM: {
            int fa, fb;
            vec3s p = v3_add(carom_support_full(s->u.pair.first, d, -1, &fa),
                             carom_support_full(s->u.pair.second, d, -1, &fb));
            *feature = -1;
            return p;
        }
        case CAROM_SHAPE_CONVEX_HULL: {
            int fa, fb;
            vec3s pa = carom_support_full(s->u.pair.first, d, -1, &fa);
            vec3s pb = carom_support_full(s->u.pair.second, d, -1, &fb);
            *feature = -1;
            return v3_dot(pa, d) >= v3_dot(pb, d) ? pa : pb;
        }
        case CAROM_SHAPE_CUSTOM: {
            vec3s out = v3(0.0f, 0.0f, 0.0f);
            *feature = s->u.custom.fn(s->u.custom.user, d, &out);
            return out;
        }
        case CAROM_SHAPE_TYPE_COUNT:
            break;
    }
    *feature = -1;
    return v3(0.0f, 0.0f, 0.0f);
}

// The core vertex a support call reported as `feature`, at the shape's
// current size. False when the shape has no such vertex, or the index is out
// of range (it may come from a stale or garbage cache).
static inline bool carom_core_vertex(const carom_shape* s, int feature, vec3s* out) {
    switch (s->type) {
        case CAROM_SHAPE_POINT:
            *out = s->u.point;
            return feature == 0;
        case CAROM_SHAPE_SEGMENT:
            *out = feature == 1 ? s->u.segment.b : s->u.segment.a;
            return feature == 0 || feature == 1;
        case CAROM_SHAPE_TRIANGLE:
            *out = feature == 2 ? s->u.triangle.c : (feature == 1 ? s->u.triangle.b : s->u.triangle.a);
            return feature >= 0 && feature <= 2;
        case CAROM_SHAPE_BOX: {
            vec3s h = s->u.half_extents;
            *out = v3((feature & 1) ? h.x : -h.x, (feature & 2) ? h.y : -h.y, (feature & 4) ? h.z : -h.z);
            return feature >= 0 && feature <= 7;
        }
        case CAROM_SHAPE_HULL:
            if (feature < 0 || feature >= s->u.hull->vertex_count) return false;
            *out = s->u.hull->vertices[feature];
            return true;
        case CAROM_SHAPE_AFFINE: {
            // A rounded child's support is not its vertex: no index then.
            const carom_shape* child = s->u.affine.child;
            vec3s p;
            if (child->radius != 0.0f || !carom_core_vertex(child, feature, &p)) return false;
            *out = affine_apply(s, p);
            return true;
        }
        default:
            return false;
    }
}

// The core support as a vector, for GJK's loop: the primitives natively,
// combinators and callbacks through the general mapping above.
CAROM_FORCE_INLINE f4 carom_support_core4(const carom_shape* s, f4 d, int hint, int* feature) {
    switch (s->type) {
        case CAROM_SHAPE_POINT:
            *feature = 0;
            return f4_from(s->u.point);
        case CAROM_SHAPE_SEGMENT: {
            f4 a = f4_from(s->u.segment.a), b = f4_from(s->u.segment.b);
            bool second = f4_dot(b, d) > f4_dot(a, d);
            *feature = second;
            return second ? b : a;
        }
        case CAROM_SHAPE_BOX: {
            f4 p = f4_copysign(f4_from(s->u.half_extents), d);
            *feature = f4_positive_mask3(p);  // the corner's sign bits, as carom_core_vertex reads them
            return p;
        }
        case CAROM_SHAPE_HULL: {
            int i = hull_support_index(s->u.hull, f4_to(d), hint);
            *feature = i;
            return f4_from(s->u.hull->vertices[i]);
        }
        default:
            return f4_from(carom_support_core(s, f4_to(d), hint, feature));
    }
}

#endif
