/*
 * cache_sync.h — keeps this server's in-memory caches (api/model_cache.h,
 * api/auth_cache.h) coherent with every other server on the same database:
 * a thread with a connection of its own LISTENs on perfcast_cache
 * (store/notify.h) and drops what each notice names:
 *
 *   "models <experiment>"      the experiment's cached models (a refit committed)
 *   "experiment <experiment>"  its models and its owner (deleted)
 *   "token <id>"               the token's verification (revoked)
 *
 * Once listening it flushes both caches (notices sent before were not
 * heard) and marks them coherent, so entries live until dropped; when the
 * connection is lost it marks them not coherent (entries then expire by
 * age) and reconnects every second.
 *
 * While listening it also reloads, every 100 ms, the token rows that
 * requests used and that are older than 200 ms (auth_cache_token_due), so
 * that a token in use is never found expired by a request, which would
 * then wait for the database with every connection of its HTTP thread.
 */
#ifndef PERFCAST_API_CACHE_SYNC_H
#define PERFCAST_API_CACHE_SYNC_H

#include "api/api.h"

typedef struct cache_sync cache_sync;

/* Starts the listener for ctx's caches and database; NULL when the thread
 * cannot be created (the caches then stay not coherent). */
cache_sync *cache_sync_start(api_ctx *ctx);
/* Stops and joins the thread; NULL is fine. */
void cache_sync_stop(cache_sync *s);
/* 1 while listening (for /metrics and tests), else 0. */
int cache_sync_listening(const cache_sync *s);

#endif
