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
        int metric = store_fit_data_metric(&s->d, PQgetvalue(r, i, COL_METRIC));
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

/* ---- an experiment read whole, unsorted ------------------------------------ */

static const char whole_sql[] =
    "DECLARE perfcast_refit_whole NO SCROLL CURSOR FOR "
    "SELECT 0, p.id, dense_rank() OVER (ORDER BY p.evaluation, p.levels, p.point), "
    "CASE WHEN p.evaluation THEN 't' ELSE 'f' END, p.levels::text, p.point::text, p.repetition, "
    "NULL::int, NULL::smallint, NULL::int, NULL::bigint, NULL::text, NULL::float8 "
    "FROM profiles p WHERE " PROFILE_FILTER " "
    "UNION ALL "
    "SELECT 1, r.profile_id, NULL, NULL, NULL, NULL, NULL, r.rank, r.phase, r.step, "
    "r.callpath_id, r.metric, r.value "
    "FROM profile_rows r JOIN profiles p ON p.id = r.profile_id WHERE " PROFILE_FILTER " "
    "AND r.profile_id <> ALL ($3::bigint[])";

enum { W_KIND, W_PID, W_ORD, W_EV, W_LEVELS, W_POINT, W_REP, W_RANK, W_PHASE, W_STEP, W_CP,
       W_METRIC, W_VALUE };

/* A profile met in the whole pass: its point key (from its kind-0 row) and
 * whether rows name it. */
typedef struct whole_profile {
    int64_t id;
    int cached;        /* its rows come from the cache */
    long ord;          /* rank of (evaluation, levels, point); 0 until its row came */
    char ev;
    char *levels, *point;
    int repetition;
    size_t rows;
    int index;         /* its point's index */
} whole_profile;

typedef struct whole_read {
    whole_profile *p;
    size_t np, cap, last;
    store_fit_row *rows;
    size_t nrows, rows_cap;
} whole_read;

static void whole_read_free(whole_read *w)
{
    for (size_t i = 0; i < w->np; i++) {
        free(w->p[i].levels);
        free(w->p[i].point);
    }
    free(w->p);
    free(w->rows);
    memset(w, 0, sizeof *w);
}

/* The profile id's entry (appended when new); -1 when out of memory. Rows
 * of one profile mostly come together: the last one found is tried first. */
static long whole_profile_of(whole_read *w, int64_t id)
{
    if (w->last < w->np && w->p[w->last].id == id)
        return (long)w->last;
    for (size_t i = 0; i < w->np; i++)
        if (w->p[i].id == id)
            return (long)(w->last = i);
    if (w->np == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 64;
        whole_profile *v = realloc(w->p, sizeof *v * cap);
        if (!v)
            return -1;
        w->p = v;
        w->cap = cap;
    }
    w->p[w->np] = (whole_profile){.id = id};
    return (long)(w->last = w->np++);
}

/* ---- rows kept across opens (store_fit_cache) ------------------------------ */

void store_fit_cache_free(store_fit_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->nmetrics; i++)
        free(c->metrics[i]);
    free(c->metrics);
    free(c->ids);
    free(c->rows);
    memset(c, 0, sizeof *c);
}

static int cache_has(const store_fit_cache *c, int64_t id)
{
    for (size_t i = 0; c && i < c->nids; i++)
        if (c->ids[i] == id)
            return 1;
    return 0;
}

static int cache_metric(store_fit_cache *c, const char *name)
{
    for (int i = 0; i < c->nmetrics; i++)
        if (!strcmp(c->metrics[i], name))
            return i;
    char **m = realloc(c->metrics, sizeof(char *) * (size_t)(c->nmetrics + 1));
    if (!m)
        return -1;
    c->metrics = m;
    if (!(m[c->nmetrics] = strdup(name)))
        return -1;
    return c->nmetrics++;
}

static int cache_add_row(store_fit_cache *c, const store_fit_cached_row *row)
{
    if (c->nrows == c->rows_cap) {
        size_t cap = c->rows_cap ? c->rows_cap * 2 : 4096;
        store_fit_cached_row *v = realloc(c->rows, sizeof *v * cap);
        if (!v)
            return -1;
        c->rows = v;
        c->rows_cap = cap;
    }
    c->rows[c->nrows++] = *row;
    return 0;
}

/* "{id,id,...}" of the cached profiles (malloc'ed), or NULL. */
static char *cache_ids_text(const store_fit_cache *c)
{
    size_t n = c ? c->nids : 0;
    char *t = malloc(n * 21 + 3);
    if (!t)
        return NULL;
    size_t k = 0;
    t[k++] = '{';
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(t + k, 22, "%s%" PRId64, i ? "," : "", c->ids[i]);
    t[k++] = '}';
    t[k] = '\0';
    return t;
}

