/*
 * test_api_numeric.c — numbers at the edge of what doubles hold, over real
 * HTTP against a real server and PostgreSQL (tests/harness.h):
 *
 *   - POST /v1/fit with coordinates near 1e308 (which made GSL abort the
 *     process) and values near 1e100 ... 1e308: 400 naming the field and
 *     the limit, the server still up; at the limit (1e50) a finite model;
 *   - a property test of the fit path: random extreme doubles (huge, tiny,
 *     subnormal, negative zero) with both modelers: every answer is 200 with
 *     finite numbers only (no NaN or infinity in the JSON) or a 400 naming
 *     a field, and the server stays up;
 *   - profiles with times x 1e155, 1e308 or alternating 1e300/1e-300: 400
 *     naming the metric and the limit, nothing stored; values at 1e44 with
 *     1e-300 mixed in and a steps-per-epoch expression that takes a model's
 *     values past the limit: the refit is done, the callpaths past the limit
 *     fail alone (their model says why) and measurements, bottlenecks,
 *     imbalance, speedups, curve and advice answer 200;
 *   - every number the service accepts it reads back: random finite
 *     doubles through create -> read for each stored numeric field of
 *     experiments (cost, training), simulations (batch_size), simulation
 *     runs (bandwidth, win, batch_size), devices (peaks, DRAM
 *     bandwidth) and overhead sets stored as given (a mean, the profiler
 *     overhead): 201 and the same double back from the single read and
 *     the listing, or 400 naming the field;
 *   - a refit that crashes its worker (the test build's hook aborts on one
 *     callpath: $(BUILD)/tests/perfcast-hooks, server/test_hooks.h) fails
 *     its job at once, naming the callpath, the step and the signal, after
 *     one attempt; the job is not claimed again when the server restarts.
 */
#include <float.h>
#include <inttypes.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

#define LIMIT 1e50 /* PMNF_MAX_MAGNITUDE */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A finite double from the edges: exact extremes, powers of ten over the
 * whole range, subnormals, negative zero, random bit patterns. */
static double extreme_double(void)
{
    static const double fixed[] = {DBL_MAX, -DBL_MAX, 1e308, 1e300, 1e200, 1e155, 1e100,
                                   1e51, 1e50, -1e50, 1e19, 9223372036854775808.0,
                                   18446744073709551616.0, 1e-300, DBL_MIN,
                                   4.9406564584124654e-324, 2.2250738585072009e-308, -0.0, 0.0,
                                   1.0, 0.5, 3.0, 123456.789, -7.25};
    switch (next_u64() % 4) {
    case 0:
        return fixed[next_u64() % (sizeof fixed / sizeof fixed[0])];
    case 1: {
        double e = (double)(next_u64() % 629) - 320;
        double m = 1 + (double)(next_u64() % 1000) / 1000;
        return (next_u64() % 4 ? 1 : -1) * m * pow(10, e);
    }
    case 2: {
        for (;;) {
            uint64_t bits = next_u64();
            double x;
            memcpy(&x, &bits, sizeof x);
            if (isfinite(x))
                return x;
        }
    }
    default:
        return (double)(next_u64() % 100) / 4;
    }
}

/* Mostly a double within the modeler's limit (huge, tiny, subnormal,
 * signed zero), now and then one beyond it. */
static double fit_double(void)
{
    if (next_u64() % 12 == 0)
        return extreme_double();
    double x = extreme_double();
    if (fabs(x) > LIMIT) { /* into range: the same mantissa at 2^-1074 .. 2^165 */
        int e;
        x = ldexp(frexp(x, &e), (int)(next_u64() % 1240) - 1074);
    }
    return x;
}

/* Whether every number in doc is finite (Jansson holds none that is not;
 * this also catches the texts "nan", "inf" a printer might have made). */
static int all_finite(const json_t *doc)
{
    if (json_is_real(doc))
        return isfinite(json_real_value(doc));
    if (json_is_array(doc)) {
        for (size_t i = 0; i < json_array_size(doc); i++)
            if (!all_finite(json_array_get(doc, i)))
                return 0;
    }
    if (json_is_object(doc)) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)doc, k, v)
        {
            if (!all_finite(v))
                return 0;
        }
    }
    return 1;
}

