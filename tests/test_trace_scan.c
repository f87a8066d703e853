/*
 * test_trace_scan.c — the trace scanner (ingest/trace_scan.c) on its own:
 * strings unescaped as yajl gives them (surrogate pairs, a lone surrogate,
 * \u0000), numbers as written, captured arrays, malformed JSON refused with
 * the offset of the fault, and the same records, results and messages
 * whatever the chunks the input arrives in (down to one byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/trace_scan.h"
#include "tests/check.h"

typedef struct log {
    unsigned long long hash;
    long long events;
    char name[256];
    size_t name_len;
    char ts[64];
    int ntok;
    int rank;
} log_t;

static void mix(log_t *l, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        l->hash = (l->hash ^ c[i]) * 1099511628211ull;
}

static int on_event(void *ctx, const tscan_record *r, ingest_error *err)
{
    log_t *l = ctx;
    mix(l, &r->index, sizeof r->index);
    mix(l, &r->present, sizeof r->present);
    for (int i = 0; i < 5; i++) {
        const tscan_field *f = tscan_get(r, i);
        if (!f)
            continue;
        mix(l, &f->type, 1);
        mix(l, &f->types, 1);
        if (f->text)
            mix(l, f->text, f->len);
        for (int t = 0; t < f->ntok; t++) {
            mix(l, &r->tok[f->tok + t].type, 1);
            if (r->tok[f->tok + t].text)
                mix(l, r->tok[f->tok + t].text, r->tok[f->tok + t].len);
        }
    }
    const tscan_field *f = tscan_get(r, 0);
    if (r->index == 0 && f && f->type == TSCAN_STRING && f->len < sizeof l->name) {
        memcpy(l->name, f->text, f->len);
        l->name_len = f->len;
    }
    if (r->index == 0 && (f = tscan_get(r, 1)) && f->len < sizeof l->ts)
        snprintf(l->ts, sizeof l->ts, "%.*s", (int)f->len, f->text);
    if (r->index == 0 && (f = tscan_get(r, 4)))
        l->ntok = f->ntok;
    l->events++;
    if (f && r->index == 7 && tscan_get(r, 0) && tscan_get(r, 0)->len == 4 &&
        !memcmp(tscan_get(r, 0)->text, "stop", 4)) {
        snprintf(err->msg, sizeof err->msg, "traceEvents[7]: stopped");
        return -1;
    }
    return 0;
}

static int on_root(void *ctx, int key, int type, const tscan_record *obj, ingest_error *err)
{
    log_t *l = ctx;
    (void)key;
    (void)err;
    const tscan_field *f;
    if (type == TSCAN_OBJECT && (f = tscan_get(obj, 0)) && f->type == TSCAN_NUMBER)
        l->rank = atoi(f->text);
    return 0;
}

static const char *const ev_keys[] = {"name", "ts", "ph", NULL};
static const char *const args_keys[] = {"correlation", "Input Dims", NULL};
static const char *const root_keys[] = {"distributedInfo", NULL};
static const char *const member_keys[] = {"rank", NULL};
static const tscan_schema schema = {
    .event_keys = ev_keys, .args_keys = args_keys, .capture = 1u << 4,
    .root_keys = root_keys, .member_keys = member_keys,
    .on_event = on_event, .on_root = on_root,
};

static int scan(const char *text, size_t len, size_t chunk, log_t *l, ingest_error *err)
{
    memset(l, 0, sizeof *l);
    l->rank = -1;
    memset(err, 0, sizeof *err);
    tscan *s = tscan_new(&schema, l, err);
    int rc = 0;
    for (size_t at = 0; at < len && rc == 0; at += chunk)
        rc = tscan_feed(s, text + at, len - at < chunk ? len - at : chunk);
    if (rc == 0)
        rc = tscan_finish(s);
    tscan_free(s);
    return rc;
}

/* The same outcome in chunks of 1..40 bytes as whole. */
static void same_in_chunks(const char *what, const char *text)
{
    size_t len = strlen(text);
    log_t a, b;
    ingest_error ea, eb;
    int ra = scan(text, len, len ? len : 1, &a, &ea);
    for (size_t c = 1; c <= 40; c++) {
        int rb = scan(text, len, c, &b, &eb);
        int same = ra == rb && a.hash == b.hash && a.events == b.events &&
                   (ra == 0 || !strcmp(ea.msg, eb.msg));
        check(same, "%s: chunks of %zu: %d \"%s\", whole: %d \"%s\"", what, c, rb, eb.msg, ra,
              ea.msg);
        if (!same)
            break;
    }
}

