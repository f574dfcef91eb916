// Dynamic AABB tree broad phase, in the line of Box2D, Bullet, Jolt and FCL.
//
// Each leaf stores its proxy's fat box grown by a margin, so a proxy that
// moves a little stays inside its stored box and leaves the tree alone.
// Insertion picks the sibling that adds the least surface area to the tree
// (the greedy branch and bound of Box2D v3), then walks up towards the root
// refitting boxes, with at each ancestor the surface-area rotation of
// Box2D v3 that shrinks it most, if any.
//
// Layout: a node holds the boxes of its two children, as Jolt's broad-phase
// tree and compact ray-tracing hierarchies do, so one 64-byte line answers
// which children a query enters; leaves are not nodes but references to a
// slot, with their stored box in their parent. A traversal then touches one
// line per node it enters, instead of one per child it tests: traversals
// are bound by memory latency, not arithmetic.
//
// Pairs persist, as in Box2D: the state keeps every pair of leaves whose
// stored boxes overlap. Stored boxes change only when a proxy leaves its
// box (or is inserted or removed), so only those proxies, "fresh" below,
// are queried against the tree; every other cached pair is still exact.
// Each call then reports the cached pairs whose fat boxes really overlap.
// When many proxies are fresh, the cache is rebuilt by colliding the tree
// with itself instead: for every node, its two subtrees are descended
// together.
//
// Nodes live in one pool indexed by int, with a free list threaded through
// the parent field. All buffers stay in the state between calls.
#include <limits.h>

#include "broad/broad_internal.h"

// A reference to a subtree: a node index (>= 0), TREE_NULL for none, or a
// leaf, written -2 - slot.
#define TREE_NULL (-1)
// In the per-slot parent table: the slot holds no proxy.
#define TREE_ABSENT (-2)

// Default margin, relative to the box's size on each axis.
#define TREE_DEFAULT_MARGIN 0.1f

// A thin axis of a box still gets a margin: the margin times this fraction
// of the box's largest size; and whatever the margin, at least one or two
// float steps of the box's coordinates (a point far from the origin moves in
// such steps), or for a point at the origin a tiny length.
#define TREE_THIN_FRACTION (1.0f / 32.0f)
#define TREE_POSITION_FRACTION (1.0f / 8388608.0f)
#define TREE_TINY_LENGTH 1e-30f

// Stored boxes are clamped here: beyond every valid fat box (a box within
// CAROM_MAX_COORDINATE moved by as much again), and small enough that areas
// of boxes this large stay finite.
#define TREE_LIMIT (4.0f * CAROM_MAX_COORDINATE)

// A stored box is replaced when it exceeds the proxy's fat box by more than
// this many margins: a proxy that was fast and has slowed down should not
// keep a huge box that every query has to enter.
#define TREE_SHRINK_MARGINS 4.0f

// Above one fresh proxy in this many, colliding the tree with itself is
// cheaper than filtering the cache and querying each fresh proxy.
#define TREE_FULL_SHARE 4

// Nodes are aligned to cache lines, one node per line.
#define TREE_ALIGN 64

typedef struct tree_node {
    // The children's boxes: a leaf's stored (enlarged) box, or the union of
    // a child node's own children.
    carom_aabb box[2];
    int child[2];
    // The parent node, TREE_NULL at the root; for a free node, the next
    // free node.
    int parent;
    // 1 + the larger child height (a leaf counts 0); -1 when free.
    int height;
} tree_node;

_Static_assert(sizeof(tree_node) == TREE_ALIGN, "one node per cache line");

// Slot flags, reset at the end of each call.
enum {
    // The stored box changed: inserted, moved out of its box, or removed.
    TREE_FRESH = 1,
    // The fat box changed (the world's moved list, copied in for the call).
    TREE_MOVED = 2,
};

// A pair of slots whose stored boxes overlap. The top bit of `b` says
// whether their fat boxes overlapped at the last call, which stays true
// until one of the two moves: most pairs then need no look at the boxes.
typedef struct tree_pair {
    uint32_t a;
    uint32_t b;
} tree_pair;

#define TREE_TOUCHING 0x80000000u

// Two subtrees still to be collided, with their boxes.
typedef struct tree_task {
    int a;
    int b;
    carom_aabb box_a;
    carom_aabb box_b;
} tree_task;

