/*
 * profiles.c — the upload transaction (see store/profiles.h).
 *
 *   BEGIN
 *   experiment exists (locked against deletion) and has npoint parameters;
 *     the same sha256 already stored -> answer the first upload, store nothing
 *   INSERT the profile (raw bytes, point, ...) ON CONFLICT (experiment_id,
 *     sha256) DO NOTHING: an identical upload committing meanwhile makes this
 *     one a duplicate too
 *   INSERT the callpaths ON CONFLICT DO NOTHING, in name order (so two
 *     uploads adding the same new callpaths cannot deadlock), then read all
 *     their ids and stored categories; a category that differs -> INVALID
 *   INSERT the rows from binary arrays through unnest(), in chunks
 *   INSERT the refit job, or join the experiment's queued one
 *     (jobs_one_queued), link it to the profile, pg_notify the workers
 *   COMMIT
 *
 * The job comes last so that the queued job's row is locked only for the
 * moment between it and COMMIT: uploads to one experiment run side by side,
 * and a worker claiming with SKIP LOCKED never starts a refit that misses an
 * upload which joined its job but has not committed yet. A COMMIT whose
 * answer is lost (connection dropped) reports UNAVAILABLE although it may
 * have succeeded; the retry is then answered as a duplicate.
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pgarray.h"
#include "store/profiles.h"

#define ROWS_PER_STATEMENT 50000

static void rollback(PGconn *c)
{
    if (PQtransactionStatus(c) == PQTRANS_INTRANS || PQtransactionStatus(c) == PQTRANS_INERROR)
        PQclear(PQexec(c, "ROLLBACK"));
}

/* Runs a statement without result rows; on failure fills err and returns its
 * code. */
static int exec_cmd(PGconn *c, const char *sql, int n, const char *const *vals, const int *lens,
                    const int *fmts, store_error *err)
{
    PGresult *r = PQexecParams(c, sql, n, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

/* The first upload of these bytes: its profile and job ids. */
static void read_duplicate(PGresult *r, int row, int col, store_upload_result *out)
{
    out->duplicate = 1;
    out->profile_id = strtoll(PQgetvalue(r, row, col), NULL, 10);
    out->job_id = PQgetisnull(r, row, col + 1) ? 0 : strtoll(PQgetvalue(r, row, col + 1), NULL, 10);
}

/* The point and repetition as binary float8[] and text, shared by the
 * statements that compare or store them. */
typedef struct upload_params {
    pgarray point;
    char rep[16];
} upload_params;

/* Experiment check and duplicate fast path. Returns STORE_OK with
 * out->duplicate set when the bytes are known at the same point and
 * repetition; the same bytes at another coordinate -> STORE_CONFLICT (one
 * file cannot be two measurements). */
static int check_experiment(PGconn *c, const store_upload *u, const char *exp, const char *sha,
                            const upload_params *up, store_upload_result *out, store_error *err)
{
    const char *vals[] = {exp, sha, up->point.buf, up->rep};
    const int lens[] = {0, 32, (int)up->point.len, 0};
    const int fmts[] = {0, 1, 1, 0};
    PGresult *r = PQexecParams(c,
                               "SELECT coalesce(array_length(e.parameters, 1), 0), p.id, p.job_id, "
                               "p.point = $3::float8[] AND p.repetition = $4::int4 "
                               "FROM experiments e LEFT JOIN profiles p "
                               "ON p.experiment_id = e.id AND p.sha256 = $2 "
                               "WHERE e.id = $1 FOR KEY SHARE OF e",
                               4, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "no experiment with id %s", exp);
    }
    int nparams = atoi(PQgetvalue(r, 0, 0));
    int rc = STORE_OK;
    if (!PQgetisnull(r, 0, 1) && strcmp(PQgetvalue(r, 0, 3), "t"))
        rc = store_error_set(err, STORE_CONFLICT,
                             "the same bytes were uploaded before as profile %s with another "
                             "point or repetition",
                             PQgetvalue(r, 0, 1));
    else if (!PQgetisnull(r, 0, 1))
        read_duplicate(r, 0, 1, out);
    else if (nparams != u->npoint)
        rc = store_error_set(err, STORE_INVALID,
                             "point: %d values for an experiment with %d parameters", u->npoint,
                             nparams);
    PQclear(r);
    return rc;
}

/* Inserts the profile row; on a concurrent identical upload fills out as a
 * duplicate instead. */
static int insert_profile(PGconn *c, const store_upload *u, const char *exp, const char *sha,
                          const upload_params *up, store_upload_result *out, store_error *err)
{
    char ranks[16], size[24];
    snprintf(ranks, sizeof ranks, "%d", u->prof->nranks);
    snprintf(size, sizeof size, "%zu", u->raw_len);
    const char *vals[] = {exp,      sha,   up->point.buf, up->rep,  u->format,
                          ranks,    size,  u->raw,        u->commit, u->branch,
                          u->ci_run};
    const int lens[] = {0, 32, (int)up->point.len, 0, 0, 0, 0, (int)u->raw_len, 0, 0, 0};
    const int fmts[] = {0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0};
    PGresult *r = PQexecParams(
        c,
        "INSERT INTO profiles (experiment_id, sha256, point, repetition, format, ranks, size, raw, "
        "commit_sha, branch, ci_run) "
        "VALUES ($1, $2, $3::float8[], $4, $5, $6, $7, $8, $9, $10, $11) "
        "ON CONFLICT (experiment_id, sha256) DO NOTHING RETURNING id",
        11, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) == 1) {
        out->profile_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        PQclear(r);
        return STORE_OK;
    }
    PQclear(r);
    /* the same bytes were committed by another upload while we ran */
    r = PQexecParams(c,
                     "SELECT id, job_id, point = $3::float8[] AND repetition = $4::int4 "
                     "FROM profiles WHERE experiment_id = $1 AND sha256 = $2",
                     4, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) != 1)
        rc = store_error_set(err, STORE_UNAVAILABLE, "a concurrent identical upload is in doubt");
    else if (strcmp(PQgetvalue(r, 0, 2), "t"))
        rc = store_error_set(err, STORE_CONFLICT,
                             "the same bytes were uploaded before as profile %s with another "
                             "point or repetition",
                             PQgetvalue(r, 0, 0));
    else
        read_duplicate(r, 0, 0, out);
    PQclear(r);
    return rc;
}

