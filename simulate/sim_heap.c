/*
 * sim_heap.c — binary min-heap of simulator events (sim_heap.h).
 */
#include <stdlib.h>

#include "simulate/sim_heap.h"

void sim_heap_init(sim_heap *h)
{
    h->a = NULL;
    h->n = h->cap = 0;
    h->seq = 0;
}

void sim_heap_free(sim_heap *h)
{
    free(h->a);
    sim_heap_init(h);
}

void sim_heap_clear(sim_heap *h)
{
    h->n = 0;
    h->seq = 0;
}

static inline int before(const sim_event *x, const sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int sim_heap_push(sim_heap *h, double t, int worker, int slot, uint32_t version)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        sim_event *a = realloc(h->a, cap * sizeof *a);
        if (!a)
            return -1;
        h->a = a;
        h->cap = cap;
    }
    sim_event e = {t, h->seq++, worker, slot, version};
    size_t i = h->n++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &h->a[p]))
            break;
        h->a[i] = h->a[p];
        i = p;
    }
    h->a[i] = e;
    return 0;
}

int sim_heap_pop(sim_heap *h, sim_event *out)
{
    if (!h->n)
        return 0;
    *out = h->a[0];
    sim_event last = h->a[--h->n];
    size_t i = 0, n = h->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && before(&h->a[c + 1], &h->a[c]))
            c++;
        if (!before(&h->a[c], &last))
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (n)
        h->a[i] = last;
    return 1;
}