typedef struct tree_state {
    float margin;
    // The root reference and its box (kept here: the root has no parent
    // to hold it).
    int root;
    carom_aabb root_box;
    tree_node* nodes;  // aligned inside `node_block`
    void* node_block;
    int node_capacity;
    int free_list;
    // Per slot: the node holding its leaf (TREE_NULL when the leaf is the
    // root, TREE_ABSENT when the slot holds no proxy), and its flags, bytes
    // so that the pass over the cached pairs finds them in a near cache.
    int* up;
    int up_capacity;
    uint8_t* flags;
    int flags_capacity;
    // The fresh slots, each once; room for every slot, so marking never
    // allocates.
    int* fresh;
    int fresh_capacity;
    int fresh_count;
    // Traversal stacks, grown on demand and kept.
    int* stack;
    int stack_capacity;
    tree_task* tasks;
    int task_capacity;
    // Every pair of leaves whose stored boxes overlapped at the end of the
    // last successful call.
    tree_pair* cache;
    int cache_count;
    int cache_capacity;
    int touching_count;  // cached pairs with the touching bit
    // The cache cannot be trusted (first call, or a call that failed).
    bool recompute_all;
} tree_state;

// ---- references -------------------------------------------------------------------

static inline bool is_leaf(int ref) { return ref <= -2; }
static inline int leaf_ref(int slot) { return -2 - slot; }
static inline int ref_slot(int ref) { return -2 - ref; }

static inline int parent_of(const tree_state* t, int ref) {
    return is_leaf(ref) ? t->up[ref_slot(ref)] : t->nodes[ref].parent;
}

static inline void set_parent(tree_state* t, int ref, int parent) {
    if (is_leaf(ref)) {
        t->up[ref_slot(ref)] = parent;
    } else {
        t->nodes[ref].parent = parent;
    }
}

static inline int height_of(const tree_state* t, int ref) {
    return is_leaf(ref) ? 0 : t->nodes[ref].height;
}

static inline int side_of(const tree_state* t, int node, int ref) {
    return t->nodes[node].child[0] == ref ? 0 : 1;
}

// Where the box of `ref` is kept: in its parent, or at the root.
static inline carom_aabb* box_of(tree_state* t, int ref) {
    int p = parent_of(t, ref);
    return p == TREE_NULL ? &t->root_box : &t->nodes[p].box[side_of(t, p, ref)];
}

// ---- boxes --------------------------------------------------------------------

// Half the surface area: the expected cost of visiting a node is
// proportional to it, which is all the insertion heuristic needs.
static inline float box_area(const carom_aabb* b) {
    float dx = b->max.x - b->min.x, dy = b->max.y - b->min.y, dz = b->max.z - b->min.z;
    return dx * dy + dy * dz + dz * dx;
}

static inline carom_aabb box_union(const carom_aabb* a, const carom_aabb* b) {
    carom_aabb r = {v3_min(a->min, b->min), v3_max(a->max, b->max)};
    return r;
}

static inline float union_area(const carom_aabb* a, const carom_aabb* b) {
    carom_aabb u = box_union(a, b);
    return box_area(&u);
}

static inline bool box_contains(const carom_aabb* outer, const carom_aabb* inner) {
    return outer->min.x <= inner->min.x && outer->min.y <= inner->min.y &&
           outer->min.z <= inner->min.z && inner->max.x <= outer->max.x &&
           inner->max.y <= outer->max.y && inner->max.z <= outer->max.z;
}

static inline float box_centre_distance2(const carom_aabb* a, const carom_aabb* b) {
    vec3s d = v3_sub(v3_add(a->min, a->max), v3_add(b->min, b->max));
    return v3_len2(d);
}

static inline float absmax3(vec3s v) {
    return carom_maxf(fabsf(v.x), carom_maxf(fabsf(v.y), fabsf(v.z)));
}

// One axis of the stored box: [lo, hi] grown by `margin` times `size`, or
// by the floor when that is more.
static inline void grow_axis(float lo, float hi, float size, float margin, float floor_margin,
                             float* out_lo, float* out_hi) {
    float m = carom_maxf(margin * size, floor_margin);
    *out_lo = carom_maxf(lo - m, -TREE_LIMIT);
    *out_hi = carom_minf(hi + m, TREE_LIMIT);
}

