/*
 * compare.h — is a change between two predictions real? The comparison of
 * two model sets (the base and the head commit) reduces to this at every
 * point: the head's value against the base's, each with its 95% interval.
 * A change counts only when the intervals separate (the models disagree
 * beyond what their fits allow) and the relative change exceeds a
 * threshold. And the asymptotic growth of two models: which grows faster.
 * Pure: no I/O, no globals.
 */
#ifndef PERFCAST_MODELING_COMPARE_H
#define PERFCAST_MODELING_COMPARE_H

typedef struct compare_value {
    double value, lo, hi; /* lo = hi = value when there is no interval */
} compare_value;

typedef struct compare_result {
    double change_pct; /* (head - base) / |base| * 100; NaN when base is 0 and head is not */
    int separated;     /* the intervals do not overlap */
    int significant;   /* separated and |change_pct| > threshold (a change from 0: separated) */
    int direction;     /* +1 head larger, -1 smaller, 0 the same (or not significant) */
} compare_result;

/* Compares head with base; threshold_pct >= 0. */
compare_result compare_values(compare_value base, compare_value head, double threshold_pct);

/* +1 when growth (poly, log) of head exceeds base's (poly first, then log,
 * lexicographically, to 1e-9), -1 when it is smaller, 0 when equal. */
int compare_growth(double base_poly, double base_log, double head_poly, double head_log);

#endif
