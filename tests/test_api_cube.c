/*
 * test_api_cube.c — Score-P Cube profiles uploaded over HTTP against a real
 * PostgreSQL (tests/harness.h): a .cubex is one profile upload, sniffed from
 * application/octet-stream or named by ?format=cube, its coordinate from the
 * query; one row per location (thread) and callpath is stored. Truncated
 * archives and XML bombs are refused with 400 naming the member, and nothing
 * is stored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

#define SETS "tests/data/extrap/inputs/"

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(n > 0 ? (size_t)n : 1);
    *len = b ? fread(b, 1, (size_t)n, f) : 0;
    fclose(f);
    return b;
}

static long create(harness *h, const char *doc)
{
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    check(r.status == 201 && id > 0, "create: %d %s", r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return id;
}

static int post(harness *h, long exp, const char *query, const char *content_type,
                const char *body, size_t len, harness_response *r)
{
    char path[256], headers[128] = "";
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query);
    if (content_type)
        snprintf(headers, sizeof headers, "Content-Type: %s\r\n", content_type);
    return harness_request(h, "POST", path, headers, body, len, r);
}

static void test_uploads(harness *h)
{
    long exp = create(h, "{\"name\":\"mm\",\"parameters\":[\"x\"],\"scaling\":\"weak\",\"training\":{\"train_samples\":1000,\"batch_size\":10,\"data_parallel\":\"x\"}}");
    static const int xs[] = {1, 10, 25, 50, 100};
    for (int i = 0; i < 5; i++) {
        char path[256], query[64];
        snprintf(path, sizeof path, SETS "cubeset_single_parameter/mm.x%dy1z1.r1/profile.cubex",
                 xs[i]);
        size_t len;
        char *b = read_file(path, &len);
        snprintf(query, sizeof query, i % 2 ? "?x=%d&format=cube" : "?x=%d&refit=defer", xs[i]);
        harness_response r;
        post(h, exp, query, i % 2 ? NULL : "application/octet-stream", b, len, &r);
        json_t *j = harness_json(&r);
        check(r.status == 202 && !strcmp(json_string_value(json_object_get(j, "format")), "cube"),
              "x=%d: %d %s", xs[i], r.status, r.body ? r.body : "");
        json_decref(j);
        harness_response_free(&r);
        free(b);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld AND "
                              "format = 'cube'", exp) == 5,
          "five cube profiles");
    /* 4 callpaths x 7 metrics with data, one location */
    check(harness_sql_long(h, "SELECT count(*) FROM profile_rows r JOIN profiles p ON "
                              "p.id = r.profile_id WHERE p.experiment_id = %ld AND p.point = "
                              "'{10}'", exp) == 28,
          "28 rows at x=10");
    check(harness_sql_long(h, "SELECT count(*) FROM callpaths WHERE experiment_id = %ld AND "
                              "name = 'main->init_mat'", exp) == 1,
          "Extra-P's callpath names");

    /* per-thread values: one rank per location */
    long exp2 = create(h, "{\"name\":\"threads\",\"parameters\":[\"f\"],\"scaling\":\"weak\",\"training\":{\"train_samples\":1000,\"batch_size\":10,\"data_parallel\":\"f\"}}");
    size_t len;
    char *b = read_file(SETS "cubeset_simple_threaded/example.f3/cube-example3.cubex", &len);
    harness_response r;
    post(h, exp2, "?f=3", "application/octet-stream", b, len, &r);
    check(r.status == 202, "threaded: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(DISTINCT rank) FROM profile_rows r JOIN profiles p "
                              "ON p.id = r.profile_id WHERE p.experiment_id = %ld", exp2) == 4,
          "four threads, four ranks");

    /* truncated: 400 naming the fault, nothing stored */
    long before = harness_sql_long(h, "SELECT count(*) FROM profiles");
    post(h, exp2, "?f=4", "application/octet-stream", b, len / 2, &r);
    check(r.status == 400 && r.body && strstr(r.body, "truncated"), "truncated: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    /* an XML bomb inside a tar: refused at the DOCTYPE */
    char *bomb = malloc(len);
    memcpy(bomb, b, len);
    free(b);
    /* find anchor.xml's data (gzip) and replace the archive by one with a DOCTYPE anchor */
    static const char xml[] = "<?xml version=\"1.0\"?><!DOCTYPE c [<!ENTITY a \"aa\">"
                              "<!ENTITY b \"&a;&a;&a;&a;\">]><cube>&b;</cube>";
    char tar[2048] = {0};
    snprintf(tar, 100, "anchor.xml");
    memcpy(tar + 100, "0000644", 7);
    memcpy(tar + 108, "0000000", 7);
    memcpy(tar + 116, "0000000", 7);
    snprintf(tar + 124, 12, "%011o", (unsigned)(sizeof xml - 1));
    memcpy(tar + 136, "00000000000", 11);
    tar[156] = '0';
    memcpy(tar + 257, "ustar", 6);
    memcpy(tar + 263, "00", 2);
    memset(tar + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += (unsigned char)tar[i];
    snprintf(tar + 148, 8, "%06o", sum);
    memcpy(tar + 512, xml, sizeof xml - 1);
    post(h, exp2, "?f=5", "application/octet-stream", tar, sizeof tar, &r);
    check(r.status == 400 && r.body && strstr(r.body, "DOCTYPE"), "bomb: %d %s", r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(bomb);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before, "nothing stored");
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness_open failed");
        return check_summary();
    }
    test_uploads(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
