/*
 * test_api_routes.c — the API layer without a server or a database: the
 * route table against api/openapi.json (every route documented, every
 * documented operation routed), routing (404, 405 with Allow, HEAD, path
 * parameters, the 503 before migrations), problem documents, the JSON
 * writer's numbers and the metrics exposition.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "common/version.h"
#include "tests/check.h"

static void lower(const char *s, char *out, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

static void test_openapi_matches_routes(void)
{
    json_error_t je;
    json_t *doc = json_loadb(api_openapi_json, api_openapi_json_len, JSON_REJECT_DUPLICATES, &je);
    check(doc != NULL, "api/openapi.json: %s at line %d", je.text, je.line);
    check(!strcmp(json_string_value(json_object_get(doc, "openapi")), "3.1.0"),
          "openapi version");
    json_t *paths = json_object_get(doc, "paths");
    size_t n;
    const api_route *routes = api_routes(&n);
    for (size_t i = 0; i < n; i++) {
        char m[16];
        lower(routes[i].method, m, sizeof m);
        check(json_object_get(json_object_get(paths, routes[i].pattern), m) != NULL,
              "route %s %s is not in api/openapi.json", routes[i].method, routes[i].pattern);
    }
    const char *path;
    json_t *item;
    json_object_foreach(paths, path, item)
    {
        const char *key;
        json_t *op;
        json_object_foreach(item, key, op)
        {
            static const char *const methods[] = {"get", "put", "post", "delete", "patch",
                                                  "head", "options", "trace"};
            int is_method = 0;
            for (size_t k = 0; k < sizeof methods / sizeof *methods; k++)
                is_method |= !strcmp(key, methods[k]);
            if (!is_method)
                continue;
            int routed = 0;
            for (size_t i = 0; i < n; i++) {
                char m[16];
                lower(routes[i].method, m, sizeof m);
                routed |= !strcmp(routes[i].pattern, path) && !strcmp(m, key);
            }
            check(routed, "api/openapi.json documents %s %s, which no route serves", key, path);
            check(json_is_object(json_object_get(op, "responses")) &&
                      json_is_string(json_object_get(op, "operationId")),
                  "%s %s: no operationId or responses", key, path);
        }
    }
    json_decref(doc);
}

/* Dispatches method path on a context without a database. */
static api_response call(api_ctx *ctx, const char *method, const char *path)
{
    api_request req = {.method = method, .path = path, .body = ""};
    api_response resp = {0};
    api_dispatch(ctx, &req, &resp);
    return resp;
}

static const char *header(const api_response *r, const char *name)
{
    for (size_t i = 0; i < r->nheaders; i++)
        if (!strcmp(r->headers[i].name, name))
            return r->headers[i].value;
    return NULL;
}

static void test_routing(void)
{
    api_metrics *m = api_metrics_new();
    api_ctx ctx = {.db = NULL, .metrics = m, .schema_ready = 0};

    api_response r = call(&ctx, "GET", "/health");
    check(r.status == 200 && r.body &&
              !strcmp(r.body, "{\"status\":\"ok\",\"version\":\"" PERFCAST_VERSION "\"}"),
          "health: %d %s",
          r.status, r.body ? r.body : "");
    api_response_free(&r);
    r = call(&ctx, "HEAD", "/health");
    check(r.status == 200, "HEAD is GET: %d", r.status);
    api_response_free(&r);

    r = call(&ctx, "GET", "/v1/experiments/7");
    check(r.status == 503 && header(&r, "Retry-After"), "before migrations: %d", r.status);
    api_response_free(&r);
    r = call(&ctx, "GET", "/ready"); /* answers without asking the (absent) store */
    check(r.status == 503 && header(&r, "Retry-After"), "ready before migrations: %d", r.status);
    api_response_free(&r);
    check(api_route_of("/v1/experiments/5") &&
              !strcmp(api_route_of("/v1/experiments/5"), "/v1/experiments/{id}") &&
              api_route_of("/nope") == NULL,
          "api_route_of");

    r = call(&ctx, "GET", "/nothing/here");
    check(r.status == 404 && !strcmp(r.content_type, "application/problem+json") &&
              strstr(r.body, "\"detail\":\"no such resource: /nothing/here\""),
          "404: %d %s", r.status, r.body ? r.body : "");
    api_response_free(&r);
    const char *near_misses[] = {"/health/", "/healthz", "/v1/experiments/", "/v1/experiments//x",
                                 "/v1/experiments/1/2", "", "/"};
    for (size_t i = 0; i < sizeof near_misses / sizeof *near_misses; i++) {
        r = call(&ctx, "GET", near_misses[i]);
        check(r.status == 404, "GET \"%s\": %d, want 404", near_misses[i], r.status);
        api_response_free(&r);
    }

    r = call(&ctx, "PATCH", "/v1/experiments/3");
    const char *allow = header(&r, "Allow");
    check(r.status == 405 && allow && !strcmp(allow, "GET, HEAD, DELETE"), "405: %d Allow %s",
          r.status, allow ? allow : "(none)");
    api_response_free(&r);

    /* path parameters */
    api_request req = {.method = "DELETE", .path = "/v1/experiments/42", .body = ""};
    ctx.schema_ready = 1;
    ctx.db = NULL;
    size_t n;
    const api_route *routes = api_routes(&n);
    (void)routes;
    api_response resp = {0};
    /* match only: a path id that is not a number answers 404 without the store */
    api_request bad = {.method = "GET", .path = "/v1/experiments/x1", .body = ""};
    api_dispatch(&ctx, &bad, &resp);
    check(resp.status == 404 && !strcmp(bad.route, "/v1/experiments/{id}") && bad.nparams == 1 &&
              !strcmp(bad.params[0].name, "id") && !strcmp(bad.params[0].value, "x1"),
          "path parameter: %d %s", resp.status, bad.route ? bad.route : "(none)");
    api_response_free(&resp);
    (void)req;
    api_metrics_free(m);
}

