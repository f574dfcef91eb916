// Mesh against mesh: both trees descended together in a's frame.
#include <string.h>

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
    for (int j = 0; j < 3; ++j) {
        f->col[j] = f4_make(f->rot.row[0].raw[j], f->rot.row[1].raw[j], f->rot.row[2].raw[j]);
    }
    f->trans4 = f4_from(f->trans);
    float scale = mesh_scale(a) + mesh_scale(b) + v3_max_abs(f->trans);
    f->slack = MID_CULL_SLACK * scale;
    return isfinite(f->slack);
}

static const i4 LANES3 = {-1, -1, -1, 0};

// Four floats from three (the fourth, from the next vertex or field, is
// masked to zero): every caller's block has room after the last triple.
static inline f4 load3(const float* p) {
    f4 v;
    memcpy(&v, p, sizeof v);
    return (f4)((i4)v & LANES3);
}

static inline f4 broadcast(f4 v, int i) {
    return i == 0 ? __builtin_shufflevector(v, v, 0, 0, 0, 0)
                  : i == 1 ? __builtin_shufflevector(v, v, 1, 1, 1, 1)
                           : __builtin_shufflevector(v, v, 2, 2, 2, 2);
}

static inline bool any_of3(i4 m) { return i4_mask3(m) != 0; }

// A triangle ready for leaf tests: corners in a's frame and their box.
typedef struct leaf_triangle {
    f4 v[3];
    f4 lo, hi;
} leaf_triangle;

static inline void leaf_triangle_box(leaf_triangle* t) {
    t->lo = f4_select(t->v[0] < t->v[1], t->v[0], t->v[1]);
    t->hi = f4_max(t->v[0], t->v[1]);
    t->lo = f4_select(t->lo < t->v[2], t->lo, t->v[2]);
    t->hi = f4_max(t->hi, t->v[2]);
}

static inline void leaf_triangle_of_b(const mid_pair_frame* f, const f4 vb[3], leaf_triangle* t) {
    for (int k = 0; k < 3; ++k) {
        t->v[k] = f->col[0] * broadcast(vb[k], 0) + f->col[1] * broadcast(vb[k], 1) +
                  f->col[2] * broadcast(vb[k], 2) + f->trans4;
    }
    leaf_triangle_box(t);
}

// The triangles' boxes first: most leaf pairs of a mesh query are apart on
// some coordinate axis, and this settles them for a few comparisons.
static inline bool leaf_triangles_intersect(const leaf_triangle* a, const leaf_triangle* b) {
    if (any_of3((a->hi < b->lo) | (b->hi < a->lo))) return false;
    return mid_triangles_intersect_f4(a->v, b->v);
}

bool mid_pair_frame_triangles_f4(const mid_pair_frame* f, const f4 va[3], const f4 vb[3]) {
    leaf_triangle a = {{va[0], va[1], va[2]}, {0}, {0}}, b;
    leaf_triangle_box(&a);
    leaf_triangle_of_b(f, vb, &b);
    return leaf_triangles_intersect(&a, &b);
}

bool mid_pair_frame_triangles(const mid_pair_frame* f, const vec3s va[3], const vec3s vb[3]) {
    f4 a[3] = {f4_from(va[0]), f4_from(va[1]), f4_from(va[2])};
    f4 b[3] = {f4_from(vb[0]), f4_from(vb[1]), f4_from(vb[2])};
    return mid_pair_frame_triangles_f4(f, a, b);
}

// One mesh's side of a collide query: its tree, and the map from its frame
// into the other mesh's frame, x_other = M x + trans, kept as M's columns
// for broadcasts.
typedef struct side {
    const carom_mesh* mesh;
    const struct carom_mesh_data* d;
    const mid_aabb_node* aabb;     // NULL for a boxtree
    const mid_boxtree_node* box;   // NULL for an AABB tree
    f4 col[3];
    f4 abs_col[3];
    f4 trans;
} side;

// A node with its box both ways: centre and half extents in its own frame,
// and the centre and half extents of its rotated box projected on the other
// mesh's axes. Each node is set up once, when its parent is unfolded, and
// then tested against many nodes of the other tree for a dozen vector
// operations a test.
typedef struct hnode {
    f4 lo, hi;  // the box (the boxtree derives its children's from it)
    f4 c, e;
    f4 c_other, e_other;
    float size;
    bool leaf;
    int index;  // AABB node; boxtree inner node (-1 for a one-triangle leaf)
    int first;  // AABB: the node's `first` (children or triangles); boxtree: range start
    int count;  // triangles in an AABB leaf (0 inner) or the boxtree range
} hnode;

