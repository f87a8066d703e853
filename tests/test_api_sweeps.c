/*
 * test_api_sweeps.c — sweeps end to end over real HTTP against a real
 * PostgreSQL: a sweep plan over ranks × threads with a legality rule and
 * three repetitions (its legal-point count checked by brute force), the
 * commands of the missing runs, profiles uploaded for some and then all of
 * them (the plan goes from missing to complete), the core-hours of runs
 * still missing against the service's own predictions, the repetition
 * statistics against hand-computed t intervals, the Taguchi ranking against
 * S/N ratios computed here from the uploaded values, the advice for the
 * next runs (within budget, priced like the plan, shrinking the interval),
 * `perfcast sweep plan`
 * printing the service's commands, and bad input (4xx naming the field,
 * nothing stored).
 *
 * The workload: strong scaling, n_t = floor(51200/ranks/256) steps per
 * epoch, per step a GEMM of 2/threads + 0.2 s and an all-reduce of
 * 0.01·ranks s on every rank, scaled per repetition by 0.99, 1.00, 1.01; so
 * the epoch's repetitions are n_t·(2/threads + 0.2 + 0.01·ranks)·f_rep.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"
#include "tests/request_json.h"

static const double ranks_v[5] = {2, 4, 8, 16, 32}, threads_v[5] = {1, 2, 4, 8, 16};
static const double rep_factor[5] = {0, 0.99, 1.00, 1.01, 1.00};

static int legal(double r, double t)
{
    return r * t <= 64;
}

static double steps(double r)
{
    return floor(51200 / r / 256);
}

static double epoch_value(double r, double t, int rep)
{
    return steps(r) * (2 / t + 0.2 + 0.01 * r) * rep_factor[rep];
}

static long create(harness *h)
{
    json_t *d = request_json(h, "POST", "/v1/experiments",
                        "{\"name\":\"sweep\",\"parameters\":[\"ranks\",\"threads\"],"
                        "\"scaling\":\"strong\",\"training\":{\"train_samples\":51200,"
                        "\"validation_samples\":0,\"batch_size\":256,\"data_parallel\":\"ranks\","
                        "\"warmup_steps\":0},\"cost\":{\"cores_per_rank\":4,"
                        "\"price_per_core_hour\":0.1}}",
                        201);
    long id = (long)json_integer_value(json_object_get(d, "id"));
    json_decref(d);
    return id;
}

static void upload(harness *h, long exp, double r, double t, int rep, int zero_metric)
{
    json_t *ranks = json_array();
    double f = rep_factor[rep];
    for (int k = 0; k < 2; k++) {
        json_t *st = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *gemm = json_pack("{s:s, s:s, s:{s:f}}", "name", "gemm", "category", "comp",
                                     "metrics", "time", (2 / t + 0.2) * f);
            if (zero_metric)
                json_object_set_new(json_object_get(gemm, "metrics"), "errors", json_real(0));
            json_t *cps = json_pack("[o, {s:s, s:s, s:{s:f}}]", gemm, "name", "allreduce",
                                    "category", "comm", "metrics", "time", 0.01 * r * f);
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

static const char *plan_body =
    "{\"parameters\":{\"ranks\":[2,4,8,16,32],\"threads\":[1,2,4,8,16]},"
    "\"legal\":\"ranks * threads <= 64\",\"repetitions\":%d,\"epochs_per_run\":0.5,"
    "\"command\":\"srun -n {ranks} train.py --threads {threads} --seed {repetition}\"}";

static json_t *plan(harness *h, long exp, int reps)
{
    char body[512], path[96];
    snprintf(body, sizeof body, plan_body, reps);
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan", exp);
    return request_json(h, "POST", path, body, 200);
}

static long count_of(const json_t *d, const char *k)
{
    return (long)json_integer_value(json_object_get(d, k));
}

/* `perfcast sweep plan FILE` with the document in FILE: its stdout lines */
static int cli_lines(const char *doc, char lines[][128], int max)
{
    char path[] = "/tmp/perfcast-sweep-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, doc, strlen(doc)) != (ssize_t)strlen(doc))
        return -1;
    close(fd);
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s sweep plan %s", bin, path);
    FILE *p = popen(cmd, "r");
    int n = 0;
    char buf[256];
    while (p && fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\n")] = '\0';
        if (n < max)
            snprintf(lines[n], 128, "%.127s", buf);
        n++;
    }
    int rc = p ? pclose(p) : -1;
    unlink(path);
    return rc == 0 ? n : -1;
}

