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
 * and refused with 400 naming the field.
 *
 * A rank count must also be a whole number, and so must each of its
 * degrees, for a scheduler to allocate it (rank_count_whole): the
 * configuration search leaves other candidates out, advice never
 * recommends a run there, and cost, speedups and scaling answer such a
 * point as a what-if with the coded warning ranks_not_whole
 * (rank_count_whole_warning; scaling with the count of such points on its
 * axis). Pure: no
 * I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_RANK_COUNT_H
#define PERFCAST_ANALYSIS_RANK_COUNT_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/problem.h"

/* the coded warning of a rank count that is not a whole number */
#define RANK_COUNT_WARN_NOT_WHOLE "ranks_not_whole"

/* 0 when ranks (G·M at point; 0 where the caller found none) is a finite
 * number > 0; else -1 with p: 400 naming field (the parameter or query
 * member the point came from), the point (names[0..nparams)) and the rule. */
int rank_count_check(double ranks, const char *const *names, int nparams, const double *point,
                     const char *field, an_problem *p);

/* v a whole number of at least 1 (a count of ranks or of a degree), to the
 * rounding of a range's steps (1e-9 relative). */
int rank_count_is_whole(double v);

/* 1 when a rank count ranks (> 0) can be allocated: it and its degrees
 * data_parallel dp and model_parallel mp (NaN where unknown) are whole
 * numbers; a rank count not > 0 is rank_count_check's, and answers 1. */
int rank_count_whole(double ranks, double dp, double mp);

/* "data_parallel 10.125 × model_parallel 1 = 10.125 ranks" (only the
 * count when a degree is unknown) into buf (cap bytes). */
void rank_count_text(double ranks, double dp, double mp, char *buf, size_t cap);

/* The coded warning ranks_not_whole of an answer at one point
 * (names[0..nparams)) whose rank count cannot be allocated
 * (rank_count_whole is 0): {"code","message","ranks","point"}, its numbers
 * a what-if at that count. NULL when it can be allocated (or out of
 * memory). */
json_t *rank_count_whole_warning(double ranks, double dp, double mp, const char *const *names,
                                 int nparams, const double *point);

#endif
