/*
 * bench_refit.c — refits and large uploads against a private PostgreSQL
 * (tests/harness.h), one JSON line per figure:
 *
 *   refit_memory      five uploads of N-1 callpaths (one rank, one step:
 *                     the shape closest to the callpath cap) stored with
 *                     ?refit=defer, then one refit: the server's RSS before,
 *                     its peak during the job (VmHWM, reset before) and RSS a
 *                     second after the job, against the level before
 *   upload_large      one perfcast JSON profile of 64 MiB (3,200 entries,
 *                     the rest spaces: the upload path, not the parsed
 *                     rows): the server's peak RSS growth (VmHWM, which
 *                     counts the spooled body's mapped pages) and its heap
 *                     growth (RssAnon sampled every 5 ms) against the body's
 *                     size, and whether the stored raw bytes have the
 *                     body's length and sha256
 *   upload_to_models  5 points x 8 ranks, one upload per point and rank
 *                     (200 callpaths x 20 steps x 2 metrics each), posted by
 *                     8 concurrent clients: seconds from the last
 *                     acknowledged upload to its job's "done", the refits
 *                     the 40 uploads caused, and the ratio to the baseline
 *                     measured in the same run: one refit of the same final
 *                     data set asked for alone (POST .../refit; the best of
 *                     three)
 *
 *   bench_refit [--callpaths N] [--large-mb N] [--clients N] [--only NAME] [--log LINES]
 * (--log: the server log's last LINES lines to stderr at the end)
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/server_mem.h"
#include "tests/harness.h"

#define POINTS 5
#define RANKS 8
#define CALLPATHS 200
#define STEPS 20

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
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    return exp;
}

static long job_of(const harness_response *r)
{
    json_t *j = harness_json(r);
    long job = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    return job;
}

/* The job's state into state ("" when unreadable). */
static void job_state(harness *h, long job, char *state, size_t cap)
{
    char path[64];
    snprintf(path, sizeof path, "/v1/jobs/%ld", job);
    harness_response r;
    harness_get(h, path, &r);
    json_t *j = harness_json(&r);
    snprintf(state, cap, "%s", json_string_value(json_object_get(j, "state")) ?: "");
    json_decref(j);
    harness_response_free(&r);
}

/* Polls job until done or failed (every 2 ms); seconds waited, state. */
static double wait_job(harness *h, long job, char *state, size_t cap, int pid, double *peak)
{
    double t0 = harness_now();
    while (harness_now() - t0 < 600) {
        if (pid && peak) {
            double rss = status_mb(pid, "VmRSS");
            if (rss > *peak)
                *peak = rss;
        }
        job_state(h, job, state, cap);
        if (!strcmp(state, "done") || !strcmp(state, "failed"))
            break;
        harness_sleep(0.002);
    }
    return harness_now() - t0;
}

/* ---- refit_memory ----------------------------------------------------------- */

static void refit_memory(harness *h, int cap_n)
{
    long exp = new_experiment(h, "many-callpaths");
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    int stored = 0;
    double upload_mb = 0;
    harness_response r;
    for (int x = 2; x <= 10; x += 2) {
        size_t len;
        char *b = bench_wide_profile(x, cap_n - 1, &len);
        upload_mb += (double)len / (1 << 20);
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", b, len, &r);
        stored += r.status == 202;
        harness_response_free(&r);
        free(b);
    }
    int pid = server_pid(h);
    harness_sleep(0.5);
    double before = status_mb(pid, "VmRSS"), peak = before;
    int hwm_ok = reset_peak(pid) == 0;
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    harness_request(h, "POST", path, NULL, NULL, 0, &r);
    long job = job_of(&r);
    harness_response_free(&r);
    char state[32];
    double took = wait_job(h, job, state, sizeof state, pid, &peak);
    double hwm = hwm_ok ? status_mb(pid, "VmHWM") : -1;
    if (hwm > peak)
        peak = hwm;
    harness_sleep(1.0);
    double after = status_mb(pid, "VmRSS");
    long models = harness_sql_long(h,
                                   "SELECT count(*) FROM models m JOIN model_sets s ON s.id = "
                                   "m.model_set_id WHERE s.experiment_id = %ld",
                                   exp);
    printf("{\"figure\": \"refit_memory\", \"callpaths\": %d, \"uploads\": %d, \"upload_mb\": %.1f, "
           "\"job_state\": \"%s\", \"models\": %ld, \"refit_s\": %.2f, \"rss_before_mb\": %.1f, "
           "\"rss_peak_mb\": %.1f, \"peak_growth_mb\": %.1f, \"rss_after_mb\": %.1f, "
           "\"after_vs_before\": %.2f}\n",
           cap_n - 1, stored, upload_mb, state, models, took, before, peak, peak - before, after,
           before > 0 ? after / before : 0);
    fflush(stdout);
}

