/*
 * xg_graph.c — builds the execution graph of xg_graph.h from an xg_trace:
 * steps, top-level operators per thread (a stack of open operators while
 * walking each thread's events in time order), runtime calls, and device
 * events linked by correlation id through an open-addressing table.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_graph.h"

long long xg_stream_of(const xg_event *e)
{
    return e->stream >= 0 ? e->stream : e->tid;
}

int xg_stream_index(const xg_graph *g, long long s)
{
    int lo = 0, hi = g->nstreams - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (g->streams[mid] == s)
            return mid;
        if (g->streams[mid] < s)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void xg_graph_free(xg_graph *g)
{
    free(g->steps);
    free(g->ops);
    free(g->calls);
    free(g->dev);
    free(g->dev_call);
    free(g->launch_ts);
    free(g->step_dev);
    free(g->streams);
    memset(g, 0, sizeof *g);
}

static void warn(xg_graph *g, const char *msg)
{
    if (g->nwarnings < XG_MAX_WARNINGS)
        snprintf(g->warnings[g->nwarnings++], sizeof g->warnings[0], "%s", msg);
}

static int is_device(int kind)
{
    return kind == XG_KERNEL || kind == XG_MEMCPY || kind == XG_MEMSET;
}

/* Device work and device-side synchronisations: what has a stream. */
static int on_stream(int kind)
{
    return is_device(kind) || kind == XG_DEVSYNC;
}

/* ---- sorting helpers (qsort with the trace as context via a static-free
 * approach: sort keys copied into small structs) ------------------------------- */

typedef struct key_ts {
    double ts, neg_dur;
    long long tid;
    int kind, idx;
} key_ts;

static int cmp_thread_time(const void *a, const void *b)
{
    const key_ts *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->neg_dur != y->neg_dur)
        return x->neg_dur < y->neg_dur ? -1 : 1;
    if (x->kind != y->kind) /* an operator opens before a call at the same time */
        return x->kind < y->kind ? -1 : 1;
    return x->idx - y->idx;
}

typedef struct key_pos {
    double ts;
    int group, idx;
} key_pos;

static int cmp_group_time(const void *a, const void *b)
{
    const key_pos *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->idx - y->idx;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? -1 : x > y;
}

/* The step whose [ts, end) holds t, -1 for none (steps sorted, disjoint). */
static int step_of(const xg_graph *g, double t)
{
    int lo = 0, hi = g->nsteps - 1, found = -1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (g->steps[mid].ts <= t) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (found >= 0 && t < g->steps[found].end)
        return found;
    if (found >= 0 && g->nsteps == 1 && g->steps[0].name < 0 && t <= g->steps[0].end)
        return 0;
    return -1;
}

static int build_steps(const xg_trace *t, xg_graph *g, xg_error *err)
{
    int n = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        if (t->ev[i].kind == XG_STEP)
            n++;
        if (t->ev[i].ts < lo)
            lo = t->ev[i].ts;
        if (t->ev[i].ts + t->ev[i].dur > hi)
            hi = t->ev[i].ts + t->ev[i].dur;
    }
    g->steps = calloc(n ? (size_t)n : 1, sizeof *g->steps);
    if (!g->steps) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    if (n == 0) {
        if (t->n == 0) {
            xg_error_set(err, -1, "traceEvents", "the trace has no operators, runtime calls "
                                                 "or device events");
            return -1;
        }
        g->steps[0] = (xg_step){.ts = lo, .end = hi, .name = -1};
        g->nsteps = 1;
        return 0;
    }
    key_pos *k = malloc((size_t)n * sizeof *k);
    if (!k) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    int j = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].kind == XG_STEP)
            k[j++] = (key_pos){.ts = t->ev[i].ts, .group = 0, .idx = (int)i};
    qsort(k, (size_t)n, sizeof *k, cmp_group_time);
    for (j = 0; j < n; j++) {
        const xg_event *e = &t->ev[k[j].idx];
        if (j > 0 && e->ts < g->steps[j - 1].end - 1e-3) {
            xg_error_set(err, e->index, "ts", "traceEvents[%lld] (\"%.40s\"): overlaps the "
                         "previous ProfilerStep", e->index, xg_name(t, e->name));
            free(k);
            return -1;
        }
        g->steps[j] = (xg_step){.ts = e->ts, .end = e->ts + e->dur, .name = e->name};
    }
    g->nsteps = n;
    free(k);
    return 0;
}

/* Correlation id -> runtime event index, open addressing. */
typedef struct corr_table {
    long long *key;
    int *val;
    size_t n;
} corr_table;

