/*
 * cmd_iteration.c — `perfcast iteration TRACE`: why one training iteration
 * takes as long as it does, offline. Reads a Kineto trace (plain or gzip,
 * streamed), builds its execution graph, measures the host overheads T1–T5
 * (or takes a stored set / a JSON file), predicts each step on the critical
 * path (Algorithm 1 of paper 001, generalised to several streams), with an
 * optional what-if table of kernel times, and breaks the GPU time down as
 * HTA does. api/iteration.h does the work; this file parses flags and
 * prints a table, or the JSON document with --json.
 *
 *   --overheads NAME|FILE   an overhead set: a JSON file (as written by
 *                           --save-overheads or GET /v1/overhead-sets/{id}),
 *                           or the name of a stored set (DATABASE_URL)
 *   --kernel-times FILE     {"kernel or op name": seconds | {"scale": x}}
 *   --save-overheads FILE   write the set measured on this trace
 *   --cpu-overhead US, --gpu-overhead US   profiler overhead per event
 *                           subtracted from the samples (default 2, 4)
 *   --keep-outliers         no IQR filter when measuring on the trace
 *   --device NAME|FILE      the GPU the efficiency figures and roofline times
 *                           are measured against: a built-in device (V100,
 *                           A100, A100-SXM4-40GB, H100, ...) or a JSON file
 *                           {"name","peak_flops":{"fp64","fp32","tf32",
 *                           "fp16"},"dram_bandwidth"} (FLOP/s, bytes/s)
 *   --value X --trace-at X1=TRACE1 [...] --at X2
 *                           TRACE was measured at X of a parameter (a batch
 *                           size), the others at X1...: each kernel's time
 *                           per launch is fitted as a PMNF function of the
 *                           parameter: each operator's device time from
 *                           its FLOPs or bytes (analysis/iteration_predict.h),
 *                           and the steps of TRACE are predicted at X2, with
 *                           a 95% interval and coded warnings
 *   --by-kernel-names       with --at: each kernel name's time fitted
 *                           instead (the former method)
 *   --mixed-devices         with --at: accept traces of different device
 *                           types (refused otherwise, naming both)
 *   --measured X=MS         with --at: the step of the run at X (--value's or
 *                           a --trace-at's) measured without the profiler, in
 *                           ms; calibrates the profiler's cost per CPU event
 *                           (analysis/iteration_calibrate.h)
 * Exit 0, 1 (the machine failed), 2 (invalid input or usage: one line on
 * stderr naming the event, field or entry).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/iteration.h"
#include "ingest/kineto_xg.h"
#include "analysis/iteration_model.h"
#include "analysis/iteration_predict.h"
#include "server/commands.h"
#include "store/overheads.h"

#define IT_MAX_TRACES 32

typedef struct it_args {
    const char *path, *overheads, *kernel_times, *save, *device;
    double cpu_us, gpu_us;
    int json, keep_outliers, by_names, mixed_devices;
    /* modelled kernel times: TRACE at value, other traces at theirs, predict at `at` */
    int has_value, has_at, nother;
    double value, at;
    double other_x[IT_MAX_TRACES];
    const char *other[IT_MAX_TRACES];
    int nmeasured; /* --measured X=MS */
    double measured_x[IT_MAX_TRACES + 1], measured_ms[IT_MAX_TRACES + 1];
} it_args;

static const char it_usage_text[] =
    "usage: perfcast iteration TRACE [--overheads NAME|FILE] [--kernel-times FILE] [--json]\n"
    "                          [--save-overheads FILE] [--cpu-overhead US] [--gpu-overhead US]\n"
    "                          [--keep-outliers] [--device NAME|FILE]\n"
    "                          [--value X --trace-at X1=TRACE1 ... --at X2 [--by-kernel-names]\n"
    "                           [--mixed-devices] [--measured X=MS ...]]\n";

static int it_usage(const char *msg)
{
    fprintf(stderr, "perfcast iteration: %s\n", msg);
    fputs(it_usage_text, stderr);
    return 2;
}

static int parse_us(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return errno || *end || end == s || !isfinite(*v) || *v < 0 ? -1 : 0;
}

