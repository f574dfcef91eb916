// Hull construction: topology, planes, ring order, adjacency, hill-climbing
// support, degenerate input and allocation failure.
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carom/carom.h"
#include "test_failing_alloc.h"
#include "core/internal.h"
#include "mesh_io.h"
#include "narrow/support.h"
#include "reference.h"

// Every structural invariant a built hull promises.
static void check_hull_invariants(const carom_hull* h) {
    float size = sqrtf(v3_len2(v3_sub(h->bounds.max, h->bounds.min)));
    float tol = 1e-5f * size;
    assert_true(h->vertex_count >= 4 && h->face_count >= 4);
    // Euler: V - E + F = 2 for a convex polytope.
    assert_int_equal(h->vertex_count - h->edge_count + h->face_count, 2);
    for (int f = 0; f < h->face_count; ++f) {
        carom_plane p = h->planes[f];
        assert_true(fabsf(v3_len2(p.normal) - 1.0f) < 1e-5f);
        int first = h->face_first[f], n = h->face_first[f + 1] - first;
        assert_true(n >= 3);
        for (int i = 0; i < n; ++i) {
            // On the face's plane, and counter-clockwise seen from outside.
            vec3s a = h->vertices[h->face_vertices[first + i]];
            vec3s b = h->vertices[h->face_vertices[first + (i + 1) % n]];
            vec3s c = h->vertices[h->face_vertices[first + (i + 2) % n]];
            assert_true(fabsf(v3_dot(p.normal, a) - p.offset) <= tol);
            assert_true(v3_dot(v3_cross(v3_sub(b, a), v3_sub(c, b)), p.normal) >= -tol * size);
        }
        // Every vertex of the hull is behind every face plane.
        for (int v = 0; v < h->vertex_count; ++v) {
            assert_true(v3_dot(p.normal, h->vertices[v]) - p.offset <= tol);
        }
    }
    // Adjacency is symmetric, with 2E entries.
    assert_int_equal(h->adjacency_first[h->vertex_count], 2 * h->edge_count);
    for (int v = 0; v < h->vertex_count; ++v) {
        assert_true(h->adjacency_first[v + 1] - h->adjacency_first[v] >= 3);
        for (int k = h->adjacency_first[v]; k < h->adjacency_first[v + 1]; ++k) {
            int u = h->adjacency[k];
            bool back = false;
            for (int j = h->adjacency_first[u]; j < h->adjacency_first[u + 1]; ++j) back |= h->adjacency[j] == v;
            assert_true(back);
        }
    }
    for (int e = 0; e < h->edge_direction_count; ++e) {
        assert_true(fabsf(v3_len2(h->edge_directions[e]) - 1.0f) < 1e-5f);
    }
}

static void test_cube_with_interior_points(void** state) {
    (void)state;
    vec3s pts[16];
    int n = 0;
    for (int i = 0; i < 8; ++i) pts[n++] = v3((i & 1) ? 1.f : -1.f, (i & 2) ? 1.f : -1.f, (i & 4) ? 1.f : -1.f);
    for (int i = 0; i < 8; ++i) pts[n++] = v3(0.1f * (float)i - 0.4f, 0.05f * (float)i, -0.3f);
    carom_hull h;
    assert_int_equal(carom_hull_build(&h, pts, n), CAROM_OK);
    assert_int_equal(h.vertex_count, 8);
    assert_int_equal(h.face_count, 6);  // coplanar triangles merged into squares
    assert_int_equal(h.edge_count, 12);
    assert_int_equal(h.edge_direction_count, 3);
    check_hull_invariants(&h);
    assert_true(fabsf(h.bounding_radius - sqrtf(3.0f)) < 1e-5f);
    carom_hull_destroy(&h);
    assert_null(h.vertices);
    carom_hull_destroy(&h);  // twice is harmless
    carom_hull_destroy(NULL);
}

