/// carom — broad phase: which of many boxes may touch during a step.
///
/// Every broad phase keeps a set of *proxies*: an integer id chosen by the
/// caller, an axis-aligned box at the start of the step, and the box's
/// displacement over the step (zero for a box that does not move). During
/// the step the box moves linearly: at time t in [0, 1] it is
/// `box + t * displacement`. `carom_broad_update` then produces
///
/// - the step's **pair list**: every pair of proxies whose moving boxes
///   overlap at some time in [0, 1] (touching counts), each pair once, with
///   the smaller id first, sorted by (a, b), and with the first time of
///   overlap (0 when the boxes overlap at the start). With zero
///   displacements this is the plain list of overlapping boxes;
/// - **begin events** (pairs in this step's list and not in the previous
///   step's) and **end events** (the other way round), in the same order,
///   derived from the two lists when first asked for, so that a caller who
///   reads only the pair list does not pay for them.
///
/// Every kind gives the same lists for the same input; they differ only in
/// speed and memory. Discrete kinds (grid, hash, SAP, tree, brute force)
/// bound each moving box by the box around its start and end positions
/// ("encapsulation") and keep the pairs whose moving boxes really meet
/// (Levine's per-axis interval times); the space-time SAP processes endpoint
/// swaps in time order and finds exactly those pairs directly. The
/// `candidates` statistic says how many pairs a kind examined to get there.
///
/// The broad phase does not integrate motion: a proxy keeps the box and
/// displacement it was last given until `carom_broad_move` changes them.
/// To advance a proxy, move it to `box + displacement` with its next
/// displacement.
///
/// Ids are any int; each id names at most one proxy. Nothing here allocates
/// once the arrays have grown to the largest proxy and pair counts seen
/// (the spatial hash also grows as new cells are visited). A `carom_broad`
/// is not thread-safe, its const calls included: the first event view after
/// an update writes the events.
#ifndef CAROM_BROAD_H
#define CAROM_BROAD_H

#include "base.h"

CAROM_EXTERN_C_BEGIN

/// Which algorithm a broad phase uses. README.md says which to pick, with
/// numbers.
typedef enum carom_broad_kind {
    /// Incremental sweep and prune: endpoints sorted on the three axes,
    /// locally re-sorted by swaps when boxes move, the pair set updated at
    /// each swap that makes or breaks an overlap. A step whose swaps would
    /// cost more than a rebuild falls back to a full re-sort. Best when few
    /// boxes move, or all move a little. The default.
    CAROM_BROAD_SAP = 0,
    /// Space-time sweep and prune: endpoints move linearly over the step and
    /// are swapped in time order (a priority queue with decrease-key); a pair
    /// begins at the swap that makes its boxes overlap on all three axes. No
    /// encapsulation false pairs, and a group moving with one velocity costs
    /// no swaps.
    CAROM_BROAD_SPACETIME_SAP,
    /// Uniform grid over `carom_broad_desc.world`; see `carom_grid_strategy`.
    /// Boxes outside the world land in the border cells (slower, never
    /// dropped); boxes larger than a few cells are kept in a separate list.
    CAROM_BROAD_GRID,
    /// Spatial hash: the grid over an unbounded world, each occupied cell
    /// (i, j, k) hashed to a bucket (stb_ds); a box goes to the cell of its
    /// centre and neighbours are found by hashing (i +- 1, j +- 1, k +- 1),
    /// once per new cell. About 2x the grid's time in a bounded world; wins
    /// for clustered or unbounded content. Its map grows as new cells are
    /// visited (an update may then allocate), and a failed growth ends in
    /// the assert hook, as stb_ds cannot report it.
    CAROM_BROAD_HASH,
    /// Dynamic AABB tree over fat boxes (each stored box grown by a margin,
    /// so a small move does not touch the tree), with balancing rotations on
    /// insertion: the default broad phase of Box2D, Bullet, Jolt and FCL.
    CAROM_BROAD_TREE,
    /// Every pair tested. O(n^2): a reference for small counts.
    CAROM_BROAD_BRUTE_FORCE,
} carom_broad_kind;

