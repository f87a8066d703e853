/*
 * refit_group.c — one level combination of a refit (pipeline/refit.c):
 * its points, series and sums, steps 2-5 callpath by callpath, then the
 * application series; the measurements and models go out in batches
 * (store_model_set_append).
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


static void group_free(refit_group *g)
{
    refit_state *st = &g->st;
    size_t nacc = (size_t)st->data.npoints * NPARTS * (size_t)st->data.nmetrics;
    for (size_t i = 0; st->parts && i < nacc; i++)
        refit_accum_free(&st->parts[i]);
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
    return refit_prepare_points(st, err, errcap) < 0 ? REFIT_FAILED : REFIT_OK;
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
    int rc = refit_aggregate_callpath(st);
    for (int p = 0; p < d->npoints && rc == 0; p++)
        rc = refit_extrapolate_point(st, p);
    /* the measurements point into the aggregated values: the arena keeps
     * their arrays until the batch is written (rank_reps is used up) */
    for (int p = 0; p < d->npoints; p++) {
        agg_result *r = &st->agg[p];
        for (size_t i = 0; i < r->nvalues; i++) {
            agg_value *v = &r->values[i];
            if (rc == 0) {
                int lost = 0; /* each is kept or freed */
                lost |= v->reps && !refit_arena_keep(&st->out->mem, v->reps);
                lost |= v->ranks && !refit_arena_keep(&st->out->mem, v->ranks);
                lost |= v->rank_ids && !refit_arena_keep(&st->out->mem, v->rank_ids);
                v->reps = v->ranks = NULL;
                v->rank_ids = NULL;
                rc = lost ? -1 : 0;
            }
        }
        agg_result_free(r);
    }
    if (rc == 0)
        rc = refit_fit_callpath(st, c, g->modeler, g->coords, g->values);
    return rc;
}

/* Stages the pending measurements and models and empties out (its arena
 * with them). */
int refit_flush_out(PGconn *c, int nparams, refit_out *out, store_error *se)
{
    int rc = store_model_set_append(c, 0, nparams, out->meas, out->nmeas, out->models,
                                    out->nmodels, se);
    out->nmeas = out->nmodels = 0;
    refit_arena_free(&out->mem);
    return rc;
}

static void out_free(refit_out *out)
{
    refit_arena_free(&out->mem);
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

void refit_run_free(refit_run_state *r)
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

int refit_groups_init(refit_run_state *r, const store_experiment *e, const refit_setup *setup,
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
int refit_run_callpath(refit_run_state *r)
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
int refit_run_application(refit_run_state *r)
{
    int rc = 0;
    for (int i = 0; i < r->ngroups && rc == 0; i++) {
        refit_group *g = &r->groups[i];
        for (int p = 0; p < g->st.data.npoints && rc == 0; p++)
            rc = refit_application_point(&g->st, p);
        if (rc == 0)
            rc = refit_fit_application(&g->st, g->modeler, g->coords, g->values);
    }
    return rc;
}

/* Rows of the largest input a refit reads whole (store/fit_stream.h):
 * PERFCAST_REFIT_WHOLE_ROWS, else STORE_FIT_WHOLE_ROWS. */
