/*
 * test_api_iteration.c — the per-iteration analysis over HTTP against a real
 * PostgreSQL (tests/harness.h): Kineto traces uploaded as profiles, overhead
 * sets created from them (and as given), listed, fetched and deleted; the
 * iteration prediction and the breakdown of an upload, equal to what the
 * library computes on the same file; devices and the efficiency figures
 * against them; analyses queued for the job workers and their runs; every
 * refusal a 4xx naming the field, storing nothing; the size caps of an
 * analysis (PERFCAST_MAX_ITERATION_BYTES, PERFCAST_MAX_ITERATION_EVENTS)
 * answered 413 naming the cap, in the request and in a queued run; the
 * connection that read a trace of more than STORE_CONN_KEEP_BYTES given back
 * closed (libpq's buffers grown to the trace would stay with the pool), one
 * that read a smaller one kept; the iteration model's steps measured without
 * the profiler (profiles[i].measured_step) calibrating the profiler's cost
 * as the library does on the same files, and refused (400 naming the entry's
 * field) when not seconds > 0 or given with an overhead set.
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/iteration.h"
#include "analysis/iteration_calibrate.h"
#include "ingest/kineto_xg.h"
#include "pipeline/iteration_job.h"
#include "store/db.h"
#include "bench/gen_kineto.h"
#include "tests/check.h"
#include "tests/warning_code.h"
#include "tests/harness.h"

#define DATA "tests/data/kineto/"

static json_t *call(harness *h, const char *method, const char *path, const char *body, int want,
                    const char *what)
{
    harness_response r;
    harness_request(h, method, path, body ? "Content-Type: application/json\r\n" : NULL, body,
                    body ? strlen(body) : 0, &r);
    check(r.status == want, "%s: %d, want %d: %s", what, r.status, want, r.body ? r.body : "");
    json_t *j = r.body_len ? harness_json(&r) : NULL;
    harness_response_free(&r);
    return j;
}

static long upload(harness *h, long exp, const char *file, const char *query, const char *type)
{
    size_t len;
    char *b = harness_read_file(file, &len);
    check(b != NULL, "read %s", file);
    if (!b)
        return 0;
    char path[256], headers[96];
    /* each upload its own repetition: the same coordinate, repetition and
     * ranks with other bytes would be a conflict (409) */
    static int repetition = 100; /* perfcast profiles name their own, 1 */
    if (strstr(file, "examples/"))
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s", exp, query);
    else
        snprintf(path, sizeof path, "/v1/experiments/%ld/profiles%s%srepetition=%d", exp, query,
                 strchr(query, '?') ? "&" : "?", ++repetition);
    snprintf(headers, sizeof headers, "Content-Type: %s\r\n", type);
    harness_response r;
    harness_request(h, "POST", path, headers, b, len, &r);
    free(b);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "profile"));
    check((r.status == 202 || r.status == 200) && id > 0, "upload %s: %d %s", file, r.status,
          r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return id;
}

/* The library's analysis of the same file, for comparison. */
static json_t *local(const char *file, const xg_ov_options *prof)
{
    int fd = open(file, O_RDONLY);
    ingest_input in = {.fd = fd};
    xg_trace t;
    xg_error err;
    xg_trace_init(&t);
    json_t *doc = NULL;
    if (fd >= 0 && iteration_load(&in, 1, &t, &err) == 0) {
        iteration_opts o = {.prof = *prof, .breakdown = 1};
        doc = iteration_analyse(&t, &o, &err);
    }
    if (fd >= 0)
        close(fd);
    xg_trace_free(&t);
    return doc;
}

static double step_num(const json_t *doc, int i, const char *key)
{
    return json_number_value(json_object_get(json_array_get(json_object_get(doc, "steps"), i), key));
}

typedef struct membuf {
    char *p;
    size_t n, cap;
} membuf;

static int mem_write(void *ctx, const char *p, size_t n)
{
    membuf *b = ctx;
    if (b->n + n + 1 > b->cap) {
        size_t cap = (b->n + n + 1) * 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
    return 0;
}

/* Uploads a generated trace of x ranks (the experiment's data_parallel)
 * whose computation kernels take 2 + 3x us. */
static long upload_generated(harness *h, long exp, double x)
{
    gk_params p = {.rank = 0, .world_size = (int)x, .steps = 2, .first_step = 1, .launches = 30,
                   .comp_us = 2 + 3 * x, .comm_us = 50, .memcpys = 1, .memcpy_us = 4,
                   .memcpy_bytes = 4096, .memset_us = 1, .jitter = 0, .seed = 5};
    membuf b = {0};
    gk_gen g;
    gk_init(&g, &p, mem_write, &b);
    gk_trace(&g);
    char path[128];
    static int repetition; /* see upload() */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?ranks=%g&refit=defer&repetition=%d",
             exp, x, ++repetition);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", b.p, b.n, &r);
    free(b.p);
    json_t *j = harness_json(&r);
    long id = (long)json_integer_value(json_object_get(j, "profile"));
    check(r.status == 202 && id > 0, "generated upload at %g: %d %s", x, r.status, r.body ? r.body : "");
    json_decref(j);
    harness_response_free(&r);
    return id;
}

static json_t *await_run(harness *h, const char *location);

