/*
 * test_api_robust.c — choosing the modeler over real HTTP against a real
 * PostgreSQL:
 *
 *  - an experiment created without "modeler" shows the default (robust), one
 *    created with "extrap" shows extrap, an unknown name is a 400 naming
 *    "modeler";
 *  - profiles of a known epoch time 100 + 2·x per epoch (x = 2..10 ranks, two
 *    repetitions each) refit with the experiment's modeler (extrap): every
 *    model says "modeler":"extrap"; POST .../refit?modeler=robust: a new model
 *    set whose models say "modeler":"robust", with the epoch model linear in
 *    ranks (0.1% noise per step value), and predict names the modeler too;
 *  - a refit asking for an unknown modeler, or with other members in its
 *    body, is a 400 naming them; POST /v1/fit with modeler robust answers
 *    "modeler":"robust", with an option of Extra-P's modeler is a 400 naming
 *    options.use_crossvalidation, and ?modeler=bogus is a 400;
 *  - POST /v1/fit with modeler segmented on p^2 up to p = 6 and 30 + p from
 *    there (Extra-P's one_parameter_segmented_1): two segments, the change
 *    point p = 6 in "break", and each prediction from the segment holding
 *    its point (9 at p = 3, 39 at p = 9, exact data: to 1e-9);
 *  - the same function of x times y (x = 1..10, y = 1..16): with modeler
 *    segmented one function whose factor of x is the segmented function
 *    (Extra-P's "{... for x<=6.0; ... for x>=6.0} * y^(1)", "segments" on
 *    the factor, "break" naming x at 6) predicting 36 at (3, 4) and 78 at
 *    (9, 2); with the default modeler the warning two_regimes and the same
 *    "break".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

static double epoch_time(double x)
{
    return 100 + 2 * x;
}

/* deterministic noise in [-1, 1] */
static double noise(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 4503599627370496.0 - 1;
}

/* One upload: 2 ranks, 4 train steps (the first a warm-up), one callpath
 * carrying the epoch time / n_t per step with relative noise amp. */
static char *profile_json(double x, int rep, int n_t, double amp, uint64_t *seed)
{
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 4; s++) {
            double v = epoch_time(x) / n_t * (s == 0 ? 3.0 : 1.0) * (1 + amp * noise(seed));
            json_t *cps = json_pack("[{s:s, s:s, s:{s:f}}]", "name", "volta_sgemm_128x64_nn",
                                    "category", "comp", "metrics", "time", v);
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", rep,
                            "ranks", ranks);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return text;
}

/* Creates an experiment (modeler_member: "" or ",\"modeler\":\"...\"");
 * returns its id, or -1 with the response in *out when given. */
static long create_experiment(harness *h, const char *name, const char *modeler_member,
                              harness_response *out)
{
    char body[640];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":51200,\"validation_samples\":0,\"batch_size\":256,"
             "\"data_parallel\":\"ranks\",\"model_parallel\":\"1\",\"warmup_steps\":1}%s}",
             name, modeler_member);
    harness_response r;
    harness_post(h, "/v1/experiments", body, &r);
    json_t *doc = harness_json(&r);
    long id = r.status == 201 ? (long)json_integer_value(json_object_get(doc, "id")) : -1;
    json_decref(doc);
    if (out)
        *out = r;
    else
        harness_response_free(&r);
    return id;
}

static const char *view_modeler(harness *h, long id, char *buf, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/experiments/%ld", id);
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    snprintf(buf, cap, "%s", json_string_value(json_object_get(doc, "modeler")) ?: "?");
    json_decref(doc);
    harness_response_free(&r);
    return buf;
}

static void test_experiment_modeler(harness *h)
{
    char buf[32];
    long a = create_experiment(h, "robust-default", "", NULL);
    check(a > 0, "create without modeler");
    check(!strcmp(view_modeler(h, a, buf, sizeof buf), "robust"), "default robust: %s", buf);
    long b = create_experiment(h, "robust-extrap", ",\"modeler\":\"extrap\"", NULL);
    check(b > 0 && !strcmp(view_modeler(h, b, buf, sizeof buf), "extrap"), "extrap: %s", buf);
    harness_response r;
    long c = create_experiment(h, "robust-bogus", ",\"modeler\":\"bogus\"", &r);
    check(c < 0 && r.status == 400 && strstr(r.body, "\"field\":\"modeler\""),
          "unknown modeler: %d %s", r.status, r.body);
    harness_response_free(&r);
}

