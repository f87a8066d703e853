/*
 * devices.c — SQL for a tenant's GPU devices (store/devices.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/devices.h"

#define DEV_COLUMNS "id, name, to_char(created_at AT TIME ZONE 'UTC', " \
                    "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), doc::text"

void store_device_free(store_device *d)
{
    free(d->doc);
    d->doc = NULL;
}

void store_devices_free(store_device *d, int n)
{
    for (int i = 0; i < n && d; i++)
        store_device_free(&d[i]);
    free(d);
}

static int from_row(PGresult *r, int row, store_device *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
    snprintf(out->name, sizeof out->name, "%s", PQgetvalue(r, row, 1));
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, row, 2));
    if (!(out->doc = strdup(PQgetvalue(r, row, 3))))
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    return STORE_OK;
}

static int one(PGconn *c, PGresult *r, store_device *out, const char *what, store_error *err)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1 ? from_row(r, 0, out, err)
                               : store_error_set(err, STORE_NOT_FOUND, "no device %.80s", what);
    PQclear(r);
    return rc;
}

int store_devices_create(PGconn *c, int64_t tenant, const char *name, const char *doc,
                         store_device *out, store_error *err)
{
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    const char *vals[] = {t, name, doc};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO devices (tenant_id, name, doc) "
                               "VALUES ($1, $2, $3::jsonb) RETURNING " DEV_COLUMNS,
                               3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int code = store_fail(c, r, err);
        if (code == STORE_CONFLICT) {
            store_error_set(err, code, "a device named \"%.63s\" exists", name);
            snprintf(err->field, sizeof err->field, "name");
        }
        return code;
    }
    return one(c, r, out, name, err);
}

int store_devices_get_by_name(PGconn *c, int64_t tenant, const char *name, store_device *out,
                              store_error *err)
{
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    const char *vals[] = {t, name};
    PGresult *r = PQexecParams(c,
                               "SELECT " DEV_COLUMNS " FROM devices "
                               "WHERE tenant_id = $1 AND lower(name) = lower($2) "
                               "ORDER BY id LIMIT 1",
                               2, NULL, vals, NULL, NULL, 0);
    return one(c, r, out, name, err);
}

int store_devices_list(PGconn *c, int64_t tenant, store_device **out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    const char *vals[] = {t};
    PGresult *r = PQexecParams(c,
                               "SELECT " DEV_COLUMNS " FROM devices WHERE tenant_id = $1 "
                               "ORDER BY id",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    store_device *d = calloc(rows ? (size_t)rows : 1, sizeof *d);
    if (!d) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++)
        if (from_row(r, i, &d[i], err) != STORE_OK) {
            store_devices_free(d, i);
            PQclear(r);
            return STORE_INTERNAL;
        }
    PQclear(r);
    *out = d;
    *n = rows;
    return STORE_OK;
}

int store_devices_delete(PGconn *c, int64_t tenant, int64_t id, store_error *err)
{
    char t[24], i[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(i, sizeof i, "%" PRId64, id);
    const char *vals[] = {t, i};
    PGresult *r = PQexecParams(c, "DELETE FROM devices WHERE tenant_id = $1 AND id = $2", 2,
                               NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int rc = atoi(PQcmdTuples(r)) == 1
                 ? STORE_OK
                 : store_error_set(err, STORE_NOT_FOUND, "no device %s", i);
    PQclear(r);
    return rc;
}