/* The entry of profile id in w, or -1 (without adding one). */
static long whole_profile_find(whole_read *w, int64_t id)
{
    if (w->last < w->np && w->p[w->last].id == id)
        return (long)w->last;
    for (size_t i = 0; i < w->np; i++)
        if (w->p[i].id == id)
            return (long)(w->last = i);
    return -1;
}

/* The cached rows of profiles rows[0..upto) of the cache that the new
 * snapshot still has, into w. */
static int whole_add_cached(store_fit_stream *s, whole_read *w, const store_fit_cache *c,
                            size_t upto, store_error *err)
{
    for (size_t i = 0; i < upto; i++) {
        const store_fit_cached_row *cr = &c->rows[i];
        long k = whole_profile_find(w, cr->profile_id);
        if (k < 0)
            continue; /* gone since (deleted) */
        if (w->nrows == w->rows_cap) {
            size_t cap = w->rows_cap ? w->rows_cap * 2 : 4096;
            store_fit_row *v = realloc(w->rows, sizeof *v * cap);
            if (!v)
                return store_error_set(err, STORE_INTERNAL, "out of memory");
            w->rows = v;
            w->rows_cap = cap;
        }
        int callpath = callpath_index(s, cr->callpath_id);
        int metric = store_fit_data_metric(&s->d, c->metrics[cr->metric]);
        if (callpath < 0 || metric < 0)
            return store_error_set(err, STORE_INTERNAL, "inconsistent profile rows");
        w->rows[w->nrows++] = (store_fit_row){(int)k, 0, cr->rank, cr->phase, cr->step,
                                              callpath, metric, cr->value};
        w->p[k].rows++;
    }
    return STORE_OK;
}

