/*
 * idempotency.c — Idempotency-Key over HTTP (api/idempotency.h); the rows
 * are store/idempotency.c's.
 *
 * While its handler runs, the request's thread is bound to its key
 * (store_bind_idempotency), so that what the handler creates names itself in
 * the key's row in the transaction that creates it. A process that dies
 * between that commit and keeping the answer leaves a pending key naming
 * what was created: its retry is answered 303 See Other to it, never run
 * again.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/idempotency.h"
#include "store/idempotency.h"

#define HEADER "Idempotency-Key"

static int key_ok(const char *k)
{
    size_t n = strlen(k);
    if (!n || n > API_IDEM_MAX_KEY)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)k[i] < 0x21 || (unsigned char)k[i] > 0x7e)
            return 0;
    return 1;
}

/* SHA-256 of method, path, query (as sent, in order) and body. */
static int fingerprint(const api_request *req, unsigned char out[32])
{
    memset(out, 0, 32);
    EVP_MD_CTX *s = EVP_MD_CTX_new();
    if (!s || !EVP_DigestInit_ex(s, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(s);
        return -1;
    }
    EVP_DigestUpdate(s, req->method, strlen(req->method) + 1);
    EVP_DigestUpdate(s, req->path, strlen(req->path) + 1);
    for (size_t i = 0; i < req->nquery; i++) {
        EVP_DigestUpdate(s, req->query[i].name, strlen(req->query[i].name) + 1);
        const char *v = req->query[i].value ? req->query[i].value : "";
        EVP_DigestUpdate(s, v, strlen(v) + 1);
    }
    EVP_DigestUpdate(s, "\n", 1);
    EVP_DigestUpdate(s, req->body, req->body_len);
    unsigned int n = 0;
    int ok = EVP_DigestFinal_ex(s, out, &n) && n == 32;
    EVP_MD_CTX_free(s);
    return ok ? 0 : -1;
}

static double lock_of(const api_ctx *ctx)
{
    return ctx->idempotency_lock > 0 ? ctx->idempotency_lock : API_IDEM_LOCK_SECONDS;
}

static double ttl_of(const api_ctx *ctx)
{
    return ctx->idempotency_ttl > 0 ? ctx->idempotency_ttl : 86400;
}

/* The literal of a stored media type (responses hold literals). */
static const char *media_literal(const char *t)
{
    static const char *const known[] = {"application/json", "application/problem+json",
                                        "text/plain; charset=utf-8", "application/x-ndjson"};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(t, known[i]))
            return known[i];
    return *t ? "application/octet-stream" : NULL;
}

static void replay(store_idem *s, api_response *resp)
{
    resp->status = s->status;
    resp->content_type = media_literal(s->content_type);
    resp->body = s->body;
    resp->body_len = s->body_len;
    s->body = NULL; /* the response owns it now */
    if (s->location[0])
        api_add_header(resp, "Location", "%s", s->location);
    api_add_header(resp, "Idempotent-Replayed", "true");
}

/* The answer of a key whose first request committed what it created but
 * whose answer was lost (its process died, or it failed after the commit):
 * 303 See Other to what was created, kept as the key's answer from now on. */
static void lost_answer(api_ctx *ctx, const api_request *req, const char *key,
                        const char *created, api_response *resp)
{
    char detail[400];
    snprintf(detail, sizeof detail,
             "the first request with this Idempotency-Key created %s and committed it, but its "
             "answer was lost; GET %s reads it",
             created, created);
    api_send_json(resp, 303, json_pack("{s:i, s:s, s:s}", "status", 303, "location", created,
                                       "detail", detail));
    api_add_header(resp, "Location", "%s", created);
    api_add_header(resp, "Idempotent-Replayed", "true");
    if (resp->status != 303)
        return; /* out of memory: nothing to keep */
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    if (c)
        store_idem_finish(c, req->tenant_id, key, 303, "application/json", created, resp->body,
                          resp->body_len, &err);
    store_release(ctx->db, c);
}

int api_idem_begin(api_ctx *ctx, api_request *req, api_response *resp, int *held)
{
    *held = 0;
    const char *key = api_header(req, HEADER);
    if (!key)
        return 0;
    if (!key_ok(key)) {
        api_problem(resp, 400, HEADER, "an Idempotency-Key is 1 to %d visible ASCII characters",
                    API_IDEM_MAX_KEY);
        return 1;
    }
    unsigned char fp[32];
    if (fingerprint(req, fp)) {
        api_problem(resp, 503, NULL, "out of memory; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        return 1;
    }
    store_error err;
    store_idem s;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_idem_claim(c, req->tenant_id, key, fp, req->route ? req->route : "",
                                  lock_of(ctx), ttl_of(ctx), &s, &err)
               : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return 1;
    }
    if (s.claimed) {
        *held = 1;
        store_bind_idempotency(req->tenant_id, key);
        return 0;
    }
    if (!s.same_request) {
        api_problem(resp, 422, HEADER,
                    "this Idempotency-Key was used for another request (%s, another body or "
                    "query); use a new key for a new request",
                    s.route);
    } else if (s.pending && s.created[0] && s.lock_over) {
        lost_answer(ctx, req, key, s.created, resp);
    } else if (s.pending) {
        api_problem(resp, 409, HEADER,
                    "the first request with this Idempotency-Key is still running; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
    } else {
        replay(&s, resp);
    }
    store_idem_free(&s);
    return 1;
}

void api_idem_end(api_ctx *ctx, api_request *req, api_response *resp)
{
    const char *key = api_header(req, HEADER);
    if (!key)
        return;
    store_bind_idempotency(0, NULL);
    if (ctx->test_hook) /* tests: a crash after the commit, before the answer is kept */
        ctx->test_hook("idempotency-answer", key);
    if (ctx->test_hook && ctx->test_hook("idempotency-fail", key)) { /* tests: a 5xx after it */
        api_response_free(resp);
        api_problem(resp, 500, NULL, "the answer failed after the commit");
    }
    int keep = resp->status >= 200 && resp->status < 500 && resp->status != 408 &&
               resp->status != 429 && resp->body_len <= API_IDEM_MAX_BODY;
    const char *location = NULL;
    for (size_t i = 0; i < resp->nheaders; i++)
        if (!strcmp(resp->headers[i].name, "Location"))
            location = resp->headers[i].value;
    char created[160] = "";
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    if (c) {
        if (keep)
            store_idem_finish(c, req->tenant_id, key, resp->status,
                              resp->content_type ? resp->content_type : "", location, resp->body,
                              resp->body_len, &err);
        else
            store_idem_release(c, req->tenant_id, key, created, sizeof created, &err);
    }
    /* on failure the key stays pending: a retry gets 409 until its lock runs out */
    store_release(ctx->db, c);
    if (created[0]) { /* a failure after the commit: retries see what was created */
        api_response lost = {0};
        lost_answer(ctx, req, key, created, &lost);
        api_response_free(&lost);
    }
}
