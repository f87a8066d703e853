/*
 * refit.c — a job's work: all stored profiles of an experiment -> a new model
 * set (see refit.h).
 *
 *   1. load the experiment and stream the normalized rows of its profiles
 *      one callpath at a time (store/fit_stream.h): first the frame (which
 *      points, metrics, ranks and steps there are), then each callpath's
 *      rows; steps 2-5 run per callpath and its measurements and models go
 *      to the database in batches, so a refit holds one callpath's data
 *      (and the application sums) rather than the experiment's;
 *   2. per coordinate: aggregate (medians over steps, ranks, repetitions;
 *      warm-up excluded; phases apart) — modeling/aggregate.c;
 *   3. per coordinate: steps per epoch n_t, n_v from the training set-up,
 *      D_t, D_v, B, G and M evaluated for the coordinate (Extra-Deep Eq. 2-3,
 *      api/training.h);
 *   4. per callpath and metric: the per-epoch value n_t·V_train + n_v·V_val
 *      ('epoch') and, kept apart, the work between steps n_t·V_between
 *      ('between'); per metric the application values comp, comm, mem (sums
 *      over the category's callpaths, Eq. 8-10, the work between steps
 *      included: n_t·V_between) and epoch = comp+comm+mem, and 'between', the
 *      part of them done between steps, shown on its own;
 *      every measurement also carries its load-imbalance factor per
 *      repetition (max/mean over the ranks' values of that repetition, of the
 *      same sums per rank);
 *   5. fit every series measured at enough coordinates (5 values of every
 *      parameter, Extra-P's minimum) with one shared modeler; a strong-scaling
 *      experiment's modeler also tries negative exponents; the modeler is the
 *      one the job asked for, else the experiment's ("modeler" of its spec,
 *      Extra-P's when absent); the robust one gets every repetition;
 *   6. write measurements and models as one new model set, in the
 *      transaction the rows are read in: the set is seen at its COMMIT, or
 *      never (failure, cancellation).
 *
 * A claimed job takes over the experiment's queued job when one appears
 * while it runs (uploads that came meanwhile): the set it is computing would
 * be stale at its COMMIT, and the queued job would wait for it and then
 * refit everything again. Between callpaths (every CHECK_SECONDS) and before
 * the set is published, the refit looks for a queued job; when there is
 * one it rolls back, makes the queued job ride with it (store_job_absorb,
 * which waits for the uploads joining it to commit) and starts again on a
 * new snapshot, which holds those uploads, reading from the database only
 * the rows of profiles it has not read yet (store_fit_cache: a profile's
 * rows never change); the set it publishes marks both done. It does so
 * only within PERFCAST_REFIT_ABSORB_SECONDS (default ABSORB_SECONDS) of
 * its claim, so that a steady stream of uploads delays a job by at most
 * that much plus one refit.
 *
 * An experiment with categorical factors is refitted per level combination:
 * steps 2-5 run on the profiles of each combination alone, and every
 * measurement and model carries its levels (experiments without factors have
 * one combination, '{}').
 *
 * Coordinates of evaluation-only uploads (Extra-Deep §4's P+) go through
 * steps 2-4 like the others but write no measurements and are not fitted:
 * each model carries, in its document's "accuracy", the percentage error at
 * every modelling point and at every evaluation point and the medians of
 * both (GET /v1/experiments/{id}/accuracy).
 */
#include "server/refit.h"

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

#define MIN_VALUES_PER_PARAMETER 5

enum { PART_COMP = 0, PART_COMM = 1, PART_MEM = 2, PART_EPOCH = 3, PART_BETWEEN = 4, NPARTS = 5 };
static const char *const part_names[NPARTS] = {"comp", "comm", "mem", "epoch", "between"};
enum { SERIES_EPOCH = 0, SERIES_BETWEEN = 1 };

typedef struct refit_setup {
    training_setup training; /* D_t, D_v, B, G, M per coordinate (api/training.h) */
    int warmup_steps;
    agg_measure measure; /* the experiment's "measure": median (default) or mean */
    int strong;
    pmnf_modeler_kind modeler;
} refit_setup;

