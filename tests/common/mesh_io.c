/* Mesh loading; see mesh_io.h. OFF natively, the rest through assimp. */
#define _POSIX_C_SOURCE 200809L /* getline */

#include "mesh_io.h"

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CAROM_DATA_DIR
#define CAROM_DATA_DIR "data"
#endif

/* ---- output building ---------------------------------------------------------- */

/* Triangles are appended as polygons are fan-triangulated, so their number is
 * only known at the end. */
static int push_triangle(mesh_data* m, int* cap, int a, int b, int c)
{
    if (m->triangle_count == *cap) {
        int grown = *cap ? *cap * 2 : 64;
        if (grown < *cap) /* overflow */
            return MESH_ERR_MEMORY;
        void* p = realloc(m->triangles, sizeof(int[3]) * (size_t)grown);
        if (!p)
            return MESH_ERR_MEMORY;
        m->triangles = p;
        *cap = grown;
    }
    int* t = m->triangles[m->triangle_count++];
    t[0] = a;
    t[1] = b;
    t[2] = c;
    return MESH_OK;
}

/* Fan (i0, i_k, i_k+1): exact for the convex polygons OFF files hold. */
static int push_polygon(mesh_data* m, int* cap, const int* idx, int n)
{
    for (int k = 1; k + 1 < n; k++) {
        int rc = push_triangle(m, cap, idx[0], idx[k], idx[k + 1]);
        if (rc != MESH_OK)
            return rc;
    }
    return MESH_OK;
}

/* ---- OFF ------------------------------------------------------------------------ */

typedef struct line_reader {
    FILE* f;
    char* buf;
    size_t cap;
} line_reader;

/* The next line that is not blank once its '#' comment is cut, or NULL at the
 * end of the file. */
static char* next_line(line_reader* r)
{
    while (getline(&r->buf, &r->cap, r->f) >= 0) {
        char* hash = strchr(r->buf, '#');
        if (hash)
            *hash = '\0';
        char* s = r->buf;
        while (isspace((unsigned char)*s))
            s++;
        if (*s)
            return s;
    }
    return NULL;
}

static int parse_int(char** s, long lo, long hi, int* out)
{
    char* end;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (end == *s || errno || v < lo || v > hi)
        return 0;
    *s = end;
    *out = (int)v;
    return 1;
}

/* Accepts an optional keyword ([ST][C][N]OFF) and the "nv nf [ne]" counts,
 * which may follow the keyword on the same line. Homogeneous (4OFF),
 * n-dimensional (nOFF) and binary files are refused. */
static int parse_off_header(line_reader* r, int* nv, int* nf)
{
    char* s = next_line(r);
    if (!s)
        return MESH_ERR_PARSE;
    size_t len = strcspn(s, " \t\r\n");
    char* off = strstr(s, "OFF");
    if (off && off < s + len) {
        for (char* c = s; c < off; c++)
            if (*c == '4' || *c == 'n')
                return MESH_ERR_PARSE;
        s += len;
        if (strstr(s, "BINARY"))
            return MESH_ERR_PARSE;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s && !(s = next_line(r)))
            return MESH_ERR_PARSE;
    }
    if (!parse_int(&s, 0, INT_MAX / 4, nv) || !parse_int(&s, 0, INT_MAX / 4, nf))
        return MESH_ERR_PARSE;
    return MESH_OK;
}

/* One vertex per line; anything after x y z (colour, normal, uv) is ignored. */
static int parse_off_vertices(line_reader* r, mesh_data* m)
{
    for (int i = 0; i < m->vertex_count; i++) {
        char* s = next_line(r);
        if (!s)
            return MESH_ERR_PARSE;
        for (int k = 0; k < 3; k++) {
            char* end;
            double x = strtod(s, &end);
            if (end == s)
                return MESH_ERR_PARSE;
            m->vertices[i][k] = (float)x;
            s = end;
        }
    }
    return MESH_OK;
}

/* One face per line: n, then n indices, then ignored colour values. */
static int parse_off_faces(line_reader* r, mesh_data* m, int nf)
{
    int cap = nf > 0 ? nf : 1, rc = MESH_OK, idx_cap = 0;
    int* idx = NULL;
    m->triangles = malloc(sizeof(int[3]) * (size_t)cap);
    if (!m->triangles)
        return MESH_ERR_MEMORY;
    for (int f = 0; f < nf && rc == MESH_OK; f++) {
        char* s = next_line(r);
        int n;
        if (!s || !parse_int(&s, 0, INT_MAX / 4, &n)) {
            rc = MESH_ERR_PARSE;
            break;
        }
        if (n > idx_cap) {
            void* p = realloc(idx, sizeof(int) * (size_t)n);
            if (!p) {
                rc = MESH_ERR_MEMORY;
                break;
            }
            idx = p;
            idx_cap = n;
        }
        for (int k = 0; k < n && rc == MESH_OK; k++)
            if (!parse_int(&s, 0, m->vertex_count - 1, &idx[k]))
                rc = MESH_ERR_PARSE;
        if (rc == MESH_OK && n >= 3)
            rc = push_polygon(m, &cap, idx, n);
    }
    free(idx);
    return rc;
}

