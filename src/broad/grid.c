// Uniform grid over the world box of the desc (CAROM_BROAD_GRID), with the
// two strategies of broad.h:
//
// - all cells: a box is an entry in every cell it overlaps; two boxes that
//   overlap share the cell of the low corner of their intersection, and the
//   pair is reported in that cell only;
// - centre cell: a box is an entry in the cell of its centre; a cell meets
//   its 26 neighbours, and each neighbouring pair of cells is visited once,
//   from the cell with the smaller key.
//
// An update rebuilds from the fat boxes (unless few changed: see "few
// changes" below): cell keys of the entries, a sort, runs of equal keys.
// The centre cell refills its last entries instead while the layout holds
// (see "the refill" below).
// Keys number a grid padded by one cell on every side, so that a
// neighbour's key is the cell's key plus a fixed offset that never wraps
// into another row, and the three cells of a neighbouring row are
// consecutive keys. When the keys span at most a few times as many cells as
// there are entries, a counting sort leaves the first entry of every key,
// and neighbours are found by indexing; otherwise (a sparse or very fine
// grid) a radix sort and pointers that move forward through the occupied
// keys do it, and nothing is proportional to the number of cells.
//
// Boxes outside the world are clamped into the border cells (slower, never
// missed). Boxes too large for their cells go to the big list (grid.h). In
// the all-cells strategy, a cell crowded with boxes much smaller than it is
// split by a finer grid.
#include "broad/grid.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// All cells: a box spanning more cells than this goes to the big list. A box
// no larger than a cell spans at most 8; the limit bounds the entries at 64
// per box.
#define GRID_ALL_CELLS_SPAN 64
// The counting sort is used when the keys span at most this many cells per
// entry (plus a constant for small counts).
#define GRID_DENSE_FACTOR 4
// All cells: a cell holding at least GRID_SPLIT_RUN entries, whose mean size
// is below 1 / GRID_SPLIT_RATIO of the cell and whose spread is above
// GRID_SPLIT_RATIO times it, is split by a finer grid of its own, down to
// GRID_SPLIT_DEPTH levels. Cells are that much larger than their boxes when
// the world is far larger than what the boxes fill (CAROM_GRID_MAX_CELLS
// caps the count) or when the boxes cluster; a cell full of boxes its own
// size, or piled on one spot, is genuinely dense, and splitting would not
// help.
#define GRID_SPLIT_RUN 256
#define GRID_SPLIT_RATIO 4.0
#define GRID_SPLIT_DEPTH 4
// Centre cell: an automatic size within this factor of the last one keeps
// the last one (centre_refill).
#define GRID_KEEP_CELL 1.125

typedef struct grid {
    carom_aabb world;
    double cell_request;  // 0: automatic at each find_pairs
    carom_grid_strategy strategy;
    grid_auto autosize;
    // Box sizes seen by the last fill, for the next automatic size.
    grid_sizes sizes;

    // This update's layout.
    double origin[3];
    double inv_cell;
    double small_limit;  // centre cell: the largest box stored in a cell
    int dims[3];
    int stride_y, stride_z;  // of the padded key
    int key_end;             // one past the largest padded key

    // Entries sorted by key. Values: centre cell, the slot; all cells,
    // slot << 3 | the axes (bits x, y, z) on which the cell is the box's
    // lowest.
    uint32_t* keys;
    uint32_t* values;
    uint32_t* tmp_keys;
    uint32_t* tmp_values;
    int keys_capacity, values_capacity, tmp_keys_capacity, tmp_values_capacity;
    int entry_count;
    // Counting sort: the first entry of every key, key_end + 2 of them, and
    // the most entries one key holds.
    int* first;
    int first_capacity;
    int most_per_key;
    bool dense;
    // Occupied cells in key order: key, first entry (cell_count + 1 starts);
    // not listed (cell_count 0) for the centre cell with dense keys.
    uint32_t* cell_keys;
    int cell_keys_capacity;
    int* cell_starts;
    int cell_starts_capacity;
    int cell_count;
    int stored_count;  // boxes with entries (all cells: boxes, not entries)
    // Centre cell: the entries' boxes in key order. All cells: one cell's,
    // tagged with the value's lowest-cell axes.
    grid_box* boxes;
    int boxes_capacity;
    // Centre cell: the entries above are sorted for the layout of this
    // inv_cell (0: not sorted for any), so the next rebuild with that layout
    // may refill them (centre_refill). The world is the grid's own, so the
    // cell decides the rest of the layout.
    double entries_inv_cell;
    bool refilled;  // the last rebuild refilled them
    // Every alive slot is an entry: the last centre-cell rebuild set no box
    // aside as big, and nothing was inserted or removed since. The refill
    // then needs neither the alive marks nor a pass for the others.
    bool entries_hold_all;
    // The refill's scratch: a mark per slot (all zero between refills), and
    // the sort scratch of the entries whose key changed (2 words each; they
    // themselves go in tmp_keys and tmp_values).
    uint8_t* seen;
    int seen_capacity;
    uint32_t* rekey_scratch;
    int rekey_scratch_capacity;
    // Centre cell: a block of candidate entry pairs (centre_pairs).
    uint32_t* block;
    int block_capacity;
    // Three parts of block_part entries: first entries, second entries, and
    // the indices of the candidates that meet.
    int block_part;
    grid_big big;

    // Updates that change few boxes reuse the last rebuild's cells and the
    // last update's pairs (see "few changes" below). Rebuilds and updates
    // are numbered from 1; per-slot marks hold the number they were set at.
    unsigned rebuild;
    unsigned update;
    bool last_valid;     // `last` holds every pair of the last update
    broad_pairs last;    // in slots, as reported
    unsigned* changed;   // per slot: the update that moved, inserted or removed it
    int changed_capacity;
    unsigned* stale;     // per slot: the rebuild after which it changed
    int stale_capacity;
    int* stale_slots;    // the slots marked with the current rebuild
    int stale_slots_capacity;
    int stale_count;
    grid_big sweep;      // stale boxes and the rebuild's big ones

    // Splitting oversized cells (all cells): the finer grid, made on demand,
    // and the world it sees (one cell's boxes, by index in the cell).
    int depth;  // 0, or 1 + the parent's for a finer grid
    struct grid* child;
    broad_world child_world;
    int child_fat_capacity;
    int child_state_capacity;
    broad_pairs child_out;
} grid;

// ---- layout --------------------------------------------------------------------------

// Chooses the cell counts for `cell` over `world`, growing the cell until
// there are at most CAROM_GRID_MAX_CELLS. Counts are computed in double:
// a 1e12 world over a tiny cell does not fit an int.
static void grid_layout(grid* g, const carom_aabb* world, double cell) {
    double size[3] = {(double)world->max.x - world->min.x, (double)world->max.y - world->min.y,
                      (double)world->max.z - world->min.z};
    double counts[3];
    for (;;) {
        double inflated = cell * (1.0 + GRID_CELL_MARGIN), total = 1.0;
        for (int a = 0; a < 3; a++) {
            double c = ceil(size[a] / inflated);
            counts[a] = c < 1.0 ? 1.0 : c;
            total *= counts[a];
        }
        if (total <= (double)CAROM_GRID_MAX_CELLS) break;
        // The cube root is exact for a cubic world; flat worlds converge
        // over a few rounds, each at least 1% larger.
        double grow = cbrt(total / (double)CAROM_GRID_MAX_CELLS);
        cell *= grow > 1.01 ? grow : 1.01;
    }
    g->small_limit = cell;
    g->inv_cell = 1.0 / (cell * (1.0 + GRID_CELL_MARGIN));
    g->origin[0] = world->min.x;
    g->origin[1] = world->min.y;
    g->origin[2] = world->min.z;
    for (int a = 0; a < 3; a++) g->dims[a] = (int)counts[a];
    g->stride_y = g->dims[0] + 2;
    g->stride_z = g->stride_y * (g->dims[1] + 2);
    g->key_end = g->stride_z * (g->dims[2] + 2);
}

// Boxes that are points meet only where they coincide: any positive cell
// works, and one no smaller than 2^-40 of the largest coordinate keeps cell
// indices far inside double's exact integers.
static double grid_cell_floor(double cell, double coord_max) {
    double least = coord_max * 0x1p-40;
    if (cell < least) cell = least;
    return cell > 0.0 ? cell : 1.0;
}

// floor((x - origin) / cell), clamped into [0, n): clamping first keeps the
// conversion in range, and a clamped box lands in a border cell.
static inline int grid_axis_cell(double x, double origin, double inv_cell, int n) {
    double t = (x - origin) * inv_cell;
    // Clamped by selects, which the compiler may make branch-free, where an
    // early return mispredicts for boxes near a wall; a NaN clamps to 0.
    t = t > 0.0 ? t : 0.0;
    t = t < (double)(n - 1) ? t : (double)(n - 1);
    return (int)t;
}

// Two lanes of grid_axis_cell's clamp: t > low ? t : low, then
// t < high ? t : high, so that NaN clamps to `low` too. maxpd and minpd
// are defined as exactly those selects (the second operand when
// unordered): one instruction each where the select takes four.
typedef double d2 __attribute__((vector_size(16)));
typedef int64_t l2 __attribute__((vector_size(16)));

