// AABB tree build: the longest axis's midpoint split (mid_recs_split, which
// the boxtree shares) or binned SAH.
#include "mid/build_rec.h"

// --- binned SAH ----------------------------------------------------------------
// The SAH build bins all three axes, not only the longest, for better
// splits. Reading the records in tree order, four lanes at a time, pays for
// the two extra axes.

#define SAH_BINS 16

// Half the area of the box lo..hi (lane 3 ignored).
static inline float half_area4(f4 lo, f4 hi) {
    f4 e = hi - lo;
    return e[0] * e[1] + e[1] * e[2] + e[2] * e[0];
}

// A record's centroid, lane 3 zero: rec_centroid's on every axis. The index
// bits are masked before the arithmetic: as a float they are a denormal,
// which costs a microcode assist in every operation it enters.
static inline f4 sah_centroid(const box_rec* r) { return (lanes3(r->lo) + r->hi) * 0.5f; }

// The bins of a centroid on the three axes (lanes), the same in the binning
// and the partition, so that the partition splits exactly where the costs
// did. An axis whose extent is zero, or so small that SAH_BINS / extent
// overflows, has scale 0: every centroid in bin 0, and no plane is sought
// on it.
static inline i4 sah_bins_of(f4 c, f4 lo, f4 scale) {
    const f4 last = {SAH_BINS - 1, SAH_BINS - 1, SAH_BINS - 1, 0};
    f4 k = f4_min(f4_max((c - lo) * scale, f4_zero()), last);
    return __builtin_convertvector(k, i4);
}

// Splits records [0, count) (count > 1) at the cheapest plane between bins
// on any axis; returns how many go left.
static int sah_split(box_rec* it, int count, int depth) {
    f4 cmin = sah_centroid(&it[0]), cmax = cmin;
    for (int i = 1; i < count; ++i) {
        f4 c = sah_centroid(&it[i]);
        cmin = f4_min(cmin, c);
        cmax = f4_max(cmax, c);
    }
    f4 scale = f4_zero();
    bool any = false;
    for (int k = 0; k < 3; ++k) {
        float extent = cmax[k] - cmin[k];
        float s = extent > 0.0f ? (float)SAH_BINS / extent : 0.0f;
        scale[k] = isfinite(s) ? s : 0.0f;
        any |= scale[k] > 0.0f;
    }
    // Too deep, or every centroid at one point: the median split, by count,
    // which bounds the depth.
    if (depth >= MID_MEDIAN_DEPTH || !any) {
        mid_recs_select(it, count, mid_split_axis(cmin, cmax), count / 2);
        return count / 2;
    }

    int bin_count[3][SAH_BINS] = {{0}};
    f4 bin_min[3][SAH_BINS], bin_max[3][SAH_BINS];
    const f4 empty_min = {INFINITY, INFINITY, INFINITY, 0}, empty_max = -empty_min;
    for (int axis = 0; axis < 3; ++axis) {
        for (int bin = 0; bin < SAH_BINS; ++bin) {
            bin_min[axis][bin] = empty_min;
            bin_max[axis][bin] = empty_max;
        }
    }
    for (int i = 0; i < count; ++i) {
        const i4 bins = sah_bins_of(sah_centroid(&it[i]), cmin, scale);
        const f4 lo = lanes3(it[i].lo), hi = it[i].hi;
        for (int axis = 0; axis < 3; ++axis) {
            ++bin_count[axis][bins[axis]];
            bin_min[axis][bins[axis]] = f4_min(bin_min[axis][bins[axis]], lo);
            bin_max[axis][bins[axis]] = f4_max(bin_max[axis][bins[axis]], hi);
        }
    }
    // Per axis, sweep from the right for the cost of every right part, then
    // from the left choosing the cheapest plane. Ties keep the first plane:
    // costs tie at zero only for boxes of no area, which only zero-area
    // triangles (never reported) have, and the depth stays bounded anyway.
    int best_axis = -1, best_bin = 0;
    float best = INFINITY;
    for (int axis = 0; axis < 3; ++axis) {
        if (!(scale[axis] > 0.0f)) continue;
        float right_cost[SAH_BINS];
        f4 rmin = empty_min, rmax = empty_max;
        int n = 0;
        for (int bin = SAH_BINS - 1; bin > 0; --bin) {
            rmin = f4_min(rmin, bin_min[axis][bin]);
            rmax = f4_max(rmax, bin_max[axis][bin]);
            n += bin_count[axis][bin];
            right_cost[bin] = n ? half_area4(rmin, rmax) * (float)n : 0.0f;
        }
        f4 lmin = empty_min, lmax = empty_max;
        int left_n = 0;
        for (int bin = 0; bin < SAH_BINS - 1; ++bin) {
            lmin = f4_min(lmin, bin_min[axis][bin]);
            lmax = f4_max(lmax, bin_max[axis][bin]);
            left_n += bin_count[axis][bin];
            if (left_n == 0 || left_n == count) continue;
            float cost = half_area4(lmin, lmax) * (float)left_n + right_cost[bin + 1];
            if (cost < best) {
                best = cost;
                best_axis = axis;
                best_bin = bin;
            }
        }
    }
    // An axis with a scale has its lowest and highest centroids in bins 0
    // and SAH_BINS - 1, so some plane splits; this only guards that.
    if (best_axis < 0) return count / 2;
    int i = 0, j = count - 1;
    while (i <= j) {
        if (sah_bins_of(sah_centroid(&it[i]), cmin, scale)[best_axis] <= best_bin) {
            ++i;
        } else {
            box_rec tmp = it[i];
            it[i] = it[j];
            it[j--] = tmp;
        }
    }
    return i;
}

