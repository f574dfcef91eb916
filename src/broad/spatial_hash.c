// Spatial hash (CAROM_BROAD_HASH): the centre-cell grid over an unbounded
// world. A box no larger than the cell goes to the cell (i, j, k) of its
// centre, 64-bit coordinates; an stb_ds hash map gives each occupied cell a
// dense index. Larger boxes go to the big list (grid.h).
//
// Hashing is the expensive part (a lookup costs a cache miss or two), so
// the cells persist across updates and each keeps links to its 26
// neighbours, found by hashing once after the update that created it. A slot
// remembers its last cell: a box that stays there, or moves to a
// neighbouring cell that exists, costs no lookup. An update then sorts the
// small boxes by dense cell (counting sort) and walks the occupied cells,
// each with itself and the 13 neighbours that come after it in (z, y, x)
// order, so that every pair of cells is visited once.
//
// Cells left empty for long are deleted once empty cells outnumber the
// occupied ones; the map is rebuilt when the cell size changes.
#include "broad/grid.h"
#include "core/ds.h"

// Coordinates of cells are clamped to +-2^61: neighbours stay in int64, and
// a clamped box lands in a border cell (slower, never missed).
#define HASH_COORD_LIMIT 0x1p61
// A big box visits the cells its box grown by one cell covers, one lookup
// each, unless testing every small box costs less; a lookup costs about as
// much as this many box tests.
#define HASH_LOOKUP_COST 64
// Every HASH_PRUNE_PERIOD updates, when empty cells outnumber the occupied
// ones plus HASH_STALE_SLACK, the cells empty for HASH_STALE_AGE updates are
// deleted: in a bounded scene boxes come back, and re-creating a cell costs
// up to 27 lookups; a drifting scene leaves cells behind for good.
#define HASH_PRUNE_PERIOD 256u
#define HASH_STALE_SLACK 1024
#define HASH_STALE_AGE 1024u
// The automatic cell size is kept while the ideal one stays within this
// factor of it, and a new one is made this much larger than the ideal (see
// hash_choose_cell).
#define HASH_KEEP_FACTOR 1.25
#define HASH_HEADROOM 1.1

typedef struct hash_key {
    int64_t c[3];
} hash_key;

typedef struct hash_entry {
    hash_key key;
    int value;
} hash_entry;

// link[(dx + 1) + 3 (dy + 1) + 9 (dz + 1)] is the neighbour at that offset,
// or -1; link[13] is the cell itself, or -1 when the record is free.
enum { HASH_SELF = 13, HASH_LINKS = 27 };

typedef struct hash_cell {
    hash_key key;
    int link[HASH_LINKS];
    unsigned used;  // the last update that placed a box here
    unsigned born;  // the update that created it
} hash_cell;

typedef struct spatial_hash {
    double cell_request;  // 0: automatic
    grid_auto autosize;
    grid_sizes sizes;  // box sizes seen by the last fill
    double cell;          // the small-box limit the cells were made for; 0: none yet
    double inv_cell;

    hash_entry* map;
    hash_cell* cells;
    int cells_capacity;
    int cell_end;  // records in use or free, [0, cell_end)
    int* free_cells;
    int free_capacity;
    int free_count;
    // Cells created by this update, linked once the boxes are placed.
    int* fresh;
    int fresh_capacity;
    int fresh_count;
    // Counting sort: cell_end + 2 starts, the last two for a sentinel empty
    // cell that missing links point to.
    int* starts;
    int starts_capacity;
    unsigned update;  // counts find_pairs calls

    // Per slot: the last cell (-1: none) and its key.
    int* slot_cell;
    int slot_cell_capacity;
    hash_key* slot_key;
    int slot_key_capacity;

    // This update's small boxes: dense cell and slot, then the boxes in
    // cell order.
    int* entry_cell;
    int entry_cell_capacity;
    int* entry_slot;
    int entry_slot_capacity;
    int entry_count;
    grid_box* boxes;
    int boxes_capacity;
    grid_big big;
} spatial_hash;

// ---- cells ---------------------------------------------------------------------------

