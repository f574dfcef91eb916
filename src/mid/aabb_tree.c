// AABB tree build: the longest axis's midpoint split (mid_recs_split, which
// the boxtree shares) or binned SAH.
#include "mid/build_rec.h"

// --- binned SAH ----------------------------------------------------------------
// The SAH build bins all three axes, not only the longest, for better
// splits. Reading the records in tree order, four lanes at a time, pays for
// the two extra axes.

#define SAH_BINS 16

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

// The bounds of the records' centroids (sah_centroid).
static void centroid_bounds(const box_rec* r, int count, f4* cmin, f4* cmax) {
    f4 lo = sah_centroid(&r[0]), hi = lo;
    for (int i = 1; i < count; ++i) {
        f4 c = sah_centroid(&r[i]);
        lo = f4_min(lo, c);
        hi = f4_max(hi, c);
    }
    *cmin = lo;
    *cmax = hi;
}

// A range of records as the SAH build splits it: where it starts, how many,
// and its centroids' bounds, which the split of its parent gathered.
typedef struct sah_range {
    box_rec* recs;
    int count;
    f4 cmin, cmax;
} sah_range;

// Each axis's bins: how many records' centroids each holds, and the box of
// those records.
typedef struct sah_bins {
    f4 min[3][SAH_BINS], max[3][SAH_BINS];  // [axis][bin]
    int count[3][SAH_BINS];
} sah_bins;

// Half the area of four boxes lo..hi, lane by lane (rows x, y, z).
static inline f4 half_areas(const f4 lo[3], const f4 hi[3]) {
    f4 ex = hi[0] - lo[0], ey = hi[1] - lo[1], ez = hi[2] - lo[2];
    return ex * ey + ey * ez + ez * ex;
}

// The cheapest plane over the bins of all three axes at once, an axis a
// lane (bins of `count` records; an axis with scale 0 has none): sweeps
// from the right for the cost of every right part, then from the left.
// Returns the last bin of the left side and writes its axis to *axis, -1
// for none. The costs are those of one axis at a time, bit for bit, and
// so is the choice: ties keep the lowest axis, and on it the lowest bin.
// Costs tie at zero only for boxes of no area, which only zero-area
// triangles (never reported) have, and the depth stays bounded anyway.
static int sah_best_plane(const sah_bins* bins, int count, f4 scale, int* axis) {
    f4 lo[SAH_BINS][4], hi[SAH_BINS][4];  // rows x, y, z (and w, unused)
    i4 n_in[SAH_BINS];
    for (int bin = 0; bin < SAH_BINS; ++bin) {
        f4_transpose4(bins->min[0][bin], bins->min[1][bin], bins->min[2][bin], f4_zero(), lo[bin]);
        f4_transpose4(bins->max[0][bin], bins->max[1][bin], bins->max[2][bin], f4_zero(), hi[bin]);
        n_in[bin] = (i4){bins->count[0][bin], bins->count[1][bin], bins->count[2][bin], 0};
    }
    const f4 inf = {INFINITY, INFINITY, INFINITY, INFINITY}, zero = f4_zero();
    const i4 none = {0, 0, 0, 0};
    f4 right_cost[SAH_BINS];
    f4 rlo[3] = {inf, inf, inf}, rhi[3] = {-inf, -inf, -inf};
    i4 n = none;
    for (int bin = SAH_BINS - 1; bin > 0; --bin) {
        for (int k = 0; k < 3; ++k) {
            rlo[k] = f4_min(rlo[k], lo[bin][k]);
            rhi[k] = f4_max(rhi[k], hi[bin][k]);
        }
        n += n_in[bin];
        right_cost[bin] = f4_select(n != none, half_areas(rlo, rhi) * __builtin_convertvector(n, f4),
                                    zero);
    }
    const i4 binned = scale > zero, all = {count, count, count, count};
    f4 llo[3] = {inf, inf, inf}, lhi[3] = {-inf, -inf, -inf};
    i4 left_n = none;
    f4 best = inf;
    i4 best_bin = none;
    for (int bin = 0; bin < SAH_BINS - 1; ++bin) {
        for (int k = 0; k < 3; ++k) {
            llo[k] = f4_min(llo[k], lo[bin][k]);
            lhi[k] = f4_max(lhi[k], hi[bin][k]);
        }
        left_n += n_in[bin];
        f4 cost = half_areas(llo, lhi) * __builtin_convertvector(left_n, f4) + right_cost[bin + 1];
        i4 better = binned & (left_n != none) & (left_n != all) & (cost < best);
        best = f4_select(better, cost, best);
        best_bin = (best_bin & ~better) | ((i4){bin, bin, bin, bin} & better);
    }
    *axis = -1;
    float least = INFINITY;
    for (int k = 0; k < 3; ++k) {
        if (best[k] < least) {
            least = best[k];
            *axis = k;
        }
    }
    return *axis < 0 ? 0 : best_bin[*axis];
}

