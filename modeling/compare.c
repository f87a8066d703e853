/*
 * compare.c — significance of a change between two predictions and order
 * of growth (see compare.h).
 */
#include "modeling/compare.h"

#include <math.h>

compare_result compare_values(compare_value b, compare_value h, double threshold_pct)
{
    compare_result r = {0, 0, 0, 0};
    if (b.value != 0)
        r.change_pct = (h.value - b.value) / fabs(b.value) * 100.0;
    else
        r.change_pct = h.value == 0 ? 0 : NAN;
    r.separated = h.lo > b.hi || h.hi < b.lo;
    int large = isnan(r.change_pct) ? 1 : fabs(r.change_pct) > threshold_pct;
    r.significant = r.separated && large;
    if (r.significant)
        r.direction = h.value > b.value ? 1 : -1;
    return r;
}

int compare_growth(double bp, double bl, double hp, double hl)
{
    const double eps = 1e-9;
    if (hp > bp + eps)
        return 1;
    if (hp < bp - eps)
        return -1;
    if (hl > bl + eps)
        return 1;
    if (hl < bl - eps)
        return -1;
    return 0;
}
