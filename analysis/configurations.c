/*
 * configurations.c — the configuration search under a deadline and a
 * budget (configurations.h): its request document, every candidate's
 * predictions, the recommendation, the Pareto front and the answer.
 */
#include "analysis/configurations.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modeling/scaling.h"

/* ---- the request ------------------------------------------------------------------ */

void configs_request_free(configs_request *r)
{
    for (int i = 0; i < PMNF_MAX_PARAMS; i++)
        free(r->values[i]);
    memset(r, 0, sizeof *r);
}

static int limit_field(const json_t *doc, const char *key, double *out, an_problem *p)
{
    const json_t *v = json_object_get(doc, key);
    *out = INFINITY;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return an_problem_set(p, 400, key, "must be a number > 0");
    *out = json_number_value(v);
    return 0;
}

/* One parameter's candidate values: {"values":[..]} or {"min","max","step"|"factor"}.
 * 0, or -1 with p. */
static int range_field(const json_t *spec, const char *param, configs_request *r, int i,
                       an_problem *p)
{
    char field[128];
    snprintf(field, sizeof field, "candidates.%s", param);
    if (!json_is_object(spec))
        return an_problem_set(p, 400, field, "must be {\"min\",\"max\",\"step\"} or {\"values\":[...]}");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)spec, key, v)
    {
        if (strcmp(key, "values") && strcmp(key, "min") && strcmp(key, "max") &&
            strcmp(key, "step") && strcmp(key, "factor")) {
            snprintf(field, sizeof field, "candidates.%s.%s", param, key);
            return an_problem_set(p, 400, field, "unknown field");
        }
    }
    const json_t *values = json_object_get(spec, "values");
    if (values) {
        size_t n = json_array_size(values);
        if (!json_is_array(values) || n == 0 || n > CONFIGS_MAX_CANDIDATES ||
            json_object_size(spec) != 1)
            return an_problem_set(p, 400, field,
                          "values must be a non-empty array of at most %d numbers, alone",
                          CONFIGS_MAX_CANDIDATES);
        r->values[i] = malloc(sizeof(double) * n);
        for (size_t k = 0; r->values[i] && k < n; k++) {
            double x = json_number_value(json_array_get(values, k));
            if (!json_is_number(json_array_get(values, k)) || !(x > 0) || !isfinite(x)) {
                snprintf(field, sizeof field, "candidates.%s.values[%zu]", param, k);
                return an_problem_set(p, 400, field, "must be a number > 0");
            }
            r->values[i][k] = x;
        }
        r->ranges[i] = (cfg_range){(int)n, r->values[i]};
        return r->values[i] ? 0 : an_problem_set(p, 500, NULL, "out of memory");
    }
    const json_t *jmin = json_object_get(spec, "min"), *jmax = json_object_get(spec, "max");
    const json_t *jstep = json_object_get(spec, "step"), *jfac = json_object_get(spec, "factor");
    double lo = json_number_value(jmin), hi = json_number_value(jmax);
    double step = jstep ? json_number_value(jstep) : 1, factor = json_number_value(jfac);
    if (!json_is_number(jmin) || !(lo > 0) || !json_is_number(jmax) || !(hi >= lo) ||
        !isfinite(hi))
        return an_problem_set(p, 400, field, "min must be a number > 0 and max a number >= min");
    if (jstep && jfac)
        return an_problem_set(p, 400, field, "give step or factor, not both");
    if ((jstep && (!json_is_number(jstep) || !(step > 0))) ||
        (jfac && (!json_is_number(jfac) || !(factor > 1))))
        return an_problem_set(p, 400, field, "step must be a number > 0, factor a number > 1");
    double count = jfac ? floor(log(hi / lo) / log(factor) + 1e-9) + 1
                        : floor((hi - lo) / step + 1e-9) + 1;
    if (count > CONFIGS_MAX_CANDIDATES) /* %.6g: max may be 1e300 */
        return an_problem_set(p, 400, field, "gives %.6g values; at most %d candidates in all", count,
                      CONFIGS_MAX_CANDIDATES);
    int n = (int)count;
    r->values[i] = malloc(sizeof(double) * (size_t)n);
    if (!r->values[i])
        return an_problem_set(p, 500, NULL, "out of memory");
    for (int k = 0; k < n; k++)
        r->values[i][k] = jfac ? lo * pow(factor, k) : lo + k * step;
    r->ranges[i] = (cfg_range){n, r->values[i]};
    return 0;
}

