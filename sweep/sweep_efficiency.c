/*
 * sweep_efficiency.c — SE_N = t_baseline / t_N with a Bonferroni interval
 * (sweep_efficiency.h).
 */
#include "sweep/sweep_efficiency.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

/* The deviations' squares are scaled by the largest one, so that finite
 * durations of any size give a finite interval. */
static void mean_interval(const double *v, int n, double *mean, double *half)
{
    double s = 0, ss = 0, dmax = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    if (!isfinite(*mean))
        for (int i = (*mean = 0, 0); i < n; i++)
            *mean += v[i] / n;
    for (int i = 0; i < n; i++)
        if (fabs(v[i] - *mean) > dmax)
            dmax = fabs(v[i] - *mean);
    for (int i = 0; dmax > 0 && i < n; i++)
        ss += ((v[i] - *mean) / dmax) * ((v[i] - *mean) / dmax);
    *half = n >= 2 ? gsl_cdf_tdist_Pinv(0.9875, n - 1) * dmax * sqrt(ss / (n - 1)) /
                         sqrt((double)n)
                   : NAN;
}

sweep_ratio sweep_efficiency(const double *base, int nb, const double *y, int ny)
{
    double mb, hb, my, hy;
    mean_interval(base, nb, &mb, &hb);
    mean_interval(y, ny, &my, &hy);
    sweep_ratio r = {mb / my, NAN, NAN, 0};
    if (isfinite(hb) && isfinite(hy) && my - hy > 0 && mb - hb >= 0) {
        r.lo = (mb - hb) / (my + hy);
        r.hi = (mb + hb) / (my - hy);
        r.has_interval = 1;
    }
    return r;
}

typedef struct se_order {
    const double *point;
    const int *group;
    int np, q;
} se_order;

/* runs by group key, the other parameters' values, then q */
static int se_cmp(const void *x, const void *y, void *arg)
{
    const se_order *o = arg;
    int a = *(const int *)x, b = *(const int *)y;
    if (o->group && o->group[a] != o->group[b])
        return o->group[a] < o->group[b] ? -1 : 1;
    const double *pa = o->point + (size_t)a * o->np, *pb = o->point + (size_t)b * o->np;
    for (int i = 0; i < o->np; i++)
        if (i != o->q && pa[i] != pb[i])
            return pa[i] < pb[i] ? -1 : 1;
    if (pa[o->q] != pb[o->q])
        return pa[o->q] < pb[o->q] ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int same_group(const se_order *o, int a, int b)
{
    if (o->group && o->group[a] != o->group[b])
        return 0;
    for (int i = 0; i < o->np; i++)
        if (i != o->q && o->point[(size_t)a * o->np + i] != o->point[(size_t)b * o->np + i])
            return 0;
    return 1;
}

int sweep_se_baselines(const double *point, int np, int n, const int *group, int q,
                       const double *baseline, const double *y, const int *offset, double *base)
{
    int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!idx)
        return -1;
    for (int i = 0; i < n; i++)
        idx[i] = i;
    se_order o = {point, group, np, q};
    qsort_r(idx, (size_t)n, sizeof *idx, se_cmp, &o);
    int kept = 0;
    for (int a = 0, b; a < n; a = b) {
        double t0 = NAN;
        for (b = a; b < n && same_group(&o, idx[a], idx[b]); b++) {
            int r = idx[b];
            if (isnan(t0) && (baseline ? point[(size_t)r * np + q] == *baseline : b == a)) {
                int nr = offset[r + 1] - offset[r];
                t0 = 0;
                for (int k = offset[r]; k < offset[r + 1]; k++)
                    t0 += y[k] / nr; /* no sum to overflow */
            }
        }
        if (!(t0 > 0) || !isfinite(t0))
            t0 = NAN;
        for (int k = a; k < b; k++)
            base[idx[k]] = t0;
        kept += isnan(t0) ? 0 : b - a;
    }
    free(idx);
    return kept;
}
