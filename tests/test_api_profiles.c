/*
 * test_api_profiles.c — uploads and jobs over HTTP against a real
 * PostgreSQL: POST /v1/experiments/{id}/profiles (202 and the rows in the
 * database, duplicates, coalescing, the point from body and query, every
 * refusal storing nothing, 415/404), GET /v1/jobs/{id}, jobs on /metrics,
 * and that nothing acknowledged is lost: an upload answered 202 survives
 * kill -9 of the server right after the answer, uploads while PostgreSQL is
 * down get 503 + Retry-After and succeed once it is back, and a job whose
 * worker was killed in the middle of its refit finishes after a restart.
 *
 * Two servers: one without workers (jobs stay queued, so coalescing and job
 * views are deterministic), then one with workers and a 2-second lease.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check.h"
#include "tests/harness.h"

static const char experiment_doc[] =
    "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
    "\"training\":{\"train_samples\":1000,\"validation_samples\":100,\"batch_size\":8,"
    "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":0}}";

static const char *const json_header = "Content-Type: application/json\r\n";

static long create(harness *h, const char *name)
{
    char doc[1024];
    snprintf(doc, sizeof doc, experiment_doc, name);
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    check(r.status == 201 && id > 0, "create %s: %d %s", name, r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return id;
}

/* A profile: 2 ranks x 3 train steps x ncp callpaths (time, visits), plus a
 * between-steps gap on rank 0. point_json like "\"point\":{\"ranks\":8}," or
 * "". scale varies the values (and so the bytes). */
static char *profile(const char *point_json, int ncp, double scale)
{
    size_t cap = 512 + (size_t)ncp * 6 * 120;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{%s\"ranks\":[", point_json);
    for (int r = 0; r < 2; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < 3; s++) {
            n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                                  s ? "," : "");
            for (int k = 0; k < ncp; k++)
                n += (size_t)snprintf(b + n, cap - n,
                                      "%s{\"name\":\"%s_%d\",\"category\":\"%s\",\"metrics\":"
                                      "{\"time\":%.6f,\"visits\":%d}}",
                                      k ? "," : "", k % 3 == 1 ? "nccl_allreduce" : "gemm", k,
                                      k % 3 == 1 ? "comm" : "comp",
                                      scale * (0.001 * (k + 1)) * (1 + 0.01 * (r + s)), k + 1);
            n += (size_t)snprintf(b + n, cap - n, "]}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]%s}",
                              r ? ""
                                : ",\"between_steps\":[{\"callpaths\":[{\"name\":\"memcpy_h2d\","
                                  "\"category\":\"mem\",\"metrics\":{\"time\":0.0005}}]}]");
    }
    snprintf(b + n, cap - n, "]}");
    return b;
}

static int post(harness *h, long exp, const char *query, const char *headers, const char *body,
                size_t len, harness_response *r)
{
    char path[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query ? query : "");
    return harness_request(h, "POST", path, headers, body, len, r);
}

typedef struct upload_answer {
    int status;
    long profile, job;
    int duplicate; /* -1 when absent */
    char location[64];
} upload_answer;