static void test_degenerate_input(void** state) {
    (void)state;
    carom_hull h;
    vec3s flat[5] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(1, 1, 0), v3(0.5f, 0.2f, 0)};
    assert_int_equal(carom_hull_build(&h, flat, 5), CAROM_ERR_DEGENERATE);
    assert_null(h.vertices);
    vec3s line[4] = {v3(0, 0, 0), v3(1, 1, 1), v3(2, 2, 2), v3(3, 3, 3)};
    assert_int_equal(carom_hull_build(&h, line, 4), CAROM_ERR_DEGENERATE);
    vec3s same[6] = {v3(1, 2, 3), v3(1, 2, 3), v3(1, 2, 3), v3(1, 2, 3), v3(1, 2, 3), v3(1, 2, 3)};
    assert_int_equal(carom_hull_build(&h, same, 6), CAROM_ERR_DEGENERATE);
    assert_int_equal(carom_hull_build(&h, flat, 3), CAROM_ERR_DEGENERATE);
    assert_int_equal(carom_hull_build(&h, flat, 0), CAROM_ERR_DEGENERATE);
    assert_int_equal(carom_hull_build(&h, flat, -1), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_hull_build(&h, NULL, 4), CAROM_ERR_INVALID_ARG);
    assert_int_equal(carom_hull_build(NULL, flat, 4), CAROM_ERR_INVALID_ARG);
    vec3s nan[4] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, NAN, 0), v3(0, 0, 1)};
    assert_int_equal(carom_hull_build(&h, nan, 4), CAROM_ERR_INVALID_ARG);
    vec3s inf[4] = {v3(0, 0, 0), v3(INFINITY, 0, 0), v3(0, 1, 0), v3(0, 0, 1)};
    assert_int_equal(carom_hull_build(&h, inf, 4), CAROM_ERR_INVALID_ARG);
    vec3s huge[4] = {v3(0, 0, 0), v3(1e13f, 0, 0), v3(0, 1, 0), v3(0, 0, 1)};
    assert_int_equal(carom_hull_build(&h, huge, 4), CAROM_ERR_INVALID_ARG);

    // A tetrahedron given with duplicates is fine.
    vec3s dup[8] = {v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1),
                    v3(0, 0, 0), v3(1, 0, 0), v3(0, 1, 0), v3(0, 0, 1)};
    assert_int_equal(carom_hull_build(&h, dup, 8), CAROM_OK);
    assert_int_equal(h.vertex_count, 4);
    assert_int_equal(h.face_count, 4);
    check_hull_invariants(&h);
    carom_hull_destroy(&h);
}

// Allocation failure: fail the n-th allocation for every n the build makes;
// each must report out-of-memory and leak nothing (cmocka's test_realloc
// checks leaks at the end of the test).
static void test_out_of_memory(void** state) {
    (void)state;
    vec3s pts[20];
    ref_rng rng = {7};
    for (int i = 0; i < 20; ++i) {
        pts[i] = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                    (float)ref_rng_uniform(&rng, -1, 1));
    }
    carom_allocator a = {failing_realloc, hooked_free, NULL};
    carom_set_allocator(&a);
    int failures = 0;
    for (g_fail_at = 1;; ++g_fail_at) {
        g_count = 0;
        carom_hull h;
        carom_status s = carom_hull_build(&h, pts, 20);
        if (s == CAROM_OK) {
            carom_hull_destroy(&h);
            break;
        }
        assert_int_equal(s, CAROM_ERR_OUT_OF_MEMORY);
        assert_null(h.vertices);
        failures++;
    }
    carom_set_allocator(NULL);
    assert_true(failures >= 5);  // every allocation of the build was tried
}

// Hill climbing must give the same support value as a linear scan, from
// any starting vertex.
static void check_hill_climbing(const carom_hull* h, int directions) {
    ref_rng rng = {99};
    for (int i = 0; i < directions; ++i) {
        vec3s d = v3((float)ref_rng_uniform(&rng, -1, 1), (float)ref_rng_uniform(&rng, -1, 1),
                     (float)ref_rng_uniform(&rng, -1, 1));
        int hint = (int)(ref_rng_next(&rng) % (unsigned)h->vertex_count);
        int k = hull_support_index(h, d, hint);
        float best = -INFINITY;
        for (int v = 0; v < h->vertex_count; ++v) best = fmaxf(best, v3_dot(h->vertices[v], d));
        assert_true(v3_dot(h->vertices[k], d) >= best - 1e-6f * sqrtf(v3_len2(d)) * h->bounding_radius * 4);
    }
}

static void test_random_sphere_cloud(void** state) {
    (void)state;
    enum { N = 2000 };
    vec3s* pts = malloc(sizeof(vec3s) * N);
    ref_rng rng = {2024};
    for (int i = 0; i < N; ++i) {
        double q[4];
        ref_rng_unit_quat(&rng, q);  // a uniform point on the 3-sphere; project
        vec3s p = v3((float)q[0], (float)q[1], (float)q[2]);
        pts[i] = v3_scale(p, 1.0f / sqrtf(v3_len2(p)));
    }
    carom_hull h;
    assert_int_equal(carom_hull_build(&h, pts, N), CAROM_OK);
    assert_true(h.vertex_count > CAROM_HULL_SCAN_LIMIT);
    check_hull_invariants(&h);
    check_hill_climbing(&h, 5000);
    carom_hull_destroy(&h);
    free(pts);
}

