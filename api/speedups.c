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
 * like every other model; a series with fewer says why.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "modeling/model_json.h"
#include "api/predict.h"
#include "modeling/scaling.h"
#include "store/models.h"

#define SPEEDUP_MIN_VALUES 5
#define SPEEDUP_RANKED 5 /* names in "most" and "least" */

/* One series: a part or a kernel, with its values per app coordinate. */
typedef struct sp_series {
    const char *name, *category;
    double *value, *delta, *eps, *ch; /* npoints each */
    pmnf_model model[3];
    int present[3];
    char reason[3][200];
    double at[3]; /* the models (else the measured values) at the point */
} sp_series;

static int cmp_point(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int point_index(const double *coords, int n, int nparams, const double *p)
{
    for (int i = 0; i < n; i++)
        if (!cmp_point(coords + (size_t)i * nparams, p, nparams))
            return i;
    return -1;
}

static int fewest_distinct(const double *coords, int n, int nparams)
{
    int fewest = n;
    for (int q = 0; q < nparams; q++) {
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = coords[(size_t)j * nparams + q] == coords[(size_t)i * nparams + q];
            distinct += !seen;
        }
        fewest = distinct < fewest ? distinct : fewest;
    }
    return fewest;
}

/* Fits v over the coordinates where it is finite into s->model[k]. */
static void fit_one(pmnf_modeler *mod, const double *coords, int np, int nparams,
                    const double *v, sp_series *s, int k, double *c, double *y)
{
    int n = 0;
    for (int p = 0; p < np; p++)
        if (isfinite(v[p])) {
            memcpy(c + (size_t)n * nparams, coords + (size_t)p * nparams,
                   sizeof(double) * (size_t)nparams);
            y[n++] = v[p];
        }
    int distinct = fewest_distinct(c, n, nparams);
    if (distinct < SPEEDUP_MIN_VALUES) {
        snprintf(s->reason[k], sizeof s->reason[k],
                 "known at %d coordinate(s) with %d distinct value(s) of a parameter; at least %d "
                 "values of every parameter are needed",
                 n, distinct, SPEEDUP_MIN_VALUES);
        return;
    }
    char err[200];
    if (pmnf_fit(mod, &(pmnf_data){nparams, n, c, y}, &s->model[k], err, sizeof err) < 0) {
        snprintf(s->reason[k], sizeof s->reason[k], "%s", err);
        return;
    }
    s->present[k] = 1;
}

static json_t *model_json(const sp_series *s, int k, const cached_models *m)
{
    if (!s->present[k])
        return json_pack("{s:n, s:s}", "function", "reason", s->reason[k]);
    const char *names[PMNF_MAX_PARAMS];
    for (int i = 0; i < m->nparams; i++)
        names[i] = m->params[i];
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
    json_t *models = json_object(), *at = json_object();
    for (int k = 0; k < 3; k++) {
        json_object_set_new(models, keys[k], model_json(s, k, m));
        json_object_set_new(at, keys[k], predict_number(s->at[k]));
    }
    json_t *o = json_pack("{s:s, s:o, s:o, s:o}", "name", s->name, "at", at, "models", models,
                          "measured", measured);
    if (o && s->category)
        json_object_set_new(o, "category", json_string(s->category));
    return o;
}

/* Ranked by Δ at the point, highest first; unknown last. */
static int cmp_delta(const void *a, const void *b)
{
    const sp_series *x = *(sp_series *const *)a, *y = *(sp_series *const *)b;
    double dx = x->at[0], dy = y->at[0];
    if (isnan(dx) != isnan(dy))
        return isnan(dx) ? 1 : -1;
    if (dx != dy && !isnan(dx))
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Everything of one answer, freed at its end. */
typedef struct sp_work {
    store_measurement_row *rows;
    int nrows;
    double *coords, *ranks, *block;
    int np;
    sp_series *s;
    int ns;
} sp_work;

static void work_free(sp_work *w)
{
    store_measurement_rows_free(w->rows, w->nrows);
    free(w->coords);
    free(w->ranks);
    free(w->block);
    free(w->s);
}

static int cmp_row(const void *a, const void *b, void *np)
{
    const store_measurement_row *x = *(store_measurement_row *const *)a,
                                *y = *(store_measurement_row *const *)b;
    int c = strcmp(x->level, y->level);
    if (!c)
        c = strcmp(x->name, y->name);
    return c ? c : cmp_point(x->point, y->point, *(const int *)np);
}

/* Rows -> coordinates (ascending) and series (application parts first). */
static int build(sp_work *w, const cached_models *m)
{
    int nparams = m->nparams, n = w->nrows;
    store_measurement_row **by = malloc(sizeof *by * (size_t)(n ? n : 1));
    w->coords = malloc(sizeof(double) * (size_t)(n ? n : 1) * nparams);
    if (!by || !w->coords) {
        free(by);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (w->rows[i].nparams == nparams)
            by[k++] = &w->rows[i];
    n = k;
    /* the distinct coordinates, ascending */
    for (int i = 0; i < n; i++)
        if (point_index(w->coords, w->np, nparams, by[i]->point) < 0)
            memcpy(w->coords + (size_t)w->np++ * nparams, by[i]->point,
                   sizeof(double) * (size_t)nparams);
    for (int i = 1; i < w->np; i++) /* insertion sort: a few dozen coordinates */
        for (int j = i; j > 0 && cmp_point(w->coords + (size_t)(j - 1) * nparams,
                                           w->coords + (size_t)j * nparams, nparams) > 0;
             j--)
            for (int q = 0; q < nparams; q++) {
                double t = w->coords[(size_t)j * nparams + q];
                w->coords[(size_t)j * nparams + q] = w->coords[(size_t)(j - 1) * nparams + q];
                w->coords[(size_t)(j - 1) * nparams + q] = t;
            }
    qsort_r(by, (size_t)n, sizeof *by, cmp_row, &nparams);
    int ns = 0;
    for (int i = 0; i < n; i++)
        ns += i == 0 || strcmp(by[i]->level, by[i - 1]->level) ||
              strcmp(by[i]->name, by[i - 1]->name);
    size_t np = (size_t)(w->np ? w->np : 1);
    w->ranks = malloc(sizeof(double) * np);
    w->s = calloc((size_t)(ns ? ns : 1), sizeof *w->s);
    w->block = malloc(sizeof(double) * np * 4 * (size_t)(ns ? ns : 1));
    if (!w->ranks || !w->s || !w->block) {
        free(by);
        return -1;
    }
    for (int p = 0; p < w->np; p++)
        w->ranks[p] = cached_ranks(m, w->coords + (size_t)p * nparams);
    for (size_t i = 0; i < np * 4 * (size_t)(ns ? ns : 1); i++)
        w->block[i] = NAN;
    int s = -1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(by[i]->level, by[i - 1]->level) ||
            strcmp(by[i]->name, by[i - 1]->name)) {
            sp_series *x = &w->s[++s];
            double *b = w->block + (size_t)s * np * 4;
            *x = (sp_series){.name = by[i]->name,
                             .category = strcmp(by[i]->level, "application") ? by[i]->category
                                                                             : NULL,
                             .value = b, .delta = b + np, .eps = b + 2 * np, .ch = b + 3 * np};
        }
        int p = point_index(w->coords, w->np, nparams, by[i]->point);
        w->s[s].value[p] = by[i]->value;
    }
    w->ns = ns;
    free(by);
    return 0;
}

