/*
 * sim_run.h — one discrete-event simulation of W workers training with
 * asynchronous SGD against M parameter servers (paper 002, Algorithm 3.1):
 *
 *   - each worker runs N steps one after the other, each sampled with
 *     replacement from the profiled steps (seeded);
 *   - one scheduler per (worker, resource) runs at most one chunk at a
 *     time; an operation enters its scheduler when every operation it waits
 *     for has finished; a step is over when all its operations are;
 *   - computations (worker, server cores) take their duration: every worker
 *     has its own cores at the server too (§3.2.3);
 *   - the network parts are HTTP/2 streams (§3.2.2): the scheduler of a
 *     link serves its streams round-robin in the order they arrived, a
 *     stream's first service sending at most WIN bytes, its second the rest
 *     (flow control off, §3.3: whole streams in arrival order);
 *   - bandwidth (§3.1, §5): the connections to one server in one direction
 *     share its bandwidth B equally among the workers active on it (1/n);
 *     a worker talking to several servers at once gets max-min fair shares
 *     of its own link B, each capped by its 1/n at that server — for two
 *     servers exactly §5's rule (1/n at the contended server, up to 1 - 1/n
 *     at the other).
 *
 * Throughput (§4): the workers start all at once, so the first steps are
 * slower than the steady state, and at the end fewer and fewer workers are
 * still running. With a warm-up of K steps, steps/s is measured over the
 * window (t_a, t_b]: t_a is when the K-th step over all workers ends (in
 * the order the simulation handles them; steps ending at t_a too are left
 * out), t_b when the first worker ends its N-th step (steps ending at t_b
 * too are counted), so all W workers run throughout it; steps/s = the steps
 * ending in it / (t_b - t_a). When no step ends in it (K at least the steps
 * ending by t_b), and with K = 0, steps/s is the whole run's W·N / makespan.
 *
 * Events sit in an indexed binary heap with one entry per slot (sim_queue.h); a
 * chunk whose rate changes is rescheduled, never stepped in time. Pure: no
 * I/O, no globals; the random state comes from the configuration's seed.
 */
#ifndef PERFCAST_SIM_RUN_H
#define PERFCAST_SIM_RUN_H

#include <stdint.h>

#include "simulate/sim_prep.h"

#define SIM_DEFAULT_WIN (28.0 * 1000 * 1000) /* bytes: the paper's measured mean */
#define SIM_DEFAULT_WARMUP 50 /* steps left out at the start (§4) */
#define SIM_MAX_WARMUP 100000000

/* One finished chunk: worker, slot, compiled step operation (index into the
 * sampled step's ops), profiled step, start and end time (s), and whether
 * it ended the operation. */
typedef void (*sim_trace_fn)(void *arg, int worker, int slot, int step, int op, double start,
                             double end, int last);

typedef struct sim_config {
    int workers;        /* W >= 1 */
    double bandwidth;   /* B, bytes/s per server and direction (and per worker) */
    double win;         /* HTTP/2 flow-control window, bytes (> 0) */
    int flow_control;   /* 1: multiplexing with win; 0: whole streams in order */
    int steps;          /* N steps per worker >= 1 */
    int warmup;         /* steps over all workers left out at the start (0..SIM_MAX_WARMUP):
                           0 = throughput over the whole run */
    uint64_t seed;
    sim_trace_fn trace; /* optional */
    void *trace_arg;
} sim_config;

typedef struct sim_result {
    double makespan;        /* s: until the last worker ends its N-th step */
    long steps;             /* W·N */
    double steps_per_s;     /* window_steps / (window_to - window_from) */
    double run_steps_per_s; /* the whole run's: steps / makespan */
    /* the window steps/s is measured over: the steps ending in (from, to];
     * with no warm-up, or when the warm-up leaves no step in the window,
     * the whole run (0, makespan] with W·N steps */
    double window_from, window_to;
    long window_steps;
    int window_fallback;    /* 1: a warm-up was asked but left no step in the window */
    long events;            /* chunk completions handled */
    /* utilisation in [0, 1] and the step-time breakdown: over the whole run
     * (the makespan), not the window */
    double util_worker;     /* mean over workers of the busy fraction of their cores */
    double util_ps[SIM_MAX_SERVERS];       /* the same for the server cores */
    double util_down[SIM_MAX_SERVERS];     /* bytes carried / (B · makespan) */
    double util_up[SIM_MAX_SERVERS];
    /* mean time per step (s): computing at the worker, else transferring
     * (some link of the worker busy), else waiting (server cores or
     * nothing); they add up to the mean step time */
    double step_compute, step_transfer, step_wait;
} sim_result;

/* Runs the simulation of program p. Returns 0, or -1 with e (invalid
 * configuration naming the field, out of memory). */
int sim_run(const sim_program *p, const sim_config *c, sim_result *out, sim_error *e);

#endif
