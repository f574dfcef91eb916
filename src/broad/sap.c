// Incremental sweep and prune (the seed slides' "Sweep and Prune"): the
// endpoint lists stay sorted from step to step, each moved box's endpoints
// are swapped into place, and every swap that makes or breaks an overlap on
// one axis updates the pair set after checking the other axes. Fat boxes
// (start and end of the step) make it the encapsulation baseline for moving
// boxes.
//
// Swapping costs in proportion to how far endpoints travel through the
// lists, which in a crowded 3D world is far more than the pairs that change
// (100k boxes moving 1% of their size: millions of swaps for about two
// thousand pair changes). When a step's swaps pass the cost of the last full
// rebuild, the step stops swapping and re-sorts everything instead.
#include "broad/sap.h"

typedef struct sap_kind {
    sap_axes axes;
    const broad_world* world;
    bool need_rebuild;  // set after a failed step: the lists may be unsorted
} sap_kind;

static carom_status sap_create(const carom_broad_desc* desc, const broad_world* world,
                               void** state) {
    (void)desc;
    sap_kind* sap = carom_alloc(sizeof *sap);
    if (!sap) return CAROM_ERR_OUT_OF_MEMORY;
    memset(sap, 0, sizeof *sap);
    sap->world = world;
    *state = sap;
    return CAROM_OK;
}

static void sap_destroy(void* state) {
    sap_kind* sap = state;
    if (!sap) return;
    sap_axes_free(&sap->axes);
    carom_free(sap);
}

static carom_status sap_insert(void* state, const broad_world* world, int slot) {
    sap_kind* sap = state;
    return sap_axes_insert(&sap->axes, slot, &world->fat[slot]);
}

static void sap_remove(void* state, const broad_world* world, int slot) {
    (void)world;
    sap_kind* sap = state;
    sap_axes_remove(&sap->axes, slot);
}

static carom_status sap_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                   carom_broad_stats* stats) {
    sap_kind* sap = state;
    sap_axes* s = &sap->axes;
    sap_axes_compact(s);
    s->swaps = 0;
    // Before any rebuild the lists are empty or small: a first rebuild is
    // cheap to start from. Later, swapping may cost what the last rebuild did.
    s->swap_budget = s->rebuild_work > 0 ? s->rebuild_work : 8LL * s->count + 1024;
    s->failed = false;
    for (int i = 0; i < world->moved_count && !sap->need_rebuild; i++) {
        int slot = world->moved[i];
        if (!sap_axes_update_slot(s, slot, &world->fat[slot])) sap->need_rebuild = true;
    }
    stats->swaps = s->swaps;
    // A pair that could not be stored leaves the set incomplete: rebuild it.
    if (s->failed) sap->need_rebuild = true;
    if (sap->need_rebuild) {
        carom_status status = sap_axes_rebuild(s, world, world->fat);
        if (status != CAROM_OK) return status;
        sap->need_rebuild = false;
        stats->rebuilt = true;
    }
    return sap_emit_pairs(s, out, -1.0f) ? CAROM_OK : CAROM_ERR_OUT_OF_MEMORY;
}

static size_t sap_memory(const void* state) {
    const sap_kind* sap = state;
    return sizeof *sap + sap_axes_memory(&sap->axes);
}

// No move operation: the endpoints move at the next update, from the moved
// list.
const broad_ops broad_sap_ops = {
    sap_create, sap_destroy, sap_insert, NULL, sap_remove, sap_find_pairs, sap_memory,
};
