/*
 * imbalance.h — load imbalance (paper 004, §IV): the load-imbalance factor of
 * per-rank values, its summary over repetitions, and the least-squares
 * regression of the epoch time on the parameters and the LIF
 * (T = b0 + b1·x1 + ... + b_LIF·LIF) with its coefficient of determination.
 *
 *   LIF = max_i t_i / ((1/N) Σ t_i)      (Eq. 8; 1 = perfectly balanced)
 *
 * Pure computation over plain arrays (GSL for the least squares): no I/O,
 * no globals.
 */
#ifndef PERFCAST_IMBALANCE_H
#define PERFCAST_IMBALANCE_H

#include <stddef.h>

/* LIF of v[0], v[stride], ... (n values). NaN entries (a rank absent from a
 * repetition) are skipped. Returns NaN when no value is left or the mean is
 * not positive (nothing to balance). */
double imb_lif(const double *v, int n, int stride);

/* A LIF predicted by a model (of the LIF over the parameters): value and
 * its 95% interval [*lo, *hi]. A LIF is never below 1: the largest of N
 * values is at least their mean. So where the value is at least 1, the
 * interval's lower end is raised to 1 when it fell below (an interval
 * [0.9990, 1.0059] around 1.0025 becomes [1, 1.0059]); where the value
 * itself is below 1 the model's trend does not hold at that point, and the
 * value and interval are kept as they are for the caller to answer with a
 * warning (as a negative time is). Returns 1 when the value is below 1 (or
 * not a number), else 0. */
int imb_lif_bound(double value, double *lo, double *hi);

/* One LIF per repetition from a rank-major matrix m[k*nreps + r] (nranks x
 * nreps, NaN where rank k has no value in repetition r) into out[nreps]. */
void imb_lif_reps(const double *m, int nranks, int nreps, double *out);

/* Median, smallest and largest of the finite values among v[0..n). */
typedef struct imb_summary {
    int n;         /* finite values counted; 0 -> the rest is NaN */
    double median, min, max;
} imb_summary;

/* scratch: n doubles. */
void imb_summarize(const double *v, int n, double *scratch, imb_summary *out);

#define IMB_MAX_REGRESSORS 9 /* parameters (up to 8) + the LIF */

typedef struct imb_regression {
    int nobs;                            /* observations used */
    int ncoef;                           /* 1 + regressors: intercept first */
    double coef[IMB_MAX_REGRESSORS + 1];
    double se[IMB_MAX_REGRESSORS + 1];   /* standard errors (0 when dof = 0) */
    double r2, adjusted_r2;              /* 1 - RSS/TSS, and corrected for dof */
    double rss;
    int dof;
} imb_regression;

/* Ordinary least squares y = b0 + Σ_j b_j·x[i*nreg + j] over nobs
 * observations. Returns 0, or -1 with a message in err: fewer observations
 * than coefficients, non-finite input, or regressors that are collinear
 * (e.g. a LIF that is the same everywhere). */
int imb_regress(const double *x, int nreg, const double *y, int nobs, imb_regression *out,
                char *err, size_t errcap);

#endif
