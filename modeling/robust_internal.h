/*
 * robust_internal.h — what the robust modeler's files share: the series as
 * the robust modeler sees it (a robust center and a noise variance per
 * coordinate), weighted least-squares hypotheses and their scores.
 *
 * robust_order.c puts a series in a canonical order, robust_noise.c turns
 * repetitions into centers and weights, robust_wls.c fits and scores one
 * hypothesis, robust_mixture.c weighs the hypotheses, robust_cache.c keeps
 * the building blocks' values (also on the path to the extrapolation
 * horizon, horizon.c), robust.c searches the hypotheses (single and
 * multi-parameter) and builds the model with its interval.
 */
#ifndef PERFCAST_ROBUST_INTERNAL_H
#define PERFCAST_ROBUST_INTERNAL_H

#include "modeling/modeler_internal.h"

/* A series ready for weighted fits. */
typedef struct rb_series {
    int n, nparams;
    const double *coords; /* n x nparams */
    double *y;            /* robust center per coordinate */
    double *var;          /* variance of y[i] (absolute units) */
    double *w;            /* 1 / var[i] */
    int have_reps;        /* 1: var from repetitions; 0: relative weights, scale unknown */
    double dof;           /* degrees of freedom of the noise estimate */
    double cv2;           /* pooled relative variance of one repetition */
    double *ones;         /* n ones, the constant's column */
    pmnf_path path;       /* the path to the horizon and the data's direction (horizon.c) */
    double *storage;
} rb_series;

/* robust_noise.c: centers and weights from d (values and optional reps).
 * Returns 0, or -1 when out of memory. */
int rb_series_build(rb_series *s, const pmnf_data *d, const pmnf_reps *reps);
void rb_series_free(rb_series *s);

/* A hypothesis: optional constant plus terms (coefficients are fitted). */
typedef struct rb_hyp {
    pmnf_function f;   /* shapes; coefs filled by the fit */
    int has_const;
    int k;             /* coefficients: has_const + nterms */
    double chi2;       /* weighted residual sum of squares */
    double crit;       /* the selection criterion, lower is better */
    double cov[PMNF_MAX_COEFS * PMNF_MAX_COEFS]; /* (A'WA)^-1 in (1, terms) order */
    int ok;
} rb_hyp;

/* robust_wls.c: fits h on the points idx[0..m) of s (all when idx NULL, m = s->n).
 * col holds the term shapes evaluated at those points when given (k-has_const
 * columns of m), otherwise they are computed. Fills coefficients, chi2, cov. */
int rb_fit(const rb_series *s, const int *idx, int m, rb_hyp *h, const double *col, double *work);
/* rb_fit on all points from the term columns, by the normal equations. */
int rb_fit_normal(const rb_series *s, rb_hyp *h, const double *col);
/* Size of work for rb_fit with m points. */
size_t rb_work_size(int m);
/* The selection criterion of a fitted hypothesis on m points. */
double rb_criterion(const rb_series *s, const rb_hyp *h, int m);
/* The criterion's bonus of the constant among nblocks single-parameter
 * blocks: the prior of one whole form of hypothesis, 2 ln(nblocks). */
double rb_constant_prior(int nblocks);
/* The prior cost of a building block x^poly log2(x)^log. */
double rb_block_penalty(double poly, double log);
/* The same from a chi2 and k coefficients; negative: some coefficient < 0. */
double rb_score(const rb_series *s, double chi2, int k, int m, int negative);
/* Factor from (A'WA)^-1 to the covariance of the coefficients: 1 with
 * repetitions unless the fit is worse than the noise (then chi2/dof), the
 * residual variance chi2/dof without. */
double rb_noise_scale(const rb_series *s, double chi2, int k, int m);

/* Without repetitions the criterion charges half AICc's small-sample term;
 * the other half, for k coefficients (and the variance) on m points, which
 * the interval's model average adds back (robust_mixture.c). */
double rb_small_sample_rest(int k, int m);
/* Variance of the fitted mean at point (from cov, scaled to the noise). */
double rb_mean_variance(const rb_series *s, const rb_hyp *h, int m, const double *point);
/* The same from the term shapes at the point. */
double rb_mean_variance_g(const rb_series *s, const rb_hyp *h, int m, const double *shapes);

/* robust_mixture.c: the hypotheses of one fit at the reference point. */
#define RB_NREF PMNF_WIDEN_AT /* reference points: 2x, 4x, 8x the largest coordinates */
#define RB_PICK_REF 1
typedef struct rb_mixture {
    int n, cap;
    double *crit, *tag, *w;
    double *chi2, *dof; /* the part of crit that is a chi-square against the measured noise
                           (0 without repetitions) and its degrees of freedom */
    double *prior;      /* the log prior of the hypothesis' form (x -2) crit includes: the
                           choice weighs it, the interval's spread does not */
    unsigned char *ok; /* RB_OK_* bits: the rules of the path to the horizon it keeps */
    int picked;        /* the index rb_mixture_pick chose, -1 none */
    int small_m;       /* without repetitions the series' points, else 0: the interval's
                          weights then charge AICc's whole small-sample term
                          (rb_small_sample_rest) */
    double *mu, *var; /* n x RB_NREF */
    double *key;      /* scratch of rb_mixture_pick */
    int *idx;
} rb_mixture;

