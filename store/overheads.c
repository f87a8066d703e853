/*
 * overheads.c — SQL for overhead sets (store/overheads.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/overheads.h"

#define OV_COLUMNS "id, name, traces, to_char(created_at AT TIME ZONE 'UTC', " \
                   "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

void store_overhead_set_free(store_overhead_set *s)
{
    free(s->doc);
    s->doc = NULL;
}

static int from_row(PGresult *r, int row, int with_doc, store_overhead_set *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
    snprintf(out->name, sizeof out->name, "%s", PQgetvalue(r, row, 1));
    out->traces = atoi(PQgetvalue(r, row, 2));
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, row, 3));
    if (with_doc && !(out->doc = strdup(PQgetvalue(r, row, 4))))
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    return STORE_OK;
}

static int one(PGconn *c, PGresult *r, store_overhead_set *out, const char *what,
               store_error *err)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1 ? from_row(r, 0, PQnfields(r) > 4, out, err)
                               : store_error_set(err, STORE_NOT_FOUND, "no overhead set %s", what);
    PQclear(r);
    return rc;
}

int store_overheads_create(PGconn *c, int64_t tenant, const char *name, int traces,
                           const char *doc, store_overhead_set *out, store_error *err)
{
    char t[24], n[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(n, sizeof n, "%d", traces);
    const char *vals[] = {t, name, n, doc};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO overhead_sets (tenant_id, name, traces, doc) "
                               "VALUES ($1, $2, $3, $4::jsonb) RETURNING " OV_COLUMNS,
                               4, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        int code = store_fail(c, r, err);
        if (code == STORE_CONFLICT)
            store_error_set(err, code, "an overhead set named \"%.100s\" exists", name);
        return code;
    }
    return one(c, r, out, name, err);
}

int store_overheads_get(PGconn *c, int64_t tenant, int64_t id, store_overhead_set *out,
                        store_error *err)
{
    char t[24], i[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(i, sizeof i, "%" PRId64, id);
    const char *vals[] = {t, i};
    PGresult *r = PQexecParams(c,
                               "SELECT " OV_COLUMNS ", doc::text FROM overhead_sets "
                               "WHERE tenant_id = $1 AND id = $2",
                               2, NULL, vals, NULL, NULL, 0);
    return one(c, r, out, i, err);
}

int store_overheads_get_by_name(PGconn *c, int64_t tenant, const char *name,
                                store_overhead_set *out, store_error *err)
{
    char t[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    const char *vals[] = {t, name};
    PGresult *r = PQexecParams(c,
                               "SELECT " OV_COLUMNS ", doc::text FROM overhead_sets "
                               "WHERE tenant_id = $1 AND name = $2",
                               2, NULL, vals, NULL, NULL, 0);
    return one(c, r, out, name, err);
}

int store_overheads_list(PGconn *c, int64_t tenant, int64_t after, int limit,
                         store_overhead_set **out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    PGresult *r = store_page_query(c,
                                   "SELECT " OV_COLUMNS " FROM overhead_sets WHERE tenant_id = $1 "
                                   "AND id > $2 ORDER BY id LIMIT $3",
                                   tenant, after, limit, err);
    if (!r)
        return err->code;
    int rows = PQntuples(r);
    *out = calloc(rows ? (size_t)rows : 1, sizeof **out);
    if (!*out) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++)
        from_row(r, i, 0, &(*out)[i], err);
    *n = rows;
    PQclear(r);
    return STORE_OK;
}

int store_overheads_delete(PGconn *c, int64_t tenant, int64_t id, store_error *err)
{
    char t[24], i[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(i, sizeof i, "%" PRId64, id);
    const char *vals[] = {t, i};
    PGresult *r = PQexecParams(c, "DELETE FROM overhead_sets WHERE tenant_id = $1 AND id = $2",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int gone = atoi(PQcmdTuples(r));
    PQclear(r);
    return gone ? STORE_OK
                : store_error_set(err, STORE_NOT_FOUND, "no overhead set %" PRId64, id);
}

int store_profile_raw(PGconn *c, int64_t tenant, int64_t exp, int64_t profile, char **raw,
                      size_t *len, char format[32], store_error *err)
{
    *raw = NULL;
    *len = 0;
    char t[24], e[24], p[24];
    snprintf(t, sizeof t, "%" PRId64, tenant);
    snprintf(e, sizeof e, "%" PRId64, exp);
    snprintf(p, sizeof p, "%" PRId64, profile);
    const char *vals[] = {t, e, p};
    /* binary results: the bytea arrives as its bytes */
    PGresult *r = PQexecParams(c,
                               "SELECT p.format, p.raw FROM profiles p JOIN experiments x "
                               "ON x.id = p.experiment_id WHERE x.tenant_id = $1 "
                               "AND ($2::bigint <= 0 OR p.experiment_id = $2) AND p.id = $3",
                               3, NULL, vals, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no profile %" PRId64 "%s", profile,
                               exp > 0 ? " in this experiment" : "");
    }
    size_t n = (size_t)PQgetlength(r, 0, 1), fl = (size_t)PQgetlength(r, 0, 0);
    snprintf(format, 32, "%.*s", (int)(fl < 31 ? fl : 31), PQgetvalue(r, 0, 0));
    *raw = malloc(n + 1);
    if (!*raw) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    memcpy(*raw, PQgetvalue(r, 0, 1), n);
    (*raw)[n] = '\0';
    *len = n;
    PQclear(r);
    return STORE_OK;
}
