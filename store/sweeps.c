/*
 * sweeps.c — the runs (coordinate × repetition) an experiment has profiles
 * for, with the state of their refit jobs (store/sweeps.h).
 */
#include "store/sweeps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_runs_read(PGconn *c, int64_t exp, int nparams, store_run **out, int *n,
                    store_error *err)
{
    *out = NULL;
    *n = 0;
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    const char *vals[] = {e};
    PGresult *r = PQexecParams(
        c,
        "SELECT array_to_string(p.point, ','), p.repetition, "
        "count(*) FILTER (WHERE j.state IS DISTINCT FROM 'failed'), "
        "count(*) FILTER (WHERE j.state = 'failed') "
        "FROM profiles p LEFT JOIN jobs j ON j.id = p.job_id WHERE p.experiment_id = $1 "
        "GROUP BY p.point, p.repetition ORDER BY p.point, p.repetition",
        1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    store_run *v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    double *block = malloc(sizeof(double) * (size_t)(rows ? rows : 1) * (size_t)(nparams ? nparams : 1));
    if (!v || !block) {
        free(v);
        free(block);
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++) {
        v[i].point = block + (size_t)i * nparams;
        const char *s = PQgetvalue(r, i, 0);
        for (int k = 0; k < nparams; k++) {
            char *end;
            v[i].point[k] = strtod(s, &end);
            s = *end == ',' ? end + 1 : end;
        }
        v[i].repetition = atoi(PQgetvalue(r, i, 1));
        v[i].ok = atoi(PQgetvalue(r, i, 2));
        v[i].failed = atoi(PQgetvalue(r, i, 3));
    }
    PQclear(r);
    if (rows == 0)
        free(block);
    *out = v;
    *n = rows;
    return STORE_OK;
}

void store_runs_free(store_run *v, int n)
{
    if (v && n > 0)
        free(v[0].point);
    free(v);
}
