/*
 * sim_sweep.c — replications, intervals, saturation and the cheapest setup
 * over a grid of (W, M) (sim_sweep.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "simulate/sim_rng.h"
#include "simulate/sim_sweep.h"

void sim_mean_ci(const double *v, int n, double *mean, double *half)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    *mean = n ? s / n : NAN;
    *half = 0;
    if (n < 2)
        return;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - *mean) * (v[i] - *mean);
    *half = gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(ss / (n - 1) / n);
}

int sim_saturation(const int *w, const double *thr, int n, double gain)
{
    for (int i = 0; i + 1 < n; i++) {
        int dw = w[i + 1] - w[i];
        if (dw <= 0 || !(thr[i] > 0))
            continue;
        /* what one added worker brings, against what a worker brings on
         * average at w[i]: linear scaling never saturates, however far
         * apart the points are */
        double added = (thr[i + 1] - thr[i]) / dw, share = thr[i] / w[i];
        if (added < gain * share)
            return w[i];
    }
    return 0;
}

int sim_cheapest(const sim_sweep_result *r, double target, double price_worker,
                 double price_server)
{
    int best = -1;
    double best_price = INFINITY;
    for (int i = 0; i < r->npoints; i++) {
        const sim_point *p = &r->points[i];
        double thr = r->batch_size > 0 ? p->samples_per_s : p->steps_per_s;
        if (!(thr >= target))
            continue;
        double price = p->workers * price_worker + p->servers * price_server;
        if (price < best_price ||
            (price == best_price && thr > (r->batch_size > 0 ? r->points[best].samples_per_s
                                                             : r->points[best].steps_per_s))) {
            best = i;
            best_price = price;
        }
    }
    return best;
}

void sim_sweep_free(sim_sweep_result *r)
{
    if (r) {
        free(r->points);
        memset(r, 0, sizeof *r);
    }
}

static void add_result(sim_result *acc, const sim_result *x, int m, double k)
{
    acc->makespan += x->makespan * k;
    acc->steps = x->steps;
    acc->steps_per_s += x->steps_per_s * k;
    acc->events += x->events;
    acc->util_worker += x->util_worker * k;
    for (int s = 0; s < m; s++) {
        acc->util_ps[s] += x->util_ps[s] * k;
        acc->util_down[s] += x->util_down[s] * k;
        acc->util_up[s] += x->util_up[s] * k;
    }
    acc->step_compute += x->step_compute * k;
    acc->step_transfer += x->step_transfer * k;
    acc->step_wait += x->step_wait * k;
}

static double mean_of(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s / n;
}

static int check_opts(const sim_sweep_opts *o, sim_error *e)
{
    if (o->nworkers < 1 || o->nworkers > SIM_MAX_LIST) {
        sim_error_set(e, NULL, -1, "workers", "1..%d values of workers", SIM_MAX_LIST);
        return -1;
    }
    if (o->nservers < 1 || o->nservers > SIM_MAX_LIST) {
        sim_error_set(e, NULL, -1, "servers", "1..%d values of servers", SIM_MAX_LIST);
        return -1;
    }
    for (int i = 0; i < o->nworkers; i++)
        if (o->workers[i] < 1 || o->workers[i] > SIM_MAX_WORKERS ||
            (i && o->workers[i] <= o->workers[i - 1])) {
            sim_error_set(e, NULL, -1, "workers",
                          "workers must be ascending values in 1..%d (got %d)", SIM_MAX_WORKERS,
                          o->workers[i]);
            return -1;
        }
    for (int i = 0; i < o->nservers; i++)
        if (o->servers[i] < 1 || o->servers[i] > SIM_MAX_SERVERS) {
            sim_error_set(e, NULL, -1, "servers", "servers must be 1..%d (got %d)",
                          SIM_MAX_SERVERS, o->servers[i]);
            return -1;
        }
    if (o->warmup < 0 || o->warmup > SIM_MAX_WARMUP) {
        sim_error_set(e, NULL, -1, "warmup_steps", "the warm-up must be 0..%d steps",
                      SIM_MAX_WARMUP);
        return -1;
    }
    if (o->total_steps < 0 || o->total_steps > SIM_MAX_TOTAL_STEPS) {
        sim_error_set(e, NULL, -1, "total_steps", "total_steps must be 1..%d steps over all "
                      "workers (0: steps per worker instead)", SIM_MAX_TOTAL_STEPS);
        return -1;
    }
    if (o->reps < 1 || o->reps > SIM_MAX_REPS) {
        sim_error_set(e, NULL, -1, "replications", "replications must be 1..%d", SIM_MAX_REPS);
        return -1;
    }
    return 0;
}

