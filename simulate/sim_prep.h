/*
 * sim_prep.h — preprocessing of the profiled steps (paper 002, §3.2.1 and
 * §3.4) into the program the simulator runs for a given number of
 * parameter servers M:
 *
 *   - every transfer becomes a network part of op.bytes at bandwidth B
 *     (what the simulator shares among workers) followed by a computation
 *     part, the parsing overhead α·bytes + β, on the receiver (the worker for
 *     a downlink, the server's cores for an uplink); the transfer's
 *     dependents wait for the overhead;
 *   - every operation that talks to a parameter server is placed on one of
 *     the M servers: as the trace says when it was profiled with M servers,
 *     else greedily (§5: each tensor, in the order of the step, to the
 *     server holding the fewest bytes so far; downlinks and uplinks
 *     balanced separately; a server computation follows the server of the
 *     uplink it waits for).
 *
 * α and β are fitted by least squares from (size, overhead) pairs
 * (sim_fit_overhead) or given. Pure: no I/O, no globals.
 */
#ifndef PERFCAST_SIM_PREP_H
#define PERFCAST_SIM_PREP_H

#include "simulate/sim_graph.h"

/* Resource slots of one worker: slot 0 is its computation; server s has
 * the slots 1+3s (downlink), 2+3s (uplink) and 3+3s (its cores). */
#define SIM_SLOT_WORKER 0
static inline int sim_slot(int res, int server)
{
    return res == SIM_WORKER ? 0 : 1 + 3 * server + (res == SIM_DOWNLINK ? 0 : res == SIM_UPLINK ? 1 : 2);
}
static inline int sim_slot_res(int slot)
{
    return slot == 0 ? SIM_WORKER : (slot - 1) % 3 == 0 ? SIM_DOWNLINK : (slot - 1) % 3 == 1 ? SIM_UPLINK : SIM_PS;
}
static inline int sim_slot_server(int slot) { return slot == 0 ? -1 : (slot - 1) / 3; }

typedef enum sim_cop_kind {
    SIM_COP_COMPUTE = 0,  /* a profiled computation (seconds) */
    SIM_COP_NETWORK = 1,  /* the network part of a transfer (bytes) */
    SIM_COP_OVERHEAD = 2, /* the parsing overhead of a transfer (seconds) */
} sim_cop_kind;

typedef struct sim_cop {
    int slot;
    int kind;         /* sim_cop_kind */
    double amount;    /* seconds, or bytes for SIM_COP_NETWORK */
    int ndeps;        /* prerequisites */
    int first, count; /* its dependents: step.dependents[first .. first+count) */
    int src;          /* the graph operation it comes from */
} sim_cop;

/* What the event loop reads of an operation, packed in 16 bytes: its one
 * dependent in ref when it has one, else its dependents are
 * dependents[ref .. ref + count) (count SIM_HOP_MANY: see ops[].count). */
#define SIM_HOP_MANY 0xffff
typedef struct sim_hop {
    double amount;
    int ref;
    unsigned short slot;
    unsigned short count;
} sim_hop;

typedef struct sim_cstep {
    int nops;
    sim_cop *ops;
    int *dependents;
    int nroots;
    int *roots;       /* operations with no prerequisite, in graph order */
    sim_hop *hot;     /* per operation */
    int *ndeps;       /* per operation: its prerequisites */
} sim_cstep;

typedef struct sim_program {
    int nsteps;
    sim_cstep *steps;
    int servers;      /* M */
    int nslots;       /* 1 + 3M */
    int max_ops;      /* largest step */
    int *slot_cap;    /* per slot: most operations of one step on it */
    double batch_size;
    double alpha, beta;
    sim_pool *pool;   /* every step's arrays (sim_pool_alloc), freed with it */
} sim_program;

/* Least-squares line overhead = alpha·size + beta through n pairs. Returns
 * 0, or -1 with e when n < 2, a value is not finite or negative, or all
 * sizes are equal. */
int sim_fit_overhead(const double *size, const double *overhead, int n, double *alpha,
                     double *beta, sim_error *e);

/* Compiles a checked graph for M servers with parsing overhead α·bytes + β
 * (both >= 0; 0, 0 = none). Returns 0, or -1 with e (out of memory, M out of
 * range). */
int sim_prepare(const sim_graph *g, int servers, double alpha, double beta, sim_program *out,
                sim_error *e);
void sim_program_free(sim_program *p);

/* Bytes per server and direction (dir 0 down, 1 up) of one step averaged
 * over the profiled steps: out[2*s + dir]. */
void sim_program_bytes(const sim_program *p, double *out);

#endif
