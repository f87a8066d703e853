/*
 * pmnf.c — evaluating, printing and parsing PMNF functions (see pmnf.h).
 *
 * Printing follows Extra-P 4.2.5 exactly: coefficients as Python's repr()
 * prints a float, exponents as Extra-P's Fraction prints them, a coefficient
 * of exactly 1 left out, a constant of exactly 0 left out unless the function
 * has no terms, terms joined by " + " even when the coefficient is negative;
 * a segmented factor as Extra-P's SegmentedTerm prints itself,
 * "{f for x<=a; g for x>=b}", each segment a function of its own.
 */
#include "modeling/pmnf.h"

#include "common/numtext.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double pmnf_factor_eval(const pmnf_factor *f, double x)
{
    double v = 1.0;
    if (f->poly != 0)
        v = pow(x, f->poly);
    if (f->log != 0)
        v *= pow(log2(x), f->log);
    return v;
}

/* A segment as Extra-P's Function.evaluate computes it: the constant plus
 * coefficient * x^poly * log2(x)^log, multiplied in that order. */
static double segment_eval(const pmnf_segment *g, double x)
{
    double v = g->constant;
    if (g->nterms > 0) {
        double t = g->coef;
        if (g->poly != 0)
            t *= pow(x, g->poly);
        if (g->log != 0)
            t *= pow(log2(x), g->log);
        v += t;
    }
    return v;
}

static int segment_equal(const pmnf_segment *a, const pmnf_segment *b)
{
    return a->constant == b->constant && a->nterms == b->nterms &&
           (a->nterms == 0 || (a->coef == b->coef && a->poly == b->poly && a->log == b->log));
}

int pmnf_segfn_equal(const pmnf_segfn *a, const pmnf_segfn *b)
{
    return a->upto == b->upto && a->from == b->from && segment_equal(&a->s[0], &b->s[0]) &&
           segment_equal(&a->s[1], &b->s[1]);
}

double pmnf_segfn_eval(const pmnf_segfn *s, double x)
{
    return segment_eval(&s->s[x <= s->upto ? 0 : 1], x);
}

double pmnf_term_shape(const pmnf_function *f, const pmnf_term *t, const double *point)
{
    double v = 1.0;
    for (int i = 0; i < t->nfactors; i++) {
        int p = t->factors[i].param;
        double x = point[p];
        v *= f->segmented & (1u << p) ? pmnf_segfn_eval(&f->seg[p], x)
                                      : pmnf_factor_eval(&t->factors[i], x);
    }
    return v;
}

double pmnf_term_eval(const pmnf_function *f, const pmnf_term *t, const double *point)
{
    return t->coef * pmnf_term_shape(f, t, point);
}

double pmnf_eval(const pmnf_function *f, const double *point)
{
    double v = f->constant;
    for (int i = 0; i < f->nterms; i++)
        v += pmnf_term_eval(f, &f->terms[i], point);
    return v;
}

void pmnf_set_segmented(pmnf_function *f, int p, const pmnf_segfn *s)
{
    int used = 0;
    for (int t = 0; t < f->nterms; t++)
        for (int k = 0; k < f->terms[t].nfactors; k++)
            if (f->terms[t].factors[k].param == p) {
                f->terms[t].factors[k].poly = s->s[1].nterms ? s->s[1].poly : 0;
                f->terms[t].factors[k].log = s->s[1].nterms ? s->s[1].log : 0;
                used = 1;
            }
    if (used) {
        f->segmented |= 1u << p;
        f->seg[p] = *s;
    } else {
        f->segmented &= ~(1u << p);
        f->seg[p] = (pmnf_segfn){0};
    }
}

void pmnf_term_exponents(const pmnf_term *t, int param, double *poly, double *log)
{
    *poly = 0;
    *log = 0;
    for (int i = 0; i < t->nfactors; i++) {
        if (t->factors[i].param == param) {
            *poly = t->factors[i].poly;
            *log = t->factors[i].log;
        }
    }
}

/* ---- printing ---------------------------------------------------------- */

void pmnf_format_double(double v, char *buf)
{
    numtext_format_shortest(v, buf);
}

void pmnf_format_exponent(double e, char *buf)
{
    for (int den = 1; den <= 12; den++) {
        double num = e * den;
        if (fabs(num - nearbyint(num)) < 1e-9 && fabs(num) < 1e6) {
            long n = lrint(num);
            if (den == 1)
                sprintf(buf, "%ld", n);
            else
                sprintf(buf, "%ld/%d", n, den);
            return;
        }
    }
    pmnf_format_double(e, buf);
}

