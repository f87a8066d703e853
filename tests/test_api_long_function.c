/*
 * test_api_long_function.c — a model whose text is longer than 512 bytes
 * comes back whole on every path from the stored model to an answer, over
 * real HTTP against a real PostgreSQL and through the command line.
 *
 * The function: 5 + 3·S(x)·y + S(x)·y·z with S(x) = x² up to x = 6 and
 * 30 + x from there, x = 1..10, y in {1, 2, 4, 8, 16}, z = 1..5, x named
 * with 38 characters. The segmented modeler carries the whole segmented
 * function S, both segments with their constants and coefficients, in each
 * term that has x: Extra-P's text, about 740 bytes.
 *
 *  - the experiment's profiles (one callpath gemm carrying the step time,
 *    two ranks, three steps) refit with modeler segmented: the application
 *    epoch and comp models and the callpath model, read back from the
 *    database and printed by pmnf_format, are over 512 bytes, with the
 *    segmented factor in two terms; the model listing, predict (epoch and
 *    comp, served from the model cache) and bottlenecks (served from the
 *    callpath data of analysis/set_data.h) give each of them byte for byte;
 *  - POST /v1/fit with modeler segmented on the same points answers the
 *    text pmnf_format gives of the modeling API's own fit;
 *  - `perfcast model --modeler segmented` on the same points as an Extra-P
 *    text file prints that text, and with --json carries it as "function".
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonb.h"
#include "ingest/extrap.h"
#include "modeling/model_json.h"
#include "modeling/modeler.h"
#include "tests/check.h"
#include "tests/harness.h"

#define PX "samples_per_device_in_the_global_batch"
#define PY "data_parallel_replicas"
#define PZ "pipeline_stages"
#define STEPS 200 /* 51200 samples / batch 256, data_parallel 1 */

static const char *const names[3] = {PX, PY, PZ};
static const double ys[5] = {1, 2, 4, 8, 16};

static double seg_x(double x)
{
    return x <= 6 ? x * x : 30 + x;
}

static double value_at(double x, double y, double z)
{
    return 5 + 3 * seg_x(x) * y + seg_x(x) * y * z;
}

/* pmnf_format of f, sized (malloc'ed; NULL when out of memory) */
static char *format_whole(const pmnf_function *f)
{
    size_t need = pmnf_format(f, names, NULL, 0) + 1;
    char *text = malloc(need);
    if (text)
        pmnf_format(f, names, text, need);
    return text;
}

/* how many segmented factors the text holds */
static int count_segments(const char *text)
{
    int n = 0;
    for (const char *p = text; (p = strchr(p, '{')); p++)
        n++;
    return n;
}

/* ---- the stored models ------------------------------------------------------ */

static char *profile(double x, double y, double z)
{
    json_t *ranks = json_array();
    for (int r = 0; r < 2; r++) {
        json_t *steps = json_array();
        for (int s = 0; s < 3; s++) {
            json_t *cps = json_pack("[{s:s, s:s, s:{s:f}}]", "name", "gemm", "category", "comp",
                                    "metrics", "time", value_at(x, y, z) / STEPS);
            json_array_append_new(steps, json_pack("{s:s, s:o}", "phase", "train", "callpaths", cps));
        }
        json_array_append_new(ranks, json_pack("{s:i, s:o}", "rank", r, "steps", steps));
    }
    json_t *doc = json_pack("{s:{s:f, s:f, s:f}, s:i, s:o}", "point", PX, x, PY, y, PZ, z,
                            "repetition", 1, "ranks", ranks);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(doc);
    return text;
}

static long create_and_fit(harness *h)
{
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"long-function\",\"parameters\":[\"" PX "\",\"" PY "\",\"" PZ "\"],"
                 "\"scaling\":\"weak\",\"modeler\":\"segmented\",\"training\":{\"train_samples\":"
                 "51200,\"validation_samples\":0,\"batch_size\":256,\"data_parallel\":\"1\","
                 "\"model_parallel\":\"1\",\"warmup_steps\":0}}",
                 &r);
    json_t *doc = harness_json(&r);
    long exp = r.status == 201 ? (long)json_integer_value(json_object_get(doc, "id")) : -1;
    check(exp > 0, "create: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    if (exp < 0)
        return -1;
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int ok = 1;
    for (int x = 1; x <= 10 && ok; x++)
        for (int j = 0; j < 5 && ok; j++)
            for (int z = 1; z <= 5 && ok; z++) {
                char *body = profile(x, ys[j], z);
                ok = body && harness_post(h, path, body, &r) == 0 && r.status == 202;
                check(ok, "upload (%d, %g, %d): %d %s", x, ys[j], z, r.status, r.body);
                if (body)
                    harness_response_free(&r);
                free(body);
            }
    if (!ok)
        return -1;
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_post(h, path, "", &r);
    doc = harness_json(&r);
    long job = (long)json_integer_value(json_object_get(doc, "job"));
    check(r.status == 202 && job > 0, "refit: %d %s", r.status, r.body);
    json_decref(doc);
    harness_response_free(&r);
    check(harness_wait_job(h, job, 120) == 1, "refit done");
    return exp;
}