static double dot_double(vec3s a, vec3s b) { return (double)a.x * b.x + (double)a.y * b.y + (double)a.z * b.z; }

// Two cases where comparing the dots of neighbours (each rounded to
// |v| |d| eps) stopped the climb short: a 1-ulp twin that qhull keeps as a
// vertex, level with its original along every direction but the nudge's, and
// the rim of a thin cap, whose neighbours differ by less than that rounding.
static void test_hill_climbing_twins_and_thin_caps(void** state) {
    (void)state;
    vec3s pts[400];
    for (int n = 33; n <= 40; ++n) {
        for (int twin = 0; twin < n; ++twin) {
            for (int i = 0; i < n; ++i) {  // a Fibonacci sphere
                double z = 1 - 2 * (i + 0.5) / n, r = sqrt(1 - z * z), t = i * 2.399963229728653;
                pts[i] = v3((float)(r * cos(t)), (float)(r * sin(t)), (float)z);
            }
            pts[n] = pts[twin];
            pts[n].x = nextafterf(pts[twin].x, INFINITY);
            carom_hull h;
            assert_int_equal(carom_hull_build(&h, pts, n + 1), CAROM_OK);
            assert_true(h.vertex_count > CAROM_HULL_SCAN_LIMIT);
            check_hill_climbing(&h, 1000);
            carom_hull_destroy(&h);
        }
    }
    ref_rng rng = {7};
    for (int trial = 0; trial < 20; ++trial) {
        const int m = 100 + trial * 5;
        const double half = 0.007 * (1 + trial % 3);
        double q[4];
        ref_rng_unit_quat(&rng, q);
        carom_xform pose = carom_xform_identity();
        pose.q = (versors){{(float)q[0], (float)q[1], (float)q[2], (float)q[3]}};
        for (int i = 0; i < 2 * m; ++i) {
            double t = 2 * M_PI * (i % m) / m;
            pts[i] = carom_xform_point(pose, v3((float)cos(t), (float)sin(t), (float)(i < m ? half : -half)));
        }
        carom_hull h;
        assert_int_equal(carom_hull_build(&h, pts, 2 * m), CAROM_OK);
        vec3s cap = carom_xform_vector(pose, v3(0, 0, 1));
        for (int i = 0; i < 2000; ++i) {  // directions within a few degrees of the cap's normal
            double tilt = 0.1 * ref_rng_uniform(&rng, 0, 1) * ref_rng_uniform(&rng, 0, 1);
            vec3s d = v3_add(cap, v3((float)ref_rng_uniform(&rng, -tilt, tilt), (float)ref_rng_uniform(&rng, -tilt, tilt),
                                     (float)ref_rng_uniform(&rng, -tilt, tilt)));
            int k = hull_support_index(&h, d, -1);
            double best = -INFINITY;
            for (int v = 0; v < h.vertex_count; ++v) best = fmax(best, dot_double(h.vertices[v], d));
            assert_true(dot_double(h.vertices[k], d) >= best - 1e-6 * sqrt(v3_len2(d)));
        }
        carom_hull_destroy(&h);
    }
}

// qhull, exact in double, keeps points a float ulp apart as two vertices;
// their sliver faces came out crossed or clockwise, with V - E + F != 2.
// The build welds them: a cloud with twins gives the hull of the cloud.
static void test_twin_vertices_are_welded(void** state) {
    (void)state;
    enum { N = 60 };
    vec3s pts[2 * N];
    ref_rng rng = {11};
    for (int trial = 0; trial < 200; ++trial) {
        double scale = pow(10.0, ref_rng_uniform(&rng, -3, 3));
        for (int i = 0; i < N; ++i) {
            double q[4];
            ref_rng_unit_quat(&rng, q);
            double len = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
            pts[i] = v3((float)(scale * q[0] / len), (float)(scale * q[1] / len), (float)(scale * q[2] / len));
        }
        carom_hull plain;
        assert_int_equal(carom_hull_build(&plain, pts, N), CAROM_OK);
        int twins = 1 + trial % N;
        for (int i = 0; i < twins; ++i) {  // each a step of an ulp or two from a point, in one or more coordinates
            vec3s t = pts[ref_rng_next(&rng) % N];
            float* c[3] = {&t.x, &t.y, &t.z};
            for (int k = 0; k < 3; ++k) {
                unsigned steps = (unsigned)(ref_rng_next(&rng) % 5);  // 0..2 ulps up or down
                for (unsigned u = 0; u < steps / 2 + (steps & 1); ++u) *c[k] = nextafterf(*c[k], (steps & 1) ? INFINITY : -INFINITY);
            }
            pts[N + i] = t;
        }
        carom_hull h;
        assert_int_equal(carom_hull_build(&h, pts, N + twins), CAROM_OK);
        check_hull_invariants(&h);
        assert_int_equal(h.vertex_count, plain.vertex_count);
        assert_int_equal(h.face_count, plain.face_count);
        check_hill_climbing(&h, 200);
        carom_hull_destroy(&h);
        carom_hull_destroy(&plain);
    }
}

