/*
 * fit_request.c — models for points a caller sends (analysis/fit_request.h):
 * the format of the input, perfcast's document read into points,
 * repetitions, options and prediction points, and the fits.
 */
#include "analysis/fit_request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "modeling/model_json.h"
#include "modeling/warning_json.h"

int fit_request_format(const char *name, const char *body, size_t len, ingest_format *fmt,
                       int *is_perfcast, an_problem *p)
{
    *is_perfcast = 0;
    *fmt = INGEST_FORMAT_UNKNOWN;
    if (name && !strcmp(name, "perfcast")) {
        *is_perfcast = 1;
        return 0;
    }
    if (name) {
        /* the names of ingest/extrap.h, the short ones as aliases */
        *fmt = ingest_extrap_format_from_name(name);
        if (*fmt != INGEST_FORMAT_UNKNOWN)
            return 0;
        return an_problem_set(p, 415, "format",
                              "unknown format \"%.40s\" (perfcast, extrap-text, extrap-json, "
                              "extrap-jsonl, talpas)",
                              name);
    }
    /* recognize: a JSON object with "points" is perfcast's; else Extra-P's */
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", body[i]))
        i++;
    if (i < len && body[i] == '{') {
        if (memmem(body, len, "\"points\"", 8) && !memmem(body, len, "\"measurements\"", 14)) {
            *is_perfcast = 1;
            return 0;
        }
        const char *nl = memchr(body + i, '\n', len - i);
        int talpas = nl && memchr(body + i, ';', (size_t)(nl - body - i)) != NULL;
        *fmt = talpas ? INGEST_FORMAT_TALPAS : INGEST_FORMAT_EXTRAP_JSON;
        return 0;
    }
    *fmt = INGEST_FORMAT_EXTRAP_TEXT;
    return 0;
}

int fit_series_prepare(const ingest_experiment *e, const ingest_series *s, pmnf_measure measure,
                       fit_series_buf *b, pmnf_data *d)
{
    if (s->npoints > b->cap) {
        free(b->coords);
        free(b->values);
        b->coords = malloc(sizeof(double) * (size_t)s->npoints * e->nparams);
        b->values = malloc(sizeof(double) * (size_t)s->npoints);
        b->cap = b->coords && b->values ? s->npoints : 0;
        if (!b->cap)
            return -1;
    }
    for (int j = 0; j < s->npoints; j++) {
        int reps = s->rep_start[j + 1] - s->rep_start[j];
        if (reps > b->rep_cap) {
            free(b->scratch);
            b->scratch = malloc(sizeof(double) * (size_t)reps);
            b->rep_cap = b->scratch ? reps : 0;
            if (!b->scratch)
                return -1;
        }
        memcpy(b->coords + (size_t)j * e->nparams, e->coords + (size_t)s->coord[j] * e->nparams,
               sizeof(double) * (size_t)e->nparams);
        b->values[j] = pmnf_aggregate(s->values + s->rep_start[j], reps, measure, b->scratch);
    }
    *d = (pmnf_data){e->nparams, s->npoints, b->coords, b->values};
    return 0;
}

void fit_series_buf_free(fit_series_buf *b)
{
    free(b->coords);
    free(b->values);
    free(b->scratch);
    *b = (fit_series_buf){0};
}

int fit_series_model(pmnf_modeler *m, const ingest_experiment *e, const ingest_series *s,
                     pmnf_measure measure, fit_series_buf *b, pmnf_model *model, char *err,
                     size_t errcap)
{
    pmnf_data d;
    if (fit_series_prepare(e, s, measure, b, &d) < 0)
        return -1;
    if (pmnf_fit_reps(m, &d, &(pmnf_reps){s->rep_start, s->values}, model, err, errcap) < 0)
        return -2;
    return 0;
}

