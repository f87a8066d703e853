/*
 * workers.c — the worker pool (see server/workers.h).
 *
 * Worker thread: claim (pool connection, taken only for the statement) ->
 * refit_run_job() (which records the job done in the transaction of its
 * model set; each new step of it is recorded with the job first, and the
 * thread's crash record (server/crash.h) follows every callpath, so that a
 * refit that crashes the process fails its job naming the callpath instead
 * of being claimed again) -> or fail (a short-lived pool connection) -> claim
 * again at once; when nothing is claimable, wait on the condition variable
 * for the listener's next notification or one second, whichever is first.
 * A worker publishes its current claim in its slot so that the listener can
 * extend the lease; the claim's attempt number fences every update, so a
 * worker that lost its lease cannot overwrite the new holder's attempt.
 *
 * Listener thread: a connection of its own (store_connect(), outside the
 * pool, so that it never takes a slot requests or refits wait for), LISTEN
 * perfcast_jobs, poll() on its socket and on the stop pipe with a timeout
 * that falls due at the next heartbeat. A broken connection is closed and
 * opened again a second later; after reconnecting, workers are woken once,
 * since notifications sent meanwhile were lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/handlers.h"
#include "common/memtrim.h"
#include "pipeline/refit.h"
#include "server/crash.h"
#include "server/test_hooks.h"
#include "server/workers.h"
#include "store/idempotency.h"
#include "store/jobs.h"

#define POLL_SECONDS 1      /* workers look for work at least this often */
#define FINISH_TRIES 10     /* recording an outcome while the database is away */

struct srv_worker {
    srv_workers *pool;
    int index;
    pthread_t thread;
    char name[128];         /* jobs.worker: host/pid/index */
    int busy;               /* holds claim (guarded by pool->mu) */
    int claim_failing;      /* the last claim failed: log only the first of a run */
    store_job_claim claim;
    _Atomic int cancel;     /* set by the heartbeat when the job is no longer ours
                               (deleted with its experiment, or its lease lost) */
    char step[64];          /* the refit's step last recorded with the job */
    int careful;            /* an attempt after one that died without a word: each
                               callpath is recorded with the job before it is fitted */
    PGconn *progress;       /* its own connection for recording steps (store_connect):
                               a refit holds a pool connection already, and one
                               from the pool could wait behind requests */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int stopping(srv_workers *w)
{
    pthread_mutex_lock(&w->mu);
    int s = w->stopping;
    pthread_mutex_unlock(&w->mu);
    return s;
}

/* Wakes every idle worker: a notification may mean several jobs. */
static void wake_all(srv_workers *w)
{
    pthread_mutex_lock(&w->mu);
    w->generation++;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->mu);
}

/* Waits for a wake-up newer than gen, stop, or POLL_SECONDS. */
static void wait_for_work(srv_workers *w, unsigned long gen)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += POLL_SECONDS;
    pthread_mutex_lock(&w->mu);
    while (!w->stopping && w->generation == gen)
        if (pthread_cond_timedwait(&w->wake, &w->mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&w->mu);
}

/* Claims one job into me->claim. 1 claimed, 0 none, -1 database trouble. */
static int claim(srv_worker *me)
{
    srv_workers *w = me->pool;
    store_error err = {0};
    PGconn *c = store_acquire(w->db, &err);
    int rc = c ? store_job_claim_next(c, me->name, w->lease, &me->claim, &err) : err.code;
    store_release(w->db, c);
    if (rc == STORE_OK || rc == STORE_NOT_FOUND) {
        if (me->claim_failing)
            srv_logf(w->log, SRV_LOG_INFO, "claiming jobs again", "{s:s}", "worker", me->name);
        me->claim_failing = 0;
        return rc == STORE_OK;
    }
    if (!me->claim_failing)
        srv_logf(w->log, rc == STORE_UNAVAILABLE ? SRV_LOG_WARN : SRV_LOG_ERROR,
                 "cannot claim a job", "{s:s, s:s}", "worker", me->name, "error", err.msg);
    me->claim_failing = 1;
    return -1;
}

