/*
 * kineto_xg.h — a Kineto trace read into an execution-graph trace
 * (execgraph/xg_trace.h) for the per-iteration analysis
 * (analysis/iteration.h); the CLI and the service read traces with it.
 */
#ifndef PERFCAST_INGEST_KINETO_XG_H
#define PERFCAST_INGEST_KINETO_XG_H

#include "execgraph/xg_trace.h"
#include "ingest/trace.h"

/* Reads a Kineto trace into t. 0, or -1 with err (event index and field
 * when the fault is one event's). */
int iteration_load(const ingest_input *in, int no_threads, xg_trace *t, xg_error *err);

#endif
