// Mesh against mesh: both trees descended together, each node's box seen
// from both frames, the triangles met in a's frame.
#include <float.h>

#include "mid/mesh_query.h"
#include "mid/walk.h"

#define MID_CULL_SLACK 1e-5f

static float mesh_scale(const carom_mesh* m) {
    return carom_maxf(v3_max_abs(m->bounds.min), v3_max_abs(m->bounds.max));
}

bool mid_pair_frame_init(const carom_mesh* a, carom_xform pose_a, const carom_mesh* b,
                         carom_xform pose_b, mid_pair_frame* f) {
    if (!carom_xform_is_valid(pose_a) || !carom_xform_is_valid(pose_b)) return false;
    carom_rot ra = carom_rot_from_quat(pose_a.q);
    // rot = ra^T rb, from the quaternions' product rather than the
    // matrices': for equal rotations its vector part cancels exactly, so a
    // mesh against itself at one pose is exactly itself (from the matrices,
    // rounding turned the copy by about 1e-7 and lost most of its pairs with
    // itself).
    f->rot = carom_rot_from_quat(carom_quat_relative(pose_a.q, pose_b.q));
    f->trans = rot_apply_transposed(&ra, v3_sub(pose_b.p, pose_a.p));
    for (int j = 0; j < 3; ++j) {
        f->col[j] = f4_make(f->rot.row[0].raw[j], f->rot.row[1].raw[j], f->rot.row[2].raw[j]);
    }
    f->trans4 = f4_from(f->trans);
    float scale = mesh_scale(a) + mesh_scale(b) + v3_max_abs(f->trans);
    f->slack = MID_CULL_SLACK * scale;
    return isfinite(f->slack);
}

// A triangle ready for leaf tests, in a's frame: its corners side by side
// (lanes v0, v1, v2, v2), so that the other triangle's corners meet its
// plane n . x = d in a few vector operations; the corners' box; n (lane 3
// zero), and d and the tolerances as scalars. The plane's broadcasts and
// the corners one by one are remade where they are needed, for a few
// operations, rather than kept: at 128 bytes, the caches hold twice the
// triangles in the same stack, and a query prepares fewer of them again.
typedef struct leaf_triangle {
    f4 x, y, z;
    f4 lo, hi;
    f4 n;
    float d;
    float tolerance;  // how far from the plane a corner must be for the cull
    // The same for corners taken from a point near the pair, E away at
    // most: near_k * E + near_l * E^2 (leaf_triangles_near).
    float near_k, near_l;
    float extent;  // the box's largest extent
} leaf_triangle;
_Static_assert(sizeof(leaf_triangle) <= 128, "a cached triangle fits in 128 bytes");

static inline f4 lanes4(float v) { return (f4){v, v, v, v}; }

// Rows x, y, z only of four (x, y, z, w) vectors.
static inline void transpose3(f4 t0, f4 t1, f4 t2, f4 t3, f4 out[3]) {
    f4 rows[4];
    f4_transpose4(t0, t1, t2, t3, rows);
    for (int j = 0; j < 3; ++j) out[j] = rows[j];
}

// The corners one by one (lane 3 zero).
static inline void leaf_triangle_corners(const leaf_triangle* t, f4 v[3]) {
    transpose3(t->x, t->y, t->z, f4_zero(), v);
}

// The near plane cull's tolerance in float epsilons (leaf_triangles_near).
#define MID_NEAR_EPSILONS 256.0f

// The plane cull is done on the corners as they are, so a distance is
// trusted only beyond a bound on its error against exact arithmetic on the
// same corners. Corners lie within C = sqrt(3) * scale of the origin (the
// scale the pair frame's slack comes from). A distance's own arithmetic is
// off by at most 8 u C |n|_1 (u = 2^-24), and the normal's rounding turns
// it by at most 24 u L^2 E (L the largest edge component, which matters
// for slivers, whose |n| is far below L^2; E the largest coordinate
// difference between the pair's corners, at most 2 C): together at most
// half the bound, slack * (|n|_1 + L^2) = 1e-5 * scale * (|n|_1 + L^2). So
// a pair culled is apart by at least half the bound. The exact test rounds
// otherwise: it takes the corners from a's first, and a triangle b far
// smaller than its distance from there gets a normal turned by up to
// 24 u E L_b, which can leave the exact test's own plane test undecided on
// a pair culled here; it parts the pair on another axis. It did on every
// one of 69M adversarial pairs (tiny triangles at a large one's corners
// and edges, slivers, near-coplanar pairs, scenes up to 2e5 across;
// test_leaf_culls_agree_with_exact keeps a sample), and on near-coincident
// meshes the two tests' distances differ by 1/180 of the bound at most.
// With four times the bound, the pairs between the two went on to the near
// cull, for about a hundred operations each: the coincident bunnies' query
// took 2.5% longer. A normal so small that its rounding could turn it gets
// no cull at all.
static inline void leaf_triangle_prepare(leaf_triangle* t, const f4 v[3], float slack) {
    t->lo = f4_min(f4_min(v[0], v[1]), v[2]);
    t->hi = f4_max(f4_max(v[0], v[1]), v[2]);
    f4 t0 = __builtin_shufflevector(v[0], v[1], 0, 4, 1, 5);  // x0 x1 y0 y1
    f4 t1 = __builtin_shufflevector(v[0], v[1], 2, 6, 2, 6);  // z0 z1 z0 z1
    t->x = __builtin_shufflevector(t0, v[2], 0, 1, 4, 4);
    t->y = __builtin_shufflevector(t0, v[2], 2, 3, 5, 5);
    t->z = __builtin_shufflevector(t1, v[2], 0, 1, 6, 6);
    f4 n = f4_cross(v[1] - v[0], v[2] - v[1]);
    t->n = n;
    t->d = f4_dot(n, v[0]);
    float l = f4_max3(t->hi - t->lo);  // no edge component is longer
    float n1 = f4_abs(n)[0] + f4_abs(n)[1] + f4_abs(n)[2];
    float k = n1 >= 1e-20f ? n1 + l * l : INFINITY;
    t->tolerance = slack * k;
    t->near_k = MID_NEAR_EPSILONS * FLT_EPSILON * k;
    t->near_l = MID_NEAR_EPSILONS * FLT_EPSILON * l;
    t->extent = l;
}