static void test_model(harness *h, long exp, long pd)
{
    long p1 = upload_generated(h, exp, 1), p2 = upload_generated(h, exp, 2),
         p4 = upload_generated(h, exp, 4);
    char path[128], body[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model", exp);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,"
             "\"value\":2},{\"profile\":%ld,\"value\":4}],\"at\":16}", p1, p2, p4);
    json_t *doc = call(h, "POST", path, body, 200, "iteration model");
    json_t *m = json_object_get(doc, "modelled");
    json_t *s0 = json_array_get(json_object_get(doc, "steps"), 0);
    json_t *iv = json_object_get(s0, "interval");
    double pred = json_number_value(json_object_get(s0, "predicted"));
    check(m && !strcmp(json_string_value(json_object_get(m, "method")), "operators") &&
              json_number_value(json_object_get(m, "gpu_time_at")) >
                  json_number_value(json_object_get(m, "gpu_time")) &&
              pred > json_number_value(json_object_get(s0, "measured")) &&
              json_number_value(json_array_get(iv, 0)) <= pred + 1e-12 &&
              pred <= json_number_value(json_array_get(iv, 1)) + 1e-12,
          "modelled at 16: %g s, longer than measured at 1, inside its interval", pred);
    json_decref(doc);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,"
             "\"value\":1}],\"at\":16}", p1, p2);
    json_t *dup = call(h, "POST", path, body, 400, "two traces at one value");
    check(dup && !strcmp(json_string_value(json_object_get(dup, "field")) ?: "", "profiles[1]"),
          "two traces at one value: the later named: %s",
          dup ? json_string_value(json_object_get(dup, "detail")) : "-");
    json_decref(dup);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,"
             "\"value\":2},{\"profile\":%ld,\"value\":4}],\"at\":16}", p1, p2, p1);
    dup = call(h, "POST", path, body, 400, "one trace twice");
    check(dup && !strcmp(json_string_value(json_object_get(dup, "field")) ?: "", "profiles[2]"),
          "one trace twice: the copy named: %s",
          dup ? json_string_value(json_object_get(dup, "detail")) : "-");
    json_decref(dup);
    json_decref(call(h, "POST", path, "{\"profiles\":[],\"at\":16}", 400, "no profiles"));
    /* a batch size <= 0 or not a number: 400 naming at; another job's trace: 400 naming it */
    static const char *const bad_at[] = {"0", "-4", "\"16\"", "null", "true", "[16]"};
    for (int i = 0; i < 6; i++) {
        snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},"
                 "{\"profile\":%ld,\"value\":2}],\"at\":%s}", p1, p2, bad_at[i]);
        json_t *a = call(h, "POST", path, body, 400, "a bad at");
        check(a && !strcmp(json_string_value(json_object_get(a, "field")), "at"),
              "at %s: the field is at", bad_at[i]);
        json_decref(a);
    }
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},"
             "{\"profile\":%ld,\"value\":2},{\"profile\":%ld,\"value\":4}],\"at\":16}",
             p1, p2, pd);
    json_t *a = call(h, "POST", path, body, 400, "another job's trace");
    check(a && !strcmp(json_string_value(json_object_get(a, "field")), "profiles[2]"),
          "another job's trace is named: %s", a ? json_string_value(json_object_get(a, "field")) : "-");
    json_decref(a);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},"
             "{\"profile\":%ld,\"value\":2},{\"profile\":%ld,\"value\":4}],\"at\":16,"
             "\"method\":\"kernel_names\"}", p1, p2, pd);
    a = call(h, "POST", path, body, 400, "another job's trace by kernel names");
    check(a && !strcmp(json_string_value(json_object_get(a, "field")), "profiles[2]"),
          "another job's trace is named by kernel names too: %s",
          a ? json_string_value(json_object_get(a, "field")) : "-");
    json_decref(a);
    /* as a job: the same document */
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,"
             "\"value\":2},{\"profile\":%ld,\"value\":4}],\"at\":16}", p1, p2, p4);
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model?job=always", exp);
    harness_response r;
    char location[256];
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body), &r);
    check(r.status == 202 && harness_header(&r, "Location", location, sizeof location) == 1,
          "iteration model queued (%d)", r.status);
    harness_response_free(&r);
    json_t *v = await_run(h, location);
    json_t *res = json_object_get(v, "result");
    check(v && !strcmp(json_string_value(json_object_get(v, "kind")), "iteration-model") &&
              !strcmp(json_string_value(json_object_get(v, "state")), "done") &&
              fabs(json_number_value(json_object_get(json_array_get(json_object_get(res, "steps"), 0),
                                                     "predicted")) - pred) < 1e-12,
          "the job's model predicts the same %g s", pred);
    json_decref(v);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":999999,"
             "\"value\":2}],\"at\":16}", p1);
    json_decref(call(h, "POST", path, body, 404, "an unknown profile is refused before queueing"));
}

/* Traces of different devices: tests/data/gpu/resnet18_bs32_a100.json.gz is
 * the H200 trace at batch 32 with the deviceProperties of an A100 (name,
 * compute capability 8.0, 80 GB). Modelled with the H200 trace at 16 it is
 * refused, 400 naming it and both devices, unless mixed_devices is given:
 * then the answer says so in a mixed_devices warning. */
static void test_mixed_devices(harness *h, long exp)
{
    long h16 = upload(h, exp, "tests/data/gpu/resnet18_bs16.json.gz", "?ranks=16&refit=defer",
                      "application/gzip");
    long h32 = upload(h, exp, "tests/data/gpu/resnet18_bs32.json.gz", "?ranks=32&refit=defer",
                      "application/gzip");
    long a32 = upload(h, exp, "tests/data/gpu/resnet18_bs32_a100.json.gz",
                      "?ranks=32&refit=defer", "application/gzip");
    char path[128], body[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model", exp);
    /* so far out that the operators' models give no finite time: 400 naming at */
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":16},"
             "{\"profile\":%ld,\"value\":32}],\"at\":1e20}", h16, h32);
    json_t *a = call(h, "POST", path, body, 400, "at 1e20");
    check(a && !strcmp(json_string_value(json_object_get(a, "field")) ?: "", "at"),
          "at 1e20: the field is at: %s", a ? json_string_value(json_object_get(a, "detail")) : "-");
    json_decref(a);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":16},"
             "{\"profile\":%ld,\"value\":32}],\"at\":64}", h16, a32);
    a = call(h, "POST", path, body, 400, "traces of two devices");
    const char *detail = a ? json_string_value(json_object_get(a, "detail")) : NULL;
    check(a && !strcmp(json_string_value(json_object_get(a, "field")), "profiles[1]") && detail &&
              strstr(detail, "NVIDIA A100-SXM4-80GB (compute capability 8.0") &&
              strstr(detail, "NVIDIA H200 (compute capability 9.0"),
          "the refusal names the trace and both devices: %s", detail ? detail : "-");
    json_decref(a);
    int warned[3] = {0};
    const char *what[3] = {"mixed_devices true", "one device", "mixed_devices false"};
    for (int k = 0; k < 3; k++) {
        snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":16},"
                 "{\"profile\":%ld,\"value\":32}],\"at\":64%s}", h16, k == 1 ? h32 : a32,
                 k == 0 ? ",\"mixed_devices\":true" : k == 2 ? ",\"mixed_devices\":false" : "");
        json_t *doc = call(h, "POST", path, body, k == 2 ? 400 : 200, what[k]);
        json_t *w = json_object_get(json_object_get(doc, "modelled"), "warnings"), *x;
        size_t i;
        json_array_foreach(w, i, x)
            if (!strcmp(json_string_value(json_object_get(x, "code")), "mixed_devices"))
                warned[k] = strstr(json_string_value(json_object_get(json_array_get(
                                       json_object_get(x, "others"), 0), "device")),
                                   "A100") != NULL;
        json_decref(doc);
    }
    check(warned[0] && !warned[1], "mixed_devices warned when asked (%d), not on one device (%d)",
          warned[0], warned[1]);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":16},"
             "{\"profile\":%ld,\"value\":32}],\"at\":64,\"mixed_devices\":\"yes\"}", h16, a32);
    a = call(h, "POST", path, body, 400, "mixed_devices not a boolean");
    check(a && !strcmp(json_string_value(json_object_get(a, "field")), "mixed_devices"),
          "the field is mixed_devices");
    json_decref(a);
}

