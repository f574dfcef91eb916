// The pieces of carom_bench_mid (bench_mid.c) that its cases share: poses
// and frames, the meshes and the implementations run on them, timing, and
// the comparison of triangle pair sets in double precision
// (bench_mid_common.c); each family of cases lives in a file of its own
// (bench_mid_collide.c, bench_mid_trees.c, bench_mid_rays.c).
#ifndef CAROM_BENCH_MID_H
#define CAROM_BENCH_MID_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <carom/carom.h>
#include <carom/mid.h>

#include "harness.h"
#include "mesh_io.h"
#include "mesh_reference.h"
#include "peers_mid.h"
#include "pose_xform.h"
#include "reference.h"

// ---- sizes and tolerances -----------------------------------------------------

enum {
    RAYS = 4096,
    QUICK_RAYS = 512,
    // Rays whose answers all agree are still checked against the double
    // reference on this many of them (spread over the set), so that carom's
    // own line is checked too; disputed rays are all resolved, up to
    // MAX_RESOLVED.
    RAY_SAMPLE = 256,
    QUICK_RAY_SAMPLE = 32,
    MAX_RESOLVED = 512,
    MAX_IMPLS = 8,
};

// A timed run repeats a query until it lasts about this long (a first-hit
// query takes microseconds; a clock read costs ~20 ns), so that every
// implementation is timed over several milliseconds per round.
#define TARGET_RUN_NS 5e6
#define QUICK_TARGET_RUN_NS 2e6

// Pairs and rays within this distance of touching (relative to the larger
// mesh's size) may go either way: the inputs are float, and float triangle
// tests after a float change of frame are accurate to a few 1e-7 of the size.
#define TOUCH_BAND 1e-5
// Ray hits agree when their points along the ray are this close (relative
// to the mesh size).
#define RAY_TOL 1e-4

// Point x of a mesh's local frame in world coordinates, in double.
typedef struct frame {
    double r[3][3];
    double t[3];
} frame;

typedef enum impl_id {
    IMPL_CAROM = 0,    // CAROM_TREE_AABB
    IMPL_CAROM_BOXTREE,
    IMPL_CAROM_SAH,
    IMPL_FCL_OBBRSS,
    IMPL_FCL_AABB,
    IMPL_BULLET,
    IMPL_CAROM_ANY,    // ray casts only: the AABB tree in CAROM_RAY_ANY mode
    IMPL_COUNT
} impl_id;

enum { MESH_BUNNY, MESH_ARMADILLO, MESH_HOUSE, MESH_COUNT };

typedef struct mid_mesh {
    const char* name;
    mesh_data data;     // float vertices (recentred/scaled as loaded) and triangles
    vec3s* vertices;    // the same vertices for carom
    bench_mesh desc;    // the same arrays for the peers
    float lo[3], hi[3]; // bounds, local frame
    double centre[3];   // box centre, local frame
    float size;         // largest extent
    carom_mesh carom[3]; // built on first use, one per tree kind
    bool carom_built[3];
    void* fcl[2];       // BVHModel<OBBRSS>, BVHModel<AABB>, built on first use
    void* bullet;       // built on first use
} mid_mesh;

// One implementation's slot in a case: bench_impl plus how many queries one
// call of its run function makes (ops) and how often the run repeats them.
typedef struct timed_slot {
    bench_impl impl;
    impl_id id;
    int* repeat;  // points into the implementation's context
    int ops;
} timed_slot;

// Where one triangle pair stands in double precision (mesh_reference.h):
// both triangles moved to world in double from the same floats and poses
// every implementation got; then the exact intersection predicate, and the
// distance when they are apart or minus the penetration depth when they
// intersect. `degenerate`: one of them has zero area, which carom never
// reports (mid.h).
typedef struct pair_geometry {
    const mid_mesh* a;
    const mid_mesh* b;
    frame fa, fb;
} pair_geometry;

// How one implementation's pair set differs from the reference set, each
// differing pair settled by its double separation s: |s| <= band is
// touching (either answer is right), s > band means the pair must not be
// reported, s < -band that it must.
typedef struct pair_diff {
    int missing;         // in the reference, not here
    int extra;           // here, not in the reference
    int touching;        // differing pairs within the band
    double max_touching; // largest |s| among them
    int degenerate;      // differing pairs with a zero-area triangle (carom skips them)
    int wrong_here;      // this implementation on the wrong side of the band
    double max_wrong_here;
    int wrong_ref;       // the reference (carom) on the wrong side
    double max_wrong_ref;
} pair_diff;

// The collide poses. The first mesh is at pose_first(); the second is
// turned about its own box centre by `angle` about `axis`, then moved by
// `offset`, both in the first mesh's frame.
typedef struct collide_spec {
    const char* name;
    int a, b;  // MESH_*
    double axis[3];
    double angle;
    double offset[3];
    bool quick;  // part of --quick
} collide_spec;

