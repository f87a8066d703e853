/*
 * extrap.c — the entry points of ingest/extrap.h: which Extra-P format a file
 * is in, handing its bytes to that format's reader, and freeing what a reader
 * returned.
 *
 * The readers live in extrap_text.c, extrap_json.c (both JSON layouts) and
 * extrap_jsonl.c (JSON Lines and TaLPas); they share the experiment builder
 * of extrap_build.c. See extrap_internal.h for how the pieces fit.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ingest/extrap_internal.h"

static int has_suffix(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcasecmp(path + n - k, suffix) == 0;
}

/* 1 when the first non-blank character of buf is '{'. */
static int starts_with_brace(const char *buf, size_t len)
{
    for (size_t i = 0; buf && i < len; i++) {
        if (ingest_is_space(buf[i]))
            continue;
        return buf[i] == '{';
    }
    return 0;
}

ingest_format ingest_extrap_format_from_path(const char *path, const char *buf, size_t len)
{
    if (!path)
        return INGEST_FORMAT_UNKNOWN;
    if (has_suffix(path, ".txt"))
        return starts_with_brace(buf, len) ? INGEST_FORMAT_TALPAS : INGEST_FORMAT_EXTRAP_TEXT;
    if (has_suffix(path, ".jsonl"))
        return INGEST_FORMAT_EXTRAP_JSONL;
    if (has_suffix(path, ".json"))
        return INGEST_FORMAT_EXTRAP_JSON;
    return INGEST_FORMAT_UNKNOWN;
}

/* The names every command and route uses, then the short ones `perfcast
 * model --format` took before, kept as aliases. */
static const struct {
    const char *name;
    ingest_format fmt;
} format_names[] = {
    {"extrap-text", INGEST_FORMAT_EXTRAP_TEXT}, {"extrap-json", INGEST_FORMAT_EXTRAP_JSON},
    {"extrap-jsonl", INGEST_FORMAT_EXTRAP_JSONL}, {"talpas", INGEST_FORMAT_TALPAS},
    {"text", INGEST_FORMAT_EXTRAP_TEXT},        {"json", INGEST_FORMAT_EXTRAP_JSON},
    {"jsonl", INGEST_FORMAT_EXTRAP_JSONL},
};

ingest_format ingest_extrap_format_from_name(const char *name)
{
    if (!name)
        return INGEST_FORMAT_UNKNOWN;
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (strcmp(name, format_names[i].name) == 0)
            return format_names[i].fmt;
    return INGEST_FORMAT_UNKNOWN;
}

const char *ingest_extrap_format_name(ingest_format f)
{
    for (size_t i = 0; i < sizeof format_names / sizeof *format_names; i++)
        if (format_names[i].fmt == f)
            return format_names[i].name; /* the first: the canonical name */
    return "unknown";
}

int ingest_extrap_read(const char *buf, size_t len, ingest_format fmt, ingest_experiment *out,
                       ingest_error *err)
{
    ingest_error scratch;
    if (!err)
        err = &scratch;
    memset(err, 0, sizeof(*err));
    err->offset = -1;
    if (!out)
        return ingest_fail_at(err, 0, -1, "no experiment to fill");
    memset(out, 0, sizeof(*out));
    if (!buf && len > 0)
        return ingest_fail_at(err, 0, -1, "no input buffer");
    if (!buf)
        buf = "";
    if (len > (size_t)(LONG_MAX / 2))
        return ingest_fail_at(err, 0, -1, "input is too large");
    switch (fmt) {
    case INGEST_FORMAT_EXTRAP_TEXT:
        return ingest_read_text(buf, len, out, err);
    case INGEST_FORMAT_EXTRAP_JSON:
        return ingest_read_json(buf, len, out, err);
    case INGEST_FORMAT_EXTRAP_JSONL:
        return ingest_read_jsonl(buf, len, out, err);
    case INGEST_FORMAT_TALPAS:
        return ingest_read_talpas(buf, len, out, err);
    case INGEST_FORMAT_UNKNOWN:
        break;
    }
    return ingest_fail_at(err, 0, -1, "unknown input format");
}

static void free_names(char **names, int n)
{
    if (!names)
        return;
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

void ingest_experiment_free(ingest_experiment *e)
{
    if (!e)
        return;
    free_names(e->params, e->nparams);
    free_names(e->callpaths, e->ncallpaths);
    free_names(e->metrics, e->nmetrics);
    free(e->coords);
    if (e->series) {
        for (int s = 0; s < e->nseries; s++) {
            free(e->series[s].coord);
            free(e->series[s].rep_start);
            free(e->series[s].values);
        }
        free(e->series);
    }
    memset(e, 0, sizeof(*e));
}
