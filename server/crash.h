/*
 * crash.h — a job that crashes its worker fails at once, naming the cause.
 *
 * The worker threads run refits, and queued simulation runs, trace analyses
 * and configuration searches (run_loop_hooks), in the server's process: an input that made
 * the process crash (a fault in numeric code, an abort) would kill it, and
 * after each restart the job would be claimed again and kill it again until
 * its attempts ran out. Each worker thread says which job it is on and what
 * it is doing (srv_crash_enter, srv_crash_note: memory only, per thread);
 * srv_crash_install() installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL
 * and SIGABRT which, when the crashing thread was on a job, record that
 * job failed ("the worker process crashed (SIGSEGV) while fitting callpath
 * models, callpath "X"; not retried") on a connection of their own, then
 * let the signal kill the process as it would have.
 *
 * Recording from a crashed process is best effort: the handler gives up
 * after CRASH_RECORD_SECONDS (alarm), and a crash that leaves the heap or
 * libpq unusable records nothing; the job's lease expires then, and its
 * error names the step its worker recorded durably before it
 * (store_job_progress). A process killed from outside (SIGKILL, SIGTERM,
 * the kernel's OOM killer) runs no handler: its jobs are claimed again
 * after their lease, and such a later attempt records each callpath with
 * the job, committed, before it fits it (server/workers.c), so that when the
 * same callpath kills it again the job's error names it (tests/faults.c,
 * "killed refit").
 */
#ifndef PERFCAST_SERVER_CRASH_H
#define PERFCAST_SERVER_CRASH_H

#include "pipeline/run_loop.h"
#include "store/db.h"
#include "store/jobs.h"

/* Once, at the start of `perfcast serve`, before threads start. */
void srv_crash_install(void);

/* The calling thread works on claim of worker (both copied) until
 * srv_crash_leave(). */
void srv_crash_enter(store *db, const store_job_claim *claim, const char *worker);
void srv_crash_leave(void);
/* The same for a queued run (run_loop_hooks.on_claim): run of kind, claimed
 * by worker at attempt, doing what; a crash records it failed through the
 * store's finish function of its kind (store_sim_run_finish,
 * store_it_run_finish, store_search_run_finish). srv_crash_leave() ends it. */
void srv_crash_enter_run(store *db, run_loop_type kind, const char *what, int64_t run,
                         int attempt, const char *worker);

/* What the calling thread's job is doing now (step and callpath copied;
 * callpath may be NULL). Cheap: called before every callpath. */
void srv_crash_note(const char *step, const char *callpath);

#endif
