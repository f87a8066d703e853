/*
 * iteration.h — Kavarakuntla et al.'s iteration model of S-SGD (paper 004
 * Eq. 1-7) from the per-step times of the training phases of each rank:
 *
 *   t_io    I/O (fetching the mini-batch)          t_f  forward
 *   t_h2d   host-to-device copies                  t_b  backward
 *   t_md    dividing the batch into mini-batches   t_u  model update
 *   t_c     gradient aggregation (communication)
 *
 *   Eq. 1  t_iter = t_io + t_h2d + t_f + t_b + t_u               (SGD)
 *   Eq. 2  t_iter = t_io + t_h2d + t_f + t_b + t_c + t_u         (S-SGD)
 *   Eq. 3  t_iter = t_io + t_h2d + t_md + max_i(t_f + t_b + t_c)_i + t_u
 *   Eq. 4  t_iter = t_io + t_h2d + t_md + t_f + t_b + t_u        (one GPU)
 *   Eq. 5  t_iter = max(t_f + t_b + t_u, t_io + t_h2d + t_md)    (pipelined)
 *
 * One iteration is one (repetition, step): its phase times are the mean over
 * the ranks (a GPU's time), except Eq. 3's max over the ranks. Over the
 * iterations: the mean ± sample standard deviation, as the paper reports,
 * and the median, as Extra-Deep aggregates. The speedups (Eq. 6-7) compare
 * two coordinates and are it_speedup's. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_ITERATION_H
#define PERFCAST_ITERATION_H

#include <stddef.h>

enum {
    IT_IO = 0, IT_H2D, IT_MD, IT_F, IT_B, IT_U, IT_C, IT_NPHASES,
    IT_EQ1 = IT_NPHASES, IT_EQ2, IT_EQ3, IT_EQ4, IT_EQ5, IT_NQ
};

/* "t_io", ..., "t_c", "eq1", ..., "eq5" */
const char *it_name(int q);

/* The time of one phase of one step of one rank (several rows of one cell
 * are summed). */
typedef struct it_row {
    int repetition, rank, step;
    int phase; /* IT_IO .. IT_C */
    double value;
} it_row;

typedef struct it_stats {
    double mean, sd, median; /* sd: sample standard deviation (0 for one iteration) */
} it_stats;

typedef struct it_result {
    int iterations;      /* (repetition, step) pairs */
    it_stats q[IT_NQ];
} it_result;

/* Statistics of rows[0..n) (train steps of one coordinate, warm-up already
 * left out). A phase without a row in a step of a rank is 0 there; the mean
 * is over the ranks that recorded the step. Returns 0, or -1 when out of memory;
 * out->iterations is 0 when there are no rows. */
int it_coordinate(const it_row *rows, size_t n, it_result *out);

/* Eq. 6: S = (N_k/N_1)·t_1/t_k, the paper's N_g·t_iter/t'_iter when the
 * baseline runs on N_1 = 1 GPU. Eq. 7 is the same applied to the overlapped
 * times max(t_io + t_h2d, t_f + t_b) and max(t_io + t_h2d, t_f + t_b + t_c). */
double it_speedup(double n1, double t1, double nk, double tk);

#endif
