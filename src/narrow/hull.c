// Convex hulls from point clouds: qhull finds the facets, this file turns
// them into what carom's queries need — face polygons in ring order, face
// planes, unique edge directions and vertex adjacency — in one allocation.
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libqhull_r/qhull_ra.h>

#include "narrow/support.h"

// Edge directions within this angle (sin^2, about 1e-5 rad) are one direction
// for SAT: exactly parallel edges (a box's four per axis) merge, nearly
// parallel ones (a needle's) stay apart.
#define EDGE_PARALLEL_SIN2 1e-10f

typedef struct edge {
    int a, b;  // a < b
} edge;

typedef struct angle_item {
    double angle;
    int vertex;
} angle_item;

static int compare_edges(const void* x, const void* y) {
    const edge* e = x;
    const edge* f = y;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

static int compare_angles(const void* x, const void* y) {
    double a = ((const angle_item*)x)->angle, b = ((const angle_item*)y)->angle;
    return (a > b) - (a < b);
}

static size_t align16(size_t n) { return (n + 15u) & ~(size_t)15u; }

// What qhull found, in carom's terms, before packing into the hull's block.
typedef struct hull_draft {
    int vertex_count, face_count, face_vertex_total, edge_count;
    vec3s* vertices;
    carom_plane* planes;
    int* face_first;
    int* face_vertices;
    edge* edges;  // each undirected edge twice (once per face), sorted later
} hull_draft;

static void draft_free(hull_draft* d) {
    carom_free(d->vertices);
    carom_free(d->planes);
    carom_free(d->face_first);
    carom_free(d->face_vertices);
    carom_free(d->edges);
    memset(d, 0, sizeof *d);
}

// Sorts one face's vertices counter-clockwise about its outward normal:
// qhull lists a merged facet's vertices by id, not around the polygon.
// The angles are taken about the centroid in double: far from the origin a
// float centroid of a few hundred vertices was off by about the face's own
// size, and the rings came out crossed.
static void order_face(const vec3s* vertices, carom_plane plane, int* ring, int n, angle_item* scratch) {
    double c[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < n; ++i) {
        c[0] += vertices[ring[i]].x, c[1] += vertices[ring[i]].y, c[2] += vertices[ring[i]].z;
    }
    for (int k = 0; k < 3; ++k) c[k] /= n;
    double normal[3] = {plane.normal.x, plane.normal.y, plane.normal.z};
    double u[3] = {vertices[ring[0]].x - c[0], vertices[ring[0]].y - c[1], vertices[ring[0]].z - c[2]};
    double w[3];
    carom_cross_double(normal, u, w);
    for (int i = 0; i < n; ++i) {
        vec3s v = vertices[ring[i]];
        double r[3] = {v.x - c[0], v.y - c[1], v.z - c[2]};
        scratch[i].angle = atan2(carom_dot_double(r, w), carom_dot_double(r, u));
        scratch[i].vertex = ring[i];
    }
    qsort(scratch, (size_t)n, sizeof *scratch, compare_angles);
    for (int i = 0; i < n; ++i) ring[i] = scratch[i].vertex;
}

// Copies qhull's facets into the draft. Returns a carom status.
static carom_status read_qhull(qhT* qh, int point_count, const vec3s* points, hull_draft* d) {
    facetT* facet;
    vertexT* vertex;
    vertexT** vertexp;
    int max_face = 0;
    FORALLfacets {
        d->face_count++;
        int n = qh_setsize(qh, facet->vertices);
        d->face_vertex_total += n;
        if (n > max_face) max_face = n;
    }
    FORALLvertices d->vertex_count++;

    int* remap = carom_alloc(sizeof(int) * (size_t)point_count);
    angle_item* scratch = carom_alloc(sizeof(angle_item) * (size_t)max_face);
    d->vertices = carom_alloc(sizeof(vec3s) * (size_t)d->vertex_count);
    d->planes = carom_alloc(sizeof(carom_plane) * (size_t)d->face_count);
    d->face_first = carom_alloc(sizeof(int) * (size_t)(d->face_count + 1));
    d->face_vertices = carom_alloc(sizeof(int) * (size_t)d->face_vertex_total);
    d->edges = carom_alloc(sizeof(edge) * (size_t)d->face_vertex_total);
    if (!remap || !scratch || !d->vertices || !d->planes || !d->face_first || !d->face_vertices ||
        !d->edges) {
        carom_free(remap);
        carom_free(scratch);
        return CAROM_ERR_OUT_OF_MEMORY;
    }

    int next = 0;
    FORALLvertices {
        int id = qh_pointid(qh, vertex->point);
        remap[id] = next;
        d->vertices[next++] = points[id];
    }
    int f = 0, k = 0;
    FORALLfacets {
        // qhull's hyperplane is n.x + offset = 0 with n outward.
        carom_plane plane = {v3((float)facet->normal[0], (float)facet->normal[1], (float)facet->normal[2]),
                             (float)-facet->offset};
        d->planes[f] = plane;
        d->face_first[f] = k;
        int start = k;
        FOREACHvertex_(facet->vertices) d->face_vertices[k++] = remap[qh_pointid(qh, vertex->point)];
        order_face(d->vertices, plane, d->face_vertices + start, k - start, scratch);
        for (int i = start; i < k; ++i) {
            int a = d->face_vertices[i], b = d->face_vertices[i + 1 < k ? i + 1 : start];
            d->edges[i] = (edge){a < b ? a : b, a < b ? b : a};
        }
        ++f;
    }
    d->face_first[f] = k;
    carom_free(remap);
    carom_free(scratch);

    // Every edge of a closed polytope borders two faces: sort, keep one of each.
    qsort(d->edges, (size_t)k, sizeof(edge), compare_edges);
    int unique = 0;
    for (int i = 0; i < k; ++i) {
        if (unique == 0 || compare_edges(&d->edges[unique - 1], &d->edges[i]) != 0) {
            d->edges[unique++] = d->edges[i];
        }
    }
    d->edge_count = unique;
    return CAROM_OK;
}

// Runs qhull on the points. Returns the qhull exit code.
static int run_qhull(qhT* qh, const vec3s* points, int count, double* coords, FILE* sink) {
    for (int i = 0; i < count; ++i) {
        coords[3 * i + 0] = points[i].x;
        coords[3 * i + 1] = points[i].y;
        coords[3 * i + 2] = points[i].z;
    }
    qh_zero(qh, sink);
    char options[] = "qhull Pp";
    return qh_new_qhull(qh, 3, count, coords, False, options, NULL, sink);
}

// The unit direction from a to b, computed in double so that hulls of
// 1e-20 units (whose edge lengths squared underflow float) still get finite
// directions; its largest component is made positive.
static vec3s unit_direction(vec3s a, vec3s b) {
    double d[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
    double len = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    int big = fabs(d[0]) >= fabs(d[1]) ? (fabs(d[0]) >= fabs(d[2]) ? 0 : 2) : (fabs(d[1]) >= fabs(d[2]) ? 1 : 2);
    double s = (d[big] < 0.0 ? -1.0 : 1.0) / len;
    return v3((float)(d[0] * s), (float)(d[1] * s), (float)(d[2] * s));
}

// Packs the draft into the hull's single block.
static carom_status pack(carom_hull* hull, const hull_draft* d) {
    size_t nv = (size_t)d->vertex_count, nf = (size_t)d->face_count, ne = (size_t)d->edge_count;
    size_t n4 = (nv + 3u) & ~(size_t)3u;
    size_t sizes[9] = {align16(sizeof(vec3s) * nv),      align16(sizeof(carom_plane) * nf),
                       align16(sizeof(int) * (nf + 1)),  align16(sizeof(int) * (size_t)d->face_vertex_total),
                       align16(sizeof(vec3s) * ne),      align16(sizeof(int) * (nv + 1)),
                       align16(sizeof(int) * 2 * ne),    align16(sizeof(float) * 3 * n4),
                       align16(sizeof(int) * CAROM_HULL_START_CELLS)};
    size_t total = 0;
    for (int i = 0; i < 9; ++i) total += sizes[i];
    char* block = carom_alloc(total);
    if (!block) return CAROM_ERR_OUT_OF_MEMORY;
    memset(block, 0, total);
    char* at = block;
    hull->block = block;
    hull->vertices = (vec3s*)(void*)at, at += sizes[0];
    hull->planes = (carom_plane*)(void*)at, at += sizes[1];
    hull->face_first = (int*)(void*)at, at += sizes[2];
    hull->face_vertices = (int*)(void*)at, at += sizes[3];
    hull->edge_directions = (vec3s*)(void*)at, at += sizes[4];
    hull->adjacency_first = (int*)(void*)at, at += sizes[5];
    hull->adjacency = (int*)(void*)at, at += sizes[6];
    hull->scan = (float*)(void*)at, at += sizes[7];
    hull->scan_count = (int)n4;
    hull->start_map = (int*)(void*)at;

    hull->vertex_count = d->vertex_count;
    hull->face_count = d->face_count;
    hull->edge_count = d->edge_count;
    memcpy(hull->vertices, d->vertices, sizeof(vec3s) * nv);
    for (size_t i = 0; i < n4; ++i) {
        vec3s v = d->vertices[i < nv ? i : 0];
        hull->scan[i] = v.x, hull->scan[n4 + i] = v.y, hull->scan[2 * n4 + i] = v.z;
    }
    memcpy(hull->planes, d->planes, sizeof(carom_plane) * nf);
    memcpy(hull->face_first, d->face_first, sizeof(int) * (nf + 1));
    memcpy(hull->face_vertices, d->face_vertices, sizeof(int) * (size_t)d->face_vertex_total);

    // Adjacency in compressed rows: count, prefix-sum, fill.
    for (size_t e = 0; e < ne; ++e) {
        hull->adjacency_first[d->edges[e].a + 1]++;
        hull->adjacency_first[d->edges[e].b + 1]++;
    }
    for (size_t v = 0; v < nv; ++v) hull->adjacency_first[v + 1] += hull->adjacency_first[v];
    for (size_t e = 0; e < ne; ++e) {
        int a = d->edges[e].a, b = d->edges[e].b;
        hull->adjacency[hull->adjacency_first[a]++] = b;
        hull->adjacency[hull->adjacency_first[b]++] = a;
    }
    // The fill advanced each row start to the next row's: shift back.
    for (size_t v = nv; v > 0; --v) hull->adjacency_first[v] = hull->adjacency_first[v - 1];
    hull->adjacency_first[0] = 0;

    // Unique edge directions: each edge against every direction kept so
    // far. Quadratic, but only in the number of distinct directions, and
    // exact where sorting tricks miss near-ties of sign or component.
    int kept = 0;
    for (size_t e = 0; e < ne; ++e) {
        vec3s dir = unit_direction(hull->vertices[d->edges[e].a], hull->vertices[d->edges[e].b]);
        bool seen = false;
        for (int k = 0; k < kept && !seen; ++k) {
            seen = v3_len2(v3_cross(hull->edge_directions[k], dir)) <= EDGE_PARALLEL_SIN2;
        }
        if (!seen) hull->edge_directions[kept++] = dir;
    }
    hull->edge_direction_count = kept;

    vec3s c = v3(0, 0, 0);
    vec3s lo = hull->vertices[0], hi = hull->vertices[0];
    for (size_t v = 0; v < nv; ++v) {
        c = v3_add(c, hull->vertices[v]);
        lo = v3_min(lo, hull->vertices[v]);
        hi = v3_max(hi, hull->vertices[v]);
    }
    hull->centroid = v3_scale(c, 1.0f / (float)nv);
    float r2 = 0.0f;
    for (size_t v = 0; v < nv; ++v) r2 = fmaxf(r2, v3_len2(v3_sub(hull->vertices[v], hull->centroid)));
    hull->bounding_radius = sqrtf(r2);
    hull->bounds = (carom_aabb){lo, hi};
    for (int cell = 0; cell < CAROM_HULL_START_CELLS; ++cell) {
        vec3s dir = carom_hull_cell_direction(cell);
        int best = 0;
        for (size_t v = 1; v < nv; ++v) {
            if (v3_dot(hull->vertices[v], dir) > v3_dot(hull->vertices[best], dir)) best = (int)v;
        }
        hull->start_map[cell] = best;
    }
    return CAROM_OK;
}

// The convex hull of the points as a draft: qhull runs, its facets are read.
static carom_status draft_from_points(const vec3s* points, int count, hull_draft* draft) {
    double* coords = carom_alloc(sizeof(double) * 3 * (size_t)count);
    qhT* qh = carom_alloc(sizeof(qhT));
    if (!coords || !qh) {
        carom_free(coords);
        carom_free(qh);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    // qhull reports degenerate input on its error stream; carom reports it as
    // a status, so the text goes nowhere. The stream stays open until qhull
    // is freed, which may still write to it.
    FILE* sink = fopen("/dev/null", "w");
    int exitcode = run_qhull(qh, points, count, coords, sink ? sink : stderr);
    carom_status status;
    if (exitcode == qh_ERRmem) {
        status = CAROM_ERR_OUT_OF_MEMORY;
    } else if (exitcode != qh_ERRnone) {
        status = CAROM_ERR_DEGENERATE;  // flat, too few distinct points, or precision
    } else {
        status = read_qhull(qh, count, points, draft);
    }
    int curlong, totlong;
    qh_freeqhull(qh, !qh_ALL);
    qh_memfreeshort(qh, &curlong, &totlong);
    if (sink) fclose(sink);
    carom_free(qh);
    carom_free(coords);
    if (status == CAROM_OK && draft->vertex_count < 4) status = CAROM_ERR_DEGENERATE;
    return status;
}

typedef struct sweep_item {
    float x;
    int vertex;
} sweep_item;

static int compare_sweep(const void* p, const void* q) {
    float a = ((const sweep_item*)p)->x, b = ((const sweep_item*)q)->x;
    return (a > b) - (a < b);
}

// Keeps, of every group of vertices within `tolerance` of each other in each
// coordinate, the first met in a sweep along x; writes the kept ones to
// `kept` and returns their count, or -1 when out of memory.
static int weld_vertices(const vec3s* v, int n, float tolerance, vec3s* kept) {
    sweep_item* order = carom_alloc(sizeof(sweep_item) * (size_t)n);
    bool* dropped = carom_alloc(sizeof(bool) * (size_t)n);
    if (!order || !dropped) {
        carom_free(order);
        carom_free(dropped);
        return -1;
    }
    for (int i = 0; i < n; ++i) order[i] = (sweep_item){v[i].x, i}, dropped[i] = false;
    qsort(order, (size_t)n, sizeof *order, compare_sweep);
    int count = 0;
    for (int i = 0; i < n; ++i) {
        int a = order[i].vertex;
        if (dropped[a]) continue;
        kept[count++] = v[a];
        // Hull vertices share an x only along a face's rim, so the window
        // holds few of them.
        for (int j = i + 1; j < n && order[j].x - order[i].x <= tolerance; ++j) {
            int b = order[j].vertex;
            dropped[b] = dropped[b] || (fabsf(v[b].y - v[a].y) <= tolerance && fabsf(v[b].z - v[a].z) <= tolerance);
        }
    }
    carom_free(order);
    carom_free(dropped);
    return count;
}

carom_status carom_hull_build(carom_hull* hull, const vec3s* points, int count) {
    if (!hull) return CAROM_ERR_INVALID_ARG;
    memset(hull, 0, sizeof *hull);
    if (!points || count < 0) return CAROM_ERR_INVALID_ARG;
    for (int i = 0; i < count; ++i) {
        if (!carom_vec3_is_valid(points[i])) return CAROM_ERR_INVALID_ARG;
    }
    if (count < 4) return CAROM_ERR_DEGENERATE;

    hull_draft draft;
    memset(&draft, 0, sizeof draft);
    carom_status status = draft_from_points(points, count, &draft);
    if (status == CAROM_OK) {
        // qhull, exact in double, keeps vertices a float ulp apart as two.
        // Such twins make sliver faces, whose corners' angles about their
        // centres all but tie: rings came out crossed or clockwise, with
        // edges that do not close (V - E + F != 2). Weld vertices within a
        // few ulps of the hull's size, or one of its largest coordinate, then
        // take the hull of what is left: the shape moves by less than float
        // can tell.
        vec3s lo = draft.vertices[0], hi = draft.vertices[0];
        for (int i = 1; i < draft.vertex_count; ++i) {
            lo = v3_min(lo, draft.vertices[i]);
            hi = v3_max(hi, draft.vertices[i]);
        }
        float tolerance = fmaxf(4.0f * FLT_EPSILON * v3_max_abs(v3_sub(hi, lo)),
                                FLT_EPSILON * fmaxf(v3_max_abs(lo), v3_max_abs(hi)));
        vec3s* kept = carom_alloc(sizeof(vec3s) * (size_t)draft.vertex_count);
        int kept_count = kept ? weld_vertices(draft.vertices, draft.vertex_count, tolerance, kept) : -1;
        if (kept_count < 0) {
            status = CAROM_ERR_OUT_OF_MEMORY;
        } else if (kept_count < draft.vertex_count) {
            draft_free(&draft);
            status = kept_count < 4 ? CAROM_ERR_DEGENERATE : draft_from_points(kept, kept_count, &draft);
        }
        carom_free(kept);
    }
    if (status == CAROM_OK) status = pack(hull, &draft);
    draft_free(&draft);
    if (status != CAROM_OK) memset(hull, 0, sizeof *hull);
    return status;
}

void carom_hull_destroy(carom_hull* hull) {
    if (!hull) return;
    carom_free(hull->block);
    memset(hull, 0, sizeof *hull);
}
