/*
 * scaling.c — GET /v1/experiments/{id}/scaling (Q2): how the epoch time,
 * its parts, the speedup and the parallel efficiency change along one
 * parameter, as arrays of points a dashboard plots directly.
 *
 *   ?from=2&to=64&step=2 | ?values=2,4,8   the values of `parameter`
 *   &parameter=ranks                        default: the first parameter
 *   &<other parameter>=v                    fixed values of the others
 *                                           (default: the baseline's)
 *   &metric=time
 *
 * Per point: epoch, comp, comm, mem (value and 95% interval), Extra-Deep's
 * speedup Δ (percent, relative to P_1, the first measured point of the series
 * along the first parameter x_1 at the point's values of the others, Eq. 11)
 * with the ideal Δ_t and the efficiency ε = Δ_a/Δ_t (percent, Eq. 13), the
 * conventional speedup T_1/T_k and efficiency (× x_1/x_k for strong
 * scaling), the PMNF models of Δ and ε evaluated there, and whether the
 * point lies beyond 4x the largest measured value. T_1 is the measured epoch
 * at P_1, or where the point's values of the other parameters were not
 * measured, the predicted one at the smallest measured x_1 with them
 * (scl_baseline_point); intervals of the derived numbers are those of T_k
 * carried through.
 * Without from/to/values the points are the measured values of the parameter
 * (analysis/scaling_axis.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/finite_point.h"
#include "analysis/scaling_axis.h"
#include "api/analysis_data.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"
#include "modeling/scaling.h"

typedef struct versus {
    double t1, x1, xk, dt;
    int strong;
} versus;

static double f_speedup_pct(double t, const void *a)
{
    return scl_speedup_pct(((const versus *)a)->t1, t);
}

static double f_efficiency_pct(double t, const void *a)
{
    const versus *v = a;
    return scl_efficiency_pct(scl_speedup_pct(v->t1, t), v->dt);
}

static double f_speedup(double t, const void *a)
{
    return t > 0 ? scl_speedup(((const versus *)a)->t1, t) : NAN;
}

static double f_efficiency(double t, const void *a)
{
    const versus *v = a;
    return t > 0 ? scl_efficiency(v->t1, t, v->x1, v->xk, v->strong) : NAN;
}

/* The model at point with its interval; speedup: a Δ model, whose
 * interval stops at 100% (scl_speedup_pct_bound). */
static json_t *model_at(const ad_fit *f, const double *point, int speedup)
{
    if (!f->present)
        return json_null();
    prediction p;
    p.has_interval = pmnf_predict(&f->model, point, &p.value, &p.lo, &p.hi) == 0;
    if (speedup)
        scl_speedup_pct_bound(p.value, &p.lo, &p.hi);
    return predict_json(&p);
}

/* P_1 of the series through point (scl_baseline_point): its coordinate into
 * base (may be NULL), its epoch into *t1 (measured, else predicted) and its
 * rank count into *x1; 1 when measured. */
static int baseline_at(const cached_models *m, const ad_app *app, int slot, const double *point,
                       double *base, double *t1, double *x1)
{
    double b[PMNF_MAX_PARAMS];
    int i = scl_baseline_point(app->coords, app->npoints, m->nparams, point,
                               app->value[AD_GROUPS - 1], b);
    int composed;
    *t1 = i >= 0 ? app->value[AD_GROUPS - 1][i] : predict_epoch(m->parts[slot], b, &composed).value;
    *x1 = i >= 0 ? app->ranks[i] : cached_ranks(m, b);
    if (base)
        memcpy(base, b, sizeof(double) * (size_t)m->nparams);
    return i >= 0;
}

/* 0 when the numbers of a point that are not predictions of the epoch
 * (predict_finite) are finite: the ideal speedup Δ_t (of x_k/x_1) and the
 * models of Δ and ε there; else -1 after answering 400 as predict_finite. */
static int derived_finite(api_response *resp, const cached_models *m, const ad_app *app,
                          int slot, const double *point, const char *const *fields)
{
    double t1, x1, lo, hi;
    baseline_at(m, app, slot, point, NULL, &t1, &x1);
    fp_value v[3] = {{"the ideal speedup x_k/x_1",
                      scl_ideal_speedup_pct(x1, cached_ranks(m, point))}};
    int n = 1;
    const ad_fit *models[2] = {&app->speedup, &app->efficiency};
    static const char *const what[2] = {"the model of the speedup", "the model of the efficiency"};
    for (int i = 0; i < 2; i++)
        if (models[i]->present) {
            v[n].what = what[i];
            pmnf_predict(&models[i]->model, point, &v[n].value, &lo, &hi);
            n++;
        }
    return predict_finite_values(resp, m, v, n, point, fields);
}

