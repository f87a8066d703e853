/*
 * bench_upload.c — the upload path's figures against a private PostgreSQL
 * (tests/harness.h), one JSON line each:
 *
 *   upload_serial    POST /v1/experiments/{id}/profiles one after another on
 *                    fresh connections: uploads/s, p50/p99 latency
 *   upload_parallel  the same from CLIENTS threads at once
 *
 * Each upload is a distinct perfcast JSON profile of 200 callpaths x 8 ranks
 * x 5 train steps x 2 metrics (16,000 normalized rows, ~1 MB), so every
 * request parses, commits the raw bytes, 16,000 rows and the refit job in
 * one transaction (the server runs without workers: no refit competes).
 *
 *   bench_upload [--seconds N] [--clients N]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/harness.h"

#define CALLPATHS 200
#define RANKS 8
#define STEPS 5
#define MAX_SAMPLES 100000

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
    return n ? v[(int)(q * (n - 1) + 0.5)] : 0;
}

/* Profile number k: point ranks = k + 1 (so its bytes differ from every
 * other's), values varied too. */
static char *profile(long k, size_t *len)
{
    size_t cap = 64 + (size_t)RANKS * STEPS * CALLPATHS * 110;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%ld},\"ranks\":[", k + 1);
    for (int r = 0; r < RANKS; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < STEPS; s++) {
            n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                                  s ? "," : "");
            for (int c = 0; c < CALLPATHS; c++)
                n += (size_t)snprintf(
                    b + n, cap - n,
                    "%s{\"name\":\"void at::native::kernel_%03d<float>\",\"category\":\"%s\","
                    "\"metrics\":{\"time\":%.9f,\"visits\":%d}}",
                    c ? "," : "", c, c % 10 == 3 ? "comm" : "comp",
                    1e-4 * (c + 1) * (1 + 0.001 * (double)((k * 31 + r * 7 + s) % 97)), 1 + c % 4);
            n += (size_t)snprintf(b + n, cap - n, "]}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    return b;
}

typedef struct run {
    harness *h;
    char path[64];
    double until;
    long next;          /* profile counter, shared */
    pthread_mutex_t mu;
    double *lat;        /* seconds per request */
    int n, failed;
    size_t bytes;
} run;

static void *client(void *arg)
{
    run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        long k = r->next++;
        pthread_mutex_unlock(&r->mu);
        if (now_s() >= r->until)
            break;
        size_t len;
        char *body = profile(k, &len);
        harness_response resp;
        double t0 = now_s();
        int rc = body ? harness_request(r->h, "POST", r->path,
                                        "Content-Type: application/json\r\n", body, len, &resp)
                      : -1;
        double dt = now_s() - t0;
        pthread_mutex_lock(&r->mu);
        if (rc == 0 && resp.status == 202 && r->n < MAX_SAMPLES) {
            r->lat[r->n++] = dt;
            r->bytes = len;
        } else {
            if (r->failed++ == 0)
                fprintf(stderr, "upload failed: %d %s\n", rc ? -1 : resp.status,
                        rc == 0 && resp.body ? resp.body : "");
        }
        pthread_mutex_unlock(&r->mu);
        if (rc == 0)
            harness_response_free(&resp);
        free(body);
    }
    return NULL;
}

static int measure(harness *h, long exp, const char *figure, int clients, double seconds,
                   long *counter)
{
    run r = {.h = h, .next = *counter};
    snprintf(r.path, sizeof r.path, "/v1/experiments/%ld/profiles", exp);
    r.lat = malloc(MAX_SAMPLES * sizeof *r.lat);
    pthread_mutex_init(&r.mu, NULL);
    pthread_t th[64];
    double t0 = now_s();
    r.until = t0 + seconds;
    int started = 0;
    for (int i = 0; i < clients && i < 64; i++)
        started += pthread_create(&th[i], NULL, client, &r) == 0;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    double wall = now_s() - t0;
    *counter = r.next;
    int ok = r.n > 0 && r.failed == 0;
    if (ok) {
        double p99 = quantile(r.lat, r.n, 0.99), p50 = quantile(r.lat, r.n, 0.5);
        printf("{\"figure\": \"%s\", \"clients\": %d, \"uploads\": %d, \"uploads_per_s\": %.1f, "
               "\"rows_per_s\": %.0f, \"mb_per_s\": %.1f, \"p50_ms\": %.1f, \"p99_ms\": %.1f, "
               "\"body_bytes\": %zu, \"rows_per_upload\": %d}\n",
               figure, started, r.n, r.n / wall, r.n * (double)(RANKS * STEPS * CALLPATHS * 2) / wall,
               (double)r.n * (double)r.bytes / wall / 1e6, p50 * 1e3, p99 * 1e3, r.bytes,
               RANKS * STEPS * CALLPATHS * 2);
    } else {
        printf("{\"figure\": \"%s\", \"error\": \"%d uploads failed\"}\n", figure, r.failed);
    }
    fflush(stdout);
    pthread_mutex_destroy(&r.mu);
    free(r.lat);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    double seconds = 3;
    int clients = 4;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--clients"))
            clients = atoi(argv[i + 1]);
    }
    const char *env[] = {"PERFCAST_WORKERS=0", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        printf("{\"figure\": \"upload_serial\", \"error\": \"harness did not start\"}\n");
        return 1;
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bench\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1000,\"batch_size\":8,\"data_parallel\":"
                 "\"ranks\"}}",
                 &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    int rc = exp > 0 ? 0 : -1;
    long counter = 0;
    if (!rc)
        rc |= measure(h, exp, "upload_serial", 1, seconds, &counter);
    if (!rc)
        rc |= measure(h, exp, "upload_parallel", clients, seconds, &counter);
    harness_close(h, rc != 0);
    return rc ? 1 : 0;
}
