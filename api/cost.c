/*
 * cost.c — GET /v1/experiments/{id}/cost?<parameters>[&epochs=N] (Q4): the
 * predicted epoch time at a configuration, its core-hours T·ranks·ρ/3600 and
 * money (price per core-hour, or the experiment's cost formula), per epoch
 * and for N epochs, each with its 95% interval (T's interval carried
 * through: both are monotone in T); and the PMNF cost model C(x) fitted to
 * the core-hours at the measured coordinates (Extra-Deep's
 * C_epoch(x) = 0.082·x^1.62), evaluated at the point. A point where the
 * prediction overflows is a 400 (cost_check_finite), not an answer of nulls;
 * one whose rank count is not a whole number is answered as a what-if with
 * the coded warning ranks_not_whole (analysis/rank_count.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/cost.h"
#include "api/analysis_data.h"
#include "api/handlers.h"
#include "api/predict.h"
#include "api/warnings.h"

static prediction scaled(const prediction *p, double k)
{
    return (prediction){p->value * k, p->lo * k, p->hi * k, p->has_interval};
}

void api_cost(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"epochs", NULL};
    int64_t id;
    char key[PREDICT_KEY_MAX];
    const cached_models *m = predict_models_page(ctx, req, resp, &id, key, sizeof key);
    if (!m)
        return;
    const cache_blob *ref = NULL;
    cost_eval ce = {0};
    double point[PMNF_MAX_PARAMS];
    long epochs;
    int slot = predict_metric_slot(m, "time");
    if (predict_query_point(req, resp, m, allowed, point) < 0 ||
        predict_query_long(req, resp, "epochs", 1, 1000000000L, 1, &epochs) < 0 ||
        predict_rank_count(resp, m, point, m->params[0]) < 0)
        goto done;
    const cached_part *parts = slot >= 0 ? m->parts[slot] : NULL;
    int composed;
    if (!parts || (!(parts[0].present && parts[1].present && parts[2].present) &&
                   !parts[3].present)) {
        api_problem(resp, 409, NULL, "model set %d has no model of the epoch time (metric time)",
                    m->set_number);
        goto done;
    }
    prediction t = predict_epoch(parts, point, &composed);
    char why[256];
    cost_setup cs;
    cached_cost_setup(m, &cs);
    if (cost_open(&ce, &cs, why, sizeof why) < 0) {
        api_problem(resp, 409, "cost.formula", "the experiment's formula does not compile: %s",
                    why);
        goto done;
    }
    double ranks = cached_ranks(m, point);
    prediction ch = {cost_core_hours(&ce, t.value, ranks), cost_core_hours(&ce, t.lo, ranks),
                     cost_core_hours(&ce, t.hi, ranks), t.has_interval};
    double m0 = cost_money(&ce, t.value, ranks, point), m1 = cost_money(&ce, t.lo, ranks, point),
           m2 = cost_money(&ce, t.hi, ranks, point);
    prediction money = {m0, m1 < m2 ? m1 : m2, m1 < m2 ? m2 : m1, t.has_interval};
    const char *const *names = m->names;
    an_problem p;
    /* a model that overflows at the point: no answer of nulls */
    if (cost_check_finite(t.value, ch.value, m0, (double)epochs, names, m->nparams, point, &p) <
        0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    store_error err = {0};
    const ad_app *app = ad_app_get(ctx, m, slot, &ref, &err);
    if (!app) {
        api_store_problem(resp, &err);
        goto done;
    }
    json_t *model = ad_fit_json(&app->cost, m);
    if (app->cost.present) {
        prediction at;
        at.has_interval = pmnf_predict(&app->cost.model, point, &at.value, &at.lo, &at.hi) == 0;
        json_object_set_new(model, "at_point", predict_json(&at));
    }
    prediction tt = scaled(&t, (double)epochs), tch = scaled(&ch, (double)epochs),
               tm = scaled(&money, (double)epochs);
    int priced = isfinite(money.value);
    json_t *doc = json_pack(
        "{s:I, s:i, s:o, s:o, s:I, s:{s:f, s:o, s:s?}, s:{s:o, s:o, s:o}, s:{s:o, s:o, s:o}, "
        "s:{s:o}, s:o, s:{s:s, s:s, s:s}}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "point",
        predict_point_json(m, point), "ranks", predict_number(ranks), "epochs",
        (json_int_t)epochs, "cost_setup", "cores_per_rank", m->cores_per_rank,
        "price_per_core_hour", predict_number(m->price_per_core_hour), "formula",
        m->formula[0] ? m->formula : NULL, "per_epoch", "time_s", predict_json(&t), "core_hours",
        predict_json(&ch), "cost", priced ? predict_json(&money) : json_null(), "total", "time_s",
        predict_json(&tt), "core_hours", predict_json(&tch), "cost",
        priced ? predict_json(&tm) : json_null(), "models", "core_hours_per_epoch", model,
        "extrapolation", predict_extrapolation_json(m, point), "units", "time_s", "s",
        "core_hours", "core-h", "cost",
        m->formula[0] ? "money, from cost.formula" : "money: core-h × price_per_core_hour");
    predict_warnings_at(doc, m, slot, point);
    warning_append(doc, cost_money_warning(&ce, money.value, ranks)); /* why no usable cost */
    /* a rank count no scheduler can allocate: a what-if, said so */
    warning_append(doc, predict_not_whole_warning(m, point));
    noisy_points_attach(doc, &m->noisy); /* the too-noisy points it rests on */
    predict_page_store(ctx, key, resp, doc);
done:
    cost_close(&ce);
    model_cache_blob_release(ctx->models, ref);
    model_cache_release(ctx->models, m);
}