static void test_problem_and_json(void)
{
    api_response r = {0};
    api_problem(&r, 400, "training.batch_size", "must be an integer >= %d, got %d", 1, -3);
    check(!strcmp(r.body, "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                          "\"detail\":\"training.batch_size: must be an integer >= 1, got -3\","
                          "\"field\":\"training.batch_size\"}"),
          "problem: %s", r.body);
    api_response_free(&r);

    store_error e = {.code = STORE_UNAVAILABLE, .msg = "connection refused"};
    api_store_problem(&r, &e);
    check(r.status == 503 && header(&r, "Retry-After") && !strstr(r.body, "refused") &&
              strstr(r.error, "refused"),
          "unavailable: %d %s / %s", r.status, r.body, r.error);
    api_response_free(&r);
    e = (store_error){.code = STORE_INTERNAL, .msg = "syntax error at or near"};
    api_store_problem(&r, &e);
    check(r.status == 500 && !strstr(r.body, "syntax") && strstr(r.error, "syntax"),
          "internal errors are logged, not sent: %s", r.body);
    api_response_free(&r);

    json_t *doc = json_pack("{s:f, s:f, s:f, s:f, s:I, s:s, s:n}", "a", 0.05, "b", 0.1 + 0.2, "c",
                            1e300, "d", 3.0, "e", (json_int_t)-7, "s", "q\"\\\n\x01é", "z");
    size_t len;
    char *text = api_json_text(doc, &len);
    check(text && !strcmp(text, "{\"a\":0.05,\"b\":0.30000000000000004,\"c\":1e+300,\"d\":3.0,"
                                "\"e\":-7,\"s\":\"q\\\"\\\\\\n\\u0001é\",\"z\":null}") &&
              len == strlen(text),
          "json text: %s", text ? text : "(null)");
    json_t *back = text ? json_loads(text, 0, NULL) : NULL;
    check(back && json_equal(back, doc), "json text reads back");
    json_decref(back);
    free(text);
    json_decref(doc);
}

static void collector(void *arg, FILE *out)
{
    fprintf(out, "extra_figure %d\n", *(int *)arg);
}

static void test_metrics(void)
{
    api_metrics *m = api_metrics_new();
    int figure = 42;
    check(!api_metrics_add_collector(m, collector, &figure), "add collector");
    static const char route[] = "/health";
    api_metrics_observe(m, route, api_metrics_method("GET"), 200, 0.0003);
    api_metrics_observe(m, route, api_metrics_method("GET"), 200, 0.002);
    api_metrics_observe(m, route, api_metrics_method("BREW"), 405, 20);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    check(!api_metrics_write(m, out), "write metrics");
    fclose(out);
    const char *want[] = {
        "perfcast_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} 2\n",
        "perfcast_http_requests_total{route=\"/health\",method=\"other\",status=\"405\"} 1\n",
        "perfcast_http_request_duration_seconds_bucket{route=\"/health\",le=\"0.0005\"} 1\n",
        "perfcast_http_request_duration_seconds_bucket{route=\"/health\",le=\"0.0025\"} 2\n",
        "perfcast_http_request_duration_seconds_bucket{route=\"/health\",le=\"10\"} 2\n",
        "perfcast_http_request_duration_seconds_bucket{route=\"/health\",le=\"30\"} 3\n",
        "perfcast_http_request_duration_seconds_bucket{route=\"/health\",le=\"+Inf\"} 3\n",
        "perfcast_http_request_duration_seconds_count{route=\"/health\"} 3\n",
        "extra_figure 42\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        check(text && strstr(text, want[i]), "metrics lack %s", want[i]);
    free(text);
    api_metrics_free(m);
}

int main(void)
{
    test_openapi_matches_routes();
    test_routing();
    test_problem_and_json();
    test_metrics();
    return check_summary();
}
