/*
 * expr.c — compiler and evaluator of the parameter expressions of expr.h.
 *
 * A recursive-descent parser (sum -> product -> unary -> power -> primary)
 * emits a postfix program into the fixed-size expr; recursion is bounded by
 * EXPR_MAX_DEPTH and the program by the text length, so neither untrusted
 * text nor a crafted expression can exhaust the stack or the heap. Numbers
 * are read with common/numtext (C locale, correctly rounded). Evaluation is
 * a loop over the program with a stack of doubles on the C stack; any
 * non-finite intermediate result fails the evaluation, so 1/(1/0) is an error
 * rather than 0.
 */
#include "modeling/expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/numtext.h"

enum { OP_NUM = 1, OP_PARAM, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_NEG };

typedef struct parser {
    const char *s;
    size_t len, pos;
    const char *const *names;
    int nnames;
    int depth;
    expr *out;
    char *err;
    size_t errcap;
} parser;

static int fail_at(parser *p, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_at(parser *p, size_t offset, const char *fmt, ...)
{
    if (p->errcap > 0) {
        int n = snprintf(p->err, p->errcap, "offset %zu: ", offset);
        if (n >= 0 && (size_t)n < p->errcap) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(p->err + n, p->errcap - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static void skip_space(parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t'))
        p->pos++;
}

static char peek(parser *p)
{
    skip_space(p);
    return p->pos < p->len ? p->s[p->pos] : '\0';
}

static int emit(parser *p, int code, int param, double num)
{
    if (p->out->nops >= EXPR_MAX_TEXT) /* cannot happen: one op per byte at most */
        return fail_at(p, p->pos, "expression too long");
    p->out->ops[p->out->nops++] = (expr_op){.code = code, .param = param, .num = num};
    return 0;
}

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static int parse_sum(parser *p);
static int parse_unary(parser *p);

static int parse_number(parser *p)
{
    double v;
    size_t start = p->pos;
    size_t used = numtext_parse(p->s + start, p->len - start, &v);
    if (used == 0)
        return fail_at(p, start, "expected a number");
    if (!isfinite(v))
        return fail_at(p, start, "number out of range");
    p->pos += used;
    return emit(p, OP_NUM, 0, v);
}

static int parse_name(parser *p)
{
    size_t start = p->pos;
    while (p->pos < p->len && is_name_char(p->s[p->pos]))
        p->pos++;
    size_t n = p->pos - start;
    for (int i = 0; i < p->nnames; i++)
        if (p->names[i] && strncmp(p->names[i], p->s + start, n) == 0 && p->names[i][n] == '\0')
            return emit(p, OP_PARAM, i, 0);
    return fail_at(p, start, "unknown parameter \"%.*s\"", (int)n, p->s + start);
}

static int parse_primary(parser *p)
{
    char c = peek(p);
    if ((c >= '0' && c <= '9') || c == '.')
        return parse_number(p);
    if (is_name_start(c))
        return parse_name(p);
    if (c == '(') {
        size_t open = p->pos++;
        if (parse_sum(p) < 0)
            return -1;
        if (peek(p) != ')')
            return fail_at(p, p->pos, "expected ')' to close the '(' at offset %zu", open);
        p->pos++;
        return 0;
    }
    if (c == '\0')
        return fail_at(p, p->pos, "expected a number, a parameter or '(' before the end");
    return fail_at(p, p->pos, "expected a number, a parameter or '(' at '%c'", c);
}

/* primary ['^' unary]: right-associative, and 2^-1 is allowed. */
static int parse_power(parser *p)
{
    if (parse_primary(p) < 0)
        return -1;
    if (peek(p) != '^')
        return 0;
    p->pos++;
    if (parse_unary(p) < 0)
        return -1;
    return emit(p, OP_POW, 0, 0);
}

/* Every nesting (parentheses, unary signs, the exponent of ^) goes through
 * here, so the depth counted here bounds the recursion. */
static int parse_unary(parser *p)
{
    int rc;
    if (++p->depth > EXPR_MAX_DEPTH)
        return fail_at(p, p->pos, "nested deeper than %d", EXPR_MAX_DEPTH);
    char c = peek(p);
    if (c == '-' || c == '+') {
        p->pos++;
        rc = parse_unary(p);
        if (rc == 0 && c == '-')
            rc = emit(p, OP_NEG, 0, 0);
    } else {
        rc = parse_power(p);
    }
    p->depth--;
    return rc;
}

static int parse_product(parser *p)
{
    if (parse_unary(p) < 0)
        return -1;
    for (;;) {
        char c = peek(p);
        if (c != '*' && c != '/')
            return 0;
        p->pos++;
        if (parse_unary(p) < 0 || emit(p, c == '*' ? OP_MUL : OP_DIV, 0, 0) < 0)
            return -1;
    }
}

static int parse_sum(parser *p)
{
    if (parse_product(p) < 0)
        return -1;
    for (;;) {
        char c = peek(p);
        if (c != '+' && c != '-')
            return 0;
        p->pos++;
        if (parse_product(p) < 0 || emit(p, c == '+' ? OP_ADD : OP_SUB, 0, 0) < 0)
            return -1;
    }
}

int expr_compile(const char *text, const char *const *names, int nnames, expr *out, char *err,
                 size_t errcap)
{
    parser p = {.s = text, .names = names, .nnames = nnames, .out = out, .err = err,
                .errcap = errcap};
    memset(out, 0, sizeof(*out));
    if (errcap > 0)
        err[0] = '\0';
    p.len = strnlen(text, EXPR_MAX_TEXT + 1);
    int rc;
    if (p.len > EXPR_MAX_TEXT)
        rc = fail_at(&p, EXPR_MAX_TEXT, "expression longer than %d bytes", EXPR_MAX_TEXT);
    else if (peek(&p) == '\0')
        rc = fail_at(&p, p.pos, "empty expression");
    else if ((rc = parse_sum(&p)) == 0 && peek(&p) != '\0')
        rc = fail_at(&p, p.pos, "expected an operator or the end at '%c'", p.s[p.pos]);
    if (rc < 0)
        memset(out, 0, sizeof(*out));
    return rc;
}

/* One operator applied to the top of the stack; -1 when not finite. */
static int apply(int code, double a, double b, double *r)
{
    switch (code) {
    case OP_ADD: *r = a + b; break;
    case OP_SUB: *r = a - b; break;
    case OP_MUL: *r = a * b; break;
    case OP_DIV: *r = a / b; break;
    case OP_POW: *r = pow(a, b); break;
    default: return -1;
    }
    return isfinite(*r) ? 0 : -1;
}

int expr_eval(const expr *e, const double *values, double *out)
{
    double st[EXPR_MAX_TEXT];
    int sp = 0;
    if (e->nops < 1 || e->nops > EXPR_MAX_TEXT)
        return -1;
    for (int i = 0; i < e->nops; i++) {
        const expr_op *op = &e->ops[i];
        if (op->code == OP_NUM || op->code == OP_PARAM) {
            double v = op->code == OP_NUM ? op->num : values[op->param];
            if (!isfinite(v))
                return -1;
            st[sp++] = v;
        } else if (op->code == OP_NEG) {
            if (sp < 1)
                return -1;
            st[sp - 1] = -st[sp - 1];
        } else {
            if (sp < 2 || apply(op->code, st[sp - 2], st[sp - 1], &st[sp - 2]) < 0)
                return -1;
            sp--;
        }
    }
    if (sp != 1)
        return -1;
    *out = st[0];
    return 0;
}

int expr_uses(const expr *e, int param)
{
    for (int i = 0; i < e->nops && i < EXPR_MAX_TEXT; i++)
        if (e->ops[i].code == OP_PARAM && e->ops[i].param == param)
            return 1;
    return 0;
}
