// Space-time sweep and prune (the seed slides' "Adding Time: Queued Swaps"):
// over the step every endpoint moves linearly, so two neighbours on an axis
// swap at a time found by one division. Swaps are made in time order from a
// priority queue with decrease-key; after each swap the new neighbours'
// swap times are evaluated again. A max end passing a min end makes two
// intervals meet on that axis; if the boxes overlap on the other two axes at
// that moment, the pair begins then, which is its exact first time of
// overlap. Nothing is encapsulated, so there are no false pairs, and
// endpoints moving with one velocity never swap (a convoy costs nothing).
//
// Termination: endpoints swap only when the left one is faster, after which
// it is on the right and can never swap back with the same neighbour, so a
// step makes at most one swap per pair of endpoints, rounding or not.
#include <float.h>
#include <limits.h>

#include "broad/sap.h"

typedef struct queue_entry {
    float time;
    int id;  // axis * positions + position of the left endpoint of the swap
} queue_entry;

typedef struct spacetime {
    sap_axes axes;
    const broad_world* world;
    bool need_rebuild;
    // The queue of pending swaps, ordered by (time, id), with decrease-key.
    // Times only grow during a step, so it is a bucket queue in front of a
    // heap: [0, 1] is cut into `bucket_count` buckets; swaps due in a later
    // bucket wait in that bucket's list (insert, move and remove in O(1));
    // those of the current bucket are in an indexed 4-ary min-heap, which is
    // refilled from the next non-empty bucket when it runs dry. With about
    // as many buckets as swaps the heap holds a few entries, where one heap
    // of every pending swap costs a deep sift per change.
    queue_entry* heap;
    int heap_count;
    int heap_capacity;
    int* heap_at;    // per id: place in the heap, or -1
    int* bucket_of;  // per id: its bucket's list, IN_HEAP, or NOT_QUEUED
    int* next;       // per id: the bucket list links
    int* prev;
    float* due;      // per id: the swap time of an entry in a bucket list
    int id_capacity;
    int* head;       // per bucket: first id of its list, or -1
    int bucket_count;
    int bucket_capacity;
    int cursor;      // the current bucket
    int positions;   // positions per axis in the ids (the endpoint count)
} spacetime;

enum { NOT_QUEUED = -1, IN_HEAP = -2 };

static carom_status st_create(const carom_broad_desc* desc, const broad_world* world,
                              void** state) {
    (void)desc;
    spacetime* st = carom_alloc(sizeof *st);
    if (!st) return CAROM_ERR_OUT_OF_MEMORY;
    memset(st, 0, sizeof *st);
    st->world = world;
    *state = st;
    return CAROM_OK;
}

static void st_destroy(void* state) {
    spacetime* st = state;
    if (!st) return;
    sap_axes_free(&st->axes);
    carom_free(st->heap);
    carom_free(st->heap_at);
    carom_free(st->bucket_of);
    carom_free(st->next);
    carom_free(st->prev);
    carom_free(st->due);
    carom_free(st->head);
    carom_free(st);
}

static carom_status st_insert(void* state, const broad_world* world, int slot) {
    spacetime* st = state;
    return sap_axes_insert(&st->axes, slot, &world->box[slot]);
}

static void st_remove(void* state, const broad_world* world, int slot) {
    (void)world;
    spacetime* st = state;
    sap_axes_remove(&st->axes, slot);
}

// ---- the start of the step ------------------------------------------------------------------

// Gives every endpoint its start-of-step value and insertion-sorts each axis.
// Between steps the lists hold the previous step's end order, so when each
// box starts where it ended this does no swaps. False when the swap budget
// ran out.
static bool sort_to_start(spacetime* st, const broad_world* w) {
    sap_axes* s = &st->axes;
    for (int k = 0; k < 3; k++) {
        sap_endpoint* e = s->axis[k];
        for (int i = 0; i < s->count; i++) {
            const carom_aabb* box = &w->box[sap_slot(e[i].tag)];
            e[i].value = sap_is_max(e[i].tag) ? box->max.raw[k] : box->min.raw[k];
        }
    }
    // Every value may have changed, so no single endpoint is the one out of
    // place: a full insertion sort, linear when the order still holds.
    for (int k = 0; k < 3; k++)
        if (!sap_insertion_sort(s, k)) return false;
    return true;
}

// ---- the queue -------------------------------------------------------------------------------

static inline bool entry_less(queue_entry x, queue_entry y) {
    return x.time < y.time || (x.time == y.time && x.id < y.id);
}

static void heap_place(spacetime* st, int at, queue_entry e) {
    st->heap[at] = e;
    st->heap_at[e.id] = at;
}

static void heap_up(spacetime* st, int at) {
    queue_entry e = st->heap[at];
    while (at > 0) {
        int parent = (at - 1) / 4;
        if (!entry_less(e, st->heap[parent])) break;
        heap_place(st, at, st->heap[parent]);
        at = parent;
    }
    heap_place(st, at, e);
}

