/*
 * test_aggregate.c — aggregation of one coordinate (modeling/aggregate.c):
 * hand-computed medians over steps, ranks and repetitions, warm-up steps,
 * phases, ranks with different step counts or missing from repetitions,
 * per-rank values and a straggler, a coordinate of realistic size, and the
 * steps per epoch with G and M from parameter expressions.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modeling/aggregate.h"
#include "modeling/expr.h"
#include "tests/check.h"

/* Reverses and interleaves the rows so agg_coordinate cannot rely on order. */
static void shuffle(agg_row *rows, size_t n)
{
    unsigned s = 12345;
    for (size_t i = n; i > 1; i--) {
        s = s * 1103515245u + 12345u;
        size_t j = (s >> 8) % i;
        agg_row t = rows[i - 1];
        rows[i - 1] = rows[j];
        rows[j] = t;
    }
}

static const agg_value *find(const agg_result *r, int callpath, int metric, int phase)
{
    for (size_t i = 0; i < r->nvalues; i++)
        if (r->values[i].callpath == callpath && r->values[i].metric == metric &&
            r->values[i].phase == phase)
            return &r->values[i];
    return NULL;
}

static void test_median(void)
{
    double scratch[8];
    double odd[] = {3, 1, 2}, even[] = {4, 1, 3, 2}, one[] = {5}, dup[] = {2, 9, 2, 2, 9};
    check(agg_median(odd, 3, scratch) == 2, "odd median");
    check(agg_median(even, 4, scratch) == 2.5, "even median: mean of the middle two");
    check(agg_median(one, 1, scratch) == 5, "one value");
    check(agg_median(dup, 5, scratch) == 2, "repeated values");
    check(odd[0] == 3 && odd[1] == 1 && even[0] == 4, "input left unsorted");
    double big[40];
    for (int i = 0; i < 40; i++)
        big[i] = (i * 17) % 40; /* a permutation of 0..39 */
    double s2[40];
    check(agg_median(big, 40, s2) == 19.5, "median of 40 values (qsort path)");
}

/* rank, step, value of train rows of callpath 0, metric 0, repetition 1 */
static size_t add_steps(agg_row *rows, size_t n, int rep, int rank, int phase, int cp, int metric,
                        const double *v, int nsteps)
{
    for (int s = 0; s < nsteps; s++)
        rows[n++] = (agg_row){.repetition = rep, .rank = rank, .phase = phase, .step = s,
                              .callpath = cp, .metric = metric, .value = v[s]};
    return n;
}

/* Four ranks with 5, 4, 3 and 1 train steps; warm-up = 1 step.
 *   rank 0: {100, 1, 3, 2, 5} -> {1, 3, 2, 5}  -> 2.5
 *   rank 1: {50, 4, 6, 8}     -> {4, 6, 8}     -> 6
 *   rank 2: {7, 9, 8}         -> {9, 8}        -> 8.5
 *   rank 3: {42}              -> only warm-up, kept -> 42
 * median over ranks of {2.5, 6, 8.5, 42} = (6 + 8.5) / 2 = 7.25. */
static size_t warmup_rows(agg_row *rows, double first)
{
    double r0[] = {first, 1, 3, 2, 5}, r1[] = {50, 4, 6, 8}, r2[] = {7, 9, 8}, r3[] = {42};
    size_t n = 0;
    n = add_steps(rows, n, 1, 0, 0, 0, 0, r0, 5);
    n = add_steps(rows, n, 1, 1, 0, 0, 0, r1, 4);
    n = add_steps(rows, n, 1, 2, 0, 0, 0, r2, 3);
    n = add_steps(rows, n, 1, 3, 0, 0, 0, r3, 1);
    return n;
}

