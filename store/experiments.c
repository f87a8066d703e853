/*
 * experiments.c — SQL for experiments (see store/experiments.h).
 *
 * Parameter names travel as a JSON array (turned into text[] by the query)
 * and come back through array_to_json, so no array literal is ever built or
 * parsed by hand; timestamps come back already formatted as RFC 3339 UTC.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/experiments.h"
#include "common/jsonb.h"
#include "store/notify.h"

#define EXPERIMENT_COLUMNS                                                                  \
    "id, name, array_to_json(parameters)::text, scaling, spec::text, "                     \
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), tenant_id"

void store_experiment_free(store_experiment *e)
{
    if (!e)
        return;
    free(e->name);
    for (int i = 0; i < e->nparams; i++)
        free(e->parameters[i]);
    free(e->parameters);
    free(e->scaling);
    json_decref(e->spec);
    memset(e, 0, sizeof *e);
}

void store_experiment_list_free(store_experiment *v, int n)
{
    for (int i = 0; i < n; i++)
        store_experiment_free(&v[i]);
    free(v);
}

/* Row i of a result with EXPERIMENT_COLUMNS into *e. */
static int experiment_from_row(PGresult *r, int i, store_experiment *e, store_error *err)
{
    memset(e, 0, sizeof *e);
    e->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
    e->name = strdup(PQgetvalue(r, i, 1));
    e->scaling = strdup(PQgetvalue(r, i, 3));
    e->spec = jsonb_parse(PQgetvalue(r, i, 4), 0);
    snprintf(e->created_at, sizeof e->created_at, "%s", PQgetvalue(r, i, 5));
    e->tenant_id = strtoll(PQgetvalue(r, i, 6), NULL, 10);
    json_t *params = jsonb_parse(PQgetvalue(r, i, 2), 0);
    size_t np = json_array_size(params);
    e->parameters = calloc(np ? np : 1, sizeof *e->parameters);
    int ok = e->name && e->scaling && json_is_object(e->spec) && json_is_array(params) &&
             e->parameters;
    if (ok)
        e->nparams = (int)np; /* entries stay NULL until filled: free copes */
    for (size_t k = 0; ok && k < np; k++) {
        const char *s = json_string_value(json_array_get(params, k));
        e->parameters[k] = s ? strdup(s) : NULL;
        ok = e->parameters[k] != NULL;
    }
    json_decref(params);
    if (ok)
        return STORE_OK;
    store_experiment_free(e);
    return store_error_set(err, STORE_INTERNAL, "cannot read experiment row (out of memory?)");
}

/* The id of the tenant's experiment named name, 0 when none (or on error). */
static int64_t existing_id(PGconn *c, const char *tenanttext, const char *name)
{
    const char *vals[] = {tenanttext, name};
    PGresult *r = PQexecParams(c, "SELECT id FROM experiments WHERE tenant_id = $1 AND name = $2",
                               2, NULL, vals, NULL, NULL, 0);
    int64_t id = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1
                     ? strtoll(PQgetvalue(r, 0, 0), NULL, 10)
                     : 0;
    PQclear(r);
    return id;
}

int store_experiment_create(PGconn *c, store_experiment *e, store_error *err)
{
    json_t *params = json_array();
    for (int i = 0; params && i < e->nparams; i++)
        if (json_array_append_new(params, json_string(e->parameters[i])) < 0) {
            json_decref(params);
            params = NULL;
        }
    char *params_text = params ? json_dumps(params, JSON_COMPACT) : NULL;
    char *spec_text = e->spec ? json_dumps(e->spec, JSON_COMPACT) : NULL;
    json_decref(params);
    if (!params_text || !spec_text) {
        free(params_text);
        free(spec_text);
        return store_error_set(err, STORE_INTERNAL, "cannot encode the experiment");
    }
    char tenanttext[24];
    snprintf(tenanttext, sizeof tenanttext, "%" PRId64,
             e->tenant_id ? e->tenant_id : (int64_t)1);
    const char *vals[] = {e->name, params_text, e->scaling, spec_text, tenanttext};
    PGresult *r = PQexecParams(
        c,
        "INSERT INTO experiments (name, parameters, scaling, spec, tenant_id) "
        "VALUES ($1, ARRAY(SELECT p FROM jsonb_array_elements_text($2::jsonb) "
        "WITH ORDINALITY AS t(p, i) ORDER BY i), $3, $4::jsonb, $5) "
        "RETURNING id, to_char(created_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')",
        5, NULL, vals, NULL, NULL, 0);
    free(params_text);
    free(spec_text);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        int rc = store_fail(c, r, err);
        if (rc == STORE_CONFLICT) {
            e->id = existing_id(c, tenanttext, e->name);
            store_error_set(err, rc, "an experiment named \"%s\" already exists", e->name);
        }
        return rc;
    }
    e->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    snprintf(e->created_at, sizeof e->created_at, "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    return STORE_OK;
}

int store_experiment_get(PGconn *c, int64_t id, store_experiment *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(c, "SELECT " EXPERIMENT_COLUMNS " FROM experiments WHERE id = $1",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1
                 ? experiment_from_row(r, 0, out, err)
                 : store_error_set(err, STORE_NOT_FOUND, "no experiment with id %" PRId64, id);
    PQclear(r);
    return rc;
}

int store_experiment_list(PGconn *c, int64_t tenant, int64_t after, int limit,
                          store_experiment **out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    PGresult *r = store_page_query(c,
                                   "SELECT " EXPERIMENT_COLUMNS " FROM experiments WHERE "
                                   "tenant_id = $1 AND id > $2 ORDER BY id LIMIT $3",
                                   tenant, after, limit, err);
    if (!r)
        return err->code;
    int rows = PQntuples(r);
    store_experiment *v = calloc(rows ? (size_t)rows : 1, sizeof *v);
    int rc = v ? STORE_OK : store_error_set(err, STORE_INTERNAL, "out of memory");
    int got = 0;
    while (!rc && got < rows) {
        rc = experiment_from_row(r, got, &v[got], err);
        got += !rc;
    }
    PQclear(r);
    if (rc) {
        store_experiment_list_free(v, got);
        return rc;
    }
    *out = v;
    *n = rows;
    return STORE_OK;
}

int store_experiment_delete(PGconn *c, int64_t id, int64_t tenant, store_error *err)
{
    char idtext[24], tenanttext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, id);
    snprintf(tenanttext, sizeof tenanttext, "%" PRId64, tenant);
    const char *vals[] = {idtext, tenanttext};
    PGresult *r = PQexecParams(c, "DELETE FROM experiments WHERE id = $1 AND tenant_id = $2", 2,
                               NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    int gone = atoi(PQcmdTuples(r));
    PQclear(r);
    if (!gone)
        return store_error_set(err, STORE_NOT_FOUND, "no experiment with id %" PRId64, id);
    store_error ignored; /* committed: other servers forget what they hold of it */
    store_notify_cache(c, "experiment", id, &ignored);
    return STORE_OK;
}
