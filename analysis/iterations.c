/*
 * iterations.c — paper 004's iteration model over an experiment's profile
 * rows: phases, per-coordinate statistics, speedups and their models (see
 * iterations.h).
 */
#include "modeling/modeler.h"
#include "analysis/iterations.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/phase.h"
#include "ingest/profile.h"
#include "modeling/model_json.h"
#include "modeling/scaling.h"
#include "modeling/warning_json.h"

/* The phases an experiment names, in IT_* order (t_c has no patterns). */
static const char *const phase_keys[IT_C] = {"io", "h2d", "md", "forward", "backward", "update"};
static const char *const phase_defaults[IT_C] = {
    "dataloader,data_load,io,fetch",
    "memcpy htod,h2d,to_device",
    "md,minibatch,mini_batch,scatter",
    "forward,fwd",
    "backward,bwd,autograd::engine::evaluate_function",
    "optimizer.step,optimizer,update",
};

/* Per callpath its phase (-1: none); matched[p]: the pattern chosen. */
static void classify(const store_fit_data *d, const json_t *custom, int *cp_phase,
                     char matched[IT_C][64], const char *text[IT_C])
{
    for (int c = 0; c < d->ncallpaths; c++)
        cp_phase[c] = -1;
    for (int p = 0; p < IT_C; p++) {
        const char *t = json_string_value(json_object_get(custom, phase_keys[p]));
        text[p] = t ? t : phase_defaults[p];
        ingest_phase_patterns all;
        ingest_phase_compile(text[p], &all);
        matched[p][0] = '\0';
        for (int k = 0; k < all.n && !matched[p][0]; k++) {
            ingest_phase_patterns one = {.n = 1};
            memcpy(one.pat[0], all.pat[k], sizeof one.pat[0]);
            one.len[0] = all.len[k];
            int any = 0;
            for (int c = 0; c < d->ncallpaths; c++)
                if (cp_phase[c] < 0 &&
                    ingest_phase_match(&one, d->callpaths[c], strlen(d->callpaths[c]))) {
                    cp_phase[c] = p;
                    any = 1;
                }
            if (any)
                snprintf(matched[p], sizeof matched[p], "%s", all.pat[k]);
        }
    }
    for (int c = 0; c < d->ncallpaths; c++)
        if (cp_phase[c] < 0 && d->categories[c] == PROFILE_COMM)
            cp_phase[c] = IT_C;
}

const char *it_phase_key(int p)
{
    return p >= 0 && p < IT_C ? phase_keys[p] : NULL;
}

