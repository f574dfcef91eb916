// Triangle meshes: validation, copies, the tree build and refit.
#include <string.h>

#include "mid/walk.h"

// Whether triangle p (tree order) has zero area in float: its edges' cross
// product is exactly zero. (Its squared length would underflow for real
// triangles below about 1e-19 in size.)
static bool triangle_is_degenerate(const struct carom_mesh_data* d, int p) {
    f4 v[3];
    mid_load_triangle(d, p, v);
    const f4 n = f4_cross(v[1] - v[0], v[2] - v[0]);
    return f4_equal3(n, f4_zero());
}

static void free_data(struct carom_mesh_data* d) {
    if (!d) return;
    carom_free(d->vertices);
    carom_free(d->vertex_slot);
    carom_free(d->triangles);
    carom_free(d->ids);
    carom_free(d->position);
    carom_free(d->wide_nodes);
    carom_free(d->leaf_slabs);
    carom_free(d->box_nodes);
    carom_free(d);
}

static void free_build(mid_build* b) {
    carom_free(b->order);
}

static carom_status check_arguments(const vec3s* vertices, int vertex_count, const int* indices,
                                    int triangle_count, const carom_mesh_desc* desc) {
    if (vertex_count <= 0 || triangle_count <= 0 || !vertices || !indices) {
        return CAROM_ERR_INVALID_ARG;
    }
    if (triangle_count > CAROM_MESH_MAX_TRIANGLES) return CAROM_ERR_CAPACITY;
    if (desc && (desc->leaf_size < 0 || desc->leaf_size > MID_MAX_LEAF_SIZE ||
                 desc->tree < CAROM_TREE_AABB_SAH || desc->tree > CAROM_TREE_BOXTREE)) {
        return CAROM_ERR_INVALID_ARG;
    }
    for (int i = 0; i < vertex_count; ++i) {
        if (!carom_vec3_is_valid(vertices[i])) return CAROM_ERR_INVALID_ARG;
    }
    for (long i = 0; i < 3L * triangle_count; ++i) {
        if (indices[i] < 0 || indices[i] >= vertex_count) return CAROM_ERR_INVALID_ARG;
    }
    return CAROM_OK;
}

static carom_status prepare_build(mid_build* b, const int* indices, int n) {
    // The builds take the triangles' boxes from the mesh's copy of the
    // vertices and write the whole order.
    b->triangles = (const int32_t(*)[3])indices;
    b->count = n;
    b->order = carom_alloc((size_t)n * sizeof(int32_t));
    return b->order ? CAROM_OK : CAROM_ERR_OUT_OF_MEMORY;
}

// Fills the tree-ordered triangles, ids and the inverse map, and counts
// degenerate triangles.
static void store_triangles(carom_mesh* mesh, const int* indices, const int32_t* order) {
    struct carom_mesh_data* d = mesh->data;
    int degenerate = 0;
    for (int p = 0; p < mesh->triangle_count; ++p) {
        int t = order[p];
        for (int k = 0; k < 3; ++k) d->triangles[p][k] = indices[3 * t + k];
        bool flat = triangle_is_degenerate(d, p);
        degenerate += flat;
        d->ids[p] = t | (flat ? MID_DEGENERATE_BIT : 0);
        d->position[t] = p;
    }
    mesh->degenerate_count = degenerate;
}

// Moves the vertices into the order the tree-ordered triangles first use
// them (unused ones last), and the triangles' indices with them: a leaf's
// triangles then read a few adjacent cache lines of vertices rather than
// corners scattered over the caller's order. It took 2-6% off the mesh
// benchmark's all-pairs sweeps, whose queries find the caches holding
// other poses' nodes, and 7% off queries run with the caches flushed.
static carom_status order_vertices(carom_mesh* mesh) {
    struct carom_mesh_data* d = mesh->data;
    const size_t nv = (size_t)mesh->vertex_count;
    int32_t* slot = carom_alloc(nv * sizeof *slot);
    vec3s* ordered = carom_alloc((nv + 1) * sizeof *ordered);
    if (!slot || !ordered) {
        carom_free(slot);
        carom_free(ordered);
        return CAROM_ERR_OUT_OF_MEMORY;
    }
    for (size_t i = 0; i < nv; ++i) slot[i] = -1;
    int32_t next = 0;
    for (int p = 0; p < mesh->triangle_count; ++p) {
        for (int k = 0; k < 3; ++k) {
            int32_t* corner = &d->triangles[p][k];
            if (slot[*corner] < 0) slot[*corner] = next++;
            *corner = slot[*corner];
        }
    }
    for (size_t i = 0; i < nv; ++i) {
        if (slot[i] < 0) slot[i] = next++;
        ordered[slot[i]] = d->vertices[i];
    }
    memset(&ordered[nv], 0, sizeof *ordered);  // the spare vertex
    carom_free(d->vertices);
    d->vertices = ordered;
    d->vertex_slot = slot;
    return CAROM_OK;
}

