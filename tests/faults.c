/*
 * faults.c — the fault-injection suite (`make test-faults`, run by .ci/run;
 * not part of `make test`): the real server and PostgreSQL of
 * tests/harness.h, with faults a deployment meets, each case asserting that
 * nothing acknowledged is lost, nothing is left stuck, and the surviving
 * process keeps answering /health:
 *
 *   - kill -9 of the server during each kind of background work: a refit
 *     job, trace ingest (uploads in flight), a simulation run, a trace
 *     analysis run, a queued configuration search; the restarted server
 *     finishes what was acknowledged (the search with the answer the request
 *     has when answered at once, once);
 *   - PostgreSQL stopped and started under load: the server stays up,
 *     answers 503 (never 500) while the database is away, and every upload
 *     it acknowledged is stored;
 *   - two servers (replicas) on one database, the one holding a run killed
 *     mid-run: the other takes the run over once its lease is over
 *     (PERFCAST_JOB_LEASE is 2 s here) and finishes it.
 *   - kill -9 after a request with an Idempotency-Key committed, before its
 *     answer: the retry must not run the work again ("lost answer");
 *   - a 5xx answer after a request with an Idempotency-Key committed: the
 *     retry is 303 See Other to what was created, nothing created twice
 *     ("failed answer");
 *   - a refit that kills its worker with SIGKILL (no handler runs): the job
 *     ends failed, naming the callpath ("killed refit"); a queued search
 *     that does: it ends failed after its attempts, saying so ("killed
 *     search").
 * The server is the test build (server/test_hooks.h), whose hooks fire only
 * on the key prefix and callpath named in main().
 * Numeric inputs that crash the server are a table of their own
 * (numeric_cases below), run the same way: the request, then the server
 * must still answer and the job must end failed with its cause.
 *
 * It takes about two minutes on two cores; the waits are bounded, never
 * timed assertions. An argument runs only the case of that name.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

#define LEASE "2" /* PERFCAST_JOB_LEASE of these servers, seconds */
#define DATA "tests/data/"

/* ---- helpers -------------------------------------------------------------- */

static long create_experiment(harness *h, const char *name)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":100000,\"batch_size\":64,"
             "\"data_parallel\":\"ranks\"}}",
             name);
    int st;
    json_t *j = request_json_status(h, "POST", "/v1/experiments", body, &st);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    check(st == 201 && id > 0, "create %s: %d", name, st);
    json_decref(j);
    return id;
}

/* kill -9, start again, wait for /ready. */
static void crash_and_restart(harness *h, const char *during)
{
    check(harness_server_kill(h) == 0, "kill -9 during %s", during);
    check(harness_server_start(h) == 0, "the server starts again after %s", during);
    check(harness_wait_status(h, "/ready", 200, 30), "ready again after %s", during);
}

/* Polls the first column of sql until it is want (or seconds pass). */
static int wait_sql(harness *h, const char *sql, const char *want, double seconds)
{
    char out[256] = "";
    for (double t0 = harness_now(); harness_now() - t0 < seconds; harness_sleep(0.05)) {
        if (!harness_sql(h, sql, out, sizeof out) && !strcmp(out, want))
            return 1;
    }
    return 0;
}

/* Nothing queued or running is left once the workers had their time. */
static void check_nothing_stuck(harness *h, const char *what)
{
    int idle = wait_sql(h,
                        "SELECT (SELECT count(*) FROM jobs WHERE state IN ('queued','running')) + "
                        "(SELECT count(*) FROM sim_runs WHERE state IN ('queued','running')) + "
                        "(SELECT count(*) FROM iteration_runs WHERE state IN ('queued','running')) + "
                        "(SELECT count(*) FROM search_runs WHERE state IN ('queued','running'))",
                        "0", 60);
    check(idle, "%s: no job, run, analysis or search left queued or running", what);
}

static void check_health(harness *h, const char *what)
{
    harness_response r;
    int ok = !harness_get(h, "/health", &r) && r.status == 200;
    harness_response_free(&r);
    check(ok, "%s: the server answers /health", what);
}

/* A perfcast profile of one rank at ranks = x with n callpaths. */
static char *profile_json(int x, int n, int rep)
{
    size_t cap = 256 + (size_t)n * 120;
    char *b = malloc(cap);
    size_t len = (size_t)snprintf(b, cap,
                                  "{\"point\":{\"ranks\":%d},\"repetition\":%d,\"ranks\":[{\"rank\":0,"
                                  "\"steps\":[{\"phase\":\"train\",\"callpaths\":[",
                                  x, rep);
    for (int c = 0; c < n; c++)
        len += (size_t)snprintf(b + len, cap - len,
                                "%s{\"name\":\"k%04d\",\"category\":\"comp\",\"metrics\":"
                                "{\"time\":%.9f}}",
                                c ? "," : "", c, 1e-4 * (c + 1) * (1 + 0.1 * x * (c % 4)));
    snprintf(b + len, cap - len, "]}]}]}");
    return b;
}

/* ---- kill -9 during a refit ------------------------------------------------ */

