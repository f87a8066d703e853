/*
 * test_iteration_calibrate.c — the profiler's CPU figure calibrated from
 * steps measured without the profiler (analysis/iteration_calibrate.h) and
 * its use by a step predicted at another size (iteration_predict.h), on the
 * real DLRM traces of tests/data/gpu:
 *   - steps made to be what the traces' own predictions give with 3 us per
 *     CPU event: the calibration finds 3 (on the grid) with every error 0,
 *     s 0 and term 0;
 *   - steps 1.3 times what the figure 0 gives: no figure reaches them, the
 *     calibration stops at the grid's lower end, each error 1/1.3 - 1, s =
 *     sqrt(2·ln(1.3)² / 1), term = t(1 df)·s·sqrt(1 + 1/2);
 *   - one measured trace: its figure, no spread (s, t, term NaN); none:
 *     no calibration; a step of -1 s: refused naming
 *     profiles[1].measured_step;
 *   - DLRM at 4096 from the five other sizes with their measured steps
 *     (truth.json): the answer's calibration is the one computed here, its
 *     centre the prediction made with that CPU figure and no steps, its
 *     profiler term the calibration's term times the host's share of the
 *     step (up = down, cpu_profiler_us [c, c], no host_faster), and each
 *     step's interval p·(1 ± hypot(relative, term·share)) unless floored;
 *     with an overhead set given, the steps are refused naming
 *     profiles[0].measured_step.
 */
#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration.h"
#include "analysis/iteration_calibrate.h"
#include "analysis/iteration_host.h"
#include "analysis/iteration_predict.h"
#include "ingest/kineto_xg.h"
#include "tests/check.h"
#include "tests/trace_load.h"
#include "tests/warning_code.h"

#define NT 6
static const double sizes[NT] = {2048, 512, 1024, 8192, 16384, 4096};
/* truth.json's medians of unprofiled_sync_ms, seconds */
static const double truth[NT] = {9.0208e-3, 5.7121e-3, 10.0423e-3, 8.2539e-3, 10.2137e-3,
                                 6.9068e-3};

static xg_trace traces[NT];
static xg_graph graphs[NT];
static const xg_graph *gp[NT];
static const xg_trace *tp[NT];

static int load_all(void)
{
    for (int k = 0; k < NT; k++) {
        char path[96];
        xg_error err;
        snprintf(path, sizeof path, "tests/data/gpu/dlrm_bs%g.json.gz", sizes[k]);
        if (trace_load_file(path, &traces[k]) < 0 || xg_graph_build(&traces[k], &graphs[k], &err) < 0)
            return check(0, "%s", path), -1;
        gp[k] = &graphs[k];
        tp[k] = &traces[k];
    }
    return 0;
}

/* The mean step of trace k predicted from its own overheads with CPU figure c. */
static double own(int k, double c)
{
    xg_ov_options prof = {c, 4, 0};
    xg_overheads ov;
    xg_error err;
    if (iteration_host_own(gp[k], &prof, &ov, &err) < 0)
        return NAN;
    double p = iteration_host_step(gp[k], &ov, NULL);
    xg_overheads_free(&ov);
    return p;
}

static void test_exact(void)
{
    double m[2] = {own(0, 3), own(1, 3)};
    xg_ov_options base = {2, 4, 0};
    iteration_calibration cal;
    xg_error err;
    check(iteration_calibrate(gp, 2, m, &base, &cal, &err) == 0, "calibrate: %s", err.msg);
    check(cal.traces == 2 && cal.cpu_us == 3, "steps of the 3 us figure give 3 us: %d, %g",
          cal.traces, cal.cpu_us);
    check(fabs(cal.error[0]) < 1e-12 && fabs(cal.error[1]) < 1e-12 && cal.s < 1e-12 &&
              cal.term < 1e-10,
          "their errors 0: %g %g, s %g, term %g", cal.error[0], cal.error[1], cal.s, cal.term);
    iteration_calibration_free(&cal);
}

