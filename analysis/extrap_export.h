/*
 * extrap_export.h — a model set's stored measurements as an Extra-P
 * experiment document (ingest/extrap_exp.h writes it as a .extra-p zip), so
 * that it opens in Extra-P's GUI and command line
 * (GET /v1/experiments/{id}/export?format=extra-p).
 *
 * Each measurement (point, level, name, metric, phase) becomes one of
 * Extra-P's measurements with the statistics of its repetitions. Callpaths
 * keep their names; the other levels are named "<level>:<name>"
 * ("epoch:epoch", "category:comm"), and a phase other than train adds
 * " (<phase>)". Rows without repetitions are left out.
 */
#ifndef PERFCAST_ANALYSIS_EXTRAP_EXPORT_H
#define PERFCAST_ANALYSIS_EXTRAP_EXPORT_H

#include <jansson.h>

#include "analysis/measurement.h"

/* {"Extra-P":"4.2.5","parameters":[..],"measurements":{}}, or NULL. */
json_t *extrap_export_new(const char *const *params, int np);
/* Adds rows to the document's measurements (in pages, as they are read).
 * 0, or -1 when out of memory. */
int extrap_export_add(json_t *doc, const store_measurement_row *rows, int n);

#endif