static int server_up(harness *h)
{
    harness_response r;
    harness_get(h, "/health", &r);
    int up = r.status == 200;
    harness_response_free(&r);
    return up;
}

/* POST /v1/fit body: the status, the problem's field into field (may be
 * NULL), the answer's JSON into *doc (may be NULL). */
static int fit(harness *h, const char *query, const char *body, char *field, size_t cap,
               json_t **doc)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/fit%s", query ? query : "");
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    json_t *d = harness_json(&r);
    if (field)
        snprintf(field, cap, "%s", json_string_value(json_object_get(d, "field")) ?: "");
    int status = r.status;
    if (doc)
        *doc = d;
    else
        json_decref(d);
    harness_response_free(&r);
    return status;
}

static void test_fit_abort(harness *h)
{
    /* the points that made GSL's SVD give up and abort the process */
    const char *repro =
        "{\"parameters\":[\"x\"],%s\"points\":[{\"point\":[1e308],\"values\":[0]},"
        "{\"point\":[5e307],\"values\":[1]},{\"point\":[3.3333333333333334e307],\"values\":[2]},"
        "{\"point\":[2.5e307],\"values\":[3]},{\"point\":[2e307],\"values\":[4]}]}";
    const char *modelers[] = {"", "\"modeler\":\"extrap\",", "\"modeler\":\"robust\","};
    for (int i = 0; i < 3; i++) {
        char body[512], field[64];
        snprintf(body, sizeof body, repro, modelers[i]);
        int st = fit(h, i == 1 ? "?modeler=extrap" : NULL, body, field, sizeof field, NULL);
        check(st == 400 && !strcmp(field, "points[0].point"), "coordinates 1e308 (%s): %d %s",
              modelers[i], st, field);
        check(server_up(h), "the server is up after coordinates near 1e308");
    }
    /* values near 1e100 ... 1e308: 400 naming the item and the limit */
    const char *values[] = {"1e100", "-1e200", "1e300", "1e308", "1.7976931348623157e308"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"parameters\":[\"x\"],\"modeler\":\"extrap\",\"points\":[{\"point\":[1],"
                 "\"values\":[1]},{\"point\":[2],\"values\":[2]},{\"point\":[3],\"values\":[%s]},"
                 "{\"point\":[4],\"values\":[4]},{\"point\":[5],\"values\":[5]}]}",
                 values[i]);
        harness_response r;
        harness_request(h, "POST", "/v1/fit", "Content-Type: application/json\r\n", body,
                        strlen(body), &r);
        json_t *d = harness_json(&r);
        const char *f = json_string_value(json_object_get(d, "field"));
        const char *detail = json_string_value(json_object_get(d, "detail"));
        check(r.status == 400 && f && !strcmp(f, "points[2].values") && detail &&
                  strstr(detail, "1e+50"),
              "value %s: %d %.300s", values[i], r.status, r.body);
        json_decref(d);
        harness_response_free(&r);
    }
    check(server_up(h), "the server is up after values near 1e308");

    /* the same shape at the limit: a finite model and prediction */
    json_t *doc = NULL;
    int st = fit(h, NULL,
                 "{\"parameters\":[\"x\"],\"modeler\":\"extrap\",\"points\":[{\"point\":[1e50],"
                 "\"values\":[0]},{\"point\":[5e49],\"values\":[1]},{\"point\":[3.3e49],"
                 "\"values\":[2]},{\"point\":[2.5e49],\"values\":[3]},{\"point\":[2e49],"
                 "\"values\":[4]}],\"predict\":[[1e50],[1e-300]]}",
                 NULL, 0, &doc);
    json_t *m = json_array_get(json_object_get(doc, "models"), 0);
    check(st == 200 && all_finite(doc) && json_is_string(json_object_get(m, "function")),
          "coordinates at the limit: %d", st);
    double v = json_number_value(
        json_object_get(json_array_get(json_object_get(m, "predictions"), 0), "value"));
    check(check_close(v, 0, 0, 1e-6) || fabs(v) < 5, "prediction at 1e50: %g (measured 0)", v);
    json_decref(doc);
    st = fit(h, NULL,
             "{\"parameters\":[\"x\"],\"modeler\":\"robust\",\"points\":[{\"point\":[1],"
             "\"values\":[1e50,-1e50]},{\"point\":[2],\"values\":[1e50]},{\"point\":[3],"
             "\"values\":[-1e50]},{\"point\":[4],\"values\":[5e-324]},{\"point\":[5],"
             "\"values\":[1e50]}]}",
             NULL, 0, &doc);
    check(st == 200 && all_finite(doc), "values at the limit: %d", st);
    json_decref(doc);
}