static void test_plan_and_upload(harness *h, long exp)
{
    int brute = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            brute += legal(ranks_v[i], threads_v[j]);
    check(brute == 19, "19 legal points by hand (5+5+4+3+2), brute force %d", brute);

    json_t *p = plan(h, exp, 3);
    check(count_of(json_object_get(p, "points"), "legal") == brute &&
              count_of(json_object_get(p, "points"), "product") == 25 &&
              count_of(p, "runs") == 3 * brute && count_of(p, "missing") == 3 * brute &&
              json_is_false(json_object_get(p, "complete")),
          "the plan before any upload: everything missing");
    json_t *cmds = json_object_get(p, "commands");
    check(json_array_size(cmds) == (size_t)(3 * brute), "one command per missing run");
    check(!strcmp(json_string_value(json_array_get(cmds, 0)) ?: "",
                  "srun -n 2 train.py --threads 1 --seed 1"),
          "first command: %s", json_string_value(json_array_get(cmds, 0)));
    json_t *mc = json_object_get(p, "missing_cost");
    check(json_is_null(json_object_get(mc, "core_hours")) &&
              strstr(json_string_value(json_object_get(mc, "reason")) ?: "", "no models"),
          "no cost before models: %s", json_string_value(json_object_get(mc, "reason")));

    /* the CLI prints the same commands from the service's answer, and all of them from
     * the definition */
    char *text = json_dumps(p, JSON_COMPACT);
    static char lines[200][128];
    int n = cli_lines(text, lines, 200);
    check(n == 3 * brute && !strcmp(lines[0], json_string_value(json_array_get(cmds, 0))) &&
              !strcmp(lines[n - 1], json_string_value(json_array_get(cmds, (size_t)n - 1))),
          "perfcast sweep plan prints the plan's commands (%d lines)", n);
    free(text);
    char def[512];
    snprintf(def, sizeof def, plan_body, 2);
    check(cli_lines(def, lines, 200) == 2 * brute, "and every run of a definition");
    json_decref(p);

    /* pages: counts and cost over every run, items and commands for the page
     * only (19 legal points x 3 = 57 runs: offset 50, limit 10 lists 7) */
    char body[512], path[128];
    snprintf(body, sizeof body, plan_body, 3);
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan?limit=10&offset=50", exp);
    p = request_json(h, "POST", path, body, 200);
    check(count_of(p, "runs") == 57 && count_of(p, "missing") == 57 &&
              json_array_size(json_object_get(p, "items")) == 7 &&
              json_array_size(json_object_get(p, "commands")) == 7 &&
              count_of(p, "offset") == 50 && json_is_null(json_object_get(p, "next_offset")),
          "the last page: 7 runs listed of 57");
    /* run 50 = 3 x 16 + 2: point 16 (0-based, odometer order: ranks 16, threads 4), repetition 3 */
    check(!strcmp(json_string_value(json_array_get(json_object_get(p, "commands"), 0)) ?: "",
                  "srun -n 16 train.py --threads 4 --seed 3"),
          "run 50: %s", json_string_value(json_array_get(json_object_get(p, "commands"), 0)));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan?limit=10", exp);
    p = request_json(h, "POST", path, body, 200);
    check(json_array_size(json_object_get(p, "items")) == 10 && count_of(p, "next_offset") == 10,
          "the first page: next_offset 10");
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan?limit=1001", exp);
    json_decref(request_json(h, "POST", path, body, 400));

    /* the template over HTTP: ${ranks} is the shell's (not "$2"), {{{ranks} a brace and
     * the value; {other} is refused naming command and the rule; a product of more
     * than 1,000,000 points is refused before the rule */
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan?limit=1", exp);
    p = request_json(h, "POST", path,
                     "{\"parameters\":{\"ranks\":[2]},\"constants\":{\"threads\":1},"
                     "\"command\":\"n=${ranks} {{{ranks} {threads}\"}",
                     200);
    check(!strcmp(json_string_value(json_array_get(json_object_get(p, "commands"), 0)) ?: "",
                  "n=${ranks} {2 1"),
          "template over HTTP: %s",
          json_string_value(json_array_get(json_object_get(p, "commands"), 0)));
    json_decref(p);
    p = request_json(h, "POST", path,
                     "{\"parameters\":{\"ranks\":[2]},\"constants\":{\"threads\":1},"
                     "\"command\":\"run {other}\"}",
                     400);
    check(!strcmp(json_string_value(json_object_get(p, "field")) ?: "", "command") &&
              strstr(json_string_value(json_object_get(p, "detail")) ?: "",
                     "offset 4: {other} names no parameter") &&
              strstr(json_string_value(json_object_get(p, "detail")) ?: "",
                     "write {{ for a literal brace; ${...} is left to the shell"),
          "{other}: %s", json_string_value(json_object_get(p, "detail")));
    json_decref(p);
    {
        json_t *a = json_array(), *b = json_array();
        for (int v = 1; v <= 1000; v++)
            json_array_append_new(a, json_integer(v));
        for (int v = 1; v <= 1001; v++)
            json_array_append_new(b, json_integer(v));
        json_t *def = json_pack("{s:{s:o, s:o}, s:s, s:s}", "parameters", "ranks", a, "threads",
                                b, "legal", "ranks < 2 && threads < 2", "command", "c {ranks}");
        char *text = json_dumps(def, JSON_COMPACT);
        p = request_json(h, "POST", path, text, 400);
        check(!strcmp(json_string_value(json_object_get(p, "field")) ?: "", "parameters") &&
                  strstr(json_string_value(json_object_get(p, "detail")) ?: "",
                         "more than 1000000 points"),
              "1,001,000 points before the rule: %s", json_string_value(json_object_get(p, "detail")));
        json_decref(p);
        free(text);
        json_decref(def);
    }

    /* the first 4 legal points' runs, then the plan again */
    int done = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            if (legal(ranks_v[i], threads_v[j]) && done < 4) {
                for (int rep = 1; rep <= 3; rep++)
                    upload(h, exp, ranks_v[i], threads_v[j], rep, 0);
                done++;
            }
    p = plan(h, exp, 3);
    check(count_of(p, "measured") == 12 && count_of(p, "missing") == 3 * brute - 12,
          "after 12 uploads: %ld measured, %ld missing", count_of(p, "measured"),
          count_of(p, "missing"));
    json_t *first = json_array_get(json_object_get(p, "items"), 0);
    check(!strcmp(json_string_value(json_object_get(first, "status")) ?: "", "measured") &&
              !json_object_get(first, "command"),
          "a measured run has no command");
    json_decref(p);
    for (int i = 0, k = 0; i < 5; i++)
        for (int j = 0; j < 5; j++)
            if (legal(ranks_v[i], threads_v[j]) && k++ >= 4)
                for (int rep = 1; rep <= 3; rep++)
                    upload(h, exp, ranks_v[i], threads_v[j], rep, 0);
    request_refit(h, exp);
    p = plan(h, exp, 3);
    check(json_is_true(json_object_get(p, "complete")) && count_of(p, "measured") == 3 * brute &&
              json_array_size(json_object_get(p, "commands")) == 0,
          "after every upload the plan is complete");
    json_decref(p);

    /* a fourth repetition: 19 runs missing, priced by the service's predictions */
    p = plan(h, exp, 4);
    mc = json_object_get(p, "missing_cost");
    double want = 0;
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 5; j++) {
            if (!legal(ranks_v[i], threads_v[j]))
                continue;
            char path[160];
            snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=%g&threads=%g", exp,
                     ranks_v[i], threads_v[j]);
            json_t *pr = request_json(h, "GET", path, NULL, 200);
            want += json_number_value(json_object_get(json_object_get(pr, "epoch"), "time")) *
                    ranks_v[i] * 4 / 3600 * 0.5;
            json_decref(pr);
        }
    double got = json_number_value(json_object_get(json_object_get(mc, "core_hours"), "value"));
    check(count_of(p, "missing") == brute && count_of(mc, "runs") == brute, "19 runs to do");
    check(want > 0 && fabs(got - want) <= 1e-9 * want,
          "missing core-hours %.12g = Σ predicted T·ranks·4/3600·0.5 = %.12g", got, want);
    json_decref(p);
}

