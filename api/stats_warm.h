/*
 * stats_warm.h — statistics and sensitivity ready before they are asked:
 * when a notice says an experiment has a new model set (api/cache_sync.c),
 * the experiment's most recent statistics and sensitivity requests
 * (model_cache_warm_note: at most STATS_WARM_PER_EXPERIMENT, only those
 * whose rows were kept) are asked again of the new set in the background:
 * the set's models are loaded, the rows those requests rest on are read and
 * kept in the model cache's blobs (within its byte budget, like any
 * request's) and their answers rendered and kept, so that the first request
 * after a refit costs what a later one does. A request never gets rows or
 * an answer of a set other than the one its models name: both are kept
 * under the set's id. Requests of an experiment being warmed wait until the
 * most recent request's rows are kept (model_cache_warm_wait).
 *
 * An experiment nobody has asked yet is warmed too: its models are loaded
 * (the first prediction after a refit does not load them either), and the
 * statistics of its application-level epoch times and their default
 * sensitivity are computed. Those rows are kept whole (every page of them,
 * api/sweeps.c), so the first request of any page, limit or target of them
 * is answered from memory.
 */
#ifndef PERFCAST_API_STATS_WARM_H
#define PERFCAST_API_STATS_WARM_H

#include <stdint.h>

#include "api/api.h"

#define STATS_WARM_PER_EXPERIMENT 4

/* Reads and keeps what was asked of the experiment from its newest model
 * set. Blocking; for a background thread. Errors are dropped: a request
 * then reads for itself. */
void api_statistics_warm(api_ctx *ctx, int64_t experiment);

#endif
