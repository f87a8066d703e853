/*
 * xg_breakdown.h — GPU temporal breakdown of a rank: computation,
 * communication, memory and idle time, and idle time by cause, with the
 * definitions of Holistic Trace Analysis (HTA) so that the figures agree
 * with its get_temporal_breakdown and get_idle_time_breakdown. Pure.
 *
 * Device events: kernels, memcpys, memsets and the device side of
 * synchronisations (cuda_sync, "Stream Sync"): HTA takes every event with a
 * stream, and types a sync as computation by its name. Type by name as HTA: communication when the name starts with
 * "nccl" or contains "gloo:", memory when it contains "Memcpy" or "Memset",
 * computation otherwise.
 *
 * Over a window (the whole trace: from the first device start to the last
 * device end, HTA's "kernel_time"; a step: the ProfilerStep's range with its
 * device events clipped to it):
 *   idle         window - |union of all device intervals|
 *   computation  |union of computation intervals|             (HTA compute_time)
 *   communication |union of comp+comm| - |union of comp|
 *   memory       |union of all| - |union of comp+comm|
 * so that the four add up to the window and communication + memory is HTA's
 * non_compute_time. kernel_sum: summed durations per type (HTA's kernel type
 * breakdown, overlaps counted twice).
 *
 * Idle by cause, per stream (HTA): device events of the stream by start; the
 * gap before each (not the first) is host wait when its launch started
 * after the previous event ended, kernel wait when not and the gap is below
 * consecutive_delay (HTA default 30 ns), other otherwise.
 */
#ifndef PERFCAST_XG_BREAKDOWN_H
#define PERFCAST_XG_BREAKDOWN_H

#include "execgraph/xg_graph.h"

enum { XG_COMP = 0, XG_COMM, XG_MEM, XG_NDEVTYPES };

typedef struct xg_idle_stream {
    long long stream;
    double host_wait, kernel_wait, other; /* seconds */
} xg_idle_stream;

typedef struct xg_breakdown {
    double window;                  /* seconds */
    double comp, comm, mem, idle;   /* seconds, adding up to window */
    double kernel_sum[XG_NDEVTYPES];
    long long kernels[XG_NDEVTYPES];
    xg_idle_stream *idle_streams;   /* one per stream with device events */
    int nidle;
} xg_breakdown;

int xg_device_type(const char *name);

/* step < 0: the whole trace; else step index. consecutive_delay_us < 0:
 * 0.03 (30 ns). 0, or -1 with err. */
int xg_breakdown_compute(const xg_graph *g, int step, double consecutive_delay_us,
                         xg_breakdown *out, xg_error *err);
void xg_breakdown_free(xg_breakdown *b);

#endif