/* The iteration model calibrated by measured steps: DLRM at 512 and 2048
 * (tests/data/gpu) with their steps of truth.json, predicted at 4096. */
static void test_calibration(harness *h, long exp)
{
    const char *files[2] = {"tests/data/gpu/dlrm_bs512.json.gz",
                            "tests/data/gpu/dlrm_bs2048.json.gz"};
    const double steps[2] = {5.7121e-3, 9.0208e-3};
    long id[2];
    xg_trace t[2];
    xg_graph g[2];
    const xg_graph *gp[2] = {&g[0], &g[1]};
    iteration_calibration cal = {0};
    xg_error err;
    for (int k = 0; k < 2; k++) {
        id[k] = upload(h, exp, files[k], k ? "?ranks=20&refit=defer" : "?ranks=5&refit=defer",
                       "application/gzip");
        int fd = open(files[k], O_RDONLY);
        ingest_input in = {.fd = fd};
        xg_trace_init(&t[k]);
        check(fd >= 0 && iteration_load(&in, 0, &t[k], &err) == 0 &&
                  xg_graph_build(&t[k], &g[k], &err) == 0,
              "%s read here", files[k]);
        if (fd >= 0)
            close(fd);
    }
    xg_ov_options base = {2, 4, 0};
    check(iteration_calibrate(gp, 2, steps, &base, &cal, &err) == 0 && cal.traces == 2,
          "calibrated here: %s", err.msg);
    char path[128], body[512];
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model", exp);
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":512,"
             "\"measured_step\":%.7g},{\"profile\":%ld,\"value\":2048,\"measured_step\":%.7g}],"
             "\"at\":4096}", id[0], steps[0], id[1], steps[1]);
    json_t *doc = call(h, "POST", path, body, 200, "calibrated by measured steps");
    const json_t *cj = json_object_get(json_object_get(doc, "modelled"), "calibration");
    check(json_integer_value(json_object_get(cj, "traces")) == 2 &&
              json_number_value(json_object_get(cj, "cpu_profiler_us")) == cal.cpu_us &&
              fabs(json_number_value(json_object_get(cj, "term")) - cal.term) < 1e-12 &&
              fabs(json_number_value(json_array_get(json_object_get(cj, "errors"), 1)) -
                   cal.error[1]) < 1e-12,
          "the service's calibration is the library's: %g us (%g), term %g (%g)",
          json_number_value(json_object_get(cj, "cpu_profiler_us")), cal.cpu_us,
          json_number_value(json_object_get(cj, "term")), cal.term);
    json_decref(doc);
    const char *bad[][2] = {{"-0.01", "profiles[1].measured_step"},
                            {"\"15ms\"", "profiles[1].measured_step"},
                            {"0", "profiles[1].measured_step"}};
    for (int k = 0; k < 3; k++) {
        snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":512},"
                 "{\"profile\":%ld,\"value\":2048,\"measured_step\":%s}],\"at\":4096}",
                 id[0], id[1], bad[k][0]);
        json_t *a = call(h, "POST", path, body, 400, bad[k][0]);
        check(a && !strcmp(json_string_value(json_object_get(a, "field")) ?: "", bad[k][1]),
              "measured_step %s: 400 naming %s", bad[k][0], bad[k][1]);
        json_decref(a);
    }
    snprintf(body, sizeof body, "{\"profiles\":[{\"profile\":%ld,\"value\":512,"
             "\"measured_step\":0.0057},{\"profile\":%ld,\"value\":2048}],\"at\":4096,"
             "\"overheads\":\"no-such-set\"}", id[0], id[1]);
    json_t *a = call(h, "POST", path, body, 400, "measured steps with an overhead set");
    check(a && !strcmp(json_string_value(json_object_get(a, "field")) ?: "",
                       "profiles[0].measured_step"),
          "with \"overheads\": 400 naming profiles[0].measured_step, before the set is looked up");
    json_decref(a);
    iteration_calibration_free(&cal);
    for (int k = 0; k < 2; k++) {
        xg_graph_free(&g[k]);
        xg_trace_free(&t[k]);
    }
}

/* Devices: the built-in catalog listed read-only, a tenant's own added,
 * refused with the field named, used by ?device= on the iteration and the
 * breakdown of a trace with FLOP counts (tests/data/kineto/flops_small.json,
 * whose figures test_execgraph derives by hand: 0.472 of A100's fp32 peak). */
