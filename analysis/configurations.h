/*
 * configurations.h — which configuration to request under a deadline and a
 * budget (Extra-Deep §3.3, the service's Q5): the request document, and the
 * search over the product of the candidate ranges at every level
 * combination searched, with its answer document.
 *
 *   {"max_time_s":36000, "max_core_hours":10000, "max_cost":500, "epochs":90,
 *    "candidates":{"ranks":{"min":2,"max":1024,"step":2}},   (or "factor":2,
 *                                                             or {"values":[..]})
 *    "objective":"cheapest|fastest|efficient"}               (optional)
 *
 * Every candidate (at most CONFIGS_MAX_CANDIDATES in all) gets its predicted
 * time, core-hours and cost for all the epochs (95% intervals), its
 * parallel efficiency relative to P_1 of its series along x_1 (the first
 * measured point at its values of the other parameters) and the efficiency
 * model ε(x) there (efficiency_pct_model), and its feasibility (every limit
 * given is met by the prediction, the point estimate), whether it is
 * feasible at its intervals' upper ends too (feasible_at_upper), and the
 * coded warning limit_within_interval for each limit inside one of its 95%
 * intervals. A candidate whose rank count (data_parallel × model_parallel,
 * or either degree) is not a whole number cannot be allocated: it is left
 * out, counted in "left_out" and said by the warning ranks_not_whole (when
 * every candidate would be, configs_check_whole refuses the request). The
 * recommendation, among the candidates feasible at their upper ends when
 * there is one, else among the feasible ones: the stated
 * objective, else for weak scaling the smallest feasible allocation
 * (cheapest and most efficient there, §3.3) and for strong scaling the
 * highest parallel efficiency inside the feasible set, read from the ε
 * model when there is one (Extra-Deep Fig. 4b), else from the predicted
 * times. The time/cost Pareto front is over all candidates. When nothing is
 * feasible, "recommended" is null and "nothing_feasible" says why and lists
 * the closest candidates (smallest largest ratio of value to limit).
 *
 * The models of a combination are the caller's (configs_ops: its epoch
 * time, ranks and warnings at a point), its measured data an ad_app
 * (analysis/set_data.h), money from analysis/cost.h. api/configurations.c
 * finds the combinations and renders the answer. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_CONFIGURATIONS_H
#define PERFCAST_ANALYSIS_CONFIGURATIONS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/cost.h"
#include "analysis/problem.h"
#include "analysis/rank_count.h"
#include "analysis/set_data.h"
#include "modeling/configs.h"
#include "modeling/pmnf.h"

#define CONFIGS_MAX_CANDIDATES 10000
#define CONFIGS_CLOSEST 5
/* coded warnings of the answer: a limit inside a candidate's 95% interval;
 * candidates left out for a rank count that is not a whole number */
#define CONFIGS_WARN_LIMIT_WITHIN "limit_within_interval"
#define CONFIGS_WARN_RANKS_NOT_WHOLE RANK_COUNT_WARN_NOT_WHOLE

typedef struct configs_request {
    cfg_limits limits;
    long epochs;
    cfg_objective objective;
    cfg_range ranges[PMNF_MAX_PARAMS];
    double *values[PMNF_MAX_PARAMS];
} configs_request;

/* Reads a request for an experiment with parameters params[0..nparams)
 * (priced: it has a price or a cost formula, so max_cost can be asked).
 * 0, or -1 with p (400 naming the member at fault; 500 out of memory).
 * configs_request_free() it either way. */
int configs_request_parse(const json_t *doc, const char *const *params, int nparams, int priced,
                          configs_request *r, an_problem *p);
void configs_request_free(configs_request *r);

/* A prediction: value and 95% interval (has_interval 0: lo = hi = value). */
typedef struct configs_estimate {
    double value, lo, hi;
    int has_interval;
} configs_estimate;

/* What the search asks of a combination's models (models). */
typedef struct configs_ops {
    configs_estimate (*epoch)(const void *models, const double *point); /* one epoch's time */
    double (*ranks)(const void *models, const double *point);           /* 0: unknown */
    int (*beyond)(const void *models, const double *point); /* past the extrapolation limit */
    /* appends the coded warnings of the prediction at point (all: with the
     * models' own; point NULL: the models' only) to doc's "warnings" */
    void (*warnings)(json_t *doc, const void *models, const double *point, int all);
    /* the degrees data_parallel and model_parallel at point (their product
     * is ranks); 0, or -1 when unknown. NULL: only the product is checked */
    int (*degrees)(const void *models, const double *point, double *dp, double *mp);
} configs_ops;

/* One level combination searched. */
typedef struct configs_combo {
    const void *models;
    const ad_app *app; /* its measured epoch times */
    json_t *levels;    /* {"dataloader":"dali",...}; NULL without factors (borrowed) */
} configs_combo;

typedef struct configs_search_in {
    int64_t experiment;
    int set_number;
    const char *scaling; /* "strong" | "weak" */
    const char *const *params;
    int nparams;
    const configs_ops *ops;
    const configs_combo *combos;
    int ncombos;
    cost_eval *cost;
    int factors;         /* the experiment has factors: the answer lists the combinations */
    json_t *skipped;     /* with factors: the combinations without a model (borrowed) */
} configs_search_in;

/* 0 when some candidate of request r over in can be allocated; -1 with p
 * (400 naming candidates.<parameter>, or candidates when more than one
 * parameter has fractional values) when every candidate with a rank count
 * has one that is not a whole number (configs_search leaves those out). */
int configs_check_whole(const configs_search_in *in, const configs_request *r, an_problem *p);

/* 0 when the prediction at every candidate of request r over in that can
 * be allocated is finite: its epoch time, core-hours and money, per epoch
 * and for all the epochs (cost_check_finite's rule); -1 with p (400 naming
 * candidates.<parameter> of the first that is not, or epochs when only the
 * totals overflow) else. An answer there would be of nulls. */
int configs_check_finite(const configs_search_in *in, const configs_request *r, an_problem *p);

/* The answer document of request r over in (its grid at every
 * combination: at most CONFIGS_MAX_CANDIDATES points, checked by the
 * caller); NULL when out of memory. */
json_t *configs_search(const configs_search_in *in, const configs_request *r);

#endif
