/*
 * test_api_idempotency.c — Idempotency-Key (api/idempotency.h) over real
 * HTTP and PostgreSQL: a retried POST with the key it first sent gets the
 * first answer (status, body, Location) and creates nothing more, for an
 * experiment, a profile upload, a refit, a simulation and its run; the key
 * with another body or on another route is 422 naming the header; a key
 * whose first request is still running is 409; an expired key, or a pending
 * one whose process died, runs anew; malformed keys are 400. Keys outlive a
 * restart and hold across two servers on one database.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

#define EXP_BODY                                                                              \
    "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","                       \
    "\"training\":{\"train_samples\":50000,\"batch_size\":256,\"data_parallel\":\"ranks\"}}"

/* POST with an Idempotency-Key (key NULL: none). */
static void post_key(harness *h, const char *path, const char *key, const char *body,
                     harness_response *r)
{
    char headers[512];
    snprintf(headers, sizeof headers, "Content-Type: application/json\r\n%s%s%s",
             key ? "Idempotency-Key: " : "", key ? key : "", key ? "\r\n" : "");
    harness_request(h, "POST", path, headers, body, strlen(body), r);
}

static long id_of(const harness_response *r, const char *member)
{
    json_t *j = harness_json(r);
    long id = (long)json_integer_value(json_object_get(j, member));
    json_decref(j);
    return id;
}

/* The first answer and the retry's are the same; the retry says it is one. */
static void check_replay(const harness_response *a, const harness_response *b, const char *what)
{
    check(a->status == b->status, "%s: retry status %d, first %d", what, b->status, a->status);
    check(a->body && b->body && a->body_len == b->body_len && !strcmp(a->body, b->body),
          "%s: the retry's body is the first's: %.200s / %.200s", what, a->body ? a->body : "",
          b->body ? b->body : "");
    char la[200] = "", lb[200] = "", rep[16] = "";
    harness_header(a, "Location", la, sizeof la);
    harness_header(b, "Location", lb, sizeof lb);
    check(!strcmp(la, lb), "%s: same Location (%s / %s)", what, la, lb);
    check(harness_header(b, "Idempotent-Replayed", rep, sizeof rep) && !strcmp(rep, "true"),
          "%s: the retry says Idempotent-Replayed: true", what);
}

static char *profile_text(int x)
{
    char *b = malloc(512);
    snprintf(b, 512,
             "{\"point\":{\"ranks\":%d},\"ranks\":[{\"rank\":0,\"steps\":[{\"phase\":\"train\","
             "\"callpaths\":[{\"name\":\"k\",\"category\":\"comp\",\"metrics\":{\"time\":%g}}]}]}]}",
             x, 0.001 * x);
    return b;
}

static long test_experiment(harness *h)
{
    char body[512];
    snprintf(body, sizeof body, EXP_BODY, "idem-a");
    harness_response a, b, c;
    post_key(h, "/v1/experiments", "exp-key-1", body, &a);
    post_key(h, "/v1/experiments", "exp-key-1", body, &b);
    check(a.status == 201, "create: %d %s", a.status, a.body);
    check_replay(&a, &b, "experiment");
    check(harness_sql_long(h, "SELECT count(*) FROM experiments WHERE name = 'idem-a'") == 1,
          "one experiment for two requests with one key");
    long exp = id_of(&a, "id");

    /* the same key, another body: 422 naming the header, nothing created */
    snprintf(body, sizeof body, EXP_BODY, "idem-b");
    post_key(h, "/v1/experiments", "exp-key-1", body, &c);
    json_t *j = harness_json(&c);
    check(c.status == 422 && !strcmp(json_string_value(json_object_get(j, "field")) ?: "",
                                     "Idempotency-Key"),
          "another body with the key: 422 naming Idempotency-Key, got %d %s", c.status, c.body);
    check(harness_sql_long(h, "SELECT count(*) FROM experiments WHERE name = 'idem-b'") == 0,
          "nothing created by the refused reuse");
    json_decref(j);
    harness_response_free(&c);
    /* without a key the same request runs (and meets the name: 409) */
    snprintf(body, sizeof body, EXP_BODY, "idem-a");
    post_key(h, "/v1/experiments", NULL, body, &c);
    check(c.status == 409, "no key: the request runs again (409 for the name), got %d", c.status);
    harness_response_free(&c);
    /* a 4xx answer is kept too: the retry gets the same 409 */
    harness_response d, e;
    post_key(h, "/v1/experiments", "exp-key-409", body, &d);
    post_key(h, "/v1/experiments", "exp-key-409", body, &e);
    check(d.status == 409, "name in use with a key: 409, got %d", d.status);
    check_replay(&d, &e, "a kept 409");
    harness_response_free(&d);
    harness_response_free(&e);
    harness_response_free(&a);
    harness_response_free(&b);
    return exp;
}

