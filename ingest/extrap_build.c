/*
 * extrap_build.c — the experiment under construction, shared by all readers.
 *
 * A reader tells the builder what it meets: parameters, coordinates,
 * callpaths, metrics, the (callpath, metric) series, the points of a series
 * and the repetitions of a point. Everything is interned through hash tables
 * so that a file with 100,000 series costs linear time. Orders mirror Extra-P:
 * names and series in order of first appearance, points in the order they
 * were first seen within their series, coordinates either as declared (text,
 * legacy JSON) or by first use walking the series (JSON Lines, TaLPas).
 *
 * Repetitions are appended to one flat log (point, value); ingest_builder_finish
 * sorts them into per-series arrays with a counting pass, after the checks of
 * Extra-P's validate_experiment: parameters, coordinates, callpaths and
 * metrics present, and every series measured at every coordinate exactly once.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_internal.h"

/* Caps keeping every index and count within int. */
#define INGEST_MAX_ITEMS (INT_MAX / 2)

/* Writes "line N: " (when line-oriented) and the message into err. */
static int fail_v(ingest_error *err, long line, long offset, const char *fmt, va_list ap)
{
    size_t used = 0;
    err->line = line;
    err->offset = offset;
    err->msg[0] = '\0';
    if (line > 0) {
        int w = snprintf(err->msg, sizeof(err->msg), "line %ld: ", line);
        used = w > 0 ? (size_t)w : 0;
        if (used >= sizeof(err->msg))
            used = sizeof(err->msg) - 1;
    }
    vsnprintf(err->msg + used, sizeof(err->msg) - used, fmt, ap);
    return -1;
}

int ingest_fail_at(ingest_error *err, long line, long offset, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(err, line, offset, fmt, ap);
    va_end(ap);
    return -1;
}

int ingest_fail(ingest_builder *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fail_v(b->err, b->line, b->offset, fmt, ap);
    va_end(ap);
    return -1;
}

static int fail_oom(ingest_builder *b)
{
    return ingest_fail(b, "out of memory");
}

/* Returns ptr resized to hold at least need elements of size elem, updating
 * *cap; NULL when out of memory, ptr then still valid and unchanged. */
static void *grown(void *ptr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap && ptr)
        return ptr;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2 / elem)
            return NULL;
        n *= 2;
    }
    void *p = realloc(ptr, n * elem);
    if (p)
        *cap = n;
    return p;
}

/* ---- names ---------------------------------------------------------------- */

static void names_free(ingest_names *names)
{
    for (int i = 0; i < names->n; i++)
        free(names->name[i]);
    free(names->name);
    ingest_idtab_free(&names->index);
    memset(names, 0, sizeof(*names));
}

static int name_equals(const char *name, const char *s, size_t n)
{
    return strncmp(name, s, n) == 0 && name[n] == '\0';
}

static int names_lookup(const ingest_names *names, const char *s, size_t n, uint32_t h)
{
    ingest_probe p;
    for (int32_t id = ingest_idtab_first(&names->index, h, &p); id >= 0;
         id = ingest_idtab_next(&names->index, &p))
        if (name_equals(names->name[id], s, n))
            return id;
    return -1;
}

int ingest_names_find(const ingest_names *names, const char *s, size_t n)
{
    return names_lookup(names, s, n, ingest_hash_bytes(names->index.seed, s, n));
}

int ingest_names_intern(ingest_names *names, const char *s, size_t n, int *id, int *added)
{
    uint32_t h = ingest_hash_bytes(names->index.seed, s, n);
    int found = names_lookup(names, s, n, h);
    *added = found < 0;
    if (found >= 0) {
        *id = found;
        return 0;
    }
    if (names->n >= INGEST_MAX_ITEMS)
        return -1;
    char **list = grown(names->name, &names->cap, (size_t)names->n + 1, sizeof(char *));
    if (!list)
        return -1;
    names->name = list;
    char *copy = malloc(n + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, n);
    copy[n] = '\0';
    if (ingest_idtab_add(&names->index, h, names->n) < 0) {
        free(copy);
        return -1;
    }
    names->name[names->n] = copy;
    *id = names->n++;
    return 0;
}

