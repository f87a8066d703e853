/*
 * test_ingest_kineto.c — the Kineto / Chrome trace reader (ingest/kineto.c)
 * (format selection, ingest/format.c: test_ingest_format.c).
 *
 * Real traces (tests/data/kineto/, copied from the shared fixtures): every
 * step's device and host time, visits and bytes per category, the gaps and
 * every callpath equal what tests/kineto_reference.py computes from the
 * same file with Python's json module, to 1e-9 relative; the same profile
 * from memory or a file, with or without the gunzip thread, in one pass or
 * forced into two. ddp128 ranks 0 and 1 aggregate as two ranks of one
 * point; the NCCL all-reduce is comm; memcpy bytes add up; nccl_ws2 has 3
 * steps; alexnet_single (no ProfilerStep) is one step.
 *
 * Small hand-written traces pin the semantics (launch attribution in both
 * orders, External id, gaps, B/E steps, equal and negative timestamps,
 * steps out of order) and hostile input: truncated and corrupt gzip,
 * invalid UTF-8, a nesting bomb, an over-long token, 10^7 tiny events in
 * bounded memory, steps that never end or overlap, bad numbers, limits.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/format.h"
#include "ingest/trace.h"
#include "modeling/aggregate.h"
#include "tests/check.h"
#include "tests/under_asan.h"

#define DATA "tests/data/kineto/"

static const char *const fixtures[] = {"alexnet_single", "ddp128_rank0", "ddp128_rank1",
                                       "nccl_ws2_rank0"};

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    *len = n;
    return b;
}

static int is_zero(const profile *p)
{
    static const profile zero;
    return memcmp(p, &zero, sizeof zero) == 0;
}

/* Reads text (an exact-size copy) with options o (NULL: defaults). */
static int read_text(const char *text, size_t n, const ingest_trace_options *o, profile *p,
                     ingest_trace_info *info, ingest_error *err)
{
    char *buf = malloc(n ? n : 1);
    memcpy(buf, text, n);
    ingest_input in = {.data = buf, .len = n, .fd = -1};
    int rc = ingest_kineto(&in, o, p, info, err);
    free(buf);
    return rc;
}

static int read_str(const char *text, const ingest_trace_options *o, profile *p,
                    ingest_trace_info *info, ingest_error *err)
{
    return read_text(text, strlen(text), o, p, info, err);
}

static int callpath_id(const profile *p, const char *name)
{
    for (int i = 0; i < p->ncallpaths; i++)
        if (!strcmp(p->callpaths[i].name, name))
            return i;
    return -1;
}

static int metric_id(const profile *p, const char *name)
{
    for (int i = 0; i < p->nmetrics; i++)
        if (!strcmp(p->metrics[i], name))
            return i;
    return -1;
}

/* The value of (phase, step, callpath name, metric), NAN when absent. */
static double value_of(const profile *p, int phase, int step, const char *cp, const char *metric)
{
    int c = callpath_id(p, cp), m = metric_id(p, metric);
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        if (r->phase == phase && r->step == step && r->callpath == c && r->metric == m)
            return r->value;
    }
    return NAN;
}

static int same_profile(const profile *a, const profile *b)
{
    if (a->ncallpaths != b->ncallpaths || a->nmetrics != b->nmetrics || a->nrows != b->nrows ||
        a->nranks != b->nranks)
        return 0;
    for (int i = 0; i < a->ncallpaths; i++)
        if (strcmp(a->callpaths[i].name, b->callpaths[i].name) ||
            a->callpaths[i].category != b->callpaths[i].category)
            return 0;
    for (int i = 0; i < a->nmetrics; i++)
        if (strcmp(a->metrics[i], b->metrics[i]))
            return 0;
    for (size_t i = 0; i < a->nrows; i++) {
        const profile_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->rank != y->rank || x->phase != y->phase || x->step != y->step ||
            x->callpath != y->callpath || x->metric != y->metric || x->value != y->value)
            return 0;
    }
    return 1;
}

/* The same but for values equal to 1e-12 relative (sums in another order). */
static int close_profile(const profile *a, const profile *b)
{
    if (a->nrows != b->nrows || a->ncallpaths != b->ncallpaths)
        return 0;
    for (size_t i = 0; i < a->nrows; i++) {
        const profile_row *x = &a->rows[i], *y = &b->rows[i];
        if (x->rank != y->rank || x->phase != y->phase || x->step != y->step ||
            x->callpath != y->callpath || x->metric != y->metric ||
            !check_close(x->value, y->value, 1e-12, 1e-300))
            return 0;
    }
    for (int i = 0; i < a->ncallpaths; i++)
        if (strcmp(a->callpaths[i].name, b->callpaths[i].name))
            return 0;
    return 1;
}

/* ---- real traces against the Python reference ----------------------------------- */

