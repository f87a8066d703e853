/*
 * trend.c — Kendall's rank test for a monotone trend (trend.h).
 *
 * Over the pairs i < j with x_i != x_j, a pair is in order for a rising
 * series when y rises with x and against it otherwise (a tie in y counts
 * against both directions). Under the null hypothesis, with distinct x and
 * y, the number of pairs against the order is the number of inversions of
 * a uniformly random permutation, whose distribution is built one element
 * at a time: adding the m-th element adds 0..m-1 inversions, each with
 * probability 1/m (the Mahonian numbers over m!). Only its lower tail up to
 * the observed count is needed. Beyond TREND_EXACT_MAX pairs the count is
 * taken as normal with mean N/2 and variance n(n-1)(2n+5)/72 (Kendall's
 * S = concordant - discordant has variance n(n-1)(2n+5)/18 and
 * S = N - 2 x inversions), N = n(n-1)/2 pairs.
 */
#include <math.h>
#include <stdlib.h>

#include "modeling/trend.h"

/* P(inversions <= k) for a random permutation of n elements, or -1 out of
 * memory. */
static double inversions_cdf(int n, long k)
{
    long max = (long)n * (n - 1) / 2;
    if (k >= max)
        return 1;
    if (k < 0)
        return 0;
    double *p = calloc((size_t)k + 1, sizeof *p), *q = calloc((size_t)k + 1, sizeof *q);
    if (!p || !q) {
        free(p);
        free(q);
        return -1;
    }
    p[0] = 1;
    for (int m = 2; m <= n; m++) {
        /* q[j] = (p[j] + p[j-1] + ... + p[j-m+1]) / m: a sliding sum */
        double run = 0;
        for (long j = 0; j <= k; j++) {
            run += p[j];
            if (j - m >= 0)
                run -= p[j - m];
            q[j] = run / m;
        }
        double *t = p;
        p = q;
        q = t;
    }
    double cdf = 0;
    for (long j = 0; j <= k; j++)
        cdf += p[j];
    free(p);
    free(q);
    return cdf < 1 ? cdf : 1;
}

/* P(inversions <= k) by the normal approximation (with continuity). */
static double inversions_cdf_normal(int n, long k)
{
    double mean = (double)n * (n - 1) / 4;
    double sd = sqrt((double)n * (n - 1) * (2.0 * n + 5) / 72);
    return 0.5 * erfc(-((double)k + 0.5 - mean) / (sd * sqrt(2.0)));
}

double pmnf_trend_p(const double *x, const double *y, int n)
{
    if (n < 2)
        return 1;
    long against_rise = 0, against_fall = 0;
    int x_ties = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i]))
            return 1;
        for (int j = i + 1; j < n; j++) {
            if (x[i] == x[j]) {
                x_ties = 1;
                continue;
            }
            double dx = x[j] - x[i], dy = y[j] - y[i];
            if (dy == 0 || (dx > 0) != (dy > 0))
                against_rise++;
            if (dy == 0 || (dx > 0) == (dy > 0))
                against_fall++;
        }
    }
    long k = against_rise < against_fall ? against_rise : against_fall;
    if (x_ties)
        return 1;
    double one = n <= TREND_EXACT_MAX ? inversions_cdf(n, k) : inversions_cdf_normal(n, k);
    if (one < 0)
        one = inversions_cdf_normal(n, k);
    double p = 2 * one;
    return p < 1 ? p : 1;
}
