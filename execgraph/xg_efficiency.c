/*
 * xg_efficiency.c — achieved FLOP/s and bandwidth against a device's peaks,
 * and roofline times (xg_efficiency.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_breakdown.h"
#include "execgraph/xg_efficiency.h"

const char *xg_ek_class_name(int cls)
{
    return cls == XG_EK_MEMORY        ? "memory"
           : cls == XG_EK_ELEMENTWISE ? "elementwise"
           : cls == XG_EK_COMM        ? "communication"
                                      : "compute";
}

static int is_dev(int kind)
{
    return kind == XG_KERNEL || kind == XG_MEMCPY || kind == XG_MEMSET;
}

static int kernel_class(const xg_event *e, const char *name)
{
    if (e->kind != XG_KERNEL)
        return XG_EK_MEMORY;
    if (xg_device_type(name) == XG_COMM)
        return XG_EK_COMM;
    if (strstr(name, "elementwise") || strstr(name, "reduce_kernel") ||
        strstr(name, "CatArrayBatchedCopy"))
        return XG_EK_ELEMENTWISE;
    return XG_EK_COMPUTE;
}

/* ---- owners: which operator's FLOPs and bytes a runtime call's work shares ---------- */

typedef struct ef_ctx {
    const xg_graph *g;
    /* per name id, computed on first use: 1 + kernel class, and whether the
     * name says tf32 (1 + 0/1); names run to hundreds of bytes */
    signed char *name_cls, *name_tf32;
    int *flops_owner, *bytes_owner;  /* per event index: op event, -1 */
    double *own_dur;                 /* per op event: summed duration of its kernels */
    long long *own_count;
} ef_ctx;

typedef struct ef_key {
    long long tid;
    double ts, end;
    int ev, is_op;
} ef_key;

static int cmp_key(const void *x, const void *y)
{
    const ef_key *a = x, *b = y;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    if (a->is_op != b->is_op)
        return a->is_op ? -1 : 1;   /* an operator before the calls it makes */
    if (a->end != b->end)
        return a->end > b->end ? -1 : 1; /* the enclosing operator first */
    return a->ev - b->ev;
}

static int find_owners(ef_ctx *c, xg_error *err)
{
    const xg_trace *t = c->g->t;
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->ev[i].kind == XG_OP || t->ev[i].kind == XG_RUNTIME;
    ef_key *k = malloc((n ? n : 1) * sizeof *k);
    int *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!k || !stack) {
        free(k);
        free(stack);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const xg_event *e = &t->ev[i];
        if (e->kind == XG_OP || e->kind == XG_RUNTIME)
            k[n++] = (ef_key){.tid = e->tid, .ts = e->ts, .end = e->ts + e->dur, .ev = (int)i,
                              .is_op = e->kind == XG_OP};
    }
    qsort(k, n, sizeof *k, cmp_key);
    int depth = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && k[i].tid != k[i - 1].tid)
            depth = 0;
        while (depth > 0 && t->ev[stack[depth - 1]].ts + t->ev[stack[depth - 1]].dur < k[i].ts)
            depth--;
        if (k[i].is_op) {
            while (depth > 0 && t->ev[stack[depth - 1]].ts + t->ev[stack[depth - 1]].dur <= k[i].ts &&
                   t->ev[stack[depth - 1]].dur > 0)
                depth--;
            stack[depth++] = k[i].ev;
            continue;
        }
        for (int d = depth - 1; d >= 0; d--) {
            const xg_info *inf = xg_trace_info(t, stack[d]);
            if (!inf)
                continue;
            if (c->flops_owner[k[i].ev] < 0 && inf->flops >= 0)
                c->flops_owner[k[i].ev] = stack[d];
            if (c->bytes_owner[k[i].ev] < 0 && inf->bytes >= 0)
                c->bytes_owner[k[i].ev] = stack[d];
        }
    }
    free(k);
    free(stack);
    return 0;
}

/* The runtime call that launched device event ev, -1. */
static int launcher(const xg_graph *g, int ev)
{
    int call = g->dev_call[ev];
    return call >= 0 ? g->calls[call].ev : -1;
}

/* ---- per event figures ----------------------------------------------------------------- */

typedef struct ef_fig {
    double flops, bytes; /* -1 unknown */
    int prec, cls;
} ef_fig;

static double share(const ef_ctx *c, int op, const xg_event *e)
{
    double d = c->own_dur[op];
    return d > 0 ? e->dur / d : 1.0 / (double)c->own_count[op];
}

