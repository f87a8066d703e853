/*
 * xg_trace.h — the events of one rank's trace as execgraph/ keeps them: a
 * compact array (about 64 bytes an event, whatever the JSON spent on it)
 * and a table of interned names, filled one event at a time by a reader
 * (ingest/kineto_events.h) or by hand in tests. Pure: no I/O, no globals.
 *
 * Memory grows with the events of interest (operators, runtime calls,
 * device work, steps), not with the JSON, and is bounded by max_events: a
 * trace with more is refused with a message naming the limit. Names are
 * stored once each.
 */
#ifndef PERFCAST_XG_TRACE_H
#define PERFCAST_XG_TRACE_H

#include <stddef.h>

/* Events of interest held at most by default: about 64 MB of events (and as
 * much again for the graph), a trace of roughly 300 MB of JSON. */
#define XG_MAX_EVENTS 1000000

typedef enum xg_kind {
    XG_OP = 1,      /* a CPU operator (cpu_op) */
    XG_RUNTIME,     /* a CUDA runtime/driver call */
    XG_KERNEL,      /* device: a kernel */
    XG_MEMCPY,      /* device: a memcpy */
    XG_MEMSET,      /* device: a memset */
    XG_STEP,        /* ProfilerStep#N */
    XG_DEVSYNC,     /* device: a synchronisation (cuda_sync); in the
                       breakdown only, as HTA counts it */
} xg_kind;

/* An error of execgraph/: a message, and when it is about one event, the
 * event's index in traceEvents and the field at fault. */
typedef struct xg_error {
    char msg[256];
    long long event;  /* -1 when not about one event */
    char field[32];   /* "dur", "args.correlation", ... or "" */
} xg_error;

typedef struct xg_event {
    double ts, dur;    /* microseconds */
    double bytes;      /* -1 when not given */
    long long corr;    /* -1 when not given */
    long long index;   /* position in traceEvents */
    long long tid;     /* host thread, device: tid as given */
    long long stream;  /* device: args.stream, -1 when not given */
    int name;          /* id in the name table */
    int kind;          /* xg_kind */
} xg_event;

/* What the efficiency figures need of an event, kept beside the events for
 * the few that carry it (xg_efficiency.h): an operator's FLOP count
 * (args.flops), the bytes estimated from its input shapes and the precision
 * of its inputs; a kernel's own FLOP count. */
typedef struct xg_info {
    int ev;            /* index in xg_trace.ev */
    int prec;          /* XG_FP64.. of xg_device.h, -1 unknown */
    double flops;      /* -1 when not given */
    double bytes;      /* -1 when not given */
    int in_first, nin; /* an operator's inputs: xg_trace.inputs[in_first..+nin) */
} xg_info;

/* One input of an operator as its recorded shapes give it: rank -1 when it
 * is not one tensor (a list of them), its dimensions
 * xg_trace.dims[dim_first..+rank), bytes per element (0 unknown). */
typedef struct xg_input {
    int rank, elem;
    size_t dim_first;
} xg_input;

/* Dimensions kept at most per trace (beyond: operators lose their shapes,
 * counted in xg_trace.shapes_dropped). */
#define XG_MAX_DIMS (4u << 20)

/* The device a trace ran on, as the trace names it (Kineto's
 * deviceProperties): unknown when name is "" and cc_major < 0. */
typedef struct xg_devid {
    char name[64];
    int cc_major, cc_minor; /* compute capability, -1 when not given */
    double memory;          /* bytes, -1 when not given */
} xg_devid;

typedef struct xg_trace {
    xg_event *ev;
    size_t n, cap;
    xg_info *info;         /* by ev ascending */
    size_t ninfo, info_cap;
    size_t max_events;     /* 0: XG_MAX_EVENTS */
    /* names: ids 0..nnames-1, open-addressing hash of ids */
    char **names;
    size_t *name_len;
    int nnames, names_cap;
    int *slots;
    size_t nslots;
    int rank, world_size;  /* from the trace; -1 / 0 when it does not say */
    xg_devid device;       /* the first device the trace lists */
    /* operators' input shapes (xg_info.in_first) */
    xg_input *inputs;
    size_t ninputs, inputs_cap;
    double *dims;
    size_t ndims, dims_cap;
    long long shapes_dropped;
} xg_trace;

void xg_trace_init(xg_trace *t);
void xg_trace_free(xg_trace *t);

/* The id of a name, interning it. -1 with err on allocation failure. */
int xg_trace_name(xg_trace *t, const char *s, size_t n, xg_error *err);

/* Appends an event (e->name set by the caller via xg_trace_name).
 * Checks what the graph relies on: finite ts, finite dur >= 0.
 * 0, or -1 with err naming the event and the field. */
int xg_trace_add(xg_trace *t, const xg_event *e, xg_error *err);

const char *xg_name(const xg_trace *t, int id);

/* Adds what the efficiency figures need of the event added last (i->ev is
 * set here). 0, or -1 with err (out of memory). */
int xg_trace_add_info(xg_trace *t, const xg_info *i, xg_error *err);
/* Keeps the shapes of an operator's n inputs (rank[i] dimensions each from
 * dims + first[i], elem[i] bytes per element) and sets i->in_first / nin
 * for the info about to be added. 0, or -1 with err (out of memory). */
int xg_trace_add_inputs(xg_trace *t, xg_info *i, int n, const int *rank, const int *first,
                        const int *elem, const double *dims, xg_error *err);
/* The info of event ev, NULL when it carries none. */
const xg_info *xg_trace_info(const xg_trace *t, int ev);

/* Room for n events at once (a hint from the input's size). 0 or -1. */
int xg_trace_reserve(xg_trace *t, size_t n);

/* The id of a name already interned, -1 when the trace never named it. */
int xg_trace_find(const xg_trace *t, const char *s, size_t n);

void xg_error_set(xg_error *err, long long event, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
