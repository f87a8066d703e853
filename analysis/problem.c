/*
 * problem.c — the error value of the analyses' request parsers
 * (analysis/problem.h).
 */
#include "analysis/problem.h"

#include <stdarg.h>
#include <stdio.h>

int an_problem_set(an_problem *p, int status, const char *field, const char *fmt, ...)
{
    va_list ap;
    p->status = status;
    snprintf(p->field, sizeof p->field, "%s", field ? field : "");
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return -1;
}