// Where a first-hit query stops depends on which intersecting pair its walk
// meets first, so one pose says little: turned or moved a little, the same
// meshes can take several times as long, in carom and in FCL alike (all
// pairs, by tens of percent). A sweep times both queries over many poses
// drawn at random (the same poses for every implementation) and gives the
// mean time per query. Each pose turns the second mesh about its box
// centre, about a random axis, by an angle uniform in [0.2, 3] rad, then
// moves it along a random direction:
//   grazing     back from where the meshes stop touching by 0.003 of the
//               size (found by bisection with carom's AABB tree);
//   deep        half that distance;
//   coincident  not at all, and turned only 0.01 rad.
// FCL's AABB models are left out: they rebuild both trees on every query
// (0.1 s on the bunnies).
typedef enum sweep_kind { SWEEP_GRAZING, SWEEP_DEEP, SWEEP_COINCIDENT } sweep_kind;

typedef struct sweep_spec {
    const char* name;
    int a, b;  // MESH_*
    sweep_kind kind;
    uint64_t seed;
    bool quick;  // part of --quick
} sweep_spec;

typedef struct ray_case {
    const char* name;
    mid_mesh* mesh;
    uint64_t seed;
} ray_case;

static inline bool is_carom(impl_id id)
{
    return id <= IMPL_CAROM_SAH || id == IMPL_CAROM_ANY;
}

extern const char* const IMPL_NAME[IMPL_COUNT];
// The carom tree of each carom implementation (IMPL_CAROM, _BOXTREE, _SAH).
extern const carom_tree_kind CAROM_KIND[3];

// ---- bench_mid_common.c -----------------------------------------------------------

// Prints `what` and exits: a case that cannot run says why.
void fail(const char* what);
void* xmalloc(size_t size);

// Poses are made in double and rounded to float once (make_pose); every
// implementation gets those floats.
void quat_axis_angle(const double axis[3], double angle, double q[4]);
void quat_mul(const double a[4], const double b[4], double out[4]);
void mat_apply(const double* m, const double v[3], double out[3]);
bench_pose make_pose(const double p[3], const double q[4]);
bench_pose pose_first(void);
bench_pose pose_relative(const bench_pose* first, const double centre[3], const double axis[3],
                         double angle, const double offset[3]);
frame frame_of(const bench_pose* p);
void frame_apply(const frame* f, const float x[3], double out[3]);

void mesh_open(mid_mesh* m, const char* name, const char* file, float size);
void mesh_moved(mid_mesh* out, const mid_mesh* m, const char* name, const float (*vertices)[3]);
carom_status carom_build(const mid_mesh* m, int kind, carom_mesh* out);
const carom_mesh* mesh_carom(mid_mesh* m, int kind);
void* mesh_fcl(mid_mesh* m, bench_fcl_bv bv);
void* mesh_bullet(mid_mesh* m);
void mesh_close(mid_mesh* m);
void world_triangle(const mid_mesh* m, const frame* f, int t, double out[3][3]);

void measure_slots(timed_slot* slots, const double* single_ns, int count,
                   const bench_options* opt);

int pair_compare(const void* x, const void* y);
int pairs_unique(bench_tri_pair* p, int n);
bool pairs_contain(const bench_tri_pair* sorted, int n, bench_tri_pair p);
double pair_separation(const pair_geometry* g, bench_tri_pair p, bool* degenerate);
pair_diff pairs_diff(const pair_geometry* g, const bench_tri_pair* ref, int nref,
                     const bench_tri_pair* got, int ngot, double band, const char* verbose_name);
void pair_diff_text(const pair_diff* d, char* text, size_t size);
void pair_diff_add(pair_diff* sum, const pair_diff* d);

// ---- the cases: each runs every implementation, checks and prints its lines --------

// bench_mid_collide.c: mesh against mesh at one pose, and over many.
void collide_case_run(const collide_spec* spec, mid_mesh* a, mid_mesh* b,
                      const bench_options* opt);
void sweep_case_run(const sweep_spec* spec, mid_mesh* a, mid_mesh* b, const bench_options* opt);
// bench_mid_trees.c: building each tree, and refitting it to a deforming
// mesh (checked against `partner`, a fixed mesh it overlaps).
void build_case_run(const char* name, const mid_mesh* mesh, const bench_options* opt);
void refit_case_run(const char* name, mid_mesh* mesh, mid_mesh* partner, const bench_options* opt);
// bench_mid_rays.c: closest-hit ray casts; make_rays makes a case's rays.
void ray_case_run(const ray_case* rc, const bench_options* opt);
void make_rays(const mid_mesh* m, const bench_pose* pose, int n, uint64_t seed, carom_ray* rays,
               bench_ray* peer_rays);

#endif
