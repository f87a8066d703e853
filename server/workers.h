/*
 * workers.h — the background worker pool of `perfcast serve`: the threads
 * that will claim jobs from the store (FOR UPDATE SKIP LOCKED), aggregate
 * and fit, and write model sets back.
 *
 * Where it sits in the process (server/cmd_serve.c):
 *   1. configuration, log, store pool, API context
 *   2. migrations applied                  -> srv_workers_start()
 *   3. HTTP daemon serving ...
 *   4. SIGINT/SIGTERM: HTTP drained and stopped -> srv_workers_stop()
 *   5. store pool closed
 * so workers always find the schema in place, and the store outlives them.
 * Stop must return only once every worker thread has finished.
 *
 * No job kinds exist yet, so start launches no threads; the struct is where
 * the threads, their wake-up condition and per-thread state belong.
 */
#ifndef PERFCAST_SERVER_WORKERS_H
#define PERFCAST_SERVER_WORKERS_H

#include <stddef.h>

#include "server/log.h"
#include "store/db.h"

typedef struct srv_workers {
    int nthreads; /* configured (PERFCAST_WORKERS) */
    int running;  /* threads started */
    store *db;
    srv_log *log;
} srv_workers;

/* Starts up to nthreads workers over db, job claims leased for
 * lease_seconds (<= 0: a default). Returns 0, or -1 with err and nothing
 * left running. */
int srv_workers_start(srv_workers *w, int nthreads, double lease_seconds, store *db, srv_log *log,
                      char *err, size_t errcap);
/* Stops them and waits; safe on a pool that never started. */
void srv_workers_stop(srv_workers *w);

#endif
