/*
 * bench_jobmem.c — the server's memory per job kind at its cap, for the
 * kinds bench_simmem.c does not cover, against a private PostgreSQL
 * (tests/harness.h); one JSON line per figure, each with a baseline of the
 * same kind measured in the same run before it:
 *
 *   trace_job        a generated Kineto trace (bench/gen_kineto.h, gzip) of
 *                    --events events (1,000,000 by default) uploaded to an
 *                    experiment, its refit job and its per-iteration analysis
 *                    (GET .../breakdown?job=always, a queued run) waited
 *                    for: the server's RSS before, its peak over upload,
 *                    refit and analysis (VmHWM, reset before) and its RSS
 *                    --settle seconds after, against the level before
 *                    (and the peak before the analysis: upload and refit);
 *                    trace_job_baseline is the same for a trace of 1/100 of
 *                    the events
 *   refit_wide       five uploads (ranks = 2..10) of --callpaths callpaths
 *                    (200,000 by default; the server started with its
 *                    callpath caps raised to that, PERFCAST_MAX_CALLPATHS and
 *                    PERFCAST_MAX_EXPERIMENT_CALLPATHS) stored with
 *                    ?refit=defer, then one refit: the same three figures
 *                    over the refit; refit_wide_baseline is the same for
 *                    1/10 of the callpaths
 * Each figure says peak_growth_mb, retained_mb and, beside its baseline's,
 * growth_vs_baseline (the ratio of the peak growths) and size_vs_baseline.
 *
 *   bench_jobmem [--events N] [--callpaths N] [--settle S] [--only trace|refit]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bench/gen_kineto.h"
#include "bench/server_mem.h"
#include "tests/harness.h"

typedef struct probe {
    int pid;
    double before, peak, after;
} probe;

static void probe_start(harness *h, probe *m)
{
    m->pid = server_pid(h);
    harness_sleep(0.5);
    m->before = status_mb(m->pid, "VmRSS");
    m->peak = reset_peak(m->pid) ? -1 : 0;
}

/* Samples VmRSS into the peak while VmHWM cannot be reset. */
static void probe_sample(probe *m)
{
    double rss = status_mb(m->pid, "VmRSS");
    if (m->peak < 0 && -rss < m->peak)
        m->peak = -rss;
}

static void probe_end(probe *m, double settle)
{
    m->peak = m->peak == 0 ? status_mb(m->pid, "VmHWM") : -m->peak;
    harness_sleep(settle);
    m->after = status_mb(m->pid, "VmRSS");
}

static void probe_print(const char *figure, const probe *m, const probe *base, double size,
                        double base_size, const char *extra)
{
    char cmp[200] = "";
    if (base)
        snprintf(cmp, sizeof cmp,
                 ", \"baseline_peak_growth_mb\": %.1f, \"growth_vs_baseline\": %.2f, "
                 "\"size_vs_baseline\": %.0f",
                 base->peak - base->before,
                 base->peak - base->before > 0
                     ? (m->peak - m->before) / (base->peak - base->before)
                     : 0,
                 base_size > 0 ? size / base_size : 0);
    printf("{\"figure\": \"%s\", \"rss_before_mb\": %.1f, \"rss_peak_mb\": %.1f, "
           "\"peak_growth_mb\": %.1f, \"rss_after_mb\": %.1f, \"retained_mb\": %.1f%s%s}\n",
           figure, m->before, m->peak, m->peak - m->before, m->after, m->after - m->before,
           extra, cmp);
    fflush(stdout);
}

static long json_id(const harness_response *r, const char *name)
{
    json_t *j = harness_json(r);
    long id = (long)json_integer_value(json_object_get(j, name));
    json_decref(j);
    return id;
}

