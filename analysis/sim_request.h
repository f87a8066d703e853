/*
 * sim_request.h — a simulation request of the asynchronous-SGD simulator
 * (simulate/) as the HTTP API and `perfcast simulate` take it, its checks,
 * and the answer document both print:
 *
 *   {"workers": "1..16" | [1, 2, 4] | 16, "servers": [1, 2] | "1,2" | 1,
 *    "bandwidth": "10Gbit" | 1.25e9, "win": "28MB", "flow_control": true,
 *    "steps": 100 | "total_steps": 1000, "warmup_steps": 50, "replications": 5, "seed": 1,
 *    "batch_size": 32,
 *    "overhead": {"alpha": 2e-9, "beta": 5e-5},
 *    "target_samples_per_s": 1000, "price_per_worker_hour": 3.06,
 *    "price_per_server_hour": 1.59,
 *    "what_if": [{"bandwidth": "1Gbit"}, {"flow_control": false}, {"win": "4MB"}]}
 *
 * Only "bandwidth" is required. The answer: per M the points W with
 * throughput (mean and 95% interval over the replications) over the steady
 * window after "warmup_steps" steps (simulate/sim_window.h; 0: the whole
 * run), the window ("window": null and a coded warning window_fallback in
 * "warnings" when the warm-up left it empty and the figure is the whole
 * run's), utilisation and
 * step-time breakdown (over the whole run), the saturation point; the
 * what-ifs the same; the cheapest (W, M) reaching the target at the prices.
 */
#ifndef PERFCAST_ANALYSIS_SIM_REQUEST_H
#define PERFCAST_ANALYSIS_SIM_REQUEST_H

#include <jansson.h>

#include "ingest/simgraph.h"
#include "simulate/sim_sweep.h"

#define API_SIM_MAX_WHATIF 8
/* the code of the warning of a point whose warm-up left no step in its window */
#define SIM_WARN_WINDOW_FALLBACK "window_fallback"
/* Answered in the request (201) when the run needs at most this many events
 * and its graph has at most API_SIM_DIRECT_OPS operations (about 0.1 s of
 * simulation); any larger run, or any with ?job=always, is queued (202) for
 * a worker thread, so that no HTTP thread simulates for long. */
#define API_SIM_DIRECT_EVENTS 200000L
#define API_SIM_DIRECT_OPS 20000L
#define API_SIM_MAX_EVENTS 2000000000L  /* refused beyond this */

typedef struct api_sim_variant {
    double bandwidth, win;
    int flow_control;
} api_sim_variant;

typedef struct api_sim_request {
    int workers[SIM_MAX_LIST], nworkers;
    int servers[SIM_MAX_LIST], nservers;
    int reps, steps;
    int total_steps;    /* > 0: the configuration's steps over all workers instead of steps
                           per worker (N = ⌈total_steps / W⌉) */
    int warmup;         /* steps left out at the start; 0 = the whole run */
    uint64_t seed;
    api_sim_variant base;
    int nwhatif;
    api_sim_variant whatif[API_SIM_MAX_WHATIF];
    int has_overhead;
    double alpha, beta;
    double batch_size;  /* 0: the graph's */
    int has_target;
    double target, price_worker, price_server;
} api_sim_request;

/* Defaults: W = 1..16, M = 1, WIN 28 MB, flow control on, 100 steps, a
 * warm-up of 50, 5 replications, seed 1. */
void api_sim_request_default(api_sim_request *r);

/* Reads a request object over the defaults. Returns 0, or -1 with the
 * member in field and why in msg. */
int api_sim_request_parse(const json_t *body, api_sim_request *r, char *field, size_t fieldcap,
                          char *msg, size_t msgcap);

/* The number of chunk completions the request will need, about. */
double api_sim_request_events(const api_sim_request *r, const sim_graph *g);
/* The same from a graph's mean operations per step (the stored profile's
 * ops / steps), without the graph. */
double api_sim_request_events_of(const api_sim_request *r, double ops_per_step);

/* The member of the request that weighs most in its event count: of steps
 * (or total_steps), workers, replications, servers and what_if, the one
 * whose reduction to its least (1 step, W = 1, 1 replication, the first M,
 * no what-if) divides the count most; the first of them on a tie. What a
 * refusal for too many events names. */
const char *api_sim_request_heaviest(const api_sim_request *r);

/* Runs every sweep of the request on the document's graph (the request's
 * overhead over the document's) and builds the answer. NULL with e. */
json_t *api_sim_run(const simgraph_doc *d, const api_sim_request *r, sim_error *e);

/* The request as JSON (what a stored run keeps). */
json_t *api_sim_request_json(const api_sim_request *r);

#endif
