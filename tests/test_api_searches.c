/*
 * test_api_searches.c — configuration searches and advice off the HTTP
 * threads (api/search_runs.c) over real HTTP and a real PostgreSQL: a
 * request with ?job=always, or over more candidates than are answered at
 * once, is answered 202 with the run and its Location; a job worker runs it
 * and the run's result is the answer the request has when answered at once;
 * an Idempotency-Key makes a retry return the first run instead of queueing
 * another; bad input is still refused at once (400, nothing queued).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/modeled_experiment.h"
#include "tests/request_json.h"

static long create(harness *h)
{
    json_t *d = request_json(h, "POST", "/v1/experiments", MODELED_EXPERIMENT_DOC("searches"), 201);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    return id;
}

/* one upload of the experiment, checked answered 202 */
static int upload(harness *h, const char *path, const char *body)
{
    json_decref(request_json(h, "POST", path, body, 202));
    return 1;
}

/* POST with an optional Idempotency-Key: status, body and Location */
static json_t *post(harness *h, const char *path, const char *body, const char *key, int *status,
                    char *location, size_t cap)
{
    char headers[160];
    snprintf(headers, sizeof headers, "Content-Type: application/json\r\n%s%s%s",
             key ? "Idempotency-Key: " : "", key ? key : "", key ? "\r\n" : "");
    harness_response r;
    harness_request(h, "POST", path, headers, body, strlen(body), &r);
    *status = r.status;
    location[0] = '\0';
    harness_header(&r, "Location", location, cap);
    json_t *doc = harness_json(&r);
    harness_response_free(&r);
    return doc;
}

/* the run at location once done or failed (at most 60 s) */
static json_t *finished(harness *h, const char *location)
{
    double t0 = harness_now();
    while (harness_now() - t0 < 60) {
        json_t *run = request_json(h, "GET", location, NULL, 200);
        const char *state = json_string_value(json_object_get(run, "state")) ?: "";
        if (!strcmp(state, "done") || !strcmp(state, "failed"))
            return run;
        json_decref(run);
        harness_sleep(0.1);
    }
    return NULL;
}

/* the same request answered at once and as a job: the same answer */
static void same_answer(harness *h, long exp, const char *what, const char *body)
{
    char path[160], loc[200];
    int status;
    snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, what);
    json_t *direct = post(h, path, body, NULL, &status, loc, sizeof loc);
    check(status == 200, "%s at once: %d %s", what, status,
          json_string_value(json_object_get(direct, "detail")) ?: "");
    snprintf(path, sizeof path, "/v1/experiments/%ld/%s?job=always", exp, what);
    json_t *queued = post(h, path, body, NULL, &status, loc, sizeof loc);
    check(status == 202 && !strcmp(json_string_value(json_object_get(queued, "state")) ?: "",
                                   "queued") &&
              !strcmp(json_string_value(json_object_get(queued, "kind")) ?: "", what) &&
              strstr(loc, "/searches/"),
          "%s?job=always: 202 queued, Location %s", what, loc);
    json_t *run = finished(h, loc);
    json_t *result = json_object_get(run, "result");
    check(run && !strcmp(json_string_value(json_object_get(run, "state")) ?: "", "done") &&
              json_equal(result, direct),
          "%s as a job: done, the answer of the request answered at once", what);
    json_t *asked = json_loads(body, 0, NULL);
    check(json_equal(json_object_get(json_object_get(run, "request"), "body"), asked),
          "the request kept");
    json_decref(asked);
    json_decref(direct);
    json_decref(queued);
    json_decref(run);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    long exp = create(h);
    modeled_uploads(h, exp, upload);
    request_refit(h, exp);
    harness_sleep(1.2); /* the service's models follow a refit within 1 s */

    same_answer(h, exp, "configurations",
                "{\"max_time_s\":400,\"candidates\":{\"ranks\":{\"min\":2,\"max\":64,\"factor\":2},"
                "\"threads\":{\"values\":[1,2,4]}}}");
    same_answer(h, exp, "advice",
                "{\"target\":{\"ranks\":128,\"threads\":4},\"budget_core_hours\":0.5}");

    /* over the candidates answered at once: a job without asking */
    char path[160], loc[200];
    int status;
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    json_t *d = post(h, path,
                     "{\"candidates\":{\"ranks\":{\"min\":1,\"max\":1001},\"threads\":{\"values\":[1]}}}",
                     NULL, &status, loc, sizeof loc);
    check(status == 202, "1,001 candidates: 202 (%d)", status);
    json_decref(d);
    json_t *run = finished(h, loc);
    check(run && json_integer_value(json_object_get(json_object_get(run, "result"), "searched")) ==
                     1001,
          "... and searched by a worker");
    json_decref(run);
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    d = post(h, path,
             "{\"target\":{\"ranks\":128,\"threads\":4},\"budget_core_hours\":0.5,\"max_runs\":10000}",
             NULL, &status, loc, sizeof loc);
    check(status == 202, "advice over 10,000 candidates x max_runs: 202 (%d)", status);
    json_decref(d);
    json_decref(finished(h, loc));

    /* a retry with the Idempotency-Key gets the first run */
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice?job=always", exp);
    const char *body = "{\"target\":{\"ranks\":64,\"threads\":2},\"budget_core_hours\":0.2}";
    long before = harness_sql_long(h, "SELECT count(*) FROM search_runs");
    json_t *a = post(h, path, body, "search-retry-1", &status, loc, sizeof loc);
    int s1 = status;
    json_t *b = post(h, path, body, "search-retry-1", &status, loc, sizeof loc);
    check(s1 == 202 && status == 202 &&
              json_integer_value(json_object_get(a, "id")) ==
                  json_integer_value(json_object_get(b, "id")) &&
              harness_sql_long(h, "SELECT count(*) FROM search_runs") == before + 1,
          "a retry with its Idempotency-Key: the first run, one queued");
    json_decref(a);
    json_decref(b);

    /* bad input: refused at once, nothing queued */
    before = harness_sql_long(h, "SELECT count(*) FROM search_runs");
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations?job=always", exp);
    d = post(h, path, "{\"candidates\":{\"ranks\":{\"values\":[0]},\"threads\":{\"values\":[1]}}}",
             NULL, &status, loc, sizeof loc);
    check(status == 400 && !strcmp(json_string_value(json_object_get(d, "field")) ?: "",
                                   "candidates.ranks.values[0]"),
          "a bad candidate: 400 at once (%d)", status);
    json_decref(d);
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice?job=later", exp);
    d = post(h, path, body, NULL, &status, loc, sizeof loc);
    check(status == 400 && !strcmp(json_string_value(json_object_get(d, "field")) ?: "", "job"),
          "job=later: 400 naming job (%d)", status);
    json_decref(d);
    check(harness_sql_long(h, "SELECT count(*) FROM search_runs") == before, "nothing queued");
    snprintf(path, sizeof path, "/v1/experiments/%ld/searches/999999", exp);
    json_decref(request_json(h, "GET", path, NULL, 404));
    harness_close(h, 0);
    return check_summary();
}