json_t *fit_request_extrap(const char *body, size_t len, ingest_format fmt, const pmnf_options *o,
                           an_problem *p)
{
    ingest_experiment e;
    ingest_error ie;
    if (ingest_extrap_read(body, len, fmt, &e, &ie) < 0) {
        an_problem_set(p, 400, "body", "%s", ie.msg);
        return NULL;
    }
    pmnf_modeler *m = pmnf_modeler_new(o);
    json_t *models = json_array();
    fit_series_buf b = {0};
    int ok = m && models;
    for (int i = 0; ok == 1 && i < e.nseries; i++) {
        const ingest_series *s = &e.series[i];
        pmnf_model model;
        char err[256];
        int rc = fit_series_model(m, &e, s, o->measure, &b, &model, err, sizeof err);
        if (rc == -2)
            an_problem_set(p, 400, "points", "%s;%s: %s", e.callpaths[s->callpath],
                           e.metrics[s->metric], err);
        if (rc < 0) {
            ok = rc == -1 ? 0 : -1;
            break;
        }
        json_t *one = api_model_to_json(&model, (const char *const *)e.params, 0);
        json_object_set_new(one, "callpath", json_string(e.callpaths[s->callpath]));
        json_object_set_new(one, "metric", json_string(e.metrics[s->metric]));
        json_array_append_new(models, one);
    }
    fit_series_buf_free(&b);
    pmnf_modeler_free(m);
    ingest_experiment_free(&e);
    if (ok == 1)
        return json_pack("{s:o}", "models", models);
    json_decref(models);
    if (ok == 0)
        an_problem_set(p, 500, NULL, "out of memory");
    return NULL;
}

/* ---- perfcast's document ----------------------------------------------------------------- */

