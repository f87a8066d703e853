/*
 * test_iteration_trust.c — the interval of a step predicted from its own
 * trace (analysis/iteration_trust.h), by hand and recomputed independently:
 *   - a hand-made trace of three steps, each one op "B" without launches
 *     running the whole step: 100, 110 and 120 us. With no profiler
 *     overhead the only samples are T5 {100, 110, 120} (T1 gaps 0): every
 *     step is predicted 110 us; the measured steps' relative standard
 *     deviation is 10/110, t(2) = 4.302653, so the steps term is
 *     4.302653 · (1/11) · sqrt(4/3) = 0.451630 and the interval
 *     110 · (1 -+ 0.451630) = [60.321, 159.679] us (no profiler term, no
 *     outliers with 3 samples, the replay exact, no device work to floor);
 *   - the same with a CPU profiler overhead of 1 us: samples 99, 109, 119,
 *     every step 109 us; with nothing subtracted 110, at 2 us 108, the
 *     raw host 4 times as fast 27.5: up = 110/109 - 1 and
 *     down = 1 - min(108, 27.5)/109, each joined to the steps term in
 *     quadrature;
 *   - the hand trace analysed with its breakdown and efficiency (as the CLI
 *     and HTTP do): a trace without kernels analysed whole (clean under
 *     UBSan);
 *   - one step: no interval, the warning no_interval; no term of the
 *     interval computed, so each null rather than 0 (flops_small.json,
 *     whose replay is 40% short of its measured step: a "model" of 0
 *     would be false);
 *   - a real trace (tests/data/gpu/dlrm_bs1024, host-bound, its steps
 *     12.3-21.8 ms): each term recomputed from analyses run with the other
 *     settings (nothing subtracted, the CPU figure at 4 us, the raw host
 *     4 times as fast, outliers kept, the replay), and
 *     each step's ends from them; the measured unprofiled steps
 *     (truth.json) inside, and steps_vary warned; its own overheads given
 *     as a set: no profiler term, the same outliers term; the breakdown
 *     view of the same analysis (GET .../breakdown) without the
 *     prediction's warnings steps_vary and no_interval;
 *   - what-if kernel times on a device-bound trace (ResNet-18 at 256, its
 *     convolutions and batch norms at a tenth, or ten times, their
 *     times): each step inside its interval, and the lower end the
 *     formula's or the device floor taken with the what-if times (the step
 *     with every overhead 0, from an empty overhead set, less the model
 *     term): at a tenth a floor of the measured times (about 47 ms) would
 *     close the lower end onto the 18 ms step;
 *   - a prediction at another size (ResNet-18 at 256 from 128, 64, 32)
 *     keeps its own interval, with no "interval" object from this one.
 */
#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/iteration.h"
#include "analysis/iteration_host.h"
#include "analysis/iteration_trust.h"
#include "analysis/iteration_predict.h"
#include "analysis/iteration_request.h"
#include "ingest/kineto_xg.h"
#include "tests/check.h"
#include "tests/warning_code.h"
#include "tests/trace_load.h"

#define US 1e-6

/* Steps of one op "B" each, running the whole step, of durs[0..n) us. */
static const char *steps_trace(const double *durs, int n)
{
    static char buf[4096];
    int k = snprintf(buf, sizeof buf, "{\"traceEvents\":[");
    double ts = 0;
    for (int i = 0; i < n; i++) {
        k += snprintf(buf + k, sizeof buf - (size_t)k,
                      "%s{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
                      "\"pid\":1,\"tid\":1,\"ts\":%g,\"dur\":%g},"
                      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"B\",\"pid\":1,\"tid\":1,"
                      "\"ts\":%g,\"dur\":%g}",
                      i ? "," : "", i + 1, ts, durs[i], ts, durs[i]);
        ts += durs[i];
    }
    snprintf(buf + k, sizeof buf - (size_t)k, "]}");
    return buf;
}

static int has_code(const json_t *doc, const char *code)
{
    return warning_has_code(json_object_get(json_object_get(doc, "summary"), "warnings"), code);
}

static double ivnum(const json_t *doc, const char *key)
{
    return json_number_value(json_object_get(json_object_get(doc, "interval"), key));
}

static double end_of(const json_t *step, int which)
{
    return json_number_value(json_array_get(json_object_get(step, "interval"), (size_t)which));
}

