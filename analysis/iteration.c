/*
 * iteration.c — the per-iteration analysis shared by the CLI and the HTTP
 * API (iteration.h): the graph of a trace read by ingest/kineto_xg.h,
 * overheads, critical path and breakdowns, and their JSON.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration.h"
#include "analysis/iteration_host.h"
#include "analysis/iteration_trust.h"

/* ---- overhead sets ---------------------------------------------------------------- */

json_t *iteration_overheads_json(const xg_overheads *ov)
{
    json_t *stats = json_array();
    for (size_t i = 0; i < ov->n; i++) {
        const xg_ovstat *s = &ov->s[i];
        json_array_append_new(stats, json_pack("{s:s, s:o, s:f, s:f, s:f, s:I, s:I}", "type",
                                               xg_ov_type_name(s->type), "name",
                                               s->name ? json_string(s->name) : json_null(),
                                               "mean", s->mean, "median", s->median, "std",
                                               s->std, "count", (json_int_t)s->count, "dropped",
                                               (json_int_t)s->dropped));
    }
    return json_pack("{s:f, s:f, s:b, s:i, s:o}", "cpu_profiler_us", ov->cpu_profiler_us,
                     "gpu_profiler_us", ov->gpu_profiler_us, "outliers_kept", ov->keep_outliers,
                     "traces", ov->traces, "stats", stats);
}

static int num(const json_t *j, const char *key, double *v)
{
    json_t *x = json_object_get(j, key);
    if (!json_is_number(x))
        return -1;
    *v = json_number_value(x);
    return isfinite(*v) ? 0 : -1;
}

int iteration_overheads_parse(const json_t *j, xg_overheads *ov, xg_error *err)
{
    memset(ov, 0, sizeof *ov);
    err->event = -1;
    json_t *stats = json_object_get(j, "stats");
    if (!json_is_object(j) || !json_is_array(stats)) {
        xg_error_set(err, -1, "stats", "an overhead set is an object with a \"stats\" array");
        return -1;
    }
    ov->cpu_profiler_us = 2;
    ov->gpu_profiler_us = 4;
    num(j, "cpu_profiler_us", &ov->cpu_profiler_us);
    num(j, "gpu_profiler_us", &ov->gpu_profiler_us);
    ov->keep_outliers = json_is_true(json_object_get(j, "outliers_kept"));
    json_t *tr = json_object_get(j, "traces");
    ov->traces = json_is_integer(tr) ? (int)json_integer_value(tr) : 0;
    size_t i;
    json_t *s;
    json_array_foreach(stats, i, s) {
        char field[32];
        json_t *type = json_object_get(s, "type"), *name = json_object_get(s, "name");
        xg_ovstat st = {0};
        snprintf(field, sizeof field, "stats[%zu]", i);
        if (!json_is_object(s) || !json_is_string(type) ||
            (st.type = xg_ov_type_parse(json_string_value(type))) < 0) {
            xg_error_set(err, -1, field, "%s.type: expected \"T1\"..\"T5\"", field);
            goto fail;
        }
        if (name && !json_is_null(name) && !json_is_string(name)) {
            xg_error_set(err, -1, field, "%s.name: expected a string or null", field);
            goto fail;
        }
        st.name = json_is_string(name) ? (char *)json_string_value(name) : NULL;
        if (num(s, "mean", &st.mean) < 0 || st.mean < 0) {
            xg_error_set(err, -1, field, "%s.mean: expected seconds >= 0", field);
            goto fail;
        }
        if (num(s, "median", &st.median) < 0)
            st.median = st.mean;
        if (num(s, "std", &st.std) < 0)
            st.std = 0;
        json_t *c = json_object_get(s, "count");
        st.count = json_is_integer(c) ? json_integer_value(c) : 0;
        if (xg_ov_add(ov, &st) < 0) {
            xg_error_set(err, -1, NULL, "out of memory");
            goto fail;
        }
    }
    xg_ov_sort(ov);
    return 0;
fail:
    xg_overheads_free(ov);
    return -1;
}