// --- build -------------------------------------------------------------------

typedef struct aabb_builder {
    mid_aabb_node* nodes;
    box_rec* recs;  // the triangles in tree order as far as it is settled
    int used;
    int leaf_size;
    int depth;
    bool sah;
} aabb_builder;

static void store_box(mid_aabb_node* n, f4 lo, f4 hi) {
    for (int k = 0; k < 3; ++k) {
        n->min[k] = lo[k];
        n->max[k] = hi[k];
    }
}

// Node `index` covers `count` triangles from `first`, whose true box is
// lo..hi.
static void build_node(aabb_builder* ab, int index, int first, int count, int depth, f4 lo,
                       f4 hi) {
    mid_aabb_node* n = &ab->nodes[index];
    store_box(n, lo, hi);
    if (depth > ab->depth) ab->depth = depth;
    if (count <= ab->leaf_size) {
        n->first = first;
        n->count = count;
        return;
    }
    box_rec* r = ab->recs + first;
    f4 kid[4];
    int left;
    if (ab->sah) {
        left = sah_split(r, count, depth);
        recs_box(r, left, &kid[0], &kid[1]);
        recs_box(r + left, count - left, &kid[2], &kid[3]);
    } else {
        left = mid_recs_split(r, count, lo, hi, depth, kid);
    }
    int child = ab->used;
    ab->used += 2;
    n->first = child;
    n->count = 0;
    build_node(ab, child, first, left, depth + 1, kid[0], kid[1]);
    build_node(ab, child + 1, first + left, count - left, depth + 1, kid[2], kid[3]);
}

carom_status mid_aabb_tree_build(carom_mesh* mesh, mid_build* b, bool sah) {
    int n = b->count;
    // A binary tree whose leaves hold at least one triangle has at most
    // 2n - 1 nodes. They are scratch: the mesh keeps their wide collapse.
    size_t cap = 2 * (size_t)n - 1;
    mid_aabb_node* nodes = carom_alloc(cap * sizeof *nodes);
    box_rec* recs = carom_alloc((size_t)n * sizeof *recs);
    if (!nodes || !recs) {
        carom_free(nodes);
        carom_free(recs);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    f4 lo, hi;
    mid_recs_start(mesh->data, b, recs, &lo, &hi);
    aabb_builder ab = {.nodes = nodes,
                       .recs = recs,
                       .used = 1,
                       .leaf_size = mesh->data->leaf_size,
                       .depth = 0,
                       .sah = sah};
    build_node(&ab, 0, 0, n, 0, lo, hi);
    for (int i = 0; i < n; ++i) b->order[i] = rec_id(&recs[i]);
    carom_free(recs);
    mesh->depth = ab.depth;
    carom_status status = mid_wide_build(mesh, nodes, ab.used);
    carom_free(nodes);
    return status;
}
