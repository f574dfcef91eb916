/// Brute-force double-precision references for the mid phase: triangle
/// against triangle, mesh against mesh, ray against mesh, oriented box
/// against triangle.
///
/// Like reference.h this is ground truth, written to be obviously right
/// rather than fast, and shares no code with carom (it includes no carom
/// header and links only libm and reference.c).
///
/// Two kinds of answer:
/// - Yes/no answers (do these triangles meet, does this segment hit this
///   triangle) are decided by exact orientation predicates: a filtered double
///   determinant, recomputed exactly from error-free products when the
///   filter cannot vouch for its sign. They are therefore exact for the
///   double inputs given, closed sets throughout (touching counts), and
///   invariant under swapping arguments and reordering corners. The box test
///   is the exception: it is a separating-axis test in plain double.
/// - Measures (distance, penetration depth, margins) are plain double
///   arithmetic, accurate to rounding. They exist so that a test can
///   recognise borderline configurations, where a float library may
///   legitimately disagree with the exact answer, and demand agreement
///   everywhere else.
///
/// Exactness assumes finite coordinates whose nonzero magnitudes lie
/// between about 1e-90 and 1e90, so that no product of three overflows or
/// underflows, and double arithmetic without excess precision
/// (FLT_EVAL_METHOD 0, 1, 16, 32 or 64, checked at compile time: x87 builds
/// fail to compile).
///
/// Conventions: a triangle is `double[3][3]`, one corner per row. Array
/// parameters of array type are not const only because ISO C before C2x
/// refuses a plain `double[3][3]` (or `float (*)[3]`) argument for a const
/// one; none is ever modified. Rotations are row-major, applied as
/// x' = rot * x + trans, and may be NULL for the identity (trans NULL: zero).
#ifndef CAROM_TESTKIT_MESH_REFERENCE_H
#define CAROM_TESTKIT_MESH_REFERENCE_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- exact predicates ------------------------------------------------------ */

/// The exact sign (+1, -1 or 0) of the determinant of the rows a - d, b - d,
/// c - d: positive when d is on the side of the plane a, b, c opposite to
/// the one (b - a) x (c - a) points to, 0 exactly when the four are
/// coplanar.
int ref_orient3d(const double a[3], const double b[3], const double c[3], const double d[3]);

/// The exact sign (+1, -1 or 0) of (a - c) x (b - c): +1 when a, b, c turn
/// counter-clockwise, 0 exactly when they are collinear.
int ref_orient2d(const double a[2], const double b[2], const double c[2]);

/// 1 when the triangle has zero area exactly (its corners are collinear or
/// coincide), else 0.
int ref_tri_degenerate(double tri[3][3]);

/* ---- triangle against triangle --------------------------------------------- */

/// 1 when the closed triangles a and b share a point (touching at a vertex
/// or along an edge included), else 0; exact. Coplanar pairs are decided in
/// the plane. Degenerate triangles are handled as what they are: collinear
/// corners as the segment between the two extreme ones, coincident corners
/// as a point. (carom's mesh queries skip zero-area triangles instead; tests
/// must filter those pairs themselves, see ref_mesh_pair.degenerate.)
int ref_tri_tri_intersect(double a[3][3], double b[3][3]);

/// Euclidean distance between the triangles (ref_triangle_triangle); 0, up
/// to rounding, when they intersect.
double ref_tri_tri_separation(double a[3][3], double b[3][3]);

/// Penetration depth: the length of the shortest translation of b that
/// leaves the triangles touching but not overlapping, i.e. the smallest
/// overlap of their projections over the separating-axis candidates (both
/// normals, the nine edge cross products), which is exact for triangles.
/// 0 when they do not intersect (ref_tri_tri_intersect), and 0 for coplanar
/// overlap (a nudge along the normal separates them), so a small depth marks
/// an intersection a float test may miss.
double ref_tri_tri_penetration(double a[3][3], double b[3][3]);

/// One number for both sides of the borderline: the separation when the
/// triangles do not intersect, minus the penetration depth when they do.
double ref_tri_tri_signed_distance(double a[3][3], double b[3][3]);

/* ---- mesh against mesh ------------------------------------------------------ */

