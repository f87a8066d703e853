/*
 * trace_scan.h — a streaming scanner for Chrome trace-event JSON (PyTorch
 * Kineto traces), shared by the readers in kineto.c and kineto_events.c.
 *
 * It knows the shape of a trace — {"traceEvents": [{...}, ...], ...} or a
 * bare array of events — and hands each event to the reader as one record
 * of the members the reader asked for (a schema of key names, at the event's
 * top level and inside its "args" object). Everything else is checked and
 * skipped without building anything. Input comes in chunks of any size (a
 * token may be split anywhere); an event cut by a chunk's end is carried
 * over, so memory is one event plus the chunk, whatever the trace's size.
 *
 * The JSON is checked as strictly as yajl did (the reader before it):
 * grammar, escapes, UTF-8 inside strings, nesting deeper than
 * TSCAN_MAX_DEPTH, a token longer than TSCAN_MAX_TOKEN. Strings are given
 * unescaped as yajl gives them (\uXXXX as UTF-8, surrogate pairs joined);
 * numbers as written, for the reader to parse (common/numtext.h).
 * Errors are messages "byte N: ..." with N the offset in the (gunzipped)
 * input.
 */
#ifndef PERFCAST_INGEST_TRACE_SCAN_H
#define PERFCAST_INGEST_TRACE_SCAN_H

#include <stddef.h>
#include <stdint.h>

#include "ingest/stream.h"
#include "ingest/trace.h"

#define TSCAN_MAX_DEPTH 64                 /* arrays and objects open at once */
#define TSCAN_MAX_TOKEN ((size_t)8 << 20)  /* bytes of one string or number */
#define TSCAN_MAX_UNIT ((size_t)64 << 20)  /* bytes of one event or top-level member */
#define TSCAN_MAX_FIELDS 32                /* event + args keys of a schema */

/* JSON types of a value */
enum tscan_type {
    TSCAN_ABSENT = 0, TSCAN_STRING, TSCAN_NUMBER, TSCAN_TRUE, TSCAN_FALSE, TSCAN_NULL,
    TSCAN_OBJECT, TSCAN_ARRAY, TSCAN_END, /* TSCAN_END: a closing bracket, in tokens only */
    TSCAN_KEY, /* a member's key before its value, in the tokens of root_capture only
                  (an escaped key is given empty) */
};
#define TSCAN_BIT(t) (1u << (t))

/* One member of a record. Several members of the same name: the value is
 * the last one's, types has the type of each. */
typedef struct tscan_field {
    unsigned char type;   /* of the last value */
    unsigned char types;  /* TSCAN_BIT of every value's type */
    unsigned short first; /* order of the first one among the record's members read */
    uint32_t len;
    const char *text;     /* string (unescaped) or number (as written); valid during the call */
    int tok, ntok;        /* captured arrays: their tokens in the record's tok[] */
} tscan_field;

/* A token of a captured array (the schema's capture mask): the brackets
 * (TSCAN_ARRAY, TSCAN_OBJECT, TSCAN_END) and the values inside. */
typedef struct tscan_token {
    unsigned char type;
    uint32_t len;
    const char *text;
} tscan_token;

typedef struct tscan_record {
    long long index;      /* position in traceEvents */
    uint32_t present;     /* bit i: field i was there */
    tscan_field f[TSCAN_MAX_FIELDS];
    const tscan_token *tok;
} tscan_record;

static inline const tscan_field *tscan_get(const tscan_record *r, int i)
{
    return (r->present >> i & 1) ? &r->f[i] : NULL;
}

/* Called per object in traceEvents; a non-zero return stops the scan with
 * the message the reader left in err (the scanner adds the byte offset). */
typedef int (*tscan_event_fn)(void *ctx, const tscan_record *ev, ingest_error *err);
/* Called per top-level member named in root_keys: its index there, the
 * value's type and, for an object, its members named in member_keys; for an
 * array of a root key in root_capture, obj->f[0] holds its tokens, the keys
 * of the objects inside as TSCAN_KEY tokens. */
typedef int (*tscan_root_fn)(void *ctx, int key, int type, const tscan_record *obj,
                             ingest_error *err);

typedef struct tscan_schema {
    const char *const *event_keys; /* NULL-terminated; fields 0.. */
    const char *const *args_keys;  /* NULL-terminated; fields after the event keys */
    uint32_t capture;              /* fields whose array values are kept as tokens */
    const char *const *root_keys;  /* NULL-terminated, or NULL */
    const char *const *member_keys;/* of root_keys' objects; NULL-terminated, or NULL */
    uint32_t root_capture;         /* root keys (bit = index) whose array values are captured */
    tscan_event_fn on_event;
    tscan_root_fn on_root;
} tscan_schema;

typedef struct tscan tscan;

/* A scanner for one reader; NULL when out of memory. */
tscan *tscan_new(const tscan_schema *schema, void *ctx, ingest_error *err);
void tscan_free(tscan *s);

/* Starts a new input. */
void tscan_reset(tscan *s);

/* The next chunk of input. 0, or -1 with err filled. */
int tscan_feed(tscan *s, const char *p, size_t n);

/* The end of the input. 0, or -1 with err filled ("no traceEvents"...). */
int tscan_finish(tscan *s);

/* Scans the whole stream (from where it is): tscan_reset, feed, finish.
 * *bytes the bytes read. 0, or -1 with err filled. */
int tscan_run(tscan *s, ingest_stream *st, unsigned long long *bytes);

/* Events seen in traceEvents so far (objects or not). */
long long tscan_events(const tscan *s);

#endif
