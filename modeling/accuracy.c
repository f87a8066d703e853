/*
 * accuracy.c — percentage errors and their median (accuracy.h).
 */
#include "modeling/accuracy.h"

#include <math.h>

#include "modeling/aggregate.h"

double acc_error_pct(double predicted, double measured)
{
    if (!isfinite(predicted) || !isfinite(measured) || measured == 0)
        return NAN;
    return fabs(predicted - measured) / fabs(measured) * 100;
}

double acc_median(const double *v, size_t n, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]))
            scratch[k++] = v[i];
    if (k == 0)
        return NAN;
    /* agg_median sorts a copy: in the upper half */
    return agg_median(scratch, k, scratch + k);
}
