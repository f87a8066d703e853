/*
 * workers.c — the background worker pool (see server/workers.h). No job
 * kinds exist yet: start records its inputs and launches nothing.
 */
#include <string.h>

#include "server/workers.h"

int srv_workers_start(srv_workers *w, int nthreads, double lease_seconds, store *db, srv_log *log,
                      char *err, size_t errcap)
{
    (void)lease_seconds;
    (void)err;
    (void)errcap;
    memset(w, 0, sizeof *w);
    w->nthreads = nthreads;
    w->db = db;
    w->log = log;
    return 0;
}

void srv_workers_stop(srv_workers *w)
{
    w->running = 0;
}
