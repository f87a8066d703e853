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
#include "tests/request_json.h"
#include "tests/warning_code.h"

static long create(harness *h, const char *body)
{
    json_t *doc = request_json(h, "POST", "/v1/experiments", body, 201);
    long id = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    return id;
}

static double num(const json_t *o, const char *path)
{
    char key[64];
    const json_t *v = o;
    while (v && *path) {
        const char *dot = strchrnul(path, '.');
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        v = json_object_get(v, key);
        path = *dot ? dot + 1 : dot;
    }
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static double end_of(const json_t *o, int end)
{
    const json_t *v = json_array_get(json_object_get(o, "interval"), (size_t)end);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* the warning of code in arr, or NULL */
static json_t *warning_of(json_t *arr, const char *code)
{
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *w = json_array_get(arr, i);
        if (!strcmp(json_string_value(json_object_get(w, "code")) ?: "", code))
            return w;
    }
    return NULL;
}

/* 50,000 samples, batch 256 per rank, data parallel over the ranks */
static const char *training_json =
    "\"training\":{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
    "\"data_parallel\":\"ranks\",\"warmup_steps\":1}";

static double steps_per_epoch(double x)
{
    return floor(50000 / x / 256);
}

/* Uploads repetition rep at x: 4 ranks, one warm-up step (3x) and 3 train
 * steps of gemm (comp), allreduce (comm) and memcpy (mem) with per-epoch
 * 100, 10·x and 1 s (divided by the steps per epoch), all scaled by n;
 * rank 3's allreduce `slow` times as long. Returns the refit job. */
static long upload(harness *h, long exp, double x, int rep, double n, double slow)
{
    double n_t = steps_per_epoch(x);
    const char *names[3] = {"gemm", "allreduce", "memcpy"}, *cats[3] = {"comp", "comm", "mem"};
    const double per_epoch[3] = {100, 10 * x, 1};
    json_t *ranks = json_array();
    for (int r = 0; r < 4; r++) {
        json_t *st = json_array();
        for (int s = 0; s < 4; s++) {
            json_t *list = json_array();
            for (int k = 0; k < 3; k++) {
                double v = per_epoch[k] / n_t * n * (k == 1 && r == 3 ? slow : 1) *
                           (s == 0 ? 3 : 1);
                json_array_append_new(list, json_pack("{s:s, s:s, s:{s:f}}", "name", names[k],
                                                      "category", cats[k], "metrics", "time", v));
            }
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", list));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", rep, "ranks",
                          ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    json_t *doc = request_json(h, "POST", path, body, 202);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    json_decref(doc);
    free(body);
    json_decref(p);
    return job;
}

static const double xs[5] = {2, 4, 8, 16, 32};

/* An experiment of these laws at 2..32 ranks, 3 repetitions (±0.1%);
 * rank 3's comm `slow` times the others'. */
static long experiment(harness *h, const char *name, double slow)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s,"
             "\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":0.5}}",
             name, training_json);
    long exp = create(h, body), job = 0;
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++)
            job = upload(h, exp, xs[i], rep, 1 + 0.001 * (rep - 2), slow);
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
        ok = check_close(num(m, "value"), measured(num(m, "point.ranks")), 1e-9, 0);
    }
    check(ok, "premise: the measured epoch is the slowest rank's 101 + 13·x at 2..32");
    json_decref(d);
    for (int i = 0; i < 5; i++) {
        char q[64];
        snprintf(q, sizeof q, "ranks=%g", xs[i]);
        d = get(h, "/v1/experiments/%ld/predict?%s", exp, q);
        json_t *e = json_object_get(d, "epoch");
        double v = num(e, "time"), want = measured(xs[i]);
        check(check_close(v, want, 1e-6, 0) && inside(want, end_of(e, 0), end_of(e, 1)),
              "predict at %g: %.9g in [%.9g, %.9g], the measured %g", xs[i], v, end_of(e, 0),
              end_of(e, 1), want);
        json_decref(d);
    }
    d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=32");
    json_t *e = json_object_get(d, "epoch"), *from = json_object_get(e, "composed_from");
    check(json_array_size(from) == 4 &&
              !strcmp(json_string_value(json_array_get(from, 3)) ?: "", "imbalance"),
          "composed from comp, comm, mem and imbalance (%zu parts)", json_array_size(from));
    check(check_close(num(d, "comp.time"), 100, 1e-6, 0) &&
              check_close(num(d, "comm.time"), 320, 1e-6, 0) &&
              check_close(num(d, "mem.time"), 1, 1e-6, 0),
          "the parts still shown: comp %g (100), comm %g (320), mem %g (1)", num(d, "comp.time"),
          num(d, "comm.time"), num(d, "mem.time"));
    check(check_close(num(d, "imbalance.time"), 96, 1e-6, 0) &&
              check_close(num(d, "imbalance.share"), 96.0 / 517, 1e-6, 0) &&
              !strcmp(json_string_value(json_object_get(d, "units")
                                            ? json_object_get(json_object_get(d, "units"),
                                                              "imbalance")
                                            : NULL) ?: "",
                      "s"),
          "the imbalance part 0.3·comm = 96 s, share 96/517: %g, %g", num(d, "imbalance.time"),
          num(d, "imbalance.share"));
    check(check_close(num(d, "imbalance.parts_sum.value"), 421, 1e-6, 0),
          "Extra-Deep's epoch, the parts' sum, beside it: %g (421)",
          num(d, "imbalance.parts_sum.value"));
    json_t *w = warning_of(json_object_get(d, "warnings"), "epoch_imbalance");
    check(w && check_close(num(w, "share"), 96.0 / 517, 1e-6, 0) &&
              check_close(num(w, "imbalance"), 96, 1e-6, 0) &&
              check_close(num(w, "parts_sum"), 421, 1e-6, 0) && num(w, "limit") == 0.01,
          "epoch_imbalance with share 96/517 = %.6f: %.6f", 96.0 / 517, w ? num(w, "share") : NAN);
    json_decref(d);
    /* beyond the measurements, the imbalance part follows its own law */
    d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=64");
    double at64 = num(d, "epoch.time");
    check(check_close(at64, 101 + 13 * 64, 1e-6, 0),
          "predict at 64: %.9g, 101 + 13·64 = 933 (the parts' sum is 741)", at64);
    json_decref(d);
    /* the dashboard's curve of the epoch is predict's, to the last digit */
    d = get(h, "/v1/experiments/%ld/curve?%s", exp, "level=application&name=epoch&values=64");
    json_t *pt = json_array_get(json_object_get(d, "points"), 0);
    check(num(pt, "value") == at64 && check_close(at64, 933, 1e-6, 0),
          "curve at 64: %.17g, predict's %.17g (933)", num(pt, "value"), at64);
    json_decref(d);
}

