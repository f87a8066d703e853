/*
 * iteration_trust.c — the interval of a step predicted from its own trace
 * (iteration_trust.h): the measured steps' spread, the profiler's
 * overhead taken over a range, Algorithm 1's error on its own trace, and
 * the device floor.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "analysis/iteration_host.h"
#include "analysis/iteration_trust.h"

/* Mean and relative sample standard deviation of the measured steps. */
static void measured_spread(const xg_cp_result *r, double *mean, double *rel)
{
    double s = 0, ss = 0;
    for (int i = 0; i < r->nsteps; i++)
        s += r->steps[i].measured;
    *mean = r->nsteps ? s / r->nsteps : NAN;
    for (int i = 0; i < r->nsteps; i++)
        ss += (r->steps[i].measured - *mean) * (r->steps[i].measured - *mean);
    *rel = r->nsteps >= 2 && *mean > 0 ? sqrt(ss / (r->nsteps - 1)) / *mean : NAN;
}

/* The mean steps of g with its own overheads measured with prof, times
 * scales[0..n) (1: as measured), the other options of co (kt and dev_us
 * only when whatif) into steps[0..n). 0, or -1 with err (out of memory, or
 * Algorithm 1 failed). */
static int own_steps(const xg_graph *g, const xg_cp_options *co, int whatif,
                     const xg_ov_options *prof, const double *scales, int n, double *steps,
                     xg_error *err)
{
    xg_overheads ov = {0};
    if (iteration_host_own(g, prof, &ov, err) < 0)
        return -1;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        xg_overheads scaled = {0};
        if (scales[k] != 1 && xg_ov_scaled(&ov, scales[k], &scaled) < 0) {
            xg_error_set(err, -1, NULL, "out of memory");
            rc = -1;
            break;
        }
        xg_cp_options o = {.ov = scales[k] != 1 ? &scaled : &ov,
                           .launch_gap_us = co->launch_gap_us};
        if (whatif) {
            o.kt = co->kt;
            o.nkt = co->nkt;
            o.dev_us = co->dev_us;
        }
        steps[k] = iteration_host_steps_with(g, &o, NULL);
        xg_overheads_free(&scaled);
        if (isnan(steps[k])) {
            xg_error_set(err, -1, NULL, "the critical path failed on the trace's own overheads");
            rc = -1;
        }
    }
    xg_overheads_free(&ov);
    return rc;
}

/* own_steps at one scale, 1. */
static int own_step(const xg_graph *g, const xg_cp_options *co, int whatif,
                    const xg_ov_options *prof, double *mean, xg_error *err)
{
    static const double one = 1;
    return own_steps(g, co, whatif, prof, &one, 1, mean, err);
}

/* The trace's own steps with its what-ifs, as iteration_profiler_sides
 * measures them. */
typedef struct own_arg {
    const xg_graph *g;
    const xg_cp_options *co;
} own_arg;

static int own_steps_fn(const void *arg, const xg_ov_options *prof, const double *scales, int n,
                        double *steps, xg_error *err)
{
    const own_arg *a = arg;
    return own_steps(a->g, a->co, 1, prof, scales, n, steps, err);
}

int iteration_profiler_sides(iteration_steps_fn steps, const void *arg,
                             const xg_ov_options *prof, double p, double *up, double *down,
                             double *cpu_hi, xg_error *err)
{
    *up = *down = 0;
    *cpu_hi = NAN;
    double c = prof->cpu_profiler_us >= 0 ? prof->cpu_profiler_us : 2;
    if (!(c > 0) || !(p > 0))
        return 0;
    /* nothing subtracted (both figures 0): as measured, and the host
     * ITERATION_PROFILER_HOST_MAX times as fast; the CPU figure at 2c */
    const double scales[2] = {1, 1.0 / ITERATION_PROFILER_HOST_MAX};
    double raw[2], p2;
    xg_ov_options q = *prof;
    q.cpu_profiler_us = 0;
    q.gpu_profiler_us = 0;
    if (steps(arg, &q, scales, 2, raw, err) < 0)
        return -1;
    q.cpu_profiler_us = 2 * c;
    q.gpu_profiler_us = prof->gpu_profiler_us;
    if (steps(arg, &q, scales, 1, &p2, err) < 0)
        return -1;
    *up = fmax(0, raw[0] / p - 1);
    *down = fmax(0, 1 - fmin(p2, raw[1]) / p);
    *cpu_hi = 2 * c;
    return 0;
}

