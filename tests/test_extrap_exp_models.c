/*
 * test_extrap_exp_models.c — the models Extra-P 4.2.5 stored in its saved
 * experiments (.extra-p), read by ingest/extrap_exp_model.c, against what
 * Extra-P itself says of them (tests/data/extrap/segmented_exp, made by
 * Extra-P; its README says how):
 *
 *  - one_parameter_segmented_5: a ConstantFunction, a SingleParameterFunction
 *    and a SegmentedFunction (two segments, change point p = 5000);
 *    two_parameter_segmented_1: a MultiParameterFunction whose factor of x is
 *    a SegmentedTerm in both terms; three_parameter_segmented_long: three
 *    parameters, one named with 38 characters, the segmented factor in two
 *    of three terms (a 720-byte text);
 *  - every model's text is Extra-P's to_string byte for byte (the numbers
 *    are repr-printed, so equal text is equal coefficients), and its value at
 *    every measured coordinate Extra-P's evaluate() to 1e-12 relative;
 *  - `perfcast model FILE.extra-p` reports each stored model with that text;
 *  - what perfcast cannot hold is refused with a message, never read as
 *    something else: three segments, intervals that are not
 *    [-inf, a], [b, inf] with a <= b, a segment of two terms, a parameter
 *    segmented in one term and plain in another, a parameter index outside
 *    the experiment, an exponent that is not a number.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"
#include "modeling/model_json.h"
#include "tests/check.h"
#include "tests/harness.h"

#define DIR "tests/data/extrap/segmented_exp/"

static const char *const files[] = {"one_parameter_segmented_5", "two_parameter_segmented_1",
                                    "three_parameter_segmented_long"};

/* The stored function of callpath;metric in doc's first modeler. */
static const json_t *stored(const json_t *doc, const char *cp, const char *metric)
{
    const json_t *mg = json_array_get(json_object_get(doc, "modelers"), 0);
    const json_t *m = json_object_get(json_object_get(json_object_get(mg, "models"), cp), metric);
    return json_object_get(json_object_get(m, "hypothesis"), "function");
}

/* The callpath, metric and rest of a "callpath;metric;rest" line (cut in
 * place; the rest may hold ';'). */
static int split(char *line, char **cp, char **metric, char **rest)
{
    char *a = strchr(line, ';');
    char *b = a ? strchr(a + 1, ';') : NULL;
    if (!b)
        return -1;
    *a = *b = '\0';
    *cp = line;
    *metric = a + 1;
    *rest = b + 1;
    return 0;
}

static int read_exp(const char *name, ingest_experiment *e, json_t **doc)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s.extra-p", name);
    size_t len;
    char *buf = harness_read_file(path, &len);
    ingest_error ie = {0};
    int rc = buf ? ingest_extrap_exp_read(buf, len, 0, e, doc, &ie) : -1;
    free(buf);
    check(rc == 0, "read %s: %s", path, ie.msg);
    return rc;
}

/* Each line of NAME.models: the stored model read, printed as Extra-P did. */
static int check_texts(const char *name, const ingest_experiment *e, const json_t *doc)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s.models", name);
    size_t len;
    char *text = harness_read_file(path, &len);
    check(text != NULL, "read %s", path);
    int n = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *cp, *metric, *want;
        if (split(line, &cp, &metric, &want) < 0)
            continue;
        char err[200] = "";
        char *got = ingest_extrap_exp_model_text(stored(doc, cp, metric), e, err, sizeof err);
        check(got && !strcmp(got, want), "%s %s;%s: %zu bytes, Extra-P %zu:\n  got    %s\n  Extra-P %s",
              name, cp, metric, got ? strlen(got) : 0, strlen(want), got ? got : err, want);
        free(got);
        n++;
    }
    free(text);
    return n;
}

