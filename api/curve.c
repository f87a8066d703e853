/*
 * curve.c — GET /v1/experiments/{id}/curve?name=NAME[&level=callpath|
 * application][&metric=time][&parameter=P][&values=x1,x2,...][&OTHER=v]:
 * one model of the newest model set evaluated along one parameter, each
 * value with its 95% interval: what a plot of a model needs (the
 * dashboard draws its curves and bands from this, so every number it shows
 * is the API's). The application epoch is composed of comp + comm + mem as
 * predict composes it.
 *
 * The parameter (default the first) takes values= (at most 1000 numbers
 * > 0), by default 65 points spaced evenly in log from the smallest
 * measured value to 8x the largest; the other parameters are fixed by
 * query parameters named like them, by default at their largest measured
 * value. Each point says whether it lies beyond 4x the largest measured
 * value (extrapolation_from), where errors grow.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/set_models.h"
#include "store/experiments.h"
#include "store/models.h"

#define CURVE_MAX_VALUES 1000
#define CURVE_DEFAULT_POINTS 65

typedef struct curve_req {
    const char *name, *level, *metric;
    int param;                      /* index of the swept parameter */
    double fixed[PMNF_MAX_PARAMS];  /* the others */
    int has_fixed[PMNF_MAX_PARAMS];
    double *values;
    int nvalues;
} curve_req;

static int param_index(const store_experiment *e, const char *name)
{
    for (int i = 0; i < e->nparams; i++)
        if (!strcmp(e->parameters[i], name))
            return i;
    return -1;
}

/* "1,2,4.5" into r->values. 0, or -1 with why. */
static int parse_values(const char *text, curve_req *r, char *why, size_t cap)
{
    r->values = malloc(sizeof(double) * CURVE_MAX_VALUES);
    if (!r->values) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    const char *s = text;
    while (*s) {
        if (r->nvalues == CURVE_MAX_VALUES) {
            snprintf(why, cap, "at most %d values", CURVE_MAX_VALUES);
            return -1;
        }
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v) || !(v > 0) || (*end && *end != ',')) {
            snprintf(why, cap, "expected numbers > 0 separated by commas, got \"%.40s\"", s);
            return -1;
        }
        r->values[r->nvalues++] = v;
        s = *end ? end + 1 : end;
    }
    if (!r->nvalues) {
        snprintf(why, cap, "no values");
        return -1;
    }
    return 0;
}

/* The query into r: 0, or -1 after answering 400. */
static int parse_query(const api_request *req, const store_experiment *e, curve_req *r,
                       api_response *resp)
{
    r->name = api_query(req, "name");
    r->level = api_query(req, "level");
    r->metric = api_query(req, "metric");
    r->level = r->level ? r->level : "callpath";
    r->metric = r->metric ? r->metric : "time";
    if (!r->name || !*r->name) {
        api_problem(resp, 400, "name", "required: a callpath, or epoch, comp, comm or mem "
                                       "with level=application");
        return -1;
    }
    if (strcmp(r->level, "callpath") && strcmp(r->level, "application")) {
        api_problem(resp, 400, "level", "must be callpath or application");
        return -1;
    }
    const char *p = api_query(req, "parameter");
    r->param = p ? param_index(e, p) : 0;
    if (r->param < 0) {
        api_problem(resp, 400, "parameter", "\"%.64s\" is not a parameter of this experiment", p);
        return -1;
    }
    for (size_t k = 0; k < req->nquery; k++) {
        const char *n = req->query[k].name, *v = req->query[k].value;
        if (!strcmp(n, "name") || !strcmp(n, "level") || !strcmp(n, "metric") ||
            !strcmp(n, "parameter") || !strcmp(n, "values"))
            continue;
        int i = param_index(e, n);
        if (i < 0) {
            api_problem(resp, 400, n, "unknown query parameter; curve takes name, level, metric, "
                                      "parameter, values and the experiment's parameters");
            return -1;
        }
        char *end = NULL;
        double x = v ? strtod(v, &end) : NAN;
        if (i == r->param || !end || *end || !isfinite(x) || !(x > 0)) {
            api_problem(resp, 400, n, i == r->param ? "is the swept parameter: give values= instead"
                                                    : "expected a number > 0");
            return -1;
        }
        r->fixed[i] = x;
        r->has_fixed[i] = 1;
    }
    const char *values = api_query(req, "values");
    char why[160];
    if (values && parse_values(values, r, why, sizeof why)) {
        api_problem(resp, 400, "values", "%s", why);
        return -1;
    }
    return 0;
}

