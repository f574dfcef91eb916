/// The C interface between the benchmark drivers and the peer libraries
/// (libccd, FCL, Bullet). Only bench/ links the peers; each peer lives in one
/// translation unit (peers_ccd.c, peers_fcl.cpp, peers_bullet.cpp) so that the
/// heavy C++ headers compile once.
///
/// Shapes are described once, in float, and every implementation (carom,
/// peers, reference) is built from the same numbers. Poses are float too
/// (carom's precision); double-precision peers widen them exactly.
#ifndef CAROM_BENCH_PEERS_H
#define CAROM_BENCH_PEERS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum bench_shape_kind {
    BENCH_SHAPE_BOX = 0,  ///< centred box of half_extents
    BENCH_SHAPE_HULL,     ///< convex polytope: points + polygon faces
    BENCH_SHAPE_CAPSULE,  ///< segment (0,0,-half_height)-(0,0,+half_height) rounded by radius
} bench_shape_kind;

/// A convex shape in its local frame.
typedef struct bench_shape {
    bench_shape_kind kind;
    float half_extents[3];   ///< BOX
    float radius;            ///< CAPSULE
    float half_height;       ///< CAPSULE: half the segment length (the axis is z)
    const float* points;     ///< HULL: extreme points only, x y z per point
    int point_count;
    const int* face_first;   ///< HULL: face f is face_vertices[face_first[f] .. face_first[f+1])
    const int* face_vertices;///< HULL: counter-clockwise seen from outside
    int face_count;
    float size;              ///< characteristic size (largest extent), for tolerances
} bench_shape;

/// A rigid pose: rotate by the unit quaternion q = (x, y, z, w), then
/// translate by p.
typedef struct bench_pose {
    float p[3];
    float q[4];
} bench_pose;

/// The inputs of one batch: shape a at pose_a[i] against shape b at pose_b[i]
/// for i in [0, n).
typedef struct bench_pairs {
    const bench_shape* a;
    const bench_shape* b;
    int n;
    const bench_pose* pose_a;
    const bench_pose* pose_b;
} bench_pairs;

/// Distance answer: separation (<= 0 or negative when the shapes overlap, as
/// each peer reports it) and the closest points in world coordinates.
typedef struct bench_distance {
    double distance;
    double point_a[3];
    double point_b[3];
} bench_distance;

/// Each peer has a prepare step (shapes and native poses built outside the
/// timed loop) returning an opaque context, batch queries that answer every
/// pair of the batch in order, and a destroy. A peer that cannot represent a
/// shape returns NULL from prepare.

/// libccd 2.1 (double): GJK and MPR boolean intersection (no distance query
/// in this version). max_iterations is bounded (CCD_INIT leaves it infinite).
void* bench_ccd_prepare(const bench_pairs* pairs);
void bench_ccd_gjk_intersect(void* ctx, unsigned char* out);
void bench_ccd_mpr_intersect(void* ctx, unsigned char* out);
void bench_ccd_destroy(void* ctx);

/// FCL 0.7 (double): fcl::distance and fcl::collide with GST_LIBCCD.
void* bench_fcl_prepare(const bench_pairs* pairs);
void bench_fcl_distance(void* ctx, bench_distance* out);
void bench_fcl_intersect(void* ctx, unsigned char* out);
void bench_fcl_destroy(void* ctx);

/// Bullet 3.24 (float): btGjkPairDetector + btVoronoiSimplexSolver, and
/// btGjkEpaSolver2.
void* bench_bullet_prepare(const bench_pairs* pairs);
void bench_bullet_gjk_distance(void* ctx, bench_distance* out);
void bench_bullet_gjk_intersect(void* ctx, unsigned char* out);
void bench_bullet_epa2_distance(void* ctx, bench_distance* out);
void bench_bullet_epa2_intersect(void* ctx, unsigned char* out);
void bench_bullet_destroy(void* ctx);

/// Convex hull of `count` points (x y z floats) with qhull_r: extreme points
/// and merged polygon faces, each counter-clockwise seen from outside. The
/// arrays are malloc'd; free them with bench_hull_free. Returns 0 on success.
typedef struct bench_hull_geometry {
    float* points;
    int point_count;
    int* face_first;  ///< face_count + 1 entries
    int* face_vertices;
    int face_count;
} bench_hull_geometry;

int bench_hull_compute(const float* points, int count, bench_hull_geometry* out);
void bench_hull_free(bench_hull_geometry* hull);

#ifdef __cplusplus
}
#endif

#endif