static void test_analyses(harness *h, long exp)
{
    /* scaling: T_1 = 127 (measured at 2), T_k = 101 + 13·x */
    json_t *d = get(h, "/v1/experiments/%ld/scaling?%s", exp, "values=2,4,32");
    json_t *pts = json_object_get(d, "points");
    json_t *p1 = json_array_get(pts, 0), *p4 = json_array_get(pts, 1), *p32 = json_array_get(pts, 2);
    check(num(d, "baseline.epoch") == num(d, "baseline.epoch") &&
              check_close(num(d, "baseline.epoch"), 127, 1e-9, 0),
          "baseline T_1 = 127: %g", num(d, "baseline.epoch"));
    check(num(p1, "speedup_pct.value") == 0 && num(p1, "efficiency_pct.value") == 100 &&
              num(p1, "speedup.value") == 1 && num(p1, "efficiency.value") == 1,
          "at P_1: Δ %g%%, ε %g%%, S %g, E %g (0, 100, 1, 1 by definition)",
          num(p1, "speedup_pct.value"), num(p1, "efficiency_pct.value"), num(p1, "speedup.value"),
          num(p1, "efficiency.value"));
    check(check_close(num(p4, "epoch.value"), 153, 1e-6, 0) &&
              check_close(num(p4, "speedup_pct.value"), (127.0 - 153) / 1.27, 1e-6, 0) &&
              check_close(num(p4, "efficiency.value"), 127.0 / 153, 1e-6, 0),
          "at 4: T %g (153), Δ %g (%g), E %g (%g)", num(p4, "epoch.value"),
          num(p4, "speedup_pct.value"), (127.0 - 153) / 1.27, num(p4, "efficiency.value"),
          127.0 / 153);
    check(check_close(num(p32, "epoch.value"), 517, 1e-6, 0) &&
              check_close(num(p32, "imbalance.value"), 96, 1e-6, 0) &&
              check_close(num(p32, "comm.value"), 320, 1e-6, 0) &&
              check_close(num(p32, "efficiency.value"), 127.0 / 517, 1e-6, 0),
          "at 32: T %g (517), imbalance %g (96), comm %g (320), E %g (%g)",
          num(p32, "epoch.value"), num(p32, "imbalance.value"), num(p32, "comm.value"),
          num(p32, "efficiency.value"), 127.0 / 517);
    check(warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
          "scaling says epoch_imbalance at its last point");
    json_decref(d);
    /* cost: 517 s · 32 ranks · 1 core / 3600 = 4.5956 core-h, at 0.5 */
    d = get(h, "/v1/experiments/%ld/cost?%s", exp, "ranks=32");
    check(check_close(num(d, "per_epoch.time_s.value"), 517, 1e-6, 0) &&
              check_close(num(d, "per_epoch.core_hours.value"), 517.0 * 32 / 3600, 1e-6, 0) &&
              check_close(num(d, "per_epoch.cost.value"), 517.0 * 32 / 3600 * 0.5, 1e-6, 0) &&
              warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
          "cost at 32: %g s (517), %g core-h (%g), with epoch_imbalance",
          num(d, "per_epoch.time_s.value"), num(d, "per_epoch.core_hours.value"),
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
        times_ok &= check_close(num(cd, "time_s"), measured(num(cd, "point.ranks")), 1e-6, 0);
    }
    check(times_ok && feas[0] && feas[1] && !feas[2] && !feas[3],
          "configurations: time 101 + 13·x, feasible under 450 s at 2 and 26, not at 28 and 32 "
          "(%d %d %d %d)",
          feas[0], feas[1], feas[2], feas[3]);
    json_decref(d);
    /* bottlenecks: the epoch at 32 is the measured one */
    d = get(h, "/v1/experiments/%ld/bottlenecks?%s", exp, "at=ranks:32");
    check(check_close(num(d, "epoch.at.value"), 517, 1e-6, 0) &&
              check_close(num(d, "epoch.now"), 517, 1e-9, 0),
          "bottlenecks: epoch now %g, at 32 %g (517)", num(d, "epoch.now"),
          num(d, "epoch.at.value"));
    json_decref(d);
}

