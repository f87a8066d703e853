/*
 * test_api_simulate.c — the simulator over HTTP against a real PostgreSQL:
 * simulation experiments, uploads of step graphs and traces (the files in
 * tests/data/simulate/), runs answered at once with answers known by hand
 * (computation only: W / step time), the steady window after the warm-up
 * and its fallback to the whole run, a larger run queued and done by a
 * worker thread, runs on a graph too large to read in the request queued
 * (six clients at once, each answered 202, each run stored once), bad
 * input answered 400 naming the operation and the field
 * with nothing stored, and another tenant's simulation answering 404.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "store/simulations.h"
#include "tests/check.h"
#include "tests/harness.h"

static long post_id(harness *h, const char *path, const char *body, int want)
{
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    long id = doc ? (long)json_integer_value(json_object_get(doc, "id")) : 0;
    check(r.status == want && id > 0, "POST %s: %d, want %d: %.300s", path, r.status, want,
          r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
    return id;
}

/* POST and expect 400 naming field (and operation when given). */
static void expect_400(harness *h, const char *path, const char *body, const char *field,
                       const char *op)
{
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    const char *f = json_string_value(json_object_get(doc, "field"));
    const char *o = json_string_value(json_object_get(doc, "operation"));
    char ctype[64] = "";
    harness_header(&r, "Content-Type", ctype, sizeof ctype);
    check(r.status == 400 && !strcmp(ctype, "application/problem+json") && f &&
              !strcmp(f, field) && (!op || (o && !strcmp(o, op))),
          "%s: %d field %s op %s: %.300s", field, r.status, f ? f : "-", o ? o : "-",
          r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
}

static void test_profiles(harness *h)
{
    long sim = post_id(h, "/v1/simulations",
                       "{\"name\":\"four-layers\",\"batch_size\":32,\"overhead\":{\"pairs\":"
                       "[[1000,0.00005],[2000000,0.00405]]}}",
                       201);
    /* two pairs: the line through them, alpha = 0.004/1999000, beta = 0.00005 - alpha*1000 */
    char path[128], out[64];
    snprintf(path, sizeof path, "/v1/simulations/%ld", sim);
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    double alpha = json_real_value(json_object_get(json_object_get(doc, "overhead"), "alpha"));
    double want = 0.004 / 1999000;
    check(r.status == 200 && check_close(alpha, want, 1e-9, 0), "alpha %g, want %g", alpha, want);
    json_decref(doc);
    harness_response_free(&r);

    size_t len;
    char *graph = harness_read_file("tests/data/simulate/stepgraph.json", &len);
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    long p1 = post_id(h, path, graph, 201);
    harness_post(h, path, graph, &r);
    check(r.status == 200 && strstr(r.body, "\"duplicate\":true"), "same bytes: %d", r.status);
    harness_response_free(&r);
    free(graph);
    char *tf = harness_read_file("tests/data/simulate/tf_timeline.json", &len);
    long p2 = post_id(h, path, tf, 201);
    free(tf);
    check(p2 > p1, "second profile");
    /* a trace keeps the step graph made of it as text, read back for a run */
    check(harness_sql_long(h, "SELECT count(*) FROM sim_profiles WHERE id = %ld AND "
                              "source = 'tensorflow' AND graph <> ''", p2) == 1,
          "the trace's graph is stored");
    char runs[96], req[160];
    snprintf(runs, sizeof runs, "/v1/simulations/%ld/runs", sim);
    snprintf(req, sizeof req, "{\"profile\":%ld,\"workers\":1,\"bandwidth\":\"1Gbit\","
             "\"steps\":4,\"replications\":1,\"warmup_steps\":0}", p2);
    harness_post(h, runs, req, &r);
    check(r.status == 201 && strstr(r.body, "\"steps_per_s\""), "run on the trace's graph: %d %.200s",
          r.status, r.body);
    harness_response_free(&r);

    /* bad graphs: 400 naming the operation and the field; nothing stored */
    long before = harness_sql_long(h, "SELECT count(*) FROM sim_profiles");
    expect_400(h, path,
               "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1,"
               "\"deps\":[\"b\"]},{\"id\":\"b\",\"resource\":\"worker\",\"duration\":1,"
               "\"deps\":[\"a\"]}]}]}",
               "steps[0].ops[a].deps", "a");
    expect_400(h, path,
               "{\"steps\":[{\"ops\":[{\"id\":\"x\",\"resource\":\"worker\",\"duration\":1,"
               "\"deps\":[\"nowhere\"]}]}]}",
               "steps[0].ops[x].deps", "x");
    expect_400(h, path, "{\"steps\":[{\"ops\":[{\"id\":\"t\",\"resource\":\"uplink\"}]}]}",
               "steps[0].ops[t].bytes", "t");
    expect_400(h, path,
               "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\",\"duration\":-1}]}]}",
               "steps[0].ops[n].duration", "n");
    /* a step that would take no time: 400 naming the duration, not 0 steps/s */
    expect_400(h, path,
               "{\"steps\":[{\"ops\":[{\"id\":\"z\",\"resource\":\"worker\",\"duration\":0},"
               "{\"id\":\"u\",\"resource\":\"ps\",\"duration\":0,\"deps\":[\"z\"]}]}]}",
               "steps[0].ops[z].duration", "z");
    expect_400(h, path, "{\"steps\":[{\"ops\":[{\"id\":\"g\",\"resource\":\"gpu\",\"duration\":1}]}]}",
               "steps[0].ops[g].resource", "g");
    /* a step's own fault names that step; of two, the second */
    expect_400(h, path, "{\"steps\":[{\"ops\":[]}]}", "steps[0].ops", NULL);
    expect_400(h, path,
               "{\"steps\":[{\"ops\":[{\"id\":\"a\",\"resource\":\"worker\",\"duration\":1}]},"
               "{\"ops\":[{\"id\":\"z\",\"resource\":\"worker\",\"duration\":0}]}]}",
               "steps[1].ops[z].duration", "z");
    /* a body that is not JSON: "body" and the byte where the parser stopped
     * ({"steps":[ is 10 bytes; NaN is refused on its N, byte 59, once read) */
    expect_400(h, path, "{\"steps\":[", "body", NULL);
    harness_post(h, path, "{\"steps\":[{\"ops\":[{\"id\":\"n\",\"resource\":\"worker\","
                          "\"duration\":NaN}]}]}", &r);
    doc = harness_json(&r);
    const char *nan_field = json_string_value(json_object_get(doc, "field"));
    check(r.status == 400 && json_integer_value(json_object_get(doc, "offset")) == 60 &&
              nan_field && !strcmp(nan_field, "body"),
          "NaN: %d %.300s", r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
    expect_400(h, path,
               "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"_Send\",\"pid\":1,\"tid\":1,\"ts\":0,"
               "\"dur\":3,\"args\":{\"name\":\"grad/_send\",\"op\":\"_Send\"}}]}",
               "steps[0].ops[grad/_send#0].bytes", "grad/_send#0");
    check(harness_sql_long(h, "SELECT count(*) FROM sim_profiles") == before,
          "nothing stored by bad uploads");
    snprintf(out, sizeof out, "%ld", sim);
    (void)out;

    /* a run on the newest profile (the timeline) and on the first one by id */
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    char body[256];
    snprintf(body, sizeof body,
             "{\"profile\":%ld,\"workers\":\"1..4\",\"servers\":[1,2],\"bandwidth\":\"1Gbit\","
             "\"replications\":3,\"steps\":20,\"what_if\":[{\"flow_control\":false}]}",
             p1);
    harness_post(h, path, body, &r);
    doc = harness_json(&r);
    json_t *res = json_object_get(doc, "result");
    check(r.status == 201 && json_array_size(json_object_get(res, "results")) == 2 &&
              json_array_size(json_object_get(res, "what_if")) == 1 &&
              json_real_value(json_object_get(res, "batch_size")) == 32,
          "run: %d %.300s", r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
}

/* The point of W workers in the first results of a run's answer. */
static json_t *point_of(json_t *res, int w)
{
    return json_array_get(json_object_get(json_array_get(json_object_get(res, "results"), 0),
                                          "points"),
                          (size_t)(w - 1));
}

/* POSTs body to runs; the answer's result (the document kept in *doc). */
static json_t *run_result(harness *h, const char *runs, const char *body, json_t **doc)
{
    harness_response r;
    harness_post(h, runs, body, &r);
    *doc = harness_json(&r);
    check(r.status == 201, "run %s: %d %.300s", body, r.status, r.body ? r.body : "");
    harness_response_free(&r);
    return json_object_get(*doc, "result");
}

/* 0.25 s of computation per step, all W workers end each step together:
 * with the default warm-up of 50 and 100 steps, W = 3 leaves out rounds
 * 1..17 (the 50th step ends in round 17, with the 49th and 51st): the
 * window (4.25, 25] holds 3 · 83 = 249 steps, 12 steps/s as over the whole
 * run; warm-up 0 reports the whole run as the window; a warm-up beyond the
 * run falls back to the whole run, window null, one warning per point. */
static void test_window(harness *h, const char *runs)
{
    json_t *doc;
    json_t *res = run_result(h, runs, "{\"workers\":\"1..3\",\"bandwidth\":\"10Gbit\"}", &doc);
    json_t *win = json_object_get(point_of(res, 3), "window");
    check(json_integer_value(json_object_get(res, "warmup_steps")) == 50 &&
              json_integer_value(json_object_get(json_object_get(doc, "request"),
                                                 "warmup_steps")) == 50 &&
              check_close(json_real_value(json_object_get(win, "from_s")), 4.25, 1e-12, 0) &&
              check_close(json_real_value(json_object_get(win, "to_s")), 25, 1e-12, 0) &&
              json_real_value(json_object_get(win, "steps")) == 249 &&
              json_array_size(json_object_get(res, "warnings")) == 0,
          "default warm-up 50: window of W = 3 (4.25, 25] with 249 steps");
    json_decref(doc);

    res = run_result(h, runs, "{\"workers\":\"1..3\",\"bandwidth\":\"10Gbit\",\"warmup_steps\":0}",
                     &doc);
    win = json_object_get(point_of(res, 2), "window");
    check(json_integer_value(json_object_get(res, "warmup_steps")) == 0 &&
              json_real_value(json_object_get(win, "from_s")) == 0 &&
              check_close(json_real_value(json_object_get(win, "to_s")), 25, 1e-12, 0) &&
              json_real_value(json_object_get(win, "steps")) == 200 &&
              check_close(json_real_value(json_object_get(json_object_get(point_of(res, 2),
                                                                          "steps_per_s"),
                                                          "mean")),
                          8, 1e-12, 0) &&
              json_array_size(json_object_get(res, "warnings")) == 0,
          "warm-up 0: the whole run (0, 25] with 200 steps at W = 2");
    json_decref(doc);

    res = run_result(h, runs,
                     "{\"workers\":\"1..3\",\"bandwidth\":\"10Gbit\",\"steps\":20,"
                     "\"warmup_steps\":1000,\"what_if\":[{\"win\":\"4MB\"}]}",
                     &doc);
    json_t *warn = json_object_get(res, "warnings");
    int ok = json_array_size(warn) == 6;
    for (int w = 1; w <= 3; w++) {
        json_t *p = point_of(res, w);
        ok &= json_is_null(json_object_get(p, "window")) &&
              check_close(json_real_value(json_object_get(json_object_get(p, "steps_per_s"),
                                                          "mean")),
                          w / 0.25, 1e-12, 0);
    }
    const char *w0 = json_string_value(json_object_get(json_array_get(warn, 0), "message"));
    const char *w5 = json_string_value(json_object_get(json_array_get(warn, 5), "message"));
    for (size_t k = 0; k < json_array_size(warn); k++)
        ok &= !strcmp(json_string_value(json_object_get(json_array_get(warn, k), "code")) ?: "",
                      "window_fallback");
    ok &= json_integer_value(json_object_get(json_array_get(warn, 5), "workers")) == 3 &&
          json_integer_value(json_object_get(json_array_get(warn, 5), "servers")) == 1;
    check(ok && w0 && strstr(w0, "servers 1, workers 1:") && strstr(w0, "warm-up of 1000") &&
              w5 && !strncmp(w5, "what_if[0]: servers 1, workers 3:", 33),
          "warm-up beyond the run: whole run, window null, a warning per point (%d): %.300s",
          (int)json_array_size(warn), w0 ? w0 : "-");
    json_decref(doc);
}

/* total_steps: the configuration's steps, each of W workers ⌈total / W⌉:
 * 10 over W = 1, 2, 3 is 10, 5 and 4 steps each (10, 10 and 12 in all, the
 * whole run's window with warm-up 0); computation alone still gives W /
 * 0.25 s; the request echoes total_steps, not steps; both at once, or a
 * count out of range: 400 naming total_steps. */
static void test_total_steps(harness *h, const char *runs)
{
    json_t *doc;
    json_t *res = run_result(h, runs,
                             "{\"workers\":\"1..3\",\"bandwidth\":\"10Gbit\",\"total_steps\":10,"
                             "\"warmup_steps\":0}",
                             &doc);
    static const int per[3] = {10, 5, 4};
    int ok = json_integer_value(json_object_get(res, "total_steps")) == 10 &&
             json_is_null(json_object_get(res, "steps_per_worker"));
    for (int w = 1; w <= 3; w++) {
        json_t *p = point_of(res, w);
        ok &= json_integer_value(json_object_get(p, "steps_per_worker")) == per[w - 1] &&
              json_real_value(json_object_get(json_object_get(p, "window"), "steps")) ==
                  w * per[w - 1] &&
              check_close(json_real_value(json_object_get(json_object_get(p, "steps_per_s"),
                                                          "mean")),
                          w / 0.25, 1e-12, 0);
    }
    json_t *req = json_object_get(doc, "request");
    check(ok && json_integer_value(json_object_get(req, "total_steps")) == 10 &&
              !json_object_get(req, "steps"),
          "total_steps 10: 10, 5 and 4 steps per worker at W = 1, 2, 3, W / 0.25 steps/s");
    json_decref(doc);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"steps\":10,\"total_steps\":100}",
               "total_steps", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"total_steps\":0}", "total_steps", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"total_steps\":2.5}", "total_steps", NULL);
}

static void test_runs(harness *h)
{
    long sim = post_id(h, "/v1/simulations", "{\"name\":\"compute\",\"batch_size\":10}", 201);
    char path[128], runs[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    /* 0.25 s of computation per step: W / 0.25 steps/s, 10 samples per step */
    post_id(h, path,
            "{\"steps\":[{\"ops\":[{\"id\":\"fwd\",\"resource\":\"worker\",\"duration\":0.1},"
            "{\"id\":\"bwd\",\"resource\":\"worker\",\"duration\":0.15,\"deps\":[\"fwd\"]}]}]}",
            201);
    snprintf(runs, sizeof runs, "/v1/simulations/%ld/runs", sim);
    harness_response r;
    harness_post(h, runs,
                 "{\"workers\":\"1..3\",\"bandwidth\":\"10Gbit\",\"replications\":2,"
                 "\"target_samples_per_s\":100,\"price_per_worker_hour\":2,"
                 "\"price_per_server_hour\":1}",
                 &r);
    json_t *doc = harness_json(&r);
    json_t *res = json_object_get(doc, "result");
    json_t *pts = json_object_get(json_array_get(json_object_get(res, "results"), 0), "points");
    int ok = r.status == 201 && json_array_size(pts) == 3;
    for (size_t i = 0; ok && i < 3; i++) {
        json_t *p = json_array_get(pts, i);
        double thr = json_real_value(json_object_get(json_object_get(p, "steps_per_s"), "mean"));
        double smp = json_real_value(json_object_get(json_object_get(p, "samples_per_s"), "mean"));
        ok = check_close(thr, (i + 1) / 0.25, 1e-12, 0) && check_close(smp, 10 * thr, 1e-12, 0);
    }
    check(ok, "W / 0.25 steps/s: %d %.400s", r.status, r.body ? r.body : "");
    json_t *cheap = json_object_get(json_object_get(res, "cheapest"), "setup");
    /* 100 samples/s needs 10 steps/s: W = 3 (12), 3 x 2 + 1 = 7 per hour */
    check(json_integer_value(json_object_get(cheap, "workers")) == 3 &&
              json_real_value(json_object_get(json_object_get(res, "cheapest"),
                                              "price_per_hour")) == 7,
          "cheapest W = 3 at 7 per hour");
    char loc[128];
    check(harness_header(&r, "Location", loc, sizeof loc) == 1, "Location");
    long run = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    char rpath[160];
    snprintf(rpath, sizeof rpath, "%s/%ld", runs, run);
    check(!strcmp(loc, rpath), "Location %s", loc);
    harness_get(h, rpath, &r);
    check(r.status == 200 && strstr(r.body, "\"state\":\"done\""), "GET run: %d", r.status);
    harness_response_free(&r);

    test_window(h, runs);
    test_total_steps(h, runs);

    /* a mixed worker list, as the CLI takes it; computation-bound at 100
     * Gbit/s, so throughput keeps growing: no saturation point is named */
    harness_post(h, runs, "{\"workers\":\"1..2,4,8\",\"bandwidth\":\"100Gbit\",\"steps\":20,"
                          "\"replications\":1,\"warmup_steps\":0}", &r);
    doc = harness_json(&r);
    json_t *res0 = json_array_get(json_object_get(json_object_get(doc, "result"), "results"), 0);
    json_t *mpts = json_object_get(res0, "points");
    check(r.status == 201 && json_array_size(mpts) == 4 &&
              json_integer_value(json_object_get(json_array_get(mpts, 2), "workers")) == 4 &&
              json_integer_value(json_object_get(json_array_get(mpts, 3), "workers")) == 8,
          "workers 1..2,4,8: %d %.300s", r.status, r.body);
    check(json_is_null(json_object_get(res0, "saturation_workers")) &&
              json_integer_value(json_object_get(res0, "no_saturation_up_to")) == 8,
          "no saturation up to 8: %.200s", r.body);
    json_decref(doc);
    harness_response_free(&r);
    /* one W compares nothing: neither a saturation point nor "keeps growing" */
    harness_post(h, runs, "{\"workers\":[4],\"bandwidth\":\"100Gbit\",\"steps\":20,"
                          "\"replications\":1,\"warmup_steps\":0}", &r);
    doc = harness_json(&r);
    res0 = json_array_get(json_object_get(json_object_get(doc, "result"), "results"), 0);
    check(r.status == 201 && json_is_null(json_object_get(res0, "saturation_workers")) &&
              !json_object_get(res0, "no_saturation_up_to"),
          "one W: %d %.300s", r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);

    /* bad requests: 400 naming the member, no run stored */
    long before = harness_sql_long(h, "SELECT count(*) FROM sim_runs");
    expect_400(h, runs, "{\"workers\":0,\"bandwidth\":\"1Gbit\"}", "workers", NULL);
    expect_400(h, runs, "{\"workers\":\"1..5000\",\"bandwidth\":\"1Gbit\"}", "workers", NULL);
    expect_400(h, runs, "{\"servers\":0,\"bandwidth\":\"1Gbit\"}", "servers", NULL);
    expect_400(h, runs, "{\"servers\":[1,99],\"bandwidth\":\"1Gbit\"}", "servers", NULL);
    expect_400(h, runs, "{\"workers\":4}", "bandwidth", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"-3Gbit\"}", "bandwidth", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"win\":0}", "win", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"replications\":0}", "replications", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"colour\":\"red\"}", "colour", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"warmup_steps\":-1}", "warmup_steps", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"warmup_steps\":2.5}", "warmup_steps", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"warmup_steps\":\"50\"}", "warmup_steps",
               NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"warmup_steps\":100000001}", "warmup_steps",
               NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"what_if\":[{\"bandwidth\":\"x\"}]}",
               "what_if[0].bandwidth", NULL);
    /* too many events: the member that weighs most is named, W = 1..1024
     * (sum 524800) against 100000 steps, then 100000 steps against 8 workers
     * (sum 255) */
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"steps\":100000,\"workers\":1024,"
                        "\"replications\":100}", "workers", NULL);
    expect_400(h, runs, "{\"bandwidth\":\"1Gbit\",\"steps\":100000,"
                        "\"workers\":[1,2,4,8,16,32,64,128],\"replications\":100}", "steps", NULL);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs") == before, "no run stored");

    /* about 21 million events: queued (202) and done by a worker thread */
    harness_post(h, runs,
                 "{\"workers\":\"1..45\",\"bandwidth\":\"10Gbit\",\"steps\":5000,"
                 "\"replications\":2}",
                 &r);
    doc = harness_json(&r);
    run = (long)json_integer_value(json_object_get(doc, "id"));
    check(r.status == 202 && strstr(r.body, "\"state\":\"queued\""), "queued: %d %.200s",
          r.status, r.body ? r.body : "");
    json_decref(doc);
    harness_response_free(&r);
    snprintf(rpath, sizeof rpath, "%s/%ld", runs, run);
    int done = 0;
    for (double t0 = harness_now(); !done && harness_now() - t0 < 60; harness_sleep(0.2)) {
        harness_get(h, rpath, &r);
        done = r.status == 200 && strstr(r.body, "\"state\":\"done\"");
        if (done) {
            doc = harness_json(&r);
            json_t *p = json_array_get(json_object_get(json_array_get(json_object_get(
                                           json_object_get(doc, "result"), "results"), 0),
                                                       "points"), 44);
            double thr =
                json_real_value(json_object_get(json_object_get(p, "steps_per_s"), "mean"));
            check(check_close(thr, 45 / 0.25, 1e-12, 0), "W = 45: %g steps/s, want 180", thr);
            json_decref(doc);
        }
        harness_response_free(&r);
    }
    check(done, "the queued run is done within 60 s");
}

/* A copy of a done run, running for worker with attempts and a lease
 * ending `lease` from now (an SQL interval; negative: expired). */
static long running_copy(harness *h, long from, const char *worker, int attempts,
                         const char *lease)
{
    return harness_sql_long(h,
                            "INSERT INTO sim_runs (sim_experiment_id, profile_id, request, state, "
                            "worker, attempts, lease_until, started_at) SELECT sim_experiment_id, "
                            "profile_id, request, 'running', '%s', %d, now() + interval '%s', "
                            "now() - interval '2 minutes' FROM sim_runs WHERE id = %ld "
                            "RETURNING id",
                            worker, attempts, lease, from);
}

/* Leases of queued runs: a run whose worker stopped (its lease expired) is
 * claimed again by the server's workers and done; one whose worker is alive
 * (lease ahead) is left alone; one whose lease expired with no attempts left
 * is failed naming the lease; the stopped worker cannot record an outcome
 * over the new attempt's. */
static void test_leases(harness *h)
{
    long from = harness_sql_long(h, "SELECT min(id) FROM sim_runs WHERE state = 'done'");
    long dead = running_copy(h, from, "gone:1:sim-0", 1, "-1 minute");
    long alive = running_copy(h, from, "alive:1:sim-0", 1, "1 hour");
    long spent = running_copy(h, from, "gone:2:sim-0", 3, "-1 minute");
    check(dead > 0 && alive > 0 && spent > 0, "runs inserted: %ld %ld %ld", dead, alive, spent);
    int done = 0;
    for (double t0 = harness_now(); !done && harness_now() - t0 < 30; harness_sleep(0.2))
        done = harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND state = "
                                   "'done' AND result IS NOT NULL", dead) == 1;
    check(done, "the run of the stopped worker is claimed again and done within 30 s");
    check(harness_sql_long(h, "SELECT attempts FROM sim_runs WHERE id = %ld", dead) == 2 &&
              harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND worker <> "
                                  "'gone:1:sim-0' AND lease_until IS NULL", dead) == 1,
          "second attempt, by another worker, lease cleared");
    char path[160];
    long sim = harness_sql_long(h, "SELECT sim_experiment_id FROM sim_runs WHERE id = %ld", dead);
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs/%ld", sim, dead);
    harness_response r;
    harness_get(h, path, &r);
    check(r.status == 200 && strstr(r.body, "\"state\":\"done\"") &&
              strstr(r.body, "\"result\""),
          "GET the reclaimed run: %d %.2000s", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND state = "
                              "'running' AND worker = 'alive:1:sim-0' AND attempts = 1", alive) == 1,
          "the run of the live worker is still its own");
    /* failed by the next claim of a worker: the one that took the stopped
     * worker's run may have claimed it before this run was inserted, and
     * claims again only once that run is done */
    int failed = 0;
    for (double t0 = harness_now(); !failed && harness_now() - t0 < 30; harness_sleep(0.05))
        failed = harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND state = "
                                     "'failed' AND error LIKE 'lease expired: worker "
                                     "gone:2:sim-0%%'", spent) == 1;
    check(failed, "no attempts left: failed naming the lease");

    /* the store's fencing, on a connection of our own, with the server
     * stopped so that its workers do not race for the expired lease below */
    check(harness_server_stop(h) == 0, "server stopped");
    PGconn *c = PQconnectdb(harness_database_url(h));
    check(PQstatus(c) == CONNECTION_OK, "connect");
    store_error err = {0};
    check(store_sim_run_finish(c, dead, "gone:1:sim-0", 1, "{}", NULL, &err) == STORE_CONFLICT,
          "the stopped worker's outcome is refused: %s", err.msg);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE id = %ld AND result <> '{}'",
                           dead) == 1, "the new attempt's result stays");
    check(store_sim_run_heartbeat(c, alive, "alive:1:sim-0", 1, 60, &err) == STORE_OK,
          "the live worker renews its lease: %s", err.msg);
    check(store_sim_run_heartbeat(c, alive, "thief:1:sim-0", 1, 60, &err) == STORE_CONFLICT,
          "nobody else can");
    store_sim_run run;
    check(store_sim_run_claim(c, "thief:1:sim-0", 60, &run, &err) == STORE_NOT_FOUND,
          "nothing to claim while the lease is live");
    /* once its lease is over, anyone may take it */
    harness_sql_long(h, "UPDATE sim_runs SET lease_until = now() - interval '1 second' WHERE id = "
                        "%ld", alive);
    int rc = store_sim_run_claim(c, "thief:1:sim-0", 60, &run, &err);
    check(rc == STORE_OK && run.id == alive && run.attempts == 2 &&
              !strcmp(run.worker, "thief:1:sim-0"),
          "an expired lease is claimed: rc %d run %ld attempt %d", rc, (long)run.id, run.attempts);
    if (rc == STORE_OK) {
        check(store_sim_run_finish(c, alive, "thief:1:sim-0", 2, NULL, "stopped by the test",
                                   &err) == STORE_OK,
              "the holder records the outcome: %s", err.msg);
        store_sim_run_free(&run);
    }
    PQfinish(c);
    check(harness_server_start(h) == 0, "server started again");
}

