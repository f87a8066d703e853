/*
 * regressions.h — did the head commit make scaling worse than the base
 * commit? The comparison of two model sets of one metric that
 * GET /v1/experiments/{id}/regressions answers (and `perfcast ci-check`
 * prints from it).
 *
 * Callpath by callpath (per-epoch models) and for the application parts
 * (the epoch composed of comp + comm + mem as predict composes it, and each
 * part), both models are evaluated with their 95% intervals at every
 * measured point of either set and at the target `at` (default: 4x the
 * largest measured value of each parameter). A change is significant
 * (modeling/compare.h) when the two intervals separate and it exceeds the
 * threshold (percent). The measured points decide: a significant increase
 * at one of them is a regression, a decrease an improvement. A significant
 * change at the target alone is two extrapolations parting where the data
 * do not differ, which noise produces too: reported as "diverges", not
 * counted. Complexity-class changes (leading exponents) are reported; the
 * cost at the target (core-hours T·ranks·ρ/3600 from the experiment's
 * training set-up) is compared like a value and counts when the epoch's
 * change does. Callpaths modeled in one set only are listed as appeared or
 * vanished.
 *
 * The sets come as their stored model rows with a prediction function (the
 * caller's models: api/set_models.h), and their measurements.
 */
#ifndef PERFCAST_ANALYSIS_REGRESSIONS_H
#define PERFCAST_ANALYSIS_REGRESSIONS_H

#include <jansson.h>

#include "analysis/measurement.h"
#include "analysis/problem.h"
#include "modeling/compare.h"
#include "modeling/pmnf.h"

#define REG_MAX_POINTS 256
#define REG_DEFAULT_THRESHOLD 5.0
#define REG_EXTRAPOLATION_FACTOR 4.0
#define REG_RULE                                                                                  \
    "a change counts when the 95% intervals of base and head separate at a measured point "      \
    "and it exceeds the threshold there; an increase is a regression; a change at the "          \
    "target alone (status diverges) is reported, not counted"

/* One model set: its rows (ok[i]: row i has a model), its prediction of row
 * i at a point (NaN without a model; application "epoch" composed of its
 * parts), and its measured application epochs (their points). */
typedef struct reg_side {
    const store_model_row *rows;
    const int *ok;
    int nrows;
    compare_value (*predict)(const void *models, int row, const double *point);
    const void *models;
    const store_measurement_row *meas;
    int nmeas;
} reg_side;

typedef struct reg_input {
    const char *const *names; /* the experiment's parameters */
    int np;
    double threshold;         /* percent */
    const char *at;           /* "ranks:512,..." or NULL: 4x the largest measured */
    const json_t *spec;       /* the experiment's spec ("training", "cost"), for the cost */
} reg_input;

typedef struct reg_result {
    json_t *at, *measured_points, *application, *callpaths, *appeared, *vanished, *cost;
    int regressions, improvements, diverging;
} reg_result;

/* "5", "5%", "0.5%": percent from 0 to 1000 into *out (NULL text: left
 * as it is). 0, or -1. */
int regressions_threshold_parse(const char *text, double *out);

/* Compares head with base. 0, or -1 with p (400 "at" for a bad target).
 * Free the result with regressions_result_free. */
int regressions_compare(const reg_input *in, const reg_side *base, const reg_side *head,
                        reg_result *out, an_problem *p);
void regressions_result_free(reg_result *r);

#endif
