/*
 * fixture.c — the service the browser test (tests/browser/dashboard.test.mjs)
 * looks at: a private PostgreSQL and `perfcast serve` (tests/harness.h) with
 * the example experiment (examples/) uploaded three times, as three commits:
 * "ex-base" (the example profiles as they are), "ex-same" (the same
 * measurements, other bytes: no regression), "ex-slow" (the all-reduce
 * taking log2(ranks) times as long: a regression) and "ex-fix" (the
 * example again: an improvement, and the newest model set); an
 * experiment "dash-traces" holding two real PyTorch profiler traces
 * (tests/data/kineto: 2 ranks at ranks=2, 128 ranks at ranks=128) for the
 * trace page; a simulation "dash-sim" with the step graph of
 * tests/data/simulate and one run of 1..8 workers on 1 and 2 servers for the
 * simulation page; an experiment "dash-sweep", the example profiles at
 * ranks 2..10 in three repetitions (every time scaled by 0.98, 1.00, 1.02)
 * plus the 16-rank profile held out for evaluation, for the sweep and
 * accuracy pages; an experiment "dash-imbalance" whose ranks are not alike
 * (4 ranks at 2..32 ranks, per epoch comp 100 s, comm 10·x s, mem 1 s, rank
 * 3's comm 1.3 times the others': the measured epoch, the slowest rank's,
 * exceeds the parts' sum, so the epoch has an imbalance part of 3·x s) for
 * the imbalance part of the models and scaling pages. Prints "PORT <port>
 * EXPERIMENT <id> TRACES <id> SIMULATION <id> RUN <id> SWEEP <id>
 * IMBALANCE <id>" once everything is done, then waits for its standard
 * input to close and removes everything.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "tests/law_experiment.h"

/* The example profile at x ranks, the all-reduce's times scaled by comm and
 * every time by all, as repetition rep. */
static char *example_scaled(int x, double comm, double all, int rep, int pad)
{
    char path[128];
    snprintf(path, sizeof path, "examples/profile-ranks-%d.json", x);
    json_t *doc = json_load_file(path, 0, NULL);
    if (!doc)
        return NULL;
    size_t i, j, k;
    json_t *rank, *step, *cp;
    json_array_foreach(json_object_get(doc, "ranks"), i, rank)
        json_array_foreach(json_object_get(rank, "steps"), j, step)
            json_array_foreach(json_object_get(step, "callpaths"), k, cp)
    {
        json_t *m = json_object_get(cp, "metrics");
        double f =
            all * (strstr(json_string_value(json_object_get(cp, "name")), "AllReduce") ? comm : 1);
        if (f != 1)
            json_object_set_new(m, "time",
                                json_real(json_number_value(json_object_get(m, "time")) * f));
    }
    json_object_set_new(doc, "repetition", json_integer(rep));
    char *text = json_dumps(doc, JSON_INDENT(pad));
    json_decref(doc);
    return text;
}

static char *example(int x, double comm, int pad)
{
    return example_scaled(x, comm, 1, 1, pad);
}

static long upload(harness *h, long exp, int x, const char *commit, double comm, int pad)
{
    char *body = example(x, comm, pad);
    char path[200];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/profiles?commit=%s&branch=main&ci_run=example-%s", exp, commit,
             commit);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                    body ? strlen(body) : 0, &r);
    free(body);
    json_t *doc = harness_json(&r);
    long job = r.status == 202 ? (long)json_integer_value(json_object_get(doc, "job")) : -1;
    if (job < 0)
        fprintf(stderr, "fixture: upload %s x=%d: %d %s\n", commit, x, r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    return job;
}

