/*
 * profile.h — the normalized profile every profiler reader produces.
 *
 * One upload (one coordinate x repetition, one or more ranks) becomes rows of
 * (rank, phase, step, callpath, metric, value): the sum of the metric over
 * all executions of the callpath inside that step (Extra-Deep Eq. 1).
 * Executions outside any step are collected per gap between steps, as phase
 * PROFILE_BETWEEN with the gap's index as step. Callpaths carry a category.
 *
 * This file also declares the reader of perfcast's own JSON profile format
 * (profile_json.c). Readers of Kineto traces and Nsight Systems exports
 * produce the same struct.
 */
#ifndef PERFCAST_INGEST_PROFILE_H
#define PERFCAST_INGEST_PROFILE_H

#include <stddef.h>

#include "ingest/extrap.h" /* ingest_error */

typedef enum profile_category {
    PROFILE_COMP = 0,
    PROFILE_COMM = 1,
    PROFILE_MEM = 2,
    PROFILE_HOST = 3,
} profile_category;

typedef enum profile_phase {
    PROFILE_TRAIN = 0,
    PROFILE_VALIDATION = 1,
    PROFILE_BETWEEN = 2,
} profile_phase;

typedef struct profile_row {
    int rank;
    int phase;    /* profile_phase */
    int step;     /* 0-based index of the step within its phase on this rank, in
                     the order of the upload; for PROFILE_BETWEEN the gap index */
    int callpath; /* index into profile.callpaths */
    int metric;   /* index into profile.metrics */
    double value; /* summed over the step; finite, >= 0 for time/visits/bytes */
} profile_row;

typedef struct profile_callpath {
    char *name;
    int category; /* profile_category */
} profile_callpath;

typedef struct profile {
    int nparams;
    char **param_names; /* as the upload names them in "point" (may be 0 when
                           the point comes from elsewhere, e.g. the query) */
    double *point;      /* nparams values */
    int repetition;     /* >= 1; 1 when the upload does not say */
    int nlevels;        /* categorical factors' levels the upload names ("levels":
                           {"dataloader":"dali"}); 0 when it names none */
    char **level_names, **level_values;
    int ncallpaths;
    profile_callpath *callpaths;
    int nmetrics;
    char **metrics;
    int nranks;         /* distinct ranks */
    size_t nrows;
    profile_row *rows;
} profile;

/* perfcast JSON profile:
 * {"point":{"ranks":8},"repetition":1,"levels":{"dataloader":"dali"},
 *  "ranks":[{"rank":0,"steps":[{"phase":
 *  "train","callpaths":[{"name":"k","category":"comp","metrics":{"time":0.01,
 *  "visits":4}}]}],"between_steps":[{"callpaths":[...]}]}]}
 * Returns 0, or -1 with err (byte offset or line, and what was expected) and
 * out zeroed. */
int ingest_profile_json(const char *buf, size_t len, profile *out, ingest_error *err);

void profile_free(profile *p);

const char *profile_category_name(int category);
/* "comp"|"comm"|"mem"|"host" -> category, -1 otherwise */
int profile_category_from_name(const char *name);
const char *profile_phase_name(int phase);

#endif
