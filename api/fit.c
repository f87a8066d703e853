/*
 * fit.c — POST /v1/fit: models for the points a caller sends, nothing stored.
 *
 * The body is an Extra-P input file (text, JSON, JSON Lines, TaLPas: format
 * from ?format=, else recognized from the bytes) or perfcast's own
 * {"parameters":["ranks"],"points":[{"point":[2],"values":[1.2,1.3]}],
 *  "callpath":"...","metric":"...","measure":"mean|median","options":{...},
 *  "modeler":"extrap|robust","predict":[[64],[128]]}. Answers {"models":[...]}:
 * one model per (callpath, metric) in the shape `perfcast model --json`
 * prints, with predictions and 95% intervals at the requested points for
 * perfcast JSON, each with its coded warnings (api/warnings.h). The modeler
 * is the robust one (PMNF_MODELER_DEFAULT) unless ?modeler= or "modeler"
 * says extrap; the robust modeler gets every repetition.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/handlers.h"
#include "api/warnings.h"
#include "modeling/model_json.h"
#include "ingest/extrap.h"
#include "modeling/modeler.h"

#define FIT_MAX_POINTS 100000
#define FIT_MAX_REPS 10000

static ingest_format format_of(const api_request *req, api_response *resp, int *is_perfcast)
{
    const char *f = api_query(req, "format");
    *is_perfcast = 0;
    if (f && !strcmp(f, "perfcast")) {
        *is_perfcast = 1;
        return INGEST_FORMAT_UNKNOWN;
    }
    if (f) {
        /* the names of ingest/extrap.h, the short ones as aliases */
        ingest_format fmt = ingest_extrap_format_from_name(f);
        if (fmt != INGEST_FORMAT_UNKNOWN)
            return fmt;
        api_problem(resp, 415, "format",
                    "unknown format \"%.40s\" (perfcast, extrap-text, extrap-json, extrap-jsonl, "
                    "talpas)",
                    f);
        return (ingest_format)-1;
    }
    /* recognize: a JSON object with "points" is perfcast's; else Extra-P's */
    size_t i = 0;
    while (i < req->body_len && strchr(" \t\r\n", req->body[i]))
        i++;
    if (i < req->body_len && req->body[i] == '{') {
        if (memmem(req->body, req->body_len, "\"points\"", 8) &&
            !memmem(req->body, req->body_len, "\"measurements\"", 14)) {
            *is_perfcast = 1;
            return INGEST_FORMAT_UNKNOWN;
        }
        const char *nl = memchr(req->body + i, '\n', req->body_len - i);
        int talpas = nl && memchr(req->body + i, ';', (size_t)(nl - req->body - i)) != NULL;
        return talpas ? INGEST_FORMAT_TALPAS : INGEST_FORMAT_EXTRAP_JSON;
    }
    return INGEST_FORMAT_EXTRAP_TEXT;
}

static json_t *fit_one(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps,
                       const char *const *names, const char *callpath, const char *metric,
                       api_response *resp)
{
    pmnf_model model;
    char err[256];
    if (pmnf_fit_reps(m, d, reps, &model, err, sizeof err) < 0) {
        api_problem(resp, 400, "points", "%s;%s: %s", callpath, metric, err);
        return NULL;
    }
    json_t *o = api_model_to_json(&model, names, 0);
    json_object_set_new(o, "callpath", json_string(callpath));
    json_object_set_new(o, "metric", json_string(metric));
    return o;
}

