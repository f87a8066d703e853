/*
 * xg_efficiency.h — GPU efficiency of a rank's kernels (paper 003 §3.1
 * "Efficiency") and their roofline times: achieved FLOP/s and memory
 * bandwidth over kernel time, as fractions of a device's peaks
 * (xg_device.h), per kernel name and over the trace or a step. Pure.
 *
 * Where the figures come from:
 *   FLOPs   an operator's args.flops (PyTorch profiler with_flops=True) is
 *           shared among the kernels launched inside it, in proportion to
 *           their durations: a kernel belongs to the innermost operator of
 *           its launching thread that encloses the launch (by correlation
 *           id) and carries a count. A kernel's own args.flops wins.
 *   bytes   memcpy/memset: their args.bytes. A kernel: the bytes of the
 *           innermost enclosing operator with input shapes (record_shapes:
 *           "Input Dims" x "Input type" read, plus an output the size of the
 *           largest input written; ingest/kineto_events.h), shared as FLOPs.
 *   precision  the operator's first floating input (fp64, fp32, fp16/bf16);
 *           a kernel whose name says "tf32" runs at the TF32 peak; fp32
 *           otherwise.
 * Kernel class: memory (memcpy, memset), communication (NCCL, as the
 * breakdown types it), element-wise (names with "elementwise",
 * "reduce_kernel", "CatArrayBatchedCopy"), compute (others).
 *
 * Figures: achieved FLOP/s = FLOPs / time of the kernels with FLOPs, its
 * fraction = FLOPs / sum(time x peak of the kernel's precision); achieved
 * bandwidth = bytes / time of the kernels with bytes, over the device's
 * DRAM bandwidth. Roofline time of a kernel (the roofline model of paper
 * 003, exact for memory and element-wise kernels, a lower bound for the
 * others): max(bytes / bandwidth, FLOPs / peak), beside its measured time.
 */
#ifndef PERFCAST_XG_EFFICIENCY_H
#define PERFCAST_XG_EFFICIENCY_H

#include "execgraph/xg_device.h"
#include "execgraph/xg_graph.h"

enum { XG_EK_COMPUTE = 0, XG_EK_ELEMENTWISE, XG_EK_MEMORY, XG_EK_COMM };

typedef struct xg_eff_sum {
    long long count;     /* device events */
    double time;         /* measured seconds */
    double flops, flop_time;  /* FLOPs and the time of the events that have them */
    double bytes, byte_time;
    double peak_time;    /* sum over events with FLOPs of time x peak (FLOP) */
    double roofline, roofline_measured; /* seconds, over events with FLOPs or bytes */
} xg_eff_sum;

typedef struct xg_eff_kernel {
    int name;            /* id in the trace's names */
    int cls;             /* XG_EK_* */
    int prec;            /* XG_FP64.. */
    xg_eff_sum s;
} xg_eff_kernel;

typedef struct xg_efficiency {
    xg_eff_sum total;
    xg_eff_kernel *kernels;  /* by measured time, descending; at most top */
    int nkernels;
    int trace_has_flops;     /* some operator or kernel of the trace has args.flops */
    int trace_has_shapes;    /* some operator has input shapes */
} xg_efficiency;

/* What each device event of a trace carries, attributed once for all the
 * steps: FLOPs and bytes (-1 unknown), precision and class, by event index. */
typedef struct xg_eff_attr {
    const xg_graph *g;
    double *flops, *bytes;
    signed char *prec, *cls;
    int has_flops, has_shapes;
} xg_eff_attr;

int xg_eff_attr_build(const xg_graph *g, xg_eff_attr *a, xg_error *err);
void xg_eff_attr_free(xg_eff_attr *a);

/* step < 0: the whole trace, else a step's device events. dev may be NULL
 * (no peaks: no fractions nor roofline). top: kernels kept, 0: 10.
 * 0, or -1 with err. */
int xg_efficiency_of(const xg_eff_attr *a, const xg_device *dev, int step, int top,
                     xg_efficiency *out, xg_error *err);
/* The same, attributing on the way (one step or the trace alone). */
int xg_efficiency_compute(const xg_graph *g, const xg_device *dev, int step, int top,
                          xg_efficiency *out, xg_error *err);
void xg_efficiency_free(xg_efficiency *e);

const char *xg_ek_class_name(int cls);

/* Derived figures of a sum (NAN when undefined). */
double xg_eff_achieved_flops(const xg_eff_sum *s);
double xg_eff_achieved_bw(const xg_eff_sum *s);
double xg_eff_flops_frac(const xg_eff_sum *s);
double xg_eff_bw_frac(const xg_eff_sum *s, const xg_device *dev);

#endif
