// libccd 2.1 peer (Debian's build is double precision, CCD_DOUBLE).
//
// libccd sees shapes only through support callbacks; each query object here
// carries its pose as a rotation matrix (built in prepare, outside the timed
// loop) and a pointer to the shape. Debian's libccd has no distance query
// (ccdGJKDist arrived after 2.1), so only the boolean intersection tests
// are measured: ccdGJKIntersect and ccdMPRIntersect.
#include "peers.h"

#include <math.h>
#include <stdlib.h>

#include <ccd/ccd.h>

// CCD_INIT leaves max_iterations unbounded; GJK intersection needs a few
// dozen at most on these shapes, so this only guards against a hang.
#define BENCH_CCD_MAX_ITERATIONS 500

typedef struct ccd_shape {
    const bench_shape* shape;
    double* points;  // hull points widened to double
    int point_count;
} ccd_shape;

typedef struct ccd_object {
    const ccd_shape* shape;
    double rot[9];  // row-major, local -> world
    double pos[3];
} ccd_object;

typedef struct ccd_context {
    ccd_shape shape_a, shape_b;
    int n;
    ccd_object* a;
    ccd_object* b;
} ccd_context;

static void quat_to_matrix(const float qf[4], double m[9])
{
    double x = qf[0], y = qf[1], z = qf[2], w = qf[3];
    double s = 1.0 / sqrt(x * x + y * y + z * z + w * w);
    x *= s, y *= s, z *= s, w *= s;
    m[0] = 1 - 2 * (y * y + z * z), m[1] = 2 * (x * y - z * w), m[2] = 2 * (x * z + y * w);
    m[3] = 2 * (x * y + z * w), m[4] = 1 - 2 * (x * x + z * z), m[5] = 2 * (y * z - x * w);
    m[6] = 2 * (x * z - y * w), m[7] = 2 * (y * z + x * w), m[8] = 1 - 2 * (x * x + y * y);
}

static void support(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out)
{
    const ccd_object* o = obj;
    const double* r = o->rot;
    const double* v = dir->v;
    // Direction into the local frame: R^T dir.
    double d[3] = {r[0] * v[0] + r[3] * v[1] + r[6] * v[2], r[1] * v[0] + r[4] * v[1] + r[7] * v[2],
                   r[2] * v[0] + r[5] * v[1] + r[8] * v[2]};
    const bench_shape* s = o->shape->shape;
    double p[3] = {0, 0, 0};
    switch (s->kind) {
    case BENCH_SHAPE_BOX:
        for (int k = 0; k < 3; k++) {
            p[k] = d[k] >= 0 ? s->half_extents[k] : -(double)s->half_extents[k];
        }
        break;
    case BENCH_SHAPE_HULL: {
        const double* pts = o->shape->points;
        int best = 0;
        double best_dot = -INFINITY;
        for (int i = 0; i < o->shape->point_count; i++) {
            double dot = pts[3 * i] * d[0] + pts[3 * i + 1] * d[1] + pts[3 * i + 2] * d[2];
            if (dot > best_dot) {
                best_dot = dot;
                best = i;
            }
        }
        p[0] = pts[3 * best], p[1] = pts[3 * best + 1], p[2] = pts[3 * best + 2];
        break;
    }
    case BENCH_SHAPE_CAPSULE: {
        double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        double k = len > 0 ? s->radius / len : 0;
        p[0] = d[0] * k;
        p[1] = d[1] * k;
        p[2] = d[2] * k + (d[2] >= 0 ? s->half_height : -(double)s->half_height);
        break;
    }
    }
    for (int k = 0; k < 3; k++) {
        out->v[k] = r[3 * k] * p[0] + r[3 * k + 1] * p[1] + r[3 * k + 2] * p[2] + o->pos[k];
    }
}

static void center(const void* obj, ccd_vec3_t* out)
{
    // Every bench shape has its local origin inside (boxes and capsules are
    // centred, hulls are centred on their bounding box).
    const ccd_object* o = obj;
    ccdVec3Set(out, o->pos[0], o->pos[1], o->pos[2]);
}

static int init_shape(ccd_shape* cs, const bench_shape* s)
{
    cs->shape = s;
    cs->points = NULL;
    cs->point_count = 0;
    if (s->kind == BENCH_SHAPE_HULL) {
        cs->points = malloc(sizeof(double) * 3 * (size_t)s->point_count);
        if (cs->points == NULL) {
            return -1;
        }
        for (int i = 0; i < 3 * s->point_count; i++) {
            cs->points[i] = s->points[i];
        }
        cs->point_count = s->point_count;
    }
    return 0;
}

static void set_object(ccd_object* o, const ccd_shape* s, const bench_pose* pose)
{
    o->shape = s;
    quat_to_matrix(pose->q, o->rot);
    for (int k = 0; k < 3; k++) {
        o->pos[k] = pose->p[k];
    }
}

void* bench_ccd_prepare(const bench_pairs* pairs)
{
    ccd_context* c = calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    c->n = pairs->n;
    c->a = malloc(sizeof(ccd_object) * (size_t)(pairs->n > 0 ? pairs->n : 1));
    c->b = malloc(sizeof(ccd_object) * (size_t)(pairs->n > 0 ? pairs->n : 1));
    if (c->a == NULL || c->b == NULL || init_shape(&c->shape_a, pairs->a) != 0 ||
        init_shape(&c->shape_b, pairs->b) != 0) {
        bench_ccd_destroy(c);
        return NULL;
    }
    for (int i = 0; i < pairs->n; i++) {
        set_object(&c->a[i], &c->shape_a, &pairs->pose_a[i]);
        set_object(&c->b[i], &c->shape_b, &pairs->pose_b[i]);
    }
    return c;
}

static ccd_t make_ccd(void)
{
    ccd_t ccd;
    CCD_INIT(&ccd);
    ccd.support1 = support;
    ccd.support2 = support;
    ccd.center1 = center;
    ccd.center2 = center;
    ccd.max_iterations = BENCH_CCD_MAX_ITERATIONS;
    return ccd;
}

void bench_ccd_gjk_intersect(void* ctx, unsigned char* out)
{
    ccd_context* c = ctx;
    ccd_t ccd = make_ccd();
    for (int i = 0; i < c->n; i++) {
        out[i] = (unsigned char)(ccdGJKIntersect(&c->a[i], &c->b[i], &ccd) != 0);
    }
}

void bench_ccd_mpr_intersect(void* ctx, unsigned char* out)
{
    ccd_context* c = ctx;
    ccd_t ccd = make_ccd();
    for (int i = 0; i < c->n; i++) {
        out[i] = (unsigned char)(ccdMPRIntersect(&c->a[i], &c->b[i], &ccd) != 0);
    }
}

void bench_ccd_destroy(void* ctx)
{
    ccd_context* c = ctx;
    if (c == NULL) {
        return;
    }
    free(c->shape_a.points);
    free(c->shape_b.points);
    free(c->a);
    free(c->b);
    free(c);
}
