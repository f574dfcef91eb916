// The uniform grid (grid.c) and the spatial hash (spatial_hash.c): what they
// share, and a one-shot all-pairs finder for other kinds' full rebuilds.
//
// In both, a box's cell follows from its fat box and the cell size alone,
// so insert, move and remove have nothing to undo: the grid sorts its
// entries again at each update unless few boxes changed, and the hash keeps
// its cells and sorts its boxes into them.
//
// Cell indices are computed in double and clamped before any conversion to
// an integer: coordinates reach CAROM_MAX_COORDINATE and a cell may be tiny.
// The index is a monotone function of the coordinate, which is all the
// all-cells strategy needs. The centre-cell strategies (grid and hash) need
// more: two overlapping boxes no larger than the cell must get centre
// indices less than 1 apart, so that their cells are neighbours. Cells are
// made GRID_CELL_MARGIN larger than the size that decides which boxes are
// small, so the exact indices are at most 1 - 2^-16 apart; the computed ones
// err by a few 2^-53 of the index (a centre is exact in double unless the
// box spans very different magnitudes, and then errs by less than 2^-53 of
// the box's size), under 2^-22 for indices up to 2^30. Beyond 2^30 cells
// from the origin (the hash only: the grid clamps at 2^22 cells per axis) a
// float's spacing exceeds the cell, so a box no larger than the cell is a
// point, and overlapping points have the same centre and index.
#ifndef CAROM_BROAD_GRID_H
#define CAROM_BROAD_GRID_H

#include "broad/broad_internal.h"
#include "core/simd.h"

// Cells are this much larger (relatively) than the small-box limit.
#define GRID_CELL_MARGIN (1.0 / 65536.0)

// A fat box and its slot, copied densely so that the pair loops stream and
// test with two vector comparisons. Lane 3 of `lo` holds the slot's bits,
// of `hi` a small tag (the all-cells strategy's lowest-cell axes) or, in the
// centre-cell grid's entries, a NaN; the tests mask lane 3 out, or let the
// NaN fail it.
typedef struct grid_box {
    f4 lo;
    f4 hi;
} grid_box;

static inline grid_box grid_box_make(const carom_aabb* b, int slot) {
    grid_box g;
    g.lo = (f4)((i4)(f4){b->min.x, b->min.y, b->min.z, 0.0f} | (i4){0, 0, 0, slot});
    g.hi = f4_from(b->max);
    return g;
}

static inline grid_box grid_box_make_tagged(const carom_aabb* b, int slot, int tag) {
    grid_box g = grid_box_make(b, slot);
    g.hi = (f4)((i4)g.hi | (i4){0, 0, 0, tag});
    return g;
}

static inline int grid_box_slot(const grid_box* g) { return ((i4)g->lo)[3]; }
static inline int grid_box_tag(const grid_box* g) { return ((i4)g->hi)[3]; }

static inline carom_aabb grid_box_aabb(const grid_box* g) {
    return (carom_aabb){v3(g->lo[0], g->lo[1], g->lo[2]), v3(g->hi[0], g->hi[1], g->hi[2])};
}

// The inclusive overlap test of broad_boxes_overlap, without its six
// short-circuit branches: in the pair loops most tests fail on a random
// axis, and mispredicted branches cost more than the comparisons.
static inline bool grid_box_overlap(const grid_box* a, const grid_box* b) {
    return i4_mask3((a->lo <= b->hi) & (b->lo <= a->hi)) == 7;
}

static inline bool grid_overlap(const carom_aabb* a, const carom_aabb* b) {
    return (a->min.x <= b->max.x) & (b->min.x <= a->max.x) & (a->min.y <= b->max.y) &
           (b->min.y <= a->max.y) & (a->min.z <= b->max.z) & (b->min.z <= a->max.z);
}

static inline bool grid_push(broad_pairs* out, int a, int b) {
    return a < b ? broad_pairs_push(out, a, b, -1.0f) : broad_pairs_push(out, b, a, -1.0f);
}

