// carom_bench_mid's build cases: each tree built and freed.
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

// ---- building the trees ------------------------------------------------------------

typedef struct build_ctx {
    impl_id id;
    const mid_mesh* mesh;
    int failures;         // builds that returned an error
    carom_status status;  // carom: the last error
    bench_tree_info info; // of the last build
    int depth;            // carom
    size_t total_bytes;   // carom: everything the mesh owns
} build_ctx;

// Builds the tree and frees it again: one build per run (each takes
// milliseconds), freeing included in the time.
static void run_build(void* arg)
{
    build_ctx* c = arg;
    if (is_carom(c->id)) {
        carom_mesh m;
        carom_status st = carom_build(c->mesh, (int)c->id, &m);
        if (st != CAROM_OK) {
            c->failures++;
            c->status = st;
            return;
        }
        c->info.node_count = m.node_count;
        c->info.tree_bytes = m.tree_bytes;
        c->depth = m.depth;
        c->total_bytes = m.total_bytes;
        carom_mesh_destroy(&m);
    } else if (c->id == IMPL_BULLET) {
        void* m = bench_bullet_mesh_build(&c->mesh->desc);
        if (m == NULL) {
            c->failures++;
            return;
        }
        c->info = bench_bullet_mesh_info(m);
        bench_bullet_mesh_destroy(m);
    } else {
        void* m = bench_fcl_mesh_build(&c->mesh->desc,
                                       c->id == IMPL_FCL_OBBRSS ? BENCH_FCL_OBBRSS : BENCH_FCL_AABB);
        if (m == NULL) {
            c->failures++;
            return;
        }
        c->info = bench_fcl_mesh_info(m);
        bench_fcl_mesh_destroy(m);
    }
}

void build_case_run(const char* name, const mid_mesh* mesh, const bench_options* opt)
{
    if (!bench_case_selected(opt, name)) {
        return;
    }
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH,
                                  IMPL_FCL_OBBRSS, IMPL_FCL_AABB, IMPL_BULLET};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    bench_note("case %s: %d triangles, %d vertices", name, mesh->data.triangle_count,
               mesh->data.vertex_count);
    build_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    for (int k = 0; k < COUNT; k++) {
        memset(&ctx[k], 0, sizeof ctx[k]);
        ctx[k].id = ids[k];
        ctx[k].mesh = mesh;
        // No repeat: a build is long enough to time alone.
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_build, &ctx[k], 0, 0}, ids[k], NULL, 1};
    }
    measure_slots(slots, NULL, COUNT, opt);

    double fcl_ns = 0;
    for (int k = 0; k < COUNT; k++) {
        if (ids[k] == IMPL_FCL_OBBRSS && ctx[k].failures == 0) {
            fcl_ns = slots[k].impl.ns_per_op;
        }
    }
    const int tris = mesh->data.triangle_count;
    for (int k = 0; k < COUNT; k++) {
        const build_ctx* c = &ctx[k];
        char check[96];
        if (c->failures == 0) {
            snprintf(check, sizeof check, "ok");
        } else if (is_carom(c->id)) {
            snprintf(check, sizeof check, "%d builds failed: %s", c->failures,
                     carom_status_string(c->status));
        } else {
            snprintf(check, sizeof check, "%d builds failed", c->failures);
        }
        bench_json j;
        bench_json_begin(&j, "mid", name, slots[k].impl.name, 1, slots[k].impl.ns_per_op, check);
        bench_json_str(&j, "mode", "build");
        bench_json_num(&j, "build_ms", slots[k].impl.ns_per_op * 1e-6);
        bench_json_int(&j, "triangles", tris);
        bench_json_int(&j, "nodes", c->info.node_count);
        bench_json_int(&j, "tree_bytes", (long long)c->info.tree_bytes);
        bench_json_num(&j, "bytes_per_triangle", tris > 0 ? (double)c->info.tree_bytes / tris : 0.0);
        if (is_carom(c->id)) {
            bench_json_int(&j, "depth", c->depth);
            bench_json_int(&j, "total_bytes", (long long)c->total_bytes);
        }
        bench_json_num(&j, "ns_min", slots[k].impl.ns_min);
        if (c->id != IMPL_FCL_OBBRSS && fcl_ns > 0) {
            bench_json_num(&j, "ratio_vs_fcl_obbrss", slots[k].impl.ns_per_op / fcl_ns);
        }
        bench_json_emit(&j);
    }
}
