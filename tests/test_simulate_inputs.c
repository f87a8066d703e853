/*
 * test_simulate_inputs.c — what the simulator (simulate/) refuses and how it
 * reads its options: graphs with a cycle, a dangling or negative
 * dependency, negative, NaN or all-zero durations, transfers without a
 * size name the operation and the field (sim_graph_check); bandwidths,
 * sizes and worker lists (sim_units.h) parse to the values written by hand,
 * and malformed ones are refused. The runs themselves: test_simulate.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_sweep.h"
#include "simulate/sim_units.h"
#include "tests/check.h"
#include "tests/sim_build.h"

static void expect_bad(sim_graph *g, const char *op, const char *field, const char *what)
{
    sim_error e;
    memset(&e, 0, sizeof e);
    int rc = sim_graph_check(g, &e);
    check(rc == -1 && !strcmp(e.op, op) && !strcmp(e.field, field), "%s: rc %d op '%s' field '%s' (%s)",
          what, rc, e.op, e.field, e.msg);
    sim_graph_free(g);
}

static void test_bad_graphs(void)
{
    sim_graph g = graph(1, 0);
    spec cyc[] = {{"a", SIM_WORKER, 1, -1, -1, "2"}, {"b", SIM_WORKER, 1, -1, -1, "0"},
                  {"c", SIM_WORKER, 1, -1, -1, "1"}, {"d", SIM_WORKER, 1, -1, -1, NULL}};
    add_step(&g, cyc, 4);
    expect_bad(&g, "a", "deps", "cycle");
    g = graph(1, 0);
    spec dang[] = {{"a", SIM_WORKER, 1, -1, -1, "7"}};
    add_step(&g, dang, 1);
    expect_bad(&g, "a", "deps", "dangling");
    g = graph(1, 0);
    spec neg[] = {{"ok", SIM_WORKER, 1, -1, -1, NULL}, {"neg", SIM_WORKER, -1, -1, -1, NULL}};
    add_step(&g, neg, 2);
    expect_bad(&g, "neg", "duration", "negative");
    g = graph(1, 0);
    spec zero[] = {{"z1", SIM_WORKER, 0, -1, -1, NULL}, {"z2", SIM_PS, 0, -1, -1, "0"}};
    add_step(&g, zero, 2);
    expect_bad(&g, "z1", "duration", "a step of zero-duration computations only");
    g = graph(1, 0);
    spec nan_[] = {{"x", SIM_PS, NAN, -1, -1, NULL}};
    add_step(&g, nan_, 1);
    expect_bad(&g, "x", "duration", "NaN");
    g = graph(1, 0);
    spec nosize[] = {{"t", SIM_UPLINK, 0.1, -1, -1, NULL}};
    add_step(&g, nosize, 1);
    expect_bad(&g, "t", "bytes", "transfer without size");
    g = graph(1, 0);
    spec nanb[] = {{"t", SIM_UPLINK, 0.1, NAN, -1, NULL}};
    add_step(&g, nanb, 1);
    expect_bad(&g, "t", "bytes", "NaN bytes");
    g = graph(1, 0);
    spec res[] = {{"r", 7, 0.1, -1, -1, NULL}};
    add_step(&g, res, 1);
    expect_bad(&g, "r", "resource", "unknown resource");
    g = graph(1, 0);
    spec srv[] = {{"t", SIM_DOWNLINK, 0.1, 5, 3, NULL}};
    add_step(&g, srv, 1);
    expect_bad(&g, "t", "server", "server out of range");
    g = graph(1, 0);
    spec dup[] = {{"t", SIM_WORKER, 0.1, -1, -1, NULL}, {"t", SIM_WORKER, 0.1, -1, -1, NULL}};
    add_step(&g, dup, 2);
    expect_bad(&g, "t", "id", "duplicate id");

    /* configurations */
    g = graph(1, 0);
    spec ok[] = {{"a", SIM_WORKER, 1, -1, -1, NULL}};
    add_step(&g, ok, 1);
    int w0[] = {0}, wbig[] = {5000}, w1[] = {1}, m0[] = {0}, m1[] = {1}, mbig[] = {65};
    sim_sweep_opts o = {.workers = w0, .nworkers = 1, .servers = m1, .nservers = 1, .reps = 1,
                        .steps = 1, .bandwidth = 1, .win = 1, .flow_control = 1};
    sim_sweep_result r;
    sim_error e;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "workers"), "W = 0");
    o.workers = wbig;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "workers"), "W absurd");
    o.workers = w1;
    o.servers = m0;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "servers"), "M = 0");
    o.servers = mbig;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "servers"), "M absurd");
    o.servers = m1;
    o.bandwidth = -1;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "bandwidth"), "bandwidth < 0");
    o.bandwidth = 1;
    o.reps = 0;
    check(sim_sweep(&g, &o, &r, &e) == -1 && !strcmp(e.field, "replications"), "R = 0");
    sim_graph_free(&g);
}

static void test_units(void)
{
    double v;
    check(sim_parse_bandwidth("10Gbit", &v) == 0 && v == 1.25e9, "10Gbit");
    check(sim_parse_bandwidth("1Gbps", &v) == 0 && v == 1.25e8, "1Gbps");
    check(sim_parse_bandwidth("125MB/s", &v) == 0 && v == 1.25e8, "125MB/s");
    check(sim_parse_bandwidth("1e9", &v) == 0 && v == 1e9, "plain");
    check(sim_parse_bandwidth("-1Gbit", &v) == -1 && sim_parse_bandwidth("5 furlongs", &v) == -1,
          "bad bandwidths");
    check(sim_parse_size("28MB", &v) == 0 && v == 28e6, "28MB");
    check(sim_parse_size("64KiB", &v) == 0 && v == 65536, "64KiB");
    int out[64];
    check(sim_parse_list("1..16", 1, 1024, out, 64) == 16 && out[15] == 16, "1..16");
    check(sim_parse_list("1,2", 1, 64, out, 64) == 2 && out[1] == 2, "1,2");
    check(sim_parse_list("2..32:10", 1, 1024, out, 64) == 4 && out[3] == 32, "step");
    check(sim_parse_list("0..4", 1, 1024, out, 64) == -1, "0 workers");
    check(sim_parse_list("3,2", 1, 1024, out, 64) == -1, "descending");
    check(sim_parse_list("1..100000", 1, 1024, out, 64) == -1, "absurd");
    /* mixed lists: ranges and single counts, ascending over the whole list */
    int want[] = {1, 2, 3, 4, 8, 32};
    int n = sim_parse_list("1..4,8,32", 1, 1024, out, 64);
    check(n == 6 && !memcmp(out, want, sizeof want), "1..4,8,32: %d items", n);
    n = sim_parse_list("1,2..8:3,16..17", 1, 1024, out, 64);
    check(n == 6 && out[0] == 1 && out[1] == 2 && out[2] == 5 && out[3] == 8 && out[4] == 16 &&
              out[5] == 17, "1,2..8:3,16..17: %d items", n);
    check(sim_parse_list("1..4,3", 1, 1024, out, 64) == -1, "overlapping range");
    check(sim_parse_list("8,1..4", 1, 1024, out, 64) == -1, "not ascending");
    check(sim_parse_list("1..4,,8", 1, 1024, out, 64) == -1, "empty item");
    check(sim_parse_list("1..4,", 1, 1024, out, 64) == -1, "trailing comma");
    check(sim_parse_list("1..4,2000", 1, 1024, out, 64) == -1, "item out of range");
}

int main(void)
{
    test_bad_graphs();
    test_units();
    return check_summary();
}
