/*
 * refit.c — a job's work: all stored profiles of an experiment -> a new model
 * set (see refit.h).
 *
 *   1. load the experiment and the normalized rows of all its profiles;
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
 *   6. write measurements and models as one new model set, in one transaction.
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

#include "api/model_json.h"
#include "api/training.h"
#include "ingest/profile.h"
#include "modeling/accuracy.h"
#include "modeling/aggregate.h"
#include "modeling/expr.h"
#include "modeling/imbalance.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/job_modeler.h"
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

typedef struct refit_state {
    const store_experiment *e;
    const store_fit_data *d;
    refit_setup setup;
    agg_result *agg;     /* per point */
    double *n_t, *n_v;   /* per point */
    series *cp;          /* [callpath][metric][2] */
    series *app;         /* [part][metric] */
    arena mem;
    store_measurement *meas;
    size_t nmeas, meas_cap;
    store_model *models;
    size_t nmodels, models_cap;
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

static int aggregate_points(refit_state *st, char *err, size_t errcap)
{
    const store_fit_data *d = st->d;
    size_t start = 0;
    agg_row *rows = malloc(sizeof(agg_row) * (d->nrows ? d->nrows : 1));
    if (!rows)
        return -1;
    for (int p = 0; p < d->npoints; p++) {
        size_t end = start, n = 0;
        while (end < d->nrows && d->rows[end].point == p) {
            const store_fit_row *r = &d->rows[end++];
            rows[n++] = (agg_row){r->repetition, r->rank, r->phase, r->step, r->callpath,
                                  r->metric, r->value};
        }
        start = end;
        int last_train = -1;
        for (size_t i = 0; i < n; i++)
            if (rows[i].phase == 0 && rows[i].step > last_train)
                last_train = rows[i].step;
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
        agg_options o = {st->setup.warmup_steps, st->setup.measure};
        if (agg_coordinate_with(rows, n, &o, &st->agg[p]) < 0) {
            free(rows);
            return -1;
        }
        const double *pt = d->points + (size_t)p * d->nparams;
        char field[64], why[400];
        if (training_steps_at(&st->setup.training, pt, (const char *const *)st->e->parameters,
                              st->e->nparams, &st->n_t[p], &st->n_v[p], field, sizeof field, why,
                              sizeof why) < 0) {
            snprintf(err, errcap, "%s: %s", field, why);
            free(rows);
            return -2;
        }
    }
    free(rows);
    return 0;
}

/* ---- measurements ------------------------------------------------------------------- */

static store_measurement *new_measurement(refit_state *st)
{
    if (st->nmeas == st->meas_cap) {
        size_t cap = st->meas_cap ? st->meas_cap * 2 : 1024;
        store_measurement *v = realloc(st->meas, sizeof *v * cap);
        if (!v)
            return NULL;
        st->meas = v;
        st->meas_cap = cap;
    }
    store_measurement *m = &st->meas[st->nmeas++];
    memset(m, 0, sizeof *m);
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
    double *lif = arena_keep(&st->mem, malloc(sizeof(double) * (size_t)nreps));
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
    store_measurement *m = new_measurement(st);
    if (!m)
        return -1;
    m->lif_reps = lif_of(st, a->rank_reps, a->nranks, a->nreps);
    free(a->rank_reps);
    a->rank_reps = NULL;
    if (a->nreps > 0 && !m->lif_reps)
        return -1;
    if ((a->reps && !arena_keep(&st->mem, a->reps)) ||
        (a->ranks && !arena_keep(&st->mem, a->ranks)) ||
        (a->rank_ids && !arena_keep(&st->mem, a->rank_ids)))
        return -1;
    m->point = st->d->points + (size_t)p * st->d->nparams;
    m->level = level;
    m->name = name;
    m->category = category;
    m->metric = st->d->metrics[metric];
    m->phase = phase;
    m->value = a->value;
    m->nreps = a->nreps;
    m->reps = a->reps;
    m->nranks = a->nranks;
    m->ranks = a->ranks;
    m->rank_ids = a->rank_ids;
    return 0;
}

