/*
 * test_api_papers.c — Extra-Deep (paper 000) and Kavarakuntla et al. (paper
 * 004) over real HTTP against a real PostgreSQL, expectations computed by
 * hand from the papers' formulas:
 *
 *  - training set-ups as expressions of the parameters: the weak-scaling
 *    case study D_t = 50000·x1, G = x1, B = 256 gives n_t = 195 steps at
 *    every x1, so a kernel of 0.01 s per step costs 1.95 s per epoch at
 *    every coordinate; faults at creation and at an upload's coordinate
 *    answer 400 naming the field and store nothing.
 *  - Eq. 1 aggregation: a kernel in 1 of 4 steps on 1 of 2 ranks counts 0
 *    in the others (median 0; with "measure":"mean" its per-step share
 *    0.4/8), and the work between steps is part of F_epoch and of its
 *    category, and shown as the application part "between".
 *  - validation steps in Kineto traces: steps inside a record_function
 *    range "validation" count n_v times, the others n_t times; ?phase=
 *    overrides, custom patterns that match nothing give a warning.
 *  - Δ, ε and cost per kernel and per part (Eq. 11-14): strong scaling with
 *    a kernel taking 1200/x1 s per epoch and one taking 2 s: at x1 = 10,
 *    Δ = (600 - 120)/6 = 80 % and 0 %, ε = 80/400 = 20 %; the first
 *    benefits most; core-hours 1200/3600 at every x1; Q5 under a deadline
 *    picks the feasible candidate with the highest ε model value.
 *  - held-out accuracy (§4): a kernel of 10 + 2·x1 s per epoch fitted at
 *    x1 = 2..10; evaluation-only uploads at 12 (on the law: 0 % error) and
 *    16 (measured 46.2 against 42 predicted: 4.2/46.2 = 9.0909 %) change no
 *    model and give a median evaluation error of 4.5454 %.
 *  - paper 004's iteration model from phase annotations: io 0.01, h2d 0.02,
 *    forward 0.1, backward 0.2, update 0.03 s per step and an all-reduce of
 *    0.05·x1 s: Eq. 2 = Eq. 3 = 0.36 + 0.05·x1, Eq. 5 = 0.33; Eq. 6 at x1 = 10
 *    against 2: 5·0.46/0.86; Eq. 7: 5·0.3/0.8 = 1.875; no t_md: a warning.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

/* POST; returns the parsed answer (or NULL) and the status in *status. */
/* The not_measured warnings of an answer (the models' own warnings aside). */
static int not_measured(const json_t *w)
{
    int n = 0;
    for (size_t i = 0; i < json_array_size(w); i++)
        n += !strcmp(json_string_value(json_object_get(json_array_get(w, i), "code")) ?: "",
                     "not_measured");
    return n;
}

static json_t *post(harness *h, const char *path, const char *body, int *status)
{
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    *status = r.status;
    harness_response_free(&r);
    return doc;
}

static json_t *get(harness *h, const char *path, int *status)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    *status = r.status;
    harness_response_free(&r);
    return doc;
}

static const char *dump(const json_t *j)
{
    static char buf[2048];
    char *t = j ? json_dumps(j, JSON_COMPACT) : NULL;
    snprintf(buf, sizeof buf, "%s", t ? t : "(none)");
    free(t);
    return buf;
}

/* Creates an experiment from a document; its id, or -1. */
static long create(harness *h, const char *doc)
{
    int st;
    json_t *e = post(h, "/v1/experiments", doc, &st);
    long id = st == 201 ? (long)json_integer_value(json_object_get(e, "id")) : -1;
    check(id > 0, "create: %d %s", st, dump(e));
    json_decref(e);
    return id;
}

/* A 400 whose "field" is want. */
static void check_field(const json_t *doc, int status, const char *want, const char *what)
{
    const char *f = json_string_value(json_object_get(doc, "field"));
    check(status == 400 && f && !strcmp(f, want), "%s: %d %s (want field %s)", what, status,
          dump(doc), want);
}

/* One kernel of one callpath in a step. */
typedef struct kern {
    const char *name, *category;
    double time;
} kern;

/* A perfcast profile: nranks ranks, nsteps train steps each; kernel k of
 * kernels[] is in step s of rank r when present(r, s, k). */
static char *profile(double x, int nranks, int nsteps, const kern *kernels, int nk,
                     int (*present)(int r, int s, int k), const kern *between, int nb)
{
    json_t *ranks = json_array();
    for (int r = 0; r < nranks; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < nsteps; s++) {
            json_t *cps = json_array();
            for (int k = 0; k < nk; k++)
                if (!present || present(r, s, k))
                    json_array_append_new(cps, json_pack("{s:s, s:s, s:{s:f}}", "name",
                                                         kernels[k].name, "category",
                                                         kernels[k].category, "metrics", "time",
                                                         kernels[k].time));
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths",
                                                   cps));
        }
        json_t *rank = json_pack("{s:i, s:o}", "rank", r, "steps", steps);
        if (nb > 0) {
            json_t *cps = json_array();
            for (int k = 0; k < nb; k++)
                json_array_append_new(cps, json_pack("{s:s, s:s, s:{s:f}}", "name",
                                                     between[k].name, "category",
                                                     between[k].category, "metrics", "time",
                                                     between[k].time));
            json_object_set_new(rank, "between_steps",
                                json_pack("[{s:o}]", "callpaths", cps));
        }
        json_array_append_new(ranks, rank);
    }
    json_t *doc = json_pack("{s:{s:f}, s:i, s:o}", "point", "x1", x, "repetition", 1, "ranks",
                            ranks);
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(doc);
    return text;
}