static inline void leaf_triangle_of_b(const mid_pair_frame* f, const f4 vb[3], leaf_triangle* t) {
    f4 v[3];
    for (int k = 0; k < 3; ++k) {
        v[k] = f->col[0] * mid_broadcast(vb[k], 0) + f->col[1] * mid_broadcast(vb[k], 1) +
               f->col[2] * mid_broadcast(vb[k], 2) + f->trans4;
    }
    leaf_triangle_prepare(t, v, f->slack);
}

// Signed distances (times |n|) of o's corners from t's plane.
static inline f4 plane_distances(const leaf_triangle* t, const leaf_triangle* o) {
    return o->x * mid_broadcast(t->n, 0) + o->y * mid_broadcast(t->n, 1) +
           o->z * mid_broadcast(t->n, 2) - lanes4(t->d);
}

// True when every distance is beyond the tolerance on one side.
static inline bool beyond(f4 s, f4 tolerance) {
    return i4_mask4(s > tolerance) == 15 || i4_mask4(s < -tolerance) == 15;
}

static bool leaf_triangles_near(const leaf_triangle* a, const leaf_triangle* b);

// The triangles' boxes first: most leaf pairs of a mesh query are apart on
// some coordinate axis, and this settles them for a few comparisons. Then
// each plane against the other's corners, which settles most of the rest
// (near-coincident surfaces above all), then the planes again on corners
// taken from a point near the pair, which parts near-parallel neighbours
// far closer, then the crossing segments. Each step only settles pairs
// whose answer is the exact test's, up to float rounding (two triangles
// that touch, or nearly, within it can get either answer from either
// test); the exact test takes the rest.
// leaf_triangles_meet_boxed takes the pair from the planes on, for
// triangles whose boxes meet.
static inline bool leaf_triangles_meet_boxed(const leaf_triangle* a, const leaf_triangle* b) {
    if (beyond(plane_distances(a, b), lanes4(a->tolerance))) return false;
    if (beyond(plane_distances(b, a), lanes4(b->tolerance))) return false;
    return leaf_triangles_near(a, b);
}

// The rest of leaf_triangles_meet_boxed, out of line: the loose culls
// settle most pairs before it.
//
// The pairs left are mostly near-parallel neighbours on near-coincident
// surfaces, within the loose tolerances (which scale with the scene) but
// apart by far more than the rounding of the pair itself. So the planes
// again, on the corners taken from a's first one, as the exact test takes
// them. Every coordinate of such a corner is at most E = a's extent plus
// b's from it (the boxes meet) and off by an epsilon of that. Here a
// triangle's normal comes from its own corners, good to a few epsilons of
// L^2 + |n|_1 (L its extent). The exact test makes a's normal likewise,
// but b's from b's corners taken from a's, each off by an epsilon of E,
// which turns it by about epsilon * E * L: a corner E away then moves by
// epsilon * E^2 * L more, which matters when b is far smaller than E. A
// distance (times |n|) here or there is off by at most about 36
// epsilons of E * (|n|_1 + L^2 + E * L); 256 covers this cull's error
// and both of the exact test's plane terms (the distance and the range
// of the triangle's own corners) with room. A tolerance far below the
// rounding (0.1 epsilon) makes the leaf test and the exact test disagree
// (test_mesh_queries). Normals too small to trust have an infinite
// tolerance, and inf * 0 (a triangle of no extent, which the box test
// never lets through) would be NaN: neither culls.
static bool leaf_triangles_near(const leaf_triangle* a, const leaf_triangle* b) {
    f4 ox = mid_broadcast(a->x, 0), oy = mid_broadcast(a->y, 0), oz = mid_broadcast(a->z, 0);
    const f4 ca[3] = {a->x - ox, a->y - oy, a->z - oz}, cb[3] = {b->x - ox, b->y - oy, b->z - oz};
    const f4 na[3] = {mid_broadcast(a->n, 0), mid_broadcast(a->n, 1), mid_broadcast(a->n, 2)};
    const f4 nb[3] = {mid_broadcast(b->n, 0), mid_broadcast(b->n, 1), mid_broadcast(b->n, 2)};
    const float e = a->extent + b->extent;
    f4 near_a = lanes4(e * (a->near_k + e * a->near_l));
    f4 near_b = lanes4(e * (b->near_k + e * b->near_l));
    f4 sb_near = cb[0] * na[0] + cb[1] * na[1] + cb[2] * na[2];
    if (beyond(sb_near, near_a)) return false;
    // b's first corner from o is lane 0 of cb. The sum runs left to right,
    // as f4_dot's does (the build keeps multiply-adds unfused).
    const float b_offset = cb[0][0] * b->n[0] + cb[1][0] * b->n[1] + cb[2][0] * b->n[2];
    f4 sa_near = ca[0] * nb[0] + ca[1] * nb[1] + ca[2] * nb[2] - lanes4(b_offset);
    if (beyond(sa_near, near_b)) return false;
    // Crossing triangles by their segments on the planes' common line, on
    // the same corners: the projections' rounding scales with the pair and
    // stays far below 1e-4 * E * |d|_1 (d the line's direction), the bound
    // the exact test takes for its own.
    int verdict = mid_segment_verdict(ca, a->n, sa_near, near_b, cb, b->n, sb_near, near_a,
                                      1e-4f * e);
    if (verdict >= 0) return verdict;
    f4 va[3], vb[3];
    leaf_triangle_corners(a, va);
    leaf_triangle_corners(b, vb);
    return mid_triangles_intersect_f4(va, vb);
}

static inline bool leaf_triangles_intersect(const leaf_triangle* a, const leaf_triangle* b) {
    if (mid_any3((a->hi < b->lo) | (b->hi < a->lo))) return false;
    return leaf_triangles_meet_boxed(a, b);
}

bool mid_pair_frame_triangles_f4(const mid_pair_frame* f, const f4 va[3], const f4 vb[3]) {
    leaf_triangle a, b;
    leaf_triangle_prepare(&a, va, f->slack);
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
    mid_tree t;
    f4 col[3];
    f4 row[3];  // M's rows: M^T y is their sum weighted by y's components
    f4 abs_col[3];
    f4 trans;
    // The same map entry by entry on four lanes, for four boxes at once.
    f4 m[3][3], abs_m[3][3], t4[3];
} side;

// A node with its box both ways: centre and half extents in its own frame,
// and the centre and half extents of its rotated box projected on the other
// mesh's axes. Each node is set up once, when its parent is unfolded, and
// then tested against many nodes of the other tree for a dozen vector
// operations a test.
typedef struct hnode {
    mid_walk_node n;
    f4 c, e;
    f4 c_other, e_other;
    float size;
} hnode;

