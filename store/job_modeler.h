/*
 * job_modeler.h — which modeler a refit job uses: a refit may ask for one
 * (POST /v1/experiments/{id}/refit?modeler=), stored with the queued job
 * (migration 0013); NULL there means the experiment's.
 */
#ifndef PERFCAST_STORE_JOB_MODELER_H
#define PERFCAST_STORE_JOB_MODELER_H

#include <stdint.h>

#include "store/db.h"

/* store_job_enqueue() asking for modeler ("extrap" | "robust"): a new job
 * carries it, a queued job joined takes it. */
int store_job_enqueue_modeler(PGconn *c, int64_t exp, const char *modeler, const char *commit,
                              int64_t *job_id, store_error *err);

/* The modeler job id asked for into out ("" when none, or no such job). */
int store_job_modeler(PGconn *c, int64_t job_id, char *out, size_t cap, store_error *err);

#endif
