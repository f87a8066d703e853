/*
 * sim_graph.h — the step graph of asynchronous SGD with parameter servers
 * (paper 002, §2 and §3.4): the operations of each profiled training step of
 * one worker, each on one resource (downlink, worker, uplink, ps), with a
 * duration (computation) or a size in bytes (transfers), the parameter
 * server it talks to, and the operations it waits for.
 *
 * Readers (ingest/sim_graph_json.c, ingest/sim_tftrace.c) build it;
 * sim_graph_check() validates it (dangling ids, cycles, values) before the
 * simulator compiles it (sim_prep.h). Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SIM_GRAPH_H
#define PERFCAST_SIM_GRAPH_H

#include <stddef.h>

typedef enum sim_res {
    SIM_DOWNLINK = 0, /* parameter server -> worker (parameters) */
    SIM_WORKER = 1,   /* the worker's CPU/GPU */
    SIM_UPLINK = 2,   /* worker -> parameter server (updates) */
    SIM_PS = 3,       /* the parameter server's cores (model update) */
} sim_res;

#define SIM_MAX_SERVERS 64
#define SIM_MAX_WORKERS 1024

/* What went wrong, naming the operation (id, step) and the field when there
 * is one; op[0] == 0 when the fault is not an operation's. */
typedef struct sim_error {
    char op[128];
    int step;        /* 0-based profiled step, -1 when none */
    char field[64];
    char msg[256];
    long offset;     /* byte of the document where it is not JSON, -1 otherwise */
} sim_error;

/* Sets e (offset -1); nothing when e is NULL. */
void sim_error_set(sim_error *e, const char *op, int step, const char *field, const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
/* Marks e as a fault of the document's syntax at byte offset. */
void sim_error_at(sim_error *e, long offset);
/* Where e is, as the API's "field" and the CLI name it: "steps[s].ops[id].f"
 * for an operation's field, "steps[s].f" for a step's, "body" for a
 * document that is not JSON (e->offset >= 0), else e->field ("" when the
 * fault is nobody's, such as running out of memory). */
void sim_error_field(const sim_error *e, char *buf, size_t cap);

typedef struct sim_op {
    char *id;        /* unique within its step */
    char *name;      /* what the profiler called it (may equal id) */
    int res;         /* sim_res */
    double duration; /* seconds: computation; for a transfer, the recorded
                        time (< 0 when not recorded) */
    double bytes;    /* transfers: tensor size (> 0); computation: < 0 */
    int server;      /* parameter server index, -1 = not said (assigned by size) */
    int ndeps;
    int *deps;       /* indices of the operations it waits for, same step */
} sim_op;

typedef struct sim_step {
    int nops;
    sim_op *ops;
} sim_step;

/* Memory a graph owns in large chunks (sim_graph_alloc). */
typedef struct sim_pool sim_pool;

typedef struct sim_graph {
    int nsteps;
    sim_step *steps;
    double batch_size; /* samples per step and worker; 0 = unknown */
    int servers;       /* parameter servers of the profile (>= 1) */
    sim_pool *pool;    /* NULL: every step's ops, each op's id, name and deps are
                          malloc'd one by one; else they all live in the pool
                          (ids and names interned by the reader), freed with it */
} sim_graph;

/* n bytes (8-byte aligned, zeroed) from *pool, which is created on first
 * use; NULL when out of memory. The chunks are mapped pages of their own,
 * not the heap's, so that sim_pool_free gives them back to the system at
 * once (a heap would keep them for the process, per thread's arena). */
void *sim_pool_alloc(sim_pool **pool, size_t n);
void sim_pool_free(sim_pool *p);

/* n bytes (8-byte aligned, zeroed) owned by g's pool, which is created on
 * first use; NULL when out of memory. A graph built this way keeps every
 * step's ops array and each op's strings and deps in the pool. */
void *sim_graph_alloc(sim_graph *g, size_t n);
/* Bytes the pool holds (its chunks), 0 without one. */
size_t sim_graph_pool_bytes(const sim_graph *g);

const char *sim_res_name(int res);
/* "downlink", "worker", "uplink", "ps" -> sim_res; -1 otherwise. */
int sim_res_from_name(const char *s);
static inline int sim_res_is_link(int res) { return res == SIM_DOWNLINK || res == SIM_UPLINK; }

void sim_graph_free(sim_graph *g);

/* Checks every operation: finite non-negative durations, a positive finite
 * size on transfers, a known resource, servers within [0, g->servers),
 * dependencies within the step, no cycles, unique ids, at least one step
 * and one operation. Returns 0, or -1 with e naming the operation and the
 * field. */
int sim_graph_check(const sim_graph *g, sim_error *e);

/* Operations over all steps. */
size_t sim_graph_nops(const sim_graph *g);

#endif