static inline void hnode_own(hnode* h) {
    h->c = (h->n.lo + h->n.hi) * 0.5f;
    h->e = (h->n.hi - h->n.lo) * 0.5f;
    h->size = h->e[0] + h->e[1] + h->e[2];
}

// The box seen from the other mesh: needed only once the node has passed
// the test on its own axes, so a node culled there never pays for it.
static inline void hnode_other(const side* s, hnode* h) {
    h->c_other = s->col[0] * mid_broadcast(h->c, 0) + s->col[1] * mid_broadcast(h->c, 1) +
                 s->col[2] * mid_broadcast(h->c, 2) + s->trans;
    h->e_other = s->abs_col[0] * mid_broadcast(h->e, 0) + s->abs_col[1] * mid_broadcast(h->e, 1) +
                 s->abs_col[2] * mid_broadcast(h->e, 2);
}

// The children of h, set up in their own frame; returns how many: two for a
// boxtree node, two to four for an AABB tree's wide node, whose lanes hold
// the centres and half extents hnode_own would compute.
static inline int hnode_children(const side* s, const hnode* h, hnode k[4]) {
    if (s->t.box) {
        mid_walk_children(&s->t, &h->n, &k[0].n, &k[1].n);
        hnode_own(&k[0]);
        hnode_own(&k[1]);
        return 2;
    }
    const mid_wide_node* n = &s->t.wide[h->n.index];
    for (int i = 0; i < n->count; ++i) {
        k[i].c = f4_make(n->center[0][i], n->center[1][i], n->center[2][i]);
        k[i].e = f4_make(n->half[0][i], n->half[1][i], n->half[2][i]);
        k[i].size = k[i].e[0] + k[i].e[1] + k[i].e[2];
        int32_t ref = n->child[i];
        k[i].n.leaf = ref < 0;
        k[i].n.index = ref < 0 ? -1 : ref;
        k[i].n.first = ref < 0 ? mid_leaf_first(ref) : 0;
        k[i].n.count = ref < 0 ? mid_leaf_count(ref) : 0;
    }
    return n->count;
}

// SAT-lite, the six face normals, for a freshly unfolded child `k` (own
// frame only) against a node `o` of the other tree (both frames): first
// k's three axes, then, if they do not separate, o's three, for which k is
// brought into o's frame.
static inline bool child_overlaps(const side* ks, hnode* k, const hnode* o, f4 slack) {
    f4 g = f4_abs(o->c_other - k->c) - (k->e + o->e_other);
    if (mid_any3(g > slack)) return false;
    hnode_other(ks, k);
    g = f4_abs(k->c_other - o->c) - (o->e + k->e_other);
    return !mid_any3(g > slack);
}

// The boxes of up to four triangles of one leaf of b, lane by lane (an
// unused lane empty), so that a triangle of a meets all four in one test;
// a leaf of five to eight has two such groups.
typedef struct leaf_boxes {
    f4 lo[3], hi[3];  // [axis], triangle by lane
} leaf_boxes;

// The caches: 128 triangles of each mesh and 64 groups of b's boxes; the
// context that holds them takes 41 KB of stack (the header states the
// query's whole stack). 64 groups rather than 32 took 1.7% off the
// coincident bunnies' query; 256 triangles rather than 128 would take
// another 1%, for 32 KB more.
#define MID_LEAF_CACHE 128
#define MID_BOXES_CACHE_BITS 6
// A leaf's two groups of boxes (positions p and p + 4) never share a slot,
// so the first stays valid while the second is fetched: 4 * 0x9E3779B1
// is 0.47 of 2^32, which moves the slot by 0.47 of the table, give or take
// one, never by a whole table when it has four slots or more.
_Static_assert(MID_BOXES_CACHE_BITS >= 2, "a leaf's two box groups take distinct slots");

typedef struct collide_ctx {
    side a, b;
    const mid_pair_frame* f;
    f4 slack;
    carom_mesh_pair_fn* fn;
    void* user;
    carom_mesh_query_result* r;
    // A first hit between two AABB trees (NULL otherwise): its frontier,
    // the size above which node pairs join it, the roots its pairs may
    // name, and how many unfoldings of twins the walk is inside.
    struct frontier* frontier;
    float queue_above;
    const struct wnode* roots[2];
    int inside_twins;
    int a_tag[MID_LEAF_CACHE];  // tree position held by each slot, -1 for none
    int b_tag[MID_LEAF_CACHE];
    leaf_triangle a_cache[MID_LEAF_CACHE];
    leaf_triangle b_cache[MID_LEAF_CACHE];
    // Tree position of the first triangle of each group of b's boxes held:
    // a leaf's first, or its fifth for a leaf of more than four.
    int b_boxes_tag[1 << MID_BOXES_CACHE_BITS];
    leaf_boxes b_boxes[1 << MID_BOXES_CACHE_BITS];
} collide_ctx;

// A zero-area triangle is never reported: its entry gets an empty box
// (lo above hi), which the box test rejects against anything.
static inline void leaf_triangle_mark(leaf_triangle* t, const struct carom_mesh_data* d, int p) {
    if (d->ids[p] & MID_DEGENERATE_BIT) {
        t->lo = (f4){INFINITY, INFINITY, INFINITY, 0};
        t->hi = (f4){-INFINITY, -INFINITY, -INFINITY, 0};
    }
}

// The triangles at tree positions p, ready for the leaf test, are kept in
// small direct-mapped caches: the traversal meets each leaf again for each
// leaf of the other tree under the same node.
static inline const leaf_triangle* a_triangle(collide_ctx* c, int p) {
    unsigned slot = (unsigned)p & (MID_LEAF_CACHE - 1);
    if (c->a_tag[slot] != p) {
        leaf_triangle* t = &c->a_cache[slot];
        f4 v[3];
        mid_load_triangle(c->a.t.d, p, v);
        leaf_triangle_prepare(t, v, c->f->slack);
        leaf_triangle_mark(t, c->a.t.d, p);
        c->a_tag[slot] = p;
    }
    return &c->a_cache[slot];
}

static inline const leaf_triangle* b_triangle(collide_ctx* c, int p) {
    unsigned slot = (unsigned)p & (MID_LEAF_CACHE - 1);
    if (c->b_tag[slot] != p) {
        leaf_triangle* t = &c->b_cache[slot];
        f4 v[3];
        mid_load_triangle(c->b.t.d, p, v);
        leaf_triangle_of_b(c->f, v, t);
        leaf_triangle_mark(t, c->b.t.d, p);
        c->b_tag[slot] = p;
    }
    return &c->b_cache[slot];
}

