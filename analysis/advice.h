/*
 * advice.h — which runs to take next so that the prediction at a target
 * point gets most precise per core-hour, within a budget (the service's
 * POST .../advice over sweep/sweep_advice.h): the request document, the
 * series it advises on, the priced candidates and the answer document.
 *
 *   {"target": {"ranks": 512}, "budget_core_hours": 20,
 *    "epochs_per_run": 0.01, "candidates": {"ranks": [2, 4, 8, 16, 32, 64]},
 *    "max_runs": 200, "grid_core_hours": 50}
 *
 * The series are the time models of the epoch's parts (comp, comm, mem; the
 * epoch's own model when a part has none), measured at the application
 * level. Noise per repetition: the pooled run-to-run variation (CV) of the
 * part's measurements with repetitions, else the fit's residual spread. A
 * run at x costs epochs_per_run × predicted epoch time × ranks ×
 * cores_per_rank / 3600 core-hours. Candidates default to every measured
 * value of each parameter and its largest measured value doubled until the
 * target's value, their product (at most ADVICE_MAX_CANDIDATES). The runs
 * measured at the candidates and those recommended never cost more than the
 * grid the advice replaces: grid_core_hours, default one run at every
 * candidate (sweep/sweep_advice.h; warnings grid_cost_reached and
 * costlier_than_grid say when that bound stops it). A candidate whose rank
 * count cannot be allocated (not a whole number) is never recommended.
 *
 * The models are the caller's (advice_ops: the epoch time, ranks and the
 * extrapolation note at a point; the parts' PMNF models); api/advice.c reads
 * the measurements and renders the answer. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_ADVICE_H
#define PERFCAST_ANALYSIS_ADVICE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/measurement.h"
#include "analysis/problem.h"
#include "modeling/modeler.h"

#define ADVICE_MAX_CANDIDATES 10000
#define ADVICE_MAX_VALUES 1000 /* candidate values of one parameter */
#define ADVICE_MAX_RUNS 10000  /* max_runs at most */

typedef struct advice_request {
    double target[PMNF_MAX_PARAMS];
    double budget, epochs_per_run;
    double grid; /* grid_core_hours; 0: one run at every candidate */
    int max_runs;
    int nvalues[PMNF_MAX_PARAMS];
    double *values[PMNF_MAX_PARAMS]; /* candidate values per parameter (sorted, distinct) */
} advice_request;

/* Reads a request for an experiment with parameters params[0..nparams)
 * whose measured epoch rows are rows[0..n) (the default candidates). 0, or
 * -1 with p (400 naming the member at fault; 500 out of memory).
 * advice_request_free() it either way. */
int advice_request_parse(const json_t *body, const char *const *params, int nparams,
                         const store_measurement_row *rows, int n, advice_request *a,
                         an_problem *p);
void advice_request_free(advice_request *a);
/* The number of candidate points of a (the product of its values). */
long advice_candidates(const advice_request *a, int nparams);

typedef struct advice_estimate {
    double value, lo, hi;
    int has_interval;
} advice_estimate;

typedef struct advice_ops {
    advice_estimate (*epoch)(const void *models, const double *point); /* one epoch's time */
    double (*ranks)(const void *models, const double *point);          /* 0: unknown */
    json_t *(*extrapolation)(const void *models, const double *point); /* the answer's note */
    /* the degrees data_parallel and model_parallel at point (their product
     * is ranks); 0, or -1 when unknown. NULL: only the product is checked */
    int (*degrees)(const void *models, const double *point, double *dp, double *mp);
} advice_ops;

typedef struct advice_in {
    int64_t experiment;
    int set_number;
    const char *const *params;
    int nparams;
    double cores_per_rank;
    const pmnf_model *parts[4]; /* comp, comm, mem, epoch time models; NULL: none */
    const advice_ops *ops;
    const void *models;
    const store_measurement_row *rows; /* the application-level epoch rows, with repetitions */
    int nrows;
} advice_in;

enum {
    ADVICE_OK = 0,
    ADVICE_TOO_MANY = -1, /* more than ADVICE_MAX_CANDIDATES candidates (400, candidates) */
    ADVICE_NOMEM = -2,
    ADVICE_NO_MODEL = -3, /* no epoch time model to advise on (409) */
    ADVICE_FAILED = -4    /* msg says why (409) */
};

/* 0 when some candidate of r can be allocated; -1 with p (400 naming
 * candidates.<parameter>, or candidates when more than one parameter has
 * fractional values) when every candidate with a rank count has one that
 * is not a whole number (analysis/rank_count.h), so that no run could be
 * advised. The advice itself never recommends a run at such a candidate:
 * it leaves them out and says so (ranks_not_whole, with how many and the
 * first). */
int advice_check_whole(const advice_in *in, const advice_request *r, an_problem *p);

/* The answer document into *out, or one of the codes above. */
int advice_compute(const advice_in *in, const advice_request *r, json_t **out, char *msg,
                   size_t msgcap);

#endif
