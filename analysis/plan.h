/*
 * plan.h — a sweep definition (sweep/sweep_plan.h) against an experiment's
 * uploads, as POST .../sweep/plan answers it: the definition's names
 * checked against the experiment's parameters and factors, every legal
 * point × repetition with its status (measured, missing, failed: its
 * upload's refit failed), the commands of what still has to run (one page
 * of them), and the core-hours of that part by the current models
 * (predicted epoch time × ranks × cores_per_rank / 3600 × epochs_per_run per
 * run). The stored runs (store_run, read by store/sweeps.h) are a type of
 * this header; the models are the caller's (plan_pricing: the epoch time
 * of a run's point and level combination). api/sweep_plan.c reads the
 * experiment and its runs and sends the answer. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_PLAN_H
#define PERFCAST_ANALYSIS_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/levels.h"
#include "analysis/problem.h"
#include "modeling/pmnf.h"
#include "sweep/sweep_plan.h"

/* One stored run: a coordinate, repetition and level combination with an
 * upload. */
typedef struct store_run {
    double *point;  /* nparams values, into the array's shared block */
    int repetition;
    int ok;         /* profiles of this run whose job did not fail */
    int failed;     /* profiles of this run whose refit job failed */
    char *levels;   /* its factor levels as a JSON array in factor-name order
                       ("[\"cpu\",\"fp16\"]"; "[]" without factors) */
} store_run;

/* How the definition's names map onto the experiment's. */
typedef struct plan_map {
    int param[PMNF_MAX_PARAMS];     /* per experiment parameter: its var index, or -1-k for
                                       constant k */
    int factor[LEVELS_MAX_FACTORS]; /* per experiment factor (name order): its var */
    int nfactors;
} plan_map;

/* The definition d against an experiment's parameters (names[0..nparams))
 * and its spec ({"factors":{...}}): every varied parameter one of its
 * parameters, every parameter varied or constant; every varied factor one
 * of its factors with declared levels, every factor varied. 0, or -1 with
 * p (400 naming the field). */
int plan_match(const sweep_def *d, const char *const *names, int nparams, const json_t *spec,
               plan_map *map, an_problem *p);

/* What pricing a missing run asks of the models. */
typedef struct plan_pricing {
    int has_models;     /* the experiment has a model set */
    int priced;         /* ... with models of the epoch time (with factors: any) */
    int set_number;
    const char *reason; /* why not, when not priced */
    /* The epoch time t[3] (value, lo, hi) at point for the level
     * combination levels (its JSON array text, and its values[0..nf)), the
     * ranks there and the cores per rank; -1 when its models have no time
     * models (or there are none). */
    int (*epoch)(void *ctx, const double *point, const char *levels, const char *const *values,
                 int nf, double t[3], double *ranks, double *cores_per_rank);
    void *ctx;
} plan_pricing;

/* Every legal point of d (matched by map) one the experiment's training
 * set-up (spec's "training") allows, as an upload there must be: data and
 * model parallelism > 0, at least one training step (analysis/training.h).
 * A point where it is not (say ranks = 0 or -4 with data_parallel "ranks")
 * is a run that could never be uploaded, whose ranks and core-hours mean
 * nothing: 0, or -1 with p (400 naming parameters.<the varied parameter
 * whose value is <= 0>, else parameters, and the rule broken). */
int plan_check_runnable(const sweep_def *d, const char *const *names, int nparams,
                        const plan_map *map, const json_t *spec, an_problem *p);

/* The same check for d alone (perfcast sweep plan FILE, no experiment at
 * hand): its varied parameter or constant "ranks", where there is one, is
 * the rank count, data_parallel "ranks" (an experiment's parameter of that
 * name must be: analysis/param_names.h), and a legal point where it is 0
 * or below is refused as plan_check_runnable refuses it (400 naming
 * parameters.ranks, the point and the rule). Without "ranks": 0, nothing
 * known to check. */
int plan_check_ranks(const sweep_def *d, an_problem *p);

/* The plan of d (matched by map; legal points × repetitions within
 * SWEEP_MAX_RUNS) against the stored runs[0..nruns) (ordered by point,
 * repetition and levels) of experiment experiment with parameters
 * names[0..nparams): the page from offset of at most limit runs listed.
 * NULL when out of memory. */
json_t *plan_answer(const sweep_def *d, int64_t experiment, const char *const *names,
                    int nparams, const plan_map *map, const store_run *runs, int nruns,
                    long offset, long limit, const plan_pricing *pricing);

#endif