static upload_answer upload(harness *h, long exp, const char *query, const char *body)
{
    harness_response r;
    upload_answer a = {0};
    a.duplicate = -1;
    post(h, exp, query, json_header, body, strlen(body), &r);
    json_t *j = harness_json(&r);
    a.status = r.status;
    a.profile = (long)json_integer_value(json_object_get(j, "profile"));
    a.job = (long)json_integer_value(json_object_get(j, "job"));
    json_t *d = json_object_get(j, "duplicate");
    a.duplicate = json_is_boolean(d) ? json_is_true(d) : -1;
    harness_header(&r, "Location", a.location, sizeof a.location);
    if (r.status != 202 && r.status != 200)
        fprintf(stderr, "upload answered %d: %s\n", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return a;
}

/* A problem+json answer with this status whose detail contains want. */
static void check_problem(harness_response *r, int status, const char *want, const char *what)
{
    char ct[128] = "";
    harness_header(r, "Content-Type", ct, sizeof ct);
    json_t *doc = harness_json(r);
    const char *detail = json_string_value(json_object_get(doc, "detail"));
    check(r->status == status && !strcmp(ct, "application/problem+json") && detail &&
              strstr(detail, want),
          "%s: %d %s, want %d with \"%s\"", what, r->status, r->body ? r->body : "", status, want);
    json_decref(doc);
}

typedef struct counts {
    long profiles, rows, callpaths, jobs;
} counts;

static counts count_all(harness *h)
{
    counts c = {harness_sql_long(h, "SELECT count(*) FROM profiles"),
                harness_sql_long(h, "SELECT count(*) FROM profile_rows"),
                harness_sql_long(h, "SELECT count(*) FROM callpaths"),
                harness_sql_long(h, "SELECT count(*) FROM jobs")};
    return c;
}

static int same_counts(counts a, counts b)
{
    return a.profiles == b.profiles && a.rows == b.rows && a.callpaths == b.callpaths &&
           a.jobs == b.jobs;
}

static json_t *get_job(harness *h, long id, int *status)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", id);
    harness_response r;
    harness_get(h, path, &r);
    *status = r.status;
    json_t *j = harness_json(&r);
    harness_response_free(&r);
    return j;
}

/* j as compact text, for messages (one static buffer). */
static const char *dump(const json_t *j)
{
    static char buf[2048];
    size_t n = j ? json_dumpb(j, buf, sizeof buf - 1, JSON_COMPACT) : 0;
    buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
    return buf;
}

static const char *job_state(json_t *j)
{
    const char *s = json_string_value(json_object_get(j, "state"));
    return s ? s : "";
}

/* ---- server without workers ------------------------------------------------ */

static void test_upload(harness *h)
{
    long exp = create(h, "uploads");
    char *body = profile("\"point\":{\"ranks\":8},", 4, 1);
    upload_answer a = upload(h, exp, NULL, body);
    check(a.status == 202 && a.profile > 0 && a.job > 0 && a.duplicate == 0,
          "upload: %d profile %ld job %ld dup %d", a.status, a.profile, a.job, a.duplicate);
    char want[64];
    snprintf(want, sizeof want, "/v1/jobs/%ld", a.job);
    check(!strcmp(a.location, want), "Location \"%s\", want %s", a.location, want);
    /* 2 ranks x 3 steps x 4 callpaths x 2 metrics + 1 gap row */
    check(harness_sql_long(h, "SELECT count(*) FROM profile_rows WHERE profile_id = %ld", a.profile) == 49,
          "rows of the upload");
    check(harness_sql_long(h, "SELECT count(*) FROM profile_rows WHERE profile_id = %ld AND phase = 2",
                   a.profile) == 1,
          "the between-steps row");
    check(harness_sql_long(h, "SELECT count(*) FROM callpaths WHERE experiment_id = %ld", exp) == 5,
          "callpaths");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id = %ld AND job_id = %ld AND "
                      "point = '{8}' AND length(raw) = %zu",
                   a.profile, a.job, strlen(body)) == 1,
          "profile row with raw bytes, point and job");

    int st;
    json_t *j = get_job(h, a.job, &st);
    check(st == 200 && !strcmp(job_state(j), "queued") &&
              json_integer_value(json_object_get(j, "id")) == a.job &&
              json_integer_value(json_object_get(j, "experiment")) == exp &&
              json_integer_value(json_object_get(j, "attempts")) == 0 &&
              json_is_null(json_object_get(j, "error")) &&
              json_is_null(json_object_get(j, "model_set")) &&
              json_is_string(json_object_get(j, "created_at")),
          "job view: %d %s", st, dump(j));
    json_decref(j);

    /* the same bytes again: 200, the first ids, nothing stored */
    counts before = count_all(h);
    upload_answer d = upload(h, exp, NULL, body);
    check(d.status == 200 && d.duplicate == 1 && d.profile == a.profile && d.job == a.job,
          "duplicate: %d dup %d %ld/%ld", d.status, d.duplicate, d.profile, d.job);
    check(same_counts(before, count_all(h)), "duplicate stored nothing");

    /* coalescing: more uploads while the job is queued join it */
    for (int i = 0; i < 3; i++) {
        char point[64];
        snprintf(point, sizeof point, "\"point\":{\"ranks\":%d},", 16 << i);
        char *b = profile(point, 4, 1);
        upload_answer c = upload(h, exp, NULL, b);
        check(c.status == 202 && c.job == a.job, "upload %d joined job %ld: %d %ld", i, a.job,
              c.status, c.job);
        free(b);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp) == 1,
          "four uploads, one job");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld AND job_id = %ld",
                   exp, a.job) == 4,
          "four profiles name it");
    free(body);
}