// The box stored for a fat box: grown on each axis by `margin` times its
// size there, with the floors above so that flat and point boxes also get
// room to move. Monotone in `margin`, so the box grown by a larger margin
// contains the one grown by a smaller one.
static carom_aabb enlarge(const carom_aabb* fat, float margin) {
    vec3s size = v3_sub(fat->max, fat->min);
    float largest = carom_maxf(size.x, carom_maxf(size.y, size.z));
    float position = carom_maxf(absmax3(fat->min), absmax3(fat->max));
    float floor_margin =
        carom_maxf(margin * largest * TREE_THIN_FRACTION,
                   carom_maxf(position * TREE_POSITION_FRACTION, TREE_TINY_LENGTH));
    carom_aabb r;
    grow_axis(fat->min.x, fat->max.x, size.x, margin, floor_margin, &r.min.x, &r.max.x);
    grow_axis(fat->min.y, fat->max.y, size.y, margin, floor_margin, &r.min.y, &r.max.y);
    grow_axis(fat->min.z, fat->max.z, size.z, margin, floor_margin, &r.min.z, &r.max.z);
    return r;
}

// ---- storage --------------------------------------------------------------------

// Grows the pool to at least `need` nodes, keeping them aligned: realloc
// may move the block to an address of another alignment, and then the
// nodes are shifted to the new aligned start.
static bool grow_nodes(tree_state* t, int need) {
    int old_capacity = t->node_capacity;
    int capacity = old_capacity < 16 ? 16 : old_capacity;
    while (capacity < need) capacity *= 2;  // need <= 2 * CAROM_BROAD_MAX_PROXIES
    size_t old_offset = t->node_block ? (size_t)((char*)t->nodes - (char*)t->node_block) : 0;
    char* block = carom_realloc(t->node_block, (size_t)capacity * sizeof(tree_node) + TREE_ALIGN);
    if (!block) return false;
    size_t offset = (TREE_ALIGN - (size_t)((uintptr_t)block % TREE_ALIGN)) % TREE_ALIGN;
    if (offset != old_offset && old_capacity > 0)
        memmove(block + offset, block + old_offset, (size_t)old_capacity * sizeof(tree_node));
    t->node_block = block;
    t->nodes = (tree_node*)(void*)(block + offset);
    t->node_capacity = capacity;
    // New nodes go on the free list lowest first.
    for (int i = capacity - 1; i >= old_capacity; --i) {
        t->nodes[i].height = -1;
        t->nodes[i].parent = t->free_list;
        t->free_list = i;
    }
    return true;
}

// Makes sure a node is free, so that the structural change that follows
// cannot fail halfway.
static bool reserve_node(tree_state* t) {
    return t->free_list != TREE_NULL || grow_nodes(t, t->node_capacity + 1);
}

static int take_node(tree_state* t) {
    int i = t->free_list;
    CAROM_ASSERT(i != TREE_NULL);
    t->free_list = t->nodes[i].parent;
    return i;
}

static void give_node(tree_state* t, int i) {
    t->nodes[i].height = -1;
    t->nodes[i].parent = t->free_list;
    t->free_list = i;
}

static bool reserve_slots(tree_state* t, const broad_world* w, int slot) {
    if (slot < t->up_capacity && slot < t->flags_capacity && slot < t->fresh_capacity) return true;
    int need = w->capacity > slot ? w->capacity : slot + 1;
    int old_up = t->up_capacity, old_flags = t->flags_capacity;
    if (!broad_reserve((void**)&t->up, &t->up_capacity, need, sizeof(int))) return false;
    for (int i = old_up; i < t->up_capacity; ++i) t->up[i] = TREE_ABSENT;
    if (!broad_reserve((void**)&t->flags, &t->flags_capacity, need, 1)) return false;
    memset(t->flags + old_flags, 0, (size_t)(t->flags_capacity - old_flags));
    return broad_reserve((void**)&t->fresh, &t->fresh_capacity, need, sizeof(int));
}

static inline void mark_fresh(tree_state* t, int slot) {
    if (t->flags[slot] & TREE_FRESH) return;
    t->flags[slot] |= TREE_FRESH;
    t->fresh[t->fresh_count++] = slot;
}

static void clear_fresh(tree_state* t) {
    for (int i = 0; i < t->fresh_count; ++i) t->flags[t->fresh[i]] &= (uint8_t)~TREE_FRESH;
    t->fresh_count = 0;
}

