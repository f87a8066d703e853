/*
 * measurement.h — what the store reads for the analyses, as they read it:
 * the rows of an experiment's profiles (store_fit_data, the input of a refit
 * and of the iteration model) and one stored measurement of a model set
 * (store_measurement_row: its coordinate, level, callpath, metric and phase,
 * the aggregated value, its repetitions, the ranks' values and
 * load-imbalance factors, its factor levels). store/models.h reads and frees
 * them, and the stored models (store_model_row); the pure analyses
 * (analysis/noisy.h, analysis/speedups.h, analysis/iterations.h,
 * analysis/set_data.h) take them as they are.
 */
#ifndef PERFCAST_ANALYSIS_MEASUREMENT_H
#define PERFCAST_ANALYSIS_MEASUREMENT_H

#include <stddef.h>

typedef struct store_fit_row {
    int point;      /* index into store_fit_data.points */
    int repetition;
    int rank;
    int phase;      /* 0 train, 1 validation, 2 between steps */
    int step;
    int callpath;   /* index into callpaths */
    int metric;     /* index into metrics */
    double value;
} store_fit_row;

typedef struct store_fit_data {
    int nparams;
    int npoints;
    double *points;          /* npoints x nparams */
    unsigned char *evaluation; /* per point: 1 when its uploads are evaluation-only (not
                                  fitted; a coordinate with both kinds is two points) */
    char **levels;           /* per point: its factor levels as a text[] literal ("{}": none;
                                points of other levels at one coordinate are other points) */
    int ncallpaths;
    char **callpaths;
    int *categories;         /* profile_category per callpath */
    int nmetrics;
    char **metrics;
    size_t nrows;
    store_fit_row *rows;     /* grouped by point (ascending point index) */
} store_fit_data;

/* One stored model of a model set: its level, callpath, metric and phase,
 * its function and document (modeling/model_json.h), or why there is none. */
typedef struct store_model_row {
    char *level, *name, *category, *metric, *phase, *function, *model_json, *reason;
    double growth_poly, growth_log;
    int points;
} store_model_row;

typedef struct store_measurement_row {
    double *point;
    int nparams;
    char *level, *name, *category, *metric, *phase;
    double value;
    double *reps;
    int nreps;
    double *ranks;
    int *rank_ids;
    int nranks;
    double *lif_reps; /* nlif values (one per repetition); NULL in sets written before
                         they were kept */
    int nlif;
    char *levels;     /* its factor levels as a JSON array text in factor-name order
                         ("[\"cpu\",\"fp16\"]", "[]" without factors); read by
                         store_repetitions_read() only, NULL elsewhere */
    void *slab;       /* store_repetitions_read(): the one block every field of every row
                         of the array points into (in every row, so that sorting keeps it);
                         NULL where each field is its own allocation */
} store_measurement_row;

#endif
