/*
 * sim_request.c — simulation requests: parsing with the member named on
 * error, the sweeps they ask for, and the answer document (sim_request.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/sim_request.h"
#include "modeling/warning_json.h"
#include "simulate/sim_units.h"

void api_sim_request_default(api_sim_request *r)
{
    memset(r, 0, sizeof *r);
    r->nworkers = 16;
    for (int i = 0; i < 16; i++)
        r->workers[i] = i + 1;
    r->nservers = 1;
    r->servers[0] = 1;
    r->reps = 5;
    r->steps = 100;
    r->warmup = SIM_DEFAULT_WARMUP;
    r->seed = 1;
    r->base = (api_sim_variant){0, SIM_DEFAULT_WIN, 1};
}

static int fail(char *field, size_t fcap, char *msg, size_t mcap, const char *f, const char *m)
{
    snprintf(field, fcap, "%s", f);
    snprintf(msg, mcap, "%s", m);
    return -1;
}

/* A count list: "1..16", "1,2", [1, 2], or n (meaning 1..n for workers). */
static int read_list(const json_t *v, int hi, int upto, int *out, int *n)
{
    if (json_is_string(v)) {
        int k = sim_parse_list(json_string_value(v), 1, hi, out, SIM_MAX_LIST);
        if (k < 1)
            return -1;
        *n = k;
        return 0;
    }
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 1 || x > hi)
            return -1;
        if (upto) {
            for (int i = 0; i < x; i++)
                out[i] = i + 1;
            *n = (int)x;
        } else {
            out[0] = (int)x;
            *n = 1;
        }
        return 0;
    }
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > SIM_MAX_LIST)
        return -1;
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > hi ||
            (i && json_integer_value(x) <= out[i - 1]))
            return -1;
        out[i] = (int)json_integer_value(x);
    }
    *n = (int)json_array_size(v);
    return 0;
}

static int read_rate(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return *out > 0 && isfinite(*out) ? 0 : -1;
    }
    return json_is_string(v) ? sim_parse_bandwidth(json_string_value(v), out) : -1;
}

static int read_size(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return *out > 0 && isfinite(*out) ? 0 : -1;
    }
    return json_is_string(v) ? sim_parse_size(json_string_value(v), out) : -1;
}

static int read_variant(const json_t *o, api_sim_variant *v, const char *prefix, char *field,
                        size_t fcap, char *msg, size_t mcap)
{
    char f[64];
    json_t *x;
    if ((x = json_object_get(o, "bandwidth")) && read_rate(x, &v->bandwidth)) {
        snprintf(f, sizeof f, "%sbandwidth", prefix);
        return fail(field, fcap, msg, mcap, f,
                    "bandwidth must be positive: bytes/s or a string such as \"10Gbit\" or "
                    "\"125MB/s\"");
    }
    if ((x = json_object_get(o, "win")) && read_size(x, &v->win)) {
        snprintf(f, sizeof f, "%swin", prefix);
        return fail(field, fcap, msg, mcap, f,
                    "win must be a positive size: bytes or a string such as \"28MB\"");
    }
    if ((x = json_object_get(o, "flow_control"))) {
        if (!json_is_boolean(x)) {
            snprintf(f, sizeof f, "%sflow_control", prefix);
            return fail(field, fcap, msg, mcap, f, "flow_control must be true or false");
        }
        v->flow_control = json_is_true(x);
    }
    return 0;
}

static const char *const known[] = {"workers", "servers", "bandwidth", "win", "flow_control",
                                    "steps", "total_steps", "warmup_steps", "replications", "seed",
                                    "batch_size",
                                    "overhead",
                                    "target_samples_per_s", "price_per_worker_hour",
                                    "price_per_server_hour", "what_if", NULL};

static int read_number(const json_t *o, const char *k, double lo, double hi, double *out)
{
    json_t *x = json_object_get(o, k);
    if (!x)
        return 0;
    if (!json_is_number(x) || !(json_number_value(x) >= lo) || !(json_number_value(x) <= hi))
        return -1;
    *out = json_number_value(x);
    return 0;
}

