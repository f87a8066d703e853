/*
 * sim_run.c — the event loop of Algorithm 3.1 (sim_run.h).
 *
 * State per (worker, slot): a FIFO of pending operations (streams on a
 * link, and whether they have had their first service: then they have
 * their bytes less WIN to send) and the chunk in flight. Every slot has at most one
 * pending event in the indexed queue (sim_queue.h), moved in place when the
 * slot starts its next chunk or its rate changes: the queue never holds
 * stale entries.
 *
 * With one server every active flow of a direction gets the same rate B/n,
 * so the flows are kept as in a processor-sharing queue: V, the bytes each
 * active flow has received so far, grows at B/n; a flow started when V was
 * v0 with b bytes ends when V reaches v0 + b (its tag). A min-heap of tags
 * per direction and one event for its earliest flow: a change of n costs
 * one new event, not one per flow.
 *
 * With several servers a worker's shares depend on other servers' counts:
 * a network chunk keeps the bytes left at its last rate change and its
 * rate; when the shares of a direction change, the chunks whose rate
 * changed get the bytes left so far and a new event. Each chunk's bytes are
 * counted down on their own: the same arithmetic, so the same results to
 * the last bit, as one event per chunk and rate. (Folding them into
 * virtual time per group of equal shares changes the rounding; over long
 * runs a near-tie then resolves the other way, another worker draws the
 * next sampled step, and the figures move by up to 1e-3.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_heap.h"
#include "simulate/sim_queue.h"
#include "simulate/sim_rng.h"
#include "simulate/sim_run.h"
#include "simulate/sim_window.h"

/* A pending operation of the worker's current step: op << 1 | served. */
typedef int stream;

typedef struct fifo {
    stream *a;
    int cap, head, n;
} fifo;

typedef struct chunk {
    int busy, op, last;
    double start, amount;     /* amount: seconds or bytes of this chunk */
    double rem, rate, t_last; /* several servers: bytes left at t_last, bytes/s (< 0 unset) */
    double t_end;             /* several servers: when it ends at its rate */
} chunk;

typedef struct worker {
    int step, done, outstanding, cat, netbusy;
    uint64_t netmask[2]; /* per direction: servers it has a chunk in flight with */
    int *deps;
    double last_t, t_cat[3];
} worker;

typedef struct sim {
    const sim_program *p;
    const sim_config *c;
    int W, S, M, WS;
    worker *w;
    chunk *ch;      /* W x S */
    fifo *q;        /* W x S */
    int *nact;      /* 2 x M: workers active on (server, direction) */
    double *busy;   /* S: summed busy seconds (compute) or bytes (links) */
    sim_queue queue; /* items: the W x S slots, then (one server) the 2 directions */
    uint32_t *who;   /* per slot item: worker << 8 | slot (no division per event) */
    sim_rng rng;
    sim_window window; /* the steps' ends, for the throughput (§4) */
    long events;
    /* within one event: slots of the worker that got work (bit per slot;
     * all of them when touch_all), and the directions in which one of its
     * chunks started */
    uint64_t touched;
    int touch_all;
    int started[2];
    /* one server: per direction the virtual bytes per flow vt (at vt_at),
     * the flows' tags, and whether its flows changed in this event */
    double vt[2], vt_at[2];
    sim_heap tags[2];
    int link_dirty[2];
} sim;

static int fifo_push(fifo *f, int op, int served)
{
    if (f->n == f->cap)
        return -1; /* cannot happen: capacity is the most ops of a step on the slot */
    int i = f->head + f->n++;
    f->a[i >= f->cap ? i - f->cap : i] = op << 1 | served;
    return 0;
}

static stream fifo_pop(fifo *f)
{
    stream s = f->a[f->head];
    if (++f->head == f->cap)
        f->head = 0;
    f->n--;
    return s;
}

static inline int link_dir(int slot) { return sim_slot_res(slot) == SIM_UPLINK; }
static inline int is_net(int slot) { return slot && sim_slot_res(slot) != SIM_PS; }

/* Starts the next chunk of (w, slot) at now; network chunks are scheduled
 * at the end of the event (reschedule_link, rerate). */
