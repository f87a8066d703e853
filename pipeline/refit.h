/*
 * refit.h — the work a job does: turn all stored profiles of one experiment
 * into a new numbered model set (aggregated measurements per coordinate,
 * callpath models for every metric, application models epoch/comp/comm/mem),
 * written in one transaction. Called by the worker threads (server/workers.c)
 * after they claimed a job; knows the store, the modeling library and the
 * analyses, not HTTP. The steps are pipeline/refit_*.c.
 */
#ifndef PERFCAST_PIPELINE_REFIT_H
#define PERFCAST_PIPELINE_REFIT_H

#include <stdint.h>
#include <stddef.h>

#include "store/db.h"
#include "store/jobs.h"

enum {
    REFIT_OK = 0,
    REFIT_FAILED = -1,    /* the data cannot be modeled: keep the error, do not retry */
    REFIT_TRANSIENT = -2, /* database unavailable or similar: retry later */
    REFIT_CANCELLED = -3, /* *cancel was set (the job is gone): nothing written */
};

/* Refits experiment_id for job_id. On REFIT_OK *model_set_id is the new set
 * (already committed). On failure err holds a one-line reason. */
int refit_run(store *s, int64_t experiment_id, int64_t job_id, int64_t *model_set_id, char *err,
              size_t errcap);
/* The same, looking at *cancel (set by another thread) between callpaths:
 * once it is non-zero the refit stops and answers REFIT_CANCELLED. */
int refit_run_cancellable(store *s, int64_t experiment_id, int64_t job_id,
                          int64_t *model_set_id, char *err, size_t errcap,
                          const _Atomic int *cancel);
/* What a refit tells its caller before each step, on the refit's thread
 * (server/workers.c records it, so that a worker that dies names the step):
 * step is one of REFIT_STEP_*, callpath the callpath whose rows are about to
 * be aggregated and fitted (NULL in the other steps). */
#define REFIT_STEP_READ "reading profiles"
#define REFIT_STEP_CALLPATH "fitting callpath models"
#define REFIT_STEP_APPLICATION "fitting application models"
#define REFIT_STEP_WRITE "writing the model set"
typedef struct refit_progress {
    void (*note)(void *arg, const char *step, const char *callpath);
    void *arg;
} refit_progress;

/* The same for a claimed job (store/jobs.h): on REFIT_OK the job was
 * recorded done in the transaction that committed its model set; a claim
 * no longer held (lease lost, job deleted) writes nothing and answers
 * REFIT_CANCELLED. progress may be NULL. */
int refit_run_job(store *s, const store_job_claim *claim, const char *worker,
                  int64_t *model_set_id, char *err, size_t errcap, const _Atomic int *cancel,
                  const refit_progress *progress);

#endif