static void case_refit(harness *h)
{
    long exp = create_experiment(h, "fault-refit");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    static const int xs[] = {2, 4, 8, 16, 32};
    int acked = 0;
    for (int i = 0; i < 5; i++) {
        char *p = profile_json(xs[i], 1500, 1);
        int st;
        json_t *j = request_json_status(h, "POST", path, p, &st);
        acked += st == 202;
        json_decref(j);
        free(p);
    }
    check(acked == 5, "refit: five uploads acknowledged (%d)", acked);
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT count(*) > 0 FROM jobs WHERE experiment_id = %ld AND state = 'running'", exp);
    int caught = wait_sql(h, sql, "t", 20);
    crash_and_restart(h, "a refit");
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state IN ('queued','running')",
             exp);
    check(wait_sql(h, sql, "0", 60), "refit: the job ends after the crash");
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state = "
                              "'failed'", exp) == 0,
          "refit: no job failed");
    check(harness_sql_long(h, "SELECT count(*) FROM model_sets WHERE experiment_id = %ld", exp) >= 1,
          "refit: a model set was committed");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp) ==
              acked,
          "refit: every acknowledged upload is stored");
    printf("# refit: killed %s the job ran\n", caught ? "while" : "before or after");
}

/* ---- kill -9 during trace ingest -------------------------------------------- */

typedef struct uploader {
    harness *h;
    long exp;
    char *trace;
    size_t len;
    _Atomic int stop;
    long acked[256];
    int nacked, attempts;
} uploader;

static void *upload_loop(void *arg)
{
    uploader *u = arg;
    for (int k = 1; !u->stop && u->nacked < 256; k++) {
        char path[160];
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=128&repetition=%d",
                 u->exp, k);
        /* other bytes, the same trace: the gzip header's MTIME (RFC 1952) */
        memcpy(u->trace + 4, &k, 4);
        harness_response r;
        harness_request(u->h, "POST", path, "Content-Type: application/gzip\r\n", u->trace,
                        u->len, &r);
        u->attempts++;
        if (r.status == 202) {
            json_t *j = harness_json(&r);
            u->acked[u->nacked++] = (long)json_integer_value(json_object_get(j, "profile"));
            json_decref(j);
        }
        harness_response_free(&r);
    }
    return NULL;
}

static void case_ingest(harness *h)
{
    uploader u = {.h = h, .exp = create_experiment(h, "fault-ingest")};
    u.trace = harness_read_file(DATA "kineto/ddp128_rank0.json.gz", &u.len);
    check(u.trace != NULL, "ingest: the trace fixture");
    if (!u.trace)
        return;
    pthread_t t;
    pthread_create(&t, NULL, upload_loop, &u);
    harness_sleep(1.5);
    crash_and_restart(h, "trace ingest");
    harness_sleep(1.0);
    u.stop = 1;
    pthread_join(t, NULL);
    check(u.nacked > 0, "ingest: uploads were acknowledged (%d of %d)", u.nacked, u.attempts);
    int lost = 0;
    for (int i = 0; i < u.nacked; i++)
        lost += harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id = %ld", u.acked[i]) != 1;
    check(lost == 0, "ingest: %d of %d acknowledged uploads lost", lost, u.nacked);
    check_nothing_stuck(h, "ingest");
    printf("# ingest: %d uploads acknowledged of %d tried around the crash\n", u.nacked,
           u.attempts);
    free(u.trace);
}

/* ---- kill -9 during a simulation run ---------------------------------------- */

static long new_simulation(harness *h, const char *name)
{
    char body[160];
    snprintf(body, sizeof body, "{\"name\":\"%s\",\"batch_size\":32}", name);
    int st;
    json_t *j = request_json_status(h, "POST", "/v1/simulations", body, &st);
    long sim = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    size_t len;
    char *graph = harness_read_file(DATA "simulate/stepgraph.json", &len);
    char path[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    j = graph ? request_json_status(h, "POST", path, graph, &st) : NULL;
    check(sim > 0 && st == 201, "simulation %s with its step graph: %d", name, st);
    json_decref(j);
    free(graph);
    return sim;
}

/* A run of a few seconds, queued; its id. */
static long queue_run(harness *h, long sim)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs?job=always", sim);
    int st;
    json_t *j = request_json_status(h, "POST", path,
                     "{\"workers\":\"1..16\",\"servers\":[1,2],\"bandwidth\":\"1Gbit\","
                     "\"replications\":5,\"steps\":100}",
                     &st);
    long run = (long)json_integer_value(json_object_get(j, "id"));
    check(st == 202 && run > 0, "run queued: %d", st);
    json_decref(j);
    return run;
}

static void case_simulation(harness *h)
{
    long sim = new_simulation(h, "fault-sim");
    long run = queue_run(h, sim);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM sim_runs WHERE id = %ld", run);
    int caught = wait_sql(h, sql, "running", 20);
    crash_and_restart(h, "a simulation run");
    check(wait_sql(h, sql, "done", 90), "simulation: the run is done after the crash");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND result IS NOT "
                              "NULL", run) == 1,
          "simulation: the run kept its result");
    printf("# simulation: killed %s the run ran; attempts %ld\n", caught ? "while" : "before",
           harness_sql_long(h, "SELECT attempts FROM sim_runs WHERE id = %ld", run));
}

