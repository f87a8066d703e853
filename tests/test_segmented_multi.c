/*
 * test_segmented_multi.c — segmented factors (modeling/pmnf.h): a whole
 * single-parameter segmented function as one factor of a multi-parameter
 * term, what Extra-P 4.2.5's multi-parameter modeler builds with its
 * segmented single-parameter modeler.
 *
 *  - text: Extra-P's "{f for x<=a; g for x>=b}" printed and read back byte
 *    for byte, evaluated segment by segment (the first up to a, the second
 *    from b and, where Extra-P's function is NaN, between them), and what
 *    the reader refuses;
 *  - parity: `--modeler segmented` on Extra-P's two_parameter_segmented_1
 *    against what Extra-P 4.2.5 printed (tests/data/extrap/expected_segmented):
 *    the same hypothesis, change point and exponents exactly, coefficients
 *    to 1e-9 relative (constants of rounding size, 2e-11 against Extra-P's
 *    -8e-12 on values up to 6.5e4, to 1e-9 of the largest value), the same
 *    predictions at every measured point to 1e-9; Extra-P's modeler on the
 *    same file keeps its plain function;
 *  - the model's JSON round trip (what a model set stores and the API
 *    reads back): the same function and the same predictions and intervals,
 *    "break" naming x between 50 and 60, and documents that are not one;
 *  - `perfcast model --modeler segmented` prints Extra-P's form.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ingest/extrap.h"
#include "modeling/model_json.h"
#include "modeling/modeler.h"
#include "tests/check.h"
#include "tests/harness.h"

#define INPUT "tests/data/extrap-audit/two_parameter_segmented_1.txt"
#define EXPECTED "tests/data/extrap/expected_segmented/two_parameter_segmented_1.txt.models"

static const char *const names_xy[] = {"x", "y"};

/* ---- text ---------------------------------------------------------------- */