static json_t *analyse(const xg_trace *t, double cpu, double gpu, int keep)
{
    iteration_opts o = {.prof = {cpu, gpu, keep}};
    xg_error err;
    json_t *doc = iteration_analyse(t, &o, &err);
    check(doc != NULL, "analysed: %s", doc ? "" : err.msg);
    return doc;
}

static void test_hand(void)
{
    const double durs[3] = {100, 110, 120};
    xg_trace t;
    if (trace_load_text(steps_trace(durs, 3), &t, "hand") != 0) {
        check(0, "hand trace");
        return;
    }
    double t2 = 4.302652729749464, k = t2 * (1.0 / 11) * sqrt(4.0 / 3);
    json_t *doc = analyse(&t, 0, 0, 0);
    if (doc) {
        check(check_close(ivnum(doc, "step_spread"), 1.0 / 11, 1e-12, 0) &&
                  check_close(ivnum(doc, "t"), t2, 1e-9, 0) &&
                  check_close(ivnum(doc, "steps_term"), k, 1e-9, 0),
              "steps term %g (want %g)", ivnum(doc, "steps_term"), k);
        check(json_is_null(json_object_get(json_object_get(doc, "interval"), "cpu_profiler_us")) &&
                  ivnum(doc, "profiler_up") == 0 && ivnum(doc, "outliers") == 0 &&
                  fabs(ivnum(doc, "model")) < 1e-12,
              "no profiler term, no outliers, the replay exact: model %g",
              ivnum(doc, "model"));
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(doc, "steps"), i, s) {
            double p = json_number_value(json_object_get(s, "predicted"));
            check(check_close(p, 110 * US, 1e-9, 0) &&
                      check_close(end_of(s, 0), 110 * US * (1 - k), 1e-9, 0) &&
                      check_close(end_of(s, 1), 110 * US * (1 + k), 1e-9, 0),
                  "step %zu: %g [%g, %g] us (want 110 [60.321, 159.679])", i, p / US,
                  end_of(s, 0) / US, end_of(s, 1) / US);
        }
        check(has_code(doc, "steps_vary") == 0, "9.1%% spread: no steps_vary");
        json_decref(doc);
    }
    doc = analyse(&t, 1, 0, 0);
    if (doc) {
        /* above: nothing subtracted (110); below: the lower of the CPU
         * figure at 2 us (108) and the raw host 4 times as fast (27.5) */
        double up = 110.0 / 109 - 1, down = 1 - 27.5 / 109;
        const json_t *cpu = json_object_get(json_object_get(doc, "interval"), "cpu_profiler_us");
        check(json_number_value(json_array_get(cpu, 0)) == 0 &&
                  json_number_value(json_array_get(cpu, 1)) == 2,
              "the profiler range [0, 2] us");
        check(check_close(ivnum(doc, "profiler_up"), up, 1e-9, 0) &&
                  check_close(ivnum(doc, "profiler_down"), down, 1e-9, 0),
              "profiler +%g -%g (want +%g -%g)", ivnum(doc, "profiler_up"),
              ivnum(doc, "profiler_down"), up, down);
        json_t *s = json_array_get(json_object_get(doc, "steps"), 0);
        double p = 109 * US;
        check(check_close(json_number_value(json_object_get(s, "predicted")), p, 1e-9, 0) &&
                  check_close(end_of(s, 0), p * (1 - hypot(down, k)), 1e-9, 0) &&
                  check_close(end_of(s, 1), p * (1 + hypot(up, k)), 1e-9, 0),
              "1 us: [%g, %g] us", end_of(s, 0) / US, end_of(s, 1) / US);
        json_decref(doc);
    }
    /* with the breakdowns and efficiency, as the CLI and HTTP ask: no kernels */
    iteration_opts bo = {.prof = {0, 0, 0}, .breakdown = 1};
    xg_error err;
    doc = iteration_analyse(&t, &bo, &err);
    check(doc && json_is_array(json_object_get(json_array_get(json_object_get(doc, "steps"), 0),
                                               "interval")),
          "with its breakdown: %s", doc ? "the interval" : err.msg);
    json_decref(doc);
    xg_trace_free(&t);

    if (trace_load_text(steps_trace(durs, 1), &t, "one step") != 0) {
        check(0, "one step");
        return;
    }
    doc = analyse(&t, 0, 0, 0);
    check(doc && has_code(doc, "no_interval") &&
              json_is_null(json_object_get(json_array_get(json_object_get(doc, "steps"), 0),
                                           "interval")),
          "one step: no interval, no_interval");
    json_decref(doc);
    xg_trace_free(&t);

    /* one step whose replay is far from its measured step: no term claimed */
    if (trace_load_file("tests/data/kineto/flops_small.json", &t) != 0) {
        check(0, "flops_small");
        return;
    }
    doc = analyse(&t, 2, 4, 0);
    const json_t *iv = json_object_get(doc, "interval");
    static const char *const terms[] = {"step_spread", "t", "steps_term", "cpu_profiler_us",
                                        "profiler_up", "profiler_down", "outliers", "model"};
    for (int i = 0; doc && i < 8; i++)
        check(json_is_null(json_object_get(iv, terms[i])), "one step: %s null, not %g", terms[i],
              json_number_value(json_object_get(iv, terms[i])));
    check(doc && has_code(doc, "no_interval") &&
              json_integer_value(json_object_get(iv, "steps")) == 1 &&
              json_integer_value(json_object_get(iv, "floored")) == 0,
          "one step: steps 1, floored 0, no_interval");
    json_decref(doc);
    xg_trace_free(&t);
}