void api_speedups(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "limit", NULL};
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
    sp_work w = {0};
    pmnf_modeler *mod = NULL;
    double *c = NULL, *y = NULL;
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
    if (given && predict_query_point(req, resp, m, allowed, at) < 0)
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
    w.rows = realloc(rows, sizeof *rows * (size_t)(na + nc ? na + nc : 1));
    if (!w.rows) {
        store_measurement_rows_free(rows, na);
        store_measurement_rows_free(crow, nc);
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (nc)
        memcpy(w.rows + na, crow, sizeof *crow * (size_t)nc);
    free(crow);
    w.nrows = na + nc;
    if (build(&w, m) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (w.np == 0) {
        api_problem(resp, 409, NULL, "model set %d has no measurements of metric \"%.60s\"",
                    m->set_number, metric);
        goto done;
    }
    if (!given) { /* the largest measured coordinate: the largest product */
        int best = 0;
        for (int p = 1; p < w.np; p++) {
            double a = 0, b = 0;
            for (int i = 0; i < m->nparams; i++) {
                a += log(w.coords[(size_t)p * m->nparams + i]);
                b += log(w.coords[(size_t)best * m->nparams + i]);
            }
            best = a >= b ? p : best;
        }
        memcpy(at, w.coords + (size_t)best * m->nparams, sizeof(double) * (size_t)m->nparams);
    }
    int is_time = !strcmp(metric, "time");
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = !strcmp(m->scaling, "strong");
    mod = pmnf_modeler_new(&o);
    c = malloc(sizeof(double) * (size_t)w.np * m->nparams);
    y = malloc(sizeof(double) * (size_t)w.np);
    order = malloc(sizeof *order * (size_t)(w.ns ? w.ns : 1));
    if (!mod || !c || !y || !order) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int pat = point_index(w.coords, w.np, m->nparams, at);
    for (int i = 0; i < w.ns; i++) {
        sp_series *s = &w.s[i];
        scl_series_derived(w.coords, w.np, m->nparams, s->value, w.ranks, m->cores_per_rank,
                           s->delta, s->eps, s->ch);
        const double *v[3] = {s->delta, s->eps, s->ch};
        for (int k = 0; k < 3; k++) {
            if (k == 2 && !is_time) {
                snprintf(s->reason[k], sizeof s->reason[k], "cost is modeled from metric time");
                s->at[k] = NAN;
                continue;
            }
            fit_one(mod, w.coords, w.np, m->nparams, v[k], s, k, c, y);
            s->at[k] = s->present[k] ? pmnf_eval(&s->model[k].f, at)
                       : pat >= 0    ? v[k][pat]
                                     : NAN;
        }
    }
    json_t *parts = json_array(), *kernels = json_array();
    int nk = 0;
    for (int i = 0; i < w.ns; i++) {
        if (!w.s[i].category)
            json_array_append_new(parts, series_json(&w.s[i], m, w.coords, w.np));
        else
            order[nk++] = &w.s[i];
    }
    qsort(order, (size_t)nk, sizeof *order, cmp_delta);
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
    predict_page_store(ctx, key, resp, doc);
done:
    free(c);
    free(y);
    free(order);
    pmnf_modeler_free(mod);
    work_free(&w);
    model_cache_release(ctx->models, m);
}
