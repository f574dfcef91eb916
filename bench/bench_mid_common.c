// carom_bench_mid's shared pieces (bench_mid.h): poses, meshes, timing and
// the settling of triangle pairs in double precision.
#define _POSIX_C_SOURCE 200809L

#include "bench_mid.h"

void fail(const char* what)
{
    fprintf(stderr, "carom_bench_mid: %s\n", what);
    exit(1);
}

void* xmalloc(size_t size)
{
    void* p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        fail("out of memory");
    }
    return p;
}

// ---- poses (double, then rounded to float once) ---------------------------------

void quat_axis_angle(const double axis[3], double angle, double q[4])
{
    double len = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double s = sin(0.5 * angle) / len;
    q[0] = axis[0] * s, q[1] = axis[1] * s, q[2] = axis[2] * s, q[3] = cos(0.5 * angle);
}

// out = a * b (apply b first), quaternions (x, y, z, w).
void quat_mul(const double a[4], const double b[4], double out[4])
{
    out[0] = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
    out[1] = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
    out[2] = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
    out[3] = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
}

// out = m v, m row-major (a double[3][3] passed as &m[0][0]).
void mat_apply(const double* m, const double v[3], double out[3])
{
    for (int i = 0; i < 3; i++) {
        out[i] = m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2];
    }
}

// A pose as the peers get it (float) and as carom gets it.
bench_pose make_pose(const double p[3], const double q[4])
{
    bench_pose pose;
    for (int k = 0; k < 3; k++) {
        pose.p[k] = (float)p[k];
    }
    for (int k = 0; k < 4; k++) {
        pose.q[k] = (float)q[k];
    }
    return pose;
}

// The pose every case gives its first mesh (and the ray cases their mesh):
// not the identity, so that every implementation pays for its change of
// frame. 0.6 rad about (1, 2, 3), at (0.25, -0.5, 1).
bench_pose pose_first(void)
{
    const double axis[3] = {1, 2, 3}, p[3] = {0.25, -0.5, 1.0};
    double q[4];
    quat_axis_angle(axis, 0.6, q);
    return make_pose(p, q);
}

// The second mesh's pose: in the first mesh's frame, turned by `angle` about
// `axis` through `centre` (the second mesh's box centre), then moved by
// `offset`. world = Ra (c + Rd (x - c) + t) + pa.
bench_pose pose_relative(const bench_pose* first, const double centre[3], const double axis[3],
                         double angle, const double offset[3])
{
    double qa[4] = {first->q[0], first->q[1], first->q[2], first->q[3]};
    double qd[4], qb[4], rd[3][3], ra[3][3], rc[3], local[3], world[3], p[3];
    quat_axis_angle(axis, angle, qd);
    quat_mul(qa, qd, qb);
    ref_quat_to_matrix(qd, rd);
    ref_quat_to_matrix(qa, ra);
    mat_apply(&rd[0][0], centre, rc);
    for (int k = 0; k < 3; k++) {
        local[k] = centre[k] - rc[k] + offset[k];
    }
    mat_apply(&ra[0][0], local, world);
    for (int k = 0; k < 3; k++) {
        p[k] = first->p[k] + world[k];
    }
    return make_pose(p, qb);
}

frame frame_of(const bench_pose* p)
{
    frame f;
    double q[4] = {p->q[0], p->q[1], p->q[2], p->q[3]};
    ref_quat_to_matrix(q, f.r);
    for (int k = 0; k < 3; k++) {
        f.t[k] = p->p[k];
    }
    return f;
}

void frame_apply(const frame* f, const float x[3], double out[3])
{
    const double v[3] = {x[0], x[1], x[2]};
    mat_apply(&f->r[0][0], v, out);
    for (int k = 0; k < 3; k++) {
        out[k] += f->t[k];
    }
}

// ---- meshes -----------------------------------------------------------------------

const char* const IMPL_NAME[IMPL_COUNT] = {
    "carom", "carom-boxtree", "carom-sah", "fcl-obbrss", "fcl-aabb", "bullet-bvh", "carom-any",
};