static void test_warmup(void)
{
    agg_row rows[32];
    agg_result r;
    size_t n = warmup_rows(rows, 100);
    shuffle(rows, n);
    check(agg_coordinate(rows, n, 1, &r) == 0, "aggregate");
    check(r.nvalues == 1, "one value, got %zu", r.nvalues);
    const agg_value *v = find(&r, 0, 0, 0);
    if (v) {
        check(v->value == 7.25, "value %g, want 7.25", v->value);
        check(v->nreps == 1 && v->reps[0] == 7.25, "one repetition");
        static const double want[] = {2.5, 6, 8.5, 42};
        check(v->nranks == 4, "4 ranks, got %d", v->nranks);
        for (int k = 0; k < v->nranks && k < 4; k++)
            check(v->rank_ids[k] == k && v->ranks[k] == want[k], "rank %d: %d %g, want %g", k,
                  v->rank_ids[k], v->ranks[k], want[k]);
    }
    agg_result_free(&r);
    check(r.nvalues == 0 && r.values == NULL, "agg_result_free zeroes");

    /* a huge first step changes nothing */
    n = warmup_rows(rows, 1e12);
    check(agg_coordinate(rows, n, 1, &r) == 0 && r.nvalues == 1 && r.values[0].value == 7.25 &&
              r.values[0].ranks[0] == 2.5,
          "huge warm-up step ignored: %g", r.nvalues ? r.values[0].value : -1);
    agg_result_free(&r);

    /* without warm-up the first steps count:
     * {100,1,3,2,5} -> 3, {50,4,6,8} -> 7, {7,9,8} -> 8, {42} -> 42; median (7+8)/2 */
    n = warmup_rows(rows, 100);
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 1 && r.values[0].value == 7.5 &&
              r.values[0].ranks[0] == 3 && r.values[0].ranks[1] == 7,
          "warm-up 0 keeps every step: %g", r.nvalues ? r.values[0].value : -1);
    agg_result_free(&r);

    /* warm-up of 2: rank 2 keeps {8}, rank 3 still keeps its only step; rank 0
     * {3,2,5} -> 3, rank 1 {6,8} -> 7; median of {3, 7, 8, 42} = 7.5 */
    check(agg_coordinate(rows, n, 2, &r) == 0 && r.nvalues == 1 && r.values[0].value == 7.5 &&
              r.values[0].ranks[2] == 8 && r.values[0].ranks[3] == 42,
          "warm-up 2: %g", r.nvalues ? r.values[0].value : -1);
    agg_result_free(&r);
}

/* The same callpath and metric in train, validation and between steps:
 * three values, and warm-up applies to train only. */
static void test_phases(void)
{
    agg_row rows[32];
    size_t n = 0;
    double t0[] = {1000, 2, 4}, t1[] = {1000, 6};  /* train: {2,4} -> 3, {6} -> 6 -> 4.5 */
    double v0[] = {10, 20}, v1[] = {30};         /* validation: 15, 30 -> 22.5 */
    double b0[] = {0.5, 0.25, 1};                /* between: 0.5 (rank 0 only) */
    n = add_steps(rows, n, 1, 0, 0, 3, 1, t0, 3);
    n = add_steps(rows, n, 1, 1, 0, 3, 1, t1, 2);
    n = add_steps(rows, n, 1, 0, 1, 3, 1, v0, 2);
    n = add_steps(rows, n, 1, 1, 1, 3, 1, v1, 1);
    n = add_steps(rows, n, 1, 0, 2, 3, 1, b0, 3);
    shuffle(rows, n);
    agg_result r;
    check(agg_coordinate(rows, n, 1, &r) == 0 && r.nvalues == 3, "three phases");
    if (r.nvalues == 3) {
        check(r.values[0].phase == 0 && r.values[0].value == 4.5, "train %g", r.values[0].value);
        check(r.values[1].phase == 1 && r.values[1].value == 22.5, "validation %g (step 0 kept)",
              r.values[1].value);
        check(r.values[2].phase == 2 && r.values[2].value == 0.5 && r.values[2].nranks == 1,
              "between %g", r.values[2].value);
    }
    agg_result_free(&r);
}

/* Three repetitions, ranks 0 and 1 in all, rank 5 in repetition 2 only;
 * no warm-up. Rank 0's step 1 of repetition 1 comes as two rows (1 + 1).
 *   rep 1: rank 0 {1, 2, 3} -> 2, rank 1 {4, 4} -> 4           -> V(1) = 3
 *   rep 2: rank 0 {10} -> 10, rank 1 {2, 6} -> 4, rank 5 {100}  -> V(2) = 10
 *   rep 3: rank 0 {5, 7} -> 6, rank 1 {1, 1, 1} -> 1            -> V(3) = 3.5
 * V = median {3, 10, 3.5} = 3.5; per rank: 0 -> med{2,10,6} = 6,
 * 1 -> med{4,4,1} = 4, 5 -> 100. */
