/*
 * problem.h — why an analysis refused its input or failed, as a value: the
 * HTTP status the answer takes (400 a bad member, 404 nothing of that name,
 * 413 beyond a documented cap, 415 an unknown format, 422 input that cannot
 * be analysed, 500 out of memory), the member, line or offset it is about
 * ("" when none) and the message. The request parsers and analyses of this
 * folder fill one (analysis/fit_request.h, analysis/iteration_request.h,
 * analysis/regressions.h, analysis/curve.h); api/ renders it as a problem
 * document, the CLI prints the message. Also the number reader of the
 * values such parsers take as text.
 */
#ifndef PERFCAST_ANALYSIS_PROBLEM_H
#define PERFCAST_ANALYSIS_PROBLEM_H

#include <stddef.h>

typedef struct an_problem {
    int status;
    char field[512]; /* a query parameter's name, at most 511 bytes of it */
    char msg[512];
} an_problem;

/* Sets p (field may be NULL: none) and returns -1, so that a parser can
 * `return an_problem_set(...)`. */
int an_problem_set(an_problem *p, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* A point in messages: "ranks=8, batch=32" (names[0..nparams), each value
 * with digits significant digits) into buf (cap bytes, cut there); "" for
 * no parameter. */
void an_point_text(const char *const *names, int nparams, const double *point, int digits,
                   char *buf, size_t cap);

/* text a finite number > 0 and nothing else (no leading space): 0 with
 * *out, or -1. */
int an_parse_positive(const char *text, double *out);

#endif
