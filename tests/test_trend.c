/*
 * test_trend.c — Kendall's rank test (modeling/trend.h), by hand. The
 * two-sided p-value is 2 P(inversions <= k) for the smaller count k of pairs
 * against a direction, over the n! orders of n values:
 *   - 5 values in order: 2 x 1/120;
 *   - one pair swapped (1 2 3 5 4): 2 x (1 + 4)/120 (the orders with 0 and 1
 *     inversions: 1 and n - 1 = 4 of them);
 *   - 6 values with two pairs swapped: 2 x (1 + 5 + 14)/720 (Mahonian
 *     numbers 1, 5, 14 for n = 6);
 *   - 4 values in order: 2/24, never significant at 5% (the modeler's rule
 *     needs 5 points);
 *   - a tie in y counts against both directions: 1 2 2 3 4 is as far from
 *     an order as one swapped pair;
 *   - falling values as rising ones: 6 values in reverse, 2/720;
 *   - 70 values in order (past the exact range): the normal approximation,
 *     z = (0.5 - 1207.5) / sqrt(70 x 69 x 145 / 72), p below 1e-30;
 *   - random values: on 8 independent values the exact test's level at 5%
 *     is 2 x 628/40320 = 3.115% (Mahonian numbers for n = 8: 1, 7, 27, 76,
 *     174, 343, 602 sum to 1230 orders with at most 6 inversions, 2 x 1230
 *     / 40320 = 6.1% is past 5%, and 628 with at most 5): 124.6 of 4000
 *     series expected, checked within 3.5 binomial standard deviations
 *     (11.0), 86..163;
 *   - no evidence (1) with x not distinct, a value not finite, one pair.
 */
#include <math.h>
#include <stdio.h>

#include "modeling/trend.h"
#include "tests/check.h"

static void p_is(const double *x, const double *y, int n, double want, const char *what)
{
    double p = pmnf_trend_p(x, y, n);
    check(check_close(p, want, 1e-12, 1e-15), "%s: p = %.15g (want %.15g)", what, p, want);
}

static double uniform(unsigned long long *st)
{
    *st ^= *st << 13;
    *st ^= *st >> 7;
    *st ^= *st << 17;
    return ((*st >> 11) + 0.5) * 0x1.0p-53;
}

int main(void)
{
    static const double x[8] = {0.001, 2, 4, 8, 16, 32, 64, 128};
    p_is(x, (double[]){1, 2, 3, 4, 5}, 5, 2.0 / 120, "5 in order");
    p_is(x, (double[]){1, 2, 3, 5, 4}, 5, 2.0 * 5 / 120, "5, one pair swapped");
    p_is(x, (double[]){2, 1, 3, 4, 6, 5}, 6, 2.0 * 20 / 720, "6, two pairs swapped");
    p_is(x, (double[]){1, 2, 3, 4}, 4, 2.0 / 24, "4 in order");
    p_is(x, (double[]){1, 2, 2, 3, 4}, 5, 2.0 * 5 / 120, "a tie in y");
    p_is(x, (double[]){6, 5, 4, 3, 2, 1}, 6, 2.0 / 720, "6 falling");
    p_is(x, (double[]){3, 3, 3, 3, 3}, 5, 1, "all equal");

    double xs[70], ys[70];
    for (int i = 0; i < 70; i++) {
        xs[i] = i + 1;
        ys[i] = 10 + i;
    }
    double p = pmnf_trend_p(xs, ys, 70);
    check(p > 0 && p < 1e-30, "70 in order (normal approximation): p = %g", p);
    /* the exact and the approximate tails agree in the middle: 64 values,
     * half the pairs against the order, p near 1 */
    for (int i = 0; i < 64; i++)
        ys[i] = (i % 2) ? 64 - i : i;
    p = pmnf_trend_p(xs, ys, 64);
    check(p > 0.5 && p <= 1, "64 without order: p = %g", p);

    unsigned long long st = 0x9E3779B97F4A7C15ULL;
    int sig = 0;
    for (int s = 0; s < 4000; s++) {
        double y[8];
        for (int i = 0; i < 8; i++)
            y[i] = uniform(&st);
        sig += pmnf_trend_p(x, y, 8) < 0.05;
    }
    printf("# random series of 8: %d of 4000 significant at 5%%\n", sig);
    check(sig >= 86 && sig <= 163, "random series of 8: %d of 4000 significant at 5%%", sig);

    p_is((double[]){1, 2, 2, 3, 4}, (double[]){1, 2, 3, 4, 5}, 5, 1, "x not distinct");
    p_is(x, (double[]){1, 2, NAN, 4, 5}, 5, 1, "NaN");
    p_is(x, (double[]){1, 2}, 1, 1, "one value");
    return check_summary();
}
