/*
 * sensitivity.c — GET /v1/experiments/{id}/sensitivity: the Taguchi S/N ratio per
 * measured coordinate of one series, the mean S/N per level of every
 * parameter (and factor), the range and the ranking (paper 003 §2.1,
 * sweep/sweep_sensitivity.h), over the rows kept by api/sweeps.c.
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
#include "common/jsonb.h"

/* ---- GET /v1/experiments/{id}/sensitivity --------------------------------------- */

/* The Taguchi columns: the parameters (their measured values as levels),
 * then, when the rows span several level combinations, the factors (their
 * declared levels). */
typedef struct sn_input {
    int ncols, nfactor_cols;     /* nfactor_cols: factors among the columns, after the parameters */
    int *level, *nlevels, *offset;
    double *y, *distinct;        /* distinct: the parameters' values, n per column */
    json_t *declared;            /* per factor column its declared levels (an array) */
} sn_input;

static void sn_input_free(sn_input *s)
{
    free(s->level);
    free(s->nlevels);
    free(s->offset);
    free(s->y);
    free(s->distinct);
    json_decref(s->declared);
}

/* the answer's "factors", ranked */
static json_t *sensitivity_factors(const cached_models *m, int n, const sn_input *in,
                                   const sweep_sn_result *r)
{
    json_t *factors = json_array();
    for (int k = 0; k < in->ncols; k++) {
        int fi = r->order[k], cat = fi >= m->nparams;
        const sweep_sn_factor *fa = &r->factors[fi];
        const double *vals = cat ? NULL : in->distinct + (size_t)fi * (n ? n : 1);
        json_t *decl = cat ? json_array_get(in->declared, (size_t)(fi - m->nparams)) : NULL;
        json_t *levels = json_array();
        for (int l = 0; l < fa->nlevels; l++)
            json_array_append_new(
                levels, json_pack("{s:o, s:o, s:i}", "level",
                                  cat ? json_incref(json_array_get(decl, (size_t)l)) : json_real(vals[l]),
                                  "mean_sn", predict_number(fa->mean_sn[l]), "runs", fa->runs[l]));
        json_t *best = fa->best_level < 0 ? json_null()
                       : cat ? json_incref(json_array_get(decl, (size_t)fa->best_level))
                             : json_real(vals[fa->best_level]);
        json_array_append_new(
            factors, json_pack("{s:i, s:s, s:s, s:f, s:f, s:o, s:o}", "rank", fa->rank, "factor",
                               cat ? m->factors[fi - m->nparams] : m->params[fi], "kind",
                               cat ? "factor" : "parameter", "range", fa->range, "normalized",
                               fa->normalized, "best_level", best, "levels", levels));
    }
    return factors;
}

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

