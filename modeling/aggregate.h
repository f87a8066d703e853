/*
 * aggregate.h — from normalized profile rows to the values that get modeled
 * (design.md §3, Extra-Deep §2.2): medians over steps, then over ranks, then
 * over repetitions, warm-up steps excluded, phases (train, validation,
 * between steps) kept apart; and the epoch extrapolation (Eq. 2-10).
 *
 * Pure computation over plain arrays: no I/O, no globals.
 */
#ifndef PERFCAST_AGGREGATE_H
#define PERFCAST_AGGREGATE_H

#include <stddef.h>

/* One row of one upload of one coordinate. */
typedef struct agg_row {
    int repetition;
    int rank;
    int phase;    /* 0 train, 1 validation, 2 between steps (profile_phase) */
    int step;
    int callpath; /* caller's index */
    int metric;   /* caller's index */
    double value;
} agg_row;

/* The aggregated value of one (callpath, metric, phase) at one coordinate. */
typedef struct agg_value {
    int callpath, metric, phase;
    double value;        /* median over repetitions of the median over ranks */
    int nreps;
    double *reps;        /* per repetition: median over ranks (ascending repetition) */
    int nranks;
    double *ranks;       /* per rank (ascending rank): median over repetitions of
                            the rank's median over steps */
    int *rank_ids;       /* the rank numbers */
    double *rank_reps;   /* nranks x nreps, rank-major: [k*nreps + r] is rank k's median
                            over steps in repetition r (NaN when the rank has no value
                            there); what the load-imbalance factor per repetition needs */
} agg_value;

typedef struct agg_result {
    size_t nvalues;
    agg_value *values;   /* sorted by (callpath, metric, phase) */
} agg_result;

/* How v(k,r) and V(r) are taken: the median (Extra-Deep) or the mean (the
 * per-step share of periodic work). */
typedef enum agg_measure { AGG_MEDIAN = 0, AGG_MEAN = 1 } agg_measure;

typedef struct agg_options {
    int warmup_steps;
    agg_measure measure;
} agg_options;

/* Aggregates the rows of one coordinate. Steps with index < warmup_steps
 * (train phase; validation and between-steps rows are not warm-up) are
 * excluded unless that would leave a rank with no step, in which case its
 * steps are all kept. A callpath missing from a step that exists (some
 * callpath was recorded in it) or from a rank that has steps of the phase
 * counts as 0 there (Eq. 1). Returns 0 or -1 (out of memory). */
int agg_coordinate_with(const agg_row *rows, size_t nrows, const agg_options *o,
                        agg_result *out);
/* The same for a part of a coordinate's rows (e.g. one callpath's): which
 * steps and ranks there are comes from frame[0..nframe) instead, rows whose
 * (repetition, rank, phase, step) are those of all rows of the coordinate
 * (their other fields are ignored; repeats are fine). With frame = rows it
 * is agg_coordinate_with. */
int agg_coordinate_framed(const agg_row *rows, size_t nrows, const agg_row *frame,
                          size_t nframe, const agg_options *o, agg_result *out);
/* The same with the median and warmup_steps. */
int agg_coordinate(const agg_row *rows, size_t nrows, int warmup_steps, agg_result *out);
void agg_result_free(agg_result *r);

/* Median of n values (n > 0); sorts a copy in scratch (n doubles). */
double agg_median(const double *v, size_t n, double *scratch);

/* Training set-up of an experiment (Extra-Deep Eq. 2-3). data_parallel (G)
 * and model_parallel (M) are evaluated by the caller for the coordinate. */
typedef struct agg_training {
    double train_samples;      /* D_t */
    double validation_samples; /* D_v */
    double batch_size;         /* B, per worker */
} agg_training;

/* n_t = floor((D_t / (G/M)) / B), n_v likewise. Returns -1 when G, M or B
 * is not positive. */
int agg_steps_per_epoch(const agg_training *t, double g, double m, double *n_t, double *n_v);

#endif
