/*
 * analysis_data.h — what the analyses (scaling, bottlenecks, cost,
 * configurations, imbalance) read of one model set besides the application
 * models, built once per (model set, metric) and kept in the model cache as
 * blobs (a model set never changes, so neither does anything derived from
 * it):
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
 * The order of the groups is the cache's parts: comp, comm, mem, epoch.
 */
#ifndef PERFCAST_API_ANALYSIS_DATA_H
#define PERFCAST_API_ANALYSIS_DATA_H

#include "api/api.h"
#include "modeling/imbalance.h"
#include "modeling/modeler.h"

#define AD_GROUPS CACHE_PARTS

typedef struct ad_fit {
    int present;
    pmnf_model model;
    char function[512];
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

/* The app data of metric slot `slot` of m. *ref is the cache reference to
 * release with model_cache_blob_release(ctx->models, *ref). NULL with err
 * on a store failure. */
const ad_app *ad_app_get(api_ctx *ctx, const cached_models *m, int slot, const cache_blob **ref,
                         store_error *err);

/* The callpath data of the same set and metric; app from ad_app_get. */
const ad_callpaths *ad_callpaths_get(api_ctx *ctx, const cached_models *m, int slot,
                                     const ad_app *app, const cache_blob **ref,
                                     store_error *err);

/* Index of the app coordinate equal to point, or -1. */
int ad_point_index(const ad_app *a, const double *point);

/* JSON of a fit: the model's document (api/model_json.h) without the
 * interval data, or {"function":null,"reason":...}. */
json_t *ad_fit_json(const ad_fit *f, const cached_models *m);

#endif
