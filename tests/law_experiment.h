/*
 * law_experiment.h — profiles generated from known laws, for the API tests
 * that check answers against hand-computed expectations (test_api_bounds,
 * test_api_epoch, test_api_config_limits, test_api_point_limits,
 * test_api_analyses) and the dashboard's imbalanced experiment
 * (tests/browser/fixture.c): the training set-up they share (50,000
 * samples, batch 256 per rank, data parallel over the ranks, one warm-up
 * step) and its steps per epoch; an upload at x ranks of nranks ranks, one
 * warm-up step (3x the time) and train steps of the given callpaths, each
 * rank's time given by a function or one rank's callpath slower; and the
 * three callpaths of an epoch of comp + comm + mem seconds, uploaded so.
 * The laws and what they must give stay in each test. Header-only; include
 * after tests/harness.h.
 */
#ifndef PERFCAST_TESTS_LAW_EXPERIMENT_H
#define PERFCAST_TESTS_LAW_EXPERIMENT_H

#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "tests/harness.h"
#include "tests/request_json.h"

/* The "training" member of the creation document (a string literal). */
#define LAW_TRAINING_JSON                                                                          \
    "\"training\":{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"           \
    "\"data_parallel\":\"ranks\",\"warmup_steps\":1}"

/* Train steps per epoch at x ranks: 50,000 samples, 256 per rank and step. */
static double law_steps_per_epoch(double x) __attribute__((unused));
static double law_steps_per_epoch(double x)
{
    return floor(50000 / x / 256);
}

/* One callpath of a step: name, category, per-step time on every rank. */
typedef struct law_callpath {
    const char *name, *category;
    double time;
} law_callpath;

/* Rank `rank` runs callpath `callpath` `factor` times as long as the others
 * do; LAW_ALIKE: every rank alike. */
typedef struct law_slow {
    int rank, callpath;
    double factor;
} law_slow;
#define LAW_ALIKE ((law_slow){-1, -1, 1})

/* The callpaths gemm (comp), allreduce (comm) and memcpy (mem) of an epoch
 * of comp + comm + mem seconds at x ranks: each per step its seconds per
 * epoch over the steps per epoch, times n. */
static void law_epoch_parts(double x, double comp, double comm, double mem, double n,
                            law_callpath cps[3]) __attribute__((unused));
static void law_epoch_parts(double x, double comp, double comm, double mem, double n,
                            law_callpath cps[3])
{
    double n_t = law_steps_per_epoch(x);
    cps[0] = (law_callpath){"gemm", "comp", comp / n_t * n};
    cps[1] = (law_callpath){"allreduce", "comm", comm / n_t * n};
    cps[2] = (law_callpath){"memcpy", "mem", mem / n_t * n};
}

/* Callpath k's per-step time on rank `rank` (c: the callpath), given arg. */
typedef double (*law_value_fn)(int rank, int k, const law_callpath *c, void *arg);

/* The upload document of repetition rep at ranks = x: nranks ranks of one
 * warm-up step (3x the time) and `steps` train steps of the ncp callpaths
 * cps, callpath k taking value(rank, k, &cps[k], arg) per step. To
 * json_decref. */
static json_t *law_profile_doc(double x, int rep, int nranks, int steps, const law_callpath *cps,
                               int ncp, law_value_fn value, void *arg) __attribute__((unused));
static json_t *law_profile_doc(double x, int rep, int nranks, int steps, const law_callpath *cps,
                               int ncp, law_value_fn value, void *arg)
{
    json_t *ranks = json_array();
    for (int r = 0; r < nranks; r++) {
        json_t *st = json_array();
        for (int s = 0; s < steps + 1; s++) {
            json_t *list = json_array();
            for (int k = 0; k < ncp; k++) {
                double v = value(r, k, &cps[k], arg) * (s == 0 ? 3.0 : 1.0);
                json_array_append_new(list, json_pack("{s:s, s:s, s:{s:f}}", "name", cps[k].name,
                                                      "category", cps[k].category, "metrics",
                                                      "time", v));
            }
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", list));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", st));
    }
    return json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", rep, "ranks",
                     ranks);
}

/* law_value_fn of a law_slow arg: the callpath's time, times the factor on
 * the slow rank's slow callpath. */
static double law_slow_value(int rank, int k, const law_callpath *c, void *arg)
    __attribute__((unused));
static double law_slow_value(int rank, int k, const law_callpath *c, void *arg)
{
    const law_slow *slow = arg;
    return c->time * (k == slow->callpath && rank == slow->rank ? slow->factor : 1);
}

/* The upload of repetition rep at ranks = x: nranks ranks of one warm-up
 * step and 3 train steps of the ncp callpaths cps, slow's rank running its
 * callpath slow.factor times as long. JSON text to free, or NULL when out
 * of memory. */
static char *law_profile(double x, int rep, int nranks, const law_callpath *cps, int ncp,
                         law_slow slow) __attribute__((unused));
static char *law_profile(double x, int rep, int nranks, const law_callpath *cps, int ncp,
                         law_slow slow)
{
    json_t *p = law_profile_doc(x, rep, nranks, 3, cps, ncp, law_slow_value, &slow);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(p);
    return body;
}

/* Uploads law_profile(x, rep, nranks, cps, ncp, slow) to experiment exp
 * (checked: 202); its refit job. */
static long law_upload(harness *h, long exp, double x, int rep, int nranks,
                       const law_callpath *cps, int ncp, law_slow slow) __attribute__((unused));
static long law_upload(harness *h, long exp, double x, int rep, int nranks,
                       const law_callpath *cps, int ncp, law_slow slow)
{
    char *body = law_profile(x, rep, nranks, cps, ncp, slow);
    long job = request_upload(h, exp, body);
    free(body);
    return job;
}

/* Uploads repetition rep at ranks = x of nranks ranks whose epoch takes
 * comp + comm + mem seconds times n (law_epoch_parts), slow's rank running
 * its callpath slow.factor times as long (checked: 202); its refit job. */
static long law_upload_epoch(harness *h, long exp, double x, int rep, int nranks, double comp,
                             double comm, double mem, double n, law_slow slow)
    __attribute__((unused));
static long law_upload_epoch(harness *h, long exp, double x, int rep, int nranks, double comp,
                             double comm, double mem, double n, law_slow slow)
{
    law_callpath cps[3];
    law_epoch_parts(x, comp, comm, mem, n, cps);
    return law_upload(h, exp, x, rep, nranks, cps, 3, slow);
}

#endif
