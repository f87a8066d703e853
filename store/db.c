/*
 * db.c — the PostgreSQL connection pool behind store/db.h.
 *
 * A fixed number of slots, each holding one libpq connection or none. A slot
 * connects the first time it is handed out (lazy), and again whenever its
 * connection turned out broken: a connection that failed a query is dropped
 * on release, and an idle connection whose socket became readable (the server
 * said goodbye: restart, admin shutdown, idle timeout) is dropped on acquire.
 * So after PostgreSQL restarts the pool heals by itself without a request
 * failing on a stale connection. While the database is unreachable acquire
 * answers STORE_UNAVAILABLE, and for a second after a connect that failed
 * slowly (a timeout) it does so without trying again (no pile-up on connect
 * timeouts); a refused connection is tried again at once.
 *
 * Slots are guarded by one mutex; a condition variable wakes a waiter when a
 * connection comes back. Connecting and querying happen outside the lock.
 *
 * A thread serving a request that holds its Idempotency-Key binds the key
 * (store_bind_idempotency): the connections it acquires then carry it in the
 * session variable perfcast.idempotency_key, which the triggers of
 * migration 0022 read to name what the request creates in the key's row, in
 * the transaction that creates it; release clears it again (or drops the
 * connection when it cannot), so that no other request's work is named.
 */
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/db.h"
#include "common/memtrim.h"

#define STORE_RETRY_NS 1000000000LL /* fail fast for 1 s after a slow failed connect */
#define STORE_SLOW_CONNECT_NS 100000000LL /* a failed connect this slow is a timeout */

typedef struct store_slot {
    PGconn *conn; /* NULL: not connected */
    int busy;
    int tagged;   /* perfcast.idempotency_key is set on conn */
} store_slot;

/* The Idempotency-Key ("<tenant>:<key>") of the request this thread serves,
 * "" when none (store_bind_idempotency). */
static _Thread_local char idem_tag[300];

void store_bind_idempotency(int64_t tenant, const char *key)
{
    if (key)
        snprintf(idem_tag, sizeof idem_tag, "%" PRId64 ":%s", tenant, key);
    else
        idem_tag[0] = '\0';
}

/* Sets (tag "" clears) perfcast.idempotency_key on c; 0 or -1. */
static int set_tag(PGconn *c, const char *tag)
{
    const char *vals[] = {tag};
    PGresult *r = PQexecParams(c, "SELECT set_config('perfcast.idempotency_key', $1, false)", 1,
                               NULL, vals, NULL, NULL, 0);
    int ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok ? 0 : -1;
}

struct store {
    char *conninfo;
    int size;
    int nbusy;
    store_slot *slots;
    long long down_until; /* CLOCK_MONOTONIC ns; no connect attempts before */
    char down_msg[sizeof(((store_error *)0)->msg)]; /* why the last connect failed */
    pthread_mutex_t mu;
    pthread_cond_t freed;
};

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int store_error_set(store_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->field[0] = '\0'; /* the caller names the field after this call, if it knows it */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    /* libpq messages end in newlines and may span lines: keep one line */
    size_t n = strlen(err->msg);
    while (n && (err->msg[n - 1] == '\n' || err->msg[n - 1] == ' '))
        err->msg[--n] = '\0';
    for (char *p = err->msg; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    return code;
}

store *store_open(const char *conninfo, int pool_size)
{
    if (pool_size < 1)
        pool_size = 1;
    store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->conninfo = strdup(conninfo ? conninfo : "");
    s->slots = calloc((size_t)pool_size, sizeof *s->slots);
    if (!s->conninfo || !s->slots) {
        free(s->conninfo);
        free(s->slots);
        free(s);
        return NULL;
    }
    s->size = pool_size;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->freed, NULL);
    return s;
}

void store_close(store *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->size; i++)
        if (s->slots[i].conn)
            PQfinish(s->slots[i].conn);
    pthread_cond_destroy(&s->freed);
    pthread_mutex_destroy(&s->mu);
    free(s->slots);
    free(s->conninfo);
    free(s);
}

