/// Double-precision reference for the broad phase, and scene generators for
/// its tests and benchmarks.
///
/// The reference answers the question `carom_broad_update` answers (which
/// pairs of linearly moving boxes overlap at some time in [0, 1], touching
/// counts, and when first) by testing every pair that could possibly
/// qualify, in double, with Levine's per-axis time intervals. It shares no
/// code with the library: it includes carom/broad.h for the input and output
/// types only and does not link carom.
///
/// The float inputs widen to double exactly, and on every axis the
/// differences the test needs (gaps between box faces, the relative
/// displacement) are then exact for all but wildly mixed magnitudes, so the
/// yes/no answers are exact and a first time is the quotient of exact values,
/// rounded once. A float implementation rounds more, so a test should demand
/// agreement only away from the boundary of the answer: `ref_broad_reference`
/// marks the pairs within a small band of that boundary as *borderline*, and
/// `ref_broad_compare` forgives disagreement on those only.
///
/// The scene generators are deterministic: their own splitmix64 generator,
/// one draw per statement, only the basic operations and sqrt (correctly
/// rounded in IEEE arithmetic) on the values drawn, and no fused
/// multiply-adds (the file is compiled with -ffp-contract=off). The same
/// description gives the same scene, bit for bit, with any compiler and
/// optimisation level on any platform with IEEE double evaluated in double
/// (FLT_EVAL_METHOD 0).
#ifndef CAROM_TESTKIT_BROAD_REFERENCE_H
#define CAROM_TESTKIT_BROAD_REFERENCE_H

#include <stddef.h>

#include <carom/broad.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- one pair ----------------------------------------------------------------- */

/// Levine's first time in [0, 1] at which box a, moving by a_disp over the
/// step, and box b, moving by b_disp, overlap (closed boxes: touching
/// counts); -1 when they do not meet during the step. On each axis, with
/// w = b_disp - a_disp, the times where [a_min, a_max] and
/// [b_min + t w, b_max + t w] overlap form an interval (every time when
/// w = 0 and they overlap, none when w = 0 and they do not); the answer is
/// the start of the intersection of the three intervals with [0, 1].
/// Boxes must be valid (min <= max) and finite; a NaN gives -1.
double ref_broad_sweep_time(const double a_min[3], const double a_max[3], const double a_disp[3],
                            const double b_min[3], const double b_max[3], const double b_disp[3]);

/* ---- pair lists ---------------------------------------------------------------- */

/// The default relative width of the borderline band (see ref_broad_reference):
/// 84 to 168 float ulps of the largest coordinate involved.
#define REF_BROAD_BAND 1e-5

/// The default tolerance on first times in ref_broad_compare, in units of
/// the step, on top of each pair's own time bounds.
#define REF_BROAD_TIME_TOL 1e-4

/// The exact pair list: every pair of proxies whose moving boxes overlap
/// during the step, as `carom_broad_update` documents it (a < b by id, sorted
/// by (a, b), time = first overlap time rounded to float). Proxy i has id
/// `ids[i]`, box `boxes[i]` and displacement `displacements[i]`
/// (`displacements` NULL: nothing moves). Returns a malloc'ed array (free
/// with free()) and its length in `*count`; NULL with `*count` = 0 when there
/// are no pairs; NULL with `*count` = -1 for n < 0, NULL arrays, non-finite
/// or inverted boxes, non-finite displacements, repeated ids, or out of
/// memory.
carom_broad_pair* ref_broad_pairs(int n, const int* ids, const carom_aabb* boxes, const vec3s* displacements,
                                  int* count);

/// One entry of a reference list: a pair of the exact list, or a pair that
/// is not in it but is within the borderline band of being in it.
typedef struct ref_broad_entry {
    int a; ///< the smaller id
    int b; ///< the larger id
    /// The exact first overlap time in [0, 1], or -1 when the pair is not in
    /// the exact list (then it is borderline).
    double time;
    /// The first time of the pair with the boxes grown by the band (clamped
    /// to [0, 1]): no implementation within the band reports it earlier.
    double time_lo;
    /// The first time of the pair with the boxes shrunk by the band (1 when
    /// they then never meet): no implementation within the band reports it
    /// later.
    double time_hi;
    /// True when the pair's membership could change within the band: it is
    /// in the exact list and the shrunk boxes do not meet, or it is not in
    /// the exact list and the grown boxes do.
    bool borderline;
} ref_broad_entry;

/// A reference list: the exact pairs and the borderline non-pairs, together,
/// sorted by (a, b). Owns `items` (malloc).
typedef struct ref_broad_list {
    ref_broad_entry* items;
    int count;      ///< entries
    int pairs;      ///< entries in the exact list (time >= 0)
    int borderline; ///< entries marked borderline, pairs or not
} ref_broad_list;

