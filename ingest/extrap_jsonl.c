/*
 * extrap_jsonl.c — the two one-measurement-per-line formats: JSON Lines and
 * TaLPas, read as Extra-P 4.2.5's read_jsonlines_file and TalpasFileReader
 * read them.
 *
 *   JSON Lines: {"params": {"x": 4, "y": 10}, "callpath": "main", "metric": "time", "value": 1.5}
 *               callpath defaults to "<root>", metric to "<default>"
 *   TaLPas:     {"parameters": {"x": 20}; "metric": "time"; "callpath": "compute"; "value": 82.0}
 *               every ';' is read as ',' (Extra-P's own trick), all keys required
 *
 * "value" is a number or a list of numbers; lines with the same callpath,
 * metric and coordinate add repetitions. The first line's parameter names, in
 * their order, fix the parameters; later lines must give exactly those.
 * Coordinates end up ordered by first use walking the series, the order
 * Extra-P's repetition_dict_to_experiment produces.
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_internal.h"

typedef struct line_format {
    const char *params_key;
    const char *default_callpath; /* NULL: "callpath" is required */
    const char *default_metric;   /* NULL: "metric" is required */
    int semicolons;               /* read ';' as ',' */
} line_format;

static const line_format JSONL_FORMAT = {"params", "<root>", "<default>", 0};
static const line_format TALPAS_FORMAT = {"parameters", NULL, NULL, 1};

typedef struct line_reader {
    ingest_builder *b;
    const line_format *fmt;
    char *copy; /* the line with ';' replaced, TaLPas only */
    size_t copy_cap;
    double *coord;
} line_reader;

/* Names the line's callpath or metric; a missing key takes the default. */
static int read_name(line_reader *r, const json_t *obj, const char *key, const char *fallback,
                     int is_callpath)
{
    const json_t *v = json_object_get(obj, key);
    const char *s;
    size_t n;
    if (!v) {
        if (!fallback)
            return ingest_fail(r->b, "missing \"%s\"", key);
        s = fallback;
        n = strlen(fallback);
    } else if (!json_is_string(v)) {
        return ingest_fail(r->b, "expected a string in \"%s\"", key);
    } else {
        s = json_string_value(v);
        n = json_string_length(v);
    }
    return is_callpath ? ingest_builder_callpath(r->b, s, n) : ingest_builder_metric(r->b, s, n);
}

/* The first line names the parameters, in its key order. */
static int declare_params(line_reader *r, const json_t *params)
{
    const char *key;
    const json_t *v;
    if (json_object_size(params) == 0)
        return ingest_fail(r->b, "\"%s\" is empty", r->fmt->params_key);
    json_object_foreach((json_t *)params, key, v) {
        (void)v;
        if (ingest_builder_param(r->b, key, strlen(key)) < 0)
            return -1;
    }
    r->coord = malloc((size_t)r->b->params.n * sizeof(double));
    if (!r->coord)
        return ingest_fail(r->b, "out of memory");
    return 0;
}

/* Fills r->coord from the line's parameter object. */
static int read_coord(line_reader *r, const json_t *params)
{
    ingest_builder *b = r->b;
    const char *pk = r->fmt->params_key;
    for (int k = 0; k < b->params.n; k++) {
        const char *name = b->params.name[k];
        const json_t *v = json_object_get(params, name);
        if (!v)
            return ingest_fail(b, "missing parameter \"%.40s\" in \"%s\"", name, pk);
        int rc = ingest_json_number(v, 0, b->c_locale, &r->coord[k]);
        if (rc < 0)
            return ingest_fail(b, "expected a number for parameter \"%.40s\" in \"%s\"", name, pk);
    }
    if (json_object_size(params) != (size_t)b->params.n) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)params, key, v) {
            (void)v;
            if (ingest_names_find(&b->params, key, strlen(key)) < 0)
                return ingest_fail(b, "unknown parameter \"%.40s\" in \"%s\" (the first line "
                                      "declares %d)", key, pk, b->params.n);
        }
    }
    return 0;
}

