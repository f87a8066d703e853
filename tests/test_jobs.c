/*
 * test_jobs.c — the upload transaction and the job queue at the store level,
 * against a private PostgreSQL (no server): rows stored exactly once,
 * duplicates, coalescing of queued jobs, category conflicts that store
 * nothing, bulk inserts past one statement's chunk, claims with SKIP LOCKED
 * from several connections, expired leases, fencing of stale workers,
 * capped retries, reaping and counts.
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ingest/profile.h"
#include "store/experiments.h"
#include "store/jobs.h"
#include "store/profiles.h"
#include "store/tokens.h"
#include "tests/check.h"
#include "tests/harness.h"

static harness *H;
static store *S;

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

static void sql_text(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void sql_text(char *out, size_t cap, const char *fmt, ...)
{
    char sql[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof sql, fmt, ap);
    va_end(ap);
    out[0] = '\0';
    harness_sql(H, sql, out, cap);
}

static PGconn *conn(void)
{
    PGconn *c = PQconnectdb(harness_database_url(H));
    if (PQstatus(c) != CONNECTION_OK) {
        fprintf(stderr, "connect: %s", PQerrorMessage(c));
        PQfinish(c);
        return NULL;
    }
    return c;
}

static int64_t experiment(PGconn *c, const char *name, int nparams)
{
    char *params[] = {"ranks", "batch"};
    store_experiment e = {.name = (char *)name,
                          .nparams = nparams,
                          .parameters = params,
                          .scaling = "weak",
                          .spec = json_pack("{s:{s:i, s:i, s:i, s:s, s:s, s:i}}", "training",
                                            "train_samples", 1000, "validation_samples", 100,
                                            "batch_size", 8, "data_parallel", "ranks",
                                            "model_parallel", "1", "warmup_steps", 0)};
    store_error err = {0};
    int rc = store_experiment_create(c, &e, &err);
    json_decref(e.spec);
    check(rc == STORE_OK, "create experiment %s: %s", name, err.msg);
    return rc ? 0 : e.id;
}

/* A perfcast JSON profile: ranks x steps x callpaths, two metrics each, the
 * values varied by seed so that different seeds give different bytes. */
static char *profile_text(int ranks, int steps, int callpaths, int seed, const char *cat0)
{
    size_t cap = 256 + (size_t)ranks * steps * callpaths * 96;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{\"ranks\":[");
    for (int r = 0; r < ranks; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < steps; s++) {
            n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                                  s ? "," : "");
            for (int k = 0; k < callpaths; k++)
                n += (size_t)snprintf(b + n, cap - n,
                                      "%s{\"name\":\"kernel_%d\",\"category\":\"%s\","
                                      "\"metrics\":{\"time\":%d.%03d,\"visits\":%d}}",
                                      k ? "," : "", k, k == 0 && cat0 ? cat0 : "comp",
                                      seed, (r * 7 + s * 3 + k) % 1000, k + 1);
            n += (size_t)snprintf(b + n, cap - n, "]}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    snprintf(b + n, cap - n, "]}");
    return b;
}

typedef struct upload_out {
    int rc;
    store_error err;
    store_upload_result res;
    size_t nrows;
} upload_out;

static upload_out upload(PGconn *c, int64_t exp, const char *text, const double *point, int np,
                         int rep)
{
    upload_out o = {0};
    profile p;
    ingest_error ie;
    if (ingest_profile_json(text, strlen(text), &p, &ie)) {
        check(0, "profile does not parse: %s", ie.msg);
        o.rc = -1;
        return o;
    }
    store_upload u = {.experiment_id = exp,
                      .format = "perfcast",
                      .raw = text,
                      .raw_len = strlen(text),
                      .point = point,
                      .npoint = np,
                      .repetition = rep,
                      .prof = &p};
    o.rc = store_profile_add(c, &u, &o.res, &o.err);
    o.nrows = p.nrows;
    profile_free(&p);
    return o;
}