/// The two grid strategies of the seed slides.
typedef enum carom_grid_strategy {
    /// Each box goes into every cell it overlaps; two boxes meet only if
    /// they share a cell, and a pair sharing several cells is reported in
    /// the cell holding the low corner of their intersection only. A crowded
    /// cell of much smaller boxes gets a finer grid of its own (up to four
    /// levels), so it copes with mixed sizes and clustered content. The
    /// default.
    CAROM_GRID_ALL_CELLS = 0,
    /// Each box goes into the cell holding its centre; the neighbours are
    /// visited. Each box is stored once (about 40% less memory). Boxes
    /// larger than a cell go to the big list. As fast as all-cells at 10k
    /// boxes of one size and faster from 100k; slow when the world is much
    /// larger than its content (clusters), which it does not subdivide.
    CAROM_GRID_CENTRE_CELL,
} carom_grid_strategy;

/// How to build a broad phase. `{0}` is valid: incremental SAP.
typedef struct carom_broad_desc {
    carom_broad_kind kind;
    /// Grid only: the world box. Must be valid with a positive size on every
    /// axis for `CAROM_BROAD_GRID`.
    carom_aabb world;
    /// Grid and hash: the cell edge length. 0 chooses it at each update
    /// from the boxes (a box's size is its largest extent): for all-cells at
    /// least the mean size, then adjusted towards about 48 boxes sharing
    /// each entry's cell, from the occupancy of the previous update, by at
    /// most 2x per update; for centre-cell and the hash at least the size
    /// of the largest box once the largest 1/64 are set aside (those go to
    /// the big list), then adjusted towards 1.5 boxes per occupied cell (the
    /// hash keeps its cells while that stays within 1.25x). The grid caps
    /// its cells at `CAROM_GRID_MAX_CELLS`, growing the cells to fit.
    float cell_size;
    carom_grid_strategy grid_strategy;
    /// Tree only: how much each stored box is grown on every side, relative
    /// to its size (0 means the default, 0.1; negative is invalid).
    float tree_margin;
    /// Expected proxy count, to size arrays up front (0: grow as needed).
    int capacity_hint;
} carom_broad_desc;

/// The most cells a grid allocates (2^22).
#define CAROM_GRID_MAX_CELLS (1 << 22)

/// The most proxies one broad phase holds (2^26, 67 million).
#define CAROM_BROAD_MAX_PROXIES (1 << 26)

/// One pair of proxies, by id, with a < b.
typedef struct carom_broad_pair {
    int a;
    int b;
    /// In the pair list and begin events: the first time in [0, 1] at which
    /// the moving boxes overlap. In end events: the time the pair had in the
    /// previous step's list.
    float time;
} carom_broad_pair;

/// A read-only view of pairs owned by the broad phase. Valid until the next
/// call that changes the broad phase (insert, move, remove, update,
/// destroy).
typedef struct carom_broad_pairs {
    const carom_broad_pair* items;
    int count;
} carom_broad_pairs;

/// What one update did.
typedef struct carom_broad_stats {
    int proxies;     ///< proxies in the broad phase
    int moved;       ///< proxies inserted or moved since the previous update
    int pairs;       ///< pairs in the step's list
    int candidates;  ///< pairs the algorithm examined exactly (pairs + false pairs)
    long long swaps; ///< SAP kinds: endpoint swaps made
    bool rebuilt;    ///< SAP kinds: this step re-sorted everything instead of swapping;
                     ///< grid: it filled and sorted its cells anew, where it can
                     ///< otherwise refill last step's (centre cell, same layout) or
                     ///< reuse them (few boxes changed)
    size_t bytes;    ///< memory the broad phase owns after the update
} carom_broad_stats;

/// A broad phase. Create with `carom_broad_create`, free with
/// `carom_broad_destroy`. The fields are read-only for the caller.
typedef struct carom_broad {
    carom_broad_kind kind;
    int proxy_count;
    struct carom_broad_data* data; ///< private
} carom_broad;

/// Creates an empty broad phase of the kind in `desc` (NULL: defaults).
///
/// Returns `CAROM_OK`; `CAROM_ERR_INVALID_ARG` for a NULL `out`, an unknown
/// kind or grid strategy, a grid without a valid world of positive size, a
/// negative, NaN or infinite cell size or tree margin, or a negative
/// capacity hint; `CAROM_ERR_OUT_OF_MEMORY`. On failure `*out` is zeroed.
CAROM_API carom_status carom_broad_create(const carom_broad_desc* desc, carom_broad* out);

/// Frees everything the broad phase owns and zeroes it. NULL and zeroed
/// broad phases are accepted.
CAROM_API void carom_broad_destroy(carom_broad* broad);