// Up to four (`count`) triangles of one of b's leaves from tree position
// p, their boxes lane by lane, kept in a small direct-mapped cache by p (a
// leaf's first position names its first group, and its fifth triangle's
// its second: no other leaf starts there).
static inline const leaf_boxes* b_leaf_boxes(collide_ctx* c, int p, int count) {
    unsigned slot = ((unsigned)p * 0x9E3779B1u) >> (32 - MID_BOXES_CACHE_BITS);
    leaf_boxes* g = &c->b_boxes[slot];
    if (c->b_boxes_tag[slot] != p) {
        const f4 empty_lo = lanes4(INFINITY), empty_hi = lanes4(-INFINITY);
        f4 lo[4], hi[4];
        for (int j = 0; j < 4; ++j) {
            const leaf_triangle* t = j < count ? b_triangle(c, p + j) : NULL;
            lo[j] = t ? t->lo : empty_lo;
            hi[j] = t ? t->hi : empty_hi;
        }
        transpose3(lo[0], lo[1], lo[2], lo[3], g->lo);
        transpose3(hi[0], hi[1], hi[2], hi[3], g->hi);
        c->b_boxes_tag[slot] = p;
    }
    return g;
}

// The lanes of g whose boxes meet t's: the box test of
// leaf_triangles_intersect, four at once.
static inline unsigned boxes_meeting(const leaf_triangle* t, const leaf_boxes* g) {
    i4 apart = (mid_broadcast(t->hi, 0) < g->lo[0]) | (g->hi[0] < mid_broadcast(t->lo, 0)) |
               (mid_broadcast(t->hi, 1) < g->lo[1]) | (g->hi[1] < mid_broadcast(t->lo, 1)) |
               (mid_broadcast(t->hi, 2) < g->lo[2]) | (g->hi[2] < mid_broadcast(t->lo, 2));
    return ~(unsigned)i4_mask4(apart) & 15u;
}

static inline bool report_pair(collide_ctx* c, int pa, int pb) {
    ++c->r->found;
    carom_triangle_pair pair = {c->a.t.d->ids[pa] & MID_ID_MASK, c->b.t.d->ids[pb] & MID_ID_MASK};
    if (c->fn(c->user, pair)) return true;
    c->r->stopped = true;
    return false;
}

// Every triangle pair of two leaves, triangles [first_a, first_a + count_a)
// of a and the like of b; false when the callback stops. The cache holds
// both leaves at once: a leaf is at most MID_MAX_LEAF_SIZE consecutive
// positions, fewer than the cache's slots, so b's entries cannot evict each
// other while they are in use.
static inline bool collide_leaves(collide_ctx* c, int first_a, int count_a, int first_b,
                                  int count_b) {
    c->r->triangle_tests += count_a * count_b;
    if (count_a <= 8 && count_b <= 8 && count_b > 1) {
        // The usual leaves: every box test first, into one bit per pair
        // (bit 8 i + j for a's i-th triangle and b's j-th), so that the
        // loops and the box test, whose outcome is hard to predict, branch
        // once per leaf pair rather than once per triangle pair. b's
        // boxes come in groups of four: a leaf of more than four has a
        // second group from its fifth triangle, whose position no other
        // leaf starts at. (Leaves of one triangle of b gain nothing from
        // it.)
        const leaf_boxes* g0 = b_leaf_boxes(c, first_b, count_b < 4 ? count_b : 4);
        const leaf_boxes* g1 = count_b > 4 ? b_leaf_boxes(c, first_b + 4, count_b - 4) : NULL;
        const leaf_triangle* ta[8];
        uint64_t meets = 0;
        for (int i = 0; i < count_a; ++i) {
            ta[i] = a_triangle(c, first_a + i);
            uint64_t row = boxes_meeting(ta[i], g0);
            if (g1) row |= (uint64_t)boxes_meeting(ta[i], g1) << 4;
            meets |= row << (8 * i);
        }
        while (meets) {
            int bit = __builtin_ctzll(meets);
            meets &= meets - 1;
            int i = bit >> 3, j = bit & 7;
            if (leaf_triangles_meet_boxed(ta[i], b_triangle(c, first_b + j)) &&
                !report_pair(c, first_a + i, first_b + j))
                return false;
        }
        return true;
    }
    const leaf_triangle* tb[MID_MAX_LEAF_SIZE];
    for (int j = 0; j < count_b; ++j) tb[j] = b_triangle(c, first_b + j);
    for (int i = 0; i < count_a; ++i) {
        const leaf_triangle* ta = a_triangle(c, first_a + i);
        for (int j = 0; j < count_b; ++j) {
            if (leaf_triangles_intersect(ta, tb[j]) &&
                !report_pair(c, first_a + i, first_b + j))
                return false;
        }
    }
    return true;
}

// A boxtree against either tree. Descends from a pair of overlapping nodes,
// unfolding the larger box (a leaf cannot be unfolded; an AABB tree's node
// unfolds into its wide node's lanes) and testing each child before going
// down into it, so a node is set up once per unfolding, not once per test.
// The recursion is at most the two trees' depths together deep
// (<= 2 * CAROM_MESH_MAX_DEPTH frames of under a kilobyte). Returns false
// when the callback stops.
static bool descend(collide_ctx* c, const hnode* a, const hnode* b) {
    if (a->n.leaf && b->n.leaf) {
        return collide_leaves(c, a->n.first, a->n.count, b->n.first, b->n.count);
    }
    hnode k[4];
    if (b->n.leaf || (!a->n.leaf && a->size >= b->size)) {
        int count = hnode_children(&c->a, a, k);
        c->r->node_tests += count;
        for (int i = 0; i < count; ++i) {
            if (child_overlaps(&c->a, &k[i], b, c->slack) && !descend(c, &k[i], b)) return false;
        }
    } else {
        int count = hnode_children(&c->b, b, k);
        c->r->node_tests += count;
        for (int i = 0; i < count; ++i) {
            if (child_overlaps(&c->b, &k[i], a, c->slack) && !descend(c, a, &k[i])) return false;
        }
    }
    return true;
}

// --- two AABB trees, four boxes at a time --------------------------------------

