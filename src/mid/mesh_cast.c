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
    f4 origin, inv_dir, inflate;
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
    c->relative.q = glms_quat_mul(glms_quat_conjugate(q), shape_pose.q);
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
    c->origin = f4_from(centre);
    c->inflate = f4_from(v3_add(half, v3(slack, slack, slack)));
    c->inv_dir = f4_make(1.0f / c->translation.x, 1.0f / c->translation.y, 1.0f / c->translation.z);
    return isfinite(slack);
}

// Entry of the thick ray into a node's box, or INFINITY.
static inline float cast_enter(const mid_cast* c, const mid_walk_node* n, float t_max) {
    return mid_slab_enter(n->lo, n->hi, c->inflate, c->origin, c->inv_dir, t_max);
}

typedef struct cast_best {
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

// The earliest the sweep can come within `margin` of the triangle's plane:
// no cast can touch the triangle before then, so a triangle whose plane is
// reached only after the best hit so far is skipped without its GJK cast.
static float plane_time(const carom_shape* shape, const mid_cast* c, const vec3s v[3]) {
    vec3s n = v3_cross(v3_sub(v[1], v[0]), v3_sub(v[2], v[0]));
    float len = sqrtf(v3_len2(n));
    if (!(len > 0.0f) || !isfinite(len)) return 0.0f;
    n = v3_scale(n, 1.0f / len);
    float d = v3_dot(n, v[0]), lo, hi;
    shape_extent(shape, c, n, &lo, &hi);
    float approach = v3_dot(n, c->translation);
    if (lo - d > c->margin) return approach < 0.0f ? (lo - d - c->margin) / -approach : INFINITY;
    if (d - hi > c->margin) return approach > 0.0f ? (d - hi - c->margin) / approach : INFINITY;
    return 0.0f;
}

static void cast_leaf(const carom_mesh* mesh, const carom_shape* shape, const mid_cast* c,
                      const mid_walk_node* n, cast_best* best) {
    const struct carom_mesh_data* d = mesh->data;
    for (int p = n->first; p < n->first + n->count; ++p) {
        if (d->ids[p] & MID_DEGENERATE_BIT) continue;
        vec3s v[3];
        mid_triangle(d, p, v);
        if (best->id != 0x7fffffff && plane_time(shape, c, v) > best->r.fraction) continue;
        carom_cast_result r;
        if (!mid_cast_triangle(shape, c->relative, c->translation, v, &r)) continue;
        int id = d->ids[p] & MID_ID_MASK;
        if (r.fraction < best->r.fraction || (r.fraction == best->r.fraction && id < best->id)) {
            best->r = r;
            best->id = id;
        }
    }
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
    cast_best best = {{0}, 0x7fffffff};
    best.r.fraction = INFINITY;
    mid_tree tree = mid_tree_of(mesh);
    struct {
        mid_walk_node node;
        float t;
    } stack[CAROM_MESH_MAX_DEPTH + 2];
    mid_walk_root(&tree, &stack[0].node);
    stack[0].t = cast_enter(&c, &stack[0].node, 1.0f);
    int top = stack[0].t <= 1.0f;
    while (top > 0) {
        --top;
        // A triangle whose box the shape's box enters after the best hit so
        // far cannot be hit before it. Ties are visited: the lower index wins.
        float limit = carom_minf(best.r.fraction, 1.0f);
        if (stack[top].t > limit) continue;
        mid_walk_node n = stack[top].node;
        if (n.leaf) {
            cast_leaf(mesh, shape, &c, &n, &best);
            continue;
        }
        mid_walk_node k[2];
        mid_walk_children(&tree, &n, &k[0], &k[1]);
        float t0 = cast_enter(&c, &k[0], limit), t1 = cast_enter(&c, &k[1], limit);
        int near = t1 < t0;
        float tn = near ? t1 : t0, tf = near ? t0 : t1;
        if (tf <= limit) {
            stack[top].node = k[1 - near];
            stack[top++].t = tf;
        }
        if (tn <= limit) {
            stack[top].node = k[near];
            stack[top++].t = tn;
        }
    }
    if (best.id == 0x7fffffff) return hit;
    hit.state = best.r.state == CAROM_MAX_ITERATIONS ? CAROM_MAX_ITERATIONS : CAROM_DONE;
    hit.hit = true;
    hit.triangle = best.id;
    hit.fraction = best.r.fraction;
    hit.point = v3_add(rot_apply(&c.rot, best.r.point), pose.p);
    hit.normal = rot_apply(&c.rot, best.r.normal);
    return hit;
}
