/*
 * test_api_factors.c — categorical factors end to end over real HTTP against
 * a real PostgreSQL. An experiment declares a factor dataloader: [cpu, dali]
 * whose levels follow different laws: communication per epoch is 0.25·x s
 * with dali and 0.5·x·log2(x) s with cpu (x ranks; computation 100 s, memory
 * 2 s with both). Profiles generated from those laws at x = 2..32 name their
 * level in the query; the refit fits each level apart:
 *  - the comm model of dali is linear (no log term), cpu's has log2(x);
 *  - the comm measurement at 32 ranks is 8 s (dali) and 80 s (cpu), the
 *    laws' values (noise-free profiles, per-step values = per-epoch / n_t);
 *  - a missing or undeclared level, bad factor declarations: 400 naming the
 *    field, nothing stored; levels named by the profile document's "levels"
 *    count like the query's (undeclared, unknown or disagreeing: 400 naming
 *    "levels.<factor>");
 *  - an experiment without factors answers as before (unknown query names
 *    refused, the same listing);
 *  - configurations search every level combination unless the query pins
 *    a factor: with precision fp16 (comp 100 s, comm 0.25·x s) and fp32
 *    (comp 60 s, comm 2·x s), memory 2 s, the epoch takes 102 + 0.25·x and
 *    62 + 2·x s; the laws cross at x = 40/1.75 = 22.86, so the fastest of
 *    x in 2..32 is fp32 at 2 (66 s) and of x in {32, 64} fp16 at 32
 *    (110 s); pinned to fp16 the fastest of 2..32 is fp16 at 2 (102.5 s);
 *  - sweep plans vary the factor: status per point × level × repetition
 *    from the stored profiles' levels, against a brute-force count.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tests/harness.h"

static double comm_law(const char *level, double x)
{
    return !strcmp(level, "dali") ? 0.25 * x : 0.5 * x * log2(x);
}

/* One upload: ranks 0..1, 3 train steps (the first a warm-up, 5x slower),
 * per-step values = per-epoch value / n_t. */
static char *profile_json_parts(double x, int n_t, double comp, double comm)
{
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 3; s++) {
            double warm = s == 0 ? 5.0 : 1.0;
            json_t *cps = json_pack(
                "[{s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}, {s:s, s:s, s:{s:f}}]", "name",
                "volta_sgemm", "category", "comp", "metrics", "time", comp / n_t * warm, "name",
                "ncclAllReduce", "category", "comm", "metrics", "time", comm / n_t * warm, "name",
                "Memcpy HtoD", "category", "mem", "metrics", "time", 2.0 / n_t * warm);
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

static char *profile_json(double x, int n_t, double comm)
{
    return profile_json_parts(x, n_t, 100.0, comm);
}

static const char *const training =
    "\"scaling\":\"weak\",\"training\":{\"train_samples\":50000,\"validation_samples\":0,"
    "\"batch_size\":256,\"data_parallel\":\"ranks\",\"model_parallel\":\"1\","
    "\"warmup_steps\":1},\"cost\":{\"cores_per_rank\":1,\"price_per_core_hour\":1}";

/* POSTs an experiment with the given extra members; returns the status and,
 * on 201, *id; the problem's field into field (when given). */
static int create(harness *h, const char *name, const char *extra, long *id, char *field,
                  size_t cap)
{
    char body[1024];
    snprintf(body, sizeof body, "{\"name\":\"%s\",\"parameters\":[\"ranks\"],%s%s%s}", name,
             training, *extra ? "," : "", extra);
    harness_response r;
    harness_post(h, "/v1/experiments", body, &r);
    json_t *doc = harness_json(&r);
    if (id)
        *id = (long)json_integer_value(json_object_get(doc, "id"));
    if (field)
        snprintf(field, cap, "%s", json_string_value(json_object_get(doc, "field")) ?: "");
    int st = r.status;
    json_decref(doc);
    harness_response_free(&r);
    return st;
}

/* GET path; checks the status; returns the document. */
static json_t *get_json(harness *h, const char *path, int want)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "GET %s: %d %s", path, r.status, r.body);
    harness_response_free(&r);
    return doc;
}

static const char *field_of(const json_t *doc)
{
    const char *f = json_string_value(json_object_get(doc, "field"));
    return f ? f : "";
}

/* Uploads the profile at x with the law of level (query suffix q; the
 * document's "levels" member doc_levels, e.g. {"dataloader":"dali"}, when
 * not NULL); returns status, job. */
static int upload_doc(harness *h, long exp, double x, const char *level, const char *q,
                      const char *doc_levels, long *job, char *field, size_t cap)
{
    int n_t = (int)floor(50000 / x / 256);
    char *body = profile_json(x, n_t, comm_law(level, x));
    if (doc_levels) {
        size_t n = strlen(body) + strlen(doc_levels) + 16;
        char *with = malloc(n);
        snprintf(with, n, "{\"levels\":%s,%s", doc_levels, body + 1);
        free(body);
        body = with;
    }
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, q);
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    if (job)
        *job = (long)json_integer_value(json_object_get(doc, "job"));
    if (field)
        snprintf(field, cap, "%s", field_of(doc));
    int st = r.status;
    json_decref(doc);
    harness_response_free(&r);
    free(body);
    return st;
}

