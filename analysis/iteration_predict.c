/*
 * iteration_predict.c — a traced job's steps at another size from traces at
 * other sizes (iteration_predict.h): the operator model, its interval and
 * warnings, or the kernel-name model it replaced.
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_calibrate.h"
#include "analysis/iteration_host.h"
#include "analysis/iteration_model.h"
#include "analysis/iteration_predict.h"
#include "analysis/iteration_trust.h"
#include "execgraph/xg_opmodel.h"

static void warn(json_t *w, json_t *obj)
{
    json_array_append_new(w, obj);
}

/* A device model: graphs[0]'s device times (us per event index of its
 * trace, NAN where kept as measured) at `at` from graphs[0..n) at x[0..n),
 * malloc'ed into *dev_us; 0, or -1 (the fold is skipped). */
typedef int (*device_model)(const xg_graph *const *g, const double *x, int n, double at,
                            const void *arg, double **dev_us);

/* By operator (xg_opmodel.h), arg the device whose peaks bound the times. */
static int model_operators(const xg_graph *const *g, const double *x, int n, double at,
                           const void *arg, double **dev_us)
{
    xg_opm_result r;
    xg_error err;
    if (xg_opmodel_dev(g, x, n, at, arg, &r, &err) < 0)
        return -1;
    *dev_us = r.dev_us;
    r.dev_us = NULL;
    xg_opm_result_free(&r);
    return 0;
}

/* By kernel name (iteration_model.h), the table of the values. */
static int model_kernel_names(const xg_graph *const *g, const double *x, int n, double at,
                              const void *arg, double **dev_us)
{
    (void)arg;
    const xg_trace *t[64];
    for (int i = 0; i < n; i++)
        t[i] = g[i]->t;
    iteration_kmodels km = {0};
    xg_error err;
    if (iteration_model_kernels(t, x, n, at, &km, &err) < 0)
        return -1;
    *dev_us = iteration_kmodels_dev_us(g[0], km.value, km.n);
    iteration_kmodels_free(&km);
    return *dev_us ? 0 : -1;
}

/* The interval's model part: s_cv by leaving each other trace out (from
 * m_cv traces; 0: none, s_cv assumed), the device times of the reference
 * at the left-out trace's size from the model given, and s_dev the same for
 * the device's part of the step alone (Algorithm 1 with the overheads taken
 * as zero, iteration_host_device_steps): the left-out trace's own device
 * part against the one predicted for it from the others. */
static void spread_cv(const xg_graph *const *g, const double *x, int n, const xg_overheads *pooled,
                      device_model model, const void *arg, double *s_cv, double *s_dev,
                      int *m_cv)
{
    const xg_graph *sub[64];
    double xs[64];
    double sum2 = 0, dev2 = 0;
    int m = 0;
    for (int j = 1; j < n && n >= 3; j++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (i != j) {
                sub[k] = g[i];
                xs[k++] = x[i];
            }
        double *dev_us;
        if (model(sub, xs, k, x[j], arg, &dev_us) < 0)
            continue;
        double p = iteration_host_step(g[0], pooled, dev_us),
               q = iteration_host_step(g[j], pooled, NULL),
               pd = iteration_host_device_steps(g[0], pooled, dev_us, NULL),
               qd = iteration_host_device_steps(g[j], pooled, NULL, NULL);
        free(dev_us);
        if (isfinite(p) && q > 0 && isfinite(pd) && qd > 0) {
            sum2 += (p - q) * (p - q) / (q * q);
            dev2 += (pd - qd) * (pd - qd) / (qd * qd);
            m++;
        }
    }
    *s_cv = m ? sqrt(sum2 / m) : 0.1;
    *s_dev = m ? sqrt(dev2 / m) : 0.1;
    *m_cv = m;
}

/* The interval's multiplier: Student's t at 97.5% with the degrees of
 * freedom of a = s_host²(1 + 1/n) (k_host - 1) and b = (s_cv(1 + d))² (m_cv
 * folds; an assumed s_cv has none to lose) combined by Welch–Satterthwaite,
 * (a + b)² / (a²/df_a + b²/df_b); 1.96 when neither is estimated. */
