/*
 * test_api_analyses.c — the analysis endpoints end to end over real HTTP
 * against a real PostgreSQL: profiles generated from known functions are
 * uploaded, the worker fits them, and the answers must match the functions.
 *
 *  - Extra-Deep's case study, T(x) = 158.58 + 0.58·x^(2/3)·log2(x)^2 s per
 *    epoch at x = 2,4,6,10,12, 5 repetitions. With 0.1% noise per
 *    repetition the epoch model has T's terms, predict?ranks=40 is within 2%
 *    of T(40), and with ρ = 1 the cost at 32 ranks is T(32)·32/3600
 *    core-hours (within 2%, and exactly the predicted T(32)·32/3600). With
 *    5% noise the terms cannot be recovered (tests/test_case_study.c gives
 *    the rates); what must hold there: the cost is the predicted time times
 *    ranks·ρ/3600 exactly, the measured epochs lie within the noise, the
 *    speedup and efficiency at the measured points follow Eq. 11-13 from the
 *    measured times, and the 4x warning.
 *  - Scaling and bottlenecks on the case study: Δ and ε models, the
 *    all-reduce (the only growing callpath) ranked first.
 *  - Cost formulas: refused at creation when invalid (400 naming
 *    cost.formula), evaluated per epoch and for N epochs when valid.
 *  - Configurations (strong scaling, T(x) = 7200/x + 0.3·x + 20): the
 *    recommendation under a deadline and a budget, and under each objective,
 *    equals a brute-force search over the true T; impossible limits give the
 *    explicit answer with the closest candidates; a two-parameter experiment
 *    searches the product of its ranges, and a product too large is refused.
 *  - Imbalance: one rank 30% slower in one callpath -> LIF = 1.3/(1+0.3/N)
 *    at every point, that callpath first; the regression
 *    T = b0 + b1·ranks + b2·LIF recovers the planted coefficients to 1%.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/law_experiment.h"
#include "tests/request_json.h"

/* ---- helpers ------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* Uploads profile (taken) to experiment exp (checked: 202); the refit job. */
static long upload(harness *h, long exp, json_t *profile)
{
    char *body = json_dumps(profile, JSON_COMPACT | JSON_REAL_PRECISION(17));
    long job = request_upload(h, exp, body);
    free(body);
    json_decref(profile);
    return job;
}

static int wait_job(harness *h, long job)
{
    return harness_wait_job(h, job, 60);
}

static json_t *get(harness *h, const char *path, int want)
{
    return request_json(h, "GET", path, NULL, want);
}

static double plain(int rank, int k, const law_callpath *c, void *arg)
{
    (void)rank;
    (void)k;
    (void)arg;
    return c->time;
}

/* ---- Extra-Deep's case study ----------------------------------------------------- */

static double case_study(double x)
{
    return 158.58 + 0.58 * pow(x, 2.0 / 3) * pow(log2(x), 2);
}

/* Uploads the case study (comp 156.58, mem 2, the growth in the all-reduce),
 * 5 repetitions with relative noise sigma per part and repetition, 4 ranks. */
static long case_study_experiment(harness *h, const char *name, double sigma, double measured[5])
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s,"
             "\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":0.5}}",
             name, LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 6, 10, 12};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        double n_t = law_steps_per_epoch(xs[i]);
        double reps[3][5];
        for (int rep = 1; rep <= 5; rep++) {
            law_callpath cps[3] = {
                {"volta_sgemm_128x64_nn", "comp", 156.58 * (1 + sigma * gauss()) / n_t},
                {"ncclKernel_AllReduce_RING_LL_Sum_float", "comm",
                 (case_study(xs[i]) - 158.58) * (1 + sigma * gauss()) / n_t},
                {"Memcpy HtoD (Pageable -> Device)", "mem", 2 * (1 + sigma * gauss()) / n_t},
            };
            for (int k = 0; k < 3; k++)
                reps[k][rep - 1] = cps[k].time * n_t;
            job = upload(h, exp, law_profile_doc(xs[i], rep, 4, 3, cps, 3, plain, NULL));
        }
        /* the service's epoch: per repetition the slowest rank's sum of the
         * parts (the four ranks alike here), the median over repetitions */
        double sums[5];
        for (int a = 0; a < 5; a++)
            sums[a] = reps[0][a] + reps[1][a] + reps[2][a];
        for (int a = 0; a < 5; a++)
            for (int b = a + 1; b < 5; b++)
                if (sums[b] < sums[a]) {
                    double t = sums[a];
                    sums[a] = sums[b];
                    sums[b] = t;
                }
        measured[i] = sums[2];
    }
    check(wait_job(h, job), "%s: the refit job finishes", name);
    return exp;
}

static int epoch_terms_are_case_study(harness *h, long exp, char *function, size_t cap)
{
    char path[160];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/models?level=application&metric=time&callpath=epoch", exp);
    json_t *list = get(h, path, 200);
    json_t *epoch = json_array_get(json_object_get(list, "models"), 0);
    json_t *terms = json_object_get(epoch, "terms");
    json_t *f0 = json_array_get(json_object_get(json_array_get(terms, 0), "factors"), 0);
    snprintf(function, cap, "%s", json_string_value(json_object_get(epoch, "function")) ?: "?");
    int same = json_array_size(terms) == 1 &&
               fabs(json_number_value(json_object_get(f0, "poly")) - 2.0 / 3) < 1e-12 &&
               json_number_value(json_object_get(f0, "log")) == 2;
    json_decref(list);
    return same;
}

