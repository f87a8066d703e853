/*
 * auth_cache.h — what api_authorize() (api/authorize.c) would otherwise ask
 * the database on every request, kept in memory:
 *
 *   tokens       id -> the secret's hash, tenant, scope, usable: as the
 *                database said when asked at most AUTH_CACHE_TOKEN_MS ago,
 *                so that a revocation (or an expiry) counts within that
 *                time on every server even if no notice reaches it; a
 *                revocation on this server drops it before its answer, a
 *                revocation notice (api/cache_sync.c) as soon as heard.
 *   experiments  id -> owning tenant, which never changes; dropped when the
 *                experiment is deleted (here, or by notice from another
 *                server). While notices cannot be heard (the listener lost
 *                its connection) entries count for AUTH_CACHE_OWNER_MS only.
 *
 * A put names the epoch read before the database was asked: when anything
 * was dropped meanwhile, the answer may predate the change and is not kept.
 *   no tokens    open mode (api/auth.h): that no token exists, as the
 *                database said at most AUTH_CACHE_TOKEN_MS ago; any token
 *                notice (one is sent when a token is created) drops it.
 *
 * Only answers the database gave are kept; an unknown id is asked again
 * every time, so an id created on another server is found at once.
 * Thread-safe; fixed-size direct-mapped tables (a colliding id replaces).
 */
#ifndef PERFCAST_API_AUTH_CACHE_H
#define PERFCAST_API_AUTH_CACHE_H

#include <stdint.h>

#include "store/tokens.h"

#define AUTH_CACHE_TOKEN_MS 500
#define AUTH_CACHE_OWNER_MS 1000

typedef struct auth_cache auth_cache;

auth_cache *auth_cache_new(void);
void auth_cache_free(auth_cache *c);

/* Read before asking the database, passed to put: the count of drops (when
 * anything was dropped meanwhile the answer is not kept) and when the
 * database was asked, from which the kept answer's age counts (so that no
 * entry outlives AUTH_CACHE_TOKEN_MS after a change its read could miss:
 * `perfcast token revoke` relies on that bound). */
typedef struct auth_stamp {
    uint64_t epoch;
    int64_t asked_ms;
} auth_stamp;
auth_stamp auth_cache_epoch(auth_cache *c);

/* 1 with *t filled when the token's row is held and fresh, else 0. */
int auth_cache_token_get(auth_cache *c, int64_t id, store_token *t);
void auth_cache_token_put(auth_cache *c, const store_token *t, auth_stamp epoch);
void auth_cache_token_forget(auth_cache *c, int64_t id);
/* Ids (at most max) of tokens asked for since they were loaded and loaded
 * more than age_ms ago: api/cache_sync.c reloads them in the background,
 * so that a token in use never expires under the requests and none of
 * them waits for the database (a request that waited held up every
 * connection of its HTTP thread). Returns how many. */
int auth_cache_token_due(auth_cache *c, int64_t age_ms, int64_t *ids, int max);

/* 1 with *tenant when the experiment's owner is held, else 0. */
int auth_cache_owner_get(auth_cache *c, int64_t experiment, int64_t *tenant);
void auth_cache_owner_put(auth_cache *c, int64_t experiment, int64_t tenant, auth_stamp epoch);
void auth_cache_owner_forget(auth_cache *c, int64_t experiment);

/* 1 when "no token exists" is held and fresh, else 0. */
int auth_cache_no_tokens(auth_cache *c);
void auth_cache_set_no_tokens(auth_cache *c, auth_stamp epoch);

/* Whether notices are being heard (api/cache_sync.c sets it); 0 at start. */
void auth_cache_set_coherent(auth_cache *c, int coherent);
/* Drops everything (after notices may have been missed). */
void auth_cache_flush(auth_cache *c);

#endif
