/*
 * jobs.h — the refit job queue in the jobs table.
 *
 * Uploads queue jobs (store/profiles.c: at most one queued job per
 * experiment; later uploads join it). Workers, in this process or in other
 * replicas sharing the database, claim the oldest claimable job with
 * FOR UPDATE SKIP LOCKED, so one job goes to one worker; a claim is a lease
 * that the worker extends while it works. A job whose lease ran out (its
 * worker died or hung) becomes claimable again while it has attempts left,
 * and failed ("lease expired ...") when it has none.
 *
 * Every change a worker makes to a claimed job names the claim — the worker
 * and the attempt number it got — so a worker that lost its lease to
 * another cannot finish, fail or extend what is now someone else's attempt:
 * those calls answer STORE_CONFLICT.
 */
#ifndef PERFCAST_STORE_JOBS_H
#define PERFCAST_STORE_JOBS_H

#include <stdint.h>

#include "store/db.h"

/* Uploads and requeues notify this channel (delivered at COMMIT). */
#define STORE_JOBS_CHANNEL "perfcast_jobs"

typedef enum store_job_state {
    STORE_JOB_QUEUED = 0,
    STORE_JOB_RUNNING,
    STORE_JOB_DONE,
    STORE_JOB_FAILED,
    STORE_JOB_NSTATES
} store_job_state;

typedef struct store_job {
    int64_t id;
    int64_t experiment_id;
    int state;              /* store_job_state */
    int attempts;           /* claims so far */
    int max_attempts;
    char *error;            /* last failure, NULL when none */
    char worker[128];       /* who holds or last held it; "" when never claimed */
    int64_t model_set_id;   /* 0 until done */
    int model_set_number;   /* its number within the experiment (1, 2, ...); 0 until done */
    /* RFC 3339 UTC; "" when not (yet) set */
    char created_at[40], started_at[40], finished_at[40], lease_until[40];
} store_job;

/* A claim: which job, and the attempt number that fences it. */
typedef struct store_job_claim {
    int64_t job_id;
    int64_t experiment_id;
    int attempt;
} store_job_claim;

const char *store_job_state_name(int state);

/* Queues a refit of experiment exp, or joins the one already queued, and
 * notifies the workers (at COMMIT of the caller's transaction, or at once
 * outside one). The job's id into *job_id. Unknown experiment ->
 * STORE_NOT_FOUND. */
int store_job_enqueue(PGconn *c, int64_t exp, int64_t *job_id, store_error *err);
/* The same for the profiles of one commit (NULL: those without a commit);
 * branch and ci_run (may be NULL) are remembered by the job and its model
 * set. One queued job per experiment and commit. */
int store_job_enqueue_commit(PGconn *c, int64_t exp, const char *commit, const char *branch,
                             const char *ci_run, int64_t *job_id, store_error *err);

/* Job id into *out (free with store_job_free). Unknown -> STORE_NOT_FOUND. */
int store_job_get(PGconn *c, int64_t id, store_job *out, store_error *err);
void store_job_free(store_job *j);

/* Claims the oldest queued job, or a running one whose lease expired, that
 * has attempts left and whose experiment no other job is working on (a
 * running job with a live lease): running, attempts + 1, leased to worker
 * for lease_seconds. Nothing claimable -> STORE_NOT_FOUND. */
int store_job_claim_next(PGconn *c, const char *worker, double lease_seconds,
                         store_job_claim *out, store_error *err);

/* Records what the claim's attempt is doing (what: "fitting callpath
 * models", ...) before it does it, so that an attempt that stops without a
 * word is failed naming it (store_job_reap, and the error kept when the job
 * is claimed again). Lost claim -> STORE_CONFLICT. */
int store_job_progress(PGconn *c, const store_job_claim *claim, const char *worker,
                       const char *what, store_error *err);

/* Extends the lease of a claim to now + lease_seconds. A claim that is no
 * longer this worker's -> STORE_CONFLICT. */
int store_job_heartbeat(PGconn *c, const store_job_claim *claim, const char *worker,
                        double lease_seconds, store_error *err);

/* Marks a claim done with its model set, and the jobs riding with it
 * (store_job_absorb). Lost claim -> STORE_CONFLICT. */
int store_job_done(PGconn *c, const store_job_claim *claim, const char *worker,
                   int64_t model_set_id, store_error *err);

/* Whether the claim's experiment has a queued job the claim could take
 * over (same commit and modeler): *yes 1 or 0. */
int store_job_newer_queued(PGconn *c, const store_job_claim *claim, store_error *err, int *yes);

/* Takes over the claim's queued sibling job(s) (as store_job_newer_queued
 * finds them), in a transaction of its own: they become running riders of
 * the claim (rides_with), in its attempt (attempts and worker follow the
 * claim's, also when it is claimed again), done with its model set or
 * failed with it.
 * Waits for uploads still joining them, so that every upload of a taken
 * job is committed when this returns: a snapshot taken afterwards holds
 * their rows. *n: how many were taken. Lost claim -> STORE_CONFLICT. */
int store_job_absorb(PGconn *c, const store_job_claim *claim, const char *worker, int *n,
                     store_error *err);

/* Records a failed attempt, keeping msg as the job's error. A transient
 * failure with attempts left puts the job back in the queue — unless the
 * experiment has a queued job already (later uploads), which then covers
 * this one's profiles too: this job fails with a note naming it. Otherwise
 * the job fails. *requeued (may be NULL) says which. Jobs riding with it
 * follow: they fail with it, ride with the queued job that covers it, or
 * wait for its next attempt. Lost claim -> STORE_CONFLICT. */
int store_job_fail(PGconn *c, const store_job_claim *claim, const char *worker, const char *msg,
                   int transient, int *requeued, store_error *err);

/* Fails the running jobs whose lease expired with no attempts left (their
 * last worker died or hung), and the jobs riding with them; *n (may be
 * NULL) is how many leaders. */
int store_job_reap(PGconn *c, int *n, store_error *err);

/* Jobs by state: counts[STORE_JOB_QUEUED..STORE_JOB_FAILED]. */
int store_job_counts(PGconn *c, int64_t counts[STORE_JOB_NSTATES], store_error *err);

#endif
