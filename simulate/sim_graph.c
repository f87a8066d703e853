/*
 * sim_graph.c — resource names, freeing and validation of a step graph
 * (sim_graph.h). Cycles are found with Kahn's algorithm per step; duplicate
 * ids by sorting the ids of a step.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "simulate/sim_graph.h"

static const char *const res_names[] = {"downlink", "worker", "uplink", "ps"};

void sim_error_set(sim_error *e, const char *op, int step, const char *field, const char *fmt,
                   ...)
{
    if (!e)
        return;
    snprintf(e->op, sizeof e->op, "%s", op ? op : "");
    e->step = step;
    snprintf(e->field, sizeof e->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->offset = -1;
}

void sim_error_at(sim_error *e, long offset)
{
    if (e)
        e->offset = offset;
}

void sim_error_field(const sim_error *e, char *buf, size_t cap)
{
    if (e->op[0])
        snprintf(buf, cap, "steps[%d].ops[%s].%s", e->step, e->op, e->field);
    else if (e->step >= 0 && e->field[0])
        snprintf(buf, cap, "steps[%d].%s", e->step, e->field);
    else if (!e->field[0] && e->offset >= 0)
        snprintf(buf, cap, "body");
    else
        snprintf(buf, cap, "%s", e->field);
}

const char *sim_res_name(int res)
{
    return res >= 0 && res < 4 ? res_names[res] : "?";
}

int sim_res_from_name(const char *s)
{
    for (int i = 0; i < 4; i++)
        if (s && !strcmp(s, res_names[i]))
            return i;
    return -1;
}

/* The pool: a list of chunks, each at least SIM_POOL_CHUNK bytes, filled
 * from the front. Chunks are mapped pages of their own (not malloc's heap,
 * where freed memory may stay with the process), so a freed graph goes back
 * to the system at once. */
#define SIM_POOL_CHUNK (1u << 20)

typedef struct sim_chunk {
    struct sim_chunk *next;
    size_t used, cap;
    _Alignas(8) unsigned char data[];
} sim_chunk;

struct sim_pool {
    sim_chunk *head;
    size_t bytes;
};

void *sim_graph_alloc(sim_graph *g, size_t n)
{
    return sim_pool_alloc(&g->pool, n);
}

void *sim_pool_alloc(sim_pool **pool, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    if (!n)
        n = 8;
    if (!*pool && !(*pool = calloc(1, sizeof **pool)))
        return NULL;
    sim_pool *pl = *pool;
    sim_chunk *c = pl->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > SIM_POOL_CHUNK / 4 ? n : SIM_POOL_CHUNK - sizeof *c;
        void *m = mmap(NULL, sizeof(sim_chunk) + cap, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return NULL;
        sim_chunk *nc = m;
        nc->used = 0;
        nc->cap = cap;
        pl->bytes += sizeof *nc + cap;
        if (c && cap != SIM_POOL_CHUNK - sizeof *c) {
            /* a large block goes behind the chunk being filled */
            nc->next = c->next;
            c->next = nc;
        } else {
            nc->next = c;
            pl->head = nc;
        }
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

size_t sim_graph_pool_bytes(const sim_graph *g)
{
    return g->pool ? g->pool->bytes : 0;
}

void sim_pool_free(sim_pool *p)
{
    if (!p)
        return;
    for (sim_chunk *c = p->head, *next; c; c = next) {
        next = c->next;
        munmap(c, sizeof *c + c->cap);
    }
    free(p);
}

void sim_graph_free(sim_graph *g)
{
    if (!g)
        return;
    if (g->pool) {
        sim_pool_free(g->pool);
        free(g->steps);
        memset(g, 0, sizeof *g);
        return;
    }
    for (int s = 0; s < g->nsteps; s++) {
        sim_step *st = &g->steps[s];
        for (int i = 0; i < st->nops; i++) {
            free(st->ops[i].id);
            free(st->ops[i].name);
            free(st->ops[i].deps);
        }
        free(st->ops);
    }
    free(g->steps);
    memset(g, 0, sizeof *g);
}

size_t sim_graph_nops(const sim_graph *g)
{
    size_t n = 0;
    for (int s = 0; s < g->nsteps; s++)
        n += (size_t)g->steps[s].nops;
    return n;
}

static int check_op(const sim_graph *g, int s, int i, sim_error *e)
{
    const sim_op *op = &g->steps[s].ops[i];
    const char *id = op->id ? op->id : "";
    if (!op->id || !op->id[0]) {
        char buf[32];
        snprintf(buf, sizeof buf, "#%d", i);
        sim_error_set(e, buf, s, "id", "operation %d of step %d has no id", i, s);
        return -1;
    }
    if (op->res < 0 || op->res > 3) {
        sim_error_set(e, id, s, "resource",
                      "unknown resource (downlink, worker, uplink or ps)");
        return -1;
    }
    if (sim_res_is_link(op->res)) {
        if (!(op->bytes > 0) || !isfinite(op->bytes)) {
            sim_error_set(e, id, s, "bytes",
                          op->bytes == -1 ? "a transfer needs its size in bytes (> 0)"
                                          : "a transfer's size must be a positive finite "
                                            "number of bytes");
            return -1;
        }
        if (isnan(op->duration) || isinf(op->duration) || (op->duration < 0 && op->duration != -1)) {
            sim_error_set(e, id, s, "duration", "a recorded duration must be finite and >= 0");
            return -1;
        }
    } else if (!(op->duration >= 0) || !isfinite(op->duration)) {
        sim_error_set(e, id, s, "duration",
                      "a computation needs a finite duration >= 0 (seconds)");
        return -1;
    }
    if (op->server < -1 || op->server >= g->servers) {
        sim_error_set(e, id, s, "server", "server %d is not one of the %d parameter servers",
                      op->server, g->servers);
        return -1;
    }
    for (int d = 0; d < op->ndeps; d++)
        if (op->deps[d] < 0 || op->deps[d] >= g->steps[s].nops || op->deps[d] == i) {
            sim_error_set(e, id, s, "deps", "dependency %d does not name another operation of "
                          "the step", d);
            return -1;
        }
    return 0;
}

static uint64_t id_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return h;
}

/* Unique ids within a step: an open-addressing hash set of the indices. */
static int check_unique(const sim_step *st, int s, sim_error *e)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)st->nops)
        cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot) {
        sim_error_set(e, NULL, s, "", "out of memory");
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        slot[i] = -1;
    int rc = 0;
    for (int i = 0; i < st->nops && !rc; i++) {
        const char *id = st->ops[i].id;
        size_t k = (size_t)id_hash(id) & (cap - 1);
        for (; slot[k] >= 0; k = (k + 1) & (cap - 1))
            if (!strcmp(st->ops[slot[k]].id, id)) {
                sim_error_set(e, id, s, "id", "two operations of step %d have this id", s);
                rc = -1;
                break;
            }
        slot[k] = i;
    }
    free(slot);
    return rc;
}

