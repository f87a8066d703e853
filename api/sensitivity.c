/*
 * sensitivity.c — GET /v1/experiments/{id}/sensitivity: the Taguchi S/N ratio per
 * measured coordinate of one series, the mean S/N per level of every
 * parameter (and factor), the range and the ranking (paper 003 §2.1,
 * analysis/sensitivity.h), over the rows kept by api/sweeps.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/json_buf.h"
#include "analysis/sensitivity.h"
#include "analysis/repstats.h"
#include "api/predict.h"
#include "api/stats_warm.h"
#include "store/models.h"
#include "sweep/sweep_sensitivity.h"
#include "api/sweeps_internal.h"

/* ---- GET /v1/experiments/{id}/sensitivity --------------------------------------- */

/* the answer's "runs": per measured coordinate (and level combination) its
 * S/N and repetitions */
static void sn_runs_text(jbuf *b, const cached_models *m, const store_measurement_row *rows,
                         int n, const sweep_sn_result *r)
{
    JBUF_LIT(b, "[");
    for (int i = 0; i < n; i++) {
        jbuf_lit(b, i ? ",{\"point\":" : "{\"point\":");
        sweeps_point_text(b, m, rows[i].point);
        sweeps_levels_member(b, m, rows[i].levels);
        JBUF_LIT(b, ",\"sn\":");
        jbuf_real(b, r->sn[i]);
        JBUF_LIT(b, ",\"n\":");
        jbuf_int(b, rows[i].nreps);
        JBUF_LIT(b, "}");
    }
    JBUF_LIT(b, "]");
}

void api_sensitivity(api_ctx *ctx, api_request *req, api_response *resp)
{
    if (sweeps_warm_wait(ctx, req, resp) == 0)
        sweeps_sensitivity_answer(ctx, req, resp);
}

