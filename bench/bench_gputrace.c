/*
 * bench_gputrace.c — accuracy of the per-iteration prediction on real
 * PyTorch profiler traces with step times measured without the profiler
 * (tests/data/gpu: truth.json and one trace per workload and batch size, or
 * --dir DIR holding the same), one JSON object per line; the figures over a
 * whole set name it ("set": the folder):
 *
 *   gpu_unprofiled   per trace: the mean predicted step (the paper's
 *                    treatment of the overheads: 2/4 us subtracted, IQR
 *                    outliers dropped) against the median of
 *                    unprofiled_sync_ms; then the geometric mean (goal 5%).
 *   gpu_replay       per trace: the mean replayed step (outliers kept, no
 *                    profiler overhead subtracted) against the median of
 *                    profiled_sync_ms; the geometric mean (goal 2%).
 *   gpu_batch        per workload of six sizes three runs: the largest size
 *                    from the five below it (reference: the 5th), the 5th
 *                    from the four below (reference: the 4th), the 4th from
 *                    the 1st, 2nd, 3rd, 5th and 6th (reference: the 3rd)
 *                    — each run listed with its device, sizes, measured and
 *                    predicted step and interval, by operator (the method)
 *                    and by kernel name (the baseline, the former method) in
 *                    the same run; then GMAE, worst case and how many
 *                    intervals hold the measurement (goals 5%, 15%, 7 of 9
 *                    over three workloads), and the median half-width of
 *                    the intervals relative to the prediction; per run,
 *                    "floor": "device" where the device's part of the step
 *                    raised the interval's lower end (else null).
 *                    "by_operators_calibrated": the method with the given
 *                    traces' measured unprofiled steps (never the wanted
 *                    size's) calibrating the profiler's CPU figure
 *                    (analysis/iteration_calibrate.h), its figure named.
 *                    Per run "neighbour_gap", the same for all methods: how
 *                    far the measured step lies outside the range of the
 *                    measured steps at the nearest given sizes either side
 *                    of it (for a size beyond all given: below the step at
 *                    the nearest one), over the measured step — the least
 *                    error of any prediction that agrees with the steps
 *                    measured around it, a noise floor of the data; its
 *                    worst over the set beside the methods' worst.
 * Exit 1 when a trace cannot be read.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration.h"
#include "analysis/iteration_predict.h"
#include "ingest/kineto_xg.h"

#define MAX_SIZES 16
#define MAX_WL 8

typedef struct workload {
    char name[64];
    int n;
    double size[MAX_SIZES];
    const json_t *rec[MAX_SIZES]; /* truth.json's record per size */
} workload;

/* The median of v[0..n), sorted in place. */
static double median_of(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n == 0 ? NAN : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double median(const json_t *a)
{
    size_t n = json_array_size(a);
    if (n == 0)
        return NAN;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return NAN;
    for (size_t i = 0; i < n; i++)
        v[i] = json_number_value(json_array_get(a, i));
    double m = median_of(v, (int)n);
    free(v);
    return m;
}

static int load(const char *dir, const json_t *rec, xg_trace *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, json_string_value(json_object_get(rec, "trace")));
    FILE *f = fopen(path, "rb");
    xg_trace_init(t);
    if (!f) {
        fprintf(stderr, "bench_gputrace: %s: cannot open\n", path);
        return -1;
    }
    ingest_input in = {.fd = fileno(f)};
    xg_error err;
    int rc = iteration_load(&in, 0, t, &err);
    fclose(f);
    if (rc < 0)
        fprintf(stderr, "bench_gputrace: %s: %s\n", path, err.msg);
    return rc;
}

/* The mean over the steps of each end of their intervals. */
static void mean_interval(const json_t *doc, double *lo, double *hi)
{
    size_t i;
    json_t *s;
    *lo = *hi = 0;
    const json_t *steps = json_object_get(doc, "steps");
    json_array_foreach(steps, i, s) {
        const json_t *iv = json_object_get(s, "interval");
        *lo += json_number_value(json_array_get(iv, 0)) / json_array_size(steps);
        *hi += json_number_value(json_array_get(iv, 1)) / json_array_size(steps);
    }
}

static double lerr(double e)
{
    return log(e > 1e-6 ? e : 1e-6);
}

