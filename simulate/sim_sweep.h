/*
 * sim_sweep.h — the answers built on sim_run (paper 002, §4): throughput for
 * each number of workers W and of servers M, as the mean over R seeded
 * replications with its 95% interval (Student t), each measured over the
 * steady window after a warm-up (sim_window.h; when the warm-up leaves the
 * window of any replication empty, every replication of that point gives
 * the whole run's W·N / makespan instead, so no mean mixes the two),
 * utilisation of each
 * resource, the step-time breakdown, the saturation point per M, and the
 * cheapest (W, M) reaching a throughput at given prices.
 *
 * Pure: no I/O, no globals (GSL for the t quantile).
 */
#ifndef PERFCAST_SIM_SWEEP_H
#define PERFCAST_SIM_SWEEP_H

#include "simulate/sim_run.h"

#define SIM_MAX_LIST 1024    /* values of W or M in one sweep */
#define SIM_MAX_REPS 100
#define SIM_MAX_TOTAL_STEPS 100000000
#define SIM_SATURATION_GAIN 0.05

typedef struct sim_sweep_opts {
    const int *workers;  /* W values, ascending */
    int nworkers;
    const int *servers;  /* M values */
    int nservers;
    int reps;            /* R >= 1 */
    int steps;           /* N per worker */
    int total_steps;     /* > 0: the configuration's steps instead (paper 002 §4 counts a
                            trace's steps over all workers): N = ⌈total_steps / W⌉ */
    int warmup;          /* steps left out at the start (SIM_DEFAULT_WARMUP in the API);
                            0 = throughput over the whole run */
    uint64_t seed;
    double bandwidth;    /* bytes/s */
    double win;          /* bytes */
    int flow_control;
    double alpha, beta;  /* parsing overhead */
    double batch_size;   /* samples per step; 0 = the graph's */
    long max_events;     /* stop with an error beyond this many events; 0 = no cap */
    const char *max_events_field; /* what that error names; NULL: "steps" */
} sim_sweep_opts;

typedef struct sim_point {
    int workers, servers;
    int steps_per_worker;            /* N at this W */
    double steps_per_s, lo, hi;      /* mean over R, 95% interval */
    double samples_per_s, samples_lo, samples_hi; /* × batch size (0 when unknown) */
    int window_fallback;             /* replications whose warm-up left the window empty:
                                        when > 0 the figures above are the whole run's */
    double window_from, window_to, window_steps; /* the window measured over, means over R */
    sim_result mean;                 /* the other figures averaged over R */
} sim_point;

typedef struct sim_sweep_result {
    int npoints;
    sim_point *points;   /* for each M (in the order given), W ascending */
    int nservers;
    int saturation[SIM_MAX_LIST]; /* per M: smallest W beyond which one more worker
                                     adds < 5% of a worker's average share; 0 when
                                     not reached up to the largest W */
    long events;
    double simulated;    /* s of simulated time over all runs */
    double batch_size;
} sim_sweep_result;

/* N at W workers: o->steps, or ⌈o->total_steps / W⌉. */
int sim_sweep_steps(const sim_sweep_opts *o, int workers);

/* Runs every (M, W, replication). Returns 0, or -1 with e. */
int sim_sweep(const sim_graph *g, const sim_sweep_opts *o, sim_sweep_result *out, sim_error *e);
void sim_sweep_free(sim_sweep_result *r);

/* Mean of v[0..n) and the half-width of its 95% interval (0 when n < 2). */
void sim_mean_ci(const double *v, int n, double *mean, double *half);

/* Smallest W (of w[0..n), ascending, with throughput thr) beyond which
 * each added worker up to the next W adds less than gain times the average
 * throughput per worker at W, (thr[i+1] - thr[i]) / (w[i+1] - w[i]) <
 * gain · thr[i] / w[i]; 0 when none (throughput keeps growing up to the
 * largest W). */
int sim_saturation(const int *w, const double *thr, int n, double gain);

/* The point with the lowest price per hour W·price_worker + M·price_server
 * whose mean samples/s (steps/s when the batch size is unknown) reaches
 * target; ties go to the higher throughput. -1 when none does. */
int sim_cheapest(const sim_sweep_result *r, double target, double price_worker,
                 double price_server);

#endif
