/*
 * simulations.h — the simulator's experiments, profiles and runs in the
 * database (migrations/0010_simulations.sql). Validation and simulation are
 * the API's (api/simulations.c); these only store and load. Each function
 * takes a connection from store_acquire().
 */
#ifndef PERFCAST_STORE_SIMULATIONS_H
#define PERFCAST_STORE_SIMULATIONS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

typedef struct store_sim {
    int64_t id, tenant_id;
    char *name;
    json_t *spec;
    char created_at[40];
} store_sim;

/* Inserts s (tenant_id, name, spec); fills id, created_at. Taken name ->
 * STORE_CONFLICT, with s->id the tenant's simulation of that name (0 when it
 * could not be read). */
int store_sim_create(PGconn *c, store_sim *s, store_error *err);
/* Unknown id -> STORE_NOT_FOUND. */
int store_sim_get(PGconn *c, int64_t id, store_sim *out, store_error *err);
int store_sim_list(PGconn *c, int64_t tenant, int64_t after, int limit, store_sim **out, int *n,
                   store_error *err);
/* Deletes simulation id of tenant with its profiles and runs. */
int store_sim_delete(PGconn *c, int64_t id, int64_t tenant, store_error *err);
void store_sim_free(store_sim *s);
void store_sim_list_free(store_sim *v, int n);
/* Owner of simulation id; unknown -> STORE_NOT_FOUND. */
int store_sim_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err);

typedef struct store_sim_profile {
    int64_t id, sim_id;
    char source[16];
    int steps, ops, servers;
    char created_at[40];
} store_sim_profile;

/* Stores an upload (raw bytes, their SHA-256, the normalized graph text:
 * "" when the raw bytes are the step graph itself), in pieces when large.
 * The same bytes uploaded again to the same simulation: *duplicate = 1 and
 * the first profile's id. */
int store_sim_profile_add(PGconn *c, store_sim_profile *p, const void *raw, size_t rawlen,
                          const unsigned char sha256[32], const char *graph, int *duplicate,
                          store_error *err);
/* Profiles of simulation sim, by id. */
int store_sim_profile_list(PGconn *c, int64_t sim, store_sim_profile **out, int *n,
                           store_error *err);
/* Receives the stored graph piece by piece; non-zero stops the reading. */
typedef int (*store_sim_sink)(void *ctx, const char *bytes, size_t len);
/* The graph of profile id of simulation sim (newest when id = 0), in pieces
 * of 4 MiB at most (single-row mode, so no buffer holds the whole graph):
 * the normalized graph text, or the upload's own bytes when it was a step
 * graph (stored with an empty graph: the text is the graph). The profile's
 * id into *id. Unknown -> STORE_NOT_FOUND; a sink that stopped ->
 * STORE_INTERNAL. */
int store_sim_profile_read(PGconn *c, int64_t sim, int64_t *id, store_sim_sink sink, void *ctx,
                           store_error *err);

typedef struct store_sim_run {
    int64_t id, sim_id, profile_id;
    char state[12];
    int attempts;      /* claims so far (the current one's number while running) */
    char worker[128];  /* who holds it while running ("" otherwise) */
    json_t *request;
    char *result; /* JSON text, NULL unless done */
    char *error;  /* NULL unless failed */
    char created_at[40], finished_at[40];
} store_sim_run;

/* Inserts a run in state (queued or done, with result when done). */
int store_sim_run_add(PGconn *c, store_sim_run *r, store_error *err);
/* Run id of simulation sim; unknown -> STORE_NOT_FOUND. */
int store_sim_run_get(PGconn *c, int64_t sim, int64_t id, store_sim_run *out, store_error *err);
/* Takes the oldest queued run, or the oldest running one whose lease expired
 * (its worker stopped) with attempts left, for worker: running, attempts + 1,
 * leased for lease_seconds; into *out. Runs whose lease expired with no
 * attempts left are failed first. None -> STORE_NOT_FOUND. */
int store_sim_run_claim(PGconn *c, const char *worker, double lease_seconds, store_sim_run *out,
                        store_error *err);
/* Extends the lease of run id held by (worker, attempt). Not held any more
 * (deleted, or the lease lost to another claim) -> STORE_CONFLICT. */
int store_sim_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                            double lease_seconds, store_error *err);
/* Records the outcome of run id held by (worker, attempt): result (done) or
 * error (failed). Not held any more -> STORE_CONFLICT, nothing written. */
int store_sim_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                         const char *result, const char *error, store_error *err);
void store_sim_run_free(store_sim_run *r);

#endif
