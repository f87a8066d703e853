/*
 * refit_internal.h — the state the steps of a refit share (pipeline/refit.c
 * drives them): the set-up read from the experiment, the series to fit, one
 * level combination's state, the measurements and models not yet written.
 * Not for use outside pipeline/refit*.c.
 */
#ifndef PERFCAST_PIPELINE_REFIT_INTERNAL_H
#define PERFCAST_PIPELINE_REFIT_INTERNAL_H

#include <stddef.h>

#include "analysis/training.h"
#include "modeling/aggregate.h"
#include "modeling/modeler.h"
#include "pipeline/refit.h"
#include "store/experiments.h"
#include "store/fit_stream.h"
#include "store/models.h"

#define MIN_VALUES_PER_PARAMETER 5

enum { PART_COMP = 0, PART_COMM = 1, PART_MEM = 2, PART_EPOCH = 3, PART_BETWEEN = 4, NPARTS = 5 };
static const char *const part_names[NPARTS] = {"comp", "comm", "mem", "epoch", "between"};
enum { SERIES_EPOCH = 0, SERIES_BETWEEN = 1 };

typedef struct refit_setup {
    training_setup training; /* D_t, D_v, B, G, M per coordinate (analysis/training.h) */
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

typedef struct refit_group {
    refit_state st;
    void *cp_block, *app_block;
    pmnf_modeler *modeler;
    double *coords, *values;
} refit_group;
/* Everything of one refit run between the stream's open and its end. */
typedef struct refit_run_state {
    store_fit_stream fs;
    int ngroups;
    const char **levels;
    refit_group *groups;
    int *point_group, *point_index; /* per stream point: its group and index there */
    refit_out out;
} refit_run_state;


/* refit.c: everything malloc'ed for one refit is kept in an arena, freed at
 * its end (refit_arena_keep frees p when it cannot keep it) */
void *refit_arena_keep(arena *a, void *p);
void refit_arena_free(arena *a);

/* the steps (refit_aggregate.c, refit_fit.c, refit_group.c) and what they share */
void refit_accum_free(accum *a);
int refit_aggregate_callpath(refit_state *st);
series *refit_app_series(refit_state *st, int part, int metric);
int refit_application_point(refit_state *st, int p);
series *refit_cp_series(refit_state *st, int metric, int which);
int refit_extrapolate_point(refit_state *st, int p);
int refit_is_evaluation(const store_fit_data *d, int p);
int refit_prepare_points(refit_state *st, char *err, size_t errcap);
int refit_setup_from_experiment(const store_experiment *e, refit_setup *s, char *err,
                                 size_t errcap);
int refit_fit_application(refit_state *st, pmnf_modeler *modeler, double *coords,
                           double *values);
int refit_fit_callpath(refit_state *st, int c, pmnf_modeler *modeler, double *coords,
                        double *values);
int refit_flush_out(PGconn *c, int nparams, refit_out *out, store_error *se);
int refit_groups_init(refit_run_state *r, const store_experiment *e, const refit_setup *setup,
                       const _Atomic int *cancel, char *err, size_t errcap);
int refit_run_application(refit_run_state *r);
int refit_run_callpath(refit_run_state *r);
void refit_run_free(refit_run_state *r);

#endif