/* POST a file's bytes; the answer's "id" (or "profile"), -1 on failure. */
static long post_file(harness *h, const char *path, const char *file, const char *type,
                      const char *key)
{
    size_t len = 0;
    char *body = harness_read_file(file, &len);
    char headers[128];
    snprintf(headers, sizeof headers, "Content-Type: %s\r\n", type);
    harness_response r;
    harness_request(h, "POST", path, headers, body, len, &r);
    free(body);
    json_t *doc = harness_json(&r);
    long id = r.status / 100 == 2 ? (long)json_integer_value(json_object_get(doc, key)) : -1;
    if (id <= 0)
        fprintf(stderr, "fixture: POST %s %s: %d %s\n", path, file, r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    return id;
}

/* POST JSON; the answer's "id", -1 on failure. */
static long post_json(harness *h, const char *path, const char *json)
{
    harness_response r;
    harness_post(h, path, json, &r);
    json_t *doc = harness_json(&r);
    long id = r.status / 100 == 2 ? (long)json_integer_value(json_object_get(doc, "id")) : -1;
    if (id <= 0)
        fprintf(stderr, "fixture: POST %s: %d %s\n", path, r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    return id;
}

/* The trace experiment: two real traces, no refit needed. */
static long traces_experiment(harness *h)
{
    long id = post_json(h, "/v1/experiments",
                        "{\"name\":\"dash-traces\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                        "\"training\":{\"train_samples\":50000,\"batch_size\":64,"
                        "\"data_parallel\":\"ranks\"}}");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=2&refit=defer", id);
    if (id <= 0 ||
        post_file(h, path, "tests/data/kineto/nccl_ws2_rank0.json.gz", "application/gzip",
                  "profile") <= 0)
        return -1;
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=128&refit=defer", id);
    if (post_file(h, path, "tests/data/kineto/ddp128_rank0.json.gz", "application/gzip",
                  "profile") <= 0)
        return -1;
    return id;
}

/* The sweep experiment: three repetitions per point, one held-out point;
 * the id once its refit is done, -1 on failure. */
static long sweep_experiment(harness *h)
{
    long id = post_json(h, "/v1/experiments",
                        "{\"name\":\"dash-sweep\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                        "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                        "\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                        "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}}");
    const double scale[3] = {0.98, 1.00, 1.02};
    const int xs[6] = {2, 4, 6, 8, 10, 16};
    long job = -1;
    for (int i = 0; i < 6 && id > 0; i++)
        for (int rep = 1; rep <= (xs[i] == 16 ? 1 : 3); rep++) {
            char *body = example_scaled(xs[i], 1, scale[rep - 1], rep, 0);
            char path[160];
            snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", id,
                     xs[i] == 16 ? "?use=evaluation" : "");
            harness_response r;
            harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                            body ? strlen(body) : 0, &r);
            free(body);
            json_t *doc = harness_json(&r);
            job = r.status == 202 ? (long)json_integer_value(json_object_get(doc, "job")) : -1;
            if (job < 0)
                fprintf(stderr, "fixture: sweep upload x=%d: %d %s\n", xs[i], r.status, r.body);
            json_decref(doc);
            harness_response_free(&r);
            if (job < 0)
                return -1;
        }
    return job > 0 && harness_wait_job(h, job, 120) ? id : -1;
}

/* One upload of the imbalanced experiment at x ranks, repetition rep (all
 * times scaled by 1 + 0.001·(rep − 2)): 4 ranks, one warm-up step (3x) and
 * 3 train steps of gemm (comp), allreduce (comm) and memcpy (mem) with per
 * epoch 100, 10·x and 1 s; rank 3's allreduce 1.3 times as long. The refit
 * job, -1 on failure. */
static long imbalanced_upload(harness *h, long exp, double x, int rep)
{
    law_callpath cps[3];
    law_epoch_parts(x, 100, 10 * x, 1, 1 + 0.001 * (rep - 2), cps);
    char *body = law_profile(x, rep, 4, cps, 3, (law_slow){3, 1, 1.3});
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                    body ? strlen(body) : 0, &r);
    free(body);
    json_t *ans = harness_json(&r);
    long job = r.status == 202 ? (long)json_integer_value(json_object_get(ans, "job")) : -1;
    if (job < 0)
        fprintf(stderr, "fixture: imbalanced upload x=%g: %d %s\n", x, r.status, r.body);
    json_decref(ans);
    harness_response_free(&r);
    return job;
}

/* The imbalanced experiment at 2..32 ranks, three repetitions; the id once
 * its refit is done, -1 on failure. */