int api_sim_request_parse(const json_t *body, api_sim_request *r, char *field, size_t fcap,
                          char *msg, size_t mcap)
{
    char buf[160];
    if (!json_is_object(body))
        return fail(field, fcap, msg, mcap, "", "the request must be a JSON object");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)body, k, v)
    {
        int ok = 0;
        for (int i = 0; known[i]; i++)
            ok |= !strcmp(k, known[i]);
        if (!ok) {
            snprintf(buf, sizeof buf, "unknown member \"%.40s\"", k);
            return fail(field, fcap, msg, mcap, k, buf);
        }
    }
    if ((v = json_object_get(body, "workers")) &&
        read_list(v, SIM_MAX_WORKERS, 1, r->workers, &r->nworkers)) {
        snprintf(buf, sizeof buf, "workers must be 1..%d: a count W (1..W), \"1..16\", \"1,2,4\" "
                 "or an ascending array", SIM_MAX_WORKERS);
        return fail(field, fcap, msg, mcap, "workers", buf);
    }
    if ((v = json_object_get(body, "servers")) &&
        read_list(v, SIM_MAX_SERVERS, 0, r->servers, &r->nservers)) {
        snprintf(buf, sizeof buf, "servers must be 1..%d: a count, \"1,2\" or an ascending array",
                 SIM_MAX_SERVERS);
        return fail(field, fcap, msg, mcap, "servers", buf);
    }
    if (!json_object_get(body, "bandwidth") && !(r->base.bandwidth > 0))
        return fail(field, fcap, msg, mcap, "bandwidth",
                    "bandwidth is required (bytes/s, or \"10Gbit\", \"1Gbps\", \"125MB/s\")");
    if (read_variant(body, &r->base, "", field, fcap, msg, mcap))
        return -1;
    double x = r->steps;
    if (read_number(body, "steps", 1, 100000, &x) || x != floor(x))
        return fail(field, fcap, msg, mcap, "steps", "steps per worker must be an integer 1..100000");
    r->steps = (int)x;
    if ((v = json_object_get(body, "total_steps"))) {
        if (json_object_get(body, "steps"))
            return fail(field, fcap, msg, mcap, "total_steps",
                        "give steps (per worker) or total_steps (over all workers), not both");
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > SIM_MAX_TOTAL_STEPS) {
            snprintf(buf, sizeof buf, "total_steps must be an integer 1..%d (steps over all "
                     "workers: each of W runs ⌈total_steps / W⌉)", SIM_MAX_TOTAL_STEPS);
            return fail(field, fcap, msg, mcap, "total_steps", buf);
        }
        r->total_steps = (int)json_integer_value(v);
    }
    if ((v = json_object_get(body, "warmup_steps"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            json_integer_value(v) > SIM_MAX_WARMUP) {
            snprintf(buf, sizeof buf, "warmup_steps must be an integer 0..%d (steps over all "
                     "workers left out at the start; 0: the whole run)", SIM_MAX_WARMUP);
            return fail(field, fcap, msg, mcap, "warmup_steps", buf);
        }
        r->warmup = (int)json_integer_value(v);
    }
    x = r->reps;
    if (read_number(body, "replications", 1, SIM_MAX_REPS, &x) || x != floor(x)) {
        snprintf(buf, sizeof buf, "replications must be an integer 1..%d", SIM_MAX_REPS);
        return fail(field, fcap, msg, mcap, "replications", buf);
    }
    r->reps = (int)x;
    if ((v = json_object_get(body, "seed"))) {
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return fail(field, fcap, msg, mcap, "seed", "seed must be an integer >= 0");
        r->seed = (uint64_t)json_integer_value(v);
    }
    if (read_number(body, "batch_size", 0, 1e12, &r->batch_size))
        return fail(field, fcap, msg, mcap, "batch_size", "batch_size must be a number >= 0");
    if ((v = json_object_get(body, "overhead"))) {
        r->has_overhead = 1;
        if (!json_is_object(v) || read_number(v, "alpha", 0, 1, &r->alpha))
            return fail(field, fcap, msg, mcap, "overhead.alpha",
                        "overhead.alpha must be a number of seconds per byte >= 0");
        if (read_number(v, "beta", 0, 1e6, &r->beta))
            return fail(field, fcap, msg, mcap, "overhead.beta",
                        "overhead.beta must be a number of seconds >= 0");
    }
    if ((v = json_object_get(body, "target_samples_per_s"))) {
        r->has_target = 1;
        if (read_number(body, "target_samples_per_s", 0, 1e15, &r->target) || !(r->target > 0))
            return fail(field, fcap, msg, mcap, "target_samples_per_s",
                        "target_samples_per_s must be a number > 0");
    }
    if (read_number(body, "price_per_worker_hour", 0, 1e9, &r->price_worker))
        return fail(field, fcap, msg, mcap, "price_per_worker_hour",
                    "price_per_worker_hour must be a number >= 0");
    if (read_number(body, "price_per_server_hour", 0, 1e9, &r->price_server))
        return fail(field, fcap, msg, mcap, "price_per_server_hour",
                    "price_per_server_hour must be a number >= 0");
    if ((v = json_object_get(body, "what_if"))) {
        if (!json_is_array(v) || json_array_size(v) > API_SIM_MAX_WHATIF) {
            snprintf(buf, sizeof buf, "what_if must be an array of at most %d objects",
                     API_SIM_MAX_WHATIF);
            return fail(field, fcap, msg, mcap, "what_if", buf);
        }
        r->nwhatif = (int)json_array_size(v);
        for (int i = 0; i < r->nwhatif; i++) {
            json_t *o = json_array_get(v, (size_t)i);
            char prefix[32];
            snprintf(prefix, sizeof prefix, "what_if[%d].", i);
            r->whatif[i] = r->base;
            if (!json_is_object(o))
                return fail(field, fcap, msg, mcap, "what_if", "each what-if is an object");
            json_t *mv;
            json_object_foreach(o, k, mv)
            {
                if (strcmp(k, "bandwidth") && strcmp(k, "win") && strcmp(k, "flow_control")) {
                    snprintf(buf, sizeof buf, "what_if[%d]: unknown member \"%.40s\" (bandwidth, "
                             "win, flow_control)", i, k);
                    return fail(field, fcap, msg, mcap, "what_if", buf);
                }
            }
            if (read_variant(o, &r->whatif[i], prefix, field, fcap, msg, mcap))
                return -1;
        }
    }
    return 0;
}

