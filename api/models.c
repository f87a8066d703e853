/*
 * models.c — what a refit produced, read back: aggregated measurements, the
 * models of the newest model set (filtered, sorted by growth, paginated),
 * and predictions at any point with 95% intervals.
 *
 * Prediction of the epoch (api/predict.h): the computation, communication
 * and memory parts are modeled separately, and the epoch value is their sum
 * (each part predicted by its own PMNF model); its interval half-width is
 * the root sum of squares of the parts' half-widths (parts' errors taken as
 * independent). A single PMNF function cannot follow a sum whose parts
 * behave differently (computation falling as 1/x, communication growing as
 * log2(x)^2); the sum of the parts' models can. The epoch's own model is
 * used only when a part has no model.
 *
 * Pagination: cursors are "<model set id>.<offset>", so paging through a
 * list stays on the model set it started on even when a refit lands.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/levels.h"
#include "api/levels_query.h"
#include "modeling/model_json.h"
#include "api/predict.h"
#include "api/warnings.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "common/jsonb.h"

#define PAGE_DEFAULT 100
#define PAGE_MAX 1000

/* ---- shared: experiment, model set, paging ------------------------------ */

typedef struct listing {
    store_experiment e;
    int64_t set_id;
    int set_number;
    long offset;
    int limit;
    int has_set;
} listing;

static int parse_limit(const api_request *req, api_response *resp, int *limit)
{
    const char *t = api_query(req, "limit");
    *limit = PAGE_DEFAULT;
    if (!t)
        return 0;
    char *end;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < 1 || v > PAGE_MAX) {
        api_problem(resp, 400, "limit", "must be an integer from 1 to %d, got \"%.40s\"", PAGE_MAX,
                    t);
        return -1;
    }
    *limit = (int)v;
    return 0;
}

/* "<set>.<offset>" */
static int parse_cursor(const char *t, int64_t *set, long *offset)
{
    char *end;
    long long s = strtoll(t, &end, 10);
    if (end == t || *end != '.' || s < 1)
        return -1;
    const char *o = end + 1;
    long off = strtol(o, &end, 10);
    if (end == o || *end || off < 0)
        return -1;
    *set = s;
    *offset = off;
    return 0;
}

/* Loads the experiment and picks the model set (newest, or the cursor's).
 * Returns 0, or -1 after answering. has_set is 0 when there is none yet. */
static int open_listing(api_ctx *ctx, const api_request *req, api_response *resp, PGconn *c,
                        listing *l)
{
    int64_t id;
    store_error err = {0};
    memset(l, 0, sizeof *l);
    if (api_path_id(req, resp, "id", "experiment", &id) < 0 || parse_limit(req, resp, &l->limit) < 0)
        return -1;
    if (store_experiment_get(c, id, &l->e, &err)) {
        api_store_problem(resp, &err);
        return -1;
    }
    const char *cursor = api_query(req, "cursor");
    if (cursor) {
        int bad = parse_cursor(cursor, &l->set_id, &l->offset) < 0;
        if (!bad) { /* a set of this experiment only: ids of others' sets are guessable */
            int rc = store_model_set_of(c, l->set_id, id, &l->set_number, &err);
            if (rc && rc != STORE_NOT_FOUND) {
                api_store_problem(resp, &err);
                store_experiment_free(&l->e);
                return -1;
            }
            bad = rc == STORE_NOT_FOUND;
        }
        if (bad) {
            api_problem(resp, 400, "cursor", "not a cursor this API returned: \"%.40s\"", cursor);
            store_experiment_free(&l->e);
            return -1;
        }
        l->has_set = 1;
        return 0;
    }
    int rc = store_model_set_latest(c, id, &l->set_id, &l->set_number, NULL, 0, &err);
    if (rc && rc != STORE_NOT_FOUND) {
        api_store_problem(resp, &err);
        store_experiment_free(&l->e);
        return -1;
    }
    l->has_set = rc == STORE_OK;
    (void)ctx;
    return 0;
}

static json_t *next_cursor(const listing *l, int got)
{
    if (got < l->limit)
        return json_null();
    char text[48];
    snprintf(text, sizeof text, "%" PRId64 ".%ld", l->set_id, l->offset + got);
    return json_string(text);
}

static json_t *point_json(const double *point, int n, const store_experiment *e)
{
    json_t *o = json_object();
    for (int i = 0; o && i < n && i < e->nparams; i++)
        json_object_set_new(o, e->parameters[i], json_real(point[i]));
    return o;
}

