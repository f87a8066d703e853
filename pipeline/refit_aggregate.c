/*
 * refit_aggregate.c — steps 2-4 of a refit (pipeline/refit.c): the set-up
 * read from the experiment, the aggregation of one callpath's rows per
 * coordinate (modeling/aggregate.h), the steps per epoch from the training
 * set-up (analysis/training.h), the per-epoch values and the application
 * sums, and the measurements they become, each with its load-imbalance
 * factors.
 */

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modeling/model_json.h"
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

/* ---- set-up from the experiment ------------------------------------------ */

int refit_setup_from_experiment(const store_experiment *e, refit_setup *s, char *err,
                                 size_t errcap)
{
    memset(s, 0, sizeof *s);
    const json_t *t = json_object_get(e->spec, "training");
    char field[64], why[400];
    if (!json_is_object(t)) {
        snprintf(err, errcap, "the experiment has no training set-up (train_samples, batch_size)");
        return -1;
    }
    if (training_compile(t, (const char *const *)e->parameters, e->nparams, &s->training, field,
                         sizeof field, why, sizeof why) < 0) {
        snprintf(err, errcap, "%s: %s", field, why);
        return -1;
    }
    s->warmup_steps = s->training.warmup_steps;
    const char *measure = json_string_value(json_object_get(e->spec, "measure"));
    s->measure = measure && !strcmp(measure, "mean") ? AGG_MEAN : AGG_MEDIAN;
    s->strong = e->scaling && !strcmp(e->scaling, "strong");
    return 0;
}

/* ---- aggregation per coordinate ------------------------------------------------ */

/* The current callpath's rows, point by point, each aggregated against its
 * point's frame into st->agg[p]. */
int refit_aggregate_callpath(refit_state *st)
{
    const store_fit_data *d = st->d;
    size_t np = (size_t)d->npoints;
    size_t *at = calloc(np + 1, sizeof *at);
    agg_row *rows = malloc(sizeof(agg_row) * (d->nrows ? d->nrows : 1));
    agg_row *frame = NULL;
    size_t most = 0;
    for (size_t p = 0; p < np; p++)
        if (st->frame_end[p] - st->frame_at[p] > most)
            most = st->frame_end[p] - st->frame_at[p];
    frame = malloc(sizeof(agg_row) * (most ? most : 1));
    int rc = at && rows && frame ? 0 : -1;
    /* rows arrive by profile: place them by point (a counting sort) */
    for (size_t i = 0; rc == 0 && i < d->nrows; i++)
        at[d->rows[i].point + 1]++;
    for (size_t p = 0; rc == 0 && p < np; p++)
        at[p + 1] += at[p];
    for (size_t i = 0; rc == 0 && i < d->nrows; i++) {
        const store_fit_row *r = &d->rows[i];
        rows[at[r->point]++] = (agg_row){r->repetition, r->rank, r->phase, r->step, r->callpath,
                                         r->metric, r->value};
    }
    agg_options o = {st->setup.warmup_steps, st->setup.measure};
    size_t start = 0;
    for (size_t p = 0; rc == 0 && p < np; p++) {
        size_t end = at[p]; /* after the placing, at[p] is where point p's rows end */
        size_t nf = 0;
        for (size_t k = st->frame_at[p]; k < st->frame_end[p]; k++) {
            const store_fit_row *f = &st->frame[k];
            frame[nf++] = (agg_row){f->repetition, f->rank, f->phase, f->step, 0, 0, 0};
        }
        if (end > start)
            rc = agg_coordinate_framed(rows + start, end - start, frame, nf, &o, &st->agg[p]);
        start = end;
    }
    free(at);
    free(rows);
    free(frame);
    return rc;
}

/* The group's steps per epoch at every point and the warm-up warning, from
 * the frame (the training steps each point has). Returns 0, or -2 with err
 * (the training set-up cannot be evaluated at a point). */
