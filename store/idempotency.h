/*
 * idempotency.h — SQL for the Idempotency-Key of POST requests (table
 * idempotency_keys, migration 0021; api/idempotency.c speaks HTTP).
 *
 * A request with a key first claims it: a new key (or one expired, or one
 * whose pending holder's lock ran out: its process died) becomes this
 * request's, pending; otherwise the stored row comes back to compare and
 * replay. The holder then records the answer (store_idem_finish) or lets
 * the key go (store_idem_release) when the answer is not one a retry should
 * see again (5xx, 429).
 *
 * What the request creates names itself in the key's row in the transaction
 * that creates it (created: the triggers of migration 0022, fed by
 * store_bind_idempotency() in store/db.h). A pending key that names what it
 * created is never taken over: its first request committed, and only its
 * answer was lost.
 */
#ifndef PERFCAST_STORE_IDEMPOTENCY_H
#define PERFCAST_STORE_IDEMPOTENCY_H

#include <stddef.h>
#include <stdint.h>

#include "store/db.h"

typedef struct store_idem {
    int claimed;              /* 1: the key is now this request's (pending) */
    int pending;              /* not claimed: 1 while its first request runs */
    int same_request;         /* not claimed: the fingerprint and route match */
    int status;               /* a done key's answer */
    char content_type[64];
    char location[160];
    char route[96];           /* the route the key was first used on */
    char created[160];        /* pending: what its first request created and committed
                                 (the location; "" none yet), migration 0022 */
    int lock_over;            /* pending: its holder's lock ran out (the holder died) */
    char *body;               /* malloc'ed (NUL-terminated), NULL when none */
    size_t body_len;
} store_idem;

/* Claims (tenant, key) for a request with the given 32-byte fingerprint on
 * route: pending for lock_seconds, kept for ttl_seconds. */
int store_idem_claim(PGconn *c, int64_t tenant, const char *key, const unsigned char fp[32],
                     const char *route, double lock_seconds, double ttl_seconds,
                     store_idem *out, store_error *err);
/* Records the answer of a claimed key (done). */
int store_idem_finish(PGconn *c, int64_t tenant, const char *key, int status,
                      const char *content_type, const char *location, const char *body,
                      size_t body_len, store_error *err);
/* Lets a claimed key go: the next request with it runs anew; unless its
 * request created something already (committed): then the key is kept and
 * created (cap bytes) is its location, else "". */
int store_idem_release(PGconn *c, int64_t tenant, const char *key, char *created, size_t cap,
                       store_error *err);
/* Deletes expired keys; *n how many. */
int store_idem_purge(PGconn *c, int *n, store_error *err);
void store_idem_free(store_idem *s);

#endif