/* gpu_unprofiled and gpu_replay over every trace. */
static int per_trace(const char *dir, const json_t *truth)
{
    size_t i;
    json_t *rec;
    double lu = 0, lr = 0, halfw[256];
    int nu = 0, nr = 0, failed = 0, iv_in = 0, iv_steps_in = 0, iv_steps = 0;
    json_array_foreach(json_object_get(truth, "traces"), i, rec) {
        xg_trace t;
        if (nu == 256 || load(dir, rec, &t) < 0) {
            failed = 1;
            continue;
        }
        xg_error err;
        iteration_opts paper = {.prof = {2, 4, 0}}, replay = {.prof = {0, 0, 1}};
        json_t *dp = iteration_analyse(&t, &paper, &err), *dr = iteration_analyse(&t, &replay, &err);
        const char *name = json_string_value(json_object_get(rec, "trace"));
        if (dp && dr) {
            double pred = json_number_value(
                json_object_get(json_object_get(dp, "summary"), "mean_predicted"));
            double meas = median(json_object_get(rec, "unprofiled_sync_ms")) * 1e-3;
            double e = fabs(pred - meas) / meas;
            lu += lerr(e);
            nu++;
            double lo, hi;
            mean_interval(dp, &lo, &hi);
            int in = lo <= meas && meas <= hi, steps_in = 0, nsteps = 0;
            size_t k;
            json_t *v;
            json_array_foreach(json_object_get(rec, "unprofiled_sync_ms"), k, v) {
                steps_in += lo <= 1e-3 * json_number_value(v) && 1e-3 * json_number_value(v) <= hi;
                nsteps++;
            }
            iv_in += in;
            iv_steps_in += steps_in;
            iv_steps += nsteps;
            halfw[nu - 1] = (hi - lo) / 2 / pred;
            printf("{\"figure\": \"gpu_unprofiled\", \"trace\": \"%s\", \"predicted_ms\": %.4f, "
                   "\"measured_ms\": %.4f, \"error\": %.5f, \"interval_ms\": [%.4f, %.4f], "
                   "\"inside\": %s, \"unprofiled_steps_inside\": \"%d of %d\"}\n",
                   name, 1e3 * pred, 1e3 * meas, e, 1e3 * lo, 1e3 * hi, in ? "true" : "false",
                   steps_in, nsteps);
            double rp = json_number_value(
                json_object_get(json_object_get(dr, "summary"), "mean_predicted"));
            double rm = median(json_object_get(rec, "profiled_sync_ms")) * 1e-3;
            double re = fabs(rp - rm) / rm;
            lr += lerr(re);
            nr++;
            printf("{\"figure\": \"gpu_replay\", \"trace\": \"%s\", \"predicted_ms\": %.4f, "
                   "\"measured_ms\": %.4f, \"error\": %.5f}\n",
                   name, 1e3 * rp, 1e3 * rm, re);
        } else {
            failed = 1;
        }
        json_decref(dp);
        json_decref(dr);
        xg_trace_free(&t);
    }
    printf("{\"figure\": \"gpu_unprofiled_all\", \"set\": \"%s\", \"traces\": %d, \"geomean_error\": %.5f, "
           "\"goal\": 0.05}\n",
           dir, nu, nu ? exp(lu / nu) : NAN);
    double *hw = nu ? halfw : NULL;
    printf("{\"figure\": \"gpu_unprofiled_interval\", \"set\": \"%s\", \"traces\": %d, \"inside\": %d, "
           "\"unprofiled_steps_inside\": %d, \"unprofiled_steps\": %d, "
           "\"median_half_width\": %.4f, \"basis\": \"the mean of each step's 95%% interval "
           "(analysis/iteration_trust.h) against the median unprofiled step, and each unprofiled "
           "step\"}\n",
           dir, nu, iv_in, iv_steps_in, iv_steps, hw ? median_of(hw, nu) : NAN);
    printf("{\"figure\": \"gpu_replay_all\", \"set\": \"%s\", \"traces\": %d, \"geomean_error\": %.5f, "
           "\"goal\": 0.02}\n",
           dir, nr, nr ? exp(lr / nr) : NAN);
    return failed;
}

/* Workloads of truth.json by name, sizes ascending. */
static int workloads(const json_t *truth, workload *w)
{
    int nw = 0;
    size_t i;
    json_t *rec;
    json_array_foreach(json_object_get(truth, "traces"), i, rec) {
        const char *n = json_string_value(json_object_get(rec, "workload"));
        double b = json_number_value(json_object_get(rec, "batch_size"));
        if (!n)
            continue;
        int k = 0;
        while (k < nw && strcmp(w[k].name, n))
            k++;
        if (k == nw) {
            if (nw == MAX_WL)
                continue;
            snprintf(w[nw].name, sizeof w[nw].name, "%s", n);
            w[nw++].n = 0;
        }
        if (w[k].n == MAX_SIZES)
            continue;
        int j = w[k].n++;
        while (j > 0 && w[k].size[j - 1] > b) {
            w[k].size[j] = w[k].size[j - 1];
            w[k].rec[j] = w[k].rec[j - 1];
            j--;
        }
        w[k].size[j] = b;
        w[k].rec[j] = rec;
    }
    return nw;
}

