/*
 * rank_count.c — refusing a point without a rank count for speedup,
 * efficiency and cost; whether a rank count can be allocated
 * (analysis/rank_count.h).
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
    char at[256];
    an_point_text(names, nparams, point, 17, at, sizeof at);
    return an_problem_set(p, 400, field,
                          "at %s the experiment runs on no ranks: its rank count "
                          "training.data_parallel × training.model_parallel must be a number > 0 "
                          "for speedup, efficiency and core-hours",
                          at);
}

int rank_count_is_whole(double v)
{
    /* a count: 1e-12 is within the rounding of 0, no rank either */
    return isfinite(v) && nearbyint(v) >= 1 &&
           fabs(v - nearbyint(v)) <= 1e-9 * (fabs(v) > 1 ? fabs(v) : 1);
}

int rank_count_whole(double ranks, double dp, double mp)
{
    if (!(ranks > 0))
        return 1;
    return rank_count_is_whole(ranks) && (isnan(dp) || rank_count_is_whole(dp)) &&
           (isnan(mp) || rank_count_is_whole(mp));
}

void rank_count_text(double ranks, double dp, double mp, char *buf, size_t cap)
{
    if (!isnan(dp) && !isnan(mp))
        snprintf(buf, cap, "data_parallel %.10g × model_parallel %.10g = %.10g ranks", dp, mp,
                 ranks);
    else
        snprintf(buf, cap, "%.10g ranks", ranks);
}

json_t *rank_count_whole_warning(double ranks, double dp, double mp, const char *const *names,
                                 int nparams, const double *point)
{
    if (rank_count_whole(ranks, dp, mp))
        return NULL;
    char count[200], at[256], text[700];
    rank_count_text(ranks, dp, mp, count, sizeof count);
    an_point_text(names, nparams, point, 10, at, sizeof at);
    snprintf(text, sizeof text,
             "At %s the rank count training.data_parallel × training.model_parallel (%s) is "
             "not a whole number, which no scheduler can allocate: the answer's numbers "
             "there are a what-if at that count, not a run that can be made.",
             at, count);
    json_t *pt = json_object();
    for (int i = 0; pt && i < nparams; i++)
        json_object_set_new(pt, names[i], json_real(point[i]));
    return json_pack("{s:s, s:s, s:f, s:o}", "code", RANK_COUNT_WARN_NOT_WHOLE, "message", text,
                     "ranks", ranks, "point", pt);
}
