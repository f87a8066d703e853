/*
 * extrap_json.c — Extra-P's JSON input files, both layouts, read as Extra-P
 * 4.2.5's JsonFileReader reads them.
 *
 * The current layout:
 *   {"parameters": ["x", ...],
 *    "measurements": {"<callpath>": {"<metric>": [{"point": [..], "values": [..]}]}}}
 * The legacy layout (recognised by a "callpaths" member): lists "parameters",
 * "callpaths", "metrics" and "coordinates" of objects with 1-based "id"s, and
 * "measurements", one value each, referring to those ids; repetitions are the
 * measurements sharing (coordinate, callpath, metric).
 *
 * A file that is not one JSON document but whose lines all start with '{' is
 * JSON Lines (extrap_jsonl.c), as in Extra-P. Duplicate object keys are
 * refused rather than letting the last one win. Jansson has no positions for
 * parsed values, so semantic errors name the JSON path instead of a line.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_internal.h"

/* Longest part of a name or key quoted in a message. */
#define SHOWN 40

static int shown(const char *s)
{
    size_t n = strlen(s);
    return n > SHOWN ? SHOWN : (int)n;
}

int ingest_json_number(const json_t *v, int allow_string, locale_t c_locale, double *out)
{
    if (json_is_integer(v)) {
        *out = (double)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v)) {
        *out = json_real_value(v);
        return isfinite(*out) ? 0 : -2;
    }
    if (allow_string && json_is_string(v)) {
        ingest_number_status st = ingest_parse_number(json_string_value(v), json_string_length(v),
                                                      c_locale, out);
        if (st == INGEST_NUMBER_OK)
            return 0;
        return st == INGEST_NUMBER_NONFINITE ? -2 : -1;
    }
    return -1;
}

int ingest_looks_like_jsonl(const char *buf, size_t len)
{
    ingest_lines it;
    const char *line;
    size_t n;
    int any = 0;
    ingest_lines_init(&it, buf, len);
    while (ingest_lines_next(&it, &line, &n)) {
        size_t i = 0;
        while (i < n && ingest_is_space(line[i]))
            i++;
        if (i == n)
            continue;
        if (line[i] != '{')
            return 0;
        any = 1;
    }
    return any;
}

/* ---- current layout -------------------------------------------------------- */

/* Where a measurement of the current layout sits, for messages. */
typedef struct new_place {
    const char *callpath;
    const char *metric;
    size_t index;
} new_place;

static int fail_new(ingest_builder *b, const new_place *at, const char *what)
{
    return ingest_fail(b, "measurements[\"%.*s\"][\"%.*s\"][%zu]%s", shown(at->callpath),
                       at->callpath, shown(at->metric), at->metric, at->index, what);
}

static int read_new_parameters(ingest_builder *b, const json_t *root)
{
    const json_t *params = json_object_get(root, "parameters");
    if (!params)
        return ingest_fail(b, "missing \"parameters\"");
    if (!json_is_array(params))
        return ingest_fail(b, "\"parameters\": expected an array of parameter names");
    if (json_array_size(params) == 0)
        return ingest_fail(b, "\"parameters\" is empty");
    for (size_t i = 0; i < json_array_size(params); i++) {
        const json_t *p = json_array_get(params, i);
        if (!json_is_string(p))
            return ingest_fail(b, "parameters[%zu]: expected a string", i);
        if (ingest_builder_param(b, json_string_value(p), json_string_length(p)) < 0)
            return -1;
    }
    return 0;
}

/* "point": an array of one number per parameter (a bare number when there is
 * one parameter, which Extra-P's Coordinate() also accepts). */
static int read_new_point(ingest_builder *b, const new_place *at, const json_t *point, double *v)
{
    int np = b->params.n;
    double d;
    if (json_is_number(point)) {
        if (np != 1)
            return fail_new(b, at, ".point: expected an array of one number per parameter");
        if (ingest_json_number(point, 0, b->c_locale, &d) < 0)
            return fail_new(b, at, ".point: expected a finite number");
        v[0] = d;
        return 0;
    }
    if (!json_is_array(point))
        return fail_new(b, at, ".point: expected an array of numbers");
    if (json_array_size(point) != (size_t)np) {
        char what[96];
        snprintf(what, sizeof(what), ".point has %zu values, expected %d (one per parameter)",
                 json_array_size(point), np);
        return fail_new(b, at, what);
    }
    for (int k = 0; k < np; k++) {
        if (ingest_json_number(json_array_get(point, (size_t)k), 0, b->c_locale, &d) < 0) {
            char what[64];
            snprintf(what, sizeof(what), ".point[%d]: expected a number", k);
            return fail_new(b, at, what);
        }
        v[k] = d;
    }
    return 0;
}

