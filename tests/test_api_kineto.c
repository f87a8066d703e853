/*
 * test_api_kineto.c — profiler traces uploaded over HTTP against a real
 * PostgreSQL (tests/harness.h): POST /v1/experiments/{id}/profiles with
 * Kineto traces (gzip and plain) and Nsight Systems exports, one upload per
 * rank, every refusal a 4xx that stores nothing and leaves the server
 * serving; and end to end: five points x four ranks of generated Kineto
 * traces (bench/gen_kineto.h, known kernel times per step) give the epoch
 * model and a prediction of the generating function.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gen_kineto.h"
#include "tests/check.h"
#include "tests/harness.h"

#define DATA "tests/data/kineto/"

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
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query ? query : "");
    if (content_type)
        snprintf(headers, sizeof headers, "Content-Type: %s\r\n", content_type);
    return harness_request(h, "POST", path, headers, body, len, r);
}

static void check_problem(harness_response *r, int status, const char *needle, const char *what)
{
    check(r->status == status, "%s: status %d, want %d: %s", what, r->status, status,
          r->body ? r->body : "");
    check(r->body && strstr(r->body, needle), "%s: \"%s\" not in %s", what, needle,
          r->body ? r->body : "(no body)");
}

static long profiles_of(harness *h, long exp)
{
    return harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp);
}

/* ---- uploads -------------------------------------------------------------------- */

