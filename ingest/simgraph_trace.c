/*
 * simgraph_trace.c — step graphs from Chrome-trace JSON of one worker: the
 * timeline TensorFlow writes (tensorflow.python.client.timeline) and PyTorch
 * profiler (Kineto) traces where the transfers to parameter servers are
 * visible (simgraph.h).
 *
 *   - steps: an array of trace objects is one step each; in one object,
 *     "ProfilerStep#N" ranges (Kineto) split the events, else it is one step;
 *   - processes are named by "process_name" metadata: "/job:ps/.../task:N"
 *     is parameter server N (its computations become resource ps; its side of
 *     a transfer is no operation, the worker's is kept, but its node name
 *     stands for the worker's uplink that started last before it, so the
 *     server's update waits for that uplink), anything else the worker;
 *     TensorFlow's "stream:" copies of device ops, "memcpy", "Tensors" and
 *     "Allocators" processes are skipped (counted once, in "Compute");
 *   - transfers: TensorFlow's RecvTensor/_Recv/_HostRecv (received by the
 *     worker: downlink) and _Send/_HostSend (uplink); Kineto's operations
 *     whose name holds "recv" or "send". Their size comes from args "bytes"
 *     (or "size", "tensor_size", "requested_bytes", "requested_bytes: N" in a
 *     "tensor_description"), or from Kineto's "Input Dims" and "Input type";
 *     a transfer without one is refused, naming it. The server is args
 *     "server", or "task:N" of a "/job:ps" device named in the args;
 *   - computations: every other complete ("X") event; in Kineto traces the
 *     GPU kernels, memcpys and memsets when there are any, else the outermost
 *     CPU operations of each thread;
 *   - dependencies as the paper derives them (§2): an operation waits for the
 *     operations producing its inputs (TensorFlow's args "input0".. by node
 *     name; "^" control inputs too), so a transfer depends on what produces
 *     its tensor; without input names (Kineto), each operation waits for the
 *     one before it on the same thread and for the last operation of the
 *     other kind (transfer / computation) that ended before it started, the
 *     causality the timeline shows; a server computation whose inputs are
 *     not in the worker's view at all waits for the last uplink before it
 *     started. The next step's downlinks follow the previous step's uplinks
 *     because the simulator runs a worker's steps one after the other.
 */
#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/simgraph.h"

#define ST_MAX_DEPTH 32
#define ST_MAX_PROCS 4096

typedef struct st_proc {
    json_int_t pid;
    int skip;    /* TensorFlow's per-stream copies of device ops, memcpy, tensors */
    int ps;      /* 1 on a parameter server */
    int server;  /* its task index */
} st_proc;

typedef struct st_ev {
    json_t *j;
    double ts, dur;     /* µs */
    json_int_t pid, tid;
    int res, server, step, kind; /* kind: 0 compute, 1 transfer, 2 the server's side
                                    of a transfer (names the uplink, is no operation) */
    double bytes;
    const char *node;   /* TF node name (args.name) or NULL */
} st_ev;

typedef struct st_ctx {
    st_proc procs[ST_MAX_PROCS];
    int nprocs;
    int kineto;         /* events carry Kineto's categories */
    int has_gpu;
    sim_error *e;
} st_ctx;

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int jnum(json_t *o, const char *k, double *out)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_number(v))
        return 0;
    *out = json_number_value(v);
    return 1;
}

static int ps_task(const char *s, int *task)
{
    const char *p = s ? strstr(s, "/job:ps") : NULL;
    if (!p)
        return 0;
    const char *t = strstr(p, "task:");
    *task = t ? atoi(t + 5) : 0;
    if (*task < 0 || *task >= SIM_MAX_SERVERS)
        *task = 0;
    return 1;
}

static const st_proc *proc_of(const st_ctx *c, json_int_t pid)
{
    for (int i = 0; i < c->nprocs; i++)
        if (c->procs[i].pid == pid)
            return &c->procs[i];
    return NULL;
}

