/*
 * test_api_epoch.c — the epoch every answer predicts is the epoch the
 * service measured, end to end over real HTTP against a real PostgreSQL, on
 * profiles generated from known laws with a known load imbalance:
 *
 *  - 4 ranks, per epoch comp 100 s, comm 10·x s, mem 1 s, and rank 3's comm
 *    1.3 times the others': the measured epoch (the slowest rank's) is
 *    101 + 13·x (517 s at 32 ranks) while the parts, medians over the ranks,
 *    add up to 101 + 10·x (421 s). predict answers 517 s at 32 (the
 *    measured epoch, inside its interval, at every measured point), with the
 *    parts and the imbalance part 3·x beside it and the coded warning
 *    epoch_imbalance carrying the share 96/517; at 64 ranks 933 s; cost,
 *    configurations, bottlenecks, scaling and the epoch's curve read the
 *    same epoch; at P_1
 *    scaling's Δ is 0% and its efficiencies 100% and 1 exactly;
 *  - the same laws with the ranks alike keep the parts' sum (421 s), with no
 *    imbalance part and no warning;
 *  - a point 8x below the smallest measured value counts as extrapolation
 *    (beyond_4x, below), as the models' extrapolation_far does; 4x below
 *    (the limit) does not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/law_experiment.h"
#include "tests/request_json.h"
#include "tests/warning_code.h"

static const double xs[5] = {2, 4, 8, 16, 32};

/* An experiment at 2..32 ranks, 3 repetitions (all times scaled by
 * 1 + 0.001·(rep − 2)) of 4 ranks whose epoch takes comp 100 s, comm 10·x s
 * and mem 1 s; rank 3's comm `slow` times the others'. */
static long experiment(harness *h, const char *name, double slow)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s,"
             "\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":0.5}}",
             name, LAW_TRAINING_JSON);
    long exp = request_experiment(h, body), job = 0;
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++)
            job = law_upload_epoch(h, exp, xs[i], rep, 4, 100, 10 * xs[i], 1,
                                   1 + 0.001 * (rep - 2), (law_slow){3, 1, slow});
    check(harness_wait_job(h, job, 60), "%s: the refit job finishes", name);
    return exp;
}

static json_t *get(harness *h, const char *fmt, long exp, const char *query)
{
    char path[256];
    snprintf(path, sizeof path, fmt, exp, query);
    return request_json(h, "GET", path, NULL, 200);
}

/* The measured epoch: the slowest rank's 101 + 13·x; the parts' sum
 * 101 + 10·x. */
static double measured(double x)
{
    return 101 + 13 * x;
}

/* an interval end compared with a tolerance for rounding (the laws are
 * exact: the models' intervals may be points) */
static int inside(double v, double lo, double hi)
{
    double tol = 1e-9 * fabs(v);
    return lo - tol <= v && v <= hi + tol;
}

static void test_predict(harness *h, long exp)
{
    /* the epoch measured at each coordinate is the slowest rank's */
    json_t *d = get(h, "/v1/experiments/%ld/measurements?%s", exp,
                    "level=application&metric=time&name=epoch&phase=epoch&limit=100");
    json_t *list = json_object_get(d, "measurements");
    int ok = json_array_size(list) == 5;
    for (size_t i = 0; i < json_array_size(list) && ok; i++) {
        json_t *m = json_array_get(list, i);
        ok = check_close(answer_num(m, "value"), measured(answer_num(m, "point.ranks")), 1e-9, 0);
    }
    check(ok, "premise: the measured epoch is the slowest rank's 101 + 13·x at 2..32");
    json_decref(d);
    for (int i = 0; i < 5; i++) {
        char q[64];
        snprintf(q, sizeof q, "ranks=%g", xs[i]);
        d = get(h, "/v1/experiments/%ld/predict?%s", exp, q);
        json_t *e = json_object_get(d, "epoch");
        double v = answer_num(e, "time"), want = measured(xs[i]);
        check(check_close(v, want, 1e-6, 0) &&
                  inside(want, answer_interval_end(e, 0), answer_interval_end(e, 1)),
              "predict at %g: %.9g in [%.9g, %.9g], the measured %g", xs[i], v,
              answer_interval_end(e, 0), answer_interval_end(e, 1), want);
        json_decref(d);
    }
    d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=32");
    json_t *e = json_object_get(d, "epoch"), *from = json_object_get(e, "composed_from");
    check(json_array_size(from) == 4 &&
              !strcmp(json_string_value(json_array_get(from, 3)) ?: "", "imbalance"),
          "composed from comp, comm, mem and imbalance (%zu parts)", json_array_size(from));
    check(check_close(answer_num(d, "comp.time"), 100, 1e-6, 0) &&
              check_close(answer_num(d, "comm.time"), 320, 1e-6, 0) &&
              check_close(answer_num(d, "mem.time"), 1, 1e-6, 0),
          "the parts still shown: comp %g (100), comm %g (320), mem %g (1)",
          answer_num(d, "comp.time"), answer_num(d, "comm.time"), answer_num(d, "mem.time"));
    check(check_close(answer_num(d, "imbalance.time"), 96, 1e-6, 0) &&
              check_close(answer_num(d, "imbalance.share"), 96.0 / 517, 1e-6, 0) &&
              !strcmp(
                  json_string_value(json_object_get(d, "units")
                                        ? json_object_get(json_object_get(d, "units"), "imbalance")
                                        : NULL)
                      ?: "",
                  "s"),
          "the imbalance part 0.3·comm = 96 s, share 96/517: %g, %g",
          answer_num(d, "imbalance.time"), answer_num(d, "imbalance.share"));
    check(check_close(answer_num(d, "imbalance.parts_sum.value"), 421, 1e-6, 0),
          "Extra-Deep's epoch, the parts' sum, beside it: %g (421)",
          answer_num(d, "imbalance.parts_sum.value"));
    json_t *w = warning_find(json_object_get(d, "warnings"), "epoch_imbalance");
    check(w && check_close(answer_num(w, "share"), 96.0 / 517, 1e-6, 0) &&
              check_close(answer_num(w, "imbalance"), 96, 1e-6, 0) &&
              check_close(answer_num(w, "parts_sum"), 421, 1e-6, 0) &&
              answer_num(w, "limit") == 0.01,
          "epoch_imbalance with share 96/517 = %.6f: %.6f", 96.0 / 517,
          w ? answer_num(w, "share") : NAN);
    json_decref(d);
    /* beyond the measurements, the imbalance part follows its own law */
    d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=64");
    double at64 = answer_num(d, "epoch.time");
    check(check_close(at64, 101 + 13 * 64, 1e-6, 0),
          "predict at 64: %.9g, 101 + 13·64 = 933 (the parts' sum is 741)", at64);
    json_decref(d);
    /* the dashboard's curve of the epoch is predict's, to the last digit */
    d = get(h, "/v1/experiments/%ld/curve?%s", exp, "level=application&name=epoch&values=64");
    json_t *pt = json_array_get(json_object_get(d, "points"), 0);
    check(answer_num(pt, "value") == at64 && check_close(at64, 933, 1e-6, 0),
          "curve at 64: %.17g, predict's %.17g (933)", answer_num(pt, "value"), at64);
    json_decref(d);
}