static int upload(harness *h, long exp, double x, const char *level, const char *q, long *job,
                  char *field, size_t cap)
{
    return upload_doc(h, exp, x, level, q, NULL, job, field, cap);
}

static long count_profiles(harness *h, long exp)
{
    char sql[128], out[64] = "";
    snprintf(sql, sizeof sql, "SELECT count(*) FROM profiles WHERE experiment_id = %ld", exp);
    harness_sql(h, sql, out, sizeof out);
    return atol(out);
}

static void test_declarations(harness *h)
{
    char field[128];
    struct {
        const char *extra, *field;
    } bad[] = {
        {"\"factors\":{\"ranks\":[\"a\"]}", "factors.ranks"},
        {"\"factors\":{\"epoch\":[\"a\"]}", "factors.epoch"},
        {"\"factors\":{\"limit\":[\"a\"]}", "factors.limit"},
        {"\"factors\":{\"dataloader\":[]}", "factors.dataloader"},
        {"\"factors\":{\"dataloader\":[\"cpu\",\"cpu\"]}", "factors.dataloader[1]"},
        {"\"factors\":{\"dataloader\":[\"cpu\",7]}", "factors.dataloader[1]"},
        {"\"factors\":{\"data-loader\":[\"cpu\"]}", "factors.data-loader"},
        {"\"factors\":{}", "factors"},
        {"\"factors\":[\"cpu\"]", "factors"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad-factors-%zu", i);
        int st = create(h, name, bad[i].extra, NULL, field, sizeof field);
        check(st == 400 && !strcmp(field, bad[i].field), "%s: %d field %s (want %s)",
              bad[i].extra, st, field, bad[i].field);
    }
    json_t *list = get_json(h, "/v1/experiments", 200);
    check(json_array_size(json_object_get(list, "experiments")) == 0,
          "no experiment stored by the refused declarations");
    json_decref(list);
}

static void test_analyses_per_level(harness *h, long exp);
static void test_statistics_per_level(harness *h, long exp);

static void test_levels(harness *h)
{
    long exp = 0;
    int st = create(h, "dataloaders", "\"factors\":{\"dataloader\":[\"cpu\",\"dali\"]}", &exp,
                    NULL, 0);
    check(st == 201 && exp > 0, "create with factors: %d", st);
    char path[256], field[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld", exp);
    json_t *view = get_json(h, path, 200);
    check(json_array_size(json_object_get(json_object_get(view, "factors"), "dataloader")) == 2,
          "the view shows the factors");
    json_decref(view);

    /* a missing or undeclared level: 400 naming the factor, nothing stored */
    st = upload(h, exp, 2, "dali", "", NULL, field, sizeof field);
    check(st == 400 && !strcmp(field, "dataloader"), "missing level: %d %s", st, field);
    st = upload(h, exp, 2, "dali", "?dataloader=gpu", NULL, field, sizeof field);
    check(st == 400 && !strcmp(field, "dataloader"), "undeclared level: %d %s", st, field);
    /* levels in the document: undeclared, not a factor, disagreeing with
     * the query, not a string */
    struct {
        const char *q, *doc, *field;
    } bad_doc[] = {
        {"", "{\"dataloader\":\"gpu\"}", "levels.dataloader"},
        {"", "{\"dataloader\":\"dali\",\"nodes\":\"2\"}", "levels.nodes"},
        {"?dataloader=cpu", "{\"dataloader\":\"dali\"}", "levels.dataloader"},
        {"?dataloader=tpu", "{\"dataloader\":\"tpu\"}", "dataloader"},
        {"", "{}", "dataloader"},
    };
    for (size_t i = 0; i < sizeof bad_doc / sizeof bad_doc[0]; i++) {
        st = upload_doc(h, exp, 2, "dali", bad_doc[i].q, bad_doc[i].doc, NULL, field,
                        sizeof field);
        check(st == 400 && !strcmp(field, bad_doc[i].field), "levels %s with query '%s': %d %s",
              bad_doc[i].doc, bad_doc[i].q, st, field);
    }
    st = upload_doc(h, exp, 2, "dali", "", "{\"dataloader\":7}", NULL, NULL, 0);
    check(st == 400, "a level that is no string: %d", st);
    check(count_profiles(h, exp) == 0, "nothing stored by the refused uploads");

    const double xs[] = {2, 4, 8, 16, 32};
    const char *const lv[] = {"dali", "cpu"};
    long job = 0;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 5; i++) {
            /* dali's levels are in the documents (and for some in the query
             * too); cpu's in the query */
            char q[64];
            snprintf(q, sizeof q, "?%s%s%srefit=%s", l == 0 && i % 2 ? "" : "dataloader=",
                     l == 0 && i % 2 ? "" : lv[l], l == 0 && i % 2 ? "" : "&",
                     l == 1 && i == 4 ? "now" : "defer");
            st = upload_doc(h, exp, xs[i], lv[l], q, l == 0 ? "{\"dataloader\":\"dali\"}" : NULL,
                            &job, NULL, 0);
            check(st == 202, "upload %s at %g: %d", lv[l], xs[i], st);
        }
    check(count_profiles(h, exp) == 10, "10 profiles stored");
    /* the same bytes under another level: one file cannot be two measurements */
    int n_t = (int)floor(50000 / 4.0 / 256);
    char *same = profile_json(4, n_t, comm_law("dali", 4));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?dataloader=cpu", exp);
    harness_response r;
    harness_post(h, path, same, &r);
    check(r.status == 409, "dali's bytes as cpu: %d %s", r.status, r.body);
    harness_response_free(&r);
    free(same);
    check(job > 0 && harness_wait_job(h, job, 60), "the refit finishes");

    json_t *p;
    /* per level: the comm model and the measurement at 32 ranks */
    for (int l = 0; l < 2; l++) {
        snprintf(path, sizeof path,
                 "/v1/experiments/%ld/models?level=application&metric=time&callpath=comm"
                 "&dataloader=%s",
                 exp, lv[l]);
        json_t *ms = get_json(h, path, 200);
        json_t *models = json_object_get(ms, "models");
        const char *fn = json_string_value(json_object_get(json_array_get(models, 0), "function"));
        check(json_array_size(models) == 1 && fn, "%s: one comm model (%s)", lv[l],
              fn ? fn : "none");
        if (fn) {
            int has_log = strstr(fn, "log") != NULL;
            check(l == 0 ? !has_log : has_log, "%s: comm model %s", lv[l], fn);
        }
        json_decref(ms);
        snprintf(path, sizeof path,
                 "/v1/experiments/%ld/measurements?level=application&metric=time&name=comm"
                 "&dataloader=%s",
                 exp, lv[l]);
        ms = get_json(h, path, 200);
        json_t *list = json_object_get(ms, "measurements");
        check(json_array_size(list) == 5, "%s: 5 comm measurements, got %zu", lv[l],
              json_array_size(list));
        size_t i;
        json_t *m;
        int found = 0;
        json_array_foreach(list, i, m)
        {
            double x = json_number_value(json_object_get(json_object_get(m, "point"), "ranks"));
            double v = json_number_value(json_object_get(m, "value"));
            if (x == 32) {
                found = 1;
                double want = comm_law(lv[l], 32); /* dali 8 s, cpu 80 s */
                check(fabs(v - want) <= 1e-6 * want, "%s: comm at 32 = %g, want %g", lv[l], v,
                      want);
            }
        }
        check(found, "%s: a measurement at 32 ranks", lv[l]);
        json_decref(ms);
    }
    /* predict at 64 ranks, beyond the measured points, follows each law */
    for (int l = 0; l < 2; l++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64&dataloader=%s", exp,
                 lv[l]);
        json_t *pr = get_json(h, path, 200);
        double comm = json_number_value(json_object_get(json_object_get(pr, "comm"), "time"));
        double want = comm_law(lv[l], 64); /* dali 16 s, cpu 192 s */
        check(fabs(comm - want) <= 0.01 * want, "%s: predicted comm at 64 = %g, want %g", lv[l],
              comm, want);
        json_decref(pr);
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64", exp);
    p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "dataloader"), "predict without the level: field %s",
          field_of(p));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?ranks=64&dataloader=tpu", exp);
    p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "dataloader"), "predict, undeclared level: field %s",
          field_of(p));
    json_decref(p);

    /* reads need the level, and a declared one */
    snprintf(path, sizeof path, "/v1/experiments/%ld/models", exp);
    p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "dataloader"), "models without the level: field %s", field_of(p));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/measurements?dataloader=tpu", exp);
    p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "dataloader"), "undeclared level: field %s", field_of(p));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?dataloader=cpu&nodes=2", exp);
    p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "nodes"), "unknown query name: field %s", field_of(p));
    json_decref(p);
    test_analyses_per_level(h, exp);
    test_statistics_per_level(h, exp);
}

