/*
 * fuzz_dispatch.c — libFuzzer target for the request-handling layer: an
 * input is an HTTP-like request ("METHOD PATH?QUERY\n", header lines
 * "Name: value\n", an empty line, the body), turned into an api_request and
 * handed to api_dispatch() with a context that has no database (every route
 * that would need one answers 503 from the authorization check), and to the
 * one /v1 handler that needs no database, api_fit, directly. The token and
 * duration parsers see the Authorization header and the query too. A
 * response must be a status from 100 to 599 with a content type and a
 * body when the status has one; anything else aborts. No network.
 * Seeds: tests/fuzz/corpus/dispatch/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/auth.h"
#include "api/handlers.h"
#include "api/limits.h"

#define MAX_KV 32

static api_metrics *metrics;
static api_limits *limits;

static void check_response(const api_response *r)
{
    if (r->status < 100 || r->status > 599)
        abort();
    if (r->status != 204 && r->status != 304 && (!r->content_type || (!r->body && r->body_len)))
        abort();
    if (r->nheaders > API_MAX_RESPONSE_HEADERS)
        abort();
}

/* Splits "a=b&c=d" (in place) into kv. */
static size_t split_query(char *q, api_kv *kv)
{
    size_t n = 0;
    while (q && *q && n < MAX_KV) {
        char *amp = strchr(q, '&');
        if (amp)
            *amp = '\0';
        char *eq = strchr(q, '=');
        if (eq)
            *eq = '\0';
        kv[n++] = (api_kv){q, eq ? eq + 1 : ""};
        q = amp ? amp + 1 : NULL;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!metrics) {
        metrics = api_metrics_new();
        limits = api_limits_new(1000, 10, 1);
    }
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    /* request line */
    char *line_end = memchr(buf, '\n', size);
    char *rest = line_end ? line_end + 1 : buf + size;
    if (line_end)
        *line_end = '\0';
    char *method = buf, *path = strchr(buf, ' ');
    if (path)
        *path++ = '\0';
    else
        path = "/";
    char *qs = strchr(path, '?');
    if (qs)
        *qs++ = '\0';
    api_kv query[MAX_KV], headers[MAX_KV];
    size_t nquery = split_query(qs, query), nheaders = 0;
    /* headers up to an empty line */
    while (rest < buf + size && *rest != '\n' && nheaders < MAX_KV) {
        char *end = memchr(rest, '\n', (size_t)(buf + size - rest));
        if (end)
            *end = '\0';
        char *colon = strchr(rest, ':');
        if (colon) {
            *colon = '\0';
            char *v = colon + 1;
            while (*v == ' ')
                v++;
            headers[nheaders++] = (api_kv){rest, v};
        }
        rest = end ? end + 1 : buf + size;
    }
    if (rest < buf + size && *rest == '\n')
        rest++;
    size_t body_len = (size_t)(buf + size - rest);

    api_ctx ctx = {.db = NULL, .metrics = metrics, .schema_ready = size % 2, .open_ok = 1,
                   .limits = limits};
    api_request req = {.method = method, .path = path, .query = query, .nquery = nquery,
                       .headers = headers, .nheaders = nheaders, .body = rest,
                       .body_len = body_len};
    api_response resp = {0};
    if (strcmp(path, "/ready") || !ctx.schema_ready) /* /ready asks the store once migrated */
        api_dispatch(&ctx, &req, &resp);
    else
        api_send_empty(&resp, 204);
    check_response(&resp);
    api_response_free(&resp);

    /* the parsers of what clients send */
    int64_t id;
    unsigned char sha[32];
    const char *bearer = auth_bearer(api_header(&req, "Authorization"));
    if (bearer && !auth_token_parse(bearer, &id, sha) && id <= 0)
        abort();
    const char *exp = api_query(&req, "expires_in");
    if (exp && auth_parse_duration(exp) == 0)
        abort();
    req.token_id = (int64_t)(size % 7) + 1;
    if (api_limits_request(limits, &req, &resp))
        check_response(&resp);
    api_response_free(&resp);

    /* the stateless handler, past the authorization */
    if (!strcmp(method, "POST") && !strcmp(path, "/v1/fit") && body_len < 4096) {
        api_request fit = req;
        fit.route = "/v1/fit";
        fit.tenant_id = 1;
        fit.scope = 3;
        api_fit(&ctx, &fit, &resp);
        check_response(&resp);
        api_response_free(&resp);
    }
    free(buf);
    return 0;
}
