// carom bench harness: timing, options, random numbers, checks, JSON lines.
#define _POSIX_C_SOURCE 200809L

#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static bool env_flag(const char* name)
{
    const char* v = getenv(name);
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

bench_options bench_parse_options(int argc, char** argv, const char* usage_name)
{
    bench_options opt = {0};
    opt.quick = env_flag("CAROM_BENCH_QUICK");
    int reps = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            opt.quick = true;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--verbose") == 0) {
            opt.verbose = true;
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            opt.only_case = argv[++i];
        } else {
            bool help = strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
            fprintf(help ? stdout : stderr,
                    "usage: %s [--quick] [--reps N] [--case NAME] [--verbose]\n"
                    "  --quick       few queries and repetitions (also CAROM_BENCH_QUICK=1)\n"
                    "  --reps N      timed repetitions per implementation\n"
                    "  --case NAME   only cases whose name contains NAME\n"
                    "  --verbose     describe the worst disagreement of each implementation\n"
                    "JSON lines go to stdout and are appended to $CAROM_BENCH_OUT if set.\n",
                    usage_name);
            exit(help ? 0 : 2);
        }
    }
    opt.reps = reps > 0 ? reps : (opt.quick ? 3 : 9);
    return opt;
}

bool bench_case_selected(const bench_options* opt, const char* case_name)
{
    return opt->only_case == NULL || strstr(case_name, opt->only_case) != NULL;
}

// ---- random numbers ----

bench_rng bench_rng_seed(uint64_t seed)
{
    bench_rng r = {seed};
    return r;
}

