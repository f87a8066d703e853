/*
 * test_api_warnings.c — coded warnings and ?strict=true over real HTTP
 * against a real PostgreSQL.
 *
 *  - POST /v1/fit with Extra-P's strong_scaling/one_parameter_1 data (725,
 *    505, 319, 179, 82 s at x = 20..60): the default (robust) modeler keeps
 *    the prediction at x = 120 positive; Extra-P's model is c0 - c1 log2(x),
 *    its prediction at x = 120 is negative and answered (200) with the
 *    number and the warnings
 *    negative_prediction and implausible_extrapolation, objects with a
 *    message and where the path is lowest; x = 40 has none; the model has
 *    diagnostics (range 20..60, 5 distinct values, smallest and largest
 *    measurement). ?strict=true: 422 naming the codes, field "strict";
 *    ?strict=maybe: 400; an unknown modeler or option: 400 naming it.
 *  - An experiment (Extra-P's modeler) whose computation shrinks like that
 *    data (comp = 725 .. 82 s per epoch at 20..60 ranks): predict?ranks=120
 *    answers 200 with a negative epoch and negative_prediction naming the
 *    comp model; with strict=true 422; predict inside the range carries no
 *    prediction warning; the models listing shows diagnostics and coded
 *    warnings; strict is refused (400) where no warnings are answered.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

static const double xs[5] = {20, 30, 40, 50, 60};
static const double ys[5] = {725, 505, 319, 179, 82};

/* 1 when the warnings array holds code (and, when model is not NULL, the
 * warning names that model). */
static int has_code(const json_t *warnings, const char *code, const char *model)
{
    size_t i;
    const json_t *w;
    json_array_foreach(warnings, i, w)
    {
        const char *c = json_string_value(json_object_get(w, "code"));
        const char *m = json_string_value(json_object_get(w, "model"));
        if (c && !strcmp(c, code) && json_is_string(json_object_get(w, "message")) &&
            (!model || (m && !strcmp(m, model))))
            return 1;
    }
    return 0;
}

static int has_prediction_code(const json_t *warnings)
{
    return has_code(warnings, "negative_prediction", NULL) ||
           has_code(warnings, "implausible_extrapolation", NULL) ||
           has_code(warnings, "extrapolation_far", NULL);
}

static void fit_body(char *body, size_t cap, const char *extra)
{
    size_t n = (size_t)snprintf(body, cap, "{\"parameters\":[\"x\"],\"points\":[");
    for (int i = 0; i < 5; i++)
        n += (size_t)snprintf(body + n, cap - n, "%s{\"point\":[%g],\"values\":[%g,%g,%g]}",
                              i ? "," : "", xs[i], ys[i] * 0.99, ys[i], ys[i] * 1.01);
    snprintf(body + n, cap - n, "],\"predict\":[[120],[40]]%s}", extra);
}

static void test_fit(harness *h)
{
    char body[2048];
    /* the default, robust modeler keeps the strong-scaling time positive at 2x */
    fit_body(body, sizeof body, "");
    json_t *doc = request_json(h, "POST", "/v1/fit", body, 200);
    json_t *m = json_array_get(json_object_get(doc, "models"), 0);
    json_t *r120 = json_array_get(json_object_get(m, "predictions"), 0);
    check(!strcmp(json_string_value(json_object_get(m, "modeler")) ?: "", "robust") &&
              json_number_value(json_object_get(r120, "value")) > 0,
          "robust by default, positive at x=120");
    json_decref(doc);
    /* Extra-P's modeler answers c0 - c1 log2(x): negative at x=120 */
    fit_body(body, sizeof body, ",\"modeler\":\"extrap\"");
    doc = request_json(h, "POST", "/v1/fit", body, 200);
    m = json_array_get(json_object_get(doc, "models"), 0);
    const char *fn = json_string_value(json_object_get(m, "function"));
    check(fn && strstr(fn, "log2(x)"), "c0 - c1 log2(x): %s", fn ? fn : "none");
    check(!strcmp(json_string_value(json_object_get(m, "modeler")) ?: "", "extrap"),
          "the default modeler is robust");
    json_t *diag = json_object_get(m, "diagnostics");
    json_t *px = json_object_get(json_object_get(diag, "parameters"), "x");
    check(json_number_value(json_object_get(px, "min")) == 20 &&
              json_number_value(json_object_get(px, "max")) == 60 &&
              json_integer_value(json_object_get(px, "distinct")) == 5,
          "diagnostics: x from 20 to 60, 5 values");
    check(fabs(json_number_value(json_object_get(json_object_get(diag, "measurements"), "min")) -
               82) < 1e-9,
          "diagnostics: smallest measurement 82");
    check(json_is_number(json_object_get(diag, "cross_validated_smape")) &&
              json_is_number(json_object_get(diag, "adjusted_r2")) &&
              json_is_number(json_object_get(diag, "rss")) &&
              json_is_number(json_object_get(diag, "smape")),
          "diagnostics: SMAPE, adjusted R^2, RSS, cross-validated SMAPE");
    json_t *preds = json_object_get(m, "predictions");
    json_t *p120 = json_array_get(preds, 0), *p40 = json_array_get(preds, 1);
    double v120 = json_number_value(json_object_get(p120, "value"));
    json_t *w120 = json_object_get(p120, "warnings");
    check(v120 < 0, "x=120 is answered with its negative number: %g", v120);
    check(has_code(w120, "negative_prediction", NULL) &&
              has_code(w120, "implausible_extrapolation", NULL),
          "x=120: negative_prediction and implausible_extrapolation");
    json_t *neg = json_array_get(w120, 0);
    check(json_number_value(json_object_get(json_object_get(neg, "lowest_at"), "x")) > 60,
          "the lowest point lies beyond the measured range");
    check(json_array_size(json_object_get(p40, "warnings")) == 0, "x=40: no warning");
    json_decref(doc);

    /* strict: the same answer refused, naming the codes */
    doc = request_json(h, "POST", "/v1/fit?strict=true", body, 422);
    const char *detail = json_string_value(json_object_get(doc, "detail"));
    check(detail && strstr(detail, "negative_prediction") &&
              !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "strict"),
          "strict: 422 naming negative_prediction: %s", detail ? detail : "");
    json_t *codes = json_object_get(doc, "codes");
    int found = 0;
    for (size_t i = 0; i < json_array_size(codes); i++)
        found |= !strcmp(json_string_value(json_array_get(codes, i)), "implausible_extrapolation");
    check(found, "strict: the codes listed");
    json_decref(doc);
    doc = request_json(h, "POST", "/v1/fit?strict=maybe", body, 400);
    check(!strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "strict"),
          "strict=maybe: 400 naming strict");
    json_decref(doc);
    doc = request_json(h, "POST", "/v1/fit?modeler=segmentedx", body, 400);
    detail = json_string_value(json_object_get(doc, "detail"));
    check(detail && strstr(detail, "segmentedx") &&
              !strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "modeler"),
          "unknown modeler: 400 naming it: %s", detail ? detail : "");
    json_decref(doc);
    fit_body(body, sizeof body, ",\"options\":{\"no_such_option\":1}");
    doc = request_json(h, "POST", "/v1/fit", body, 400);
    check(!strcmp(json_string_value(json_object_get(doc, "field")) ?: "", "options.no_such_option"),
          "unknown option: 400 naming it");
    json_decref(doc);
}