/* Uploads a profile; the job id (0 when refused). */
static long upload(harness *h, long exp, const char *body, int *status, json_t **answer)
{
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    json_t *doc = post(h, path, body, status);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    if (answer)
        *answer = doc;
    else
        json_decref(doc);
    return job;
}

/* The value of the measurement (level, name, phase) at x1, NAN if absent.
 * A callpath's work between steps is listed twice with phase "between": per
 * step as measured and per epoch (n_t times that); the larger is taken. */
static double measurement(harness *h, long exp, const char *level, const char *name,
                          const char *phase, double x1)
{
    char path[256];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/measurements?level=%s&name=%s&metric=time&phase=%s&limit=1000",
             exp, level, name, phase);
    int st;
    json_t *doc = get(h, path, &st);
    json_t *list = json_object_get(doc, "measurements");
    double v = NAN;
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *m = json_array_get(list, i);
        double mv = json_number_value(json_object_get(m, "value"));
        if (json_number_value(json_object_get(json_object_get(m, "point"), "x1")) == x1 &&
            (isnan(v) || mv > v))
            v = mv;
    }
    json_decref(doc);
    return v;
}

/* ---- training set-ups as expressions ------------------------------------------ */

static void test_setup_expressions(harness *h)
{
    long exp = create(h, "{\"name\":\"weak-case-study\",\"parameters\":[\"x1\"],\"scaling\":"
                         "\"weak\",\"training\":{\"train_samples\":\"50000*x1\","
                         "\"validation_samples\":\"10000*x1\",\"batch_size\":256,"
                         "\"data_parallel\":\"x1\"}}");
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld", exp);
    int st;
    json_t *e = get(h, path, &st);
    json_t *tr = json_object_get(e, "training");
    check(st == 200 && json_is_string(json_object_get(tr, "train_samples")) &&
              !strcmp(json_string_value(json_object_get(tr, "train_samples")), "50000*x1") &&
              json_integer_value(json_object_get(tr, "batch_size")) == 256,
          "view keeps the expression: %s", dump(e));
    json_decref(e);

    kern k[] = {{"gemm", "comp", 0.01}};
    const double xs[] = {2, 4, 6, 8, 10};
    long job = 0;
    for (int i = 0; i < 5; i++) {
        char *body = profile(xs[i], 2, 3, k, 1, NULL, NULL, 0);
        job = upload(h, exp, body, &st, NULL);
        check(st == 202, "upload at %g: %d", xs[i], st);
        free(body);
    }
    check(harness_wait_job(h, job, 30), "refit");
    /* n_t = floor(50000·x1/x1/256) = 195 at every x1: 195 × 0.01 s */
    for (int i = 0; i < 5; i++) {
        double v = measurement(h, exp, "callpath", "gemm", "epoch", xs[i]);
        check(check_close(v, 1.95, 1e-9, 1), "epoch of gemm at x1=%g: %.17g, want 1.95", xs[i], v);
        v = measurement(h, exp, "application", "epoch", "epoch", xs[i]);
        check(check_close(v, 1.95, 1e-9, 1), "application epoch at x1=%g: %.17g", xs[i], v);
    }

    /* faults at creation name the field */
    static const struct {
        const char *training, *field;
    } bad[] = {
        {"\"train_samples\":\"50000*nodes\",\"batch_size\":256", "training.train_samples"},
        {"\"train_samples\":\"50000*\",\"batch_size\":256", "training.train_samples"},
        {"\"train_samples\":1000,\"batch_size\":\"x2\"", "training.batch_size"},
        {"\"train_samples\":1000,\"batch_size\":\"0\"", "training.batch_size"},
        {"\"train_samples\":1000,\"batch_size\":\"2-3\"", "training.batch_size"},
        {"\"train_samples\":1000,\"validation_samples\":\"-1\",\"batch_size\":1",
         "training.validation_samples"},
        {"\"train_samples\":1000,\"batch_size\":2.5", "training.batch_size"},
        /* floor(100/(1/1)/256) = 0 steps at every coordinate */
        {"\"train_samples\":100,\"batch_size\":256,\"data_parallel\":1", "training.train_samples"},
        /* B = -x1 is never > 0 */
        {"\"train_samples\":1000,\"batch_size\":\"-x1\",\"data_parallel\":\"x1\"", "training.batch_size"},
        /* 100·x1 samples in batches of 256·x1 per x1 ranks: floor(100/(256·x1)) = 0 everywhere */
        {"\"train_samples\":\"100*x1\",\"batch_size\":\"256*x1\",\"data_parallel\":\"x1\"",
         "training.train_samples"},
    };
    long before = harness_sql_long(h, "SELECT count(*) FROM experiments");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"name\":\"bad-setup\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                 "\"training\":{%s}}",
                 bad[i].training);
        json_t *p = post(h, "/v1/experiments", doc, &st);
        check_field(p, st, bad[i].field, bad[i].training);
        json_decref(p);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM experiments") == before,
          "refused set-ups stored nothing");

    /* a set-up with no step at an upload's coordinate: 400 at the upload */
    long exp2 = create(h, "{\"name\":\"batch-per-x1\",\"parameters\":[\"x1\"],\"scaling\":"
                          "\"weak\",\"training\":{\"train_samples\":1000,"
                          "\"batch_size\":\"x1-2\",\"data_parallel\":1}}");
    long profiles = harness_sql_long(h, "SELECT count(*) FROM profiles");
    char *body = profile(2, 1, 2, k, 1, NULL, NULL, 0);
    json_t *p = NULL;
    upload(h, exp2, body, &st, &p);
    free(body);
    check_field(p, st, "training.batch_size", "batch_size x1-2 at x1=2");
    json_decref(p);
    /* B = 998 at x1 = 1000: floor(1000/998) = 1 step; at x1 = 600, B = 598: 1 step;
     * at x1 = 400, B = 398: floor(2.51) = 2 steps: all accepted */
    body = profile(400, 1, 2, k, 1, NULL, NULL, 0);
    upload(h, exp2, body, &st, NULL);
    free(body);
    check(st == 202, "upload at x1=400: %d", st);
    /* train_samples 1000 with B = 1998 at x1 = 2000: no step */
    body = profile(2000, 1, 2, k, 1, NULL, NULL, 0);
    upload(h, exp2, body, &st, &p);
    free(body);
    check_field(p, st, "training.train_samples", "no step at x1=2000");
    json_decref(p);
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == profiles + 1,
          "refused uploads stored nothing");
}

