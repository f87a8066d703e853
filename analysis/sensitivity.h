/*
 * sensitivity.h — the Taguchi sensitivity of one measured series (paper 003
 * §2.1) from the stored repetitions: the runs ordered by point and levels,
 * the columns of the Taguchi problem (the parameters, their measured values
 * as levels; the factors too, their declared levels, when the rows span
 * several level combinations), optionally the scaling efficiency SE =
 * t_baseline / t per repetition along one parameter instead of the values
 * themselves (paper 003 §3.2, Fig. 12), then the S/N ratios, the mean S/N
 * per level and the ranking (sweep/sweep_sensitivity.h), and the answer's
 * "factors". The service's GET .../sensitivity renders it (api/sensitivity.c).
 * Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ANALYSIS_SENSITIVITY_H
#define PERFCAST_ANALYSIS_SENSITIVITY_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/measurement.h"
#include "analysis/noisy.h"
#include "sweep/sweep_sensitivity.h"

typedef struct sens_request {
    int larger;               /* larger values are better */
    int efficiency;           /* over the scaling efficiency along parameter q */
    int q;
    const double *baseline;   /* q's baseline value; NULL: its smallest measured one */
    int factor_columns;       /* the factors are columns too (rows of several combinations) */
    const char *factors_spec; /* {"factors":{"name":["level",...],...}} (factor_columns) */
} sens_request;

/* The Taguchi columns and their result. */
typedef struct sens_result {
    store_measurement_row *rows; /* the runs the S/N is over, by point then levels */
    int n;
    int left_out;                /* efficiency: runs without their baseline measured */
    int ncols, nfactor_cols;     /* nfactor_cols: factors among the columns, after the parameters */
    int *level, *nlevels, *offset;
    double *y, *distinct;        /* distinct: the parameters' values, n per column */
    json_t *declared;            /* per factor column its declared levels (an array) */
    store_measurement_row *sel;  /* efficiency: the runs with a baseline (rows points here) */
    double *base;
    sweep_sn_result r;
    int solved;
} sens_result;

enum {
    SENS_OK = 0,
    SENS_NOMEM = -1,
    SENS_NO_BASELINE = -2,  /* efficiency: no run has its baseline measured */
    SENS_UNDECLARED = -3,   /* row *bad's levels are not declared ones */
    SENS_BAD_VALUE = -4,    /* row *bad has a repetition <= 0, not finite, or none */
    SENS_FAILED = -5        /* err says why */
};

/* The sensitivity of rows[0..n) (n >= 1; reordered: by point, then levels)
 * into *out (sens_result_free() it whatever the outcome). Returns SENS_OK
 * or one of the codes above, with *bad the row (an index into out->rows)
 * where there is one. */
int sens_compute(const noisy_names *nm, store_measurement_row *rows, int n,
                 const sens_request *rq, sens_result *out, int *bad, char *err, size_t errcap);
void sens_result_free(sens_result *s);

/* The answer's "factors", ranked: per column its kind, range, normalized
 * range, best level and its levels' mean S/N; NULL when out of memory. */
json_t *sens_factors_json(const noisy_names *nm, const sens_result *s);

#endif
