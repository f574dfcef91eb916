// Convex hull geometry for the peers (FCL needs a face list, Bullet and
// libccd the extreme points), computed independently of carom with qhull_r so
// that the peers work even before carom's hull builder does.
#include "peers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

typedef struct ring_entry {
    double angle;
    int vertex;
} ring_entry;

static int compare_ring(const void* a, const void* b)
{
    double x = ((const ring_entry*)a)->angle, y = ((const ring_entry*)b)->angle;
    return (x > y) - (x < y);
}

void bench_hull_free(bench_hull_geometry* hull)
{
    free(hull->points);
    free(hull->face_first);
    free(hull->face_vertices);
    memset(hull, 0, sizeof *hull);
}

// Sorts a face's vertices counter-clockwise about its outward normal: qhull
// lists the vertices of merged facets by id, not in ring order.
static void order_ring(const float* pts, const double normal[3], int* verts, int count,
                       ring_entry* scratch)
{
    double c[3] = {0, 0, 0};
    for (int k = 0; k < count; k++) {
        for (int a = 0; a < 3; a++) {
            c[a] += pts[3 * verts[k] + a];
        }
    }
    for (int a = 0; a < 3; a++) {
        c[a] /= count;
    }
    // u: towards the first vertex, in the plane; v = n x u.
    double u[3];
    for (int a = 0; a < 3; a++) {
        u[a] = pts[3 * verts[0] + a] - c[a];
    }
    double un = u[0] * normal[0] + u[1] * normal[1] + u[2] * normal[2];
    for (int a = 0; a < 3; a++) {
        u[a] -= un * normal[a];
    }
    double v[3] = {normal[1] * u[2] - normal[2] * u[1], normal[2] * u[0] - normal[0] * u[2],
                   normal[0] * u[1] - normal[1] * u[0]};
    for (int k = 0; k < count; k++) {
        double d[3];
        for (int a = 0; a < 3; a++) {
            d[a] = pts[3 * verts[k] + a] - c[a];
        }
        scratch[k].angle = atan2(d[0] * v[0] + d[1] * v[1] + d[2] * v[2],
                                 d[0] * u[0] + d[1] * u[1] + d[2] * u[2]);
        scratch[k].vertex = verts[k];
    }
    qsort(scratch, (size_t)count, sizeof *scratch, compare_ring);
    for (int k = 0; k < count; k++) {
        verts[k] = scratch[k].vertex;
    }
}

int bench_hull_compute(const float* points, int count, bench_hull_geometry* out)
{
    memset(out, 0, sizeof *out);
    if (points == NULL || count < 4) {
        return -1;
    }
    coordT* coords = malloc(sizeof(coordT) * 3 * (size_t)count);
    int* remap = malloc(sizeof(int) * (size_t)count);
    if (coords == NULL || remap == NULL) {
        free(coords);
        free(remap);
        return -1;
    }
    for (int i = 0; i < 3 * count; i++) {
        coords[i] = points[i];
    }
    qhT qh_storage;
    qhT* qh = &qh_storage;
    qh_zero(qh, stderr);
    // Plain "qhull": 3-d defaults pre-merge coplanar facets (C-0, Qx).
    char options[] = "qhull";
    int exitcode = qh_new_qhull(qh, 3, count, coords, False, options, NULL, stderr);
    int status = -1;
    if (exitcode == 0) {
        facetT* facet;
        vertexT* vertex;
        vertexT** vertexp;
        // Extreme points, renumbered densely.
        int nv = 0, nf = 0, nfv = 0;
        for (int i = 0; i < count; i++) {
            remap[i] = -1;
        }
        FORALLvertices
        {
            remap[qh_pointid(qh, vertex->point)] = nv++;
        }
        FORALLfacets
        {
            nf++;
            nfv += qh_setsize(qh, facet->vertices);
        }
        out->points = malloc(sizeof(float) * 3 * (size_t)nv);
        out->face_first = malloc(sizeof(int) * (size_t)(nf + 1));
        out->face_vertices = malloc(sizeof(int) * (size_t)nfv);
        ring_entry* scratch = malloc(sizeof(ring_entry) * (size_t)(nfv > 0 ? nfv : 1));
        if (out->points != NULL && out->face_first != NULL && out->face_vertices != NULL &&
            scratch != NULL) {
            for (int i = 0; i < count; i++) {
                if (remap[i] >= 0) {
                    memcpy(out->points + 3 * remap[i], points + 3 * i, 3 * sizeof(float));
                }
            }
            int f = 0, at = 0;
            FORALLfacets
            {
                out->face_first[f] = at;
                int first = at;
                FOREACHvertex_(facet->vertices)
                {
                    out->face_vertices[at++] = remap[qh_pointid(qh, vertex->point)];
                }
                double n[3] = {facet->normal[0], facet->normal[1], facet->normal[2]};
                order_ring(out->points, n, out->face_vertices + first, at - first, scratch);
                f++;
            }
            out->face_first[f] = at;
            out->point_count = nv;
            out->face_count = nf;
            status = 0;
        }
        free(scratch);
    }
    int curlong, totlong;
    qh_freeqhull(qh, !qh_ALL);
    qh_memfreeshort(qh, &curlong, &totlong);
    free(coords);
    free(remap);
    if (status != 0) {
        bench_hull_free(out);
    }
    return status;
}