static void test_upload(PGconn *c)
{
    int64_t exp = experiment(c, "upload", 1);
    double pt[] = {8};
    char *text = profile_text(2, 3, 4, 1, NULL);
    upload_out o = upload(c, exp, text, pt, 1, 1);
    check(o.rc == STORE_OK && !o.res.duplicate && o.res.profile_id > 0 && o.res.job_id > 0,
          "first upload: rc %d dup %d (%s)", o.rc, o.res.duplicate, o.err.msg);
    check(o.nrows == 2 * 3 * 4 * 2, "reader rows %zu", o.nrows);
    check(sql_long("SELECT count(*) FROM profile_rows WHERE profile_id = %" PRId64,
                   o.res.profile_id) == (long)o.nrows,
          "rows stored");
    check(sql_long("SELECT count(*) FROM callpaths WHERE experiment_id = %" PRId64, exp) == 4,
          "callpaths stored");
    check(sql_long("SELECT count(*) FROM profiles WHERE id = %" PRId64 " AND job_id = %" PRId64
                   " AND size = %zu AND length(raw) = %zu AND sha256 = sha256(raw) AND point = "
                   "'{8}' AND repetition = 1 AND ranks = 2 AND format = 'perfcast'",
                   o.res.profile_id, o.res.job_id, strlen(text), strlen(text)) == 1,
          "profile columns: raw bytes, sha256, point, job");
    /* the raw bytes as sent: their sha256 computed here and by PostgreSQL */
    unsigned char md[32];
    unsigned int mdlen = 0;
    EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL);
    char want[65], got[80];
    for (int i = 0; i < 32; i++)
        snprintf(want + 2 * i, 3, "%02x", md[i]);
    sql_text(got, sizeof got, "SELECT encode(sha256(raw), 'hex') FROM profiles WHERE id = %" PRId64,
             o.res.profile_id);
    check(!strcmp(got, want), "raw bytes kept exactly: %s vs %s", got, want);
    /* a value survives the binary round trip exactly */
    check(sql_long("SELECT count(*) FROM profile_rows r JOIN callpaths c ON c.id = r.callpath_id "
                   "WHERE r.profile_id = %" PRId64 " AND r.rank = 1 AND r.step = 2 AND "
                   "c.name = 'kernel_3' AND r.metric = 'time' AND r.value = 1.016",
                   o.res.profile_id) == 1,
          "row (rank 1, step 2, kernel_3, time) = 1.016");
    check(sql_long("SELECT count(*) FROM profile_rows r JOIN callpaths c ON c.id = r.callpath_id "
                   "WHERE r.profile_id = %" PRId64 " AND c.name = 'kernel_2' AND "
                   "r.metric = 'visits' AND r.value = 3 AND r.phase = 0",
                   o.res.profile_id) == 6,
          "visits rows of kernel_2");
    char state[32];
    sql_text(state, sizeof state, "SELECT state FROM jobs WHERE id = %" PRId64, o.res.job_id);
    check(!strcmp(state, "queued"), "job state %s", state);

    /* the same bytes again: nothing new, the first ids */
    long rows_before = sql_long("SELECT count(*) FROM profile_rows");
    upload_out d = upload(c, exp, text, pt, 1, 1);
    check(d.rc == STORE_OK && d.res.duplicate && d.res.profile_id == o.res.profile_id &&
              d.res.job_id == o.res.job_id,
          "duplicate: rc %d dup %d ids %" PRId64 "/%" PRId64, d.rc, d.res.duplicate,
          d.res.profile_id, d.res.job_id);
    check(sql_long("SELECT count(*) FROM profile_rows") == rows_before &&
              sql_long("SELECT count(*) FROM profiles WHERE experiment_id = %" PRId64, exp) == 1,
          "duplicate stored nothing");
    /* the same bytes at another point: refused, not silently merged */
    double other[] = {16};
    upload_out x = upload(c, exp, text, other, 1, 1);
    check(x.rc == STORE_CONFLICT && strstr(x.err.msg, "another point"), "same bytes elsewhere: %d %s",
          x.rc, x.err.msg);
    upload_out y = upload(c, exp, text, pt, 1, 2);
    check(y.rc == STORE_CONFLICT, "same bytes, other repetition: %d", y.rc);
    /* the same bytes in another experiment are a new profile */
    int64_t exp2 = experiment(c, "upload-2", 1);
    upload_out z = upload(c, exp2, text, pt, 1, 1);
    check(z.rc == STORE_OK && !z.res.duplicate && z.res.profile_id != o.res.profile_id,
          "same bytes, other experiment: %d dup %d", z.rc, z.res.duplicate);

    /* wrong point length, unknown experiment */
    double two[] = {8, 2};
    char *t2 = profile_text(1, 1, 1, 2, NULL);
    upload_out w = upload(c, exp, t2, two, 2, 1);
    check(w.rc == STORE_INVALID && strstr(w.err.msg, "point"), "2 values for 1 parameter: %d %s",
          w.rc, w.err.msg);
    upload_out nf = upload(c, 999999, t2, pt, 1, 1);
    check(nf.rc == STORE_NOT_FOUND, "unknown experiment: %d", nf.rc);
    check(PQtransactionStatus(c) == PQTRANS_IDLE, "connection left idle after errors");
    free(t2);
    free(text);
}