/* runs by point, then by levels */
static int cmp_row_point(const void *x, const void *y)
{
    const store_measurement_row *a = x, *b = y;
    for (int i = 0; i < a->nparams && i < b->nparams; i++)
        if (a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* The factor columns of rows spanning several level combinations: each
 * row's index of its level among the factor's declared ones. 0, or -1 with
 * *bad the row whose levels are not declared ones (or out of memory: -1). */
static int sn_factor_columns(const cached_models *m, const store_measurement_row *rows, int n,
                             sn_input *in, int *bad)
{
    *bad = -1;
    json_t *spec = jsonb_parse(m->factors_spec, 0);
    json_t *factors = json_object_get(spec, "factors");
    in->declared = json_array();
    for (int k = 0; k < m->nfactors; k++) {
        json_t *decl = json_object_get(factors, m->factors[k]);
        json_array_append(in->declared, decl ? decl : json_null());
        in->nlevels[m->nparams + k] = (int)json_array_size(decl);
    }
    json_decref(spec);
    /* rows share few combinations: each distinct text is decoded once */
    const char *seen[64];
    int seen_at[64], nseen = 0;
    for (int i = 0; i < n; i++) {
        int *lv = in->level + (size_t)i * (size_t)in->ncols + m->nparams, s = 0;
        while (s < nseen && strcmp(seen[s], rows[i].levels ? rows[i].levels : ""))
            s++;
        if (s < nseen) {
            memcpy(lv, in->level + (size_t)seen_at[s] * (size_t)in->ncols + m->nparams,
                   sizeof(int) * (size_t)m->nfactors);
            continue;
        }
        json_t *arr = jsonb_parse(rows[i].levels ? rows[i].levels : "", JSON_DECODE_ANY);
        int ok = json_array_size(arr) == (size_t)m->nfactors;
        for (int k = 0; ok && k < m->nfactors; k++) {
            const char *v = json_string_value(json_array_get(arr, (size_t)k));
            json_t *decl = json_array_get(in->declared, (size_t)k);
            lv[k] = -1;
            for (size_t l = 0; v && l < json_array_size(decl) && lv[k] < 0; l++)
                if (!strcmp(json_string_value(json_array_get(decl, l)) ?: "", v))
                    lv[k] = (int)l;
            ok = lv[k] >= 0;
        }
        json_decref(arr);
        if (!ok) {
            *bad = i;
            return -1;
        }
        if (nseen < 64) {
            seen[nseen] = rows[i].levels ? rows[i].levels : "";
            seen_at[nseen++] = i;
        }
    }
    return 0;
}

/* The Taguchi problem's input from rows (runs by point, then levels);
 * factors: whether the factors are columns too. 0, -1 when out of memory,
 * -2 with *bad a row whose levels are not declared. */
static int sn_build(const cached_models *m, const store_measurement_row *rows, int n, int factors,
                    sn_input *in, int *bad)
{
    int np = m->nparams;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)rows[i].nreps;
    memset(in, 0, sizeof *in);
    in->nfactor_cols = factors ? m->nfactors : 0;
    in->ncols = np + in->nfactor_cols;
    int nc = in->ncols;
    in->level = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)nc);
    in->nlevels = malloc(sizeof(int) * (size_t)nc);
    in->offset = malloc(sizeof(int) * (size_t)(n + 1));
    in->y = malloc(sizeof(double) * (total ? total : 1));
    in->distinct = malloc(sizeof(double) * (size_t)(n ? n : 1) * (size_t)np + 1);
    double *col = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!in->level || !in->nlevels || !in->offset || !in->y || !in->distinct || !col) {
        free(col);
        return -1;
    }
    in->offset[0] = 0;
    for (int i = 0; i < n; i++) {
        memcpy(in->y + in->offset[i], rows[i].reps, sizeof(double) * (size_t)rows[i].nreps);
        in->offset[i + 1] = in->offset[i] + rows[i].nreps;
    }
    for (int k = 0; k < np; k++) {
        for (int i = 0; i < n; i++)
            col[i] = rows[i].point[k];
        in->nlevels[k] = sweep_levels_of(col, n, 1, in->distinct + (size_t)k * (n ? n : 1),
                                         in->level + k, nc);
    }
    free(col);
    if (in->nfactor_cols && sn_factor_columns(m, rows, n, in, bad) < 0)
        return *bad >= 0 ? -2 : -1;
    return 0;
}

/* ---- S/N over scaling efficiency (paper 003 §3.2, Fig. 12) ---- */

typedef struct se_sort {
    const store_measurement_row *rows;
    int q;
} se_sort;

