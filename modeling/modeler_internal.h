/*
 * modeler_internal.h — what the modeler's files share and nobody else needs:
 * the modeler struct with its caches, building blocks, single-parameter plans
 * (everything about one coordinate vector that does not depend on the
 * measured values) and multi-parameter designs.
 */
#ifndef PERFCAST_MODELER_INTERNAL_H
#define PERFCAST_MODELER_INTERNAL_H

#include <stdint.h>

#include "modeling/lsq.h"
#include "modeling/modeler.h"

/* One single-parameter building block: x^poly * log2(x)^log. */
typedef struct pmnf_block {
    double poly;
    double log;
} pmnf_block;

/* Everything the single-parameter modeler needs about coordinates x[0..n). */
typedef struct single_plan {
    int n;
    double *x;             /* the key */
    int nblocks;
    pmnf_block *blocks;    /* after dropping log terms if x < 1 */
    unsigned warnings;     /* PMNF_WARN_NO_LOG_TERMS */
    double *g;             /* nblocks x n: block values at x */
    unsigned char *usable; /* nblocks: all values finite, factorization ok */
    lsq_factor *full;      /* nblocks: design [1, g_b] on all points */
    double *full_pinv;     /* nblocks x 2 x n: (c0, c1) = P y on all points */
    double *loo_pinv;      /* nblocks x n x 2 x n: the same with point i left out
                              (column i zero), so P_i y needs no copy of y */
    lsq_factor constant;   /* design [1] on all points */
    double *storage;
    uint64_t last_used;
} single_plan;

/* A multi-parameter hypothesis' design on the experiment's coordinates. */
typedef struct mp_design {
    int keylen;
    double *key;  /* nterms, then per term per parameter (poly, log) */
    uint64_t hash;
    int m, k;
    double *cols; /* k x m, column 0 all ones */
    lsq_factor f;
    int ok;       /* factorization succeeded */
    int numeric_failure; /* it failed in the arithmetic (LSQ_NUMERIC) */
    double *storage;
} mp_design;

/* Grouping of the coordinates into one line of points per parameter, for the
 * single-parameter models of the multi-parameter modeler. */
typedef struct mp_slices {
    int nparams;
    int npoint[PMNF_MAX_PARAMS];   /* points on parameter p's line */
    double *x[PMNF_MAX_PARAMS];    /* their coordinates */
    int *start[PMNF_MAX_PARAMS];   /* npoint+1 offsets into member */
    int *member[PMNF_MAX_PARAMS];  /* indices of the points averaged into each */
} mp_slices;

#define MODELER_MAX_PLANS 32

struct pmnf_modeler {
    pmnf_options opt;
    int nblocks;
    pmnf_block *blocks; /* the building blocks the options ask for */
    uint64_t clock;
    single_plan *plans[MODELER_MAX_PLANS];
    int nplans;
    /* the multi-parameter coordinate set the caches below belong to */
    int mp_nparams, mp_npoints;
    double *mp_coords;
    mp_slices slices;
    int slices_ready;
    mp_design **designs; /* open addressing */
    int ndesigns, design_cap;
    /* designs of hypotheses with segmented factors, whose columns depend on
     * the series' values: kept for one fit only (modeler_drop_transient_designs) */
    mp_design **transient;
    int ntransient, transient_cap;
    /* scratch */
    double *scratch;
    int scratch_cap;
    struct rb_cache *robust; /* the robust modeler's block columns (robust.c) */
    unsigned fit_warnings;   /* set during one fit (numeric failures on the way) */
};

/* options.c */
int blocks_from_options(const pmnf_options *o, pmnf_block **out);

/* modeler.c: caches */
single_plan *modeler_plan(pmnf_modeler *m, const double *x, int n);
/* The factorized design of shape on the coordinates; for a shape with a
 * segmented factor a transient one, valid until modeler_drop_transient_designs. */
mp_design *modeler_design(pmnf_modeler *m, const pmnf_function *shape);
void modeler_drop_transient_designs(pmnf_modeler *m);
double *modeler_scratch(pmnf_modeler *m, int n);

/* robust.c */
void rb_cache_free(struct rb_cache *c);

/* single.c */
int single_fit(pmnf_modeler *m, const double *x, const double *y, int n, int param, int nparams,
               pmnf_model *out);

/* single.c: the left-out predictions of the model single_fit chose (one
 * term), as its cross-validation computed them. 0, or -1. */
int single_loo_predictions(pmnf_modeler *m, const double *x, const double *y, int n,
                           const pmnf_model *model, double *pred);

/* segmented.c */
int segmented_fit(pmnf_modeler *m, const double *x, const double *y, int n, pmnf_model *out);
/* 1 with the change point and the segments' RSS when Extra-P's segmented
 * modeler finds two regimes in x, y; 0 when not (or fewer than 9 points);
 * -1 out of memory. */
int segmented_detect(pmnf_modeler *m, const double *x, const double *y, int n, double *break_lo,
                     double *break_hi, double *rss_segments);

/* multi.c */
int multi_fit(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out);
int slices_build(mp_slices *s, const double *coords, int npoints, int nparams,
                 pmnf_point_selection sel);
void slices_free(mp_slices *s);

/* quality.c */
/* Fills rss, smape, ar2 of out->f at the points; cv_smape left alone. */
void quality_measure(pmnf_model *out, const double *pred, const double *y, int n);
double quality_smape(const double *pred, const double *y, int n, int skip_zero_in_count);
/* Interval data of out from the factorization of its final design. */
void quality_interval(pmnf_model *out, const lsq_factor *f);
double quality_max_contribution(const double *term, double coef, const double *y, int n);

#endif