static int corr_init(corr_table *c, size_t count)
{
    c->n = 1024;
    while (c->n < count * 2)
        c->n *= 2;
    c->key = malloc(c->n * sizeof *c->key);
    c->val = malloc(c->n * sizeof *c->val);
    if (!c->key || !c->val)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        c->key[i] = -1;
    return 0;
}

static size_t corr_slot(const corr_table *c, long long id)
{
    size_t i = (size_t)((unsigned long long)id * 0x9e3779b97f4a7c15ull >> 20) & (c->n - 1);
    while (c->key[i] >= 0 && c->key[i] != id)
        i = (i + 1) & (c->n - 1);
    return i;
}

static int call_flags(const char *name)
{
    static const char *const sync[] = {"cudaDeviceSynchronize", "cudaStreamSynchronize",
                                       "cudaEventSynchronize", "cudaMemcpy", "cudaMemcpy2D",
                                       "cuCtxSynchronize", "cuStreamSynchronize",
                                       "cuEventSynchronize", "cuMemcpyDtoH_v2"};
    for (size_t i = 0; i < sizeof sync / sizeof *sync; i++)
        if (!strcmp(name, sync[i]))
            return XG_CALL_SYNC;
    if (!strcmp(name, "cudaEventRecord") || !strcmp(name, "cudaEventRecordWithFlags") ||
        !strcmp(name, "cuEventRecord"))
        return XG_CALL_RECORD;
    if (!strcmp(name, "cudaStreamWaitEvent") || !strcmp(name, "cuStreamWaitEvent"))
        return XG_CALL_WAIT;
    return 0;
}

/* A copy to pageable host memory returns only when the copy is done. */
static int is_sync_copy(const char *name)
{
    return strstr(name, "DtoH") && strstr(name, "Pageable");
}

typedef struct pending_call {
    int ev, op;
} pending_call;

static int build_ops(const xg_trace *t, xg_graph *g, int *call_of_ev, xg_error *err)
{
    size_t nh = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].kind == XG_OP || t->ev[i].kind == XG_RUNTIME)
            nh++;
    key_ts *k = malloc((nh ? nh : 1) * sizeof *k);
    xg_op *ops = malloc((nh ? nh : 1) * sizeof *ops);
    pending_call *pc = malloc((nh ? nh : 1) * sizeof *pc);
    key_pos *ko = NULL, *kc = NULL;
    int *opmap = NULL;
    if (!k || !ops || !pc)
        goto oom;
    size_t j = 0;
    for (size_t i = 0; i < t->n; i++) {
        const xg_event *e = &t->ev[i];
        if (e->kind == XG_OP || e->kind == XG_RUNTIME)
            k[j++] = (key_ts){.ts = e->ts, .neg_dur = -e->dur, .tid = e->tid, .kind = e->kind,
                              .idx = (int)i};
    }
    qsort(k, nh, sizeof *k, cmp_thread_time);
    int nops = 0, npc = 0, top = -1; /* top: the open top-level op of the thread */
    long long tid = 0;
    for (size_t i = 0; i < nh; i++) {
        const xg_event *e = &t->ev[k[i].idx];
        if (i == 0 || e->tid != tid) {
            tid = e->tid;
            top = -1;
        }
        if (top >= 0 && e->ts >= ops[top].end)
            top = -1;
        if (e->kind == XG_OP) {
            if (top < 0) {
                ops[nops] = (xg_op){.ev = k[i].idx, .name = e->name, .tid = e->tid, .ts = e->ts,
                                    .end = e->ts + e->dur};
                top = nops++;
            }
            continue;
        }
        int owner = top;
        if (owner < 0) /* a runtime call outside every operator is an op of its own */
            ops[owner = nops++] = (xg_op){.ev = k[i].idx, .name = e->name, .tid = e->tid,
                                          .ts = e->ts, .end = e->ts + e->dur};
        pc[npc++] = (pending_call){.ev = k[i].idx, .op = owner};
    }
    /* ops: by step, then start time across threads */
    ko = malloc((nops ? (size_t)nops : 1) * sizeof *ko);
    opmap = malloc((nops ? (size_t)nops : 1) * sizeof *opmap);
    if (!ko || !opmap)
        goto oom;
    int kept = 0;
    for (int i = 0; i < nops; i++) {
        int s = step_of(g, ops[i].ts);
        opmap[i] = -1;
        if (s >= 0)
            ko[kept++] = (key_pos){.ts = ops[i].ts, .group = s, .idx = i};
    }
    qsort(ko, (size_t)kept, sizeof *ko, cmp_group_time);
    g->ops = malloc((kept ? (size_t)kept : 1) * sizeof *g->ops);
    if (!g->ops)
        goto oom;
    for (int i = 0; i < kept; i++) {
        g->ops[i] = ops[ko[i].idx];
        opmap[ko[i].idx] = i;
        xg_step *st = &g->steps[ko[i].group];
        if (st->nops++ == 0)
            st->op_first = i;
    }
    g->nops = kept;
    /* calls: by op, then time */
    kc = malloc((npc ? (size_t)npc : 1) * sizeof *kc);
    g->calls = malloc((npc ? (size_t)npc : 1) * sizeof *g->calls);
    if (!kc || !g->calls)
        goto oom;
    int nc = 0;
    for (int i = 0; i < npc; i++)
        if (opmap[pc[i].op] >= 0)
            kc[nc++] = (key_pos){.ts = t->ev[pc[i].ev].ts, .group = opmap[pc[i].op],
                                 .idx = pc[i].ev};
    qsort(kc, (size_t)nc, sizeof *kc, cmp_group_time);
    for (int i = 0; i < nc; i++) {
        g->calls[i] = (xg_call){.ev = kc[i].idx,
                                .flags = call_flags(xg_name(t, t->ev[kc[i].idx].name))};
        call_of_ev[kc[i].idx] = i;
        xg_op *op = &g->ops[kc[i].group];
        if (op->ncalls++ == 0)
            op->call_first = i;
    }
    g->ncalls = nc;
    free(k);
    free(ops);
    free(pc);
    free(ko);
    free(kc);
    free(opmap);
    return 0;