// Every overlapping pair among n boxes. False when out of memory.
static inline bool grid_pairs_within(const grid_box* boxes, int n, broad_pairs* out) {
    for (int i = 0; i + 1 < n; i++) {
        const grid_box a = boxes[i];
        for (int j = i + 1; j < n; j++) {
            if (grid_box_overlap(&a, &boxes[j]) &&
                !grid_push(out, grid_box_slot(&a), grid_box_slot(&boxes[j])))
                return false;
        }
    }
    return true;
}

// Every overlapping pair between two disjoint sets of boxes.
static inline bool grid_pairs_between(const grid_box* a, int na, const grid_box* b, int nb,
                                      broad_pairs* out) {
    for (int i = 0; i < na; i++) {
        const grid_box box = a[i];
        for (int j = 0; j < nb; j++) {
            if (grid_box_overlap(&box, &b[j]) &&
                !grid_push(out, grid_box_slot(&box), grid_box_slot(&b[j])))
                return false;
        }
    }
    return true;
}

// The largest extent of a box, in double so that a box spanning -1e12..1e12
// does not round.
static inline double grid_box_size(const carom_aabb* b) {
    double x = (double)b->max.x - b->min.x, y = (double)b->max.y - b->min.y,
           z = (double)b->max.z - b->min.z;
    double m = x > y ? x : y;
    return m > z ? m : z;
}

// ---- automatic cell sizes ---------------------------------------------------------

// Size histogram bins: a size's float bits shifted right by 21, i.e. four
// bins per octave.
#define GRID_SIZE_BINS 1024

// What the automatic cell size is chosen from, gathered in one pass over the
// alive fat boxes. A box's size is its largest extent.
typedef struct grid_sizes {
    int count;          // alive boxes
    double size_sum;
    carom_aabb bounds;  // the box around them (meaningless when count is 0)
    double coord_max;   // largest |coordinate|
    int bins[GRID_SIZE_BINS];
    double bin_max[GRID_SIZE_BINS];  // the largest size in each bin
} grid_sizes;

void broad_grid_measure(const broad_world* w, grid_sizes* s);

static inline int grid_size_bin(double size) {
    float f = (float)size;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (int)(u >> 21);
}

// A box's size into the histogram alone. A loop over many boxes keeps the
// count, the size sum and the largest coordinate in locals, since its
// stores to its entries would otherwise send them through memory on every
// box, and folds them in at the end (grid_sizes_fold).
static inline void grid_sizes_bin(grid_sizes* s, double size) {
    int bin = grid_size_bin(size);
    s->bins[bin]++;
    s->bin_max[bin] = s->bin_max[bin] > size ? s->bin_max[bin] : size;
}

// The largest |coordinate| of a box so far, lane by lane.
static inline f4 grid_coord_max(f4 so_far, const carom_aabb* b) {
    return f4_max(so_far, f4_max(f4_abs(f4_from(b->min)), f4_abs(f4_from(b->max))));
}

static inline void grid_sizes_fold(grid_sizes* s, int count, double size_sum, f4 coord) {
    s->count += count;
    s->size_sum += size_sum;
    double c = f4_max3(coord);
    s->coord_max = s->coord_max > c ? s->coord_max : c;
}

// Counts one box of the given size (not its bounds): the kinds measure
// while they fill their cells, for the next update's automatic size.
static inline void grid_sizes_add(grid_sizes* s, const carom_aabb* b, double size) {
    grid_sizes_bin(s, size);
    grid_sizes_fold(s, 1, size, grid_coord_max(f4_zero(), b));
}

