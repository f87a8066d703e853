/*
 * cost.h — the cost of one epoch at a configuration (Q4, Extra-Deep Eq. 14):
 *
 *   core-hours = T · ranks · ρ / 3600        (ρ: cores per rank)
 *   money      = core-hours · price per core-hour, or the experiment's
 *                cost.formula over T, ranks and the parameters
 *
 * shared by GET .../cost and POST .../configurations, which take the
 * experiment's cost set-up from the model cache (cached_cost_setup,
 * api/model_cache.h).
 */
#ifndef PERFCAST_ANALYSIS_COST_H
#define PERFCAST_ANALYSIS_COST_H

#include <jansson.h>

#include "analysis/formula.h"
#include "analysis/problem.h"

/* An experiment's cost set-up. */
typedef struct cost_setup {
    int has_cost;               /* the experiment has a cost set-up */
    double cores_per_rank;      /* ρ; 1 without a cost set-up */
    double price_per_core_hour; /* NaN without a cost set-up */
    const char *formula;        /* cost.formula, "" when none */
    const char *const *params;  /* the parameters' names (for the formula) */
    int nparams;
} cost_setup;

typedef struct cost_eval {
    int has_cost;
    double cores_per_rank, price_per_core_hour;
    int has_formula;
    formula f; /* compiled for this request (formulas belong to one thread) */
} cost_eval;

/* 0, or -1 with a message in err when the formula does not compile. */
int cost_open(cost_eval *c, const cost_setup *s, char *err, size_t errcap);
void cost_close(cost_eval *c);
/* T·ranks·ρ/3600; NaN when ranks is not > 0 (no rank count there). */
double cost_core_hours(const cost_eval *c, double t, double ranks);
/* Money per epoch; NaN when the experiment has neither price nor formula,
 * or ranks is not > 0. */
double cost_money(cost_eval *c, double t, double ranks, const double *point);

/* 1 when the experiment prices an epoch (a price or a cost formula). */
int cost_priced(const cost_eval *c);

/* 0 when the answer at point (names[0..nparams)) is made of finite
 * numbers: the epoch time t (its model's value there; the caller has one)
 * and its core-hours (NaN without a rank count: answered as null), per
 * epoch and times epochs, and the money times epochs where it is finite per
 * epoch (where it is not, cost_money_warning says why).
 * Else -1 with p: 400 saying which is not finite, naming epochs when only
 * the totals overflow, else the parameter farthest from 1 on a log scale
 * (the coordinate that takes a model beyond what a double holds; the only
 * one with one parameter). */
int cost_check_finite(double t, double core_hours, double money, double epochs,
                      const char *const *names, int nparams, const double *point, an_problem *p);

#define COST_WARN_INVALID "cost_invalid"

/* The coded warning cost_invalid when money (cost_money at a point with
 * ranks > 0) of a priced experiment is not a finite number >= 0: its cost
 * formula has no value there (sqrt or log of a negative, a division by 0),
 * answered as null, or a value below 0, no cost either (answered with its
 * number and this warning, as a negative time is); "value" is the number
 * (null when not finite). NULL when the money is usable, the experiment has
 * no price, or out of memory. */
json_t *cost_money_warning(const cost_eval *c, double money, double ranks);

#endif
