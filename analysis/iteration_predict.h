/*
 * iteration_predict.h — the steps of a traced job at another value of a
 * size parameter (a batch size) from traces measured at other values, as
 * the CLI (`perfcast iteration TRACE --value X --trace-at X1=T1 --at X2`)
 * and POST /v1/experiments/{id}/iteration-model serve it.
 *
 * Method "operators" (the default): device time per operator instance
 * modelled from its FLOPs or bytes across the traces (execgraph/xg_opmodel.h),
 * host overheads T1–T5 pooled over the traces with a robust centre (per
 * operator the median of the traces' own means: analysis/iteration_host.h),
 * or the given set, Algorithm 1 on the first trace's graph. The 95% interval
 * of a step is predicted × (1 ± t·s) with
 *   s² = s_host²·(1 + 1/k) + (s_cv·(1 + d))²
 *   s_host  the host's spread between the traces (processes) carried into
 *           the step: s_H, the standard deviation of the logarithm of each
 *           trace's measured host time per step (the median of its steps),
 *           times the share of the step the host carries (from Algorithm 1
 *           with the overheads scaled; iteration_host.h), from k traces,
 *   s_cv    the root mean square relative error of predicting each other
 *           trace's step (its own replay) from the remaining traces
 *           (leave one out; needs 3 traces, else 0.1),
 *   d       how far `at` lies outside the measured values, in octaves,
 * t Student's 97.5% quantile, its degrees of freedom those of the two
 * estimated variances (s_host from k traces: k - 1; s_cv from m left-out
 * traces: m; an assumed s_cv: none lost) by Welch–Satterthwaite
 * (iteration_interval_t; 1.96 when neither is estimated), and at least
 * ±1.96·2%; that joined in quadrature to the profiler term, up above and
 * down below (iteration_trust.h's, the overheads pooled over the traces as
 * here; none with a given set: every trace of a run shares its host's
 * profiler, a bias the spread between them cannot see). Where o->measured
 * gives steps measured without the profiler, the CPU figure is calibrated
 * on them first (iteration_calibrate.h) and used throughout; from two
 * measured traces on, the calibration's term times the host's share of
 * the step e stands in for the profiler term on both sides (a given set
 * refuses measured steps: err->field "profiles[j].measured_step"). Its
 * lower end is
 * never below the device's part of the step:
 * D·(1 - t_dev·s_dev·(1 + d)), D the step with every host overhead taken
 * as zero, s_dev its leave-one-out error as s_cv's, t_dev Student's 97.5%
 * quantile with its degrees of freedom (iteration_predict.c says why zero
 * and not the least host time the traces support). Method "kernel_names":
 * each kernel name's time per launch fitted against the parameter
 * (analysis/iteration_model.h), the first trace's own overheads or the set
 * given (the former method; also the fallback when a trace carries no
 * operator shapes, said in the warnings). Its interval has the same host
 * term and floor, its model part each step's kernel ends instead of s_cv:
 * a step's ends P_lo, P_hi with every kernel at the lower, or upper, end
 * of its 95% prediction interval, joined in quadrature to the host's
 * half-width h = t·s_host·sqrt(1 + 1/k) (t Student's 97.5% quantile with
 * k - 1 degrees of freedom; 1.96 when s_host is 0) and to the profiler term
 * of the first trace's own overheads (down·P below, up·P above):
 *   [P - sqrt((P - P_lo)² + (h·P)² + (down·P)²),
 *    P + sqrt((P_hi - P)² + (h·P)² + (up·P)²)],
 * the lower end floored at D·(1 - t_dev·s_dev·(1 + d)) as above, with D
 * and s_dev from the kernel-name models (each other trace left out of them;
 * the times of a table by kernel name as per-event device times:
 * iteration_kmodels_dev_us).
 *
 * Answer: the document of iteration_analyse() with per step "interval" and
 * "error": null, and "modelled": {"method","at","value","values",
 * "overheads","gpu_time","gpu_time_at","unmatched_share","interval":{"s_host",
 * "host_spread" (s_H),"host_share","host_p" (Kruskal–Wallis between the
 * traces' per-step host times, null when untested),"host_traces",
 * "s_cv" (operators only),"octaves","relative" (operators: t·s; kernel_names:
 * the host's h),"t","df","floor" ("device" when the device's part raised a
 * step's lower end, else null),"device_step" (D, mean over the steps),
 * "device_floor","s_dev","cpu_profiler_us" ([0, 2c]; null with a given
 * set; [c, c] calibrated),"profiler_up","profiler_down","profiler_host_faster"
 * (null calibrated)} (both methods),"calibration" (iteration_calibration_json:
 * null without measured steps; both methods),"operators":[{"name","regressor","instances",
 * "measured","predicted"}],"roofline":{"device","source","raised","seconds"}
 * or null (the device whose peaks bound each instance's time from below:
 * o->device, else the built-in the first trace's deviceProperties name;
 * execgraph/xg_opmodel.h), "kernels","skipped","models" (kernel_names only),
 * "warnings":[{"code","message",...}]}. Warning codes: extrapolation_far
 * (`at` beyond twice the largest value or below half the smallest),
 * unmatched_kernels (device time kept as measured, with its "share" of the
 * predicted step), shapes_missing (name matching used), few_traces,
 * host_time_varies (the host carries at least half of the step and the
 * traces' host times differ by more than their step-to-step noise,
 * Kruskal–Wallis p < 0.05; with its "spread" s_H, "share", "p", "traces"),
 * profiler_uncertain (iteration_trust.h), calibration_spread (in its
 * place when calibrated, iteration_calibrate.h).
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_PREDICT_H
#define PERFCAST_ANALYSIS_ITERATION_PREDICT_H

#include <jansson.h>

#include "analysis/iteration.h"

enum { ITERATION_BY_OPERATORS = 0, ITERATION_BY_KERNEL_NAMES = 1 };

/* traces[0..n) measured at x[0..n) (n >= 2, distinct); traces[0]'s steps at
 * `at`. NULL with err: err->field "at" for a bad value; *bad >= 0 names the
 * trace at fault (not the same job as traces[0], or run on another type of
 * device than traces[0] — name, compute capability or memory of their
 * deviceProperties — unless o->mixed_devices: then a mixed_devices
 * warning lists them). */
json_t *iteration_predict_at(const xg_trace *const *traces, const double *x, int n, double at,
                             const iteration_opts *o, int method, int *bad, xg_error *err);

/* The 97.5% quantile of Student's t for the interval's variance a + b:
 * a estimated from k_host traces (k_host - 1 degrees of freedom; < 2: not
 * estimated), b from m_cv left-out traces (m_cv; 0: assumed), combined by
 * Welch–Satterthwaite; *df the degrees of freedom (INFINITY: 1.96). */
double iteration_interval_t(double a, int k_host, double b, int m_cv, double *df);

#endif