static json_t *reference(const char *path)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "python3 tests/kineto_reference.py %s", path);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    json_error_t je;
    json_t *doc = json_loadf(f, 0, &je);
    if (pclose(f) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

/* Sums of the profile's rows per (slot, category, metric): slot -1 for all
 * gaps together. */
typedef struct cat_totals {
    double v[4][3]; /* category x (time, visits, bytes) */
} cat_totals;

static void totals(const profile *p, int phase, int step, cat_totals *t)
{
    memset(t, 0, sizeof *t);
    int mt = metric_id(p, "time"), mv = metric_id(p, "visits"), mb = metric_id(p, "bytes");
    for (size_t i = 0; i < p->nrows; i++) {
        const profile_row *r = &p->rows[i];
        if (r->phase != phase || (phase != PROFILE_BETWEEN && r->step != step))
            continue;
        int c = p->callpaths[r->callpath].category;
        int m = r->metric == mt ? 0 : r->metric == mv ? 1 : r->metric == mb ? 2 : -1;
        if (m >= 0)
            t->v[c][m] += r->value;
    }
}

static int compare_totals(const char *what, const cat_totals *got, json_t *want)
{
    static const char *const metrics[] = {"time", "visits", "bytes"};
    int ok = 1;
    for (int c = 0; c < 4; c++)
        for (int m = 0; m < 3; m++) {
            json_t *w = json_object_get(json_object_get(want, profile_category_name(c)),
                                        metrics[m]);
            double wv = json_number_value(w);
            int good = w && (m == 0 ? check_close(got->v[c][m], wv, 1e-9, 1e-300)
                                    : got->v[c][m] == wv);
            check(good, "%s %s %s: got %.17g, reference %.17g", what, profile_category_name(c),
                  metrics[m], got->v[c][m], wv);
            ok &= good;
        }
    return ok;
}

static void test_against_reference(const char *name, profile *p, const ingest_trace_info *info)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.json.gz", name);
    json_t *ref = reference(path);
    check(ref != NULL, "%s: python3 tests/kineto_reference.py failed", name);
    if (!ref)
        return;
    json_t *steps = json_object_get(ref, "steps");
    int nsteps = 0;
    for (size_t i = 0; i < p->nrows; i++)
        if (p->rows[i].phase == PROFILE_TRAIN && p->rows[i].step + 1 > nsteps)
            nsteps = p->rows[i].step + 1;
    check((size_t)nsteps == json_array_size(steps), "%s: %d steps, reference %zu", name, nsteps,
          json_array_size(steps));
    for (int s = 0; s < nsteps && (size_t)s < json_array_size(steps); s++) {
        char what[96];
        snprintf(what, sizeof what, "%s step %d", name, s);
        cat_totals t;
        totals(p, PROFILE_TRAIN, s, &t);
        compare_totals(what, &t, json_object_get(json_array_get(steps, (size_t)s), "totals"));
        const char *label = json_string_value(json_object_get(json_array_get(steps, (size_t)s),
                                                              "label"));
        if (label && label[0])
            check(s < info->nsteps && !strcmp(info->steps[s].label, label),
                  "%s step %d: label %s, reference %s", name, s,
                  s < info->nsteps ? info->steps[s].label : "-", label);
    }
    cat_totals between;
    totals(p, PROFILE_BETWEEN, 0, &between);
    char what[96];
    snprintf(what, sizeof what, "%s between steps", name);
    compare_totals(what, &between, json_object_get(ref, "between"));

    /* every callpath over the whole trace */
    json_t *cps = json_object_get(ref, "callpaths");
    check((size_t)p->ncallpaths == json_object_size(cps), "%s: %d callpaths, reference %zu", name,
          p->ncallpaths, json_object_size(cps));
    int mt = metric_id(p, "time"), mv = metric_id(p, "visits"), mb = metric_id(p, "bytes");
    int bad = 0;
    for (int c = 0; c < p->ncallpaths; c++) {
        double sum[3] = {0, 0, 0};
        for (size_t i = 0; i < p->nrows; i++)
            if (p->rows[i].callpath == c) {
                int m = p->rows[i].metric;
                sum[m == mt ? 0 : m == mv ? 1 : 2] += m == mt || m == mv || m == mb
                                                          ? p->rows[i].value : 0;
            }
        char key[70000];
        snprintf(key, sizeof key, "%s|%s", p->callpaths[c].name,
                 profile_category_name(p->callpaths[c].category));
        json_t *w = json_object_get(cps, key);
        if (!w || !check_close(sum[0], json_number_value(json_object_get(w, "time")), 1e-9, 1e-300) ||
            sum[1] != json_number_value(json_object_get(w, "visits")) ||
            sum[2] != json_number_value(json_object_get(w, "bytes"))) {
            if (bad++ < 3)
                check(0, "%s: callpath %.80s differs from the reference", name, key);
        }
    }
    check(bad == 0, "%s: %d callpaths differ from the reference", name, bad);
    json_t *rank = json_object_get(ref, "rank");
    check(info->rank == json_integer_value(rank), "%s: rank %d, reference %lld", name, info->rank,
          (long long)json_integer_value(rank));
    json_decref(ref);
}