/* Everything malloc'ed for one refit, freed at its end. */
typedef struct arena {
    void **ptrs;
    size_t n, cap;
} arena;

static void *arena_keep(arena *a, void *p)
{
    if (!p)
        return NULL;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        void **v = realloc(a->ptrs, sizeof(void *) * cap);
        if (!v) {
            free(p);
            return NULL;
        }
        a->ptrs = v;
        a->cap = cap;
    }
    a->ptrs[a->n++] = p;
    return p;
}

static void arena_free(arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
    memset(a, 0, sizeof *a);
}

/* One modeled quantity: a value per coordinate where it was measured. */
typedef struct series {
    double *value;       /* npoints */
    unsigned char *seen; /* npoints */
    const double **reps; /* npoints: the repetitions behind value (arena-owned), or NULL */
    int *nreps;          /* npoints */
} series;

/* Measurements and models not yet written, and the memory they point to;
 * shared by the level combinations, emptied by each batch written. */
typedef struct refit_out {
    arena mem;
    store_measurement *meas;
    size_t nmeas, meas_cap;
    store_model *models;
    size_t nmodels, models_cap;
} refit_out;

/* An extrapolated value built up from scaled per-phase values (below). */
typedef struct accum accum;

/* One level combination's refit ("{}" when the experiment has no factors). */
typedef struct refit_state {
    const store_experiment *e;
    store_fit_data data; /* its points (owned), names (borrowed from the stream),
                            rows: the current callpath's rows at its points */
    const store_fit_data *d; /* &data */
    const char *levels;  /* borrowed */
    refit_setup setup;
    const store_fit_row *frame; /* the stream's frame, ascending point */
    size_t *frame_at, *frame_end; /* per point p: its frame rows are
                                     frame[frame_at[p]..frame_end[p]) */
    int *frame_point;    /* per point: the stream's point index */
    agg_result *agg;     /* per point, of the current callpath */
    double *n_t, *n_v;   /* per point */
    series *cp;          /* [metric][2] of the current callpath */
    series *app;         /* [part][metric] */
    accum *parts;        /* [point][part][metric]: the application sums so far */
    unsigned char *part_seen, *between_seen; /* [point][metric] */
    refit_out *out;
    /* warm-up steps that were all a coordinate had: said in every model's
     * warnings ("" when none) */
    char warmup_warning[512];
    const _Atomic int *cancel; /* non-zero: stop (the job is gone); may be NULL */
} refit_state;

/* ---- set-up from the experiment ------------------------------------------ */

static int setup_from_experiment(const store_experiment *e, refit_setup *s, char *err,
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
static int aggregate_callpath(refit_state *st)
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
static int prepare_points(refit_state *st, char *err, size_t errcap)
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

static int is_evaluation(const store_fit_data *d, int p)
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
    double *lif = arena_keep(&st->out->mem, malloc(sizeof(double) * (size_t)nreps));
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
    if (is_evaluation(st->d, p))
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

/* An extrapolated value built up from scaled per-phase values: value, per
 * repetition (by position), per rank (by rank id) and per rank and
 * repetition (for the load-imbalance factor of the sum). */
typedef struct accum {
    double value;
    int nreps;
    double *reps;
    int nranks;
    double *ranks;
    int *rank_ids;
    double *rank_reps; /* cap_ranks x nreps, rank-major */
    int cap_ranks;
} accum;

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

static void accum_free(accum *a)
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
    int keep = !is_evaluation(st->d, p); /* held out: in the series only */
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
    lost |= reps && !arena_keep(&st->out->mem, reps);
    lost |= ranks && !arena_keep(&st->out->mem, ranks);
    lost |= ids && !arena_keep(&st->out->mem, ids);
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
static series *cp_series(refit_state *st, int metric, int which)
{
    return &st->cp[(size_t)metric * 2 + (size_t)which];
}

static series *app_series(refit_state *st, int part, int metric)
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
static int extrapolate_point(refit_state *st, int p)
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
            series_set(cp_series(st, m, SERIES_EPOCH), p, epoch.value, epoch.reps, epoch.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "epoch", &epoch);
        } else {
            accum_free(&epoch);
        }
        if (has_between) {
            series_set(cp_series(st, m, SERIES_BETWEEN), p, between.value, between.reps,
                       between.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "between", &between);
        } else {
            accum_free(&between);
        }
    }
    return rc ? -1 : 0;
}

