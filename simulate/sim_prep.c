/*
 * sim_prep.c — α/β least squares and the compilation of a step graph into
 * the simulator's program for M servers (sim_prep.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_prep.h"

int sim_fit_overhead(const double *size, const double *overhead, int n, double *alpha,
                     double *beta, sim_error *e)
{
    if (n < 2) {
        sim_error_set(e, NULL, -1, "pairs", "at least two (size, overhead) pairs are needed");
        return -1;
    }
    double sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(size[i]) || !isfinite(overhead[i]) || size[i] < 0 || overhead[i] < 0) {
            sim_error_set(e, NULL, -1, "pairs", "pair %d is not two finite values >= 0", i);
            return -1;
        }
        sx += size[i];
        sy += overhead[i];
    }
    double mx = sx / n, my = sy / n, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (size[i] - mx) * (size[i] - mx);
        sxy += (size[i] - mx) * (overhead[i] - my);
    }
    if (!(sxx > 0)) {
        sim_error_set(e, NULL, -1, "pairs", "the sizes must not all be equal");
        return -1;
    }
    *alpha = sxy / sxx;
    *beta = my - *alpha * mx;
    return 0;
}

void sim_program_free(sim_program *p)
{
    if (!p)
        return;
    sim_pool_free(p->pool); /* every step's arrays */
    free(p->steps);
    free(p->slot_cap);
    memset(p, 0, sizeof *p);
}

static int least_loaded(const double *load, int m)
{
    int best = 0;
    for (int s = 1; s < m; s++)
        if (load[s] < load[best])
            best = s;
    return best;
}

/* The server of every operation of one step (-1 for worker computations). */
static void assign_servers(const sim_graph *g, const sim_step *st, int m, int *server)
{
    double load[2][SIM_MAX_SERVERS] = {{0}};
    int keep = g->servers == m;
    for (int i = 0; i < st->nops; i++) {
        const sim_op *op = &st->ops[i];
        server[i] = -1;
        if (op->res == SIM_WORKER)
            continue;
        if (keep && op->server >= 0)
            server[i] = op->server;
        if (sim_res_is_link(op->res) && server[i] >= 0)
            load[op->res == SIM_UPLINK][server[i]] += op->bytes;
    }
    for (int i = 0; i < st->nops; i++) {
        const sim_op *op = &st->ops[i];
        if (server[i] >= 0 || !sim_res_is_link(op->res))
            continue;
        double *l = load[op->res == SIM_UPLINK];
        server[i] = least_loaded(l, m);
        l[server[i]] += op->bytes;
    }
    /* server computations: the server of an uplink they wait for (deps come
     * first in a topological sense, so repeat until nothing changes) */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < st->nops; i++) {
            const sim_op *op = &st->ops[i];
            if (op->res != SIM_PS || server[i] >= 0)
                continue;
            for (int d = 0; d < op->ndeps; d++) {
                int j = op->deps[d];
                if (server[j] >= 0 && st->ops[j].res != SIM_WORKER) {
                    server[i] = server[j];
                    changed = 1;
                    break;
                }
            }
        }
    }
    double ps_load[SIM_MAX_SERVERS] = {0};
    for (int i = 0; i < st->nops; i++)
        if (st->ops[i].res == SIM_PS && server[i] < 0) {
            server[i] = least_loaded(ps_load, m);
            ps_load[server[i]] += st->ops[i].duration;
        }
}

/* The event loop's packed copy of a compiled step (sim_hop). */
static int pack_step(sim_cstep *st, sim_pool **pool)
{
    st->hot = sim_pool_alloc(pool, (size_t)(st->nops ? st->nops : 1) * sizeof *st->hot);
    st->ndeps = sim_pool_alloc(pool, (size_t)(st->nops ? st->nops : 1) * sizeof *st->ndeps);
    if (!st->hot || !st->ndeps)
        return -1;
    for (int k = 0; k < st->nops; k++) {
        const sim_cop *c = &st->ops[k];
        int one = c->count == 1;
        st->hot[k] = (sim_hop){c->amount, one ? st->dependents[c->first] : c->first,
                               (unsigned short)c->slot,
                               (unsigned short)(c->count < SIM_HOP_MANY ? c->count : SIM_HOP_MANY)};
        st->ndeps[k] = c->ndeps;
    }
    return 0;
}

/* Compiled index of graph op i: net part at idx[i]; the overhead (if any)
 * at ovh[i] (-1 otherwise). The op a dependent waits for is the last. */
