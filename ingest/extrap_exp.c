/*
 * extrap_exp.c — Extra-P's saved experiments (.extra-p), read and written.
 *
 * A .extra-p file is a zip archive holding "experiment.json" (Extra-P's
 * ExperimentSchema): {"Extra-P": version, "parameters": [names],
 * "measurements": {callpath: {metric: [{"coordinate": [values], "median",
 * "mean", "minimum", "maximum", "std", "repetitions"?, "values"?}]}},
 * "modelers": [{"name", "modeler", "models": {callpath: {metric:
 * {"hypothesis": {"function": {...}}}}}}]}. Measurements are stored
 * aggregated; the reader gives each point one repetition, the mean or the
 * median (the statistic the modeler will use), which is what Extra-P models.
 * Stored models are read by extrap_exp_model.c.
 *
 * The writer makes the same layout from an experiment's repetitions: per
 * point the median, mean, minimum, maximum, population standard deviation
 * and the number of repetitions, so that Extra-P's ExperimentReader loads it.
 * Archives are read and written with libarchive; only "experiment.json" is
 * read, its size checked before it is allocated, and a member name that leaves
 * the archive is refused.
 */
#include <archive.h>
#include <archive_entry.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"
#include "ingest/extrap_internal.h"

#define JSON_MAX ((size_t)1 << 30)

static int fail(ingest_error *err, const char *fmt, const char *a, const char *b)
{
    memset(err, 0, sizeof *err);
    err->offset = -1;
    snprintf(err->msg, sizeof err->msg, fmt, a, b);
    return -1;
}

