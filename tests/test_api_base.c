/*
 * test_api_base.c — the HTTP service against a real PostgreSQL: operating
 * endpoints, experiments (create, get, list, delete, every validation
 * error), error conventions (404, 405, 413, malformed JSON), the database
 * going away and coming back, a killed and restarted server, a graceful
 * stop, the log format and the command line's configuration errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "store/migrate.h"
#include "tests/check.h"
#include "tests/harness.h"

#define MAX_BODY 65536 /* PERFCAST_MAX_BODY for this test's server */

static const char base_doc[] =
    "{\"name\":\"base\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
    "\"training\":{\"train_samples\":1000,\"validation_samples\":100,\"batch_size\":8,"
    "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":2},"
    "\"cost\":{\"cores_per_rank\":4,\"price_per_core_hour\":0.05}}";

/* The base document with name replaced and the value at a dotted path set
 * (value_json NULL: removed). Returned as text (free). */
static char *doc_with(const char *name, const char *path, const char *value_json)
{
    json_t *doc = json_loads(base_doc, 0, NULL);
    json_object_set_new(doc, "name", json_string(name));
    if (path) {
        char key[128];
        json_t *obj = doc;
        const char *p = path, *dot;
        while ((dot = strchr(p, '.'))) {
            snprintf(key, sizeof key, "%.*s", (int)(dot - p), p);
            obj = json_object_get(obj, key);
            p = dot + 1;
        }
        if (value_json)
            json_object_set_new(obj, p, json_loads(value_json, JSON_DECODE_ANY, NULL));
        else
            json_object_del(obj, p);
    }
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

/* A problem+json answer with this status whose detail contains want. */
static void check_problem(const harness_response *r, int status, const char *want,
                          const char *what)
{
    char ct[128] = "";
    harness_header(r, "Content-Type", ct, sizeof ct);
    json_t *doc = harness_json(r);
    const char *detail = json_string_value(json_object_get(doc, "detail"));
    check(r->status == status, "%s: status %d, want %d (%s)", what, r->status, status,
          r->body ? r->body : "");
    check(!strcmp(ct, "application/problem+json"), "%s: content type \"%s\"", what, ct);
    check(json_is_string(json_object_get(doc, "type")) &&
              json_is_string(json_object_get(doc, "title")) &&
              json_integer_value(json_object_get(doc, "status")) == status && detail,
          "%s: not a problem document: %s", what, r->body ? r->body : "");
    check(detail && want && strstr(detail, want), "%s: detail \"%s\" lacks \"%s\"", what,
          detail ? detail : "", want ? want : "");
    json_decref(doc);
}

static long experiment_count(harness *h)
{
    char out[32];
    return harness_sql(h, "SELECT count(*) FROM experiments", out, sizeof out) ? -1 : atol(out);
}

/* Creates an experiment; returns its id, 0 on failure. */
static long create(harness *h, const char *name)
{
    char *doc = doc_with(name, NULL, NULL);
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    free(doc);
    json_t *body = harness_json(&r);
    long id = r.status == 201 ? (long)json_integer_value(json_object_get(body, "id")) : 0;
    check(id > 0, "create %s: %d %s", name, r.status, r.body ? r.body : "");
    json_decref(body);
    harness_response_free(&r);
    return id;
}

static void test_operating(harness *h)
{
    harness_response r;
    harness_get(h, "/health", &r);
    char ct[64] = "";
    harness_header(&r, "Content-Type", ct, sizeof ct);
    check(r.status == 200 && strstr(r.body, "\"status\":\"ok\""), "health: %d %s", r.status,
          r.body ? r.body : "");
    check(!strcmp(ct, "application/json"), "health content type %s", ct);
    harness_response_free(&r);

    harness_request(h, "HEAD", "/health", NULL, NULL, 0, &r);
    check(r.status == 200 && r.body_len == 0, "HEAD /health: %d, %zu body bytes", r.status,
          r.body_len);
    harness_response_free(&r);

    char version[16] = "", nrows[16] = "", name[64] = "";
    harness_sql(h, "SELECT max(version) FROM schema_migrations", version, sizeof version);
    harness_sql(h, "SELECT count(*) FROM schema_migrations WHERE applied_at IS NOT NULL", nrows,
                sizeof nrows);
    harness_sql(h, "SELECT name FROM schema_migrations WHERE version = 1", name, sizeof name);
    /* every migration compiled in is applied (numbers need not be contiguous:
     * each change takes its own number) */
    int newest = 0;
    for (int i = 0; i < store_nmigrations; i++)
        newest = store_migrations[i].version > newest ? store_migrations[i].version : newest;
    check(atoi(version) == newest && atoi(nrows) == store_nmigrations,
          "schema_migrations: max %s, %s rows; %d migrations, the newest %d", version, nrows,
          store_nmigrations, newest);
    check(!strcmp(name, "0001_init"), "migration 1 is named \"%s\"", name);
    harness_get(h, "/ready", &r);
    json_t *doc = harness_json(&r);
    check(r.status == 200 && json_integer_value(json_object_get(doc, "schema_version")) ==
                                 atoi(version),
          "ready: %d %s", r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);

    harness_get(h, "/openapi.json", &r);
    doc = harness_json(&r);
    json_t *paths = json_object_get(doc, "paths");
    check(r.status == 200 && !strcmp(json_string_value(json_object_get(doc, "openapi")), "3.1.0"),
          "openapi: %d", r.status);
    check(json_object_get(paths, "/v1/experiments") &&
              json_object_get(paths, "/v1/experiments/{id}") && json_object_get(paths, "/ready"),
          "openapi lacks paths");
    json_decref(doc);
    harness_response_free(&r);

    harness_get(h, "/no/such/thing", &r);
    check_problem(&r, 404, "/no/such/thing", "unknown path");
    harness_response_free(&r);

    const char *want[] = {
        "# TYPE perfcast_http_requests_total counter",
        "perfcast_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} 1\n",
        "perfcast_http_requests_total{route=\"/health\",method=\"HEAD\",status=\"200\"} 1\n",
        "perfcast_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1\n",
        "# TYPE perfcast_http_request_duration_seconds histogram",
        "perfcast_http_request_duration_seconds_bucket{route=\"/ready\",le=\"+Inf\"}",
        "perfcast_http_request_duration_seconds_count{route=\"/openapi.json\"} 1\n",
        "perfcast_db_pool_connections{state=\"open\"}",
    };
    /* a request is counted when the server is done with it, which can be
     * just after the client has its answer: look again for a while */
    for (int tries = 0; tries < 40; tries++) {
        harness_get(h, "/metrics", &r);
        size_t found = 0;
        for (size_t i = 0; i < sizeof want / sizeof *want; i++)
            found += r.body && strstr(r.body, want[i]);
        if (found == sizeof want / sizeof *want)
            break;
        harness_response_free(&r);
        harness_sleep(0.05);
    }
    ct[0] = '\0';
    harness_header(&r, "Content-Type", ct, sizeof ct);
    check(r.status == 200 && !strncmp(ct, "text/plain", 10), "metrics: %d %s", r.status, ct);
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        check(r.body && strstr(r.body, want[i]), "metrics lack: %s", want[i]);
    harness_response_free(&r);
}

static void test_experiments(harness *h)
{
    harness_response r;
    char *doc = doc_with("resnet50", NULL, NULL);
    harness_post(h, "/v1/experiments", doc, &r);
    free(doc);
    json_t *e = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(e, "id"));
    char loc[128] = "", want_loc[64];
    harness_header(&r, "Location", loc, sizeof loc);
    snprintf(want_loc, sizeof want_loc, "/v1/experiments/%ld", id);
    check(r.status == 201 && id > 0, "create: %d %s", r.status, r.body ? r.body : "");
    check(!strcmp(loc, want_loc), "Location \"%s\", want \"%s\"", loc, want_loc);
    json_t *tr = json_object_get(e, "training");
    check(!strcmp(json_string_value(json_object_get(e, "name")), "resnet50") &&
              !strcmp(json_string_value(json_array_get(json_object_get(e, "parameters"), 0)),
                      "ranks") &&
              !strcmp(json_string_value(json_object_get(e, "scaling")), "weak") &&
              json_integer_value(json_object_get(tr, "train_samples")) == 1000 &&
              json_integer_value(json_object_get(tr, "warmup_steps")) == 2 &&
              !strcmp(json_string_value(json_object_get(tr, "data_parallel")), "ranks") &&
              json_is_string(json_object_get(e, "created_at")),
          "created view: %s", r.body ? r.body : "");
    check(r.body && strstr(r.body, "\"price_per_core_hour\":0.05}"),
          "prices come back as sent: %s", r.body ? r.body : "");
    harness_response_free(&r);

    /* GET by id answers the same document */
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld", id);
    harness_get(h, path, &r);
    json_t *got = harness_json(&r);
    check(r.status == 200 && json_equal(got, e), "get: %d %s", r.status, r.body ? r.body : "");
    json_decref(got);
    json_decref(e);
    harness_response_free(&r);

    /* defaults: optional fields absent, degrees as numbers, no cost */
    json_t *d = json_loads(
        "{\"name\":\"defaults\",\"parameters\":[\"nodes\",\"gpus\"],\"scaling\":\"strong\","
        "\"training\":{\"train_samples\":50,\"batch_size\":2,\"data_parallel\":\"nodes*gpus/2\"}}",
        0, NULL);
    char *dtext = json_dumps(d, 0);
    json_decref(d);
    harness_post(h, "/v1/experiments", dtext, &r);
    free(dtext);
    e = harness_json(&r);
    tr = json_object_get(e, "training");
    check(r.status == 201 && json_integer_value(json_object_get(tr, "validation_samples")) == 0 &&
              json_integer_value(json_object_get(tr, "warmup_steps")) == 0 &&
              !strcmp(json_string_value(json_object_get(tr, "model_parallel")), "1") &&
              !strcmp(json_string_value(json_object_get(tr, "data_parallel")), "nodes*gpus/2") &&
              json_is_null(json_object_get(e, "cost")),
          "defaults: %d %s", r.status, r.body ? r.body : "");
    json_decref(e);
    harness_response_free(&r);
    /* ranks must stay the rank count: a model-parallel degree of 4 goes with ranks/4 */
    char *numeric = doc_with("numeric-degree", "training.model_parallel", "4");
    json_t *nd = json_loads(numeric, 0, NULL);
    free(numeric);
    json_object_set_new(json_object_get(nd, "training"), "data_parallel", json_string("ranks/4"));
    numeric = json_dumps(nd, JSON_COMPACT);
    json_decref(nd);
    harness_post(h, "/v1/experiments", numeric, &r);
    free(numeric);
    check(r.status == 201 && strstr(r.body, "\"model_parallel\":\"4\""), "numeric degree: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);

    /* duplicate name */
    doc = doc_with("resnet50", NULL, NULL);
    harness_post(h, "/v1/experiments", doc, &r);
    free(doc);
    check_problem(&r, 409, "resnet50", "duplicate name");
    {
        /* the existing experiment's id, in the document and at Location */
        json_t *dup = harness_json(&r);
        char loc[64] = "", want[64];
        harness_header(&r, "Location", loc, sizeof loc);
        snprintf(want, sizeof want, "/v1/experiments/%ld", id);
        check(json_integer_value(json_object_get(dup, "id")) == id && !strcmp(loc, want) &&
                  !strcmp(json_string_value(json_object_get(dup, "field")), "name"),
              "the 409 names the existing experiment %ld: %s, Location %s", id, r.body, loc);
        json_decref(dup);
    }
    harness_response_free(&r);

    /* list and pages */
    create(h, "page-a");
    create(h, "page-b");
    long total = experiment_count(h);
    harness_get(h, "/v1/experiments", &r);
    json_t *list = harness_json(&r);
    check(r.status == 200 && (long)json_array_size(json_object_get(list, "experiments")) == total &&
              json_is_null(json_object_get(list, "next_cursor")),
          "list: %d, %zu of %ld", r.status, json_array_size(json_object_get(list, "experiments")),
          total);
    json_decref(list);
    harness_response_free(&r);
    char next[256] = "/v1/experiments?limit=2";
    long seen = 0, pages = 0, last_id = 0;
    int ordered = 1;
    while (*next && pages < 10) {
        harness_get(h, next, &r);
        list = harness_json(&r);
        json_t *items = json_object_get(list, "experiments");
        for (size_t i = 0; i < json_array_size(items); i++) {
            long eid = (long)json_integer_value(json_object_get(json_array_get(items, i), "id"));
            ordered &= eid > last_id;
            last_id = eid;
        }
        seen += (long)json_array_size(items);
        pages++;
        const char *n = json_string_value(json_object_get(list, "next_cursor"));
        if (n)
            snprintf(next, sizeof next, "/v1/experiments?limit=2&cursor=%s", n);
        else
            *next = '\0';
        json_decref(list);
        harness_response_free(&r);
    }
    check(seen == total && pages == (total + 1) / 2 && ordered,
          "paging by 2: %ld of %ld in %ld pages", seen, total, pages);
    const char *bad_limits[] = {"/v1/experiments?limit=0", "/v1/experiments?limit=1001",
                                "/v1/experiments?limit=x", "/v1/experiments?cursor=-1",
                                "/v1/experiments?cursor=x1", "/v1/experiments?after=1",
                                "/v1/experiments?limit=2&limit=3"};
    const char *bad_fields[] = {"limit", "limit", "limit", "cursor", "cursor", "after", "limit"};
    for (size_t i = 0; i < sizeof bad_limits / sizeof *bad_limits; i++) {
        harness_get(h, bad_limits[i], &r);
        check_problem(&r, 400, bad_fields[i], bad_limits[i]);
        json_t *doc = harness_json(&r);
        check(doc && !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", bad_fields[i]),
              "%s names field %s", bad_limits[i], bad_fields[i]);
        json_decref(doc);
        harness_response_free(&r);
    }

    /* delete */
    harness_delete(h, path, &r);
    check(r.status == 204 && r.body_len == 0, "delete: %d", r.status);
    harness_response_free(&r);
    harness_get(h, path, &r);
    check_problem(&r, 404, "no experiment", "get deleted");
    harness_response_free(&r);
    harness_delete(h, path, &r);
    check_problem(&r, 404, "no experiment", "delete deleted");
    harness_response_free(&r);
}

static void test_validation(harness *h)
{
    static const struct {
        const char *path, *value, *field;
    } cases[] = {
        {"name", NULL, "name"},
        {"name", "123", "name"},
        {"name", "\"\"", "name"},
        {"name", "\"a\\u0001b\"", "name"},
        {"parameters", NULL, "parameters"},
        {"parameters", "\"ranks\"", "parameters"},
        {"parameters", "[]", "parameters"},
        {"parameters", "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]", "parameters"},
        {"parameters", "[1]", "parameters[0]"},
        {"parameters", "[\"ranks\",\"1x\"]", "parameters[1]"},
        {"parameters", "[\"ranks\",\"a-b\"]", "parameters[1]"},
        {"parameters", "[\"ranks\",\"ranks\"]", "parameters[1]"},
        {"scaling", NULL, "scaling"},
        {"scaling", "\"linear\"", "scaling"},
        {"scaling", "1", "scaling"},
        {"training", NULL, "training"},
        {"training", "[]", "training"},
        {"training.train_samples", NULL, "training.train_samples"},
        {"training.train_samples", "0", "training.train_samples"},
        {"training.train_samples", "-5", "training.train_samples"},
        {"training.train_samples", "1.5", "training.train_samples"},
        {"training.train_samples", "\"ranks*\"", "training.train_samples"},
        {"training.train_samples", "\"nodes*1000\"", "training.train_samples"},
        {"training.batch_size", "\"0\"", "training.batch_size"},
        {"training.validation_samples", "-1", "training.validation_samples"},
        {"training.batch_size", NULL, "training.batch_size"},
        {"training.batch_size", "0", "training.batch_size"},
        {"training.warmup_steps", "-1", "training.warmup_steps"},
        {"training.data_parallel", NULL, "training.data_parallel"},
        {"training.data_parallel", "\"nodes\"", "training.data_parallel"},
        {"training.data_parallel", "\"ranks/\"", "training.data_parallel"},
        {"training.data_parallel", "\"0\"", "training.data_parallel"},
        {"training.data_parallel", "0", "training.data_parallel"},
        {"training.data_parallel", "true", "training.data_parallel"},
        {"training.model_parallel", "\"-1\"", "training.model_parallel"},
        {"training.model_parallel", "\"\"", "training.model_parallel"},
        {"training.epochs", "3", "training.epochs"},
        {"cost", "5", "cost"},
        {"cost.cores_per_rank", NULL, "cost.cores_per_rank"},
        {"cost.cores_per_rank", "0", "cost.cores_per_rank"},
        {"cost.price_per_core_hour", "-1", "cost.price_per_core_hour"},
        {"cost.price_per_core_hour", "\"x\"", "cost.price_per_core_hour"},
        {"cost.currency", "\"eur\"", "cost.currency"},
        {"cost.currency", "7", "cost.currency"},
        {"nmae", "\"typo\"", "nmae"},
        /* built-in names; ranks only when it is the rank count G·M */
        {"parameters", "[\"epoch\"]", "parameters[0]"},
        {"parameters", "[\"ranks\",\"T\"]", "parameters[1]"},
        {"parameters", "[\"ranks\",\"metric\"]", "parameters[1]"},
        {"parameters", "[\"ranks\",\"commit\"]", "parameters[1]"},
        {"training.data_parallel", "\"1\"", "parameters[0]"},
        {"training.model_parallel", "2", "parameters[0]"},
    };
    long before = experiment_count(h);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *doc = doc_with("invalid", cases[i].path, cases[i].value);
        harness_response r;
        harness_post(h, "/v1/experiments", doc, &r);
        char what[160], prefix[96];
        snprintf(what, sizeof what, "%s = %s", cases[i].path, cases[i].value ? cases[i].value : "(absent)");
        snprintf(prefix, sizeof prefix, "%s: ", cases[i].field);
        check_problem(&r, 400, prefix, what);
        json_t *p = harness_json(&r);
        const char *field = json_string_value(json_object_get(p, "field"));
        check(field && !strcmp(field, cases[i].field), "%s: field \"%s\"", what, field ? field : "");
        json_decref(p);
        harness_response_free(&r);
        free(doc);
    }
    check(experiment_count(h) == before, "invalid documents stored something");

    /* a syntax fault in an expression names its offset */
    char *doc = doc_with("offset", "training.data_parallel", "\"ranks*/2\"");
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    free(doc);
    check_problem(&r, 400, "offset 6", "expression offset");
    harness_response_free(&r);

    /* malformed JSON: line, column and byte offset */
    harness_post(h, "/v1/experiments", "{\n  \"name\": ,\n}", &r);
    check_problem(&r, 400, "malformed JSON at line 2", "malformed JSON");
    check(strstr(r.body ? r.body : "", "byte offset") != NULL, "no byte offset: %s", r.body);
    harness_response_free(&r);
    harness_post(h, "/v1/experiments", "[1, 2]", &r);
    check_problem(&r, 400, "JSON object", "array body");
    harness_response_free(&r);
    harness_post(h, "/v1/experiments", "", &r);
    check_problem(&r, 400, "empty", "empty body");
    harness_response_free(&r);
    harness_post(h, "/v1/experiments", "{\"name\":\"a\",\"name\":\"b\"}", &r);
    check_problem(&r, 400, "duplicate", "duplicate key");
    harness_response_free(&r);
    check(experiment_count(h) == before, "malformed documents stored something");

    /* ids that are not positive integers name nothing: 404 */
    const char *ids[] = {"abc", "0", "-1", "1.5", "99999999999999999999", "999999"};
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        char path[96];
        snprintf(path, sizeof path, "/v1/experiments/%s", ids[i]);
        harness_get(h, path, &r);
        check_problem(&r, 404, "experiment", path);
        harness_response_free(&r);
        harness_delete(h, path, &r);
        check_problem(&r, 404, "experiment", path);
        harness_response_free(&r);
    }
}

