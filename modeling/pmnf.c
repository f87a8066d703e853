/*
 * pmnf.c — evaluating, printing and parsing PMNF functions (see pmnf.h).
 *
 * Printing follows Extra-P 4.2.5 exactly: coefficients as Python's repr()
 * prints a float, exponents as Extra-P's Fraction prints them, a coefficient
 * of exactly 1 left out, a constant of exactly 0 left out unless the function
 * has no terms, terms joined by " + " even when the coefficient is negative.
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

double pmnf_term_shape(const pmnf_term *t, const double *point)
{
    double v = 1.0;
    for (int i = 0; i < t->nfactors; i++)
        v *= pmnf_factor_eval(&t->factors[i], point[t->factors[i].param]);
    return v;
}

double pmnf_term_eval(const pmnf_term *t, const double *point)
{
    return t->coef * pmnf_term_shape(t, point);
}

double pmnf_eval(const pmnf_function *f, const double *point)
{
    double v = f->constant;
    for (int i = 0; i < f->nterms; i++)
        v += pmnf_term_eval(&f->terms[i], point);
    return v;
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
        for (int k = 0; k < t->nfactors; k++)
            append_factor(buf, cap, &len, &t->factors[k], names[t->factors[k].param], &first);
    }
    return len;
}

/* ---- parsing ----------------------------------------------------------- */

typedef struct parser {
    const char *s;
    const char *p;
    const char *const *names;
    int nnames;
    char *err;
    size_t errcap;
} parser;

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

/* One factor: a number, "name^(e)", "name" or "log2(name)^(e)". */
static int parse_factor(parser *ps, pmnf_term *t, int *has_factor)
{
    int param;
    double e = 1;
    skip_space(ps);
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
        factor_for(t, param)->log += e;
    } else {
        if (parse_name(ps, &param) < 0)
            return -1;
        if (accept(ps, "^") && parse_exponent(ps, &e) < 0)
            return -1;
        factor_for(t, param)->poly += e;
    }
    *has_factor = 1;
    return 0;
}

int pmnf_parse(const char *s, const char *const *names, int nnames, pmnf_function *out,
               char *err, size_t errcap)
{
    parser ps = {s, s, names, nnames, err, errcap};
    memset(out, 0, sizeof *out);
    out->nparams = nnames;
    double sign = 1;
    for (;;) {
        pmnf_term t = {.coef = sign};
        int has_factor = 0;
        do {
            if (parse_factor(&ps, &t, &has_factor) < 0)
                return -1;
        } while (accept(&ps, "*"));
        if (!has_factor) {
            out->constant += t.coef;
        } else {
            if (out->nterms == PMNF_MAX_TERMS)
                return fail(&ps, "too many terms");
            out->terms[out->nterms++] = t;
        }
        skip_space(&ps);
        if (*ps.p == '\0')
            return 0;
        if (accept(&ps, "+"))
            sign = 1;
        else if (accept(&ps, "-"))
            sign = -1;
        else
            return fail(&ps, "expected '+', '*' or the end");
    }
}
