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
 * Per repetition (sweep_se_baselines): the observations of Taguchi's S/N
 * over scaling efficiency (paper 003 §3.2, Fig. 12) are SE = t_baseline / t
 * of each repetition of a run, t_baseline the mean duration of the run at
 * the baseline value of the scaling parameter with every other parameter
 * (and level combination) alike; the service's sensitivity and perfcast
 * sensitivity --over efficiency share it.
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

/* The baseline of every run: runs i in [0, n) at point[i*np .. i*np+np),
 * group[i] a further key that must match too (a level combination; NULL:
 * none), repetitions y[offset[i] .. offset[i+1]). A run's group is the runs
 * with the same group key and the same values of every parameter but q; its
 * baseline run the one at q == *baseline (NULL: the group's smallest value
 * of q). base[i] = the mean of the baseline run's repetitions, NaN where the
 * group has no baseline run or its mean is not finite and > 0. Returns how
 * many runs have a baseline, -1 when out of memory. */
int sweep_se_baselines(const double *point, int np, int n, const int *group, int q,
                       const double *baseline, const double *y, const int *offset, double *base);

#endif