// Boxes both ways round, lane by lane: centre and half extents in their own
// frame, then centre and half extents of the rotated box on the other
// mesh's axes.
typedef struct wide_boxes {
    f4 c[3], e[3];
    f4 c_other[3], e_other[3];
} wide_boxes;

// The lanes' boxes of wide node n in its own frame, and then as seen from
// the other mesh (s the node's side).
static inline void wide_boxes_own(const mid_wide_node* n, wide_boxes* k) {
    for (int j = 0; j < 3; ++j) {
        memcpy(&k->c[j], n->center[j], sizeof k->c[j]);
        memcpy(&k->e[j], n->half[j], sizeof k->e[j]);
    }
}

static inline void wide_boxes_other(const side* s, wide_boxes* k) {
    for (int j = 0; j < 3; ++j) {
        k->c_other[j] = s->m[j][0] * k->c[0] + s->m[j][1] * k->c[1] + s->m[j][2] * k->c[2] +
                        s->t4[j];
        k->e_other[j] = s->abs_m[j][0] * k->e[0] + s->abs_m[j][1] * k->e[1] +
                        s->abs_m[j][2] * k->e[2];
    }
}

// A node of a wide walk: a wide node (ref >= 0) or a leaf (mid_leaf_ref); its
// box is lane `lane` of `boxes`, which its parent's unfolding keeps alive
// for as long as the node is walked.
typedef struct wnode {
    const wide_boxes* boxes;
    int lane;
    int ref;
    float size;
    const mid_wide_node* parent;  // the wide node whose lane it is; NULL for a root
} wnode;

// A leaf's slab (mid_leaf_slab): its lane's in its parent, or a one-leaf
// tree's own.
static inline const mid_leaf_slab* wnode_slab(const struct carom_mesh_data* d, const wnode* x) {
    return x->parent ? mid_wide_slab(d->leaf_slabs, x->parent, x->lane) : &d->root_slab;
}

// The order of a first-hit query (carom_mesh_collide_pairs, first_only).
// The first pair found ends the query, and every node pair walked before
// it is spent, so the walk goes first where a crossing is likeliest. Among
// the live lanes of an unfolding, that is the deepest overlap, measured on
// the six axes of SAT-lite: the largest of gap / reach (gap < 0 on every
// axis where the boxes overlap, reach the sum of their extents there),
// from -1 for boxes with one centre to 0 for boxes that only touch.
// Surfaces that cross do so where their boxes overlap deeply; boxes that
// only graze mostly hold no crossing.
static inline f4 overlap_shallowness(const wide_boxes* k, const wnode* y) {
    const wide_boxes* yb = y->boxes;
    f4 s = lanes4(-INFINITY);
    for (int j = 0; j < 3; ++j) {
        const f4 reach = k->e[j] + lanes4(yb->e_other[j][y->lane]);
        const f4 gap = f4_abs(lanes4(yb->c_other[j][y->lane]) - k->c[j]) - reach;
        const f4 reach_other = k->e_other[j] + lanes4(yb->e[j][y->lane]);
        const f4 gap_other = f4_abs(k->c_other[j] - lanes4(yb->c[j][y->lane])) - reach_other;
        s = f4_max(s, gap / f4_max(reach, lanes4(FLT_MIN)));
        s = f4_max(s, gap_other / f4_max(reach_other, lanes4(FLT_MIN)));
    }
    return s;
}

// Except where the two meshes run together: x's box and y's nearly
// coincide (within a fifth of their extents, on x's axes), as the boxes of
// two copies of one surface do (a mesh against itself nearly in place, or
// against a slightly deformed copy). Every child of x then lies deep inside
// y, and the most central ones lie where the copies have moved least from
// each other, which is where they cross least: ordered by depth there,
// near-coincident bunnies took 5x as long as in the tree's order. Copies
// cross where one has moved across the other's relief, so the children go
// in order of how far the map between the frames moves their centres, the
// farthest first (over 512 random near-coincident bunny poses, half the
// box tests of the tree's order and a third of its triangle tests). Copies
// in place tie, and keep the tree's order.
static inline bool twins(const wnode* x, const wnode* y) {
    const wide_boxes *xb = x->boxes, *yb = y->boxes;
    for (int j = 0; j < 3; ++j) {
        const float ex = xb->e[j][x->lane], ey = yb->e_other[j][y->lane];
        const float dc = yb->c_other[j][y->lane] - xb->c[j][x->lane];
        if (fabsf(dc) + fabsf(ex - ey) > 0.2f * (ex + ey)) return false;
    }
    return true;
}

// How far the map from the lanes' frame into the other mesh's moves each
// lane's centre, squared.
static inline f4 motion(const wide_boxes* k) {
    f4 d2 = f4_zero();
    for (int j = 0; j < 3; ++j) d2 += (k->c_other[j] - k->c[j]) * (k->c_other[j] - k->c[j]);
    return d2;
}

static bool wide_descend(collide_ctx* c, const wnode* a, const wnode* b);

// A first hit's frontier (between two AABB trees): the node pairs the walk
// has met above a size and not yet walked, in a binary heap by key. After
// a dead end the walk goes on from the deepest overlap it knows of,
// wherever it lies, rather than from the last unfolding's next lane: at the
// upper levels, where one wrong turn costs a whole subtree. Below, it stays
// depth first, within the tree regions its caches hold: queueing pairs
// down to the leaves made 48% fewer box tests on the grazing sweep than
// depth first, but each cost nearly twice as much, 6% slower than queueing
// the large pairs alone. Pairs of nodes larger (the sum of half extents)
// than a fiftieth of the larger root are queued: grazing first hits 13-30%
// faster than depth first (the benchmark's sweep and three other seeds of
// 256 random poses), deep ones within 7% either way (a twentieth to a
// hundredth did about as well). A pair is kept as its nodes' parents and
// lanes, its boxes rebuilt from the parents when it is taken; a full
// frontier takes no more, and the pair is walked at once, depth first,
// which finds what it holds all the same. 8 KB of stack, in the first-hit
// walk's own frame.
#define MID_FRONTIER 512
#define MID_FRONTIER_SIZE 0.02f  // of the larger root's size

typedef struct frontier_pair {
    float key;
    int32_t parent[2];  // a's and b's: a wide node, or -1 for the root
    uint8_t lane[2];
} frontier_pair;

typedef struct frontier {
    int count, capacity;
    frontier_pair heap[MID_FRONTIER];
} frontier;

