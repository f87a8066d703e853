/*
 * modeler.h — the public API of perfcast's PMNF modeler.
 *
 * Given the measured values of one metric of one callpath at several
 * coordinates, pmnf_fit() chooses the PMNF function that describes them, with
 * Extra-P's rules (basic single-parameter modeler, multi-parameter modeler)
 * unless options say otherwise, and reports its quality and what is needed for
 * prediction intervals.
 *
 * Everything here is pure computation: no I/O, no globals. A pmnf_modeler
 * holds the options and caches of everything that depends only on the
 * coordinates (design matrices and their factorizations), which all callpaths
 * of one experiment share; so fitting many callpaths measured at the same
 * coordinates with one modeler is fast. A modeler is not thread-safe: use one
 * per thread.
 */
#ifndef PERFCAST_MODELER_H
#define PERFCAST_MODELER_H

#include "pmnf.h"

typedef enum pmnf_measure {
    PMNF_MEASURE_MEAN = 0,
    PMNF_MEASURE_MEDIAN = 1,
} pmnf_measure;

typedef enum pmnf_point_selection {
    PMNF_POINTS_AUTO = 0, /* Extra-P "auto": the longest lines of points per parameter */
    PMNF_POINTS_ALL = 1,
    PMNF_POINTS_SMALLEST = 2, /* the lines through the smallest other coordinates */
} pmnf_point_selection;

#define PMNF_MAX_USER_EXPONENTS 32

/* Which modeler pmnf_fit() runs. */
typedef enum pmnf_modeler_kind {
    PMNF_MODELER_EXTRAP = 0, /* Extra-P 4.2.5's modelers, output for output */
    PMNF_MODELER_ROBUST = 1, /* noise-resilient: repetitions, weighted fits, extrapolation-aware
                                choice, calibrated intervals (robust.c) */
    PMNF_MODELER_SEGMENTED = 2, /* Extra-P 4.2.5's segmented single-parameter modeler: two
                                   functions and a change point where the data have two
                                   regimes (segmented.c); with several parameters Extra-P's
                                   multi-parameter modeler over it, a line with two regimes
                                   giving a segmented factor (multi.c) */
} pmnf_modeler_kind;

/* The modeler every user-facing entry point uses when none is asked for:
 * `perfcast model`, POST /v1/fit and new experiments. (pmnf_options_default()
 * keeps Extra-P's, which the parity tests and benches compare against.) */
#define PMNF_MODELER_DEFAULT PMNF_MODELER_ROBUST

typedef struct pmnf_options {
    pmnf_measure measure;          /* how repetitions become one value (callers use pmnf_aggregate) */
    int use_crossvalidation;       /* leave-one-out CV scores candidates (default 1) */
    int compare_with_rss;          /* compare by RSS instead of SMAPE (default 0) */
    int allow_log_terms;           /* default 1 */
    int allow_negative_exponents;  /* adds Extra-P's negative exponents (strong scaling) */
    double min_term_contribution;  /* default 0.0005 */
    /* user exponent sets; when any is given they replace the defaults */
    int npoly, nlog;
    double poly_exponents[PMNF_MAX_USER_EXPONENTS];
    double log_exponents[PMNF_MAX_USER_EXPONENTS];
    int retain_default_exponents;
    int force_combination_exponents;
    /* multi-parameter modeler */
    int allow_combinations;        /* sums of products (default 1) */
    pmnf_point_selection point_selection;
    pmnf_modeler_kind modeler;     /* default PMNF_MODELER_EXTRAP */
    unsigned explicit_options;     /* bit per option key set through pmnf_options_apply */
} pmnf_options;

void pmnf_options_default(pmnf_options *o);
/* Sets one option from text, as `perfcast model --options key=value` gives it.
 * Keys: use_crossvalidation, compare_with_rss, allow_log_terms,
 * allow_negative_exponents, minimum_term_contribution, poly_exponents,
 * log_exponents, retain_default_exponents, force_combination_exponents,
 * allow_combinations_of_sums_and_products, single_parameter_point_selection.
 * Returns 0, or -1 with a message in err. */
int pmnf_options_set(pmnf_options *o, const char *key, const char *value, char *err, size_t errcap);

/* One (callpath, metric) series: one aggregated value per coordinate. */
typedef struct pmnf_data {
    int nparams;
    int npoints;
    const double *coords; /* npoints x nparams, row-major */
    const double *values; /* npoints */
} pmnf_data;

