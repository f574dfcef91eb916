// A bench pose (peers.h) as carom takes it: the same floats, so carom and
// every peer start from identical inputs.
#ifndef CAROM_BENCH_POSE_XFORM_H
#define CAROM_BENCH_POSE_XFORM_H

#include <carom/carom.h>

#include "peers.h"

static inline carom_xform bench_pose_xform(const bench_pose* p)
{
    carom_xform xf;
    for (int k = 0; k < 3; k++) {
        xf.p.raw[k] = p->p[k];
    }
    for (int k = 0; k < 4; k++) {
        xf.q.raw[k] = p->q[k];
    }
    return xf;
}

#endif