static json_t *doubles_json(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        json_array_append_new(a, json_real(v[i]));
    return a;
}

/* Optional text filter; values of enumerations are checked. */
static int enum_filter(const api_request *req, api_response *resp, const char *name,
                       const char *const *allowed, const char **out)
{
    *out = api_query(req, name);
    if (!*out || !allowed)
        return 0;
    for (int i = 0; allowed[i]; i++)
        if (!strcmp(allowed[i], *out))
            return 0;
    api_problem(resp, 400, name, "unknown value \"%.40s\"", *out);
    return -1;
}

/* The query names a listing takes besides the experiment's factors. */
#define MEASUREMENTS_QUERY "level category phase metric name limit cursor"
#define MODELS_QUERY "level category phase sort metric callpath limit cursor"

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !memcmp(p, name, n))
            return 1;
        p += k + (e ? 1 : 0);
    }
    return 0;
}

/* Every query name is one the route takes or a factor of the experiment, and
 * the factors' levels are named (api/levels.h): *levels is their text[]
 * literal (NULL without factors). 0, or -1 after answering. */
static int listing_levels(api_ctx *ctx, const api_request *req, api_response *resp, int64_t id,
                          const char *allowed, const char *pattern, char **levels)
{
    *levels = NULL;
    store_error err = {0};
    store_experiment e = {0};
    /* the factor declaration never changes: the model cache holds it, so
     * that a listing a dashboard polls costs no database round trip */
    const cached_models *m = model_cache_get(ctx->models, ctx->db, id, &err);
    int cached = m && (m->nfactors == 0 || m->factors_spec[0]);
    int factors = cached && m->nfactors;
    if (factors)
        e.spec = jsonb_parse(m->factors_spec, 0);
    if (m)
        model_cache_release(ctx->models, m);
    if (factors && !e.spec) {
        api_problem(resp, 500, NULL, "out of memory");
        return -1;
    }
    int rc = 0;
    if (!cached) {
        memset(&err, 0, sizeof err);
        PGconn *c = store_acquire(ctx->db, &err);
        rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
        store_release(ctx->db, c);
    }
    if (rc) {
        api_store_problem(resp, &err);
        return -1;
    }
    for (size_t i = 0; i < req->nquery; i++) {
        const char *name = req->query[i].name ? req->query[i].name : "";
        if (!in_list(allowed, name) && !levels_is_factor(e.spec, name) &&
            !(req->strict_route && !strcmp(name, "strict"))) {
            api_problem(resp, 400, name,
                        "unknown query parameter; %s takes: %s and the experiment's factors",
                        pattern, allowed);
            store_experiment_free(&e);
            return -1;
        }
    }
    rc = levels_from_query(e.spec, req, resp, levels);
    store_experiment_free(&e);
    return rc;
}

static const char *const levels[] = {"callpath", "application", NULL};
static const char *const categories[] = {"comp", "comm", "mem", "host", NULL};
static const char *const model_phases[] = {"epoch", "between", NULL};
static const char *const measurement_phases[] = {"train", "validation", "between", "epoch", NULL};

/* ---- GET /v1/experiments/{id}/measurements -------------------------------- */

