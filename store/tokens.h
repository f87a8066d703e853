/*
 * tokens.h — tenants and API tokens in the database (migration 0006).
 *
 * Only SHA-256 hashes of token secrets are stored; generating secrets,
 * hashing and comparing them is api/auth.c's job. Ownership lookups answer
 * which tenant an experiment or a job belongs to, for the router's check
 * before any experiment-scoped handler runs.
 */
#ifndef PERFCAST_STORE_TOKENS_H
#define PERFCAST_STORE_TOKENS_H

#include <jansson.h>
#include <stdint.h>

#include "store/db.h"

#define STORE_DEFAULT_TENANT 1 /* owns what existed before tenants, and open mode */

/* Scopes, each including the ones below it. */
enum { STORE_SCOPE_NONE = 0, STORE_SCOPE_READ = 1, STORE_SCOPE_WRITE = 2, STORE_SCOPE_ADMIN = 3 };

/* "read" | "write" | "admin" -> scope, STORE_SCOPE_NONE otherwise; and back. */
int store_scope_from_name(const char *name);
const char *store_scope_name(int scope);

typedef struct store_token {
    int64_t id;
    int64_t tenant_id;
    int scope;
    unsigned char sha256[32];
    int usable; /* neither revoked nor expired, by the database's clock */
} store_token;

/* The tenant named name, created when new, into *id. */
int store_tenant_ensure(PGconn *c, const char *name, int64_t *id, store_error *err);
/* Tenant name -> id; unknown -> STORE_NOT_FOUND. */
int store_tenant_find(PGconn *c, const char *name, int64_t *id, store_error *err);

/* Inserts a token of tenant with the given hash and scope, expiring after
 * expires_s seconds (0: never), and fills *id. */
int store_token_create(PGconn *c, int64_t tenant, int scope, const unsigned char sha256[32],
                       long long expires_s, int64_t *id, store_error *err);
/* Loads token id; unknown -> STORE_NOT_FOUND. */
int store_token_get(PGconn *c, int64_t id, store_token *out, store_error *err);
/* Tokens of tenant (0: all) as a JSON array of {id, tenant, scope,
 * created_at, expires_at, revoked_at}, by id, into *out. */
int store_token_list(PGconn *c, int64_t tenant, json_t **out, store_error *err);
/* Revokes token id of tenant (0: any tenant). Unknown, or another
 * tenant's -> STORE_NOT_FOUND; revoking twice keeps the first time. */
int store_token_revoke(PGconn *c, int64_t id, int64_t tenant, store_error *err);
/* Whether any token was ever created (revoked ones count). */
int store_tokens_exist(PGconn *c, int *exist, store_error *err);

/* The tenant owning experiment id / the experiment of job id;
 * unknown -> STORE_NOT_FOUND. */
int store_experiment_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err);
int store_job_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err);

#endif