/* Where Δ (or ε) by the epoch's model and Δ's (ε's) own PMNF model
 * contradict each other (scl_apart): a count, and the first such point
 * with its two intervals. */
typedef struct disagreement {
    int count;
    double point[PMNF_MAX_PARAMS];
    prediction derived, model;
} disagreement;

static void note_disagreement(const ad_fit *f, int speedup, const double *point,
                              const prediction *d, int nparams, disagreement *dis)
{
    if (!f->present || !d->has_interval)
        return;
    prediction q;
    q.has_interval = pmnf_predict(&f->model, point, &q.value, &q.lo, &q.hi) == 0;
    if (speedup)
        scl_speedup_pct_bound(q.value, &q.lo, &q.hi);
    if (!q.has_interval || !scl_apart(d->lo, d->hi, q.lo, q.hi))
        return;
    if (dis->count++ == 0) {
        memcpy(dis->point, point, sizeof(double) * (size_t)nparams);
        dis->derived = *d;
        dis->model = q;
    }
}

/* The warning <what>_models_disagree for dis, when it counted a point. */
static void attach_disagreement(json_t *doc, const cached_models *m, const disagreement *dis,
                                const char *what)
{
    if (dis->count == 0)
        return;
    char code[64], msg[400], a[32], b[32];
    snprintf(code, sizeof code, "%s_models_disagree", what);
    snprintf(a, sizeof a, "%s_pct", what);
    snprintf(b, sizeof b, "%s_pct_model", what);
    snprintf(msg, sizeof msg,
             "The %s from the epoch's model (%s) and the PMNF model of the measured %s values "
             "(%s) disagree: their 95%% intervals do not meet, so at least one of them does not "
             "hold there. %s follows the epoch's model, which the predictions use.",
             what, a, what, b, a);
    json_t *w = warning_new(code, msg);
    json_object_set_new(w, "count", json_integer(dis->count));
    json_object_set_new(w, "point", predict_point_json(m, dis->point));
    json_object_set_new(w, a, json_pack("[f, f]", dis->derived.lo, dis->derived.hi));
    json_object_set_new(w, b, json_pack("[f, f]", dis->model.lo, dis->model.hi));
    warning_append(doc, w);
}

/* The warning ranks_not_whole (analysis/rank_count.h) for the first of the
 * points base with parameter param at xs[0..n) whose rank count cannot be
 * allocated, with how many such points there are ("count"). */
static void attach_not_whole(json_t *doc, const cached_models *m, const double *base, int param,
                             const double *xs, int n)
{
    json_t *w = NULL;
    int count = 0;
    for (int k = 0; k < n; k++) {
        double point[PMNF_MAX_PARAMS];
        memcpy(point, base, sizeof point);
        point[param] = xs[k];
        json_t *one = predict_not_whole_warning(m, point);
        if (!one)
            continue;
        count++;
        if (w)
            json_decref(one);
        else
            w = one;
    }
    if (!w)
        return;
    json_object_set_new(w, "count", json_integer(count));
    warning_append(doc, w);
}

