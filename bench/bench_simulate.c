/*
 * bench_simulate.c — speed of the asynchronous-SGD simulator (simulate/).
 *
 *   bench_simulate [--steps N] [--profiled P] [--layers L] [--wmax W] [--bandwidth BYTES/S]
 *
 * Generates an Inception-v3-sized step graph (bench/gen_stepgraph.h: 990
 * operations per step, P = 100 profiled steps) and sweeps W = 1..W (32) with
 * M = 1 and M = 2, N = 100 steps per worker, one replication, 10 Gbit/s,
 * WIN = 28 MB. Prints one JSON line per M and one for the whole sweep:
 * wall and CPU time on one core (goal <= 1 s), events handled, events per
 * CPU second and CPU nanoseconds per event, the simulated time of all runs
 * and the ratios wall/simulated and CPU/simulated (how much faster than the
 * training it stands for the simulation runs; the baseline measured in the
 * same run).
 * Then the same sweep with 100 steps per configuration (total_steps = 100:
 * N = ceil(100/W) per worker), the way the paper counts its 100 measured
 * steps (§4, Fig. 22).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/gen_stepgraph.h"
#include "simulate/sim_rng.h"
#include "simulate/sim_sweep.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: on a machine shared with other work the wall
 * clock also counts time spent waiting for a core. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int steps = 100, profiled = 100, layers = 110, wmax = 32;
    double bw = 1.25e9;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--steps"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--profiled"))
            profiled = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--layers"))
            layers = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--wmax"))
            wmax = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bandwidth"))
            bw = atof(argv[i + 1]);
        else {
            fprintf(stderr, "bench_simulate: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (steps < 1 || profiled < 1 || layers < 2 || wmax < 1 || wmax > SIM_MAX_WORKERS || !(bw > 0)) {
        fprintf(stderr, "bench_simulate: bad option value\n");
        return 2;
    }
    sim_graph g = gen_stepgraph(profiled, layers, 11);
    int *ws = malloc((size_t)wmax * sizeof *ws);
    for (int w = 0; w < wmax; w++)
        ws[w] = w + 1;
    double total_wall = 0, total_sim = 0, total_cpu = 0;
    long total_events = 0;
    for (int m = 1; m <= 2; m++) {
        sim_sweep_opts o = {.workers = ws, .nworkers = wmax, .servers = &m, .nservers = 1,
                            .reps = 1, .steps = steps, .seed = 1, .bandwidth = bw,
                            .win = SIM_DEFAULT_WIN, .flow_control = 1};
        sim_sweep_result r;
        sim_error e;
        double t0 = now_s(), c0 = cpu_s();
        if (sim_sweep(&g, &o, &r, &e)) {
            printf("{\"figure\": \"simulate_sweep\", \"error\": \"%s\"}\n", e.msg);
            return 1;
        }
        double wall = now_s() - t0, cpu = cpu_s() - c0;
        total_cpu += cpu;
        total_wall += wall;
        total_sim += r.simulated;
        total_events += r.events;
        printf("{\"figure\": \"simulate_sweep_m%d\", \"ops_per_step\": %d, \"steps_per_worker\": %d, "
               "\"workers\": \"1..%d\", \"wall_s\": %.4f, \"cpu_s\": %.4f, \"events\": %ld, \"events_per_s\": %.0f, "
               "\"simulated_s\": %.3f, \"wall_over_simulated\": %.6f, \"steps_per_s_w1\": %.3f, "
               "\"steps_per_s_wmax\": %.3f, \"saturation_w\": %d}\n",
               m, g.steps[0].nops, steps, wmax, wall, cpu, r.events, r.events / wall, r.simulated,
               wall / r.simulated, r.points[0].steps_per_s, r.points[wmax - 1].steps_per_s,
               r.saturation[0]);
        sim_sweep_free(&r);
    }
    printf("{\"figure\": \"simulate_sweep\", \"wall_s\": %.4f, \"cpu_s\": %.4f, \"goal_s\": 1.0, "
           "\"events\": %ld, \"events_per_cpu_s\": %.0f, \"cpu_ns_per_event\": %.1f, "
           "\"simulated_s\": %.3f, \"wall_over_simulated\": %.6f, \"cpu_over_simulated\": %.6f}\n",
           total_wall, total_cpu, total_events, total_events / total_cpu,
           total_cpu / total_events * 1e9, total_sim, total_wall / total_sim,
           total_cpu / total_sim);
    /* 100 steps per configuration, split over the workers: the request's
     * total_steps, through sim_sweep as the service runs it (the graph
     * checked once, compiled once per M) */
    double wall2, sim2 = 0, cpu2 = 0;
    long ev2 = 0;
    double t0 = now_s(), c0 = cpu_s();
    for (int m = 1; m <= 2; m++) {
        sim_sweep_opts o = {.workers = ws, .nworkers = wmax, .servers = &m, .nservers = 1,
                            .reps = 1, .total_steps = steps, .seed = 1, .bandwidth = bw,
                            .win = SIM_DEFAULT_WIN, .flow_control = 1};
        sim_sweep_result r;
        sim_error e;
        if (sim_sweep(&g, &o, &r, &e)) {
            printf("{\"figure\": \"simulate_sweep_per_config\", \"error\": \"%s\"}\n", e.msg);
            return 1;
        }
        sim2 += r.simulated;
        ev2 += r.events;
        sim_sweep_free(&r);
    }
    wall2 = now_s() - t0;
    cpu2 = cpu_s() - c0;
    printf("{\"figure\": \"simulate_sweep_per_config\", \"steps_per_config\": %d, \"wall_s\": %.4f, "
           "\"cpu_s\": %.4f, \"goal_s\": 1.0, \"events\": %ld, \"events_per_cpu_s\": %.0f, "
           "\"cpu_ns_per_event\": %.1f, \"simulated_s\": %.3f, \"wall_over_simulated\": %.6f, "
           "\"cpu_over_simulated\": %.6f}\n",
           steps, wall2, cpu2, ev2, ev2 / cpu2, cpu2 / ev2 * 1e9, sim2, wall2 / sim2, cpu2 / sim2);
    free(ws);
    sim_graph_free(&g);
    return 0;
}