double api_sim_request_events(const api_sim_request *r, const sim_graph *g)
{
    return api_sim_request_events_of(r, (double)sim_graph_nops(g) / (g->nsteps ? g->nsteps : 1));
}

double api_sim_request_events_of(const api_sim_request *r, double ops)
{
    double steps = 0;
    sim_sweep_opts o = {.steps = r->steps, .total_steps = r->total_steps};
    for (int i = 0; i < r->nworkers; i++) /* W workers × N steps each */
        steps += (double)r->workers[i] * sim_sweep_steps(&o, r->workers[i]);
    return ops * steps * r->nservers * r->reps * (1 + r->nwhatif);
}

const char *api_sim_request_heaviest(const api_sim_request *r)
{
    double all = api_sim_request_events_of(r, 1), best = 0;
    const char *name = r->total_steps > 0 ? "total_steps" : "steps";
    for (int k = 0; k < 5; k++) {
        api_sim_request x = *r;
        const char *member = NULL;
        switch (k) {
        case 0: /* one step per worker */
            member = r->total_steps > 0 ? "total_steps" : "steps";
            x.steps = 1;
            x.total_steps = x.total_steps > 0 ? 1 : 0;
            break;
        case 1:
            member = "workers";
            x.workers[0] = 1;
            x.nworkers = 1;
            break;
        case 2:
            member = "replications";
            x.reps = 1;
            break;
        case 3:
            member = "servers";
            x.nservers = 1;
            break;
        default:
            member = "what_if";
            x.nwhatif = 0;
        }
        double rest = api_sim_request_events_of(&x, 1);
        if (rest > 0 && all / rest > best) {
            best = all / rest;
            name = member;
        }
    }
    return name;
}

