/*
 * iteration_runs.h — per-iteration analyses of uploaded Kineto traces
 * queued for the job workers (migration 0015): inserted queued by the HTTP
 * request, claimed by a worker (FOR UPDATE SKIP LOCKED, so one run goes to
 * one worker; a run left running for 10 minutes by a worker that died is
 * claimed again, 3 attempts at most), finished with the answer document or
 * the problem met. Each function takes a connection from store_acquire().
 */
#ifndef PERFCAST_STORE_ITERATION_RUNS_H
#define PERFCAST_STORE_ITERATION_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/queued_run.h"

/* A trace analysis's row (store/queued_run.h): kind "iteration",
 * "breakdown", "iteration-model" or "overhead-set" (experiment 0: none),
 * request JSON text; freed by store_queued_run_free(). */
typedef store_queued_run store_it_run;

/* Inserts a queued run (fills id, created_at) and wakes the workers (at
 * COMMIT, or at once outside a transaction). */
int store_it_run_add(PGconn *c, store_it_run *r, store_error *err);
/* Run id of tenant (of experiment exp when exp > 0); unknown ->
 * STORE_NOT_FOUND. */
int store_it_run_get(PGconn *c, int64_t tenant, int64_t exp, int64_t id, store_it_run *out,
                     store_error *err);
/* Takes the oldest claimable run for worker: queued, or running with its
 * lease over (running now, attempts + 1, leased lease_seconds); runs whose
 * third attempt's lease ran out are failed first. None -> STORE_NOT_FOUND. */
int store_it_run_claim(PGconn *c, const char *worker, double lease_seconds, store_it_run *out,
                       store_error *err);
/* Extends the lease of run id held by (worker, attempt); not held any more
 * -> STORE_CONFLICT. */
int store_it_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                           double lease_seconds, store_error *err);
/* Records the outcome of a claimed run held by (worker, attempt): result
 * (done) or error (failed); a run no longer held is left as it is. */
int store_it_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                        const char *result, const char *error, store_error *err);

/* Size in bytes and format of a stored upload of the tenant (exp > 0: of
 * that experiment); unknown -> STORE_NOT_FOUND. */
int store_profile_raw_size(PGconn *c, int64_t tenant, int64_t exp, int64_t profile, size_t *len,
                           char format[32], store_error *err);

#endif
