// AABB tree build (longest-axis midpoint split, or binned SAH) and refit,
// plus the split shared with the boxtree.
#include "mid/mesh_internal.h"

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

#define SAH_BINS 16

static float half_area(vec3s min, vec3s max) {
    vec3s e = v3_sub(max, min);
    return e.x * e.y + e.y * e.z + e.z * e.x;
}

static int sah_partition(mid_build* b, int first, int count, int depth) {
    vec3s cmin = b->centroid[b->order[first]], cmax = cmin;
    for (int i = first + 1; i < first + count; ++i) {
        cmin = v3_min(cmin, b->centroid[b->order[i]]);
        cmax = v3_max(cmax, b->centroid[b->order[i]]);
    }
    int axis = mid_longest_axis(v3_sub(cmax, cmin));
    float lo = cmin.raw[axis], extent = cmax.raw[axis] - lo;
    if (depth >= MID_MEDIAN_DEPTH || !(extent > 0.0f)) return median_split(b, first, count, axis);

    int bin_count[SAH_BINS] = {0};
    vec3s bin_min[SAH_BINS], bin_max[SAH_BINS];
    float scale = (float)SAH_BINS / extent;
    for (int i = first; i < first + count; ++i) {
        int t = b->order[i];
        int k = (int)((b->centroid[t].raw[axis] - lo) * scale);
        k = k < 0 ? 0 : (k >= SAH_BINS ? SAH_BINS - 1 : k);
        if (bin_count[k]++ == 0) {
            bin_min[k] = b->tri_min[t];
            bin_max[k] = b->tri_max[t];
        } else {
            bin_min[k] = v3_min(bin_min[k], b->tri_min[t]);
            bin_max[k] = v3_max(bin_max[k], b->tri_max[t]);
        }
    }
    // Sweep from the right to get the cost of every right part, then from the
    // left choosing the cheapest plane between bins.
    float right_cost[SAH_BINS];
    vec3s rmin = v3(INFINITY, INFINITY, INFINITY), rmax = v3(-INFINITY, -INFINITY, -INFINITY);
    int n = 0;
    for (int k = SAH_BINS - 1; k > 0; --k) {
        if (bin_count[k]) {
            rmin = v3_min(rmin, bin_min[k]);
            rmax = v3_max(rmax, bin_max[k]);
            n += bin_count[k];
        }
        right_cost[k] = n ? half_area(rmin, rmax) * (float)n : 0.0f;
    }
    vec3s lmin = v3(INFINITY, INFINITY, INFINITY), lmax = v3(-INFINITY, -INFINITY, -INFINITY);
    int left_n = 0, best_k = -1;
    float best = INFINITY;
    for (int k = 0; k < SAH_BINS - 1; ++k) {
        if (bin_count[k]) {
            lmin = v3_min(lmin, bin_min[k]);
            lmax = v3_max(lmax, bin_max[k]);
            left_n += bin_count[k];
        }
        if (left_n == 0 || left_n == count) continue;
        float cost = half_area(lmin, lmax) * (float)left_n + right_cost[k + 1];
        if (cost < best) {
            best = cost;
            best_k = k;
        }
    }
    if (best_k < 0) return median_split(b, first, count, axis);
    // Partition by bin index, computed exactly as when binning.
    int32_t* o = b->order + first;
    int i = 0, j = count - 1;
    while (i <= j) {
        int k = (int)((b->centroid[o[i]].raw[axis] - lo) * scale);
        k = k < 0 ? 0 : (k >= SAH_BINS ? SAH_BINS - 1 : k);
        if (k <= best_k) {
            ++i;
        } else {
            int32_t tmp = o[i];
            o[i] = o[j];
            o[j--] = tmp;
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
    bool sah;
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
    mid_range_box(ab->b, first, count, &min, &max);
    store_box(n, min, max);
    if (depth > ab->depth) ab->depth = depth;
    if (count <= ab->leaf_size) {
        n->first = first;
        n->count = count;
        return;
    }
    int left = ab->sah ? sah_partition(ab->b, first, count, depth)
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
    if (!nodes) return CAROM_ERR_OUT_OF_MEMORY;
    aabb_builder ab = {b, nodes, 1, leaf, 0, sah};
    build_node(&ab, 0, 0, b->count, 0);
    mesh->data->root_min = v3(nodes[0].min[0], nodes[0].min[1], nodes[0].min[2]);
    mesh->data->root_max = v3(nodes[0].max[0], nodes[0].max[1], nodes[0].max[2]);
    mesh->depth = ab.depth;
    carom_status status = mid_wide_build(mesh, nodes, ab.used);
    carom_free(nodes);
    return status;
}
