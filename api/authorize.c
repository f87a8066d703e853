/*
 * authorize.c — api_authorize(): the check api_dispatch() runs before every
 * route that has a scope (api/router.c).
 *
 *   1. Who: the bearer token's row (store/tokens.h), its secret's hash
 *      compared in constant time, neither revoked nor expired — else 401
 *      with WWW-Authenticate. Without Authorization, open mode (api/auth.h)
 *      makes the caller an admin of the default tenant while no token
 *      exists and the server may run open.
 *   2. May they: the token's scope covers the route's, else 403.
 *   3. Not too often: the token's request rate (api/limits.h), else 429.
 *   4. Is it theirs: for routes whose {id} is an experiment or a job, the
 *      owning tenant must be the caller's, else 404 with the same words as
 *      for an id that does not exist, so another tenant's ids stay unseen.
 *
 * Nothing is cached: the token's row is read on every request, so a
 * revocation counts from the next request on.
 */
#include <inttypes.h>
#include <string.h>

#include "api/auth.h"
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

/* Who asks: fills req->tenant_id, token_id, scope. 0, or -1 answered. */
static int identify(api_ctx *ctx, PGconn *c, api_request *req, api_response *resp)
{
    store_error err;
    const char *authz = api_header(req, "Authorization");
    if (!authz && ctx->open_ok && !ctx->tokens_exist) {
        int exist = 0;
        if (store_tokens_exist(c, &exist, &err)) {
            api_store_problem(resp, &err);
            return -1;
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
    const char *token = auth_bearer(authz);
    int64_t id;
    unsigned char sha[32];
    if (!token || auth_token_parse(token, &id, sha))
        return unauthorized(resp, 1, "the Authorization header holds no valid bearer token");
    store_token t;
    int rc = store_token_get(c, id, &t, &err);
    if (rc == STORE_NOT_FOUND || (!rc && (!auth_hash_equal(t.sha256, sha) || !t.usable)))
        return unauthorized(resp, 1, "the token is unknown, revoked or expired");
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
static int owned(PGconn *c, const api_route *r, int64_t id, api_request *req,
                 api_response *resp)
{
    int job = (r->flags & API_ROUTE_JOB) != 0, sim = (r->flags & API_ROUTE_SIMULATION) != 0;
    const char *what = job ? "job" : sim ? "simulation" : "experiment";
    int64_t tenant = 0;
    store_error err;
    int rc = job ? store_job_tenant(c, id, &tenant, &err)
             : sim ? store_sim_tenant(c, id, &tenant, &err)
                   : store_experiment_tenant(c, id, &tenant, &err);
    if (rc == STORE_NOT_FOUND || (!rc && tenant != req->tenant_id)) {
        api_problem(resp, 404, NULL, "no %s with id %" PRId64, what, id);
        return -1;
    }
    if (rc) {
        api_store_problem(resp, &err);
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
    store_error err;
    if (!ctx->db) {
        api_problem(resp, 503, NULL, "no database to check the token against; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        return -1;
    }
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c) {
        api_store_problem(resp, &err);
        return -1;
    }
    int rc = identify(ctx, c, req, resp);
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
        rc = owned(c, r, id, req, resp);
    store_release(ctx->db, c);
    return rc;
}