/* What a hypothesis keeps (horizon.c): RB_OK_STRICT no prediction <= 0, no
 * collapse of a growing series, the measured direction; RB_OK_FLOOR no
 * prediction below half the smallest measurement; RB_FITS it fits the
 * measurements within their noise (reduced chi-square at most 4). */
#define RB_FIT_ADEQUATE 4.0 /* the largest reduced chi-square of a fit within the noise */
#define RB_OK_STRICT 1
#define RB_OK_FLOOR 2
#define RB_FITS 4
/* Adds a hypothesis (skipped when not finite) with its criterion crit, less
 * prior (the log prior of its form x 2, rb_constant_prior) for the choice;
 * chi2: the part of crit that is
 * a chi-square against the measured noise (0 when the noise is not known
 * from repetitions), dof: the points less the coefficients; plausible: its
 * RB_OK_* and RB_FITS bits. -1 when out of memory. */
int rb_mixture_add(rb_mixture *mx, double crit, double prior, double chi2, int dof, const double *mu,
                   const double *var, int tag, int plausible);
/* Weighs the hypotheses (only the plausible ones when there are any) and picks the weighted median prediction: its index
 * (its tag into *tag), or -1 when there is none. */
int rb_mixture_pick(rb_mixture *mx, int *tag);
/* max(1, kappa^2) over the reference points for the chosen model's means
 * and variances there (after pick); each reference point's max(1, kappa^2)
 * into each[RB_NREF]. */
double rb_mixture_kappa2(const rb_mixture *mx, const double *mu0, const double *var0,
                         double *each);
/* The overdispersion c the weights of kappa^2 use: the best hypothesis'
 * chi-square per degree of freedom where it shows a significant lack of
 * fit (at the 1% level), otherwise 1. */
double rb_mixture_overdispersion(const rb_mixture *mx);
void rb_mixture_free(rb_mixture *mx);

/* The points along which only parameter p varies, grouped by their other
 * coordinates: line l is idx[start[l] .. start[l+1]). */
#define RB_MIN_LINE_POINTS 4
typedef struct rb_lines {
    int nlines;
    int *start; /* nlines + 1 */
    int *idx;
} rb_lines;

/* robust_cache.c: every building block's values at a coordinate set, kept
 * in the modeler while series arrive with the same coordinates. */
typedef struct rb_cache {
    int nparams, n, nblocks;
    pmnf_block *blocks;    /* the modeler's blocks, then the negative ones it lacks */
    unsigned char *negative; /* nblocks: a block added for falling data only */
    double *coords;        /* the key: n x nparams */
    pmnf_path path;        /* the coordinates' path to the horizon (dir, ymin per series) */
    double *gpath;         /* nparams x nblocks x PMNF_PATH_LINE: values on the path */
    signed char *gmono;    /* nparams x nblocks: +1 / -1 the path values never fall / rise, 0 */
    double ref[RB_NREF][PMNF_MAX_PARAMS]; /* the reference points */
    unsigned char *usable; /* nparams x nblocks: finite everywhere, log rule, not constant */
    double *g;             /* nparams x nblocks x n */
    double *gref;          /* nparams x nblocks x RB_NREF: values at the references */
    rb_mixture mx;         /* reused between fits */
    double t_dof, t975;    /* the last Student t quantile computed (series share their dof) */
    rb_lines lines[PMNF_MAX_PARAMS]; /* per parameter */
    double *storage;
} rb_cache;

/* 1 when a parameter of d has a coordinate below 1 (at most 1 with negative
 * exponents) and the modeler has log terms: they are left out along it, as
 * Extra-P does, and the model says so (PMNF_WARN_NO_LOG_TERMS). */
int rb_logs_excluded(const pmnf_modeler *m, const pmnf_data *d);

/* The cache for the coordinates of d, built when they changed; NULL when out of memory. */
rb_cache *rb_cache_get(pmnf_modeler *m, const pmnf_data *d);
static inline const double *rb_col(const rb_cache *c, int p, int b)
{
    return c->g + ((size_t)p * c->nblocks + b) * c->n;
}

/* robust_order.c: the series in a canonical order (points by coordinates,
 * then value; repetitions ascending), copied into storage the struct owns. */
typedef struct canon {
    pmnf_data d;
    pmnf_reps r;
    int has_reps;
    double *storage;
    int *istorage;
} canon;
int rb_canon_build(canon *cn, const pmnf_data *d, const pmnf_reps *reps);
void rb_canon_free(canon *cn);

/* robust.c */
int robust_fit(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps, pmnf_model *out,
               char *err, size_t errcap);

#endif
