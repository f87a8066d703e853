/*
 * bottlenecks.c — GET /v1/experiments/{id}/bottlenecks?at=ranks:256
 * [&metric=time][&limit=20][&category=comp][&strict=true] (Q3): the
 * callpaths that will dominate at the point, ranked by analysis/bottlenecks.c
 * (growth, then the predicted value; a negative_prediction after the rest),
 * each with its model, its share of the epoch now and there, and its coded
 * warnings; the answer's warnings add the application model's and a
 * callpath_warnings summary of the items'. This file parses the query,
 * reads the model set's data and renders the ranking.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/bottlenecks.h"
#include "api/analysis_data.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"

#define LIMIT_DEFAULT 20
#define LIMIT_MAX 1000

static json_t *item_json(const bn_item *it, int rank, int beyond)
{
    const ad_callpath *c = it->c;
    prediction p = {it->value, it->lo, it->hi, it->has_interval};
    prediction share = {it->share_pct, it->share_lo, it->share_hi, it->has_interval};
    return json_pack("{s:i, s:s, s:s, s:{s:f, s:f}, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:O}",
                     "rank", rank, "callpath", c->name, "category", c->category, "growth", "poly",
                     c->growth_poly, "log", c->growth_log, "function", c->model.function, "smape",
                     predict_number(c->model.model.smape), "adjusted_r2",
                     predict_number(c->model.model.ar2), "value_now", predict_number(c->now),
                     "share_now_pct", predict_number(it->share_now_pct), "value_at",
                     predict_json(&p), "share_at_pct", predict_json(&share), "beyond_4x",
                     json_boolean(beyond), "warnings", it->warnings);
}

void api_bottlenecks(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"at", "metric", "limit", "category", NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    const cache_blob *aref = NULL, *cref = NULL;
    bn_ranking r = {0};
    double at[PMNF_MAX_PARAMS];
    long limit;
    const char *metric = api_query(req, "metric"), *category = api_query(req, "category");
    const char *at_text = api_query(req, "at");
    metric = metric ? metric : "time";
    int slot = predict_metric_slot(m, metric);
    if (predict_check_query(req, resp, m, allowed, 0) < 0 ||
        predict_query_long(req, resp, "limit", 1, LIMIT_MAX, LIMIT_DEFAULT, &limit) < 0)
        goto done;
    if (!at_text) {
        api_problem(resp, 400, "at", "missing: the target point, e.g. at=%s:256", m->params[0]);
        goto done;
    }
    if (predict_parse_at(at_text, "at", resp, m, at) < 0)
        goto done;
    if (category && !bn_category_known(category)) {
        api_problem(resp, 400, "category", "unknown value \"%.40s\"", category);
        goto done;
    }
    if (slot < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        goto done;
    }
    int composed;
    prediction epoch = predict_epoch(m->parts[slot], at, &composed);
    store_error err = {0};
    const ad_app *app = ad_app_get(ctx, m, slot, &aref, &err);
    const ad_callpaths *cps = app ? ad_callpaths_get(ctx, m, slot, app, &cref, &err) : NULL;
    if (!cps) {
        api_store_problem(resp, &err);
        goto done;
    }
    const char *const *names = m->names;
    double epoch_now = app->npoints ? app->value[AD_GROUPS - 1][app->largest] : NAN;
    bn_query q = {category, at, names, epoch.value, epoch_now};
    if (bn_rank(cps, &q, &r) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    /* a far point: no answer of nulls (the epoch's, or a callpath's model) */
    const char *at_fields[PMNF_MAX_PARAMS];
    for (int i = 0; i < m->nparams; i++)
        at_fields[i] = "at";
    if (predict_finite(resp, m, m->parts[slot], at, metric, at_fields) < 0)
        goto done;
    an_problem p;
    if (bn_check_finite(&r, names, m->nparams, at, "at", &p) < 0) {
        api_problem(resp, p.status, p.field, "%s", p.msg);
        goto done;
    }
    json_t *items = json_array();
    int beyond = predict_beyond(m, at);
    for (int i = 0; i < r.n && i < limit; i++)
        json_array_append_new(items, item_json(&r.v[i], i + 1, beyond));
    const char *unit = predict_unit(metric);
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:o, s:o, s:{s:o, s:o}, s:o, s:i, s:i, s:o, s:{s:s, s:s, s:s}}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "metric", metric, "at",
        predict_point_json(m, at), "now",
        predict_point_json(m, app->npoints ? app->coords + (size_t)app->largest * m->nparams : at),
        "epoch", "now", predict_number(epoch_now), "at", predict_json(&epoch), "callpaths", items,
        "ranked", r.n, "unmodeled", r.unmodeled, "extrapolation", predict_extrapolation_json(m, at),
        "units", "value", unit, "share", "% of the epoch", "growth",
        "leading exponents (poly, log) of the model's largest term");
    predict_warnings_at(doc, m, slot, at);
    warning_append(doc, bn_warnings_summary(&r)); /* NULL: none carries one */
    noisy_points_attach(doc, &m->noisy); /* the too-noisy points it rests on */
    predict_page_store(ctx, key, resp, doc);
done:
    bn_ranking_free(&r);
    model_cache_blob_release(ctx->models, cref);
    model_cache_blob_release(ctx->models, aref);
    model_cache_release(ctx->models, m);
}