const carom_tree_kind CAROM_KIND[3] = {CAROM_TREE_AABB, CAROM_TREE_BOXTREE, CAROM_TREE_AABB_SAH};

static void mesh_bounds(mid_mesh* m)
{
    for (int k = 0; k < 3; k++) {
        m->lo[k] = INFINITY, m->hi[k] = -INFINITY;
    }
    for (int i = 0; i < m->data.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            m->lo[k] = fminf(m->lo[k], m->data.vertices[i][k]);
            m->hi[k] = fmaxf(m->hi[k], m->data.vertices[i][k]);
        }
    }
    m->size = fmaxf(m->hi[0] - m->lo[0], fmaxf(m->hi[1] - m->lo[1], m->hi[2] - m->lo[2]));
    for (int k = 0; k < 3; k++) {
        m->centre[k] = 0.5 * ((double)m->lo[k] + m->hi[k]);
    }
}

// The mesh's vertices as carom takes them, and its arrays as the peers do.
static void mesh_views(mid_mesh* m)
{
    m->vertices = xmalloc(sizeof(vec3s) * (size_t)m->data.vertex_count);
    for (int i = 0; i < m->data.vertex_count; i++) {
        for (int k = 0; k < 3; k++) {
            m->vertices[i].raw[k] = m->data.vertices[i][k];
        }
    }
    m->desc.vertices = &m->data.vertices[0][0];
    m->desc.vertex_count = m->data.vertex_count;
    m->desc.triangles = &m->data.triangles[0][0];
    m->desc.triangle_count = m->data.triangle_count;
}

// Loads a mesh. With `size` > 0 it is moved so that its box centre is the
// origin and scaled so that its largest extent is `size`; otherwise it is
// kept as the file has it.
void mesh_open(mid_mesh* m, const char* name, const char* file, float size)
{
    memset(m, 0, sizeof *m);
    m->name = name;
    int rc = mesh_load_named(file, &m->data);
    if (rc != MESH_OK) {
        fprintf(stderr, "carom_bench_mid: cannot load %s/%s: %s (run scripts/fetch-data.sh, or set "
                        "CAROM_DATA_DIR)\n",
                mesh_data_dir(), file, mesh_strerror(rc));
        exit(1);
    }
    mesh_bounds(m);
    if (size > 0) {
        const float s = size / m->size;
        for (int i = 0; i < m->data.vertex_count; i++) {
            for (int k = 0; k < 3; k++) {
                float* v = &m->data.vertices[i][k];
                *v = (float)((*v - m->centre[k]) * s);
            }
        }
        mesh_bounds(m);
    }
    mesh_views(m);
}

// A copy of `m` named `name` whose vertices are `vertices` (as many as m's),
// the triangles the same: a frame of a deforming mesh.
void mesh_moved(mid_mesh* out, const mid_mesh* m, const char* name, const float (*vertices)[3])
{
    memset(out, 0, sizeof *out);
    out->name = name;
    const size_t nv = (size_t)m->data.vertex_count, nt = (size_t)m->data.triangle_count;
    out->data.vertex_count = m->data.vertex_count;
    out->data.triangle_count = m->data.triangle_count;
    out->data.vertices = xmalloc(sizeof(float[3]) * nv);
    out->data.triangles = xmalloc(sizeof(int[3]) * nt);
    memcpy(out->data.vertices, vertices, sizeof(float[3]) * nv);
    memcpy(out->data.triangles, m->data.triangles, sizeof(int[3]) * nt);
    mesh_bounds(out);
    mesh_views(out);
}

carom_status carom_build(const mid_mesh* m, int kind, carom_mesh* out)
{
    carom_mesh_desc desc = {0};
    desc.tree = CAROM_KIND[kind];
    return carom_mesh_create(m->vertices, m->data.vertex_count, &m->data.triangles[0][0],
                             m->data.triangle_count, &desc, out);
}

