/*
 * expr.h — small arithmetic expressions over an experiment's parameters, for
 * the data-parallel and model-parallel degrees G and M ("ranks", "ranks/4",
 * "4", "nodes*gpus_per_node").
 *
 * Grammar: numbers (12, 0.5, 1e3), parameter names ([A-Za-z_][A-Za-z0-9_]*),
 * binary + - * / and ^ (power, right-associative, binding tighter than unary
 * minus: -2^2 is -4), unary minus and plus, parentheses; spaces anywhere
 * between tokens. An expression is compiled once, when the experiment is
 * created, against the parameter names; compiling checks everything that can
 * be checked without values and reports the byte offset of a fault. The
 * compiled form is a fixed-size postfix program held by value: no allocation
 * anywhere, evaluation uses only the C stack, no globals.
 */
#ifndef PERFCAST_EXPR_H
#define PERFCAST_EXPR_H

#include <stddef.h>

#define EXPR_MAX_TEXT 256 /* bytes of expression text, excluding the NUL */
#define EXPR_MAX_DEPTH 32 /* nesting of parentheses and unary operators */

typedef struct expr_op {
    int code;   /* internal: number, parameter or operator */
    int param;  /* index into the names given to expr_compile */
    double num;
} expr_op;

typedef struct expr {
    int nops;
    expr_op ops[EXPR_MAX_TEXT]; /* postfix; every op comes from at least one byte */
} expr;

/* Compiles text (NUL-terminated) against names[0..nnames). Returns 0, or -1
 * with a message in err (errcap bytes, always terminated when errcap > 0)
 * such as "offset 6: unknown parameter \"nodes\"" or "offset 5: expected a
 * number, a parameter or '('"; out is zeroed on error. */
int expr_compile(const char *text, const char *const *names, int nnames, expr *out, char *err,
                 size_t errcap);

/* Evaluates e with values[i] for names[i]. Returns 0 and *out, or -1 when the
 * result is not a finite number (division by zero, overflow, a negative base
 * under a fractional power). */
int expr_eval(const expr *e, const double *values, double *out);

/* 1 when e reads parameter i (e.g. to tell which parameters G depends on). */
int expr_uses(const expr *e, int param);

#endif
