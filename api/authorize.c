/*
 * authorize.c — api_authorize(): the check api_dispatch() runs before every
 * route that has a scope (api/router.c).
 *
 *   1. Who: the bearer token's row (store/tokens.h), its secret's hash
 *      compared in constant time, neither revoked nor expired — else 401
 *      (an address with too many refused tokens lately: 429 before the
 *      lookup, api/limits.h)
 *      with WWW-Authenticate. Without Authorization, open mode (api/auth.h)
 *      makes the caller an admin of the default tenant while no token
 *      exists and the server may run open.
 *   2. May they: the token's scope covers the route's, else 403.
 *   3. Not too often: the token's request rate (api/limits.h), else 429.
 *   4. Is it theirs: for routes whose {id} is an experiment or a job, the
 *      owning tenant must be the caller's, else 404 with the same words as
 *      for an id that does not exist, so another tenant's ids stay unseen.
 *
 * The token's row and an experiment's owner come from api/auth_cache.h
 * when held there (no database round trip on the hot path): a token's row
 * is at most half a second old, so a revocation counts within that time on
 * every server, and at once on this one and wherever the notice is heard.
 * A connection is taken from the pool only when something must be asked.
 */
#include <inttypes.h>
#include <string.h>

#include "api/auth.h"
#include "api/auth_cache.h"
#include "api/handlers.h"
#include "api/limits.h"
#include "store/simulations.h"

static int unauthorized(api_response *resp, int invalid, const char *detail)
{
    api_problem(resp, 401, NULL, "%s", detail);
    if (invalid)
        api_add_header(resp, "WWW-Authenticate",
                       "Bearer realm=\"perfcast\", error=\"invalid_token\"");
    else
        api_add_header(resp, "WWW-Authenticate", "Bearer realm=\"perfcast\"");
    return -1;
}

/* A pooled connection, taken on first need and kept for the request. */
typedef struct lazy_conn {
    api_ctx *ctx;
    PGconn *c;
} lazy_conn;

static PGconn *conn_of(lazy_conn *l, api_response *resp)
{
    store_error err;
    if (!l->c && !(l->c = store_acquire(l->ctx->db, &err)))
        api_store_problem(resp, &err);
    return l->c;
}

/* The token's row, from the cache or the database. */
static int token_row(lazy_conn *l, int64_t id, store_token *t, store_error *err)
{
    auth_cache *cache = l->ctx->auth;
    if (cache && auth_cache_token_get(cache, id, t))
        return STORE_OK;
    auth_stamp epoch = cache ? auth_cache_epoch(cache) : (auth_stamp){0, 0};
    if (!l->c && !(l->c = store_acquire(l->ctx->db, err)))
        return err->code;
    int rc = store_token_get(l->c, id, t, err);
    if (!rc && cache)
        auth_cache_token_put(cache, t, epoch);
    return rc;
}

/* Who asks: fills req->tenant_id, token_id, scope. 0, or -1 answered. */
static int identify(api_ctx *ctx, lazy_conn *l, api_request *req, api_response *resp)
{
    store_error err;
    const char *authz = api_header(req, "Authorization");
    if (!authz && ctx->open_ok && !ctx->tokens_exist) {
        int exist = 0;
        if (!ctx->auth || !auth_cache_no_tokens(ctx->auth)) {
            auth_stamp epoch = ctx->auth ? auth_cache_epoch(ctx->auth) : (auth_stamp){0, 0};
            PGconn *c = conn_of(l, resp);
            if (!c)
                return -1;
            if (store_tokens_exist(c, &exist, &err)) {
                api_store_problem(resp, &err);
                return -1;
            }
            if (!exist && ctx->auth)
                auth_cache_set_no_tokens(ctx->auth, epoch);
        }
        if (!exist) {
            req->tenant_id = STORE_DEFAULT_TENANT;
            req->token_id = 0;
            req->scope = STORE_SCOPE_ADMIN;
            return 0;
        }
        ctx->tokens_exist = 1;
    }
    if (!authz)
        return unauthorized(resp, 0, "this resource needs an Authorization: Bearer token");
    /* an address that keeps sending bad tokens is refused before the lookup */
    if (api_limits_bad_token_check(ctx->limits, req->client_addr, resp))
        return -1;
    const char *token = auth_bearer(authz);
    int64_t id;
    unsigned char sha[32];
    if (!token || auth_token_parse(token, &id, sha)) {
        api_limits_bad_token_note(ctx->limits, req->client_addr);
        return unauthorized(resp, 1, "the Authorization header holds no valid bearer token");
    }
    store_token t;
    int rc = token_row(l, id, &t, &err);
    if (rc == STORE_NOT_FOUND || (!rc && (!auth_hash_equal(t.sha256, sha) || !t.usable))) {
        api_limits_bad_token_note(ctx->limits, req->client_addr);
        return unauthorized(resp, 1, "the token is unknown, revoked or expired");
    }
    if (rc) {
        api_store_problem(resp, &err);
        return -1;
    }
    req->tenant_id = t.tenant_id;
    req->token_id = t.id;
    req->scope = t.scope;
    return 0;
}

