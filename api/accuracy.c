/*
 * accuracy.c — GET /v1/experiments/{id}/accuracy: how far to trust the
 * models (Extra-Deep §4). Per application model (comp, comm, mem, between,
 * epoch) and per kernel: the percentage error at every modelling point and
 * their median (MPE, the model's accuracy), and at every evaluation-only
 * point P+ (uploads with ?use=evaluation, never fitted) and their median
 * (its predictive power, the honest measure of an extrapolation).
 *
 *   ?metric=time   &level=application|callpath (default both)   &limit=100
 *
 * The refit computes the errors (server/refit.c) and keeps them in each
 * model's document; this answer reads them from the newest model set.
 * Warnings: no evaluation-only upload yet; models without a model (too few
 * points) while evaluation points exist.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"
#include "modeling/accuracy.h"
#include "store/models.h"
#include "common/jsonb.h"

/* {"point":{"x1":..}} from the stored [..] form. */
static json_t *points_view(const json_t *pts, const cached_models *m)
{
    json_t *out = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(pts, i, p)
    {
        json_t *o = json_deep_copy(p);
        const json_t *c = json_object_get(p, "point");
        json_t *named = json_object();
        for (int k = 0; k < m->nparams && k < (int)json_array_size(c); k++)
            json_object_set_new(named, m->params[k], json_real(json_number_value(json_array_get(c, (size_t)k))));
        json_object_set_new(o, "point", named);
        json_array_append_new(out, o);
    }
    return out;
}

static json_t *kind_view(const json_t *acc, const char *kind, const cached_models *m)
{
    const json_t *k = json_object_get(acc, kind);
    json_t *med = json_object_get(k, "median_error_pct");
    return json_pack("{s:o, s:O}", "points", points_view(json_object_get(k, "points"), m),
                     "median_error_pct", med ? med : json_null());
}

/* Collects the distinct evaluation points (as text) into seen. */
static void note_points(const json_t *acc, json_t *seen)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(json_object_get(acc, "evaluation"), "points"), i, p)
    {
        char *t = json_dumps(json_object_get(p, "point"), JSON_COMPACT);
        if (t && !json_object_get(seen, t))
            json_object_set_new(seen, t, json_deep_copy(json_object_get(p, "point")));
        free(t);
    }
}

void api_accuracy(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "limit", NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    store_model_row *rows = NULL;
    int n = 0;
    const char *metric = api_query(req, "metric"), *level = api_query(req, "level");
    metric = metric ? metric : "time";
    long limit;
    if (predict_check_query(req, resp, m, allowed, 0) < 0 ||
        predict_query_long(req, resp, "limit", 1, 100000, 100, &limit) < 0)
        goto done;
    if (level && strcmp(level, "application") && strcmp(level, "callpath")) {
        api_problem(resp, 400, "level", "must be \"application\" or \"callpath\", got \"%.40s\"",
                    level);
        goto done;
    }
    if (predict_metric_slot(m, metric) < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        goto done;
    }
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    /* one level combination of an experiment with factors (predict_models) */
    store_model_filter f = {.metric = metric, .level = level, .limit = 1000000,
                            .levels = m->levels[0] ? m->levels : NULL};
    int rc = c ? store_models_read(c, m->set_id, &f, &rows, &n, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    json_t *app = json_array(), *cps = json_array(), *seen = json_object(),
           *unmodeled = json_array();
    int ncp = 0;
    double *mpe = malloc(sizeof(double) * 4 * (size_t)(n ? n : 1));
    size_t nmpe = 0;
    for (int i = 0; i < n; i++) {
        const store_model_row *r = &rows[i];
        int is_app = !strcmp(r->level, "application");
        json_t *doc = r->model_json ? jsonb_parse(r->model_json, 0) : NULL;
        const json_t *acc = json_object_get(doc, "accuracy");
        json_t *o = json_pack("{s:s, s:s, s:s?, s:s?}", "name", r->name, "phase", r->phase,
                              "category", r->category, "function", r->function);
        if (acc) {
            json_object_set_new(o, "modeling", kind_view(acc, "modeling", m));
            json_object_set_new(o, "evaluation", kind_view(acc, "evaluation", m));
            note_points(acc, seen);
            double e = json_number_value(
                json_object_get(json_object_get(acc, "evaluation"), "median_error_pct"));
            if (!is_app && mpe && json_is_number(json_object_get(
                                      json_object_get(acc, "evaluation"), "median_error_pct")))
                mpe[nmpe++] = e;
        } else {
            json_object_set_new(o, "reason", json_string(r->reason ? r->reason : "no model"));
            if (json_array_size(unmodeled) < 20)
                json_array_append_new(unmodeled, json_string(r->name));
        }
        json_decref(doc);
        if (is_app)
            json_array_append_new(app, o);
        else if (ncp++ < limit)
            json_array_append_new(cps, o);
        else
            json_decref(o);
    }
    double kernels_mpe = mpe ? acc_median(mpe, nmpe, mpe + 2 * (size_t)(n ? n : 1)) : NAN;
    free(mpe);
    json_t *points = json_array(), *warnings = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(seen, k, v)
    {
        json_t *named = json_object();
        for (int q = 0; q < m->nparams && q < (int)json_array_size(v); q++)
            json_object_set_new(named, m->params[q], json_real(json_number_value(json_array_get(v, (size_t)q))));
        json_array_append_new(points, named);
    }
    json_decref(seen);
    if (json_array_size(points) == 0)
        json_array_append_new(
            warnings, warning_new(WARN_NOT_MEASURED,
                                  "no evaluation-only upload: upload measurements at points "
                                  "not used for fitting with ?use=evaluation to see the models' "
                                  "predictive power"));
    else if (json_array_size(unmodeled) > 0) {
        char *names = json_dumps(unmodeled, JSON_COMPACT);
        char w[600];
        snprintf(w, sizeof w,
                 "no model, so no error at the evaluation points, for %.400s%s", names ? names : "",
                 json_array_size(unmodeled) == 20 ? " and more" : "");
        free(names);
        json_array_append_new(warnings, warning_new(WARN_NOT_MEASURED, w));
    }
    json_decref(unmodeled);
    json_t *doc = json_pack("{s:I, s:i, s:s, s:o, s:o, s:o, s:i, s:o, s:o, s:{s:s, s:s}}",
                            "experiment", (json_int_t)id, "model_set", m->set_number, "metric",
                            metric, "evaluation_points", points, "application", app, "callpaths",
                            cps, "callpaths_total", ncp, "callpaths_median_evaluation_error_pct",
                            predict_number(kernels_mpe), "warnings", warnings, "units",
                            "error_pct", "% of the measured value", "median_error_pct",
                            "% (median over the points)");
    predict_warnings_at(doc, m, predict_metric_slot(m, metric), NULL);
    predict_page_store(ctx, key, resp, doc);
done:
    store_model_rows_free(rows, n);
    model_cache_release(ctx->models, m);
}