static int parse_args(int argc, char **argv, it_args *a)
{
    memset(a, 0, sizeof *a);
    a->cpu_us = 2;
    a->gpu_us = 4;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json")) {
            a->json = 1;
        } else if (!strcmp(s, "--by-kernel-names")) {
            a->by_names = 1;
        } else if (!strcmp(s, "--mixed-devices")) {
            a->mixed_devices = 1;
        } else if (!strcmp(s, "--keep-outliers")) {
            a->keep_outliers = 1;
        } else if (!strcmp(s, "--device") && i + 1 < argc) {
            a->device = argv[++i];
        } else if (!strcmp(s, "--overheads") && i + 1 < argc) {
            a->overheads = argv[++i];
        } else if (!strcmp(s, "--kernel-times") && i + 1 < argc) {
            a->kernel_times = argv[++i];
        } else if (!strcmp(s, "--save-overheads") && i + 1 < argc) {
            a->save = argv[++i];
        } else if (!strcmp(s, "--value") && i + 1 < argc) {
            char *end;
            a->value = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !isfinite(a->value))
                return it_usage("--value must be a number");
            a->has_value = 1;
        } else if (!strcmp(s, "--at") && i + 1 < argc) {
            char *end;
            a->at = strtod(argv[++i], &end);
            if (*end || end == argv[i] || !isfinite(a->at) || a->at <= 0)
                return it_usage("--at must be a number > 0");
            a->has_at = 1;
        } else if (!strcmp(s, "--trace-at") && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            double x = strtod(v, &end);
            if (end == v || *end != '=' || !end[1] || !isfinite(x))
                return it_usage("--trace-at takes VALUE=TRACE");
            if (a->nother == IT_MAX_TRACES)
                return it_usage("at most 32 --trace-at");
            a->other_x[a->nother] = x;
            a->other[a->nother++] = end + 1;
        } else if (!strcmp(s, "--measured") && i + 1 < argc) {
            char *end;
            const char *v = argv[++i];
            double x = strtod(v, &end), ms = NAN;
            if (end != v && *end == '=' && isfinite(x))
                ms = strtod(end + 1, &end);
            if (!(ms > 0) || !isfinite(ms) || *end)
                return it_usage("--measured takes VALUE=MS, the step without the profiler in "
                                "milliseconds > 0");
            if (a->nmeasured == IT_MAX_TRACES + 1)
                return it_usage("at most one --measured per trace");
            a->measured_x[a->nmeasured] = x;
            a->measured_ms[a->nmeasured++] = ms;
        } else if (!strcmp(s, "--cpu-overhead") && i + 1 < argc) {
            if (parse_us(argv[++i], &a->cpu_us) < 0)
                return it_usage("--cpu-overhead must be microseconds >= 0");
        } else if (!strcmp(s, "--gpu-overhead") && i + 1 < argc) {
            if (parse_us(argv[++i], &a->gpu_us) < 0)
                return it_usage("--gpu-overhead must be microseconds >= 0");
        } else if (s[0] == '-' && s[1] != '\0') {
            char msg[160];
            snprintf(msg, sizeof msg, "unknown flag or missing value: %.100s", s);
            return it_usage(msg);
        } else if (!a->path) {
            a->path = s;
        } else {
            return it_usage("only one TRACE");
        }
    }
    if (!a->path)
        return it_usage("TRACE is missing");
    if (a->has_at && (!a->has_value || a->nother < 1))
        return it_usage("--at needs --value (TRACE's) and at least one --trace-at VALUE=TRACE");
    if (!a->has_at && (a->has_value || a->nother))
        return it_usage("--value and --trace-at go with --at");
    if (a->by_names && !a->has_at)
        return it_usage("--by-kernel-names goes with --at");
    if (a->mixed_devices && !a->has_at)
        return it_usage("--mixed-devices goes with --at");
    if (a->has_at && a->kernel_times)
        return it_usage("--at models the kernel times; it does not combine with --kernel-times");
    if (a->nmeasured && !a->has_at)
        return it_usage("--measured goes with --at");
    if (a->nmeasured && a->overheads)
        return it_usage("--measured calibrates the profiler's cost on the traces' own "
                        "overheads; it does not combine with --overheads");
    return 0;
}

/* The --measured steps by trace: measured[k] (seconds) of the trace at
 * x[k], NAN where none was given. 0, or the usage error of a value no
 * trace was measured at, or given twice. */