/* the epoch time of the dataloader laws at x ranks: computation 100 s +
 * comm + memory 2 s */
static double loader_epoch(const char *level, double x)
{
    return 102 + comm_law(level, x);
}

/* Statistics and sensitivity across the level combinations: without a
 * level in the query every combination's rows, each item naming its levels
 * (5 points × 2 levels, by point and then level: cpu before dali), the one
 * repetition of each named with its levels in the warnings; with one, that
 * combination alone. Sensitivity ranks the factor beside the parameter:
 * one repetition per run, so S/N = -20·log10(y); the mean S/N per level of
 * dataloader over the 5 points and per value of ranks over the 2 levels,
 * and their ranges, computed here from the laws. */
static void test_statistics_per_level(harness *h, long exp)
{
    static const double xs[] = {2, 4, 8, 16, 32};
    static const char *const lv[] = {"cpu", "dali"};
    char path[256];
    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch",
             exp);
    json_t *s = get_json(h, path, 200), *items = json_object_get(s, "items");
    int ok = json_array_size(items) == 10 && json_is_null(json_object_get(s, "levels"));
    for (size_t i = 0; ok && i < 10; i++) {
        json_t *it = json_array_get(items, i);
        double x = json_number_value(json_object_get(json_object_get(it, "point"), "ranks"));
        const char *l = json_string_value(
            json_object_get(json_object_get(it, "levels"), "dataloader"));
        double mean = json_number_value(json_object_get(it, "mean"));
        ok = x == xs[i / 2] && l && !strcmp(l, lv[i % 2]) &&
             fabs(mean - loader_epoch(lv[i % 2], x)) <= 1e-6 * mean;
        if (!ok)
            fprintf(stderr, "item %zu: ranks %g, dataloader %s, mean %.10g\n", i, x, l ?: "?",
                    mean);
    }
    check(ok, "every combination's epoch time, by point then level, each naming its level");
    int named = 0;
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(s, "warnings"), i, w)
        named += strstr(json_string_value(json_object_get(w, "message")) ?: "",
                        "ranks=32 [dataloader=dali] epoch time") != NULL &&
                 !strcmp(json_string_value(json_object_get(json_object_get(w, "levels"),
                                                           "dataloader")) ?: "",
                         "dali");
    check(named == 1, "a warning names the point with its level");
    json_decref(s);

    snprintf(path, sizeof path,
             "/v1/experiments/%ld/statistics?level=application&name=epoch&metric=time&phase=epoch"
             "&dataloader=dali",
             exp);
    s = get_json(h, path, 200);
    items = json_object_get(s, "items");
    ok = json_array_size(items) == 5 &&
         !strcmp(json_string_value(json_object_get(json_object_get(s, "levels"), "dataloader")) ?: "",
                 "dali");
    for (size_t k = 0; ok && k < 5; k++)
        ok = !strcmp(json_string_value(json_object_get(
                         json_object_get(json_array_get(items, k), "levels"), "dataloader")) ?: "",
                     "dali");
    check(ok, "with dataloader=dali: its 5 points alone");
    json_decref(s);
    /* an undeclared level: 400 naming the factor, for each of the three */
    static const char *const reads[] = {"statistics", "sensitivity", "efficiency"};
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/%s?dataloader=gpu", exp, reads[k]);
        s = get_json(h, path, 400);
        check(!strcmp(field_of(s), "dataloader"), "%s with an undeclared level: field %s",
              reads[k], field_of(s));
        json_decref(s);
    }

    /* sensitivity: hand-computed mean S/N per level and ranges */
    double by_level[2] = {0, 0}, by_x[5] = {0}, lo = INFINITY, hi = -INFINITY;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 5; k++) {
            double sn = -20 * log10(loader_epoch(lv[l], xs[k]));
            by_level[l] += sn / 5;
            by_x[k] += sn / 2;
        }
    for (int k = 0; k < 5; k++) {
        lo = fmin(lo, by_x[k]);
        hi = fmax(hi, by_x[k]);
    }
    double range_dl = fabs(by_level[0] - by_level[1]), range_x = hi - lo;
    snprintf(path, sizeof path, "/v1/experiments/%ld/sensitivity", exp);
    s = get_json(h, path, 200);
    json_t *fs = json_object_get(s, "factors"), *dl = NULL, *rk = NULL, *f;
    json_array_foreach(fs, i, f)
    {
        const char *name = json_string_value(json_object_get(f, "factor")) ?: "";
        if (!strcmp(name, "dataloader"))
            dl = f;
        else if (!strcmp(name, "ranks"))
            rk = f;
    }
    check(json_array_size(fs) == 2 && dl && rk, "sensitivity ranks ranks and dataloader");
    check(dl && !strcmp(json_string_value(json_object_get(dl, "kind")) ?: "", "factor") &&
              !strcmp(json_string_value(json_object_get(dl, "best_level")) ?: "", "dali") &&
              check_close(json_number_value(json_object_get(dl, "range")), range_dl, 1e-9, 0),
          "dataloader: a factor, dali best, range %.10g (got %.10g)", range_dl,
          json_number_value(json_object_get(dl, "range")));
    check(rk && check_close(json_number_value(json_object_get(rk, "range")), range_x, 1e-9, 0),
          "ranks: range %.10g (got %.10g)", range_x, json_number_value(json_object_get(rk, "range")));
    json_t *cpu = dl ? json_array_get(json_object_get(dl, "levels"), 0) : NULL;
    check(cpu && !strcmp(json_string_value(json_object_get(cpu, "level")) ?: "", "cpu") &&
              check_close(json_number_value(json_object_get(cpu, "mean_sn")), by_level[0], 1e-9,
                          0) &&
              json_integer_value(json_object_get(cpu, "runs")) == 5,
          "cpu: mean S/N %.10g over 5 runs", by_level[0]);
    int first_dl = json_integer_value(json_object_get(dl, "rank")) == 1;
    check(first_dl == (range_dl >= range_x), "the larger range ranks first");
    check(json_array_size(json_object_get(s, "runs")) == 10, "10 runs (point × level)");
    json_decref(s);

    /* efficiency: a group per level, SE_32 = t_2 / t_32 by that level's law */
    snprintf(path, sizeof path, "/v1/experiments/%ld/efficiency?parameter=ranks", exp);
    s = get_json(h, path, 200);
    json_t *groups = json_object_get(s, "groups");
    ok = json_array_size(groups) == 2;
    for (size_t g = 0; ok && g < 2; g++) {
        json_t *grp = json_array_get(groups, g);
        const char *l = json_string_value(json_object_get(json_object_get(grp, "levels"), "dataloader"));
        json_t *last = json_array_get(json_object_get(grp, "points"), 4);
        double se = json_number_value(json_object_get(json_object_get(last, "se"), "value"));
        double want = l ? loader_epoch(l, 2) / loader_epoch(l, 32) : -1;
        ok = l && !strcmp(l, lv[g]) && check_close(se, want, 1e-6, 0);
        if (!ok)
            fprintf(stderr, "group %zu: %s SE_32 %.10g, want %.10g\n", g, l ?: "?", se, want);
    }
    check(ok, "efficiency: one group per level, each SE_32 by its law");
    json_decref(s);
}