double iteration_interval_t(double a, int k_host, double b, int m_cv, double *df)
{
    double den = 0;
    if (k_host >= 2 && a > 0)
        den += a * a / (k_host - 1);
    if (m_cv >= 1 && b > 0)
        den += b * b / m_cv;
    *df = den > 0 ? (a + b) * (a + b) / den : INFINITY;
    return isfinite(*df) ? gsl_cdf_tdist_Pinv(0.975, *df) : 1.959963984540054;
}

/* The floor under the interval's lower end. The interval is symmetric in
 * the step's relative spread, and the host's spread between processes can
 * make it wide: its lower end then falls below what the device alone must
 * do, a time no run takes. A step is never shorter than its device work on
 * the critical path, so each step's lower end is raised to
 *   D · (1 - t·s_dev·(1 + d))
 * D      the step with every host overhead taken as zero (Algorithm 1:
 *        the kernels in launch order on their streams, one launch gap
 *        apart, with their dependencies, the waits for other ranks at their
 *        measured lengths): the device's part, whatever the host does;
 * s_dev  its own error, from leaving each other trace out (spread_cv),
 *        widened by (1 + d) for the octaves outside the measured sizes as
 *        s_cv is; t Student's 97.5% quantile with its m_cv degrees of
 *        freedom (1.96 for the 10% assumed with two traces): D is itself
 *        a prediction, and a floor at D alone would claim it exact.
 * Zero rather than the smallest host time the traces support (the pooled
 * overheads scaled by exp(-t·s_H), say): that scaling rests on s_H from a
 * handful of traces, the very estimate whose width the floor corrects, and
 * the symmetric lower end already stands for the host scaled down; zero
 * cannot overstate how fast the host may be, so the floor holds whatever
 * the host does and depends only on the device's model. */
typedef struct device_floor {
    double *per;  /* per step of the reference: the floor (seconds) */
    double mean;  /* D, mean over the steps (seconds); NAN: Algorithm 1 failed */
    double keep;  /* 1 - t·s_dev·(1 + d), at least 0 */
} device_floor;

/* s = s_dev·(1 + d), estimated from m_cv left-out traces (0: assumed).
 * 0, or -1 with err (out of memory). */
static int floor_at_device(const xg_graph *g, const xg_overheads *ov, const double *dev_us,
                           double s, int m_cv, device_floor *out, xg_error *err)
{
    out->per = malloc((size_t)(g->nsteps > 0 ? g->nsteps : 1) * sizeof *out->per);
    if (!out->per) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    double df, td = iteration_interval_t(0, 0, s * s, m_cv, &df);
    out->keep = fmax(0, 1 - td * s);
    out->mean = iteration_host_device_steps(g, ov, dev_us, out->per);
    for (int i = 0; i < g->nsteps; i++)
        out->per[i] = isfinite(out->mean) ? out->per[i] * out->keep : NAN;
    return 0;
}

static int cmp_fam(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(*(json_t *const *)a, "measured"));
    double y = json_number_value(json_object_get(*(json_t *const *)b, "measured"));
    return x > y ? -1 : x < y;
}

/* Per operator name: instances, the regressor, device time per step measured
 * and predicted (seconds); the 20 largest. */
static json_t *families(const xg_opm_result *r)
{
    static const char *const reg[] = {"size", "flops", "bytes"};
    json_t *all = json_array();
    int *done = calloc((size_t)(r->ninst ? r->ninst : 1), sizeof *done);
    if (!done)
        return all;
    for (int i = 0; i < r->ninst; i++) {
        if (done[i])
            continue;
        const xg_opm_inst *a = &r->inst[i];
        double meas = 0, pred = 0;
        int count = 0;
        for (int k = i; k < r->ninst; k++) {
            const xg_opm_inst *b = &r->inst[k];
            if (done[k] || b->is_op != a->is_op || strcmp(b->name, a->name))
                continue;
            done[k] = 1;
            meas += b->measured_us;
            pred += b->predicted_us;
            count++;
        }
        json_array_append_new(all, json_pack("{s:s, s:s, s:b, s:i, s:f, s:f}", "name", a->name,
                                             "regressor", reg[a->regressor], "operator",
                                             a->is_op, "instances", count, "measured",
                                             meas * 1e-6, "predicted", pred * 1e-6));
    }
    free(done);
    size_t n = json_array_size(all);
    json_t **v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return all;
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(all, i));
    qsort(v, n, sizeof *v, cmp_fam);
    json_t *top = json_array();
    for (size_t i = 0; i < n; i++) {
        if (i < 20)
            json_array_append(top, v[i]);
        json_decref(v[i]);
    }
    free(v);
    json_decref(all);
    return top;
}