/* cost?ranks=32 with ρ = 1: core-hours = predicted T(32)·32/3600 exactly; returns it */
static double cost_at_32(harness *h, long exp, double *predicted_t)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/cost?ranks=32&epochs=90", exp);
    json_t *c = get(h, path, 200);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=32", exp);
    json_t *p = get(h, path, 200);
    double t = answer_num(p, "epoch.time");
    double ch = answer_num(c, "per_epoch.core_hours.value");
    check(fabs(answer_num(c, "per_epoch.time_s.value") - t) <= 1e-9 * t,
          "cost uses predict's time");
    check(fabs(ch - t * 32 / 3600) <= 1e-12 * ch, "core-hours %.9g = T(32)·32/3600 = %.9g", ch,
          t * 32 / 3600);
    check(fabs(answer_num(c, "per_epoch.cost.value") - ch * 0.5) <= 1e-12 * ch,
          "money = core-h · 0.5");
    check(fabs(answer_num(c, "total.core_hours.value") - 90 * ch) <= 1e-9 * ch, "90 epochs");
    json_t *civ = json_object_get(json_object_get(c, "per_epoch"), "core_hours");
    json_t *piv = json_object_get(p, "epoch");
    check(fabs(answer_interval_end(civ, 0) - answer_interval_end(piv, 0) * 32 / 3600) <=
                  1e-9 * ch &&
              fabs(answer_interval_end(civ, 1) - answer_interval_end(piv, 1) * 32 / 3600) <=
                  1e-9 * ch,
          "the cost interval is T's carried through");
    check(json_is_false(json_object_get(json_object_get(c, "extrapolation"), "beyond_4x")),
          "32 is within 4x of 12 (48)");
    check(json_is_string(json_object_get(json_object_get(json_object_get(c, "models"),
                                                         "core_hours_per_epoch"),
                                         "function")),
          "a PMNF cost model C(x)");
    *predicted_t = t;
    json_decref(c);
    json_decref(p);
    return ch;
}

static void test_case_study(harness *h)
{
    double measured[5];
    rng = 20231112;
    long exp = case_study_experiment(h, "case-study-0.1pct", 0.001, measured);
    char function[512];
    check(epoch_terms_are_case_study(h, exp, function, sizeof function),
          "0.1%% noise: the epoch model has T's terms: %s", function);
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    json_t *p = get(h, path, 200);
    double v = answer_num(p, "epoch.time");
    check(fabs(v - case_study(40)) <= 0.02 * case_study(40), "predict(40) = %g, T(40) = %g", v,
          case_study(40));
    json_decref(p);
    double t32;
    double ch = cost_at_32(h, exp, &t32);
    double truth = case_study(32) * 32 / 3600;
    check(fabs(ch - truth) <= 0.02 * truth, "cost at 32: %g core-h, T(32)·32/3600 = %g", ch,
          truth);

    /* weak scaling: the cheapest and most efficient allocation is the smallest (paper: 2) */
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    json_t *c = request_json(h, "POST", path,
                        "{\"max_time_s\":100000,\"max_core_hours\":1000,\"epochs\":10,"
                        "\"candidates\":{\"ranks\":{\"min\":2,\"max\":64,\"step\":2}}}",
                        200);
    json_t *rec = json_object_get(c, "recommended");
    check(answer_num(rec, "point.ranks") == 2 &&
              strstr(json_string_value(json_object_get(rec, "reason")) ?: "", "weak scaling"),
          "weak scaling recommends 2 ranks: %s",
          json_string_value(json_object_get(rec, "reason")) ?: "null");
    json_decref(c);
}

static void test_case_study_noisy(harness *h)
{
    double measured[5];
    rng = 777;
    long exp = case_study_experiment(h, "case-study-5pct", 0.05, measured);
    char function[512];
    int same = epoch_terms_are_case_study(h, exp, function, sizeof function);
    printf("# 5%% noise: epoch model %s (T's terms: %s)\n", function, same ? "yes" : "no");
    double t32;
    cost_at_32(h, exp, &t32);
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/scaling", exp);
    json_t *s = get(h, path, 200);
    json_t *ms = json_object_get(s, "measured");
    check(json_array_size(ms) == 5, "5 measured points");
    for (size_t i = 0; i < json_array_size(ms); i++) {
        json_t *m = json_array_get(ms, i);
        double x = answer_num(m, "point.ranks"), t = answer_num(m, "epoch");
        /* the median of 5 repetitions with 5% noise each: within 4 sigma */
        check(fabs(t - case_study(x)) <= 0.2 * case_study(x), "measured epoch at %g: %g", x, t);
        check(fabs(t - measured[i]) <= 1e-6 * t, "the service's median %g = the test's %g", t,
              measured[i]);
        double d = (measured[0] - measured[i]) / (measured[0] / 100);
        double dt = (x - 2) / (2.0 / 100);
        check(fabs(answer_num(m, "speedup_pct") - d) <= 1e-6 * (fabs(d) + 1), "Δ at %g: %g vs %g",
              x, answer_num(m, "speedup_pct"), d);
        double e = i == 0 ? 100 : 100 * d / dt;
        check(fabs(answer_num(m, "efficiency_pct") - e) <= 1e-6 * (fabs(e) + 1), "ε at %g", x);
    }
    json_decref(s);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64", exp);
    json_t *p = get(h, path, 200);
    check(json_is_true(json_object_get(json_object_get(p, "extrapolation"), "beyond_4x")),
          "64 is beyond 4x 12: warned");
    json_decref(p);
}

/* ---- scaling and bottlenecks ---------------------------------------------------- */

/* <what>_models_disagree (what: speedup, efficiency): present exactly when
 * at some point but P_1 the 95% intervals of <what>_pct (from the epoch's
 * model) and <what>_pct_model do not meet, with their count, the first such
 * point and its two intervals; recomputed here from the points themselves.
 * Returns the count. */