int iteration_measure(const xg_trace *const *traces, int n, const xg_ov_options *prof,
                      xg_overheads *out, xg_error *err)
{
    xg_ov_samples s;
    xg_ov_samples_init(&s, prof);
    int rc = -1;
    for (int i = 0; i < n; i++) {
        xg_graph g;
        if (xg_graph_build(traces[i], &g, err) < 0)
            goto done;
        int r = xg_ov_collect(&s, &g, err);
        xg_graph_free(&g);
        if (r < 0)
            goto done;
    }
    rc = xg_ov_summarise_release(&s, out, err);
done:
    xg_ov_samples_free(&s);
    return rc;
}

int iteration_kernel_times_parse(const json_t *j, xg_kt_entry **out, int *n, xg_error *err)
{
    *out = NULL;
    *n = 0;
    err->event = -1;
    if (!json_is_object(j)) {
        xg_error_set(err, -1, "kernel_times", "kernel times: expected an object "
                                              "{\"kernel or op name\": seconds}");
        return -1;
    }
    size_t cap = json_object_size(j);
    xg_kt_entry *kt = calloc(cap ? cap : 1, sizeof *kt);
    if (!kt) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    const char *key;
    json_t *v;
    int k = 0;
    json_object_foreach((json_t *)j, key, v) {
        kt[k].name = key;
        double x;
        if (json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) >= 0) {
            kt[k].seconds = json_number_value(v);
        } else if (json_is_object(v) && num(v, "scale", &x) == 0 && x > 0) {
            kt[k].scale = x;
        } else if (json_is_object(v) && num(v, "seconds", &x) == 0 && x >= 0) {
            kt[k].seconds = x;
        } else {
            xg_error_set(err, -1, "kernel_times", "kernel_times[\"%.60s\"]: expected seconds "
                         ">= 0, {\"seconds\": s} or {\"scale\": x > 0}", key);
            free(kt);
            return -1;
        }
        k++;
    }
    *out = kt;
    *n = k;
    return 0;
}

/* ---- the analysis ------------------------------------------------------------------- */

static double pct(double part, double whole)
{
    return whole > 0 ? 100.0 * part / whole : 0;
}

static json_t *breakdown_json(const xg_breakdown *b)
{
    static const char *const type[XG_NDEVTYPES] = {"computation", "communication", "memory",
                                                   "other"};
    const double part[XG_NDEVTYPES] = {b->comp, b->comm, b->mem, b->other};
    json_t *idle = json_array(), *sum = json_object(), *count = json_object();
    for (int i = 0; i < b->nidle; i++) {
        const xg_idle_stream *s = &b->idle_streams[i];
        json_array_append_new(idle, json_pack("{s:I, s:f, s:f, s:f}", "stream",
                                              (json_int_t)s->stream, "host_wait", s->host_wait,
                                              "kernel_wait", s->kernel_wait, "other", s->other));
    }
    json_t *o = json_pack("{s:f}", "window", b->window);
    for (int k = 0; k < XG_NDEVTYPES; k++) {
        char key[32];
        json_object_set_new(o, type[k], json_real(part[k]));
        snprintf(key, sizeof key, "%s_pct", type[k]);
        json_object_set_new(o, key, json_real(pct(part[k], b->window)));
        json_object_set_new(sum, type[k], json_real(b->kernel_sum[k]));
        json_object_set_new(count, type[k], json_integer(b->kernels[k]));
    }
    json_object_set_new(o, "idle", json_real(b->idle));
    json_object_set_new(o, "idle_pct", json_real(pct(b->idle, b->window)));
    json_object_set_new(o, "non_compute", json_real(b->comm + b->mem + b->other));
    json_object_set_new(o, "kernel_sum", sum);
    json_object_set_new(o, "kernel_count", count);
    json_object_set_new(o, "idle_by_stream", idle);
    json_object_set_new(o, "excluded_events", json_integer(b->excluded));
    /* HTA's names: the types of the set in order, joined by " overlapping " */
    static const char *const tname[3] = {"computation", "communication", "memory"};
    double tt = 0;
    for (int m = 1; m < 8; m++)
        tt += b->type_time[m];
    json_t *types = json_array();
    for (int m = 1; m < 8; m++) {
        char label[80] = "";
        for (int k = 0; k < 3; k++)
            if (m & (1 << k))
                snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s",
                         label[0] ? " overlapping " : "", tname[k]);
        json_array_append_new(types, json_pack("{s:s, s:f, s:f}", "kernel_type", label,
                                               "seconds", b->type_time[m], "pct",
                                               pct(b->type_time[m], tt)));
    }
    json_object_set_new(o, "kernel_types", types);
    return o;
}