/* ---- kill -9 during a trace analysis ------------------------------------------ */

static void case_analysis(harness *h)
{
    long exp = create_experiment(h, "fault-analysis");
    size_t len;
    char *trace = harness_read_file(DATA "kineto/nccl_ws2_rank0.json.gz", &len);
    check(trace != NULL, "analysis: the trace fixture");
    if (!trace)
        return;
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=2&repetition=1", exp);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/gzip\r\n", trace, len, &r);
    json_t *j = harness_json(&r);
    long prof = (long)json_integer_value(json_object_get(j, "profile"));
    check(r.status == 202 && prof > 0, "analysis: upload %d", r.status);
    json_decref(j);
    harness_response_free(&r);
    free(trace);
    long runs[3];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?job=always%s",
                 exp, prof, i == 1 ? "&device=A100" : i == 2 ? "&device=H100" : "");
        int st;
        j = request_json_status(h, "GET", path, NULL, &st);
        runs[i] = (long)json_integer_value(json_object_get(j, "id"));
        check(st == 202 && runs[i] > 0, "analysis %d queued: %d", i, st);
        json_decref(j);
    }
    crash_and_restart(h, "trace analyses");
    for (int i = 0; i < 3; i++) {
        char sql[160];
        snprintf(sql, sizeof sql, "SELECT state FROM iteration_runs WHERE id = %ld", runs[i]);
        check(wait_sql(h, sql, "done", 60), "analysis %d is done after the crash", i);
    }
}

/* ---- PostgreSQL restarted under load ------------------------------------------ */

typedef struct load {
    harness *h;
    long exp;
    _Atomic int stop;
    int health_failed, server_errors, unavailable, ok;
    long acked[512];
    int nacked;
} load;

static void *health_loop(void *arg)
{
    load *l = arg;
    while (!l->stop) {
        harness_response r;
        if (harness_get(l->h, "/health", &r) || r.status != 200)
            l->health_failed++;
        harness_response_free(&r);
        harness_sleep(0.05);
    }
    return NULL;
}

static void *write_loop(void *arg)
{
    load *l = arg;
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", l->exp);
    for (int k = 1; !l->stop && l->nacked < 512; k++) {
        char *p = profile_json(2 << (k % 5), 20, k);
        harness_response r;
        harness_request(l->h, "POST", path, "Content-Type: application/json\r\n", p, strlen(p),
                        &r);
        if (r.status == 202) {
            json_t *j = harness_json(&r);
            l->acked[l->nacked++] = (long)json_integer_value(json_object_get(j, "profile"));
            json_decref(j);
            l->ok++;
        } else if (r.status == 503) {
            l->unavailable++;
        } else if (r.status >= 500 || r.status == 0) {
            l->server_errors++;
            fprintf(stderr, "during the outage: %d %.200s\n", r.status, r.body ? r.body : "");
        }
        harness_response_free(&r);
        free(p);
        harness_get(l->h, "/v1/experiments", &r);
        if (r.status == 503)
            l->unavailable++;
        else if (r.status >= 500 || r.status == 0)
            l->server_errors++;
        harness_response_free(&r);
    }
    return NULL;
}

static void case_postgres_restart(harness *h)
{
    load l = {.h = h, .exp = create_experiment(h, "fault-pg")};
    pthread_t a, b;
    pthread_create(&a, NULL, health_loop, &l);
    pthread_create(&b, NULL, write_loop, &l);
    harness_sleep(1.0);
    check(harness_pg_stop(h) == 0, "PostgreSQL stopped under load");
    harness_sleep(2.0);
    check(harness_pg_start(h) == 0, "PostgreSQL started again");
    check(harness_wait_status(h, "/ready", 200, 30), "ready once PostgreSQL is back");
    harness_sleep(1.0);
    l.stop = 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    check(l.health_failed == 0, "postgres: /health failed %d times", l.health_failed);
    check(l.server_errors == 0, "postgres: %d answers other than 503 among 5xx", l.server_errors);
    check(l.unavailable > 0, "postgres: the outage was seen (503: %d)", l.unavailable);
    int lost = 0;
    for (int i = 0; i < l.nacked; i++)
        lost += harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id = %ld", l.acked[i]) != 1;
    check(l.nacked > 0 && lost == 0, "postgres: %d of %d acknowledged uploads lost", lost,
          l.nacked);
    check_nothing_stuck(h, "postgres");
    check_health(h, "postgres");
    printf("# postgres: %d uploads acknowledged, %d answers 503 during the outage\n", l.nacked,
           l.unavailable);
}

/* ---- two replicas, the run's holder killed --------------------------------------- */

static long pid_of(harness *h)
{
    char path[300];
    snprintf(path, sizeof path, "%s/server.pid", harness_dir(h));
    size_t len;
    char *t = harness_read_file(path, &len);
    long pid = t ? atol(t) : 0;
    free(t);
    return pid;
}

/* The process id in the worker name of a claimed row: "host:pid:sim-..."
 * for simulation runs, "host/pid/index" for refit jobs; 0 if none. */
