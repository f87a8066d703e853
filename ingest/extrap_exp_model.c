/*
 * extrap_exp_model.c — the models Extra-P stored in a saved experiment
 * (.extra-p, extrap_exp.c reads the archive), read as perfcast functions
 * (see extrap_exp.h).
 *
 * A stored hypothesis's "function" is one of Extra-P's FunctionSchema
 * variants (extrap/entities/functions.py, terms.py):
 *
 *   ConstantFunction         {"constant_coefficient"}
 *   SingleParameterFunction  + "compound_terms": [{"coefficient",
 *                              "simple_terms": [{"term_type", "exponent"}]}]
 *   MultiParameterFunction   + "compound_terms": [{"coefficient",
 *                              "parameter_term_pairs": {"<index>": a compound
 *                              term, or a SegmentedTerm}}]
 *   SegmentedFunction        {"segments": [two single-parameter functions],
 *                             "intervals": [["-inf", a], [b, "inf"]]}
 *
 * A SegmentedTerm ("segments" and "intervals" in place of "simple_terms") is
 * a whole segmented single-parameter function as one factor: perfcast's
 * segmented factor (modeling/pmnf.h). A SegmentedFunction is the
 * one-parameter segmented model (modeling/modeler.h: nsegments 2). A term's
 * value is its coefficient times each pair's value, a compound term's value
 * its own coefficient times its simple terms (x^e, log2(x)^e); a segmented
 * term's is its segment's (Extra-P does not apply its coefficient). What
 * perfcast cannot hold the same way (three segments, a segment of several
 * terms, two segmented functions of one parameter) is refused with a message,
 * never read as something else.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"
#include "modeling/model_json.h"

typedef struct reading {
    char *err;
    size_t cap;
} reading;

static int refuse(reading *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(reading *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, r->cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* "2", "4/5", "-1/4", "0.5" or a number */
static int read_exponent(reading *r, const json_t *e, double *out)
{
    if (json_is_number(e)) {
        *out = json_number_value(e);
        return 0;
    }
    const char *s = json_string_value(e);
    char *end;
    double num = s ? strtod(s, &end) : 0, den = 1;
    if (s && end != s && *end == '/') {
        const char *d = end + 1;
        den = strtod(d, &end);
        if (end == d)
            end = (char *)s;
    }
    if (!s || end == s || *end || den == 0 || !isfinite(num / den))
        return refuse(r, "exponent: expected a number or a fraction, got %.40s", s ? s : "?");
    *out = num / den;
    return 0;
}

/* A compound term's simple terms as one factor's exponents. */
static int read_simple_terms(reading *r, const json_t *list, double *poly, double *log)
{
    *poly = 0;
    *log = 0;
    if (list && !json_is_array(list))
        return refuse(r, "simple_terms: expected a list");
    size_t i;
    const json_t *st;
    json_array_foreach(list, i, st) {
        const char *type = json_string_value(json_object_get(st, "term_type"));
        double e = 0;
        if (read_exponent(r, json_object_get(st, "exponent"), &e) < 0)
            return -1;
        if (type && !strcmp(type, "polynomial"))
            *poly += e; /* x^a * x^b = x^(a+b) */
        else if (type && !strcmp(type, "logarithm"))
            *log += e;
        else
            return refuse(r, "simple_terms[%zu].term_type: expected polynomial or logarithm", i);
    }
    return 0;
}

static int read_coefficient(reading *r, const json_t *o, const char *key, double *out)
{
    const json_t *c = json_object_get(o, key);
    if (!json_is_number(c))
        return refuse(r, "%s: expected a number", key);
    *out = json_number_value(c);
    return 0;
}

/* A single-parameter function of parameter p (one segment, or a whole
 * one-parameter model) into f. */