static void test_point_and_repetition(harness *h)
{
    long exp = create(h, "points");
    char *nopoint = profile("", 2, 3);
    upload_answer a = upload(h, exp, "?ranks=12&repetition=2", nopoint);
    check(a.status == 202, "point from the query: %d", a.status);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id = %ld AND point = '{12}' AND "
                      "repetition = 2",
                   a.profile) == 1,
          "point and repetition stored from the query");
    free(nopoint);

    char *body = profile("\"point\":{\"ranks\":8},", 2, 4);
    upload_answer b = upload(h, exp, "?ranks=8", body);
    check(b.status == 202, "body and query agree: %d", b.status);
    free(body);

    counts before = count_all(h);
    harness_response r;
    body = profile("\"point\":{\"ranks\":8},", 2, 5);
    post(h, exp, "?ranks=16", json_header, body, strlen(body), &r);
    check_problem(&r, 400, "the body's point says 8, the query 16", "body and query disagree");
    harness_response_free(&r);
    char *withrep = profile("\"point\":{\"ranks\":8},\"repetition\":1,", 2, 5);
    post(h, exp, "?repetition=3", json_header, withrep, strlen(withrep), &r);
    check_problem(&r, 400, "the body says 1, the query 3", "repetition in body and query disagree");
    harness_response_free(&r);
    free(withrep);
    post(h, exp, "?batch=4", json_header, body, strlen(body), &r);
    check_problem(&r, 400, "\"batch\" is not a parameter", "unknown query parameter");
    harness_response_free(&r);
    free(body);
    body = profile("\"point\":{\"nodes\":8},", 2, 5);
    post(h, exp, NULL, json_header, body, strlen(body), &r);
    check_problem(&r, 400, "point.nodes", "unknown body parameter");
    harness_response_free(&r);
    free(body);
    body = profile("", 2, 6);
    post(h, exp, NULL, json_header, body, strlen(body), &r);
    check_problem(&r, 400, "point.ranks: no value", "no point at all");
    harness_response_free(&r);
    post(h, exp, "?ranks=eight", json_header, body, strlen(body), &r);
    check_problem(&r, 400, "finite number", "non-numeric query value");
    harness_response_free(&r);
    free(body);
    check(same_counts(before, count_all(h)), "refused points stored nothing");
}