/* One fetched row into w (and into the cache, when there is one). */
static int whole_row(store_fit_stream *s, whole_read *w, PGresult *r, int i,
                     store_fit_cache *cache, store_error *err)
{
    long k = whole_profile_of(w, strtoll(PQgetvalue(r, i, W_PID), NULL, 10));
    if (k < 0)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    whole_profile *p = &w->p[k];
    if (PQgetvalue(r, i, W_KIND)[0] == '0') {
        p->ord = strtol(PQgetvalue(r, i, W_ORD), NULL, 10);
        p->ev = PQgetvalue(r, i, W_EV)[0];
        p->repetition = atoi(PQgetvalue(r, i, W_REP));
        p->levels = strdup(PQgetvalue(r, i, W_LEVELS));
        p->point = strdup(PQgetvalue(r, i, W_POINT));
        return p->levels && p->point ? STORE_OK
                                     : store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    if (w->nrows == w->rows_cap) {
        size_t cap = w->rows_cap ? w->rows_cap * 2 : 4096;
        store_fit_row *v = realloc(w->rows, sizeof *v * cap);
        if (!v)
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        w->rows = v;
        w->rows_cap = cap;
    }
    int64_t cp = strtoll(PQgetvalue(r, i, W_CP), NULL, 10);
    int callpath = callpath_index(s, cp);
    int metric = store_fit_data_metric(&s->d, PQgetvalue(r, i, W_METRIC));
    if (callpath < 0 || metric < 0)
        return store_error_set(err, STORE_INTERNAL, "inconsistent profile rows");
    store_fit_row *row = &w->rows[w->nrows++];
    row->point = (int)k; /* the profile's entry until points are known */
    row->repetition = 0;
    row->rank = atoi(PQgetvalue(r, i, W_RANK));
    row->phase = atoi(PQgetvalue(r, i, W_PHASE));
    row->step = atoi(PQgetvalue(r, i, W_STEP));
    row->callpath = callpath;
    row->metric = metric;
    const char *v = PQgetvalue(r, i, W_VALUE);
    if (!numtext_parse(v, strlen(v), &row->value))
        row->value = strtod(v, NULL);
    p->rows++;
    if (cache) {
        int cm = cache_metric(cache, s->d.metrics[metric]);
        store_fit_cached_row cr = {p->id, cp, row->rank, row->phase, row->step, cm, row->value};
        if (cm < 0 || cache_add_row(cache, &cr) < 0)
            return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    return STORE_OK;
}

static int cmp_ord(const void *a, const void *b)
{
    const whole_profile *x = *(const whole_profile *const *)a, *y = *(const whole_profile *const *)b;
    return (x->ord > y->ord) - (x->ord < y->ord);
}

static int cmp_frame(const void *a, const void *b)
{
    const store_fit_row *x = a, *y = b;
    int f[4][2] = {{x->point, y->point}, {x->repetition, y->repetition}, {x->rank, y->rank},
                   {x->phase, y->phase}};
    for (int k = 0; k < 4; k++)
        if (f[k][0] != f[k][1])
            return (f[k][0] > f[k][1]) - (f[k][0] < f[k][1]);
    return (x->step > y->step) - (x->step < y->step);
}

/* Points (in the order of their rank), rows' points and repetitions, the
 * frame, and the rows placed by callpath into s->all. */
static int whole_finish(store_fit_stream *s, whole_read *w, store_error *err)
{
    whole_profile **by = malloc(sizeof *by * (w->np ? w->np : 1));
    if (!by)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < w->np; i++) {
        if (!w->p[i].rows)
            continue; /* a profile without rows is no point */
        if (!w->p[i].ord || !w->p[i].point) {
            free(by);
            return store_error_set(err, STORE_INTERNAL, "rows of an unknown profile");
        }
        by[n++] = &w->p[i];
    }
    qsort(by, n, sizeof *by, cmp_ord);
    int rc = STORE_OK;
    for (size_t i = 0; i < n && !rc; i++) {
        if (i == 0 || by[i]->ord != by[i - 1]->ord) {
            char key[2] = {by[i]->ev, 0};
            rc = add_point(s, key, by[i]->levels, by[i]->point, err);
        }
        by[i]->index = s->d.npoints - 1;
    }
    free(by);
    if (rc)
        return rc;
    /* the frame: the distinct (point, repetition, rank, phase, step); rows of
     * one step of one rank come together, so runs are skipped first */
    s->frame = malloc(sizeof *s->frame * (w->nrows ? w->nrows : 1));
    if (!s->frame)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    size_t *count = calloc((size_t)s->d.ncallpaths + 1, sizeof *count);
    if (!count)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    for (size_t i = 0; i < w->nrows; i++) {
        store_fit_row *row = &w->rows[i];
        const whole_profile *p = &w->p[row->point];
        row->point = p->index;
        row->repetition = p->repetition;
        count[row->callpath + 1]++;
        store_fit_row f = {row->point, row->repetition, row->rank, row->phase, row->step, -1, -1, 0};
        if (!s->nframe || cmp_frame(&s->frame[s->nframe - 1], &f))
            s->frame[s->nframe++] = f;
    }
    qsort(s->frame, s->nframe, sizeof *s->frame, cmp_frame);
    size_t k = 0;
    for (size_t i = 0; i < s->nframe; i++)
        if (!k || cmp_frame(&s->frame[k - 1], &s->frame[i]))
            s->frame[k++] = s->frame[i];
    s->nframe = k;
    /* by callpath (its index follows its id): a counting sort */
    for (int c = 0; c < s->d.ncallpaths; c++)
        count[c + 1] += count[c];
    s->all = malloc(sizeof *s->all * (w->nrows ? w->nrows : 1));
    s->cp_at = malloc(sizeof *s->cp_at * ((size_t)s->d.ncallpaths + 1));
    if (!s->all || !s->cp_at) {
        free(count);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    memcpy(s->cp_at, count, sizeof *count * ((size_t)s->d.ncallpaths + 1));
    for (size_t i = 0; i < w->nrows; i++)
        s->all[count[w->rows[i].callpath]++] = w->rows[i];
    free(count);
    s->whole = 1;
    return STORE_OK;
}

static void callpaths_free(store_fit_stream *s)
{
    for (int i = 0; i < s->d.ncallpaths; i++)
        free(s->d.callpaths[i]);
    free(s->d.callpaths);
    free(s->d.categories);
    free(s->callpath_ids);
    s->d.callpaths = NULL;
    s->d.categories = NULL;
    s->callpath_ids = NULL;
    s->d.ncallpaths = 0;
}

/* Tries the whole pass: 1 read (s->whole), 0 more than whole_rows rows
 * (nothing kept, the cursor closed), or an error code (negated). */
static int read_whole(store_fit_stream *s, const char *const *vals, const char *exptext,
                      size_t whole_rows, store_fit_cache *cache, store_error *err)
{
    char *ids = cache_ids_text(cache);
    if (!ids)
        return -store_error_set(err, STORE_INTERNAL, "out of memory");
    const char *vals3[] = {vals[0], vals[1], ids};
    PGresult *r = PQexecParams(s->c, whole_sql, 3, NULL, vals3, NULL, NULL, 0);
    free(ids);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK)
                                                    : store_fail(s->c, r, err);
    if (!rc) /* after the cursor's snapshot: every callpath its rows name */
        rc = read_callpaths(s, exptext, err);
    /* the metrics in the order the first pass met them */
    for (int i = 0; !rc && cache && i < cache->nmetrics; i++)
        if (store_fit_data_metric(&s->d, cache->metrics[i]) < 0)
            rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    size_t mark = cache ? cache->nrows : 0; /* rows of this pass start here */
    whole_read w = {0};
    int done = 0, rows = 0;
    while (!rc && !done) {
        r = PQexec(s->c, "FETCH FORWARD 20000 FROM perfcast_refit_whole");
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            rc = store_fail(s->c, r, err);
            break;
        }
        int n = PQntuples(r);
        for (int i = 0; i < n && !rc; i++)
            rc = whole_row(s, &w, r, i, cache, err);
        PQclear(r);
        rows += n;
        done = n < FETCH_ROWS;
        if (w.nrows > whole_rows) {
            done = 0;
            break;
        }
    }
    /* the profiles read before: their rows from the cache */
    for (size_t i = 0; !rc && done && cache && i < w.np; i++)
        w.p[i].cached = cache_has(cache, w.p[i].id);
    if (!rc && done && cache)
        rc = whole_add_cached(s, &w, cache, mark, err);
    if (!rc && done)
        rc = whole_finish(s, &w, err);
    /* the profiles this pass read completely join the cache */
    for (size_t i = 0; !rc && done && cache && i < w.np; i++) {
        if (w.p[i].cached)
            continue;
        if (cache->nids == cache->ids_cap) {
            size_t cap = cache->ids_cap ? cache->ids_cap * 2 : 64;
            int64_t *v = realloc(cache->ids, sizeof *v * cap);
            if (!v) {
                rc = store_error_set(err, STORE_INTERNAL, "out of memory");
                break;
            }
            cache->ids = v;
            cache->ids_cap = cap;
        }
        cache->ids[cache->nids++] = w.p[i].id;
    }
    if (cache && (rc || !done))
        cache->nrows = mark; /* an incomplete pass's rows are not kept */
    whole_read_free(&w);
    (void)rows;
    if (rc)
        return -rc;
    if (done)
        return 1;
    /* too big to hold: the database sorts it */
    r = PQexec(s->c, "CLOSE perfcast_refit_whole");
    rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(s->c, r, err);
    callpaths_free(s);
    for (int i = 0; i < s->d.nmetrics; i++)
        free(s->d.metrics[i]);
    free(s->d.metrics);
    s->d.metrics = NULL;
    s->d.nmetrics = 0;
    return rc ? -rc : 0;
}