/* Records the outcome of me->claim: failed (a refit that succeeded recorded
 * its job done with its model set already; it is only logged). Retries
 * while the database is unreachable; gives up to the lease after that. */
static void finish(srv_worker *me, int outcome, int64_t model_set, const char *msg)
{
    srv_workers *w = me->pool;
    for (int tries = 0;; tries++) {
        store_error err = {0};
        int requeued = 0;
        PGconn *c = outcome == REFIT_OK ? NULL : store_acquire(w->db, &err);
        int rc = outcome == REFIT_OK ? STORE_OK
                 : !c ? err.code
                      : store_job_fail(c, &me->claim, me->name, msg, outcome == REFIT_TRANSIENT,
                                       &requeued, &err);
        if (c)
            store_release(w->db, c);
        if (rc == STORE_OK) {
            if (outcome == REFIT_OK)
                srv_logf(w->log, SRV_LOG_INFO, "job done", "{s:I, s:I, s:i, s:I, s:s}", "job",
                         (json_int_t)me->claim.job_id, "experiment",
                         (json_int_t)me->claim.experiment_id, "attempt", me->claim.attempt,
                         "model_set", (json_int_t)model_set, "worker", me->name);
            else
                srv_logf(w->log, SRV_LOG_WARN, requeued ? "job attempt failed, queued again"
                                                        : "job failed",
                         "{s:I, s:I, s:i, s:s, s:s}", "job", (json_int_t)me->claim.job_id,
                         "experiment", (json_int_t)me->claim.experiment_id, "attempt",
                         me->claim.attempt, "error", msg, "worker", me->name);
            return;
        }
        if (rc != STORE_UNAVAILABLE || tries + 1 >= FINISH_TRIES) {
            srv_logf(w->log, SRV_LOG_ERROR, "cannot record a job's outcome; its lease decides",
                     "{s:I, s:i, s:s, s:s}", "job", (json_int_t)me->claim.job_id, "attempt",
                     me->claim.attempt, "error", err.msg, "worker", me->name);
            return;
        }
        sleep_s(1);
    }
}

/* The refit's progress (pipeline/refit.h): the crash record of this thread
 * follows every callpath (memory only); a new step is recorded with the job
 * first (store_job_progress, committed before the step starts), so that a
 * worker that dies without a word (SIGKILL, the kernel's OOM killer, a crash
 * its handler could not record) leaves the step it died in. An attempt
 * after such a death (attempt > 1) is careful: it records each callpath too,
 * committed before that callpath is fitted, so that a second death names
 * the callpath that killed it. The first attempt does not pay a round trip
 * per callpath: its crash handler (server/crash.h) names the callpath of a
 * crash it sees. */
static void on_progress(void *arg, const char *step, const char *callpath)
{
    srv_worker *me = arg;
    srv_crash_note(step, callpath);
    int named = me->careful && callpath && !strcmp(step, REFIT_STEP_CALLPATH);
    if (strcmp(me->step, step) || named) {
        snprintf(me->step, sizeof me->step, "%s", step);
        char what[640];
        if (named)
            snprintf(what, sizeof what, "%s, callpath \"%.512s\"", step, callpath);
        else
            snprintf(what, sizeof what, "%s", step);
        store_error err = {0};
        if (me->progress && PQstatus(me->progress) != CONNECTION_OK) {
            PQfinish(me->progress);
            me->progress = NULL;
        }
        if (!me->progress && (me->progress = store_connect(me->pool->db, &err))) {
            /* a step is recorded against this process's death, not the
             * database's: no wait for the WAL flush */
            PQclear(PQexec(me->progress, "SET synchronous_commit TO off"));
        }
        if (!me->progress ||
            store_job_progress(me->progress, &me->claim, me->name, what, &err))
            srv_logf(me->pool->log, SRV_LOG_DEBUG, "cannot record a job's step",
                     "{s:I, s:s, s:s}", "job", (json_int_t)me->claim.job_id, "step", step,
                     "error", err.msg);
    }
    srv_test_hook_fit(step, callpath);
}