static int check_models_disagree(json_t *s, const char *what)
{
    char a[32], b[32], code[64];
    snprintf(a, sizeof a, "%s_pct", what);
    snprintf(b, sizeof b, "%s_pct_model", what);
    snprintf(code, sizeof code, "%s_models_disagree", what);
    json_t *pts = json_object_get(s, "points"), *first = NULL;
    int count = 0;
    for (size_t i = 0; i < json_array_size(pts); i++) {
        json_t *pt = json_array_get(pts, i);
        json_t *d = json_object_get(pt, a), *q = json_object_get(pt, b);
        double dl = answer_interval_end(d, 0), dh = answer_interval_end(d, 1), ql = answer_interval_end(q, 0),
               qh = answer_interval_end(q, 1);
        if (!json_is_object(q) || answer_num(pt, "point.ranks") == answer_num(s, "baseline.ranks"))
            continue;
        if ((dh < ql || qh < dl) && !count++)
            first = pt;
    }
    json_t *w = NULL, *ws = json_object_get(s, "warnings");
    for (size_t i = 0; i < json_array_size(ws); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(ws, i), "code")) ?: "", code))
            w = json_array_get(ws, i);
    printf("# %s: %d of %zu points\n", code, count, json_array_size(pts));
    check((w != NULL) == (count > 0), "%s present iff %d > 0", code, count);
    if (!w || !first)
        return count;
    check(json_integer_value(json_object_get(w, "count")) == count &&
              answer_num(w, "point.ranks") == answer_num(first, "point.ranks"),
          "%s: count %d, first point %g", code, count, answer_num(first, "point.ranks"));
    json_t *wd = json_object_get(w, a), *wq = json_object_get(w, b);
    check(json_real_value(json_array_get(wd, 0)) == answer_interval_end(json_object_get(first, a), 0) &&
              json_real_value(json_array_get(wd, 1)) ==
                  answer_interval_end(json_object_get(first, a), 1) &&
              json_real_value(json_array_get(wq, 0)) ==
                  answer_interval_end(json_object_get(first, b), 0) &&
              json_real_value(json_array_get(wq, 1)) == answer_interval_end(json_object_get(first, b), 1),
          "%s carries the first point's two intervals", code);
    return count;
}

static void test_scaling_and_bottlenecks(harness *h)
{
    double measured[5];
    rng = 4242;
    long exp = case_study_experiment(h, "case-study-analyses", 0.002, measured);
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/scaling?from=2&to=64&step=2", exp);
    json_t *s = get(h, path, 200);
    json_t *pts = json_object_get(s, "points");
    check(json_array_size(pts) == 32, "32 points from 2 to 64");
    double t1 = answer_num(s, "baseline.epoch");
    check(fabs(t1 - measured[0]) <= 1e-6 * t1, "baseline: the measured epoch at 2 ranks");
    for (size_t i = 0; i < json_array_size(pts); i++) {
        json_t *pt = json_array_get(pts, i);
        double x = answer_num(pt, "point.ranks"), t = answer_num(pt, "epoch.value");
        if (x == 2) /* P_1 itself: T_k is T_1, Δ = 0 and S = E = 1 by definition */
            t = t1;
        double d = (t1 - t) / (t1 / 100), dt = (x - 2) / 0.02;
        check(fabs(answer_num(pt, "speedup_pct.value") - d) <= 1e-9 * (fabs(d) + 1) &&
                  fabs(answer_num(pt, "ideal_speedup_pct") - dt) <= 1e-9 * (dt + 1) &&
                  fabs(answer_num(pt, "speedup.value") - t1 / t) <= 1e-12 &&
                  fabs(answer_num(pt, "efficiency.value") - t1 / t) <= 1e-12,
              "Eq. 11/13 and T1/Tk at %g", x);
        if (x > 2)
            check(fabs(answer_num(pt, "efficiency_pct.value") - 100 * d / dt) <=
                      1e-9 * (fabs(d) + 1),
                  "ε = Δ/Δ_t at %g", x);
        /* Δ falls as T rises: its interval is T's reversed */
        check(answer_num(pt, "speedup_pct.value") >=
                      answer_interval_end(json_object_get(pt, "speedup_pct"), 0) &&
                  answer_num(pt, "speedup_pct.value") <=
                      answer_interval_end(json_object_get(pt, "speedup_pct"), 1),
              "Δ inside its interval at %g", x);
        check(json_is_boolean(json_object_get(pt, "beyond_4x")) &&
                  json_is_true(json_object_get(pt, "beyond_4x")) == (x > 48),
              "4x warning exactly beyond 48 at %g", x);
    }
    /* The case study's law, 158.58 + 0.58 x^(2/3) log2(x)^2, gives Δ(64) =
     * (T(2) - T(64)) / (T(2)/100) = (159.50 - 492.66) / 1.5950 = -208.9%:
     * inside the interval derived from the epoch's model, outside the Δ
     * model's (about [-321, -315]), so the warning must be there. */
    double t2 = 158.58 + 0.58 * pow(2, 2.0 / 3), t64 = 158.58 + 0.58 * 16 * 36;
    double d64 = (t2 - t64) / (t2 / 100);
    json_t *p64 = json_array_get(pts, json_array_size(pts) - 1);
    check(answer_interval_end(json_object_get(p64, "speedup_pct"), 0) <= d64 &&
              d64 <= answer_interval_end(json_object_get(p64, "speedup_pct"), 1),
          "the law's Δ(64) = %g inside speedup_pct's interval", d64);
    int apart = check_models_disagree(s, "speedup");
    check(apart > 0 && !(answer_interval_end(json_object_get(p64, "speedup_pct_model"), 0) <= d64 &&
                         d64 <= answer_interval_end(json_object_get(p64, "speedup_pct_model"), 1)),
          "the Δ model misses the law's Δ(64) = %g: the warning is due (%d points)", d64, apart);
    check_models_disagree(s, "efficiency");
    json_t *models = json_object_get(s, "models");
    check(
        json_is_string(json_object_get(json_object_get(models, "speedup_pct"), "function")) &&
            json_is_string(json_object_get(json_object_get(models, "efficiency_pct"), "function")),
        "PMNF models of Δ and ε");
    json_decref(s);
    snprintf(path, sizeof path, "/v1/experiments/%ld/scaling?values=4,8,1000", exp);
    s = get(h, path, 200);
    check(json_array_size(json_object_get(s, "points")) == 3, "values=");
    json_decref(s);
    const char *bad[] = {"?from=8&to=2", "?values=1,x", "?from=1&to=100000&step=1",
                         "?metric=nope", "?parameter=nodes", "?values=2&from=1", "?nodes=3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/scaling%s", exp, bad[i]);
        json_decref(get(h, path, 400));
    }

    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=ranks:256&limit=10", exp);
    json_t *b = get(h, path, 200);
    json_t *list = json_object_get(b, "callpaths");
    json_t *first = json_array_get(list, 0);
    check(json_array_size(list) == 3, "3 callpaths ranked");
    check(!strcmp(json_string_value(json_object_get(first, "callpath")) ?: "",
                  "ncclKernel_AllReduce_RING_LL_Sum_float") &&
              !strcmp(json_string_value(json_object_get(first, "category")) ?: "", "comm"),
          "the growing all-reduce first");
    double comm_now = case_study(12) - 158.58;
    check(fabs(answer_num(first, "share_now_pct") - 100 * comm_now / measured[4]) <= 0.01 * 100 *
                                                                                 comm_now /
                                                                                 measured[4],
          "share now %g%%", answer_num(first, "share_now_pct"));
    double comm256 = case_study(256) - 158.58;
    check(fabs(answer_num(first, "value_at.value") - comm256) <= 0.05 * comm256,
          "all-reduce at 256: %g vs %g", answer_num(first, "value_at.value"), comm256);
    check(answer_num(first, "share_at_pct.value") > answer_num(first, "share_now_pct"),
          "its share grows: %g%% -> %g%%", answer_num(first, "share_now_pct"),
          answer_num(first, "share_at_pct.value"));
    check(json_is_true(json_object_get(json_object_get(b, "extrapolation"), "beyond_4x")),
          "256 is beyond 4x: warned");
    json_decref(b);
    const char *bad_b[] = {"", "?at=ranks", "?at=nodes:4", "?at=ranks:0", "?at=ranks:4&limit=0",
                           "?at=ranks:4&category=gpu", "?at=ranks:4&ranks=4"};
    for (size_t i = 0; i < sizeof bad_b / sizeof *bad_b; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks%s", exp, bad_b[i]);
        json_decref(get(h, path, 400));
    }
}