static series *cp_series(refit_state *st, int callpath, int metric, int which)
{
    return &st->cp[((size_t)callpath * st->d->nmetrics + (size_t)metric) * 2 + (size_t)which];
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

/* Step 4 for one coordinate: epoch and between values per callpath and the
 * application parts, as measurements and as series values. */
static int extrapolate_point(refit_state *st, int p)
{
    const agg_result *r = &st->agg[p];
    int nm = st->d->nmetrics;
    accum *parts = calloc((size_t)NPARTS * nm, sizeof(accum));
    unsigned char *part_seen = calloc((size_t)nm, 1);
    unsigned char *between_seen = calloc((size_t)nm, 1); /* gap work at this coordinate */
    if (!parts || !part_seen || !between_seen) {
        free(parts);
        free(part_seen);
        free(between_seen);
        return -1;
    }
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
            series_set(cp_series(st, c, m, SERIES_EPOCH), p, epoch.value, epoch.reps, epoch.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "epoch", &epoch);
        } else {
            accum_free(&epoch);
        }
        if (has_between) {
            series_set(cp_series(st, c, m, SERIES_BETWEEN), p, between.value, between.reps,
                       between.nreps);
            rc |= add_accum_measurement(st, p, "callpath", name, cat, m, "between", &between);
        } else {
            accum_free(&between);
        }
    }
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
    free(parts);
    free(part_seen);
    free(between_seen);
    return rc ? -1 : 0;
}

/* ---- fitting --------------------------------------------------------------------------- */

