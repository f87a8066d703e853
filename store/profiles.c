/*
 * profiles.c — the upload transaction (see store/profiles.h).
 *
 *   BEGIN
 *   experiment exists (locked against deletion) and has npoint parameters;
 *     the same sha256 already stored -> answer the first upload, store nothing
 *   other bytes at the same point, repetition and ranks (rank_ids overlap,
 *     under an advisory lock of the coordinate) -> CONFLICT, or with
 *     u->replace the stored profiles are deleted first
 *   the experiment's distinct callpaths after it within the cap, else INVALID
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
/* Raw bytes beyond this go to the database through COPY in chunks of
 * RAW_CHUNK (the body's pages are read in turn, never copied whole): a
 * statement parameter would be copied whole into libpq's buffer. */
#define RAW_STREAM_AT ((size_t)1 << 20)
#define RAW_CHUNK ((size_t)1 << 20)

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
    const char *vals[] = {exp, sha, up->point.buf, up->rep, u->levels ? u->levels : "{}"};
    const int lens[] = {0, 32, (int)up->point.len, 0, 0};
    const int fmts[] = {0, 1, 1, 0, 0};
    PGresult *r = PQexecParams(c,
                               "SELECT coalesce(array_length(e.parameters, 1), 0), p.id, p.job_id, "
                               "p.point = $3::float8[] AND p.repetition = $4::int4 "
                               "AND p.levels = $5::text[] "
                               "FROM experiments e LEFT JOIN profiles p "
                               "ON p.experiment_id = e.id AND p.sha256 = $2 "
                               "WHERE e.id = $1 FOR KEY SHARE OF e",
                               5, NULL, vals, lens, fmts, 0);
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
                             "point, repetition or factor levels",
                             PQgetvalue(r, 0, 1));
    else if (!PQgetisnull(r, 0, 1))
        read_duplicate(r, 0, 1, out);
    else if (nparams != u->npoint)
        rc = store_error_set(err, STORE_INVALID,
                             "point: %d values for an experiment with %d parameters", u->npoint,
                             nparams);
    if (rc == STORE_INVALID && err)
        snprintf(err->field, sizeof err->field, "point");
    PQclear(r);
    return rc;
}

/* A big upload's raw bytes into the one row of the temporary table
 * perfcast_upload_raw (created once per connection, emptied at the
 * transaction's end), by COPY in binary format, RAW_CHUNK bytes at a time. */
static int stream_raw(PGconn *c, const store_upload *u, store_error *err)
{
    PGresult *r = PQexec(c, "CREATE TEMP TABLE IF NOT EXISTS perfcast_upload_raw (raw bytea) "
                            "ON COMMIT DELETE ROWS");
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    r = PQexec(c, "COPY perfcast_upload_raw (raw) FROM STDIN (FORMAT binary)");
    if (PQresultStatus(r) != PGRES_COPY_IN)
        return store_fail(c, r, err);
    PQclear(r);
    /* signature, flags, header extension; one tuple of one field; trailer */
    static const char header[19] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', (char)0xff, '\r', '\n', 0};
    unsigned char tuple[6] = {0, 1, (unsigned char)(u->raw_len >> 24),
                              (unsigned char)(u->raw_len >> 16), (unsigned char)(u->raw_len >> 8),
                              (unsigned char)u->raw_len};
    static const char trailer[2] = {(char)0xff, (char)0xff};
    int ok = PQputCopyData(c, header, sizeof header) == 1 &&
             PQputCopyData(c, (const char *)tuple, sizeof tuple) == 1;
    const char *raw = u->raw;
    for (size_t at = 0; ok && at < u->raw_len; at += RAW_CHUNK) {
        size_t n = u->raw_len - at < RAW_CHUNK ? u->raw_len - at : RAW_CHUNK;
        ok = PQputCopyData(c, raw + at, (int)n) == 1;
    }
    ok = ok && PQputCopyData(c, trailer, sizeof trailer) == 1;
    PQputCopyEnd(c, ok ? NULL : "the upload could not be sent");
    int rc = STORE_OK;
    while ((r = PQgetResult(c))) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == STORE_OK)
            rc = store_fail(c, r, err);
        else
            PQclear(r);
    }
    if (rc == STORE_OK && !ok)
        rc = store_error_set(err, STORE_UNAVAILABLE, "the upload could not be sent");
    return rc;
}