static void test_text(void)
{
    const char *text = "2.5 + 0.5 * {-1.0 + 2.0 * x^(2) for x<=4.0; 3.0 + x^(1) * log2(x)^(1) "
                       "for x>=6.0} + {-1.0 + 2.0 * x^(2) for x<=4.0; 3.0 + x^(1) * "
                       "log2(x)^(1) for x>=6.0} * y^(1/2)";
    pmnf_function f;
    char err[160], buf[1024];
    check(pmnf_parse(text, names_xy, 2, &f, err, sizeof err) == 0, "parse: %s", err);
    check(f.segmented == 1 && f.nterms == 2 && f.seg[0].upto == 4 && f.seg[0].from == 6 &&
              f.seg[0].s[0].constant == -1 && f.seg[0].s[0].coef == 2 &&
              f.seg[0].s[0].poly == 2 && f.seg[0].s[1].poly == 1 && f.seg[0].s[1].log == 1,
          "the segmented function of x");
    check(f.terms[0].factors[0].poly == 1 && f.terms[0].factors[0].log == 1,
          "its factors carry the growth beyond the change point");
    pmnf_format(&f, names_xy, buf, sizeof buf);
    check(!strcmp(buf, text), "printed back byte for byte:\n  %s\n  %s", buf, text);
    size_t need = pmnf_format(&f, names_xy, buf, 20);
    check(need == strlen(text) && strlen(buf) == 19, "length when cut: %zu", need);

    double lo[2] = {2, 4}, edge[2] = {4, 9}, gap[2] = {5, 4}, hi[2] = {8, 4};
    double s_lo = -1 + 2 * 4.0, s_edge = -1 + 2 * 16.0, s_gap = 3 + 5 * log2(5), s_hi = 3 + 8 * 3;
    check(fabs(pmnf_eval(&f, lo) - (2.5 + 0.5 * s_lo + s_lo * 2)) < 1e-12, "first segment");
    check(fabs(pmnf_eval(&f, edge) - (2.5 + 0.5 * s_edge + s_edge * 3)) < 1e-12,
          "x = 4: still the first");
    check(fabs(pmnf_eval(&f, gap) - (2.5 + 0.5 * s_gap + s_gap * 2)) < 1e-12,
          "between 4 and 6 (Extra-P: NaN): the second");
    check(fabs(pmnf_eval(&f, hi) - (2.5 + 0.5 * s_hi + s_hi * 2)) < 1e-12, "second segment");

    /* a constant segment prints as a number alone */
    check(pmnf_parse("{7.0 for x<=3.0; 1.5 * x^(1) for x>=3.0}", names_xy, 2, &f, err,
                     sizeof err) == 0 &&
              f.seg[0].s[0].nterms == 0 && f.seg[0].s[1].constant == 0 &&
              f.terms[0].coef == 1,
          "constant first segment, shared change point: %s", err);
    pmnf_format(&f, names_xy, buf, sizeof buf);
    check(!strcmp(buf, "{7.0 for x<=3.0; 1.5 * x^(1) for x>=3.0}"), "%s", buf);

    static const char *const bad[] = {
        "{1.0 + x^(2) for x<=4.0}",                              /* one segment */
        "{1.0 for x<=4.0; 2.0 for y>=5.0}",                      /* two parameters */
        "{1.0 for x<=6.0; 2.0 for x>=4.0}",                      /* bounds out of order */
        "{1.0 for x<=4.0; 2.0 for x>=6.0} * x^(1)",              /* x twice in a term */
        "x^(1) * {1.0 for x<=4.0; 2.0 for x>=6.0}",              /* the same, the other way */
        "{1.0 for x<=4.0; 2.0 for x>=6.0} + {1.0 for x<=4.0; 3.0 for x>=6.0} * y^(1)",
        "{1.0 + x^(1) + x^(2) for x<=4.0; 2.0 for x>=6.0}",      /* two terms in a segment */
        "{1.0 + y^(1) for y<=4.0; 2.0 * x^(1) for y>=6.0}",      /* a segment of another name */
        "{{1.0 for x<=1.0; 2.0 for x>=2.0} for x<=4.0; 2.0 for x>=6.0}",
        "{1.0 for x<=4.0; 2.0 for x>=6.0 and more}",
        "{1.0 for x<=4.0; 2.0 for x>=6.0",                       /* not closed */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        check(pmnf_parse(bad[i], names_xy, 2, &f, err, sizeof err) < 0 && err[0],
              "refused: %s (%s)", bad[i], err);
    }
}

/* ---- parity with Extra-P ------------------------------------------------- */

typedef struct series {
    int np, n;
    double *coords, *means;
} series;

static int read_series(const char *path, ingest_experiment *e, series *s)
{
    size_t len;
    char *data = harness_read_file(path, &len);
    ingest_error ie;
    int rc = data ? ingest_extrap_read(data, len, ingest_extrap_format_from_path(path, data, len),
                                       e, &ie)
                  : -1;
    free(data);
    check(rc == 0 && e->nseries == 1 && e->nparams == 2, "read %s", path);
    if (rc < 0)
        return -1;
    const ingest_series *is = &e->series[0];
    s->np = e->nparams;
    s->n = is->npoints;
    s->coords = malloc(sizeof(double) * (size_t)(s->n * s->np));
    s->means = malloc(sizeof(double) * (size_t)s->n);
    double *scratch = malloc(sizeof(double) * (size_t)(is->rep_start[s->n] + 1));
    for (int j = 0; s->coords && s->means && scratch && j < s->n; j++) {
        memcpy(s->coords + j * s->np, e->coords + (size_t)is->coord[j] * s->np,
               sizeof(double) * (size_t)s->np);
        s->means[j] = pmnf_aggregate(is->values + is->rep_start[j],
                                     is->rep_start[j + 1] - is->rep_start[j], PMNF_MEASURE_MEAN,
                                     scratch);
    }
    free(scratch);
    return s->coords && s->means ? 0 : -1;
}

