/*
 * xg_breakdown.c — GPU temporal and idle-time breakdown (xg_breakdown.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_breakdown.h"

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* HTA's CommunicateKernelGroupingPattern, MemoryKernelGroupingPattern and
 * the inverse of its ComputeKernelGroupingPattern (hta/common/types.py). */
int xg_device_type(const char *name)
{
    if (starts(name, "nccl") || starts(name, "hip") || starts(name, "hccl") ||
        strstr(name, "ncclKernel"))
        return XG_COMM;
    if (starts(name, "Memcpy") || starts(name, "Memset") || starts(name, "hipMemcpy") ||
        starts(name, "hipMemset") || starts(name, "dma"))
        return XG_MEM;
    static const char *const other_prefix[] = {"Stream Wait Event", "runFunction", "job_exe",
                                               "packet", "pe_exe", "cpum_exe_subgraph",
                                               "collective_subgraph_execution"};
    if (strstr(name, "Memcpy") || strstr(name, "Memset") || strstr(name, "dma") ||
        strstr(name, "Sync") || (starts(name, "cuda") && strstr(name + 4, "LaunchKernel")))
        return XG_OTHER;
    for (size_t i = 0; i < sizeof other_prefix / sizeof *other_prefix; i++)
        if (starts(name, other_prefix[i]))
            return XG_OTHER;
    return XG_COMP;
}

typedef struct bd_iv {
    double a, b;
    long long stream;
    double launch;
    int type;
    int sync;  /* a cuda_sync event: not in the idle causes */
} bd_iv;

static int cmp_start(const void *x, const void *y)
{
    const bd_iv *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

static int cmp_stream_start(const void *x, const void *y)
{
    const bd_iv *a = x, *b = y;
    if (a->stream != b->stream)
        return a->stream < b->stream ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}

/* |union| of the intervals (sorted by start) whose type is at most
 * maxtype, merged as HTA's merge_kernel_intervals: a new group when a start
 * exceeds every end before it; a group spans its first start to its
 * largest end. *last_end: the last group's end. */
static double union_upto(const bd_iv *v, size_t n, int maxtype, double *last_end)
{
    double total = 0, a = 0, b = 0, cummax = -INFINITY;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].type > maxtype)
            continue;
        if (!open || v[i].a > cummax) {
            if (open)
                total += fmax(b - a, 0);
            a = v[i].a;
            b = v[i].b;
            open = 1;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
        if (v[i].b > cummax)
            cummax = v[i].b;
    }
    if (last_end)
        *last_end = b;
    return open ? total + fmax(b - a, 0) : 0;
}

/* HTA's kernel type breakdown (TraceAnalysis.get_gpu_kernel_breakdown with
 * its default include_memory_kernels=True): each type's intervals merged on
 * their own, then the time each set of types runs together. */
typedef struct bd_edge {
    double t;
    int delta;
} bd_edge;

static int cmp_edge(const void *x, const void *y)
{
    const bd_edge *a = x, *b = y;
    return a->t < b->t ? -1 : a->t > b->t;
}

/* Appends the merged intervals of type (v sorted by start) as edges. */
static size_t merged_edges(const bd_iv *v, size_t n, int type, int bit, bd_edge *e, size_t k)
{
    double a = 0, b = 0, cummax = -INFINITY;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].type != type)
            continue;
        if (!open || v[i].a > cummax) {
            if (open && b > a) {
                e[k++] = (bd_edge){a, bit};
                e[k++] = (bd_edge){b, -bit};
            }
            a = v[i].a;
            b = v[i].b;
            open = 1;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
        if (v[i].b > cummax)
            cummax = v[i].b;
    }
    if (open && b > a) {
        e[k++] = (bd_edge){a, bit};
        e[k++] = (bd_edge){b, -bit};
    }
    return k;
}

static int kernel_types(const bd_iv *v, size_t n, xg_breakdown *out)
{
    bd_edge *e = malloc((2 * n + 1) * sizeof *e);
    if (!e)
        return -1;
    size_t k = merged_edges(v, n, XG_COMP, 1, e, 0);
    k = merged_edges(v, n, XG_COMM, 2, e, k);
    k = merged_edges(v, n, XG_MEM, 4, e, k);
    qsort(e, k, sizeof *e, cmp_edge);
    int running = 0;
    for (size_t i = 0; i < k; i++) {
        running += e[i].delta;
        if (i + 1 < k && running > 0 && running < 8)
            out->type_time[running] += (e[i + 1].t - e[i].t) * 1e-6;
    }
    free(e);
    return 0;
}

void xg_breakdown_free(xg_breakdown *b)
{
    free(b->idle_streams);
    memset(b, 0, sizeof *b);
}

static int idle_by_stream(bd_iv *v, size_t n, double delay, xg_breakdown *out)
{
    qsort(v, n, sizeof *v, cmp_stream_start);
    int ns = 0;
    long long prev_stream = 0;
    for (size_t i = 0; i < n; i++)
        if (!v[i].sync && (ns == 0 || v[i].stream != prev_stream)) {
            ns++;
            prev_stream = v[i].stream;
        }
    out->idle_streams = calloc(ns ? (size_t)ns : 1, sizeof *out->idle_streams);
    if (!out->idle_streams)
        return -1;
    int s = -1;
    const bd_iv *prev = NULL;
    for (size_t i = 0; i < n; i++) {
        if (v[i].sync)
            continue;
        if (!prev || v[i].stream != prev->stream) {
            out->idle_streams[++s].stream = v[i].stream;
            prev = &v[i];
            continue;
        }
        double prev_end = prev->b, gap = v[i].a - prev_end;
        xg_idle_stream *is = &out->idle_streams[s];
        if (!isnan(v[i].launch) && v[i].launch > prev_end)
            is->host_wait += gap * 1e-6;
        else if (gap < delay)
            is->kernel_wait += gap * 1e-6;
        else
            is->other += gap * 1e-6;
        prev = &v[i];
    }
    out->nidle = ns;
    return 0;
}