/* ---- cost formulas -------------------------------------------------------------- */

static void test_cost_formula(harness *h)
{
    char body[1024];
    const char *bad[] = {"T*ranks*(", "T*nodes/3600", "T**2", "", "max(T, 1)"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(body, sizeof body,
                 "{\"name\":\"bad-formula-%zu\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "%s,\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.02,"
                 "\"formula\":\"%s\"}}",
                 i, LAW_TRAINING_JSON, bad[i]);
        json_t *e = request_json(h, "POST", "/v1/experiments", body, 400);
        check(!strcmp(json_string_value(json_object_get(e, "field")) ?: "", "cost.formula"),
              "formula \"%s\" refused naming cost.formula", bad[i]);
        json_decref(e);
    }
    json_t *e = request_json(h, "POST", "/v1/experiments",
                        "{\"name\":\"formula-type\",\"parameters\":[\"ranks\"],\"scaling\":"
                        "\"weak\",\"training\":{\"train_samples\":1,\"batch_size\":1,"
                        "\"data_parallel\":\"ranks\"},\"cost\":{\"cores_per_rank\":8,"
                        "\"price_per_core_hour\":0.02,\"formula\":3}}",
                        400);
    json_decref(e);

    snprintf(body, sizeof body,
             "{\"name\":\"gpus-billed-apart\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s,"
             "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.02,"
             "\"formula\":\"T*ranks*(cores_per_rank*price_per_core_hour + 0.9)/3600\"}}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 8, 16, 32};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        double n_t = law_steps_per_epoch(xs[i]);
        law_callpath cps[3] = {{"gemm", "comp", 100 / n_t},
                     {"allreduce", "comm", 2 * log2(xs[i]) / n_t},
                     {"memcpy", "mem", 1 / n_t}};
        job = upload(h, exp, law_profile_doc(xs[i], 1, 2, 3, cps, 3, plain, NULL));
    }
    check(wait_job(h, job), "the refit job finishes");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/cost?ranks=24&epochs=3", exp);
    json_t *c = get(h, path, 200);
    double t = answer_num(c, "per_epoch.time_s.value");
    double money = answer_num(c, "per_epoch.cost.value");
    check(fabs(money - t * 24 * (8 * 0.02 + 0.9) / 3600) <= 1e-9 * money,
          "formula money %g = T·24·1.06/3600 = %g", money, t * 24 * 1.06 / 3600);
    check(fabs(answer_num(c, "per_epoch.core_hours.value") - t * 24 * 8 / 3600) <= 1e-9 * t,
          "core-hours still T·ranks·ρ/3600");
    check(fabs(answer_num(c, "total.cost.value") - 3 * money) <= 1e-9 * money, "3 epochs");
    check(fabs(t - (101 + 2 * log2(24))) <= 0.01 * t, "time %g", t);
    json_decref(c);
    snprintf(path, sizeof path, "/v1/experiments/%ld", exp);
    json_t *view = get(h, path, 200);
    check(json_is_string(json_object_get(json_object_get(view, "cost"), "formula")),
          "the experiment shows its formula");
    json_decref(view);
    const char *bad_q[] = {"", "?ranks=0", "?ranks=8&epochs=0", "?ranks=8&epochs=x",
                           "?ranks=8&nodes=1"};
    for (size_t i = 0; i < sizeof bad_q / sizeof *bad_q; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/cost%s", exp, bad_q[i]);
        json_decref(get(h, path, 400));
    }
}

/* ---- configurations ------------------------------------------------------------- */

static double strong_t(double x)
{
    return 7200 / x + 0.3 * x + 20;
}

/* The brute-force answer over the candidates 4..128 step 4 with the true T,
 * among those whose robust[x / 4 - 1] is set (NULL: all). */
