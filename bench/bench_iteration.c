/*
 * bench_iteration.c — figures of the per-iteration analysis (execgraph/,
 * api/iteration.c), one JSON object per line:
 *
 *   iteration_replay   per real trace (the .json.gz files of tests/data/kineto/, or the
 *                      files given with --trace): per step |predicted -
 *                      measured| / measured of Algorithm 1 with the trace's
 *                      own kernel times, and the geometric mean, twice:
 *                      "replay" with the overheads measured on the trace as
 *                      they are (no profiler overhead subtracted, outliers
 *                      kept: the profiled run reproduced), and "paper" with
 *                      the paper's treatment (2/4 us subtracted, IQR
 *                      outliers dropped: the overheads of an unprofiled run,
 *                      so the profiled duration is expected to be missed).
 *   iteration_speed    a generated trace of --mb MB (bench/gen_kineto.h,
 *                      default 35) analysed whole (read, graph, overheads,
 *                      critical path, breakdowns, JSON document), MB/s of
 *                      JSON and peak RSS, beside the plain ingest of the same
 *                      file (ingest_kineto) in the same run: the ratio of
 *                      the two rates. Each measurement runs in a child
 *                      process (fork) so that its peak RSS is its own.
 *   iteration_cap      the memory of the analyses at their size caps
 *                      (analysis/iteration_request.h): a gzip'd generated
 *                      trace of just under IT_DEFAULT_MAX_EVENTS events of
 *                      interest held in memory as the service holds a stored
 *                      upload, analysed whole ("iteration"), and two traces of
 *                      half as many each through the iteration model
 *                      ("iteration_model"); per kind the child's RSS before
 *                      ("baseline_mb"), its peak above that ("peak_mb") and
 *                      what it still holds after freeing everything and
 *                      malloc_trim ("retained_mb"), beside the plain ingest of
 *                      the same bytes in the same run ("ingest_peak_mb", the
 *                      ratio). --cap-events N measures at another cap.
 * Speed is the best of --runs runs (wall clock), and the mean CPU time
 * (user + system) per run, the steadier figure on a shared machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/iteration.h"
#include "analysis/iteration_predict.h"
#include "analysis/iteration_request.h"
#include "ingest/kineto_xg.h"
#include "bench/gen_kineto.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load(const char *path, xg_trace *t)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ingest_input in = {.fd = fd};
    xg_error err;
    xg_trace_init(t);
    int rc = iteration_load(&in, 0, t, &err);
    close(fd);
    if (rc < 0)
        fprintf(stderr, "bench_iteration: %s: %s\n", path, err.msg);
    return rc;
}

/* Per-step errors under one overhead treatment; prints them into buf. */
static double replay(const xg_trace *t, xg_ov_options o, char *buf, size_t cap, int *nsteps)
{
    xg_error err;
    xg_overheads ov;
    const xg_trace *one = t;
    if (iteration_measure(&one, 1, &o, &ov, &err) < 0)
        return NAN;
    xg_graph g;
    if (xg_graph_build(t, &g, &err) < 0) {
        xg_overheads_free(&ov);
        return NAN;
    }
    xg_cp_options co = {.ov = &ov, .launch_gap_us = -1};
    xg_cp_result r;
    double gm = NAN;
    if (xg_critpath(&g, &co, &r, &err) == 0) {
        size_t n = 0;
        buf[0] = '\0';
        for (int i = 0; i < r.nsteps && n < cap; i++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%.5f", i ? ", " : "", r.steps[i].error);
        gm = xg_cp_geomean_error(&r);
        *nsteps = r.nsteps;
        xg_cp_result_free(&r);
    }
    xg_graph_free(&g);
    xg_overheads_free(&ov);
    return gm;
}

static int accuracy(char **files, int n)
{
    int failed = 0;
    double logsum = 0;
    int count = 0;
    for (int f = 0; f < n; f++) {
        xg_trace t;
        if (load(files[f], &t) < 0) {
            printf("{\"figure\": \"iteration_replay\", \"trace\": \"%s\", \"error\": \"unreadable\"}\n",
                   files[f]);
            failed = 1;
            continue;
        }
        char rbuf[2048], pbuf[2048];
        int ns = 0;
        double r = replay(&t, (xg_ov_options){0, 0, 1}, rbuf, sizeof rbuf, &ns);
        double p = replay(&t, (xg_ov_options){2, 4, 0}, pbuf, sizeof pbuf, &ns);
        const char *base = strrchr(files[f], '/') ? strrchr(files[f], '/') + 1 : files[f];
        printf("{\"figure\": \"iteration_replay\", \"trace\": \"%s\", \"steps\": %d, "
               "\"replay_errors\": [%s], \"replay_geomean_error\": %.5f, "
               "\"paper_errors\": [%s], \"paper_geomean_error\": %.5f, \"goal\": 0.05}\n",
               base, ns, rbuf, r, pbuf, p);
        if (isfinite(r)) {
            logsum += log(r > 1e-6 ? r : 1e-6);
            count++;
        }
        xg_trace_free(&t);
    }
    if (count)
        printf("{\"figure\": \"iteration_replay_all\", \"traces\": %d, "
               "\"replay_geomean_error\": %.5f, \"goal\": 0.05}\n", count, exp(logsum / count));
    return failed;
}

static int file_write(void *ctx, const char *p, size_t n)
{
    return fwrite(p, 1, n, ctx) == n ? 0 : -1;
}

/* Runs what (0: plain ingest, 1: the whole analysis) in a child: wall seconds
 * (best of runs) and the child's peak RSS in MB. */
static int measure(const char *path, int what, int runs, double *best, double *rss_mb,
                   double *cpu_s)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fds[0]);
        double b = INFINITY;
        for (int r = 0; r < runs; r++) {
            int fd = open(path, O_RDONLY);
            ingest_input in = {.fd = fd};
            double t0 = now_s();
            int ok;
            if (what == 0) {
                profile p;
                ingest_error err;
                ingest_trace_options o;
                ingest_trace_options_default(&o);
                ok = ingest_kineto(&in, &o, &p, NULL, &err) == 0;
                if (ok)
                    profile_free(&p);
            } else {
                xg_trace t;
                xg_error err;
                xg_trace_init(&t);
                ok = iteration_load(&in, 0, &t, &err) == 0;
                iteration_opts io = {.prof = {2, 4, 0}, .breakdown = 1};
                json_t *doc = ok ? iteration_analyse(&t, &io, &err) : NULL;
                char *s = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
                ok = ok && s;
                free(s);
                json_decref(doc);
                xg_trace_free(&t);
            }
            close(fd);
            double dt = now_s() - t0;
            if (!ok)
                _exit(1);
            if (dt < b)
                b = dt;
        }
        if (write(fds[1], &b, sizeof b) != (ssize_t)sizeof b)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        read(fds[0], best, sizeof *best) != (ssize_t)sizeof *best) {
        close(fds[0]);
        return -1;
    }
    close(fds[0]);
    *rss_mb = (double)ru.ru_maxrss / 1024.0;
    *cpu_s = ((double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
              ru.ru_stime.tv_usec * 1e-6) / runs;
    return 0;
}