static void fit_extrap(api_ctx *ctx, api_request *req, api_response *resp, ingest_format fmt,
                       const pmnf_options *o)
{
    (void)ctx;
    ingest_experiment e;
    ingest_error ie;
    if (ingest_extrap_read(req->body, req->body_len, fmt, &e, &ie) < 0) {
        api_problem(resp, 400, "body", "%s", ie.msg);
        return;
    }
    pmnf_modeler *m = pmnf_modeler_new(o);
    json_t *models = json_array();
    double *coords = NULL, *values = NULL, *scratch = NULL;
    int ok = m && models;
    for (int i = 0; ok && i < e.nseries; i++) {
        const ingest_series *s = &e.series[i];
        free(coords);
        free(values);
        free(scratch);
        coords = malloc(sizeof(double) * (size_t)s->npoints * e.nparams);
        values = malloc(sizeof(double) * (size_t)s->npoints);
        scratch = malloc(sizeof(double) * (size_t)(s->rep_start[s->npoints] + 1));
        if (!coords || !values || !scratch) {
            ok = 0;
            break;
        }
        for (int j = 0; j < s->npoints; j++) {
            memcpy(coords + (size_t)j * e.nparams, e.coords + (size_t)s->coord[j] * e.nparams,
                   sizeof(double) * (size_t)e.nparams);
            values[j] = pmnf_aggregate(s->values + s->rep_start[j],
                                       s->rep_start[j + 1] - s->rep_start[j], o->measure, scratch);
        }
        pmnf_data d = {e.nparams, s->npoints, coords, values};
        json_t *one = fit_one(m, &d, &(pmnf_reps){s->rep_start, s->values},
                              (const char *const *)e.params, e.callpaths[s->callpath],
                              e.metrics[s->metric], resp);
        if (!one) {
            ok = -1;
            break;
        }
        json_array_append_new(models, one);
    }
    free(coords);
    free(values);
    free(scratch);
    pmnf_modeler_free(m);
    ingest_experiment_free(&e);
    if (ok == 1)
        api_send_json(resp, 200, json_pack("{s:o}", "models", models));
    else
        json_decref(models);
    if (ok == 0)
        api_problem(resp, 500, NULL, "out of memory");
}

/* ---- perfcast's JSON ------------------------------------------------------ */

static int read_names(const json_t *doc, api_response *resp, const char **names, int *n)
{
    const json_t *p = json_object_get(doc, "parameters");
    if (!json_is_array(p) || json_array_size(p) < 1 || json_array_size(p) > PMNF_MAX_PARAMS) {
        api_problem(resp, 400, "parameters", "must be an array of 1 to %d names", PMNF_MAX_PARAMS);
        return -1;
    }
    *n = (int)json_array_size(p);
    for (int i = 0; i < *n; i++) {
        names[i] = json_string_value(json_array_get(p, (size_t)i));
        if (!names[i] || !*names[i]) {
            api_problem(resp, 400, "parameters", "item %d must be a non-empty string", i);
            return -1;
        }
    }
    return 0;
}

static int read_number(const json_t *v, double *out)
{
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return isfinite(*out) ? 0 : -1;
}

/* A coordinate or value beyond what the modeler takes (PMNF_MAX_MAGNITUDE):
 * 400 naming field and the limit. */
static int beyond_limit(api_response *resp, const char *field, const char *what, double v)
{
    if (fabs(v) <= PMNF_MAX_MAGNITUDE)
        return 0;
    api_problem(resp, 400, field,
                "%s is %g: beyond +-%g, the largest magnitude of a coordinate or value perfcast "
                "models",
                what, v, PMNF_MAX_MAGNITUDE);
    return -1;
}

/* The repetitions of all points, for the robust modeler. */
typedef struct fit_reps {
    int *start;
    double *values;
} fit_reps;

static size_t count_reps(const json_t *pts)
{
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(pts); i++)
        total += json_array_size(json_object_get(json_array_get(pts, i), "values"));
    return total;
}

