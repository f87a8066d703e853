/*
 * cmd_simulate.c — `perfcast simulate GRAPH`: the throughput of
 * asynchronous SGD with W workers and M parameter servers, simulated from
 * one worker's step graph or trace (ingest/simgraph.h, simulate/), offline.
 * Options become the same request the HTTP API takes (api/sim_request.h);
 * --json prints the API's answer document, otherwise a table per M and a
 * note for each point whose warm-up left no steady window.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sim_request.h"
#include "server/commands.h"

static int sim_usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "perfcast simulate: %s\n", msg);
    fputs("usage: perfcast simulate GRAPH --bandwidth 10Gbit [--workers 1..16] [--servers 1,2]\n"
          "         [--win 28MB] [--no-flow-control] [--steps 100 | --total-steps N]\n"
          "         [--warmup 50]\n"
          "         [--replications 5] [--seed 1]\n"
          "         [--batch-size B] [--alpha S_PER_BYTE --beta S]\n"
          "         [--target SAMPLES_PER_S --price-worker P --price-server P]\n"
          "         [--what-if bandwidth=1Gbit|win=4MB|flow_control=off ...] [--json]\n",
          stderr);
    return 2;
}

/* A finite number (strtod's whole text), or -1: "nan" and "inf" would
 * become no JSON number at all, and the option would silently be dropped. */
static int finite_number(const char *val, double *v)
{
    char *end;
    *v = strtod(val, &end);
    return end == val || *end || !isfinite(*v) ? -1 : 0;
}

/* Turns one "--name value" into a member of the request object: 0, -1 for
 * an unknown option, -2 for a value that is not a finite number (*key then
 * names its member). */
static int put(json_t *req, const char *opt, const char *val, const char **key)
{
    static const struct { const char *opt, *key; int number; } map[] = {
        {"--workers", "workers", 0}, {"--servers", "servers", 0},
        {"--bandwidth", "bandwidth", 0}, {"--win", "win", 0},
        {"--steps", "steps", 1}, {"--total-steps", "total_steps", 1},
        {"--warmup", "warmup_steps", 1},
        {"--replications", "replications", 1},
        {"--seed", "seed", 1}, {"--batch-size", "batch_size", 1},
        {"--target", "target_samples_per_s", 1}, {"--price-worker", "price_per_worker_hour", 1},
        {"--price-server", "price_per_server_hour", 1}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (strcmp(opt, map[i].opt))
            continue;
        if (!map[i].number) {
            json_object_set_new(req, map[i].key, json_string(val));
            return 0;
        }
        double v;
        *key = map[i].key;
        if (finite_number(val, &v))
            return -2;
        /* integers within 2^53 as integers; anything else is a number the
         * request's checks refuse where they want an integer */
        json_object_set_new(req, map[i].key,
                            fabs(v) <= 9007199254740992.0 && v == floor(v)
                                ? json_integer((json_int_t)v)
                                : json_real(v));
        return 0;
    }
    return -1;
}

static int what_if(json_t *list, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq)
        return -1;
    json_t *o = json_object();
    if (!strncmp(spec, "bandwidth=", 10))
        json_object_set_new(o, "bandwidth", json_string(eq + 1));
    else if (!strncmp(spec, "win=", 4))
        json_object_set_new(o, "win", json_string(eq + 1));
    else if (!strncmp(spec, "flow_control=", 13))
        json_object_set_new(o, "flow_control",
                            json_boolean(strcmp(eq + 1, "off") && strcmp(eq + 1, "false")));
    else {
        json_decref(o);
        return -1;
    }
    json_array_append_new(list, o);
    return 0;
}