/// Computes the reference list for the proxies (arguments as for
/// ref_broad_pairs) with a borderline band of relative width `band`
/// (REF_BROAD_BAND is a sensible default; 0 gives the exact list with no
/// borderline entries).
///
/// The band: on each axis where either box moves, with delta = `band`
/// times the largest magnitude among the pair's coordinates and
/// displacements on that axis, the grown test lets faces be up to delta
/// apart and the shrunk test demands that they overlap by delta; the grown
/// test also runs the step from -band to 1 + band, the shrunk one from band
/// to 1 - band. An axis on which neither box moves is compared exactly,
/// without a band: comparing unmoved float faces is exact in float too, so a
/// library must get static overlaps exactly right, touching included. The
/// band is relative to coordinates, not box sizes, because that is how float
/// rounding scales: far from the origin it may exceed small boxes.
///
/// Pruning sorts the swept boxes on the axis where they overlap least
/// relative to their spread, sweeps, and skips pairs whose swept ranges,
/// grown by the band, are apart on any axis; such pairs cannot be entries,
/// so the result is that of testing every pair. Cost: n log n plus the pairs
/// whose swept ranges meet on the sweep axis (about 0.1 s for 20000 boxes
/// at one pair per box, -O2).
///
/// Returns 0; -1 on invalid input (as for ref_broad_pairs, or a band that is
/// NaN or outside [0, 0.25]) or out of memory, with `*out` zeroed.
int ref_broad_reference(ref_broad_list* out, int n, const int* ids, const carom_aabb* boxes,
                        const vec3s* displacements, double band);

/// Frees the entries and zeroes the list. NULL and zeroed lists are fine.
void ref_broad_list_free(ref_broad_list* list);

/// Finds the entry for the ids (in either order); NULL when there is none.
const ref_broad_entry* ref_broad_find(const ref_broad_list* list, int a, int b);

/* ---- comparing a library's list ------------------------------------------------ */

/// What ref_broad_compare found. A list passes when `ok` is true.
typedef struct ref_broad_report {
    int ref_pairs;      ///< pairs in the exact reference list
    int ref_borderline; ///< borderline entries in the reference list
    int got_pairs;      ///< pairs in the list checked
    int common;         ///< pairs in both
    int missing;        ///< reference pairs absent from the list checked
    int extra;          ///< pairs of the list checked absent from the exact reference list
    int bad_missing;    ///< missing pairs that are not borderline
    int bad_extra;      ///< extra pairs that are not borderline (outside the band altogether)
    int bad_time;       ///< common pairs whose time is outside [time_lo, time_hi] +- the tolerance
    /// Entries of the list checked with a >= b, a time that is not in [0, 1],
    /// or out of (a, b) order or repeated.
    int malformed;
    double max_time_error; ///< the largest |got - exact| over common pairs
    bool ok;               ///< no bad_missing, bad_extra, bad_time or malformed
    /// The first offence in (a, b) order, for the message: NULL when ok,
    /// else "missing", "extra", "time" or "malformed".
    const char* first_what;
    int first_a, first_b;  ///< its pair, as listed
    double first_got;      ///< its time in the list checked (-1 when missing)
    double first_ref;      ///< its exact time (-1 when not a reference pair)
    double first_lo;       ///< its time bounds (-1 when outside the band)
    double first_hi;
    bool first_borderline; ///< whether its reference entry is borderline (false without one)
} ref_broad_report;

/// Checks `got` (count entries, as a broad phase returns them) against the
/// reference: every difference must be borderline, every common pair's time
/// must lie within its bounds widened by `time_tol` (in step units; see
/// REF_BROAD_TIME_TOL), and the list must be well-formed (a < b, strictly
/// increasing (a, b), times in [0, 1]). `got` may be NULL when count is 0.
ref_broad_report ref_broad_compare(const ref_broad_list* ref, const carom_broad_pair* got, int count,
                                   double time_tol);

/// Writes a one-line summary of the report into buf (always terminated,
/// truncated to size) and returns buf, for a test's failure message or a
/// benchmark's log.
const char* ref_broad_report_message(const ref_broad_report* report, char* buf, size_t size);

/* ---- scenes -------------------------------------------------------------------- */

/// The scene kinds.
typedef enum ref_broad_scene_kind {
    /// Boxes of about one size (each edge 0.5 to 1.5 box sizes) spread
    /// uniformly through a cube sized for the wanted pair density.
    REF_SCENE_UNIFORM = 0,
    /// A few dense clusters (roughly Gaussian, of uneven populations), each
    /// as dense as the wanted pair density asks, far apart.
    REF_SCENE_CLUSTERED,
    /// Sizes log-uniform over a factor 100 (0.1 to 10 box sizes, each edge
    /// 0.7 to 1.3 times that), plus one huge box per thousand (a fifth to a
    /// third of the world, at least 30 box sizes) on top of the density.
    REF_SCENE_MIXED_SIZES,
    /// A uniform scene whose boxes in the slab at the low-x end holding the
    /// `moving` fraction of the world move together (one displacement,
    /// mostly along +x, into the static rest).
    REF_SCENE_CONVOY,
    /// A uniform scene whose movers are slow (as `step` says) except 2% of
    /// all boxes (none below 25 boxes), which move a quarter to a half of the
    /// world (at least 8 box sizes) in a step; half of those are aimed
    /// through another box, meeting it mid-step, starting and ending clear
    /// of it (for steps of a few box sizes), so the pair exists only during
    /// the sweep.
    REF_SCENE_FAST_MOVERS,
} ref_broad_scene_kind;

