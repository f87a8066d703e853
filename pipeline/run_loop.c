/*
 * run_loop.c — one queued run of a kind, claimed, leased, run and finished
 * (run_loop.h), with the lease keeper: a thread that renews the run's lease
 * until the run is over.
 */
#include "pipeline/run_loop.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct lease {
    double seconds;
    store *db;
    int64_t run;
    const char *worker;
    int attempt;
    int (*beat)(PGconn *c, int64_t run, const char *worker, int attempt, double seconds,
                store_error *err);
    pthread_mutex_t mu;
    pthread_cond_t done_cv;
    int done, started;
    pthread_t thread;
} lease;

static void *keeper(void *arg)
{
    lease *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double every = l->seconds / 3 > 0.05 ? l->seconds / 3 : 0.05;
        long long ns = until.tv_nsec + (long long)(every * 1e9);
        until.tv_sec += (time_t)(ns / 1000000000);
        until.tv_nsec = (long)(ns % 1000000000);
        while (!l->done && pthread_cond_timedwait(&l->done_cv, &l->mu, &until) != ETIMEDOUT)
            ;
        if (l->done)
            break;
        pthread_mutex_unlock(&l->mu);
        store_error err;
        PGconn *c = store_acquire(l->db, &err);
        if (c)
            l->beat(c, l->run, l->worker, l->attempt, l->seconds, &err);
        store_release(l->db, c);
        pthread_mutex_lock(&l->mu);
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

/* Starts renewing (l's fields above set by the caller). */
static void lease_start(lease *l)
{
    l->done = 0;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->done_cv, NULL);
    l->started = pthread_create(&l->thread, NULL, keeper, l) == 0;
}

/* Stops renewing and waits for the thread. */
static void lease_stop(lease *l)
{
    if (l->started) {
        pthread_mutex_lock(&l->mu);
        l->done = 1;
        pthread_cond_signal(&l->done_cv);
        pthread_mutex_unlock(&l->mu);
        pthread_join(l->thread, NULL);
    }
    pthread_cond_destroy(&l->done_cv);
    pthread_mutex_destroy(&l->mu);
    l->started = 0;
}

/* The name the calling thread claims a run of kind under:
 * host:pid:kind-thread, as stored with the run. */
static void worker_name(char *buf, size_t cap, const char *kind)
{
    char host[64] = "";
    if (gethostname(host, sizeof host - 1))
        snprintf(host, sizeof host, "host");
    snprintf(buf, cap, "%s:%ld:%s-%lx", host, (long)getpid(), kind, (unsigned long)pthread_self());
}

/* Runs the run claimed into row, its lease renewed meanwhile, and records
 * its outcome: 1, or -1 when that could not be recorded. */
static int run_held(store *db, double lease_seconds, const run_loop_kind *kind,
                    const run_loop_hooks *hooks, const char *worker, void *row,
                    const run_loop_held *h)
{
    lease l = {.seconds = lease_seconds, .db = db, .run = h->id, .worker = worker,
               .attempt = h->attempt, .beat = kind->heartbeat};
    lease_start(&l);
    if (hooks && hooks->on_claim)
        hooks->on_claim(db, kind->type, h->what, h->id, h->attempt, worker);
    if (hooks && hooks->test_hook && kind->test_points) /* tests: crashed, killed or held */
        kind->test_points(row, hooks->test_hook);
    char *error = NULL, *result = kind->run(db, row, &error);
    if (hooks && hooks->on_release)
        hooks->on_release();
    lease_stop(&l);
    /* a lease lost meanwhile: the run is another worker's now, left as it is */
    store_error err;
    PGconn *c = store_acquire(db, &err);
    int rc = c ? kind->finish(c, h->id, worker, h->attempt, result, result ? NULL : error, &err)
               : -1;
    store_release(db, c);
    free(result);
    free(error);
    return rc ? -1 : 1;
}

int run_loop_next(store *db, double lease_seconds, const run_loop_kind *kind,
                  const run_loop_hooks *hooks)
{
    if (lease_seconds <= 0)
        lease_seconds = 30; /* the workers' default */
    char worker[128];
    worker_name(worker, sizeof worker, kind->name);
    void *row = calloc(1, kind->row_size);
    store_error err;
    PGconn *c = row ? store_acquire(db, &err) : NULL;
    if (!c) {
        free(row);
        return -1;
    }
    run_loop_held h = {0};
    int rc = kind->claim(c, worker, lease_seconds, row, &h, &err);
    store_release(db, c);
    if (rc == STORE_OK)
        rc = run_held(db, lease_seconds, kind, hooks, worker, row, &h);
    else
        rc = rc == STORE_NOT_FOUND ? 0 : -1;
    kind->release(row);
    free(row);
    return rc;
}
