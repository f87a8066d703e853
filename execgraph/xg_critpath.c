/*
 * xg_critpath.c — Algorithm 1 over an execution graph (xg_critpath.h).
 * Internally in microseconds, as the trace; results in seconds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_critpath.h"
#include "execgraph/xg_syncwait.h"

typedef struct cp_ctx {
    const xg_graph *g;
    const xg_cp_options *o;
    xg_cp_result *r;
    double *ov[XG_NTYPES]; /* per name id: overhead in us, NAN until looked up */
    int *kt_kernel, *kt_op;  /* per name id: table entry, -1 */
    double *sync;            /* per op: wait for other ranks before it (us) */
    double gap;
    /* per step scratch */
    double *gpu, *active;
    struct iv { double a, b; } *iv;
    size_t niv, ivcap;
    xg_cp_top *acc;          /* per name id contributions */
    int *touched;
    int ntouched;
} cp_ctx;

static double ov_us(cp_ctx *c, int type, int name)
{
    double *v = &c->ov[type][name];
    if (isnan(*v)) {
        int found;
        *v = xg_ov_lookup(c->o->ov, type, xg_name(c->g->t, name), &found) * 1e6;
        if (found == 1)
            c->r->fallback_lookups++;
        else if (found == 0)
            c->r->missing_lookups++;
    }
    return *v;
}

static int push_iv(cp_ctx *c, double a, double b)
{
    if (c->niv == c->ivcap) {
        size_t cap = c->ivcap ? c->ivcap * 2 : 1024;
        struct iv *p = realloc(c->iv, cap * sizeof *p);
        if (!p)
            return -1;
        c->iv = p;
        c->ivcap = cap;
    }
    c->iv[c->niv++] = (struct iv){a, b};
    return 0;
}

static int cmp_iv(const void *x, const void *y)
{
    const struct iv *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}

static double union_len(struct iv *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_iv);
    double total = 0, a = v[0].a, b = v[0].b;
    for (size_t i = 1; i < n; i++) {
        if (v[i].a > b) {
            total += b - a;
            a = v[i].a;
            b = v[i].b;
        } else if (v[i].b > b) {
            b = v[i].b;
        }
    }
    return total + b - a;
}

/* Kernel time of device event d launched by op (us). */
static double kernel_us(cp_ctx *c, const xg_op *op, double op_total, int nkern, int d,
                        xg_cp_step *st)
{
    const xg_event *e = &c->g->t->ev[d];
    if (c->o->dev_us && !isnan(c->o->dev_us[d])) {
        st->replaced++;
        return c->o->dev_us[d];
    }
    int k = c->kt_kernel ? c->kt_kernel[e->name] : -1;
    if (k >= 0) {
        c->r->kt_hits[k]++;
        st->replaced++;
        return c->o->kt[k].scale > 0 ? e->dur * c->o->kt[k].scale : c->o->kt[k].seconds * 1e6;
    }
    k = c->kt_op ? c->kt_op[op->name] : -1;
    if (k >= 0) {
        c->r->kt_hits[k]++;
        st->replaced++;
        if (c->o->kt[k].scale > 0)
            return e->dur * c->o->kt[k].scale;
        double share = op_total > 0 ? e->dur / op_total : 1.0 / nkern;
        return c->o->kt[k].seconds * 1e6 * share;
    }
    return e->dur;
}

static void contribute(cp_ctx *c, int name, double us)
{
    xg_cp_top *a = &c->acc[name];
    if (a->count == 0)
        c->touched[c->ntouched++] = name;
    a->name = name;
    a->seconds += us * 1e-6;
    a->count++;
}

static int cmp_top(const void *x, const void *y)
{
    const xg_cp_top *a = x, *b = y;
    if (a->seconds != b->seconds)
        return a->seconds > b->seconds ? -1 : 1;
    return a->name - b->name;
}

static double max_gpu(const cp_ctx *c)
{
    double m = 0;
    for (int s = 0; s < c->g->nstreams; s++)
        if (c->gpu[s] > m)
            m = c->gpu[s];
    return m;
}

/* One launch (or synchronising) call of an op. */
static int run_call(cp_ctx *c, const xg_op *op, const xg_call *cl, double op_total, int nkern,
                    double *cpu, double *wait, int *cur, xg_cp_step *st)
{
    const xg_graph *g = c->g;
    double t4 = ov_us(c, XG_T4, g->t->ev[cl->ev].name);
    double awaited = 0;
    for (int d = 0; d < cl->ndev; d++) {
        int ev = g->dev[cl->dev_first + d];
        int s = xg_stream_index(g, xg_stream_of(&g->t->ev[ev]));
        double tk = kernel_us(c, op, op_total, nkern, ev, st);
        double start = c->gpu[s] + c->gap;
        if (*cpu + t4 / 2 > start)
            start = *cpu + t4 / 2;
        if (*wait > start)
            start = *wait;
        c->gpu[s] = start + tk;
        c->active[s] += tk;
        st->kernels++;
        if (c->gpu[s] > awaited)
            awaited = c->gpu[s];
        *cur = s;
        if (tk > 0 && push_iv(c, start, start + tk) < 0)
            return -1;
    }
    if (cl->ndev > 0)
        *wait = 0;
    if (cl->flags & XG_CALL_SYNC) {
        double until = cl->ndev > 0 ? awaited : max_gpu(c);
        if (until > *cpu)
            *cpu = until;
    }
    *cpu += t4;
    return 0;
}

