/*
 * crash.c — recording the job a crashing worker thread was on (see crash.h).
 *
 * The per-thread record is a _Thread_local struct written by its own thread
 * only, and read by the signal handler on that same thread (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL and abort()'s SIGABRT are delivered to the thread that
 * caused them), so no lock is involved. The handler runs once (SA_RESETHAND:
 * a second fault inside it kills the process), arms an alarm so that a
 * handler stuck on a lock the crash left held ends the process too, records
 * the failure through store_job_fail() on a connection of its own, and
 * raises the signal again with its default action.
 */
#include "server/crash.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "store/iteration_runs.h"
#include "store/search_runs.h"
#include "store/simulations.h"

#define CRASH_RECORD_SECONDS 10

typedef struct crash_job {
    int active; /* 1 a refit job (claim), 2 a queued run (kind, run, attempt) */
    run_loop_type kind;
    int64_t run;
    int attempt;
    store *db;
    store_job_claim claim;
    char worker[128];
    char step[64];
    char callpath[512];
} crash_job;

static _Thread_local crash_job current;

void srv_crash_enter(store *db, const store_job_claim *claim, const char *worker)
{
    current.db = db;
    current.claim = *claim;
    snprintf(current.worker, sizeof current.worker, "%s", worker);
    current.step[0] = current.callpath[0] = '\0';
    current.active = 1;
}

void srv_crash_enter_run(store *db, run_loop_type kind, const char *what, int64_t run,
                         int attempt, const char *worker)
{
    current.db = db;
    current.kind = kind;
    current.run = run;
    current.attempt = attempt;
    snprintf(current.worker, sizeof current.worker, "%s", worker);
    snprintf(current.step, sizeof current.step, "%s", what ? what : "");
    current.callpath[0] = '\0';
    current.active = 2;
}

void srv_crash_leave(void)
{
    current.active = 0;
}

void srv_crash_note(const char *step, const char *callpath)
{
    snprintf(current.step, sizeof current.step, "%s", step ? step : "");
    snprintf(current.callpath, sizeof current.callpath, "%s", callpath ? callpath : "");
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV:
        return "SIGSEGV";
    case SIGBUS:
        return "SIGBUS";
    case SIGFPE:
        return "SIGFPE";
    case SIGILL:
        return "SIGILL";
    case SIGABRT:
        return "SIGABRT";
    default:
        return "a signal";
    }
}

static void say(const char *text)
{
    ssize_t n = write(STDERR_FILENO, text, strlen(text));
    (void)n;
}

/* A queued run's failure through its kind's finish function: a simulation
 * run keeps its error as text, a trace analysis or a search as the problem
 * document its GET shows. */
static int record_run(PGconn *c, const crash_job *j, const char *msg, store_error *err)
{
    if (j->kind == RUN_LOOP_SIMULATION)
        return store_sim_run_finish(c, j->run, j->worker, j->attempt, NULL, msg, err);
    char doc[1536];
    snprintf(doc, sizeof doc,
             "{\"type\":\"about:blank\",\"title\":\"Internal Server Error\",\"status\":500,"
             "\"detail\":\"%s\"}",
             msg); /* msg holds no quote nor backslash: a signal's name and fixed words */
    if (j->kind == RUN_LOOP_ITERATION)
        return store_it_run_finish(c, j->run, j->worker, j->attempt, NULL, doc, err);
    return store_search_run_finish(c, j->run, j->worker, j->attempt, NULL, doc, err);
}

static void record(int sig)
{
    crash_job *j = &current;
    char msg[1280];
    snprintf(msg, sizeof msg,
             "the worker process crashed (%s) during attempt %d while %s%s%s%s; not retried: "
             "the same input would crash it again",
             signal_name(sig), j->active == 2 ? j->attempt : j->claim.attempt,
             j->step[0] ? j->step : "refitting", j->callpath[0] ? ", callpath \"" : "",
             j->callpath, j->callpath[0] ? "\"" : "");
    say("perfcast: ");
    say(msg);
    say("\n");
    store_error err = {0};
    PGconn *c = store_connect(j->db, &err);
    if (!c) {
        say("perfcast: cannot record the crash: the database is unreachable\n");
        return;
    }
    int rc = j->active == 2 ? record_run(c, j, msg, &err)
                            : store_job_fail(c, &j->claim, j->worker, msg, 0, NULL, &err);
    if (rc != STORE_OK) {
        say("perfcast: cannot record the crash: ");
        say(err.msg);
        say("\n");
    }
    PQfinish(c);
}

static void on_crash(int sig)
{
    if (current.active) {
        alarm(CRASH_RECORD_SECONDS);
        record(sig);
        current.active = 0;
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

void srv_crash_install(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}
