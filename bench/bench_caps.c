/*
 * bench_caps.c — how long the answers computed on the HTTP thread take at
 * their documented caps, against a private PostgreSQL (tests/harness.h),
 * one JSON line per figure:
 *
 *   caps_configurations_direct  POST .../configurations over 1,000
 *                        candidates (ranks 1..100 × threads 1..10), the most
 *                        the HTTP thread searches itself
 *   caps_configurations_queued  the same over its cap of 10,000 candidates
 *                        (1..100 × 1..100): the 202 the HTTP thread answers,
 *                        and job_done_ms until a job worker has the result
 *   caps_advice_direct   POST .../advice over 50 candidates (1..10 × 1..5)
 *                        at the default max_runs (200): 10,000 candidates ×
 *                        runs, the most the HTTP thread advises on itself
 *   caps_advice_queued   the same over its cap of 10,000 candidates
 *                        (1..100 × 1..100): the 202, and job_done_ms
 *
 * Each figure: milliseconds per answer (median of 5, every request another
 * deadline or budget so that none is served from the kept answers), the
 * answer's size, and the ratio to the baseline measured in the same run:
 * the same request over one candidate. The experiment: tests/modeled_experiment.h
 * (two parameters, ranks and threads, 5 × 5 coordinates with ranks·threads <= 64, 3
 * repetitions each). Answers taking more than 100 ms belong off the HTTP
 * threads (api/search_runs.c); the README's limits table gives the caps.
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
#include "tests/modeled_experiment.h"

#define ROUNDS 5

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* one upload of the experiment: 1 when answered 202 */
static int upload(harness *h, const char *path, const char *body)
{
    harness_response res;
    harness_post(h, path, body, &res);
    int ok = res.status == 202;
    harness_response_free(&res);
    return ok;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The run at the Location of a 202 until done: ms from the request */
static double job_done_ms(harness *h, const char *location, double t0)
{
    while (now_s() - t0 < 600) {
        harness_response r;
        harness_get(h, location, &r);
        int done = r.body && (strstr(r.body, "\"state\":\"done\"") ||
                              strstr(r.body, "\"state\":\"failed\""));
        harness_response_free(&r);
        if (done)
            return (now_s() - t0) * 1e3;
        harness_sleep(0.02);
    }
    return -1;
}

/* The median of ROUNDS requests answered want, body a printf format taking
 * the round (each request different); -1 when one is not. job_ms (when not
 * NULL): the median time until the queued run was done. */
static double median_ms(harness *h, const char *path, const char *fmt, int want, size_t *bytes,
                        double *job_ms)
{
    double t[ROUNDS], j[ROUNDS];
    for (int i = 0; i < ROUNDS; i++) {
        char body[2400], location[256] = "";
        snprintf(body, sizeof body, fmt, 100000 + i);
        harness_response r;
        double t0 = now_s();
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                        strlen(body), &r);
        t[i] = (now_s() - t0) * 1e3;
        int status = r.status;
        *bytes = r.body_len;
        harness_header(&r, "Location", location, sizeof location);
        harness_response_free(&r);
        if (status != want) {
            fprintf(stderr, "%s: status %d, want %d\n", path, status, want);
            return -1;
        }
        j[i] = job_ms ? job_done_ms(h, location, t0) : 0;
    }
    qsort(t, ROUNDS, sizeof *t, cmp_d);
    qsort(j, ROUNDS, sizeof *j, cmp_d);
    if (job_ms)
        *job_ms = j[ROUNDS / 2];
    return t[ROUNDS / 2];
}

/* ms: the HTTP thread's answer (200, or the 202 of a queued run); job_ms
 * (>= 0 for a queued run): until the worker was done */
static void figure(const char *name, double ms, double base_ms, size_t bytes, int candidates,
                   double job_ms)
{
    if (ms < 0 || base_ms < 0) {
        printf("{\"figure\": \"%s\", \"error\": \"a request failed\"}\n", name);
        return;
    }
    printf("{\"figure\": \"%s\", \"candidates\": %d, \"ms\": %.2f, \"bytes\": %zu, "
           "\"baseline_ms\": %.2f, \"ratio_to_baseline\": %.1f, \"target_ms\": 100, "
           "\"ratio_to_target\": %.3f",
           name, candidates, ms, bytes, base_ms, ms / base_ms, ms / 100);
    if (job_ms >= 0)
        printf(", \"job_done_ms\": %.1f", job_ms);
    printf("}\n");
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
    harness_post(h, "/v1/experiments", MODELED_EXPERIMENT_DOC("caps"), &r);
    json_t *d = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    harness_response_free(&r);
    int ok = exp > 0 && modeled_uploads(h, exp, upload);
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
    double job_ms;
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    double cfg_base = median_ms(
        h, path,
        "{\"max_time_s\":%d,\"candidates\":{\"ranks\":{\"values\":[8]},\"threads\":{\"values\":[4]}}}",
        200, &base_bytes, NULL);
    double cfg = median_ms(h, path,
                           "{\"max_time_s\":%d,\"candidates\":{\"ranks\":{\"min\":1,\"max\":100},"
                           "\"threads\":{\"min\":1,\"max\":10}}}",
                           200, &bytes, NULL);
    figure("caps_configurations_direct", cfg, cfg_base, bytes, 1000, -1);
    cfg = median_ms(h, path,
                    "{\"max_time_s\":%d,\"candidates\":{\"ranks\":{\"min\":1,\"max\":100},"
                    "\"threads\":{\"min\":1,\"max\":100}}}",
                    202, &bytes, &job_ms);
    figure("caps_configurations_queued", cfg, cfg_base, bytes, 10000, job_ms);
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    double adv_base = median_ms(h, path,
                                "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%d,"
                                "\"candidates\":{\"ranks\":[8],\"threads\":[4]}}",
                                200, &base_bytes, NULL);
    char values[1024], ten[64], five[64];
    size_t n = 0;
    for (int v = 1; v <= 100; v++)
        n += (size_t)snprintf(values + n, sizeof values - n, "%s%d", v > 1 ? "," : "", v);
    snprintf(ten, sizeof ten, "1,2,3,4,5,6,7,8,9,10");
    snprintf(five, sizeof five, "1,2,3,4,5");
    char fmt[2300];
    snprintf(fmt, sizeof fmt,
             "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%%d,"
             "\"candidates\":{\"ranks\":[%s],\"threads\":[%s]}}",
             ten, five);
    double adv = median_ms(h, path, fmt, 200, &bytes, NULL);
    figure("caps_advice_direct", adv, adv_base, bytes, 50, -1);
    snprintf(fmt, sizeof fmt,
             "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":%%d,"
             "\"candidates\":{\"ranks\":[%s],\"threads\":[%s]}}",
             values, values);
    adv = median_ms(h, path, fmt, 202, &bytes, &job_ms);
    figure("caps_advice_queued", adv, adv_base, bytes, 10000, job_ms);
    harness_close(h, 0);
    return 0;
}
