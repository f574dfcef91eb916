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
    vec3s center = v3_scale(v3_add(box.min, box.max), 0.5f);
    q->half = v3_scale(v3_sub(box.max, box.min), 0.5f);
    // Mesh-frame centre; the box's axes in the mesh frame are the rows of rot.
    q->center = rot_apply_transposed(&q->rot, v3_sub(center, pose.p));
    for (int i = 0; i < 3; ++i) {
        q->abs_row[i] = v3_abs(q->rot.row[i]);
    }
    float scale = mesh_scale(mesh) + v3_max_abs(q->center) + v3_max_abs(q->half);
    q->slack = MID_CULL_SLACK * scale;
    if (!isfinite(q->slack) || !carom_vec3_is_valid(q->center)) return false;
    return true;
}

bool mid_box_query_triangle(const mid_box_query* q, const vec3s v[3]) {
    vec3s w[3];
    for (int k = 0; k < 3; ++k) w[k] = rot_apply(&q->rot, v3_sub(v[k], q->center));
    return mid_triangle_box_intersect(w, q->half);
}

// The query's oriented box against a node's box, on the six face normals.
static bool box_overlaps_node(const mid_box_query* q, const mid_walk_node* n) {
    vec3s nc = v3_scale(f4_to(n->lo + n->hi), 0.5f);
    vec3s ne = v3_scale(f4_to(n->hi - n->lo), 0.5f);
    vec3s d = v3_sub(nc, q->center);
    // Mesh axes: the box's extent along mesh axis i is sum_k |rot_ki| half_k.
    vec3s ext = rot_apply_transposed(&(carom_rot){{q->abs_row[0], q->abs_row[1], q->abs_row[2]}},
                                     q->half);
    for (int i = 0; i < 3; ++i) {
        if (fabsf(d.raw[i]) > ne.raw[i] + ext.raw[i] + q->slack) return false;
    }
    // Box axes: row k of rot.
    for (int k = 0; k < 3; ++k) {
        float r = v3_dot(q->abs_row[k], ne) + q->half.raw[k] + q->slack;
        if (fabsf(v3_dot(q->rot.row[k], d)) > r) return false;
    }
    return true;
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
    while (top > 0) {
        mid_walk_node n = stack[--top];
        ++r.node_tests;
        if (!box_overlaps_node(&q, &n)) continue;
        if (n.leaf) {
            for (int t = n.first; t < n.first + n.count; ++t) {
                if (d->ids[t] & MID_DEGENERATE_BIT) continue;
                vec3s v[3];
                mid_triangle(d, t, v);
                ++r.triangle_tests;
                if (!mid_box_query_triangle(&q, v)) continue;
                ++r.found;
                if (!fn(user, d->ids[t] & MID_ID_MASK)) {
                    r.stopped = true;
                    return r;
                }
            }
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
    for (int k = 0; k < 3; ++k) q->inv_dir.raw[k] = 1.0f / q->dir.raw[k];  // see mid_slab_enter
    q->origin4 = f4_from(q->origin);
    q->inv_dir4 = f4_make(q->inv_dir.x, q->inv_dir.y, q->inv_dir.z);
    q->slack4 = f4_make(q->slack, q->slack, q->slack);
    return true;
}

// Entry parameter of the ray into the (inflated) node box, or INFINITY.
static inline float ray_enter(const mid_ray* q, const mid_walk_node* n, float t_max) {
    return mid_slab_enter(n->lo, n->hi, q->slack4, q->origin4, q->inv_dir4, t_max);
}

// Best hit so far: least t, ties to the lower caller index.
typedef struct ray_best {
    float t;
    int id;
    int position;
} ray_best;

static bool ray_leaf(const carom_mesh* mesh, const mid_ray* q, const mid_walk_node* n, ray_best* best,
                     carom_mesh_query_result* r, bool any) {
    const struct carom_mesh_data* d = mesh->data;
    for (int p = n->first; p < n->first + n->count; ++p) {
        if (d->ids[p] & MID_DEGENERATE_BIT) continue;
        vec3s v[3];
        mid_triangle(d, p, v);
        ++r->triangle_tests;
        float t;
        if (!mid_ray_triangle(q->origin, q->dir, v, best->t, &t)) continue;
        int id = d->ids[p] & MID_ID_MASK;
        if (t < best->t || (t == best->t && id < best->id)) {
            best->t = t;
            best->id = id;
            best->position = p;
            if (any) return true;
        }
    }
    return false;
}

static carom_mesh_hit make_hit(const carom_mesh* mesh, const mid_ray* q, carom_ray ray,
                               const ray_best* best) {
    carom_mesh_hit hit = {0};
    hit.triangle = -1;
    if (best->position < 0) return hit;
    vec3s v[3];
    mid_triangle(mesh->data, best->position, v);
    vec3s n = v3_cross(v3_sub(v[1], v[0]), v3_sub(v[2], v[0]));
    if (v3_dot(n, q->dir) > 0.0f) n = v3_neg(n);
    n = rot_apply(&q->rot, n);
    hit.hit = true;
    hit.triangle = best->id;
    hit.fraction = best->t;
    hit.point = v3_mad(ray.origin, ray.translation, best->t);
    hit.normal = v3_scale(n, 1.0f / sqrtf(v3_len2(n)));
    return hit;
}

// The walk on an AABB tree: the stack keeps node indices, not boxes, and
// each step reads the two children (one cache line) straight from the nodes.
static void ray_walk_aabb(const carom_mesh* mesh, const mid_ray* q, ray_best* best, bool any) {
    const mid_aabb_node* nodes = mesh->data->aabb_nodes;
    carom_mesh_query_result stats = {0};
    struct {
        int index;
        float t;
    } stack[CAROM_MESH_MAX_DEPTH + 2];
    mid_walk_node n;
    mid_tree tree = mid_tree_of(mesh);
    mid_walk_aabb(&tree, 0, &n);
    stack[0].index = 0;
    stack[0].t = ray_enter(q, &n, best->t);
    int top = stack[0].t <= best->t;
    while (top > 0) {
        --top;
        if (stack[top].t > best->t) continue;  // found something closer meanwhile
        const mid_aabb_node* node = &nodes[stack[top].index];
        if (node->count > 0) {
            mid_walk_node leaf = {.first = node->first, .count = node->count, .leaf = true};
            if (ray_leaf(mesh, q, &leaf, best, &stats, any)) return;
            continue;
        }
        mid_walk_node c[2];
        mid_walk_aabb(&tree, node->first, &c[0]);
        mid_walk_aabb(&tree, node->first + 1, &c[1]);
        float t0 = ray_enter(q, &c[0], best->t), t1 = ray_enter(q, &c[1], best->t);
        int near = t1 < t0;  // visit the nearer child first: push it last
        float tn = near ? t1 : t0, tf = near ? t0 : t1;
        if (tf <= best->t) {
            stack[top].index = node->first + 1 - near;
            stack[top++].t = tf;
        }
        if (tn <= best->t) {
            stack[top].index = node->first + near;
            stack[top++].t = tn;
        }
    }
}

// The walk on any tree, boxes on the stack (the boxtree derives each
// child's box from its parent's).
static void ray_walk(const carom_mesh* mesh, const mid_ray* q, ray_best* best, bool any) {
    carom_mesh_query_result stats = {0};
    mid_tree tree = mid_tree_of(mesh);
    // A pending sibling per level at most, plus the node in hand.
    struct {
        mid_walk_node node;
        float t;
    } stack[CAROM_MESH_MAX_DEPTH + 2];
    mid_walk_root(&tree, &stack[0].node);
    stack[0].t = ray_enter(q, &stack[0].node, best->t);
    int top = stack[0].t <= best->t;
    while (top > 0) {
        --top;
        if (stack[top].t > best->t) continue;
        mid_walk_node n = stack[top].node;
        if (n.leaf) {
            if (ray_leaf(mesh, q, &n, best, &stats, any)) return;
            continue;
        }
        mid_walk_node c[2];
        mid_walk_children(&tree, &n, &c[0], &c[1]);
        float t0 = ray_enter(q, &c[0], best->t), t1 = ray_enter(q, &c[1], best->t);
        int near = t1 < t0;
        float tn = near ? t1 : t0, tf = near ? t0 : t1;
        if (tf <= best->t) {
            stack[top].node = c[1 - near];
            stack[top++].t = tf;
        }
        if (tn <= best->t) {
            stack[top].node = c[near];
            stack[top++].t = tn;
        }
    }
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
    ray_best best = {1.0f, 0x7fffffff, -1};
    if (mesh->tree == CAROM_TREE_BOXTREE) {
        ray_walk(mesh, &q, &best, mode == CAROM_RAY_ANY);
    } else {
        ray_walk_aabb(mesh, &q, &best, mode == CAROM_RAY_ANY);
    }
    return make_hit(mesh, &q, ray, &best);
}
