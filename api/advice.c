/*
 * advice.c — POST /v1/experiments/{id}/advice: which runs to take next so
 * that the prediction at a target point gets most precise per core-hour,
 * within a budget (sweep/sweep_advice.h).
 *
 *   {"target": {"ranks": 512}, "budget_core_hours": 20,
 *    "epochs_per_run": 0.01, "candidates": {"ranks": [2, 4, 8, 16, 32, 64]},
 *    "max_runs": 200, "grid_core_hours": 50}
 *
 * The series are the newest model set's time models of the epoch's parts
 * (comp, comm, mem; the epoch's own model when a part has none), measured
 * at the application level. Noise per repetition: the pooled run-to-run
 * variation (CV) of the part's measurements with repetitions, else the
 * fit's residual spread. A run at x costs epochs_per_run × predicted epoch
 * time × ranks × cores_per_rank / 3600 core-hours. Candidates default to
 * every measured value of each parameter and its largest measured value
 * doubled until the target's value, their product (at most 10,000). The
 * runs measured at the candidates and those recommended never cost more
 * than the grid the advice replaces: grid_core_hours, default one run at
 * every candidate (sweep_advice.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/predict.h"
#include "store/models.h"
#include "sweep/sweep_advice.h"

#define CAND_MAX 10000
#define VALUES_MAX 1000
#define Z975 1.959963984540054

typedef struct advice_in {
    double target[PMNF_MAX_PARAMS];
    double budget, epochs_per_run;
    double grid; /* the caller's grid cost; 0: one run at every candidate */
    int max_runs;
    int nvalues[PMNF_MAX_PARAMS];
    double *values[PMNF_MAX_PARAMS]; /* candidate values per parameter (sorted, distinct) */
} advice_in;

static void advice_in_free(advice_in *a)
{
    for (int i = 0; i < PMNF_MAX_PARAMS; i++)
        free(a->values[i]);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int add_value(advice_in *a, int p, double v)
{
    for (int i = 0; i < a->nvalues[p]; i++)
        if (a->values[p][i] == v)
            return 0;
    if (a->nvalues[p] == VALUES_MAX)
        return -1;
    a->values[p][a->nvalues[p]++] = v;
    return 0;
}

static int number_field(const json_t *body, const char *name, double dflt, double *out,
                        api_response *resp)
{
    const json_t *v = json_object_get(body, name);
    *out = dflt;
    if (!v && !isnan(dflt))
        return 0;
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v))) {
        api_problem(resp, 400, name, "must be a number > 0");
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

static int parse_body(const json_t *body, const cached_models *m,
                      const store_measurement_row *rows, int n, advice_in *a, api_response *resp)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)body, key, v)
    {
        if (strcmp(key, "target") && strcmp(key, "budget_core_hours") &&
            strcmp(key, "epochs_per_run") && strcmp(key, "candidates") && strcmp(key, "max_runs") &&
            strcmp(key, "grid_core_hours")) {
            api_problem(resp, 400, key, "unknown field (known: target, budget_core_hours, "
                                        "epochs_per_run, candidates, max_runs, grid_core_hours)");
            return -1;
        }
    }
    const json_t *t = json_object_get(body, "target");
    if (!json_is_object(t)) {
        api_problem(resp, 400, "target", "must be an object with a value of every parameter");
        return -1;
    }
    json_object_foreach((json_t *)t, key, v)
    {
        int k = -1;
        for (int i = 0; i < m->nparams; i++)
            if (!strcmp(m->params[i], key))
                k = i;
        char f[120];
        snprintf(f, sizeof f, "target.%s", key);
        if (k < 0) {
            api_problem(resp, 400, f, "not a parameter of the experiment");
            return -1;
        }
        if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v))) {
            api_problem(resp, 400, f, "must be a number > 0");
            return -1;
        }
    }
    for (int i = 0; i < m->nparams; i++) {
        const json_t *x = json_object_get(t, m->params[i]);
        if (!x) {
            char f[120];
            snprintf(f, sizeof f, "target.%s", m->params[i]);
            api_problem(resp, 400, f, "missing: the target needs a value of every parameter");
            return -1;
        }
        a->target[i] = json_number_value(x);
    }
    if (number_field(body, "budget_core_hours", NAN, &a->budget, resp) < 0 ||
        number_field(body, "epochs_per_run", 1, &a->epochs_per_run, resp) < 0 ||
        (json_object_get(body, "grid_core_hours") &&
         number_field(body, "grid_core_hours", NAN, &a->grid, resp) < 0))
        return -1;
    const json_t *mr = json_object_get(body, "max_runs");
    a->max_runs = 200;
    if (mr) {
        if (!json_is_integer(mr) || json_integer_value(mr) < 1 || json_integer_value(mr) > 10000) {
            api_problem(resp, 400, "max_runs", "must be an integer from 1 to 10000");
            return -1;
        }
        a->max_runs = (int)json_integer_value(mr);
    }
    for (int i = 0; i < m->nparams; i++)
        if (!(a->values[i] = malloc(sizeof(double) * VALUES_MAX))) {
            api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
    const json_t *c = json_object_get(body, "candidates");
    if (c && !json_is_object(c)) {
        api_problem(resp, 400, "candidates", "must be an object of parameter names with values");
        return -1;
    }
    for (int i = 0; i < m->nparams; i++) {
        const json_t *list = json_object_get(c, m->params[i]);
        char f[120];
        snprintf(f, sizeof f, "candidates.%s", m->params[i]);
        if (list) {
            size_t j;
            json_t *x;
            if (!json_is_array(list) || json_array_size(list) == 0) {
                api_problem(resp, 400, f, "must be a non-empty array of numbers > 0");
                return -1;
            }
            json_array_foreach(list, j, x)
            {
                if (!json_is_number(x) || !(json_number_value(x) > 0) ||
                    !isfinite(json_number_value(x)) || add_value(a, i, json_number_value(x)) < 0) {
                    api_problem(resp, 400, f, "must be at most %d numbers > 0", VALUES_MAX);
                    return -1;
                }
            }
        } else {
            double hi = 0;
            for (int r = 0; r < n; r++) {
                if (add_value(a, i, rows[r].point[i]) < 0) {
                    api_problem(resp, 400, f, "more than %d measured values: name the candidates",
                                VALUES_MAX);
                    return -1;
                }
                hi = fmax(hi, rows[r].point[i]);
            }
            for (double x = 2 * hi; hi > 0 && x < a->target[i] && a->nvalues[i] < VALUES_MAX; x *= 2)
                add_value(a, i, x);
        }
        qsort(a->values[i], (size_t)a->nvalues[i], sizeof(double), cmp_d);
    }
    if (c) {
        json_object_foreach((json_t *)c, key, v)
        {
            int k = -1;
            for (int i = 0; i < m->nparams; i++)
                k = strcmp(m->params[i], key) ? k : i;
            if (k < 0) {
                char f[120];
                snprintf(f, sizeof f, "candidates.%s", key);
                api_problem(resp, 400, f, "not a parameter of the experiment");
                return -1;
            }
        }
    }
    return 0;
}