static void test_category_conflict(PGconn *c)
{
    int64_t exp = experiment(c, "categories", 1);
    double pt[] = {4};
    char *a = profile_text(1, 2, 3, 1, "comm");
    upload_out o = upload(c, exp, a, pt, 1, 1);
    check(o.rc == STORE_OK, "first: %s", o.err.msg);
    long cps = sql_long("SELECT count(*) FROM callpaths WHERE experiment_id = %" PRId64, exp);
    long profiles = sql_long("SELECT count(*) FROM profiles");
    long rows = sql_long("SELECT count(*) FROM profile_rows");
    long jobs = sql_long("SELECT count(*) FROM jobs");
    /* kernel_0 is comp now, and kernel_3..5 are new: none of it may stay */
    char *b = profile_text(1, 2, 6, 2, "comp");
    upload_out x = upload(c, exp, b, pt, 1, 2);
    check(x.rc == STORE_INVALID && strstr(x.err.msg, "kernel_0") && strstr(x.err.msg, "comm"),
          "category change: %d %s", x.rc, x.err.msg);
    check(sql_long("SELECT count(*) FROM callpaths WHERE experiment_id = %" PRId64, exp) == cps &&
              sql_long("SELECT count(*) FROM profiles") == profiles &&
              sql_long("SELECT count(*) FROM profile_rows") == rows &&
              sql_long("SELECT count(*) FROM jobs") == jobs,
          "a refused upload stored nothing");
    free(a);
    free(b);
}

static void test_bulk(PGconn *c)
{
    int64_t exp = experiment(c, "bulk", 1);
    double pt[] = {8};
    /* 200 callpaths x 8 ranks x 5 steps x 2 metrics = 16000 rows */
    char *a = profile_text(8, 5, 200, 1, NULL);
    upload_out o = upload(c, exp, a, pt, 1, 1);
    check(o.rc == STORE_OK && o.nrows == 16000, "16000 rows: %d %zu %s", o.rc, o.nrows,
          o.err.msg);
    check(sql_long("SELECT count(*) FROM profile_rows WHERE profile_id = %" PRId64,
                   o.res.profile_id) == 16000,
          "16000 rows stored");
    /* past one statement's chunk (50000 rows): 8 x 20 x 400 x 2 = 128000 */
    char *b = profile_text(8, 20, 400, 2, NULL);
    pt[0] = 16;
    upload_out p = upload(c, exp, b, pt, 1, 1);
    check(p.rc == STORE_OK && p.nrows == 128000, "128000 rows: %d %s", p.rc, p.err.msg);
    check(sql_long("SELECT count(*) FROM profile_rows WHERE profile_id = %" PRId64,
                   p.res.profile_id) == 128000,
          "128000 rows stored over several statements");
    check(sql_long("SELECT count(DISTINCT (rank, step, callpath_id, metric)) FROM profile_rows "
                   "WHERE profile_id = %" PRId64,
                   p.res.profile_id) == 128000,
          "every row distinct");
    check(p.res.job_id == o.res.job_id, "second upload joined the queued job");
    free(a);
    free(b);
}