/* ---- efficiency ---------------------------------------------------------------------- */

static json_t *num_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *iteration_device_json(const xg_device *d)
{
    json_t *peak = json_object();
    for (int p = 0; p < XG_NPREC; p++)
        json_object_set_new(peak, xg_prec_name(p), json_real(d->peak[p]));
    return json_pack("{s:s, s:o, s:f}", "name", d->name, "peak_flops", peak, "dram_bandwidth",
                     d->dram_bw);
}

int iteration_device_parse(const json_t *j, xg_device *d, xg_error *err)
{
    memset(d, 0, sizeof *d);
    err->event = -1;
    if (!json_is_object(j)) {
        xg_error_set(err, -1, "device", "a device is an object {\"name\", \"peak_flops\": "
                                        "{\"fp64\",\"fp32\",\"tf32\",\"fp16\"}, "
                                        "\"dram_bandwidth\"}");
        return -1;
    }
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)j, key, v) {
        if (strcmp(key, "name") && strcmp(key, "peak_flops") && strcmp(key, "dram_bandwidth") &&
            strcmp(key, "builtin")) {
            xg_error_set(err, -1, key, "%.40s: unknown field (name, peak_flops, dram_bandwidth)",
                         key);
            return -1;
        }
    }
    json_t *name = json_object_get(j, "name"), *peak = json_object_get(j, "peak_flops");
    if (!json_is_string(name) || json_string_length(name) >= sizeof d->name) {
        xg_error_set(err, -1, "name", "name: expected a string of 1 to %zu characters",
                     sizeof d->name - 1);
        return -1;
    }
    snprintf(d->name, sizeof d->name, "%s", json_string_value(name));
    if (!json_is_object(peak)) {
        xg_error_set(err, -1, "peak_flops",
                     "peak_flops: expected {\"fp64\",\"fp32\",\"tf32\",\"fp16\"} in FLOP/s");
        return -1;
    }
    json_object_foreach(peak, key, v) {
        if (xg_prec_parse(key) < 0 || !strcmp(key, "bf16")) {
            xg_error_set(err, -1, "peak_flops", "peak_flops.%.30s: unknown precision "
                                                "(fp64, fp32, tf32, fp16)", key);
            return -1;
        }
    }
    for (int p = 0; p < XG_NPREC; p++) {
        json_t *x = json_object_get(peak, xg_prec_name(p));
        d->peak[p] = json_is_number(x) ? json_number_value(x) : NAN;
    }
    json_t *bw = json_object_get(j, "dram_bandwidth");
    d->dram_bw = json_is_number(bw) ? json_number_value(bw) : NAN;
    return xg_device_validate(d, err);
}

static json_t *eff_sum_json(const xg_eff_sum *s, const xg_device *dev)
{
    json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f, s:f}", "count", (json_int_t)s->count, "time",
                          s->time, "flops", s->flops, "flop_time", s->flop_time, "bytes",
                          s->bytes, "byte_time", s->byte_time);
    json_object_set_new(o, "achieved_flops", num_or_null(xg_eff_achieved_flops(s)));
    json_object_set_new(o, "flops_fraction", num_or_null(xg_eff_flops_frac(s)));
    json_object_set_new(o, "achieved_bandwidth", num_or_null(xg_eff_achieved_bw(s)));
    json_object_set_new(o, "bandwidth_fraction", num_or_null(xg_eff_bw_frac(s, dev)));
    json_object_set_new(o, "roofline_time", dev ? json_real(s->roofline) : json_null());
    json_object_set_new(o, "roofline_measured", dev ? json_real(s->roofline_measured) : json_null());
    return o;
}

