/*
 * iteration_request.h — the request documents of the per-iteration analyses
 * (analysis/iteration.h, analysis/iteration_predict.h) as the HTTP API takes
 * them, their checks, their size caps, and the views of their answers:
 *
 *   one trace (POST .../profiles/{profile}/iteration, .../breakdown):
 *     {"overheads": id | "name"?, "kernel_times": {...}?,
 *      "profiler_overhead_us": {"cpu","gpu"}?, "keep_outliers"?, "top"?}
 *   the iteration model (POST .../iteration-model):
 *     {"profiles": [{"profile", "value", "measured_step"?}, ...] (2 to 32,
 *      the first the trace to predict; measured_step: the run's step without
 *      the profiler in seconds, calibrating the profiler's cost,
 *      analysis/iteration_calibrate.h; not with "overheads"), "at": value,
 *      "method": "operators"|"kernel_names"?, "overheads"?,
 *      "profiler_overhead_us"?, "keep_outliers"?, "top"?}
 *   an overhead set (POST /v1/overhead-sets):
 *     {"name", "profiles": [ids] (1 to 64) | "set": {...},
 *      "profiler_overhead_us"?, "keep_outliers"?}
 *
 * Size caps (docs/operations.md, "Limits and hardening"): the traces of one
 * analysis are read whole into memory, one stored upload at a time (its
 * bytes) and then every trace's events of interest together. An analysis
 * whose stored trace passes the bytes cap, or whose traces together pass the
 * events cap, is answered 413 naming the cap, before anything is analysed.
 * The memory at the caps is bench/bench_iteration.c's "iteration_cap".
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_REQUEST_H
#define PERFCAST_ANALYSIS_ITERATION_REQUEST_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/iteration.h"
#include "analysis/problem.h"

#define IT_MAX_TOP 1000
#define IT_SET_MAX_TRACES 64
#define IT_MODEL_MAX_TRACES 32
/* events of interest of the traces of one analysis together
 * (PERFCAST_MAX_ITERATION_EVENTS) */
#define IT_DEFAULT_MAX_EVENTS 1000000LL
/* stored bytes of one trace an analysis reads (PERFCAST_MAX_ITERATION_BYTES) */
#define IT_DEFAULT_MAX_BYTES (256LL << 20)

typedef struct iteration_caps {
    long long events; /* <= 0: IT_DEFAULT_MAX_EVENTS */
    long long bytes;  /* <= 0: IT_DEFAULT_MAX_BYTES */
} iteration_caps;

/* The caps with their defaults filled in. */
iteration_caps iteration_caps_effective(iteration_caps c);
/* A stored trace of len bytes against the bytes cap: 0, or -1 with p (413
 * naming field and PERFCAST_MAX_ITERATION_BYTES). */
int iteration_caps_bytes(const iteration_caps *c, int64_t profile, size_t len, const char *field,
                         an_problem *p);
/* The events a trace read after `used` events of the same analysis may
 * hold (xg_trace.max_events); at least 1. */
size_t iteration_caps_room(const iteration_caps *c, long long used);
/* Whether a trace that failed to load stopped at its room (t->max_events):
 * then 1 with p (413 naming field and PERFCAST_MAX_ITERATION_EVENTS). */
int iteration_caps_events_hit(const iteration_caps *c, const xg_trace *t, int64_t profile,
                              const char *field, an_problem *p);

/* "profiler_overhead_us" and "keep_outliers" of a request body (NULL: the
 * defaults). 0, or -1 with p. */
int iteration_request_prof(const json_t *doc, xg_ov_options *o, an_problem *p);
/* "top": *top 0 when absent. 0, or -1 with p. */
int iteration_request_top(const json_t *doc, int *top, an_problem *p);
/* The options of one trace's analysis (profiler overheads, top, what-if
 * table "kernel_times" into *kt, free()d by the caller, pointing into doc).
 * 0, or -1 with p. */
int iteration_request_trace(const json_t *doc, iteration_opts *o, xg_kt_entry **kt,
                            an_problem *p);
/* The iteration model's "profiles" (its length into *n), "at", "method",
 * "mixed_devices" (a boolean: traces of different devices accepted), "top"
 * and profiler overheads. 0, or -1 with p. */
int iteration_request_model(const json_t *doc, iteration_opts *o, int *method, double *at,
                            size_t *n, an_problem *p);
/* Entry i of the iteration model's "profiles": its profile, value and
 * measured step (NAN when absent; measured may be NULL). 0, or -1 with p
 * (400 naming "profiles[i]", or "profiles[i].measured_step" when that is
 * not a number > 0 in seconds or comes with "overheads"). */
int iteration_request_model_entry(const json_t *doc, size_t i, int64_t *profile, double *value,
                                  double *measured, an_problem *p);
/* An overhead set's request: its "name" and which of "profiles" or "set"
 * it gives, and the profiler overheads. 0, or -1 with p. */
int iteration_request_set(const json_t *doc, const char **name, xg_ov_options *prof,
                          an_problem *p);
/* The ids of "profiles" of an overhead set: their number, and id i. 0, or
 * -1 with p. */
int iteration_request_set_ids(const json_t *ids, size_t *n, an_problem *p);
int iteration_request_set_id(const json_t *ids, size_t i, int64_t *id, an_problem *p);
/* A set given as it is ("set"): its document as stored, and its traces.
 * NULL with p (400 "set"). */
json_t *iteration_request_given_set(const json_t *given, int *ntraces, an_problem *p);

/* A stored upload that is not a Kineto trace: 422 naming field. */
int iteration_request_not_kineto(int64_t profile, const char *format, const char *field,
                                 an_problem *p);
/* The problem of a failed iteration_analyse (500 out of memory, else 422). */
void iteration_request_analyse_problem(const xg_error *e, an_problem *p);
/* The problem of a failed iteration_predict_at (bad: the trace at fault or -1). */
void iteration_request_predict_problem(const xg_error *e, int bad, an_problem *p);
/* The breakdown answer ({"profile","rank","steps":[{"index","label","breakdown",
 * "efficiency"}],"breakdown","efficiency","warnings"}) of an analysis document
 * (taken): the trace's warnings, without the prediction's (outliers_dropped,
 * no_interval, steps_vary). */
json_t *iteration_breakdown_view(json_t *doc);

#endif
