/*
 * sim_run.c — the event loop of Algorithm 3.1 (sim_run.h).
 *
 * State per (worker, slot): a FIFO of pending operations (streams on a
 * link, with the bytes they still have to send and whether they have had
 * their first service) and the chunk in flight.
 *
 * With one server every active flow of a direction gets the same rate B/n,
 * so the flows are kept as in a processor-sharing queue: V, the bytes each
 * active flow has received so far, grows at B/n; a flow started when V was
 * v0 with b bytes ends when V reaches v0 + b (its tag). A min-heap of tags
 * per direction and one event for its earliest flow: a change of n costs
 * one new event, not one per flow.
 *
 * With several servers a worker's shares depend on other servers' counts:
 * a network chunk keeps the bytes left at its last rate change, the rate,
 * and a version; when the shares of a direction change, its chunks get a
 * new rate, a new version and a new event, and the old event is skipped
 * when popped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulate/sim_heap.h"
#include "simulate/sim_rng.h"
#include "simulate/sim_run.h"

typedef struct stream {
    int op;
    int served;
    double rem;
} stream;

typedef struct fifo {
    stream *a;
    int cap, head, n;
} fifo;

typedef struct chunk {
    int busy, op, last;
    double start, amount;   /* amount: seconds or bytes of this chunk */
    double rem, rate, t_last; /* network: bytes left at t_last, bytes/s (< 0 unscheduled) */
    uint32_t version;
} chunk;

typedef struct worker {
    int step, done, outstanding, cat;
    int *deps;
    double last_t, t_cat[3];
} worker;

typedef struct sim {
    const sim_program *p;
    const sim_config *c;
    int W, S, M;
    worker *w;
    chunk *ch;      /* W x S */
    fifo *q;        /* W x S */
    int *nact;      /* 2 x M: workers active on (server, direction) */
    double *busy;   /* S: summed busy seconds (compute) or bytes (links) */
    sim_heap heap;
    sim_rng rng;
    long events;
    /* within one event: slots of the worker that got work (bit per slot, the
     * rest scanned when there are more than 64), and the directions in
     * which one of its chunks started */
    uint64_t touched;
    int started[2];
    /* one server: per direction the virtual bytes per flow vt (at vt_at),
     * the flows' tags, the version of the direction's event, and whether
     * its flows changed in this event */
    double vt[2], vt_at[2];
    sim_heap tags[2];
    uint32_t link_version[2];
    int link_dirty[2];
} sim;

