// What the two sweep-and-prune kinds share: sorted endpoint arrays on the
// three axes with each slot's positions in them, local re-sorting by swaps
// that keeps a pair set in step ("][" becoming "[]" begins an overlap on
// that axis, the reverse ends it), compaction after removals, and the full
// re-sort with a fresh pair set when swapping would cost more.
#ifndef CAROM_BROAD_SAP_H
#define CAROM_BROAD_SAP_H

#include "broad/broad_internal.h"
#include "broad/grid.h"
#include "core/map64.h"

// One interval end on one axis. tag = slot * 2 + (1 for a max end).
typedef struct sap_endpoint {
    float value;
    uint32_t tag;
} sap_endpoint;

static inline int sap_slot(uint32_t tag) { return (int)(tag >> 1); }
static inline bool sap_is_max(uint32_t tag) { return (tag & 1u) != 0; }

// The sort order: by value, and at equal values a min end before a max end,
// so that touching intervals count as overlapping, as every kind's
// inclusive box test does.
static inline bool sap_less(sap_endpoint e, sap_endpoint f) {
    return e.value < f.value || (e.value == f.value && !sap_is_max(e.tag) && sap_is_max(f.tag));
}

static inline uint64_t sap_pair_key(int a, int b) {
    return a < b ? ((uint64_t)(uint32_t)a << 32) | (uint32_t)b
                 : ((uint64_t)(uint32_t)b << 32) | (uint32_t)a;
}

typedef struct sap_axes {
    sap_endpoint* axis[3];
    int* where[3];        // where[k][tag]: position of that endpoint on axis k
    int count;            // endpoints per axis (2 per slot in the arrays)
    int capacity;         // endpoints allocated per axis
    int where_capacity;   // tags allocated (2 * slots)
    uint32_t* generation; // per slot
    int generation_capacity;
    int removed;          // endpoints marked dead since the last compaction
    // The pair set: key low slot << 32 | high slot; value both slots'
    // generations when added (low << 32 | high), so that pairs of a removed
    // slot are dropped lazily (a reused slot has a new generation).
    map64 pairs;
    bool failed;  // a pair set growth failed: the set is incomplete
    long long swaps;
    long long rebuild_work;  // the last rebuild's cost, in swap-sized units
    long long swap_budget;  // stop swapping beyond this (and re-sort everything)
    // Sort scratch for the full re-sort: keys, values and their copies.
    uint32_t* scratch;
    int scratch_capacity;
    // The full rebuild finds its pairs with a one-shot grid: sweeping one
    // axis would test every pair overlapping on it, about n^(5/3) for boxes
    // spread through a cube.
    broad_grid_scratch grid;
    broad_pairs found;
} sap_axes;

// The two slots' intervals overlap on axis k by their order there (touching
// counts: the sort puts a min before a max of equal value). The pair set
// holds exactly the pairs overlapping this way on all three axes, at every
// swap: a swap changes one axis, and the pair enters or leaves the set
// when the other two overlap too. (Bullet's sweep tests its handles'
// endpoint indices the same way.)
static inline bool sap_order_overlap(const sap_axes* s, int k, int a, int b) {
    const int* at = s->where[k];
    uint32_t ta = (uint32_t)a * 2u, tb = (uint32_t)b * 2u;
    return at[ta] < at[tb + 1] && at[tb] < at[ta + 1];
}

// Exchanges the endpoints at i and i + 1 on axis k, keeping their places in
// `where`, and counts the swap. Returns the one that was on the left; the
// other goes to *right.
static inline sap_endpoint sap_exchange(sap_axes* s, int k, int i, sap_endpoint* right) {
    sap_endpoint* e = s->axis[k];
    sap_endpoint left = e[i];
    *right = e[i + 1];
    e[i] = *right;
    e[i + 1] = left;
    s->where[k][right->tag] = i;
    s->where[k][left.tag] = i + 1;
    s->swaps++;
    return left;
}

static inline bool sap_order_overlap_others(const sap_axes* s, int k, int a, int b) {
    int k1 = k == 0 ? 1 : 0, k2 = k == 2 ? 1 : 2;
    return sap_order_overlap(s, k1, a, b) && sap_order_overlap(s, k2, a, b);
}

// A tag marking a removed endpoint until compaction.
#define SAP_DEAD_TAG 0xffffffffu

carom_status sap_axes_insert(sap_axes* s, int slot, const carom_aabb* box);
void sap_axes_remove(sap_axes* s, int slot);
void sap_axes_free(sap_axes* s);
size_t sap_axes_memory(const sap_axes* s);

// Drops removed endpoints, keeping the order.
void sap_axes_compact(sap_axes* s);

// Gives the slot's endpoints on every axis the values of `box` and moves
// them into place by swaps, updating the pair set. New endpoints sit at the
// ends of the lists, which by order overlaps nothing, until sorted in. Returns false when the
// swap budget ran out (the arrays are then unsorted and need
// sap_axes_rebuild).
bool sap_axes_update_slot(sap_axes* s, int slot, const carom_aabb* box);

// Moves the endpoint at position i of axis k to its place by swaps (the
// rest of the axis being sorted), updating the pair set. False when the
// swap budget ran out.
bool sap_sift(sap_axes* s, int k, int i);

// Insertion-sorts axis k whatever its order (linear when it is nearly
// sorted), updating the pair set. False when the swap budget ran out.
bool sap_insertion_sort(sap_axes* s, int k);

// Sorts every axis again with each slot's values from `boxes` (indexed by
// slot, each inside the slot's fat box) and rebuilds the pair set from
// scratch. `world` tells alive slots. Returns CAROM_ERR_OUT_OF_MEMORY on
// failure.
carom_status sap_axes_rebuild(sap_axes* s, const broad_world* world, const carom_aabb* boxes);

// Adds / removes a pair in the pair set. A failed add sets `failed`.
void sap_pair_add(sap_axes* s, int a, int b);
void sap_pair_remove(sap_axes* s, int a, int b);

// Appends every pair of the set to `out` with `time`, dropping entries of
// removed slots. False when out of memory.
bool sap_emit_pairs(sap_axes* s, broad_pairs* out, float time);

#endif
