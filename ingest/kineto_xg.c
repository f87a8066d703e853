/*
 * kineto_xg.c — a Kineto trace read into an execution-graph trace
 * (execgraph/xg_trace.h), the input of the per-iteration analysis
 * (analysis/iteration.h): the events of ingest/kineto_events.h become
 * xg_event and xg_info records (see kineto_xg.h).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ingest/kineto_events.h"
#include "ingest/kineto_xg.h"

static int kind_of(int k)
{
    switch (k) {
    case KEV_OP: return XG_OP;
    case KEV_RUNTIME: return XG_RUNTIME;
    case KEV_KERNEL: return XG_KERNEL;
    case KEV_MEMCPY: return XG_MEMCPY;
    case KEV_MEMSET: return XG_MEMSET;
    case KEV_STEP: return XG_STEP;
    case KEV_SYNC: return XG_DEVSYNC;
    }
    return 0;
}

typedef struct load_ctx {
    xg_trace *t;
    xg_error *xerr;
} load_ctx;

static int on_event(void *c, const kev_event *e, ingest_error *ierr)
{
    load_ctx *lc = c;
    int name = xg_trace_name(lc->t, e->name, e->name_len, lc->xerr);
    if (name < 0)
        goto fail;
    xg_event x = {.ts = e->ts, .dur = e->dur, .bytes = e->bytes, .corr = e->corr,
                  .index = e->index, .tid = e->tid, .stream = e->stream, .name = name,
                  .kind = kind_of(e->kind)};
    if (x.corr < 0 && (x.kind == XG_RUNTIME || x.kind == XG_KERNEL || x.kind == XG_MEMCPY ||
                       x.kind == XG_MEMSET))
        x.corr = -1;
    if (xg_trace_add(lc->t, &x, lc->xerr) < 0)
        goto fail;
    if ((x.kind == XG_OP && (e->flops >= 0 || e->in_bytes >= 0)) ||
        (x.kind == XG_KERNEL && e->flops >= 0)) {
        xg_info inf = {.prec = e->prec, .flops = e->flops,
                       .bytes = x.kind == XG_OP ? e->in_bytes : -1};
        if ((x.kind == XG_OP &&
             xg_trace_add_inputs(lc->t, &inf, e->ninputs, e->in_rank, e->in_dims, e->in_elem,
                                 e->dims, lc->xerr) < 0) ||
            xg_trace_add_info(lc->t, &inf, lc->xerr) < 0)
            goto fail;
    }
    return 0;
fail:
    snprintf(ierr->msg, sizeof ierr->msg, "%s", lc->xerr->msg);
    return 1;
}

int iteration_load(const ingest_input *in, int no_threads, xg_trace *t, xg_error *err)
{
    memset(err, 0, sizeof *err);
    err->event = -1;
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    o.no_threads = no_threads;
    ingest_error ierr;
    kev_info info;
    load_ctx lc = {.t = t, .xerr = err};
    /* about one event of interest per 400 bytes of JSON in PyTorch's traces */
    struct stat sb;
    size_t hint = in->data ? in->len : 0;
    if (!in->data && fstat(in->fd, &sb) == 0 && sb.st_size > 0)
        hint = (size_t)sb.st_size;
    if (hint >= 2 && ((const unsigned char *)(in->data ? in->data : "\0"))[0] == 0x1f)
        hint *= 8;
    xg_trace_reserve(t, hint / 400);
    if (ingest_kineto_events(in, &o, on_event, &lc, &info, &ierr) < 0) {
        long long ev = err->event;
        char field[sizeof err->field];
        memcpy(field, err->field, sizeof field);
        snprintf(err->msg, sizeof err->msg, "%s", ierr.msg);
        err->event = ev;
        memcpy(err->field, field, sizeof field);
        return -1;
    }
    t->rank = info.has_rank ? info.rank : -1;
    if (info.ndevices > 0) {
        memcpy(t->device.name, info.device.name, sizeof t->device.name);
        t->device.cc_major = info.device.cc_major;
        t->device.cc_minor = info.device.cc_minor;
        t->device.memory = info.device.memory;
    }
    t->world_size = info.world_size;
    return 0;
}