static void read_procs(st_ctx *c, json_t *events)
{
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *ph = jstr(ev, "ph"), *name = jstr(ev, "name");
        const char *cat = jstr(ev, "cat");
        if (cat && (!strcmp(cat, "cpu_op") || !strcmp(cat, "kernel") ||
                    !strcmp(cat, "user_annotation")))
            c->kineto = 1;
        if (cat && (!strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") ||
                    !strcmp(cat, "gpu_memset")))
            c->has_gpu = 1;
        if (!ph || strcmp(ph, "M") || !name || strcmp(name, "process_name") ||
            c->nprocs == ST_MAX_PROCS)
            continue;
        json_t *pid = json_object_get(ev, "pid");
        const char *pname = jstr(json_object_get(ev, "args"), "name");
        if (!json_is_integer(pid) || !pname)
            continue;
        st_proc *p = &c->procs[c->nprocs++];
        p->pid = json_integer_value(pid);
        p->ps = ps_task(pname, &p->server);
        p->skip = strstr(pname, "stream:") || strstr(pname, "memcpy") ||
                  strstr(pname, "Tensors") || strstr(pname, "Allocators");
    }
}

/* 1 receive, 2 send, 0 neither. */
static int transfer_kind(const char *name, const char *op, int kineto)
{
    const char *t = op ? op : name;
    if (!t)
        return 0;
    if (!strcmp(t, "RecvTensor") || !strcmp(t, "_Recv") || !strcmp(t, "_HostRecv"))
        return 1;
    if (!strcmp(t, "_Send") || !strcmp(t, "_HostSend"))
        return 2;
    if (kineto && name) {
        char low[128];
        size_t n = strlen(name) < sizeof low - 1 ? strlen(name) : sizeof low - 1;
        for (size_t k = 0; k < n; k++)
            low[k] = (char)tolower((unsigned char)name[k]);
        low[n] = 0;
        if (strstr(low, "recv"))
            return 1;
        if (strstr(low, "send"))
            return 2;
    }
    return 0;
}

static double dtype_size(const char *t)
{
    if (!t)
        return 4;
    if (strstr(t, "double") || strstr(t, "long") || strstr(t, "64"))
        return 8;
    if (strstr(t, "half") || strstr(t, "16"))
        return 2;
    if (strstr(t, "bool") || strstr(t, "char") || strstr(t, "int8") || strstr(t, "uint8"))
        return 1;
    return 4;
}

/* Bytes of a transfer from its args; -1 when none is found. */
static double transfer_bytes(json_t *args)
{
    static const char *const keys[] = {"bytes", "size", "tensor_size", "requested_bytes", "Bytes",
                                       NULL};
    double v;
    for (int k = 0; keys[k]; k++)
        if (jnum(args, keys[k], &v))
            return v;
    const char *desc = jstr(args, "tensor_description");
    const char *rb = desc ? strstr(desc, "requested_bytes:") : NULL;
    if (rb)
        return strtod(rb + 16, NULL);
    json_t *dims = json_object_get(args, "Input Dims");
    if (json_is_array(dims) && json_array_size(dims) > 0) {
        json_t *d0 = json_array_get(dims, 0);
        if (json_is_array(d0) && json_array_size(d0) > 0) {
            double n = 1;
            size_t i;
            json_t *x;
            json_array_foreach(d0, i, x)
            {
                if (!json_is_integer(x))
                    return -1;
                n *= (double)json_integer_value(x);
            }
            json_t *types = json_object_get(args, "Input type");
            const char *t0 = json_is_array(types) ? (json_is_string(json_array_get(types, 0))
                                                         ? json_string_value(json_array_get(types, 0))
                                                         : NULL)
                                                  : NULL;
            return n * dtype_size(t0);
        }
    }
    return -1;
}

static int transfer_server(json_t *args)
{
    double v;
    if (jnum(args, "server", &v) && v >= 0 && v < SIM_MAX_SERVERS)
        return (int)v;
    const char *k;
    json_t *x;
    json_object_foreach(args, k, x)
    {
        int task;
        if (json_is_string(x) && ps_task(json_string_value(x), &task))
            return task;
    }
    return -1;
}

/* Step ranges (Kineto ProfilerStep#N) of one trace object: start/end pairs. */
static int step_ranges(json_t *events, double **ranges)
{
    int n = 0, cap = 0;
    *ranges = NULL;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *name = jstr(ev, "name"), *ph = jstr(ev, "ph");
        double ts, dur;
        if (!name || strncmp(name, "ProfilerStep#", 13) || !ph || strcmp(ph, "X") ||
            !jnum(ev, "ts", &ts) || !jnum(ev, "dur", &dur))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            double *r = realloc(*ranges, 2 * (size_t)cap * sizeof *r);
            if (!r)
                return -1;
            *ranges = r;
        }
        (*ranges)[2 * n] = ts;
        (*ranges)[2 * n + 1] = ts + dur;
        n++;
    }
    return n;
}

static int cmp_ev(const void *a, const void *b)
{
    const st_ev *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->j < y->j ? -1 : x->j > y->j;
}

