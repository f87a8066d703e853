/*
 * xg_overheads.h — host-side overheads T1–T5 of paper 001 §III-C, measured
 * on execution graphs (xg_graph.h) and summarised into an overhead set that
 * the critical path (xg_critpath.h) looks up. Pure: no I/O.
 *
 * Per top-level op of a step, in microseconds on the trace (a gap that is
 * a wait for other ranks, xg_syncwait.h, gives no T1 sample):
 *   T1  the gap since the previous top-level op ended (the step's start for
 *       the first; overlapping ops of two threads give 0)       key: op
 *   T2  op start -> start of its first launch                   key: op
 *   T3  end of its last launch -> op end                         key: op
 *   T4  each launch's runtime call itself; for a call that waits
 *       for the device (SYNC), only the part after the awaited
 *       work ended                                    key: runtime call name
 *   T5  end of a launch -> start of the next launch of the op    key: op
 *       and, for an op without launches, the op's duration       key: op
 * A "launch" is a runtime call that launched device work or synchronised
 * with it. Each sample has the profiler's own overhead subtracted (clamped
 * at 0): the GPU figure (default 4 us) for T4 of calls that launched device
 * work (CUPTI records them), the CPU figure (default 2 us) for every other
 * sample.
 *
 * Summaries: samples of one (op, type) outside [Q1 − 1.5 IQR, Q3 + 1.5 IQR]
 * of that (op, type) are dropped (when it has 4 samples or more; quartiles
 * by linear interpolation), then mean, median, sample std and count are kept
 * per (op, type), plus a per-type entry (name NULL) over all kept samples of
 * the type: the fallback for ops the set has not seen. Values in seconds.
 */
#ifndef PERFCAST_XG_OVERHEADS_H
#define PERFCAST_XG_OVERHEADS_H

#include "execgraph/xg_graph.h"

enum { XG_T1 = 0, XG_T2, XG_T3, XG_T4, XG_T5, XG_NTYPES };

typedef struct xg_ov_options {
    double cpu_profiler_us; /* < 0: default 2 */
    double gpu_profiler_us; /* < 0: default 4 */
    int keep_outliers;      /* 1: no IQR filter (an exact replay of the
                               measured means; the paper drops them) */
} xg_ov_options;

void xg_ov_options_default(xg_ov_options *o);

typedef struct xg_ovstat {
    int type;          /* XG_T1.. */
    char *name;        /* op or runtime call; NULL: the type's fallback */
    double mean, median, std; /* seconds */
    long long count;   /* samples kept */
    long long dropped; /* outliers dropped */
    int fenced;        /* 1: measured here, with the IQR fences below (seconds of a
                          sample before the profiler's overhead is subtracted: no;
                          after it), -inf / inf when nothing was dropped for want
                          of 4 samples or with keep_outliers */
    double lo_fence, hi_fence;
} xg_ovstat;

typedef struct xg_overheads {
    xg_ovstat *s;      /* sorted by (type, name), fallbacks (NULL) first */
    size_t n;
    double cpu_profiler_us, gpu_profiler_us;
    int keep_outliers;
    int traces;        /* graphs the samples came from */
} xg_overheads;

/* Samples gathered from one or several graphs. */
typedef struct xg_ov_samples {
    xg_trace names;    /* name table only */
    struct xg_sample { int type, name; double v; } *v;
    size_t n, cap;
    xg_ov_options opt;
    int traces;
    int *map;          /* while collecting: trace name id -> id in names */
} xg_ov_samples;

void xg_ov_samples_init(xg_ov_samples *s, const xg_ov_options *o);
void xg_ov_samples_free(xg_ov_samples *s);

/* Adds the samples of every step of g. 0, or -1 with err. */
int xg_ov_collect(xg_ov_samples *s, const xg_graph *g, xg_error *err);

/* The host's measured time in each step of g (host[0..g->nsteps), seconds):
 * every T1–T5 sample of the step summed, the profiler's overhead of o
 * subtracted as in the samples, outliers included (no summary drops any).
 * 0, or -1 with err (out of memory). */
int xg_ov_host_steps(const xg_graph *g, const xg_ov_options *o, double *host, xg_error *err);

/* Outlier removal and statistics. 0, or -1 with err (no samples at all). */
int xg_ov_summarise(const xg_ov_samples *s, xg_overheads *out, xg_error *err);

/* The same, the samples' values freed once grouped (their memory is the
 * largest of the summary's; s keeps its names: xg_ov_samples_free it still,
 * and collect into it no more). */
int xg_ov_summarise_release(xg_ov_samples *s, xg_overheads *out, xg_error *err);

void xg_overheads_free(xg_overheads *ov);

/* Overheads pooled over sets[0..n) (each one trace's summary) with a robust
 * centre: per (type, name), the median over the sets that hold it of their
 * means (and of their medians, std and fences; the mean of the middle two
 * for an even number), counts and drops summed; a process whose host ran
 * unusually fast or slow moves it no further than one set among n. 0, or
 * -1 with err (no sets, out of memory). */
int xg_ov_pool(const xg_overheads *sets, int n, xg_overheads *out, xg_error *err);

/* A copy of ov with every mean, median and std times f (the host f times as
 * slow). 0, or -1 (out of memory). */
int xg_ov_scaled(const xg_overheads *ov, double f, xg_overheads *out);

/* Mean of (type, name), else the type's fallback, else 0 (seconds).
 * *found: 2 exact, 1 fallback, 0 none (may be NULL). */
double xg_ov_lookup(const xg_overheads *ov, int type, const char *name, int *found);

/* Every sample of step `step` of g (T1–T5, as xg_ov_collect takes them)
 * that ov's summary dropped as an outlier, outside its (type, name)'s
 * fences: their values summed per type into by_type[XG_NTYPES] (may be
 * NULL; seconds, the profiler's overhead subtracted as in the samples) and
 * in all returned. NAN (by_type all 0) when ov holds no fences (a set read
 * back, not measured here), kept its outliers, or memory ran out. */
double xg_ov_dropped(const xg_overheads *ov, const xg_graph *g, int step, double *by_type);

/* "T1".."T5"; the type of such a string, -1 when it is none. */
const char *xg_ov_type_name(int type);
int xg_ov_type_parse(const char *s);

/* Appends a stat (copying name; NULL for a fallback), for overhead sets
 * read back from JSON or the database; call xg_ov_sort() after the last.
 * 0 or -1 (out of memory). */
int xg_ov_add(xg_overheads *ov, const xg_ovstat *st);
void xg_ov_sort(xg_overheads *ov);

#endif
