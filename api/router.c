/*
 * router.c — the route table and api_dispatch().
 *
 * Adding an endpoint: write its handler (api/<resource>.c, declared in
 * api/handlers.h), add one line below, and describe it in api/openapi.json
 * (tests/test_api_routes.c fails when the two disagree). Patterns are
 * literal segments and {name} segments; the first route whose pattern and
 * method match wins. A path that matches a pattern under another method
 * answers 405 with Allow; no pattern at all, 404.
 *
 * Each route names the scope a token needs (0: open, no token asked) and
 * whether its {id} is an experiment or a job, which api_authorize()
 * (api/authorize.c) checks belongs to the caller's tenant before the
 * handler runs, so no handler can forget it.
 */
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

#include "api/handlers.h"
#include "api/limits.h"

#define R STORE_SCOPE_READ
#define W STORE_SCOPE_WRITE
#define A STORE_SCOPE_ADMIN
#define DB API_ROUTE_DB
#define EXP (API_ROUTE_DB | API_ROUTE_EXPERIMENT)
static const api_route routes[] = {
    {"GET", "/health", api_health, 0, 0},
    {"GET", "/ready", api_ready, 0, 0},
    {"GET", "/metrics", api_metrics_get, 0, 0},
    {"GET", "/openapi.json", api_openapi, 0, 0},
    {"GET", "/v1/experiments", api_experiment_list, DB, R},
    {"POST", "/v1/experiments", api_experiment_create, DB, W},
    {"GET", "/v1/experiments/{id}", api_experiment_get, EXP, R},
    {"DELETE", "/v1/experiments/{id}", api_experiment_delete, EXP, W},
    {"POST", "/v1/experiments/{id}/profiles", api_profile_upload, EXP | API_ROUTE_UPLOAD, W},
    {"GET", "/v1/jobs/{id}", api_job_get, DB | API_ROUTE_JOB, R},
    {"POST", "/v1/experiments/{id}/refit", api_experiment_refit, EXP, W},
    {"GET", "/v1/experiments/{id}/measurements", api_measurements_list, EXP, R},
    {"GET", "/v1/experiments/{id}/models", api_models_list, EXP, R},
    {"GET", "/v1/experiments/{id}/predict", api_predict, EXP, R},
    {"GET", "/v1/experiments/{id}/scaling", api_scaling, EXP, R},
    {"GET", "/v1/experiments/{id}/bottlenecks", api_bottlenecks, EXP, R},
    {"GET", "/v1/experiments/{id}/cost", api_cost, EXP, R},
    {"POST", "/v1/experiments/{id}/configurations", api_configurations, EXP, W},
    {"GET", "/v1/experiments/{id}/imbalance", api_imbalance, EXP, R},
    {"POST", "/v1/fit", api_fit, 0, W},
    {"POST", "/v1/tokens", api_token_create, DB, A},
    {"GET", "/v1/tokens", api_token_list, DB, A},
    {"DELETE", "/v1/tokens/{id}", api_token_revoke, DB, A},
    {"GET", "/v1/experiments/{id}/model_sets", api_model_sets_list, EXP, R},
    {"GET", "/v1/experiments/{id}/regressions", api_regressions, EXP, R},
    {"GET", "/v1/experiments/{id}/curve", api_curve, EXP, R},
};
#undef R
#undef W
#undef A
#undef DB
#undef EXP

const api_route *api_routes(size_t *n)
{
    *n = sizeof routes / sizeof *routes;
    return routes;
}

/* Matches path against pattern segment by segment, collecting {name}
 * segments into req->params (names and values copied to req->param_buf). */
static int match(const char *pattern, const char *path, api_request *req)
{
    size_t used = 0;
    req->nparams = 0;
    while (*pattern == '/' && *path == '/') {
        const char *p = pattern + 1, *s = path + 1;
        const char *pe = strchrnul(p, '/'), *se = strchrnul(s, '/');
        size_t plen = (size_t)(pe - p), slen = (size_t)(se - s);
        if (*p == '{' && plen > 2) {
            size_t nlen = plen - 2;
            if (slen == 0 || req->nparams == API_MAX_PATH_PARAMS ||
                used + nlen + slen + 2 > sizeof req->param_buf)
                return 0;
            char *name = req->param_buf + used;
            memcpy(name, p + 1, nlen);
            name[nlen] = '\0';
            char *value = name + nlen + 1;
            memcpy(value, s, slen);
            value[slen] = '\0';
            used += nlen + slen + 2;
            req->params[req->nparams++] = (api_kv){name, value};
        } else if (plen != slen || memcmp(p, s, plen)) {
            return 0;
        }
        pattern = pe;
        path = se;
    }
    return !*pattern && !*path;
}

const char *api_route_of(const char *path)
{
    api_request scratch;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
        if (match(routes[i].pattern, path, &scratch))
            return routes[i].pattern;
    return NULL;
}

static void body_sha256(const api_request *req, char hex[65])
{
    unsigned char d[SHA256_DIGEST_LENGTH];
    SHA256((const unsigned char *)req->body, req->body_len, d);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int api_route_flags_of(const char *method, const char *path)
{
    api_request scratch;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++)
        if (!strcmp(routes[i].method, method) && match(routes[i].pattern, path, &scratch))
            return routes[i].flags;
    return 0;
}

void api_dispatch(api_ctx *ctx, api_request *req, api_response *resp)
{
    const char *method = strcmp(req->method, "HEAD") ? req->method : "GET";
    char allow[64] = "";
    req->route = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        const api_route *r = &routes[i];
        if (!match(r->pattern, req->path, req))
            continue;
        if (strcmp(r->method, method)) {
            size_t n = strlen(allow);
            snprintf(allow + n, sizeof allow - n, "%s%s%s", n ? ", " : "", r->method,
                     strcmp(r->method, "GET") ? "" : ", HEAD");
            req->route = r->pattern;
            continue;
        }
        req->route = r->pattern;
        if ((r->flags & API_ROUTE_DB) && !ctx->schema_ready) {
            api_problem(resp, 503, NULL, "the database schema is not ready yet; retry later");
            api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
            return;
        }
        if (r->scope && api_authorize(ctx, r, req, resp))
            return;
        if ((r->flags & API_ROUTE_UPLOAD) && ctx->limits) {
            if (api_limits_upload_begin(ctx->limits, req, resp))
                return;
            r->handler(ctx, req, resp);
            api_limits_upload_end(ctx->limits, req);
        } else {
            r->handler(ctx, req, resp);
        }
        if (r->flags & API_ROUTE_UPLOAD) /* the profile's digest, for the audit line */
            body_sha256(req, resp->audit_sha256);
        return;
    }
    req->nparams = 0;
    /* the dashboard: files under / that are no API route */
    if (!*allow && (!strcmp(method, "GET")) && strncmp(req->path, "/v1/", 4) &&
        ctx->web_dir) {
        req->route = "/";
        api_web(ctx, req, resp);
        if (resp->status != 200) /* metrics count misses as unmatched, as before */
            req->route = NULL;
        return;
    }
    if (*allow) {
        api_problem(resp, 405, NULL, "%s is not allowed on %s; allowed: %s", req->method,
                    req->path, allow);
        api_add_header(resp, "Allow", "%s", allow);
    } else {
        api_problem(resp, 404, NULL, "no such resource: %s", req->path);
    }
}