const carom_mesh* mesh_carom(mid_mesh* m, int kind)
{
    if (!m->carom_built[kind]) {
        carom_status st = carom_build(m, kind, &m->carom[kind]);
        if (st != CAROM_OK) {
            fprintf(stderr, "carom_bench_mid: carom_mesh_create(%s, %s): %s\n", m->name,
                    IMPL_NAME[kind], carom_status_string(st));
            exit(1);
        }
        m->carom_built[kind] = true;
    }
    return &m->carom[kind];
}

void* mesh_fcl(mid_mesh* m, bench_fcl_bv bv)
{
    if (m->fcl[bv] == NULL) {
        m->fcl[bv] = bench_fcl_mesh_build(&m->desc, bv);
        if (m->fcl[bv] == NULL) {
            fail("FCL could not build a BVHModel");
        }
    }
    return m->fcl[bv];
}

void* mesh_bullet(mid_mesh* m)
{
    if (m->bullet == NULL) {
        m->bullet = bench_bullet_mesh_build(&m->desc);
        if (m->bullet == NULL) {
            fail("Bullet could not build a btBvhTriangleMeshShape");
        }
    }
    return m->bullet;
}

void mesh_close(mid_mesh* m)
{
    for (int k = 0; k < 3; k++) {
        carom_mesh_destroy(&m->carom[k]);
    }
    for (int k = 0; k < 2; k++) {
        if (m->fcl[k] != NULL) {
            bench_fcl_mesh_destroy(m->fcl[k]);
        }
    }
    if (m->bullet != NULL) {
        bench_bullet_mesh_destroy(m->bullet);
    }
    free(m->vertices);
    mesh_free(&m->data);
}

// Triangle t of a mesh at a pose, world coordinates, double.
void world_triangle(const mid_mesh* m, const frame* f, int t, double out[3][3])
{
    for (int j = 0; j < 3; j++) {
        frame_apply(f, m->data.vertices[m->data.triangles[t][j]], out[j]);
    }
}

// ---- timing -----------------------------------------------------------------------

// Sets each slot's repeat count from `single_ns` (one untimed run that
// produced the answers), times every slot with bench_measure (interleaved,
// median) and divides by the queries per round.
void measure_slots(timed_slot* slots, const double* single_ns, int count,
                   const bench_options* opt)
{
    bench_impl impls[MAX_IMPLS];
    const double target = opt->quick ? QUICK_TARGET_RUN_NS : TARGET_RUN_NS;
    for (int k = 0; k < count; k++) {
        if (slots[k].repeat != NULL) {
            double r = single_ns[k] > 0 ? ceil(target / single_ns[k]) : 1.0;
            *slots[k].repeat = (int)fmin(fmax(r, 1.0), 100000.0);
        }
        impls[k] = slots[k].impl;
    }
    bench_measure(impls, count, 1, opt->reps);
    for (int k = 0; k < count; k++) {
        double per = (double)slots[k].ops * (slots[k].repeat != NULL ? *slots[k].repeat : 1);
        slots[k].impl.ns_per_op = impls[k].ns_per_op / per;
        slots[k].impl.ns_min = impls[k].ns_min / per;
    }
}

// ---- triangle pairs ----------------------------------------------------------------

int pair_compare(const void* x, const void* y)
{
    const bench_tri_pair* a = x;
    const bench_tri_pair* b = y;
    if (a->a != b->a) {
        return (a->a > b->a) - (a->a < b->a);
    }
    return (a->b > b->b) - (a->b < b->b);
}

// Sorts and removes repeats; returns the new count.
int pairs_unique(bench_tri_pair* p, int n)
{
    qsort(p, (size_t)n, sizeof *p, pair_compare);
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m == 0 || pair_compare(&p[m - 1], &p[i]) != 0) {
            p[m++] = p[i];
        }
    }
    return m;
}

bool pairs_contain(const bench_tri_pair* sorted, int n, bench_tri_pair p)
{
    return bsearch(&p, sorted, (size_t)n, sizeof p, pair_compare) != NULL;
}

