/*
 * noisy.h — which measured points of a model set are too noisy for the
 * answers built on it (predict, models, scaling, cost, bottlenecks).
 *
 * The criterion is the statistics endpoint's at its default target: a
 * measurement (application level, callpath "epoch", any metric) with at
 * least two repetitions whose mean's 95% interval (Student t) is wider than
 * ±NOISY_TARGET of the mean. Such points are found once per model set (the
 * model cache scans the measurements it loads anyway; model lists of older
 * sets scan theirs when their page is first rendered) and named in the
 * answer's `warnings` (the first NOISY_NAMED_MAX, then a count;
 * noisy_points_attach in api/warnings.h).
 */
#ifndef PERFCAST_ANALYSIS_NOISY_H
#define PERFCAST_ANALYSIS_NOISY_H

#include <jansson.h>

#include "modeling/pmnf.h"
#include "analysis/measurement.h"

#define NOISY_TARGET 0.05
#define NOISY_NAMED_MAX 10

typedef struct noisy_points {
    int count;                           /* too-noisy measurements in all */
    int named;                           /* min(count, NOISY_NAMED_MAX) */
    char text[NOISY_NAMED_MAX][400];     /* the warnings naming them */
} noisy_points;

/* What names a measured point: the experiment's parameters and its
 * factors (in name order, the order of a row's levels). */
typedef struct noisy_names {
    const char (*params)[64];
    int nparams;
    const char (*factors)[65];
    int nfactors;
} noisy_names;

/* "ranks=8 epoch time (phase epoch)", with the levels of an experiment
 * with factors: "ranks=8 [dataloader=cpu] epoch time (phase epoch)". */
void noisy_point_label(const noisy_names *nm, const store_measurement_row *r, char *buf,
                       size_t cap);

/* Scans rows (only application-level "epoch" rows count) into out. Out of
 * memory: out says none. */
void noisy_points_scan(const noisy_names *nm, const store_measurement_row *rows, int n,
                       noisy_points *out);

#endif