/* Appends s to buf (cap bytes), tracking the length the whole output needs. */
static void append(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len < cap) {
        size_t room = cap - *len - 1;
        size_t k = n < room ? n : room;
        memcpy(buf + *len, s, k);
        buf[*len + k] = '\0';
    }
    *len += n;
}

static void append_factor(char *buf, size_t cap, size_t *len, const pmnf_factor *f,
                          const char *name, int *first)
{
    char num[40];
    if (f->poly != 0) {
        if (!*first)
            append(buf, cap, len, " * ");
        *first = 0;
        pmnf_format_exponent(f->poly, num);
        append(buf, cap, len, name);
        append(buf, cap, len, "^(");
        append(buf, cap, len, num);
        append(buf, cap, len, ")");
    }
    if (f->log != 0) {
        if (!*first)
            append(buf, cap, len, " * ");
        *first = 0;
        pmnf_format_exponent(f->log, num);
        append(buf, cap, len, "log2(");
        append(buf, cap, len, name);
        append(buf, cap, len, ")^(");
        append(buf, cap, len, num);
        append(buf, cap, len, ")");
    }
}

/* A segment as Extra-P prints its function: a one-term function of name. */
static void append_segment(char *buf, size_t cap, size_t *len, const pmnf_segment *g,
                           const char *name)
{
    pmnf_function one = {.nparams = 1, .constant = g->constant, .nterms = g->nterms};
    one.terms[0] = (pmnf_term){.coef = g->coef, .nfactors = 1, .factors = {{0, g->poly, g->log}}};
    const char *names[1] = {name};
    size_t need = pmnf_format(&one, names, NULL, 0);
    if (*len < cap)
        pmnf_format(&one, names, buf + *len, cap - *len);
    *len += need;
}

/* "{f for x<=a; g for x>=b}" */
static void append_segmented(char *buf, size_t cap, size_t *len, const pmnf_segfn *s,
                             const char *name, int *first)
{
    char num[40];
    if (!*first)
        append(buf, cap, len, " * ");
    *first = 0;
    append(buf, cap, len, "{");
    for (int k = 0; k < 2; k++) {
        append_segment(buf, cap, len, &s->s[k], name);
        append(buf, cap, len, " for ");
        append(buf, cap, len, name);
        append(buf, cap, len, k ? ">=" : "<=");
        pmnf_format_double(k ? s->from : s->upto, num);
        append(buf, cap, len, num);
        append(buf, cap, len, k ? "}" : "; ");
    }
}

size_t pmnf_format(const pmnf_function *f, const char *const *names, char *buf, size_t cap)
{
    size_t len = 0;
    char num[40];
    int first_term = 1;
    if (cap > 0)
        buf[0] = '\0';
    if (f->constant != 0 || f->nterms == 0) {
        pmnf_format_double(f->constant, num);
        append(buf, cap, &len, num);
        first_term = 0;
    }
    for (int i = 0; i < f->nterms; i++) {
        const pmnf_term *t = &f->terms[i];
        int first = 1;
        if (!first_term)
            append(buf, cap, &len, " + ");
        first_term = 0;
        if (t->coef != 1 || t->nfactors == 0) {
            pmnf_format_double(t->coef, num);
            append(buf, cap, &len, num);
            first = 0;
        }
        for (int k = 0; k < t->nfactors; k++) {
            int p = t->factors[k].param;
            if (f->segmented & (1u << p))
                append_segmented(buf, cap, &len, &f->seg[p], names[p], &first);
            else
                append_factor(buf, cap, &len, &t->factors[k], names[p], &first);
        }
    }
    return len;
}

char *pmnf_format_dup(const pmnf_function *f, const char *const *names)
{
    size_t need = pmnf_format(f, names, NULL, 0) + 1;
    char *text = malloc(need);
    if (text)
        pmnf_format(f, names, text, need);
    return text;
}

/* ---- parsing ----------------------------------------------------------- */

typedef struct parser {
    const char *s;
    const char *p;
    const char *const *names;
    int nnames;
    char *err;
    size_t errcap;
    pmnf_function *out; /* where segmented factors go (NULL inside a segment) */
    unsigned term_params; /* parameters the current term has a factor of */
} parser;