static long holder_of(harness *h, const char *table, long id)
{
    char sql[160], out[256] = "";
    snprintf(sql, sizeof sql, "SELECT coalesce(worker, '') FROM %s WHERE id = %ld", table, id);
    if (harness_sql(h, sql, out, sizeof out))
        return 0;
    char *sep = strpbrk(out, ":/");
    return sep ? atol(sep + 1) : 0;
}

/* The row table/id (claimed, "running") is taken from the server holding
 * it by a kill -9; the other must finish it after the lease. */
static void kill_holder(harness *h, harness *other, const char *table, long id)
{
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM %s WHERE id = %ld", table, id);
    check(wait_sql(h, sql, "running", 20), "replicas: %s %ld is claimed", table, id);
    long holder = holder_of(h, table, id);
    harness *victim = holder == pid_of(h) ? h : holder == pid_of(other) ? other : NULL;
    check(victim != NULL, "replicas: %s: the holder is one of the two (pid %ld)", table, holder);
    if (!victim)
        return;
    harness *survivor = victim == h ? other : h;
    long survivor_pid = pid_of(survivor);
    check(harness_server_kill(victim) == 0, "replicas: %s: the holder killed mid-run", table);
    check(wait_sql(survivor, sql, "done", 90), "replicas: the other server finishes %s %ld", table,
          id);
    check(holder_of(survivor, table, id) == survivor_pid, "replicas: %s: the survivor did it",
          table);
    check(harness_sql_long(survivor, "SELECT attempts FROM %s WHERE id = %ld", table, id) == 2,
          "replicas: %s: taken over once, after the lease", table);
    check_health(survivor, "replicas");
    check(harness_server_start(victim) == 0, "replicas: the killed server starts again");
    check(harness_wait_status(victim, "/ready", 200, 30), "replicas: ready again");
}

static void case_replicas(harness *h)
{
    harness *other = harness_second(h);
    check(other != NULL, "replicas: a second server on the database");
    if (!other)
        return;
    /* a simulation run */
    long run = queue_run(h, new_simulation(h, "fault-replicas"));
    kill_holder(h, other, "sim_runs", run);
    /* a refit job: five uploads, then the job that runs their refit */
    long exp = create_experiment(h, "fault-replicas-refit");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    static const int xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++) {
        char *p = profile_json(xs[i], 1500, 1);
        int st;
        json_t *j = request_json_status(h, "POST", path, p, &st);
        check(st == 202, "replicas: upload %d", st);
        json_decref(j);
        free(p);
    }
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state = 'running' "
             "AND rides_with IS NULL", exp);
    wait_sql(h, sql, "1", 20);
    long job = harness_sql_long(h, "SELECT id FROM jobs WHERE experiment_id = %ld AND state = "
                                   "'running' AND rides_with IS NULL ORDER BY id LIMIT 1", exp);
    kill_holder(h, other, "jobs", job);
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state <> 'done'", exp);
    check(wait_sql(h, sql, "0", 60), "replicas: every job of the experiment ends done");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp) == 5,
          "replicas: the five acknowledged uploads are stored");
    harness_close(other, check_failed_count > 0);
}

/* ---- kill -9 between a request's commit and its answer ----------------------
 * The server of this suite is the test build (server/test_hooks.h): a request
 * whose Idempotency-Key starts with "fault-lost-" kills it after its handler
 * committed, before the key's answer is kept or sent; pending keys are held
 * IDEM_LOCK seconds. The retry with the key, once that lock ran out, must
 * not run the work again: before the created work named itself in the key's
 * row in its own transaction, it made a second run. */

#define IDEM_LOCK "2"

/* POST path with the Idempotency-Key key; the answer's status (0: none),
 * its Location into loc. */
static int post_keyed(harness *h, const char *path, const char *key, const char *body,
                      char *loc, size_t cap, int *replayed)
{
    char headers[256];
    snprintf(headers, sizeof headers,
             "Content-Type: application/json\r\nIdempotency-Key: %s\r\n", key);
    harness_response r;
    harness_request(h, "POST", path, headers, body, strlen(body), &r);
    loc[0] = '\0';
    harness_header(&r, "Location", loc, cap);
    char rep[16] = "";
    *replayed = harness_header(&r, "Idempotent-Replayed", rep, sizeof rep) && !strcmp(rep, "true");
    int st = r.status;
    harness_response_free(&r);
    return st;
}

static void case_lost_answer(harness *h)
{
    long sim = new_simulation(h, "fault-lost");
    char path[128], loc[160], want[160];
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs?job=always", sim);
    const char *body = "{\"workers\":\"1..4\",\"servers\":[1],\"bandwidth\":\"1Gbit\","
                       "\"replications\":1,\"steps\":10}";
    int replayed;
    int st = post_keyed(h, path, "fault-lost-run", body, loc, sizeof loc, &replayed);
    check(st == 0, "lost answer: the server died before answering (%d)", st);
    crash_and_restart(h, "a committed run's answer");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 1,
          "lost answer: the run was committed before the crash");
    long run = harness_sql_long(h, "SELECT id FROM sim_runs WHERE sim_experiment_id = %ld", sim);
    snprintf(want, sizeof want, "/v1/simulations/%ld/runs/%ld", sim, run);
    harness_sleep(atof(IDEM_LOCK) + 0.5); /* the dead request's lock runs out */
    for (int i = 0; i < 2; i++) {
        st = post_keyed(h, path, "fault-lost-run", body, loc, sizeof loc, &replayed);
        check(st == 303 && !strcmp(loc, want) && replayed,
              "lost answer: retry %d is 303 See Other to %s: %d %s", i + 1, want, st, loc);
    }
    if (!st) /* the old behaviour ran it again, and the hook killed that too */
        crash_and_restart(h, "a second run of the same key");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 1,
          "lost answer: the retries created no second run (%ld runs)",
          harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld", sim));
    check_nothing_stuck(h, "lost answer");
}

