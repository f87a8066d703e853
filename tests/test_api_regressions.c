/*
 * test_api_regressions.c — model sets per commit and the regression check,
 * end to end over real HTTP against a real PostgreSQL, and `perfcast
 * ci-check` against the same server.
 *
 * One weak-scaling experiment, profiles generated per commit at ranks 2, 4,
 * 8, 16, 32 (3 repetitions, 0.5% noise per repetition and part): per epoch
 * comp 100 s (GEMM), mem 2 s (copy), and an all-reduce whose time is
 *   base:  0.5·p        (commit "c0ffee1")
 *   noise: 0.5·p        (commit "c0ffee2", other noise draws)
 *   head:  0.5·p·log2 p (commit "badc0de")
 * Expectations from the laws: at the target p = 512 the all-reduce takes
 * 256 s under base and 2304 s under head (+800%), so base -> head is a
 * regression of the all-reduce, of the epoch (356 -> 2406 s) and of the cost;
 * its complexity grows faster. base -> noise changes nothing by more than
 * the noise: no regression. Bad input: unknown commit, base = head, a
 * malformed threshold or target, an invalid commit name on upload: 4xx
 * naming the field; ci-check exits 1, 0 and 2 for the three cases. A
 * commit "renamed" whose GEMM kernel has another name: that callpath
 * vanished, the new one appeared, and no regression. The
 * noise commit goes up through `perfcast upload` (--commit, --branch,
 * --ci-run).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static double uniform(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
    return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

static double steps_per_epoch(double x)
{
    return floor(50000 / x / 256);
}

/* The all-reduce's time per epoch at p ranks under each law. */
static double comm_law(int plogp, double p)
{
    return plogp ? 0.5 * p * log2(p) : 0.5 * p;
}

/* A perfcast profile of 2 ranks, one warm-up and 3 train steps. plogp: 0
 * the all-reduce grows as p, 1 as p·log2 p, 2 as p with the GEMM renamed
 * (one callpath vanishes, another appears, the same work). */
static char *profile(double x, int rep, int plogp, double sigma)
{
    double n_t = steps_per_epoch(x);
    double comp = 100 * (1 + sigma * gauss()) / n_t, mem = 2 * (1 + sigma * gauss()) / n_t;
    double comm = comm_law(plogp == 1, x) * (1 + sigma * gauss()) / n_t;
    const char *gemm = plogp == 2 ? "ampere_sgemm_128x64_nn" : "volta_sgemm_128x64_nn";
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 4; s++) {
            double w = s == 0 ? 3.0 : 1.0;
            json_array_append_new(
                steps,
                json_pack("{s:s, s:[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]}",
                          "phase", "train", "callpaths", "name", gemm,
                          "category", "comp", "metrics", "time", comp * w, "name",
                          "ncclKernel_AllReduce_RING_LL_Sum_float", "category", "comm", "metrics",
                          "time", comm * w, "name", "Memcpy HtoD", "category", "mem", "metrics",
                          "time", mem * w));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "ranks", x, "repetition", rep,
                            "ranks", ranks);
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

/* One upload through `perfcast upload` (the CLI's flags for commit, branch
 * and CI run); the job, 0 on failure. */
static long upload_cli(harness *h, long exp, const char *commit, const char *body)
{
    char file[] = "/tmp/perfcast-regressions-XXXXXX";
    int fd = mkstemp(file);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f)
        return 0;
    fputs(body, f);
    fclose(f);
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd,
             "%s upload --url http://127.0.0.1:%d --experiment %ld --commit %s --branch main "
             "--ci-run run-%s %s 2>&1",
             bin, harness_port(h), exp, commit, commit, file);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    unlink(file);
    json_t *doc = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    check(st == 0 && job > 0, "perfcast upload: exit %d: %s", st, out);
    json_decref(doc);
    return job;
}

/* Uploads one commit's profiles (the noise commit's through the CLI);
 * returns the last job (0 on failure), its refit not waited for. */
static long upload_commit_nowait(harness *h, long exp, const char *commit, int plogp)
{
    const double xs[] = {2, 4, 8, 16, 32};
    long job = 0;
    char path[200];
    for (int i = 0; i < 5; i++)
        for (int rep = 1; rep <= 3; rep++) {
            char *body = profile(xs[i], rep, plogp, 0.005);
            if (!strcmp(commit, "c0ffee2")) {
                job = upload_cli(h, exp, commit, body);
                free(body);
                continue;
            }
            snprintf(path, sizeof path,
                     "/v1/experiments/%ld/profiles?commit=%s&branch=main&ci_run=run-%s", exp,
                     commit, commit);
            harness_response r;
            harness_request(h, "POST", path, "Content-Type: application/json\r\n", body,
                            strlen(body), &r);
            free(body);
            json_t *doc = harness_json(&r);
            check(r.status == 202, "upload %s x=%g: %d %s", commit, xs[i], r.status, r.body);
            if (r.status == 202)
                job = (long)json_integer_value(json_object_get(doc, "job"));
            json_decref(doc);
            harness_response_free(&r);
        }
    return job;
}