/* One fixture read every way; returns the profile read from memory. */
static int read_fixture(const char *name, profile *out, ingest_trace_info *info)
{
    char path[256];
    snprintf(path, sizeof path, DATA "%s.json.gz", name);
    size_t len;
    char *bytes = read_file(path, &len);
    check(bytes != NULL, "%s: cannot read", path);
    if (!bytes)
        return -1;
    ingest_error err;
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    ingest_input in = {.data = bytes, .len = len, .fd = -1};
    int rc = ingest_kineto(&in, &o, out, info, &err);
    check(rc == 0, "%s: %s", name, err.msg);
    check(rc != 0 || info->gzip == 1, "%s: not seen as gzip", name);
    if (rc == 0) {
        /* the same without the gunzip thread, from a file, and in two passes */
        profile q;
        ingest_trace_info qi;
        o.no_threads = 1;
        check(ingest_kineto(&in, &o, &q, &qi, &err) == 0 && same_profile(out, &q),
              "%s: without the gunzip thread: %s", name, err.msg);
        profile_free(&q);
        ingest_trace_info_free(&qi);
        o.no_threads = 0;
        int fd = open(path, O_RDONLY);
        ingest_input fin = {.data = NULL, .len = 0, .fd = fd};
        check(fd >= 0 && ingest_kineto(&fin, &o, &q, &qi, &err) == 0 && same_profile(out, &q),
              "%s: from a file: %s", name, err.msg);
        if (fd >= 0)
            close(fd);
        profile_free(&q);
        ingest_trace_info_free(&qi);
        o.max_pending = 8;
        rc = ingest_kineto(&in, &o, &q, &qi, &err);
        /* sums in another order: equal to rounding */
        check(rc == 0 && close_profile(out, &q), "%s: two passes: %s", name, err.msg);
        /* rank 0's backward thread comes before the steps: more than 8 wait */
        check(rc != 0 || strcmp(name, "ddp128_rank0") || qi.passes == 2,
              "%s: %d passes with 8 pending", name, qi.passes);
        profile_free(&q);
        ingest_trace_info_free(&qi);
        /* uncompressed, the same bytes give the same profile */
        uLongf cap = 64u << 20;
        char *plain = malloc(cap);
        z_stream z = {0};
        inflateInit2(&z, 16 + MAX_WBITS);
        z.next_in = (unsigned char *)bytes;
        z.avail_in = (uInt)len;
        z.next_out = (unsigned char *)plain;
        z.avail_out = (uInt)cap;
        int zr = inflate(&z, Z_FINISH);
        size_t plen = z.total_out;
        inflateEnd(&z);
        o.max_pending = 0;
        ingest_input pin = {.data = plain, .len = plen, .fd = -1};
        check(zr == Z_STREAM_END && ingest_kineto(&pin, &o, &q, &qi, &err) == 0 &&
                  same_profile(out, &q) && qi.gzip == 0 && qi.bytes == plen,
              "%s: plain JSON: %s", name, err.msg);
        check(ingest_sniff(plain, plen) == INGEST_KIND_KINETO, "%s: plain JSON not sniffed", name);
        profile_free(&q);
        ingest_trace_info_free(&qi);
        free(plain);
    }
    check(ingest_sniff(bytes, len) == INGEST_KIND_KINETO, "%s: gzip not sniffed as kineto", name);
    free(bytes);
    return rc;
}