/* Inserts the profile row; on a concurrent identical upload fills out as a
 * duplicate instead. Raw bytes beyond RAW_STREAM_AT come from
 * perfcast_upload_raw (stream_raw). */
static int insert_profile(PGconn *c, const store_upload *u, const char *exp, const char *sha,
                          const upload_params *up, const pgarray *rank_list,
                          store_upload_result *out, store_error *err)
{
    int streamed = u->raw_len > RAW_STREAM_AT;
    if (streamed) {
        int rc = stream_raw(c, u, err);
        if (rc)
            return rc;
    }
    char ranks[16], size[24];
    snprintf(ranks, sizeof ranks, "%d", u->prof->nranks);
    snprintf(size, sizeof size, "%zu", u->raw_len);
    const char *vals[] = {exp,       sha,      up->point.buf,  up->rep,
                          u->format, ranks,    size,           streamed ? "" : u->raw,
                          rank_list->buf,      u->evaluation ? "t" : "f",
                          u->commit, u->branch, u->ci_run, u->levels ? u->levels : "{}"};
    const int lens[] = {0, 32, (int)up->point.len, 0, 0, 0, 0, streamed ? 0 : (int)u->raw_len,
                        (int)rank_list->len, 0, 0, 0, 0, 0};
    const int fmts[] = {0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
    /* streamed: $8 is empty and the bytes come from the staged row */
    PGresult *r = PQexecParams(
        c,
        streamed
            ? "INSERT INTO profiles (experiment_id, sha256, point, repetition, format, ranks, "
              "size, raw, rank_ids, evaluation, commit_sha, branch, ci_run, levels) SELECT $1, "
              "$2, $3::float8[], $4, $5, $6, $7, s.raw, $9::int4[], $10::boolean, $11, $12, $13, "
              "$14::text[] FROM perfcast_upload_raw s WHERE $8::bytea = '' "
              "ON CONFLICT (experiment_id, sha256) DO NOTHING RETURNING id"
            : "INSERT INTO profiles (experiment_id, sha256, point, repetition, format, ranks, "
              "size, raw, rank_ids, evaluation, commit_sha, branch, ci_run, levels) VALUES ($1, "
              "$2, $3::float8[], $4, $5, $6, $7, $8, $9::int4[], $10::boolean, $11, $12, $13, "
              "$14::text[]) ON CONFLICT (experiment_id, sha256) DO NOTHING RETURNING id",
        14, NULL, vals, lens, fmts, 0);
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

/* The profile's distinct rank ids, ascending, as an int4[] (binary). */
static int rank_ids(const profile *p, pgarray *out)
{
    int *ids = malloc((p->nrows ? p->nrows : 1) * sizeof *ids);
    if (!ids)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->nrows; i++)
        ids[n++] = p->rows[i].rank;
    /* sort and unique: ranks are few, rows many; an insertion sort of the
     * distinct values seen so far keeps this O(rows x ranks) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int v = ids[i];
        size_t j = 0;
        while (j < k && ids[j] < v)
            j++;
        if (j < k && ids[j] == v)
            continue;
        memmove(ids + j + 1, ids + j, (k - j) * sizeof *ids);
        ids[j] = v;
        k++;
    }
    pgarray_init(out, PGARRAY_INT4, k, 4);
    for (size_t i = 0; i < k; i++)
        pgarray_int4(out, ids[i]);
    free(ids);
    return pgarray_finish(out) < 0 ? -1 : 0;
}

/* Other bytes at this coordinate, repetition and (overlapping) ranks?
 * Uploads to one coordinate and repetition are serialized by an advisory
 * lock for the rest of the transaction, so two conflicting uploads cannot
 * both pass. With u->replace the profiles found are deleted; else
 * STORE_CONFLICT naming the first one and the ranks both hold. */
static int check_coordinate(PGconn *c, const store_upload *u, const char *exp,
                            const upload_params *up, const pgarray *ranks,
                            store_upload_result *out, store_error *err)
{
    const char *vals[] = {exp, up->point.buf, up->rep, ranks->buf, u->levels ? u->levels : "{}"};
    const int lens[] = {0, (int)up->point.len, 0, (int)ranks->len, 0};
    const int fmts[] = {0, 1, 0, 1, 0};
    PGresult *r = PQexecParams(c,
                               "SELECT pg_advisory_xact_lock(hashtext('perfcast profile ' || $1::text || "
                               "'/' || $2::float8[]::text || '/' || $3::text))",
                               3, NULL, vals, lens, fmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    PQclear(r);
    /* profiles of another commit are another series (the model set per
     * commit), never a conflict */
    const char *cvals[] = {exp, up->point.buf, up->rep, ranks->buf, u->commit,
                           u->levels ? u->levels : "{}"};
    const int clens[] = {0, (int)up->point.len, 0, (int)ranks->len, 0, 0};
    const int cfmts[] = {0, 1, 0, 1, 0, 0};
    r = PQexecParams(c,
                     u->replace
                         ? "WITH gone AS (DELETE FROM profiles WHERE experiment_id = $1 "
                           "AND point = $2::float8[] AND repetition = $3::int4 "
                           "AND rank_ids && $4::int4[] AND commit_sha IS NOT DISTINCT FROM $5 "
                           "AND levels = $6::text[] RETURNING id) SELECT id, '' FROM gone"
                         : "SELECT id, array_to_string(ARRAY(SELECT unnest(rank_ids) "
                           "INTERSECT SELECT unnest($4::int4[]) ORDER BY 1), ',') "
                           "FROM profiles WHERE experiment_id = $1 AND point = $2::float8[] "
                           "AND repetition = $3::int4 AND rank_ids && $4::int4[] "
                           "AND commit_sha IS NOT DISTINCT FROM $5 AND levels = $6::text[] "
                           "ORDER BY id LIMIT 1",
                     6, NULL, cvals, clens, cfmts, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (u->replace) {
        out->replaced = PQntuples(r);
    } else if (PQntuples(r) > 0) {
        out->conflict_profile = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        snprintf(out->conflict_ranks, sizeof out->conflict_ranks, "%s", PQgetvalue(r, 0, 1));
        rc = store_error_set(err, STORE_CONFLICT,
                             "profile %s holds this coordinate, repetition and ranks %s with "
                             "other bytes",
                             PQgetvalue(r, 0, 0), out->conflict_ranks);
    }
    PQclear(r);
    return rc;
}

/* The experiment's distinct callpaths once these are added must stay
 * within u->max_experiment_callpaths: else STORE_INVALID and
 * out->callpaths_after. */
static int check_callpath_cap(PGconn *c, const store_upload *u, const char *exp,
                              store_upload_result *out, store_error *err)
{
    if (u->max_experiment_callpaths <= 0)
        return STORE_OK;
    const profile *p = u->prof;
    pgarray names;
    pgarray_init(&names, PGARRAY_TEXT, (size_t)p->ncallpaths, 32);
    for (int i = 0; i < p->ncallpaths; i++)
        pgarray_text(&names, p->callpaths[i].name);
    if (pgarray_finish(&names) < 0) {
        pgarray_free(&names);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    const char *vals[] = {exp, names.buf};
    const int lens[] = {0, (int)names.len};
    const int fmts[] = {0, 1};
    PGresult *r = PQexecParams(c,
                               "SELECT (SELECT count(*) FROM callpaths WHERE experiment_id = $1) + "
                               "(SELECT count(*) FROM unnest($2::text[]) AS t(n) WHERE NOT EXISTS "
                               "(SELECT 1 FROM callpaths c WHERE c.experiment_id = $1 "
                               "AND c.name = t.n))",
                               2, NULL, vals, lens, fmts, 0);
    pgarray_free(&names);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    long long after = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    if (after <= u->max_experiment_callpaths)
        return STORE_OK;
    out->callpaths_after = after;
    return store_error_set(err, STORE_INVALID,
                           "the experiment would hold %lld distinct callpaths; the limit is %d "
                           "(PERFCAST_MAX_EXPERIMENT_CALLPATHS)",
                           after, u->max_experiment_callpaths);
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
            if (err)
                snprintf(err->field, sizeof err->field, "category");
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
    pgarray ranks;
    int ranks_rc = rank_ids(p, &ranks);
    if (pgarray_finish(&up.point) < 0 || ranks_rc) {
        pgarray_free(&up.point);
        if (!ranks_rc)
            pgarray_free(&ranks);
        free(cp_ids);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }

    PGresult *r = u->in_transaction ? NULL : PQexec(c, "BEGIN");
    int rc = !r || PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK)
                                                          : store_fail(c, r, err);
    if (!rc)
        rc = check_experiment(c, u, exp, (const char *)sha, &up, out, err);
    if (!rc && !out->duplicate)
        rc = check_coordinate(c, u, exp, &up, &ranks, out, err);
    if (!rc && !out->duplicate)
        rc = check_callpath_cap(c, u, exp, out, err);
    if (!rc && !out->duplicate)
        rc = insert_profile(c, u, exp, (const char *)sha, &up, &ranks, out, err);
    if (!rc && !out->duplicate)
        rc = upsert_callpaths(c, p, exp, cp_ids, err);
    if (!rc && !out->duplicate)
        rc = insert_rows(c, p, out->profile_id, cp_ids, err);
    if (!rc && !out->duplicate && !u->defer_refit)
        rc = enqueue_job(c, u, out->profile_id, &out->job_id, err);
    free(cp_ids);
    pgarray_free(&up.point);
    pgarray_free(&ranks);
    if (u->in_transaction && !rc)
        return STORE_OK; /* the caller commits; a duplicate wrote nothing */
    if (rc || out->duplicate) {
        if (!u->in_transaction) /* else the caller rolls back */
            rollback(c); /* a duplicate wrote nothing; ending it either way is the same */
        if (rc) { /* keep only what names the conflict or the cap */
            store_upload_result keep = {.conflict_profile = out->conflict_profile,
                                        .callpaths_after = out->callpaths_after};
            memcpy(keep.conflict_ranks, out->conflict_ranks, sizeof keep.conflict_ranks);
            *out = keep;
        }
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

int store_profiles_add_all(PGconn *c, store_upload *us, int n, store_upload_result *res,
                           int *failed, store_error *err)
{
    *failed = -1;
    PGresult *r = PQexec(c, "BEGIN");
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    for (int i = 0; i < n && !rc; i++) {
        us[i].in_transaction = 1;
        rc = store_profile_add(c, &us[i], &res[i], err);
        if (rc)
            *failed = i;
    }
    if (rc) {
        rollback(c);
        return rc;
    }
    r = PQexec(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = store_fail(c, r, err);
        rollback(c);
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

int store_profile_delete(PGconn *c, int64_t exp, int64_t pid, int64_t *job_id, store_error *err)
{
    *job_id = 0;
    char e[24], p[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    snprintf(p, sizeof p, "%" PRId64, pid);
    const char *vals[] = {e, p};
    PGresult *r = PQexec(c, "BEGIN");
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    if (!rc) {
        r = PQexecParams(c, "DELETE FROM profiles WHERE experiment_id = $1 AND id = $2", 2, NULL,
                         vals, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_COMMAND_OK) {
            rc = store_fail(c, r, err);
        } else {
            if (strcmp(PQcmdTuples(r), "1"))
                rc = store_error_set(err, STORE_NOT_FOUND, "no profile with id %s in experiment %s",
                                     p, e);
            PQclear(r);
        }
    }
    /* the models must forget it: refit what is left */
    if (!rc)
        rc = store_job_enqueue(c, exp, job_id, err);
    if (rc) {
        rollback(c);
        *job_id = 0;
        return rc;
    }
    r = PQexec(c, "COMMIT");
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        rc = store_fail(c, r, err);
        rollback(c);
        *job_id = 0;
        return rc;
    }
    PQclear(r);
    return STORE_OK;
}