static void test_analyses(harness *h, long exp)
{
    /* scaling: T_1 = 127 (measured at 2), T_k = 101 + 13·x */
    json_t *d = get(h, "/v1/experiments/%ld/scaling?%s", exp, "values=2,4,32");
    json_t *pts = json_object_get(d, "points");
    json_t *p1 = json_array_get(pts, 0), *p4 = json_array_get(pts, 1),
           *p32 = json_array_get(pts, 2);
    check(answer_num(d, "baseline.epoch") == answer_num(d, "baseline.epoch") &&
              check_close(answer_num(d, "baseline.epoch"), 127, 1e-9, 0),
          "baseline T_1 = 127: %g", answer_num(d, "baseline.epoch"));
    check(answer_num(p1, "speedup_pct.value") == 0 &&
              answer_num(p1, "efficiency_pct.value") == 100 &&
              answer_num(p1, "speedup.value") == 1 && answer_num(p1, "efficiency.value") == 1,
          "at P_1: Δ %g%%, ε %g%%, S %g, E %g (0, 100, 1, 1 by definition)",
          answer_num(p1, "speedup_pct.value"), answer_num(p1, "efficiency_pct.value"),
          answer_num(p1, "speedup.value"), answer_num(p1, "efficiency.value"));
    check(check_close(answer_num(p4, "epoch.value"), 153, 1e-6, 0) &&
              check_close(answer_num(p4, "speedup_pct.value"), (127.0 - 153) / 1.27, 1e-6, 0) &&
              check_close(answer_num(p4, "efficiency.value"), 127.0 / 153, 1e-6, 0),
          "at 4: T %g (153), Δ %g (%g), E %g (%g)", answer_num(p4, "epoch.value"),
          answer_num(p4, "speedup_pct.value"), (127.0 - 153) / 1.27,
          answer_num(p4, "efficiency.value"), 127.0 / 153);
    check(check_close(answer_num(p32, "epoch.value"), 517, 1e-6, 0) &&
              check_close(answer_num(p32, "imbalance.value"), 96, 1e-6, 0) &&
              check_close(answer_num(p32, "comm.value"), 320, 1e-6, 0) &&
              check_close(answer_num(p32, "efficiency.value"), 127.0 / 517, 1e-6, 0),
          "at 32: T %g (517), imbalance %g (96), comm %g (320), E %g (%g)",
          answer_num(p32, "epoch.value"), answer_num(p32, "imbalance.value"),
          answer_num(p32, "comm.value"), answer_num(p32, "efficiency.value"), 127.0 / 517);
    check(warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
          "scaling says epoch_imbalance at its last point");
    json_decref(d);
    /* cost: 517 s · 32 ranks · 1 core / 3600 = 4.5956 core-h, at 0.5 */
    d = get(h, "/v1/experiments/%ld/cost?%s", exp, "ranks=32");
    check(
        check_close(answer_num(d, "per_epoch.time_s.value"), 517, 1e-6, 0) &&
            check_close(answer_num(d, "per_epoch.core_hours.value"), 517.0 * 32 / 3600, 1e-6, 0) &&
            check_close(answer_num(d, "per_epoch.cost.value"), 517.0 * 32 / 3600 * 0.5, 1e-6, 0) &&
            warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
        "cost at 32: %g s (517), %g core-h (%g), with epoch_imbalance",
        answer_num(d, "per_epoch.time_s.value"), answer_num(d, "per_epoch.core_hours.value"),
        517.0 * 32 / 3600);
    json_decref(d);
    /* configurations under 450 s: 101 + 13·x <= 450 up to x = 26 (the
     * parts' sum 101 + 10·x would admit 32) */
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    d = request_json(h, "POST", path,
                     "{\"max_time_s\":450,\"candidates\":{\"ranks\":{\"values\":[2,26,28,32]}}}",
                     200);
    json_t *c = json_object_get(d, "candidates");
    int feas[4], times_ok = json_array_size(c) == 4;
    for (int i = 0; i < 4; i++) {
        json_t *cd = json_array_get(c, (size_t)i);
        feas[i] = json_is_true(json_object_get(cd, "feasible"));
        times_ok &=
            check_close(answer_num(cd, "time_s"), measured(answer_num(cd, "point.ranks")), 1e-6, 0);
    }
    check(times_ok && feas[0] && feas[1] && !feas[2] && !feas[3],
          "configurations: time 101 + 13·x, feasible under 450 s at 2 and 26, not at 28 and 32 "
          "(%d %d %d %d)",
          feas[0], feas[1], feas[2], feas[3]);
    json_decref(d);
    /* bottlenecks: the epoch at 32 is the measured one */
    d = get(h, "/v1/experiments/%ld/bottlenecks?%s", exp, "at=ranks:32");
    check(check_close(answer_num(d, "epoch.at.value"), 517, 1e-6, 0) &&
              check_close(answer_num(d, "epoch.now"), 517, 1e-9, 0),
          "bottlenecks: epoch now %g, at 32 %g (517)", answer_num(d, "epoch.now"),
          answer_num(d, "epoch.at.value"));
    json_decref(d);
}