static size_t repetition_rows(agg_row *rows)
{
    size_t n = 0;
    double a[] = {1, 1, 3}, b[] = {4, 4}, c[] = {10}, d[] = {2, 6}, e[] = {100}, f[] = {5, 7},
           g[] = {1, 1, 1};
    n = add_steps(rows, n, 1, 0, 0, 0, 0, a, 3);
    rows[n++] = (agg_row){.repetition = 1, .rank = 0, .phase = 0, .step = 1, .value = 1};
    n = add_steps(rows, n, 1, 1, 0, 0, 0, b, 2);
    n = add_steps(rows, n, 2, 0, 0, 0, 0, c, 1);
    n = add_steps(rows, n, 2, 1, 0, 0, 0, d, 2);
    n = add_steps(rows, n, 2, 5, 0, 0, 0, e, 1);
    n = add_steps(rows, n, 3, 0, 0, 0, 0, f, 2);
    n = add_steps(rows, n, 3, 1, 0, 0, 0, g, 3);
    shuffle(rows, n);
    return n;
}

static void check_repetitions(const agg_value *v)
{
    check(v->value == 3.5, "value %g, want 3.5", v->value);
    check(v->nreps == 3 && v->reps[0] == 3 && v->reps[1] == 10 && v->reps[2] == 3.5,
          "per repetition %g %g %g", v->reps[0], v->reps[1], v->reps[2]);
    check(v->nranks == 3 && v->rank_ids[0] == 0 && v->rank_ids[1] == 1 && v->rank_ids[2] == 5,
          "rank ids");
    check(v->nranks == 3 && v->ranks[0] == 6 && v->ranks[1] == 4 && v->ranks[2] == 100,
          "per rank %g %g %g", v->ranks[0], v->ranks[1], v->ranks[2]);
}

static void test_repetitions(void)
{
    agg_row rows[32];
    size_t n = repetition_rows(rows);
    agg_result r;
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 1, "aggregate");
    if (r.nvalues == 1)
        check_repetitions(&r.values[0]);
    agg_result_free(&r);
}

/* Ids of any int range: negative ones (still a packed sort key) and ones
 * spanning more than 64 bits together (the qsort fallback) give the same. */
static void test_wide_ids(void)
{
    agg_row rows[34];
    agg_result r;
    size_t n = repetition_rows(rows);
    for (size_t i = 0; i < n; i++) {
        rows[i].callpath = -3;
        rows[i].rank -= 1000;
        rows[i].repetition = -rows[i].repetition;
    }
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 1 && r.values[0].callpath == -3,
          "negative ids");
    if (r.nvalues == 1) {
        const agg_value *v = &r.values[0];
        /* repetitions now descending in number: -3, -2, -1 */
        check(v->value == 3.5 && v->nreps == 3 && v->reps[0] == 3.5 && v->reps[1] == 10 &&
                  v->reps[2] == 3,
              "negative ids: value %g", v->value);
        check(v->rank_ids[0] == -1000 && v->rank_ids[2] == -995 && v->ranks[2] == 100,
              "negative rank ids");
    }
    agg_result_free(&r);

    n = repetition_rows(rows);
    rows[n++] = (agg_row){.repetition = INT_MAX, .rank = INT_MIN, .phase = 2, .step = INT_MAX,
                          .callpath = INT_MAX, .metric = INT_MIN, .value = 7};
    rows[n++] = (agg_row){.repetition = INT_MIN, .rank = INT_MAX, .phase = 2, .step = INT_MIN,
                          .callpath = INT_MAX, .metric = INT_MIN, .value = 9};
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 2, "extreme ids");
    if (r.nvalues == 2) {
        check_repetitions(&r.values[0]);
        const agg_value *v = &r.values[1];
        check(v->callpath == INT_MAX && v->metric == INT_MIN && v->phase == 2 && v->value == 8 &&
                  v->nreps == 2 && v->reps[0] == 9 && v->reps[1] == 7 && v->nranks == 2 &&
                  v->rank_ids[0] == INT_MIN && v->ranks[0] == 7 && v->rank_ids[1] == INT_MAX,
              "extreme ids: value %g", v->value);
    }
    agg_result_free(&r);
}