static void test_edge(void)
{
    double m[2] = {1.3 * own(0, 0), 1.3 * own(1, 0)};
    xg_ov_options base = {2, 4, 0};
    iteration_calibration cal;
    xg_error err;
    check(iteration_calibrate(gp, 2, m, &base, &cal, &err) == 0, "calibrate: %s", err.msg);
    double s = sqrt(2 * pow(log(1.3), 2)), t = gsl_cdf_tdist_Pinv(0.975, 1);
    check(cal.cpu_us == 0, "steps longer than any figure gives: the grid's end, 0 us (%g)",
          cal.cpu_us);
    check(fabs(cal.error[0] - (1 / 1.3 - 1)) < 1e-12 && fabs(cal.error[1] - (1 / 1.3 - 1)) < 1e-12,
          "each error 1/1.3 - 1: %.6f %.6f", cal.error[0], cal.error[1]);
    check(fabs(cal.s - s) < 1e-12 && fabs(cal.t - t) < 1e-9 &&
              fabs(cal.term - t * s * sqrt(1.5)) < 1e-9,
          "s %.6f (by hand %.6f), t %.4f (%.4f), term %.4f (%.4f)", cal.s, s, cal.t, t, cal.term,
          t * s * sqrt(1.5));
    json_t *w = iteration_calibration_warning(&cal, cal.term);
    check(w && !strcmp(json_string_value(json_object_get(w, "code")), "calibration_spread"),
          "a term of %.0f%% warns calibration_spread", 100 * cal.term);
    json_decref(w);
    check(iteration_calibration_warning(&cal, 0.2) == NULL, "applied at 20%%: no warning");
    iteration_calibration_free(&cal);
}

static void test_few_and_bad(void)
{
    xg_ov_options base = {2, 4, 0};
    iteration_calibration cal;
    xg_error err;
    double one[2] = {own(0, 1), NAN};
    check(iteration_calibrate(gp, 2, one, &base, &cal, &err) == 0 && cal.traces == 1 &&
              cal.cpu_us == 1 && isnan(cal.s) && isnan(cal.t) && isnan(cal.term) &&
              isnan(cal.error[1]),
          "one measured trace: its figure (%g), no spread", cal.cpu_us);
    json_t *j = iteration_calibration_json(&cal);
    check(json_is_null(json_object_get(j, "term")) &&
              json_is_null(json_array_get(json_object_get(j, "errors"), 1)) &&
              json_number_value(json_array_get(json_object_get(j, "grid"), 1)) == 8,
          "its JSON: term null, the unmeasured trace's error null, the grid to 8 us");
    json_decref(j);
    check(iteration_calibration_warning(&cal, 1.0) == NULL, "one trace: no spread to warn of");
    iteration_calibration_free(&cal);
    double none[2] = {NAN, NAN};
    check(iteration_calibrate(gp, 2, none, &base, &cal, &err) == 0 && cal.traces == 0 &&
              cal.cpu_us == 2,
          "no measured step: no calibration, the figure as given");
    json_t *nj = iteration_calibration_json(&cal);
    check(json_is_null(nj), "no calibration: null");
    json_decref(nj);
    iteration_calibration_free(&cal);
    double bad[2] = {own(0, 2), -1e-3};
    check(iteration_calibrate(gp, 2, bad, &base, &cal, &err) == -1 &&
              !strcmp(err.field, "profiles[1].measured_step"),
          "a negative step refused naming it: %s", err.field);
}