static void test_statistics(harness *h, long exp)
{
    char path[200];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch",
             exp);
    json_t *s = request_json(h, "GET", path, NULL, 200);
    json_t *items = json_object_get(s, "items");
    check(json_array_size(items) == 19, "19 epoch measurements, got %zu", json_array_size(items));
    /* ranks 2, threads 1: values n·(0.99, 1, 1.01), n = 100·(2 + 0.2 + 0.02) = 222:
     * mean 222, SD 2.22, half-width t(0.975, 2)·2.22/sqrt(3), t = 4.302652729911275 */
    json_t *it = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(items, i, x)
    {
        json_t *pt = json_object_get(x, "point");
        if (json_number_value(json_object_get(pt, "ranks")) == 2 &&
            json_number_value(json_object_get(pt, "threads")) == 1)
            it = x;
    }
    double half = 4.302652729911275 * 2.22 / sqrt(3.0);
    json_t *ci = json_object_get(it, "mean_ci");
    check(it && json_integer_value(json_object_get(it, "n")) == 3 &&
              check_close(json_number_value(json_object_get(it, "mean")), 222, 1e-9, 0) &&
              check_close(json_number_value(json_object_get(it, "sd")), 2.22, 1e-6, 0),
          "n, mean, SD of ranks 2, threads 1");
    check(check_close(json_number_value(json_array_get(ci, 0)), 222 - half, 1e-9, 0) &&
              check_close(json_number_value(json_array_get(ci, 1)), 222 + half, 1e-9, 0),
          "mean CI [%.10g, %.10g], want 222 -+ %.10g", json_number_value(json_array_get(ci, 0)),
          json_number_value(json_array_get(ci, 1)), half);
    check(json_is_null(json_object_get(it, "median_ci")), "3 repetitions: no median interval");
    check(json_is_false(json_object_get(it, "noisy")) && json_array_size(json_object_get(s, "warnings")) == 0,
          "±2.5%% is within the default ±5%%");
    /* repetitions for ±1%: smallest m with t(m-1)·0.01/sqrt(m) <= 0.01, i.e. t(m-1) <= sqrt(m):
     * m = 6: t(5) = 2.5706 > 2.449; m = 7: t(6) = 2.4469 <= 2.6458 */
    json_decref(s);
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch"
             "&target=0.01",
             exp);
    s = request_json(h, "GET", path, NULL, 200);
    json_t *w = json_object_get(s, "warnings");
    check(json_integer_value(json_object_get(s, "noisy")) == 19 && json_array_size(w) == 19,
          "at ±1%% every point is too noisy");
    int named = 0, coded = 1;
    json_array_foreach(w, i, x)
    {
        const char *msg = json_string_value(json_object_get(x, "message"));
        coded &= !strcmp(json_string_value(json_object_get(x, "code")) ?: "", "noisy_measurement");
        if (strstr(msg ?: "", "ranks=2,threads=1 epoch time (phase epoch): "
                              "the mean's 95% interval is ±2.5%")) {
            /* its details: the point, the half-width against the target, the repetitions */
            json_t *pt = json_object_get(x, "point");
            named += json_number_value(json_object_get(pt, "ranks")) == 2 &&
                     json_number_value(json_object_get(pt, "threads")) == 1 &&
                     json_number_value(json_object_get(x, "target")) == 0.01 &&
                     json_integer_value(json_object_get(x, "repetitions")) == 3 &&
                     json_integer_value(json_object_get(x, "repetitions_needed")) == 7 &&
                     check_close(json_number_value(json_object_get(x, "relative_half_width")),
                                 half / 222, 1e-9, 0);
        }
    }
    check(named == 1 && coded, "a coded warning names the point ranks=2, threads=1: %s",
          json_string_value(json_object_get(json_array_get(w, 0), "message")));
    json_decref(s);
    /* strict: the same answer refused, naming the code */
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch"
             "&target=0.01&strict=true",
             exp);
    s = request_json(h, "GET", path, NULL, 422);
    check(strstr(json_string_value(json_object_get(s, "detail")) ?: "", "noisy_measurement") &&
              !strcmp(json_string_value(json_object_get(s, "field")) ?: "", "strict"),
          "statistics?strict=true: 422 naming noisy_measurement");
    json_decref(s);
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch"
             "&target=0.01",
             exp);
    s = request_json(h, "GET", path, NULL, 200);
    check(json_integer_value(json_object_get(json_array_get(json_object_get(s, "items"), 0),
                                             "repetitions_needed")) == 7,
          "7 repetitions for ±1%%");
    json_decref(s);
}

