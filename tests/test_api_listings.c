/*
 * test_api_listings.c — GET /v1/experiments/{id}/profiles and GET
 * /v1/simulations/{id}/runs over real HTTP against a real PostgreSQL:
 * three uploads listed two to a page in upload order, each with its point
 * keyed by the parameter, its format, repetition, ranks and commit, the cursor
 * leading to the last one and no further; two simulation runs listed with
 * their state and request and without their result; unknown ids 404 and a
 * malformed cursor 400 naming it; a taken simulation name answers 409 with
 * the existing simulation's id.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

static json_t *get(harness *h, const char *path, int want)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "GET %s: %d (want %d) %s", path, r.status, want,
          r.body ? r.body : "");
    harness_response_free(&r);
    return doc;
}

static long post(harness *h, const char *path, const char *type, const char *body, size_t len,
                 const char *key)
{
    char headers[96];
    snprintf(headers, sizeof headers, "Content-Type: %s\r\n", type);
    harness_response r;
    harness_request(h, "POST", path, headers, body, len, &r);
    json_t *doc = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(doc, key));
    check(r.status / 100 == 2 && id > 0, "POST %s: %d %s", path, r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
    return id;
}

static void test_profiles(harness *h)
{
    const char *exp_doc = "{\"name\":\"listed\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                          "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                          "\"data_parallel\":\"ranks\"}}";
    long exp = post(h, "/v1/experiments", "application/json", exp_doc, strlen(exp_doc), "id");
    const int xs[3] = {2, 4, 8};
    long ids[3];
    for (int i = 0; i < 3; i++) {
        char file[64], path[160];
        size_t len;
        snprintf(file, sizeof file, "examples/profile-ranks-%d.json", xs[i]);
        char *body = harness_read_file(file, &len);
        snprintf(path, sizeof path,
                 "/v1/experiments/%ld/profiles?refit=defer&commit=abc%d", exp, i);
        ids[i] = post(h, path, "application/json", body, len, "profile");
        free(body);
    }
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?limit=2", exp);
    json_t *page = get(h, path, 200);
    json_t *rows = json_object_get(page, "profiles");
    const char *cursor = json_string_value(json_object_get(page, "next_cursor"));
    check(json_array_size(rows) == 2 && cursor, "first page: 2 rows and a cursor");
    for (size_t i = 0; i < json_array_size(rows) && i < 2; i++) {
        json_t *row = json_array_get(rows, i);
        char commit[16];
        snprintf(commit, sizeof commit, "abc%zu", i);
        check(json_integer_value(json_object_get(row, "id")) == ids[i] &&
                  json_number_value(json_object_get(json_object_get(row, "point"), "ranks")) ==
                      xs[i] &&
                  json_integer_value(json_object_get(row, "repetition")) == 1 &&
                  !strcmp(json_string_value(json_object_get(row, "format")), "perfcast") &&
                  !strcmp(json_string_value(json_object_get(row, "commit")), commit) &&
                  json_is_false(json_object_get(row, "evaluation")) &&
                  json_integer_value(json_object_get(row, "ranks")) == 2 &&
                  json_object_get(row, "raw") == NULL,
              "upload %zu listed as stored (id %lld)", i,
              (long long)json_integer_value(json_object_get(row, "id")));
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?limit=2&cursor=%s", exp,
             cursor ? cursor : "");
    json_t *next = get(h, path, 200);
    rows = json_object_get(next, "profiles");
    check(json_array_size(rows) == 1 &&
              json_integer_value(json_object_get(json_array_get(rows, 0), "id")) == ids[2] &&
              json_is_null(json_object_get(next, "next_cursor")),
          "second page: the third upload, no further cursor");
    json_decref(next);
    json_decref(page);
    json_decref(get(h, "/v1/experiments/999999/profiles", 404));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?cursor=nonsense", exp);
    json_t *bad = get(h, path, 400);
    const char *field = json_string_value(json_object_get(bad, "field"));
    check(field && !strcmp(field, "cursor"), "a malformed cursor names the field");
    json_decref(bad);
}

static void test_runs(harness *h)
{
    const char *sim_doc = "{\"name\":\"listed-sim\",\"batch_size\":32}";
    long sim = post(h, "/v1/simulations", "application/json", sim_doc, strlen(sim_doc), "id");
    /* the same name again: 409 with the existing simulation's id, so that a
     * script pasted twice finds it */
    harness_response r;
    harness_post(h, "/v1/simulations", sim_doc, &r);
    json_t *dup = harness_json(&r);
    check(r.status == 409 && json_integer_value(json_object_get(dup, "id")) == sim,
          "a taken simulation name names the simulation: %d %s", r.status, r.body ? r.body : "");
    json_decref(dup);
    harness_response_free(&r);
    char path[160];
    size_t len;
    char *graph = harness_read_file("tests/data/simulate/stepgraph.json", &len);
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    post(h, path, "application/json", graph, len, "id");
    free(graph);
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    const char *runs[2] = {"{\"workers\":2,\"bandwidth\":\"1Gbit\",\"steps\":4,\"replications\":1}",
                           "{\"workers\":3,\"bandwidth\":\"1Gbit\",\"steps\":4,\"replications\":1}"};
    long ids[2];
    for (int i = 0; i < 2; i++)
        ids[i] = post(h, path, "application/json", runs[i], strlen(runs[i]), "id");
    for (int i = 0; i < 2; i++) {
        char one[160];
        snprintf(one, sizeof one, "/v1/simulations/%ld/runs/%ld", sim, ids[i]);
        harness_wait_status(h, one, 200, 30);
    }
    json_t *page = get(h, path, 200);
    json_t *rows = json_object_get(page, "runs");
    check(json_array_size(rows) == 2 && json_is_null(json_object_get(page, "next_cursor")),
          "two runs, one page");
    for (size_t i = 0; i < json_array_size(rows) && i < 2; i++) {
        json_t *row = json_array_get(rows, i);
        json_t *w = json_object_get(json_object_get(row, "request"), "workers");
        check(json_integer_value(json_object_get(row, "id")) == ids[i] &&
                  json_integer_value(json_object_get(row, "simulation")) == sim &&
                  json_object_get(row, "result") == NULL && json_is_array(w) &&
                  json_integer_value(json_array_get(w, json_array_size(w) - 1)) == (json_int_t)i + 2,
              "run %zu listed with its request, without its result (id %lld)", i,
              (long long)json_integer_value(json_object_get(row, "id")));
    }
    json_decref(page);
    json_decref(get(h, "/v1/simulations/999999/runs", 404));
}