/* Each line of NAME.values: the model's value where Extra-P evaluated it. */
static void check_values(const char *name, const ingest_experiment *e, const json_t *doc)
{
    char path[256];
    snprintf(path, sizeof path, DIR "%s.values", name);
    size_t len;
    char *text = harness_read_file(path, &len);
    check(text != NULL, "read %s", path);
    int n = 0, off = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *cp, *metric, *rest;
        if (split(line, &cp, &metric, &rest) < 0)
            continue;
        double pt[PMNF_MAX_PARAMS];
        char *p = rest;
        for (int i = 0; i < e->nparams; i++)
            pt[i] = strtod(p, &p), p += *p == ',';
        double want = strtod(p + (*p == ';'), NULL);
        pmnf_model m;
        char err[200];
        if (ingest_extrap_exp_model(stored(doc, cp, metric), e->nparams, &m, err, sizeof err) < 0) {
            check(0, "%s %s;%s: %s", name, cp, metric, err);
            continue;
        }
        /* the terms are summed in Extra-P's order: a few ulps of the largest term */
        double got = pmnf_model_eval(&m, pt);
        int ok = fabs(got - want) <= 1e-12 * fabs(want) + 1e-15;
        if (!ok && off++ < 3)
            printf("# %s %s;%s at %s: %.17g, Extra-P %.17g\n", name, cp, metric, rest, got, want);
        n++;
    }
    check(n > 0 && off == 0, "%s: %d of %d values unlike Extra-P's", name, off, n);
    free(text);
}

static void test_files(void)
{
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        ingest_experiment e;
        json_t *doc = NULL;
        if (read_exp(files[f], &e, &doc) < 0)
            continue;
        int n = check_texts(files[f], &e, doc);
        check(n == (f == 0 ? 3 : 1), "%s: %d models", files[f], n);
        check_values(files[f], &e, doc);
        json_decref(doc);
        ingest_experiment_free(&e);
    }
}

/* what the reader makes of them: the kinds, the change points */
static void test_shapes(void)
{
    ingest_experiment e;
    json_t *doc = NULL;
    pmnf_model m;
    char err[200];
    if (read_exp(files[0], &e, &doc) == 0) {
        check(ingest_extrap_exp_model(stored(doc, "met1+2", ""), 1, &m, err, sizeof err) == 0 &&
                  m.nsegments == 2 && m.break_param == 0 && m.break_lo == 5000 &&
                  m.break_hi == 5000 && m.f.nterms == 0 && m.f.constant == 4.016 &&
                  m.f2.nterms == 1 && m.f2.terms[0].factors[0].poly == 1,
              "SegmentedFunction: two segments, change point 5000: %s", err);
        double at[1] = {5000};
        check(pmnf_model_eval(&m, at) == 4.016, "at the change point: the first segment");
        json_decref(doc);
        ingest_experiment_free(&e);
    }
    if (read_exp(files[1], &e, &doc) == 0) {
        check(ingest_extrap_exp_model(stored(doc, "reg", "metr"), 2, &m, err, sizeof err) == 0 &&
                  m.nsegments == 0 && m.f.segmented == 1 && m.f.seg[0].upto == 50 &&
                  m.f.seg[0].from == 60 && m.f.nterms == 2 && m.break_param == 0 &&
                  m.break_lo == 50 && m.break_hi == 60,
              "SegmentedTerm: x a segmented factor, break x 50..60: %s", err);
        /* the model's document reads back the same (what a model set stores) */
        const char *names[2] = {"x", "y"};
        m.ncoef = m.f.nterms + 1;
        json_t *j = api_model_to_json(&m, names, 1);
        pmnf_model back;
        char *a = pmnf_format_dup(&m.f, names), *b = NULL;
        if (j && api_model_from_json(j, names, 2, &back) == 0)
            b = pmnf_format_dup(&back.f, names);
        check(a && b && !strcmp(a, b), "its model document reads back: %s", b ? b : "(refused)");
        free(a);
        free(b);
        json_decref(j);
        json_decref(doc);
        ingest_experiment_free(&e);
    }
}

/* The two-parameter model with one change made by edit. */
static void refused(const json_t *fn, const char *what, void (*edit)(json_t *fn), const char *want)
{
    json_t *copy = json_deep_copy(fn);
    edit(copy);
    pmnf_model m;
    char err[200] = "";
    int rc = ingest_extrap_exp_model(copy, 2, &m, err, sizeof err);
    check(rc < 0 && strstr(err, want), "%s: refused (%s)", what, err);
    json_decref(copy);
}

static json_t *term(json_t *fn, size_t t)
{
    return json_array_get(json_object_get(fn, "compound_terms"), t);
}

static json_t *seg_term(json_t *fn, size_t t)
{
    return json_object_get(json_object_get(term(fn, t), "parameter_term_pairs"), "0");
}

