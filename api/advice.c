/*
 * advice.c — POST /v1/experiments/{id}/advice: which runs to take next so
 * that the prediction at a target point gets most precise per core-hour,
 * within a budget. The request document and the advice are
 * analysis/advice.h's; this handler reads the newest model set's
 * application-level epoch measurements (of the level combination the query
 * names) and hands over its time models. Advice over more than
 * ADVICE_DIRECT_WORK candidates × max_runs (or with ?job=always) is queued
 * for a job worker and answered 202 (api/search_runs.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/advice.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "store/models.h"

/* Advised here up to this many candidates × max_runs (30 to 70 ms on shared
 * loaded cores: bench/bench_caps.c); beyond, or with ?job=always, by a job
 * worker (api/search_runs.c), the request answered 202. */
#define ADVICE_DIRECT_WORK 10000.0

/* ---- the models, as the advice asks them (advice_ops) ---- */

static advice_estimate epoch_of(const void *models, const double *point)
{
    const cached_models *m = models;
    int composed;
    prediction t = predict_epoch(m->parts[predict_metric_slot(m, "time")], point, &composed);
    return (advice_estimate){t.value, t.lo, t.hi, t.has_interval};
}

static double ranks_of(const void *models, const double *point)
{
    return cached_ranks(models, point);
}

static json_t *extrapolation_of(const void *models, const double *point)
{
    return predict_extrapolation_json(models, point);
}

static int degrees_of(const void *models, const double *point, double *dp, double *mp)
{
    return cached_degrees(models, point, dp, mp);
}

static const advice_ops ops = {epoch_of, ranks_of, extrapolation_of, degrees_of};

void api_advice(api_ctx *ctx, api_request *req, api_response *resp)
{
    api_advice_search(ctx, req, resp, 0);
}

void api_advice_search(api_ctx *ctx, api_request *req, api_response *resp, int direct)
{
    static const char *const allowed[] = {"job", NULL};
    int64_t id;
    int always = 0;
    if (!direct && api_search_job_param(req, resp, &always) < 0)
        return;
    const cached_models *m = predict_models(ctx, req, resp, &id);
    if (!m)
        return;
    json_t *body = NULL, *doc = NULL;
    store_measurement_row *rows = NULL;
    int nrows = 0;
    advice_request in;
    memset(&in, 0, sizeof in);
    int slot = predict_metric_slot(m, "time");
    /* the query names factor levels only: the target is in the body */
    if (predict_check_query(req, resp, m, allowed, 0) < 0 || api_parse_object(req, resp, &body) < 0)
        goto done;
    if (slot < 0) {
        api_problem(resp, 409, NULL, "model set %d has no time models", m->set_number);
        goto done;
    }
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    /* one level combination of an experiment with factors (predict_models) */
    store_model_filter f = {.level = "application", .phase = "epoch", .metric = "time",
                            .limit = 1000000, .levels = m->levels[0] ? m->levels : NULL};
    if (!c || store_measurements_read(c, m->set_id, &f, &rows, &nrows, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    const char *const *params = m->names;
    an_problem p;
    if (advice_request_parse(body, params, m->nparams, rows, nrows, &in, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    char msg[300];
    const cached_part *parts = m->parts[slot];
    advice_in ai = {id, m->set_number, params, m->nparams, m->cores_per_rank, {NULL}, &ops, m,
                    rows, nrows};
    for (int g = 0; g < 4; g++)
        ai.parts[g] = parts[g].present ? &parts[g].model : NULL;
    /* no candidate a scheduler could allocate: refused before it is queued */
    if (advice_check_whole(&ai, &in, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    /* a large search is a job's: the HTTP thread answers at once */
    long ncand = advice_candidates(&in, m->nparams);
    if (!direct && ncand <= ADVICE_MAX_CANDIDATES &&
        (always || (double)ncand * in.max_runs > ADVICE_DIRECT_WORK)) {
        api_search_queue(ctx, req, resp, id, "advice", body);
        goto done;
    }
    int rc = advice_compute(&ai, &in, &doc, msg, sizeof msg);
    if (rc == ADVICE_TOO_MANY)
        api_problem(resp, 400, "candidates", "more than %d candidate points",
                    ADVICE_MAX_CANDIDATES);
    else if (rc == ADVICE_NO_MODEL)
        api_problem(resp, 409, NULL, "model set %d has no epoch time model to advise on",
                    m->set_number);
    else if (rc == ADVICE_FAILED)
        api_problem(resp, 409, NULL, "cannot advise on model set %d: %s", m->set_number, msg);
    else if (rc < 0)
        api_problem(resp, 500, NULL, "out of memory");
    else
        api_send_json(resp, 200, doc);
done:
    advice_request_free(&in);
    store_measurement_rows_free(rows, nrows);
    json_decref(body);
    model_cache_release(ctx->models, m);
}
