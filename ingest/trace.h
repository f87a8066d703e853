/*
 * trace.h — readers of profiler traces: PyTorch profiler (Kineto) Chrome
 * trace JSON, plain or gzip (kineto.c), and Nsight Systems SQLite exports
 * (nsys.c). Each reads one rank's trace into the normalized profile of
 * profile.h (one rank, repetition 1, no point: the caller knows the point).
 *
 * What both readers do (design.md §3, §7):
 *   - steps: Kineto "ProfilerStep#N" annotations; Nsight Systems NVTX ranges
 *     whose name contains a step marker ("step", "epoch" unless told
 *     otherwise), indexed in time order. A trace without steps is one step.
 *     A step is phase "validation" when its name or a range around it (a
 *     record_function / user annotation, an NVTX range) matches the
 *     validation patterns (ingest/phase.h: "val,eval" unless told
 *     otherwise), else "train"; o->phase sets every step's phase instead.
 *   - every execution is summed into the step (or the gap between steps)
 *     that contains its key time: host-side events by their start, device
 *     events (kernels, memcpy, memset) by the start of the CUDA API call
 *     that launched them (correlation id), not by when the GPU ran them.
 *     A step covers [start, end); gap g holds what lies between step g-1
 *     and step g (gap 0 before the first step, gap S after the last).
 *   - categories: NCCL/collective kernels and MPI calls -> comm, other
 *     kernels -> comp, memcpy/memset -> mem (with "bytes"), host-side
 *     ranges (CUDA runtime/driver calls, CPU ops, user annotations, NVTX)
 *     -> host. A name seen both on the host and on the device keeps its name
 *     on the device; the host callpath becomes "NAME (host)".
 *   - metrics: "time" (seconds), "visits" (executions), "bytes" (mem only).
 *
 * Limits keep memory bounded whatever the input (see ingest_trace_options);
 * a trace beyond them is refused with a message naming the limit, never
 * truncated silently.
 */
#ifndef PERFCAST_INGEST_TRACE_H
#define PERFCAST_INGEST_TRACE_H

#include <stddef.h>

#include "ingest/profile.h"

/* Where the bytes come from: a buffer in memory (data != NULL), or a regular
 * file read from its first byte with pread (data == NULL, fd >= 0), so that
 * a large file is streamed instead of mapped. Either may be gzip. */
typedef struct ingest_input {
    const char *data;
    size_t len;
    int fd;
} ingest_input;

enum { INGEST_PHASE_AUTO = 0, INGEST_PHASE_TRAIN = 1, INGEST_PHASE_VALIDATION = 2 };

typedef struct ingest_trace_options {
    int rank;            /* >= 0: the caller's rank for this trace; it must agree
                            with distributedInfo.rank when the trace has one.
                            -1: from the trace, 0 when it does not say */
    const char *markers; /* nsys: comma-separated substrings that make an NVTX
                            range a step marker (case-insensitive); NULL or ""
                            for "step,epoch" */
    const char *validation; /* comma-separated name parts of validation steps
                            or of ranges around them (ingest/phase.h); NULL
                            or "" for "val,eval" */
    int phase;           /* INGEST_PHASE_AUTO (0): each step's phase from the
                            patterns; INGEST_PHASE_TRAIN or
                            INGEST_PHASE_VALIDATION: every step's */
    int no_threads;      /* 1: inflate gzip in the calling thread (fuzzing);
                            0: in a helper thread, overlapping the parser */
    /* limits; 0 takes the default in brackets */
    size_t max_bytes;    /* JSON bytes after gunzip [64 GiB] */
    int max_callpaths;   /* distinct names [100,000] */
    int max_steps;       /* steps [100,000] */
    size_t max_cells;    /* (step or gap, callpath) pairs [1,048,576] */
    size_t max_pending;  /* events held until their step is known [524,288];
                            beyond, the reader makes a second pass */
    long long max_events; /* events of the trace (Kineto traceEvents, nsys rows),
                             counted after decompression; 0: no limit. Beyond:
                             an error with err->limit = 1 */
    size_t max_inflight; /* device events held until their launch is seen
                            [65,536]; beyond, the oldest is placed by its own
                            start and counted in unmatched */
} ingest_trace_options;

/* One step as the trace names it. start/end in seconds on the trace's clock. */
typedef struct ingest_trace_step {
    double start, end;
    char label[64];      /* "ProfilerStep#12", the NVTX range's text (cut) */
} ingest_trace_step;

typedef struct ingest_trace_info {
    int rank;            /* the rank of the profile's rows */
    int world_size;      /* 0 when the trace does not say */
    int nsteps;          /* 0: the trace had no steps and is one step */
    int nvalidation;     /* of the steps, validation steps */
    ingest_trace_step *steps; /* nsteps, in time order */
    long long events;    /* events summed into the profile */
    long long unmatched; /* device events placed by their own start because
                            their launch was not found */
    int passes;          /* 1, or 2 when the trace's order needed a second read */
    int gzip;            /* the input was gzip */
    unsigned long long bytes; /* JSON bytes parsed (after gunzip; last pass) */
    char schema[64];     /* nsys: the export's schema version when it says */
} ingest_trace_info;

void ingest_trace_options_default(ingest_trace_options *o);
void ingest_trace_info_free(ingest_trace_info *info);

/* Kineto / Chrome trace JSON ({"traceEvents": [...]} or a bare array of
 * events), plain or gzip. Returns 0 and fills out and info (info may be
 * NULL), or -1 with err filled (syntax errors: byte offset in the JSON after
 * gunzip; faults of one event: its index, "traceEvents[1234]") and out
 * zeroed. */
int ingest_kineto(const ingest_input *in, const ingest_trace_options *o, profile *out,
                  ingest_trace_info *info, ingest_error *err);

/* Nsight Systems SQLite export, from a file path (opened read-only and
 * immutable) or from bytes in memory (an upload). Same contract. */
int ingest_nsys_path(const char *path, const ingest_trace_options *o, profile *out,
                     ingest_trace_info *info, ingest_error *err);
int ingest_nsys_memory(const void *data, size_t len, const ingest_trace_options *o,
                       profile *out, ingest_trace_info *info, ingest_error *err);

#endif