static int brute_force(double max_time, double max_ch, int epochs, const char *objective,
                       const int *robust)
{
    int best = -1;
    double best_key = 0;
    for (int x = 4; x <= 128; x += 4) {
        double time = strong_t(x) * epochs, ch = strong_t(x) * x * 4 / 3600 * epochs;
        if (time > max_time || ch > max_ch || (robust && !robust[x / 4 - 1]))
            continue;
        double key = !strcmp(objective, "fastest") ? time : ch; /* efficient = cheapest here */
        if (best < 0 || key < best_key) {
            best = x;
            best_key = key;
        }
    }
    return best;
}

static void test_configurations(harness *h)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"strong-configs\",\"parameters\":[\"ranks\"],\"scaling\":\"strong\",%s,"
             "\"cost\":{\"cores_per_rank\":4,\"price_per_core_hour\":0.1}}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 8, 16, 32};
    long job = 0;
    rng = 99;
    for (int i = 0; i < 5; i++) {
        double n_t = law_steps_per_epoch(xs[i]);
        for (int rep = 1; rep <= 3; rep++) {
            /* 0.1% noise per part and repetition */
            law_callpath cps[3] = {{"gemm", "comp", 7200 / xs[i] / n_t * (1 + 0.001 * gauss())},
                         {"allreduce", "comm", 0.3 * xs[i] / n_t * (1 + 0.001 * gauss())},
                         {"memcpy", "mem", 20 / n_t * (1 + 0.001 * gauss())}};
            job = upload(h, exp, law_profile_doc(xs[i], rep, 2, 3, cps, 3, plain, NULL));
        }
    }
    check(wait_job(h, job), "the refit job finishes");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);

    /* for 10 epochs: a deadline half-way between T(24) and T(28), a budget half-way
     * between the core-hours of 100 and 104 ranks (ρ = 4) */
    double deadline = 10 * (strong_t(24) + strong_t(28)) / 2;
    double budget = 10 * 4.0 / 3600 * (strong_t(100) * 100 + strong_t(104) * 104) / 2;
    const char *objectives[] = {NULL, "efficient", "cheapest", "fastest"};
    for (size_t o = 0; o < sizeof objectives / sizeof *objectives; o++) {
        snprintf(body, sizeof body,
                 "{\"max_time_s\":%.17g,\"max_core_hours\":%.17g,\"epochs\":10,"
                 "\"candidates\":{\"ranks\":{\"min\":4,\"max\":128,\"step\":4}}%s%s%s}",
                 deadline, budget, objectives[o] ? ",\"objective\":\"" : "",
                 objectives[o] ? objectives[o] : "", objectives[o] ? "\"" : "");
        json_t *c = request_json(h, "POST", path, body, 200);
        /* the recommendation is chosen among the candidates feasible at their
         * intervals' upper ends when there is one: the budget, half-way
         * between 100 and 104 ranks, lies inside the core-hours' intervals
         * of the largest feasible ones; feasible_at_upper must agree with
         * the intervals the answer shows */
        int robust[32] = {0}, any = 0, consistent = 0;
        json_t *cl = json_object_get(c, "candidates");
        for (size_t i = 0; i < json_array_size(cl) && i < 32; i++) {
            json_t *cd = json_array_get(cl, i), *iv = json_object_get(cd, "interval");
            double th = json_number_value(json_array_get(json_object_get(iv, "time_s"), 1));
            double chh = json_number_value(json_array_get(json_object_get(iv, "core_hours"), 1));
            robust[i] = json_is_true(json_object_get(cd, "feasible_at_upper"));
            any |= robust[i];
            consistent += robust[i] == (json_is_true(json_object_get(cd, "feasible")) &&
                                        th <= deadline && chh <= budget);
        }
        check(consistent == 32, "feasible_at_upper as the intervals say for %d of 32", consistent);
        int want = brute_force(deadline, budget, 10, objectives[o] ? objectives[o] : "efficient",
                               any ? robust : NULL);
        json_t *rec = json_object_get(c, "recommended");
        check(want > 0 && answer_num(rec, "point.ranks") == want,
              "objective %s: recommended %g ranks, brute force %d (%s)",
              objectives[o] ? objectives[o] : "(strong scaling default)",
              answer_num(rec, "point.ranks"), want,
              json_string_value(json_object_get(rec, "reason")) ?: "null");
        json_t *cands = json_object_get(c, "candidates");
        check(json_array_size(cands) == 32 && answer_num(c, "searched") == 32, "32 candidates");
        int agree = 0;
        for (size_t i = 0; i < json_array_size(cands); i++) {
            json_t *cd = json_array_get(cands, i);
            double x = answer_num(cd, "point.ranks");
            double tt = strong_t(x) * 10, ch = strong_t(x) * x * 4 / 3600 * 10;
            int truth = tt <= deadline && ch <= budget;
            agree += json_is_true(json_object_get(cd, "feasible")) == truth;
            if (i == 0) {
                check(fabs(answer_num(cd, "time_s") - tt) <= 0.01 * tt &&
                          fabs(answer_num(cd, "cost") - answer_num(cd, "core_hours") * 0.1) <=
                              1e-9 * answer_num(cd, "cost") &&
                          json_is_array(json_object_get(json_object_get(cd, "interval"), "time_s")),
                      "a candidate's time, cost and interval");
            }
        }
        check(agree == 32, "feasibility as the truth's for %d of 32 candidates", agree);
        /* the Pareto front: ascending time, strictly falling cost */
        json_t *front = json_object_get(c, "pareto");
        int ordered = json_array_size(front) > 1;
        for (size_t i = 1; i < json_array_size(front); i++)
            ordered &= answer_num(json_array_get(front, i), "time_s") >
                           answer_num(json_array_get(front, i - 1), "time_s") &&
                       answer_num(json_array_get(front, i), "cost") <
                           answer_num(json_array_get(front, i - 1), "cost");
        check(ordered, "Pareto front by time with falling cost (%zu points)",
              json_array_size(front));
        json_decref(c);
    }

    /* limits nobody meets: the explicit answer */
    json_t *c = request_json(h, "POST", path,
                        "{\"max_time_s\":10,\"max_core_hours\":0.001,"
                        "\"candidates\":{\"ranks\":{\"values\":[2,4,8,16,32,64]}}}",
                        200);
    json_t *nf = json_object_get(c, "nothing_feasible");
    json_t *closest = json_object_get(nf, "closest");
    check(json_is_null(json_object_get(c, "recommended")) && answer_num(c, "feasible") == 0 &&
              json_is_string(json_object_get(nf, "detail")) && json_array_size(closest) == 5,
          "nothing feasible: null, a detail and 5 closest candidates");
    for (size_t i = 1; i < json_array_size(closest); i++)
        check(answer_num(json_array_get(closest, i), "violation") >=
                  answer_num(json_array_get(closest, i - 1), "violation"),
              "closest by violation");
    check(answer_num(json_array_get(closest, 0), "violation") > 1, "violations above 1");
    json_decref(c);

    const char *bad[] = {
        "{}",
        "{\"candidates\":{\"nodes\":{\"values\":[2]}}}",
        "{\"candidates\":{\"ranks\":{\"min\":2,\"max\":1}}}",
        "{\"candidates\":{\"ranks\":{\"min\":1,\"max\":100000,\"step\":1}}}",
        "{\"candidates\":{\"ranks\":{\"values\":[]}}}",
        "{\"candidates\":{\"ranks\":{\"values\":[2]}},\"objective\":\"greenest\"}",
        "{\"candidates\":{\"ranks\":{\"values\":[2]}},\"max_time_s\":-1}",
        "{\"candidates\":{\"ranks\":{\"values\":[2]}},\"epochs\":0}",
        "{\"candidates\":{\"ranks\":{\"values\":[2]}},\"budget\":3}",
        "{\"candidates\":{\"ranks\":{\"min\":2,\"max\":8,\"step\":2,\"factor\":2}}}",
        "[1]",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        json_decref(request_json(h, "POST", path, bad[i], 400));
    json_decref(request_json(h, "POST", "/v1/experiments/99999/configurations",
                        "{\"candidates\":{\"ranks\":{\"values\":[2]}}}", 404));
}