static void test_bad_keys(harness *h)
{
    char body[512], longkey[300];
    snprintf(body, sizeof body, EXP_BODY, "idem-bad");
    memset(longkey, 'k', 256);
    longkey[256] = '\0';
    const char *keys[] = {longkey, "two words"};
    for (size_t i = 0; i < 2; i++) {
        harness_response r;
        post_key(h, "/v1/experiments", keys[i], body, &r);
        check(r.status == 400 && strstr(r.body, "\"field\":\"Idempotency-Key\""),
              "key %.20s...: 400 naming the header, got %d %s", keys[i], r.status, r.body);
        harness_response_free(&r);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM experiments WHERE name = 'idem-bad'") == 0,
          "nothing created under a malformed key");
}

static void test_upload_refit(harness *h, long exp)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    char *p = profile_text(2);
    harness_response a, b;
    post_key(h, path, "upload-1", p, &a);
    post_key(h, path, "upload-1", p, &b);
    check(a.status == 202 || a.status == 201, "upload: %d %s", a.status, a.body);
    check_replay(&a, &b, "upload");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp) == 1,
          "one profile stored");
    harness_response_free(&a);
    harness_response_free(&b);
    /* the key on another route: 422 */
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    post_key(h, path, "upload-1", p, &a);
    check(a.status == 422, "a key of another route: 422, got %d %s", a.status, a.body);
    harness_response_free(&a);
    free(p);
    long jobs = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp);
    post_key(h, path, "refit-1", "", &a);
    /* let the first refit finish, so that a second request would queue a new job */
    long job = id_of(&a, "job");
    check(harness_wait_job(h, job, 60), "the refit finishes");
    post_key(h, path, "refit-1", "", &b);
    check(a.status == 202, "refit: %d %s", a.status, a.body);
    check_replay(&a, &b, "refit");
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp) <=
              jobs + 1,
          "the retried refit queued no job of its own");
    harness_response_free(&a);
    harness_response_free(&b);
}

static void test_simulation(harness *h)
{
    harness_response a, b;
    post_key(h, "/v1/simulations", "sim-1", "{\"name\":\"idem-sim\",\"batch_size\":8}", &a);
    post_key(h, "/v1/simulations", "sim-1", "{\"name\":\"idem-sim\",\"batch_size\":8}", &b);
    check(a.status == 201, "simulation: %d %s", a.status, a.body);
    check_replay(&a, &b, "simulation");
    long sim = id_of(&a, "id");
    harness_response_free(&a);
    harness_response_free(&b);
    char path[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    const char *graph = "{\"steps\":[{\"ops\":[{\"id\":\"c\",\"resource\":\"worker\","
                        "\"duration\":0.01}]}]}";
    post_key(h, path, "simprof-1", graph, &a);
    check(a.status == 201, "simulation profile: %d %s", a.status, a.body);
    harness_response_free(&a);
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    const char *run = "{\"workers\":\"1..2\",\"bandwidth\":\"1Gbit\",\"steps\":10,"
                      "\"replications\":1}";
    post_key(h, path, "run-1", run, &a);
    post_key(h, path, "run-1", run, &b);
    check(a.status == 201, "a small run answers in the request: %d %s", a.status, a.body);
    check_replay(&a, &b, "simulation run");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 1,
          "one run for two requests with one key");
    harness_response_free(&a);
    harness_response_free(&b);
    /* a queued run (?job=always): 202 and the same run again */
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs?job=always", sim);
    post_key(h, path, "run-2", run, &a);
    post_key(h, path, "run-2", run, &b);
    check(a.status == 202, "?job=always: 202, got %d %s", a.status, a.body);
    check(b.status == 202 && id_of(&a, "id") == id_of(&b, "id"),
          "the retry names the same queued run");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld",
                           sim) == 2,
          "the retry of the queued run stored none");
    harness_response_free(&a);
    harness_response_free(&b);
}

/* Rows written as the store writes them: a pending key whose holder still
 * runs (409), one whose holder died (taken over), and an expired one. */
