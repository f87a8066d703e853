/*
 * test_api_upload_large.c — uploads far beyond the spool threshold reach
 * the database intact: a 64 MiB perfcast JSON profile (its bulk is
 * whitespace between the values, which JSON allows, so that the test stays
 * quick) and a profile of 2,000 callpaths x 8 ranks x 20 steps (a few MiB of
 * real rows). The stored raw bytes have the body's length and sha256, the
 * normalized rows are the profile's (count and sum of the values), the 202
 * comes after COMMIT (the profile is there when the answer is), and the
 * same bytes again are answered as a duplicate. And a step graph of
 * several of its reader's pieces (ingest/simgraph.h), which the server lets
 * go of page by page as it reads: stored intact, a fault late in it named.
 */
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

static void sha_hex(const char *b, size_t len, char hex[65])
{
    unsigned char sha[32];
    unsigned int n = 0;
    EVP_Digest(b, len, sha, &n, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha[i]);
}

/* ncp callpaths x ranks x steps, value of (c, r, s) = (c + 1) * 1e-3 * (1 + r + s);
 * pad bytes of spaces after every callpath. Sum of values into *sum. */
static char *profile(int ncp, int ranks, int steps, size_t pad, double x, size_t *len,
                     double *sum)
{
    size_t per = 120 + pad;
    size_t cap = 256 + (size_t)ncp * ranks * steps * per + (size_t)ranks * steps * 64;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%g},\"ranks\":[", x);
    *sum = 0;
    for (int r = 0; r < ranks; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < steps; s++) {
            n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                                  s ? "," : "");
            for (int c = 0; c < ncp; c++) {
                double v = (c + 1) * 1e-3 * (1 + r + s);
                *sum += v;
                n += (size_t)snprintf(b + n, cap - n,
                                      "%s{\"name\":\"kernel_%05d\",\"category\":\"comp\","
                                      "\"metrics\":{\"time\":%.17g}}",
                                      c ? "," : "", c, v);
                memset(b + n, ' ', pad);
                n += pad;
            }
            n += (size_t)snprintf(b + n, cap - n, "]}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    return b;
}

static long create(harness *h, const char *name)
{
    char doc[400];
    snprintf(doc, sizeof doc,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":1000,\"batch_size\":8,\"data_parallel\":\"ranks\"}}",
             name);
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    return id;
}

/* Uploads body to exp and checks what is stored against it. */
static void upload_and_check(harness *h, long exp, const char *what, const char *body, size_t len,
                             long rows, double sum)
{
    char path[128], hex[65], want[128], got[160] = "", sql[400];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, len, &r);
    check(r.status == 202, "%s: 202, got %d %.200s", what, r.status, r.body ? r.body : "");
    json_t *j = harness_json(&r);
    long pid = (long)json_integer_value(json_object_get(j, "profile"));
    json_decref(j);
    harness_response_free(&r);
    /* visible as soon as answered: the answer came after COMMIT */
    sha_hex(body, len, hex);
    snprintf(want, sizeof want, "%zu %zu %s", len, len, hex);
    snprintf(sql, sizeof sql,
             "SELECT octet_length(raw) || ' ' || size || ' ' || encode(sha256(raw), 'hex') "
             "FROM profiles WHERE id = %ld",
             pid);
    harness_sql(h, sql, got, sizeof got);
    check(!strncmp(got, want, strlen(want)), "%s: raw stored byte for byte (%s vs %s)", what, got,
          want);
    long n = harness_sql_long(h, "SELECT count(*) FROM profile_rows WHERE profile_id = %ld", pid);
    check(n == rows, "%s: %ld rows stored, want %ld", what, n, rows);
    snprintf(sql, sizeof sql, "SELECT sum(value) FROM profile_rows WHERE profile_id = %ld", pid);
    harness_sql(h, sql, got, sizeof got);
    check(check_close(atof(got), sum, 1e-9, 1e-12), "%s: sum of values %s, want %.17g", what, got,
          sum);
    /* the same bytes again: the first upload's profile, nothing stored */
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, len, &r);
    j = harness_json(&r);
    check(r.status == 200 && json_is_true(json_object_get(j, "duplicate")) &&
              (long)json_integer_value(json_object_get(j, "profile")) == pid,
          "%s: the same bytes again are a duplicate: %d", what, r.status);
    json_decref(j);
    harness_response_free(&r);
}