/* ---- upload_large -------------------------------------------------------------- */

/* A perfcast JSON profile of mb MiB: 200 callpaths x 8 ranks x 2 steps,
 * each entry followed by spaces (JSON allows them) up to the size, so that
 * the figure is the upload path's, not the size of the parsed rows. */
static char *large_profile(int mb, size_t *len)
{
    const int ncp = 200, ranks = 8, steps = 2;
    size_t target = (size_t)mb << 20, entries = (size_t)ncp * ranks * steps;
    size_t pad = target / entries;
    size_t cap = target + entries * 128 + 4096;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":8},\"ranks\":[");
    for (int r = 0; r < ranks; r++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"rank\":%d,\"steps\":[", r ? "," : "", r);
        for (int s = 0; s < steps; s++) {
            n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                                  s ? "," : "");
            for (int c = 0; c < ncp; c++) {
                size_t at = n;
                n += (size_t)snprintf(b + n, cap - n,
                                      "%s{\"name\":\"k%04d\",\"category\":\"comp\",\"metrics\":"
                                      "{\"time\":%.9f}}",
                                      c ? "," : "", c, 1e-4 * (c + 1) * (1 + 1e-3 * ((r + s) % 7)));
                size_t fill = pad > n - at ? pad - (n - at) : 0;
                memset(b + n, ' ', fill);
                n += fill;
            }
            n += (size_t)snprintf(b + n, cap - n, "]}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    return b;
}

/* Samples the server's RssAnon (the heap, not the spooled body's mapped
 * pages) every 5 ms until stop is set: its peak. */
typedef struct anon_sampler {
    int pid;
    _Atomic int stop;
    double peak;
} anon_sampler;

static void *sample_anon(void *arg)
{
    anon_sampler *a = arg;
    while (!a->stop) {
        double mb = status_mb(a->pid, "RssAnon");
        if (mb > a->peak)
            a->peak = mb;
        harness_sleep(0.005);
    }
    return NULL;
}

static void upload_large(harness *h, int mb)
{
    long exp = new_experiment(h, "large-upload");
    size_t len;
    char *body = large_profile(mb, &len);
    if (!body) {
        printf("{\"figure\": \"upload_large\", \"error\": \"out of memory\"}\n");
        return;
    }
    unsigned char sha[32];
    unsigned int shalen = 0;
    EVP_Digest(body, len, sha, &shalen, EVP_sha256(), NULL);
    char hex[65];
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha[i]);
    int pid = server_pid(h);
    harness_sleep(0.5);
    double before = status_mb(pid, "VmRSS"), anon_before = status_mb(pid, "RssAnon");
    int hwm_ok = reset_peak(pid) == 0;
    char path[128];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    harness_response r;
    anon_sampler as = {.pid = pid, .peak = anon_before};
    pthread_t th;
    int sampling = pthread_create(&th, NULL, sample_anon, &as) == 0;
    double t0 = harness_now();
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, len, &r);
    double took = harness_now() - t0;
    as.stop = 1;
    if (sampling)
        pthread_join(th, NULL);
    int status = r.status;
    harness_response_free(&r);
    double peak = hwm_ok ? status_mb(pid, "VmHWM") : -1;
    char out[128] = "";
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT octet_length(raw) || ' ' || encode(sha256(raw), 'hex') FROM profiles "
             "WHERE experiment_id = %ld",
             exp);
    harness_sql(h, sql, out, sizeof out);
    char want[128];
    snprintf(want, sizeof want, "%zu %s", len, hex);
    int intact = !strncmp(out, want, strlen(want));
    printf("{\"figure\": \"upload_large\", \"body_mb\": %.1f, \"status\": %d, \"upload_s\": %.2f, "
           "\"stored_intact\": %s, \"rss_before_mb\": %.1f, \"rss_peak_mb\": %.1f, "
           "\"peak_growth_mb\": %.1f, \"growth_vs_body\": %.2f, \"anon_before_mb\": %.1f, "
           "\"anon_peak_mb\": %.1f, \"anon_growth_mb\": %.1f, \"anon_growth_vs_body\": %.2f}\n",
           (double)len / (1 << 20), status, took, intact ? "true" : "false", before, peak,
           peak - before, (peak - before) / ((double)len / (1 << 20)), anon_before, as.peak,
           as.peak - anon_before, (as.peak - anon_before) / ((double)len / (1 << 20)));
    fflush(stdout);
    free(body);
}

