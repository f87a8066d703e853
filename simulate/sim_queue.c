/*
 * sim_queue.c — indexed binary min-heap of simulator events (sim_queue.h).
 * With the 128-bit keys a comparison is one integer comparison, and the
 * heaps are small (a few dozen slots have an event at a time), so two
 * children per node do less work than four (measured: bench_simulate).
 */
#include <stdlib.h>

#include "simulate/sim_queue.h"

/* Entries past the last one hold this (all ones: later than any time), so
 * every node has two children to compare without bounds checks. */
#define SENTINEL (~(sim_qent)0)

#define ITEM(k) ((int)((uint64_t)(k) & ((1u << SIM_QUEUE_ITEM_BITS) - 1)))

int sim_queue_init(sim_queue *q, int nitems)
{
    q->n = 0;
    q->seq = 1;
    q->nitems = nitems;
    q->a = NULL;
    q->pos = NULL;
    if (nitems < 1 || nitems >= (1 << SIM_QUEUE_ITEM_BITS))
        return -1;
    q->a = malloc((size_t)(nitems + 4) * sizeof *q->a);
    q->pos = malloc((size_t)nitems * sizeof *q->pos);
    if (!q->a || !q->pos)
        return -1;
    for (int i = 0; i < nitems; i++)
        q->pos[i] = -1;
    for (int i = 0; i < nitems + 4; i++)
        q->a[i] = SENTINEL;
    return 0;
}

void sim_queue_free(sim_queue *q)
{
    free(q->a);
    free(q->pos);
    q->a = NULL;
    q->pos = NULL;
    q->n = 0;
}

static inline int before(const sim_qent *x, const sim_qent *y)
{
    return *x < *y;
}

static void sift_up(sim_queue *q, int i, sim_qent e)
{
    while (i) {
        int p = (i - 1) / 2;
        if (!before(&e, &q->a[p]))
            break;
        q->a[i] = q->a[p];
        q->pos[ITEM(q->a[i])] = i;
        i = p;
    }
    q->a[i] = e;
    q->pos[ITEM(e)] = i;
}

static void sift_down(sim_queue *q, int i, sim_qent e)
{
    int n = q->n;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        c += before(&q->a[c + 1], &q->a[c]);
        if (!before(&q->a[c], &e))
            break;
        q->a[i] = q->a[c];
        q->pos[ITEM(q->a[i])] = i;
        i = c;
    }
    q->a[i] = e;
    q->pos[ITEM(e)] = i;
}

void sim_queue_set(sim_queue *q, int item, double t)
{
    double pos0 = t + 0.0; /* -0 as +0 */
    uint64_t bits;
    memcpy(&bits, &pos0, sizeof bits);
    sim_qent e = (sim_qent)bits << 64 | (q->seq++ << SIM_QUEUE_ITEM_BITS | (uint64_t)item);
    int p = q->pos[item];
    if (p < 0) {
        sift_up(q, q->n++, e);
        return;
    }
    /* the new key is later in sequence: it moves down unless its time is
     * earlier */
    if (p && before(&e, &q->a[(p - 1) / 2]))
        sift_up(q, p, e);
    else
        sift_down(q, p, e);
}

void sim_queue_remove(sim_queue *q, int item)
{
    int p = q->pos[item];
    if (p < 0)
        return;
    q->pos[item] = -1;
    sim_qent last = q->a[--q->n];
    q->a[q->n] = SENTINEL;
    if (p == q->n)
        return;
    if (p && before(&last, &q->a[(p - 1) / 2]))
        sift_up(q, p, last);
    else
        sift_down(q, p, last);
}
