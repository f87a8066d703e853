/*
 * iteration_model.h — kernel times at an unmeasured value of a parameter
 * (a batch size, say), modelled across traces of the same job measured at
 * other values, for the critical path (paper 001's "kernel performance
 * models" {M} of Algorithm 1, with perfcast's own PMNF modeler instead of
 * microbenchmarks).
 *
 * Per kernel name of the reference trace (traces[0]) that every trace has:
 * the mean duration of one launch over the trace's steps, fitted as a PMNF
 * function of the parameter (modeling/modeler.h) and evaluated at `at`
 * with its 95% prediction interval. The result is three what-if tables
 * (xg_critpath.h): the values and the interval's ends, in seconds per
 * launch; running Algorithm 1 on the reference trace's graph with each
 * gives the iteration at `at` and an interval (every kernel at its lower,
 * or upper, end: wider than the iteration's own interval). Kernels missing
 * from some trace keep their measured times (counted in `skipped`).
 */
#ifndef PERFCAST_ANALYSIS_ITERATION_MODEL_H
#define PERFCAST_ANALYSIS_ITERATION_MODEL_H

#include <jansson.h>

#include "execgraph/xg_critpath.h"

typedef struct iteration_kmodels {
    xg_kt_entry *value, *lo, *hi; /* n entries each; names point into traces[0] */
    int n;
    int skipped;                   /* kernels of traces[0] not in every trace */
    json_t *models;                /* [{"name","function","smape","at","interval"}] */
} iteration_kmodels;

/* traces[0..n) measured at x[0..n) (distinct values, n >= 2). 0, or -1 with err. */
int iteration_model_kernels(const xg_trace *const *traces, const double *x, int n, double at,
                            iteration_kmodels *out, xg_error *err);
void iteration_kmodels_free(iteration_kmodels *m);

/* A table of kernel times by kernel name (kt[0..n), as m->value) as the
 * device time of each of g's device events (us per event index of g's
 * trace, NAN where no entry names the kernel: xg_cp_options.dev_us), for
 * the steps of g computed as with the table. Malloc'ed; NULL when out of
 * memory. */
double *iteration_kmodels_dev_us(const xg_graph *g, const xg_kt_entry *kt, int n);

#endif
