/*
 * combine.c — a sum of independently modelled parts and its interval
 * (combine.h).
 */
#include "modeling/combine.h"

#include <math.h>

void pmnf_combine_sum(const double *value, const double *lo, const double *hi, int n, double *v,
                      double *lo_out, double *hi_out)
{
    double s = 0, down2 = 0, up2 = 0;
    for (int i = 0; i < n; i++) {
        double d = value[i] - lo[i], u = hi[i] - value[i];
        s += value[i];
        down2 += d * d;
        up2 += u * u;
    }
    *v = s;
    *lo_out = s - sqrt(down2);
    *hi_out = s + sqrt(up2);
}
