/*
 * bench_numtext.c — speed of numtext_format_shortest() (the shortest
 * decimal of a double, as every JSON answer prints its reals) against the
 * previous implementation (tests/numtext_reference.h), same process, same
 * values, on three sets: statistics as the service reports them (means,
 * SDs, 95% bounds, sums and ratios of measurements), short decimals
 * (k / 10^j with k of up to 6 digits) and random bit patterns. Each figure
 * is the best of --reps timed passes, new and reference alternating. Then
 * the two are compared byte for byte on --verify values of every kind in
 * tests/numtext_samples.h; any difference fails the program.
 *
 *   bench_numtext [--n N] [--random-n N] [--reps R] [--verify N]
 *                                      prints one JSON line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/numtext.h"
#include "tests/numtext_reference.h"
#include "tests/numtext_samples.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

typedef int (*printer)(double, char *);

/* seconds for one pass of f over vals */
static double pass(printer f, const double *vals, long n)
{
    char buf[40];
    volatile long sink = 0;
    double t0 = now();
    for (long i = 0; i < n; i++)
        sink += f(vals[i], buf);
    return now() - t0;
}

static int format_reference(double v, char *buf)
{
    return numtext_ref_format_shortest(v, buf);
}

/* best ns per value of the new and the reference printer over reps passes */
static void time_set(const double *vals, long n, int reps, double *new_ns, double *ref_ns)
{
    double best_new = 1e30, best_ref = 1e30;
    for (int r = 0; r < reps; r++) {
        double a = pass(numtext_format_shortest, vals, n), b = pass(format_reference, vals, n);
        best_new = a < best_new ? a : best_new;
        best_ref = b < best_ref ? b : best_ref;
    }
    *new_ns = best_new / n * 1e9;
    *ref_ns = best_ref / n * 1e9;
}

static void fill(double *vals, long n, enum numtext_kind kind, uint64_t seed)
{
    for (long i = 0; i < n; i++)
        vals[i] = numtext_sample(&seed, kind);
}

/* the kind of the i-th verified value: few of those the reference is slow
 * on (snprintf: wide exponents, subnormals, random bits), the rest even */
static enum numtext_kind verify_kind(long i)
{
    int slot = (int)(i % 256);
    if (slot < 4)
        return NUMTEXT_RANDOM_BITS;
    if (slot < 5)
        return NUMTEXT_SUBNORMAL;
    if (slot < 7)
        return NUMTEXT_EXTREME;
    if (slot < 15)
        return NUMTEXT_POWERS;
    static const enum numtext_kind rest[] = {NUMTEXT_FEW_DIGITS, NUMTEXT_COMPUTED, NUMTEXT_NEAR_2P53,
                                              NUMTEXT_HALFWAY};
    return rest[slot % 4];
}

static long verify(long n, double *seconds)
{
    uint64_t s = 0x243f6a8885a308d3ULL;
    long bad = 0;
    char a[40], b[40];
    double t0 = now();
    for (long i = 0; i < n; i++) {
        double v = numtext_sample(&s, verify_kind(i));
        v = i & 1 ? -v : v;
        int na = numtext_format_shortest(v, a), nb = numtext_ref_format_shortest(v, b);
        if ((na != nb || strcmp(a, b)) && bad++ < 10)
            fprintf(stderr, "%a: %s, the reference %s\n", v, a, b);
    }
    *seconds = now() - t0;
    return bad;
}

int main(int argc, char **argv)
{
    long n = 1000000, random_n = 100000, verify_n = 20000000;
    int reps = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n"))
            n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--random-n"))
            random_n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--verify"))
            verify_n = atol(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_numtext [--n N] [--random-n N] [--reps R] [--verify N]\n");
            return 2;
        }
    }
    if (n < 1 || random_n < 1 || reps < 1 || verify_n < 0) {
        fprintf(stderr, "bench_numtext: counts must be positive\n");
        return 2;
    }
    double *vals = malloc((size_t)(n > random_n ? n : random_n) * sizeof *vals);
    if (!vals) {
        fprintf(stderr, "bench_numtext: out of memory\n");
        return 1;
    }
    double stats_new, stats_ref, short_new, short_ref, random_new, random_ref;
    fill(vals, n, NUMTEXT_COMPUTED, 0x5851f42d4c957f2dULL);
    time_set(vals, n, reps, &stats_new, &stats_ref);
    fill(vals, n, NUMTEXT_FEW_DIGITS, 0x14057b7ef767814fULL);
    time_set(vals, n, reps, &short_new, &short_ref);
    fill(vals, random_n, NUMTEXT_RANDOM_BITS, 0x2545f4914f6cdd1dULL);
    time_set(vals, random_n, reps, &random_new, &random_ref);
    free(vals);
    double verify_s;
    long bad = verify(verify_n, &verify_s);
    printf("{\"figure\": \"numtext_shortest\", \"stats_ns\": %.1f, \"stats_reference_ns\": %.1f, "
           "\"stats_speedup\": %.2f, \"short_ns\": %.1f, \"short_reference_ns\": %.1f, "
           "\"short_speedup\": %.2f, \"random_ns\": %.1f, \"random_reference_ns\": %.1f, "
           "\"random_speedup\": %.2f, \"verified\": %ld, \"verify_s\": %.1f, \"mismatches\": %ld}\n",
           stats_new, stats_ref, stats_ref / stats_new, short_new, short_ref, short_ref / short_new,
           random_new, random_ref, random_ref / random_new, verify_n, verify_s, bad);
    return bad ? 1 : 0;
}