static int read_new_values(ingest_builder *b, const new_place *at, const json_t *values, int point)
{
    double d;
    if (json_is_number(values)) {
        if (ingest_json_number(values, 0, b->c_locale, &d) < 0)
            return fail_new(b, at, ".values: expected a finite number");
        return ingest_builder_value(b, point, d);
    }
    if (!json_is_array(values))
        return fail_new(b, at, ".values: expected an array of numbers");
    for (size_t k = 0; k < json_array_size(values); k++) {
        if (ingest_json_number(json_array_get(values, k), 0, b->c_locale, &d) < 0) {
            char what[64];
            snprintf(what, sizeof(what), ".values[%zu]: expected a number", k);
            return fail_new(b, at, what);
        }
        if (ingest_builder_value(b, point, d) < 0)
            return -1;
    }
    return 0;
}

/* The list of one (callpath, metric): names are interned on the first
 * measurement, as Extra-P adds them only then. */
static int read_new_list(ingest_builder *b, const char *cp_name, const char *m_name,
                         const json_t *list, double *coord)
{
    new_place at = {cp_name, m_name, 0};
    int series = -1;
    if (!json_is_array(list))
        return ingest_fail(b, "measurements[\"%.*s\"][\"%.*s\"]: expected an array of measurements",
                           shown(cp_name), cp_name, shown(m_name), m_name);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *m = json_array_get(list, i);
        at.index = i;
        if (!json_is_object(m))
            return fail_new(b, &at, ": expected an object with \"point\" and \"values\"");
        const json_t *point = json_object_get(m, "point");
        const json_t *values = json_object_get(m, "values");
        if (!point)
            return fail_new(b, &at, ": missing \"point\"");
        if (!values)
            return fail_new(b, &at, ": missing \"values\"");
        if (read_new_point(b, &at, point, coord) < 0)
            return -1;
        int c, added;
        if (ingest_builder_coord(b, coord, &c, &added) < 0)
            return -1;
        if (series < 0) {
            int cp = ingest_builder_callpath(b, cp_name, strlen(cp_name));
            int metric = cp < 0 ? -1 : ingest_builder_metric(b, m_name, strlen(m_name));
            series = metric < 0 ? -1 : ingest_builder_series(b, cp, metric);
            if (series < 0)
                return -1;
        }
        int q = ingest_builder_point(b, series, c, &added);
        if (q < 0)
            return -1;
        if (!added) {
            char buf[96], what[192];
            ingest_format_coord(b, c, buf, sizeof(buf));
            snprintf(what, sizeof(what), ": point %s appears twice in this list", buf);
            return fail_new(b, &at, what);
        }
        if (read_new_values(b, &at, values, q) < 0)
            return -1;
    }
    return 0;
}

static int read_new_layout(ingest_builder *b, const json_t *root)
{
    if (read_new_parameters(b, root) < 0)
        return -1;
    const json_t *ms = json_object_get(root, "measurements");
    if (!ms)
        return ingest_fail(b, "missing \"measurements\"");
    if (!json_is_object(ms))
        return ingest_fail(b, "\"measurements\": expected an object of callpaths");
    double *coord = malloc((size_t)b->params.n * sizeof(double));
    if (!coord)
        return ingest_fail(b, "out of memory");
    const char *cp_name;
    const json_t *metrics;
    int rc = 0;
    json_object_foreach((json_t *)ms, cp_name, metrics) {
        if (!json_is_object(metrics)) {
            rc = ingest_fail(b, "measurements[\"%.*s\"]: expected an object of metrics",
                             shown(cp_name), cp_name);
            break;
        }
        const char *m_name;
        const json_t *list;
        json_object_foreach((json_t *)metrics, m_name, list) {
            rc = read_new_list(b, cp_name, m_name, list, coord);
            if (rc < 0)
                break;
        }
        if (rc < 0)
            break;
    }
    free(coord);
    return rc;
}

/* ---- legacy layout --------------------------------------------------------- */

/* An id field: an integer (or what int() takes: integral number, numeric
 * string) from 1 to max. */
static int read_id(ingest_builder *b, const json_t *v, long max, long *out)
{
    double d;
    if (!v || ingest_json_number(v, 1, b->c_locale, &d) < 0 || d != floor(d) || d < 1 ||
        d > (double)max)
        return -1;
    *out = (long)d;
    return 0;
}

