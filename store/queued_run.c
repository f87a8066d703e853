/*
 * queued_run.c — the row and the shared query steps of queued trace
 * analyses and searches (store/queued_run.h).
 */
#include "store/queued_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void store_queued_run_free(store_queued_run *r)
{
    free(r->request);
    free(r->result);
    free(r->error);
    r->request = r->result = r->error = NULL;
}

static char *opt_dup(PGresult *r, int col, int *oom)
{
    if (PQgetisnull(r, 0, col))
        return NULL;
    char *s = strdup(PQgetvalue(r, 0, col));
    if (!s)
        *oom = 1;
    return s;
}

static int from_row(PGresult *r, store_queued_run *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    out->tenant_id = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    out->experiment_id = strtoll(PQgetvalue(r, 0, 2), NULL, 10);
    /* a trace analysis's row names its profile next, a search's does not */
    int k = PQfnumber(r, "profile_id") == 3 ? 4 : 3;
    if (k == 4)
        out->profile_id = strtoll(PQgetvalue(r, 0, 3), NULL, 10);
    snprintf(out->kind, sizeof out->kind, "%s", PQgetvalue(r, 0, k));
    snprintf(out->state, sizeof out->state, "%s", PQgetvalue(r, 0, k + 1));
    out->attempts = atoi(PQgetvalue(r, 0, k + 2));
    int oom = 0;
    out->request = opt_dup(r, k + 3, &oom);
    out->result = opt_dup(r, k + 4, &oom);
    out->error = opt_dup(r, k + 5, &oom);
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, 0, k + 6));
    snprintf(out->started_at, sizeof out->started_at, "%s", PQgetvalue(r, 0, k + 7));
    snprintf(out->finished_at, sizeof out->finished_at, "%s", PQgetvalue(r, 0, k + 8));
    if (oom) {
        store_queued_run_free(out);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    return STORE_OK;
}

int store_queued_run_one(PGconn *c, PGresult *res, store_queued_run *out, const char *what,
                         store_error *err)
{
    if (PQresultStatus(res) != PGRES_TUPLES_OK)
        return store_fail(c, res, err);
    int rc = PQntuples(res) == 1 ? from_row(res, out, err)
                                 : store_error_set(err, STORE_NOT_FOUND, "%s", what);
    PQclear(res);
    return rc;
}

int store_queued_run_added(PGconn *c, PGresult *res, store_queued_run *r, store_error *err)
{
    char *request = r->request;
    r->request = NULL;
    int rc = store_queued_run_one(c, res, r, "no run", err);
    if (rc != STORE_OK)
        r->request = request;
    else
        free(request);
    return rc;
}

int store_queued_run_claim(PGconn *c, const char *reap_sql, const char *claim_sql,
                           const char *worker, double lease_seconds, store_queued_run *out,
                           const char *what, store_error *err)
{
    PGresult *r = PQexec(c, reap_sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    char secs[32];
    snprintf(secs, sizeof secs, "%.3f", lease_seconds);
    const char *vals[] = {worker, secs};
    r = PQexecParams(c, claim_sql, 2, NULL, vals, NULL, NULL, 0);
    return store_queued_run_one(c, r, out, what, err);
}

int store_queued_run_heartbeat(PGconn *c, const char *sql, int64_t id, const char *worker,
                               int attempt, double lease_seconds, store_error *err)
{
    char secs[32];
    snprintf(secs, sizeof secs, "%.3f", lease_seconds);
    int n = 0;
    int rc = store_run_update(c, sql, id, worker, attempt, secs, NULL, 4, &n, err);
    if (rc == STORE_OK && n != 1)
        return store_error_set(err, STORE_CONFLICT, "the run is not held");
    return rc;
}
