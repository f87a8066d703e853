/*
 * curve.c — GET /v1/experiments/{id}/curve?name=NAME[&level=callpath|
 * application][&metric=time][&parameter=P][&values=x1,x2,...][&OTHER=v]:
 * one model of the newest model set evaluated along one parameter, each
 * value with its 95% interval: what a plot of a model needs (the
 * dashboard draws its curves and bands from this, so every number it shows
 * is the API's). The application epoch is composed as predict composes it:
 * comp + comm + mem, and of metric time the imbalance part where the set
 * has one (api/set_models.h).
 *
 * The parameter (default the first) takes values= (at most 1000 numbers
 * > 0), by default 65 points spaced evenly in log from the smallest
 * measured value to 8x the largest; the other parameters are fixed by
 * query parameters named like them, by default at their largest measured
 * value. Each point says whether it lies beyond 4x the largest measured
 * value (extrapolation_from), where errors grow. The handler reads the query
 * and the models (api/set_models.h); analysis/curve.h samples the curve.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/curve.h"
#include "api/handlers.h"
#include "api/set_models.h"
#include "store/experiments.h"
#include "store/models.h"

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
    if (values && curve_values_parse(values, &r->values, &r->nvalues, why, sizeof why)) {
        api_problem(resp, 400, "values", "%s", why);
        return -1;
    }
    return 0;
}

typedef struct curve_model {
    const set_models *sm;
    int row;
} curve_model;

static curve_value model_at(const void *model, const double *pt)
{
    const curve_model *m = model;
    prediction p = set_models_predict(m->sm, m->row, pt);
    return (curve_value){p.value, p.lo, p.hi, p.has_interval};
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
        (!strcmp(r.level, "application") && !strcmp(r.name, "epoch") && /* only it composes */
         set_models_load_imbalance(c, set_id, r.metric, names, np,
                                   e.scaling && !strcmp(e.scaling, "strong"), &sm, &err)) ||
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
    curve_model cm = {&sm, row};
    curve_input in = {.names = names, .np = np, .param = r.param, .fixed = r.fixed,
                      .has_fixed = r.has_fixed, .values = r.nvalues ? r.values : NULL,
                      .nvalues = r.nvalues, .meas = meas, .nmeas = nmeas, .predict = model_at,
                      .model = &cm};
    curve_result cr;
    if (curve_build(&in, &cr) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    const store_model_row *m = &sm.rows[row];
    api_send_json(
        resp, 200,
        json_pack("{s:I, s:i, s:s, s:s, s:s, s:o, s:s, s:O, s:f, s:f, s:f, s:O, s:s}", "experiment",
                  (json_int_t)id, "model_set", number, "level", r.level, "name", r.name, "metric",
                  r.metric, "function", m->function ? json_string(m->function) : json_null(),
                  "parameter", names[r.param], "fixed", cr.fixed, "min_measured",
                  cr.min_measured, "max_measured", cr.max_measured, "extrapolation_from",
                  cr.extrapolation_from, "points", cr.points, "unit", predict_unit(r.metric)));
    curve_result_free(&cr);
done:
    store_release(ctx->db, c);
    set_models_free(&sm);
    store_measurement_rows_free(meas, nmeas);
    store_experiment_free(&e);
    free(r.values);
}
