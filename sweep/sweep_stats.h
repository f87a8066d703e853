/*
 * sweep_stats.h — how trustworthy the repetitions of one measurement are
 * (paper 003 §2.1: every point of a sweep repeated, reported as a median
 * with its 95% confidence interval).
 *
 * For the values of one coordinate × callpath × metric (one per
 * repetition): n, mean, median, sample standard deviation, coefficient of
 * variation (run-to-run variation, SD/|mean|), the 95% interval of the mean
 * (Student t with n-1 degrees of freedom, GSL's quantile), the 95%
 * distribution-free interval of the median (order statistics x_(k) and
 * x_(n-k+1), k the largest with 2·P(Binom(n, 1/2) <= k-1) <= 0.05; its
 * exact coverage reported; none for n < 6), the quartiles (linear
 * interpolation between order statistics, as numpy's default) and the
 * values outside [Q1 - 1.5·IQR, Q3 + 1.5·IQR], and the repetitions needed
 * for the mean's 95% half-width to be at most a requested fraction of the
 * mean (smallest m with t(0.975, m-1)·SD/sqrt(m) <= r·|mean|, SD taken as
 * measured).
 *
 * Pure: no I/O, no globals. Quantiles are kept in a caller-owned table
 * (sweep_quantiles), since thousands of points share a few values of n.
 */
#ifndef PERFCAST_SWEEP_STATS_H
#define PERFCAST_SWEEP_STATS_H

#include <stddef.h>

#define SWEEP_QUANTILE_CACHE 1024 /* n below this: quantiles and median ranks cached */

typedef struct sweep_quantiles {
    double t975[SWEEP_QUANTILE_CACHE]; /* by degrees of freedom; 0: not computed yet */
    int median_k[SWEEP_QUANTILE_CACHE]; /* by n; -1: not computed yet */
    double median_coverage[SWEEP_QUANTILE_CACHE];
} sweep_quantiles;

void sweep_quantiles_init(sweep_quantiles *q);
/* t quantile 0.975 with dof degrees of freedom (dof >= 1). */
double sweep_t975(sweep_quantiles *q, int dof);
/* The median interval's order-statistic rank k (1-based) for n values and
 * its coverage; 0 when no interval reaches 95% (n < 6). */
int sweep_median_rank(sweep_quantiles *q, int n, double *coverage);

typedef struct sweep_stats {
    int n;
    double mean, median, sd, cv;      /* sd and cv NaN for n < 2; cv NaN for mean 0 */
    int has_mean_ci;                  /* n >= 2 */
    double mean_lo, mean_hi;
    double rel_half_width;            /* (mean_hi - mean)/|mean|; NaN without an interval */
    int has_median_ci;                /* n >= 6 */
    double median_lo, median_hi, median_coverage;
    double q1, q3;
    int noutliers;                    /* indices into the input in outliers[] */
    long reps_needed;                 /* -1: unknown (n < 2, mean 0) */
} sweep_stats;

/* Statistics of v[0..n) (n >= 1, finite values). scratch: n doubles;
 * outliers: n ints (the indices of the outlying values, ascending), may be
 * NULL. target: the relative half-width for reps_needed (> 0). */
void sweep_stats_compute(const double *v, int n, double target, sweep_quantiles *q,
                         double *scratch, int *outliers, sweep_stats *out);

#endif
