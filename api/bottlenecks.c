/*
 * bottlenecks.c — GET /v1/experiments/{id}/bottlenecks?at=ranks:256
 * [&metric=time][&limit=20][&category=comp] (Q3): the callpaths that will
 * dominate, ranked as Extra-Deep ranks them (paper 000 §3.1): by asymptotic
 * growth — the leading exponents (poly, then log) of their per-epoch model —
 * then by their predicted share of the epoch at the target point. Each with
 * its model, its measured share now (at the largest measured coordinate),
 * its predicted value and share there with 95% intervals, and its category.
 * Host-side callpaths (CUDA runtime, user ranges) overlap device time and
 * are left out unless category=host asks for them; callpaths without a
 * model (measured at too few coordinates) are counted, not ranked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/analysis_data.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"

#define LIMIT_DEFAULT 20
#define LIMIT_MAX 1000

typedef struct ranked {
    const ad_callpath *c;
    prediction at;
} ranked;

static int cmp_ranked(const void *x, const void *y)
{
    const ranked *a = x, *b = y;
    if (a->c->growth_poly != b->c->growth_poly)
        return a->c->growth_poly > b->c->growth_poly ? -1 : 1;
    if (a->c->growth_log != b->c->growth_log)
        return a->c->growth_log > b->c->growth_log ? -1 : 1;
    if (a->at.value != b->at.value)
        return a->at.value > b->at.value ? -1 : 1;
    return strcmp(a->c->name, b->c->name);
}

static json_t *pct(double part, double whole)
{
    return predict_number(whole != 0 ? 100 * part / whole : NAN);
}

void api_bottlenecks(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"at", "metric", "limit", "category", NULL};
    static const char *const categories[] = {"comp", "comm", "mem", "host", NULL};
    int64_t id;
    const cached_models *m = predict_models(ctx, req, resp, &id);
    if (!m)
        return;
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp)) {
        model_cache_release(ctx->models, m);
        return;
    }
    const cache_blob *aref = NULL, *cref = NULL;
    ranked *list = NULL;
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
    int known = !category;
    for (int i = 0; categories[i] && !known; i++)
        known = !strcmp(categories[i], category);
    if (!known) {
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
    list = malloc(sizeof *list * (size_t)(cps->n ? cps->n : 1));
    if (!list) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int n = 0, unmodeled = 0;
    for (int i = 0; i < cps->n; i++) {
        const ad_callpath *c = &cps->v[i];
        if (category ? strcmp(c->category, category) : !strcmp(c->category, "host"))
            continue;
        if (!c->model.present) {
            unmodeled++;
            continue;
        }
        prediction *p = &list[n].at;
        p->has_interval = pmnf_predict(&c->model.model, at, &p->value, &p->lo, &p->hi) == 0;
        list[n++].c = c;
    }
    qsort(list, (size_t)n, sizeof *list, cmp_ranked);
    double epoch_now = app->npoints ? app->value[AD_GROUPS - 1][app->largest] : NAN;
    json_t *items = json_array();
    for (int i = 0; i < n && i < limit; i++) {
        const ad_callpath *c = list[i].c;
        const prediction *p = &list[i].at;
        prediction share = {100 * p->value / epoch.value, 100 * p->lo / epoch.value,
                            100 * p->hi / epoch.value, p->has_interval};
        json_array_append_new(
            items,
            json_pack("{s:i, s:s, s:s, s:{s:f, s:f}, s:s, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
                      "rank", i + 1, "callpath", c->name, "category", c->category, "growth",
                      "poly", c->growth_poly, "log", c->growth_log, "function", c->model.function,
                      "smape", predict_number(c->model.model.smape), "adjusted_r2",
                      predict_number(c->model.model.ar2), "value_now", predict_number(c->now),
                      "share_now_pct", pct(c->now, epoch_now), "value_at", predict_json(p),
                      "share_at_pct", predict_json(&share), "beyond_4x",
                      json_boolean(predict_beyond(m, at))));
    }
    const char *unit = predict_unit(metric);
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:o, s:o, s:{s:o, s:o}, s:o, s:i, s:i, s:o, s:{s:s, s:s, s:s}}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "metric", metric, "at",
        predict_point_json(m, at), "now",
        predict_point_json(m, app->npoints ? app->coords + (size_t)app->largest * m->nparams : at),
        "epoch", "now", predict_number(epoch_now), "at", predict_json(&epoch), "callpaths", items,
        "ranked", n, "unmodeled", unmodeled, "extrapolation", predict_extrapolation_json(m, at),
        "units", "value", unit, "share", "% of the epoch", "growth",
        "leading exponents (poly, log) of the model's largest term");
    predict_warnings_at(doc, m, slot, at);
    noisy_points_attach(doc, &m->noisy); /* the too-noisy points it rests on */
    predict_page_store(ctx, key, resp, doc);
done:
    free(list);
    model_cache_blob_release(ctx->models, cref);
    model_cache_blob_release(ctx->models, aref);
    model_cache_release(ctx->models, m);
}