static json_t *interval(double mean, double lo, double hi)
{
    return json_pack("{s:f, s:[f, f]}", "mean", mean, "interval", lo, hi);
}

static json_t *per_server(const double *v, int m)
{
    json_t *a = json_array();
    for (int s = 0; s < m; s++)
        json_array_append_new(a, json_real(v[s]));
    return a;
}

static json_t *point_json(const sim_point *p)
{
    const sim_result *x = &p->mean;
    json_t *o = json_object();
    json_object_set_new(o, "workers", json_integer(p->workers));
    json_object_set_new(o, "steps_per_s", interval(p->steps_per_s, p->lo, p->hi));
    json_object_set_new(o, "samples_per_s", p->samples_per_s > 0
                                                ? interval(p->samples_per_s, p->samples_lo,
                                                           p->samples_hi)
                                                : json_null());
    json_object_set_new(o, "utilisation",
                        json_pack("{s:f, s:o, s:o, s:o}", "worker", x->util_worker, "ps",
                                  per_server(x->util_ps, p->servers), "downlink",
                                  per_server(x->util_down, p->servers), "uplink",
                                  per_server(x->util_up, p->servers)));
    json_object_set_new(o, "step_time",
                        json_pack("{s:f, s:f, s:f, s:f}", "total",
                                  x->step_compute + x->step_transfer + x->step_wait, "compute",
                                  x->step_compute, "transfer", x->step_transfer, "waiting",
                                  x->step_wait));
    json_object_set_new(o, "window", p->window_fallback
                                         ? json_null()
                                         : json_pack("{s:f, s:f, s:f}", "from_s", p->window_from,
                                                     "to_s", p->window_to, "steps",
                                                     p->window_steps));
    json_object_set_new(o, "steps_per_worker", json_integer(p->steps_per_worker));
    json_object_set_new(o, "makespan_s", json_real(x->makespan));
    return o;
}

/* Why point p has no window (its figures are the whole run's): a coded
 * warning (SIM_WARN_WINDOW_FALLBACK) naming the point. */
static json_t *fallback_warning(const char *prefix, const sim_point *p, int reps, int warmup,
                                int steps)
{
    char buf[320];
    snprintf(buf, sizeof buf, "%sservers %d, workers %d: the warm-up of %d steps leaves no step "
             "in the window, which ends when the first worker ends its step %d (in %d of %d "
             "replications); steps_per_s is the whole run's, W·N / makespan", prefix, p->servers,
             p->workers, warmup, steps, p->window_fallback, reps);
    json_t *w = pmnf_warning_json(SIM_WARN_WINDOW_FALLBACK, buf);
    if (w) {
        json_object_set_new(w, "servers", json_integer(p->servers));
        json_object_set_new(w, "workers", json_integer(p->workers));
        json_object_set_new(w, "warmup_steps", json_integer(warmup));
        json_object_set_new(w, "replications_without_window", json_integer(p->window_fallback));
        json_object_set_new(w, "replications", json_integer(reps));
    }
    return w;
}