/* The stored model (level, name, metric time) of the experiment's newest
 * set, read from the database and printed whole; NULL when absent. */
static char *stored_text(harness *h, long exp, const char *level, const char *name)
{
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT m.model FROM models m JOIN model_sets s ON s.id = m.model_set_id "
             "WHERE s.experiment_id = %ld AND m.level = '%s' AND m.name = '%s' "
             "AND m.metric = 'time' ORDER BY s.number DESC LIMIT 1",
             exp, level, name);
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    if (!out || harness_sql(h, sql, out, cap) < 0 || !out[0]) {
        check(0, "stored model %s %s", level, name);
        free(out);
        return NULL;
    }
    json_t *doc = jsonb_parse(out, 0);
    free(out);
    pmnf_model m;
    int rc = doc ? api_model_from_json(doc, names, 3, &m) : -1;
    json_decref(doc);
    check(rc == 0, "stored model %s %s reads", level, name);
    return rc == 0 ? format_whole(&m.f) : NULL;
}

static json_t *get_json(harness *h, const char *path)
{
    harness_response r;
    harness_get(h, path, &r);
    json_t *doc = r.status == 200 ? harness_json(&r) : NULL;
    check(doc != NULL, "GET %s: %d %.300s", path, r.status, r.body);
    harness_response_free(&r);
    return doc;
}

/* got is want, byte for byte */
static void same_text(const char *what, const char *got, const char *want)
{
    check(got && want && !strcmp(got, want), "%s: %zu bytes, the model's %zu:\n  got  %s\n  want %s",
          what, got ? strlen(got) : 0, want ? strlen(want) : 0, got ? got : "(none)",
          want ? want : "(none)");
}

static const char *listed(const json_t *doc, const char *level, const char *name)
{
    size_t i;
    const json_t *m;
    json_array_foreach(json_object_get(doc, "models"), i, m)
    {
        const char *cp = json_string_value(json_object_get(m, "callpath"));
        const char *lv = json_string_value(json_object_get(m, "level"));
        if (cp && lv && !strcmp(cp, name) && !strcmp(lv, level))
            return json_string_value(json_object_get(m, "function"));
    }
    return NULL;
}

static void test_stored(harness *h, long exp)
{
    char *epoch = stored_text(h, exp, "application", "epoch");
    char *comp = stored_text(h, exp, "application", "comp");
    char *gemm = stored_text(h, exp, "callpath", "gemm");
    if (!epoch || !comp || !gemm)
        goto done;
    check(strlen(epoch) > 512 && strlen(comp) > 512 && strlen(gemm) > 512,
          "texts over 512 bytes: epoch %zu, comp %zu, gemm %zu: %s", strlen(epoch), strlen(comp),
          strlen(gemm), epoch);
    check(count_segments(epoch) == 2 && strstr(epoch, " for " PX "<=6.0; ") &&
              strstr(epoch, " for " PX ">=6.0} * " PY "^(1) * " PZ "^(1)"),
          "the segmented factor of x in two terms: %s", epoch);

    char path[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/models?metric=time&limit=100", exp);
    json_t *doc = get_json(h, path);
    same_text("listing, epoch", listed(doc, "application", "epoch"), epoch);
    same_text("listing, comp", listed(doc, "application", "comp"), comp);
    same_text("listing, gemm", listed(doc, "callpath", "gemm"), gemm);
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/predict?" PX "=12&" PY "=4&" PZ "=3", exp);
    doc = get_json(h, path);
    /* the epoch is the sum of its parts where they are all modeled, else its own model */
    const json_t *ep = json_object_get(doc, "epoch");
    if (json_array_size(json_object_get(ep, "composed_from")))
        check(!json_object_get(ep, "function"), "a composed epoch names no function");
    else
        same_text("predict, epoch", json_string_value(json_object_get(ep, "function")), epoch);
    same_text("predict, comp",
              json_string_value(json_object_get(json_object_get(doc, "comp"), "function")), comp);
    json_decref(doc);

    snprintf(path, sizeof path, "/v1/experiments/%ld/bottlenecks?at=" PX ":12," PY ":4," PZ ":3",
             exp);
    doc = get_json(h, path);
    const json_t *item = json_array_get(json_object_get(doc, "callpaths"), 0);
    check(!strcmp(json_string_value(json_object_get(item, "callpath")) ?: "", "gemm"),
          "bottlenecks list gemm");
    same_text("bottlenecks, gemm", json_string_value(json_object_get(item, "function")), gemm);
    json_decref(doc);
done:
    free(epoch);
    free(comp);
    free(gemm);
}

/* ---- POST /v1/fit and the command line ---------------------------------------- */

/* The points as an Extra-P text file at path; 0 or -1. */
static int write_text_file(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "PARAMETER %s\nPARAMETER %s\nPARAMETER %s\n\n", PX, PY, PZ);
    for (int x = 1; x <= 10; x++)
        for (int j = 0; j < 5; j++)
            for (int z = 1; z <= 5; z++)
                fprintf(f, "POINTS ( %d %g %d )\n", x, ys[j], z);
    fprintf(f, "\nREGION reg\nMETRIC time\n");
    for (int x = 1; x <= 10; x++)
        for (int j = 0; j < 5; j++)
            for (int z = 1; z <= 5; z++)
                fprintf(f, "DATA %.17g\n", value_at(x, ys[j], z));
    return fclose(f) == 0 ? 0 : -1;
}