/* The profiler term of a step predicted with overheads measured on the
 * traces (iteration_trust.h's iteration_profiler_sides, the overheads
 * pooled as the prediction pools them): every trace of a run shares its
 * host's profiler, so this is a bias the spread between the traces cannot
 * see. Both sides 0 (cpu_hi NAN) with a given set or c = 0. */
typedef struct profiler_range {
    double up, down;
    double cpu_hi;  /* 2c; NAN: no term */
    double cal_cpu; /* the calibrated figure where the calibration's term
                       stands in for the profiler's (up = down = term); else NAN */
} profiler_range;

/* The steps of g[0] with the overheads of g[0..n) pooled and the device
 * times dev_us, as iteration_profiler_sides measures them. */
typedef struct pooled_arg {
    const xg_graph *const *g;
    int n;
    const double *dev_us;
} pooled_arg;

static int pooled_steps(const void *arg, const xg_ov_options *prof, const double *scales, int n,
                        double *steps, xg_error *err)
{
    const pooled_arg *a = arg;
    xg_overheads ov = {0};
    if (iteration_host_pool(a->g, a->n, prof, &ov, err) < 0)
        return -1;
    int rc = 0;
    for (int k = 0; k < n && rc == 0; k++) {
        xg_overheads sc = {0};
        if (scales[k] != 1 && xg_ov_scaled(&ov, scales[k], &sc) < 0) {
            xg_error_set(err, -1, NULL, "out of memory");
            rc = -1;
            break;
        }
        steps[k] = iteration_host_step(a->g[0], scales[k] != 1 ? &sc : &ov, a->dev_us);
        xg_overheads_free(&sc);
        if (!isfinite(steps[k])) {
            xg_error_set(err, -1, NULL, "the critical path failed on the traces' overheads");
            rc = -1;
        }
    }
    xg_overheads_free(&ov);
    return rc;
}

/* The profiler term of the step of g[0] with overheads `used` (pooled over
 * g[0..n) with prof): none with a given set (given), the calibration's
 * term times the share of the step the host carries (share: what the
 * calibration leaves is the host's, which the device hides where it makes
 * the step) where steps measured without the profiler calibrated the
 * figure on two traces or more (iteration_calibrate.h), else the
 * profiler's. */
static int profiler_range_of(const xg_graph *const *g, int n, const xg_ov_options *prof,
                             const xg_overheads *used, int given, const double *dev_us,
                             const iteration_calibration *cal, double share,
                             profiler_range *out, xg_error *err)
{
    *out = (profiler_range){0, 0, NAN, NAN};
    if (given)
        return 0;
    if (cal->traces >= 2) {
        out->up = out->down = cal->term * fmin(1, fmax(0, share));
        out->cal_cpu = cal->cpu_us;
        return 0;
    }
    pooled_arg a = {g, n, dev_us};
    return iteration_profiler_sides(pooled_steps, &a, prof, iteration_host_step(g[0], used, dev_us),
                                    &out->up, &out->down, &out->cpu_hi, err);
}

/* The profiler term's warning, or the calibration's where its term stands
 * in for it. */
static json_t *profiler_warning_of(const profiler_range *pr, const iteration_calibration *cal)
{
    return isfinite(pr->cal_cpu) ? iteration_calibration_warning(cal, pr->up)
                                 : iteration_profiler_warning(pr->up, pr->down);
}

/* Each step's interval predicted × (1 ± rel); where ends gives each step's
 * interval by another model (the steps of ends[0] and ends[1]: every kernel
 * at its lower, or upper, end), rel·predicted is joined in quadrature to
 * each end's distance from the prediction instead. kept[i] is the step's
 * device time kept as measured at the reference's size (kept NULL:
 * kept_each in every step), growth the wanted size over it: that work,
 * whose time is affine in a size it at most follows proportionally
 * (t = a + b·x, a, b >= 0), takes at most
 * kept·growth above it and at least kept·growth below it, so the upper end
 * gains kept·(growth - 1) (the lower end loses kept·(1 - growth) below the
 * reference). The lower end is then raised to the step's floor least[i]
 * where that is higher (least NULL: none); the steps whose lower end the
 * floor set, counted. */
