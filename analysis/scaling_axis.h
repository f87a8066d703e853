/*
 * scaling_axis.h — the values of the varied parameter of a scaling answer
 * (GET /v1/experiments/{id}/scaling): a list ("2,4,8"), a range
 * (from, to, step: from, from + step, ... up to to), or, with neither, the
 * parameter's measured values in the order of the measured coordinates.
 * At most SCALING_MAX_POINTS values, each > 0.
 */
#ifndef PERFCAST_ANALYSIS_SCALING_AXIS_H
#define PERFCAST_ANALYSIS_SCALING_AXIS_H

#include "analysis/problem.h"

#define SCALING_MAX_POINTS 10000

typedef struct scaling_axis_input {
    const char *values;          /* "2,4,8" or NULL */
    const char *from, *to, *step; /* or NULL */
    const double *coords;        /* the measured coordinates: npoints x nparams */
    int npoints, nparams;
    int param;                   /* the varied parameter */
} scaling_axis_input;

/* The values into *out (malloc'ed): their count, or -1 with p (400 naming
 * values, from, to or step; 500 out of memory). */
int scaling_axis_values(const scaling_axis_input *in, double **out, an_problem *p);

#endif
