/// Mesh loading for tests, benchmarks and tools.
///
/// `.off` files are parsed here (the variants in CGAL's sample data: OFF,
/// COFF, NOFF, STOFF... headers, '#' comments, counts on the keyword line or
/// the next, polygons fan-triangulated, colours after the coordinates or
/// indices ignored). Every other format goes through assimp, with all meshes
/// of the scene merged into one in world coordinates.
#ifndef CAROM_TESTKIT_MESH_IO_H
#define CAROM_TESTKIT_MESH_IO_H

#ifdef __cplusplus
extern "C" {
#endif

/// A triangle soup with shared vertices. Owns both arrays (malloc).
typedef struct mesh_data {
    int vertex_count;
    float (*vertices)[3];
    int triangle_count;
    int (*triangles)[3]; ///< indices into vertices, each in [0, vertex_count)
} mesh_data;

/// mesh_load results; mesh_strerror names them.
enum {
    MESH_OK = 0,
    MESH_ERR_OPEN = -1,   ///< cannot open the file (missing data directory?)
    MESH_ERR_PARSE = -2,  ///< malformed OFF, or an OFF variant not supported (binary, 4OFF, nOFF)
    MESH_ERR_MEMORY = -3, ///< out of memory
    MESH_ERR_IMPORT = -4  ///< assimp could not import the file, or it holds no vertices
};

/// Loads a mesh. Returns MESH_OK, or a negative MESH_ERR_* with `*out`
/// zeroed. Faces with fewer than 3 vertices (points, lines) are skipped.
int mesh_load(const char* path, mesh_data* out);

/// Frees the arrays and zeroes the struct. NULL and zeroed structs are fine.
void mesh_free(mesh_data* mesh);

/// A short description of a mesh_load result.
const char* mesh_strerror(int code);

/// The data directory: the environment variable CAROM_DATA_DIR when set and
/// non-empty, else the compile-time definition CAROM_DATA_DIR (from the CMake
/// cache variable of the same name), else "data".
const char* mesh_data_dir(void);

/// Loads `<mesh_data_dir()>/<relative>`, e.g. "meshes/bunny00.off".
int mesh_load_named(const char* relative, mesh_data* out);

#ifdef __cplusplus
}
#endif

#endif