static void test_strings(void)
{
    const char *t = "{\"traceEvents\":[{\"name\":\"a\\u00e9\\ud83d\\ude00\\ud800x\\u0000\\\"\\\\\\/"
                    "\\b\\f\\n\\r\\t\",\"ts\":1682725898079292.000,\"args\":{\"Input Dims\":"
                    "[[1,2],[3,{\"a\":[4]}],[]]}}],\"distributedInfo\":{\"rank\":3}}";
    log_t l;
    ingest_error err;
    check(scan(t, strlen(t), strlen(t), &l, &err) == 0, "escapes: %s", err.msg);
    static const char want[] = "a\xc3\xa9\xf0\x9f\x98\x80?x\0\"\\/\b\f\n\r\t";
    check(l.name_len == sizeof want - 1 && !memcmp(l.name, want, sizeof want - 1),
          "escapes unescaped as yajl does (a lone high surrogate is \"?\")");
    check(!strcmp(l.ts, "1682725898079292.000"), "numbers as written (%s)", l.ts);
    check(l.ntok == 16, "Input Dims captured as 16 tokens (%d)", l.ntok);
    check(l.rank == 3, "distributedInfo.rank read (%d)", l.rank);
    same_in_chunks("escapes", t);
    /* surrogates as yajl 2.1 gives them */
    static const struct {
        const char *json, *want;
    } sur[] = {
        {"[{\"name\":\"\\ud800\\u0041\"}]", "\xf0\x90\x81\x81"},
        {"[{\"name\":\"\\udc00\"}]", "\xed\xb0\x80"},
        {"[{\"name\":\"\\ud800\"}]", "?"},
        {"[{\"name\":\"\\ud800\\n\"}]", "?\n"},
        {"[{\"name\":\"\\udbff\\udfff\"}]", "\xf4\x8f\xbf\xbf"},
    };
    for (size_t i = 0; i < sizeof sur / sizeof *sur; i++) {
        size_t n = strlen(sur[i].json);
        check(scan(sur[i].json, n, n, &l, &err) == 0 && l.name_len == strlen(sur[i].want) &&
              !memcmp(l.name, sur[i].want, l.name_len), "%s: as yajl gives it", sur[i].json);
    }
    /* an escaped key is matched by its text */
    const char *k = "[{\"n\\u0061me\":\"x\"}]";
    check(scan(k, strlen(k), 3, &l, &err) == 0 && l.name_len == 1 && l.name[0] == 'x',
          "escaped key");
}

static void expect_fault(const char *text, const char *needle)
{
    log_t l;
    ingest_error err;
    int rc = scan(text, strlen(text), strlen(text) ? strlen(text) : 1, &l, &err);
    check(rc < 0 && strstr(err.msg, needle), "%s: \"%s\" lacks \"%s\"", text, err.msg, needle);
    same_in_chunks(text, text);
}