/* Kahn's algorithm; the cycle is named by one operation left unordered. */
static int check_acyclic(const sim_step *st, int s, sim_error *e)
{
    size_t n = (size_t)st->nops;
    size_t nedges = 0;
    for (size_t i = 0; i < n; i++)
        nedges += (size_t)st->ops[i].ndeps;
    int *indeg = calloc(n, sizeof *indeg), *off = calloc(n + 1, sizeof *off);
    int *adj = malloc((nedges ? nedges : 1) * sizeof *adj), *queue = malloc(n * sizeof *queue);
    int rc = -1;
    if (!indeg || !off || !adj || !queue) {
        sim_error_set(e, NULL, s, "", "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < st->ops[i].ndeps; d++)
            off[st->ops[i].deps[d] + 1]++;
    for (size_t i = 0; i < n; i++)
        off[i + 1] += off[i];
    int *fill = queue; /* reused as cursor before the walk */
    memcpy(fill, off, n * sizeof *fill);
    for (size_t i = 0; i < n; i++) {
        indeg[i] = st->ops[i].ndeps;
        for (int d = 0; d < st->ops[i].ndeps; d++)
            adj[fill[st->ops[i].deps[d]]++] = (int)i;
    }
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++)
        if (!indeg[i])
            queue[tail++] = (int)i;
    while (head < tail) {
        int u = queue[head++];
        for (int k = off[u]; k < off[u + 1]; k++)
            if (--indeg[adj[k]] == 0)
                queue[tail++] = adj[k];
    }
    if (tail < n) {
        for (size_t i = 0; i < n; i++)
            if (indeg[i]) {
                sim_error_set(e, st->ops[i].id, s, "deps",
                              "dependency cycle through this operation");
                break;
            }
        goto out;
    }
    rc = 0;
out:
    free(indeg);
    free(off);
    free(adj);
    free(queue);
    return rc;
}

int sim_graph_check(const sim_graph *g, sim_error *e)
{
    if (g->nsteps < 1) {
        sim_error_set(e, NULL, -1, "steps", "the graph has no step");
        return -1;
    }
    if (g->servers < 1 || g->servers > SIM_MAX_SERVERS) {
        sim_error_set(e, NULL, -1, "servers", "servers must be 1..%d", SIM_MAX_SERVERS);
        return -1;
    }
    if (!(g->batch_size >= 0) || !isfinite(g->batch_size)) {
        sim_error_set(e, NULL, -1, "batch_size", "batch_size must be finite and >= 0");
        return -1;
    }
    for (int s = 0; s < g->nsteps; s++) {
        const sim_step *st = &g->steps[s];
        if (st->nops < 1) {
            sim_error_set(e, NULL, s, "ops", "step %d has no operation", s);
            return -1;
        }
        int timed = 0;
        for (int i = 0; i < st->nops; i++) {
            if (check_op(g, s, i, e))
                return -1;
            timed |= sim_res_is_link(st->ops[i].res) || st->ops[i].duration > 0;
        }
        if (!timed) {
            sim_error_set(e, st->ops[0].id, s, "duration", "every operation of step %d has "
                          "duration 0 and none is a transfer: the step would take no time", s);
            return -1;
        }
        if (check_unique(st, s, e) || check_acyclic(st, s, e))
            return -1;
    }
    return 0;
}
