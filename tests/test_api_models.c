/*
 * test_api_models.c — end to end over real HTTP against a real PostgreSQL:
 * profiles generated from known per-epoch functions are uploaded at five
 * coordinates; the worker aggregates and fits them; the models, the
 * measurements and the predictions must match the functions.
 *
 *  - Extra-Deep's case study: T(x) = 158.58 + 0.58·x^(2/3)·log2(x)^2 s per
 *    epoch at x = 2,4,6,8,10 ranks, spread over comp/comm/mem callpaths and
 *    4 ranks: with 0.2% noise per step value the epoch model has T's terms;
 *    with 0.2% and with 1% noise predict?ranks=40 is within 2% of T(40) and
 *    its interval contains it. (At 1% noise the growing part, under 1 s of
 *    a 160 s epoch at 2 ranks, no longer identifies its exponents.)
 *  - Parts that behave differently (strong scaling: computation 1200/x,
 *    communication 3·log2(x)^2): the epoch prediction, composed from the
 *    parts' models, is within 2% at 64 ranks.
 *  - Ranking by growth, pagination, the callpath seen too rarely to model,
 *    measurements, predict's errors, and the stateless POST /v1/fit.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check.h"
#include "tests/harness.h"

static double case_study(double x)
{
    return 158.58 + 0.58 * pow(x, 2.0 / 3) * pow(log2(x), 2);
}

/* deterministic noise in [-1, 1] */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 4503599627370496.0 - 1;
}

typedef struct workload {
    double comp, comm, mem; /* seconds per epoch */
    int rare;               /* add a callpath that only this coordinate has */
} workload;

/* One upload: ranks 0..3, 5 train steps each (the first a slow warm-up),
 * per-step values = per-epoch share / n_t, with relative noise amp. */
static char *profile_json(double x, int n_t, const workload *w, double amp, uint64_t *seed)
{
    json_t *ranks = json_array();
    for (int r = 0; r < 4; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 5; s++) {
            double warm = s == 0 ? 5.0 : 1.0;
            json_t *cps = json_array();
            struct {
                const char *name, *category;
                double per_epoch;
            } parts[] = {
                {"volta_sgemm_128x64_nn", "comp", 0.6 * w->comp},
                {"relu_kernel", "comp", 0.4 * w->comp},
                {"ncclKernel_AllReduce_RING_LL_Sum_float", "comm", w->comm},
                {"Memcpy HtoD (Pageable -> Device)", "mem", w->mem},
            };
            for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
                double v = parts[k].per_epoch / n_t * warm * (1 + amp * noise(seed));
                json_array_append_new(cps, json_pack("{s:s, s:s, s:{s:f, s:i}}", "name",
                                                     parts[k].name, "category", parts[k].category,
                                                     "metrics", "time", v, "visits", 4));
            }
            if (w->rare)
                json_array_append_new(cps, json_pack("{s:s, s:s, s:{s:f}}", "name", "rare_kernel",
                                                     "category", "comp", "metrics", "time", 1e-4));
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", 1, "ranks",
                            ranks);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return text;
}

/* Creates an experiment; returns its id or -1. */
static long create_experiment(harness *h, const char *name, const char *scaling)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"%s\","
             "\"training\":{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
             "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":1},"
             "\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":1}}",
             name, scaling);
    harness_response r;
    harness_post(h, "/v1/experiments", body, &r);
    json_t *doc = harness_json(&r);
    long id = r.status == 201 ? (long)json_integer_value(json_object_get(doc, "id")) : -1;
    check(id > 0, "create %s: %d %s", name, r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    return id;
}

/* Uploads one profile per coordinate; returns the last job id (0 on error). */
static long upload_all(harness *h, long exp, const double *xs, int n,
                       void (*split)(double x, workload *w), double amp)
{
    uint64_t seed = 12345;
    long job = 0;
    for (int i = 0; i < n; i++) {
        workload w = {0};
        split(xs[i], &w);
        w.rare = i < 2;
        int n_t = (int)floor(50000 / xs[i] / 256);
        char *body = profile_json(xs[i], n_t, &w, amp, &seed);
        char path[96];
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
        harness_response r;
        harness_post(h, path, body, &r);
        json_t *doc = harness_json(&r);
        check(r.status == 202, "upload at %g: %d %s", xs[i], r.status, r.body);
        job = (long)json_integer_value(json_object_get(doc, "job"));
        json_decref(doc);
        harness_response_free(&r);
        free(body);
    }
    return job;
}

static int wait_job(harness *h, long job)
{
    return harness_wait_job(h, job, 30);
}

static json_t *get_json(harness *h, const char *path, int want)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "GET %s: %d %s", path, r.status, r.body);
    harness_response_free(&r);
    return doc;
}

/* The application model `name` of metric time in a models listing. */
static json_t *find_model(json_t *list, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(list, "models"), i, m)
        if (!strcmp(json_string_value(json_object_get(m, "callpath")), name))
            return m;
    return NULL;
}

static void split_case_study(double x, workload *w)
{
    w->mem = 2.0;
    w->comp = 156.58;
    w->comm = case_study(x) - 158.58;
}

