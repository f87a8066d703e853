/*
 * configurations.c — POST /v1/experiments/{id}/configurations (Q5): which
 * configuration to request under a deadline and a budget (Extra-Deep §3.3).
 * The request document and the search are analysis/configurations.h's; this
 * handler finds the level combinations to search and their models (and
 * refuses, before queuing, a search none of whose candidates has a whole
 * rank count: configs_check_whole). A
 * search over more than CONFIGS_DIRECT_CANDIDATES candidates (or with
 * ?job=always) is queued for a job worker and answered 202
 * (api/search_runs.c); what it answers then is what the request would have.
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
#include "analysis/configurations.h"
#include "api/handlers.h"
#include "analysis/levels.h"
#include "api/levels_query.h"
#include "api/predict.h"
#include "store/model_levels.h"
#include "common/jsonb.h"

/* Searched here over at most this many candidates (about 17 ms for one
 * parameter on an idle core, bench/bench_analyses.c; 60 to 125 ms for two
 * on shared loaded cores, bench/bench_caps.c); over more, or with
 * ?job=always, by a job worker (api/search_runs.c), the request answered
 * 202. */
#define CONFIGS_DIRECT_CANDIDATES 1000

/* One level combination searched: its models and measured data. */
typedef struct combo {
    const cached_models *m;
    const cache_blob *ref;
    const ad_app *app;
    const cached_part *parts;
    int owned;      /* m is the combination's reference to release */
    json_t *levels; /* {"dataloader":"dali",...}; NULL without factors */
} combo;

/* ---- the models of a combination, as the search asks them (configs_ops) ---- */

static configs_estimate epoch_of(const void *models, const double *point)
{
    const cached_models *m = models;
    int composed;
    prediction t = predict_epoch(m->parts[predict_metric_slot(m, "time")], point, &composed);
    return (configs_estimate){t.value, t.lo, t.hi, t.has_interval};
}

static double ranks_of(const void *models, const double *point)
{
    return cached_ranks(models, point);
}

static int beyond_of(const void *models, const double *point)
{
    return predict_beyond(models, point);
}

static void warnings_of(json_t *doc, const void *models, const double *point, int all)
{
    if (all)
        predict_warnings_at(doc, models, -1, point);
    else
        predict_point_warnings_at(doc, models, -1, point);
}

/* the two degrees whose product cached_ranks is */
static int degrees_of(const void *models, const double *point, double *dp, double *mp)
{
    const cached_models *m = models;
    if (m->data_parallel.nops == 0 || m->model_parallel.nops == 0 ||
        expr_eval(&m->data_parallel, point, dp) || expr_eval(&m->model_parallel, point, mp))
        return -1;
    return 0;
}

static const configs_ops ops = {epoch_of, ranks_of, beyond_of, warnings_of, degrees_of};

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
    api_configurations_search(ctx, req, resp, 0);
}

void api_configurations_search(api_ctx *ctx, api_request *req, api_response *resp, int direct)
{
    static const char *const allowed[] = {"job", NULL};
    int64_t id;
    int always = 0;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0 ||
        (!direct && api_search_job_param(req, resp, &always) < 0))
        return;
    store_error err = {0};
    const cached_models *m = model_cache_get(ctx->models, ctx->db, id, &err);
    if (!m) {
        api_store_problem(resp, &err);
        return;
    }
    /* the query names only the experiment's factors (their levels), and job */
    if (predict_check_query(req, resp, m, allowed, 0) < 0) {
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
    configs_request r;
    memset(&r, 0, sizeof r);
    cost_eval ce = {0};
    combo *cb = NULL;
    configs_combo *cc = NULL;
    int ncb = 0;
    int factors = m->factors_spec[0] != '\0';
    json_t *skipped = factors ? json_array() : NULL;
    if (api_parse_object(req, resp, &doc) < 0)
        goto done;
    const char *const *params = m->names;
    an_problem p;
    if (configs_request_parse(doc, params, m->nparams, m->has_cost || m->formula[0], &r, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
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
    cost_setup cs;
    cached_cost_setup(m, &cs);
    if (cost_open(&ce, &cs, why, sizeof why) < 0) {
        api_problem(resp, 409, "cost.formula", "the experiment's formula does not compile: %s",
                    why);
        goto done;
    }
    size_t ngrid = cfg_grid_size(r.ranges, m->nparams);
    if (ngrid * (size_t)ncb > CONFIGS_MAX_CANDIDATES) {
        api_problem(resp, 400, "candidates",
                    "the product of the ranges has %zu points at each of %d level combinations; "
                    "at most %d candidates are searched (pin a factor's level in the query)",
                    ngrid, ncb, CONFIGS_MAX_CANDIDATES);
        goto done;
    }
    cc = calloc((size_t)ncb, sizeof *cc);
    if (!cc) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < ncb; i++)
        cc[i] = (configs_combo){cb[i].m, cb[i].app, cb[i].levels};
    configs_search_in in = {id, m->set_number, m->scaling, params, m->nparams, &ops, cc, ncb,
                            &ce, factors, skipped};
    /* no candidate a scheduler could allocate, or one whose prediction is
     * not finite: refused before it is queued */
    if (configs_check_whole(&in, &r, &p) < 0 || configs_check_finite(&in, &r, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    /* a large search is a job's: the HTTP thread answers at once */
    if (!direct && (always || ngrid * (size_t)ncb > CONFIGS_DIRECT_CANDIDATES)) {
        api_search_queue(ctx, req, resp, id, "configurations", doc);
        goto done;
    }
    json_t *out = configs_search(&in, &r);
    if (!out)
        api_problem(resp, 500, NULL, "out of memory");
    else
        predict_page_store(ctx, key, resp, out);
done:
    json_decref(doc);
    json_decref(skipped);
    free(cc);
    cost_close(&ce);
    configs_request_free(&r);
    combos_free(ctx, cb, ncb);
    model_cache_release(ctx->models, m);
}
