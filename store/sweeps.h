/*
 * sweeps.h — what a sweep plan needs to know of an experiment's uploads:
 * which (coordinate, repetition) runs have a profile, and whether the refit
 * job each upload queued failed.
 */
#ifndef PERFCAST_STORE_SWEEPS_H
#define PERFCAST_STORE_SWEEPS_H

#include <stdint.h>

#include "store/db.h"
#include "analysis/plan.h"
#include "store/models.h"

/* store_run: one stored run, as a sweep plan reads it (analysis/plan.h) */

/* The distinct runs (coordinate, repetition, factor levels) of experiment
 * exp (nparams parameters), ordered by point, repetition and levels (their
 * JSON text compared bytewise, as strcmp does), into *out (free with
 * store_runs_free). */
int store_runs_read(PGconn *c, int64_t exp, int nparams, store_run **out, int *n,
                    store_error *err);
void store_runs_free(store_run *v, int n);

/* The measurements of model set set_id through f (store/models.h), with
 * only what statistics need: point, level, name, category, metric, phase,
 * the aggregated value, the per-repetition values and the factor levels
 * (ranks, rank ids and LIFs left NULL), in store_measurements_read's order and, within a
 * coordinate, by levels; read in binary. f->levels, when given, selects
 * one level combination as there. Free with
 * store_measurement_rows_free. */
int store_repetitions_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                           store_measurement_row **out, int *n, store_error *err);

#endif
