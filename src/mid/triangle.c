// Exact tests on single triangles: triangle–triangle in float, triangle–box
// and ray–triangle in double, for the leaves of every mesh query.
//
// "Exact" here means exact in structure: every separating direction the
// geometry admits is tried, so the only disagreements with exact arithmetic
// come from float rounding at touching contact. The tree queries and the
// brute-force loops in the tests call these very functions, so result sets
// compare equal, not merely close.
#include <float.h>
#include <string.h>

#include "core/simd.h"
#include "mid/mesh_internal.h"

// Lanes (v0.k, v1.k, v2.k, v2.k) for k = x, y, z: three corners side by side,
// the last repeated so four-lane minima and maxima see only real corners.
static inline void transpose3(const f4 v[3], f4* x, f4* y, f4* z) {
    f4 t0 = __builtin_shufflevector(v[0], v[1], 0, 4, 1, 5);  // x0 x1 y0 y1
    f4 t1 = __builtin_shufflevector(v[0], v[1], 2, 6, 2, 6);  // z0 z1 z0 z1
    *x = __builtin_shufflevector(t0, v[2], 0, 1, 4, 4);
    *y = __builtin_shufflevector(t0, v[2], 2, 3, 5, 5);
    *z = __builtin_shufflevector(t1, v[2], 0, 1, 6, 6);
}

static inline f4 lane(f4 v, int i) {
    switch (i) {
        case 0: return __builtin_shufflevector(v, v, 0, 0, 0, 0);
        case 1: return __builtin_shufflevector(v, v, 1, 1, 1, 1);
        default: return __builtin_shufflevector(v, v, 2, 2, 2, 2);
    }
}

static inline f4 vmin(f4 a, f4 b) { return f4_min(a, b); }
static inline f4 vmax(f4 a, f4 b) { return f4_max(a, b); }

// Every lane of `mask` set (the four-lane compare results of one test).
static inline bool all_lanes(i4 mask) { return i4_mask4(mask) == 15; }
static inline bool any_lane(i4 mask) { return i4_mask4(mask) != 0; }

// A triangle's corners broadcast, ready to project on four axes at once.
typedef struct corners {
    f4 x[3], y[3], z[3];
} corners;

static inline corners broadcast(const f4 v[3]) {
    corners c;
    for (int i = 0; i < 3; ++i) {
        c.x[i] = lane(v[i], 0);
        c.y[i] = lane(v[i], 1);
        c.z[i] = lane(v[i], 2);
    }
    return c;
}

// Up to four axes (lanes of nx, ny, nz): true when one separates the two
// triangles' projections (strictly, so touching is not separated). A zero
// axis projects both to 0 and never separates, which is right: a direction
// that is not one proves nothing.
static inline bool separated_on4(const corners* a, const corners* b, f4 nx, f4 ny, f4 nz) {
    f4 pa0 = a->x[0] * nx + a->y[0] * ny + a->z[0] * nz;
    f4 pa1 = a->x[1] * nx + a->y[1] * ny + a->z[1] * nz;
    f4 pa2 = a->x[2] * nx + a->y[2] * ny + a->z[2] * nz;
    f4 pb0 = b->x[0] * nx + b->y[0] * ny + b->z[0] * nz;
    f4 pb1 = b->x[1] * nx + b->y[1] * ny + b->z[1] * nz;
    f4 pb2 = b->x[2] * nx + b->y[2] * ny + b->z[2] * nz;
    f4 alo = vmin(pa0, vmin(pa1, pa2)), ahi = vmax(pa0, vmax(pa1, pa2));
    f4 blo = vmin(pb0, vmin(pb1, pb2)), bhi = vmax(pb0, vmax(pb1, pb2));
    return any_lane((ahi < blo) | (bhi < alo));
}

// True when the projections s (lanes v0, v1, v2, v2) all lie strictly
// beyond one end of the range of the projections q.
static inline bool beyond_range(f4 s, f4 q) {
    float lo = carom_minf(q[0], carom_minf(q[1], q[2]));
    float hi = carom_maxf(q[0], carom_maxf(q[1], q[2]));
    return all_lanes(s > (f4){hi, hi, hi, hi}) || all_lanes(s < (f4){lo, lo, lo, lo});
}