static int compile_step(const sim_graph *g, const sim_step *st, int m, double alpha, double beta,
                        sim_cstep *out, sim_pool **pool)
{
    int n = st->nops, *server = malloc((size_t)n * sizeof *server);
    int *idx = malloc((size_t)n * sizeof *idx), *ovh = malloc((size_t)n * sizeof *ovh);
    int rc = -1;
    if (!server || !idx || !ovh)
        goto out;
    assign_servers(g, st, m, server);
    int nc = 0;
    for (int i = 0; i < n; i++) {
        idx[i] = nc++;
        double o = sim_res_is_link(st->ops[i].res) ? alpha * st->ops[i].bytes + beta : 0;
        ovh[i] = o > 0 ? nc++ : -1;
    }
    size_t nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += (size_t)st->ops[i].ndeps + (ovh[i] >= 0);
    out->nops = nc;
    out->ops = sim_pool_alloc(pool, (size_t)nc * sizeof *out->ops);
    out->dependents = sim_pool_alloc(pool, (nedges ? nedges : 1) * sizeof *out->dependents);
    out->roots = sim_pool_alloc(pool, (size_t)(nc ? nc : 1) * sizeof *out->roots);
    if (!out->ops || !out->dependents || !out->roots)
        goto out;
    for (int i = 0; i < n; i++) {
        const sim_op *op = &st->ops[i];
        sim_cop *c = &out->ops[idx[i]];
        c->src = i;
        c->slot = sim_slot(op->res, server[i] < 0 ? 0 : server[i]);
        c->kind = sim_res_is_link(op->res) ? SIM_COP_NETWORK : SIM_COP_COMPUTE;
        c->amount = sim_res_is_link(op->res) ? op->bytes : op->duration;
        c->ndeps = op->ndeps;
        if (ovh[i] >= 0) {
            sim_cop *o = &out->ops[ovh[i]];
            o->src = i;
            o->kind = SIM_COP_OVERHEAD;
            o->slot = op->res == SIM_DOWNLINK ? SIM_SLOT_WORKER : sim_slot(SIM_PS, server[i]);
            o->amount = alpha * op->bytes + beta;
            o->ndeps = 1;
            c->count = 1; /* the network part's only dependent */
        }
    }
    /* dependents of the op each dependency resolves to (the overhead when
     * there is one) */
    for (int i = 0; i < n; i++)
        for (int d = 0; d < st->ops[i].ndeps; d++) {
            int j = st->ops[i].deps[d];
            out->ops[ovh[j] >= 0 ? ovh[j] : idx[j]].count++;
        }
    int pos = 0;
    for (int k = 0; k < nc; k++) {
        out->ops[k].first = pos;
        pos += out->ops[k].count;
        out->ops[k].count = 0;
    }
    for (int i = 0; i < n; i++) {
        if (ovh[i] >= 0) {
            sim_cop *c = &out->ops[idx[i]];
            out->dependents[c->first + c->count++] = ovh[i];
        }
        for (int d = 0; d < st->ops[i].ndeps; d++) {
            int j = st->ops[i].deps[d];
            sim_cop *p = &out->ops[ovh[j] >= 0 ? ovh[j] : idx[j]];
            out->dependents[p->first + p->count++] = idx[i];
        }
    }
    out->nroots = 0;
    for (int k = 0; k < nc; k++)
        if (!out->ops[k].ndeps)
            out->roots[out->nroots++] = k;
    if (pack_step(out, pool))
        goto out;
    rc = 0;
out:
    free(server);
    free(idx);
    free(ovh);
    return rc;
}

int sim_prepare(const sim_graph *g, int servers, double alpha, double beta, sim_program *out,
                sim_error *e)
{
    memset(out, 0, sizeof *out);
    if (servers < 1 || servers > SIM_MAX_SERVERS) {
        sim_error_set(e, NULL, -1, "servers", "servers must be 1..%d", SIM_MAX_SERVERS);
        return -1;
    }
    if (!(alpha >= 0) || !(beta >= 0) || !isfinite(alpha) || !isfinite(beta)) {
        sim_error_set(e, NULL, -1, !(alpha >= 0) || !isfinite(alpha) ? "alpha" : "beta",
                      "the parsing overhead's alpha and beta must be finite and >= 0");
        return -1;
    }
    out->servers = servers;
    out->nslots = 1 + 3 * servers;
    out->batch_size = g->batch_size;
    out->alpha = alpha;
    out->beta = beta;
    out->steps = calloc((size_t)g->nsteps, sizeof *out->steps);
    out->slot_cap = calloc((size_t)out->nslots, sizeof *out->slot_cap);
    int *count = calloc((size_t)out->nslots, sizeof *count);
    if (!out->steps || !out->slot_cap || !count)
        goto oom;
    out->nsteps = g->nsteps;
    for (int s = 0; s < g->nsteps; s++) {
        sim_cstep *cs = &out->steps[s];
        if (compile_step(g, &g->steps[s], servers, alpha, beta, cs, &out->pool))
            goto oom;
        if (cs->nops > out->max_ops)
            out->max_ops = cs->nops;
        memset(count, 0, (size_t)out->nslots * sizeof *count);
        for (int k = 0; k < cs->nops; k++)
            count[cs->ops[k].slot]++;
        for (int k = 0; k < out->nslots; k++)
            if (count[k] > out->slot_cap[k])
                out->slot_cap[k] = count[k];
    }
    free(count);
    return 0;
oom:
    free(count);
    sim_program_free(out);
    sim_error_set(e, NULL, -1, "", "out of memory");
    return -1;
}

void sim_program_bytes(const sim_program *p, double *out)
{
    memset(out, 0, (size_t)(2 * p->servers) * sizeof *out);
    for (int s = 0; s < p->nsteps; s++)
        for (int k = 0; k < p->steps[s].nops; k++) {
            const sim_cop *c = &p->steps[s].ops[k];
            if (c->kind == SIM_COP_NETWORK)
                out[2 * sim_slot_server(c->slot) + (sim_slot_res(c->slot) == SIM_UPLINK)] +=
                    c->amount / p->nsteps;
        }
}