static double mean_predicted(const json_t *doc)
{
    return json_number_value(json_object_get(json_object_get(doc, "summary"), "mean_predicted"));
}

/* The trace analysed with its own overheads measured with nothing
 * subtracted for the profiler, every one f times as fast, as a given set. */
static json_t *analyse_host_faster(const xg_trace *t, double f)
{
    xg_graph g;
    xg_error err;
    xg_overheads raw = {0}, fast = {0};
    xg_ov_options none = {0, 0, 0};
    json_t *doc = NULL;
    if (xg_graph_build(t, &g, &err) == 0) {
        if (iteration_host_own(&g, &none, &raw, &err) == 0 && xg_ov_scaled(&raw, 1 / f, &fast) == 0) {
            iteration_opts o = {.prof = {0, 0, 0}, .ov = &fast, .ov_source = "set"};
            doc = iteration_analyse(t, &o, &err);
        }
        xg_graph_free(&g);
    }
    check(doc != NULL, "analysed with the host %g times as fast", f);
    xg_overheads_free(&raw);
    xg_overheads_free(&fast);
    return doc;
}

static void test_real(void)
{
    xg_trace t;
    if (trace_load_file("tests/data/gpu/dlrm_bs1024.json.gz", &t) != 0) {
        check(0, "dlrm_bs1024");
        return;
    }
    /* the paper's treatment; the CPU figure at 0 and 4 us; the outliers
     * kept; the replay (nothing subtracted, outliers kept) */
    json_t *doc = analyse(&t, 2, 4, 0), *p0 = analyse(&t, 0, 0, 0), *p4 = analyse(&t, 4, 4, 0),
           *kept = analyse(&t, 2, 4, 1), *replay = analyse(&t, 0, 0, 1),
           *fast = analyse_host_faster(&t, ITERATION_PROFILER_HOST_MAX);
    if (doc && p0 && p4 && kept && replay && fast) {
        const json_t *steps = json_object_get(doc, "steps");
        int n = (int)json_array_size(steps);
        double mean = 0, ss = 0;
        for (int i = 0; i < n; i++)
            mean += json_number_value(json_object_get(json_array_get(steps, (size_t)i),
                                                      "measured")) / n;
        for (int i = 0; i < n; i++) {
            double d = json_number_value(json_object_get(json_array_get(steps, (size_t)i),
                                                         "measured")) - mean;
            ss += d * d;
        }
        double rel = sqrt(ss / (n - 1)) / mean;
        double k = gsl_cdf_tdist_Pinv(0.975, n - 1) * rel * sqrt(1 + 1.0 / n);
        double p = mean_predicted(doc);
        double up = mean_predicted(p0) / p - 1,
               down = 1 - fmin(mean_predicted(p4), mean_predicted(fast)) / p;
        check(mean_predicted(fast) < mean_predicted(p4),
              "the host 4 times as fast (%g s) below the CPU figure at 4 us (%g s)",
              mean_predicted(fast), mean_predicted(p4));
        double out = mean_predicted(kept) / p - 1;
        double model = fabs(mean_predicted(replay) / mean - 1);
        check(check_close(ivnum(doc, "steps_term"), k, 1e-9, 0), "steps term %g (want %g)",
              ivnum(doc, "steps_term"), k);
        check(check_close(ivnum(doc, "profiler_up"), up, 1e-9, 0) &&
                  check_close(ivnum(doc, "profiler_down"), down, 1e-9, 0) && up > 0 && down > 0,
              "profiler +%g -%g (want +%g -%g)", ivnum(doc, "profiler_up"),
              ivnum(doc, "profiler_down"), up, down);
        check(check_close(ivnum(doc, "outliers"), out, 1e-9, 0) && out > 0.1,
              "outliers %g (want %g: the dropped half of a step)", ivnum(doc, "outliers"), out);
        check(check_close(ivnum(doc, "model"), model, 1e-6, 1e-9), "model %g (want %g)",
              ivnum(doc, "model"), model);
        double hi_rel = out + hypot(hypot(up, k), model), lo_rel = hypot(hypot(down, k), model);
        for (int i = 0; i < n; i++) {
            const json_t *s = json_array_get(steps, (size_t)i);
            double ps = json_number_value(json_object_get(s, "predicted"));
            check(check_close(end_of(s, 1), ps * (1 + hi_rel), 1e-9, 0),
                  "step %d upper end %g (want %g)", i, end_of(s, 1), ps * (1 + hi_rel));
            /* the lower end is the formula's or the device floor, above it */
            check(end_of(s, 0) >= fmax(0, ps * (1 - lo_rel)) * (1 - 1e-12) && end_of(s, 0) <= ps,
                  "step %d lower end %g within [%g, %g]", i, end_of(s, 0),
                  fmax(0, ps * (1 - lo_rel)), ps);
        }
        check(has_code(doc, "steps_vary"), "steps 12.3-21.8 ms: steps_vary");
        /* host-bound: the profiler term beyond 25%, said, its sides the term's */
        json_t *pw = warning_find(json_object_get(json_object_get(doc, "summary"), "warnings"),
                                  "profiler_uncertain");
        check(fmax(up, down) >= 0.25 && pw &&
                  json_number_value(json_object_get(pw, "up")) == ivnum(doc, "profiler_up") &&
                  json_number_value(json_object_get(pw, "down")) == ivnum(doc, "profiler_down"),
              "profiler term +%.2f -%.2f: profiler_uncertain with both sides", up, down);
        /* the breakdown view has no prediction, so none of its warnings */
        iteration_opts bo = {.prof = {2, 4, 0}, .breakdown = 1};
        xg_error berr;
        json_t *full = iteration_analyse(&t, &bo, &berr);
        json_object_set_new(full, "profile", json_integer(1)); /* as the store adds it */
        json_t *bv = full ? iteration_breakdown_view(full) : NULL;
        size_t wi;
        json_t *w;
        int leaked = 0;
        json_array_foreach(json_object_get(bv, "warnings"), wi, w)
            leaked += !strncmp(json_string_value(w), "steps_vary", 10) ||
                      !strncmp(json_string_value(w), "no_interval", 11) ||
                      !strncmp(json_string_value(w), "profiler_uncertain", 18);
        check(bv && leaked == 0, "the breakdown view: %d of the prediction's warnings", leaked);
        json_decref(bv);
        /* the trace's own overheads given as a set: no profiler term (the
         * set's figure is fixed), the same outliers term */
        xg_overheads set;
        xg_error err;
        const xg_trace *one[1] = {&t};
        xg_ov_options po = {2, 4, 0};
        if (iteration_measure(one, 1, &po, &set, &err) == 0) {
            iteration_opts so = {.ov = &set, .ov_source = "set"};
            json_t *sd = iteration_analyse(&t, &so, &err);
            check(sd && json_is_null(json_object_get(json_object_get(sd, "interval"),
                                                     "cpu_profiler_us")) &&
                      ivnum(sd, "profiler_up") == 0 &&
                      check_close(ivnum(sd, "outliers"), out, 1e-9, 0),
                  "a set: no profiler term, outliers %g (want %g)", ivnum(sd, "outliers"), out);
            json_decref(sd);
            xg_overheads_free(&set);
        } else {
            check(0, "the set measured: %s", err.msg);
        }
        /* every unprofiled step measured on the same process lies inside */
        json_t *truth = json_load_file("tests/data/gpu/truth.json", 0, NULL);
        size_t i;
        json_t *rec;
        int inside = 0, total = 0;
        json_array_foreach(json_object_get(truth, "traces"), i, rec) {
            if (strcmp(json_string_value(json_object_get(rec, "trace")) ?: "",
                       "dlrm_bs1024.json.gz"))
                continue;
            size_t j;
            json_t *v;
            json_array_foreach(json_object_get(rec, "unprofiled_sync_ms"), j, v) {
                double x = 1e-3 * json_number_value(v);
                const json_t *s0 = json_array_get(steps, 0);
                inside += end_of(s0, 0) <= x && x <= end_of(s0, 1);
                total++;
            }
        }
        check(total == 20 && inside == 20, "unprofiled steps inside: %d of %d", inside, total);
        json_decref(truth);
    }
    json_decref(doc);
    json_decref(p0);
    json_decref(p4);
    json_decref(kept);
    json_decref(replay);
    json_decref(fast);
    xg_trace_free(&t);
}