static void test_devices(harness *h, long exp)
{
    long p = upload(h, exp, DATA "flops_small.json", "?ranks=4&refit=defer", "application/json");
    char path[256];
    json_t *l = call(h, "GET", "/v1/devices", NULL, 200, "list devices");
    json_t *first = json_array_get(json_object_get(l, "devices"), 0);
    check(json_array_size(json_object_get(l, "devices")) == 5 &&
              json_is_true(json_object_get(first, "builtin")) &&
              json_is_null(json_object_get(first, "id")),
          "five built-in devices, read-only");
    json_decref(l);
    const char *mi = "{\"name\":\"MI250X\",\"peak_flops\":{\"fp64\":47.9e12,\"fp32\":47.9e12,"
                     "\"tf32\":47.9e12,\"fp16\":383e12},\"dram_bandwidth\":3.2e12}";
    json_t *d = call(h, "POST", "/v1/devices", mi, 201, "add a device");
    long id = (long)json_integer_value(json_object_get(d, "id"));
    check(id > 0 && json_number_value(json_object_get(d, "dram_bandwidth")) == 3.2e12,
          "the device as stored");
    json_decref(d);
    static const struct {
        const char *body, *field;
        int status;
    } bad[] = {
        {"{\"name\":\"x\",\"peak_flops\":{\"fp64\":1,\"fp32\":1,\"tf32\":1,\"fp16\":-1},"
         "\"dram_bandwidth\":1}", "peak_flops.fp16", 400},
        {"{\"name\":\"x\",\"peak_flops\":{\"fp64\":1,\"fp32\":1,\"fp16\":1},"
         "\"dram_bandwidth\":1}", "peak_flops.tf32", 400},
        {"{\"name\":\"x\",\"peak_flops\":{\"fp64\":1,\"fp32\":1,\"tf32\":1,\"fp16\":1},"
         "\"dram_bandwidth\":0}", "dram_bandwidth", 400},
        {"{\"name\":\"x\",\"peak_flops\":{\"fp8\":1}}", "peak_flops", 400},
        {"{\"name\":\"x\",\"speed\":1}", "speed", 400},
        {"{\"name\":\"A100\",\"peak_flops\":{\"fp64\":1,\"fp32\":1,\"tf32\":1,\"fp16\":1},"
         "\"dram_bandwidth\":1}", "name", 409},
        {NULL, "name", 409},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *r = call(h, "POST", "/v1/devices", bad[i].body ? bad[i].body : mi, bad[i].status,
                         "a refused device");
        const char *f = json_string_value(json_object_get(r, "field"));
        check(f && !strcmp(f, bad[i].field), "refusal %zu names %s (%s)", i, bad[i].field,
              f ? f : "none");
        /* the detail names its field once: "peak_flops.fp16: expected ..." */
        const char *d = json_string_value(json_object_get(r, "detail"));
        char twice[80];
        snprintf(twice, sizeof twice, "%s: %s:", bad[i].field, bad[i].field);
        check(d && !strncmp(d, bad[i].field, strlen(bad[i].field)) && !strstr(d, twice),
              "refusal %zu's detail names %s once: %s", i, bad[i].field, d ? d : "none");
        json_decref(r);
    }
    check(harness_sql_long(h, "SELECT count(*) FROM devices") == 1, "refusals stored nothing");
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration?device=A100", exp, p);
    json_t *doc = call(h, "POST", path, NULL, 200, "iteration on A100");
    json_t *e = json_object_get(doc, "efficiency");
    check(e && fabs(json_number_value(json_object_get(e, "flops_fraction")) - 0.472) < 1e-9 &&
              !strcmp(json_string_value(json_object_get(json_object_get(e, "device"), "name")),
                      "A100-SXM4-80GB") &&
              json_array_size(json_object_get(e, "warnings")) == 0,
          "efficiency over HTTP: 0.472 of A100's fp32 peak");
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?device=mi250x", exp, p);
    doc = call(h, "GET", path, NULL, 200, "breakdown on the tenant's device");
    e = json_object_get(doc, "efficiency");
    check(e && fabs(json_number_value(json_object_get(e, "flops_fraction")) -
                    2.301e9 / (250e-6 * 47.9e12)) < 1e-9,
          "efficiency against the tenant's device (%g)",
          json_number_value(json_object_get(e, "flops_fraction")));
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?device=B9000", exp, p);
    json_t *r = call(h, "GET", path, NULL, 404, "an unknown device");
    check(r && !strcmp(json_string_value(json_object_get(r, "field")), "device"),
          "the 404 names device");
    json_decref(r);
    snprintf(path, sizeof path, "/v1/devices/%ld", id);
    json_decref(call(h, "DELETE", path, NULL, 204, "delete a device"));
    json_decref(call(h, "DELETE", path, NULL, 404, "deleted"));
}

/* GET a run until it is done or failed (the workers of the test server
 * pick it up); its last view. */
static json_t *await_run(harness *h, const char *location)
{
    json_t *v = NULL;
    for (int i = 0; i < 600; i++) {
        json_decref(v);
        v = call(h, "GET", location, NULL, 200, "the run");
        const char *st = json_string_value(json_object_get(v, "state"));
        if (!st || !strcmp(st, "done") || !strcmp(st, "failed"))
            break;
        usleep(50000);
    }
    return v;
}

/* The events of interest of a trace as the analysis reads them. */
static long long trace_events(const char *file)
{
    int fd = open(file, O_RDONLY);
    ingest_input in = {.fd = fd};
    xg_trace t;
    xg_error err;
    xg_trace_init(&t);
    long long n = fd >= 0 && iteration_load(&in, 1, &t, &err) == 0 ? (long long)t.n : -1;
    xg_trace_free(&t);
    if (fd >= 0)
        close(fd);
    return n;
}

/* 413 naming the cap (and field, when given); the run of ?job=always too. */
static void expect_cap(harness *h, const char *path, const char *body, const char *cap,
                       const char *field, const char *what)
{
    json_t *j = call(h, "POST", path, body, 413, what);
    check(j && strstr(json_string_value(json_object_get(j, "detail")), cap) &&
              (!field || !strcmp(json_string_value(json_object_get(j, "field")), field)),
          "%s: the problem names %s and %s", what, cap, field ? field : "no field");
    json_decref(j);
}