/* speedups, advice and accuracy read one level combination, named in the
 * query like predict's; without it 400 naming the factor. */
static void test_analyses_per_level(harness *h, long exp)
{
    const char *const lv[] = {"dali", "cpu"};
    char path[256];
    for (int l = 0; l < 2; l++) {
        /* the measured comm part at 32 ranks is the law's (8 s and 80 s) */
        snprintf(path, sizeof path, "/v1/experiments/%ld/speedups?dataloader=%s", exp, lv[l]);
        json_t *sp = get_json(h, path, 200);
        size_t i, j;
        json_t *part, *pt;
        int found = 0, points = 0;
        json_array_foreach(json_object_get(sp, "parts"), i, part)
        {
            if (strcmp(json_string_value(json_object_get(part, "name")) ?: "", "comm"))
                continue;
            json_array_foreach(json_object_get(part, "measured"), j, pt)
            {
                points++;
                double x =
                    json_number_value(json_object_get(json_object_get(pt, "point"), "ranks"));
                double v = json_number_value(json_object_get(pt, "value"));
                if (x == 32) {
                    found = 1;
                    double want = comm_law(lv[l], 32);
                    check(fabs(v - want) <= 1e-6 * want, "speedups %s: comm at 32 = %g, want %g",
                          lv[l], v, want);
                }
            }
        }
        check(found && points == 5, "speedups %s: comm measured at 5 points (%d), 32 among them",
              lv[l], points);
        json_decref(sp);

        /* accuracy: as many application models as the level's listing */
        snprintf(path, sizeof path,
                 "/v1/experiments/%ld/models?level=application&metric=time&dataloader=%s", exp,
                 lv[l]);
        json_t *ms = get_json(h, path, 200);
        size_t napp = json_array_size(json_object_get(ms, "models"));
        json_decref(ms);
        snprintf(path, sizeof path,
                 "/v1/experiments/%ld/accuracy?level=application&dataloader=%s", exp, lv[l]);
        json_t *acc = get_json(h, path, 200);
        check(napp > 0 && json_array_size(json_object_get(acc, "application")) == napp,
              "accuracy %s: %zu application models, the listing has %zu", lv[l],
              json_array_size(json_object_get(acc, "application")), napp);
        json_decref(acc);

        /* advice: the prediction at the target is the level's law:
         * 102 + comm(64) = 118 s (dali), 294 s (cpu) */
        snprintf(path, sizeof path, "/v1/experiments/%ld/advice?dataloader=%s", exp, lv[l]);
        harness_response r;
        harness_post(h, path,
                     "{\"target\":{\"ranks\":64},\"budget_core_hours\":1,"
                     "\"epochs_per_run\":0.01}",
                     &r);
        json_t *adv = harness_json(&r);
        double pv =
            json_number_value(json_object_get(json_object_get(adv, "prediction"), "value"));
        double want = 102 + comm_law(lv[l], 64);
        check(r.status == 200 && fabs(pv - want) <= 0.01 * want,
              "advice %s: %d, prediction %g, want %g (%s)", lv[l], r.status, pv, want, r.body);
        /* every measured point has the one repetition of its level */
        json_t *rec;
        json_array_foreach(json_object_get(adv, "recommendations"), i, rec)
        {
            json_int_t mr = json_integer_value(json_object_get(rec, "measured_repetitions"));
            check(mr <= 1, "advice %s: %lld measured repetitions at a point", lv[l],
                  (long long)mr);
        }
        json_decref(adv);
        harness_response_free(&r);
    }
    static const char *const routes[] = {"speedups", "accuracy"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/v1/experiments/%ld/%s", exp, routes[i]);
        json_t *p = get_json(h, path, 400);
        check(!strcmp(field_of(p), "dataloader"), "%s without the level: field %s", routes[i],
              field_of(p));
        json_decref(p);
        snprintf(path, sizeof path, "/v1/experiments/%ld/%s?dataloader=tpu", exp, routes[i]);
        p = get_json(h, path, 400);
        check(!strcmp(field_of(p), "dataloader"), "%s, undeclared level: field %s", routes[i],
              field_of(p));
        json_decref(p);
    }
    snprintf(path, sizeof path, "/v1/experiments/%ld/advice", exp);
    harness_response r;
    harness_post(h, path, "{\"target\":{\"ranks\":64},\"budget_core_hours\":1}", &r);
    json_t *p = harness_json(&r);
    check(r.status == 400 && !strcmp(field_of(p), "dataloader"),
          "advice without the level: %d field %s", r.status, field_of(p));
    json_decref(p);
    harness_response_free(&r);
}

