// Every pair of proxies tested: O(n^2), the reference the other kinds are
// checked against on small counts, and the baseline of the benchmark.
#include "broad/broad_internal.h"

typedef struct brute_force {
    // Alive slots and their fat boxes, gathered densely so that the inner
    // loop streams through memory.
    int* slots;
    carom_aabb* boxes;
    int capacity;
    int boxes_capacity;
} brute_force;

static carom_status bf_create(const carom_broad_desc* desc, const broad_world* world,
                              void** state) {
    (void)desc;
    (void)world;
    brute_force* bf = carom_alloc(sizeof *bf);
    if (!bf) return CAROM_ERR_OUT_OF_MEMORY;
    memset(bf, 0, sizeof *bf);
    *state = bf;
    return CAROM_OK;
}

static void bf_destroy(void* state) {
    brute_force* bf = state;
    if (!bf) return;
    carom_free(bf->slots);
    carom_free(bf->boxes);
    carom_free(bf);
}

static carom_status bf_insert(void* state, const broad_world* world, int slot) {
    (void)state, (void)world, (void)slot;
    return CAROM_OK;
}

static void bf_remove(void* state, const broad_world* world, int slot) {
    (void)state, (void)world, (void)slot;
}

static carom_status bf_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                  carom_broad_stats* stats) {
    (void)stats;
    brute_force* bf = state;
    int n = world->proxy_count;
    if (!broad_reserve((void**)&bf->slots, &bf->capacity, n, sizeof *bf->slots) ||
        !broad_reserve((void**)&bf->boxes, &bf->boxes_capacity, n, sizeof *bf->boxes))
        return CAROM_ERR_OUT_OF_MEMORY;
    int count = 0;
    for (int s = 0; s < world->slot_end; s++) {
        if (!broad_slot_alive(world, s)) continue;
        bf->slots[count] = s;
        bf->boxes[count] = world->fat[s];
        count++;
    }
    for (int i = 0; i < count; i++) {
        const carom_aabb a = bf->boxes[i];
        for (int j = i + 1; j < count; j++) {
            if (!broad_boxes_overlap(&a, &bf->boxes[j])) continue;
            if (!broad_pairs_push(out, bf->slots[i], bf->slots[j], -1.0f))
                return CAROM_ERR_OUT_OF_MEMORY;
        }
    }
    return CAROM_OK;
}

static size_t bf_memory(const void* state) {
    const brute_force* bf = state;
    return sizeof *bf + (size_t)bf->capacity * sizeof *bf->slots +
           (size_t)bf->boxes_capacity * sizeof *bf->boxes;
}

const broad_ops broad_brute_force_ops = {
    bf_create, bf_destroy, bf_insert, NULL, bf_remove, bf_find_pairs, bf_memory,
};