static int start_chunk(sim *S, int w, int slot, double now)
{
    int ci = w * S->S + slot;
    chunk *c = &S->ch[ci];
    stream s = fifo_pop(&S->q[ci]);
    int op = s >> 1;
    double amount = S->p->steps[S->w[w].step].hot[op].amount;
    c->busy = 1;
    c->op = op;
    c->start = now;
    if (!is_net(slot)) {
        c->amount = amount;
        c->last = 1;
        sim_queue_set(&S->queue, ci, now + amount);
        return 0;
    }
    double rem = s & 1 ? amount - S->c->win : amount; /* after its first service: the rest */
    if (S->c->flow_control && !(s & 1) && rem > S->c->win) {
        c->amount = S->c->win;
        c->last = 0;
        if (fifo_push(&S->q[ci], op, 1))
            return -1;
    } else {
        c->amount = rem;
        c->last = 1;
    }
    c->rem = c->amount;
    c->t_last = now;
    c->rate = -1;
    int d = link_dir(slot);
    S->nact[2 * sim_slot_server(slot) + d]++;
    S->w[w].netbusy++;
    S->w[w].netmask[d] |= 1ULL << sim_slot_server(slot);
    S->started[d] = 1;
    if (S->M == 1) {
        S->link_dirty[d] = 1;
        return sim_heap_push(&S->tags[d], S->vt[d] + c->amount, w, slot, 0);
    }
    return 0;
}

/* One server: V of both directions brought to now (before any count
 * changes; at every event, so V takes the same steps in every build). */
static void advance_links(sim *S, double now)
{
    for (int d = 0; d < 2; d++) {
        int n = S->nact[d];
        if (n > 1)
            S->vt[d] += (now - S->vt_at[d]) * S->c->bandwidth / n;
        else if (n == 1) /* the same number: x / 1 is x */
            S->vt[d] += (now - S->vt_at[d]) * S->c->bandwidth;
        S->vt_at[d] = now;
    }
}

/* One server: the event of direction d for its earliest flow. With no
 * flow left V starts again from 0, so that its rounding does not grow with
 * the bytes a long run carried. */
static void reschedule_link(sim *S, int d, double now)
{
    S->link_dirty[d] = 0;
    int item = S->WS + d;
    if (!S->tags[d].n) {
        sim_queue_remove(&S->queue, item);
        S->vt[d] = 0;
        return;
    }
    double left = S->tags[d].a[0].t - S->vt[d];
    sim_queue_set(&S->queue, item, now + (left > 0 ? left : 0) * S->nact[d] / S->c->bandwidth);
}

static int enqueue(sim *S, int w, const sim_hop *o, int op)
{
    if (o->slot < 64)
        S->touched |= 1ULL << o->slot;
    else
        S->touch_all = 1;
    return fifo_push(&S->q[w * S->S + o->slot], op, 0);
}

static int new_step(sim *S, int w)
{
    worker *k = &S->w[w];
    k->step = S->p->nsteps > 1 ? sim_rng_below(&S->rng, S->p->nsteps) : 0;
    const sim_cstep *st = &S->p->steps[k->step];
    memcpy(k->deps, st->ndeps, (size_t)st->nops * sizeof *k->deps);
    k->outstanding = st->nops;
    for (int r = 0; r < st->nroots; r++)
        if (enqueue(S, w, &st->hot[st->roots[r]], st->roots[r]))
            return -1;
    return 0;
}

/* Several servers: the new rate of chunk ci at now (bytes left so far and
 * a new event when it changed). */
static void set_rate(sim *S, int ci, double rate, double now)
{
    chunk *c = &S->ch[ci];
    if (c->rate == rate)
        return;
    if (c->rate > 0) {
        /* a chunk due now has sent its bytes: a new rate does not move its
         * end (bytes left computed as a difference would be a rounding
         * residue, and chunks that end together would end apart) */
        if (c->t_end <= now)
            return;
        c->rem -= (now - c->t_last) * c->rate;
        if (c->rem < 0)
            c->rem = 0;
    }
    c->t_last = now;
    c->rate = rate;
    c->t_end = now + c->rem / rate;
    sim_queue_set(&S->queue, ci, c->t_end);
}

/* Several servers: shares of worker w's active connections in direction
 * dir: max-min fair within the worker's own link, each capped at 1/n of its
 * server (caps in ascending order, ties by server). */
static void rerate_worker(sim *S, int w, int dir, double now)
{
    int slots[SIM_MAX_SERVERS], k = 0;
    double cap[SIM_MAX_SERVERS];
    const chunk *c = &S->ch[w * S->S];
    for (int s = 0; s < S->M; s++) {
        int slot = 1 + 3 * s + dir;
        if (!c[slot].busy)
            continue;
        double cp = 1.0 / S->nact[2 * s + dir];
        int j = k++;
        while (j > 0 && cap[j - 1] > cp) { /* insertion by cap, ascending */
            cap[j] = cap[j - 1];
            slots[j] = slots[j - 1];
            j--;
        }
        cap[j] = cp;
        slots[j] = slot;
    }
    double left = 1;
    for (int j = 0; j < k; j++) {
        double share = fmin(cap[j], left / (k - j));
        left -= share;
        set_rate(S, w * S->S + slots[j], S->c->bandwidth * share, now);
    }
}