static void test_without_factors(harness *h)
{
    long exp = 0;
    check(create(h, "plain", "", &exp, NULL, 0) == 201, "create without factors");
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?dataloader=cpu", exp);
    json_t *p = get_json(h, path, 400);
    check(!strcmp(field_of(p), "dataloader"), "no factors: dataloader is unknown (%s)",
          field_of(p));
    json_decref(p);
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?level=application", exp);
    p = get_json(h, path, 200);
    check(json_is_null(json_object_get(p, "model_set")), "no factors: listing as before");
    json_decref(p);
    long job = 0;
    char field[128];
    int st = upload_doc(h, exp, 2, "dali", "", "{\"dataloader\":\"dali\"}", NULL, field,
                        sizeof field);
    check(st == 400 && !strcmp(field, "levels.dataloader"),
          "no factors: a profile naming levels is refused: %d %s", st, field);
    check(count_profiles(h, exp) == 0, "no factors: nothing stored by it");
    const double xs[] = {2, 4, 8, 16, 32};
    for (int i = 0; i < 5; i++)
        check(upload(h, exp, xs[i], "dali", "", &job, NULL, 0) == 202,
              "no factors: upload as before");
    check(job > 0 && harness_wait_job(h, job, 60), "no factors: refit");
    /* an evaluation-only upload: compared with the models, as before */
    check(upload(h, exp, 64, "dali", "?use=evaluation", &job, NULL, 0) == 202,
          "no factors: evaluation upload");
    check(job > 0 && harness_wait_job(h, job, 60), "no factors: refit with an evaluation point");
    snprintf(path, sizeof path, "/v1/experiments/%ld/accuracy?level=application", exp);
    p = get_json(h, path, 200);
    check(json_array_size(json_object_get(p, "evaluation_points")) == 1,
          "no factors: one evaluation point");
    json_decref(p);
    char out[64] = "";
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM measurements m JOIN model_sets s ON s.id = m.model_set_id "
             "WHERE s.experiment_id = %ld AND m.levels = '{}'",
             exp);
    harness_sql(h, sql, out, sizeof out);
    check(atol(out) > 0, "no factors: measurements stored with levels '{}' (%s)", out);
}