/* The profiler term with the trace's own overheads. */
static int profiler_term(const xg_graph *g, const xg_cp_options *co, const xg_ov_options *prof,
                         double p, iteration_trust *out, xg_error *err)
{
    own_arg a = {g, co};
    double up, down, hi;
    if (iteration_profiler_sides(own_steps_fn, &a, prof, p, &up, &down, &hi, err) < 0)
        return -1;
    if (isnan(hi))
        return 0;
    out->cpu_us[0] = 0;
    out->cpu_us[1] = hi;
    out->up = up;
    out->down = down;
    return 0;
}

/* The outliers term: the step with every outlier of the overheads kept,
 * against the same without them, both with the trace's own overheads at
 * the profiler figures of the overheads used (p: the prediction itself
 * when those are the trace's own). */
static int outliers_term(const xg_graph *g, const xg_cp_options *co, int own, double p,
                         iteration_trust *out, xg_error *err)
{
    const xg_overheads *ov = co->ov;
    if (ov->keep_outliers)
        return 0;
    xg_ov_options q = {.cpu_profiler_us = ov->cpu_profiler_us,
                       .gpu_profiler_us = ov->gpu_profiler_us};
    double pd = p, pk;
    if (!own && own_step(g, co, 1, &q, &pd, err) < 0)
        return -1;
    q.keep_outliers = 1;
    if (own_step(g, co, 1, &q, &pk, err) < 0)
        return -1;
    out->outliers = pd > 0 ? fmax(0, pk / pd - 1) : 0;
    return 0;
}

/* Each step's device floor D (every overhead zero) into d. */
static int device_steps(const xg_graph *g, const xg_cp_options *co, double *d, xg_error *err)
{
    xg_overheads zero;
    if (xg_ov_scaled(co->ov, 0, &zero) < 0) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    xg_cp_options o = *co;
    o.ov = &zero;
    double m = iteration_host_steps_with(g, &o, d);
    xg_overheads_free(&zero);
    if (isnan(m)) {
        xg_error_set(err, -1, NULL, "the critical path failed without overheads");
        return -1;
    }
    return 0;
}

static void set_ends(const xg_cp_result *r, const double *floor, iteration_trust *out)
{
    for (int i = 0; i < r->nsteps; i++) {
        double p = r->steps[i].predicted;
        double lo = fmax(0, p - p * hypot(hypot(out->down, out->steps_term), out->model));
        double hi = p + p * (out->outliers + hypot(hypot(out->up, out->steps_term), out->model));
        double f = floor[i] * (1 - out->model);
        if (isfinite(f) && f > lo) {
            lo = fmin(p, f);
            out->floored++;
        }
        out->lo[i] = lo;
        out->hi[i] = hi;
    }
}

int iteration_trust_compute(const xg_graph *g, const xg_cp_result *r, const xg_cp_options *co,
                            int own, const xg_ov_options *prof, iteration_trust *out,
                            xg_error *err)
{
    *out = (iteration_trust){.steps = r->nsteps, .t = NAN, .steps_term = NAN,
                             .cpu_us = {NAN, NAN}, .up = NAN, .down = NAN, .outliers = NAN,
                             .model = NAN};
    double mean;
    measured_spread(r, &mean, &out->spread);
    if (r->nsteps < 2 || isnan(out->spread))
        return 0;
    out->up = out->down = out->outliers = out->model = 0;
    out->t = gsl_cdf_tdist_Pinv(0.975, r->nsteps - 1);
    out->steps_term = out->t * out->spread * sqrt(1 + 1.0 / r->nsteps);
    double p = 0;
    for (int i = 0; i < r->nsteps; i++)
        p += r->steps[i].predicted / r->nsteps;
    if ((own && profiler_term(g, co, prof, p, out, err) < 0) ||
        outliers_term(g, co, own, p, out, err) < 0)
        return -1;
    xg_ov_options replay = {.cpu_profiler_us = 0, .gpu_profiler_us = 0, .keep_outliers = 1};
    double rmean;
    if (own_step(g, co, 0, &replay, &rmean, err) < 0)
        return -1;
    out->model = mean > 0 ? fabs(rmean / mean - 1) : 0;
    size_t n = (size_t)r->nsteps;
    double *floor = malloc(n * sizeof *floor);
    out->lo = malloc(n * sizeof *out->lo);
    out->hi = malloc(n * sizeof *out->hi);
    int rc = -1;
    if (!floor || !out->lo || !out->hi)
        xg_error_set(err, -1, NULL, "out of memory");
    else if (device_steps(g, co, floor, err) == 0) {
        set_ends(r, floor, out);
        rc = 0;
    }
    free(floor);
    if (rc < 0)
        iteration_trust_free(out);
    return rc;
}

