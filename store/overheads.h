/*
 * overheads.h — overhead sets in PostgreSQL (migration 0009): a platform's
 * host overheads T1–T5 (execgraph/xg_overheads.h), measured on traces and
 * shared across experiments. The set itself travels as its JSON document
 * (api/iteration.h renders and parses it); here it is stored, listed,
 * fetched by id or name, and deleted, always within one tenant.
 */
#ifndef PERFCAST_STORE_OVERHEADS_H
#define PERFCAST_STORE_OVERHEADS_H

#include <stdint.h>

#include "store/db.h"

typedef struct store_overhead_set {
    int64_t id;
    char name[208];
    int traces;
    char created_at[40];
    char *doc;           /* JSON text; NULL in listings */
} store_overhead_set;

/* A new set; a name the tenant already uses -> STORE_CONFLICT. */
int store_overheads_create(PGconn *c, int64_t tenant, const char *name, int traces,
                           const char *doc, store_overhead_set *out, store_error *err);
int store_overheads_get(PGconn *c, int64_t tenant, int64_t id, store_overhead_set *out,
                        store_error *err);
int store_overheads_get_by_name(PGconn *c, int64_t tenant, const char *name,
                                store_overhead_set *out, store_error *err);
/* The tenant's sets by id, without their documents; *out freed with free(). */
int store_overheads_list(PGconn *c, int64_t tenant, int64_t after, int limit,
                         store_overhead_set **out, int *n, store_error *err);
int store_overheads_delete(PGconn *c, int64_t tenant, int64_t id, store_error *err);
void store_overhead_set_free(store_overhead_set *s);

/* The bytes of profile `profile` as uploaded, with its format ("kineto",
 * ...), when it belongs to the tenant (and to experiment exp when exp > 0);
 * else STORE_NOT_FOUND. *raw is malloc'ed (NUL-terminated after len). */
int store_profile_raw(PGconn *c, int64_t tenant, int64_t exp, int64_t profile, char **raw,
                      size_t *len, char format[32], store_error *err);

#endif
