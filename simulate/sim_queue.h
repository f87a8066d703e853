/*
 * sim_queue.h — the simulator's event queue: an indexed binary min-heap
 * holding at most one pending event per item (a computation slot of a
 * worker, or a group of flows sharing bandwidth). Events are ordered by
 * time, then by when they were set (so equal times come out in the order
 * they were scheduled and a run is deterministic). Setting the event of an
 * item that already has one moves it instead of leaving a stale entry, so
 * the heap never holds more entries than items. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SIM_QUEUE_H
#define PERFCAST_SIM_QUEUE_H

#include <stdint.h>
#include <string.h>

#define SIM_QUEUE_ITEM_BITS 21 /* items < 2^21; the rest of the key is the sequence */

/* An event as one unsigned 128-bit number: the bits of its time (>= 0,
 * whose order as unsigned integers is the order of the times) above its
 * key, sequence << SIM_QUEUE_ITEM_BITS | item; so one integer comparison
 * orders by time, then by sequence. */
__extension__ typedef unsigned __int128 sim_qent;

typedef struct sim_queue {
    sim_qent *a;
    int *pos;     /* per item: index in a, -1 when it has no event */
    int n, nitems;
    uint64_t seq;
} sim_queue;

/* Room for nitems items (< 2^SIM_QUEUE_ITEM_BITS). 0, or -1 when out of
 * memory or too many items. */
int sim_queue_init(sim_queue *q, int nitems);
void sim_queue_free(sim_queue *q);
/* Schedules item at t, replacing its pending event if it has one (the
 * event counts as set now for the order of equal times). */
void sim_queue_set(sim_queue *q, int item, double t);
/* Drops item's pending event, if any. */
void sim_queue_remove(sim_queue *q, int item);

/* The item of the earliest event and its time, or -1 when empty. */
static inline int sim_queue_top(const sim_queue *q, double *t)
{
    if (!q->n)
        return -1;
    uint64_t bits = (uint64_t)(q->a[0] >> 64);
    memcpy(t, &bits, sizeof *t);
    return (int)((uint64_t)q->a[0] & ((1u << SIM_QUEUE_ITEM_BITS) - 1));
}

/* The key of item's pending event (0 when none): changes whenever the
 * item is scheduled again. */
static inline uint64_t sim_queue_key(const sim_queue *q, int item)
{
    int p = q->pos[item];
    return p < 0 ? 0 : (uint64_t)q->a[p];
}

#endif