/* Is the {id} of an experiment or job route the caller's? 0, or -1 answered. */
static int owned(lazy_conn *l, const api_route *r, int64_t id, api_request *req,
                 api_response *resp)
{
    int job = (r->flags & API_ROUTE_JOB) != 0, sim = (r->flags & API_ROUTE_SIMULATION) != 0;
    const char *what = job ? "job" : sim ? "simulation" : "experiment";
    int64_t tenant = 0;
    store_error err;
    auth_cache *cache = l->ctx->auth;
    if (!job && !sim && cache && auth_cache_owner_get(cache, id, &tenant))
        goto known;
    auth_stamp epoch = cache ? auth_cache_epoch(cache) : (auth_stamp){0, 0};
    PGconn *c = conn_of(l, resp);
    if (!c)
        return -1;
    int rc = job ? store_job_tenant(c, id, &tenant, &err)
             : sim ? store_sim_tenant(c, id, &tenant, &err)
                   : store_experiment_tenant(c, id, &tenant, &err);
    if (!rc && !job && !sim && cache) /* simulations have ids of their own: not cached */
        auth_cache_owner_put(cache, id, tenant, epoch);
    if (!rc)
        goto known;
    if (rc == STORE_NOT_FOUND || (!rc && tenant != req->tenant_id)) {
        api_problem(resp, 404, NULL, "no %s with id %" PRId64, what, id);
        return -1;
    }
    api_store_problem(resp, &err);
    return -1;
known:
    if (tenant != req->tenant_id) {
        api_problem(resp, 404, NULL, "no %s with id %" PRId64, what, id);
        return -1;
    }
    return 0;
}

int api_authorize(api_ctx *ctx, const api_route *r, api_request *req, api_response *resp)
{
    /* an {id} that is no id names nothing, whoever asks: 404 before the store */
    int64_t id = 0;
    int scoped = (r->flags & (API_ROUTE_EXPERIMENT | API_ROUTE_JOB | API_ROUTE_SIMULATION)) != 0;
    if (scoped && api_path_id(req, resp, "id",
                              r->flags & API_ROUTE_JOB          ? "job"
                              : r->flags & API_ROUTE_SIMULATION ? "simulation"
                                                                : "experiment",
                              &id))
        return -1;
    if (!ctx->db) {
        api_problem(resp, 503, NULL, "no database to check the token against; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        return -1;
    }
    lazy_conn l = {ctx, NULL};
    int rc = identify(ctx, &l, req, resp);
    if (!rc && req->scope < r->scope) {
        api_problem(resp, 403, NULL, "this %s needs a token with scope %s; this one has %s",
                    strcmp(r->method, "GET") ? "operation" : "resource",
                    store_scope_name(r->scope), store_scope_name(req->scope));
        api_add_header(resp, "WWW-Authenticate",
                       "Bearer realm=\"perfcast\", error=\"insufficient_scope\", scope=\"%s\"",
                       store_scope_name(r->scope));
        rc = -1;
    }
    if (!rc && ctx->limits && api_limits_request(ctx->limits, req, resp))
        rc = -1; /* over the rate: before any further query */
    if (!rc && scoped)
        rc = owned(&l, r, id, req, resp);
    if (l.c)
        store_release(ctx->db, l.c);
    return rc;
}