int configs_request_parse(const json_t *doc, const char *const *params, int nparams, int priced,
                          configs_request *r, an_problem *p)
{
    static const char *const keys[] = {"max_time_s", "max_core_hours", "max_cost", "epochs",
                                       "candidates", "objective", NULL};
    memset(r, 0, sizeof *r);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v)
    {
        int ok = 0;
        for (int i = 0; keys[i] && !ok; i++)
            ok = !strcmp(keys[i], key);
        if (!ok)
            return an_problem_set(p, 400, key, "unknown field");
    }
    if (limit_field(doc, "max_time_s", &r->limits.max_time, p) < 0 ||
        limit_field(doc, "max_core_hours", &r->limits.max_core_hours, p) < 0 ||
        limit_field(doc, "max_cost", &r->limits.max_cost, p) < 0)
        return -1;
    if (!isinf(r->limits.max_cost) && !priced)
        return an_problem_set(p, 400, "max_cost", "the experiment has no price (cost set-up) to compute "
                                      "money with; use max_core_hours");
    const json_t *ep = json_object_get(doc, "epochs");
    r->epochs = 1;
    if (ep && (!json_is_integer(ep) || json_integer_value(ep) < 1 ||
               json_integer_value(ep) > 1000000000))
        return an_problem_set(p, 400, "epochs", "must be an integer from 1 to 1000000000");
    if (ep)
        r->epochs = (long)json_integer_value(ep);
    const json_t *obj = json_object_get(doc, "objective");
    r->objective = CFG_AUTO;
    if (obj) {
        const char *o = json_string_value(obj);
        if (o && !strcmp(o, "cheapest"))
            r->objective = CFG_CHEAPEST;
        else if (o && !strcmp(o, "fastest"))
            r->objective = CFG_FASTEST;
        else if (o && !strcmp(o, "efficient"))
            r->objective = CFG_EFFICIENT;
        else
            return an_problem_set(p, 400, "objective", "must be \"cheapest\", \"fastest\" or \"efficient\"");
    }
    const json_t *cands = json_object_get(doc, "candidates");
    if (!json_is_object(cands))
        return an_problem_set(p, 400, "candidates", "is required: an object with the candidate values of "
                                        "every parameter");
    char f[128];
    json_object_foreach((json_t *)cands, key, v)
    {
        int known = 0;
        for (int i = 0; i < nparams && !known; i++)
            known = !strcmp(key, params[i]);
        if (!known) {
            snprintf(f, sizeof f, "candidates.%.64s", key);
            return an_problem_set(p, 400, f, "not a parameter of this experiment");
        }
    }
    for (int i = 0; i < nparams; i++) {
        const json_t *spec = json_object_get(cands, params[i]);
        if (!spec) {
            snprintf(f, sizeof f, "candidates.%s", params[i]);
            return an_problem_set(p, 400, f, "missing: every parameter needs candidate values");
        }
        if (range_field(spec, params[i], r, i, p) < 0)
            return -1;
    }
    size_t total = cfg_grid_size(r->ranges, nparams);
    if (total > CONFIGS_MAX_CANDIDATES) {
        double points = 1; /* the product itself: total saturates at SIZE_MAX */
        for (int i = 0; i < nparams; i++)
            points *= r->ranges[i].nvalues;
        return an_problem_set(p, 400, "candidates",
                      "the product of the ranges has %.6g points; at most %d are searched",
                      points, CONFIGS_MAX_CANDIDATES);
    }
    return 0;
}

/* ---- the search ------------------------------------------------------------------- */

typedef struct extra {
    int combo; /* index into the level combinations searched */
    double point[PMNF_MAX_PARAMS];
    configs_estimate time, core_hours, cost;
    int beyond;
    double efficiency;     /* the ratio shown, relative to the series' P_1 */
    double efficiency_pct; /* Extra-Deep's ε model at the point (NaN without one) */
} extra;

static json_t *number_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const configs_search_in *in, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; o && i < in->nparams; i++)
        json_object_set_new(o, in->params[i], json_real(point[i]));
    return o;
}

