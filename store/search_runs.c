/*
 * search_runs.c — SQL for queued configuration searches and advice
 * (store/search_runs.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/jobs.h"
#include "store/search_runs.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define RUN_COLS "id, tenant_id, experiment_id, kind, state, attempts, request::text, result, " \
                 "error::text, " TS("created_at") ", " TS("started_at") ", " TS("finished_at")
/* a running run's lease is over */
#define EXPIRED "lease_until < now()"

static void idtext(char buf[24], int64_t v)
{
    snprintf(buf, 24, "%" PRId64, v);
}

void store_search_run_free(store_search_run *r)
{
    free(r->request);
    free(r->result);
    free(r->error);
    r->request = r->result = r->error = NULL;
}

static char *opt_dup(PGresult *r, int row, int col, int *oom)
{
    if (PQgetisnull(r, row, col))
        return NULL;
    char *s = strdup(PQgetvalue(r, row, col));
    if (!s)
        *oom = 1;
    return s;
}

static int from_row(PGresult *r, int row, store_search_run *out, store_error *err)
{
    memset(out, 0, sizeof *out);
    out->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
    out->tenant_id = strtoll(PQgetvalue(r, row, 1), NULL, 10);
    out->experiment_id = strtoll(PQgetvalue(r, row, 2), NULL, 10);
    snprintf(out->kind, sizeof out->kind, "%s", PQgetvalue(r, row, 3));
    snprintf(out->state, sizeof out->state, "%s", PQgetvalue(r, row, 4));
    out->attempts = atoi(PQgetvalue(r, row, 5));
    int oom = 0;
    out->request = opt_dup(r, row, 6, &oom);
    out->result = opt_dup(r, row, 7, &oom);
    out->error = opt_dup(r, row, 8, &oom);
    snprintf(out->created_at, sizeof out->created_at, "%s", PQgetvalue(r, row, 9));
    snprintf(out->started_at, sizeof out->started_at, "%s", PQgetvalue(r, row, 10));
    snprintf(out->finished_at, sizeof out->finished_at, "%s", PQgetvalue(r, row, 11));
    if (oom) {
        store_search_run_free(out);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    return STORE_OK;
}

static int one(PGconn *c, PGresult *r, store_search_run *out, const char *what, store_error *err)
{
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = PQntuples(r) == 1 ? from_row(r, 0, out, err)
                               : store_error_set(err, STORE_NOT_FOUND, "%s", what);
    PQclear(r);
    return rc;
}

int store_search_run_add(PGconn *c, store_search_run *r, store_error *err)
{
    char t[24], e[24];
    idtext(t, r->tenant_id);
    idtext(e, r->experiment_id);
    const char *vals[] = {t, e, r->kind, r->request};
    PGresult *res = PQexecParams(c,
                                 "WITH i AS (INSERT INTO search_runs (tenant_id, experiment_id, "
                                 "kind, request) VALUES ($1, $2, $3, $4::jsonb) "
                                 "RETURNING " RUN_COLS ") "
                                 "SELECT i.*, pg_notify('" STORE_JOBS_CHANNEL "', '') FROM i",
                                 4, NULL, vals, NULL, NULL, 0);
    char *request = r->request;
    r->request = NULL;
    int rc = one(c, res, r, "no run", err);
    if (rc != STORE_OK)
        r->request = request;
    else
        free(request);
    return rc;
}

int store_search_run_get(PGconn *c, int64_t tenant, int64_t exp, int64_t id,
                         store_search_run *out, store_error *err)
{
    char t[24], e[24], i[24], what[80];
    idtext(t, tenant);
    idtext(e, exp);
    idtext(i, id);
    snprintf(what, sizeof what, "no search %s in this experiment", i);
    const char *vals[] = {t, e, i};
    PGresult *r = PQexecParams(c,
                               "SELECT " RUN_COLS " FROM search_runs WHERE tenant_id = $1 "
                               "AND experiment_id = $2 AND id = $3",
                               3, NULL, vals, NULL, NULL, 0);
    return one(c, r, out, what, err);
}

int store_search_run_claim(PGconn *c, const char *worker, double lease_seconds,
                           store_search_run *out, store_error *err)
{
    /* runs whose last attempt's lease ran out fail, naming it */
    PGresult *r = PQexec(c, "UPDATE search_runs SET state = 'failed', finished_at = now(), "
                            "error = jsonb_build_object('type', 'about:blank', 'title', "
                            "'Internal Server Error', 'status', 500, 'detail', "
                            "'lease expired: the worker stopped (attempt ' || attempts || "
                            "' of 3)') WHERE state = 'running' AND attempts >= 3 AND " EXPIRED);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    char secs[32];
    snprintf(secs, sizeof secs, "%.3f", lease_seconds);
    const char *vals[] = {worker, secs};
    r = PQexecParams(c,
                     "UPDATE search_runs SET state = 'running', started_at = now(), "
                     "attempts = attempts + 1, worker = $1, "
                     "lease_until = now() + make_interval(secs => $2::float8) "
                     "WHERE id = (SELECT id FROM search_runs "
                     "WHERE (state = 'queued' OR (state = 'running' AND " EXPIRED ")) "
                     "AND attempts < 3 ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
                     "RETURNING " RUN_COLS,
                     2, NULL, vals, NULL, NULL, 0);
    return one(c, r, out, "no queued search", err);
}

int store_search_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                               double lease_seconds, store_error *err)
{
    char secs[32];
    snprintf(secs, sizeof secs, "%.3f", lease_seconds);
    int n = 0;
    int rc = store_run_update(c,
                              "UPDATE search_runs SET lease_until = now() + "
                              "make_interval(secs => $4::float8) WHERE id = $1 AND "
                              "worker = $2 AND attempts = $3 AND state = 'running'",
                              id, worker, attempt, secs, NULL, 4, &n, err);
    if (rc == STORE_OK && n != 1)
        return store_error_set(err, STORE_CONFLICT, "the run is not held");
    return rc;
}

int store_search_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                            const char *result, const char *error, store_error *err)
{
    int n = 0;
    return store_run_update(c,
                            "UPDATE search_runs SET state = CASE WHEN $4::text IS NULL "
                            "THEN 'failed' ELSE 'done' END, result = $4, error = $5::jsonb, "
                            "finished_at = now() WHERE id = $1 AND state = 'running' "
                            "AND worker = $2 AND attempts = $3",
                            id, worker, attempt, result, error, 5, &n, err);
}