static double sn(double r, double t)
{
    double s = 0;
    for (int rep = 1; rep <= 3; rep++)
        s += epoch_value(r, t, rep) * epoch_value(r, t, rep);
    return -10 * log10(s / 3);
}

static void test_sensitivity(harness *h, long exp)
{
    /* mean S/N per level over the legal runs, range per parameter, computed here */
    double range[2];
    for (int f = 0; f < 2; f++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int l = 0; l < 5; l++) {
            double sum = 0;
            int n = 0;
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 5; j++)
                    if (legal(ranks_v[i], threads_v[j]) && (f == 0 ? i : j) == l) {
                        sum += sn(ranks_v[i], threads_v[j]);
                        n++;
                    }
            lo = fmin(lo, sum / n);
            hi = fmax(hi, sum / n);
        }
        range[f] = hi - lo;
    }
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity", exp);
    json_t *s = request_json(h, "GET", path, NULL, 200);
    json_t *fs = json_object_get(s, "factors");
    int first = range[0] >= range[1] ? 0 : 1;
    const char *names[2] = {"ranks", "threads"};
    json_t *f0 = json_array_get(fs, 0), *f1 = json_array_get(fs, 1);
    check(!strcmp(json_string_value(json_object_get(f0, "factor")) ?: "", names[first]),
          "%s ranks first (ranges %g, %g)", names[first], range[0], range[1]);
    check(check_close(json_number_value(json_object_get(f0, "range")), range[first], 1e-9, 0) &&
              check_close(json_number_value(json_object_get(f1, "range")), range[1 - first], 1e-9,
                          0),
          "ranges %g %g, want %g %g", json_number_value(json_object_get(f0, "range")),
          json_number_value(json_object_get(f1, "range")), range[first], range[1 - first]);
    check(check_close(json_number_value(json_object_get(f0, "normalized")),
                      range[first] / (range[0] + range[1]), 1e-9, 0),
          "normalised");
    check(json_array_size(json_object_get(s, "runs")) == 19, "19 runs");
    check(json_is_array(json_object_get(s, "warnings")) &&
              json_array_size(json_object_get(s, "warnings")) == 0,
          "no point is too noisy at ±2.5%%");
    json_decref(s);
}

