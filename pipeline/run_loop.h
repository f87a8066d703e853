/*
 * run_loop.h — how a job worker runs one queued run of a kind: simulation
 * runs (api/simulations.c), trace analyses (api/iteration_http.c) and
 * configuration searches and advice (api/search_runs.c). The oldest
 * claimable run is claimed through the kind's store functions under a
 * worker name of its own (host:pid:kind-thread), its lease is renewed from
 * a thread of its own while it runs (every third of the lease, at least
 * every 50 ms, through the kind's heartbeat), the worker's hooks are told
 * (server/crash.h keeps them so that a run that crashes the process fails
 * at once, naming the signal), the kind runs it, and its outcome is
 * recorded by the (worker, attempt) holding it. Each kind gives only what
 * differs, in a run_loop_kind; server/workers.c calls run_loop_next() for
 * each kind in turn when no refit is waiting. Refit jobs have the workers'
 * listener instead.
 */
#ifndef PERFCAST_PIPELINE_RUN_LOOP_H
#define PERFCAST_PIPELINE_RUN_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

typedef enum run_loop_type { RUN_LOOP_SIMULATION, RUN_LOOP_ITERATION, RUN_LOOP_SEARCH } run_loop_type;

/* What a job worker is told about the runs; any member may be NULL, hooks
 * itself too. on_claim is called once a run is claimed, before it is run,
 * with what the worker is doing (for a crash's message), on_release after
 * it; test_hook (NULL in production; server/test_hooks.h) is called at the
 * named points of a kind's run (run_loop_kind.test_points). */
typedef struct run_loop_hooks {
    void (*on_claim)(store *db, run_loop_type type, const char *what, int64_t run, int attempt,
                     const char *worker);
    void (*on_release)(void);
    int (*test_hook)(const char *point, const char *detail);
} run_loop_hooks;

/* The claimed run as the loop sees it: its id, the attempt it is, and what
 * the worker is doing on it ("simulating", ...: a string that outlives the
 * run). */
typedef struct run_loop_held {
    int64_t id;
    int attempt;
    const char *what;
} run_loop_held;

typedef struct run_loop_kind {
    const char *name;   /* in the worker's name: "sim", "it", "search" */
    run_loop_type type; /* what on_claim is told */
    size_t row_size;    /* the size of the kind's run struct (row below) */
    /* Claims the oldest claimable run for worker, leased lease_seconds,
     * into row (zeroed) and *held; none -> STORE_NOT_FOUND. */
    int (*claim)(PGconn *c, const char *worker, double lease_seconds, void *row,
                 run_loop_held *held, store_error *err);
    /* Renews the lease of run (held by worker at attempt) for seconds;
     * STORE_CONFLICT: not held any more. */
    int (*heartbeat)(PGconn *c, int64_t run, const char *worker, int attempt, double seconds,
                     store_error *err);
    /* Calls test_hook at the kind's named points once a run is claimed
     * (may be NULL). */
    void (*test_points)(const void *row, int (*test_hook)(const char *point, const char *detail));
    /* Runs the claimed run: its result text, or NULL with *error the text
     * kept as its error (both malloc'd). */
    char *(*run)(store *db, const void *row, char **error);
    /* Records result (done) or error (failed) for the run held by (worker,
     * attempt); a run no longer held is left as it is (STORE_OK). */
    int (*finish)(PGconn *c, int64_t run, const char *worker, int attempt, const char *result,
                  const char *error, store_error *err);
    /* Frees what the claim left in row (not row itself). */
    void (*release)(void *row);
} run_loop_kind;

/* Runs the oldest queued run of kind (lease_seconds <= 0: 30): 1 one ran
 * (done or failed), 0 none was queued, -1 the database is away (or its
 * outcome could not be recorded). */
int run_loop_next(store *db, double lease_seconds, const run_loop_kind *kind,
                  const run_loop_hooks *hooks);

#endif
