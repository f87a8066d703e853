/*
 * stats_warm.h — statistics and sensitivity ready before they are asked:
 * when a notice says an experiment has a new model set (api/cache_sync.c),
 * the rows the experiment's earlier statistics and sensitivity requests
 * rested on (model_cache_warm_note) are read from the new set and kept in
 * the model cache's blobs, with the set's models, so that the first request
 * after a refit costs what a later one does. Only what was asked before is
 * read, at most STATS_WARM_PER_EXPERIMENT filters per experiment, each kept
 * within the blob budget like any request's rows; a request never gets rows
 * of a set other than the newest its models name (the rows are kept under
 * the set's id).
 */
#ifndef PERFCAST_API_STATS_WARM_H
#define PERFCAST_API_STATS_WARM_H

#include <stdint.h>

#include "api/api.h"

#define STATS_WARM_PER_EXPERIMENT 8

/* Reads and keeps what was asked of the experiment from its newest model
 * set. Blocking; for a background thread. Errors are dropped: a request
 * then reads for itself. */
void api_statistics_warm(api_ctx *ctx, int64_t experiment);

#endif
