/*
 * test_api_point_limits.c — what the answers at a point a caller names say
 * when the point is one no run can be made at, or one where the models
 * overflow a double, end to end over real HTTP against a real PostgreSQL,
 * on profiles generated from known laws:
 *
 *  - a rank count that is not a whole number (ranks=10.125): cost and
 *    speedups answer it as a what-if with the coded warning ranks_not_whole,
 *    scaling with the number of such points on its axis; advice never
 *    recommends a run there (left out, counted, said), and refuses, before
 *    queuing, candidates none of which can be allocated;
 *  - a point where a model overflows (ranks=1e308 in 3·ranks, ranks=1e-308
 *    in 2000/ranks, core-hours of 1e200 ranks): predict, scaling,
 *    speedups, bottlenecks and configurations answer 400 naming the field
 *    the point came from and saying the prediction is not finite, never a
 *    200 of nulls or missing numbers; where the models stay finite
 *    (2000/x + 20·log2 x at 1e308) predict still answers;
 *  - the same for the load imbalance's LIF models (imbalance?at=), on a
 *    LIF growing as 1 + 0.0005·x².
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

/* Strong: T(x) = 2000/x + 20·log2(x) + 1 s per epoch; weak: T(x) = 100 +
 * 3x + 0.5; both measured at 2..32 ranks (2 ranks in each profile), three
 * repetitions 1% apart. */
static long experiment(harness *h, int strong)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"%s\",%s,"
             "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.02}}",
             strong ? "strong-law" : "weak-law", strong ? "strong" : "weak", LAW_TRAINING_JSON);
    long exp = request_experiment(h, body), job = 0;
    const double xs[5] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++) {
            double n = 1 + 0.01 * (rep - 2);
            job = strong ? law_upload_epoch(h, exp, xs[i], rep, 2, 2000 / xs[i], 20 * log2(xs[i]),
                                            1, n, LAW_ALIKE)
                         : law_upload_epoch(h, exp, xs[i], rep, 2, 100, 3 * xs[i], 0.5, n,
                                            LAW_ALIKE);
        }
    check(harness_wait_job(h, job, 60), "the refit job finishes");
    return exp;
}

/* method /v1/experiments/{exp}/{query} [body] answers 400 naming field,
 * its detail saying want. */
static void refused(harness *h, const char *method, long exp, const char *query,
                    const char *body, const char *field, const char *want)
{
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, query);
    int status;
    json_t *doc = request_json_status(h, method, path, body, &status);
    const char *detail = json_string_value(json_object_get(doc, "detail")) ?: "";
    check(status == 400 &&
              !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", field) &&
              strstr(detail, want) != NULL && strlen(detail) < 400,
          "%s %s %s: 400 naming %s, \"%s\": %d %.300s", method, path, body ? body : "", field,
          want, status, detail);
    json_decref(doc);
}

/* GET /v1/experiments/{exp}/{query}: 200, with the warning ranks_not_whole
 * at 10.125 ranks (want 1) or without it (want 0); the answer. */
static json_t *not_whole_at(harness *h, long exp, const char *query, int want)
{
    char path[200];
    snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, query);
    json_t *a = request_json(h, "GET", path, NULL, 200);
    json_t *w = warning_find(json_object_get(a, "warnings"), "ranks_not_whole");
    check(want ? w && json_number_value(json_object_get(w, "ranks")) == 10.125 : !w,
          "%s: %s", query, want ? "ranks_not_whole at 10.125 ranks" : "no ranks_not_whole");
    return a;
}

/* cost at 10.125 ranks: answered (a what-if), with ranks_not_whole naming
 * the count; its core-hours are T·10.125·8/3600 all the same. At 10 ranks
 * no such warning. */