/* The series: per part with a model, its measured coordinates and noise. */
typedef struct series_data {
    int group;
    double *coords;
    int *reps;
    int n;
} series_data;

static int build_series(const cached_models *m, int slot, const store_measurement_row *rows,
                        int nrows, sweep_adv_series *s, series_data *d, json_t *noise)
{
    static const char *const names[CACHE_PARTS] = {"comp", "comm", "mem", "epoch"};
    const cached_part *parts = m->parts[slot];
    int composed = parts[0].present && parts[1].present && parts[2].present;
    int ns = 0;
    for (int g = composed ? 0 : 3; g < (composed ? 3 : 4); g++) {
        if (!parts[g].present)
            continue;
        series_data *x = &d[ns];
        x->group = g;
        x->coords = malloc(sizeof(double) * (size_t)(nrows ? nrows : 1) * (size_t)m->nparams);
        x->reps = malloc(sizeof(int) * (size_t)(nrows ? nrows : 1));
        if (!x->coords || !x->reps)
            return -1;
        double cv2 = 0;
        int ncv = 0;
        for (int r = 0; r < nrows; r++) {
            const store_measurement_row *row = &rows[r];
            if (strcmp(row->name, names[g]) || row->nreps < 1)
                continue;
            memcpy(x->coords + (size_t)x->n * m->nparams, row->point,
                   sizeof(double) * (size_t)m->nparams);
            x->reps[x->n++] = row->nreps;
            if (row->nreps >= 2) {
                double mean = 0, ss = 0;
                for (int k = 0; k < row->nreps; k++)
                    mean += row->reps[k] / row->nreps;
                for (int k = 0; k < row->nreps; k++)
                    ss += (row->reps[k] - mean) * (row->reps[k] - mean);
                if (mean != 0) {
                    cv2 += ss / (row->nreps - 1) / (mean * mean);
                    ncv++;
                }
            }
        }
        if (x->n == 0) { /* a part never measured (no callpath of its category) */
            free(x->coords);
            free(x->reps);
            memset(x, 0, sizeof *x);
            continue;
        }
        double sigma = parts[g].model.sigma2 > 0 ? sqrt(parts[g].model.sigma2) : 0;
        s[ns] = (sweep_adv_series){&parts[g].model.f, x->n, x->coords, x->reps,
                                   ncv ? sqrt(cv2 / ncv) : 0, sigma, 0};
        if (s[ns].cv <= 0 && !(sigma > 0))
            s[ns].sigma = 1e-9 * fmax(1, fabs(pmnf_model_eval(&parts[g].model, x->coords)));
        s[ns].misfit = sweep_advice_misfit(&parts[g].model.f, x->coords, x->reps, x->n, s[ns].cv,
                                           sigma);
        json_object_set_new(noise, names[g],
                            ncv ? json_pack("{s:f, s:s}", "cv", s[ns].cv, "from",
                                            "repetitions (pooled run-to-run variation)")
                                : json_pack("{s:f, s:s}", "sd", s[ns].sigma, "from",
                                            "the fit's residual spread (no repetitions)"));
        json_object_set_new(json_object_get(noise, names[g]), "misfit",
                            predict_number(s[ns].misfit));
        ns++;
    }
    return ns;
}