/* Collects the events of one trace object into evs (appending). */
static int collect(st_ctx *c, json_t *events, int step0, st_ev **evs, size_t *n, size_t *cap,
                   int *nsteps)
{
    double *ranges;
    int nr = step_ranges(events, &ranges);
    if (nr < 0) {
        sim_error_set(c->e, NULL, -1, "", "out of memory");
        return -1;
    }
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *ph = jstr(ev, "ph"), *name = jstr(ev, "name"), *cat = jstr(ev, "cat");
        double ts, dur;
        if (!ph || strcmp(ph, "X") || !name || !jnum(ev, "ts", &ts) || !jnum(ev, "dur", &dur))
            continue;
        if (!strncmp(name, "ProfilerStep#", 13) || (cat && !strcmp(cat, "user_annotation")) ||
            (cat && (!strcmp(cat, "python_function") || !strcmp(cat, "cuda_runtime") ||
                     !strcmp(cat, "cuda_driver") || !strcmp(cat, "ac2g"))))
            continue;
        json_t *args = json_object_get(ev, "args");
        const char *op = jstr(args, "op");
        int tk = transfer_kind(name, op, c->kineto);
        int gpu = cat && (!strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") ||
                          !strcmp(cat, "gpu_memset"));
        if (c->kineto && !tk && c->has_gpu && !gpu)
            continue; /* computations: device work only */
        json_t *pid = json_object_get(ev, "pid"), *tid = json_object_get(ev, "tid");
        st_ev x = {.j = ev, .ts = ts, .dur = dur,
                   .pid = json_is_integer(pid) ? json_integer_value(pid) : 0,
                   .tid = json_is_integer(tid) ? json_integer_value(tid) : 0, .server = -1,
                   .bytes = -1, .node = jstr(args, "name")};
        const st_proc *p = proc_of(c, x.pid);
        if (p && p->skip && !tk)
            continue;
        if (p && p->ps) {
            x.res = SIM_PS;
            if (tk)
                x.kind = 2; /* the server's side of a transfer */
            x.server = p->server;
        } else if (tk) {
            x.res = tk == 1 ? SIM_DOWNLINK : SIM_UPLINK;
            x.kind = 1;
            x.bytes = transfer_bytes(args);
            x.server = transfer_server(args);
        } else {
            x.res = SIM_WORKER;
        }
        x.step = step0;
        if (nr > 0) {
            int k = 0;
            while (k < nr && !(ts >= ranges[2 * k] && ts < ranges[2 * k + 1]))
                k++;
            if (k == nr)
                continue; /* outside every step */
            x.step = step0 + k;
        }
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 1024;
            st_ev *a = realloc(*evs, *cap * sizeof *a);
            if (!a) {
                free(ranges);
                sim_error_set(c->e, NULL, -1, "", "out of memory");
                return -1;
            }
            *evs = a;
        }
        (*evs)[(*n)++] = x;
    }
    free(ranges);
    *nsteps = nr > 0 ? nr : 1;
    return 0;
}

/* Kineto CPU operations: keep the outermost of each thread. */
static size_t outermost(st_ev *evs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int inside = 0;
        for (size_t j = k; j-- > 0 && evs[j].step == evs[i].step;) {
            if (evs[j].pid == evs[i].pid && evs[j].tid == evs[i].tid && evs[j].kind == 0 &&
                evs[i].kind == 0) {
                inside = evs[i].ts < evs[j].ts + evs[j].dur;
                break;
            }
        }
        if (!inside)
            evs[k++] = evs[i];
    }
    return k;
}

typedef struct name_ref {
    const char *name;
    int index;
} name_ref;

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const name_ref *)a)->name, ((const name_ref *)b)->name);
}

static int add_dep(sim_op *op, int d)
{
    for (int k = 0; k < op->ndeps; k++)
        if (op->deps[k] == d)
            return 0;
    int *a = realloc(op->deps, (size_t)(op->ndeps + 1) * sizeof *a);
    if (!a)
        return -1;
    op->deps = a;
    op->deps[op->ndeps++] = d;
    return 0;
}

/* Inputs "input0".. of a TensorFlow op, resolved through the sorted node
 * names. Returns the number of inputs named (found or not) and sets *missed
 * when some were not in the view; -1 on out of memory. */
