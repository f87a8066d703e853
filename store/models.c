/*
 * models.c — refit input and output in the database, and reads of model
 * sets (see models.h).
 *
 * Bulk writes send one JSON document as a single parameter and expand it in
 * SQL (jsonb_array_elements), so thousands of rows cost one round trip and
 * nothing is ever spliced into SQL text. Number arrays travel as PostgreSQL
 * array literals built from numbers only ("{2,4.5}").
 */
#include "store/models.h"
#include "store/jobs.h"
#include "store/model_copy.h"
#include "store/notify.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"

/* ---- small helpers ------------------------------------------------------- */

/* "{1.5,2,3}" -> values; returns the count or -1. *out malloc'ed. */
static int parse_double_array(const char *text, double **out)
{
    size_t len = strlen(text);
    int cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == ',';
    double *v = malloc(sizeof(double) * (size_t)cap);
    if (!v)
        return -1;
    int n = 0;
    const char *p = text;
    if (*p == '{')
        p++;
    while (*p && *p != '}') {
        double x;
        size_t used = numtext_parse(p, strlen(p), &x);
        if (!used || n == cap) {
            free(v);
            return -1;
        }
        v[n++] = x;
        p += used;
        if (*p == ',')
            p++;
    }
    *out = v;
    return n;
}

static int parse_int_array(const char *text, int **out)
{
    double *d;
    int n = parse_double_array(text, &d);
    if (n < 0)
        return -1;
    int *v = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!v) {
        free(d);
        return -1;
    }
    for (int i = 0; i < n; i++)
        v[i] = (int)d[i];
    free(d);
    *out = v;
    return n;
}

/* "{a,b,c}" literal of n numbers, malloc'ed. */
static char *array_literal(const double *v, int n)
{
    size_t cap = 2 + (size_t)n * 32 + 1;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    s[len++] = '{';
    for (int i = 0; i < n; i++) {
        if (i)
            s[len++] = ',';
        len += (size_t)numtext_format_shortest(v[i], s + len);
    }
    s[len++] = '}';
    s[len] = '\0';
    return s;
}

static char *int_array_literal(const int *v, int n)
{
    size_t cap = 2 + (size_t)n * 12 + 1;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    size_t len = 0;
    s[len++] = '{';
    for (int i = 0; i < n; i++)
        len += (size_t)sprintf(s + len, i ? ",%d" : "%d", v[i]);
    s[len++] = '}';
    s[len] = '\0';
    return s;
}