static inline void hnode_own(hnode* h) {
    h->c = (h->lo + h->hi) * 0.5f;
    h->e = (h->hi - h->lo) * 0.5f;
    h->size = h->e[0] + h->e[1] + h->e[2];
}

// The box seen from the other mesh: needed only once the node has passed
// the test on its own axes, so a node culled there never pays for it.
static inline void hnode_other(const side* s, hnode* h) {
    h->c_other = s->col[0] * broadcast(h->c, 0) + s->col[1] * broadcast(h->c, 1) +
                 s->col[2] * broadcast(h->c, 2) + s->trans;
    h->e_other = s->abs_col[0] * broadcast(h->e, 0) + s->abs_col[1] * broadcast(h->e, 1) +
                 s->abs_col[2] * broadcast(h->e, 2);
}

static inline void aabb_hnode(const side* s, int index, hnode* h) {
    const mid_aabb_node* n = &s->aabb[index];
    h->lo = load3(n->min);
    h->hi = load3(n->max);
    h->index = index;
    h->first = n->first;
    h->count = n->count;
    h->leaf = n->count > 0;
    hnode_own(h);
}

static void hnode_root(const side* s, hnode* h) {
    if (s->aabb) {
        aabb_hnode(s, 0, h);
        return;
    }
    h->lo = f4_from(s->d->root_min);
    h->hi = f4_from(s->d->root_max);
    h->index = s->mesh->triangle_count > 1 ? 0 : -1;
    h->first = 0;
    h->count = s->mesh->triangle_count;
    h->leaf = h->index < 0;
    hnode_own(h);
}

static inline void hnode_children(const side* s, const hnode* h, hnode k[2]) {
    if (s->aabb) {
        aabb_hnode(s, h->first, &k[0]);
        aabb_hnode(s, h->first + 1, &k[1]);
        return;
    }
    const mid_boxtree_node* b = &s->box[h->index];
    int left = (int)(b->packed >> 8);
    int counts[2] = {left, h->count - left};
    unsigned pairs[2] = {(b->packed >> 4) & 15u, b->packed & 15u};
    // mid_boxtree_child_box on all lanes at once, with the same operations
    // lane by lane (so the same roundings), each plane then picked into its
    // axis's lane. Both planes come from the parent's box.
    static const i4 axis_lane[3] = {{-1, 0, 0, 0}, {0, -1, 0, 0}, {0, 0, -1, 0}};
    f4 step = (h->hi - h->lo) * (1.0f / MID_BOXTREE_QUANT);
    for (int i = 0; i < 2; ++i) {
        k[i].lo = h->lo;
        k[i].hi = h->hi;
        for (int j = 0; j < 2; ++j) {
            unsigned face = MID_FACE_PAIRS[pairs[i]][j], q = b->plane[2 * i + j];
            i4 m = axis_lane[face >> 1];
            if (face & 1) {
                f4 v = h->hi - (float)(255u - q) * step;
                k[i].hi = f4_select(m, v, k[i].hi);
            } else {
                f4 v = h->lo + (float)q * step;
                k[i].lo = f4_select(m, v, k[i].lo);
            }
        }
        k[i].first = h->first + (i ? left : 0);
        k[i].count = counts[i];
        k[i].leaf = counts[i] == 1;
        k[i].index = k[i].leaf ? -1 : h->index + (i ? left : 1);
        hnode_own(&k[i]);
    }
}

// SAT-lite, the six face normals, for a freshly unfolded child `k` (own
// frame only) against a node `o` of the other tree (both frames): first
// k's three axes, then, if they do not separate, o's three, for which k is
// brought into o's frame.
static inline bool child_overlaps(const side* ks, hnode* k, const hnode* o, f4 slack) {
    f4 g = f4_abs(o->c_other - k->c) - (k->e + o->e_other);
    if (any_of3(g > slack)) return false;
    hnode_other(ks, k);
    g = f4_abs(k->c_other - o->c) - (o->e + k->e_other);
    return !any_of3(g > slack);
}