uint64_t bench_rng_next(bench_rng* rng)
{
    // splitmix64 (Steele, Lea, Flood 2014): passes BigCrush, one add per draw.
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double bench_rng_unit(bench_rng* rng)
{
    return (double)(bench_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

double bench_rng_range(bench_rng* rng, double lo, double hi)
{
    return lo + (hi - lo) * bench_rng_unit(rng);
}

void bench_rng_direction(bench_rng* rng, double out[3])
{
    // Uniform z and azimuth give a uniform point on the sphere (Archimedes).
    double z = bench_rng_range(rng, -1.0, 1.0);
    double phi = bench_rng_range(rng, 0.0, 2.0 * 3.14159265358979323846);
    double s = sqrt(fmax(0.0, 1.0 - z * z));
    out[0] = s * cos(phi);
    out[1] = s * sin(phi);
    out[2] = z;
}

void bench_rng_quat(bench_rng* rng, double out[4])
{
    // Shoemake, "Uniform random rotations", Graphics Gems III.
    const double two_pi = 2.0 * 3.14159265358979323846;
    double u1 = bench_rng_unit(rng), u2 = bench_rng_unit(rng), u3 = bench_rng_unit(rng);
    double a = sqrt(1.0 - u1), b = sqrt(u1);
    out[0] = a * sin(two_pi * u2);
    out[1] = a * cos(two_pi * u2);
    out[2] = b * sin(two_pi * u3);
    out[3] = b * cos(two_pi * u3);
}

// ---- timing ----

static int compare_doubles(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

double bench_median(double* values, int n)
{
    if (n <= 0) {
        return 0.0;
    }
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return (n & 1) ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void bench_measure(bench_impl* impls, int count, int ops_per_run, int reps)
{
    if (count <= 0) {
        return;
    }
    if (reps < 1) {
        reps = 1;
    }
    double* samples = malloc(sizeof(double) * (size_t)count * (size_t)reps);
    if (samples == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    double per = ops_per_run > 0 ? 1.0 / ops_per_run : 1.0;
    // Warm-up: page in the code and data, fill the branch predictors.
    for (int k = 0; k < count; k++) {
        impls[k].run(impls[k].ctx);
    }
    for (int r = 0; r < reps; r++) {
        for (int j = 0; j < count; j++) {
            int k = (j + r) % count;
            double t0 = bench_now_ns();
            impls[k].run(impls[k].ctx);
            double t1 = bench_now_ns();
            samples[k * reps + r] = (t1 - t0) * per;
        }
    }
    for (int k = 0; k < count; k++) {
        double* s = samples + k * reps;
        impls[k].ns_per_op = bench_median(s, reps);
        impls[k].ns_min = s[0];
    }
    free(samples);
}

// ---- checks ----

bench_check bench_check_distances(const double* ref, const double* got, int n, double abs_tol,
                                  double rel_tol)
{
    bench_check c = {0};
    c.n = n;
    c.worst = -1;
    for (int i = 0; i < n; i++) {
        double d = got[i];
        if (!isfinite(d)) {
            c.wrong++;
            if (c.max_error < INFINITY) {
                c.worst = i;
            }
            c.max_error = INFINITY;
            continue;
        }
        if (d < 0.0) {
            d = 0.0;
        }
        double err = fabs(d - ref[i]);
        if (err > abs_tol + rel_tol * ref[i]) {
            c.wrong++;
            if (err > c.max_error) {
                c.max_error = err;
                c.worst = i;
            }
        }
    }
    if (c.wrong == 0) {
        snprintf(c.text, sizeof c.text, "ok");
    } else {
        snprintf(c.text, sizeof c.text, "%d/%d distance off by up to %.2g", c.wrong, n,
                 c.max_error);
    }
    return c;
}

bench_check bench_check_overlaps(const double* ref, const unsigned char* touching,
                                 const unsigned char* got, int n)
{
    bench_check c = {0};
    c.n = n;
    c.worst = -1;
    for (int i = 0; i < n; i++) {
        if (touching != NULL && touching[i]) {
            c.touching++;
            continue;
        }
        bool want = ref[i] <= 0.0;
        bool have = got[i] != 0;
        if (want && !have) {
            c.missed++;
            if (c.worst < 0) {
                c.worst = i;  // a false hit, when there is one, replaces it
            }
        } else if (!want && have) {
            c.false_hits++;
            if (ref[i] > c.max_false_distance) {
                c.max_false_distance = ref[i];
                c.worst = i;
            }
        }
    }
    c.wrong = c.missed + c.false_hits;
    if (c.wrong == 0) {
        snprintf(c.text, sizeof c.text, "ok");
    } else if (c.false_hits == 0) {
        snprintf(c.text, sizeof c.text, "%d/%d overlaps missed", c.missed, n);
    } else {
        snprintf(c.text, sizeof c.text,
                 "%d/%d wrong: %d overlaps missed, %d false overlaps at distance up to %.2g",
                 c.wrong, n, c.missed, c.false_hits, c.max_false_distance);
    }
    return c;
}

// ---- JSON lines ----

static void json_append(bench_json* j, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void json_append(bench_json* j, const char* fmt, ...)
{
    if (j->len >= sizeof j->buf) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(j->buf + j->len, sizeof j->buf - j->len, fmt, ap);
    va_end(ap);
    if (w > 0) {
        j->len += (size_t)w;
        if (j->len >= sizeof j->buf) {
            j->len = sizeof j->buf - 1;
        }
    }
}

static void json_string(bench_json* j, const char* s)
{
    json_append(j, "\"");
    for (; s != NULL && *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            json_append(j, "\\%c", ch);
        } else if (ch < 0x20) {
            json_append(j, "\\u%04x", ch);
        } else {
            json_append(j, "%c", ch);
        }
    }
    json_append(j, "\"");
}

static void json_key(bench_json* j, const char* key)
{
    json_append(j, ",");
    json_string(j, key);
    json_append(j, ":");
}

void bench_json_begin(bench_json* j, const char* bench, const char* case_name, const char* impl,
                      int n, double ns_per_op, const char* check)
{
    j->len = 0;
    json_append(j, "{\"bench\":");
    json_string(j, bench);
    json_key(j, "case");
    json_string(j, case_name);
    json_key(j, "impl");
    json_string(j, impl);
    json_key(j, "n");
    json_append(j, "%d", n);
    bench_json_num(j, "ns_per_op", ns_per_op);
    json_key(j, "check");
    json_string(j, check);
}

void bench_json_int(bench_json* j, const char* key, long long value)
{
    json_key(j, key);
    json_append(j, "%lld", value);
}

void bench_json_num(bench_json* j, const char* key, double value)
{
    json_key(j, key);
    if (!isfinite(value)) {
        json_append(j, "null");
    } else {
        json_append(j, "%.6g", value);
    }
}

void bench_json_str(bench_json* j, const char* key, const char* value)
{
    json_key(j, key);
    json_string(j, value);
}

void bench_json_emit(bench_json* j)
{
    json_append(j, "}");
    fprintf(stdout, "%s\n", j->buf);
    fflush(stdout);
    const char* path = getenv("CAROM_BENCH_OUT");
    if (path != NULL && path[0] != '\0') {
        FILE* f = fopen(path, "a");
        if (f == NULL) {
            fprintf(stderr, "bench: cannot append to %s\n", path);
            return;
        }
        fprintf(f, "%s\n", j->buf);
        fclose(f);
    }
}

void bench_note(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