/* One random /v1/fit body of extreme doubles into buf. */
static void random_fit_body(char *buf, size_t cap, int robust)
{
    int nparams = 1 + (int)(next_u64() % 2), n = nparams == 1 ? 1 + (int)(next_u64() % 9) : 25;
    size_t at = (size_t)snprintf(buf, cap, "{\"parameters\":[\"x\"%s],\"modeler\":\"%s\",%s"
                                           "\"points\":[",
                                 nparams == 2 ? ",\"y\"" : "", robust ? "robust" : "extrap",
                                 next_u64() % 3 ? "" : "\"options\":{\"allow_negative_exponents\":true},");
    for (int i = 0; i < n && at < cap; i++) {
        double c[2];
        for (int p = 0; p < nparams; p++) {
            /* half the points on a grid scaled by an extreme factor, half anywhere */
            double grid = 1 + (p ? i / 5 : i % 5);
            c[p] = next_u64() % 2 ? grid * (next_u64() % 2 ? 1 : 1e45) : fit_double();
        }
        at += (size_t)snprintf(buf + at, cap - at, "%s{\"point\":[%.17g%s", i ? "," : "", c[0],
                               nparams == 2 ? "," : "");
        if (nparams == 2)
            at += (size_t)snprintf(buf + at, cap - at, "%.17g", c[1]);
        at += (size_t)snprintf(buf + at, cap - at, "],\"values\":[");
        int reps = 1 + (int)(next_u64() % 3);
        for (int r = 0; r < reps; r++) {
            double v = next_u64() % 3 ? fit_double() : (double)(i + 1) * 1e-300;
            at += (size_t)snprintf(buf + at, cap - at, "%s%.17g", r ? "," : "", v);
        }
        at += (size_t)snprintf(buf + at, cap - at, "]}");
    }
    snprintf(buf + at, cap - at, "],\"predict\":[[%.17g%s]]}", fit_double(),
             nparams == 2 ? ",2" : "");
}

static void test_fit_property(harness *h)
{
    static char body[16384];
    int ok200 = 0, ok400 = 0, bad = 0;
    for (int i = 0; i < 300; i++) {
        random_fit_body(body, sizeof body, i % 2);
        harness_response r;
        harness_request(h, "POST", "/v1/fit", "Content-Type: application/json\r\n", body,
                        strlen(body), &r);
        json_t *d = harness_json(&r);
        int good = 0;
        if (r.status == 200) {
            json_t *m = json_array_get(json_object_get(d, "models"), 0);
            good = all_finite(d) && !strstr(r.body, "nan") && !strstr(r.body, "inf") &&
                   json_is_array(json_object_get(m, "warnings"));
            ok200 += good;
        } else if (r.status == 400) {
            const char *f = json_string_value(json_object_get(d, "field"));
            good = f && *f;
            ok400 += good;
        }
        if (!good && bad++ < 5)
            check(0, "fit %d: %d %.300s for %.500s", i, r.status, r.body ? r.body : "", body);
        int status = r.status;
        json_decref(d);
        harness_response_free(&r);
        if (status == 0)
            break; /* the server is gone: the checks below say so */
    }
    fprintf(stderr, "random fits: %d answered 200, %d 400\n", ok200, ok400);
    check(bad == 0, "300 random fits: %d answered 200 with finite numbers, %d 400 naming a "
                    "field, %d otherwise", ok200, ok400, bad);
    check(ok200 > 30 && ok400 > 30, "both kinds of answer seen (%d, %d)", ok200, ok400);
    check(server_up(h), "the server is up after 300 random fits");
}

