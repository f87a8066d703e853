/*
 * gen_stepgraph.h — a generator of step graphs the size of Inception-v3's
 * with one parameter server (paper 002, Fig. 6 shape): per layer a downlink
 * of its parameters, three forward computations (the first also waits for
 * the parameters), three backward computations in reverse layer order, an
 * uplink of the gradient and the server's update. 110 layers give 990
 * operations per step; 23.8 M parameters (95 MB) split unevenly over the
 * layers; about 0.12 s of computation per step. Each profiled step jitters
 * every duration by up to ±10% (seeded). Header-only, for bench programs.
 */
#ifndef PERFCAST_BENCH_GEN_STEPGRAPH_H
#define PERFCAST_BENCH_GEN_STEPGRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_graph.h"

static uint64_t gen_sg_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double gen_sg_unit(uint64_t *s) { return (double)(gen_sg_next(s) >> 11) / 9007199254740992.0; }

static void gen_sg_op(sim_op *op, const char *kind, int layer, int res, double dur, double bytes,
                      int ndeps, int d0, int d1)
{
    char id[64];
    snprintf(id, sizeof id, "%s_%d", kind, layer);
    op->id = strdup(id);
    op->name = strdup(id);
    op->res = res;
    op->duration = dur;
    op->bytes = bytes;
    op->server = -1;
    op->ndeps = ndeps;
    op->deps = ndeps ? malloc((size_t)ndeps * sizeof(int)) : NULL;
    if (ndeps > 0)
        op->deps[0] = d0;
    if (ndeps > 1)
        op->deps[1] = d1;
}

/* nsteps profiled steps of `layers` layers (9 operations each). */
static sim_graph gen_stepgraph(int nsteps, int layers, uint64_t seed)
{
    sim_graph g = {.nsteps = nsteps, .servers = 1, .batch_size = 32};
    g.steps = calloc((size_t)nsteps, sizeof *g.steps);
    uint64_t shape = seed;
    double *size = malloc((size_t)layers * sizeof *size), total = 0;
    for (int l = 0; l < layers; l++) {
        double u = gen_sg_unit(&shape);
        size[l] = 4096 * (1 + 200 * u * u * u); /* a few large layers, many small */
        total += size[l];
    }
    for (int l = 0; l < layers; l++)
        size[l] *= 95e6 / total;
    uint64_t jit = seed ^ 0x5eed;
    for (int s = 0; s < nsteps; s++) {
        sim_step *st = &g.steps[s];
        st->nops = 9 * layers;
        st->ops = calloc((size_t)st->nops, sizeof *st->ops);
        /* index layout: layer l's ops at 9l .. 9l+8 */
        for (int l = 0; l < layers; l++) {
            int b = 9 * l;
            double j = 0.9 + 0.2 * gen_sg_unit(&jit);
            double f = 0.04 / layers * j * (0.5 + size[l] / (95e6 / layers) * 0.5);
            gen_sg_op(&st->ops[b], "recv", l, SIM_DOWNLINK, -1, size[l], 0, 0, 0);
            gen_sg_op(&st->ops[b + 1], "conv", l, SIM_WORKER, f, -1, l ? 2 : 1, b,
                      b - 9 + 3);
            gen_sg_op(&st->ops[b + 2], "bn", l, SIM_WORKER, f * 0.3, -1, 1, b + 1, 0);
            gen_sg_op(&st->ops[b + 3], "relu", l, SIM_WORKER, f * 0.2, -1, 1, b + 2, 0);
            /* backward: after the next layer's backward (or the last forward) */
            int after = l == layers - 1 ? b + 3 : b + 9 + 6;
            gen_sg_op(&st->ops[b + 4], "relu_grad", l, SIM_WORKER, f * 0.3, -1, 1, after, 0);
            gen_sg_op(&st->ops[b + 5], "bn_grad", l, SIM_WORKER, f * 0.5, -1, 1, b + 4, 0);
            gen_sg_op(&st->ops[b + 6], "conv_grad", l, SIM_WORKER, f * 2, -1, 1, b + 5, 0);
            gen_sg_op(&st->ops[b + 7], "send", l, SIM_UPLINK, -1, size[l], 1, b + 6, 0);
            gen_sg_op(&st->ops[b + 8], "apply", l, SIM_PS, size[l] * 2e-10 * j, -1, 1, b + 7, 0);
        }
    }
    free(size);
    return g;
}

#endif
