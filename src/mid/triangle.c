// Exact tests on single triangles: triangle–triangle, triangle–box and
// ray–triangle, in float, for the leaves of every mesh query.
//
// "Exact" here means exact in structure: every separating direction the
// geometry admits is tried, so the only disagreements with exact arithmetic
// come from float rounding at touching contact. The tree queries and the
// brute-force loops in the tests call these very functions, so result sets
// compare equal, not merely close.
#include "mid/mesh_internal.h"

// Projection interval of a triangle onto an axis.
static inline void project3(const vec3s v[3], vec3s axis, float* lo, float* hi) {
    float a = v3_dot(v[0], axis), b = v3_dot(v[1], axis), c = v3_dot(v[2], axis);
    *lo = carom_minf(a, carom_minf(b, c));
    *hi = carom_maxf(a, carom_maxf(b, c));
}

static inline bool separated_on(const vec3s a[3], const vec3s b[3], vec3s axis) {
    float alo, ahi, blo, bhi;
    project3(a, axis, &alo, &ahi);
    project3(b, axis, &blo, &bhi);
    // Strict: touching intervals are not separated (closed triangles). A zero
    // axis (parallel edges) projects both to 0 and never separates, which is
    // right: a direction that is not one is not a proof.
    return ahi < blo || bhi < alo;
}

bool mid_triangles_intersect(const vec3s a[3], const vec3s b[3]) {
    vec3s ea[3] = {v3_sub(a[1], a[0]), v3_sub(a[2], a[1]), v3_sub(a[0], a[2])};
    vec3s eb[3] = {v3_sub(b[1], b[0]), v3_sub(b[2], b[1]), v3_sub(b[0], b[2])};
    vec3s na = v3_cross(ea[0], ea[1]);
    vec3s nb = v3_cross(eb[0], eb[1]);
    if (v3_len2(na) == 0.0f || v3_len2(nb) == 0.0f) return false;

    // Plane of a against b's corners first: most near pairs of a mesh query
    // are settled here with three dot products.
    float da = v3_dot(na, a[0]);
    float s0 = v3_dot(na, b[0]) - da, s1 = v3_dot(na, b[1]) - da, s2 = v3_dot(na, b[2]) - da;
    if ((s0 > 0.0f && s1 > 0.0f && s2 > 0.0f) || (s0 < 0.0f && s1 < 0.0f && s2 < 0.0f)) return false;
    float db = v3_dot(nb, b[0]);
    float t0 = v3_dot(nb, a[0]) - db, t1 = v3_dot(nb, a[1]) - db, t2 = v3_dot(nb, a[2]) - db;
    if ((t0 > 0.0f && t1 > 0.0f && t2 > 0.0f) || (t0 < 0.0f && t1 < 0.0f && t2 < 0.0f)) return false;

    // The faces of the Minkowski difference of two triangles have normals
    // among na, nb, the nine edge cross products and, when the triangles are
    // coplanar or nearly so, the in-plane edge normals na x ea_i and nb x eb_j.
    // Testing this superset decides every configuration.
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            if (separated_on(a, b, v3_cross(ea[i], eb[j]))) return false;
        }
    }
    for (int i = 0; i < 3; ++i) {
        if (separated_on(a, b, v3_cross(na, ea[i]))) return false;
        if (separated_on(a, b, v3_cross(nb, eb[i]))) return false;
    }
    return true;
}

// Triangle against the box |x_i| <= h_i: the 13 axes of Akenine-Möller's test
// (box faces, triangle normal, box axes x triangle edges).
bool mid_triangle_box_intersect(const vec3s v[3], vec3s h) {
    for (int k = 0; k < 3; ++k) {
        float lo = carom_minf(v[0].raw[k], carom_minf(v[1].raw[k], v[2].raw[k]));
        float hi = carom_maxf(v[0].raw[k], carom_maxf(v[1].raw[k], v[2].raw[k]));
        if (lo > h.raw[k] || hi < -h.raw[k]) return false;
    }
    vec3s e[3] = {v3_sub(v[1], v[0]), v3_sub(v[2], v[1]), v3_sub(v[0], v[2])};
    vec3s n = v3_cross(e[0], e[1]);
    if (v3_len2(n) == 0.0f) return false;
    float r = h.x * fabsf(n.x) + h.y * fabsf(n.y) + h.z * fabsf(n.z);
    if (fabsf(v3_dot(n, v[0])) > r) return false;
    for (int i = 0; i < 3; ++i) {
        // Unit axis k cross edge i, written out: (0, -e.z, e.y) for x, ...
        vec3s axes[3] = {v3(0.0f, -e[i].z, e[i].y), v3(e[i].z, 0.0f, -e[i].x),
                         v3(-e[i].y, e[i].x, 0.0f)};
        for (int k = 0; k < 3; ++k) {
            vec3s a = axes[k];
            float lo, hi;
            project3(v, a, &lo, &hi);
            float rad = h.x * fabsf(a.x) + h.y * fabsf(a.y) + h.z * fabsf(a.z);
            if (lo > rad || hi < -rad) return false;
        }
    }
    return true;
}

// Möller–Trumbore, both sides, closed edges. The determinant's sign is folded
// into the numerators instead of dividing early, so the accept tests compare
// like with like. The fraction is computed the same way whatever t_max is,
// so a tree walk (shrinking t_max) and a loop over all triangles (t_max = 1)
// see bit-identical fractions and pick the same closest hit.
bool mid_ray_triangle(vec3s p, vec3s d, const vec3s v[3], float t_max, float* t) {
    vec3s e1 = v3_sub(v[1], v[0]);
    vec3s e2 = v3_sub(v[2], v[0]);
    vec3s q = v3_cross(d, e2);
    float det = v3_dot(e1, q);
    if (det == 0.0f) return false;  // parallel to the plane, or degenerate
    float sign = det > 0.0f ? 1.0f : -1.0f;
    float adet = det * sign;
    vec3s s = v3_sub(p, v[0]);
    float u = v3_dot(s, q) * sign;
    if (u < 0.0f || u > adet) return false;
    vec3s r = v3_cross(s, e1);
    float w = v3_dot(d, r) * sign;
    if (w < 0.0f || u + w > adet) return false;
    float tt = v3_dot(e2, r) * sign;
    if (tt < 0.0f || tt > adet) return false;
    *t = carom_minf(tt / adet, 1.0f);
    return *t <= t_max;
}