static void mark_moved(tree_state* t, const broad_world* w, bool on) {
    for (int i = 0; i < w->moved_count; ++i) {
        uint8_t* f = &t->flags[w->moved[i]];
        *f = on ? (uint8_t)(*f | TREE_MOVED) : (uint8_t)(*f & ~TREE_MOVED);
    }
}

static inline bool cache_push(tree_state* t, const carom_aabb* fat, int a, int b) {
    if (t->cache_count == t->cache_capacity &&
        (t->cache_count == INT_MAX || !broad_reserve((void**)&t->cache, &t->cache_capacity,
                                                     t->cache_count + 1, sizeof(tree_pair))))
        return false;
    bool touching = broad_boxes_overlap(&fat[a], &fat[b]);
    uint32_t bit = touching ? TREE_TOUCHING : 0;
    t->cache[t->cache_count++] = (tree_pair){(uint32_t)a, (uint32_t)b | bit};
    t->touching_count += touching;
    return true;
}

// Grows the stacks so that `top + extra` entries fit.
static inline bool stack_fits(tree_state* t, int top, int extra) {
    if (top + extra <= t->stack_capacity) return true;
    return broad_reserve((void**)&t->stack, &t->stack_capacity, top + extra, sizeof(int));
}

static inline bool tasks_fit(tree_state* t, int top, int extra) {
    if (top + extra <= t->task_capacity) return true;
    return broad_reserve((void**)&t->tasks, &t->task_capacity, top + extra, sizeof(tree_task));
}

// ---- structure ------------------------------------------------------------------

// Recomputes a node's box (kept in its parent) and height from its
// children; true when either changed.
static bool refit(tree_state* t, int i) {
    tree_node* n = &t->nodes[i];
    carom_aabb box = box_union(&n->box[0], &n->box[1]);
    int h0 = height_of(t, n->child[0]), h1 = height_of(t, n->child[1]);
    int height = 1 + (h0 > h1 ? h0 : h1);
    carom_aabb* home = box_of(t, i);
    bool changed = height != n->height || memcmp(&box, home, sizeof box) != 0;
    *home = box;
    n->height = height;
    return changed;
}

// Makes `ref` the child of `parent` on `side`, with its box.
static inline void link(tree_state* t, int parent, int side, int ref, const carom_aabb* box) {
    t->nodes[parent].child[side] = ref;
    t->nodes[parent].box[side] = *box;
    set_parent(t, ref, parent);
}

// Exchanges the child of `a` on side `s` with the grandchild on side `k`
// of a's other child, which is then refitted; `a` itself is left to the
// caller.
static void swap_down(tree_state* t, int a, int s, int k) {
    tree_node* n = &t->nodes[a];
    int other = n->child[1 - s];
    int moving = n->child[s];
    carom_aabb moving_box = n->box[s];
    tree_node* o = &t->nodes[other];
    int grandchild = o->child[k];
    carom_aabb grandchild_box = o->box[k];
    link(t, a, s, grandchild, &grandchild_box);
    link(t, other, k, moving, &moving_box);
    n->box[1 - s] = box_union(&o->box[0], &o->box[1]);
    int h0 = height_of(t, o->child[0]), h1 = height_of(t, o->child[1]);
    o->height = 1 + (h0 > h1 ? h0 : h1);
}

// The surface-area rotations of Box2D v3. Swapping a child of `a` with a
// grandchild on the other side changes only that other child's box, so the
// gain is that box's loss of area; the largest strict gain wins.
typedef struct tree_swap {
    int side;        // of the child of `a` that moves down
    int grandchild;  // side, in the other child, of the grandchild that moves up
    float gain;
} tree_swap;

static void consider_swaps(const tree_state* t, int a, int s, tree_swap* best) {
    const tree_node* n = &t->nodes[a];
    int other = n->child[1 - s];
    if (is_leaf(other)) return;
    const tree_node* o = &t->nodes[other];
    float area = box_area(&n->box[1 - s]);
    for (int k = 0; k < 2; ++k) {
        // The child takes the grandchild's place beside the other grandchild.
        float gain = area - union_area(&n->box[s], &o->box[1 - k]);
        if (gain > best->gain) *best = (tree_swap){s, k, gain};
    }
}

static bool rotate(tree_state* t, int a) {
    tree_swap best = {0, 0, 0.0f};
    consider_swaps(t, a, 0, &best);
    consider_swaps(t, a, 1, &best);
    if (best.gain <= 0.0f) return false;
    swap_down(t, a, best.side, best.grandchild);
    return true;
}