static long new_experiment(harness *h, const char *name)
{
    char doc[512];
    snprintf(doc, sizeof doc,
             "{\"name\":\"%s\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
             "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
             "\"data_parallel\":\"ranks\"}}",
             name);
    harness_response r;
    harness_post(h, "/v1/experiments", doc, &r);
    long exp = json_id(&r, "id");
    harness_response_free(&r);
    return exp;
}

/* Polls GET path until its "state" is done or failed (at most 900 s),
 * sampling the probe; the state into state. */
static void wait_state(harness *h, const char *path, probe *m, char *state, size_t cap)
{
    snprintf(state, cap, "?");
    for (double t0 = harness_now(); harness_now() - t0 < 900; harness_sleep(0.02)) {
        probe_sample(m);
        harness_response r;
        harness_get(h, path, &r);
        json_t *j = harness_json(&r);
        const char *s = json_string_value(json_object_get(j, "state"));
        snprintf(state, cap, "%s", s ? s : "?");
        json_decref(j);
        harness_response_free(&r);
        if (!strcmp(state, "done") || !strcmp(state, "failed"))
            return;
    }
}

/* ---- trace_job ---------------------------------------------------------------- */

typedef struct gz_sink {
    gzFile gz;
} gz_sink;

static int gz_write(void *ctx, const char *p, size_t n)
{
    gz_sink *s = ctx;
    return gzwrite(s->gz, p, (unsigned)n) == (int)n ? 0 : -1;
}

static int count_write(void *ctx, const char *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
    return 0;
}

/* A gzip Kineto trace of about events events (malloc'd, *len bytes); the
 * events written into *written. */
static char *trace_gz(harness *h, long long events, size_t *len, long long *written)
{
    gk_params p = {.rank = 0, .world_size = 8, .steps = 1, .first_step = 10, .launches = 1500,
                   .comp_us = 3.0, .comm_us = 800.0, .memcpys = 16, .memcpy_us = 2.0,
                   .memcpy_bytes = 1228800, .memset_us = 1.0, .jitter = 0.2, .seed = 7};
    gk_gen g;
    gk_init(&g, &p, count_write, NULL);
    gk_trace(&g);
    p.steps = (int)(events / g.events) > 2 ? (int)(events / g.events) : 2;
    char path[512];
    snprintf(path, sizeof path, "%s/bench-trace.json.gz", harness_dir(h));
    gz_sink s = {gzopen(path, "wb6")};
    if (!s.gz)
        return NULL;
    gk_init(&g, &p, gz_write, &s);
    int rc = gk_trace(&g);
    if (gzclose(s.gz) != Z_OK || rc < 0)
        return NULL;
    *written = g.events;
    char *b = harness_read_file(path, len);
    remove(path);
    return b;
}

