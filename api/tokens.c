/*
 * tokens.c — /v1/tokens: an admin token manages its own tenant's tokens.
 *
 *   POST   /v1/tokens       {"scope": "read"|"write"|"admin", "expires_in": "30d"}
 *                           -> 201 {"id", "token", "scope", "expires_in_seconds"}; the token
 *                           text appears in this answer only
 *   GET    /v1/tokens       -> {"tokens": [{id, tenant, scope, created_at,
 *                           expires_at, revoked_at}]}, never a secret or hash
 *   DELETE /v1/tokens/{id}  -> 204; another tenant's id answers 404
 */
#include <inttypes.h>
#include <string.h>

#include "api/auth.h"
#include "api/auth_cache.h"
#include "api/handlers.h"

void api_token_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *doc;
    if (api_parse_object(req, resp, &doc))
        return;
    /* unknown fields are refused, as on the experiment routes: a "tenant"
     * that silently did nothing would mislead */
    const char *key;
    json_t *val;
    json_object_foreach(doc, key, val)
    {
        if (strcmp(key, "scope") && strcmp(key, "expires_in")) {
            api_problem(resp, 400, key, "unknown field (known: scope, expires_in)");
            json_decref(doc);
            return;
        }
    }
    const char *scope_name = json_string_value(json_object_get(doc, "scope"));
    int scope = store_scope_from_name(scope_name);
    json_t *exp = json_object_get(doc, "expires_in");
    long long expires = 0;
    const char *bad = NULL, *field = NULL;
    if (!scope) {
        field = "scope";
        bad = "must be \"read\", \"write\" or \"admin\"";
    } else if (exp && !json_is_null(exp)) {
        expires = json_is_string(exp) ? auth_parse_duration(json_string_value(exp)) : -1;
        if (expires < 0) {
            field = "expires_in";
            bad = "must be a duration such as \"30d\", \"12h\", \"90m\" or \"3600s\"";
        }
    }
    json_decref(doc);
    if (bad) {
        api_problem(resp, 400, field, "%s", bad);
        return;
    }
    char hex[2 * AUTH_SECRET_BYTES + 1], token[AUTH_TOKEN_MAX];
    unsigned char sha[32];
    if (auth_secret_new(hex, sha)) {
        api_problem(resp, 500, NULL, "cannot create a token");
        snprintf(resp->error, sizeof resp->error, "RAND_bytes failed");
        return;
    }
    store_error err;
    int64_t id = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_token_create(c, req->tenant_id, scope, sha, expires, &id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    ctx->tokens_exist = 1;
    auth_token_text(id, hex, token, sizeof token);
    api_send_json(resp, 201,
                  json_pack("{s:I, s:s, s:s, s:o*}", "id", (json_int_t)id, "token", token,
                            "scope", store_scope_name(scope), "expires_in_seconds",
                            expires ? json_integer(expires) : NULL));
    memset(token, 0, sizeof token);
    memset(hex, 0, sizeof hex);
    api_add_header(resp, "Cache-Control", "no-store");
}

void api_token_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    store_error err;
    json_t *list = NULL;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_token_list(c, req->tenant_id, &list, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 200, json_pack("{s:o}", "tokens", list));
}

void api_token_revoke(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "token", &id))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_token_revoke(c, id, req->tenant_id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    if (ctx->auth) /* other servers hear of it (store/notify.h) */
        auth_cache_token_forget(ctx->auth, id);
    api_send_empty(resp, 204);
}
