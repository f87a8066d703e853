/*
 * sim_window.h — the steady-state window of paper 002, §4: "we exclude the
 * first 50 simulated steps and compute a time-average over the remaining
 * steps". The simulator reports every step's end, in the order it handles
 * them (by time, ties in event order); from them:
 *
 *   t_a = when the K-th step over all workers ends (K = the warm-up),
 *   t_b = when the first worker ends its last (N-th) step,
 *   steps/s = (steps ending at t with t_a < t <= t_b) / (t_b - t_a):
 *
 * steps ending at t_a too are left out, steps ending at t_b too counted, so
 * the window holds only time in which all W workers run. "At t_a" means
 * within SIM_WINDOW_TIE·t_a of it (the same for t_b): steps that end
 * together in the model can come out a few units in the last place apart
 * after the bandwidth shares' arithmetic, and must not fall on both sides
 * of a bound. The window is empty when K is at least the number of steps
 * ending by t_b (then t_a is t_b or later); then, and with K = 0, the
 * figure is the whole run's (W·N / makespan).
 * Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SIM_WINDOW_H
#define PERFCAST_SIM_WINDOW_H

#define SIM_WINDOW_TIE 1e-12 /* relative: steps ending this close to a bound end at it */

typedef struct sim_window {
    long warmup;        /* K */
    long ended;         /* steps ended so far, up to t_b and its ties */
    long ended_by_from; /* steps ending at or before t_a */
    long ended_by_to;   /* steps ending at or before t_b */
    double from, to;    /* t_a, t_b */
    double from_tie, to_tie; /* the latest times that count as t_a, t_b */
    int has_from, has_to;
} sim_window;

void sim_window_init(sim_window *w, long warmup);

/* A step ends at t (never before the previous one); last: it is its
 * worker's N-th. */
static inline void sim_window_step(sim_window *w, double t, int last)
{
    if (w->has_to && t > w->to_tie)
        return;
    w->ended++;
    if (w->ended == w->warmup) {
        w->from = t;
        w->from_tie = t + t * SIM_WINDOW_TIE;
        w->has_from = 1;
    }
    if (w->has_from && t <= w->from_tie)
        w->ended_by_from = w->ended;
    if (last && !w->has_to) {
        w->to = t;
        w->to_tie = t + t * SIM_WINDOW_TIE;
        w->has_to = 1;
    }
    if (w->has_to)
        w->ended_by_to = w->ended;
}

/* 1 and the window (from, to] with its steps when it holds a step; 0 when
 * there is no warm-up or it leaves the window empty. */
int sim_window_get(const sim_window *w, double *from, double *to, long *steps);

#endif