static double epoch_law(const char *level, double x)
{
    return !strcmp(level, "fp16") ? 102 + 0.25 * x : 62 + 2 * x;
}

/* POSTs a configurations query; checks the status; returns the document. */
static json_t *configurations(harness *h, long exp, const char *query, const char *body,
                              int want)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/configurations%s", exp, query);
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "POST %s %s: %d %s", path, body, r.status, r.body);
    harness_response_free(&r);
    return doc;
}

/* The recommendation names level want_level at want_x with the law's time. */
static void check_pick(const json_t *doc, const char *what, const char *want_level, double want_x)
{
    const json_t *rec = json_object_get(doc, "recommended");
    const char *lv =
        json_string_value(json_object_get(json_object_get(rec, "levels"), "precision"));
    double x = json_number_value(json_object_get(json_object_get(rec, "point"), "ranks"));
    double t = json_number_value(json_object_get(rec, "time_s"));
    double want_t = epoch_law(want_level, want_x);
    check(lv && !strcmp(lv, want_level) && x == want_x, "%s: recommended %s at %g (want %s at %g)",
          what, lv ? lv : "none", x, want_level, want_x);
    check(fabs(t - want_t) <= 1e-3 * want_t, "%s: time %g, want %g", what, t, want_t);
}

/* POSTs a sweep plan; checks the status; returns the document. */
static json_t *sweep_plan(harness *h, long exp, const char *body, int want)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan", exp);
    harness_response r;
    harness_post(h, path, body, &r);
    json_t *doc = harness_json(&r);
    check(r.status == want, "POST %s %s: %d %.300s", path, body, r.status, r.body);
    harness_response_free(&r);
    return doc;
}