static void print_results(const json_t *results)
{
    size_t i, j;
    json_t *r, *p;
    json_array_foreach(results, i, r)
    {
        json_t *sat = json_object_get(r, "saturation_workers");
        json_t *upto = json_object_get(r, "no_saturation_up_to");
        printf("servers %d", (int)json_integer_value(json_object_get(r, "servers")));
        if (json_is_integer(sat))
            printf(" (saturates at W = %d: one more worker adds < 5%% of a worker's share)\n",
                   (int)json_integer_value(sat));
        else if (json_is_integer(upto))
            printf(" (no saturation up to W = %d: throughput keeps growing)\n",
                   (int)json_integer_value(upto));
        else
            printf(" (one value of W: saturation needs two or more)\n");
        printf("%5s %12s %25s %12s %6s %6s %6s %6s %9s %9s %9s\n", "W", "steps/s", "95% interval",
               "samples/s", "u.wrk", "u.down", "u.up", "u.ps", "compute", "transfer", "waiting");
        json_array_foreach(json_object_get(r, "points"), j, p)
        {
            json_t *s = json_object_get(p, "steps_per_s"), *iv = json_object_get(s, "interval");
            json_t *smp = json_object_get(p, "samples_per_s"), *u = json_object_get(p, "utilisation");
            json_t *t = json_object_get(p, "step_time");
            printf("%5d %12.4f [%11.4f, %11.4f] %12.2f %6.3f %6.3f %6.3f %6.3f %9.5f %9.5f %9.5f\n",
                   (int)json_integer_value(json_object_get(p, "workers")),
                   json_real_value(json_object_get(s, "mean")),
                   json_real_value(json_array_get(iv, 0)), json_real_value(json_array_get(iv, 1)),
                   json_is_object(smp) ? json_real_value(json_object_get(smp, "mean")) : 0.0,
                   json_real_value(json_object_get(u, "worker")),
                   json_real_value(json_array_get(json_object_get(u, "downlink"), 0)),
                   json_real_value(json_array_get(json_object_get(u, "uplink"), 0)),
                   json_real_value(json_array_get(json_object_get(u, "ps"), 0)),
                   json_real_value(json_object_get(t, "compute")),
                   json_real_value(json_object_get(t, "transfer")),
                   json_real_value(json_object_get(t, "waiting")));
        }
    }
}

static void print_text(const json_t *doc)
{
    int warmup = (int)json_integer_value(json_object_get(doc, "warmup_steps"));
    printf("bandwidth %.6g bytes/s, WIN %.6g bytes, flow control %s\n",
           json_real_value(json_object_get(doc, "bandwidth_bytes_per_s")),
           json_real_value(json_object_get(doc, "win_bytes")),
           json_is_true(json_object_get(doc, "flow_control")) ? "on" : "off");
    if (warmup > 0)
        printf("steps/s after a warm-up of %d steps until the first worker ends its last\n",
               warmup);
    else
        printf("steps/s over the whole run\n");
    json_t *total = json_object_get(doc, "total_steps");
    if (json_is_integer(total))
        printf("%lld steps over all workers: each of W runs %lld/W, rounded up\n",
               (long long)json_integer_value(total), (long long)json_integer_value(total));
    print_results(json_object_get(doc, "results"));
    json_t *c = json_object_get(doc, "cheapest");
    if (json_is_object(c)) {
        json_t *setup = json_object_get(c, "setup");
        if (json_is_object(setup))
            printf("cheapest reaching %g %s: W = %d, M = %d, %.4g %s at %.4g per hour\n",
                   json_real_value(json_object_get(c, "target")),
                   json_string_value(json_object_get(c, "unit")),
                   (int)json_integer_value(json_object_get(setup, "workers")),
                   (int)json_integer_value(json_object_get(setup, "servers")),
                   json_real_value(json_object_get(c, "throughput")),
                   json_string_value(json_object_get(c, "unit")),
                   json_real_value(json_object_get(c, "price_per_hour")));
        else
            printf("cheapest reaching %g: %s\n", json_real_value(json_object_get(c, "target")),
                   json_string_value(json_object_get(c, "reason")));
    }
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(doc, "what_if"), i, w)
    {
        printf("\nwhat if: bandwidth %.6g bytes/s, WIN %.6g bytes, flow control %s\n",
               json_real_value(json_object_get(w, "bandwidth_bytes_per_s")),
               json_real_value(json_object_get(w, "win_bytes")),
               json_is_true(json_object_get(w, "flow_control")) ? "on" : "off");
        print_results(json_object_get(w, "results"));
    }
    json_t *note;
    json_array_foreach(json_object_get(doc, "warnings"), i, note)
    {
        if (!i)
            putchar('\n');
        printf("note: %s\n", json_string_value(json_object_get(note, "message")));
    }
}

