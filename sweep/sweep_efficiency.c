/*
 * sweep_efficiency.c — SE_N = t_baseline / t_N with a Bonferroni interval
 * (sweep_efficiency.h).
 */
#include "sweep/sweep_efficiency.h"

#include <gsl/gsl_cdf.h>
#include <math.h>

static void mean_interval(const double *v, int n, double *mean, double *half)
{
    double s = 0, ss = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = s / n;
    for (int i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *half = n >= 2 ? gsl_cdf_tdist_Pinv(0.9875, n - 1) * sqrt(ss / (n - 1)) / sqrt((double)n)
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