static int read_json_member(const void *buf, size_t len, char **out, size_t *outlen,
                            ingest_error *err)
{
    struct archive *ar = archive_read_new();
    if (!ar)
        return fail(err, "out of memory%s%s", "", "");
    archive_read_support_format_zip(ar);
    *out = NULL;
    if (archive_read_open_memory(ar, buf, len) != ARCHIVE_OK) {
        fail(err, "not a zip archive: %.120s%s", archive_error_string(ar), "");
        archive_read_free(ar);
        return -1;
    }
    struct archive_entry *ent;
    int r, rc = 0;
    while ((r = archive_read_next_header(ar, &ent)) == ARCHIVE_OK) {
        const char *name = archive_entry_pathname(ent);
        if (!name)
            continue;
        if (name[0] == '/' || strstr(name, "../") || !strcmp(name, "..") ||
            (strlen(name) >= 3 && !strcmp(name + strlen(name) - 3, "/..")) ||
            !strncmp(name, "..\\", 3)) {
            rc = fail(err, "member \"%.80s\" leaves the archive (absolute or \"..\")%s", name,
                      "");
            break;
        }
        if (strcmp(name, "experiment.json"))
            continue;
        if (*out) {
            rc = fail(err, "experiment.json appears twice%s%s", "", "");
            break;
        }
        /* zip headers may leave the size unset (streamed entries): then read
         * in growing steps up to the limit */
        size_t cap = archive_entry_size_is_set(ent) ? (size_t)archive_entry_size(ent) : 65536;
        if (archive_entry_size_is_set(ent) &&
            (archive_entry_size(ent) < 0 || (uint64_t)archive_entry_size(ent) > JSON_MAX)) {
            rc = fail(err, "experiment.json: larger than the limit of 1 GiB%s%s", "", "");
            break;
        }
        size_t n = 0;
        char *b = malloc(cap + 1);
        for (;;) {
            if (!b) {
                rc = fail(err, "out of memory%s%s", "", "");
                break;
            }
            if (n == cap) {
                if (cap >= JSON_MAX) {
                    rc = fail(err, "experiment.json: larger than the limit of 1 GiB%s%s", "", "");
                    break;
                }
                cap = cap * 2 > JSON_MAX ? JSON_MAX : cap * 2;
                char *nb = realloc(b, cap + 1);
                if (!nb) {
                    rc = fail(err, "out of memory%s%s", "", "");
                    break;
                }
                b = nb;
            }
            la_ssize_t got = archive_read_data(ar, b + n, cap - n);
            if (got < 0) {
                rc = fail(err, "experiment.json: corrupt or truncated: %.120s%s",
                          archive_error_string(ar) ? archive_error_string(ar) : "", "");
                break;
            }
            if (got == 0)
                break;
            n += (size_t)got;
        }
        if (rc) {
            free(b);
            break;
        }
        *out = b;
        *outlen = n;
    }
    if (!rc && r != ARCHIVE_EOF)
        rc = fail(err, "corrupt or truncated zip archive: %.120s%s",
                  archive_error_string(ar) ? archive_error_string(ar) : "", "");
    if (!rc && !*out)
        rc = fail(err, "no experiment.json in the archive: not an Extra-P experiment%s%s", "", "");
    archive_read_free(ar);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* One measurement object into the builder. */
static int add_measurement(ingest_builder *b, int series, json_t *m, int median, const char *cp,
                           const char *metric, size_t idx)
{
    char where[160];
    snprintf(where, sizeof where, "measurements[\"%.50s\"][\"%.50s\"][%zu]", cp, metric, idx);
    json_t *c = json_object_get(m, "coordinate");
    size_t np = (size_t)b->params.n;
    if (!json_is_array(c) || json_array_size(c) != np)
        return ingest_fail(b, "%s.coordinate: expected %zu numbers", where, np);
    double v[64];
    for (size_t i = 0; i < np; i++)
        if (ingest_json_number(json_array_get(c, i), 1, b->c_locale, &v[i]) < 0)
            return ingest_fail(b, "%s.coordinate[%zu]: expected a number", where, i);
    int coord, added;
    if (ingest_builder_coord(b, v, &coord, &added) < 0)
        return -1;
    const char *stat = median ? "median" : "mean";
    double x;
    if (ingest_json_number(json_object_get(m, stat), 1, b->c_locale, &x) < 0)
        return ingest_fail(b, "%s.%s: expected a number", where, stat);
    int pt = ingest_builder_point(b, series, coord, &added);
    if (pt < 0)
        return -1;
    if (!added)
        return ingest_fail(b, "%s: coordinate repeated", where);
    return ingest_builder_value(b, pt, x);
}

static int read_measurements(ingest_builder *b, json_t *doc, int median)
{
    json_t *params = json_object_get(doc, "parameters");
    if (!json_is_array(params) || json_array_size(params) == 0 || json_array_size(params) > 64)
        return ingest_fail(b, "parameters: expected an array of 1 to 64 names");
    for (size_t i = 0; i < json_array_size(params); i++) {
        json_t *p = json_array_get(params, i);
        if (!json_is_string(p))
            return ingest_fail(b, "parameters[%zu]: expected a name", i);
        if (ingest_builder_param(b, json_string_value(p), json_string_length(p)) < 0)
            return -1;
    }
    json_t *ms = json_object_get(doc, "measurements");
    if (!json_is_object(ms))
        return ingest_fail(b, "measurements: expected an object");
    const char *cp;
    json_t *by_metric;
    json_object_foreach(ms, cp, by_metric) {
        if (!json_is_object(by_metric))
            return ingest_fail(b, "measurements[\"%.60s\"]: expected an object", cp);
        int cid = ingest_builder_callpath(b, cp, strlen(cp));
        if (cid < 0)
            return -1;
        const char *metric;
        json_t *list;
        json_object_foreach(by_metric, metric, list) {
            if (!json_is_array(list))
                return ingest_fail(b, "measurements[\"%.60s\"][\"%.60s\"]: expected an array",
                                   cp, metric);
            int mid = ingest_builder_metric(b, metric, strlen(metric));
            int sid = mid < 0 ? -1 : ingest_builder_series(b, cid, mid);
            if (sid < 0)
                return -1;
            for (size_t i = 0; i < json_array_size(list); i++)
                if (add_measurement(b, sid, json_array_get(list, i), median, cp, metric, i) < 0)
                    return -1;
        }
    }
    return 0;
}

int ingest_extrap_exp_read(const void *buf, size_t len, int median, ingest_experiment *out,
                           json_t **doc_out, ingest_error *err)
{
    memset(out, 0, sizeof *out);
    if (doc_out)
        *doc_out = NULL;
    char *text;
    size_t tlen;
    if (read_json_member(buf, len, &text, &tlen, err) < 0)
        return -1;
    json_error_t je;
    json_t *doc = json_loadb(text, tlen, INGEST_JSON_FLAGS, &je);
    free(text);
    if (!doc) {
        fail(err, "experiment.json: line %s: %.160s", "", je.text);
        snprintf(err->msg, sizeof err->msg, "experiment.json: line %d: %.160s", je.line, je.text);
        err->line = je.line;
        return -1;
    }
    ingest_builder b;
    int rc = ingest_builder_init(&b, err);
    /* JSON objects keep their order in jansson: Extra-P's order of series */
    if (!rc && !json_is_object(doc))
        rc = ingest_fail(&b, "experiment.json: expected an object");
    if (!rc)
        rc = read_measurements(&b, doc, median);
    if (!rc)
        rc = ingest_builder_finish(&b, out);
    ingest_builder_free(&b);
    if (rc) {
        char m[sizeof err->msg];
        snprintf(m, sizeof m, "%s", err->msg);
        if (strncmp(m, "experiment.json", 15))
            snprintf(err->msg, sizeof err->msg, "experiment.json: %.230s", m);
    }
    if (!rc && doc_out)
        *doc_out = doc;
    else
        json_decref(doc);
    return rc;
}

/* ---- writing ----------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

json_t *ingest_extrap_exp_measurement(const double *coord, int ncoord, const double *v, int n,
                                      double *scratch)
{
    if (n <= 0)
        return NULL;
    memcpy(scratch, v, sizeof *v * (size_t)n);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    double mean = sum / n, ss = 0;
    for (int i = 0; i < n; i++)
        ss += (v[i] - mean) * (v[i] - mean);
    double median = n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
    json_t *c = json_array();
    for (int p = 0; p < ncoord; p++)
        json_array_append_new(c, json_real(coord[p]));
    return json_pack("{s:o, s:f, s:f, s:f, s:f, s:f, s:i}", "coordinate", c, "median", median,
                     "mean", mean, "minimum", scratch[0], "maximum", scratch[n - 1], "std",
                     sqrt(ss / n), "repetitions", n);
}

static json_t *measurement_json(const ingest_experiment *e, const ingest_series *s, int j,
                                double *scratch)
{
    int n = s->rep_start[j + 1] - s->rep_start[j];
    return ingest_extrap_exp_measurement(e->coords + (size_t)s->coord[j] * e->nparams,
                                         e->nparams, s->values + s->rep_start[j], n, scratch);
}

json_t *ingest_extrap_exp_json(const ingest_experiment *e)
{
    json_t *doc = json_object(), *params = json_array(), *ms = json_object();
    int maxrep = 1;
    for (int i = 0; i < e->nseries; i++)
        for (int j = 0; j < e->series[i].npoints; j++) {
            int n = e->series[i].rep_start[j + 1] - e->series[i].rep_start[j];
            if (n > maxrep)
                maxrep = n;
        }
    double *scratch = malloc(sizeof *scratch * (size_t)maxrep);
    int ok = doc && params && ms && scratch;
    for (int p = 0; ok && p < e->nparams; p++)
        ok = json_array_append_new(params, json_string(e->params[p])) == 0;
    for (int i = 0; ok && i < e->nseries; i++) {
        const ingest_series *s = &e->series[i];
        const char *cp = e->callpaths[s->callpath], *m = e->metrics[s->metric];
        json_t *by = json_object_get(ms, cp);
        if (!by) {
            by = json_object();
            ok = by && json_object_set_new(ms, cp, by) == 0;
        }
        json_t *list = ok ? json_array() : NULL;
        ok = list && json_object_set_new(by, m, list) == 0;
        for (int j = 0; ok && j < s->npoints; j++) {
            json_t *one = measurement_json(e, s, j, scratch);
            ok = one && json_array_append_new(list, one) == 0;
        }
    }
    free(scratch);
    if (ok)
        ok = json_object_set_new(doc, "Extra-P", json_string("4.2.5")) == 0 &&
             json_object_set(doc, "parameters", params) == 0 &&
             json_object_set(doc, "measurements", ms) == 0;
    json_decref(params);
    json_decref(ms);
    if (!ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

typedef struct membuf {
    unsigned char *b;
    size_t len, cap;
} membuf;

static la_ssize_t mem_write(struct archive *a, void *ud, const void *buf, size_t n)
{
    (void)a;
    membuf *m = ud;
    if (m->len + n > m->cap) {
        size_t nc = m->cap ? m->cap : 65536;
        while (nc < m->len + n)
            nc *= 2;
        unsigned char *nb = realloc(m->b, nc);
        if (!nb)
            return -1;
        m->b = nb;
        m->cap = nc;
    }
    memcpy(m->b + m->len, buf, n);
    m->len += n;
    return (la_ssize_t)n;
}

int ingest_extrap_exp_zip(const json_t *doc, unsigned char **out, size_t *outlen, char *err,
                          size_t errcap)
{
    *out = NULL;
    *outlen = 0;
    char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    membuf m = {0};
    struct archive *a = archive_write_new();
    struct archive_entry *ent = archive_entry_new();
    int rc = text && a && ent ? 0 : -1;
    if (!rc)
        rc = archive_write_set_format_zip(a) == ARCHIVE_OK &&
                     archive_write_zip_set_compression_deflate(a) == ARCHIVE_OK &&
                     archive_write_open2(a, &m, NULL, mem_write, NULL, NULL) == ARCHIVE_OK
                 ? 0
                 : -1;
    if (!rc) {
        size_t n = strlen(text);
        archive_entry_set_pathname(ent, "experiment.json");
        archive_entry_set_filetype(ent, AE_IFREG);
        archive_entry_set_perm(ent, 0644);
        archive_entry_set_size(ent, (la_int64_t)n);
        rc = archive_write_header(a, ent) == ARCHIVE_OK &&
                     archive_write_data(a, text, n) == (la_ssize_t)n &&
                     archive_write_finish_entry(a) == ARCHIVE_OK && archive_write_close(a) == ARCHIVE_OK
                 ? 0
                 : -1;
    }
    if (rc)
        snprintf(err, errcap, "cannot write the zip archive: %s",
                 a && archive_error_string(a) ? archive_error_string(a) : "out of memory");
    if (ent)
        archive_entry_free(ent);
    if (a)
        archive_write_free(a);
    free(text);
    if (rc) {
        free(m.b);
        return -1;
    }
    *out = m.b;
    *outlen = m.len;
    return 0;
}