/* 8 ranks, 5 steps, 3 repetitions; rank 3 takes twice as long. The median
 * over ranks hides it, the per-rank values show it: LIF = 2 / (9/8). */
static void test_straggler(void)
{
    agg_row rows[8 * 5 * 3];
    size_t n = 0;
    for (int rep = 1; rep <= 3; rep++)
        for (int k = 0; k < 8; k++)
            for (int s = 0; s < 5; s++) {
                double base = k == 3 ? 2.0 : 1.0;
                double jitter = (s == 2) ? 0 : (s % 2 ? 0.01 : -0.01) * rep; /* median = base */
                rows[n++] = (agg_row){.repetition = rep, .rank = k, .phase = 0, .step = s,
                                      .callpath = 7, .metric = 0, .value = base + jitter};
            }
    shuffle(rows, n);
    agg_result r;
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 1, "aggregate");
    if (r.nvalues != 1)
        return;
    const agg_value *v = &r.values[0];
    check(v->value == 1.0, "median over ranks hides the straggler: %g", v->value);
    double max = 0, sum = 0;
    int argmax = -1;
    for (int k = 0; k < v->nranks; k++) {
        sum += v->ranks[k];
        if (v->ranks[k] > max) {
            max = v->ranks[k];
            argmax = v->rank_ids[k];
        }
    }
    check(v->nranks == 8 && argmax == 3 && max == 2.0, "straggler rank %d at %g", argmax, max);
    check(check_close(max / (sum / v->nranks), 16.0 / 9.0, 1e-12, 0), "LIF %g, want 16/9",
          max / (sum / v->nranks));
    agg_result_free(&r);
}

/* Values come out sorted by (callpath, metric, phase) with the caller's ids. */
static void test_order(void)
{
    agg_row rows[] = {
        {1, 0, 1, 0, 9, 0, 1}, {1, 0, 0, 0, 9, 2, 2}, {1, 0, 0, 0, 2, 1, 3},
        {1, 0, 0, 0, 9, 0, 4}, {1, 0, 0, 0, 2, 0, 5},
    };
    agg_result r;
    check(agg_coordinate(rows, 5, 0, &r) == 0 && r.nvalues == 5, "five series");
    static const int want[5][4] = {{2, 0, 0, 5}, {2, 1, 0, 3}, {9, 0, 0, 4}, {9, 0, 1, 1},
                                   {9, 2, 0, 2}};
    for (size_t i = 0; i < r.nvalues && i < 5; i++)
        check(r.values[i].callpath == want[i][0] && r.values[i].metric == want[i][1] &&
                  r.values[i].phase == want[i][2] && r.values[i].value == want[i][3],
              "value %zu: %d %d %d %g", i, r.values[i].callpath, r.values[i].metric,
              r.values[i].phase, r.values[i].value);
    agg_result_free(&r);
    check(agg_coordinate(rows, 0, 0, &r) == 0 && r.nvalues == 0 && r.values == NULL, "no rows");
}

/* 8 ranks x 200 callpaths x 2 metrics x 5 steps x 5 repetitions = 80000 rows.
 * Step s of (callpath c, metric m) is c + 1000 m + s (+ 1000 in step 0):
 * warm-up 1 leaves {1,2,3,4} + base, median base + 2.5 at every rank. */