/* Several servers: new shares in direction dir for the workers sending to
 * a server of `changed` (whose counts changed) and for worker w (whose own
 * connections changed); the others' shares depend on unchanged counts only
 * and stay what they were. */
static void rerate_all(sim *S, int dir, uint64_t changed, int w, double now)
{
    for (int v = 0; v < S->W; v++)
        if (v == w || (S->w[v].netmask[dir] & changed))
            rerate_worker(S, v, dir, now);
}

static void account(sim *S, int w, double now)
{
    worker *k = &S->w[w];
    k->t_cat[k->cat] += now - k->last_t;
    k->last_t = now;
}

static inline int category(const sim *S, int w)
{
    return S->ch[w * S->S].busy ? 0 : S->w[w].netbusy ? 1 : 2;
}

static int complete_op(sim *S, int w, int op)
{
    worker *k = &S->w[w];
    const sim_cstep *st = &S->p->steps[k->step];
    const sim_hop *o = &st->hot[op];
    k->outstanding--;
    if (o->count == 1) {
        int j = o->ref;
        return --k->deps[j] == 0 ? enqueue(S, w, &st->hot[j], j) : 0;
    }
    int n = o->count == SIM_HOP_MANY ? st->ops[op].count : o->count;
    for (const int *d = st->dependents + o->ref, *end = d + n; d < end; d++)
        if (--k->deps[*d] == 0 && enqueue(S, w, &st->hot[*d], *d))
            return -1;
    return 0;
}

/* Starts chunks on every idle slot of w with pending work (the touched
 * ones: only they can have got work since the last event of w), in slot
 * order. */
static int fill_slots(sim *S, int w, double now)
{
    const chunk *c = &S->ch[w * S->S];
    const fifo *q = &S->q[w * S->S];
    uint64_t t = S->touched;
    int all = S->touch_all;
    S->touched = 0;
    S->touch_all = 0;
    if (all) {
        for (int slot = 0; slot < S->S; slot++)
            if (!c[slot].busy && q[slot].n && start_chunk(S, w, slot, now))
                return -1;
        return 0;
    }
    for (; t; t &= t - 1) {
        int slot = __builtin_ctzll(t);
        if (!c[slot].busy && q[slot].n && start_chunk(S, w, slot, now))
            return -1;
    }
    return 0;
}

/* Several servers: new rates in each direction where counts changed (all
 * workers) or where only w started a chunk (w alone). */
static void rerate(sim *S, int w, const int *before, double now)
{
    for (int d = 0; d < 2; d++) {
        uint64_t changed = 0;
        for (int s = 0; s < S->M; s++)
            changed |= (uint64_t)(before[2 * s + d] != S->nact[2 * s + d]) << s;
        if (changed)
            rerate_all(S, d, changed, w, now);
        else if (S->started[d])
            rerate_worker(S, w, d, now);
    }
}

/* The common case of a computation's end, done in place: its operation
 * has one dependent, which it was the last to wait for, on the same slot,
 * whose queue is empty; so that dependent starts there now and nothing else
 * changes (no transfer starts or ends, the step goes on). The same steps
 * as handle() takes for it, without the queue and the scans. 1 when done. */
static int chain(sim *S, int w, int slot, double now)
{
    chunk *c = &S->ch[w * S->S + slot];
    worker *k = &S->w[w];
    const sim_cstep *st = &S->p->steps[k->step];
    const sim_hop *o = &st->hot[c->op];
    if (o->count != 1 || k->deps[o->ref] != 1 || st->hot[o->ref].slot != slot ||
        S->q[w * S->S + slot].n)
        return 0;
    int j = o->ref;
    S->events++;
    account(S, w, now);
    S->busy[slot] += now - c->start;
    if (S->c->trace)
        S->c->trace(S->c->trace_arg, w, slot, k->step, c->op, c->start, now, c->last);
    k->outstanding--;
    k->deps[j] = 0;
    c->op = j;
    c->start = now;
    c->amount = st->hot[j].amount;
    sim_queue_set(&S->queue, w * S->S + slot, now + c->amount);
    return 1; /* the slot stays busy, nothing else of w changed: its category too */
}

