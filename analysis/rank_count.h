/*
 * rank_count.h — whether a point a caller names has a rank count at all.
 *
 * Speedup against P_1, parallel efficiency (Extra-Deep Eq. 11-14) and
 * core-hours take the experiment's rank count G·M (training.data_parallel ×
 * training.model_parallel) at a point as a count: a point where it is 0 or
 * below (a coordinate 0 or negative read as the ranks, or an expression such
 * as "gpus-1" at gpus = 1) has no ideal speedup and no core-hours, and an
 * answer there would divide by it or multiply by it. Uploads are refused at
 * such points (analysis/upload_check.h), so every measured point has one; a
 * point asked about (GET .../cost, .../speedups, .../scaling) is checked here
 * and refused with 400 naming the field. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_RANK_COUNT_H
#define PERFCAST_ANALYSIS_RANK_COUNT_H

#include "analysis/problem.h"

/* 0 when ranks (G·M at point; 0 where the caller found none) is a finite
 * number > 0; else -1 with p: 400 naming field (the parameter or query
 * member the point came from), the point (names[0..nparams)) and the rule. */
int rank_count_check(double ranks, const char *const *names, int nparams, const double *point,
                     const char *field, an_problem *p);

#endif