static int fit(pmnf_modeler_kind k, const series *s, pmnf_model *out)
{
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = k;
    pmnf_modeler *m = pmnf_modeler_new(&o);
    char err[256] = "";
    pmnf_data d = {s->np, s->n, s->coords, s->means};
    int rc = m ? pmnf_fit(m, &d, out, err, sizeof err) : -1;
    check(rc == 0, "fit: %s", err);
    pmnf_modeler_free(m);
    return rc;
}

/* a within rel of b, or within abs of it */
static int near(double a, double b, double rel, double abs_)
{
    return fabs(a - b) <= rel * fabs(b) + abs_;
}

static void compare_segment(const pmnf_segment *a, const pmnf_segment *b, double scale, int k)
{
    check(a->nterms == b->nterms && a->poly == b->poly && a->log == b->log,
          "segment %d: exponents %g %g, Extra-P %g %g", k, a->poly, a->log, b->poly, b->log);
    check(near(a->constant, b->constant, 1e-9, 1e-9 * scale),
          "segment %d: constant %.17g, Extra-P %.17g", k, a->constant, b->constant);
    check(near(a->coef, b->coef, 1e-9, 0), "segment %d: coefficient %.17g, Extra-P %.17g", k,
          a->coef, b->coef);
}

/* got against Extra-P's function want: hypothesis, change point, exponents
 * exactly; coefficients to 1e-9 relative. */
static void compare_function(const pmnf_function *got, const pmnf_function *want, double scale,
                             const char *what)
{
    check(got->segmented == want->segmented && got->nterms == want->nterms,
          "%s: segmented parameters %u, %d terms; Extra-P %u, %d", what, got->segmented,
          got->nterms, want->segmented, want->nterms);
    check(near(got->constant, want->constant, 1e-9, 1e-9 * scale),
          "%s: constant %.17g, Extra-P %.17g", what, got->constant, want->constant);
    for (int p = 0; p < PMNF_MAX_PARAMS; p++) {
        if (!(got->segmented & want->segmented & (1u << p)))
            continue;
        check(got->seg[p].upto == want->seg[p].upto && got->seg[p].from == want->seg[p].from,
              "%s: change point %g..%g, Extra-P %g..%g", what, got->seg[p].upto,
              got->seg[p].from, want->seg[p].upto, want->seg[p].from);
        for (int k = 0; k < 2; k++)
            compare_segment(&got->seg[p].s[k], &want->seg[p].s[k], scale, k);
    }
    for (int t = 0; t < got->nterms && t < want->nterms; t++) {
        const pmnf_term *a = &got->terms[t], *b = &want->terms[t];
        int same = a->nfactors == b->nfactors;
        for (int k = 0; same && k < a->nfactors; k++)
            same = a->factors[k].param == b->factors[k].param &&
                   a->factors[k].poly == b->factors[k].poly &&
                   a->factors[k].log == b->factors[k].log;
        check(same, "%s: term %d has Extra-P's factors", what, t);
        check(near(a->coef, b->coef, 1e-9, 0), "%s: term %d coefficient %.17g, Extra-P %.17g",
              what, t, a->coef, b->coef);
    }
}

/* The function of a "callpath;metric;function" line (the function holds ';'). */
static const char *function_of(const char *line)
{
    const char *a = strchr(line, ';');
    const char *b = a ? strchr(a + 1, ';') : NULL;
    return b ? b + 1 : "";
}

static double largest(const series *s)
{
    double v = 0;
    for (int i = 0; i < s->n; i++)
        v = fmax(v, fabs(s->means[i]));
    return v;
}