static int measured_steps(const it_args *a, const double *x, int n, double *measured)
{
    for (int k = 0; k < n; k++)
        measured[k] = NAN;
    for (int m = 0; m < a->nmeasured; m++) {
        int k = 0;
        while (k < n && x[k] != a->measured_x[m])
            k++;
        char msg[160];
        if (k == n || !isnan(measured[k])) {
            snprintf(msg, sizeof msg, "--measured %g: %s", a->measured_x[m],
                     k == n ? "no trace at that value (--value or a --trace-at)"
                            : "given twice");
            return it_usage(msg);
        }
        measured[k] = a->measured_ms[m] * 1e-3;
    }
    return 0;
}

static int load_trace(const char *path, xg_trace *t)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "perfcast iteration: %s: %s\n", path, strerror(errno));
        return 2;
    }
    ingest_input in = {.data = NULL, .len = 0, .fd = fd};
    xg_error err;
    int rc = iteration_load(&in, 0, t, &err);
    close(fd);
    if (rc < 0) {
        fprintf(stderr, "perfcast iteration: %s: %s\n", path, err.msg);
        return 2;
    }
    return 0;
}

/* --device: a built-in device by name, else a JSON file. */
static int load_device(const char *what, xg_device *d)
{
    const xg_device *b = xg_device_builtin(what);
    if (b) {
        *d = *b;
        return 0;
    }
    struct stat sb;
    if (stat(what, &sb) != 0) {
        int n;
        const xg_device *all = xg_device_builtins(&n);
        fprintf(stderr, "perfcast iteration: --device %s: no such built-in device nor file "
                        "(built-in: V100, A100, H100, H200", what);
        for (int i = 0; i < n; i++)
            fprintf(stderr, ", %s", all[i].name);
        fprintf(stderr, ")\n");
        return 2;
    }
    json_error_t je;
    json_t *j = json_load_file(what, 0, &je);
    if (!j) {
        fprintf(stderr, "perfcast iteration: %s: line %d: %s\n", what, je.line, je.text);
        return 2;
    }
    xg_error err;
    int rc = iteration_device_parse(j, d, &err);
    json_decref(j);
    if (rc < 0) {
        fprintf(stderr, "perfcast iteration: %s: %s\n", what, err.msg);
        return 2;
    }
    return 0;
}

/* --overheads: a file when one exists at that path, else a stored set. */
static int load_overheads(const char *what, xg_overheads *ov)
{
    struct stat sb;
    xg_error err;
    if (stat(what, &sb) == 0) {
        json_error_t je;
        json_t *j = json_load_file(what, 0, &je);
        if (!j) {
            fprintf(stderr, "perfcast iteration: %s: line %d: %s\n", what, je.line, je.text);
            return 2;
        }
        int rc = iteration_overheads_parse(j, ov, &err);
        json_decref(j);
        if (rc < 0) {
            fprintf(stderr, "perfcast iteration: %s: %s\n", what, err.msg);
            return 2;
        }
        return 0;
    }
    const char *url = getenv("DATABASE_URL");
    if (!url || !*url) {
        fprintf(stderr, "perfcast iteration: --overheads %s: no such file, and DATABASE_URL is "
                        "not set to look up a stored set of that name\n", what);
        return 2;
    }
    store_error serr = {0};
    store *db = store_open(url, 1);
    PGconn *c = db ? store_acquire(db, &serr) : NULL;
    if (!c) {
        fprintf(stderr, "perfcast iteration: database: %s\n", db ? serr.msg : "out of memory");
        store_close(db);
        return 1;
    }
    /* the CLI reads the sets of the tenant "default" (id 1) */
    store_overhead_set set;
    int rc = store_overheads_get_by_name(c, 1, what, &set, &serr);
    store_release(db, c);
    store_close(db);
    if (rc != STORE_OK) {
        fprintf(stderr, "perfcast iteration: --overheads %s: %s\n", what, serr.msg);
        return rc == STORE_NOT_FOUND ? 2 : 1;
    }
    json_error_t je;
    json_t *j = json_loads(set.doc, 0, &je);
    store_overhead_set_free(&set);
    rc = j ? iteration_overheads_parse(j, ov, &err) : -1;
    json_decref(j);
    if (rc < 0) {
        fprintf(stderr, "perfcast iteration: stored set %s: %s\n", what, j ? err.msg : je.text);
        return 1;
    }
    return 0;
}