/* The caps of one analysis: a server whose bytes cap is under the nccl
 * trace's upload (750 KB) and above the ddp traces' (124 KB, 120 KB), and
 * whose events cap holds one ddp trace but not two. */
static void test_caps(void)
{
    long long n0 = trace_events(DATA "ddp128_rank0.json.gz");
    long long n1 = trace_events(DATA "ddp128_rank1.json.gz");
    check(n0 > 1000 && n1 > 1000, "the ddp traces read: %lld and %lld events", n0, n1);
    char events[64];
    snprintf(events, sizeof events, "PERFCAST_MAX_ITERATION_EVENTS=%lld",
             (n0 > n1 ? n0 : n1) + 10);
    const char *env[] = {events, "PERFCAST_MAX_ITERATION_BYTES=200000", NULL};
    harness_opts ho = {.env = env};
    harness *h = harness_open(&ho);
    check(h != NULL, "harness with caps");
    if (!h)
        return;
    json_t *e = call(h, "POST", "/v1/experiments",
                     "{\"name\":\"caps\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                     "\"training\":{\"train_samples\":50000,\"batch_size\":64,"
                     "\"data_parallel\":\"ranks\"}}",
                     201, "experiment");
    long exp = (long)json_integer_value(json_object_get(e, "id"));
    json_decref(e);
    long big = upload(h, exp, DATA "nccl_ws2_rank0.json.gz", "?ranks=2&refit=defer",
                      "application/gzip");
    long d0 = upload(h, exp, DATA "ddp128_rank0.json.gz", "?ranks=128&refit=defer",
                     "application/gzip");
    long d1 = upload(h, exp, DATA "ddp128_rank1.json.gz", "?ranks=128&refit=defer",
                     "application/gzip");
    char path[256], body[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, d0);
    json_decref(call(h, "POST", path, "{}", 200, "one trace within both caps"));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, big);
    expect_cap(h, path, "{}", "PERFCAST_MAX_ITERATION_BYTES", NULL, "a trace over the bytes cap");
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown", exp, big);
    harness_response r;
    harness_request(h, "GET", path, NULL, NULL, 0, &r);
    check(r.status == 413 && r.body && strstr(r.body, "PERFCAST_MAX_ITERATION_BYTES"),
          "the breakdown of it: %d", r.status);
    harness_response_free(&r);
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model", exp);
    snprintf(body, sizeof body,
             "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,\"value\":2}],"
             "\"at\":4}",
             d0, d1);
    expect_cap(h, path, body, "PERFCAST_MAX_ITERATION_EVENTS", "profiles[1]",
               "two traces over the events cap together");
    snprintf(body, sizeof body,
             "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,\"value\":2}],"
             "\"at\":4}",
             d0, big);
    expect_cap(h, path, body, "PERFCAST_MAX_ITERATION_BYTES", "profiles[1]",
               "a model over a trace beyond the bytes cap");
    snprintf(body, sizeof body, "{\"name\":\"capped\",\"profiles\":[%ld,%ld]}", d0, d1);
    expect_cap(h, "/v1/overhead-sets", body, "PERFCAST_MAX_ITERATION_EVENTS", "profiles[1]",
               "a set over the events cap");
    /* queued: the worker keeps the caps of the request */
    snprintf(path, sizeof path, "/v1/experiments/%ld/iteration-model?job=always", exp);
    snprintf(body, sizeof body,
             "{\"profiles\":[{\"profile\":%ld,\"value\":1},{\"profile\":%ld,\"value\":2}],"
             "\"at\":4}",
             d0, d1);
    char location[256] = "";
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", body, strlen(body),
                    &r);
    check(r.status == 202 && harness_header(&r, "Location", location, sizeof location) == 1,
          "queued model: %d", r.status);
    harness_response_free(&r);
    json_t *run = location[0] ? await_run(h, location) : NULL;
    json_t *err = json_object_get(run, "error");
    check(run && !strcmp(json_string_value(json_object_get(run, "state")), "failed") &&
              json_integer_value(json_object_get(err, "status")) == 413 &&
              strstr(json_string_value(json_object_get(err, "detail")),
                     "PERFCAST_MAX_ITERATION_EVENTS"),
          "the queued run failed 413 naming the cap");
    json_decref(run);
    check(harness_sql_long(h, "SELECT count(*) FROM overhead_sets") == 0,
          "nothing stored over a cap");
    harness_close(h, check_failed_count > 0);
}

/* Analyses as jobs: ?job=always queues what a large upload would; 202 with
 * the run at Location; the result equals the inline answer; a problem the
 * analysis meets is kept with the run. */
