/*
 * xg_syncwait.c — waits for other ranks between top-level operators
 * (xg_syncwait.h).
 */
#include <stdlib.h>
#include <string.h>

#include "execgraph/xg_breakdown.h"
#include "execgraph/xg_syncwait.h"

/* Computation time on the device within (a, b) in step s (us; kernels of
 * several streams counted each). */
static double computing(const xg_graph *g, const xg_step *st, const char *comp, double a,
                        double b)
{
    double busy = 0;
    for (int i = 0; i < st->ndev; i++) {
        int ev = g->step_dev[st->dev_first + i];
        const xg_event *e = &g->t->ev[ev];
        if (e->ts >= b)
            break;
        double lo = e->ts > a ? e->ts : a, hi = e->ts + e->dur < b ? e->ts + e->dur : b;
        if (hi > lo && comp[e->name])
            busy += hi - lo;
    }
    return busy;
}

double *xg_sync_waits(const xg_graph *g, double *total)
{
    const xg_trace *t = g->t;
    double *w = calloc(g->nops > 0 ? (size_t)g->nops : 1, sizeof *w);
    char *comp = calloc(t->nnames > 0 ? (size_t)t->nnames : 1, 1);
    double sum = 0;
    if (!w || !comp) {
        free(w);
        free(comp);
        return NULL;
    }
    int multi = t->world_size > 1;
    for (int i = 0; i < g->ndev; i++) {
        const xg_event *e = &t->ev[g->dev[i]];
        int ty = xg_device_type(xg_name(t, e->name));
        comp[e->name] = e->kind == XG_KERNEL && ty == XG_COMP;
        multi |= ty == XG_COMM;
    }
    for (int s = 0; s < g->nsteps && multi; s++) {
        const xg_step *st = &g->steps[s];
        double prev_end = st->ts;
        for (int i = 0; i < st->nops; i++) {
            int k = st->op_first + i;
            const xg_op *op = &g->ops[k];
            double gap = op->ts - prev_end;
            if (gap >= XG_SYNC_MIN_US &&
                computing(g, st, comp, prev_end, op->ts) <= XG_SYNC_BUSY * gap) {
                w[k] = gap;
                sum += gap;
            }
            if (op->end > prev_end)
                prev_end = op->end;
        }
    }
    free(comp);
    if (total)
        *total = sum;
    return w;
}