static int speed(double mb, const char *dir, int runs)
{
    gk_params p = {.rank = 0, .world_size = 8, .steps = 1, .first_step = 10, .launches = 1500,
                   .comp_us = 3.0, .comm_us = 800.0, .memcpys = 16, .memcpy_us = 2.0,
                   .memcpy_bytes = 1228800, .memset_us = 1.0, .jitter = 0.2, .seed = 7,
                   .pretty = 1};
    char path[512];
    snprintf(path, sizeof path, "%s/iteration_trace.json", dir);
    FILE *f = fopen("/dev/null", "wb");
    gk_gen g;
    gk_init(&g, &p, file_write, f);
    gk_trace(&g);
    fclose(f);
    p.steps = (int)(mb * 1e6 / (double)g.bytes + 0.5);
    if (p.steps < 1)
        p.steps = 1;
    if (!(f = fopen(path, "wb"))) {
        fprintf(stderr, "bench_iteration: %s: %s\n", path, strerror(errno));
        return 1;
    }
    gk_init(&g, &p, file_write, f);
    if (gk_trace(&g) < 0 || fclose(f) != 0)
        return 1;
    double json_mb = (double)g.bytes / 1e6;
    double t_ingest, rss_ingest, t_an, rss_an, c_ingest, c_an;
    if (measure(path, 0, runs, &t_ingest, &rss_ingest, &c_ingest) < 0 ||
        measure(path, 1, runs, &t_an, &rss_an, &c_an) < 0) {
        printf("{\"figure\": \"iteration_speed\", \"error\": \"a run failed\"}\n");
        return 1;
    }
    printf("{\"figure\": \"iteration_speed\", \"json_mb\": %.1f, \"events\": %lld, \"steps\": %d, "
           "\"analysis_s\": %.3f, \"analysis_mb_per_s\": %.1f, \"analysis_max_rss_mb\": %.1f, "
           "\"ingest_s\": %.3f, \"ingest_mb_per_s\": %.1f, \"ingest_max_rss_mb\": %.1f, "
           "\"ratio_to_ingest\": %.3f, \"analysis_cpu_s\": %.3f, \"analysis_cpu_mb_per_s\": %.1f, "
           "\"ingest_cpu_s\": %.3f, \"cpu_ratio_to_ingest\": %.3f, \"goal_mb_per_s\": 150, "
           "\"goal_rss_mb\": 128}\n",
           json_mb, g.events, p.steps, t_an, json_mb / t_an, rss_an, t_ingest, json_mb / t_ingest,
           rss_ingest, t_ingest / t_an, c_an, json_mb / c_an, c_ingest, c_ingest / c_an);
    unlink(path);
    return 0;
}