static void test_jobs(harness *h, long exp, long p_nccl)
{
    char path[256], location[256];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?device=A100", exp,
             p_nccl);
    json_t *inline_doc = call(h, "GET", path, NULL, 200, "breakdown inline");
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?device=A100&job=always",
             exp, p_nccl);
    harness_response r;
    harness_request(h, "GET", path, NULL, NULL, 0, &r);
    json_t *v = harness_json(&r);
    int has_loc = harness_header(&r, "Location", location, sizeof location) == 1;
    check(r.status == 202 && has_loc && json_integer_value(json_object_get(v, "id")) > 0 &&
              !strcmp(json_string_value(json_object_get(v, "kind")), "breakdown"),
          "breakdown queued: 202 with Location (%d)", r.status);
    json_decref(v);
    harness_response_free(&r);
    v = await_run(h, location);
    json_t *res = json_object_get(v, "result");
    check(v && !strcmp(json_string_value(json_object_get(v, "state")), "done") &&
              json_equal(json_object_get(res, "breakdown"), json_object_get(inline_doc, "breakdown")) &&
              json_equal(json_object_get(res, "efficiency"), json_object_get(inline_doc, "efficiency")),
          "the job's breakdown equals the inline one");
    json_decref(v);
    json_decref(inline_doc);
    /* a what-if naming nothing: valid JSON, found wrong by the analysis */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration?job=always", exp, p_nccl);
    harness_request(h, "POST", path, "Content-Type: application/json\r\n",
                    "{\"kernel_times\":{\"no_such_kernel\":1e-6}}", 40, &r);
    has_loc = harness_header(&r, "Location", location, sizeof location) == 1;
    check(r.status == 202 && has_loc, "iteration queued (%d)", r.status);
    harness_response_free(&r);
    v = await_run(h, location);
    json_t *e = json_object_get(v, "error");
    check(v && !strcmp(json_string_value(json_object_get(v, "state")), "failed") &&
              json_integer_value(json_object_get(e, "status")) == 422 &&
              !strcmp(json_string_value(json_object_get(e, "field")), "kernel_times"),
          "the job keeps the 422 naming kernel_times");
    json_decref(v);
    /* refusals before anything is queued */
    json_decref(call(h, "POST", path, "{\"top\":0}", 400, "a bad body is refused at once"));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?job=sometimes", exp,
             p_nccl);
    json_decref(call(h, "GET", path, NULL, 400, "job must be auto or always"));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown?job=always&device=B9",
             exp, p_nccl);
    json_decref(call(h, "GET", path, NULL, 404, "an unknown device is refused at once"));
    check(harness_sql_long(h, "SELECT count(*) FROM iteration_runs") == 3, "three runs queued");
    snprintf(path, sizeof path, "/v1/experiments/%ld/analyses/999999", exp);
    json_decref(call(h, "GET", path, NULL, 404, "an unknown run"));
    /* an overhead set measured by a worker: the run at the tenant's /v1/analyses/{run} */
    char body[160];
    snprintf(body, sizeof body, "{\"name\":\"queued-set\",\"profiles\":[%ld]}", p_nccl);
    harness_request(h, "POST", "/v1/overhead-sets?job=always", "Content-Type: application/json\r\n",
                    body, strlen(body), &r);
    has_loc = harness_header(&r, "Location", location, sizeof location) == 1;
    check(r.status == 202 && has_loc && !strncmp(location, "/v1/analyses/", 13),
          "overhead set queued (%d, %s)", r.status, location);
    harness_response_free(&r);
    v = await_run(h, location);
    res = json_object_get(v, "result");
    check(v && !strcmp(json_string_value(json_object_get(v, "state")), "done") &&
              json_is_null(json_object_get(v, "experiment")) &&
              !strcmp(json_string_value(json_object_get(res, "name")), "queued-set") &&
              json_array_size(json_object_get(json_object_get(res, "set"), "stats")) > 10,
          "the worker measured and stored the set");
    json_decref(v);
    check(harness_sql_long(h, "SELECT count(*) FROM overhead_sets WHERE name = 'queued-set'") == 1,
          "the set is stored");
    json_decref(call(h, "POST", "/v1/overhead-sets?job=always", body, 409,
                     "the same name is refused before queueing"));
    json_decref(call(h, "POST", "/v1/overhead-sets?job=always",
                     "{\"name\":\"z\",\"profiles\":[999999]}", 404, "an unknown profile, at once"));
}

static int has_warning(const json_t *doc, const char *code)
{
    return warning_has_code(json_object_get(json_object_get(doc, "summary"), "warnings"), code);
}

static int text_warning(const json_t *doc, const char *prefix)
{
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "warnings"), i, w)
        if (!strncmp(json_string_value(w) ?: "", prefix, strlen(prefix)))
            return 1;
    return 0;
}

/* Each step's interval over HTTP (analysis/iteration_trust.h): equal to the
 * library's on the same file, inline and as a queued run; the breakdown of
 * the same trace carries none of the prediction's warnings (no_interval,
 * steps_vary); a trace of one step has no interval and says so, and no
 * term it did not compute. */
static void test_interval(harness *h, long exp)
{
    const char *dlrm = "tests/data/gpu/dlrm_bs1024.json.gz";
    long pv = upload(h, exp, dlrm, "?ranks=1&refit=defer", "application/gzip");
    long p1 = upload(h, exp, DATA "alexnet_single.json.gz", "?ranks=1&refit=defer", "application/gzip");
    char path[256], location[256];
    xg_ov_options paper = {2, 4, 0};
    json_t *want = local(dlrm, &paper);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, pv);
    json_t *doc = call(h, "POST", path, "{}", 200, "iteration of a varying trace");
    check(doc && want && json_equal(json_object_get(doc, "interval"), json_object_get(want, "interval")) &&
              json_is_array(json_object_get(json_array_get(json_object_get(doc, "steps"), 0), "interval")) &&
              has_warning(doc, "steps_vary") && !has_warning(doc, "no_interval"),
          "the interval over HTTP is the library's, steps_vary warned");
    for (int i = 0; doc && want && i < 4; i++) {
        const json_t *a = json_object_get(json_array_get(json_object_get(doc, "steps"), i), "interval");
        const json_t *b = json_object_get(json_array_get(json_object_get(want, "steps"), i), "interval");
        check(json_equal(a, b), "step %d: the same interval over HTTP", i);
    }
    /* as a queued run: the same document */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration?job=always", exp, pv);
    harness_response r;
    harness_request(h, "POST", path, "Content-Type: application/json\r\n", "{}", 2, &r);
    check(r.status == 202 && harness_header(&r, "Location", location, sizeof location) == 1,
          "the iteration queued (%d)", r.status);
    harness_response_free(&r);
    json_t *v = await_run(h, location);
    json_t *res = json_object_get(v, "result");
    check(v && res && json_equal(json_object_get(res, "interval"), json_object_get(doc, "interval")) &&
              json_equal(json_object_get(json_array_get(json_object_get(res, "steps"), 3), "interval"),
                         json_object_get(json_array_get(json_object_get(doc, "steps"), 3), "interval")) &&
              has_warning(res, "steps_vary"),
          "the queued run's interval equals the inline one");
    json_decref(v);
    json_decref(doc);
    json_decref(want);
    /* the breakdown has no prediction: none of its warnings */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown", exp, pv);
    doc = call(h, "GET", path, NULL, 200, "breakdown of a varying trace");
    check(doc && !text_warning(doc, "steps_vary") && !text_warning(doc, "no_interval"),
          "the breakdown carries no warning of the prediction (%zu warnings)",
          json_array_size(json_object_get(doc, "warnings")));
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown", exp, p1);
    doc = call(h, "GET", path, NULL, 200, "breakdown of one step");
    check(doc && !text_warning(doc, "no_interval"), "one step's breakdown: no no_interval");
    json_decref(doc);
    /* one step: no interval, no term computed */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, p1);
    doc = call(h, "POST", path, "{}", 200, "iteration of one step");
    const json_t *iv = json_object_get(doc, "interval");
    check(doc && has_warning(doc, "no_interval") &&
              json_is_null(json_object_get(json_array_get(json_object_get(doc, "steps"), 0), "interval")) &&
              json_is_null(json_object_get(iv, "step_spread")) &&
              json_is_null(json_object_get(iv, "model")) &&
              json_is_null(json_object_get(iv, "outliers")) &&
              json_is_null(json_object_get(iv, "profiler_up")),
          "one step: no interval, no term (model %g)",
          json_number_value(json_object_get(iv, "model")));
    json_decref(doc);
}

