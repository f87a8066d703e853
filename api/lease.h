/*
 * lease.h — keeps the lease of a claimed run alive while a worker thread
 * works on it: a thread of its own renews it every third of the lease
 * (at least every 50 ms) through the run kind's heartbeat, until stopped.
 * Simulation runs (api/simulations.c), trace analyses
 * (api/iteration_http.c) and searches (api/search_runs.c) use it; refit jobs
 * have the workers' listener.
 */
#ifndef PERFCAST_API_LEASE_H
#define PERFCAST_API_LEASE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

/* Renews the lease of run (held by worker at attempt) for seconds; the
 * store's error code (STORE_CONFLICT: not held any more). */
typedef int (*api_lease_beat)(PGconn *c, int64_t run, const char *worker, int attempt,
                              double seconds, store_error *err);

typedef struct api_lease {
    double seconds;
    store *db;
    int64_t run;
    const char *worker;
    int attempt;
    api_lease_beat beat;
    pthread_mutex_t mu;
    pthread_cond_t done_cv;
    int done, started;
    pthread_t thread;
} api_lease;

/* The name a worker thread claims a run of kind ("sim", "it", "search")
 * under: host:pid:kind-thread, as stored with the run. */
void api_lease_worker_name(char *buf, size_t cap, const char *kind);

/* Starts renewing (l's fields above set by the caller). */
void api_lease_start(api_lease *l);
/* Stops renewing and waits for the thread. */
void api_lease_stop(api_lease *l);

#endif
