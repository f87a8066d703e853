/*
 * sim_heap.h — the simulator's event queue: a binary min-heap of events
 * ordered by time, then by insertion (so equal times pop in the order they
 * were scheduled and a run is deterministic). Entries are never removed
 * from the middle: a rescheduled chunk pushes a new entry with a new
 * version and the old one is skipped when it surfaces.
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
