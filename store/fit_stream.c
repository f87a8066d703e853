/*
 * fit_stream.c — a refit's input, one callpath at a time (see fit_stream.h).
 *
 * The cursor's statement is a UNION ALL of two parts over the same rows,
 * sorted as one:
 *   kind 0: the frame, GROUP BY profile, rank, phase, step, metric, with the
 *           profile's point key; ordered by the rank of (evaluation, levels,
 *           point) so that points get their indices in the order
 *           store_fit_data_load() gives them;
 *   kind 1: the rows, ordered by callpath id alone (the refit places a
 *           callpath's rows by point itself): the sort of all rows, the
 *           costliest step of a refit in the database, compares small keys.
 * Both parts are one statement and see one snapshot: an upload committing
 * meanwhile is either wholly in the frame and the rows or in neither.
 * Callpaths are read after the cursor is declared, so every callpath its
 * rows name is among them.
 */
#include "store/fit_stream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"

#define FETCH_ROWS 20000
#define FIT_WORK_MEM "128MB"
#define FETCH_SQL "FETCH FORWARD 20000 FROM perfcast_refit" /* FETCH_ROWS */

enum { COL_KIND, COL_PID, COL_KEY, COL_LEVELS, COL_POINT, COL_REP, COL_RANK, COL_PHASE,
       COL_STEP, COL_CALLPATH, COL_METRIC, COL_VALUE };

#define PROFILE_FILTER                                                                           \
    "p.experiment_id = $1 AND ($2::bigint = 0 OR p.commit_sha IS NOT DISTINCT FROM "             \
    "(SELECT commit_sha FROM jobs WHERE id = $2::bigint))"

static const char declare_sql[] =
    "DECLARE perfcast_refit NO SCROLL CURSOR FOR "
    "SELECT kind, pid, key, levels, point, repetition, rank, phase, step, callpath_id, metric, "
    "value FROM ("
    "SELECT 0 AS kind, dense_rank() OVER (ORDER BY p.evaluation, p.levels, p.point) AS ord, "
    "p.id AS pid, CASE WHEN p.evaluation THEN 't' ELSE 'f' END || "
    "p.levels::text || '|' || p.point::text AS key, p.levels::text AS levels, "
    "p.point::text AS point, p.repetition, r.rank, r.phase, r.step, NULL::bigint AS callpath_id, "
    "r.metric, NULL::float8 AS value "
    "FROM profile_rows r JOIN profiles p ON p.id = r.profile_id WHERE " PROFILE_FILTER " "
    "GROUP BY p.id, r.rank, r.phase, r.step, r.metric "
    "UNION ALL "
    "SELECT 1, NULL, r.profile_id, NULL, NULL, NULL, NULL, r.rank, r.phase, r.step, "
    "r.callpath_id, r.metric, r.value "
    "FROM profile_rows r JOIN profiles p ON p.id = r.profile_id WHERE " PROFILE_FILTER
    ") u ORDER BY kind, ord, callpath_id";

static int category_index(const char *name)
{
    static const char *const names[] = {"comp", "comm", "mem", "host"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(names[i], name))
            return i;
    return 3;
}

/* "{1.5,2}" -> exactly n values into v; -1 when it is not that. */
static int parse_point(const char *text, double *v, int n)
{
    const char *p = text;
    int k = 0;
    if (*p == '{')
        p++;
    while (*p && *p != '}') {
        if (k == n)
            return -1;
        size_t used = numtext_parse(p, strlen(p), &v[k]);
        if (!used)
            return -1;
        k++;
        p += used;
        if (*p == ',')
            p++;
    }
    return k == n ? 0 : -1;
}

static int metric_index(store_fit_data *d, const char *name)
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

/* A new point (key differs from the last one): appended to s->d. */
static int add_point(store_fit_stream *s, const char *key, const char *levels, const char *text,
                     store_error *err)
{
    store_fit_data *d = &s->d;
    size_t np = (size_t)d->npoints + 1;
    unsigned char *ev = realloc(d->evaluation, np);
    if (ev)
        d->evaluation = ev;
    char **lv = ev ? realloc(d->levels, sizeof(char *) * np) : NULL;
    if (lv)
        d->levels = lv;
    double *pts = lv ? realloc(d->points, sizeof(double) * np * (size_t)(d->nparams ? d->nparams : 1))
                     : NULL;
    if (pts)
        d->points = pts;
    char *lcopy = pts ? strdup(levels) : NULL;
    if (!lcopy)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    if (parse_point(text, d->points + (size_t)d->npoints * d->nparams, d->nparams) < 0) {
        free(lcopy);
        return store_error_set(err, STORE_INTERNAL, "stored point %s does not have %d values",
                               text, d->nparams);
    }
    d->evaluation[d->npoints] = key[0] == 't';
    d->levels[d->npoints++] = lcopy;
    return STORE_OK;
}

