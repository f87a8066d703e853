/*
 * sweep_stats.c — repetition statistics of one measurement (sweep_stats.h).
 */
#include "sweep/sweep_stats.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define REPS_NEEDED_MAX 100000000L

void sweep_quantiles_init(sweep_quantiles *q)
{
    for (int i = 0; i < SWEEP_QUANTILE_CACHE; i++) {
        q->t975[i] = 0;
        q->median_k[i] = -1;
        q->median_coverage[i] = 0;
    }
}

double sweep_t975(sweep_quantiles *q, int dof)
{
    if (dof < SWEEP_QUANTILE_CACHE) {
        if (q->t975[dof] == 0)
            q->t975[dof] = gsl_cdf_tdist_Pinv(0.975, dof);
        return q->t975[dof];
    }
    return gsl_cdf_tdist_Pinv(0.975, dof);
}

static int median_rank(int n, double *coverage)
{
    /* the largest k with 2·P(B <= k-1) <= 0.05; P grows with k */
    int k = 0;
    double cov = 0;
    for (int j = 1; j <= n / 2; j++) {
        double tail = gsl_cdf_binomial_P((unsigned)(j - 1), 0.5, (unsigned)n);
        if (2 * tail > 0.05)
            break;
        k = j;
        cov = 1 - 2 * tail;
    }
    *coverage = cov;
    return k;
}

int sweep_median_rank(sweep_quantiles *q, int n, double *coverage)
{
    if (n < SWEEP_QUANTILE_CACHE) {
        if (q->median_k[n] < 0)
            q->median_k[n] = median_rank(n, &q->median_coverage[n]);
        *coverage = q->median_coverage[n];
        return q->median_k[n];
    }
    return median_rank(n, coverage);
}

static void sort_small(double *v, int n)
{
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > x) {
            v[j + 1] = v[j];
            j--;
        }
        v[j + 1] = x;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* numpy's default (linear) quantile of sorted s */
static double quantile(const double *s, int n, double p)
{
    double h = (n - 1) * p;
    int lo = (int)floor(h);
    if (lo >= n - 1)
        return s[n - 1];
    return s[lo] + (h - lo) * (s[lo + 1] - s[lo]);
}

static long reps_needed(sweep_quantiles *q, double cv, double target)
{
    if (!isfinite(cv))
        return -1;
    if (cv == 0)
        return 2;
    double z = 1.959963984540054 * cv / target;
    double m0 = ceil(z * z);
    if (m0 > REPS_NEEDED_MAX)
        return REPS_NEEDED_MAX;
    long m = m0 < 2 ? 2 : (long)m0; /* a lower bound: t > z */
    while (m < REPS_NEEDED_MAX && sweep_t975(q, (int)(m - 1)) * cv / sqrt((double)m) > target)
        m++;
    return m;
}

void sweep_stats_compute(const double *v, int n, double target, sweep_quantiles *q,
                         double *scratch, int *outliers, sweep_stats *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    memcpy(scratch, v, sizeof(double) * (size_t)n);
    if (n <= 32)
        sort_small(scratch, n);
    else
        qsort(scratch, (size_t)n, sizeof(double), cmp_double);
    /* the mean of v/n and the squares of deviations scaled by the largest
     * one: no sum or square overflows for finite values (1e300 and 3e300:
     * mean 2e300, SD 1.414e300) */
    double mean = 0, dmax = 0, ss = 0;
    for (int i = 0; i < n; i++)
        mean += v[i];
    mean /= n;
    if (!isfinite(mean)) /* the sum overflowed */
        for (int i = (mean = 0, 0); i < n; i++)
            mean += v[i] / n;
    for (int i = 0; i < n; i++)
        if (fabs(v[i] - mean) > dmax)
            dmax = fabs(v[i] - mean);
    for (int i = 0; dmax > 0 && i < n; i++)
        ss += ((v[i] - mean) / dmax) * ((v[i] - mean) / dmax);
    out->mean = mean;
    out->median = n % 2 ? scratch[n / 2] : scratch[n / 2 - 1] / 2 + scratch[n / 2] / 2;
    out->sd = n >= 2 ? dmax * sqrt(ss / (n - 1)) : NAN;
    out->cv = n >= 2 && mean != 0 ? out->sd / fabs(mean) : NAN;
    out->rel_half_width = NAN;
    out->mean_lo = out->mean_hi = out->median_lo = out->median_hi = NAN;
    if (n >= 2) {
        double h = sweep_t975(q, n - 1) * out->sd / sqrt((double)n);
        out->has_mean_ci = 1;
        out->mean_lo = mean - h;
        out->mean_hi = mean + h;
        if (mean != 0)
            out->rel_half_width = h / fabs(mean);
    }
    int k = sweep_median_rank(q, n, &out->median_coverage);
    if (k > 0) {
        out->has_median_ci = 1;
        out->median_lo = scratch[k - 1];
        out->median_hi = scratch[n - k];
    }
    out->q1 = quantile(scratch, n, 0.25);
    out->q3 = quantile(scratch, n, 0.75);
    double iqr = out->q3 - out->q1, lo = out->q1 - 1.5 * iqr, hi = out->q3 + 1.5 * iqr;
    for (int i = 0; i < n; i++)
        if (v[i] < lo || v[i] > hi) {
            if (outliers)
                outliers[out->noutliers] = i;
            out->noutliers++;
        }
    out->reps_needed = n >= 2 ? reps_needed(q, out->cv, target) : -1;
}
