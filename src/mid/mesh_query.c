// Queries of one mesh: box overlap and ray cast. Both bring the query into
// the mesh's frame and walk its tree with a bounded stack.
#include "mid/mesh_query.h"
#include "mid/walk.h"

// Relative slack on every box cull: the query is transformed in float, and a
// box test must never reject a triangle the exact leaf test would accept.
#define MID_CULL_SLACK 1e-5f

static bool mesh_is_usable(const carom_mesh* mesh) {
    return mesh && mesh->data && mesh->triangle_count > 0;
}

static float mesh_scale(const carom_mesh* mesh) {
    return carom_maxf(v3_max_abs(mesh->bounds.min), v3_max_abs(mesh->bounds.max));
}

// --- box overlap -----------------------------------------------------------------

bool mid_box_query_init(const carom_mesh* mesh, carom_xform pose, carom_aabb box,
                        mid_box_query* q) {
    if (!carom_xform_is_valid(pose) || !carom_aabb_is_valid(box)) return false;
    q->rot = carom_rot_from_quat(pose.q);
    // The box's centre from the pose's origin and its half extents, in
    // double for the leaf test; the mesh-frame centre and half extents
    // rounded to float for the node culls. The box's axes in the mesh frame
    // are the rows of rot.
    for (int j = 0; j < 3; ++j) {
        const double lo = box.min.raw[j], hi = box.max.raw[j];
        q->from_pose_d[j] = 0.5 * (lo + hi) - (double)pose.p.raw[j];
        q->half_d[j] = 0.5 * (hi - lo);
    }
    double center[3];
    for (int i = 0; i < 3; ++i) {  // rot^T applied: column i of rot
        const double column[3] = {q->rot.row[0].raw[i], q->rot.row[1].raw[i], q->rot.row[2].raw[i]};
        center[i] = carom_dot_double(column, q->from_pose_d);
    }
    q->center = v3((float)center[0], (float)center[1], (float)center[2]);
    q->half = v3((float)q->half_d[0], (float)q->half_d[1], (float)q->half_d[2]);
    for (int i = 0; i < 3; ++i) {
        q->abs_row[i] = v3_abs(q->rot.row[i]);
    }
    // Along mesh axis i the box reaches sum_k |rot_ki| half_k.
    q->extent = rot_apply_transposed(&(carom_rot){{q->abs_row[0], q->abs_row[1], q->abs_row[2]}},
                                     q->half);
    float scale = mesh_scale(mesh) + v3_max_abs(q->center) + v3_max_abs(q->half);
    q->slack = MID_CULL_SLACK * scale;
    if (!isfinite(q->slack) || !carom_vec3_is_valid(q->center)) return false;
    return true;
}

// The corners are turned into the box's frame (the world's axes, from the
// box's centre) in double: in float a small triangle far from the centre
// (1e-5 across, 1000 away) would round to a segment and be missed however
// deep in the box. They are turned from the mesh's origin, R v - (c - p),
// not from the box's centre in the mesh frame, R (v - R^T (c - p)): the
// float rotation is orthogonal only to about 1e-7, so that moved the box by
// 1e-7 of its centre's distance from the pose, and a triangle 1e-3 inside a
// box reaching 1e9 away was missed. The edges come from the corners' own
// differences, so that even a triangle far smaller than its distance from
// the centre (1e-10 across, 1e9 away, where its corners from the centre
// coincide in double) keeps its shape and its axes.
static void box_frame(const mid_box_query* q, const double d[3], double out[3]) {
    for (int i = 0; i < 3; ++i) {
        const double row[3] = {q->rot.row[i].x, q->rot.row[i].y, q->rot.row[i].z};
        out[i] = carom_dot_double(row, d);
    }
}

bool mid_box_query_triangle(const mid_box_query* q, const vec3s v[3]) {
    double w[3][3], e[3][3];
    for (int k = 0; k < 3; ++k) {
        double d[3], step[3];
        const vec3s next = v[(k + 1) % 3];
        for (int j = 0; j < 3; ++j) {
            d[j] = v[k].raw[j];
            step[j] = (double)next.raw[j] - (double)v[k].raw[j];
        }
        box_frame(q, d, w[k]);
        for (int i = 0; i < 3; ++i) w[k][i] -= q->from_pose_d[i];
        box_frame(q, step, e[k]);
    }
    return mid_triangle_box_intersect(w, e, q->half_d);
}

