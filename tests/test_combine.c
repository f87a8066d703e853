/*
 * test_combine.c — the sum of independently modelled parts and its
 * interval (modeling/combine.h), by hand:
 *   - symmetric parts (10 +- 3, 5 +- 4): 15 +- 5, as plain quadrature;
 *   - a part floored at 0 (10 in [0, 30]) with 5 in [4, 6] and 1 in
 *     [0.5, 1.5]: 16 in [16 - sqrt(101.25), 16 + sqrt(401.25)] =
 *     [5.937742, 36.031189]; a symmetric half-width (15, 1, 0.5) gave
 *     [0.958, 31.042], a lower end that ignores the floor;
 *   - a small part with a wide floored interval (1 in [0, 40]) and 1 in
 *     [0.9, 1.1]: [2 - sqrt(1.01), 2 + sqrt(1521.01)] = [0.995012, 41.000128],
 *     where the symmetric half-width gave -18.0 s for the lower end of a time;
 *   - parts without an interval (lo = hi = value) add nothing to it.
 */
#include <math.h>

#include "modeling/combine.h"
#include "tests/check.h"

static void sum3(const double *v, const double *lo, const double *hi, int n, double want_v,
                 double want_lo, double want_hi, const char *what)
{
    double s, l, h;
    pmnf_combine_sum(v, lo, hi, n, &s, &l, &h);
    check(check_close(s, want_v, 1e-12, 0) && check_close(l, want_lo, 1e-9, 1e-12) &&
              check_close(h, want_hi, 1e-9, 0),
          "%s: %g in [%.9g, %.9g] (want %g in [%.9g, %.9g])", what, s, l, h, want_v, want_lo,
          want_hi);
}

int main(void)
{
    sum3((double[]){10, 5}, (double[]){7, 1}, (double[]){13, 9}, 2, 15, 10, 20, "symmetric");
    sum3((double[]){10, 5, 1}, (double[]){0, 4, 0.5}, (double[]){30, 6, 1.5}, 3, 16,
         16 - sqrt(101.25), 16 + sqrt(401.25), "one part floored at 0");
    sum3((double[]){1, 1}, (double[]){0, 0.9}, (double[]){40, 1.1}, 2, 2, 2 - sqrt(1.01),
         2 + sqrt(1521.01), "a small part with a wide interval");
    double s, l, h;
    pmnf_combine_sum((double[]){1, 1}, (double[]){0, 0.9}, (double[]){40, 1.1}, 2, &s, &l, &h);
    check(l >= 0 + 0.9, "the lower end at least the parts' lower ends summed: %g", l);
    sum3((double[]){3, 4}, (double[]){3, 4}, (double[]){3, 4}, 2, 7, 7, 7, "no intervals");
    return check_summary();
}