/* Appends w (taken; NULL: nothing) to doc's "warnings", made when missing. */
static void append_warning(json_t *doc, json_t *w)
{
    json_t *warns = json_object_get(doc, "warnings");
    if (!w)
        return;
    if (!json_is_array(warns))
        json_object_set_new(doc, "warnings", warns = json_array());
    json_array_append_new(warns, w); /* frees w when warns is NULL */
}

/* The coded warning limit_within_interval when the limit (request member
 * name; not set: INFINITY) of quantity what lies inside e's 95% interval:
 * lo <= limit < hi, so that the interval's upper end misses it while the
 * lower end meets it, whichever side the prediction is on. NULL otherwise.
 * Details: field (the member), limit, quantity, predicted, interval. */
static json_t *limit_warning(const char *name, double limit, const char *what,
                             const configs_estimate *e)
{
    if (isinf(limit) || !e->has_interval || !(e->lo <= limit && limit < e->hi))
        return NULL;
    int met = e->value <= limit;
    char text[400];
    snprintf(text, sizeof text,
             "The limit %s = %.6g lies inside the 95%% interval [%.6g, %.6g] of %s (predicted "
             "%.6g): %s. A scheduler that needs the limit met should take a candidate feasible "
             "at the interval's upper end (feasible_at_upper).",
             name, limit, e->lo, e->hi, what, e->value,
             met ? "the prediction meets it, but the interval's upper end does not: the candidate "
                   "may miss it"
                 : "the prediction misses it, but the interval's lower end meets it");
    return json_pack("{s:s, s:s, s:s, s:f, s:s, s:o, s:[o, o]}", "code",
                     CONFIGS_WARN_LIMIT_WITHIN, "message", text, "field", name, "limit", limit,
                     "quantity", what, "predicted", number_json(e->value), "interval",
                     number_json(e->lo), number_json(e->hi));
}

static json_t *candidate_json(const configs_search_in *in, const cfg_limits *l,
                              const cfg_candidate *c, const extra *x, int full)
{
    const configs_combo *cb = &in->combos[x->combo];
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "point",
                          point_json(in, x->point), "ranks", number_json(c->ranks), "time_s",
                          number_json(c->time), "core_hours", number_json(c->core_hours), "cost",
                          number_json(c->cost), "efficiency", number_json(x->efficiency),
                          "feasible", c->feasible);
    if (o)
        json_object_set_new(o, "feasible_at_upper", json_boolean(c->feasible_at_upper));
    if (o && cb->levels)
        json_object_set(o, "levels", cb->levels);
    if (!full || !o)
        return o;
    json_object_set_new(o, "efficiency_pct_model", number_json(x->efficiency_pct));
    json_t *iv = json_object();
    const configs_estimate *p[3] = {&x->time, &x->core_hours, &x->cost};
    static const char *const names[3] = {"time_s", "core_hours", "cost"};
    for (int i = 0; i < 3; i++)
        json_object_set_new(iv, names[i],
                            p[i]->has_interval && isfinite(p[i]->lo) && isfinite(p[i]->hi)
                                ? json_pack("[f, f]", p[i]->lo, p[i]->hi)
                                : json_null());
    json_object_set_new(o, "interval", iv);
    json_object_set_new(o, "beyond_4x", json_boolean(x->beyond));
    in->ops->warnings(o, cb->models, x->point, 0);
    json_t *warns = json_object_get(o, "warnings");
    if (!(c->ranks > 0) && !json_is_array(warns))
        json_object_set_new(o, "warnings", warns = json_array());
    /* a priced candidate without a usable cost (its formula has no value here) */
    json_t *cw = cost_money_warning(in->cost, x->cost.value, c->ranks);
    if (cw && !json_is_array(warns))
        json_object_set_new(o, "warnings", warns = json_array());
    if (cw)
        json_array_append_new(warns, cw);
    if (!(c->ranks > 0) && warns) /* never feasible: say why */
        json_array_append_new(warns, json_pack("{s:s, s:s}", "code", "no_ranks", "message",
                                               "the rank count training.data_parallel × "
                                               "training.model_parallel is not > 0 here: no "
                                               "core-hours, cost or efficiency, never feasible"));
    /* a limit inside an interval: the point estimate's verdict may not hold */
    append_warning(o, limit_warning("max_time_s", l->max_time, "time_s", &x->time));
    append_warning(o, limit_warning("max_core_hours", l->max_core_hours, "core_hours",
                                    &x->core_hours));
    append_warning(o, limit_warning("max_cost", l->max_cost, "cost", &x->cost));
    return o;
}