static int set_intervals(json_t *doc, double rel, const profiler_range *pr,
                         json_t *const *ends, const double *least, const double *kept,
                         double kept_each, double growth)
{
    size_t i;
    json_t *s;
    int floored = 0;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        double p = json_number_value(json_object_get(s, "predicted"));
        double lo = fmax(0, p * (1 - hypot(rel, pr->down))), hi = p * (1 + hypot(rel, pr->up));
        if (ends) {
            double l = json_number_value(
                       json_object_get(json_array_get(json_object_get(ends[0], "steps"), i),
                                       "predicted")),
                   h = json_number_value(
                       json_object_get(json_array_get(json_object_get(ends[1], "steps"), i),
                                       "predicted"));
            lo = fmax(0, p - hypot(hypot(fmax(0, p - l), p * rel), p * pr->down));
            hi = p + hypot(hypot(fmax(0, h - p), p * rel), p * pr->up);
        }
        double k = kept ? kept[i] : kept_each;
        hi += k * fmax(0, growth - 1);
        lo = fmax(0, lo - k * fmax(0, 1 - growth));
        if (least && isfinite(least[i]) && least[i] > lo) {
            lo = fmin(p, least[i]);
            floored++;
        }
        json_object_set_new(s, "interval", json_pack("[f, f]", lo, hi));
        json_object_set_new(s, "error", json_null());
    }
    json_object_set_new(json_object_get(doc, "summary"), "geomean_error", json_null());
    return floored;
}

/* Per step of g, the device time (seconds) of the events dev_us leaves
 * NAN, kept at their measured times; *mean their mean over the steps.
 * Malloc'ed; NULL when out of memory. */
static double *kept_per_step(const xg_graph *g, const double *dev_us, double *mean)
{
    double *k = calloc((size_t)(g->nsteps > 0 ? g->nsteps : 1), sizeof *k);
    *mean = 0;
    if (!k)
        return NULL;
    for (int s = 0; s < g->nsteps; s++) {
        const xg_step *st = &g->steps[s];
        for (int i = 0; i < st->ndev; i++) {
            int ev = g->step_dev[st->dev_first + i];
            if (isnan(dev_us[ev]))
                k[s] += g->t->ev[ev].dur * 1e-6;
        }
        *mean += k[s] / g->nsteps;
    }
    return k;
}

/* unmatched_kernels: device work not modelled keeps its measured time. */
static void warn_unmatched(json_t *warnings, double seconds, double step)
{
    if (seconds > 0)
        warn(warnings, json_pack("{s:s, s:s, s:f, s:f}", "code", "unmatched_kernels", "message",
                                 "device work not found in the other traces keeps its measured "
                                 "time: this share of the step does not follow the size",
                                 "share", step > 0 ? seconds / step : 0, "seconds", seconds));
}

/* The host's spread and the device floor of an answer, with s_cv where the
 * interval carries one (NULL: kernel_names, whose model part is each step's
 * kernel ends). */
static json_t *interval_json(const iteration_host *host, const double *s_cv, double oct,
                             double rel, double tq, double df, int floored,
                             const device_floor *fl, double s_dev, const profiler_range *pr)
{
    json_t *iv = json_pack("{s:f, s:f, s:f, s:o, s:i}", "s_host", host->s_host, "host_spread",
                           host->s_H, "host_share", host->share, "host_p",
                           isfinite(host->p) ? json_real(host->p) : json_null(), "host_traces",
                           host->k);
    if (s_cv)
        json_object_set_new(iv, "s_cv", json_real(*s_cv));
    json_object_set_new(iv, "octaves", json_real(oct));
    json_object_set_new(iv, "relative", json_real(rel));
    json_object_set_new(iv, "t", json_real(tq));
    json_object_set_new(iv, "df", isfinite(df) ? json_real(df) : json_null());
    json_object_set_new(iv, "floor", floored ? json_string("device") : json_null());
    json_object_set_new(iv, "device_step", isfinite(fl->mean) ? json_real(fl->mean) : json_null());
    json_object_set_new(iv, "device_floor",
                        isfinite(fl->mean) ? json_real(fl->mean * fl->keep) : json_null());
    json_object_set_new(iv, "s_dev", json_real(s_dev));
    int term = isfinite(pr->cpu_hi);
    json_object_set_new(iv, "cpu_profiler_us",
                        term ? json_pack("[f, f]", 0.0, pr->cpu_hi)
                        : isfinite(pr->cal_cpu) ? json_pack("[f, f]", pr->cal_cpu, pr->cal_cpu)
                                                : json_null());
    json_object_set_new(iv, "profiler_up", json_real(pr->up));
    json_object_set_new(iv, "profiler_down", json_real(pr->down));
    json_object_set_new(iv, "profiler_host_faster",
                        term ? json_real(ITERATION_PROFILER_HOST_MAX) : json_null());
    return iv;
}