static ef_fig figures(const ef_ctx *c, int ev)
{
    const xg_trace *t = c->g->t;
    const xg_event *e = &t->ev[ev];
    const char *name = xg_name(t, e->name);
    if (e->kind == XG_KERNEL && !c->name_cls[e->name]) {
        c->name_cls[e->name] = (signed char)(1 + kernel_class(e, name));
        c->name_tf32[e->name] = strstr(name, "tf32") ? 2 : 1;
    }
    ef_fig f = {.flops = -1, .bytes = -1, .prec = XG_FP32,
                .cls = e->kind == XG_KERNEL ? c->name_cls[e->name] - 1 : XG_EK_MEMORY};
    if (e->kind != XG_KERNEL) {
        f.bytes = e->bytes;
        return f;
    }
    const xg_info *own = xg_trace_info(t, ev);
    int rt = launcher(c->g, ev);
    int fo = rt >= 0 ? c->flops_owner[rt] : -1, bo = rt >= 0 ? c->bytes_owner[rt] : -1;
    if (own && own->flops >= 0)
        f.flops = own->flops;
    else if (fo >= 0)
        f.flops = xg_trace_info(t, fo)->flops * share(c, fo, e);
    if (bo >= 0)
        f.bytes = xg_trace_info(t, bo)->bytes * share(c, bo, e);
    const xg_info *pi = bo >= 0 ? xg_trace_info(t, bo) : fo >= 0 ? xg_trace_info(t, fo) : NULL;
    if (pi && pi->prec >= 0 && pi->prec < XG_NPREC)
        f.prec = pi->prec;
    if (f.prec == XG_FP32 && c->name_tf32[e->name] == 2)
        f.prec = XG_TF32;
    return f;
}

static void add(xg_eff_sum *s, const xg_event *e, const ef_fig *f, const xg_device *dev)
{
    double sec = e->dur * 1e-6;
    s->count++;
    s->time += sec;
    if (f->flops >= 0) {
        s->flops += f->flops;
        s->flop_time += sec;
        if (dev)
            s->peak_time += sec * dev->peak[f->prec];
    }
    if (f->bytes >= 0) {
        s->bytes += f->bytes;
        s->byte_time += sec;
    }
    if (dev && (f->flops >= 0 || f->bytes >= 0)) {
        double tf = f->flops > 0 ? f->flops / dev->peak[f->prec] : 0;
        double tb = f->bytes > 0 ? f->bytes / dev->dram_bw : 0;
        s->roofline += fmax(tf, tb);
        s->roofline_measured += sec;
    }
}

/* ---- aggregation per kernel name ------------------------------------------------------- */

static int cmp_time_desc(const void *x, const void *y)
{
    const xg_eff_kernel *a = x, *b = y;
    if (a->s.time != b->s.time)
        return a->s.time > b->s.time ? -1 : 1;
    return a->name - b->name;
}

static int prepare(ef_ctx *c, const xg_graph *g, xg_error *err)
{
    const xg_trace *t = g->t;
    size_t n = t->n ? t->n : 1;
    c->g = g;
    c->flops_owner = malloc(n * sizeof *c->flops_owner);
    c->bytes_owner = malloc(n * sizeof *c->bytes_owner);
    c->own_dur = calloc(n, sizeof *c->own_dur);
    c->own_count = calloc(n, sizeof *c->own_count);
    c->name_cls = calloc((size_t)(t->nnames ? t->nnames : 1), 1);
    c->name_tf32 = calloc((size_t)(t->nnames ? t->nnames : 1), 1);
    if (!c->flops_owner || !c->bytes_owner || !c->own_dur || !c->own_count || !c->name_cls ||
        !c->name_tf32) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->n; i++)
        c->flops_owner[i] = c->bytes_owner[i] = -1;
    if (t->ninfo && find_owners(c, err) < 0)
        return -1;
    /* the kernels each owner shares its FLOPs / bytes among */
    for (size_t i = 0; i < t->n; i++) {
        if (t->ev[i].kind != XG_KERNEL)
            continue;
        int rt = launcher(g, (int)i);
        if (rt < 0)
            continue;
        int owners[2] = {c->flops_owner[rt], c->bytes_owner[rt]};
        for (int k = 0; k < 2; k++)
            if (owners[k] >= 0 && (k == 0 || owners[1] != owners[0])) {
                c->own_dur[owners[k]] += t->ev[i].dur;
                c->own_count[owners[k]]++;
            }
    }
    return 0;
}

static void release(ef_ctx *c)
{
    free(c->flops_owner);
    free(c->bytes_owner);
    free(c->own_dur);
    free(c->own_count);
    free(c->name_cls);
    free(c->name_tf32);
}