/* The repetitions behind a pmnf_data, which the robust modeler uses: point
 * i's are values[start[i] .. start[i+1]). */
typedef struct pmnf_reps {
    const int *start;     /* npoints + 1 */
    const double *values;
} pmnf_reps;

/* Warnings a model can carry (bit set). */
enum {
    PMNF_WARN_FEW_POINTS = 1,      /* fewer than 5 points (per parameter) */
    PMNF_WARN_NO_LOG_TERMS = 2,    /* a coordinate below 1: no logarithmic terms */
    PMNF_WARN_RANK_DEFICIENT = 4,  /* the coordinates cannot separate the terms */
    PMNF_WARN_NO_INTERVAL = 8,     /* too few points for a prediction interval */
    PMNF_WARN_ROBUST_FALLBACK = 16, /* robust modeler: too few points, Extra-P's modeler used */
    PMNF_WARN_NO_REPETITIONS = 32,  /* robust modeler: no repetitions, noise from the residuals */
    PMNF_WARN_POOR_FIT = 64,                    /* poor_fit */
    PMNF_WARN_NEGATIVE_PREDICTION = 128,        /* negative_prediction */
    PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION = 256,  /* implausible_extrapolation */
    PMNF_WARN_EXTRAPOLATION_FAR = 512,          /* extrapolation_far */
    PMNF_WARN_TWO_REGIMES = 1024,               /* two_regimes */
    PMNF_WARN_CONSTANT_ON_VARYING = 2048,       /* constant_on_varying */
    PMNF_WARN_INTERVAL_UNRELIABLE = 4096,       /* interval_unreliable */
    PMNF_WARN_NUMERIC_FAILURE = 8192,           /* numeric_failure: the arithmetic failed */
    PMNF_WARN_PARAMETERS_CONFOUNDED = 16384,    /* parameters_confounded: measured only together */
};
#define PMNF_WARN_LAST PMNF_WARN_PARAMETERS_CONFOUNDED

/* What the data a model was fitted to looked like, and how well the model
 * predicts a point it did not see; filled by pmnf_assess_model() (assess.h)
 * at the end of every fit and kept with the model, so that predictions made
 * later can be judged against the measured range. */
/* The distances of the robust model's widening profile (pmnf_model.widen):
 * 2^(k+1) times the largest measured coordinates, k = 0..2. */
#define PMNF_WIDEN_AT 3

typedef struct pmnf_diagnostics {
    int known;                        /* 0: not recorded (a model stored before diagnostics) */
    double lo[PMNF_MAX_PARAMS];       /* smallest measured coordinate per parameter */
    double hi[PMNF_MAX_PARAMS];       /* largest measured coordinate per parameter */
    int distinct[PMNF_MAX_PARAMS];    /* distinct measured values per parameter */
    double vmin, vmax;                /* smallest and largest measured value */
    double loo_smape;                 /* leave-one-out SMAPE of the model's terms, percent */
    double far_loo_error;             /* leave-one-out residual at the farthest point, relative */
    double far_half_width;            /* the 95% half-width there without it, relative */
} pmnf_diagnostics;