static const char *rule_text(cfg_objective rule, int objective_given)
{
    switch (rule) {
    case CFG_SMALLEST:
        return "weak scaling: the smallest feasible allocation, which is also the cheapest and "
               "the most efficient one (Extra-Deep §3.3)";
    case CFG_EFFICIENT:
        return objective_given ? "objective efficient: the highest parallel efficiency among the "
                                 "feasible candidates"
                               : "strong scaling: the highest parallel efficiency among the "
                                 "feasible candidates, by the efficiency model when there is one "
                                 "(Extra-Deep §3.3, Fig. 4b)";
    case CFG_CHEAPEST:
        return "objective cheapest: the lowest cost among the feasible candidates";
    case CFG_FASTEST:
        return "objective fastest: the shortest time among the feasible candidates";
    case CFG_AUTO:
        break;
    }
    return "";
}

static void limits_text(const cfg_limits *l, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    if (!isinf(l->max_time))
        n += (size_t)snprintf(buf + n, cap - n, "%stime <= %g s", n ? ", " : "", l->max_time);
    if (n < cap && !isinf(l->max_core_hours))
        n += (size_t)snprintf(buf + n, cap - n, "%score-hours <= %g", n ? ", " : "",
                              l->max_core_hours);
    if (n < cap && !isinf(l->max_cost))
        snprintf(buf + n, cap - n, "%scost <= %g", n ? ", " : "", l->max_cost);
    if (!buf[0])
        snprintf(buf, cap, "no limits");
}

/* Candidate i of the search: its predictions, efficiency and feasibility inputs. */
static void evaluate(const configs_search_in *in, const configs_request *r, size_t ngrid,
                     int strong, int i, extra *x, cfg_candidate *cand)
{
    double k = (double)r->epochs;
    x->combo = i / (int)ngrid;
    const configs_combo *c = &in->combos[x->combo];
    const ad_app *app = c->app;
    /* strong scaling chooses by the ε model (Extra-Deep Fig. 4b) when there is one */
    int by_model = strong && app->efficiency.present;
    cfg_grid_point(r->ranges, in->nparams, (size_t)i % ngrid, x->point);
    configs_estimate t = in->ops->epoch(c->models, x->point);
    double ranks = in->ops->ranks(c->models, x->point);
    x->time = (configs_estimate){t.value * k, t.lo * k, t.hi * k, t.has_interval};
    x->core_hours = (configs_estimate){cost_core_hours(in->cost, t.value, ranks) * k,
                                       cost_core_hours(in->cost, t.lo, ranks) * k,
                                       cost_core_hours(in->cost, t.hi, ranks) * k,
                                       t.has_interval};
    double c0 = cost_money(in->cost, t.value, ranks, x->point) * k,
           c1 = cost_money(in->cost, t.lo, ranks, x->point) * k,
           c2 = cost_money(in->cost, t.hi, ranks, x->point) * k;
    x->cost = (configs_estimate){c0, c1 < c2 ? c1 : c2, c1 < c2 ? c2 : c1, t.has_interval};
    x->beyond = in->ops->beyond(c->models, x->point);
    /* relative to P_1 of the candidate's series along x_1: measured, or where
     * the candidate's other values were not measured, predicted at the
     * smallest measured x_1 (scl_baseline_point) */
    double base[PMNF_MAX_PARAMS];
    int b = scl_baseline_point(app->coords, app->npoints, in->nparams, x->point,
                               app->value[AD_GROUPS - 1], base);
    double bt = b >= 0 ? app->value[AD_GROUPS - 1][b] : in->ops->epoch(c->models, base).value;
    double bx = b >= 0 ? app->ranks[b] : in->ops->ranks(c->models, base);
    x->efficiency = scl_efficiency(bt, t.value, bx, ranks, strong);
    x->efficiency_pct = NAN;
    if (app->efficiency.present)
        x->efficiency_pct = pmnf_model_eval(&app->efficiency.model, x->point);
    *cand = (cfg_candidate){.ranks = ranks,
                            .priced = cost_priced(in->cost),
                            .time = x->time.value,
                            .core_hours = x->core_hours.value,
                            .cost = isfinite(c0) ? c0 : NAN,
                            /* an ε model without a finite value here (a negative
                             * power of log2(x) at x = 1) gives no efficiency, never an
                             * infinite one that would win (cfg_recommend ranks NaN last) */
                            .efficiency = !by_model                   ? x->efficiency
                                          : isfinite(x->efficiency_pct) ? x->efficiency_pct / 100
                                                                        : NAN,
                            .valid = isfinite(t.value) && t.value > 0 && ranks > 0,
                            .time_hi = t.has_interval ? x->time.hi : NAN,
                            .core_hours_hi = t.has_interval ? x->core_hours.hi : NAN,
                            .cost_hi = t.has_interval ? x->cost.hi : NAN};
}