/* One sweep of every M for variant v into a "results" array. */
static json_t *sweep_json(const simgraph_doc *d, const api_sim_request *r,
                          const api_sim_variant *v, sim_sweep_result *out, double *events,
                          double *simulated, const char *prefix, json_t *warnings, sim_error *e)
{
    sim_sweep_opts o = {.workers = r->workers, .nworkers = r->nworkers, .servers = r->servers,
                        .nservers = r->nservers, .reps = r->reps, .steps = r->steps,
                        .total_steps = r->total_steps, .warmup = r->warmup, .seed = r->seed, .bandwidth = v->bandwidth, .win = v->win,
                        .flow_control = v->flow_control,
                        .alpha = r->has_overhead ? r->alpha : d->alpha,
                        .beta = r->has_overhead ? r->beta : d->beta,
                        .batch_size = r->batch_size, .max_events = API_SIM_MAX_EVENTS,
                        .max_events_field = api_sim_request_heaviest(r)};
    if (sim_sweep(&d->graph, &o, out, e))
        return NULL;
    *events += (double)out->events;
    *simulated += out->simulated;
    json_t *results = json_array();
    int k = 0;
    for (int mi = 0; mi < r->nservers; mi++) {
        json_t *pts = json_array();
        for (int wi = 0; wi < r->nworkers; wi++, k++) {
            json_array_append_new(pts, point_json(&out->points[k]));
            if (out->points[k].window_fallback)
                json_array_append_new(warnings, fallback_warning(prefix, &out->points[k], r->reps,
                                                                 r->warmup,
                                                                 out->points[k].steps_per_worker));
        }
        json_t *res = json_pack("{s:i, s:o, s:o}", "servers", r->servers[mi],
                                "saturation_workers",
                                out->saturation[mi] ? json_integer(out->saturation[mi])
                                                    : json_null(),
                                "points", pts);
        /* no saturation point is named where throughput keeps growing; one
         * W compares nothing, so neither is said */
        if (!out->saturation[mi] && r->nworkers > 1)
            json_object_set_new(res, "no_saturation_up_to",
                                json_integer(r->workers[r->nworkers - 1]));
        json_array_append_new(results, res);
    }
    return results;
}

static json_t *variant_json(const api_sim_variant *v)
{
    return json_pack("{s:f, s:f, s:b}", "bandwidth_bytes_per_s", v->bandwidth, "win_bytes",
                     v->win, "flow_control", v->flow_control);
}

static json_t *cheapest_json(const api_sim_request *r, const sim_sweep_result *s)
{
    if (!r->has_target)
        return json_null();
    int k = sim_cheapest(s, r->target, r->price_worker, r->price_server);
    const char *unit = s->batch_size > 0 ? "samples/s" : "steps/s (no batch size known)";
    if (k < 0)
        return json_pack("{s:f, s:s, s:n, s:s}", "target", r->target, "unit", unit, "setup",
                         "reason", "no simulated (W, M) reaches the target");
    const sim_point *p = &s->points[k];
    double thr = s->batch_size > 0 ? p->samples_per_s : p->steps_per_s;
    double price = p->workers * r->price_worker + p->servers * r->price_server;
    return json_pack("{s:f, s:s, s:{s:i, s:i}, s:f, s:f, s:f}", "target", r->target, "unit", unit,
                     "setup", "workers", p->workers, "servers", p->servers, "throughput", thr,
                     "price_per_hour", price, "price_per_million",
                     thr > 0 ? price / (thr * 3600) * 1e6 : 0.0);
}

/* A what-if as the request states it (what api_sim_request_parse reads
 * back when a worker runs a queued request). */
static json_t *variant_request_json(const api_sim_variant *v)
{
    return json_pack("{s:f, s:f, s:b}", "bandwidth", v->bandwidth, "win", v->win, "flow_control",
                     v->flow_control);
}

