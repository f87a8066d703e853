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
#include <strings.h>

#include "api/handlers.h"
#include "api/idempotency.h"
#include "api/limits.h"
#include "api/warnings.h"

#define R STORE_SCOPE_READ
#define W STORE_SCOPE_WRITE
#define A STORE_SCOPE_ADMIN
#define DB API_ROUTE_DB
#define EXP (API_ROUTE_DB | API_ROUTE_EXPERIMENT)
#define ST API_ROUTE_STRICT
#define SIM (API_ROUTE_DB | API_ROUTE_SIMULATION)
#define IDEM API_ROUTE_IDEMPOTENT /* POSTs that create work take an Idempotency-Key */
static const api_route routes[] = {
    {"GET", "/health", api_health, 0, 0, ""},
    {"GET", "/ready", api_ready, 0, 0, ""},
    {"GET", "/metrics", api_metrics_get, 0, 0, ""},
    {"GET", "/openapi.json", api_openapi, 0, 0, ""},
    {"GET", "/v1/experiments", api_experiment_list, DB, R, "limit cursor"},
    {"POST", "/v1/experiments", api_experiment_create, DB | IDEM, W, ""},
    {"GET", "/v1/experiments/{id}", api_experiment_get, EXP, R, ""},
    {"DELETE", "/v1/experiments/{id}", api_experiment_delete, EXP, W, ""},
    {"POST", "/v1/experiments/{id}/profiles", api_profile_upload, EXP | API_ROUTE_UPLOAD | IDEM, W, NULL},
    {"GET", "/v1/jobs/{id}", api_job_get, DB | API_ROUTE_JOB, R, ""},
    {"POST", "/v1/experiments/{id}/refit", api_experiment_refit, EXP | IDEM, W, "modeler commit"},
    /* listings and configurations take factor levels: their handlers check the query */
    {"GET", "/v1/experiments/{id}/measurements", api_measurements_list, EXP, R, NULL},
    {"GET", "/v1/experiments/{id}/export", api_experiment_export, EXP, R, "format"},
    {"GET", "/v1/experiments/{id}/models", api_models_list, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/predict", api_predict, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/scaling", api_scaling, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/bottlenecks", api_bottlenecks, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/cost", api_cost, EXP | ST, R, NULL},
    {"POST", "/v1/experiments/{id}/configurations", api_configurations, EXP | ST | IDEM, W, NULL},
    {"GET", "/v1/experiments/{id}/imbalance", api_imbalance, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/speedups", api_speedups, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/accuracy", api_accuracy, EXP | ST, R, NULL},
    {"DELETE", "/v1/experiments/{id}/profiles/{pid}", api_profile_delete, EXP, W, ""},
    {"GET", "/v1/experiments/{id}/profiles", api_profiles_list, EXP, R, "limit cursor"},
    {"GET", "/v1/experiments/{id}/statistics", api_statistics, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/sensitivity", api_sensitivity, EXP | ST, R, NULL},
    {"POST", "/v1/experiments/{id}/sweep/plan", api_sweep_plan, EXP | IDEM, R, "limit offset"},
    {"POST", "/v1/experiments/{id}/advice", api_advice, EXP | IDEM, R, NULL},
    {"GET", "/v1/experiments/{id}/efficiency", api_efficiency, EXP | ST, R, NULL},
    {"GET", "/v1/experiments/{id}/iterations", api_iterations, EXP | ST, R, NULL},
    {"POST", "/v1/overhead-sets", api_overheads_create, DB | IDEM, W, "job"},
    {"GET", "/v1/overhead-sets", api_overheads_list, DB, R, "limit cursor"},
    {"GET", "/v1/overhead-sets/{id}", api_overheads_get, DB, R, ""},
    {"DELETE", "/v1/overhead-sets/{id}", api_overheads_delete, DB, W, ""},
    {"GET", "/v1/devices", api_devices_list, DB, R, ""},
    {"POST", "/v1/devices", api_devices_create, DB | IDEM, W, ""},
    {"DELETE", "/v1/devices/{id}", api_devices_delete, DB, W, ""},
    {"POST", "/v1/experiments/{id}/profiles/{profile}/iteration", api_profile_iteration, EXP | IDEM, R, "device job"},
    {"GET", "/v1/experiments/{id}/profiles/{profile}/breakdown", api_profile_breakdown, EXP, R, "device job"},
    {"GET", "/v1/experiments/{id}/analyses/{run}", api_analysis_get, EXP, R, ""},
    {"GET", "/v1/analyses/{run}", api_analysis_get, DB, R, ""},
    {"GET", "/v1/experiments/{id}/searches/{run}", api_search_get, EXP | ST, R, ""},
    {"POST", "/v1/experiments/{id}/iteration-model", api_iteration_model, EXP | ST | IDEM, R, "job"},
    {"POST", "/v1/simulations", api_sim_create, DB | IDEM, W, ""},
    {"GET", "/v1/simulations", api_sim_list, DB, R, "limit cursor"},
    {"GET", "/v1/simulations/{id}", api_sim_get, SIM, R, ""},
    {"DELETE", "/v1/simulations/{id}", api_sim_delete, SIM, W, ""},
    {"POST", "/v1/simulations/{id}/profiles", api_sim_profile_upload, SIM | API_ROUTE_UPLOAD | IDEM, W, ""},
    {"POST", "/v1/simulations/{id}/runs", api_sim_run_create, SIM | IDEM, W, "job"},
    {"GET", "/v1/simulations/{id}/runs/{run}", api_sim_run_get, SIM | ST, R, ""},
    {"GET", "/v1/simulations/{id}/runs", api_sim_runs_list, SIM, R, "limit cursor"},
    {"GET", "/v1/experiments/{id}/model_sets", api_model_sets_list, EXP, R, "limit"},
    {"GET", "/v1/experiments/{id}/regressions", api_regressions, EXP, R, NULL},
    {"GET", "/v1/experiments/{id}/curve", api_curve, EXP, R, NULL},
    {"POST", "/v1/fit", api_fit, API_ROUTE_TEXT | ST, W, "format measure modeler"},
    {"POST", "/v1/tokens", api_token_create, DB, A, ""},
    {"GET", "/v1/tokens", api_token_list, DB, A, ""},
    {"DELETE", "/v1/tokens/{id}", api_token_revoke, DB, A, ""},
};
#undef R
#undef W
#undef A
#undef DB
#undef EXP
#undef ST

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

/* 1 when name is a word of the space-separated list. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchrnul(p, ' ');
        if ((size_t)(e - p) == n && !memcmp(p, name, n))
            return 1;
        p = *e ? e + 1 : e;
    }
    return 0;
}

/* One convention for the query on every route: a parameter given twice is
 * refused (which one would count?), and so is one the route does not take
 * (a typo must not silently select defaults). 0, or -1 after answering 400. */
static int check_query(const api_route *r, const api_request *req, api_response *resp)
{
    for (size_t i = 0; i < req->nquery; i++) {
        const char *name = req->query[i].name ? req->query[i].name : "";
        for (size_t k = 0; k < i; k++)
            if (req->query[k].name && !strcmp(req->query[k].name, name)) {
                api_problem(resp, 400, name, "given more than once in the query");
                return -1;
            }
        if ((r->flags & API_ROUTE_STRICT) && !strcmp(name, "strict"))
            continue;
        if (r->query && !listed(r->query, name)) {
            if (*r->query)
                api_problem(resp, 400, name, "unknown query parameter; %s takes: %s", r->pattern,
                            r->query);
            else
                api_problem(resp, 400, name, "unknown query parameter; %s takes none", r->pattern);
            return -1;
        }
    }
    return 0;
}

/* JSON routes read JSON: a body declared as something else is refused with
 * 415 rather than parsed on a guess (uploads sniff their formats instead).
 * No Content-Type at all is taken as JSON. 0, or -1 after answering. */
static int check_media_type(const api_route *r, const api_request *req, api_response *resp)
{
    if ((r->flags & API_ROUTE_UPLOAD) || !strcmp(req->method, "GET") ||
        !strcmp(req->method, "HEAD") || !strcmp(req->method, "DELETE"))
        return 0;
    const char *ct = api_header(req, "Content-Type");
    if (!ct)
        return 0;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    if ((n == 16 && !strncasecmp(ct, "application/json", 16)) ||
        (n > 5 && !strncasecmp(ct + n - 5, "+json", 5)))
        return 0;
    int text = r->flags & API_ROUTE_TEXT;
    if (text && ((n == 10 && !strncasecmp(ct, "text/plain", 10)) ||
                 (n == 20 && !strncasecmp(ct, "application/x-ndjson", 20))))
        return 0;
    /* curl -d sends a form's type unless told otherwise: say what to send */
    int form = n == 33 && !strncasecmp(ct, "application/x-www-form-urlencoded", 33);
    api_problem(resp, 415, "Content-Type",
                "%s takes application/json%s, not \"%.*s\"; send the header "
                "'Content-Type: application/json'%s",
                r->pattern, text ? " or text/plain" : "", (int)(n > 60 ? 60 : n), ct,
                form ? " (curl -d sends application/x-www-form-urlencoded unless given "
                       "-H 'Content-Type: application/json')"
                     : "");
    return -1;
}

/* The route serving req (sets req->route, req->params), or NULL with the
 * methods the path allows in allow ("" when no pattern matches). */
static const api_route *find_route(api_request *req, char *allow, size_t allowcap)
{
    const char *method = strcmp(req->method, "HEAD") ? req->method : "GET";
    allow[0] = '\0';
    req->route = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof *routes; i++) {
        const api_route *r = &routes[i];
        if (!match(r->pattern, req->path, req))
            continue;
        req->route = r->pattern;
        if (!strcmp(r->method, method))
            return r;
        size_t n = strlen(allow);
        snprintf(allow + n, allowcap - n, "%s%s%s", n ? ", " : "", r->method,
                 strcmp(r->method, "GET") ? "" : ", HEAD");
    }
    req->nparams = 0;
    return NULL;
}