static int read_values(line_reader *r, const json_t *value, int point)
{
    double d;
    if (!value)
        return ingest_fail(r->b, "missing \"value\"");
    if (json_is_array(value)) {
        for (size_t i = 0; i < json_array_size(value); i++) {
            if (ingest_json_number(json_array_get(value, i), 0, r->b->c_locale, &d) < 0)
                return ingest_fail(r->b, "expected a number in \"value\"[%zu]", i);
            if (ingest_builder_value(r->b, point, d) < 0)
                return -1;
        }
        return 0;
    }
    if (ingest_json_number(value, 0, r->b->c_locale, &d) < 0)
        return ingest_fail(r->b, "expected a number in \"value\"");
    return ingest_builder_value(r->b, point, d);
}

static int read_object(line_reader *r, const json_t *obj)
{
    ingest_builder *b = r->b;
    if (!json_is_object(obj))
        return ingest_fail(b, "expected a JSON object");
    int cp = read_name(r, obj, "callpath", r->fmt->default_callpath, 1);
    if (cp < 0)
        return -1;
    int metric = read_name(r, obj, "metric", r->fmt->default_metric, 0);
    if (metric < 0)
        return -1;
    const json_t *params = json_object_get(obj, r->fmt->params_key);
    if (!params)
        return ingest_fail(b, "missing \"%s\"", r->fmt->params_key);
    if (!json_is_object(params))
        return ingest_fail(b, "expected an object in \"%s\"", r->fmt->params_key);
    if (b->params.n == 0 && declare_params(r, params) < 0)
        return -1;
    if (read_coord(r, params) < 0)
        return -1;
    int c, added;
    if (ingest_builder_coord(b, r->coord, &c, &added) < 0)
        return -1;
    int s = ingest_builder_series(b, cp, metric);
    if (s < 0)
        return -1;
    int q = ingest_builder_point(b, s, c, &added);
    if (q < 0)
        return -1;
    return read_values(r, json_object_get(obj, "value"), q);
}

/* The line as JSON: TaLPas lines get their ';' turned into ','. */
static const char *line_text(line_reader *r, const char *line, size_t n)
{
    if (!r->fmt->semicolons)
        return line;
    if (n + 1 > r->copy_cap) {
        char *p = realloc(r->copy, n + 1);
        if (!p)
            return NULL;
        r->copy = p;
        r->copy_cap = n + 1;
    }
    for (size_t i = 0; i < n; i++)
        r->copy[i] = line[i] == ';' ? ',' : line[i];
    return r->copy;
}

static int read_line(line_reader *r, const char *line, size_t n)
{
    const char *text = line_text(r, line, n);
    if (!text)
        return ingest_fail(r->b, "out of memory");
    json_error_t jerr;
    json_t *obj = json_loadb(text, n, INGEST_JSON_FLAGS, &jerr);
    if (!obj) {
        long offset = r->b->offset >= 0 && jerr.position >= 0 ? r->b->offset + jerr.position
                                                               : r->b->offset;
        return ingest_fail_at(r->b->err, r->b->line, offset, "invalid JSON at column %d: %s",
                              jerr.column, jerr.text);
    }
    int rc = read_object(r, obj);
    json_decref(obj);
    return rc;
}

static int read_lines(const char *buf, size_t len, const line_format *fmt,
                      ingest_experiment *out, ingest_error *err)
{
    ingest_builder b;
    line_reader r;
    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    int rc = ingest_builder_init(&b, err);
    r.b = &b;
    r.fmt = fmt;
    b.coords_by_series = 1;

    ingest_lines it;
    const char *line;
    size_t n;
    int any = 0;
    ingest_lines_init(&it, buf, len);
    while (rc == 0 && ingest_lines_next(&it, &line, &n)) {
        b.line = it.lineno;
        b.offset = (long)(line - buf);
        if (ingest_is_blank(line, n))
            continue;
        any = 1;
        rc = read_line(&r, line, n);
    }
    if (rc == 0 && !any)
        rc = ingest_fail_at(err, 0, 0, "input is empty");
    if (rc == 0)
        rc = ingest_builder_finish(&b, out);
    free(r.copy);
    free(r.coord);
    ingest_builder_free(&b);
    return rc;
}

int ingest_read_jsonl(const char *buf, size_t len, ingest_experiment *out, ingest_error *err)
{
    return read_lines(buf, len, &JSONL_FORMAT, out, err);
}

int ingest_read_talpas(const char *buf, size_t len, ingest_experiment *out, ingest_error *err)
{
    return read_lines(buf, len, &TALPAS_FORMAT, out, err);
}
