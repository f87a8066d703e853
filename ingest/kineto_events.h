/*
 * kineto_events.h — a Kineto / Chrome trace read as a stream of events,
 * one call per event, for analyses that need the events themselves rather
 * than the per-step sums of kineto.c (the execution graph of execgraph/).
 *
 * Same input as ingest_kineto() (trace.h): {"traceEvents": [...]} or a bare
 * array, plain or gzip, from memory or a file descriptor, streamed through
 * stream.c and trace_scan.c: memory does not depend on the size
 * of the trace, only one event is held at a time. What is delivered:
 *
 *   ph "X" with cat cpu_op / Operator            KEV_OP
 *   ph "X" with cat cuda_runtime / cuda_driver /
 *     Runtime                                    KEV_RUNTIME
 *   ph "X" with cat kernel / Kernel              KEV_KERNEL
 *   ph "X" with cat gpu_memcpy / Memcpy          KEV_MEMCPY
 *   ph "X" with cat gpu_memset / Memset          KEV_MEMSET
 *   ph "X" with cat cuda_sync                    KEV_SYNC
 *   "ProfilerStep#N" (ph "X", or a "B"/"E"
 *     pair, any host category)                   KEV_STEP
 * Everything else (user annotations, flows, metadata, python functions...)
 * is skipped. Times stay in the trace's microseconds.
 *
 * Faults of one event (a member of the wrong type, missing "ts"/"dur",
 * negative or non-finite "dur") are errors naming the event's index,
 * "traceEvents[12] (\"aten::mm\")", and the byte offset; syntax errors the
 * byte offset after gunzip.
 */
#ifndef PERFCAST_INGEST_KINETO_EVENTS_H
#define PERFCAST_INGEST_KINETO_EVENTS_H

#include <stddef.h>

#include "ingest/trace.h"

typedef enum kev_kind {
    KEV_OP = 1,
    KEV_RUNTIME,
    KEV_KERNEL,
    KEV_MEMCPY,
    KEV_MEMSET,
    KEV_STEP,
    KEV_SYNC,          /* cuda_sync: the device side of a synchronisation */
} kev_kind;

typedef struct kev_event {
    int kind;          /* kev_kind */
    long long index;   /* position in traceEvents */
    double ts, dur;    /* microseconds */
    long long corr;    /* args.correlation, -1 when absent */
    long long ext;     /* args."External id", -1 when absent */
    long long stream;  /* args.stream, -1 when absent */
    long long tid;     /* "tid" (a string tid is hashed), 0 when absent */
    long long pid;
    double bytes;      /* args.bytes, -1 when absent */
    double flops;      /* args.flops (recorded with_flops=True), -1 when absent */
    double in_bytes;   /* KEV_OP: bytes estimated from args."Input Dims" and
                          "Input type" (inputs read, an output as large as the
                          largest input written), -1 without shapes */
    /* KEV_OP: per input of args."Input Dims" (ninputs, at most 32): its rank
     * (-1: not one tensor, e.g. a list of them), the index of its first
     * dimension in dims, its element size from "Input type" (0 unknown);
     * valid during the call only */
    int ninputs;
    const int *in_rank, *in_dims, *in_elem;
    const double *dims;
    int prec;          /* KEV_OP: precision of the first floating input, as
                          execgraph/xg_device.h numbers them (0 fp64, 1 fp32,
                          3 fp16/bf16); -1 unknown */
    const char *name;  /* name_len bytes, valid during the call only; not
                          NUL-terminated, may hold NULs */
    size_t name_len;
} kev_event;

/* Called once per delivered event; a non-zero return stops the read and is
 * reported as an error with the message the callback left in err. */
typedef int (*kev_callback)(void *ctx, const kev_event *e, ingest_error *err);

/* The first device of the trace's "deviceProperties" (PyTorch writes every
 * visible GPU there): its name, compute capability and memory. */
typedef struct kev_device {
    char name[64];          /* "" when not given */
    int cc_major, cc_minor; /* -1 when not given */
    double memory;          /* totalGlobalMem, bytes; -1 when not given */
} kev_device;

typedef struct kev_info {
    int ndevices;            /* objects in deviceProperties (0: none) */
    kev_device device;       /* the first of them */
    int has_rank;
    int rank, world_size;
    long long events;        /* traceEvents read */
    unsigned long long bytes; /* JSON bytes after gunzip */
    int gzip;
} kev_info;

/* Reads the whole input, calling cb for each event in file order.
 * Options: no_threads and max_bytes of ingest_trace_options (NULL: defaults).
 * Returns 0, or -1 with err filled. */
int ingest_kineto_events(const ingest_input *in, const ingest_trace_options *o, kev_callback cb,
                         void *ctx, kev_info *info, ingest_error *err);

#endif