/* A two-parameter experiment: the product of the candidate ranges. */
static double grid_part(int rank, int k, const law_callpath *c, void *arg)
{
    (void)rank;
    const double *pt = arg;
    /* comp 1000/ranks·batch/32, comm log2(ranks), mem 1 */
    return k == 0 ? 1000 / pt[0] * pt[1] / 32 / c->time : k == 1 ? log2(pt[0]) / c->time
                                                                 : 1 / c->time;
}

static void test_two_parameters(harness *h)
{
    long exp = request_experiment(h, "{\"name\":\"grid\",\"parameters\":[\"ranks\",\"batch\"],"
                         "\"scaling\":\"strong\",\"training\":{\"train_samples\":51200,"
                         "\"batch_size\":256,\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                         "\"cost\":{\"cores_per_rank\":2,\"price_per_core_hour\":1}}");
    const double rs[5] = {2, 4, 8, 16, 32}, bs[5] = {16, 32, 64, 128, 256};
    long job = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            double pt[2] = {rs[i], bs[j]};
            double n_t = floor(51200 / rs[i] / 256);
            law_callpath cps[3] = {
                {"gemm", "comp", n_t}, {"allreduce", "comm", n_t}, {"memcpy", "mem", n_t}};
            json_t *p = law_profile_doc(rs[i], 1, 2, 2, cps, 3, grid_part, pt);
            json_object_set_new(json_object_get(p, "point"), "batch", json_real(bs[j]));
            job = upload(h, exp, p);
        }
    check(wait_job(h, job), "the refit job finishes");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    json_t *c = request_json(h, "POST", path,
                        "{\"max_time_s\":1000,\"objective\":\"fastest\",\"candidates\":{"
                        "\"ranks\":{\"min\":2,\"max\":64,\"factor\":2},"
                        "\"batch\":{\"values\":[16,32,64]}}}",
                        200);
    check(answer_num(c, "searched") == 18 &&
              json_array_size(json_object_get(c, "candidates")) == 18,
          "6 x 3 candidates searched");
    json_t *rec = json_object_get(c, "recommended");
    check(answer_num(rec, "point.ranks") == 64 && answer_num(rec, "point.batch") == 16,
          "fastest: most ranks, smallest batch (%g, %g)", answer_num(rec, "point.ranks"),
          answer_num(rec, "point.batch"));
    json_decref(c);
    /* at batch 100, never measured, P_1 is (2, 100) predicted (Extra-Deep's T_1 =
     * F(x_1,1)), not the first measured coordinate (2, 16) of another batch:
     * T = 31.25·b/r + log2(r) + 1: T(2,100) = 1564.5, T(8,100) = 394.625;
     * Δ = (1564.5 − 394.625)/15.645 = 74.78%, E = 1564.5·2/(394.625·8) = 0.991
     * (against (2,16)'s 252 s: −56.6% and 0.16) */
    c = request_json(h, "POST", path,
                     "{\"objective\":\"fastest\",\"candidates\":{\"ranks\":{\"values\":[8]},"
                     "\"batch\":{\"values\":[100]}}}",
                     200);
    double e = answer_num(json_object_get(c, "recommended"), "efficiency");
    check(fabs(e - 1564.5 * 2 / (394.625 * 8)) <= 0.01, "efficiency at (8, 100): %g, 0.991", e);
    json_decref(c);
    char spath[160];
    snprintf(spath, sizeof spath, "/v1/experiments/%ld/scaling?values=2,8&batch=100", exp);
    json_t *sc = get(h, spath, 200);
    json_t *p8 = json_array_get(json_object_get(sc, "points"), 1);
    check(fabs(answer_num(p8, "speedup_pct.value") - (1564.5 - 394.625) / 15.645) <= 0.5 &&
              fabs(answer_num(p8, "efficiency.value") - 1564.5 * 2 / (394.625 * 8)) <= 0.01 &&
              fabs(answer_num(json_array_get(json_object_get(sc, "points"), 0),
                              "speedup_pct.value")) <= 1e-9 &&
              answer_num(sc, "baseline.point.batch") == 100 &&
              fabs(answer_num(sc, "baseline.epoch") - 1564.5) <= 0.01 * 1564.5 &&
              json_is_false(json_object_get(json_object_get(sc, "baseline"), "measured")),
          "scaling at batch 100: Δ(8) %g (74.78), E %g, against P_1 (2, %g) = %g s",
          answer_num(p8, "speedup_pct.value"), answer_num(p8, "efficiency.value"),
          answer_num(sc, "baseline.point.batch"), answer_num(sc, "baseline.epoch"));
    json_decref(sc);
    json_decref(request_json(h, "POST", path,
                        "{\"candidates\":{\"ranks\":{\"min\":1,\"max\":200},"
                        "\"batch\":{\"min\":1,\"max\":100}}}",
                        400));
    json_decref(
        request_json(h, "POST", path, "{\"candidates\":{\"ranks\":{\"values\":[2]}}}", 400));
}