/* host_time_varies where the host carries half the step or more and the
 * traces' host times differ by more than their step-to-step noise. */
static void warn_host(json_t *warnings, const iteration_host *host)
{
    if (host->share >= 0.5 && host->p < 0.05)
        warn(warnings, json_pack("{s:s, s:s, s:f, s:f, s:f, s:i}", "code", "host_time_varies",
                                 "message", "the traces' hosts took different times for the same "
                                            "work, by more than their step-to-step noise, and "
                                            "the host carries much of the step: a run on another "
                                            "process may differ by that much",
                                 "spread", host->s_H, "share", host->share, "p", host->p,
                                 "traces", host->k));
}

static double doc_mean(const json_t *doc)
{
    return json_number_value(json_object_get(json_object_get(doc, "summary"), "mean_predicted"));
}

/* The former method: kernel names across the traces, the first trace's
 * overheads (or the set given). Each step's interval: every kernel at its
 * lower or upper end, each end's distance joined in quadrature to the
 * host's spread between the traces, t·s_host·sqrt(1 + 1/k) with t of k - 1
 * degrees of freedom; its lower end floored at the device's part of the step
 * as the operators' is, s_dev by leaving each other trace out of the kernel
 * models. */
static json_t *by_names(const xg_trace *const *t, const xg_graph *const *g, const double *x,
                        int n, double at, double oct, const iteration_opts *oin,
                        const iteration_calibration *cal, json_t *warnings, xg_error *err)
{
    iteration_kmodels km = {0};
    iteration_opts o = *oin;
    o.no_interval = 1; /* set_intervals gives the interval at the wanted size */
    json_t *docs[3] = {NULL, NULL, NULL}, *doc = NULL;
    xg_overheads own = {0};
    double *dev_us = NULL, *kept = NULL;
    device_floor fl = {0};
    if (iteration_model_kernels(t, x, n, at, &km, err) < 0)
        return NULL;
    const xg_kt_entry *tables[3] = {km.value, km.lo, km.hi};
    for (int i = 0; i < 3; i++) {
        o.kt = tables[i];
        o.nkt = km.n;
        o.breakdown = i == 0 && oin->breakdown;
        if (!(docs[i] = iteration_analyse(t[0], &o, err)))
            goto done;
    }
    const xg_overheads *ov = oin->ov;
    if (!ov) {
        if (iteration_host_own(g[0], &o.prof, &own, err) < 0)
            goto done;
        ov = &own;
    }
    if (!(dev_us = iteration_kmodels_dev_us(g[0], km.value, km.n))) {
        xg_error_set(err, -1, NULL, "out of memory");
        goto done;
    }
    iteration_host host;
    if (iteration_host_measure(g, n, &o.prof, ov, dev_us, &host, err) < 0)
        goto done;
    profiler_range pr;
    if (profiler_range_of(g, 1, &o.prof, ov, oin->ov != NULL, dev_us, cal, host.share, &pr,
                          err) < 0)
        goto done;
    double s_cv, s_dev, df;
    int m_cv;
    spread_cv(g, x, n, ov, model_kernel_names, NULL, &s_cv, &s_dev, &m_cv);
    double a = host.s_host * host.s_host * (1 + 1.0 / (host.k > 0 ? host.k : 1));
    double tq = iteration_interval_t(a, host.k, 0, 0, &df), rel = tq * sqrt(a);
    if (floor_at_device(g[0], ov, dev_us, s_dev * (1 + oct), m_cv, &fl, err) < 0)
        goto done;
    double kept_mean;
    if (!(kept = kept_per_step(g[0], dev_us, &kept_mean))) {
        xg_error_set(err, -1, NULL, "out of memory");
        goto done;
    }
    int floored = set_intervals(docs[0], rel, &pr, docs + 1, fl.per, kept, 0, at / x[0]);
    json_t *pw = profiler_warning_of(&pr, cal);
    if (pw)
        warn(warnings, pw);
    warn_unmatched(warnings, kept_mean, doc_mean(docs[0]));
    warn_host(warnings, &host);
    json_t *xs = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(xs, json_real(x[k]));
    json_object_set_new(docs[0], "modelled",
                        json_pack("{s:s, s:f, s:f, s:o, s:o, s:o, s:i, s:i, s:O, s:O}",
                                  "method", "kernel_names", "at", at, "value", x[0], "values",
                                  xs, "interval",
                                  interval_json(&host, NULL, oct, rel, tq, df, floored, &fl,
                                                s_dev, &pr),
                                  "calibration", iteration_calibration_json(cal), "kernels",
                                  km.n, "skipped", km.skipped, "models", km.models, "warnings",
                                  warnings));
    doc = docs[0];
    docs[0] = NULL;
done:
    for (int i = 0; i < 3; i++)
        json_decref(docs[i]);
    free(kept);
    free(fl.per);
    free(dev_us);
    xg_overheads_free(&own);
    iteration_kmodels_free(&km);
    return doc;
}