/* ---- builder -------------------------------------------------------------- */

int ingest_builder_init(ingest_builder *b, ingest_error *err)
{
    memset(b, 0, sizeof(*b));
    b->err = err;
    b->offset = -1;
    uint64_t seed = ingest_hash_seed();
    b->params.index.seed = seed;
    b->callpaths.index.seed = seed;
    b->metrics.index.seed = seed;
    b->coord_index.seed = seed;
    b->series_index.seed = seed;
    b->point_index.seed = seed;
    b->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (b->c_locale == (locale_t)0)
        return ingest_fail(b, "cannot create the C locale for number parsing");
    return 0;
}

void ingest_builder_free(ingest_builder *b)
{
    names_free(&b->params);
    names_free(&b->callpaths);
    names_free(&b->metrics);
    free(b->coords);
    ingest_idtab_free(&b->coord_index);
    free(b->series);
    ingest_idtab_free(&b->series_index);
    free(b->points);
    ingest_idtab_free(&b->point_index);
    free(b->obs_point);
    free(b->obs_value);
    if (b->c_locale != (locale_t)0)
        freelocale(b->c_locale);
    ingest_error *err = b->err;
    memset(b, 0, sizeof(*b));
    b->err = err;
}

int ingest_builder_param(ingest_builder *b, const char *s, size_t n)
{
    int id, added;
    if (ingest_names_intern(&b->params, s, n, &id, &added) < 0)
        return fail_oom(b);
    if (!added)
        return ingest_fail(b, "parameter \"%.*s\" is given twice", (int)(n > 60 ? 60 : n), s);
    return id;
}

int ingest_builder_callpath(ingest_builder *b, const char *s, size_t n)
{
    int id, added;
    if (ingest_names_intern(&b->callpaths, s, n, &id, &added) < 0)
        return fail_oom(b);
    return id;
}

int ingest_builder_metric(ingest_builder *b, const char *s, size_t n)
{
    int id, added;
    if (ingest_names_intern(&b->metrics, s, n, &id, &added) < 0)
        return fail_oom(b);
    return id;
}

