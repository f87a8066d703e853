/*
 * bench_models.c — the service from upload to answers, against a private
 * PostgreSQL (tests/harness.h), one JSON line per figure:
 *
 *   service_refit      time from the first upload of 5 points x 4
 *                      repetitions (perfcast JSON, 200 callpaths x 8 ranks x
 *                      5 steps x 2 metrics each) to the models being ready:
 *                      the job covering the last upload done (upload rates
 *                      are bench/bench_upload.c's)
 *   service_predict    GET .../predict?ranks=64 under wrk
 *   service_models     GET .../models?metric=time&limit=100 under wrk
 *
 *   bench_models [--wrk-seconds N] [--wrk-connections N]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/service_profile.h"
#include "bench/wrk.h"
#include "tests/harness.h"

#define CALLPATHS 200
#define RANKS 8
#define STEPS 5

static char *profile(double x, int repetition, uint64_t *seed)
{
    const bench_shape shape = {RANKS, STEPS, CALLPATHS, 0, 1};
    return bench_profile(&shape, x, repetition, seed);
}

static long job_of(const harness_response *r)
{
    json_t *doc = harness_json(r);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    json_decref(doc);
    return job;
}

static int job_done(harness *h, long job)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    harness_response r;
    harness_get(h, path, &r);
    int done = strstr(r.body ? r.body : "", "\"state\":\"done\"") != NULL;
    harness_response_free(&r);
    return done;
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
        printf("{\"figure\": \"service_refit\", \"error\": \"cannot start PostgreSQL and the server\"}\n");
        return 1;
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bench\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":1}}",
                 &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);

    const double xs[] = {2, 4, 8, 16, 32};
    uint64_t seed = 7;
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    double bytes = 0, upload_wall = 0;
    int uploads = 0, failed = 0;
    long last_job = 0;
    double t0 = bench_now_s();
    for (int rep = 1; rep <= 4; rep++) {
        for (int i = 0; i < 5; i++) {
            char *body = profile(xs[i], rep, &seed);
            double t = bench_now_s();
            harness_post(h, path, body, &r);
            upload_wall += bench_now_s() - t;
            failed += r.status != 202;
            last_job = job_of(&r);
            bytes += (double)strlen(body);
            uploads++;
            harness_response_free(&r);
            free(body);
        }
    }
    while (!job_done(h, last_job) && bench_now_s() - t0 < 300) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    double ready = bench_now_s() - t0;
    printf("{\"figure\": \"service_refit\", \"points\": 5, \"repetitions\": 4, \"callpaths\": %d, "
           "\"ranks\": %d, \"uploads\": %d, \"failed_uploads\": %d, \"mb_uploaded\": %.1f, "
           "\"upload_to_models_s\": %.3f, \"after_last_upload_s\": %.3f}\n",
           CALLPATHS, RANKS, uploads, failed, bytes / 1e6, ready, ready - upload_wall);
    fflush(stdout);

    char url[160];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/experiments/%ld/predict?ranks=64",
             harness_port(h), exp);
    int rc = wrk_run("service_predict", url, seconds, connections);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/experiments/%ld/models?metric=time&limit=100",
             harness_port(h), exp);
    rc |= wrk_run("service_models", url, seconds, connections);
    harness_close(h, 0);
    return rc || failed ? 1 : 0;
}
