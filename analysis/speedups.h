/*
 * speedups.h — Extra-Deep's speedup Δ, parallel efficiency ε and cost C
 * (Eq. 11-14) of one metric per kernel and per part (comp, comm, mem, the
 * work between steps, the epoch), each measured at every coordinate and
 * modelled with the PMNF, and the ranking of the kernels by the speedup
 * they achieve at a point ("which kernel benefits most / least from
 * scaling", §3.1). GET /v1/experiments/{id}/speedups (api/speedups.c)
 * reads the measurements and renders the table.
 *
 * P_1 of a coordinate is the first measured point of its series along x_1
 * (the first parameter) at its values of the other parameters
 * (modeling/scaling.h). Models need SPEEDUP_MIN_VALUES distinct values of
 * every parameter, like every other model; a series with fewer says why.
 */
#ifndef PERFCAST_ANALYSIS_SPEEDUPS_H
#define PERFCAST_ANALYSIS_SPEEDUPS_H

#include "analysis/measurement.h"
#include "analysis/problem.h"
#include "modeling/modeler.h"

#define SPEEDUP_MIN_VALUES 5

/* One series: a part or a kernel, with its values per app coordinate. */
typedef struct sp_series {
    const char *name, *category;
    double *value, *delta, *eps, *ch; /* npoints each */
    pmnf_model model[3];
    int present[3];
    char reason[3][200];
    double at[3]; /* the models (else the measured values) at the point */
    double at_lo[3], at_hi[3]; /* the models' 95% intervals there (Δ's at most 100%) */
    int at_interval[3];        /* 1: at_lo/at_hi hold one (a model with an interval) */
} sp_series;

/* The series of one answer over the measured coordinates. */
typedef struct sp_table {
    double *coords, *ranks, *block; /* coords: np x nparams, ascending; ranks per coordinate */
    int np, nparams;
    sp_series *s;                   /* the application parts and the kernels, by level and name */
    int ns;
} sp_table;

/* The rank count (data_parallel × model_parallel) at a coordinate. */
typedef double (*sp_ranks_fn)(const void *ctx, const double *point);

/* The coordinates and series of rows (those with nparams parameters; the
 * series' names point into the rows, which outlive t). 0, or -1 when out of
 * memory. */
int sp_build(sp_table *t, const store_measurement_row *rows, int nrows, int nparams,
             sp_ranks_fn ranks, const void *ctx);
/* The largest measured coordinate (the largest product) into at. */
void sp_largest(const sp_table *t, double *at);
/* Δ, ε and core-hours of every series at each coordinate, their models
 * (negative exponents when strong; cost only from metric time) and their
 * values at the point at (the models', else the measured ones). 0, or -1
 * when out of memory. */
int sp_compute(sp_table *t, const double *at, int strong, int is_time, double cores_per_rank);
/* 0 when every model of a series (after sp_compute) has a finite value at
 * the point at; else -1 with p: 400 naming the parameter whose value goes
 * too far (analysis/finite_point.h), so that no Δ, ε or core-hours is
 * answered null for an overflow. names: the parameters'. */
int sp_check_finite(const sp_table *t, const char *const *names, const double *at,
                    an_problem *p);
/* The kernels (series with a category) into order, ranked by Δ at the
 * point, highest first, unknown last; returns their number. */
int sp_ranking(const sp_table *t, sp_series **order);
void sp_table_free(sp_table *t);

#endif
