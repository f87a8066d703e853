/*
 * bench_simmem.c — the server's memory per simulator and sweep job kind at
 * its documented cap, against a private PostgreSQL (tests/harness.h); one
 * JSON line per figure:
 *
 *   stepgraph_upload  a step graph of --ops operations (1,000,000 by
 *                     default: Inception-v3-sized steps of 990 operations,
 *                     bench/gen_stepgraph.h) to POST /v1/simulations/{id}/
 *                     profiles: the server's RSS before, its peak during the
 *                     request (VmHWM, reset before) and its RSS --settle
 *                     seconds after, against the level before; the budget
 *                     (256 MB above the level before) and the body's size
 *   stepgraph_run     one run on that graph (W = 1..4, 10 steps, one
 *                     replication): the same three figures
 *   stepgraph_repeat  --cycles more uploads of the same bytes (each read
 *                     whole again, answered as a duplicate) and runs (3 by
 *                     default): the server's RSS before the first upload,
 *                     its peak over these cycles and its RSS after the last,
 *                     so that memory kept per thread or per connection,
 *                     which one cycle can hide, shows as retained_mb;
 *                     repeat_s: the seconds of these cycles
 *   sweep_plan        POST .../sweep/plan just under the plan cap (24 x 64 x
 *                     64 = 98,304 runs of a 4 KB command template, the first
 *                     page of runs listed): the same three figures and the
 *                     answer's size; sweep_plan_baseline, measured in the
 *                     same run before it, is the same request for 1 x 64 x
 *                     64 = 4,096 runs (growth_vs_baseline: the ratio of the
 *                     peak growths)
 *   sweep_plan_stored the 98,304-run plan again, every run stored (profile
 *                     rows written by SQL), one page of 10 runs: the same
 *                     three figures; the runs read are its memory (19 MB),
 *                     its answer is 1 KB
 *
 * retained_mb (RSS after against before) is split into retained_anon_mb,
 * what the process keeps as its data (heap arenas, stacks: RssAnon), and
 * retained_file_mb, pages of the program and its libraries read for the
 * first time (RssFile: code that ran once, shared with the page cache and
 * dropped by the kernel under pressure, not memory the service holds).
 * A sweep plan's memory goes back to the system once its answer is sent
 * (server/http.c: an answer over 1 MiB, or a handler that read many runs);
 * without that, its retained_anon_mb is its answer's pages (7.4 MB), or the
 * runs read (19 MB), which the HTTP thread that built it keeps in its malloc
 * arena (server/cmd_serve.c's trim threshold), one such heap per thread.
 *
 *   bench_simmem [--ops N] [--settle S] [--cycles N] [--only NAME] [--log LINES]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/gen_stepgraph.h"
#include "bench/server_mem.h"
#include "tests/harness.h"

typedef struct mem_probe {
    int pid;
    double before, peak, after;
    double anon_before, anon_after, file_before, file_after; /* RssAnon, RssFile */
} mem_probe;

static void probe_start(harness *h, mem_probe *m)
{
    m->pid = server_pid(h);
    harness_sleep(0.3);
    m->before = status_mb(m->pid, "VmRSS");
    m->anon_before = status_mb(m->pid, "RssAnon");
    m->file_before = status_mb(m->pid, "RssFile");
    if (reset_peak(m->pid))
        m->peak = -1;
    else
        m->peak = 0;
}

static void probe_end(mem_probe *m, double settle)
{
    double hwm = status_mb(m->pid, "VmHWM");
    if (m->peak == 0)
        m->peak = hwm;
    harness_sleep(settle);
    m->after = status_mb(m->pid, "VmRSS");
    m->anon_after = status_mb(m->pid, "RssAnon");
    m->file_after = status_mb(m->pid, "RssFile");
}

static void probe_print(const char *figure, const mem_probe *m, const char *extra)
{
    printf("{\"figure\": \"%s\", \"rss_before_mb\": %.1f, \"rss_peak_mb\": %.1f, "
           "\"peak_growth_mb\": %.1f, \"budget_mb\": 256, \"within_budget\": %s, "
           "\"rss_after_mb\": %.1f, \"retained_mb\": %.1f, \"retained_anon_mb\": %.1f, "
           "\"retained_file_mb\": %.1f%s}\n",
           figure, m->before, m->peak, m->peak - m->before,
           m->peak - m->before <= 256 ? "true" : "false", m->after, m->after - m->before,
           m->anon_after - m->anon_before, m->file_after - m->file_before, extra);
    fflush(stdout);
}