/* The chunk of (w, slot) ends at now. */
static int handle(sim *S, int w, int slot, double now, double *finish)
{
    if (!is_net(slot) && chain(S, w, slot, now))
        return 0;
    chunk *c = &S->ch[w * S->S + slot];
    worker *k = &S->w[w];
    int before[2 * SIM_MAX_SERVERS];
    if (S->M > 1)
        memcpy(before, S->nact, (size_t)(2 * S->M) * sizeof *before);
    S->events++;
    account(S, w, now);
    c->busy = 0;
    S->touched = slot < 64 ? 1ULL << slot : 0; /* its next chunk */
    S->touch_all = slot >= 64;
    S->started[0] = S->started[1] = 0;
    if (is_net(slot)) {
        int d = link_dir(slot);
        if (S->M == 1)
            S->link_dirty[d] = 1;
        S->nact[2 * sim_slot_server(slot) + d]--;
        k->netbusy--;
        k->netmask[d] &= ~(1ULL << sim_slot_server(slot));
        S->busy[slot] += c->amount;
    } else {
        S->busy[slot] += now - c->start;
    }
    if (S->c->trace)
        S->c->trace(S->c->trace_arg, w, slot, k->step, c->op, c->start, now, c->last);
    if (c->last && complete_op(S, w, c->op))
        return -1;
    if (!k->outstanding) {
        sim_window_step(&S->window, now, k->done + 1 == S->c->steps);
        if (++k->done < S->c->steps) {
            if (new_step(S, w))
                return -1;
        } else if (now > *finish) {
            *finish = now;
        }
    }
    if (fill_slots(S, w, now))
        return -1;
    if (S->M == 1) {
        for (int d = 0; d < 2; d++)
            if (S->link_dirty[d])
                reschedule_link(S, d, now);
    } else {
        rerate(S, w, before, now);
    }
    k->cat = k->done < S->c->steps ? category(S, w) : 2;
    return 0;
}

static int check_config(const sim_program *p, const sim_config *c, sim_error *e)
{
    if (c->workers < 1 || c->workers > SIM_MAX_WORKERS) {
        sim_error_set(e, NULL, -1, "workers", "workers must be 1..%d", SIM_MAX_WORKERS);
        return -1;
    }
    if (!(c->bandwidth > 0) || !isfinite(c->bandwidth)) {
        sim_error_set(e, NULL, -1, "bandwidth", "bandwidth must be a positive number of bytes/s");
        return -1;
    }
    if (!(c->win > 0) || !isfinite(c->win)) {
        sim_error_set(e, NULL, -1, "win", "the flow-control window must be positive bytes");
        return -1;
    }
    if (c->steps < 1 || c->steps > 1000000) {
        sim_error_set(e, NULL, -1, "steps", "steps per worker must be 1..1000000");
        return -1;
    }
    if (c->warmup < 0 || c->warmup > SIM_MAX_WARMUP) {
        sim_error_set(e, NULL, -1, "warmup_steps", "the warm-up must be 0..%d steps",
                      SIM_MAX_WARMUP);
        return -1;
    }
    if (p->nsteps < 1 || p->servers < 1) {
        sim_error_set(e, NULL, -1, "graph", "the program has no step");
        return -1;
    }
    return 0;
}

static void sim_free(sim *S)
{
    if (S->w)
        for (int w = 0; w < S->W; w++)
            free(S->w[w].deps);
    if (S->q)
        for (int i = 0; i < S->WS; i++)
            free(S->q[i].a);
    free(S->w);
    free(S->ch);
    free(S->q);
    free(S->nact);
    free(S->busy);
    free(S->who);
    sim_queue_free(&S->queue);
    sim_heap_free(&S->tags[0]);
    sim_heap_free(&S->tags[1]);
}

static int sim_alloc(sim *S)
{
    int n = S->WS;
    S->w = calloc((size_t)S->W, sizeof *S->w);
    S->ch = calloc((size_t)n, sizeof *S->ch);
    S->q = calloc((size_t)n, sizeof *S->q);
    S->nact = calloc((size_t)(2 * S->M), sizeof *S->nact);
    S->busy = calloc((size_t)S->S, sizeof *S->busy);
    S->who = malloc((size_t)n * sizeof *S->who);
    if (!S->w || !S->ch || !S->q || !S->nact || !S->busy || !S->who ||
        sim_queue_init(&S->queue, n + 2))
        return -1;
    for (int i = 0; i < n; i++) /* slots < 256: 1 + 3 * SIM_MAX_SERVERS */
        S->who[i] = (uint32_t)(i / S->S) << 8 | (uint32_t)(i % S->S);
    for (int w = 0; w < S->W; w++) {
        S->w[w].deps = malloc((size_t)S->p->max_ops * sizeof(int));
        S->w[w].cat = 2;
        if (!S->w[w].deps)
            return -1;
        for (int s = 0; s < S->S; s++) {
            fifo *f = &S->q[w * S->S + s];
            f->cap = S->p->slot_cap[s] ? S->p->slot_cap[s] : 1;
            if (!(f->a = malloc((size_t)f->cap * sizeof *f->a)))
                return -1;
        }
    }
    return 0;
}