/// Roles of the proxies in a scene.
enum {
    REF_ROLE_STATIC = 0, ///< never moves
    REF_ROLE_MOVER = 1,  ///< moves by about `step` box sizes a step
    REF_ROLE_FAST = 2,   ///< FAST_MOVERS: crosses many boxes a step
    REF_ROLE_CONVOY = 3, ///< CONVOY: moves with the convoy's displacement
};

/// What to generate. `{0}` plus a count gives a static uniform scene of unit
/// boxes at one pair per box.
typedef struct ref_broad_scene_desc {
    ref_broad_scene_kind kind;
    int n;                     ///< proxies (>= 0)
    unsigned long long seed;   ///< any value, 0 included
    /// Overlapping pairs at the start of the step, per box (pairs / n);
    /// 0 means 1. Motion adds the pairs met during the step. Met roughly
    /// (within a factor 2 for a few thousand boxes; huge boxes come on top).
    double pairs_per_box;
    /// Fraction of the proxies that move, in [0, 1] (FAST_MOVERS: of those
    /// that are not fast; CONVOY: the convoy's share of the world).
    double moving;
    double step;     ///< displacement of a mover relative to the box size (0.5 to 1.5 times this)
    double box_size; ///< the typical box edge; 0 means 1
    /// Added to every coordinate: the world's low corner, to put the scene
    /// far from the origin where float spacing is coarse (at most 1e11 in
    /// magnitude).
    double offset;
} ref_broad_scene_desc;

/// A generated scene. The arrays are ready to hand to a broad phase, one
/// proxy per index. Owns everything (malloc); free with ref_broad_scene_free.
typedef struct ref_broad_scene {
    ref_broad_scene_desc desc; ///< as given, with the defaults filled in
    int n;
    int* ids;                  ///< 0 .. n-1 until ref_broad_scene_shuffle_ids
    carom_aabb* boxes;         ///< boxes at the start of the current step
    vec3s* displacements;      ///< displacements over the current step
    unsigned char* roles;      ///< REF_ROLE_*
    carom_aabb world;          ///< the region the boxes were spread over (a cube)
    vec3s convoy;              ///< CONVOY: the convoy's displacement
    int frame;                 ///< steps advanced
    /// The generator's state (splitmix64), carried on from generation for
    /// advancing.
    unsigned long long rng;
} ref_broad_scene;

/// Generates a scene. Returns 0; -1 for a NULL argument, a negative n, an
/// unknown kind, NaN, infinite or out-of-range parameters (moving outside
/// [0, 1], negative step, pairs_per_box or box_size, offset beyond 1e11) or
/// out of memory, with `*out` zeroed.
int ref_broad_scene_make(ref_broad_scene* out, const ref_broad_scene_desc* desc);

/// Frees the arrays and zeroes the scene. NULL and zeroed scenes are fine.
void ref_broad_scene_free(ref_broad_scene* scene);

/// Advances the scene one step: every box becomes box + displacement (in
/// float, as a caller of `carom_broad_move` would compute it). Then each
/// mover (static boxes stay static) gets a fresh random displacement of its
/// role with probability `renew` (the convoy renews its common direction as
/// one), and movers heading out of the world turn back, so the density holds
/// over many steps.
void ref_broad_scene_advance(ref_broad_scene* scene, double renew);

/// Replaces the ids by distinct random ints from the whole int
/// range, negative ones included, and for n >= 4 INT_MIN, INT_MAX, -1 and 0
/// among them, so that nothing can rely on ids being small, positive, dense
/// or in the order of the arrays. Deterministic in `seed`. Returns 0, or -1
/// when out of memory (ids unchanged).
int ref_broad_scene_shuffle_ids(ref_broad_scene* scene, unsigned long long seed);

/// The reference list of the scene's current step (ref_broad_reference).
int ref_broad_scene_reference(const ref_broad_scene* scene, ref_broad_list* out, double band);

/// A short name of the kind ("uniform", "clustered", "mixed", "convoy",
/// "fast"); "?" for an unknown one.
const char* ref_broad_scene_kind_name(ref_broad_scene_kind kind);

#ifdef __cplusplus
}
#endif

#endif