int it_table_build(it_table *t, const store_fit_data *d, const json_t *custom,
                   const training_setup *ts)
{
    memset(t, 0, sizeof *t);
    int nparams = d->nparams;
    t->nparams = nparams;
    it_row *rows = malloc(sizeof(it_row) * (d->nrows ? d->nrows : 1));
    t->cp_phase = malloc(sizeof(int) * (size_t)(d->ncallpaths ? d->ncallpaths : 1));
    t->res = calloc((size_t)(d->npoints ? d->npoints : 1), sizeof *t->res);
    t->pidx = malloc(sizeof(int) * (size_t)(d->npoints ? d->npoints : 1));
    t->coords = malloc(sizeof(double) * (size_t)(d->npoints ? d->npoints : 1) * (nparams ? nparams : 1));
    t->ranks = malloc(sizeof(double) * (size_t)(d->npoints ? d->npoints : 1));
    t->vals = malloc(sizeof(double) * (size_t)(d->npoints ? d->npoints : 1) * (IT_NQ + IT_NSPEED + 4));
    if (!t->cp_phase || !rows || !t->res || !t->pidx || !t->coords || !t->ranks || !t->vals) {
        free(rows);
        return -1;
    }
    classify(d, custom, t->cp_phase, t->matched, t->text);
    int time_metric = -1;
    for (int m = 0; m < d->nmetrics; m++)
        if (!strcmp(d->metrics[m], "time"))
            time_metric = m;
    /* per fitting coordinate: the iteration statistics */
    int np = 0;
    size_t at = 0;
    for (int p = 0; p < d->npoints; p++) {
        size_t n = 0;
        while (at < d->nrows && d->rows[at].point == p) {
            const store_fit_row *r = &d->rows[at++];
            if (r->phase != PROFILE_TRAIN || r->metric != time_metric ||
                t->cp_phase[r->callpath] < 0 || r->step < ts->warmup_steps)
                continue;
            rows[n++] = (it_row){r->repetition, r->rank, r->step, t->cp_phase[r->callpath], r->value};
        }
        if (d->evaluation && d->evaluation[p])
            continue;
        if (it_coordinate(rows, n, &t->res[np]) < 0) {
            free(rows);
            return -1;
        }
        if (t->res[np].iterations == 0)
            continue;
        const double *pt = d->points + (size_t)p * d->nparams;
        memcpy(t->coords + (size_t)np * nparams, pt, sizeof(double) * (size_t)nparams);
        double g = NAN, mm = NAN;
        if (expr_eval(&ts->e[TRAINING_G], pt, &g) < 0 || expr_eval(&ts->e[TRAINING_M], pt, &mm) < 0)
            g = mm = NAN;
        t->ranks[np] = g * mm;
        t->pidx[np++] = p;
    }
    free(rows);
    t->np = np;
    if (np == 0)
        return 0;
    /* per quantity and coordinate: the medians; then the speedups */
    size_t stride = (size_t)np;
    double *vals = t->vals, *coords = t->coords, *ranks = t->ranks;
    for (int q = 0; q < IT_NQ; q++)
        for (int p = 0; p < np; p++)
            vals[q * stride + (size_t)p] = t->res[p].q[q].median;
    double *eq3 = vals + IT_EQ3 * stride, *s6 = vals + IT_S6 * stride,
           *s7 = vals + IT_S7 * stride, *s7rel = vals + IT_S7REL * stride,
           *ov_base = vals + (IT_NQ + 3) * stride, *ov_k = vals + (IT_NQ + 4) * stride,
           *num7 = vals + IT_NUM7 * stride, *den7 = vals + IT_DEN7 * stride;
    for (int p = 0; p < np; p++) {
        const it_result *r = &t->res[p];
        double io = r->q[IT_IO].median, h2d = r->q[IT_H2D].median, f = r->q[IT_F].median,
               b = r->q[IT_B].median, cc = r->q[IT_C].median;
        ov_base[p] = fmax(io + h2d, f + b);
        ov_k[p] = fmax(io + h2d, f + b + cc);
    }
    for (int p = 0; p < np; p++) {
        int b = scl_series_baseline(coords, np, nparams, coords + (size_t)p * nparams, eq3);
        s6[p] = b >= 0 ? it_speedup(ranks[b], eq3[b], ranks[p], eq3[p]) : NAN;
        s7rel[p] = b >= 0 ? it_speedup(ranks[b], ov_base[b], ranks[p], ov_k[p]) : NAN;
        /* Eq. 7 as the paper writes it: N_g · max{t_io + t_h2d, t_f + t_b} /
         * max{t'_io + t_h2d, t_f + t_b + t_c}: the unprimed times the
         * baseline's, t'_io and t_c the run's, N_g the run's GPUs */
        num7[p] = den7[p] = s7[p] = NAN;
        if (b >= 0) {
            const it_result *rb = &t->res[b], *rp = &t->res[p];
            double h2d = rb->q[IT_H2D].median, fb = rb->q[IT_F].median + rb->q[IT_B].median;
            num7[p] = fmax(rb->q[IT_IO].median + h2d, fb);
            den7[p] = fmax(rp->q[IT_IO].median + h2d, fb + rp->q[IT_C].median);
            s7[p] = ranks[p] * num7[p] / den7[p];
        }
    }
    return 0;
}

