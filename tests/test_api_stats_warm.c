/*
 * test_api_stats_warm.c — statistics and sensitivity of a new model set,
 * warmed in the background when the set lands (api/stats_warm.h): the
 * very first request after the refit job is done answers from the new set
 * with the new data, whether it arrives while the warm is under way or
 * after it, and never from rows of an older set.
 *
 * Data: 19 legal points (ranks · threads <= 64) × 2 repetitions, the epoch
 * time at ranks 2, threads 1 is 100 steps × (2/1 + 0.2 + 0.01·2) = 222 per
 * repetition; later uploads add repetitions of that point at 1.5× and 0.5×,
 * so its mean goes 222 -> (222 + 222 + 333)/3 = 259 -> (777 + 111)/4 = 222
 * with SD 0 -> sqrt(((−37)² · 2 + 74²)/2) = 64.0859... -> sqrt((0 + 0 + 111² +
 * 111²)/3) = 90.631...
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

static const double ranks_v[5] = {2, 4, 8, 16, 32}, threads_v[5] = {1, 2, 4, 8, 16};

static long create(harness *h, const char *name)
{
    char body[400];
    snprintf(body, sizeof body,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\",\"threads\"],"
             "\"scaling\":\"strong\",\"training\":{\"train_samples\":51200,"
             "\"validation_samples\":0,\"batch_size\":256,\"data_parallel\":\"ranks\","
             "\"warmup_steps\":0}}",
             name);
    json_t *d = request_json(h, "POST", "/v1/experiments", body, 201);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    return id;
}

/* one run: every callpath's time × factor */
static void upload(harness *h, long exp, double r, double t, int rep, double factor)
{
    json_t *ranks = json_array();
    for (int k = 0; k < 2; k++) {
        json_t *st = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *cps = json_pack("[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]", "name", "gemm",
                                    "category", "comp", "metrics", "time", (2 / t + 0.2) * factor,
                                    "name", "allreduce", "category", "comm", "metrics", "time",
                                    0.01 * r * factor);
            json_array_append_new(st, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", k, "steps", st));
    }
    json_t *p = json_pack("{s:{s:f, s:f}, s:i, s:o}", "point", "ranks", r, "threads", t,
                          "repetition", rep, "ranks", ranks);
    char *body = json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    json_decref(request_json(h, "POST", path, body, 202));
    free(body);
    json_decref(p);
}

/* the statistics item of ranks 2, threads 1 (a new reference), and the
 * answer's model set */
static json_t *stats_item(harness *h, long exp, int *set)
{
    char path[200];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch",
             exp);
    json_t *s = request_json(h, "GET", path, NULL, 200), *it = NULL, *x;
    size_t i;
    json_array_foreach(json_object_get(s, "items"), i, x)
    {
        json_t *pt = json_object_get(x, "point");
        if (json_number_value(json_object_get(pt, "ranks")) == 2 &&
            json_number_value(json_object_get(pt, "threads")) == 1)
            it = json_incref(x);
    }
    check(json_array_size(json_object_get(s, "items")) == 19, "19 epoch measurements, got %zu",
          json_array_size(json_object_get(s, "items")));
    *set = (int)json_integer_value(json_object_get(s, "model_set"));
    json_decref(s);
    return it;
}

/* sensitivity's run of ranks 2, threads 1: its repetitions; and the set */
static long sensitivity_n(harness *h, long exp, int *set)
{
    char path[120];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity", exp);
    json_t *s = request_json(h, "GET", path, NULL, 200), *x;
    size_t i;
    long n = -1;
    json_array_foreach(json_object_get(s, "runs"), i, x)
    {
        json_t *pt = json_object_get(x, "point");
        if (json_number_value(json_object_get(pt, "ranks")) == 2 &&
            json_number_value(json_object_get(pt, "threads")) == 1)
            n = (long)json_integer_value(json_object_get(x, "n"));
    }
    *set = (int)json_integer_value(json_object_get(s, "model_set"));
    json_decref(s);
    return n;
}

