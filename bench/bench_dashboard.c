/*
 * bench_dashboard.c — what the dashboard and CI ask, against a private
 * PostgreSQL (tests/harness.h): an experiment of 200 callpaths x 8 ranks x
 * 5 steps at 5 coordinates, uploaded as two commits, then one request at a
 * time (as a browser tab or a CI job asks), median and p90 latency of
 *
 *   dashboard_predict      GET .../predict?ranks=64 (the baseline: cached models)
 *   dashboard_curve        GET .../curve of one callpath, 65 points with intervals
 *   dashboard_curve_epoch  GET .../curve of the composed epoch, 65 points
 *   dashboard_regressions  GET .../regressions of the two commits, 200 callpaths
 *                          at 5 measured points and the target
 *   dashboard_model_sets   GET .../model_sets
 *   dashboard_static       GET / and GET the vendored uPlot (145 KB)
 *
 * one JSON line per figure with the ratio of its median to predict's.
 *
 *   bench_dashboard [--requests N]     (default 200)
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/service_profile.h"
#include "tests/harness.h"

#define CALLPATHS 200
#define RANKS 8
#define STEPS 5

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median and p90 of n timed GETs of path, in ms; -1 when one failed. */
static int time_gets(harness *h, const char *path, int n, double *p50, double *p90,
                     size_t *bytes)
{
    double *t = malloc(sizeof(double) * (size_t)n);
    if (!t)
        return -1;
    for (int i = 0; i < n; i++) {
        harness_response r;
        double t0 = bench_now_s();
        harness_get(h, path, &r);
        t[i] = (bench_now_s() - t0) * 1e3;
        int ok = r.status == 200;
        *bytes = r.body_len;
        if (!ok)
            fprintf(stderr, "bench_dashboard: %s answered %d: %.200s\n", path, r.status,
                    r.body ? r.body : "");
        harness_response_free(&r);
        if (!ok) {
            free(t);
            return -1;
        }
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    *p50 = t[n / 2];
    *p90 = t[(n * 9) / 10];
    free(t);
    return 0;
}

static long upload_commit(harness *h, long exp, const char *commit, uint64_t *seed)
{
    const bench_shape shape = {RANKS, STEPS, CALLPATHS, 1, 0};
    const double xs[] = {2, 4, 8, 16, 32};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        char *body = bench_profile(&shape, xs[i], 1, seed);
        char path[160];
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?commit=%s", exp, commit);
        harness_response r;
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                        body ? strlen(body) : 0, &r);
        free(body);
        json_t *doc = harness_json(&r);
        if (r.status == 202)
            job = (long)json_integer_value(json_object_get(doc, "job"));
        json_decref(doc);
        harness_response_free(&r);
    }
    return job > 0 && harness_wait_job(h, job, 110) ? job : -1;
}

int main(int argc, char **argv)
{
    int n = 200;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--requests"))
            n = atoi(argv[++i]);
    if (n < 10)
        n = 10;
    harness *h = harness_open(NULL);
    if (!h) {
        printf("{\"figure\": \"dashboard_setup\", \"error\": \"harness\"}\n");
        return 1;
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bench-dashboard\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                 "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}}",
                 &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    uint64_t seed = 42;
    double t0 = bench_now_s();
    int rc = exp > 0 && upload_commit(h, exp, "base", &seed) > 0 &&
                     upload_commit(h, exp, "head", &seed) > 0
                 ? 0
                 : 1;
    if (rc) {
        printf("{\"figure\": \"dashboard_setup\", \"error\": \"uploads or refits failed\"}\n");
        harness_close(h, 1);
        return 1;
    }
    printf("{\"figure\": \"dashboard_setup\", \"callpaths\": %d, \"ranks\": %d, \"commits\": 2, "
           "\"upload_to_models_s\": %.2f, \"requests_each\": %d}\n",
           CALLPATHS, RANKS, bench_now_s() - t0, n);
    /* the first callpath's name, from the model list */
    char path[512], cp[160] = "";
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=callpath&limit=1", exp);
    harness_get(h, path, &r);
    doc = harness_json(&r);
    const char *name = json_string_value(
        json_object_get(json_array_get(json_object_get(doc, "models"), 0), "callpath"));
    snprintf(cp, sizeof cp, "%s", name ? name : "");
    json_decref(doc);
    harness_response_free(&r);
    struct {
        const char *figure;
        char path[512];
    } q[7];
    snprintf(q[0].path, sizeof q[0].path, "/v1/experiments/%ld/predict?ranks=64", exp);
    q[0].figure = "dashboard_predict";
    snprintf(q[1].path, sizeof q[1].path, "/v1/experiments/%ld/curve?name=%s", exp, cp);
    q[1].figure = "dashboard_curve";
    snprintf(q[2].path, sizeof q[2].path, "/v1/experiments/%ld/curve?level=application&name=epoch",
             exp);
    q[2].figure = "dashboard_curve_epoch";
    snprintf(q[3].path, sizeof q[3].path,
             "/v1/experiments/%ld/regressions?base=base&head=head&at=ranks:512", exp);
    q[3].figure = "dashboard_regressions";
    snprintf(q[4].path, sizeof q[4].path, "/v1/experiments/%ld/model_sets", exp);
    q[4].figure = "dashboard_model_sets";
    snprintf(q[5].path, sizeof q[5].path, "/");
    q[5].figure = "dashboard_static_index";
    snprintf(q[6].path, sizeof q[6].path, "/vendor/uplot/uPlot.esm.js");
    q[6].figure = "dashboard_static_uplot";
    double base = 0;
    for (int i = 0; i < 7; i++) {
        double p50, p90;
        size_t bytes = 0;
        int reqs = i == 3 ? n / 4 : n; /* the comparison is the slow one */
        if (time_gets(h, q[i].path, reqs, &p50, &p90, &bytes)) {
            printf("{\"figure\": \"%s\", \"error\": \"a request failed\"}\n", q[i].figure);
            rc = 1;
            continue;
        }
        if (i == 0)
            base = p50;
        printf("{\"figure\": \"%s\", \"requests\": %d, \"p50_ms\": %.3f, \"p90_ms\": %.3f, "
               "\"bytes\": %zu, \"p50_vs_predict\": %.2f}\n",
               q[i].figure, reqs, p50, p90, bytes, base > 0 ? p50 / base : 0);
    }
    harness_close(h, rc != 0);
    return rc;
}