static int read_single(reading *r, const json_t *fn, int p, int nparams, pmnf_function *f)
{
    memset(f, 0, sizeof *f);
    f->nparams = nparams;
    if (read_coefficient(r, fn, "constant_coefficient", &f->constant) < 0)
        return -1;
    const json_t *terms = json_object_get(fn, "compound_terms");
    if (terms && !json_is_array(terms))
        return refuse(r, "compound_terms: expected a list");
    if (json_array_size(terms) > PMNF_MAX_TERMS)
        return refuse(r, "compound_terms: %zu terms, perfcast holds at most %d",
                      json_array_size(terms), PMNF_MAX_TERMS);
    size_t i;
    const json_t *t;
    json_array_foreach(terms, i, t) {
        pmnf_term *term = &f->terms[f->nterms++];
        if (read_coefficient(r, t, "coefficient", &term->coef) < 0)
            return -1;
        if (json_object_get(t, "parameter_term_pairs") || json_object_get(t, "segments"))
            return refuse(r, "compound_terms[%zu]: a term of several parameters or segments "
                          "in a single-parameter function", i);
        double poly, log;
        if (read_simple_terms(r, json_object_get(t, "simple_terms"), &poly, &log) < 0)
            return -1;
        if (json_array_size(json_object_get(t, "simple_terms")))
            term->factors[term->nfactors++] = (pmnf_factor){p, poly, log};
    }
    return 0;
}

/* The two intervals ["-inf", a], [b, "inf"]: a and b. */
static double bound(const json_t *v, int *ok)
{
    if (json_is_number(v))
        return json_number_value(v);
    const char *s = json_string_value(v);
    if (s && (!strcmp(s, "inf") || !strcmp(s, "-inf")))
        return s[0] == '-' ? -INFINITY : INFINITY;
    *ok = 0;
    return NAN;
}

static int read_intervals(reading *r, const json_t *o, double *upto, double *from)
{
    const json_t *iv = json_object_get(o, "intervals");
    const json_t *a = json_array_get(iv, 0), *b = json_array_get(iv, 1);
    int ok = json_array_size(iv) == 2 && json_array_size(a) == 2 && json_array_size(b) == 2;
    double lo0 = bound(json_array_get(a, 0), &ok), hi0 = bound(json_array_get(a, 1), &ok);
    double lo1 = bound(json_array_get(b, 0), &ok), hi1 = bound(json_array_get(b, 1), &ok);
    if (!ok || lo0 != -INFINITY || hi1 != INFINITY || !isfinite(hi0) || !isfinite(lo1) ||
        hi0 > lo1)
        return refuse(r, "intervals: expected [[\"-inf\", a], [b, \"inf\"]] with a <= b");
    *upto = hi0;
    *from = lo1;
    return 0;
}

/* A SegmentedTerm (or a SegmentedFunction's segments) of parameter p as a
 * segmented factor: two segments of at most one term each. */
static int read_segfn(reading *r, const json_t *o, int p, int nparams, pmnf_segfn *s)
{
    const json_t *segs = json_object_get(o, "segments");
    if (json_array_size(segs) != 2)
        return refuse(r, "segments: %zu segments, perfcast holds two", json_array_size(segs));
    memset(s, 0, sizeof *s);
    if (read_intervals(r, o, &s->upto, &s->from) < 0)
        return -1;
    for (int k = 0; k < 2; k++) {
        pmnf_function one;
        if (read_single(r, json_array_get(segs, (size_t)k), p, nparams, &one) < 0)
            return -1;
        if (one.nterms > 1 || (one.nterms == 1 && one.terms[0].nfactors == 0))
            return refuse(r, "segments[%d]: %d terms, a segment of a factor holds one term of "
                          "its parameter", k, one.nterms);
        pmnf_segment *g = &s->s[k];
        g->constant = one.constant;
        g->nterms = one.nterms;
        if (one.nterms) {
            g->coef = one.terms[0].coef;
            g->poly = one.terms[0].factors[0].poly;
            g->log = one.terms[0].factors[0].log;
        }
    }
    return 0;
}

/* One term of a MultiParameterFunction into f (its segmented factors into
 * seg[], known[p] set once parameter p's factor is known to be segmented or
 * plain: 1 plain, 2 segmented). */
