/*
 * notify.c — the cache invalidation notice (see notify.h).
 */
#include "store/notify.h"

#include <inttypes.h>
#include <stdio.h>

int store_notify_cache(PGconn *c, const char *what, int64_t id, store_error *err)
{
    char payload[96];
    snprintf(payload, sizeof payload, "%s %" PRId64, what, id);
    const char *vals[] = {payload};
    PGresult *r = PQexecParams(c, "SELECT pg_notify('" STORE_CACHE_CHANNEL "', $1)", 1, NULL,
                               vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}