const double *it_series(const it_table *t, int k)
{
    return t->vals + (size_t)k * (size_t)t->np;
}

int it_fit(pmnf_modeler *mod, const it_table *t, const double *v, pmnf_model *model, char *why,
           size_t whycap, int *few)
{
    *few = 0;
    int nparams = t->nparams, n = 0, np = t->np;
    const double *coords = t->coords;
    double *c = malloc(sizeof(double) * (size_t)(np ? np : 1) * nparams);
    double *y = malloc(sizeof(double) * (size_t)(np ? np : 1));
    int rc = -1;
    snprintf(why, whycap, "out of memory");
    for (int p = 0; c && y && p < np; p++)
        if (isfinite(v[p])) {
            memcpy(c + (size_t)n * nparams, coords + (size_t)p * nparams,
                   sizeof(double) * (size_t)nparams);
            y[n++] = v[p];
        }
    if (c && y) {
        int distinct = pmnf_fewest_distinct(c, n, nparams);
        char fwhy[200];
        *few = distinct < IT_MIN_VALUES;
        if (distinct >= 2 &&
            pmnf_fit(mod, &(pmnf_data){nparams, n, c, y}, model, fwhy, sizeof fwhy) == 0)
            rc = 0;
        if (*few)
            snprintf(why, whycap,
                     "known at %d coordinate(s) with %d distinct value(s) of a parameter; %d "
                     "values of every parameter are needed to choose among the PMNF's terms",
                     n, distinct, IT_MIN_VALUES);
        else if (rc != 0)
            snprintf(why, whycap, "%s", fwhy);
    }
    free(c);
    free(y);
    return rc;
}

void it_table_free(it_table *t)
{
    free(t->cp_phase);
    free(t->res);
    free(t->pidx);
    free(t->coords);
    free(t->ranks);
    free(t->vals);
    memset(t, 0, sizeof *t);
}

/* ---- the answer's document ---------------------------------------------------------------- */