static void test_coalescing(PGconn *c)
{
    int64_t exp = experiment(c, "coalesce", 1);
    int64_t job = 0;
    for (int i = 0; i < 5; i++) {
        double pt[] = {1 << i};
        char *t = profile_text(1, 1, 2, 10 + i, NULL);
        upload_out o = upload(c, exp, t, pt, 1, 1);
        check(o.rc == STORE_OK, "upload %d: %s", i, o.err.msg);
        if (i == 0)
            job = o.res.job_id;
        check(o.res.job_id == job, "upload %d joined job %" PRId64 ", got %" PRId64, i, job,
              o.res.job_id);
        free(t);
    }
    check(sql_long("SELECT count(*) FROM jobs WHERE experiment_id = %" PRId64, exp) == 1,
          "one job for five uploads");
    check(sql_long("SELECT count(*) FROM profiles WHERE job_id = %" PRId64, job) == 5,
          "five profiles name the job");

    /* once claimed, a new upload queues a new job instead of joining it */
    store_job_claim cl;
    store_error err = {0};
    int rc;
    do /* earlier tests left jobs queued: claim until ours */
        rc = store_job_claim_next(c, "t/coalesce", 30, &cl, &err);
    while (rc == STORE_OK && cl.job_id != job);
    check(rc == STORE_OK && cl.job_id == job, "claim the coalesced job: %d %s", rc, err.msg);
    double pt[] = {64};
    char *t = profile_text(1, 1, 2, 99, NULL);
    upload_out o = upload(c, exp, t, pt, 1, 1);
    check(o.rc == STORE_OK && o.res.job_id != job, "upload while running: new job %" PRId64,
          o.res.job_id);
    check(sql_long("SELECT count(*) FROM jobs WHERE experiment_id = %" PRId64 " AND state = "
                   "'queued'",
                   exp) == 1,
          "one queued job besides the running one");
    free(t);
    /* finishing the running job leaves the queued one alone */
    check(store_job_done(c, &cl, "t/coalesce", 0, &err) == STORE_OK, "done: %s", err.msg);
}

/* Drains the queue so that the tests below see only their own jobs. */
static void drain(PGconn *c)
{
    PQclear(PQexec(c, "UPDATE jobs SET state = 'done' WHERE state IN ('queued', 'running')"));
}

/* n experiments with one queued job each; ids into jobs[]. */
static void queue_jobs(PGconn *c, const char *prefix, int n, int64_t *jobs)
{
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s-%d", prefix, i);
        int64_t exp = experiment(c, name, 1);
        double pt[] = {2};
        char *t = profile_text(1, 1, 1, 100 + i, NULL);
        upload_out o = upload(c, exp, t, pt, 1, 1);
        check(o.rc == STORE_OK, "queue %s: %s", name, o.err.msg);
        jobs[i] = o.res.job_id;
        free(t);
    }
}

typedef struct claimer {
    int index;
    int n;
    int64_t got[64];
    int errors;
} claimer;

static void *claim_all(void *arg)
{
    claimer *me = arg;
    PGconn *c = conn();
    char name[32];
    snprintf(name, sizeof name, "t/claimer-%d", me->index);
    for (;;) {
        store_job_claim cl;
        store_error err = {0};
        int rc = c ? store_job_claim_next(c, name, 30, &cl, &err) : STORE_UNAVAILABLE;
        if (rc == STORE_NOT_FOUND)
            break;
        if (rc != STORE_OK || me->n == 64) {
            me->errors++;
            break;
        }
        me->got[me->n++] = cl.job_id;
    }
    PQfinish(c);
    return NULL;
}