static int load_kernel_times(const char *path, json_t **j, xg_kt_entry **kt, int *n)
{
    json_error_t je;
    xg_error err;
    *j = json_load_file(path, 0, &je);
    if (!*j) {
        fprintf(stderr, "perfcast iteration: %s: line %d: %s\n", path, je.line, je.text);
        return 2;
    }
    if (iteration_kernel_times_parse(*j, kt, n, &err) < 0) {
        fprintf(stderr, "perfcast iteration: %s: %s\n", path, err.msg);
        return 2;
    }
    return 0;
}

static double jnum(const json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static void print_rate(const char *what, double v, double frac, const char *unit)
{
    if (isnan(v))
        return;
    printf("  %-20s %10.3f %s", what, v, unit);
    if (!isnan(frac))
        printf("  %6.2f%% of peak", 100 * frac);
    printf("\n");
}

static double jnum_nan(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void print_efficiency(const json_t *e)
{
    if (!e)
        return;
    const json_t *dev = json_object_get(e, "device");
    if (!json_is_object(dev))
        dev = NULL;
    printf("\nGPU efficiency over the trace%s%s:\n", dev ? " on " : "",
           dev ? json_string_value(json_object_get(dev, "name")) : "");
    print_rate("achieved FLOP/s", 1e-12 * jnum_nan(e, "achieved_flops"),
               jnum_nan(e, "flops_fraction"), "TFLOP/s");
    print_rate("achieved bandwidth", 1e-9 * jnum_nan(e, "achieved_bandwidth"),
               jnum_nan(e, "bandwidth_fraction"), "GB/s");
    double rt = jnum_nan(e, "roofline_time"), rm = jnum_nan(e, "roofline_measured");
    if (!isnan(rt) && rm > 0)
        printf("  roofline %10.3f ms for kernels measured at %.3f ms\n", 1e3 * rt, 1e3 * rm);
    size_t i;
    json_t *k;
    if (json_array_size(json_object_get(e, "kernels")))
        printf("  %12s  %-6s %-13s %-4s %7s %7s %11s  %s\n", "measured", "count", "class", "prec",
               "FLOP/s", "bw", "roofline", "kernel (FLOP/s and bandwidth in % of peak)");
    json_array_foreach(json_object_get(e, "kernels"), i, k) {
        double f = jnum_nan(k, "flops_fraction"), b = jnum_nan(k, "bandwidth_fraction");
        double r = jnum_nan(k, "roofline_time");
        printf("  %9.3f ms  x%-5lld %-13s %-4s", 1e3 * jnum(k, "time"),
               (long long)json_integer_value(json_object_get(k, "count")),
               json_string_value(json_object_get(k, "class")),
               json_is_string(json_object_get(k, "precision"))
                   ? json_string_value(json_object_get(k, "precision"))
                   : "-");
        printf(isnan(f) ? "     -  " : " %6.2f%%", 100 * f);
        printf(isnan(b) ? "     -  " : " %6.2f%%", 100 * b);
        printf(isnan(r) || jnum(k, "roofline_measured") <= 0 ? "          -" : " %8.3f ms",
               1e3 * r);
        printf("  %.60s\n", json_string_value(json_object_get(k, "name")));
    }
    json_t *w;
    json_array_foreach(json_object_get(e, "warnings"), i, w)
        printf("  note: %s\n", json_string_value(w));
}

/* Each step's predicted time and its interval, one line each. */
static void print_step_intervals(const json_t *doc)
{
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        const json_t *e = json_object_get(s, "interval");
        printf("  %-22.22s %12.3f ms  [%.3f, %.3f]\n",
               json_string_value(json_object_get(s, "label")), 1e3 * jnum(s, "predicted"),
               1e3 * json_number_value(json_array_get(e, 0)),
               1e3 * json_number_value(json_array_get(e, 1)));
    }
}

/* The profiler term of an interval object iv ("profiler overhead from
 * none to 4 us ...: +a% / -b%") into buf; 0, or -1 when iv has none. */
static int profiler_text(const json_t *iv, char *buf, size_t cap)
{
    const json_t *cpu = json_object_get(iv, "cpu_profiler_us");
    if (!json_is_array(cpu) || !json_is_number(json_object_get(iv, "profiler_host_faster")))
        return -1; /* none, or the calibration's term (calibration_text) */
    snprintf(buf, cap,
             "profiler overhead from none to %g us per CPU event or the host %gx as fast: "
             "+%.1f%% / -%.1f%%",
             json_number_value(json_array_get(cpu, 1)), jnum(iv, "profiler_host_faster"),
             100 * jnum(iv, "profiler_up"), 100 * jnum(iv, "profiler_down"));
    return 0;
}

/* The steps' intervals relative to their predictions (means over the
 * steps) into buf: "-a% / +b%", or "+-a%" where a and b agree to 0.05%.
 * The ends part once the profiler term or the device's floor joins the
 * host's and the model's symmetric half-width. */
static void interval_ends_text(const json_t *doc, char *buf, size_t cap)
{
    double p = 0, lo = 0, hi = 0;
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        const json_t *e = json_object_get(s, "interval");
        p += jnum(s, "predicted");
        lo += json_number_value(json_array_get(e, 0));
        hi += json_number_value(json_array_get(e, 1));
    }
    double down = p > 0 ? 100 * (1 - lo / p) : NAN, up = p > 0 ? 100 * (hi / p - 1) : NAN;
    if (fabs(down - up) < 0.05)
        snprintf(buf, cap, "+-%.1f%%", up);
    else
        snprintf(buf, cap, "-%.1f%% / +%.1f%%", down, up);
}

