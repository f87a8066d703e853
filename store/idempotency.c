/*
 * idempotency.c — SQL for Idempotency-Key rows (store/idempotency.h).
 *
 * The claim is one statement: INSERT ... ON CONFLICT DO UPDATE whose WHERE
 * takes over only an expired row or a pending one whose lock ran out, so
 * that two requests with one key, in one process or two, never both run.
 * When no row comes back the key is held: the row is read to compare and
 * replay. A pending row that names what its request created (created,
 * migration 0022) is never taken over: that request committed its work.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/idempotency.h"

void store_idem_free(store_idem *s)
{
    free(s->body);
    s->body = NULL;
}

static void fmt_tenant(char *out, size_t cap, int64_t tenant)
{
    snprintf(out, cap, "%" PRId64, tenant);
}

/* The stored row of (tenant, key) into out, compared with fp and route. */
static int read_row(PGconn *c, const char *t, const char *key, const unsigned char fp[32],
                    const char *route, store_idem *out, store_error *err)
{
    const char *vals[] = {t, key};
    PGresult *r = PQexecParams(c,
                               "SELECT state, coalesce(status, 0), coalesce(content_type, ''), "
                               "coalesce(location, ''), route, fingerprint, body, "
                               "coalesce(created, ''), locked_until < now() "
                               "FROM idempotency_keys WHERE tenant_id = $1 AND key = $2",
                               2, NULL, vals, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) { /* purged between the statements: the caller retries */
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "the key went away");
    }
    out->pending = !strcmp(PQgetvalue(r, 0, 0), "pending");
    uint32_t st = 0;
    if (PQgetlength(r, 0, 1) == 4) {
        const unsigned char *p = (const unsigned char *)PQgetvalue(r, 0, 1);
        st = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    }
    out->status = (int)st;
    snprintf(out->content_type, sizeof out->content_type, "%.*s", PQgetlength(r, 0, 2),
             PQgetvalue(r, 0, 2));
    snprintf(out->location, sizeof out->location, "%.*s", PQgetlength(r, 0, 3),
             PQgetvalue(r, 0, 3));
    snprintf(out->route, sizeof out->route, "%.*s", PQgetlength(r, 0, 4), PQgetvalue(r, 0, 4));
    snprintf(out->created, sizeof out->created, "%.*s", PQgetlength(r, 0, 7),
             PQgetvalue(r, 0, 7));
    out->lock_over = PQgetlength(r, 0, 8) == 1 && PQgetvalue(r, 0, 8)[0] == 1; /* binary bool */
    out->same_request = PQgetlength(r, 0, 5) == 32 && !memcmp(PQgetvalue(r, 0, 5), fp, 32) &&
                        !strcmp(out->route, route);
    if (!PQgetisnull(r, 0, 6)) {
        size_t n = (size_t)PQgetlength(r, 0, 6);
        out->body = malloc(n + 1);
        if (!out->body) {
            PQclear(r);
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        }
        memcpy(out->body, PQgetvalue(r, 0, 6), n);
        out->body[n] = '\0';
        out->body_len = n;
    }
    PQclear(r);
    return STORE_OK;
}

int store_idem_claim(PGconn *c, int64_t tenant, const char *key, const unsigned char fp[32],
                     const char *route, double lock_seconds, double ttl_seconds,
                     store_idem *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    char t[24], lock[32], ttl[32];
    fmt_tenant(t, sizeof t, tenant);
    snprintf(lock, sizeof lock, "%.3f", lock_seconds);
    snprintf(ttl, sizeof ttl, "%.3f", ttl_seconds);
    const char *vals[] = {t, key, (const char *)fp, route, lock, ttl};
    int lens[] = {0, 0, 32, 0, 0, 0};
    int fmts[] = {0, 0, 1, 0, 0, 0};
    for (int tries = 0; tries < 3; tries++) {
        PGresult *r = PQexecParams(
            c,
            "INSERT INTO idempotency_keys AS k (tenant_id, key, fingerprint, route, "
            "locked_until, expires_at) VALUES ($1, $2, $3, $4, "
            "now() + make_interval(secs => $5::float8), now() + make_interval(secs => $6::float8)) "
            "ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, "
            "route = EXCLUDED.route, state = 'pending', status = NULL, content_type = NULL, "
            "location = NULL, body = NULL, created_at = now(), "
            "locked_until = EXCLUDED.locked_until, expires_at = EXCLUDED.expires_at "
            "WHERE k.expires_at < now() OR (k.state = 'pending' AND k.locked_until < now() "
            "AND k.created IS NULL) "
            "RETURNING 1",
            6, NULL, vals, lens, fmts, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            return store_fail(c, r, err);
        int got = PQntuples(r);
        PQclear(r);
        if (got == 1) {
            out->claimed = 1;
            return STORE_OK;
        }
        int rc = read_row(c, t, key, fp, route, out, err);
        if (rc != STORE_NOT_FOUND)
            return rc;
    }
    return store_error_set(err, STORE_UNAVAILABLE, "the key is changing hands; retry");
}

int store_idem_finish(PGconn *c, int64_t tenant, const char *key, int status,
                      const char *content_type, const char *location, const char *body,
                      size_t body_len, store_error *err)
{
    char t[24], st[16];
    fmt_tenant(t, sizeof t, tenant);
    snprintf(st, sizeof st, "%d", status);
    const char *vals[] = {t, key, st, content_type, location && *location ? location : NULL,
                          body ? body : ""};
    int lens[] = {0, 0, 0, 0, 0, (int)body_len};
    int fmts[] = {0, 0, 0, 0, 0, 1};
    PGresult *r = PQexecParams(c,
                               "UPDATE idempotency_keys SET state = 'done', status = $3, "
                               "content_type = $4, location = $5, body = $6 "
                               "WHERE tenant_id = $1 AND key = $2",
                               6, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_idem_release(PGconn *c, int64_t tenant, const char *key, char *created, size_t cap,
                       store_error *err)
{
    char t[24];
    fmt_tenant(t, sizeof t, tenant);
    const char *vals[] = {t, key};
    created[0] = '\0';
    PGresult *r = PQexecParams(c,
                               "DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 "
                               "AND state = 'pending' AND created IS NULL",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int gone = atoi(PQcmdTuples(r));
    PQclear(r);
    if (gone)
        return STORE_OK;
    r = PQexecParams(c,
                     "SELECT coalesce(created, '') FROM idempotency_keys "
                     "WHERE tenant_id = $1 AND key = $2 AND state = 'pending'",
                     2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) == 1)
        snprintf(created, cap, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return STORE_OK;
}

int store_idem_purge(PGconn *c, int *n, store_error *err)
{
    PGresult *r = PQexecParams(c, "DELETE FROM idempotency_keys WHERE expires_at < now()", 0,
                               NULL, NULL, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    *n = atoi(PQcmdTuples(r));
    PQclear(r);
    return STORE_OK;
}
