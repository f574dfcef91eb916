// The public headers must compile as C++ (extern "C", no C-only syntax) and
// link against the C library.
#include "carom/carom.h"

int main() {
    carom_shape box = carom_box(vec3s{{0.5f, 0.5f, 0.5f}});
    carom_shape ball = carom_sphere(0.5f);
    carom_xform a = carom_xform_identity();
    carom_xform b = carom_xform_make(vec3s{{2.0f, 0.0f, 0.0f}}, vec3s{{0.0f, 0.0f, 1.0f}}, 0.0f);
    carom_distance_result d = carom_gjk_distance(&box, a, &ball, b, nullptr);
    // Exactly 1: box face at x = 0.5, sphere surface at x = 1.5.
    return (d.state == CAROM_DONE && d.distance > 0.999f && d.distance < 1.001f) ? 0 : 1;
}
