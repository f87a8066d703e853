/*
 * configurations.c — POST /v1/experiments/{id}/configurations (Q5): which
 * configuration to request under a deadline and a budget (Extra-Deep §3.3).
 *
 *   {"max_time_s":36000, "max_core_hours":10000, "max_cost":500, "epochs":90,
 *    "candidates":{"ranks":{"min":2,"max":1024,"step":2}},   (or "factor":2,
 *                                                             or {"values":[..]})
 *    "objective":"cheapest|fastest|efficient"}               (optional)
 *
 * Every candidate of the product of the ranges (at most 10,000) gets its
 * predicted time, core-hours and cost for all the epochs (95% intervals),
 * its parallel efficiency relative to P_1 of its series along x_1 (the
 * first measured point at its values of the other parameters) and the
 * efficiency model ε(x) there (efficiency_pct_model), and its
 * feasibility (every limit given is met by the prediction). The
 * recommendation: the stated objective, else for weak scaling the smallest
 * feasible allocation (cheapest and most efficient there, §3.3) and for
 * strong scaling the highest parallel efficiency inside the feasible set,
 * read from the ε model when there is one (Extra-Deep Fig. 4b), else from
 * the predicted times.
 * The time/cost Pareto front is over all candidates. When nothing is
 * feasible, "recommended" is null and "nothing_feasible" says why and lists
 * the closest candidates (smallest largest ratio of value to limit).
 *
 * An experiment with categorical factors (api/levels.h): the query may pin
 * a factor's level (?dataloader=dali). The search covers every level
 * combination with a fitted model of the epoch time that agrees with the
 * pinned levels, each with its own models, series and baseline; every
 * candidate names its "levels", and the recommendation, the Pareto front and
 * the closest candidates are over all of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analysis_data.h"
#include "analysis/cost.h"
#include "api/handlers.h"
#include "analysis/levels.h"
#include "api/levels_query.h"
#include "api/predict.h"
#include "modeling/configs.h"
#include "modeling/scaling.h"
#include "store/model_levels.h"
#include "common/jsonb.h"

#define MAX_CANDIDATES 10000
#define CLOSEST 5

typedef struct request {
    cfg_limits limits;
    long epochs;
    cfg_objective objective;
    cfg_range ranges[PMNF_MAX_PARAMS];
    double *values[PMNF_MAX_PARAMS];
} request;

static void request_free(request *r)
{
    for (int i = 0; i < PMNF_MAX_PARAMS; i++)
        free(r->values[i]);
}

static int limit_field(const json_t *doc, const char *key, double *out, api_response *resp)
{
    const json_t *v = json_object_get(doc, key);
    *out = INFINITY;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v))) {
        api_problem(resp, 400, key, "must be a number > 0");
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

/* One parameter's candidate values: {"values":[..]} or {"min","max","step"|"factor"}. */
static int range_field(const json_t *spec, const char *param, request *r, int i,
                       api_response *resp)
{
    char field[128];
    snprintf(field, sizeof field, "candidates.%s", param);
    if (!json_is_object(spec)) {
        api_problem(resp, 400, field, "must be {\"min\",\"max\",\"step\"} or {\"values\":[...]}");
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)spec, key, v)
    {
        if (strcmp(key, "values") && strcmp(key, "min") && strcmp(key, "max") &&
            strcmp(key, "step") && strcmp(key, "factor")) {
            snprintf(field, sizeof field, "candidates.%s.%s", param, key);
            api_problem(resp, 400, field, "unknown field");
            return -1;
        }
    }
    const json_t *values = json_object_get(spec, "values");
    if (values) {
        size_t n = json_array_size(values);
        if (!json_is_array(values) || n == 0 || n > MAX_CANDIDATES ||
            json_object_size(spec) != 1) {
            api_problem(resp, 400, field, "values must be a non-empty array of at most %d "
                                          "numbers, alone",
                        MAX_CANDIDATES);
            return -1;
        }
        r->values[i] = malloc(sizeof(double) * n);
        for (size_t k = 0; r->values[i] && k < n; k++) {
            double x = json_number_value(json_array_get(values, k));
            if (!json_is_number(json_array_get(values, k)) || !(x > 0) || !isfinite(x)) {
                snprintf(field, sizeof field, "candidates.%s.values[%zu]", param, k);
                api_problem(resp, 400, field, "must be a number > 0");
                return -1;
            }
            r->values[i][k] = x;
        }
        r->ranges[i] = (cfg_range){(int)n, r->values[i]};
        return r->values[i] ? 0 : -1;
    }
    const json_t *jmin = json_object_get(spec, "min"), *jmax = json_object_get(spec, "max");
    const json_t *jstep = json_object_get(spec, "step"), *jfac = json_object_get(spec, "factor");
    double lo = json_number_value(jmin), hi = json_number_value(jmax);
    double step = jstep ? json_number_value(jstep) : 1, factor = json_number_value(jfac);
    if (!json_is_number(jmin) || !(lo > 0) || !json_is_number(jmax) || !(hi >= lo) ||
        !isfinite(hi)) {
        api_problem(resp, 400, field, "min must be a number > 0 and max a number >= min");
        return -1;
    }
    if (jstep && jfac) {
        api_problem(resp, 400, field, "give step or factor, not both");
        return -1;
    }
    if ((jstep && (!json_is_number(jstep) || !(step > 0))) ||
        (jfac && (!json_is_number(jfac) || !(factor > 1)))) {
        api_problem(resp, 400, field, "step must be a number > 0, factor a number > 1");
        return -1;
    }
    double count = jfac ? floor(log(hi / lo) / log(factor) + 1e-9) + 1
                        : floor((hi - lo) / step + 1e-9) + 1;
    if (count > MAX_CANDIDATES) {
        api_problem(resp, 400, field, "gives %.0f values; at most %d candidates in all", count,
                    MAX_CANDIDATES);
        return -1;
    }
    int n = (int)count;
    r->values[i] = malloc(sizeof(double) * (size_t)n);
    if (!r->values[i])
        return -1;
    for (int k = 0; k < n; k++)
        r->values[i][k] = jfac ? lo * pow(factor, k) : lo + k * step;
    r->ranges[i] = (cfg_range){n, r->values[i]};
    return 0;
}

