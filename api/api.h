/*
 * api.h — perfcast's HTTP API as the server sees it: one context shared by
 * all requests, and api_dispatch(), which routes one request to its handler
 * (api/router.c) and fills the response.
 *
 * Handlers run on the HTTP server's threads, several at once: everything
 * reachable from api_ctx is thread-safe (the store pool, the metrics
 * registry) or read-only after start.
 */
#ifndef PERFCAST_API_API_H
#define PERFCAST_API_API_H

#include <stddef.h>

#include "api/http.h"
#include "api/metrics.h"
#include "api/model_cache.h"
#include "store/db.h"

typedef struct api_ctx {
    store *db;
    api_metrics *metrics;
    model_cache *models; /* newest application models per experiment, for predict */
    /* Set by the server once migrations are applied; until then routes that
     * need the database answer 503 with Retry-After. */
    _Atomic int schema_ready;
} api_ctx;

/* Route flags */
enum {
    API_ROUTE_DB = 1, /* needs the database schema */
};

typedef void (*api_handler)(api_ctx *ctx, api_request *req, api_response *resp);

typedef struct api_route {
    const char *method;  /* GET also answers HEAD */
    const char *pattern; /* "/v1/experiments/{id}": {name} matches one segment */
    api_handler handler;
    int flags;
} api_route;

/* Routes req (sets req->route, req->params) and runs its handler, or answers
 * 404 / 405 (with Allow) as application/problem+json. resp starts zeroed;
 * the caller frees it with api_response_free(). */
void api_dispatch(api_ctx *ctx, api_request *req, api_response *resp);

/* The pattern of the first route whose path matches (any method), NULL when
 * none: for metrics and logs of requests answered before dispatch (413). */
const char *api_route_of(const char *path);

/* The route table, for tests and the OpenAPI consistency check. */
const api_route *api_routes(size_t *n);

/* The OpenAPI 3.1 document (api/openapi.json, compiled in). */
extern const char api_openapi_json[];
extern const size_t api_openapi_json_len;

#endif