void api_measurements_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    store_error err = {0};
    store_model_filter f = {0};
    if (enum_filter(req, resp, "level", levels, &f.level) < 0 ||
        enum_filter(req, resp, "category", categories, &f.category) < 0 ||
        enum_filter(req, resp, "phase", measurement_phases, &f.phase) < 0 ||
        enum_filter(req, resp, "metric", NULL, &f.metric) < 0 ||
        enum_filter(req, resp, "name", NULL, &f.name) < 0)
        return;
    int64_t eid;
    char *lv = NULL;
    if (api_path_id(req, resp, "id", "experiment", &eid) < 0 ||
        listing_levels(ctx, req, resp, eid, MEASUREMENTS_QUERY,
                       "/v1/experiments/{id}/measurements", &lv) < 0)
        return;
    f.levels = lv;
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c) {
        free(lv);
        api_store_problem(resp, &err);
        return;
    }
    listing l;
    if (open_listing(ctx, req, resp, c, &l) < 0) {
        free(lv);
        store_release(ctx->db, c);
        return;
    }
    store_measurement_row *rows = NULL;
    int n = 0;
    f.offset = l.offset;
    f.limit = l.limit;
    if (l.has_set && store_measurements_read(c, l.set_id, &f, &rows, &n, &err)) {
        free(lv);
        store_release(ctx->db, c);
        store_experiment_free(&l.e);
        api_store_problem(resp, &err);
        return;
    }
    store_release(ctx->db, c);
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        const store_measurement_row *m = &rows[i];
        json_t *ranks = json_array();
        for (int k = 0; k < m->nranks; k++)
            json_array_append_new(ranks, json_pack("{s:i, s:f}", "rank", m->rank_ids[k], "value",
                                                   m->ranks[k]));
        json_array_append_new(
            list, json_pack("{s:o, s:s, s:s, s:s?, s:s, s:s, s:f, s:o, s:o}", "point",
                            point_json(m->point, m->nparams, &l.e), "level", m->level, "name",
                            m->name, "category", m->category, "metric", m->metric, "phase",
                            m->phase, "value", m->value, "repetitions",
                            doubles_json(m->reps, m->nreps), "ranks", ranks));
        /* load-imbalance factor per repetition, when the set has it */
        if (m->lif_reps)
            json_object_set_new(json_array_get(list, json_array_size(list) - 1),
                                "lif_repetitions", doubles_json(m->lif_reps, m->nlif));
    }
    api_send_json(resp, 200,
                  json_pack("{s:o, s:o, s:o}", "model_set",
                            l.has_set ? json_integer(l.set_number) : json_null(), "measurements", list,
                            "next_cursor", l.has_set ? next_cursor(&l, n) : json_null()));
    store_measurement_rows_free(rows, n);
    store_experiment_free(&l.e);
    free(lv);
}

/* ---- GET /v1/experiments/{id}/models -------------------------------------- */

/* Models stored before warnings had codes keep their texts: they become
 * coded warnings again from the stored bits. */
static void coded_warnings(json_t *o, const json_t *doc)
{
    const json_t *w = json_object_get(doc, "warnings");
    if (!json_array_size(w) || json_is_object(json_array_get(w, 0)))
        return;
    unsigned bits = (unsigned)json_integer_value(json_object_get(doc, "warning_bits"));
    json_t *arr = json_array();
    for (unsigned bit = 1; arr && bit <= PMNF_WARN_LAST; bit <<= 1)
        if (bits & bit)
            json_array_append_new(arr, warning_new(pmnf_warning_code(bit), pmnf_warning_text(bit)));
    json_object_set_new(o, "warnings", arr);
}

static json_t *model_view(const store_model_row *m)
{
    json_t *doc = m->model_json ? jsonb_parse(m->model_json, 0) : NULL;
    json_t *o = json_pack("{s:s, s:s?, s:s, s:s, s:s}", "callpath", m->name, "category",
                          m->category, "metric", m->metric, "level", m->level, "phase", m->phase);
    if (!o) {
        json_decref(doc);
        return NULL;
    }
    if (doc) {
        static const char *const copy[] = {"function", "constant", "terms", "smape", "rss",
                                           "adjusted_r2", "cv_smape", "points", "warnings",
                                           "diagnostics"};
        for (size_t i = 0; i < sizeof copy / sizeof copy[0]; i++) {
            json_t *v = json_object_get(doc, copy[i]);
            if (v)
                json_object_set(o, copy[i], v);
        }
        coded_warnings(o, doc);
        json_object_set_new(o, "growth", json_pack("{s:f, s:f}", "poly", m->growth_poly, "log",
                                                   m->growth_log));
        /* models stored before there were two modelers are Extra-P's */
        json_t *modeler = json_object_get(doc, "modeler");
        json_object_set_new(o, "modeler", modeler ? json_incref(modeler) : json_string("extrap"));
    } else {
        json_object_set_new(o, "function", json_null());
        json_object_set_new(o, "points", json_integer(m->points));
        json_object_set_new(o, "reason", json_string(m->reason ? m->reason : "not modeled"));
    }
    json_decref(doc);
    return o;
}

/* The set a listing reads: the cursor's, else the newest (from the model
 * cache, so a listing a dashboard polls costs no database round trip).
 * 0 = none yet, 1 = *set chosen, -1 = answered. */
