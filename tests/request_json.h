/*
 * request_json.h — the one-line API call of the API tests: a request with
 * an optional JSON body, checked for the status wanted, its answer parsed.
 * And a refit waited for. Header-only; include after tests/check.h and
 * tests/harness.h.
 */
#ifndef PERFCAST_TESTS_REQUEST_JSON_H
#define PERFCAST_TESTS_REQUEST_JSON_H

#include <stdio.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

/* method path [body]: the answer's JSON (NULL when it is none), to
 * json_decref, and its status in *status (0 when no answer came), for a
 * caller that decides by the status itself. */
static json_t *request_json_status(harness *h, const char *method, const char *path,
                                   const char *body, int *status) __attribute__((unused));
static json_t *request_json_status(harness *h, const char *method, const char *path,
                                   const char *body, int *status)
{
    harness_response r;
    harness_request(h, method, path, body ? "Content-Type: application/json\r\n" : NULL, body,
                    body ? strlen(body) : 0, &r);
    json_t *doc = harness_json(&r);
    *status = r.status;
    harness_response_free(&r);
    return doc;
}

/* method path [body]: checks the status is want; the answer's JSON (NULL
 * when it is none), to json_decref. */
static json_t *request_json(harness *h, const char *method, const char *path, const char *body,
                            int want) __attribute__((unused));
static json_t *request_json(harness *h, const char *method, const char *path, const char *body,
                            int want)
{
    harness_response r;
    harness_request(h, method, path, body ? "Content-Type: application/json\r\n" : NULL, body,
                    body ? strlen(body) : 0, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "%s %s: want %d, got %d %.400s", method, path, want, r.status,
          r.body);
    harness_response_free(&r);
    return doc;
}

/* A refit of experiment exp, waited for the way a client does: polling its
 * job until done (checked). */
static void request_refit(harness *h, long exp) __attribute__((unused));
static void request_refit(harness *h, long exp)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    json_t *d = request_json(h, "POST", path, NULL, 202);
    long job = (long)json_integer_value(json_object_get(d, "job"));
    json_decref(d);
    check(harness_wait_job(h, job, 120), "the refit finishes");
}

#endif