/* The generated graph as step-graph JSON text (malloc'd, *len bytes). */
static char *graph_text(const sim_graph *g, size_t *len)
{
    size_t cap = 64 + sim_graph_nops(g) * 160, n = 0;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    n += (size_t)snprintf(b + n, cap - n, "{\"batch_size\":%g,\"servers\":%d,\"steps\":[",
                          g->batch_size, g->servers);
    for (int s = 0; s < g->nsteps; s++) {
        const sim_step *st = &g->steps[s];
        n += (size_t)snprintf(b + n, cap - n, "%s{\"ops\":[", s ? "," : "");
        for (int i = 0; i < st->nops; i++) {
            const sim_op *op = &st->ops[i];
            n += (size_t)snprintf(b + n, cap - n, "%s{\"id\":\"%s\",\"resource\":\"%s\"",
                                  i ? "," : "", op->id, sim_res_name(op->res));
            if (op->duration >= 0)
                n += (size_t)snprintf(b + n, cap - n, ",\"duration\":%.9g", op->duration);
            if (sim_res_is_link(op->res))
                n += (size_t)snprintf(b + n, cap - n, ",\"bytes\":%.0f", op->bytes);
            if (op->ndeps) {
                n += (size_t)snprintf(b + n, cap - n, ",\"deps\":[");
                for (int d = 0; d < op->ndeps; d++)
                    n += (size_t)snprintf(b + n, cap - n, "%s\"%s\"", d ? "," : "",
                                          st->ops[op->deps[d]].id);
                n += (size_t)snprintf(b + n, cap - n, "]");
            }
            n += (size_t)snprintf(b + n, cap - n, "}");
        }
        n += (size_t)snprintf(b + n, cap - n, "]}");
    }
    n += (size_t)snprintf(b + n, cap - n, "]}");
    *len = n;
    return b;
}

static long created_id(harness_response *r)
{
    json_t *j = harness_json(r);
    long id = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    return id;
}

/* One run of W = 1..4, 10 steps, on simulation sim, waited for when
 * queued; its status into *status. Seconds taken. */
