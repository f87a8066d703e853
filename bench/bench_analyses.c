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
 * p50/p99 latency; the target is p99 <= 20 ms. And
 *
 *   analyses_cold_load       the first GET .../predict after the model cache
 *                            dropped a set (a notice on the cache channel,
 *                            as after a refit): the load of its models and
 *                            epoch rows, for 1,600 two-parameter points
 *                            (40 rank counts x 40 batch sizes, 3 callpaths
 *                            on 2 ranks), balanced (no imbalance part) and
 *                            with one rank slower (the epoch's imbalance
 *                            part fitted at load, analysis/epoch_imbalance.h);
 *                            median and best of COLD_ROUNDS loads each,
 *                            alternated, against a warm predict (the
 *                            baseline, same run)
 *
 *   bench_analyses [--wrk-seconds N] [--wrk-connections N] [--only cold_load]
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

#define COLD_SIDE 40   /* rank counts and batch sizes: 1,600 points */
#define COLD_ROUNDS 15 /* cold loads of each set */

/* One point of the cold-load sets: 2 ranks, a warm-up and 2 train steps
 * of gemm (comp), allreduce (comm) and memcpy (mem), T = 100·b/(32·x) +
 * 2·log2(x) + 0.5 s per epoch; slow: rank 1's gemm 30% slower, so that
 * the slowest rank's epoch exceeds the parts' medians. */
