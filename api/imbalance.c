/*
 * imbalance.c — GET /v1/experiments/{id}/imbalance[?metric=time][&limit=100]
 * [&lif=step|comp|comm|mem][&at=ranks:64]: how unevenly the work is spread
 * over the ranks (paper 004 §IV).
 *
 * LIF = max over ranks / mean over ranks (Eq. 8; 1 = balanced) of the
 * ranks' per-epoch values, taken per repetition, then the median over the
 * repetitions with its spread (smallest, largest): per measured coordinate
 * for the whole step (all comp, comm and mem callpaths summed per rank) and
 * each category, and per callpath. The PMNF model of the LIF over the
 * parameters (per group and callpath), predicted at `at` with a 95% interval
 * when asked. And paper 004's regression of the epoch time on the parameters
 * and the LIF of one group (`lif`, default the whole step),
 * T = b0 + b1·x1 + ... + b_LIF·LIF, least squares over one observation per
 * coordinate and repetition, with standard errors and R². Callpaths are
 * ranked by their LIF at the largest measured coordinate; each carries the
 * coded warnings of its LIF model and of its prediction at `at`, counted in
 * the answer's callpath_warnings (the ranking and the warnings:
 * analysis/imbalance_rank.h; this file renders them).
 */
#include <math.h>
#include <stdio.h>

#include "analysis/callpath_warnings.h"
#include "analysis/imbalance_rank.h"
#include "api/analysis_data.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"
#include "modeling/warning_json.h"

#define LIMIT_DEFAULT 100
#define LIMIT_MAX 10000

static json_t *summary_json(const imb_summary *s)
{
    if (s->n == 0)
        return json_null();
    return json_pack("{s:o, s:o, s:o, s:i}", "lif", predict_number(s->median), "min",
                     predict_number(s->min), "max", predict_number(s->max), "repetitions", s->n);
}

/* The LIF fit at point (imr_lif_predict: never an interval below 1);
 * names not NULL: with its prediction's coded warnings (the model's own are
 * in the model's document; a callpath's are in its item's warnings). */
static json_t *fit_at(const ad_fit *f, const double *point, const char *const *names)
{
    if (!f->present)
        return json_null();
    prediction p;
    int below;
    p.has_interval = imr_lif_predict(&f->model, point, &p.value, &p.lo, &p.hi, &below);
    json_t *o = predict_json(&p);
    if (!names)
        return o;
    json_t *w = json_array();
    if (w)
        pmnf_point_warnings_json(w, &f->model, point, names, NULL);
    if (w && below)
        json_array_append_new(w, imr_lif_below_one_json(p.value));
    json_object_set_new(o, "warnings", w);
    return o;
}

/* A far `at` (ranks=1e308): the LIF models' predictions there, the
 * application's and each callpath's, are numbers, else 400 naming `at`
 * (analysis/finite_point.h), where they were nulls that said nothing of
 * why. The first callpath that overflows stands for the others. */
static int lif_finite_at(api_response *resp, const cached_models *m, const ad_app *app,
                         const ad_callpaths *cps, const double *at)
{
    fp_value v[AD_GROUPS + 1];
    char what[AD_GROUPS + 1][200];
    int n = 0;
    double value, lo, hi;
    int below;
    for (int g = 0; g < AD_GROUPS; g++) {
        if (!app->lif_model[g].present)
            continue;
        imr_lif_predict(&app->lif_model[g].model, at, &value, &lo, &hi, &below);
        snprintf(what[n], sizeof what[n], "the LIF model of %s", imr_group_name(g));
        v[n] = (fp_value){what[n], value};
        n++;
    }
    for (int i = 0; i < cps->n; i++) {
        const ad_callpath *c = &cps->v[i];
        if (!c->lif_model.present)
            continue;
        imr_lif_predict(&c->lif_model.model, at, &value, &lo, &hi, &below);
        if (isfinite(value))
            continue;
        snprintf(what[n], sizeof what[n], "the LIF model of callpath %.150s", c->name);
        v[n] = (fp_value){what[n], value};
        n++;
        break;
    }
    const char *fields[PMNF_MAX_PARAMS];
    for (int i = 0; i < m->nparams; i++)
        fields[i] = "at";
    return predict_finite_values(resp, m, v, n, at, fields);
}

static json_t *regression_json(const ad_app *a, const cached_models *m, int g)
{
    if (!a->reg_ok[g])
        return json_pack("{s:s, s:n, s:s}", "lif", imr_group_name(g), "coefficients", "reason",
                         a->reg_why[g]);
    const imb_regression *r = &a->reg[g];
    char formula[600];
    size_t n = (size_t)snprintf(formula, sizeof formula, "T = b0");
    json_t *coefs = json_array();
    json_array_append_new(coefs, json_pack("{s:s, s:f, s:f}", "name", "intercept", "value",
                                           r->coef[0], "std_error", r->se[0]));
    for (int i = 0; i < m->nparams; i++) {
        if (n < sizeof formula)
            n += (size_t)snprintf(formula + n, sizeof formula - n, " + b%d·%s", i + 1,
                                  m->params[i]);
        json_array_append_new(coefs, json_pack("{s:s, s:f, s:f}", "name", m->params[i], "value",
                                               r->coef[i + 1], "std_error", r->se[i + 1]));
    }
    if (n < sizeof formula)
        snprintf(formula + n, sizeof formula - n, " + b%d·LIF", m->nparams + 1);
    json_array_append_new(coefs, json_pack("{s:s, s:f, s:f}", "name", "lif", "value",
                                           r->coef[m->nparams + 1], "std_error",
                                           r->se[m->nparams + 1]));
    return json_pack("{s:s, s:s, s:s, s:i, s:o, s:o, s:o, s:f, s:i}", "lif", imr_group_name(g),
                     "formula", formula, "observations",
                     a->lif_per_rep ? "one per coordinate and repetition" : "one per coordinate",
                     "n", r->nobs, "coefficients", coefs, "r2", predict_number(r->r2),
                     "adjusted_r2", predict_number(r->adjusted_r2), "rss", r->rss, "dof", r->dof);
}