static json_t *stats_json(const it_stats *s)
{
    return json_pack("{s:f, s:f, s:f}", "mean", s->mean, "sd", s->sd, "median", s->median);
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The PMNF model of v over the coordinates where it is finite, as JSON;
 * from 2 to IT_MIN_VALUES - 1 values of a parameter with a few_points
 * warning, below 2 a null function with the reason and the warning. */
static json_t *fit_json(pmnf_modeler *mod, const char *const *params, const it_table *t,
                        const double *v)
{
    pmnf_model model;
    char why[200];
    int few = 0;
    json_t *out = NULL;
    if (it_fit(mod, t, v, &model, why, sizeof why, &few) == 0) {
        out = api_model_to_json(&model, params, 0);
        if (!out)
            snprintf(why, sizeof why, "out of memory");
    }
    if (!out)
        out = json_pack("{s:n, s:s}", "function", "reason", why);
    if (out && few) {
        json_t *w = json_object_get(out, "warnings"), *x;
        size_t i;
        if (!json_is_array(w)) {
            w = json_array();
            json_object_set_new(out, "warnings", w);
        }
        json_array_foreach(w, i, x) /* the model's own few_points says it already */
            if (!strcmp(json_string_value(json_object_get(x, "code")) ?: "", "few_points"))
                few = 0;
        if (few)
            json_array_append_new(w, json_pack("{s:s, s:s}", "code", "few_points", "message",
                                               why));
    }
    return out;
}

static json_t *point_json(const char *const *params, int n, const double *pt)
{
    json_t *o = json_object();
    for (int i = 0; i < n; i++)
        json_object_set_new(o, params[i], json_real(pt[i]));
    return o;
}

static json_t *points_json(const it_table *t, const char *const *params)
{
    const double *s6 = it_series(t, IT_S6), *s7 = it_series(t, IT_S7),
                 *s7rel = it_series(t, IT_S7REL), *num7 = it_series(t, IT_NUM7),
                 *den7 = it_series(t, IT_DEN7);
    json_t *points = json_array();
    for (int p = 0; p < t->np; p++) {
        json_t *o = json_pack("{s:o, s:o, s:i}", "point",
                              point_json(params, t->nparams, t->coords + (size_t)p * t->nparams),
                              "ranks", number_or_null(t->ranks[p]), "iterations",
                              t->res[p].iterations);
        for (int q = 0; q < IT_NQ; q++)
            json_object_set_new(o, it_name(q), stats_json(&t->res[p].q[q]));
        json_object_set_new(o, "speedup_eq6", number_or_null(s6[p]));
        json_object_set_new(o, "speedup_eq7", number_or_null(s7[p]));
        json_object_set_new(o, "eq7",
                            isfinite(s7[p])
                                ? json_pack("{s:f, s:f, s:f}", "n_g", t->ranks[p], "numerator",
                                            num7[p], "denominator", den7[p])
                                : json_null());
        json_object_set_new(o, "speedup_eq7_relative", number_or_null(s7rel[p]));
        json_array_append_new(points, o);
    }
    return points;
}

/* The phases' name parts and callpaths (the first 10), a warning for each
 * phase no callpath matches. */
static json_t *phases_json(const it_table *t, const store_fit_data *d, json_t *warnings)
{
    json_t *phases = json_object();
    for (int p = 0; p < IT_C; p++) {
        json_t *names = json_array();
        for (int k = 0; k < d->ncallpaths && json_array_size(names) < 10; k++)
            if (t->cp_phase[k] == p)
                json_array_append_new(names, json_string(d->callpaths[k]));
        json_object_set_new(phases, it_name(p),
                            json_pack("{s:s, s:o, s:o}", "patterns", t->text[p], "matched",
                                      t->matched[p][0] ? json_string(t->matched[p]) : json_null(),
                                      "callpaths", names));
        if (!t->matched[p][0]) {
            char w[400];
            snprintf(w, sizeof w,
                     "%s: no callpath matches \"%.200s\" (iteration_phases.%s): it counts 0",
                     it_name(p), t->text[p], it_phase_key(p));
            json_t *wj = pmnf_warning_json(IT_WARN_PHASE_UNMATCHED, w);
            json_object_set_new(wj, "phase", json_string(it_name(p)));
            json_array_append_new(warnings, wj);
        }
    }
    json_t *comm = json_array();
    for (int k = 0; k < d->ncallpaths && json_array_size(comm) < 10; k++)
        if (t->cp_phase[k] == IT_C)
            json_array_append_new(comm, json_string(d->callpaths[k]));
    json_object_set_new(phases, "t_c", json_pack("{s:s, s:o}", "patterns",
                                                 "the communication callpaths", "callpaths", comm));
    return phases;
}

int it_document(const it_table *t, const store_fit_data *d, const char *const *params,
                int strong, it_doc *out)
{
    memset(out, 0, sizeof *out);
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = strong;
    pmnf_modeler *mod = pmnf_modeler_new(&o);
    if (!mod)
        return -1;
    out->points = points_json(t, params);
    out->models = json_object();
    for (int q = 0; q < IT_NQ; q++)
        json_object_set_new(out->models, it_name(q), fit_json(mod, params, t, it_series(t, q)));
    json_object_set_new(out->models, "speedup_eq6", fit_json(mod, params, t, it_series(t, IT_S6)));
    json_object_set_new(out->models, "speedup_eq7", fit_json(mod, params, t, it_series(t, IT_S7)));
    json_object_set_new(out->models, "speedup_eq7_relative",
                        fit_json(mod, params, t, it_series(t, IT_S7REL)));
    out->warnings = json_array();
    out->phases = phases_json(t, d, out->warnings);
    pmnf_modeler_free(mod);
    return 0;
}

void it_doc_free(it_doc *doc)
{
    json_decref(doc->points);
    json_decref(doc->models);
    json_decref(doc->phases);
    json_decref(doc->warnings);
    memset(doc, 0, sizeof *doc);
}
