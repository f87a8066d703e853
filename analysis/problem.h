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

typedef struct an_problem {
    int status;
    char field[512]; /* a query parameter's name, at most 511 bytes of it */
    char msg[512];
} an_problem;

/* Sets p (field may be NULL: none) and returns -1, so that a parser can
 * `return an_problem_set(...)`. */
int an_problem_set(an_problem *p, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* text a finite number > 0 and nothing else (no leading space): 0 with
 * *out, or -1. */
int an_parse_positive(const char *text, double *out);

#endif