static int parse_request(const json_t *doc, const cached_models *m, request *r,
                         api_response *resp)
{
    static const char *const keys[] = {"max_time_s", "max_core_hours", "max_cost", "epochs",
                                       "candidates", "objective", NULL};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v)
    {
        int ok = 0;
        for (int i = 0; keys[i] && !ok; i++)
            ok = !strcmp(keys[i], key);
        if (!ok) {
            api_problem(resp, 400, key, "unknown field");
            return -1;
        }
    }
    if (limit_field(doc, "max_time_s", &r->limits.max_time, resp) < 0 ||
        limit_field(doc, "max_core_hours", &r->limits.max_core_hours, resp) < 0 ||
        limit_field(doc, "max_cost", &r->limits.max_cost, resp) < 0)
        return -1;
    if (!isinf(r->limits.max_cost) && !m->has_cost && !m->formula[0]) {
        api_problem(resp, 400, "max_cost", "the experiment has no price (cost set-up) to compute "
                                           "money with; use max_core_hours");
        return -1;
    }
    const json_t *ep = json_object_get(doc, "epochs");
    r->epochs = 1;
    if (ep && (!json_is_integer(ep) || json_integer_value(ep) < 1 ||
               json_integer_value(ep) > 1000000000)) {
        api_problem(resp, 400, "epochs", "must be an integer from 1 to 1000000000");
        return -1;
    }
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
        else {
            api_problem(resp, 400, "objective", "must be \"cheapest\", \"fastest\" or "
                                                "\"efficient\"");
            return -1;
        }
    }
    const json_t *cands = json_object_get(doc, "candidates");
    if (!json_is_object(cands)) {
        api_problem(resp, 400, "candidates", "is required: an object with the candidate values "
                                             "of every parameter");
        return -1;
    }
    json_object_foreach((json_t *)cands, key, v)
    {
        int known = 0;
        for (int i = 0; i < m->nparams && !known; i++)
            known = !strcmp(key, m->params[i]);
        if (!known) {
            char field[128];
            snprintf(field, sizeof field, "candidates.%.64s", key);
            api_problem(resp, 400, field, "not a parameter of this experiment");
            return -1;
        }
    }
    for (int i = 0; i < m->nparams; i++) {
        const json_t *spec = json_object_get(cands, m->params[i]);
        if (!spec) {
            char field[128];
            snprintf(field, sizeof field, "candidates.%s", m->params[i]);
            api_problem(resp, 400, field, "missing: every parameter needs candidate values");
            return -1;
        }
        if (range_field(spec, m->params[i], r, i, resp) < 0) {
            if (resp->status == 0)
                api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
    }
    size_t total = cfg_grid_size(r->ranges, m->nparams);
    if (total > MAX_CANDIDATES) {
        api_problem(resp, 400, "candidates",
                    "the product of the ranges has %.0f points; at most %d are searched",
                    (double)total, MAX_CANDIDATES);
        return -1;
    }
    return 0;
}