/// Adds a proxy.
///
/// Returns `CAROM_OK`; `CAROM_ERR_INVALID_ARG` when `broad` is NULL or not
/// created, or the box is NaN, infinite, inverted (min > max) or beyond
/// `CAROM_MAX_COORDINATE`, or the displacement is NaN, infinite or beyond
/// it; `CAROM_ERR_DUPLICATE_ID` when `id` is already present;
/// `CAROM_ERR_CAPACITY` beyond `CAROM_BROAD_MAX_PROXIES`;
/// `CAROM_ERR_OUT_OF_MEMORY`. On failure nothing changes.
CAROM_API carom_status carom_broad_insert(carom_broad* broad, int id, carom_aabb box,
                                          vec3s displacement);

/// Changes a proxy's box and displacement. Same statuses as insert, with
/// `CAROM_ERR_UNKNOWN_ID` when `id` is not present. On failure nothing
/// changes.
CAROM_API carom_status carom_broad_move(carom_broad* broad, int id, carom_aabb box,
                                        vec3s displacement);

/// Moves `count` proxies at once: proxy `ids[i]` gets `boxes[i]` and
/// `displacements[i]` (all zero when `displacements` is NULL), exactly as
/// `carom_broad_move` would, in order. The arrays are read, not kept. Use it
/// when most proxies move every step: it saves most of the per-call cost of
/// one `carom_broad_move` per proxy.
///
/// Returns `CAROM_OK` when every move is applied. Otherwise the status of
/// the first that fails (`CAROM_ERR_INVALID_ARG` for its box or
/// displacement, `CAROM_ERR_UNKNOWN_ID`): the moves before it are applied,
/// it and those after are not. `*applied` (when `applied` is not NULL) gets
/// how many were applied. `CAROM_ERR_INVALID_ARG`, with nothing applied,
/// when `broad` is NULL or not created, `count` is negative, or `ids` or
/// `boxes` is NULL with `count` positive.
CAROM_API carom_status carom_broad_move_many(carom_broad* broad, int count, const int* ids,
                                             const carom_aabb* boxes,
                                             const vec3s* displacements, int* applied);

/// Removes a proxy; its pairs end at the next update.
///
/// Returns `CAROM_OK`; `CAROM_ERR_INVALID_ARG` when `broad` is NULL or not
/// created; `CAROM_ERR_UNKNOWN_ID` when `id` is not present (nothing
/// changes).
CAROM_API carom_status carom_broad_remove(carom_broad* broad, int id);

/// True when a proxy with this id is present.
CAROM_API bool carom_broad_contains(const carom_broad* broad, int id);

/// Computes the step's pair list from the proxies as they are now, and
/// keeps the previous step's list for the events (carom_broad_begin_events).
/// `stats` may be NULL.
///
/// Returns `CAROM_OK`; `CAROM_ERR_INVALID_ARG` when `broad` is NULL or not
/// created; `CAROM_ERR_OUT_OF_MEMORY` (the previous pair list is kept, the
/// events are empty, and the next update recomputes what it must). The
/// spatial hash's map growth that cannot get memory (stb_ds cannot report
/// it) ends in the assert hook.
CAROM_API carom_status carom_broad_update(carom_broad* broad, carom_broad_stats* stats);

/// The pair list of the last update (empty before the first).
CAROM_API carom_broad_pairs carom_broad_pair_list(const carom_broad* broad);

/// The begin events of the last update: the pairs of its list missing from
/// the list of the successful update before it (empty before the first
/// update, and after an update that failed). The first call of this or
/// `carom_broad_end_events` after an update derives both from the two lists
/// (one merge of them, no allocation: the update reserved the room), later
/// calls return them as they are. The view is valid until the next call
/// that changes the broad phase, like the pair list's.
CAROM_API carom_broad_pairs carom_broad_begin_events(const carom_broad* broad);

/// The end events of the last update: the pairs of the list of the
/// successful update before it missing from its list, with the time they
/// had there. Derived as `carom_broad_begin_events` says.
CAROM_API carom_broad_pairs carom_broad_end_events(const carom_broad* broad);

/// Bytes of memory the broad phase owns now.
CAROM_API size_t carom_broad_memory(const carom_broad* broad);

/// The exact first time in [0, 1] at which two boxes moving linearly
/// overlap (touching counts), after Levine: on each axis the interval of
/// times where the projections overlap, intersected over the three axes.
/// Returns that time, or -1 when they never overlap during the step (also
/// for invalid input). This is the test every discrete kind applies to its
/// candidate pairs.
CAROM_API float carom_aabb_sweep_time(carom_aabb a, vec3s displacement_a, carom_aabb b,
                                      vec3s displacement_b);

CAROM_EXTERN_C_END

#endif
