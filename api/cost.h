/*
 * cost.h — the cost of one epoch at a configuration (Q4, Extra-Deep Eq. 14):
 *
 *   core-hours = T · ranks · ρ / 3600        (ρ: cores per rank)
 *   money      = core-hours · price per core-hour, or the experiment's
 *                cost.formula over T, ranks and the parameters
 *
 * shared by GET .../cost and POST .../configurations.
 */
#ifndef PERFCAST_API_COST_H
#define PERFCAST_API_COST_H

#include "analysis/formula.h"
#include "api/model_cache.h"

typedef struct cost_eval {
    const cached_models *m;
    int has_formula;
    formula f; /* compiled for this request (formulas belong to one thread) */
} cost_eval;

/* 0, or -1 with a message in err when the stored formula does not compile. */
int cost_open(cost_eval *c, const cached_models *m, char *err, size_t errcap);
void cost_close(cost_eval *c);

double cost_core_hours(const cost_eval *c, double t, double ranks);
/* Money per epoch; NaN when the experiment has neither price nor formula. */
double cost_money(cost_eval *c, double t, double ranks, const double *point);

#endif