/* The calibration of the profiler's cost (modelled.calibration) as one
 * line, with the term it gives the interval (iv's profiler_up); 0, or -1
 * when there is none. */
static int calibration_text(const json_t *cal, const json_t *iv, char *buf, size_t cap)
{
    if (!json_is_object(cal))
        return -1;
    size_t n = (size_t)snprintf(buf, cap,
                                "profiler's cost calibrated on %lld trace%s measured without the "
                                "profiler: %g us per CPU event (of %g to %g); their own steps "
                                "predicted",
                                (long long)json_integer_value(json_object_get(cal, "traces")),
                                json_integer_value(json_object_get(cal, "traces")) == 1 ? "" : "s",
                                jnum(cal, "cpu_profiler_us"),
                                json_number_value(json_array_get(json_object_get(cal, "grid"), 0)),
                                json_number_value(json_array_get(json_object_get(cal, "grid"), 1)));
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(cal, "errors"), i, e)
        if (json_is_number(e) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, " %+.1f%%", 100 * json_number_value(e));
    if (n < cap && json_is_number(json_object_get(cal, "term")))
        snprintf(buf + n, cap - n, "; their spread +-%.1f%% of a host-made step, +-%.1f%% of "
                                   "this one",
                 100 * jnum(cal, "term"), 100 * jnum(iv, "profiler_up"));
    else if (n < cap)
        snprintf(buf + n, cap - n, "; one trace gives no spread: the profiler term stays");
    return 0;
}

/* Each step's interval from its own trace and what it is made of. */
static void print_own_interval(const json_t *doc)
{
    const json_t *iv = json_object_get(doc, "interval");
    const json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
    if (!iv || !json_is_array(json_object_get(s0, "interval")))
        return;
    const json_t *ov = json_object_get(doc, "overheads");
    char prof[160] = "no profiler term";
    if (profiler_text(iv, prof, sizeof prof) == 0) {
        /* the term itself */
    } else if (strcmp(json_string_value(json_object_get(ov, "source")) ?: "", "trace")) {
        snprintf(prof, sizeof prof, "the profiler overhead the set subtracted");
    } else if (jnum(ov, "cpu_profiler_us") == 0 && jnum(ov, "gpu_profiler_us") > 0) {
        snprintf(prof, sizeof prof, "no CPU profiler overhead subtracted (GPU %g us)",
                 jnum(ov, "gpu_profiler_us"));
    } else if (jnum(ov, "cpu_profiler_us") == 0) {
        snprintf(prof, sizeof prof, "no profiler overhead subtracted");
    }
    char out[64] = "";
    if (jnum(iv, "outliers") > 0)
        snprintf(out, sizeof out, "; outliers kept: +%.1f%%", 100 * jnum(iv, "outliers"));
    printf("\n95%% interval of each predicted step (the steps' spread %.1f%% over %lld steps: "
           "+-%.1f%%; %s%s; Algorithm 1's error on this trace %.1f%%):\n",
           100 * jnum(iv, "step_spread"),
           (long long)json_integer_value(json_object_get(iv, "steps")),
           100 * jnum(iv, "steps_term"), prof, out, 100 * jnum(iv, "model"));
    print_step_intervals(doc);
    long long fl = (long long)json_integer_value(json_object_get(iv, "floored"));
    size_t n = json_array_size(json_object_get(doc, "steps"));
    if (fl && (size_t)fl == n)
        printf("  lower ends raised to the step with no host overhead (the device's part)\n");
    else if (fl)
        printf("  the lower end of %lld of %zu steps raised to the step with no host overhead (the "
               "device's part)\n", fl, n);
}

