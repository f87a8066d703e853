/*
 * iteration_runs.c — SQL for queued per-iteration analyses
 * (store/iteration_runs.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/iteration_runs.h"
#include "store/jobs.h"

#define TS(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define RUN_COLS "id, tenant_id, experiment_id, profile_id, kind, state, attempts, request::text, " \
                 "result, error::text, " TS("created_at") ", " TS("started_at") ", "               \
                 TS("finished_at")

int store_it_run_add(PGconn *c, store_it_run *r, store_error *err)
{
    char t[24], e[24], p[24];
    store_idtext(t, r->tenant_id);
    store_idtext(e, r->experiment_id);
    store_idtext(p, r->profile_id);
    const char *vals[] = {t, r->experiment_id > 0 ? e : NULL, p, r->kind, r->request};
    PGresult *res = PQexecParams(c,
                                 "WITH i AS (INSERT INTO iteration_runs (tenant_id, experiment_id, "
                                 "profile_id, kind, request) VALUES ($1, $2, $3, $4, $5::jsonb) "
                                 "RETURNING " RUN_COLS ") "
                                 "SELECT i.*, pg_notify('" STORE_JOBS_CHANNEL "', '') FROM i",
                                 5, NULL, vals, NULL, NULL, 0);
    return store_queued_run_added(c, res, r, err);
}

int store_it_run_get(PGconn *c, int64_t tenant, int64_t exp, int64_t id, store_it_run *out,
                     store_error *err)
{
    char t[24], e[24], i[24], what[64];
    store_idtext(t, tenant);
    store_idtext(e, exp);
    store_idtext(i, id);
    snprintf(what, sizeof what, "no analysis %s%s", i, exp > 0 ? " in this experiment" : "");
    const char *vals[] = {t, e, i};
    PGresult *r = PQexecParams(c,
                               "SELECT " RUN_COLS " FROM iteration_runs WHERE tenant_id = $1 "
                               "AND ($2::bigint <= 0 OR experiment_id = $2) AND id = $3",
                               3, NULL, vals, NULL, NULL, 0);
    return store_queued_run_one(c, r, out, what, err);
}

/* A running run's lease is over when lease_until passed (or, claimed before
 * leases, 10 minutes after it started). */
#define IT_EXPIRED "coalesce(lease_until, started_at + interval '10 minutes') < now()"

int store_it_run_claim(PGconn *c, const char *worker, double lease_seconds, store_it_run *out,
                       store_error *err)
{
    /* runs whose last attempt's lease ran out fail first, naming it */
    return store_queued_run_claim(
        c,
        "UPDATE iteration_runs SET state = 'failed', finished_at = now(), "
        "error = jsonb_build_object('status', 500, 'detail', "
        "'lease expired: the worker stopped (attempt ' || attempts || "
        "' of 3)') WHERE state = 'running' AND attempts >= 3 AND " IT_EXPIRED,
        "UPDATE iteration_runs SET state = 'running', started_at = now(), "
        "attempts = attempts + 1, worker = $1, "
        "lease_until = now() + make_interval(secs => $2::float8) "
        "WHERE id = (SELECT id FROM iteration_runs "
        "WHERE (state = 'queued' OR (state = 'running' AND " IT_EXPIRED ")) "
        "AND attempts < 3 ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
        "RETURNING " RUN_COLS,
        worker, lease_seconds, out, "no queued analysis", err);
}

int store_it_run_heartbeat(PGconn *c, int64_t id, const char *worker, int attempt,
                           double lease_seconds, store_error *err)
{
    return store_queued_run_heartbeat(c,
                                      "UPDATE iteration_runs SET lease_until = now() + "
                                      "make_interval(secs => $4::float8) WHERE id = $1 AND "
                                      "worker = $2 AND attempts = $3 AND state = 'running'",
                                      id, worker, attempt, lease_seconds, err);
}

int store_it_run_finish(PGconn *c, int64_t id, const char *worker, int attempt,
                        const char *result, const char *error, store_error *err)
{
    int n = 0;
    return store_run_update(c,
                            "UPDATE iteration_runs SET state = CASE WHEN $4::text IS NULL "
                            "THEN 'failed' ELSE 'done' END, result = $4, error = $5::jsonb, "
                            "finished_at = now() WHERE id = $1 AND state = 'running' "
                            "AND worker = $2 AND attempts = $3",
                            id, worker, attempt, result, error, 5, &n, err);
}

int store_profile_raw_size(PGconn *c, int64_t tenant, int64_t exp, int64_t profile, size_t *len,
                           char format[32], store_error *err)
{
    char t[24], e[24], p[24];
    store_idtext(t, tenant);
    store_idtext(e, exp);
    store_idtext(p, profile);
    const char *vals[] = {t, e, p};
    PGresult *r = PQexecParams(c,
                               "SELECT p.format, octet_length(p.raw) FROM profiles p "
                               "JOIN experiments x ON x.id = p.experiment_id "
                               "WHERE x.tenant_id = $1 AND ($2::bigint <= 0 OR "
                               "p.experiment_id = $2) AND p.id = $3",
                               3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no profile %" PRId64 "%s", profile,
                               exp > 0 ? " in this experiment" : "");
    }
    snprintf(format, 32, "%s", PQgetvalue(r, 0, 0));
    *len = PQgetisnull(r, 0, 1) ? 0 : (size_t)strtoull(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    return STORE_OK;
}
