/*
 * experiments.h — experiments in the database: create, get, list, delete.
 *
 * An experiment is stored as its name, ordered parameter names and scaling
 * in columns, and the rest of its validated creation document (training and
 * cost set-up, later modeler options) as the jsonb `spec`. Validation is the
 * API's job (api/experiments.c); these functions only store and load. Each
 * takes a connection from store_acquire(), so callers can combine them with
 * other statements in one transaction.
 */
#ifndef PERFCAST_STORE_EXPERIMENTS_H
#define PERFCAST_STORE_EXPERIMENTS_H

#include <jansson.h>
#include <stdint.h>

#include "store/db.h"

typedef struct store_experiment {
    int64_t id;
    int64_t tenant_id;  /* the owner (store/tokens.h); names are unique per tenant */
    char *name;
    int nparams;
    char **parameters;  /* nparams names, in order */
    char *scaling;      /* "weak" | "strong" */
    json_t *spec;       /* object: {"training": {...}, "cost": {...}, ...} */
    char created_at[40]; /* RFC 3339, UTC */
} store_experiment;

/* Inserts e (tenant_id, name, parameters, scaling, spec) and fills e->id and
 * e->created_at. A taken name -> STORE_CONFLICT, with e->id the id of the
 * tenant's experiment of that name (0 when it could not be read). */
int store_experiment_create(PGconn *c, store_experiment *e, store_error *err);

/* Loads experiment id into *out (owned by the caller: store_experiment_free).
 * Unknown id -> STORE_NOT_FOUND. */
int store_experiment_get(PGconn *c, int64_t id, store_experiment *out, store_error *err);

/* Up to limit experiments of tenant with id > after, by id, into a new
 * array *out of *n (free with store_experiment_list_free). */
int store_experiment_list(PGconn *c, int64_t tenant, int64_t after, int limit,
                          store_experiment **out, int *n, store_error *err);

/* Deletes experiment id of tenant and everything that belongs to it
 * (profiles, jobs, models: ON DELETE CASCADE). Unknown id, or another
 * tenant's -> STORE_NOT_FOUND. */
int store_experiment_delete(PGconn *c, int64_t id, int64_t tenant, store_error *err);

/* Frees what e owns (not e itself) and zeroes it. */
void store_experiment_free(store_experiment *e);
void store_experiment_list_free(store_experiment *v, int n);

#endif