static store_model *new_model(refit_state *st)
{
    if (st->nmodels == st->models_cap) {
        size_t cap = st->models_cap ? st->models_cap * 2 : 256;
        store_model *v = realloc(st->models, sizeof *v * cap);
        if (!v)
            return NULL;
        st->models = v;
        st->models_cap = cap;
    }
    store_model *m = &st->models[st->nmodels++];
    memset(m, 0, sizeof *m);
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

static int is_evaluation(const store_fit_data *d, int p)
{
    return d->evaluation && d->evaluation[p];
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
        out->reason = arena_keep(&st->mem, why);
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
        out->reason = arena_keep(&st->mem, why);
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
    out->model_json = arena_keep(&st->mem, text);
    out->function = arena_keep(&st->mem, function);
    api_model_growth(&model.f, &out->growth_poly, &out->growth_log);
    return out->model_json && out->function ? 0 : -1;
}

static int fit_all(refit_state *st)
{
    const store_fit_data *d = st->d;
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = st->setup.strong;
    o.modeler = st->setup.modeler;
    pmnf_modeler *modeler = pmnf_modeler_new(&o);
    double *coords = malloc(sizeof(double) * (size_t)(d->npoints ? d->npoints : 1) * d->nparams);
    double *values = malloc(sizeof(double) * (size_t)(d->npoints ? d->npoints : 1));
    int rc = modeler && coords && values ? 0 : -1;
    for (int part = 0; part < NPARTS && rc == 0; part++) {
        for (int m = 0; m < d->nmetrics && rc == 0; m++) {
            const series *s = app_series(st, part, m);
            int any = part != PART_BETWEEN;
            for (int p = 0; p < d->npoints && !any; p++)
                any = s->seen[p];
            if (!any) /* no work between steps anywhere: no such part */
                continue;
            store_model *out = new_model(st);
            if (!out) {
                rc = -1;
                break;
            }
            out->level = "application";
            out->name = part_names[part];
            out->category = part <= PART_MEM ? part_names[part] : NULL;
            out->metric = d->metrics[m];
            out->phase = "epoch";
            rc = fit_series(st, modeler, s, out, coords, values);
        }
    }
    for (int c = 0; c < d->ncallpaths && rc == 0; c++) {
        if (st->cancel && *st->cancel) { /* deleted meanwhile: stop soon */
            rc = -3;
            break;
        }
        for (int m = 0; m < d->nmetrics && rc == 0; m++) {
            for (int which = 0; which < 2 && rc == 0; which++) {
                const series *s = cp_series(st, c, m, which);
                int any = 0;
                for (int p = 0; p < d->npoints; p++)
                    any |= s->seen[p];
                if (!any)
                    continue;
                store_model *out = new_model(st);
                if (!out) {
                    rc = -1;
                    break;
                }
                out->level = "callpath";
                out->name = d->callpaths[c];
                out->category = profile_category_name(d->categories[c]);
                out->metric = d->metrics[m];
                out->phase = which == SERIES_EPOCH ? "epoch" : "between";
                rc = fit_series(st, modeler, s, out, coords, values);
            }
        }
    }
    pmnf_modeler_free(modeler);
    free(coords);
    free(values);
    return rc;
}

/* ---- the whole refit ---------------------------------------------------------------------- */

static int state_alloc(refit_state *st)
{
    const store_fit_data *d = st->d;
    size_t np = (size_t)(d->npoints ? d->npoints : 1);
    size_t ncp = (size_t)d->ncallpaths * d->nmetrics * 2, napp = (size_t)NPARTS * d->nmetrics;
    st->agg = calloc(np, sizeof(agg_result));
    st->n_t = calloc(np, sizeof(double));
    st->n_v = calloc(np, sizeof(double));
    st->cp = calloc(ncp ? ncp : 1, sizeof(series));
    st->app = calloc(napp ? napp : 1, sizeof(series));
    if (!st->agg || !st->n_t || !st->n_v || !st->cp || !st->app)
        return -1;
    /* one block per kind for all series' values and flags */
    size_t total = ncp + napp;
    double *vals = arena_keep(&st->mem, calloc(total ? total * np : 1, sizeof(double)));
    unsigned char *seen = arena_keep(&st->mem, calloc(total ? total * np : 1, 1));
    const double **reps = arena_keep(&st->mem, calloc(total ? total * np : 1, sizeof *reps));
    int *nreps = arena_keep(&st->mem, calloc(total ? total * np : 1, sizeof(int)));
    if (!vals || !seen || !reps || !nreps)
        return -1;
    for (size_t i = 0; i < ncp + napp; i++) {
        series *s = i < ncp ? &st->cp[i] : &st->app[i - ncp];
        *s = (series){vals + i * np, seen + i * np, reps + i * np, nreps + i * np};
    }
    return 0;
}

static void state_free(refit_state *st)
{
    if (st->agg)
        for (int p = 0; p < st->d->npoints; p++)
            agg_result_free(&st->agg[p]);
    free(st->agg);
    free(st->n_t);
    free(st->n_v);
    free(st->cp);
    free(st->app);
    free(st->meas);
    free(st->models);
    arena_free(&st->mem);
}

/* Steps 2-5 over loaded data; fills st->meas and st->models. */
static int compute(refit_state *st, char *err, size_t errcap)
{
    if (state_alloc(st) < 0) {
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    int rc = aggregate_points(st, err, errcap);
    if (rc == -2)
        return REFIT_FAILED;
    for (int p = 0; p < st->d->npoints && rc == 0; p++) {
        size_t kept = st->nmeas;
        rc = extrapolate_point(st, p);
        /* held out: its values are in the series, for the accuracy, but it is
         * no measurement of the model set */
        if (is_evaluation(st->d, p))
            st->nmeas = kept;
    }
    if (rc == 0)
        rc = fit_all(st);
    if (rc == -3)
        return REFIT_CANCELLED;
    if (rc < 0) {
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    return REFIT_OK;
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

/* The points (and their rows) of d whose levels are lv, as a view into d:
 * names are borrowed; points, evaluation flags, levels and rows are owned
 * (free with group_free). */
static int group_of(const store_fit_data *d, const char *lv, store_fit_data *g, int *map)
{
    memset(g, 0, sizeof *g);
    g->nparams = d->nparams;
    g->ncallpaths = d->ncallpaths;
    g->callpaths = d->callpaths;
    g->categories = d->categories;
    g->nmetrics = d->nmetrics;
    g->metrics = d->metrics;
    size_t np = (size_t)(d->npoints ? d->npoints : 1);
    g->points = malloc(sizeof(double) * np * (size_t)(d->nparams ? d->nparams : 1));
    g->evaluation = malloc(np);
    g->levels = malloc(sizeof(char *) * np);
    g->rows = malloc(sizeof(store_fit_row) * (d->nrows ? d->nrows : 1));
    if (!g->points || !g->evaluation || !g->levels || !g->rows)
        return -1;
    for (int p = 0; p < d->npoints; p++) {
        map[p] = -1;
        if (strcmp(d->levels[p], lv))
            continue;
        map[p] = g->npoints;
        memcpy(g->points + (size_t)g->npoints * d->nparams, d->points + (size_t)p * d->nparams,
               sizeof(double) * (size_t)d->nparams);
        g->evaluation[g->npoints] = d->evaluation[p];
        g->levels[g->npoints++] = d->levels[p];
    }
    for (size_t i = 0; i < d->nrows; i++)
        if (map[d->rows[i].point] >= 0) {
            g->rows[g->nrows] = d->rows[i];
            g->rows[g->nrows++].point = map[d->rows[i].point];
        }
    return 0;
}

static void group_free(store_fit_data *g)
{
    free(g->points);
    free(g->evaluation);
    free(g->levels);
    free(g->rows);
    memset(g, 0, sizeof *g);
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

/* Steps 2-5 for each level combination; the states (which own the
 * measurements' and models' data) stay alive in *states until the write. */
typedef struct refit_groups {
    int n;
    const char **levels;
    store_fit_data *data;
    refit_state *st;
    store_measurement *meas;
    size_t nmeas;
    store_model *models;
    size_t nmodels;
} refit_groups;

static void groups_free(refit_groups *gs)
{
    for (int i = 0; i < gs->n; i++) {
        if (gs->st[i].d)
            state_free(&gs->st[i]);
        group_free(&gs->data[i]);
    }
    free(gs->levels);
    free(gs->data);
    free(gs->st);
    free(gs->meas);
    free(gs->models);
    memset(gs, 0, sizeof *gs);
}

static int compute_groups(const store_experiment *e, const store_fit_data *d,
                          const refit_setup *setup, const _Atomic int *cancel, refit_groups *gs,
                          char *err, size_t errcap)
{
    memset(gs, 0, sizeof *gs);
    int n = 0;
    int *map = malloc(sizeof(int) * (size_t)(d->npoints ? d->npoints : 1));
    if (!map || distinct_levels(d, &gs->levels, &n) < 0) {
        free(map);
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    gs->data = calloc((size_t)n, sizeof *gs->data);
    gs->st = calloc((size_t)n, sizeof *gs->st);
    if (!gs->data || !gs->st) {
        free(map);
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    gs->n = n;
    int rc = REFIT_OK;
    for (int i = 0; i < n && rc == REFIT_OK; i++) {
        if (group_of(d, gs->levels[i], &gs->data[i], map) < 0) {
            snprintf(err, errcap, "out of memory");
            rc = REFIT_TRANSIENT;
            break;
        }
        refit_state *st = &gs->st[i];
        st->e = e;
        st->d = &gs->data[i];
        st->setup = *setup;
        st->cancel = cancel;
        rc = compute(st, err, errcap);
        gs->nmeas += st->nmeas;
        gs->nmodels += st->nmodels;
    }
    free(map);
    if (rc != REFIT_OK)
        return rc;
    gs->meas = malloc(sizeof(store_measurement) * (gs->nmeas ? gs->nmeas : 1));
    gs->models = malloc(sizeof(store_model) * (gs->nmodels ? gs->nmodels : 1));
    if (!gs->meas || !gs->models) {
        snprintf(err, errcap, "out of memory");
        return REFIT_TRANSIENT;
    }
    size_t km = 0, kmo = 0;
    for (int i = 0; i < n; i++) {
        for (size_t k = 0; k < gs->st[i].nmeas; k++) {
            gs->meas[km] = gs->st[i].meas[k];
            gs->meas[km++].levels = gs->levels[i];
        }
        for (size_t k = 0; k < gs->st[i].nmodels; k++) {
            gs->models[kmo] = gs->st[i].models[k];
            gs->models[kmo++].levels = gs->levels[i];
        }
    }
    return REFIT_OK;
}

int refit_run_cancellable(store *s, int64_t experiment_id, int64_t job_id,
                          int64_t *model_set_id, char *err, size_t errcap,
                          const _Atomic int *cancel)
{
    store_error se = {0};
    PGconn *c = store_acquire(s, &se);
    if (!c)
        return store_outcome(&se, err, errcap);
    store_experiment e;
    store_fit_data d;
    memset(&d, 0, sizeof d);
    if (store_experiment_get(c, experiment_id, &e, &se)) {
        store_release(s, c);
        return store_outcome(&se, err, errcap);
    }
    refit_setup setup;
    refit_groups gs;
    memset(&gs, 0, sizeof gs);
    int rc = setup_from_experiment(&e, &setup, err, errcap) < 0 ? REFIT_FAILED : REFIT_OK;
    if (rc == REFIT_OK && choose_modeler(c, &e, job_id, &setup.modeler, &se))
        rc = store_outcome(&se, err, errcap);
    if (rc == REFIT_OK && store_fit_data_load_job(c, experiment_id, job_id, e.nparams, &d, &se))
        rc = store_outcome(&se, err, errcap);
    /* the computation needs no connection: give it back meanwhile */
    store_release(s, c);
    if (rc == REFIT_OK)
        rc = compute_groups(&e, &d, &setup, cancel, &gs, err, errcap);
    if (rc == REFIT_OK && cancel && *cancel)
        rc = REFIT_CANCELLED;
    if (rc == REFIT_CANCELLED)
        snprintf(err, errcap, "cancelled: the job is gone (its experiment deleted?)");
    if (rc == REFIT_OK) {
        int number;
        c = store_acquire(s, &se);
        if (!c || store_model_set_write(c, experiment_id, job_id, e.nparams, gs.meas, gs.nmeas,
                                        gs.models, gs.nmodels, model_set_id, &number, &se))
            rc = store_outcome(&se, err, errcap);
        if (c)
            store_release(s, c);
    }
    groups_free(&gs);
    store_fit_data_free(&d);
    store_experiment_free(&e);
    return rc;
}
