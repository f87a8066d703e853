/*
 * scaling.c — Extra-Deep's speedup and efficiency and the conventional
 * ratios (see scaling.h).
 */
#include "modeling/scaling.h"

#include <math.h>
#include <stddef.h>

double scl_speedup_pct(double t1, double tk)
{
    return (t1 - tk) / (t1 / 100);
}

double scl_ideal_speedup_pct(double x1, double xk)
{
    /* a count of ranks <= 0 (a coordinate 0 or below as the ranks) has no
     * ideal speedup: not 0% efficiency, not a number */
    if (!(x1 > 0) || !(xk > 0))
        return NAN;
    return (xk - x1) / (x1 / 100);
}

double scl_efficiency_pct(double delta_a, double delta_t)
{
    return delta_t == 0 ? 100 : 100 * delta_a / delta_t;
}

double scl_speedup(double t1, double tk)
{
    return t1 / tk;
}

double scl_efficiency(double t1, double tk, double x1, double xk, int strong)
{
    if (strong && (!(x1 > 0) || !(xk > 0)))
        return NAN;
    return strong ? t1 * x1 / (tk * xk) : t1 / tk;
}

void scl_speedup_pct_bound(double value, double *lo, double *hi)
{
    (void)lo; /* at most the value, so at most 100 */
    if (value <= 100 && *hi > 100)
        *hi = 100;
}

int scl_apart(double lo1, double hi1, double lo2, double hi2)
{
    if (isnan(lo1) || isnan(hi1) || isnan(lo2) || isnan(hi2))
        return 0;
    return hi1 < lo2 || hi2 < lo1;
}

void scl_range(double f_lo, double f_hi, double *lo, double *hi)
{
    *lo = f_lo < f_hi ? f_lo : f_hi;
    *hi = f_lo < f_hi ? f_hi : f_lo;
}

int scl_series_baseline(const double *coords, int npoints, int nparams, const double *point,
                        const double *values)
{
    int best = -1;
    for (int i = 0; i < npoints; i++) {
        const double *c = coords + (size_t)i * nparams;
        int same = 1;
        for (int j = 1; j < nparams && same; j++)
            same = c[j] == point[j];
        if (!same || (values && !isfinite(values[i])))
            continue;
        if (best < 0 || c[0] < coords[(size_t)best * nparams])
            best = i;
    }
    return best;
}

int scl_baseline_point(const double *coords, int npoints, int nparams, const double *point,
                       const double *values, double *base)
{
    int b = scl_series_baseline(coords, npoints, nparams, point, values);
    const double *from = b >= 0 ? coords + (size_t)b * nparams : point;
    for (int j = 0; j < nparams; j++)
        base[j] = from[j];
    if (b >= 0)
        return b;
    double x1 = NAN; /* the smallest measured x_1 (the point's own without any) */
    for (int i = 0; i < npoints; i++)
        if ((!values || isfinite(values[i])) && !(coords[(size_t)i * nparams] >= x1))
            x1 = coords[(size_t)i * nparams];
    if (!isnan(x1))
        base[0] = x1;
    return -1;
}

void scl_series_derived(const double *coords, int npoints, int nparams, const double *values,
                        const double *ranks, double cores_per_rank, double *speedup_pct,
                        double *efficiency_pct, double *core_hours)
{
    for (int q = 0; q < npoints; q++) {
        speedup_pct[q] = efficiency_pct[q] = core_hours[q] = NAN;
        if (!isfinite(values[q]))
            continue;
        core_hours[q] = ranks[q] > 0 ? values[q] * ranks[q] * cores_per_rank / 3600 : NAN;
        int b = scl_series_baseline(coords, npoints, nparams, coords + (size_t)q * nparams,
                                    values);
        if (b < 0)
            continue;
        double d = scl_speedup_pct(values[b], values[q]);
        speedup_pct[q] = b == q ? 0 : d;
        efficiency_pct[q] =
            b == q ? 100 : scl_efficiency_pct(d, scl_ideal_speedup_pct(ranks[b], ranks[q]));
    }
}
