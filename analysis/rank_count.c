/*
 * rank_count.c — refusing a point without a rank count for speedup,
 * efficiency and cost (analysis/rank_count.h).
 */
#include "analysis/rank_count.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>

int rank_count_check(double ranks, const char *const *names, int nparams, const double *point,
                     const char *field, an_problem *p)
{
    if (isfinite(ranks) && ranks > 0)
        return 0;
    char at[256] = "";
    size_t n = 0;
    for (int i = 0; i < nparams && n < sizeof at; i++)
        n += (size_t)snprintf(at + n, sizeof at - n, "%s%s=%.17g", i ? ", " : "", names[i],
                              point[i]);
    return an_problem_set(p, 400, field,
                          "at %s the experiment runs on no ranks: its rank count "
                          "training.data_parallel × training.model_parallel must be a number > 0 "
                          "for speedup, efficiency and core-hours",
                          at);
}