// From node `i`, whose subtree changed, towards the root: rotate, then
// refit. Rotations keep each node in its place, so the walk follows
// parents. It stops above the first node that neither rotates nor changes:
// the nodes above would see the same children as before.
static void walk_up(tree_state* t, int i) {
    bool first = true;
    while (i != TREE_NULL) {
        bool rotated = rotate(t, i);
        bool changed = refit(t, i);
        if (!first && !rotated && !changed) return;
        first = false;
        i = t->nodes[i].parent;
    }
}

// A candidate sibling: the area it adds, and on equal areas the height of
// the path through it once the leaf hangs there (its depth plus its own
// height), so that equal boxes fill the tree evenly instead of in a chain.
typedef struct tree_choice {
    int ref;
    float cost;
    int reach;
} tree_choice;

static inline void offer(tree_choice* best, int ref, float cost, int reach) {
    if (cost < best->cost || (cost == best->cost && reach < best->reach))
        *best = (tree_choice){ref, cost, reach};
}

// Whether a subtree at `depth` whose placements cost at least `lower` may
// hold a better choice than `best` (its nodes reach at least `depth`).
static inline bool may_beat(const tree_choice* best, float lower, int depth) {
    return lower < best->cost || (lower == best->cost && depth < best->reach);
}

// The child of node `n` to descend into when both may beat the best: the
// smaller lower bound; on a tie the nearer centre (as Box2D v3), then the
// shorter subtree.
static int pick_child(const tree_state* t, const tree_node* n, const float lower[2],
                      const carom_aabb* box) {
    if (lower[0] != lower[1]) return lower[0] < lower[1] ? 0 : 1;
    float d0 = box_centre_distance2(&n->box[0], box);
    float d1 = box_centre_distance2(&n->box[1], box);
    if (d0 != d1) return d0 < d1 ? 0 : 1;
    return height_of(t, n->child[0]) <= height_of(t, n->child[1]) ? 0 : 1;
}

// The sibling for a new leaf with `box`: the subtree whose pairing with it
// adds the least area to the tree, counting the growth of every ancestor.
// The descent follows the child with the smaller lower bound and stops when
// no child can beat the best found so far (Box2D v3's search).
static int find_sibling(const tree_state* t, const carom_aabb* box) {
    float leaf_area = box_area(box);
    int index = t->root;
    int depth = 0;
    float area = box_area(&t->root_box);
    float direct = union_area(&t->root_box, box);
    float inherited = 0.0f;  // growth of the ancestors of `index`
    tree_choice best = {index, direct, height_of(t, index)};
    while (!is_leaf(index)) {
        const tree_node* n = &t->nodes[index];
        offer(&best, index, direct + inherited, depth + n->height);
        inherited += direct - area;  // this node grows too, for all below it
        ++depth;
        float lower[2], child_area[2], child_direct[2];
        bool open[2];
        for (int k = 0; k < 2; ++k) {
            child_direct[k] = union_area(&n->box[k], box);
            child_area[k] = box_area(&n->box[k]);
            // Going below costs at least the child's growth plus a new
            // parent no smaller than the new leaf; the child itself costs
            // its direct cost.
            lower[k] = inherited + child_direct[k] + carom_minf(leaf_area - child_area[k], 0.0f);
            if (is_leaf(n->child[k])) offer(&best, n->child[k], child_direct[k] + inherited, depth);
        }
        for (int k = 0; k < 2; ++k)
            open[k] = !is_leaf(n->child[k]) && may_beat(&best, lower[k], depth);
        if (!open[0] && !open[1]) break;
        int k = open[0] && open[1] ? pick_child(t, n, lower, box) : (open[0] ? 0 : 1);
        index = n->child[k];
        area = child_area[k];
        direct = child_direct[k];
    }
    return best.ref;
}

