/*
 * extrap_text.c — Extra-P's text format (PARAMETER, POINTS, REGION, METRIC,
 * DATA lines), read as Extra-P 4.2.5's TextFileReader reads it.
 *
 *   PARAMETER x y          names, one line or several, at most 4 in all
 *   POINTS ( 20 1 ) ( 30 1 )   or, with one parameter, POINTS 20 30 40
 *   REGION main->compute   selects the callpath (and restarts the point count)
 *   METRIC time            selects the metric (and restarts the point count)
 *   DATA 1.2 1.3 1.1       repetitions at the next point, in POINTS order
 *
 * Lines starting with '#' and blank lines are skipped; a field name must
 * start its line; runs of whitespace count as one space, also inside names.
 * DATA before any METRIC belongs to the metric "". Where Extra-P would
 * silently produce a broken experiment (duplicate points or parameters,
 * POINTS after DATA, DATA outside a region, a series given twice, a METRIC
 * after metric-less DATA) this reader stops with the line at fault, so that
 * what it accepts Extra-P reads the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_internal.h"

#define TEXT_MAX_PARAMS 4

typedef struct text_reader {
    ingest_builder *b;
    char *scratch; /* a name with its whitespace collapsed */
    size_t scratch_cap;
    double *values; /* numbers of the line being read */
    size_t values_cap;
    int callpath;      /* current REGION, -1 before the first */
    int metric;        /* current METRIC, -1 before the first */
    int series;        /* series the current block feeds, -1 before its first DATA */
    int coordinate_id; /* next point of the current block */
    int seen_points;
    int seen_data;
    int implicit_metric; /* DATA went to the metric "" for want of a METRIC */
} text_reader;

/* A line split into its field name and the rest. */
typedef struct text_line {
    const char *field;
    size_t field_len;
    const char *value; /* without surrounding whitespace */
    size_t value_len;
} text_line;

static int field_is(const text_line *tl, const char *name)
{
    size_t n = strlen(name);
    return tl->field_len == n && memcmp(tl->field, name, n) == 0;
}

static void split_line(const char *s, size_t n, text_line *tl)
{
    size_t i = 0;
    while (i < n && ingest_is_space(s[i]))
        i++;
    tl->field = s + i;
    while (i < n && !ingest_is_space(s[i]))
        i++;
    tl->field_len = (size_t)(s + i - tl->field);
    while (i < n && ingest_is_space(s[i]))
        i++;
    while (n > i && ingest_is_space(s[n - 1]))
        n--;
    tl->value = s + i;
    tl->value_len = n - i;
}

/* Next whitespace-separated token of s[*pos..n); 0 at the end. */
static int next_token(const char *s, size_t n, size_t *pos, const char **tok, size_t *tok_len)
{
    size_t i = *pos;
    while (i < n && ingest_is_space(s[i]))
        i++;
    if (i >= n) {
        *pos = i;
        return 0;
    }
    size_t start = i;
    while (i < n && !ingest_is_space(s[i]))
        i++;
    *tok = s + start;
    *tok_len = i - start;
    *pos = i;
    return 1;
}

static int shown(size_t n)
{
    return n > 40 ? 40 : (int)n;
}

/* Copies a name into the scratch buffer with whitespace runs made one space. */
static int collapse_name(text_reader *r, const char *s, size_t n, size_t *out_len)
{
    if (n + 1 > r->scratch_cap) {
        char *p = realloc(r->scratch, n + 1);
        if (!p)
            return ingest_fail(r->b, "out of memory");
        r->scratch = p;
        r->scratch_cap = n + 1;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (ingest_is_space(s[i])) {
            if (k > 0 && r->scratch[k - 1] != ' ')
                r->scratch[k++] = ' ';
        } else {
            r->scratch[k++] = s[i];
        }
    }
    *out_len = k;
    return 0;
}

static int parse_number(text_reader *r, const char *tok, size_t n, const char *what, double *v)
{
    ingest_number_status st = ingest_parse_number(tok, n, r->b->c_locale, v);
    if (st == INGEST_NUMBER_OK)
        return 0;
    if (st == INGEST_NUMBER_NONFINITE)
        return ingest_fail(r->b, "%s \"%.*s\" is not a finite number", what, shown(n), tok);
    return ingest_fail(r->b, "expected a number in %s, got \"%.*s\"", what, shown(n), tok);
}

static int push_value(text_reader *r, size_t count, double v)
{
    if (count + 1 > r->values_cap) {
        size_t cap = r->values_cap ? r->values_cap * 2 : 16;
        double *p = realloc(r->values, cap * sizeof(double));
        if (!p)
            return ingest_fail(r->b, "out of memory");
        r->values = p;
        r->values_cap = cap;
    }
    r->values[count] = v;
    return 0;
}

