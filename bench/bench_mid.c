// carom_bench_mid: the mid phase (triangle meshes and their trees) against
// FCL's BVHModel<OBBRSS> and BVHModel<AABB> and Bullet's quantized
// btBvhTriangleMeshShape, on identical inputs, in one process.
//
// Cases (README.md, "carom_bench_mid"):
//   bunny-grazing/{all,first}     two bunny00 copies barely touching
//   bunny-deep/{all,first}        the second copy a quarter of the size off, turned
//   bunny-coincident/{all,first}  the second copy turned 0.01 rad about the centre
//   armadillo-bunny/{all,first}   the armadillo scaled to the bunny's size, overlapping
//   bunny-grazing-sweep/{all,first}     32 random grazing poses, and the like
//   bunny-deep-sweep/{all,first}        for deep, near-coincident (0.01 rad)
//   bunny-coincident-sweep/{all,first}  and armadillo-bunny (deep) poses: the
//   armadillo-bunny-sweep/{all,first}   mean time per query
//   build-bunny, build-armadillo  building each tree
//   refit-bunny                   refitting each tree to a deforming bunny
//   ray-bunny, ray-house          closest-hit ray casts
// "all" collects every intersecting triangle pair, "first" stops at the
// first. The reference pair set is carom's AABB tree; every other answer is
// compared with it, and the pairs that differ are settled in double
// precision (mesh_reference.h: exact intersection, distance or depth).
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

// ---- cases ----------------------------------------------------------------------------

typedef struct mesh_table {
    mid_mesh mesh[MESH_COUNT];
    bool loaded[MESH_COUNT];
} mesh_table;

// Meshes load on first use, so that --case loads only what it needs. The
// armadillo is scaled to the bunny's largest extent and centred on its box;
// the bunny and the house stay as their files have them.
static mid_mesh* get_mesh(mesh_table* t, int which)
{
    if (!t->loaded[which]) {
        switch (which) {
        case MESH_BUNNY:
            mesh_open(&t->mesh[which], "bunny", "meshes/bunny00.off", 0);
            break;
        case MESH_ARMADILLO:
            mesh_open(&t->mesh[which], "armadillo", "meshes/armadillo.off",
                      get_mesh(t, MESH_BUNNY)->size);
            break;
        default:
            mesh_open(&t->mesh[which], "house", "assimp/IFC/AC14-FZK-Haus.ifc", 0);
            break;
        }
        t->loaded[which] = true;
        const mid_mesh* m = &t->mesh[which];
        bench_note("%s: %d triangles, %d vertices, size %.6g", m->name, m->data.triangle_count,
                   m->data.vertex_count, m->size);
    }
    return &t->mesh[which];
}

// Cases outside the quick set run under --quick only when --case names them.
static bool wanted(const bench_options* opt, const char* name, bool quick)
{
    if (opt->quick && !quick && opt->only_case == NULL) {
        return false;
    }
    char all_name[80], first_name[80];
    snprintf(all_name, sizeof all_name, "%s/all", name);
    snprintf(first_name, sizeof first_name, "%s/first", name);
    return bench_case_selected(opt, name) || bench_case_selected(opt, all_name) ||
           bench_case_selected(opt, first_name);
}

// The bunny's largest extent is 0.998 (x), its box centre (0.00013,
// 0.00017, -0.0002).
static const collide_spec COLLIDE_SPECS[] = {
    // Moved 0.8 along (1, 0.25, 0.1): the copies begin to touch at 0.8033
    // (found by bisection), so they interpenetrate by ~0.003 along that
    // direction; a few dozen pairs.
    {"bunny-grazing", MESH_BUNNY, MESH_BUNNY, {0.2, 1.0, 0.1}, 0.5,
     {0.772484, 0.193121, 0.0772484}, false},
    // A quarter of the size off and turned 0.8 rad: a large overlap.
    {"bunny-deep", MESH_BUNNY, MESH_BUNNY, {1.0, -0.5, 0.3}, 0.8, {0.22, 0.12, -0.08}, true},
    // Turned 0.01 rad about its centre: the surfaces cross almost everywhere.
    {"bunny-coincident", MESH_BUNNY, MESH_BUNNY, {0.3, 0.9, -0.2}, 0.01, {0, 0, 0}, false},
    // The armadillo (scaled) and the bunny turned 1.2 rad and moved a little.
    {"armadillo-bunny", MESH_ARMADILLO, MESH_BUNNY, {0.4, 0.2, 1.0}, 1.2, {0.1, 0.15, 0.05}, false},
};

static const sweep_spec SWEEP_SPECS[] = {
    {"bunny-grazing-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_GRAZING, 0x67a2e, false},
    {"bunny-deep-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_DEEP, 0xdee9, true},
    {"bunny-coincident-sweep", MESH_BUNNY, MESH_BUNNY, SWEEP_COINCIDENT, 0xc0c1, false},
    {"armadillo-bunny-sweep", MESH_ARMADILLO, MESH_BUNNY, SWEEP_DEEP, 0xa7a0, false},
};

static bool reps_given(int argc, char** argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0) {
            return true;
        }
    }
    return false;
}

int main(int argc, char** argv)
{
    bench_options opt = bench_parse_options(argc, argv, "carom_bench_mid");
    if (opt.quick && !reps_given(argc, argv)) {
        // A smoke test: one timed round after the warm-up (FCL's OBBRSS
        // build alone takes ~0.4 s a round).
        opt.reps = 1;
    }
    bench_note("carom_bench_mid: %d reps%s", opt.reps, opt.quick ? " (quick)" : "");
    mesh_table meshes;
    memset(&meshes, 0, sizeof meshes);

    for (size_t k = 0; k < sizeof COLLIDE_SPECS / sizeof COLLIDE_SPECS[0]; k++) {
        const collide_spec* spec = &COLLIDE_SPECS[k];
        if (!wanted(&opt, spec->name, spec->quick)) {
            continue;
        }
        collide_case_run(spec, get_mesh(&meshes, spec->a), get_mesh(&meshes, spec->b), &opt);
    }
    for (size_t k = 0; k < sizeof SWEEP_SPECS / sizeof SWEEP_SPECS[0]; k++) {
        const sweep_spec* spec = &SWEEP_SPECS[k];
        if (!wanted(&opt, spec->name, spec->quick)) {
            continue;
        }
        sweep_case_run(spec, get_mesh(&meshes, spec->a), get_mesh(&meshes, spec->b), &opt);
    }
    if (wanted(&opt, "build-bunny", true)) {
        build_case_run("build-bunny", get_mesh(&meshes, MESH_BUNNY), &opt);
    }
    if (wanted(&opt, "build-armadillo", false)) {
        build_case_run("build-armadillo", get_mesh(&meshes, MESH_ARMADILLO), &opt);
    }
    if (wanted(&opt, "refit-bunny", true)) {
        mid_mesh* bunny = get_mesh(&meshes, MESH_BUNNY);
        refit_case_run("refit-bunny", bunny, bunny, &opt);
    }
    if (wanted(&opt, "ray-bunny", true)) {
        ray_case rc = {"ray-bunny", get_mesh(&meshes, MESH_BUNNY), 0xb0b};
        ray_case_run(&rc, &opt);
    }
    if (wanted(&opt, "ray-house", true)) {
        ray_case rc = {"ray-house", get_mesh(&meshes, MESH_HOUSE), 0x4005e};
        ray_case_run(&rc, &opt);
    }

    for (int k = 0; k < MESH_COUNT; k++) {
        if (meshes.loaded[k]) {
            mesh_close(&meshes.mesh[k]);
        }
    }
    return 0;
}
