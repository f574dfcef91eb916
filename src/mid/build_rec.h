// Triangles as the tree builds carry them: each one's box, in tree order,
// moved with the partitions (boxtree.c and aabb_tree.c), and the split both
// trees make at the middle of the longest axis.
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

// Caller's triangle t as a record, its box from the mesh's copy of the
// vertices (which has room for four-float loads). The loads' fourth lanes
// (the next vertex's x) are dropped once, from the box.
static inline box_rec mid_rec_of(const struct carom_mesh_data* d,
                                 const int32_t (*triangles)[3], int32_t t) {
    const int32_t* v = triangles[t];
    f4 a, b, c;
    memcpy(&a, d->vertices[v[0]].raw, sizeof a);
    memcpy(&b, d->vertices[v[1]].raw, sizeof b);
    memcpy(&c, d->vertices[v[2]].raw, sizeof c);
    const i4 id = {0, 0, 0, t};
    box_rec r = {(f4)(((i4)f4_min(a, f4_min(b, c)) & MID_LANES3) | id),
                 lanes3(f4_max(a, f4_max(b, c)))};
    return r;
}

static inline void recs_box(const box_rec* r, int count, f4* lo, f4* hi) {
    f4 l = r[0].lo, h = r[0].hi;
    for (int i = 1; i < count; ++i) {
        l = f4_min(l, r[i].lo);
        h = f4_max(h, r[i].hi);
    }
    *lo = lanes3(l);
    *hi = h;
}

// A build's start: every triangle as a record, in caller order, and their
// box (lo..hi), which is the root's.
static inline void mid_recs_start(struct carom_mesh_data* d, const mid_build* b, box_rec* recs,
                                  f4* lo, f4* hi) {
    for (int t = 0; t < b->count; ++t) recs[t] = mid_rec_of(d, b->triangles, t);
    recs_box(recs, b->count, lo, hi);
    d->root_min = f4_to(*lo);
    d->root_max = f4_to(*hi);
}

// The centroid of the box, not of the corners (long thin triangles then go
// to the side most of their box is on), on `axis`.
static inline float rec_centroid(const box_rec* r, int axis) {
    return (((const float*)&r->lo)[axis] + ((const float*)&r->hi)[axis]) * 0.5f;
}

// The order of the split by count: by centroid on `axis`, then by caller
// index.
static inline bool rec_before(const box_rec* a, const box_rec* b, int axis) {
    float ca = rec_centroid(a, axis), cb = rec_centroid(b, axis);
    return ca < cb || (ca == cb && rec_id(a) < rec_id(b));
}

// Moves the `k` first records in rec_before's order to the front
// (quickselect). The order is strict, so which records end up in front
// does not depend on how they came.
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

static inline void rec_grow(f4* lo, f4* hi, const box_rec* r) {
    *lo = f4_min(*lo, r->lo);
    *hi = f4_max(*hi, r->hi);
}

// The axis a node of box tlo..thi splits on: its longest, ties to the
// lower axis.
static inline int mid_split_axis(f4 tlo, f4 thi) {
    f4 e = thi - tlo;
    if (e[0] >= e[1] && e[0] >= e[2]) return 0;
    return e[1] >= e[2] ? 1 : 2;
}

// The slides' split of records [0, count) (count > 1), whose box is
// tlo..thi: at the middle of its longest axis, each triangle to the side
// of its centroid (its dominant side), left ones to the front; returns how
// many, and writes the children's true boxes to kid (left lo, hi, right lo,
// hi). All centroids on one side (long thin triangles spanning the box, or
// duplicates), or a node past MID_MEDIAN_DEPTH, split by count instead.
// Which triangles go left depends only on which the range holds, not on
// their order. The partition's own pass gathers the children's boxes, and
// only misplaced pairs move.
static inline int mid_recs_split(box_rec* r, int count, f4 tlo, f4 thi, int depth, f4 kid[4]) {
    int axis = mid_split_axis(tlo, thi);
    if (depth < MID_MEDIAN_DEPTH) {
        float mid = 0.5f * (tlo[axis] + thi[axis]);
        const f4 inf = {INFINITY, INFINITY, INFINITY, INFINITY};
        f4 llo = inf, lhi = -inf, rlo = inf, rhi = -inf;
        // Hoare's scheme: each scan stops at the first record that belongs
        // to the other side; after the first swap, the swapped pair stops
        // the scans, so they need no bounds.
        box_rec *i = r, *j = r + count - 1;
        while (i <= j && rec_centroid(i, axis) < mid) rec_grow(&llo, &lhi, i++);
        if (i <= j) {
            while (j > i && !(rec_centroid(j, axis) < mid)) rec_grow(&rlo, &rhi, j--);
            if (j == i) {
                rec_grow(&rlo, &rhi, i);
            } else {
                for (;;) {
                    // *i goes right and *j left.
                    rec_grow(&rlo, &rhi, i);
                    rec_grow(&llo, &lhi, j);
                    box_rec t = *i;
                    *i++ = *j;
                    *j-- = t;
                    while (rec_centroid(i, axis) < mid) rec_grow(&llo, &lhi, i++);
                    while (!(rec_centroid(j, axis) < mid)) rec_grow(&rlo, &rhi, j--);
                    if (i > j) break;
                }
            }
        }
        int left = (int)(i - r);
        if (left > 0 && left < count) {
            kid[0] = lanes3(llo), kid[1] = lhi, kid[2] = lanes3(rlo), kid[3] = rhi;
            return left;
        }
    }
    int left = count / 2;
    mid_recs_select(r, count, axis, left);
    recs_box(r, left, &kid[0], &kid[1]);
    recs_box(r + left, count - left, &kid[2], &kid[3]);
    return left;
}

#endif