void api_curve(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id, set_id = 0;
    int number = 0;
    if (api_path_id(req, resp, "id", "experiment", &id))
        return;
    store_error err;
    store_experiment e = {0};
    set_models sm = {0};
    store_measurement_row *meas = NULL;
    int nmeas = 0;
    curve_req r = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    if (parse_query(req, &e, &r, resp))
        goto done;
    const char *names[PMNF_MAX_PARAMS];
    int np = e.nparams < PMNF_MAX_PARAMS ? e.nparams : PMNF_MAX_PARAMS;
    for (int i = 0; i < np; i++)
        names[i] = e.parameters[i];
    store_model_filter fm = {.metric = r.metric, .level = "application", .name = "epoch",
                             .limit = 100000};
    rc = store_model_set_latest(c, id, &set_id, &number, NULL, 0, &err);
    if (rc == STORE_NOT_FOUND) {
        api_problem(resp, 409, NULL, "experiment %" PRId64 " has no model set yet", id);
        goto done;
    }
    if (rc || set_models_load(c, set_id, r.metric, r.level,
                               strcmp(r.level, "application") ? r.name : NULL, names, np, &sm,
                               &err) ||
        store_measurements_read(c, set_id, &fm, &meas, &nmeas, &err)) {
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    c = NULL;
    int row = set_models_find(&sm, r.level, r.name);
    if (row < 0) {
        api_problem(resp, 404, "name", "no %s model \"%.100s\" of metric %.40s in model set %d",
                    r.level, r.name, r.metric, number);
        goto done;
    }
    double minv[PMNF_MAX_PARAMS], maxv[PMNF_MAX_PARAMS];
    for (int q = 0; q < np; q++) {
        minv[q] = INFINITY;
        maxv[q] = 0;
    }
    for (int i = 0; i < nmeas; i++)
        for (int q = 0; q < np && q < meas[i].nparams; q++) {
            minv[q] = fmin(minv[q], meas[i].point[q]);
            maxv[q] = fmax(maxv[q], meas[i].point[q]);
        }
    if (!r.nvalues) {
        r.values = malloc(sizeof(double) * CURVE_DEFAULT_POINTS);
        double lo = isfinite(minv[r.param]) ? minv[r.param] : 1, hi = 8 * fmax(maxv[r.param], lo);
        for (int k = 0; r.values && k < CURVE_DEFAULT_POINTS; k++)
            r.values[r.nvalues++] =
                exp(log(lo) + (log(hi) - log(lo)) * k / (CURVE_DEFAULT_POINTS - 1));
    }
    double pt[PMNF_MAX_PARAMS];
    json_t *fixed = json_object();
    for (int q = 0; q < np; q++) {
        pt[q] = r.has_fixed[q] ? r.fixed[q] : maxv[q];
        if (q != r.param)
            json_object_set_new(fixed, names[q], json_real(pt[q]));
    }
    json_t *pts = json_array();
    for (int k = 0; k < r.nvalues; k++) {
        pt[r.param] = r.values[k];
        prediction p = set_models_predict(&sm, row, pt);
        int beyond = 0;
        for (int q = 0; q < np; q++)
            beyond |= pt[q] > PREDICT_EXTRAPOLATION_FACTOR * maxv[q];
        json_array_append_new(
            pts, json_pack("{s:f, s:o, s:o, s:b}", "x", r.values[k], "value",
                           predict_number(p.value), "interval",
                           p.has_interval ? json_pack("[o, o]", predict_number(p.lo),
                                                      predict_number(p.hi))
                                          : json_null(),
                           "beyond_4x", beyond));
    }
    const store_model_row *m = &sm.rows[row];
    api_send_json(
        resp, 200,
        json_pack("{s:I, s:i, s:s, s:s, s:s, s:o, s:s, s:o, s:f, s:f, s:f, s:o, s:s}", "experiment",
                  (json_int_t)id, "model_set", number, "level", r.level, "name", r.name, "metric",
                  r.metric, "function", m->function ? json_string(m->function) : json_null(),
                  "parameter", names[r.param], "fixed", fixed, "min_measured",
                  isfinite(minv[r.param]) ? minv[r.param] : 0.0, "max_measured", maxv[r.param],
                  "extrapolation_from", PREDICT_EXTRAPOLATION_FACTOR * maxv[r.param], "points",
                  pts, "unit", predict_unit(r.metric)));
done:
    store_release(ctx->db, c);
    set_models_free(&sm);
    store_measurement_rows_free(meas, nmeas);
    store_experiment_free(&e);
    free(r.values);
}