static void test_cost_not_whole(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/cost?ranks=10.125", exp);
    json_t *a = request_json(h, "GET", path, NULL, 200);
    json_t *w = warning_find(json_object_get(a, "warnings"), "ranks_not_whole");
    json_t *pe = json_object_get(a, "per_epoch");
    double t = json_number_value(json_object_get(json_object_get(pe, "time_s"), "value"));
    double ch = json_number_value(json_object_get(json_object_get(pe, "core_hours"), "value"));
    check(fabs(ch - t * 10.125 * 8 / 3600) <= 1e-9 * ch, "premise: the what-if's core-hours %g",
          ch);
    const char *msg = json_string_value(json_object_get(w, "message")) ?: "";
    check(w && json_number_value(json_object_get(w, "ranks")) == 10.125 &&
              json_number_value(json_object_get(json_object_get(w, "point"), "ranks")) == 10.125 &&
              strstr(msg, "10.125 ranks") && strstr(msg, "what-if"),
          "cost at 10.125 ranks says ranks_not_whole: %s", msg);
    json_decref(a);
    json_decref(not_whole_at(h, exp, "cost?ranks=10", 0));
    /* speedups at one point, scaling along the axis: the same warning, the
     * axis's with how many of its points cannot be allocated and the first */
    json_decref(not_whole_at(h, exp, "speedups?ranks=10.125", 1));
    json_decref(not_whole_at(h, exp, "speedups?ranks=16", 0));
    a = not_whole_at(h, exp, "scaling?values=4,10.125,16,20.5", 1);
    w = warning_find(json_object_get(a, "warnings"), "ranks_not_whole");
    check(json_integer_value(json_object_get(w, "count")) == 2 &&
              json_array_size(json_object_get(a, "points")) == 4,
          "scaling over 4, 10.125, 16, 20.5: 2 points not whole, 4 answered (count %lld)",
          (long long)json_integer_value(json_object_get(w, "count")));
    json_decref(a);
    json_decref(not_whole_at(h, exp, "scaling?values=4,16,64", 0));
}

/* advice over candidates of which two are fractional: whatever it
 * recommends is a whole rank count, and the answer says two candidates
 * were left out (the first at 10.125); only fractional candidates: 400
 * naming candidates.ranks, also with ?job=always (before queuing). */
static void test_advice_not_whole(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    json_t *a = request_json(h, "POST", path,
                             "{\"target\":{\"ranks\":64},\"budget_core_hours\":100,"
                             "\"grid_core_hours\":1000,"
                             "\"candidates\":{\"ranks\":[2,4,10.125,22.78125,48]}}",
                             200);
    json_t *recs = json_object_get(a, "recommendations");
    int fractional = 0;
    for (size_t i = 0; i < json_array_size(recs); i++) {
        double r = json_number_value(
            json_object_get(json_object_get(json_array_get(recs, i), "point"), "ranks"));
        fractional += r != floor(r);
    }
    json_t *w = warning_find(json_object_get(a, "warnings"), "ranks_not_whole");
    check(json_array_size(recs) > 0 && fractional == 0,
          "advice recommends runs, none at a fractional rank count (%zu, %d fractional)",
          json_array_size(recs), fractional);
    check(w && json_integer_value(json_object_get(w, "candidates")) == 2 &&
              json_number_value(json_object_get(json_object_get(w, "point"), "ranks")) == 10.125,
          "the answer says 2 candidates were left out, the first at 10.125");
    json_decref(a);
    const char *body = "{\"target\":{\"ranks\":64},\"budget_core_hours\":100,"
                       "\"candidates\":{\"ranks\":[10.125,22.78125]}}";
    refused(h, "POST", exp, "advice", body, "candidates.ranks", "no candidate can be allocated");
    refused(h, "POST", exp, "advice?job=always", body, "candidates.ranks",
            "no candidate can be allocated");
}

/* Weak, T = 100 + 3x: at 1e308 the epoch overflows (3e308) in every
 * answer; at 1e200 T is finite but its core-hours T·x·8/3600 are not.
 * Strong, 2000/x: at 1e-308 the epoch overflows; at 1e308 it is finite
 * (20·log2 x ≈ 20,464 s) and predict answers it, but the ideal speedup
 * x_k/x_1 and the core-hours overflow. */