// The query's oriented box against a node's box, on the six face normals.
static bool box_overlaps_node(const mid_box_query* q, const mid_walk_node* n) {
    vec3s nc = v3_scale(f4_to(n->lo + n->hi), 0.5f);
    vec3s ne = v3_scale(f4_to(n->hi - n->lo), 0.5f);
    vec3s d = v3_sub(nc, q->center);
    for (int i = 0; i < 3; ++i) {  // mesh axes
        if (fabsf(d.raw[i]) > ne.raw[i] + q->extent.raw[i] + q->slack) return false;
    }
    // Box axes: row k of rot.
    for (int k = 0; k < 3; ++k) {
        float r = v3_dot(q->abs_row[k], ne) + q->half.raw[k] + q->slack;
        if (fabsf(v3_dot(q->rot.row[k], d)) > r) return false;
    }
    return true;
}

// Reports the triangles of one leaf that meet the query box; false when
// the callback stops.
static bool box_leaf(const mid_box_query* q, const struct carom_mesh_data* d, int first, int count,
                     carom_mesh_triangle_fn* fn, void* user, carom_mesh_query_result* r) {
    for (int t = first; t < first + count; ++t) {
        if (d->ids[t] & MID_DEGENERATE_BIT) continue;
        vec3s v[3];
        mid_triangle(d, t, v);
        ++r->triangle_tests;
        if (!mid_box_query_triangle(q, v)) continue;
        ++r->found;
        if (!fn(user, d->ids[t] & MID_ID_MASK)) {
            r->stopped = true;
            return false;
        }
    }
    return true;
}

// The same six face normals for the four boxes of a wide node, lane by
// lane: bit i of the result is set when lane i may meet the query box.
static unsigned box_overlaps_lanes(const mid_box_query* q, const mid_wide_node* n) {
    f4 c[3], e[3], d[3];
    for (int i = 0; i < 3; ++i) {
        memcpy(&c[i], n->center[i], sizeof c[i]);
        memcpy(&e[i], n->half[i], sizeof e[i]);
        float ci = q->center.raw[i];
        d[i] = c[i] - (f4){ci, ci, ci, ci};
    }
    i4 apart = {0, 0, 0, 0};
    for (int i = 0; i < 3; ++i) {
        float r = q->extent.raw[i] + q->slack;
        apart |= f4_abs(d[i]) > e[i] + (f4){r, r, r, r};
    }
    for (int k = 0; k < 3; ++k) {
        vec3s row = q->rot.row[k], abs_row = q->abs_row[k];
        float h = q->half.raw[k] + q->slack;
        f4 reach = e[0] * abs_row.x + e[1] * abs_row.y + e[2] * abs_row.z + (f4){h, h, h, h};
        f4 dist = d[0] * row.x + d[1] * row.y + d[2] * row.z;
        apart |= f4_abs(dist) > reach;
    }
    static const unsigned used[5] = {0, 1, 3, 7, 15};
    return ~(unsigned)i4_mask4(apart) & used[n->count];
}

// On an AABB tree's wide nodes: the lanes that meet the box are pushed last
// first, so results still come in tree order. At most three pending lanes
// per wide level, plus one.
static void overlap_box_wide(const mid_box_query* q, const carom_mesh* mesh,
                             carom_mesh_triangle_fn* fn, void* user, carom_mesh_query_result* r) {
    const struct carom_mesh_data* d = mesh->data;
    int stack[3 * CAROM_MESH_MAX_DEPTH + 4];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        int ref = stack[--top];
        if (ref < 0) {
            if (!box_leaf(q, d, mid_leaf_first(ref), mid_leaf_count(ref), fn, user, r)) return;
            continue;
        }
        const mid_wide_node* n = &d->wide_nodes[ref];
        r->node_tests += n->count;
        unsigned hit = box_overlaps_lanes(q, n);
        for (int i = 3; i >= 0; --i) {
            if (hit >> i & 1) stack[top++] = n->child[i];
        }
    }
}

carom_mesh_query_result carom_mesh_overlap_box(const carom_mesh* mesh, carom_xform pose,
                                               carom_aabb box, carom_mesh_triangle_fn* fn,
                                               void* user) {
    carom_mesh_query_result r = {0};
    mid_box_query q;
    if (!mesh_is_usable(mesh) || !fn || !mid_box_query_init(mesh, pose, box, &q)) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    const struct carom_mesh_data* d = mesh->data;
    mid_tree tree = mid_tree_of(mesh);
    mid_walk_node stack[CAROM_MESH_MAX_DEPTH + 2];
    int top = 1;
    mid_walk_root(&tree, &stack[0]);
    if (d->wide_nodes) {
        // The root's own box first, as the walk below tests a root.
        ++r.node_tests;
        if (box_overlaps_node(&q, &stack[0])) overlap_box_wide(&q, mesh, fn, user, &r);
        return r;
    }
    while (top > 0) {
        mid_walk_node n = stack[--top];
        ++r.node_tests;
        if (!box_overlaps_node(&q, &n)) continue;
        if (n.leaf) {
            if (!box_leaf(&q, d, n.first, n.count, fn, user, &r)) return r;
            continue;
        }
        // Right first so the left subtree is visited first: results come in
        // tree order.
        mid_walk_children(&tree, &n, &stack[top + 1], &stack[top]);
        top += 2;
    }
    return r;
}

