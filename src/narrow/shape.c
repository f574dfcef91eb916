// Shape constructors, validation, and the public face of the support mapping.
#include <float.h>
#include <string.h>

#include "narrow/support.h"

static carom_shape make(carom_shape_type type, float radius) {
    carom_shape s;
    memset(&s, 0, sizeof s);
    s.type = type;
    s.radius = radius;
    return s;
}

carom_shape carom_sphere(float radius) { return make(CAROM_SHAPE_POINT, radius); }

carom_shape carom_point(vec3s p) {
    carom_shape s = make(CAROM_SHAPE_POINT, 0.0f);
    s.u.point = p;
    return s;
}

carom_shape carom_segment(vec3s a, vec3s b) {
    carom_shape s = make(CAROM_SHAPE_SEGMENT, 0.0f);
    s.u.segment.a = a;
    s.u.segment.b = b;
    return s;
}

carom_shape carom_capsule(vec3s a, vec3s b, float radius) {
    carom_shape s = carom_segment(a, b);
    s.radius = radius;
    return s;
}

carom_shape carom_triangle(vec3s a, vec3s b, vec3s c) {
    carom_shape s = make(CAROM_SHAPE_TRIANGLE, 0.0f);
    s.u.triangle.a = a;
    s.u.triangle.b = b;
    s.u.triangle.c = c;
    return s;
}

carom_shape carom_box(vec3s half_extents) {
    carom_shape s = make(CAROM_SHAPE_BOX, 0.0f);
    s.u.half_extents = half_extents;
    return s;
}

carom_shape carom_cylinder(float half_height, float radius) {
    carom_shape s = make(CAROM_SHAPE_CYLINDER, 0.0f);
    s.u.cylinder.half_height = half_height;
    s.u.cylinder.radius = radius;
    return s;
}

carom_shape carom_cone(float half_height, float radius) {
    carom_shape s = make(CAROM_SHAPE_CONE, 0.0f);
    s.u.cone.half_height = half_height;
    s.u.cone.radius = radius;
    return s;
}

carom_shape carom_hull_shape(const carom_hull* hull) {
    carom_shape s = make(CAROM_SHAPE_HULL, 0.0f);
    s.u.hull = hull;
    return s;
}

carom_shape carom_affine(const carom_shape* child, mat3s linear, vec3s translation) {
    carom_shape s = make(CAROM_SHAPE_AFFINE, 0.0f);
    s.u.affine.child = child;
    s.u.affine.linear = linear;
    s.u.affine.translation = translation;
    return s;
}

carom_shape carom_minkowski_sum(const carom_shape* first, const carom_shape* second) {
    carom_shape s = make(CAROM_SHAPE_MINKOWSKI_SUM, 0.0f);
    s.u.pair.first = first;
    s.u.pair.second = second;
    return s;
}

carom_shape carom_convex_hull_of(const carom_shape* first, const carom_shape* second) {
    carom_shape s = make(CAROM_SHAPE_CONVEX_HULL, 0.0f);
    s.u.pair.first = first;
    s.u.pair.second = second;
    return s;
}

carom_shape carom_custom(carom_support_fn* fn, const void* user) {
    carom_shape s = make(CAROM_SHAPE_CUSTOM, 0.0f);
    s.u.custom.fn = fn;
    s.u.custom.user = user;
    return s;
}

static bool positive_size(float x) { return x > 0.0f && x <= CAROM_MAX_COORDINATE; }

// Everything the support mapping reads. A hull copied by hand with a field
// missing must be rejected here, not crash there.
static bool hull_is_built(const carom_hull* h) {
    return h && h->block && h->vertices && h->adjacency_first && h->adjacency && h->start_map && h->scan &&
           h->vertex_count >= 4 && h->scan_count == ((h->vertex_count + 3) & ~3);
}