static int run_op(cp_ctx *c, const xg_op *op, double *cpu, double *wait, double *recorded,
                  int *cur, xg_cp_step *st)
{
    const xg_graph *g = c->g;
    double sw = c->sync ? c->sync[op - g->ops] : 0;
    if (sw > 0) {
        *cpu += sw;
        st->sync_wait += sw * 1e-6;
    } else {
        *cpu += ov_us(c, XG_T1, op->name);
    }
    if (op->nlaunch == 0) {
        *cpu += ov_us(c, XG_T5, op->name);
        return 0;
    }
    double op_total = 0;
    int nkern = 0;
    for (int i = 0; i < op->ncalls; i++) {
        const xg_call *cl = &g->calls[op->call_first + i];
        for (int d = 0; d < cl->ndev; d++) {
            op_total += g->t->ev[g->dev[cl->dev_first + d]].dur;
            nkern++;
        }
    }
    *cpu += ov_us(c, XG_T2, op->name);
    int seen = 0;
    for (int i = 0; i < op->ncalls; i++) {
        const xg_call *cl = &g->calls[op->call_first + i];
        if (cl->flags & XG_CALL_WAIT) {
            if (*recorded > *wait)
                *wait = *recorded;
            continue;
        }
        if (cl->flags & XG_CALL_RECORD) {
            *recorded = *cur >= 0 ? c->gpu[*cur] : 0;
            continue;
        }
        if (!(cl->flags & (XG_CALL_LAUNCH | XG_CALL_SYNC)))
            continue;
        if (run_call(c, op, cl, op_total, nkern, cpu, wait, cur, st) < 0)
            return -1;
        if (++seen < op->nlaunch)
            *cpu += ov_us(c, XG_T5, op->name);
    }
    *cpu += ov_us(c, XG_T3, op->name);
    return 0;
}

static int run_step(cp_ctx *c, int si, xg_cp_step *st)
{
    const xg_graph *g = c->g;
    const xg_step *step = &g->steps[si];
    int ns = g->nstreams;
    st->step = si;
    st->gpu_active = calloc(ns ? (size_t)ns : 1, sizeof(double));
    st->gpu_end = calloc(ns ? (size_t)ns : 1, sizeof(double));
    if (!st->gpu_active || !st->gpu_end)
        return -1;
    memset(c->gpu, 0, (ns ? (size_t)ns : 1) * sizeof(double));
    memset(c->active, 0, (ns ? (size_t)ns : 1) * sizeof(double));
    c->niv = 0;
    c->ntouched = 0;
    double cpu = 0, wait = 0, recorded = 0;
    int cur = -1;
    for (int i = 0; i < step->nops; i++) {
        const xg_op *op = &g->ops[step->op_first + i];
        double before = fmax(cpu, max_gpu(c));
        if (run_op(c, op, &cpu, &wait, &recorded, &cur, st) < 0)
            return -1;
        contribute(c, op->name, fmax(cpu, max_gpu(c)) - before);
    }
    double gmax = max_gpu(c);
    double total = fmax(cpu, gmax);
    st->predicted = total * 1e-6;
    st->cpu_time = cpu * 1e-6;
    st->gpu_time = gmax * 1e-6;
    st->gpu_bound = gmax > cpu;
    st->idle = (total - union_len(c->iv, c->niv)) * 1e-6;
    for (int s = 0; s < ns; s++) {
        st->gpu_active[s] = c->active[s] * 1e-6;
        st->gpu_end[s] = c->gpu[s] * 1e-6;
    }
    st->measured = (step->end - step->ts) * 1e-6;
    st->error = st->measured > 0 ? fabs(st->predicted - st->measured) / st->measured : NAN;
    int top = c->o->top > 0 ? c->o->top : 5;
    xg_cp_top *all = malloc((c->ntouched ? (size_t)c->ntouched : 1) * sizeof *all);
    if (!all)
        return -1;
    for (int i = 0; i < c->ntouched; i++) {
        all[i] = c->acc[c->touched[i]];
        c->acc[c->touched[i]] = (xg_cp_top){0};
    }
    qsort(all, (size_t)c->ntouched, sizeof *all, cmp_top);
    st->ntop = c->ntouched < top ? c->ntouched : top;
    st->top = all;
    return 0;
}

void xg_cp_result_free(xg_cp_result *r)
{
    for (int i = 0; i < r->nsteps; i++) {
        free(r->steps[i].gpu_active);
        free(r->steps[i].gpu_end);
        free(r->steps[i].top);
    }
    free(r->steps);
    free(r->kt_hits);
    memset(r, 0, sizeof *r);
}