static int read_names(const json_t *doc, const char **names, int *n, an_problem *p)
{
    const json_t *par = json_object_get(doc, "parameters");
    if (!json_is_array(par) || json_array_size(par) < 1 ||
        json_array_size(par) > PMNF_MAX_PARAMS)
        return an_problem_set(p, 400, "parameters", "must be an array of 1 to %d names",
                              PMNF_MAX_PARAMS);
    *n = (int)json_array_size(par);
    for (int i = 0; i < *n; i++) {
        names[i] = json_string_value(json_array_get(par, (size_t)i));
        if (!names[i] || !*names[i])
            return an_problem_set(p, 400, "parameters", "item %d must be a non-empty string", i);
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
static int beyond_limit(const char *field, const char *what, double v, an_problem *p)
{
    if (fabs(v) <= PMNF_MAX_MAGNITUDE)
        return 0;
    return an_problem_set(p, 400, field,
                          "%s is %g: beyond +-%g, the largest magnitude of a coordinate or value "
                          "perfcast models",
                          what, v, PMNF_MAX_MAGNITUDE);
}

/* The points: coordinates, aggregated values and every repetition. */
typedef struct fit_points {
    double *coords, *values;
    int *start;        /* repetitions of point i: values[start[i] .. start[i+1]) */
    double *reps;
    int n;
} fit_points;

static void fit_points_free(fit_points *f)
{
    free(f->coords);
    free(f->values);
    free(f->start);
    free(f->reps);
}

static size_t count_reps(const json_t *pts)
{
    size_t total = 0;
    for (size_t i = 0; i < json_array_size(pts); i++)
        total += json_array_size(json_object_get(json_array_get(pts, i), "values"));
    return total;
}

/* Point i's coordinate into f. 0 or -1 with p. */
static int read_coordinate(const json_t *c, size_t i, int nparams, fit_points *f, an_problem *p)
{
    char field[64];
    snprintf(field, sizeof field, "points[%zu].point", i);
    if (!json_is_array(c) || json_array_size(c) != (size_t)nparams)
        return an_problem_set(p, 400, field, "must be an array of %d numbers", nparams);
    for (int q = 0; q < nparams; q++) {
        char item[32];
        snprintf(item, sizeof item, "item %d", q);
        if (read_number(json_array_get(c, (size_t)q), f->coords + i * nparams + q) < 0)
            return an_problem_set(p, 400, field, "item %d is not a finite number", q);
        if (beyond_limit(field, item, f->coords[i * nparams + q], p))
            return -1;
    }
    return 0;
}

/* Point i's repetitions into f, and their aggregate. 0 or -1 with p. */
static int read_values(const json_t *v, size_t i, pmnf_measure measure, double *scratch,
                       fit_points *f, an_problem *p)
{
    char field[64];
    snprintf(field, sizeof field, "points[%zu].values", i);
    size_t nv = json_array_size(v);
    if (!json_is_array(v) || nv < 1 || nv > FIT_MAX_REPS)
        return an_problem_set(p, 400, field, "must be an array of 1 to %d numbers", FIT_MAX_REPS);
    double *tmp = malloc(sizeof(double) * nv);
    for (size_t r = 0; tmp && r < nv; r++) {
        char item[32];
        snprintf(item, sizeof item, "item %zu", r);
        int bad = read_number(json_array_get(v, r), &tmp[r]) < 0;
        if (bad)
            an_problem_set(p, 400, field, "item %zu is not a finite number", r);
        if (bad || beyond_limit(field, item, tmp[r], p)) {
            free(tmp);
            return -1;
        }
    }
    if (!tmp)
        return an_problem_set(p, 500, NULL, "out of memory");
    f->values[i] = pmnf_aggregate(tmp, (int)nv, measure, scratch);
    memcpy(f->reps + f->start[i], tmp, sizeof(double) * nv);
    f->start[i + 1] = f->start[i] + (int)nv;
    free(tmp);
    return 0;
}

static int read_points(const json_t *doc, int nparams, pmnf_measure measure, fit_points *f,
                       an_problem *p)
{
    const json_t *pts = json_object_get(doc, "points");
    size_t n = json_array_size(pts);
    if (!json_is_array(pts) || n < 1 || n > FIT_MAX_POINTS)
        return an_problem_set(p, 400, "points", "must be an array of 1 to %d points",
                              FIT_MAX_POINTS);
    f->coords = malloc(sizeof(double) * n * (size_t)nparams);
    f->values = malloc(sizeof(double) * n);
    f->start = malloc(sizeof(int) * (n + 1));
    f->reps = malloc(sizeof(double) * (count_reps(pts) + 1));
    double *scratch = malloc(sizeof(double) * FIT_MAX_REPS);
    if (!f->coords || !f->values || !scratch || !f->start || !f->reps) {
        free(scratch);
        return an_problem_set(p, 500, NULL, "out of memory");
    }
    f->start[0] = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *pt = json_array_get(pts, i);
        if (read_coordinate(json_object_get(pt, "point"), i, nparams, f, p) < 0 ||
            read_values(json_object_get(pt, "values"), i, measure, scratch, f, p) < 0) {
            free(scratch);
            return -1;
        }
    }
    free(scratch);
    f->n = (int)n;
    return 0;
}

/* One member of "options" as the text pmnf_options_apply takes. */
static void option_text(const json_t *v, char *text, size_t cap)
{
    if (json_is_string(v))
        snprintf(text, cap, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(text, cap, "%s", json_is_true(v) ? "true" : "false");
    else if (json_is_number(v))
        snprintf(text, cap, "%.17g", json_number_value(v));
    else
        text[0] = '\0';
}

static int read_options(const json_t *doc, pmnf_options *o, an_problem *p)
{
    const char *measure = json_string_value(json_object_get(doc, "measure"));
    char err[256];
    if (measure && pmnf_options_set(o, "measure", measure, err, sizeof err) < 0)
        return an_problem_set(p, 400, "measure", "must be \"mean\" or \"median\"");
    const json_t *modeler = json_object_get(doc, "modeler");
    if (modeler && (!json_is_string(modeler) ||
                    pmnf_options_apply(o, "modeler", json_string_value(modeler), err,
                                       sizeof err) < 0))
        return an_problem_set(p, 400, "modeler",
                              "unknown modeler %s: must be \"robust\" or \"extrap\"",
                              json_is_string(modeler) ? json_string_value(modeler)
                                                      : "(not a string)");
    const json_t *opts = json_object_get(doc, "options");
    if (opts && !json_is_object(opts))
        return an_problem_set(p, 400, "options", "must be an object");
    const char *key;
    const json_t *v;
    char field[128];
    json_object_foreach((json_t *)opts, key, v)
    {
        char text[256];
        option_text(v, text, sizeof text);
        if (!strcasecmp(key, "modeler") || pmnf_options_apply(o, key, text, err, sizeof err) < 0) {
            snprintf(field, sizeof field, "options.%.100s", key);
            return an_problem_set(p, 400, field, "%s",
                                  strcasecmp(key, "modeler") ? err
                                                             : "the modeler is the member "
                                                               "\"modeler\"");
        }
    }
    /* the first option the chosen modeler does not use */
    if (pmnf_options_check(o, &key, err, sizeof err) == 0)
        return 0;
    snprintf(field, sizeof field, "options.%s", key);
    return an_problem_set(p, 400, field, "%s", err);
}

/* One prediction with its interval and warnings. */
static json_t *prediction_json(const pmnf_model *model, const double *point, int nparams,
                               const char *const *names)
{
    double v, lo, hi;
    int no_interval = pmnf_predict(model, point, &v, &lo, &hi);
    json_t *w = json_array(), *pj = json_array();
    pmnf_point_warnings_json(w, model, point, names, NULL);
    for (int q = 0; q < nparams; q++)
        json_array_append_new(pj, json_real(point[q]));
    /* far outside the points a term may overflow: no number then */
    int finite = isfinite(v) && isfinite(lo) && isfinite(hi);
    return json_pack("{s:o, s:o, s:o, s:o}", "point", pj, "value",
                     isfinite(v) ? json_real(v) : json_null(), "interval",
                     no_interval || !finite ? json_null() : json_pack("[f, f]", lo, hi),
                     "warnings", w);
}

/* The predictions at "predict", or NULL with p. */
static json_t *predictions(const json_t *doc, const pmnf_model *model, int nparams,
                           const char *const *names, an_problem *p)
{
    const json_t *ask = json_object_get(doc, "predict");
    json_t *out = json_array();
    if (!ask)
        return out;
    if (!json_is_array(ask) || json_array_size(ask) > FIT_MAX_PREDICT) {
        json_decref(out);
        an_problem_set(p, 400, "predict", "must be an array of points");
        return NULL;
    }
    for (size_t i = 0; i < json_array_size(ask); i++) {
        const json_t *pt = json_array_get(ask, i);
        double point[PMNF_MAX_PARAMS];
        int ok = json_is_array(pt) && json_array_size(pt) == (size_t)nparams;
        for (int q = 0; ok && q < nparams; q++)
            ok = read_number(json_array_get(pt, (size_t)q), &point[q]) == 0;
        if (!ok) {
            char field[48];
            snprintf(field, sizeof field, "predict[%zu]", i);
            json_decref(out);
            an_problem_set(p, 400, field, "must be an array of %d finite numbers", nparams);
            return NULL;
        }
        json_array_append_new(out, prediction_json(model, point, nparams, names));
    }
    return out;
}

json_t *fit_request_perfcast(const json_t *doc, pmnf_options *o, an_problem *p)
{
    const char *names[PMNF_MAX_PARAMS];
    int nparams;
    fit_points f = {0};
    if (read_names(doc, names, &nparams, p) < 0 || read_options(doc, o, p) < 0 ||
        read_points(doc, nparams, o->measure, &f, p) < 0) {
        fit_points_free(&f);
        return NULL;
    }
    const char *callpath = json_string_value(json_object_get(doc, "callpath"));
    const char *metric = json_string_value(json_object_get(doc, "metric"));
    pmnf_modeler *m = pmnf_modeler_new(o);
    pmnf_model model;
    char err[256];
    pmnf_data d = {nparams, f.n, f.coords, f.values};
    pmnf_reps r = {f.start, f.reps};
    json_t *out = NULL;
    if (!m || pmnf_fit_reps(m, &d, &r, &model, err, sizeof err) < 0) {
        an_problem_set(p, 400, "points", "%s", m ? err : "out of memory");
    } else {
        json_t *pred = predictions(doc, &model, nparams, names, p);
        if (pred) {
            json_t *one = api_model_to_json(&model, names, 0);
            json_object_set_new(one, "callpath", json_string(callpath ? callpath : "<root>"));
            json_object_set_new(one, "metric", json_string(metric ? metric : "<default>"));
            json_object_set_new(one, "predictions", pred);
            out = json_pack("{s:[o]}", "models", one);
        }
    }
    pmnf_modeler_free(m);
    fit_points_free(&f);
    return out;
}