/* S/N over scaling efficiency along ranks (paper 003 §3.2, Fig. 12): per
 * repetition SE = t_baseline / t, t_baseline the mean over the repetitions at
 * ranks = 2 with the same threads; larger is better. At (ranks 4, threads 1):
 * t_baseline = 100 steps x (2 + 0.2 + 0.02) x mean(0.99, 1, 1.01) = 222 s,
 * t = 50 x 2.24 x f = 112 f, SE = 1.98214/f, S/N = 20·log10(222/112) -
 * 10·log10((0.99² + 1 + 1.01²)/3) = 5.94255 dB. */
static double sn_se(double r, double t)
{
    double base = 0, s = 0;
    for (int rep = 1; rep <= 3; rep++)
        base += epoch_value(2, t, rep) / 3;
    for (int rep = 1; rep <= 3; rep++) {
        double se = base / epoch_value(r, t, rep);
        s += 1 / (se * se);
    }
    return -10 * log10(s / 3);
}

static void test_sensitivity_efficiency(harness *h, long exp)
{
    double want46 = 20 * log10(222.0 / 112.0) -
                    10 * log10((0.99 * 0.99 + 1 + 1.01 * 1.01) / 3);
    check(check_close(sn_se(4, 1), want46, 1e-12, 0), "by hand: %.12g vs %.12g", sn_se(4, 1),
          want46);
    double range[2];
    for (int f = 0; f < 2; f++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int l = 0; l < 5; l++) {
            double sum = 0;
            int n = 0;
            for (int i = 0; i < 5; i++)
                for (int j = 0; j < 5; j++)
                    if (legal(ranks_v[i], threads_v[j]) && (f == 0 ? i : j) == l) {
                        sum += sn_se(ranks_v[i], threads_v[j]);
                        n++;
                    }
            lo = fmin(lo, sum / n);
            hi = fmax(hi, sum / n);
        }
        range[f] = hi - lo;
    }
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity?over=efficiency&parameter=ranks",
             exp);
    json_t *s = request_json(h, "GET", path, NULL, 200);
    check(!strcmp(json_string_value(json_object_get(s, "over")) ?: "", "efficiency") &&
              !strcmp(json_string_value(json_object_get(s, "goal")) ?: "", "larger") &&
              json_integer_value(json_object_get(s, "runs_without_baseline")) == 0,
          "over efficiency, larger is better");
    json_t *runs = json_object_get(s, "runs");
    int found = 0;
    for (size_t i = 0; i < json_array_size(runs); i++) {
        json_t *r = json_array_get(runs, i), *pt = json_object_get(r, "point");
        if (json_number_value(json_object_get(pt, "ranks")) == 4 &&
            json_number_value(json_object_get(pt, "threads")) == 1) {
            found = 1;
            check(check_close(json_number_value(json_object_get(r, "sn")), want46, 1e-9, 0),
                  "S/N of SE at (4, 1): %.12g, want %.12g",
                  json_number_value(json_object_get(r, "sn")), want46);
        }
    }
    check(found && json_array_size(runs) == 19, "19 runs, (4, 1) among them");
    json_t *fs = json_object_get(s, "factors");
    int first = range[0] >= range[1] ? 0 : 1;
    const char *names[2] = {"ranks", "threads"};
    check(!strcmp(json_string_value(json_object_get(json_array_get(fs, 0), "factor")) ?: "",
                  names[first]) &&
              check_close(json_number_value(json_object_get(json_array_get(fs, 0), "range")),
                          range[first], 1e-9, 0) &&
              check_close(json_number_value(json_object_get(json_array_get(fs, 1), "range")),
                          range[1 - first], 1e-9, 0),
          "ranking by the S/N of efficiency: %s first, ranges %g %g", names[first], range[0],
          range[1]);
    json_decref(s);
    /* bad combinations name the member */
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity?over=speed", exp);
    json_decref(request_json(h, "GET", path, NULL, 400));
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity?parameter=ranks", exp);
    json_decref(request_json(h, "GET", path, NULL, 400));
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity?over=efficiency&goal=smaller",
             exp);
    json_decref(request_json(h, "GET", path, NULL, 400));
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity?over=efficiency&baseline=3",
             exp);
    json_decref(request_json(h, "GET", path, NULL, 404));
}