typedef struct tally {
    double lsum, worst;
    int n, inside;
    double half[64]; /* each run's interval half-width over its prediction */
} tally;

static void tally_add(tally *t, double e, int inside, double half)
{
    t->lsum += lerr(e);
    t->worst = fmax(t->worst, e);
    if (t->n < 64)
        t->half[t->n] = half;
    t->n++;
    t->inside += inside;
}

/* The median of t's half-widths. */
static double tally_half(const tally *t)
{
    int n = t->n < 64 ? t->n : 64;
    double v[64];
    memcpy(v, t->half, sizeof(double) * (size_t)n);
    return median_of(v, n);
}

/* The measured unprofiled step at size index i of w (seconds). */
static double measured_at(const workload *w, int i)
{
    return median(json_object_get(w->rec[i], "unprofiled_sync_ms")) * 1e-3;
}

/* The neighbour gap of the step at size index at predicted from idx[0..m)
 * (the header's definition): 0 inside the range of the nearest given sizes
 * below and above, else the distance to it over the measured step. */
static double neighbour_gap(const workload *w, const int *idx, int m, int at)
{
    int below = -1, above = -1;
    for (int k = 0; k < m; k++) {
        int i = idx[k];
        if (w->size[i] < w->size[at] && (below < 0 || w->size[i] > w->size[below]))
            below = i;
        if (w->size[i] > w->size[at] && (above < 0 || w->size[i] < w->size[above]))
            above = i;
    }
    double y = measured_at(w, at), lo, hi;
    if (below < 0 && above < 0)
        return NAN;
    if (below >= 0 && above >= 0) {
        lo = fmin(measured_at(w, below), measured_at(w, above));
        hi = fmax(measured_at(w, below), measured_at(w, above));
    } else if (below >= 0) {
        lo = measured_at(w, below); /* the step does not shrink as the batch grows */
        hi = INFINITY;
    } else {
        lo = 0;
        hi = measured_at(w, above);
    }
    return y < lo ? (lo - y) / y : y > hi ? (y - hi) / y : 0;
}

/* One run: traces idx[0..m) (the reference first) predicted at size index at. */
static int run(const char *device, const workload *w, xg_trace *tr, const int *idx, int m, int at,
               tally *ops, tally *names, tally *cal, double *gap_worst)
{
    const xg_trace *tp[MAX_SIZES];
    double xs[MAX_SIZES], steps[MAX_SIZES];
    char sizes[256] = "";
    size_t len = 0;
    for (int k = 0; k < m; k++) {
        tp[k] = &tr[idx[k]];
        xs[k] = w->size[idx[k]];
        steps[k] = measured_at(w, idx[k]);
        len += (size_t)snprintf(sizes + len, sizeof sizes - len, "%s%g", k ? ", " : "", xs[k]);
    }
    double meas = measured_at(w, at), gap = neighbour_gap(w, idx, m, at);
    *gap_worst = fmax(*gap_worst, gap);
    printf("{\"figure\": \"gpu_batch\", \"workload\": \"%s\", \"device\": \"%s\", \"sizes\": [%s], "
           "\"at\": %g, \"measured_ms\": %.4f, \"neighbour_gap\": %.5f",
           w->name, device, sizes, w->size[at], 1e3 * meas, gap);
    static const char *const keys[] = {"by_operators", "by_kernel_names",
                                       "by_operators_calibrated"};
    tally *tallies[] = {ops, names, cal};
    for (int method = 0; method < 3; method++) {
        iteration_opts o = {.prof = {2, 4, 0}, .measured = method == 2 ? steps : NULL};
        int bad;
        xg_error err;
        json_t *doc = iteration_predict_at(tp, xs, m, w->size[at], &o,
                                           method == 1 ? ITERATION_BY_KERNEL_NAMES
                                                       : ITERATION_BY_OPERATORS,
                                           &bad, &err);
        if (!doc) {
            printf(", \"error\": \"%s\"}\n", err.msg);
            return 1;
        }
        const json_t *st = json_object_get(doc, "steps");
        double p = 0, lo = 0, hi = 0;
        size_t k;
        json_t *s;
        json_array_foreach(st, k, s) {
            p += json_number_value(json_object_get(s, "predicted"));
            lo += json_number_value(json_array_get(json_object_get(s, "interval"), 0));
            hi += json_number_value(json_array_get(json_object_get(s, "interval"), 1));
        }
        size_t ns = json_array_size(st) ? json_array_size(st) : 1;
        p /= (double)ns;
        lo /= (double)ns;
        hi /= (double)ns;
        double e = fabs(p - meas) / meas;
        int in = lo <= meas && meas <= hi;
        tally_add(tallies[method], e, in, p > 0 ? (hi - lo) / 2 / p : NAN);
        char codes[256] = "";
        size_t cl = 0;
        json_array_foreach(json_object_get(json_object_get(doc, "modelled"), "warnings"), k, s)
            cl += (size_t)snprintf(codes + cl, sizeof codes - cl, "%s\"%s\"", k ? ", " : "",
                                   json_string_value(json_object_get(s, "code")));
        const char *fl = json_string_value(json_object_get(
            json_object_get(json_object_get(doc, "modelled"), "interval"), "floor"));
        char calib[48] = "";
        const json_t *cj = json_object_get(json_object_get(doc, "modelled"), "calibration");
        if (json_is_object(cj))
            snprintf(calib, sizeof calib, ", \"cpu_profiler_us\": %g",
                     json_number_value(json_object_get(cj, "cpu_profiler_us")));
        printf(", \"%s\": {\"predicted_ms\": %.4f, \"interval_ms\": [%.4f, %.4f], \"error\": %.5f, "
               "\"inside\": %s, \"floor\": %s%s%s%s, \"warnings\": [%s]}",
               keys[method], 1e3 * p, 1e3 * lo, 1e3 * hi, e, in ? "true" : "false",
               fl ? "\"" : "", fl ? fl : "null", fl ? "\"" : "", calib, codes);
        json_decref(doc);
    }
    printf("}\n");
    return 0;
}

