/*
 * problem.c — the error value of the analyses' request parsers
 * and their number reader (analysis/problem.h).
 */
#include "analysis/problem.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

int an_parse_positive(const char *text, double *out)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || isspace((unsigned char)*text) || !isfinite(v) || v <= 0)
        return -1;
    *out = v;
    return 0;
}

void an_point_text(const char *const *names, int nparams, const double *point, int digits,
                   char *buf, size_t cap)
{
    size_t n = 0;
    if (cap)
        buf[0] = '\0';
    for (int i = 0; i < nparams && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s=%.*g", i ? ", " : "", names[i], digits,
                              point[i]);
}
