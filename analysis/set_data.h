/*
 * set_data.h — what the analyses (scaling, bottlenecks, cost,
 * configurations, imbalance) read of one model set and metric besides the
 * application models, built from its stored measurements and models (a
 * model set never changes, so neither does anything derived from it;
 * api/analysis_data.h keeps them in the model cache):
 *
 *   ad_app        the measured application values per coordinate (epoch and
 *                 its comp/comm/mem parts, per repetition, with their load-
 *                 imbalance factors), the ranks of each coordinate, the
 *                 baseline P_1 (the first measured coordinate) and the
 *                 largest; Extra-Deep's speedup Δ and efficiency ε and the
 *                 cost in core-hours at the measured coordinates and their
 *                 PMNF models; the LIF models of the parts and the whole step;
 *                 the regression T = b0 + Σ b_l·x_l + b_LIF·LIF per part;
 *   ad_callpaths  every callpath's per-epoch model and growth, its measured
 *                 value at the largest coordinate, its LIF per coordinate
 *                 and the LIF model.
 *
 * The order of the groups is the model cache's parts: comp, comm, mem, epoch.
 */
#ifndef PERFCAST_ANALYSIS_SET_DATA_H
#define PERFCAST_ANALYSIS_SET_DATA_H

#include <stddef.h>

#include "analysis/measurement.h"
#include "modeling/imbalance.h"
#include "modeling/modeler.h"

#define AD_GROUPS 4 /* comp, comm, mem, epoch */

/* The group of an application-level callpath name: 0..3 in the order
 * above, -1 for any other name (NULL included). */
int ad_group_of(const char *name);
/* Lexicographic order of two coordinates of n parameters: -1, 0, 1. */
int ad_cmp_point(const double *a, const double *b, int n);
/* The application rows (comp, comm, mem, epoch) of rows with nparams
 * coordinates, into by (room for nrows), ordered by coordinate; their
 * number. */
int ad_rows_by_point(const store_measurement_row *rows, int nrows, int nparams,
                     const store_measurement_row **by);

typedef struct ad_fit {
    int present;
    pmnf_model model;
    char *function;   /* the model's text, whole (owned; NULL when there is none) */
    char reason[200]; /* why there is none */
} ad_fit;

typedef struct ad_app {
    int nparams, npoints;
    double *coords;              /* npoints x nparams, ascending (lexicographic) */
    double *ranks;               /* per coordinate: data_parallel × model_parallel */
    double *value[AD_GROUPS];    /* measured per-epoch value; NaN where absent */
    imb_summary *lif[AD_GROUPS]; /* LIF over repetitions per coordinate (n = 0: none) */
    int lif_per_rep;             /* 1: LIFs per repetition were stored; 0: from rank medians */
    int baseline, largest;       /* coordinate indices of P_1 and of the largest coordinate */
    double *speedup_pct;         /* Δ per coordinate (metric time only: else NaN) */
    double *efficiency_pct;      /* ε per coordinate */
    double *core_hours;          /* T·ranks·ρ/3600 per coordinate */
    ad_fit speedup, efficiency, cost;
    ad_fit lif_model[AD_GROUPS];
    int reg_ok[AD_GROUPS];
    imb_regression reg[AD_GROUPS];
    char reg_why[AD_GROUPS][200];
} ad_app;

typedef struct ad_callpath {
    char *name;
    char category[8];
    ad_fit model;                /* per-epoch model */
    double growth_poly, growth_log;
    double now;                  /* measured at the app's largest coordinate; NaN if not */
    imb_summary *lif;            /* per app coordinate (n = 0 where not measured) */
    ad_fit lif_model;
} ad_callpath;

typedef struct ad_callpaths {
    int n;
    ad_callpath *v;              /* by name */
    int npoints;                 /* the app's coordinates */
} ad_callpaths;

/* What the builders need to know of the model set. */
typedef struct ad_set {
    int nparams;
    const char *const *params; /* the parameters' names */
    int strong;                /* strong scaling: negative exponents for derived time models */
    double cores_per_rank;     /* ρ */
    const char *metric;        /* the metric of the rows ("time": cost too) */
    double (*ranks)(const void *ctx, const double *point); /* G·M at a coordinate */
    const void *ctx;
} ad_set;

/* The app data of rows (the application-level epoch rows of one metric).
 * NULL when out of memory (a model's text included: texts are never cut). Free with ad_app_free; ad_app_bytes is about what
 * it holds, for a cache's byte budget. */
ad_app *ad_app_build(const ad_set *s, store_measurement_row *rows, int nrows);
size_t ad_app_bytes(const ad_app *a);
void ad_app_free(void *p);

/* The callpath data of the same set and metric from its callpath models and
 * measurements; app from ad_app_build. NULL when out of memory. */
ad_callpaths *ad_callpaths_build(const ad_set *s, const ad_app *app, store_model_row *models,
                                 int nmodels, store_measurement_row *rows, int nrows);
size_t ad_callpaths_bytes(const ad_callpaths *d);
void ad_callpaths_free(void *p);

/* Index of the app coordinate equal to point, or -1. */
int ad_point_index(const ad_app *a, const double *point);

#endif