static char *cold_profile(double x, double b, int slow)
{
    double n_t = floor(1e7 / (x * b));
    const char *names[3] = {"gemm", "allreduce", "memcpy"}, *cats[3] = {"comp", "comm", "mem"};
    const double per_epoch[3] = {100 * b / (32 * x), 2 * log2(x), 0.5};
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *st = json_array();
        for (int k = 0; k < 3; k++) {
            json_t *list = json_array();
            for (int c = 0; c < 3; c++) {
                double t = per_epoch[c] / n_t * (k == 0 ? 3 : 1) *
                           (slow && r == 1 && c == 0 ? 1.3 : 1);
                json_array_append_new(list, json_pack("{s:s, s:s, s:{s:f}}", "name", names[c],
                                                      "category", cats[c], "metrics", "time", t));
            }
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", list));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f, s:f}, s:i, s:o}", "point", "ranks", x, "batch", b,
                          "repetition", 1, "ranks", ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(p);
    return body;
}

static long field(const harness_response *r, const char *name);
static int job_done(harness *h, long job);
static double timed(harness *h, const char *method, const char *path, const char *body,
                    int *status, size_t *bytes);

/* A two-parameter experiment of COLD_SIDE² points, stored with one refit;
 * its id (0 on failure). */
static long cold_experiment(harness *h, int slow)
{
    harness_response r;
    char body[512], path[160];
    snprintf(body, sizeof body,
             "{\"name\":\"bench-cold-%s\",\"parameters\":[\"ranks\",\"batch\"],"
             "\"scaling\":\"strong\",\"training\":{\"train_samples\":10000000,"
             "\"batch_size\":\"batch\",\"data_parallel\":\"ranks\",\"warmup_steps\":1}}",
             slow ? "imbalanced" : "balanced");
    harness_post(h, "/v1/experiments", body, &r);
    long exp = r.status == 201 ? field(&r, "id") : 0;
    harness_response_free(&r);
    if (!exp)
        return 0;
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int failed = 0;
    for (int i = 1; i <= COLD_SIDE; i++)
        for (int j = 1; j <= COLD_SIDE; j++) {
            char *p = cold_profile(i, 8 * j, slow);
            harness_post(h, path, p, &r);
            failed += r.status != 202;
            harness_response_free(&r);
            free(p);
        }
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_post(h, path, "{}", &r);
    long job = r.status == 202 ? field(&r, "job") : 0;
    harness_response_free(&r);
    double t0 = bench_now_s();
    while (job && !job_done(h, job) && bench_now_s() - t0 < 600) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    return failed || !job || !job_done(h, job) ? 0 : exp;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The first predict of exp after its models were dropped (a new point each
 * time, so that no kept page answers): ms; *status its status. */
static double cold_predict(harness *h, long exp, int round, int *status, int *imbalance)
{
    char sql[160], out[16], path[160];
    snprintf(sql, sizeof sql, "SELECT pg_notify('perfcast_cache', 'experiment %ld')", exp);
    harness_sql(h, sql, out, sizeof out);
    struct timespec ts = {0, 100000000}; /* the listener applies it */
    nanosleep(&ts, NULL);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=%d&batch=%d", exp, 50 + round,
             64);
    harness_response r;
    double t = bench_now_s();
    harness_get(h, path, &r);
    t = bench_now_s() - t;
    *status = r.status;
    *imbalance = r.body && strstr(r.body, "\"imbalance\"") != NULL;
    harness_response_free(&r);
    return t * 1e3;
}

/* analyses_cold_load (see the top of the file); 0 / 1 on failure. */
static int cold_load(harness *h)
{
    long exp[2] = {cold_experiment(h, 0), cold_experiment(h, 1)};
    if (!exp[0] || !exp[1]) {
        printf("{\"figure\": \"analyses_cold_load\", \"error\": \"the sets were not stored\"}\n");
        return 1;
    }
    double cold[2][COLD_ROUNDS], warm[COLD_ROUNDS];
    int bad = 0, imbalance[2] = {0, 0}, st, imb;
    char path[160];
    size_t bytes;
    for (int k = 0; k < COLD_ROUNDS; k++)
        for (int e = 0; e < 2; e++) { /* alternated, so that load on the machine hits both */
            cold[e][k] = cold_predict(h, exp[e], k, &st, &imb);
            bad += st != 200;
            imbalance[e] += imb;
        }
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=20&batch=64", exp[1]);
    timed(h, "GET", path, NULL, &st, &bytes);
    for (int k = 0; k < COLD_ROUNDS; k++) {
        warm[k] = timed(h, "GET", path, NULL, &st, &bytes);
        bad += st != 200;
    }
    qsort(cold[0], COLD_ROUNDS, sizeof(double), cmp_double);
    qsort(cold[1], COLD_ROUNDS, sizeof(double), cmp_double);
    qsort(warm, COLD_ROUNDS, sizeof(double), cmp_double);
    double mb = cold[0][COLD_ROUNDS / 2], mi = cold[1][COLD_ROUNDS / 2], mw = warm[COLD_ROUNDS / 2];
    printf("{\"figure\": \"analyses_cold_load\", \"points\": %d, \"parameters\": 2, "
           "\"rounds\": %d, \"balanced\": {\"median_ms\": %.2f, \"best_ms\": %.2f, "
           "\"imbalance_part\": %s}, \"imbalanced\": {\"median_ms\": %.2f, \"best_ms\": %.2f, "
           "\"imbalance_part\": %s}, \"warm_median_ms\": %.3f, \"ratio_balanced_to_warm\": %.1f, "
           "\"ratio_imbalanced_to_warm\": %.1f, \"ratio_imbalanced_to_balanced\": %.2f, "
           "\"failed\": %d}\n",
           COLD_SIDE * COLD_SIDE, COLD_ROUNDS, mb, cold[0][0],
           imbalance[0] ? "true" : "false", mi, cold[1][0],
           imbalance[1] == COLD_ROUNDS ? "true" : "false", mw, mb / mw, mi / mw, mi / mb, bad);
    fflush(stdout);
    /* the figure measures what it says: one set with the part, one without */
    return bad || imbalance[0] || imbalance[1] != COLD_ROUNDS;
}

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
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--wrk-seconds"))
            seconds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wrk-connections"))
            connections = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    harness *h = harness_open(NULL);
    if (!h) {
        printf("{\"figure\": \"analyses_setup\", \"error\": \"cannot start PostgreSQL and the "
               "server\"}\n");
        return 1;
    }
    int cold_rc = 0;
    if (!only || !strcmp(only, "cold_load"))
        cold_rc = cold_load(h);
    if (only) {
        harness_close(h, 0);
        return cold_rc;
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
    return rc | cold_rc;
}
