/*
 * efficiency.h — SURFBoard's scaling efficiency SE_N = t_baseline / t_N of
 * one measured series along one parameter (paper 003 §3.2), per group of
 * runs that share the other parameters' values and the level combination,
 * from the stored repetitions (sweep/sweep_efficiency.h for the ratio and
 * its interval): the answer's "groups" of GET .../efficiency
 * (api/efficiency.c renders them). Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_EFFICIENCY_H
#define PERFCAST_ANALYSIS_EFFICIENCY_H

#include <jansson.h>

#include "analysis/measurement.h"
#include "analysis/noisy.h"

/* The groups of rows[0..n) (reordered: by group, then along parameter q,
 * stably) as an array: per group its "fixed" values of the other
 * parameters, its "levels" (with factors), its "baseline" (q at *baseline,
 * else the group's smallest measured value; null with a "reason" when the
 * group has none) and per run its mean, repetitions and "se" (value and
 * interval). *found: 1 when a group has its baseline. NULL when out of
 * memory. */
json_t *eff_groups(const noisy_names *nm, store_measurement_row *rows, int n, int q,
                   const double *baseline, int *found);

#endif
