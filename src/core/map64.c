#include "core/map64.h"

#include <string.h>

#include "core/internal.h"

// A 64-bit finalizer (Stafford's mix 13 as used by splitmix64): every key
// bit reaches the low bits that pick the slot, so slot pairs and
// sequential ids spread evenly.
static inline uint32_t slot_of(const map64* m, uint64_t key) {
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return (uint32_t)key & m->mask;
}

map64_entry* map64_find(const map64* m, uint64_t key) {
    if (!m->slots) return NULL;
    for (uint32_t i = slot_of(m, key);; i = (i + 1) & m->mask) {
        map64_entry* e = &m->slots[i];
        if (e->key == key) return e;
        if (e->key == MAP64_EMPTY) return NULL;
    }
}

static void insert_new(map64* m, uint64_t key, uint64_t value) {
    uint32_t i = slot_of(m, key);
    while (m->slots[i].key != MAP64_EMPTY) i = (i + 1) & m->mask;
    m->slots[i] = (map64_entry){key, value};
    m->count++;
}

// Rehashes into 2^bits slots. Load stays at most one half, so probes are
// short and a probe always meets an empty slot.
static bool rehash(map64* m, uint32_t slots) {
    map64_entry* fresh = carom_alloc((size_t)slots * sizeof *fresh);
    if (!fresh) return false;
    memset(fresh, 0xff, (size_t)slots * sizeof *fresh);
    map64 old = *m;
    m->slots = fresh;
    m->mask = slots - 1;
    m->count = 0;
    for (uint32_t i = 0; i < map64_slot_count(&old); i++)
        if (old.slots[i].key != MAP64_EMPTY) insert_new(m, old.slots[i].key, old.slots[i].value);
    carom_free(old.slots);
    return true;
}

bool map64_reserve(map64* m, uint32_t count) {
    uint32_t slots = map64_slot_count(m);
    if (slots && count <= slots / 2) return true;
    uint32_t want = slots ? slots : 16;
    while (count > want / 2) {
        if (want > (UINT32_C(1) << 31) / 2) return false;
        want *= 2;
    }
    return rehash(m, want);
}

bool map64_put(map64* m, uint64_t key, uint64_t value) {
    map64_entry* e = map64_find(m, key);
    if (e) {
        e->value = value;
        return true;
    }
    if (!map64_reserve(m, m->count + 1)) return false;
    insert_new(m, key, value);
    return true;
}

bool map64_remove(map64* m, uint64_t key) {
    map64_entry* e = map64_find(m, key);
    if (!e) return false;
    // Backward shift: move later members of the probe run into the hole so
    // that no tombstones are needed and lookups stay short.
    uint32_t hole = (uint32_t)(e - m->slots);
    for (uint32_t i = (hole + 1) & m->mask;; i = (i + 1) & m->mask) {
        map64_entry* next = &m->slots[i];
        if (next->key == MAP64_EMPTY) break;
        uint32_t home = slot_of(m, next->key);
        // `next` may fill the hole when its home is not cyclically in (hole, i].
        if (((i - home) & m->mask) >= ((i - hole) & m->mask)) {
            m->slots[hole] = *next;
            hole = i;
        }
    }
    m->slots[hole].key = MAP64_EMPTY;
    m->count--;
    return true;
}

void map64_clear(map64* m) {
    if (m->slots) memset(m->slots, 0xff, map64_bytes(m));
    m->count = 0;
}

void map64_free(map64* m) {
    carom_free(m->slots);
    memset(m, 0, sizeof *m);
}