static void test_refusals(harness *h)
{
    long exp = create(h, "refusals");
    char *good = profile("\"point\":{\"ranks\":2},", 3, 7);
    upload_answer first = upload(h, exp, NULL, good);
    check(first.status == 202, "first upload: %d", first.status);
    counts before = count_all(h);
    harness_response r;

    /* truncated and malformed bodies: 400 with where, nothing stored */
    size_t cut = strlen(good) / 2;
    post(h, exp, NULL, json_header, good, cut, &r);
    check_problem(&r, 400, "malformed profile", "truncated body");
    json_t *j = harness_json(&r);
    check(json_integer_value(json_object_get(j, "offset")) > 0 &&
              json_integer_value(json_object_get(j, "line")) == 1,
          "truncated body: line/offset in %s", r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    const char *bad[] = {
        "",
        "{\"ranks\":[]}",
        "{\"point\":{\"ranks\":2},\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":"
        "\"k\",\"category\":\"gpu\",\"metrics\":{\"time\":1}}]}]}]}",
        "{\"point\":{\"ranks\":2},\"ranks\":[{\"rank\":0,\"steps\":[{\"callpaths\":[{\"name\":"
        "\"k\",\"category\":\"comp\",\"metrics\":{\"time\":-1}}]}]}]}",
        "[1,2,3]",
    };
    const char *want[] = {"malformed", "malformed", "category", "time", "malformed"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        post(h, exp, NULL, json_header, bad[i], strlen(bad[i]), &r);
        char what[32];
        snprintf(what, sizeof what, "malformed body %zu", i);
        check_problem(&r, 400, want[i], what);
        harness_response_free(&r);
    }
    /* a callpath that changes category: 400, and its new callpaths vanish too */
    char *recat = profile("\"point\":{\"ranks\":4},", 5, 7);
    char *p = strstr(recat, "\"gemm_0\",\"category\":\"comp\"");
    memcpy(p + strlen("\"gemm_0\",\"category\":\""), "host", 4);
    post(h, exp, NULL, json_header, recat, strlen(recat), &r);
    check_problem(&r, 400, "gemm_0", "category change");
    harness_response_free(&r);
    free(recat);
    /* the same bytes at another point */
    post(h, exp, "?ranks=2&repetition=1", json_header, good, strlen(good), &r);
    check(r.status == 200, "same bytes, same point via the query too: %d", r.status);
    harness_response_free(&r);

    /* formats */
    post(h, exp, "?format=talpas", json_header, good, strlen(good), &r);
    check_problem(&r, 415, "talpas", "unsupported format");
    harness_response_free(&r);
    post(h, exp, "?format=kineto", json_header, good, strlen(good), &r);
    check_problem(&r, 400, "malformed profile (kineto)", "perfcast JSON read as a trace");
    harness_response_free(&r);
    post(h, exp, NULL, "Content-Type: text/csv\r\n", good, strlen(good), &r);
    check_problem(&r, 415, "text/csv", "unsupported content type");
    harness_response_free(&r);
    check(same_counts(before, count_all(h)), "refused uploads stored nothing");
    char *other = profile("\"point\":{\"ranks\":32},", 3, 8);
    post(h, exp, "?format=perfcast", "Content-Type: application/octet-stream\r\n", other,
         strlen(other), &r);
    check(r.status == 202, "?format=perfcast with any content type: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(other);
    other = profile("\"point\":{\"ranks\":64},", 3, 8);
    post(h, exp, NULL, "Content-Type: application/json; charset=utf-8\r\n", other, strlen(other),
         &r);
    check(r.status == 202, "application/json with charset: %d", r.status);
    harness_response_free(&r);
    free(other);

    /* unknown resources */
    post(h, 424242, NULL, json_header, good, strlen(good), &r);
    check_problem(&r, 404, "424242", "unknown experiment");
    harness_response_free(&r);
    const char *nojobs[] = {"/v1/jobs/999999", "/v1/jobs/abc", "/v1/jobs/0"};
    for (int i = 0; i < 3; i++) {
        harness_get(h, nojobs[i], &r);
        check_problem(&r, 404, "job", nojobs[i]);
        harness_response_free(&r);
    }
    free(good);
}

static void test_metrics_and_openapi(harness *h)
{
    harness_response r;
    harness_get(h, "/metrics", &r);
    long queued = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE state = 'queued'");
    char want[64];
    snprintf(want, sizeof want, "perfcast_jobs{state=\"queued\"} %ld\n", queued);
    check(r.status == 200 && r.body && strstr(r.body, want) &&
              strstr(r.body, "# TYPE perfcast_jobs gauge") &&
              strstr(r.body, "perfcast_jobs{state=\"failed\"} 0"),
          "metrics: want %s", want);
    harness_response_free(&r);
    harness_get(h, "/openapi.json", &r);
    json_t *doc = harness_json(&r);
    json_t *paths = json_object_get(doc, "paths");
    check(json_object_get(json_object_get(paths, "/v1/experiments/{id}/profiles"), "post") &&
              json_object_get(json_object_get(paths, "/v1/jobs/{id}"), "get"),
          "openapi documents the upload and the job");
    json_decref(doc);
    harness_response_free(&r);
}

/* An upload answered 202 is committed: kill -9 right after the answer. */
static void test_kill_after_ack(harness *h)
{
    long exp = create(h, "kill-after-ack");
    char *body = profile("\"point\":{\"ranks\":8},", 50, 9);
    upload_answer a = upload(h, exp, NULL, body);
    check(!harness_server_kill(h), "kill -9");
    check(a.status == 202, "upload before the kill: %d", a.status);
    check(!harness_server_start(h) && harness_wait_status(h, "/ready", 200, 10),
          "restart after kill -9");
    int st;
    json_t *j = get_job(h, a.job, &st);
    check(st == 200 && !strcmp(job_state(j), "queued"), "job after the restart: %d %s", st,
          job_state(j));
    json_decref(j);
    check(harness_sql_long(h, "SELECT count(*) FROM profile_rows WHERE profile_id = %ld", a.profile) ==
              2 * 3 * 50 * 2 + 1,
          "every row of the acknowledged upload");
    upload_answer d = upload(h, exp, NULL, body);
    check(d.status == 200 && d.profile == a.profile, "resent after the restart: duplicate");
    free(body);
}

/* PostgreSQL down: 503 + Retry-After, nothing half-stored; back: 202. */
static void test_database_down(harness *h)
{
    long exp = create(h, "db-down");
    char *body = profile("\"point\":{\"ranks\":8},", 3, 10);
    counts before = count_all(h);
    check(!harness_pg_stop(h), "stop PostgreSQL");
    harness_response r;
    post(h, exp, NULL, json_header, body, strlen(body), &r);
    char retry[16] = "";
    harness_header(&r, "Retry-After", retry, sizeof retry);
    check_problem(&r, 503, "retry", "upload while the database is down");
    check(atoi(retry) >= 1, "Retry-After \"%s\"", retry);
    harness_response_free(&r);
    check(!harness_pg_start(h), "start PostgreSQL");
    /* a client honouring Retry-After */
    upload_answer a = {0};
    double until = harness_now() + 15;
    do {
        a = upload(h, exp, NULL, body);
        if (a.status == 503)
            harness_sleep(1);
    } while (a.status == 503 && harness_now() < until);
    check(a.status == 202, "upload once the database is back: %d", a.status);
    counts after = count_all(h);
    check(after.profiles == before.profiles + 1 && after.rows == before.rows + 2 * 3 * 3 * 2 + 1,
          "exactly one upload stored: profiles %ld -> %ld, rows %ld -> %ld", before.profiles,
          after.profiles, before.rows, after.rows);
    free(body);
}

/* ---- server with workers --------------------------------------------------- */

/* Five coordinates: enough for a model. Returns the last upload's job. */
static long upload_five(harness *h, long exp, double scale)
{
    long job = 0;
    for (int i = 0; i < 5; i++) {
        char point[64];
        snprintf(point, sizeof point, "\"point\":{\"ranks\":%d},", 2 << i);
        char *b = profile(point, 6, scale * (1 + i));
        upload_answer a = upload(h, exp, NULL, b);
        check(a.status == 202, "upload %d: %d", i, a.status);
        job = a.job;
        free(b);
    }
    return job;
}

static json_t *wait_job(harness *h, long job, const char *state, double seconds)
{
    double until = harness_now() + seconds;
    for (;;) {
        int st;
        json_t *j = get_job(h, job, &st);
        if (!strcmp(job_state(j), state) || harness_now() > until)
            return j;
        json_decref(j);
        harness_sleep(0.1);
    }
}

/* Every job of exp done (within seconds); 1 yes, 0 no. */
static int all_done(harness *h, long exp, double seconds)
{
    double until = harness_now() + seconds;
    for (;;) {
        long open = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state "
                                "<> 'done'",
                             exp);
        if (open == 0)
            return 1;
        if (harness_now() > until)
            return 0;
        harness_sleep(0.1);
    }
}

static void test_workers(harness *h)
{
    long exp = create(h, "workers");
    long job = upload_five(h, exp, 1);
    json_t *j = wait_job(h, job, "done", 20);
    check(!strcmp(job_state(j), "done") && json_integer_value(json_object_get(j, "attempts")) == 1 &&
              json_integer_value(json_object_get(j, "model_set")) >= 1 &&
              json_is_null(json_object_get(j, "error")) &&
              json_is_string(json_object_get(j, "finished_at")),
          "job done by a worker: %s", dump(j));
    json_decref(j);
    check(all_done(h, exp, 20), "every job of the experiment done");
}

/* ?refit=defer stores uploads without queueing anything; POST .../refit then
 * aggregates and fits them all in one job. */
static void test_deferred_refit(harness *h)
{
    long exp = create(h, "deferred");
    for (int i = 0; i < 5; i++) {
        for (int part = 0; part < 2; part++) { /* two uploads per coordinate: two repetitions
                                                   (the same ranks twice would conflict) */
            char point[64], query[64];
            snprintf(point, sizeof point, "\"point\":{\"ranks\":%d},", 2 << i);
            snprintf(query, sizeof query, "?refit=defer&repetition=%d", part + 1);
            char *b = profile(point, 4, (1 + i) * (1 + part));
            harness_response r;
            post(h, exp, query, json_header, b, strlen(b), &r);
            json_t *j = harness_json(&r);
            char loc[64] = "";
            check(r.status == 202 && json_is_null(json_object_get(j, "job")) &&
                      !harness_header(&r, "Location", loc, sizeof loc),
                  "deferred upload: %d %s", r.status, r.body ? r.body : "");
            json_decref(j);
            harness_response_free(&r);
            free(b);
        }
    }
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp) == 0,
          "deferred uploads queue no job");
    harness_response r;
    post(h, exp, "?refit=later", json_header, "{}", 2, &r);
    check(r.status == 400 && r.body && strstr(r.body, "refit"), "bad refit value: %d", r.status);
    harness_response_free(&r);
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_request(h, "POST", path, NULL, NULL, 0, &r);
    json_t *j = harness_json(&r);
    long job = (long)json_integer_value(json_object_get(j, "job"));
    char loc[64] = "", want[64];
    snprintf(want, sizeof want, "/v1/jobs/%ld", job);
    harness_header(&r, "Location", loc, sizeof loc);
    check(r.status == 202 && job > 0 && !strcmp(loc, want), "refit on demand: %d %s", r.status,
          r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    json_t *done = wait_job(h, job, "done", 20);
    check(!strcmp(job_state(done), "done"), "the on-demand job finishes: %s", dump(done));
    json_decref(done);
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp) == 1,
          "one job for all ten uploads");
    check(harness_sql_long(h, "SELECT count(DISTINCT point) FROM measurements m JOIN model_sets s ON "
                      "s.id = m.model_set_id WHERE s.experiment_id = %ld",
                   exp) == 5,
          "the model set covers the five coordinates");
    harness_request(h, "POST", "/v1/experiments/999999/refit", NULL, NULL, 0, &r);
    check(r.status == 404, "refit of an unknown experiment: %d", r.status);
    harness_response_free(&r);
}

