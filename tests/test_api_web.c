/*
 * test_api_web.c — the dashboard's files and the curve behind its plots,
 * over real HTTP against a real PostgreSQL.
 *
 *  - / is web/index.html, scripts and styles have their types, every answer
 *    carries the Content-Security-Policy and nosniff; HEAD works.
 *  - Paths stay in the web folder: "..", its encodings (%2e%2e, an encoded
 *    slash %2f), a NUL (%00, kept encoded by the server), leading dots and
 *    backslashes answer 400 naming "path"; a symbolic link out of the folder
 *    answers 404; unknown files and types 404; /v1/... is never a file.
 *  - GET /curve: the example experiment's epoch at 40 ranks equals predict's
 *    (same composition of comp + comm + mem), a callpath at 256 ranks equals
 *    bottlenecks' value there; bad input names its field.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"

static const char csp[] = "default-src 'none'; script-src 'self'; style-src 'self'; "
                          "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                          "form-action 'none'; frame-ancestors 'none'";

static void raw_get(harness *h, const char *path, harness_response *r)
{
    char req[512];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                     path);
    harness_raw(h, req, (size_t)n, r);
}

static void test_files(harness *h)
{
    harness_response r;
    char v[256];
    harness_get(h, "/", &r);
    check(r.status == 200 && strstr(r.body, "<script type=\"module\" src=\"js/main.js\">"),
          "/ is index.html: %d", r.status);
    check(harness_header(&r, "Content-Type", v, sizeof v) && !strncmp(v, "text/html", 9),
          "html type: %s", v);
    check(harness_header(&r, "Content-Security-Policy", v, sizeof v) && !strcmp(v, csp),
          "CSP: %s", v);
    check(harness_header(&r, "X-Content-Type-Options", v, sizeof v) && !strcmp(v, "nosniff"),
          "nosniff");
    harness_response_free(&r);
    harness_request(h, "HEAD", "/", NULL, NULL, 0, &r);
    check(r.status == 200 && r.body_len == 0, "HEAD /: %d", r.status);
    harness_response_free(&r);
    const struct {
        const char *path, *type;
    } ok[] = {{"/js/main.js", "text/javascript"},
              {"/app.css", "text/css"},
              {"/vendor/uplot/uPlot.esm.js", "text/javascript"},
              {"/vendor/uplot/LICENSE.txt", "text/plain"}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        harness_get(h, ok[i].path, &r);
        check(r.status == 200 && harness_header(&r, "Content-Type", v, sizeof v) &&
                  !strncmp(v, ok[i].type, strlen(ok[i].type)) &&
                  harness_header(&r, "Content-Security-Policy", v, sizeof v),
              "%s: %d %s", ok[i].path, r.status, v);
        harness_response_free(&r);
    }
    static const char *const refused[] = {
        "/../Makefile",         "/%2e%2e/Makefile", "/js%2f..%2f..%2fMakefile",
        "/js/..%2f..%2fMakefile", "/index.html%00.png", "/.git/config",
        "/js/../index.html",    "/a%5cb.js",        "/js//main.js",
        "/%2e%2e%2f%2e%2e%2fetc%2fpasswd"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        raw_get(h, refused[i], &r);
        json_t *doc = harness_json(&r);
        const char *f = json_string_value(json_object_get(doc, "field"));
        check(r.status == 400 && f && !strcmp(f, "path") && !strstr(r.body, "LIB_SRC") &&
                  harness_header(&r, "Content-Security-Policy", v, sizeof v),
              "%s: %d %s", refused[i], r.status, r.body ? r.body : "");
        json_decref(doc);
        harness_response_free(&r);
    }
    static const char *const missing[] = {"/nope.js", "/tests/harness.c", "/Makefile",
                                          "/js/nothing/here.css"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        raw_get(h, missing[i], &r);
        check(r.status == 404, "%s: %d", missing[i], r.status);
        harness_response_free(&r);
    }
    harness_get(h, "/v1/nothing", &r);
    check(r.status == 404 && strstr(r.body, "no such resource"), "/v1 is never a file: %d",
          r.status);
    harness_response_free(&r);
}

/* A web folder of its own with a link pointing out of it. */
static void test_symlink(void)
{
    char dir[] = "/tmp/perfcast-web-XXXXXX";
    if (!mkdtemp(dir)) {
        check(0, "mkdtemp");
        return;
    }
    char path[256], env[300];
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("<!doctype html><title>t</title>", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/leak.txt", dir);
    check(symlink("/etc/passwd", path) == 0, "symlink");
    snprintf(env, sizeof env, "PERFCAST_WEB_DIR=%s", dir);
    const char *envs[] = {env, NULL};
    harness_opts o = {.env = envs};
    harness *h = harness_open(&o);
    if (!h) {
        check(0, "harness");
        return;
    }
    harness_response r;
    harness_get(h, "/", &r);
    check(r.status == 200 && strstr(r.body, "<title>t</title>"), "PERFCAST_WEB_DIR: %d", r.status);
    harness_response_free(&r);
    harness_get(h, "/leak.txt", &r);
    check(r.status == 404 && !strstr(r.body, "root:"), "a link out of the folder: %d", r.status);
    harness_response_free(&r);
    harness_close(h, check_failed_count > 0);
    unlink(path);
    snprintf(path, sizeof path, "%s/index.html", dir);
    unlink(path);
    rmdir(dir);
}

static json_t *get_json(harness *h, const char *path, int want)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "GET %s: %d (want %d) %s", path, r.status, want, r.body);
    harness_response_free(&r);
    return doc;
}