/* 1 when a and b hold the same events (one trace read twice). */
static int same_trace(const xg_trace *a, const xg_trace *b)
{
    if (a == b)
        return 1;
    if (a->n != b->n)
        return 0;
    for (size_t k = 0; k < (size_t)a->n; k++)
        if (a->ev[k].ts != b->ev[k].ts || a->ev[k].dur != b->ev[k].dur ||
            a->ev[k].kind != b->ev[k].kind)
            return 0;
    return 1;
}

/* Two traces at one value, or one trace twice: the later one in *bad, -1
 * with err when none. */
static int check_distinct(const xg_trace *const *t, const double *x, int n, xg_error *err)
{
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (x[i] == x[j]) {
                xg_error_set(err, -1, "value", "the same value %g as trace %d: one trace per "
                                               "value", x[i], j);
                return i;
            }
            if (same_trace(t[i], t[j])) {
                xg_error_set(err, -1, "trace", "the same trace as trace %d (at %g): one "
                                               "measurement, not two sizes", j, x[j]);
                return i;
            }
        }
    return -1;
}

/* Traces of other device types than t[0]: -1 when all agree; else the first
 * such trace, with err naming both devices (mixed: the warning instead). */
static int check_devices(const xg_trace *const *t, int n, int mixed, json_t *warnings,
                         xg_error *err)
{
    char d0[160], di[160];
    xg_devid_describe(&t[0]->device, d0, sizeof d0);
    json_t *list = NULL;
    for (int i = 1; i < n; i++) {
        if (xg_devid_same(&t[0]->device, &t[i]->device))
            continue;
        xg_devid_describe(&t[i]->device, di, sizeof di);
        if (!mixed) {
            xg_error_set(err, -1, "profiles", "different devices: trace %d ran on %s, trace 0 "
                         "on %s (mixed_devices: true or --mixed-devices models them together)",
                         i, di, d0);
            return i;
        }
        if (!list)
            list = json_array();
        json_array_append_new(list, json_pack("{s:i, s:s}", "trace", i, "device", di));
    }
    if (list)
        warn(warnings, json_pack("{s:s, s:s, s:s, s:o}", "code", "mixed_devices", "message",
                                 "traces of different devices are modelled together (as asked): "
                                 "the prediction mixes their speeds", "device", d0, "others",
                                 list));
    return -1;
}

/* The profiler's CPU figure calibrated from o->measured (iteration_calibrate.h);
 * refused where a given set fixes the overheads. 0, or -1 with err. */
static int calibrate(const xg_graph *const *g, int n, const iteration_opts *o,
                     iteration_calibration *cal, xg_error *err)
{
    for (int j = 0; o->ov && o->measured && j < n; j++)
        if (!isnan(o->measured[j])) {
            char field[48];
            snprintf(field, sizeof field, "profiles[%d].measured_step", j);
            xg_error_set(err, -1, field, "calibrating the profiler's cost needs the overheads "
                                         "measured on the traces; an overhead set fixes them");
            return -1;
        }
    return iteration_calibrate(g, n, o->measured, &o->prof, cal, err);
}