static void test_parity(const series *s, pmnf_model *md)
{
    size_t len;
    char *expected = harness_read_file(EXPECTED, &len);
    check(expected != NULL, "read %s", EXPECTED);
    if (!expected)
        return;
    char *nl = strchr(expected, '\n');
    if (nl)
        *nl = '\0';
    check(!strncmp(expected, "reg;metr;", 9), "Extra-P's callpath and metric");
    pmnf_function want;
    char err[160];
    int parsed = pmnf_parse(function_of(expected), names_xy, 2, &want, err, sizeof err) == 0;
    check(parsed && want.segmented == 1, "Extra-P's function read: %s", parsed ? "" : err);
    /* Extra-P's text is our text: read and printed back it is the same bytes */
    char buf[2048];
    pmnf_format(&want, names_xy, buf, sizeof buf);
    check(!strcmp(buf, function_of(expected)), "Extra-P's form printed back:\n  %s\n  %s", buf,
          function_of(expected));
    free(expected);
    if (!parsed || fit(PMNF_MODELER_SEGMENTED, s, md) < 0)
        return;
    double scale = largest(s);
    check(md->modeler == PMNF_MODELER_SEGMENTED && md->nsegments == 0,
          "one function with a segmented factor, by the segmented modeler");
    compare_function(&md->f, &want, scale, "two_parameter_segmented_1");
    int off = 0;
    for (int i = 0; i < s->n; i++) {
        const double *pt = s->coords + (size_t)i * s->np;
        off += !near(pmnf_model_eval(md, pt), pmnf_eval(&want, pt), 1e-9, 1e-9 * scale);
    }
    check(off == 0, "%d of %d measured points predicted unlike Extra-P", off, s->n);
    check(md->break_param == 0 && md->break_lo == 50 && md->break_hi == 60,
          "the model names its change point: x %g..%g", md->break_lo, md->break_hi);
    check(!(md->warnings & PMNF_WARN_TWO_REGIMES), "its function has the two regimes: no warning");

    pmnf_model plain;
    if (fit(PMNF_MODELER_EXTRAP, s, &plain) == 0)
        check(plain.f.segmented == 0, "Extra-P's own modeler keeps a plain function");
}

/* ---- predictions and the JSON round trip ---------------------------------- */

static void test_predict_json(const pmnf_model *md)
{
    double below[2] = {40, 8}, gap[2] = {55, 8}, above[2] = {90, 16}, far[2] = {800, 512};
    double v, lo, hi;
    const pmnf_function *f = &md->f;
    const pmnf_segfn *sx = &f->seg[0];
    double s40 = sx->s[0].constant + sx->s[0].coef * pow(40, sx->s[0].poly);
    double want = f->constant + f->terms[0].coef * s40 + f->terms[1].coef * s40 * 8;
    int none = pmnf_predict(md, below, &v, &lo, &hi);
    check(!none && near(v, want, 1e-12, 0) && lo < v && v < hi,
          "x = 40 from the first segment: %.17g [%g, %g], want %.17g", v, lo, hi, want);
    double s55 = sx->s[1].constant + sx->s[1].coef * pow(55, sx->s[1].poly);
    want = f->constant + f->terms[0].coef * s55 + f->terms[1].coef * s55 * 8;
    pmnf_predict(md, gap, &v, &lo, &hi);
    check(near(v, want, 1e-12, 0) && lo < v && v < hi,
          "x = 55, between the segments: the second: %.17g, want %.17g", v, want);

    json_t *doc = api_model_to_json(md, names_xy, 1);
    check(doc != NULL, "model document");
    if (!doc)
        return;
    const json_t *brk = json_object_get(doc, "break");
    check(!strcmp(json_string_value(json_object_get(brk, "parameter")) ?: "", "x") &&
              json_number_value(json_object_get(brk, "low")) == 50 &&
              json_number_value(json_object_get(brk, "high")) == 60,
          "break: x between 50 and 60");
    const json_t *fx = json_array_get(
        json_object_get(json_array_get(json_object_get(doc, "terms"), 1), "factors"), 0);
    const json_t *segs = json_object_get(fx, "segments");
    check(json_array_size(segs) == 2 &&
              json_number_value(json_object_get(json_array_get(segs, 0), "upto")) == 50 &&
              json_number_value(json_object_get(json_array_get(segs, 1), "from")) == 60 &&
              json_number_value(json_object_get(fx, "poly")) == 0.8,
          "the factor of x carries its segments, and the growth beyond them");
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_t *back = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    pmnf_model r;
    check(back && api_model_from_json(back, names_xy, 2, &r) == 0, "read back");
    char a[2048], b[2048];
    pmnf_format(&md->f, names_xy, a, sizeof a);
    pmnf_format(&r.f, names_xy, b, sizeof b);
    check(!strcmp(a, b) && r.f.segmented == 1 && r.modeler == PMNF_MODELER_SEGMENTED,
          "the same function:\n  %s\n  %s", a, b);
    check(r.break_param == 0 && r.break_lo == 50 && r.break_hi == 60, "the same break");
    const double *pts[] = {below, gap, above, far};
    for (int i = 0; i < 4; i++) {
        double v2, lo2, hi2;
        pmnf_predict(md, pts[i], &v, &lo, &hi);
        pmnf_predict(&r, pts[i], &v2, &lo2, &hi2);
        check(v == v2 && lo == lo2 && hi == hi2, "the same prediction at (%g, %g)", pts[i][0],
              pts[i][1]);
    }
    json_decref(back);

    /* documents that are not a model */
    json_t *bad = json_deep_copy(doc);
    json_t *seg1 = json_array_get(
        json_object_get(json_array_get(
                            json_object_get(json_array_get(json_object_get(bad, "terms"), 0),
                                            "factors"),
                            0),
                        "segments"),
        1);
    json_object_set_new(seg1, "from", json_real(40));
    check(api_model_from_json(bad, names_xy, 2, &r) < 0, "change point out of order: refused");
    json_decref(bad);
    bad = json_deep_copy(doc);
    json_object_del(json_array_get(json_object_get(json_array_get(json_object_get(bad, "terms"), 1),
                                                   "factors"),
                                   0),
                    "segments");
    check(api_model_from_json(bad, names_xy, 2, &r) < 0,
          "x segmented in one term and plain in another: refused");
    json_decref(bad);
    bad = json_deep_copy(doc);
    json_object_set_new(json_array_get(json_object_get(json_array_get(json_object_get(bad, "terms"),
                                                                      1),
                                                       "factors"),
                                       0),
                        "segments", json_pack("[{s:f, s:[], s:f}]", "constant", 1.0, "terms",
                                              "upto", 3.0));
    check(api_model_from_json(bad, names_xy, 2, &r) < 0, "one segment: refused");
    json_decref(bad);
    json_decref(doc);
}