static void test_large(void)
{
    enum { R = 8, C = 200, M = 2, S = 5, P = 5 };
    size_t n = 0, nrows = (size_t)R * C * M * S * P;
    agg_row *rows = malloc(nrows * sizeof(*rows));
    for (int p = 1; p <= P; p++)
        for (int k = 0; k < R; k++)
            for (int s = 0; s < S; s++)
                for (int c = 0; c < C; c++)
                    for (int m = 0; m < M; m++)
                        rows[n++] = (agg_row){p, k, 0, s, c, m, c + 1000.0 * m + s + (s ? 0 : 1000)};
    shuffle(rows, n);
    agg_result r;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = agg_coordinate(rows, n, 1, &r);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    fprintf(stderr, "test_aggregate: %zu rows aggregated in %.1f ms\n", n, ms);
    check(rc == 0 && r.nvalues == (size_t)C * M, "%zu values", r.nvalues);
    int ok = 1;
    for (size_t i = 0; i < r.nvalues; i++) {
        const agg_value *v = &r.values[i];
        double want = v->callpath + 1000.0 * v->metric + 2.5;
        ok &= v->callpath == (int)(i / M) && v->metric == (int)(i % M) && v->value == want &&
              v->nreps == P && v->nranks == R;
        for (int k = 0; k < v->nranks; k++)
            ok &= v->ranks[k] == want && v->rank_ids[k] == k;
        for (int p = 0; p < v->nreps; p++)
            ok &= v->reps[p] == want;
    }
    check(ok, "every value base + 2.5");
    agg_result_free(&r);
    free(rows);
}

/* Eq. 1: a callpath absent from a step or a rank counts 0 there. Two ranks,
 * four train steps; "gemm" (callpath 0) = 1 in every step of both ranks,
 * "ckpt" (callpath 1) = 0.4 in step 2 of rank 0 only, "sync" (callpath 2) =
 * 2 in steps 0, 2, 3 of both ranks.
 *   median: ckpt rank 0 {0,0,0.4,0} -> 0, rank 1 {0,0,0,0} -> 0: V = 0
 *           (skipping absences would give 0.4, as if it ran in every step);
 *           sync {2,0,2,2} -> 2 per rank: V = 2
 *   mean:   ckpt rank 0 0.4/4 = 0.1, rank 1 0: V = 0.05 = 0.4 / (4·2);
 *           sync 6/4 = 1.5 per rank: V = 1.5 */
static size_t sparse_rows(agg_row *rows)
{
    size_t n = 0;
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 4; s++) {
            rows[n++] = (agg_row){1, k, 0, s, 0, 0, 1.0};
            if (s != 1)
                rows[n++] = (agg_row){1, k, 0, s, 2, 0, 2.0};
        }
    rows[n++] = (agg_row){1, 0, 0, 2, 1, 0, 0.4};
    shuffle(rows, n);
    return n;
}

static void test_absent_is_zero(void)
{
    agg_row rows[32];
    size_t n = sparse_rows(rows);
    agg_result r;
    check(agg_coordinate(rows, n, 0, &r) == 0 && r.nvalues == 3, "three series");
    const agg_value *gemm = find(&r, 0, 0, 0), *ckpt = find(&r, 1, 0, 0), *sync = find(&r, 2, 0, 0);
    check(gemm && gemm->value == 1, "gemm %g", gemm ? gemm->value : -1);
    check(ckpt && ckpt->value == 0 && ckpt->nranks == 2 && ckpt->ranks[0] == 0 &&
              ckpt->ranks[1] == 0,
          "ckpt in 1 of 4 steps on 1 of 2 ranks: median %g, want 0", ckpt ? ckpt->value : -1);
    check(sync && sync->value == 2, "sync in 3 of 4 steps: median %g, want 2",
          sync ? sync->value : -1);
    agg_result_free(&r);

    agg_options mean = {0, AGG_MEAN};
    check(agg_coordinate_with(rows, n, &mean, &r) == 0 && r.nvalues == 3, "mean: three series");
    gemm = find(&r, 0, 0, 0), ckpt = find(&r, 1, 0, 0), sync = find(&r, 2, 0, 0);
    check(gemm && gemm->value == 1, "mean gemm %g", gemm ? gemm->value : -1);
    check(ckpt && check_close(ckpt->value, 0.05, 1e-15, 0) && ckpt->nranks == 2 &&
              check_close(ckpt->ranks[0], 0.1, 1e-15, 0) && ckpt->ranks[1] == 0,
          "mean ckpt %g, want 0.4/8 = 0.05", ckpt ? ckpt->value : -1);
    check(sync && sync->value == 1.5, "mean sync %g, want 6/4", sync ? sync->value : -1);
    agg_result_free(&r);

    /* warm-up 1: a callpath that ran only in the warm-up step of a rank whose
     * other steps exist counts 0 there (its warm-up run is not kept in place
     * of the steps it missed). gemm in steps 0..3, "init" in step 0 only. */
    n = 0;
    for (int s = 0; s < 4; s++)
        rows[n++] = (agg_row){1, 0, 0, s, 0, 0, 1.0};
    rows[n++] = (agg_row){1, 0, 0, 0, 1, 0, 9.0};
    check(agg_coordinate(rows, n, 1, &r) == 0 && r.nvalues == 2, "warm-up: two series");
    const agg_value *init = find(&r, 1, 0, 0);
    check(init && init->value == 0, "init only in warm-up: %g, want 0", init ? init->value : -1);
    agg_result_free(&r);

    /* a repetition without the callpath: rep 1 {4, 4}, rep 2 {0, 0} (gemm ran):
     * V(1) = 4, V(2) = 0, V = 2; per rank median{4, 0} = 2 */
    n = 0;
    for (int rep = 1; rep <= 2; rep++)
        for (int k = 0; k < 2; k++) {
            rows[n++] = (agg_row){rep, k, 0, 0, 0, 0, 1.0};
            if (rep == 1)
                rows[n++] = (agg_row){rep, k, 0, 0, 1, 0, 4.0};
        }
    check(agg_coordinate(rows, n, 0, &r) == 0, "repetitions");
    const agg_value *v = find(&r, 1, 0, 0);
    check(v && v->value == 2 && v->nreps == 2 && v->reps[0] == 4 && v->reps[1] == 0 &&
              v->nranks == 2 && v->ranks[0] == 2,
          "absent from repetition 2: %g", v ? v->value : -1);
    agg_result_free(&r);
}

