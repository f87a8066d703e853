/*
 * bench_caps.c — how long the answers computed on the HTTP thread take at
 * their documented caps, against a private PostgreSQL (tests/harness.h),
 * one JSON line per figure:
 *
 *   caps_configurations  POST .../configurations over its cap of 10,000
 *                        candidates (ranks 1..100 × threads 1..100, every
 *                        request another deadline so that none is served
 *                        from the kept answers)
 *   caps_advice          POST .../advice over its cap of 10,000 candidates
 *                        (1..100 × 1..100) and max_runs at its cap (10,000),
 *                        a budget large enough to spend them
 *
 * Each figure: milliseconds per answer (median of 5, each request
 * different), the answer's size, and the ratio to the baseline measured in
 * the same run: the same request over one candidate. The experiment: two
 * parameters (ranks, threads), 5 × 5 coordinates with ranks·threads <= 64,
 * 3 repetitions each. Answers taking more than 100 ms belong off the HTTP
 * threads; the README's limits table gives the caps.
 *
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/harness.h"

#define ROUNDS 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const double ranks_v[5] = {2, 4, 8, 16, 32}, threads_v[5] = {1, 2, 4, 8, 16};

static int upload(harness *h, long exp, double r, double t, int rep)
{
    json_t *ranks = json_array();
    double f = 1 + 0.01 * (rep - 2);
    for (int k = 0; k < 2; k++) {
        json_t *st = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *cps = json_pack("[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]",
                                    "name", "gemm", "category", "comp", "metrics", "time",
                                    (2 / t + 0.2) * f, "name", "allreduce", "category", "comm",
                                    "metrics", "time", 0.01 * r * f, "name", "copy", "category",
                                    "mem", "metrics", "time", 0.05 * f);
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", k, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f, s:f}, s:i, s:o}", "point", "ranks", r, "threads", t,
                          "repetition", rep, "ranks", ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    harness_response res;
    harness_post(h, path, body, &res);
    int ok = res.status == 202;
    harness_response_free(&res);
    free(body);
    json_decref(p);
    return ok;
}

/* One POST, timed in ms; its status and size. */
static double timed_post(harness *h, const char *path, const char *body, int *status,
                         size_t *bytes)
{
    harness_response r;
    double t = now_s();
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    t = now_s() - t;
    *status = r.status;
    *bytes = r.body_len;
    harness_response_free(&r);
    return t * 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of ROUNDS requests, body a printf format taking the round
 * (each request different); -1 when one fails. */
static double median_ms(harness *h, const char *path, const char *fmt, size_t *bytes)
{
    double t[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        char body[2400];
        int status;
        snprintf(body, sizeof body, fmt, 100000 + i);
        t[i] = timed_post(h, path, body, &status, bytes);
        if (status != 200) {
            fprintf(stderr, "%s: status %d\n", path, status);
            return -1;
        }
    }
    qsort(t, ROUNDS, sizeof *t, cmp_d);
    return t[ROUNDS / 2];
}

static void figure(const char *name, double cap_ms, double base_ms, size_t bytes, int candidates)
{
    if (cap_ms < 0 || base_ms < 0) {
        printf("{\"figure\": \"%s\", \"error\": \"a request failed\"}\n", name);
        return;
    }
    printf("{\"figure\": \"%s\", \"candidates\": %d, \"ms\": %.2f, \"bytes\": %zu, "
           "\"baseline_ms\": %.2f, \"ratio_to_baseline\": %.1f, \"target_ms\": 100, "
           "\"ratio_to_target\": %.3f}\n",
           name, candidates, cap_ms, bytes, base_ms, cap_ms / base_ms, cap_ms / 100);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        printf("{\"figure\": \"caps_configurations\", \"error\": \"cannot start PostgreSQL and "
               "the server\"}\n");
        return 1;
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"caps\",\"parameters\":[\"ranks\",\"threads\"],\"scaling\":\"strong\","
                 "\"training\":{\"train_samples\":51200,\"validation_samples\":0,"
                 "\"batch_size\":256,\"data_parallel\":\"ranks\",\"warmup_steps\":0},"
                 "\"cost\":{\"cores_per_rank\":4,\"price_per_core_hour\":0.1}}",
                 &r);
    json_t *d = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    harness_response_free(&r);
    int ok = exp > 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int rep = 1; ok && rep <= 3 && ranks_v[i] * threads_v[j] <= 64; rep++)
                ok = upload(h, exp, ranks_v[i], threads_v[j], rep);
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_post(h, path, "", &r);
    d = harness_json(&r);
    long job = (long)json_integer_value(json_object_get(d, "job"));
    json_decref(d);
    harness_response_free(&r);
    if (!ok || !harness_wait_job(h, job, 300)) {
        printf("{\"figure\": \"caps_configurations\", \"error\": \"setup failed\"}\n");
        harness_close(h, 1);
        return 1;
    }
    harness_sleep(1.2); /* the service's models follow a refit within 1 s */
    size_t bytes, base_bytes;
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    double cfg_base = median_ms(
        h, path,
        "{\"max_time_s\":%d,\"candidates\":{\"ranks\":{\"values\":[8]},\"threads\":{\"values\":[4]}}}",
        &base_bytes);
    double cfg = median_ms(h, path,
                           "{\"max_time_s\":%d,\"candidates\":{\"ranks\":{\"min\":1,\"max\":100},"
                           "\"threads\":{\"min\":1,\"max\":100}}}",
                           &bytes);
    figure("caps_configurations", cfg, cfg_base, bytes, 10000);
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    double adv_base = median_ms(h, path,
                                "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%d,"
                                "\"candidates\":{\"ranks\":[8],\"threads\":[4]}}",
                                &base_bytes);
    char values[1024];
    size_t n = 0;
    for (int v = 1; v <= 100; v++)
        n += (size_t)snprintf(values + n, sizeof values - n, "%s%d", v > 1 ? "," : "", v);
    char fmt[2300];
    snprintf(fmt, sizeof fmt,
             "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%%d,"
             "\"max_runs\":10000,\"candidates\":{\"ranks\":[%s],\"threads\":[%s]}}",
             values, values);
    double adv = median_ms(h, path, fmt, &bytes);
    figure("caps_advice", adv, adv_base, bytes, 10000);
    /* the same at the default max_runs (200) */
    snprintf(fmt, sizeof fmt,
             "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%%d,"
             "\"candidates\":{\"ranks\":[%s],\"threads\":[%s]}}",
             values, values);
    adv = median_ms(h, path, fmt, &bytes);
    figure("caps_advice_200_runs", adv, adv_base, bytes, 10000);
    harness_close(h, 0);
    return 0;
}