/* ---- the command line ----------------------------------------------------- */

static void test_cli(const series *s)
{
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    char cmd[512], out[4096] = "";
    snprintf(cmd, sizeof cmd, "%s model --modeler segmented %s 2>/dev/null", bin, INPUT);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = '\0';
    int st = p ? pclose(p) : -1;
    check(st == 0 && !strncmp(out, "reg;metr;", 9) &&
              strstr(out, " * {-11.876635294") && strstr(out, " * x^(2) for x<=50.0; -2608.69") &&
              strstr(out, " * x^(4/5) for x>=60.0} * y^(1)\n"),
          "Extra-P's form on the command line: %s", out);
    char *nl = strchr(out, '\n');
    if (nl)
        *nl = '\0';
    pmnf_function got;
    char err[160];
    size_t len;
    char *expected = harness_read_file(EXPECTED, &len);
    pmnf_function want;
    if (expected && (nl = strchr(expected, '\n')))
        *nl = '\0';
    if (expected && pmnf_parse(function_of(out), names_xy, 2, &got, err, sizeof err) == 0 &&
        pmnf_parse(function_of(expected), names_xy, 2, &want, err, sizeof err) == 0)
        compare_function(&got, &want, largest(s), "perfcast model");
    else
        check(0, "the printed function reads back: %s", err);
    free(expected);
}

int main(void)
{
    test_text();
    ingest_experiment e;
    series s = {0};
    pmnf_model md;
    if (read_series(INPUT, &e, &s) == 0) {
        test_parity(&s, &md);
        if (md.f.segmented)
            test_predict_json(&md);
        test_cli(&s);
        ingest_experiment_free(&e);
    }
    free(s.coords);
    free(s.means);
    return check_summary();
}
