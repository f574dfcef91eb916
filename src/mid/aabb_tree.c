// AABB tree build (longest-axis midpoint split, or binned SAH) and refit,
// plus the split shared with the boxtree.
#include "mid/build_rec.h"

void mid_range_box(const mid_build* b, int first, int count, vec3s* min, vec3s* max) {
    vec3s lo = b->tri_min[b->order[first]], hi = b->tri_max[b->order[first]];
    for (int i = first + 1; i < first + count; ++i) {
        int t = b->order[i];
        lo = v3_min(lo, b->tri_min[t]);
        hi = v3_max(hi, b->tri_max[t]);
    }
    *min = lo;
    *max = hi;
}

// Moves the `k` smallest centroids on `axis` to the front of the range
// (quickselect; ties broken by caller index so the split is deterministic).
static void select_smallest(mid_build* b, int first, int count, int axis, int k) {
    int32_t* o = b->order + first;
    int lo = 0, hi = count - 1;
    while (lo < hi) {
        int32_t pivot = o[lo + (hi - lo) / 2];
        float pv = b->centroid[pivot].raw[axis];
        int i = lo, j = hi;
        while (i <= j) {
            while (b->centroid[o[i]].raw[axis] < pv ||
                   (b->centroid[o[i]].raw[axis] == pv && o[i] < pivot)) {
                ++i;
            }
            while (b->centroid[o[j]].raw[axis] > pv ||
                   (b->centroid[o[j]].raw[axis] == pv && o[j] > pivot)) {
                --j;
            }
            if (i <= j) {
                int32_t tmp = o[i];
                o[i++] = o[j];
                o[j--] = tmp;
            }
        }
        if (k <= j) {
            hi = j;
        } else if (k >= i) {
            lo = i;
        } else {
            break;
        }
    }
}

static int median_split(mid_build* b, int first, int count, int axis) {
    int half = count / 2;
    select_smallest(b, first, count, axis, half);
    return half;
}

// Triangles whose centroid is below `plane` on `axis` to the front; returns
// how many.
static int partition_at(mid_build* b, int first, int count, int axis, float plane) {
    int32_t* o = b->order + first;
    int i = 0, j = count - 1;
    while (i <= j) {
        if (b->centroid[o[i]].raw[axis] < plane) {
            ++i;
        } else {
            int32_t tmp = o[i];
            o[i] = o[j];
            o[j--] = tmp;
        }
    }
    return i;
}

int mid_partition(mid_build* b, int first, int count, vec3s box_min, vec3s box_max, int depth) {
    int axis = mid_longest_axis(v3_sub(box_max, box_min));
    if (depth < MID_MEDIAN_DEPTH) {
        // The slides' split: the plane halving the box's longest axis, each
        // triangle to the side of its centroid (its dominant side).
        float mid = 0.5f * (box_min.raw[axis] + box_max.raw[axis]);
        int left = partition_at(b, first, count, axis, mid);
        if (left > 0 && left < count) return left;
    }
    // All centroids on one side (long thin triangles spanning the box, or
    // duplicates), or too deep: split by count.
    return median_split(b, first, count, axis);
}

// --- binned SAH ----------------------------------------------------------------
// The SAH build bins all three axes, not only the longest, for better
// splits. It carries the triangles as the boxtree's build does (box_rec:
// each box in tree order, moved with the partition), so that every pass
// over a node's range reads memory in order, four lanes at a time; that
// pays for the two extra axes, against reading the caller-ordered arrays
// through the order array. The shared arrays are freed once copied.

#define SAH_BINS 16

// Half the area of the box lo..hi (lane 3 ignored).
static inline float half_area4(f4 lo, f4 hi) {
    f4 e = hi - lo;
    return e[0] * e[1] + e[1] * e[2] + e[2] * e[0];
}

// A record's centroid, lane 3 zero: exactly prepare_build's. The index
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
        f4 extent = cmax - cmin;
        mid_recs_select(it, count, mid_longest_axis(v3(extent[0], extent[1], extent[2])),
                        count / 2);
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
    mid_build* b;
    mid_aabb_node* nodes;
    int used;
    int leaf_size;
    int depth;
    box_rec* items;  // the SAH build's copy; NULL for the midpoint split
} aabb_builder;

static void store_box(mid_aabb_node* n, vec3s min, vec3s max) {
    for (int k = 0; k < 3; ++k) {
        n->min[k] = min.raw[k];
        n->max[k] = max.raw[k];
    }
}

static void build_node(aabb_builder* ab, int index, int first, int count, int depth) {
    mid_aabb_node* n = &ab->nodes[index];
    vec3s min, max;
    if (ab->items) {
        f4 lo, hi;
        recs_box(ab->items + first, count, &lo, &hi);
        min = f4_to(lo);
        max = f4_to(hi);
    } else {
        mid_range_box(ab->b, first, count, &min, &max);
    }
    store_box(n, min, max);
    if (depth > ab->depth) ab->depth = depth;
    if (count <= ab->leaf_size) {
        n->first = first;
        n->count = count;
        return;
    }
    int left = ab->items ? sah_split(ab->items + first, count, depth)
                         : mid_partition(ab->b, first, count, min, max, depth);
    int child = ab->used;
    ab->used += 2;
    n->first = child;
    n->count = 0;
    build_node(ab, child, first, left, depth + 1);
    build_node(ab, child + 1, first + left, count - left, depth + 1);
}

carom_status mid_aabb_tree_build(carom_mesh* mesh, mid_build* b, bool sah) {
    int leaf = mesh->data->leaf_size;
    // A binary tree whose leaves hold at least one triangle has at most
    // 2n - 1 nodes. They are scratch: the mesh keeps their wide collapse.
    size_t cap = 2 * (size_t)b->count - 1;
    mid_aabb_node* nodes = carom_alloc(cap * sizeof *nodes);
    box_rec* items = sah ? carom_alloc((size_t)b->count * sizeof *items) : NULL;
    if (!nodes || (sah && !items)) {
        carom_free(nodes);
        carom_free(items);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    for (int i = 0; sah && i < b->count; ++i) {
        int t = b->order[i];
        const i4 id = {0, 0, 0, t};
        items[i] = (box_rec){(f4)((i4)f4_from(b->tri_min[t]) | id), f4_from(b->tri_max[t])};
    }
    if (sah) {  // copied: the build's peak memory need not hold both
        carom_free(b->centroid);
        carom_free(b->tri_min);
        carom_free(b->tri_max);
        b->centroid = b->tri_min = b->tri_max = NULL;
    }
    aabb_builder ab = {b, nodes, 1, leaf, 0, items};
    build_node(&ab, 0, 0, b->count, 0);
    for (int i = 0; sah && i < b->count; ++i) b->order[i] = rec_id(&items[i]);
    carom_free(items);
    mesh->data->root_min = v3(nodes[0].min[0], nodes[0].min[1], nodes[0].min[2]);
    mesh->data->root_max = v3(nodes[0].max[0], nodes[0].max[1], nodes[0].max[2]);
    mesh->depth = ab.depth;
    carom_status status = mid_wide_build(mesh, nodes, ab.used);
    carom_free(nodes);
    return status;
}