static void test_tenancy(harness *h)
{
    /* a token of another tenant: the default tenant's simulations are not its */
    char cmd[1024], file[300], tok[128] = "";
    snprintf(file, sizeof file, "%s/sim-token.txt", harness_dir(h));
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    snprintf(cmd, sizeof cmd, "env DATABASE_URL='%s' %s token create --tenant other --scope write "
             ">%s 2>/dev/null", harness_database_url(h), bin, file);
    int rc = system(cmd);
    FILE *f = fopen(file, "r");
    if (f) {
        if (!fgets(tok, sizeof tok, f))
            tok[0] = 0;
        fclose(f);
    }
    tok[strcspn(tok, "\n")] = 0;
    check(WIFEXITED(rc) && WEXITSTATUS(rc) == 0 && !strncmp(tok, "pcf_", 4), "token: %s", tok);
    long sim = harness_sql_long(h, "SELECT min(id) FROM sim_experiments");
    char path[128], hdr[256];
    snprintf(path, sizeof path, "/v1/simulations/%ld", sim);
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\n", tok);
    harness_response r;
    harness_request(h, "GET", path, hdr, NULL, 0, &r);
    check(r.status == 404, "another tenant's simulation: %d", r.status);
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    const char *body = "{\"bandwidth\":\"1Gbit\"}";
    harness_request(h, "POST", path, hdr, body, strlen(body), &r);
    check(r.status == 404, "another tenant's run: %d", r.status);
    harness_response_free(&r);
    harness_request(h, "GET", "/v1/simulations", hdr, NULL, 0, &r);
    check(r.status == 200 && strstr(r.body, "\"simulations\":[]"), "its own list is empty: %.200s",
          r.body ? r.body : "");
    harness_response_free(&r);
}