/* Uploads 5 coordinates x 2 repetitions; returns the last job. */
static long upload_all(harness *h, long exp)
{
    static const double xs[5] = {2, 4, 6, 8, 10};
    uint64_t seed = 777;
    long job = 0;
    for (int i = 0; i < 5; i++) {
        for (int rep = 1; rep <= 2; rep++) {
            int n_t = (int)floor(51200 / xs[i] / 256);
            char *body = profile_json(xs[i], rep, n_t, 0.001, &seed);
            char path[80];
            snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
            harness_response r;
            harness_post(h, path, body, &r);
            json_t *doc = harness_json(&r);
            check(r.status == 202, "upload %g/%d: %d %s", xs[i], rep, r.status, r.body);
            job = (long)json_integer_value(json_object_get(doc, "job"));
            json_decref(doc);
            harness_response_free(&r);
            free(body);
        }
    }
    return job;
}

/* Every listed model of the newest set has "modeler" == want; the epoch
 * model's function into fn. The listing may show the previous set for the
 * model cache's max age after a refit: polls until the set is not *set.
 * Returns the number of models and leaves the set listed in *set. */
static int models_say(harness *h, long exp, const char *want, char *fn, size_t cap, long *set)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?metric=time", exp);
    harness_response r;
    json_t *doc = NULL;
    double until = harness_now() + 20;
    for (;;) {
        harness_get(h, path, &r);
        doc = harness_json(&r);
        long got = (long)json_integer_value(json_object_get(doc, "model_set"));
        if (got != *set || harness_now() > until) {
            *set = got;
            break;
        }
        json_decref(doc);
        harness_response_free(&r);
        harness_sleep(0.2);
    }
    size_t i;
    json_t *m;
    int n = 0, all = 1;
    fn[0] = '\0';
    json_array_foreach(json_object_get(doc, "models"), i, m)
    {
        if (!json_is_string(json_object_get(m, "function")))
            continue;
        n++;
        const char *got = json_string_value(json_object_get(m, "modeler"));
        all &= got && !strcmp(got, want);
        if (!strcmp(json_string_value(json_object_get(m, "callpath")) ?: "", "epoch"))
            snprintf(fn, cap, "%s", json_string_value(json_object_get(m, "function")));
    }
    check(r.status == 200 && n > 0 && all, "%d models all say %s: %.300s", n, want, r.body);
    json_decref(doc);
    harness_response_free(&r);
    return n;
}