static json_t *scaling_point(const cached_models *m, const ad_app *app, int slot,
                             const double *point, disagreement dis[2])
{
    const cached_part *parts = m->parts[slot];
    int composed;
    prediction t = predict_epoch(parts, point, &composed);
    /* P_1: the first measured point of the series along x_1 at this point's
     * values of the other parameters; where none was measured there, the
     * prediction at the smallest measured x_1 (baseline_at) */
    double t1, x1, b[PMNF_MAX_PARAMS];
    int measured = baseline_at(m, app, slot, point, b, &t1, &x1);
    versus vs = {t1, x1, cached_ranks(m, point), 0, !strcmp(m->scaling, "strong")};
    vs.dt = scl_ideal_speedup_pct(vs.x1, vs.xk);
    json_t *o = json_pack("{s:o, s:o, s:o}", "point", predict_point_json(m, point), "ranks",
                          predict_number(vs.xk), "epoch", predict_json(&t));
    static const char *const names[3] = {"comp", "comm", "mem"};
    for (int i = 0; i < 3; i++) {
        prediction p = predict_part(&parts[i], point);
        json_object_set_new(o, names[i], parts[i].present ? predict_json(&p) : json_null());
    }
    if (composed && parts[CACHE_IMBALANCE].present) { /* what the slowest rank adds */
        prediction p = predict_part(&parts[CACHE_IMBALANCE], point);
        json_object_set_new(o, "imbalance", predict_json(&p));
    }
    /* at P_1 itself Δ = 0% and ε = 100% by definition (Extra-Deep §3.1-3.2),
     * S = E = 1: T_k is T_1, the measured epoch, not a prediction near it */
    prediction tk = t;
    if (measured && !memcmp(b, point, sizeof(double) * (size_t)m->nparams))
        tk = (prediction){t1, t1, t1, 1};
    prediction d = predict_map(&tk, f_speedup_pct, &vs);
    prediction e = predict_map(&tk, f_efficiency_pct, &vs);
    if (tk.lo != tk.hi) { /* not P_1, where Δ = 0 and ε = 100% by definition */
        note_disagreement(&app->speedup, 1, point, &d, m->nparams, &dis[0]);
        note_disagreement(&app->efficiency, 0, point, &e, m->nparams, &dis[1]);
    }
    prediction s = predict_map(&tk, f_speedup, &vs);
    prediction pe = predict_map(&tk, f_efficiency, &vs);
    json_object_set_new(o, "speedup_pct", predict_json(&d));
    json_object_set_new(o, "ideal_speedup_pct", predict_number(vs.dt));
    json_object_set_new(o, "efficiency_pct", predict_json(&e));
    json_object_set_new(o, "speedup", predict_json(&s));
    json_object_set_new(o, "efficiency", predict_json(&pe));
    json_object_set_new(o, "speedup_pct_model", model_at(&app->speedup, point, 1));
    json_object_set_new(o, "efficiency_pct_model", model_at(&app->efficiency, point, 0));
    json_object_set_new(o, "beyond_4x", json_boolean(predict_beyond(m, point)));
    return o;
}