static void test_fixtures(void)
{
    profile p[4];
    ingest_trace_info info[4];
    int ok[4];
    for (int i = 0; i < 4; i++) {
        ok[i] = read_fixture(fixtures[i], &p[i], &info[i]) == 0;
        if (ok[i])
            test_against_reference(fixtures[i], &p[i], &info[i]);
    }
    /* alexnet_single: no ProfilerStep, one step */
    if (ok[0]) {
        check(info[0].nsteps == 0, "alexnet: %d step markers", info[0].nsteps);
        int only_step0 = 1;
        for (size_t r = 0; r < p[0].nrows; r++)
            only_step0 &= p[0].rows[r].phase == PROFILE_TRAIN && p[0].rows[r].step == 0;
        check(only_step0 && p[0].nrows > 0, "alexnet: rows outside step 0");
        check(info[0].rank == 0 && info[0].world_size == 0, "alexnet: rank %d of %d",
              info[0].rank, info[0].world_size);
    }
    /* ddp128: ranks 0 and 1 of a 128-rank job, 2 steps each */
    for (int i = 1; i <= 2 && ok[i]; i++) {
        check(info[i].rank == i - 1 && info[i].world_size == 128 && info[i].nsteps == 2,
              "ddp128_rank%d: rank %d of %d, %d steps", i - 1, info[i].rank,
              info[i].world_size, info[i].nsteps);
        int comm = callpath_id(&p[i], "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, "
                                      "unsigned long, ncclWork*)");
        check(comm >= 0 && p[i].callpaths[comm].category == PROFILE_COMM,
              "ddp128: the NCCL kernel is not comm");
        for (size_t r = 0; r < p[i].nrows; r++)
            check(p[i].rows[r].rank == i - 1, "ddp128_rank%d: a row of rank %d", i - 1,
                  p[i].rows[r].rank);
    }
    /* both ranks as one point: the aggregation sees two ranks */
    if (ok[1] && ok[2]) {
        const char *k = "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, "
                        "ncclWork*)";
        agg_row rows[8];
        int n = 0;
        double per_rank[2];
        for (int i = 1; i <= 2; i++) {
            double s0 = value_of(&p[i], PROFILE_TRAIN, 0, k, "time");
            double s1 = value_of(&p[i], PROFILE_TRAIN, 1, k, "time");
            per_rank[i - 1] = (s0 + s1) / 2; /* median of two steps */
            rows[n++] = (agg_row){1, i - 1, PROFILE_TRAIN, 0, 0, 0, s0};
            rows[n++] = (agg_row){1, i - 1, PROFILE_TRAIN, 1, 0, 0, s1};
        }
        agg_result res;
        check(agg_coordinate(rows, (size_t)n, 0, &res) == 0 && res.nvalues == 1, "aggregate");
        if (res.nvalues == 1) {
            check(res.values[0].nranks == 2, "two ranks aggregated: %d", res.values[0].nranks);
            check(check_close(res.values[0].value, (per_rank[0] + per_rank[1]) / 2, 1e-12, 0),
                  "median over ranks %.17g", res.values[0].value);
        }
        agg_result_free(&res);
    }
    /* nccl_ws2: 3 steps, the all-reduce is comm, its host annotation host */
    if (ok[3]) {
        check(info[3].nsteps == 3 && info[3].world_size == 2, "nccl_ws2: %d steps, world %d",
              info[3].nsteps, info[3].world_size);
        int ar = callpath_id(&p[3], "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, "
                                    "unsigned long, ncclWork*)");
        check(ar >= 0 && p[3].callpaths[ar].category == PROFILE_COMM, "all-reduce is not comm");
        int ann = callpath_id(&p[3], "nccl:all_reduce");
        check(ann >= 0 && p[3].callpaths[ann].category == PROFILE_HOST,
              "nccl:all_reduce annotation is not host");
        for (int s = 0; s < 3; s++)
            check(value_of(&p[3], PROFILE_TRAIN, s, "ncclKernel_AllReduce_RING_LL_Sum_float("
                                                    "ncclDevComm*, unsigned long, ncclWork*)",
                           "time") > 0,
                  "nccl_ws2 step %d: no all-reduce time", s);
    }
    /* memcpy bytes add up: rows over all steps and gaps = every copy's args.bytes */
    for (int i = 0; i < 4; i++) {
        if (!ok[i])
            continue;
        char path[256];
        snprintf(path, sizeof path,
                 "python3 -c \"import gzip,json;e=json.load(gzip.open('" DATA "%s.json.gz'))"
                 "['traceEvents'];print(sum(x['args']['bytes'] for x in e if x.get('ph')=='X' "
                 "and x.get('cat') in ('gpu_memcpy','gpu_memset')))\"",
                 fixtures[i]);
        FILE *f = popen(path, "r");
        double want = -1;
        if (f) {
            if (fscanf(f, "%lf", &want) != 1)
                want = -1;
            pclose(f);
        }
        double got = 0;
        int mb = metric_id(&p[i], "bytes");
        for (size_t r = 0; r < p[i].nrows; r++)
            if (p[i].rows[r].metric == mb)
                got += p[i].rows[r].value;
        check(want > 0 && got == want, "%s: %.0f bytes copied, the trace says %.0f", fixtures[i],
              got, want);
    }
    for (int i = 0; i < 4; i++)
        if (ok[i]) {
            profile_free(&p[i]);
            ingest_trace_info_free(&info[i]);
        }
}

/* ---- semantics on small traces --------------------------------------------------- */

#define EV(cat, name, ts, dur, args)                                                               \
    "{\"ph\":\"X\",\"cat\":\"" cat "\",\"name\":\"" name "\",\"ts\":" #ts ",\"dur\":" #dur         \
    ",\"args\":{" args "}}"