static int tf_deps(const st_ev *x, sim_op *op, const name_ref *names, int nnames, int *missed)
{
    json_t *args = json_object_get(x->j, "args");
    int named = 0;
    char key[24], node[512];
    for (int k = 0; k < 4096; k++) {
        snprintf(key, sizeof key, "input%d", k);
        const char *in = jstr(args, key);
        if (!in)
            break;
        named++;
        if (*in == '^')
            in++;
        snprintf(node, sizeof node, "%s", in);
        char *colon = strrchr(node, ':');
        if (colon && colon != node && isdigit((unsigned char)colon[1]))
            *colon = 0;
        name_ref key_ref = {node, 0};
        const name_ref *hit = bsearch(&key_ref, names, (size_t)nnames, sizeof *names, cmp_name);
        if (!hit) {
            *missed = 1;
            continue;
        }
        if (add_dep(op, hit->index))
            return -1;
    }
    return named;
}

/* Kineto (no input names): the operation before it on its own thread, and
 * across the worker's lanes the last operation of the other kind (transfer
 * for a computation, computation for a transfer) that ended before it
 * started (looking back at most 4096 operations). */
static int kineto_deps(const st_ev *evs, int i, sim_op *op)
{
    const st_ev *x = &evs[i];
    int same = 0, other = 0;
    for (int j = i - 1; j >= 0 && j >= i - 4096 && !(same && other); j--) {
        const st_ev *y = &evs[j];
        if (!same && y->pid == x->pid && y->tid == x->tid) {
            same = 1;
            if (add_dep(op, j))
                return -1;
        } else if (!other && y->kind != x->kind && y->ts + y->dur <= x->ts) {
            other = 1;
            if (add_dep(op, j))
                return -1;
        }
    }
    return 0;
}

/* evs[0..n): the step's operations, then nsh server-side transfers. */
static int build_step(st_ctx *c, const st_ev *evs, int n, const st_ev *sh, int nsh, int s,
                      sim_step *st)
{
    st->ops = calloc((size_t)n, sizeof *st->ops);
    name_ref *names = malloc((size_t)(n + nsh ? n + nsh : 1) * sizeof *names);
    if (!st->ops || !names) {
        free(names);
        sim_error_set(c->e, NULL, s, "", "out of memory");
        return -1;
    }
    st->nops = n;
    int nnames = 0;
    for (int i = 0; i < n; i++) {
        const st_ev *x = &evs[i];
        sim_op *op = &st->ops[i];
        const char *name = jstr(x->j, "name");
        char id[600];
        snprintf(id, sizeof id, "%.500s#%d", x->node ? x->node : name, i);
        op->id = strdup(id);
        op->name = strdup(name);
        op->res = x->res;
        op->duration = x->dur * 1e-6;
        op->bytes = x->kind ? x->bytes : -1;
        op->server = x->server;
        if (!op->id || !op->name) {
            free(names);
            sim_error_set(c->e, NULL, s, "", "out of memory");
            return -1;
        }
        if (x->kind && !(x->bytes > 0)) {
            free(names);
            sim_error_set(c->e, op->id, s, "bytes",
                          "transfer \"%.60s\" has no tensor size in its args (bytes, size, "
                          "tensor_description, Input Dims)", name);
            return -1;
        }
        if (x->node)
            names[nnames++] = (name_ref){x->node, i};
    }
    /* a server-side receive stands for the worker's uplink that started last
     * before it: the same transfer seen from the other end */
    for (int k = 0; k < nsh; k++) {
        int up = -1;
        for (int i = 0; i < n && evs[i].ts <= sh[k].ts; i++)
            if (evs[i].res == SIM_UPLINK)
                up = i;
        if (up >= 0 && sh[k].node)
            names[nnames++] = (name_ref){sh[k].node, up};
    }
    qsort(names, (size_t)nnames, sizeof *names, cmp_name);
    /* a repeated node name keeps its first execution */
    int last_up = -1;
    for (int i = 0; i < n; i++) {
        const st_ev *x = &evs[i];
        sim_op *op = &st->ops[i];
        int missed = 0, named = tf_deps(x, op, names, nnames, &missed);
        if (named < 0)
            goto oom;
        /* deps must point backwards in time: drop any to a later op */
        int k = 0;
        for (int d = 0; d < op->ndeps; d++)
            if (op->deps[d] < i)
                op->deps[k++] = op->deps[d];
        op->ndeps = k;
        if (!named && c->kineto && kineto_deps(evs, i, op))
            goto oom;
        (void)missed;
        if (x->res == SIM_PS && !op->ndeps && last_up >= 0 && add_dep(op, last_up))
            goto oom;
        if (x->res == SIM_UPLINK)
            last_up = i;
    }
    free(names);
    return 0;
oom:
    free(names);
    sim_error_set(c->e, NULL, s, "", "out of memory");
    return -1;
}

