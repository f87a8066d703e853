/*
 * fixture.c — the service the browser test (tests/browser/dashboard.test.mjs)
 * looks at: a private PostgreSQL and `perfcast serve` (tests/harness.h) with
 * the example experiment (examples/) uploaded three times, as three commits:
 * "ex-base" (the example profiles as they are), "ex-same" (the same
 * measurements, other bytes: no regression), "ex-slow" (the all-reduce
 * taking log2(ranks) times as long: a regression) and "ex-fix" (the
 * example again: an improvement, and the newest model set). Prints
 * "PORT <port> EXPERIMENT <id>" once every refit is done, then waits for
 * its standard input to close and removes everything.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"

/* The example profile at x ranks, the all-reduce's times scaled by comm. */
static char *example(int x, double comm, int pad)
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
        if (strstr(json_string_value(json_object_get(cp, "name")), "AllReduce"))
            json_object_set_new(m, "time", json_real(json_number_value(json_object_get(m, "time")) * comm));
    }
    char *text = json_dumps(doc, JSON_INDENT(pad));
    json_decref(doc);
    return text;
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
    printf("PORT %d EXPERIMENT %ld\n", harness_port(h), exp);
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin))
        ;
    harness_close(h, getenv("FIXTURE_SHOW_LOG") != NULL); /* the server's log, e.g. under ASan */
    return 0;
}