/* Every listing pages alike: a limit out of range or not a number is a 400
 * naming "limit" and quoting what was sent, a cursor this API did not
 * return a 400 naming "cursor" (experiments read both by themselves once). */
static void test_paging_refusals(harness *h)
{
    static const char *const lists[] = {"/v1/experiments", "/v1/simulations"};
    static const char *const bad[][3] = {{"limit=0", "limit", "got \"0\""},
                                         {"limit=1001", "limit", "got \"1001\""},
                                         {"limit=ten", "limit", "got \"ten\""},
                                         {"cursor=-3", "cursor", "\"-3\""}};
    for (size_t i = 0; i < 2; i++)
        for (size_t k = 0; k < 4; k++) {
            char path[96];
            snprintf(path, sizeof path, "%s?%s", lists[i], bad[k][0]);
            json_t *p = get(h, path, 400);
            const char *field = json_string_value(json_object_get(p, "field"));
            const char *detail = json_string_value(json_object_get(p, "detail"));
            check(field && !strcmp(field, bad[k][1]) && detail && strstr(detail, bad[k][2]),
                  "%s: 400 naming %s with %s (%s: %s)", path, bad[k][1], bad[k][2],
                  field ? field : "-", detail ? detail : "-");
            json_decref(p);
        }
    json_t *ok = get(h, "/v1/experiments?limit=1000", 200);
    check(json_is_array(json_object_get(ok, "experiments")), "limit 1000 is allowed");
    json_decref(ok);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    test_profiles(h);
    test_runs(h);
    test_paging_refusals(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