static int listing_set(api_ctx *ctx, const api_request *req, api_response *resp, int64_t id,
                       int64_t *set, int *number, long *offset)
{
    const char *cursor = api_query(req, "cursor");
    store_error err = {0};
    const cached_models *m = model_cache_get(ctx->models, ctx->db, id, &err);
    if (!m && err.code != STORE_CONFLICT) {
        api_store_problem(resp, &err);
        return -1;
    }
    *offset = 0;
    if (m) {
        *set = m->set_id;
        *number = m->set_number;
        model_cache_release(ctx->models, m);
    }
    int bad = cursor && parse_cursor(cursor, set, offset) < 0;
    if (cursor && !bad) { /* a set of this experiment only: ids of others' sets are guessable */
        PGconn *c = store_acquire(ctx->db, &err);
        int rc = c ? store_model_set_of(c, *set, id, number, &err) : err.code;
        store_release(ctx->db, c);
        if (rc && rc != STORE_NOT_FOUND) {
            api_store_problem(resp, &err);
            return -1;
        }
        bad = rc == STORE_NOT_FOUND;
    }
    if (bad) {
        api_problem(resp, 400, "cursor", "not a cursor this API returned: \"%.40s\"", cursor);
        return -1;
    }
    return m || cursor ? 1 : 0;
}

/* The too-noisy points of set set_id of experiment id (api/noisy.h): the
 * model cache's when it holds that set, else scanned here (once per
 * rendered page: pages of a set are kept). Failures: none named. */
static void set_noisy(api_ctx *ctx, int64_t id, int64_t set_id, noisy_points *np)
{
    store_error err = {0};
    memset(np, 0, sizeof *np);
    const cached_models *m = model_cache_get(ctx->models, ctx->db, id, &err);
    if (!m)
        return;
    if (m->set_id == set_id) {
        *np = m->noisy;
    } else {
        store_measurement_row *rows = NULL;
        int n = 0;
        store_model_filter f = {.level = "application", .name = "epoch", .limit = 100000};
        PGconn *c = store_acquire(ctx->db, &err);
        if (c && store_repetitions_read(c, set_id, &f, &rows, &n, &err) == STORE_OK)
            noisy_points_scan(&(noisy_names){m->params, m->nparams, m->factors, m->nfactors},
                              rows, n, np);
        if (c)
            store_release(ctx->db, c);
        store_measurement_rows_free(rows, n);
    }
    model_cache_release(ctx->models, m);
}

void api_models_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const sorts[] = {"growth", "name", NULL};
    store_error err = {0};
    store_model_filter f = {0};
    const char *sort;
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0 ||
        enum_filter(req, resp, "level", levels, &f.level) < 0 ||
        enum_filter(req, resp, "category", categories, &f.category) < 0 ||
        enum_filter(req, resp, "phase", model_phases, &f.phase) < 0 ||
        enum_filter(req, resp, "sort", sorts, &sort) < 0 ||
        enum_filter(req, resp, "metric", NULL, &f.metric) < 0 ||
        enum_filter(req, resp, "callpath", NULL, &f.name) < 0 || parse_limit(req, resp, &f.limit) < 0)
        return;
    f.by_growth = sort && !strcmp(sort, "growth");
    char *lv = NULL;
    if (listing_levels(ctx, req, resp, id, MODELS_QUERY, "/v1/experiments/{id}/models", &lv) < 0)
        return;
    listing l = {.limit = f.limit};
    int have = listing_set(ctx, req, resp, id, &l.set_id, &l.set_number, &l.offset);
    if (have <= 0)
        free(lv);
    if (have < 0)
        return;
    if (!have) {
        api_send_json(resp, 200, json_pack("{s:n, s:[], s:n}", "model_set", "models",
                                           "next_cursor"));
        return;
    }
    f.offset = l.offset;
    f.levels = lv;
    /* model sets never change: a rendered page is good for as long as it is kept */
    char key[1600];
    snprintf(key, sizeof key, "%" PRId64 "|%ld|%d|%d|%s|%s|%s|%s|%.600s|%.600s", l.set_id,
             l.offset, f.limit, f.by_growth, f.metric ? f.metric : "", f.level ? f.level : "",
             f.category ? f.category : "", f.phase ? f.phase : "", f.name ? f.name : "",
             lv ? lv : "");
    if (predict_page_send(ctx, key, resp)) {
        free(lv);
        return;
    }
    PGconn *c = store_acquire(ctx->db, &err);
    store_model_row *rows = NULL;
    int n = 0;
    if (!c || store_models_read(c, l.set_id, &f, &rows, &n, &err)) {
        free(lv);
        store_release(ctx->db, c);
        api_store_problem(resp, &err);
        return;
    }
    free(lv);
    store_release(ctx->db, c);
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, model_view(&rows[i]));
    store_model_rows_free(rows, n);
    json_t *doc = json_pack("{s:i, s:o, s:o}", "model_set", l.set_number, "models", list,
                            "next_cursor", next_cursor(&l, n));
    noisy_points np;
    set_noisy(ctx, id, l.set_id, &np);
    noisy_points_attach(doc, &np);
    size_t len = 0;
    char *body = doc ? api_json_text(doc, &len) : NULL;
    json_decref(doc);
    predict_page_store_text(ctx, key, resp, body, len);
}