/* The modeling API's segmented model of the file's series, printed whole. */
static char *api_text(const char *path)
{
    size_t len;
    char *data = harness_read_file(path, &len);
    ingest_experiment e;
    ingest_error ie;
    int rc = data ? ingest_extrap_read(data, len, ingest_extrap_format_from_path(path, data, len),
                                       &e, &ie)
                  : -1;
    free(data);
    check(rc == 0 && e.nseries == 1 && e.nparams == 3, "read %s", path);
    if (rc < 0)
        return NULL;
    const ingest_series *s = &e.series[0];
    double *coords = malloc(sizeof(double) * 3 * (size_t)s->npoints);
    double *values = malloc(sizeof(double) * (size_t)s->npoints);
    char *text = NULL;
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_SEGMENTED;
    pmnf_modeler *m = pmnf_modeler_new(&o);
    if (coords && values && m) {
        for (int j = 0; j < s->npoints; j++) {
            memcpy(coords + 3 * j, e.coords + (size_t)s->coord[j] * 3, sizeof(double) * 3);
            values[j] = s->values[s->rep_start[j]];
        }
        pmnf_model md;
        char err[256] = "";
        if (pmnf_fit(m, &(pmnf_data){3, s->npoints, coords, values}, &md, err, sizeof err) == 0)
            text = format_whole(&md.f);
        check(text != NULL, "fit: %s", err);
    }
    pmnf_modeler_free(m);
    free(coords);
    free(values);
    ingest_experiment_free(&e);
    return text;
}

/* stdout of cmd (malloc'ed), NULL when it failed */
static char *run(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *out = malloc(cap);
    while (out && n < cap - 1) {
        size_t got = fread(out + n, 1, cap - 1 - n, p);
        if (!got)
            break;
        n += got;
    }
    int st = pclose(p);
    if (out)
        out[n] = '\0';
    if (st != 0) {
        free(out);
        return NULL;
    }
    return out;
}

static void test_fit_and_cli(harness *h)
{
    char file[512];
    snprintf(file, sizeof file, "%s/long_function.txt", harness_dir(h));
    check(write_text_file(file) == 0, "write %s", file);
    char *want = api_text(file);
    if (!want)
        return;
    check(strlen(want) > 512 && count_segments(want) == 2, "the modeling API's text: %zu bytes: %s",
          strlen(want), want);

    /* POST /v1/fit */
    json_t *pts = json_array();
    for (int x = 1; x <= 10; x++)
        for (int j = 0; j < 5; j++)
            for (int z = 1; z <= 5; z++)
                json_array_append_new(pts, json_pack("{s:[f, f, f], s:[f]}", "point", (double)x,
                                                     ys[j], (double)z, "values",
                                                     value_at(x, ys[j], z)));
    json_t *req = json_pack("{s:[s, s, s], s:s, s:o}", "parameters", PX, PY, PZ, "modeler",
                            "segmented", "points", pts);
    char *body = req ? json_dumps(req, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(req);
    harness_response r;
    harness_post(h, "/v1/fit", body, &r);
    free(body);
    json_t *doc = harness_json(&r);
    check(r.status == 200, "fit: %d %.300s", r.status, r.body);
    same_text("POST /v1/fit",
              json_string_value(json_object_get(json_array_get(json_object_get(doc, "models"), 0),
                                                "function")),
              want);
    json_decref(doc);
    harness_response_free(&r);

    /* perfcast model */
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "%s model --modeler segmented %s 2>/dev/null", bin, file);
    char *out = run(cmd);
    check(out != NULL, "%s", cmd);
    char *nl = out ? strchr(out, '\n') : NULL;
    if (nl)
        *nl = '\0';
    check(out && !strncmp(out, "reg;time;", 9), "callpath and metric: %.80s", out ? out : "");
    same_text("perfcast model", out && !strncmp(out, "reg;time;", 9) ? out + 9 : NULL, want);
    free(out);

    snprintf(cmd, sizeof cmd, "%s model --modeler segmented --json %s 2>/dev/null", bin, file);
    out = run(cmd);
    /* one JSON document a line */
    json_t *j = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    const json_t *m = j;
    same_text("perfcast model --json", json_string_value(json_object_get(m, "function")), want);
    if (!json_string_value(json_object_get(m, "function")))
        fprintf(stderr, "--json printed: %.400s\n", out ? out : "(nothing)");
    json_decref(j);
    free(out);
    free(want);
}

int main(void)
{
    harness *h = harness_open(NULL);
    check(h != NULL, "harness");
    if (!h)
        return check_summary();
    long exp = create_and_fit(h);
    if (exp > 0)
        test_stored(h, exp);
    test_fit_and_cli(h);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