/* What stands between a request and its handler: the schema, who asks
 * (api/authorize.c) and the tenant's upload slots. 0, or -1 answered. */
static int check_route(api_ctx *ctx, const api_route *r, api_request *req, api_response *resp)
{
    if ((r->flags & API_ROUTE_DB) && !ctx->schema_ready) {
        api_problem(resp, 503, NULL, "the database schema is not ready yet; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        return -1;
    }
    if (r->scope && api_authorize(ctx, r, req, resp))
        return -1;
    if (check_query(r, req, resp) || check_media_type(r, req, resp))
        return -1;
    if ((r->flags & API_ROUTE_UPLOAD) && ctx->limits) {
        if (api_limits_upload_begin(ctx->limits, req, resp))
            return -1;
        req->upload_held = 1;
    }
    return 0;
}

/* 405 with Allow when the path has other methods, else 404. */
static void unrouted(const api_request *req, const char *allow, api_response *resp)
{
    if (*allow) {
        api_problem(resp, 405, NULL, "%s is not allowed on %s; allowed: %s", req->method,
                    req->path, allow);
        api_add_header(resp, "Allow", "%s", allow);
    } else {
        api_problem(resp, 404, NULL, "no such resource: %s", req->path);
    }
}

/* The dashboard: a GET (or HEAD) of a path under / that is no API route is
 * a file of the web folder (api/web.c), when one is served. */
static int is_static(const api_ctx *ctx, const api_request *req, const char *allow)
{
    return !*allow && ctx->web_dir && (!strcmp(req->method, "GET") || !strcmp(req->method, "HEAD")) &&
           strncmp(req->path, "/v1/", 4);
}

int api_admit(api_ctx *ctx, api_request *req, api_response *resp)
{
    char allow[64];
    const api_route *r = find_route(req, allow, sizeof allow);
    if (!r && is_static(ctx, req, allow))
        return 0; /* api_dispatch() serves the file */
    if (!r) { /* nothing will read the body: answer now */
        unrouted(req, allow, resp);
        return -1;
    }
    if (check_route(ctx, r, req, resp))
        return -1;
    req->preauthorized = 1;
    return 0;
}

void api_admit_release(api_ctx *ctx, api_request *req)
{
    if (req->upload_held && ctx->limits)
        api_limits_upload_end(ctx->limits, req);
    req->upload_held = 0;
}

void api_dispatch(api_ctx *ctx, api_request *req, api_response *resp)
{
    char allow[64];
    const api_route *r = find_route(req, allow, sizeof allow);
    if (r) {
        int own_slot = 0; /* a slot taken here, not by api_admit() */
        if (!req->preauthorized) {
            if (check_route(ctx, r, req, resp))
                return;
            own_slot = req->upload_held;
        }
        int idem = 0; /* Idempotency-Key (api/idempotency.h) */
        if ((r->flags & API_ROUTE_IDEMPOTENT) && api_idem_begin(ctx, req, resp, &idem)) {
            if (own_slot)
                api_admit_release(ctx, req);
            return;
        }
        req->strict_route = (r->flags & API_ROUTE_STRICT) != 0;
        int strict = req->strict_route ? warnings_strict_requested(req, resp) : 0;
        if (strict >= 0)
            r->handler(ctx, req, resp);
        if (strict > 0)
            warnings_strict_apply(resp);
        if (idem)
            api_idem_end(ctx, req, resp);
        if (own_slot)
            api_admit_release(ctx, req);
        if (r->flags & API_ROUTE_UPLOAD) /* the profile's digest, for the audit line */
            body_sha256(req, resp->audit_sha256);
        return;
    }
    if (is_static(ctx, req, allow)) {
        req->route = "/";
        api_web(ctx, req, resp);
        if (resp->status != 200) /* metrics count misses as unmatched, as before */
            req->route = NULL;
        return;
    }
    unrouted(req, allow, resp);
}