static int batch(const char *dir, const json_t *truth)
{
    workload w[MAX_WL];
    int nw = workloads(truth, w), failed = 0;
    const char *device = json_string_value(json_object_get(truth, "device"));
    tally ops = {0}, names = {0}, cal = {0};
    double gap_worst = 0;
    for (int k = 0; k < nw; k++) {
        int n = w[k].n;
        if (n < 4)
            continue;
        xg_trace tr[MAX_SIZES];
        int ok = 1;
        for (int i = 0; i < n; i++)
            ok &= load(dir, w[k].rec[i], &tr[i]) == 0;
        if (ok) {
            int idx[MAX_SIZES], m;
            /* the largest from all below it; the next from all below it */
            for (int top = n - 1; top >= n - 2; top--) {
                m = 0;
                idx[m++] = top - 1;
                for (int i = 0; i < top - 1; i++)
                    idx[m++] = i;
                failed |= run(device ? device : "?", &w[k], tr, idx, m, top, &ops, &names, &cal, &gap_worst);
            }
            /* n-3 (the 4th of six) from the others, the one below it first */
            int mid = n - 3;
            m = 0;
            idx[m++] = mid - 1;
            for (int i = 0; i < n; i++)
                if (i != mid && i != mid - 1)
                    idx[m++] = i;
            failed |= run(device ? device : "?", &w[k], tr, idx, m, mid, &ops, &names, &cal, &gap_worst);
        } else {
            failed = 1;
        }
        for (int i = 0; i < n; i++)
            xg_trace_free(&tr[i]);
    }
    printf("{\"figure\": \"gpu_batch_all\", \"set\": \"%s\", \"runs\": %d, \"by_operators\": {\"gmae\": %.5f, "
           "\"worst\": %.5f, \"inside\": %d, \"median_half_width\": %.4f}, "
           "\"by_kernel_names\": {\"gmae\": %.5f, \"worst\": %.5f, \"inside\": %d, "
           "\"median_half_width\": %.4f}, \"gmae_ratio_to_kernel_names\": %.3f, "
           "\"by_operators_calibrated\": {\"gmae\": %.5f, \"worst\": %.5f, \"inside\": %d, "
           "\"median_half_width\": %.4f}, \"neighbour_gap_worst\": %.5f, "
           "\"goal\": {\"gmae\": 0.05, \"worst\": 0.15, \"inside\": \"7 of 9\"}}\n",
           dir, ops.n, exp(ops.lsum / (ops.n ? ops.n : 1)), ops.worst, ops.inside, tally_half(&ops),
           exp(names.lsum / (names.n ? names.n : 1)), names.worst, names.inside,
           tally_half(&names),
           exp(ops.lsum / (ops.n ? ops.n : 1)) / exp(names.lsum / (names.n ? names.n : 1)),
           exp(cal.lsum / (cal.n ? cal.n : 1)), cal.worst, cal.inside, tally_half(&cal),
           gap_worst);
    return failed;
}

int main(int argc, char **argv)
{
    const char *dir = "tests/data/gpu";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_gputrace [--dir DIR]\n");
            return 2;
        }
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/truth.json", dir);
    json_error_t je;
    json_t *truth = json_load_file(path, 0, &je);
    if (!truth) {
        fprintf(stderr, "bench_gputrace: %s: %s\n", path, je.text);
        return 1;
    }
    int failed = per_trace(dir, truth);
    failed |= batch(dir, truth);
    json_decref(truth);
    return failed;
}