/* ---- memory at the caps ------------------------------------------------------------------ */

/* This process's VmRSS or VmHWM in MB. */
static double self_mb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double mb = -1;
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':')
            mb = atof(line + klen + 1) / 1024.0;
    if (f)
        fclose(f);
    return mb;
}

static int gz_write(void *ctx, const char *p, size_t n)
{
    return gzwrite(ctx, p, (unsigned)n) == (int)n ? 0 : -1;
}

/* A gzip'd generated trace of about `events` events into path, its
 * durations drawn from seed; its events. */
static long long gen_gz(const char *path, long long events, uint64_t seed)
{
    gk_params p = {.rank = 0, .world_size = 8, .steps = 1, .first_step = 10, .launches = 1500,
                   .comp_us = 3.0, .comm_us = 800.0, .memcpys = 16, .memcpy_us = 2.0,
                   .memcpy_bytes = 1228800, .memset_us = 1.0, .jitter = 0.2, .seed = seed,
                   .pretty = 1};
    FILE *f = fopen("/dev/null", "wb");
    gk_gen g;
    gk_init(&g, &p, file_write, f);
    gk_trace(&g);
    fclose(f);
    /* the header's few events aside, whole steps under the cap */
    p.steps = (int)((double)events / (double)g.events * 0.98);
    if (p.steps < 1)
        p.steps = 1;
    gzFile z = gzopen(path, "wb1");
    if (!z)
        return -1;
    gk_init(&g, &p, gz_write, z);
    int rc = gk_trace(&g);
    return gzclose(z) == Z_OK && rc == 0 ? g.events : -1;
}

static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    char *b = NULL;
    if (fd >= 0 && fstat(fd, &sb) == 0 && (b = malloc((size_t)sb.st_size + 1))) {
        size_t n = 0;
        while (n < (size_t)sb.st_size) {
            ssize_t r = read(fd, b + n, (size_t)sb.st_size - n);
            if (r <= 0)
                break;
            n += (size_t)r;
        }
        *len = n;
    }
    if (fd >= 0)
        close(fd);
    return b;
}

/* One trace of the analysis from the bytes as stored, within the caps
 * after *used events. 0 or -1. */
static int load_capped(const char *path, const iteration_caps *c, long long *used, xg_trace *t)
{
    size_t len = 0;
    char *raw = slurp(path, &len);
    xg_error err;
    an_problem p;
    xg_trace_init(t);
    if (!raw || iteration_caps_bytes(c, 1, len, NULL, &p) < 0) {
        fprintf(stderr, "bench_iteration: %s: %s\n", path, raw ? p.msg : "unreadable");
        free(raw);
        return -1;
    }
    t->max_events = iteration_caps_room(c, *used);
    ingest_input in = {.data = raw, .len = len, .fd = -1};
    int rc = iteration_load(&in, 0, t, &err);
    free(raw);
    if (rc < 0) {
        fprintf(stderr, "bench_iteration: %s: %s\n", path, err.msg);
        xg_trace_free(t);
        return -1;
    }
    *used += (long long)t->n;
    return 0;
}

/* kind 0: plain ingest of the bytes; 1: the analysis of one trace; 2: the
 * iteration model over the trace twice. In this process (a child). */
static int cap_work(int kind, const char *path, const char *path2, const iteration_caps *c,
                    long long *events)
{
    if (kind == 0) {
        size_t len = 0;
        char *raw = slurp(path, &len);
        ingest_input in = {.data = raw, .len = len, .fd = -1};
        profile pr;
        ingest_error ierr;
        ingest_trace_options o;
        ingest_trace_options_default(&o);
        int ok = raw && ingest_kineto(&in, &o, &pr, NULL, &ierr) == 0;
        if (ok)
            profile_free(&pr);
        free(raw);
        return ok ? 0 : -1;
    }
    int n = kind == 1 ? 1 : 2;
    xg_trace t[2];
    const xg_trace *ptrs[2] = {&t[0], &t[1]};
    long long used = 0;
    int loaded = 0, ok = 1;
    for (; loaded < n && ok; loaded++)
        ok = load_capped(loaded ? path2 : path, c, &used, &t[loaded]) == 0;
    if (!ok)
        loaded--;
    *events = used;
    iteration_opts io = {.prof = {2, 4, 0}, .breakdown = 1};
    xg_error err;
    json_t *doc = NULL;
    int bad;
    if (ok && kind == 1)
        doc = iteration_analyse(&t[0], &io, &err);
    else if (ok)
        doc = iteration_predict_at(ptrs, (const double[]){1, 2}, 2, 4, &io, ITERATION_BY_OPERATORS,
                                   &bad, &err);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (ok && !text)
        fprintf(stderr, "bench_iteration: the analysis failed: %s\n", err.msg);
    free(text);
    json_decref(doc);
    for (int i = 0; i < loaded; i++)
        xg_trace_free(&t[i]);
    return text ? 0 : -1;
}