static double one_run(harness *h, long sim, int *status)
{
    char path[128];
    harness_response r;
    snprintf(path, sizeof path, "/v1/simulations/%ld/runs", sim);
    double t0 = harness_now();
    harness_post(h, path, "{\"bandwidth\":\"10Gbit\",\"workers\":\"1..4\",\"steps\":10,"
                          "\"warmup_steps\":0,\"replications\":1}", &r);
    *status = r.status;
    long run = created_id(&r);
    if (r.status != 201 && r.status != 202)
        fprintf(stderr, "run: %d %.300s\n", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    if (*status == 202) {
        snprintf(path, sizeof path, "/v1/simulations/%ld/runs/%ld", sim, run);
        for (double w0 = harness_now(); harness_now() - w0 < 600;) {
            harness_get(h, path, &r);
            int done = r.body && (strstr(r.body, "\"done\"") || strstr(r.body, "\"failed\""));
            harness_response_free(&r);
            if (done)
                break;
            harness_sleep(0.05);
        }
    }
    return harness_now() - t0;
}

static void stepgraph(harness *h, long ops, double settle, int only_upload, int cycles)
{
    const int layers = 110;
    int steps = (int)((ops + 9 * layers - 1) / (9 * layers));
    sim_graph g = gen_stepgraph(steps, layers, 7);
    size_t len;
    char *body = graph_text(&g, &len);
    size_t nops = sim_graph_nops(&g);
    sim_graph_free(&g);
    if (!body) {
        printf("{\"figure\": \"stepgraph_upload\", \"error\": \"out of memory\"}\n");
        return;
    }
    harness_response r;
    harness_post(h, "/v1/simulations", "{\"name\":\"mem\"}", &r);
    long sim = created_id(&r);
    harness_response_free(&r);
    char path[128], extra[256];
    snprintf(path, sizeof path, "/v1/simulations/%ld/profiles", sim);
    mem_probe m;
    probe_start(h, &m);
    mem_probe level = m;
    double t0 = harness_now();
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, len, &r);
    double took = harness_now() - t0;
    probe_end(&m, settle);
    snprintf(extra, sizeof extra, ", \"ops\": %zu, \"body_mb\": %.1f, \"status\": %d, "
             "\"upload_s\": %.2f",
             nops, (double)len / 1e6, r.status, took);
    if (r.status != 201)
        fprintf(stderr, "upload: %d %.300s\n", r.status, r.body ? r.body : "");
    harness_response_free(&r);
    probe_print("stepgraph_upload", &m, extra);
    if (only_upload) {
        free(body);
        return;
    }
    int status;
    probe_start(h, &m);
    took = one_run(h, sim, &status);
    probe_end(&m, settle);
    snprintf(extra, sizeof extra, ", \"ops\": %zu, \"status\": %d, \"run_s\": %.2f", nops, status,
             took);
    probe_print("stepgraph_run", &m, extra);
    if (cycles > 0) {
        probe_start(h, &m);
        t0 = harness_now();
        int bad = 0;
        for (int k = 0; k < cycles; k++) {
            harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, len, &r);
            bad += r.status != 200;
            harness_response_free(&r);
            one_run(h, sim, &status);
            bad += status != 201 && status != 202;
        }
        took = harness_now() - t0;
        probe_end(&m, settle);
        m.before = level.before; /* against the level before the first upload */
        m.anon_before = level.anon_before;
        m.file_before = level.file_before;
        snprintf(extra, sizeof extra, ", \"ops\": %zu, \"cycles\": %d, \"failed\": %d, "
                 "\"repeat_s\": %.2f", nops, cycles, bad, took);
        probe_print("stepgraph_repeat", &m, extra);
    }
    free(body);
}

/* A plan of n0 x 64 x 64 points (one repetition) with a 4 KB command
 * template, its first page asked for (the default). */
