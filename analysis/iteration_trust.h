/*
 * iteration_trust.h — how far to trust a step predicted from its own trace
 * (iteration.h: `perfcast iteration`, POST .../profiles/{p}/iteration): a
 * 95% interval for each step of the run unprofiled, and the terms it is
 * made of. Predictions at another size (iteration_predict.h) have their
 * own interval and do not use this one. Pure: no I/O.
 *
 * Relative terms of the predicted step p:
 *   steps     t · s_rel · sqrt(1 + 1/n): s_rel the relative sample standard
 *             deviation of the n measured steps, t Student's 97.5% quantile
 *             with n - 1 degrees of freedom. The prediction interval of one
 *             more step of the same run: the host and the device vary from
 *             step to step, and a prediction from mean overheads stands for
 *             a typical step.
 *   profiler  the profiler's cost per event, which paper 001 §III-C takes
 *             as fixed figures (c = 2 us per CPU event, 4 us per launch)
 *             and calls empirical, varying from platform to platform. Real
 *             traces differ both ways (tests/data/gpu-h200b: a DLRM step
 *             1.0 ms slower profiled where the figures subtract 2.7 ms; a
 *             transformer step 2.2-2.5 times as slow profiled). Above:
 *             up = P(0)/P(c) - 1, P(0) the step with nothing subtracted
 *             (both figures 0). Below: down = 1 - min(P(2c), P_f)/P(c),
 *             P(2c) the step with the CPU figure at 2c, P_f the step with
 *             the trace's overheads, nothing subtracted, all
 *             ITERATION_PROFILER_HOST_MAX (4) times as fast: the most
 *             the measured hosts gained unprofiled was 2.5 times, on the
 *             host whose profiler costs less per event (DLRM at 512: 1.0
 *             ms of a step profiled against 6.3 ms on the first host,
 *             ../shared/fixtures/gpu), so a heavier profiler's host gains
 *             more. Host-bound steps reach the device floor (below) by
 *             then. P the mean
 *             predicted step with the trace's own overheads measured so.
 *             0 when the overheads come from a set (their figure was fixed
 *             when the set was measured) or c is 0 (nothing subtracted).
 *   outliers  the overheads' samples dropped as outliers (paper 001 drops
 *             them, and §IV-D finds its predictions fall short for it): the
 *             step may be longer by P_keep/P(c) - 1, P_keep the mean step
 *             with every outlier kept (through Algorithm 1, so host time the
 *             device hides adds nothing). Above only, added to the rest
 *             rather than in quadrature: it is a bias, not a spread. With
 *             a set, the trace's own overheads at the set's profiler
 *             figures, outliers kept against dropped. 0 when the overheads
 *             keep their outliers.
 *   model     Algorithm 1's own error on the steps it sees: |R/M - 1|, R
 *             the mean replayed step (the trace's overheads with nothing
 *             subtracted and every outlier kept, its kernel times), M the
 *             mean measured step.
 *   lo = max(0, p - p·hypot(down, steps, model)),
 *   hi = p + p·(outliers + hypot(up, steps, model)),
 * then lo raised to the step's device floor D·(1 - model) where that is
 * higher, never above p: D is the step with every host overhead zero
 * (Algorithm 1 with the step's kernels, what-if times included, and the
 * waits for other ranks at their measured lengths), a time no run beats
 * whatever its host does.
 *
 * With fewer than 2 steps nothing estimates the steps term: no interval,
 * no term computed (each null in the answer), and the warning
 * no_interval. Where s_rel exceeds 10% the warning steps_vary says the
 * steps differ that much. Where the profiler term reaches 25% on either
 * side, profiler_uncertain says that what the profiler cost the host
 * decides the step (host-bound steps: the transformer at batch 8 on
 * tests/data/gpu-h200b, predicted 56-86% long). The warnings are the
 * prediction's: a view without it (the breakdown, iteration_request.h)
 * leaves them out.
 *
 * On the 12 traces made on an H200 (../shared/fixtures/gpu) the median of
 * each trace's 20 unprofiled steps, and each of the 240, falls inside the
 * mean interval of its steps; on the 51 of a second H200 host
 * (tests/data/gpu-h200b) every median and 1,001 of the 1,020 steps, and
 * all 340 of a run there with Python stacks recorded (a heavier profiler;
 * bench_gputrace prints the figures).
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_TRUST_H
#define PERFCAST_ANALYSIS_ITERATION_TRUST_H

#include <jansson.h>

#include "execgraph/xg_critpath.h"

/* The relative standard deviation of the measured steps above which the
 * answer warns steps_vary. */