void sweeps_sensitivity_answer(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "name", "phase", "goal", "over",
                                          "parameter", "baseline", NULL};
    int64_t id;
    const cached_models *m = predict_models_or_all(ctx, req, resp, &id, 1);
    if (!m)
        return;
    store_model_filter f = {.levels = m->levels[0] ? m->levels : NULL};
    kept_rows kept = {0};
    store_measurement_row *rows = NULL;
    double baseline = 0;
    int n = 0, q = 0;
    sens_result sr = {0};
    if (predict_check_query(req, resp, m, allowed, 0) < 0 || sweeps_filter_from_query(req, resp, &f) < 0)
        goto done;
    /* over: the metric itself (time), or the scaling efficiency SE = t_baseline / t
     * along a parameter, per repetition (larger is better) */
    const char *over = api_query(req, "over"), *pq = api_query(req, "parameter");
    const char *bq = api_query(req, "baseline");
    over = over ? over : "time";
    if (strcmp(over, "time") && strcmp(over, "efficiency")) {
        api_problem(resp, 400, "over", "must be time or efficiency, got \"%.40s\"", over);
        goto done;
    }
    int se = !strcmp(over, "efficiency");
    if (!se && (pq || bq)) {
        api_problem(resp, 400, pq ? "parameter" : "baseline", "only with over=efficiency");
        goto done;
    }
    if (se && pq) {
        q = -1;
        for (int i = 0; i < m->nparams; i++)
            q = strcmp(m->params[i], pq) ? q : i;
        if (q < 0) {
            api_problem(resp, 400, "parameter", "not a parameter of the experiment: \"%.60s\"",
                        pq);
            goto done;
        }
    }
    if (se && bq && predict_positive(bq, &baseline) < 0) {
        api_problem(resp, 400, "baseline", "must be a number > 0, got \"%.40s\"", bq);
        goto done;
    }
    if (se && ((f.metric && strcmp(f.metric, "time")) ||
               (api_query(req, "goal") && strcmp(api_query(req, "goal"), "larger")))) {
        api_problem(resp, 400, f.metric && strcmp(f.metric, "time") ? "metric" : "goal",
                    "over=efficiency is the efficiency of durations (metric time), larger is "
                    "better");
        goto done;
    }
    f.metric = f.metric ? f.metric : "time";
    f.level = f.level ? f.level : "application";
    f.name = f.name ? f.name : "epoch";
    f.phase = f.phase ? f.phase : "epoch";
    const char *goal = api_query(req, "goal");
    if (!goal && strcmp(f.metric, "time") && strcmp(f.metric, "bytes")) {
        api_problem(resp, 400, "goal",
                    "missing: say whether larger or smaller values of metric \"%.60s\" are "
                    "better (time and bytes: smaller by default)",
                    f.metric);
        goto done;
    }
    goal = goal ? goal : se ? "larger" : "smaller";
    if (strcmp(goal, "smaller") && strcmp(goal, "larger")) {
        api_problem(resp, 400, "goal", "must be smaller or larger, got \"%.40s\"", goal);
        goto done;
    }
    int larger = !strcmp(goal, "larger");
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp))
        goto done;
    f.limit = STATS_LIMIT_MAX;
    if (sweeps_read_rows_kept(ctx, m, &f, 0, &kept, resp) < 0)
        goto done;
    sweeps_warm_note(ctx, req, m, 'R', &kept);
    rows = kept.rows;
    n = kept.n;
    if (n == 0) {
        api_problem(resp, 404, "name",
                    "no measurements of %.60s %.60s (level %s, phase %s) in model set %d",
                    f.name, f.metric, f.level, f.phase, m->set_number);
        goto done;
    }
    noisy_names nm = {m->params, m->nparams, m->factors, m->nfactors};
    sens_request rq = {.larger = larger, .efficiency = se, .q = q, .baseline = bq ? &baseline : NULL,
                       .factor_columns = m->nfactors && !m->levels[0],
                       .factors_spec = m->factors_spec};
    int bad;
    char err[200], label[400];
    int rc = sens_compute(&nm, rows, n, &rq, &sr, &bad, err, sizeof err);
    if (rc == SENS_NO_BASELINE) {
        api_problem(resp, 404, "baseline", "no run has its baseline (%s = %s) measured",
                    m->params[q], bq ? bq : "the smallest measured");
        goto done;
    }
    if (rc == SENS_UNDECLARED) {
        sweeps_row_label(m, &sr.rows[bad], label, sizeof label);
        api_problem(resp, 422, NULL, "%s: its levels are not declared ones", label);
        goto done;
    }
    if (rc == SENS_BAD_VALUE) {
        sweeps_row_label(m, &sr.rows[bad], label, sizeof label);
        api_problem(resp, 422, "metric", "%s: a repetition is %s: S/N ratios need observations > 0",
                    label, sr.rows[bad].nreps ? "zero, negative or not finite" : "missing");
        goto done;
    }
    if (rc < 0) {
        api_problem(resp, 500, NULL, "%s", rc == SENS_NOMEM ? "out of memory" : err);
        goto done;
    }
    rows = sr.rows;
    n = sr.n;
    json_t *head = json_pack("{s:I, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "experiment",
                             (json_int_t)id, "model_set", m->set_number, "metric", f.metric,
                             "level", f.level, "name", f.name, "phase", f.phase, "goal", goal,
                             "formula",
                             larger ? "S/N = -10·log10((1/N)·Σ 1/y²) (larger is better)"
                                    : "S/N = -10·log10((1/N)·Σ y²) (smaller is better)",
                             "ranking",
                             "factors by the range (max - min) of their levels' mean S/N; "
                             "normalized: range / Σ ranges");
    if (se) {
        json_object_set_new(head, "over", json_string("efficiency"));
        json_object_set_new(head, "parameter", json_string(m->params[q]));
        json_object_set_new(head, "efficiency",
                            json_string("SE = t_baseline / t per repetition (paper 003 §3.2): "
                                        "t_baseline the mean duration at the baseline (the "
                                        "smallest measured value of the parameter, or "
                                        "?baseline=) with the other parameters and levels "
                                        "alike"));
        json_object_set_new(head, "runs_without_baseline", json_integer(sr.left_out));
    }
    sweeps_levels_head(head, m, req);
    json_t *tail = json_pack("{s:o, s:{s:s}, s:o}", "factors", sens_factors_json(&nm, &sr),
                             "units", "sn", "dB", "warnings", repstats_noisy_warnings(&nm, rows, n));
    jbuf runs = {0};
    jbuf_reserve(&runs, (size_t)n * 80 + 4096); /* a run is about 70 bytes */
    sn_runs_text(&runs, m, rows, n, &sr.r);
    size_t len;
    char *body = sweeps_answer_text(head, "runs", &runs, tail, &len);
    predict_page_store_text(ctx, key, resp, body, len);
done:
    sens_result_free(&sr);
    sweeps_kept_rows_release(ctx, &kept);
    model_cache_release(ctx->models, m);
}
