/*
 * speedups.c — GET /v1/experiments/{id}/speedups: Extra-Deep's speedup Δ,
 * parallel efficiency ε and cost C (Eq. 11-14) per kernel and per part
 * (comp, comm, mem, the work between steps, the epoch), each measured at
 * every coordinate and modelled with the PMNF, and the ranking of the
 * kernels by the speedup they achieve ("which kernel benefits most / least
 * from scaling", §3.1).
 *
 *   ?metric=time          the metric (cost needs time)
 *   &<parameter>=v ...    the point the models are evaluated at for the
 *                         ranking (every parameter); default the largest
 *                         measured coordinate
 *   &limit=100            kernels listed (the ranking covers them all)
 *
 * P_1 of a coordinate is the first measured point of its series along x_1
 * (the first parameter) at its values of the other parameters, so with two
 * parameters every value of x_2 has its own baseline. A kernel absent at
 * P_1 has no Δ there. Models need 5 distinct values of every parameter,
 * like every other model; a series with fewer says why. The table is
 * computed by analysis/speedups.h; this file reads the measurements and
 * renders it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/speedups.h"
#include "api/predict.h"
#include "api/warnings.h"
#include "modeling/model_json.h"
#include "store/models.h"

#define SPEEDUP_RANKED 5 /* names in "most" and "least" */

/* The rank count at a coordinate by the cached models (sp_ranks_fn). */
static double ranks_of(const void *m, const double *point)
{
    return cached_ranks(m, point);
}

static json_t *model_json(const sp_series *s, int k, const cached_models *m)
{
    if (!s->present[k])
        return json_pack("{s:n, s:s}", "function", "reason", s->reason[k]);
    const char *const *names = m->names;
    return api_model_to_json(&s->model[k], names, 0);
}

static json_t *series_json(const sp_series *s, const cached_models *m, const double *coords,
                           int np)
{
    static const char *const keys[3] = {"speedup_pct", "efficiency_pct", "core_hours"};
    json_t *measured = json_array();
    for (int p = 0; p < np; p++) {
        if (!isfinite(s->value[p]))
            continue;
        json_array_append_new(
            measured, json_pack("{s:o, s:o, s:o, s:o, s:o}", "point",
                                predict_point_json(m, coords + (size_t)p * m->nparams), "value",
                                predict_number(s->value[p]), "speedup_pct",
                                predict_number(s->delta[p]), "efficiency_pct",
                                predict_number(s->eps[p]), "core_hours", predict_number(s->ch[p])));
    }
    json_t *models = json_object(), *at = json_object(), *iv = json_object();
    for (int k = 0; k < 3; k++) {
        json_object_set_new(models, keys[k], model_json(s, k, m));
        json_object_set_new(at, keys[k], predict_number(s->at[k]));
        /* the 95% interval of a model's value there; null for a measured one */
        json_object_set_new(iv, keys[k],
                            s->at_interval[k] && isfinite(s->at_lo[k]) && isfinite(s->at_hi[k])
                                ? json_pack("[f, f]", s->at_lo[k], s->at_hi[k])
                                : json_null());
    }
    json_t *o = json_pack("{s:s, s:o, s:o, s:o, s:o}", "name", s->name, "at", at, "at_interval",
                          iv, "models", models, "measured", measured);
    if (o && s->category)
        json_object_set_new(o, "category", json_string(s->category));
    return o;
}