static void test_overflow(harness *h, long weak, long strong)
{
    char path[200];
    const long exps[2] = {weak, strong};
    for (int e = 0; e < 2; e++) {
        long x = exps[e];
        refused(h, "GET", x, "scaling?values=4,1e308", NULL, "values", "not finite");
        refused(h, "GET", x, "speedups?ranks=1e308", NULL, "ranks", "not finite");
        refused(h, "POST", x, "configurations",
                "{\"candidates\":{\"ranks\":{\"values\":[4,1e308]}}}",
                "candidates.ranks", "not finite");
        refused(h, "POST", x, "configurations?job=always",
                "{\"candidates\":{\"ranks\":{\"values\":[4,1e308]}}}",
                "candidates.ranks", "not finite");
        /* near the data, each answers */
        const char *ok[] = {"predict?ranks=64", "scaling?values=4,64", "speedups?ranks=64",
                            "bottlenecks?at=ranks:64", NULL};
        for (int i = 0; ok[i]; i++) {
            snprintf(path, sizeof path, "/v1/experiments/%ld/%s", x, ok[i]);
            json_decref(request_json(h, "GET", path, NULL, 200));
        }
    }
    refused(h, "GET", weak, "predict?ranks=1e308", NULL, "ranks",
            "the model of the epoch time gives inf");
    refused(h, "GET", weak, "bottlenecks?at=ranks:1e308", NULL, "at", "not finite");
    refused(h, "POST", weak, "configurations",
            "{\"candidates\":{\"ranks\":{\"values\":[1e200]}}}",
            "candidates.ranks", "core-hours");
    refused(h, "GET", strong, "predict?ranks=1e-308", NULL, "ranks",
            "the model of the epoch time gives inf");
    refused(h, "GET", strong, "scaling?values=1e308", NULL, "values", "ideal speedup");
    /* finite where the models are: an answer, every number in it */
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=1e308", strong);
    json_t *a = request_json(h, "GET", path, NULL, 200);
    double t = json_number_value(json_object_get(json_object_get(a, "epoch"), "time"));
    check(fabs(t - (20 * 1023.0 + 1)) <= 0.02 * t, "strong at 1e308: T ≈ 20·log2(1e308) = %g",
          t);
    json_decref(a);
}

/* The load imbalance at a far point: rank 1 runs gemm f(x) times as long
 * as rank 0, f = L/(2 - L) so that the comp LIF (max/mean of two ranks) is
 * L(x) = 1 + 0.0005·x² exactly (1.002 at 2, 1.512 at 32), which overflows
 * at ranks = 1e308 (5e612). imbalance?at=ranks:1e308 is a 400 naming `at`
 * (it answered 200 with a null lif_at), and at 64 an answer whose comp LIF
 * is the law's, 1 + 0.0005·64² = 3.048 (a growing LIF extrapolated past 2,
 * which two ranks cannot reach: the law's, not a bound). */
static void test_imbalance_far(harness *h)
{
    long exp = request_experiment(h, "{\"name\":\"lif-law\",\"parameters\":[\"ranks\"],"
                                     "\"scaling\":\"weak\"," LAW_TRAINING_JSON "}");
    const double xs[5] = {2, 4, 8, 16, 32};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        double lif = 1 + 0.0005 * xs[i] * xs[i];
        law_slow slow = {1, 0, lif / (2 - lif)};
        for (int rep = 1; rep <= 3; rep++)
            job = law_upload_epoch(h, exp, xs[i], rep, 2, 100, 3 * xs[i], 0.5,
                                   1 + 0.01 * (rep - 2), slow);
    }
    check(harness_wait_job(h, job, 60), "the refit job finishes");
    char path[200];
    refused(h, "GET", exp, "imbalance?at=ranks:1e308", NULL, "at", "not finite");
    snprintf(path, sizeof path, "/v1/experiments/%ld/imbalance?at=ranks:64", exp);
    json_t *a = request_json(h, "GET", path, NULL, 200);
    const json_t *comp = json_object_get(json_object_get(json_object_get(a, "models"), "comp"),
                                         "at_point");
    double v = json_number_value(json_object_get(comp, "value"));
    check(fabs(v - 3.048) <= 0.01 * 3.048, "the comp LIF at 64: %g (the law's 3.048)", v);
    json_decref(a);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long strong = experiment(h, 1), weak = experiment(h, 0);
    test_cost_not_whole(h, strong);
    test_advice_not_whole(h, weak);
    test_overflow(h, weak, strong);
    test_imbalance_far(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
