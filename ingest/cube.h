/*
 * cube.h — reader of Score-P Cube profiles (.cubex) and of sets of them.
 *
 * A .cubex file is a tar archive: anchor.xml (plain or gzip) declares the
 * metrics, the regions, the call tree (cnodes) and the system tree (locations);
 * per metric with data, "<id>.index" lists the call-tree positions that carry
 * values and "<id>.data" holds, per listed position, one value per location
 * (raw after "CUBEX.DATA", or zlib blocks after "ZCUBEX.DATA").
 *
 * ingest_cube_read turns one file into a cube_profile the way Extra-P 4.2.5's
 * CubeFileReader2 sees it through pycubexr: the top-level metrics that have
 * data (the others are listed in `skipped`, Extra-P warns about them),
 * callpaths named by walking the call tree from its roots ("main->init_mat"),
 * and per (callpath, metric) the exclusive value at every location (inclusive
 * metrics are made exclusive by subtracting the children's inclusive values).
 * ingest_cube_to_profile makes perfcast's normalized profile (profile.h) of it:
 * one row per location (rank = location index) and callpath.
 *
 * A profile set is a directory of runs, one directory each, named after the
 * parameters (cube_set.c): "mm.x10y1z1.r1", "x1.1y1.1z1.1",
 * "mm.x20,5.y20,5.z1,5.r1", ... ingest_cube_set_* build Extra-P's experiment
 * of such a set (ingest_experiment, extrap.h): parameters that vary, points in
 * ascending order, and per point every location's value of every run there
 * (Extra-P's default weak-scaling aggregation: mean and median over all).
 *
 * Untrusted bytes: member names that leave the archive, a DOCTYPE (and with
 * it every entity declaration), sizes beyond the limits or not matching the
 * index, truncated or corrupt compression are refused with a message naming
 * the member and the fault. Sizes are checked before anything is allocated.
 */
#ifndef PERFCAST_INGEST_CUBE_H
#define PERFCAST_INGEST_CUBE_H

#include <stddef.h>

#include "ingest/extrap.h"
#include "ingest/profile.h"

/* Upper bounds of one read; 0 fields take the defaults below. */
typedef struct cube_limits {
    size_t max_member;  /* bytes of one member after decompression (default 1 GiB) */
    size_t max_total;   /* bytes of all members after decompression (default 4 GiB) */
    long max_nodes;     /* cnodes + locations + metrics + regions (default 10,000,000) */
} cube_limits;

typedef struct cube_series {
    int callpath;   /* index into cube_profile.callpaths */
    int metric;     /* index into cube_profile.metrics */
    double *values; /* nlocations exclusive values */
} cube_series;

typedef struct cube_profile {
    int nlocations;
    int ncallpaths;
    char **callpaths;   /* distinct names, in call-tree order */
    int nmetrics;
    char **metrics;     /* top-level metrics with data, in anchor order */
    int nseries;
    cube_series *series; /* metric after metric, call-tree positions in index
                            order; a name reached by two call sites appears twice */
    int nskipped;
    char **skipped;     /* metrics without data or of a type without numbers */
} cube_profile;

/* Reads one .cubex held in buf[0..len). o may be NULL. Returns 0, or -1 with
 * err->msg naming the member ("anchor.xml: line 3: ...", "2.data: ...") and
 * out zeroed. */
int ingest_cube_read(const void *buf, size_t len, const cube_limits *o, cube_profile *out,
                     ingest_error *err);
void cube_profile_free(cube_profile *p);

/* Rows of one location each (rank = location index, phase train, step 0);
 * a callpath reached by several call sites sums them. 0 or -1 (out of memory). */
int ingest_cube_to_profile(const cube_profile *c, profile *out, ingest_error *err);

/* 1 when buf looks like a tar archive (ustar magic at byte 257). */
int ingest_cube_is_tar(const void *buf, size_t len);

/* ---- sets (cube_set.c) ------------------------------------------------------ */

/* Parameters of a run directory's name the way Extra-P reads them: the text
 * between the first '.' and the first ".r" (or the whole name), split into
 * name/number pairs; ',' is a decimal point, a trailing '.' is dropped.
 * Fills up to cap names (pointers into a copy in *store, free it) and values;
 * returns the count, or -1 with msg set. */
int ingest_cube_dir_params(const char *dirname, char **store, char **names, double *values,
                           int cap, char *msg, size_t msgcap);

typedef struct cube_set cube_set;

cube_set *ingest_cube_set_new(void);
void ingest_cube_set_free(cube_set *s);
/* Adds one run: its directory's name and its profile (moved into the set;
 * *p is zeroed). Returns 0, or -1 with err naming the directory. */
int ingest_cube_set_add(cube_set *s, const char *dirname, cube_profile *p, ingest_error *err);
/* Names of the metrics some run skipped, comma-separated ("" when none). */
const char *ingest_cube_set_skipped(const cube_set *s);
/* Builds the experiment. Returns 0, or -1 with err (directories mixing
 * conventions, no varying parameter, no run, ...). */
int ingest_cube_set_finish(cube_set *s, ingest_experiment *out, ingest_error *err);

/* ---- a set in one archive (cube_bundle.c) -------------------------------------- */

#define CUBE_MAX_PARAMS 64

typedef struct cube_bundle_run {
    char *dir;       /* the run directory's name, e.g. "mm.x10y1z1.r1" */
    char *member;    /* the .cubex member's path in the archive */
    int np;          /* parameters named by dir */
    char *store;     /* holds the names */
    char *names[CUBE_MAX_PARAMS];
    double values[CUBE_MAX_PARAMS];
    int repetition;  /* from a ".r<N>" suffix; 0 when dir has none */
    profile prof;    /* the run as a normalized profile */
    unsigned char *raw; /* the .cubex bytes */
    size_t raw_len;
} cube_bundle_run;

typedef struct cube_bundle {
    int n;
    cube_bundle_run *runs; /* in archive order */
} cube_bundle;

/* Reads a tar or zip archive of a profile set (members
 * ".../<run dir>/<name>.cubex"). 0, or -1 with err naming the member. */
int ingest_cube_bundle_read(const void *buf, size_t len, const cube_limits *o, cube_bundle *out,
                            ingest_error *err);
void ingest_cube_bundle_free(cube_bundle *b);

#endif
