/*
 * xg_graph.h — the execution graph of a trace, per step (paper 001 §III-C,
 * generalised to several threads and streams): the top-level CPU operators
 * in order, the CUDA runtime calls each made, and the device work (kernels,
 * memcpys, memsets) each call launched, linked by correlation id, with the
 * device stream. Pure: built from an xg_trace, no I/O.
 *
 *   steps     ProfilerStep#N ranges in time order; a trace without them is
 *             one step from its first to its last event.
 *   ops       per host thread, the operators not inside another operator
 *             of the same thread ("top-level"); a runtime call outside every
 *             operator is an op of its own. A step's ops are those that
 *             start in it, merged across threads by start time.
 *   calls     runtime calls of an op, in time order, with what they mean to
 *             the critical path: LAUNCH (launched device work), SYNC (the
 *             host waits for the device: cudaDeviceSynchronize,
 *             cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy, a
 *             device-to-pageable copy), RECORD (cudaEventRecord), WAIT
 *             (cudaStreamWaitEvent).
 *   device    the device events a call launched (by args.correlation).
 *
 * What the graph cannot link is reported, not guessed: device events
 * without a correlation id, or whose launch is not in the trace, are placed
 * in the step containing their own start and counted in warnings; a trace
 * whose device events all lack correlation ids is an error naming the
 * first. A device event without args.stream takes its tid as stream (a
 * warning); one that starts before its launch (clock skew) is counted.
 */
#ifndef PERFCAST_XG_GRAPH_H
#define PERFCAST_XG_GRAPH_H

#include "execgraph/xg_trace.h"

enum xg_call_flags {
    XG_CALL_LAUNCH = 1,
    XG_CALL_SYNC = 2,
    XG_CALL_RECORD = 4,
    XG_CALL_WAIT = 8,
};

typedef struct xg_call {
    int ev;              /* the runtime event */
    int flags;           /* xg_call_flags */
    int dev_first, ndev; /* into xg_graph.dev */
} xg_call;

typedef struct xg_op {
    int ev;              /* the operator's event; for a bare runtime call, that call */
    int name;
    long long tid;
    double ts, end;      /* microseconds */
    int call_first, ncalls; /* into xg_graph.calls */
    int nlaunch;         /* calls with LAUNCH or SYNC */
} xg_op;

typedef struct xg_step {
    double ts, end;
    int name;            /* -1: the whole trace */
    int op_first, nops;  /* into xg_graph.ops */
    int dev_first, ndev; /* into xg_graph.step_dev: device events of the step */
} xg_step;

#define XG_MAX_WARNINGS 16

typedef struct xg_graph {
    const xg_trace *t;
    xg_step *steps;
    int nsteps;
    xg_op *ops;
    int nops;
    xg_call *calls;
    int ncalls;
    int *dev;            /* device event indices, grouped by call */
    int ndev;
    int *dev_call;       /* per event index in t: a device event's call, -1 unlinked */
    double *launch_ts;   /* per event index in t: a device event's launch start (us),
                            NAN when its launch is not in the trace */
    int *step_dev;       /* device event indices grouped by step, by start time */
    int nstep_dev;
    long long *streams;  /* distinct streams, ascending */
    int nstreams;
    /* counts of what the graph could not link */
    long long no_corr, no_launch, no_stream, skewed;
    double max_skew;     /* microseconds */
    char warnings[XG_MAX_WARNINGS][200];
    int nwarnings;
} xg_graph;

/* Builds the graph of t (which must outlive it). 0, or -1 with err. */
int xg_graph_build(const xg_trace *t, xg_graph *g, xg_error *err);
void xg_graph_free(xg_graph *g);

/* The stream of device event e (args.stream, else its tid). */
long long xg_stream_of(const xg_event *e);

/* Index of stream s in g->streams, -1 when absent. */
int xg_stream_index(const xg_graph *g, long long s);

#endif