static inline int64_t hash_axis_cell(double x, double inv_cell) {
    double t = x * inv_cell;
    if (t > HASH_COORD_LIMIT) t = HASH_COORD_LIMIT;
    if (t < -HASH_COORD_LIMIT) t = -HASH_COORD_LIMIT;
    int64_t i = (int64_t)t;
    return (double)i > t ? i - 1 : i;
}

static inline hash_key hash_key_of(const spatial_hash* h, double x, double y, double z) {
    return (hash_key){{hash_axis_cell(x, h->inv_cell), hash_axis_cell(y, h->inv_cell),
                       hash_axis_cell(z, h->inv_cell)}};
}

static inline bool hash_key_equal(const hash_key* a, const hash_key* b) {
    return a->c[0] == b->c[0] && a->c[1] == b->c[1] && a->c[2] == b->c[2];
}

static int hash_lookup(spatial_hash* h, hash_key key) {
    ptrdiff_t at = hmgeti(h->map, key);
    return at < 0 ? -1 : h->map[at].value;
}

static inline hash_key hash_offset(hash_key k, int o) {
    k.c[0] += o % 3 - 1;
    k.c[1] += o / 3 % 3 - 1;
    k.c[2] += o / 9 - 1;
    return k;
}

// Links the cells this update created with their neighbours, both ways.
// Each new cell looks up its 13 forward neighbours, which links every pair
// with a new cell below; only when older cells exist does it also look up
// the 13 backward ones for them. Needs no memory.
static void hash_link_fresh(spatial_hash* h, bool had_cells) {
    for (int i = 0; i < h->fresh_count; i++) {
        int cell = h->fresh[i];
        hash_key key = h->cells[cell].key;
        for (int o = HASH_SELF + 1; o < HASH_LINKS; o++) {
            int other = hash_lookup(h, hash_offset(key, o));
            if (other < 0) continue;
            h->cells[cell].link[o] = other;
            h->cells[other].link[HASH_LINKS - 1 - o] = cell;
        }
        if (!had_cells) continue;
        for (int o = 0; o < HASH_SELF; o++) {
            int other = hash_lookup(h, hash_offset(key, o));
            if (other < 0 || h->cells[other].born == h->update) continue;
            h->cells[cell].link[o] = other;
            h->cells[other].link[HASH_LINKS - 1 - o] = cell;
        }
    }
    h->fresh_count = 0;
}

// The cell of `key`, created (unlinked, see hash_link_fresh) when absent.
// -1 when out of memory.
static int hash_cell_of(spatial_hash* h, hash_key key) {
    int cell = hash_lookup(h, key);
    if (cell >= 0) return cell;
    if (!broad_reserve((void**)&h->fresh, &h->fresh_capacity, h->fresh_count + 1, sizeof(int)))
        return -1;
    if (h->free_count > 0) {
        cell = h->free_cells[--h->free_count];
    } else {
        // The counting sort needs a start per record: reserve it with the
        // record, so that a new cell never leaves the two out of step.
        if (!broad_reserve((void**)&h->cells, &h->cells_capacity, h->cell_end + 1,
                           sizeof(hash_cell)) ||
            !broad_reserve((void**)&h->starts, &h->starts_capacity, h->cell_end + 3, sizeof(int)))
            return -1;
        cell = h->cell_end++;
    }
    hash_cell* c = &h->cells[cell];
    c->key = key;
    for (int o = 0; o < HASH_LINKS; o++) c->link[o] = -1;
    c->link[HASH_SELF] = cell;
    c->born = h->update;
    hmput(h->map, key, cell);
    h->fresh[h->fresh_count++] = cell;
    return cell;
}

static void hash_delete_cell(spatial_hash* h, int cell) {
    hash_cell* c = &h->cells[cell];
    for (int o = 0; o < HASH_LINKS; o++) {
        if (o != HASH_SELF && c->link[o] >= 0) h->cells[c->link[o]].link[HASH_LINKS - 1 - o] = -1;
    }
    (void)hmdel(h->map, c->key);
    c->link[HASH_SELF] = -1;
    // free_cells has room for every record (reserved before any deletion).
    h->free_cells[h->free_count++] = cell;
}

// Forgets every cell (the cell size changed).
static void hash_clear(spatial_hash* h) {
    hmfree(h->map);
    h->cell_end = 0;
    h->free_count = 0;
    for (int s = 0; s < h->slot_cell_capacity; s++) h->slot_cell[s] = -1;
}