static int fetch(store_fit_stream *s, store_error *err)
{
    PQclear(s->batch);
    s->batch = NULL;
    s->at = s->nbatch = 0;
    if (s->exhausted)
        return STORE_OK;
    PGresult *r = PQexec(s->c, FETCH_SQL);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(s->c, r, err);
    s->batch = r;
    s->nbatch = PQntuples(r);
    s->exhausted = s->nbatch < FETCH_ROWS;
    return STORE_OK;
}

/* The current row of the cursor, fetching when the batch is used up; NULL
 * at the end (or on error: *rc set). */
static PGresult *current(store_fit_stream *s, int *rc, store_error *err)
{
    *rc = STORE_OK;
    if (s->batch && s->at < s->nbatch)
        return s->batch;
    if ((*rc = fetch(s, err)))
        return NULL;
    return s->nbatch > 0 ? s->batch : NULL;
}

static int cmp_profile(const void *a, const void *b)
{
    const store_fit_profile *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static const store_fit_profile *profile_of(const store_fit_stream *s, int64_t id)
{
    store_fit_profile key = {.id = id};
    return bsearch(&key, s->profiles, s->nprofiles, sizeof key, cmp_profile);
}

/* The frame rows (kind 0), up to the first row of kind 1. */
static int read_frame(store_fit_stream *s, store_error *err)
{
    size_t cap = 0;
    char *last_key = NULL;
    int rc = STORE_OK;
    PGresult *r;
    while ((r = current(s, &rc, err)) && !strcmp(PQgetvalue(r, s->at, COL_KIND), "0")) {
        int i = s->at++;
        const char *key = PQgetvalue(r, i, COL_KEY);
        if (!last_key || strcmp(last_key, key)) {
            free(last_key);
            last_key = strdup(key);
            if (!last_key || (rc = add_point(s, key, PQgetvalue(r, i, COL_LEVELS),
                                             PQgetvalue(r, i, COL_POINT), err)))
                break;
        }
        int64_t pid = strtoll(PQgetvalue(r, i, COL_PID), NULL, 10);
        int rep = atoi(PQgetvalue(r, i, COL_REP));
        if (!s->nprofiles || s->profiles[s->nprofiles - 1].id != pid) {
            store_fit_profile *v = realloc(s->profiles, sizeof *v * (s->nprofiles + 1));
            if (!v) {
                rc = store_error_set(err, STORE_INTERNAL, "out of memory");
                break;
            }
            s->profiles = v;
            v[s->nprofiles++] = (store_fit_profile){pid, s->d.npoints - 1, rep};
        }
        if (s->nframe == cap) {
            cap = cap ? cap * 2 : 1024;
            store_fit_row *f = realloc(s->frame, sizeof *f * cap);
            if (!f) {
                rc = store_error_set(err, STORE_INTERNAL, "out of memory");
                break;
            }
            s->frame = f;
        }
        int metric = metric_index(&s->d, PQgetvalue(r, i, COL_METRIC));
        if (metric < 0) {
            rc = store_error_set(err, STORE_INTERNAL, "out of memory");
            break;
        }
        s->frame[s->nframe++] = (store_fit_row){s->d.npoints - 1, rep,
                                                atoi(PQgetvalue(r, i, COL_RANK)),
                                                atoi(PQgetvalue(r, i, COL_PHASE)),
                                                atoi(PQgetvalue(r, i, COL_STEP)), -1, metric, 0};
    }
    free(last_key);
    if (!rc && s->nprofiles) { /* a profile's frame rows may come in several runs */
        qsort(s->profiles, s->nprofiles, sizeof *s->profiles, cmp_profile);
        size_t k = 1;
        for (size_t i = 1; i < s->nprofiles; i++)
            if (s->profiles[i].id != s->profiles[k - 1].id)
                s->profiles[k++] = s->profiles[i];
        s->nprofiles = k;
    }
    return rc;
}

/* The experiment's callpaths, ascending id. */
static int read_callpaths(store_fit_stream *s, const char *exp, store_error *err)
{
    const char *vals[] = {exp};
    PGresult *r = PQexecParams(s->c,
                               "SELECT id, name, category FROM callpaths WHERE experiment_id = $1 "
                               "ORDER BY id",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(s->c, r, err);
    int n = PQntuples(r);
    store_fit_data *d = &s->d;
    d->callpaths = calloc((size_t)(n ? n : 1), sizeof(char *));
    d->categories = calloc((size_t)(n ? n : 1), sizeof(int));
    s->callpath_ids = calloc((size_t)(n ? n : 1), sizeof(int64_t));
    int rc = d->callpaths && d->categories && s->callpath_ids
                 ? STORE_OK
                 : store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < n && !rc; i++) {
        s->callpath_ids[i] = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        d->callpaths[i] = strdup(PQgetvalue(r, i, 1));
        d->categories[i] = category_index(PQgetvalue(r, i, 2));
        d->ncallpaths = i + 1;
        if (!d->callpaths[i])
            rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    PQclear(r);
    return rc;
}

static int callpath_index(const store_fit_stream *s, int64_t id)
{
    int lo = 0, hi = s->d.ncallpaths - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (s->callpath_ids[mid] == id)
            return mid;
        if (s->callpath_ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int store_fit_stream_open(PGconn *c, int64_t exp, int64_t job, int nparams, store_fit_stream *s,
                          store_error *err)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->d.nparams = nparams;
    s->callpath = -1;
    char exptext[24], jobtext[24];
    snprintf(exptext, sizeof exptext, "%" PRId64, exp);
    /* job -1: the profiles without a commit; an unknown job likewise */
    snprintf(jobtext, sizeof jobtext, "%" PRId64, job > 0 ? job : -1);
    const char *vals[] = {exptext, jobtext};
    PGresult *r = PQexec(c, "BEGIN");
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    /* the cursor sorts the experiment's rows: in memory, not in temporary
     * files, up to this much (the database's memory, for this transaction) */
    if (!rc) {
        r = PQexec(c, "SET LOCAL work_mem = '" FIT_WORK_MEM "'");
        rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    }
    if (!rc) {
        r = PQexecParams(c, declare_sql, 2, NULL, vals, NULL, NULL, 0);
        rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    }
    if (!rc)
        rc = read_frame(s, err);
    if (!rc)
        rc = read_callpaths(s, exptext, err);
    if (rc) {
        store_fit_stream_abort(s);
        store_fit_stream_free(s);
    }
    return rc;
}

static int add_row(store_fit_stream *s, PGresult *r, int i, store_error *err)
{
    if (s->d.nrows == s->rows_cap) {
        size_t cap = s->rows_cap ? s->rows_cap * 2 : 1024;
        store_fit_row *v = realloc(s->d.rows, sizeof *v * cap);
        if (!v)
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        s->d.rows = v;
        s->rows_cap = cap;
    }
    const store_fit_profile *p = profile_of(s, strtoll(PQgetvalue(r, i, COL_PID), NULL, 10));
    int metric = metric_index(&s->d, PQgetvalue(r, i, COL_METRIC));
    if (!p || metric < 0)
        return store_error_set(err, STORE_INTERNAL, "inconsistent profile rows");
    store_fit_row *row = &s->d.rows[s->d.nrows++];
    row->point = p->point;
    row->repetition = p->repetition;
    row->rank = atoi(PQgetvalue(r, i, COL_RANK));
    row->phase = atoi(PQgetvalue(r, i, COL_PHASE));
    row->step = atoi(PQgetvalue(r, i, COL_STEP));
    row->callpath = s->callpath;
    row->metric = metric;
    const char *v = PQgetvalue(r, i, COL_VALUE);
    if (!numtext_parse(v, strlen(v), &row->value))
        row->value = strtod(v, NULL);
    return STORE_OK;
}

int store_fit_stream_next(store_fit_stream *s, store_error *err)
{
    s->d.nrows = 0;
    int rc;
    PGresult *r = current(s, &rc, err);
    if (!r)
        return rc ? -1 : 0;
    const char *first = PQgetvalue(r, s->at, COL_CALLPATH);
    int64_t id = strtoll(first, NULL, 10);
    s->callpath = callpath_index(s, id);
    if (s->callpath < 0) {
        store_error_set(err, STORE_INTERNAL, "rows of an unknown callpath %" PRId64, id);
        return -1;
    }
    while ((r = current(s, &rc, err)) &&
           strtoll(PQgetvalue(r, s->at, COL_CALLPATH), NULL, 10) == id) {
        if ((rc = add_row(s, r, s->at, err)))
            return -1;
        s->at++;
    }
    return rc ? -1 : 1;
}

void store_fit_stream_abort(store_fit_stream *s)
{
    if (!s->c)
        return;
    PGTransactionStatusType t = PQtransactionStatus(s->c);
    if (t == PQTRANS_INTRANS || t == PQTRANS_INERROR)
        PQclear(PQexec(s->c, "ROLLBACK"));
}

void store_fit_stream_free(store_fit_stream *s)
{
    PQclear(s->batch);
    free(s->frame);
    free(s->profiles);
    free(s->callpath_ids);
    store_fit_data_free(&s->d);
    memset(s, 0, sizeof *s);
}