static inline bool is_zero3(f4 v) { return i4_mask3(v != (f4){0, 0, 0, 0}) == 0; }

// The test proper, on corners of moderate size (see below): `size` bounds
// their coordinates.
static bool intersect_scaled(const f4 a[3], const f4 b[3], float size) {
    // Plane of each against the other's corners first: most near pairs of a
    // mesh query are settled here, before the second normal is computed.
    // Each normal is an axis like any other: the other triangle's corners
    // are measured against the range of the triangle's own corners on it,
    // not against its first corner alone. In exact arithmetic the range is
    // a point; in float a sliver's normal, the small difference of products
    // of its long edges, turns by about epsilon * length / width, and its
    // far corners leave the plane through its first one by more than a
    // triangle crossing the sliver may reach beyond it.
    f4 ea[3] = {a[1] - a[0], a[2] - a[1], a[0] - a[2]};
    f4 na = f4_cross(ea[0], ea[1]);
    if (is_zero3(na)) return false;
    f4 ax, ay, az, bx, by, bz;
    transpose3(a, &ax, &ay, &az);
    transpose3(b, &bx, &by, &bz);
    f4 nax = lane(na, 0), nay = lane(na, 1), naz = lane(na, 2);
    f4 a0x = lane(a[0], 0), a0y = lane(a[0], 1), a0z = lane(a[0], 2);
    f4 sa = (bx - a0x) * nax + (by - a0y) * nay + (bz - a0z) * naz;
    f4 qa = (ax - a0x) * nax + (ay - a0y) * nay + (az - a0z) * naz;
    if (beyond_range(sa, qa)) return false;
    f4 eb[3] = {b[1] - b[0], b[2] - b[1], b[0] - b[2]};
    f4 nb = f4_cross(eb[0], eb[1]);
    if (is_zero3(nb)) return false;
    f4 nbx = lane(nb, 0), nby = lane(nb, 1), nbz = lane(nb, 2);
    f4 b0x = lane(b[0], 0), b0y = lane(b[0], 1), b0z = lane(b[0], 2);
    f4 sb = (ax - b0x) * nbx + (ay - b0y) * nby + (az - b0z) * nbz;
    f4 qb = (bx - b0x) * nbx + (by - b0y) * nby + (bz - b0z) * nbz;
    if (beyond_range(sb, qb)) return false;

    // Triangles that cross each other's planes meet exactly when the
    // segments they cut on the planes' common line overlap, a fraction of
    // the axis test's cost. Its answer is taken only beyond bounds on its
    // rounding: the projections are good to a few epsilons of |d| * size,
    // which 1e-4 * |d|_1 * size covers many times; the plane distances to
    // about 44 epsilons of size * (L^2 + |n|_1), L the largest edge
    // component (the normal's own rounding is a few epsilons of L^2).
    // Everything closer, touching contacts above all, goes on to the axes,
    // so the answer is the axis test's.
    float la = f4_max3(f4_max(f4_abs(ea[0]), f4_max(f4_abs(ea[1]), f4_abs(ea[2]))));
    float lb = f4_max3(f4_max(f4_abs(eb[0]), f4_max(f4_abs(eb[1]), f4_abs(eb[2]))));
    f4 na_abs = f4_abs(na), nb_abs = f4_abs(nb);
    float ka = la * la + na_abs[0] + na_abs[1] + na_abs[2];
    float kb = lb * lb + nb_abs[0] + nb_abs[1] + nb_abs[2];
    f4 sa_err = (f4){ka, ka, ka, ka} * (64.0f * FLT_EPSILON * size);
    f4 sb_err = (f4){kb, kb, kb, kb} * (64.0f * FLT_EPSILON * size);
    // a[0] is the origin: the corners are already taken from it.
    const f4 pa[3] = {ax, ay, az}, pb[3] = {bx, by, bz};
    int verdict = mid_segment_verdict(pa, na, sb, sb_err, pb, nb, sa, sa_err, 1e-4f * size);
    if (verdict >= 0) return verdict;

    // The faces of the Minkowski difference of two triangles have normals
    // among na, nb, the nine edge cross products and, when the triangles are
    // coplanar or nearly so, the in-plane edge normals na x ea_i and nb x eb_j.
    // Testing this superset decides every configuration. Three axes per
    // batch, one lane repeated.
    corners ca = broadcast(a), cb = broadcast(b);
    f4 eax, eay, eaz, ebx, eby, ebz;
    transpose3(ea, &eax, &eay, &eaz);
    transpose3(eb, &ebx, &eby, &ebz);
    for (int j = 0; j < 3; ++j) {
        f4 x = lane(eb[j], 0), y = lane(eb[j], 1), z = lane(eb[j], 2);
        if (separated_on4(&ca, &cb, eay * z - eaz * y, eaz * x - eax * z, eax * y - eay * x)) {
            return false;
        }
    }
    f4 x = lane(na, 0), y = lane(na, 1), z = lane(na, 2);
    if (separated_on4(&ca, &cb, y * eaz - z * eay, z * eax - x * eaz, x * eay - y * eax)) return false;
    x = lane(nb, 0), y = lane(nb, 1), z = lane(nb, 2);
    if (separated_on4(&ca, &cb, y * ebz - z * eby, z * ebx - x * ebz, x * eby - y * ebx)) return false;
    return true;
}