static void three_segments(json_t *fn)
{
    json_t *segs = json_object_get(seg_term(fn, 0), "segments");
    json_array_append_new(segs, json_deep_copy(json_array_get(segs, 0)));
}

static void open_interval(json_t *fn)
{
    json_array_set_new(json_array_get(json_object_get(seg_term(fn, 0), "intervals"), 0), 0,
                       json_real(10));
}

static void crossed_interval(json_t *fn)
{
    json_array_set_new(json_array_get(json_object_get(seg_term(fn, 0), "intervals"), 1), 0,
                       json_real(40));
}

static void two_term_segment(json_t *fn)
{
    json_t *seg0 = json_array_get(json_object_get(seg_term(fn, 0), "segments"), 0);
    json_t *ct = json_object_get(seg0, "compound_terms");
    json_array_append_new(ct, json_deep_copy(json_array_get(ct, 0)));
}

static void plain_in_one_term(json_t *fn)
{
    json_object_set_new(json_object_get(term(fn, 1), "parameter_term_pairs"), "0",
                        json_pack("{s:f, s:[{s:s, s:s}]}", "coefficient", 1.0, "simple_terms",
                                  "term_type", "polynomial", "exponent", "2"));
}

static void other_segments(json_t *fn)
{
    json_t *seg0 = json_array_get(json_object_get(seg_term(fn, 1), "segments"), 0);
    json_object_set_new(seg0, "constant_coefficient", json_real(1.5));
}

static void unknown_parameter(json_t *fn)
{
    json_t *pairs = json_object_get(term(fn, 1), "parameter_term_pairs");
    json_object_set(pairs, "2", json_object_get(pairs, "1"));
}

static void bad_exponent(json_t *fn)
{
    json_t *st = json_array_get(
        json_object_get(json_object_get(json_object_get(term(fn, 1), "parameter_term_pairs"), "1"),
                        "simple_terms"),
        0);
    json_object_set_new(st, "exponent", json_string("one half"));
}

static void test_refused(void)
{
    ingest_experiment e;
    json_t *doc = NULL;
    if (read_exp(files[1], &e, &doc) < 0)
        return;
    const json_t *fn = stored(doc, "reg", "metr");
    refused(fn, "three segments", three_segments, "segments");
    refused(fn, "a first interval not from -inf", open_interval, "intervals");
    refused(fn, "the second segment before the first ends", crossed_interval, "intervals");
    refused(fn, "a segment of two terms", two_term_segment, "segments[0]");
    refused(fn, "x plain in one term, segmented in the other", plain_in_one_term, "parameter 0");
    refused(fn, "x two segmented functions", other_segments, "parameter 0");
    refused(fn, "parameter 2 of two", unknown_parameter, "\"2\"");
    refused(fn, "exponent \"one half\"", bad_exponent, "exponent");
    pmnf_model m;
    char err[200] = "";
    check(ingest_extrap_exp_model(json_array_get(json_object_get(doc, "parameters"), 0), 2, &m,
                                  err, sizeof err) < 0 && err[0],
          "not a function: %s", err);
    json_decref(doc);
    ingest_experiment_free(&e);
}

/* `perfcast model FILE.extra-p` reports Extra-P's stored models. */
static void test_cli(void)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        char cmd[512], models[256];
        snprintf(cmd, sizeof cmd, "%s model " DIR "%s.extra-p 2>&1 >/dev/null", bin, files[f]);
        snprintf(models, sizeof models, DIR "%s.models", files[f]);
        FILE *p = popen(cmd, "r");
        size_t cap = 1 << 16, n = 0;
        char *out = malloc(cap);
        while (p && out && n < cap - 1) {
            size_t got = fread(out + n, 1, cap - 1 - n, p);
            if (!got)
                break;
            n += got;
        }
        if (p)
            pclose(p);
        if (out)
            out[n] = '\0';
        size_t len;
        char *want = harness_read_file(models, &len);
        for (char *line = want, *next; out && line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = '\0';
            char expect[2048];
            snprintf(expect, sizeof expect, "stored by Extra-P 4.2.5 (New Modeler): %s\n", line);
            check(strstr(out, expect) != NULL, "perfcast model %s reports %s\n%s", files[f], line,
                  out);
        }
        free(want);
        free(out);
    }
}

int main(void)
{
    test_files();
    test_shapes();
    test_refused();
    test_cli();
    return check_summary();
}