/* ---- profiles ------------------------------------------------------------- */

static long create(harness *h, const char *path, const char *body)
{
    json_t *d = request_json(h, "POST", path, body, 201);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    return id;
}

/* A perfcast profile at ranks = x: three steps on two ranks, callpaths
 * "big" (big, or alt on odd steps), "small" (small) and "plain" (x/1000). */
static char *profile(double x, double big, double alt, double small)
{
    json_t *steps = json_array();
    for (int s = 0; s < 3; s++)
        json_array_append_new(
            steps, json_pack("{s:s, s:[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, "
                             "{s:s, s:s, s:{s:f}}]}",
                             "phase", "train", "callpaths", "name", "big", "category", "comp",
                             "metrics", "time", s % 2 ? alt : big, "name", "small", "category",
                             "comm", "metrics", "time", small, "name", "plain", "category",
                             "mem", "metrics", "time", x / 1000));
    json_t *doc = json_pack("{s:{s:f}, s:i, s:[{s:i, s:O}, {s:i, s:O}]}", "point", "ranks", x,
                            "repetition", 1, "ranks", "rank", 0, "steps", steps, "rank", 1,
                            "steps", steps);
    json_decref(steps);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return text;
}

static const char *experiment_body(const char *name, const char *train_samples)
{
    static char body[768];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"modeler\":"
             "\"extrap\",\"training\":{\"train_samples\":%s,\"validation_samples\":0,"
             "\"batch_size\":256,\"data_parallel\":\"ranks\",\"model_parallel\":\"1\","
             "\"warmup_steps\":0},\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":1}}",
             name, train_samples);
    return body;
}