typedef struct extra {
    int combo; /* index into the level combinations searched */
    double point[PMNF_MAX_PARAMS];
    prediction time, core_hours, cost;
    int beyond;
    double efficiency;     /* the ratio shown, relative to the series' P_1 */
    double efficiency_pct; /* Extra-Deep's ε model at the point (NaN without one) */
} extra;

/* One level combination searched: its models and measured data. */
typedef struct combo {
    const cached_models *m;
    const cache_blob *ref;
    const ad_app *app;
    const cached_part *parts;
    int owned;      /* m is the combination's reference to release */
    json_t *levels; /* {"dataloader":"dali",...}; NULL without factors */
} combo;

static json_t *candidate_json(const cached_models *m, const combo *cb, const cfg_candidate *c,
                              const extra *x, int full)
{
    json_t *o = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b}", "point",
                          predict_point_json(m, x->point), "ranks", predict_number(c->ranks),
                          "time_s", predict_number(c->time), "core_hours",
                          predict_number(c->core_hours), "cost", predict_number(c->cost),
                          "efficiency", predict_number(x->efficiency), "feasible", c->feasible);
    if (o && cb[x->combo].levels)
        json_object_set(o, "levels", cb[x->combo].levels);
    if (!full || !o)
        return o;
    json_object_set_new(o, "efficiency_pct_model", predict_number(x->efficiency_pct));
    json_t *iv = json_object();
    const prediction *p[3] = {&x->time, &x->core_hours, &x->cost};
    static const char *const names[3] = {"time_s", "core_hours", "cost"};
    for (int i = 0; i < 3; i++)
        json_object_set_new(iv, names[i],
                            p[i]->has_interval && isfinite(p[i]->lo) && isfinite(p[i]->hi)
                                ? json_pack("[f, f]", p[i]->lo, p[i]->hi)
                                : json_null());
    json_object_set_new(o, "interval", iv);
    json_object_set_new(o, "beyond_4x", json_boolean(x->beyond));
    predict_point_warnings_at(o, cb[x->combo].m, -1, x->point);
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

/* The time models' parts when the epoch time can be predicted from them, else NULL. */
static const cached_part *time_parts(const cached_models *m)
{
    int slot = predict_metric_slot(m, "time");
    const cached_part *parts = slot >= 0 ? m->parts[slot] : NULL;
    if (!parts || (!(parts[0].present && parts[1].present && parts[2].present) &&
                   !parts[3].present))
        return NULL;
    return parts;
}

static void combos_free(api_ctx *ctx, combo *cb, int n)
{
    for (int i = 0; cb && i < n; i++) {
        model_cache_blob_release(ctx->models, cb[i].ref);
        if (cb[i].m && cb[i].owned)
            model_cache_release(ctx->models, cb[i].m);
        json_decref(cb[i].levels);
    }
    free(cb);
}

/* Adds the combination of levels ({"factor":"level",...}, taken; NULL
 * without factors) with models m (a reference the combination takes when
 * owned). Returns 1 when added, 0 when it has no model of the epoch time
 * (m released when owned; its levels appended to skipped), -1 after
 * answering. */
