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
 * Speed is the best of --runs runs (wall clock), and the mean CPU time
 * (user + system) per run, the steadier figure on a shared machine.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis/iteration.h"
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

int main(int argc, char **argv)
{
    double mb = 35;
    int runs = 3;
    const char *dir = "build/bench-data";
    char *traces[64];
    int ntraces = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc)
            mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc && ntraces < 64)
            traces[ntraces++] = argv[++i];
        else {
            fprintf(stderr, "usage: bench_iteration [--mb N] [--runs N] [--dir DIR] "
                            "[--trace FILE ...]\n");
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
    globfree(&gl);
    return failed;
}
