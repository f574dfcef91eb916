// Sorted endpoint lists on three axes and the pair set they keep: the
// machinery shared by the incremental and the space-time sweep and prune.
#include "broad/sap.h"

// ---- storage -------------------------------------------------------------------------------

static bool reserve_axes(sap_axes* s, int endpoints) {
    if (endpoints <= s->capacity) return true;
    int cap = s->capacity;
    for (int k = 0; k < 3; k++) {
        cap = s->capacity;
        if (!broad_reserve((void**)&s->axis[k], &cap, endpoints, sizeof(sap_endpoint))) return false;
    }
    s->capacity = cap;
    return true;
}

static bool reserve_tags(sap_axes* s, int slot) {
    int need = 2 * (slot + 1);
    if (need <= s->where_capacity) return true;
    int cap = s->where_capacity;
    for (int k = 0; k < 3; k++) {
        cap = s->where_capacity;
        if (!broad_reserve((void**)&s->where[k], &cap, need, sizeof(int))) return false;
    }
    s->where_capacity = cap;
    int old = s->generation_capacity;
    if (!broad_reserve((void**)&s->generation, &s->generation_capacity, slot + 1, sizeof(uint32_t)))
        return false;
    for (int i = old; i < s->generation_capacity; i++) s->generation[i] = 0;
    return true;
}

carom_status sap_axes_insert(sap_axes* s, int slot, const carom_aabb* box) {
    if (!reserve_axes(s, s->count + 2) || !reserve_tags(s, slot)) return CAROM_ERR_OUT_OF_MEMORY;
    uint32_t tag = (uint32_t)slot * 2u;
    for (int k = 0; k < 3; k++) {
        s->axis[k][s->count] = (sap_endpoint){box->min.raw[k], tag};
        s->axis[k][s->count + 1] = (sap_endpoint){box->max.raw[k], tag + 1};
        s->where[k][tag] = s->count;
        s->where[k][tag + 1] = s->count + 1;
    }
    s->count += 2;
    return CAROM_OK;
}

void sap_axes_remove(sap_axes* s, int slot) {
    uint32_t tag = (uint32_t)slot * 2u;
    for (int k = 0; k < 3; k++) {
        s->axis[k][s->where[k][tag]].tag = SAP_DEAD_TAG;
        s->axis[k][s->where[k][tag + 1]].tag = SAP_DEAD_TAG;
    }
    s->removed += 2;
    // Its pairs are dropped when next emitted: their generation no longer
    // matches.
    s->generation[slot]++;
}

void sap_axes_compact(sap_axes* s) {
    if (s->removed == 0) return;
    int kept = 0;
    for (int k = 0; k < 3; k++) {
        sap_endpoint* e = s->axis[k];
        kept = 0;
        for (int i = 0; i < s->count; i++) {
            if (e[i].tag == SAP_DEAD_TAG) continue;
            s->where[k][e[i].tag] = kept;
            e[kept++] = e[i];
        }
    }
    s->count = kept;
    s->removed = 0;
}

void sap_axes_free(sap_axes* s) {
    for (int k = 0; k < 3; k++) {
        carom_free(s->axis[k]);
        carom_free(s->where[k]);
    }
    carom_free(s->generation);
    carom_free(s->scratch);
    broad_grid_scratch_free(&s->grid);
    carom_free(s->found.items);
    map64_free(&s->pairs);
    memset(s, 0, sizeof *s);
}

size_t sap_axes_memory(const sap_axes* s) {
    size_t bytes = 3 * (size_t)s->capacity * sizeof(sap_endpoint) +
                   3 * (size_t)s->where_capacity * sizeof(int) +
                   (size_t)s->generation_capacity * sizeof(uint32_t) +
                   (size_t)s->scratch_capacity * sizeof(uint32_t) +
                   broad_grid_scratch_memory(&s->grid) +
                   (size_t)s->found.capacity * sizeof(broad_pair);
    return bytes + map64_bytes(&s->pairs);
}

// ---- the pair set ---------------------------------------------------------------------------

static inline uint64_t generations(const sap_axes* s, int a, int b) {
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return ((uint64_t)s->generation[lo] << 32) | s->generation[hi];
}

void sap_pair_add(sap_axes* s, int a, int b) {
    if (!map64_put(&s->pairs, sap_pair_key(a, b), generations(s, a, b))) s->failed = true;
}

void sap_pair_remove(sap_axes* s, int a, int b) { (void)map64_remove(&s->pairs, sap_pair_key(a, b)); }

static inline bool is_current(const sap_axes* s, map64_entry e) {
    return e.value == generations(s, (int)(e.key >> 32), (int)(e.key & 0xffffffffu));
}

bool sap_emit_pairs(sap_axes* s, broad_pairs* out, float time) {
    map64* m = &s->pairs;
    uint32_t stale = 0;
    for (uint32_t i = 0; i < map64_slot_count(m); i++) {
        map64_entry e = m->slots[i];
        if (e.key == MAP64_EMPTY) continue;
        if (!is_current(s, e)) {
            stale++;
            continue;
        }
        if (!broad_pairs_push(out, (int)(e.key >> 32), (int)(e.key & 0xffffffffu), time))
            return false;
    }
    // Entries of removed slots go now. A removal shifts later entries back
    // into the hole, so the same place is looked at again; entries that wrap
    // around may be seen twice, which is harmless here.
    for (uint32_t i = 0; stale > 0 && i < map64_slot_count(m);) {
        map64_entry e = m->slots[i];
        if (e.key != MAP64_EMPTY && !is_current(s, e)) {
            (void)map64_remove(m, e.key);
            stale--;
        } else {
            i++;
        }
    }
    return true;
}

