/*
 * repstats.h — the repetition statistics of stored measurements as the
 * answers resting on them report them (paper 003 §2.1): per measurement
 * its statistics at a target relative half-width (sweep/sweep_stats.h) and
 * whether it is too noisy for it, the counts, and the coded warnings
 * {"code", "message", ...details} of GET .../statistics, and those of
 * sensitivity and efficiency (every measurement whose mean's 95% interval
 * is wider than ±5%, and how many have one repetition). The handlers
 * (api/sweeps.c, api/sensitivity.c, api/efficiency.c) render them.
 * Pure: no I/O, no globals.
 *
 * Codes (the README's and docs/modeling.md's warnings table):
 *   noisy_measurement  a mean's 95% interval is wider than the target
 *                      (details: point, levels, relative_half_width,
 *                      target, repetitions, repetitions_needed; or, for
 *                      the closing count, count)
 *   single_repetition  a measurement with one repetition has no interval
 *                      (details: point, levels; or count and points)
 */
#ifndef PERFCAST_ANALYSIS_REPSTATS_H
#define PERFCAST_ANALYSIS_REPSTATS_H

#include <jansson.h>

#include "analysis/measurement.h"
#include "analysis/noisy.h"
#include "sweep/sweep_stats.h"

#define REPSTATS_NOISY "noisy_measurement"
#define REPSTATS_SINGLE "single_repetition"
#define REPSTATS_NAMED_MAX 50 /* warnings naming a measurement, per kind */

typedef struct repstats_item {
    sweep_stats s;  /* s.n = 0: the row has no repetition (not an item) */
    int noisy;      /* its mean's interval is wider than the target */
} repstats_item;

typedef struct repstats {
    repstats_item *items; /* per row */
    int nitems;           /* rows with a repetition */
    int noisy, single, outlying;
    json_t *warnings;
} repstats;

/* The statistics of rows[0..n) at target (0 < target < 1). 0, or -1 when
 * out of memory; repstats_free() it either way. */
int repstats_compute(const noisy_names *nm, const store_measurement_row *rows, int n,
                     double target, repstats *out);
void repstats_free(repstats *r);

/* The warnings of an answer resting on rows[0..n): every row whose mean's
 * 95% interval is wider than ±5% of the mean (the first
 * REPSTATS_NAMED_MAX, then their count), and a count of single-repetition
 * rows; NULL when out of memory. */
json_t *repstats_noisy_warnings(const noisy_names *nm, const store_measurement_row *rows, int n);

#endif
