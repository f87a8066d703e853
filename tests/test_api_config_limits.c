/*
 * test_api_config_limits.c — what a scheduler acting on a cost or
 * configuration answer needs to read from it, end to end over real HTTP
 * against a real PostgreSQL, on profiles generated from known laws:
 *
 *  - a limit inside a candidate's 95% interval: the candidate says so
 *    (limit_within_interval, naming the limit and the interval) and whether
 *    it is feasible at the interval's upper end too (feasible_at_upper), and
 *    the recommendation prefers, among the feasible candidates, those
 *    feasible at the upper end;
 *  - candidates whose rank count is not a whole number (a factor of 1.5)
 *    are left out and counted, and a search where every candidate would be
 *    is refused naming the candidates' field;
 *  - cost at a point where the prediction overflows (ranks=1e308) is a 400
 *    naming the parameter, not a 409 saying there is no model;
 *  - a refusal about a number of 1e300 prints it short.
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

/* The candidate of a configurations answer at ranks x (NULL when none). */
static json_t *candidate_at(const json_t *answer, double x)
{
    json_t *cands = json_object_get(answer, "candidates");
    for (size_t i = 0; i < json_array_size(cands); i++) {
        json_t *c = json_array_get(cands, i);
        if (json_number_value(json_object_get(json_object_get(c, "point"), "ranks")) == x)
            return c;
    }
    return NULL;
}

static double time_end(const json_t *c, size_t end)
{
    json_t *iv = json_object_get(json_object_get(c, "interval"), "time_s");
    return json_is_number(json_array_get(iv, end)) ? json_number_value(json_array_get(iv, end))
                                                   : NAN;
}

static double rec_ranks(const json_t *answer)
{
    return json_number_value(
        json_object_get(json_object_get(json_object_get(answer, "recommended"), "point"), "ranks"));
}

/* Strong scaling, T(x) = 2000/x + 20·log2(x) + 1 s per epoch (1% noise
 * between three repetitions, so each prediction has an interval), measured
 * at 2..32 ranks: T(4) ≈ 541, T(8) ≈ 311, T(16) ≈ 206. Core-hours T·x·8/3600
 * grow with x, so the cheapest candidate under a deadline is the smallest
 * one that meets it. A deadline between T(8) and its interval's upper end
 * makes 8 feasible by the point estimate only: it carries
 * limit_within_interval (the limit max_time_s and 8's interval) and
 * feasible_at_upper false; 16 is feasible at its upper end, and the
 * recommendation (cheapest) is 16, not 8, with 8 still counted feasible. */
static long strong_experiment(harness *h)
{
    char body[1024];
    snprintf(body, sizeof body,
             "{\"name\":\"deadline-inside\",\"parameters\":[\"ranks\"],\"scaling\":\"strong\",%s,"
             "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.02}}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body), job = 0;
    const double xs[5] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++)
            job = law_upload_epoch(h, exp, xs[i], rep, 2, 2000 / xs[i], 20 * log2(xs[i]), 1,
                                   1 + 0.01 * (rep - 2), LAW_ALIKE);
    check(harness_wait_job(h, job, 60), "the refit job finishes");
    return exp;
}

static void test_limit_within_interval(harness *h, long exp)
{
    char path[160], req[400];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    json_t *all = request_json(h, "POST", path,
                               "{\"candidates\":{\"ranks\":{\"values\":[4,8,16]}}}", 200);
    json_t *c8 = candidate_at(all, 8), *c16 = candidate_at(all, 16);
    double t8 = json_number_value(json_object_get(c8, "time_s"));
    double lo8 = time_end(c8, 0), hi8 = time_end(c8, 1), hi16 = time_end(c16, 1);
    check(fabs(t8 - 311) <= 0.02 * 311 && lo8 < t8 && t8 < hi8 && hi16 < t8,
          "premise: T(8) = %g in [%g, %g] (≈ 311), T(16)'s upper end %g below it", t8, lo8, hi8,
          hi16);
    double deadline = (t8 + hi8) / 2;
    json_decref(all);

    snprintf(req, sizeof req,
             "{\"max_time_s\":%.17g,\"objective\":\"cheapest\","
             "\"candidates\":{\"ranks\":{\"values\":[4,8,16]}}}",
             deadline);
    json_t *a = request_json(h, "POST", path, req, 200);
    c8 = candidate_at(a, 8);
    c16 = candidate_at(a, 16);
    json_t *w8 = json_object_get(c8, "warnings");
    json_t *within = NULL;
    for (size_t i = 0; i < json_array_size(w8); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(w8, i), "code")) ?: "",
                    "limit_within_interval"))
            within = json_array_get(w8, i);
    check(json_is_true(json_object_get(c8, "feasible")) &&
              json_is_false(json_object_get(c8, "feasible_at_upper")),
          "8: feasible by its point estimate, not at its interval's upper end");
    check(within &&
              !strcmp(json_string_value(json_object_get(within, "field")) ?: "", "max_time_s") &&
              json_number_value(json_object_get(within, "limit")) == deadline &&
              fabs(json_number_value(json_array_get(json_object_get(within, "interval"), 1)) -
                   hi8) <= 1e-9 * hi8,
          "8 carries limit_within_interval naming max_time_s = %g and [%g, %g]", deadline, lo8,
          hi8);
    check(json_is_true(json_object_get(c16, "feasible_at_upper")) &&
              !warning_has_code(json_object_get(c16, "warnings"), "limit_within_interval"),
          "16: feasible at its upper end, no warning");
    check(rec_ranks(a) == 16 && json_integer_value(json_object_get(a, "feasible")) == 2 &&
              json_integer_value(json_object_get(a, "feasible_at_upper")) == 1,
          "cheapest: 16 (feasible at the upper end), not 8: %g", rec_ranks(a));
    const char *reason =
        json_string_value(json_object_get(json_object_get(a, "recommended"), "reason")) ?: "";
    check(strstr(reason, "upper end") != NULL, "the reason says so: %s", reason);
    json_decref(a);

    /* with 8 alone, it is recommended, and says its limit is inside the interval */
    snprintf(req, sizeof req,
             "{\"max_time_s\":%.17g,\"objective\":\"cheapest\","
             "\"candidates\":{\"ranks\":{\"values\":[4,8]}}}",
             deadline);
    a = request_json(h, "POST", path, req, 200);
    check(rec_ranks(a) == 8 &&
              warning_has_code(json_object_get(json_object_get(a, "recommended"), "warnings"),
                               "limit_within_interval"),
          "no candidate feasible at its upper end: 8, with its warning");
    json_decref(a);
}