/* Orders the items of a section by "id", which must run 1..n. */
static int section_by_id(ingest_builder *b, const json_t *root, const char *key,
                         const json_t ***out, size_t *count)
{
    const json_t *list = json_object_get(root, key);
    *out = NULL;
    *count = 0;
    if (!list)
        return ingest_fail(b, "missing \"%s\"", key);
    if (!json_is_array(list))
        return ingest_fail(b, "\"%s\": expected an array", key);
    size_t n = json_array_size(list);
    if (n == 0)
        return ingest_fail(b, "\"%s\" is empty", key);
    if (n > (size_t)INT32_MAX / 2)
        return ingest_fail(b, "\"%s\" is too long", key);
    const json_t **by_id = calloc(n, sizeof(*by_id));
    if (!by_id)
        return ingest_fail(b, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *item = json_array_get(list, i);
        long id;
        if (!json_is_object(item)) {
            free(by_id);
            return ingest_fail(b, "%s[%zu]: expected an object", key, i);
        }
        if (read_id(b, json_object_get(item, "id"), (long)n, &id) < 0) {
            free(by_id);
            return ingest_fail(b, "%s[%zu].id: expected an integer from 1 to %zu", key, i, n);
        }
        if (by_id[id - 1]) {
            free(by_id);
            return ingest_fail(b, "%s[%zu].id: id %ld is used twice", key, i, id);
        }
        by_id[id - 1] = item;
    }
    *out = by_id;
    *count = n;
    return 0;
}

typedef enum legacy_names_kind { LEGACY_PARAMETERS, LEGACY_CALLPATHS, LEGACY_METRICS } legacy_names_kind;

static int read_legacy_names(ingest_builder *b, const json_t *root, const char *key,
                             legacy_names_kind kind)
{
    const json_t **items;
    size_t n;
    if (section_by_id(b, root, key, &items, &n) < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const json_t *name = json_object_get(items[i], "name");
        if (!json_is_string(name)) {
            rc = ingest_fail(b, "%s (id %zu).name: expected a string", key, i + 1);
            break;
        }
        const char *s = json_string_value(name);
        size_t len = json_string_length(name);
        int id, added;
        if (kind == LEGACY_PARAMETERS) {
            rc = ingest_builder_param(b, s, len) < 0 ? -1 : 0;
            continue;
        }
        ingest_names *names = kind == LEGACY_CALLPATHS ? &b->callpaths : &b->metrics;
        if (ingest_names_intern(names, s, len, &id, &added) < 0)
            rc = ingest_fail(b, "out of memory");
        else if (!added)
            rc = ingest_fail(b, "%s (id %zu): name \"%.*s\" is used twice", key, i + 1,
                             shown(s), s);
    }
    free(items);
    return rc;
}

/* One coordinate: its parameter_value_pairs in parameter_id order. */
static int read_legacy_coord(ingest_builder *b, const json_t *item, size_t id, double *v,
                             char *filled)
{
    int np = b->params.n;
    const json_t *pairs = json_object_get(item, "parameter_value_pairs");
    if (!json_is_array(pairs))
        return ingest_fail(b, "coordinates (id %zu): expected \"parameter_value_pairs\" array", id);
    if (json_array_size(pairs) != (size_t)np)
        return ingest_fail(b, "coordinates (id %zu) has %zu values, expected %d (one per parameter)",
                           id, json_array_size(pairs), np);
    memset(filled, 0, (size_t)np);
    for (size_t k = 0; k < (size_t)np; k++) {
        const json_t *pair = json_array_get(pairs, k);
        long pid;
        double d;
        if (!json_is_object(pair))
            return ingest_fail(b, "coordinates (id %zu).parameter_value_pairs[%zu]: expected an object",
                               id, k);
        if (read_id(b, json_object_get(pair, "parameter_id"), np, &pid) < 0)
            return ingest_fail(b, "coordinates (id %zu).parameter_value_pairs[%zu].parameter_id: "
                                  "expected an integer from 1 to %d", id, k, np);
        if (filled[pid - 1])
            return ingest_fail(b, "coordinates (id %zu): parameter_id %ld is given twice", id, pid);
        const json_t *value = json_object_get(pair, "parameter_value");
        if (!value || ingest_json_number(value, 1, b->c_locale, &d) < 0)
            return ingest_fail(b, "coordinates (id %zu).parameter_value_pairs[%zu].parameter_value: "
                                  "expected a finite number", id, k);
        filled[pid - 1] = 1;
        v[pid - 1] = d;
    }
    return 0;
}