int refit_prepare_points(refit_state *st, char *err, size_t errcap)
{
    const store_fit_data *d = st->d;
    for (int p = 0; p < d->npoints; p++) {
        int last_train = -1;
        for (size_t k = st->frame_at[p]; k < st->frame_end[p]; k++)
            if (st->frame[k].phase == 0 && st->frame[k].step > last_train)
                last_train = st->frame[k].step;
        if (st->setup.warmup_steps > 0 && last_train >= 0 &&
            last_train < st->setup.warmup_steps && !st->warmup_warning[0]) {
            char coord[128] = "";
            size_t k = 0;
            for (int q = 0; q < d->nparams && k < sizeof coord; q++)
                k += (size_t)snprintf(coord + k, sizeof coord - k, "%s%s=%g", q ? ", " : "",
                                      st->e->parameters[q], d->points[(size_t)p * d->nparams + q]);
            snprintf(st->warmup_warning, sizeof st->warmup_warning,
                     "warmup_steps is %d but the profiles at %s have %d training step(s): the "
                     "warm-up steps were used, as nothing else was measured",
                     st->setup.warmup_steps, coord, last_train + 1);
        }
        const double *pt = d->points + (size_t)p * d->nparams;
        char field[64], why[400];
        if (training_steps_at(&st->setup.training, pt, (const char *const *)st->e->parameters,
                              st->e->nparams, &st->n_t[p], &st->n_v[p], field, sizeof field, why,
                              sizeof why) < 0) {
            snprintf(err, errcap, "%s: %s", field, why);
            return -2;
        }
    }
    return 0;
}

/* ---- measurements ------------------------------------------------------------------- */

int refit_is_evaluation(const store_fit_data *d, int p)
{
    return d->evaluation && d->evaluation[p];
}

static store_measurement *new_measurement(refit_state *st)
{
    refit_out *o = st->out;
    if (o->nmeas == o->meas_cap) {
        size_t cap = o->meas_cap ? o->meas_cap * 2 : 1024;
        store_measurement *v = realloc(o->meas, sizeof *v * cap);
        if (!v)
            return NULL;
        o->meas = v;
        o->meas_cap = cap;
    }
    store_measurement *m = &o->meas[o->nmeas++];
    memset(m, 0, sizeof *m);
    m->levels = st->levels;
    return m;
}

static const char *phase_text(int phase)
{
    return phase == 0 ? "train" : phase == 1 ? "validation" : "between";
}

/* LIF per repetition of a rank-major nranks x nreps matrix, kept in the arena. */
static double *lif_of(refit_state *st, const double *rank_reps, int nranks, int nreps)
{
    if (!rank_reps || nreps == 0)
        return NULL;
    double *lif = refit_arena_keep(&st->out->mem, malloc(sizeof(double) * (size_t)nreps));
    if (!lif)
        return NULL;
    imb_lif_reps(rank_reps, nranks, nreps, lif);
    /* no rank with a value, or nothing but zeros: nothing is out of balance */
    for (int r = 0; r < nreps; r++)
        if (!isfinite(lif[r]))
            lif[r] = 1;
    return lif;
}

/* The aggregated per-step value as measured, one row per phase. */
static int add_raw_measurement(refit_state *st, int p, const agg_value *v)
{
    /* held out: its values are in the series, for the accuracy, but it is
     * no measurement of the model set */
    if (refit_is_evaluation(st->d, p))
        return 0;
    store_measurement *m = new_measurement(st);
    if (!m)
        return -1;
    m->lif_reps = lif_of(st, v->rank_reps, v->nranks, v->nreps);
    if (v->nreps > 0 && !m->lif_reps)
        return -1;
    m->point = st->d->points + (size_t)p * st->d->nparams;
    m->level = "callpath";
    m->name = st->d->callpaths[v->callpath];
    m->category = profile_category_name(st->d->categories[v->callpath]);
    m->metric = st->d->metrics[v->metric];
    m->phase = phase_text(v->phase);
    m->value = v->value;
    m->nreps = v->nreps;
    m->reps = v->reps;
    m->nranks = v->nranks;
    m->ranks = v->ranks;
    m->rank_ids = v->rank_ids;
    return 0;
}