static double num(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void test_predict(void)
{
    /* DLRM at 4096 (index 5) from the other five, their measured steps given */
    double m[5];
    memcpy(m, truth, sizeof m);
    xg_ov_options base = {2, 4, 0};
    iteration_calibration cal;
    xg_error err;
    int bad;
    check(iteration_calibrate(gp, 5, m, &base, &cal, &err) == 0 && cal.traces == 5,
          "calibrate on five: %s", err.msg);
    iteration_opts o = {.prof = base, .measured = m};
    json_t *doc = iteration_predict_at(tp, sizes, 5, 4096, &o, ITERATION_BY_OPERATORS, &bad, &err);
    iteration_opts plain = {.prof = {cal.cpu_us, 4, 0}};
    json_t *ref = iteration_predict_at(tp, sizes, 5, 4096, &plain, ITERATION_BY_OPERATORS, &bad,
                                       &err);
    check(doc && ref, "both predictions: %s", err.msg);
    if (!doc || !ref) {
        json_decref(doc);
        json_decref(ref);
        iteration_calibration_free(&cal);
        return;
    }
    const json_t *mod = json_object_get(doc, "modelled");
    const json_t *cj = json_object_get(mod, "calibration"), *iv = json_object_get(mod, "interval");
    check(num(cj, "cpu_profiler_us") == cal.cpu_us && num(cj, "traces") == 5 &&
              fabs(num(cj, "term") - cal.term) < 1e-12,
          "the answer's calibration: %g us, term %g (here %g us, %g)", num(cj, "cpu_profiler_us"),
          num(cj, "term"), cal.cpu_us, cal.term);
    const json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
    double p = num(s0, "predicted");
    double pref = num(json_array_get(json_object_get(ref, "steps"), 0), "predicted");
    check(fabs(p - pref) <= 1e-12 * pref, "the centre is the prediction with %g us: %.6f ms, %.6f ms",
          cal.cpu_us, 1e3 * p, 1e3 * pref);
    double share = num(iv, "host_share"), term = cal.term * fmin(1, share);
    check(fabs(num(iv, "profiler_up") - term) < 1e-12 &&
              fabs(num(iv, "profiler_down") - term) < 1e-12 &&
              json_number_value(json_array_get(json_object_get(iv, "cpu_profiler_us"), 0)) ==
                  cal.cpu_us &&
              json_is_null(json_object_get(iv, "profiler_host_faster")),
          "the profiler term is the calibration's times the host's share %.3f: %.4f (up %.4f)",
          share, term, num(iv, "profiler_up"));
    double rel = hypot(num(iv, "relative"), term);
    const json_t *e = json_object_get(s0, "interval");
    double lo = json_number_value(json_array_get(e, 0)), hi = json_number_value(json_array_get(e, 1));
    check(fabs(hi - p * (1 + rel)) < 1e-9 * p,
          "upper end p(1 + hypot(relative, term)): %.4f ms, by hand %.4f", 1e3 * hi,
          1e3 * p * (1 + rel));
    check(lo >= p * (1 - rel) - 1e-9 * p && lo <= p,
          "lower end at p(1 - hypot) or raised by the floor: %.4f ms (%.4f)", 1e3 * lo,
          1e3 * p * (1 - rel));
    check(lo <= truth[5] && truth[5] <= hi, "the measured %.3f ms inside [%.3f, %.3f]",
          1e3 * truth[5], 1e3 * lo, 1e3 * hi);
    json_decref(doc);
    json_decref(ref);
    /* an overhead set fixes the figure: the steps are refused */
    xg_overheads set;
    check(iteration_host_own(gp[0], &base, &set, &err) == 0, "a set");
    iteration_opts given = {.prof = base, .measured = m, .ov = &set, .ov_source = "file"};
    json_t *no = iteration_predict_at(tp, sizes, 5, 4096, &given, ITERATION_BY_OPERATORS, &bad, &err);
    check(!no && !strcmp(err.field, "profiles[0].measured_step"),
          "with a set: refused naming profiles[0].measured_step (%s)", err.field);
    json_decref(no);
    xg_overheads_free(&set);
    iteration_calibration_free(&cal);
}

int main(void)
{
    if (load_all() == 0) {
        test_exact();
        test_edge();
        test_few_and_bad();
        test_predict();
    }
    for (int k = 0; k < NT; k++) {
        xg_graph_free(&graphs[k]);
        xg_trace_free(&traces[k]);
    }
    return check_summary();
}