// Splits records [0, count) (count > 1) at the cheapest plane between bins
// on any axis; writes the two sides (left first) with their centroids'
// bounds, and the sides' boxes to kid (left lo, hi, right lo, hi). The
// boxes come from the bins, whose union is each side (min and max are
// exact: a bound of zero may only come out with the other sign), and the
// centroids' bounds from the partition, which meets every record once:
// neither takes a pass of its own.
static void sah_split(const sah_range* in, int depth, sah_range out[2], f4 kid[4]) {
    box_rec* it = in->recs;
    const int count = in->count;
    const f4 cmin = in->cmin, cmax = in->cmax;
    f4 scale = f4_zero();
    bool any = false;
    for (int k = 0; k < 3; ++k) {
        float extent = cmax[k] - cmin[k];
        float s = extent > 0.0f ? (float)SAH_BINS / extent : 0.0f;
        scale[k] = isfinite(s) ? s : 0.0f;
        any |= scale[k] > 0.0f;
    }
    int best_axis = -1, best_bin = 0;
    sah_bins bins;
    const f4 empty_min = {INFINITY, INFINITY, INFINITY, 0}, empty_max = -empty_min;
    if (depth < MID_MEDIAN_DEPTH && any) {
        for (int axis = 0; axis < 3; ++axis) {
            for (int bin = 0; bin < SAH_BINS; ++bin) {
                bins.min[axis][bin] = empty_min;
                bins.max[axis][bin] = empty_max;
                bins.count[axis][bin] = 0;
            }
        }
        for (int i = 0; i < count; ++i) {
            const i4 b = sah_bins_of(sah_centroid(&it[i]), cmin, scale);
            const f4 lo = lanes3(it[i].lo), hi = it[i].hi;
            for (int axis = 0; axis < 3; ++axis) {
                ++bins.count[axis][b[axis]];
                bins.min[axis][b[axis]] = f4_min(bins.min[axis][b[axis]], lo);
                bins.max[axis][b[axis]] = f4_max(bins.max[axis][b[axis]], hi);
            }
        }
        best_bin = sah_best_plane(&bins, count, scale, &best_axis);
    }
    // No plane: too deep, or every centroid at one point (an axis with a
    // scale has centroids in its first and last bins, so some plane splits
    // there, at a finite cost: CAROM_MAX_COORDINATE keeps the costs far
    // from overflowing). The median split by count, which bounds the depth.
    if (best_axis < 0) {
        const int left = count / 2;
        mid_recs_select(it, count, mid_split_axis(cmin, cmax), left);
        out[0].recs = it;
        out[0].count = left;
        out[1].recs = it + left;
        out[1].count = count - left;
        for (int side = 0; side < 2; ++side) {
            recs_box(out[side].recs, out[side].count, &kid[2 * side], &kid[2 * side + 1]);
            centroid_bounds(out[side].recs, out[side].count, &out[side].cmin, &out[side].cmax);
        }
        return;
    }
    kid[0] = kid[2] = empty_min;
    kid[1] = kid[3] = empty_max;
    for (int bin = 0; bin < SAH_BINS; ++bin) {
        const int side = bin > best_bin;
        kid[2 * side] = f4_min(kid[2 * side], bins.min[best_axis][bin]);
        kid[2 * side + 1] = f4_max(kid[2 * side + 1], bins.max[best_axis][bin]);
    }
    const f4 inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    f4 lc_min = inf, lc_max = -inf, rc_min = inf, rc_max = -inf;
    int i = 0, j = count - 1;
    while (i <= j) {
        const f4 c = sah_centroid(&it[i]);
        if (sah_bins_of(c, cmin, scale)[best_axis] <= best_bin) {
            lc_min = f4_min(lc_min, c);
            lc_max = f4_max(lc_max, c);
            ++i;
        } else {
            rc_min = f4_min(rc_min, c);
            rc_max = f4_max(rc_max, c);
            box_rec tmp = it[i];
            it[i] = it[j];
            it[j--] = tmp;
        }
    }
    out[0] = (sah_range){it, i, lc_min, lc_max};
    out[1] = (sah_range){it + i, count - i, rc_min, rc_max};
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
// lo..hi; `centroids` gives the SAH build their centroids' bounds.
static void build_node(aabb_builder* ab, int index, int first, int count, int depth, f4 lo,
                       f4 hi, const f4 centroids[2]) {
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
    f4 kid_centroids[2][2] = {{f4_zero(), f4_zero()}, {f4_zero(), f4_zero()}};
    int left;
    if (ab->sah) {
        sah_range range = {r, count, centroids[0], centroids[1]}, sides[2];
        sah_split(&range, depth, sides, kid);
        left = sides[0].count;
        for (int side = 0; side < 2; ++side) {
            kid_centroids[side][0] = sides[side].cmin;
            kid_centroids[side][1] = sides[side].cmax;
        }
    } else {
        left = mid_recs_split(r, count, lo, hi, depth, kid);
    }
    int child = ab->used;
    ab->used += 2;
    n->first = child;
    n->count = 0;
    build_node(ab, child, first, left, depth + 1, kid[0], kid[1], kid_centroids[0]);
    build_node(ab, child + 1, first + left, count - left, depth + 1, kid[2], kid[3],
               kid_centroids[1]);
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
    f4 centroids[2] = {f4_zero(), f4_zero()};
    if (sah) centroid_bounds(recs, n, &centroids[0], &centroids[1]);
    build_node(&ab, 0, 0, n, 0, lo, hi, centroids);
    for (int i = 0; i < n; ++i) b->order[i] = rec_id(&recs[i]);
    carom_free(recs);
    mesh->depth = ab.depth;
    carom_status status = mid_wide_build(mesh, nodes, ab.used);
    carom_free(nodes);
    return status;
}