static void test_advice(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    /* every legal point measured 3 times: more than one run at every candidate
     * (the default grid), so nothing more, and the answer says why */
    json_t *a = request_json(h, "POST", path,
                        "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":0.5,"
                        "\"epochs_per_run\":0.5}",
                        200);
    json_t *w0 = json_array_get(json_object_get(a, "warnings"), 0);
    double g0 = json_number_value(json_object_get(w0, "grid_core_hours")),
           m0 = json_number_value(json_object_get(w0, "measured_core_hours"));
    check(json_array_size(json_object_get(a, "recommendations")) == 0 &&
              json_number_value(json_object_get(a, "spent_core_hours")) == 0 && w0 &&
              (!strcmp(json_string_value(json_object_get(w0, "code")) ?: "", "grid_cost_reached") ||
               !strcmp(json_string_value(json_object_get(w0, "code")) ?: "", "costlier_than_grid")) &&
              g0 > 0 && m0 > 0 && m0 + 0.5 > g0,
          "the default grid spent: no runs, coded (%s, grid %g, measured %g)",
          json_string_value(json_object_get(w0, "code")) ?: "none", g0, m0);
    json_decref(a);
    /* a grid the caller names (the sweep again at its 3 repetitions and more) */
    a = request_json(h, "POST", path,
                     "{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":0.5,"
                     "\"epochs_per_run\":0.5,\"grid_core_hours\":1000}",
                     200);
    double spent = json_number_value(json_object_get(a, "spent_core_hours")), sum = 0;
    json_t *recs = json_object_get(a, "recommendations"), *x;
    size_t i;
    int priced = 1;
    json_array_foreach(recs, i, x)
    {
        sum += json_number_value(json_object_get(x, "core_hours"));
        json_t *pt = json_object_get(x, "point");
        double r = json_number_value(json_object_get(pt, "ranks"));
        double t = json_number_value(json_object_get(pt, "threads"));
        char pp[160];
        snprintf(pp, sizeof pp, "/v1/experiments/%ld/predict?ranks=%g&threads=%g", exp, r, t);
        json_t *pr = request_json(h, "GET", pp, NULL, 200);
        double want = json_number_value(json_object_get(json_object_get(pr, "epoch"), "time")) *
                      r * 4 / 3600 * 0.5;
        priced &= fabs(json_number_value(json_object_get(x, "core_hours_per_run")) - want) <=
                  1e-9 * want;
        json_decref(pr);
    }
    check(json_array_size(recs) > 0 && spent > 0 && spent <= 0.5 && fabs(sum - spent) <= 1e-9,
          "recommendations within the budget: %g core-hours in %zu points", spent,
          json_array_size(recs));
    check(priced, "a run costs epochs_per_run x predicted T x ranks x 4 / 3600");
    check(json_is_array(json_object_get(a, "warnings")), "the advice's coded warnings");
    double now = json_number_value(json_object_get(json_object_get(a, "mean_half_width_s"), "now"));
    double after =
        json_number_value(json_object_get(json_object_get(a, "mean_half_width_s"), "after"));
    check(after < now && check_close(json_number_value(json_object_get(a, "expected_shrink_pct")),
                                     100 * (1 - after / now), 1e-9, 0),
          "the interval shrinks: %g -> %g", now, after);
    check(json_number_value(json_object_get(json_object_get(json_object_get(a, "noise"), "comp"),
                                            "cv")) > 0,
          "noise from the repetitions");
    json_decref(a);
    struct {
        const char *body, *field;
    } bad[] = {
        {"{\"target\":{\"ranks\":256},\"budget_core_hours\":1}", "target.threads"},
        {"{\"target\":{\"ranks\":256,\"threads\":4,\"gpus\":2},\"budget_core_hours\":1}",
         "target.gpus"},
        {"{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":0}",
         "budget_core_hours"},
        {"{\"target\":{\"ranks\":256,\"threads\":4}}", "budget_core_hours"},
        {"{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":1,"
         "\"candidates\":{\"gpus\":[1]}}",
         "candidates.gpus"},
        {"{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":1,"
         "\"grid_core_hours\":-3}",
         "grid_core_hours"},
        {"{\"target\":{\"ranks\":256,\"threads\":4},\"budget_core_hours\":1,"
         "\"grid_core_hours\":\"all\"}",
         "grid_core_hours"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        json_t *d = request_json(h, "POST", path, bad[k].body, 400);
        check(!strcmp(json_string_value(json_object_get(d, "field")) ?: "", bad[k].field),
              "advice: field %s, want %s", json_string_value(json_object_get(d, "field")),
              bad[k].field);
        json_decref(d);
    }
}

