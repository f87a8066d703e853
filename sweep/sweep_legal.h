/*
 * sweep_legal.h — a sweep's legality rule: which points of the Cartesian
 * product of the varying values are run at all (paper 003 §2.1: e.g. the
 * global batch must fit, `batch_size * ranks <= 65536`).
 *
 * Grammar: comparisons joined by && and || (&& binds tighter; no
 * parentheses around comparisons), each comparison two arithmetic
 * expressions of modeling/expr.h (numbers, names, + - * / ^, parentheses)
 * around one of < <= > >= == !=. Names are the sweep's numeric parameters
 * and constants. Faults are reported with the byte offset in the whole
 * text. A point where a side cannot be evaluated (division by zero) is not
 * legal. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SWEEP_LEGAL_H
#define PERFCAST_SWEEP_LEGAL_H

#include <stddef.h>

#include "modeling/expr.h"

#define SWEEP_LEGAL_MAX_CLAUSES 32
#define SWEEP_LEGAL_MAX_TEXT 2048

typedef struct sweep_clause {
    expr lhs, rhs;
    int op;        /* SWEEP_LT, ... */
    int or_before; /* 1: a new || group starts here */
} sweep_clause;

enum { SWEEP_LT = 1, SWEEP_LE, SWEEP_GT, SWEEP_GE, SWEEP_EQ, SWEEP_NE };

typedef struct sweep_legal {
    int nclauses;
    sweep_clause *clauses; /* owned */
} sweep_legal;

/* Compiles text against names[0..nnames). 0, or -1 with "offset N: ..." in
 * err; *out is then empty (nothing to free). */
int sweep_legal_compile(const char *text, const char *const *names, int nnames, sweep_legal *out,
                        char *err, size_t errcap);
/* 1 when the rule holds with values[i] for names[i], else 0. */
int sweep_legal_eval(const sweep_legal *l, const double *values);
void sweep_legal_free(sweep_legal *l);

#endif
