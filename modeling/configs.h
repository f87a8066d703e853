/*
 * configs.h — choosing a configuration under a deadline and a budget
 * (Extra-Deep §3.3, design.md §5 Q5): the grid of candidate points (the
 * product of one list of values per parameter), feasibility against the
 * limits, the recommendation, the time/cost Pareto front, and the closest
 * candidates when nothing is feasible.
 *
 * The caller predicts each candidate's time, core-hours, cost and efficiency
 * (totals over the epochs asked for); this file only compares numbers. Pure
 * computation: no I/O, no globals.
 */
#ifndef PERFCAST_CONFIGS_H
#define PERFCAST_CONFIGS_H

#include <stddef.h>

/* The values one parameter takes in the search. */
typedef struct cfg_range {
    int nvalues;
    const double *values;
} cfg_range;

/* Number of points of the product of the ranges; SIZE_MAX when it does not
 * fit a size_t. */
size_t cfg_grid_size(const cfg_range *r, int nparams);
/* The index-th point of the product (the last parameter varies fastest). */
void cfg_grid_point(const cfg_range *r, int nparams, size_t index, double *point);

typedef struct cfg_candidate {
    double ranks;                  /* allocation size: ranks at the point */
    double time;                   /* s, all epochs */
    double core_hours;
    double cost;                   /* money; NaN when the experiment has no price */
    double efficiency;             /* parallel efficiency, 1 = ideal */
    int priced;                    /* the search prices its candidates: cost is the cost axis,
                                      also where it is NaN (no money there, e.g. a cost formula
                                      with no value), never core-hours in its place */
    int valid;                     /* 0: no usable prediction (e.g. a time <= 0): never feasible,
                                      not on the Pareto front */
    /* the upper ends of the 95% intervals of time, core-hours and cost; one
     * that is NaN or below its value counts as the value (no interval) */
    double time_hi, core_hours_hi, cost_hi;
    /* set by cfg_check */
    int feasible;
    int feasible_at_upper;         /* feasible, and so at the upper end of every interval */
    double violation;              /* largest value/limit over the limits set; <= 1 when feasible */
} cfg_candidate;

/* INFINITY where a limit is not set. */
typedef struct cfg_limits {
    double max_time, max_core_hours, max_cost;
} cfg_limits;

/* Feasibility of each candidate: every value (the point estimate) within
 * its limit; feasible_at_upper: also every interval's upper end. A limit on
 * cost cannot be met by a candidate without a cost. */
void cfg_check(const cfg_limits *l, cfg_candidate *c, int n);

typedef enum cfg_objective {
    CFG_AUTO = 0,      /* weak scaling: smallest allocation; strong: highest efficiency */
    CFG_CHEAPEST = 1,  /* lowest cost (core-hours without a price) */
    CFG_FASTEST = 2,   /* shortest time */
    CFG_EFFICIENT = 3, /* highest parallel efficiency */
    CFG_SMALLEST = 4,  /* fewest ranks (what CFG_AUTO means for weak scaling) */
} cfg_objective;

/* The recommended feasible candidate, or -1 when none is feasible: the best
 * under the rule among the candidates feasible at their intervals' upper
 * ends when there is one, else among all the feasible ones. *used is
 * the rule applied (CFG_AUTO resolved by the scaling). A candidate whose key
 * is not a number (NaN efficiency) ranks after those with one. Ties go to
 * the faster, then the cheaper, then the smaller candidate, then the first. */
int cfg_recommend(const cfg_candidate *c, int n, cfg_objective objective, int strong,
                  cfg_objective *used);

/* The cost axis: cost when set or when the search is priced (NaN then
 * where a candidate has no cost: it ranks after those with one and is not
 * on the Pareto front), else core-hours: one unit over the whole search. */
double cfg_cost_axis(const cfg_candidate *c);

/* Indices of the candidates no other candidate beats in both time and cost
 * (one of each set of equal ones), by ascending time, into out (n ints).
 * Returns their number, or -1 when out of memory. */
int cfg_pareto(const cfg_candidate *c, int n, int *out);

/* Indices of the k candidates with the smallest violation (ascending) into
 * out; returns how many (min(k, n)). */
int cfg_closest(const cfg_candidate *c, int n, int k, int *out);

#endif
