/*
 * jobs.c — SQL for the job queue (see store/jobs.h).
 *
 * A claim is one short transaction: the oldest claimable job is selected
 * FOR UPDATE SKIP LOCKED, so concurrent claimers (threads or replicas) each
 * lock a different row, and a row locked by an upload that is joining the
 * queued job is skipped until that upload commits. One experiment is refit
 * by one worker at a time (two refits at once would race for the next model
 * set number and waste the work): the claimer then locks the experiment row
 * (FOR NO KEY UPDATE, which uploads' KEY SHARE does not wait for) and, in a
 * new statement and so a new snapshot, checks that no other job of the
 * experiment is running with a live lease; if one is, the candidate is
 * skipped and stays queued. Changes to a claimed job are fenced by (worker,
 * attempts): once another worker re-claimed an expired lease, the attempt
 * number moved on and the old worker's UPDATE matches no row.
 *
 * Putting a failed job back in the queue can collide with the partial unique
 * index jobs_one_queued when an upload queued a new job for the experiment
 * meanwhile; that job will refit all profiles, so the failed one is closed
 * with a note and its profiles are handed to the queued one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/jobs.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

static const char *const state_names[STORE_JOB_NSTATES] = {"queued", "running", "done", "failed"};

const char *store_job_state_name(int state)
{
    return state >= 0 && state < STORE_JOB_NSTATES ? state_names[state] : "unknown";
}

static int state_from_name(const char *s)
{
    for (int i = 0; i < STORE_JOB_NSTATES; i++)
        if (!strcmp(s, state_names[i]))
            return i;
    return -1;
}

void store_job_free(store_job *j)
{
    if (!j)
        return;
    free(j->error);
    memset(j, 0, sizeof *j);
}

int store_job_get(PGconn *c, int64_t id, store_job *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(c,
                               "SELECT id, experiment_id, state, attempts, max_attempts, error, "
                               "coalesce(worker, ''), coalesce(model_set_id, 0), " TS(
                                   "created_at") ", " TS("started_at") ", " TS(
                                   "finished_at") ", " TS("lease_until") ", "
                               "coalesce((SELECT number FROM model_sets m "
                               "WHERE m.id = jobs.model_set_id), 0) FROM jobs WHERE id = $1",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no job with id %" PRId64, id);
    }
    out->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    out->experiment_id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    out->state = state_from_name(PQgetvalue(r, 0, 2));
    out->attempts = atoi(PQgetvalue(r, 0, 3));
    out->max_attempts = atoi(PQgetvalue(r, 0, 4));
    snprintf(out->worker, sizeof out->worker, "%s", PQgetvalue(r, 0, 6));
    out->model_set_id = strtoll(PQgetvalue(r, 0, 7), NULL, 10);
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, 0, 8));
    snprintf(out->started_at, sizeof out->started_at, "%s", PQgetvalue(r, 0, 9));
    snprintf(out->finished_at, sizeof out->finished_at, "%s", PQgetvalue(r, 0, 10));
    snprintf(out->lease_until, sizeof out->lease_until, "%s", PQgetvalue(r, 0, 11));
    out->model_set_number = atoi(PQgetvalue(r, 0, 12));
    int rc = STORE_OK;
    if (!PQgetisnull(r, 0, 5) && !(out->error = strdup(PQgetvalue(r, 0, 5))))
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    else if (out->state < 0)
        rc = store_error_set(err, STORE_INTERNAL, "job %" PRId64 " has unknown state \"%s\"", id,
                             PQgetvalue(r, 0, 2));
    PQclear(r);
    if (rc)
        store_job_free(out);
    return rc;
}

/* A running job of the experiment whose lease is live, other than $2. */
#define LIVE_SIBLING                                                                       \
    "EXISTS (SELECT 1 FROM jobs r WHERE r.experiment_id = $1 AND r.id <> $2 "               \
    "AND r.state = 'running' AND r.lease_until >= clock_timestamp())"

/* One claim attempt inside the caller's transaction. skip: job ids found
 * unclaimable so far (their experiment is being refit), as a text array
 * literal of numbers. STORE_OK with out filled, STORE_NOT_FOUND when no
 * candidate is left, STORE_CONFLICT when the candidate (*cand) must be
 * skipped. */
