// The smallest useful carom program: the distance and closest points between
// a box and a capsule, and a boolean test that reuses a per-pair cache.
#include <stdio.h>
#include <string.h>

#include "carom/carom.h"

int main(void) {
    carom_shape box = carom_box((vec3s){{0.5f, 0.5f, 0.5f}});
    carom_shape capsule = carom_capsule((vec3s){{0, 0, -0.5f}}, (vec3s){{0, 0, 0.5f}}, 0.25f);
    carom_xform at_box = carom_xform_identity();
    carom_xform at_capsule = carom_xform_make((vec3s){{2, 0, 0}}, (vec3s){{0, 1, 0}}, 0.5f);

    carom_distance_result d = carom_gjk_distance(&box, at_box, &capsule, at_capsule, NULL);
    if (d.state != CAROM_DONE) return 1;
    printf("distance %.4f between (%.3f %.3f %.3f) and (%.3f %.3f %.3f)\n", (double)d.distance,
           (double)d.point_a.raw[0], (double)d.point_a.raw[1], (double)d.point_a.raw[2],
           (double)d.point_b.raw[0], (double)d.point_b.raw[1], (double)d.point_b.raw[2]);

    // One cache per pair: on coherent motion each test costs about one
    // support call.
    carom_gjk_cache cache;
    memset(&cache, 0, sizeof cache);
    for (int frame = 0; frame < 5; ++frame) {
        at_capsule.p.raw[0] = 2.0f - 0.3f * (float)frame;
        carom_intersect_result x = carom_gjk_intersect(&box, at_box, &capsule, at_capsule, &cache);
        printf("frame %d: x = %.1f  %s  (%d support calls)\n", frame, (double)at_capsule.p.raw[0],
               x.overlap ? "touching" : "apart", x.iterations);
    }
    return 0;
}