static void print_table(const json_t *doc)
{
    const json_t *ov = json_object_get(doc, "overheads");
    printf("overheads: %s", json_string_value(json_object_get(ov, "source")));
    if (json_object_get(ov, "name"))
        printf(" \"%s\"", json_string_value(json_object_get(ov, "name")));
    printf(" (profiler overhead subtracted: CPU %g us, GPU %g us; outliers %s)\n\n",
           jnum(ov, "cpu_profiler_us"), jnum(ov, "gpu_profiler_us"),
           json_is_true(json_object_get(ov, "outliers_kept")) ? "kept" : "dropped");
    printf("%-22s %12s %12s %8s %12s %12s %12s %5s\n", "step", "measured_ms", "predicted_ms",
           "error_%", "cpu_ms", "gpu_ms", "idle_ms", "bound");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        const json_t *e = json_object_get(s, "error");
        char err[32] = "-";
        if (json_is_number(e))
            snprintf(err, sizeof err, "%.2f", 100 * json_number_value(e));
        printf("%-22.22s %12.3f %12.3f %8s %12.3f %12.3f %12.3f %5s\n",
               json_string_value(json_object_get(s, "label")), 1e3 * jnum(s, "measured"),
               1e3 * jnum(s, "predicted"), err, 1e3 * jnum(s, "cpu_time"),
               1e3 * jnum(s, "gpu_time"), 1e3 * jnum(s, "idle"),
               json_string_value(json_object_get(s, "bound")));
    }
    const json_t *mod = json_object_get(doc, "modelled");
    int by_ops = mod && !strcmp(json_string_value(json_object_get(mod, "method")), "operators");
    char ends[48], sym[64] = "";
    interval_ends_text(doc, ends, sizeof ends);
    double rel = 100 * jnum(json_object_get(mod, "interval"), "relative");
    if (strncmp(ends, "+-", 2) || fabs(atof(ends + 2) - rel) >= 0.05)
        snprintf(sym, sizeof sym, " (the host and the model +-%.1f%%)", rel);
    if (mod && by_ops) {
        printf("\ndevice time modelled by operator across %zu traces, predicted at %g (TRACE "
               "measured at %g): %.3f ms per step on TRACE, %.3f ms at %g; 95%% interval "
               "%s%s:\n",
               json_array_size(json_object_get(mod, "values")), jnum(mod, "at"),
               jnum(mod, "value"), 1e3 * jnum(mod, "gpu_time"), 1e3 * jnum(mod, "gpu_time_at"),
               jnum(mod, "at"), ends, sym);
    } else if (mod) {
        printf("\nkernel times of %lld kernels modelled across %zu traces, predicted at %g "
               "(TRACE measured at %g; %lld kernels kept their measured times); 95%% interval "
               "%s: every kernel at its end, with the host's +-%.1f%%:\n",
               (long long)json_integer_value(json_object_get(mod, "kernels")),
               json_array_size(json_object_get(mod, "values")), jnum(mod, "at"), jnum(mod, "value"),
               (long long)json_integer_value(json_object_get(mod, "skipped")), ends, rel);
    }
    const json_t *hi = json_object_get(mod, "interval");
    if (hi) {
        const json_t *hp = json_object_get(hi, "host_p");
        char pv[32] = "not tested";
        if (json_is_number(hp))
            snprintf(pv, sizeof pv, "p %.3f", json_number_value(hp));
        printf("  host time per step: spread %.1f%% between %lld traces (Kruskal-Wallis %s); "
               "the host carries %.0f%% of the step: a spread of %.1f%% in it\n",
               100 * jnum(hi, "host_spread"),
               (long long)json_integer_value(json_object_get(hi, "host_traces")), pv,
               100 * jnum(hi, "host_share"), 100 * jnum(hi, "s_host"));
        char prof[160], cal[512];
        if (calibration_text(json_object_get(mod, "calibration"), hi, cal, sizeof cal) == 0)
            printf("  %s\n", cal);
        if (profiler_text(hi, prof, sizeof prof) == 0)
            printf("  %s, joined to the above\n", prof);
        else if (json_is_number(json_object_get(json_object_get(mod, "calibration"), "term")))
            printf("  the calibration's spread joined to the above in place of the profiler "
                   "term\n");
        const char *fl = json_string_value(json_object_get(hi, "floor"));
        if (fl && !strcmp(fl, "device"))
            printf("  lower end raised to the device's part of the step: %.3f ms (%.3f ms with "
                   "no host overhead, less %.1f%% for its own error)\n",
                   1e3 * jnum(hi, "device_floor"), 1e3 * jnum(hi, "device_step"),
                   100 * (1 - jnum(hi, "device_floor") / jnum(hi, "device_step")));
    }
    if (mod)
        print_step_intervals(doc);
    if (!mod)
        print_own_interval(doc);
    const json_t *sum = json_object_get(doc, "summary");
    const json_t *gm = json_object_get(sum, "geomean_error");
    if (json_is_number(gm))
        printf("geometric mean of the errors: %.2f%%\n", 100 * json_number_value(gm));
    double sw = jnum(sum, "sync_wait");
    if (sw > 0)
        printf("host waits for other ranks (sync_wait): %.3f ms per step\n", 1e3 * sw);
    double dsum = 0, dmax = 0;
    int nd = 0;
    json_array_foreach(json_object_get(doc, "steps"), i, s) {
        const json_t *od = json_object_get(s, "outliers_dropped");
        if (!json_is_object(od))
            continue;
        dsum += jnum(od, "seconds");
        dmax = fmax(dmax, jnum(od, "share"));
        nd++;
    }
    if (nd && dsum > 0)
        printf("host time dropped as outliers of its overheads (T1-T5): %.3f ms per step, "
               "%.1f%% of a measured step at most\n",
               1e3 * dsum / nd, 100 * dmax);
    const json_t *last = json_array_get(json_object_get(doc, "steps"), 0);
    if (last) {
        printf("\nops on the critical path (step %s):\n",
               json_string_value(json_object_get(last, "label")));
        json_t *t;
        json_array_foreach(json_object_get(last, "top_ops"), i, t)
            printf("  %8.3f ms %5.1f%%  x%-5lld %.80s\n", 1e3 * jnum(t, "seconds"),
                   jnum(t, "share_pct"), (long long)json_integer_value(json_object_get(t, "count")),
                   json_string_value(json_object_get(t, "name")));
    }
    const json_t *b = json_object_get(doc, "breakdown");
    if (b) {
        long long ex = (long long)json_integer_value(json_object_get(b, "excluded_events"));
        printf("\nGPU time over the trace (%.3f ms from the first device event to the last%s):\n",
               1e3 * jnum(b, "window"), ex ? ", the last step left out as HTA does" : "");
        printf("  computation %10.3f ms %6.2f%%\n  communication %8.3f ms %6.2f%%\n"
               "  memory %15.3f ms %6.2f%%\n  other %16.3f ms %6.2f%%\n"
               "  idle %17.3f ms %6.2f%%\n",
               1e3 * jnum(b, "computation"), jnum(b, "computation_pct"),
               1e3 * jnum(b, "communication"), jnum(b, "communication_pct"),
               1e3 * jnum(b, "memory"), jnum(b, "memory_pct"), 1e3 * jnum(b, "other"),
               jnum(b, "other_pct"), 1e3 * jnum(b, "idle"), jnum(b, "idle_pct"));
    }
    print_efficiency(json_object_get(doc, "efficiency"));
    json_t *w;
    json_array_foreach(json_object_get(mod, "warnings"), i, w)
        printf("warning (%s): %s\n", json_string_value(json_object_get(w, "code")),
               json_string_value(json_object_get(w, "message")));
    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        printf("warning: %s\n", json_string_value(w));
}

