/*
 * iteration.h — per-iteration analysis of a Kineto trace as the CLI
 * (`perfcast iteration`) and the HTTP API both serve it: on a trace read by
 * ingest/kineto_xg.h (the caller loads it), builds the execution
 * graph, measures or takes the overheads T1–T5, predicts each step on the
 * critical path (Algorithm 1 of paper 001, execgraph/xg_critpath.h) and
 * breaks the GPU time down (execgraph/xg_breakdown.h), and renders one JSON
 * document. Also the JSON forms of overhead sets and what-if tables.
 *
 * Document (times in seconds):
 *   {"rank","world_size","events","streams":[..],
 *    "overheads":{"source":"trace"|"set"|"file","name"?,"cpu_profiler_us",
 *                 "gpu_profiler_us","fallback_lookups","missing_lookups"},
 *    "kernel_times":[{"name","seconds"|"scale","kernels_changed"}],
 *    "steps":[{"index","label","measured","predicted","error","cpu_time",
 *              "gpu_time","idle","bound":"cpu"|"gpu","kernels","kernels_changed",
 *              "gpu_active":[{"stream","seconds","end"}],
 *              "top_ops":[{"name","seconds","share_pct","count"}],"sync_wait",
 *              "outliers_dropped":{"seconds","share","by_type":{"T1".."T5"}}|null,
 *              "interval":[lo, hi]|null,"breakdown":{...}}],
 *    "interval":{"steps","step_spread","t","steps_term","cpu_profiler_us",
 *                "profiler_up","profiler_down","outliers","model","floored"}
 *               (iteration_trust.h; every term null with one step),
 *    "summary":{"steps","geomean_error","mean_predicted","mean_measured","sync_wait",
 *               "warnings":[{"code":"outliers_dropped","message","share"}]},
 *    "breakdown":{"window","computation","communication","memory","idle",
 *                 "computation_pct",...,"kernel_sum":{"computation",...},
 *                 "kernel_count":{..},"idle_by_stream":[{"stream","host_wait",
 *                 "kernel_wait","other"}],"kernel_types":[{"kernel_type",
 *                 "seconds","pct"}],"excluded_events"},
 *    "efficiency":{"device":{..}|null,"kernel_time","flops","flop_time",
 *                  "achieved_flops","flops_fraction","bytes","byte_time",
 *                  "achieved_bandwidth","bandwidth_fraction","roofline_time",
 *                  "roofline_measured","kernels":[{"name","class","precision",
 *                  "count","time","flops","bytes",...,"roofline_time"}]}
 *                  (also per step, without "kernels"),
 *    "warnings":[..]}
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_H
#define PERFCAST_ANALYSIS_ITERATION_H

#include <jansson.h>

#include "execgraph/xg_breakdown.h"
#include "execgraph/xg_critpath.h"
#include "execgraph/xg_efficiency.h"

/* The code of the warning that the overheads dropped outliers of more than
 * 10% of a measured step (in "warnings" as "outliers_dropped: ..."). */
#define ITERATION_WARN_OUTLIERS "outliers_dropped"

typedef struct iteration_opts {
    const xg_overheads *ov;   /* NULL: measured on the trace itself */
    const char *ov_source;    /* "set", "file" (with ov) */
    const char *ov_name;      /* the set's name, may be NULL */
    xg_ov_options prof;       /* profiler overheads when measuring on the trace */
    const xg_kt_entry *kt;
    int nkt;
    const double *dev_us;     /* per event: modelled device times (xg_cp_options.dev_us) */
    int top;                  /* top ops per step, 0: 5 */
    int breakdown;            /* 1: include the breakdowns and efficiency */
    const xg_device *device;  /* peaks for the efficiency figures, NULL: none */
    int mixed_devices;        /* predicting at another size: 1 accepts traces of
                                 different devices (said in a warning) */
    int no_interval;          /* 1: no interval from the trace's own steps
                                 (iteration_trust.h): a caller that sets its own */
    const double *measured;   /* predicting at another size: per trace its step
                                 measured without the profiler (seconds; NAN: not
                                 known), calibrating the profiler's CPU figure
                                 (iteration_calibrate.h); NULL: none */
} iteration_opts;

/* The "efficiency" document of a trace or step (kernels: with the top
 * kernels). NULL with err. */
json_t *iteration_efficiency_json(const xg_eff_attr *a, const xg_device *dev, int step,
                                  int kernels, xg_error *err);
/* A device as JSON {"name","peak_flops":{"fp64",..},"dram_bandwidth"}, and
 * back (0, or -1 with err->field naming the field). */
json_t *iteration_device_json(const xg_device *d);
int iteration_device_parse(const json_t *j, xg_device *d, xg_error *err);

/* The analysis of a loaded trace as a JSON document, or NULL with err
 * (a what-if entry naming nothing: err->field "kernel_times"). */
json_t *iteration_analyse(const xg_trace *t, const iteration_opts *o, xg_error *err);

/* Overhead sets as JSON: {"cpu_profiler_us","gpu_profiler_us","traces",
 * "stats":[{"type","name"|null,"mean","median","std","count","dropped"}]}. */
json_t *iteration_overheads_json(const xg_overheads *ov);
/* 0, or -1 with err naming the field ("stats[3].mean"). */
int iteration_overheads_parse(const json_t *j, xg_overheads *ov, xg_error *err);

/* Measures an overhead set on loaded traces. 0 or -1 with err. */
int iteration_measure(const xg_trace *const *traces, int n, const xg_ov_options *prof,
                      xg_overheads *out, xg_error *err);

/* What-if table {"name": seconds | {"scale": x} | {"seconds": s}}; entries
 * point into j (keep it alive). 0, or -1 with err naming the entry. */
int iteration_kernel_times_parse(const json_t *j, xg_kt_entry **out, int *n, xg_error *err);

#endif