/* The job of experiment exp that a worker is on, once there is one (0 after
 * seconds). */
static long running_job(harness *h, long exp, double seconds)
{
    double until = harness_now() + seconds;
    long id;
    while ((id = harness_sql_long(h, "SELECT coalesce(max(id), 0) FROM jobs WHERE experiment_id = %ld "
                             "AND state = 'running'",
                          exp)) <= 0 &&
           harness_now() < until)
        harness_sleep(0.05);
    return id;
}

/* A session holding a SHARE lock on model_sets: refits run up to their write
 * and wait there. */
static PGconn *hold_refits(harness *h)
{
    PGconn *c = PQconnectdb(harness_database_url(h));
    PGresult *res = PQexec(c, "BEGIN; LOCK TABLE model_sets IN SHARE MODE");
    check(PQresultStatus(res) == PGRES_COMMAND_OK, "lock model_sets: %s",
          PQresultErrorMessage(res));
    PQclear(res);
    return c;
}

static void release_refits(PGconn *c)
{
    PQclear(PQexec(c, "COMMIT"));
    PQfinish(c);
}

/* A refit interrupted by kill -9 finishes after the restart. The refit is
 * held at its write, the server killed there, the lock released, the server
 * started again: once the dead worker's lease (2 s) ran out, a new worker
 * claims the job; the uploads queued behind it are refit after it. */
