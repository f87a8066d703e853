/*
 * test_api_callpath_warnings.c — the coded warnings of each callpath in the
 * bottleneck and load-imbalance answers, over real HTTP against a real
 * PostgreSQL.
 *
 * An experiment fitted with Extra-P's modeler (one repetition per point,
 * ranks = 20..60, 2 ranks each, per-epoch values exact): the all-reduce
 * grows 10·ranks, the forward pass 20·ranks, a copy is constant 100 and
 * the backward pass falls as docs/modeling.md's example (725, 505, 319,
 * 179, 82 s), which the modeler fits with a falling log term,
 * 2512 − 412·log2(ranks): −333 at 120 ranks. The computation part (forward
 * + backward) stays positive there, so the application's own warnings do
 * not name negative_prediction: only the backward pass's item does.
 *  - bottlenecks?at=ranks:120: every item carries "warnings"; the backward
 *    pass carries negative_prediction and is ranked last, although its
 *    growth (the log term) would rank it above the constant copy; the
 *    answer's warnings have callpath_warnings with the count of items
 *    carrying warnings and their codes; ?strict=true is a 422 naming
 *    negative_prediction; at 40 ranks (inside the measured range) the
 *    backward pass carries no negative_prediction and ranks by its growth.
 *  - imbalance?at=ranks:1000: each callpath's LIF prediction carries
 *    extrapolation_far (1000 > 4 × 60) in its warnings; strict refuses.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/warning_code.h"
#include "tests/harness.h"
#include "tests/request_json.h"

static const double xs[5] = {20, 30, 40, 50, 60};
static const double falls[5] = {725, 505, 319, 179, 82};

static double steps_per_epoch(double x)
{
    return floor(48000 / x / 8);
}

/* One repetition at x: 2 ranks, one warm-up step and 3 train steps. */
static json_t *profile(int i)
{
    double x = xs[i], n = steps_per_epoch(x);
    const char *names[4] = {"allreduce", "backward", "copy", "forward"};
    const char *cats[4] = {"comm", "comp", "mem", "comp"};
    double epoch[4] = {10 * x, falls[i], 100, 20 * x};
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 4; s++) {
            json_t *list = json_array();
            for (int k = 0; k < 4; k++)
                json_array_append_new(list, json_pack("{s:s, s:s, s:{s:f}}", "name", names[k],
                                                      "category", cats[k], "metrics", "time",
                                                      epoch[k] / n * (s == 0 ? 3.0 : 1.0)));
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths",
                                                   list));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    return json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", 1, "ranks",
                     ranks);
}

static long setup(harness *h)
{
    json_t *e = request_json(
        h, "POST", "/v1/experiments",
        "{\"name\":\"callpath-warnings\",\"parameters\":[\"ranks\"],\"scaling\":\"strong\","
        "\"modeler\":\"extrap\",\"training\":{\"train_samples\":48000,\"validation_samples\":0,"
        "\"batch_size\":8,\"data_parallel\":\"ranks\",\"warmup_steps\":1}}",
        201);
    long exp = (long)json_integer_value(json_object_get(e, "id"));
    json_decref(e);
    check(exp > 0, "experiment created");
    long job = 0;
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    for (int i = 0; i < 5 && exp > 0; i++) {
        json_t *p = profile(i);
        char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_t *a = request_json(h, "POST", path, body, 202);
        job = (long)json_integer_value(json_object_get(a, "job"));
        json_decref(a);
        free(body);
        json_decref(p);
    }
    check(job > 0 && harness_wait_job(h, job, 60), "the refit job finishes");
    return exp;
}

static const json_t *item(const json_t *doc, const char *name, int *rank)
{
    json_t *list = json_object_get(doc, "callpaths");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *it = json_array_get(list, i);
        if (!strcmp(json_string_value(json_object_get(it, "callpath")) ?: "", name)) {
            *rank = (int)json_integer_value(json_object_get(it, "rank"));
            return it;
        }
    }
    *rank = 0;
    return NULL;
}

static const json_t *summary(const json_t *doc)
{
    json_t *w = json_object_get(doc, "warnings");
    for (size_t i = 0; i < json_array_size(w); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(w, i), "code")) ?: "",
                    "callpath_warnings"))
            return json_array_get(w, i);
    return NULL;
}