// Face rings were ordered by angle about a float centroid, which for a face
// of a couple of hundred vertices 1e5 from the origin was off by about the
// face's own size: the rings came out crossed and clockwise. Each ring must
// turn one way all round, the way its plane's normal points.
static void test_faces_far_from_the_origin(void** state) {
    (void)state;
    enum { M = 200 };
    vec3s pts[2 * M];
    ref_rng rng = {5};
    for (int trial = 0; trial < 10; ++trial) {
        double q[4];
        ref_rng_unit_quat(&rng, q);
        carom_xform pose = {v3((float)ref_rng_uniform(&rng, 1e5, 2e5), (float)ref_rng_uniform(&rng, -2e5, 2e5), 0.0f),
                            {{(float)q[0], (float)q[1], (float)q[2], (float)q[3]}}};
        for (int i = 0; i < 2 * M; ++i) {  // a prism of radius 1 and height 1
            double t = 2 * M_PI * (i % M) / M;
            pts[i] = carom_xform_point(pose, v3((float)cos(t), (float)sin(t), i < M ? 0.5f : -0.5f));
        }
        carom_hull h;
        assert_int_equal(carom_hull_build(&h, pts, 2 * M), CAROM_OK);
        assert_int_equal(h.vertex_count - h.edge_count + h.face_count, 2);
        for (int f = 0; f < h.face_count; ++f) {
            int first = h.face_first[f], n = h.face_first[f + 1] - first;
            for (int i = 0; i < n; ++i) {
                vec3s a = h.vertices[h.face_vertices[first + i]];
                vec3s b = h.vertices[h.face_vertices[first + (i + 1) % n]];
                vec3s c = h.vertices[h.face_vertices[first + (i + 2) % n]];
                double ab[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
                double bc[3] = {(double)c.x - b.x, (double)c.y - b.y, (double)c.z - b.z};
                double turn[3] = {ab[1] * bc[2] - ab[2] * bc[1], ab[2] * bc[0] - ab[0] * bc[2], ab[0] * bc[1] - ab[1] * bc[0]};
                double along = turn[0] * h.planes[f].normal.x + turn[1] * h.planes[f].normal.y + turn[2] * h.planes[f].normal.z;
                double lengths = sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]) * sqrt(bc[0] * bc[0] + bc[1] * bc[1] + bc[2] * bc[2]);
                if (along < -1e-3 * lengths) fail_msg("trial %d, face %d of %d vertices turns back at %d", trial, f, n, i);
            }
        }
        carom_hull_destroy(&h);
    }
}

static void test_real_meshes(void** state) {
    (void)state;
    const char* names[] = {"meshes/geosphere.off", "meshes/bunny00.off", "meshes/armadillo.off"};
    for (int m = 0; m < 3; ++m) {
        mesh_data mesh;
        if (mesh_load_named(names[m], &mesh) != 0) {
            fail_msg("cannot load %s from %s (run scripts/fetch-data.sh)", names[m], mesh_data_dir());
        }
        carom_hull h;
        assert_int_equal(carom_hull_build(&h, (const vec3s*)(const void*)mesh.vertices, mesh.vertex_count),
                         CAROM_OK);
        if (m == 0) assert_int_equal(h.vertex_count, 162);
        check_hull_invariants(&h);
        check_hill_climbing(&h, 2000);
        carom_hull_destroy(&h);
        mesh_free(&mesh);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cube_with_interior_points), cmocka_unit_test(test_degenerate_input),
        cmocka_unit_test(test_out_of_memory),             cmocka_unit_test(test_random_sphere_cloud),
        cmocka_unit_test(test_hill_climbing_twins_and_thin_caps), cmocka_unit_test(test_twin_vertices_are_welded),
        cmocka_unit_test(test_faces_far_from_the_origin), cmocka_unit_test(test_real_meshes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
