/*
 * workers.h — the background worker pool of `perfcast serve`: threads,
 * separate from the HTTP threads, that claim refit jobs from the store
 * (FOR UPDATE SKIP LOCKED), run refit_run() on them while their lease is
 * kept alive, and record the outcome.
 *
 * Where it sits in the process (server/cmd_serve.c):
 *   1. configuration, log, store pool, API context
 *   2. migrations applied                  -> srv_workers_start()
 *   3. HTTP daemon serving ...
 *   4. SIGINT/SIGTERM: HTTP drained and stopped -> srv_workers_stop()
 *   5. store pool closed
 * so workers always find the schema in place, and the store outlives them.
 *
 * Threads: nthreads workers plus one listener. The listener holds its own
 * connection (not a pool slot) that LISTENs on perfcast_jobs and wakes the
 * workers on each notification; workers also look for work once a second
 * on their own, so a lost notification (listener reconnecting, another
 * replica's commit during that time) delays a job by at most that second. The listener also
 * extends the leases of the jobs this process works on (every third of the
 * lease) and fails jobs whose lease expired with no attempts left.
 *
 * Stop lets each worker finish the job it is on (its lease is kept alive
 * meanwhile), then returns once every thread has ended. A process killed
 * outright leaves its jobs to the lease: once it runs out, any replica
 * claims them again.
 */
#ifndef PERFCAST_SERVER_WORKERS_H
#define PERFCAST_SERVER_WORKERS_H

#include <pthread.h>
#include <stddef.h>

#include "server/log.h"
#include "api/metrics.h"
#include "store/db.h"

#define SRV_WORKERS_LEASE_DEFAULT 30.0 /* seconds (PERFCAST_JOB_LEASE) */

typedef struct srv_worker srv_worker;

typedef struct srv_workers {
    int nthreads;         /* configured (PERFCAST_WORKERS) */
    int running;          /* worker threads started */
    double lease;         /* seconds a claim lasts without a heartbeat */
    store *db;
    srv_log *log;
    srv_worker *slots;    /* nthreads */
    pthread_t listener;
    int listener_started;
    int stop_pipe[2];     /* written once by stop: wakes the listener */
    pthread_mutex_t mu;   /* guards the fields below and the slots' claims */
    pthread_cond_t wake;
    unsigned long generation; /* bumped on every notification */
    int stopping;
    api_histogram fit_seconds;     /* durations of refits, by outcome */
    api_histogram fit_failed_seconds;
} srv_workers;

/* Starts nthreads workers (0: none, the pool only idles) and the listener
 * over db, claims leased for lease_seconds (<= 0: the default). Returns 0,
 * or -1 with err and nothing left running. */
int srv_workers_start(srv_workers *w, int nthreads, double lease_seconds, store *db, srv_log *log,
                      char *err, size_t errcap);
/* Stops them and waits (a worker first finishes its current job); safe on a
 * pool that never started. */
void srv_workers_stop(srv_workers *w);

/* /metrics collector (api/metrics.h): perfcast_fit_duration_seconds, a
 * histogram of refit durations by outcome. arg is the srv_workers. */
void srv_workers_metrics(void *arg, FILE *out);

#endif
