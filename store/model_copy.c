/*
 * model_copy.c — staged measurements and models through COPY (see
 * model_copy.h).
 *
 * Rows are COPY's text format: tab-separated, \N for NULL, backslash,
 * tab, newline and carriage return escaped; numbers as the shortest text
 * that reads back as the same double (common/numtext.h), arrays as
 * PostgreSQL literals of those. The JSON path of store_model_set_append()
 * writes the same text, so both store identical values.
 */
#include "store/model_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"

#define COPY_CHUNK (256 * 1024)

typedef struct copy_buf {
    PGconn *c;
    char *b;
    size_t len, cap;
    int failed; /* out of memory or the connection refused data */
} copy_buf;

static void put_raw(copy_buf *w, const char *s, size_t n)
{
    if (w->failed)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : COPY_CHUNK;
        while (cap < w->len + n)
            cap *= 2;
        char *b = realloc(w->b, cap);
        if (!b) {
            w->failed = 1;
            return;
        }
        w->b = b;
        w->cap = cap;
    }
    memcpy(w->b + w->len, s, n);
    w->len += n;
}

/* Sends what is buffered once it passes COPY_CHUNK (or always). */
static void flush_buf(copy_buf *w, int always)
{
    if (w->failed || (!always && w->len < COPY_CHUNK) || w->len == 0)
        return;
    if (PQputCopyData(w->c, w->b, (int)w->len) != 1)
        w->failed = 1;
    w->len = 0;
}

/* A text field, escaped; NULL as \N. */
static void put_text(copy_buf *w, const char *s)
{
    if (!s) {
        put_raw(w, "\\N", 2);
        return;
    }
    const char *run = s;
    for (const char *p = s; *p; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '\t' ? "\\t" : *p == '\n' ? "\\n"
                          : *p == '\r' ? "\\r" : NULL;
        if (!esc)
            continue;
        put_raw(w, run, (size_t)(p - run));
        put_raw(w, esc, 2);
        run = p + 1;
    }
    put_raw(w, run, strlen(run));
}

static void put_double(copy_buf *w, double v)
{
    char num[32];
    put_raw(w, num, (size_t)numtext_format_shortest(v, num));
}

static void put_int(copy_buf *w, long v)
{
    char num[24];
    put_raw(w, num, (size_t)snprintf(num, sizeof num, "%ld", v));
}

static void put_doubles(copy_buf *w, const double *v, int n)
{
    put_raw(w, "{", 1);
    for (int i = 0; i < n; i++) {
        if (i)
            put_raw(w, ",", 1);
        put_double(w, v[i]);
    }
    put_raw(w, "}", 1);
}

static void put_ints(copy_buf *w, const int *v, int n)
{
    put_raw(w, "{", 1);
    for (int i = 0; i < n; i++) {
        if (i)
            put_raw(w, ",", 1);
        put_int(w, v[i]);
    }
    put_raw(w, "}", 1);
}

static void tab(copy_buf *w)
{
    put_raw(w, "\t", 1);
}

static void measurement_line(copy_buf *w, const store_measurement *m, int nparams)
{
    put_doubles(w, m->point, nparams);
    tab(w);
    put_text(w, m->level);
    tab(w);
    put_text(w, m->name);
    tab(w);
    put_text(w, m->category);
    tab(w);
    put_text(w, m->metric);
    tab(w);
    put_text(w, m->phase);
    tab(w);
    put_double(w, m->value);
    tab(w);
    put_doubles(w, m->reps, m->nreps);
    tab(w);
    put_doubles(w, m->ranks, m->nranks);
    tab(w);
    put_ints(w, m->rank_ids, m->nranks);
    tab(w);
    if (m->lif_reps)
        put_doubles(w, m->lif_reps, m->nreps);
    else
        put_text(w, NULL);
    tab(w);
    put_text(w, m->levels ? m->levels : "{}");
    put_raw(w, "\n", 1);
}

static void model_line(copy_buf *w, const store_model *m)
{
    put_text(w, m->level);
    tab(w);
    put_text(w, m->name);
    tab(w);
    put_text(w, m->category);
    tab(w);
    put_text(w, m->metric);
    tab(w);
    put_text(w, m->phase);
    tab(w);
    put_text(w, m->function);
    tab(w);
    put_text(w, m->model_json);
    tab(w);
    put_double(w, m->growth_poly);
    tab(w);
    put_double(w, m->growth_log);
    tab(w);
    put_int(w, m->points);
    tab(w);
    put_text(w, m->reason);
    tab(w);
    put_text(w, m->levels ? m->levels : "{}");
    put_raw(w, "\n", 1);
}

/* One COPY: sql starts it, line() writes row i. */
static int copy_rows(PGconn *c, const char *sql, size_t n,
                     void (*line)(copy_buf *, const void *, size_t, int), const void *rows,
                     int nparams, store_error *err)
{
    if (n == 0)
        return STORE_OK;
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COPY_IN)
        return store_fail(c, r, err);
    PQclear(r);
    copy_buf w = {.c = c};
    for (size_t i = 0; i < n && !w.failed; i++) {
        line(&w, rows, i, nparams);
        flush_buf(&w, 0);
    }
    flush_buf(&w, 1);
    free(w.b);
    PQputCopyEnd(c, w.failed ? "the rows could not be encoded" : NULL);
    int rc = STORE_OK;
    while ((r = PQgetResult(c))) {
        if (PQresultStatus(r) != PGRES_COMMAND_OK && rc == STORE_OK)
            rc = store_fail(c, r, err);
        else
            PQclear(r);
    }
    if (rc == STORE_OK && w.failed)
        rc = store_error_set(err, STORE_INTERNAL, "cannot send the model set");
    return rc;
}

static void measurement_at(copy_buf *w, const void *rows, size_t i, int nparams)
{
    measurement_line(w, (const store_measurement *)rows + i, nparams);
}

static void model_at(copy_buf *w, const void *rows, size_t i, int nparams)
{
    (void)nparams;
    model_line(w, (const store_model *)rows + i);
}

int store_model_copy_staged(PGconn *c, int nparams, const store_measurement *m, size_t nm,
                            const store_model *models, size_t nmodels, store_error *err)
{
    int rc = copy_rows(c,
                       "COPY perfcast_stage_measurements (point, level, name, category, metric, "
                       "phase, value, repetitions, rank_values, rank_ids, lif_reps, levels) "
                       "FROM STDIN",
                       nm, measurement_at, m, nparams, err);
    if (!rc)
        rc = copy_rows(c,
                       "COPY perfcast_stage_models (level, name, category, metric, phase, "
                       "function, model, growth_poly, growth_log, points, reason, levels) "
                       "FROM STDIN",
                       nmodels, model_at, models, nparams, err);
    return rc;
}