/* --at: TRACE's steps predicted at a.at from the traces at other values
 * (analysis/iteration_predict.h). 0, or the exit status. */
static int modelled(const it_args *a, const xg_trace *t, iteration_opts *o, json_t **doc)
{
    xg_trace others[IT_MAX_TRACES];
    const xg_trace *all[IT_MAX_TRACES + 1] = {t};
    double x[IT_MAX_TRACES + 1] = {a->value};
    int loaded = 0, rc = 2, bad;
    xg_error err;
    for (; loaded < a->nother; loaded++) {
        xg_trace_init(&others[loaded]);
        if (load_trace(a->other[loaded], &others[loaded])) {
            xg_trace_free(&others[loaded]);
            goto done;
        }
        all[loaded + 1] = &others[loaded];
        x[loaded + 1] = a->other_x[loaded];
    }
    o->mixed_devices = a->mixed_devices;
    double measured[IT_MAX_TRACES + 1];
    if ((rc = measured_steps(a, x, a->nother + 1, measured)))
        goto done;
    rc = 2;
    o->measured = a->nmeasured ? measured : NULL;
    *doc = iteration_predict_at(all, x, a->nother + 1, a->at, o,
                                a->by_names ? ITERATION_BY_KERNEL_NAMES : ITERATION_BY_OPERATORS,
                                &bad, &err);
    o->measured = NULL; /* a local array */
    if (!*doc) {
        if (!strcmp(err.field, "at"))
            fprintf(stderr, "perfcast iteration: --at: %s\n", err.msg);
        else
            fprintf(stderr, "perfcast iteration: %s: %s\n",
                    bad > 0 ? a->other[bad - 1] : a->path, err.msg);
        rc = strstr(err.msg, "out of memory") ? 1 : 2;
        goto done;
    }
    rc = 0;
done:
    for (int k = 0; k < loaded; k++)
        xg_trace_free(&others[k]);
    return rc;
}