/* Step 4's application parts at one coordinate, once every callpath was
 * added: measurements and series values. */
static int application_point(refit_state *st, int p)
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
                accum_free(a);
                continue;
            }
            /* a category without callpaths at this coordinate contributes 0 */
            series_set(app_series(st, part, m), p, a->value, a->reps, a->nreps);
            rc |= add_accum_measurement(st, p, "application", part_names[part],
                                        part <= PART_MEM ? part_names[part] : NULL, m, "epoch",
                                        a);
        }
    }
    return rc ? -1 : 0;
}

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
        if (!s->seen[p] || is_evaluation(d, p) != eval)
            continue;
        const double *pt = d->points + (size_t)p * d->nparams;
        double pred = pmnf_eval(&model->f, pt), e = acc_error_pct(pred, s->value[p]);
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
        if (s->seen[p] && !is_evaluation(st->d, p) && s->reps[p])
            total += (size_t)s->nreps[p];
    double *v = total ? malloc(sizeof(double) * total) : NULL;
    if (!v)
        return NULL;
    int n = 0, k = 0;
    start[0] = 0;
    for (int p = 0; p < st->d->npoints; p++) {
        if (!s->seen[p] || is_evaluation(st->d, p))
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
        if (!s->seen[p] || is_evaluation(d, p))
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
        out->reason = arena_keep(&st->out->mem, why);
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
        out->reason = arena_keep(&st->out->mem, why);
        return out->reason ? 0 : -1;
    }
    json_t *doc = api_model_to_json(&model, (const char *const *)st->e->parameters, 1);
    if (doc)
        json_object_set_new(doc, "accuracy", accuracy_json(st, s, &model));
    if (doc && st->warmup_warning[0]) {
        json_t *w = json_object_get(doc, "warnings");
        if (json_is_array(w))
            json_array_append_new(w, json_string(st->warmup_warning));
    }
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    char *function = doc ? strdup(json_string_value(json_object_get(doc, "function"))) : NULL;
    json_decref(doc);
    out->model_json = arena_keep(&st->out->mem, text);
    out->function = arena_keep(&st->out->mem, function);
    api_model_growth(&model.f, &out->growth_poly, &out->growth_log);
    return out->model_json && out->function ? 0 : -1;
}