// Links the leaf of `slot`, with stored box `box`, into the tree. Needs one
// free node.
static void attach(tree_state* t, int slot, const carom_aabb* box) {
    int leaf = leaf_ref(slot);
    if (t->root == TREE_NULL) {
        t->root = leaf;
        t->root_box = *box;
        t->up[slot] = TREE_NULL;
        return;
    }
    int sibling = find_sibling(t, box);
    int old_parent = parent_of(t, sibling);
    carom_aabb sibling_box = *box_of(t, sibling);
    int p = take_node(t);
    t->nodes[p].height = 1 + height_of(t, sibling);
    if (old_parent == TREE_NULL) {
        t->root = p;
        t->nodes[p].parent = TREE_NULL;
    } else {
        // The box kept there for the sibling is refitted to p's at once.
        int side = side_of(t, old_parent, sibling);
        t->nodes[old_parent].child[side] = p;
        t->nodes[p].parent = old_parent;
    }
    link(t, p, 0, sibling, &sibling_box);
    link(t, p, 1, leaf, box);
    walk_up(t, p);
}

// Unlinks the leaf of `slot` from the tree, freeing its parent node.
static void detach(tree_state* t, int slot) {
    int p = t->up[slot];
    t->up[slot] = TREE_ABSENT;
    if (p == TREE_NULL) {
        t->root = TREE_NULL;
        return;
    }
    const tree_node* n = &t->nodes[p];
    int s = n->child[0] == leaf_ref(slot) ? 1 : 0;  // the sibling's side
    int sibling = n->child[s];
    carom_aabb sibling_box = n->box[s];
    int grand = n->parent;
    give_node(t, p);
    if (grand == TREE_NULL) {
        t->root = sibling;
        t->root_box = sibling_box;
        set_parent(t, sibling, TREE_NULL);
        return;
    }
    link(t, grand, side_of(t, grand, p), sibling, &sibling_box);
    walk_up(t, grand);
}

// True when the stored box no longer suits the fat box: too small to hold
// it, or, on some axis, longer than the fat box grown by several margins,
// so that queries would enter it for nothing. Sizes are compared rather
// than boxes, so that a fat box moving inside its stored box never counts
// as shrunk.
static bool needs_reinsert(const tree_state* t, const carom_aabb* stored, const carom_aabb* fat) {
    if (!box_contains(stored, fat)) return true;
    carom_aabb loose = enlarge(fat, t->margin * TREE_SHRINK_MARGINS);
    vec3s have = v3_sub(stored->max, stored->min), limit = v3_sub(loose.max, loose.min);
    return have.x > limit.x || have.y > limit.y || have.z > limit.z;
}

// ---- pair finding ---------------------------------------------------------------

static inline void push_task(tree_task* tasks, int* top, int a, const carom_aabb* box_a, int b,
                             const carom_aabb* box_b) {
    tree_task* task = &tasks[(*top)++];
    task->a = a;
    task->b = b;
    task->box_a = *box_a;
    task->box_b = *box_b;
}

// Every pair of leaves with one leaf under the children of node `i` on
// either side whose stored boxes overlap: both subtrees are descended
// together, splitting the larger box, and a pair of subtrees is pushed only
// when its boxes overlap.
static bool collide_children(tree_state* t, const carom_aabb* fat, int i) {
    const tree_node* nodes = t->nodes;
    const tree_node* root = &nodes[i];
    if (!broad_boxes_overlap(&root->box[0], &root->box[1])) return true;
    tree_task* tasks = t->tasks;
    int top = 0;
    push_task(tasks, &top, root->child[0], &root->box[0], root->child[1], &root->box[1]);
    while (top > 0) {
        tree_task task = tasks[--top];
        bool leaf_a = is_leaf(task.a), leaf_b = is_leaf(task.b);
        if (leaf_a && leaf_b) {
            if (!cache_push(t, fat, ref_slot(task.a), ref_slot(task.b))) return false;
            continue;
        }
        if (top + 2 > t->task_capacity) {
            if (!tasks_fit(t, top, 2)) return false;
            tasks = t->tasks;
        }
        if (leaf_b || (!leaf_a && box_area(&task.box_a) >= box_area(&task.box_b))) {
            const tree_node* n = &nodes[task.a];
            for (int k = 0; k < 2; ++k)
                if (broad_boxes_overlap(&n->box[k], &task.box_b))
                    push_task(tasks, &top, n->child[k], &n->box[k], task.b, &task.box_b);
        } else {
            const tree_node* n = &nodes[task.b];
            for (int k = 0; k < 2; ++k)
                if (broad_boxes_overlap(&task.box_a, &n->box[k]))
                    push_task(tasks, &top, task.a, &task.box_a, n->child[k], &n->box[k]);
        }
    }
    return true;
}

