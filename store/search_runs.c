/*
 * search_runs.c — SQL for queued configuration searches and advice
 * (store/search_runs.h).
 */
#include <stdio.h>

#include "store/jobs.h"
#include "store/search_runs.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define RUN_COLS "id, tenant_id, experiment_id, kind, state, attempts, request::text, result, " \
                 "error::text, " TS("created_at") ", " TS("started_at") ", " TS("finished_at")
/* a running run's lease is over */
#define EXPIRED "lease_until < now()"

int store_search_run_add(PGconn *c, store_search_run *r, store_error *err)
{
    char t[24], e[24];
    store_idtext(t, r->tenant_id);
    store_idtext(e, r->experiment_id);
    const char *vals[] = {t, e, r->kind, r->request};
    PGresult *res = PQexecParams(c,
                                 "WITH i AS (INSERT INTO search_runs (tenant_id, experiment_id, "
                                 "kind, request) VALUES ($1, $2, $3, $4::jsonb) "
                                 "RETURNING " RUN_COLS ") "
                                 "SELECT i.*, pg_notify('" STORE_JOBS_CHANNEL "', '') FROM i",
                                 4, NULL, vals, NULL, NULL, 0);
    return store_queued_run_added(c, res, r, err);
}

int store_search_run_get(PGconn *c, int64_t tenant, int64_t exp, int64_t id,
                         store_search_run *out, store_error *err)
{
    char t[24], e[24], i[24], what[80];
    store_idtext(t, tenant);
    store_idtext(e, exp);
    store_idtext(i, id);
    snprintf(what, sizeof what, "no search %s in this experiment", i);
    const char *vals[] = {t, e, i};
    PGresult *r = PQexecParams(c,
                               "SELECT " RUN_COLS " FROM search_runs WHERE tenant_id = $1 "
                               "AND experiment_id = $2 AND id = $3",
                               3, NULL, vals, NULL, NULL, 0);
    return store_queued_run_one(c, r, out, what, err);
}

int store_search_run_claim(PGconn *c, const char *worker, double lease_seconds,
                           store_search_run *out, store_error *err)
{
    /* runs whose last attempt's lease ran out fail first, naming it */
    return store_queued_run_claim(
        c,
        "UPDATE search_runs SET state = 'failed', finished_at = now(), "
        "error = jsonb_build_object('type', 'about:blank', 'title', "
        "'Internal Server Error', 'status', 500, 'detail', "
        "'lease expired: the worker stopped (attempt ' || attempts || "
        "' of 3)') WHERE state = 'running' AND attempts >= 3 AND " EXPIRED,
        "UPDATE search_runs SET state = 'running', started_at = now(), "
        "attempts = attempts + 1, worker = $1, "
        "lease_until = now() + make_interval(secs => $2::float8) "
        "WHERE id = (SELECT id FROM search_runs "
        "WHERE (state = 'queued' OR (state = 'running' AND " EXPIRED ")) "
        "AND attempts < 3 ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
        "RETURNING " RUN_COLS,
        worker, lease_seconds, out, "no queued search", err);
}

int store_search_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                               double lease_seconds, store_error *err)
{
    return store_queued_run_heartbeat(c,
                                      "UPDATE search_runs SET lease_until = now() + "
                                      "make_interval(secs => $4::float8) WHERE id = $1 AND "
                                      "worker = $2 AND attempts = $3 AND state = 'running'",
                                      id, worker, attempt, lease_seconds, err);
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
