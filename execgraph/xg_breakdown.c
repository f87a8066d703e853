/*
 * xg_breakdown.c — GPU temporal and idle-time breakdown (xg_breakdown.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_breakdown.h"

int xg_device_type(const char *name)
{
    if (!strncmp(name, "nccl", 4) || strstr(name, "gloo:"))
        return XG_COMM;
    if (strstr(name, "Memcpy") || strstr(name, "Memset"))
        return XG_MEM;
    return XG_COMP;
}

typedef struct bd_iv {
    double a, b;
    long long stream;
    double launch;
    int type;
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

/* |union| of the intervals (sorted by start) whose type is at most maxtype. */
static double union_upto(const bd_iv *v, size_t n, int maxtype)
{
    double total = 0, a = 0, b = 0;
    int open = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i].type > maxtype)
            continue;
        if (!open || v[i].a > b) {
            if (open)
                total += b - a;
            a = v[i].a;
            b = v[i].b;
            open = 1;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
    }
    return open ? total + b - a : 0;
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
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i].stream != v[i - 1].stream)
            ns++;
    out->idle_streams = calloc(ns ? (size_t)ns : 1, sizeof *out->idle_streams);
    if (!out->idle_streams)
        return -1;
    int s = -1;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || v[i].stream != v[i - 1].stream) {
            out->idle_streams[++s].stream = v[i].stream;
            continue;
        }
        double prev_end = v[i - 1].b, gap = v[i].a - prev_end;
        xg_idle_stream *is = &out->idle_streams[s];
        if (!isnan(v[i].launch) && v[i].launch > prev_end)
            is->host_wait += gap * 1e-6;
        else if (gap < delay)
            is->kernel_wait += gap * 1e-6;
        else
            is->other += gap * 1e-6;
    }
    out->nidle = ns;
    return 0;
}

int xg_breakdown_compute(const xg_graph *g, int step, double consecutive_delay_us,
                         xg_breakdown *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    const xg_trace *t = g->t;
    double delay = consecutive_delay_us >= 0 ? consecutive_delay_us : 0.03;
    size_t cap = step < 0 ? t->n : (size_t)g->steps[step].ndev, n = 0;
    bd_iv *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    double lo = step < 0 ? INFINITY : g->steps[step].ts;
    double hi = step < 0 ? -INFINITY : g->steps[step].end;
    for (size_t i = 0; i < cap; i++) {
        int ev = step < 0 ? (int)i : g->step_dev[g->steps[step].dev_first + (int)i];
        const xg_event *e = &t->ev[ev];
        if (e->kind != XG_KERNEL && e->kind != XG_MEMCPY && e->kind != XG_MEMSET &&
            e->kind != XG_DEVSYNC)
            continue;
        int type = xg_device_type(xg_name(t, e->name));
        out->kernel_sum[type] += e->dur * 1e-6;
        out->kernels[type]++;
        v[n++] = (bd_iv){.a = e->ts, .b = e->ts + e->dur, .stream = xg_stream_of(e),
                         .launch = g->launch_ts[ev], .type = type};
        if (step < 0) {
            lo = fmin(lo, e->ts);
            hi = fmax(hi, e->ts + e->dur);
        }
    }
    if (n == 0) {
        out->window = step < 0 ? 0 : (hi - lo) * 1e-6;
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
    /* relative to the window's start (precision), clipped to the window */
    for (size_t i = 0; i < n; i++) {
        v[i].a = fmax(v[i].a, lo) - lo;
        v[i].b = fmin(v[i].b, hi) - lo;
        if (v[i].b < v[i].a)
            v[i].b = v[i].a;
    }
    qsort(v, n, sizeof *v, cmp_start);
    /* nested unions: rounding must not make a larger set's union smaller */
    double u_comp = union_upto(v, n, XG_COMP);
    double u_cc = fmax(union_upto(v, n, XG_COMM), u_comp);
    double u_all = fmax(union_upto(v, n, XG_MEM), u_cc);
    if (u_all > hi - lo)
        u_all = hi - lo;
    if (u_cc > u_all)
        u_cc = u_all;
    if (u_comp > u_cc)
        u_comp = u_cc;
    out->window = (hi - lo) * 1e-6;
    out->comp = u_comp * 1e-6;
    out->comm = (u_cc - u_comp) * 1e-6;
    out->mem = (u_all - u_cc) * 1e-6;
    out->idle = (hi - lo - u_all) * 1e-6;
    free(v);
    return 0;
}