static void test_kill_mid_fit(harness *h)
{
    long exp = create(h, "kill-mid-fit");
    PGconn *blocker = hold_refits(h);
    upload_five(h, exp, 2);
    long job = running_job(h, exp, 10);
    check(job > 0, "a job of the experiment is running");
    harness_sleep(0.5); /* well inside the refit, waiting for the lock */
    check(!harness_server_kill(h), "kill -9 during the refit");
    release_refits(blocker);
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE id = %ld AND state = 'running' AND "
                      "attempts = 1",
                   job) == 1,
          "the killed job is left running, attempt 1");
    check(!harness_server_start(h), "restart");
    json_t *j = wait_job(h, job, "done", 20);
    check(!strcmp(job_state(j), "done") && json_integer_value(json_object_get(j, "attempts")) == 2 &&
              json_integer_value(json_object_get(j, "model_set")) >= 1,
          "interrupted job done on its second attempt: %s", dump(j));
    json_decref(j);
    check(all_done(h, exp, 20), "every job of the experiment done");
    /* jobs taken over by a running refit (riders) share its set */
    long jobs = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld "
                                    "AND rides_with IS NULL", exp);
    check(harness_sql_long(h, "SELECT count(*) FROM model_sets WHERE experiment_id = %ld", exp) == jobs,
          "one model set per job refit (%ld): the interrupted attempt left none", jobs);
}

