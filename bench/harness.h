/// carom bench harness: the pieces every benchmark in bench/ shares.
///
/// - monotonic timing and interleaved, repeated measurement of several
///   implementations over identical inputs in one process (median ns/op);
/// - a fixed-seed random generator for poses, independent of libc;
/// - agreement checks against a reference that produce the `check` string;
/// - JSON-lines output to stdout and, when CAROM_BENCH_OUT names a file,
///   appended to that file as well.
///
/// Plain C11 with a C++-friendly header, so peer translation units written in
/// C++ (FCL, Bullet) can use the shared types too.
#ifndef CAROM_BENCH_HARNESS_H
#define CAROM_BENCH_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Monotonic clock in nanoseconds (CLOCK_MONOTONIC).
double bench_now_ns(void);

/// Options every benchmark accepts.
typedef struct bench_options {
    bool quick;  ///< --quick or CAROM_BENCH_QUICK=1 (nonempty, not "0"): few queries, few repetitions
    int reps;    ///< timed repetitions per implementation (--reps N; default 9, quick 3)
    const char* only_case; ///< --case NAME: run only the cases whose name contains NAME
    bool verbose;  ///< --verbose: describe the worst disagreement of each implementation on stderr
} bench_options;

/// Parses argv and the environment. --help prints usage and exits 0; unknown
/// arguments print usage to stderr and exit(2).
bench_options bench_parse_options(int argc, char** argv, const char* usage_name);

/// True when `case_name` passes the --case filter.
bool bench_case_selected(const bench_options* opt, const char* case_name);

/// ---- Random numbers (splitmix64: tiny, fixed across platforms) ----
typedef struct bench_rng {
    uint64_t state;
} bench_rng;

bench_rng bench_rng_seed(uint64_t seed);
uint64_t bench_rng_next(bench_rng* rng);
/// Uniform in [0, 1).
double bench_rng_unit(bench_rng* rng);
/// Uniform in [lo, hi).
double bench_rng_range(bench_rng* rng, double lo, double hi);
/// Uniform direction on the unit sphere.
void bench_rng_direction(bench_rng* rng, double out[3]);
/// Uniform random rotation as a unit quaternion (x, y, z, w) (Shoemake).
void bench_rng_quat(bench_rng* rng, double out[4]);

/// ---- Interleaved timing ----

/// Runs one whole batch (all queries of a case) once. The result arrays it
/// writes are owned by `ctx`.
typedef void bench_run_fn(void* ctx);

/// One implementation under measurement.
typedef struct bench_impl {
    const char* name;  ///< "carom", "libccd-gjk", ...
    bench_run_fn* run;
    void* ctx;
    double ns_per_op;  ///< out: median over the repetitions
    double ns_min;     ///< out: fastest repetition
} bench_impl;

/// Times `count` implementations: one untimed warm-up run each, then `reps`
/// rounds, each round running every implementation once (the starting
/// implementation rotates from round to round so none is always first after
/// another's cache pollution). Each run is divided by `ops_per_run`; the median
/// over the rounds goes to ns_per_op.
void bench_measure(bench_impl* impls, int count, int ops_per_run, int reps);

/// ---- Agreement checks ----

/// Tally of one implementation's answers against the reference on one case.
typedef struct bench_check {
    int n;            ///< queries compared
    int wrong;        ///< answers outside tolerance (or non-finite)
    double max_error; ///< largest |answer - reference| among the wrong ones
    int touching;     ///< overlap checks: queries in the touching band (either answer accepted)
    int missed;       ///< overlap checks: reported separate, reference overlaps
    int false_hits;   ///< overlap checks: reported overlap, reference separated
    double max_false_distance; ///< reference distance of the worst false hit
    int worst;        ///< index of the worst wrong answer (largest error, or a miss), -1 if none
    char text[160];   ///< the JSON `check` value: "ok" or what disagrees
} bench_check;

/// Compares distances. A distance is accepted when
/// |got - ref| <= abs_tol + rel_tol * ref. Negative answers are clamped to 0
/// first (peers report overlap as -1 or as a negative depth). NaN is wrong.
bench_check bench_check_distances(const double* ref, const double* got, int n, double abs_tol,
                                  double rel_tol);

/// Compares boolean overlap answers with the reference distance: overlap is
/// right when ref <= 0, separation when ref > 0, except on queries flagged in
/// `touching` (may be NULL), where either answer is accepted and which are
/// counted in `touching`. `max_false_distance` is the largest reference
/// distance of a false overlap.
bench_check bench_check_overlaps(const double* ref, const unsigned char* touching,
                                 const unsigned char* got, int n);

/// ---- JSON lines ----

typedef struct bench_json {
    char buf[2048];
    size_t len;
} bench_json;

/// Starts a line with the mandatory fields
/// {"bench","case","impl","n","ns_per_op","check"}.
void bench_json_begin(bench_json* j, const char* bench, const char* case_name, const char* impl,
                      int n, double ns_per_op, const char* check);
void bench_json_int(bench_json* j, const char* key, long long value);
/// A number with up to 6 significant digits (`null` when not finite).
void bench_json_num(bench_json* j, const char* key, double value);
void bench_json_str(bench_json* j, const char* key, const char* value);
/// Closes the line, prints it to stdout and appends it to $CAROM_BENCH_OUT.
void bench_json_emit(bench_json* j);

/// Median of `n` doubles (the array is sorted in place). 0 for n == 0.
double bench_median(double* values, int n);

/// Prints a progress note to stderr (stdout carries only JSON lines).
void bench_note(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

#ifdef __cplusplus
}
#endif

#endif
