// The public headers must compile as strict ISO C11 (no GNU extensions)
// with every warning, even though carom itself builds as gnu11.
#include "carom/carom.h"

int main(void) {
    carom_shape ball = carom_sphere(1.0f);
    carom_xform a = carom_xform_identity();
    carom_xform b = carom_xform_make((vec3s){{3.0f, 0.0f, 0.0f}}, (vec3s){{0.0f, 0.0f, 1.0f}}, 0.0f);
    carom_intersect_result x = carom_gjk_intersect(&ball, a, &ball, b, NULL);
    return (x.state == CAROM_DONE && !x.overlap) ? 0 : 1;
}
