/*
 * sweep_efficiency.c — SE_N = t_baseline / t_N with a Bonferroni interval
 * (sweep_efficiency.h).
 */
#include "sweep/sweep_efficiency.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

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