/* "recommended" and "nothing_feasible" of out */
static void recommendation(const configs_search_in *in, const configs_request *r,
                           const cfg_candidate *cand, const extra *ex, int n, int best,
                           cfg_objective rule, int feasible, int robust, const char *limits,
                           int *order, json_t *out)
{
    if (best >= 0) {
        json_t *rec = candidate_json(in, &r->limits, &cand[best], &ex[best], 1);
        char reason[600], upper[160] = "";
        if (robust == 0 && feasible > 0)
            snprintf(upper, sizeof upper, ", none of them at its intervals' upper ends: a limit "
                                          "lies inside its interval (limit_within_interval)");
        else if (robust < feasible)
            snprintf(upper, sizeof upper, "; chosen among the %d of them that meet it at their "
                                          "intervals' upper ends too", robust);
        snprintf(reason, sizeof reason, "%s (%d of %d candidates meet %s%s)",
                 rule_text(rule, r->objective != CFG_AUTO), feasible, n, limits, upper);
        json_object_set_new(rec, "reason", json_string(reason));
        json_object_set_new(out, "recommended", rec);
        json_object_set_new(out, "nothing_feasible", json_null());
        return;
    }
    int nc = cfg_closest(cand, n, CONFIGS_CLOSEST, order);
    json_t *closest = json_array();
    for (int i = 0; i < nc; i++) {
        json_t *c = candidate_json(in, &r->limits, &cand[order[i]], &ex[order[i]], 1);
        json_object_set_new(c, "violation", number_json(cand[order[i]].violation));
        json_array_append_new(closest, c);
    }
    char detail[400];
    snprintf(detail, sizeof detail,
             "no candidate meets %s; the closest candidates are listed, ordered by their "
             "largest ratio of value to limit (\"violation\")",
             limits);
    json_object_set_new(out, "recommended", json_null());
    json_object_set_new(out, "nothing_feasible",
                        json_pack("{s:s, s:o}", "detail", detail, "closest", closest));
}

/* "baseline" (the first combination's series) and, with factors,
 * "level_combinations" and "skipped_levels" of out */
static void baselines(const configs_search_in *in, const extra *ex, json_t *out)
{
    json_t *list = in->factors ? json_array() : NULL;
    for (int c = 0; c < in->ncombos; c++) {
        const ad_app *app = in->combos[c].app;
        double t1 = app->npoints ? app->value[AD_GROUPS - 1][app->baseline] : NAN;
        double x1 = app->npoints ? app->ranks[app->baseline] : NAN;
        json_t *b = json_pack("{s:o, s:o, s:o}", "point",
                              point_json(in, app->npoints ? app->coords : ex[0].point), "ranks",
                              number_json(x1), "time_s", number_json(t1));
        if (in->combos[c].levels)
            json_object_set(b, "levels", in->combos[c].levels);
        if (c == 0)
            json_object_set(out, "baseline", b);
        if (list)
            json_array_append(list, b);
        json_decref(b);
    }
    if (in->factors) {
        /* per level combination searched: its series' baseline; and the
         * combinations the query allows that have no model of the epoch time */
        json_object_set_new(out, "level_combinations", list);
        json_object_set(out, "skipped_levels", in->skipped);
    }
}

/* The first candidate left out, and how many were. */
typedef struct left_out {
    int count;
    double point[PMNF_MAX_PARAMS];
    double ranks, dp, mp; /* the degrees NaN where unknown */
} left_out;

/* 1 when candidate i (of the grid at every combination) cannot be
 * allocated: its rank count is > 0 but it or one of its degrees is not a
 * whole number (counted into lo); a rank count not > 0 is kept (no_ranks). */