oom:
    free(k);
    free(ops);
    free(pc);
    free(ko);
    free(kc);
    free(opmap);
    xg_error_set(err, -1, NULL, "out of memory");
    return -1;
}

static int link_device(const xg_trace *t, xg_graph *g, const int *call_of_ev, xg_error *err)
{
    size_t nd = 0, nr = 0;
    long long first_no_corr = -1, with_corr = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (on_stream(t->ev[i].kind)) {
            nd++;
            if (!is_device(t->ev[i].kind))
                continue;
            if (t->ev[i].corr >= 0)
                with_corr++;
            else if (first_no_corr < 0)
                first_no_corr = (long long)i;
        } else if (t->ev[i].kind == XG_RUNTIME && t->ev[i].corr >= 0) {
            nr++;
        }
    }
    if (nd > 0 && with_corr == 0) {
        const xg_event *e = &t->ev[first_no_corr];
        xg_error_set(err, e->index, "args.correlation",
                     "traceEvents[%lld] (\"%.40s\"): no args.correlation on any device event: "
                     "kernels cannot be linked to their launches", e->index, xg_name(t, e->name));
        return -1;
    }
    corr_table c = {0};
    int *dev_call = malloc(t->n * sizeof *dev_call + 1);
    g->launch_ts = malloc(t->n * sizeof *g->launch_ts + 1);
    key_pos *kd = malloc((nd ? nd : 1) * sizeof *kd);
    long long *streams = malloc((nd ? nd : 1) * sizeof *streams);
    g->dev = malloc((nd ? nd : 1) * sizeof *g->dev);
    g->step_dev = malloc((nd ? nd : 1) * sizeof *g->step_dev);
    if (!dev_call || !g->launch_ts || !kd || !streams || !g->dev || !g->step_dev || corr_init(&c, nr) < 0) {
        free(c.key);
        free(c.val);
        free(dev_call);
        free(kd);
        free(streams);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    g->dev_call = dev_call;
    for (size_t i = 0; i < t->n; i++) {
        dev_call[i] = -1;
        g->launch_ts[i] = NAN;
        if (t->ev[i].kind == XG_RUNTIME && t->ev[i].corr >= 0) {
            size_t s = corr_slot(&c, t->ev[i].corr);
            c.key[s] = t->ev[i].corr;
            c.val[s] = (int)i;
        }
    }
    /* device events by call (for the graph) and by step (for the breakdown) */
    size_t nk = 0, ns = 0, nstep = 0;
    key_pos *ks = malloc((nd ? nd : 1) * sizeof *ks);
    if (!ks) {
        free(c.key);
        free(c.val);
        free(kd);
        free(streams);
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < t->n; i++) {
        const xg_event *e = &t->ev[i];
        if (!on_stream(e->kind))
            continue;
        streams[ns++] = xg_stream_of(e);
        int sync = !is_device(e->kind);
        if (e->stream < 0 && !sync)
            g->no_stream++;
        int call = -1, rt = -1;
        if (e->corr < 0) {
            g->no_corr += !sync;
        } else {
            size_t s = corr_slot(&c, e->corr);
            if (c.key[s] == e->corr)
                rt = c.val[s];
            if (rt < 0)
                g->no_launch += !sync;
            else if (!sync)
                call = call_of_ev[rt];
        }
        if (rt >= 0 && !sync && e->ts < t->ev[rt].ts) {
            g->skewed++;
            if (t->ev[rt].ts - e->ts > g->max_skew)
                g->max_skew = t->ev[rt].ts - e->ts;
        }
        double when = rt >= 0 ? t->ev[rt].ts : e->ts;
        if (rt >= 0)
            g->launch_ts[i] = t->ev[rt].ts;
        int step = step_of(g, when);
        if (step >= 0)
            ks[nstep++] = (key_pos){.ts = e->ts, .group = step, .idx = (int)i};
        if (call >= 0) {
            dev_call[i] = call;
            kd[nk++] = (key_pos){.ts = e->ts, .group = call, .idx = (int)i};
        }
    }
    qsort(kd, nk, sizeof *kd, cmp_group_time);
    for (size_t i = 0; i < nk; i++) {
        g->dev[i] = kd[i].idx;
        xg_call *cl = &g->calls[kd[i].group];
        if (cl->ndev++ == 0)
            cl->dev_first = (int)i;
        cl->flags |= XG_CALL_LAUNCH;
        if (t->ev[kd[i].idx].kind == XG_MEMCPY && is_sync_copy(xg_name(t, t->ev[kd[i].idx].name)))
            cl->flags |= XG_CALL_SYNC;
    }
    g->ndev = (int)nk;
    qsort(ks, nstep, sizeof *ks, cmp_group_time);
    for (size_t i = 0; i < nstep; i++) {
        g->step_dev[i] = ks[i].idx;
        xg_step *st = &g->steps[ks[i].group];
        if (st->ndev++ == 0)
            st->dev_first = (int)i;
    }
    g->nstep_dev = (int)nstep;
    qsort(streams, ns, sizeof *streams, cmp_ll);
    size_t u = 0;
    for (size_t i = 0; i < ns; i++)
        if (u == 0 || streams[u - 1] != streams[i])
            streams[u++] = streams[i];
    g->streams = streams;
    g->nstreams = (int)u;
    free(c.key);
    free(c.val);
    free(kd);
    free(ks);
    return 0;
}

