// Mesh against mesh: both trees descended together in a's frame.
#include "core/simd.h"
#include "mid/mesh_query.h"

#define MID_CULL_SLACK 1e-5f

static float mesh_scale(const carom_mesh* m) {
    return carom_maxf(v3_max_abs(m->bounds.min), v3_max_abs(m->bounds.max));
}

bool mid_pair_frame_init(const carom_mesh* a, carom_xform pose_a, const carom_mesh* b,
                         carom_xform pose_b, mid_pair_frame* f) {
    if (!carom_xform_is_valid(pose_a) || !carom_xform_is_valid(pose_b)) return false;
    carom_rot ra = carom_rot_from_quat(pose_a.q), rb = carom_rot_from_quat(pose_b.q);
    // rot = ra^T rb: column j is ra^T applied to rb's column j.
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            f->rot.row[i].raw[j] = ra.row[0].raw[i] * rb.row[0].raw[j] +
                                   ra.row[1].raw[i] * rb.row[1].raw[j] +
                                   ra.row[2].raw[i] * rb.row[2].raw[j];
        }
    }
    f->trans = rot_apply_transposed(&ra, v3_sub(pose_b.p, pose_a.p));
    for (int i = 0; i < 3; ++i) {
        f->abs_row[i] = v3_abs(f->rot.row[i]);
        f->abs_col[i] = v3(fabsf(f->rot.row[0].raw[i]), fabsf(f->rot.row[1].raw[i]),
                           fabsf(f->rot.row[2].raw[i]));
    }
    float scale = mesh_scale(a) + mesh_scale(b) + v3_max_abs(f->trans);
    f->slack = MID_CULL_SLACK * scale;
    return isfinite(f->slack);
}

bool mid_pair_frame_triangles(const mid_pair_frame* f, const vec3s va[3], const vec3s vb[3]) {
    vec3s w[3];
    for (int k = 0; k < 3; ++k) w[k] = v3_add(rot_apply(&f->rot, vb[k]), f->trans);
    // The triangles' boxes first: most leaf pairs of a mesh query are apart
    // on some coordinate axis, and this settles them for a few comparisons.
    for (int k = 0; k < 3; ++k) {
        float alo = carom_minf(va[0].raw[k], carom_minf(va[1].raw[k], va[2].raw[k]));
        float ahi = carom_maxf(va[0].raw[k], carom_maxf(va[1].raw[k], va[2].raw[k]));
        float blo = carom_minf(w[0].raw[k], carom_minf(w[1].raw[k], w[2].raw[k]));
        float bhi = carom_maxf(w[0].raw[k], carom_maxf(w[1].raw[k], w[2].raw[k]));
        if (ahi < blo || bhi < alo) return false;
    }
    return mid_triangles_intersect(va, w);
}

// One mesh's side of a collide query: the map from its frame into the other
// mesh's frame, x_other = rot x + trans, kept as columns for broadcasts.
typedef struct side {
    const carom_mesh* mesh;
    f4 col[3];
    f4 abs_col[3];
    f4 trans;
} side;

// A node with its box both ways: centre and half extents in its own frame,
// and the centre and the half extents of its rotated box projected on the
// other mesh's axes. Each node is set up once, when its parent is unfolded,
// and then tested against many nodes of the other tree for 24 flops a test.
typedef struct hnode {
    f4 c, e;
    f4 c_other, e_other;
    float size;
    mid_node n;
} hnode;

static void hnode_set(const side* s, hnode* h) {
    f4 lo = f4_from(h->n.min), hi = f4_from(h->n.max);
    h->c = (lo + hi) * 0.5f;
    h->e = (hi - lo) * 0.5f;
    h->c_other = s->col[0] * h->c[0] + s->col[1] * h->c[1] + s->col[2] * h->c[2] + s->trans;
    h->e_other = s->abs_col[0] * h->e[0] + s->abs_col[1] * h->e[1] + s->abs_col[2] * h->e[2];
    h->size = h->e[0] + h->e[1] + h->e[2];
}

// SAT-lite: the two boxes on the six face normals (three axes of each).
static inline bool hnodes_overlap(const hnode* a, const hnode* b, f4 slack) {
    f4 ga = f4_abs(b->c_other - a->c) - (a->e + b->e_other);
    f4 gb = f4_abs(a->c_other - b->c) - (b->e + a->e_other);
    f4 g = f4_max(ga, gb);
    return !(g[0] > slack[0] || g[1] > slack[0] || g[2] > slack[0]);
}

typedef struct collide_ctx {
    side a, b;
    const mid_pair_frame* f;
    f4 slack;
    carom_mesh_pair_fn* fn;
    void* user;
    carom_mesh_query_result* r;
} collide_ctx;