// The larger of a triangle's edge extents (max |coordinate| of an edge).
static inline float edge_extent(const f4 v[3]) {
    return f4_max3(f4_max(f4_abs(v[1] - v[0]), f4_abs(v[2] - v[0])));
}

bool mid_triangles_intersect_f4(const f4 a[3], const f4 b[3]) {
    // The test is symmetric; the smaller triangle goes first, so that the
    // origin below is its corner: a triangle 1e-5 across taken from a
    // corner 1000 away would round to a segment, and a segment meets
    // nothing here.
    if (edge_extent(b) < edge_extent(a)) {
        const f4* t = a;
        a = b;
        b = t;
    }
    // The in-plane axes are products of three edges, and projections on
    // them of four: in float they overflow for triangles near 1e10 in size
    // (far-apart coplanar triangles then "intersect") and underflow below
    // about 1e-10. So the corners are taken relative to a's first one and,
    // when their size leaves [2^-16, 2^16], scaled by a power of two, which
    // is exact and changes no answer.
    f4 o = a[0];
    f4 pa[3] = {(f4){0, 0, 0, 0}, a[1] - o, a[2] - o};
    f4 pb[3] = {b[0] - o, b[1] - o, b[2] - o};
    f4 m = f4_max(f4_max(f4_abs(pa[1]), f4_abs(pa[2])),
                  f4_max(f4_abs(pb[0]), f4_max(f4_abs(pb[1]), f4_abs(pb[2]))));
    float size = f4_max3(m);
    if (!(size > 0.0f)) return false;  // every corner at one point: degenerate
    if (size > 65536.0f || size < 1.0f / 65536.0f) {
        // 2^-e for size in [2^e, 2^(e+1)): an exponent field of 254 - E.
        uint32_t bits;
        memcpy(&bits, &size, sizeof bits);
        uint32_t e = (bits >> 23) & 0xffu;
        uint32_t scale_bits = (e >= 1 && e <= 253 ? 254u - e : 127u) << 23;
        float scale;
        memcpy(&scale, &scale_bits, sizeof scale);
        for (int k = 0; k < 3; ++k) {
            pa[k] *= scale;
            pb[k] *= scale;
        }
        size *= scale;
    }
    return intersect_scaled(pa, pb, size);
}

bool mid_triangles_intersect(const vec3s a[3], const vec3s b[3]) {
    f4 fa[3] = {f4_from(a[0]), f4_from(a[1]), f4_from(a[2])};
    f4 fb[3] = {f4_from(b[0]), f4_from(b[1]), f4_from(b[2])};
    return mid_triangles_intersect_f4(fa, fb);
}

// Triangle against the box |x_i| <= h_i: the 13 axes of Akenine-Möller's test
// (box faces, triangle normal, box axes x triangle edges). In double, as
// the caller's corners are: the normal's projections are products of three
// coordinates, which in float underflow for triangles near 1e-13 in size
// (a triangle then "met" boxes well apart from it) and overflow near 1e13.
// The normal is an axis like the others, the triangle's range on it taken
// over all three corners: a sliver's normal is a little off even in
// double, and its far corners must not be taken for its first one.
// Plain comparisons, not fmin/fmax (library calls that must order NaN):
// the corners are finite.
static inline double min3(double a, double b, double c) {
    double m = a < b ? a : b;
    return m < c ? m : c;
}
static inline double max3(double a, double b, double c) {
    double m = a > b ? a : b;
    return m > c ? m : c;
}

