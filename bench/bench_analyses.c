/*
 * bench_analyses.c — the analysis endpoints under load, against a private
 * PostgreSQL (tests/harness.h), one JSON line per figure:
 *
 *   analyses_setup           the experiment: 200 callpaths x 8 ranks x 5 steps,
 *                            5 coordinates x 3 repetitions, refit until ready;
 *                            first (cold) answers of each endpoint, which
 *                            build the per-model-set data, and answer sizes
 *   analyses_configurations  POST .../configurations over 1,000 candidates
 *   analyses_imbalance       GET .../imbalance for all 200 callpaths
 *   analyses_bottlenecks     GET .../bottlenecks?at=ranks:256&limit=200
 *   analyses_scaling         GET .../scaling over 256 points
 *   analyses_cost            GET .../cost?ranks=64&epochs=90
 *   analyses_configurations_distinct, analyses_imbalance_distinct
 *                            the same with every request different (the
 *                            deadline, the point the LIF models are
 *                            predicted at), so that no answer is served
 *                            from the kept pages: computed and rendered
 *
 * each under wrk (16 connections by default; POSTs and varying requests
 * through Lua scripts written to temporary files), with requests/s and
 * p50/p99 latency; the target is p99 <= 20 ms.
 *
 *   bench_analyses [--wrk-seconds N] [--wrk-connections N]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/service_profile.h"
#include "bench/wrk.h"
#include "tests/harness.h"

#define CALLPATHS 200
#define RANKS 8
#define STEPS 5
#define REPS 3

static const char *const configurations_body =
    "{\"max_time_s\":40000,\"max_cost\":5000,\"epochs\":90,"
    "\"candidates\":{\"ranks\":{\"min\":2,\"max\":2000,\"step\":2}}}";

static char *profile(double x, int repetition, uint64_t *seed)
{
    const bench_shape shape = {RANKS, STEPS, CALLPATHS, 1, 0};
    return bench_profile(&shape, x, repetition, seed);
}

static long field(const harness_response *r, const char *name)
{
    json_t *doc = harness_json(r);
    long v = (long)json_integer_value(json_object_get(doc, name));
    json_decref(doc);
    return v;
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

/* One request, timed; its status and size. */
static double timed(harness *h, const char *method, const char *path, const char *body,
                    int *status, size_t *bytes)
{
    harness_response r;
    double t = bench_now_s();
    harness_request(h, method, path, body ? "Content-Type: application/json\r\n" : NULL, body,
                    body ? strlen(body) : 0, &r);
    t = bench_now_s() - t;
    *status = r.status;
    *bytes = r.body_len;
    harness_response_free(&r);
    return t * 1e3;
}