/// Corners of triangle i of a mesh (vertices v, index triples t), converted
/// to double and moved by rot * x + trans (NULL: identity, zero). Exactly
/// what ref_mesh_pairs uses for mesh B, so a test can recompute any measure
/// on the very same doubles. Indices are not checked.
void ref_mesh_triangle(float (*v)[3], int (*t)[3], int i, double rot[3][3], const double trans[3],
                       double out[3][3]);

/// 1 when triangle i of the mesh has zero area exactly in its own (float)
/// coordinates; ref_tri_degenerate of the untransformed corners.
int ref_mesh_triangle_degenerate(float (*v)[3], int (*t)[3], int i);

/// One pair of triangles: index a into mesh A, b into mesh B.
typedef struct ref_mesh_pair {
    int a;
    int b;
    /// ref_tri_tri_intersect of the two (A's corners as given, B's moved into
    /// A's frame); -1 for ref_mesh_box_candidates, which does not evaluate it.
    int intersect;
    /// Bit 0: A's triangle has zero area, bit 1: B's (exactly, in their own
    /// float coordinates). carom never reports such triangles.
    int degenerate;
    /// ref_tri_tri_separation, 0 when intersect is 1 (whatever rounding
    /// would say) and for box candidates. In A's length units.
    double distance;
    /// ref_tri_tri_penetration when intersect is 1, else 0.
    double depth;
} ref_mesh_pair;

/// A growable list of pairs. Owns `pairs` (malloc); free with
/// ref_pair_list_free. A zeroed struct is an empty list.
typedef struct ref_pair_list {
    ref_mesh_pair* pairs;
    int count;    ///< pairs in use
    int capacity; ///< pairs allocated
} ref_pair_list;

/// Every pair (i of mesh A, j of mesh B) whose triangles intersect or lie
/// within `band` of each other, B's vertices first mapped into A's frame by
/// x' = rot * x + trans in double (rot, trans NULL: identity, zero).
/// band == 0 gives exactly the intersecting pairs (ref_tri_tri_intersect);
/// band > 0 adds the non-intersecting pairs whose ref_tri_tri_separation is
/// <= band. Degenerate triangles take part (see ref_mesh_pair.degenerate).
/// The result equals the all-pairs loop over ref_mesh_triangle corners with
/// those predicates; the work is cut by a sort-and-sweep over triangle boxes
/// (B's inflated by band plus a relative slack of 1e-12, so no pair is lost
/// to rounding), so 75k against 75k overlapping triangles takes seconds.
/// Output sorted by (a, b). `*out` is overwritten (not freed: pass a zeroed
/// or freed list). Returns 0, or -1 (with `*out` zeroed) when out of memory,
/// on negative counts or band, NULL arrays with nonzero counts, or more than
/// INT_MAX pairs.
int ref_mesh_pairs(float (*va)[3], int (*ta)[3], int na, float (*vb)[3], int (*tb)[3], int nb,
                   double rot[3][3], const double trans[3], double band, ref_pair_list* out);

/// The candidates of ref_mesh_pairs without the exact test: every pair whose
/// axis-aligned boxes overlap in A's frame (closed), the boxes computed in
/// double from the corners ref_mesh_triangle gives, B's inflated by band
/// plus the same relative slack (1e-12 of the largest coordinate magnitude
/// plus band). A superset of the pairs within distance band, for a caller
/// that runs its own predicate. Pairs have intersect = -1 and distance =
/// depth = 0; degenerate is filled. Same arguments, order and failures as
/// ref_mesh_pairs.
int ref_mesh_box_candidates(float (*va)[3], int (*ta)[3], int na, float (*vb)[3], int (*tb)[3], int nb,
                            double rot[3][3], const double trans[3], double band, ref_pair_list* out);

/// Frees the pairs and zeroes the list. NULL and zeroed lists are fine.
void ref_pair_list_free(ref_pair_list* list);

/* ---- rays ----------------------------------------------------------------- */

/// Whether the segment origin + s * translation, s in [0, 1], meets the
/// closed triangle (either side); exact, for the segment from origin to the
/// double sum origin + translation. On a hit writes to `t` (may be NULL) the
/// least such s, in [0, 1]: 0 when the origin is on the triangle, the entry
/// point for a segment lying in the triangle's plane. Zero-area triangles
/// never hit. A zero translation tests the origin alone.
int ref_ray_triangle(const double origin[3], const double translation[3], double tri[3][3], double* t);

