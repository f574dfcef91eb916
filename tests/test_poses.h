// Poses the GJK tests share: a translation, and a random pose from the
// reference's deterministic generator (uniform rotation).
#ifndef CAROM_TEST_POSES_H
#define CAROM_TEST_POSES_H

#include "carom/carom.h"
#include "reference.h"

static inline carom_xform at(float x, float y, float z) {
    carom_xform xf = carom_xform_identity();
    xf.p = (vec3s){{x, y, z}};
    return xf;
}

static inline carom_xform random_pose(ref_rng* rng, float spread) {
    double q[4];
    ref_rng_unit_quat(rng, q);
    carom_xform xf = {{{(float)ref_rng_uniform(rng, -spread, spread), (float)ref_rng_uniform(rng, -spread, spread),
                        (float)ref_rng_uniform(rng, -spread, spread)}},
                      {{(float)q[0], (float)q[1], (float)q[2], (float)q[3]}}};
    return xf;
}

#endif