static inline d2 d2_clamp(d2 t, d2 low, d2 high) {
#if defined(__SSE2__)
    return (d2)_mm_min_pd(_mm_max_pd((__m128d)t, (__m128d)low), (__m128d)high);
#else
    l2 above = t > low;
    t = (d2)(((l2)t & above) | ((l2)low & ~above));
    l2 below = t < high;
    return (d2)(((l2)t & below) | ((l2)high & ~below));
#endif
}

static inline void grid_cell_of(const grid* g, double x, double y, double z, int c[3]) {
    c[0] = grid_axis_cell(x, g->origin[0], g->inv_cell, g->dims[0]);
    c[1] = grid_axis_cell(y, g->origin[1], g->inv_cell, g->dims[1]);
    c[2] = grid_axis_cell(z, g->origin[2], g->inv_cell, g->dims[2]);
}

static inline uint32_t grid_key_strided(int i, int j, int k, uint32_t stride_y,
                                        uint32_t stride_z) {
    return (uint32_t)(i + 1) + (uint32_t)(j + 1) * stride_y + (uint32_t)(k + 1) * stride_z;
}

static inline uint32_t grid_key(const grid* g, int i, int j, int k) {
    return grid_key_strided(i, j, k, (uint32_t)g->stride_y, (uint32_t)g->stride_z);
}

// ---- entries, sort, runs ------------------------------------------------------------

static bool grid_reserve_entries(grid* g, int64_t count) {
    if (count > INT32_MAX) return false;
    return broad_reserve((void**)&g->keys, &g->keys_capacity, (int)count, sizeof(uint32_t)) &&
           broad_reserve((void**)&g->values, &g->values_capacity, (int)count, sizeof(uint32_t));
}

static inline void grid_swap(uint32_t** a, int* a_capacity, uint32_t** b, int* b_capacity) {
    uint32_t* p = *a;
    int c = *a_capacity;
    *a = *b;
    *a_capacity = *b_capacity;
    *b = p;
    *b_capacity = c;
}

// The entries of each key counted at first[key + up] (first has key_end + 2
// words, up is 1 or 2), then summed in place: first[key + up] ends as the
// number of entries with keys up to key. Returns the sum of the counts
// squared (the occupancy); g->most_per_key gets the largest count.
static int64_t grid_count_keys(grid* g, int up) {
    int n = g->entry_count, end = g->key_end;
    int* first = g->first;
    memset(first, 0, (size_t)(end + 2) * sizeof *first);
    for (int i = 0; i < n; i++) first[g->keys[i] + up]++;
    int64_t square_sum = 0;
    int most = 0;
    for (int k = up; k < end + 2; k++) {
        const int c = first[k];
        square_sum += (int64_t)c * c;
        most = c > most ? c : most;
        first[k] = c + first[k - 1];
    }
    g->most_per_key = most;
    return square_sum;
}

// Counting sort by key into the scratch arrays, which then swap in. Stable.
// Returns the sum over keys of their entry count squared (the occupancy).
static double grid_counting_sort(grid* g) {
    int n = g->entry_count;
    int* first = g->first;
    // Counted two places up, summed, then advanced while placing: first[k]
    // ends as the first entry of key k.
    const int64_t square_sum = grid_count_keys(g, 2);
    for (int i = 0; i < n; i++) {
        uint32_t key = g->keys[i], value = g->values[i];
        int at = first[key + 1]++;
        g->tmp_keys[at] = key;
        g->tmp_values[at] = value;
    }
    grid_swap(&g->keys, &g->keys_capacity, &g->tmp_keys, &g->tmp_keys_capacity);
    grid_swap(&g->values, &g->values_capacity, &g->tmp_values, &g->tmp_values_capacity);
    return (double)square_sum;
}

// Sorts the entries by key, lists the occupied cells and records the
// occupancy for the automatic cell size. The centre-cell strategy with
// dense keys finds everything through `first` and needs no cell list.
static bool grid_sort_entries(grid* g) {
    int n = g->entry_count;
    if (!broad_reserve((void**)&g->tmp_keys, &g->tmp_keys_capacity, n, sizeof(uint32_t)) ||
        !broad_reserve((void**)&g->tmp_values, &g->tmp_values_capacity, n, sizeof(uint32_t)))
        return false;
    g->dense = (int64_t)g->key_end <= (int64_t)GRID_DENSE_FACTOR * n + 4096 &&
               broad_reserve((void**)&g->first, &g->first_capacity, g->key_end + 2, sizeof(int));
    const bool list_cells = !g->dense || g->strategy != CAROM_GRID_CENTRE_CELL;
    if (list_cells &&
        (!broad_reserve((void**)&g->cell_keys, &g->cell_keys_capacity, n, sizeof(uint32_t)) ||
         !broad_reserve((void**)&g->cell_starts, &g->cell_starts_capacity, n + 1, sizeof(int))))
        return false;
    double square_sum = 0.0;
    if (g->dense) {
        square_sum = grid_counting_sort(g);
    } else {
        broad_radix_sort32(g->keys, g->values, g->tmp_keys, g->tmp_values, n);
    }
    g->cell_count = 0;
    if (list_cells) {
        const uint32_t* keys = g->keys;
        // Cell starts without a branch on where they fall (one or two
        // entries per cell make it unpredictable): every entry writes at the
        // tentative next cell (m <= i, so within n), and a new key makes it
        // final.
        int m = 0;
        for (int i = 0; i < n; i++) {
            g->cell_keys[m] = keys[i];
            g->cell_starts[m] = i;
            m += i == 0 || keys[i] != keys[i - 1];
        }
        g->cell_starts[m] = n;
        g->cell_count = m;
        if (!g->dense) {
            for (int u = 0; u < m; u++) {
                double k = g->cell_starts[u + 1] - g->cell_starts[u];
                square_sum += k * k;
            }
        }
    }
    grid_auto_observe(&g->autosize, square_sum, n);
    return true;
}

