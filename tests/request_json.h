/*
 * request_json.h — the one-line API call of the API tests: a request with
 * an optional JSON body, checked for the status wanted, its answer parsed.
 * Header-only; include after tests/check.h and tests/harness.h.
 */
#ifndef PERFCAST_TESTS_REQUEST_JSON_H
#define PERFCAST_TESTS_REQUEST_JSON_H

#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

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

#endif