static int on_parameter(text_reader *r, const text_line *tl)
{
    if (r->seen_points)
        return ingest_fail(r->b, "PARAMETER after POINTS (declare all parameters first)");
    size_t pos = 0;
    const char *tok;
    size_t n;
    int count = 0;
    while (next_token(tl->value, tl->value_len, &pos, &tok, &n)) {
        if (r->b->params.n >= TEXT_MAX_PARAMS)
            return ingest_fail(r->b, "the text format supports at most %d parameters",
                               TEXT_MAX_PARAMS);
        if (ingest_builder_param(r->b, tok, n) < 0)
            return -1;
        count++;
    }
    if (count == 0)
        return ingest_fail(r->b, "PARAMETER without a name");
    return 0;
}

/* Adds one point; values holds params.n numbers. */
static int add_point(text_reader *r, const double *values)
{
    int id, added;
    if (ingest_builder_coord(r->b, values, &id, &added) < 0)
        return -1;
    if (!added) {
        char buf[96];
        ingest_format_coord(r->b, id, buf, sizeof(buf));
        return ingest_fail(r->b, "point %s is listed twice", buf);
    }
    return 0;
}

/* POINTS ( a b ) ( c d ): one group of params.n numbers per point. */
static int parse_grouped_points(text_reader *r, const char *s, size_t n)
{
    int np = r->b->params.n;
    size_t i = 0;
    for (;;) {
        while (i < n && ingest_is_space(s[i]))
            i++;
        if (i >= n)
            return 0;
        if (s[i] != '(')
            return ingest_fail(r->b, "expected '(' to open a point in POINTS, got '%c'", s[i]);
        i++;
        size_t close = i;
        while (close < n && s[close] != ')' && s[close] != '(')
            close++;
        if (close >= n || s[close] != ')')
            return ingest_fail(r->b, "point in POINTS is missing its ')'");
        size_t pos = i;
        const char *tok;
        size_t tok_len;
        size_t count = 0;
        while (next_token(s, close, &pos, &tok, &tok_len)) {
            double v;
            if (parse_number(r, tok, tok_len, "POINTS", &v) < 0 || push_value(r, count, v) < 0)
                return -1;
            count++;
        }
        if (count != (size_t)np)
            return ingest_fail(r->b, "a point in POINTS has %zu values, expected %d (one per parameter)",
                               count, np);
        if (add_point(r, r->values) < 0)
            return -1;
        i = close + 1;
    }
}

/* POINTS 20 30 40: one value per point, single parameter only. */
static int parse_bare_points(text_reader *r, const char *s, size_t n)
{
    if (r->b->params.n != 1)
        return ingest_fail(r->b, "POINTS without parentheses needs exactly one parameter, "
                                 "there are %d", r->b->params.n);
    size_t pos = 0;
    const char *tok;
    size_t tok_len;
    while (next_token(s, n, &pos, &tok, &tok_len)) {
        double v;
        if (parse_number(r, tok, tok_len, "POINTS", &v) < 0 || add_point(r, &v) < 0)
            return -1;
    }
    return 0;
}

static int on_points(text_reader *r, const text_line *tl)
{
    if (r->b->params.n == 0)
        return ingest_fail(r->b, "POINTS before any PARAMETER");
    if (r->seen_data)
        return ingest_fail(r->b, "POINTS after DATA (list all points before the data)");
    if (tl->value_len == 0)
        return ingest_fail(r->b, "POINTS without points");
    r->seen_points = 1;
    if (memchr(tl->value, '(', tl->value_len))
        return parse_grouped_points(r, tl->value, tl->value_len);
    return parse_bare_points(r, tl->value, tl->value_len);
}

static int on_region(text_reader *r, const text_line *tl)
{
    size_t n;
    if (collapse_name(r, tl->value, tl->value_len, &n) < 0)
        return -1;
    int id = ingest_builder_callpath(r->b, r->scratch, n);
    if (id < 0)
        return -1;
    r->callpath = id;
    r->series = -1;
    r->coordinate_id = 0;
    return 0;
}

static int on_metric(text_reader *r, const text_line *tl)
{
    size_t n;
    /* Extra-P would list only the named metrics and leave that data out. */
    if (r->implicit_metric)
        return ingest_fail(r->b, "METRIC after DATA that had no METRIC (name the metric of "
                                 "all data or of none)");
    if (collapse_name(r, tl->value, tl->value_len, &n) < 0)
        return -1;
    int id = ingest_builder_metric(r->b, r->scratch, n);
    if (id < 0)
        return -1;
    r->metric = id;
    r->series = -1;
    r->coordinate_id = 0;
    return 0;
}