/* Maps table entries onto the trace's names; an entry naming nothing is an error. */
static int map_table(cp_ctx *c, xg_error *err)
{
    const xg_trace *t = c->g->t;
    if (c->o->nkt <= 0)
        return 0;
    c->kt_kernel = malloc((size_t)t->nnames * sizeof(int) + 1);
    c->kt_op = malloc((size_t)t->nnames * sizeof(int) + 1);
    if (!c->kt_kernel || !c->kt_op) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    char *is_kernel = calloc((size_t)t->nnames + 1, 1), *is_op = calloc((size_t)t->nnames + 1, 1);
    if (!is_kernel || !is_op) {
        free(is_kernel);
        free(is_op);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    for (int i = 0; i < t->nnames; i++)
        c->kt_kernel[i] = c->kt_op[i] = -1;
    for (int i = 0; i < c->g->ndev; i++)
        is_kernel[t->ev[c->g->dev[i]].name] = 1;
    for (int i = 0; i < c->g->nops; i++)
        if (c->g->ops[i].nlaunch > 0)
            is_op[c->g->ops[i].name] = 1;
    int rc = 0;
    for (int k = 0; k < c->o->nkt && rc == 0; k++) {
        const xg_kt_entry *e = &c->o->kt[k];
        char field[32];
        snprintf(field, sizeof field, "kernel_times");
        if (!(e->scale > 0) && !(isfinite(e->seconds) && e->seconds >= 0)) {
            xg_error_set(err, -1, field, "kernel_times[\"%.60s\"]: expected seconds >= 0 or a "
                         "scale > 0", e->name);
            rc = -1;
            break;
        }
        int id = xg_trace_find(t, e->name, strlen(e->name));
        int hit = 0;
        if (id >= 0 && is_kernel[id]) {
            c->kt_kernel[id] = k;
            hit = 1;
        }
        if (id >= 0 && is_op[id]) {
            c->kt_op[id] = k;
            hit = 1;
        }
        if (!hit) {
            xg_error_set(err, -1, field, "kernel_times[\"%.60s\"]: names no kernel and no op "
                         "that launches one in the trace", e->name);
            rc = -1;
        }
    }
    free(is_kernel);
    free(is_op);
    return rc;
}

int xg_critpath(const xg_graph *g, const xg_cp_options *o, xg_cp_result *out, xg_error *err)
{
    memset(out, 0, sizeof *out);
    err->event = -1;
    err->field[0] = '\0';
    cp_ctx c = {.g = g, .o = o, .r = out};
    c.gap = o->launch_gap_us >= 0 ? o->launch_gap_us : 1;
    size_t nn = (size_t)g->t->nnames + 1, ns = g->nstreams ? (size_t)g->nstreams : 1;
    int rc = -1;
    for (int ty = 0; ty < XG_NTYPES; ty++) {
        if (!(c.ov[ty] = malloc(nn * sizeof(double))))
            goto oom;
        for (size_t i = 0; i < nn; i++)
            c.ov[ty][i] = NAN;
    }
    c.gpu = malloc(ns * sizeof(double));
    c.active = malloc(ns * sizeof(double));
    c.acc = calloc(nn, sizeof *c.acc);
    c.touched = malloc(nn * sizeof(int));
    out->steps = calloc(g->nsteps ? (size_t)g->nsteps : 1, sizeof *out->steps);
    out->kt_hits = calloc(o->nkt > 0 ? (size_t)o->nkt : 1, sizeof *out->kt_hits);
    c.sync = xg_sync_waits(g, NULL);
    if (!c.gpu || !c.active || !c.acc || !c.touched || !out->steps || !out->kt_hits || !c.sync)
        goto oom;
    out->nstreams = g->nstreams;
    if (map_table(&c, err) < 0)
        goto done;
    for (int s = 0; s < g->nsteps; s++) {
        out->nsteps = s + 1;
        if (run_step(&c, s, &out->steps[s]) < 0)
            goto oom;
    }
    rc = 0;
    goto done;
oom:
    xg_error_set(err, -1, NULL, "out of memory");
done:
    for (int ty = 0; ty < XG_NTYPES; ty++)
        free(c.ov[ty]);
    free(c.kt_kernel);
    free(c.kt_op);
    free(c.sync);
    free(c.gpu);
    free(c.active);
    free(c.iv);
    free(c.acc);
    free(c.touched);
    if (rc < 0)
        xg_cp_result_free(out);
    return rc;
}

double xg_cp_geomean_error(const xg_cp_result *r)
{
    double logsum = 0;
    int n = 0;
    for (int i = 0; i < r->nsteps; i++) {
        double e = r->steps[i].error;
        if (isnan(e))
            continue;
        logsum += log(e > 1e-6 ? e : 1e-6);
        n++;
    }
    return n ? exp(logsum / n) : NAN;
}
