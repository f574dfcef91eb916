/// Brute-force double-precision reference geometry for testing carom.
///
/// This is the ground truth the library's float queries are checked against,
/// so it is written to be obviously right rather than fast: every distance is
/// the minimum over a complete list of candidate feature pairs, each candidate
/// being a genuine point of each set, so a result can only err by rounding.
/// There is no iteration to convergence and no tolerance beyond rounding.
/// It shares no code with the library and includes no carom header.
///
/// Conventions: points are `double[3]`; arrays of points are
/// `const double (*)[3]` (a caller holding `double (*)[3]` needs a cast in ISO
/// C). Output pointers for closest points may be NULL. Rotation matrices are
/// row-major, applied as x' = m * x. Quaternions are (x, y, z, w).
#ifndef CAROM_TESTKIT_REFERENCE_H
#define CAROM_TESTKIT_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- primitive pairs ------------------------------------------------------
 * Each returns the Euclidean distance and writes the closest points (one on
 * each argument, in argument order). Degenerate input is fine: a segment with
 * a0 == a1 is a point, a triangle with collinear corners is a segment. */

/// Distance from p to segment a-b.
double ref_point_segment(const double p[3], const double a[3], const double b[3], double closest[3]);

/// Distance from p to the solid triangle a-b-c.
double ref_point_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                          double closest[3]);

/// Distance between segments a0-a1 and b0-b1 (parallel and degenerate too).
double ref_segment_segment(const double a0[3], const double a1[3], const double b0[3], const double b1[3],
                           double ca[3], double cb[3]);

/// Distance between segment s0-s1 and triangle a-b-c; 0 when the segment
/// pierces or touches the triangle (then cs == ct is a common point).
double ref_segment_triangle(const double s0[3], const double s1[3], const double a[3], const double b[3],
                            const double c[3], double cs[3], double ct[3]);

/// Distance between triangles a0-a1-a2 and b0-b1-b2; 0 when they intersect
/// (then ca == cb is a common point). Coplanar overlap gives 0 up to rounding
/// (about 1e-16 of the coordinates), with ca and cb nearly equal.
double ref_triangle_triangle(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                             const double b1[3], const double b2[3], double ca[3], double cb[3]);

/* ---- convex polytopes ------------------------------------------------------ */

/// A convex polytope in world coordinates. Full-dimensional ones come from
/// qhull (option Qt): `tris` are the boundary triangles, counter-clockwise
/// seen from outside, and `planes[i]` is triangle i's face plane (coplanar
/// triangles repeat their face's plane; there are ntris planes).
/// Lower-dimensional ones (see ref_polytope_build) have `planes == NULL`.
typedef struct ref_polytope {
    int nverts;
    double (*verts)[3];
    int ntris;
    int (*tris)[3];
    double (*planes)[4]; ///< outward unit normal n and d with n.x + d = 0; NULL when not full-dimensional
} ref_polytope;

/// ref_polytope_build results.
enum {
    REF_POLYTOPE_OK = 0,         ///< a full-dimensional hull with planes
    REF_POLYTOPE_DEGENERATE = 1, ///< a point, segment or planar polygon; usable, but no planes
    REF_POLYTOPE_ERROR = -1      ///< n < 1, NULL or non-finite input, out of memory, qhull failure
};

/// Builds the convex hull of `n` points (copied). Returns REF_POLYTOPE_OK for
/// a full-dimensional hull. When the points span less than 3 dimensions
/// (fewer than 4 points, all coplanar, collinear or coincident, judged with a
/// relative tolerance of 1e-10 of the cloud's size) it returns
/// REF_POLYTOPE_DEGENERATE but still builds a usable lower-dimensional
/// polytope without planes: a point (1 vertex, 0 triangles), a segment
/// (2 vertices, 0 triangles) or a convex polygon (its corners, fan
/// triangulated). On REF_POLYTOPE_ERROR `*out` is zeroed. Free with
/// ref_polytope_free in every case.
int ref_polytope_build(ref_polytope* out, const double (*pts)[3], int n);

/// Frees the arrays and zeroes the struct. NULL and zeroed structs are fine.
void ref_polytope_free(ref_polytope* p);

/// Moves the polytope rigidly: every vertex x becomes rot * x + trans and the
/// planes follow; tris are not touched, so copies may share them. `rot` must
/// be a rotation (orthonormal) for the planes to stay unit and exact.
/// Building from already-transformed points is the alternative; both give the
/// same distances up to rounding. `rot` is not const only because ISO C
/// before C2x refuses a plain double[3][3] argument for a const one; it is
/// not modified.
void ref_polytope_transform(ref_polytope* p, double rot[3][3], const double trans[3]);

/// Exact Euclidean distance between two polytopes (either may be degenerate),
/// with the closest points pa on a and pb on b. 0 when they intersect, one
/// containing the other included (then pa == pb is a common point). Pruning
/// uses conservative bounds only, so the answer is the full brute-force
/// minimum over triangle pairs up to rounding. NAN for a NULL or empty
/// polytope. A polytope must have `planes == NULL` unless it is a closed
/// full-dimensional hull: planes are what the containment test trusts.
/// Cost: a few ms for two 3000-vertex hulls, a fraction of one for 162 (-O2).
double ref_polytope_distance(const ref_polytope* a, const ref_polytope* b, double pa[3], double pb[3]);

/// Distance from a polytope to segment s0-s1 (a point when s0 == s1), with
/// closest points pp on the polytope and ps on the segment; 0 when the segment
/// touches or enters the polytope. For capsule checks subtract the radius.
double ref_polytope_segment_distance(const ref_polytope* p, const double s0[3], const double s1[3],
                                     double pp[3], double ps[3]);

/* ---- helpers for tests ----------------------------------------------------- */

/// Rotation matrix of quaternion q = (x, y, z, w); q is normalised first and
/// must not be zero.
void ref_quat_to_matrix(const double q[4], double m[3][3]);

/// A small deterministic generator (splitmix64); any seed, 0 included.
typedef struct ref_rng {
    unsigned long long s;
} ref_rng;

/// The next 64 random bits.
unsigned long long ref_rng_next(ref_rng* rng);
/// Uniform in [lo, hi).
double ref_rng_uniform(ref_rng* rng, double lo, double hi);
/// A uniformly distributed random rotation as a unit quaternion (x, y, z, w).
void ref_rng_unit_quat(ref_rng* rng, double q[4]);

#ifdef __cplusplus
}
#endif

#endif