static char *dup_or_null(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

static int exec_ok(PGconn *c, const char *sql, store_error *err)
{
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

static void rollback(PGconn *c)
{
    PQclear(PQexec(c, "ROLLBACK"));
}

/* ---- refit input ----------------------------------------------------------- */

void store_fit_data_free(store_fit_data *d)
{
    for (int i = 0; i < d->ncallpaths; i++)
        free(d->callpaths[i]);
    for (int i = 0; i < d->nmetrics; i++)
        free(d->metrics[i]);
    free(d->callpaths);
    free(d->categories);
    free(d->metrics);
    free(d->points);
    free(d->evaluation);
    for (int i = 0; d->levels && i < d->npoints; i++)
        free(d->levels[i]);
    free(d->levels);
    free(d->rows);
    memset(d, 0, sizeof *d);
}

static int category_index(const char *name)
{
    static const char *const names[] = {"comp", "comm", "mem", "host"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(names[i], name))
            return i;
    return 3;
}

/* The experiment's callpaths, ids mapped to dense indices via *ids. */
static int load_callpaths(PGconn *c, const char *exp, store_fit_data *d, int64_t **ids,
                          store_error *err)
{
    const char *vals[] = {exp};
    PGresult *r = PQexecParams(c,
                               "SELECT id, name, category FROM callpaths WHERE experiment_id = $1 "
                               "ORDER BY id",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int n = PQntuples(r);
    d->callpaths = calloc((size_t)(n ? n : 1), sizeof(char *));
    d->categories = calloc((size_t)(n ? n : 1), sizeof(int));
    *ids = calloc((size_t)(n ? n : 1), sizeof(int64_t));
    if (!d->callpaths || !d->categories || !*ids) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        (*ids)[i] = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        d->callpaths[i] = strdup(PQgetvalue(r, i, 1));
        d->categories[i] = category_index(PQgetvalue(r, i, 2));
        d->ncallpaths = i + 1;
        if (!d->callpaths[i]) {
            PQclear(r);
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        }
    }
    PQclear(r);
    return STORE_OK;
}

static int index_of_id(const int64_t *ids, int n, int64_t id)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (ids[mid] == id)
            return mid;
        if (ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int store_fit_data_metric(store_fit_data *d, const char *name)
{
    for (int i = 0; i < d->nmetrics; i++)
        if (!strcmp(d->metrics[i], name))
            return i;
    char **m = realloc(d->metrics, sizeof(char *) * (size_t)(d->nmetrics + 1));
    if (!m)
        return -1;
    d->metrics = m;
    d->metrics[d->nmetrics] = strdup(name);
    if (!d->metrics[d->nmetrics])
        return -1;
    return d->nmetrics++;
}

/* Point index of key "f{dali}|{2,4}" (evaluation "t" or "f", the levels,
 * the point), appended when new (rows arrive ordered by evaluation, levels,
 * point). */
static int point_index(store_fit_data *d, const char *key, const char *levels, const char *text,
                       char **last_text, store_error *err)
{
    if (*last_text && !strcmp(*last_text, key))
        return d->npoints - 1;
    int eval = key[0] == 't';
    unsigned char *ev = realloc(d->evaluation, (size_t)d->npoints + 1);
    if (!ev)
        return store_error_set(err, STORE_INTERNAL, "out of memory"), -1;
    d->evaluation = ev;
    d->evaluation[d->npoints] = (unsigned char)eval;
    char **lv = realloc(d->levels, sizeof(char *) * ((size_t)d->npoints + 1));
    if (!lv)
        return store_error_set(err, STORE_INTERNAL, "out of memory"), -1;
    d->levels = lv;
    d->levels[d->npoints] = NULL;
    double *v;
    int n = parse_double_array(text, &v);
    if (n != d->nparams) {
        if (n >= 0)
            free(v);
        store_error_set(err, STORE_INTERNAL, "stored point %s does not have %d values", text,
                        d->nparams);
        return -1;
    }
    double *pts = realloc(d->points, sizeof(double) * (size_t)(d->npoints + 1) * d->nparams);
    char *copy = strdup(key);
    char *lcopy = strdup(levels);
    if (!pts || !copy || !lcopy) {
        free(v);
        free(copy);
        free(lcopy);
        if (pts)
            d->points = pts;
        store_error_set(err, STORE_INTERNAL, "out of memory");
        return -1;
    }
    d->points = pts;
    memcpy(d->points + (size_t)d->npoints * d->nparams, v, sizeof(double) * (size_t)d->nparams);
    free(v);
    free(*last_text);
    *last_text = copy;
    d->levels[d->npoints] = lcopy;
    return d->npoints++;
}

/* job > 0: only the profiles of the job's commit; 0: all. */
static int fit_data_load(PGconn *c, int64_t exp, int64_t job, int nparams, store_fit_data *out,
                         store_error *err);

int store_fit_data_load(PGconn *c, int64_t exp, int nparams, store_fit_data *out, store_error *err)
{
    return fit_data_load(c, exp, 0, nparams, out, err);
}

int store_fit_data_load_job(PGconn *c, int64_t exp, int64_t job, int nparams,
                            store_fit_data *out, store_error *err)
{
    return fit_data_load(c, exp, job > 0 ? job : -1, nparams, out, err);
}

static int fit_data_load(PGconn *c, int64_t exp, int64_t job, int nparams, store_fit_data *out,
                         store_error *err)
{
    memset(out, 0, sizeof *out);
    out->nparams = nparams;
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, exp);
    int64_t *ids = NULL;
    int rc = load_callpaths(c, idtext, out, &ids, err);
    if (rc) {
        free(ids);
        store_fit_data_free(out);
        return rc;
    }
    char jobtext[24];
    snprintf(jobtext, sizeof jobtext, "%" PRId64, job);
    const char *vals[] = {idtext, jobtext};
    /* job -1: the profiles without a commit; an unknown job likewise */
    PGresult *r = PQexecParams(
        c,
        "SELECT CASE WHEN p.evaluation THEN 't' ELSE 'f' END || p.levels::text || '|' || "
        "p.point::text, p.repetition, r.rank, r.phase, r.step, r.callpath_id, r.metric, "
        "r.value, p.levels::text, p.point::text "
        "FROM profile_rows r JOIN profiles p ON p.id = r.profile_id "
        "WHERE p.experiment_id = $1 AND ($2::bigint = 0 OR p.commit_sha IS NOT DISTINCT FROM "
        "(SELECT commit_sha FROM jobs WHERE id = $2::bigint)) "
        "ORDER BY p.evaluation, p.levels, p.point, p.id",
        2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        free(ids);
        store_fit_data_free(out);
        return store_fail(c, r, err);
    }
    int n = PQntuples(r);
    out->rows = malloc(sizeof(store_fit_row) * (size_t)(n ? n : 1));
    char *last = NULL;
    rc = out->rows ? STORE_OK : store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < n && rc == STORE_OK; i++) {
        store_fit_row *row = &out->rows[i];
        row->point = point_index(out, PQgetvalue(r, i, 0), PQgetvalue(r, i, 8),
                                 PQgetvalue(r, i, 9), &last, err);
        row->repetition = atoi(PQgetvalue(r, i, 1));
        row->rank = atoi(PQgetvalue(r, i, 2));
        row->phase = atoi(PQgetvalue(r, i, 3));
        row->step = atoi(PQgetvalue(r, i, 4));
        row->callpath = index_of_id(ids, out->ncallpaths, strtoll(PQgetvalue(r, i, 5), NULL, 10));
        row->metric = store_fit_data_metric(out, PQgetvalue(r, i, 6));
        const char *v = PQgetvalue(r, i, 7);
        if (!numtext_parse(v, strlen(v), &row->value))
            row->value = strtod(v, NULL);
        if (row->point < 0)
            rc = err->code ? err->code : STORE_INTERNAL;
        else if (row->callpath < 0 || row->metric < 0)
            rc = store_error_set(err, STORE_INTERNAL, "inconsistent profile rows");
        out->nrows = (size_t)i + 1;
    }
    free(last);
    free(ids);
    PQclear(r);
    if (rc)
        store_fit_data_free(out);
    return rc;
}

/* ---- refit output ------------------------------------------------------------ */

static json_t *measurement_json(const store_measurement *m, int nparams)
{
    char *point = array_literal(m->point, nparams);
    char *reps = array_literal(m->reps, m->nreps);
    char *ranks = array_literal(m->ranks, m->nranks);
    char *ids = int_array_literal(m->rank_ids, m->nranks);
    char *lif = m->lif_reps ? array_literal(m->lif_reps, m->nreps) : NULL;
    json_t *o = NULL;
    if (point && reps && ranks && ids && (lif || !m->lif_reps))
        o = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:s, s:f, s:s, s:s, s:s, s:s?, s:s}", "point",
                      point, "level", m->level, "name", m->name, "category", m->category,
                      "metric", m->metric, "phase", m->phase, "value", m->value, "reps", reps,
                      "ranks", ranks, "rank_ids", ids, "lif", lif, "levels",
                      m->levels ? m->levels : "{}");
    free(lif);
    free(point);
    free(reps);
    free(ranks);
    free(ids);
    return o;
}

