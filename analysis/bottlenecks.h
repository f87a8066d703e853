/*
 * bottlenecks.h — the ranking behind GET /v1/experiments/{id}/bottlenecks
 * (Q3, api/bottlenecks.c renders it): which callpaths will dominate at a
 * target point, ranked as Extra-Deep ranks them (paper 000 §3.1): by
 * asymptotic growth — the leading exponents (poly, then log) of their
 * per-epoch model — then by their predicted value there, then by name.
 *
 * Each ranked callpath gets its prediction at the point with its 95%
 * interval, its share of the epoch now (at the largest measured coordinate)
 * and there, and its coded warnings: its model's own and those of the
 * prediction (callpath_warnings.h; the checks the predict route makes). A
 * callpath whose prediction is <= 0 on the way to the point
 * (negative_prediction) is not ranked by that number: it keeps its place in
 * the list, after every callpath without one, with its warning. Host-side
 * callpaths (CUDA runtime, user ranges) overlap device time and are left
 * out unless the category "host" is asked for; callpaths without a model
 * are counted (unmodeled), not ranked. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_BOTTLENECKS_H
#define PERFCAST_ANALYSIS_BOTTLENECKS_H

#include <jansson.h>

#include "analysis/problem.h"

#include "analysis/callpath_warnings.h"
#include "analysis/set_data.h"

/* One ranked callpath. */
typedef struct bn_item {
    const ad_callpath *c;
    double value, lo, hi; /* predicted at the point; lo, hi: its 95% interval */
    int has_interval;
    double share_now_pct;              /* of the measured epoch now; NaN without one */
    double share_pct, share_lo, share_hi; /* of the predicted epoch at the point */
    int negative;                      /* negative_prediction: ranked after the others */
    json_t *warnings;                  /* owned; [] when none */
} bn_item;

typedef struct bn_ranking {
    bn_item *v; /* in rank order */
    int n;
    int unmodeled; /* of the asked category, without a model */
    cpw_tally tally; /* the items carrying warnings */
} bn_ranking;

/* What is ranked: category NULL ranks every callpath but the host-side
 * ones, otherwise only that category. */
typedef struct bn_query {
    const char *category;
    const double *at;           /* the target point (nparams coordinates) */
    const char *const *names;   /* the parameters' names, for the warnings */
    double epoch_at;            /* the predicted epoch there */
    double epoch_now;           /* the measured epoch at the largest coordinate */
} bn_query;

/* 1 when category is one of comp, comm, mem, host. */
int bn_category_known(const char *category);

/* Ranks cps for q into *out (zeroed first). Returns 0, or -1 when out of
 * memory (*out freed). */
int bn_rank(const ad_callpaths *cps, const bn_query *q, bn_ranking *out);

/* The top-level callpath_warnings summary, or NULL when no ranked callpath
 * carries a warning. */
json_t *bn_warnings_summary(const bn_ranking *r);

void bn_ranking_free(bn_ranking *r);

/* 0 when every ranked callpath's model predicts a finite value at the
 * point at (names[0..nparams)); else -1 with p: 400 naming field (the
 * query parameter the point came from) and the first callpath whose value
 * is not (analysis/finite_point.h): no value_at or share answered null for
 * an overflow. */
int bn_check_finite(const bn_ranking *r, const char *const *names, int nparams, const double *at,
                    const char *field, an_problem *p);

#endif