static int read_legacy_coords(ingest_builder *b, const json_t *root)
{
    const json_t **items;
    size_t n;
    if (section_by_id(b, root, "coordinates", &items, &n) < 0)
        return -1;
    double *v = malloc((size_t)b->params.n * sizeof(double));
    char *filled = malloc((size_t)b->params.n);
    int rc = (v && filled) ? 0 : ingest_fail(b, "out of memory");
    for (size_t i = 0; i < n && rc == 0; i++) {
        int c, added;
        if (read_legacy_coord(b, items[i], i + 1, v, filled) < 0 ||
            ingest_builder_coord(b, v, &c, &added) < 0) {
            rc = -1;
        } else if (!added) {
            char buf[96];
            ingest_format_coord(b, c, buf, sizeof(buf));
            rc = ingest_fail(b, "coordinates (id %zu): %s repeats coordinate id %d", i + 1, buf,
                             c + 1);
        }
    }
    free(v);
    free(filled);
    free(items);
    return rc;
}

static int read_legacy_measurements(ingest_builder *b, const json_t *root)
{
    const json_t *list = json_object_get(root, "measurements");
    if (!list)
        return ingest_fail(b, "missing \"measurements\"");
    if (!json_is_array(list))
        return ingest_fail(b, "\"measurements\": expected an array");
    for (size_t i = 0; i < json_array_size(list); i++) {
        const json_t *m = json_array_get(list, i);
        long coord, cp, metric;
        double d;
        if (!json_is_object(m))
            return ingest_fail(b, "measurements[%zu]: expected an object", i);
        if (read_id(b, json_object_get(m, "coordinate_id"), b->ncoords, &coord) < 0)
            return ingest_fail(b, "measurements[%zu].coordinate_id: expected an integer from 1 to %d",
                               i, b->ncoords);
        if (read_id(b, json_object_get(m, "callpath_id"), b->callpaths.n, &cp) < 0)
            return ingest_fail(b, "measurements[%zu].callpath_id: expected an integer from 1 to %d",
                               i, b->callpaths.n);
        if (read_id(b, json_object_get(m, "metric_id"), b->metrics.n, &metric) < 0)
            return ingest_fail(b, "measurements[%zu].metric_id: expected an integer from 1 to %d",
                               i, b->metrics.n);
        const json_t *value = json_object_get(m, "value");
        if (!value || ingest_json_number(value, 1, b->c_locale, &d) < 0)
            return ingest_fail(b, "measurements[%zu].value: expected a finite number", i);
        int s = ingest_builder_series(b, (int)cp - 1, (int)metric - 1);
        int added;
        int q = s < 0 ? -1 : ingest_builder_point(b, s, (int)coord - 1, &added);
        if (q < 0 || ingest_builder_value(b, q, d) < 0)
            return -1;
    }
    return 0;
}

static int read_legacy_layout(ingest_builder *b, const json_t *root)
{
    if (read_legacy_names(b, root, "parameters", LEGACY_PARAMETERS) < 0 ||
        read_legacy_names(b, root, "callpaths", LEGACY_CALLPATHS) < 0 ||
        read_legacy_names(b, root, "metrics", LEGACY_METRICS) < 0 ||
        read_legacy_coords(b, root) < 0 || read_legacy_measurements(b, root) < 0)
        return -1;
    return 0;
}

/* ---- entry ----------------------------------------------------------------- */

static int read_document(const json_t *root, ingest_experiment *out, ingest_error *err)
{
    ingest_builder b;
    int rc = ingest_builder_init(&b, err);
    if (rc == 0) {
        if (!json_is_object(root))
            rc = ingest_fail(&b, "expected a JSON object at the top level");
        else if (json_object_get(root, "callpaths"))
            rc = read_legacy_layout(&b, root);
        else
            rc = read_new_layout(&b, root);
    }
    if (rc == 0)
        rc = ingest_builder_finish(&b, out);
    ingest_builder_free(&b);
    return rc;
}

int ingest_read_json(const char *buf, size_t len, ingest_experiment *out, ingest_error *err)
{
    memset(out, 0, sizeof(*out));
    if (len == 0 || ingest_is_blank(buf, len))
        return ingest_fail_at(err, 0, 0, "input is empty");
    json_error_t jerr;
    json_t *root = json_loadb(buf, len, INGEST_JSON_FLAGS, &jerr);
    if (!root) {
        if (ingest_looks_like_jsonl(buf, len))
            return ingest_read_jsonl(buf, len, out, err);
        return ingest_fail_at(err, jerr.line > 0 ? jerr.line : 0, jerr.position,
                              "invalid JSON at column %d: %s", jerr.column, jerr.text);
    }
    int rc = read_document(root, out, err);
    json_decref(root);
    return rc;
}