static void test_claims(PGconn *c)
{
    drain(c);
    int64_t jobs[40];
    queue_jobs(c, "claims", 2, jobs);

    /* A is in the middle of claiming jobs[0] (its row locked, uncommitted);
     * B skips that row instead of waiting for it */
    PGconn *a = conn(), *b = conn();
    /* without SKIP LOCKED, B would wait for A: make that a failure, not a hang */
    PQclear(PQexec(b, "SET lock_timeout = '2s'"));
    store_job_claim cb, cc;
    store_error err = {0};
    char sql[128];
    snprintf(sql, sizeof sql, "BEGIN; SELECT id FROM jobs WHERE id = %" PRId64 " FOR UPDATE",
             jobs[0]);
    PQclear(PQexec(a, sql));
    int rb = store_job_claim_next(b, "t/b", 30, &cb, &err);
    check(rb == STORE_OK && cb.job_id == jobs[1],
          "B claims the job A does not hold: %d %" PRId64 " (%s)", rb, cb.job_id, err.msg);
    int rc2 = store_job_claim_next(b, "t/b", 30, &cc, &err);
    check(rc2 == STORE_NOT_FOUND, "nothing left while A holds its row: %d (%s)", rc2, err.msg);
    PQclear(PQexec(a, "ROLLBACK"));
    rc2 = store_job_claim_next(b, "t/b", 30, &cc, &err);
    check(rc2 == STORE_OK && cc.job_id == jobs[0] && cc.attempt == 1,
          "released row is claimable: %d %" PRId64 " attempt %d", rc2, cc.job_id, cc.attempt);
    PQfinish(a);
    PQfinish(b);

    /* four threads race over 40 jobs: each claimed exactly once */
    drain(c);
    queue_jobs(c, "race", 40, jobs);
    claimer cl[4] = {{0}};
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        cl[i].index = i;
        pthread_create(&th[i], NULL, claim_all, &cl[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    int total = 0, dup = 0, errors = 0, missing = 0;
    for (int i = 0; i < 4; i++) {
        total += cl[i].n;
        errors += cl[i].errors;
    }
    for (int j = 0; j < 40; j++) {
        int seen = 0;
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < cl[i].n; k++)
                seen += cl[i].got[k] == jobs[j];
        dup += seen > 1;
        missing += seen == 0;
    }
    check(total == 40 && dup == 0 && missing == 0 && errors == 0,
          "40 jobs over 4 claimers: %d claims, %d twice, %d missed, %d errors", total, dup,
          missing, errors);
}

static void test_leases(PGconn *c)
{
    drain(c);
    int64_t jobs[1];
    queue_jobs(c, "lease", 1, jobs);
    store_job_claim a, b;
    store_error err = {0};
    check(store_job_claim_next(c, "t/old", 1.0, &a, &err) == STORE_OK && a.job_id == jobs[0],
          "claim with a short lease: %s", err.msg);
    check(store_job_claim_next(c, "t/new", 30, &b, &err) == STORE_NOT_FOUND,
          "a live lease is not claimable");
    check(store_job_heartbeat(c, &a, "t/old", 1.0, &err) == STORE_OK, "heartbeat: %s", err.msg);
    check(store_job_progress(c, &a, "t/old", "reading profiles", &err) == STORE_OK,
          "progress: %s", err.msg);
    harness_sleep(1.3);
    int rc = store_job_claim_next(c, "t/new", 30, &b, &err);
    check(rc == STORE_OK && b.job_id == a.job_id && b.attempt == 2,
          "expired lease reclaimed: %d %" PRId64 " attempt %d", rc, b.job_id, b.attempt);
    /* the attempt that stopped is named with its step; the new one starts
     * with no step */
    char note[256], step[64];
    sql_text(note, sizeof note, "SELECT error FROM jobs WHERE id = %" PRId64, b.job_id);
    sql_text(step, sizeof step, "SELECT coalesce(progress, '-') FROM jobs WHERE id = %" PRId64,
             b.job_id);
    check(strstr(note, "attempt 1: worker t/old stopped (lease expired) while reading profiles") &&
              !strcmp(step, "-"),
          "reclaimed: error %s, progress %s", note, step);
    /* the old holder is fenced off */
    check(store_job_heartbeat(c, &a, "t/old", 30, &err) == STORE_CONFLICT,
          "stale heartbeat refused");
    check(store_job_done(c, &a, "t/old", 0, &err) == STORE_CONFLICT, "stale done refused");
    check(store_job_fail(c, &a, "t/old", "x", 1, NULL, &err) == STORE_CONFLICT,
          "stale fail refused");
    /* same worker name, old attempt: still fenced by the attempt number */
    store_job_claim stale = b;
    stale.attempt = 1;
    check(store_job_done(c, &stale, "t/new", 0, &err) == STORE_CONFLICT,
          "old attempt number refused");
    check(store_job_done(c, &b, "t/new", 0, &err) == STORE_OK, "new holder done: %s", err.msg);
    store_job j;
    check(store_job_get(c, b.job_id, &j, &err) == STORE_OK && j.state == STORE_JOB_DONE &&
              j.attempts == 2 && !j.error && !strcmp(j.worker, "t/new") && *j.finished_at &&
              !*j.lease_until,
          "job after done: state %d attempts %d", j.state, j.attempts);
    store_job_free(&j);
}

/* One experiment is refit by one worker at a time. */
static void test_one_per_experiment(PGconn *c)
{
    drain(c);
    int64_t exp = experiment(c, "one-at-a-time", 1);
    double pt[] = {2};
    char *t1 = profile_text(1, 1, 1, 700, NULL), *t2 = profile_text(1, 1, 1, 701, NULL);
    upload_out u1 = upload(c, exp, t1, pt, 1, 1);
    store_job_claim a, b;
    store_error err = {0};
    check(store_job_claim_next(c, "t/1", 1.0, &a, &err) == STORE_OK && a.job_id == u1.res.job_id,
          "claim the first job");
    pt[0] = 4;
    upload_out u2 = upload(c, exp, t2, pt, 1, 1);
    check(u2.rc == STORE_OK && u2.res.job_id != u1.res.job_id, "second job queued");
    int rc = store_job_claim_next(c, "t/2", 30, &b, &err);
    check(rc == STORE_NOT_FOUND, "queued job of an experiment being refit is not claimed: %d %" PRId64,
          rc, b.job_id);
    /* the first worker dies: once its lease is out, the oldest job goes
     * first, and the queued one waits for it again */
    harness_sleep(1.3);
    rc = store_job_claim_next(c, "t/2", 30, &b, &err);
    check(rc == STORE_OK && b.job_id == a.job_id && b.attempt == 2,
          "expired job reclaimed first: %d %" PRId64, rc, b.job_id);
    rc = store_job_claim_next(c, "t/3", 30, &b, &err);
    check(rc == STORE_NOT_FOUND, "and the queued one still waits: %d", rc);
    b.job_id = a.job_id;
    b.attempt = 2;
    check(store_job_done(c, &b, "t/2", 0, &err) == STORE_OK, "done");
    rc = store_job_claim_next(c, "t/3", 30, &b, &err);
    check(rc == STORE_OK && b.job_id == u2.res.job_id, "then the queued one: %d", rc);
    free(t1);
    free(t2);
}

static void test_retries(PGconn *c)
{
    drain(c);
    int64_t jobs[1];
    queue_jobs(c, "retry", 1, jobs);
    store_error err = {0};
    store_job_claim cl;
    char msg[64];
    for (int attempt = 1; attempt <= 3; attempt++) {
        int rc = store_job_claim_next(c, "t/r", 30, &cl, &err);
        check(rc == STORE_OK && cl.job_id == jobs[0] && cl.attempt == attempt,
              "claim %d: rc %d attempt %d", attempt, rc, cl.attempt);
        snprintf(msg, sizeof msg, "database hiccup #%d", attempt);
        int requeued = -1;
        rc = store_job_fail(c, &cl, "t/r", msg, 1, &requeued, &err);
        check(rc == STORE_OK && requeued == (attempt < 3), "fail %d: rc %d requeued %d (%s)",
              attempt, rc, requeued, err.msg);
        store_job j;
        store_job_get(c, jobs[0], &j, &err);
        check(j.state == (attempt < 3 ? STORE_JOB_QUEUED : STORE_JOB_FAILED) &&
                  j.attempts == attempt && j.error && !strcmp(j.error, msg),
              "after failure %d: state %s attempts %d error %s", attempt,
              store_job_state_name(j.state), j.attempts, j.error ? j.error : "(null)");
        store_job_free(&j);
    }
    check(store_job_claim_next(c, "t/r", 30, &cl, &err) == STORE_NOT_FOUND,
          "no claim after the last attempt");

    /* a permanent failure does not retry */
    queue_jobs(c, "permanent", 1, jobs);
    check(store_job_claim_next(c, "t/p", 30, &cl, &err) == STORE_OK, "claim");
    int requeued = -1;
    check(store_job_fail(c, &cl, "t/p", "no coordinate has 5 values", 0, &requeued, &err) ==
                  STORE_OK &&
              requeued == 0,
          "permanent fail");
    char state[128];
    sql_text(state, sizeof state, "SELECT state || ':' || error FROM jobs WHERE id = %" PRId64,
             jobs[0]);
    check(!strcmp(state, "failed:no coordinate has 5 values"), "permanent: %s", state);

    /* transient failure while a newer upload queued another job: that job
     * takes this one's profiles, this one closes with a note */
    drain(c);
    int64_t exp = experiment(c, "superseded", 1);
    double pt[] = {2};
    char *t1 = profile_text(1, 1, 1, 500, NULL), *t2 = profile_text(1, 1, 1, 501, NULL);
    upload_out u1 = upload(c, exp, t1, pt, 1, 1);
    check(store_job_claim_next(c, "t/s", 30, &cl, &err) == STORE_OK &&
              cl.job_id == u1.res.job_id,
          "claim first job");
    pt[0] = 4;
    upload_out u2 = upload(c, exp, t2, pt, 1, 1);
    check(u2.res.job_id != u1.res.job_id, "second job queued");
    check(store_job_fail(c, &cl, "t/s", "lost connection", 1, &requeued, &err) == STORE_OK &&
              !requeued,
          "fail with a queued successor: rc requeued %d (%s)", requeued, err.msg);
    sql_text(state, sizeof state, "SELECT state FROM jobs WHERE id = %" PRId64, u1.res.job_id);
    char note[256];
    sql_text(note, sizeof note, "SELECT error FROM jobs WHERE id = %" PRId64, u1.res.job_id);
    check(!strcmp(state, "failed") && strstr(note, "lost connection") && strstr(note, "queued job"),
          "superseded job: %s %s", state, note);
    check(sql_long("SELECT count(*) FROM profiles WHERE job_id = %" PRId64, u2.res.job_id) == 2,
          "both profiles now name the queued job");
    free(t1);
    free(t2);
}

static void test_reap_and_counts(PGconn *c)
{
    drain(c);
    int64_t jobs[2];
    queue_jobs(c, "reap", 2, jobs);
    PQclear(PQexec(c, "UPDATE jobs SET max_attempts = 1 WHERE state = 'queued'"));
    store_error err = {0};
    store_job_claim a, b;
    check(store_job_claim_next(c, "t/dead", 0.5, &a, &err) == STORE_OK, "claim a");
    check(store_job_claim_next(c, "t/alive", 30, &b, &err) == STORE_OK, "claim b");
    /* the step a worker records before it: named when its lease expires */
    check(store_job_progress(c, &a, "t/dead", "fitting callpath models", &err) == STORE_OK,
          "progress recorded: %s", err.msg);
    check(store_job_progress(c, &a, "t/other", "writing", &err) == STORE_CONFLICT,
          "progress of a claim not held: conflict");
    harness_sleep(0.8);
    store_job_claim x;
    check(store_job_claim_next(c, "t/x", 30, &x, &err) == STORE_NOT_FOUND,
          "expired with no attempts left: not claimable");
    int n = -1;
    check(store_job_reap(c, &n, &err) == STORE_OK && n == 1, "reaped %d", n);
    store_job j;
    store_job_get(c, a.job_id, &j, &err);
    check(j.state == STORE_JOB_FAILED && j.error && strstr(j.error, "lease expired") &&
              strstr(j.error, "t/dead") && strstr(j.error, "while fitting callpath models"),
          "reaped job: %s %s", store_job_state_name(j.state), j.error ? j.error : "");
    store_job_free(&j);
    store_job_get(c, b.job_id, &j, &err);
    check(j.state == STORE_JOB_RUNNING, "live lease untouched: %s", store_job_state_name(j.state));
    store_job_free(&j);

    int64_t counts[STORE_JOB_NSTATES];
    check(store_job_counts(c, counts, &err) == STORE_OK, "counts: %s", err.msg);
    for (int s = 0; s < STORE_JOB_NSTATES; s++) {
        long want = sql_long("SELECT count(*) FROM jobs WHERE state = '%s'",
                             store_job_state_name(s));
        check(counts[s] == want, "count %s: %" PRId64 " want %ld", store_job_state_name(s),
              counts[s], want);
    }
    check(counts[STORE_JOB_RUNNING] == 1, "one running");
    check(store_job_get(c, 987654321, &j, &err) == STORE_NOT_FOUND, "unknown job");
}

/* Deleting an experiment takes its profiles' rows along (a trigger since
 * profile_rows has no foreign keys), and only those. */
static void test_delete_cascade(PGconn *c)
{
    int64_t keep = experiment(c, "cascade-keep", 1), gone = experiment(c, "cascade-gone", 1);
    double pt[] = {2};
    char *a = profile_text(2, 2, 3, 800, NULL), *b = profile_text(2, 2, 3, 801, NULL);
    upload_out ua = upload(c, keep, a, pt, 1, 1);
    upload_out ub = upload(c, gone, b, pt, 1, 1);
    pt[0] = 4;
    upload_out uc = upload(c, gone, a, pt, 1, 1);
    check(ua.rc == STORE_OK && ub.rc == STORE_OK && uc.rc == STORE_OK, "uploads");
    long total = sql_long("SELECT count(*) FROM profile_rows");
    store_error err = {0};
    check(store_experiment_delete(c, gone, STORE_DEFAULT_TENANT, &err) == STORE_OK, "delete: %s", err.msg);
    check(sql_long("SELECT count(*) FROM profile_rows WHERE profile_id IN (%" PRId64 ", %" PRId64
                   ")",
                   ub.res.profile_id, uc.res.profile_id) == 0,
          "rows of the deleted experiment's profiles are gone");
    check(sql_long("SELECT count(*) FROM profile_rows") == total - (long)(ub.nrows + uc.nrows),
          "and nothing else");
    check(sql_long("SELECT count(*) FROM profile_rows WHERE profile_id = %" PRId64,
                   ua.res.profile_id) == (long)ua.nrows,
          "the other experiment's rows stay");
    check(sql_long("SELECT count(*) FROM profile_rows r WHERE NOT EXISTS (SELECT 1 FROM profiles "
                   "p WHERE p.id = r.profile_id) OR NOT EXISTS (SELECT 1 FROM callpaths k "
                   "WHERE k.id = r.callpath_id)") == 0,
          "no row without its profile and callpath");
    free(a);
    free(b);
}

int main(void)
{
    harness_opts o = {.no_server = 1};
    H = harness_open(&o);
    check(H != NULL, "harness: PostgreSQL did not start");
    if (!H)
        return check_summary();
    S = store_open(harness_database_url(H), 2);
    store_error err = {0};
    check(store_migrate(S, &err) == STORE_OK, "migrate: %s", err.msg);
    PGconn *c = conn();
    if (c) {
        test_upload(c);
        test_category_conflict(c);
        test_bulk(c);
        test_coalescing(c);
        test_claims(c);
        test_leases(c);
        test_one_per_experiment(c);
        test_retries(c);
        test_reap_and_counts(c);
        test_delete_cascade(c);
    }
    PQfinish(c);
    store_close(S);
    harness_close(H, 0);
    return check_summary();
}