static void test_curve(harness *h)
{
    FILE *f = fopen("examples/experiment.json", "rb");
    char body[4096];
    size_t n = f ? fread(body, 1, sizeof body - 1, f) : 0;
    if (f)
        fclose(f);
    body[n] = '\0';
    harness_response r;
    harness_post(h, "/v1/experiments", body, &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    long job = 0;
    for (int x = 2; x <= 10; x += 2) {
        char path[128], *data;
        snprintf(path, sizeof path, "examples/profile-ranks-%d.json", x);
        f = fopen(path, "rb");
        data = malloc(1 << 20);
        n = f && data ? fread(data, 1, (1 << 20) - 1, f) : 0;
        if (f)
            fclose(f);
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", data, n, &r);
        free(data);
        doc = harness_json(&r);
        job = (long)json_integer_value(json_object_get(doc, "job"));
        json_decref(doc);
        harness_response_free(&r);
    }
    check(job > 0 && harness_wait_job(h, job, 60), "refit");
    char path[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/curve?level=application&name=epoch&values=40,8",
             exp);
    json_t *c = get_json(h, path, 200);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    json_t *p = get_json(h, path, 200);
    const json_t *pt = json_array_get(json_object_get(c, "points"), 0);
    double cv = json_number_value(json_object_get(pt, "value"));
    double pv = json_number_value(json_object_get(json_object_get(p, "epoch"), "time"));
    check(cv == pv, "curve epoch at 40 = predict: %.17g vs %.17g", cv, pv);
    check(json_number_value(json_object_get(c, "extrapolation_from")) == 40 &&
              json_is_false(json_object_get(pt, "beyond_4x")),
          "extrapolation from 4 x 10");
    json_decref(c);
    json_decref(p);
    const char *nccl = "ncclKernel_AllReduce_RING_LL_Sum_float";
    snprintf(path, sizeof path, "/v1/experiments/%ld/curve?name=%s&values=256", exp, nccl);
    c = get_json(h, path, 200);
    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=ranks:256&limit=1", exp);
    json_t *b = get_json(h, path, 200);
    const json_t *b0 = json_array_get(json_object_get(b, "callpaths"), 0);
    pt = json_array_get(json_object_get(c, "points"), 0);
    check(!strcmp(json_string_value(json_object_get(b0, "callpath")), nccl) &&
              json_number_value(json_object_get(pt, "value")) ==
                  json_number_value(json_object_get(json_object_get(b0, "value_at"), "value")) &&
              json_is_true(json_object_get(pt, "beyond_4x")),
          "curve of the all-reduce at 256 = bottlenecks' value there");
    json_decref(c);
    json_decref(b);
    snprintf(path, sizeof path, "/v1/experiments/%ld/curve", exp);
    c = get_json(h, path, 400);
    check(!strcmp(json_string_value(json_object_get(c, "field")), "name"), "no name");
    json_decref(c);
    const struct {
        const char *q, *field;
        int status;
    } bad[] = {{"name=relu_kernel&values=1,x", "values", 400},
               {"name=relu_kernel&values=0", "values", 400},
               {"name=relu_kernel&ranks=4", "ranks", 400},
               {"name=relu_kernel&level=phase", "level", 400},
               {"name=relu_kernel&parameter=nodes", "parameter", 400},
               {"name=relu_kernel&bogus=1", "bogus", 400},
               {"name=nosuch", "name", 404}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/curve?%s", exp, bad[i].q);
        c = get_json(h, path, bad[i].status);
        const char *fld = json_string_value(json_object_get(c, "field"));
        check(fld && !strcmp(fld, bad[i].field), "%s: field %s", bad[i].q, fld ? fld : "-");
        json_decref(c);
    }
    /* default sweep: 65 points from the smallest measured value to 8x the largest */
    snprintf(path, sizeof path, "/v1/experiments/%ld/curve?name=relu_kernel", exp);
    c = get_json(h, path, 200);
    const json_t *pts = json_object_get(c, "points");
    check(json_array_size(pts) == 65 &&
              json_number_value(json_object_get(json_array_get(pts, 0), "x")) == 2 &&
              check_close(json_number_value(json_object_get(json_array_get(pts, 64), "x")), 80,
                          1e-12, 1),
          "default sweep 2..80");
    json_decref(c);
    /* a NUL in a query value stays encoded and is refused */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?commit=ab%%00cd", exp);
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", "{}", 2, &r);
    doc = harness_json(&r);
    const char *cf = json_string_value(json_object_get(doc, "field"));
    check(r.status == 400 && cf && !strcmp(cf, "commit"), "commit with NUL: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    test_files(h);
    test_curve(h);
    harness_close(h, check_failed_count > 0);
    test_symlink();
    return check_summary();
}