/* ---- upload_to_models -------------------------------------------------------------- */

/* Rank r's profile at ranks = x: 200 callpaths x 20 steps x 2 metrics. */
static char *rank_profile(int x, int rank, size_t *len)
{
    size_t cap = 256 + (size_t)STEPS * CALLPATHS * 140;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%d},\"ranks\":[{\"rank\":%d,"
                                        "\"steps\":[",
                                x, rank);
    for (int s = 0; s < STEPS; s++) {
        n += (size_t)snprintf(b + n, cap - n, "%s{\"phase\":\"train\",\"callpaths\":[",
                              s ? "," : "");
        for (int c = 0; c < CALLPATHS; c++)
            n += (size_t)snprintf(
                b + n, cap - n,
                "%s{\"name\":\"void at::native::kernel_%03d<float>\",\"category\":\"%s\","
                "\"metrics\":{\"time\":%.9f,\"visits\":%d}}",
                c ? "," : "", c, c % 10 == 3 ? "comm" : "comp",
                1e-4 * (c + 1) * (1 + 0.05 * x * (c % 3)) *
                    (1 + 0.001 * (double)((x * 31 + rank * 7 + s) % 97)),
                1 + c % 4);
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}]}");
    *len = n;
    return b;
}

typedef struct posting {
    harness *h;
    char path[96];
    pthread_mutex_t mu;
    int next;           /* upload counter, shared */
    char *body[POINTS * RANKS];
    size_t len[POINTS * RANKS];
    double last_ack;    /* when the last 202 arrived */
    long last_job;      /* its job */
    long jobs[POINTS * RANKS];
    int failed;
} posting;

static void *poster(void *arg)
{
    posting *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int k = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (k >= POINTS * RANKS)
            break;
        harness_response r;
        int rc = harness_request(p->h, "POST", p->path, "Content-Type: application/json\r\n",
                                 p->body[k], p->len[k], &r);
        double t = harness_now();
        long job = rc == 0 && r.status == 202 ? job_of(&r) : 0;
        pthread_mutex_lock(&p->mu);
        if (!job)
            p->failed++;
        p->jobs[k] = job;
        if (job && t > p->last_ack) {
            p->last_ack = t;
            p->last_job = job;
        }
        pthread_mutex_unlock(&p->mu);
        if (rc == 0)
            harness_response_free(&r);
    }
    return NULL;
}

