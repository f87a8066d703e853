/*
 * sim_build.h — step graphs for the simulator's tests, built by hand from
 * a table of operations (test_simulate.c, test_simulate_inputs.c).
 */
#ifndef PERFCAST_TESTS_SIM_BUILD_H
#define PERFCAST_TESTS_SIM_BUILD_H

#include <stdlib.h>
#include <string.h>

#include "simulate/sim_graph.h"

typedef struct spec {
    const char *id;
    int res;
    double duration, bytes;
    int server;
    const char *deps; /* comma-separated indices, or NULL */
} spec;

static inline void add_step(sim_graph *g, const spec *s, int n)
{
    g->steps = realloc(g->steps, (size_t)(g->nsteps + 1) * sizeof *g->steps);
    sim_step *st = &g->steps[g->nsteps++];
    st->nops = n;
    st->ops = calloc((size_t)n, sizeof *st->ops);
    for (int i = 0; i < n; i++) {
        sim_op *op = &st->ops[i];
        op->id = strdup(s[i].id);
        op->name = strdup(s[i].id);
        op->res = s[i].res;
        op->duration = s[i].duration;
        op->bytes = s[i].bytes;
        op->server = s[i].server;
        if (s[i].deps) {
            op->deps = malloc(16 * sizeof(int));
            const char *p = s[i].deps;
            while (*p) {
                op->deps[op->ndeps++] = (int)strtol(p, (char **)&p, 10);
                if (*p == ',')
                    p++;
            }
        }
    }
}

static inline sim_graph graph(int servers, double batch)
{
    return (sim_graph){.servers = servers, .batch_size = batch};
}

#endif