/* Runs cap_work in a child: baseline, peak above it and retained after
 * malloc_trim (MB), and the events read. */
static int cap_measure(int kind, const char *path, const char *path2, const iteration_caps *c,
                       double mb[3], long long *events)
{
    int fds[2];
    if (pipe(fds) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(fds[0]);
        double out[4];
        long long ev = 0;
        out[0] = self_mb("VmRSS");
        int rc = cap_work(kind, path, path2, c, &ev);
        out[1] = self_mb("VmHWM") - out[0];
        malloc_trim(0);
        out[2] = self_mb("VmRSS") - out[0];
        out[3] = (double)ev;
        if (rc < 0 || write(fds[1], out, sizeof out) != (ssize_t)sizeof out)
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    int status;
    double in[4];
    int ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
             read(fds[0], in, sizeof in) == (ssize_t)sizeof in;
    close(fds[0]);
    if (!ok)
        return -1;
    memcpy(mb, in, 3 * sizeof *mb);
    *events = (long long)in[3];
    return 0;
}

static int caps_figure(const char *dir, long long cap_events)
{
    iteration_caps c = iteration_caps_effective((iteration_caps){.events = cap_events});
    const char *kinds[] = {"iteration", "iteration_model"};
    int failed = 0;
    for (int k = 1; k <= 2; k++) {
        char path[512], path2[512];
        snprintf(path, sizeof path, "%s/iteration_cap_%d.json.gz", dir, k);
        snprintf(path2, sizeof path2, "%s/iteration_cap_%d_b.json.gz", dir, k);
        /* the iteration model's two traces: two runs of the job (other seeds) */
        long long gen = gen_gz(path, k == 1 ? c.events : c.events / 2, 7);
        if (k == 2 && gen_gz(path2, c.events / 2, 8) < 0)
            gen = -1;
        struct stat sb;
        double base[3], an[3];
        long long ev = 0, ev0;
        if (gen < 0 || stat(path, &sb) != 0 || cap_measure(0, path, NULL, &c, base, &ev0) < 0 ||
            cap_measure(k, path, path2, &c, an, &ev) < 0) {
            printf("{\"figure\": \"iteration_cap\", \"kind\": \"%s\", \"error\": \"a run "
                   "failed\"}\n", kinds[k - 1]);
            failed = 1;
        } else {
            printf("{\"figure\": \"iteration_cap\", \"kind\": \"%s\", \"cap_events\": %lld, "
                   "\"cap_bytes\": %lld, \"traces\": %d, \"events\": %lld, "
                   "\"stored_mb_per_trace\": %.1f, \"baseline_mb\": %.1f, \"peak_mb\": %.1f, "
                   "\"retained_mb\": %.1f, \"ingest_peak_mb\": %.1f, "
                   "\"ratio_to_ingest\": %.2f}\n",
                   kinds[k - 1], c.events, c.bytes, k, ev, (double)sb.st_size / 1e6, an[0], an[1],
                   an[2], base[1], an[1] / (base[1] > 0 ? base[1] : 1));
        }
        unlink(path);
        unlink(path2);
    }
    return failed;
}

int main(int argc, char **argv)
{
    double mb = 35;
    int runs = 3;
    long long cap_events = 0;
    const char *dir = "build/bench-data";
    char *traces[64];
    int ntraces = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--cap-events") && i + 1 < argc)
            cap_events = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc && ntraces < 64)
            traces[ntraces++] = argv[++i];
        else {
            fprintf(stderr, "usage: bench_iteration [--mb N] [--runs N] [--dir DIR] "
                            "[--trace FILE ...] [--cap-events N]\n");
            return 2;
        }
    }
    if (mb <= 0 || runs < 1)
        return 2;
    glob_t gl = {0};
    if (ntraces == 0 && glob("tests/data/kineto/*.json.gz", 0, NULL, &gl) == 0) {
        for (size_t i = 0; i < gl.gl_pathc && ntraces < 64; i++)
            traces[ntraces++] = gl.gl_pathv[i];
    }
    mkdir(dir, 0755);
    int failed = accuracy(traces, ntraces);
    failed |= speed(mb, dir, runs);
    failed |= caps_figure(dir, cap_events);
    globfree(&gl);
    return failed;
}