static void run_job(srv_worker *me)
{
    srv_workers *w = me->pool;
    pthread_mutex_lock(&w->mu);
    me->busy = 1;
    pthread_mutex_unlock(&w->mu);
    srv_logf(w->log, SRV_LOG_INFO, "job started", "{s:I, s:I, s:i, s:s}", "job",
             (json_int_t)me->claim.job_id, "experiment", (json_int_t)me->claim.experiment_id,
             "attempt", me->claim.attempt, "worker", me->name);
    int64_t set = 0;
    char msg[512] = "";
    double t0 = now_s();
    me->cancel = 0;
    me->step[0] = '\0';
    me->careful = me->claim.attempt > 1;
    refit_progress progress = {on_progress, me};
    srv_crash_enter(w->db, &me->claim, me->name);
    int outcome = refit_run_job(w->db, &me->claim, me->name, &set, msg, sizeof msg, &me->cancel,
                                &progress);
    srv_crash_leave();
    if (outcome == REFIT_CANCELLED || (outcome != REFIT_OK && me->cancel)) {
        /* the job's row is gone or another worker's: nothing to record */
        srv_logf(w->log, SRV_LOG_INFO, "job cancelled", "{s:I, s:I, s:f, s:s}", "job",
                 (json_int_t)me->claim.job_id, "experiment", (json_int_t)me->claim.experiment_id,
                 "seconds", now_s() - t0, "worker", me->name);
        pthread_mutex_lock(&w->mu);
        me->busy = 0;
        pthread_mutex_unlock(&w->mu);
        memtrim();
        return;
    }
    if (outcome != REFIT_OK && outcome != REFIT_TRANSIENT)
        outcome = REFIT_FAILED;
    if (outcome != REFIT_OK && !*msg)
        snprintf(msg, sizeof msg, "refit failed without a reason");
    srv_logf(w->log, SRV_LOG_DEBUG, "refit finished", "{s:I, s:f, s:i}", "job",
             (json_int_t)me->claim.job_id, "seconds", now_s() - t0, "outcome", outcome);
    double took = now_s() - t0;
    finish(me, outcome, set, msg);
    pthread_mutex_lock(&w->mu);
    me->busy = 0;
    api_histogram_observe(outcome == REFIT_OK ? &w->fit_seconds : &w->fit_failed_seconds, took);
    pthread_mutex_unlock(&w->mu);
    /* a refit's memory is freed, but glibc keeps the pages of its arenas
     * (this thread's arena top whole): give them back so the process
     * returns to its size between jobs */
    memtrim();
}

/* The queued runs of the loop below keep this thread's crash record
 * (server/crash.h) as refits do. */
static const run_loop_hooks run_hooks = {srv_crash_enter_run, srv_crash_leave, srv_test_hook};

static void *worker_main(void *arg)
{
    srv_worker *me = arg;
    srv_workers *w = me->pool;
    while (!stopping(w)) {
        pthread_mutex_lock(&w->mu);
        unsigned long gen = w->generation;
        pthread_mutex_unlock(&w->mu);
        int got = claim(me);
        if (got == 1) {
            run_job(me);
            continue; /* there may be more: claim again before waiting */
        }
        /* a queued simulation run (api/simulations.c), trace analysis
         * (api/iteration_http.c), configuration search or advice
         * (api/search_runs.c) was done: its memory freed, give glibc's
         * pages back as after a refit */
        if (run_loop_next(w->db, w->lease, &api_sim_runs, &run_hooks) == 1 ||
            run_loop_next(w->db, w->lease, &api_iteration_runs, &run_hooks) == 1 ||
            run_loop_next(w->db, w->lease, &api_search_runs, &run_hooks) == 1) {
            memtrim();
            continue;
        }
        wait_for_work(w, gen);
    }
    PQfinish(me->progress);
    me->progress = NULL;
    return NULL;
}

/* ---- listener ------------------------------------------------------------- */