/* SE along ranks with threads fixed: at threads 1, ranks 4 against ranks 2:
 * means 222 and 50·(2.2 + 0.04) = 112, SDs 1% of them; the interval from each
 * mean's 97.5% t interval (GSL's quantile) */
static void test_efficiency(harness *h, long exp)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/efficiency?parameter=ranks&baseline=2", exp);
    json_t *e = request_json(h, "GET", path, NULL, 200);
    json_t *groups = json_object_get(e, "groups");
    json_t *g0 = json_array_get(groups, 0);
    json_t *p1 = json_array_get(json_object_get(g0, "points"), 1);
    json_t *se = json_object_get(p1, "se");
    double t = gsl_cdf_tdist_Pinv(0.9875, 2), hb = t * 2.22 / sqrt(3.0), hy = t * 1.12 / sqrt(3.0);
    check(json_array_size(groups) == 5 &&
              json_number_value(json_object_get(json_object_get(g0, "fixed"), "threads")) == 1 &&
              json_number_value(json_object_get(p1, "ranks")) == 4,
          "5 groups by threads; threads 1, ranks 4 second");
    check(check_close(json_number_value(json_object_get(se, "value")), 222.0 / 112, 1e-9, 0),
          "SE_4 = 222/112, got %g", json_number_value(json_object_get(se, "value")));
    json_t *iv = json_object_get(se, "interval");
    check(check_close(json_number_value(json_array_get(iv, 0)), (222 - hb) / (112 + hy), 1e-6, 0) &&
              check_close(json_number_value(json_array_get(iv, 1)), (222 + hb) / (112 - hy), 1e-6,
                          0),
          "SE interval");
    json_t *last = json_array_get(groups, 4); /* threads 16: only ranks 2 and 4 are legal */
    check(json_array_size(json_object_get(last, "points")) == 2, "threads 16: two points");
    json_decref(e);
    snprintf(path, sizeof path, "/v1/experiments/%ld/efficiency?parameter=ranks&baseline=3", exp);
    json_decref(request_json(h, "GET", path, NULL, 400));
    snprintf(path, sizeof path, "/v1/experiments/%ld/efficiency?parameter=gpus", exp);
    json_decref(request_json(h, "GET", path, NULL, 400));
}

