/*
 * xg_breakdown.h — GPU temporal breakdown of a rank: computation,
 * communication, memory and idle time, and idle time by cause, with the
 * definitions of Holistic Trace Analysis (HTA) so that the figures agree
 * with its get_temporal_breakdown and get_idle_time_breakdown. Pure.
 *
 * Device events: kernels, memcpys, memsets and the device side of
 * synchronisations (cuda_sync: "Context Sync", "Event Sync"...): HTA takes
 * every event with a stream (args.stream present and not -1; one without
 * is left out, and counted in `excluded`), over the whole trace an operator
 * that names a stream too (torch.compile's Triton launchers carry one), as
 * HTA counts it: device time of the type its name says. Types by name as HTA's get_kernel_type:
 * communication when the name starts with "nccl", "hip" or "hccl" or
 * contains "ncclKernel"; memory when it starts with "Memcpy", "Memset",
 * "hipMemcpy", "hipMemset" or "dma"; other when it matches HTA's list of
 * non-computation names (contains "Memcpy", "Memset", "dma" or "Sync",
 * starts with "Stream Wait Event", "cuda...LaunchKernel", "runFunction",
 * ...); computation otherwise.
 *
 * Which events (the whole trace, step XG_BD_TRACE): as HTA reads a trace
 * by default, when it has two ProfilerSteps or more the last step is left
 * out: a device event counts when the runtime call that launched it (by
 * correlation id) starts before the last step does (one without a
 * correlation id: when it starts before); one whose launch is not in the
 * trace does not count. XG_BD_ALL takes every device event. A step (index
 * >= 0): the ProfilerStep's range with its device events (by launch)
 * clipped to it.
 *
 * Times as HTA reads them: when the trace has fractional microseconds,
 * starts are rounded up and ends down to whole microseconds.
 *
 * Over the window (whole trace: from the first device start to the end of
 * the last merged interval, HTA's "kernel_time"):
 *   idle          window - |union of all device intervals|
 *   computation   |union of computation intervals|           (HTA compute_time)
 *   communication |union of comp+comm| - |union of comp|
 *   memory        |union of comp+comm+mem| - |union of comp+comm|
 *   other         |union of all| - |union of comp+comm+mem|
 * so that the five add up to the window and communication + memory + other
 * is HTA's non_compute_time. Unions merge as HTA's merge_kernel_intervals
 * (sorted by start, a new interval when a start exceeds every end before
 * it; an interval that rounding left shorter than nothing counts 0).
 * kernel_sum: summed durations per type (HTA's kernel type breakdown,
 * overlaps counted twice).
 *
 * Idle by cause, per stream (HTA's get_idle_time_breakdown): kernels,
 * memcpys and memsets of the stream (not syncs nor operators) by start; the gap before
 * each (not the first) is host wait when its launch started after the
 * previous event ended, kernel wait when not and the gap is below
 * consecutive_delay (HTA's default 30 in the trace's unit, microseconds),
 * other otherwise.
 */
#ifndef PERFCAST_XG_BREAKDOWN_H
#define PERFCAST_XG_BREAKDOWN_H

#include "execgraph/xg_graph.h"

enum { XG_COMP = 0, XG_COMM, XG_MEM, XG_OTHER, XG_NDEVTYPES };

/* step arguments of xg_breakdown_compute besides a step's index */
#define XG_BD_TRACE (-1) /* the whole trace as HTA reads it (last step left out) */
#define XG_BD_ALL (-2)   /* every device event of the trace */

typedef struct xg_idle_stream {
    long long stream;
    double host_wait, kernel_wait, other; /* seconds */
} xg_idle_stream;

typedef struct xg_breakdown {
    double window;                  /* seconds */
    double comp, comm, mem, other, idle; /* seconds, adding up to window */
    long long excluded;             /* device events left out (XG_BD_TRACE) */
    /* HTA's kernel type breakdown (get_gpu_kernel_breakdown, memory kernels
     * included as its default): seconds each set of types runs together,
     * by mask (1 computation, 2 communication, 4 memory: [3] computation
     * overlapping communication); each type's intervals merged first */
    double type_time[8];
    double kernel_sum[XG_NDEVTYPES];
    long long kernels[XG_NDEVTYPES];
    xg_idle_stream *idle_streams;   /* one per stream with device events */
    int nidle;
} xg_breakdown;

int xg_device_type(const char *name);

/* step: XG_BD_TRACE, XG_BD_ALL or a step's index. consecutive_delay_us
 * < 0: 30. 0, or -1 with err. */
int xg_breakdown_compute(const xg_graph *g, int step, double consecutive_delay_us,
                         xg_breakdown *out, xg_error *err);
void xg_breakdown_free(xg_breakdown *b);

#endif