/* The application models of every part and metric, after all callpaths. */
static int fit_application(refit_state *st, pmnf_modeler *modeler, double *coords,
                           double *values)
{
    const store_fit_data *d = st->d;
    int rc = 0;
    for (int part = 0; part < NPARTS && rc == 0; part++) {
        for (int m = 0; m < d->nmetrics && rc == 0; m++) {
            const series *s = app_series(st, part, m);
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
static int fit_callpath(refit_state *st, int c, pmnf_modeler *modeler, double *coords,
                        double *values)
{
    const store_fit_data *d = st->d;
    int rc = 0;
    for (int m = 0; m < d->nmetrics && rc == 0; m++) {
        for (int which = 0; which < 2 && rc == 0; which++) {
            const series *s = cp_series(st, m, which);
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

/* Store errors are worth a retry unless the data itself is refused (an
 * experiment deleted meanwhile: NOT_FOUND; invalid values: INVALID). */
static int store_outcome(const store_error *se, char *err, size_t errcap)
{
    snprintf(err, errcap, "%s", se->msg);
    return se->code == STORE_NOT_FOUND || se->code == STORE_INVALID ? REFIT_FAILED
                                                                     : REFIT_TRANSIENT;
}

/* The job's modeler, else the experiment's, else Extra-P's. */
static int choose_modeler(PGconn *c, const store_experiment *e, int64_t job_id,
                          pmnf_modeler_kind *kind, store_error *se)
{
    char asked[16];
    if (store_job_modeler(c, job_id, asked, sizeof asked, se))
        return -1;
    *kind = PMNF_MODELER_EXTRAP;
    if (pmnf_modeler_parse(asked, kind) < 0)
        pmnf_modeler_parse(json_string_value(json_object_get(e->spec, "modeler")), kind);
    return 0;
}

int refit_run(store *s, int64_t experiment_id, int64_t job_id, int64_t *model_set_id, char *err,
              size_t errcap)
{
    return refit_run_cancellable(s, experiment_id, job_id, model_set_id, err, errcap, NULL);
}

/* ---- one level combination ------------------------------------------------------------------ */

/* nseries series of np points each over one block (*block, freed by the
 * caller). */
static int series_alloc(series *v, size_t nseries, size_t np, void **block)
{
    size_t each = sizeof(double) + 1 + sizeof(double *) + sizeof(int);
    char *b = calloc(nseries ? nseries * np : 1, each);
    *block = b;
    if (!b)
        return -1;
    double *vals = (double *)b;
    const double **reps = (const double **)(b + sizeof(double) * nseries * np);
    int *nreps = (int *)(b + (sizeof(double) + sizeof(double *)) * nseries * np);
    unsigned char *seen = (unsigned char *)(b + (sizeof(double) + sizeof(double *) + sizeof(int)) *
                                                    nseries * np);
    for (size_t i = 0; i < nseries; i++)
        v[i] = (series){vals + i * np, seen + i * np, reps + i * np, nreps + i * np};
    return 0;
}

typedef struct refit_group {
    refit_state st;
    void *cp_block, *app_block;
    pmnf_modeler *modeler;
    double *coords, *values;
} refit_group;

static void group_free(refit_group *g)
{
    refit_state *st = &g->st;
    size_t nacc = (size_t)st->data.npoints * NPARTS * (size_t)st->data.nmetrics;
    for (size_t i = 0; st->parts && i < nacc; i++)
        accum_free(&st->parts[i]);
    for (int p = 0; st->agg && p < st->data.npoints; p++)
        agg_result_free(&st->agg[p]);
    free(st->parts);
    free(st->part_seen);
    free(st->between_seen);
    free(st->agg);
    free(st->n_t);
    free(st->n_v);
    free(st->cp);
    free(st->app);
    free(st->frame_at);
    free(st->frame_end);
    free(st->frame_point);
    free(st->data.points);
    free(st->data.evaluation);
    free(st->data.levels);
    free(st->data.rows);
    free(g->cp_block);
    free(g->app_block);
    pmnf_modeler_free(g->modeler);
    free(g->coords);
    free(g->values);
    memset(g, 0, sizeof *g);
}

/* The points of the stream with levels lv as group g (names borrowed from
 * the stream), its frame offsets, sums and series. Returns REFIT_OK, or
 * REFIT_FAILED / REFIT_TRANSIENT with err. */
static int group_init(refit_group *g, const store_fit_stream *fs, const char *lv,
                      const store_experiment *e, const refit_setup *setup, refit_out *out,
                      const _Atomic int *cancel, char *err, size_t errcap)
{
    memset(g, 0, sizeof *g);
    refit_state *st = &g->st;
    const store_fit_data *d = &fs->d;
    st->e = e;
    st->d = &st->data;
    st->levels = lv;
    st->setup = *setup;
    st->out = out;
    st->cancel = cancel;
    st->frame = fs->frame;
    store_fit_data *gd = &st->data;
    gd->nparams = d->nparams;
    gd->ncallpaths = d->ncallpaths;
    gd->callpaths = d->callpaths;
    gd->categories = d->categories;
    gd->nmetrics = d->nmetrics;
    gd->metrics = d->metrics;
    size_t np = (size_t)(d->npoints ? d->npoints : 1), nm = (size_t)d->nmetrics;
    gd->points = malloc(sizeof(double) * np * (size_t)(d->nparams ? d->nparams : 1));
    gd->evaluation = malloc(np);
    gd->levels = malloc(sizeof(char *) * np);
    st->frame_point = malloc(sizeof(int) * np);
    st->frame_at = calloc(np, sizeof(size_t));
    st->frame_end = calloc(np, sizeof(size_t));
    if (!gd->points || !gd->evaluation || !gd->levels || !st->frame_point || !st->frame_at ||
        !st->frame_end)
        goto oom;
    for (int p = 0; p < d->npoints; p++) {
        if (strcmp(d->levels[p], lv))
            continue;
        memcpy(gd->points + (size_t)gd->npoints * d->nparams, d->points + (size_t)p * d->nparams,
               sizeof(double) * (size_t)d->nparams);
        gd->evaluation[gd->npoints] = d->evaluation[p];
        gd->levels[gd->npoints] = d->levels[p];
        st->frame_point[gd->npoints++] = p;
    }
    /* the frame is ascending by point: each point's rows are one run */
    size_t k = 0;
    for (int p = 0; p < gd->npoints; p++) {
        while (k < fs->nframe && fs->frame[k].point < st->frame_point[p])
            k++;
        st->frame_at[p] = k;
        while (k < fs->nframe && fs->frame[k].point == st->frame_point[p])
            k++;
        st->frame_end[p] = k;
    }
    st->agg = calloc(np, sizeof(agg_result));
    st->n_t = calloc(np, sizeof(double));
    st->n_v = calloc(np, sizeof(double));
    st->cp = calloc(nm ? nm * 2 : 1, sizeof(series));
    st->app = calloc(nm ? nm * NPARTS : 1, sizeof(series));
    st->parts = calloc(np * NPARTS * (nm ? nm : 1), sizeof(accum));
    st->part_seen = calloc(np * (nm ? nm : 1), 1);
    st->between_seen = calloc(np * (nm ? nm : 1), 1);
    g->coords = malloc(sizeof(double) * np * (size_t)(d->nparams ? d->nparams : 1));
    g->values = malloc(sizeof(double) * np);
    if (!st->agg || !st->n_t || !st->n_v || !st->cp || !st->app || !st->parts ||
        !st->part_seen || !st->between_seen || !g->coords || !g->values ||
        series_alloc(st->cp, nm * 2, np, &g->cp_block) < 0 ||
        series_alloc(st->app, nm * NPARTS, np, &g->app_block) < 0)
        goto oom;
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = st->setup.strong;
    o.modeler = st->setup.modeler;
    g->modeler = pmnf_modeler_new(&o);
    if (!g->modeler)
        goto oom;
    return prepare_points(st, err, errcap) < 0 ? REFIT_FAILED : REFIT_OK;
oom:
    snprintf(err, errcap, "out of memory");
    return REFIT_TRANSIENT;
}

/* Steps 2-5 for the current callpath (index c) of group g, whose rows are
 * in g->st.data.rows. */
static int refit_callpath(refit_group *g, int c)
{
    refit_state *st = &g->st;
    const store_fit_data *d = st->d;
    size_t np = (size_t)d->npoints, nm = (size_t)d->nmetrics;
    for (size_t i = 0; i < nm * 2; i++)
        memset(st->cp[i].seen, 0, np);
    int rc = aggregate_callpath(st);
    for (int p = 0; p < d->npoints && rc == 0; p++)
        rc = extrapolate_point(st, p);
    /* the measurements point into the aggregated values: the arena keeps
     * their arrays until the batch is written (rank_reps is used up) */
    for (int p = 0; p < d->npoints; p++) {
        agg_result *r = &st->agg[p];
        for (size_t i = 0; i < r->nvalues; i++) {
            agg_value *v = &r->values[i];
            if (rc == 0) {
                int lost = 0; /* each is kept or freed */
                lost |= v->reps && !arena_keep(&st->out->mem, v->reps);
                lost |= v->ranks && !arena_keep(&st->out->mem, v->ranks);
                lost |= v->rank_ids && !arena_keep(&st->out->mem, v->rank_ids);
                v->reps = v->ranks = NULL;
                v->rank_ids = NULL;
                rc = lost ? -1 : 0;
            }
        }
        agg_result_free(r);
    }
    if (rc == 0)
        rc = fit_callpath(st, c, g->modeler, g->coords, g->values);
    return rc;
}

/* Stages the pending measurements and models and empties out (its arena
 * with them). */
static int flush_out(PGconn *c, int nparams, refit_out *out, store_error *se)
{
    int rc = store_model_set_append(c, 0, nparams, out->meas, out->nmeas, out->models,
                                    out->nmodels, se);
    out->nmeas = out->nmodels = 0;
    arena_free(&out->mem);
    return rc;
}

static void out_free(refit_out *out)
{
    arena_free(&out->mem);
    free(out->meas);
    free(out->models);
    memset(out, 0, sizeof *out);
}

/* The distinct level combinations of d's points, in order of appearance
 * (borrowed strings); one "{}" when there are no points. */
static int distinct_levels(const store_fit_data *d, const char ***out, int *n)
{
    *n = 0;
    *out = malloc(sizeof(char *) * (size_t)(d->npoints ? d->npoints : 1));
    if (!*out)
        return -1;
    for (int p = 0; p < d->npoints; p++) {
        int k = 0;
        while (k < *n && strcmp((*out)[k], d->levels[p]))
            k++;
        if (k == *n)
            (*out)[(*n)++] = d->levels[p];
    }
    if (*n == 0)
        (*out)[(*n)++] = "{}";
    return 0;
}

/* Everything of one refit run between the stream's open and its end. */
typedef struct refit_run_state {
    store_fit_stream fs;
    int ngroups;
    const char **levels;
    refit_group *groups;
    int *point_group, *point_index; /* per stream point: its group and index there */
    refit_out out;
} refit_run_state;

static void run_free(refit_run_state *r)
{
    for (int i = 0; r->groups && i < r->ngroups; i++)
        group_free(&r->groups[i]);
    free(r->groups);
    free(r->levels);
    free(r->point_group);
    free(r->point_index);
    out_free(&r->out);
    store_fit_stream_free(&r->fs);
}

static int groups_init(refit_run_state *r, const store_experiment *e, const refit_setup *setup,
                       const _Atomic int *cancel, char *err, size_t errcap)
{
    const store_fit_data *d = &r->fs.d;
    size_t np = (size_t)(d->npoints ? d->npoints : 1);
    r->point_group = malloc(sizeof(int) * np);
    r->point_index = malloc(sizeof(int) * np);
    if (!r->point_group || !r->point_index || distinct_levels(d, &r->levels, &r->ngroups) < 0 ||
        !(r->groups = calloc((size_t)r->ngroups, sizeof *r->groups))) {
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    int rc = REFIT_OK;
    for (int i = 0; i < r->ngroups && rc == REFIT_OK; i++)
        rc = group_init(&r->groups[i], &r->fs, r->levels[i], e, setup, &r->out, cancel, err,
                        errcap);
    for (int i = 0; i < r->ngroups && rc == REFIT_OK; i++)
        for (int p = 0; p < r->groups[i].st.data.npoints; p++) {
            r->point_group[r->groups[i].st.frame_point[p]] = i;
            r->point_index[r->groups[i].st.frame_point[p]] = p;
        }
    return rc;
}

/* The stream's current callpath through every group. 0, or -1 (no memory). */
static int run_callpath(refit_run_state *r)
{
    const store_fit_data *d = &r->fs.d;
    int rc = 0;
    for (int i = 0; i < r->ngroups && rc == 0; i++) {
        refit_group *g = &r->groups[i];
        store_fit_data *gd = &g->st.data;
        size_t n = 0;
        for (size_t k = 0; k < d->nrows; k++)
            n += r->point_group[d->rows[k].point] == i;
        if (n == 0)
            continue;
        free(gd->rows);
        gd->rows = malloc(sizeof(store_fit_row) * n);
        if (!gd->rows)
            return -1;
        gd->nrows = 0;
        for (size_t k = 0; k < d->nrows; k++)
            if (r->point_group[d->rows[k].point] == i) {
                gd->rows[gd->nrows] = d->rows[k];
                gd->rows[gd->nrows++].point = r->point_index[d->rows[k].point];
            }
        rc = refit_callpath(g, r->fs.callpath);
        free(gd->rows);
        gd->rows = NULL;
        gd->nrows = 0;
    }
    return rc;
}

/* The application parts and models of every group. */
static int run_application(refit_run_state *r)
{
    int rc = 0;
    for (int i = 0; i < r->ngroups && rc == 0; i++) {
        refit_group *g = &r->groups[i];
        for (int p = 0; p < g->st.data.npoints && rc == 0; p++)
            rc = application_point(&g->st, p);
        if (rc == 0)
            rc = fit_application(&g->st, g->modeler, g->coords, g->values);
    }
    return rc;
}

/* Rows of the largest input a refit reads whole (store/fit_stream.h):
 * PERFCAST_REFIT_WHOLE_ROWS, else STORE_FIT_WHOLE_ROWS. */
static size_t whole_rows(void)
{
    const char *v = getenv("PERFCAST_REFIT_WHOLE_ROWS");
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end ? (size_t)n : STORE_FIT_WHOLE_ROWS;
}

/* How often a running refit looks for a queued job of its experiment, and
 * for how long after its claim it takes one over (see the top). */
#define CHECK_SECONDS 0.02
#define ABSORB_SECONDS 10.0
#define REFIT_RESTART 1 /* run_stream: a queued job is waiting, start again */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double absorb_seconds(void)
{
    const char *v = getenv("PERFCAST_REFIT_ABSORB_SECONDS");
    char *end;
    double x = v && *v ? strtod(v, &end) : ABSORB_SECONDS;
    return v && *v && !*end && x >= 0 ? x : ABSORB_SECONDS;
}

/* Whether a claimed refit should start again for a queued job: within its
 * take-over window, at most every CHECK_SECONDS unless final (before the
 * set is published). A failed look is no reason to stop: 0. */
typedef struct refit_watch {
    PGconn *c;
    const store_job_claim *claim; /* NULL: not a claimed job, never */
    double until;                 /* monotonic: no take-over after this */
    double next;                  /* the next look */
} refit_watch;

static int newer_waiting(refit_watch *w, int final)
{
    if (!w || !w->claim)
        return 0;
    double t = mono_now();
    if (t > w->until || (!final && t < w->next))
        return 0;
    w->next = t + CHECK_SECONDS;
    store_error se = {0};
    int yes = 0;
    return store_job_newer_queued(w->c, w->claim, &se, &yes) == STORE_OK && yes;
}

/* Pending measurements and models are written once they reach this many:
 * the batch bounds the memory they hold (with their arena) and one
 * statement per kind and batch keeps the round trips few. */
#define REFIT_BATCH 4096

/* Steps 1-6 on connection c (the stream's transaction). */
static int run_stream(PGconn *c, const store_experiment *e, int64_t experiment_id, int64_t job_id,
                      const store_job_claim *claim, const char *worker,
                      const refit_setup *setup, const _Atomic int *cancel, refit_watch *watch,
                      store_fit_cache *cache, int64_t *model_set_id, char *err, size_t errcap)
{
    refit_run_state r;
    memset(&r, 0, sizeof r);
    store_error se = {0};
    int64_t set_id = 0;
    int number = 0;
    if (store_fit_stream_open_cached(c, experiment_id, job_id, e->nparams, whole_rows(), cache,
                                     &r.fs, &se))
        return store_outcome(&se, err, errcap);
    int rc = groups_init(&r, e, setup, cancel, err, errcap);
    if (rc == REFIT_OK && store_model_set_stage(c, &se))
        rc = store_outcome(&se, err, errcap);
    int got;
    while (rc == REFIT_OK && (got = store_fit_stream_next(&r.fs, &se)) != 0) {
        if (got < 0) {
            rc = store_outcome(&se, err, errcap);
            break;
        }
        if (cancel && *cancel) { /* deleted meanwhile: stop soon */
            rc = REFIT_CANCELLED;
            break;
        }
        if (newer_waiting(watch, 0)) {
            rc = REFIT_RESTART;
            break;
        }
        if (run_callpath(&r) < 0) {
            snprintf(err, errcap, "out of memory");
            rc = REFIT_TRANSIENT;
        } else if (r.out.nmeas + r.out.nmodels >= REFIT_BATCH &&
                   flush_out(c, e->nparams, &r.out, &se)) {
            rc = store_outcome(&se, err, errcap);
        }
    }
    if (rc == REFIT_OK && run_application(&r) < 0) {
        snprintf(err, errcap, "out of memory");
        rc = REFIT_TRANSIENT;
    }
    if (rc == REFIT_OK && cancel && *cancel)
        rc = REFIT_CANCELLED;
    if (rc == REFIT_OK && newer_waiting(watch, 1))
        rc = REFIT_RESTART;
    if (rc == REFIT_OK && (flush_out(c, e->nparams, &r.out, &se) ||
                           store_model_set_publish(c, experiment_id, job_id, claim, worker,
                                                   &set_id, &number, &se))) {
        /* the job went with its experiment while the set was written, or
         * is no longer ours */
        rc = (se.code == STORE_NOT_FOUND || se.code == STORE_CONFLICT) && !strcmp(se.field, "job")
                 ? REFIT_CANCELLED
                 : store_outcome(&se, err, errcap);
    }
    if (rc != REFIT_OK)
        store_fit_stream_abort(&r.fs);
    else
        *model_set_id = set_id;
    run_free(&r);
    return rc;
}

/* Whether job id no longer exists (deleted with its experiment). */
static int job_gone(PGconn *c, int64_t id)
{
    store_job j;
    store_error se = {0};
    int rc = store_job_get(c, id, &j, &se);
    if (rc == STORE_OK)
        store_job_free(&j);
    return rc == STORE_NOT_FOUND;
}

/* refit_run_cancellable, and with a claim refit_run_job. */
static int run(store *s, int64_t experiment_id, int64_t job_id, const store_job_claim *claim,
               const char *worker, int64_t *model_set_id, char *err, size_t errcap,
               const _Atomic int *cancel)
{
    store_error se = {0};
    PGconn *c = store_acquire(s, &se);
    if (!c)
        return store_outcome(&se, err, errcap);
    store_experiment e;
    if (store_experiment_get(c, experiment_id, &e, &se)) {
        store_release(s, c);
        return store_outcome(&se, err, errcap);
    }
    refit_setup setup;
    int rc = setup_from_experiment(&e, &setup, err, errcap) < 0 ? REFIT_FAILED : REFIT_OK;
    if (rc == REFIT_OK && choose_modeler(c, &e, job_id, &setup.modeler, &se))
        rc = store_outcome(&se, err, errcap);
    refit_watch watch = {c, claim, mono_now() + absorb_seconds(), 0};
    /* a claimed refit that starts again reads only the profiles it has not
     * read yet (store_fit_cache) */
    store_fit_cache cache = {0};
    while (rc == REFIT_OK) {
        rc = run_stream(c, &e, experiment_id, job_id, claim, worker, &setup, cancel, &watch,
                        claim ? &cache : NULL, model_set_id, err, errcap);
        if (rc != REFIT_RESTART)
            break;
        /* rolled back: take the queued job over, then again from the start */
        int taken = 0;
        rc = store_job_absorb(c, claim, worker, &taken, &se) ? store_outcome(&se, err, errcap)
                                                             : REFIT_OK;
    }
    store_fit_cache_free(&cache);
    if ((rc == REFIT_FAILED || rc == REFIT_TRANSIENT) && job_id > 0 && job_gone(c, job_id))
        rc = REFIT_CANCELLED; /* what failed was reading what a deletion took away */
    if (rc == REFIT_CANCELLED)
        snprintf(err, errcap, "cancelled: the job is gone (its experiment deleted?)");
    store_release(s, c);
    store_experiment_free(&e);
    return rc;
}

int refit_run_cancellable(store *s, int64_t experiment_id, int64_t job_id,
                          int64_t *model_set_id, char *err, size_t errcap,
                          const _Atomic int *cancel)
{
    return run(s, experiment_id, job_id, NULL, NULL, model_set_id, err, errcap, cancel);
}

int refit_run_job(store *s, const store_job_claim *claim, const char *worker,
                  int64_t *model_set_id, char *err, size_t errcap, const _Atomic int *cancel)
{
    return run(s, claim->experiment_id, claim->job_id, claim, worker, model_set_id, err, errcap,
               cancel);
}
