/*
 * iteration_job.h — the per-iteration analyses over the store (the work of
 * POST .../profiles/{profile}/iteration, .../breakdown, .../iteration-model
 * and POST /v1/overhead-sets, answered in the request when small and by a
 * job worker otherwise): a tenant's stored Kineto uploads checked against
 * the size caps (analysis/iteration_request.h) and read into traces, an
 * overhead set read by id or name, then the analysis of analysis/iteration.h,
 * analysis/iteration_predict.h or the measurement of a set. The handlers
 * (api/iteration_http.c) and the queued runs' worker call the same functions;
 * they know the store and the analyses, not HTTP. `perfcast iteration` reads
 * files instead and calls the same analyses on what it read.
 */
#ifndef PERFCAST_PIPELINE_ITERATION_JOB_H
#define PERFCAST_PIPELINE_ITERATION_JOB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/iteration.h"
#include "analysis/iteration_request.h"
#include "analysis/problem.h"
#include "store/db.h"
#include "store/iteration_runs.h"

/* Why a step failed: a store error as the store gave it (from_store: the
 * caller answers it as it answers every store error, e.g. 503 with
 * Retry-After when the database is unavailable), else the problem p
 * (status, field, message). */
typedef struct it_job_error {
    int from_store;
    store_error store;
    an_problem p;
} it_job_error;

/* Whose traces an analysis reads and under which caps. */
typedef struct it_job_in {
    int64_t tenant;
    int64_t exp; /* the experiment of the profiles; 0: any of the tenant's */
    iteration_caps caps;
} it_job_in;

/* The stored size of profile id into *len, checking that it exists (404
 * naming field when field is given, else the store's error) and is a Kineto
 * trace (422) within the bytes cap (413). 0, or -1 with e. */
int it_job_trace_size(PGconn *c, const it_job_in *in, int64_t id, const char *field, size_t *len,
                      it_job_error *e);
/* A stored Kineto upload loaded into t, holding at most the events left of
 * the analysis's cap after *used (then counted in); *largest (may be NULL)
 * raised to its stored size, for store_release_sized: the connection that
 * read a large trace is closed rather than kept with libpq's buffers grown
 * to it. Errors name field (may be NULL). 0, or -1 with e (t then freed). */
int it_job_load(PGconn *c, const it_job_in *in, int64_t profile, xg_trace *t, long long *used,
                size_t *largest, const char *field, it_job_error *e);
/* "overheads" of a request (v: a set's id or name, or absent/null) into ov
 * and its name into name[cap], both then named in o as the analysis's set.
 * 0, 1 (none asked, o unchanged), or -1 with e. */
int it_job_overheads(PGconn *c, int64_t tenant, const json_t *v, xg_overheads *ov, char *name,
                     size_t cap, iteration_opts *o, it_job_error *e);

/* The GPU named by ?device= (NULL: none, *found 0): a built-in one or the
 * tenant's (404 naming "device"). 0, or -1 with e. */
int it_job_device(PGconn *c, int64_t tenant, const char *name, xg_device *out, int *found,
                  it_job_error *e);

/* The analysis of one stored profile with options o: its trace read over c,
 * c then given back to db (always), the analysis document with "profile",
 * or NULL with e. */
json_t *it_job_profile(store *db, PGconn *c, const it_job_in *in, int64_t profile,
                       const iteration_opts *o, it_job_error *e);
/* The iteration model of a request body (its n "profiles" entries already
 * counted by iteration_request_model): the traces read over c, c then given
 * back to db (always), the analysis of the first at `at` with method, or
 * NULL with e. */
json_t *it_job_model(store *db, PGconn *c, const it_job_in *in, const json_t *body, size_t n,
                     double at, int method, const iteration_opts *o, it_job_error *e);
/* An overhead set measured on the stored profiles ids (in->exp 0): the set's
 * document and its number of traces, or NULL with e; *largest as
 * it_job_load's (the caller gives c back with store_release_sized). */
json_t *it_job_measure(PGconn *c, const it_job_in *in, const json_t *ids,
                       const xg_ov_options *prof, int *ntraces, size_t *largest,
                       it_job_error *e);

/* A claimed queued run: its stored request (the body, ?device= and the caps
 * it was asked under) checked and analysed as the request would have had it.
 * The answer document: the analysis, its breakdown view for "breakdown", the
 * iteration model's analysis, or for "overhead-set" the measured set, whose
 * name (name[cap]) and number of traces (*ntraces) the caller stores it
 * under. NULL with e. */
json_t *it_job_run_claimed(store *db, const store_it_run *r, char *name, size_t cap,
                           int *ntraces, it_job_error *e);

#endif