int sim_sweep_steps(const sim_sweep_opts *o, int workers)
{
    return o->total_steps > 0 ? (o->total_steps + workers - 1) / workers : o->steps;
}

static int sweep_server(const sim_graph *g, const sim_sweep_opts *o, int mi,
                        sim_sweep_result *out, sim_error *e)
{
    sim_program p;
    if (sim_prepare(g, o->servers[mi], o->alpha, o->beta, &p, e))
        return -1;
    double thr[SIM_MAX_REPS], run_thr[SIM_MAX_REPS], sat_thr[SIM_MAX_LIST];
    double from[SIM_MAX_REPS], to[SIM_MAX_REPS], wsteps[SIM_MAX_REPS], span[SIM_MAX_REPS];
    long whole = 0;
    int rc = -1;
    for (int wi = 0; wi < o->nworkers; wi++) {
        sim_point *pt = &out->points[out->npoints];
        memset(pt, 0, sizeof *pt);
        pt->workers = o->workers[wi];
        pt->servers = o->servers[mi];
        pt->steps_per_worker = sim_sweep_steps(o, pt->workers);
        for (int r = 0; r < o->reps; r++) {
            sim_config c = {.workers = pt->workers, .bandwidth = o->bandwidth, .win = o->win,
                            .flow_control = o->flow_control, .steps = pt->steps_per_worker,
                            .warmup = o->warmup, .seed = sim_rng_derive(o->seed, (uint64_t)r)};
            sim_result x;
            if (sim_run(&p, &c, &x, e))
                goto out;
            thr[r] = x.steps_per_s;
            run_thr[r] = x.run_steps_per_s;
            from[r] = x.window_from;
            to[r] = x.window_to;
            wsteps[r] = (double)x.window_steps;
            span[r] = x.makespan;
            whole = x.steps;
            pt->window_fallback += x.window_fallback;
            add_result(&pt->mean, &x, p.servers, 1.0 / o->reps);
            out->events += x.events;
            out->simulated += x.makespan;
            if (o->max_events > 0 && out->events > o->max_events) {
                sim_error_set(e, NULL, -1,
                              o->max_events_field ? o->max_events_field : "steps",
                              "the sweep needs more than %ld events; "
                              "ask for fewer steps, workers or replications", o->max_events);
                goto out;
            }
        }
        if (pt->window_fallback)
            for (int r = 0; r < o->reps; r++) { /* every replication over the whole run */
                thr[r] = run_thr[r];
                from[r] = 0;
                to[r] = span[r];
                wsteps[r] = (double)whole;
            }
        pt->window_from = mean_of(from, o->reps);
        pt->window_to = mean_of(to, o->reps);
        pt->window_steps = mean_of(wsteps, o->reps);
        double mean, half;
        sim_mean_ci(thr, o->reps, &mean, &half);
        pt->steps_per_s = mean;
        pt->lo = fmax(0, mean - half); /* a throughput; t(1) = 12.7 with two replications */
        pt->hi = mean + half;
        double b = out->batch_size;
        pt->samples_per_s = mean * b;
        pt->samples_lo = pt->lo * b;
        pt->samples_hi = pt->hi * b;
        sat_thr[wi] = mean;
        out->npoints++;
    }
    out->saturation[mi] = sim_saturation(o->workers, sat_thr, o->nworkers, SIM_SATURATION_GAIN);
    rc = 0;
out:
    sim_program_free(&p);
    return rc;
}

int sim_sweep(const sim_graph *g, const sim_sweep_opts *o, sim_sweep_result *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    if (check_opts(o, e) || sim_graph_check(g, e))
        return -1;
    out->points = calloc((size_t)o->nworkers * (size_t)o->nservers, sizeof *out->points);
    if (!out->points) {
        sim_error_set(e, NULL, -1, "", "out of memory");
        return -1;
    }
    out->nservers = o->nservers;
    out->batch_size = o->batch_size > 0 ? o->batch_size : g->batch_size;
    for (int mi = 0; mi < o->nservers; mi++)
        if (sweep_server(g, o, mi, out, e)) {
            sim_sweep_free(out);
            return -1;
        }
    return 0;
}
