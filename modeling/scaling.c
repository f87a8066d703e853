/*
 * scaling.c — Extra-Deep's speedup and efficiency and the conventional
 * ratios (see scaling.h).
 */
#include "modeling/scaling.h"

double scl_speedup_pct(double t1, double tk)
{
    return (t1 - tk) / (t1 / 100);
}

double scl_ideal_speedup_pct(double x1, double xk)
{
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
    return strong ? t1 * x1 / (tk * xk) : t1 / tk;
}

void scl_range(double f_lo, double f_hi, double *lo, double *hi)
{
    *lo = f_lo < f_hi ? f_lo : f_hi;
    *hi = f_lo < f_hi ? f_hi : f_lo;
}