static void test_bad_input(harness *h, long exp)
{
    char path[160];
    long profiles = harness_sql_long(h, "SELECT count(*) FROM profiles");
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan", exp);
    struct {
        const char *body, *field;
    } bad[] = {
        {"{\"parameters\":{\"ranks\":[2],\"threads\":[1]},\"legal\":\"ranks * nodes <= 8\","
         "\"command\":\"x\"}",
         "legal"},
        {"{\"parameters\":{\"ranks\":[2],\"threads\":[1]},\"legal\":\"ranks <\",\"command\":\"x\"}",
         "legal"},
        {"{\"parameters\":{\"ranks\":[2],\"nodes\":[1]},\"command\":\"x\"}", "parameters.nodes"},
        {"{\"parameters\":{\"ranks\":[2]},\"command\":\"x\"}", "parameters"},
        {"{\"parameters\":{\"ranks\":[2],\"threads\":[1]},\"factors\":{\"precision\":[\"fp16\"]},"
         "\"command\":\"x\"}",
         "factors.precision"},
        {"{\"parameters\":{\"ranks\":[2],\"threads\":[1]},\"command\":\"x {gpus}\"}", "command"},
        {"{\"parameters\":{\"ranks\":[2],\"threads\":[1]},\"command\":\"x\",\"repetitions\":-1}",
         "repetitions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *d = request_json(h, "POST", path, bad[i].body, 400);
        check(!strcmp(json_string_value(json_object_get(d, "field")) ?: "", bad[i].field),
              "field %s, want %s (%s)", json_string_value(json_object_get(d, "field")),
              bad[i].field, json_string_value(json_object_get(d, "detail")));
        json_decref(d);
    }
    struct {
        const char *query, *field;
        int status;
    } q[] = {
        {"sensitivity?goal=bigger", "goal", 400},
        {"sensitivity?metric=errors", "goal", 400},
        {"sensitivity?metric=errors&goal=smaller", "metric", 422},
        {"sensitivity?name=nothing", "name", 404},
        {"sensitivity?at=1", "at", 400},
        {"statistics?target=2", "target", 400},
        {"statistics?level=kernel", "level", 400},
        {"statistics?limit=0", "limit", 400},
    };
    for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, q[i].query);
        json_t *d = request_json(h, "GET", path, NULL, q[i].status);
        check(!strcmp(json_string_value(json_object_get(d, "field")) ?: "", q[i].field),
              "%s: field %s, want %s", q[i].query, json_string_value(json_object_get(d, "field")),
              q[i].field);
        json_decref(d);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == profiles,
          "nothing stored by refused requests");
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    long exp = create(h);
    test_plan_and_upload(h, exp);
    test_statistics(h, exp);
    test_sensitivity(h, exp);
    test_sensitivity_efficiency(h, exp);
    test_advice(h, exp);
    test_efficiency(h, exp);
    /* a metric that is zero everywhere: S/N refuses it (422 naming metric) */
    upload(h, exp, 2, 1, 4, 1);
    request_refit(h, exp);
    harness_sleep(1.2); /* the service's models follow a refit within 1 s */
    test_bad_input(h, exp);
    int failed = check_failed_count;
    harness_close(h, failed > 0);
    return check_summary();
}