/* A running job's lease is kept alive by heartbeats while its refit takes
 * longer than the lease, and no second worker takes it meanwhile. */
static void test_heartbeat(harness *h)
{
    long exp = create(h, "heartbeat");
    PGconn *blocker = hold_refits(h);
    upload_five(h, exp, 3);
    long job = running_job(h, exp, 10);
    check(job > 0, "a job of the experiment is running");
    harness_sleep(4.5); /* more than twice the 2-second lease */
    json_t *j = wait_job(h, job, "running", 0);
    check(!strcmp(job_state(j), "running") && json_integer_value(json_object_get(j, "attempts")) == 1,
          "after 2 leases: still attempt 1 (%s)", dump(j));
    json_decref(j);
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state = "
                      "'running' AND rides_with IS NULL",
                   exp) == 1,
          "no second refit of the experiment meanwhile");
    release_refits(blocker);
    j = wait_job(h, job, "done", 20);
    check(!strcmp(job_state(j), "done") && json_integer_value(json_object_get(j, "attempts")) == 1,
          "done on its first attempt: %s", dump(j));
    json_decref(j);
    check(all_done(h, exp, 20), "every job of the experiment done");
    /* graceful stop with workers running: exit status 0 */
    check(harness_server_stop(h) == 0, "SIGTERM stop with workers");
    check(!harness_server_start(h) && harness_wait_status(h, "/ready", 200, 10), "start again");
}

