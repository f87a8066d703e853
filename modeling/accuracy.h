/*
 * accuracy.h — how well a model predicts (Extra-Deep §4): the percentage
 * error |predicted - measured| / |measured| · 100 at each point, and the
 * median percentage error (MPE) over a set of points; computed at the
 * modelling points (accuracy) and at held-out evaluation points P+
 * (predictive power). Pure functions of numbers.
 */
#ifndef PERFCAST_ACCURACY_H
#define PERFCAST_ACCURACY_H

#include <stddef.h>

/* NaN when measured is 0 or either value is not finite. */
double acc_error_pct(double predicted, double measured);

/* Median of the finite values of v[0..n) (scratch: 2n doubles); NaN when
 * there is none. */
double acc_median(const double *v, size_t n, double *scratch);

#endif
