/*
 * job_modeler.c — SQL for the modeler a refit job asks for (see
 * store/job_modeler.h). The enqueue is store_job_enqueue()'s statement with
 * the modeler in the inserted row and in the update of a joined queued job,
 * so a refit asking for a modeler and the job it lands in agree atomically.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/job_modeler.h"
#include "store/jobs.h"

int store_job_enqueue_modeler(PGconn *c, int64_t exp, const char *modeler, const char *commit,
                              int64_t *job_id, store_error *err)
{
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    const char *vals[] = {e, modeler, commit};
    PGresult *r = PQexecParams(
        c,
        "WITH x AS (SELECT id FROM experiments WHERE id = $1), "
        "j AS (INSERT INTO jobs (experiment_id, modeler, commit_sha) SELECT id, $2, $3 FROM x "
        "  ON CONFLICT (experiment_id, coalesce(commit_sha, '')) WHERE state = 'queued' "
        "  DO UPDATE SET modeler = EXCLUDED.modeler RETURNING id) "
        "SELECT id, pg_notify('" STORE_JOBS_CHANNEL "', id::text) FROM j",
        3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) == 1)
        *job_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    else
        rc = store_error_set(err, STORE_NOT_FOUND, "no experiment with id %s", e);
    PQclear(r);
    return rc;
}

int store_job_modeler(PGconn *c, int64_t job_id, char *out, size_t cap, store_error *err)
{
    char j[24];
    snprintf(j, sizeof j, "%" PRId64, job_id);
    const char *vals[] = {j};
    PGresult *r = PQexecParams(c, "SELECT modeler FROM jobs WHERE id = $1", 1, NULL, vals, NULL,
                               NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    out[0] = '\0';
    if (PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
        snprintf(out, cap, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return STORE_OK;
}