/* The analysis of profile over a pool of one connection: the backend that
 * serves the next acquire, against the one that read the trace. */
static void pool_after(harness *h, long exp, long profile, int *same, size_t *stored)
{
    store *db = store_open(harness_database_url(h), 1);
    store_error err;
    PGconn *c = db ? store_acquire(db, &err) : NULL;
    *same = -1;
    if (!c) {
        check(0, "a pool of one");
        store_close(db);
        return;
    }
    int before = PQbackendPID(c);
    it_job_in in = {harness_sql_long(h, "SELECT tenant_id FROM experiments WHERE id = %ld", exp),
                    exp, iteration_caps_effective((iteration_caps){0})};
    *stored = (size_t)harness_sql_long(h, "SELECT octet_length(raw) FROM profiles WHERE id = %ld",
                                       profile);
    iteration_opts o = {.prof = {2, 4, 0}};
    it_job_error e;
    json_t *doc = it_job_profile(db, c, &in, profile, &o, &e); /* gives c back */
    check(doc != NULL, "profile %ld analysed", profile);
    json_decref(doc);
    c = store_acquire(db, &err);
    *same = c && PQbackendPID(c) == before;
    store_release(db, c);
    store_close(db);
}

static void test_pool_release(harness *h, long exp, long p_big, long p_small)
{
    int same;
    size_t stored;
    pool_after(h, exp, p_big, &same, &stored);
    check(stored > STORE_CONN_KEEP_BYTES && same == 0,
          "a %zu-byte trace read: its connection closed, the next acquire a new backend", stored);
    pool_after(h, exp, p_small, &same, &stored);
    check(stored > 0 && stored <= STORE_CONN_KEEP_BYTES && same == 1,
          "a %zu-byte trace read: its connection kept", stored);
}