/* factor 1.5 from 2 to 32: 2, 3, 4.5, 6.75, 10.125, 15.1875, 22.78125: only
 * 2 and 3 ranks can be allocated; the other five are left out and counted.
 * Values that are all fractional are refused naming candidates.ranks. */
static void test_whole_ranks(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    json_t *a = request_json(h, "POST", path,
                             "{\"candidates\":{\"ranks\":{\"min\":2,\"max\":32,\"factor\":1.5}}}",
                             200);
    json_t *cands = json_object_get(a, "candidates");
    int fractional = 0;
    for (size_t i = 0; i < json_array_size(cands); i++) {
        double r = json_number_value(json_object_get(json_array_get(cands, i), "ranks"));
        fractional += r != floor(r);
    }
    check(json_array_size(cands) == 2 && !fractional &&
              json_integer_value(json_object_get(a, "searched")) == 2 &&
              json_integer_value(json_object_get(a, "left_out")) == 5,
          "factor 1.5: 2 and 3 searched, 5 left out (%zu candidates, %d fractional, recommended "
          "%g)",
          json_array_size(cands), fractional, rec_ranks(a));
    check(rec_ranks(a) == floor(rec_ranks(a)) &&
              warning_has_code(json_object_get(a, "warnings"), "ranks_not_whole"),
          "a whole recommendation, and the answer says why candidates are missing");
    json_decref(a);

    harness_response r;
    const char *body = "{\"candidates\":{\"ranks\":{\"values\":[2.5,4.5]}}}";
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    json_t *doc = harness_json(&r);
    check(r.status == 400 &&
              !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "candidates.ranks"),
          "every candidate fractional: 400 naming candidates.ranks: %d %.300s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    /* refused at the request, not queued to fail in a job worker */
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations?job=always", exp);
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    check(r.status == 400, "?job=always: 400 before queuing, got %d", r.status);
    harness_response_free(&r);
}

/* Weak scaling, T(x) = 100 + 3x s per epoch: at ranks=1e308 the time
 * model's value overflows (3e308): a 400 naming ranks that says the
 * prediction is not finite, not a 409 "no model". In the strong experiment
 * T(1e308) is finite (2000/x + 20·log2 x) but its core-hours T·x·8/3600 are
 * not: a 400 too. At ranks=64 both answer. */
static void test_cost_overflow(harness *h, long strong)
{
    char body[1024], path[160];
    snprintf(body, sizeof body,
             "{\"name\":\"linear-growth\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",%s,"
             "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.02}}",
             LAW_TRAINING_JSON);
    long exp = request_experiment(h, body), job = 0;
    const double xs[5] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++)
        job = law_upload_epoch(h, exp, xs[i], 1, 2, 100, 3 * xs[i], 0.5, 1, LAW_ALIKE);
    check(harness_wait_job(h, job, 60), "the refit job finishes");
    const long exps[2] = {exp, strong};
    for (int e = 0; e < 2; e++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/cost?ranks=1e308", exps[e]);
        harness_response r;
        harness_request(h, "GET", path, NULL, NULL, 0, &r);
        json_t *doc = harness_json(&r);
        const char *detail = json_string_value(json_object_get(doc, "detail")) ?: "";
        check(r.status == 400 &&
                  !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "ranks") &&
                  strstr(detail, "not finite") && !strstr(detail, "no model"),
              "%s: 400 naming ranks, not finite: %d %.300s", e ? "strong" : "weak", r.status,
              r.body);
        check(strlen(detail) < 400, "a short detail (%zu bytes)", strlen(detail));
        json_decref(doc);
        harness_response_free(&r);
        snprintf(path, sizeof path, "/v1/experiments/%ld/cost?ranks=64", exps[e]);
        json_decref(request_json(h, "GET", path, NULL, 200));
    }
}

/* A range of 1e300 values: the refusal says 1e+300, not 301 digits. */
static void test_short_numbers(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    harness_response r;
    const char *body = "{\"candidates\":{\"ranks\":{\"min\":1,\"max\":1e300}}}";
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    json_t *doc = harness_json(&r);
    const char *detail = json_string_value(json_object_get(doc, "detail")) ?: "";
    check(r.status == 400 && strstr(detail, "1e+300") && strlen(detail) < 200 &&
              !strstr(detail, "0000000000"),
          "max 1e300: a short refusal: %d %.600s", r.status, detail);
    json_decref(doc);
    harness_response_free(&r);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long strong = strong_experiment(h);
    test_limit_within_interval(h, strong);
    test_whole_ranks(h, strong);
    test_cost_overflow(h, strong);
    test_short_numbers(h, strong);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