void iteration_trust_free(iteration_trust *t)
{
    free(t->lo);
    free(t->hi);
    t->lo = t->hi = NULL;
}

json_t *iteration_profiler_warning(double up, double down)
{
    if (!(fmax(up, down) >= ITERATION_PROFILER_UNCERTAIN))
        return NULL;
    char msg[600];
    snprintf(msg, sizeof msg,
             "the host makes much of this step, and what the profiler cost it per event is not "
             "known (paper 001's fixed figures differ from measured hosts both ways): the step "
             "run unprofiled may be up to %.0f%% shorter or %.0f%% longer than predicted; the "
             "interval carries it. Profiling without with_stack and record_shapes, or a trace "
             "whose unprofiled step time is known, narrows it",
             100 * down, 100 * up);
    return json_pack("{s:s, s:s, s:f, s:f}", "code", ITERATION_WARN_PROFILER, "message", msg,
                     "up", up, "down", down);
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

void iteration_trust_json(const iteration_trust *t, json_t *doc, json_t *coded)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "steps"), i, s)
        json_object_set_new(s, "interval", t->lo && (int)i < t->steps
                                               ? json_pack("[f, f]", t->lo[i], t->hi[i])
                                               : json_null());
    json_t *iv = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i}", "steps", t->steps,
                           "step_spread", number_or_null(t->spread), "t", number_or_null(t->t),
                           "steps_term", number_or_null(t->steps_term), "cpu_profiler_us",
                           isfinite(t->cpu_us[1]) ? json_pack("[f, f]", t->cpu_us[0], t->cpu_us[1])
                                                  : json_null(),
                           "profiler_up", number_or_null(t->up), "profiler_down",
                           number_or_null(t->down), "outliers", number_or_null(t->outliers),
                           "model", number_or_null(t->model), "floored", t->floored);
    json_object_set_new(iv, "profiler_host_faster", isfinite(t->cpu_us[1])
                                                        ? json_real(ITERATION_PROFILER_HOST_MAX)
                                                        : json_null());
    json_object_set_new(doc, "interval", iv);
    json_t *text = json_object_get(doc, "warnings");
    int vary = isfinite(t->spread) && t->spread > ITERATION_STEPS_VARY;
    if (!t->lo)
        json_array_append_new(text, json_string(ITERATION_WARN_NO_INTERVAL
                                                ": the trace has fewer than 2 steps; "
                                                "the prediction has no interval"));
    if (vary)
        json_array_append_new(text, json_sprintf(ITERATION_WARN_STEPS_VARY
                                                 ": the measured steps differ by "
                                                 "%.1f%% (relative standard deviation)",
                                                 100 * t->spread));
    if (!t->lo)
        json_array_append_new(coded, json_pack("{s:s, s:s}", "code", ITERATION_WARN_NO_INTERVAL,
                                               "message",
                                               "the trace has fewer than 2 steps: nothing "
                                               "measures how much a step varies, so the "
                                               "prediction has no interval; profile several "
                                               "steps (torch.profiler.schedule)"));
    json_t *pw = iteration_profiler_warning(t->up, t->down);
    if (pw) {
        json_array_append_new(text, json_sprintf(ITERATION_WARN_PROFILER
                                                 ": what the profiler cost the host decides the "
                                                 "step: up to %.0f%% shorter, %.0f%% longer",
                                                 100 * t->down, 100 * t->up));
        json_array_append_new(coded, pw);
    }
    if (vary)
        json_array_append_new(coded, json_pack("{s:s, s:s, s:f}", "code",
                                               ITERATION_WARN_STEPS_VARY, "message",
                                               "the measured steps differ from one another by "
                                               "more than 10% (relative standard deviation): "
                                               "the prediction stands for a typical step and "
                                               "its interval is wide; profile more steps",
                                               "spread", t->spread));
}