typedef struct pmnf_model {
    pmnf_function f;
    int npoints;
    unsigned warnings;
    double rss;      /* residual sum of squares of f on all points */
    double smape;    /* symmetric mean absolute percentage error of f, percent */
    double ar2;      /* adjusted R^2 */
    double cv_smape; /* the score the modeler chose by: leave-one-out SMAPE when
                        cross-validation is on, otherwise equal to smape */
    /* prediction interval: y +- t * sqrt(sigma2 * (1 + g' C g)), g = (1, terms) */
    int dof;         /* npoints - number of coefficients */
    double sigma2;   /* rss / dof */
    double t975;     /* Student t quantile 0.975 for dof */
    int ncoef;       /* 1 + nterms */
    double cov[PMNF_MAX_COEFS * PMNF_MAX_COEFS]; /* (A'A)^-1, ncoef x ncoef */
    pmnf_modeler_kind modeler; /* the modeler that produced the model */
    /* Robust modeler: the relative variance of one measured value (a center
     * of as many repetitions as measured) at a predicted value v, so that the
     * interval's noise term there is max(sigma2, noise_rel2 v^2): run-time
     * noise grows with the time. 0: the noise term is sigma2. */
    double noise_rel2;
    /* Robust modeler: what widened the interval beyond the measured noise
     * (0 for other modelers and models stored before they were kept):
     * lack_of_fit, the chi-square per degree of freedom of the chosen
     * hypothesis against the noise of the repetitions (1 without a
     * significant lack of fit), and selection, kappa^2, the variance of the
     * hypotheses' predictions over the chosen one's (robust_mixture.c). */
    double lack_of_fit, selection;
    /* Robust modeler: kappa^2 at 2x, 4x and 8x the largest measured
     * coordinates (PMNF_WIDEN_AT), each at least 1; cov carries the largest
     * (selection). For a constant, pmnf_predict scales cov's part of the
     * interval down to the widening at the point's distance (the largest of
     * the profile up to it), so that the spread of the hypotheses 8x out
     * does not widen the interval near the data; a growing model keeps the
     * largest everywhere. All 0: one widening everywhere (other modelers,
     * models stored before the profile was kept). */
    double widen[PMNF_WIDEN_AT];
    /* Two regimes (one parameter only). nsegments 2: the segmented modeler
     * found a change point; f holds for x <= break_lo and f2 (with its own
     * interval data below) for x > break_lo. break_lo == break_hi when the
     * change point is a measured coordinate both segments share; otherwise
     * break_lo and break_hi are the neighbouring measured coordinates that
     * enclose it (Extra-P leaves the gap between them undefined; perfcast
     * answers there with f2). nsegments 0: one function; break_lo/break_hi
     * still name the change point when warnings has PMNF_WARN_TWO_REGIMES
     * (the robust modeler detected two regimes and kept the function of the
     * regime that holds the largest coordinates), break_param naming the
     * parameter along which the regimes change. With several parameters the
     * segmented modeler answers one function f whose factor of a parameter
     * with two regimes is a segmented function (pmnf.h); nsegments is then 0
     * and break_param/break_lo/break_hi name the first such factor's change
     * point. */
    int nsegments;
    double break_lo, break_hi;
    int break_param;
    pmnf_function f2;
    int dof2, ncoef2;
    double sigma2_2, t975_2;
    double cov2[PMNF_MAX_COEFS * PMNF_MAX_COEFS];
    pmnf_diagnostics diag;     /* its data and the leave-one-out checks (assess.h) */
} pmnf_model;

typedef struct pmnf_modeler pmnf_modeler;

/* The largest magnitude of a coordinate or value pmnf_fit() takes: cubes
 * of coordinates and squares of values (and their sums) stay finite below
 * it, so every number a model carries is. Larger ones are refused. */
#define PMNF_MAX_MAGNITUDE 1e50

/* Call once at the start of a program that uses this library (its main(),
 * before any thread starts): turns GSL's default error handler, which
 * aborts the process, off for the whole process. The library checks the
 * status of every GSL call and turns a failure into an error or a model
 * with PMNF_WARN_NUMERIC_FAILURE; nothing in it sets or restores the
 * handler, which is one process-wide setting that threads would race on. */
void pmnf_numeric_init(void);

/* NULL only when out of memory. */
pmnf_modeler *pmnf_modeler_new(const pmnf_options *o);
void pmnf_modeler_free(pmnf_modeler *m);

/* Fits one series. Returns 0, or -1 with a message in err (no points, more
 * than PMNF_MAX_PARAMS parameters, a NaN or infinite value or coordinate,
 * one beyond PMNF_MAX_MAGNITUDE; or the arithmetic failed for every
 * hypothesis and the mean: then out->warnings is PMNF_WARN_NUMERIC_FAILURE
 * and err starts "numeric failure"). A model whose hypotheses partly failed
 * carries PMNF_WARN_NUMERIC_FAILURE; a model never holds a NaN or infinity. */
int pmnf_fit(pmnf_modeler *m, const pmnf_data *d, pmnf_model *out, char *err, size_t errcap);
/* The same with the repetitions (r may be NULL); Extra-P's modeler ignores them. */
int pmnf_fit_reps(pmnf_modeler *m, const pmnf_data *d, const pmnf_reps *r, pmnf_model *out,
                  char *err, size_t errcap);

/* Value and 95% prediction interval at point (with noise_rel2:
 * y +- t * sqrt(sigma2 g' C g + max(sigma2, noise_rel2 y^2)); the lower end
 * of a positive prediction at least 0 when every measured value was above
 * 0, diag.vmin). When the model has no
 * interval (PMNF_WARN_NO_INTERVAL), lo = hi = value and 1 is returned;
 * otherwise 0. Never produces NaN for finite input where f is finite. */