double pair_separation(const pair_geometry* g, bench_tri_pair p, bool* degenerate)
{
    double ta[3][3], tb[3][3];
    world_triangle(g->a, &g->fa, p.a, ta);
    world_triangle(g->b, &g->fb, p.b, tb);
    *degenerate = ref_mesh_triangle_degenerate(g->a->data.vertices, g->a->data.triangles, p.a) ||
                  ref_mesh_triangle_degenerate(g->b->data.vertices, g->b->data.triangles, p.b);
    return ref_tri_tri_signed_distance(ta, tb);
}

static void settle(pair_diff* d, double s, bool degenerate, bool reported_here, double band)
{
    if (degenerate) {
        d->degenerate++;
        return;
    }
    if (fabs(s) <= band) {
        d->touching++;
        d->max_touching = fmax(d->max_touching, fabs(s));
        return;
    }
    // Reported but apart, or not reported but intersecting: wrong.
    bool here_wrong = reported_here ? s > 0 : s < 0;
    if (here_wrong) {
        d->wrong_here++;
        d->max_wrong_here = fmax(d->max_wrong_here, fabs(s));
    } else {
        d->wrong_ref++;
        d->max_wrong_ref = fmax(d->max_wrong_ref, fabs(s));
    }
}

// `verbose_name`: print the first few differing pairs to stderr under it.
pair_diff pairs_diff(const pair_geometry* g, const bench_tri_pair* ref, int nref,
                     const bench_tri_pair* got, int ngot, double band,
                     const char* verbose_name)
{
    pair_diff d = {0};
    int i = 0, j = 0;
    while (i < nref || j < ngot) {
        int c = i >= nref ? 1 : j >= ngot ? -1 : pair_compare(&ref[i], &got[j]);
        if (c == 0) {
            i++, j++;
            continue;
        }
        const bool extra = c > 0;
        const bench_tri_pair p = extra ? got[j++] : ref[i++];
        bool degenerate;
        const double s = pair_separation(g, p, &degenerate);
        d.missing += !extra;
        d.extra += extra;
        settle(&d, s, degenerate, extra, band);
        if (verbose_name != NULL && d.missing + d.extra <= 8) {
            bench_note("  %s: pair (%d,%d) %s, %s %.3g%s", verbose_name, p.a, p.b,
                       extra ? "extra" : "missing", s > 0 ? "apart by" : "overlapping by",
                       fabs(s), degenerate ? " (zero-area triangle)" : "");
        }
    }
    return d;
}

void pair_diff_text(const pair_diff* d, char* text, size_t size)
{
    int n = d->missing + d->extra;
    if (n == 0) {
        snprintf(text, size, "ok");
        return;
    }
    int w = snprintf(text, size, "%d pairs differ (%d missing, %d extra)", n, d->missing, d->extra);
    if (d->touching == n) {
        snprintf(text + w, size - (size_t)w, ", all within %.1e of touching", d->max_touching);
        return;
    }
    if (d->degenerate > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d with a zero-area triangle", d->degenerate);
    }
    if (d->wrong_here > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d wrong here by up to %.2g", d->wrong_here,
                      d->max_wrong_here);
    }
    if (d->wrong_ref > 0) {
        w += snprintf(text + w, size - (size_t)w, ", %d wrong in carom by up to %.2g", d->wrong_ref,
                      d->max_wrong_ref);
    }
    if (d->touching > 0) {
        snprintf(text + w, size - (size_t)w, ", %d touching", d->touching);
    }
}

// Differences of several poses, summed, so that a sweep's line reads as
// one case's does.
void pair_diff_add(pair_diff* sum, const pair_diff* d)
{
    sum->missing += d->missing;
    sum->extra += d->extra;
    sum->touching += d->touching;
    sum->max_touching = fmax(sum->max_touching, d->max_touching);
    sum->degenerate += d->degenerate;
    sum->wrong_here += d->wrong_here;
    sum->max_wrong_here = fmax(sum->max_wrong_here, d->max_wrong_here);
    sum->wrong_ref += d->wrong_ref;
    sum->max_wrong_ref = fmax(sum->max_wrong_ref, d->max_wrong_ref);
}
