// Triangles as the tree builds carry them: each one's box, in tree order,
// moved with the partitions (boxtree.c, and the SAH split of aabb_tree.c).
#ifndef CAROM_MID_BUILD_REC_H
#define CAROM_MID_BUILD_REC_H

#include "mid/walk.h"

static inline f4 lanes3(f4 v) { return (f4)((i4)v & MID_LANES3); }

// A triangle during the build: its box, and in lo's lane 3 the bits of its
// caller's index (hi's lane 3 is zero, so boxes gathered from records need
// only lo masked). Sixteen-byte lanes make a box two loads and a min and
// max; carrying the box itself, in tree order, reads the ranges front to
// back where an index would fetch each box from wherever the caller put it.
typedef struct box_rec {
    f4 lo, hi;
} box_rec;

static inline int32_t rec_id(const box_rec* r) { return ((const i4)r->lo)[3]; }

static inline void recs_box(const box_rec* r, int count, f4* lo, f4* hi) {
    f4 l = r[0].lo, h = r[0].hi;
    for (int i = 1; i < count; ++i) {
        l = f4_min(l, r[i].lo);
        h = f4_max(h, r[i].hi);
    }
    *lo = lanes3(l);
    *hi = h;
}

// The centroid on `axis`, exactly as prepare_build rounds it.
static inline float rec_centroid(const box_rec* r, int axis) {
    return (((const float*)&r->lo)[axis] + ((const float*)&r->hi)[axis]) * 0.5f;
}

// The order of the AABB tree's split by count: by centroid on `axis`, then
// by caller index.
static inline bool rec_before(const box_rec* a, const box_rec* b, int axis) {
    float ca = rec_centroid(a, axis), cb = rec_centroid(b, axis);
    return ca < cb || (ca == cb && rec_id(a) < rec_id(b));
}

// Moves the `k` first records in rec_before's order to the front
// (quickselect, as aabb_tree.c's select_smallest on the order array). The order is strict,
// so which records end up in front does not depend on how they came.
static inline void mid_recs_select(box_rec* o, int count, int axis, int k) {
    int lo = 0, hi = count - 1;
    while (lo < hi) {
        box_rec pivot = o[lo + (hi - lo) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (rec_before(&o[i], &pivot, axis)) ++i;
            while (rec_before(&pivot, &o[j], axis)) --j;
            if (i <= j) {
                box_rec tmp = o[i];
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

#endif
