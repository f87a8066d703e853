/*
 * efficiency.c — GET /v1/experiments/{id}/efficiency: scaling efficiency SE_N =
 * t_baseline / t_N along one parameter, per combination of the other
 * parameters' values and levels, from the repetitions
 * (analysis/efficiency.h; see api/sweeps.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/efficiency.h"
#include "analysis/repstats.h"
#include "api/predict.h"
#include "store/models.h"
#include "api/sweeps_internal.h"

/* ---- GET /v1/experiments/{id}/efficiency ---------------------------------------- */

void api_efficiency(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "name", "phase", "category",
                                          "parameter", "baseline", NULL};
    int64_t id;
    const cached_models *m = predict_models_or_all(ctx, req, resp, &id, 1);
    if (!m)
        return;
    store_model_filter f = {.levels = m->levels[0] ? m->levels : NULL};
    store_measurement_row *rows = NULL;
    int n = 0, q = 0;
    double baseline, *bp = NULL;
    if (predict_check_query(req, resp, m, allowed, 0) < 0 || sweeps_filter_from_query(req, resp, &f) < 0)
        goto done;
    const char *pq = api_query(req, "parameter"), *bq = api_query(req, "baseline");
    if (pq) {
        q = -1;
        for (int i = 0; i < m->nparams; i++)
            q = strcmp(m->params[i], pq) ? q : i;
        if (q < 0) {
            api_problem(resp, 400, "parameter", "not a parameter of the experiment: \"%.60s\"",
                        pq);
            goto done;
        }
    }
    if (bq) {
        if (predict_positive(bq, &baseline) < 0) {
            api_problem(resp, 400, "baseline", "must be a number > 0, got \"%.40s\"", bq);
            goto done;
        }
        bp = &baseline;
    }
    f.metric = f.metric ? f.metric : "time";
    f.level = f.level ? f.level : "application";
    f.name = f.name ? f.name : "epoch";
    f.phase = f.phase ? f.phase : "epoch";
    f.limit = STATS_LIMIT_MAX;
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp))
        goto done;
    if (!(rows = sweeps_read_rows(ctx, m, &f, &n, resp)))
        goto done;
    if (n == 0) {
        api_problem(resp, 404, "name", "no measurements of %.60s %.60s (level %s, phase %s)",
                    f.name, f.metric, f.level, f.phase);
        goto done;
    }
    noisy_names nm = {m->params, m->nparams, m->factors, m->nfactors};
    int found;
    json_t *groups = eff_groups(&nm, rows, n, q, bp, &found);
    if (!groups) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (bp && !found) {
        json_decref(groups);
        api_problem(resp, 400, "baseline", "%s = %g was not measured", m->params[q], baseline);
        goto done;
    }
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "experiment", (json_int_t)id,
        "model_set", m->set_number, "metric", f.metric, "level", f.level, "name", f.name,
        "phase", f.phase, "parameter", m->params[q], "definition",
        "SE_N = t_baseline / t_N (paper 003), the ratio of the means over the repetitions",
        "interval",
        "each mean's 97.5% t interval, the ratio's ends from theirs: at least 95% (Bonferroni); "
        "null with fewer than 2 repetitions on a side",
        "groups", groups);
    sweeps_levels_head(doc, m, req);
    json_object_set_new(doc, "warnings", repstats_noisy_warnings(&nm, rows, n));
    predict_page_store(ctx, key, resp, doc);
done:
    store_measurement_rows_free(rows, n);
    model_cache_release(ctx->models, m);
}