static int names_code(const json_t *problem, const char *code)
{
    json_t *codes = json_object_get(problem, "codes");
    for (size_t i = 0; i < json_array_size(codes); i++)
        if (!strcmp(json_string_value(json_array_get(codes, i)) ?: "", code))
            return 1;
    return 0;
}

static void test_bottlenecks(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=ranks:120", exp);
    json_t *d = request_json(h, "GET", path, NULL, 200);
    int rb, rc, ra, rf;
    const json_t *back = item(d, "backward", &rb), *copy = item(d, "copy", &rc),
                 *ar = item(d, "allreduce", &ra);
    item(d, "forward", &rf);
    check(back && copy && ar && json_integer_value(json_object_get(d, "ranked")) == 4,
          "4 callpaths ranked");
    check(!warning_has_code(json_object_get(d, "warnings"), "negative_prediction"),
          "the application's parts are positive at 120");
    if (back && copy && ar) {
        double v = json_number_value(json_object_get(json_object_get(back, "value_at"), "value"));
        check(v < 0 && fabs(v - (-333)) <= 0.05 * 333, "the backward pass at 120: %g (-333)", v);
        check(warning_has_code(json_object_get(back, "warnings"), "negative_prediction"),
              "it carries negative_prediction");
        check(json_object_get(json_object_get(back, "growth"), "log") &&
                  json_number_value(json_object_get(json_object_get(back, "growth"), "log")) >
                      json_number_value(json_object_get(json_object_get(copy, "growth"), "log")),
              "its growth would rank it above the constant copy");
        check(rf == 1 && ra == 2 && rc == 3 && rb == 4,
              "ranked last, not by its negative share: %d %d %d %d", rf, ra, rc, rb);
        check(json_is_array(json_object_get(ar, "warnings")) &&
                  !warning_has_code(json_object_get(ar, "warnings"), "negative_prediction"),
              "the all-reduce has warnings, no negative_prediction");
    }
    const json_t *s = summary(d);
    int with = 0;
    json_t *list = json_object_get(d, "callpaths");
    for (size_t i = 0; i < json_array_size(list); i++)
        with += json_array_size(json_object_get(json_array_get(list, i), "warnings")) > 0;
    check(s && json_integer_value(json_object_get(s, "count")) == with && with >= 1 &&
              names_code(s, "negative_prediction"),
          "callpath_warnings counts %d items and names negative_prediction", with);
    json_decref(d);

    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=ranks:120&strict=true", exp);
    d = request_json(h, "GET", path, NULL, 422);
    check(names_code(d, "negative_prediction") && names_code(d, "callpath_warnings"),
          "strict: 422 naming negative_prediction and callpath_warnings");
    json_decref(d);

    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=ranks:40", exp);
    d = request_json(h, "GET", path, NULL, 200);
    back = item(d, "backward", &rb);
    item(d, "copy", &rc);
    check(back && !warning_has_code(json_object_get(back, "warnings"), "negative_prediction") &&
              rb < rc,
          "at 40 no negative_prediction: ranked by growth (%d before %d)", rb, rc);
    json_decref(d);
}

static void test_imbalance(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance?at=ranks:1000", exp);
    json_t *d = request_json(h, "GET", path, NULL, 200);
    json_t *list = json_object_get(d, "callpaths");
    int far = 0;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *it = json_array_get(list, i);
        far += warning_has_code(json_object_get(it, "warnings"), "extrapolation_far");
    }
    check(json_array_size(list) == 4 && far == 4, "every callpath's LIF at 1000: far (%d)", far);
    const json_t *s = summary(d);
    check(s && json_integer_value(json_object_get(s, "count")) == 4 &&
              names_code(s, "extrapolation_far"),
          "callpath_warnings: 4 items, extrapolation_far");
    json_t *step = json_object_get(json_object_get(d, "models"), "step");
    check(warning_has_code(json_object_get(json_object_get(step, "at_point"), "warnings"),
                   "extrapolation_far"),
          "the step's LIF at 1000: extrapolation_far");
    json_decref(d);
    snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance?at=ranks:1000&strict=true", exp);
    d = request_json(h, "GET", path, NULL, 422);
    check(names_code(d, "extrapolation_far"), "strict: 422 naming extrapolation_far");
    json_decref(d);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long exp = setup(h);
    if (exp > 0) {
        test_bottlenecks(h, exp);
        test_imbalance(h, exp);
    }
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