/* ---- a 5xx after a request's commit -------------------------------------------
 * A request whose Idempotency-Key starts with "fault-fail-" has its answer
 * replaced by a 500 after its handler committed (the test build's
 * PERFCAST_TEST_FAIL_ANSWER), as when rendering the answer fails. The key
 * must then be kept with a 303 to what was created, so that a retry, at once,
 * is sent there; the work is not run again. */

static void case_failed_answer(harness *h)
{
    long sim = new_simulation(h, "fault-failed");
    char path[128], loc[160], want[160];
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs?job=always", sim);
    const char *body = "{\"workers\":\"1..4\",\"servers\":[1],\"bandwidth\":\"1Gbit\","
                       "\"replications\":1,\"steps\":10}";
    int replayed;
    int st = post_keyed(h, path, "fault-fail-run", body, loc, sizeof loc, &replayed);
    check(st == 500, "failed answer: the first answer is the 500 (%d)", st);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 1,
          "failed answer: the run was committed before the answer failed");
    long run = harness_sql_long(h, "SELECT id FROM sim_runs WHERE sim_experiment_id = %ld", sim);
    snprintf(want, sizeof want, "/v1/simulations/%ld/runs/%ld", sim, run);
    /* kept as the key's answer by the failed request itself, not left pending */
    char kept[256] = "";
    harness_sql(h, "SELECT state || ' ' || coalesce(status, 0) || ' ' || coalesce(location, '') "
                   "FROM idempotency_keys WHERE key = 'fault-fail-run'",
                kept, sizeof kept);
    char expect[200];
    snprintf(expect, sizeof expect, "done 303 %s", want);
    check(!strcmp(kept, expect), "failed answer: the key keeps \"%s\" (has \"%s\")", expect, kept);
    for (int i = 0; i < 2; i++) { /* at once: within the pending key's lock */
        st = post_keyed(h, path, "fault-fail-run", body, loc, sizeof loc, &replayed);
        check(st == 303 && !strcmp(loc, want) && replayed,
              "failed answer: retry %d is 303 See Other to %s: %d %s", i + 1, want, st, loc);
    }
    harness_response r;
    check(!harness_get(h, want, &r) && r.status == 200, "failed answer: GET %s: %d", want,
          r.status);
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 1,
          "failed answer: the retries created no second run (%ld runs)",
          harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld", sim));
    check_nothing_stuck(h, "failed answer");
}

/* ---- a refit that kills its worker with SIGKILL ------------------------------
 * The test build kills the process (SIGKILL: no handler runs, as with the
 * kernel's OOM killer) when a refit is about to fit callpath KILL_CALLPATH.
 * Restarted each time, the server takes the job over after its lease; the
 * job must end failed, its error naming the callpath, from what its worker
 * committed before fitting it. */

#define KILL_CALLPATH "kdead"

/* Polls /health until the server does not answer (1) or seconds pass. */
static int wait_down(harness *h, double seconds)
{
    for (double t0 = harness_now(); harness_now() - t0 < seconds; harness_sleep(0.1)) {
        harness_response r;
        int up = !harness_get(h, "/health", &r) && r.status == 200;
        harness_response_free(&r);
        if (!up)
            return 1;
    }
    return 0;
}

static void case_killed_refit(harness *h)
{
    long exp = create_experiment(h, "fault-killed-refit");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    static const int xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++) {
        char *p = profile_json(xs[i], 40, 1);
        memcpy(strstr(p, "k0023"), KILL_CALLPATH, 5); /* one callpath of 40 */
        int st;
        json_decref(request_json_status(h, "POST", path, p, &st));
        check(st == 202, "killed refit: upload %d", st);
        free(p);
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    int st;
    json_t *j = request_json_status(h, "POST", path, NULL, &st);
    long job = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    check(st == 202 && job > 0, "killed refit: queued %d", st);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM jobs WHERE id = %ld", job);
    int deaths = 0;
    for (int tries = 0; tries < 6 && !wait_sql(h, sql, "failed", 0.2); tries++) {
        if (!wait_down(h, 30))
            break;
        deaths++;
        crash_and_restart(h, "a refit that kills its worker");
        /* the dead attempt's lease runs out, and the job is claimed again */
        wait_sql(h, sql, "failed", 3 * atof(LEASE));
    }
    check(wait_sql(h, sql, "failed", 30), "killed refit: the job ends failed (%d deaths)", deaths);
    char error[2048] = "";
    snprintf(sql, sizeof sql, "SELECT coalesce(error, '') FROM jobs WHERE id = %ld", job);
    harness_sql(h, sql, error, sizeof error);
    check(strstr(error, "callpath \"" KILL_CALLPATH "\"") != NULL,
          "killed refit: the error names the callpath: %s", error);
    check_nothing_stuck(h, "killed refit");
    check_health(h, "killed refit");
    printf("# killed refit: %d deaths, then failed: %s\n", deaths, error);
}