/* The steps of t with what-if table kt, against the same with no host
 * overhead (an empty set: every lookup 0). */
static void check_whatif(const xg_trace *t, const xg_kt_entry *kt, int nkt, const char *what)
{
    iteration_opts o = {.prof = {2, 4, 0}, .kt = kt, .nkt = nkt};
    xg_overheads none = {.cpu_profiler_us = 2, .gpu_profiler_us = 4, .keep_outliers = 1};
    iteration_opts z = {.ov = &none, .ov_source = "set", .kt = kt, .nkt = nkt, .no_interval = 1};
    xg_error err;
    json_t *doc = iteration_analyse(t, &o, &err), *dev = iteration_analyse(t, &z, &err);
    check(doc && dev, "%s: analysed", what);
    if (!doc || !dev) {
        json_decref(doc);
        json_decref(dev);
        return;
    }
    double k = ivnum(doc, "steps_term"), model = ivnum(doc, "model");
    double lo_rel = hypot(hypot(ivnum(doc, "profiler_down"), k), model);
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        double p = json_number_value(json_object_get(s, "predicted"));
        double d = json_number_value(json_object_get(json_array_get(json_object_get(dev, "steps"), i),
                                                     "predicted"));
        double want = fmax(fmax(0, p * (1 - lo_rel)), fmin(p, d * (1 - model)));
        check(end_of(s, 0) <= p && p <= end_of(s, 1) && check_close(end_of(s, 0), want, 1e-9, 0),
              "%s: step %zu %g ms in [%g, %g], the lower end %g from the device's %g ms", what,
              i, 1e3 * p, 1e3 * end_of(s, 0), 1e3 * end_of(s, 1), 1e3 * want, 1e3 * d);
    }
    json_decref(doc);
    json_decref(dev);
}