static void check_prediction_at_40(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    json_t *p = get_json(h, path, 200);
    json_t *ep = json_object_get(p, "epoch");
    double v = json_real_value(json_object_get(ep, "time"));
    double lo = json_real_value(json_array_get(json_object_get(ep, "interval"), 0));
    double hi = json_real_value(json_array_get(json_object_get(ep, "interval"), 1));
    double truth = case_study(40);
    check(fabs(v - truth) <= 0.02 * truth, "predict(40) = %g, T(40) = %g", v, truth);
    check(lo <= truth && truth <= hi && lo < v && v < hi, "interval [%g, %g] holds %g", lo, hi,
          truth);
    check(json_is_true(json_object_get(json_object_get(p, "extrapolation"), "beyond_4x")) == 0,
          "40 is not beyond 4x the largest measured 10");
    json_decref(p);
}

static void test_case_study_noisy(harness *h)
{
    long exp = create_experiment(h, "cifar10-noisy", "weak");
    const double xs[] = {2, 4, 6, 8, 10};
    long job = upload_all(h, exp, xs, 5, split_case_study, 0.01);
    check(wait_job(h, job), "the refit job finishes");
    check_prediction_at_40(h, exp);
}

static void test_case_study(harness *h)
{
    long exp = create_experiment(h, "cifar10-resnet50", "weak");
    const double xs[] = {2, 4, 6, 8, 10};
    long job = upload_all(h, exp, xs, 5, split_case_study, 0.002);
    check(wait_job(h, job), "the refit job finishes");

    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application&metric=time", exp);
    json_t *list = get_json(h, path, 200);
    json_t *epoch = find_model(list, "epoch");
    check(epoch != NULL, "an epoch model");
    json_t *terms = json_object_get(epoch, "terms");
    json_t *f0 = json_array_get(json_object_get(json_array_get(terms, 0), "factors"), 0);
    check(json_array_size(terms) == 1 &&
              fabs(json_real_value(json_object_get(f0, "poly")) - 2.0 / 3) < 1e-12 &&
              json_real_value(json_object_get(f0, "log")) == 2,
          "epoch model has the terms of T: %s",
          json_string_value(json_object_get(epoch, "function")));
    check(fabs(json_real_value(json_object_get(epoch, "constant")) - 158.58) < 0.02 * 158.58,
          "constant near 158.58");
    json_decref(list);

    check_prediction_at_40(h, exp);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64", exp);
    json_t *p = get_json(h, path, 200);
    check(json_is_true(json_object_get(json_object_get(p, "extrapolation"), "beyond_4x")),
          "64 is beyond 4x 10: warned");
    json_decref(p);

    /* ranking by growth: the all-reduce grows, the others are flat */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/models?level=callpath&metric=time&sort=growth&limit=1", exp);
    list = get_json(h, path, 200);
    json_t *first = json_array_get(json_object_get(list, "models"), 0);
    check(!strcmp(json_string_value(json_object_get(first, "callpath")),
                  "ncclKernel_AllReduce_RING_LL_Sum_float") &&
              !strcmp(json_string_value(json_object_get(first, "category")), "comm"),
          "fastest growing callpath first: %s", json_string_value(json_object_get(first, "callpath")));
    const char *cursor = json_string_value(json_object_get(list, "next_cursor"));
    check(cursor != NULL, "a next cursor");
    char next[256];
    snprintf(next, sizeof next, "/v1/experiments/%ld/models?level=callpath&metric=time&sort=growth&limit=10&cursor=%s",
             exp, cursor ? cursor : "x");
    json_decref(list);
    list = get_json(h, next, 200);
    size_t n = json_array_size(json_object_get(list, "models"));
    check(n == 4, "the other 4 callpaths on the next page (3 modeled + the rare one), got %zu", n);
    json_t *rare = find_model(list, "rare_kernel");
    check(rare && json_is_null(json_object_get(rare, "function")) &&
              strstr(json_string_value(json_object_get(rare, "reason")) ?: "", "at least 5"),
          "rare callpath listed without a model and with the reason");
    check(json_is_null(json_object_get(list, "next_cursor")), "last page");
    json_decref(list);

    /* measurements: the epoch value per coordinate is T(x) up to the noise */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/measurements?level=application&metric=time&name=epoch", exp);
    json_t *ms = get_json(h, path, 200);
    size_t i;
    json_t *m;
    int good = 0;
    json_array_foreach(json_object_get(ms, "measurements"), i, m)
    {
        double x = json_real_value(json_object_get(json_object_get(m, "point"), "ranks"));
        double val = json_real_value(json_object_get(m, "value"));
        good += fabs(val - case_study(x)) <= 0.02 * case_study(x) &&
                json_array_size(json_object_get(m, "ranks")) == 4;
    }
    check(good == 5, "5 epoch measurements near T(x) with 4 ranks each, %d good", good);
    json_decref(ms);

    /* predict's errors */
    struct {
        const char *query;
        int status;
    } bad[] = {{"", 400}, {"?ranks=abc", 400}, {"?ranks=-4", 400}, {"?ranks=8&nodes=2", 400},
               {"?ranks=8&metric=bytes", 400}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/predict%s", exp, bad[k].query);
        json_decref(get_json(h, path, bad[k].status));
    }
    json_decref(get_json(h, "/v1/experiments/999999/predict?ranks=8", 404));
    long empty = create_experiment(h, "no-profiles-yet", "weak");
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=8", empty);
    json_decref(get_json(h, path, 409));
    snprintf(path, sizeof path, "/v1/experiments/%ld/models", empty);
    list = get_json(h, path, 200);
    check(json_array_size(json_object_get(list, "models")) == 0 &&
              json_is_null(json_object_get(list, "model_set")),
          "no models yet: an empty list");
    json_decref(list);
}

