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
        "count(*) FILTER (WHERE j.state = 'failed'), array_to_json(p.levels)::text "
        "FROM profiles p LEFT JOIN jobs j ON j.id = p.job_id WHERE p.experiment_id = $1 "
        "GROUP BY p.point, p.repetition, p.levels "
        "ORDER BY p.point, p.repetition, array_to_json(p.levels)::text COLLATE \"C\"",
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
        v[i].levels = strdup(PQgetvalue(r, i, 4));
        if (!v[i].levels) {
            PQclear(r);
            store_runs_free(v, rows);
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        }
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
    for (int i = 0; v && i < n; i++)
        free(v[i].levels);
    free(v);
}

/* "1.5,2,3" -> values; -1 on a malformed list */
static int parse_list(const char *s, double **out)
{
    int cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    double *v = malloc(sizeof(double) * (size_t)cap);
    if (!v)
        return -1;
    int n = 0;
    while (*s) {
        char *end;
        v[n++] = strtod(s, &end);
        if (end == s || n > cap) {
            free(v);
            return -1;
        }
        s = *end == ',' ? end + 1 : end;
    }
    *out = v;
    return n;
}

static char *dup_col(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

int store_repetitions_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                           store_measurement_row **out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    char set[24], off[24], lim[24];
    snprintf(set, sizeof set, "%" PRId64, set_id);
    snprintf(off, sizeof off, "%ld", f->offset);
    snprintf(lim, sizeof lim, "%d", f->limit);
    const char *vals[8] = {set, f->metric, f->level, f->category, f->phase, f->name, off, lim};
    PGresult *r = PQexecParams(
        c,
        "SELECT array_to_string(point, ','), level, name, category, metric, phase, "
        "array_to_string(repetitions, ',') FROM measurements "
        "WHERE model_set_id = $1 AND ($2::text IS NULL OR metric = $2) "
        "AND ($3::text IS NULL OR level = $3) AND ($4::text IS NULL OR category = $4) "
        "AND ($5::text IS NULL OR phase = $5) AND ($6::text IS NULL OR name = $6) "
        "ORDER BY level DESC, name, metric, phase, point OFFSET $7 LIMIT $8",
        8, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    store_measurement_row *v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    int rc = v ? STORE_OK : store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < rows && rc == STORE_OK; i++) {
        store_measurement_row *m = &v[i];
        m->nparams = parse_list(PQgetvalue(r, i, 0), &m->point);
        m->level = dup_col(r, i, 1);
        m->name = dup_col(r, i, 2);
        m->category = dup_col(r, i, 3);
        m->metric = dup_col(r, i, 4);
        m->phase = dup_col(r, i, 5);
        m->nreps = parse_list(PQgetvalue(r, i, 6), &m->reps);
        if (m->nparams < 0 || m->nreps < 0 || !m->level || !m->name || !m->metric || !m->phase)
            rc = store_error_set(err, STORE_INTERNAL, "cannot read a stored measurement");
    }
    PQclear(r);
    if (rc) {
        store_measurement_rows_free(v, rows);
        return rc;
    }
    *out = v;
    *n = rows;
    return STORE_OK;
}