/* The tenant's simulations a page at a time: limit, cursor, next_cursor. */
static void test_listing(harness *h)
{
    long a = post_id(h, "/v1/simulations", "{\"name\":\"page-a\"}", 201);
    long b = post_id(h, "/v1/simulations", "{\"name\":\"page-b\"}", 201);
    harness_response r;
    harness_request(h, "GET", "/v1/simulations?limit=1000", NULL, NULL, 0, &r);
    json_t *all = harness_json(&r);
    size_t total = json_array_size(json_object_get(all, "simulations"));
    check(r.status == 200 && total >= 2 && json_is_null(json_object_get(all, "next_cursor")),
          "one page of all: %zu, next_cursor null", total);
    harness_response_free(&r);
    /* walk pages of one and meet every simulation once, in id order */
    char path[128] = "/v1/simulations?limit=1";
    size_t seen = 0;
    long last = 0, saw_a = 0, saw_b = 0;
    int ordered = 1;
    for (size_t guard = 0; guard <= total + 1; guard++) {
        harness_request(h, "GET", path, NULL, NULL, 0, &r);
        json_t *page = harness_json(&r);
        harness_response_free(&r);
        json_t *items = json_object_get(page, "simulations");
        for (size_t i = 0; i < json_array_size(items); i++) {
            long id = (long)json_integer_value(json_object_get(json_array_get(items, i), "id"));
            ordered &= id > last;
            last = id;
            saw_a |= id == a;
            saw_b |= id == b;
            seen++;
        }
        const char *next = json_string_value(json_object_get(page, "next_cursor"));
        if (next)
            snprintf(path, sizeof path, "/v1/simulations?limit=1&cursor=%s", next);
        json_decref(page);
        if (!next)
            break;
    }
    check(seen == total && ordered && saw_a && saw_b,
          "pages of one: %zu of %zu seen, in id order: %d", seen, total, ordered);
    json_decref(all);
    harness_request(h, "GET", "/v1/simulations?cursor=-1", NULL, NULL, 0, &r);
    check(r.status == 400 && r.body && strstr(r.body, "\"cursor\""), "a bad cursor: %d", r.status);
    harness_response_free(&r);
    harness_request(h, "GET", "/v1/simulations?after=1", NULL, NULL, 0, &r);
    check(r.status == 400 && r.body && strstr(r.body, "after"), "after is not a parameter: %d",
          r.status);
    harness_response_free(&r);
}