int xg_graph_build(const xg_trace *t, xg_graph *g, xg_error *err)
{
    memset(g, 0, sizeof *g);
    g->t = t;
    err->event = -1;
    err->field[0] = '\0';
    int *call_of_ev = NULL;
    if (build_steps(t, g, err) < 0)
        goto fail;
    call_of_ev = malloc(t->n * sizeof *call_of_ev + 1);
    if (!call_of_ev) {
        xg_error_set(err, -1, NULL, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < t->n; i++)
        call_of_ev[i] = -1;
    if (build_ops(t, g, call_of_ev, err) < 0 || link_device(t, g, call_of_ev, err) < 0)
        goto fail;
    for (int i = 0; i < g->nops; i++) {
        xg_op *op = &g->ops[i];
        for (int c = 0; c < op->ncalls; c++)
            if (g->calls[op->call_first + c].flags & (XG_CALL_LAUNCH | XG_CALL_SYNC))
                op->nlaunch++;
    }
    char msg[200];
    if (g->no_corr) {
        snprintf(msg, sizeof msg, "%lld device events have no args.correlation: placed by their "
                 "own start, not on the critical path", g->no_corr);
        warn(g, msg);
    }
    if (g->no_launch) {
        snprintf(msg, sizeof msg, "%lld device events have no launching runtime call in the "
                 "trace: placed by their own start, not on the critical path", g->no_launch);
        warn(g, msg);
    }
    if (g->no_stream) {
        snprintf(msg, sizeof msg, "%lld device events have no args.stream: their tid is taken "
                 "as the stream", g->no_stream);
        warn(g, msg);
    }
    if (g->skewed) {
        snprintf(msg, sizeof msg, "%lld device events start before their launch (clock skew "
                 "between CPU and GPU, at most %.3f us)", g->skewed, g->max_skew);
        warn(g, msg);
    }
    free(call_of_ev);
    return 0;
fail:
    free(call_of_ev);
    xg_graph_free(g);
    return -1;
}