static void heap_down(spacetime* st, int at) {
    queue_entry e = st->heap[at];
    for (;;) {
        int first = 4 * at + 1;
        if (first >= st->heap_count) break;
        int last = first + 4 < st->heap_count ? first + 4 : st->heap_count;
        int child = first;
        for (int c = first + 1; c < last; c++)
            if (entry_less(st->heap[c], st->heap[child])) child = c;
        if (!entry_less(st->heap[child], e)) break;
        heap_place(st, at, st->heap[child]);
        at = child;
    }
    heap_place(st, at, e);
}

static void heap_remove(spacetime* st, int id) {
    int at = st->heap_at[id];
    if (at < 0) return;
    st->heap_at[id] = -1;
    queue_entry last = st->heap[--st->heap_count];
    if (at == st->heap_count) return;
    heap_place(st, at, last);
    heap_up(st, at);
    heap_down(st, st->heap_at[last.id]);
}

// Inserts, or changes the time of, the swap `id` (decrease-key or increase-key).
static void heap_set(spacetime* st, int id, float time) {
    int at = st->heap_at[id];
    queue_entry e = {time, id};
    if (at < 0) {
        at = st->heap_count++;
        heap_place(st, at, e);
        heap_up(st, at);
        return;
    }
    float old = st->heap[at].time;
    st->heap[at].time = time;
    if (time < old) heap_up(st, at); else heap_down(st, at);
}

static int bucket_index(const spacetime* st, float time) {
    int b = (int)(time * (float)st->bucket_count);
    if (b >= st->bucket_count) b = st->bucket_count - 1;
    return b < st->cursor ? st->cursor : b;
}

static void queue_remove(spacetime* st, int id) {
    int b = st->bucket_of[id];
    if (b == NOT_QUEUED) return;
    st->bucket_of[id] = NOT_QUEUED;
    if (b == IN_HEAP) {
        heap_remove(st, id);
        return;
    }
    int n = st->next[id], p = st->prev[id];
    if (p >= 0) st->next[p] = n; else st->head[b] = n;
    if (n >= 0) st->prev[n] = p;
}

// Queues swap `id` at `time`, or moves it there if already queued.
static void queue_set(spacetime* st, int id, float time) {
    int b = bucket_index(st, time);
    if (b == st->cursor) {
        if (st->bucket_of[id] != IN_HEAP) queue_remove(st, id);
        st->bucket_of[id] = IN_HEAP;
        heap_set(st, id, time);
        return;
    }
    queue_remove(st, id);
    st->bucket_of[id] = b;
    st->due[id] = time;
    st->prev[id] = -1;
    st->next[id] = st->head[b];
    if (st->head[b] >= 0) st->prev[st->head[b]] = id;
    st->head[b] = id;
}

// Takes the earliest swap out of the queue; false when none is left.
static bool queue_pop(spacetime* st, queue_entry* out) {
    while (st->heap_count == 0) {
        if (++st->cursor >= st->bucket_count) return false;
        for (int id = st->head[st->cursor]; id >= 0; id = st->next[id]) {
            st->bucket_of[id] = IN_HEAP;
            heap_place(st, st->heap_count++, (queue_entry){st->due[id], id});
        }
        st->head[st->cursor] = -1;
        if (st->heap_count > 1)
            for (int at = (st->heap_count - 2) / 4; at >= 0; at--) heap_down(st, at);
    }
    *out = st->heap[0];
    queue_remove(st, out->id);
    return true;
}

// ---- kinetic swaps --------------------------------------------------------------------------

// When the endpoints at i and i + 1 on axis k meet, if they do during the
// rest of the step: the left one must be the faster. Never earlier than
// `now` (rounding can put a due swap slightly in the past). FLT_MAX when
// they do not meet by the step's end.
static float swap_time(const spacetime* st, int k, int i, float now) {
    const sap_endpoint* e = st->axes.axis[k];
    const vec3s* motion = st->world->motion;
    float va = motion[sap_slot(e[i].tag)].raw[k];
    float vb = motion[sap_slot(e[i + 1].tag)].raw[k];
    if (!(va > vb)) return FLT_MAX;
    float t = (e[i + 1].value - e[i].value) / (va - vb);
    if (t < now) t = now;
    return t <= 1.0f ? t : FLT_MAX;
}

static void schedule(spacetime* st, int k, int i, float now) {
    if (i < 0 || i + 1 >= st->axes.count) return;
    int id = k * st->positions + i;
    float t = swap_time(st, k, i, now);
    if (t == FLT_MAX) queue_remove(st, id); else queue_set(st, id, t);
}