static void test_refit_modeler(harness *h)
{
    long exp = create_experiment(h, "robust-refit", ",\"modeler\":\"extrap\"", NULL);
    check(exp > 0, "create");
    long job = upload_all(h, exp);
    check(harness_wait_job(h, job, 60) == 1, "first refit done");
    char fn[512];
    long set = 0;
    models_say(h, exp, "extrap", fn, sizeof fn, &set);

    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit?modeler=robust", exp);
    harness_response r;
    harness_post(h, path, "", &r);
    json_t *doc = harness_json(&r);
    long job2 = (long)json_integer_value(json_object_get(doc, "job"));
    check(r.status == 202 && job2 > 0, "refit?modeler=robust: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    check(harness_wait_job(h, job2, 60) == 1, "robust refit done");
    models_say(h, exp, "robust", fn, sizeof fn, &set);
    check(strstr(fn, "ranks^(1)") != NULL && !strstr(fn, "log2"), "epoch linear: %s", fn);

    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=40", exp);
    harness_get(h, path, &r);
    doc = harness_json(&r);
    json_t *ep = json_object_get(doc, "epoch");
    const char *mod = json_string_value(json_object_get(ep, "modeler"));
    double v = json_number_value(json_object_get(ep, "time"));
    check(r.status == 200 && mod && !strcmp(mod, "robust"), "predict names robust: %s", r.body);
    check(fabs(v - epoch_time(40)) <= 0.02 * epoch_time(40), "predict 40: %g vs %g", v,
          epoch_time(40));
    json_decref(doc);
    harness_response_free(&r);

    /* the body form, and what a refit refuses */
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_post(h, path, "{\"modeler\":\"extrap\"}", &r);
    doc = harness_json(&r);
    long job3 = (long)json_integer_value(json_object_get(doc, "job"));
    check(r.status == 202, "refit body modeler: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    check(harness_wait_job(h, job3, 60) == 1, "extrap refit done");
    models_say(h, exp, "extrap", fn, sizeof fn, &set);
    harness_post(h, path, "{\"modeler\":\"nope\"}", &r);
    check(r.status == 400 && strstr(r.body, "\"field\":\"modeler\""), "bad modeler: %d %s",
          r.status, r.body);
    harness_response_free(&r);
    harness_post(h, path, "{\"options\":{\"use_crossvalidation\":false}}", &r);
    check(r.status == 400 && strstr(r.body, "\"field\":\"options\""), "refit options: %d %s",
          r.status, r.body);
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit?modeler=bogus", exp);
    harness_post(h, path, "", &r);
    check(r.status == 400 && strstr(r.body, "modeler"), "refit ?modeler=bogus: %d", r.status);
    harness_response_free(&r);
}

static void test_fit_modeler(harness *h)
{
    static const char *points =
        "\"points\":[{\"point\":[2],\"values\":[4.1,3.9]},{\"point\":[4],\"values\":[8.2,7.8]},"
        "{\"point\":[8],\"values\":[16.3,15.7]},{\"point\":[16],\"values\":[32.5,31.5]},"
        "{\"point\":[32],\"values\":[65,63]}]";
    char body[1024];
    harness_response r;
    snprintf(body, sizeof body, "{\"parameters\":[\"x\"],%s,\"modeler\":\"robust\"}", points);
    harness_post(h, "/v1/fit", body, &r);
    json_t *doc = harness_json(&r);
    json_t *m = json_array_get(json_object_get(doc, "models"), 0);
    const char *mod = json_string_value(json_object_get(m, "modeler"));
    check(r.status == 200 && mod && !strcmp(mod, "robust"), "fit robust: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);

    snprintf(body, sizeof body, "{\"parameters\":[\"x\"],%s}", points);
    harness_post(h, "/v1/fit", body, &r);
    doc = harness_json(&r);
    m = json_array_get(json_object_get(doc, "models"), 0);
    mod = json_string_value(json_object_get(m, "modeler"));
    /* one default everywhere: the robust modeler, like new experiments */
    check(r.status == 200 && mod && !strcmp(mod, "robust"), "fit default robust: %s", r.body);
    json_decref(doc);
    harness_response_free(&r);

    snprintf(body, sizeof body,
             "{\"parameters\":[\"x\"],%s,\"modeler\":\"robust\","
             "\"options\":{\"use_crossvalidation\":false}}",
             points);
    harness_post(h, "/v1/fit", body, &r);
    check(r.status == 400 && strstr(r.body, "options.use_crossvalidation"),
          "option of Extra-P's modeler: %d %s", r.status, r.body);
    harness_response_free(&r);
    harness_post(h, "/v1/fit?modeler=bogus", body, &r);
    check(r.status == 400 && strstr(r.body, "\"field\":\"modeler\""), "?modeler=bogus: %d %s",
          r.status, r.body);
    harness_response_free(&r);

    char seg[2048] = "{\"parameters\":[\"p\"],\"modeler\":\"segmented\",\"predict\":[[3],[9]],"
                     "\"points\":[";
    for (int p = 1; p <= 10; p++) {
        double v = p <= 6 ? p * p : 30 + p;
        snprintf(seg + strlen(seg), sizeof seg - strlen(seg),
                 "%s{\"point\":[%d],\"values\":[%g,%g]}", p > 1 ? "," : "", p, v, v);
    }
    strcat(seg, "]}");
    harness_post(h, "/v1/fit", seg, &r);
    doc = harness_json(&r);
    m = json_array_get(json_object_get(doc, "models"), 0);
    mod = json_string_value(json_object_get(m, "modeler"));
    json_t *brk = json_object_get(m, "break"), *pred = json_object_get(m, "predictions");
    check(r.status == 200 && mod && !strcmp(mod, "segmented"), "fit segmented: %d %s", r.status,
          r.body);
    check(json_array_size(json_object_get(m, "segments")) == 2 &&
              json_number_value(json_object_get(brk, "low")) == 6 &&
              json_number_value(json_object_get(brk, "high")) == 6,
          "two segments, change at p = 6: %s", r.body);
    double at3 = json_number_value(json_object_get(json_array_get(pred, 0), "value"));
    double at9 = json_number_value(json_object_get(json_array_get(pred, 1), "value"));
    check(fabs(at3 - 9) <= 1e-9 * 40 && fabs(at9 - 39) <= 1e-9 * 40,
          "each point from its segment: %g %g (%s)", at3, at9, r.body);
    json_decref(doc);
    harness_response_free(&r);
}

/* The break member of a model: parameter x, low and high 6. */
static int break_x6(const json_t *m)
{
    const json_t *brk = json_object_get(m, "break");
    const char *param = json_string_value(json_object_get(brk, "parameter"));
    return param && !strcmp(param, "x") && json_number_value(json_object_get(brk, "low")) == 6 &&
           json_number_value(json_object_get(brk, "high")) == 6;
}

static void test_fit_segmented_two(harness *h)
{
    char body[8192] = "{\"parameters\":[\"x\",\"y\"],\"predict\":[[3,4],[9,2]],\"points\":[";
    for (int y = 1; y <= 16; y *= 2)
        for (int x = 1; x <= 10; x++) {
            double v = (x <= 6 ? x * x : 30 + x) * y;
            snprintf(body + strlen(body), sizeof body - strlen(body),
                     "%s{\"point\":[%d,%d],\"values\":[%g,%g]}", x + y > 2 ? "," : "", x, y, v,
                     v);
        }
    strcat(body, "]}");
    harness_response r;
    harness_post(h, "/v1/fit?modeler=segmented", body, &r);
    json_t *doc = harness_json(&r);
    json_t *m = json_array_get(json_object_get(doc, "models"), 0);
    const char *fn = json_string_value(json_object_get(m, "function"));
    const json_t *term = json_array_get(json_object_get(m, "terms"), 0);
    const json_t *fx = json_array_get(json_object_get(term, "factors"), 0);
    check(r.status == 200 && fn && strstr(fn, " * {") && strstr(fn, " for x<=6.0; ") &&
              strstr(fn, " for x>=6.0} * y^(1)") && json_array_size(json_object_get(m, "terms")) == 1,
          "segmented factor of x times y: %d %s", r.status, r.body);
    check(json_array_size(json_object_get(fx, "segments")) == 2 && break_x6(m) &&
              !json_object_get(m, "segments"),
          "the factor carries the segments, the model the break: %s", r.body);
    const json_t *pred = json_object_get(m, "predictions");
    double a = json_number_value(json_object_get(json_array_get(pred, 0), "value"));
    double b = json_number_value(json_object_get(json_array_get(pred, 1), "value"));
    check(fabs(a - 36) <= 1e-9 * 1600 && fabs(b - 78) <= 1e-9 * 1600,
          "predictions from the segment holding x: %.17g %.17g", a, b);
    json_decref(doc);
    harness_response_free(&r);

    harness_post(h, "/v1/fit", body, &r);
    doc = harness_json(&r);
    m = json_array_get(json_object_get(doc, "models"), 0);
    int warned = 0;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(m, "warnings"), i, w)
        warned |= !strcmp(json_string_value(json_object_get(w, "code")) ?: "", "two_regimes");
    check(r.status == 200 && warned && break_x6(m), "robust: two_regimes, break x = 6: %s",
          r.body);
    json_decref(doc);
    harness_response_free(&r);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_experiment_modeler(h);
    test_refit_modeler(h);
    test_fit_modeler(h);
    test_fit_segmented_two(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
