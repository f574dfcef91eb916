// The carom command-line program. With no arguments it runs the default
// scene: every primitive against every other at a few poses, GJK distance
// and intersection printed so a person can check what happened.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "carom/carom.h"
#include "swept_pairs.h"

typedef struct named_shape {
    const char* name;
    carom_shape shape;
} named_shape;

static void print_vec(vec3s v) { printf("(%7.4f %7.4f %7.4f)", (double)v.raw[0], (double)v.raw[1], (double)v.raw[2]); }

static int run_default_scene(void) {
    // A tetrakis-like point cloud for the hull: an octahedron plus a cube.
    vec3s cloud[14];
    int n = 0;
    for (int axis = 0; axis < 3; ++axis) {
        for (int sign = -1; sign <= 1; sign += 2) {
            vec3s p = {{0, 0, 0}};
            p.raw[axis] = 0.75f * (float)sign;
            cloud[n++] = p;
        }
    }
    for (int i = 0; i < 8; ++i) {
        cloud[n++] = (vec3s){{(i & 1) ? 0.4f : -0.4f, (i & 2) ? 0.4f : -0.4f, (i & 4) ? 0.4f : -0.4f}};
    }
    carom_hull hull;
    carom_status status = carom_hull_build(&hull, cloud, n);
    if (status != CAROM_OK) {
        fprintf(stderr, "carom: hull build failed: %s\n", carom_status_string(status));
        return 1;
    }
    printf("hull of %d points: %d vertices, %d faces, %d edges, %d edge directions\n\n", n,
           hull.vertex_count, hull.face_count, hull.edge_count, hull.edge_direction_count);

    named_shape shapes[] = {
        {"sphere r=0.5", carom_sphere(0.5f)},
        {"box 0.5", carom_box((vec3s){{0.5f, 0.5f, 0.5f}})},
        {"capsule h=0.5 r=0.25", carom_capsule((vec3s){{0, 0, -0.5f}}, (vec3s){{0, 0, 0.5f}}, 0.25f)},
        {"cylinder h=0.5 r=0.4", carom_cylinder(0.5f, 0.4f)},
        {"cone h=0.5 r=0.5", carom_cone(0.5f, 0.5f)},
        {"hull (14 points)", carom_hull_shape(&hull)},
    };
    int count = (int)(sizeof shapes / sizeof shapes[0]);
    // Each pair at two poses of B: apart, and pushed halfway in.
    carom_xform xa = carom_xform_make((vec3s){{0, 0, 0}}, (vec3s){{0, 0, 1}}, 0.3f);
    vec3s offsets[2] = {{{1.6f, 0.3f, 0.2f}}, {{0.8f, 0.15f, 0.1f}}};
    printf("%-22s %-22s %-5s %8s %-8s %3s  %-27s %s\n", "A", "B", "pose", "distance", "overlap", "it", "point on A",
           "point on B");
    for (int i = 0; i < count; ++i) {
        for (int j = i; j < count; ++j) {
            for (int k = 0; k < 2; ++k) {
                carom_xform xb = carom_xform_make(offsets[k], (vec3s){{1, 1, 0}}, 0.7f);
                carom_distance_result d = carom_gjk_distance(&shapes[i].shape, xa, &shapes[j].shape, xb, NULL);
                carom_intersect_result x = carom_gjk_intersect(&shapes[i].shape, xa, &shapes[j].shape, xb, NULL);
                if (d.state != CAROM_DONE || x.state != CAROM_DONE) {
                    fprintf(stderr, "carom: query failed: %s\n", carom_query_state_string(d.state));
                    carom_hull_destroy(&hull);
                    return 1;
                }
                printf("%-22s %-22s %-5s %8.5f %-8s %3d  ", k ? "" : shapes[i].name, k ? "" : shapes[j].name,
                       k ? "near" : "far", (double)d.distance, x.overlap ? "yes" : "no", d.iterations);
                print_vec(d.point_a);
                printf(" ");
                print_vec(d.point_b);
                printf("\n");
            }
        }
    }

    // Coherent motion: a box orbiting a hull, one intersection test per frame
    // with a per-pair cache. The cached separating axis usually proves
    // separation again with a single support call.
    carom_gjk_cache cache;
    memset(&cache, 0, sizeof cache);
    int frames = 600, total = 0, hits = 0;
    for (int f = 0; f < frames; ++f) {
        float t = (float)f / (float)frames * 6.2831853f;
        float radius = 1.35f + 0.2f * sinf(3.0f * t);
        carom_xform xb = carom_xform_make((vec3s){{radius * cosf(t), radius * sinf(t), 0}}, (vec3s){{0, 0, 1}}, t);
        carom_intersect_result x = carom_gjk_intersect(&shapes[5].shape, xa, &shapes[1].shape, xb, &cache);
        total += x.iterations;
        hits += x.overlap;
    }
    printf("\ncoherent motion: %d frames of a box orbiting the hull, %d in contact, %.3f GJK iterations per frame\n",
           frames, hits, (double)total / frames);
    carom_hull_destroy(&hull);
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "swept") == 0) return swept_pairs_run(5000, 50, 5);
    if (argc > 1) {
        bool help = strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0;
        fprintf(help ? stdout : stderr,
                "usage: carom            run the default scene (GJK distance and intersection)\n"
                "       carom swept      swept broad-phase pairs of 5,000 boxes, 50 of them fast\n");
        return help ? 0 : 2;
    }
    return run_default_scene();
}
