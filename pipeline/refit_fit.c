/*
 * refit_fit.c — step 5 of a refit (pipeline/refit.c): every series
 * measured at enough coordinates fitted with the level combination's
 * shared modeler (modeling/modeler.h), each model with its accuracy at the
 * modelling and the evaluation points (modeling/accuracy.h).
 */

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modeling/model_json.h"
#include "modeling/warning_json.h"
#include "analysis/training.h"
#include "ingest/profile.h"
#include "modeling/accuracy.h"
#include "modeling/aggregate.h"
#include "modeling/expr.h"
#include "modeling/imbalance.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/job_modeler.h"
#include "store/fit_stream.h"
#include "store/models.h"
#include "pipeline/refit_internal.h"

/* ---- fitting --------------------------------------------------------------------------- */

static store_model *new_model(refit_state *st)
{
    refit_out *o = st->out;
    if (o->nmodels == o->models_cap) {
        size_t cap = o->models_cap ? o->models_cap * 2 : 256;
        store_model *v = realloc(o->models, sizeof *v * cap);
        if (!v)
            return NULL;
        o->models = v;
        o->models_cap = cap;
    }
    store_model *m = &o->models[o->nmodels++];
    memset(m, 0, sizeof *m);
    m->levels = st->levels;
    return m;
}

/* Fewest distinct values of any parameter among the coordinates used. */
static int fewest_distinct(const double *coords, int n, int nparams)
{
    int fewest = n;
    for (int q = 0; q < nparams; q++) {
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = coords[(size_t)j * nparams + q] == coords[(size_t)i * nparams + q];
            distinct += !seen;
        }
        if (distinct < fewest)
            fewest = distinct;
    }
    return fewest;
}

/* {"points":[{"point":[..],"measured","predicted","error_pct"}],"median_error_pct"}
 * over the points of one kind (evaluation 0: modelling points, 1: held out). */
static json_t *accuracy_kind(refit_state *st, const series *s, const pmnf_model *model, int eval)
{
    const store_fit_data *d = st->d;
    json_t *pts = json_array();
    double *err = malloc(sizeof(double) * 3 * (size_t)(d->npoints ? d->npoints : 1));
    size_t n = 0;
    for (int p = 0; pts && err && p < d->npoints; p++) {
        if (!s->seen[p] || refit_is_evaluation(d, p) != eval)
            continue;
        const double *pt = d->points + (size_t)p * d->nparams;
        double pred = pmnf_model_eval(model, pt), e = acc_error_pct(pred, s->value[p]);
        err[n++] = e;
        json_t *coords = json_array();
        for (int q = 0; q < d->nparams; q++)
            json_array_append_new(coords, json_real(pt[q]));
        json_array_append_new(pts, json_pack("{s:o, s:f, s:o, s:o}", "point", coords, "measured",
                                             s->value[p], "predicted",
                                             isfinite(pred) ? json_real(pred) : json_null(),
                                             "error_pct", isfinite(e) ? json_real(e) : json_null()));
    }
    double med = err ? acc_median(err, n, err + d->npoints) : NAN;
    free(err);
    return json_pack("{s:o, s:o}", "points", pts ? pts : json_array(), "median_error_pct",
                     isfinite(med) ? json_real(med) : json_null());
}

static json_t *accuracy_json(refit_state *st, const series *s, const pmnf_model *model)
{
    return json_pack("{s:o, s:o}", "modeling", accuracy_kind(st, s, model, 0), "evaluation",
                     accuracy_kind(st, s, model, 1));
}

/* The finite repetitions of the fitted points of s (evaluation-only points
 * are not fitted), as pmnf_reps wants them (point after point); NULL when
 * there are none or no memory. */
static double *gather_reps(const refit_state *st, const series *s, int *start)
{
    size_t total = 0;
    for (int p = 0; p < st->d->npoints; p++)
        if (s->seen[p] && !refit_is_evaluation(st->d, p) && s->reps[p])
            total += (size_t)s->nreps[p];
    double *v = total ? malloc(sizeof(double) * total) : NULL;
    if (!v)
        return NULL;
    int n = 0, k = 0;
    start[0] = 0;
    for (int p = 0; p < st->d->npoints; p++) {
        if (!s->seen[p] || refit_is_evaluation(st->d, p))
            continue;
        for (int r = 0; s->reps[p] && r < s->nreps[p]; r++)
            if (isfinite(s->reps[p][r]))
                v[k++] = s->reps[p][r];
        start[++n] = k;
    }
    return v;
}