// Queues the pair of nodes[0] (a's) and nodes[1] (b's); false when full.
static bool frontier_push(collide_ctx* c, float key, const wnode* const nodes[2]) {
    frontier* f = c->frontier;
    if (f->count == f->capacity) return false;
    frontier_pair p;
    p.key = key;
    for (int s = 0; s < 2; ++s) {
        const mid_wide_node* parent = nodes[s]->parent;
        const mid_wide_node* all = (s ? &c->b : &c->a)->t.d->wide_nodes;
        p.parent[s] = parent ? (int32_t)(parent - all) : -1;
        p.lane[s] = (uint8_t)nodes[s]->lane;
    }
    int i = f->count++;
    while (i > 0) {
        const int up = (i - 1) / 2;
        if (!(key < f->heap[up].key)) break;
        f->heap[i] = f->heap[up];
        i = up;
    }
    f->heap[i] = p;
    return true;
}

// Takes the pair of smallest key (the frontier is not empty).
static frontier_pair frontier_pop(frontier* f) {
    const frontier_pair top = f->heap[0], last = f->heap[--f->count];
    int i = 0;
    for (;;) {
        int down = 2 * i + 1;
        if (down >= f->count) break;
        if (down + 1 < f->count && f->heap[down + 1].key < f->heap[down].key) ++down;
        if (!(f->heap[down].key < last.key)) break;
        f->heap[i] = f->heap[down];
        i = down;
    }
    if (f->count > 0) f->heap[i] = last;
    return top;
}

// The node of a (which 0) or b (which 1) that a queued pair names, its
// parent's lanes set up in `boxes` as the parent's unfolding had them: the
// same operations, so the same roundings.
static wnode frontier_node(const collide_ctx* c, int which, int32_t parent, int lane,
                           wide_boxes* boxes) {
    if (parent < 0) return *c->roots[which];
    const side* s = which ? &c->b : &c->a;
    const mid_wide_node* n = &s->t.d->wide_nodes[parent];
    wide_boxes_own(n, boxes);
    wide_boxes_other(s, boxes);
    const float size = boxes->e[0][lane] + boxes->e[1][lane] + boxes->e[2][lane];
    wnode w = {boxes, lane, n->child[lane], size, n};
    return w;
}

// The live lane of smallest key, the lowest of equal ones.
static inline int lowest_key(f4 key, unsigned live) {
    int best = __builtin_ctz(live);
    for (unsigned m = live & (live - 1); m; m &= m - 1) {
        const int q = __builtin_ctz(m);
        if (key[q] < key[best]) best = q;
    }
    return best;
}

// The live lanes of k (the children of x, wide node n, unfolded against
// y) walked in that order: smallest key first, equal keys (copies that
// have not moved) in the tree's. Out of line: all pairs never come here,
// and the loop inside wide_unfold cost them 5-7% more instructions.
static __attribute__((noinline)) bool walk_likeliest_first(collide_ctx* c,
                                                           const mid_wide_node* n,
                                                           const wnode* x, const wnode* y,
                                                           const wide_boxes* k, unsigned live,
                                                           bool x_is_a) {
    const bool twin = twins(x, y);
    const f4 key = twin ? -motion(k) : overlap_shallowness(k, y);
    const f4 size = k->e[0] + k->e[1] + k->e[2];
    if (!twin && c->inside_twins == 0 && x->size > c->queue_above) {
        // The deepest lane is walked at once, the others queued (or, with
        // the frontier full, walked now too).
        const int best = lowest_key(key, live);
        for (unsigned m = live & ~(1u << best); m; m &= m - 1) {
            const int i = __builtin_ctz(m);
            wnode child = {k, i, n->child[i], size[i], n};
            const wnode* const nodes[2] = {x_is_a ? &child : y, x_is_a ? y : &child};
            if (frontier_push(c, key[i], nodes)) continue;
            if (!wide_descend(c, nodes[0], nodes[1])) return false;
        }
        wnode child = {k, best, n->child[best], size[best], n};
        return x_is_a ? wide_descend(c, &child, y) : wide_descend(c, y, &child);
    }
    // Below twins, depth first throughout: their children are copies of
    // each other, which the frontier's key would not tell apart.
    c->inside_twins += twin;
    while (live) {
        const int i = lowest_key(key, live);
        live &= ~(1u << i);
        wnode child = {k, i, n->child[i], size[i], n};
        if (!(x_is_a ? wide_descend(c, &child, y) : wide_descend(c, y, &child))) return false;
    }
    c->inside_twins -= twin;
    return true;
}

static unsigned leaf_slabs_apart(const collide_ctx* c, const side* xs, const side* ys,
                                 const mid_leaf_slab* const x_slabs[4], const wide_boxes* k,
                                 const wnode* y);

// Unfolds wide node x of side xs against y, the other tree's node: SAT-lite
// for its (up to) four children at once, x's axes with y's box as seen from
// x, then y's axes with the four boxes brought into y's frame side by side;
// against a leaf y, the leaf lanes' slabs too. Each call goes a wide level
// down one tree, so the recursion is at most the two wide trees' depths
// together deep (about CAROM_MESH_MAX_DEPTH frames of a few hundred bytes).
static bool wide_unfold(collide_ctx* c, const side* xs, const wnode* x, const wnode* y,
                        bool x_is_a) {
    const mid_wide_node* n = &xs->t.d->wide_nodes[x->ref];
    wide_boxes k;
    wide_boxes_own(n, &k);
    const wide_boxes* yb = y->boxes;
    f4 slack = c->slack;
    i4 apart = (i4){0, 0, 0, 0};
    for (int j = 0; j < 3; ++j) {
        apart |= f4_abs(lanes4(yb->c_other[j][y->lane]) - k.c[j]) -
                     (k.e[j] + lanes4(yb->e_other[j][y->lane])) >
                 slack;
    }
    wide_boxes_other(xs, &k);
    for (int j = 0; j < 3; ++j) {
        apart |= f4_abs(k.c_other[j] - lanes4(yb->c[j][y->lane])) -
                     (k.e_other[j] + lanes4(yb->e[j][y->lane])) >
                 slack;
    }
    unsigned live = ~(unsigned)i4_mask4(apart) & 15u;
    c->r->node_tests += n->count;
    if (y->ref < 0) {
        // Leaf lanes against a leaf: their slabs, all lanes at once, here
        // rather than one pair at a time below, where the outcome, hard to
        // predict, would cost a branch per pair.
        i4 child;
        memcpy(&child, n->child, sizeof child);
        unsigned leaves = live & (unsigned)i4_mask4(child < (i4){0, 0, 0, 0});
        if (leaves) {
            // The bits set in `leaves`, from a table of nibbles: without
            // a popcount instruction (x86-64's baseline has none) the
            // builtin is a library call.
            c->r->node_tests += (0x4332322132212110ull >> (4 * leaves)) & 15;
            const mid_leaf_slab* slabs[4];
            for (int i = 0; i < 4; ++i) slabs[i] = mid_wide_slab(xs->t.d->leaf_slabs, n, i);
            const side* ys = x_is_a ? &c->b : &c->a;
            live &= ~(leaves & leaf_slabs_apart(c, xs, ys, slabs, &k, y));
        }
    }
    if (c->frontier && (live & (live - 1)) != 0) {
        return walk_likeliest_first(c, n, x, y, &k, live, x_is_a);
    }
    f4 size = k.e[0] + k.e[1] + k.e[2];
    while (live) {
        int i = __builtin_ctz(live);
        live &= live - 1;
        wnode child = {&k, i, n->child[i], size[i], n};
        if (!(x_is_a ? wide_descend(c, &child, y) : wide_descend(c, y, &child))) return false;
    }
    return true;
}