static void test_pending_and_expiry(harness *h)
{
    char body[512], out[64];
    snprintf(body, sizeof body, EXP_BODY, "idem-pending");
    /* a first request with this key is "running": its row pending and locked */
    harness_response a;
    post_key(h, "/v1/experiments", "pend-1", body, &a);
    harness_response_free(&a);
    harness_sql(h,
                "UPDATE idempotency_keys SET state = 'pending', status = NULL, body = NULL, "
                "locked_until = now() + interval '1 hour' WHERE key = 'pend-1' RETURNING 1",
                out, sizeof out);
    post_key(h, "/v1/experiments", "pend-1", body, &a);
    char ra[16] = "";
    check(a.status == 409 && harness_header(&a, "Retry-After", ra, sizeof ra) &&
              strstr(a.body, "Idempotency-Key"),
          "a key whose first request runs: 409 with Retry-After, got %d %s", a.status, a.body);
    harness_response_free(&a);
    /* its holder died after its commit: the lock ran out, and the key names
     * what it created (migration 0022): 303 to it, nothing runs again */
    harness_sql(h,
                "UPDATE idempotency_keys SET locked_until = now() - interval '1 second' "
                "WHERE key = 'pend-1' RETURNING 1",
                out, sizeof out);
    char created[160] = "", loc[160] = "";
    harness_sql(h, "SELECT created FROM idempotency_keys WHERE key = 'pend-1'", created,
                sizeof created);
    post_key(h, "/v1/experiments", "pend-1", body, &a);
    harness_header(&a, "Location", loc, sizeof loc);
    check(a.status == 303 && !strncmp(created, "/v1/experiments/", 16) && !strcmp(loc, created),
          "a dead holder's key that names what it created: 303 to it (%s), got %d %s %s",
          created, a.status, loc, a.body);
    harness_response_free(&a);
    /* its holder died before its commit: nothing named, the lock ran out,
     * the request runs anew (and meets the name) */
    harness_sql(h,
                "UPDATE idempotency_keys SET state = 'pending', status = NULL, body = NULL, "
                "created = NULL, locked_until = now() - interval '1 second' "
                "WHERE key = 'pend-1' RETURNING 1",
                out, sizeof out);
    post_key(h, "/v1/experiments", "pend-1", body, &a);
    check(a.status == 409 && !strstr(a.body, "Idempotency-Key"),
          "a dead holder's key is taken over: the request runs (409 for the name), got %d %s",
          a.status, a.body);
    harness_response_free(&a);
    /* an expired key: a new request */
    snprintf(body, sizeof body, EXP_BODY, "idem-exp1");
    post_key(h, "/v1/experiments", "exp-old", body, &a);
    check(a.status == 201, "create: %d", a.status);
    harness_response_free(&a);
    harness_sql(h,
                "UPDATE idempotency_keys SET expires_at = now() - interval '1 second' "
                "WHERE key = 'exp-old' RETURNING 1",
                out, sizeof out);
    snprintf(body, sizeof body, EXP_BODY, "idem-exp2");
    post_key(h, "/v1/experiments", "exp-old", body, &a);
    check(a.status == 201, "an expired key is free for a new request: %d %s", a.status, a.body);
    harness_response_free(&a);
}

/* Kept in PostgreSQL: the answer survives a restart and is the same from a
 * second server process on the database. */
static void test_restart_and_replicas(harness *h)
{
    char body[512];
    snprintf(body, sizeof body, EXP_BODY, "idem-durable");
    harness_response a, b, c;
    post_key(h, "/v1/experiments", "durable-1", body, &a);
    check(a.status == 201, "create: %d", a.status);
    check(harness_server_stop(h) == 0 && harness_server_start(h) == 0, "server restarted");
    check(harness_wait_status(h, "/ready", 200, 30), "ready again");
    post_key(h, "/v1/experiments", "durable-1", body, &b);
    check_replay(&a, &b, "after a restart");
    harness *second = harness_second(h);
    check(second != NULL, "a second server on the database");
    if (second) {
        post_key(second, "/v1/experiments", "durable-1", body, &c);
        check_replay(&a, &c, "from the other server");
        harness_response_free(&c);
        harness_close(second, check_failed_count > 0);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM experiments WHERE name = 'idem-durable'") ==
              1,
          "one experiment for three requests");
    harness_response_free(&a);
    harness_response_free(&b);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness did not start");
        return check_summary();
    }
    long exp = test_experiment(h);
    test_bad_keys(h);
    test_upload_refit(h, exp);
    test_simulation(h);
    test_pending_and_expiry(h);
    test_restart_and_replicas(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