/* The same, then waits for the refit. */
static long upload_commit(harness *h, long exp, const char *commit, int plogp)
{
    long job = upload_commit_nowait(h, exp, commit, plogp);
    check(job > 0 && harness_wait_job(h, job, 60), "refit of %s", commit);
    return job;
}

static json_t *get_json(harness *h, const char *path, int want)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "GET %s: %d (want %d) %s", path, r.status, want, r.body);
    harness_response_free(&r);
    return doc;
}

static const json_t *entry(const json_t *arr, const char *name)
{
    size_t i;
    const json_t *e;
    json_array_foreach(arr, i, e) if (!strcmp(json_string_value(json_object_get(e, "name")), name))
        return e;
    return NULL;
}

/* ci-check's table: every line's verdict agrees with the sign of the change
 * it shows (a regression an increase, an improvement a decrease), and the
 * all-reduce's line is judged at the measured point of its largest
 * significant increase in the JSON document, with that change. */
static void check_table_words(const char *text, const json_t *doc)
{
    const char *line = text;
    int lines = 0;
    while (line && *line) {
        char verdict[32] = "", judged[64] = "", change[32] = "";
        if (sscanf(line, "%31s %63s %31s", verdict, judged, change) == 3) {
            if (!strcmp(verdict, "regression") && strcmp(judged, "target") != 0) {
                check(change[0] == '+', "a regression shows an increase: %.120s", line);
                lines++;
            }
            if (!strcmp(verdict, "improvement"))
                check(change[0] == '-', "an improvement shows a decrease: %.120s", line);
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    check(lines >= 2, "regression lines in the table: %d", lines);
    const json_t *e = entry(json_object_get(doc, "callpaths"),
                            "ncclKernel_AllReduce_RING_LL_Sum_float");
    const json_t *best = NULL;
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(e, "measured"), i, m)
    {
        double c = json_number_value(json_object_get(m, "change_pct"));
        if (json_is_true(json_object_get(m, "significant")) && c > 0 &&
            (!best || c > json_number_value(json_object_get(best, "change_pct"))))
            best = m;
    }
    check(best != NULL, "the all-reduce has a significant increase at a measured point");
    if (!best)
        return;
    const char *at = strstr(text, "ncclKernel_AllReduce_RING_LL_Sum_float");
    const char *start = at;
    while (start && start > text && start[-1] != '\n')
        start--;
    char verdict[32] = "", judged[64] = "", change[32] = "", want_j[64], want_c[32];
    if (start)
        sscanf(start, "%31s %63s %31s", verdict, judged, change);
    snprintf(want_j, sizeof want_j, "ranks=%g",
             json_number_value(json_object_get(json_object_get(best, "point"), "ranks")));
    snprintf(want_c, sizeof want_c, "%+.1f%%", json_number_value(json_object_get(best, "change_pct")));
    check(!strcmp(verdict, "regression") && !strcmp(judged, want_j) && !strcmp(change, want_c),
          "the all-reduce judged at its largest measured increase %s %s: got %s %s %s", want_j,
          want_c, verdict, judged, change);
}

static double at_value(const json_t *e, const char *side)
{
    return json_number_value(json_object_get(json_object_get(json_object_get(e, "at"), side),
                                             "value"));
}

static void bad_request(harness *h, long exp, const char *query, int status, const char *field)
{
    char path[400];
    snprintf(path, sizeof path, "/v1/experiments/%ld/regressions?%s", exp, query);
    json_t *doc = get_json(h, path, status);
    const char *f = json_string_value(json_object_get(doc, "field"));
    check(f && !strcmp(f, field), "%s: field %s, want %s", query, f ? f : "(none)", field);
    json_decref(doc);
}

/* Runs ci-check; its exit status, stdout into out. */
static int ci_check(harness *h, long exp, const char *args, char *out, size_t cap)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s ci-check --url http://127.0.0.1:%d --experiment %ld %s 2>&1",
             bin, harness_port(h), exp, args);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, cap - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"ci\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                 "\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":1}}",
                 &r);
    json_t *doc = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(doc, "id"));
    check(r.status == 201 && exp > 0, "create: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);

    /* an invalid commit name is refused before anything is stored */
    char path[300];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?commit=a%%20b", exp);
    char *body = profile(2, 1, 0, 0);
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    free(body);
    doc = harness_json(&r);
    const char *bf = json_string_value(json_object_get(doc, "field"));
    check(r.status == 400 && bf && !strcmp(bf, "commit"), "bad commit: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);

    upload_commit(h, exp, "c0ffee1", 0);
    upload_commit(h, exp, "c0ffee2", 0);
    upload_commit(h, exp, "badc0de", 1);
    upload_commit(h, exp, "renamed", 2);

    /* each commit's model set was fit to its own profiles only */
    snprintf(path, sizeof path, "/v1/experiments/%ld/model_sets", exp);
    doc = get_json(h, path, 200);
    const json_t *sets = json_object_get(doc, "model_sets");
    int seen[3] = {0};
    size_t i;
    const json_t *s;
    json_array_foreach(sets, i, s)
    {
        const char *c = json_string_value(json_object_get(s, "commit"));
        seen[0] |= c && !strcmp(c, "c0ffee1");
        seen[1] |= c && !strcmp(c, "c0ffee2");
        seen[2] |= c && !strcmp(c, "badc0de");
        check(c && !strcmp(json_string_value(json_object_get(s, "branch")), "main"),
              "branch of set %zu", i);
    }
    check(seen[0] && seen[1] && seen[2], "history has the three commits");
    json_decref(doc);

    /* base -> head: the p·log p all-reduce is a regression */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/regressions?base=c0ffee1&head=badc0de&at=ranks:512", exp);
    doc = get_json(h, path, 200);
    check(json_is_true(json_object_get(doc, "regression")), "p log p flagged");
    const json_t *ar = entry(json_object_get(doc, "callpaths"), "ncclKernel_AllReduce_RING_LL_Sum_float");
    check(ar && !strcmp(json_string_value(json_object_get(ar, "status")), "regression"),
          "all-reduce is a regression");
    check(check_close(at_value(ar, "base"), 256, 0.05, 1), "base all-reduce at 512: %g (256)",
          at_value(ar, "base"));
    check(check_close(at_value(ar, "head"), 2304, 0.05, 1), "head all-reduce at 512: %g (2304)",
          at_value(ar, "head"));
    const char *cx = json_string_value(
        json_object_get(json_object_get(ar, "complexity"), "change"));
    check(cx && !strcmp(cx, "grows faster"), "complexity change: %s", cx ? cx : "null");
    const json_t *gemm = entry(json_object_get(doc, "callpaths"), "volta_sgemm_128x64_nn");
    check(gemm && strcmp(json_string_value(json_object_get(gemm, "status")), "regression"),
          "the GEMM did not regress");
    const json_t *ep = entry(json_object_get(doc, "application"), "epoch");
    check(ep && check_close(at_value(ep, "base"), 356, 0.05, 1) &&
              check_close(at_value(ep, "head"), 2406, 0.05, 1),
          "epoch at 512: %g -> %g (356 -> 2406)", at_value(ep, "base"), at_value(ep, "head"));
    const json_t *cost = json_object_get(doc, "cost");
    check(json_is_true(json_object_get(cost, "significant")) &&
              check_close(json_number_value(json_object_get(json_object_get(cost, "head"), "value")),
                          2406.0 * 512 / 3600, 0.05, 1),
          "cost at 512 = T·512/3600 core-h");
    check(json_array_size(json_object_get(doc, "appeared")) == 0 &&
              json_array_size(json_object_get(doc, "vanished")) == 0,
          "no callpath appeared or vanished");
    json_decref(doc);

    /* base -> noise-only change: nothing flagged */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/regressions?base=c0ffee1&head=c0ffee2&at=ranks:512", exp);
    doc = get_json(h, path, 200);
    check(json_is_false(json_object_get(doc, "regression")), "noise not flagged: %lld regressions",
          (long long)json_integer_value(json_object_get(doc, "regressions")));
    json_decref(doc);

    /* the GEMM renamed: one callpath vanished, one appeared, the application unchanged */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/regressions?base=c0ffee1&head=renamed&at=ranks:512", exp);
    doc = get_json(h, path, 200);
    const json_t *app_ = json_object_get(doc, "appeared"), *van = json_object_get(doc, "vanished");
    check(json_array_size(app_) == 1 &&
              !strcmp(json_string_value(json_array_get(app_, 0)), "ampere_sgemm_128x64_nn") &&
              json_array_size(van) == 1 &&
              !strcmp(json_string_value(json_array_get(van, 0)), "volta_sgemm_128x64_nn"),
          "appeared and vanished");
    check(json_is_false(json_object_get(doc, "regression")), "a rename of the same work is no regression");
    check(json_array_size(json_object_get(doc, "callpaths")) == 2, "two callpaths in both sets");
    /* what no measured point shows is not counted, even where extrapolations part */
    size_t k;
    const json_t *e;
    json_array_foreach(json_object_get(doc, "callpaths"), k, e)
    {
        const char *st = json_string_value(json_object_get(e, "status"));
        int measured_sig = 0;
        size_t m;
        const json_t *pt;
        json_array_foreach(json_object_get(e, "measured"), m, pt)
            measured_sig |= json_is_true(json_object_get(pt, "significant"));
        check(!strcmp(st, measured_sig ? "improvement" : json_is_true(json_object_get(
                  json_object_get(e, "at"), "significant")) ? "diverges" : "unchanged") ||
                  (measured_sig && !strcmp(st, "regression")),
              "%s: status %s agrees with its measured points",
              json_string_value(json_object_get(e, "name")), st);
    }
    json_decref(doc);

    /* bad input names its field */
    bad_request(h, exp, "base=nosuchcommit&head=badc0de", 404, "base");
    bad_request(h, exp, "base=c0ffee1&head=nosuchcommit", 404, "head");
    bad_request(h, exp, "base=c0ffee1&head=c0ffee1", 400, "head");
    bad_request(h, exp, "head=c0ffee1", 400, "base");
    bad_request(h, exp, "base=c0ffee1&head=badc0de&threshold=five", 400, "threshold");
    bad_request(h, exp, "base=c0ffee1&head=badc0de&threshold=-3%25", 400, "threshold");
    bad_request(h, exp, "base=c0ffee1&head=badc0de&at=nodes:4", 400, "at");
    bad_request(h, exp, "base=c0ffee1&head=badc0de&bogus=1", 400, "bogus");

    /* ci-check: 1 on the regression, 0 on noise, 2 on usage and refused requests */
    char out[65536];
    int rc = ci_check(h, exp, "--base c0ffee1 --head badc0de --at ranks=512", out, sizeof out);
    if (getenv("REGRESSIONS_SHOW"))
        fputs(out, stderr);
    check(rc == 1 && strstr(out, "REGRESSION") && strstr(out, "ncclKernel_AllReduce"),
          "ci-check regression: exit %d\n%s", rc, out);
    char table[65536];
    memcpy(table, out, sizeof table);
    rc = ci_check(h, exp, "--base c0ffee1 --head badc0de --markdown", out, sizeof out);
    check(rc == 1 && strstr(out, "| verdict | judged at |") && strstr(out, "| **regression** | ranks=") &&
              strstr(out, "<details><summary>"),
          "ci-check --markdown: exit %d\n%s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head badc0de --at ranks=512 --json", out, sizeof out);
    json_t *cj = json_loads(out, 0, NULL);
    check(rc == 1 && json_is_true(json_object_get(cj, "regression")), "ci-check --json: %d", rc);
    check_table_words(table, cj);
    json_decref(cj);

    /* --wait: a commit whose refit is still queued or running is waited
     * for, then compared (the same law as the base: no regression) */
    upload_commit_nowait(h, exp, "late", 0);
    rc = ci_check(h, exp, "--base c0ffee1 --head late --wait 60", out, sizeof out);
    check(rc == 0 && strstr(out, "OK:"), "ci-check --wait: exit %d\n%s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head nosuchcommit --wait 1", out, sizeof out);
    check(rc == 3 && strstr(out, "did not finish"), "ci-check --wait on a commit never uploaded: "
          "exit %d\n%s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head c0ffee2 --threshold 5%", out, sizeof out);
    if (getenv("REGRESSIONS_SHOW"))
        fputs(out, stderr);
    check(rc == 0 && strstr(out, "OK:"), "ci-check noise: exit %d\n%s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head nosuch", out, sizeof out);
    check(rc == 2 && strstr(out, "head"), "ci-check unknown commit: exit %d %s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head c0ffee1", out, sizeof out);
    check(rc == 2 && strstr(out, "--head"), "ci-check base = head: exit %d %s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1 --head badc0de --threshold lots", out, sizeof out);
    check(rc == 2 && strstr(out, "--threshold"), "ci-check threshold: exit %d %s", rc, out);
    rc = ci_check(h, exp, "--base c0ffee1", out, sizeof out);
    check(rc == 2 && strstr(out, "--head"), "ci-check no head: exit %d %s", rc, out);

    harness_close(h, check_failed_count > 0);
    return check_summary();
}