/* A graph over API_SIM_DIRECT_OPS operations: even a run of few events is
 * queued (202), decided without the graph being read on the HTTP thread,
 * so six clients asking at once all get their answer; each run is stored
 * once and done by the worker threads. */
#define BIG_OPS 25000

typedef struct big_client {
    harness *h;
    const char *runs;
    int status;
    long run;
} big_client;

static void *big_post(void *arg)
{
    big_client *c = arg;
    harness_response r;
    harness_post(c->h, c->runs, "{\"workers\":1,\"bandwidth\":\"1Gbit\",\"steps\":2,"
                 "\"warmup_steps\":0,\"replications\":1}", &r);
    c->status = r.status;
    json_t *j = harness_json(&r);
    c->run = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    return NULL;
}

static void test_large_graph_queued(harness *h)
{
    harness_response r;
    harness_post(h, "/v1/simulations", "{\"name\":\"big-graph\"}", &r);
    json_t *j = harness_json(&r);
    long sim = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    size_t cap = (size_t)BIG_OPS * 64 + 64, n = 0;
    char *g = malloc(cap);
    n += (size_t)snprintf(g + n, cap - n, "{\"steps\":[{\"ops\":[");
    for (int i = 0; i < BIG_OPS; i++)
        n += (size_t)snprintf(g + n, cap - n,
                              "%s{\"id\":\"o%d\",\"resource\":\"worker\",\"duration\":1e-6}",
                              i ? "," : "", i);
    snprintf(g + n, cap - n, "]}]}");
    char path[128], runs[128];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    harness_post(h, path, g, &r);
    check(r.status == 201, "a graph of %d operations: %d %.200s", BIG_OPS, r.status,
          r.body ? r.body : "");
    harness_response_free(&r);
    free(g);
    snprintf(runs, sizeof runs, "/v1/simulations/%ld/runs", sim);
    big_client c[6];
    pthread_t t[6];
    for (int i = 0; i < 6; i++) {
        c[i] = (big_client){.h = h, .runs = runs};
        pthread_create(&t[i], NULL, big_post, &c[i]);
    }
    int queued = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(t[i], NULL);
        queued += c[i].status == 202 && c[i].run > 0;
    }
    check(queued == 6, "six concurrent runs on a large graph: all answered 202 (%d)", queued);
    check(harness_sql_long(h, "SELECT count(*) FROM sim_runs WHERE sim_experiment_id = %ld", sim) ==
              6,
          "six runs stored, one each");
    for (int i = 0; i < 6; i++) {
        char rpath[160];
        snprintf(rpath, sizeof rpath, "%s/%ld", runs, c[i].run);
        int done = 0;
        for (double t0 = harness_now(); !done && harness_now() - t0 < 120; harness_sleep(0.2)) {
            harness_get(h, rpath, &r);
            done = r.status == 200 && strstr(r.body, "\"state\":\"done\"");
            harness_response_free(&r);
        }
        check(done, "queued run %ld is done", c[i].run);
    }
}