void api_scaling(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"from", "to", "step", "values", "parameter", "metric",
                                          NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    const cache_blob *ref = NULL;
    double *xs = NULL;
    const char *metric = api_query(req, "metric");
    metric = metric ? metric : "time";
    int slot = predict_metric_slot(m, metric);
    const char *pname = api_query(req, "parameter");
    int param = pname ? -1 : 0;
    for (int i = 0; pname && i < m->nparams; i++)
        if (!strcmp(pname, m->params[i]))
            param = i;
    if (predict_check_query(req, resp, m, allowed, 1) < 0)
        goto done;
    if (slot < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        goto done;
    }
    if (param < 0) {
        api_problem(resp, 400, "parameter", "\"%.60s\" is not a parameter of this experiment",
                    pname);
        goto done;
    }
    const cached_part *parts = m->parts[slot];
    if (!(parts[0].present && parts[1].present && parts[2].present) && !parts[3].present) {
        api_problem(resp, 409, NULL, "the epoch of metric \"%.60s\" has no model: %s", metric,
                    parts[3].reason);
        goto done;
    }
    store_error err = {0};
    const ad_app *app = ad_app_get(ctx, m, slot, &ref, &err);
    if (!app) {
        api_store_problem(resp, &err);
        goto done;
    }
    if (app->npoints == 0) {
        api_problem(resp, 409, NULL, "model set %d has no measured epoch of metric \"%.60s\"",
                    m->set_number, metric);
        goto done;
    }
    /* the other parameters: as given, else the baseline's */
    double base[PMNF_MAX_PARAMS];
    for (int i = 0; i < m->nparams; i++) {
        base[i] = app->coords[(size_t)app->baseline * m->nparams + i];
        const char *t = api_query(req, m->params[i]);
        if (i == param && t) {
            api_problem(resp, 400, m->params[i], "is the varied parameter: give its values with "
                                                 "from/to/step or values");
            goto done;
        }
        if (t && predict_positive(t, &base[i]) < 0) {
            api_problem(resp, 400, m->params[i], "must be a finite number > 0, got \"%.40s\"", t);
            goto done;
        }
    }
    scaling_axis_input ax = {api_query(req, "values"), api_query(req, "from"),
                             api_query(req, "to"),     api_query(req, "step"),
                             app->coords,              app->npoints,
                             app->nparams,             param};
    an_problem p;
    int n = scaling_axis_values(&ax, &xs, &p);
    if (n < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    for (int k = 0; k < n; k++) { /* every point a count of ranks, before any is answered */
        double point[PMNF_MAX_PARAMS];
        memcpy(point, base, sizeof point);
        point[param] = xs[k];
        const char *field = ax.values ? "values" : ax.from ? "from" : m->params[param];
        if (predict_rank_count(resp, m, point, field) < 0)
            goto done;
        /* and every number of it finite (a far point overflows a model):
         * never an answer of nulls */
        const char *fields[PMNF_MAX_PARAMS] = {NULL};
        fields[param] = ax.values ? "values" : ax.from ? (k == 0 ? "from" : "to") : NULL;
        if (predict_finite(resp, m, parts, point, metric, fields) < 0 ||
            derived_finite(resp, m, app, slot, point, fields) < 0)
            goto done;
    }
    json_t *points = json_array();
    disagreement dis[2] = {{0}, {0}};
    for (int k = 0; k < n; k++) {
        double point[PMNF_MAX_PARAMS];
        memcpy(point, base, sizeof point);
        point[param] = xs[k];
        json_array_append_new(points, scaling_point(m, app, slot, point, dis));
    }
    json_t *measured = json_array();
    for (int p = 0; p < app->npoints; p++) {
        const double *pt = app->coords + (size_t)p * m->nparams;
        json_array_append_new(
            measured, json_pack("{s:o, s:o, s:o, s:o, s:o}", "point", predict_point_json(m, pt),
                                "ranks", predict_number(app->ranks[p]), "epoch",
                                predict_number(app->value[AD_GROUPS - 1][p]), "speedup_pct",
                                predict_number(app->speedup_pct[p]), "efficiency_pct",
                                predict_number(app->efficiency_pct[p])));
    }
    /* the baseline of the first point's series (of every point's when the
     * varied parameter is x_1) */
    double bp[PMNF_MAX_PARAMS], bt, bx, first[PMNF_MAX_PARAMS];
    memcpy(first, base, sizeof first);
    if (n > 0)
        first[param] = xs[0];
    int bmeasured = baseline_at(m, app, slot, first, bp, &bt, &bx);
    double last[PMNF_MAX_PARAMS];
    memcpy(last, base, sizeof last);
    if (n > 0)
        last[param] = xs[n - 1];
    const char *unit = predict_unit(metric);
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:s, s:s, s:{s:o, s:o, s:o}, s:o, s:o, s:{s:o, s:o}, s:o, s:{s:s, s:s, "
        "s:s, s:s, s:s, s:s, s:s, s:s, s:s}}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "metric", metric, "scaling",
        m->scaling, "parameter", m->params[param], "baseline", "point",
        predict_point_json(m, bp), "ranks", predict_number(bx), "epoch", predict_number(bt),
        "points", points, "measured",
        measured, "models", "speedup_pct", ad_fit_json(&app->speedup, m), "efficiency_pct",
        ad_fit_json(&app->efficiency, m), "extrapolation", predict_extrapolation_json(m, last),
        "units", "epoch", unit, "comp", unit, "comm", unit, "mem", unit, "speedup_pct", "%",
        "ideal_speedup_pct", "%", "efficiency_pct", "%", "speedup", "ratio T_1/T_k",
        "efficiency", !strcmp(m->scaling, "strong") ? "ratio (T_1·x_1)/(T_k·x_k)" : "ratio T_1/T_k");
    /* false: P_1 was not measured (the other parameters' values were not), its epoch predicted */
    json_object_set_new(json_object_get(doc, "baseline"), "measured", json_boolean(bmeasured));
    if (predict_composed(parts) && parts[CACHE_IMBALANCE].present)
        json_object_set_new(json_object_get(doc, "units"), "imbalance", json_string(unit));
    predict_warnings_at(doc, m, slot, last);
    attach_not_whole(doc, m, base, param, xs, n);
    attach_disagreement(doc, m, &dis[0], "speedup");
    attach_disagreement(doc, m, &dis[1], "efficiency");
    noisy_points_attach(doc, &m->noisy); /* the too-noisy points it rests on */
    predict_page_store(ctx, key, resp, doc);
done:
    free(xs);
    model_cache_blob_release(ctx->models, ref);
    model_cache_release(ctx->models, m);
}