static int parse_function(parser *ps, pmnf_function *out);

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

static int fail(parser *ps, const char *what)
{
    snprintf(ps->err, ps->errcap, "at offset %ld: %s", (long)(ps->p - ps->s), what);
    return -1;
}

static int accept(parser *ps, const char *tok)
{
    skip_space(ps);
    size_t n = strlen(tok);
    if (strncmp(ps->p, tok, n) == 0) {
        ps->p += n;
        return 1;
    }
    return 0;
}

static int parse_number(parser *ps, double *v)
{
    skip_space(ps);
    char *end;
    *v = strtod(ps->p, &end);
    if (end == ps->p)
        return fail(ps, "expected a number");
    ps->p = end;
    return 0;
}

/* "(3/2)" or "(2)" or "(-1/4)" or "(0.5)" */
static int parse_exponent(parser *ps, double *v)
{
    double num, den = 1;
    if (!accept(ps, "("))
        return fail(ps, "expected '(' before an exponent");
    if (parse_number(ps, &num) < 0)
        return -1;
    if (accept(ps, "/") && parse_number(ps, &den) < 0)
        return -1;
    if (!accept(ps, ")"))
        return fail(ps, "expected ')' after an exponent");
    if (den == 0)
        return fail(ps, "zero denominator");
    *v = num / den;
    return 0;
}

static int parse_name(parser *ps, int *param)
{
    skip_space(ps);
    const char *start = ps->p;
    while (isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '.')
        ps->p++;
    size_t n = (size_t)(ps->p - start);
    for (int i = 0; i < ps->nnames; i++) {
        if (strlen(ps->names[i]) == n && strncmp(ps->names[i], start, n) == 0) {
            *param = i;
            return 0;
        }
    }
    ps->p = start;
    return fail(ps, "unknown parameter name");
}

static pmnf_factor *factor_for(pmnf_term *t, int param)
{
    for (int i = 0; i < t->nfactors; i++)
        if (t->factors[i].param == param)
            return &t->factors[i];
    int at = t->nfactors;
    while (at > 0 && t->factors[at - 1].param > param) {
        t->factors[at] = t->factors[at - 1];
        at--;
    }
    t->nfactors++;
    t->factors[at] = (pmnf_factor){.param = param};
    return &t->factors[at];
}

#define SEGMENT_TEXT_MAX 1024

/* One segment "f for name<=a" (lower) or "f for name>=b", text [a, b). */
static int parse_segment(parser *ps, const char *a, const char *b, int upper, int *param,
                         pmnf_segment *g, double *bound)
{
    const char *at = NULL;
    for (const char *q = a; q + 5 <= b; q++)
        if (!strncmp(q, " for ", 5))
            at = q;
    if (!at || at - a >= SEGMENT_TEXT_MAX)
        return fail(ps, "expected \"f for name<=a; g for name>=b\" in a segmented factor");
    ps->p = at + 5;
    if (parse_name(ps, param) < 0)
        return -1;
    if (!accept(ps, upper ? ">=" : "<="))
        return fail(ps, upper ? "expected '>=' in a segmented factor"
                              : "expected '<=' in a segmented factor");
    if (parse_number(ps, bound) < 0)
        return -1;
    skip_space(ps);
    if (ps->p != b)
        return fail(ps, "unexpected text after a segment's bound");
    char text[SEGMENT_TEXT_MAX], err[128];
    memcpy(text, a, (size_t)(at - a));
    text[at - a] = '\0';
    const char *names[1] = {ps->names[*param]};
    pmnf_function one;
    parser sub = {text, text, names, 1, err, sizeof err, NULL, 0};
    if (parse_function(&sub, &one) < 0) {
        ps->p = a + (sub.p - text);
        return fail(ps, err);
    }
    if (one.nterms > 1 || (one.nterms == 1 && one.terms[0].nfactors != 1)) {
        ps->p = a;
        return fail(ps, "a segment is a constant and at most one term of its parameter");
    }
    *g = (pmnf_segment){.constant = one.constant, .nterms = one.nterms};
    if (one.nterms) {
        g->coef = one.terms[0].coef;
        g->poly = one.terms[0].factors[0].poly;
        g->log = one.terms[0].factors[0].log;
    }
    return 0;
}