json_t *iteration_efficiency_json(const xg_eff_attr *a, const xg_device *dev, int step,
                                  int kernels, xg_error *err)
{
    const xg_graph *g = a->g;
    xg_efficiency e;
    if (xg_efficiency_of(a, dev, step, kernels ? 10 : 1, &e, err) < 0)
        return NULL;
    json_t *o = eff_sum_json(&e.total, dev);
    if (kernels) {
        json_object_set_new(o, "device", dev ? iteration_device_json(dev) : json_null());
        json_t *k = json_array();
        for (int i = 0; i < e.nkernels; i++) {
            const xg_eff_kernel *x = &e.kernels[i];
            json_t *ko = eff_sum_json(&x->s, dev);
            json_object_set_new(ko, "name", json_string(xg_name(g->t, x->name)));
            json_object_set_new(ko, "class", json_string(xg_ek_class_name(x->cls)));
            json_object_set_new(ko, "precision", x->cls == XG_EK_MEMORY
                                                     ? json_null()
                                                     : json_string(xg_prec_name(x->prec)));
            json_array_append_new(k, ko);
        }
        json_object_set_new(o, "kernels", k);
        json_t *w = json_array();
        if (!e.trace_has_flops)
            json_array_append_new(w, json_string("the trace carries no FLOP counts (record with "
                                                 "torch.profiler.profile(with_flops=True)): "
                                                 "achieved FLOP/s unknown"));
        if (!e.trace_has_shapes)
            json_array_append_new(w, json_string("the trace carries no input shapes (record_shapes="
                                                 "True): bytes known for memcpy/memset only"));
        if (!dev)
            json_array_append_new(w, json_string("no device named (?device=, --device): no "
                                                 "fractions of peak nor roofline times"));
        json_object_set_new(o, "warnings", w);
    }
    xg_efficiency_free(&e);
    return o;
}

static json_t *step_json(const xg_graph *g, const xg_cp_result *r, int i, int with_bd,
                         const xg_eff_attr *attr, const xg_device *dev, xg_error *err)
{
    const xg_cp_step *s = &r->steps[i];
    const xg_trace *t = g->t;
    json_t *active = json_array(), *top = json_array();
    for (int k = 0; k < r->nstreams; k++)
        json_array_append_new(active, json_pack("{s:I, s:f, s:f}", "stream",
                                                (json_int_t)g->streams[k], "seconds",
                                                s->gpu_active[k], "end", s->gpu_end[k]));
    for (int k = 0; k < s->ntop; k++)
        json_array_append_new(top, json_pack("{s:s, s:f, s:f, s:I}", "name",
                                             xg_name(t, s->top[k].name), "seconds",
                                             s->top[k].seconds, "share_pct",
                                             pct(s->top[k].seconds, s->predicted), "count",
                                             (json_int_t)s->top[k].count));
    const xg_step *st = &g->steps[s->step];
    json_t *o = json_pack("{s:i, s:s, s:f, s:f, s:o, s:f, s:f, s:f, s:s, s:I, s:I, s:o, s:o}",
                          "index", s->step, "label", st->name >= 0 ? xg_name(t, st->name)
                                                                   : "(whole trace)",
                          "measured", s->measured, "predicted", s->predicted, "error",
                          isnan(s->error) ? json_null() : json_real(s->error), "cpu_time",
                          s->cpu_time, "gpu_time", s->gpu_time, "idle", s->idle, "bound",
                          s->gpu_bound ? "gpu" : "cpu", "kernels", (json_int_t)s->kernels,
                          "kernels_changed", (json_int_t)s->replaced, "gpu_active", active,
                          "top_ops", top);
    json_object_set_new(o, "sync_wait", json_real(s->sync_wait));
    if (with_bd) {
        xg_breakdown b;
        if (xg_breakdown_compute(g, s->step, -1, &b, err) < 0) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, "breakdown", breakdown_json(&b));
        xg_breakdown_free(&b);
        json_t *eff = iteration_efficiency_json(attr, dev, s->step, 0, err);
        if (!eff) {
            json_decref(o);
            return NULL;
        }
        json_object_set_new(o, "efficiency", eff);
    }
    return o;
}

/* What every time of the answer measures: all in seconds, but not all
 * of the same thing. */
