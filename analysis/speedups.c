/*
 * speedups.c — Extra-Deep's speedup, efficiency and cost per kernel and per
 * part, measured and modelled, and the kernels' ranking (see speedups.h).
 */
#include "modeling/modeler.h"
#include "analysis/speedups.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/finite_point.h"
#include "modeling/scaling.h"

static int cmp_point(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int point_index(const double *coords, int n, int nparams, const double *p)
{
    for (int i = 0; i < n; i++)
        if (!cmp_point(coords + (size_t)i * nparams, p, nparams))
            return i;
    return -1;
}

/* Fits v over the coordinates where it is finite into s->model[k]. */
static void fit_one(pmnf_modeler *mod, const double *coords, int np, int nparams,
                    const double *v, sp_series *s, int k, double *c, double *y)
{
    int n = 0;
    for (int p = 0; p < np; p++)
        if (isfinite(v[p])) {
            memcpy(c + (size_t)n * nparams, coords + (size_t)p * nparams,
                   sizeof(double) * (size_t)nparams);
            y[n++] = v[p];
        }
    int distinct = pmnf_fewest_distinct(c, n, nparams);
    if (distinct < SPEEDUP_MIN_VALUES) {
        snprintf(s->reason[k], sizeof s->reason[k],
                 "known at %d coordinate(s) with %d distinct value(s) of a parameter; at least %d "
                 "values of every parameter are needed",
                 n, distinct, SPEEDUP_MIN_VALUES);
        return;
    }
    char err[200];
    if (pmnf_fit(mod, &(pmnf_data){nparams, n, c, y}, &s->model[k], err, sizeof err) < 0) {
        snprintf(s->reason[k], sizeof s->reason[k], "%s", err);
        return;
    }
    s->present[k] = 1;
}

/* Ranked by Δ at the point, highest first; unknown last. */
static int cmp_delta(const void *a, const void *b)
{
    const sp_series *x = *(sp_series *const *)a, *y = *(sp_series *const *)b;
    double dx = x->at[0], dy = y->at[0];
    if (isnan(dx) != isnan(dy))
        return isnan(dx) ? 1 : -1;
    if (dx != dy && !isnan(dx))
        return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int cmp_row(const void *a, const void *b, void *np)
{
    const store_measurement_row *x = *(store_measurement_row *const *)a,
                                *y = *(store_measurement_row *const *)b;
    int c = strcmp(x->level, y->level);
    if (!c)
        c = strcmp(x->name, y->name);
    return c ? c : cmp_point(x->point, y->point, *(const int *)np);
}

int sp_build(sp_table *w, const store_measurement_row *rows, int nrows, int nparams,
             sp_ranks_fn ranks, const void *ctx)
{
    memset(w, 0, sizeof *w);
    int n = nrows;
    const store_measurement_row **by = malloc(sizeof *by * (size_t)(n ? n : 1));
    w->coords = malloc(sizeof(double) * (size_t)(n ? n : 1) * nparams);
    if (!by || !w->coords) {
        free(by);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (rows[i].nparams == nparams)
            by[k++] = &rows[i];
    n = k;
    /* the distinct coordinates, ascending */
    for (int i = 0; i < n; i++)
        if (point_index(w->coords, w->np, nparams, by[i]->point) < 0)
            memcpy(w->coords + (size_t)w->np++ * nparams, by[i]->point,
                   sizeof(double) * (size_t)nparams);
    for (int i = 1; i < w->np; i++) /* insertion sort: a few dozen coordinates */
        for (int j = i; j > 0 && cmp_point(w->coords + (size_t)(j - 1) * nparams,
                                           w->coords + (size_t)j * nparams, nparams) > 0;
             j--)
            for (int q = 0; q < nparams; q++) {
                double t = w->coords[(size_t)j * nparams + q];
                w->coords[(size_t)j * nparams + q] = w->coords[(size_t)(j - 1) * nparams + q];
                w->coords[(size_t)(j - 1) * nparams + q] = t;
            }
    qsort_r(by, (size_t)n, sizeof *by, cmp_row, &nparams);
    int ns = 0;
    for (int i = 0; i < n; i++)
        ns += i == 0 || strcmp(by[i]->level, by[i - 1]->level) ||
              strcmp(by[i]->name, by[i - 1]->name);
    size_t np = (size_t)(w->np ? w->np : 1);
    w->ranks = malloc(sizeof(double) * np);
    w->s = calloc((size_t)(ns ? ns : 1), sizeof *w->s);
    w->block = malloc(sizeof(double) * np * 4 * (size_t)(ns ? ns : 1));
    if (!w->ranks || !w->s || !w->block) {
        free(by);
        return -1;
    }
    for (int p = 0; p < w->np; p++)
        w->ranks[p] = ranks(ctx, w->coords + (size_t)p * nparams);
    for (size_t i = 0; i < np * 4 * (size_t)(ns ? ns : 1); i++)
        w->block[i] = NAN;
    int s = -1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(by[i]->level, by[i - 1]->level) ||
            strcmp(by[i]->name, by[i - 1]->name)) {
            sp_series *x = &w->s[++s];
            double *b = w->block + (size_t)s * np * 4;
            *x = (sp_series){.name = by[i]->name,
                             .category = strcmp(by[i]->level, "application") ? by[i]->category
                                                                             : NULL,
                             .value = b, .delta = b + np, .eps = b + 2 * np, .ch = b + 3 * np};
        }
        int p = point_index(w->coords, w->np, nparams, by[i]->point);
        w->s[s].value[p] = by[i]->value;
    }
    w->ns = ns;
    w->nparams = nparams;
    free(by);
    return 0;
}

void sp_largest(const sp_table *w, double *at)
{
    int best = 0;
    for (int p = 1; p < w->np; p++) {
        double a = 0, b = 0;
        for (int i = 0; i < w->nparams; i++) {
            a += log(w->coords[(size_t)p * w->nparams + i]);
            b += log(w->coords[(size_t)best * w->nparams + i]);
        }
        best = a >= b ? p : best;
    }
    memcpy(at, w->coords + (size_t)best * w->nparams, sizeof(double) * (size_t)w->nparams);
}

int sp_compute(sp_table *w, const double *at, int strong, int is_time, double cores_per_rank)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = strong;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    double *c = malloc(sizeof(double) * (size_t)w->np * w->nparams);
    double *y = malloc(sizeof(double) * (size_t)w->np);
    if (!mod || !c || !y) {
        pmnf_modeler_free(mod);
        free(c);
        free(y);
        return -1;
    }
    int pat = point_index(w->coords, w->np, w->nparams, at);
    for (int i = 0; i < w->ns; i++) {
        sp_series *s = &w->s[i];
        scl_series_derived(w->coords, w->np, w->nparams, s->value, w->ranks, cores_per_rank,
                           s->delta, s->eps, s->ch);
        const double *v[3] = {s->delta, s->eps, s->ch};
        for (int k = 0; k < 3; k++) {
            if (k == 2 && !is_time) {
                snprintf(s->reason[k], sizeof s->reason[k], "cost is modeled from metric time");
                s->at[k] = NAN;
                continue;
            }
            fit_one(mod, w->coords, w->np, w->nparams, v[k], s, k, c, y);
            s->at_interval[k] = 0;
            if (s->present[k]) {
                s->at_interval[k] =
                    pmnf_predict(&s->model[k], at, &s->at[k], &s->at_lo[k], &s->at_hi[k]) == 0;
                if (k == 0) /* Δ = (T_1 − T_k)/(T_1/100) <= 100: T_k is never below 0 */
                    scl_speedup_pct_bound(s->at[k], &s->at_lo[k], &s->at_hi[k]);
            } else {
                s->at[k] = s->at_lo[k] = s->at_hi[k] = pat >= 0 ? v[k][pat] : NAN;
            }
        }
    }
    pmnf_modeler_free(mod);
    free(c);
    free(y);
    return 0;
}

int sp_check_finite(const sp_table *w, const char *const *names, const double *at,
                    an_problem *p)
{
    static const char *const what[3] = {"speedup", "efficiency", "core-hours"};
    for (int i = 0; i < w->ns; i++)
        for (int k = 0; k < 3; k++) {
            const sp_series *s = &w->s[i];
            if (!s->present[k]) /* no model: the measured value there, or none (null) */
                continue;
            char text[300];
            snprintf(text, sizeof text, "the model of %s's %s", s->name, what[k]);
            fp_value v = {text, s->at[k]};
            if (finite_point_check(&v, 1, names, w->nparams, at, NULL, p) < 0)
                return -1;
        }
    return 0;
}

int sp_ranking(const sp_table *w, sp_series **order)
{
    int nk = 0;
    for (int i = 0; i < w->ns; i++)
        if (w->s[i].category)
            order[nk++] = &w->s[i];
    qsort(order, (size_t)nk, sizeof *order, cmp_delta);
    return nk;
}

void sp_table_free(sp_table *w)
{
    free(w->coords);
    free(w->ranks);
    free(w->block);
    free(w->s);
    memset(w, 0, sizeof *w);
}