/* ---- imbalance -------------------------------------------------------------------- */

typedef struct straggle {
    double slow;   /* rank 0 of callpath 0 is (1 + slow) times slower */
    double sync;   /* per-step value of callpath 1 on every rank */
} straggle;

static double straggler_value(int rank, int k, const law_callpath *c, void *arg)
{
    const straggle *s = arg;
    if (k == 0)
        return rank == 0 ? c->time * (1 + s->slow) : c->time;
    if (k == 1 && s->sync > 0)
        return s->sync;
    return c->time;
}

static void test_straggler(harness *h)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"straggler\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 8, 12, 16};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        for (int rep = 1; rep <= 3; rep++) {
            law_callpath cps[3] = {{"conv_slow_on_rank0", "comp", 0.2},
                         {"allreduce", "comm", 0.05 * log2(xs[i])},
                         {"memcpy", "mem", 0.01}};
            straggle s = {0.3, 0};
            job = upload(h, exp,
                         law_profile_doc(xs[i], rep, (int)xs[i], 2, cps, 3, straggler_value, &s));
        }
    }
    check(wait_job(h, job), "the refit job finishes");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance?at=ranks:64", exp);
    json_t *d = get(h, path, 200);
    json_t *first = json_array_get(json_object_get(d, "callpaths"), 0);
    check(!strcmp(json_string_value(json_object_get(first, "callpath")) ?: "",
                  "conv_slow_on_rank0"),
          "the straggler's callpath first");
    json_t *series = json_object_get(first, "lif");
    check(json_array_size(series) == 5, "its LIF at 5 points");
    for (size_t i = 0; i < json_array_size(series); i++) {
        json_t *s = json_array_get(series, i);
        double n = answer_num(s, "point.ranks"), want = 1.3 / (1 + 0.3 / n);
        check(fabs(answer_num(s, "lif") - want) <= 1e-9 &&
                  answer_num(s, "min") == answer_num(s, "lif") &&
                  answer_num(s, "max") == answer_num(s, "lif") && answer_num(s, "repetitions") == 3,
              "LIF at %g ranks: %.12g, 1.3/(1+0.3/N) = %.12g", n, answer_num(s, "lif"), want);
    }
    json_t *second = json_array_get(json_object_get(d, "callpaths"), 1);
    check(fabs(answer_num(second, "lif_now") - 1) <= 1e-12, "balanced callpaths have LIF 1");
    /* the comp category is that callpath alone */
    json_t *pts = json_object_get(d, "points");
    for (size_t i = 0; i < json_array_size(pts); i++) {
        json_t *p = json_array_get(pts, i);
        double n = answer_num(p, "ranks");
        check(fabs(answer_num(p, "comp.lif") - 1.3 / (1 + 0.3 / n)) <= 1e-9 &&
                  answer_num(p, "step.lif") > 1 &&
                  answer_num(p, "step.lif") < answer_num(p, "comp.lif"),
              "category and step LIF at %g", n);
    }
    check(json_is_string(json_object_get(json_object_get(json_object_get(d, "models"), "comp"),
                                         "function")),
          "a PMNF model of the comp LIF");
    double at64 =
        answer_num(json_object_get(json_object_get(d, "models"), "comp"), "at_point.value");
    check(fabs(at64 - 1.3 / (1 + 0.3 / 64)) <= 0.02, "LIF model at 64: %g vs %g", at64,
          1.3 / (1 + 0.3 / 64));
    check(json_is_true(json_object_get(json_object_get(d, "extrapolation"), "beyond_4x")) == 0,
          "64 is within 4x of 16");
    json_decref(d);
    const char *bad[] = {"?lif=gpu", "?limit=0", "?at=ranks", "?metric=nope", "?ranks=3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance%s", exp, bad[i]);
        json_decref(get(h, path, 400));
    }
}

/* A run's duration is its slowest rank's (paper 003): three repetitions at
 * each of five rank counts, callpaths gemm 0.1, allreduce 0.03 and memcpy
 * 0.01 s per step on every rank, except that in repetition r one rank's gemm
 * (rank r mod n) takes f_r = 1.5, 1.2, 1.8 times as long. Per repetition
 * the step is that rank's 0.1·f_r + 0.04; the median over the repetitions
 * f = 1.5: the epoch n_t·0.19 (the median over ranks of each callpath gave
 * n_t·0.14, and n_t·(0.05·2.5 + 0.04) at 2 ranks). Each repetition's value
 * is its own slowest rank's; the per-rank values stay medians over the
 * repetitions of each rank's own sums, and the comp part the callpaths'. */
static double slow_rank_value(int rank, int k, const law_callpath *c, void *arg)
{
    const int *rep_n = arg; /* repetition, ranks */
    static const double f[3] = {1.5, 1.2, 1.8};
    if (k == 0 && rank == (rep_n[0] - 1) % rep_n[1])
        return c->time * f[rep_n[0] - 1];
    return c->time;
}