// ---- swapping -------------------------------------------------------------------------------

// Swaps the endpoints at i and i + 1 on axis k: the left one moves right
// past the right one. A max end passing a min end to the right makes the
// two intervals meet on this axis ("][" becomes "[]"): the pair begins if
// they overlap on the other axes too. A min end passing a max end parts
// them: the pair ends, if it was in the set (overlapping on the others).
static inline void swap_at(sap_axes* s, int k, int i) {
    sap_endpoint right;
    sap_endpoint left = sap_exchange(s, k, i, &right);
    bool left_max = sap_is_max(left.tag);
    if (left_max == sap_is_max(right.tag)) return;
    int a = sap_slot(left.tag), b = sap_slot(right.tag);
    if (!sap_order_overlap_others(s, k, a, b)) return;
    if (left_max) sap_pair_add(s, a, b); else sap_pair_remove(s, a, b);
}

bool sap_sift(sap_axes* s, int k, int i) {
    const sap_endpoint* e = s->axis[k];
    while (i > 0 && sap_less(e[i], e[i - 1])) {
        swap_at(s, k, i - 1);
        i--;
        if (s->swaps > s->swap_budget) return false;
    }
    while (i + 1 < s->count && sap_less(e[i + 1], e[i])) {
        swap_at(s, k, i);
        i++;
        if (s->swaps > s->swap_budget) return false;
    }
    return true;
}

bool sap_insertion_sort(sap_axes* s, int k) {
    const sap_endpoint* e = s->axis[k];
    for (int i = 1; i < s->count; i++) {
        for (int j = i; j > 0 && sap_less(e[j], e[j - 1]); j--) {
            swap_at(s, k, j - 1);
            if (s->swaps > s->swap_budget) return false;
        }
    }
    return true;
}

bool sap_axes_update_slot(sap_axes* s, int slot, const carom_aabb* box) {
    uint32_t tag = (uint32_t)slot * 2u;
    for (int k = 0; k < 3; k++) {
        int at_min = s->where[k][tag], at_max = s->where[k][tag + 1];
        sap_endpoint* e = s->axis[k];
        float old_max = e[at_max].value;
        e[at_min].value = box->min.raw[k];
        e[at_max].value = box->max.raw[k];
        // The end that leads the motion goes first, so that neither end has
        // to pass the other's old place: moving right, the max; otherwise the
        // min.
        if (box->max.raw[k] > old_max) {
            if (!sap_sift(s, k, at_max) || !sap_sift(s, k, s->where[k][tag])) return false;
        } else {
            if (!sap_sift(s, k, at_min) || !sap_sift(s, k, s->where[k][tag + 1])) return false;
        }
    }
    return true;
}

// ---- the full re-sort -----------------------------------------------------------------------

// Sorts axis k from the boxes: mins are laid out before maxes and the radix
// sort is stable, so at equal values a min comes first, as sap_less wants.
static void sort_axis(sap_axes* s, int k, const broad_world* world, const carom_aabb* boxes,
                      int alive) {
    uint32_t* keys = s->scratch;
    uint32_t* tags = keys + 2 * alive;
    uint32_t* tmp_keys = tags + 2 * alive;
    uint32_t* tmp_tags = tmp_keys + 2 * alive;
    int n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int slot = 0; slot < world->slot_end; slot++) {
            if (!broad_slot_alive(world, slot)) continue;
            float v = pass == 0 ? boxes[slot].min.raw[k] : boxes[slot].max.raw[k];
            keys[n] = broad_float_key(v);
            tags[n] = (uint32_t)slot * 2u + (uint32_t)pass;
            n++;
        }
    }
    broad_radix_sort32(keys, tags, tmp_keys, tmp_tags, n);
    sap_endpoint* e = s->axis[k];
    for (int i = 0; i < n; i++) {
        int slot = sap_slot(tags[i]);
        e[i] = (sap_endpoint){sap_is_max(tags[i]) ? boxes[slot].max.raw[k] : boxes[slot].min.raw[k],
                              tags[i]};
        s->where[k][tags[i]] = i;
    }
}

carom_status sap_axes_rebuild(sap_axes* s, const broad_world* world, const carom_aabb* boxes) {
    sap_axes_compact(s);
    int alive = world->proxy_count;
    if (!broad_reserve((void**)&s->scratch, &s->scratch_capacity, 8 * alive, sizeof(uint32_t)))
        return CAROM_ERR_OUT_OF_MEMORY;
    CAROM_ASSERT(s->count == 2 * alive);
    for (int k = 0; k < 3; k++) sort_axis(s, k, world, boxes, alive);
    // The grid finds the pairs of fat boxes; the boxes asked for lie inside
    // them, so their pairs are among those.
    s->found.count = 0;
    carom_status status = broad_grid_all_pairs(&s->grid, world, &s->found);
    if (status != CAROM_OK) return status;
    map64_clear(&s->pairs);
    if (!map64_reserve(&s->pairs, (uint32_t)s->found.count)) return CAROM_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < s->found.count; i++) {
        broad_pair p = s->found.items[i];
        if (broad_boxes_overlap(&boxes[p.a], &boxes[p.b])) sap_pair_add(s, p.a, p.b);
    }
    // In swaps: the three sorts move each endpoint a few times, the grid
    // handles each box and each pair a few times.
    s->rebuild_work = 6LL * s->count + 4LL * s->found.count + 1024;
    return CAROM_OK;
}