static char *plan_doc(int n0, size_t *len)
{
    size_t cap = 16384;
    char *b = malloc(cap);
    if (!b)
        return NULL;
    size_t n = (size_t)snprintf(b, cap, "{\"parameters\":{\"a\":[");
    for (int i = 0; i < n0; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s%d", i ? "," : "", i + 1);
    n += (size_t)snprintf(b + n, cap - n, "],\"b\":[");
    for (int i = 0; i < 64; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s%d", i ? "," : "", i + 1);
    n += (size_t)snprintf(b + n, cap - n, "],\"c\":[");
    for (int i = 0; i < 64; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s%d", i ? "," : "", i + 1);
    n += (size_t)snprintf(b + n, cap - n, "]},\"repetitions\":1,\"command\":\"run {a} {b} {c} ");
    while (n < 4096 + 120)
        b[n++] = 'x';
    n += (size_t)snprintf(b + n, cap - n, "\"}");
    *len = n;
    return b;
}

/* The 98,304-run plan again with all its runs stored (profile rows written
 * straight into the database: the plan reads only their coordinates and
 * job states) and a page of 10 runs: the runs read are the request's large
 * memory, its answer is small (sweep_plan_stored). */
static void plan_stored(harness *h, long exp, const char *path, double settle)
{
    char sql[640], out[64], page[160], extra[256];
    snprintf(sql, sizeof sql,
             "INSERT INTO profiles (experiment_id, sha256, point, repetition, format, ranks, "
             "size, raw) SELECT %ld, sha256(convert_to(g::text, 'UTF8')), "
             "ARRAY[g / 4096 + 1, g / 64 %% 64 + 1, g %% 64 + 1]::float8[], 1, 'perfcast', 1, "
             "0, ''::bytea FROM generate_series(0, 98303) g",
             exp);
    if (harness_sql(h, sql, out, sizeof out)) {
        printf("{\"figure\": \"sweep_plan_stored\", \"error\": \"cannot store the runs\"}\n");
        return;
    }
    size_t len = 0;
    char *doc = plan_doc(24, &len);
    snprintf(page, sizeof page, "%s?limit=10", path);
    harness_response r;
    mem_probe m;
    probe_start(h, &m);
    double t0 = harness_now();
    harness_request(h, "POST", page, "Content-Type: application/json\r\n", doc, len, &r);
    double took = harness_now() - t0;
    probe_end(&m, settle);
    if (r.status != 200)
        fprintf(stderr, "plan: %d %.300s\n", r.status, r.body ? r.body : "");
    json_t *j = harness_json(&r);
    snprintf(extra, sizeof extra, ", \"runs\": %lld, \"measured\": %lld, \"status\": %d, "
             "\"answer_mb\": %.3f, \"plan_s\": %.2f",
             (long long)json_integer_value(json_object_get(j, "runs")),
             (long long)json_integer_value(json_object_get(j, "measured")), r.status,
             (double)r.body_len / 1e6, took);
    json_decref(j);
    harness_response_free(&r);
    free(doc);
    probe_print("sweep_plan_stored", &m, extra);
}

static void sweep_plan(harness *h, double settle)
{
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"plan\",\"parameters\":[\"a\",\"b\",\"c\"],\"scaling\":\"strong\","
                 "\"training\":{\"train_samples\":51200,\"validation_samples\":0,\"batch_size\":256,"
                 "\"data_parallel\":\"a\",\"warmup_steps\":0}}",
                 &r);
    if (r.status != 201)
        fprintf(stderr, "experiment: %d %.300s\n", r.status, r.body ? r.body : "");
    long exp = created_id(&r);
    harness_response_free(&r);
    char path[128], extra[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/sweep/plan", exp);
    /* the baseline first: 1,024 runs (1 x 16 x 64 would differ in shape; 1 x 64 x 64 / 4) */
    const int sizes[2] = {24, 1};
    const char *names[2] = {"sweep_plan", "sweep_plan_baseline"};
    double growth[2] = {0, 0};
    for (int k = 1; k >= 0; k--) {
        size_t len = 0;
        char *doc = plan_doc(sizes[k], &len);
        mem_probe m;
        probe_start(h, &m);
        double t0 = harness_now();
        harness_request(h, "POST", path, "Content-Type: application/json\r\n", doc, len, &r);
        double took = harness_now() - t0;
        probe_end(&m, settle);
        if (r.status != 200)
            fprintf(stderr, "plan: %d %.300s\n", r.status, r.body ? r.body : "");
        json_t *j = harness_json(&r);
        growth[k] = m.peak - m.before;
        snprintf(extra, sizeof extra, ", \"runs\": %lld, \"status\": %d, \"answer_mb\": %.2f, "
                 "\"plan_s\": %.2f%s",
                 (long long)json_integer_value(json_object_get(j, "runs")), r.status,
                 (double)r.body_len / 1e6, took, k == 0 ? "" : "");
        json_decref(j);
        harness_response_free(&r);
        free(doc);
        if (k == 0) {
            char more[320];
            snprintf(more, sizeof more, "%s, \"baseline_peak_growth_mb\": %.1f, "
                     "\"growth_vs_baseline\": %.2f", extra, growth[1],
                     growth[1] > 0 ? growth[0] / growth[1] : 0);
            probe_print(names[k], &m, more);
        } else {
            probe_print(names[k], &m, extra);
        }
    }
    plan_stored(h, exp, path, settle);
}

int main(int argc, char **argv)
{
    long ops = 1000000;
    double settle = 2;
    const char *only = NULL;
    int log = 0, cycles = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ops"))
            ops = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--settle"))
            settle = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
        else if (!strcmp(argv[i], "--log"))
            log = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--cycles"))
            cycles = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "bench_simmem: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    harness *h = harness_open(NULL);
    if (!h)
        return 1;
    if (!only || !strncmp(only, "stepgraph", 9))
        stepgraph(h, ops, settle, only && !strcmp(only, "stepgraph_upload"), cycles);
    if (!only || !strcmp(only, "sweep_plan"))
        sweep_plan(h, settle);
    if (log)
        harness_server_log(h, log);
    harness_close(h, 0);
    return 0;
}