/* ---- GET /v1/experiments/{id}/predict -------------------------------------- */

static json_t *prediction_json(const char *metric, const prediction *p, const char *function)
{
    json_t *o = json_object();
    json_object_set_new(o, metric, json_real(p->value));
    json_object_set_new(o, "interval", p->has_interval ? json_pack("[f, f]", p->lo, p->hi)
                                                       : json_null());
    if (function)
        json_object_set_new(o, "function", json_string(function));
    return o;
}

void api_predict(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    /* model sets never change: the answer is rendered once per set and query */
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    static const char *const allowed[] = {"metric", NULL};
    double point[PMNF_MAX_PARAMS];
    const char *metric = api_query(req, "metric");
    if (!metric)
        metric = "time";
    int slot = predict_metric_slot(m, metric);
    if (predict_query_point(req, resp, m, allowed, point) < 0) {
        model_cache_release(ctx->models, m);
        return;
    }
    if (slot < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        model_cache_release(ctx->models, m);
        return;
    }
    const cached_part *parts = m->parts[slot];
    int composed;
    prediction epoch = predict_epoch(parts, point, &composed);
    if (!composed && !parts[3].present) {
        api_problem(resp, 409, NULL, "the epoch of metric \"%.60s\" has no model: %s", metric,
                    parts[3].reason);
        model_cache_release(ctx->models, m);
        return;
    }
    if (predict_finite(resp, m, parts, point, metric, NULL) < 0) { /* no answer of nulls */
        model_cache_release(ctx->models, m);
        return;
    }
    json_t *doc = json_pack("{s:I, s:i, s:s, s:o}", "experiment", (json_int_t)id, "model_set",
                            m->set_number, "metric", metric, "point", predict_point_json(m, point));
    json_t *ej = prediction_json(metric, &epoch, composed ? NULL : parts[3].function);
    json_t *imb = predict_imbalance_json(parts, point, metric); /* null when none */
    json_object_set_new(ej, "composed_from",
                        !composed ? json_array()
                        : json_is_null(imb) ? json_pack("[s, s, s]", "comp", "comm", "mem")
                                            : json_pack("[s, s, s, s]", "comp", "comm", "mem",
                                                        "imbalance"));
    /* the modeler of the models behind the epoch (all of a set share one) */
    const cached_part *any = parts[3].present ? &parts[3] : &parts[0];
    for (int i = 0; i < 3 && !any->present; i++)
        any = &parts[i];
    json_object_set_new(ej, "modeler", json_string(pmnf_modeler_name(any->model.modeler)));
    json_object_set_new(doc, "epoch", ej);
    static const char *const names[3] = {"comp", "comm", "mem"};
    for (int i = 0; i < 3; i++) {
        if (parts[i].present) {
            prediction p = predict_part(&parts[i], point);
            json_t *pj = prediction_json(metric, &p, parts[i].function);
            json_object_set_new(pj, "modeler",
                                json_string(pmnf_modeler_name(parts[i].model.modeler)));
            json_object_set_new(doc, names[i], pj);
        } else {
            json_object_set_new(doc, names[i], json_null());
        }
    }
    int has_imb = !json_is_null(imb);
    if (has_imb) /* what the slowest rank adds to the parts (api/predict.h) */
        json_object_set_new(doc, "imbalance", imb);
    else
        json_decref(imb);
    json_object_set_new(doc, "extrapolation", predict_extrapolation_json(m, point));
    const char *unit = predict_unit(metric);
    json_object_set_new(doc, "units", json_pack("{s:s, s:s, s:s, s:s, s:s}", "epoch", unit, "comp",
                                                unit, "comm", unit, "mem", unit, "interval",
                                                "95% prediction interval, same unit"));
    if (has_imb)
        json_object_set_new(json_object_get(doc, "units"), "imbalance", json_string(unit));
    predict_warnings_at(doc, m, slot, point);
    noisy_points_attach(doc, &m->noisy); /* the too-noisy points it rests on */
    model_cache_release(ctx->models, m);
    predict_page_store(ctx, key, resp, doc);
}
