/*
 * robust_internal.h — what the robust modeler's files share: the series as
 * the robust modeler sees it (a robust center and a noise variance per
 * coordinate), weighted least-squares hypotheses and their scores.
 *
 * robust_noise.c turns repetitions into centers and weights, robust_wls.c
 * fits and scores one hypothesis, robust.c searches the hypotheses (single
 * and multi-parameter) and builds the model with its interval.
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
/* Size of work for rb_fit with m points. */
size_t rb_work_size(int m);
/* The selection criterion of a fitted hypothesis on m points. */
double rb_criterion(const rb_series *s, const rb_hyp *h, int m);
/* The same from a chi2 and k coefficients; negative: some coefficient < 0. */
double rb_score(const rb_series *s, double chi2, int k, int m, int negative);
/* Factor from (A'WA)^-1 to the covariance of the coefficients: 1 with
 * repetitions unless the fit is worse than the noise (then chi2/dof), the
 * residual variance chi2/dof without. */
double rb_noise_scale(const rb_series *s, double chi2, int k, int m);
/* Variance of the fitted mean at point (from cov, scaled to the noise). */
double rb_mean_variance(const rb_series *s, const rb_hyp *h, int m, const double *point);

/* robust.c */
int robust_fit(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *reps, pmnf_model *out,
               char *err, size_t errcap);

#endif