static int accum_add(accum *a, const agg_value *v, double scale)
{
    a->value += scale * v->value;
    if (a->nreps == 0 && v->nreps > 0) {
        a->reps = calloc((size_t)v->nreps, sizeof(double));
        if (!a->reps)
            return -1;
        a->nreps = v->nreps;
    }
    for (int r = 0; r < a->nreps && r < v->nreps; r++)
        a->reps[r] += scale * v->reps[r];
    for (int k = 0; k < v->nranks; k++) {
        int at = 0;
        while (at < a->nranks && a->rank_ids[at] != v->rank_ids[k])
            at++;
        if (at == a->nranks) {
            if (a->nranks == a->cap_ranks) {
                int cap = a->cap_ranks ? a->cap_ranks * 2 : 16;
                double *rv = realloc(a->ranks, sizeof(double) * (size_t)cap);
                if (!rv)
                    return -1;
                a->ranks = rv;
                int *ri = realloc(a->rank_ids, sizeof(int) * (size_t)cap);
                if (!ri)
                    return -1;
                a->rank_ids = ri;
                if (a->nreps > 0) {
                    double *rr = realloc(a->rank_reps, sizeof(double) * (size_t)cap * a->nreps);
                    if (!rr)
                        return -1;
                    a->rank_reps = rr;
                }
                a->cap_ranks = cap;
            }
            a->ranks[at] = 0;
            a->rank_ids[at] = v->rank_ids[k];
            for (int r = 0; r < a->nreps; r++)
                a->rank_reps[(size_t)at * a->nreps + r] = 0;
            a->nranks++;
        }
        a->ranks[at] += scale * v->ranks[k];
        /* NaN (the rank missing from a repetition) stays NaN in the sum */
        for (int r = 0; r < a->nreps && r < v->nreps && v->rank_reps; r++)
            a->rank_reps[(size_t)at * a->nreps + r] +=
                scale * v->rank_reps[(size_t)k * v->nreps + r];
    }
    return 0;
}

void refit_accum_free(accum *a)
{
    free(a->reps);
    free(a->ranks);
    free(a->rank_ids);
    free(a->rank_reps);
    memset(a, 0, sizeof *a);
}

static int add_accum_measurement(refit_state *st, int p, const char *level, const char *name,
                                 const char *category, int metric, const char *phase, accum *a)
{
    int keep = !refit_is_evaluation(st->d, p); /* held out: in the series only */
    store_measurement *m = keep ? new_measurement(st) : NULL;
    if (keep && !m)
        return -1;
    const double *lif = keep ? lif_of(st, a->rank_reps, a->nranks, a->nreps) : NULL;
    free(a->rank_reps);
    a->rank_reps = NULL;
    if (keep && a->nreps > 0 && !lif)
        return -1;
    /* the arrays move to the arena (the series points to them too) */
    double *reps = a->reps, *ranks = a->ranks;
    int *ids = a->rank_ids;
    a->reps = a->ranks = NULL;
    a->rank_ids = NULL;
    int lost = 0; /* each is kept or freed */
    lost |= reps && !refit_arena_keep(&st->out->mem, reps);
    lost |= ranks && !refit_arena_keep(&st->out->mem, ranks);
    lost |= ids && !refit_arena_keep(&st->out->mem, ids);
    if (lost)
        return -1;
    if (!keep)
        return 0;
    m->lif_reps = lif;
    m->point = st->d->points + (size_t)p * st->d->nparams;
    m->level = level;
    m->name = name;
    m->category = category;
    m->metric = st->d->metrics[metric];
    m->phase = phase;
    m->value = a->value;
    m->nreps = a->nreps;
    m->reps = reps;
    m->nranks = a->nranks;
    m->ranks = ranks;
    m->rank_ids = ids;
    return 0;
}

/* The current callpath's series. */
series *refit_cp_series(refit_state *st, int metric, int which)
{
    return &st->cp[(size_t)metric * 2 + (size_t)which];
}

series *refit_app_series(refit_state *st, int part, int metric)
{
    return &st->app[(size_t)part * st->d->nmetrics + (size_t)metric];
}

static void series_set(series *s, int p, double v, const double *reps, int nreps)
{
    s->value[p] = v;
    s->seen[p] = 1;
    s->reps[p] = reps;
    s->nreps[p] = nreps;
}

/* Step 4 for the current callpath at one coordinate: its epoch and between
 * values as measurements and series values; its share of the application
 * parts added to the coordinate's sums. */