void store_stats(store *s, int *size, int *busy, int *connected)
{
    pthread_mutex_lock(&s->mu);
    int n = 0;
    for (int i = 0; i < s->size; i++)
        n += s->slots[i].conn != NULL;
    *size = s->size;
    *busy = s->nbusy;
    *connected = n;
    pthread_mutex_unlock(&s->mu);
}

/* An idle connection has nothing to read. If its socket is readable, the
 * server sent an error (e.g. "terminating connection due to administrator
 * command") or closed it: either way the connection is done for. */
static int conn_usable(PGconn *c)
{
    if (PQstatus(c) != CONNECTION_OK || PQtransactionStatus(c) != PQTRANS_IDLE)
        return 0;
    struct pollfd p = {.fd = PQsocket(c), .events = POLLIN};
    if (p.fd < 0)
        return 0;
    return poll(&p, 1, 0) == 0;
}

/* Server notices ("relation already exists, skipping") are not errors, and
 * libpq would print them on stderr, between the service's JSON log lines. */
static void drop_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

static PGconn *conn_open(const store *s, store_error *err)
{
    /* the conninfo (a URI or key=value string) overrides these defaults */
    const char *keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *vals[] = {"5", "perfcast", s->conninfo, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (c && PQstatus(c) == CONNECTION_OK) {
        PQsetNoticeProcessor(c, drop_notice, NULL);
        return c;
    }
    store_error_set(err, STORE_UNAVAILABLE, "cannot connect to the database: %s",
                    c ? PQerrorMessage(c) : "out of memory");
    PQfinish(c);
    return NULL;
}

PGconn *store_connect(store *s, store_error *err)
{
    return conn_open(s, err);
}

PGconn *store_acquire(store *s, store_error *err)
{
    pthread_mutex_lock(&s->mu);
    while (s->nbusy == s->size)
        pthread_cond_wait(&s->freed, &s->mu);
    store_slot *slot = NULL;
    for (int i = 0; i < s->size; i++) {
        if (s->slots[i].busy)
            continue;
        if (!slot || (!slot->conn && s->slots[i].conn))
            slot = &s->slots[i];
        if (slot->conn)
            break;
    }
    slot->busy = 1;
    s->nbusy++;
    PGconn *c = slot->conn;
    slot->conn = NULL; /* back in place below, or replaced */
    long long t = now_ns();
    int wait_out = !c && t < s->down_until;
    char down_msg[sizeof s->down_msg];
    memcpy(down_msg, s->down_msg, sizeof down_msg);
    pthread_mutex_unlock(&s->mu);

    if (c && !conn_usable(c)) {
        PQfinish(c);
        c = NULL;
        wait_out = 0; /* the database may just have restarted: try at once */
    }
    long long tried = 0; /* how long a failed connect took */
    if (!c) {
        if (wait_out) {
            store_error_set(err, STORE_UNAVAILABLE, "%s", down_msg);
        } else {
            long long t0 = now_ns();
            c = conn_open(s, err);
            tried = now_ns() - t0;
        }
    }

    if (c && idem_tag[0] && set_tag(c, idem_tag)) {
        store_error_set(err, STORE_UNAVAILABLE, "cannot tag the connection with the request's "
                        "Idempotency-Key: %s", PQerrorMessage(c));
        PQfinish(c);
        c = NULL;
    }
    pthread_mutex_lock(&s->mu);
    if (c) {
        slot->conn = c;
        slot->tagged = idem_tag[0] != '\0';
        s->down_until = 0;
    } else {
        slot->busy = 0;
        s->nbusy--;
        /* fail fast only after a slow failure (a connect timeout): a refused
         * connection costs nothing to try again, and the database may be
         * back a moment later (a restart) */
        if (!wait_out && tried >= STORE_SLOW_CONNECT_NS) {
            s->down_until = now_ns() + STORE_RETRY_NS;
            snprintf(s->down_msg, sizeof s->down_msg, "%s", err ? err->msg : "database unavailable");
        }
        pthread_cond_signal(&s->freed);
    }
    pthread_mutex_unlock(&s->mu);
    return c;
}

static void release(store *s, PGconn *c, int close);

void store_release(store *s, PGconn *c)
{
    release(s, c, 0);
}

void store_release_closed(store *s, PGconn *c)
{
    release(s, c, 1);
}

void store_release_sized(store *s, PGconn *c, size_t bytes)
{
    if (bytes > STORE_CONN_KEEP_BYTES)
        store_release_closed(s, c);
    else
        store_release(s, c);
}

static void finish(void *c)
{
    PQfinish(c);
}

static void release(store *s, PGconn *c, int close)
{
    if (!c)
        return;
    pthread_mutex_lock(&s->mu);
    store_slot *slot = NULL;
    for (int i = 0; i < s->size && !slot; i++)
        if (s->slots[i].busy && s->slots[i].conn == c)
            slot = &s->slots[i];
    pthread_mutex_unlock(&s->mu);
    if (!slot) { /* not from this pool: close it rather than corrupt the slots */
        PQfinish(c);
        return;
    }

    int keep = !close && PQstatus(c) == CONNECTION_OK;
    PGTransactionStatusType ts = PQtransactionStatus(c);
    if (keep && (ts == PQTRANS_INTRANS || ts == PQTRANS_INERROR)) {
        PGresult *r = PQexec(c, "ROLLBACK");
        keep = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
    } else if (ts != PQTRANS_IDLE) {
        keep = 0; /* a command still active, or the connection is gone */
    }
    if (keep && slot->tagged && set_tag(c, ""))
        keep = 0; /* it would name another request's work */
    if (!keep && close)
        memtrim_release(finish, c); /* its buffers' arena given back too */
    else if (!keep)
        PQfinish(c);

    pthread_mutex_lock(&s->mu);
    slot->tagged = 0;
    slot->conn = keep ? c : NULL;
    slot->busy = 0;
    s->nbusy--;
    pthread_cond_signal(&s->freed);
    pthread_mutex_unlock(&s->mu);
}

/* SQLSTATE classes that mean "try again later" rather than "your fault" or
 * "our bug": connection exceptions, shutdown in progress, too many
 * connections or out of resources, serialization failure, deadlock. */
static int transient_state(const char *st)
{
    return !strncmp(st, "08", 2) || !strncmp(st, "57P", 3) || !strncmp(st, "53", 2) ||
           !strcmp(st, "40001") || !strcmp(st, "40P01");
}

void store_idtext(char buf[24], int64_t v)
{
    snprintf(buf, 24, "%" PRId64, v);
}

int store_run_update(PGconn *c, const char *sql, int64_t id, const char *worker, int attempt,
                     const char *p4, const char *p5, int nparams, int *rows, store_error *err)
{
    char k[24], a[16];
    snprintf(k, sizeof k, "%" PRId64, id);
    snprintf(a, sizeof a, "%d", attempt);
    const char *vals[] = {k, worker, a, p4, p5};
    PGresult *r = PQexecParams(c, sql, nparams, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    *rows = atoi(PQcmdTuples(r));
    PQclear(r);
    return STORE_OK;
}

int store_fail(PGconn *c, PGresult *res, store_error *err)
{
    const char *st = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *msg = res ? PQresultErrorMessage(res) : "";
    if (!*msg && c)
        msg = PQerrorMessage(c);
    if (!*msg)
        msg = res ? PQresStatus(PQresultStatus(res)) : "no result";
    int code;
    if ((c && PQstatus(c) != CONNECTION_OK) || (st && transient_state(st)))
        code = STORE_UNAVAILABLE;
    else if (st && !strcmp(st, "23505"))
        code = STORE_CONFLICT;
    else if (st && (!strncmp(st, "22", 2) || !strcmp(st, "23502") || !strcmp(st, "23514")))
        code = STORE_INVALID;
    else
        code = STORE_INTERNAL;
    store_error_set(err, code, "%s", msg);
    PQclear(res);
    return code;
}

PGresult *store_page_query(PGconn *c, const char *sql, int64_t tenant, int64_t after, int limit,
                           store_error *err)
{
    char t[24], a[24], l[16];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(a, sizeof a, "%" PRId64, after);
    snprintf(l, sizeof l, "%d", limit);
    const char *vals[] = {t, a, l};
    PGresult *r = PQexecParams(c, sql, 3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        store_fail(c, r, err);
        return NULL;
    }
    return r;
}