/* Upserts the profile's callpaths; ids[i] is the id of prof->callpaths[i]. */
static int upsert_callpaths(PGconn *c, const profile *p, const char *exp, int64_t *ids,
                            store_error *err)
{
    pgarray names, cats;
    pgarray_init(&names, PGARRAY_TEXT, (size_t)p->ncallpaths, 32);
    pgarray_init(&cats, PGARRAY_TEXT, (size_t)p->ncallpaths, 4);
    for (int i = 0; i < p->ncallpaths; i++) {
        const char *cat = profile_category_name(p->callpaths[i].category);
        pgarray_text(&names, p->callpaths[i].name);
        pgarray_text(&cats, cat ? cat : "?");
    }
    int rc = STORE_OK;
    if (pgarray_finish(&names) < 0 || pgarray_finish(&cats) < 0) {
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
        goto done;
    }
    const char *vals[] = {exp, names.buf, cats.buf};
    const int lens[] = {0, (int)names.len, (int)cats.len};
    const int fmts[] = {0, 1, 1};
    rc = exec_cmd(c,
                  "INSERT INTO callpaths (experiment_id, name, category) "
                  "SELECT $1, t.n, t.c FROM unnest($2::text[], $3::text[]) AS t(n, c) "
                  "ORDER BY t.n ON CONFLICT (experiment_id, name) DO NOTHING",
                  3, vals, lens, fmts, err);
    if (rc)
        goto done;
    PGresult *r = PQexecParams(c,
                               "SELECT t.i, c.id, c.category "
                               "FROM unnest($2::text[]) WITH ORDINALITY AS t(n, i) "
                               "JOIN callpaths c ON c.experiment_id = $1 AND c.name = t.n",
                               2, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = store_fail(c, r, err);
        goto done;
    }
    int got = 0;
    for (int k = 0; k < PQntuples(r) && !rc; k++) {
        long i = strtol(PQgetvalue(r, k, 0), NULL, 10) - 1;
        if (i < 0 || i >= p->ncallpaths) {
            rc = store_error_set(err, STORE_INTERNAL, "callpath lookup returned index %ld", i + 1);
            break;
        }
        const char *stored = PQgetvalue(r, k, 2);
        const char *mine = profile_category_name(p->callpaths[i].category);
        if (!mine || strcmp(stored, mine)) {
            rc = store_error_set(err, STORE_INVALID,
                                 "callpath \"%.80s\" has category \"%s\" in this experiment, "
                                 "the upload says \"%s\"",
                                 p->callpaths[i].name, stored, mine ? mine : "?");
            break;
        }
        ids[i] = strtoll(PQgetvalue(r, k, 1), NULL, 10);
        got++;
    }
    if (!rc && got != p->ncallpaths)
        rc = store_error_set(err, STORE_INTERNAL, "%d of %d callpaths stored", got,
                             p->ncallpaths);
    PQclear(r);
done:
    pgarray_free(&names);
    pgarray_free(&cats);
    return rc;
}

