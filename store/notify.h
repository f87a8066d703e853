/*
 * notify.h — tells every server process on the database that something they
 * may hold in memory changed: a NOTIFY on perfcast_cache whose payload names
 * what ("models <experiment>", "experiment <id>", "token <id>").
 * api/cache_sync.c LISTENs and drops the entries named. Sent inside the
 * writing transaction when there is one, so that no process hears of a
 * change before it is committed.
 */
#ifndef PERFCAST_STORE_NOTIFY_H
#define PERFCAST_STORE_NOTIFY_H

#include <stdint.h>

#include "store/db.h"

#define STORE_CACHE_CHANNEL "perfcast_cache"

/* NOTIFY perfcast_cache, '<what> <id>'. 0, or a store error. */
int store_notify_cache(PGconn *c, const char *what, int64_t id, store_error *err);

#endif