/* ---- Eq. 1: absent = 0, measure: mean, between-steps work in F_epoch ------------ */

static int sparse_present(int r, int s, int k)
{
    return k == 0 || (k == 1 && r == 0 && s == 2);
}

static void check_sparse(harness *h, long exp, double ckpt, double ckpt0, const char *what)
{
    /* n_t = floor(1024·x1/(x1·256)) = 4 at every x1 */
    const double xs[] = {2, 4, 6, 8, 10};
    for (int i = 0; i < 5; i++) {
        double g = measurement(h, exp, "callpath", "gemm", "epoch", xs[i]);
        double c = measurement(h, exp, "callpath", "ckpt", "epoch", xs[i]);
        double b = measurement(h, exp, "callpath", "memcpy", "between", xs[i]);
        double comp = measurement(h, exp, "application", "comp", "epoch", xs[i]);
        double mem = measurement(h, exp, "application", "mem", "epoch", xs[i]);
        double between = measurement(h, exp, "application", "between", "epoch", xs[i]);
        double epoch = measurement(h, exp, "application", "epoch", "epoch", xs[i]);
        check(check_close(g, 4, 1e-12, 1), "%s: gemm %.17g, want 4·1", what, g);
        check(check_close(c, 4 * ckpt, 1e-12, 1), "%s: ckpt %.17g, want 4·%g", what, c, ckpt);
        check(check_close(b, 2, 1e-12, 1), "%s: memcpy between %.17g, want 4·0.5", what, b);
        check(check_close(comp, 4 + 4 * ckpt, 1e-12, 1), "%s: comp %.17g", what, comp);
        check(check_close(mem, 2, 1e-12, 1), "%s: mem (between steps only) %.17g, want 2", what,
              mem);
        check(check_close(between, 2, 1e-12, 1), "%s: between part %.17g, want 2", what,
              between);
        /* the run's epoch is its slowest rank's: rank 0, which has the ckpt */
        check(check_close(epoch, 6 + 4 * ckpt0, 1e-12, 1), "%s: F_epoch %.17g, want %g", what,
              epoch, 6 + 4 * ckpt0);
    }
}

static void test_eq1_aggregation(harness *h)
{
    static const char doc[] =
        "{\"name\":\"%s\",\"parameters\":[\"x1\"],\"scaling\":\"weak\",%s"
        "\"training\":{\"train_samples\":\"1024*x1\",\"batch_size\":256,"
        "\"data_parallel\":\"x1\"}}";
    char text[512];
    snprintf(text, sizeof text, doc, "eq1-median", "");
    long med = create(h, text);
    snprintf(text, sizeof text, doc, "eq1-mean", "\"measure\":\"mean\",");
    long mean = create(h, text);
    snprintf(text, sizeof text, doc, "eq1-bad", "\"measure\":\"max\",");
    int st;
    json_t *p = post(h, "/v1/experiments", text, &st);
    check_field(p, st, "measure", "measure max");
    json_decref(p);

    kern k[] = {{"gemm", "comp", 1.0}, {"ckpt", "comp", 0.4}};
    kern between[] = {{"memcpy", "mem", 0.5}};
    const double xs[] = {2, 4, 6, 8, 10};
    long jobs[2] = {0, 0};
    for (int i = 0; i < 5; i++) {
        char *body = profile(xs[i], 2, 4, k, 2, sparse_present, between, 1);
        jobs[0] = upload(h, med, body, &st, NULL);
        check(st == 202, "upload median at %g: %d", xs[i], st);
        jobs[1] = upload(h, mean, body, &st, NULL);
        check(st == 202, "upload mean at %g: %d", xs[i], st);
        free(body);
    }
    check(harness_wait_job(h, jobs[0], 30) && harness_wait_job(h, jobs[1], 30), "refits");
    /* median: ckpt {0,0,0.4,0} and {0,0,0,0} -> 0, on rank 0 as well */
    check_sparse(h, med, 0, 0, "median");
    /* mean: (0.1 + 0) / 2 = 0.05 per step over the ranks; rank 0 alone, the
     * slowest, 0.1 */
    check_sparse(h, mean, 0.05, 0.1, "mean");

    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application&metric=time", med);
    json_t *models = get(h, path, &st);
    int found = 0;
    json_t *list = json_object_get(models, "models");
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_t *m = json_array_get(list, i);
        if (!strcmp(json_string_value(json_object_get(m, "callpath")), "between"))
            found = json_is_string(json_object_get(m, "function"));
    }
    check(found, "an application model of the work between steps: %s", dump(models));
    json_decref(models);
}

