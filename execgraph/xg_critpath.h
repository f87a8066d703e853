/*
 * xg_critpath.h — per-step time predicted on the critical path: Algorithm 1
 * of paper 001 (§III-D), generalised to several streams. Pure: no I/O.
 *
 * Per step, over the top-level ops of the execution graph in order, one CPU
 * clock and one GPU clock per stream, all from 0 at the step's start:
 *
 *   cpu += T1(op), or the measured wait for other ranks before op when
 *          there was one (xg_syncwait.h; counted in sync_wait)
 *   op with launches:   cpu += T2(op)
 *     per launch k on stream s (its kernel time Tk):
 *       start = max(gpu[s] + launch_gap, cpu + T4/2, wait)     (line 11)
 *       gpu[s] = start + Tk;  cpu += T4;  cpu += T5 unless k is the last
 *     cpu += T3(op)
 *   op without launches: cpu += T5(op)
 *   T = max(cpu, max_s gpu[s])
 *
 * Generalisations: cudaEventRecord takes the end of the work on the stream
 * the thread launched to last; cudaStreamWaitEvent makes the next launch
 * start no earlier than that recorded time (how DDP orders NCCL kernels on
 * their own stream after the gradients' kernels, and back); a call that
 * waits for the device (SYNC: cudaStreamSynchronize, a copy to pageable
 * memory...) moves the CPU clock to the end of the awaited work before its
 * T4. Overheads T1–T5 come from an overhead set (xg_overheads.h), looked up
 * by op (T4 by runtime call name) with the per-type fallback.
 *
 * Kernel times: the trace's own durations (replay), or one time per device
 * event (dev_us: a model's, xg_opmodel.h), or a what-if table
 * entry by kernel name (every instance), or by op name (the op's kernels
 * share the given time in proportion to their measured durations); an
 * entry gives seconds, or a scale of the measured time.
 *
 * Output per step: the predicted time, the CPU time, the GPU active time and
 * the end per stream, the idle time (T minus the union of predicted device
 * intervals), which side bounds it, the ops contributing most to the
 * critical path (how far each op moved max(cpu, gpu)), and the measured
 * step time with the relative error.
 */
#ifndef PERFCAST_XG_CRITPATH_H
#define PERFCAST_XG_CRITPATH_H

#include "execgraph/xg_overheads.h"

typedef struct xg_kt_entry {
    const char *name;  /* a kernel or op name as in the trace */
    double seconds;    /* used when scale <= 0 */
    double scale;      /* > 0: the measured time times scale */
} xg_kt_entry;

typedef struct xg_cp_options {
    const xg_overheads *ov;   /* required */
    const xg_kt_entry *kt;    /* what-if table, may be NULL */
    int nkt;
    const double *dev_us;     /* per event index of the trace: a device event's time in
                                 microseconds, before the table; NAN (or NULL): not given */
    double launch_gap_us;     /* < 0: default 1 (Algorithm 1, line 11) */
    int top;                  /* ops to report per step; <= 0: 5 */
} xg_cp_options;

typedef struct xg_cp_top {
    int name;                 /* op name id in the trace */
    double seconds;           /* summed contribution to the critical path */
    long long count;
} xg_cp_top;

typedef struct xg_cp_step {
    int step;                 /* index in the graph's steps */
    double predicted, cpu_time, gpu_time, idle; /* seconds */
    double sync_wait;         /* seconds of it the host waited for other ranks
                                 (xg_syncwait.h), at their measured lengths */
    double measured;          /* the step's duration on the trace */
    double error;             /* |predicted - measured| / measured, NAN when measured is 0 */
    double *gpu_active;       /* per stream of the graph: summed kernel time */
    double *gpu_end;          /* per stream: when its last kernel ends */
    int gpu_bound;            /* 1: the GPU ends last; 0: the CPU */
    xg_cp_top *top;
    int ntop;
    long long kernels, replaced; /* device events; those the table changed */
} xg_cp_step;

typedef struct xg_cp_result {
    xg_cp_step *steps;
    int nsteps;
    int nstreams;             /* = the graph's */
    long long *kt_hits;       /* per table entry: device events it changed */
    long long fallback_lookups; /* overheads taken from a per-type fallback */
    long long missing_lookups;  /* overheads the set has not got at all (0 used) */
} xg_cp_result;

/* Predicts every step of g. Errors: a table entry naming no kernel or op of
 * the trace (err->field "kernel_times[\"NAME\"]"), a negative time. */
int xg_critpath(const xg_graph *g, const xg_cp_options *o, xg_cp_result *out, xg_error *err);
void xg_cp_result_free(xg_cp_result *r);

/* Geometric mean of the steps' errors (those with a measured time), with
 * errors of exactly 0 counted as 1e-6; NAN when there is none. */
double xg_cp_geomean_error(const xg_cp_result *r);

#endif