/* "{f for x<=a; g for x>=b}", the '{' read: parameter x's factor of t. */
static int parse_segmented(parser *ps, pmnf_term *t)
{
    const char *a = ps->p, *close = strchr(a, '}'), *semi = NULL;
    if (!ps->out)
        return fail(ps, "a segmented factor inside a segment");
    for (const char *q = a; close && q + 1 < close; q++)
        if (q[0] == ';' && q[1] == ' ')
            semi = q;
    if (!close || !semi)
        return fail(ps, "expected \"f for name<=a; g for name>=b}\"");
    pmnf_segfn s;
    int p0, p1;
    if (parse_segment(ps, a, semi, 0, &p0, &s.s[0], &s.upto) < 0 ||
        parse_segment(ps, semi + 2, close, 1, &p1, &s.s[1], &s.from) < 0)
        return -1;
    ps->p = close + 1;
    if (p0 != p1)
        return fail(ps, "the segments of a segmented factor name two parameters");
    if (!(s.upto <= s.from))
        return fail(ps, "a segmented factor's bounds are out of order");
    if (ps->term_params & (1u << p0))
        return fail(ps, "a term has two factors of one parameter");
    if ((ps->out->segmented & (1u << p0)) && !pmnf_segfn_equal(&ps->out->seg[p0], &s))
        return fail(ps, "two different segmented factors of one parameter");
    ps->out->segmented |= 1u << p0;
    ps->out->seg[p0] = s;
    ps->term_params |= 1u << p0;
    factor_for(t, p0);
    return 0;
}

/* One factor: a number, "name^(e)", "name", "log2(name)^(e)" or a
 * segmented factor "{...}". */
static int parse_factor(parser *ps, pmnf_term *t, int *has_factor)
{
    int param;
    double e = 1;
    skip_space(ps);
    if (accept(ps, "{")) {
        if (parse_segmented(ps, t) < 0)
            return -1;
        *has_factor = 1;
        return 0;
    }
    if (isdigit((unsigned char)*ps->p) || *ps->p == '-' || *ps->p == '.' || *ps->p == '+') {
        double v;
        if (parse_number(ps, &v) < 0)
            return -1;
        t->coef *= v;
        return 0;
    }
    if (accept(ps, "log2(")) {
        if (parse_name(ps, &param) < 0)
            return -1;
        if (!accept(ps, ")"))
            return fail(ps, "expected ')' after log2(name");
        if (accept(ps, "^") && parse_exponent(ps, &e) < 0)
            return -1;
        if (ps->out && (ps->out->segmented & (1u << param)) && (ps->term_params & (1u << param)))
            return fail(ps, "a term has two factors of one parameter");
        factor_for(t, param)->log += e;
    } else {
        if (parse_name(ps, &param) < 0)
            return -1;
        if (accept(ps, "^") && parse_exponent(ps, &e) < 0)
            return -1;
        if (ps->out && (ps->out->segmented & (1u << param)) && (ps->term_params & (1u << param)))
            return fail(ps, "a term has two factors of one parameter");
        factor_for(t, param)->poly += e;
    }
    ps->term_params |= 1u << param;
    *has_factor = 1;
    return 0;
}

static int parse_function(parser *ps, pmnf_function *out)
{
    memset(out, 0, sizeof *out);
    out->nparams = ps->nnames;
    double sign = 1;
    for (;;) {
        pmnf_term t = {.coef = sign};
        int has_factor = 0;
        ps->term_params = 0;
        do {
            if (parse_factor(ps, &t, &has_factor) < 0)
                return -1;
        } while (accept(ps, "*"));
        if (!has_factor) {
            out->constant += t.coef;
        } else {
            if (out->nterms == PMNF_MAX_TERMS)
                return fail(ps, "too many terms");
            out->terms[out->nterms++] = t;
        }
        skip_space(ps);
        if (*ps->p == '\0')
            break;
        if (accept(ps, "+"))
            sign = 1;
        else if (accept(ps, "-"))
            sign = -1;
        else
            return fail(ps, "expected '+', '*' or the end");
    }
    for (int p = 0; p < out->nparams; p++)
        if (out->segmented & (1u << p))
            pmnf_set_segmented(out, p, &out->seg[p]);
    return 0;
}

int pmnf_parse(const char *s, const char *const *names, int nnames, pmnf_function *out,
               char *err, size_t errcap)
{
    parser ps = {s, s, names, nnames, err, errcap, out, 0};
    return parse_function(&ps, out);
}
