/*
 * profiles.h — storing one upload: the raw bytes, the normalized rows and
 * the refit job it queues, all in one transaction.
 *
 * store_profile_add() is the whole upload path below the API: when it
 * returns STORE_OK the upload is committed (raw bytes, callpaths, rows, the
 * job, the profile's link to the job) and a notification on channel
 * "perfcast_jobs" has gone out to the workers; on any error nothing of it is
 * stored. Uploading the same bytes to the same experiment again stores
 * nothing and answers the first upload's profile and job (duplicate = 1), so
 * a client that lost the answer can simply send again. Other bytes at the
 * coordinate, repetition and ranks of a stored profile are a conflict
 * (STORE_CONFLICT, out->conflict_*), unless u->replace asks to replace it.
 *
 * The point (one value per experiment parameter, in the experiment's order)
 * is resolved by the caller (api/profiles.c: from the body and the query);
 * here it is only checked to have the experiment's number of values.
 */
#ifndef PERFCAST_STORE_PROFILES_H
#define PERFCAST_STORE_PROFILES_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/profile.h"
#include "store/db.h"
#include "store/jobs.h"

typedef struct store_upload {
    int64_t experiment_id;
    const char *format;    /* "perfcast", ... */
    const void *raw;       /* the bytes as uploaded */
    size_t raw_len;
    const double *point;   /* npoint values in the experiment's parameter order */
    int npoint;
    int repetition;        /* >= 1 */
    const profile *prof;   /* the normalized profile read from raw */
    int defer_refit;       /* 1: store only; a later store_job_enqueue() refits */
    int evaluation;        /* 1: not fitted, compared with the models (accuracy) */
    int replace;           /* 1: profiles holding the same coordinate, repetition and
                            * ranks are deleted in the same transaction */
    int max_experiment_callpaths; /* the experiment's distinct callpaths after it; 0: no cap */
    const char *commit;    /* the commit measured, or NULL; the refit models its profiles */
    const char *branch;    /* may be NULL */
    const char *ci_run;    /* may be NULL */
    const char *levels;    /* the factor levels as a text[] literal ("{dali,fp16}"); NULL: none */
    int in_transaction;    /* 1: the caller's transaction (store_profiles_add_all) */
} store_upload;

typedef struct store_upload_result {
    int64_t profile_id;
    int64_t job_id;        /* 0 when the refit was deferred */
    int duplicate;         /* 1: these bytes were stored before; the ids are the first upload's */
    int replaced;          /* profiles deleted by u->replace */
    /* on STORE_CONFLICT for other bytes at the same coordinate, repetition
     * and ranks: the stored profile and the ranks both hold ("0,1") */
    int64_t conflict_profile;
    char conflict_ranks[128];
    /* on STORE_INVALID for the callpath cap: the count the upload would reach */
    long long callpaths_after;
} store_upload_result;

/* Stores upload u (see above). Unknown experiment -> STORE_NOT_FOUND; a point
 * of the wrong length, a callpath whose category differs from the one stored
 * for the experiment, or values the schema refuses -> STORE_INVALID with a
 * message naming the fault; database down -> STORE_UNAVAILABLE. */
int store_profile_add(PGconn *c, const store_upload *u, store_upload_result *out,
                      store_error *err);

/* Stores n uploads in one transaction: all of them or none. On failure
 * *failed is the index of the upload that failed and res[*failed] says why
 * (as store_profile_add would); res[i] otherwise. */
int store_profiles_add_all(PGconn *c, store_upload *us, int n, store_upload_result *res,
                           int *failed, store_error *err);

/* Deletes profile pid of experiment exp (its rows with it) and queues a
 * refit (job_id; 0 when no refit is needed because nothing is left or
 * defer). STORE_NOT_FOUND when exp has no such profile. */
int store_profile_delete(PGconn *c, int64_t exp, int64_t pid, int64_t *job_id, store_error *err);

/* Profiles of experiment exp and their normalized rows, for tests and
 * /metrics-style checks. */
int store_profile_counts(PGconn *c, int64_t exp, int64_t *profiles, int64_t *rows,
                         store_error *err);

#endif
