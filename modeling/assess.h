/*
 * assess.h — how far to trust a model and a prediction: the checks behind
 * the coded warnings (modeler.h's PMNF_WARN_* bits, pmnf_warning_code()).
 *
 * pmnf_assess_model() looks at a fitted model and the data it was fitted to
 * and sets the model-level warnings: poor_fit, constant_on_varying,
 * few_points and interval_unreliable; it also records what a later
 * prediction is judged by (pmnf_diagnostics: the measured range of each
 * parameter, the distinct values, the smallest and largest measurement,
 * the leave-one-out errors). pmnf_fit() calls it on every model.
 *
 * pmnf_assess_point() judges one prediction of a model from its
 * diagnostics: negative_prediction (the model is <= 0 somewhere on the path
 * from the measured range to the asked point), implausible_extrapolation
 * (a metric that grows towards the point falls on that path, or the path
 * falls below half the smallest measurement) and extrapolation_far (the
 * point lies beyond PMNF_FAR_FACTOR times the measured range).
 *
 * The thresholds are the constants below; the README's warning table and
 * api/openapi.json document them, with what a user should do about each.
 * Everything here is pure computation: no I/O, no globals.
 */
#ifndef PERFCAST_ASSESS_H
#define PERFCAST_ASSESS_H

#include "modeling/modeler.h"

/* poor_fit: SMAPE above this (percent) on positive data ... */
#define PMNF_POOR_FIT_SMAPE 20.0
/* ... or adjusted R^2 below this on data whose largest value is more than
 * PMNF_POOR_FIT_SPREAD times its smallest. */
#define PMNF_POOR_FIT_AR2 0.5
#define PMNF_POOR_FIT_SPREAD 1.5
/* constant_on_varying: a constant model on data whose largest value is more
 * than this many times its smallest. */
#define PMNF_CONSTANT_SPREAD 2.0
/* few_points: fewer distinct measured values than this along a parameter. */
#define PMNF_FEW_VALUES 5
/* implausible_extrapolation: a prediction on the path below this fraction
 * of the smallest measurement, or a metric growing towards the point that
 * falls more than PMNF_GROWTH_FALL (relative) below its value at the edge
 * of the measured range. */
#define PMNF_IMPLAUSIBLE_FRACTION 0.5
#define PMNF_GROWTH_FALL 0.05
/* extrapolation_far: a coordinate above this many times the parameter's
 * largest measured value, or below its smallest divided by it. */
#define PMNF_FAR_FACTOR 4.0
/* The extrapolation horizon a model is judged over without an asked point
 * (pmnf_assess_horizon): this many times the largest measured values. */
#define PMNF_HORIZON 8.0
/* Points checked on the path from the measured range to an asked point. */
#define PMNF_PATH_STEPS 64

/* Sets m->diag from the data m was fitted to and ORs the model-level
 * warnings into m->warnings. d must be the data the model was fitted to
 * (npoints >= 1). Returns 0, or -1 when out of memory (m->diag.known = 0,
 * no warning set). */
int pmnf_assess_model(pmnf_model *m, const pmnf_data *d);

/* One prediction judged. */
typedef struct pmnf_point_check {
    unsigned warnings;             /* NEGATIVE_PREDICTION, IMPLAUSIBLE_EXTRAPOLATION,
                                      EXTRAPOLATION_FAR */
    double value;                  /* the model at the asked point */
    double min_value;              /* the smallest value on the path */
    double min_at[PMNF_MAX_PARAMS]; /* where it is */
    double edge_value;             /* the value where the path leaves the measured range */
    int growing;                   /* 1: the metric grows towards the point in the range */
    double far_factor;             /* largest ratio of the point to the measured range */
    int far_param;                 /* the parameter of far_factor, -1 inside the range */
} pmnf_point_check;

/* Judges the prediction of m at point (m->f.nparams coordinates, > 0).
 * Without diagnostics (m->diag.known == 0) only the point itself is
 * checked for <= 0. */
void pmnf_assess_point(const pmnf_model *m, const double *point, pmnf_point_check *out);

/* The same at PMNF_HORIZON times the largest measured value of every
 * parameter: what the model does over the documented extrapolation
 * horizon (extrapolation_far is not set). */
void pmnf_assess_horizon(const pmnf_model *m, pmnf_point_check *out);

#endif
