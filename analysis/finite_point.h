/*
 * finite_point.h — whether an answer at a point a caller names is made of
 * numbers. A model evaluated far from its data overflows a double there
 * (3·ranks at ranks = 1e308, 2000/ranks at ranks = 1e-308, a rank count
 * ranks/2 at 1e308 whose ideal speedup x_k/x_1 does); rendered, such a
 * value is a null or a missing member that says nothing of why. Predict,
 * scaling, speedups, bottlenecks, imbalance (its LIF models at `at`), cost
 * (analysis/cost.h) and configurations refuse such a point with 400 naming the field the point
 * came from, the point and the value that is not finite. Pure: no I/O, no
 * globals.
 */
#ifndef PERFCAST_ANALYSIS_FINITE_POINT_H
#define PERFCAST_ANALYSIS_FINITE_POINT_H

#include <stddef.h>

#include "analysis/problem.h"

/* One number of an answer: what it is ("the model of the epoch time") and
 * its value at the point. */
typedef struct fp_value {
    const char *what;
    double value;
} fp_value;

/* The parameter of point (nparams of them) farthest from 1 on a log scale:
 * the coordinate that takes a model beyond what a double holds, large or
 * small (the only one with one parameter; 0 without any). */
int finite_point_far(int nparams, const double *point);

/* 0 when every v[0..n) is finite; else -1 with p: 400 saying which value
 * is not finite at point, naming fields[far] (far: finite_point_far) when
 * fields and it are given, else the parameter names[far] itself. */
int finite_point_check(const fp_value *v, int n, const char *const *names, int nparams,
                       const double *point, const char *const *fields, an_problem *p);

#endif
