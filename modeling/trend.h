/*
 * trend.h — whether a series shows a monotone trend: Kendall's rank test.
 *
 * Used by the robust modeler (robust.c) where nothing else measures the
 * noise: without repetitions a constant is only a fair answer while the
 * values' order along the parameter could be chance.
 */
#ifndef PERFCAST_TREND_H
#define PERFCAST_TREND_H

/* The two-sided p-value of Kendall's test of no monotone association
 * between x and y (n pairs, x distinct: one center per coordinate). Pairs
 * tied in y count against either direction, so ties only make the test
 * more conservative. Exact (the distribution of the number of inversions
 * of a random permutation) up to TREND_EXACT_MAX pairs, the normal
 * approximation beyond. 1 (no evidence) for fewer than 2 pairs, any value
 * not finite, or x not distinct. */
#define TREND_EXACT_MAX 64
double pmnf_trend_p(const double *x, const double *y, int n);

#endif