// ---- one update ----------------------------------------------------------------------

// A cell size change rebuilds the map, so the automatic size is kept while
// the ideal one stays within HASH_KEEP_FACTOR of it, unless boxes have
// outgrown it (they would fill the big list, at many lookups each); a new
// one gets HASH_HEADROOM, so that sizes creeping up do not rebuild at every
// update.
static void hash_choose_cell(spatial_hash* h, const broad_world* w) {
    double cell = h->cell_request;
    if (cell <= 0.0) {
        // The sizes the last fill saw, unless there was none.
        if (h->sizes.count == 0) broad_grid_measure(w, &h->sizes);
        double least = broad_grid_auto_cell(&h->sizes, true);
        cell = broad_grid_auto_next(&h->autosize, &h->sizes, true);
        bool keep = h->cell >= least && cell <= h->cell * HASH_KEEP_FACTOR &&
                    cell * HASH_KEEP_FACTOR >= h->cell;
        cell = keep ? h->cell : cell * HASH_HEADROOM;
        // The occupancy is observed with the cell in use.
        h->autosize.cell = cell;
    }
    if (cell != h->cell) {
        hash_clear(h);
        h->cell = cell;
        h->inv_cell = 1.0 / (cell * (1.0 + GRID_CELL_MARGIN));
    }
}

static bool hash_reserve_slots(spatial_hash* h, const broad_world* w) {
    int n = w->slot_end, old = h->slot_cell_capacity;
    if (!broad_reserve((void**)&h->slot_cell, &h->slot_cell_capacity, n, sizeof(int)) ||
        !broad_reserve((void**)&h->slot_key, &h->slot_key_capacity, n, sizeof(hash_key)))
        return false;
    for (int s = old; s < h->slot_cell_capacity; s++) h->slot_cell[s] = -1;
    int m = w->proxy_count;
    return broad_reserve((void**)&h->starts, &h->starts_capacity, h->cell_end + 2, sizeof(int)) &&
           broad_reserve((void**)&h->entry_cell, &h->entry_cell_capacity, m, sizeof(int)) &&
           broad_reserve((void**)&h->entry_slot, &h->entry_slot_capacity, m, sizeof(int)) &&
           broad_reserve((void**)&h->boxes, &h->boxes_capacity, m, sizeof(grid_box));
}

// The cell of a small box: the slot's last one when the box is still there,
// a neighbour of it by link, or the map.
static int hash_place(spatial_hash* h, int slot, hash_key key) {
    int last = h->slot_cell[slot];
    if (last >= 0 && hash_key_equal(&h->slot_key[slot], &key)) return last;
    int cell = -1;
    if (last >= 0) {
        const hash_key* old = &h->slot_key[slot];
        int64_t dx = key.c[0] - old->c[0], dy = key.c[1] - old->c[1], dz = key.c[2] - old->c[2];
        if (dx >= -1 && dx <= 1 && dy >= -1 && dy <= 1 && dz >= -1 && dz <= 1)
            cell = h->cells[last].link[(dx + 1) + 3 * (dy + 1) + 9 * (dz + 1)];
    }
    if (cell < 0) cell = hash_cell_of(h, key);
    if (cell < 0) return -1;
    h->slot_cell[slot] = cell;
    h->slot_key[slot] = key;
    return cell;
}

// Slots not placed in a cell forget theirs: pruning may delete it, and a
// reused slot must not find it.
static carom_status hash_fill(spatial_hash* h, const broad_world* w) {
    memset(&h->sizes, 0, sizeof h->sizes);
    int n = 0;
    for (int s = 0; s < w->slot_end; s++) {
        if (!broad_slot_alive(w, s)) {
            h->slot_cell[s] = -1;
            continue;
        }
        const carom_aabb* b = &w->fat[s];
        double size = grid_box_size(b);
        grid_sizes_add(&h->sizes, b, size);
        if (size > h->cell) {
            h->slot_cell[s] = -1;
            if (!grid_big_push(&h->big, b, s)) return CAROM_ERR_OUT_OF_MEMORY;
            continue;
        }
        hash_key key = hash_key_of(h, 0.5 * ((double)b->min.x + b->max.x),
                                   0.5 * ((double)b->min.y + b->max.y),
                                   0.5 * ((double)b->min.z + b->max.z));
        int cell = hash_place(h, s, key);
        if (cell < 0) return CAROM_ERR_OUT_OF_MEMORY;
        h->cells[cell].used = h->update;
        h->entry_cell[n] = cell;
        h->entry_slot[n++] = s;
    }
    h->entry_count = n;
    return CAROM_OK;
}