// Makes the swap at (k, i) at time t, updates the pair set, reports a pair
// that begins, and evaluates the neighbouring swaps again.
static bool kinetic_swap(spacetime* st, int k, int i, float t, broad_pairs* out) {
    sap_axes* s = &st->axes;
    sap_endpoint right;
    sap_endpoint left = sap_exchange(s, k, i, &right);
    bool left_max = sap_is_max(left.tag);
    if (left_max != sap_is_max(right.tag)) {
        // Swaps are made in time order on all three axes, so the orders on
        // the other axes are those at time t: overlapping there by order is
        // overlapping at t, and this swap is the pair's first moment of
        // overlap.
        int a = sap_slot(left.tag), b = sap_slot(right.tag);
        if (sap_order_overlap_others(s, k, a, b)) {
            if (!left_max) {
                sap_pair_remove(s, a, b);
            } else {
                sap_pair_add(s, a, b);
                if (!broad_pairs_push(out, a, b, t)) return false;
            }
        }
    }
    // The pair just swapped has the slower endpoint on the left now and
    // cannot meet again; only its two new neighbours can.
    schedule(st, k, i - 1, t);
    schedule(st, k, i + 1, t);
    return true;
}

static carom_status sweep_through_step(spacetime* st, broad_pairs* out) {
    sap_axes* s = &st->axes;
    st->positions = s->count;
    int ids = 3 * s->count;
    if (!broad_reserve((void**)&st->heap, &st->heap_capacity, ids, sizeof(queue_entry)))
        return CAROM_ERR_OUT_OF_MEMORY;
    if (ids > st->id_capacity) {
        // All five per-id arrays grow to the same capacity; the recorded one
        // changes only when all have.
        int cap = 0;
#define GROW(field)                                                        \
    cap = st->id_capacity;                                                 \
    if (!broad_reserve((void**)&st->field, &cap, ids, sizeof *st->field))  \
        return CAROM_ERR_OUT_OF_MEMORY;
        GROW(heap_at) GROW(bucket_of) GROW(next) GROW(prev) GROW(due)
#undef GROW
        st->id_capacity = cap;
    }
    // About one bucket per endpoint: a few pending swaps per bucket.
    int buckets = 256;
    while (buckets < s->count && buckets < (1 << 22)) buckets *= 2;
    if (!broad_reserve((void**)&st->head, &st->bucket_capacity, buckets, sizeof(int)))
        return CAROM_ERR_OUT_OF_MEMORY;
    st->bucket_count = buckets;
    for (int b = 0; b < buckets; b++) st->head[b] = -1;
    for (int id = 0; id < ids; id++) st->heap_at[id] = -1, st->bucket_of[id] = NOT_QUEUED;
    st->heap_count = 0;
    st->cursor = 0;
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i + 1 < s->count; i++) {
            float t = swap_time(st, k, i, 0.0f);
            if (t != FLT_MAX) queue_set(st, k * st->positions + i, t);
        }
    }
    queue_entry next;
    while (queue_pop(st, &next)) {
        int k = next.id / st->positions, i = next.id % st->positions;
        if (!kinetic_swap(st, k, i, next.time, out)) return CAROM_ERR_OUT_OF_MEMORY;
    }
    return CAROM_OK;
}

// ---- the step ---------------------------------------------------------------------------------

static carom_status st_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                  carom_broad_stats* stats) {
    spacetime* st = state;
    sap_axes* s = &st->axes;
    sap_axes_compact(s);
    s->swaps = 0;
    s->swap_budget = s->rebuild_work > 0 ? s->rebuild_work : 8LL * s->count + 1024;
    s->failed = false;
    if (!st->need_rebuild && (!sort_to_start(st, world) || s->failed)) st->need_rebuild = true;
    if (st->need_rebuild) {
        carom_status status = sap_axes_rebuild(s, world, world->box);
        if (status != CAROM_OK) return status;
        st->need_rebuild = false;
        stats->rebuilt = true;
    }
    // Pairs overlapping at the start, then those that begin during the step.
    if (!sap_emit_pairs(s, out, 0.0f)) return CAROM_ERR_OUT_OF_MEMORY;
    s->swap_budget = LLONG_MAX;
    carom_status status = sweep_through_step(st, out);
    // An incomplete pair set (a failed growth) is rebuilt at the next step.
    if (status == CAROM_OK && s->failed) status = CAROM_ERR_OUT_OF_MEMORY;
    if (status != CAROM_OK) st->need_rebuild = true;
    // The lists now hold the end-of-step order; the next step starts from it.
    // After a failure they are in some mid-step order: sort_to_start repairs
    // any order, at worst through a rebuild.
    stats->swaps = s->swaps;
    return status;
}

static size_t st_memory(const void* state) {
    const spacetime* st = state;
    return sizeof *st + sap_axes_memory(&st->axes) +
           (size_t)st->heap_capacity * sizeof(queue_entry) +
           (size_t)st->id_capacity * (4 * sizeof(int) + sizeof(float)) +
           (size_t)st->bucket_capacity * sizeof(int);
}

const broad_ops broad_spacetime_ops = {
    st_create, st_destroy, st_insert, NULL, st_remove, st_find_pairs, st_memory,
};