// The lanes of k (boxes of side xs, their slabs x_slabs) whose leaves are
// apart from y, a leaf of side ys, by more than the slack, along the
// normal of one of their slabs (mid_leaf_slab); a lane that holds no leaf
// gives a meaningless bit, for the caller to mask. A leaf is bounded by its
// slab and its box together: for a point c + d of it (c its box's centre)
// and a direction m, and any number q,
//     m . d = q (n . d) + w . d   with w = m - q n,
// where n . d lies in the slab and w . d within the box's extent along w.
// With q = m . n, w is short when m is near n: the near-parallel surfaces
// that boxes cannot part (near-coincident meshes) are parted here. Both
// directions share q, and both centres' offsets come from one difference
// of centres, in y's frame; each w meets the box of its own leaf in that
// leaf's frame. The slack covers the rounding as it does for the boxes.
static unsigned leaf_slabs_apart(const collide_ctx* c, const side* xs, const side* ys,
                                 const mid_leaf_slab* const x_slabs[4], const wide_boxes* k,
                                 const wnode* y) {
    // The lanes' slabs side by side: rows normal x, y, z and lo from each
    // slab's first four floats, hi from its last four.
    f4 head[4], tail[4], nx[4], rest[4];
    for (int i = 0; i < 4; ++i) {
        const char* s = (const char*)x_slabs[i];
        memcpy(&head[i], s, sizeof head[i]);
        memcpy(&tail[i], s + sizeof(float), sizeof tail[i]);
    }
    f4_transpose4(head[0], head[1], head[2], head[3], nx);
    f4_transpose4(tail[0], tail[1], tail[2], tail[3], rest);
    const f4 lo_x = nx[3], hi_x = rest[3];
    const mid_leaf_slab* sy = wnode_slab(ys->t.d, y);
    const f4 ny = mid_load3(sy->normal);
    // x's normals in y's frame (M nx), y's in x's (M^T ny).
    f4 nx_in_y[3];
    for (int j = 0; j < 3; ++j) {
        nx_in_y[j] = xs->m[j][0] * nx[0] + xs->m[j][1] * nx[1] + xs->m[j][2] * nx[2];
    }
    const f4 ny_in_x = xs->row[0] * mid_broadcast(ny, 0) + xs->row[1] * mid_broadcast(ny, 1) +
                       xs->row[2] * mid_broadcast(ny, 2);
    const f4 q = nx_in_y[0] * mid_broadcast(ny, 0) + nx_in_y[1] * mid_broadcast(ny, 1) +
                 nx_in_y[2] * mid_broadcast(ny, 2);
    // Beyond its slab, how far each leaf reaches along the other's normal;
    // x's centres along y's normal from y's centre, y's along x's normals.
    f4 reach_x = f4_zero(), reach_y = f4_zero(), along_y = f4_zero(), along_x = f4_zero();
    for (int j = 0; j < 3; ++j) {
        reach_x += f4_abs(mid_broadcast(ny_in_x, j) - q * nx[j]) * k->e[j];
        reach_y += f4_abs(nx_in_y[j] - q * mid_broadcast(ny, j)) * lanes4(y->boxes->e[j][y->lane]);
        const f4 between = k->c_other[j] - lanes4(y->boxes->c[j][y->lane]);
        along_y += mid_broadcast(ny, j) * between;
        along_x -= nx_in_y[j] * between;
    }
    const f4 x0 = q * lo_x, x1 = q * hi_x, y0 = q * lanes4(sy->lo), y1 = q * lanes4(sy->hi);
    const f4 slack = c->slack;
    const i4 apart = (f4_min(x0, x1) + along_y - reach_x > lanes4(sy->hi) + slack) |
                     (f4_max(x0, x1) + along_y + reach_x < lanes4(sy->lo) - slack) |
                     (f4_min(y0, y1) + along_x - reach_y > hi_x + slack) |
                     (f4_max(y0, y1) + along_x + reach_y < lo_x - slack);
    return (unsigned)i4_mask4(apart);
}

// Two leaves meet here through an unfolding that has tested their slabs
// (wide_unfold), or as the roots of two one-leaf trees, tested here.
static bool wide_descend(collide_ctx* c, const wnode* a, const wnode* b) {
    if (a->ref < 0 && b->ref < 0) {
        if (!a->parent && !b->parent) {
            ++c->r->node_tests;
            const mid_leaf_slab* root = &c->a.t.d->root_slab;
            const mid_leaf_slab* const slabs[4] = {root, root, root, root};
            if (leaf_slabs_apart(c, &c->a, &c->b, slabs, a->boxes, b) & 1) return true;
        }
        return collide_leaves(c, mid_leaf_first(a->ref), mid_leaf_count(a->ref),
                              mid_leaf_first(b->ref), mid_leaf_count(b->ref));
    }
    if (b->ref < 0 || (a->ref >= 0 && a->size >= b->size)) return wide_unfold(c, &c->a, a, b, true);
    return wide_unfold(c, &c->b, b, a, false);
}