#define MID_LEAF_CACHE 64

typedef struct collide_ctx {
    side a, b;
    const mid_pair_frame* f;
    f4 slack;
    carom_mesh_pair_fn* fn;
    void* user;
    carom_mesh_query_result* r;
    int b_tag[MID_LEAF_CACHE];  // tree position held by each slot, -1 for none
    leaf_triangle b_cache[MID_LEAF_CACHE];
} collide_ctx;

static inline void load_triangle(const struct carom_mesh_data* d, int p, f4 v[3]) {
    for (int k = 0; k < 3; ++k) v[k] = load3(d->vertices[d->triangles[p][k]].raw);
}

// b's triangle at tree position p, moved into a's frame: kept in a small
// direct-mapped cache, because the traversal meets each of b's leaves again
// for each of a's leaves under the same node.
static inline const leaf_triangle* b_triangle(collide_ctx* c, int p) {
    unsigned slot = (unsigned)p & (MID_LEAF_CACHE - 1);
    if (c->b_tag[slot] != p) {
        f4 v[3];
        load_triangle(c->b.d, p, v);
        leaf_triangle_of_b(c->f, v, &c->b_cache[slot]);
        c->b_tag[slot] = p;
    }
    return &c->b_cache[slot];
}

// Every triangle pair of two leaves; false when the callback stops.
static bool collide_leaves(collide_ctx* c, const hnode* na, const hnode* nb) {
    const struct carom_mesh_data* da = c->a.d;
    const struct carom_mesh_data* db = c->b.d;
    for (int pa = na->first; pa < na->first + na->count; ++pa) {
        if (da->ids[pa] & MID_DEGENERATE_BIT) continue;
        leaf_triangle ta;
        load_triangle(da, pa, ta.v);
        leaf_triangle_box(&ta);
        for (int pb = nb->first; pb < nb->first + nb->count; ++pb) {
            if (db->ids[pb] & MID_DEGENERATE_BIT) continue;
            ++c->r->triangle_tests;
            if (!leaf_triangles_intersect(&ta, b_triangle(c, pb))) continue;
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
// frames of a few hundred bytes). Returns false when the callback stops.
static bool descend(collide_ctx* c, const hnode* a, const hnode* b) {
    if (a->leaf && b->leaf) return collide_leaves(c, a, b);
    hnode k[2];
    if (b->leaf || (!a->leaf && a->size >= b->size)) {
        hnode_children(&c->a, a, k);
        c->r->node_tests += 2;
        for (int i = 0; i < 2; ++i) {
            if (child_overlaps(&c->a, &k[i], b, c->slack) && !descend(c, &k[i], b)) return false;
        }
    } else {
        hnode_children(&c->b, b, k);
        c->r->node_tests += 2;
        for (int i = 0; i < 2; ++i) {
            if (child_overlaps(&c->b, &k[i], a, c->slack) && !descend(c, a, &k[i])) return false;
        }
    }
    return true;
}

static void side_init(side* s, const carom_mesh* mesh, const carom_rot* m, vec3s trans) {
    s->mesh = mesh;
    s->d = mesh->data;
    s->aabb = mesh->tree == CAROM_TREE_BOXTREE ? NULL : mesh->data->aabb_nodes;
    s->box = mesh->tree == CAROM_TREE_BOXTREE ? mesh->data->box_nodes : NULL;
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
    for (int i = 0; i < MID_LEAF_CACHE; ++i) c.b_tag[i] = -1;
    c.slack = (f4){f.slack, f.slack, f.slack, f.slack};
    // b into a: x_a = rot x_b + trans; a into b: x_b = rot^T x_a - rot^T trans.
    carom_rot inverse;
    for (int i = 0; i < 3; ++i) {
        inverse.row[i] = v3(f.rot.row[0].raw[i], f.rot.row[1].raw[i], f.rot.row[2].raw[i]);
    }
    side_init(&c.b, b, &f.rot, f.trans);
    side_init(&c.a, a, &inverse, v3_neg(rot_apply(&inverse, f.trans)));
    hnode ra, rb;
    hnode_root(&c.a, &ra);
    hnode_root(&c.b, &rb);
    hnode_other(&c.a, &ra);
    ++r.node_tests;
    if (child_overlaps(&c.b, &rb, &ra, c.slack)) descend(&c, &ra, &rb);
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