/* Inserts the normalized rows, ROWS_PER_STATEMENT at a time. */
static int insert_rows(PGconn *c, const profile *p, int64_t profile_id, const int64_t *cp_ids,
                       store_error *err)
{
    size_t chunk = p->nrows < ROWS_PER_STATEMENT ? p->nrows : ROWS_PER_STATEMENT;
    pgarray rank, phase, step, cp, metric, value, metrics;
    pgarray_init(&rank, PGARRAY_INT4, chunk, 4);
    pgarray_init(&phase, PGARRAY_INT2, chunk, 2);
    pgarray_init(&step, PGARRAY_INT4, chunk, 4);
    pgarray_init(&cp, PGARRAY_INT8, chunk, 8);
    pgarray_init(&metric, PGARRAY_INT4, chunk, 4);
    pgarray_init(&value, PGARRAY_FLOAT8, chunk, 8);
    pgarray_init(&metrics, PGARRAY_TEXT, (size_t)p->nmetrics, 8);
    for (int m = 0; m < p->nmetrics; m++)
        pgarray_text(&metrics, p->metrics[m]);
    char pid[24];
    snprintf(pid, sizeof pid, "%" PRId64, profile_id);
    int rc = pgarray_finish(&metrics) < 0 ? store_error_set(err, STORE_INTERNAL, "out of memory")
                                          : STORE_OK;
    for (size_t at = 0; !rc && at < p->nrows; at += chunk) {
        size_t end = at + chunk < p->nrows ? at + chunk : p->nrows;
        pgarray *cols[] = {&rank, &phase, &step, &cp, &metric, &value};
        for (size_t k = 0; k < 6; k++)
            pgarray_reset(cols[k]);
        for (size_t i = at; i < end; i++) {
            const profile_row *row = &p->rows[i];
            if (row->callpath < 0 || row->callpath >= p->ncallpaths || row->metric < 0 ||
                row->metric >= p->nmetrics) {
                rc = store_error_set(err, STORE_INTERNAL, "row %zu names no callpath or metric",
                                     i);
                break;
            }
            pgarray_int4(&rank, row->rank);
            pgarray_int2(&phase, row->phase);
            pgarray_int4(&step, row->step);
            pgarray_int8(&cp, cp_ids[row->callpath]);
            pgarray_int4(&metric, row->metric + 1);
            pgarray_float8(&value, row->value);
        }
        if (rc)
            break;
        for (size_t k = 0; k < 6 && !rc; k++)
            if (pgarray_finish(cols[k]) < 0)
                rc = store_error_set(err, STORE_INTERNAL, "out of memory");
        if (rc)
            break;
        const char *vals[] = {pid,       rank.buf,  phase.buf,   step.buf,
                              cp.buf,    metric.buf, value.buf, metrics.buf};
        const int lens[] = {0,           (int)rank.len,  (int)phase.len, (int)step.len,
                            (int)cp.len, (int)metric.len, (int)value.len, (int)metrics.len};
        const int fmts[] = {0, 1, 1, 1, 1, 1, 1, 1};
        rc = exec_cmd(c,
                      "INSERT INTO profile_rows "
                      "(profile_id, rank, phase, step, callpath_id, metric, value) "
                      "SELECT $1, t.r, t.ph, t.st, t.cp, ($8::text[])[t.m], t.v "
                      "FROM unnest($2::int4[], $3::int2[], $4::int4[], $5::int8[], $6::int4[], "
                      "$7::float8[]) AS t(r, ph, st, cp, m, v)",
                      8, vals, lens, fmts, err);
    }
    pgarray_free(&rank);
    pgarray_free(&phase);
    pgarray_free(&step);
    pgarray_free(&cp);
    pgarray_free(&metric);
    pgarray_free(&value);
    pgarray_free(&metrics);
    return rc;
}