void api_speedups(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "limit", NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    sp_table w = {0};
    store_measurement_row *all = NULL;
    int nall = 0;
    sp_series **order = NULL;
    const char *metric = api_query(req, "metric");
    metric = metric ? metric : "time";
    long limit;
    if (predict_check_query(req, resp, m, allowed, 1) < 0 ||
        predict_query_long(req, resp, "limit", 1, 100000, 100, &limit) < 0)
        goto done;
    if (predict_metric_slot(m, metric) < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        goto done;
    }
    int given = 0;
    for (int i = 0; i < m->nparams; i++)
        given += api_query(req, m->params[i]) != NULL;
    double at[PMNF_MAX_PARAMS];
    if (given && (predict_query_point(req, resp, m, allowed, at) < 0 ||
                  predict_rank_count(resp, m, at, m->params[0]) < 0))
        goto done;

    store_error err = {0};
    PGconn *conn = store_acquire(ctx->db, &err);
    int rc = conn ? 0 : err.code;
    /* one level combination of an experiment with factors (predict_models) */
    const char *lv = m->levels[0] ? m->levels : NULL;
    store_model_filter fa = {.level = "application", .phase = "epoch", .metric = metric,
                             .limit = 10000000, .levels = lv};
    store_measurement_row *rows = NULL, *crow = NULL;
    int na = 0, nc = 0;
    if (!rc)
        rc = store_measurements_read(conn, m->set_id, &fa, &rows, &na, &err);
    store_model_filter fc = {.level = "callpath", .phase = "epoch", .metric = metric,
                             .limit = 10000000, .levels = lv};
    if (!rc)
        rc = store_measurements_read(conn, m->set_id, &fc, &crow, &nc, &err);
    store_release(ctx->db, conn);
    if (rc) {
        store_measurement_rows_free(rows, na);
        store_measurement_rows_free(crow, nc);
        api_store_problem(resp, &err);
        goto done;
    }
    /* one array of both (the rows are moved, their strings kept) */
    all = realloc(rows, sizeof *rows * (size_t)(na + nc ? na + nc : 1));
    if (!all) {
        store_measurement_rows_free(rows, na);
        store_measurement_rows_free(crow, nc);
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (nc)
        memcpy(all + na, crow, sizeof *crow * (size_t)nc);
    free(crow);
    nall = na + nc;
    if (sp_build(&w, all, nall, m->nparams, ranks_of, m) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (w.np == 0) {
        api_problem(resp, 409, NULL, "model set %d has no measurements of metric \"%.60s\"",
                    m->set_number, metric);
        goto done;
    }
    if (!given) /* the largest measured coordinate: the largest product */
        sp_largest(&w, at);
    int is_time = !strcmp(metric, "time");
    order = malloc(sizeof *order * (size_t)(w.ns ? w.ns : 1));
    if (!order || sp_compute(&w, at, !strcmp(m->scaling, "strong"), is_time,
                             m->cores_per_rank) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    const char *const *names = m->names;
    an_problem p;
    if (sp_check_finite(&w, names, at, &p) < 0) { /* a far point: no answer of nulls */
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    json_t *parts = json_array(), *kernels = json_array();
    for (int i = 0; i < w.ns; i++)
        if (!w.s[i].category)
            json_array_append_new(parts, series_json(&w.s[i], m, w.coords, w.np));
    int nk = sp_ranking(&w, order);
    json_t *most = json_array(), *least = json_array();
    int known = 0;
    for (int i = 0; i < nk; i++)
        known += !isnan(order[i]->at[0]);
    for (int i = 0; i < known && i < SPEEDUP_RANKED; i++)
        json_array_append_new(most, json_pack("{s:s, s:o}", "name", order[i]->name,
                                              "speedup_pct", predict_number(order[i]->at[0])));
    for (int i = known - 1; i >= 0 && i >= known - SPEEDUP_RANKED; i--)
        json_array_append_new(least, json_pack("{s:s, s:o}", "name", order[i]->name,
                                               "speedup_pct", predict_number(order[i]->at[0])));
    for (int i = 0; i < nk && i < limit; i++)
        json_array_append_new(kernels, series_json(order[i], m, w.coords, w.np));
    const char *unit = predict_unit(metric);
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:s, s:o, s:o, s:o, s:{s:o, s:o}, s:o, s:i, s:{s:s, s:s, s:s, s:s}}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "metric", metric, "scaling",
        m->scaling, "at", predict_point_json(m, at), "ranks", predict_number(cached_ranks(m, at)),
        "parts", parts, "ranking", "most", most, "least", least, "callpaths", kernels,
        "callpaths_total", nk, "units", "value", unit, "speedup_pct",
        "% against P_1 of the series along the first parameter", "efficiency_pct", "%",
        "core_hours", "core-h per epoch");
    json_object_set_new(doc, "extrapolation", predict_extrapolation_json(m, at));
    predict_warnings_at(doc, m, predict_metric_slot(m, metric), at);
    /* a rank count no scheduler can allocate: a what-if, said so */
    warning_append(doc, predict_not_whole_warning(m, at));
    predict_page_store(ctx, key, resp, doc);
done:
    free(order);
    sp_table_free(&w);
    store_measurement_rows_free(all, nall);
    model_cache_release(ctx->models, m);
}
