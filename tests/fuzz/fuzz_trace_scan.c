/*
 * fuzz_trace_scan.c — libFuzzer target for the trace scanner alone
 * (ingest/trace_scan.c). Each input is scanned three ways and checked:
 *   - whole, and cut into chunks (sizes from the input's last byte, down to
 *     one byte): the same records, the same result, the same message;
 *   - against yajl with its default settings (the parser the readers used
 *     before): what yajl refuses the scanner refuses; what yajl accepts the
 *     scanner accepts, or refuses for its shape only (not a trace), never
 *     with a syntax error; and every event's "name" string, when it has one,
 *     is the bytes yajl gives (escapes, \u surrogates, invalid UTF-8).
 * Seeds: tests/fuzz/corpus/trace_scan/; dictionary: trace_scan.dict.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "ingest/trace_scan.h"

#define FZ_EVENTS 512

typedef struct fz_log {
    unsigned long long hash;  /* over every record and field */
    long long n;
    char *name[FZ_EVENTS];    /* the events' "name" strings */
    size_t name_len[FZ_EVENTS];
    int has_name[FZ_EVENTS];
} fz_log;

static void fz_mix(fz_log *l, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        l->hash = (l->hash ^ c[i]) * 1099511628211ull;
}

static void fz_record(fz_log *l, const tscan_record *r, int nfields)
{
    fz_mix(l, &r->index, sizeof r->index);
    fz_mix(l, &r->present, sizeof r->present);
    for (int i = 0; i < nfields; i++) {
        const tscan_field *f = tscan_get(r, i);
        if (!f)
            continue;
        fz_mix(l, &f->type, 1);
        fz_mix(l, &f->types, 1);
        fz_mix(l, &f->first, sizeof f->first);
        if (f->text)
            fz_mix(l, f->text, f->len);
        for (int t = 0; t < f->ntok; t++) {
            const tscan_token *k = &r->tok[f->tok + t];
            fz_mix(l, &k->type, 1);
            if (k->text)
                fz_mix(l, k->text, k->len);
        }
    }
}

static int fz_event(void *ctx, const tscan_record *r, ingest_error *err)
{
    fz_log *l = ctx;
    (void)err;
    fz_record(l, r, 8);
    const tscan_field *f = tscan_get(r, 0);
    if (r->index < FZ_EVENTS && f && f->type == TSCAN_STRING) {
        l->name[r->index] = malloc(f->len + 1);
        memcpy(l->name[r->index], f->text, f->len);
        l->name_len[r->index] = f->len;
        l->has_name[r->index] = 1;
    }
    l->n++;
    return 0;
}

static int fz_root(void *ctx, int key, int type, const tscan_record *obj, ingest_error *err)
{
    fz_log *l = ctx;
    (void)err;
    fz_mix(l, &key, sizeof key);
    fz_mix(l, &type, sizeof type);
    if (obj)
        fz_record(l, obj, 2); /* deviceProperties: its tokens, keys among them, in f[0] */
    return 0;
}

static const char *const ev_keys[] = {"name", "ph", "ts", NULL};
static const char *const args_keys[] = {"correlation", "Input Dims", NULL};
static const char *const root_keys[] = {"distributedInfo", "deviceProperties", NULL};
static const char *const member_keys[] = {"rank", "world_size", NULL};
static const tscan_schema schema = {
    .event_keys = ev_keys, .args_keys = args_keys, .capture = 1u << 4,
    .root_keys = root_keys, .member_keys = member_keys, .root_capture = 1u << 1,
    .on_event = fz_event, .on_root = fz_root,
};

static void fz_free(fz_log *l)
{
    for (int i = 0; i < FZ_EVENTS; i++)
        free(l->name[i]);
}

/* Scans data in chunks of at most chunk bytes; the result, err and log. */
static int fz_scan(const char *data, size_t size, size_t chunk, fz_log *l, ingest_error *err)
{
    memset(err, 0, sizeof *err);
    tscan *s = tscan_new(&schema, l, err);
    if (!s)
        abort();
    int rc = 0;
    for (size_t at = 0; at < size && rc == 0; at += chunk)
        rc = tscan_feed(s, data + at, size - at < chunk ? size - at : chunk);
    if (rc == 0)
        rc = tscan_finish(s);
    tscan_free(s);
    return rc;
}

/* ---- yajl's view ------------------------------------------------------------ */

typedef struct fz_yajl {
    int depth, ev_depth, events_depth, key_name, key_events;
    long long index;
    int count[FZ_EVENTS];     /* "name" members per event */
    char *name[FZ_EVENTS];
    size_t name_len[FZ_EVENTS];
} fz_yajl;

