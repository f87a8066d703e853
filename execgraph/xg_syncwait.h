/*
 * xg_syncwait.h — the host's waits for other ranks in a multi-rank trace.
 * Pure: no I/O, no globals.
 *
 * In data-parallel training a rank's host thread stops between two
 * operators until the other ranks catch up (a collective, or a call that
 * synchronises with one, completes): in the DDP traces of tests/data/kineto
 * the autograd thread waits 10–27 ms at a time between backward operators.
 * Such a gap is no host overhead: measured as T1 it is an outlier the
 * paper's treatment drops, and the step is predicted about half as long as
 * it is. It happens in an unprofiled run too, so it is kept as its own part
 * of the step, `sync_wait`, at its measured length.
 *
 * A wait for other ranks, as recognised here: in a trace of several ranks
 * (distributedInfo.world_size > 1, or communication kernels in it), the gap
 * before a top-level operator (its T1: since the previous operator of the
 * step ended) of XG_SYNC_MIN_US or more during which the rank's own device
 * computed for at most XG_SYNC_BUSY of the gap (communication, or nothing):
 * the host was not working and not waiting for its own GPU, so for
 * something outside the rank. (The traces show no event completing at the
 * end of such a gap: the completion awaited is on another rank.) A single-rank trace has none (a long gap there is the data loader,
 * start-up, ...: an outlier).
 */
#ifndef PERFCAST_XG_SYNCWAIT_H
#define PERFCAST_XG_SYNCWAIT_H

#include "execgraph/xg_graph.h"

#define XG_SYNC_MIN_US 1000.0
#define XG_SYNC_BUSY 0.1

/* Per op of g (g->nops entries): the wait before it in microseconds, 0
 * where none. NULL when out of memory; *total (may be NULL) gets their sum. */
double *xg_sync_waits(const xg_graph *g, double *total);

#endif
