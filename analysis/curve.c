/*
 * curve.c — one model evaluated along one parameter (analysis/curve.h).
 */
#include "analysis/curve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int curve_values_parse(const char *text, double **values, int *n, char *why, size_t cap)
{
    *n = 0;
    *values = malloc(sizeof(double) * CURVE_MAX_VALUES);
    if (!*values) {
        snprintf(why, cap, "out of memory");
        return -1;
    }
    const char *s = text;
    while (*s) {
        if (*n == CURVE_MAX_VALUES) {
            snprintf(why, cap, "at most %d values", CURVE_MAX_VALUES);
            return -1;
        }
        char *end = NULL;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v) || !(v > 0) || (*end && *end != ',')) {
            snprintf(why, cap, "expected numbers > 0 separated by commas, got \"%.40s\"", s);
            return -1;
        }
        (*values)[(*n)++] = v;
        s = *end ? end + 1 : end;
    }
    if (!*n) {
        snprintf(why, cap, "no values");
        return -1;
    }
    return 0;
}

static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int curve_build(const curve_input *in, curve_result *out)
{
    memset(out, 0, sizeof *out);
    int np = in->np;
    double minv[PMNF_MAX_PARAMS], maxv[PMNF_MAX_PARAMS];
    for (int q = 0; q < np; q++) {
        minv[q] = INFINITY;
        maxv[q] = 0;
    }
    for (int i = 0; i < in->nmeas; i++)
        for (int q = 0; q < np && q < in->meas[i].nparams; q++) {
            minv[q] = fmin(minv[q], in->meas[i].point[q]);
            maxv[q] = fmax(maxv[q], in->meas[i].point[q]);
        }
    const double *values = in->values;
    int nvalues = in->nvalues;
    double *dflt = NULL;
    if (!values) {
        dflt = malloc(sizeof(double) * CURVE_DEFAULT_POINTS);
        if (!dflt)
            return -1;
        double lo = isfinite(minv[in->param]) ? minv[in->param] : 1,
               hi = 8 * fmax(maxv[in->param], lo);
        for (int k = 0; k < CURVE_DEFAULT_POINTS; k++)
            dflt[k] = exp(log(lo) + (log(hi) - log(lo)) * k / (CURVE_DEFAULT_POINTS - 1));
        values = dflt;
        nvalues = CURVE_DEFAULT_POINTS;
    }
    double pt[PMNF_MAX_PARAMS];
    out->fixed = json_object();
    for (int q = 0; q < np; q++) {
        pt[q] = in->has_fixed[q] ? in->fixed[q] : maxv[q];
        if (q != in->param)
            json_object_set_new(out->fixed, in->names[q], json_real(pt[q]));
    }
    out->points = json_array();
    for (int k = 0; k < nvalues; k++) {
        pt[in->param] = values[k];
        curve_value p = in->predict(in->model, pt);
        int beyond = 0;
        for (int q = 0; q < np; q++)
            beyond |= pt[q] > CURVE_EXTRAPOLATION_FACTOR * maxv[q];
        json_array_append_new(
            out->points,
            json_pack("{s:f, s:o, s:o, s:b}", "x", values[k], "value", number(p.value), "interval",
                      p.has_interval ? json_pack("[o, o]", number(p.lo), number(p.hi))
                                     : json_null(),
                      "beyond_4x", beyond));
    }
    free(dflt);
    out->min_measured = isfinite(minv[in->param]) ? minv[in->param] : 0.0;
    out->max_measured = maxv[in->param];
    out->extrapolation_from = CURVE_EXTRAPOLATION_FACTOR * maxv[in->param];
    return 0;
}

void curve_result_free(curve_result *r)
{
    json_decref(r->fixed);
    json_decref(r->points);
    memset(r, 0, sizeof *r);
}
