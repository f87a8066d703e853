/*
 * iteration_calibrate.h — the profiler's cost per event on the host that
 * made the traces, calibrated from steps measured there without the
 * profiler, for a step predicted at another size (iteration_predict.h).
 * Pure: no I/O.
 *
 * Paper 001 §III-C subtracts fixed figures for the profiler's own cost (c =
 * 2 us per CPU event, 4 us per launch) and calls them empirical. Real hosts
 * differ both ways (tests/data/gpu-h200b: DLRM's own steps predicted 11-31%
 * short with c = 2 on a host whose profiler costs little), and a prediction
 * at another size pools every trace's overheads, so the traces cannot show
 * that bias to each other. A user who knows the step time of some of the
 * traced runs without the profiler (a training log's step time) can give
 * it: for each CPU figure c of ITERATION_CAL_GRID, each such trace's own
 * step is predicted (its overheads measured on it with c, the GPU figure
 * as given, outliers as given; Algorithm 1 with its own kernel times), and
 * the c with the least sum of squared log errors against the measured
 * steps is taken for the whole prediction.
 *
 * What is left, the log errors e_j at that c, is what a calibrated
 * prediction misses a measured step of this host by: per-process host
 * speed and Algorithm 1's own error. With k >= 2 measured traces it gives
 * the interval's term in place of the profiler term:
 *   term = t · s · sqrt(1 + 1/k),  s = sqrt(sum e_j² / (k - 1)),
 * t Student's 97.5% quantile with k - 1 degrees of freedom (one figure
 * fitted). With one measured trace nothing estimates s: the profiler term
 * stays, around the calibrated figure.
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_CALIBRATE_H
#define PERFCAST_ANALYSIS_ITERATION_CALIBRATE_H

#include <jansson.h>

#include "execgraph/xg_critpath.h"

/* The CPU figures tried (us per event), and how many. */
#define ITERATION_CAL_GRID {0, 0.5, 1, 1.5, 2, 3, 4, 5, 6, 8}
#define ITERATION_CAL_NGRID 10

/* The calibration's term (either side) from which the answer warns
 * calibration_spread. */
#define ITERATION_CAL_SPREAD 0.25

typedef struct iteration_calibration {
    int traces;      /* k: traces with a measured step (0: no calibration) */
    double cpu_us;   /* the CPU figure taken */
    double s;        /* s above; NAN with k < 2 */
    double t;        /* Student's 97.5% quantile, k - 1 degrees of freedom; NAN with k < 2 */
    double term;     /* t · s · sqrt(1 + 1/k); NAN with k < 2 */
    int n;           /* traces in all */
    double *error;   /* per trace [0, n): own prediction / measured - 1 at cpu_us, NAN
                        where none was measured */
} iteration_calibration;

/* measured[j] the step of g[j] measured without the profiler (seconds; NAN:
 * not known), j < n; base the figures otherwise (its GPU figure and
 * outlier treatment kept). With no finite measured step: out->traces 0 and
 * nothing else done. A measured step not > 0: -1 with err->field
 * "profiles[j].measured_step". Else 0, or -1 with err (out of memory, or
 * Algorithm 1 failing on a trace). */
int iteration_calibrate(const xg_graph *const *g, int n, const double *measured,
                        const xg_ov_options *base, iteration_calibration *out, xg_error *err);
void iteration_calibration_free(iteration_calibration *c);

/* {"traces","cpu_profiler_us","grid":[lo, hi],"errors":[e or null per
 * trace],"s","t","term"} (s, t, term null with one trace); json null with
 * no calibration. */
json_t *iteration_calibration_json(const iteration_calibration *c);

/* The coded warning calibration_spread where the term as a prediction
 * applies it (`applied`: iteration_predict.h scales it by the share of the
 * step the host carries) reaches ITERATION_CAL_SPREAD:
 * {"code","message","term" (applied),"s","traces"}; NULL below it or
 * without a term. */
json_t *iteration_calibration_warning(const iteration_calibration *c, double applied);

#endif