static int fractional(const configs_search_in *in, const configs_request *r, size_t ngrid, int i,
                      left_out *lo)
{
    double point[PMNF_MAX_PARAMS], dp = NAN, mp = NAN;
    const void *models = in->combos[i / (int)ngrid].models;
    cfg_grid_point(r->ranges, in->nparams, (size_t)i % ngrid, point);
    double ranks = in->ops->ranks(models, point);
    if (!(ranks > 0))
        return 0;
    if (in->ops->degrees && in->ops->degrees(models, point, &dp, &mp) < 0)
        dp = mp = NAN;
    if (rank_count_whole(ranks, dp, mp)) /* the rule of analysis/rank_count.h */
        return 0;
    if (lo->count++ == 0) {
        memcpy(lo->point, point, sizeof point);
        lo->ranks = ranks;
        lo->dp = dp;
        lo->mp = mp;
    }
    return 1;
}

/* "at ranks=10.125: data_parallel 10.125 × model_parallel 1 = 10.125 ranks" */
static void left_out_text(const configs_search_in *in, const left_out *lo, char *buf,
                          size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "at ");
    if (n < cap) {
        an_point_text(in->params, in->nparams, lo->point, 10, buf + n, cap - n);
        n += strlen(buf + n);
    }
    if (n + 2 >= cap)
        return;
    n += (size_t)snprintf(buf + n, cap - n, ": ");
    rank_count_text(lo->ranks, lo->dp, lo->mp, buf + n, cap - n);
}

/* The coded warning ranks_not_whole: how many candidates were left out, the first one. */
static json_t *left_out_warning(const configs_search_in *in, const left_out *lo)
{
    char at[300], text[600];
    left_out_text(in, lo, at, sizeof at);
    snprintf(text, sizeof text,
             "%d candidate%s left out: the rank count training.data_parallel × "
             "training.model_parallel (or one of its degrees) is not a whole number, which no "
             "scheduler can allocate (first %s); give candidate values with whole rank counts",
             lo->count, lo->count == 1 ? " was" : "s were", at);
    return json_pack("{s:s, s:s, s:i, s:o}", "code", CONFIGS_WARN_RANKS_NOT_WHOLE, "message",
                     text, "candidates", lo->count, "point", point_json(in, lo->point));
}

int configs_check_whole(const configs_search_in *in, const configs_request *r, an_problem *p)
{
    size_t ngrid = cfg_grid_size(r->ranges, in->nparams);
    int n = (int)(ngrid * (size_t)in->ncombos);
    left_out lo = {0};
    for (int i = 0; i < n; i++)
        if (!fractional(in, r, ngrid, i, &lo))
            return 0;
    if (n == 0)
        return 0;
    /* the field: the one parameter with fractional candidate values, if one */
    int which = -1, count = 0;
    for (int i = 0; i < in->nparams; i++) {
        int frac = 0;
        for (int k = 0; k < r->ranges[i].nvalues && !frac; k++)
            frac = !rank_count_is_whole(r->ranges[i].values[k]);
        if (frac && count++ == 0)
            which = i;
    }
    if (in->nparams == 1)
        which = 0, count = 1;
    char field[128], at[300];
    snprintf(field, sizeof field, count == 1 ? "candidates.%s" : "candidates",
             count == 1 ? in->params[which] : "");
    left_out_text(in, &lo, at, sizeof at);
    return an_problem_set(p, 400, field,
                          "no candidate can be allocated: at every one the rank count "
                          "training.data_parallel × training.model_parallel (or one of its "
                          "degrees) is not a whole number (%s); give values whose rank count is "
                          "whole",
                          at);
}

int configs_check_finite(const configs_search_in *in, const configs_request *r, an_problem *p)
{
    size_t ngrid = cfg_grid_size(r->ranges, in->nparams);
    int n = (int)(ngrid * (size_t)in->ncombos);
    left_out lo = {0};
    for (int i = 0; i < n; i++) {
        if (fractional(in, r, ngrid, i, &lo)) /* left out: never answered */
            continue;
        const void *models = in->combos[i / (int)ngrid].models;
        double point[PMNF_MAX_PARAMS];
        cfg_grid_point(r->ranges, in->nparams, (size_t)i % ngrid, point);
        double t = in->ops->epoch(models, point).value, ranks = in->ops->ranks(models, point);
        /* cost's rule (analysis/cost.h): the epoch time, its core-hours and
         * money, per epoch and for all the epochs */
        if (cost_check_finite(t, cost_core_hours(in->cost, t, ranks),
                              cost_money(in->cost, t, ranks, point), (double)r->epochs,
                              in->params, in->nparams, point, p) == 0)
            continue;
        /* it names the parameter whose value goes too far: here a candidate's */
        for (int k = 0; k < in->nparams; k++)
            if (!strcmp(p->field, in->params[k])) {
                char field[sizeof p->field];
                snprintf(field, sizeof field, "candidates.%s", in->params[k]);
                snprintf(p->field, sizeof p->field, "%s", field);
                break;
            }
        return -1;
    }
    return 0;
}

