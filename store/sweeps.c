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

/* Big-endian binary wire values (PostgreSQL's binary result format). */
static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static double be_float8(const unsigned char *p)
{
    uint64_t u = (uint64_t)be32(p) << 32 | be32(p + 4);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* A float8[] in binary form -> its non-NULL elements (as array_to_string
 * would list them); -1 on a malformed or multi-dimensional value. */
static int parse_float8_array(const char *v, int len, double **out)
{
    const unsigned char *p = (const unsigned char *)v;
    if (len < 12)
        return -1;
    int32_t ndim = (int32_t)be32(p);
    if (ndim == 0) {
        *out = malloc(sizeof(double));
        return *out ? 0 : -1;
    }
    if (ndim != 1 || len < 20)
        return -1;
    int32_t count = (int32_t)be32(p + 12);
    if (count < 0 || count > (len - 20) / 4)
        return -1;
    double *x = malloc(sizeof(double) * (size_t)(count ? count : 1));
    if (!x)
        return -1;
    const unsigned char *q = p + 20, *end = p + len;
    int n = 0;
    for (int i = 0; i < count; i++) {
        int32_t l = end - q >= 4 ? (int32_t)be32(q) : -2;
        q += 4;
        if (l == -1)
            continue; /* a NULL element */
        if (l != 8 || end - q < 8) {
            free(x);
            return -1;
        }
        x[n++] = be_float8(q);
        q += 8;
    }
    *out = x;
    return n;
}

static char *dup_col(PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return NULL;
    int len = PQgetlength(r, row, col);
    char *s = malloc((size_t)len + 1);
    if (s) {
        memcpy(s, PQgetvalue(r, row, col), (size_t)len);
        s[len] = '\0';
    }
    return s;
}

/* The measurements come in the order of their index (measurements_ordered),
 * which the query's ORDER BY follows. When a set is most of the table the
 * planner prefers to scan it all and sort, and sorting float8[] points is
 * slow (30 ms for 10,000 rows, against 9 ms read in index order): within a
 * transaction of its own the read is told not to sort. 1 when that
 * transaction was begun. */
static int index_order_begin(PGconn *c)
{
    if (PQtransactionStatus(c) != PQTRANS_IDLE)
        return 0;
    PGresult *r = PQexec(c, "BEGIN READ ONLY; SET LOCAL enable_sort = off");
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok && PQtransactionStatus(c) != PQTRANS_IDLE) /* begun, not set: read as before */
        PQclear(PQexec(c, "ROLLBACK"));
    return ok;
}

static void index_order_end(PGconn *c, int own_tx)
{
    if (own_tx)
        PQclear(PQexec(c, PQtransactionStatus(c) == PQTRANS_INTRANS ? "COMMIT" : "ROLLBACK"));
}

int store_repetitions_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                           store_measurement_row **out, int *n, store_error *err)
{
    int rows_rc;
    *out = NULL;
    *n = 0;
    char set[24], off[24], lim[24];
    snprintf(set, sizeof set, "%" PRId64, set_id);
    snprintf(off, sizeof off, "%ld", f->offset);
    snprintf(lim, sizeof lim, "%d", f->limit);
    const char *vals[9] = {set, f->metric, f->level, f->category, f->phase, f->name, off, lim,
                           f->levels};
    int own_tx = index_order_begin(c);
    PGresult *r = PQexecParams(
        c,
        "SELECT point, level, name, category, metric, phase, repetitions, "
        "array_to_json(levels)::text FROM measurements "
        "WHERE model_set_id = $1 AND ($2::text IS NULL OR metric = $2) "
        "AND ($3::text IS NULL OR level = $3) AND ($4::text IS NULL OR category = $4) "
        "AND ($5::text IS NULL OR phase = $5) AND ($6::text IS NULL OR name = $6) "
        "AND ($9::text[] IS NULL OR levels = $9::text[]) "
        "ORDER BY level DESC, name, metric, phase, point, levels OFFSET $7 LIMIT $8",
        9, NULL, vals, NULL, NULL, 1 /* binary: no float8 text either way */);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rows_rc = store_fail(c, r, err);
        index_order_end(c, own_tx);
        return rows_rc;
    }
    index_order_end(c, own_tx);
    int rows = PQntuples(r);
    store_measurement_row *v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    int rc = v ? STORE_OK : store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < rows && rc == STORE_OK; i++) {
        store_measurement_row *m = &v[i];
        m->nparams = PQgetisnull(r, i, 0)
                         ? -1
                         : parse_float8_array(PQgetvalue(r, i, 0), PQgetlength(r, i, 0), &m->point);
        m->level = dup_col(r, i, 1);
        m->name = dup_col(r, i, 2);
        m->category = dup_col(r, i, 3);
        m->metric = dup_col(r, i, 4);
        m->phase = dup_col(r, i, 5);
        m->nreps = PQgetisnull(r, i, 6)
                       ? 0
                       : parse_float8_array(PQgetvalue(r, i, 6), PQgetlength(r, i, 6), &m->reps);
        m->levels = dup_col(r, i, 7);
        if (m->nparams < 0 || m->nreps < 0 || !m->level || !m->name || !m->metric || !m->phase ||
            !m->levels)
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