/* ---- kill -9 during a queued search, and a search that kills its worker -------
 * The test build holds a claimed configuration search 3 s before it
 * searches (PERFCAST_TEST_HOLD_SEARCH, its lease renewed), so that the kill
 * finds it running, and kills the process when a worker has claimed an
 * advice run (PERFCAST_TEST_KILL_SEARCH). */

#define CONFIG_BODY "{\"max_time_s\":400,\"candidates\":{\"ranks\":{\"min\":2,\"max\":64,\"factor\":2}}}"
#define ADVICE_BODY "{\"target\":{\"ranks\":64},\"budget_core_hours\":0.5}"

/* An experiment with a model set to search over. */
static long modeled_experiment(harness *h, const char *name)
{
    long exp = create_experiment(h, name);
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    static const int xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++) {
        char *p = profile_json(xs[i], 4, 1);
        int st;
        json_decref(request_json_status(h, "POST", path, p, &st));
        check(st == 202, "%s: upload %d", name, st);
        free(p);
    }
    request_refit(h, exp);
    harness_sleep(1.2); /* the service's models follow a refit within 1 s */
    return exp;
}

/* POST what?job=always with body: the run's id, its Location into loc.
 * killer: the run kills the server, which may die before it answers (a
 * worker claimed the run at once): the run is then the one committed. */
static long queue_search(harness *h, long exp, const char *what, const char *body, char *loc,
                         size_t cap, int killer)
{
    char path[160], key[64];
    snprintf(path, sizeof path, "/v1/experiments/%ld/%s?job=always", exp, what);
    snprintf(key, sizeof key, "fault-search-%ld", exp); /* one request per experiment */
    int replayed, st = post_keyed(h, path, key, body, loc, cap, &replayed);
    if (st == 0 && killer)
        snprintf(loc, cap, "/v1/experiments/%ld/searches/%ld", exp,
                 harness_sql_long(h, "SELECT coalesce(max(id), 0) FROM search_runs WHERE "
                                     "experiment_id = %ld", exp));
    long run = strstr(loc, "/searches/") ? atol(strstr(loc, "/searches/") + 10) : 0;
    check((st == 202 || (st == 0 && killer)) && run > 0, "%s queued: %d %s", what, st, loc);
    return run;
}