json_t *configs_search(const configs_search_in *in, const configs_request *r)
{
    size_t ngrid = cfg_grid_size(r->ranges, in->nparams);
    int n = (int)(ngrid * (size_t)in->ncombos);
    cfg_candidate *cand = calloc((size_t)(n ? n : 1), sizeof *cand);
    extra *ex = calloc((size_t)(n ? n : 1), sizeof *ex);
    int *order = malloc(sizeof *order * (size_t)(n ? n : 1));
    json_t *out = NULL;
    if (!cand || !ex || !order)
        goto done;
    int strong = !strcmp(in->scaling, "strong");
    /* the candidates that can be allocated, in grid order */
    left_out lo = {0};
    int all = n;
    n = 0;
    for (int i = 0; i < all; i++)
        if (!fractional(in, r, ngrid, i, &lo)) {
            evaluate(in, r, ngrid, strong, i, &ex[n], &cand[n]);
            n++;
        }
    cfg_check(&r->limits, cand, n);
    cfg_objective rule;
    int best = cfg_recommend(cand, n, r->objective, strong, &rule);
    int feasible = 0, robust = 0;
    for (int i = 0; i < n; i++) {
        feasible += cand[i].feasible;
        robust += cand[i].feasible_at_upper;
    }
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, candidate_json(in, &r->limits, &cand[i], &ex[i], 1));
    int np = cfg_pareto(cand, n, order);
    json_t *pareto = json_array();
    for (int i = 0; i < np; i++)
        json_array_append_new(pareto,
                              candidate_json(in, &r->limits, &cand[order[i]], &ex[order[i]], 0));
    char limits[200];
    limits_text(&r->limits, limits, sizeof limits);
    out = json_pack("{s:I, s:i, s:s, s:I, s:s, s:i, s:i, s:i, s:i, s:o}", "experiment",
                    (json_int_t)in->experiment, "model_set", in->set_number, "scaling",
                    in->scaling, "epochs", (json_int_t)r->epochs, "limits", limits, "searched", n,
                    "left_out", lo.count, "feasible", feasible, "feasible_at_upper", robust,
                    "candidates", list);
    if (!out) {
        json_decref(pareto);
        goto done;
    }
    recommendation(in, r, cand, ex, n, best, rule, feasible, robust, limits, order, out);
    json_object_set_new(out, "pareto", pareto);
    baselines(in, ex, out);
    json_object_set_new(out, "units",
                        json_pack("{s:s, s:s, s:s, s:s}", "time_s", "s (all epochs)",
                                  "core_hours", "core-h (all epochs)", "cost",
                                  "money (all epochs); null without a price", "efficiency",
                                  strong ? "(T_1·x_1)/(T_k·x_k), 1 = ideal"
                                         : "T_1/T_k, 1 = ideal"));
    if (lo.count) /* first among the answer's warnings: candidates it does not list */
        append_warning(out, left_out_warning(in, &lo));
    /* what the recommendation rests on: its models and its prediction */
    if (best >= 0) {
        in->ops->warnings(out, in->combos[ex[best].combo].models, ex[best].point, 1);
        json_t *cw = cost_money_warning(in->cost, ex[best].cost.value, cand[best].ranks);
        json_t *warns = json_object_get(out, "warnings");
        if (cw && !json_is_array(warns))
            json_object_set_new(out, "warnings", warns = json_array());
        if (cw)
            json_array_append_new(warns, cw); /* frees cw when warns is NULL */
    }
    else
        in->ops->warnings(out, in->combos[0].models, NULL, 1);
done:
    free(cand);
    free(ex);
    free(order);
    return out;
}
