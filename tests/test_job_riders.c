/*
 * test_job_riders.c — a running refit's take-over of its experiment's queued
 * job at the store level, against a private PostgreSQL (no server): the
 * queued job rides with the running one (not claimable, not a second
 * running refit), is done with its leader's model set in the same
 * statement sequence, fails with it, waits through its leader's retry,
 * follows the job a failed leader's uploads go to, and is reaped with it.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/profile.h"
#include "store/experiments.h"
#include "store/jobs.h"
#include "store/profiles.h"
#include "tests/check.h"
#include "tests/harness.h"

static harness *H;

static long sql_long(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static long sql_long(const char *fmt, ...)
{
    char sql[1024], out[64] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    if (harness_sql(H, sql, out, sizeof out))
        return -1;
    return atol(out);
}

static void job_state(int64_t job, char *out, size_t cap)
{
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT state FROM jobs WHERE id = %" PRId64, job);
    out[0] = '\0';
    harness_sql(H, sql, out, cap);
    out[strcspn(out, "\n")] = '\0';
}

static int64_t experiment(PGconn *c, const char *name)
{
    char *params[] = {"ranks"};
    store_experiment e = {.name = (char *)name,
                          .nparams = 1,
                          .parameters = params,
                          .scaling = "weak",
                          .spec = json_pack("{s:{s:i, s:i, s:s}}", "training", "train_samples",
                                            1000, "batch_size", 8, "data_parallel", "ranks")};
    store_error err = {0};
    int rc = store_experiment_create(c, &e, &err);
    json_decref(e.spec);
    check(rc == STORE_OK, "create experiment %s: %s", name, err.msg);
    return rc ? 0 : e.id;
}

/* One upload of a one-rank, one-step, one-callpath profile at ranks = x;
 * its job. */
static int64_t upload(PGconn *c, int64_t exp, int x)
{
    char text[256];
    snprintf(text, sizeof text,
             "{\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":\"train\",\"callpaths\":[{\"name\":"
             "\"k\",\"category\":\"comp\",\"metrics\":{\"time\":%d.5}}]}]}]}",
             x);
    profile p;
    ingest_error ie;
    if (ingest_profile_json(text, strlen(text), &p, &ie)) {
        check(0, "profile does not parse: %s", ie.msg);
        return 0;
    }
    double pt[] = {x};
    store_upload u = {.experiment_id = exp,
                      .format = "perfcast",
                      .raw = text,
                      .raw_len = strlen(text),
                      .point = pt,
                      .npoint = 1,
                      .repetition = 1,
                      .prof = &p};
    store_upload_result res = {0};
    store_error err = {0};
    int rc = store_profile_add(c, &u, &res, &err);
    profile_free(&p);
    check(rc == STORE_OK, "upload at %d: %s", x, err.msg);
    return rc ? 0 : res.job_id;
}

/* Claims exp's job (other experiments' jobs were finished first). */
static int claim(PGconn *c, const char *worker, double lease, store_job_claim *cl)
{
    store_error err = {0};
    int rc = store_job_claim_next(c, worker, lease, cl, &err);
    check(rc == STORE_OK, "claim by %s: %d %s", worker, rc, err.msg);
    return rc;
}

static void drain(PGconn *c)
{
    PQclear(PQexec(c, "UPDATE jobs SET state = 'done', lease_until = NULL "
                      "WHERE state IN ('queued', 'running')"));
}

static void test_done_together(PGconn *c)
{
    drain(c);
    int64_t exp = experiment(c, "riders-done");
    int64_t a = upload(c, exp, 2);
    store_job_claim cl;
    store_error err = {0};
    if (claim(c, "t/a", 30, &cl))
        return;
    check(cl.job_id == a, "the first upload's job claimed");
    int yes = -1, n = -1;
    check(store_job_newer_queued(c, &cl, &err, &yes) == STORE_OK && yes == 0,
          "nothing queued yet: %d", yes);
    check(store_job_absorb(c, &cl, "t/a", &n, &err) == STORE_OK && n == 0,
          "nothing to take over: %d", n);
    int64_t b = upload(c, exp, 4);
    check(b && b != a, "a second upload queues a job of its own");
    check(store_job_newer_queued(c, &cl, &err, &yes) == STORE_OK && yes == 1, "and it is seen");
    /* another worker may not take over a claim it does not hold */
    store_job_claim other = cl;
    other.attempt = cl.attempt + 1;
    check(store_job_absorb(c, &other, "t/a", &n, &err) == STORE_OK && n == 0,
          "a stale attempt takes nothing: %d", n);
    check(store_job_absorb(c, &cl, "t/a", &n, &err) == STORE_OK && n == 1, "taken over: %d", n);
    char st[32];
    job_state(b, st, sizeof st);
    check(!strcmp(st, "running"), "the rider shows as running: %s", st);
    check(sql_long("SELECT attempts FROM jobs WHERE id = %" PRId64, b) == 1,
          "in the leader's attempt");
    check(sql_long("SELECT rides_with FROM jobs WHERE id = %" PRId64, b) == a, "rides with a");
    store_job_claim none;
    check(store_job_claim_next(c, "t/x", 30, &none, &err) == STORE_NOT_FOUND,
          "a rider is not claimable");
    check(store_job_newer_queued(c, &cl, &err, &yes) == STORE_OK && yes == 0,
          "nothing queued after the take-over");
    int64_t d = upload(c, exp, 8);
    check(d && d != b, "a third upload queues a new job");
    check(store_job_absorb(c, &cl, "t/a", &n, &err) == STORE_OK && n == 1, "taken over too");
    /* the set commits: the leader and both riders done with it */
    PQclear(PQexec(c, "BEGIN"));
    check(store_job_done(c, &cl, "t/a", 0, &err) == STORE_OK, "done: %s", err.msg);
    job_state(b, st, sizeof st);
    check(!strcmp(st, "running"), "not done before the commit: %s", st);
    PQclear(PQexec(c, "COMMIT"));
    check(sql_long("SELECT count(*) FROM jobs WHERE experiment_id = %" PRId64
                   " AND state = 'done' AND model_set_id = 0",
                   exp) == 3,
          "all three done with the same set");
}