static void test_steps_per_epoch(void)
{
    agg_training t = {.train_samples = 50000, .validation_samples = 10000, .batch_size = 256};
    double nt = -1, nv = -1;
    /* 50000 / 8 / 256 = 24.4, 10000 / 8 / 256 = 4.9 */
    check(agg_steps_per_epoch(&t, 8, 1, &nt, &nv) == 0 && nt == 24 && nv == 4, "n_t %g n_v %g",
          nt, nv);

    /* G = ranks/4, M = 4 at ranks = 32: G/M = 2, 25000/256 = 97.7, 5000/256 = 19.5 */
    const char *names[] = {"ranks"};
    double ranks = 32, g = 0, m = 0;
    expr eg, em;
    char err[128];
    check(expr_compile("ranks/4", names, 1, &eg, err, sizeof(err)) == 0, "G: %s", err);
    check(expr_compile("4", names, 1, &em, err, sizeof(err)) == 0, "M: %s", err);
    check(expr_eval(&eg, &ranks, &g) == 0 && g == 8 && expr_eval(&em, &ranks, &m) == 0 && m == 4,
          "G %g M %g", g, m);
    check(agg_steps_per_epoch(&t, g, m, &nt, &nv) == 0 && nt == 97 && nv == 19,
          "G=ranks/4, M=4: n_t %g n_v %g", nt, nv);

    /* (35 / (7/3)) / 1 is 15 exactly; the two-division form rounds to 14.99... */
    agg_training u = {.train_samples = 35, .validation_samples = 0, .batch_size = 1};
    check(agg_steps_per_epoch(&u, 7, 3, &nt, &nv) == 0 && nt == 15 && nv == 0,
          "integral ratio not floored below: n_t %g", nt);

    check(agg_steps_per_epoch(&t, 0, 1, &nt, &nv) == -1, "G = 0 refused");
    check(agg_steps_per_epoch(&t, 8, -1, &nt, &nv) == -1, "M < 0 refused");
    check(agg_steps_per_epoch(&t, NAN, 1, &nt, &nv) == -1, "G NaN refused");
    check(agg_steps_per_epoch(&t, INFINITY, 1, &nt, &nv) == -1, "G inf refused");
    agg_training nob = t;
    nob.batch_size = 0;
    check(agg_steps_per_epoch(&nob, 8, 1, &nt, &nv) == -1, "B = 0 refused");
}

int main(void)
{
    test_median();
    test_warmup();
    test_phases();
    test_repetitions();
    test_wide_ids();
    test_straggler();
    test_order();
    test_large();
    test_absent_is_zero();
    test_steps_per_epoch();
    return check_summary();
}
