/*
 * ops.c — the operating endpoints: GET /health (the process answers),
 * GET /ready (database reachable and schema current: the signal for load
 * balancers and orchestrators), GET /metrics (Prometheus text) and
 * GET /openapi.json (the compiled-in document).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "common/version.h"

void api_health(api_ctx *ctx, api_request *req, api_response *resp)
{
    (void)ctx;
    (void)req;
    api_send_json(resp, 200, json_pack("{s:s, s:s}", "status", "ok", "version", PERFCAST_VERSION));
}

void api_ready(api_ctx *ctx, api_request *req, api_response *resp)
{
    (void)req;
    store_error err;
    /* the schema may be current (another replica migrated it) before this
     * process has noticed and opened its database routes */
    int rc = ctx->schema_ready ? store_ready(ctx->db, &err)
                               : store_error_set(&err, STORE_UNAVAILABLE,
                                                 "the server has not applied its migrations yet");
    if (rc == STORE_OK) {
        api_send_json(resp, 200,
                      json_pack("{s:s, s:i}", "status", "ready", "schema_version",
                                store_schema_latest()));
        return;
    }
    /* anonymous callers learn only that the database is out of reach; the
     * detail (host, port, libpq's words) goes to the request's log line */
    api_problem(resp, 503, NULL, "not ready: %s",
                ctx->schema_ready ? "database unavailable" : err.msg);
    api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
    snprintf(resp->error, sizeof resp->error, "not ready: %.200s", err.msg);
}

void api_metrics_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    (void)req;
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    int rc = out ? api_metrics_write(ctx->metrics, out) : -1;
    if (out && fclose(out))
        rc = -1;
    if (rc) {
        free(text);
        api_problem(resp, 500, NULL, "cannot write the metrics");
        snprintf(resp->error, sizeof resp->error, "metrics exposition failed (out of memory?)");
        return;
    }
    api_send_body(resp, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
}

void api_openapi(api_ctx *ctx, api_request *req, api_response *resp)
{
    (void)ctx;
    (void)req;
    char *doc = malloc(api_openapi_json_len + 1);
    if (!doc) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    memcpy(doc, api_openapi_json, api_openapi_json_len + 1);
    api_send_body(resp, 200, "application/json", doc, api_openapi_json_len);
}