// A tree's root as a wide walk node: its box, set up as the other walk
// (descend) sets up its root (h), spread over the lanes of `boxes`.
static wnode wide_root(const hnode* h, wide_boxes* boxes) {
    for (int j = 0; j < 3; ++j) {
        boxes->c[j] = mid_broadcast(h->c, j);
        boxes->e[j] = mid_broadcast(h->e, j);
        boxes->c_other[j] = mid_broadcast(h->c_other, j);
        boxes->e_other[j] = mid_broadcast(h->e_other, j);
    }
    wnode w = {boxes, 0, h->n.leaf ? mid_leaf_ref(h->n.first, h->n.count) : 0, h->size, NULL};
    return w;
}

// A first hit between two AABB trees: the roots' pair, then the queued
// pairs best first, until a pair is reported. Out of line, so that the
// frontier's stack is the first hit's alone.
static __attribute__((noinline)) void first_hit_walk(collide_ctx* c, const wnode* wa,
                                                     const wnode* wb, int queue_capacity) {
    frontier pending;
    pending.count = 0;
    pending.capacity = queue_capacity;
    c->frontier = &pending;
    c->inside_twins = 0;
    c->roots[0] = wa;
    c->roots[1] = wb;
    c->queue_above = MID_FRONTIER_SIZE * carom_maxf(wa->size, wb->size);
    bool go_on = wide_descend(c, wa, wb);
    while (go_on && pending.count > 0) {
        const frontier_pair p = frontier_pop(&pending);
        wide_boxes boxes[2];
        const wnode a = frontier_node(c, 0, p.parent[0], p.lane[0], &boxes[0]);
        const wnode b = frontier_node(c, 1, p.parent[1], p.lane[1], &boxes[1]);
        go_on = wide_descend(c, &a, &b);
    }
    c->frontier = NULL;
}

static void side_init(side* s, const carom_mesh* mesh, const carom_rot* m, vec3s trans) {
    s->t = mid_tree_of(mesh);
    for (int j = 0; j < 3; ++j) {
        s->col[j] = f4_make(m->row[0].raw[j], m->row[1].raw[j], m->row[2].raw[j]);
        s->abs_col[j] = f4_abs(s->col[j]);
        s->row[j] = f4_make(m->row[j].raw[0], m->row[j].raw[1], m->row[j].raw[2]);
        for (int i = 0; i < 3; ++i) {
            s->m[j][i] = lanes4(m->row[j].raw[i]);
            s->abs_m[j][i] = f4_abs(s->m[j][i]);
        }
        s->t4[j] = lanes4(trans.raw[j]);
    }
    s->trans = f4_from(trans);
}

// All pairs, or (queue_capacity > 0) a first hit walked likeliest first.
static carom_mesh_query_result collide(const carom_mesh* a, carom_xform pose_a,
                                       const carom_mesh* b, carom_xform pose_b,
                                       carom_mesh_pair_fn* fn, void* user, int queue_capacity) {
    carom_mesh_query_result r = {0};
    mid_pair_frame f;
    if (!a || !a->data || !b || !b->data || !fn ||
        !mid_pair_frame_init(a, pose_a, b, pose_b, &f)) {
        r.state = CAROM_INVALID_INPUT;
        return r;
    }
    // Field by field: an initializer would clear the caches, tens of
    // kilobytes, which a first-hit query would pay for on every call.
    collide_ctx c;
    c.f = &f;
    c.fn = fn;
    c.user = user;
    c.r = &r;
    c.frontier = NULL;
    for (int i = 0; i < MID_LEAF_CACHE; ++i) c.a_tag[i] = c.b_tag[i] = -1;
    for (int i = 0; i < 1 << MID_BOXES_CACHE_BITS; ++i) c.b_boxes_tag[i] = -1;
    c.slack = (f4){f.slack, f.slack, f.slack, f.slack};
    // b into a: x_a = rot x_b + trans; a into b: x_b = rot^T x_a - rot^T trans.
    carom_rot inverse;
    for (int i = 0; i < 3; ++i) {
        inverse.row[i] = v3(f.rot.row[0].raw[i], f.rot.row[1].raw[i], f.rot.row[2].raw[i]);
    }
    side_init(&c.b, b, &f.rot, f.trans);
    side_init(&c.a, a, &inverse, v3_neg(rot_apply(&inverse, f.trans)));
    hnode ra, rb;
    mid_walk_root(&c.a.t, &ra.n);
    mid_walk_root(&c.b.t, &rb.n);
    hnode_own(&ra);
    hnode_own(&rb);
    hnode_other(&c.a, &ra);
    ++r.node_tests;
    if (!child_overlaps(&c.b, &rb, &ra, c.slack)) return r;
    if (!c.a.t.box && !c.b.t.box) {
        wide_boxes ba, bb;
        wnode wa = wide_root(&ra, &ba), wb = wide_root(&rb, &bb);
        if (queue_capacity > 0) {
            first_hit_walk(&c, &wa, &wb, queue_capacity);
        } else {
            wide_descend(&c, &wa, &wb);
        }
    } else {
        descend(&c, &ra, &rb);
    }
    return r;
}

carom_mesh_query_result carom_mesh_collide(const carom_mesh* a, carom_xform pose_a,
                                           const carom_mesh* b, carom_xform pose_b,
                                           carom_mesh_pair_fn* fn, void* user) {
    return collide(a, pose_a, b, pose_b, fn, user, 0);
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

// Pairs into `pairs` (capacity `capacity`), all of them, or the first hit
// alone with a queue of `queue_capacity` (collide).
static carom_mesh_query_result collect_pairs(const carom_mesh* a, carom_xform pose_a,
                                             const carom_mesh* b, carom_xform pose_b,
                                             carom_triangle_pair* pairs, int capacity,
                                             int queue_capacity) {
    pair_buffer buf = {pairs, capacity, 0, queue_capacity > 0};
    carom_mesh_query_result r = collide(a, pose_a, b, pose_b, store_pair, &buf, queue_capacity);
    r.stopped = false;  // a stop requested by first_only is not the caller's callback
    return r;
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
    return collect_pairs(a, pose_a, b, pose_b, pairs, capacity, first_only ? MID_FRONTIER : 0);
}

carom_mesh_query_result mid_mesh_first_hit(const carom_mesh* a, carom_xform pose_a,
                                           const carom_mesh* b, carom_xform pose_b,
                                           carom_triangle_pair* pair, int queue_capacity) {
    const int held =
        queue_capacity < 1 ? 1 : queue_capacity > MID_FRONTIER ? MID_FRONTIER : queue_capacity;
    return collect_pairs(a, pose_a, b, pose_b, pair, pair ? 1 : 0, held);
}
