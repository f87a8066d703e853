/*
 * test_api_noisy.c — answers built from a model set name its too-noisy
 * measured points (api/noisy.h): two experiments over ranks 2..32 with
 * three repetitions per point, one within ±2% everywhere, the other with
 * ranks=8's repetitions spread ±20% (its mean's 95% interval is about
 * ±50%, far beyond ±5%). predict, models, scaling, cost and bottlenecks of
 * the noisy one carry a warning naming ranks=8 and no other point; the
 * clean one's carry none. Real server, real PostgreSQL (tests/harness.h).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

static const double ranks_v[5] = {2, 4, 8, 16, 32};

static long create(harness *h, const char *name)
{
    char body[600];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":51200,\"validation_samples\":0,\"batch_size\":256,"
             "\"data_parallel\":\"ranks\",\"warmup_steps\":0},"
             "\"cost\":{\"cores_per_rank\":4,\"price_per_core_hour\":0.1}}",
             name);
    json_t *d = request_json(h, "POST", "/v1/experiments", body, 201);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    return id;
}

/* one profile: 2 ranks × 3 train steps of gemm (comp) and allreduce (comm), times f */
static void upload(harness *h, long exp, double r, int rep, double f)
{
    json_t *ranks = json_array();
    for (int k = 0; k < 2; k++) {
        json_t *st = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *cps = json_pack("[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]", "name", "gemm",
                                    "category", "comp", "metrics", "time", 0.5 * f, "name",
                                    "allreduce", "category", "comm", "metrics", "time",
                                    0.01 * r * f);
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", k, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", r, "repetition", rep, "ranks",
                          ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    json_decref(request_json(h, "POST", path, body, 202));
    free(body);
    json_decref(p);
}

static void measure(harness *h, long exp, int noisy)
{
    static const double clean[3] = {1.0, 1.02, 0.98}, spread[3] = {0.8, 1.0, 1.2};
    for (int i = 0; i < 5; i++) {
        const double *f = noisy && ranks_v[i] == 8 ? spread : clean;
        for (int rep = 0; rep < 3; rep++)
            upload(h, exp, ranks_v[i], rep + 1, f[rep]);
    }
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    json_t *d = request_json(h, "POST", path, NULL, 202);
    long job = (long)json_integer_value(json_object_get(d, "job"));
    json_decref(d);
    check(harness_wait_job(h, job, 120), "the refit of experiment %ld finishes", exp);
}

/* the warnings of one answer that name a too-noisy point; *ranks8: one names ranks=8 */
static int noisy_warnings(const json_t *doc, int *ranks8)
{
    const json_t *w = json_object_get(doc, "warnings");
    int n = 0;
    *ranks8 = 0;
    for (size_t i = 0; i < json_array_size(w); i++) {
        const json_t *wi = json_array_get(w, i);
        const char *code = json_string_value(json_object_get(wi, "code"));
        const char *s = json_string_value(json_object_get(wi, "message"));
        if (code && !strcmp(code, "noisy_measurement") && s && !strncmp(s, "too noisy: ", 11)) {
            n++;
            *ranks8 |= strstr(s, "ranks=8 epoch time (phase epoch)") != NULL;
        }
    }
    return n;
}

static void check_answers(harness *h, long exp, int noisy)
{
    static const char *const paths[] = {"predict?ranks=64", "models?level=application&metric=time",
                                        "scaling?from=2&to=64&step=2", "cost?ranks=32&epochs=10",
                                        "bottlenecks?at=ranks:256"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        char path[160];
        snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, paths[i]);
        json_t *d = request_json(h, "GET", path, NULL, 200);
        int ranks8, n = noisy_warnings(d, &ranks8);
        char *w = json_dumps(json_object_get(d, "warnings"), JSON_ENCODE_ANY);
        if (noisy)
            check(n == 1 && ranks8, "%s: one warning, naming ranks=8 (%d, %d): %.300s", paths[i],
                  n, ranks8, w ? w : "none");
        else
            check(n == 0, "%s: a clean experiment has no noisy-point warning (%d): %.300s",
                  paths[i], n, w ? w : "none");
        if (noisy && i == 0)
            printf("# predict's warnings: %s\n", w ? w : "none");
        free(w);
        json_decref(d);
    }
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    long clean = create(h, "clean"), noisy = create(h, "noisy");
    measure(h, clean, 0);
    measure(h, noisy, 1);
    harness_sleep(1.2); /* the service's models follow a refit within 1 s */
    check_answers(h, clean, 0);
    check_answers(h, noisy, 1);
    int failed = check_failed_count;
    harness_close(h, failed > 0);
    return check_summary();
}
