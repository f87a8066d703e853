/*
 * format.c — format names, Content-Types, sniffing and the profile entry
 * point (format.h). Sniffing never parses a whole document: it reads magic
 * numbers and the first top-level keys of a JSON object with a small
 * scanner that skips nested values and strings, within the first
 * SNIFF_MAX bytes.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "ingest/cube.h"
#include "ingest/format.h"

#define SNIFF_MAX ((size_t)1 << 20)

static const char *const kind_names[] = {
    [INGEST_KIND_UNKNOWN] = "unknown",
    [INGEST_KIND_PERFCAST] = "perfcast",
    [INGEST_KIND_KINETO] = "kineto",
    [INGEST_KIND_NSYS] = "nsys",
    [INGEST_KIND_EXTRAP_TEXT] = "extrap-text",
    [INGEST_KIND_EXTRAP_JSON] = "extrap-json",
    [INGEST_KIND_EXTRAP_JSONL] = "extrap-jsonl",
    [INGEST_KIND_TALPAS] = "talpas",
    [INGEST_KIND_CUBE] = "cube",
};

ingest_kind ingest_kind_from_name(const char *name)
{
    if (!name)
        return INGEST_KIND_UNKNOWN;
    for (int k = INGEST_KIND_PERFCAST; k <= INGEST_KIND_CUBE; k++)
        if (!strcmp(name, kind_names[k]))
            return (ingest_kind)k;
    return INGEST_KIND_UNKNOWN;
}

const char *ingest_kind_name(ingest_kind k)
{
    if ((int)k < 0 || k > INGEST_KIND_CUBE)
        return kind_names[0];
    return kind_names[k];
}

const char *ingest_kind_names(void)
{
    return "kineto|nsys|perfcast|extrap-text|extrap-json|extrap-jsonl|talpas|cube";
}

int ingest_kind_is_profile(ingest_kind k)
{
    return k == INGEST_KIND_PERFCAST || k == INGEST_KIND_KINETO || k == INGEST_KIND_NSYS ||
           k == INGEST_KIND_CUBE;
}

ingest_format ingest_kind_extrap_format(ingest_kind k)
{
    switch (k) {
    case INGEST_KIND_EXTRAP_TEXT:
        return INGEST_FORMAT_EXTRAP_TEXT;
    case INGEST_KIND_EXTRAP_JSON:
        return INGEST_FORMAT_EXTRAP_JSON;
    case INGEST_KIND_EXTRAP_JSONL:
        return INGEST_FORMAT_EXTRAP_JSONL;
    case INGEST_KIND_TALPAS:
        return INGEST_FORMAT_TALPAS;
    default:
        return INGEST_FORMAT_UNKNOWN;
    }
}

/* The media type of ct equals type (parameters after ';' ignored). */
static int media_is(const char *ct, const char *type)
{
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strlen(type);
    return !strncasecmp(ct, type, n) && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

ingest_kind ingest_kind_from_content_type(const char *ct, int *sniff)
{
    *sniff = 0;
    if (!ct || !*ct || media_is(ct, "application/json") ||
        media_is(ct, "application/octet-stream") || media_is(ct, "text/plain")) {
        *sniff = 1;
        return INGEST_KIND_UNKNOWN;
    }
    if (media_is(ct, "application/gzip") || media_is(ct, "application/x-gzip"))
        return INGEST_KIND_KINETO;
    if (media_is(ct, "application/vnd.sqlite3") || media_is(ct, "application/x-sqlite3"))
        return INGEST_KIND_NSYS;
    if (media_is(ct, "application/x-tar"))
        return INGEST_KIND_CUBE;
    return INGEST_KIND_UNKNOWN;
}

/* ---- sniffing ------------------------------------------------------------------ */

static int key_is(const char *k, size_t n, const char *lit)
{
    return n == strlen(lit) && !memcmp(k, lit, n);
}

/* What one top-level key says, or UNKNOWN. */
static ingest_kind kind_of_key(const char *k, size_t n)
{
    static const char *const kineto[] = {"traceEvents", "schemaVersion", "distributedInfo",
                                         "deviceProperties", "displayTimeUnit", "traceName",
                                         "record_shapes", "baseTimeNanoseconds"};
    for (size_t i = 0; i < sizeof kineto / sizeof *kineto; i++)
        if (key_is(k, n, kineto[i]))
            return INGEST_KIND_KINETO;
    if (key_is(k, n, "ranks") || key_is(k, n, "point") || key_is(k, n, "repetition"))
        return INGEST_KIND_PERFCAST;
    if (key_is(k, n, "parameters") || key_is(k, n, "measurements") ||
        key_is(k, n, "callpaths") || key_is(k, n, "coordinates"))
        return INGEST_KIND_EXTRAP_JSON;
    if (key_is(k, n, "params"))
        return INGEST_KIND_EXTRAP_JSONL;
    return INGEST_KIND_UNKNOWN;
}

/* Scans the keys of the object opening at b[i] == '{'. */
static ingest_kind sniff_object(const char *b, size_t len, size_t i)
{
    int depth = 0, expect_key = 0;
    ingest_kind found = INGEST_KIND_UNKNOWN;
    for (; i < len; i++) {
        char c = b[i];
        if (c == '"') {
            size_t start = ++i;
            while (i < len && b[i] != '"')
                i += b[i] == '\\' ? 2 : 1;
            if (i >= len)
                break;
            if (depth == 1 && expect_key) {
                ingest_kind k = kind_of_key(b + start, i - start);
                if (k != INGEST_KIND_UNKNOWN && found == INGEST_KIND_UNKNOWN)
                    found = k;
                expect_key = 0;
            }
        } else if (c == '{' || c == '[') {
            depth++;
            expect_key = c == '{' && depth == 1;
        } else if (c == '}' || c == ']') {
            if (--depth == 0)
                break;
        } else if (depth == 1 && c == ',') {
            expect_key = 1;
        } else if (depth == 1 && c == ';') {
            /* TaLPas separates the members of its lines with ';' */
            return INGEST_KIND_TALPAS;
        }
        if (found != INGEST_KIND_UNKNOWN && found != INGEST_KIND_EXTRAP_JSON)
            return found;
    }
    return found;
}

ingest_kind ingest_sniff(const void *data, size_t len)
{
    const char *b = data;
    if (len >= 16 && !memcmp(b, "SQLite format 3", 16))
        return INGEST_KIND_NSYS;
    if (len >= 2 && (unsigned char)b[0] == 0x1f && (unsigned char)b[1] == 0x8b)
        return INGEST_KIND_KINETO;
    if (ingest_cube_is_tar(b, len))
        return INGEST_KIND_CUBE;
    if (len > SNIFF_MAX)
        len = SNIFF_MAX;
    size_t i = 0;
    if (len >= 3 && !memcmp(b, "\xEF\xBB\xBF", 3))
        i = 3;
    while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    if (i >= len)
        return INGEST_KIND_UNKNOWN;
    if (b[i] == '[')
        return INGEST_KIND_KINETO;
    if (b[i] == '{')
        return sniff_object(b, len, i);
    static const char *const words[] = {"PARAMETER", "POINTS", "REGION", "METRIC", "DATA"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t n = strlen(words[w]);
        if (len - i >= n && !memcmp(b + i, words[w], n))
            return INGEST_KIND_EXTRAP_TEXT;
    }
    return INGEST_KIND_UNKNOWN;
}

int ingest_read_profile(ingest_kind k, const char *buf, size_t len,
                        const ingest_trace_options *o, profile *out, ingest_trace_info *info,
                        ingest_error *err)
{
    if (info)
        memset(info, 0, sizeof *info);
    switch (k) {
    case INGEST_KIND_PERFCAST:
        return ingest_profile_json(buf, len, out, err);
    case INGEST_KIND_KINETO: {
        ingest_input in = {.data = buf, .len = len, .fd = -1};
        return ingest_kineto(&in, o, out, info, err);
    }
    case INGEST_KIND_NSYS:
        return ingest_nsys_memory(buf, len, o, out, info, err);
    case INGEST_KIND_CUBE: {
        cube_limits lim = {0};
        if (o && o->max_bytes) /* the members' bytes after decompression */
            lim.max_member = lim.max_total = o->max_bytes;
        cube_profile c;
        if (ingest_cube_read(buf, len, &lim, &c, err) < 0) {
            memset(out, 0, sizeof *out);
            return -1;
        }
        int rc = ingest_cube_to_profile(&c, out, err);
        if (info && !rc)
            info->rank = 0; /* locations are threads and processes, not workers: no world size */
        cube_profile_free(&c);
        return rc;
    }
    default:
        memset(out, 0, sizeof *out);
        memset(err, 0, sizeof *err);
        err->offset = -1;
        snprintf(err->msg, sizeof err->msg, "%s is not a profile format", ingest_kind_name(k));
        return -1;
    }
}
