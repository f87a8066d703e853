/*
 * curve.h — one model evaluated along one parameter, each value with its
 * 95% interval: what a plot of a model needs (GET /v1/experiments/{id}/curve;
 * the dashboard draws its curves and bands from it).
 *
 * The swept parameter takes the given values (at most CURVE_MAX_VALUES
 * numbers > 0), by default CURVE_DEFAULT_POINTS points spaced evenly in log
 * from the smallest measured value to 8x the largest; the other parameters
 * are fixed at the given values, by default their largest measured value.
 * Each point says whether it lies beyond CURVE_EXTRAPOLATION_FACTOR times
 * the largest measured value of a parameter ("beyond_4x"), where errors grow.
 */
#ifndef PERFCAST_ANALYSIS_CURVE_H
#define PERFCAST_ANALYSIS_CURVE_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/measurement.h"
#include "modeling/pmnf.h"

#define CURVE_MAX_VALUES 1000
#define CURVE_DEFAULT_POINTS 65
#define CURVE_EXTRAPOLATION_FACTOR 4.0

typedef struct curve_value {
    double value, lo, hi;
    int has_interval;
} curve_value;

typedef struct curve_input {
    const char *const *names;   /* the experiment's parameters */
    int np;
    int param;                  /* the swept one */
    const double *fixed;        /* the others, where has_fixed */
    const int *has_fixed;
    const double *values;       /* NULL: the default sweep */
    int nvalues;
    const store_measurement_row *meas; /* the measured points */
    int nmeas;
    curve_value (*predict)(const void *model, const double *point);
    const void *model;
} curve_input;

typedef struct curve_result {
    json_t *fixed;              /* {"<param>": value} of the other parameters */
    json_t *points;             /* [{"x","value","interval":[lo,hi]|null,"beyond_4x"}] */
    double min_measured, max_measured, extrapolation_from; /* of the swept parameter */
} curve_result;

/* "1,2,4.5" into *values (malloc'ed, *n of them). 0, or -1 with why. */
int curve_values_parse(const char *text, double **values, int *n, char *why, size_t cap);

/* The curve. 0, or -1 when out of memory. */
int curve_build(const curve_input *in, curve_result *out);
void curve_result_free(curve_result *r);

#endif