static void test_profile_limits(harness *h)
{
    long exp = create(h, "/v1/experiments", experiment_body("huge-values", "50000"));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    struct {
        double big, alt, small;
    } refused[] = {{1e155, 1e155, 1e155}, {1e308, 1e308, 1}, {1e300, 1e-300, 1}};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *body = profile(2, refused[i].big, refused[i].alt, refused[i].small);
        harness_response r;
        harness_post(h, path, body, &r);
        json_t *d = harness_json(&r);
        const char *f = json_string_value(json_object_get(d, "field"));
        const char *detail = json_string_value(json_object_get(d, "detail"));
        check(r.status == 400 && f && !strcmp(f, "metrics.time") && detail &&
                  strstr(detail, "\"big\"") && strstr(detail, "1e+50"),
              "time %g: %d %.300s", refused[i].big, r.status, r.body);
        json_decref(d);
        harness_response_free(&r);
        free(body);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp) == 0,
          "nothing stored by the refused uploads");
    {
        /* later refits of the same experiment are those of an experiment that
         * never saw the refused values: at ranks = 2, n_t = floor(50000 / 2 /
         * 256) = 97 steps of 3 + 0.5 + 0.002 s, the epoch 339.694 s */
        const double xs[] = {2, 4, 8, 16, 32};
        long job = 0;
        for (int i = 0; i < 5; i++) {
            char *ok = profile(xs[i], 3, 3, 0.5);
            json_t *a = request_json(h, "POST", path, ok, 202);
            job = (long)json_integer_value(json_object_get(a, "job"));
            json_decref(a);
            free(ok);
        }
        check(harness_wait_job(h, job, 60), "a later refit of the experiment is done");
        char mp[192];
        snprintf(mp, sizeof mp, "/v1/experiments/%ld/measurements?level=application&name=epoch"
                 "&metric=time&phase=epoch&limit=1", exp);
        json_t *m = request_json(h, "GET", mp, NULL, 200);
        json_t *m0 = json_array_get(json_object_get(m, "measurements"), 0);
        check(check_close(json_number_value(json_object_get(m0, "value")), 97 * 3.502, 1e-12, 0),
              "the epoch at ranks 2 after the refused uploads: %.17g",
              json_number_value(json_object_get(m0, "value")));
        json_decref(m);
        snprintf(mp, sizeof mp, "/v1/experiments/%ld/models?level=application&metric=time", exp);
        m = request_json(h, "GET", mp, NULL, 200);
        int epoch_modeled = 0;
        json_t *it;
        size_t k;
        json_array_foreach(json_object_get(m, "models"), k, it)
        {
            epoch_modeled |= !strcmp(json_string_value(json_object_get(it, "callpath")) ?: "",
                                     "epoch") &&
                             json_is_string(json_object_get(it, "function"));
        }
        check(epoch_modeled && all_finite(m), "the epoch is modeled after the refused uploads");
        json_decref(m);
    }
    char *body = profile(1e60, 1, 1, 1);
    json_t *d = request_json(h, "POST", path, body, 400);
    check(!strcmp(json_string_value(json_object_get(d, "field")) ?: "", "point.ranks"),
          "a coordinate past the limit names it");
    json_decref(d);
    free(body);

    /* at the limit, with tiny values mixed in, and steps per epoch that
     * take one callpath's epoch values past the limit: it fails alone */
    long e2 = create(h, "/v1/experiments", experiment_body("edge-values", "\"ranks*1e58\""));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", e2);
    long job = 0;
    const double xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++) {
        body = profile(xs[i], 1e44 * xs[i], 1e-300, 1e-9 * xs[i]);
        d = request_json(h, "POST", path, body, 202);
        job = (long)json_integer_value(json_object_get(d, "job"));
        json_decref(d);
        free(body);
    }
    check(harness_wait_job(h, job, 60), "the refit of extreme values is done");
    char mp[128];
    snprintf(mp, sizeof mp, "/v1/experiments/%ld/models", e2);
    d = request_json(h, "GET", mp, NULL, 200);
    int failed_alone = 0, modeled = 0;
    json_t *m;
    size_t i;
    json_array_foreach(json_object_get(d, "models"), i, m)
    {
        const char *reason = json_string_value(json_object_get(m, "reason"));
        if (json_is_string(json_object_get(m, "function")))
            modeled++;
        else if (reason && strstr(reason, "1e+50"))
            failed_alone++;
    }
    check(failed_alone >= 1 && modeled >= 1 && all_finite(d),
          "past the limit a model fails alone, naming it (%d failed, %d modeled)", failed_alone,
          modeled);
    json_decref(d);
    const char *routes[] = {"measurements", "bottlenecks?at=ranks:256", "imbalance", "speedups",
                            "curve?name=small", "curve?name=epoch&level=application", "accuracy"};
    for (size_t k = 0; k < sizeof routes / sizeof routes[0]; k++) {
        snprintf(mp, sizeof mp, "/v1/experiments/%ld/%s", e2, routes[k]);
        d = request_json(h, "GET", mp, NULL, 200);
        check(d && all_finite(d), "%s answers finite numbers", routes[k]);
        json_decref(d);
    }
    snprintf(mp, sizeof mp, "/v1/experiments/%ld/advice", e2);
    harness_response r;
    const char *advice = "{\"target\":{\"ranks\":64},\"budget_core_hours\":1000}";
    harness_request(h, "POST", mp, "Content-Type: application/json\r\n", advice, strlen(advice),
                    &r);
    check(r.status == 200 || r.status == 409, "advice: %d %.200s", r.status, r.body);
    harness_response_free(&r);
}

/* ---- create -> read ------------------------------------------------------- */

/* The number at a dotted path ("cost.cores_per_rank", "set.stats.0.mean")
 * of doc. */
static const json_t *at_path(const json_t *doc, const char *path)
{
    char key[64];
    while (doc && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        doc = json_is_array(doc) ? json_array_get(doc, strtoul(key, NULL, 10))
                                 : json_object_get(doc, key);
        path += n + (dot ? 1 : 0);
    }
    return doc;
}

/* One create with x at field: 201 and x read back at read_path from every
 * document reads (single reads, then listings searched for the id), or 400
 * naming field. Returns 1 when accepted. */