#define ITERATION_STEPS_VARY 0.10

/* How many times as fast as its profiled self the host may run unprofiled
 * (the profiler term's lower end). */
#ifndef ITERATION_PROFILER_HOST_MAX
#define ITERATION_PROFILER_HOST_MAX 4.0
#endif

/* The profiler term (either side) from which the answer warns
 * profiler_uncertain: the host makes much of the step, and what the
 * profiler cost it decides the prediction. */
#define ITERATION_PROFILER_UNCERTAIN 0.25

/* The codes of the interval's warnings (in "warnings" as "code: ..."). */
#define ITERATION_WARN_NO_INTERVAL "no_interval"
#define ITERATION_WARN_STEPS_VARY "steps_vary"
#define ITERATION_WARN_PROFILER "profiler_uncertain"

typedef struct iteration_trust {
    int steps;          /* n measured steps */
    double spread;      /* s_rel; NAN with fewer than 2 steps */
    double t;           /* Student's 97.5% quantile, n - 1 degrees of freedom */
    double steps_term;  /* t · s_rel · sqrt(1 + 1/n) */
    double cpu_us[2];   /* the CPU figure's range [0, 2c]; NAN, NAN: no profiler term */
    double up, down;    /* the profiler term above and below; NAN without an interval */
    double outliers;    /* the outliers term (above only); NAN without an interval */
    double model;       /* |R/M - 1|; NAN without an interval */
    double *lo, *hi;    /* per step: the interval (seconds); NULL without one */
    int floored;        /* steps whose lower end the device floor set */
} iteration_trust;

/* The interval of each step of g predicted in r with overheads ov and the
 * options co (r came from xg_critpath(g, co)); own: ov was measured on
 * this trace with prof, so the profiler term applies. 0, or -1 with err
 * (out of memory, or Algorithm 1 failing on a variant). */
int iteration_trust_compute(const xg_graph *g, const xg_cp_result *r, const xg_cp_options *co,
                            int own, const xg_ov_options *prof, iteration_trust *out,
                            xg_error *err);
void iteration_trust_free(iteration_trust *t);

/* The steps of a prediction with its overheads measured with the profiler
 * figures prof: steps[k] the mean step with every overhead times
 * scales[k], k < n (the overheads measured once for all n). 0, or -1 with
 * err. */
typedef int (*iteration_steps_fn)(const void *arg, const xg_ov_options *prof,
                                  const double *scales, int n, double *steps, xg_error *err);

/* The profiler term (above) of a step p predicted with the figures prof,
 * whatever overheads `steps` measures (a trace's own, or pooled over
 * traces: iteration_predict.h): *up and *down relative to p, *cpu_hi 2c.
 * Without a term (c = 0, or p not > 0): 0 with *up = *down = 0 and
 * *cpu_hi NaN. Else 0, or -1 with err. */
int iteration_profiler_sides(iteration_steps_fn steps, const void *arg,
                             const xg_ov_options *prof, double p, double *up, double *down,
                             double *cpu_hi, xg_error *err);

/* Writes each step's "interval":[lo, hi] (null without one) into the
 * answer's steps, its "interval" object {"steps","step_spread","t",
 * "steps_term","cpu_profiler_us":[0, 2c]|null,"profiler_up",
 * "profiler_down","outliers","model","floored","profiler_host_faster"}
 * (every term null without an interval) and its coded warnings
 * (no_interval, steps_vary, profiler_uncertain) into coded, and as text
 * into the answer's "warnings". */
void iteration_trust_json(const iteration_trust *t, json_t *doc, json_t *coded);

/* The coded warning profiler_uncertain where up or down (the profiler
 * term's sides, relative to the step) reaches ITERATION_PROFILER_UNCERTAIN:
 * {"code","message","up","down"}; NULL below it, without a term (NaN), or
 * out of memory. Predictions at another size (iteration_predict.h) give
 * it too. */
json_t *iteration_profiler_warning(double up, double down);

#endif
