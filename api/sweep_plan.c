/*
 * sweep_plan.c — POST /v1/experiments/{id}/sweep/plan: a sweep definition
 * (sweep/sweep_plan.h) against the uploads — every legal point × repetition
 * with its status, the commands of what still has to run, and the
 * core-hours of that part by the current models (analysis/plan.h); this
 * handler reads the experiment and its runs and prices runs by the models
 * of the model cache (see api/sweeps.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/plan.h"
#include "api/predict.h"
#include "store/experiments.h"
#include "store/sweeps.h"
#include "sweep/sweep_plan.h"
#include "api/sweeps_internal.h"

/* ---- POST /v1/experiments/{id}/sweep/plan --------------------------------------- */

/* Stored runs read (about 200 bytes each, 19 MB for 98,304) past which the
 * request's memory is given back to the system after its answer, small as
 * the page may be (api_response.trim_after); a page over 1 MiB always is. */
#define PLAN_TRIM_RUNS 10000

/* The models of each level combination a plan prices its runs by, looked
 * up once each (at most PLAN_LEVEL_MODELS; the runs of further
 * combinations are unpriced). */
#define PLAN_LEVEL_MODELS 64
typedef struct plan_models {
    api_ctx *ctx;
    int64_t experiment;
    const cached_models *base; /* the experiment's newest models, or NULL */
    int n;
    char *text[PLAN_LEVEL_MODELS]; /* the combination's JSON array text */
    const cached_models *m[PLAN_LEVEL_MODELS];
} plan_models;

static const cached_models *levels_models(plan_models *pm, const char *text,
                                          const char *const *values, int nf)
{
    for (int i = 0; i < pm->n; i++)
        if (!strcmp(pm->text[i], text))
            return pm->m[i];
    if (pm->n == PLAN_LEVEL_MODELS)
        return NULL;
    char *literal = levels_literal(values, (size_t)nf);
    store_error err = {0};
    const cached_models *m =
        literal ? model_cache_get_levels(pm->ctx->models, pm->ctx->db, pm->experiment, literal,
                                         &err)
                : NULL;
    free(literal);
    pm->text[pm->n] = strdup(text);
    if (!pm->text[pm->n]) {
        if (m)
            model_cache_release(pm->ctx->models, m);
        return NULL;
    }
    pm->m[pm->n++] = m;
    return m;
}

static void plan_models_free(plan_models *pm)
{
    for (int i = 0; i < pm->n; i++) {
        free(pm->text[i]);
        if (pm->m[i])
            model_cache_release(pm->ctx->models, pm->m[i]);
    }
    if (pm->base)
        model_cache_release(pm->ctx->models, pm->base);
}

/* plan_pricing.epoch: the experiment's models, or with factors those of the
 * run's level combination */
static int epoch_at(void *arg, const double *point, const char *levels,
                    const char *const *values, int nf, double t[3], double *ranks,
                    double *cores_per_rank)
{
    plan_models *pm = arg;
    const cached_models *m = nf ? levels_models(pm, levels, values, nf) : pm->base;
    int slot = m ? predict_metric_slot(m, "time") : -1;
    if (slot < 0)
        return -1;
    int composed;
    prediction p = predict_epoch(m->parts[slot], point, &composed);
    t[0] = p.value;
    t[1] = p.lo;
    t[2] = p.hi;
    *ranks = cached_ranks(m, point);
    *cores_per_rank = m->cores_per_rank;
    return 0;
}

/* The answer of d (matched by map) against the stored runs, priced by the
 * newest models. */
static void plan_send(api_ctx *ctx, const sweep_def *d, const store_experiment *e,
                      const plan_map *map, const store_run *runs, int nruns, long offset,
                      long limit, api_response *resp)
{
    store_error err = {0};
    plan_models pm = {.ctx = ctx, .experiment = e->id};
    char why[300] = "";
    pm.base = model_cache_get(ctx->models, ctx->db, e->id, &err);
    /* with factors the runs are priced by their combination's models */
    int slot = pm.base ? map->nfactors ? 0 : predict_metric_slot(pm.base, "time") : -1;
    if (!pm.base)
        snprintf(why, sizeof why, "%s", err.msg);
    else if (slot < 0)
        snprintf(why, sizeof why, "model set %d has no time models", pm.base->set_number);
    plan_pricing pricing = {pm.base != NULL, slot >= 0, pm.base ? pm.base->set_number : 0, why,
                            epoch_at, &pm};
    json_t *doc = plan_answer(d, e->id, (const char *const *)e->parameters, e->nparams, map,
                              runs, nruns, offset, limit, &pricing);
    plan_models_free(&pm);
    if (!doc)
        api_problem(resp, 500, NULL, "out of memory");
    else
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
    int nruns = 0;
    plan_map map;
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
    an_problem p;
    if (plan_match(&d, (const char *const *)e.parameters, e.nparams, e.spec, &map, &p) < 0) {
        store_release(ctx->db, c);
        api_problem(resp, p.status, p.field, "%s", p.msg);
        goto done;
    }
    /* legal points × repetitions, before anything is read */
    long legal;
    if (sweep_def_runs_check(&d, &legal, msg, sizeof msg) < 0) {
        store_release(ctx->db, c);
        api_problem(resp, 400, "repetitions", "%s", msg);
        goto done;
    }
    if (plan_check_runnable(&d, (const char *const *)e.parameters, e.nparams, &map, e.spec,
                            &p) < 0) {
        store_release(ctx->db, c);
        api_problem(resp, p.status, p.field, "%s", p.msg);
        goto done;
    }
    int rc = store_runs_read(c, id, e.nparams, &runs, &nruns, &err);
    store_release(ctx->db, c);
    resp->trim_after = nruns >= PLAN_TRIM_RUNS;
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    plan_send(ctx, &d, &e, &map, runs, nruns, offset, limit, resp);
done:
    store_runs_free(runs, nruns);
    sweep_def_free(&d);
    store_experiment_free(&e);
    json_decref(body);
}