// The cache from scratch: every pair of leaves meets under exactly one
// node, on its two different sides.
static bool rebuild_cache(tree_state* t, const carom_aabb* fat) {
    t->cache_count = 0;
    t->touching_count = 0;
    if (!tasks_fit(t, 0, 2)) return false;
    for (int i = 0; i < t->node_capacity; ++i)
        if (t->nodes[i].height > 0 && !collide_children(t, fat, i)) return false;
    return true;
}

// Adds the pairs of fresh slot `s`, whose stored box is `q`; a pair of two
// fresh slots is added by the smaller slot only. The descent continues into
// one overlapping child directly and stacks only the other.
static bool query_fresh(tree_state* t, const carom_aabb* fat, int s, const carom_aabb* q) {
    const tree_node* nodes = t->nodes;
    const uint8_t* flags = t->flags;
    int* stack = t->stack;
    int top = 0;
    int index = t->root;
    for (;;) {
        const tree_node* n = &nodes[index];
        int next = TREE_NULL;
        for (int k = 0; k < 2; ++k) {
            if (!broad_boxes_overlap(&n->box[k], q)) continue;
            int r = n->child[k];
            if (!is_leaf(r)) {
                if (next == TREE_NULL) {
                    next = r;
                } else {
                    if (top == t->stack_capacity) {
                        if (!stack_fits(t, top, 1)) return false;
                        stack = t->stack;
                    }
                    stack[top++] = r;
                }
                continue;
            }
            int u = ref_slot(r);
            if (u == s || (u < s && (flags[u] & TREE_FRESH))) continue;
            if (!cache_push(t, fat, s, u)) return false;
        }
        if (next != TREE_NULL) {
            index = next;
        } else if (top > 0) {
            index = stack[--top];
        } else {
            return true;
        }
    }
}

// Drops the cached pairs of fresh slots (a removed slot is fresh too),
// updates the touching bit of the pairs with a moved slot, then queries the
// fresh slots still present.
static bool update_cache(tree_state* t, const carom_aabb* fat) {
    const uint8_t* flags = t->flags;
    tree_pair* p = t->cache;
    int kept = 0, touching = 0;
    for (int i = 0; i < t->cache_count; ++i) {
        uint32_t a = p[i].a, b = p[i].b & ~TREE_TOUCHING;
        int f = flags[a] | flags[b];
        if (f & TREE_FRESH) continue;
        p[kept] = p[i];
        if (f & TREE_MOVED)
            p[kept].b = b | (broad_boxes_overlap(&fat[a], &fat[b]) ? TREE_TOUCHING : 0);
        touching += (p[kept].b & TREE_TOUCHING) != 0;
        ++kept;
    }
    t->cache_count = kept;
    t->touching_count = touching;
    // A lone leaf has no pairs.
    if (t->root == TREE_NULL || is_leaf(t->root)) return true;
    for (int i = 0; i < t->fresh_count; ++i) {
        int s = t->fresh[i];
        if (t->up[s] == TREE_ABSENT) continue;  // removed
        carom_aabb q = *box_of(t, leaf_ref(s));
        if (!query_fresh(t, fat, s, &q)) return false;
    }
    return true;
}

// The cached pairs whose fat boxes overlap. The output is sized by their
// count, not by the cache, which in dense scenes holds many more; one spare
// entry lets every pair be written and only the touching ones be kept,
// without a branch on a bit that is set about half the time.
static bool report_pairs(const tree_state* t, broad_pairs* out) {
    int need = t->touching_count;
    if (need >= INT_MAX - out->count) return false;
    int end = out->count + need + 1;
    if (end > out->capacity &&
        !broad_reserve((void**)&out->items, &out->capacity, end, sizeof(broad_pair)))
        return false;
    broad_pair* o = out->items + out->count;
    int count = 0;
    for (int i = 0; i < t->cache_count; ++i) {
        tree_pair p = t->cache[i];
        o[count] = (broad_pair){(int)p.a, (int)(p.b & ~TREE_TOUCHING), -1.0f};
        count += (p.b & TREE_TOUCHING) != 0;
    }
    CAROM_ASSERT(count == need);
    out->count += count;
    return true;
}