static int claim_once(PGconn *c, const char *worker, const char *lease, const char *skip,
                      store_job_claim *out, int64_t *cand, store_error *err)
{
    const char *vals1[] = {skip};
    PGresult *r = PQexecParams(
        c,
        "SELECT j.id, j.experiment_id FROM jobs j "
        "WHERE (j.state = 'queued' OR (j.state = 'running' AND j.lease_until < clock_timestamp())) "
        "AND j.attempts < j.max_attempts AND j.id <> ALL ($1::int8[]) "
        "AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.experiment_id = j.experiment_id "
        "  AND r.id <> j.id AND r.state = 'running' AND r.lease_until >= clock_timestamp()) "
        "ORDER BY j.id FOR UPDATE OF j SKIP LOCKED LIMIT 1",
        1, NULL, vals1, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) == 0) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no claimable job");
    }
    char id[24], exp[24];
    snprintf(id, sizeof id, "%s", PQgetvalue(r, 0, 0));
    snprintf(exp, sizeof exp, "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    *cand = strtoll(id, NULL, 10);
    /* Claims of one experiment queue up here, so the check below sees what
     * a claimer before us committed. (NO KEY UPDATE: uploads, which hold
     * KEY SHARE on the experiment, are not held up.) */
    const char *vals2[] = {exp, id};
    r = PQexecParams(c, "SELECT 1 FROM experiments WHERE id = $1 FOR NO KEY UPDATE", 1, NULL,
                     vals2, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    PQclear(r);
    /* a new statement: a new snapshot, taken after the lock was granted */
    r = PQexecParams(c, "SELECT " LIVE_SIBLING, 2, NULL, vals2, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int busy = !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    if (busy)
        return STORE_CONFLICT;
    const char *vals3[] = {id, worker, lease};
    r = PQexecParams(c,
                     "UPDATE jobs SET state = 'running', attempts = attempts + 1, worker = $2, "
                     "lease_until = clock_timestamp() + make_interval(secs => $3::float8), "
                     "started_at = clock_timestamp(), progress = NULL, "
                     /* an attempt whose lease ran out: say where it stopped */
                     "error = CASE WHEN state = 'running' THEN 'attempt ' || attempts || "
                     "  ': worker ' || coalesce(worker, '?') || ' stopped (lease expired)' || "
                     "  coalesce(' while ' || progress, '') ELSE error END "
                     "WHERE id = $1 "
                     "RETURNING id, experiment_id, attempts",
                     3, NULL, vals3, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return store_fail(c, r, err);
    out->job_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    out->experiment_id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    out->attempt = atoi(PQgetvalue(r, 0, 2));
    PQclear(r);
    /* jobs riding with it (store_job_absorb) are in this attempt too */
    char attempt[16];
    snprintf(attempt, sizeof attempt, "%d", out->attempt);
    const char *vals4[] = {id, attempt, worker};
    r = PQexecParams(c,
                     "UPDATE jobs SET attempts = $2::int, worker = $3 "
                     "WHERE rides_with = $1::bigint AND state = 'running'",
                     3, NULL, vals4, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_job_claim_next(PGconn *c, const char *worker, double lease_seconds,
                         store_job_claim *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    char lease[32];
    snprintf(lease, sizeof lease, "%.3f", lease_seconds);
    PGresult *r = PQexec(c, "BEGIN");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    /* candidates whose experiment turned out busy are skipped, a few times */
    char skip[8 * 24] = "{}";
    int rc = STORE_NOT_FOUND;
    for (int tries = 0; tries < 8; tries++) {
        int64_t cand = 0;
        rc = claim_once(c, worker, lease, skip, out, &cand, err);
        if (rc != STORE_CONFLICT)
            break;
        size_t n = strlen(skip) - 1; /* drop the closing brace */
        snprintf(skip + n, sizeof skip - n, "%s%" PRId64 "}", n > 1 ? "," : "", cand);
        rc = store_error_set(err, STORE_NOT_FOUND, "no claimable job");
    }
    if (rc != STORE_OK && rc != STORE_NOT_FOUND) {
        PQclear(PQexec(c, "ROLLBACK"));
        return rc;
    }
    r = PQexec(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        int frc = store_fail(c, r, err);
        PQclear(PQexec(c, "ROLLBACK"));
        memset(out, 0, sizeof *out);
        return frc;
    }
    PQclear(r);
    if (rc != STORE_OK)
        memset(out, 0, sizeof *out);
    return rc;
}

/* Runs an UPDATE fenced by the claim ($1 id, $2 worker, $3 attempt, then
 * extra); no row matched -> STORE_CONFLICT. */
static int fenced_update(PGconn *c, const char *sql, const store_job_claim *claim,
                         const char *worker, const char *extra, store_error *err)
{
    char id[24], attempt[16];
    snprintf(id, sizeof id, "%" PRId64, claim->job_id);
    snprintf(attempt, sizeof attempt, "%d", claim->attempt);
    const char *vals[] = {id, worker, attempt, extra};
    PGresult *r = PQexecParams(c, sql, extra ? 4 : 3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    if (n == 1)
        return STORE_OK;
    return store_error_set(err, STORE_CONFLICT,
                           "job %" PRId64 " attempt %d is no longer held by %s (lease lost)",
                           claim->job_id, claim->attempt, worker);
}

#define FENCE "WHERE id = $1 AND state = 'running' AND worker = $2 AND attempts = $3"

int store_job_progress(PGconn *c, const store_job_claim *claim, const char *worker,
                       const char *what, store_error *err)
{
    return fenced_update(c, "UPDATE jobs SET progress = $4 " FENCE, claim, worker, what, err);
}

int store_job_heartbeat(PGconn *c, const store_job_claim *claim, const char *worker,
                        double lease_seconds, store_error *err)
{
    char lease[32];
    snprintf(lease, sizeof lease, "%.3f", lease_seconds);
    return fenced_update(c,
                         "UPDATE jobs SET lease_until = now() + make_interval(secs => "
                         "$4::float8) " FENCE,
                         claim, worker, lease, err);
}

/* Runs sql with the job id as $1 and extra as $2 (when not NULL). */
static int exec_job(PGconn *c, const char *sql, int64_t job, const char *extra, store_error *err)
{
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, job);
    const char *vals[] = {id, extra};
    PGresult *r = PQexecParams(c, sql, extra ? 2 : 1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_job_done(PGconn *c, const store_job_claim *claim, const char *worker,
                   int64_t model_set_id, store_error *err)
{
    char set[24];
    snprintf(set, sizeof set, "%" PRId64, model_set_id);
    int rc = fenced_update(c,
                           "UPDATE jobs SET state = 'done', model_set_id = $4, error = NULL, "
                           "lease_until = NULL, finished_at = now() " FENCE,
                           claim, worker, set, err);
    if (!rc)
        rc = exec_job(c,
                      "UPDATE jobs SET state = 'done', model_set_id = $2, error = NULL, "
                      "lease_until = NULL, finished_at = now() "
                      "WHERE rides_with = $1 AND state = 'running'",
                      claim->job_id, set, err);
    return rc;
}

/* The queued jobs of a claim's experiment that the claim can take over:
 * the same commit (the profiles it refits) and the same modeler. $1 is the
 * claim's job. */
#define TAKEABLE                                                                                \
    "SELECT j.id FROM jobs j JOIN jobs me ON me.id = $1 "                                      \
    "WHERE j.experiment_id = me.experiment_id AND j.state = 'queued' AND j.id <> me.id "       \
    "AND j.commit_sha IS NOT DISTINCT FROM me.commit_sha "                                     \
    "AND j.modeler IS NOT DISTINCT FROM me.modeler"

int store_job_newer_queued(PGconn *c, const store_job_claim *claim, store_error *err, int *yes)
{
    *yes = 0;
    char id[24];
    snprintf(id, sizeof id, "%" PRId64, claim->job_id);
    const char *vals[] = {id};
    PGresult *r = PQexecParams(c, "SELECT EXISTS (" TAKEABLE ")", 1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    *yes = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    return STORE_OK;
}

int store_job_absorb(PGconn *c, const store_job_claim *claim, const char *worker, int *n,
                     store_error *err)
{
    *n = 0;
    char id[24], attempt[16];
    snprintf(id, sizeof id, "%" PRId64, claim->job_id);
    snprintf(attempt, sizeof attempt, "%d", claim->attempt);
    const char *vals[] = {id, worker, attempt};
    PGresult *r = PQexec(c, "BEGIN");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    /* FOR UPDATE waits for uploads that joined the queued job and have not
     * committed yet (they hold its row since their INSERT ... ON CONFLICT) */
    r = PQexecParams(c,
                     "WITH q AS (" TAKEABLE " AND me.state = 'running' AND me.worker = $2 "
                     "  AND me.attempts = $3::int FOR UPDATE OF j) "
                     "UPDATE jobs SET state = 'running', rides_with = $1, worker = $2, "
                     "  attempts = $3::int, started_at = clock_timestamp() "
                     "FROM q WHERE jobs.id = q.id AND jobs.state = 'queued' RETURNING jobs.id",
                     3, NULL, vals, NULL, NULL, 0);
    int rc = PQresultStatus(r) == PGRES_TUPLES_OK ? STORE_OK : store_fail(c, r, err);
    int taken = rc ? 0 : PQntuples(r);
    if (!rc)
        PQclear(r);
    /* a job that was put back in the queue with riders brings them along */
    if (!rc && taken)
        rc = exec_job(c,
                      "UPDATE jobs SET rides_with = $1 WHERE rides_with IN (SELECT id FROM jobs "
                      "WHERE rides_with = $1) AND state = 'running'",
                      claim->job_id, NULL, err);
    if (!rc) {
        r = PQexec(c, "COMMIT");
        rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    }
    if (rc) {
        PQclear(PQexec(c, "ROLLBACK"));
        return rc;
    }
    *n = taken;
    return STORE_OK;
}

/* One try of store_job_fail in its own transaction. */
static int fail_once(PGconn *c, const store_job_claim *claim, const char *worker, const char *msg,
                     int transient, int *requeued, store_error *err)
{
    char id[24], attempt[16];
    snprintf(id, sizeof id, "%" PRId64, claim->job_id);
    snprintf(attempt, sizeof attempt, "%d", claim->attempt);
    const char *vals[] = {id, worker, attempt, msg, transient ? "t" : "f"};
    PGresult *r = PQexec(c, "BEGIN");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    /* q: a queued job of the same experiment that makes requeueing this one
     * impossible (and unnecessary) */
    r = PQexecParams(
        c,
        "WITH q AS (SELECT o.id FROM jobs o JOIN jobs j ON j.id = $1 "
        "  WHERE o.experiment_id = j.experiment_id AND o.state = 'queued' "
        "  AND o.commit_sha IS NOT DISTINCT FROM j.commit_sha), "
        "d AS (SELECT $5::bool AND attempts < max_attempts AS retry, "
        "  (SELECT id FROM q) AS other FROM jobs WHERE id = $1) "
        "UPDATE jobs SET "
        "  state = CASE WHEN d.retry AND d.other IS NULL THEN 'queued' ELSE 'failed' END, "
        "  error = CASE WHEN d.retry AND d.other IS NOT NULL "
        "    THEN $4 || ' (not retried: queued job ' || d.other || "
        "         ' models this job''s uploads too)' ELSE $4 END, "
        "  lease_until = NULL, "
        "  finished_at = CASE WHEN d.retry AND d.other IS NULL THEN NULL ELSE now() END "
        "FROM d " FENCE " "
        "RETURNING jobs.state, coalesce(d.other, 0)",
        5, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int rc = store_fail(c, r, err);
        PQclear(PQexec(c, "ROLLBACK"));
        return rc;
    }
    if (PQntuples(r) != 1) {
        PQclear(r);
        PQclear(PQexec(c, "ROLLBACK"));
        return store_error_set(err, STORE_CONFLICT,
                               "job %" PRId64 " attempt %d is no longer held by %s (lease lost)",
                               claim->job_id, claim->attempt, worker);
    }
    int back = !strcmp(PQgetvalue(r, 0, 0), "queued");
    char other[24];
    snprintf(other, sizeof other, "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    if (strcmp(other, "0")) {
        const char *pvals[] = {id, other};
        r = PQexecParams(c, "UPDATE profiles SET job_id = $2 WHERE job_id = $1", 2, NULL, pvals,
                         NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            int rc = store_fail(c, r, err);
            PQclear(PQexec(c, "ROLLBACK"));
            return rc;
        }
        PQclear(r);
    }
    /* the jobs riding with this one: with the job that covers it, failed
     * with it, or (put back in the queue) waiting for its next attempt */
    int frc = STORE_OK;
    if (strcmp(other, "0"))
        frc = exec_job(c, "UPDATE jobs SET rides_with = $2 WHERE rides_with = $1 "
                          "AND state = 'running'",
                       claim->job_id, other, err);
    else if (!back)
        frc = exec_job(c,
                       "UPDATE jobs SET state = 'failed', lease_until = NULL, finished_at = now(), "
                       "error = 'the refit it rode with (job ' || $1 || ') failed: ' || $2 "
                       "WHERE rides_with = $1::bigint AND state = 'running'",
                       claim->job_id, msg, err);
    if (frc) {
        PQclear(PQexec(c, "ROLLBACK"));
        return frc;
    }
    if (back)
        PQclear(PQexec(c, "SELECT pg_notify('" STORE_JOBS_CHANNEL "', '')"));
    r = PQexec(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        int rc = store_fail(c, r, err);
        PQclear(PQexec(c, "ROLLBACK"));
        return rc;
    }
    PQclear(r);
    if (requeued)
        *requeued = back;
    return STORE_OK;
}

int store_job_fail(PGconn *c, const store_job_claim *claim, const char *worker, const char *msg,
                   int transient, int *requeued, store_error *err)
{
    if (requeued)
        *requeued = 0;
    /* An upload may queue a job between our look at the queue and our
     * UPDATE: the unique index refuses, and the next try sees that job. */
    int rc = STORE_CONFLICT;
    for (int tries = 0; tries < 3; tries++) {
        store_error e = {0};
        rc = fail_once(c, claim, worker, msg, transient, requeued, &e);
        int unique_violation = rc == STORE_CONFLICT && strstr(e.msg, "jobs_one_queued");
        if (!unique_violation) {
            if (rc && err)
                *err = e;
            return rc;
        }
        if (err)
            *err = e;
    }
    return rc;
}

int store_job_reap(PGconn *c, int *n, store_error *err)
{
    if (n)
        *n = 0;
    PGresult *r = PQexec(
        c,
        "UPDATE jobs SET state = 'failed', finished_at = now(), lease_until = NULL, "
        "error = 'lease expired: worker ' || coalesce(worker, '?') || ' stopped during attempt ' "
        "|| attempts || ' of ' || max_attempts || coalesce(' while ' || progress, '') "
        "|| coalesce(' (last error: ' || error || ')', '') "
        "WHERE state = 'running' AND lease_until < now() AND attempts >= max_attempts");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    if (n)
        *n = atoi(PQcmdTuples(r));
    PQclear(r);
    /* riders of a failed job fail with it */
    r = PQexec(c, "UPDATE jobs r SET state = 'failed', finished_at = now(), lease_until = NULL, "
                  "error = 'the refit it rode with (job ' || j.id || ') failed: ' || "
                  "coalesce(j.error, '?') FROM jobs j "
                  "WHERE r.rides_with = j.id AND r.state = 'running' AND j.state = 'failed'");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_job_counts(PGconn *c, int64_t counts[STORE_JOB_NSTATES], store_error *err)
{
    for (int i = 0; i < STORE_JOB_NSTATES; i++)
        counts[i] = 0;
    PGresult *r = PQexec(c, "SELECT state, count(*) FROM jobs GROUP BY state");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    for (int i = 0; i < PQntuples(r); i++) {
        int s = state_from_name(PQgetvalue(r, i, 0));
        if (s >= 0)
            counts[s] = strtoll(PQgetvalue(r, i, 1), NULL, 10);
    }
    PQclear(r);
    return STORE_OK;
}

int store_job_enqueue(PGconn *c, int64_t exp, int64_t *job_id, store_error *err)
{
    return store_job_enqueue_commit(c, exp, NULL, NULL, NULL, job_id, err);
}

int store_job_enqueue_commit(PGconn *c, int64_t exp, const char *commit, const char *branch,
                             const char *ci_run, int64_t *job_id, store_error *err)
{
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    const char *vals[] = {e, commit, branch, ci_run};
    /* a later upload's branch and CI run replace the queued job's */
    PGresult *r = PQexecParams(
        c,
        "WITH x AS (SELECT id FROM experiments WHERE id = $1), "
        "j AS (INSERT INTO jobs (experiment_id, commit_sha, branch, ci_run) "
        "  SELECT id, $2, $3, $4 FROM x "
        "  ON CONFLICT (experiment_id, coalesce(commit_sha, '')) WHERE state = 'queued' "
        "  DO UPDATE SET state = EXCLUDED.state, "
        "    branch = coalesce(EXCLUDED.branch, jobs.branch), "
        "    ci_run = coalesce(EXCLUDED.ci_run, jobs.ci_run) RETURNING id) "
        "SELECT id, pg_notify('" STORE_JOBS_CHANNEL "', id::text) FROM j",
        4, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) == 1)
        *job_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        rc = store_error_set(err, STORE_NOT_FOUND, "no experiment with id %s", e);
    PQclear(r);
    return rc;
}