static int round_trip(harness *h, const char *create_path, const char *body, const char *field,
                      double x, const char *const *reads, const char *read_path,
                      const char *list_key)
{
    harness_response r;
    harness_post(h, create_path, body, &r);
    json_t *d = harness_json(&r);
    int accepted = r.status == 201;
    if (r.status == 400) {
        const char *f = json_string_value(json_object_get(d, "field"));
        check(f && !strcmp(f, field), "%s = %.17g: 400 names %s", field, x, f ? f : "nothing");
    } else {
        check(accepted, "%s = %.17g: %d %.300s", field, x, r.status, r.body);
    }
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    harness_response_free(&r);
    if (!accepted)
        return 0;
    for (int k = 0; reads[k]; k++) {
        char path[160];
        snprintf(path, sizeof path, reads[k], id);
        harness_get(h, path, &r);
        d = harness_json(&r);
        check(r.status == 200, "%s = %.17g accepted, then GET %s: %d %.200s", field, x, path,
              r.status, r.body);
        const json_t *doc = d;
        int listed = list_key && json_is_array(json_object_get(d, list_key));
        if (listed) {
            doc = NULL;
            json_t *it;
            size_t j;
            json_array_foreach(json_object_get(d, list_key), j, it)
            {
                if (json_integer_value(json_object_get(it, "id")) == id)
                    doc = it;
            }
        }
        /* a listing's first page may end before the new item; a run's
         * batch_size 0 ("not known") is left out of its request */
        const json_t *v = at_path(doc, read_path);
        check((listed && !doc) || (json_is_number(v) && json_number_value(v) == x) ||
                  (!v && x == 0 && !strcmp(read_path, "request.batch_size")),
              "%s = %.17g read back from %s as %.17g", field, x, path,
              json_is_number(v) ? json_number_value(v) : NAN);
        json_decref(d);
        harness_response_free(&r);
    }
    return 1;
}

