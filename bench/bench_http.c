/*
 * bench_http.c — figures of the HTTP service against a private PostgreSQL
 * (tests/harness.h), one JSON line each:
 *
 *   http_startup  exec of `perfcast serve` to its "listening" line, migrated
 *                 database (median and max of 5 starts), and SIGTERM to exit
 *   http_health   GET /health under wrk (-t2 -c64 -d5s by default): req/s,
 *                 p50/p99 latency; request lines logged at info as shipped
 *   http_create   POST /v1/experiments one after another on fresh
 *                 connections for 2 s: req/s, p50/p99 latency
 *
 *   bench_http [--wrk-seconds N] [--wrk-connections N]
 * PERFCAST_BIN names the server (bench/run.sh sets it). Without wrk on PATH
 * http_health reports an error line and the others still run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/wrk.h"
#include "tests/harness.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)(q * (n - 1) + 0.5);
    return n ? v[i] : 0;
}

static int startup(harness *h)
{
    double start[5], stop[5];
    for (int i = 0; i < 5; i++) {
        double t0 = now_s();
        if (harness_server_stop(h) != 0)
            return -1;
        double t1 = now_s();
        if (harness_server_start(h))
            return -1;
        stop[i] = (t1 - t0) * 1e3;
        start[i] = (now_s() - t1) * 1e3;
    }
    double max = 0;
    for (int i = 0; i < 5; i++)
        max = start[i] > max ? start[i] : max;
    printf("{\"figure\": \"http_startup\", \"starts\": 5, \"start_ms_median\": %.1f, "
           "\"start_ms_max\": %.1f, \"stop_ms_median\": %.1f}\n",
           quantile(start, 5, 0.5), max, quantile(stop, 5, 0.5));
    return 0;
}

static int health(harness *h, int seconds, int connections)
{
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", harness_port(h));
    return wrk_run("http_health", url, seconds, connections);
}

static int create(harness *h)
{
    enum { MAX = 200000 };
    double *lat = malloc(MAX * sizeof *lat);
    int n = 0, bad = 0;
    double t0 = now_s();
    while (lat && n < MAX && now_s() - t0 < 2.0) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"name\":\"bench-%d\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\"},\"cost\":{\"cores_per_rank\":8,"
                 "\"price_per_core_hour\":0.05}}",
                 n);
        harness_response r;
        double t = now_s();
        int rc = harness_post(h, "/v1/experiments", doc, &r);
        lat[n++] = (now_s() - t) * 1e3;
        bad += rc || r.status != 201;
        harness_response_free(&r);
    }
    double wall = now_s() - t0;
    printf("{\"figure\": \"http_create\", \"requests\": %d, \"requests_per_s\": %.0f, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"failed\": %d, \"connection\": \"new per request\"}\n",
           n, n / wall, quantile(lat, n, 0.5), quantile(lat, n, 0.99), bad);
    free(lat);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    int seconds = 5, connections = 64;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--wrk-seconds"))
            seconds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wrk-connections"))
            connections = atoi(argv[i + 1]);
    }
    harness *h = harness_open(NULL);
    if (!h) {
        printf("{\"figure\": \"http_startup\", \"error\": \"PostgreSQL or the server did not start\"}\n");
        return 1;
    }
    int failed = 0;
    failed |= startup(h) != 0;
    failed |= health(h, seconds, connections) != 0;
    failed |= create(h) != 0;
    harness_close(h, failed);
    return failed;
}