static json_t *iteration_units_json(void)
{
    return json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "times", "s",
        "measured", "the step's wall time in the trace: its ProfilerStep range, profiler on",
        "predicted",
        "the step's time on the critical path through its operators, launches and kernels "
        "(paper 001, Algorithm 1), the profiler's overhead per event taken out: the step "
        "unprofiled",
        "error", "|predicted - measured| / measured",
        "cpu_time", "the host's part of the predicted step: operators and launches on the path",
        "gpu_time", "the device's part: from the step's first kernel to its last on the path",
        "idle", "predicted step time in which no stream of the GPU runs a kernel",
        "sync_wait", "time the host waited for other ranks (gaps of 1 ms or more while its own "
                     "GPU computed for at most 10% of them), kept in the predicted step",
        "top_ops", "seconds of each operator on the critical path, and its share of the "
                   "predicted step",
        "outliers_dropped", "host overhead samples (T1-T5) left out as outliers, their "
                            "share of the measured step and their seconds by type",
        "breakdown", "GPU time over the trace's window by kernel type, each instant counted "
                     "once (HTA's temporal breakdown); idle: no kernel on any stream");
}

static json_t *analyse(const xg_graph *g, const xg_overheads *ov, const iteration_opts *o,
                       xg_error *err)
{
    xg_cp_options co = {.ov = ov, .kt = o->kt, .nkt = o->nkt, .dev_us = o->dev_us,
                        .launch_gap_us = -1, .top = o->top};
    xg_cp_result r;
    xg_eff_attr attr = {0};
    if (o->breakdown && xg_eff_attr_build(g, &attr, err) < 0)
        return NULL;
    if (xg_critpath(g, &co, &r, err) < 0) {
        xg_eff_attr_free(&attr);
        return NULL;
    }
    json_t *doc = NULL, *steps = json_array(), *streams = json_array(), *warn = json_array();
    json_t *kt = json_array(), *coded = json_array();
    double sp = 0, sm = 0, sw = 0, dropped_max = 0;
    for (int i = 0; i < r.nsteps; i++) {
        json_t *s = step_json(g, &r, i, o->breakdown, &attr, o->device, err);
        if (!s)
            goto done;
        /* the samples (T1-T5) the overheads dropped as outliers, as a
         * share of the measured step */
        double by[XG_NTYPES];
        double d = xg_ov_dropped(ov, g, r.steps[i].step, by);
        double share = r.steps[i].measured > 0 ? d / r.steps[i].measured : NAN;
        json_t *bt = json_object();
        for (int ty = 0; ty < XG_NTYPES; ty++)
            json_object_set_new(bt, xg_ov_type_name(ty), json_real(by[ty]));
        json_object_set_new(s, "outliers_dropped",
                            isnan(d) ? json_null()
                                     : json_pack("{s:f, s:o, s:O}", "seconds", d, "share",
                                                 isnan(share) ? json_null() : json_real(share),
                                                 "by_type", bt));
        json_decref(bt);
        if (!isnan(share) && share > dropped_max)
            dropped_max = share;
        json_array_append_new(steps, s);
        sp += r.steps[i].predicted;
        sm += r.steps[i].measured;
        sw += r.steps[i].sync_wait;
    }
    if (dropped_max > 0.1) {
        json_array_append_new(coded, json_pack("{s:s, s:s, s:f}", "code", ITERATION_WARN_OUTLIERS,
                                               "message", "host time dropped as outliers of "
                                               "its overheads (T1-T5) exceeds 10% of a measured "
                                               "step: the prediction leaves that time out",
                                               "share", dropped_max));
        json_array_append_new(warn, json_sprintf(ITERATION_WARN_OUTLIERS ": host time dropped as "
                                                 "outliers of its overheads (T1-T5) is %.1f%% "
                                                 "of a measured step",
                                                 100 * dropped_max));
    }
    for (int i = 0; i < g->nstreams; i++)
        json_array_append_new(streams, json_integer(g->streams[i]));
    for (int i = 0; i < g->nwarnings; i++)
        json_array_append_new(warn, json_string(g->warnings[i]));
    if (r.missing_lookups)
        json_array_append_new(warn, json_sprintf("%lld overhead lookups found neither the op nor "
                                                 "a fallback of its type in the set: 0 used",
                                                 r.missing_lookups));
    for (int k = 0; k < o->nkt; k++) {
        json_t *e = json_pack("{s:s, s:I}", "name", o->kt[k].name, "kernels_changed",
                              (json_int_t)r.kt_hits[k]);
        if (o->kt[k].scale > 0)
            json_object_set_new(e, "scale", json_real(o->kt[k].scale));
        else
            json_object_set_new(e, "seconds", json_real(o->kt[k].seconds));
        json_array_append_new(kt, e);
    }
    double gm = xg_cp_geomean_error(&r);
    json_t *ovj = json_pack("{s:s, s:f, s:f, s:b, s:I, s:I}", "source",
                            o->ov ? (o->ov_source ? o->ov_source : "set") : "trace",
                            "cpu_profiler_us", ov->cpu_profiler_us, "gpu_profiler_us",
                            ov->gpu_profiler_us, "outliers_kept", ov->keep_outliers,
                            "fallback_lookups",
                            (json_int_t)r.fallback_lookups, "missing_lookups",
                            (json_int_t)r.missing_lookups);
    if (o->ov_name)
        json_object_set_new(ovj, "name", json_string(o->ov_name));
    doc = json_pack("{s:o, s:i, s:I, s:o, s:o, s:o, s:o, s:{s:i, s:o, s:f, s:f, s:f, s:o}, s:o}",
                    "rank",
                    g->t->rank >= 0 ? json_integer(g->t->rank) : json_null(), "world_size",
                    g->t->world_size, "events", (json_int_t)g->t->n, "streams", streams,
                    "overheads", ovj, "kernel_times", kt, "steps", steps, "summary", "steps",
                    r.nsteps, "geomean_error", isnan(gm) ? json_null() : json_real(gm),
                    "mean_predicted", r.nsteps ? sp / r.nsteps : 0, "mean_measured",
                    r.nsteps ? sm / r.nsteps : 0, "sync_wait", r.nsteps ? sw / r.nsteps : 0,
                    "warnings", coded, "warnings", warn);
    steps = streams = warn = kt = coded = NULL;
    if (doc)
        json_object_set_new(doc, "units", iteration_units_json());
    if (doc && !o->no_interval) {
        iteration_trust tr;
        if (iteration_trust_compute(g, &r, &co, o->ov == NULL, &o->prof, &tr, err) < 0) {
            json_decref(doc);
            doc = NULL;
            goto done;
        }
        iteration_trust_json(&tr, doc, json_object_get(json_object_get(doc, "summary"),
                                                       "warnings"));
        iteration_trust_free(&tr);
    }
    if (doc && o->breakdown) {
        xg_breakdown b;
        if (xg_breakdown_compute(g, XG_BD_TRACE, -1, &b, err) < 0) {
            json_decref(doc);
            doc = NULL;
            goto done;
        }
        json_object_set_new(doc, "breakdown", breakdown_json(&b));
        xg_breakdown_free(&b);
        json_t *eff = iteration_efficiency_json(&attr, o->device, -1, 1, err);
        if (!eff) {
            json_decref(doc);
            doc = NULL;
            goto done;
        }
        json_object_set_new(doc, "efficiency", eff);
    }
done:
    json_decref(steps);
    json_decref(streams);
    json_decref(warn);
    json_decref(kt);
    json_decref(coded);
    xg_cp_result_free(&r);
    xg_eff_attr_free(&attr);
    return doc;
}

json_t *iteration_analyse(const xg_trace *t, const iteration_opts *o, xg_error *err)
{
    err->event = -1;
    err->field[0] = '\0';
    xg_graph g;
    if (xg_graph_build(t, &g, err) < 0)
        return NULL;
    xg_overheads own = {0};
    const xg_overheads *ov = o->ov;
    json_t *doc = NULL;
    if (!ov) {
        if (iteration_host_own(&g, &o->prof, &own, err) < 0)
            goto done;
        ov = &own;
    }
    doc = analyse(&g, ov, o, err);
done:
    xg_overheads_free(&own);
    xg_graph_free(&g);
    return doc;
}
