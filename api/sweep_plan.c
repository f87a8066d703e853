/*
 * sweep_plan.c — POST /v1/experiments/{id}/sweep/plan: a sweep definition
 * (sweep/sweep_plan.h) against the uploads — every legal point × repetition
 * with its status, the commands of what still has to run, and the
 * core-hours of that part by the current models (see api/sweeps.c).
 */
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/json_buf.h"
#include "analysis/levels.h"
#include "api/predict.h"
#include "api/stats_warm.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"
#include "sweep/sweep_stats.h"
#include "api/sweeps_internal.h"

/* ---- POST /v1/experiments/{id}/sweep/plan --------------------------------------- */

/* The sweep's names against the experiment: every varied parameter is one
 * of its parameters, every parameter varied or constant; every varied
 * factor one of its factors with declared levels, every factor varied
 * (api/levels.h). map[i] = the sweep's source of experiment parameter i:
 * var index, or -1-k for constant k; fmap[k] = the var of the experiment's
 * k-th factor in name order (*nf of them). */
static int match_experiment(const sweep_def *d, const store_experiment *e, int *map, int *fmap,
                            int *nf, api_response *resp)
{
    const json_t *factors = json_object_get(e->spec, "factors");
    for (int v = 0; v < d->nvars; v++) {
        char field[160];
        if (d->vars[v].levels) {
            const json_t *decl = json_object_get(factors, d->vars[v].name);
            snprintf(field, sizeof field, "factors.%s", d->vars[v].name);
            if (!decl) {
                api_problem(resp, 400, field, "the experiment declares no factor \"%s\"",
                            d->vars[v].name);
                return -1;
            }
            for (int l = 0; l < d->vars[v].nvalues; l++) {
                int ok = 0;
                for (size_t k = 0; k < json_array_size(decl) && !ok; k++)
                    ok = !strcmp(json_string_value(json_array_get(decl, k)) ?: "",
                                 d->vars[v].levels[l]);
                if (!ok) {
                    char *list = json_dumps(decl, JSON_COMPACT);
                    snprintf(field, sizeof field, "factors.%s[%d]", d->vars[v].name, l);
                    api_problem(resp, 400, field, "\"%.64s\" is not a declared level of %s: %s",
                                d->vars[v].levels[l], d->vars[v].name, list ? list : "");
                    free(list);
                    return -1;
                }
            }
            continue;
        }
        int found = 0;
        for (int i = 0; i < e->nparams; i++)
            found |= !strcmp(e->parameters[i], d->vars[v].name);
        if (!found) {
            char names[300] = "";
            size_t used = 0;
            for (int i = 0; i < e->nparams && used < sizeof names; i++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                         e->parameters[i]);
            snprintf(field, sizeof field, "parameters.%s", d->vars[v].name);
            api_problem(resp, 400, field, "not a parameter of the experiment (its parameters: %s)",
                        names);
            return -1;
        }
    }
    for (int i = 0; i < e->nparams; i++) {
        map[i] = 0x7fffffff;
        for (int v = 0; v < d->nparams; v++)
            if (!strcmp(d->vars[v].name, e->parameters[i]))
                map[i] = v;
        for (int k = 0; k < d->nconst && map[i] == 0x7fffffff; k++)
            if (!strcmp(d->const_names[k], e->parameters[i]))
                map[i] = -1 - k;
        if (map[i] == 0x7fffffff) {
            api_problem(resp, 400, "parameters",
                        "parameter \"%s\" of the experiment is neither varied nor a constant",
                        e->parameters[i]);
            return -1;
        }
    }
    const char *names[LEVELS_MAX_FACTORS];
    *nf = (int)levels_names(e->spec, names);
    for (int k = 0; k < *nf; k++) {
        fmap[k] = -1;
        for (int v = d->nparams; v < d->nvars; v++)
            if (!strcmp(d->vars[v].name, names[k]))
                fmap[k] = v;
        if (fmap[k] < 0) {
            api_problem(resp, 400, "factors",
                        "factor \"%s\" of the experiment is not varied: name the levels to plan "
                        "(\"factors\":{\"%s\":[...]})",
                        names[k], names[k]);
            return -1;
        }
    }
    return 0;
}

