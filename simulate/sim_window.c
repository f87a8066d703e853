/*
 * sim_window.c — the steady-state window of the throughput (sim_window.h).
 */
#include "simulate/sim_window.h"

void sim_window_init(sim_window *w, long warmup)
{
    *w = (sim_window){.warmup = warmup};
}

int sim_window_get(const sim_window *w, double *from, double *to, long *steps)
{
    if (w->warmup < 1 || !w->has_from || !w->has_to || !(w->from_tie < w->to))
        return 0;
    *from = w->from;
    *to = w->to;
    *steps = w->ended_by_to - w->ended_by_from;
    return *steps > 0;
}