static int fit_series(refit_state *st, pmnf_modeler *modeler, const series *s, store_model *out,
                      double *coords, double *values)
{
    const store_fit_data *d = st->d;
    int n = 0;
    for (int p = 0; p < d->npoints; p++) {
        if (!s->seen[p] || refit_is_evaluation(d, p))
            continue;
        memcpy(coords + (size_t)n * d->nparams, d->points + (size_t)p * d->nparams,
               sizeof(double) * (size_t)d->nparams);
        values[n++] = s->value[p];
    }
    out->points = n;
    int distinct = fewest_distinct(coords, n, d->nparams);
    if (distinct < MIN_VALUES_PER_PARAMETER) {
        char *why = malloc(200);
        if (!why)
            return -1;
        snprintf(why, 200,
                 "measured at %d coordinate(s) with %d distinct value(s) of a parameter; at least "
                 "%d values of every parameter are needed",
                 n, distinct, MIN_VALUES_PER_PARAMETER);
        out->reason = refit_arena_keep(&st->out->mem, why);
        return out->reason ? 0 : -1;
    }
    pmnf_data data = {d->nparams, n, coords, values};
    pmnf_model model;
    char err[256];
    int *start = NULL;
    double *reps = NULL;
    if (st->setup.modeler == PMNF_MODELER_ROBUST) {
        start = malloc(sizeof(int) * (size_t)(n + 1));
        reps = start ? gather_reps(st, s, start) : NULL;
    }
    int rc = pmnf_fit_reps(modeler, &data, reps ? &(pmnf_reps){start, reps} : NULL, &model, err,
                           sizeof err);
    free(start);
    free(reps);
    if (rc < 0) {
        char *why = strdup(err);
        out->reason = refit_arena_keep(&st->out->mem, why);
        return out->reason ? 0 : -1;
    }
    json_t *doc = api_model_to_json(&model, (const char *const *)st->e->parameters, 1);
    if (doc)
        json_object_set_new(doc, "accuracy", accuracy_json(st, s, &model));
    if (doc && st->warmup_warning[0]) {
        json_t *w = json_object_get(doc, "warnings");
        if (json_is_array(w))
            json_array_append_new(w, pmnf_warning_json("warmup", st->warmup_warning));
    }
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    char *function = doc ? strdup(json_string_value(json_object_get(doc, "function"))) : NULL;
    json_decref(doc);
    out->model_json = refit_arena_keep(&st->out->mem, text);
    out->function = refit_arena_keep(&st->out->mem, function);
    api_model_growth(&model.f, &out->growth_poly, &out->growth_log);
    return out->model_json && out->function ? 0 : -1;
}

/* The application models of every part and metric, after all callpaths. */
int refit_fit_application(refit_state *st, pmnf_modeler *modeler, double *coords,
                           double *values)
{
    const store_fit_data *d = st->d;
    int rc = 0;
    for (int part = 0; part < NPARTS && rc == 0; part++) {
        for (int m = 0; m < d->nmetrics && rc == 0; m++) {
            const series *s = refit_app_series(st, part, m);
            int any = part != PART_BETWEEN;
            for (int p = 0; p < d->npoints && !any; p++)
                any = s->seen[p];
            if (!any) /* no work between steps anywhere: no such part */
                continue;
            store_model *out = new_model(st);
            if (!out)
                return -1;
            out->level = "application";
            out->name = part_names[part];
            out->category = part <= PART_MEM ? part_names[part] : NULL;
            out->metric = d->metrics[m];
            out->phase = "epoch";
            rc = fit_series(st, modeler, s, out, coords, values);
        }
    }
    return rc;
}

/* The current callpath's models (index c), one per metric and series kind
 * measured anywhere. */
int refit_fit_callpath(refit_state *st, int c, pmnf_modeler *modeler, double *coords,
                        double *values)
{
    const store_fit_data *d = st->d;
    int rc = 0;
    for (int m = 0; m < d->nmetrics && rc == 0; m++) {
        for (int which = 0; which < 2 && rc == 0; which++) {
            const series *s = refit_cp_series(st, m, which);
            int any = 0;
            for (int p = 0; p < d->npoints; p++)
                any |= s->seen[p];
            if (!any)
                continue;
            store_model *out = new_model(st);
            if (!out)
                return -1;
            out->level = "callpath";
            out->name = d->callpaths[c];
            out->category = profile_category_name(d->categories[c]);
            out->metric = d->metrics[m];
            out->phase = which == SERIES_EPOCH ? "epoch" : "between";
            rc = fit_series(st, modeler, s, out, coords, values);
        }
    }
    return rc;
}