/* One meaning of model_set everywhere: the set's number within the
 * experiment (1, 2, ...), in jobs, listings and analyses alike. Run after
 * other experiments have sets, so that ids and numbers differ. */
static void test_model_set_numbers(harness *h)
{
    long exp = create(h, "set-numbers");
    long job = upload_five(h, exp, 1);
    json_t *j = wait_job(h, job, "done", 20);
    json_int_t set = json_integer_value(json_object_get(j, "model_set"));
    json_decref(j);
    check(all_done(h, exp, 20), "every job of the experiment done");
    long last = harness_sql_long(h, "SELECT max(number) FROM model_sets WHERE experiment_id = %ld",
                                 exp);
    long last_id = harness_sql_long(h, "SELECT max(id) FROM model_sets WHERE experiment_id = %ld",
                                    exp);
    check(last_id != last, "earlier experiments' sets make ids and numbers differ (%ld, %ld)",
          last_id, last);
    static const char *const views[] = {"models", "measurements", "predict?ranks=12"};
    for (int k = 0; k < 3; k++) {
        char url[160];
        harness_response r;
        snprintf(url, sizeof url, "/v1/experiments/%ld/%s", exp, views[k]);
        harness_get(h, url, &r);
        json_t *doc = harness_json(&r);
        json_int_t got = json_integer_value(json_object_get(doc, "model_set"));
        check(r.status == 200 && got == last && got >= set,
              "%s: model_set %lld is the set's number %ld", views[k], (long long)got, last);
        json_decref(doc);
        harness_response_free(&r);
    }
}

/* warmup_steps beyond the training steps present: the warm-up steps are
 * all there is, so they are used, and every model of the set says so. */
static void test_warmup_warning(harness *h)
{
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"long-warmup\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1000,\"batch_size\":8,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":5}}",
                 &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    long job = upload_five(h, exp, 1); /* 3 training steps each */
    j = wait_job(h, job, "done", 20);
    json_decref(j);
    check(all_done(h, exp, 20), "long-warmup refits done");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application&metric=time", exp);
    harness_get(h, path, &r);
    check(r.status == 200 && r.body &&
              strstr(r.body, "warmup_steps is 5 but the profiles at ranks=") &&
              strstr(r.body, "have 3 training step(s)"),
          "models warn of warm-up steps beyond the steps present: %.300s", r.body ? r.body : "");
    harness_response_free(&r);
    /* with enough steps, no such warning */
    long plain = create(h, "short-warmup");
    job = upload_five(h, plain, 1);
    json_decref(wait_job(h, job, "done", 20));
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application&metric=time", plain);
    harness_get(h, path, &r);
    check(r.status == 200 && r.body && !strstr(r.body, "warmup_steps is"),
          "no warm-up warning when steps remain");
    harness_response_free(&r);
}

int main(void)
{
    const char *env[] = {"PERFCAST_WORKERS=0", "PERFCAST_MAX_BODY=4MiB", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness: PostgreSQL and the server did not start");
    if (!h)
        return check_summary();
    test_upload(h);
    test_point_and_repetition(h);
    test_refusals(h);
    test_metrics_and_openapi(h);
    test_kill_after_ack(h);
    test_database_down(h);
    harness_close(h, check_failed_count > 0);

    const char *wenv[] = {"PERFCAST_WORKERS=2", "PERFCAST_JOB_LEASE=2", NULL};
    harness_opts wo = {.env = wenv};
    h = harness_open(&wo);
    check(h != NULL, "harness with workers did not start");
    if (!h)
        return check_summary();
    int failed = check_failed_count;
    test_workers(h);
    test_deferred_refit(h);
    test_kill_mid_fit(h);
    test_heartbeat(h);
    test_model_set_numbers(h);
    test_warmup_warning(h);
    harness_close(h, check_failed_count > failed);
    return check_summary();
}