/* Sweep plans over the precisions experiment (profiles at 2..32 ranks,
 * repetition 1, both levels): every legal point × level combination ×
 * repetition, its status from the stored profiles' levels, checked against
 * a brute-force enumeration of the same definition. */
static void test_sweep_plan(harness *h, long exp)
{
    static const double ranks[] = {2, 4, 8, 16, 32, 64};
    static const double measured[] = {2, 4, 8, 16, 32};
    for (int pinned = 0; pinned < 2; pinned++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"parameters\":{\"ranks\":[2,4,8,16,32,64]},\"factors\":{\"precision\":%s},"
                 "\"legal\":\"ranks >= 4 && ranks != 16\",\"repetitions\":2,"
                 "\"command\":\"srun -n {ranks} train --precision {precision} --seed {repetition}\","
                 "\"epochs_per_run\":0.01}",
                 pinned ? "[\"fp32\"]" : "[\"fp16\",\"fp32\"]");
        json_t *plan = sweep_plan(h, exp, body, 200);
        /* brute force: legal points × levels × repetitions */
        long runs = 0, want_measured = 0, want_missing = 0;
        for (int i = 0; i < 6; i++)
            for (int l = pinned; l < 2; l++)
                for (int rep = 1; rep <= 2; rep++) {
                    if (!(ranks[i] >= 4 && ranks[i] != 16))
                        continue;
                    runs++;
                    int m = 0;
                    for (int k = 0; k < 5; k++)
                        m |= rep == 1 && measured[k] == ranks[i];
                    want_measured += m;
                    want_missing += !m;
                }
        check(json_integer_value(json_object_get(plan, "runs")) == runs &&
                  json_integer_value(json_object_get(plan, "measured")) == want_measured &&
                  json_integer_value(json_object_get(plan, "missing")) == want_missing,
              "plan (pinned %d): runs %lld measured %lld missing %lld, want %ld %ld %ld", pinned,
              (long long)json_integer_value(json_object_get(plan, "runs")),
              (long long)json_integer_value(json_object_get(plan, "measured")),
              (long long)json_integer_value(json_object_get(plan, "missing")), runs,
              want_measured, want_missing);
        /* every item: its status and command as the brute force says */
        size_t i;
        json_t *it;
        long good = 0;
        json_array_foreach(json_object_get(plan, "items"), i, it)
        {
            double x = json_number_value(json_object_get(json_object_get(it, "point"), "ranks"));
            int rep = (int)json_integer_value(json_object_get(it, "repetition"));
            const char *lv =
                json_string_value(json_object_get(json_object_get(it, "levels"), "precision"));
            const char *st = json_string_value(json_object_get(it, "status"));
            const char *cmd = json_string_value(json_object_get(it, "command"));
            int m = 0;
            for (int k = 0; k < 5; k++)
                m |= rep == 1 && measured[k] == x;
            char want_cmd[128];
            snprintf(want_cmd, sizeof want_cmd, "srun -n %g train --precision %s --seed %d", x,
                     lv ? lv : "", rep);
            good += lv && st && !strcmp(st, m ? "measured" : "missing") &&
                    (m ? !cmd : cmd && !strcmp(cmd, want_cmd)) && (!pinned || !strcmp(lv, "fp32"));
        }
        check(good == runs && json_array_size(json_object_get(plan, "items")) == (size_t)runs,
              "plan (pinned %d): %ld of %ld items as the brute force says", pinned, good, runs);
        check(json_array_size(json_object_get(plan, "commands")) == (size_t)want_missing,
              "plan (pinned %d): one command per missing run", pinned);
        if (!pinned) {
            /* the missing runs priced by their level's models: 0.01/3600 ×
             * Σ T_l(x)·x over rep 2 at 4, 8, 32 and both reps at 64, both
             * levels = 0.01/3600 × 49124 */
            double ch = json_number_value(json_object_get(
                json_object_get(json_object_get(plan, "missing_cost"), "core_hours"), "value"));
            double want = 0.01 / 3600 * 49124;
            check(fabs(ch - want) <= 5e-3 * want, "plan: missing core-hours %g, want %g", ch,
                  want);
        }
        json_decref(plan);
    }
    struct {
        const char *factors, *field;
    } bad[] = {
        {",\"factors\":{\"precision\":[\"fp16\",\"bf16\"]}", "factors.precision[1]"},
        {",\"factors\":{\"precision\":[\"fp16\"],\"dataloader\":[\"cpu\"]}",
         "factors.dataloader"},
        {"", "factors"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char body[512];
        snprintf(body, sizeof body,
                 "{\"parameters\":{\"ranks\":[2,4]}%s,\"command\":\"run {ranks}\"}",
                 bad[k].factors);
        json_t *p = sweep_plan(h, exp, body, 400);
        check(!strcmp(field_of(p), bad[k].field), "plan %s: field %s, want %s", bad[k].factors,
              field_of(p), bad[k].field);
        json_decref(p);
    }
}

