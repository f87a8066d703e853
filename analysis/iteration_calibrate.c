/*
 * iteration_calibrate.c — the profiler's CPU figure calibrated from steps
 * measured without the profiler (iteration_calibrate.h).
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_calibrate.h"
#include "analysis/iteration_host.h"

static const double grid[ITERATION_CAL_NGRID] = ITERATION_CAL_GRID;

/* The mean step of g predicted from its own overheads measured with prof
 * (seconds > 0); NAN with err set when that fails. */
static double own_step(const xg_graph *g, const xg_ov_options *prof, xg_error *err)
{
    xg_overheads ov = {0};
    if (iteration_host_own(g, prof, &ov, err) < 0)
        return NAN;
    double p = iteration_host_step(g, &ov, NULL);
    xg_overheads_free(&ov);
    if (p > 0 && isfinite(p))
        return p;
    xg_error_set(err, -1, NULL, "the critical path failed on a trace's own overheads");
    return NAN;
}

/* Checks measured[0..n): the number of finite steps, or -1 with err where
 * one is not a number > 0 (infinite or not positive). */
static int count_measured(const double *measured, int n, xg_error *err)
{
    int k = 0;
    for (int j = 0; measured && j < n; j++) {
        if (isnan(measured[j]))
            continue;
        if (!isfinite(measured[j]) || measured[j] <= 0) {
            char field[48];
            snprintf(field, sizeof field, "profiles[%d].measured_step", j);
            xg_error_set(err, -1, field, "must be the step's time measured without the "
                                         "profiler, in seconds > 0");
            return -1;
        }
        k++;
    }
    return k;
}

int iteration_calibrate(const xg_graph *const *g, int n, const double *measured,
                        const xg_ov_options *base, iteration_calibration *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    out->cpu_us = base->cpu_profiler_us;
    out->s = out->t = out->term = NAN;
    out->n = n;
    int k = count_measured(measured, n, err);
    if (k <= 0)
        return k;
    double *pred = malloc(sizeof *pred * (size_t)n * ITERATION_CAL_NGRID);
    out->error = malloc(sizeof *out->error * (size_t)n);
    if (!pred || !out->error) {
        free(pred);
        iteration_calibration_free(out);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    double best = INFINITY;
    int at = 0;
    for (int q = 0; q < ITERATION_CAL_NGRID; q++) {
        xg_ov_options prof = *base;
        prof.cpu_profiler_us = grid[q];
        double sum = 0;
        for (int j = 0; j < n; j++) {
            if (isnan(measured[j]))
                continue;
            double p = own_step(g[j], &prof, err);
            if (isnan(p)) {
                free(pred);
                iteration_calibration_free(out);
                return -1;
            }
            pred[q * n + j] = p;
            sum += pow(log(p / measured[j]), 2);
        }
        if (sum < best) {
            best = sum;
            at = q;
        }
    }
    out->traces = k;
    out->cpu_us = grid[at];
    for (int j = 0; j < n; j++)
        out->error[j] = isnan(measured[j]) ? NAN : pred[at * n + j] / measured[j] - 1;
    free(pred);
    if (k >= 2) {
        out->s = sqrt(best / (k - 1));
        out->t = gsl_cdf_tdist_Pinv(0.975, k - 1);
        out->term = out->t * out->s * sqrt(1 + 1.0 / k);
    }
    return 0;
}

void iteration_calibration_free(iteration_calibration *c)
{
    free(c->error);
    c->error = NULL;
    c->traces = 0;
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *iteration_calibration_json(const iteration_calibration *c)
{
    if (c->traces <= 0)
        return json_null();
    json_t *errors = json_array();
    for (int j = 0; j < c->n; j++)
        json_array_append_new(errors, number_or_null(c->error[j]));
    return json_pack("{s:i, s:f, s:[f, f], s:o, s:o, s:o, s:o}", "traces", c->traces,
                     "cpu_profiler_us", c->cpu_us, "grid", grid[0],
                     grid[ITERATION_CAL_NGRID - 1], "errors", errors, "s", number_or_null(c->s),
                     "t", number_or_null(c->t), "term", number_or_null(c->term));
}

json_t *iteration_calibration_warning(const iteration_calibration *c, double applied)
{
    if (c->traces < 2 || !(applied >= ITERATION_CAL_SPREAD))
        return NULL;
    return json_pack("{s:s, s:s, s:f, s:f, s:i}", "code", "calibration_spread", "message",
                     "the steps measured without the profiler differ from the traces' own "
                     "calibrated predictions by this much: the host's speed varies between "
                     "processes, and a run at the wanted size may differ as much",
                     "term", applied, "s", c->s, "traces", c->traces);
}