static void test_fail_and_retry(PGconn *c)
{
    drain(c);
    int64_t exp = experiment(c, "riders-fail");
    int64_t a = upload(c, exp, 2);
    store_job_claim cl;
    store_error err = {0};
    if (claim(c, "t/f", 30, &cl))
        return;
    int64_t b = upload(c, exp, 4);
    int n = 0, requeued = -1;
    check(store_job_absorb(c, &cl, "t/f", &n, &err) == STORE_OK && n == 1, "taken over");
    /* a transient failure with attempts left: the leader is queued again,
     * its rider waits for it */
    check(store_job_fail(c, &cl, "t/f", "database away", 1, &requeued, &err) == STORE_OK &&
              requeued == 1,
          "requeued: %s", err.msg);
    char st[32];
    job_state(b, st, sizeof st);
    check(!strcmp(st, "running") &&
              sql_long("SELECT rides_with FROM jobs WHERE id = %" PRId64, b) == a,
          "the rider still rides with it: %s", st);
    if (claim(c, "t/f2", 30, &cl))
        return;
    check(cl.job_id == a && cl.attempt == 2, "the leader is claimed again");
    check(sql_long("SELECT attempts FROM jobs WHERE id = %" PRId64, b) == 2,
          "the rider is in its second attempt too");
    /* the data cannot be modeled: leader and rider fail */
    check(store_job_fail(c, &cl, "t/f2", "no model", 0, &requeued, &err) == STORE_OK &&
              requeued == 0,
          "failed");
    job_state(b, st, sizeof st);
    check(!strcmp(st, "failed"), "the rider failed with it: %s", st);
    char text[256] = "";
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT error FROM jobs WHERE id = %" PRId64, b);
    harness_sql(H, sql, text, sizeof text);
    check(strstr(text, "no model") != NULL, "naming the reason: %s", text);
}

static void test_handed_on(PGconn *c)
{
    drain(c);
    int64_t exp = experiment(c, "riders-handed-on");
    upload(c, exp, 2);
    store_job_claim cl;
    store_error err = {0};
    if (claim(c, "t/h", 30, &cl))
        return;
    int64_t b = upload(c, exp, 4);
    int n = 0, requeued = -1;
    check(store_job_absorb(c, &cl, "t/h", &n, &err) == STORE_OK && n == 1, "taken over");
    int64_t q = upload(c, exp, 8);
    /* a transient failure while a job is queued: the queued job covers the
     * leader's uploads, and the rider's */
    check(store_job_fail(c, &cl, "t/h", "database away", 1, &requeued, &err) == STORE_OK &&
              requeued == 0,
          "not requeued: %s", err.msg);
    check(sql_long("SELECT rides_with FROM jobs WHERE id = %" PRId64, b) == q,
          "the rider follows the queued job");
    store_job_claim c2;
    if (claim(c, "t/h2", 30, &c2))
        return;
    check(c2.job_id == q, "the queued job is claimed");
    check(store_job_done(c, &c2, "t/h2", 0, &err) == STORE_OK, "done");
    char st[32];
    job_state(b, st, sizeof st);
    check(!strcmp(st, "done"), "and the rider with it: %s", st);
}

static void test_reaped(PGconn *c)
{
    drain(c);
    int64_t exp = experiment(c, "riders-reaped");
    int64_t a = upload(c, exp, 2);
    PQclear(PQexec(c, "UPDATE jobs SET max_attempts = 1 WHERE state = 'queued'"));
    store_job_claim cl;
    store_error err = {0};
    if (claim(c, "t/dead", 0.3, &cl))
        return;
    check(cl.job_id == a, "claimed");
    int64_t b = upload(c, exp, 4);
    int n = 0;
    check(store_job_absorb(c, &cl, "t/dead", &n, &err) == STORE_OK && n == 1, "taken over");
    harness_sleep(0.6);
    int reaped = 0;
    check(store_job_reap(c, &reaped, &err) == STORE_OK && reaped == 1, "the leader reaped: %d",
          reaped);
    char st[32];
    job_state(b, st, sizeof st);
    check(!strcmp(st, "failed"), "the rider with it: %s", st);
}

int main(void)
{
    harness_opts o = {.no_server = 1};
    H = harness_open(&o);
    check(H != NULL, "harness: PostgreSQL did not start");
    if (!H)
        return check_summary();
    store *s = store_open(harness_database_url(H), 2);
    store_error err = {0};
    check(store_migrate(s, &err) == STORE_OK, "migrate: %s", err.msg);
    PGconn *c = PQconnectdb(harness_database_url(H));
    if (PQstatus(c) == CONNECTION_OK) {
        test_done_together(c);
        test_fail_and_retry(c);
        test_handed_on(c);
        test_reaped(c);
    } else {
        check(0, "connect: %s", PQerrorMessage(c));
    }
    PQfinish(c);
    store_close(s);
    harness_close(H, 0);
    return check_summary();
}
