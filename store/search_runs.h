/*
 * search_runs.h — configuration searches and advice queued for the job
 * workers (migration 0025): inserted queued by the HTTP request, claimed by
 * a worker (FOR UPDATE SKIP LOCKED, so one run goes to one worker) with a
 * lease it renews while it runs; a run whose lease expired (its worker
 * died) is claimed again, 3 attempts at most; finished with the answer
 * document or the problem met, by the (worker, attempt) holding it only.
 * Each function takes a connection from store_acquire().
 */
#ifndef PERFCAST_STORE_SEARCH_RUNS_H
#define PERFCAST_STORE_SEARCH_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/queued_run.h"

/* A search's row (store/queued_run.h): kind "configurations" or "advice",
 * request {"query":{...},"body":{...}}, no profile_id; freed by
 * store_queued_run_free(). */
typedef store_queued_run store_search_run;

/* Inserts a queued run (fills id and the rest) and wakes the workers (at
 * COMMIT, or at once outside a transaction). */
int store_search_run_add(PGconn *c, store_search_run *r, store_error *err);
/* Run id of experiment exp of tenant; unknown -> STORE_NOT_FOUND. */
int store_search_run_get(PGconn *c, int64_t tenant, int64_t exp, int64_t id,
                         store_search_run *out, store_error *err);
/* Takes the oldest claimable run for worker: queued, or running with its
 * lease over (running now, attempts + 1, leased lease_seconds); runs whose
 * third attempt's lease ran out are failed first. None -> STORE_NOT_FOUND. */
int store_search_run_claim(PGconn *c, const char *worker, double lease_seconds,
                           store_search_run *out, store_error *err);
/* Extends the lease of run id held by (worker, attempt); not held any more
 * -> STORE_CONFLICT. */
int store_search_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                               double lease_seconds, store_error *err);
/* Records the outcome of a claimed run held by (worker, attempt): result
 * (done) or error (failed); a run no longer held is left as it is. */
int store_search_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                            const char *result, const char *error, store_error *err);

#endif