/* Upload, refit and analysis of one trace; the probe over all three. */
static void trace_once(harness *h, const char *name, long long events, double settle, probe *m,
                       double *size, char *extra, size_t cap)
{
    size_t len = 0;
    long long written = 0;
    char *gz = trace_gz(h, events, &len, &written);
    if (!gz) {
        snprintf(extra, cap, ", \"error\": \"cannot write the trace\"");
        return;
    }
    long exp = new_experiment(h, name);
    char path[200], state[32], astate[32];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=8&repetition=1", exp);
    probe_start(h, m);
    double t0 = harness_now();
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/gzip\r\n", gz, len, &r);
    int status = r.status;
    long profile = json_id(&r, "profile"), job = json_id(&r, "job");
    if (status != 202)
        fprintf(stderr, "trace upload: %d %.300s\n", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    free(gz);
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    wait_state(h, path, m, state, sizeof state);
    double ingest_peak = m->peak == 0 ? status_mb(m->pid, "VmHWM") : -m->peak;
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?job=always", exp,
             profile);
    harness_get(h, path, &r);
    long run = json_id(&r, "id");
    if (r.status != 202)
        fprintf(stderr, "analysis: %d %.300s\n", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/analyses/%ld", run);
    wait_state(h, path, m, astate, sizeof astate);
    double took = harness_now() - t0;
    probe_end(m, settle);
    *size = (double)written;
    snprintf(extra, cap,
             ", \"events\": %lld, \"gzip_mb\": %.1f, \"upload_status\": %d, \"refit\": \"%s\", "
             "\"analysis\": \"%s\", \"seconds\": %.1f, \"upload_refit_peak_growth_mb\": %.1f",
             written, (double)len / 1e6, status, state, astate, took, ingest_peak - m->before);
}

static void trace_job(harness *h, long long events, double settle)
{
    probe base = {0}, m = {0};
    double base_size = 0, size = 0;
    char extra[400] = "";
    trace_once(h, "trace-baseline", events / 100, settle, &base, &base_size, extra, sizeof extra);
    probe_print("trace_job_baseline", &base, NULL, 0, 0, extra);
    trace_once(h, "trace-cap", events, settle, &m, &size, extra, sizeof extra);
    probe_print("trace_job", &m, &base, size, base_size, extra);
}

/* ---- refit_wide ------------------------------------------------------------------ */

static void refit_once(harness *h, const char *name, int ncp, double settle, probe *m,
                       char *extra, size_t cap)
{
    long exp = new_experiment(h, name);
    char path[128], state[32];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int stored = 0;
    double mb = 0;
    for (int x = 2; x <= 10; x += 2) {
        size_t len;
        char *b = bench_wide_profile(x, ncp, &len);
        mb += (double)len / 1e6;
        harness_response r;
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", b, len, &r);
        stored += r.status == 202;
        if (r.status != 202)
            fprintf(stderr, "upload: %d %.300s\n", r.status, r.body ? r.body : "");
        harness_response_free(&r);
        free(b);
    }
    probe_start(h, m);
    double t0 = harness_now();
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_response r;
    harness_request(h, "POST", path, NULL, NULL, 0, &r);
    long job = json_id(&r, "job");
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    wait_state(h, path, m, state, sizeof state);
    double took = harness_now() - t0;
    probe_end(m, settle);
    long models = harness_sql_long(h,
                                   "SELECT count(*) FROM models m JOIN model_sets s ON s.id = "
                                   "m.model_set_id WHERE s.experiment_id = %ld",
                                   exp);
    snprintf(extra, cap,
             ", \"callpaths\": %d, \"uploads\": %d, \"upload_mb\": %.1f, \"job\": \"%s\", "
             "\"models\": %ld, \"refit_s\": %.1f",
             ncp, stored, mb, state, models, took);
}

static void refit_wide(harness *h, int ncp, double settle)
{
    probe base = {0}, m = {0};
    char extra[400] = "";
    refit_once(h, "wide-baseline", ncp / 10, settle, &base, extra, sizeof extra);
    probe_print("refit_wide_baseline", &base, NULL, 0, 0, extra);
    refit_once(h, "wide-cap", ncp, settle, &m, extra, sizeof extra);
    probe_print("refit_wide", &m, &base, ncp, ncp / 10, extra);
}

int main(int argc, char **argv)
{
    long long events = 1000000;
    int ncp = 200000;
    double settle = 2;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--events"))
            events = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--callpaths"))
            ncp = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--settle"))
            settle = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else {
            fprintf(stderr, "bench_jobmem: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    char cap1[64], cap2[64];
    snprintf(cap1, sizeof cap1, "PERFCAST_MAX_CALLPATHS=%d", ncp);
    snprintf(cap2, sizeof cap2, "PERFCAST_MAX_EXPERIMENT_CALLPATHS=%d", ncp * 2);
    const char *env[] = {cap1, cap2, "PERFCAST_WORKERS=1", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h)
        return 1;
    if (!only || !strcmp(only, "trace"))
        trace_job(h, events, settle);
    if (!only || !strcmp(only, "refit"))
        refit_wide(h, ncp, settle);
    harness_close(h, 0);
    return 0;
}