static void test_slowest_rank(harness *h)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"slowest-rank\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 8, 12, 16};
    long job = 0;
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++) {
            law_callpath cps[3] = {{"gemm", "comp", 0.1}, {"allreduce", "comm", 0.03},
                         {"memcpy", "mem", 0.01}};
            int rep_n[2] = {rep, (int)xs[i]};
            job = upload(
                h, exp, law_profile_doc(xs[i], rep, (int)xs[i], 2, cps, 3, slow_rank_value, rep_n));
        }
    check(wait_job(h, job), "the refit job finishes");
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?level=application&metric=time"
             "&name=epoch&phase=epoch&limit=100", exp);
    json_t *d = get(h, path, 200);
    json_t *list = json_object_get(d, "measurements");
    check(json_array_size(list) == 5, "five epoch measurements: %zu", json_array_size(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *m = json_array_get(list, i);
        double n = answer_num(m, "point.ranks"), n_t = law_steps_per_epoch(n);
        json_t *reps = json_object_get(m, "repetitions"), *ranks = json_object_get(m, "ranks");
        check(check_close(answer_num(m, "value"), n_t * 0.19, 1e-9, 0),
              "epoch at %g ranks: %.12g, want the slowest rank's n_t·0.19 = %.12g", n,
              answer_num(m, "value"), n_t * 0.19);
        static const double f[3] = {1.5, 1.2, 1.8};
        int reps_ok = json_array_size(reps) == 3;
        for (int r = 0; r < 3 && reps_ok; r++)
            reps_ok = check_close(json_number_value(json_array_get(reps, (size_t)r)),
                                  n_t * (0.1 * f[r] + 0.04), 1e-9, 0);
        check(reps_ok, "at %g ranks each repetition is its slowest rank's n_t·(0.1·f_r + 0.04)",
              n);
        /* rank 0 is slow in repetition 1 only (at 2 ranks in 1 and 3): its
         * median over the repetitions is the balanced n_t·0.14 except at 2 */
        double r0 = json_number_value(json_object_get(json_array_get(ranks, 0), "value"));
        double want0 = n == 2 ? n_t * (0.1 * 1.5 + 0.04) : n_t * 0.14;
        check(json_array_size(ranks) == (size_t)n && check_close(r0, want0, 1e-9, 0),
              "at %g ranks: %zu per-rank values kept, rank 0's %.12g (want %.12g)", n,
              json_array_size(ranks), r0, want0);
    }
    json_decref(d);
    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?level=application&metric=time"
             "&name=comp&phase=epoch&limit=100", exp);
    d = get(h, path, 200);
    list = json_object_get(d, "measurements");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *m = json_array_get(list, i);
        double n = answer_num(m, "point.ranks"), n_t = law_steps_per_epoch(n);
        double want = n == 2 ? n_t * 0.05 * 2.5 : n_t * 0.1;
        check(check_close(answer_num(m, "value"), want, 1e-9, 0),
              "comp at %g ranks stays the median over ranks: %.12g, want %.12g", n,
              answer_num(m, "value"), want);
    }
    json_decref(d);
}

static void test_regression(harness *h)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"lif-regression\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body);
    const double xs[5] = {2, 4, 8, 12, 16};
    const double b0 = 40, b1 = 1.5, b2 = 60; /* T = b0 + b1·ranks + b2·LIF */
    long job = 0;
    rng = 5;
    for (int i = 0; i < 5; i++) {
        double n = xs[i], n_t = law_steps_per_epoch(n);
        for (int rep = 1; rep <= 5; rep++) {
            double slow = 0.05 + 0.6 * uniform();
            double lif = (1 + slow) / (1 + slow / n);
            double t = (b0 + b1 * n + b2 * lif) * (1 + 0.0002 * gauss());
            /* the service's epoch: n_t · the slowest rank's sum (rank 0's,
             * whose kernel takes 1 + slow times the others') */
            double kernel = 0.1, mem = 0.02;
            straggle s = {slow, t / n_t - kernel * (1 + slow) - mem};
            law_callpath cps[3] = {
                {"kernel", "comp", kernel}, {"sync", "comm", 0}, {"memcpy", "mem", mem}};
            job = upload(h, exp, law_profile_doc(n, rep, (int)n, 2, cps, 3, straggler_value, &s));
        }
    }
    check(wait_job(h, job), "the refit job finishes");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance?lif=comp", exp);
    json_t *d = get(h, path, 200);
    json_t *reg = json_object_get(d, "regression");
    json_t *coefs = json_object_get(reg, "coefficients");
    double got[3];
    for (int i = 0; i < 3; i++)
        got[i] = answer_num(json_array_get(coefs, (size_t)i), "value");
    check(answer_num(reg, "n") == 25, "25 observations (5 points x 5 repetitions): %g",
          answer_num(reg, "n"));
    check(fabs(got[0] - b0) <= 0.01 * b0 && fabs(got[1] - b1) <= 0.01 * b1 &&
              fabs(got[2] - b2) <= 0.01 * b2,
          "planted b = (%g, %g, %g), recovered (%g, %g, %g)", b0, b1, b2, got[0], got[1], got[2]);
    check(answer_num(reg, "r2") > 0.99, "R² %g", answer_num(reg, "r2"));
    json_t *p0 = json_array_get(json_object_get(d, "points"), 0);
    check(answer_num(p0, "comp.min") < answer_num(p0, "comp.lif") &&
              answer_num(p0, "comp.lif") < answer_num(p0, "comp.max"),
          "the spread over repetitions");
    json_decref(d);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_case_study(h);
    test_case_study_noisy(h);
    test_scaling_and_bottlenecks(h);
    test_cost_formula(h);
    test_configurations(h);
    test_two_parameters(h);
    test_straggler(h);
    test_slowest_rank(h);
    test_regression(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