// Brings the cache up to date; false when out of memory.
static bool refresh_cache(tree_state* t, const broad_world* w) {
    if (t->recompute_all || t->fresh_count > w->proxy_count / TREE_FULL_SHARE) {
        t->recompute_all = true;  // until the cache is whole again
        if (!rebuild_cache(t, w->fat)) return false;
    } else {
        mark_moved(t, w, true);
        bool ok = update_cache(t, w->fat);
        mark_moved(t, w, false);
        if (!ok) {
            t->recompute_all = true;
            return false;
        }
    }
    t->recompute_all = false;
    clear_fresh(t);
    return true;
}

// ---- operations -----------------------------------------------------------------

static void tree_destroy(void* state) {
    tree_state* t = state;
    if (!t) return;
    carom_free(t->node_block);
    carom_free(t->up);
    carom_free(t->flags);
    carom_free(t->fresh);
    carom_free(t->stack);
    carom_free(t->tasks);
    carom_free(t->cache);
    carom_free(t);
}

static carom_status tree_insert(void* state, const broad_world* world, int slot) {
    tree_state* t = state;
    if (!reserve_slots(t, world, slot) || !reserve_node(t)) return CAROM_ERR_OUT_OF_MEMORY;
    carom_aabb box = enlarge(&world->fat[slot], t->margin);
    attach(t, slot, &box);
    mark_fresh(t, slot);
    return CAROM_OK;
}

static carom_status tree_create(const carom_broad_desc* desc, const broad_world* world,
                                void** state) {
    *state = NULL;
    tree_state* t = carom_alloc(sizeof *t);
    if (!t) return CAROM_ERR_OUT_OF_MEMORY;
    *t = (tree_state){0};
    t->margin = desc && desc->tree_margin > 0.0f ? desc->tree_margin : TREE_DEFAULT_MARGIN;
    t->root = TREE_NULL;
    t->free_list = TREE_NULL;
    t->recompute_all = true;
    int hint = desc && desc->capacity_hint > 0 ? desc->capacity_hint : 0;
    if (hint > CAROM_BROAD_MAX_PROXIES) hint = CAROM_BROAD_MAX_PROXIES;
    bool ok = hint == 0 || (grow_nodes(t, hint) && reserve_slots(t, world, hint - 1));
    for (int s = 0; ok && s < world->slot_end; ++s)
        if (broad_slot_alive(world, s)) ok = tree_insert(t, world, s) == CAROM_OK;
    if (!ok) {
        tree_destroy(t);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    *state = t;
    return CAROM_OK;
}

static void tree_move(void* state, const broad_world* world, int slot) {
    tree_state* t = state;
    const carom_aabb* fat = &world->fat[slot];
    if (!needs_reinsert(t, box_of(t, leaf_ref(slot)), fat)) return;
    // Detaching frees the node that attaching takes, so this cannot fail.
    detach(t, slot);
    carom_aabb box = enlarge(fat, t->margin);
    attach(t, slot, &box);
    mark_fresh(t, slot);
}

static void tree_remove(void* state, const broad_world* world, int slot) {
    (void)world;
    tree_state* t = state;
    detach(t, slot);
    // Its cached pairs go at the next call (also if the slot is reused by
    // then, which keeps it fresh).
    mark_fresh(t, slot);
}

static carom_status tree_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                    carom_broad_stats* stats) {
    (void)stats;
    tree_state* t = state;
    if (!refresh_cache(t, world)) return CAROM_ERR_OUT_OF_MEMORY;
    // The cache is whole from here on, so a failure below loses nothing.
    return report_pairs(t, out) ? CAROM_OK : CAROM_ERR_OUT_OF_MEMORY;
}

static size_t tree_memory(const void* state) {
    const tree_state* t = state;
    if (!t) return 0;
    size_t nodes = t->node_block ? (size_t)t->node_capacity * sizeof(tree_node) + TREE_ALIGN : 0;
    return sizeof *t + nodes + (size_t)t->up_capacity * sizeof(int) + (size_t)t->flags_capacity +
           (size_t)t->fresh_capacity * sizeof(int) + (size_t)t->stack_capacity * sizeof(int) +
           (size_t)t->task_capacity * sizeof(tree_task) +
           (size_t)t->cache_capacity * sizeof(tree_pair);
}

const broad_ops broad_tree_ops = {
    .create = tree_create,
    .destroy = tree_destroy,
    .insert = tree_insert,
    .move = tree_move,
    .remove = tree_remove,
    .find_pairs = tree_find_pairs,
    .memory = tree_memory,
};
