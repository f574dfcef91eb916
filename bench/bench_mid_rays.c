// carom_bench_mid's ray cases: closest (and any) hits against a mesh, every
// implementation compared with carom and settled in double precision.
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

// ---- ray casts -------------------------------------------------------------------------

typedef struct ray_ctx {
    impl_id id;
    int repeat;
    const carom_mesh* mesh;
    carom_xform pose;
    carom_ray_mode mode;
    const carom_ray* rays;
    int n;
    void* bullet;
    bench_ray_hit* out;
    int not_done;  // carom answers whose state was not CAROM_DONE
} ray_ctx;

static void run_rays(void* arg)
{
    ray_ctx* c = arg;
    for (int r = 0; r < c->repeat; r++) {
        if (c->bullet != NULL) {
            bench_bullet_raycast(c->bullet, c->out);
            continue;
        }
        int not_done = 0;
        for (int i = 0; i < c->n; i++) {
            carom_mesh_hit h = carom_mesh_raycast(c->mesh, c->pose, c->rays[i], c->mode);
            c->out[i].hit = h.hit;
            c->out[i].triangle = h.triangle;
            c->out[i].fraction = h.fraction;
            not_done += h.state != CAROM_DONE;
        }
        c->not_done = not_done;
    }
}

// Rays from points on a sphere around the mesh (centre of its box, radius
// 0.75 of the box diagonal, uniform directions) through uniform points of
// its box and on as far again, so that every ray crosses the whole box: a
// mix of hits and misses. Built in the mesh's frame, then moved to world
// with its pose and rounded to float once; every implementation gets these
// floats.
void make_rays(const mid_mesh* m, const bench_pose* pose, int n, uint64_t seed, carom_ray* rays,
               bench_ray* peer_rays)
{
    const frame f = frame_of(pose);
    double diag = 0;
    for (int k = 0; k < 3; k++) {
        diag += ((double)m->hi[k] - m->lo[k]) * ((double)m->hi[k] - m->lo[k]);
    }
    const double radius = 0.75 * sqrt(diag);
    bench_rng rng = bench_rng_seed(seed);
    for (int i = 0; i < n; i++) {
        double dir[3], origin[3], target[3], local_d[3], world_o[3], world_d[3];
        bench_rng_direction(&rng, dir);
        for (int k = 0; k < 3; k++) {
            origin[k] = m->centre[k] + radius * dir[k];
            target[k] = bench_rng_range(&rng, m->lo[k], m->hi[k]);
            local_d[k] = 2.0 * (target[k] - origin[k]);
        }
        mat_apply(&f.r[0][0], origin, world_o);
        mat_apply(&f.r[0][0], local_d, world_d);
        for (int k = 0; k < 3; k++) {
            rays[i].origin.raw[k] = (float)(world_o[k] + f.t[k]);
            rays[i].translation.raw[k] = (float)world_d[k];
            peer_rays[i].origin[k] = rays[i].origin.raw[k];
            peer_rays[i].translation[k] = rays[i].translation.raw[k];
        }
    }
}

// The double reference of a ray case: the mesh's triangles in world
// coordinates and their boxes grown by the touching band.
typedef struct ray_world {
    const mid_mesh* mesh;
    double (*vertices)[3];
    double (*boxes)[6];  // lo xyz, hi xyz
    double band;
} ray_world;

static ray_world ray_world_make(const mid_mesh* m, const bench_pose* pose, double band)
{
    ray_world w = {m, NULL, NULL, band};
    const frame f = frame_of(pose);
    w.vertices = xmalloc(sizeof(double[3]) * (size_t)m->data.vertex_count);
    w.boxes = xmalloc(sizeof(double[6]) * (size_t)m->data.triangle_count);
    for (int i = 0; i < m->data.vertex_count; i++) {
        frame_apply(&f, m->data.vertices[i], w.vertices[i]);
    }
    for (int t = 0; t < m->data.triangle_count; t++) {
        for (int k = 0; k < 3; k++) {
            double lo = INFINITY, hi = -INFINITY;
            for (int j = 0; j < 3; j++) {
                double v = w.vertices[m->data.triangles[t][j]][k];
                lo = fmin(lo, v), hi = fmax(hi, v);
            }
            w.boxes[t][k] = lo - band;
            w.boxes[t][3 + k] = hi + band;
        }
    }
    return w;
}