json_t *api_sim_request_json(const api_sim_request *r)
{
    json_t *w = json_array(), *m = json_array(), *wi = json_array();
    for (int i = 0; i < r->nworkers; i++)
        json_array_append_new(w, json_integer(r->workers[i]));
    for (int i = 0; i < r->nservers; i++)
        json_array_append_new(m, json_integer(r->servers[i]));
    for (int i = 0; i < r->nwhatif; i++)
        json_array_append_new(wi, variant_request_json(&r->whatif[i]));
    json_t *o = json_pack("{s:o, s:o, s:f, s:f, s:b, s:i, s:i, s:i, s:I, s:o}", "workers", w,
                          "servers", m, "bandwidth", r->base.bandwidth, "win", r->base.win,
                          "flow_control", r->base.flow_control, "steps", r->steps,
                          "warmup_steps", r->warmup, "replications", r->reps, "seed",
                          (json_int_t)r->seed, "what_if", wi);
    if (r->total_steps > 0) { /* echoed as asked: one or the other */
        json_object_del(o, "steps");
        json_object_set_new(o, "total_steps", json_integer(r->total_steps));
    }
    if (r->batch_size > 0)
        json_object_set_new(o, "batch_size", json_real(r->batch_size));
    if (r->has_overhead)
        json_object_set_new(o, "overhead",
                            json_pack("{s:f, s:f}", "alpha", r->alpha, "beta", r->beta));
    if (r->has_target)
        json_object_set_new(o, "target_samples_per_s", json_real(r->target));
    json_object_set_new(o, "price_per_worker_hour", json_real(r->price_worker));
    json_object_set_new(o, "price_per_server_hour", json_real(r->price_server));
    return o;
}

json_t *api_sim_run(const simgraph_doc *d, const api_sim_request *r, sim_error *e)
{
    sim_sweep_result base;
    double events = 0, simulated = 0;
    json_t *warnings = json_array();
    json_t *results = sweep_json(d, r, &r->base, &base, &events, &simulated, "", warnings, e);
    if (!results) {
        json_decref(warnings);
        return NULL;
    }
    json_t *doc = variant_json(&r->base);
    json_object_set_new(doc, "steps_per_worker", r->total_steps > 0 ? json_null()
                                                                     : json_integer(r->steps));
    if (r->total_steps > 0) /* steps per worker vary with W: each point says its own */
        json_object_set_new(doc, "total_steps", json_integer(r->total_steps));
    json_object_set_new(doc, "warmup_steps", json_integer(r->warmup));
    json_object_set_new(doc, "replications", json_integer(r->reps));
    json_object_set_new(doc, "seed", json_integer((json_int_t)r->seed));
    json_object_set_new(doc, "batch_size", base.batch_size > 0 ? json_real(base.batch_size)
                                                                : json_null());
    json_object_set_new(doc, "overhead",
                        json_pack("{s:f, s:f}", "alpha", r->has_overhead ? r->alpha : d->alpha,
                                  "beta", r->has_overhead ? r->beta : d->beta));
    json_object_set_new(doc, "results", results);
    json_object_set_new(doc, "cheapest", cheapest_json(r, &base));
    sim_sweep_free(&base);
    json_t *whatifs = json_array();
    for (int i = 0; i < r->nwhatif; i++) {
        sim_sweep_result s;
        char prefix[32];
        snprintf(prefix, sizeof prefix, "what_if[%d]: ", i);
        json_t *res = sweep_json(d, r, &r->whatif[i], &s, &events, &simulated, prefix, warnings,
                                 e);
        if (!res) {
            json_decref(warnings);
            json_decref(whatifs);
            json_decref(doc);
            return NULL;
        }
        sim_sweep_free(&s);
        json_t *w = variant_json(&r->whatif[i]);
        json_object_set_new(w, "results", res);
        json_array_append_new(whatifs, w);
    }
    json_object_set_new(doc, "what_if", whatifs);
    json_object_set_new(doc, "warnings", warnings);
    json_object_set_new(doc, "events", json_real(events));
    json_object_set_new(doc, "simulated_s", json_real(simulated));
    json_object_set_new(doc, "units",
                        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "steps_per_s",
                                  "steps/s over all workers, in the window", "samples_per_s",
                                  "samples/s", "window",
                                  "s from the start (steps: ending in it), means over the "
                                  "replications",
                                  "utilisation",
                                  "fraction of the whole run busy (links: of bandwidth)",
                                  "step_time", "s per step over the whole run",
                                  "bandwidth_bytes_per_s", "bytes/s", "win_bytes", "bytes"));
    return doc;
}