static int y_start_map(void *c)
{
    fz_yajl *y = c;
    y->depth++;
    if (y->depth == y->events_depth + 1 && y->events_depth > 0)
        y->index++;
    y->key_name = y->key_events = 0;
    return 1;
}

static int y_start_array(void *c)
{
    fz_yajl *y = c;
    y->depth++;
    if ((y->depth == 1 || (y->depth == 2 && y->key_events)) && y->events_depth == 0)
        y->events_depth = y->depth;
    y->key_name = y->key_events = 0;
    return 1;
}

static int y_end(void *c)
{
    fz_yajl *y = c;
    y->depth--;
    y->key_name = y->key_events = 0;
    return 1;
}

static int y_key(void *c, const unsigned char *k, size_t n)
{
    fz_yajl *y = c;
    y->key_name = y->events_depth > 0 && y->depth == y->events_depth + 1 && n == 4 &&
                  !memcmp(k, "name", 4);
    y->key_events = y->depth == 1 && n == 11 && !memcmp(k, "traceEvents", 11);
    return 1;
}

static int y_string(void *c, const unsigned char *s, size_t n)
{
    fz_yajl *y = c;
    if (y->key_name && y->index >= 0 && y->index < FZ_EVENTS) {
        y->count[y->index]++;
        free(y->name[y->index]);
        y->name[y->index] = malloc(n + 1);
        memcpy(y->name[y->index], s, n);
        y->name_len[y->index] = n;
    }
    y->key_name = y->key_events = 0;
    return 1;
}

static int y_scalar(void *c)
{
    fz_yajl *y = c;
    y->key_name = y->key_events = 0;
    return 1;
}

static int y_null(void *c) { return y_scalar(c); }
static int y_bool(void *c, int b) { (void)b; return y_scalar(c); }
static int y_number(void *c, const char *s, size_t n) { (void)s; (void)n; return y_scalar(c); }

static const yajl_callbacks y_callbacks = {
    .yajl_null = y_null, .yajl_boolean = y_bool, .yajl_number = y_number,
    .yajl_string = y_string, .yajl_start_map = y_start_map, .yajl_map_key = y_key,
    .yajl_end_map = y_end, .yajl_start_array = y_start_array, .yajl_end_array = y_end,
};

static int is_syntax(const char *msg)
{
    return strstr(msg, "parse error") || strstr(msg, "lexical error") ||
           strstr(msg, "premature") || strstr(msg, "nested deeper");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    fz_log whole = {0}, cut = {0};
    ingest_error e1, e2;
    int r1 = fz_scan(text, size, size ? size : 1, &whole, &e1);
    size_t chunk = size ? (size_t)data[size - 1] % 17 + 1 : 1;
    int r2 = fz_scan(text, size, chunk, &cut, &e2);
    if (r1 != r2 || whole.hash != cut.hash || whole.n != cut.n ||
        (r1 < 0 && strcmp(e1.msg, e2.msg))) {
        fprintf(stderr, "whole %d \"%s\" / chunks of %zu %d \"%s\"\n", r1, e1.msg, chunk, r2,
                e2.msg);
        abort();
    }

    fz_yajl y = {.index = -1};
    yajl_handle h = yajl_alloc(&y_callbacks, NULL, &y);
    int ok = yajl_parse(h, data, size) == yajl_status_ok &&
             yajl_complete_parse(h) == yajl_status_ok;
    yajl_free(h);
    int blank = 1;
    for (size_t i = 0; i < size && blank; i++)
        blank = strchr(" \t\n\r\v\f", text[i]) != NULL;
    if (!ok && r1 == 0) {
        fprintf(stderr, "yajl refuses what the scanner accepts\n");
        abort();
    }
    if (ok && r1 < 0 && !blank && is_syntax(e1.msg) && !strstr(e1.msg, "nested deeper")) {
        fprintf(stderr, "yajl accepts, the scanner: %s\n", e1.msg);
        abort();
    }
    if (ok && r1 == 0)
        for (long long i = 0; i < whole.n && i < FZ_EVENTS; i++)
            if (y.count[i] == 1 && whole.has_name[i] &&
                (y.name_len[i] != whole.name_len[i] ||
                 memcmp(y.name[i], whole.name[i], y.name_len[i]))) {
                fprintf(stderr, "event %lld: the name differs from yajl's\n", i);
                abort();
            }
    for (int i = 0; i < FZ_EVENTS; i++)
        free(y.name[i]);
    fz_free(&whole);
    fz_free(&cut);
    return 0;
}