/* Extends the lease of every job a worker of this process is on. */
static void heartbeat(srv_workers *w, PGconn *c)
{
    for (int i = 0; i < w->nthreads; i++) {
        srv_worker *me = &w->slots[i];
        pthread_mutex_lock(&w->mu);
        int busy = me->busy;
        store_job_claim cl = me->claim;
        pthread_mutex_unlock(&w->mu);
        if (!busy)
            continue;
        if (me->cancel)
            continue; /* told already; the refit stops at its next callpath */
        store_error err = {0};
        int rc = store_job_heartbeat(c, &cl, me->name, w->lease, &err);
        if (rc == STORE_CONFLICT) /* no longer ours (deleted, or the lease lost): stop it */
            me->cancel = 1;
        else if (rc)
            srv_logf(w->log, SRV_LOG_WARN, "cannot extend a job's lease", "{s:I, s:s, s:s}",
                     "job", (json_int_t)cl.job_id, "worker", me->name, "error", err.msg);
    }
    store_error err = {0};
    int reaped = 0;
    if (store_job_reap(c, &reaped, &err))
        srv_logf(w->log, SRV_LOG_WARN, "cannot fail expired jobs", "{s:s}", "error", err.msg);
    else if (reaped)
        srv_logf(w->log, SRV_LOG_WARN, "jobs failed: lease expired with no attempts left",
                 "{s:i}", "jobs", reaped);
    int purged = 0; /* Idempotency-Keys past PERFCAST_IDEMPOTENCY_TTL */
    if (store_idem_purge(c, &purged, &err))
        srv_logf(w->log, SRV_LOG_WARN, "cannot purge expired idempotency keys", "{s:s}", "error",
                 err.msg);
    else if (purged)
        srv_logf(w->log, SRV_LOG_DEBUG, "idempotency keys expired", "{s:i}", "keys", purged);
}

/* A connection of its own that LISTENs, or NULL (logged once per outage). */
static PGconn *listen_conn(srv_workers *w, int *failing)
{
    store_error err = {0};
    PGconn *c = store_connect(w->db, &err);
    PGresult *r = c ? PQexec(c, "LISTEN " STORE_JOBS_CHANNEL) : NULL;
    if (c && PQresultStatus(r) == PGRES_COMMAND_OK) {
        PQclear(r);
        if (*failing)
            srv_logf(w->log, SRV_LOG_INFO, "listening for jobs again", NULL);
        *failing = 0;
        return c;
    }
    if (c)
        store_fail(c, r, &err);
    if (!*failing)
        srv_logf(w->log, SRV_LOG_WARN, "cannot listen for jobs; polling meanwhile", "{s:s}",
                 "error", err.msg);
    *failing = 1;
    PQfinish(c);
    return NULL;
}

static void *listener_main(void *arg)
{
    srv_workers *w = arg;
    PGconn *c = NULL;
    int failing = 0;
    double every = w->lease / 3 > 0.05 ? w->lease / 3 : 0.05;
    double next_beat = now_s();
    for (;;) {
        if (!c && (c = listen_conn(w, &failing)))
            wake_all(w); /* notifications sent while not listening are lost */
        double t = now_s();
        if (c && t >= next_beat) {
            heartbeat(w, c);
            next_beat = t + every;
        }
        double wait = c ? next_beat - now_s() : 1.0;
        if (wait < 0)
            wait = 0;
        if (wait > 1.0)
            wait = 1.0;
        /* poll, not select: with many HTTP connections the socket's number
         * may be past FD_SETSIZE */
        struct pollfd fds[2] = {{.fd = w->stop_pipe[0], .events = POLLIN},
                                {.fd = c ? PQsocket(c) : -1, .events = POLLIN}};
        int n = poll(fds, 2, (int)(wait * 1000) + 1);
        if (n < 0 && errno != EINTR)
            sleep_s(0.1);
        if (n > 0 && (fds[0].revents & POLLIN))
            break;
        if (c && n > 0 && fds[1].fd >= 0 && fds[1].revents) {
            int woke = 0;
            if (!PQconsumeInput(c) || PQstatus(c) != CONNECTION_OK) {
                srv_logf(w->log, SRV_LOG_WARN, "job listener lost its connection",
                         "{s:s}", "error", PQerrorMessage(c));
                PQfinish(c);
                c = NULL;
                continue;
            }
            PGnotify *note;
            while ((note = PQnotifies(c))) {
                woke = 1;
                PQfreemem(note);
            }
            if (woke)
                wake_all(w);
        }
        if (c && PQstatus(c) != CONNECTION_OK) {
            PQfinish(c);
            c = NULL;
        }
    }
    PQfinish(c);
    return NULL;
}