/* ---- validation steps in traces ------------------------------------------------ */

/* Four ProfilerSteps of 100 us with a 10 us aten::mm each; steps 3 and 4
 * inside a record_function range named annot. */
static char *kineto_trace(const char *annot)
{
    static int run;
    char *buf = malloc(4096);
    /* a metadata event that differs per trace: no two uploads are the same bytes */
    size_t n = (size_t)snprintf(buf, 4096,
                                "{\"traceEvents\":[{\"ph\":\"M\",\"name\":\"process_name\","
                                "\"pid\":1,\"args\":{\"name\":\"run %d\"}},",
                                ++run);
    for (int s = 0; s < 4; s++)
        n += (size_t)snprintf(buf + n, 4096 - n,
                              "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                              "\"ProfilerStep#%d\",\"ts\":%d,\"dur\":100},"
                              "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\","
                              "\"ts\":%d,\"dur\":10},",
                              s + 1, s * 100, s * 100 + 10);
    snprintf(buf + n, 4096 - n,
             "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"%s\",\"ts\":195,"
             "\"dur\":205}]}",
             annot);
    return buf;
}

static void test_validation_steps(harness *h)
{
    /* n_t = floor(400·x1/(x1·100)) = 4, n_v = floor(200·x1/(x1·100)) = 2 */
    long exp = create(h, "{\"name\":\"val-steps\",\"parameters\":[\"x1\"],\"scaling\":"
                         "\"weak\",\"training\":{\"train_samples\":\"400*x1\","
                         "\"validation_samples\":\"200*x1\",\"batch_size\":100,"
                         "\"data_parallel\":\"x1\"}}");
    static const struct {
        const char *query, *annot;
        int nval, warning;
        double epoch;
    } cases[] = {
        /* 4·10 us + 2·10 us */
        {"x1=2", "validation", 2, 0, 60e-6},
        /* every step trains: 4·10 us */
        {"x1=4&phase=train", "validation", 0, 0, 40e-6},
        {"x1=6&validation_markers=holdout", "validation", 0, 1, 40e-6},
        {"x1=8&validation_markers=holdout", "holdout", 2, 0, 60e-6},
        /* every step validates: 2·10 us */
        {"x1=10&phase=validation", "data", 4, 0, 20e-6},
    };
    long job = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[160];
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?format=kineto&%s", exp,
                 cases[i].query);
        char *body = kineto_trace(cases[i].annot);
        int st;
        json_t *a = post(h, path, body, &st);
        free(body);
        job = (long)json_integer_value(json_object_get(a, "job"));
        json_t *w = json_object_get(a, "warnings");
        check(st == 202 && json_integer_value(json_object_get(a, "validation_steps")) ==
                               cases[i].nval &&
                  (cases[i].warning ? json_array_size(w) == 1 : w == NULL),
              "%s: %d %s", cases[i].query, st, dump(a));
        json_decref(a);
    }
    check(harness_wait_job(h, job, 30), "refit");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        double x1 = atof(cases[i].query + 3);
        double v = measurement(h, exp, "callpath", "aten::mm", "epoch", x1);
        check(check_close(v, cases[i].epoch, 1e-9, 0), "%s: F(aten::mm) %.17g, want %g",
              cases[i].query, v, cases[i].epoch);
    }

    /* refusals name the field and store nothing */
    long before = harness_sql_long(h, "SELECT count(*) FROM profiles");
    static const char *const bad[][2] = {{"phase=test", "phase"},
                                         {"validation_markers=val,,eval", "validation_markers"}};
    for (int i = 0; i < 2; i++) {
        char path[160];
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?format=kineto&x1=12&%s", exp,
                 bad[i][0]);
        char *body = kineto_trace("validation");
        int st;
        json_t *a = post(h, path, body, &st);
        free(body);
        check_field(a, st, bad[i][1], bad[i][0]);
        json_decref(a);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM profiles") == before, "nothing stored");
    int st;
    json_t *a = post(h, "/v1/experiments",
                     "{\"name\":\"bad-vm\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                     "\"validation_markers\":\"\",\"training\":{\"train_samples\":1000,"
                     "\"batch_size\":1,\"data_parallel\":\"x1\"}}",
                     &st);
    check_field(a, st, "validation_markers", "empty validation_markers");
    json_decref(a);
    /* the experiment's patterns apply to its uploads */
    long exp2 = create(h, "{\"name\":\"val-markers\",\"parameters\":[\"x1\"],\"scaling\":"
                          "\"weak\",\"validation_markers\":\"holdout\",\"training\":{"
                          "\"train_samples\":1000,\"batch_size\":1,\"data_parallel\":\"x1\"}}");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?format=kineto&x1=2", exp2);
    char *body = kineto_trace("holdout");
    a = post(h, path, body, &st);
    free(body);
    check(st == 202 && json_integer_value(json_object_get(a, "validation_steps")) == 2,
          "experiment's validation_markers: %d %s", st, dump(a));
    json_decref(a);
}

/* ---- Δ, ε and cost per kernel and part; Q5 by the ε model -------------------------- */

static double num(const json_t *o, const char *path)
{
    char key[64];
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        o = json_object_get(o, key);
        path = dot + 1;
    }
    return json_is_number(json_object_get(o, path)) ? json_number_value(json_object_get(o, path))
                                                    : NAN;
}