static long imbalance_experiment(harness *h)
{
    long id = post_json(h, "/v1/experiments",
                        "{\"name\":\"dash-imbalance\",\"parameters\":[\"ranks\"],"
                        "\"scaling\":\"weak\"," LAW_TRAINING_JSON ",\"cost\":{\"cores_per_rank\":1,"
                        "\"price_per_core_hour\":0.5}}");
    const double xs[5] = {2, 4, 8, 16, 32};
    long job = -1;
    for (int i = 0; i < 5 && id > 0; i++)
        for (int rep = 1; rep <= 3; rep++)
            if ((job = imbalanced_upload(h, id, xs[i], rep)) < 0)
                return -1;
    return job > 0 && harness_wait_job(h, job, 120) ? id : -1;
}

/* The simulation and its run (waited for when it was queued). */
static long simulation(harness *h, long *run)
{
    long sim = post_json(h, "/v1/simulations",
                         "{\"name\":\"dash-sim\",\"batch_size\":32,\"overhead\":{\"pairs\":"
                         "[[1000,5.2e-5],[1000000,2.05e-3],[4000000,8.0e-3]]}}");
    char path[160];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    if (sim <= 0 ||
        post_file(h, path, "tests/data/simulate/stepgraph.json", "application/json", "id") <= 0)
        return -1;
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    *run = post_json(h, path,
                     "{\"workers\":\"1..8\",\"servers\":[1,2],\"bandwidth\":\"1Gbit\","
                     "\"replications\":3,\"steps\":60,\"warmup_steps\":10}");
    if (*run <= 0)
        return -1;
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs/%ld", sim, *run);
    for (int i = 0; i < 600; i++) {
        harness_response r;
        harness_get(h, path, &r);
        json_t *doc = harness_json(&r);
        const char *state = json_string_value(json_object_get(doc, "state"));
        int done = state && !strcmp(state, "done"), failed = state && !strcmp(state, "failed");
        json_decref(doc);
        harness_response_free(&r);
        if (done)
            return sim;
        if (failed)
            break;
        harness_sleep(0.1);
    }
    fprintf(stderr, "fixture: the simulation run did not finish\n");
    return -1;
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h)
        return 1;
    FILE *f = fopen("examples/experiment.json", "rb");
    char body[4096];
    size_t n = f ? fread(body, 1, sizeof body - 1, f) : 0;
    if (f)
        fclose(f);
    body[n] = '\0';
    /* Extra-P's modeler, whose intervals the regression rule was tuned on:
     * the slow commit's all-reduce (x^(2/3)·log2(x)^3) lies outside the PMNF
     * search space, and the robust modeler's honest intervals for such a
     * misfit are too wide to separate at the measured points */
    char *brace = strrchr(body, '}');
    if (brace && (size_t)(brace - body) + 24 < sizeof body)
        snprintf(brace, sizeof body - (size_t)(brace - body), ",\"modeler\":\"extrap\"}");
    harness_response r;
    harness_post(h, "/v1/experiments", body, &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    json_decref(doc);
    harness_response_free(&r);
    const int xs[] = {2, 4, 6, 8, 10};
    const char *commits[] = {"ex-base", "ex-same", "ex-slow", "ex-fix"};
    int ok = exp > 0;
    for (int c = 0; c < 4 && ok; c++) {
        long job = -1;
        for (int i = 0; i < 5; i++)
            job = upload(h, exp, xs[i], commits[c], c == 2 ? log2(xs[i]) : 1.0, c + 1);
        ok = job > 0 && harness_wait_job(h, job, 120);
    }
    if (!ok) {
        fprintf(stderr, "fixture: the example experiment could not be set up\n");
        harness_close(h, 1);
        return 1;
    }
    long traces = traces_experiment(h), run = -1;
    long sim = traces > 0 ? simulation(h, &run) : -1;
    long sweep = sim > 0 ? sweep_experiment(h) : -1;
    long imbalanced = sweep > 0 ? imbalance_experiment(h) : -1;
    if (traces <= 0 || sim <= 0 || sweep <= 0 || imbalanced <= 0) {
        harness_close(h, 1);
        return 1;
    }
    printf("PORT %d EXPERIMENT %ld TRACES %ld SIMULATION %ld RUN %ld SWEEP %ld IMBALANCE %ld\n",
           harness_port(h), exp, traces, sim, run, sweep, imbalanced);
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin))
        ;
    harness_close(h, getenv("FIXTURE_SHOW_LOG") != NULL); /* the server's log, e.g. under ASan */
    return 0;
}