static int read_multi_term(reading *r, const json_t *t, size_t ti, pmnf_function *f,
                           pmnf_segfn *seg, int *known)
{
    pmnf_term *term = &f->terms[f->nterms++];
    if (read_coefficient(r, t, "coefficient", &term->coef) < 0)
        return -1;
    const json_t *pairs = json_object_get(t, "parameter_term_pairs");
    if (!json_is_object(pairs))
        return refuse(r, "compound_terms[%zu].parameter_term_pairs: expected an object", ti);
    /* factors in increasing parameter order, as pmnf.h keeps them */
    for (int p = 0; p < f->nparams; p++) {
        char key[16];
        snprintf(key, sizeof key, "%d", p);
        const json_t *ct = json_object_get(pairs, key);
        if (!ct)
            continue;
        pmnf_factor *fa = &term->factors[term->nfactors++];
        fa->param = p;
        if (json_object_get(ct, "segments")) {
            pmnf_segfn s;
            if (read_segfn(r, ct, p, f->nparams, &s) < 0)
                return -1;
            if (known[p] == 1 || (known[p] == 2 && !pmnf_segfn_equal(&s, &seg[p])))
                return refuse(r, "compound_terms[%zu]: parameter %d has another function in "
                              "another term, perfcast holds one segmented function a parameter",
                              ti, p);
            seg[p] = s;
            known[p] = 2;
            continue;
        }
        if (known[p] == 2)
            return refuse(r, "compound_terms[%zu]: parameter %d is segmented in another term", ti,
                          p);
        known[p] = 1;
        double c = 1;
        if (read_coefficient(r, ct, "coefficient", &c) < 0 ||
            read_simple_terms(r, json_object_get(ct, "simple_terms"), &fa->poly, &fa->log) < 0)
            return -1;
        term->coef *= c; /* a compound term's value has its own coefficient */
    }
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)pairs, k, v) {
        char *end;
        long p = strtol(k, &end, 10);
        if (*end || end == k || p < 0 || p >= f->nparams)
            return refuse(r, "compound_terms[%zu].parameter_term_pairs: \"%.20s\" is not a "
                          "parameter of the experiment", ti, k);
    }
    return 0;
}

int ingest_extrap_exp_model(const json_t *function, int nparams, pmnf_model *out, char *err,
                            size_t errcap)
{
    reading r = {err, errcap};
    memset(out, 0, sizeof *out);
    if (!json_is_object(function))
        return refuse(&r, "function: expected an object");
    if (nparams < 1 || nparams > PMNF_MAX_PARAMS)
        return refuse(&r, "%d parameters, perfcast models 1 to %d", nparams, PMNF_MAX_PARAMS);
    if (json_object_get(function, "segments")) { /* SegmentedFunction */
        pmnf_segfn s;
        if (read_segfn(&r, function, 0, nparams, &s) < 0)
            return -1;
        pmnf_function *f[2] = {&out->f, &out->f2};
        /* its segments may have several terms: read them whole */
        for (int k = 0; k < 2; k++)
            if (read_single(&r, json_array_get(json_object_get(function, "segments"), (size_t)k),
                            0, nparams, f[k]) < 0)
                return -1;
        out->nsegments = 2;
        out->break_param = 0;
        out->break_lo = s.upto;
        out->break_hi = s.from;
        return 0;
    }
    const json_t *terms = json_object_get(function, "compound_terms");
    const json_t *first = json_array_get(terms, 0);
    if (!json_object_get(first, "parameter_term_pairs"))
        return read_single(&r, function, 0, nparams, &out->f);
    pmnf_function *f = &out->f;
    f->nparams = nparams;
    if (read_coefficient(&r, function, "constant_coefficient", &f->constant) < 0)
        return -1;
    if (json_array_size(terms) > PMNF_MAX_TERMS)
        return refuse(&r, "compound_terms: %zu terms, perfcast holds at most %d",
                      json_array_size(terms), PMNF_MAX_TERMS);
    pmnf_segfn seg[PMNF_MAX_PARAMS];
    int known[PMNF_MAX_PARAMS] = {0};
    size_t i;
    const json_t *t;
    json_array_foreach(terms, i, t) {
        if (read_multi_term(&r, t, i, f, seg, known) < 0)
            return -1;
    }
    int named = 0;
    for (int p = 0; p < nparams; p++)
        if (known[p] == 2) {
            pmnf_set_segmented(f, p, &seg[p]);
            if (!named++) { /* the first names the break, as model_json.h reads it */
                out->break_param = p;
                out->break_lo = seg[p].upto;
                out->break_hi = seg[p].from;
            }
        }
    return 0;
}

char *ingest_extrap_exp_model_text(const json_t *function, const ingest_experiment *e, char *err,
                                   size_t errcap)
{
    pmnf_model m;
    if (ingest_extrap_exp_model(function, e->nparams, &m, err, errcap) < 0)
        return NULL;
    char *text = api_model_text(&m, (const char *const *)e->params);
    if (!text)
        snprintf(err, errcap, "out of memory");
    return text;
}