static const json_t *named(const json_t *list, const char *name)
{
    for (size_t i = 0; i < json_array_size(list); i++) {
        const char *n = json_string_value(json_object_get(json_array_get(list, i), "name"));
        if (n && !strcmp(n, name))
            return json_array_get(list, i);
    }
    return NULL;
}

static void test_speedups(harness *h)
{
    long exp = create(h, "{\"name\":\"strong-speedups\",\"parameters\":[\"x1\"],"
                         "\"scaling\":\"strong\",\"training\":{\"train_samples\":50000,"
                         "\"batch_size\":256,\"data_parallel\":\"x1\"}}");
    const double xs[] = {2, 4, 6, 8, 10};
    long job = 0;
    int st;
    for (int i = 0; i < 5; i++) {
        /* n_t = floor(50000/(x1·256)): per-step values that give the epochs exactly */
        double n_t = floor(50000 / (xs[i] * 256));
        kern k[] = {{"gemm", "comp", 1200 / xs[i] / n_t}, {"allreduce", "comm", 2 / n_t}};
        char *body = profile(xs[i], 2, 3, k, 2, NULL, NULL, 0);
        job = upload(h, exp, body, &st, NULL);
        check(st == 202, "upload at %g: %d", xs[i], st);
        free(body);
    }
    check(harness_wait_job(h, job, 30), "refit");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/speedups", exp);
    json_t *d = get(h, path, &st);
    check(st == 200 && num(d, "at.x1") == 10, "speedups: %d %s", st, dump(d));
    const json_t *kernels = json_object_get(d, "callpaths"), *parts = json_object_get(d, "parts");
    const json_t *gemm = named(kernels, "gemm"), *ar = named(kernels, "allreduce");
    const json_t *comp = named(parts, "comp"), *epoch = named(parts, "epoch");
    check(gemm && check_close(num(gemm, "at.speedup_pct"), 80, 1e-6, 1) &&
              check_close(num(gemm, "at.efficiency_pct"), 20, 1e-6, 1) &&
              check_close(num(gemm, "at.core_hours"), 1200.0 / 3600, 1e-6, 1e-3),
          "gemm at x1=10: Δ %g (80), ε %g (20), core-h %g (1/3)", num(gemm, "at.speedup_pct"),
          num(gemm, "at.efficiency_pct"), num(gemm, "at.core_hours"));
    /* ε of a kernel that does not scale: 100 at P_1, 0 elsewhere (measured) */
    const json_t *ar10 = ar ? json_array_get(json_object_get(ar, "measured"), 4) : NULL;
    check(ar && fabs(num(ar, "at.speedup_pct")) < 1e-6 && num(ar10, "point.x1") == 10 &&
              fabs(num(ar10, "efficiency_pct")) < 1e-9 &&
              num(json_array_get(json_object_get(ar, "measured"), 0), "efficiency_pct") == 100,
          "allreduce: Δ %g (0), measured ε at 10 %g (0)", num(ar, "at.speedup_pct"),
          num(ar10, "efficiency_pct"));
    check(comp && check_close(num(comp, "at.speedup_pct"), 80, 1e-6, 1), "comp part Δ %g",
          comp ? num(comp, "at.speedup_pct") : NAN);
    /* the epoch: T = 1200/x1 + 2: Δ(10) = (602 - 122)/6.02 */
    check(epoch && check_close(num(epoch, "at.speedup_pct"), 480 / 6.02, 1e-6, 1),
          "epoch Δ %g, want %g", epoch ? num(epoch, "at.speedup_pct") : NAN, 480 / 6.02);
    /* measured at x1 = 4: Δ = (600 - 300)/6 = 50, ε = 50/100·100 = 50 */
    const json_t *m4 = gemm ? json_array_get(json_object_get(gemm, "measured"), 1) : NULL;
    check(m4 && num(m4, "point.x1") == 4 && check_close(num(m4, "speedup_pct"), 50, 1e-9, 1) &&
              check_close(num(m4, "efficiency_pct"), 50, 1e-9, 1),
          "gemm measured at 4: %s", dump(m4));
    check(gemm && json_is_string(json_object_get(json_object_get(json_object_get(gemm, "models"),
                                                                 "speedup_pct"),
                                                 "function")),
          "a speedup model of the kernel");
    const char *most = json_string_value(
        json_object_get(json_array_get(json_object_get(json_object_get(d, "ranking"), "most"), 0),
                        "name"));
    const char *least = json_string_value(
        json_object_get(json_array_get(json_object_get(json_object_get(d, "ranking"), "least"), 0),
                        "name"));
    check(most && least && !strcmp(most, "gemm") && !strcmp(least, "allreduce"),
          "ranking: most %s, least %s", most ? most : "-", least ? least : "-");
    json_decref(d);

    /* at an extrapolated point, from the models: Δ(40) = 100 - 200/40 = 95 */
    snprintf(path, sizeof path, "/v1/experiments/%ld/speedups?x1=40", exp);
    d = get(h, path, &st);
    gemm = named(json_object_get(d, "callpaths"), "gemm");
    check(st == 200 && gemm && check_close(num(gemm, "at.speedup_pct"), 95, 1e-4, 1),
          "gemm Δ at 40: %g, want 95", gemm ? num(gemm, "at.speedup_pct") : NAN);
    /* a model's value there carries its 95% interval, Δ's never above 100% */
    const json_t *iv = json_object_get(json_object_get(gemm, "at_interval"), "speedup_pct");
    double lo = json_number_value(json_array_get(iv, 0)), hi = json_number_value(json_array_get(iv, 1));
    check(json_array_size(iv) == 2 && lo <= num(gemm, "at.speedup_pct") &&
              num(gemm, "at.speedup_pct") <= hi && hi <= 100,
          "gemm Δ at 40 in [%g, %g], at most 100", lo, hi);
    json_decref(d);
    snprintf(path, sizeof path, "/v1/experiments/%ld/speedups?metric=joules", exp);
    d = get(h, path, &st);
    check_field(d, st, "metric", "unknown metric");
    json_decref(d);

    /* Q5, strong scaling: feasible under 200 s are x1 >= 8 (T(8) = 152); the
     * ε model falls with x1, so the recommendation is 8 */
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations", exp);
    d = post(h, path,
             "{\"max_time_s\":200,\"epochs\":1,\"candidates\":{\"x1\":{\"values\":[2,4,8,16,32]}}}",
             &st);
    const json_t *rec = json_object_get(d, "recommended");
    const char *reason = json_string_value(json_object_get(rec, "reason"));
    check(st == 200 && num(rec, "point.x1") == 8 && reason && strstr(reason, "efficiency model") &&
              json_is_number(json_object_get(rec, "efficiency_pct_model")),
          "Q5 by the ε model: %s", dump(rec));
    json_decref(d);
}

