/*
 * sweep_efficiency.h — SURFBoard's scaling efficiency (paper 003 §3.2):
 * SE_N = t_baseline / t_N, the experiment's duration at the baseline scale
 * over its duration at N, from the repetitions at both scales.
 *
 * The value is the ratio of the means. Its interval: each mean's 97.5%
 * Student t interval, the ratio's bounds taken from their ends
 * ([lo_b/hi_N, hi_b/lo_N]); by Bonferroni both hold at once with at least
 * 95% probability, so the ratio's interval covers at least 95%. None when a
 * side has fewer than 2 repetitions or the denominator's interval reaches 0.
 * Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SWEEP_EFFICIENCY_H
#define PERFCAST_SWEEP_EFFICIENCY_H

typedef struct sweep_ratio {
    double value, lo, hi;
    int has_interval;
} sweep_ratio;

/* t_baseline from base[0..nb), t_N from y[0..ny) (nb, ny >= 1). */
sweep_ratio sweep_efficiency(const double *base, int nb, const double *y, int ny);

#endif