// Every triangle pair of two leaves; false when the callback stops.
static bool collide_leaves(const collide_ctx* c, const mid_node* na, const mid_node* nb) {
    const struct carom_mesh_data* da = c->a.mesh->data;
    const struct carom_mesh_data* db = c->b.mesh->data;
    for (int pa = na->first; pa < na->first + na->count; ++pa) {
        if (da->ids[pa] & MID_DEGENERATE_BIT) continue;
        vec3s va[3];
        mid_triangle(da, pa, va);
        for (int pb = nb->first; pb < nb->first + nb->count; ++pb) {
            if (db->ids[pb] & MID_DEGENERATE_BIT) continue;
            vec3s vb[3];
            mid_triangle(db, pb, vb);
            ++c->r->triangle_tests;
            if (!mid_pair_frame_triangles(c->f, va, vb)) continue;
            ++c->r->found;
            carom_triangle_pair pair = {da->ids[pa] & MID_ID_MASK, db->ids[pb] & MID_ID_MASK};
            if (!c->fn(c->user, pair)) {
                c->r->stopped = true;
                return false;
            }
        }
    }
    return true;
}

// Descends from a pair of overlapping nodes, unfolding the larger box (a leaf
// cannot be unfolded) and testing each child before going down into it, so
// a node is set up once per unfolding, not once per test. The recursion is
// at most the two trees' depths together deep (<= 2 * CAROM_MESH_MAX_DEPTH
// frames of about 300 bytes). Returns false when the callback stops.
static bool descend(const collide_ctx* c, const hnode* a, const hnode* b) {
    bool leaf_a = mid_is_leaf(c->a.mesh, &a->n), leaf_b = mid_is_leaf(c->b.mesh, &b->n);
    if (leaf_a && leaf_b) return collide_leaves(c, &a->n, &b->n);
    hnode k[2];
    if (leaf_b || (!leaf_a && a->size >= b->size)) {
        mid_children(c->a.mesh, &a->n, &k[0].n, &k[1].n);
        for (int i = 0; i < 2; ++i) {
            hnode_set(&c->a, &k[i]);
            ++c->r->node_tests;
            if (hnodes_overlap(&k[i], b, c->slack) && !descend(c, &k[i], b)) return false;
        }
    } else {
        mid_children(c->b.mesh, &b->n, &k[0].n, &k[1].n);
        for (int i = 0; i < 2; ++i) {
            hnode_set(&c->b, &k[i]);
            ++c->r->node_tests;
            if (hnodes_overlap(a, &k[i], c->slack) && !descend(c, a, &k[i])) return false;
        }
    }
    return true;
}

static void side_init(side* s, const carom_mesh* mesh, const carom_rot* m, vec3s trans) {
    s->mesh = mesh;
    for (int j = 0; j < 3; ++j) {
        s->col[j] = f4_make(m->row[0].raw[j], m->row[1].raw[j], m->row[2].raw[j]);
        s->abs_col[j] = f4_abs(s->col[j]);
    }
    s->trans = f4_from(trans);
}

carom_mesh_query_result carom_mesh_collide(const carom_mesh* a, carom_xform pose_a,
                                           const carom_mesh* b, carom_xform pose_b,
                                           carom_mesh_pair_fn* fn, void* user) {
    carom_mesh_query_result r = {0};
    mid_pair_frame f;
    if (!a || !a->data || !b || !b->data || !fn ||
        !mid_pair_frame_init(a, pose_a, b, pose_b, &f)) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    collide_ctx c = {.f = &f, .fn = fn, .user = user, .r = &r};
    c.slack = (f4){f.slack, f.slack, f.slack, f.slack};
    // b into a: x_a = rot x_b + trans; a into b: x_b = rot^T x_a - rot^T trans.
    carom_rot inverse;
    for (int i = 0; i < 3; ++i) {
        inverse.row[i] = v3(f.rot.row[0].raw[i], f.rot.row[1].raw[i], f.rot.row[2].raw[i]);
    }
    side_init(&c.b, b, &f.rot, f.trans);
    side_init(&c.a, a, &inverse, v3_neg(rot_apply(&inverse, f.trans)));
    hnode ra = {.n = mid_root(a)}, rb = {.n = mid_root(b)};
    hnode_set(&c.a, &ra);
    hnode_set(&c.b, &rb);
    ++r.node_tests;
    if (hnodes_overlap(&ra, &rb, c.slack)) descend(&c, &ra, &rb);
    return r;
}

typedef struct pair_buffer {
    carom_triangle_pair* pairs;
    int capacity;
    int count;
    bool first_only;
} pair_buffer;

static bool store_pair(void* user, carom_triangle_pair pair) {
    pair_buffer* buf = user;
    if (buf->count < buf->capacity) buf->pairs[buf->count] = pair;
    ++buf->count;
    return !buf->first_only;
}

carom_mesh_query_result carom_mesh_collide_pairs(const carom_mesh* a, carom_xform pose_a,
                                                 const carom_mesh* b, carom_xform pose_b,
                                                 bool first_only, carom_triangle_pair* pairs,
                                                 int capacity) {
    if (capacity < 0 || (capacity > 0 && !pairs)) {
        carom_mesh_query_result r = {0};
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    pair_buffer buf = {pairs, capacity, 0, first_only};
    carom_mesh_query_result r = carom_mesh_collide(a, pose_a, b, pose_b, store_pair, &buf);
    r.stopped = false;  // a stop requested by first_only is not the caller's callback
    return r;
}
