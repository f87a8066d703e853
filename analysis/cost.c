/*
 * cost.c — the cost of one epoch at a configuration: core-hours and money
 * by price or by the experiment's cost formula (see cost.h).
 */
#include "analysis/cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/finite_point.h"

int cost_open(cost_eval *c, const cost_setup *s, char *err, size_t errcap)
{
    memset(c, 0, sizeof *c);
    c->has_cost = s->has_cost;
    c->cores_per_rank = s->cores_per_rank;
    c->price_per_core_hour = s->price_per_core_hour;
    if (!s->formula || !s->formula[0])
        return 0;
    if (formula_compile(s->formula, s->params, s->nparams, &c->f, err, errcap) < 0)
        return -1;
    c->has_formula = 1;
    return 0;
}

void cost_close(cost_eval *c)
{
    if (c->has_formula)
        formula_free(&c->f);
    c->has_formula = 0;
}

double cost_core_hours(const cost_eval *c, double t, double ranks)
{
    if (!(ranks > 0))
        return NAN; /* no rank count (analysis/rank_count.h): no core-hours, never 0 */
    return t * ranks * c->cores_per_rank / 3600;
}

double cost_money(cost_eval *c, double t, double ranks, const double *point)
{
    if (!(ranks > 0))
        return NAN;
    if (c->has_formula)
        return formula_eval(&c->f, t, ranks, c->cores_per_rank, c->price_per_core_hour, point);
    if (!c->has_cost)
        return NAN;
    return cost_core_hours(c, t, ranks) * c->price_per_core_hour;
}

int cost_priced(const cost_eval *c)
{
    return c->has_cost || c->has_formula;
}

json_t *cost_money_warning(const cost_eval *c, double money, double ranks)
{
    if (!cost_priced(c) || !(ranks > 0) || (isfinite(money) && money >= 0))
        return NULL;
    char text[300];
    if (isfinite(money))
        snprintf(text, sizeof text,
                 "The cost %s gives %.6g here, below 0: no cost an epoch can have; check the "
                 "formula.",
                 c->has_formula ? "formula" : "set-up", money);
    else
        snprintf(text, sizeof text,
                 "The cost %s gives no finite number here (e.g. the square root or logarithm "
                 "of a negative, or a division by 0): no cost is answered; check the formula.",
                 c->has_formula ? "formula" : "set-up");
    json_t *w = json_pack("{s:s, s:s}", "code", COST_WARN_INVALID, "message", text);
    if (w && json_object_set_new(w, "value", isfinite(money) ? json_real(money) : json_null()) < 0) {
        json_decref(w);
        return NULL;
    }
    return w;
}

int cost_check_finite(double t, double core_hours, double money, double epochs,
                      const char *const *names, int nparams, const double *point, an_problem *p)
{
    /* NaN core-hours (no rank count) are answered as null with the reason,
     * and so is money without a finite value per epoch (a formula's
     * division by 0 included: cost_invalid); infinite core-hours overflowed */
    int per_epoch = isfinite(t) && !isinf(core_hours);
    if (per_epoch && isfinite(t * epochs) && !isinf(core_hours * epochs) &&
        (!isfinite(money) || isfinite(money * epochs)))
        return 0;
    char at[300];
    an_point_text(names, nparams, point, 6, at, sizeof at);
    if (per_epoch)
        return an_problem_set(p, 400, "epochs",
                              "the prediction is not finite for %.6g epochs at %s: the totals "
                              "(%.6g s per epoch) exceed what a double holds; ask for fewer epochs",
                              epochs, at, t);
    /* the epoch time itself: the rule of every prediction (finite_point.h) */
    fp_value v = {"the model of the epoch time", t};
    if (finite_point_check(&v, 1, names, nparams, point, NULL, p) < 0)
        return -1;
    return an_problem_set(p, 400, nparams ? names[finite_point_far(nparams, point)] : NULL,
                          "the prediction is not finite at %s: the core-hours or the cost of "
                          "T = %.6g s per epoch there exceed what a double holds; ask nearer "
                          "the measured range",
                          at, t);
}
