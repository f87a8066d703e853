/*
 * migrate.c — applies the embedded migrations (store/migrate.h) to the
 * database and answers whether the schema is current.
 *
 * One session-level advisory lock serialises runners, so replicas starting
 * together apply each file once. Each file runs in its own transaction
 * together with its row in schema_migrations(version, name, applied_at):
 * a failing file leaves nothing behind. Migration files are several
 * statements, so they go through PQexec (simple protocol); they are
 * compiled-in constants, never input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/db.h"
#include "store/migrate.h"

#define MIGRATE_LOCK_KEY "8099005288975266676" /* the bytes of "perfcast" */

static int exec_ok(PGconn *c, PGresult *r, ExecStatusType want, store_error *err)
{
    if (PQresultStatus(r) == want) {
        PQclear(r);
        return STORE_OK;
    }
    return store_fail(c, r, err);
}

static int exec_params(PGconn *c, const char *sql, int n, const char *const *vals,
                       ExecStatusType want, store_error *err)
{
    return exec_ok(c, PQexecParams(c, sql, n, NULL, vals, NULL, NULL, 0), want, err);
}

int store_schema_latest(void)
{
    int v = 0;
    for (int i = 0; i < store_nmigrations; i++)
        if (store_migrations[i].version > v)
            v = store_migrations[i].version;
    return v;
}

/* The versions already applied (any order); none when the table does not
 * exist yet. */
static int applied_versions(PGconn *c, int **out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    PGresult *r = PQexecParams(c, "SELECT version FROM schema_migrations", 0, NULL, NULL,
                               NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        const char *st = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        if (st && !strcmp(st, "42P01")) { /* undefined_table: nothing applied */
            PQclear(r);
            return STORE_OK;
        }
        return store_fail(c, r, err);
    }
    int rows = PQntuples(r);
    int *v = malloc(sizeof *v * (size_t)(rows ? rows : 1));
    if (!v) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++)
        v[i] = atoi(PQgetvalue(r, i, 0));
    PQclear(r);
    *out = v;
    *n = rows;
    return STORE_OK;
}

static int contains(const int *v, int n, int x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

static int apply_one(PGconn *c, const store_migration *m, store_error *err)
{
    int rc = exec_ok(c, PQexec(c, "BEGIN"), PGRES_COMMAND_OK, err);
    if (rc)
        return rc;
    PGresult *r = PQexec(c, m->sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = store_fail(c, r, err);
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        store_error_set(err, rc, "migration %s: %s", m->name, msg);
    } else {
        PQclear(r);
        char version[16];
        snprintf(version, sizeof version, "%d", m->version);
        const char *vals[] = {version, m->name};
        rc = exec_params(c, "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", 2,
                         vals, PGRES_COMMAND_OK, err);
    }
    if (!rc)
        return exec_ok(c, PQexec(c, "COMMIT"), PGRES_COMMAND_OK, err);
    PQclear(PQexec(c, "ROLLBACK"));
    return rc;
}

static int migrate_locked(PGconn *c, store_error *err)
{
    int rc = exec_params(c,
                         "CREATE TABLE IF NOT EXISTS schema_migrations ("
                         " version integer PRIMARY KEY,"
                         " name text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())",
                         0, NULL, PGRES_COMMAND_OK, err);
    int *done = NULL, ndone = 0;
    if (!rc)
        rc = applied_versions(c, &done, &ndone, err);
    for (int i = 0; !rc && i < store_nmigrations; i++)
        if (!contains(done, ndone, store_migrations[i].version))
            rc = apply_one(c, &store_migrations[i], err);
    free(done);
    return rc;
}

int store_migrate(store *s, store_error *err)
{
    PGconn *c = store_acquire(s, err);
    if (!c)
        return err->code;
    const char *key[] = {MIGRATE_LOCK_KEY};
    int rc = exec_params(c, "SELECT pg_advisory_lock($1::bigint)", 1, key, PGRES_TUPLES_OK, err);
    if (!rc) {
        rc = migrate_locked(c, err);
        store_error unlock_err;
        int urc = exec_params(c, "SELECT pg_advisory_unlock($1::bigint)", 1, key,
                              PGRES_TUPLES_OK, &unlock_err);
        if (!rc && urc) {
            *err = unlock_err;
            rc = urc;
        }
    }
    store_release(s, c);
    return rc;
}

static int schema_version(PGconn *c, int *version, store_error *err)
{
    *version = 0;
    int *done = NULL, n = 0;
    int rc = applied_versions(c, &done, &n, err);
    for (int i = 0; i < n; i++)
        if (done[i] > *version)
            *version = done[i];
    free(done);
    return rc;
}

int store_schema_version(store *s, int *version, store_error *err)
{
    *version = 0;
    PGconn *c = store_acquire(s, err);
    if (!c)
        return err->code;
    int rc = schema_version(c, version, err);
    store_release(s, c);
    return rc;
}

int store_ready(store *s, store_error *err)
{
    int version;
    int rc = store_schema_version(s, &version, err);
    if (rc)
        return rc;
    int want = store_schema_latest();
    if (version < want)
        return store_error_set(err, STORE_UNAVAILABLE,
                               "database schema is at version %d, this build needs %d "
                               "(perfcast migrate)",
                               version, want);
    return STORE_OK;
}