static json_t *half_width_json(double var)
{
    return predict_number(Z975 * sqrt(var));
}

void api_advice(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    const cached_models *m = predict_models(ctx, req, resp, &id);
    if (!m)
        return;
    json_t *body = NULL;
    store_measurement_row *rows = NULL;
    int nrows = 0, ns = 0;
    advice_in in;
    memset(&in, 0, sizeof in);
    series_data sd[CACHE_PARTS];
    memset(sd, 0, sizeof sd);
    double *cand = NULL, *cost = NULL;
    sweep_adv_result res = {0};
    int slot = predict_metric_slot(m, "time");
    /* the query names factor levels only: the target is in the body */
    if (predict_check_query(req, resp, m, NULL, 0) < 0 || api_parse_object(req, resp, &body) < 0)
        goto done;
    if (slot < 0) {
        api_problem(resp, 409, NULL, "model set %d has no time models", m->set_number);
        goto done;
    }
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    /* one level combination of an experiment with factors (predict_models) */
    store_model_filter f = {.level = "application", .phase = "epoch", .metric = "time",
                            .limit = 1000000, .levels = m->levels[0] ? m->levels : NULL};
    if (!c || store_measurements_read(c, m->set_id, &f, &rows, &nrows, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    if (parse_body(body, m, rows, nrows, &in, resp) < 0)
        goto done;
    long ncand = 1;
    for (int i = 0; i < m->nparams; i++)
        if ((ncand *= in.nvalues[i]) > CAND_MAX) {
            api_problem(resp, 400, "candidates", "more than %d candidate points", CAND_MAX);
            goto done;
        }
    json_t *noise = json_object();
    sweep_adv_series series[CACHE_PARTS];
    ns = build_series(m, slot, rows, nrows, series, sd, noise);
    if (ns <= 0) {
        json_decref(noise);
        api_problem(resp, ns < 0 ? 500 : 409, NULL,
                    ns < 0 ? "out of memory" : "model set %d has no epoch time model to advise on",
                    m->set_number);
        goto done;
    }
    cand = malloc(sizeof(double) * (size_t)ncand * (size_t)m->nparams);
    cost = malloc(sizeof(double) * (size_t)ncand);
    if (!cand || !cost) {
        json_decref(noise);
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    for (long k = 0; k < ncand; k++) {
        long r = k;
        double *x = cand + (size_t)k * m->nparams;
        for (int i = m->nparams - 1; i >= 0; i--) {
            x[i] = in.values[i][r % in.nvalues[i]];
            r /= in.nvalues[i];
        }
        int composed;
        prediction t = predict_epoch(m->parts[slot], x, &composed);
        double ranks = cached_ranks(m, x);
        cost[k] = in.epochs_per_run * t.value * ranks * m->cores_per_rank / 3600;
        if (!isfinite(cost[k]) || cost[k] <= 0)
            cost[k] = -1; /* not priceable: never picked */
    }
    sweep_adv_problem p = {m->nparams, ns, series, in.target, (int)ncand, cand, cost, in.budget,
                           in.max_runs, 1, in.grid, 0};
    char msg[200];
    if (sweep_advise(&p, &res, msg, sizeof msg) < 0) {
        json_decref(noise);
        api_problem(resp, 409, NULL, "cannot advise on model set %d: %s", m->set_number, msg);
        goto done;
    }
    json_t *recs = json_array();
    for (int i = 0; i < res.npicks; i++) {
        const sweep_adv_pick *pk = &res.picks[i];
        const double *x = cand + (size_t)pk->cand * m->nparams;
        int measured = 0;
        for (int r = 0; r < nrows; r++)
            if (!memcmp(rows[r].point, x, sizeof(double) * (size_t)m->nparams) &&
                !strcmp(rows[r].name, "epoch"))
                measured = rows[r].nreps;
        json_array_append_new(
            recs, json_pack("{s:o, s:i, s:i, s:f, s:f, s:f}", "point", predict_point_json(m, x),
                            "runs", pk->runs, "measured_repetitions", measured, "core_hours",
                            pk->core_hours, "core_hours_per_run", pk->core_hours / pk->runs,
                            "variance_share_pct",
                            res.var_before > 0 ? 100 * pk->gain / res.var_before : 0.0));
    }
    int composed;
    prediction at = predict_epoch(m->parts[slot], in.target, &composed);
    double shrink = res.var_before > 0 ? 100 * (1 - sqrt(res.var_after / res.var_before)) : 0;
    json_t *doc = json_pack(
        "{s:I, s:i, s:o, s:f, s:f, s:f, s:i, s:o, s:{s:o, s:o}, s:o, s:o, s:s, s:o, s:o}",
        "experiment", (json_int_t)id, "model_set", m->set_number, "target",
        predict_point_json(m, in.target), "budget_core_hours", in.budget, "spent_core_hours",
        res.spent, "epochs_per_run", in.epochs_per_run, "runs", res.nruns, "prediction",
        predict_json(&at), "mean_half_width_s", "now", half_width_json(res.var_before), "after",
        half_width_json(res.var_after), "expected_shrink_pct", predict_number(shrink),
        "recommendations", recs, "criterion",
        res.robust ? "the runs that lower the variance of the predicted mean at the target most "
                     "per core-hour, for the fitted terms plus challengers next to each "
                     "parameter's leading term (so that a wrong choice of terms shows)"
                   : "the runs that lower the variance of the predicted mean at the target most "
                     "per core-hour, for the fitted terms",
        "noise", noise, "candidates", json_integer(ncand));
    json_object_set_new(doc, "extrapolation", predict_extrapolation_json(m, in.target));
    json_t *warns = json_array();
    if (res.costlier_than_grid)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:f, s:f, s:f}", "code", "costlier_than_grid", "message",
            "the runs measured at the candidates already cost more than one run at every "
            "candidate (the grid this advice replaces)", "grid_core_hours",
            res.grid_core_hours, "measured_core_hours", res.measured_core_hours,
            "planned_core_hours", res.spent));
    if (res.grid_bound)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:f, s:f, s:f}", "code", "grid_cost_reached", "message",
            "more runs would make the measured and recommended ones cost more than one run at "
            "every candidate (the grid this advice replaces): measuring the grid would cost "
            "less", "grid_core_hours", res.grid_core_hours, "measured_core_hours",
            res.measured_core_hours, "planned_core_hours", res.spent));
    if (res.beyond_budget >= 0)
        json_array_append_new(warns, json_pack(
            "{s:s, s:s, s:o, s:f}", "code", "best_run_beyond_budget", "message",
            "the run that narrows the interval most per core-hour costs more than the budget: "
            "the recommendations are lesser runs", "point",
            predict_point_json(m, cand + (size_t)res.beyond_budget * m->nparams), "core_hours",
            res.beyond_budget_core_hours));
    json_object_set_new(doc, "warnings", warns);
    json_object_set_new(doc, "units", json_pack("{s:s, s:s}", "core_hours",
                                                "core-h: epochs_per_run × T × ranks × "
                                                "cores_per_rank / 3600 per run",
                                                "mean_half_width_s", "s, 95% (normal), of the "
                                                "predicted mean"));
    api_send_json(resp, 200, doc);
done:
    sweep_advice_free(&res);
    free(cand);
    free(cost);
    for (int i = 0; i < CACHE_PARTS; i++) {
        free(sd[i].coords);
        free(sd[i].reps);
    }
    advice_in_free(&in);
    store_measurement_rows_free(rows, nrows);
    json_decref(body);
    model_cache_release(ctx->models, m);
}