int refit_extrapolate_point(refit_state *st, int p)
{
    const agg_result *r = &st->agg[p];
    int nm = st->d->nmetrics;
    accum *parts = st->parts + (size_t)p * NPARTS * nm;
    unsigned char *part_seen = st->part_seen + (size_t)p * nm;
    unsigned char *between_seen = st->between_seen + (size_t)p * nm; /* gap work here */
    int rc = 0;
    size_t i = 0;
    while (i < r->nvalues && rc == 0) {
        /* values are sorted by (callpath, metric, phase): one group at a time */
        int c = r->values[i].callpath, m = r->values[i].metric;
        accum epoch = {0}, between = {0};
        int has_epoch = 0, has_between = 0;
        for (; i < r->nvalues && r->values[i].callpath == c && r->values[i].metric == m; i++) {
            const agg_value *v = &r->values[i];
            rc |= add_raw_measurement(st, p, v);
            int category = st->d->categories[c];
            if (v->phase == 2) {
                /* work between steps, once per training step: its own series
                 * per callpath, and part of F_epoch and of its category (the
                 * application models filter nothing), shown apart as
                 * "between" too */
                rc |= accum_add(&between, v, st->n_t[p]);
                has_between = 1;
                if (category <= PROFILE_MEM) {
                    rc |= accum_add(&parts[(size_t)category * nm + m], v, st->n_t[p]);
                    rc |= accum_add(&parts[(size_t)PART_EPOCH * nm + m], v, st->n_t[p]);
                    rc |= accum_add(&parts[(size_t)PART_BETWEEN * nm + m], v, st->n_t[p]);
                    part_seen[m] = 1;
                    between_seen[m] = 1;
                }
                continue;
            }
            double scale = v->phase == 0 ? st->n_t[p] : st->n_v[p];
            rc |= accum_add(&epoch, v, scale);
            has_epoch = 1;
            if (category <= PROFILE_MEM) {
                rc |= accum_add(&parts[(size_t)category * nm + m], v, scale);
                rc |= accum_add(&parts[(size_t)PART_EPOCH * nm + m], v, scale);
                part_seen[m] = 1;
            }
        }
        const char *name = st->d->callpaths[c];
        const char *cat = profile_category_name(st->d->categories[c]);
        if (has_epoch) {
            series_set(refit_cp_series(st, m, SERIES_EPOCH), p, epoch.value, epoch.reps, epoch.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "epoch", &epoch);
        } else {
            refit_accum_free(&epoch);
        }
        if (has_between) {
            series_set(refit_cp_series(st, m, SERIES_BETWEEN), p, between.value, between.reps,
                       between.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "between", &between);
        } else {
            refit_accum_free(&between);
        }
    }
    return rc ? -1 : 0;
}

/* A run's duration (paper 003): in each repetition of a run of several
 * ranks the slowest rank gates every step, so the application's epoch time
 * of a repetition is the largest of its ranks' sums (a rank missing from the
 * repetition left out), not the sum of the callpaths' medians over ranks;
 * the repetitions are then taken as before, by their median. The per-rank
 * values (the spread the load imbalance is read from) stay as they are.
 * 0, or -1 out of memory. */
static int slowest_rank(accum *a)
{
    if (a->nranks < 2 || a->nreps < 1 || !a->rank_reps)
        return 0;
    int changed = 0;
    for (int r = 0; r < a->nreps; r++) {
        double mx = -INFINITY;
        for (int k = 0; k < a->nranks; k++) {
            double v = a->rank_reps[(size_t)k * a->nreps + r];
            if (isfinite(v) && v > mx)
                mx = v;
        }
        if (isfinite(mx)) {
            a->reps[r] = mx;
            changed = 1;
        }
    }
    if (!changed)
        return 0;
    double *scratch = malloc(sizeof(double) * (size_t)a->nreps);
    if (!scratch)
        return -1;
    a->value = agg_median(a->reps, (size_t)a->nreps, scratch);
    free(scratch);
    return 0;
}

/* Step 4's application parts at one coordinate, once every callpath was
 * added: measurements and series values (the epoch's time of a run of
 * several ranks: its slowest rank's, slowest_rank()). */
int refit_application_point(refit_state *st, int p)
{
    int nm = st->d->nmetrics, rc = 0;
    accum *parts = st->parts + (size_t)p * NPARTS * nm;
    const unsigned char *part_seen = st->part_seen + (size_t)p * nm;
    const unsigned char *between_seen = st->between_seen + (size_t)p * nm;
    for (int m = 0; m < nm; m++) {
        for (int part = 0; part < NPARTS; part++) {
            accum *a = &parts[(size_t)part * nm + m];
            /* the between part only where there was work between steps */
            if (!part_seen[m] || rc || (part == PART_BETWEEN && !between_seen[m])) {
                refit_accum_free(a);
                continue;
            }
            if (part == PART_EPOCH && !strcmp(st->d->metrics[m], "time") && slowest_rank(a) < 0) {
                rc = -1;
                refit_accum_free(a);
                continue;
            }
            /* a category without callpaths at this coordinate contributes 0 */
            series_set(refit_app_series(st, part, m), p, a->value, a->reps, a->nreps);
            rc |= add_accum_measurement(st, p, "application", part_names[part],
                                        part <= PART_MEM ? part_names[part] : NULL, m, "epoch",
                                        a);
        }
    }
    return rc ? -1 : 0;
}
