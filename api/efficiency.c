/*
 * efficiency.c — GET /v1/experiments/{id}/efficiency: scaling efficiency SE_N =
 * t_baseline / t_N along one parameter, per combination of the other
 * parameters' values and levels, from the repetitions
 * (sweep/sweep_efficiency.h; see api/sweeps.c).
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/json_buf.h"
#include "analysis/levels.h"
#include "api/predict.h"
#include "api/stats_warm.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"
#include "sweep/sweep_stats.h"
#include "api/sweeps_internal.h"

/* ---- GET /v1/experiments/{id}/efficiency ---------------------------------------- */

/* rows by group: the other parameters' values, then the level combination */
static int cmp_group(const store_measurement_row *a, const store_measurement_row *b, int q)
{
    for (int i = 0; i < a->nparams; i++)
        if (i != q && a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* by group, then along parameter q; equal rows keep their order */
static int row_before(const store_measurement_row *x, const store_measurement_row *y, int q)
{
    int c = cmp_group(x, y, q);
    return c < 0 || (c == 0 && x->point[q] < y->point[q]);
}

/* A stable merge sort (bottom-up, into tmp and back): rows may be many */
static int sort_rows(store_measurement_row *rows, int n, int q)
{
    store_measurement_row *tmp = malloc(sizeof *tmp * (size_t)(n ? n : 1));
    if (!tmp)
        return -1;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = row_before(&rows[j], &rows[i], q) ? rows[j++] : rows[i++];
            while (i < mid)
                tmp[k++] = rows[i++];
            while (j < hi)
                tmp[k++] = rows[j++];
        }
        memcpy(rows, tmp, sizeof *rows * (size_t)n);
    }
    free(tmp);
    return 0;
}

static json_t *ratio_json(const sweep_ratio *r)
{
    return json_pack("{s:o, s:o}", "value", predict_number(r->value), "interval",
                     r->has_interval ? sweeps_interval(r->lo, r->hi) : json_null());
}

static json_t *group_json(const cached_models *m, const store_measurement_row *rows, int a, int b,
                          int q, const double *baseline)
{
    json_t *fixed = json_object();
    for (int i = 0; i < m->nparams; i++)
        if (i != q)
            json_object_set_new(fixed, m->params[i], json_real(rows[a].point[i]));
    int base = -1;
    for (int i = a; i < b; i++)
        if (baseline ? rows[i].point[q] == *baseline : base < 0)
            base = i;
    json_t *pts = json_array();
    for (int i = a; i < b; i++) {
        double mean = 0;
        for (int k = 0; k < rows[i].nreps; k++)
            mean += rows[i].reps[k] / rows[i].nreps;
        json_t *o = json_pack("{s:f, s:f, s:i}", m->params[q], rows[i].point[q], "mean", mean,
                              "n", rows[i].nreps);
        if (base >= 0) {
            sweep_ratio r = sweep_efficiency(rows[base].reps, rows[base].nreps, rows[i].reps,
                                             rows[i].nreps);
            json_object_set_new(o, "se", ratio_json(&r));
        } else {
            json_object_set_new(o, "se", json_null());
        }
        json_array_append_new(pts, o);
    }
    json_t *g = json_pack("{s:o, s:o, s:o}", "fixed", fixed, "baseline",
                          base >= 0 ? json_real(rows[base].point[q]) : json_null(), "points", pts);
    if (m->nfactors) { /* the group's level combination */
        const char *names[8];
        for (int k = 0; k < m->nfactors; k++)
            names[k] = m->factors[k];
        json_t *lv = levels_object(names, (size_t)m->nfactors, rows[a].levels ? rows[a].levels : "");
        json_object_set_new(g, "levels", lv ? lv : json_null());
    }
    if (base < 0)
        json_object_set_new(g, "reason", json_string("the baseline was not measured with these "
                                                     "values of the other parameters"));
    return g;
}

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
    if (sort_rows(rows, n, q) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    json_t *groups = json_array();
    int found = 0;
    for (int a = 0; a < n;) {
        int b = a + 1;
        while (b < n && cmp_group(&rows[a], &rows[b], q) == 0)
            b++;
        json_t *g = group_json(m, rows, a, b, q, bp);
        found |= !json_is_null(json_object_get(g, "baseline"));
        json_array_append_new(groups, g);
        a = b;
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
    json_object_set_new(doc, "warnings", sweeps_noisy_warnings(m, rows, n));
    predict_page_store(ctx, key, resp, doc);
done:
    store_measurement_rows_free(rows, n);
    model_cache_release(ctx->models, m);
}