static void case_search(harness *h)
{
    long exp = modeled_experiment(h, "fault-search");
    char path[160], loc[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    int st;
    json_t *direct = request_json_status(h, "POST", path, CONFIG_BODY, &st);
    check(st == 200, "search: the request answered at once: %d", st);
    long run = queue_search(h, exp, "configurations", CONFIG_BODY, loc, sizeof loc, 0);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM search_runs WHERE id = %ld", run);
    int caught = wait_sql(h, sql, "running", 20);
    check(caught, "search: the run is claimed");
    crash_and_restart(h, "a search run");
    check(wait_sql(h, sql, "done", 60), "search: the run is done after the crash");
    json_t *got = request_json_status(h, "GET", loc, NULL, &st);
    check(st == 200 && json_equal(json_object_get(got, "result"), direct),
          "search: its result is the answer of the request answered at once");
    check(json_integer_value(json_object_get(got, "attempts")) == 2,
          "search: taken over once, after the lease (attempts %lld)",
          (long long)json_integer_value(json_object_get(got, "attempts")));
    check(harness_sql_long(h, "SELECT count(*) FROM search_runs WHERE experiment_id = %ld", exp) ==
              1,
          "search: one run, not duplicated");
    json_decref(got);
    json_decref(direct);
    check_nothing_stuck(h, "search");
}

/* The same for a queued configuration search: the run names itself in the
 * key's row (migration 0026) in the transaction that queues it. */
static void case_failed_search_answer(harness *h)
{
    long exp = modeled_experiment(h, "fault-failed-search");
    char path[160], loc[200], want[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations?job=always", exp);
    int replayed;
    int st = post_keyed(h, path, "fault-fail-search", CONFIG_BODY, loc, sizeof loc, &replayed);
    check(st == 500, "failed search answer: the first answer is the 500 (%d)", st);
    check(harness_sql_long(h, "SELECT count(*) FROM search_runs WHERE experiment_id = %ld",
                           exp) == 1,
          "failed search answer: the run was committed before the answer failed");
    long run = harness_sql_long(h, "SELECT id FROM search_runs WHERE experiment_id = %ld", exp);
    snprintf(want, sizeof want, "/v1/experiments/%ld/searches/%ld", exp, run);
    char kept[256] = "";
    harness_sql(h, "SELECT state || ' ' || coalesce(status, 0) || ' ' || coalesce(location, '') "
                   "FROM idempotency_keys WHERE key = 'fault-fail-search'",
                kept, sizeof kept);
    char expect[240];
    snprintf(expect, sizeof expect, "done 303 %s", want);
    check(!strcmp(kept, expect), "failed search answer: the key keeps \"%s\" (has \"%s\")",
          expect, kept);
    st = post_keyed(h, path, "fault-fail-search", CONFIG_BODY, loc, sizeof loc, &replayed);
    check(st == 303 && !strcmp(loc, want) && replayed,
          "failed search answer: the retry is 303 See Other to %s: %d %s", want, st, loc);
    check(harness_sql_long(h, "SELECT count(*) FROM search_runs WHERE experiment_id = %ld",
                           exp) == 1,
          "failed search answer: the retry queued no second search");
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM search_runs WHERE id = %ld", run);
    check(wait_sql(h, sql, "done", 60), "failed search answer: the run is done");
    check_nothing_stuck(h, "failed search answer");
}

static void case_killed_search(harness *h)
{
    long exp = modeled_experiment(h, "fault-killed-search");
    char loc[200];
    long run = queue_search(h, exp, "advice", ADVICE_BODY, loc, sizeof loc, 1);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM search_runs WHERE id = %ld", run);
    int deaths = 0;
    for (int tries = 0; tries < 8 && !wait_sql(h, sql, "failed", 0.2); tries++) {
        if (!wait_down(h, 30))
            break;
        deaths++;
        /* reaped and started again: a worker that claims the run at once can
         * kill it again before it listens, which the next turn sees */
        harness_server_kill(h);
        harness_server_start(h);
        wait_sql(h, sql, "failed", 3 * atof(LEASE));
    }
    check(wait_sql(h, sql, "failed", 30), "killed search: the run ends failed (%d deaths)",
          deaths);
    if (!harness_wait_status(h, "/ready", 200, 5)) { /* not needed unless the above failed */
        harness_server_kill(h);
        check(harness_server_start(h) == 0 && harness_wait_status(h, "/ready", 200, 30),
              "killed search: the server starts again");
    }
    check(deaths >= 1 && deaths <= 3 &&
              harness_sql_long(h, "SELECT attempts FROM search_runs WHERE id = %ld", run) == 3,
          "killed search: 3 attempts at most (%d deaths)", deaths);
    int st;
    json_t *got = request_json_status(h, "GET", loc, NULL, &st);
    char detail[300];
    snprintf(detail, sizeof detail, "%s",
             json_string_value(json_object_get(json_object_get(got, "error"), "detail")) ?: "");
    check(st == 200 && strstr(detail, "the worker stopped") && strstr(detail, "of 3") &&
              json_is_null(json_object_get(got, "result")),
          "killed search: its error says why: %s", detail);
    check(harness_sql_long(h, "SELECT count(*) FROM search_runs WHERE experiment_id = %ld", exp) ==
              1,
          "killed search: one run");
    json_decref(got);
    check_nothing_stuck(h, "killed search");
    check_health(h, "killed search");
    printf("# killed search: %d deaths, then failed: %s\n", deaths, detail);
}

/* A queued search that crashes its worker (abort(): PERFCAST_TEST_CRASH_SEARCH
 * matches its request's CRASH_MARK) ends failed after that one attempt, its
 * error naming the signal, recorded by the crash handler before the process
 * died; not claimed again after its lease. */
#define CRASH_MARK "\"max_time_s\": 777" /* as jsonb prints it */
#define CRASH_BODY "{\"max_time_s\":777,\"candidates\":{\"ranks\":{\"min\":2,\"max\":64,\"factor\":2}}}"

static void case_crashed_search(harness *h)
{
    long exp = modeled_experiment(h, "fault-crashed-search");
    char loc[200];
    long run = queue_search(h, exp, "configurations", CRASH_BODY, loc, sizeof loc, 1);
    char sql[200];
    snprintf(sql, sizeof sql, "SELECT state FROM search_runs WHERE id = %ld", run);
    check(wait_down(h, 30), "crashed search: the worker's abort() ends the process");
    check(wait_sql(h, sql, "failed", 5), "crashed search: the run is failed when the process is gone");
    harness_server_kill(h); /* reaped */
    check(harness_server_start(h) == 0 && harness_wait_status(h, "/ready", 200, 30),
          "crashed search: the server starts again");
    harness_sleep(3 * atof(LEASE)); /* a lease that would have run out by now */
    check(harness_sql_long(h, "SELECT attempts FROM search_runs WHERE id = %ld", run) == 1,
          "crashed search: one attempt, not retried (attempts %ld)",
          harness_sql_long(h, "SELECT attempts FROM search_runs WHERE id = %ld", run));
    int st;
    json_t *got = request_json_status(h, "GET", loc, NULL, &st);
    char detail[400];
    snprintf(detail, sizeof detail, "%s",
             json_string_value(json_object_get(json_object_get(got, "error"), "detail")) ?: "");
    check(st == 200 && !strcmp(json_string_value(json_object_get(got, "state")) ?: "", "failed") &&
              strstr(detail, "crashed (SIGABRT) during attempt 1") &&
              strstr(detail, "not retried") && json_is_null(json_object_get(got, "result")),
          "crashed search: its error names the signal: %s", detail);
    json_decref(got);
    check_nothing_stuck(h, "crashed search");
    check_health(h, "crashed search");
    printf("# crashed search: %s\n", detail);
}

/* ---- numeric faults --------------------------------------------------------------
 * Requests whose arithmetic crashed the server: each is sent, then the
 * server must answer /health, and a job it queued must end failed naming the
 * cause after its first attempt. Before the modelers' numeric hardening
 * the first of them killed the process (GSL's default error handler). */

typedef struct numeric_case {
    const char *name;
    const char *method, *path; /* "{exp}" in path: a fresh experiment's id */
    const char *body;
    int want_status;           /* the request's answer */
} numeric_case;

#define PROFILE_TIME(t)                                                                      \
    "{\"point\":{\"ranks\":2},\"repetition\":1,\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":"        \
    "\"train\",\"callpaths\":[{\"name\":\"gemm\",\"category\":\"comp\",\"metrics\":{\"time\":" t \
    "}}]}]}]}"

static const numeric_case numeric_cases[] = {
    /* the fit that took the process down through GSL's aborting handler:
     * coordinates beyond the modeler's limit are refused naming the field */
    {"fit of coordinates near DBL_MAX", "POST", "/v1/fit?modeler=extrap",
     "{\"parameters\":[\"x\"],\"points\":[{\"point\":[1e308],\"values\":[0]},"
     "{\"point\":[5e307],\"values\":[1]},{\"point\":[3.3333333333333334e307],\"values\":[2]},"
     "{\"point\":[2.5e307],\"values\":[3]},{\"point\":[2e307],\"values\":[4]}]}",
     400},
    /* the same shape inside the limit: fitted, or the model carries its
     * numeric_failure; the process stays up either way */
    {"fit of coordinates at the limit", "POST", "/v1/fit?modeler=extrap",
     "{\"parameters\":[\"x\"],\"points\":[{\"point\":[1e50],\"values\":[0]},"
     "{\"point\":[5e49],\"values\":[1]},{\"point\":[3.3333333333333334e49],\"values\":[2]},"
     "{\"point\":[2.5e49],\"values\":[3]},{\"point\":[2e49],\"values\":[4]}]}",
     200},
    /* a time whose square overflows made every later refit fail */
    {"profile time of 1e155", "POST", "/v1/experiments/{exp}/profiles", PROFILE_TIME("1e155"),
     400},
    {"profile time of 1e308", "POST", "/v1/experiments/{exp}/profiles", PROFILE_TIME("1e308"),
     400},
    {NULL, NULL, NULL, NULL, 0},
};

static void case_numeric(harness *h)
{
    for (const numeric_case *c = numeric_cases; c->name; c++) {
        char path[256];
        const char *at = strstr(c->path, "{exp}");
        if (at)
            snprintf(path, sizeof path, "%.*s%ld%s", (int)(at - c->path), c->path,
                     create_experiment(h, c->name), at + 5);
        else
            snprintf(path, sizeof path, "%s", c->path);
        int st;
        json_t *j = request_json_status(h, c->method, path, c->body, &st);
        json_decref(j);
        check(st == c->want_status, "numeric %s: %d, want %d", c->name, st, c->want_status);
        check_health(h, c->name);
        check_nothing_stuck(h, c->name);
    }
}

int main(int argc, char **argv)
{
    /* the test build (server/test_hooks.h): the hooks below fire only on
     * the Idempotency-Key prefixes, the callpath and the search kinds named */
    const char *env[] = {"PERFCAST_JOB_LEASE=" LEASE, "PERFCAST_WORKERS=2",
                         "PERFCAST_TEST_KILL_ANSWER=fault-lost-",
                         "PERFCAST_TEST_FAIL_ANSWER=fault-fail-",
                         "PERFCAST_TEST_HOLD_SEARCH=configurations",
                         "PERFCAST_TEST_KILL_SEARCH=advice",
                         "PERFCAST_TEST_CRASH_SEARCH=" CRASH_MARK,
                         "PERFCAST_TEST_KILL_CALLPATH=" KILL_CALLPATH,
                         "PERFCAST_TEST_IDEMPOTENCY_LOCK=" IDEM_LOCK, NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        check(0, "harness did not start");
        return check_summary();
    }
    static const struct {
        const char *name;
        void (*run)(harness *);
    } cases[] = {
        {"refit", case_refit},
        {"ingest", case_ingest},
        {"simulation", case_simulation},
        {"analysis", case_analysis},
        {"postgres", case_postgres_restart},
        {"replicas", case_replicas},
        {"numeric", case_numeric},
        {"search", case_search},
        {"lost answer", case_lost_answer},
        {"failed answer", case_failed_answer},
        {"failed search answer", case_failed_search_answer},
        {"killed refit", case_killed_refit},
        {"killed search", case_killed_search},
        {"crashed search", case_crashed_search},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        if (argc > 1 && strcmp(argv[1], cases[i].name)) /* one case by its name */
            continue;
        double t0 = harness_now();
        int failed = check_failed_count;
        cases[i].run(h);
        printf("# %s: %s in %.1f s\n", cases[i].name, check_failed_count > failed ? "FAILED" : "ok",
               harness_now() - t0);
        fflush(stdout);
    }
    check_health(h, "after every case");
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
