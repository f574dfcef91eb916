// Mesh against mesh: which triangles of two posed triangle meshes touch.
//
// Builds two tori (about 20,000 triangles each) as carom meshes, links them
// like chain links and lists their touching triangle pairs, then asks for the
// first pair only (the cheap "do they touch?" query), and casts a ray.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "carom/carom.h"

// A torus of major radius R and minor radius r around the z axis, as
// `rings * sides * 2` triangles. The caller frees both arrays.
static int make_torus(float R, float r, int rings, int sides, vec3s** vertices, int** indices) {
    *vertices = malloc(sizeof(vec3s) * (size_t)(rings * sides));
    *indices = malloc(sizeof(int) * 6 * (size_t)(rings * sides));
    if (!*vertices || !*indices) return 0;
    for (int i = 0; i < rings; ++i) {
        float u = 6.2831853f * (float)i / (float)rings;
        for (int j = 0; j < sides; ++j) {
            float v = 6.2831853f * (float)j / (float)sides;
            float w = R + r * cosf(v);
            (*vertices)[i * sides + j] = (vec3s){{w * cosf(u), w * sinf(u), r * sinf(v)}};
            int a = i * sides + j, b = ((i + 1) % rings) * sides + j;
            int c = ((i + 1) % rings) * sides + (j + 1) % sides, d = i * sides + (j + 1) % sides;
            int* t = &(*indices)[6 * (i * sides + j)];
            t[0] = a, t[1] = b, t[2] = c, t[3] = a, t[4] = c, t[5] = d;
        }
    }
    return rings * sides * 2;
}

int main(void) {
    vec3s* vertices;
    int* indices;
    int triangles = make_torus(1.0f, 0.3f, 200, 50, &vertices, &indices);
    if (triangles == 0) return 1;

    // carom copies the arrays: they could be freed right after this.
    carom_mesh torus;
    carom_status status = carom_mesh_create(vertices, 200 * 50, indices, triangles, NULL, &torus);
    if (status != CAROM_OK) {
        fprintf(stderr, "mesh: %s\n", carom_status_string(status));
        return 1;
    }
    printf("torus: %d triangles, tree %d nodes, depth %d, %.1f bytes/triangle\n",
           torus.triangle_count, torus.node_count, torus.depth,
           (double)torus.tree_bytes / torus.triangle_count);

    // The second link: turned a quarter about x, so each torus passes
    // through the other's hole, and pulled along x until the tubes meet
    // (they touch at x = 1.4).
    carom_xform a = carom_xform_identity();
    carom_xform b = carom_xform_make((vec3s){{1.0f, 0.0f, 0.0f}}, (vec3s){{1, 0, 0}}, 1.5707963f);
    enum { CAPACITY = 4096 };
    static carom_triangle_pair pairs[CAPACITY];
    for (int step = 0; step < 4; ++step) {
        b.p.x = 1.3f + 0.07f * (float)step;
        carom_mesh_query_result r =
            carom_mesh_collide_pairs(&torus, a, &torus, b, false, pairs, CAPACITY);
        if (r.state != CAROM_DONE) return 1;
        printf("link at x = %.2f: %d touching pairs (%d box tests, %d triangle tests)", (double)b.p.x,
               r.found, r.node_tests, r.triangle_tests);
        if (r.found > 0) printf(", e.g. triangles %d and %d", pairs[0].a, pairs[0].b);
        printf("%s\n", r.found > CAPACITY ? " (buffer short)" : "");
        carom_mesh_query_result first =
            carom_mesh_collide_pairs(&torus, a, &torus, b, true, pairs, 1);
        printf("    first hit only: %s after %d box tests\n", first.found ? "touching" : "apart",
               first.node_tests);
    }

    carom_ray ray = {{{0.0f, 0.0f, 5.0f}}, {{1.0f, 0.0f, -10.0f}}};
    carom_mesh_hit hit = carom_mesh_raycast(&torus, a, ray, CAROM_RAY_CLOSEST);
    if (hit.hit) {
        printf("ray hits triangle %d at fraction %.4f, point (%.3f %.3f %.3f), normal (%.2f %.2f %.2f)\n",
               hit.triangle, (double)hit.fraction, (double)hit.point.x, (double)hit.point.y,
               (double)hit.point.z, (double)hit.normal.x, (double)hit.normal.y, (double)hit.normal.z);
    }
    carom_mesh_destroy(&torus);
    free(vertices);
    free(indices);
    return 0;
}
