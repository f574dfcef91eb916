// Convex shape cast against a mesh: the shape's swept box walks the tree
// like a thick ray, and each triangle it reaches is cast against by GJK.
#include "carom/cast.h"
#include "mid/mesh_query.h"
#include "mid/walk.h"

// The moving shape in the mesh's frame, and its box there as a thick ray.
typedef struct mid_cast {
    carom_rot rot;         // the mesh's rotation
    carom_xform relative;  // the shape's pose in the mesh's frame
    carom_rot relative_rot;
    vec3s translation;     // in the mesh's frame
    float margin;          // well above the cast's touch and floor tolerances
    mid_sweep sweep;       // the shape's box as a thick segment
} mid_cast;

static bool cast_init(const carom_mesh* mesh, carom_xform pose, const carom_shape* shape,
                      carom_xform shape_pose, vec3s translation, mid_cast* c) {
    if (!mesh || !mesh->data || mesh->triangle_count <= 0 || !carom_xform_is_valid(pose) ||
        !carom_xform_is_valid(shape_pose) || !carom_vec3_is_valid(translation) ||
        !carom_shape_is_valid(shape)) {
        return false;
    }
    // Normalised, so the conjugate is the inverse (poses may be off unit
    // length within CAROM_QUAT_TOLERANCE).
    versors q = glms_quat_normalize(pose.q);
    c->rot = carom_rot_from_quat(q);
    c->relative.p = rot_apply_transposed(&c->rot, v3_sub(shape_pose.p, pose.p));
    c->relative.q = carom_quat_relative(q, shape_pose.q);
    c->translation = rot_apply_transposed(&c->rot, translation);
    carom_aabb box = carom_shape_aabb(shape, c->relative);
    if (!carom_aabb_is_valid(box) || !carom_vec3_is_valid(c->relative.p)) return false;
    vec3s centre = v3_scale(v3_add(box.min, box.max), 0.5f);
    vec3s half = v3_scale(v3_sub(box.max, box.min), 0.5f);
    float scale = carom_maxf(v3_max_abs(mesh->bounds.min), v3_max_abs(mesh->bounds.max)) +
                  v3_max_abs(centre) + v3_max_abs(half) + v3_max_abs(c->translation);
    // Node boxes grow by the shape's half extents (a Minkowski sum with its
    // box) and by a slack covering rounding and every tolerance under which
    // the cast counts a near miss as touching (up to CAROM_GJK_FLOOR_TOLERANCE
    // of its own scale, which can be a few times this sum-of-maxima scale).
    float slack = 1e-3f * scale;
    c->margin = 1e-3f * scale;
    c->relative_rot = carom_rot_from_quat(c->relative.q);
    c->sweep.origin = f4_from(centre);
    c->sweep.grow = f4_from(v3_add(half, v3(slack, slack, slack)));
    c->sweep.inv_dir =
        f4_make(1.0f / c->translation.x, 1.0f / c->translation.y, 1.0f / c->translation.z);
    c->sweep.dir = f4_from(c->translation);
    return isfinite(slack);
}

typedef struct cast_best {
    const struct carom_mesh_data* d;
    const carom_shape* shape;
    const mid_cast* c;
    carom_cast_result r;  // in the mesh's frame
    int id;               // caller's triangle index, INT_MAX for none
} cast_best;

bool mid_cast_triangle(const carom_shape* shape, carom_xform relative, vec3s translation,
                       const vec3s v[3], carom_cast_result* out) {
    carom_shape tri = carom_triangle(v[0], v[1], v[2]);
    *out = carom_gjk_shape_cast(shape, relative, translation, &tri, carom_xform_identity());
    return out->state != CAROM_INVALID_INPUT && out->hit;
}

