/*
 * xg_opmodel.h — the device time of a training step at another value of a
 * size parameter (a batch size), modelled by operator across traces of the
 * same job measured at other values (paper 001's kernel performance models
 * {M}: kernels modelled by what they compute, not by their names). Pure: no
 * I/O, no globals.
 *
 * Each device event is attributed to the operator that launched it: its
 * launch call (by correlation id, xg_graph.h) lies inside operators of its
 * host thread, and the innermost one is the launcher (aten::addmm, say, not
 * aten::linear). An operator instance of a step is keyed by its name and
 * its occurrence among the step's launching operators of that name (the
 * third aten::addmm); device events launched outside every operator are
 * keyed by their own name and occurrence (name matching, exact). Keys are
 * matched across the traces; cuBLAS or cuDNN choosing other kernels at
 * another size does not break them.
 *
 * Work of an instance, from its inputs' recorded shapes (record_shapes):
 *   GEMM (aten::mm, addmm, bmm, baddbmm, matmul, linear)  FLOPs 2·batch·M·K·N
 *   convolution (a name with "conv")                     FLOPs 2·(N·H·W)·|weight|
 *                                                         (stride 1)
 *   embedding lookups (a name with "embedding")          bytes indices × dim × element
 *   everything else                                      bytes: inputs read, an output
 *                                                         as large as the largest written
 * The shapes at the wanted value come from the traces: each dimension of
 * each input is affine in the parameter across them (exactly, as a batch
 * dimension or bs × bag size is) or constant; a dimension that is neither
 * leaves the instance without work. Without work (no shapes, lists of
 * tensors), or with the same work in every trace (its shapes do not follow
 * the parameter), the parameter itself is the regressor.
 *
 * Per instance, its device time per step (the mean over a trace's steps) is
 * fitted against its work across the traces by weighted least squares,
 * t = a + b·w with a, b >= 0, the weight of a point exp(-½ (log2(w/w*))²)
 * around the wanted work w* (the nearest sizes count most: the time of a
 * small kernel is flat in its work, of a large one linear). An instance
 * with one point (found in one trace only) with work takes its family's
 * median slope (the operator's name across instances and traces); else it
 * keeps its measured time and is counted as unmatched. The reference's
 * device events (graphs[0]) take their instance's predicted time in
 * proportion to their measured durations.
 *
 * With a device (xg_opmodel_dev), its peaks are a roofline prior: no
 * instance's predicted device time may be below the time its work takes at
 * the device's peak, a lower bound whatever the kernels: a GEMM's FLOPs at
 * the peak of its precision (fp32 at the TF32 tensor-core peak, which
 * PyTorch may use for it; unknown precision at the highest peak), a
 * convolution's FLOPs divided by its kernel's area (the stride is not in
 * the shapes, and it is at most the kernel's size), bytes at the DRAM
 * bandwidth (an embedding lookup's rows, else only the largest tensor of
 * the operator, which it reads or writes at least once). A prediction
 * below its bound is raised to it: where a fit on few or flat points
 * (small kernels, whose time hardly grows with their work) extrapolates a
 * large kernel, the bound is what remains of its growth.
 */
#ifndef PERFCAST_XG_OPMODEL_H
#define PERFCAST_XG_OPMODEL_H

#include "execgraph/xg_device.h"
#include "execgraph/xg_graph.h"

enum { XG_OPM_SIZE = 0, XG_OPM_FLOPS, XG_OPM_BYTES };

/* One operator instance of the reference's steps. */
typedef struct xg_opm_inst {
    const char *name;     /* operator (or, is_op 0, kernel) name, in graphs[0]'s trace */
    int is_op, occ;
    int regressor;        /* XG_OPM_SIZE, FLOPS or BYTES */
    int points;           /* traces it was found in */
    int how;              /* 0 fitted, 1 family slope, 2 kept (unmatched) */
    double work_ref, work_at;   /* in the regressor's unit */
    double measured_us, predicted_us; /* per step, the reference's and at `at` */
} xg_opm_inst;

typedef struct xg_opm_result {
    double *dev_us;       /* per event index of graphs[0]'s trace: the predicted time
                             (us), NAN for events that are not device work of a step */
    xg_opm_inst *inst;
    int ninst;
    double gpu_us;        /* per step of the reference: device time measured */
    double predicted_us;  /* per step: device time predicted */
    double unmatched_us;  /* per step: device time kept as measured (unmatched) */
    int shapes;           /* traces whose operators carry input shapes */
    int roofline_raised;  /* instances raised to their roofline bound (a device given) */
    double roofline_us;   /* per step: device time that added */
    int bad_trace;        /* -1; else the trace that runs other operators (with err) */
} xg_opm_result;

/* graphs[0..n) of traces measured at x[0..n) (n >= 2, distinct values);
 * predicts graphs[0]'s device work at `at` (> 0). 0, or -1 with err (a
 * trace whose launching operators carry less than half of the reference's
 * device time: out->bad_trace names it). */
int xg_opmodel(const xg_graph *const *g, const double *x, int n, double at, xg_opm_result *out,
               xg_error *err);
/* The same with the peaks of dev (NULL: none) as the roofline prior. */
int xg_opmodel_dev(const xg_graph *const *g, const double *x, int n, double at,
                   const xg_device *dev, xg_opm_result *out, xg_error *err);
void xg_opm_result_free(xg_opm_result *r);

/* Only the check of xg_opmodel that graphs[0..n) are one job: 0 when they
 * are; -1 with err otherwise, *bad the first trace whose operators carry
 * less than half of the reference's device time (-1 when out of memory). */
int xg_opmodel_same_job(const xg_graph *const *g, int n, int *bad, xg_error *err);

#endif
