/*
 * modeled_experiment.h — the experiment whose models the configuration
 * searches and advice are asked about, in tests/test_api_searches.c and
 * bench/bench_caps.c: two parameters (ranks, threads), strong scaling, 5 × 5
 * coordinates with ranks·threads <= 64, 3 repetitions each, of 2 ranks ×
 * 3 training steps of three callpaths whose times follow known models
 * (gemm 2/threads + 0.2, allreduce 0.01·ranks, copy 0.05 s; each repetition
 * 1% from the next). Header-only; include after tests/harness.h.
 */
#ifndef PERFCAST_TESTS_MODELED_EXPERIMENT_H
#define PERFCAST_TESTS_MODELED_EXPERIMENT_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/harness.h"

/* The creation document of the experiment named name (a string literal). */
#define MODELED_EXPERIMENT_DOC(name)                                                               \
    "{\"name\":\"" name "\",\"parameters\":[\"ranks\",\"threads\"],\"scaling\":\"strong\","       \
    "\"training\":{\"train_samples\":51200,\"validation_samples\":0,\"batch_size\":256,"           \
    "\"data_parallel\":\"ranks\",\"warmup_steps\":0},\"cost\":{\"cores_per_rank\":4,"             \
    "\"price_per_core_hour\":0.1}}"

/* The upload of repetition rep at (ranks r, threads t): JSON text to free,
 * or NULL when out of memory. */
static char *modeled_profile(double r, double t, int rep) __attribute__((unused));
static char *modeled_profile(double r, double t, int rep)
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
    json_decref(p);
    return body;
}

/* Uploads every profile of experiment exp with the refit deferred, in
 * order, through post (which sends body to path and says whether it was
 * answered 202), until one is not: 1 when all were. */
static int modeled_uploads(harness *h, long exp, int (*post)(harness *, const char *, const char *))
    __attribute__((unused));
static int modeled_uploads(harness *h, long exp, int (*post)(harness *, const char *, const char *))
{
    static const double ranks_v[5] = {2, 4, 8, 16, 32}, threads_v[5] = {1, 2, 4, 8, 16};
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int ok = 1;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            for (int rep = 1; ok && rep <= 3 && ranks_v[i] * threads_v[j] <= 64; rep++) {
                char *body = modeled_profile(ranks_v[i], threads_v[j], rep);
                ok = body && post(h, path, body);
                free(body);
            }
    return ok;
}

#endif