static int coord_equals(const double *a, const double *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int ingest_builder_coord(ingest_builder *b, const double *v, int *id, int *added)
{
    int np = b->params.n;
    for (int i = 0; i < np; i++)
        if (!isfinite(v[i]))
            return ingest_fail(b, "coordinate value is not a finite number");
    uint32_t h = ingest_hash_doubles(b->coord_index.seed, v, np);
    ingest_probe p;
    for (int32_t c = ingest_idtab_first(&b->coord_index, h, &p); c >= 0;
         c = ingest_idtab_next(&b->coord_index, &p)) {
        if (coord_equals(b->coords + (size_t)c * np, v, np)) {
            *id = c;
            *added = 0;
            return 0;
        }
    }
    if (b->ncoords >= INGEST_MAX_ITEMS)
        return fail_oom(b);
    double *coords =
        grown(b->coords, &b->coords_cap, ((size_t)b->ncoords + 1) * (size_t)np, sizeof(double));
    if (!coords)
        return fail_oom(b);
    b->coords = coords;
    if (ingest_idtab_add(&b->coord_index, h, b->ncoords) < 0)
        return fail_oom(b);
    memcpy(b->coords + (size_t)b->ncoords * np, v, (size_t)np * sizeof(double));
    *id = b->ncoords++;
    *added = 1;
    return 0;
}

int ingest_builder_series(ingest_builder *b, int callpath, int metric)
{
    uint32_t h = ingest_hash_pair(b->series_index.seed, (uint32_t)callpath, (uint32_t)metric);
    ingest_probe p;
    for (int32_t s = ingest_idtab_first(&b->series_index, h, &p); s >= 0;
         s = ingest_idtab_next(&b->series_index, &p))
        if (b->series[s].callpath == callpath && b->series[s].metric == metric)
            return s;
    if (b->nseries >= INGEST_MAX_ITEMS)
        return fail_oom(b);
    ingest_series_rec *list =
        grown(b->series, &b->series_cap, (size_t)b->nseries + 1, sizeof(ingest_series_rec));
    if (!list)
        return fail_oom(b);
    b->series = list;
    if (ingest_idtab_add(&b->series_index, h, b->nseries) < 0)
        return fail_oom(b);
    ingest_series_rec *rec = &b->series[b->nseries];
    rec->callpath = callpath;
    rec->metric = metric;
    rec->npoints = 0;
    rec->line = b->line;
    rec->offset = b->offset;
    return b->nseries++;
}

/* Indexes the points appended by ingest_builder_point_new since the last lookup. */
static int index_new_points(ingest_builder *b)
{
    for (; b->points_indexed < b->npoints; b->points_indexed++) {
        const ingest_point_rec *pt = &b->points[b->points_indexed];
        uint32_t h =
            ingest_hash_pair(b->point_index.seed, (uint32_t)pt->series, (uint32_t)pt->coord);
        if (ingest_idtab_add(&b->point_index, h, b->points_indexed) < 0)
            return fail_oom(b);
    }
    return 0;
}

int ingest_builder_point_new(ingest_builder *b, int series, int coord)
{
    if (b->npoints >= INGEST_MAX_ITEMS)
        return fail_oom(b);
    ingest_point_rec *list =
        grown(b->points, &b->points_cap, (size_t)b->npoints + 1, sizeof(ingest_point_rec));
    if (!list)
        return fail_oom(b);
    b->points = list;
    ingest_point_rec *rec = &b->points[b->npoints];
    rec->series = series;
    rec->coord = coord;
    rec->local = b->series[series].npoints++;
    rec->nvalues = 0;
    return b->npoints++;
}

int ingest_builder_point(ingest_builder *b, int series, int coord, int *added)
{
    if (index_new_points(b) < 0)
        return -1;
    uint32_t h = ingest_hash_pair(b->point_index.seed, (uint32_t)series, (uint32_t)coord);
    ingest_probe p;
    for (int32_t q = ingest_idtab_first(&b->point_index, h, &p); q >= 0;
         q = ingest_idtab_next(&b->point_index, &p)) {
        if (b->points[q].series == series && b->points[q].coord == coord) {
            *added = 0;
            return q;
        }
    }
    int q = ingest_builder_point_new(b, series, coord);
    if (q < 0)
        return -1;
    *added = 1;
    return index_new_points(b) < 0 ? -1 : q;
}

int ingest_builder_value(ingest_builder *b, int point, double v)
{
    if (!isfinite(v))
        return ingest_fail(b, "value is not a finite number");
    if (b->nobs >= (size_t)INT_MAX - 1 || b->points[point].nvalues >= INGEST_MAX_ITEMS)
        return ingest_fail(b, "too many values");
    if (b->nobs >= b->obs_point_cap) {
        uint32_t *list = grown(b->obs_point, &b->obs_point_cap, b->nobs + 1, sizeof(uint32_t));
        if (!list)
            return fail_oom(b);
        b->obs_point = list;
    }
    if (b->nobs >= b->obs_value_cap) {
        double *list = grown(b->obs_value, &b->obs_value_cap, b->nobs + 1, sizeof(double));
        if (!list)
            return fail_oom(b);
        b->obs_value = list;
    }
    b->obs_point[b->nobs] = (uint32_t)point;
    b->obs_value[b->nobs] = v;
    b->nobs++;
    b->points[point].nvalues++;
    return 0;
}

void ingest_format_coord(const ingest_builder *b, int coord, char *dst, size_t cap)
{
    size_t used = 0;
    int np = b->params.n;
    if (cap == 0)
        return;
    dst[0] = '\0';
    for (int i = 0; i < np && used < cap; i++) {
        int w = snprintf(dst + used, cap - used, "%s%.17g", i ? ", " : "(",
                         b->coords[(size_t)coord * np + i]);
        if (w < 0)
            return;
        used += (size_t)w;
    }
    if (used < cap)
        snprintf(dst + used, cap - used, ")");
}

/* ---- finish --------------------------------------------------------------- */

static const char *short_name(const char *s, char *buf, size_t cap)
{
    size_t n = strlen(s);
    if (n < cap)
        return s;
    snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
    return buf;
}

/* Extra-P's validate_experiment, plus: something was measured, and every
 * point has at least one repetition. */
static int validate(ingest_builder *b)
{
    char cp_buf[64], m_buf[64], coord_buf[96];
    b->offset = -1;
    b->line = 0;
    if (b->params.n == 0)
        return ingest_fail(b, "no parameters");
    if (b->ncoords == 0)
        return ingest_fail(b, "no coordinates");
    if (b->metrics.n == 0)
        return ingest_fail(b, "no metrics");
    if (b->callpaths.n == 0)
        return ingest_fail(b, "no callpaths");
    if (b->nseries == 0)
        return ingest_fail(b, "no measurements");
    for (int s = 0; s < b->nseries; s++) {
        const ingest_series_rec *rec = &b->series[s];
        if (rec->npoints != b->ncoords) {
            b->line = rec->line;
            b->offset = rec->offset;
            return ingest_fail(
                b, "callpath \"%s\", metric \"%s\" has data for %d of the %d coordinates",
                short_name(b->callpaths.name[rec->callpath], cp_buf, sizeof(cp_buf)),
                short_name(b->metrics.name[rec->metric], m_buf, sizeof(m_buf)), rec->npoints,
                b->ncoords);
        }
    }
    for (int q = 0; q < b->npoints; q++) {
        const ingest_point_rec *pt = &b->points[q];
        if (pt->nvalues == 0) {
            const ingest_series_rec *rec = &b->series[pt->series];
            b->line = rec->line;
            b->offset = rec->offset;
            ingest_format_coord(b, pt->coord, coord_buf, sizeof(coord_buf));
            return ingest_fail(b, "callpath \"%s\", metric \"%s\" has no values at %s",
                               short_name(b->callpaths.name[rec->callpath], cp_buf,
                                          sizeof(cp_buf)),
                               short_name(b->metrics.name[rec->metric], m_buf, sizeof(m_buf)),
                               coord_buf);
        }
    }
    return 0;
}

/* Renumbers coordinates by first use, series after series, points in order. */
static int order_coords_by_series(ingest_builder *b, const int *point_of)
{
    int np = b->params.n;
    int *renum = malloc((size_t)b->ncoords * sizeof(int));
    double *coords = malloc((size_t)b->ncoords * (size_t)np * sizeof(double));
    if (!renum || !coords) {
        free(renum);
        free(coords);
        return fail_oom(b);
    }
    for (int c = 0; c < b->ncoords; c++)
        renum[c] = -1;
    int next = 0;
    for (int q = 0; q < b->npoints; q++) {
        int c = b->points[point_of[q]].coord;
        if (renum[c] < 0) {
            renum[c] = next;
            memcpy(coords + (size_t)next * np, b->coords + (size_t)c * np,
                   (size_t)np * sizeof(double));
            next++;
        }
    }
    /* Every coordinate of these formats comes from a point; keep any other. */
    for (int c = 0; c < b->ncoords; c++) {
        if (renum[c] < 0) {
            renum[c] = next;
            memcpy(coords + (size_t)next * np, b->coords + (size_t)c * np,
                   (size_t)np * sizeof(double));
            next++;
        }
    }
    for (int q = 0; q < b->npoints; q++)
        b->points[q].coord = renum[b->points[q].coord];
    free(b->coords);
    b->coords = coords;
    b->coords_cap = (size_t)b->ncoords * (size_t)np;
    free(renum);
    return 0;
}

/* point_of lists point ids series after series, each series in local order. */
static int *points_in_series_order(ingest_builder *b)
{
    int *first = malloc(((size_t)b->nseries + 1) * sizeof(int));
    int *point_of = malloc(((size_t)b->npoints + 1) * sizeof(int));
    if (!first || !point_of) {
        free(first);
        free(point_of);
        return NULL;
    }
    first[0] = 0;
    for (int s = 0; s < b->nseries; s++)
        first[s + 1] = first[s] + b->series[s].npoints;
    for (int q = 0; q < b->npoints; q++)
        point_of[first[b->points[q].series] + b->points[q].local] = q;
    free(first);
    return point_of;
}

static void free_series_array(ingest_series *series, int n)
{
    for (int s = 0; s < n; s++) {
        free(series[s].coord);
        free(series[s].rep_start);
        free(series[s].values);
    }
    free(series);
}

/* Builds the output series: coords, rep_start and values in point order. */
static int build_series(ingest_builder *b, const int *point_of, ingest_series **out)
{
    ingest_series *series = calloc((size_t)b->nseries + 1, sizeof(ingest_series));
    size_t *fill = malloc(((size_t)b->npoints + 1) * sizeof(size_t));
    if (!series || !fill) {
        free(series);
        free(fill);
        return fail_oom(b);
    }
    int q_at = 0;
    for (int s = 0; s < b->nseries; s++) {
        ingest_series *dst = &series[s];
        int n = b->series[s].npoints;
        size_t nvalues = 0;
        for (int k = 0; k < n; k++)
            nvalues += (size_t)b->points[point_of[q_at + k]].nvalues;
        dst->callpath = b->series[s].callpath;
        dst->metric = b->series[s].metric;
        dst->npoints = n;
        dst->coord = malloc((size_t)n * sizeof(int) + 1);
        dst->rep_start = malloc(((size_t)n + 1) * sizeof(int));
        dst->values = malloc(nvalues * sizeof(double) + 1);
        if (!dst->coord || !dst->rep_start || !dst->values) {
            free_series_array(series, s + 1);
            free(fill);
            return fail_oom(b);
        }
        int at = 0;
        for (int k = 0; k < n; k++) {
            const ingest_point_rec *pt = &b->points[point_of[q_at + k]];
            dst->coord[k] = pt->coord;
            dst->rep_start[k] = at;
            fill[point_of[q_at + k]] = (size_t)at;
            at += pt->nvalues;
        }
        dst->rep_start[n] = at;
        q_at += n;
    }
    for (size_t i = 0; i < b->nobs; i++) {
        uint32_t q = b->obs_point[i];
        ingest_series *dst = &series[b->points[q].series];
        dst->values[fill[q]++] = b->obs_value[i];
    }
    free(fill);
    *out = series;
    return 0;
}

static char **take_names(ingest_names *names, int *n)
{
    char **list = names->name;
    *n = names->n;
    if (!list)
        list = calloc(1, sizeof(char *));
    names->name = NULL;
    names->n = 0;
    names->cap = 0;
    return list;
}

int ingest_builder_finish(ingest_builder *b, ingest_experiment *out)
{
    memset(out, 0, sizeof(*out));
    if (validate(b) < 0)
        return -1;
    int *point_of = points_in_series_order(b);
    if (!point_of)
        return fail_oom(b);
    if (b->coords_by_series && order_coords_by_series(b, point_of) < 0) {
        free(point_of);
        return -1;
    }
    ingest_series *series = NULL;
    int rc = build_series(b, point_of, &series);
    free(point_of);
    if (rc < 0)
        return -1;

    out->nseries = b->nseries;
    out->series = series;
    out->ncoords = b->ncoords;
    out->coords = b->coords;
    b->coords = NULL;
    b->ncoords = 0;
    out->params = take_names(&b->params, &out->nparams);
    out->callpaths = take_names(&b->callpaths, &out->ncallpaths);
    out->metrics = take_names(&b->metrics, &out->nmetrics);
    if (!out->params || !out->callpaths || !out->metrics) {
        ingest_experiment_free(out);
        return fail_oom(b);
    }
    return 0;
}
