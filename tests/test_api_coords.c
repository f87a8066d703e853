/*
 * test_api_coords.c — points with no rank count, end to end over real HTTP
 * against a real PostgreSQL. Speedup, efficiency and core-hours read the
 * experiment's rank count G·M (training.data_parallel × model_parallel) at a
 * point as a count of ranks; where it is 0 or below the answers are refused
 * (400 naming the field, the rule in the message), not a number computed
 * from 0 ranks:
 *
 *  - an experiment over "gpus" with data_parallel "gpus-1" (measured at 2,
 *    3, 5, 9, 17: 1 to 16 ranks): cost, speedups and scaling at gpus = 1 or
 *    0.5 (0 and -0.5 ranks) refused naming gpus / values; at gpus = 1.5
 *    (0.5 ranks) the cost is T·0.5·4/3600 core-hours; a sweep plan over
 *    gpus 1, 2, 17 refused (its run at gpus 1 could never be uploaded);
 *  - an experiment over "ranks" (data_parallel "ranks"): a plan over ranks
 *    -4, 0, 2, 16 refused naming parameters.ranks, nothing priced at 0
 *    core-hours nor "srun -n -4" listed; the same values excluded by
 *    "legal" plan the 2 runs left.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

/* one repetition at x of the parameter pname: 2 ranks × 3 steps of three
 * callpaths (gemm 2 + 0.1·x, allreduce 0.5 + 0.01·x, copy 0.05 s) */