// Does segment o + s d, s in [0, 1], meet the box? (slabs)
static bool segment_meets_box(const double o[3], const double d[3], const double box[6])
{
    double s0 = 0, s1 = 1;
    for (int k = 0; k < 3; k++) {
        if (d[k] == 0) {
            if (o[k] < box[k] || o[k] > box[3 + k]) {
                return false;
            }
            continue;
        }
        double a = (box[k] - o[k]) / d[k], b = (box[3 + k] - o[k]) / d[k];
        s0 = fmax(s0, fmin(a, b));
        s1 = fmin(s1, fmax(a, b));
        if (s0 > s1) {
            return false;
        }
    }
    return true;
}

// One ray against one triangle in double: the distance between the
// segment and the triangle, the fraction of the segment's closest point
// (the crossing when they meet), and whether the crossing is certain in
// float: at least the band away from every edge, at more than 0.01 rad to
// the triangle's plane. Nearly parallel crossings report no fraction
// (*fraction = NAN): any point of the overlap will do.
typedef struct ray_segment {
    double o[3], d[3], e[3], dd;
} ray_segment;

static double dot3(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static ray_segment ray_segment_of(const carom_ray* ray)
{
    ray_segment r;
    for (int k = 0; k < 3; k++) {
        r.o[k] = ray->origin.raw[k];
        r.d[k] = ray->translation.raw[k];
        r.e[k] = r.o[k] + r.d[k];
    }
    r.dd = dot3(r.d, r.d);
    return r;
}

static double ray_triangle(const ray_world* w, const ray_segment* r, int tri, double* fraction,
                           bool* robust)
{
    const int* idx = w->mesh->data.triangles[tri];
    const double* v[3] = {w->vertices[idx[0]], w->vertices[idx[1]], w->vertices[idx[2]]};
    double cs[3], ct[3], rel[3], e1[3], e2[3], n[3];
    double dist = ref_segment_triangle(r->o, r->e, v[0], v[1], v[2], cs, ct);
    for (int k = 0; k < 3; k++) {
        rel[k] = cs[k] - r->o[k];
        e1[k] = v[1][k] - v[0][k];
        e2[k] = v[2][k] - v[0][k];
    }
    n[0] = e1[1] * e2[2] - e1[2] * e2[1];
    n[1] = e1[2] * e2[0] - e1[0] * e2[2];
    n[2] = e1[0] * e2[1] - e1[1] * e2[0];
    double nn = sqrt(dot3(n, n));
    bool steep = nn > 0 && fabs(dot3(n, r->d)) >= 0.01 * nn * sqrt(r->dd);
    *fraction = steep && r->dd > 0 ? dot3(rel, r->d) / r->dd : NAN;
    *robust = dist == 0 && steep;
    for (int j = 0; j < 3 && *robust; j++) {
        *robust = ref_point_segment(ct, v[j], v[(j + 1) % 3], NULL) > w->band;
    }
    return dist;
}

// What the double reference says about one ray: is there a certain hit,
// and where is the nearest one.
typedef struct ray_truth {
    bool robust;
    double f_robust;  // least fraction of a certain hit
} ray_truth;

static ray_truth ray_reference(const ray_world* w, const carom_ray* ray)
{
    ray_truth t = {false, INFINITY};
    const ray_segment r = ray_segment_of(ray);
    for (int tri = 0; tri < w->mesh->data.triangle_count; tri++) {
        if (!segment_meets_box(r.o, r.d, w->boxes[tri])) {
            continue;
        }
        double f;
        bool robust;
        ray_triangle(w, &r, tri, &f, &robust);
        if (robust) {
            t.robust = true;
            t.f_robust = fmin(t.f_robust, f);
        }
    }
    return t;
}

// Is an answer right by the reference? A miss is right when no hit is
// certain. A hit is right when its triangle is within the band of the ray
// at the reported fraction (within ftol) and, for a closest-hit query, no
// certain hit lies nearer (by more than ftol).
static bool ray_judge(const ray_world* w, const carom_ray* ray, const ray_truth* t,
                      const bench_ray_hit* h, bool closest, double ftol)
{
    if (!h->hit) {
        return !t->robust;
    }
    if (h->triangle < 0 || h->triangle >= w->mesh->data.triangle_count) {
        return false;
    }
    const ray_segment r = ray_segment_of(ray);
    double f;
    bool robust;
    if (ray_triangle(w, &r, h->triangle, &f, &robust) > w->band) {
        return false;
    }
    if (!isnan(f) && fabs(h->fraction - f) > ftol) {
        return false;
    }
    return !closest || !t->robust || h->fraction <= t->f_robust + ftol;
}

// How one implementation's rays compare with carom's and with the double
// reference.
typedef struct ray_tally {
    int hits;
    int differ_hit;     // hit against miss, compared with carom
    int differ_frac;    // both hit, fractions apart by more than the tolerance
    double max_frac;    // largest such gap, as a distance (fraction * |translation|)
    int wrong;          // resolved rays this implementation gets wrong
    int wrong_ref;      // differing rays carom gets wrong
    int either;         // differing rays where both answers are accepted
    int unresolved;     // differing rays left unresolved (beyond MAX_RESOLVED)
    char check[200];
} ray_tally;

static double ray_length(const carom_ray* r)
{
    const vec3s d = r->translation;
    return sqrt((double)d.raw[0] * d.raw[0] + (double)d.raw[1] * d.raw[1] +
                (double)d.raw[2] * d.raw[2]);
}

// Does answer h differ from carom's closest hit h0? An any-hit answer may
// lie farther along the ray.
static bool ray_differs(const bench_ray_hit* h0, const bench_ray_hit* h, bool closest, double ftol,
                        ray_tally* t, double length)
{
    if (h0->hit != h->hit) {
        t->differ_hit++;
        return true;
    }
    if (!h->hit) {
        return false;
    }
    double gap = (double)h->fraction - h0->fraction;
    if (closest ? fabs(gap) <= ftol : gap >= -ftol) {
        return false;
    }
    t->differ_frac++;
    t->max_frac = fmax(t->max_frac, fabs(gap) * length);
    return true;
}

static void ray_check_text(ray_tally* t, bool reference, int n, int resolved)
{
    int differ = t->differ_hit + t->differ_frac;
    if (differ == 0 && t->wrong == 0) {
        snprintf(t->check, sizeof t->check, "ok");
    } else if (reference || differ == 0) {
        snprintf(t->check, sizeof t->check, "%d/%d checked rays wrong per the double reference",
                 t->wrong, resolved);
    } else {
        int w = snprintf(t->check, sizeof t->check,
                         "%d/%d differ from carom (%d hit/miss, %d fraction by up to %.2g); double "
                         "reference: %d wrong here, %d in carom, %d either way",
                         differ, n, t->differ_hit, t->differ_frac, t->max_frac, t->wrong,
                         t->wrong_ref, t->either);
        if (t->unresolved > 0) {
            snprintf(t->check + w, sizeof t->check - (size_t)w, ", %d unresolved", t->unresolved);
        }
    }
}

// Compares every implementation with carom (slot 0) and settles the
// differences, plus a spread sample, with the double reference.
static int ray_checks(const ray_world* w, const carom_ray* rays, int n, ray_ctx* ctx,
                      const impl_id* ids, int count, ray_tally* tally, const bench_options* opt)
{
    unsigned char* differs = xmalloc((size_t)n * (size_t)count);
    unsigned char* resolve = calloc((size_t)n, 1);
    if (resolve == NULL) {
        fail("out of memory");
    }
    const double tol = RAY_TOL * w->mesh->size;
    int disputed = 0;
    for (int i = 0; i < n; i++) {
        const double length = ray_length(&rays[i]);
        const double ftol = tol / length;
        bool any = false;
        for (int k = 0; k < count; k++) {
            tally[k].hits += ctx[k].out[i].hit != 0;
            differs[(size_t)i * count + k] =
                k > 0 && ray_differs(&ctx[0].out[i], &ctx[k].out[i], ids[k] != IMPL_CAROM_ANY,
                                     ftol, &tally[k], length);
            any = any || differs[(size_t)i * count + k];
        }
        if (any && disputed < MAX_RESOLVED) {
            resolve[i] = 1;
        }
        disputed += any;
    }
    const int sample = opt->quick ? QUICK_RAY_SAMPLE : RAY_SAMPLE;
    const int stride = n > sample ? n / sample : 1;
    for (int i = 0; i < n; i += stride) {
        resolve[i] = 1;
    }
    int resolved = 0;
    for (int i = 0; i < n; i++) {
        const double ftol = tol / ray_length(&rays[i]);
        ray_truth truth = {false, INFINITY};
        if (resolve[i]) {
            truth = ray_reference(w, &rays[i]);
            resolved++;
        }
        bool carom_ok = !resolve[i] || ray_judge(w, &rays[i], &truth, &ctx[0].out[i], true, ftol);
        for (int k = 0; k < count; k++) {
            bool ok = !resolve[i] || ray_judge(w, &rays[i], &truth, &ctx[k].out[i],
                                               ids[k] != IMPL_CAROM_ANY, ftol);
            tally[k].wrong += !ok;
            if (!ok && opt->verbose && tally[k].wrong <= 4) {
                const bench_ray_hit* h = &ctx[k].out[i];
                bench_note("  ray %d: %s hit=%d triangle=%d fraction=%.9g; reference: %s %.9g", i,
                           IMPL_NAME[ids[k]], h->hit, h->triangle, h->fraction,
                           truth.robust ? "certain hit at" : "no certain hit", truth.f_robust);
            }
            if (!differs[(size_t)i * count + k]) {
                continue;
            }
            if (!resolve[i]) {
                tally[k].unresolved++;
            } else if (ok && carom_ok) {
                tally[k].either++;
            } else if (!carom_ok) {
                tally[k].wrong_ref++;
            }
        }
    }
    if (disputed > 0) {
        bench_note("  %d rays disputed, %d resolved in double", disputed, resolved);
    }
    free(differs);
    free(resolve);
    return resolved;
}

void ray_case_run(const ray_case* rc, const bench_options* opt)
{
    static const impl_id ids[] = {IMPL_CAROM, IMPL_CAROM_BOXTREE, IMPL_CAROM_SAH, IMPL_CAROM_ANY,
                                  IMPL_BULLET};
    enum { COUNT = sizeof ids / sizeof ids[0] };
    const int n = opt->quick ? QUICK_RAYS : RAYS;
    mid_mesh* m = rc->mesh;
    const bench_pose pose = pose_first();
    carom_ray* rays = xmalloc(sizeof(carom_ray) * (size_t)n);
    bench_ray* peer_rays = xmalloc(sizeof(bench_ray) * (size_t)n);
    make_rays(m, &pose, n, rc->seed, rays, peer_rays);
    bench_note("case %s: %d rays against %d triangles", rc->name, n, m->data.triangle_count);

    ray_ctx ctx[COUNT];
    timed_slot slots[COUNT];
    double single[COUNT];
    for (int k = 0; k < COUNT; k++) {
        ray_ctx* c = &ctx[k];
        memset(c, 0, sizeof *c);
        c->id = ids[k];
        c->repeat = 1;
        c->n = n;
        c->rays = rays;
        c->pose = bench_pose_xform(&pose);
        c->out = xmalloc(sizeof(bench_ray_hit) * (size_t)n);
        if (ids[k] == IMPL_BULLET) {
            c->bullet = bench_bullet_raycast_prepare(mesh_bullet(m), &pose, peer_rays, n);
            if (c->bullet == NULL) {
                fail("Bullet ray casts could not be prepared");
            }
        } else {
            c->mesh = mesh_carom(m, ids[k] == IMPL_CAROM_ANY ? 0 : (int)ids[k]);
            c->mode = ids[k] == IMPL_CAROM_ANY ? CAROM_RAY_ANY : CAROM_RAY_CLOSEST;
        }
        double t0 = bench_now_ns();
        run_rays(c);
        single[k] = bench_now_ns() - t0;
        slots[k] = (timed_slot){{IMPL_NAME[ids[k]], run_rays, c, 0, 0}, ids[k], &c->repeat, n};
    }
    measure_slots(slots, single, COUNT, opt);

    ray_world w = ray_world_make(m, &pose, TOUCH_BAND * m->size);
    ray_tally tally[COUNT];
    memset(tally, 0, sizeof tally);
    int resolved = ray_checks(&w, rays, n, ctx, ids, COUNT, tally, opt);
    double bullet_ns = slots[COUNT - 1].impl.ns_per_op;
    for (int k = 0; k < COUNT; k++) {
        ray_check_text(&tally[k], k == 0, n, resolved);
        if (is_carom(ids[k]) && ctx[k].not_done > 0) {
            snprintf(tally[k].check, sizeof tally[k].check, "%d rays not done", ctx[k].not_done);
        }
        bench_json j;
        bench_json_begin(&j, "mid", rc->name, slots[k].impl.name, n, slots[k].impl.ns_per_op,
                         tally[k].check);
        bench_json_str(&j, "mode", ids[k] == IMPL_CAROM_ANY ? "ray-any" : "ray-closest");
        bench_json_int(&j, "triangles", m->data.triangle_count);
        bench_json_int(&j, "hits", tally[k].hits);
        bench_json_int(&j, "resolved", resolved);
        bench_json_num(&j, "ns_min", slots[k].impl.ns_min);
        bench_json_int(&j, "repeat", ctx[k].repeat);
        if (ids[k] != IMPL_BULLET) {
            bench_json_num(&j, "ratio_vs_bullet_bvh", slots[k].impl.ns_per_op / bullet_ns);
        }
        bench_json_emit(&j);
    }
    for (int k = 0; k < COUNT; k++) {
        if (ctx[k].bullet != NULL) {
            bench_bullet_raycast_destroy(ctx[k].bullet);
        }
        free(ctx[k].out);
    }
    free(w.vertices);
    free(w.boxes);
    free(rays);
    free(peer_rays);
}
