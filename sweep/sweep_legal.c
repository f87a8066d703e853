/*
 * sweep_legal.c — compiles and evaluates legality rules (sweep_legal.h):
 * the text is cut at top-level && and || into comparisons, each cut at its
 * one top-level comparison operator, each side compiled by modeling/expr.c.
 */
#include "sweep/sweep_legal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* expr's "offset N: ..." for a piece starting at base, as an offset in the whole text */
static void shift_error(const char *piece_err, size_t base, char *err, size_t errcap)
{
    size_t off;
    int used = 0;
    if (sscanf(piece_err, "offset %zu: %n", &off, &used) == 1 && used > 0)
        snprintf(err, errcap, "offset %zu: %s", off + base, piece_err + used);
    else
        snprintf(err, errcap, "offset %zu: %s", base, piece_err);
}

static int compile_side(const char *text, size_t a, size_t b, const char *const *names,
                        int nnames, expr *out, char *err, size_t errcap)
{
    char piece[EXPR_MAX_TEXT + 1], perr[200];
    if (b - a > EXPR_MAX_TEXT) {
        snprintf(err, errcap, "offset %zu: a side of a comparison is longer than %d bytes", a,
                 EXPR_MAX_TEXT);
        return -1;
    }
    memcpy(piece, text + a, b - a);
    piece[b - a] = '\0';
    if (expr_compile(piece, names, nnames, out, perr, sizeof perr) < 0) {
        shift_error(perr, a, err, errcap);
        return -1;
    }
    return 0;
}

/* The one comparison operator at depth 0 in [a, b): its position, length and code. */
static int find_op(const char *t, size_t a, size_t b, size_t *at, size_t *len, int *op,
                   char *err, size_t errcap)
{
    int depth = 0, found = 0;
    for (size_t i = a; i < b; i++) {
        char c = t[i], d = i + 1 < b ? t[i + 1] : '\0';
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        if (depth != 0 || !strchr("<>=!", c))
            continue;
        int code = 0;
        size_t l = 1;
        if (c == '<')
            code = d == '=' ? (l = 2, SWEEP_LE) : SWEEP_LT;
        else if (c == '>')
            code = d == '=' ? (l = 2, SWEEP_GE) : SWEEP_GT;
        else if (c == '=' && d == '=')
            code = SWEEP_EQ, l = 2;
        else if (c == '!' && d == '=')
            code = SWEEP_NE, l = 2;
        else {
            snprintf(err, errcap, "offset %zu: '%c' is no comparison (use <, <=, >, >=, == or !=)",
                     i, c);
            return -1;
        }
        if (found) {
            snprintf(err, errcap,
                     "offset %zu: a second comparison; join comparisons with && or ||", i);
            return -1;
        }
        found = 1;
        *at = i;
        *len = l;
        *op = code;
        i += l - 1;
    }
    if (!found) {
        snprintf(err, errcap, "offset %zu: expected a comparison (<, <=, >, >=, == or !=)", a);
        return -1;
    }
    return 0;
}

int sweep_legal_compile(const char *text, const char *const *names, int nnames, sweep_legal *out,
                        char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    size_t n = strlen(text);
    if (n > SWEEP_LEGAL_MAX_TEXT) {
        snprintf(err, errcap, "offset 0: longer than %d bytes", SWEEP_LEGAL_MAX_TEXT);
        return -1;
    }
    out->clauses = calloc(SWEEP_LEGAL_MAX_CLAUSES, sizeof *out->clauses);
    if (!out->clauses) {
        snprintf(err, errcap, "offset 0: out of memory");
        return -1;
    }
    size_t start = 0;
    int depth = 0, or_next = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? text[i] : '\0';
        if (c == '(')
            depth++;
        else if (c == ')')
            depth--;
        int cut = i == n || (depth == 0 && (c == '&' || c == '|') && text[i + 1] == c);
        if (!cut)
            continue;
        if (out->nclauses == SWEEP_LEGAL_MAX_CLAUSES) {
            snprintf(err, errcap, "offset %zu: more than %d comparisons", start,
                     SWEEP_LEGAL_MAX_CLAUSES);
            goto fail;
        }
        sweep_clause *cl = &out->clauses[out->nclauses];
        size_t at, len;
        if (find_op(text, start, i, &at, &len, &cl->op, err, errcap) < 0 ||
            compile_side(text, start, at, names, nnames, &cl->lhs, err, errcap) < 0 ||
            compile_side(text, at + len, i, names, nnames, &cl->rhs, err, errcap) < 0)
            goto fail;
        cl->or_before = or_next;
        out->nclauses++;
        or_next = c == '|';
        start = i + 2;
        i++;
    }
    return 0;
fail:
    sweep_legal_free(out);
    return -1;
}

static int holds(const sweep_clause *c, const double *values)
{
    double a, b;
    if (expr_eval(&c->lhs, values, &a) < 0 || expr_eval(&c->rhs, values, &b) < 0)
        return 0;
    switch (c->op) {
    case SWEEP_LT: return a < b;
    case SWEEP_LE: return a <= b;
    case SWEEP_GT: return a > b;
    case SWEEP_GE: return a >= b;
    case SWEEP_EQ: return a == b;
    default: return a != b;
    }
}

int sweep_legal_eval(const sweep_legal *l, const double *values)
{
    if (l->nclauses == 0)
        return 1;
    int group = 1; /* the current && group */
    for (int i = 0; i < l->nclauses; i++) {
        if (l->clauses[i].or_before) {
            if (group)
                return 1;
            group = 1;
        }
        group = group && holds(&l->clauses[i], values);
    }
    return group;
}

void sweep_legal_free(sweep_legal *l)
{
    free(l->clauses);
    memset(l, 0, sizeof *l);
}