/* A step graph of about target bytes: steps of 1,000 operations, each but
 * the first waiting for the first; its operation count into *nops. */
static char *step_graph(size_t target, size_t *len, long *nops)
{
    size_t cap = target + 1000 * 128 + 4096, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(b, cap, "{\"batch_size\":8,\"steps\":[");
    long k = 0;
    for (int s = 0; n < target; s++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"ops\":[", s ? "," : "");
        for (int i = 0; i < 1000; i++, k++)
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s{\"id\":\"op%d\",\"resource\":\"worker\",\"duration\":0.000%d%s}",
                                  i ? "," : "", i, i % 7 + 1, i ? ",\"deps\":[\"op0\"]" : "");
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    *nops = k;
    return b;
}

/* A step graph of several reader pieces (ingest/simgraph.h), spooled and
 * mapped by the server, whose pages the reader lets go as it reads them:
 * stored byte for byte (the sha256 and the copy are taken from the body
 * after the reader let it go), and a fault in its last piece is a 400
 * naming the operation and the field. */
static void step_graph_upload(harness *h)
{
    harness_response r;
    harness_post(h, "/v1/simulations", "{\"name\":\"large-graph\"}", &r);
    json_t *j = harness_json(&r);
    long sim = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    size_t len;
    long nops;
    char *g = step_graph((size_t)14 << 20, &len, &nops);
    check(g != NULL, "a 14 MiB step graph");
    if (!g)
        return;
    char path[128], hex[65], want[200], got[200] = "", sql[300];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", g, len, &r);
    j = harness_json(&r);
    long pid = (long)json_integer_value(json_object_get(j, "id"));
    check(r.status == 201 && json_integer_value(json_object_get(j, "ops")) == nops,
          "step graph: 201 with %ld operations, got %d %.200s", nops, r.status,
          r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    sha_hex(g, len, hex);
    snprintf(want, sizeof want, "%zu %s %s", len, hex, hex);
    snprintf(sql, sizeof sql,
             "SELECT octet_length(raw) || ' ' || encode(sha256, 'hex') || ' ' || "
             "encode(sha256(raw), 'hex') FROM sim_profiles WHERE id = %ld",
             pid);
    harness_sql(h, sql, got, sizeof got);
    check(!strcmp(got, want), "step graph: stored byte for byte (%s vs %s)", got, want);
    /* a string for a duration, in the last piece */
    char *at = strstr(g + len - 4096, "\"duration\":");
    memcpy(at + 11, "\"abc\" ", 6); /* in place of a 6-character number */
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", g, len, &r);
    j = harness_json(&r);
    const char *field = json_string_value(json_object_get(j, "field"));
    check(r.status == 400 && field && strstr(field, "duration"),
          "step graph: a fault in its last piece: 400 naming the field, got %d %.300s", r.status,
          r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    free(g);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long exp = create(h, "large-uploads");

    size_t len;
    double sum;
    /* 64 MiB: 200 callpaths x 8 ranks x 2 steps, 21,000 spaces after each */
    char *big = profile(200, 8, 2, 21000, 2, &len, &sum);
    check(big && len > ((size_t)64 << 20), "a body past 64 MiB: %zu bytes", big ? len : 0);
    if (big)
        upload_and_check(h, exp, "64 MiB profile", big, len, 200L * 8 * 2, sum);
    free(big);

    /* real rows: 2,000 callpaths x 8 ranks x 20 steps (320,000 rows) */
    char *rows = profile(2000, 8, 20, 0, 4, &len, &sum);
    check(rows && len > ((size_t)1 << 20), "a body past the spool threshold: %zu bytes",
          rows ? len : 0);
    if (rows)
        upload_and_check(h, exp, "320,000-row profile", rows, len, 2000L * 8 * 20, sum);
    free(rows);

    /* below the streaming threshold the bytes go as a parameter: intact too */
    char *small = profile(20, 2, 2, 0, 8, &len, &sum);
    if (small)
        upload_and_check(h, exp, "small profile", small, len, 20L * 2 * 2, sum);
    free(small);
    step_graph_upload(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