// Counting sort of the small boxes by cell: cell c's boxes are
// boxes[starts[c], starts[c + 1]).
static void hash_sort(spatial_hash* h, const broad_world* w) {
    int m = h->cell_end, n = h->entry_count;
    int* st = h->starts;
    memset(st, 0, (size_t)(m + 1) * sizeof *st);
    for (int i = 0; i < n; i++) st[h->entry_cell[i] + 1]++;
    double square_sum = 0.0;
    for (int c = 1; c <= m; c++) square_sum += (double)st[c] * st[c];
    grid_auto_observe(&h->autosize, square_sum, n);
    for (int c = 0; c < m; c++) st[c + 1] += st[c];
    // Placing advances each start to the next cell's: shift them back after.
    for (int i = 0; i < n; i++) {
        int s = h->entry_slot[i];
        h->boxes[st[h->entry_cell[i]]++] = grid_box_make(&w->fat[s], s);
    }
    for (int c = m; c > 0; c--) st[c] = st[c - 1];
    st[0] = 0;
    st[m + 1] = n;  // the sentinel cell m is empty
}

// Each occupied cell with itself and its 13 forward neighbours. A missing
// neighbour reads as the empty sentinel cell rather than taking a branch.
// Returns the number of occupied cells, or -1 when out of memory.
static int hash_walk(const spatial_hash* h, broad_pairs* out) {
    const int* st = h->starts;
    int occupied = 0, sentinel = h->cell_end;
    for (int u = 0; u < h->cell_end; u++) {
        if (st[u + 1] == st[u]) continue;
        occupied++;
        const grid_box* a = h->boxes + st[u];
        int na = st[u + 1] - st[u];
        if (!grid_pairs_within(a, na, out)) return -1;
        const int* link = h->cells[u].link;
        for (int o = HASH_SELF + 1; o < HASH_LINKS; o++) {
            int v = link[o] < 0 ? sentinel : link[o];
            if (!grid_pairs_between(a, na, h->boxes + st[v], st[v + 1] - st[v], out)) return -1;
        }
    }
    return occupied;
}

// A big box against the small ones, through the cells its box grown by one
// cell covers (a small box's centre is within half a cell of its boundary),
// or against all of them when that is cheaper.
static bool hash_big_pairs(spatial_hash* h, const grid_box* big, broad_pairs* out) {
    const carom_aabb box = grid_box_aabb(big);
    const carom_aabb* b = &box;
    hash_key lo = hash_key_of(h, b->min.x, b->min.y, b->min.z);
    hash_key hi = hash_key_of(h, b->max.x, b->max.y, b->max.z);
    double cells = 1.0;
    for (int a = 0; a < 3; a++) {
        lo.c[a]--;
        hi.c[a]++;
        cells *= (double)(hi.c[a] - lo.c[a]) + 1.0;
    }
    if (cells * HASH_LOOKUP_COST > (double)h->entry_count)
        return grid_pairs_between(big, 1, h->boxes, h->entry_count, out);
    const int* st = h->starts;
    hash_key k;
    for (k.c[2] = lo.c[2]; k.c[2] <= hi.c[2]; k.c[2]++) {
        for (k.c[1] = lo.c[1]; k.c[1] <= hi.c[1]; k.c[1]++) {
            for (k.c[0] = lo.c[0]; k.c[0] <= hi.c[0]; k.c[0]++) {
                int v = hash_lookup(h, k);
                if (v >= 0 && !grid_pairs_between(big, 1, h->boxes + st[v], st[v + 1] - st[v], out))
                    return false;
            }
        }
    }
    return true;
}