static int combo_add(api_ctx *ctx, api_response *resp, combo *cb, int *n,
                     const cached_models *m, int owned, json_t *levels, json_t *skipped)
{
    combo *c = &cb[*n];
    *c = (combo){.m = m, .owned = owned, .levels = levels};
    c->parts = time_parts(m);
    if (!c->parts) {
        if (skipped && levels)
            json_array_append(skipped, levels);
        if (owned)
            model_cache_release(ctx->models, m);
        json_decref(levels);
        *c = (combo){0};
        return 0;
    }
    (*n)++;
    store_error err = {0};
    c->app = ad_app_get(ctx, m, predict_metric_slot(m, "time"), &c->ref, &err);
    if (!c->app) {
        api_store_problem(resp, &err);
        return -1;
    }
    return 1;
}

/* The level combinations to search of an experiment with factors (base:
 * its models without levels): the one the query names when it pins every
 * factor, else every combination with models that agrees with the pinned
 * levels. 0, or -1 after answering. */
static int combos_of_levels(api_ctx *ctx, const api_request *req, api_response *resp,
                            const cached_models *base, combo **out, int *nout, json_t *skipped)
{
    json_t *spec = jsonb_parse(base->factors_spec, 0);
    const char *names[LEVELS_MAX_FACTORS], *pins[LEVELS_MAX_FACTORS];
    char **found = NULL;
    int nfound = 0, rc = -1;
    combo *cb = NULL;
    int n = 0;
    if (!spec) {
        api_problem(resp, 500, NULL, "out of memory");
        return -1;
    }
    size_t nf = levels_names(spec, names);
    int pinned = levels_pins_from_query(spec, req, resp, pins);
    if (pinned < 0)
        goto done;
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_model_levels_read(c, base->set_id, &found, &nfound, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    cb = calloc((size_t)(nfound ? nfound : 1), sizeof *cb);
    if (!cb) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int all_pinned = 1;
    for (size_t i = 0; i < nf; i++)
        all_pinned &= pins[i] != NULL;
    for (int k = 0; k < nfound; k++) {
        json_t *levels = levels_object(names, nf, found[k]);
        int agrees = levels != NULL;
        for (size_t i = 0; agrees && i < nf; i++)
            agrees = !pins[i] ||
                     !strcmp(pins[i], json_string_value(json_object_get(levels, names[i])));
        if (!agrees) {
            json_decref(levels);
            continue;
        }
        const char *values[LEVELS_MAX_FACTORS];
        for (size_t i = 0; i < nf; i++)
            values[i] = json_string_value(json_object_get(levels, names[i]));
        char *literal = levels_literal(values, nf);
        const cached_models *m =
            literal ? model_cache_get_levels(ctx->models, ctx->db, base->experiment, literal,
                                             &err)
                    : NULL;
        free(literal);
        if (!m) {
            json_decref(levels);
            if (err.code)
                api_store_problem(resp, &err);
            else
                api_problem(resp, 500, NULL, "out of memory");
            goto done;
        }
        if (combo_add(ctx, resp, cb, &n, m, 1, levels, skipped) < 0)
            goto done;
    }
    if (n == 0) {
        api_problem(resp, 409, all_pinned ? NULL : "levels",
                    all_pinned ? "model set %d has no model of the epoch time (metric time) "
                                 "at these levels"
                               : "model set %d has no model of the epoch time (metric time) "
                                 "at any level combination the query allows",
                    base->set_number);
        goto done;
    }
    rc = 0;
done:
    store_model_levels_free(found, nfound);
    json_decref(spec);
    if (rc < 0) {
        combos_free(ctx, cb, n);
        cb = NULL;
        n = 0;
    }
    *out = cb;
    *nout = n;
    return rc;
}

void api_configurations(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0)
        return;
    store_error err = {0};
    const cached_models *m = model_cache_get(ctx->models, ctx->db, id, &err);
    if (!m) {
        api_store_problem(resp, &err);
        return;
    }
    /* the query names only the experiment's factors (their levels) */
    if (predict_check_query(req, resp, m, NULL, 0) < 0) {
        model_cache_release(ctx->models, m);
        return;
    }
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp)) {
        model_cache_release(ctx->models, m);
        return;
    }
    json_t *doc = NULL;
    request r;
    memset(&r, 0, sizeof r);
    cost_eval ce = {0};
    cfg_candidate *cand = NULL;
    extra *ex = NULL;
    int *order = NULL;
    combo *cb = NULL;
    int ncb = 0;
    int factors = m->factors_spec[0] != '\0';
    json_t *skipped = factors ? json_array() : NULL;
    if (api_parse_object(req, resp, &doc) < 0 || parse_request(doc, m, &r, resp) < 0)
        goto done;
    if (!factors) {
        cb = calloc(1, sizeof *cb);
        if (!cb) {
            api_problem(resp, 500, NULL, "out of memory");
            goto done;
        }
        int added = combo_add(ctx, resp, cb, &ncb, m, 0, NULL, NULL);
        if (added == 0)
            api_problem(resp, 409, NULL,
                        "model set %d has no model of the epoch time (metric time)",
                        m->set_number);
        if (added <= 0)
            goto done;
    } else if (combos_of_levels(ctx, req, resp, m, &cb, &ncb, skipped) < 0)
        goto done;
    char why[256];
    const char *cost_names[PMNF_MAX_PARAMS];
    cost_setup cs;
    cached_cost_setup(m, cost_names, &cs);
    if (cost_open(&ce, &cs, why, sizeof why) < 0) {
        api_problem(resp, 409, "cost.formula", "the experiment's formula does not compile: %s",
                    why);
        goto done;
    }
    size_t ngrid = cfg_grid_size(r.ranges, m->nparams);
    if (ngrid * (size_t)ncb > MAX_CANDIDATES) {
        api_problem(resp, 400, "candidates",
                    "the product of the ranges has %zu points at each of %d level combinations; "
                    "at most %d candidates are searched (pin a factor's level in the query)",
                    ngrid, ncb, MAX_CANDIDATES);
        goto done;
    }
    int n = (int)(ngrid * (size_t)ncb);
    cand = calloc((size_t)n, sizeof *cand);
    ex = calloc((size_t)n, sizeof *ex);
    order = malloc(sizeof *order * (size_t)n);
    if (!cand || !ex || !order) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int strong = !strcmp(m->scaling, "strong");
    double k = (double)r.epochs;
    for (int i = 0; i < n; i++) {
        extra *x = &ex[i];
        x->combo = i / (int)ngrid;
        const combo *c = &cb[x->combo];
        const ad_app *app = c->app;
        double t1 = app->npoints ? app->value[AD_GROUPS - 1][app->baseline] : NAN;
        double x1 = app->npoints ? app->ranks[app->baseline] : NAN;
        /* strong scaling chooses by the ε model (Extra-Deep Fig. 4b) when there is one */
        int by_model = strong && app->efficiency.present;
        cfg_grid_point(r.ranges, m->nparams, (size_t)i % ngrid, x->point);
        int composed;
        prediction t = predict_epoch(c->parts, x->point, &composed);
        double ranks = cached_ranks(c->m, x->point);
        x->time = (prediction){t.value * k, t.lo * k, t.hi * k, t.has_interval};
        x->core_hours = (prediction){cost_core_hours(&ce, t.value, ranks) * k,
                                     cost_core_hours(&ce, t.lo, ranks) * k,
                                     cost_core_hours(&ce, t.hi, ranks) * k, t.has_interval};
        double c0 = cost_money(&ce, t.value, ranks, x->point) * k,
               c1 = cost_money(&ce, t.lo, ranks, x->point) * k,
               c2 = cost_money(&ce, t.hi, ranks, x->point) * k;
        x->cost = (prediction){c0, c1 < c2 ? c1 : c2, c1 < c2 ? c2 : c1, t.has_interval};
        x->beyond = predict_beyond(c->m, x->point);
        /* relative to P_1 of the candidate's series along x_1 */
        int b = scl_series_baseline(app->coords, app->npoints, m->nparams, x->point,
                                    app->value[AD_GROUPS - 1]);
        double bt = b >= 0 ? app->value[AD_GROUPS - 1][b] : t1,
               bx = b >= 0 ? app->ranks[b] : x1;
        x->efficiency = scl_efficiency(bt, t.value, bx, ranks, strong);
        x->efficiency_pct = NAN;
        if (app->efficiency.present)
            x->efficiency_pct = pmnf_model_eval(&app->efficiency.model, x->point);
        cand[i] = (cfg_candidate){.ranks = ranks,
                                  .time = x->time.value,
                                  .core_hours = x->core_hours.value,
                                  .cost = isfinite(c0) ? c0 : NAN,
                                  .efficiency = by_model ? x->efficiency_pct / 100
                                                         : x->efficiency,
                                  .valid = isfinite(t.value) && t.value > 0 && ranks > 0};
    }
    cfg_check(&r.limits, cand, n);
    cfg_objective rule;
    int best = cfg_recommend(cand, n, r.objective, strong, &rule);
    int feasible = 0;
    for (int i = 0; i < n; i++)
        feasible += cand[i].feasible;
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, candidate_json(m, cb, &cand[i], &ex[i], 1));
    int np = cfg_pareto(cand, n, order);
    json_t *pareto = json_array();
    for (int i = 0; i < np; i++)
        json_array_append_new(pareto, candidate_json(m, cb, &cand[order[i]], &ex[order[i]], 0));
    char limits[200];
    limits_text(&r.limits, limits, sizeof limits);
    json_t *out = json_pack("{s:I, s:i, s:s, s:I, s:s, s:i, s:i, s:o}", "experiment",
                            (json_int_t)id, "model_set", m->set_number, "scaling", m->scaling,
                            "epochs", (json_int_t)r.epochs, "limits", limits, "searched", n,
                            "feasible", feasible, "candidates", list);
    if (best >= 0) {
        json_t *rec = candidate_json(m, cb, &cand[best], &ex[best], 1);
        char reason[400];
        snprintf(reason, sizeof reason, "%s (%d of %d candidates meet %s)",
                 rule_text(rule, r.objective != CFG_AUTO), feasible, n, limits);
        json_object_set_new(rec, "reason", json_string(reason));
        json_object_set_new(out, "recommended", rec);
        json_object_set_new(out, "nothing_feasible", json_null());
    } else {
        int nc = cfg_closest(cand, n, CLOSEST, order);
        json_t *closest = json_array();
        for (int i = 0; i < nc; i++) {
            json_t *c = candidate_json(m, cb, &cand[order[i]], &ex[order[i]], 1);
            json_object_set_new(c, "violation", predict_number(cand[order[i]].violation));
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
    json_object_set_new(out, "pareto", pareto);
    json_t *baselines = factors ? json_array() : NULL;
    for (int c = 0; c < ncb; c++) {
        const ad_app *app = cb[c].app;
        double t1 = app->npoints ? app->value[AD_GROUPS - 1][app->baseline] : NAN;
        double x1 = app->npoints ? app->ranks[app->baseline] : NAN;
        json_t *b = json_pack("{s:o, s:o, s:o}", "point",
                              predict_point_json(m, app->npoints ? app->coords : ex[0].point),
                              "ranks", predict_number(x1), "time_s", predict_number(t1));
        if (cb[c].levels)
            json_object_set(b, "levels", cb[c].levels);
        if (c == 0)
            json_object_set(out, "baseline", b);
        if (baselines)
            json_array_append(baselines, b);
        json_decref(b);
    }
    if (factors) {
        /* per level combination searched: its series' baseline; and the
         * combinations the query allows that have no model of the epoch time */
        json_object_set_new(out, "level_combinations", baselines);
        json_object_set(out, "skipped_levels", skipped);
    }
    json_object_set_new(out, "units",
                        json_pack("{s:s, s:s, s:s, s:s}", "time_s", "s (all epochs)",
                                  "core_hours", "core-h (all epochs)", "cost",
                                  "money (all epochs); null without a price", "efficiency",
                                  strong ? "(T_1·x_1)/(T_k·x_k), 1 = ideal"
                                         : "T_1/T_k, 1 = ideal"));
    /* what the recommendation rests on: its models and its prediction */
    if (best >= 0)
        predict_warnings_at(out, cb[ex[best].combo].m, -1, ex[best].point);
    else
        predict_warnings_at(out, cb[0].m, -1, NULL);
    predict_page_store(ctx, key, resp, out);
done:
    json_decref(doc);
    json_decref(skipped);
    free(cand);
    free(ex);
    free(order);
    cost_close(&ce);
    request_free(&r);
    combos_free(ctx, cb, ncb);
    model_cache_release(ctx->models, m);
}