/* A step graph larger than one 4 MiB piece: stored in pieces (its bytes
 * kept once, the stored graph text empty), read back in pieces for a run:
 * 80 steps of a chain of 1,000 computations of 1 ms each, so one worker
 * does 1 step/s exactly and two 2 steps/s; the same bytes again are a
 * duplicate. */
static void test_large_graph(harness *h)
{
    long sim = post_id(h, "/v1/simulations", "{\"name\":\"large\",\"batch_size\":1}", 201);
    size_t cap = 80u * 1000 * 80 + 64, n = 0;
    char *b = malloc(cap);
    n += (size_t)snprintf(b + n, cap - n, "{\"steps\":[");
    for (int s = 0; s < 80; s++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"ops\":[", s ? "," : "");
        for (int i = 0; i < 1000; i++) {
            n += (size_t)snprintf(b + n, cap - n,
                                  "%s{\"id\":\"op%d\",\"resource\":\"worker\",\"duration\":0.001",
                                  i ? "," : "", i);
            if (i)
                n += (size_t)snprintf(b + n, cap - n, ",\"deps\":[\"op%d\"]", i - 1);
            n += (size_t)snprintf(b + n, cap - n, "}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    check(n > (4u << 20), "the graph is larger than a piece: %zu bytes", n);
    char path[96];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    harness_response r;
    for (int round = 0; round < 2; round++) {
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", b, n, &r);
        json_t *doc = harness_json(&r);
        check(r.status == (round ? 200 : 201) &&
                  json_integer_value(json_object_get(doc, "ops")) == 80000 &&
                  json_is_true(json_object_get(doc, "duplicate")) == round,
              "upload %d: %d %.200s", round, r.status, r.body);
        json_decref(doc);
        harness_response_free(&r);
    }
    check(harness_sql_long(h,
                           "SELECT count(*) FROM sim_profiles WHERE sim_experiment_id = %ld AND "
                           "octet_length(raw) = %zu AND graph = ''",
                           sim, n) == 1,
          "kept once, its bytes whole");
    free(b);
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    harness_post(h, path, "{\"workers\":\"1..2\",\"bandwidth\":\"1Gbit\",\"steps\":4,"
                          "\"replications\":1,\"warmup_steps\":0}", &r);
    /* 80,000 operations: queued (202), read back by a worker thread */
    char loc[160] = "";
    int queued = r.status == 202 && harness_header(&r, "Location", loc, sizeof loc);
    check(queued, "a run on 80,000 operations is queued: %d", r.status);
    harness_response_free(&r);
    for (double t0 = harness_now();; harness_sleep(0.2)) {
        harness_get(h, loc, &r);
        int waiting = r.body && (strstr(r.body, "\"state\":\"queued\"") ||
                                 strstr(r.body, "\"state\":\"running\""));
        if (!waiting || harness_now() - t0 > 120)
            break;
        harness_response_free(&r);
    }
    json_t *doc = harness_json(&r);
    json_t *pts = json_object_get(
        json_array_get(json_object_get(json_object_get(doc, "result"), "results"), 0), "points");
    double w1 = json_number_value(json_object_get(
        json_object_get(json_array_get(pts, 0), "steps_per_s"), "mean"));
    double w2 = json_number_value(json_object_get(
        json_object_get(json_array_get(pts, 1), "steps_per_s"), "mean"));
    check(r.status == 200 && check_close(w1, 1, 1e-9, 0) && check_close(w2, 2, 1e-9, 0),
          "run on the graph read back in pieces: %d, %g and %g steps/s (want 1 and 2): %.200s",
          r.status, w1, w2, r.body);
    json_decref(doc);
    harness_response_free(&r);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness: PostgreSQL and the server did not start");
    if (!h)
        return check_summary();
    test_profiles(h);
    test_large_graph_queued(h);
    test_large_graph(h);
    test_runs(h);
    test_leases(h);
    test_listing(h);
    test_tenancy(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