static int load_off(const char* path, mesh_data* out)
{
    line_reader r = {fopen(path, "r"), NULL, 0};
    if (!r.f)
        return MESH_ERR_OPEN;
    int nv = 0, nf = 0;
    int rc = parse_off_header(&r, &nv, &nf);
    if (rc == MESH_OK) {
        out->vertex_count = nv;
        out->vertices = malloc(sizeof(float[3]) * (size_t)(nv > 0 ? nv : 1));
        rc = out->vertices ? parse_off_vertices(&r, out) : MESH_ERR_MEMORY;
    }
    if (rc == MESH_OK)
        rc = parse_off_faces(&r, out, nf);
    free(r.buf);
    fclose(r.f);
    return rc;
}

/* ---- assimp ----------------------------------------------------------------------- */

/* Appends one (already world-space) mesh; its indices shift by the vertices
 * of the meshes before it. */
static int append_ai_mesh(mesh_data* m, int* cap, const struct aiMesh* am)
{
    int base = m->vertex_count;
    for (unsigned v = 0; v < am->mNumVertices; v++) {
        m->vertices[m->vertex_count][0] = (float)am->mVertices[v].x;
        m->vertices[m->vertex_count][1] = (float)am->mVertices[v].y;
        m->vertices[m->vertex_count][2] = (float)am->mVertices[v].z;
        m->vertex_count++;
    }
    for (unsigned f = 0; f < am->mNumFaces; f++) {
        const struct aiFace* face = &am->mFaces[f];
        int idx[3];
        /* Triangulate leaves points and lines as they are; fan anything else. */
        for (unsigned k = 1; k + 1 < face->mNumIndices; k++) {
            idx[0] = base + (int)face->mIndices[0];
            idx[1] = base + (int)face->mIndices[k];
            idx[2] = base + (int)face->mIndices[k + 1];
            int rc = push_polygon(m, cap, idx, 3);
            if (rc != MESH_OK)
                return rc;
        }
    }
    return MESH_OK;
}

static int load_assimp(const char* path, mesh_data* out)
{
    FILE* probe = fopen(path, "rb"); /* tell a missing file from a bad one */
    if (!probe)
        return MESH_ERR_OPEN;
    fclose(probe);
    const struct aiScene* scene = aiImportFile(
        path, aiProcess_Triangulate | aiProcess_JoinIdenticalVertices | aiProcess_PreTransformVertices);
    if (!scene)
        return MESH_ERR_IMPORT;
    size_t nv = 0;
    for (unsigned i = 0; i < scene->mNumMeshes; i++)
        nv += scene->mMeshes[i]->mNumVertices;
    int rc = MESH_OK, cap = 0;
    if (nv == 0 || nv > INT_MAX / 4)
        rc = MESH_ERR_IMPORT;
    else if (!(out->vertices = malloc(sizeof(float[3]) * nv)))
        rc = MESH_ERR_MEMORY;
    for (unsigned i = 0; i < scene->mNumMeshes && rc == MESH_OK; i++)
        rc = append_ai_mesh(out, &cap, scene->mMeshes[i]);
    aiReleaseImport(scene);
    return rc;
}

/* ---- public -------------------------------------------------------------------------- */

static int has_off_extension(const char* path)
{
    const char* dot = strrchr(path, '.');
    if (!dot || strlen(dot) != 4)
        return 0;
    return tolower((unsigned char)dot[1]) == 'o' && tolower((unsigned char)dot[2]) == 'f' &&
           tolower((unsigned char)dot[3]) == 'f';
}

int mesh_load(const char* path, mesh_data* out)
{
    if (!out)
        return MESH_ERR_OPEN;
    memset(out, 0, sizeof(*out));
    if (!path)
        return MESH_ERR_OPEN;
    int rc = has_off_extension(path) ? load_off(path, out) : load_assimp(path, out);
    if (rc != MESH_OK)
        mesh_free(out);
    return rc;
}

void mesh_free(mesh_data* mesh)
{
    if (!mesh)
        return;
    free(mesh->vertices);
    free(mesh->triangles);
    memset(mesh, 0, sizeof(*mesh));
}

const char* mesh_strerror(int code)
{
    switch (code) {
    case MESH_OK:
        return "ok";
    case MESH_ERR_OPEN:
        return "cannot open file";
    case MESH_ERR_PARSE:
        return "malformed or unsupported OFF file";
    case MESH_ERR_MEMORY:
        return "out of memory";
    case MESH_ERR_IMPORT:
        return "assimp import failed or found no vertices";
    default:
        return "unknown error";
    }
}

const char* mesh_data_dir(void)
{
    const char* env = getenv("CAROM_DATA_DIR");
    if (env && *env)
        return env;
    static const char compiled[] = CAROM_DATA_DIR;
    return compiled[0] ? compiled : "data";
}

int mesh_load_named(const char* relative, mesh_data* out)
{
    if (!relative) {
        if (out)
            memset(out, 0, sizeof(*out));
        return MESH_ERR_OPEN;
    }
    const char* dir = mesh_data_dir();
    size_t len = strlen(dir) + 1 + strlen(relative) + 1;
    char* path = malloc(len);
    if (!path) {
        if (out)
            memset(out, 0, sizeof(*out));
        return MESH_ERR_MEMORY;
    }
    snprintf(path, len, "%s/%s", dir, relative);
    int rc = mesh_load(path, out);
    free(path);
    return rc;
}
