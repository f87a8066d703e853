/*
 * queued_run.h — the row of a run queued for the job workers in a table of
 * the shape that trace analyses (iteration_runs, store/iteration_runs.h)
 * and configuration searches (search_runs, store/search_runs.h) share: the
 * struct read from its columns, and the steps their queries share (reading
 * the one row a query returns, taking an inserted row, claiming, renewing
 * the lease). Each table's file keeps its SQL text, as a literal, and
 * passes it here; parameters are bound, never written into the text.
 */
#ifndef PERFCAST_STORE_QUEUED_RUN_H
#define PERFCAST_STORE_QUEUED_RUN_H

#include <stdint.h>

#include "store/db.h"

typedef struct store_queued_run {
    int64_t id, tenant_id, experiment_id; /* experiment 0: none (a tenant's overhead-set) */
    int64_t profile_id; /* the trace a trace analysis reads; 0 for a search */
    char kind[16];      /* the table's kinds (its header) */
    char state[12];     /* queued | running | done | failed */
    int attempts;
    char *request;      /* JSON text */
    char *result;       /* JSON text, NULL unless done */
    char *error;        /* JSON text (a problem document), NULL unless failed */
    char created_at[40], started_at[40], finished_at[40];
} store_queued_run;

/* The columns a query returns, in this order: id, tenant_id, experiment_id,
 * [profile_id,] kind, state, attempts, request, result, error, created_at,
 * started_at, finished_at (the times as text). */

/* The one row of res (cleared) into *out; no row -> STORE_NOT_FOUND with
 * what as the message. */
int store_queued_run_one(PGconn *c, PGresult *res, store_queued_run *out, const char *what,
                         store_error *err);
/* The row res of an INSERT of r (cleared) into *r; r->request is kept on
 * failure and freed on success, where the row's copy replaces it. */
int store_queued_run_added(PGconn *c, PGresult *res, store_queued_run *r, store_error *err);
/* Runs reap_sql (no parameters: fails the runs whose last attempt's lease
 * ran out), then claim_sql ($1 worker, $2 the lease in seconds) and reads
 * the run it returns into *out; none -> STORE_NOT_FOUND with what. */
int store_queued_run_claim(PGconn *c, const char *reap_sql, const char *claim_sql,
                           const char *worker, double lease_seconds, store_queued_run *out,
                           const char *what, store_error *err);
/* Runs sql (store_run_update's parameters, $4 the lease in seconds) to
 * renew the lease of run id held by (worker, attempt); not held any more
 * -> STORE_CONFLICT. */
int store_queued_run_heartbeat(PGconn *c, const char *sql, int64_t id, const char *worker,
                               int attempt, double lease_seconds, store_error *err);
void store_queued_run_free(store_queued_run *r);

#endif