void xg_efficiency_free(xg_efficiency *e)
{
    free(e->kernels);
    memset(e, 0, sizeof *e);
}

void xg_eff_attr_free(xg_eff_attr *a)
{
    free(a->flops);
    free(a->bytes);
    free(a->prec);
    free(a->cls);
    memset(a, 0, sizeof *a);
}

int xg_eff_attr_build(const xg_graph *g, xg_eff_attr *a, xg_error *err)
{
    memset(a, 0, sizeof *a);
    const xg_trace *t = g->t;
    size_t n = t->n ? t->n : 1;
    a->g = g;
    for (size_t i = 0; i < t->ninfo; i++) {
        a->has_flops |= t->info[i].flops >= 0;
        a->has_shapes |= t->info[i].bytes >= 0;
    }
    a->flops = malloc(n * sizeof *a->flops);
    a->bytes = malloc(n * sizeof *a->bytes);
    a->prec = malloc(n);
    a->cls = malloc(n);
    ef_ctx c = {0};
    if (!a->flops || !a->bytes || !a->prec || !a->cls) {
        xg_eff_attr_free(a);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    if (prepare(&c, g, err) < 0) {
        release(&c);
        xg_eff_attr_free(a);
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        if (!is_dev(t->ev[i].kind))
            continue;
        ef_fig f = figures(&c, (int)i);
        a->flops[i] = f.flops;
        a->bytes[i] = f.bytes;
        a->prec[i] = (signed char)f.prec;
        a->cls[i] = (signed char)f.cls;
    }
    release(&c);
    return 0;
}

int xg_efficiency_of(const xg_eff_attr *a, const xg_device *dev, int step, int top,
                     xg_efficiency *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    const xg_graph *g = a->g;
    const xg_trace *t = g->t;
    out->trace_has_flops = a->has_flops;
    out->trace_has_shapes = a->has_shapes;
    int *slot = calloc((size_t)(t->nnames ? t->nnames : 1), sizeof *slot); /* name -> 1 + index */
    xg_eff_kernel *k = NULL;
    int nk = 0, rc = -1;
    if (!slot) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    size_t cap = step < 0 ? t->n : (size_t)g->steps[step].ndev;
    for (size_t i = 0; i < cap; i++) {
        int ev = step < 0 ? (int)i : g->step_dev[g->steps[step].dev_first + (int)i];
        const xg_event *e = &t->ev[ev];
        if (!is_dev(e->kind))
            continue;
        ef_fig f = {.flops = a->flops[ev], .bytes = a->bytes[ev], .prec = a->prec[ev],
                    .cls = a->cls[ev]};
        add(&out->total, e, &f, dev);
        if (!slot[e->name]) {
            xg_eff_kernel *p = realloc(k, (size_t)(nk + 1) * sizeof *k);
            if (!p) {
                xg_error_set(err, -1, NULL, "out of memory");
                goto done;
            }
            k = p;
            k[nk] = (xg_eff_kernel){.name = e->name, .cls = f.cls, .prec = f.prec};
            slot[e->name] = ++nk;
        }
        add(&k[slot[e->name] - 1].s, e, &f, dev);
    }
    if (nk > 1) /* k is NULL with no kernel: qsort's pointer must not be */
        qsort(k, (size_t)nk, sizeof *k, cmp_time_desc);
    if (top <= 0)
        top = 10;
    out->nkernels = nk < top ? nk : top;
    out->kernels = k;
    k = NULL;
    rc = 0;
done:
    free(k);
    free(slot);
    return rc;
}

int xg_efficiency_compute(const xg_graph *g, const xg_device *dev, int step, int top,
                          xg_efficiency *out, xg_error *err)
{
    xg_eff_attr a;
    memset(out, 0, sizeof *out);
    if (xg_eff_attr_build(g, &a, err) < 0)
        return -1;
    int rc = xg_efficiency_of(&a, dev, step, top, out, err);
    xg_eff_attr_free(&a);
    return rc;
}

double xg_eff_achieved_flops(const xg_eff_sum *s)
{
    return s->flop_time > 0 ? s->flops / s->flop_time : NAN;
}

double xg_eff_achieved_bw(const xg_eff_sum *s)
{
    return s->byte_time > 0 ? s->bytes / s->byte_time : NAN;
}

double xg_eff_flops_frac(const xg_eff_sum *s)
{
    return s->peak_time > 0 ? s->flops / s->peak_time : NAN;
}

double xg_eff_bw_frac(const xg_eff_sum *s, const xg_device *dev)
{
    return dev && s->byte_time > 0 ? s->bytes / (s->byte_time * dev->dram_bw) : NAN;
}
