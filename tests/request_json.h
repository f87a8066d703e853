/*
 * request_json.h — the one-line API call of the API tests: a request with
 * an optional JSON body, checked for the status wanted, its answer parsed;
 * the two calls most tests start with (an experiment created, a profile
 * uploaded); a refit waited for; and a number read from an answer by its
 * path ("a.b.c") or an interval's end. Header-only; include after
 * tests/check.h and tests/harness.h.
 */
#ifndef PERFCAST_TESTS_REQUEST_JSON_H
#define PERFCAST_TESTS_REQUEST_JSON_H

#include <jansson.h>
#include <math.h>
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

/* Creates the experiment of creation document body (checked: 201); its id. */
static long request_experiment(harness *h, const char *body) __attribute__((unused));
static long request_experiment(harness *h, const char *body)
{
    json_t *doc = request_json(h, "POST", "/v1/experiments", body, 201);
    long id = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    return id;
}

/* Uploads the JSON profile body to experiment exp (checked: 202); the job
 * of its refit. */
static long request_upload(harness *h, long exp, const char *body) __attribute__((unused));
static long request_upload(harness *h, long exp, const char *body)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    json_t *doc = request_json(h, "POST", path, body, 202);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    json_decref(doc);
    return job;
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

/* The number at path "a.b.c" through the objects of o; NAN when there is
 * none. */
static double answer_num(const json_t *o, const char *path) __attribute__((unused));
static double answer_num(const json_t *o, const char *path)
{
    char key[64];
    const json_t *v = o;
    while (v && *path) {
        const char *dot = strchrnul(path, '.');
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        v = json_object_get(v, key);
        path = *dot ? dot + 1 : dot;
    }
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* End `end` (0 lower, 1 upper) of o's "interval"; NAN when there is none. */
static double answer_interval_end(const json_t *o, int end) __attribute__((unused));
static double answer_interval_end(const json_t *o, int end)
{
    const json_t *v = json_array_get(json_object_get(o, "interval"), (size_t)end);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

#endif
