/*
 * sim_heap.h — a binary min-heap of simulator entries ordered by a value,
 * then by insertion (so equal values pop in the order they were pushed and
 * a run is deterministic): the tags of the flows sharing a link (the event
 * queue itself is sim_queue.h). Entries are never removed from the middle.
 */
#ifndef PERFCAST_SIM_HEAP_H
#define PERFCAST_SIM_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_event {
    double t;
    uint64_t seq;
    int worker;
    int slot;
    uint32_t version;
} sim_event;

typedef struct sim_heap {
    sim_event *a;
    size_t n, cap;
    uint64_t seq;
} sim_heap;

void sim_heap_init(sim_heap *h);
void sim_heap_free(sim_heap *h);
void sim_heap_clear(sim_heap *h);
/* 0, or -1 when out of memory. */
int sim_heap_push(sim_heap *h, double t, int worker, int slot, uint32_t version);
/* 1 and the earliest event in out, or 0 when empty. */
int sim_heap_pop(sim_heap *h, sim_event *out);

#endif