static int fifo_push(fifo *f, int op, double rem, int served)
{
    if (f->n == f->cap)
        return -1; /* cannot happen: capacity is the most ops of a step on the slot */
    int i = f->head + f->n++;
    f->a[i >= f->cap ? i - f->cap : i] = (stream){op, served, rem};
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

/* Starts the next chunk of (w, slot) at now; network chunks are scheduled
 * later by rerate(). */
static int start_chunk(sim *S, int w, int slot, double now)
{
    chunk *c = &S->ch[w * S->S + slot];
    stream s = fifo_pop(&S->q[w * S->S + slot]);
    c->busy = 1;
    c->op = s.op;
    c->start = now;
    c->version++;
    if (slot == 0 || sim_slot_res(slot) == SIM_PS) {
        c->amount = s.rem;
        c->last = 1;
        return sim_heap_push(&S->heap, now + s.rem, w, slot, c->version);
    }
    if (S->c->flow_control && !s.served && s.rem > S->c->win) {
        c->amount = S->c->win;
        c->last = 0;
        if (fifo_push(&S->q[w * S->S + slot], s.op, s.rem - S->c->win, 1))
            return -1;
    } else {
        c->amount = s.rem;
        c->last = 1;
    }
    c->rem = c->amount;
    c->t_last = now;
    c->rate = -1;
    int d = link_dir(slot);
    S->nact[2 * sim_slot_server(slot) + d]++;
    S->started[d] = 1;
    if (S->M == 1) {
        S->link_dirty[d] = 1;
        return sim_heap_push(&S->tags[d], S->vt[d] + c->amount, w, slot, c->version);
    }
    return 0;
}

/* One server: V of both directions brought to now (before any count changes). */
static void advance_links(sim *S, double now)
{
    for (int d = 0; d < 2; d++) {
        if (S->nact[d] > 0)
            S->vt[d] += (now - S->vt_at[d]) * S->c->bandwidth / S->nact[d];
        S->vt_at[d] = now;
    }
}

/* One server: a new event for the earliest flow of direction d. */
static int reschedule_link(sim *S, int d, double now)
{
    S->link_dirty[d] = 0;
    S->link_version[d]++;
    if (!S->tags[d].n)
        return 0;
    double left = S->tags[d].a[0].t - S->vt[d];
    double t = now + (left > 0 ? left : 0) * S->nact[d] / S->c->bandwidth;
    return sim_heap_push(&S->heap, t, -1, d, S->link_version[d]);
}

static int enqueue(sim *S, int w, int op)
{
    const sim_cop *o = &S->p->steps[S->w[w].step].ops[op];
    S->touched |= o->slot < 64 ? 1ULL << o->slot : ~0ULL;
    return fifo_push(&S->q[w * S->S + o->slot], op, o->amount, 0);
}

static int new_step(sim *S, int w)
{
    worker *k = &S->w[w];
    k->step = S->p->nsteps > 1 ? sim_rng_below(&S->rng, S->p->nsteps) : 0;
    const sim_cstep *st = &S->p->steps[k->step];
    for (int i = 0; i < st->nops; i++)
        k->deps[i] = st->ops[i].ndeps;
    k->outstanding = st->nops;
    for (int r = 0; r < st->nroots; r++)
        if (enqueue(S, w, st->roots[r]))
            return -1;
    return 0;
}

/* New rate of chunk c at now: bytes left so far, a new event. */
static int set_rate(sim *S, int w, int slot, double rate, double now)
{
    chunk *c = &S->ch[w * S->S + slot];
    if (c->rate == rate)
        return 0;
    if (c->rate > 0) {
        c->rem -= (now - c->t_last) * c->rate;
        if (c->rem < 0)
            c->rem = 0;
    }
    c->t_last = now;
    c->rate = rate;
    c->version++;
    return sim_heap_push(&S->heap, now + c->rem / rate, w, slot, c->version);
}

/* Shares of worker w's active connections in direction dir: max-min fair
 * within the worker's own link, each capped at 1/n of its server. */
static int rerate_worker(sim *S, int w, int dir, double now)
{
    double B = S->c->bandwidth;
    if (S->M == 1) {
        int slot = 1 + dir;
        if (!S->ch[w * S->S + slot].busy)
            return 0;
        return set_rate(S, w, slot, B / S->nact[dir], now);
    }
    int slots[SIM_MAX_SERVERS], k = 0;
    double cap[SIM_MAX_SERVERS];
    for (int s = 0; s < S->M; s++) {
        int slot = 1 + 3 * s + dir;
        if (!S->ch[w * S->S + slot].busy)
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
        if (set_rate(S, w, slots[j], B * share, now))
            return -1;
    }
    return 0;
}

static int rerate_all(sim *S, int dir, double now)
{
    for (int w = 0; w < S->W; w++)
        if (rerate_worker(S, w, dir, now))
            return -1;
    return 0;
}

static void account(sim *S, int w, double now)
{
    worker *k = &S->w[w];
    k->t_cat[k->cat] += now - k->last_t;
    k->last_t = now;
}

static int category(const sim *S, int w)
{
    const chunk *c = &S->ch[w * S->S];
    if (c[0].busy)
        return 0;
    for (int s = 0; s < S->M; s++)
        if (c[1 + 3 * s].busy || c[2 + 3 * s].busy)
            return 1;
    return 2;
}

static int complete_op(sim *S, int w, int op)
{
    worker *k = &S->w[w];
    const sim_cstep *st = &S->p->steps[k->step];
    const sim_cop *o = &st->ops[op];
    for (int d = 0; d < o->count; d++) {
        int j = st->dependents[o->first + d];
        if (--k->deps[j] == 0 && enqueue(S, w, j))
            return -1;
    }
    k->outstanding--;
    return 0;
}

/* Starts chunks on every idle slot of w with pending work (the touched
 * ones: only they can have got work since the last event of w). */
static int fill_slots(sim *S, int w, double now)
{
    uint64_t t = S->touched;
    S->touched = 0;
    for (int slot = 0; slot < S->S && t; slot++) {
        if (slot < 64 && !(t & (1ULL << slot)))
            continue;
        if (!S->ch[w * S->S + slot].busy && S->q[w * S->S + slot].n &&
            start_chunk(S, w, slot, now))
            return -1;
    }
    return 0;
}

static int handle(sim *S, const sim_event *ev, double *finish)
{
    int w = ev->worker, slot = ev->slot;
    double now = ev->t;
    chunk *c = &S->ch[w * S->S + slot];
    int before[2][SIM_MAX_SERVERS];
    for (int s = 0; s < S->M; s++)
        for (int d = 0; d < 2; d++)
            before[d][s] = S->nact[2 * s + d];
    account(S, w, now);
    c->busy = 0;
    S->touched = slot < 64 ? 1ULL << slot : ~0ULL; /* its next chunk */
    S->started[0] = S->started[1] = 0;
    int net = slot && sim_slot_res(slot) != SIM_PS;
    if (net) {
        if (S->M == 1)
            S->link_dirty[link_dir(slot)] = 1;
        S->nact[2 * sim_slot_server(slot) + link_dir(slot)]--;
        S->busy[slot] += c->amount;
    } else {
        S->busy[slot] += now - c->start;
    }
    if (S->c->trace)
        S->c->trace(S->c->trace_arg, w, slot, S->w[w].step, c->op, c->start, now, c->last);
    if (c->last && complete_op(S, w, c->op))
        return -1;
    if (!S->w[w].outstanding) {
        if (++S->w[w].done < S->c->steps) {
            if (new_step(S, w))
                return -1;
        } else if (now > *finish) {
            *finish = now;
        }
    }
    if (fill_slots(S, w, now))
        return -1;
    for (int d = 0; d < 2; d++) {
        if (S->M == 1) {
            if (S->link_dirty[d] && reschedule_link(S, d, now))
                return -1;
            continue;
        }
        int changed = 0;
        for (int s = 0; s < S->M; s++)
            changed |= before[d][s] != S->nact[2 * s + d];
        if (changed ? rerate_all(S, d, now)
                    : S->started[d] ? rerate_worker(S, w, d, now) : 0)
            return -1;
    }
    S->w[w].cat = S->w[w].done < S->c->steps ? category(S, w) : 2;
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
        for (int i = 0; i < S->W * S->S; i++)
            free(S->q[i].a);
    free(S->w);
    free(S->ch);
    free(S->q);
    free(S->nact);
    free(S->busy);
    sim_heap_free(&S->heap);
    sim_heap_free(&S->tags[0]);
    sim_heap_free(&S->tags[1]);
}

static int sim_alloc(sim *S)
{
    int n = S->W * S->S;
    S->w = calloc((size_t)S->W, sizeof *S->w);
    S->ch = calloc((size_t)n, sizeof *S->ch);
    S->q = calloc((size_t)n, sizeof *S->q);
    S->nact = calloc((size_t)(2 * S->M), sizeof *S->nact);
    S->busy = calloc((size_t)S->S, sizeof *S->busy);
    if (!S->w || !S->ch || !S->q || !S->nact || !S->busy)
        return -1;
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
    out->steps_per_s = span > 0 ? out->steps / span : INFINITY;
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

int sim_run(const sim_program *p, const sim_config *c, sim_result *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    if (check_config(p, c, e))
        return -1;
    sim S = {.p = p, .c = c, .W = c->workers, .S = p->nslots, .M = p->servers,
             .rng = {c->seed}};
    sim_heap_init(&S.heap);
    sim_heap_init(&S.tags[0]);
    sim_heap_init(&S.tags[1]);
    double finish = 0;
    int rc = -1;
    if (sim_alloc(&S))
        goto oom;
    for (int w = 0; w < S.W; w++)
        if (new_step(&S, w) || fill_slots(&S, w, 0))
            goto oom;
    for (int d = 0; d < 2; d++)
        if (S.M == 1 ? reschedule_link(&S, d, 0) : rerate_all(&S, d, 0))
            goto oom;
    for (int w = 0; w < S.W; w++)
        S.w[w].cat = category(&S, w);
    sim_event ev;
    while (sim_heap_pop(&S.heap, &ev)) {
        if (ev.worker < 0) { /* one server: the earliest flow of a direction ends */
            int d = ev.slot;
            if (ev.version != S.link_version[d])
                continue;
            sim_event flow;
            if (!sim_heap_pop(&S.tags[d], &flow))
                continue;
            advance_links(&S, ev.t);
            flow.t = ev.t;
            S.events++;
            if (handle(&S, &flow, &finish))
                goto oom;
            continue;
        }
        chunk *ch = &S.ch[ev.worker * S.S + ev.slot];
        if (!ch->busy || ch->version != ev.version)
            continue;
        S.events++;
        if (S.M == 1)
            advance_links(&S, ev.t);
        if (handle(&S, &ev, &finish))
            goto oom;
    }
    summarize(&S, finish, out);
    rc = 0;
    goto done;
oom:
    sim_error_set(e, NULL, -1, "", "out of memory");
done:
    sim_free(&S);
    return rc;
}