static int upload_to_models(harness *h, int clients)
{
    static const int xs[POINTS] = {2, 4, 8, 16, 32};
    long exp = new_experiment(h, "upload-to-models");
    posting p = {.h = h};
    pthread_mutex_init(&p.mu, NULL);
    snprintf(p.path, sizeof p.path, "/v1/experiments/%ld/profiles", exp);
    double mb = 0;
    for (int i = 0; i < POINTS * RANKS; i++) {
        p.body[i] = rank_profile(xs[i / RANKS], i % RANKS, &p.len[i]);
        mb += (double)p.len[i] / (1 << 20);
    }
    pthread_t th[64];
    int started = 0;
    double t0 = harness_now();
    for (int i = 0; i < clients && i < 64; i++)
        started += pthread_create(&th[i], NULL, poster, &p) == 0;
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    double upload_wall = p.last_ack - t0;
    char state[32] = "";
    wait_job(h, p.last_job, state, sizeof state, 0, NULL);
    double after_last = harness_now() - p.last_ack;
    long refits = harness_sql_long(h, "SELECT count(*) FROM jobs WHERE experiment_id = %ld", exp);
    long sets = harness_sql_long(h, "SELECT count(*) FROM model_sets WHERE experiment_id = %ld", exp);
    /* read-your-writes: the newest set answered covers every upload */
    long measured = harness_sql_long(
        h,
        "SELECT count(*) FROM (SELECT DISTINCT m.point, r FROM model_sets s, measurements m, "
        "unnest(m.rank_ids) r WHERE s.experiment_id = %ld AND m.model_set_id = s.id "
        "AND s.number = (SELECT max(number) FROM model_sets WHERE experiment_id = %ld) "
        "AND m.level = 'application' AND m.name = 'epoch') t",
        exp, exp);

    /* the baseline: one refit of the same data alone, the best of three
     * (the machine is shared: the least disturbed one) */
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    double alone = 0;
    for (int i = 0; i < 3; i++) {
        harness_response r;
        harness_request(h, "POST", path, NULL, NULL, 0, &r);
        long job = job_of(&r);
        harness_response_free(&r);
        char bstate[32] = "";
        double t = wait_job(h, job, bstate, sizeof bstate, 0, NULL);
        if (i == 0 || t < alone)
            alone = t;
    }
    printf("{\"figure\": \"upload_to_models\", \"points\": %d, \"ranks\": %d, \"callpaths\": %d, "
           "\"steps\": %d, \"clients\": %d, \"uploads\": %d, \"failed_uploads\": %d, "
           "\"mb_uploaded\": %.1f, \"upload_s\": %.2f, \"jobs\": %ld, \"model_sets\": %ld, "
           "\"last_job_state\": \"%s\", \"point_ranks_in_newest_set\": %ld, "
           "\"last_ack_to_done_s\": %.3f, \"refit_alone_s\": %.3f, \"ratio_to_refit_alone\": %.2f, "
           "\"target_s\": 1.0}\n",
           POINTS, RANKS, CALLPATHS, STEPS, started, POINTS * RANKS, p.failed, mb, upload_wall,
           refits, sets, state, measured, after_last, alone, alone > 0 ? after_last / alone : 0);
    fflush(stdout);
    for (int i = 0; i < POINTS * RANKS; i++)
        free(p.body[i]);
    pthread_mutex_destroy(&p.mu);
    return p.failed || strcmp(state, "done") ? -1 : 0;
}

int main(int argc, char **argv)
{
    int cap_n = 20000, large_mb = 64, clients = 8, log_lines = 0;
    const char *only = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--callpaths"))
            cap_n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--large-mb"))
            large_mb = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--clients"))
            clients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--log"))
            log_lines = atoi(argv[i + 1]);
    }
    char cap_env[64];
    snprintf(cap_env, sizeof cap_env, "PERFCAST_MAX_CALLPATHS=%d", cap_n);
    const char *env[] = {cap_env, "PERFCAST_MAX_UPLOADS=64", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        printf("{\"figure\": \"refit_memory\", \"error\": \"harness did not start\"}\n");
        return 1;
    }
    int rc = 0;
    if (!only || !strcmp(only, "upload_to_models"))
        rc |= upload_to_models(h, clients);
    if (!only || !strcmp(only, "refit_memory"))
        refit_memory(h, cap_n);
    if (!only || !strcmp(only, "upload_large"))
        upload_large(h, large_mb);
    if (log_lines > 0) /* the server's last lines, to stderr */
        harness_server_log(h, log_lines);
    harness_close(h, rc != 0);
    return rc ? 1 : 0;
}