/* Writes text into a new temporary file named by tmpl (mkstemp). 1 / 0. */
static int write_script(char *tmpl, const char *text)
{
    int fd = mkstemp(tmpl);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

int main(int argc, char **argv)
{
    int seconds = 5, connections = 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--wrk-seconds"))
            seconds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wrk-connections"))
            connections = atoi(argv[i + 1]);
    }
    harness *h = harness_open(NULL);
    if (!h) {
        printf("{\"figure\": \"analyses_setup\", \"error\": \"cannot start PostgreSQL and the "
               "server\"}\n");
        return 1;
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bench-analyses\",\"parameters\":[\"ranks\"],\"scaling\":\"strong\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                 "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}}",
                 &r);
    long exp = field(&r, "id");
    harness_response_free(&r);
    const double xs[] = {2, 4, 8, 16, 32};
    uint64_t seed = 11;
    char path[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    long last_job = 0;
    int failed = 0;
    double t0 = bench_now_s();
    for (int rep = 1; rep <= REPS; rep++)
        for (int i = 0; i < 5; i++) {
            char *body = profile(xs[i], rep, &seed);
            harness_post(h, path, body, &r);
            failed += r.status != 202;
            last_job = field(&r, "job");
            harness_response_free(&r);
            free(body);
        }
    while (!job_done(h, last_job) && bench_now_s() - t0 < 300) {
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    double ready = bench_now_s() - t0;

    char imbalance[160], bottlenecks[160], scaling[160], cost[160], configurations[160];
    snprintf(imbalance, sizeof imbalance, "/v1/experiments/%ld/imbalance?limit=200", exp);
    snprintf(bottlenecks, sizeof bottlenecks,
             "/v1/experiments/%ld/bottlenecks?at=ranks:256&limit=200", exp);
    snprintf(scaling, sizeof scaling, "/v1/experiments/%ld/scaling?from=2&to=512&step=2", exp);
    snprintf(cost, sizeof cost, "/v1/experiments/%ld/cost?ranks=64&epochs=90", exp);
    snprintf(configurations, sizeof configurations, "/v1/experiments/%ld/configurations", exp);
    struct {
        const char *name, *method, *path, *body;
        double cold_ms, warm_ms;
        int status;
        size_t bytes;
    } ep[] = {{"imbalance", "GET", imbalance, NULL, 0, 0, 0, 0},
              {"configurations", "POST", configurations, configurations_body, 0, 0, 0, 0},
              {"bottlenecks", "GET", bottlenecks, NULL, 0, 0, 0, 0},
              {"scaling", "GET", scaling, NULL, 0, 0, 0, 0},
              {"cost", "GET", cost, NULL, 0, 0, 0, 0}};
    int n = (int)(sizeof ep / sizeof ep[0]), bad = failed;
    for (int i = 0; i < n; i++) {
        ep[i].cold_ms = timed(h, ep[i].method, ep[i].path, ep[i].body, &ep[i].status, &ep[i].bytes);
        ep[i].warm_ms = timed(h, ep[i].method, ep[i].path, ep[i].body, &ep[i].status, &ep[i].bytes);
        bad += ep[i].status != 200;
    }
    printf("{\"figure\": \"analyses_setup\", \"callpaths\": %d, \"ranks\": %d, \"points\": 5, "
           "\"repetitions\": %d, \"failed_uploads\": %d, \"upload_to_models_s\": %.3f",
           CALLPATHS, RANKS, REPS, failed, ready);
    for (int i = 0; i < n; i++)
        printf(", \"%s\": {\"status\": %d, \"cold_ms\": %.2f, \"warm_ms\": %.2f, \"bytes\": %zu}",
               ep[i].name, ep[i].status, ep[i].cold_ms, ep[i].warm_ms, ep[i].bytes);
    printf("}\n");
    fflush(stdout);

    /* wrk's POST, and requests that differ each time: Lua scripts in temporary files */
    char post[] = "/tmp/perfcast-wrk-XXXXXX", cfg_distinct[] = "/tmp/perfcast-wrk-XXXXXX",
         imb_distinct[] = "/tmp/perfcast-wrk-XXXXXX";
    char lua[1024];
    snprintf(lua, sizeof lua,
             "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
             "wrk.body = [[%s]]\n",
             configurations_body);
    int ok = write_script(post, lua);
    /* each wrk thread counts from its own start, so no two requests are the same */
    static const char *const counter =
        "local next_tid = 0\n"
        "function setup(thread) thread:set(\"tid\", next_tid); next_tid = next_tid + 1 end\n"
        "local n = 0\n";
    snprintf(lua, sizeof lua,
             "%sfunction request()\n  n = n + 1\n"
             "  local body = string.format('{\"max_time_s\":%%d,\"max_cost\":5000,\"epochs\":90,"
             "\"candidates\":{\"ranks\":{\"min\":2,\"max\":2000,\"step\":2}}}', "
             "30000 + tid * 1000000 + n)\n"
             "  return wrk.format(\"POST\", nil, {[\"Content-Type\"] = \"application/json\"}, body)\n"
             "end\n",
             counter);
    ok &= write_script(cfg_distinct, lua);
    snprintf(lua, sizeof lua,
             "%sfunction request()\n  n = n + 1\n"
             "  return wrk.format(\"GET\", string.format('%s&at=ranks:%%d', "
             "64 + tid * 1000000 + n))\nend\n",
             counter, imbalance);
    ok &= write_script(imb_distinct, lua);
    int rc = bad || !ok ? 1 : 0;
    char url[256], figure[64];
    for (int i = 0; i < n; i++) {
        snprintf(url, sizeof url, "http://127.0.0.1:%d%s", harness_port(h), ep[i].path);
        snprintf(figure, sizeof figure, "analyses_%s", ep[i].name);
        rc |= wrk_run_script(figure, url, seconds, connections, ep[i].body ? post : NULL) != 0;
    }
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", harness_port(h), configurations);
    rc |= wrk_run_script("analyses_configurations_distinct", url, seconds, connections,
                         cfg_distinct) != 0;
    snprintf(url, sizeof url, "http://127.0.0.1:%d%s", harness_port(h), imbalance);
    rc |= wrk_run_script("analyses_imbalance_distinct", url, seconds, connections, imb_distinct) !=
          0;
    unlink(post);
    unlink(cfg_distinct);
    unlink(imb_distinct);
    harness_close(h, 0);
    return rc;
}