// First occupied cell, from `from` on, whose key is at least `key`.
static int grid_lower_bound(const grid* g, int from, uint32_t key) {
    int lo = from, hi = g->cell_count;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (g->cell_keys[mid] < key) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The entries whose keys are in [k0, k1], as [*e0, *e1); `from` (an
// occupied-cell index no further than k0's) speeds up the sparse search and
// is moved on.
static inline void grid_key_range(const grid* g, uint32_t k0, uint32_t k1, int* from, int* e0,
                                  int* e1) {
    if (g->dense) {
        *e0 = g->first[k0];
        *e1 = g->first[k1 + 1];
        return;
    }
    int a = grid_lower_bound(g, *from, k0);
    int b = grid_lower_bound(g, a, k1 + 1);
    *from = a;
    *e0 = g->cell_starts[a];
    *e1 = g->cell_starts[b];
}

// ---- centre cell ----------------------------------------------------------------------

// The layout as the fill computes keys: grid_axis_cell on two lanes of
// doubles, (x, y) and (z, z), with select-based clamps.
typedef struct centre_keyer {
    d2 origin_xy, origin_zz, inv, last_xy, last_zz;
    uint32_t stride_y, stride_z;
    double small_limit;
} centre_keyer;

static inline centre_keyer centre_keyer_of(const grid* g) {
    centre_keyer k;
    k.origin_xy = (d2){g->origin[0], g->origin[1]};
    k.origin_zz = (d2){g->origin[2], g->origin[2]};
    k.inv = (d2){g->inv_cell, g->inv_cell};
    k.last_xy = (d2){(double)(g->dims[0] - 1), (double)(g->dims[1] - 1)};
    k.last_zz = (d2){(double)(g->dims[2] - 1), (double)(g->dims[2] - 1)};
    k.stride_y = (uint32_t)g->stride_y;
    k.stride_z = (uint32_t)g->stride_z;
    k.small_limit = g->small_limit;
    return k;
}

// A box's size (grid_box_size on the lanes, with the same roundings) and,
// when it is no larger than the cell, the key of its centre's cell.
static inline double centre_key(const centre_keyer* k, const carom_aabb* b, uint32_t* key) {
    const d2 lo_xy = {b->min.x, b->min.y}, hi_xy = {b->max.x, b->max.y};
    const d2 lo_zz = {b->min.z, b->min.z}, hi_zz = {b->max.z, b->max.z};
    const d2 extent_xy = hi_xy - lo_xy, extent_zz = hi_zz - lo_zz;
    double size = extent_xy[0] > extent_xy[1] ? extent_xy[0] : extent_xy[1];
    size = size > extent_zz[0] ? size : extent_zz[0];
    const d2 zero = {0.0, 0.0}, half = {0.5, 0.5};
    const d2 t_xy = d2_clamp((half * (lo_xy + hi_xy) - k->origin_xy) * k->inv, zero, k->last_xy);
    const d2 t_zz = d2_clamp((half * (lo_zz + hi_zz) - k->origin_zz) * k->inv, zero, k->last_zz);
    *key = grid_key_strided((int)t_xy[0], (int)t_xy[1], (int)t_zz[0], k->stride_y, k->stride_z);
    return size;
}

// What a fill measures of the boxes for the next automatic size, in locals
// (grid_sizes_bin says why).
typedef struct centre_measure {
    int alive;
    double size_sum;
    f4 coord;
} centre_measure;

static inline void centre_measure_box(grid* g, centre_measure* m, const carom_aabb* b,
                                      double size) {
    m->alive++;
    m->size_sum += size;
    m->coord = grid_coord_max(m->coord, b);
    grid_sizes_bin(&g->sizes, size);
}

// Slot s's box measured and placed: in the big list, or as (key, slot) at
// keys[*n], values[*n]. False when out of memory.
static inline bool centre_place(grid* g, centre_measure* m, const centre_keyer* keyer,
                                const broad_world* w, int s, uint32_t* keys, uint32_t* values,
                                int* n) {
    const carom_aabb* b = &w->fat[s];
    uint32_t key;
    const double size = centre_key(keyer, b, &key);
    centre_measure_box(g, m, b, size);
    if (size > keyer->small_limit) return grid_big_push(&g->big, b, s);
    keys[*n] = key;
    values[(*n)++] = (uint32_t)s;
    return true;
}

static carom_status centre_fill(grid* g, const broad_world* w) {
    if (!grid_reserve_entries(g, w->proxy_count)) return CAROM_ERR_OUT_OF_MEMORY;
    memset(&g->sizes, 0, sizeof g->sizes);
    // The layout in locals: the entry stores could alias its fields.
    uint32_t* keys = g->keys;
    uint32_t* values = g->values;
    const centre_keyer keyer = centre_keyer_of(g);
    centre_measure m = {0, 0.0, f4_zero()};
    int n = 0;
    carom_status status = CAROM_OK;
    for (int s = 0; s < w->slot_end; s++) {
        if (broad_slot_alive(w, s) && !centre_place(g, &m, &keyer, w, s, keys, values, &n)) {
            status = CAROM_ERR_OUT_OF_MEMORY;
            break;
        }
    }
    grid_sizes_fold(&g->sizes, m.alive, m.size_sum, m.coord);
    g->entry_count = n;
    return status;
}

// A centre-cell entry's box: lane 3 of `hi` is a NaN, so that lane fails
// both comparisons of the pair tests whatever the slot bits in `lo`
// (centre_meet).
static inline grid_box centre_entry_box(const carom_aabb* b, int slot) {
    grid_box e = grid_box_make(b, slot);
    e.hi = (f4)((i4)e.hi | (i4){0, 0, 0, 0x7fc00000});
    return e;
}

// The sentinel the pair tests pad with, after the n entries: empty, it
// meets no box.
static inline void centre_sentinel(grid* g, int n) {
    g->boxes[n].lo = (f4){INFINITY, INFINITY, INFINITY, 0.0f};
    g->boxes[n].hi = (f4){-INFINITY, -INFINITY, -INFINITY, 0.0f};
}

// The boxes in entry order: sequential writes, reads of the fat boxes in
// cell order (which is random in slot order, but cheaper than scattering
// the boxes themselves in the sort: random writes of whole boxes cost more
// than random reads of them, measured).
static bool centre_gather(grid* g, const broad_world* w) {
    int n = g->entry_count;
    if (!broad_reserve((void**)&g->boxes, &g->boxes_capacity, n + 1, sizeof(grid_box)))
        return false;
    for (int i = 0; i < n; i++) {
        int s = (int)g->values[i];
        g->boxes[i] = centre_entry_box(&w->fat[s], s);
    }
    centre_sentinel(g, n);
    return true;
}

// The neighbours of larger key, as five key ranges from a cell's key: the
// cell after it on x, and the rows of three at (y+1, z), (y-1, z+1),
// (y, z+1), (y+1, z+1). Offsets are modulo 2^32: adding wraps to the right
// key, which is in range for every padded interior cell.
enum { CENTRE_RANGES = 5 };

static void centre_offsets(const grid* g, uint32_t offset[CENTRE_RANGES],
                           uint32_t width[CENTRE_RANGES]) {
    const uint32_t sy = (uint32_t)g->stride_y, sz = (uint32_t)g->stride_z;
    const uint32_t o[CENTRE_RANGES] = {1u, sy - 1u, sz - sy - 1u, sz - 1u, sz + sy - 1u};
    for (int r = 0; r < CENTRE_RANGES; r++) {
        offset[r] = o[r];
        width[r] = r == 0 ? 0u : 2u;
    }
}

// Candidate entry pairs gathered before centre_pairs tests them: a block
// small enough to stay in the first-level cache (three parts of 2048
// entries, 24 KB; 2568 entries, 31 KB, once the dense listing has kept
// room past the limit; larger only when one entry alone has more
// candidates). It holds the entries' byte offsets
// into g->boxes, so that the tests load without scaling an index (a box
// is 32 bytes, beyond what an address scales by): CAROM_BROAD_MAX_PROXIES
// boxes and the sentinel after them span at most 2^31 bytes.
enum { CENTRE_BLOCK = 2048 };
typedef uint32_t u4 __attribute__((vector_size(16)));
_Static_assert((uint64_t)(CAROM_BROAD_MAX_PROXIES + 1) * sizeof(grid_box) <= UINT32_MAX,
               "box offsets fit 32 bits");

static inline uint32_t centre_offset(int entry) { return (uint32_t)entry * sizeof(grid_box); }

static inline const grid_box* centre_box(const grid_box* boxes, uint32_t offset) {
    return (const grid_box*)(const void*)((const char*)boxes + offset);
}

// grid_box_overlap for the centre-cell entries, whose `hi` has a NaN in
// lane 3 (centre_gather): that lane fails both comparisons, so the mask of
// all four lanes is 7 exactly when x, y and z overlap, and needs no masking.
static inline bool centre_meet(const grid_box* a, const grid_box* b) {
    return i4_mask4((a->lo <= b->hi) & (b->lo <= a->hi)) == 7;
}

// Tests the candidate pairs (first[k], second[k]) for k < count and
// appends the overlapping ones, with room made for one more than count. One
// loop over many entries' candidates: its exit is predictable where a loop
// per entry's few candidates would mispredict once per entry. Four at a
// time: up to three past count are set to the sentinel box after the
// entries (g->boxes[entry_count]), which meets nothing, so no lane needs a
// mask; the lists have room for CENTRE_APPEND more.
static void centre_test_block(const grid_box* boxes, uint32_t sentinel, uint32_t* first,
                              uint32_t* second, uint32_t* meets, int count, broad_pairs* out) {
    for (int k = count; k < count + 4; k++) first[k] = second[k] = sentinel;
    // The candidates that meet (about one in ten) are listed by index, one
    // store each, and made pairs of slots after.
    size_t kept = 0;
    for (int k = 0; k < count; k += 4) {
        for (int u = 0; u < 4; u++) {
            const grid_box* a = centre_box(boxes, first[k + u]);
            const grid_box* b = centre_box(boxes, second[k + u]);
            meets[kept] = (uint32_t)(k + u);
            kept += centre_meet(a, b);
        }
    }
    broad_pair* at = out->items + out->count;
    for (size_t k = 0; k < kept; k++)
        at[k] = (broad_pair){grid_box_slot(centre_box(boxes, first[meets[k]])),
                             grid_box_slot(centre_box(boxes, second[meets[k]])), -1.0f};
    out->count += (int)kept;
}

// Appends entry i paired with each of the entries [from, to): eight
// written at once whatever the length (the next append, or the tests'
// sentinel, covers the excess), the rest, rarely, one by one. A run holds
// more than four boxes often enough that a loop from four on would
// mispredict.
enum { CENTRE_APPEND = 8 };

static inline int centre_block_append(uint32_t* first, uint32_t* second, int count, int i,
                                      int from, int to) {
    const u4 size = {sizeof(grid_box), sizeof(grid_box), sizeof(grid_box), sizeof(grid_box)};
    const u4 lane = (u4){0, 1, 2, 3} * size;
    const u4 self = (u4){1, 1, 1, 1} * centre_offset(i);
    const u4 low = lane + centre_offset(from), high = low + 4 * size;
    memcpy(first + count, &self, sizeof self);
    memcpy(first + count + 4, &self, sizeof self);
    memcpy(second + count, &low, sizeof low);
    memcpy(second + count + 4, &high, sizeof high);
    for (int e = from + CENTRE_APPEND; e < to; e++) {
        first[count + (e - from)] = centre_offset(i);
        second[count + (e - from)] = centre_offset(e);
    }
    return count + (to - from);
}

// Tests the block's `*count` candidates and empties it. False when out of
// memory.
static bool centre_block_flush(grid* g, int* count, broad_pairs* out) {
    if (*count == 0) return true;
    if (!broad_reserve((void**)&out->items, &out->capacity, out->count + *count + 1,
                       sizeof(broad_pair)))
        return false;
    centre_test_block(g->boxes, centre_offset(g->entry_count), g->block, g->block + g->block_part,
                      g->block + 2 * (size_t)g->block_part, *count, out);
    *count = 0;
    return true;
}

// Makes the empty block take `reach` candidates (with the appends' and the
// tests' padding). False when out of memory.
static bool centre_block_grow(grid* g, int reach) {
    if (reach <= g->block_part - CENTRE_APPEND) return true;
    int64_t part = reach + CENTRE_APPEND > CENTRE_BLOCK ? reach + CENTRE_APPEND : CENTRE_BLOCK;
    // The parts move apart: the block is empty here.
    if (3 * part > INT32_MAX ||
        !broad_reserve((void**)&g->block, &g->block_capacity, (int)(3 * part), sizeof(uint32_t)))
        return false;
    g->block_part = (int)part;
    return true;
}

// Tests the block when `reach` more candidates would overflow it, and
// grows it when they alone would. False when out of memory.
static bool centre_block_make_room(grid* g, int* count, int reach, broad_pairs* out) {
    return centre_block_flush(g, count, out) && centre_block_grow(g, reach);
}

// The block as the listing loops see it, in locals: their stores to the
// block could alias the grid's int fields, which would be reloaded at every
// entry.
typedef struct centre_cursor {
    uint32_t* first;
    uint32_t* second;
    // Candidates the block takes before its padding; in the dense listing
    // with room kept (centre_pairs_dense), where the block is tested.
    int limit;
    int count;
} centre_cursor;

static inline centre_cursor centre_cursor_of(const grid* g, int count) {
    return (centre_cursor){g->block, g->block + g->block_part, g->block_part - CENTRE_APPEND,
                           count};
}

// Lists entry i against the entries of its five runs [e0[r], e1[r]),
// making room first when they would overflow the block, unless the caller
// has room for them (`roomy`: see centre_pairs_dense). False when out of
// memory. Inline: it runs once per entry.
CAROM_FORCE_INLINE bool centre_block_add(grid* g, centre_cursor* c, int i,
                                         const int e0[CENTRE_RANGES], const int e1[CENTRE_RANGES],
                                         bool roomy, broad_pairs* out) {
    // The runs follow each other in key order, so they hold at most
    // e1[4] - e0[0] entries: when that fits, their exact sum is not needed.
    // At most every entry five times: CAROM_BROAD_MAX_PROXIES keeps it in
    // an int.
    if (!roomy && e1[CENTRE_RANGES - 1] - e0[0] > c->limit - c->count) {
        int reach = 0;
        for (int r = 0; r < CENTRE_RANGES; r++) reach += e1[r] - e0[r];
        if (reach > c->limit - c->count) {
            if (!centre_block_make_room(g, &c->count, reach, out)) return false;
            *c = centre_cursor_of(g, c->count);
        }
    }
    // Written out: a loop of five mispredicts its exit in some builds.
    _Static_assert(CENTRE_RANGES == 5, "one append per range");
    int at = c->count;
    at = centre_block_append(c->first, c->second, at, i, e0[0], e1[0]);
    at = centre_block_append(c->first, c->second, at, i, e0[1], e1[1]);
    at = centre_block_append(c->first, c->second, at, i, e0[2], e1[2]);
    at = centre_block_append(c->first, c->second, at, i, e0[3], e1[3]);
    at = centre_block_append(c->first, c->second, at, i, e0[4], e1[4]);
    c->count = at;
    return true;
}

// Each occupied cell with itself and its neighbours of larger key. An
// entry's first run is the rest of its cell and the next cell on x, as the
// next cell's entries follow the cell's in key order; the other four are
// the rows of the neighbouring cells. Runs hold one or two boxes on
// average, in random number: a loop per run, or per entry, would mispredict
// its exit about once per run, or per entry. So the runs' entry pairs are
// listed, without branches, for a block of entries, and the block is tested
// in one loop (centre_test_block).
//
// With dense keys (the counting sort's `first`), each entry finds its runs
// directly, without a loop over cells; first[key + 2] ends its first run,
// whether the next cell is empty or not.
//
// An entry's runs span 14 cells (the rest of its own, the next on x, four
// rows of three), so they hold at most 14 times the most entries one key
// holds. When that is small, the block keeps room for it past its limit,
// and the listing tests the block once an entry has taken it past the
// limit, instead of summing every entry's runs before listing them: at
// 100k boxes the runs of most entries span more than the block, so the
// cheap bound in centre_block_add rarely spares the sum.
enum { CENTRE_ROOMY_REACH = 512 };

CAROM_FORCE_INLINE bool centre_pairs_dense_loop(grid* g, bool roomy, broad_pairs* out) {
    const uint32_t* keys = g->keys;
    const int* first = g->first;
    // centre_offsets' rows, as pointers to each row's middle cell: the
    // loads below take their displacements from the instruction.
    const ptrdiff_t sy = g->stride_y, sz = g->stride_z;
    centre_cursor c = centre_cursor_of(g, 0);
    // Roomy: the limit is where the block is tested, and up to
    // CENTRE_ROOMY_REACH candidates fit past it (centre_pairs_dense).
    if (roomy) c.limit = g->block_part - CENTRE_APPEND - CENTRE_ROOMY_REACH;
    for (int i = 0; i < g->entry_count; i++) {
        const int* cell = first + keys[i];
        const int* rows[CENTRE_RANGES - 1] = {cell + sy, cell + sz - sy, cell + sz, cell + sz + sy};
        int e0[CENTRE_RANGES], e1[CENTRE_RANGES];
        e0[0] = i + 1;
        e1[0] = cell[2];
        for (int r = 1; r < CENTRE_RANGES; r++) {
            e0[r] = rows[r - 1][-1];
            e1[r] = rows[r - 1][2];
        }
        if (!centre_block_add(g, &c, i, e0, e1, roomy, out)) return false;
        if (roomy && c.count > c.limit && !centre_block_flush(g, &c.count, out)) return false;
    }
    return centre_block_flush(g, &c.count, out);
}

static bool centre_pairs_dense(grid* g, broad_pairs* out) {
    const int64_t reach = 14 * (int64_t)g->most_per_key;
    if (reach > CENTRE_ROOMY_REACH || !centre_block_grow(g, CENTRE_BLOCK + CENTRE_ROOMY_REACH))
        return centre_pairs_dense_loop(g, false, out);
    return centre_pairs_dense_loop(g, true, out);
}

// Sparse keys: each range's two ends are pointers into the occupied cells
// that only move forward, as the keys grow.
static bool centre_pairs_sparse(grid* g, broad_pairs* out) {
    const uint32_t* keys = g->cell_keys;
    const int* st = g->cell_starts;
    int m = g->cell_count;
    uint32_t offset[CENTRE_RANGES], width[CENTRE_RANGES];
    centre_offsets(g, offset, width);
    int at[CENTRE_RANGES] = {0}, end[CENTRE_RANGES] = {0};
    centre_cursor c = centre_cursor_of(g, 0);
    for (int u = 0; u < m; u++) {
        const int s0 = st[u], s1 = st[u + 1];
        int e0[CENTRE_RANGES], e1[CENTRE_RANGES];
        for (int r = 0; r < CENTRE_RANGES; r++) {
            uint32_t k0 = keys[u] + offset[r], k1 = k0 + width[r];
            while (at[r] < m && keys[at[r]] < k0) at[r]++;
            if (end[r] < at[r]) end[r] = at[r];
            while (end[r] < m && keys[end[r]] <= k1) end[r]++;
            e0[r] = st[at[r]];
            e1[r] = st[end[r]];
        }
        // The next cell on x starts where this one ends when it is occupied;
        // when it is empty its range is empty.
        const int next_end = e1[0] > e0[0] ? e1[0] : s1;
        for (int i = s0; i < s1; i++) {
            e0[0] = i + 1;
            e1[0] = next_end;
            if (!centre_block_add(g, &c, i, e0, e1, false, out)) return false;
        }
    }
    return centre_block_flush(g, &c.count, out);
}

static bool centre_pairs(grid* g, broad_pairs* out) {
    return g->dense ? centre_pairs_dense(g, out) : centre_pairs_sparse(g, out);
}

// A box that changed since the last rebuild: its entries are out of date.
static inline bool grid_is_stale(const grid* g, int slot) {
    return slot < g->stale_capacity && g->stale[slot] == g->rebuild;
}

// Appends the pairs of `q` with the boxes of [e0, e1), except itself and
// stale ones.
static inline bool grid_query_boxes(const grid* g, const grid_box* q, const grid_box* boxes,
                                    int count, broad_pairs* out) {
    int qs = grid_box_slot(q);
    for (int e = 0; e < count; e++) {
        if (!grid_box_overlap(q, &boxes[e])) continue;
        int s = grid_box_slot(&boxes[e]);
        if (s != qs && !grid_is_stale(g, s) && !grid_push(out, qs, s)) return false;
    }
    return true;
}

// A box (big, or changed since the rebuild) against the stored ones: through
// the cells its box, grown by one cell (a stored box's centre is within half
// a cell of its boundary), covers, or against all of them when there are
// fewer boxes than cells to visit.
static bool centre_query(const grid* g, const grid_box* q, broad_pairs* out) {
    const carom_aabb b = grid_box_aabb(q);
    int lo[3], hi[3];
    grid_cell_of(g, b.min.x, b.min.y, b.min.z, lo);
    grid_cell_of(g, b.max.x, b.max.y, b.max.z, hi);
    double cells = 1.0;
    for (int a = 0; a < 3; a++) {
        lo[a] = lo[a] > 0 ? lo[a] - 1 : 0;
        hi[a] = hi[a] + 1 < g->dims[a] ? hi[a] + 1 : hi[a];
        cells *= (double)(hi[a] - lo[a] + 1);
    }
    if (cells > (double)g->entry_count)
        return grid_query_boxes(g, q, g->boxes, g->entry_count, out);
    int from = 0;
    for (int k = lo[2]; k <= hi[2]; k++) {
        for (int j = lo[1]; j <= hi[1]; j++) {
            int e0, e1;
            grid_key_range(g, grid_key(g, lo[0], j, k), grid_key(g, hi[0], j, k), &from, &e0, &e1);
            if (!grid_query_boxes(g, q, g->boxes + e0, e1 - e0, out)) return false;
        }
    }
    return true;
}

// ---- centre cell: the refill -------------------------------------------------------------
//
// A step moves a box a small part of a cell, so from one rebuild to the
// next with the same layout most boxes keep their cell. The refill walks
// the last rebuild's entries in their order and computes each box's key
// anew. Entries whose key is unchanged stay sorted among themselves: they
// are compacted in place, with their boxes, read once. The others, and the
// boxes that were not entries (inserted since, or too large then), are
// sorted apart and merged in from the back. This takes the place of the
// fill's pass over the slots, the counting sort's scatter and the gather's
// second read of every box. The cell index of the first entry of every key
// comes from the sorted keys.
//
// The result is sorted whatever layout the last keys were computed for, as
// long as they were sorted (the kept keys are a subsequence of them): the
// layout check only keeps the refill to rebuilds where few keys change. The
// automatic cell size is held through small changes for the same reason
// (grid_rebuild).

// `first` for sorted keys, and the occupancy, as grid_counting_sort leaves
// them; the counts are read in key order, so the histogram is sequential.
static void centre_first_of_sorted(grid* g) {
    const int64_t square_sum = grid_count_keys(g, 1);
    g->cell_count = 0;
    grid_auto_observe(&g->autosize, (double)square_sum, g->entry_count);
}

enum { CENTRE_REFILL_AHEAD = 32 };

typedef struct centre_refill_counts {
    int kept;     // entries compacted in place
    int rekeyed;  // entries whose key changed, in tmp_keys and tmp_values
    carom_status status;
} centre_refill_counts;

// The refill's walk over the last entries, compacted in place (kept <= i).
// Their slots are in cell order, random in slot order: what they read of a
// slot is asked for CENTRE_REFILL_AHEAD entries early, as at 100k boxes it
// misses the caches, and the loop's own work would hold few of those misses
// in flight at once. Unless every alive slot is an entry (`all`), a slot
// may have been removed (its entry is dropped), and each listed slot is
// marked in `seen` for the pass over the others. Inlined twice, so that
// neither walk tests `all`.
CAROM_FORCE_INLINE void centre_refill_walk(grid* g, const broad_world* w,
                                           const centre_keyer* keyer, centre_measure* m,
                                           bool all, centre_refill_counts* n) {
    const int old_count = g->entry_count;
    uint32_t* keys = g->keys;
    uint32_t* values = g->values;
    grid_box* boxes = g->boxes;
    uint8_t* seen = g->seen;
    uint32_t* rekeyed_keys = g->tmp_keys;
    uint32_t* rekeyed_values = g->tmp_values;
    int kept = 0, rekeyed = 0;
    for (int i = 0; i < old_count; i++) {
        const int s = (int)values[i];
        if (i + CENTRE_REFILL_AHEAD < old_count) {
            const uint32_t ahead = values[i + CENTRE_REFILL_AHEAD];
            __builtin_prefetch(&w->fat[ahead]);
            if (!all) {
                __builtin_prefetch(&w->state[ahead]);
                __builtin_prefetch(&seen[ahead]);
            }
        }
        if (!all) {
            if (!broad_slot_alive(w, s)) continue;
            seen[s] = 1;
        }
        const carom_aabb* b = &w->fat[s];
        uint32_t key;
        const double size = centre_key(keyer, b, &key);
        centre_measure_box(g, m, b, size);
        if (size > keyer->small_limit) {
            if (!grid_big_push(&g->big, b, s)) n->status = CAROM_ERR_OUT_OF_MEMORY;
            continue;
        }
        // Written both ways and kept by one count, without a branch: one
        // box in twenty or so changes cell, unpredictably, and a
        // mispredicted branch here would also cut short the reads of the
        // boxes ahead, which miss the caches at 100k boxes.
        const bool same = key == keys[i];
        keys[kept] = key;
        values[kept] = (uint32_t)s;
        boxes[kept] = centre_entry_box(b, s);
        kept += same;
        rekeyed_keys[rekeyed] = key;
        rekeyed_values[rekeyed] = (uint32_t)s;
        rekeyed += !same;
    }
    n->kept = kept;
    n->rekeyed = rekeyed;
}

static carom_status centre_refill(grid* g, const broad_world* w) {
    const int most = w->proxy_count;
    if (!grid_reserve_entries(g, most) ||
        !broad_reserve((void**)&g->tmp_keys, &g->tmp_keys_capacity, most, sizeof(uint32_t)) ||
        !broad_reserve((void**)&g->tmp_values, &g->tmp_values_capacity, most, sizeof(uint32_t)) ||
        !broad_reserve((void**)&g->boxes, &g->boxes_capacity, most + 1, sizeof(grid_box)))
        return CAROM_ERR_OUT_OF_MEMORY;
    if (g->seen_capacity < w->slot_end) {
        int old = g->seen_capacity;
        if (!broad_reserve((void**)&g->seen, &g->seen_capacity, w->slot_end, 1))
            return CAROM_ERR_OUT_OF_MEMORY;
        memset(g->seen + old, 0, (size_t)(g->seen_capacity - old));
    }
    memset(&g->sizes, 0, sizeof g->sizes);
    uint32_t* keys = g->keys;
    uint32_t* values = g->values;
    grid_box* boxes = g->boxes;
    uint32_t* rekeyed_keys = g->tmp_keys;
    uint32_t* rekeyed_values = g->tmp_values;
    const centre_keyer keyer = centre_keyer_of(g);
    centre_measure m = {0, 0.0, f4_zero()};
    centre_refill_counts n = {0, 0, CAROM_OK};
    if (g->entries_hold_all) {
        centre_refill_walk(g, w, &keyer, &m, true, &n);
    } else {
        centre_refill_walk(g, w, &keyer, &m, false, &n);
        // The boxes that were not entries (inserted into fresh slots, or big
        // then); the marks are cleared on the way, whatever happens.
        uint8_t* seen = g->seen;
        for (int s = 0; s < w->slot_end; s++) {
            const bool listed = seen[s];
            seen[s] = 0;
            if (!listed && broad_slot_alive(w, s) &&
                !centre_place(g, &m, &keyer, w, s, rekeyed_keys, rekeyed_values, &n.rekeyed))
                n.status = CAROM_ERR_OUT_OF_MEMORY;
        }
    }
    const int kept = n.kept, rekeyed = n.rekeyed;
    carom_status status = n.status;
    grid_sizes_fold(&g->sizes, m.alive, m.size_sum, m.coord);
    if (status == CAROM_OK && !broad_reserve((void**)&g->rekey_scratch,
                                             &g->rekey_scratch_capacity, 2 * rekeyed,
                                             sizeof(uint32_t)))
        status = CAROM_ERR_OUT_OF_MEMORY;
    if (status != CAROM_OK) {
        // The entries are half compacted: none stands (entries_inv_cell is
        // already 0, and the caller drops the last pairs).
        g->entry_count = 0;
        g->big.count = 0;
        return status;
    }
    broad_radix_sort32(rekeyed_keys, rekeyed_values, g->rekey_scratch,
                       g->rekey_scratch + rekeyed, rekeyed);
    // Merged from the back: an entry moves at most once, to its place.
    int i = kept - 1, at = kept + rekeyed - 1;
    for (int j = rekeyed - 1; j >= 0; at--) {
        if (i >= 0 && keys[i] > rekeyed_keys[j]) {
            keys[at] = keys[i];
            values[at] = values[i];
            boxes[at] = boxes[i--];
        } else {
            const int s = (int)rekeyed_values[j];
            keys[at] = rekeyed_keys[j--];
            values[at] = (uint32_t)s;
            boxes[at] = centre_entry_box(&w->fat[s], s);
        }
    }
    g->entry_count = kept + rekeyed;
    g->dense = true;
    centre_sentinel(g, g->entry_count);
    centre_first_of_sorted(g);
    return CAROM_OK;
}

// The entries of this rebuild, sorted and gathered: refilled when the last
// rebuild's are sorted for this layout and the keys are dense for the
// proxies (the counting sort decides on the entries, fewer when some boxes
// are big; the refill's `first` is then larger than the sort's would be,
// never more than GRID_DENSE_FACTOR words a proxy), otherwise filled anew.
static carom_status centre_entries(grid* g, const broad_world* w) {
    const bool refill =
        g->entries_inv_cell == g->inv_cell &&
        (int64_t)g->key_end <= (int64_t)GRID_DENSE_FACTOR * w->proxy_count + 4096 &&
        broad_reserve((void**)&g->first, &g->first_capacity, g->key_end + 2, sizeof(int));
    g->entries_inv_cell = 0.0;
    carom_status status = CAROM_OK;
    if (refill) {
        status = centre_refill(g, w);
    } else {
        status = centre_fill(g, w);
        if (status == CAROM_OK && (!grid_sort_entries(g) || !centre_gather(g, w)))
            status = CAROM_ERR_OUT_OF_MEMORY;
    }
    if (status == CAROM_OK) g->entries_inv_cell = g->inv_cell;
    g->refilled = refill && status == CAROM_OK;
    g->entries_hold_all = status == CAROM_OK && g->big.count == 0;
    return status;
}

static carom_status centre_find(grid* g, const broad_world* w, broad_pairs* out) {
    carom_status status = centre_entries(g, w);
    if (status != CAROM_OK) return status;
    g->stored_count = g->entry_count;
    if (!centre_pairs(g, out)) return CAROM_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < g->big.count; i++) {
        if (!centre_query(g, &g->big.boxes[i], out)) return CAROM_ERR_OUT_OF_MEMORY;
    }
    return CAROM_OK;
}

// ---- all cells ------------------------------------------------------------------------

// A box's entries. The common case, at most two cells per axis, writes all
// eight candidates and keeps the valid ones without a branch (the caller
// leaves room for them).
static int all_cells_emit(grid* g, int n, uint32_t slot, const int lo[3], const int hi[3]) {
    const uint32_t sy = (uint32_t)g->stride_y, sz = (uint32_t)g->stride_z;
    uint32_t base = grid_key(g, lo[0], lo[1], lo[2]), value = slot << 3;
    int di = hi[0] - lo[0], dj = hi[1] - lo[1], dk = hi[2] - lo[2];
    if ((di | dj | dk) <= 1) {
        for (uint32_t c = 0; c < 8; c++) {
            uint32_t x = c & 1u, y = c >> 1 & 1u, z = c >> 2;
            g->keys[n] = base + x + y * sy + z * sz;
            g->values[n] = value | (x ^ 1u) | (y ^ 1u) << 1 | (z ^ 1u) << 2;
            n += (x <= (uint32_t)di) & (y <= (uint32_t)dj) & (z <= (uint32_t)dk);
        }
        return n;
    }
    for (int k = 0; k <= dk; k++) {
        for (int j = 0; j <= dj; j++) {
            for (int i = 0; i <= di; i++) {
                g->keys[n] = base + (uint32_t)i + (uint32_t)j * sy + (uint32_t)k * sz;
                g->values[n++] = value | (uint32_t)(i == 0) | (uint32_t)(j == 0) << 1 |
                                 (uint32_t)(k == 0) << 2;
            }
        }
    }
    return n;
}

static carom_status all_cells_fill(grid* g, const broad_world* w) {
    // A finer grid splitting a cell has its size from that cell's boxes.
    bool measure = g->depth == 0;
    if (measure) memset(&g->sizes, 0, sizeof g->sizes);
    int n = 0;
    for (int s = 0; s < w->slot_end; s++) {
        if (!broad_slot_alive(w, s)) continue;
        const carom_aabb* b = &w->fat[s];
        if (measure) grid_sizes_add(&g->sizes, b, grid_box_size(b));
        int lo[3], hi[3];
        grid_cell_of(g, b->min.x, b->min.y, b->min.z, lo);
        grid_cell_of(g, b->max.x, b->max.y, b->max.z, hi);
        int64_t cells = (int64_t)(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
        if (cells > GRID_ALL_CELLS_SPAN) {
            if (!grid_big_push(&g->big, b, s)) return CAROM_ERR_OUT_OF_MEMORY;
            continue;
        }
        int room = n + GRID_ALL_CELLS_SPAN;
        bool full = room > g->keys_capacity || room > g->values_capacity;
        if (full && !grid_reserve_entries(g, room)) return CAROM_ERR_OUT_OF_MEMORY;
        n = all_cells_emit(g, n, (uint32_t)s, lo, hi);
    }
    g->entry_count = n;
    return CAROM_OK;
}

static grid* grid_new(void);
static carom_status grid_find(grid* g, const broad_world* w, const carom_aabb* world, double cell,
                              broad_pairs* out);

// The region of cell `c` on axis `a`, unbounded on the sides where the
// border cells take the boxes outside the world.
static void grid_cell_span(const grid* g, int a, int c, float* lo, float* hi) {
    double cell = 1.0 / g->inv_cell;
    *lo = c == 0 ? -INFINITY : (float)(g->origin[a] + c * cell);
    *hi = c == g->dims[a] - 1 ? INFINITY : (float)(g->origin[a] + (c + 1) * cell);
}

// The pairs of one oversized cell's n boxes (gathered, tagged), found by a
// finer grid over their bounds within the cell, and kept where this cell is
// their corner cell. False when out of memory.
static bool all_cells_split(grid* g, uint32_t key, int n, broad_pairs* out) {
    if (!g->child) {
        g->child = grid_new();
        if (!g->child) return false;
        g->child->strategy = CAROM_GRID_ALL_CELLS;
        g->child->depth = g->depth + 1;
    }
    broad_world* cw = &g->child_world;
    if (!broad_reserve((void**)&cw->fat, &g->child_fat_capacity, n, sizeof(carom_aabb)) ||
        !broad_reserve((void**)&cw->state, &g->child_state_capacity, n, sizeof(uint8_t)))
        return false;
    vec3s lo = grid_box_aabb(&g->boxes[0]).min, hi = grid_box_aabb(&g->boxes[0]).max;
    double size_sum = 0.0;
    for (int i = 0; i < n; i++) {
        cw->fat[i] = grid_box_aabb(&g->boxes[i]);
        cw->state[i] = BROAD_SLOT_ALIVE;
        lo = v3_min(lo, cw->fat[i].min);
        hi = v3_max(hi, cw->fat[i].max);
        size_sum += grid_box_size(&cw->fat[i]);
    }
    vec3s m = v3_max(v3_abs(lo), v3_abs(hi));
    double cell = grid_cell_floor(size_sum / n, carom_maxf(m.x, carom_maxf(m.y, m.z)));
    cw->slot_end = cw->proxy_count = cw->capacity = n;
    // The corner of every pair kept is inside the cell.
    const uint32_t sy = (uint32_t)g->stride_y;
    int c[3] = {(int)(key % sy) - 1, (int)(key / sy % (uint32_t)(g->dims[1] + 2)) - 1,
                (int)(key / (uint32_t)g->stride_z) - 1};
    for (int a = 0; a < 3; a++) {
        float cl, ch;
        grid_cell_span(g, a, c[a], &cl, &ch);
        lo.raw[a] = carom_maxf(lo.raw[a], cl);
        hi.raw[a] = carom_minf(hi.raw[a], ch);
        if (hi.raw[a] < lo.raw[a]) hi.raw[a] = lo.raw[a];
    }
    carom_aabb world = {lo, hi};
    // The all-cells size rule alone: no occupancy carried over from
    // another cell's split.
    g->child_out.count = 0;
    if (grid_find(g->child, cw, &world, cell, &g->child_out) != CAROM_OK) return false;
    for (int i = 0; i < g->child_out.count; i++) {
        const grid_box* a = &g->boxes[g->child_out.items[i].a];
        const grid_box* b = &g->boxes[g->child_out.items[i].b];
        if ((grid_box_tag(a) | grid_box_tag(b)) == 7 &&
            !grid_push(out, grid_box_slot(a), grid_box_slot(b)))
            return false;
    }
    return true;
}

// True when n boxes spread over GRID_SPLIT_RATIO times their mean size, so
// that a finer grid can separate them (boxes piled on one spot cannot be).
static bool all_cells_spread(const grid_box* boxes, int n, double size_sum) {
    f4 lo = boxes[0].lo, hi = boxes[0].hi;
    for (int i = 1; i < n; i++) {
        lo = f4_min(boxes[i].lo, lo);
        hi = f4_max(hi, boxes[i].hi);
    }
    return f4_max3(hi - lo) > GRID_SPLIT_RATIO * size_sum / n;
}

// The pairs of one cell that it is the low corner cell of: a box is in the
// cell, so its lowest cell is at or below the cell's on every axis, and the
// larger of the two boxes' lowest cells equals the cell's exactly where
// either box's does.
static bool all_cells_run(grid* g, const broad_world* w, int cell, broad_pairs* out) {
    int first = g->cell_starts[cell], n = g->cell_starts[cell + 1] - first;
    if (n < 2) return true;
    // Gathered per cell into a small buffer that stays in cache.
    if (!broad_reserve((void**)&g->boxes, &g->boxes_capacity, n, sizeof(grid_box))) return false;
    const uint32_t* values = g->values + first;
    grid_box* boxes = g->boxes;
    double size_sum = 0.0;
    for (int i = 0; i < n; i++) {
        uint32_t v = values[i];
        const carom_aabb* b = &w->fat[v >> 3];
        boxes[i] = grid_box_make_tagged(b, (int)(v >> 3), (int)(v & 7u));
        size_sum += grid_box_size(b);
    }
    if (n >= GRID_SPLIT_RUN && g->depth < GRID_SPLIT_DEPTH &&
        size_sum * GRID_SPLIT_RATIO < n * g->small_limit && all_cells_spread(boxes, n, size_sum))
        return all_cells_split(g, g->cell_keys[cell], n, out);
    for (int i = 0; i + 1 < n; i++) {
        const grid_box a = boxes[i];
        for (int j = i + 1; j < n; j++) {
            if (!grid_box_overlap(&a, &boxes[j])) continue;
            if ((grid_box_tag(&a) | grid_box_tag(&boxes[j])) != 7) continue;
            if (!grid_push(out, grid_box_slot(&a), grid_box_slot(&boxes[j]))) return false;
        }
    }
    return true;
}

// Appends the pair of `q` and stored slot `s` when they overlap, unless `s`
// is `q` or stale.
static inline bool all_cells_query_one(const grid* g, const broad_world* w, const carom_aabb* q,
                                       int q_slot, int s, broad_pairs* out) {
    if (!grid_overlap(q, &w->fat[s]) || s == q_slot || grid_is_stale(g, s)) return true;
    return grid_push(out, q_slot, s);
}

// A box (big, or changed since the rebuild) against the stored ones: through
// the cells it overlaps, each pair in its corner cell, or against every
// stored box (its entry in its own lowest cell) when there are fewer of
// them than cells to visit.
static bool all_cells_query(const grid* g, const broad_world* w, const grid_box* q,
                            int small_count, broad_pairs* out) {
    const carom_aabb b = grid_box_aabb(q);
    int q_slot = grid_box_slot(q), lo[3], hi[3];
    grid_cell_of(g, b.min.x, b.min.y, b.min.z, lo);
    grid_cell_of(g, b.max.x, b.max.y, b.max.z, hi);
    double cells = (double)(hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1);
    if (cells > (double)small_count) {
        for (int e = 0; e < g->entry_count; e++) {
            uint32_t v = g->values[e];
            if ((v & 7u) == 7u && !all_cells_query_one(g, w, &b, q_slot, (int)(v >> 3), out))
                return false;
        }
        return true;
    }
    int from = 0;
    for (int k = lo[2]; k <= hi[2]; k++) {
        for (int j = lo[1]; j <= hi[1]; j++) {
            uint32_t row = grid_key(g, 0, j, k) - 1u;
            uint32_t q_tag = (uint32_t)(j == lo[1]) << 1 | (uint32_t)(k == lo[2]) << 2;
            int e0, e1;
            uint32_t first = row + (uint32_t)(lo[0] + 1), last = row + (uint32_t)(hi[0] + 1);
            grid_key_range(g, first, last, &from, &e0, &e1);
            for (int e = e0; e < e1; e++) {
                uint32_t v = g->values[e];
                uint32_t tag = q_tag | (uint32_t)(g->keys[e] == first);
                if (((v & 7u) | tag) == 7u &&
                    !all_cells_query_one(g, w, &b, q_slot, (int)(v >> 3), out))
                    return false;
            }
        }
    }
    return true;
}

static carom_status all_cells_find(grid* g, const broad_world* w, broad_pairs* out) {
    carom_status status = all_cells_fill(g, w);
    if (status != CAROM_OK) return status;
    if (!grid_sort_entries(g)) return CAROM_ERR_OUT_OF_MEMORY;
    for (int c = 0; c < g->cell_count; c++) {
        if (!all_cells_run(g, w, c, out)) return CAROM_ERR_OUT_OF_MEMORY;
    }
    g->stored_count = w->proxy_count - g->big.count;
    for (int i = 0; i < g->big.count; i++) {
        if (!all_cells_query(g, w, &g->big.boxes[i], g->stored_count, out))
            return CAROM_ERR_OUT_OF_MEMORY;
    }
    return CAROM_OK;
}

// ---- the shared pieces (grid.h) ------------------------------------------------------

void broad_grid_measure(const broad_world* w, grid_sizes* s) {
    memset(s, 0, sizeof *s);
    vec3s lo = v3(0.0f, 0.0f, 0.0f), hi = lo;
    for (int i = 0; i < w->slot_end; i++) {
        if (!broad_slot_alive(w, i)) continue;
        const carom_aabb* b = &w->fat[i];
        if (s->count == 0) {
            lo = b->min;
            hi = b->max;
        }
        lo = v3_min(lo, b->min);
        hi = v3_max(hi, b->max);
        grid_sizes_add(s, b, grid_box_size(b));
    }
    s->bounds = (carom_aabb){lo, hi};
}

// The largest size once at most `exceed` of the largest are set aside: the
// largest in the bin where the count from the top passes `exceed` (a box
// with a size in a higher bin may be kept below it, never the reverse).
static double grid_size_above(const grid_sizes* s, int exceed) {
    int above = 0, bin = GRID_SIZE_BINS - 1;
    while (bin > 0 && above + s->bins[bin] <= exceed) above += s->bins[bin--];
    return s->bin_max[bin];
}

double broad_grid_auto_cell(const grid_sizes* s, bool centre) {
    double cell = 0.0;
    if (s->count > 0) {
        cell = centre ? grid_size_above(s, s->count / GRID_CENTRE_BIG_SHARE)
                      : s->size_sum / s->count;
    }
    return grid_cell_floor(cell, s->coord_max);
}

double broad_grid_auto_next(grid_auto* a, const grid_sizes* s, bool centre) {
    double least = broad_grid_auto_cell(s, centre), cell = least;
    if (a->cell > 0.0 && a->occupancy > 0.0) {
        double target = centre ? GRID_CENTRE_OCCUPANCY : GRID_ALL_CELLS_OCCUPANCY;
        double grow = cbrt(target / a->occupancy);
        grow = grow < 0.5 ? 0.5 : grow > 2.0 ? 2.0 : grow;
        cell = a->cell * grow;
        if (cell < least) cell = least;
    }
    a->cell = cell;
    a->occupancy = 0.0;
    return cell;
}

carom_status broad_grid_big_pairs(grid_big* big, bool tagged_only, broad_pairs* out) {
    int n = big->count;
    if (n < 2) return CAROM_OK;
    if (!broad_reserve((void**)&big->sort, &big->sort_capacity, 4 * n, sizeof(uint32_t)) ||
        !broad_reserve((void**)&big->sorted, &big->sorted_capacity, n, sizeof(grid_box)))
        return CAROM_ERR_OUT_OF_MEMORY;
    uint32_t* keys = big->sort;
    uint32_t* order = keys + n;
    for (int i = 0; i < n; i++) {
        keys[i] = broad_float_key(big->boxes[i].lo[0]);
        order[i] = (uint32_t)i;
    }
    broad_radix_sort32(keys, order, keys + 2 * n, keys + 3 * n, n);
    grid_box* sorted = big->sorted;
    for (int i = 0; i < n; i++) sorted[i] = big->boxes[order[i]];
    // Sweep on x: a box meets the ones starting before it ends.
    for (int i = 0; i + 1 < n; i++) {
        const grid_box a = sorted[i];
        for (int j = i + 1; j < n && sorted[j].lo[0] <= a.hi[0]; j++) {
            if (tagged_only && (grid_box_tag(&a) | grid_box_tag(&sorted[j])) == 0) continue;
            if (grid_box_overlap(&a, &sorted[j]) &&
                !grid_push(out, grid_box_slot(&a), grid_box_slot(&sorted[j])))
                return CAROM_ERR_OUT_OF_MEMORY;
        }
    }
    return CAROM_OK;
}

size_t broad_grid_big_memory(const grid_big* big) {
    return ((size_t)big->capacity + (size_t)big->sorted_capacity) * sizeof(grid_box) +
           (size_t)big->sort_capacity * sizeof(uint32_t);
}

void broad_grid_big_free(grid_big* big) {
    carom_free(big->boxes);
    carom_free(big->sorted);
    carom_free(big->sort);
    memset(big, 0, sizeof *big);
}

// ---- one find ---------------------------------------------------------------------------

// Lays the grid over `world` with cells of (at least) `cell` and appends the
// pairs; `out` is restored when out of memory.
static carom_status grid_find(grid* g, const broad_world* w, const carom_aabb* world, double cell,
                              broad_pairs* out) {
    grid_layout(g, world, cell);
    g->big.count = 0;
    int start = out->count;
    carom_status status = g->strategy == CAROM_GRID_CENTRE_CELL ? centre_find(g, w, out)
                                                                 : all_cells_find(g, w, out);
    if (status == CAROM_OK) status = broad_grid_big_pairs(&g->big, false, out);
    if (status != CAROM_OK) out->count = start;
    return status;
}


// ---- few changes: reuse the last pairs ----------------------------------------------
//
// When few boxes changed since the last rebuild, the cells are kept. A box
// that changed is stale: its entries are skipped, and its pairs are found by
// querying the cells around it (for the boxes stored there) and by sweeping
// the stale boxes together with the rebuild's big ones (for each other).
// The last update's pairs between boxes that did not change this update
// hold as they are. Past one box in GRID_STALE_SHARE, or past the sweep's
// bound (grid_stale_limit), or after an error, the update rebuilds. An
// update that moved more boxes than that keeps no pairs for the next: with
// everything moving, copying them every update would serve no reuse, and a
// scene that calms down rebuilds once before it reuses.
#define GRID_STALE_SHARE 16
#define GRID_STALE_MIN_BOUND 4096

// The stale boxes sweep against each other: k of them piled together cost
// k^2 / 2 tests, where a rebuild costs about n. With k at most n / 16 and
// at most max(4096, 16 sqrt(n)), that worst case stays within 128 n tests,
// while 1% of a million boxes moving (10,000) still reuses the cells.
static int grid_stale_limit(int proxies) {
    double bound = 16.0 * sqrt((double)proxies);
    if (bound < GRID_STALE_MIN_BOUND) bound = GRID_STALE_MIN_BOUND;
    int share = proxies / GRID_STALE_SHARE;
    return (double)share < bound ? share : (int)bound;
}

// Per-slot marks for every slot below `slots` (new ones unmarked), and room
// in the stale list for every slot, so that remove need not allocate.
static bool grid_reserve_marks(grid* g, int slots) {
    int old_changed = g->changed_capacity, old_stale = g->stale_capacity;
    if (!broad_reserve((void**)&g->changed, &g->changed_capacity, slots, sizeof(unsigned)) ||
        !broad_reserve((void**)&g->stale, &g->stale_capacity, slots, sizeof(unsigned)) ||
        !broad_reserve((void**)&g->stale_slots, &g->stale_slots_capacity, g->stale_capacity,
                       sizeof(int)))
        return false;
    for (int s = old_changed; s < g->changed_capacity; s++) g->changed[s] = 0;
    for (int s = old_stale; s < g->stale_capacity; s++) g->stale[s] = 0;
    return true;
}

static inline void grid_mark_stale(grid* g, int slot) {
    if (g->stale[slot] == g->rebuild) return;
    g->stale[slot] = g->rebuild;
    g->stale_slots[g->stale_count++] = slot;
}

static carom_status grid_rebuild(grid* g, const broad_world* w, broad_pairs* out) {
    g->refilled = false;
    // A new number leaves every stale mark behind.
    g->rebuild++;
    g->stale_count = 0;
    double cell = g->cell_request;
    if (cell <= 0.0) {
        // The sizes the last fill saw, unless there was none.
        if (g->sizes.count == 0) broad_grid_measure(w, &g->sizes);
        const bool centre = g->strategy == CAROM_GRID_CENTRE_CELL;
        cell = broad_grid_auto_next(&g->autosize, &g->sizes, centre);
        // The centre cell keeps its layout through small changes of the
        // automatic size, so that the next rebuild can refill its entries;
        // never below the size its boxes call for. The occupancy may then
        // settle up to GRID_KEEP_CELL^3 (1.42) either side of its target.
        const double last = g->small_limit;
        if (centre && g->entries_inv_cell > 0.0 && cell < last * GRID_KEEP_CELL &&
            cell > last / GRID_KEEP_CELL && last >= broad_grid_auto_cell(&g->sizes, true)) {
            cell = last;
            g->autosize.cell = last;
        }
    }
    return grid_find(g, w, &g->world, cell, out);
}

static carom_status grid_reuse(grid* g, const broad_world* w, broad_pairs* out) {
    const unsigned now = g->update;
    if (!broad_reserve((void**)&out->items, &out->capacity, out->count + g->last.count,
                       sizeof(broad_pair)))
        return CAROM_ERR_OUT_OF_MEMORY;
    for (int i = 0; i < g->last.count; i++) {
        broad_pair p = g->last.items[i];
        if (g->changed[p.a] != now && g->changed[p.b] != now) out->items[out->count++] = p;
    }
    for (int i = 0; i < w->moved_count; i++) {
        int c = w->moved[i];
        grid_box q = grid_box_make(&w->fat[c], c);
        bool ok = g->strategy == CAROM_GRID_CENTRE_CELL
                      ? centre_query(g, &q, out)
                      : all_cells_query(g, w, &q, g->stored_count, out);
        if (!ok) return CAROM_ERR_OUT_OF_MEMORY;
    }
    // Tag 1: changed by this update; the sweep keeps the pairs with one.
    g->sweep.count = 0;
    for (int i = 0; i < g->stale_count; i++) {
        int s = g->stale_slots[i];
        if (broad_slot_alive(w, s) &&
            !grid_big_append(&g->sweep, grid_box_make_tagged(&w->fat[s], s, g->changed[s] == now)))
            return CAROM_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < g->big.count; i++) {
        const grid_box* b = &g->big.boxes[i];
        if (!grid_is_stale(g, grid_box_slot(b)) && !grid_big_append(&g->sweep, *b))
            return CAROM_ERR_OUT_OF_MEMORY;
    }
    return broad_grid_big_pairs(&g->sweep, true, out);
}

// ---- the kind ---------------------------------------------------------------------------

static size_t grid_bytes(const grid* g) {
    size_t words = (size_t)g->keys_capacity + (size_t)g->values_capacity +
                   (size_t)g->tmp_keys_capacity + (size_t)g->tmp_values_capacity +
                   (size_t)g->cell_keys_capacity + (size_t)g->changed_capacity +
                   (size_t)g->stale_capacity;
    size_t ints = (size_t)g->first_capacity + (size_t)g->cell_starts_capacity +
                  (size_t)g->stale_slots_capacity;
    return sizeof *g + words * sizeof(uint32_t) + ints * sizeof(int) +
           (size_t)g->boxes_capacity * sizeof(grid_box) + (size_t)g->seen_capacity +
           (size_t)g->rekey_scratch_capacity * sizeof(uint32_t) +
           (size_t)g->block_capacity * sizeof(uint32_t) +
           (size_t)g->last.capacity * sizeof(broad_pair) + broad_grid_big_memory(&g->big) +
           broad_grid_big_memory(&g->sweep) + (g->child ? grid_bytes(g->child) : 0) +
           (size_t)g->child_fat_capacity * sizeof(carom_aabb) + (size_t)g->child_state_capacity +
           (size_t)g->child_out.capacity * sizeof(broad_pair);
}

static void grid_free(grid* g) {
    if (!g) return;
    carom_free(g->keys);
    carom_free(g->values);
    carom_free(g->tmp_keys);
    carom_free(g->tmp_values);
    carom_free(g->first);
    carom_free(g->cell_keys);
    carom_free(g->cell_starts);
    carom_free(g->boxes);
    carom_free(g->seen);
    carom_free(g->rekey_scratch);
    carom_free(g->block);
    carom_free(g->last.items);
    carom_free(g->changed);
    carom_free(g->stale);
    carom_free(g->stale_slots);
    broad_grid_big_free(&g->big);
    broad_grid_big_free(&g->sweep);
    grid_free(g->child);
    carom_free(g->child_world.fat);
    carom_free(g->child_world.state);
    carom_free(g->child_out.items);
    carom_free(g);
}

static grid* grid_new(void) {
    grid* g = carom_alloc(sizeof *g);
    if (g) memset(g, 0, sizeof *g);
    return g;
}

static carom_status grid_create(const carom_broad_desc* desc, const broad_world* world,
                                void** state) {
    (void)world;
    grid* g = grid_new();
    if (!g) return CAROM_ERR_OUT_OF_MEMORY;
    g->world = desc->world;
    g->cell_request = desc->cell_size;
    g->strategy = desc->grid_strategy;
    *state = g;
    return CAROM_OK;
}

static void grid_destroy(void* state) { grid_free(state); }

// Inserted and moved slots arrive through the world's moved list; an insert
// only tells the refill that an alive slot may not be an entry.
static carom_status grid_insert(void* state, const broad_world* world, int slot) {
    (void)world, (void)slot;
    grid* g = state;
    g->entries_hold_all = false;
    return CAROM_OK;
}

static void grid_remove(void* state, const broad_world* world, int slot) {
    (void)world;
    grid* g = state;
    g->entries_hold_all = false;
    // A slot beyond the marks was never seen by an update: nothing refers
    // to it.
    if (slot >= g->changed_capacity || slot >= g->stale_capacity) return;
    g->changed[slot] = g->update + 1;
    grid_mark_stale(g, slot);
}

static carom_status grid_find_pairs(void* state, const broad_world* world, broad_pairs* out,
                                    carom_broad_stats* stats) {
    grid* g = state;
    g->update++;
    int start = out->count;
    carom_status status = CAROM_ERR_OUT_OF_MEMORY;
    if (grid_reserve_marks(g, world->slot_end)) {
        // Every moved slot becomes stale, so past the limit on moves alone
        // this update rebuilds, and a rebuild needs no marks.
        const int stale_limit = grid_stale_limit(world->proxy_count);
        bool reuse = g->last_valid && world->moved_count <= stale_limit;
        for (int i = 0; reuse && i < world->moved_count; i++) {
            int s = world->moved[i];
            g->changed[s] = g->update;
            grid_mark_stale(g, s);
        }
        reuse = reuse && g->stale_count <= stale_limit;
        status = reuse ? grid_reuse(g, world, out) : grid_rebuild(g, world, out);
        stats->rebuilt = status == CAROM_OK && !reuse && !g->refilled;
    }
    // The pairs are kept for the next update, when it may reuse them.
    const bool keep = world->moved_count <= grid_stale_limit(world->proxy_count);
    if (status == CAROM_OK && keep) {
        int n = out->count - start;
        if (broad_reserve((void**)&g->last.items, &g->last.capacity, n, sizeof(broad_pair))) {
            if (n > 0) memcpy(g->last.items, out->items + start, (size_t)n * sizeof(broad_pair));
            g->last.count = n;
        } else {
            status = CAROM_ERR_OUT_OF_MEMORY;
        }
    }
    g->last_valid = status == CAROM_OK && keep;
    if (status != CAROM_OK) out->count = start;
    return status;
}

static size_t grid_memory(const void* state) { return grid_bytes(state); }

const broad_ops broad_grid_ops = {
    grid_create, grid_destroy, grid_insert, NULL, grid_remove, grid_find_pairs, grid_memory,
};

// ---- one-shot all pairs -------------------------------------------------------------------

carom_status broad_grid_all_pairs(broad_grid_scratch* s, const broad_world* w, broad_pairs* out) {
    if (w->proxy_count < 2) return CAROM_OK;
    if (!s->grid) {
        s->grid = grid_new();
        if (!s->grid) return CAROM_ERR_OUT_OF_MEMORY;
        s->grid->strategy = CAROM_GRID_ALL_CELLS;
    }
    grid* g = s->grid;
    // The bounds are needed now; the sizes come with them. A flat set of
    // boxes gives a world of zero size on some axis: it is laid out as one
    // cell there.
    broad_grid_measure(w, &g->sizes);
    carom_aabb world = g->sizes.bounds;
    return grid_find(g, w, &world, broad_grid_auto_next(&g->autosize, &g->sizes, false), out);
}

size_t broad_grid_scratch_memory(const broad_grid_scratch* s) {
    return s->grid ? grid_bytes(s->grid) : 0;
}

void broad_grid_scratch_free(broad_grid_scratch* s) {
    grid_free(s->grid);
    s->grid = NULL;
}