/* One upload at x ranks: 4 ranks, 5 train steps (the first a warm-up), the
 * epoch's computation comp(x), communication and memory constant. */
static char *profile(double x, double comp)
{
    int n_t = (int)floor(50000 / x / 256);
    json_t *ranks = json_array();
    for (int r = 0; r < 4; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 5; s++) {
            double warm = s == 0 ? 5.0 : 1.0;
            json_t *cps = json_pack(
                "[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]", "name",
                "volta_sgemm_128x64_nn", "category", "comp", "metrics", "time",
                comp / n_t * warm * (1 + 0.002 * ((r + s) % 3 - 1)), "name",
                "ncclKernel_AllReduce_RING_LL_Sum_float", "category", "comm", "metrics", "time",
                2.0 / n_t * warm, "name", "Memcpy HtoD (Pageable -> Device)", "category", "mem",
                "metrics", "time", 0.5 / n_t * warm);
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths",
                                                   cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", 1, "ranks",
                            ranks);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return text;
}

static void test_experiment(harness *h)
{
    json_t *doc = request_json(
        h, "POST", "/v1/experiments",
        "{\"name\":\"shrinking\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
        "\"modeler\":\"extrap\","
        "\"training\":{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
        "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":1}}",
        201);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    long job = 0;
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    for (int i = 0; i < 5; i++) {
        char *body = profile(xs[i], ys[i]);
        doc = request_json(h, "POST", path, body, 202);
        job = (long)json_integer_value(json_object_get(doc, "job"));
        json_decref(doc);
        free(body);
    }
    check(harness_wait_job(h, job, 60) == 1, "the refit job finishes");

    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=120", exp);
    doc = request_json(h, "GET", path, NULL, 200);
    double comp = json_number_value(json_object_get(json_object_get(doc, "comp"), "time"));
    json_t *w = json_object_get(doc, "warnings");
    check(comp < 0, "comp at 120 ranks answered with its negative number: %g", comp);
    check(has_code(w, "negative_prediction", "comp time"),
          "negative_prediction naming the comp model");
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=120&strict=true", exp);
    doc = request_json(h, "GET", path, NULL, 422);
    const char *detail = json_string_value(json_object_get(doc, "detail"));
    check(detail && strstr(detail, "negative_prediction"), "strict predict: 422 naming it: %s",
          detail ? detail : "");
    json_decref(doc);
    /* the same answer, kept in the page cache, still refused under strict */
    doc = request_json(h, "GET", path, NULL, 422);
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    doc = request_json(h, "GET", path, NULL, 200);
    check(json_is_array(json_object_get(doc, "warnings")) &&
              !has_prediction_code(json_object_get(doc, "warnings")),
          "inside the measured range: no prediction warning");
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/scaling?from=20&to=300&step=20", exp);
    doc = request_json(h, "GET", path, NULL, 200);
    check(has_code(json_object_get(doc, "warnings"), "negative_prediction", NULL) &&
              has_code(json_object_get(doc, "warnings"), "extrapolation_far", NULL),
          "scaling to 300 ranks: negative_prediction and extrapolation_far");
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application", exp);
    doc = request_json(h, "GET", path, NULL, 200);
    size_t i;
    json_t *m;
    int with_diag = 0, n = 0, coded = 1;
    json_array_foreach(json_object_get(doc, "models"), i, m)
    {
        n++;
        json_t *d = json_object_get(json_object_get(json_object_get(m, "diagnostics"),
                                                    "parameters"),
                                    "ranks");
        with_diag += json_integer_value(json_object_get(d, "distinct")) == 5;
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(m, "warnings"), k, x)
            coded &= json_is_string(json_object_get(x, "code"));
    }
    check(n > 0 && with_diag == n, "every model has diagnostics (%d of %d)", with_diag, n);
    check(coded, "every model warning has a code");
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?strict=true", exp);
    doc = request_json(h, "GET", path, NULL, 400);
    json_decref(doc);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_fit(h);
    test_experiment(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