static json_t *model_json(const store_model *m)
{
    return json_pack("{s:s, s:s, s:s?, s:s, s:s, s:s?, s:s?, s:f, s:f, s:i, s:s?, s:s}",
                     "level", m->level, "name", m->name, "category", m->category, "metric",
                     m->metric, "phase", m->phase, "function", m->function, "model",
                     m->model_json, "growth_poly", m->growth_poly, "growth_log", m->growth_log,
                     "points", m->points, "reason", m->reason, "levels",
                     m->levels ? m->levels : "{}");
}

static char *dump_array(json_t *a)
{
    char *s = a ? json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(a);
    return s;
}

static int insert_set(PGconn *c, const char *exp, const char *job, int64_t *set_id, int *number,
                      store_error *err)
{
    const char *vals[] = {exp, job};
    /* writers of one experiment take numbers one at a time */
    PGresult *l = PQexecParams(c, "SELECT pg_advisory_xact_lock(7474, $1::int)", 1, NULL, vals,
                               NULL, NULL, 0);
    if (PQresultStatus(l) != PGRES_TUPLES_OK)
        return store_fail(c, l, err);
    PQclear(l);
    PGresult *r = PQexecParams(
        c,
        "INSERT INTO model_sets (experiment_id, number, job_id, commit_sha, branch, ci_run) "
        "SELECT $1, (SELECT coalesce(max(number), 0) + 1 FROM model_sets WHERE experiment_id = $1), "
        "$2, j.commit_sha, j.branch, j.ci_run FROM (SELECT 1) one "
        "LEFT JOIN jobs j ON j.id = $2::bigint "
        "RETURNING id, number",
        2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return store_fail(c, r, err);
    *set_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    *number = atoi(PQgetvalue(r, 0, 1));
    PQclear(r);
    return STORE_OK;
}

static int insert_json_rows(PGconn *c, const char *sql, const char *set, const char *doc,
                            store_error *err)
{
    const char *vals[] = {set, doc};
    PGresult *r = PQexecParams(c, sql, 2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

/* The SELECT that expands a JSON array of measurements ($2) into rows of
 * set $1 (the columns of the INSERTs below, in order). */
#define MEASUREMENT_ROWS                                                                         \
    "SELECT $1, (m->>'point')::float8[], m->>'level', m->>'name', m->>'category', "             \
    "m->>'metric', m->>'phase', (m->>'value')::float8, (m->>'reps')::float8[], "               \
    "(m->>'ranks')::float8[], (m->>'rank_ids')::int[], (m->>'lif')::float8[], "                \
    "(m->>'levels')::text[] FROM jsonb_array_elements($2::jsonb) AS m"
#define MODEL_ROWS                                                                               \
    "SELECT $1, m->>'level', m->>'name', m->>'category', m->>'metric', m->>'phase', "           \
    "m->>'function', (m->>'model')::jsonb, (m->>'growth_poly')::float8, "                      \
    "(m->>'growth_log')::float8, (m->>'points')::int, m->>'reason', (m->>'levels')::text[] "     \
    "FROM jsonb_array_elements($2::jsonb) AS m"

/* The set's measurements and models, encoded as two JSON arrays. */
static int encode_set(int nparams, const store_measurement *m, size_t nm,
                      const store_model *models, size_t nmodels, char **mdoc, char **modoc)
{
    json_t *ma = json_array(), *mo = json_array();
    for (size_t i = 0; ma && i < nm; i++)
        if (json_array_append_new(ma, measurement_json(&m[i], nparams)) < 0)
            break;
    for (size_t i = 0; mo && i < nmodels; i++)
        if (json_array_append_new(mo, model_json(&models[i])) < 0)
            break;
    int complete = ma && mo && json_array_size(ma) == nm && json_array_size(mo) == nmodels;
    *mdoc = dump_array(ma);
    *modoc = dump_array(mo);
    if (complete && *mdoc && *modoc)
        return 0;
    free(*mdoc);
    free(*modoc);
    *mdoc = *modoc = NULL;
    return -1;
}

int store_model_set_begin(PGconn *c, int64_t exp, int64_t job, int64_t *set_id, int *number,
                          store_error *err)
{
    char exptext[24], jobtext[24];
    snprintf(exptext, sizeof exptext, "%" PRId64, exp);
    snprintf(jobtext, sizeof jobtext, "%" PRId64, job);
    return insert_set(c, exptext, jobtext, set_id, number, err);
}

int store_model_set_append(PGconn *c, int64_t set_id, int nparams, const store_measurement *m,
                           size_t nm, const store_model *models, size_t nmodels,
                           store_error *err)
{
    if (nm == 0 && nmodels == 0)
        return STORE_OK;
    if (set_id == 0)
        return store_model_copy_staged(c, nparams, m, nm, models, nmodels, err);
    char *mdoc, *modoc;
    if (encode_set(nparams, m, nm, models, nmodels, &mdoc, &modoc) < 0)
        return store_error_set(err, STORE_INTERNAL, "cannot encode the model set");
    char settext[24];
    snprintf(settext, sizeof settext, "%" PRId64, set_id);
    int rc = STORE_OK;
    if (nm)
        rc = insert_json_rows(
            c,
            "INSERT INTO measurements (model_set_id, point, level, name, category, "
                     "metric, phase, value, repetitions, rank_values, rank_ids, lif_reps, "
                     "levels) " MEASUREMENT_ROWS,
            settext, mdoc, err);
    if (!rc && nmodels)
        rc = insert_json_rows(
            c,
            "INSERT INTO models (model_set_id, level, name, category, metric, phase, "
                     "function, model, growth_poly, growth_log, points, reason, levels) " MODEL_ROWS,
            settext, modoc, err);
    free(mdoc);
    free(modoc);
    return rc;
}

int store_model_set_commit(PGconn *c, int64_t exp, store_error *err)
{
    /* heard by every server once committed: their cached models are old */
    int rc = store_notify_cache(c, "models", exp, err);
    if (!rc)
        rc = exec_ok(c, "COMMIT", err);
    if (rc)
        rollback(c);
    return rc;
}

/* Columns moved from the staging tables into a set. */
#define MEASUREMENT_COLUMNS                                                                      \
    "point, level, name, category, metric, phase, value, repetitions, rank_values, rank_ids, "   \
    "lif_reps, levels"
#define MODEL_COLUMNS                                                                            \
    "level, name, category, metric, phase, function, model, growth_poly, growth_log, points, "   \
    "reason, levels"

/* The staging tables live as long as the connection (emptied at every
 * transaction's end), so a refit after the first on a connection changes
 * no catalog. */
int store_model_set_stage(PGconn *c, store_error *err)
{
    PGresult *r = PQexec(c, "SELECT to_regclass('pg_temp.perfcast_stage_models') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int exists = !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    if (exists)
        return STORE_OK;
    static const char *const ddl[] = {
        "CREATE TEMP TABLE perfcast_stage_measurements (seq bigserial, LIKE measurements) "
        "ON COMMIT DELETE ROWS",
        "ALTER TABLE perfcast_stage_measurements ALTER model_set_id DROP NOT NULL",
        "CREATE TEMP TABLE perfcast_stage_models (seq bigserial, LIKE models) "
        "ON COMMIT DELETE ROWS",
        "ALTER TABLE perfcast_stage_models ALTER model_set_id DROP NOT NULL",
    };
    int rc = STORE_OK;
    for (size_t i = 0; i < sizeof ddl / sizeof *ddl && !rc; i++)
        rc = exec_ok(c, ddl[i], err);
    return rc;
}

/* Locks job (when > 0) against deletion until COMMIT: the experiment, whose
 * deletion takes its jobs, stays too. Gone -> STORE_NOT_FOUND, field "job". */
static int hold_job(PGconn *c, int64_t job, store_error *err)
{
    if (job <= 0)
        return STORE_OK;
    char jobtext[24];
    snprintf(jobtext, sizeof jobtext, "%" PRId64, job);
    const char *vals[] = {jobtext};
    PGresult *r = PQexecParams(c, "SELECT 1 FROM jobs WHERE id = $1 FOR KEY SHARE", 1, NULL, vals,
                               NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int n = PQntuples(r);
    PQclear(r);
    if (n == 1)
        return STORE_OK;
    int rc = store_error_set(err, STORE_NOT_FOUND, "job %s is gone (its experiment deleted?)",
                             jobtext);
    if (err)
        snprintf(err->field, sizeof err->field, "job");
    return rc;
}

static int move_rows(PGconn *c, const char *sql, const char *set, store_error *err)
{
    const char *vals[] = {set};
    PGresult *r = PQexecParams(c, sql, 1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return store_fail(c, r, err);
    PQclear(r);
    return STORE_OK;
}

int store_model_set_publish(PGconn *c, int64_t exp, int64_t job, const store_job_claim *claim,
                            const char *worker, int64_t *set_id, int *number, store_error *err)
{
    int rc = hold_job(c, job, err);
    if (!rc)
        rc = store_model_set_begin(c, exp, job, set_id, number, err);
    char settext[24];
    snprintf(settext, sizeof settext, "%" PRId64, *set_id);
    if (!rc)
        rc = move_rows(c,
                       "INSERT INTO measurements (model_set_id, " MEASUREMENT_COLUMNS ") "
                       "SELECT $1, " MEASUREMENT_COLUMNS " FROM perfcast_stage_measurements "
                       "ORDER BY seq",
                       settext, err);
    if (!rc)
        rc = move_rows(c,
                       "INSERT INTO models (model_set_id, " MODEL_COLUMNS ") "
                       "SELECT $1, " MODEL_COLUMNS " FROM perfcast_stage_models ORDER BY seq",
                       settext, err);
    /* the job is done when its set commits: no moment with one and not the
     * other, and a worker that lost its claim writes no set */
    if (!rc && claim && store_job_done(c, claim, worker, *set_id, err)) {
        rc = err ? err->code : STORE_CONFLICT;
        if (err)
            snprintf(err->field, sizeof err->field, "job");
    }
    if (!rc)
        return store_model_set_commit(c, exp, err);
    rollback(c);
    return rc;
}

int store_model_set_write(PGconn *c, int64_t exp, int64_t job, int nparams,
                          const store_measurement *m, size_t nm, const store_model *models,
                          size_t nmodels, int64_t *set_id, int *number, store_error *err)
{
    int rc = exec_ok(c, "BEGIN", err);
    if (!rc)
        rc = store_model_set_begin(c, exp, job, set_id, number, err);
    if (!rc)
        rc = store_model_set_append(c, *set_id, nparams, m, nm, models, nmodels, err);
    if (!rc)
        return store_model_set_commit(c, exp, err);
    rollback(c);
    return rc;
}

/* ---- reads -------------------------------------------------------------------- */

int store_model_set_of(PGconn *c, int64_t set_id, int64_t exp, int *number, store_error *err)
{
    char settext[24], exptext[24];
    snprintf(settext, sizeof settext, "%" PRId64, set_id);
    snprintf(exptext, sizeof exptext, "%" PRId64, exp);
    const char *vals[] = {settext, exptext};
    PGresult *r = PQexecParams(c, "SELECT number FROM model_sets WHERE id = $1 AND experiment_id = $2",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int found = PQntuples(r) == 1;
    if (found && number)
        *number = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return found ? STORE_OK
                 : store_error_set(err, STORE_NOT_FOUND, "model set %" PRId64
                                   " is not experiment %" PRId64 "'s", set_id, exp);
}

int store_model_set_latest(PGconn *c, int64_t exp, int64_t *set_id, int *number, char *created_at,
                           size_t created_cap, store_error *err)
{
    char idtext[24];
    snprintf(idtext, sizeof idtext, "%" PRId64, exp);
    const char *vals[] = {idtext};
    PGresult *r = PQexecParams(c,
                               "SELECT id, number, to_char(created_at AT TIME ZONE 'UTC', "
                               "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') FROM model_sets "
                               "WHERE experiment_id = $1 ORDER BY number DESC LIMIT 1",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    if (PQntuples(r) != 1) {
        PQclear(r);
        return store_error_set(err, STORE_NOT_FOUND, "experiment %" PRId64 " has no models yet",
                               exp);
    }
    *set_id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    *number = atoi(PQgetvalue(r, 0, 1));
    if (created_at)
        snprintf(created_at, created_cap, "%s", PQgetvalue(r, 0, 2));
    PQclear(r);
    return STORE_OK;
}

/* Parameters $1..$9 shared by both reads: set, metric, level, category,
 * phase, name, offset, limit, levels. */
static void filter_values(const store_model_filter *f, char *set, char *off, char *lim,
                          const char **vals)
{
    snprintf(off, 24, "%ld", f->offset);
    snprintf(lim, 24, "%d", f->limit);
    vals[0] = set;
    vals[1] = f->metric;
    vals[2] = f->level;
    vals[3] = f->category;
    vals[4] = f->phase;
    vals[5] = f->name;
    vals[6] = off;
    vals[7] = lim;
    vals[8] = f->levels;
}

#define FILTER_SQL                                                                   \
    " WHERE model_set_id = $1 AND ($2::text IS NULL OR metric = $2) "                \
    "AND ($3::text IS NULL OR level = $3) AND ($4::text IS NULL OR category = $4) "  \
    "AND ($5::text IS NULL OR phase = $5) AND ($6::text IS NULL OR name = $6) "     \
    "AND ($9::text[] IS NULL OR levels = $9::text[]) "

int store_models_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                      store_model_row **out, int *n, store_error *err)
{
    char set[24], off[24], lim[24];
    snprintf(set, sizeof set, "%" PRId64, set_id);
    const char *vals[9];
    filter_values(f, set, off, lim, vals);
    const char *sql =
        f->by_growth
            ? "SELECT level, name, category, metric, phase, function, model::text, reason, "
              "growth_poly, growth_log, points FROM models" FILTER_SQL
              "ORDER BY function IS NULL, growth_poly DESC NULLS LAST, growth_log DESC NULLS "
              "LAST, level, name, metric, phase OFFSET $7 LIMIT $8"
            : "SELECT level, name, category, metric, phase, function, model::text, reason, "
              "growth_poly, growth_log, points FROM models" FILTER_SQL
              "ORDER BY level DESC, name, metric, phase OFFSET $7 LIMIT $8";
    PGresult *r = PQexecParams(c, sql, 9, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    store_model_row *v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    if (!v) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++) {
        v[i].level = dup_or_null(r, i, 0);
        v[i].name = dup_or_null(r, i, 1);
        v[i].category = dup_or_null(r, i, 2);
        v[i].metric = dup_or_null(r, i, 3);
        v[i].phase = dup_or_null(r, i, 4);
        v[i].function = dup_or_null(r, i, 5);
        v[i].model_json = dup_or_null(r, i, 6);
        v[i].reason = dup_or_null(r, i, 7);
        v[i].growth_poly = PQgetisnull(r, i, 8) ? 0 : strtod(PQgetvalue(r, i, 8), NULL);
        v[i].growth_log = PQgetisnull(r, i, 9) ? 0 : strtod(PQgetvalue(r, i, 9), NULL);
        v[i].points = atoi(PQgetvalue(r, i, 10));
    }
    PQclear(r);
    *out = v;
    *n = rows;
    return STORE_OK;
}

void store_model_rows_free(store_model_row *v, int n)
{
    for (int i = 0; v && i < n; i++) {
        free(v[i].level);
        free(v[i].name);
        free(v[i].category);
        free(v[i].metric);
        free(v[i].phase);
        free(v[i].function);
        free(v[i].model_json);
        free(v[i].reason);
    }
    free(v);
}

int store_measurements_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                            store_measurement_row **out, int *n, store_error *err)
{
    char set[24], off[24], lim[24];
    snprintf(set, sizeof set, "%" PRId64, set_id);
    const char *vals[9];
    filter_values(f, set, off, lim, vals);
    PGresult *r = PQexecParams(
        c,
        "SELECT point::text, level, name, category, metric, phase, value, repetitions::text, "
        "rank_values::text, rank_ids::text, lif_reps::text FROM measurements" FILTER_SQL
        /* measurements.point, the array: a bare "point" would be the text
         * output column and sort 10 before 2 */
        "ORDER BY level DESC, name, metric, phase, measurements.point OFFSET $7 LIMIT $8",
        9, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    store_measurement_row *v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    int rc = v ? STORE_OK : store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < rows && rc == STORE_OK; i++) {
        store_measurement_row *m = &v[i];
        m->nparams = parse_double_array(PQgetvalue(r, i, 0), &m->point);
        m->level = dup_or_null(r, i, 1);
        m->name = dup_or_null(r, i, 2);
        m->category = dup_or_null(r, i, 3);
        m->metric = dup_or_null(r, i, 4);
        m->phase = dup_or_null(r, i, 5);
        m->value = strtod(PQgetvalue(r, i, 6), NULL);
        m->nreps = parse_double_array(PQgetvalue(r, i, 7), &m->reps);
        m->nranks = parse_double_array(PQgetvalue(r, i, 8), &m->ranks);
        int nids = parse_int_array(PQgetvalue(r, i, 9), &m->rank_ids);
        if (!PQgetisnull(r, i, 10))
            m->nlif = parse_double_array(PQgetvalue(r, i, 10), &m->lif_reps);
        if (m->nparams < 0 || m->nreps < 0 || m->nranks < 0 || nids != m->nranks || m->nlif < 0)
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

void store_measurement_rows_free(store_measurement_row *v, int n)
{
    if (v && n > 0 && v[0].slab) { /* one block for every field */
        free(v[0].slab);
        free(v);
        return;
    }
    for (int i = 0; v && i < n; i++) {
        free(v[i].point);
        free(v[i].level);
        free(v[i].name);
        free(v[i].category);
        free(v[i].metric);
        free(v[i].phase);
        free(v[i].reps);
        free(v[i].ranks);
        free(v[i].rank_ids);
        free(v[i].lif_reps);
        free(v[i].levels);
    }
    free(v);
}