static void test_whatif(void)
{
    xg_trace t;
    if (trace_load_file("tests/data/gpu/resnet18_bs256.json.gz", &t) != 0) {
        check(0, "resnet18_bs256");
        return;
    }
    /* the device makes this step: a profiler term near 0, no warning of it */
    json_t *plain = analyse(&t, 2, 4, 0);
    check(plain && fmax(ivnum(plain, "profiler_up"), ivnum(plain, "profiler_down")) < 0.05 &&
              !has_code(plain, "profiler_uncertain"),
          "ResNet-18 at 256: profiler term +%.3f -%.3f, no profiler_uncertain",
          ivnum(plain, "profiler_up"), ivnum(plain, "profiler_down"));
    json_decref(plain);
    xg_kt_entry kt[4] = {{.name = "aten::conv2d"},
                         {.name = "autograd::engine::evaluate_function: ConvolutionBackward0"},
                         {.name = "aten::batch_norm"},
                         {.name = "autograd::engine::evaluate_function: CudnnBatchNormBackward0"}};
    for (int i = 0; i < 4; i++)
        kt[i].scale = 0.1;
    check_whatif(&t, kt, 4, "a tenth");
    for (int i = 0; i < 4; i++)
        kt[i].scale = 10;
    check_whatif(&t, kt, 4, "ten times");
    xg_trace_free(&t);
}

/* ResNet-18 at 256 from 128 and 64: the interval is the prediction's own
 * (set_intervals), with no "interval" object of this one. */
