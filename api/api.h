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
    /* Open mode allowed (api/auth.h): the server listens on loopback or was
     * started --insecure. Zero: every /v1 request needs a token. */
    int open_ok;
    _Atomic int tokens_exist; /* set once a token is seen to exist: open mode is over */
    struct api_limits *limits; /* per-token rate and per-tenant uploads; NULL: none */
    /* caps of one upload's content (0: none; README "Limits and hardening") */
    int max_callpaths;            /* distinct callpaths of one upload: 413 beyond */
    int max_experiment_callpaths; /* distinct callpaths of one experiment: 413 beyond */
    long long max_trace_events;   /* events of one trace after decompression: 413 beyond */
    /* caps of one per-iteration analysis (analysis/iteration_request.h; 0: the defaults):
     * events of interest of its traces together, stored bytes of one trace: 413 beyond */
    long long max_iteration_events;
    long long max_iteration_bytes;
    struct auth_cache *auth;   /* token verifications and owners (api/auth_cache.h); NULL: none */
    const char *web_dir; /* the dashboard's static files (api/web.c); NULL: none served */
    int idempotency_ttl; /* seconds an Idempotency-Key is kept (api/idempotency.h); 0: a day */
    double idempotency_lock; /* seconds a pending key is held (api/idempotency.h); 0: 300 */
    /* Faults a test build injects (server/test_hooks.h) at named points of
     * a request (nonzero: fail there); NULL in production. */
    int (*test_hook)(const char *point, const char *detail);
} api_ctx;

/* Route flags */
enum {
    API_ROUTE_DB = 1,         /* needs the database schema */
    API_ROUTE_EXPERIMENT = 2, /* {id} is an experiment: answered 404 unless the caller's tenant's */
    API_ROUTE_JOB = 4,        /* {id} is a job: likewise, by its experiment */
    API_ROUTE_UPLOAD = 8,     /* counts against the tenant's concurrent uploads */
    API_ROUTE_TEXT = 32,      /* reads text/plain too (Extra-P files), besides JSON */
    API_ROUTE_SIMULATION = 16, /* {id} is a simulation (store/simulations.h): likewise */
    API_ROUTE_STRICT = 64,    /* its answers carry coded warnings: takes ?strict=true, which
                                 turns a 200 with any warning into 422 (api/warnings.h) */
    API_ROUTE_IDEMPOTENT = 128, /* a POST that creates work: honours Idempotency-Key */
};

typedef void (*api_handler)(api_ctx *ctx, api_request *req, api_response *resp);

typedef struct api_route {
    const char *method;  /* GET also answers HEAD */
    const char *pattern; /* "/v1/experiments/{id}": {name} matches one segment */
    api_handler handler;
    int flags;
    int scope; /* STORE_SCOPE_READ/WRITE/ADMIN a token needs (store/tokens.h); 0: open route */
    /* The query parameters the route takes, space-separated ("" none): the
     * router answers 400 naming any other. NULL: the handler checks its own
     * (routes whose query names the experiment's parameters). */
    const char *query;
} api_route;

/* Routes req (sets req->route, req->params), checks who asks (api/auth.h:
 * 401 without a usable token, 403 when its scope is short of the route's,
 * 404 for another tenant's experiment or job, 429 over the rate limit;
 * sets req->tenant_id, token_id, scope) and runs its handler, or answers
 * 404 / 405 (with Allow) as application/problem+json. resp starts zeroed;
 * the caller frees it with api_response_free(). */
void api_dispatch(api_ctx *ctx, api_request *req, api_response *resp);

/* Admission from the headers alone, before any of the body is read
 * (server/http.c): routes req (its body is still empty), then checks what
 * api_dispatch() would check — the schema, the token, its scope and rate,
 * the tenant of the {id} — and takes one of the tenant's upload slots for an
 * upload route. Returns 0 when admitted (req->preauthorized = 1, identity
 * set, req->upload_held when a slot was taken: give it back with
 * api_admit_release() once the request is over), or -1 with resp the
 * refusal (401, 403, 404, 429, 503; 404/405 for a path or method no route
 * serves). */
int api_admit(api_ctx *ctx, api_request *req, api_response *resp);
void api_admit_release(api_ctx *ctx, api_request *req);

/* The pattern of the first route whose path matches (any method), NULL when
 * none: for metrics and logs of requests answered before dispatch (413). */
const char *api_route_of(const char *path);

/* The flags of the route serving method on path, 0 when none: the server
 * picks an upload's body limit by it before the body is read. */
int api_route_flags_of(const char *method, const char *path);

/* The route table, for tests and the OpenAPI consistency check. */
const api_route *api_routes(size_t *n);

/* The OpenAPI 3.1 document (api/openapi.json, compiled in). */
extern const char api_openapi_json[];
extern const size_t api_openapi_json_len;

#endif