/* ---- held-out accuracy ---------------------------------------------------------- */

static char *function_of(harness *h, long exp, const char *level, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=%s&metric=time&limit=1000", exp,
             level);
    int st;
    json_t *d = get(h, path, &st);
    char *f = NULL;
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(d, "models"), i, m)
    {
        const char *cp = json_string_value(json_object_get(m, "callpath"));
        const char *phase = json_string_value(json_object_get(m, "phase"));
        if (cp && !strcmp(cp, name) && phase && !strcmp(phase, "epoch"))
            f = json_is_string(json_object_get(m, "function"))
                    ? strdup(json_string_value(json_object_get(m, "function")))
                    : NULL;
    }
    json_decref(d);
    return f;
}

static void test_accuracy(harness *h)
{
    long exp = create(h, "{\"name\":\"held-out\",\"parameters\":[\"x1\"],\"scaling\":"
                         "\"weak\",\"training\":{\"train_samples\":\"1024*x1\","
                         "\"batch_size\":256,\"data_parallel\":\"x1\"}}");
    int st;
    long job = 0;
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/accuracy", exp);
    json_t *a = get(h, path, &st);
    check(st == 409, "accuracy before any model: %d", st);
    json_decref(a);
    /* n_t = 4: per-step 0.25·T(x1) */
    const double xs[] = {2, 4, 6, 8, 10};
    for (int i = 0; i < 5; i++) {
        kern k[] = {{"gemm", "comp", (10 + 2 * xs[i]) / 4}};
        char *body = profile(xs[i], 2, 3, k, 1, NULL, NULL, 0);
        job = upload(h, exp, body, &st, NULL);
        free(body);
    }
    check(harness_wait_job(h, job, 30), "refit");
    a = get(h, path, &st);
    const json_t *w = json_object_get(a, "warnings");
    check(st == 200 && not_measured(w) == 1 &&
              strstr(json_string_value(json_object_get(json_array_get(w, 0), "message")),
                     "no evaluation-only upload"),
          "no evaluation points: a warning: %s", dump(a));
    json_decref(a);
    char *before = function_of(h, exp, "callpath", "gemm");
    char *app_before = function_of(h, exp, "application", "epoch");

    const struct {
        double x, per_epoch;
    } held[] = {{12, 34}, {16, 46.2}};
    for (int i = 0; i < 2; i++) {
        kern k[] = {{"gemm", "comp", held[i].per_epoch / 4}};
        char *body = profile(held[i].x, 2, 3, k, 1, NULL, NULL, 0);
        char up[160];
        snprintf(up, sizeof up, "/v1/experiments/%ld/profiles?use=evaluation", exp);
        json_t *r = post(h, up, body, &st);
        free(body);
        check(st == 202 && !strcmp(json_string_value(json_object_get(r, "use")) ? json_string_value(json_object_get(r, "use")) : "", "evaluation"),
              "evaluation upload: %d %s", st, dump(r));
        job = (long)json_integer_value(json_object_get(r, "job"));
        json_decref(r);
    }
    check(harness_wait_job(h, job, 30), "refit with held-out points");
    harness_sleep(1.2); /* answers follow a refit within 1 s (the model cache's age) */
    char *after = function_of(h, exp, "callpath", "gemm");
    char *app_after = function_of(h, exp, "application", "epoch");
    check(before && after && !strcmp(before, after) && app_before && app_after &&
              !strcmp(app_before, app_after),
          "evaluation uploads change no model: %s / %s", before ? before : "-",
          after ? after : "-");
    free(before);
    free(after);
    free(app_before);
    free(app_after);
    check(isnan(measurement(h, exp, "callpath", "gemm", "epoch", 16)),
          "a held-out point is no measurement");

    a = get(h, path, &st);
    const json_t *gemm = named(json_object_get(a, "callpaths"), "gemm");
    const json_t *epoch = named(json_object_get(a, "application"), "epoch");
    const json_t *ev = json_object_get(gemm, "evaluation");
    const json_t *p16 = json_array_get(json_object_get(ev, "points"), 1);
    check(st == 200 && json_array_size(json_object_get(a, "evaluation_points")) == 2 &&
              not_measured(json_object_get(a, "warnings")) == 0,
          "accuracy: %d %s", st, dump(a));
    check(gemm && check_close(num(ev, "median_error_pct"), 4.2 / 46.2 * 100 / 2, 1e-6, 1e-9) &&
              num(p16, "point.x1") == 16 && check_close(num(p16, "predicted"), 42, 1e-9, 1) &&
              check_close(num(p16, "measured"), 46.2, 1e-12, 1) &&
              check_close(num(p16, "error_pct"), 4.2 / 46.2 * 100, 1e-6, 1e-9),
          "gemm at the held-out points: %s", dump(ev));
    check(gemm && fabs(num(json_object_get(gemm, "modeling"), "median_error_pct")) < 1e-6 &&
              json_array_size(json_object_get(json_object_get(gemm, "modeling"), "points")) == 5,
          "gemm at the modelling points: %s", dump(json_object_get(gemm, "modeling")));
    check(epoch && check_close(num(json_object_get(epoch, "evaluation"), "median_error_pct"),
                               4.2 / 46.2 * 100 / 2, 1e-6, 1e-9),
          "application epoch's predictive power: %s", dump(epoch));
    json_decref(a);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?use=test&x1=3", exp);
    a = post(h, path, "{}", &st);
    check_field(a, st, "use", "use=test");
    json_decref(a);
    snprintf(path, sizeof path, "/v1/experiments/%ld/accuracy?level=kernel", exp);
    a = get(h, path, &st);
    check_field(a, st, "level", "level=kernel");
    json_decref(a);
}

