/*
 * xg_trace.c — the compact event array and name table of xg_trace.h.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_trace.h"

void xg_error_set(xg_error *err, long long event, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->event = event;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
}

void xg_trace_init(xg_trace *t)
{
    memset(t, 0, sizeof *t);
    t->rank = -1;
    t->device.cc_major = t->device.cc_minor = -1;
    t->device.memory = -1;
}

void xg_trace_free(xg_trace *t)
{
    for (int i = 0; i < t->nnames; i++)
        free(t->names[i]);
    free(t->names);
    free(t->name_len);
    free(t->slots);
    free(t->ev);
    free(t->info);
    free(t->inputs);
    free(t->dims);
    xg_trace_init(t);
}

/* Eight bytes at a time: kernel names run to hundreds of bytes. */
static unsigned long long name_hash(const char *s, size_t n)
{
    unsigned long long h = 1469598103934665603ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        unsigned long long w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h ^ (h >> 32);
}

static int rehash(xg_trace *t, size_t nslots)
{
    int *slots = malloc(nslots * sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < nslots; i++)
        slots[i] = -1;
    for (int id = 0; id < t->nnames; id++) {
        size_t i = name_hash(t->names[id], t->name_len[id]) & (nslots - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (nslots - 1);
        slots[i] = id;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = nslots;
    return 0;
}

int xg_trace_name(xg_trace *t, const char *s, size_t n, xg_error *err)
{
    if (((size_t)t->nnames + 1) * 2 > t->nslots &&
        rehash(t, t->nslots ? t->nslots * 2 : 1024) < 0)
        goto oom;
    size_t i = name_hash(s, n) & (t->nslots - 1);
    for (; t->slots[i] >= 0; i = (i + 1) & (t->nslots - 1)) {
        int id = t->slots[i];
        if (t->name_len[id] == n && !memcmp(t->names[id], s, n))
            return id;
    }
    if (t->nnames == t->names_cap) {
        int cap = t->names_cap ? t->names_cap * 2 : 256;
        char **names = realloc(t->names, (size_t)cap * sizeof *names);
        if (!names)
            goto oom;
        t->names = names;
        size_t *len = realloc(t->name_len, (size_t)cap * sizeof *len);
        if (!len)
            goto oom;
        t->name_len = len;
        t->names_cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        goto oom;
    memcpy(copy, s, n);
    copy[n] = '\0';
    t->names[t->nnames] = copy;
    t->name_len[t->nnames] = n;
    t->slots[i] = t->nnames;
    return t->nnames++;
oom:
    xg_error_set(err, -1, NULL, "out of memory");
    return -1;
}

int xg_trace_find(const xg_trace *t, const char *s, size_t n)
{
    if (!t->nslots)
        return -1;
    for (size_t i = name_hash(s, n) & (t->nslots - 1); t->slots[i] >= 0;
         i = (i + 1) & (t->nslots - 1)) {
        int id = t->slots[i];
        if (t->name_len[id] == n && !memcmp(t->names[id], s, n))
            return id;
    }
    return -1;
}

const char *xg_name(const xg_trace *t, int id)
{
    return id >= 0 && id < t->nnames ? t->names[id] : "";
}

int xg_trace_reserve(xg_trace *t, size_t n)
{
    size_t max = t->max_events ? t->max_events : XG_MAX_EVENTS;
    if (n > max)
        n = max;
    if (n <= t->cap)
        return 0;
    xg_event *ev = realloc(t->ev, n * sizeof *ev);
    if (!ev)
        return -1;
    t->ev = ev;
    t->cap = n;
    return 0;
}

int xg_trace_add(xg_trace *t, const xg_event *e, xg_error *err)
{
    if (!isfinite(e->ts)) {
        xg_error_set(err, e->index, "ts", "traceEvents[%lld]: \"ts\" must be a finite number",
                     e->index);
        return -1;
    }
    if (!isfinite(e->dur) || e->dur < 0) {
        xg_error_set(err, e->index, "dur",
                     "traceEvents[%lld] (\"%.40s\"): \"dur\" must be a finite number >= 0",
                     e->index, xg_name(t, e->name));
        return -1;
    }
    size_t max = t->max_events ? t->max_events : XG_MAX_EVENTS;
    if (t->n == max) {
        xg_error_set(err, e->index, NULL,
                     "more than %zu events of interest: beyond the limit of the analysis", max);
        return -1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 4096;
        xg_event *ev = realloc(t->ev, cap * sizeof *ev);
        if (!ev) {
            xg_error_set(err, -1, NULL, "out of memory");
            return -1;
        }
        t->ev = ev;
        t->cap = cap;
    }
    t->ev[t->n++] = *e;
    return 0;
}

int xg_trace_add_info(xg_trace *t, const xg_info *i, xg_error *err)
{
    if (t->n == 0) {
        xg_error_set(err, -1, NULL, "no event to describe");
        return -1;
    }
    if (t->ninfo == t->info_cap) {
        size_t cap = t->info_cap ? t->info_cap * 2 : 256;
        xg_info *p = realloc(t->info, cap * sizeof *p);
        if (!p) {
            xg_error_set(err, -1, NULL, "out of memory");
            return -1;
        }
        t->info = p;
        t->info_cap = cap;
    }
    t->info[t->ninfo] = *i;
    t->info[t->ninfo++].ev = (int)t->n - 1;
    return 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

int xg_trace_add_inputs(xg_trace *t, xg_info *i, int n, const int *rank, const int *first,
                        const int *elem, const double *dims, xg_error *err)
{
    i->in_first = 0;
    i->nin = 0;
    if (n <= 0)
        return 0;
    size_t nd = 0;
    for (int k = 0; k < n; k++)
        nd += rank[k] > 0 ? (size_t)rank[k] : 0;
    if (t->ndims + nd > XG_MAX_DIMS || t->ninputs + (size_t)n > XG_MAX_DIMS) {
        t->shapes_dropped++;
        return 0;
    }
    if (grow((void **)&t->inputs, &t->inputs_cap, t->ninputs + (size_t)n, sizeof *t->inputs) ||
        grow((void **)&t->dims, &t->dims_cap, t->ndims + nd, sizeof *t->dims)) {
        xg_error_set(err, -1, NULL, "out of memory");
        return -1;
    }
    i->in_first = (int)t->ninputs;
    i->nin = n;
    for (int k = 0; k < n; k++) {
        xg_input *in = &t->inputs[t->ninputs++];
        in->rank = rank[k];
        in->elem = elem[k];
        in->dim_first = t->ndims;
        for (int d = 0; d < rank[k]; d++)
            t->dims[t->ndims++] = dims[first[k] + d];
    }
    return 0;
}

const xg_info *xg_trace_info(const xg_trace *t, int ev)
{
    size_t lo = 0, hi = t->ninfo;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->info[mid].ev < ev)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->ninfo && t->info[lo].ev == ev ? &t->info[lo] : NULL;
}