int main(void)
{
    harness *h = harness_open(NULL);
    if (!h) {
        check(0, "harness_open failed");
        return check_summary();
    }
    json_t *e = call(h, "POST", "/v1/experiments",
                     "{\"name\":\"resnet-ddp\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                     "\"training\":{\"train_samples\":50000,\"batch_size\":64,\"data_parallel\":\"ranks\"}}",
                     201, "create experiment");
    long exp = (long)json_integer_value(json_object_get(e, "id"));
    json_decref(e);
    long p_nccl = upload(h, exp, DATA "nccl_ws2_rank0.json.gz", "?ranks=2&refit=defer", "application/gzip");
    long p_ddp = upload(h, exp, DATA "ddp128_rank0.json.gz", "?ranks=128&refit=defer", "application/gzip");
    long p_json = upload(h, exp, "examples/profile-ranks-2.json", "?refit=defer", "application/json");
    char path[256], body[512];
    test_pool_release(h, exp, p_nccl, p_ddp);

    /* the iteration of an upload = the library's on the same file */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, p_nccl);
    json_t *doc = call(h, "POST", path, "{\"profiler_overhead_us\":{\"cpu\":0,\"gpu\":0},"
                                        "\"keep_outliers\":true}", 200, "iteration");
    xg_ov_options exact = {0, 0, 1};
    json_t *want = local(DATA "nccl_ws2_rank0.json.gz", &exact);
    check(doc && want && json_array_size(json_object_get(doc, "steps")) == 3,
          "three steps over HTTP");
    for (int i = 0; i < 3; i++)
        check(step_num(doc, i, "predicted") == step_num(want, i, "predicted") &&
                  step_num(doc, i, "error") < 0.05,
              "step %d: %g over HTTP, %g in the library, error %g", i, step_num(doc, i, "predicted"),
              step_num(want, i, "predicted"), step_num(doc, i, "error"));
    check(!strcmp(json_string_value(json_object_get(json_object_get(doc, "overheads"), "source")),
                  "trace"), "overheads measured on the trace");
    json_decref(want);
    /* what-if: the dominant op's kernels halved never lengthen the step */
    const char *top = json_string_value(json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(doc, "steps"), 0), "top_ops"), 0),
        "name"));
    json_t *qj = json_pack("{s:{s:{s:f}}, s:{s:i, s:i}, s:b}", "kernel_times", top ? top : "",
                           "scale", 0.5, "profiler_overhead_us", "cpu", 0, "gpu", 0,
                           "keep_outliers", 1);
    char *q = json_dumps(qj, JSON_COMPACT);
    json_decref(qj);
    json_t *w = call(h, "POST", path, q, 200, "what-if by op name");
    check(w && step_num(w, 0, "predicted") <= step_num(doc, 0, "predicted") &&
              json_integer_value(json_object_get(json_array_get(json_object_get(w, "kernel_times"), 0),
                                                 "kernels_changed")) > 0,
          "halving the top op's kernels: %g <= %g", step_num(w, 0, "predicted"),
          step_num(doc, 0, "predicted"));
    free(q);
    json_decref(w);
    json_decref(doc);
    json_t *bad = call(h, "POST", path, "{\"kernel_times\":{\"no_such_kernel\":1e-6}}", 422,
                       "what-if naming nothing");
    check(bad && !strcmp(json_string_value(json_object_get(bad, "field")), "kernel_times") &&
              strstr(json_string_value(json_object_get(bad, "detail")), "no_such_kernel"),
          "the 422 names the entry");
    json_decref(bad);
    json_decref(call(h, "POST", path, "{\"kernel_times\":{\"k\":\"fast\"}}", 400, "what-if not seconds"));
    json_decref(call(h, "POST", path, "{\"profiler_overhead_us\":{\"cpu\":-1}}", 400, "negative overhead"));
    json_decref(call(h, "POST", path, "{\"overheads\":\"no-such-platform\"}", 404, "unknown set"));

    /* breakdown */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown", exp, p_ddp);
    doc = call(h, "GET", path, NULL, 200, "breakdown");
    json_t *b = json_object_get(doc, "breakdown");
    double sum = json_number_value(json_object_get(b, "computation")) +
                 json_number_value(json_object_get(b, "communication")) +
                 json_number_value(json_object_get(b, "memory")) +
                 json_number_value(json_object_get(b, "idle"));
    check(b && fabs(sum - json_number_value(json_object_get(b, "window"))) < 1e-9 &&
              json_number_value(json_object_get(b, "communication")) > 0 &&
              json_array_size(json_object_get(doc, "steps")) == 2,
          "ddp128 breakdown: parts add up, NCCL time found, two steps");
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/breakdown", exp, p_json);
    json_decref(call(h, "GET", path, NULL, 422, "a perfcast JSON profile is not a trace"));
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/999999/breakdown", exp);
    json_decref(call(h, "GET", path, NULL, 404, "unknown profile"));

    /* overhead sets */
    snprintf(body, sizeof body, "{\"name\":\"a100-node\",\"profiles\":[%ld,%ld]}", p_nccl, p_ddp);
    json_t *set = call(h, "POST", "/v1/overhead-sets", body, 201, "create a set from two traces");
    long sid = (long)json_integer_value(json_object_get(set, "id"));
    check(sid > 0 && json_integer_value(json_object_get(set, "traces")) == 2 &&
              json_array_size(json_object_get(json_object_get(set, "set"), "stats")) > 10,
          "the set has statistics of two traces");
    json_decref(set);
    json_decref(call(h, "POST", "/v1/overhead-sets", body, 409, "the same name again"));
    snprintf(body, sizeof body, "{\"name\":\"x\",\"profiles\":[%ld]}", p_json);
    json_decref(call(h, "POST", "/v1/overhead-sets", body, 422, "a set from a non-trace"));
    json_decref(call(h, "POST", "/v1/overhead-sets", "{\"name\":\"y\",\"profiles\":[999999]}", 404,
                     "a set from an unknown profile"));
    json_decref(call(h, "POST", "/v1/overhead-sets", "{\"profiles\":[1]}", 400, "no name"));
    check(harness_sql_long(h, "SELECT count(*) FROM overhead_sets") == 1, "refusals stored nothing");
    json_decref(call(h, "POST", "/v1/overhead-sets",
                     "{\"name\":\"given\",\"set\":{\"stats\":[{\"type\":\"T1\",\"name\":null,"
                     "\"mean\":8e-6}]}}", 201, "a set as given"));
    json_t *list = call(h, "GET", "/v1/overhead-sets", NULL, 200, "list");
    check(json_array_size(json_object_get(list, "overhead_sets")) == 2, "two sets listed");
    check(json_is_null(json_object_get(list, "next_cursor")), "one page holds both");
    json_decref(list);
    /* pages of one: the cursor of the first leads to the second, which is the last */
    list = call(h, "GET", "/v1/overhead-sets?limit=1", NULL, 200, "first page");
    json_t *first = json_array_get(json_object_get(list, "overhead_sets"), 0);
    const char *cursor = json_string_value(json_object_get(list, "next_cursor"));
    check(json_array_size(json_object_get(list, "overhead_sets")) == 1 && cursor &&
              json_integer_value(json_object_get(first, "id")) == sid,
          "the first page holds the older set and a cursor");
    char page[128];
    snprintf(page, sizeof page, "/v1/overhead-sets?limit=1&cursor=%s", cursor ? cursor : "x");
    json_decref(list);
    list = call(h, "GET", page, NULL, 200, "second page");
    json_t *second = json_array_get(json_object_get(list, "overhead_sets"), 0);
    check(json_array_size(json_object_get(list, "overhead_sets")) == 1 &&
              json_integer_value(json_object_get(second, "id")) > sid &&
              json_is_null(json_object_get(list, "next_cursor")),
          "the second page holds the newer set and ends the listing");
    json_decref(list);
    json_decref(call(h, "GET", "/v1/overhead-sets?cursor=abc", NULL, 400, "a cursor we never gave"));
    json_decref(call(h, "GET", "/v1/overhead-sets?limit=0", NULL, 400, "limit 0"));
    snprintf(path, sizeof path, "/v1/overhead-sets/%ld", sid);
    set = call(h, "GET", path, NULL, 200, "fetch");
    check(set && !strcmp(json_string_value(json_object_get(set, "name")), "a100-node"), "fetched by id");
    json_decref(set);
    /* the shared set used by name on a trace */
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles/%ld/iteration", exp, p_nccl);
    doc = call(h, "POST", path, "{\"overheads\":\"a100-node\"}", 200, "iteration with a shared set");
    json_t *ov = json_object_get(doc, "overheads");
    check(ov && !strcmp(json_string_value(json_object_get(ov, "source")), "set") &&
              !strcmp(json_string_value(json_object_get(ov, "name")), "a100-node"),
          "the answer names the shared set");
    json_decref(doc);
    snprintf(path, sizeof path, "/v1/overhead-sets/%ld", sid);
    json_decref(call(h, "DELETE", path, NULL, 204, "delete"));
    json_decref(call(h, "GET", path, NULL, 404, "deleted"));
    test_model(h, exp, p_ddp);
    test_devices(h, exp);
    test_mixed_devices(h, exp);
    test_calibration(h, exp);
    test_jobs(h, exp, p_nccl);
    test_interval(h, exp);
    harness_close(h, check_failed_count > 0);
    test_caps();
    return check_summary();
}
