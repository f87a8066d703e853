/*
 * sensitivity.c — the Taguchi sensitivity of one measured series from its
 * repetitions (sensitivity.h): the runs, the columns, the efficiency over a
 * baseline, the S/N solution and the answer's "factors".
 */
#include "analysis/sensitivity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonb.h"
#include "sweep/sweep_efficiency.h"

static json_t *number_json(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

void sens_result_free(sens_result *s)
{
    free(s->level);
    free(s->nlevels);
    free(s->offset);
    free(s->y);
    free(s->distinct);
    json_decref(s->declared);
    free(s->sel);
    free(s->base);
    if (s->solved)
        sweep_sensitivity_free(&s->r);
    memset(s, 0, sizeof *s);
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
static int factor_columns(const noisy_names *nm, const char *factors_spec,
                          const store_measurement_row *rows, int n, sens_result *in, int *bad)
{
    *bad = -1;
    json_t *spec = jsonb_parse(factors_spec ? factors_spec : "", 0);
    json_t *factors = json_object_get(spec, "factors");
    in->declared = json_array();
    for (int k = 0; k < nm->nfactors; k++) {
        json_t *decl = json_object_get(factors, nm->factors[k]);
        json_array_append(in->declared, decl ? decl : json_null());
        in->nlevels[nm->nparams + k] = (int)json_array_size(decl);
    }
    json_decref(spec);
    /* rows share few combinations: each distinct text is decoded once */
    const char *seen[64];
    int seen_at[64], nseen = 0;
    for (int i = 0; i < n; i++) {
        int *lv = in->level + (size_t)i * (size_t)in->ncols + nm->nparams, s = 0;
        while (s < nseen && strcmp(seen[s], rows[i].levels ? rows[i].levels : ""))
            s++;
        if (s < nseen) {
            memcpy(lv, in->level + (size_t)seen_at[s] * (size_t)in->ncols + nm->nparams,
                   sizeof(int) * (size_t)nm->nfactors);
            continue;
        }
        json_t *arr = jsonb_parse(rows[i].levels ? rows[i].levels : "", JSON_DECODE_ANY);
        int ok = json_array_size(arr) == (size_t)nm->nfactors;
        for (int k = 0; ok && k < nm->nfactors; k++) {
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
static int build(const noisy_names *nm, const sens_request *rq, const store_measurement_row *rows,
                 int n, sens_result *in, int *bad)
{
    int np = nm->nparams;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)rows[i].nreps;
    in->nfactor_cols = rq->factor_columns ? nm->nfactors : 0;
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
    if (in->nfactor_cols && factor_columns(nm, rq->factors_spec, rows, n, in, bad) < 0)
        return *bad >= 0 ? -2 : -1;
    return 0;
}

/* ---- S/N over scaling efficiency (paper 003 §3.2, Fig. 12) ---- */

static int cmp_levels_ctx(const void *x, const void *y, void *arg)
{
    const store_measurement_row *rows = arg;
    const store_measurement_row *a = &rows[*(const int *)x], *b = &rows[*(const int *)y];
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* The runs with a baseline in their group (the other parameters' values and
 * the levels alike; the baseline: parameter q at *baseline, else its
 * smallest measured value; sweep_se_baselines) into sel (in rows' order),
 * each with the baseline's mean duration in base[]. Returns how many, -1
 * when out of memory. */
static int se_select(const store_measurement_row *rows, int n, int q, const double *baseline,
                     store_measurement_row *sel, double *base)
{
    int np = n ? rows[0].nparams : 0;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)rows[i].nreps;
    size_t m1 = n > 0 ? (size_t)n : 1;
    int *idx = malloc(sizeof(int) * m1), *gid = malloc(sizeof(int) * m1);
    int *off = malloc(sizeof(int) * (m1 + 1));
    double *pts = malloc(sizeof(double) * m1 * (np > 0 ? (size_t)np : 1));
    double *ys = malloc(sizeof(double) * (total ? total : 1));
    double *bmean = malloc(sizeof(double) * m1);
    int m = -1;
    if (!idx || !gid || !off || !pts || !ys || !bmean)
        goto done;
    /* the level combinations as numbers: runs by their levels' text */
    for (int i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, cmp_levels_ctx, (void *)rows);
    for (int k = 0, g = 0; k < n; k++) {
        if (k && cmp_levels_ctx(&idx[k - 1], &idx[k], (void *)rows))
            g++;
        gid[idx[k]] = g;
    }
    off[0] = 0;
    for (int i = 0; i < n; i++) {
        memcpy(pts + (size_t)i * np, rows[i].point, sizeof(double) * (size_t)np);
        memcpy(ys + off[i], rows[i].reps, sizeof(double) * (size_t)rows[i].nreps);
        off[i + 1] = off[i] + rows[i].nreps;
    }
    if (sweep_se_baselines(pts, np, n, gid, q, baseline, ys, off, bmean) < 0)
        goto done;
    m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(bmean[i])) {
            sel[m] = rows[i];
            base[m++] = bmean[i];
        }
done:
    free(idx);
    free(gid);
    free(off);
    free(pts);
    free(ys);
    free(bmean);
    return m;
}

int sens_compute(const noisy_names *nm, store_measurement_row *rows, int n,
                 const sens_request *rq, sens_result *out, int *bad, char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    *bad = -1;
    err[0] = '\0';
    qsort(rows, (size_t)n, sizeof *rows, cmp_row_point); /* runs by point, then levels */
    if (rq->efficiency) {
        out->sel = malloc(sizeof *out->sel * (size_t)(n ? n : 1));
        out->base = malloc(sizeof *out->base * (size_t)(n ? n : 1));
        int k = out->sel && out->base
                    ? se_select(rows, n, rq->q, rq->baseline, out->sel, out->base)
                    : -1;
        if (k < 0)
            return SENS_NOMEM;
        if (k == 0)
            return SENS_NO_BASELINE;
        out->left_out = n - k;
        rows = out->sel;
        n = k;
    }
    out->rows = rows;
    out->n = n;
    int built = build(nm, rq, rows, n, out, bad);
    if (built == -2)
        return SENS_UNDECLARED;
    if (built < 0)
        return SENS_NOMEM;
    if (rq->efficiency) /* each repetition's efficiency against its baseline's mean duration */
        for (int i = 0; i < n; i++)
            for (int k = out->offset[i]; k < out->offset[i + 1]; k++)
                out->y[k] = out->base[i] / out->y[k];
    sweep_sn_problem p = {out->ncols, n, out->nlevels, out->level, out->y, out->offset,
                          rq->larger};
    if (sweep_sensitivity(&p, &out->r, bad, err, errcap) < 0)
        return *bad >= 0 ? SENS_BAD_VALUE : SENS_FAILED;
    out->solved = 1;
    return SENS_OK;
}

json_t *sens_factors_json(const noisy_names *nm, const sens_result *s)
{
    json_t *factors = json_array();
    int n = s->n;
    for (int k = 0; factors && k < s->ncols; k++) {
        int fi = s->r.order[k], cat = fi >= nm->nparams;
        const sweep_sn_factor *fa = &s->r.factors[fi];
        const double *vals = cat ? NULL : s->distinct + (size_t)fi * (n ? n : 1);
        json_t *decl = cat ? json_array_get(s->declared, (size_t)(fi - nm->nparams)) : NULL;
        json_t *levels = json_array();
        for (int l = 0; l < fa->nlevels; l++)
            json_array_append_new(
                levels, json_pack("{s:o, s:o, s:i}", "level",
                                  cat ? json_incref(json_array_get(decl, (size_t)l))
                                      : json_real(vals[l]),
                                  "mean_sn", number_json(fa->mean_sn[l]), "runs", fa->runs[l]));
        json_t *best = fa->best_level < 0 ? json_null()
                       : cat ? json_incref(json_array_get(decl, (size_t)fa->best_level))
                             : json_real(vals[fa->best_level]);
        json_array_append_new(
            factors, json_pack("{s:i, s:s, s:s, s:f, s:f, s:o, s:o}", "rank", fa->rank, "factor",
                               cat ? nm->factors[fi - nm->nparams] : nm->params[fi], "kind",
                               cat ? "factor" : "parameter", "range", fa->range, "normalized",
                               fa->normalized, "best_level", best, "levels", levels));
    }
    return factors;
}