static void test_faults(void)
{
    expect_fault("{\"traceEvents\":[{\"ph\":}", "byte 22: parse error");
    expect_fault("{\"traceEvents\":[{\"ph\":\"X\"", "premature EOF");
    expect_fault("{\"traceEvents\":[1]}", "traceEvents[0]: expected an object");
    expect_fault("{\"traceEvents\":[{},]}", "unallowed token");
    expect_fault("{\"traceEvents\":[{\"a\":[1,]}]}", "unallowed token");
    expect_fault("[{\"a\":01}]", "byte 7:");
    expect_fault("[{\"a\":\"\\x\"}]", "may not");
    expect_fault("[{\"a\":\"\\u12g4\"}]", "non-hex");
    expect_fault("[{\"a\":tru}]", "invalid string");
    expect_fault("[{\"a\":1.}]", "decimal point");
    expect_fault("[{\"a\":1e+}]", "exponent");
    expect_fault("[{\"a\":-}]", "minus sign");
    expect_fault("[{\"a\" 1}]", "colon");
    expect_fault("[{\"a\":1 \"b\":2}]", "inside map");
    expect_fault("[{\"a\":[1 2]}]", "after array element");
    expect_fault("[{\"a\":\"b\x01\"}]", "invalid character inside string");
    expect_fault("[{\"a\":\"\xff\"}]", "UTF8");
    expect_fault("[{\"a\":\"\xc3(\"}]", "UTF8");
    expect_fault("[{1:2}]", "must be a string");
    expect_fault("{\"traceEvents\":[]} x", "trailing garbage");
    expect_fault("{\"traceEvents\":{}}", "traceEvents: expected an array");
    expect_fault("{\"traceEvents\":[],\"traceEvents\":[]}", "twice");
    expect_fault("{\"schemaVersion\":1}", "no \"traceEvents\"");
    expect_fault("42", "expected a JSON object");
    expect_fault("hello", "byte 0:");
    expect_fault("", "premature EOF");
    expect_fault("[{\"name\":\"stop\"},{},{},{},{},{},{},{\"name\":\"stop\"}]",
                 "traceEvents[7]: stopped");
    /* a scalar cut by a chunk ends where it would in one piece */
    expect_fault("tr{\"{\"dur\"", "invalid string");
    expect_fault("{\"a\": 0.5d_x}", "inside map");
    expect_fault("{\"traceEvents\":[{\"a\":1}, {\"b\":-2e5x}]}", "inside map");
    char deep[200];
    int n = snprintf(deep, sizeof deep, "{\"traceEvents\":[],\"x\":");
    memset(deep + n, '[', 100);
    deep[n + 100] = '\0';
    expect_fault(deep, "nested deeper than 64");
    /* a fault before the nesting gets too deep is that fault, in any chunks */
    memcpy(deep + n + 3, "tru", 3);
    expect_fault(deep, "invalid string");
}

static void test_chunks(void)
{
    /* events of every shape, other members skipped, and odd whitespace */
    size_t cap = 1 << 16, len = 0;
    char *t = malloc(cap);
    len += (size_t)snprintf(t + len, cap - len,
                            "{\"schemaVersion\": 1, \"deviceProperties\": [{\"name\": \"A100\", "
                            "\"x\": [1, 2.5e3, \"s\\\"}]\", null, true, false, {}]}],\n"
                            "\"traceEvents\": [\n");
    for (int i = 0; i < 200; i++)
        len += (size_t)snprintf(t + len, cap - len,
                                "%s {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\\u00e9%d\", "
                                "\"ts\": %d.%03d, \"dur\": 1.5, \"args\": {\"correlation\": %d, "
                                "\"Input Dims\": [[%d, 3], []], \"Call stack\": \"a\\\\b\\n\"}}",
                                i ? ",\r\n" : "", i, 1000 + i, i % 1000, i, i);
    len += (size_t)snprintf(t + len, cap - len, "\n],\t\"distributedInfo\" : {\"rank\": 1} }\n");
    same_in_chunks("200 events", t);
    log_t l;
    ingest_error err;
    check(scan(t, len, 7, &l, &err) == 0 && l.events == 200 && l.rank == 1,
          "200 events in chunks of 7 (%s)", err.msg);
    free(t);
}

int main(void)
{
    test_strings();
    test_faults();
    test_chunks();
    return check_summary();
}