static int cmp_run(const double *a, const double *b, int np)
{
    for (int i = 0; i < np; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* The stored run of point, repetition and levels (a JSON array text), or
 * NULL (runs ordered by point, repetition, levels). */
static const store_run *find_run(const store_run *runs, int n, int np, const double *point,
                                 int rep, const char *levels)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = cmp_run(runs[mid].point, point, np);
        if (!c)
            c = runs[mid].repetition < rep ? -1 : runs[mid].repetition > rep;
        if (!c)
            c = strcmp(runs[mid].levels, levels);
        if (!c)
            return &runs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

typedef struct plan_cost {
    const cached_models *m;
    int slot;
    double value, lo, hi;
    int runs, unpriced;
} plan_cost;

/* A run at point priced by models m (the experiment's, or its level
 * combination's; NULL: none). */
static void cost_add(plan_cost *c, const cached_models *m, const double *point, double epochs)
{
    c->runs++;
    int slot = m ? predict_metric_slot(m, "time") : -1;
    if (!c->m || c->slot < 0 || slot < 0) {
        c->unpriced++;
        return;
    }
    int composed;
    prediction t = predict_epoch(m->parts[slot], point, &composed);
    double ranks = cached_ranks(m, point);
    double k = epochs * ranks * m->cores_per_rank / 3600;
    if (!isfinite(t.value) || ranks <= 0) {
        c->unpriced++;
        return;
    }
    c->value += t.value * k;
    c->lo += t.lo * k;
    c->hi += t.hi * k;
}

static json_t *cost_json(const plan_cost *c, const sweep_def *d, const char *why)
{
    if (!c->m || c->slot < 0)
        return json_pack("{s:n, s:i, s:s}", "core_hours", "runs", c->runs, "reason", why);
    json_t *o = json_pack("{s:{s:f, s:o}, s:i, s:f, s:i, s:s}", "core_hours", "value", c->value,
                          "interval", sweeps_interval(c->lo, c->hi), "runs", c->runs, "epochs_per_run",
                          d->epochs_per_run, "model_set", c->m->set_number, "basis",
                          "per run: predicted epoch time × ranks × cores_per_rank / 3600 × "
                          "epochs_per_run; the interval sums the runs' bounds");
    if (c->unpriced)
        json_object_set_new(o, "unpriced_runs", json_integer(c->unpriced));
    return o;
}

static json_t *plan_point_json(const store_experiment *e, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; i < e->nparams; i++)
        json_object_set_new(o, e->parameters[i], json_real(point[i]));
    return o;
}

/* The models of each level combination a plan prices its runs by, looked
 * up once each (at most PLAN_LEVEL_MODELS; the runs of further
 * combinations are unpriced). */
#define PLAN_LEVEL_MODELS 64
typedef struct plan_levels {
    int n;
    char *text[PLAN_LEVEL_MODELS]; /* the combination's JSON array text */
    const cached_models *m[PLAN_LEVEL_MODELS];
} plan_levels;

static const cached_models *plan_levels_models(api_ctx *ctx, plan_levels *pl, int64_t exp,
                                               const char *text, const char *const *values,
                                               int nf)
{
    for (int i = 0; i < pl->n; i++)
        if (!strcmp(pl->text[i], text))
            return pl->m[i];
    if (pl->n == PLAN_LEVEL_MODELS)
        return NULL;
    char *literal = levels_literal(values, (size_t)nf);
    store_error err = {0};
    const cached_models *m =
        literal ? model_cache_get_levels(ctx->models, ctx->db, exp, literal, &err) : NULL;
    free(literal);
    pl->text[pl->n] = strdup(text);
    if (!pl->text[pl->n]) {
        if (m)
            model_cache_release(ctx->models, m);
        return NULL;
    }
    pl->m[pl->n++] = m;
    return m;
}

static void plan_levels_free(api_ctx *ctx, plan_levels *pl)
{
    for (int i = 0; i < pl->n; i++) {
        free(pl->text[i]);
        if (pl->m[i])
            model_cache_release(ctx->models, pl->m[i]);
    }
}

/* The JSON array text of the levels of point idx, in factor-name order
 * (fmap), as the store writes them ("[\"cpu\",\"fp16\"]"); values[k] the
 * k-th level. Levels need no escaping (api/levels.c). */
static void plan_levels_text(const sweep_def *d, const int *idx, const int *fmap, int nf,
                             char *buf, size_t cap, const char **values)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < nf && n < cap; k++) {
        values[k] = d->vars[fmap[k]].levels[idx[fmap[k]]];
        n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", k ? "," : "", values[k]);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

static void plan_answer(api_ctx *ctx, const sweep_def *d, const store_experiment *e,
                        const int *map, const int *fmap, int nf, const store_run *runs,
                        int nruns, long offset, long limit, api_response *resp)
{
    store_error err = {0};
    plan_cost cost = {0};
    plan_levels pl = {0};
    char why[300] = "", ltext[LEVELS_MAX_FACTORS * (LEVELS_MAX_TEXT + 3) + 3] = "[]";
    const char *lvalues[LEVELS_MAX_FACTORS];
    cost.m = model_cache_get(ctx->models, ctx->db, e->id, &err);
    /* with factors the runs are priced by their combination's models */
    cost.slot = cost.m ? nf ? 0 : predict_metric_slot(cost.m, "time") : -1;
    if (!cost.m)
        snprintf(why, sizeof why, "%s", err.msg);
    else if (cost.slot < 0)
        snprintf(why, sizeof why, "model set %d has no time models", cost.m->set_number);
    int idx[SWEEP_MAX_VARS], np = e->nparams;
    double point[PMNF_MAX_PARAMS];
    long legal = 0, counts[3] = {0, 0, 0}, run_no = 0;
    static const char *const status_names[3] = {"measured", "missing", "failed"};
    json_t *items = json_array(), *commands = json_array();
    size_t cap = 8192;
    char *cmd = malloc(cap);
    sweep_def_first(d, idx);
    do {
        if (!sweep_def_legal(d, idx))
            continue;
        legal++;
        for (int i = 0; i < np; i++)
            point[i] = map[i] >= 0 ? d->vars[map[i]].values[idx[map[i]]]
                                   : d->const_values[-1 - map[i]];
        if (nf)
            plan_levels_text(d, idx, fmap, nf, ltext, sizeof ltext, lvalues);
        const cached_models *lm = NULL;
        int lm_known = !nf;
        for (int rep = 1; rep <= d->repetitions; rep++) {
            const store_run *r = find_run(runs, nruns, np, point, rep, ltext);
            int st = r && r->ok ? 0 : r && r->failed ? 2 : 1;
            counts[st]++;
            /* every run is counted and priced; only the page's are listed */
            int listed = run_no >= offset && run_no < offset + limit;
            run_no++;
            if (!listed) {
                if (st != 0) {
                    if (!lm_known && cost.m) {
                        lm = plan_levels_models(ctx, &pl, e->id, ltext, lvalues, nf);
                        lm_known = 1;
                    }
                    cost_add(&cost, nf ? lm : cost.m, point, d->epochs_per_run);
                }
                continue;
            }
            json_t *o = json_pack("{s:o, s:i, s:s}", "point", plan_point_json(e, point),
                                  "repetition", rep, "status", status_names[st]);
            if (d->nvars > d->nparams) {
                json_t *lv = json_object();
                for (int v = d->nparams; v < d->nvars; v++)
                    json_object_set_new(lv, d->vars[v].name,
                                        json_string(d->vars[v].levels[idx[v]]));
                json_object_set_new(o, "levels", lv);
            }
            if (st != 0) {
                if (cmd && sweep_def_command(d, idx, rep, cmd, cap) >= 0) {
                    json_object_set_new(o, "command", json_string(cmd));
                    json_array_append_new(commands, json_string(cmd));
                }
                if (!lm_known && cost.m) {
                    lm = plan_levels_models(ctx, &pl, e->id, ltext, lvalues, nf);
                    lm_known = 1;
                }
                cost_add(&cost, nf ? lm : cost.m, point, d->epochs_per_run);
            }
            json_array_append_new(items, o);
        }
    } while (sweep_def_next(d, idx));
    free(cmd);
    json_t *doc = json_pack(
        "{s:I, s:{s:I, s:I, s:I}, s:i, s:I, s:I, s:I, s:I, s:b, s:o, s:o, s:o}", "experiment",
        (json_int_t)e->id, "points", "product", (json_int_t)d->product, "legal",
        (json_int_t)legal, "illegal", (json_int_t)(d->product - legal), "repetitions",
        d->repetitions, "runs", (json_int_t)(legal * d->repetitions), "measured",
        (json_int_t)counts[0], "missing", (json_int_t)counts[1], "failed", (json_int_t)counts[2],
        "complete", counts[1] + counts[2] == 0, "items", items, "commands", commands,
        "missing_cost", cost_json(&cost, d, why));
    json_object_set_new(doc, "offset", json_integer(offset));
    json_object_set_new(doc, "next_offset", offset + limit < run_no ? json_integer(offset + limit)
                                                                    : json_null());
    if (nf && cost.m && cost.unpriced)
        json_object_set_new(json_object_get(doc, "missing_cost"), "reason",
                            json_string("runs of level combinations without a model of the "
                                        "epoch time are unpriced"));
    if (cost.m)
        model_cache_release(ctx->models, cost.m);
    plan_levels_free(ctx, &pl);
    api_send_json(resp, 200, doc);
}

void api_sweep_plan(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    json_t *body = NULL;
    store_experiment e = {0};
    sweep_def d;
    memset(&d, 0, sizeof d);
    store_run *runs = NULL;
    int nruns = 0, map[PMNF_MAX_PARAMS], fmap[LEVELS_MAX_FACTORS], nf = 0;
    long limit, offset;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0 ||
        predict_query_long(req, resp, "limit", 1, PLAN_PAGE_MAX, PLAN_PAGE_DEFAULT, &limit) < 0 ||
        predict_query_long(req, resp, "offset", 0, PLAN_RUNS_MAX, 0, &offset) < 0 ||
        api_parse_object(req, resp, &body) < 0)
        return;
    char field[200], msg[400];
    if (sweep_def_parse(body, &d, field, sizeof field, msg, sizeof msg) < 0) {
        api_problem(resp, 400, *field ? field : NULL, "%s", msg);
        goto done;
    }
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_experiment_get(c, id, &e, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        goto done;
    }
    if (match_experiment(&d, &e, map, fmap, &nf, resp) < 0) {
        store_release(ctx->db, c);
        goto done;
    }
    /* legal points × repetitions, before anything is read */
    long legal = sweep_def_legal_points(&d);
    if (legal * d.repetitions > PLAN_RUNS_MAX) {
        store_release(ctx->db, c);
        api_problem(resp, 400, "repetitions",
                    "%ld legal points × %d repetitions is more than %d runs", legal,
                    d.repetitions, PLAN_RUNS_MAX);
        goto done;
    }
    int rc = store_runs_read(c, id, e.nparams, &runs, &nruns, &err);
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    plan_answer(ctx, &d, &e, map, fmap, nf, runs, nruns, offset, limit, resp);
done:
    store_runs_free(runs, nruns);
    sweep_def_free(&d);
    store_experiment_free(&e);
    json_decref(body);
    malloc_trim(0); /* the page's document and the runs read go back to the system */
}