static inline void project3(double v[3][3], const double a[3], double* lo, double* hi) {
    double p[3];
    for (int i = 0; i < 3; ++i) p[i] = carom_dot_double(v[i], a);
    *lo = min3(p[0], p[1], p[2]);
    *hi = max3(p[0], p[1], p[2]);
}

static inline bool apart_on(double v[3][3], const double h[3], const double a[3]) {
    double lo, hi;
    project3(v, a, &lo, &hi);
    double rad = h[0] * fabs(a[0]) + h[1] * fabs(a[1]) + h[2] * fabs(a[2]);
    return lo > rad || hi < -rad;
}

bool mid_triangle_box_intersect(double v[3][3], double e[3][3], const double h[3]) {
    for (int k = 0; k < 3; ++k) {
        double lo = min3(v[0][k], v[1][k], v[2][k]);
        double hi = max3(v[0][k], v[1][k], v[2][k]);
        if (lo > h[k] || hi < -h[k]) return false;
    }
    double n[3];
    carom_cross_double(e[0], e[1], n);
    if (n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0) return false;  // degenerate
    if (apart_on(v, h, n)) return false;
    for (int i = 0; i < 3; ++i) {
        // Unit axis k cross edge i, written out: (0, -e.z, e.y) for x, ...
        const double axes[3][3] = {{0.0, -e[i][2], e[i][1]},
                                   {e[i][2], 0.0, -e[i][0]},
                                   {-e[i][1], e[i][0], 0.0}};
        for (int k = 0; k < 3; ++k) {
            if (apart_on(v, h, axes[k])) return false;
        }
    }
    return true;
}

// Möller–Trumbore, both sides, closed edges. The determinant's sign is folded
// into the numerators instead of dividing early, so the accept tests compare
// like with like. The fraction is computed the same way whatever t_max is,
// so a tree walk (shrinking t_max) and a loop over all triangles (t_max = 1)
// see bit-identical fractions and pick the same closest hit. In double: the
// determinant is a product of two edges and the ray's direction, which in
// float underflows for triangles near 1e-19 in size (a ray of length 2 then
// "hit" a triangle 0.5 away), while double's range holds every product of
// float coordinates.
typedef struct ray_vec {
    double x, y, z;
} ray_vec;

static inline ray_vec ray_vec_of(vec3s a) { return (ray_vec){a.x, a.y, a.z}; }
static inline ray_vec ray_sub(ray_vec a, ray_vec b) {
    return (ray_vec){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline double ray_dot(ray_vec a, ray_vec b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline ray_vec ray_cross(ray_vec a, ray_vec b) {
    return (ray_vec){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

bool mid_ray_triangle(vec3s p, vec3s d, const vec3s v[3], float t_max, float* t) {
    const ray_vec v0 = ray_vec_of(v[0]), dir = ray_vec_of(d);
    const ray_vec e1 = ray_sub(ray_vec_of(v[1]), v0), e2 = ray_sub(ray_vec_of(v[2]), v0);
    const ray_vec q = ray_cross(dir, e2);
    const double det = ray_dot(e1, q);
    if (det == 0.0) return false;  // parallel to the plane, or degenerate
    const double sign = det > 0.0 ? 1.0 : -1.0, adet = det * sign;
    const ray_vec s = ray_sub(ray_vec_of(p), v0);
    const double u = ray_dot(s, q) * sign;
    if (u < 0.0 || u > adet) return false;
    const ray_vec r = ray_cross(s, e1);
    const double w = ray_dot(dir, r) * sign;
    if (w < 0.0 || u + w > adet) return false;
    const double tt = ray_dot(e2, r) * sign;
    if (tt < 0.0 || tt > adet) return false;
    // + 0: a hit at the start is +0, not -0.
    *t = carom_minf((float)(tt / adet), 1.0f) + 0.0f;
    return *t <= t_max;
}