/* Queues the refit (or joins the queued one), links it to the profile and
 * notifies the workers (delivered at COMMIT). */
static int enqueue_job(PGconn *c, const store_upload *u, int64_t profile_id, int64_t *job_id,
                       store_error *err)
{
    int64_t exp = u->experiment_id;
    int rc = store_job_enqueue_commit(c, exp, u->commit, u->branch, u->ci_run, job_id, err);
    if (rc)
        return rc;
    char pid[24], jid[24];
    snprintf(pid, sizeof pid, "%" PRId64, profile_id);
    snprintf(jid, sizeof jid, "%" PRId64, *job_id);
    const char *vals[] = {pid, jid};
    PGresult *r = PQexecParams(c, "UPDATE profiles SET job_id = $2 WHERE id = $1", 2, NULL, vals,
                               NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    rc = strcmp(PQcmdTuples(r), "1")
             ? store_error_set(err, STORE_INTERNAL, "the job was not linked to profile %s", pid)
             : STORE_OK;
    PQclear(r);
    return rc;
}

int store_profile_add(PGconn *c, const store_upload *u, store_upload_result *out,
                      store_error *err)
{
    memset(out, 0, sizeof *out);
    const profile *p = u->prof;
    if (u->raw_len > 0x3fffffff)
        return store_error_set(err, STORE_INVALID, "the upload is larger than 1 GB");
    unsigned char sha[32];
    unsigned int shalen = 0;
    if (!EVP_Digest(u->raw, u->raw_len, sha, &shalen, EVP_sha256(), NULL) || shalen != 32)
        return store_error_set(err, STORE_INTERNAL, "sha256 failed");
    char exp[24];
    snprintf(exp, sizeof exp, "%" PRId64, u->experiment_id);
    int64_t *cp_ids = calloc(p->ncallpaths > 0 ? (size_t)p->ncallpaths : 1, sizeof *cp_ids);
    if (!cp_ids)
        return store_error_set(err, STORE_INTERNAL, "out of memory");

    upload_params up;
    snprintf(up.rep, sizeof up.rep, "%d", u->repetition);
    pgarray_init(&up.point, PGARRAY_FLOAT8, (size_t)u->npoint, 8);
    for (int i = 0; i < u->npoint; i++)
        pgarray_float8(&up.point, u->point[i]);
    if (pgarray_finish(&up.point) < 0) {
        pgarray_free(&up.point);
        free(cp_ids);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }

    PGresult *r = PQexec(c, "BEGIN");
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    if (!rc)
        rc = check_experiment(c, u, exp, (const char *)sha, &up, out, err);
    if (!rc && !out->duplicate)
        rc = insert_profile(c, u, exp, (const char *)sha, &up, out, err);
    if (!rc && !out->duplicate)
        rc = upsert_callpaths(c, p, exp, cp_ids, err);
    if (!rc && !out->duplicate)
        rc = insert_rows(c, p, out->profile_id, cp_ids, err);
    if (!rc && !out->duplicate && !u->defer_refit)
        rc = enqueue_job(c, u, out->profile_id, &out->job_id, err);
    free(cp_ids);
    pgarray_free(&up.point);
    if (rc || out->duplicate) {
        rollback(c); /* a duplicate wrote nothing; ending it either way is the same */
        if (rc)
            memset(out, 0, sizeof *out);
        return rc;
    }
    r = PQexec(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = store_fail(c, r, err);
        rollback(c);
        memset(out, 0, sizeof *out);
        return rc;
    }
    PQclear(r);
    return STORE_OK;
}

int store_profile_counts(PGconn *c, int64_t exp, int64_t *profiles, int64_t *rows,
                         store_error *err)
{
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    const char *vals[] = {e};
    PGresult *r = PQexecParams(c,
                               "SELECT (SELECT count(*) FROM profiles WHERE experiment_id = $1), "
                               "(SELECT count(*) FROM profile_rows r JOIN profiles p "
                               "ON p.id = r.profile_id WHERE p.experiment_id = $1)",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    *profiles = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    *rows = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    PQclear(r);
    return STORE_OK;
}