static int convert(st_ctx *c, json_t *root, simgraph_doc *out)
{
    json_t *objs = json_is_array(root) ? root : NULL;
    size_t nobj = objs ? json_array_size(objs) : 1;
    if (nobj < 1 || nobj > SIMGRAPH_MAX_STEPS) {
        sim_error_set(c->e, NULL, -1, "traceEvents", "1..%d traces", SIMGRAPH_MAX_STEPS);
        return -1;
    }
    st_ev *evs = NULL;
    size_t n = 0, cap = 0;
    int nsteps = 0, rc = -1;
    for (size_t k = 0; k < nobj; k++) {
        json_t *o = objs ? json_array_get(objs, k) : root;
        json_t *events = json_is_object(o) ? json_object_get(o, "traceEvents") : NULL;
        if (!json_is_array(events)) {
            sim_error_set(c->e, NULL, (int)k, "traceEvents",
                          "a trace is an object with a \"traceEvents\" array");
            goto out;
        }
        c->nprocs = 0;
        read_procs(c, events);
        int ns;
        if (collect(c, events, nsteps, &evs, &n, &cap, &ns))
            goto out;
        nsteps += ns;
        if (nsteps > SIMGRAPH_MAX_STEPS || n > SIMGRAPH_MAX_OPS) {
            sim_error_set(c->e, NULL, -1, "traceEvents", "more than %d steps or %d operations",
                          SIMGRAPH_MAX_STEPS, SIMGRAPH_MAX_OPS);
            goto out;
        }
    }
    if (n)
        qsort(evs, n, sizeof *evs, cmp_ev);
    if (c->kineto && !c->has_gpu)
        n = outermost(evs, n);
    sim_graph *g = &out->graph;
    g->steps = calloc((size_t)nsteps, sizeof *g->steps);
    if (!g->steps) {
        sim_error_set(c->e, NULL, -1, "", "out of memory");
        goto out;
    }
    g->nsteps = nsteps;
    g->servers = 1;
    size_t a = 0;
    for (int s = 0; s < nsteps; s++) {
        size_t b = a;
        while (b < n && evs[b].step == s)
            b++;
        if (b == a) {
            sim_error_set(c->e, NULL, s, "traceEvents", "step %d has no operation", s);
            goto out;
        }
        /* operations first, the server-side transfers after them (stable) */
        st_ev *tmp = malloc((b - a) * sizeof *tmp);
        if (!tmp) {
            sim_error_set(c->e, NULL, s, "", "out of memory");
            goto out;
        }
        size_t k = a, nt = 0;
        for (size_t i = a; i < b; i++) {
            if (evs[i].kind != 2)
                evs[k++] = evs[i];
            else
                tmp[nt++] = evs[i];
        }
        memcpy(evs + k, tmp, nt * sizeof *tmp);
        free(tmp);
        if (k == a) {
            sim_error_set(c->e, NULL, s, "traceEvents", "step %d has no operation", s);
            goto out;
        }
        if (build_step(c, evs + a, (int)(k - a), evs + k, (int)(b - k), s, &g->steps[s]))
            goto out;
        for (size_t i = a; i < b; i++)
            if (evs[i].server + 1 > g->servers)
                g->servers = evs[i].server + 1;
        a = b;
    }
    rc = sim_graph_check(g, c->e);
out:
    free(evs);
    return rc;
}

int simgraph_read_trace(const char *buf, size_t len, simgraph_doc *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    if (simgraph_check_depth(buf, len, ST_MAX_DEPTH)) {
        sim_error_set(e, NULL, -1, "body", "JSON nested deeper than %d levels", ST_MAX_DEPTH);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    if (!root) {
        sim_error_set(e, NULL, -1, "", "invalid JSON at line %d, column %d (byte %d): %s", je.line,
                      je.column, je.position, je.text);
        sim_error_at(e, je.position);
        return -1;
    }
    st_ctx *c = calloc(1, sizeof *c);
    int rc = -1;
    if (!c) {
        sim_error_set(e, NULL, -1, "", "out of memory");
    } else {
        c->e = e;
        rc = convert(c, root, out);
        out->source = c->kineto ? "kineto" : "tensorflow";
    }
    free(c);
    json_decref(root);
    if (rc)
        simgraph_doc_free(out);
    return rc;
}
