/*
 * bench_aggregate.c — speed of one coordinate's aggregation
 * (modeling/aggregate.c) with Eq. 1's absent = 0: 8 ranks x 200 callpaths x
 * 2 metrics x 5 steps x 5 repetitions (80,000 rows), every callpath in
 * every step (dense), and the same with each callpath in 1 of the 5 steps
 * (sparse: 16,000 rows, every absence counted as 0), by median and by mean.
 * The baseline in the same process is the dense median; the figures are
 * rows per second and each case's time relative to it.
 *
 *   bench_aggregate [--min-time S]     prints one JSON line
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modeling/aggregate.h"

enum { R = 8, C = 200, M = 2, S = 5, P = 5 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t rows_of(agg_row *rows, int sparse)
{
    size_t n = 0;
    unsigned seed = 12345;
    for (int p = 1; p <= P; p++)
        for (int k = 0; k < R; k++)
            for (int s = 0; s < S; s++)
                for (int c = 0; c < C; c++)
                    for (int m = 0; m < M; m++) {
                        if (sparse && c % S != s)
                            continue;
                        seed = seed * 1103515245u + 12345u;
                        rows[n++] = (agg_row){p, k, 0, s, c, m, 1 + (seed >> 16) % 1000 / 1e3};
                    }
    return n;
}

/* Seconds per aggregation, repeated for at least min_time. */
static double time_it(const agg_row *rows, size_t n, agg_measure measure, double min_time)
{
    agg_options o = {1, measure};
    int runs = 0;
    double t0 = now(), t;
    do {
        agg_result r;
        if (agg_coordinate_with(rows, n, &o, &r) < 0) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        agg_result_free(&r);
        runs++;
        t = now() - t0;
    } while (t < min_time);
    return t / runs;
}

int main(int argc, char **argv)
{
    double min_time = 1;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--min-time"))
            min_time = atof(argv[++i]);
    agg_row *dense = malloc(sizeof(agg_row) * R * C * M * S * P);
    agg_row *sparse = malloc(sizeof(agg_row) * R * C * M * S * P);
    if (!dense || !sparse)
        return 1;
    size_t nd = rows_of(dense, 0), ns = rows_of(sparse, 1);
    double td = time_it(dense, nd, AGG_MEDIAN, min_time);
    double ts = time_it(sparse, ns, AGG_MEDIAN, min_time);
    double tm = time_it(dense, nd, AGG_MEAN, min_time);
    printf("{\"figure\": \"aggregate\", \"dense_rows\": %zu, \"dense_ms\": %.3f, "
           "\"dense_rows_per_s\": %.0f, \"sparse_rows\": %zu, \"sparse_ms\": %.3f, "
           "\"sparse_vs_dense\": %.3f, \"mean_ms\": %.3f, \"mean_vs_median\": %.3f}\n",
           nd, td * 1e3, nd / td, ns, ts * 1e3, ts / td, tm * 1e3, tm / td);
    free(dense);
    free(sparse);
    return 0;
}
