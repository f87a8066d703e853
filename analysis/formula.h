/*
 * formula.h — an experiment's cost formula (`cost.formula`): money per epoch
 * as an expression over
 *
 *   T                    predicted seconds per epoch
 *   ranks                ranks of the configuration (data_parallel × model_parallel)
 *   cores_per_rank       the experiment's ρ
 *   price_per_core_hour  the experiment's price
 *   <parameter names>    the configuration's coordinates (a parameter named
 *                        like one of the above takes its place; T is always
 *                        the time)
 *
 * e.g. "T*ranks*(8*0.02 + 0.9)/3600" when GPUs are billed apart from cores.
 * Parsed and evaluated by GNU libmatheval (numbers, + - * / ^, parentheses,
 * its functions: sqrt, exp, log, ...). Its parser is not reentrant: compiling
 * takes a process-wide lock; a compiled formula belongs to one thread.
 */
#ifndef PERFCAST_ANALYSIS_FORMULA_H
#define PERFCAST_ANALYSIS_FORMULA_H

#include <stddef.h>

#include "modeling/pmnf.h"

#define FORMULA_MAX_TEXT 512
#define FORMULA_BUILTINS 4 /* T, ranks, cores_per_rank, price_per_core_hour */
#define FORMULA_MAX_VARS (FORMULA_BUILTINS + PMNF_MAX_PARAMS)

typedef struct formula {
    void *ev;                           /* libmatheval evaluator */
    int nvars;
    char *names[FORMULA_MAX_VARS];      /* into namebuf */
    int source[FORMULA_MAX_VARS];       /* < 0: builtin -1-k, else parameter index */
    char namebuf[FORMULA_MAX_VARS * 72];
} formula;

/* Compiles text against the experiment's parameter names. Returns 0, or -1
 * with a message in err: empty or too long, a syntax error, or a variable
 * that is none of the above (named). */
int formula_compile(const char *text, const char *const *params, int nparams, formula *out,
                    char *err, size_t errcap);

/* Money per epoch at (T, ranks, point); may be non-finite (1/0). */
double formula_eval(formula *f, double t, double ranks, double cores_per_rank, double price,
                    const double *point);

void formula_free(formula *f);

#endif