static char *profile(const char *pname, double x, int rep)
{
    json_t *ranks = json_array();
    double f = 1 + 0.01 * (rep - 2);
    for (int k = 0; k < 2; k++) {
        json_t *st = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *cps = json_pack(
                "[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]", "name", "gemm",
                "category", "comp", "metrics", "time", (2 + 0.1 * x) * f, "name", "allreduce",
                "category", "comm", "metrics", "time", (0.5 + 0.01 * x) * f, "name", "copy",
                "category", "mem", "metrics", "time", 0.05 * f);
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", k, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f}, s:i, s:o}", "point", pname, x, "repetition", rep, "ranks",
                          ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(p);
    return body;
}

/* An experiment over pname with data_parallel dp, 3 repetitions at each of
 * xs[0..n), refitted. Its id. */
static long experiment(harness *h, const char *name, const char *pname, const char *dp,
                       const double *xs, int n)
{
    char doc[1024];
    snprintf(doc, sizeof doc,
             "{\"name\":\"%s\",\"parameters\":[\"%s\"],\"scaling\":\"strong\",\"training\":{"
             "\"train_samples\":51200,\"validation_samples\":0,\"batch_size\":256,"
             "\"data_parallel\":\"%s\",\"warmup_steps\":0},\"cost\":{\"cores_per_rank\":4,"
             "\"price_per_core_hour\":0.1}}",
             name, pname, dp);
    json_t *e = request_json(h, "POST", "/v1/experiments", doc, 201);
    long id = (long)json_integer_value(json_object_get(e, "id"));
    json_decref(e);
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", id);
    for (int i = 0; i < n; i++)
        for (int rep = 1; rep <= 3; rep++) {
            char *b = profile(pname, xs[i], rep);
            json_decref(request_json(h, "POST", path, b, 202));
            free(b);
        }
    request_refit(h, id);
    return id;
}

/* GET or POST path: checks 400 naming field with the rule in the detail. */
static void refused(harness *h, const char *method, const char *path, const char *body,
                    const char *field, const char *rule)
{
    int st;
    json_t *doc = request_json_status(h, method, path, body, &st);
    const char *f = json_string_value(json_object_get(doc, "field"));
    const char *d = json_string_value(json_object_get(doc, "detail"));
    check(st == 400 && f && !strcmp(f, field) && d && strstr(d, rule),
          "%s %s: 400 naming %s (%s), got %d %s: %s", method, path, field, rule, st,
          f ? f : "-", d ? d : "-");
    json_decref(doc);
}

static void test_gpus_minus_one(harness *h)
{
    static const double xs[] = {2, 3, 5, 9, 17};
    long id = experiment(h, "gpus-minus-one", "gpus", "gpus-1", xs, 5);
    char p[160];
    const char *rule = "training.data_parallel × training.model_parallel must be a number > 0";
    static const char *const at_gpus[] = {"cost?gpus=1", "cost?gpus=0.5", "speedups?gpus=1"};
    for (size_t i = 0; i < sizeof at_gpus / sizeof *at_gpus; i++) {
        snprintf(p, sizeof p, "/v1/experiments/%ld/%s", id, at_gpus[i]);
        refused(h, "GET", p, NULL, "gpus", rule);
    }
    snprintf(p, sizeof p, "/v1/experiments/%ld/scaling?values=1,2,3", id);
    refused(h, "GET", p, NULL, "values", "at gpus=1 the experiment runs on no ranks");
    snprintf(p, sizeof p, "/v1/experiments/%ld/scaling?from=0.5&to=4&step=0.5", id);
    refused(h, "GET", p, NULL, "from", "at gpus=0.5 the experiment runs on no ranks");
    /* 0.5 ranks is a count: core-hours T·0.5·4/3600, money ×0.1 */
    snprintf(p, sizeof p, "/v1/experiments/%ld/cost?gpus=1.5", id);
    json_t *c = request_json(h, "GET", p, NULL, 200);
    double t = json_number_value(json_object_get(
        json_object_get(json_object_get(c, "per_epoch"), "time_s"), "value"));
    double ch = json_number_value(json_object_get(
        json_object_get(json_object_get(c, "per_epoch"), "core_hours"), "value"));
    check(json_number_value(json_object_get(c, "ranks")) == 0.5 && t > 0 &&
              check_close(ch, t * 0.5 * 4 / 3600, 1e-12, 0),
          "cost at 0.5 ranks: T %g, core-hours %g", t, ch);
    json_decref(c);
    /* the measured points still answer: scaling along gpus at the measured
     * values, every ranks a count */
    snprintf(p, sizeof p, "/v1/experiments/%ld/scaling", id);
    json_t *s = request_json(h, "GET", p, NULL, 200);
    json_t *pts = json_object_get(s, "points");
    int ok = json_array_size(pts) == 5;
    for (size_t i = 0; ok && i < json_array_size(pts); i++)
        ok = json_number_value(json_object_get(json_array_get(pts, i), "ranks")) ==
             xs[i] - 1;
    check(ok, "scaling at the measured points, ranks gpus-1");
    json_decref(s);
    snprintf(p, sizeof p, "/v1/experiments/%ld/sweep/plan", id);
    refused(h, "POST", p,
            "{\"parameters\":{\"gpus\":[1,2,17]},\"repetitions\":1,\"command\":\"srun -n {gpus}\","
            "\"epochs_per_run\":1}",
            "parameters", "training.data_parallel: must be > 0 at every coordinate; at gpus=1");
}

static void test_plan_ranks(harness *h)
{
    static const double xs[] = {1, 2, 4, 8, 16};
    long id = experiment(h, "plan-ranks", "ranks", "ranks", xs, 5);
    char p[160];
    snprintf(p, sizeof p, "/v1/experiments/%ld/sweep/plan", id);
    refused(h, "POST", p,
            "{\"parameters\":{\"ranks\":[-4,0,2,16]},\"repetitions\":1,"
            "\"command\":\"srun -n {ranks}\",\"epochs_per_run\":1}",
            "parameters.ranks", "at ranks=-4 it is not");
    json_t *a = request_json(h, "POST", p,
                             "{\"parameters\":{\"ranks\":[-4,0,2,16,32]},\"legal\":\"ranks > 0\","
                             "\"repetitions\":1,\"command\":\"srun -n {ranks}\","
                             "\"epochs_per_run\":1}",
                             200);
    json_t *cmds = json_object_get(a, "commands");
    json_t *cost = json_object_get(a, "missing_cost");
    check(json_integer_value(json_object_get(a, "runs")) == 3 && json_array_size(cmds) == 1 &&
              !strcmp(json_string_value(json_array_get(cmds, 0)) ?: "", "srun -n 32") &&
              json_object_get(cost, "unpriced_runs") == NULL,
          "legal ranks > 0: 3 runs, the one at 32 missing and priced");
    json_decref(a);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_gpus_minus_one(h);
    test_plan_ranks(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