// The smallest automatic cell size (positive):
// - all cells: the mean size, so that a typical box occupies one or two
//   cells per axis;
// - centre cell and hash (`centre`): the size of the largest box once the
//   largest one in GRID_CENTRE_BIG_SHARE are set aside (to a quarter octave:
//   the largest box of the histogram bin where they end), so that cells
//   hold boxes up to the typical largest size and only outliers go to the
//   big list.
// Boxes that are points meet only where they coincide, and any cell works:
// the size is kept no smaller than 2^-40 of the largest coordinate, so that
// cell indices stay far inside double's exact integers.
#define GRID_CENTRE_BIG_SHARE 64
double broad_grid_auto_cell(const grid_sizes* s, bool centre);

// Box size alone cannot choose the cell: in a sparse scene, cells the size
// of the boxes are mostly empty and the time goes into cell overhead, not
// box tests. The automatic size therefore also follows the occupancy each
// entry saw at the previous update (sum over cells of count^2, over the
// entries: the number of boxes sharing an entry's cell, so a dense cluster
// counts for what it costs even when most of the world is empty). It moves
// the size towards a target occupancy, by at most a factor of 2 per update,
// never below broad_grid_auto_cell.
#ifndef GRID_ALL_CELLS_OCCUPANCY
#define GRID_ALL_CELLS_OCCUPANCY 48.0
#endif
#ifndef GRID_CENTRE_OCCUPANCY
#define GRID_CENTRE_OCCUPANCY 1.5
#endif

typedef struct grid_auto {
    double cell;       // the last automatic size; 0: none yet
    double occupancy;  // what the entries saw with it; 0: unknown
} grid_auto;

// The automatic size for this update (remembered in `a`).
double broad_grid_auto_next(grid_auto* a, const grid_sizes* s, bool centre);

// Records the occupancy seen with a->cell: `square_sum` is the sum over the
// occupied cells of their entry count squared.
static inline void grid_auto_observe(grid_auto* a, double square_sum, int entries) {
    a->occupancy = entries > 0 ? square_sum / entries : 0.0;
}

// ---- boxes too large for their cells ----------------------------------------------

// Boxes tested against every cell they reach, or against every small box
// when that is cheaper, and against each other by a sweep on x.
typedef struct grid_big {
    grid_box* boxes;
    int count;
    int capacity;
    grid_box* sorted;
    int sorted_capacity;
    uint32_t* sort;  // keys, values and their scratch: 4 words per box
    int sort_capacity;
} grid_big;

static inline bool grid_big_append(grid_big* big, grid_box box) {
    if (big->count == big->capacity &&
        !broad_reserve((void**)&big->boxes, &big->capacity, big->count + 1, sizeof(grid_box)))
        return false;
    big->boxes[big->count++] = box;
    return true;
}

static inline bool grid_big_push(grid_big* big, const carom_aabb* box, int slot) {
    return grid_big_append(big, grid_box_make(box, slot));
}

// Every overlapping pair among the big boxes; with `tagged_only`, only the
// pairs where at least one box has a nonzero tag.
carom_status broad_grid_big_pairs(grid_big* big, bool tagged_only, broad_pairs* out);
size_t broad_grid_big_memory(const grid_big* big);
void broad_grid_big_free(grid_big* big);

// ---- one-shot all-pairs ------------------------------------------------------------

// Scratch for broad_grid_all_pairs, kept between calls so that repeated
// calls do not allocate. Zero-initialise; free with broad_grid_scratch_free.
typedef struct broad_grid_scratch {
    struct grid* grid;
} broad_grid_scratch;

// Appends every pair of alive slots of `w` whose fat boxes overlap (touching
// counts), each unordered pair once with the smaller slot first and time -1:
// the find_pairs contract. An all-cells grid over the bounds of the boxes,
// with the automatic cell size; boxes of any size mix (large ones go to the
// big list). On CAROM_ERR_OUT_OF_MEMORY `out` is as it was and the scratch
// stays usable.
carom_status broad_grid_all_pairs(broad_grid_scratch* s, const broad_world* w, broad_pairs* out);
size_t broad_grid_scratch_memory(const broad_grid_scratch* s);
void broad_grid_scratch_free(broad_grid_scratch* s);

#endif