int store_fit_stream_open(PGconn *c, int64_t exp, int64_t job, int nparams, size_t whole_rows,
                          store_fit_stream *s, store_error *err)
{
    return store_fit_stream_open_cached(c, exp, job, nparams, whole_rows, NULL, s, err);
}

int store_fit_stream_open_cached(PGconn *c, int64_t exp, int64_t job, int nparams,
                                 size_t whole_rows, store_fit_cache *cache, store_fit_stream *s,
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
    int whole = 0;
    if (!rc) {
        whole = read_whole(s, vals, exptext, whole_rows, cache, err);
        rc = whole < 0 ? -whole : STORE_OK;
    }
    if (!rc && !whole) {
        r = PQexecParams(c, declare_sql, 2, NULL, vals, NULL, NULL, 0);
        rc = PQresultStatus(r) == PGRES_COMMAND_OK ? (PQclear(r), STORE_OK) : store_fail(c, r, err);
    }
    if (!rc && !whole)
        rc = read_frame(s, err);
    if (!rc && !whole)
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
    int metric = store_fit_data_metric(&s->d, PQgetvalue(r, i, COL_METRIC));
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

/* The next callpath with rows from s->all. */
static int next_whole(store_fit_stream *s, store_error *err)
{
    while (s->next_cp < s->d.ncallpaths && s->cp_at[s->next_cp] == s->cp_at[s->next_cp + 1])
        s->next_cp++;
    if (s->next_cp >= s->d.ncallpaths)
        return 0;
    int c = s->next_cp++;
    size_t n = s->cp_at[c + 1] - s->cp_at[c];
    if (n > s->rows_cap) {
        store_fit_row *v = realloc(s->d.rows, sizeof *v * n);
        if (!v)
            return store_error_set(err, STORE_INTERNAL, "out of memory"), -1;
        s->d.rows = v;
        s->rows_cap = n;
    }
    memcpy(s->d.rows, s->all + s->cp_at[c], sizeof *s->d.rows * n);
    s->d.nrows = n;
    s->callpath = c;
    return 1;
}

int store_fit_stream_next(store_fit_stream *s, store_error *err)
{
    s->d.nrows = 0;
    if (s->whole)
        return next_whole(s, err);
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
    free(s->all);
    free(s->cp_at);
    store_fit_data_free(&s->d);
    memset(s, 0, sizeof *s);
}
