/*
 * sweeps.c — the runs (coordinate × repetition) an experiment has profiles
 * for, with the state of their refit jobs (store/sweeps.h).
 */
#include "store/sweeps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prefault.h"

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

/* A float8[] in binary form: how many elements it has (NULLs included),
 * or -1 on a malformed or multi-dimensional value. */
static int float8_array_count(const char *v, int len)
{
    const unsigned char *p = (const unsigned char *)v;
    if (len < 12)
        return -1;
    int32_t ndim = (int32_t)be32(p);
    if (ndim == 0)
        return 0;
    if (ndim != 1 || len < 20)
        return -1;
    int32_t count = (int32_t)be32(p + 12);
    return count < 0 || count > (len - 20) / 4 ? -1 : count;
}

/* Its non-NULL elements (as array_to_string would list them) into x (room
 * for float8_array_count()); their number, or -1 when malformed. */
static int float8_array_into(const char *v, int len, double *x)
{
    int count = float8_array_count(v, len);
    if (count <= 0)
        return count;
    const unsigned char *q = (const unsigned char *)v + 20, *end = (const unsigned char *)v + len;
    int n = 0;
    for (int i = 0; i < count; i++) {
        int32_t l = end - q >= 4 ? (int32_t)be32(q) : -2;
        q += 4;
        if (l == -1)
            continue; /* a NULL element */
        if (l != 8 || end - q < 8)
            return -1;
        x[n++] = be_float8(q);
        q += 8;
    }
    return n;
}

/* The rows of one read share one block (store_measurement_row.slab): every
 * point and repetition array first, then every text, NUL-terminated. A
 * block per value cost 80,000 allocations for 10,000 rows and a page fault
 * for every 4 KiB of them. *slab for rows, *ndoubles where its texts start:
 * 0, -1 when out of memory, -2 on a malformed array. */
static int slab_alloc(PGresult *r, int rows, char **slab, size_t *ndoubles)
{
    size_t texts = 0;
    *ndoubles = 0;
    for (int i = 0; i < rows; i++)
        for (int col = 0; col <= 7; col++) {
            if (PQgetisnull(r, i, col))
                continue;
            if (col != 0 && col != 6) {
                texts += (size_t)PQgetlength(r, i, col) + 1;
                continue;
            }
            int k = float8_array_count(PQgetvalue(r, i, col), PQgetlength(r, i, col));
            if (k < 0)
                return -2;
            *ndoubles += (size_t)k;
        }
    size_t bytes = *ndoubles * sizeof(double) + texts;
    *slab = malloc(bytes ? bytes : 1);
    if (!*slab)
        return -1;
    prefault_write(*slab, bytes);
    return 0;
}

/* column col of row i as a NUL-terminated text at p (NULL: *out NULL);
 * where the next text goes */
static char *slab_text(PGresult *r, int i, int col, char *p, char **out)
{
    if (PQgetisnull(r, i, col)) {
        *out = NULL;
        return p;
    }
    int len = PQgetlength(r, i, col);
    memcpy(p, PQgetvalue(r, i, col), (size_t)len);
    p[len] = '\0';
    *out = p;
    return p + len + 1;
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
        "array_to_json(levels)::text, value FROM measurements "
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
    char *slab = NULL; /* none for no rows: nothing would free it */
    size_t ndoubles = 0;
    int rc = !v ? -1 : rows ? slab_alloc(r, rows, &slab, &ndoubles) : 0;
    if (rc)
        rc = store_error_set(err, STORE_INTERNAL, rc == -1 ? "out of memory"
                                                           : "cannot read a stored measurement");
    prefault_write(v, sizeof *v * (size_t)rows);
    double *num = (double *)slab;
    char *text = slab ? slab + ndoubles * sizeof(double) : NULL;
    for (int i = 0; i < rows && rc == STORE_OK; i++) {
        store_measurement_row *m = &v[i];
        m->slab = slab;
        m->point = num;
        m->nparams = PQgetisnull(r, i, 0)
                         ? -1
                         : float8_array_into(PQgetvalue(r, i, 0), PQgetlength(r, i, 0), num);
        num += m->nparams > 0 ? m->nparams : 0;
        m->reps = num;
        m->nreps = PQgetisnull(r, i, 6)
                       ? 0
                       : float8_array_into(PQgetvalue(r, i, 6), PQgetlength(r, i, 6), num);
        num += m->nreps > 0 ? m->nreps : 0;
        /* the aggregated value (float8, 8 bytes in binary); NaN when NULL */
        m->value = !PQgetisnull(r, i, 8) && PQgetlength(r, i, 8) == 8
                       ? be_float8((const unsigned char *)PQgetvalue(r, i, 8))
                       : NAN;
        char **cols[6] = {&m->level, &m->name, &m->category, &m->metric, &m->phase, &m->levels};
        static const int at[6] = {1, 2, 3, 4, 5, 7};
        for (int k = 0; k < 6; k++)
            text = slab_text(r, i, at[k], text, cols[k]);
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