static void test_launch_attribution(void)
{
    /* steps [0,100) and [100,200); kernels launched in step 0 run in step 1 */
    const char *orders[2] = {
        /* device event before its launch, as Kineto writes it */
        "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 0, 100, "") ","
        EV("user_annotation", "ProfilerStep#2", 100, 100, "") ","
        EV("kernel", "gemm", 150, 30, "\"correlation\":5") ","
        EV("cuda_runtime", "cudaLaunchKernel", 90, 2, "\"correlation\":5") ","
        EV("gpu_memcpy", "Memcpy HtoD", 160, 4, "\"correlation\":6,\"bytes\":4096") ","
        EV("cuda_runtime", "cudaMemcpyAsync", 95, 1, "\"correlation\":6") "]}",
        /* launch first */
        "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 0, 100, "") ","
        EV("user_annotation", "ProfilerStep#2", 100, 100, "") ","
        EV("cuda_runtime", "cudaLaunchKernel", 90, 2, "\"correlation\":5") ","
        EV("cuda_runtime", "cudaMemcpyAsync", 95, 1, "\"correlation\":6") ","
        EV("kernel", "gemm", 150, 30, "\"correlation\":5") ","
        EV("gpu_memcpy", "Memcpy HtoD", 160, 4, "\"correlation\":6,\"bytes\":4096") "]}"};
    for (int i = 0; i < 2; i++) {
        profile p;
        ingest_trace_info info;
        ingest_error err;
        int rc = read_str(orders[i], NULL, &p, &info, &err);
        check(rc == 0, "order %d: %s", i, err.msg);
        if (rc)
            continue;
        check(check_close(value_of(&p, PROFILE_TRAIN, 0, "gemm", "time"), 30e-6, 1e-12, 0),
              "order %d: kernel time in its launch step: %g", i,
              value_of(&p, PROFILE_TRAIN, 0, "gemm", "time"));
        check(isnan(value_of(&p, PROFILE_TRAIN, 1, "gemm", "time")),
              "order %d: kernel counted where it ran", i);
        check(value_of(&p, PROFILE_TRAIN, 0, "Memcpy HtoD", "bytes") == 4096 &&
                  value_of(&p, PROFILE_TRAIN, 0, "Memcpy HtoD", "visits") == 1,
              "order %d: memcpy bytes", i);
        check(p.callpaths[callpath_id(&p, "gemm")].category == PROFILE_COMP &&
                  p.callpaths[callpath_id(&p, "Memcpy HtoD")].category == PROFILE_MEM &&
                  p.callpaths[callpath_id(&p, "cudaLaunchKernel")].category == PROFILE_HOST,
              "order %d: categories", i);
        check(isnan(value_of(&p, PROFILE_TRAIN, 0, "gemm", "bytes")), "kernels have no bytes");
        check(info.unmatched == 0 && info.passes == 1 && info.nsteps == 2,
              "order %d: unmatched %lld, passes %d", i, info.unmatched, info.passes);
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
}

static void test_semantics(void)
{
    profile p;
    ingest_trace_info info;
    ingest_error err;
    /* External id when there is no correlation; no id at all: own start */
    const char *ext =
        "{\"traceEvents\":[" EV("cpu_op", "ProfilerStep#7", 1000, 100, "") ","
        EV("cpu_op", "ProfilerStep#8", 1100, 100, "") ","
        EV("cuda_runtime", "cudaLaunchKernel", 1050, 1, "\"External id\":77") ","
        EV("kernel", "k_ext", 1150, 10, "\"External id\":77") ","
        EV("kernel", "k_none", 1150, 10, "") ","
        EV("kernel", "k_lost", 1150, 10, "\"correlation\":999") ","
        EV("cpu_op", "before", 900, 5, "") "," EV("cpu_op", "after", 1300, 5, "") ","
        EV("cpu_op", "same_ts", 1000, 1, "") "," EV("cpu_op", "same_ts", 1000, 1, "") "]}";
    int rc = read_str(ext, NULL, &p, &info, &err);
    check(rc == 0, "ext: %s", err.msg);
    if (rc == 0) {
        check(!isnan(value_of(&p, PROFILE_TRAIN, 0, "k_ext", "time")), "External id launch");
        check(!isnan(value_of(&p, PROFILE_TRAIN, 1, "k_none", "time")) &&
                  !isnan(value_of(&p, PROFILE_TRAIN, 1, "k_lost", "time")),
              "unmatched device events by their own start");
        check(info.unmatched == 2, "unmatched %lld", info.unmatched);
        check(value_of(&p, PROFILE_BETWEEN, 0, "before", "visits") == 1, "gap 0 before step 0");
        check(value_of(&p, PROFILE_BETWEEN, 2, "after", "visits") == 1, "gap 2 after the last");
        check(value_of(&p, PROFILE_TRAIN, 0, "same_ts", "visits") == 2, "equal timestamps");
        check(info.nsteps == 2 && !strcmp(info.steps[0].label, "ProfilerStep#7") &&
                  check_close(info.steps[1].start, 1100e-6, 1e-12, 0),
              "step labels and times");
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* negative timestamps, B/E steps, bare array, steps out of order */
    const char *neg =
        "[{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"ts\":-50},"
        "{\"ph\":\"E\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#2\",\"ts\":0},"
        EV("user_annotation", "ProfilerStep#1", -100, 50, "") ","
        EV("cpu_op", "op", -75, 1.5, "") "," EV("cpu_op", "op", -25, 2.5, "") ","
        "{\"ph\":\"i\",\"name\":\"instant\",\"ts\":3},{\"ph\":\"M\",\"name\":\"process_name\"}]";
    rc = read_str(neg, NULL, &p, &info, &err);
    check(rc == 0, "negative ts: %s", err.msg);
    if (rc == 0) {
        check(info.nsteps == 2 && info.passes == 2, "steps out of order: %d steps, %d passes",
              info.nsteps, info.passes);
        check(check_close(value_of(&p, PROFILE_TRAIN, 0, "op", "time"), 1.5e-6, 1e-12, 0) &&
                  check_close(value_of(&p, PROFILE_TRAIN, 1, "op", "time"), 2.5e-6, 1e-12, 0),
              "negative timestamps placed");
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* a name on the host and on the device */
    const char *clash = "{\"traceEvents\":[" EV("kernel", "fused", 10, 1, "") ","
                        EV("cpu_op", "fused", 5, 9, "") "]}";
    rc = read_str(clash, NULL, &p, &info, &err);
    check(rc == 0 && callpath_id(&p, "fused") >= 0 && callpath_id(&p, "fused (host)") >= 0 &&
              p.callpaths[callpath_id(&p, "fused (host)")].category == PROFILE_HOST,
          "host/device name clash: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    /* the caller's rank */
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    o.rank = 3;
    const char *ranked = "{\"distributedInfo\":{\"rank\":1,\"world_size\":4},\"traceEvents\":["
                         EV("kernel", "k", 1, 1, "") "]}";
    rc = read_str(ranked, &o, &p, &info, &err);
    check(rc < 0 && strstr(err.msg, "rank 3") && strstr(err.msg, "rank 1"),
          "rank mismatch: %s", err.msg);
    o.rank = 1;
    rc = read_str(ranked, &o, &p, &info, &err);
    check(rc == 0 && info.rank == 1 && info.world_size == 4 && p.rows[0].rank == 1,
          "rank agreed: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    o.rank = 6;
    rc = read_str("{\"traceEvents\":[" EV("kernel", "k", 1, 1, "") "]}", &o, &p, &info, &err);
    check(rc == 0 && p.rows[0].rank == 6, "rank from the caller: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
}

/* ---- hostile input ----------------------------------------------------------------- */

static void expect_error(const char *what, const char *text, size_t len,
                         const ingest_trace_options *o, const char *needle)
{
    profile p;
    ingest_trace_info info;
    ingest_error err;
    int rc = read_text(text, len, o, &p, &info, &err);
    check(rc < 0, "%s: accepted", what);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
        return;
    }
    check(is_zero(&p) && info.steps == NULL, "%s: output not zeroed", what);
    check(strstr(err.msg, needle) != NULL, "%s: message \"%s\" lacks \"%s\"", what, err.msg,
          needle);
    for (const unsigned char *c = (const unsigned char *)err.msg; *c; c++)
        if (*c < 0x20) {
            check(0, "%s: control character in the message", what);
            break;
        }
}

static void expect_error_str(const char *what, const char *text, const char *needle)
{
    expect_error(what, text, strlen(text), NULL, needle);
}

static void test_hostile_json(void)
{
    expect_error_str("empty", "", "empty");
    expect_error_str("blank", "  \n", "no JSON value");
    expect_error_str("not JSON", "hello", "byte");
    expect_error_str("number", "42", "traceEvents");
    expect_error_str("no traceEvents", "{\"schemaVersion\":1}", "no \"traceEvents\"");
    expect_error_str("traceEvents object", "{\"traceEvents\":{}}", "expected an array");
    expect_error_str("traceEvents twice", "{\"traceEvents\":[],\"traceEvents\":[]}", "twice");
    expect_error_str("event not object", "{\"traceEvents\":[1]}", "traceEvents[0]: expected");
    expect_error_str("truncated", "{\"traceEvents\":[{\"ph\":\"X\"", "byte");
    expect_error_str("trailing garbage", "{\"traceEvents\":[]} x", "byte");
    expect_error_str("no events", "{\"traceEvents\":[]}", "no kernels");
    expect_error_str("negative dur", "{\"traceEvents\":[" EV("kernel", "k", 1, -1, "") "]}",
                     "traceEvents[0] (\"k\"): \"dur\" must be");
    expect_error_str("no dur", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\","
                               "\"ts\":1}]}", "no \"dur\"");
    expect_error_str("ts string", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"k\","
                                  "\"ts\":\"1\",\"dur\":1}]}", "\"ts\" must be a number");
    expect_error_str("ts huge", "{\"traceEvents\":[" EV("cpu_op", "k", 1e999, 1, "") "]}",
                     "finite");
    expect_error_str("no name", "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"ts\":1,"
                                "\"dur\":1}]}", "no \"name\"");
    expect_error_str("empty name", "{\"traceEvents\":[" EV("cpu_op", "", 1, 1, "") "]}",
                     "empty name");
    expect_error_str("NUL in name", "{\"traceEvents\":[" EV("cpu_op", "a\\u0000b", 1, 1, "") "]}",
                     "NUL");
    expect_error_str("bytes negative",
                     "{\"traceEvents\":[" EV("gpu_memcpy", "m", 1, 1, "\"bytes\":-5") "]}",
                     "bytes must be");
    expect_error_str("correlation float",
                     "{\"traceEvents\":[" EV("kernel", "m", 1, 1, "\"correlation\":1.5") "]}",
                     "correlation must be an integer");
    expect_error_str("rank >= world", "{\"distributedInfo\":{\"rank\":4,\"world_size\":4},"
                                      "\"traceEvents\":[" EV("kernel", "k", 1, 1, "") "]}",
                     "not below world_size");
    expect_error_str("rank string", "{\"distributedInfo\":{\"rank\":\"0\"},\"traceEvents\":[]}",
                     "distributedInfo.rank");
    expect_error_str("step without dur",
                     "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                     "\"ProfilerStep#3\",\"ts\":5}]}", "never ended");
    expect_error_str("step never ends",
                     "{\"traceEvents\":[{\"ph\":\"B\",\"cat\":\"user_annotation\",\"name\":"
                     "\"ProfilerStep#3\",\"ts\":5}," EV("kernel", "k", 6, 1, "") "]}",
                     "never ends");
    expect_error_str("step ends, never began",
                     "{\"traceEvents\":[{\"ph\":\"E\",\"cat\":\"user_annotation\",\"name\":"
                     "\"ProfilerStep#3\",\"ts\":5}]}", "never began");
    expect_error_str("step of no duration",
                     "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 5, 0, "") "]}",
                     "no duration");
    expect_error_str("overlapping steps",
                     "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                     EV("user_annotation", "ProfilerStep#2", 50, 100, "") "]}", "overlaps");
    expect_error_str("overlapping steps out of order",
                     "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#2", 50, 100, "") ","
                     EV("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                     EV("kernel", "k", 1, 1, "") "]}", "overlaps");
    expect_error_str("duplicate steps",
                     "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 0, 100, "") ","
                     EV("user_annotation", "ProfilerStep#1", 0, 100, "") "]}", "overlaps");
    /* invalid UTF-8 inside a name */
    const char bad_utf8[] = "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\xff\xfe"
                            "\",\"ts\":1,\"dur\":1}]}";
    expect_error("invalid UTF-8", bad_utf8, sizeof bad_utf8 - 1, NULL, "UTF8");
    /* a nesting bomb */
    size_t depth = 1000000;
    char *bomb = malloc(depth + 32);
    memcpy(bomb, "{\"traceEvents\":[],\"x\":", 22);
    memset(bomb + 22, '[', depth);
    expect_error("nesting bomb", bomb, 22 + depth, NULL, "nested deeper than 64");
    const char *pre = "{\"traceEvents\":[{\"args\":{";
    size_t at = strlen(pre);
    memcpy(bomb, pre, at);
    while (at + 5 <= depth)
        memcpy(bomb + at, "\"a\":{", 5), at += 5;
    expect_error("nesting bomb in args", bomb, at, NULL, "nested deeper than 64");
    /* a token that never ends */
    size_t big = (size_t)20 << 20;
    char *tok = malloc(big + 64);
    size_t n = (size_t)sprintf(tok, "{\"traceEvents\":[{\"name\":\"");
    memset(tok + n, 'a', big);
    expect_error("over-long string", tok, n + big, NULL, "no JSON token ends");
    /* an over-long name that does end */
    size_t nl = 70000;
    n = (size_t)sprintf(tok, "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"");
    memset(tok + n, 'b', nl);
    n += nl;
    n += (size_t)sprintf(tok + n, "\",\"ts\":1,\"dur\":1}]}");
    expect_error("long name", tok, n, NULL, "longer than 65536");
    free(tok);
    free(bomb);
}

/* Deflates text into a new buffer; *out_len its length. */
static char *gzip_bytes(const char *text, size_t len, size_t *out_len)
{
    z_stream z = {0};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&z, (uLong)len) + 64;
    char *out = malloc(cap);
    z.next_in = (unsigned char *)text;
    z.avail_in = (uInt)len;
    z.next_out = (unsigned char *)out;
    z.avail_out = (uInt)cap;
    deflate(&z, Z_FINISH);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static void test_hostile_gzip(void)
{
    size_t len;
    char *gz = read_file(DATA "ddp128_rank0.json.gz", &len);
    check(gz != NULL, "fixture");
    if (!gz)
        return;
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    for (int threads = 0; threads < 2; threads++) {
        o.no_threads = !threads;
        expect_error("truncated gzip", gz, len / 2, &o, "gzip data ends early");
        expect_error("gzip header only", gz, 12, &o, "gzip data ends early");
        char *bad = malloc(len);
        memcpy(bad, gz, len);
        for (size_t i = len / 3; i < len / 3 + 64; i++)
            bad[i] ^= 0x5a;
        expect_error("corrupt deflate data", bad, len, &o, "byte");
        memcpy(bad, gz, len);
        bad[len - 6] ^= 0x01; /* the CRC-32 of the data */
        expect_error("corrupt gzip trailer", bad, len, &o, "gzip data is corrupt");
        char *tail = malloc(len + 8);
        memcpy(tail, gz, len);
        memcpy(tail + len, "garbage!", 8);
        expect_error("gzip trailing bytes", tail, len + 8, &o, "after the end of the gzip data");
        o.max_bytes = 100000;
        expect_error("gzip over the limit", gz, len, &o, "more than 100000 bytes");
        o.max_bytes = 0;
        free(bad);
        free(tail);
    }
    /* two gzip members are one stream */
    const char *a = "{\"traceEvents\":[" EV("kernel", "k", 1, 2, "");
    const char *b = "]}";
    size_t la, lb;
    char *ga = gzip_bytes(a, strlen(a), &la), *gb = gzip_bytes(b, strlen(b), &lb);
    char *both = malloc(la + lb);
    memcpy(both, ga, la);
    memcpy(both + la, gb, lb);
    profile p;
    ingest_trace_info info;
    ingest_error err;
    int rc = read_text(both, la + lb, NULL, &p, &info, &err);
    check(rc == 0 && p.nrows == 2, "two gzip members: %s", err.msg);
    if (rc == 0) {
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    free(ga);
    free(gb);
    free(both);
    free(gz);
}

static long max_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

#ifdef TESTS_UNDER_ASAN
#define TINY_EVENTS 1000000L
#else
#define TINY_EVENTS 10000000L
#endif

/* 10^7 tiny events, gzip in memory: one step, bounded memory, one pass */
static void test_many_events(void)
{
    z_stream z = {0};
    deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    size_t cap = 64u << 20, out = 0;
    char *gz = malloc(cap);
    char chunk[1 << 16];
    const char *head = "{\"traceEvents\":[";
    const char *ev = "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"ts\":1,\"dur\":1},";
    size_t evlen = strlen(ev);
    long left = TINY_EVENTS;
    int first = 1;
    while (left > 0 || first >= 0) {
        size_t n = 0;
        if (first == 1) {
            n = (size_t)sprintf(chunk, "%s", head);
            first = 0;
        }
        while (left > 0 && n + evlen + 8 < sizeof chunk) {
            memcpy(chunk + n, ev, evlen);
            n += evlen;
            left--;
        }
        int flush = Z_NO_FLUSH;
        if (left == 0) {
            chunk[n - 1] = ']'; /* the last event's comma */
            chunk[n++] = '}';
            flush = Z_FINISH;
            first = -1;
        }
        z.next_in = (unsigned char *)chunk;
        z.avail_in = (uInt)n;
        do {
            z.next_out = (unsigned char *)gz + out;
            z.avail_out = (uInt)(cap - out);
            deflate(&z, flush);
            out = cap - z.avail_out;
        } while (z.avail_in > 0 && out < cap);
    }
    deflateEnd(&z);
    long before = max_rss_kb();
    profile p;
    ingest_trace_info info;
    ingest_error err;
    ingest_input in = {.data = gz, .len = out, .fd = -1};
    int rc = ingest_kineto(&in, NULL, &p, &info, &err);
    long grew_mb = (max_rss_kb() - before) / 1024;
    check(rc == 0, "%ld tiny events: %s", TINY_EVENTS, err.msg);
    if (rc == 0) {
        check(p.nrows == 2 && value_of(&p, PROFILE_TRAIN, 0, "a", "visits") == (double)TINY_EVENTS,
              "%ld tiny events: one step with every visit", TINY_EVENTS);
        check(info.passes == 1 && info.nsteps == 0, "tiny events: %d passes", info.passes);
        profile_free(&p);
        ingest_trace_info_free(&info);
    }
    check(grew_mb < 100, "%ld tiny events grew the peak RSS by %ld MB", TINY_EVENTS, grew_mb);
    free(gz);
}

/* Events before any step, more than may be held: a second pass. */
static void test_second_pass(void)
{
    long n = 20000;
    size_t cap = (size_t)n * 80 + 256, len = 0;
    char *t = malloc(cap);
    len += (size_t)sprintf(t, "{\"traceEvents\":[");
    for (long i = 0; i < n; i++)
        len += (size_t)sprintf(t + len, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"op%ld\","
                                        "\"ts\":%ld,\"dur\":1},", i % 7, i);
    len += (size_t)sprintf(t + len, EV("user_annotation", "ProfilerStep#1", 0, 10000, "") ","
                                    EV("user_annotation", "ProfilerStep#2", 10000, 10000, "") "]}");
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    profile a, b;
    ingest_trace_info ia, ib;
    ingest_error err;
    int rc = read_text(t, len, &o, &a, &ia, &err);
    check(rc == 0 && ia.passes == 1, "held in one pass: %s", err.msg);
    o.max_pending = 1000;
    int rc2 = read_text(t, len, &o, &b, &ib, &err);
    check(rc2 == 0 && ib.passes == 2, "two passes: %s", err.msg);
    if (rc == 0 && rc2 == 0) {
        check(close_profile(&a, &b), "one and two passes agree");
        check(value_of(&b, PROFILE_TRAIN, 1, "op3", "visits") == 1428, "op3 in step 1: %g",
              value_of(&b, PROFILE_TRAIN, 1, "op3", "visits"));
    }
    if (rc == 0) {
        profile_free(&a);
        ingest_trace_info_free(&ia);
    }
    if (rc2 == 0) {
        profile_free(&b);
        ingest_trace_info_free(&ib);
    }
    /* limits */
    o.max_pending = 0;
    o.max_callpaths = 5;
    expect_error("callpath limit", t, len, &o, "more than 5 distinct event names");
    o.max_callpaths = 0;
    o.max_cells = 3;
    expect_error("cell limit", t, len, &o, "(step, callpath) sums");
    free(t);
    /* device events far from their launch: the oldest give up */
    size_t cap2 = 200 * 160 + 256;
    char *u = malloc(cap2);
    len = (size_t)sprintf(u, "{\"traceEvents\":[" EV("user_annotation", "ProfilerStep#1", 0, 1000, "")
                             "," EV("user_annotation", "ProfilerStep#2", 1000, 1000, ""));
    for (int i = 0; i < 100; i++)
        len += (size_t)sprintf(u + len, ",{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1500,"
                                        "\"dur\":1,\"args\":{\"correlation\":%d}}", i);
    for (int i = 0; i < 100; i++)
        len += (size_t)sprintf(u + len, ",{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"launch\","
                                        "\"ts\":500,\"dur\":1,\"args\":{\"correlation\":%d}}", i);
    len += (size_t)sprintf(u + len, "]}");
    o.max_inflight = 10;
    profile q;
    ingest_trace_info iq;
    rc = read_text(u, len, &o, &q, &iq, &err);
    check(rc == 0 && iq.unmatched == 90, "inflight window: %s, unmatched %lld", err.msg,
          rc == 0 ? iq.unmatched : -1);
    if (rc == 0) {
        check(value_of(&q, PROFILE_TRAIN, 0, "k", "visits") == 10 &&
                  value_of(&q, PROFILE_TRAIN, 1, "k", "visits") == 90,
              "10 matched in step 0, 90 by their own start in step 1");
        profile_free(&q);
        ingest_trace_info_free(&iq);
    }
    free(u);
}

int main(void)
{
    test_fixtures();
    test_launch_attribution();
    test_semantics();
    test_hostile_json();
    test_hostile_gzip();
    test_second_pass();
    test_many_events();
    return check_summary();
}
