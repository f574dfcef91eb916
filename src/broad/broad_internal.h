// What every broad phase shares: the proxy table (slots), the candidate pair
// buffer, and the table of operations each kind implements. broad.c owns the
// public calls; it validates input, keeps the proxies, runs the kind's pair
// finder, applies the exact swept test, sorts by id and derives the events.
// The kinds (grid.c, spatial_hash.c, sap.c, sap_spacetime.c, tree.c,
// brute_force.c) see proxies only by slot.
#ifndef CAROM_BROAD_INTERNAL_H
#define CAROM_BROAD_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "carom/broad.h"
#include "core/internal.h"

// ---- growable arrays through the allocator hook ---------------------------------

// Grows *items (each `size` bytes) to hold at least `need`; geometric growth.
// Returns false, leaving *items and *capacity as they were, when out of
// memory.
bool broad_reserve(void** items, int* capacity, int need, size_t size);

// ---- candidate pairs ------------------------------------------------------------

// A pair of slots found by a kind. `time` < 0 means "test exactly": the
// common code runs the swept test on it. A kind that knows the exact first
// time (the space-time SAP) writes it, and the pair is kept as it is.
typedef struct broad_pair {
    int a;
    int b;
    float time;
} broad_pair;

typedef struct broad_pairs {
    broad_pair* items;
    int count;
    int capacity;
} broad_pairs;

// Appends; false when out of memory (the buffer is unchanged).
static inline bool broad_pairs_push(broad_pairs* p, int a, int b, float time) {
    if (p->count == p->capacity &&
        !broad_reserve((void**)&p->items, &p->capacity, p->count + 1, sizeof(broad_pair)))
        return false;
    p->items[p->count++] = (broad_pair){a, b, time};
    return true;
}

// ---- proxies ----------------------------------------------------------------------

enum {
    BROAD_SLOT_FREE = 0,
    BROAD_SLOT_ALIVE = 1,
    // Inserted or moved since the last update (and listed in `moved`).
    BROAD_SLOT_MOVED = 2,
    // Its displacement over the step is zero.
    BROAD_SLOT_STILL = 4,
};

// The proxy table. Slots are reused after removal; slot arrays are indexed
// [0, slot_end). A free slot has state BROAD_SLOT_FREE and must be skipped.
typedef struct broad_world {
    int slot_end;      // one past the highest slot ever used
    int capacity;      // allocated slots
    int proxy_count;
    carom_aabb* box;   // start-of-step box
    vec3s* motion;     // displacement over the step
    carom_aabb* fat;   // box around start and end (equals box when motion is 0)
    int* id;
    uint8_t* state;
    int* free_slots;   // stack of free slots below slot_end
    int free_count;
    int free_capacity;
    // Slots inserted or moved since the last update, each once, all alive
    // (remove takes a slot out). moved_index[slot] is its place, or -1.
    int* moved;
    int* moved_index;
    int moved_count;
    int moved_capacity;
} broad_world;

static inline bool broad_slot_alive(const broad_world* w, int slot) {
    return (w->state[slot] & BROAD_SLOT_ALIVE) != 0;
}

// Inclusive overlap of two boxes (touching counts), as every kind tests it.
static inline bool broad_boxes_overlap(const carom_aabb* a, const carom_aabb* b) {
    return a->min.x <= b->max.x && b->min.x <= a->max.x && a->min.y <= b->max.y &&
           b->min.y <= a->max.y && a->min.z <= b->max.z && b->min.z <= a->max.z;
}

// ---- the kinds ----------------------------------------------------------------------

typedef struct carom_broad_data carom_broad_data;

// Each kind's operations. `state` is the kind's own allocation. Slots passed
// in are alive. insert/move/remove are called at once by the public calls
// (the world already holds the new box for insert and move, and still holds
// the old one for remove, which is called before the slot is freed);
// find_pairs is called by update after them.
typedef struct broad_ops {
    // Allocates the kind's state. May be called with world empty.
    carom_status (*create)(const carom_broad_desc* desc, const broad_world* world, void** state);
    void (*destroy)(void* state);
    carom_status (*insert)(void* state, const broad_world* world, int slot);
    // Cannot fail, so that a move never needs undoing; NULL when the kind
    // works from the moved list at find_pairs.
    void (*move)(void* state, const broad_world* world, int slot);
    void (*remove)(void* state, const broad_world* world, int slot);
    // Appends every pair of alive slots whose fat boxes overlap by
    // broad_boxes_overlap, each unordered pair once, and no other pair with
    // time < 0: the common code trusts that test and runs only the swept
    // test on top, so that every kind keeps exactly the same pairs. Fills stats->swaps and stats->rebuilt where they apply. On
    // CAROM_ERR_OUT_OF_MEMORY the kind must still be usable: the next
    // find_pairs must again report every pair.
    carom_status (*find_pairs)(void* state, const broad_world* world, broad_pairs* out,
                               carom_broad_stats* stats);
    size_t (*memory)(const void* state);
} broad_ops;

extern const broad_ops broad_brute_force_ops;
extern const broad_ops broad_grid_ops;
extern const broad_ops broad_hash_ops;
extern const broad_ops broad_sap_ops;
extern const broad_ops broad_spacetime_ops;
extern const broad_ops broad_tree_ops;

// ---- shared helpers ---------------------------------------------------------------

// Sorts n 32-bit keys ascending by LSD radix (11 bits per pass), carrying a
// 32-bit value; `tmp_keys`/`tmp_values` are scratch of n entries. Passes
// whose digit is equal in every key are skipped. Stable.
void broad_radix_sort32(uint32_t* keys, uint32_t* values, uint32_t* tmp_keys,
                        uint32_t* tmp_values, int n);

// A float's bits mapped so that unsigned order is the float order
// (-0 before +0; inputs are finite).
static inline uint32_t broad_float_key(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

#endif