static void test_read_back(harness *h)
{
    /* a simulation with a step graph for the runs */
    long sim = create(h, "/v1/simulations", "{\"name\":\"edges\",\"batch_size\":32}");
    FILE *f = fopen("tests/data/simulate/stepgraph.json", "rb");
    static char graph[1 << 20];
    size_t glen = f ? fread(graph, 1, sizeof graph - 1, f) : 0;
    if (f)
        fclose(f);
    graph[glen] = '\0';
    char path[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    long prof = create(h, path, graph);

    int accepted = 0, refused = 0;
    char body[1024], runs[128], name[64];
    snprintf(runs, sizeof runs, "/v1/simulations/%ld/runs", sim);
    for (int i = 0; i < 40; i++) {
        double x = extreme_double();
        int n = 0;
        snprintf(name, sizeof name, "edge-%d", i);
        /* experiments: the cost set-up */
        static const char *const exp_reads[] = {"/v1/experiments/%ld", "/v1/experiments?limit=100", NULL};
        snprintf(body, sizeof body,
                 "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
                 "{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
                 "\"data_parallel\":\"ranks\"},\"cost\":{\"cores_per_rank\":%.17g,"
                 "\"price_per_core_hour\":1}}",
                 name, x);
        n += round_trip(h, "/v1/experiments", body, "cost.cores_per_rank", x, exp_reads,
                        "cost.cores_per_rank", "experiments");
        snprintf(body, sizeof body,
                 "{\"name\":\"%s-p\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
                 "{\"train_samples\":50000,\"validation_samples\":0,\"batch_size\":256,"
                 "\"data_parallel\":\"ranks\"},\"cost\":{\"cores_per_rank\":1,"
                 "\"price_per_core_hour\":%.17g}}",
                 name, x);
        n += round_trip(h, "/v1/experiments", body, "cost.price_per_core_hour", x, exp_reads,
                        "cost.price_per_core_hour", "experiments");
        snprintf(body, sizeof body,
                 "{\"name\":\"%s-t\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\",\"training\":"
                 "{\"train_samples\":%.17g,\"validation_samples\":0,\"batch_size\":256,"
                 "\"data_parallel\":\"ranks\"}}",
                 name, x);
        n += round_trip(h, "/v1/experiments", body, "training.train_samples", x, exp_reads,
                        "training.train_samples", "experiments");
        /* simulations: batch_size */
        static const char *const sim_reads[] = {"/v1/simulations/%ld", "/v1/simulations?limit=100", NULL};
        snprintf(body, sizeof body, "{\"name\":\"%s\",\"batch_size\":%.17g}", name, x);
        n += round_trip(h, "/v1/simulations", body, "batch_size", x, sim_reads, "batch_size",
                        "simulations");
        /* simulation runs: bandwidth, win, batch_size */
        char reads_run[160];
        snprintf(reads_run, sizeof reads_run, "/v1/simulations/%ld/runs/%%ld", sim);
        const char *const run_reads[] = {reads_run, NULL};
        const char *run_fields[] = {"bandwidth", "win", "batch_size"};
        for (int k = 0; k < 3; k++) {
            snprintf(body, sizeof body,
                     "{\"profile\":%ld,\"workers\":\"1..2\",\"servers\":[1],\"bandwidth\":1e9,"
                     "\"steps\":2,\"replications\":2,\"%s\":%.17g}",
                     prof, run_fields[k], x);
            if (k == 0) /* bandwidth itself varies */
                snprintf(body, sizeof body,
                         "{\"profile\":%ld,\"workers\":\"1..2\",\"servers\":[1],\"bandwidth\":"
                         "%.17g,\"steps\":2,\"replications\":2}",
                         prof, x);
            char rp[64];
            snprintf(rp, sizeof rp, "request.%s", run_fields[k]);
            n += round_trip(h, runs, body, run_fields[k], x, run_reads, rp, NULL);
        }
        /* devices: a peak and the DRAM bandwidth */
        static const char *const dev_reads[] = {"/v1/devices", NULL};
        snprintf(body, sizeof body,
                 "{\"name\":\"%s\",\"peak_flops\":{\"fp64\":%.17g,\"fp32\":2e13,\"tf32\":4e13,"
                 "\"fp16\":8e13},\"dram_bandwidth\":2e12}",
                 name, x);
        n += round_trip(h, "/v1/devices", body, "peak_flops.fp64", x, dev_reads,
                        "peak_flops.fp64", "devices");
        snprintf(body, sizeof body,
                 "{\"name\":\"%s-d\",\"peak_flops\":{\"fp64\":1e13,\"fp32\":2e13,\"tf32\":4e13,"
                 "\"fp16\":8e13},\"dram_bandwidth\":%.17g}",
                 name, x);
        n += round_trip(h, "/v1/devices", body, "dram_bandwidth", x, dev_reads, "dram_bandwidth",
                        "devices");
        /* overhead sets stored as given: a mean and the profiler overhead */
        static const char *const ov_reads[] = {"/v1/overhead-sets/%ld", NULL};
        snprintf(body, sizeof body,
                 "{\"name\":\"%s\",\"set\":{\"stats\":[{\"type\":\"T1\",\"name\":null,"
                 "\"mean\":%.17g}]}}",
                 name, x);
        n += round_trip(h, "/v1/overhead-sets", body, "set", x, ov_reads, "set.stats.0.mean",
                        NULL);
        snprintf(body, sizeof body,
                 "{\"name\":\"%s-c\",\"set\":{\"cpu_profiler_us\":%.17g,\"stats\":[{\"type\":"
                 "\"T1\",\"name\":null,\"mean\":1}]}}",
                 name, x);
        n += round_trip(h, "/v1/overhead-sets", body, "set", x, ov_reads, "set.cpu_profiler_us",
                        NULL);
        accepted += n;
        refused += 11 - n;
    }
    check(accepted > 40 && refused > 40, "create -> read: %d accepted and read back, %d refused "
                                         "naming the field",
          accepted, refused);
    json_t *d = request_json(h, "GET", "/v1/experiments?limit=100", NULL, 200);
    check(all_finite(d), "the whole listing reads");
    json_decref(d);
}

/* ---- a crashing worker ---------------------------------------------------- */

static void test_crash(void)
{
    /* the test build of the server (its directory's tests/perfcast-hooks) */
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char copy[512], hooks[600];
    snprintf(copy, sizeof copy, "%s", bin);
    snprintf(hooks, sizeof hooks, "%s/tests/perfcast-hooks", dirname(copy));
    if (access(hooks, X_OK)) {
        check(0, "%s: build it (make %s)", hooks, hooks);
        return;
    }
    char *old = getenv("PERFCAST_BIN") ? strdup(getenv("PERFCAST_BIN")) : NULL;
    setenv("PERFCAST_BIN", hooks, 1);
    const char *env[] = {"PERFCAST_TEST_CRASH_CALLPATH=small", "PERFCAST_JOB_LEASE=2", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (old) {
        setenv("PERFCAST_BIN", old, 1);
        free(old);
    } else {
        unsetenv("PERFCAST_BIN");
    }
    check(h != NULL, "server with test hooks started");
    if (!h)
        return;
    long exp = create(h, "/v1/experiments", experiment_body("crashing", "50000"));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    const double xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++) {
        char *body = profile(xs[i], xs[i], xs[i], 1e-3 * xs[i]);
        json_decref(request_json(h, "POST", path, body, 202));
        free(body);
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    json_t *d = request_json(h, "POST", path, NULL, 202);
    long job = (long)json_integer_value(json_object_get(d, "job"));
    json_decref(d);
    /* the worker aborts on callpath "small": the process goes */
    int gone = 0;
    for (int t = 0; t < 100 && !gone; t++) {
        harness_sleep(0.1);
        gone = !server_up(h);
    }
    check(gone, "the hook crashed the server");
    char state[32] = "", error[1024] = "", progress[128] = "";
    char q[160];
    for (int t = 0; t < 50; t++) {
        snprintf(q, sizeof q, "SELECT state FROM jobs WHERE id = %ld", job);
        harness_sql(h, q, state, sizeof state);
        if (!strcmp(state, "failed"))
            break;
        harness_sleep(0.1);
    }
    snprintf(q, sizeof q, "SELECT error FROM jobs WHERE id = %ld", job);
    harness_sql(h, q, error, sizeof error);
    snprintf(q, sizeof q, "SELECT progress FROM jobs WHERE id = %ld", job);
    harness_sql(h, q, progress, sizeof progress);
    long attempts = harness_sql_long(h, "SELECT attempts FROM jobs WHERE id = %ld", job);
    check(!strcmp(state, "failed") && attempts == 1, "failed after one attempt: %s, %ld", state,
          attempts);
    check(strstr(error, "\"small\"") && strstr(error, "fitting callpath models") &&
              strstr(error, "SIGABRT") && strstr(error, "not retried"),
          "the error names the callpath, the step and the signal: %s", error);
    check(!strcmp(progress, "fitting callpath models"), "the step was recorded before it: %s",
          progress);
    /* restarted (without the crashing callpath's hook mattering): nothing
     * claims the job again, also after several leases */
    harness_server_kill(h); /* reaps the crashed process */
    check(harness_server_start(h) == 0, "the server starts again");
    harness_sleep(5);
    snprintf(q, sizeof q, "SELECT state || ' ' || attempts FROM jobs WHERE id = %ld", job);
    harness_sql(h, q, state, sizeof state);
    check(!strcmp(state, "failed 1"), "still failed after one attempt: %s", state);
    char jp[64];
    snprintf(jp, sizeof jp, "/v1/jobs/%ld", job);
    d = request_json(h, "GET", jp, NULL, 200);
    const char *e = json_string_value(json_object_get(d, "error"));
    check(e && strstr(e, "\"small\""), "GET %s tells why: %s", jp, e ? e : "null");
    json_decref(d);
    check(server_up(h), "the server is up");
    harness_close(h, check_failed_count > 0);
}

/* A section that took the server down is a failure of its own: the next
 * one starts on a fresh process (same database). */
static void ensure_up(harness *h)
{
    if (server_up(h))
        return;
    harness_server_kill(h);
    check(harness_server_start(h) == 0 && server_up(h), "the server starts again");
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness started");
    if (!h)
        return check_summary();
    test_fit_abort(h);
    ensure_up(h);
    test_fit_property(h);
    ensure_up(h);
    test_profile_limits(h);
    ensure_up(h);
    test_read_back(h);
    check(server_up(h), "the server is up at the end");
    harness_close(h, check_failed_count > 0);
    test_crash();
    return check_summary();
}