static int se_cmp_ctx(const void *x, const void *y, void *arg)
{
    const se_sort *c = arg;
    const store_measurement_row *a = &c->rows[*(const int *)x], *b = &c->rows[*(const int *)y];
    for (int i = 0; i < a->nparams; i++)
        if (i != c->q && a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    int l = strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
    if (l)
        return l;
    return a->point[c->q] < b->point[c->q] ? -1 : a->point[c->q] > b->point[c->q];
}

static double rows_mean(const store_measurement_row *r)
{
    double mean = 0;
    for (int k = 0; k < r->nreps; k++)
        mean += r->reps[k] / r->nreps;
    return mean;
}

/* The runs with a baseline in their group (the other parameters' values and
 * the levels alike; the baseline: parameter q at *baseline, else its
 * smallest measured value) into sel (in rows' order), each with the
 * baseline's mean duration in base[]. Returns how many, -1 when out of
 * memory. */
static int se_select(const store_measurement_row *rows, int n, int q, const double *baseline,
                     store_measurement_row *sel, double *base)
{
    int *idx = malloc(sizeof(int) * (size_t)(n ? n : 1));
    double *bmean = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!idx || !bmean) {
        free(idx);
        free(bmean);
        return -1;
    }
    for (int i = 0; i < n; i++)
        idx[i] = i;
    se_sort c = {rows, q};
    qsort_r(idx, (size_t)n, sizeof *idx, se_cmp_ctx, &c);
    for (int a = 0, b; a < n; a = b) {
        double t0 = NAN;
        for (b = a; b < n; b++) {
            const store_measurement_row *r = &rows[idx[b]];
            if (b > a) {
                int same = 1;
                for (int i = 0; i < r->nparams && same; i++)
                    same = i == q || r->point[i] == rows[idx[a]].point[i];
                same = same && !strcmp(r->levels ? r->levels : "",
                                       rows[idx[a]].levels ? rows[idx[a]].levels : "");
                if (!same)
                    break;
            }
            if (isnan(t0) && (baseline ? r->point[q] == *baseline : b == a))
                t0 = rows_mean(r);
        }
        for (int k = a; k < b; k++)
            bmean[idx[k]] = t0;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (bmean[i] > 0 && isfinite(bmean[i])) {
            sel[m] = rows[i];
            base[m++] = bmean[i];
        }
    free(idx);
    free(bmean);
    return m;
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
    store_measurement_row *rows = NULL, *sel = NULL;
    double *base = NULL, baseline = 0;
    int n = 0, q = 0, left_out = 0;
    sn_input in = {0};
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
    qsort(rows, (size_t)n, sizeof *rows, cmp_row_point); /* runs by point, then levels */
    if (se) {
        sel = malloc(sizeof *sel * (size_t)n);
        base = malloc(sizeof *base * (size_t)n);
        int k = sel && base ? se_select(rows, n, q, bq ? &baseline : NULL, sel, base) : -1;
        if (k < 0) {
            api_problem(resp, 500, NULL, "out of memory");
            goto done;
        }
        if (k == 0) {
            api_problem(resp, 404, "baseline", "no run has its baseline (%s = %s) measured",
                        m->params[q], bq ? bq : "the smallest measured");
            goto done;
        }
        left_out = n - k;
        rows = sel;
        n = k;
    }
    int bad;
    char err[200], label[400];
    int built = sn_build(m, rows, n, m->nfactors && !m->levels[0], &in, &bad);
    if (built == -2) {
        sweeps_row_label(m, &rows[bad], label, sizeof label);
        api_problem(resp, 422, NULL, "%s: its levels are not declared ones", label);
        goto done;
    }
    if (built < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (se) /* each repetition's efficiency against its baseline's mean duration */
        for (int i = 0; i < n; i++)
            for (int k = in.offset[i]; k < in.offset[i + 1]; k++)
                in.y[k] = base[i] / in.y[k];
    sweep_sn_problem p = {in.ncols, n, in.nlevels, in.level, in.y, in.offset, larger};
    sweep_sn_result r;
    if (sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0) {
        if (bad >= 0) {
            sweeps_row_label(m, &rows[bad], label, sizeof label);
            api_problem(resp, 422, "metric",
                        "%s: a repetition is %s: S/N ratios need observations > 0", label,
                        rows[bad].nreps ? "zero, negative or not finite" : "missing");
        } else {
            api_problem(resp, 500, NULL, "%s", err);
        }
        goto done;
    }
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
        json_object_set_new(head, "runs_without_baseline", json_integer(left_out));
    }
    sweeps_levels_head(head, m, req);
    json_t *tail = json_pack("{s:o, s:{s:s}, s:o}", "factors", sensitivity_factors(m, n, &in, &r),
                             "units", "sn", "dB", "warnings", sweeps_noisy_warnings(m, rows, n));
    jbuf runs = {0};
    jbuf_reserve(&runs, (size_t)n * 80 + 4096); /* a run is about 70 bytes */
    sn_runs_text(&runs, m, rows, n, &r);
    sweep_sensitivity_free(&r);
    size_t len;
    char *body = sweeps_answer_text(head, "runs", &runs, tail, &len);
    predict_page_store_text(ctx, key, resp, body, len);
done:
    free(sel);
    free(base);
    sn_input_free(&in);
    sweeps_kept_rows_release(ctx, &kept);
    model_cache_release(ctx->models, m);
}
