/*
 * scaling_axis.c — the values of the varied parameter of a scaling answer
 * (analysis/scaling_axis.h).
 */
#include "analysis/scaling_axis.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "2,4,8" into v. The count, or -1 with p. */
static int list_values(const char *values, double *v, an_problem *p)
{
    int n = 0;
    const char *s = values;
    while (*s) {
        char num[64];
        const char *comma = strchrnul(s, ',');
        size_t len = (size_t)(comma - s);
        snprintf(num, sizeof num, "%.*s", (int)(len < 63 ? len : 63), s);
        if (n == SCALING_MAX_POINTS)
            return an_problem_set(p, 400, "values", "at most %d values", SCALING_MAX_POINTS);
        if (len >= sizeof num || an_parse_positive(num, &v[n]) < 0)
            return an_problem_set(p, 400, "values",
                                  "must be numbers > 0 separated by commas, got \"%.40s\"", num);
        n++;
        s = *comma ? comma + 1 : comma;
    }
    if (n == 0) /* "values=": nothing to answer, not an answer without points */
        return an_problem_set(p, 400, "values", "must be numbers > 0 separated by commas, got "
                                                "none");
    return n;
}

/* from, from + step, ... up to to, into *out. The count, or -1 with p. */
static int range_values(const scaling_axis_input *in, double **out, an_problem *p)
{
    double a, b, s = 1;
    if (!in->from || an_parse_positive(in->from, &a) < 0)
        return an_problem_set(p, 400, "from", "must be a number > 0 (with to and step)");
    if (!in->to || an_parse_positive(in->to, &b) < 0 || b < a)
        return an_problem_set(p, 400, "to", "must be a number >= from");
    if (in->step && an_parse_positive(in->step, &s) < 0)
        return an_problem_set(p, 400, "step", "must be a number > 0");
    double count = floor((b - a) / s + 1e-9) + 1;
    if (count > SCALING_MAX_POINTS)
        return an_problem_set(p, 400, "step", "from/to/step give %.6g points; at most %d", count,
                              SCALING_MAX_POINTS);
    int n = 0;
    *out = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; *out && i < (int)count; i++)
        (*out)[n++] = a + i * s;
    return n;
}

int scaling_axis_values(const scaling_axis_input *in, double **out, an_problem *p)
{
    double *v = NULL;
    int n = 0;
    *out = NULL;
    if (in->values && (in->from || in->to || in->step))
        return an_problem_set(p, 400, "values", "give either values or from/to/step, not both");
    if (in->values) {
        v = malloc(sizeof(double) * SCALING_MAX_POINTS);
        if (v && (n = list_values(in->values, v, p)) < 0) {
            free(v);
            return -1;
        }
    } else if (in->from || in->to || in->step) {
        if ((n = range_values(in, &v, p)) < 0)
            return -1;
    } else {
        v = malloc(sizeof(double) * (size_t)(in->npoints ? in->npoints : 1));
        for (int k = 0; v && k < in->npoints; k++) {
            double x = in->coords[(size_t)k * in->nparams + in->param];
            int seen = 0;
            for (int i = 0; i < n && !seen; i++)
                seen = v[i] == x;
            if (!seen)
                v[n++] = x;
        }
    }
    if (!v)
        return an_problem_set(p, 500, NULL, "out of memory");
    *out = v;
    return n;
}
