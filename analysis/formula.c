/*
 * formula.c — cost formulas compiled by libmatheval (see formula.h).
 *
 * libmatheval builds its tree with a bison parser over globals, so
 * evaluator_create runs under one process-wide mutex; evaluation writes the
 * variables' values into the evaluator's own symbol table, so an evaluator
 * is used by one thread at a time (each request compiles its own: a few
 * microseconds). The variables a formula uses are checked against the
 * allowed names at compile time: libmatheval itself would give an unknown
 * variable an undetermined value.
 */
#include "analysis/formula.h"

#include <matheval.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t parser_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const builtins[FORMULA_BUILTINS] = {"T", "ranks", "cores_per_rank",
                                                       "price_per_core_hour"};

/* Where a variable's value comes from: -1-k for builtin k, a parameter
 * index, or -1000 when unknown. A parameter shadows a builtin other than T. */
static int resolve(const char *name, const char *const *params, int nparams)
{
    if (!strcmp(name, "T"))
        return -1;
    for (int i = 0; i < nparams; i++)
        if (!strcmp(name, params[i]))
            return i;
    for (int k = 1; k < FORMULA_BUILTINS; k++)
        if (!strcmp(name, builtins[k]))
            return -1 - k;
    return -1000;
}

int formula_compile(const char *text, const char *const *params, int nparams, formula *out,
                    char *err, size_t errcap)
{
    memset(out, 0, sizeof *out);
    size_t len = strlen(text);
    if (len == 0 || len > FORMULA_MAX_TEXT) {
        snprintf(err, errcap, "must be 1 to %d characters", FORMULA_MAX_TEXT);
        return -1;
    }
    char *copy = strdup(text); /* libmatheval takes a char * */
    if (!copy) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    pthread_mutex_lock(&parser_lock);
    void *ev = evaluator_create(copy);
    pthread_mutex_unlock(&parser_lock);
    free(copy);
    if (!ev) {
        snprintf(err, errcap,
                 "not an expression libmatheval can read: \"%.80s\" (numbers, variables, + - * / "
                 "^, parentheses and functions such as sqrt(), log(), exp())",
                 text);
        return -1;
    }
    char **names;
    int count;
    evaluator_get_variables(ev, &names, &count);
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        int src = resolve(names[i], params, nparams);
        size_t nlen = strlen(names[i]);
        if (src == -1000 || out->nvars == FORMULA_MAX_VARS ||
            used + nlen + 1 > sizeof out->namebuf) {
            snprintf(err, errcap,
                     "unknown variable \"%.64s\": a formula may use T (seconds per epoch), ranks, "
                     "cores_per_rank, price_per_core_hour and the experiment's parameters",
                     names[i]);
            pthread_mutex_lock(&parser_lock);
            evaluator_destroy(ev);
            pthread_mutex_unlock(&parser_lock);
            return -1;
        }
        out->names[out->nvars] = memcpy(out->namebuf + used, names[i], nlen + 1);
        out->source[out->nvars++] = src;
        used += nlen + 1;
    }
    out->ev = ev;
    return 0;
}

double formula_eval(formula *f, double t, double ranks, double cores_per_rank, double price,
                    const double *point)
{
    double values[FORMULA_MAX_VARS];
    const double builtin_values[FORMULA_BUILTINS] = {t, ranks, cores_per_rank, price};
    for (int i = 0; i < f->nvars; i++)
        values[i] = f->source[i] < 0 ? builtin_values[-1 - f->source[i]] : point[f->source[i]];
    return evaluator_evaluate(f->ev, f->nvars, f->names, values);
}

void formula_free(formula *f)
{
    if (f->ev) {
        pthread_mutex_lock(&parser_lock);
        evaluator_destroy(f->ev);
        pthread_mutex_unlock(&parser_lock);
    }
    memset(f, 0, sizeof *f);
}