// The shape's extent along unit n (mesh frame) at the start of the cast.
static void shape_extent(const carom_shape* shape, const mid_cast* c, vec3s n, float* lo,
                         float* hi) {
    vec3s local = rot_apply_transposed(&c->relative_rot, n);
    vec3s top = carom_shape_support(shape, local, NULL);
    vec3s bottom = carom_shape_support(shape, v3_neg(local), NULL);
    float base = v3_dot(n, c->relative.p);
    *hi = base + v3_dot(local, top);
    *lo = base + v3_dot(local, bottom);
}

// The earliest the sweep can come within `margin` of the triangle along its
// normal: no cast can touch the triangle before then, so a triangle reached
// only after the best hit so far is skipped without its GJK cast. The
// triangle's own corners give its range on the normal, rather than its
// first corner alone: the normal is then just an axis, and an axis a little
// off (a sliver's, by rounding) still bounds the triangle, where a plane
// through one corner would leave its far corners out.
static float plane_time(const carom_shape* shape, const mid_cast* c, const vec3s v[3]) {
    vec3s n = mid_triangle_normal(v);
    if (n.x == 0.0f && n.y == 0.0f && n.z == 0.0f) return 0.0f;
    float d0 = v3_dot(n, v[0]), d1 = v3_dot(n, v[1]), d2 = v3_dot(n, v[2]);
    float top = carom_maxf(d0, carom_maxf(d1, d2)), bottom = carom_minf(d0, carom_minf(d1, d2));
    float lo, hi;
    shape_extent(shape, c, n, &lo, &hi);
    float approach = v3_dot(n, c->translation);
    if (lo - top > c->margin) {
        return approach < 0.0f ? (lo - top - c->margin) / -approach : INFINITY;
    }
    if (bottom - hi > c->margin) {
        return approach > 0.0f ? (bottom - hi - c->margin) / approach : INFINITY;
    }
    return 0.0f;
}

static bool cast_leaf(void* ctx, const mid_walk_node* n, float* limit) {
    cast_best* best = ctx;
    const struct carom_mesh_data* d = best->d;
    for (int p = n->first; p < n->first + n->count; ++p) {
        if (d->ids[p] & MID_DEGENERATE_BIT) continue;
        vec3s v[3];
        mid_triangle(d, p, v);
        if (best->id != 0x7fffffff && plane_time(best->shape, best->c, v) > best->r.fraction) continue;
        carom_cast_result r;
        if (!mid_cast_triangle(best->shape, best->c->relative, best->c->translation, v, &r)) continue;
        int id = d->ids[p] & MID_ID_MASK;
        if (r.fraction < best->r.fraction || (r.fraction == best->r.fraction && id < best->id)) {
            best->r = r;
            best->id = id;
            // A triangle whose box the shape's box enters after this hit
            // cannot be hit before it; ties are still visited.
            *limit = carom_minf(r.fraction, 1.0f);
        }
    }
    return false;
}

carom_mesh_hit carom_mesh_shape_cast(const carom_mesh* mesh, carom_xform pose,
                                     const carom_shape* shape, carom_xform shape_pose,
                                     vec3s translation) {
    carom_mesh_hit hit = {0};
    hit.triangle = -1;
    mid_cast c = {0};
    if (!cast_init(mesh, pose, shape, shape_pose, translation, &c)) {
        hit.state = CAROM_INVALID_INPUT;
        return hit;
    }
    cast_best best = {mesh->data, shape, &c, {0}, 0x7fffffff};
    best.r.fraction = INFINITY;
    mid_tree tree = mid_tree_of(mesh);
    float limit = 1.0f;
    mid_sweep_walk(&tree, &c.sweep, &limit, cast_leaf, &best);
    if (best.id == 0x7fffffff) return hit;
    hit.state = best.r.state == CAROM_MAX_ITERATIONS ? CAROM_MAX_ITERATIONS : CAROM_DONE;
    hit.hit = true;
    hit.triangle = best.id;
    hit.fraction = best.r.fraction;
    hit.point = v3_add(rot_apply(&c.rot, best.r.point), pose.p);
    hit.normal = rot_apply(&c.rot, best.r.normal);
    return hit;
}