/* Whether the trace gives fractional microseconds (HTA then rounds). */
static int fractional(const xg_trace *t)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].ts != floor(t->ev[i].ts))
            return 1;
    return 0;
}

/* The start of the last ProfilerStep when the trace has two or more, else
 * +inf: HTA's default leaves the last step out. */
static double last_step_start(const xg_graph *g)
{
    int named = 0;
    double last = -INFINITY;
    for (int i = 0; i < g->nsteps; i++)
        if (g->steps[i].name >= 0) {
            named++;
            last = fmax(last, g->steps[i].ts);
        }
    return named >= 2 ? last : INFINITY;
}

static int is_dev(int kind)
{
    return kind == XG_KERNEL || kind == XG_MEMCPY || kind == XG_MEMSET || kind == XG_DEVSYNC;
}

int xg_breakdown_compute(const xg_graph *g, int step, double consecutive_delay_us,
                         xg_breakdown *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    const xg_trace *t = g->t;
    double delay = consecutive_delay_us >= 0 ? consecutive_delay_us : 30;
    int whole = step < 0, frac = fractional(t);
    size_t cap = whole ? t->n : (size_t)g->steps[step].ndev, n = 0;
    bd_iv *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    double cut = step == XG_BD_TRACE ? last_step_start(g) : INFINITY;
    if (frac)
        cut = ceil(cut);
    double lo = whole ? INFINITY : g->steps[step].ts;
    double hi = whole ? -INFINITY : g->steps[step].end;
    for (size_t i = 0; i < cap; i++) {
        int ev = whole ? (int)i : g->step_dev[g->steps[step].dev_first + (int)i];
        const xg_event *e = &t->ev[ev];
        /* HTA counts every event with a stream: an operator that names one
         * (torch.compile's Triton launchers) too, as computation by name */
        int host = e->kind == XG_OP && e->stream != -1 && whole;
        if (!is_dev(e->kind) && !host)
            continue;
        if (e->stream == -1) {
            out->excluded++;
            continue;
        }
        double a = frac ? ceil(e->ts) : e->ts, b = frac ? floor(e->ts + e->dur) : e->ts + e->dur;
        double launch = host ? NAN : frac ? ceil(g->launch_ts[ev]) : g->launch_ts[ev];
        if (cut < INFINITY && (e->corr >= 0 ? !(launch < cut) : !(a < cut))) {
            out->excluded++;
            continue;
        }
        int type = xg_device_type(xg_name(t, e->name));
        out->kernel_sum[type] += (b - a) * 1e-6;
        out->kernels[type]++;
        v[n++] = (bd_iv){.a = a, .b = b, .stream = xg_stream_of(e), .launch = launch,
                         .type = type, .sync = e->kind == XG_DEVSYNC || host};
        if (whole)
            lo = fmin(lo, a);
    }
    if (n == 0) {
        out->window = whole ? 0 : (hi - lo) * 1e-6;
        out->idle = out->window;
        free(v);
        return 0;
    }
    /* the idle causes see the events as they are; the window clips them */
    if (idle_by_stream(v, n, delay, out) < 0) {
        free(v);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    qsort(v, n, sizeof *v, cmp_start);
    if (whole) {
        union_upto(v, n, XG_OTHER, &hi);
        hi = fmax(hi, lo);
    }
    /* relative to the window's start (precision), clipped to the window */
    for (size_t i = 0; i < n; i++) {
        v[i].a = fmin(fmax(v[i].a, lo), hi) - lo;
        v[i].b = fmax(fmin(v[i].b, hi), lo) - lo;
    }
    /* nested unions: rounding must not make a larger set's union smaller */
    double u_comp = union_upto(v, n, XG_COMP, NULL);
    double u_cc = fmax(union_upto(v, n, XG_COMM, NULL), u_comp);
    double u_ccm = fmax(union_upto(v, n, XG_MEM, NULL), u_cc);
    double u_all = fmax(union_upto(v, n, XG_OTHER, NULL), u_ccm);
    if (u_all > hi - lo)
        u_all = hi - lo;
    u_ccm = fmin(u_ccm, u_all);
    u_cc = fmin(u_cc, u_ccm);
    u_comp = fmin(u_comp, u_cc);
    out->window = (hi - lo) * 1e-6;
    out->comp = u_comp * 1e-6;
    out->comm = (u_cc - u_comp) * 1e-6;
    out->mem = (u_ccm - u_cc) * 1e-6;
    out->other = (u_all - u_ccm) * 1e-6;
    out->idle = (hi - lo - u_all) * 1e-6;
    int rc = kernel_types(v, n, out);
    free(v);
    if (rc < 0)
        xg_error_set(err, -1, NULL, "out of memory");
    return rc;
}