/* points -> coords, aggregated values and the repetitions */
static int read_points(const json_t *doc, int nparams, pmnf_measure measure, api_response *resp,
                       double **coords, double **values, fit_reps *reps, int *npoints)
{
    const json_t *pts = json_object_get(doc, "points");
    size_t n = json_array_size(pts);
    if (!json_is_array(pts) || n < 1 || n > FIT_MAX_POINTS) {
        api_problem(resp, 400, "points", "must be an array of 1 to %d points", FIT_MAX_POINTS);
        return -1;
    }
    *coords = malloc(sizeof(double) * n * (size_t)nparams);
    *values = malloc(sizeof(double) * n);
    reps->start = malloc(sizeof(int) * (n + 1));
    reps->values = malloc(sizeof(double) * (count_reps(pts) + 1));
    double *scratch = malloc(sizeof(double) * FIT_MAX_REPS);
    if (reps->start)
        reps->start[0] = 0;
    if (!*coords || !*values || !scratch || !reps->start || !reps->values) {
        free(scratch);
        api_problem(resp, 500, NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *pt = json_array_get(pts, i);
        const json_t *c = json_object_get(pt, "point"), *v = json_object_get(pt, "values");
        char field[64];
        snprintf(field, sizeof field, "points[%zu].point", i);
        if (!json_is_array(c) || json_array_size(c) != (size_t)nparams) {
            api_problem(resp, 400, field, "must be an array of %d numbers", nparams);
            free(scratch);
            return -1;
        }
        for (int q = 0; q < nparams; q++) {
            char item[32];
            snprintf(item, sizeof item, "item %d", q);
            if (read_number(json_array_get(c, (size_t)q), *coords + i * nparams + q) < 0) {
                api_problem(resp, 400, field, "item %d is not a finite number", q);
                free(scratch);
                return -1;
            }
            if (beyond_limit(resp, field, item, (*coords)[i * nparams + q])) {
                free(scratch);
                return -1;
            }
        }
        snprintf(field, sizeof field, "points[%zu].values", i);
        size_t nv = json_array_size(v);
        if (!json_is_array(v) || nv < 1 || nv > FIT_MAX_REPS) {
            api_problem(resp, 400, field, "must be an array of 1 to %d numbers", FIT_MAX_REPS);
            free(scratch);
            return -1;
        }
        double *tmp = malloc(sizeof(double) * nv);
        for (size_t r = 0; tmp && r < nv; r++) {
            char item[32];
            snprintf(item, sizeof item, "item %zu", r);
            int bad = read_number(json_array_get(v, r), &tmp[r]) < 0;
            if (bad)
                api_problem(resp, 400, field, "item %zu is not a finite number", r);
            if (bad || beyond_limit(resp, field, item, tmp[r])) {
                free(tmp);
                free(scratch);
                return -1;
            }
        }
        if (!tmp) {
            free(scratch);
            api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
        (*values)[i] = pmnf_aggregate(tmp, (int)nv, measure, scratch);
        memcpy(reps->values + reps->start[i], tmp, sizeof(double) * nv);
        reps->start[i + 1] = reps->start[i] + (int)nv;
        free(tmp);
    }
    free(scratch);
    *npoints = (int)n;
    return 0;
}

/* 400 naming the first option the chosen modeler does not use. */
static int check_options(const pmnf_options *o, api_response *resp, const char *prefix)
{
    char err[256], field[128];
    const char *key;
    if (pmnf_options_check(o, &key, err, sizeof err) == 0)
        return 0;
    snprintf(field, sizeof field, "%s%s", prefix, key);
    api_problem(resp, 400, field, "%s", err);
    return -1;
}

static int read_options(const json_t *doc, api_response *resp, pmnf_options *o)
{
    const char *measure = json_string_value(json_object_get(doc, "measure"));
    char err[256];
    if (measure && pmnf_options_set(o, "measure", measure, err, sizeof err) < 0) {
        api_problem(resp, 400, "measure", "must be \"mean\" or \"median\"");
        return -1;
    }
    const json_t *modeler = json_object_get(doc, "modeler");
    if (modeler && (!json_is_string(modeler) ||
                    pmnf_options_apply(o, "modeler", json_string_value(modeler), err,
                                       sizeof err) < 0)) {
        api_problem(resp, 400, "modeler", "unknown modeler %s: must be \"robust\" or \"extrap\"",
                    json_is_string(modeler) ? json_string_value(modeler) : "(not a string)");
        return -1;
    }
    const json_t *opts = json_object_get(doc, "options");
    if (opts && !json_is_object(opts)) {
        api_problem(resp, 400, "options", "must be an object");
        return -1;
    }
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)opts, key, v)
    {
        char text[256];
        if (json_is_string(v))
            snprintf(text, sizeof text, "%s", json_string_value(v));
        else if (json_is_boolean(v))
            snprintf(text, sizeof text, "%s", json_is_true(v) ? "true" : "false");
        else if (json_is_number(v))
            snprintf(text, sizeof text, "%.17g", json_number_value(v));
        else
            text[0] = '\0';
        if (!strcasecmp(key, "modeler") ||
            pmnf_options_apply(o, key, text, err, sizeof err) < 0) {
            char field[128];
            snprintf(field, sizeof field, "options.%.100s", key);
            api_problem(resp, 400, field, "%s",
                        strcasecmp(key, "modeler") ? err : "the modeler is the member \"modeler\"");
            return -1;
        }
    }
    return check_options(o, resp, "options.");
}

