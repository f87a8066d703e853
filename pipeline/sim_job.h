/*
 * sim_job.h — a simulation run over a stored step graph (the work of
 * POST /v1/simulations/{id}/runs, answered in the request when small and
 * by a job worker otherwise): the stored graph read piece by piece into the
 * compact graph, given the simulation's batch size and overhead where the
 * graph has none, then every sweep of the request (analysis/sim_request.h).
 * The handler (api/simulations.c) and the queued runs' worker call the same
 * functions; they know the store and the simulator, not HTTP.
 */
#ifndef PERFCAST_PIPELINE_SIM_JOB_H
#define PERFCAST_PIPELINE_SIM_JOB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/sim_request.h"
#include "store/db.h"
#include "store/simulations.h"

/* Request r on profile *profile (0: the newest; set to the one read) of
 * simulation sim: the answer document, or NULL with err->code set when the
 * graph could not be read (a stored graph that does not read is
 * STORE_INTERNAL), else with the simulator's fault in e. */
json_t *sim_job_run(store *db, int64_t sim, int64_t *profile, const api_sim_request *r,
                    store_error *err, sim_error *e);

/* A claimed queued run: its stored request over its profile. The answer
 * document, or NULL with why ("field: message") in why. */
json_t *sim_job_run_claimed(store *db, const store_sim_run *run, char *why, size_t cap);

#endif