static bool shape_check(const carom_shape* s, int depth) {
    // The depth cap also rejects shapes that refer to themselves, which would
    // otherwise recurse forever in the support mapping.
    if (!s || depth > CAROM_MAX_SHAPE_DEPTH) return false;
    if (!(s->radius >= 0.0f && s->radius <= CAROM_MAX_COORDINATE)) return false;
    switch (s->type) {
        case CAROM_SHAPE_POINT: return carom_vec3_is_valid(s->u.point);
        case CAROM_SHAPE_SEGMENT:
            return carom_vec3_is_valid(s->u.segment.a) && carom_vec3_is_valid(s->u.segment.b);
        case CAROM_SHAPE_TRIANGLE:
            return carom_vec3_is_valid(s->u.triangle.a) && carom_vec3_is_valid(s->u.triangle.b) &&
                   carom_vec3_is_valid(s->u.triangle.c);
        case CAROM_SHAPE_BOX:
            return positive_size(s->u.half_extents.x) && positive_size(s->u.half_extents.y) &&
                   positive_size(s->u.half_extents.z);
        case CAROM_SHAPE_CYLINDER:
            return positive_size(s->u.cylinder.half_height) && positive_size(s->u.cylinder.radius);
        case CAROM_SHAPE_CONE:
            return positive_size(s->u.cone.half_height) && positive_size(s->u.cone.radius);
        case CAROM_SHAPE_HULL: return hull_is_built(s->u.hull);
        case CAROM_SHAPE_AFFINE:
            for (int c = 0; c < 3; ++c) {
                if (!carom_vec3_is_valid(s->u.affine.linear.col[c])) return false;
            }
            return carom_vec3_is_valid(s->u.affine.translation) && shape_check(s->u.affine.child, depth + 1);
        case CAROM_SHAPE_MINKOWSKI_SUM:
        case CAROM_SHAPE_CONVEX_HULL:
            return shape_check(s->u.pair.first, depth + 1) && shape_check(s->u.pair.second, depth + 1);
        case CAROM_SHAPE_CUSTOM: return s->u.custom.fn != NULL;
        case CAROM_SHAPE_TYPE_COUNT: break;
    }
    return false;  // an unknown type tag
}

bool carom_shape_is_valid(const carom_shape* shape) { return shape_check(shape, 0); }

// An affine shape's core bounds per axis from its child's:
// |(B x)_i| <= sum_j |B_ij| |x_j|, plus the translation.
static vec3s affine_axis_extents(const carom_shape* s, vec3s child) {
    mat3s m = s->u.affine.linear;
    return v3_add(v3_add(v3_scale(v3_abs(m.col[0]), child.x), v3_scale(v3_abs(m.col[1]), child.y)),
                  v3_add(v3_scale(v3_abs(m.col[2]), child.z), v3_abs(s->u.affine.translation)));
}

// A bound on each |x_i| over the shape's points x in its local frame, radius
// included; false when unknown (user callbacks). Only affine maps need it:
// the Frobenius norm times the child's extent took a plate 0.0014 thick,
// turned edge-on by its map, for a shape 0.97 across, and every tolerance of
// the pair grew with it.
static bool axis_extents(const carom_shape* s, vec3s* out) {
    vec3s e;
    switch (s->type) {
        case CAROM_SHAPE_POINT: e = v3_abs(s->u.point); break;
        case CAROM_SHAPE_SEGMENT: e = v3_max(v3_abs(s->u.segment.a), v3_abs(s->u.segment.b)); break;
        case CAROM_SHAPE_TRIANGLE:
            e = v3_max(v3_abs(s->u.triangle.a), v3_max(v3_abs(s->u.triangle.b), v3_abs(s->u.triangle.c)));
            break;
        case CAROM_SHAPE_BOX: e = s->u.half_extents; break;
        case CAROM_SHAPE_CYLINDER:
        case CAROM_SHAPE_CONE: e = v3(s->u.cylinder.radius, s->u.cylinder.radius, s->u.cylinder.half_height); break;
        case CAROM_SHAPE_HULL: e = v3_max(v3_abs(s->u.hull->bounds.min), v3_abs(s->u.hull->bounds.max)); break;
        case CAROM_SHAPE_AFFINE: {
            vec3s child;
            if (!axis_extents(s->u.affine.child, &child)) return false;
            e = affine_axis_extents(s, child);
            break;
        }
        case CAROM_SHAPE_MINKOWSKI_SUM:
        case CAROM_SHAPE_CONVEX_HULL: {
            vec3s first, second;
            if (!axis_extents(s->u.pair.first, &first) || !axis_extents(s->u.pair.second, &second)) return false;
            e = s->type == CAROM_SHAPE_MINKOWSKI_SUM ? v3_add(first, second) : v3_max(first, second);
            break;
        }
        default: return false;  // a user callback
    }
    *out = v3_add(e, v3(s->radius, s->radius, s->radius));
    return true;
}