int cmd_iteration(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(it_usage_text, stdout);
        return 0;
    }
    it_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    xg_trace t;
    xg_trace_init(&t);
    xg_overheads ov = {0};
    xg_device dev;
    json_t *ktj = NULL, *doc = NULL;
    xg_kt_entry *kt = NULL;
    int nkt = 0;
    if ((rc = load_trace(a.path, &t)) || (a.overheads && (rc = load_overheads(a.overheads, &ov))) ||
        (a.kernel_times && (rc = load_kernel_times(a.kernel_times, &ktj, &kt, &nkt))) ||
        (a.device && (rc = load_device(a.device, &dev))))
        goto done;
    iteration_opts o = {.ov = a.overheads ? &ov : NULL, .ov_name = a.overheads,
                        .ov_source = a.overheads ? "file" : NULL,
                        .prof = {.cpu_profiler_us = a.cpu_us, .gpu_profiler_us = a.gpu_us,
                                 .keep_outliers = a.keep_outliers},
                        .kt = kt, .nkt = nkt, .breakdown = 1,
                        .device = a.device ? &dev : NULL};
    struct stat sb;
    if (a.overheads && stat(a.overheads, &sb) != 0)
        o.ov_source = "set";
    xg_error err;
    if (a.has_at) {
        rc = modelled(&a, &t, &o, &doc);
        if (rc)
            goto done;
    } else {
        doc = iteration_analyse(&t, &o, &err);
    }
    if (!doc) {
        fprintf(stderr, "perfcast iteration: %s: %s\n", a.path, err.msg);
        rc = strstr(err.msg, "out of memory") ? 1 : 2;
        goto done;
    }
    if (a.save) {
        xg_overheads own = {0};
        const xg_trace *one = &t;
        if (iteration_measure(&one, 1, &o.prof, &own, &err) < 0) {
            fprintf(stderr, "perfcast iteration: %s: %s\n", a.path, err.msg);
            rc = 2;
            goto done;
        }
        json_t *j = iteration_overheads_json(&own);
        xg_overheads_free(&own);
        int w = json_dump_file(j, a.save, JSON_INDENT(1));
        json_decref(j);
        if (w < 0) {
            fprintf(stderr, "perfcast iteration: cannot write %s\n", a.save);
            rc = 1;
            goto done;
        }
    }
    if (a.json) {
        char *s = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
        if (!s) {
            rc = 1;
            goto done;
        }
        puts(s);
        free(s);
    } else {
        print_table(doc);
    }
    rc = 0;
done:
    json_decref(doc);
    json_decref(ktj);
    free(kt);
    xg_overheads_free(&ov);
    xg_trace_free(&t);
    return rc;
}