// --- ray cast --------------------------------------------------------------------

bool mid_ray_init(const carom_mesh* mesh, carom_xform pose, carom_ray ray, mid_ray* q) {
    if (!carom_xform_is_valid(pose) || !carom_vec3_is_valid(ray.origin) ||
        !carom_vec3_is_valid(ray.translation)) {
        return false;
    }
    q->rot = carom_rot_from_quat(pose.q);
    q->origin = rot_apply_transposed(&q->rot, v3_sub(ray.origin, pose.p));
    q->dir = rot_apply_transposed(&q->rot, ray.translation);
    if (!carom_vec3_is_valid(q->origin) || !carom_vec3_is_valid(q->dir)) return false;
    float scale = mesh_scale(mesh) + v3_max_abs(q->origin) + v3_max_abs(q->dir);
    q->slack = MID_CULL_SLACK * scale;
    q->origin4 = f4_from(q->origin);
    // Infinite for a zero component: see mid_slab_enter.
    q->inv_dir4 = f4_make(1.0f / q->dir.x, 1.0f / q->dir.y, 1.0f / q->dir.z);
    q->slack4 = f4_make(q->slack, q->slack, q->slack);
    return true;
}

// A ray's walk: what its leaves need, and the best hit so far (least t,
// ties to the lower caller index; the walk holds t).
typedef struct ray_walk {
    const struct carom_mesh_data* d;
    const mid_ray* q;
    bool any;
    int id;
    int position;  // tree position of the best hit, -1 for none
} ray_walk;

static bool ray_leaf(void* ctx, const mid_walk_node* n, float* best_t) {
    ray_walk* w = ctx;
    for (int p = n->first; p < n->first + n->count; ++p) {
        if (w->d->ids[p] & MID_DEGENERATE_BIT) continue;
        vec3s v[3];
        mid_triangle(w->d, p, v);
        float t;
        if (!mid_ray_triangle(w->q->origin, w->q->dir, v, *best_t, &t)) continue;
        int id = w->d->ids[p] & MID_ID_MASK;
        if (t < *best_t || (t == *best_t && id < w->id)) {
            *best_t = t;
            w->id = id;
            w->position = p;
            if (w->any) return true;
        }
    }
    return false;
}

static carom_mesh_hit make_hit(const mid_ray* q, carom_ray ray, const ray_walk* best,
                               float best_t) {
    carom_mesh_hit hit = {0};
    hit.triangle = -1;
    if (best->position < 0) return hit;
    vec3s v[3];
    mid_triangle(best->d, best->position, v);
    vec3s n = mid_triangle_normal(v);
    if (v3_dot(n, q->dir) > 0.0f) n = v3_neg(n);
    hit.hit = true;
    hit.triangle = best->id;
    hit.fraction = best_t;
    hit.point = v3_mad(ray.origin, ray.translation, best_t);
    hit.normal = rot_apply(&q->rot, n);
    return hit;
}

carom_mesh_hit carom_mesh_raycast(const carom_mesh* mesh, carom_xform pose, carom_ray ray,
                                  carom_ray_mode mode) {
    carom_mesh_hit none = {0};
    none.triangle = -1;
    mid_ray q;
    if (!mesh_is_usable(mesh) || !mid_ray_init(mesh, pose, ray, &q)) {
        none.state = CAROM_INVALID_INPUT;
        return none;
    }
    // Exactly zero: a point has nothing to cross (the squared length would
    // underflow for a tiny but real translation).
    if (q.dir.x == 0.0f && q.dir.y == 0.0f && q.dir.z == 0.0f) return none;
    ray_walk best = {mesh->data, &q, mode == CAROM_RAY_ANY, 0x7fffffff, -1};
    mid_tree tree = mid_tree_of(mesh);
    mid_sweep sweep = {q.origin4, q.inv_dir4, q.slack4, f4_from(q.dir)};
    float best_t = 1.0f;
    mid_sweep_walk(&tree, &sweep, &best_t, ray_leaf, &best);
    return make_hit(&q, ray, &best, best_t);
}