void api_imbalance(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "limit", "lif", "at", NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    const cache_blob *aref = NULL, *cref = NULL;
    imr_ranking rank = {0};
    const char *const *names = m->names;
    long limit;
    double at[PMNF_MAX_PARAMS];
    const char *metric = api_query(req, "metric"), *lif = api_query(req, "lif");
    const char *at_text = api_query(req, "at");
    metric = metric ? metric : "time";
    int slot = predict_metric_slot(m, metric), reg_group = 3;
    if (predict_check_query(req, resp, m, allowed, 0) < 0 ||
        predict_query_long(req, resp, "limit", 1, LIMIT_MAX, LIMIT_DEFAULT, &limit) < 0 ||
        (at_text && predict_parse_at(at_text, "at", resp, m, at) < 0))
        goto done;
    if (lif) {
        reg_group = imr_group(lif);
        if (reg_group < 0) {
            api_problem(resp, 400, "lif", "must be step, comp, comm or mem, got \"%.40s\"", lif);
            goto done;
        }
    }
    if (slot < 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in model set %d", metric,
                    m->set_number);
        goto done;
    }
    store_error err = {0};
    const ad_app *app = ad_app_get(ctx, m, slot, &aref, &err);
    const ad_callpaths *cps = app ? ad_callpaths_get(ctx, m, slot, app, &cref, &err) : NULL;
    if (!cps) {
        api_store_problem(resp, &err);
        goto done;
    }
    if (at_text && lif_finite_at(resp, m, app, cps, at) < 0)
        goto done;
    json_t *points = json_array();
    for (int p = 0; p < app->npoints; p++) {
        const double *pt = app->coords + (size_t)p * m->nparams;
        json_t *o = json_pack("{s:o, s:o}", "point", predict_point_json(m, pt), "ranks",
                              predict_number(app->ranks[p]));
        for (int k = 0; k < AD_GROUPS; k++) {
            int g = imr_group_at(k);
            json_object_set_new(o, imr_group_name(g), summary_json(&app->lif[g][p]));
        }
        json_array_append_new(points, o);
    }
    json_t *models = json_object();
    for (int k = 0; k < AD_GROUPS; k++) {
        int g = imr_group_at(k);
        json_t *f = ad_fit_json(&app->lif_model[g], m);
        if (at_text && app->lif_model[g].present)
            json_object_set_new(f, "at_point", fit_at(&app->lif_model[g], at, names));
        json_object_set_new(models, imr_group_name(g), f);
    }
    if (imr_rank(cps, app->largest, limit, at_text ? at : NULL, names, &rank) < 0) {
        json_decref(points);
        json_decref(models);
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    json_t *items = json_array();
    for (int i = 0; i < rank.listed; i++) {
        const ad_callpath *c = rank.v[i].c;
        json_t *series = json_array();
        for (int p = 0; p < cps->npoints; p++) {
            if (c->lif[p].n == 0)
                continue; /* not measured there */
            json_t *s = summary_json(&c->lif[p]);
            json_object_set_new(s, "point",
                                predict_point_json(m, app->coords + (size_t)p * m->nparams));
            json_array_append_new(series, s);
        }
        json_t *model = c->lif_model.present
                            ? json_pack("{s:s, s:o}", "function", c->lif_model.function, "smape",
                                        predict_number(c->lif_model.model.smape))
                            : json_pack("{s:n, s:s}", "function", "reason", c->lif_model.reason);
        json_t *o = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o}", "rank", i + 1, "callpath",
                              c->name, "category", c->category, "lif_now",
                              predict_number(rank.v[i].now), "lif", series, "model", model);
        if (at_text)
            json_object_set_new(o, "lif_at", fit_at(&c->lif_model, at, NULL));
        /* the LIF model's coded warnings and, asked a point, its prediction's */
        json_object_set_new(o, "warnings", json_incref(rank.v[i].warnings));
        json_array_append_new(items, o);
    }
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:i, s:{s:s, s:s}}", "experiment",
        (json_int_t)id, "model_set", m->set_number, "metric", metric, "definition",
        "LIF = max over ranks / mean over ranks of the ranks' per-epoch values (1 = balanced); "
        "per repetition, then the median over repetitions with its range",
        "lif_source",
        app->lif_per_rep ? "per repetition"
                         : "the ranks' medians over repetitions (this model set predates "
                           "per-repetition values; no spread)",
        "now",
        predict_point_json(m, app->npoints ? app->coords + (size_t)app->largest * m->nparams : at),
        "points", points, "models", models, "callpaths", items, "callpaths_total", cps->n,
        "units", "lif", "ratio max/mean over ranks", "regression", "T in the metric's unit");
    json_object_set_new(doc, "regression", regression_json(app, m, reg_group));
    if (at_text) {
        json_object_set_new(doc, "at", predict_point_json(m, at));
        json_object_set_new(doc, "extrapolation", predict_extrapolation_json(m, at));
    }
    predict_warnings_at(doc, m, slot, at_text ? at : NULL);
    warning_append(doc, cpw_summary_json(&rank.tally, rank.listed, "listed callpaths"));
    predict_page_store(ctx, key, resp, doc);
done:
    imr_ranking_free(&rank);
    model_cache_blob_release(ctx->models, cref);
    model_cache_blob_release(ctx->models, aref);
    model_cache_release(ctx->models, m);
}
