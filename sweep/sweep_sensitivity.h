/*
 * sweep_sensitivity.h — Taguchi's signal-to-noise sensitivity analysis
 * (paper 003 §3.1): which configuration option matters most.
 *
 * Per run (one measured configuration, its repetitions y_1..y_N):
 *   larger is better (throughput, efficiency):  S/N = -10·log10((1/N)·Σ 1/y_i²)
 *   smaller is better (time):                   S/N = -10·log10((1/N)·Σ y_i²)
 * Per factor (a parameter or a categorical option) and level: the mean S/N
 * over the runs at that level; the factor's range = max - min over its
 * levels; factors ranked by range, most important first, and the ranges
 * normalised to sum to 1. The best level is the one with the highest mean
 * S/N (Taguchi: higher is always better).
 *
 * Observations must be > 0 (the ratio's logarithm; a time of 0 is no
 * measurement): sweep_sensitivity refuses anything else and names the run
 * and value. Pure: no I/O, no globals; results are allocated and freed by
 * sweep_sensitivity_free.
 */
#ifndef PERFCAST_SWEEP_SENSITIVITY_H
#define PERFCAST_SWEEP_SENSITIVITY_H

#include <stddef.h>

typedef struct sweep_sn_problem {
    int nfactors;
    int nruns;
    const int *nlevels;     /* per factor */
    const int *level;       /* nruns x nfactors: the run's level index of each factor */
    const double *y;        /* every run's observations, run after run */
    const int *offset;      /* nruns + 1: run i's observations are y[offset[i]..offset[i+1]) */
    int larger_is_better;
} sweep_sn_problem;

typedef struct sweep_sn_factor {
    int nlevels;
    double *mean_sn;        /* per level; NaN where no run has the level */
    int *runs;              /* per level: how many runs */
    double range;           /* max - min of mean_sn over levels with runs */
    double normalized;      /* range / Σ ranges (0 when every range is 0) */
    int rank;               /* 1 = most important */
    int best_level;         /* highest mean S/N */
} sweep_sn_factor;

typedef struct sweep_sn_result {
    double *sn;             /* per run */
    sweep_sn_factor *factors;
    int nfactors;
    int *order;             /* factor indices, most important first */
} sweep_sn_result;

/* The S/N ratio of y[0..n) (n >= 1, every y > 0). */
double sweep_sn_ratio(const double *y, int n, int larger_is_better);

/* Solves p into *out. Returns 0, or -1 with a message in err (a run without
 * observations, an observation <= 0 or not finite, a level index out of
 * range, out of memory); *bad_run is the run at fault (-1 when none). */
int sweep_sensitivity(const sweep_sn_problem *p, sweep_sn_result *out, int *bad_run, char *err,
                      size_t errcap);
void sweep_sensitivity_free(sweep_sn_result *r);

/* Levels of numeric values: the distinct values of v[0..n) (stride apart)
 * ascending into distinct (n capacity, count returned), each value's level
 * index into level_out[i*level_stride]. */
int sweep_levels_of(const double *v, int n, int stride, double *distinct, int *level_out,
                    int level_stride);

#endif