static void test_uploads(harness *h)
{
    long exp = create(h, "{\"name\":\"dlrm\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                         "\"training\":{\"train_samples\":100000,\"batch_size\":64,"
                         "\"data_parallel\":\"ranks\"}}");
    size_t len0, len1;
    char *r0 = harness_read_file(DATA "ddp128_rank0.json.gz", &len0);
    char *r1 = harness_read_file(DATA "ddp128_rank1.json.gz", &len1);
    check(r0 && r1, "fixtures");
    if (!r0 || !r1)
        return;
    harness_response r;
    /* ranks 0 and 1 of one point, one upload each */
    post(h, exp, "?ranks=128&repetition=1", "application/gzip", r0, len0, &r);
    json_t *j = harness_json(&r);
    check(r.status == 202 && !strcmp(json_string_value(json_object_get(j, "format")), "kineto") &&
              json_integer_value(json_object_get(j, "rank")) == 0 &&
              json_integer_value(json_object_get(j, "steps")) == 2,
          "rank 0: %d %s", r.status, r.body ? r.body : "");
    long p0 = (long)json_integer_value(json_object_get(j, "profile"));
    json_decref(j);
    harness_response_free(&r);
    post(h, exp, "?ranks=128&repetition=1&rank=1", NULL, r1, len1, &r); /* sniffed */
    j = harness_json(&r);
    check(r.status == 202 && json_integer_value(json_object_get(j, "rank")) == 1,
          "rank 1: %d %s", r.status, r.body ? r.body : "");
    long p1 = (long)json_integer_value(json_object_get(j, "profile"));
    json_decref(j);
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(DISTINCT rank) FROM profile_rows WHERE profile_id IN (%ld, %ld)",
                   p0, p1) == 2,
          "two ranks stored");
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE id IN (%ld, %ld) AND format = 'kineto' "
                      "AND point = '{128}'",
                   p0, p1) == 2,
          "format and point stored");
    check(harness_sql_long(h, "SELECT count(DISTINCT step) FROM profile_rows WHERE profile_id = %ld AND "
                      "phase = 0", p0) == 2,
          "two steps stored");
    /* the comm callpath got its category */
    check(harness_sql_long(h, "SELECT count(*) FROM callpaths WHERE experiment_id = %ld AND category = "
                      "'comm' AND name LIKE 'ncclKernel_SendRecv%%'", exp) == 1,
          "the NCCL kernel is comm");
    /* the same bytes again */
    post(h, exp, "?ranks=128&repetition=1", "application/gzip", r0, len0, &r);
    check(r.status == 200 && r.body && strstr(r.body, "\"duplicate\":true"), "duplicate: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);

    long before = profiles_of(h, exp);
    /* refusals: 4xx, nothing stored */
    post(h, exp, "?ranks=128&rank=5", "application/gzip", r0, len0, &r);
    check_problem(&r, 400, "distributedInfo says rank 0", "rank disagreeing");
    harness_response_free(&r);
    /* a trace of 2 ranks at the coordinate of 128 workers: 409 naming both */
    size_t len_ws2;
    char *ws2 = harness_read_file(DATA "nccl_ws2_rank0.json.gz", &len_ws2);
    post(h, exp, "?ranks=128&repetition=2", "application/gzip", ws2, ws2 ? len_ws2 : 0, &r);
    free(ws2);
    check_problem(&r, 409, "world_size 2", "world size contradicting the coordinate");
    check(r.body && strstr(r.body, "gives 128 workers") && strstr(r.body, "\"world_size\""),
          "the 409 names both world sizes and the field: %s", r.body ? r.body : "");
    harness_response_free(&r);
    post(h, exp, "?ranks=128", "application/gzip", r0, len0 / 2, &r);
    check_problem(&r, 400, "gzip data ends early", "truncated gzip");
    harness_response_free(&r);
    post(h, exp, "?ranks=128&rank=x", "application/gzip", r0, len0, &r);
    check_problem(&r, 400, "rank", "bad rank");
    harness_response_free(&r);
    post(h, exp, NULL, "application/gzip", r0, len0, &r);
    check_problem(&r, 400, "point.ranks: no value", "no point");
    harness_response_free(&r);
    const char bad_utf8[] = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\xc3\x28\","
                            "\"ts\":1,\"dur\":1}]}";
    post(h, exp, "?ranks=8", "application/json", bad_utf8, sizeof bad_utf8 - 1, &r);
    check_problem(&r, 400, "malformed profile (kineto)", "invalid UTF-8");
    harness_response_free(&r);
    size_t depth = 200000;
    char *bomb = malloc(depth + 32);
    memcpy(bomb, "{\"traceEvents\":[],\"x\":", 22);
    memset(bomb + 22, '[', depth);
    post(h, exp, "?ranks=8", "application/json", bomb, 22 + depth, &r);
    check_problem(&r, 400, "nested deeper", "nesting bomb");
    harness_response_free(&r);
    free(bomb);
    const char *step_open = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                            "\"ProfilerStep#1\",\"ts\":1}]}";
    post(h, exp, "?ranks=8", NULL, step_open, strlen(step_open), &r);
    check_problem(&r, 400, "never ended", "step never ends");
    harness_response_free(&r);
    post(h, exp, "?ranks=8", "image/png", r0, len0, &r);
    check_problem(&r, 415, "image/png", "unsupported content type");
    harness_response_free(&r);
    post(h, exp, "?ranks=8&format=extrap-text", "text/plain", "PARAMETER x\n", 12, &r);
    check_problem(&r, 415, "/v1/fit", "Extra-P text");
    harness_response_free(&r);
    post(h, exp, "?ranks=8", "text/plain", "PARAMETER x\n", 12, &r);
    check_problem(&r, 415, "extrap-text", "sniffed Extra-P text");
    harness_response_free(&r);
    post(h, exp, "?ranks=8", "application/octet-stream", "hello", 5, &r);
    check_problem(&r, 415, "cannot tell the format", "unknown bytes");
    harness_response_free(&r);
    post(h, exp, "?ranks=8&format=nsys", "application/gzip", r0, len0, &r);
    check_problem(&r, 400, "not a SQLite database", "gzip as nsys");
    harness_response_free(&r);
    check(profiles_of(h, exp) == before, "refusals stored nothing");
    check(harness_get(h, "/health", &r) == 0 && r.status == 200, "still serving");
    harness_response_free(&r);

    /* a plain-JSON trace with application/json, an Nsight export */
    size_t plen;
    char *plain = harness_read_file("tests/fuzz/corpus/kineto/alexnet_nosteps.json", &plen);
    post(h, exp, "?ranks=1", "application/json", plain, plen, &r);
    check(r.status == 202 && r.body && strstr(r.body, "\"steps\":1"), "plain trace: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(plain);
    size_t dlen;
    char *db = harness_read_file("tests/fuzz/corpus/nsys/standard.sqlite", &dlen);
    post(h, exp, "?ranks=2&rank=1", "application/vnd.sqlite3", db, dlen, &r);
    check(r.status == 202 && r.body && strstr(r.body, "\"format\":\"nsys\"") &&
              strstr(r.body, "\"rank\":1") && strstr(r.body, "\"steps\":2"),
          "nsys export: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    long other = create(h, "{\"name\":\"nsys-epochs\",\"parameters\":[\"ranks\"],"
                           "\"scaling\":\"weak\",\"training\":{\"train_samples\":1000,"
                           "\"batch_size\":8,\"data_parallel\":\"ranks\"}}");
    post(h, other, "?ranks=4&markers=epoch", NULL, db, dlen, &r); /* sniffed */
    check(r.status == 202 && r.body && strstr(r.body, "\"steps\":1"), "nsys markers: %d %s",
          r.status, r.body ? r.body : "");
    harness_response_free(&r);
    /* the experiment's markers apply when the upload names none */
    long marked = create(h, "{\"name\":\"nsys-experiment-markers\",\"parameters\":[\"ranks\"],"
                            "\"scaling\":\"weak\",\"markers\":\"epoch\",\"training\":{"
                            "\"train_samples\":1000,\"batch_size\":8,\"data_parallel\":\"ranks\"}}");
    post(h, marked, "?ranks=4", "application/vnd.sqlite3", db, dlen, &r);
    check(r.status == 202 && r.body && strstr(r.body, "\"steps\":1"),
          "experiment markers: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bad-markers\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"markers\":\"step,,epoch\",\"training\":{\"train_samples\":1000,"
                 "\"batch_size\":8,\"data_parallel\":\"ranks\"}}",
                 &r);
    check(r.status == 400 && r.body && strstr(r.body, "\"field\":\"markers\""),
          "empty marker part refused: %d %s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(db);
    free(r0);
    free(r1);
}

/* ---- end to end ---------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static int buf_write(void *ctx, const char *p, size_t n)
{
    buf *b = ctx;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (cap < b->n + n)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

static json_t *get_json(harness *h, const char *path, int *status)
{
    harness_response r;
    harness_get(h, path, &r);
    *status = r.status;
    json_t *j = harness_json(&r);
    harness_response_free(&r);
    return j;
}

/* Per step: comp 50 x 20 us, comm 200 us x log2(ranks), mem 2 x 5 us + 1 us.
 * With data_parallel "1" an epoch is n_t = 32000 / 32 = 1000 steps:
 * comp 1.0 s, comm 0.2 * log2(ranks) s, mem 0.011 s. */
static void test_end_to_end(harness *h)
{
    /* the parameter is not the rank count G·M = 1, so it may not be called ranks */
    long exp = create(h, "{\"name\":\"generated\",\"parameters\":[\"world\"],\"scaling\":\"weak\","
                         "\"training\":{\"train_samples\":32000,\"batch_size\":32,"
                         "\"data_parallel\":\"1\",\"warmup_steps\":1}}");
    const int points[5] = {4, 8, 16, 32, 64};
    long last_job = 0;
    for (int i = 0; i < 5; i++)
        for (int rank = 0; rank < 4; rank++) {
            gk_params p = {.rank = rank, .world_size = points[i], .steps = 4, .first_step = 1,
                           .launches = 50, .comp_us = 20.0,
                           .comm_us = 200.0 * log2((double)points[i]), .memcpys = 2,
                           .memcpy_us = 5.0, .memcpy_bytes = 65536, .memset_us = 1.0,
                           .jitter = 0, .seed = (uint64_t)(i * 4 + rank + 1), .pretty = 0};
            buf b = {0};
            gk_gen g;
            gk_init(&g, &p, buf_write, &b);
            check(gk_trace(&g) == 0, "generate");
            char query[64];
            snprintf(query, sizeof query, "?world=%d", points[i]);
            harness_response r;
            post(h, exp, query, "application/json", b.p, b.n, &r);
            json_t *j = harness_json(&r);
            check(r.status == 202 && json_integer_value(json_object_get(j, "rank")) == rank &&
                      json_integer_value(json_object_get(j, "steps")) == 4,
                  "generated upload %d/%d: %d %s", points[i], rank, r.status,
                  r.body ? r.body : "");
            last_job = (long)json_integer_value(json_object_get(j, "job"));
            json_decref(j);
            harness_response_free(&r);
            free(b.p);
        }
    /* every job of the experiment done */
    double until = harness_now() + 60;
    while (harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state <> 'done'",
                    exp) != 0 &&
           harness_now() < until)
        harness_sleep(0.2);
    check(harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld AND state <> 'done'",
                   exp) == 0,
          "refit jobs done (last %ld)", last_job);
    char path[256];
    int status;
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?world=256", exp);
    json_t *pred = get_json(h, path, &status);
    check(status == 200, "predict: %d", status);
    double epoch = json_number_value(json_object_get(json_object_get(pred, "epoch"), "time"));
    double comp = json_number_value(json_object_get(json_object_get(pred, "comp"), "time"));
    double comm = json_number_value(json_object_get(json_object_get(pred, "comm"), "time"));
    double mem = json_number_value(json_object_get(json_object_get(pred, "mem"), "time"));
    check(check_close(comp, 1.0, 1e-6, 0), "comp at 256 ranks: %.17g, want 1", comp);
    check(check_close(comm, 0.2 * 8, 1e-6, 0), "comm at 256 ranks: %.17g, want 1.6", comm);
    check(check_close(mem, 0.011, 1e-6, 0), "mem at 256 ranks: %.17g, want 0.011", mem);
    check(check_close(epoch, 1.0 + 1.6 + 0.011, 1e-6, 0), "epoch at 256 ranks: %.17g, want 2.611",
          epoch);
    const char *fn = json_string_value(json_object_get(json_object_get(pred, "comm"), "function"));
    check(fn && strstr(fn, "log2(world)^(1)") && !strstr(fn, "world^("),
          "comm model is c * log2(world): %s", fn ? fn : "(none)");
    json_decref(pred);
    /* the measured epoch at one point equals the generating function */
    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?level=application&name=comm"
                                "&metric=time",
             exp);
    json_t *m = get_json(h, path, &status);
    check(status == 200, "measurements: %d", status);
    json_decref(m);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness_open failed");
        return check_summary();
    }
    test_uploads(h);
    test_end_to_end(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