static void expect(harness *h, long exp, int want_set, int want_n, double mean, double sd,
                   const char *when)
{
    int set = 0, sset = 0;
    json_t *it = stats_item(h, exp, &set);
    check(set == want_set, "%s: statistics of model set %d, got %d", when, want_set, set);
    check(it && json_integer_value(json_object_get(it, "n")) == want_n &&
              check_close(json_number_value(json_object_get(it, "mean")), mean, 1e-9, 0) &&
              check_close(json_number_value(json_object_get(it, "sd")), sd, 1e-9, 1e-9),
          "%s: ranks 2, threads 1: n %d, mean %.10g, SD %.10g; got n %lld, mean %.10g, SD %.10g",
          when, want_n, mean, sd, (long long)json_integer_value(json_object_get(it, "n")),
          json_number_value(json_object_get(it, "mean")),
          json_number_value(json_object_get(it, "sd")));
    json_decref(it);
    long n = sensitivity_n(h, exp, &sset);
    check(sset == want_set && n == want_n, "%s: sensitivity of set %d with %d repetitions, got "
          "set %d with %ld", when, want_set, want_n, sset, n);
}

/* every legal point, two repetitions */
static void upload_all(harness *h, long exp)
{
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 5; b++)
            for (int rep = 1; rep <= 2; rep++)
                if (ranks_v[a] * threads_v[b] <= 64)
                    upload(h, exp, ranks_v[a], threads_v[b], rep, 1.0);
}

/* An experiment nobody has asked: its first set is warmed all the same.
 * Once the warm is over its measurements are deleted behind the server's
 * back, so that only rows kept by the warm can answer: a page of the epoch
 * statistics never asked (offset 3, limit 5 of the 19 points in the order
 * of their coordinates: (2,8) (2,16) (4,1) (4,2) (4,4); at (4,1) every
 * repetition is 51200 / 256 / 4 = 50 steps × (2/1 + 0.2 + 0.01·4) = 112)
 * and the default sensitivity. */
static void test_never_asked(harness *h)
{
    long exp = create(h, "warm-unasked");
    upload_all(h, exp);
    request_refit(h, exp);
    harness_sleep(2.0);
    char sql[300], out[32];
    snprintf(sql, sizeof sql,
             "DELETE FROM measurements WHERE model_set_id IN "
             "(SELECT id FROM model_sets WHERE experiment_id = %ld)",
             exp);
    check(harness_sql(h, sql, out, sizeof out) == 0, "measurements deleted");
    char path[200];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&offset=3&limit=5", exp);
    json_t *s = request_json(h, "GET", path, NULL, 200);
    json_t *items = json_object_get(s, "items");
    static const double want[5][2] = {{2, 8}, {2, 16}, {4, 1}, {4, 2}, {4, 4}};
    int order = json_array_size(items) == 5;
    for (size_t i = 0; order && i < 5; i++) {
        json_t *pt = json_object_get(json_array_get(items, i), "point");
        order = json_number_value(json_object_get(pt, "ranks")) == want[i][0] &&
                json_number_value(json_object_get(pt, "threads")) == want[i][1];
    }
    json_t *at41 = json_array_get(items, 2);
    check(order, "the page of a set nobody asked: points 4-8 of 19 from the warmed rows");
    check(check_close(json_number_value(json_object_get(at41, "mean")), 112, 1e-12, 0) &&
              json_integer_value(json_object_get(at41, "n")) == 2,
          "ranks 4, threads 1: mean 112 over 2 repetitions, got %.10g over %lld",
          json_number_value(json_object_get(at41, "mean")),
          (long long)json_integer_value(json_object_get(at41, "n")));
    check(json_integer_value(json_object_get(s, "next_offset")) == 8, "next_offset 8");
    json_decref(s);
    int set = 0;
    check(sensitivity_n(h, exp, &set) == 2 && set == 1,
          "the default sensitivity of the warmed set: 2 repetitions at (2,1) of set 1");
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    long exp = create(h, "warm");
    upload_all(h, exp);
    request_refit(h, exp);
    harness_sleep(1.2); /* the first set: asked once so that later sets are warmed */
    expect(h, exp, 1, 2, 222, 0, "first set");

    /* a new set, asked for as soon as its job is done: the warm may be
     * under way (the request waits for it) or not yet begun */
    upload(h, exp, 2, 1, 3, 1.5);
    request_refit(h, exp);
    expect(h, exp, 2, 3, 259, sqrt((37.0 * 37 * 2 + 74.0 * 74) / 2), "at once after the refit");

    /* another, asked for once the warm is surely over: the rows kept by
     * the warm are the new set's */
    upload(h, exp, 2, 1, 4, 0.5);
    request_refit(h, exp);
    harness_sleep(2.0);
    expect(h, exp, 3, 4, 222, sqrt(111.0 * 111 * 2 / 3), "after the warm");
    test_never_asked(h);
    int failed = check_failed_count;
    harness_close(h, failed > 0);
    return check_summary();
}
