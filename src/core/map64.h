// A hash map from 64-bit keys to 64-bit values: open addressing with linear
// probing and backward-shift deletion, through the allocator hook. Used
// where a failed growth must come back as CAROM_ERR_OUT_OF_MEMORY (stb_ds
// growth has no way to fail but the assert hook) and on hot paths (the
// sweep and prune's pair set changes at every overlap-making swap).
//
// Entries are stored densely in slot order; iterate with map64_slot_count
// and map64_slot, skipping empty slots. All-ones is not a valid key.
#ifndef CAROM_MAP64_H
#define CAROM_MAP64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAP64_EMPTY UINT64_MAX

typedef struct map64_entry {
    uint64_t key;
    uint64_t value;
} map64_entry;

typedef struct map64 {
    map64_entry* slots;
    uint32_t mask;   // slot count - 1 (a power of two), 0 when unallocated
    uint32_t count;  // entries
} map64;

// Finds a key; NULL when absent.
map64_entry* map64_find(const map64* m, uint64_t key);
// Inserts or overwrites. False when growth failed (the map is unchanged).
bool map64_put(map64* m, uint64_t key, uint64_t value);
// Ensures room for `count` entries without growth. False when out of memory.
bool map64_reserve(map64* m, uint32_t count);
// Removes a key if present; true when it was.
bool map64_remove(map64* m, uint64_t key);
// Removes every entry, keeping the memory.
void map64_clear(map64* m);
void map64_free(map64* m);

static inline uint32_t map64_slot_count(const map64* m) { return m->slots ? m->mask + 1 : 0; }
static inline size_t map64_bytes(const map64* m) {
    return (size_t)map64_slot_count(m) * sizeof(map64_entry);
}

#endif