static void test_configurations(harness *h)
{
    long exp = 0;
    check(create(h, "precisions", "\"factors\":{\"precision\":[\"fp16\",\"fp32\"]}", &exp,
                 NULL, 0) == 201,
          "create with factor precision");
    const double xs[] = {2, 4, 8, 16, 32};
    const char *const lv[] = {"fp16", "fp32"};
    long job = 0;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < 5; i++) {
            int n_t = (int)floor(50000 / xs[i] / 256);
            double comp = l == 0 ? 100 : 60, comm = l == 0 ? 0.25 * xs[i] : 2 * xs[i];
            char *body = profile_json_parts(xs[i], n_t, comp, comm);
            char path[160];
            snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?precision=%s&refit=%s",
                     exp, lv[l], l == 1 && i == 4 ? "now" : "defer");
            harness_response r;
            harness_post(h, path, body, &r);
            json_t *doc = harness_json(&r);
            check(r.status == 202, "upload %s at %g: %d", lv[l], xs[i], r.status);
            job = (long)json_integer_value(json_object_get(doc, "job"));
            json_decref(doc);
            harness_response_free(&r);
            free(body);
        }
    check(job > 0 && harness_wait_job(h, job, 60), "precisions: the refit finishes");

    const char *small = "{\"objective\":\"fastest\",\"candidates\":{\"ranks\":"
                        "{\"values\":[2,4,8,16,32]}}}";
    json_t *doc = configurations(h, exp, "", small, 200);
    check(json_integer_value(json_object_get(doc, "searched")) == 10,
          "both levels searched: %lld candidates",
          (long long)json_integer_value(json_object_get(doc, "searched")));
    /* every row names its levels and carries its own level's law */
    size_t i;
    json_t *c;
    int rows_ok = 0;
    json_array_foreach(json_object_get(doc, "candidates"), i, c)
    {
        const char *l =
            json_string_value(json_object_get(json_object_get(c, "levels"), "precision"));
        double x = json_number_value(json_object_get(json_object_get(c, "point"), "ranks"));
        double t = json_number_value(json_object_get(c, "time_s"));
        rows_ok += l && fabs(t - epoch_law(l, x)) <= 1e-3 * epoch_law(l, x);
    }
    check(rows_ok == 10, "10 rows with their levels' times, got %d", rows_ok);
    check(json_array_size(json_object_get(doc, "level_combinations")) == 2,
          "two level combinations listed");
    check_pick(doc, "fastest of 2..32", "fp32", 2);
    json_decref(doc);

    doc = configurations(h, exp, "",
                         "{\"objective\":\"fastest\",\"candidates\":{\"ranks\":"
                         "{\"values\":[32,64]}}}",
                         200);
    check_pick(doc, "fastest of 32, 64", "fp16", 32);
    /* cheapest: core-hours T·x/3600 (1 core per rank): fp16 at 32 takes
     * 110·32/3600 = 0.978, fp32 126·32/3600 = 1.12 */
    json_decref(doc);
    doc = configurations(h, exp, "",
                         "{\"objective\":\"cheapest\",\"candidates\":{\"ranks\":"
                         "{\"values\":[32,64]}}}",
                         200);
    check_pick(doc, "cheapest of 32, 64", "fp16", 32);
    double ch = json_number_value(
        json_object_get(json_object_get(doc, "recommended"), "core_hours"));
    check(fabs(ch - 110.0 * 32 / 3600) <= 1e-3 * ch, "cheapest: %g core-hours, want %g", ch,
          110.0 * 32 / 3600);
    json_decref(doc);

    /* pinned: the search stays at the level named */
    doc = configurations(h, exp, "?precision=fp16", small, 200);
    check(json_integer_value(json_object_get(doc, "searched")) == 5, "pinned: 5 candidates");
    check_pick(doc, "pinned fp16", "fp16", 2);
    json_decref(doc);
    doc = configurations(h, exp, "?precision=bf16", small, 400);
    check(!strcmp(field_of(doc), "precision"), "undeclared pinned level: field %s",
          field_of(doc));
    json_decref(doc);
    test_sweep_plan(h, exp);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    test_declarations(h);
    test_levels(h);
    test_without_factors(h);
    test_configurations(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
