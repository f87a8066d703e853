/*
 * service_profile.h — the perfcast JSON profiles the service benchmarks
 * upload: ranks x steps x callpaths, callpath i taking
 * (1 + i%7) * (1 + 0.1 * x^(i%3 / 2)) ms per step with 2% jitter, categories
 * cycling comp, comp, comm, mem; optionally every tenth callpath 20% slower
 * on rank 0 (a straggler for the imbalance figures). Header-only, shared by
 * bench_models.c and bench_analyses.c.
 */
#ifndef PERFCAST_BENCH_SERVICE_PROFILE_H
#define PERFCAST_BENCH_SERVICE_PROFILE_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

typedef struct bench_shape {
    int ranks, steps, callpaths;
    int straggler; /* every tenth callpath 20% slower on rank 0 */
    int visits;    /* also a visits metric */
} bench_shape;

static double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double bench_jitter(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return 1 + 0.02 * ((double)(*s >> 11) / 9007199254740992.0 - 0.5);
}

/* The profile at ranks = x as JSON text (malloc'ed), NULL when out of memory. */
static char *bench_profile(const bench_shape *sh, double x, int repetition, uint64_t *seed)
{
    static const char *const cats[] = {"comp", "comp", "comm", "mem"};
    json_t *ranks = json_array();
    for (int r = 0; r < sh->ranks; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < sh->steps; s++) {
            json_t *cps = json_array();
            for (int i = 0; i < sh->callpaths; i++) {
                char name[48];
                snprintf(name, sizeof name, "kernel_%03d", i);
                double t = (1 + i % 7) * (1 + 0.1 * pow(x, (i % 3) / 2.0)) * 1e-3 *
                           bench_jitter(seed);
                if (sh->straggler && i % 10 == 0 && r == 0)
                    t *= 1.2;
                json_t *metrics = sh->visits ? json_pack("{s:f, s:i}", "time", t, "visits", 1 + i % 5)
                                             : json_pack("{s:f}", "time", t);
                json_array_append_new(cps, json_pack("{s:s, s:s, s:o}", "name", name, "category",
                                                     cats[i % 4], "metrics", metrics));
            }
            json_array_append_new(steps, json_pack("{s:o}", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", repetition,
                            "ranks", ranks);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(doc);
    return text;
}

#endif