static json_t *predictions(const json_t *doc, const pmnf_model *model, int nparams,
                           const char *const *names, api_response *resp, int *bad)
{
    const json_t *ask = json_object_get(doc, "predict");
    json_t *out = json_array();
    *bad = 0;
    if (!ask)
        return out;
    if (!json_is_array(ask) || json_array_size(ask) > 10000) {
        api_problem(resp, 400, "predict", "must be an array of points");
        *bad = 1;
        return out;
    }
    for (size_t i = 0; i < json_array_size(ask); i++) {
        const json_t *p = json_array_get(ask, i);
        double point[PMNF_MAX_PARAMS], v, lo, hi;
        int ok = json_is_array(p) && json_array_size(p) == (size_t)nparams;
        for (int q = 0; ok && q < nparams; q++)
            ok = read_number(json_array_get(p, (size_t)q), &point[q]) == 0;
        if (!ok) {
            char field[48];
            snprintf(field, sizeof field, "predict[%zu]", i);
            api_problem(resp, 400, field, "must be an array of %d finite numbers", nparams);
            *bad = 1;
            return out;
        }
        int no_interval = pmnf_predict(model, point, &v, &lo, &hi);
        json_t *w = json_array();
        pmnf_point_warnings_json(w, model, point, names, NULL);
        /* far outside the points a term may overflow: no number then */
        int finite = isfinite(v) && isfinite(lo) && isfinite(hi);
        json_array_append_new(out, json_pack("{s:o, s:o, s:o, s:o}", "point", json_pack("[]"),
                                             "value", isfinite(v) ? json_real(v) : json_null(),
                                             "interval",
                                             no_interval || !finite ? json_null()
                                                                    : json_pack("[f, f]", lo, hi),
                                             "warnings", w));
        json_t *pj = json_object_get(json_array_get(out, i), "point");
        for (int q = 0; q < nparams; q++)
            json_array_append_new(pj, json_real(point[q]));
    }
    return out;
}

static void fit_perfcast(api_request *req, api_response *resp, pmnf_options *o)
{
    json_t *doc;
    if (api_parse_object(req, resp, &doc) < 0)
        return;
    const char *names[PMNF_MAX_PARAMS];
    int nparams;
    double *coords = NULL, *values = NULL;
    fit_reps reps = {NULL, NULL};
    int npoints;
    if (read_names(doc, resp, names, &nparams) < 0 || read_options(doc, resp, o) < 0 ||
        read_points(doc, nparams, o->measure, resp, &coords, &values, &reps, &npoints) < 0) {
        free(coords);
        free(values);
        free(reps.start);
        free(reps.values);
        json_decref(doc);
        return;
    }
    const char *callpath = json_string_value(json_object_get(doc, "callpath"));
    const char *metric = json_string_value(json_object_get(doc, "metric"));
    pmnf_modeler *m = pmnf_modeler_new(o);
    pmnf_model model;
    char err[256];
    pmnf_data d = {nparams, npoints, coords, values};
    pmnf_reps r = {reps.start, reps.values};
    if (!m || pmnf_fit_reps(m, &d, &r, &model, err, sizeof err) < 0) {
        api_problem(resp, 400, "points", "%s", m ? err : "out of memory");
    } else {
        json_t *one = api_model_to_json(&model, names, 0);
        json_object_set_new(one, "callpath", json_string(callpath ? callpath : "<root>"));
        json_object_set_new(one, "metric", json_string(metric ? metric : "<default>"));
        int bad;
        json_t *pred = predictions(doc, &model, nparams, names, resp, &bad);
        json_object_set_new(one, "predictions", pred);
        if (!bad)
            api_send_json(resp, 200, json_pack("{s:[o]}", "models", one));
        else
            json_decref(one);
    }
    pmnf_modeler_free(m);
    free(coords);
    free(values);
    free(reps.start);
    free(reps.values);
    json_decref(doc);
}

void api_fit(api_ctx *ctx, api_request *req, api_response *resp)
{
    int is_perfcast;
    ingest_format fmt = format_of(req, resp, &is_perfcast);
    if ((int)fmt < 0)
        return;
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_DEFAULT;
    const char *measure = api_query(req, "measure");
    char err[256];
    if (measure && pmnf_options_set(&o, "measure", measure, err, sizeof err) < 0) {
        api_problem(resp, 400, "measure", "must be mean or median");
        return;
    }
    const char *modeler = api_query(req, "modeler");
    if (modeler && pmnf_options_apply(&o, "modeler", modeler, err, sizeof err) < 0) {
        api_problem(resp, 400, "modeler", "unknown modeler \"%.40s\": must be robust, extrap or segmented",
                    modeler);
        return;
    }
    if (is_perfcast)
        fit_perfcast(req, resp, &o);
    else
        fit_extrap(ctx, req, resp, fmt, &o);
}