static int report(const sim_error *e)
{
    char field[256];
    sim_error_field(e, field, sizeof field);
    if (e->op[0])
        fprintf(stderr, "perfcast simulate: operation \"%s\" of step %d, %s: %s\n", e->op,
                e->step, e->field, e->msg);
    else
        fprintf(stderr, "perfcast simulate: %s%s%s\n", field, field[0] ? ": " : "", e->msg);
    return 2;
}

int cmd_simulate(int argc, char **argv)
{
    const char *path = NULL;
    int as_json = 0;
    json_t *req = json_object(), *whatifs = json_array();
    json_t *overhead = NULL;
    int rc = 2;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--json")) {
            as_json = 1;
        } else if (!strcmp(s, "--no-flow-control")) {
            json_object_set_new(req, "flow_control", json_false());
        } else if ((!strcmp(s, "--alpha") || !strcmp(s, "--beta")) && i + 1 < argc) {
            double v;
            if (finite_number(argv[++i], &v)) {
                fprintf(stderr, "perfcast simulate: overhead.%s: %s takes a finite number (%s), "
                        "not \"%.40s\"\n", s + 2, s,
                        s[2] == 'a' ? "seconds per byte" : "seconds", argv[i]);
                goto out;
            }
            if (!overhead)
                overhead = json_object();
            json_object_set_new(overhead, s + 2, json_real(v));
        } else if (!strcmp(s, "--what-if") && i + 1 < argc) {
            if (what_if(whatifs, argv[++i])) {
                rc = sim_usage("--what-if takes bandwidth=B, win=SIZE or flow_control=off");
                goto out;
            }
        } else if (!strncmp(s, "--", 2) && i + 1 < argc && strcmp(s, "--help") && strcmp(s, "-h")) {
            const char *key = NULL;
            int bad = put(req, s, argv[++i], &key);
            if (bad == -2) {
                fprintf(stderr, "perfcast simulate: %s: %s takes a finite number, not \"%.40s\"\n",
                        key, s, argv[i]);
                goto out;
            }
            if (bad) {
                fprintf(stderr, "perfcast simulate: unknown option or bad value: %s %s\n", s,
                        argv[i]);
                rc = sim_usage(NULL);
                goto out;
            }
        } else if (s[0] == '-' && strcmp(s, "-")) {
            int help = !strcmp(s, "--help") || !strcmp(s, "-h");
            rc = sim_usage(help ? NULL : "unknown option");
            if (help)
                rc = 0;
            goto out;
        } else if (!path) {
            path = s;
        } else {
            rc = sim_usage("one GRAPH at a time");
            goto out;
        }
    }
    if (!path) {
        rc = sim_usage("GRAPH is required (a step-graph JSON or a Chrome trace)");
        goto out;
    }
    if (overhead) {
        json_object_set_new(req, "overhead", overhead);
        overhead = NULL;
    }
    if (json_array_size(whatifs))
        json_object_set(req, "what_if", whatifs);
    api_sim_request r;
    api_sim_request_default(&r);
    char field[64], msg[256];
    if (api_sim_request_parse(req, &r, field, sizeof field, msg, sizeof msg)) {
        size_t fl = strlen(field); /* the field once, as problem documents name it */
        if (fl && !strncmp(msg, field, fl) && msg[fl] == ' ')
            fprintf(stderr, "perfcast simulate: %s\n", msg);
        else
            fprintf(stderr, "perfcast simulate: %s: %s\n", field, msg);
        goto out;
    }
    cli_file f;
    char err[256];
    if (cli_file_open(path, &f, err, sizeof err)) {
        fprintf(stderr, "perfcast simulate: %s\n", err);
        rc = 1;
        goto out;
    }
    simgraph_doc d;
    sim_error e = {0};
    int bad = simgraph_read(f.data, f.len, &d, &e);
    cli_file_close(&f);
    if (bad) {
        rc = report(&e);
        goto out;
    }
    json_t *doc = api_sim_run(&d, &r, &e);
    simgraph_doc_free(&d);
    if (!doc) {
        rc = report(&e);
        goto out;
    }
    if (as_json) {
        json_dumpf(doc, stdout, JSON_COMPACT | JSON_REAL_PRECISION(17));
        putchar('\n');
    } else {
        print_text(doc);
    }
    json_decref(doc);
    rc = 0;
out:
    json_decref(overhead);
    json_decref(whatifs);
    json_decref(req);
    return rc;
}