/* Ranks alike: the epoch is the parts' sum, as before. */
static void test_balanced(harness *h, long exp)
{
    json_t *d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=32");
    check(check_close(answer_num(d, "epoch.time"), 421, 1e-6, 0) &&
              json_array_size(json_object_get(json_object_get(d, "epoch"), "composed_from")) == 3 &&
              !json_object_get(d, "imbalance") &&
              !warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
          "balanced: 421 s from comp, comm and mem, no imbalance part, no warning: %g",
          answer_num(d, "epoch.time"));
    json_decref(d);
    d = get(h, "/v1/experiments/%ld/scaling?%s", exp, "values=2,4");
    json_t *p1 = json_array_get(json_object_get(d, "points"), 0);
    check(answer_num(p1, "speedup_pct.value") == 0 && answer_num(p1, "efficiency.value") == 1,
          "balanced at P_1: Δ %g, E %g", answer_num(p1, "speedup_pct.value"),
          answer_num(p1, "efficiency.value"));
    json_decref(d);
}

/* 8x below the smallest measured 2 counts as far as 8x above the largest;
 * 4x below (0.5) is the limit, not beyond it. */
static void test_below(harness *h, long exp)
{
    json_t *d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=0.25");
    json_t *x = json_object_get(d, "extrapolation");
    json_t *far = warning_find(json_object_get(d, "warnings"), "extrapolation_far");
    check(far && json_is_true(json_object_get(x, "beyond_4x")) &&
              json_array_size(json_object_get(x, "below")) == 1 &&
              !strcmp(json_string_value(json_array_get(json_object_get(x, "below"), 0)) ?: "",
                      "ranks") &&
              answer_num(x, "min_measured.ranks") == 2,
          "0.25 ranks, 8x below 2: extrapolation_far %s, beyond_4x %s",
          far ? "yes" : "no", json_is_true(json_object_get(x, "beyond_4x")) ? "true" : "false");
    json_decref(d);
    d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=0.5");
    x = json_object_get(d, "extrapolation");
    check(!warning_has_code(json_object_get(d, "warnings"), "extrapolation_far") &&
              !json_is_true(json_object_get(x, "beyond_4x")) &&
              json_array_size(json_object_get(x, "below")) == 0,
          "0.5 ranks, 4x below: neither");
    json_decref(d);
    d = get(h, "/v1/experiments/%ld/scaling?%s", exp, "values=0.25,2");
    json_t *p = json_array_get(json_object_get(d, "points"), 0);
    check(json_is_true(json_object_get(p, "beyond_4x")), "scaling's point at 0.25: beyond_4x");
    json_decref(d);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long imb = experiment(h, "imbalanced-comm", 1.3);
    long bal = experiment(h, "balanced", 1.0);
    test_predict(h, imb);
    test_analyses(h, imb);
    test_balanced(h, bal);
    test_below(h, bal);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
