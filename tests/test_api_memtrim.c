/*
 * test_api_memtrim.c — the server gives the memory of a large answer back
 * to the system once the answer is sent (server/http.c, common/memtrim.h),
 * read from its /proc status (RssAnon: the heap arenas and stacks), on a
 * server of its own so that no earlier request has grown its HTTP threads'
 * arenas already:
 *  - a sweep plan whose page is a 7.6 MB answer (4,096 runs, 1,000 listed
 *    with a 4 KB command each): the thread that built it would keep those
 *    pages in its malloc arena (the server's 64 MB trim threshold), +7.4 MB;
 *    given back, the server keeps less than 3 MB of it;
 *  - a page of 10 runs (1 KB) read from 40,000 stored runs (profile rows
 *    written by SQL; about 200 bytes each in the handler, 8 MB): the same
 *    bound, for an answer that is small but was costly (trim_after).
 * No times are asserted. Under AddressSanitizer (no glibc arenas) the
 * figures are printed, not checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/server_mem.h"
#include "tests/check.h"
#include "tests/harness.h"
#include "tests/under_asan.h"

/* what the server may keep of a request's memory, in MB: pages of its
 * connections and caches, far below the 7.4 MB of the answer */
#define KEPT_MB 3.0

/* A plan of n0 x 64 x 64 points, one repetition, a 4 KB command template. */
static char *plan_doc(int n0, size_t *len)
{
    size_t cap = 16384, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(b + n, cap - n, "{\"parameters\":{\"a\":[");
    for (int i = 0; i < n0; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s%d", i ? "," : "", i + 1);
    for (int k = 0; k < 2; k++) {
        n += (size_t)snprintf(b + n, cap - n, "],\"%c\":[", k ? 'c' : 'b');
        for (int i = 0; i < 64; i++)
            n += (size_t)snprintf(b + n, cap - n, "%s%d", i ? "," : "", i + 1);
    }
    n += (size_t)snprintf(b + n, cap - n, "]},\"command\":\"run {a} {b} {c} ");
    while (n < 4096 + 120)
        b[n++] = 'x';
    n += (size_t)snprintf(b + n, cap - n, "\"}");
    *len = n;
    return b;
}

/* The server's RssAnon growth over one POST of the plan of n0 x 64 x 64
 * points to path: -100 when it cannot be read; the answer's bytes and its
 * status into *bytes, *status. */
static double plan_growth(harness *h, const char *path, int n0, size_t *bytes, int *status)
{
    int pid = server_pid(h);
    size_t len = 0;
    char *doc = plan_doc(n0, &len);
    if (!doc)
        return -100;
    harness_response r = {0};
    harness_sleep(0.3);
    double before = status_mb(pid, "RssAnon");
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", doc, len, &r);
    harness_sleep(0.5);
    double after = status_mb(pid, "RssAnon");
    *bytes = r.body_len;
    *status = r.status;
    harness_response_free(&r);
    free(doc);
    return pid > 0 && before >= 0 && after >= 0 ? after - before : -100;
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"plan-memory\",\"parameters\":[\"a\",\"b\",\"c\"],\"scaling\":\"strong\","
                 "\"training\":{\"train_samples\":51200,\"batch_size\":256,\"data_parallel\":\"a\"}}",
                 &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    check(r.status == 201, "experiment created: %d", r.status);
    harness_response_free(&r);
    char path[128], page[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan", exp);

    size_t bytes;
    int status;
    double large = plan_growth(h, path, 1, &bytes, &status);
    printf("a %.1f MB plan answer: the server grew by %.1f MB\n", (double)bytes / 1e6, large);
    check(status == 200 && bytes > 7000000, "the plan answered 7.6 MB: %d, %zu bytes", status,
          bytes);

    /* 40,000 stored runs (a, b, c) = (1..10, 1..64, 1..64 of the first 40,000) */
    char sql[640], out[64];
    snprintf(sql, sizeof sql,
             "INSERT INTO profiles (experiment_id, sha256, point, repetition, format, ranks, "
             "size, raw) SELECT %ld, sha256(convert_to(g::text, 'UTF8')), "
             "ARRAY[g / 4096 + 1, g / 64 %% 64 + 1, g %% 64 + 1]::float8[], 1, 'perfcast', 1, "
             "0, ''::bytea FROM generate_series(0, 39999) g",
             exp);
    check(harness_sql(h, sql, out, sizeof out) == 0, "40,000 runs stored");
    snprintf(page, sizeof page, "%s?limit=10", path);
    double stored = plan_growth(h, page, 10, &bytes, &status);
    printf("a page of 10 of 40,000 stored runs (%zu bytes): the server grew by %.1f MB\n", bytes,
           stored);
    check(status == 200 && bytes < 100000, "a small page: %d, %zu bytes", status, bytes);
#ifdef TESTS_UNDER_ASAN
    printf("test_api_memtrim: glibc's arenas are not in use under AddressSanitizer\n");
#else
    check(large > -100 && large < KEPT_MB,
          "the 7.6 MB answer's memory given back once sent: +%.1f MB kept (< %.0f)", large,
          KEPT_MB);
    check(stored > -100 && stored < KEPT_MB,
          "the runs read for a small page given back: +%.1f MB kept (< %.0f)", stored, KEPT_MB);
#endif
    int failed = check_failed_count;
    harness_close(h, failed > 0);
    return check_summary();
}