int pmnf_predict(const pmnf_model *m, const double *point, double *value, double *lo, double *hi);

/* The model's value at point: f, or for a segmented model the segment that
 * holds the point. */
double pmnf_model_eval(const pmnf_model *m, const double *point);

/* ---- the extrapolation horizon (horizon.c) ------------------------------ */

/* Predictions are checked from the data to PMNF_HORIZON times the largest
 * measured value of every parameter (see horizon.c for the path and rules). */
#define PMNF_HORIZON 8.0
#define PMNF_PATH_IN 8   /* points over the measured range of a parameter */
#define PMNF_PATH_OUT 12 /* points from there to the horizon */
#define PMNF_PATH_LINE (PMNF_PATH_IN + PMNF_PATH_OUT)
#define PMNF_PATH_MAX (PMNF_MAX_PARAMS * PMNF_PATH_LINE + PMNF_PATH_OUT)
enum {
    PMNF_PATH_NONPOSITIVE = 1, /* a prediction <= 0 */
    PMNF_PATH_COLLAPSE = 2,    /* a growing series predicted below half its smallest value */
    PMNF_PATH_REVERSED = 4,    /* beyond the data, against the measured direction */
    PMNF_PATH_FLOOR = 8,       /* a prediction below half the smallest measured value */
};
typedef struct pmnf_path {
    int nparams;
    int all_positive;          /* every measured value > 0: the rules apply */
    double ymin;               /* the smallest measured value */
    double lo[PMNF_MAX_PARAMS], hi[PMNF_MAX_PARAMS]; /* measured range per parameter */
    int dir[PMNF_MAX_PARAMS];  /* +1 the data grow with the parameter, -1 fall, 0 flat */
} pmnf_path;
void pmnf_path_init(pmnf_path *P, const pmnf_data *d);
/* Number of path points and point i's coordinates. */
int pmnf_path_npoints(const pmnf_path *P);
void pmnf_path_point(const pmnf_path *P, int i, double *point);
/* Coordinate k (0 .. PMNF_PATH_LINE) of parameter p's part of the path. */
double pmnf_path_x(const pmnf_path *P, int p, int k);
/* PMNF_PATH_* flags of the values v at the path points (0 when some measured
 * value is not positive: no rule applies). */
unsigned pmnf_path_judge(const pmnf_path *P, const double *v);
/* The same for a model. */
unsigned pmnf_path_check(const pmnf_path *P, const pmnf_model *m);

/* ---- choosing the modeler (choice.c) ---------------------------------- */

/* "extrap" | "robust" | "segmented" */
const char *pmnf_modeler_name(pmnf_modeler_kind k);
/* Returns 0 and sets *k, or -1 for an unknown name. */
int pmnf_modeler_parse(const char *name, pmnf_modeler_kind *k);
/* pmnf_options_set() plus the key "modeler", remembering which keys were
 * given so that pmnf_options_check() can refuse those that do not apply. */
int pmnf_options_apply(pmnf_options *o, const char *key, const char *value, char *err,
                       size_t errcap);
/* 0, or -1 naming (in *key and err) the first option given that the chosen modeler does not use
 * (the robust modeler has its own way of choosing: use_crossvalidation,
 * compare_with_rss, minimum_term_contribution,
 * allow_combinations_of_sums_and_products, single_parameter_point_selection
 * and force_combination_exponents belong to Extra-P's). */
int pmnf_options_check(const pmnf_options *o, const char **key, char *err, size_t errcap);

/* The text of one warning bit, as Extra-P words it where it has one. */
const char *pmnf_warning_text(unsigned bit);
/* The stable code of one warning bit ("few_points", "poor_fit", ...), the
 * name clients match on; "" for an unknown bit. */
const char *pmnf_warning_code(unsigned bit);

/* The fewest distinct values any parameter takes among n coordinates
 * (n x nparams, row-major): what the rule "at least 5 values of every
 * parameter" is checked on. */
int pmnf_fewest_distinct(const double *coords, int n, int nparams);

/* Mean or median of n values (n > 0). scratch needs n doubles for the median. */
double pmnf_aggregate(const double *values, int n, pmnf_measure measure, double *scratch);

#endif
