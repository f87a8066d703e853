/*
 * iteration_host.h — the host (CPU) side of a step predicted at another
 * size from traces at several sizes (analysis/iteration_predict.h): the
 * overheads T1–T5 pooled over the traces with a robust centre, and how much
 * the host's time varied between the processes that made the traces, as a
 * term of the prediction's interval. Pure: no I/O.
 *
 * Each trace is one process. Its host part is measured per step as every
 * T1–T5 sample of the step summed (execgraph/xg_overheads.h:
 * xg_ov_host_steps; the profiler's overhead subtracted, outliers included:
 * time the host spent), and summarised as the median over its steps (one
 * slow step moves it little). Over the k traces:
 *   s_H   the sample standard deviation (k - 1 degrees of freedom) of the
 *         natural logarithms of the traces' host parts: the relative
 *         spread of the host's time from process to process (the host part
 *         of a job hardly changes with the batch size: its trend is not
 *         removed, which can only widen s_H);
 *   e     the share of the step the host part carries: the step's
 *         relative change per relative change of every overhead, from
 *         Algorithm 1 with the pooled overheads scaled by exp(+d) and
 *         exp(-d), e = (ln P+ - ln P-) / (2 d), d = s_H (0.1 when s_H is
 *         0): 1 for a step the host alone makes, about 0 where the device
 *         hides the host;
 *   s_host = e · s_H, the step's relative spread from the host's;
 *   p     Kruskal–Wallis's test that the traces' per-step host times come
 *         from one distribution (ranks, ties averaged and corrected; the
 *         chi-square approximation with k - 1 degrees of freedom): below
 *         0.05 the traces disagree about the host by more than its
 *         step-to-step noise within a trace. NAN when a trace has fewer
 *         than 2 steps or k < 2.
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_HOST_H
#define PERFCAST_ANALYSIS_ITERATION_HOST_H

#include "execgraph/xg_critpath.h"

typedef struct iteration_host {
    int k;          /* traces measured */
    double centre;  /* median of the traces' host parts, seconds per step */
    double s_H;     /* relative spread of the host part between traces */
    double share;   /* e: the step's share carried by the host */
    double s_host;  /* e · s_H */
    double p;       /* Kruskal–Wallis p-value; NAN: not tested */
} iteration_host;

/* Algorithm 1 on g with options co (its top ignored): each step's
 * predicted time into per[0..g->nsteps) (may be NULL), their mean
 * returned; NAN when it fails. */
double iteration_host_steps_with(const xg_graph *g, const xg_cp_options *co, double *per);

/* The mean predicted step (seconds) of g with overheads ov and device times
 * dev_us (NULL: the trace's); NAN when Algorithm 1 fails. */
double iteration_host_step(const xg_graph *g, const xg_overheads *ov, const double *dev_us);

/* The device's part of the step of g: Algorithm 1 with every overhead
 * T1–T5 of ov taken as zero (the launches follow one another as fast as the
 * device takes them; a wait for other ranks keeps its measured length, a
 * call that waits for the device still waits), device times dev_us (NULL: the trace's). Each
 * step's time into per[0..g->nsteps) (may be NULL); the mean returned,
 * NAN when Algorithm 1 fails or out of memory. */
double iteration_host_device_steps(const xg_graph *g, const xg_overheads *ov,
                                   const double *dev_us, double *per);

/* The overheads of g's own trace summarised (prof), as iteration_analyse
 * takes them when no set is given. 0, or -1 with err. */
int iteration_host_own(const xg_graph *g, const xg_ov_options *prof, xg_overheads *out,
                       xg_error *err);

/* The overheads of g[0..n) pooled with a robust centre: each trace's own
 * summary (iteration_host_own), then xg_ov_pool. 0, or -1 with err. */
int iteration_host_pool(const xg_graph *const *g, int n, const xg_ov_options *prof,
                        xg_overheads *out, xg_error *err);

/* s_H, the traces' centre and p from per-step host times: h[j][0..ns[j])
 * of trace j (seconds, > 0), j < k. Fills all of out but share and s_host
 * (0). */
void iteration_host_spread(const double *const *h, const int *ns, int k, iteration_host *out);

/* Kruskal–Wallis over groups v[j][0..ns[j]): the statistic (tie-corrected)
 * in *stat, the p-value returned (NAN when it cannot be computed). */
double iteration_host_kruskal(const double *const *v, const int *ns, int k, double *stat);

/* The host term of g[0..n) for the step of g[0] with the pooled overheads
 * ov and device times dev_us. 0, or -1 with err (out of memory). */
int iteration_host_measure(const xg_graph *const *g, int n, const xg_ov_options *prof,
                           const xg_overheads *ov, const double *dev_us, iteration_host *out,
                           xg_error *err);

#endif