/* ---- paper 004's iteration model ---------------------------------------------- */

static void test_iterations(harness *h)
{
    long exp = create(h, "{\"name\":\"s-sgd\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                         "\"training\":{\"train_samples\":\"1024*x1\",\"batch_size\":256,"
                         "\"data_parallel\":\"x1\"}}");
    const double xs[] = {2, 4, 6, 8, 10};
    long job = 0;
    int st;
    for (int i = 0; i < 5; i++) {
        kern k[] = {{"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "host", 0.01},
                    {"Memcpy HtoD (Pageable -> Device)", "mem", 0.02},
                    {"forward", "host", 0.1},
                    {"backward", "host", 0.2},
                    {"Optimizer.step#SGD.step", "host", 0.03},
                    {"ncclKernel_AllReduce", "comm", 0.05 * xs[i]},
                    {"gemm", "comp", 0.07}};
        char *body = profile(xs[i], 2, 3, k, 7, NULL, NULL, 0);
        job = upload(h, exp, body, &st, NULL);
        free(body);
    }
    check(harness_wait_job(h, job, 30), "refit");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/iterations", exp);
    json_t *d = get(h, path, &st);
    const json_t *pts = json_object_get(d, "points");
    const json_t *p2 = json_array_get(pts, 0), *p10 = json_array_get(pts, 4);
    check(st == 200 && json_array_size(pts) == 5 && num(p10, "point.x1") == 10 &&
              num(p10, "iterations") == 3,
          "iterations: %d %s", st, dump(d));
    check(check_close(num(p10, "t_io.mean"), 0.01, 1e-9, 0) &&
              check_close(num(p10, "t_h2d.mean"), 0.02, 1e-9, 0) &&
              check_close(num(p10, "t_f.mean"), 0.1, 1e-9, 0) &&
              check_close(num(p10, "t_b.mean"), 0.2, 1e-9, 0) &&
              check_close(num(p10, "t_u.mean"), 0.03, 1e-9, 0) &&
              check_close(num(p10, "t_c.mean"), 0.5, 1e-9, 0) && num(p10, "t_md.mean") == 0 &&
              fabs(num(p10, "t_f.sd")) < 1e-12,
          "phases at x1 = 10: %s", dump(p10));
    check(check_close(num(p10, "eq1.mean"), 0.36, 1e-9, 0) &&
              check_close(num(p10, "eq2.mean"), 0.86, 1e-9, 0) &&
              check_close(num(p10, "eq3.median"), 0.86, 1e-9, 0) &&
              check_close(num(p10, "eq4.mean"), 0.36, 1e-9, 0) &&
              check_close(num(p10, "eq5.mean"), 0.33, 1e-9, 0),
          "equations at x1 = 10: %s", dump(p10));
    check(check_close(num(p10, "speedup_eq6"), 5 * 0.46 / 0.86, 1e-9, 0) &&
              check_close(num(p10, "speedup_eq7_relative"), 1.875, 1e-9, 0) &&
              check_close(num(p2, "speedup_eq6"), 1, 1e-12, 0),
          "speedups: %g %g", num(p10, "speedup_eq6"), num(p10, "speedup_eq7_relative"));
    /* Eq. 7 as the paper writes it, N_g·max{t_io + t_h2d, t_f + t_b} /
     * max{t'_io + t_h2d, t_f + t_b + t_c}, baseline x1 = 2 (t_c = 0.1):
     * at x1 = 10: 10·max(0.03, 0.3)/max(0.03, 0.3 + 0.5) = 10·0.3/0.8 = 3.75;
     * at the baseline: 2·0.3/max(0.03, 0.3 + 0.1) = 1.5, where the form
     * relative to the baseline gives (2/2)·0.3/0.4 = 0.75 */
    check(check_close(num(p10, "speedup_eq7"), 3.75, 1e-9, 0) &&
              check_close(num(p10, "eq7.numerator"), 0.3, 1e-9, 0) &&
              check_close(num(p10, "eq7.denominator"), 0.8, 1e-9, 0) &&
              check_close(num(p10, "eq7.n_g"), 10, 1e-12, 0) &&
              check_close(num(p2, "speedup_eq7"), 1.5, 1e-9, 0) &&
              check_close(num(p2, "eq7.denominator"), 0.4, 1e-9, 0) &&
              check_close(num(p2, "speedup_eq7_relative"), 0.75, 1e-9, 0),
          "Eq. 7 as written: %g at 10, %g at the baseline (relative %g)",
          num(p10, "speedup_eq7"), num(p2, "speedup_eq7"), num(p2, "speedup_eq7_relative"));
    const json_t *models = json_object_get(d, "models");
    const char *f3 = json_string_value(json_object_get(json_object_get(models, "eq3"), "function"));
    check(f3 && strstr(f3, "x1^(1)"), "Eq. 3 modelled over x1: %s", f3 ? f3 : "-");
    const json_t *w = json_object_get(d, "warnings");
    const char *wm = json_string_value(json_object_get(json_array_get(w, 0), "message"));
    check(json_array_size(w) == 1 && wm && strstr(wm, "t_md") &&
              !strcmp(json_string_value(json_object_get(json_array_get(w, 0), "code")) ?: "",
                      "phase_unmatched"),
          "no t_md annotation: a warning: %s", dump(w));
    const char *io = json_string_value(json_object_get(
        json_object_get(json_object_get(d, "phases"), "t_io"), "matched"));
    check(io && !strcmp(io, "dataloader"), "t_io from PyTorch's DataLoader range: %s",
          io ? io : "-");
    json_decref(d);

    /* an experiment's own patterns: the gemm is t_md here (0.07 s) */
    long exp2 = create(h, "{\"name\":\"s-sgd-md\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                          "\"iteration_phases\":{\"md\":\"gemm\"},"
                          "\"training\":{\"train_samples\":1000,\"batch_size\":1,"
                          "\"data_parallel\":\"x1\"}}");
    kern k2[] = {{"gemm", "comp", 0.07}, {"forward", "host", 0.1}};
    char *body = profile(2, 1, 2, k2, 2, NULL, NULL, 0);
    job = upload(h, exp2, body, &st, NULL);
    free(body);
    check(harness_wait_job(h, job, 30), "refit 2");
    snprintf(path, sizeof path, "/v1/experiments/%ld/iterations", exp2);
    d = get(h, path, &st);
    p2 = json_array_get(json_object_get(d, "points"), 0);
    check(st == 200 && check_close(num(p2, "t_md.mean"), 0.07, 1e-9, 0) &&
              check_close(num(p2, "eq4.mean"), 0.17, 1e-9, 0),
          "custom t_md: %s", dump(p2));
    const json_t *m4 = json_object_get(json_object_get(d, "models"), "eq4");
    const char *code = json_string_value(
        json_object_get(json_array_get(json_object_get(m4, "warnings"), 0), "code"));
    check(code && !strcmp(code, "few_points") && json_is_null(json_object_get(m4, "function")),
          "one point: no function, a few_points warning: %s", dump(m4));
    json_decref(d);

    /* three points: a model with a few_points warning instead of null
     * (t_f = 0.1·x1 s: Eq. 4 = 0.07 + 0.1·x1) */
    long exp3 = create(h, "{\"name\":\"s-sgd-few\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                          "\"iteration_phases\":{\"md\":\"gemm\"},"
                          "\"training\":{\"train_samples\":1000,\"batch_size\":1,"
                          "\"data_parallel\":\"x1\"}}");
    for (int i = 1; i <= 3; i++) {
        kern k3[] = {{"gemm", "comp", 0.07}, {"forward", "host", 0.1 * (2 * i)}};
        body = profile(2 * i, 1, 2, k3, 2, NULL, NULL, 0);
        job = upload(h, exp3, body, &st, NULL);
        free(body);
    }
    check(harness_wait_job(h, job, 30), "refit 3");
    snprintf(path, sizeof path, "/v1/experiments/%ld/iterations", exp3);
    d = get(h, path, &st);
    m4 = json_object_get(json_object_get(d, "models"), "eq4");
    code = json_string_value(
        json_object_get(json_array_get(json_object_get(m4, "warnings"), 0), "code"));
    check(st == 200 && code && !strcmp(code, "few_points") &&
              json_is_string(json_object_get(m4, "function")),
          "three points: a model and a few_points warning: %s", dump(m4));
    int nfew = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(m4, "warnings")); i++)
        nfew += !strcmp(json_string_value(json_object_get(
                            json_array_get(json_object_get(m4, "warnings"), i), "code")) ?: "",
                        "few_points");
    check(nfew == 1, "three points: few_points once, not %d times: %s", nfew, dump(m4));
    json_decref(d);

    static const char *const bad[][2] = {
        {"{\"fwd\":\"x\"}", "iteration_phases.fwd"},
        {"{\"io\":\"\"}", "iteration_phases.io"},
        {"[1]", "iteration_phases"},
    };
    for (int i = 0; i < 3; i++) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"name\":\"bad-phases\",\"parameters\":[\"x1\"],\"scaling\":\"weak\","
                 "\"iteration_phases\":%s,\"training\":{\"train_samples\":1000,"
                 "\"batch_size\":1,\"data_parallel\":\"x1\"}}",
                 bad[i][0]);
        json_t *a = post(h, "/v1/experiments", doc, &st);
        check_field(a, st, bad[i][1], bad[i][0]);
        json_decref(a);
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/iterations?x=1", exp2);
    d = get(h, path, &st);
    check_field(d, st, "x", "unknown query");
    json_decref(d);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_setup_expressions(h);
    test_eq1_aggregation(h);
    test_validation_steps(h);
    test_speedups(h);
    test_accuracy(h);
    test_iterations(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