static void test_at_size(void)
{
    const char *files[3] = {"tests/data/gpu/resnet18_bs128.json.gz",
                            "tests/data/gpu/resnet18_bs64.json.gz",
                            "tests/data/gpu/resnet18_bs32.json.gz"};
    xg_trace tr[3];
    const xg_trace *all[3];
    const double x[3] = {128, 64, 32};
    int loaded = 0;
    for (; loaded < 3; loaded++) {
        if (trace_load_file(files[loaded], &tr[loaded]) != 0) {
            check(0, "%s", files[loaded]);
            break;
        }
        all[loaded] = &tr[loaded];
    }
    if (loaded == 3) {
        iteration_opts o = {.prof = {2, 4, 0}};
        int bad;
        xg_error err;
        json_t *doc = iteration_predict_at(all, x, 3, 256, &o, ITERATION_BY_OPERATORS, &bad, &err);
        const json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
        check(doc && !json_object_get(doc, "interval") &&
                  json_is_array(json_object_get(s0, "interval")) && !has_code(doc, "steps_vary"),
              "at another size: the prediction's own interval only");
        json_decref(doc);
    }
    for (int i = 0; i < loaded; i++)
        xg_trace_free(&tr[i]);
}

/* The median of a trace's unprofiled steps in a truth.json (seconds). */
static double truth_median(const char *dir, const char *trace)
{
    char path[256];
    snprintf(path, sizeof path, "%s/truth.json", dir);
    json_t *truth = json_load_file(path, 0, NULL);
    size_t i;
    json_t *rec;
    double v[64], m = NAN;
    json_array_foreach(json_object_get(truth, "traces"), i, rec) {
        if (strcmp(json_string_value(json_object_get(rec, "trace")) ?: "", trace))
            continue;
        size_t n = json_array_size(json_object_get(rec, "unprofiled_sync_ms"));
        for (size_t j = 0; j < n && j < 64; j++)
            v[j] = 1e-3 * json_number_value(json_array_get(json_object_get(rec,
                                                                           "unprofiled_sync_ms"), j));
        for (size_t a = 1; a < n && a < 64; a++) /* insertion sort: 20 values */
            for (size_t b = a; b > 0 && v[b - 1] > v[b]; b--) {
                double x = v[b];
                v[b] = v[b - 1];
                v[b - 1] = x;
            }
        if (n > 0 && n <= 64)
            m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
    json_decref(truth);
    return m;
}

/* A second host (tests/data/gpu-h200b) where the profiler's cost per event
 * differs from paper 001's figures both ways: a transformer at batch 8
 * whose unprofiled step (12.85 ms) lies below the step predicted even with
 * the CPU figure at 4 us, and a DLRM at 4096 whose unprofiled step (6.61
 * ms) lies above the step predicted with the CPU figure at 0 and the GPU
 * figure kept. Each median inside the mean interval of the steps, as
 * bench_gputrace counts it; the interval before (CPU figure over [0, 4] us,
 * GPU figure fixed) held neither, nor any of their 40 unprofiled steps. */
static void test_other_host(void)
{
    static const struct {
        const char *trace;
        int below; /* 1: the measured step below the prediction */
    } cases[] = {{"transformer_bs8.json.gz", 1}, {"dlrm_bs4096.json.gz", 0}};
    const char *dir = "tests/data/gpu-h200b/run1";
    for (int c = 0; c < 2; c++) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, cases[c].trace);
        xg_trace t;
        if (trace_load_file(path, &t) != 0) {
            check(0, "%s", path);
            continue;
        }
        double u = truth_median(dir, cases[c].trace);
        json_t *doc = analyse(&t, 2, 4, 0),
               *edge = cases[c].below ? analyse(&t, 4, 4, 0) : analyse(&t, 0, 4, 0);
        if (doc && edge) {
            const json_t *steps = json_object_get(doc, "steps");
            size_t n = json_array_size(steps);
            double lo = 0, hi = 0;
            for (size_t i = 0; i < n; i++) {
                lo += end_of(json_array_get(steps, i), 0) / (double)n;
                hi += end_of(json_array_get(steps, i), 1) / (double)n;
            }
            double e = mean_predicted(edge);
            check(cases[c].below ? u < e : u > e,
                  "%s: the unprofiled step %g ms %s the old range's end %g ms", cases[c].trace,
                  u * 1e3, cases[c].below ? "below" : "above", e * 1e3);
            check(lo <= u && u <= hi, "%s: the unprofiled step %g ms inside [%g, %g] ms",
                  cases[c].trace, u * 1e3, lo * 1e3, hi * 1e3);
        }
        json_decref(doc);
        json_decref(edge);
        xg_trace_free(&t);
    }
}

int main(void)
{
    test_hand();
    test_real();
    test_other_host();
    test_whatif();
    test_at_size();
    return check_summary();
}