/* ---- start and stop ------------------------------------------------------- */

int srv_workers_start(srv_workers *w, int nthreads, double lease_seconds, store *db, srv_log *log,
                      char *err, size_t errcap)
{
    memset(w, 0, sizeof *w);
    w->nthreads = nthreads > 0 ? nthreads : 0;
    w->lease = lease_seconds > 0 ? lease_seconds : SRV_WORKERS_LEASE_DEFAULT;
    w->db = db;
    w->log = log;
    w->stop_pipe[0] = w->stop_pipe[1] = -1;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (w->nthreads == 0)
        return 0;
    w->slots = calloc((size_t)w->nthreads, sizeof *w->slots);
    if (!w->slots || pipe2(w->stop_pipe, O_CLOEXEC)) {
        snprintf(err, errcap, "cannot set up the workers: %s",
                 w->slots ? strerror(errno) : "out of memory");
        srv_workers_stop(w);
        return -1;
    }
    char host[64] = "";
    if (gethostname(host, sizeof host))
        snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    for (int i = 0; i < w->nthreads; i++) {
        srv_worker *me = &w->slots[i];
        me->pool = w;
        me->index = i;
        snprintf(me->name, sizeof me->name, "%s/%ld/%d", host, (long)getpid(), i);
    }
    int e = pthread_create(&w->listener, NULL, listener_main, w);
    w->listener_started = !e;
    for (int i = 0; !e && i < w->nthreads; i++) {
        e = pthread_create(&w->slots[i].thread, NULL, worker_main, &w->slots[i]);
        w->running += !e;
    }
    if (e) {
        snprintf(err, errcap, "cannot start a worker thread: %s", strerror(e));
        srv_workers_stop(w);
        return -1;
    }
    srv_logf(log, SRV_LOG_INFO, "workers started", "{s:i, s:f}", "workers", w->nthreads,
             "lease_seconds", w->lease);
    return 0;
}

void srv_workers_stop(srv_workers *w)
{
    if (!w->db) /* never started */
        return;
    pthread_mutex_lock(&w->mu);
    w->stopping = 1;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->mu);
    /* workers first: the listener keeps their leases alive until they end */
    for (int i = 0; i < w->running; i++)
        pthread_join(w->slots[i].thread, NULL);
    if (w->listener_started) {
        ssize_t n;
        do
            n = write(w->stop_pipe[1], "x", 1);
        while (n < 0 && errno == EINTR);
        pthread_join(w->listener, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (w->stop_pipe[i] >= 0)
            close(w->stop_pipe[i]);
    free(w->slots);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->mu);
    memset(w, 0, sizeof *w);
}

void srv_workers_metrics(void *arg, FILE *out)
{
    srv_workers *w = arg;
    api_histogram ok, failed;
    pthread_mutex_lock(&w->mu);
    ok = w->fit_seconds;
    failed = w->fit_failed_seconds;
    pthread_mutex_unlock(&w->mu);
    fputs("# HELP perfcast_fit_duration_seconds Duration of refits (aggregate, fit, write), by "
          "outcome.\n# TYPE perfcast_fit_duration_seconds histogram\n",
          out);
    api_histogram_write(&ok, out, "perfcast_fit_duration_seconds", "outcome=\"done\"");
    api_histogram_write(&failed, out, "perfcast_fit_duration_seconds", "outcome=\"failed\"");
}
