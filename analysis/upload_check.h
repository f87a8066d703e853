/*
 * upload_check.h — what an uploaded profile must be for its experiment
 * before it is stored (POST /v1/experiments/{id}/profiles): coordinates and
 * values within the modeler's range, a training set-up that gives at least
 * one training step at the upload's coordinate, a trace's world size equal
 * to the workers the set-up gives there; a Score-P Cube set's runs placed
 * at their coordinates and numbered as repetitions; a forced phase applied
 * to the rows. Each check names the field at fault.
 *
 * The coordinate comes from the body's "point" (perfcast JSON), from query
 * parameters named like the experiment's parameters (?ranks=8), or from
 * both when they agree. The experiment comes as its parameters and stored spec
 * (analysis/experiment_doc.h), the profile as a reader gives it
 * (ingest/profile.h).
 */
#ifndef PERFCAST_ANALYSIS_UPLOAD_CHECK_H
#define PERFCAST_ANALYSIS_UPLOAD_CHECK_H

#include <jansson.h>

#include "analysis/problem.h"
#include "ingest/cube.h"
#include "ingest/profile.h"

typedef struct upload_experiment {
    const char *const *params;
    int nparams;
    const json_t *spec;
} upload_experiment;

/* The upload's coordinate point[0..nparams) in the experiment's order from
 * the profile's "point" and the query's coordinates (names[i]=values[i],
 * the query parameters that are neither options nor factors): each
 * parameter given, in the body or the query or both when they agree. 0, or
 * -1 with pr (400 naming "point.<param>" or the query parameter). */
int upload_point(const profile *p, const upload_experiment *e, const char *const *names,
                 const char *const *values, size_t n, double *point, an_problem *pr);

/* Coordinates and values beyond PMNF_MAX_MAGNITUDE (sums, squares and
 * products of them in refits and analyses stay finite): 400 naming
 * "point.<param>" or "metrics.<metric>" and the limit. 0 or -1 with pr. */
int upload_check_magnitudes(const profile *p, const upload_experiment *e, const double *point,
                            an_problem *pr);
/* The training set-up must give at least one training step at point (it
 * may depend on the parameters: D_t = "50000*x1"): 400 naming the
 * set-up's field. Nothing to check without a set-up. 0 or -1 with pr. */
int upload_check_training(const upload_experiment *e, const double *point, an_problem *pr);
/* A trace that says its world size (> 0) must agree with the workers the
 * set-up gives at point (data_parallel x model_parallel), when either reads
 * a parameter: 409 naming "world_size" and both. 0 or -1 with pr. */
int upload_check_world_size(const upload_experiment *e, const double *point, int world_size,
                            an_problem *pr);
/* Every row but those between steps in phase (ingest/trace.h's
 * INGEST_PHASE_*; 0 leaves them). */
void upload_force_phase(profile *p, int phase);

/* The experiment's coordinate of Cube run r into point, and the checks a
 * single upload gets (upload_check_magnitudes, upload_check_training): 0,
 * or -1 with pr (400 "parameters": the run's directory names no value of
 * one; else the check's field, the message starting with the run's member). */
int upload_run_point(const upload_experiment *e, const cube_bundle_run *r, double *point,
                     an_problem *pr);
/* The runs' repetitions: a ".r<N>" suffix, else 1 + the runs before at the
 * same point (points: b->n x np). */
void upload_repetitions(const cube_bundle *b, const double *points, int np, int *rep);

#endif