json_t *iteration_predict_at(const xg_trace *const *t, const double *x, int n, double at,
                             const iteration_opts *oin, int method, int *bad, xg_error *err)
{
    *bad = -1;
    err->event = -1;
    err->field[0] = '\0';
    if (!isfinite(at) || at <= 0) {
        xg_error_set(err, -1, "at", "must be a number > 0 (the size to predict at)");
        return NULL;
    }
    if (n < 2 || n > 64) {
        xg_error_set(err, -1, "traces", "predicting at another size needs 2 to 64 traces");
        return NULL;
    }
    double xmin = x[0], xmax = x[0];
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || x[i] <= 0) {
            *bad = i;
            xg_error_set(err, -1, "value", "must be a number > 0 (the size the trace was "
                                           "measured at)");
            return NULL;
        }
        xmin = fmin(xmin, x[i]);
        xmax = fmax(xmax, x[i]);
    }
    if ((*bad = check_distinct(t, x, n, err)) >= 0)
        return NULL;
    json_t *warnings = json_array();
    if ((*bad = check_devices(t, n, oin->mixed_devices, warnings, err)) >= 0) {
        json_decref(warnings);
        return NULL;
    }
    if (at >= 2 * xmax || at <= xmin / 2)
        warn(warnings, json_pack("{s:s, s:s, s:f, s:[f, f], s:f}", "code", "extrapolation_far",
                                 "message", "the size lies beyond twice the largest measured "
                                            "(or below half the smallest): the work of every "
                                            "operator is extrapolated",
                                 "at", at, "measured", xmin, xmax, "factor",
                                 at > xmax ? at / xmax : xmin / at));
    if (n < 3)
        warn(warnings, json_pack("{s:s, s:s}", "code", "few_traces", "message",
                                 "with 2 traces no trace can be left out to measure the "
                                 "model's error: the interval assumes 10%"));
    xg_graph *g = calloc((size_t)n, sizeof *g);
    const xg_graph **gp = calloc((size_t)n, sizeof *gp);
    xg_overheads pooled = {0};
    xg_opm_result r = {0};
    iteration_calibration cal = {0};
    json_t *doc = NULL;
    int built = 0;
    if (!g || !gp) {
        xg_error_set(err, -1, NULL, "out of memory");
        goto done;
    }
    for (; built < n; built++) {
        if (xg_graph_build(t[built], &g[built], err) < 0) {
            *bad = built;
            goto done;
        }
        gp[built] = &g[built];
    }
    int shaped = 0;
    json_t *unshaped = json_array();
    char which[64 * 4 + 8] = ""; /* up to 64 indices, ", " apart */
    for (int j = 0; j < n; j++) {
        size_t k = 0, len = strlen(which);
        while (k < t[j]->ninfo && t[j]->info[k].nin == 0)
            k++;
        if (k < t[j]->ninfo) {
            shaped++;
            continue;
        }
        json_array_append_new(unshaped, json_integer(j));
        snprintf(which + len, sizeof which - len, "%s%d", len ? ", " : "", j);
    }
    if (method == ITERATION_BY_OPERATORS && shaped < n)
        warn(warnings, json_pack("{s:s, s:s++, s:i, s:O}", "code", "shapes_missing", "message",
                                 "traces without operator input shapes (recorded with "
                                 "record_shapes off; trace ", which, "): kernel times are matched "
                                 "by kernel name instead of modelled by operator",
                                 "traces_without_shapes", n - shaped, "traces", unshaped));
    json_decref(unshaped);
    double oct = fmax(0, fmax(log2(at / xmax), log2(xmin / at)));
    iteration_opts oc = *oin; /* the calibrated CPU figure where steps were measured */
    if (calibrate(gp, n, oin, &cal, err) < 0)
        goto done;
    if (cal.traces)
        oc.prof.cpu_profiler_us = cal.cpu_us;
    if (method == ITERATION_BY_KERNEL_NAMES || shaped < n) {
        /* the same job, as the operator model has it (operators found
         * with or without shapes): its refusal names the other job's trace */
        int other;
        if (xg_opmodel_same_job(gp, n, &other, err) < 0 && other >= 0) {
            *bad = other;
            goto done;
        }
        doc = by_names(t, gp, x, n, at, oct, &oc, &cal, warnings, err);
        goto done;
    }
    /* the device's peaks as the roofline prior: the one asked for, else the
     * built-in the first trace's deviceProperties name */
    const xg_device *dev = oin->device ? oin->device : xg_device_for(&t[0]->device);
    if (xg_opmodel_dev(gp, x, n, at, dev, &r, err) < 0) {
        *bad = r.bad_trace;
        goto done;
    }
    if (!isfinite(r.predicted_us)) {
        xg_error_set(err, -1, "at", "the operators' models give no finite device time at %g "
                                    "(measured at %g to %g): too far to extrapolate",
                     at, xmin, xmax);
        goto done;
    }
    iteration_opts o = oc;
    o.no_interval = 1; /* set_intervals gives the interval at the wanted size */
    if (!o.ov) {
        if (iteration_host_pool(gp, n, &o.prof, &pooled, err) < 0)
            goto done;
        o.ov = &pooled;
        o.ov_source = "traces";
        o.ov_name = NULL;
    }
    o.dev_us = r.dev_us;
    o.kt = NULL;
    o.nkt = 0;
    if (!(doc = iteration_analyse(t[0], &o, err)))
        goto done;
    double s_cv, df;
    int m_cv;
    iteration_host host;
    if (iteration_host_measure(gp, n, &o.prof, o.ov, r.dev_us, &host, err) < 0) {
        json_decref(doc);
        doc = NULL;
        goto done;
    }
    double s_dev;
    spread_cv(gp, x, n, o.ov, model_operators, dev, &s_cv, &s_dev, &m_cv);
    double a = host.s_host * host.s_host * (1 + 1.0 / host.k), b = pow(s_cv * (1 + oct), 2);
    double tq = iteration_interval_t(a, host.k, b, m_cv, &df);
    double rel = fmax(tq * sqrt(a + b), 1.96 * 0.02);
    device_floor fl;
    if (floor_at_device(gp[0], o.ov, r.dev_us, s_dev * (1 + oct), m_cv, &fl, err) < 0) {
        json_decref(doc);
        doc = NULL;
        goto done;
    }
    profiler_range pr;
    if (profiler_range_of(gp, n, &o.prof, o.ov, oin->ov != NULL, r.dev_us, &cal, host.share, &pr,
                          err) < 0) {
        free(fl.per);
        json_decref(doc);
        doc = NULL;
        goto done;
    }
    int floored = set_intervals(doc, rel, &pr, NULL, fl.per, NULL, r.unmatched_us * 1e-6,
                                at / x[0]);
    json_t *pw = profiler_warning_of(&pr, &cal);
    if (pw)
        warn(warnings, pw);
    double step = doc_mean(doc);
    double share = step > 0 ? r.unmatched_us * 1e-6 / step : 0;
    warn_unmatched(warnings, r.unmatched_us * 1e-6, step);
    warn_host(warnings, &host);
    json_t *xs = json_array();
    for (int k = 0; k < n; k++)
        json_array_append_new(xs, json_real(x[k]));
    json_t *iv = interval_json(&host, &s_cv, oct, rel, tq, df, floored, &fl, s_dev, &pr);
    free(fl.per);
    json_object_set_new(doc, "modelled",
                        json_pack("{s:s, s:f, s:f, s:o, s:s, s:f, s:f, s:f, s:o, s:o, s:o, s:O}",
                                  "method", "operators", "at", at, "value", x[0], "values", xs,
                                  "overheads", o.ov_source ? o.ov_source : "traces",
                                  "gpu_time", r.gpu_us * 1e-6, "gpu_time_at",
                                  r.predicted_us * 1e-6, "unmatched_share", share, "interval",
                                  iv, "calibration", iteration_calibration_json(&cal),
                                  "operators", families(&r), "warnings", warnings));
    json_object_set_new(json_object_get(doc, "modelled"), "roofline",
                        dev ? json_pack("{s:s, s:s, s:i, s:f}", "device", dev->name, "source",
                                        oin->device ? "given" : "trace", "raised",
                                        r.roofline_raised, "seconds", r.roofline_us * 1e-6)
                            : json_null());
done:
    if (doc && !json_object_get(doc, "modelled")) {
        /* a number of it not finite: no answer rather than the measured times */
        json_decref(doc);
        doc = NULL;
        xg_error_set(err, -1, "at", "no finite prediction at %g (measured at %g to %g): too "
                                    "far to extrapolate", at, xmin, xmax);
    }
    json_decref(warnings);
    iteration_calibration_free(&cal);
    xg_opm_result_free(&r);
    xg_overheads_free(&pooled);
    for (int i = 0; i < built; i++)
        xg_graph_free(&g[i]);
    free(g);
    free(gp);
    return doc;
}