/// How clearly the segment hits (> 0) or misses (< 0) the triangle, in
/// length units: the smallest of the signed distances that decide a hit,
/// namely of each end to the triangle's plane (positive when the ends are on
/// opposite sides) and of the ray's line to each edge's line (positive on
/// the inside). Moving the ray or the corners by less than |margin| cannot
/// change the answer, roughly; |margin| below about 1e-6 of the coordinates'
/// size marks a grazing or edge hit (or near miss) where a float ray cast
/// may disagree. Exactly 0 when an end lies on the plane (a ray starting on
/// the triangle) or the segment lies in the plane and touches the triangle;
/// minus the distance when a segment in the plane misses; -INFINITY for a
/// zero-area triangle, which never hits. The sign agrees with
/// ref_ray_triangle except within rounding of 0.
double ref_ray_triangle_margin(const double origin[3], const double translation[3], double tri[3][3]);

/// ref_ray_mesh's answer.
typedef struct ref_ray_hit {
    int hit;         ///< 1 when some triangle is hit
    int triangle;    ///< the hit with the least t, ties to the lowest index; -1 without a hit
    double t;        ///< its parameter in [0, 1]; 0 without a hit
    int count;       ///< how many triangles the segment hits
    double margin;   ///< ref_ray_triangle_margin of `triangle`; 0 without a hit
    /// How close any triangle comes to flipping: the least, over the
    /// triangles of nonzero area, of |ref_ray_triangle_margin| for a hit and
    /// max(|margin|, segment-triangle distance) for a miss (INFINITY when
    /// there are none). Small when some triangle is hit near its boundary
    /// or missed narrowly; when it is clearly positive (say above 1e-5 of
    /// the coordinates' size), a float ray cast must agree on hit or miss
    /// and its t should match to float precision.
    double grazing;
} ref_ray_hit;

/// Casts the segment origin + s * translation, s in [0, 1], against both
/// sides of all n triangles of the mesh (ref_ray_triangle on each; only
/// triangles whose box misses the segment's box are skipped, exactly), the
/// mesh at its own coordinates. `*out` is always written; n <= 0 is a miss.
/// About 2 ms per ray on a 75k-triangle mesh (-O2).
void ref_ray_mesh(float (*v)[3], int (*t)[3], int n, const double origin[3], const double translation[3],
                  ref_ray_hit* out);

/// ref_ray_mesh with the mesh moved by rot * x + trans first (NULL:
/// identity, zero), using the corners of ref_mesh_triangle; origin and
/// translation are in the moved frame.
void ref_ray_mesh_posed(float (*v)[3], int (*t)[3], int n, double rot[3][3], const double trans[3],
                        const double origin[3], const double translation[3], ref_ray_hit* out);

/* ---- oriented box against triangle ------------------------------------------
 * The box is the set of points center + sum_k s_k * axes[k] with
 * |s_k| <= half[k]: axes[k] are its unit axes (rows, orthonormal), half[k]
 * >= 0 its half extents. A world AABB (center c, half extents h) seen from
 * a mesh whose local points map to the world by x -> R x + p is the box
 * center = R^T (c - p), axes[k] = row k of R (R^T times world axis k),
 * half = h. */

/// 1 when the closed box and the closed triangle share a point, by the
/// 13-axis separating-axis test in double: the box's 3 axes, the triangle's
/// normal and the 9 cross products of box axes and triangle edges. That set
/// is also complete for degenerate triangles (zero axes are skipped): a
/// segment or a point is tested as what it is. Not exact: configurations
/// touching within rounding (about 1e-15 of the coordinates) may go either
/// way; ref_obb_triangle_margin measures how close a case is.
int ref_obb_triangle_intersect(const double center[3], double axes[3][3], const double half[3], double tri[3][3]);

/// The separating-axis margin: the largest gap between the projections over
/// the 13 axes (normalised), positive when the two are separated (a lower
/// bound on their distance), else minus the smallest overlap (the
/// penetration depth). ref_obb_triangle_intersect is exactly margin <= 0.
double ref_obb_triangle_margin(const double center[3], double axes[3][3], const double half[3], double tri[3][3]);

/// Euclidean distance between box and triangle: 0 when they intersect
/// (ref_obb_triangle_intersect), else the least distance from the triangle
/// to the 12 triangles of the box's surface.
double ref_obb_triangle_distance(const double center[3], double axes[3][3], const double half[3],
                                 double tri[3][3]);

#ifdef __cplusplus
}
#endif

#endif