float carom_shape_extent(const carom_shape* s) {
    float core = 0.0f;
    switch (s->type) {
        case CAROM_SHAPE_POINT: core = sqrtf(v3_len2(s->u.point)); break;
        case CAROM_SHAPE_SEGMENT: core = sqrtf(fmaxf(v3_len2(s->u.segment.a), v3_len2(s->u.segment.b))); break;
        case CAROM_SHAPE_TRIANGLE:
            core = sqrtf(fmaxf(v3_len2(s->u.triangle.a), fmaxf(v3_len2(s->u.triangle.b), v3_len2(s->u.triangle.c))));
            break;
        case CAROM_SHAPE_BOX: core = sqrtf(v3_len2(s->u.half_extents)); break;
        case CAROM_SHAPE_CYLINDER:
        case CAROM_SHAPE_CONE:
            core = sqrtf(s->u.cylinder.half_height * s->u.cylinder.half_height +
                         s->u.cylinder.radius * s->u.cylinder.radius);
            break;
        case CAROM_SHAPE_HULL: {
            carom_aabb b = s->u.hull->bounds;
            core = sqrtf(v3_len2(v3_max(v3_abs(b.min), v3_abs(b.max))));
            break;
        }
        case CAROM_SHAPE_AFFINE: {
            float child = carom_shape_extent(s->u.affine.child);
            if (child == 0.0f) return 0.0f;
            // |B x| <= |B|_F |x|, or through the child's extents per axis.
            mat3s m = s->u.affine.linear;
            float frobenius2 = v3_len2(m.col[0]) + v3_len2(m.col[1]) + v3_len2(m.col[2]);
            core = sqrtf(frobenius2) * child + sqrtf(v3_len2(s->u.affine.translation));
            vec3s child_axes;
            if (axis_extents(s->u.affine.child, &child_axes)) {
                core = fminf(core, sqrtf(v3_len2(affine_axis_extents(s, child_axes))));
            }
            break;
        }
        case CAROM_SHAPE_MINKOWSKI_SUM:
        case CAROM_SHAPE_CONVEX_HULL: {
            float first = carom_shape_extent(s->u.pair.first), second = carom_shape_extent(s->u.pair.second);
            if (first == 0.0f || second == 0.0f) return 0.0f;
            core = s->type == CAROM_SHAPE_MINKOWSKI_SUM ? first + second : fmaxf(first, second);
            break;
        }
        default: return 0.0f;  // a user callback: unknown
    }
    // A point at the origin has extent 0 but is known: keep it nonzero.
    return fmaxf(core + s->radius, FLT_MIN);
}

vec3s carom_support_full(const carom_shape* shape, vec3s d, int hint, int* feature) {
    vec3s p = carom_support_core(shape, d, hint, feature);
    if (shape->radius > 0.0f) {
        float len2 = v3_len2(d);
        if (len2 > 0.0f) {
            p = v3_mad(p, d, shape->radius / sqrtf(len2));
        } else {
            p.x += shape->radius;
        }
    }
    return p;
}

vec3s carom_shape_support(const carom_shape* shape, vec3s direction, int* feature) {
    int f;
    if (v3_len2(direction) == 0.0f) direction = v3(1.0f, 0.0f, 0.0f);
    vec3s p = carom_support_full(shape, direction, -1, &f);
    if (feature) *feature = f;
    return p;
}

// The exact box of any convex shape: its supports along the six axis directions
// of the frame, here given as rows of `axes` in the shape's local frame.
static carom_aabb aabb_from_supports(const carom_shape* shape, const carom_rot* axes, vec3s offset) {
    float lo[3], hi[3];
    int f;
    for (int i = 0; i < 3; ++i) {
        vec3s d = axes->row[i];
        hi[i] = v3_dot(carom_support_full(shape, d, -1, &f), d);
        lo[i] = v3_dot(carom_support_full(shape, v3_neg(d), -1, &f), d);
    }
    carom_aabb box = {v3_add(v3(lo[0], lo[1], lo[2]), offset), v3_add(v3(hi[0], hi[1], hi[2]), offset)};
    return box;
}

carom_aabb carom_shape_local_aabb(const carom_shape* shape) {
    carom_rot identity = {{v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)}};
    return aabb_from_supports(shape, &identity, v3(0, 0, 0));
}

carom_aabb carom_shape_aabb(const carom_shape* shape, carom_xform xf) {
    // World axis i seen in the local frame is row i of the rotation matrix.
    carom_rot r = carom_rot_from_quat(xf.q);
    return aabb_from_supports(shape, &r, xf.p);
}