static void test_methods_and_limits(harness *h)
{
    harness_response r;
    char allow[128] = "";
    harness_request(h, "PUT", "/v1/experiments", NULL, "{}", 2, &r);
    harness_header(&r, "Allow", allow, sizeof allow);
    check_problem(&r, 405, "PUT", "PUT collection");
    check(strstr(allow, "GET") && strstr(allow, "POST"), "Allow: %s", allow);
    harness_response_free(&r);
    harness_request(h, "POST", "/v1/experiments/1", NULL, "{}", 2, &r);
    allow[0] = '\0';
    harness_header(&r, "Allow", allow, sizeof allow);
    check_problem(&r, 405, "allowed", "POST item");
    check(strstr(allow, "DELETE") && strstr(allow, "GET"), "Allow: %s", allow);
    harness_response_free(&r);
    harness_delete(h, "/health", &r);
    check_problem(&r, 405, "DELETE", "DELETE /health");
    harness_response_free(&r);

    /* Content-Length over the limit: refused before the body is sent */
    char raw[512];
    snprintf(raw, sizeof raw,
             "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %d\r\n\r\n",
             MAX_BODY + 1);
    double t0 = harness_now();
    harness_raw(h, raw, strlen(raw), &r);
    check_problem(&r, 413, "Content-Length", "declared too large");
    check(harness_now() - t0 < 5, "413 took %.1f s: waited for the body", harness_now() - t0);
    harness_response_free(&r);
    /* the same with Expect: 100-continue: 413 instead of 100 */
    snprintf(raw, sizeof raw,
             "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
             "Content-Length: %d\r\n\r\n",
             4 * MAX_BODY);
    harness_raw(h, raw, strlen(raw), &r);
    check_problem(&r, 413, "limit", "100-continue too large");
    harness_response_free(&r);
    /* chunked, no length: counted while it arrives */
    size_t n = 0, cap = 2 * MAX_BODY + 1024;
    char *big = malloc(cap);
    n += (size_t)snprintf(big, cap,
                          "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                          "Transfer-Encoding: chunked\r\n\r\n");
    for (int i = 0; i < 2 * MAX_BODY / 4096 + 2 && n + 5000 < cap; i++) {
        n += (size_t)snprintf(big + n, cap - n, "1000\r\n");
        memset(big + n, ' ', 4096);
        n += 4096;
        n += (size_t)snprintf(big + n, cap - n, "\r\n");
    }
    n += (size_t)snprintf(big + n, cap - n, "0\r\n\r\n");
    harness_raw(h, big, n, &r);
    check_problem(&r, 413, "too large", "chunked too large");
    harness_response_free(&r);
    /* counted when the server is done with the request, which may be just
     * after the client has its answer (the chunked body still arriving) */
    int counted = 0;
    for (int i = 0; i < 100 && !counted; i++) {
        if (i)
            nanosleep(&(struct timespec){0, 20000000}, NULL);
        harness_get(h, "/metrics", &r);
        counted = r.body && strstr(r.body, "perfcast_http_requests_total{route=\"/v1/experiments\","
                                           "method=\"POST\",status=\"413\"} 3\n");
        harness_response_free(&r);
    }
    check(counted, "413 answers counted under their route");
    /* just under the limit is read (and then judged as JSON) */
    char *doc = doc_with("padded", NULL, NULL);
    size_t dlen = strlen(doc);
    memcpy(big, doc, dlen);
    memset(big + dlen, ' ', MAX_BODY - dlen);
    free(doc);
    harness_request(h, "POST", "/v1/experiments", NULL, big, MAX_BODY, &r);
    check(r.status == 201, "body at the limit: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(big);
}

static void test_database_outage(harness *h)
{
    long id = create(h, "survives");
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld", id);
    harness_response r;

    /* a quick restart with no request in between: the pooled connections
     * are stale, yet the first request after it succeeds */
    check(!harness_pg_stop(h) && !harness_pg_start(h), "restart PostgreSQL");
    harness_get(h, path, &r);
    check(r.status == 200, "first request after a restart: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);

    check(!harness_pg_stop(h), "stop PostgreSQL");
    char retry[16] = "";
    harness_get(h, "/ready", &r);
    harness_header(&r, "Retry-After", retry, sizeof retry);
    check_problem(&r, 503, "not ready", "ready while down");
    check(r.body && strstr(r.body, "database unavailable") && !strstr(r.body, "port") &&
              !strstr(r.body, "127.0.0.1"),
          "/ready names no database host or port: %s", r.body ? r.body : "");
    check(atoi(retry) >= 1, "ready Retry-After \"%s\"", retry);
    harness_response_free(&r);
    const char *paths[] = {"/v1/experiments", path};
    for (int i = 0; i < 2; i++) {
        retry[0] = '\0';
        harness_get(h, paths[i], &r);
        harness_header(&r, "Retry-After", retry, sizeof retry);
        check_problem(&r, 503, "database", paths[i]);
        check(atoi(retry) >= 1, "%s: Retry-After \"%s\"", paths[i], retry);
        harness_response_free(&r);
    }
    char *doc = doc_with("while-down", NULL, NULL);
    harness_post(h, "/v1/experiments", doc, &r);
    check_problem(&r, 503, "database", "create while down");
    harness_response_free(&r);
    harness_delete(h, path, &r);
    check_problem(&r, 503, "database", "delete while down");
    harness_response_free(&r);
    harness_get(h, "/health", &r);
    check(r.status == 200, "health while the database is down: %d", r.status);
    harness_response_free(&r);

    check(!harness_pg_start(h), "start PostgreSQL");
    check(harness_wait_status(h, "/ready", 200, 10), "ready again after the restart");
    harness_get(h, path, &r);
    check(r.status == 200, "get after the restart: %d", r.status);
    harness_response_free(&r);
    harness_post(h, "/v1/experiments", doc, &r);
    check(r.status == 201, "create after the restart: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(doc);
}

static void test_server_restarts(harness *h)
{
    long id = create(h, "persistent");
    char path[96], before[16] = "", after[16] = "";
    snprintf(path, sizeof path, "/v1/experiments/%ld", id);
    harness_sql(h, "SELECT count(*) FROM schema_migrations", before, sizeof before);
    check(!harness_server_kill(h), "kill -9");
    check(!harness_server_start(h), "start after kill -9");
    check(harness_wait_status(h, path, 200, 10), "experiment after kill -9 and restart");
    harness_sql(h, "SELECT count(*) FROM schema_migrations", after, sizeof after);
    check(!strcmp(before, after), "migrations applied twice: %s -> %s", before, after);

    int status = harness_server_stop(h);
    check(status == 0, "graceful stop exit status %d", status);

    /* every log line is one JSON object with ts, level, msg; request lines
     * carry method, route, status and duration */
    char logpath[300];
    snprintf(logpath, sizeof logpath, "%s/server.log", harness_dir(h));
    FILE *f = fopen(logpath, "r");
    char line[8192];
    int lines = 0, bad = 0, requests = 0, stopped = 0;
    while (f && fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        lines++;
        bad += !(json_is_string(json_object_get(o, "ts")) &&
                 json_is_string(json_object_get(o, "level")) &&
                 json_is_string(json_object_get(o, "msg")));
        const char *msg = json_string_value(json_object_get(o, "msg"));
        if (msg && !strcmp(msg, "request"))
            requests += json_is_string(json_object_get(o, "method")) &&
                        json_is_string(json_object_get(o, "route")) &&
                        json_is_integer(json_object_get(o, "status")) &&
                        json_is_number(json_object_get(o, "duration_ms"));
        stopped += msg && !strcmp(msg, "stopped");
        json_decref(o);
    }
    if (f)
        fclose(f);
    check(lines > 10 && bad == 0, "log: %d lines, %d not JSON objects with ts/level/msg", lines,
          bad);
    check(requests > 10, "log: %d well-formed request lines", requests);
    check(stopped >= 1, "log: no \"stopped\" line");
    check(!harness_server_start(h) && harness_wait_status(h, "/ready", 200, 10),
          "start after the graceful stop");
}

/* Configuration errors stop the process at start, naming the setting. */
static void test_command_line(harness *h)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[1024], out[300];
    snprintf(out, sizeof out, "%s/cli.txt", harness_dir(h));
    struct {
        const char *env, *args, *want;
        int status;
    } cases[] = {
        {"env -u DATABASE_URL", "serve", "DATABASE_URL", 2},
        {"env PERFCAST_MAX_BODY=lots", "serve --database-url x", "PERFCAST_MAX_BODY", 2},
        {"env", "serve --database-url x --listen nowhere", "--listen", 2},
        {"env", "serve --database-url x --workers", "needs a value", 2},
        {"env", "serve --help", "--max-body", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "%s %s %s >%s 2>&1", cases[i].env, bin, cases[i].args, out);
        int rc = system(cmd);
        char text[4096] = "";
        FILE *f = fopen(out, "r");
        size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
        text[got] = '\0';
        if (f)
            fclose(f);
        check(WIFEXITED(rc) && WEXITSTATUS(rc) == cases[i].status && strstr(text, cases[i].want),
              "%s: exit %d, output %s", cases[i].args, WEXITSTATUS(rc), text);
    }
    snprintf(cmd, sizeof cmd, "env DATABASE_URL='%s' %s migrate >%s 2>&1",
             harness_database_url(h), bin, out);
    int rc = system(cmd);
    check(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "perfcast migrate on a current schema: %d", rc);
}

/* One convention on every route: unknown and repeated query parameters are
 * refused naming them; JSON routes refuse bodies declared as another media
 * type with 415; predict names its units. */
static void test_conventions(harness *h)
{
    struct {
        const char *path, *field;
    } bad[] = {
        {"/health?verbose=1", "verbose"},
        {"/v1/experiments?limit=1&limit=2", "limit"},
        {"/v1/experiments?sort=name", "sort"},
        {"/v1/tokens?tenant=x", "tenant"},
    };
    harness_response r;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        harness_get(h, bad[i].path, &r);
        json_t *doc = harness_json(&r);
        const char *field = json_string_value(json_object_get(doc, "field"));
        check(r.status == 400 && field && !strcmp(field, bad[i].field), "%s: %d field %s",
              bad[i].path, r.status, field ? field : "(none)");
        json_decref(doc);
        harness_response_free(&r);
    }
    long exp = create(h, "conventions");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/model_sets?limt=2", exp);
    harness_get(h, path, &r);
    check_problem(&r, 400, "limt", "misspelt limit on model_sets");
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?levl=application", exp);
    harness_get(h, path, &r);
    check_problem(&r, 400, "levl", "misspelt filter on models");
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?metric=time&metric=visits", exp);
    harness_get(h, path, &r);
    check_problem(&r, 400, "more than once", "repeated filter on measurements");
    harness_response_free(&r);

    const char *body = "{\"name\":\"media-type\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                       "\"training\":{\"train_samples\":100,\"batch_size\":10,\"data_parallel\":\"ranks\"}}";
    harness_request(h, "POST", "/v1/experiments", "Content-Type: text/plain\r\n", body,
                    strlen(body), &r);
    check_problem(&r, 415, "Content-Type", "experiment as text/plain");
    harness_response_free(&r);
    harness_request(h, "POST", "/v1/fit", "Content-Type: application/x-www-form-urlencoded\r\n",
                    "{}", 2, &r);
    check_problem(&r, 415, "-H 'Content-Type: application/json'", "fit as a form says which header to send");
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM experiments WHERE name = 'media-type'") == 0,
          "nothing stored from a refused media type");
    harness_request(h, "POST", "/v1/experiments", "Content-Type: application/json; charset=utf-8\r\n",
                    body, strlen(body), &r);
    check(r.status == 201, "application/json with a charset is JSON: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
}

int main(void)
{
    const char *env[] = {"PERFCAST_MAX_BODY=65536", "PERFCAST_DB_POOL=4", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    check(h != NULL, "harness: PostgreSQL and the server did not start");
    if (!h)
        return check_summary();
    test_operating(h);
    test_experiments(h);
    test_validation(h);
    test_methods_and_limits(h);
    test_conventions(h);
    test_database_outage(h);
    test_server_restarts(h);
    test_command_line(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