/* Ranks alike: the epoch is the parts' sum, as before. */
static void test_balanced(harness *h, long exp)
{
    json_t *d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=32");
    check(check_close(num(d, "epoch.time"), 421, 1e-6, 0) &&
              json_array_size(json_object_get(json_object_get(d, "epoch"), "composed_from")) == 3 &&
              !json_object_get(d, "imbalance") &&
              !warning_has_code(json_object_get(d, "warnings"), "epoch_imbalance"),
          "balanced: 421 s from comp, comm and mem, no imbalance part, no warning: %g",
          num(d, "epoch.time"));
    json_decref(d);
    d = get(h, "/v1/experiments/%ld/scaling?%s", exp, "values=2,4");
    json_t *p1 = json_array_get(json_object_get(d, "points"), 0);
    check(num(p1, "speedup_pct.value") == 0 && num(p1, "efficiency.value") == 1,
          "balanced at P_1: Δ %g, E %g", num(p1, "speedup_pct.value"), num(p1, "efficiency.value"));
    json_decref(d);
}

/* 8x below the smallest measured 2 counts as far as 8x above the largest;
 * 4x below (0.5) is the limit, not beyond it. */
static void test_below(harness *h, long exp)
{
    json_t *d = get(h, "/v1/experiments/%ld/predict?%s", exp, "ranks=0.25");
    json_t *x = json_object_get(d, "extrapolation");
    json_t *far = warning_of(json_object_get(d, "warnings"), "extrapolation_far");
    check(far && json_is_true(json_object_get(x, "beyond_4x")) &&
              json_array_size(json_object_get(x, "below")) == 1 &&
              !strcmp(json_string_value(json_array_get(json_object_get(x, "below"), 0)) ?: "",
                      "ranks") &&
              num(x, "min_measured.ranks") == 2,
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
