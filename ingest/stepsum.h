/*
 * stepsum.h — the part the trace readers share: callpaths interned by
 * (name, category), steps, and the per-(step or gap, callpath) sums of time,
 * visits and bytes, built into a normalized profile at the end.
 *
 * Readers feed executions one at a time with their key time (a host event's
 * start, a device event's launch time); memory grows with the number of
 * distinct callpaths and (step, callpath) pairs, never with the number of
 * events. Two modes:
 *
 *   open (a streaming reader's first pass): steps may still arrive. An event
 *   inside a step already known is summed at once; any other is held
 *   (bounded by max_pending) until the end, when every step is known. When
 *   the holding space runs out, or a step arrives out of time order, the
 *   sums stop and ingest_sum_second_pass() tells the reader to read the
 *   input again, now with every step known.
 *
 *   final (after ingest_sum_steps_done, or in a second pass): every event is
 *   placed at once, in a step or in the gap before/after one.
 *
 * Per-callpath totals over the whole trace are kept in both modes, so a
 * trace without steps (one step: all of it) never needs a second pass.
 */
#ifndef PERFCAST_INGEST_STEPSUM_H
#define PERFCAST_INGEST_STEPSUM_H

#include <stddef.h>

#include "ingest/trace.h"

#define INGEST_MAX_NAME 65536 /* bytes in one callpath name */

typedef struct ingest_sum ingest_sum;

/* Limits from o (0 = default). NULL with err on failure. */
ingest_sum *ingest_sum_new(const ingest_trace_options *o, ingest_error *err);
void ingest_sum_free(ingest_sum *s);

/* The id of callpath (name[0..len), category); -1 with err when the name is
 * empty, too long, holds a NUL, or there are too many callpaths. */
int ingest_sum_callpath(ingest_sum *s, const char *name, size_t len, int category,
                        ingest_error *err);

/* A step [start, end) in trace units, labelled for messages and the
 * summary. Ignored in a second pass. -1 with err when end <= start, when it
 * overlaps the step before it, or there are too many steps. */
int ingest_sum_step(ingest_sum *s, double start, double end, const char *label, size_t len,
                    ingest_error *err);

/* A named range of the trace (an annotation, an NVTX range, a marker): when
 * its name matches the validation patterns (phase.h; o->validation), steps
 * whose midpoint it contains are validation steps. Ignored in a second pass
 * and when the upload sets every step's phase. -1 with err beyond max_steps
 * such ranges. */
int ingest_sum_range(ingest_sum *s, double start, double end, const char *name, size_t len,
                     ingest_error *err);

/* Sorts and checks the steps and enters final mode. -1 with err when two
 * steps overlap. */
int ingest_sum_steps_done(ingest_sum *s, ingest_error *err);

/* One execution of callpath cp: key time t, duration dur (trace units),
 * bytes (< 0: the event has none). -1 with err when the sums would exceed
 * max_cells or overflow. */
int ingest_sum_add(ingest_sum *s, double t, int cp, double dur, double bytes,
                   ingest_error *err);

/* 1 when the first pass could not place every event (see above). */
int ingest_sum_second_pass(const ingest_sum *s);
/* Starts the second pass: forgets the sums, keeps callpaths and steps,
 * enters final mode. 0 or -1 with err. */
int ingest_sum_restart(ingest_sum *s, ingest_error *err);

int ingest_sum_nsteps(const ingest_sum *s);

/* Builds out: rank, time in seconds (sums in trace units * scale). Fills
 * info's steps, nsteps and events (the caller fills the rest). 0 or -1 with
 * err and out zeroed. */
int ingest_sum_finish(ingest_sum *s, int rank, double scale, profile *out,
                      ingest_trace_info *info, ingest_error *err);

/* Category of a device kernel by its name: PROFILE_COMM for NCCL and
 * collective kernels, PROFILE_COMP otherwise. */
int ingest_kernel_category(const char *name, size_t len);

/* Makes a message safe for JSON documents and log lines: bytes outside
 * well-formed UTF-8 (a name cut short, say) and control characters become
 * '?'. */
void ingest_clean_message(char *msg);

/* 1 when needle[0..nlen) occurs in hay[0..hlen), ASCII case ignored. */
int ingest_contains_nocase(const char *hay, size_t hlen, const char *needle, size_t nlen);

#endif
