/*
 * db.h — perfcast's PostgreSQL access: a fixed pool of libpq connections,
 * errors as values, and the migrations runner. Entity queries live in their
 * own files (store/experiments.c, store/profiles.c, store/jobs.c,
 * store/models.c) and take connections from here. SQL only through
 * PQexecParams / prepared statements: nothing is ever built from input.
 */
#ifndef PERFCAST_STORE_DB_H
#define PERFCAST_STORE_DB_H

#include <libpq-fe.h>
#include <stdint.h>

enum {
    STORE_OK = 0,
    STORE_NOT_FOUND,   /* -> 404 */
    STORE_CONFLICT,    /* -> 409 */
    STORE_INVALID,     /* -> 400 */
    STORE_UNAVAILABLE, /* database unreachable -> 503 + Retry-After */
    STORE_INTERNAL,    /* -> 500 */
};

typedef struct store_error {
    int code;
    char msg[256];
    char field[48]; /* the input at fault for STORE_INVALID, "" when not known */
} store_error;

typedef struct store store;

/* Opens pool_size connections lazily (the first acquire connects). Never
 * fails because the database is down: acquire reports that. NULL only when
 * out of memory. */
store *store_open(const char *conninfo, int pool_size);
void store_close(store *s);

/* A connection for one request or job; waits while all are in use. Broken
 * connections are re-established here; when the database is unreachable
 * returns NULL with STORE_UNAVAILABLE. */
PGconn *store_acquire(store *s, store_error *err);
/* A new connection of its own, outside the pool, for a long-lived session
 * such as the workers' LISTEN; the caller closes it with PQfinish(). NULL
 * with STORE_UNAVAILABLE when the database is unreachable. */
PGconn *store_connect(store *s, store_error *err);

/* Gives the connection back; a connection left inside a transaction or in a
 * bad state is rolled back or reset first. */
void store_release(store *s, PGconn *c);
/* Gives the connection back closed, its slot connecting again on a later
 * acquire: for one that carried large messages, since libpq keeps its
 * buffers as large as the largest message sent or received for as long as
 * the connection lives. */
void store_release_closed(store *s, PGconn *c);
/* Bytes of one message past which a caller gives its connection back
 * closed: the buffers libpq grew for them would stay with the pool. */
#define STORE_CONN_KEEP_BYTES ((size_t)256 << 10)
/* store_release, or store_release_closed when the connection carried more
 * than STORE_CONN_KEEP_BYTES in one message (bytes: the largest). */
void store_release_sized(store *s, PGconn *c, size_t bytes);

/* Binds the calling thread to the Idempotency-Key of the request it serves
 * (tenant, key; key NULL unbinds): until unbound, connections it acquires
 * carry the key, so that what the request creates is named in the key's row
 * in the same transaction (migration 0022, store/idempotency.h). */
void store_bind_idempotency(int64_t tenant, const char *key);

/* Fills err (when not NULL) and returns code; the message is kept to one
 * line. */
int store_error_set(store_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Pool figures for /metrics: slots, slots handed out, slots connected. */
void store_stats(store *s, int *size, int *busy, int *connected);

/* Maps a failed result (or NULL) to a store_error: unique violation ->
 * CONFLICT, connection failure, shutdown, too many connections, serialization
 * failure or deadlock -> UNAVAILABLE, data exception / NOT NULL / CHECK
 * violation -> INVALID, else INTERNAL. Clears res. Returns the code. */
int store_fail(PGconn *c, PGresult *res, store_error *err);

/* v as the text of a query parameter (a bigint). */
void store_idtext(char buf[24], int64_t v);

/* An UPDATE of a queued run (simulation run, trace analysis, search) that a
 * worker holds: sql with $1 the run's id, $2 the worker, $3 the attempt and,
 * as nparams says, $4 = p4 and $5 = p5. *rows: the rows it changed (0 when
 * the run is no longer held by that worker and attempt). */
int store_run_update(PGconn *c, const char *sql, int64_t id, const char *worker, int attempt,
                     const char *p4, const char *p5, int nparams, int *rows, store_error *err);

/* One page of a tenant's listing by id: runs sql with $1 the tenant, $2 the
 * last id of the previous page (0: from the start) and $3 the page size.
 * The result and its rows (PQclear it), or NULL with err set. */
PGresult *store_page_query(PGconn *c, const char *sql, int64_t tenant, int64_t after, int limit,
                           store_error *err);

/* Applies pending migrations (embedded in the binary from migrations/NNNN_name.sql,
 * in order, each in its own transaction, recorded in schema_migrations).
 * Safe to run from several processes at once (advisory lock). */
int store_migrate(store *s, store_error *err);
/* Database reachable and all migrations applied. */
int store_ready(store *s, store_error *err);
/* The highest applied migration version (0 when none) into *version. */
int store_schema_version(store *s, int *version, store_error *err);
/* The highest migration version embedded in this binary. */
int store_schema_latest(void);

#endif
