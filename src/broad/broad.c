// The broad-phase contract every kind shares: the proxy table, validation,
// the exact swept test on candidates, the deterministic pair list (sorted by
// id) and the begin/end events derived from consecutive lists, when first
// asked for.
#include <limits.h>

#include "broad/broad_internal.h"
#include "core/map64.h"
#include "core/simd.h"

// A pair list owned by the broad phase.
typedef struct pair_list {
    carom_broad_pair* items;
    // The two slots of each item (step lists only), so that the next step
    // can tell which pairs involve a moved proxy without looking ids up.
    int* slots;
    int count;
    int capacity;
    int slots_capacity;
} pair_list;

// The pair sort's digits: between these sizes, as wide as the number of
// pairs, so that a histogram costs no more than a pass over the pairs, and
// no wider than 12 bits, so that the histogram a scatter pass works from
// (16 KB) stays in the first-level cache with the lines it writes to
// (17-bit digits, 512 KB, would not). The two ids of 100k slots take 34
// bits: three passes of 12 bits sort them in 15% less time than four of 9
// (phase timers), where 11 bits was the limit.
enum { RADIX_MIN_BITS = 8, RADIX_MAX_BITS = 12 };

struct carom_broad_data {
    carom_broad_desc desc;
    const broad_ops* ops;
    void* state;
    broad_world world;
    map64 ids;  // id -> slot
    broad_pairs candidates;
    pair_list lists[2];  // this step's and the previous step's
    int current;         // index of this step's list in `lists`
    // The last update's events, derived from its list and the one before
    // only when first asked for (events_settle): a caller that reads only
    // the pair list does not pay a pass over both lists every step.
    pair_list begins;
    pair_list ends;
    bool events_ready;
    pair_list fresh;     // this step's pairs involving a moved proxy, sorted
    // Sort scratch: keys and candidate indices with their ping-pong halves
    // (two entries per candidate), and the radix histograms.
    uint64_t* sort_keys;
    int sort_keys_capacity;
    uint32_t* sort_order;
    int sort_order_capacity;
    uint32_t* radix_count;
    int radix_count_capacity;
    // Every id ever inserted lies in [id_low, id_high]: when the range is
    // small, a pair's two ids fit one 32-bit sort key.
    int id_low;
    int id_high;
    // Alive proxies whose id is not their slot. None is the common case of
    // a caller numbering proxies by its own array index and inserting them
    // in order; the pair sort then needs no ids, nor (up to 2^17 slots) the
    // candidates back (sort_fresh_pairs).
    int slot_id_mismatches;
};

// ---- small helpers --------------------------------------------------------------------

bool broad_reserve(void** items, int* capacity, int need, size_t size) {
    if (need <= *capacity) return true;
    int grown = *capacity < 16 ? 16 : *capacity;
    while (grown < need) grown = grown > INT_MAX / 2 ? INT_MAX : grown * 2;
    void* p = carom_realloc(*items, (size_t)grown * size);
    if (!p) return false;
    *items = p;
    *capacity = grown;
    return true;
}

static bool list_reserve(pair_list* list, int need) {
    return broad_reserve((void**)&list->items, &list->capacity, need, sizeof(carom_broad_pair));
}

static bool list_reserve_slots(pair_list* list, int need) {
    return list_reserve(list, need) &&
           broad_reserve((void**)&list->slots, &list->slots_capacity, 2 * need, sizeof(int));
}