static carom_aabb vertex_bounds(const vec3s* v, int n) {
    carom_aabb box = {v[0], v[0]};
    for (int i = 1; i < n; ++i) {
        box.min = v3_min(box.min, v[i]);
        box.max = v3_max(box.max, v[i]);
    }
    return box;
}

carom_status carom_mesh_create(const vec3s* vertices, int vertex_count, const int* indices,
                               int triangle_count, const carom_mesh_desc* desc, carom_mesh* out) {
    if (!out) return CAROM_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    carom_status status = check_arguments(vertices, vertex_count, indices, triangle_count, desc);
    if (status != CAROM_OK) return status;

    carom_mesh mesh = {0};
    mesh.vertex_count = vertex_count;
    mesh.triangle_count = triangle_count;
    mesh.tree = desc ? desc->tree : CAROM_TREE_AABB_SAH;
    struct carom_mesh_data* d = carom_alloc(sizeof *d);
    if (!d) return CAROM_ERR_OUT_OF_MEMORY;
    memset(d, 0, sizeof *d);
    mesh.data = d;
    d->leaf_size = (desc && desc->leaf_size > 0)    ? desc->leaf_size
                   : mesh.tree == CAROM_TREE_BOXTREE ? CAROM_MESH_DEFAULT_BOXTREE_LEAF_SIZE
                                                     : CAROM_MESH_DEFAULT_LEAF_SIZE;
    size_t nv = (size_t)vertex_count, nt = (size_t)triangle_count;
    // One spare vertex, zeroed: the SIMD leaf tests load each vertex as four
    // floats, and the last one's fourth must be inside the block.
    d->vertices = carom_alloc((nv + 1) * sizeof *d->vertices);
    d->triangles = carom_alloc(nt * sizeof *d->triangles);
    d->ids = carom_alloc(nt * sizeof *d->ids);
    d->position = carom_alloc(nt * sizeof *d->position);
    mid_build b = {0};
    status = CAROM_ERR_OUT_OF_MEMORY;
    if (d->vertices && d->triangles && d->ids && d->position) {
        memcpy(d->vertices, vertices, nv * sizeof *d->vertices);
        memset(&d->vertices[nv], 0, sizeof *d->vertices);
        status = prepare_build(&b, indices, triangle_count);
    }
    if (status == CAROM_OK) {
        status = mesh.tree == CAROM_TREE_BOXTREE
                     ? mid_boxtree_build(&mesh, &b)
                     : mid_aabb_tree_build(&mesh, &b, mesh.tree == CAROM_TREE_AABB_SAH);
    }
    if (status == CAROM_OK) {
        store_triangles(&mesh, indices, b.order);
        status = order_vertices(&mesh);
    }
    if (status == CAROM_OK) {
        if (mesh.tree != CAROM_TREE_BOXTREE) mid_wide_make_slabs(&mesh);
        mesh.bounds = vertex_bounds(d->vertices, vertex_count);
        mesh.total_bytes = sizeof *d + (nv + 1) * sizeof *d->vertices +
                           nv * sizeof *d->vertex_slot +
                           nt * (sizeof *d->triangles + sizeof *d->ids + sizeof *d->position) +
                           mesh.tree_bytes;
        *out = mesh;
    } else {
        free_data(d);
    }
    free_build(&b);
    return status;
}

void carom_mesh_destroy(carom_mesh* mesh) {
    if (!mesh) return;
    free_data(mesh->data);
    memset(mesh, 0, sizeof *mesh);
}

carom_status carom_mesh_refit(carom_mesh* mesh, const vec3s* vertices, int vertex_count) {
    if (!mesh || !mesh->data || !vertices || vertex_count != mesh->vertex_count) {
        return CAROM_ERR_INVALID_ARG;
    }
    for (int i = 0; i < vertex_count; ++i) {
        if (!carom_vec3_is_valid(vertices[i])) return CAROM_ERR_INVALID_ARG;
    }
    struct carom_mesh_data* d = mesh->data;
    for (int i = 0; i < vertex_count; ++i) d->vertices[d->vertex_slot[i]] = vertices[i];
    int degenerate = 0;
    for (int p = 0; p < mesh->triangle_count; ++p) {
        bool flat = triangle_is_degenerate(d, p);
        degenerate += flat;
        d->ids[p] = (d->ids[p] & MID_ID_MASK) | (flat ? MID_DEGENERATE_BIT : 0);
    }
    mesh->degenerate_count = degenerate;
    if (mesh->tree == CAROM_TREE_BOXTREE) {
        mid_boxtree_refit(mesh);
    } else {
        mid_wide_refit(mesh);
    }
    mesh->bounds = vertex_bounds(d->vertices, vertex_count);
    return CAROM_OK;
}

carom_mesh_corners carom_mesh_triangle(const carom_mesh* mesh, int triangle) {
    carom_mesh_corners t = {v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    if (!mesh || !mesh->data || triangle < 0 || triangle >= mesh->triangle_count) return t;
    vec3s v[3];
    mid_triangle(mesh->data, mesh->data->position[triangle], v);
    t.a = v[0];
    t.b = v[1];
    t.c = v[2];
    return t;
}
