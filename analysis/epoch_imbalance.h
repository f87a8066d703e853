/*
 * epoch_imbalance.h — the part of the epoch that the slowest rank adds to
 * the sum of the median parts, modelled like the parts, so that an epoch
 * predicted as comp + comm + mem + imbalance is the wall-clock epoch the
 * refit measures.
 *
 * The refit measures the epoch time of a run of several ranks as its
 * duration: per repetition the slowest rank's sum, then the median over the
 * repetitions (pipeline/refit_aggregate.c). The parts comp, comm and mem are
 * Extra-Deep's (Eq. 8-10): sums over a category's callpaths of medians over
 * the ranks. Without imbalance the two agree; with it the epoch exceeds the
 * parts' sum by what the other ranks wait for the slowest one. Per measured
 * coordinate
 *
 *     I(x) = epoch(x) − (comp(x) + comm(x) + mem(x))
 *
 * is fitted with Extra-P's modeler (negative exponents for strong scaling),
 * as the other derived series are (analysis/set_data.c), where every
 * parameter has at least EI_MIN_VALUES distinct measured values. Sets whose
 * epoch and parts' sum agree within EI_INCLUDE_SHARE of the epoch at every
 * coordinate (one rank, ranks alike, or a spread within the models'
 * accuracy) get no part: their epoch stays the parts' sum.
 *
 * ei_warning_json() is the coded warning epoch_imbalance of a prediction
 * whose imbalance part is at least EI_WARN_SHARE of the epoch.
 * Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_EPOCH_IMBALANCE_H
#define PERFCAST_ANALYSIS_EPOCH_IMBALANCE_H

#include <jansson.h>

#include "analysis/measurement.h"
#include "modeling/modeler.h"

#define EI_MIN_VALUES 5
/* a part only where some coordinate's imbalance is at least this share of
 * its epoch (below: within the 0.3-1.2% that Extra-Deep's models are
 * accurate to at their measured points, paper 000 §4.2) */
#define EI_INCLUDE_SHARE 0.001
/* epoch_imbalance: the imbalance part at least this share of the epoch */
#define EI_WARN_SHARE 0.01
#define EI_WARNING "epoch_imbalance"

typedef struct ei_input {
    int nparams;
    const char *const *params; /* the parameters' names */
    int strong;                /* strong scaling: negative exponents allowed */
} ei_input;

typedef struct ei_result {
    int npoints;      /* coordinates with the epoch and all three parts */
    double max_share; /* the largest measured I/epoch over them (0 when none) */
    int included;     /* max_share >= EI_INCLUDE_SHARE: the epoch needs the part */
    int present;      /* a model of I (only when included) */
    pmnf_model model;
    char *function;   /* its text (owned; NULL without a model) */
    char reason[200]; /* why there is no model, when included */
} ei_result;

/* The imbalance part from rows: application measurements of one metric
 * and one level combination (names comp, comm, mem, epoch, each row's
 * value; other names ignored; rows of several combinations, a part twice
 * at a coordinate, give no part).
 * 0, or -1 when out of memory (out then holds nothing to free). */
int ei_fit(const ei_input *in, const store_measurement_row *rows, int nrows, ei_result *out);
void ei_result_clear(ei_result *r);

/* The epoch at point composed as the refit measures it: comp + comm + mem
 * (parts[0..3)) plus the imbalance part imb (NULL: none), the interval's
 * ends joined as modeling/combine.h joins them. It cannot be composed,
 * and the epoch's own model answers instead, where a part is missing
 * (NULL) or an imbalance was measured but not modelled (imb_needed with
 * imb NULL): then -1. Else 0 with *v, *lo, *hi, and *interval 1 when every
 * part had an interval there. The model cache (api/predict.c) and a stored
 * set read for /curve and regressions (api/set_models.c) both compose it
 * here. */
int ei_epoch_at(const pmnf_model *const *parts, const pmnf_model *imb, int imb_needed,
                const double *point, double *v, double *lo, double *hi, int *interval);

/* 1 when ei_epoch_at composes the epoch from these parts (at any point). */
int ei_composable(const pmnf_model *const *parts, const pmnf_model *imb, int imb_needed);

/* I/epoch, NaN where epoch is not a number > 0 or imbalance not finite. */
double ei_share(double imbalance, double epoch);

/* The coded warning epoch_imbalance when ei_share(imbalance, epoch) >=
 * EI_WARN_SHARE: {"code","message","model","share","imbalance",
 * "parts_sum","limit"} (share and limit fractions of the epoch; imbalance
 * and parts_sum in the metric's unit); NULL below it (or out of memory).
 * model names the epoch ("epoch time"). */
json_t *ei_warning_json(double imbalance, double epoch, const char *metric, const char *unit);

#endif