void broad_radix_sort32(uint32_t* keys, uint32_t* values, uint32_t* tmp_keys,
                        uint32_t* tmp_values, int n) {
    enum { BITS = 11, BUCKETS = 1 << BITS };
    uint32_t count[BUCKETS];
    uint32_t *k = keys, *v = values, *tk = tmp_keys, *tv = tmp_values;
    for (int shift = 0; shift < 32; shift += BITS) {
        memset(count, 0, sizeof count);
        for (int i = 0; i < n; i++) count[(k[i] >> shift) & (BUCKETS - 1)]++;
        // A digit every key shares moves nothing: skip the pass (ids and
        // slots usually fit in the low digits).
        if (n == 0 || count[(k[0] >> shift) & (BUCKETS - 1)] == (uint32_t)n) continue;
        uint32_t sum = 0;
        for (int d = 0; d < BUCKETS; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (int i = 0; i < n; i++) {
            uint32_t at = count[(k[i] >> shift) & (BUCKETS - 1)]++;
            tk[at] = k[i];
            tv[at] = v[i];
        }
        // Ping-pong between the arrays rather than copy back each pass.
        uint32_t* swap = k;
        k = tk, tk = swap;
        swap = v;
        v = tv, tv = swap;
    }
    if (k != keys) {
        memcpy(keys, k, (size_t)n * sizeof *keys);
        memcpy(values, v, (size_t)n * sizeof *values);
    }
}

// ---- the exact swept test (Levine) ---------------------------------------------------------

// On one axis, the times when [a_lo, a_hi] and [b_lo, b_hi] + t * w overlap
// narrow [*t0, *t1]. False when they never overlap.
static inline bool axis_times(float a_lo, float a_hi, float b_lo, float b_hi, float w, float* t0,
                              float* t1) {
    if (w == 0.0f) return b_lo <= a_hi && a_lo <= b_hi;
    // b's interval overlaps a's while b_lo + t w <= a_hi and b_hi + t w >= a_lo.
    float to_touch = (a_lo - b_hi) / w;  // b's far end reaches a's near end
    float to_leave = (a_hi - b_lo) / w;  // b's near end passes a's far end
    float enter = w > 0.0f ? to_touch : to_leave;
    float leave = w > 0.0f ? to_leave : to_touch;
    *t0 = carom_maxf(*t0, enter);
    *t1 = carom_minf(*t1, leave);
    return *t0 <= *t1;
}

static float sweep_time(const carom_aabb* a, vec3s da, const carom_aabb* b, vec3s db) {
    float t0 = 0.0f, t1 = 1.0f;
    if (!axis_times(a->min.x, a->max.x, b->min.x, b->max.x, db.x - da.x, &t0, &t1)) return -1.0f;
    if (!axis_times(a->min.y, a->max.y, b->min.y, b->max.y, db.y - da.y, &t0, &t1)) return -1.0f;
    if (!axis_times(a->min.z, a->max.z, b->min.z, b->max.z, db.z - da.z, &t0, &t1)) return -1.0f;
    return t0;
}

float carom_aabb_sweep_time(carom_aabb a, vec3s da, carom_aabb b, vec3s db) {
    if (!carom_aabb_is_valid(a) || !carom_aabb_is_valid(b) || !carom_vec3_is_valid(da) ||
        !carom_vec3_is_valid(db))
        return -1.0f;
    return sweep_time(&a, da, &b, db);
}

// ---- the proxy table ----------------------------------------------------------------------

// A box's corners as two vectors, from two 16-byte loads inside the box:
// lane 3 of each holds a coordinate of the other corner, and every use here
// ignores it (three-lane masks, three-lane stores).
static inline void box_load(const carom_aabb* b, f4* lo, f4* hi) {
    f4 head, tail;
    memcpy(&head, (const char*)b, sizeof head);      // min x y z, max x
    memcpy(&tail, (const char*)b + 8, sizeof tail);  // min z, max x y z
    *lo = head;
    *hi = __builtin_shufflevector(tail, tail, 1, 2, 3, 0);
}

// Stores lanes 0-2 of lo and hi as a box: one 16-byte and one 8-byte store.
static inline void box_store(carom_aabb* b, f4 lo, f4 hi) {
    const f4 head = __builtin_shufflevector(lo, hi, 0, 1, 2, 4);
    const f4 tail = __builtin_shufflevector(hi, hi, 1, 2, 1, 2);
    memcpy((char*)b, &head, sizeof head);
    memcpy((char*)b + 16, &tail, 2 * sizeof(float));
}

// A displacement as a vector with lane 3 zero.
static inline f4 motion_load(const vec3s* d) {
    f4 v = f4_zero();
    memcpy(&v, d, sizeof *d);
    return v;
}

// Stores the box around a box's corners lo, hi at the start and the end of
// the step (displacement d) to *fat.
static inline void fat_box_store(carom_aabb* fat, f4 lo, f4 hi, f4 d) {
    const f4 end_lo = lo + d, end_hi = hi + d;
    box_store(fat, f4_min(lo, end_lo), f4_max(hi, end_hi));
}

// Grows every slot array to hold `need` slots. All or nothing, so a failed
// insert changes nothing (arrays already grown are merely larger).
static bool world_reserve(broad_world* w, int need) {
    if (need <= w->capacity) return true;
    int cap = w->capacity < 64 ? 64 : w->capacity;
    while (cap < need) cap = cap > CAROM_BROAD_MAX_PROXIES / 2 ? CAROM_BROAD_MAX_PROXIES : cap * 2;
    void* p;
#define GROW(field)                                                        \
    p = carom_realloc(w->field, (size_t)cap * sizeof *w->field);           \
    if (!p) return false;                                                  \
    w->field = p;
    GROW(box) GROW(motion) GROW(fat) GROW(id) GROW(state) GROW(free_slots) GROW(moved)
    GROW(moved_index)
#undef GROW
    w->free_capacity = cap;
    w->moved_capacity = cap;
    w->capacity = cap;
    return true;
}

static void world_free(broad_world* w) {
    carom_free(w->box);
    carom_free(w->motion);
    carom_free(w->fat);
    carom_free(w->id);
    carom_free(w->state);
    carom_free(w->free_slots);
    carom_free(w->moved);
    carom_free(w->moved_index);
    memset(w, 0, sizeof *w);
}

static void mark_moved(broad_world* w, int slot) {
    if (w->moved_index[slot] >= 0) return;
    w->moved_index[slot] = w->moved_count;
    w->moved[w->moved_count++] = slot;
    w->state[slot] |= BROAD_SLOT_MOVED;
}

static void unmark_moved(broad_world* w, int slot) {
    int at = w->moved_index[slot];
    if (at < 0) return;
    int last = w->moved[--w->moved_count];
    w->moved[at] = last;
    w->moved_index[last] = at;
    w->moved_index[slot] = -1;
    w->state[slot] &= (uint8_t)~BROAD_SLOT_MOVED;
}

static void clear_moved(broad_world* w) {
    for (int i = 0; i < w->moved_count; i++) {
        int slot = w->moved[i];
        w->moved_index[slot] = -1;
        w->state[slot] &= (uint8_t)~BROAD_SLOT_MOVED;
    }
    w->moved_count = 0;
}

// ---- create / destroy ---------------------------------------------------------------------

static const broad_ops* ops_of(carom_broad_kind kind) {
    switch (kind) {
        case CAROM_BROAD_SAP: return &broad_sap_ops;
        case CAROM_BROAD_SPACETIME_SAP: return &broad_spacetime_ops;
        case CAROM_BROAD_GRID: return &broad_grid_ops;
        case CAROM_BROAD_HASH: return &broad_hash_ops;
        case CAROM_BROAD_TREE: return &broad_tree_ops;
        case CAROM_BROAD_BRUTE_FORCE: return &broad_brute_force_ops;
    }
    return NULL;
}

static bool desc_is_valid(const carom_broad_desc* d) {
    if (!ops_of(d->kind)) return false;
    if (d->grid_strategy != CAROM_GRID_ALL_CELLS && d->grid_strategy != CAROM_GRID_CENTRE_CELL)
        return false;
    // Positive tests, so that NaN fails them.
    if (!(d->cell_size >= 0.0f && d->cell_size <= CAROM_MAX_COORDINATE)) return false;
    if (!(d->tree_margin >= 0.0f && d->tree_margin <= 1e6f)) return false;
    if (d->capacity_hint < 0 || d->capacity_hint > CAROM_BROAD_MAX_PROXIES) return false;
    if (d->kind == CAROM_BROAD_GRID) {
        carom_aabb w = d->world;
        if (!carom_aabb_is_valid(w) || !(w.max.x > w.min.x && w.max.y > w.min.y && w.max.z > w.min.z))
            return false;
    }
    return true;
}

carom_status carom_broad_create(const carom_broad_desc* desc, carom_broad* out) {
    if (!out) return CAROM_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    carom_broad_desc d = {0};
    if (desc) d = *desc;
    if (!desc_is_valid(&d)) return CAROM_ERR_INVALID_ARG;

    carom_broad_data* data = carom_alloc(sizeof *data);
    if (!data) return CAROM_ERR_OUT_OF_MEMORY;
    memset(data, 0, sizeof *data);
    data->desc = d;
    data->ops = ops_of(d.kind);
    data->id_low = 1;  // an empty range until the first insert
    data->id_high = 0;
    data->events_ready = true;  // none before the first update
    if (d.capacity_hint > 0 && !world_reserve(&data->world, d.capacity_hint)) {
        world_free(&data->world);
        carom_free(data);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    carom_status status = data->ops->create(&d, &data->world, &data->state);
    if (status != CAROM_OK) {
        world_free(&data->world);
        carom_free(data);
        return status;
    }
    out->kind = d.kind;
    out->data = data;
    return CAROM_OK;
}

void carom_broad_destroy(carom_broad* broad) {
    if (!broad || !broad->data) return;
    carom_broad_data* data = broad->data;
    data->ops->destroy(data->state);
    world_free(&data->world);
    map64_free(&data->ids);
    carom_free(data->candidates.items);
    for (int i = 0; i < 2; i++) {
        carom_free(data->lists[i].items);
        carom_free(data->lists[i].slots);
    }
    carom_free(data->fresh.items);
    carom_free(data->fresh.slots);
    carom_free(data->begins.items);
    carom_free(data->ends.items);
    carom_free(data->sort_keys);
    carom_free(data->sort_order);
    carom_free(data->radix_count);
    carom_free(data);
    memset(broad, 0, sizeof *broad);
}

// ---- insert / move / remove -------------------------------------------------------------

static inline uint64_t id_map_key(int id) { return (uint32_t)id; }

static int slot_of(const carom_broad_data* data, int id) {
    // Callers often number proxies by their own array index, and a proxy
    // inserted into a fresh table gets its insertion number as slot: try
    // slot `id` before hashing. Ids are unique, so an alive slot holding
    // the id is its slot.
    const broad_world* w = &data->world;
    if ((unsigned)id < (unsigned)w->slot_end && w->id[id] == id && broad_slot_alive(w, id))
        return id;
    const map64_entry* e = map64_find(&data->ids, id_map_key(id));
    return e ? (int)e->value : -1;
}

// carom_aabb_is_valid and carom_vec3_is_valid in one vector test, on a
// box's corners and its displacement: every move pays it, and the answer is
// almost always yes.
static inline bool proxy_vectors_valid(f4 lo, f4 hi, f4 d) {
    const f4 m = {CAROM_MAX_COORDINATE, CAROM_MAX_COORDINATE, CAROM_MAX_COORDINATE,
                  CAROM_MAX_COORDINATE};
    // Positive tests, so that NaN fails them.
    return i4_mask3((f4_abs(lo) <= m) & (f4_abs(hi) <= m) & (f4_abs(d) <= m) & (lo <= hi)) == 7;
}

static inline uint8_t motion_bits(f4 d) {
    return i4_mask3(d == f4_zero()) == 7 ? BROAD_SLOT_STILL : 0;
}

carom_status carom_broad_insert(carom_broad* broad, int id, carom_aabb box, vec3s displacement) {
    if (!broad || !broad->data) return CAROM_ERR_INVALID_ARG;
    // Loaded and checked as a move does (move_proxy).
    f4 lo, hi;
    box_load(&box, &lo, &hi);
    const f4 d = motion_load(&displacement);
    if (!proxy_vectors_valid(lo, hi, d)) return CAROM_ERR_INVALID_ARG;
    carom_broad_data* data = broad->data;
    broad_world* w = &data->world;
    if (slot_of(data, id) >= 0) return CAROM_ERR_DUPLICATE_ID;
    if (w->proxy_count >= CAROM_BROAD_MAX_PROXIES) return CAROM_ERR_CAPACITY;
    if (!map64_reserve(&data->ids, (uint32_t)w->proxy_count + 1)) return CAROM_ERR_OUT_OF_MEMORY;

    int slot;
    bool fresh = w->free_count == 0;
    if (fresh) {
        if (!world_reserve(w, w->slot_end + 1)) return CAROM_ERR_OUT_OF_MEMORY;
        slot = w->slot_end;
    } else {
        slot = w->free_slots[w->free_count - 1];
    }
    w->box[slot] = box;
    w->motion[slot] = displacement;
    fat_box_store(&w->fat[slot], lo, hi, d);
    w->id[slot] = id;
    w->state[slot] = BROAD_SLOT_ALIVE | motion_bits(d);
    w->moved_index[slot] = -1;
    if (fresh) w->slot_end++; else w->free_count--;

    carom_status status = data->ops->insert(data->state, w, slot);
    if (status != CAROM_OK) {
        w->state[slot] = BROAD_SLOT_FREE;
        if (fresh) w->slot_end--; else w->free_count++;
        return status;
    }
    mark_moved(w, slot);
    data->slot_id_mismatches += id != slot;
    // Cannot fail: room was reserved above.
    (void)map64_put(&data->ids, id_map_key(id), (uint64_t)slot);
    if (w->proxy_count == 0 && data->id_low > data->id_high) data->id_low = data->id_high = id;
    data->id_low = id < data->id_low ? id : data->id_low;
    data->id_high = id > data->id_high ? id : data->id_high;
    w->proxy_count++;
    broad->proxy_count = w->proxy_count;
    return CAROM_OK;
}

// One move, validated; both move calls share it. `displacement` NULL is
// zero; `kind_move` is data->ops->move, loaded once by the caller. Always
// inlined, so that a constant NULL drops the motion's loads and tests.
CAROM_FORCE_INLINE carom_status move_proxy(carom_broad_data* data,
                                           void (*kind_move)(void*, const broad_world*, int),
                                           int id, const carom_aabb* box,
                                           const vec3s* displacement) {
    // In vectors once: the test, the fat box and the motion bits share them.
    f4 lo, hi;
    box_load(box, &lo, &hi);
    const f4 d = displacement ? motion_load(displacement) : f4_zero();
    if (!proxy_vectors_valid(lo, hi, d)) return CAROM_ERR_INVALID_ARG;
    broad_world* w = &data->world;
    int slot = slot_of(data, id);
    if (slot < 0) return CAROM_ERR_UNKNOWN_ID;

    const uint8_t state = w->state[slot];
    w->box[slot] = *box;
    // A proxy still before and after holds its zero motion already: at 100k
    // proxies, storing it again would cost a cache line per five moves.
    if (!(state & motion_bits(d) & BROAD_SLOT_STILL))
        memcpy(&w->motion[slot], &d, sizeof w->motion[slot]);
    fat_box_store(&w->fat[slot], lo, hi, d);
    // mark_moved with the state in hand: its moved bit says whether the
    // slot is listed already.
    w->state[slot] = (uint8_t)((state & ~BROAD_SLOT_STILL) | motion_bits(d) | BROAD_SLOT_MOVED);
    if (!(state & BROAD_SLOT_MOVED)) {
        w->moved_index[slot] = w->moved_count;
        w->moved[w->moved_count++] = slot;
    }
    if (kind_move) kind_move(data->state, w, slot);
    return CAROM_OK;
}

carom_status carom_broad_move(carom_broad* broad, int id, carom_aabb box, vec3s displacement) {
    if (!broad || !broad->data) return CAROM_ERR_INVALID_ARG;
    return move_proxy(broad->data, broad->data->ops->move, id, &box, &displacement);
}

carom_status carom_broad_move_many(carom_broad* broad, int count, const int* ids,
                                   const carom_aabb* boxes, const vec3s* displacements,
                                   int* applied) {
    if (applied) *applied = 0;
    if (!broad || !broad->data || count < 0 || (count > 0 && (!ids || !boxes)))
        return CAROM_ERR_INVALID_ARG;
    carom_broad_data* data = broad->data;
    void (*kind_move)(void*, const broad_world*, int) = data->ops->move;
    int i = 0;
    carom_status status = CAROM_OK;
    // Two loops, so that moves without displacements (boxes that jump,
    // the usual discrete use) pay nothing for the motion.
    if (displacements) {
        for (; i < count; i++) {
            status = move_proxy(data, kind_move, ids[i], &boxes[i], &displacements[i]);
            if (status != CAROM_OK) break;
        }
    } else {
        for (; i < count; i++) {
            status = move_proxy(data, kind_move, ids[i], &boxes[i], NULL);
            if (status != CAROM_OK) break;
        }
    }
    if (applied) *applied = i;
    return status;
}

carom_status carom_broad_remove(carom_broad* broad, int id) {
    if (!broad || !broad->data) return CAROM_ERR_INVALID_ARG;
    carom_broad_data* data = broad->data;
    broad_world* w = &data->world;
    int slot = slot_of(data, id);
    if (slot < 0) return CAROM_ERR_UNKNOWN_ID;
    data->ops->remove(data->state, w, slot);
    unmark_moved(w, slot);
    data->slot_id_mismatches -= w->id[slot] != slot;
    w->state[slot] = BROAD_SLOT_FREE;
    // free_slots has room for every slot (world_reserve grows it with them).
    w->free_slots[w->free_count++] = slot;
    (void)map64_remove(&data->ids, id_map_key(id));
    w->proxy_count--;
    broad->proxy_count = w->proxy_count;
    return CAROM_OK;
}

bool carom_broad_contains(const carom_broad* broad, int id) {
    return broad && broad->data && slot_of(broad->data, id) >= 0;
}

// ---- update -----------------------------------------------------------------------------------

// Orders signed ids as unsigned keys.
static inline uint32_t id_key(int id) { return (uint32_t)id ^ 0x80000000u; }
static inline int key_id(uint32_t key) { return (int)(key ^ 0x80000000u); }

static inline bool pair_less(carom_broad_pair x, carom_broad_pair y) {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
}

static inline bool is_moved(const broad_world* w, int slot) {
    return (w->state[slot] & BROAD_SLOT_MOVED) != 0;
}

// The digit width for sorting n keys of `bits` bits: as few passes as
// digits of about log2(n) bits allow, then the narrowest digit for that
// many passes. *passes gets the count.
static int radix_digit_bits(int n, int bits, int* passes) {
    int d = RADIX_MIN_BITS;
    while (d < RADIX_MAX_BITS && ((int64_t)1 << d) < n) d++;
    *passes = (bits + d - 1) / d;
    return *passes > 0 ? (bits + *passes - 1) / *passes : d;
}

// The histograms radix_sort64 counts: one per pass, and at least three.
static inline int radix_histograms(int passes) { return passes > 3 ? passes : 3; }

// Sorts n 64-bit keys by their bits [low, low + passes * digit) ascending,
// LSD radix with `digit`-bit digits, carrying a 32-bit value unless
// `values` is NULL; the tmp arrays are scratch of n entries; `count` holds
// radix_histograms(passes) << digit words. All histograms come from one
// read of the keys, and a digit every key shares is skipped. Stable.
// Returns the array the sorted keys end in, `keys` or `tmp_keys` (the
// passes ping-pong between them, and copying back would cost a pass), and
// sets *sorted_values (unless NULL) to the values' one likewise.
static uint64_t* radix_sort64(uint64_t* keys, uint32_t* values, uint64_t* tmp_keys,
                              uint32_t* tmp_values, int n, int low, int digit, int passes,
                              uint32_t* count, uint32_t** sorted_values) {
    if (sorted_values) *sorted_values = values;
    if (n < 2 || passes == 0) return keys;
    const uint64_t mask = ((uint64_t)1 << digit) - 1;
    const size_t buckets = (size_t)1 << digit;
    memset(count, 0, ((size_t)radix_histograms(passes) << digit) * sizeof *count);
    if (passes <= 3) {
        // Written out for the usual two or three passes: a digit past the
        // last pass is zero in every key, and its histogram goes unused.
        uint32_t* c1 = count + ((size_t)1 << digit);
        uint32_t* c2 = count + ((size_t)2 << digit);
        for (int i = 0; i < n; i++) {
            uint64_t k = keys[i] >> low;
            count[k & mask]++;
            c1[(k >> digit) & mask]++;
            c2[(k >> (2 * digit)) & mask]++;
        }
    } else {
        for (int i = 0; i < n; i++) {
            uint64_t k = keys[i] >> low;
            for (int d = 0; d < passes; d++) count[((size_t)d << digit) + ((k >> (d * digit)) & mask)]++;
        }
    }
    uint64_t *k = keys, *tk = tmp_keys;
    uint32_t *v = values, *tv = tmp_values;
    for (int d = 0; d < passes; d++) {
        int shift = low + d * digit;
        uint32_t* c = count + ((size_t)d << digit);
        if (c[(k[0] >> shift) & mask] == (uint32_t)n) continue;
        uint32_t sum = 0;
        for (size_t b = 0; b < buckets; b++) {
            uint32_t here = c[b];
            c[b] = sum;
            sum += here;
        }
        if (v) {
            for (int i = 0; i < n; i++) {
                uint32_t at = c[(k[i] >> shift) & mask]++;
                tk[at] = k[i];
                tv[at] = v[i];
            }
            uint32_t* swap_v = v;
            v = tv, tv = swap_v;
        } else {
            for (int i = 0; i < n; i++) tk[c[(k[i] >> shift) & mask]++] = k[i];
        }
        uint64_t* swap_k = k;
        k = tk, tk = swap_k;
    }
    if (sorted_values) *sorted_values = v;
    return k;
}

// A pair's time as the list gives it: -0 as +0, so that its float bits are
// below 2^30 for every time in [0, 1] (and a kind's time past 1, which the
// contract rules out, cannot reach the ids in a key).
enum { TIME_BITS = 30 };
static inline float list_time(float t) { return carom_minf(t, 1.0f) + 0.0f; }

static inline uint32_t time_bits(float t) {
    uint32_t u;
    memcpy(&u, &t, sizeof u);
    return u;
}

static inline float bits_time(uint32_t u) {
    float t;
    memcpy(&t, &u, sizeof t);
    return t;
}

// How far ahead the list is read when it gathers the candidates in key
// order: the reads are random, and at 100k pairs most miss the caches.
enum { GATHER_AHEAD = 16 };

// The sort keys of the candidates that stand (see sort_fresh_pairs), in
// `keys` (and `order` unless packed); returns their count. Inlined, so
// that the timed layout, called with constant flags, gets its own loop.
CAROM_FORCE_INLINE int fresh_keys(broad_pairs* c, const broad_world* w, uint32_t low, int shift,
                                  int below, bool slot_ids, bool timed, bool packed,
                                  uint64_t* keys, uint32_t* order) {
    // The count in a local: the time stores could alias it.
    const int n = c->count;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        broad_pair p = c->items[i];
        uint8_t sa = w->state[p.a], sb = w->state[p.b];
        if (!((sa | sb) & BROAD_SLOT_MOVED)) continue;
        float t = p.time;
        if (t < 0.0f) {
            // The kind found the fat boxes overlapping (its contract): with no
            // motion that is the answer.
            if (sa & sb & BROAD_SLOT_STILL) {
                t = 0.0f;
            } else {
                t = sweep_time(&w->box[p.a], w->motion[p.a], &w->box[p.b], w->motion[p.b]);
                if (t < 0.0f) continue;
            }
            c->items[i].time = t;
        }
        uint32_t ka = id_key(slot_ids ? p.a : w->id[p.a]) - low;
        uint32_t kb = id_key(slot_ids ? p.b : w->id[p.b]) - low;
        uint32_t first = ka < kb ? ka : kb, second = ka ^ kb ^ first;
        uint64_t pair_key = (uint64_t)first << shift | second;
        if (timed) {
            keys[kept++] = pair_key << below | time_bits(list_time(t));
        } else if (packed) {
            keys[kept++] = pair_key << below | (uint64_t)i;
        } else {
            keys[kept] = pair_key;
            order[kept++] = (uint32_t)i;
        }
    }
    return kept;
}

// The list from the sorted keys, duplicates merged: with `timed` from the
// keys alone, otherwise from the candidates the keys (or `order`) point to.
CAROM_FORCE_INLINE int fresh_list(const broad_pairs* c, const uint64_t* keys, const uint32_t* order,
                                  int kept, uint32_t low, int shift, int below, bool timed,
                                  bool packed, pair_list* out) {
    const uint64_t low_mask = ((uint64_t)1 << shift) - 1;
    const uint64_t below_mask = ((uint64_t)1 << below) - 1;
    int count = 0;
    uint64_t last_key = 0;
    for (int i = 0; i < kept; i++) {
        const uint64_t pair_key = keys[i] >> below;
        const int a = key_id(low + (uint32_t)(pair_key >> shift));
        const int b = key_id(low + (uint32_t)(pair_key & low_mask));
        broad_pair cp;
        if (timed) {
            // The ids are the slots.
            cp = (broad_pair){a, b, bits_time((uint32_t)(keys[i] & below_mask))};
        } else {
            if (packed && i + GATHER_AHEAD < kept)
                __builtin_prefetch(&c->items[(uint32_t)(keys[i + GATHER_AHEAD] & below_mask)]);
            cp = c->items[packed ? (uint32_t)(keys[i] & below_mask) : order[i]];
            cp.time = list_time(cp.time);
        }
        if (count > 0 && pair_key == last_key) {
            out->items[count - 1].time = carom_minf(out->items[count - 1].time, cp.time);
            continue;
        }
        last_key = pair_key;
        out->items[count] = (carom_broad_pair){a, b, cp.time};
        out->slots[2 * count] = cp.a;
        out->slots[2 * count + 1] = cp.b;
        count++;
    }
    return count;
}

// Tests the candidates involving a moved proxy (a pair of two unmoved
// proxies is what it was last step) and keeps those that really meet
// during the step, as (id a < id b, time), sorted by (a, b), with their
// slots, in `data->fresh`. Duplicates keep their earliest time.
//
// A pair's sort key holds both ids as offsets from id_low, the smaller one
// above the bits the id range needs: the ids come back from the key. Below
// them rides, when it fits:
// - with every id its slot, the time (TIME_BITS): the slots are the ids,
//   and the list is written from the sorted keys alone;
// - otherwise the candidate's index (ids spanning up to 2^22 for a million
//   candidates), so the sort moves one array; or else the index rides
//   alongside.
static carom_status sort_fresh_pairs(carom_broad_data* data) {
    const broad_world* w = &data->world;
    broad_pairs* c = &data->candidates;
    int n = c->count;
    const uint32_t low = id_key(data->id_low);
    const uint32_t range = id_key(data->id_high) - low;
    int shift = 0;
    while (shift < 32 && (range >> shift) != 0) shift++;
    int index_bits = 0;
    while (((int64_t)1 << index_bits) < n) index_bits++;
    const bool slot_ids = data->slot_id_mismatches == 0;
    const bool timed = slot_ids && 2 * shift + TIME_BITS <= 64;
    const bool packed = timed || 2 * shift + index_bits <= 64;
    const int below = timed ? TIME_BITS : packed ? index_bits : 0;

    if (!broad_reserve((void**)&data->sort_keys, &data->sort_keys_capacity, 2 * n,
                       sizeof(uint64_t)) ||
        (!packed && !broad_reserve((void**)&data->sort_order, &data->sort_order_capacity, 2 * n,
                                   sizeof(uint32_t))))
        return CAROM_ERR_OUT_OF_MEMORY;
    uint64_t* keys = data->sort_keys;
    uint64_t* tmp_keys = keys + n;
    uint32_t* order = packed ? NULL : data->sort_order;
    uint32_t* tmp_order = packed ? NULL : data->sort_order + n;

    const int kept = timed ? fresh_keys(c, w, low, shift, below, true, true, true, keys, NULL)
                           : fresh_keys(c, w, low, shift, below, slot_ids, false, packed, keys,
                                        order);
    int passes;
    int digit = radix_digit_bits(kept, 2 * shift, &passes);
    if (!broad_reserve((void**)&data->radix_count, &data->radix_count_capacity,
                       radix_histograms(passes) << digit, sizeof(uint32_t)))
        return CAROM_ERR_OUT_OF_MEMORY;
    keys = radix_sort64(keys, order, tmp_keys, tmp_order, kept, below, digit, passes,
                        data->radix_count, &order);

    pair_list* out = &data->fresh;
    if (!list_reserve_slots(out, kept)) return CAROM_ERR_OUT_OF_MEMORY;
    out->count = timed ? fresh_list(c, keys, order, kept, low, shift, below, true, true, out)
                       : fresh_list(c, keys, order, kept, low, shift, below, false, packed, out);
    return CAROM_OK;
}

// This step's list: last step's pairs of two unmoved, still present proxies
// (unchanged: same boxes, same motion), merged with the fresh pairs.
static carom_status merge_lists(carom_broad_data* data, const pair_list* before, pair_list* now) {
    const broad_world* w = &data->world;
    if (w->moved_count == w->proxy_count) {
        // Every proxy moved: nothing of the last list stands, and the fresh
        // pairs are the list. Trade buffers rather than copy.
        pair_list swap = *now;
        *now = data->fresh;
        data->fresh = swap;
        return CAROM_OK;
    }
    const pair_list* fresh = &data->fresh;
    if (!list_reserve_slots(now, before->count + fresh->count)) return CAROM_ERR_OUT_OF_MEMORY;
    int i = 0, j = 0, count = 0;
    for (;;) {
        // Skip old pairs that no longer stand as they were.
        while (i < before->count) {
            int sa = before->slots[2 * i], sb = before->slots[2 * i + 1];
            if (broad_slot_alive(w, sa) && broad_slot_alive(w, sb) && !is_moved(w, sa) &&
                !is_moved(w, sb))
                break;
            i++;
        }
        bool take_old;
        if (i < before->count && j < fresh->count) take_old = pair_less(before->items[i], fresh->items[j]);
        else if (i < before->count) take_old = true;
        else if (j < fresh->count) take_old = false;
        else break;
        const pair_list* from = take_old ? before : fresh;
        int at = take_old ? i++ : j++;
        now->items[count] = from->items[at];
        now->slots[2 * count] = from->slots[2 * at];
        now->slots[2 * count + 1] = from->slots[2 * at + 1];
        count++;
    }
    now->count = count;
    return CAROM_OK;
}

// Begin events: in `now`, not in `before`; end events the other way round.
// Cannot fail: the update reserved room for both (events_reserve).
static void diff_lists(carom_broad_data* data, const pair_list* before, const pair_list* now) {
    int i = 0, j = 0, nb = 0, ne = 0;
    while (i < before->count || j < now->count) {
        if (j == now->count || (i < before->count && pair_less(before->items[i], now->items[j]))) {
            data->ends.items[ne++] = before->items[i++];
        } else if (i == before->count || pair_less(now->items[j], before->items[i])) {
            data->begins.items[nb++] = now->items[j++];
        } else {
            i++;
            j++;
        }
    }
    data->begins.count = nb;
    data->ends.count = ne;
}

// Room for every event the diff of `before` and `now` can make, so that
// deriving them later cannot fail.
static bool events_reserve(carom_broad_data* data, const pair_list* before, const pair_list* now) {
    return list_reserve(&data->begins, now->count) && list_reserve(&data->ends, before->count);
}

// The last update's events, derived from its list and the one before on
// the first call after it. Both lists stay as the update left them until
// the next update: insert, move and remove do not touch them.
static void events_settle(carom_broad_data* data) {
    if (data->events_ready) return;
    diff_lists(data, &data->lists[1 - data->current], &data->lists[data->current]);
    data->events_ready = true;
}

carom_status carom_broad_update(carom_broad* broad, carom_broad_stats* stats) {
    carom_broad_stats local = {0};
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    if (!broad || !broad->data) return CAROM_ERR_INVALID_ARG;
    carom_broad_data* data = broad->data;
    broad_world* w = &data->world;
    stats->proxies = w->proxy_count;
    stats->moved = w->moved_count;

    data->candidates.count = 0;
    carom_status status = data->ops->find_pairs(data->state, w, &data->candidates, stats);
    pair_list* before = &data->lists[data->current];
    pair_list* now = &data->lists[1 - data->current];
    if (status == CAROM_OK) status = sort_fresh_pairs(data);
    if (status == CAROM_OK) status = merge_lists(data, before, now);
    if (status == CAROM_OK && !events_reserve(data, before, now)) status = CAROM_ERR_OUT_OF_MEMORY;
    if (status != CAROM_OK) {
        // The moved list stays, so kinds that work from it see these moves
        // again; the previous lists stay valid.
        data->begins.count = data->ends.count = 0;
        data->events_ready = true;
        return status;
    }
    data->events_ready = false;
    data->current = 1 - data->current;
    clear_moved(w);
    stats->candidates = data->candidates.count;
    stats->pairs = now->count;
    stats->bytes = carom_broad_memory(broad);
    return CAROM_OK;
}

// ---- views --------------------------------------------------------------------------------------

static carom_broad_pairs view(const pair_list* list) {
    return (carom_broad_pairs){list->items, list->count};
}

carom_broad_pairs carom_broad_pair_list(const carom_broad* broad) {
    if (!broad || !broad->data) return (carom_broad_pairs){NULL, 0};
    return view(&broad->data->lists[broad->data->current]);
}

// The event views derive the events on first use, writing through the
// const handle (its `data` is a pointer to non-const): the header says so,
// and that a carom_broad is not thread-safe.
carom_broad_pairs carom_broad_begin_events(const carom_broad* broad) {
    if (!broad || !broad->data) return (carom_broad_pairs){NULL, 0};
    events_settle(broad->data);
    return view(&broad->data->begins);
}

carom_broad_pairs carom_broad_end_events(const carom_broad* broad) {
    if (!broad || !broad->data) return (carom_broad_pairs){NULL, 0};
    events_settle(broad->data);
    return view(&broad->data->ends);
}

size_t carom_broad_memory(const carom_broad* broad) {
    if (!broad || !broad->data) return 0;
    const carom_broad_data* data = broad->data;
    const broad_world* w = &data->world;
    size_t per_slot = sizeof *w->box + sizeof *w->motion + sizeof *w->fat + sizeof *w->id +
                      sizeof *w->state + sizeof *w->free_slots + sizeof *w->moved +
                      sizeof *w->moved_index;
    size_t bytes = sizeof *data + (size_t)w->capacity * per_slot;
    bytes += map64_bytes(&data->ids);
    bytes += (size_t)data->candidates.capacity * sizeof(broad_pair);
    bytes += (size_t)(data->lists[0].capacity + data->lists[1].capacity + data->fresh.capacity +
                      data->begins.capacity + data->ends.capacity) *
             sizeof(carom_broad_pair);
    bytes += (size_t)(data->lists[0].slots_capacity + data->lists[1].slots_capacity +
                      data->fresh.slots_capacity) *
             sizeof(int);
    bytes += (size_t)data->sort_keys_capacity * sizeof(uint64_t) +
             (size_t)data->sort_order_capacity * sizeof(uint32_t);
    bytes += (size_t)data->radix_count_capacity * sizeof(uint32_t);
    return bytes + data->ops->memory(data->state);
}