static void hash_prune(spatial_hash* h, int occupied) {
    int live = h->cell_end - h->free_count;
    if (h->update % HASH_PRUNE_PERIOD != 0 || live - occupied <= occupied + HASH_STALE_SLACK)
        return;
    if (!broad_reserve((void**)&h->free_cells, &h->free_capacity, h->cell_end, sizeof(int)))
        return;  // pruning is only an optimisation
    const int* st = h->starts;
    for (int u = 0; u < h->cell_end; u++) {
        const hash_cell* c = &h->cells[u];
        if (c->link[HASH_SELF] >= 0 && st[u + 1] == st[u] && h->update - c->used > HASH_STALE_AGE)
            hash_delete_cell(h, u);
    }
}

static carom_status hash_find(spatial_hash* h, const broad_world* w, broad_pairs* out) {
    h->update++;
    hash_choose_cell(h, w);
    h->big.count = 0;
    if (!hash_reserve_slots(h, w)) return CAROM_ERR_OUT_OF_MEMORY;
    bool had_cells = h->cell_end > h->free_count;
    carom_status status = hash_fill(h, w);
    // Cells created before a failure are linked too: they are in the map.
    hash_link_fresh(h, had_cells);
    if (status != CAROM_OK) return status;
    hash_sort(h, w);
    int occupied = hash_walk(h, out);
    if (occupied < 0) return CAROM_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < h->big.count; i++) {
        if (!hash_big_pairs(h, &h->big.boxes[i], out)) return CAROM_ERR_OUT_OF_MEMORY;
    }
    status = broad_grid_big_pairs(&h->big, false, out);
    if (status == CAROM_OK) hash_prune(h, occupied);
    return status;
}

// stb_ds keeps its index private: its size follows from the growth rule
// (the slot count doubles when three quarters are used; 16 bytes a slot).
static size_t hash_map_bytes(const hash_entry* map) {
    if (!map) return 0;
    const stbds_array_header* header = stbds_header(map - 1);
    size_t used = header->length, slots = 8;
    while (used >= slots - slots / 4) slots *= 2;
    return sizeof *header + header->capacity * sizeof *map + slots * 16 + 256;
}

// ---- the kind ---------------------------------------------------------------------------

static carom_status hash_create(const carom_broad_desc* desc, const broad_world* world,
                                void** state) {
    (void)world;
    spatial_hash* h = carom_alloc(sizeof *h);
    if (!h) return CAROM_ERR_OUT_OF_MEMORY;
    memset(h, 0, sizeof *h);
    h->cell_request = desc->cell_size;
    *state = h;
    return CAROM_OK;
}

static void hash_destroy(void* state) {
    spatial_hash* h = state;
    if (!h) return;
    hmfree(h->map);
    carom_free(h->cells);
    carom_free(h->free_cells);
    carom_free(h->fresh);
    carom_free(h->starts);
    carom_free(h->slot_cell);
    carom_free(h->slot_key);
    carom_free(h->entry_cell);
    carom_free(h->entry_slot);
    carom_free(h->boxes);
    broad_grid_big_free(&h->big);
    carom_free(h);
}

static carom_status hash_insert(void* state, const broad_world* world, int slot) {
    (void)state, (void)world, (void)slot;
    return CAROM_OK;
}

static void hash_remove(void* state, const broad_world* world, int slot) {
    (void)state, (void)world, (void)slot;
}

static carom_status hash_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                    carom_broad_stats* stats) {
    (void)stats;
    int start = out->count;
    carom_status status = hash_find(state, world, out);
    if (status != CAROM_OK) out->count = start;
    return status;
}

static size_t hash_memory(const void* state) {
    const spatial_hash* h = state;
    return sizeof *h + hash_map_bytes(h->map) + (size_t)h->cells_capacity * sizeof(hash_cell) +
           ((size_t)h->free_capacity + (size_t)h->fresh_capacity + (size_t)h->starts_capacity +
            (size_t)h->slot_cell_capacity + (size_t)h->entry_cell_capacity +
            (size_t)h->entry_slot_capacity) * sizeof(int) +
           (size_t)h->slot_key_capacity * sizeof(hash_key) +
           (size_t)h->boxes_capacity * sizeof(grid_box) + broad_grid_big_memory(&h->big);
}

const broad_ops broad_hash_ops = {
    hash_create, hash_destroy, hash_insert, NULL, hash_remove, hash_find_pairs, hash_memory,
};