/* Refits show up in /metrics as a histogram of their durations. */
static void test_fit_metrics(harness *h)
{
    harness_response r;
    harness_get(h, "/metrics", &r);
    const char *line = r.body ? strstr(r.body, "perfcast_fit_duration_seconds_count{outcome=\"done\"} ") : NULL;
    long done = line ? strtol(line + strlen("perfcast_fit_duration_seconds_count{outcome=\"done\"} "), NULL, 10) : -1;
    check(done >= 2, "refits counted in /metrics: %ld", done);
    harness_response_free(&r);
}

static void split_strong(double x, workload *w)
{
    w->comp = 1200 / x;
    w->comm = 3 * pow(log2(x), 2);
    w->mem = 0.5;
}

static void test_composition(harness *h)
{
    long exp = create_experiment(h, "strong-scaling", "strong");
    const double xs[] = {2, 4, 8, 16, 32};
    long job = upload_all(h, exp, xs, 5, split_strong, 0.0);
    check(wait_job(h, job), "the refit job finishes");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64", exp);
    json_t *p = get_json(h, path, 200);
    double truth = 1200.0 / 64 + 3 * 36 + 0.5;
    double v = json_real_value(json_object_get(json_object_get(p, "epoch"), "time"));
    double comp = json_real_value(json_object_get(json_object_get(p, "comp"), "time"));
    double comm = json_real_value(json_object_get(json_object_get(p, "comm"), "time"));
    check(fabs(v - truth) <= 0.02 * truth, "composed epoch at 64: %g, truth %g", v, truth);
    check(fabs(comp - 1200.0 / 64) <= 0.02 * 1200.0 / 64, "comp part %g", comp);
    check(fabs(comm - 108) <= 0.02 * 108, "comm part %g", comm);
    check(json_array_size(json_object_get(json_object_get(p, "epoch"), "composed_from")) == 3,
          "composed from the three parts");
    json_decref(p);
}

static void test_fit(harness *h)
{
    FILE *f = fopen("tests/data/extrap/inputs/one_parameter_1.txt", "rb");
    char body[4096];
    size_t n = f ? fread(body, 1, sizeof body - 1, f) : 0;
    if (f)
        fclose(f);
    body[n] = '\0';
    harness_response r;
    /* Extra-P's modeler, asked for (the default is the robust one) */
    harness_request(h, "POST", "/v1/fit?modeler=extrap", "Content-Type: text/plain\r\n", body, n,
                    &r);
    json_t *doc = harness_json(&r);
    json_t *m = json_array_get(json_object_get(doc, "models"), 0);
    const char *fn = json_string_value(json_object_get(m, "function"));
    check(r.status == 200 && fn && strstr(fn, "x^(2)") &&
              fabs(json_real_value(json_object_get(m, "constant")) + 0.8897934098062803) < 1e-9,
          "fit Extra-P text: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);

    const char *mine = "{\"parameters\":[\"ranks\"],\"points\":["
                       "{\"point\":[2],\"values\":[5]},{\"point\":[4],\"values\":[9]},"
                       "{\"point\":[8],\"values\":[17]},{\"point\":[16],\"values\":[33]},"
                       "{\"point\":[32],\"values\":[65]}],\"predict\":[[64]]}";
    harness_post(h, "/v1/fit", mine, &r);
    doc = harness_json(&r);
    m = json_array_get(json_object_get(doc, "models"), 0);
    double pred = json_real_value(json_object_get(json_array_get(json_object_get(m, "predictions"), 0), "value"));
    check(r.status == 200 && fabs(pred - 129) < 1e-6, "fit perfcast JSON: 1 + 2x at 64 = %g", pred);
    json_decref(doc);
    harness_response_free(&r);

    harness_post(h, "/v1/fit", "{\"parameters\":[\"ranks\"],\"points\":[{\"point\":[2],\"values\":[\"x\"]}]}", &r);
    check(r.status == 400 && strstr(r.body, "points[0].values"), "bad fit input named: %s", r.body);
    harness_response_free(&r);
    harness_request(h, "POST", "/v1/fit?format=nope", NULL, "x", 1, &r);
    check(r.status == 415, "unknown format: %d", r.status);
    harness_response_free(&r);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_case_study(h);
    test_case_study_noisy(h);
    test_composition(h);
    test_fit(h);
    test_fit_metrics(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
