/*
 * tokens.c — SQL for tenants, tokens and ownership (see store/tokens.h).
 *
 * Hashes travel as hex text and are turned into bytea by decode() in the
 * query; expiry and revocation are judged by the database's clock in the
 * same statement that loads the token, so there is nothing to cache.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/tokens.h"
#include "store/notify.h"
#include "common/jsonb.h"

static const char *const scope_names[] = {NULL, "read", "write", "admin"};

int store_scope_from_name(const char *name)
{
    for (int s = STORE_SCOPE_READ; s <= STORE_SCOPE_ADMIN; s++)
        if (name && !strcmp(name, scope_names[s]))
            return s;
    return STORE_SCOPE_NONE;
}

const char *store_scope_name(int scope)
{
    return scope >= STORE_SCOPE_READ && scope <= STORE_SCOPE_ADMIN ? scope_names[scope] : "none";
}

/* One bigint from a one-row result, or NOT_FOUND with what/id. */
static int one_id(PGconn *c, PGresult *r, int64_t *out, const char *what, const char *key,
                  store_error *err)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) == 1)
        *out = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        rc = store_error_set(err, STORE_NOT_FOUND, "no %s %s", what, key);
    PQclear(r);
    return rc;
}

int store_tenant_ensure(PGconn *c, const char *name, int64_t *id, store_error *err)
{
    const char *vals[] = {name};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO tenants (name) VALUES ($1) ON CONFLICT (name) "
                               "DO UPDATE SET name = EXCLUDED.name RETURNING id",
                               1, NULL, vals, NULL, NULL, 0);
    return one_id(c, r, id, "tenant", name, err);
}

int store_tenant_find(PGconn *c, const char *name, int64_t *id, store_error *err)
{
    const char *vals[] = {name};
    PGresult *r =
        PQexecParams(c, "SELECT id FROM tenants WHERE name = $1", 1, NULL, vals, NULL, NULL, 0);
    return one_id(c, r, id, "tenant", name, err);
}

int store_token_create(PGconn *c, int64_t tenant, int scope, const unsigned char sha256[32],
                       long long expires_s, int64_t *id, store_error *err)
{
    char tenanttext[24], hex[65], exptext[24];
    snprintf(tenanttext, sizeof tenanttext, "%" PRId64, tenant);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha256[i]);
    snprintf(exptext, sizeof exptext, "%lld", expires_s);
    const char *vals[] = {tenanttext, hex, store_scope_name(scope), expires_s > 0 ? exptext : NULL};
    PGresult *r = PQexecParams(c,
                               "INSERT INTO tokens (tenant_id, secret_sha256, scope, expires_at) "
                               "VALUES ($1, decode($2, 'hex'), $3, "
                               "now() + make_interval(secs => $4::bigint)) RETURNING id",
                               4, NULL, vals, NULL, NULL, 0);
    int rc = one_id(c, r, id, "tenant", tenanttext, err);
    if (!rc) { /* servers in open mode end it now (store/notify.h) */
        store_error ignored;
        store_notify_cache(c, "token", *id, &ignored);
    }
    return rc;
}

int store_token_get(PGconn *c, int64_t id, store_token *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(
        c,
        "SELECT tenant_id, scope, encode(secret_sha256, 'hex'), "
        "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) "
        "FROM tokens WHERE id = $1",
        1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no token %" PRId64, id);
    }
    out->id = id;
    out->tenant_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    out->scope = store_scope_from_name(PQgetvalue(r, 0, 1));
    const char *hex = PQgetvalue(r, 0, 2);
    for (int i = 0; i < 32 && strlen(hex) == 64; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out->sha256[i] = (unsigned char)v;
    }
    out->usable = PQgetvalue(r, 0, 3)[0] == 't';
    PQclear(r);
    return STORE_OK;
}

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"

int store_token_list(PGconn *c, int64_t tenant, json_t **out, store_error *err)
{
    *out = NULL;
    char tenanttext[24];
    snprintf(tenanttext, sizeof tenanttext, "%" PRId64, tenant);
    const char *vals[] = {tenanttext};
    PGresult *r = PQexecParams(
        c,
        "SELECT coalesce(json_agg(json_build_object('id', t.id, 'tenant', n.name, 'scope', "
        "t.scope, 'created_at', " TS("t.created_at") ", 'expires_at', " TS("t.expires_at")
        ", 'revoked_at', " TS("t.revoked_at") ") ORDER BY t.id), '[]')::text "
        "FROM tokens t JOIN tenants n ON n.id = t.tenant_id WHERE $1::bigint = 0 OR "
        "t.tenant_id = $1::bigint",
        1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return store_fail(c, r, err);
    *out = jsonb_parse(PQgetvalue(r, 0, 0), 0);
    PQclear(r);
    return *out ? STORE_OK : store_error_set(err, STORE_INTERNAL, "cannot read the token list");
}

int store_token_revoke(PGconn *c, int64_t id, int64_t tenant, store_error *err)
{
    char idtext[24], tenanttext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    snprintf(tenanttext, sizeof tenanttext, "%" PRId64, tenant);
    const char *vals[] = {idtext, tenanttext};
    PGresult *r = PQexecParams(c,
                               "UPDATE tokens SET revoked_at = coalesce(revoked_at, now()) "
                               "WHERE id = $1 AND ($2::bigint = 0 OR tenant_id = $2::bigint)",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int n = atoi(PQcmdTuples(r));
    PQclear(r);
    if (!n)
        return store_error_set(err, STORE_NOT_FOUND, "no token %" PRId64, id);
    /* committed; other servers drop the token's verification now (their
     * cache keeps it at most a second anyway, should this notice be lost) */
    store_error ignored;
    store_notify_cache(c, "token", id, &ignored);
    return STORE_OK;
}

int store_tokens_exist(PGconn *c, int *exist, store_error *err)
{
    PGresult *r =
        PQexecParams(c, "SELECT EXISTS (SELECT 1 FROM tokens)", 0, NULL, NULL, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return store_fail(c, r, err);
    *exist = PQgetvalue(r, 0, 0)[0] == 't';
    PQclear(r);
    return STORE_OK;
}

int store_experiment_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(c, "SELECT tenant_id FROM experiments WHERE id = $1", 1, NULL,
                               vals, NULL, NULL, 0);
    return one_id(c, r, tenant, "experiment with id", idtext, err);
}

int store_job_tenant(PGconn *c, int64_t id, int64_t *tenant, store_error *err)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(c,
                               "SELECT e.tenant_id FROM jobs j JOIN experiments e "
                               "ON e.id = j.experiment_id WHERE j.id = $1",
                               1, NULL, vals, NULL, NULL, 0);
    return one_id(c, r, tenant, "job with id", idtext, err);
}