static void summarize(const sim *S, double finish, sim_result *out)
{
    double span = finish > 0 ? finish : 0;
    out->makespan = span;
    out->steps = (long)S->W * S->c->steps;
    out->run_steps_per_s = span > 0 ? out->steps / span : INFINITY;
    if (sim_window_get(&S->window, &out->window_from, &out->window_to, &out->window_steps)) {
        out->steps_per_s = out->window_steps / (out->window_to - out->window_from);
    } else {
        out->steps_per_s = out->run_steps_per_s;
        out->window_from = 0;
        out->window_to = span;
        out->window_steps = out->steps;
        out->window_fallback = S->c->warmup > 0;
    }
    out->events = S->events;
    double per = span > 0 ? 1.0 / span : 0;
    out->util_worker = S->busy[0] * per / S->W;
    for (int s = 0; s < S->M; s++) {
        out->util_down[s] = S->busy[1 + 3 * s] * per / S->c->bandwidth;
        out->util_up[s] = S->busy[2 + 3 * s] * per / S->c->bandwidth;
        out->util_ps[s] = S->busy[3 + 3 * s] * per / S->W;
    }
    double t[3] = {0};
    for (int w = 0; w < S->W; w++)
        for (int k = 0; k < 3; k++)
            t[k] += S->w[w].t_cat[k];
    out->step_compute = t[0] / out->steps;
    out->step_transfer = t[1] / out->steps;
    out->step_wait = t[2] / out->steps;
}

/* Runs events until none is left. */
static int loop(sim *S, double *finish)
{
    double now;
    int item;
    while ((item = sim_queue_top(&S->queue, &now)) >= 0) {
        uint64_t key = sim_queue_key(&S->queue, item);
        if (S->M == 1)
            advance_links(S, now);
        if (item >= S->WS) { /* one server: the earliest flow of a direction ends */
            sim_event flow;
            int d = item - S->WS;
            sim_heap_pop(&S->tags[d], &flow);
            /* V has reached the flow's tag: by definition, not by the sum of
             * its steps, whose rounding would leave flows of the same tag a
             * few bytes apart and end them one after another */
            S->vt[d] = flow.t;
            if (handle(S, flow.worker, flow.slot, now, finish))
                return -1;
            if (sim_queue_key(&S->queue, item) == key)
                sim_queue_remove(&S->queue, item);
            continue;
        }
        if (handle(S, (int)(S->who[item] >> 8), (int)(S->who[item] & 0xff), now, finish))
            return -1;
        if (sim_queue_key(&S->queue, item) == key) /* not started again */
            sim_queue_remove(&S->queue, item);
    }
    return 0;
}

int sim_run(const sim_program *p, const sim_config *c, sim_result *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    if (check_config(p, c, e))
        return -1;
    sim S = {.p = p, .c = c, .W = c->workers, .S = p->nslots, .M = p->servers,
             .WS = c->workers * p->nslots, .rng = {c->seed}};
    sim_heap_init(&S.tags[0]);
    sim_heap_init(&S.tags[1]);
    sim_window_init(&S.window, c->warmup);
    double finish = 0;
    int rc = -1;
    if (sim_alloc(&S))
        goto oom;
    for (int w = 0; w < S.W; w++)
        if (new_step(&S, w) || fill_slots(&S, w, 0))
            goto oom;
    for (int d = 0; d < 2; d++) {
        if (S.M == 1)
            reschedule_link(&S, d, 0);
        else
            rerate_all(&S, d, ~0ULL, -1, 0);
    }
    for (int w = 0; w < S.W; w++)
        S.w[w].cat = category(&S, w);
    if (loop(&S, &finish))
        goto oom;
    summarize(&S, finish, out);
    rc = 0;
    goto done;
oom:
    sim_error_set(e, NULL, -1, "", "out of memory");
done:
    sim_free(&S);
    return rc;
}