/* The series a DATA line feeds; a block must not repeat an earlier one. */
static int start_block(text_reader *r)
{
    if (r->metric < 0) {
        r->metric = ingest_builder_metric(r->b, "", 0);
        if (r->metric < 0)
            return -1;
        r->implicit_metric = 1;
    }
    int before = r->b->nseries;
    int s = ingest_builder_series(r->b, r->callpath, r->metric);
    if (s < 0)
        return -1;
    if (s < before)
        return ingest_fail(r->b, "second block of DATA for region \"%.*s\", metric \"%.*s\"",
                           shown(strlen(r->b->callpaths.name[r->callpath])),
                           r->b->callpaths.name[r->callpath],
                           shown(strlen(r->b->metrics.name[r->metric])),
                           r->b->metrics.name[r->metric]);
    r->series = s;
    return 0;
}

static int on_data(text_reader *r, const text_line *tl)
{
    ingest_builder *b = r->b;
    if (b->params.n == 0)
        return ingest_fail(b, "DATA before any PARAMETER");
    if (b->ncoords == 0)
        return ingest_fail(b, "DATA before any POINTS");
    if (r->callpath < 0)
        return ingest_fail(b, "DATA before any REGION");
    if (r->coordinate_id >= b->ncoords)
        return ingest_fail(b, "more DATA lines than POINTS (%d) in this region and metric",
                           b->ncoords);
    if (tl->value_len == 0)
        return ingest_fail(b, "DATA without values");
    r->seen_data = 1;
    if (r->series < 0 && start_block(r) < 0)
        return -1;
    /* A block's series is new (start_block) and its points advance. */
    int point = ingest_builder_point_new(b, r->series, r->coordinate_id);
    if (point < 0)
        return -1;
    size_t pos = 0;
    const char *tok;
    size_t n;
    while (next_token(tl->value, tl->value_len, &pos, &tok, &n)) {
        double v;
        if (parse_number(r, tok, n, "DATA", &v) < 0 || ingest_builder_value(b, point, v) < 0)
            return -1;
    }
    r->coordinate_id++;
    return 0;
}

/* A line without any whitespace that ends the input unterminated: Extra-P
 * splits the field name at the first space, and without one it loses the
 * last character ("METRIC" becomes "METRI"); with a newline it would be a
 * field with an empty value. */
static int is_bare_last_line(const char *s, size_t n, int terminated)
{
    if (terminated)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (ingest_is_space(s[i]))
            return 0;
    return 1;
}

static int is_field_name(const text_line *tl)
{
    return field_is(tl, "DATA") || field_is(tl, "REGION") || field_is(tl, "METRIC") ||
           field_is(tl, "POINTS") || field_is(tl, "PARAMETER");
}

static int read_line(text_reader *r, const char *s, size_t n, int terminated)
{
    text_line tl;
    if (!ingest_utf8_valid(s, n))
        return ingest_fail(r->b, "not valid UTF-8 text (or a NUL byte)");
    if (s[0] == '#')
        return 0;
    if (ingest_is_space(s[0]))
        return ingest_fail(r->b, "whitespace before the field name");
    split_line(s, n, &tl);
    if (is_bare_last_line(s, n, terminated) && is_field_name(&tl))
        return ingest_fail(r->b, "\"%.*s\" ends the input without a value or a line break",
                           shown(n), s);
    if (field_is(&tl, "DATA"))
        return on_data(r, &tl);
    if (field_is(&tl, "REGION"))
        return on_region(r, &tl);
    if (field_is(&tl, "METRIC"))
        return on_metric(r, &tl);
    if (field_is(&tl, "POINTS"))
        return on_points(r, &tl);
    if (field_is(&tl, "PARAMETER"))
        return on_parameter(r, &tl);
    return ingest_fail(r->b, "unknown field \"%.*s\" (expected PARAMETER, POINTS, REGION, "
                             "METRIC or DATA)",
                       shown(tl.field_len), tl.field);
}

static int read_all(text_reader *r, const char *buf, size_t len, ingest_experiment *out)
{
    ingest_lines it;
    const char *line;
    size_t n;
    int any = 0;
    ingest_lines_init(&it, buf, len);
    while (ingest_lines_next(&it, &line, &n)) {
        r->b->line = it.lineno;
        r->b->offset = (long)(line - buf);
        if (ingest_is_blank(line, n))
            continue;
        any = 1;
        if (read_line(r, line, n, it.pos > (size_t)(line - buf) + n) < 0)
            return -1;
    }
    if (!any)
        return ingest_fail_at(r->b->err, 0, 0, "input is empty");
    return ingest_builder_finish(r->b, out);
}

int ingest_read_text(const char *buf, size_t len, ingest_experiment *out, ingest_error *err)
{
    ingest_builder b;
    memset(out, 0, sizeof(*out));
    if (ingest_builder_init(&b, err) < 0) {
        ingest_builder_free(&b);
        return -1;
    }
    text_reader r;
    memset(&r, 0, sizeof(r));
    r.b = &b;
    r.callpath = -1;
    r.metric = -1;
    r.series = -1;
    int rc = read_all(&r, buf, len, out);
    free(r.scratch);
    free(r.values);
    ingest_builder_free(&b);
    return rc;
}
