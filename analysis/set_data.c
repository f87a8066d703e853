/*
 * set_data.c — builds the data the analyses read of one model set and
 * metric (see set_data.h) from its stored rows; api/analysis_data.c reads
 * the rows and keeps what this builds in the model cache.
 *
 * Derived models (speedup, efficiency, cost, LIF) are fitted with the
 * modeler and rules a refit uses: Extra-P's defaults, negative exponents for
 * strong scaling, and a model only where every parameter has at least 5
 * distinct measured values.
 */
#include "modeling/modeler.h"
#include "analysis/set_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonb.h"
#include "modeling/model_json.h"
#include "modeling/scaling.h"

#define MIN_VALUES_PER_PARAMETER 5

static const char *const group_names[AD_GROUPS] = {"comp", "comm", "mem", "epoch"};

int ad_group_of(const char *name)
{
    for (int g = 0; name && g < AD_GROUPS; g++)
        if (!strcmp(group_names[g], name))
            return g;
    return -1;
}

int ad_cmp_point(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

int ad_point_index(const ad_app *a, const double *point)
{
    int lo = 0, hi = a->npoints - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = ad_cmp_point(a->coords + (size_t)mid * a->nparams, point, a->nparams);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* ---- fitting derived series -------------------------------------------------- */

/* Fits values[p] over the coordinates where they are finite. -1 when out
 * of memory (out then holds no text). */
static int fit_series(pmnf_modeler *mod, const ad_set *s, const double *coords,
                      const double *values, int npoints, ad_fit *out)
{
    int nparams = s->nparams;
    double *c = malloc(sizeof(double) * (size_t)(npoints ? npoints : 1) * nparams);
    double *v = malloc(sizeof(double) * (size_t)(npoints ? npoints : 1));
    memset(out, 0, sizeof *out);
    if (!c || !v || !mod) {
        snprintf(out->reason, sizeof out->reason, "out of memory");
        free(c);
        free(v);
        return -1;
    }
    int n = 0;
    for (int p = 0; p < npoints; p++) {
        if (!isfinite(values[p]))
            continue;
        memcpy(c + (size_t)n * nparams, coords + (size_t)p * nparams,
               sizeof(double) * (size_t)nparams);
        v[n++] = values[p];
    }
    int distinct = pmnf_fewest_distinct(c, n, nparams), rc = 0;
    char err[200];
    if (distinct < MIN_VALUES_PER_PARAMETER) {
        snprintf(out->reason, sizeof out->reason,
                 "known at %d coordinate(s) with %d distinct value(s) of a parameter; at least %d "
                 "values of every parameter are needed",
                 n, distinct, MIN_VALUES_PER_PARAMETER);
    } else if (pmnf_fit(mod, &(pmnf_data){nparams, n, c, v}, &out->model, err, sizeof err) < 0) {
        snprintf(out->reason, sizeof out->reason, "%s", err);
    } else {
        const char *names[PMNF_MAX_PARAMS];
        for (int i = 0; i < nparams; i++)
            names[i] = s->params[i];
        out->function = pmnf_format_dup(&out->model.f, names);
        out->present = out->function != NULL;
        rc = out->present ? 0 : -1;
    }
    free(c);
    free(v);
    return rc;
}

static void fit_clear(ad_fit *f)
{
    free(f->function);
    f->function = NULL;
}

/* Derived metrics of time follow the refit's rule (negative exponents for
 * strong scaling); LIFs may always fall towards a limit (1.3/(1 + 0.3/N)). */
static pmnf_modeler *new_modeler(const ad_set *s, int negative)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = negative || s->strong;
    return pmnf_modeler_new(&o);
}

/* ---- the app data ---------------------------------------------------------------- */

/* about what an ad_app holds, for the cache's byte budget */
static size_t fit_text_bytes(const ad_fit *f)
{
    return f->function ? strlen(f->function) + 1 : 0;
}

size_t ad_app_bytes(const ad_app *a)
{
    size_t per_point = (size_t)a->nparams + 6 + 2 * AD_GROUPS;
    size_t texts = fit_text_bytes(&a->speedup) + fit_text_bytes(&a->efficiency) +
                   fit_text_bytes(&a->cost);
    for (int g = 0; g < AD_GROUPS; g++)
        texts += fit_text_bytes(&a->lif_model[g]);
    return sizeof *a + texts +
           (size_t)a->npoints * (per_point * sizeof(double) + AD_GROUPS * sizeof(imb_summary));
}

void ad_app_free(void *p)
{
    ad_app *a = p;
    if (!a)
        return;
    free(a->coords);
    free(a->ranks);
    for (int g = 0; g < AD_GROUPS; g++) {
        free(a->value[g]);
        free(a->lif[g]);
        fit_clear(&a->lif_model[g]);
    }
    fit_clear(&a->speedup);
    fit_clear(&a->efficiency);
    fit_clear(&a->cost);
    free(a->speedup_pct);
    free(a->efficiency_pct);
    free(a->core_hours);
    free(a);
}

static int cmp_row_point(const void *x, const void *y, void *nparams)
{
    const store_measurement_row *a = *(store_measurement_row *const *)x;
    const store_measurement_row *b = *(store_measurement_row *const *)y;
    return ad_cmp_point(a->point, b->point, *(const int *)nparams);
}

int ad_rows_by_point(const store_measurement_row *rows, int nrows, int nparams,
                     const store_measurement_row **by)
{
    int n = 0;
    for (int i = 0; i < nrows; i++)
        if (rows[i].nparams == nparams && ad_group_of(rows[i].name) >= 0)
            by[n++] = &rows[i];
    qsort_r(by, (size_t)n, sizeof *by, cmp_row_point, &nparams);
    return n;
}

/* The LIF summary of one measurement: over its repetitions, or (sets
 * written before they were kept) the LIF of its per-rank medians. */
static void row_lif(const store_measurement_row *r, imb_summary *out, double *scratch)
{
    if (r->lif_reps && r->nlif > 0) {
        imb_summarize(r->lif_reps, r->nlif, scratch, out);
        return;
    }
    double l = imb_lif(r->ranks, r->nranks, 1);
    out->n = isfinite(l) ? 1 : 0;
    out->median = out->min = out->max = l;
}

/* Observations of the regression of the epoch time on the parameters and
 * the LIF of group g: one per repetition where both were kept, else one per
 * coordinate (medians). */
static void regress_group(ad_app *a, const store_measurement_row *const *epoch_rows,
                          const store_measurement_row *const *g_rows, int g)
{
    int nreg = a->nparams + 1, cap = 0;
    for (int p = 0; p < a->npoints; p++)
        if (epoch_rows[p] && g_rows[p])
            cap += epoch_rows[p]->nreps > 1 ? epoch_rows[p]->nreps : 1;
    double *x = malloc(sizeof(double) * (size_t)(cap ? cap : 1) * nreg);
    double *y = malloc(sizeof(double) * (size_t)(cap ? cap : 1));
    int n = 0;
    if (!x || !y) {
        snprintf(a->reg_why[g], sizeof a->reg_why[g], "out of memory");
        free(x);
        free(y);
        return;
    }
    for (int p = 0; p < a->npoints; p++) {
        const store_measurement_row *e = epoch_rows[p], *l = g_rows[p];
        if (!e || !l)
            continue;
        const double *pt = a->coords + (size_t)p * a->nparams;
        if (l->lif_reps && l->nlif > 0 && e->nreps > 0) {
            for (int r = 0; r < e->nreps && r < l->nlif && n < cap; r++, n++) {
                memcpy(x + (size_t)n * nreg, pt, sizeof(double) * (size_t)a->nparams);
                x[(size_t)n * nreg + a->nparams] = l->lif_reps[r];
                y[n] = e->reps[r];
            }
        } else if (n < cap && isfinite(a->lif[g][p].median)) {
            memcpy(x + (size_t)n * nreg, pt, sizeof(double) * (size_t)a->nparams);
            x[(size_t)n * nreg + a->nparams] = a->lif[g][p].median;
            y[n++] = e->value;
        }
    }
    a->reg_ok[g] = imb_regress(x, nreg, y, n, &a->reg[g], a->reg_why[g], sizeof a->reg_why[g]) == 0;
    free(x);
    free(y);
}

static double sum_log(const double *p, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += log(p[i]);
    return s;
}

ad_app *ad_app_build(const ad_set *s, store_measurement_row *rows, int nrows)
{
    ad_app *a = calloc(1, sizeof *a);
    const store_measurement_row **by = malloc(sizeof *by * (size_t)(nrows ? nrows : 1));
    /* rows of each group per coordinate */
    const store_measurement_row **at = NULL;
    if (!a || !by) {
        free(by);
        ad_app_free(a);
        return NULL;
    }
    a->nparams = s->nparams;
    int n = ad_rows_by_point(rows, nrows, s->nparams, by);
    int np = 0;
    for (int i = 0; i < n; i++)
        np += i == 0 || ad_cmp_point(by[i]->point, by[i - 1]->point, s->nparams) != 0;
    a->npoints = np;
    size_t pn = (size_t)(np ? np : 1);
    a->coords = malloc(sizeof(double) * pn * s->nparams);
    a->ranks = malloc(sizeof(double) * pn);
    a->speedup_pct = malloc(sizeof(double) * pn);
    a->efficiency_pct = malloc(sizeof(double) * pn);
    a->core_hours = malloc(sizeof(double) * pn);
    at = calloc(pn * AD_GROUPS, sizeof *at);
    double *scratch = malloc(sizeof(double) * 4096);
    int ok = a->coords && a->ranks && a->speedup_pct && a->efficiency_pct && a->core_hours && at &&
             scratch;
    for (int g = 0; g < AD_GROUPS && ok; g++) {
        a->value[g] = malloc(sizeof(double) * pn);
        a->lif[g] = calloc(pn, sizeof(imb_summary));
        ok = a->value[g] && a->lif[g];
        for (int p = 0; ok && p < np; p++)
            a->value[g][p] = NAN;
    }
    if (!ok) {
        free(by);
        free(at);
        free(scratch);
        ad_app_free(a);
        return NULL;
    }
    int p = -1;
    a->lif_per_rep = 1;
    for (int i = 0; i < n; i++) {
        if (i == 0 || ad_cmp_point(by[i]->point, by[i - 1]->point, s->nparams) != 0) {
            p++;
            memcpy(a->coords + (size_t)p * s->nparams, by[i]->point,
                   sizeof(double) * (size_t)s->nparams);
        }
        int g = ad_group_of(by[i]->name);
        a->value[g][p] = by[i]->value;
        at[(size_t)g * pn + p] = by[i];
        if (by[i]->nlif > 4096 || !by[i]->lif_reps)
            a->lif_per_rep = 0;
        if (by[i]->nlif <= 4096)
            row_lif(by[i], &a->lif[g][p], scratch);
    }
    /* P_1 is the first coordinate; the largest has the largest product */
    a->baseline = 0;
    a->largest = 0;
    for (int q = 0; q < np; q++) {
        const double *pt = a->coords + (size_t)q * s->nparams;
        a->ranks[q] = s->ranks(s->ctx, pt);
        if (sum_log(pt, s->nparams) >= sum_log(a->coords + (size_t)a->largest * s->nparams,
                                               s->nparams))
            a->largest = q;
    }
    int is_time = !strcmp(s->metric, "time");
    const double *t = a->value[AD_GROUPS - 1];
    for (int q = 0; q < np; q++) {
        /* P_1: the first point of the series along x_1 through q (with
         * several parameters, at q's values of the others) */
        int b = scl_series_baseline(a->coords, np, s->nparams, a->coords + (size_t)q * s->nparams,
                                    t);
        double d = b >= 0 ? scl_speedup_pct(t[b], t[q]) : NAN;
        double dt = b >= 0 ? scl_ideal_speedup_pct(a->ranks[b], a->ranks[q]) : NAN;
        a->speedup_pct[q] = d;
        a->efficiency_pct[q] = q == b ? 100 : scl_efficiency_pct(d, dt);
        a->core_hours[q] = is_time && a->ranks[q] > 0 ? t[q] * a->ranks[q] * s->cores_per_rank / 3600 : NAN;
    }
    pmnf_modeler *mod = new_modeler(s, 0), *lif_mod = new_modeler(s, 1);
    ok = fit_series(mod, s, a->coords, a->speedup_pct, np, &a->speedup) == 0;
    ok &= fit_series(mod, s, a->coords, a->efficiency_pct, np, &a->efficiency) == 0;
    if (is_time)
        ok &= fit_series(mod, s, a->coords, a->core_hours, np, &a->cost) == 0;
    else
        snprintf(a->cost.reason, sizeof a->cost.reason, "cost is modeled from metric time");
    double *lifs = malloc(sizeof(double) * pn);
    ok &= lifs != NULL;
    for (int g = 0; g < AD_GROUPS && ok; g++) {
        for (int q = 0; q < np; q++)
            lifs[q] = a->lif[g][q].n > 0 ? a->lif[g][q].median : NAN;
        ok = fit_series(lif_mod, s, a->coords, lifs, np, &a->lif_model[g]) == 0;
        regress_group(a, at + (size_t)(AD_GROUPS - 1) * pn, at + (size_t)g * pn, g);
    }
    free(lifs);
    pmnf_modeler_free(mod);
    pmnf_modeler_free(lif_mod);
    free(by);
    free(at);
    free(scratch);
    if (!ok) { /* out of memory: nothing half-built is kept */
        ad_app_free(a);
        return NULL;
    }
    return a;
}

/* ---- the callpath data ------------------------------------------------------------ */

/* about what an ad_callpaths holds, for the cache's byte budget */
size_t ad_callpaths_bytes(const ad_callpaths *d)
{
    size_t per = sizeof(ad_callpath) + 64 + (size_t)d->npoints * sizeof(imb_summary);
    size_t texts = 0;
    for (int i = 0; i < d->n; i++)
        texts += fit_text_bytes(&d->v[i].model) + fit_text_bytes(&d->v[i].lif_model);
    return sizeof *d + (size_t)d->n * per + texts;
}

void ad_callpaths_free(void *p)
{
    ad_callpaths *d = p;
    if (!d)
        return;
    for (int i = 0; i < d->n; i++) {
        free(d->v[i].name);
        free(d->v[i].lif);
        fit_clear(&d->v[i].model);
        fit_clear(&d->v[i].lif_model);
    }
    free(d->v);
    free(d);
}

static int cmp_callpath(const void *x, const void *y)
{
    return strcmp(((const ad_callpath *)x)->name, ((const ad_callpath *)y)->name);
}

static ad_callpath *find_callpath(ad_callpaths *d, const char *name)
{
    ad_callpath key = {.name = (char *)name};
    return bsearch(&key, d->v, (size_t)d->n, sizeof *d->v, cmp_callpath);
}

ad_callpaths *ad_callpaths_build(const ad_set *s, const ad_app *app, store_model_row *models,
                                 int nmodels, store_measurement_row *rows, int nrows)
{
    ad_callpaths *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->v = calloc((size_t)(nmodels ? nmodels : 1), sizeof *d->v);
    d->npoints = app->npoints;
    if (!d->v) {
        free(d);
        return NULL;
    }
    const char *names[PMNF_MAX_PARAMS];
    for (int i = 0; i < s->nparams; i++)
        names[i] = s->params[i];
    int ok = 1;
    for (int i = 0; i < nmodels && ok; i++) {
        ad_callpath *c = &d->v[d->n];
        c->name = strdup(models[i].name);
        c->lif = calloc((size_t)(app->npoints ? app->npoints : 1), sizeof *c->lif);
        ok = c->name && c->lif;
        d->n++;
        if (!ok)
            break;
        snprintf(c->category, sizeof c->category, "%s", models[i].category ? models[i].category : "");
        c->now = NAN;
        c->growth_poly = models[i].growth_poly;
        c->growth_log = models[i].growth_log;
        json_t *doc = models[i].model_json ? jsonb_parse(models[i].model_json, 0) : NULL;
        if (doc && api_model_from_json(doc, names, s->nparams, &c->model.model) == 0) {
            /* the stored text, whole (a two-segment model's names both) */
            c->model.function = strdup(models[i].function ? models[i].function : "");
            c->model.present = 1;
            ok = c->model.function != NULL;
        } else {
            snprintf(c->model.reason, sizeof c->model.reason, "%s",
                     models[i].reason ? models[i].reason : "not modeled");
        }
        json_decref(doc);
    }
    if (!ok) {
        ad_callpaths_free(d);
        return NULL;
    }
    qsort(d->v, (size_t)d->n, sizeof *d->v, cmp_callpath);
    double *scratch = malloc(sizeof(double) * 4096);
    double *lifs = malloc(sizeof(double) * (size_t)(app->npoints ? app->npoints : 1));
    if (!scratch || !lifs) {
        free(scratch);
        free(lifs);
        ad_callpaths_free(d);
        return NULL;
    }
    for (int i = 0; i < nrows; i++) {
        ad_callpath *c = find_callpath(d, rows[i].name);
        int p = rows[i].nparams == app->nparams ? ad_point_index(app, rows[i].point) : -1;
        if (!c || p < 0 || rows[i].nlif > 4096)
            continue;
        row_lif(&rows[i], &c->lif[p], scratch);
        if (p == app->largest)
            c->now = rows[i].value;
    }
    pmnf_modeler *mod = new_modeler(s, 1);
    for (int i = 0; i < d->n && ok; i++) {
        for (int p = 0; p < app->npoints; p++)
            lifs[p] = d->v[i].lif[p].n > 0 ? d->v[i].lif[p].median : NAN;
        ok = fit_series(mod, s, app->coords, lifs, app->npoints, &d->v[i].lif_model) == 0;
    }
    pmnf_modeler_free(mod);
    free(scratch);
    free(lifs);
    if (!ok) {
        ad_callpaths_free(d);
        return NULL;
    }
    return d;
}
