/*
 * trace_scan.c — the streaming scanner of Chrome trace-event JSON that both
 * Kineto readers use (trace_scan.h says what it gives them).
 *
 * Two levels. The outer level is a small resumable state machine over the
 * punctuation of the trace's skeleton: the top-level object, its keys, the
 * traceEvents array and the commas between events. Each value below that
 * (one event, one other top-level member, a key) is a "unit" parsed by a
 * recursive-descent parser over contiguous bytes. A unit nearly always lies
 * inside the chunk at hand and is parsed in place; when the chunk ends
 * inside one, its bytes are carried over, a cheap bracket counter finds
 * where it ends in the following chunks, and the whole unit is parsed once
 * from the carry buffer. Error messages follow yajl's wording.
 *
 * This file is the outer level (units, the carry, the skeleton, the entry
 * points); trace_scan_unit.c parses one unit; their shared state is in
 * trace_scan_internal.h.
 */
#include "ingest/trace_scan_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- units --------------------------------------------------------------------- */

/* Parses the unit starting at q (up to s->end); NULL with s->perr P_MORE
 * when the bytes run out, P_ERR with err filled. */
static const char *ts_unit(tscan *s, const char *q)
{
    s->perr = P_OK;
    int depth = s->bare ? 1 : 2; /* open around an event */
    switch (s->unit) {
    case U_TOP: {
        if (!(q = ts_value(s, q, 0, 0)))
            return NULL;
        return TS_FAIL(s, q, "expected a JSON object with \"traceEvents\"");
    }
    case U_ROOT_KEY: {
        int id;
        if (!(q = ts_key(s, q + 1, &s->root_keys, 2, &id)))
            return NULL;
        s->root_key = id == TS_EVENTS ? -2 : id != TS_NOKEY ? id : -1;
        return q;
    }
    case U_ROOT_VALUE: {
        if (s->root_key < 0 || !s->sc->on_root)
            return ts_value(s, q, 1, 0);
        ts_record_start(s);
        if (ts_reserve(s, (size_t)(s->end - q)) < 0)
            return NULL;
        int type = TSCAN_OBJECT;
        const char *v = q;
        if (*q == '{') {
            if (!(q = ts_record(s, q + 1, 2, &s->member_keys, NULL, 0)))
                return NULL;
        } else {
            int capture = *q == '[' && (s->sc->root_capture >> s->root_key & 1) ? 2 : 0;
            if (!(q = ts_value(s, q, 1, capture)))
                return NULL;
            if (capture) {
                s->rec.present = 1;
                s->rec.f[0] = (tscan_field){.type = TSCAN_ARRAY, .types = TSCAN_BIT(TSCAN_ARRAY),
                                            .tok = 0, .ntok = s->ntok};
            }
            type = *v == '[' ? TSCAN_ARRAY : *v == '"' ? TSCAN_STRING : *v == 't' ? TSCAN_TRUE
                   : *v == 'f' ? TSCAN_FALSE : *v == 'n' ? TSCAN_NULL : TSCAN_NUMBER;
        }
        s->rec.index = -1;
        s->rec.tok = s->tok;
        if (s->sc->on_root(s->ctx, s->root_key, type,
                           type == TSCAN_OBJECT || s->rec.present ? &s->rec : NULL,
                           s->err)) {
            ts_reader_failed(s, ts_off(s, q));
            return NULL;
        }
        return q;
    }
    case U_EVENT: {
        ts_record_start(s);
        if (ts_reserve(s, (size_t)(s->end - q)) < 0)
            return NULL;
        if (!(q = ts_record(s, q + 1, depth + 1, &s->ev_keys, &s->args_keys, 0)))
            return NULL;
        s->rec.index = s->nevents++;
        s->rec.tok = s->tok;
        if (s->sc->on_event && s->sc->on_event(s->ctx, &s->rec, s->err)) {
            ts_reader_failed(s, ts_off(s, q));
            return NULL;
        }
        return q;
    }
    }
    return q;
}

/* The outer state after a unit. */
static void ts_after_unit(tscan *s)
{
    switch (s->unit) {
    case U_ROOT_KEY: s->state = O_ROOT_COLON; break;
    case U_ROOT_VALUE: s->state = O_ROOT_NEXT; break;
    case U_EVENT: s->state = O_EV_NEXT; break;
    default: s->state = O_DONE; break;
    }
    s->unit = U_NONE;
}

/* ---- the carry ------------------------------------------------------------------ */

static int ts_carry_append(tscan *s, const char *p, size_t n)
{
    if (s->clen + n > TSCAN_MAX_UNIT) {
        ts_fail_at(s, s->cstart, "an event or top-level member longer than %zu MiB",
                   TSCAN_MAX_UNIT >> 20);
        return -1;
    }
    if (s->clen + n > s->ccap) {
        size_t cap = s->ccap ? s->ccap : 65536;
        while (cap < s->clen + n)
            cap *= 2;
        char *c = realloc(s->carry, cap);
        if (!c) {
            snprintf(s->err->msg, sizeof s->err->msg, "out of memory");
            return -1;
        }
        s->carry = c;
        s->ccap = cap;
    }
    memcpy(s->carry + s->clen, p, n);
    s->clen += n;
    return 0;
}

/* Where the carried unit ends in p[0..n): the bytes that belong to it (and
 * after a scalar, the byte that ends it); *found when it ends there. -1 on
 * an over-long token or nesting. */
static long ts_find(tscan *s, const char *p, size_t n, unsigned long long at, int *found)
{
    *found = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (s->fstr) {
            if (++s->ftok > TSCAN_MAX_TOKEN) {
                ts_fail_at(s, at + i, "no JSON token ends within %zu MiB (an over-long string "
                                      "or number)", TSCAN_MAX_TOKEN >> 20);
                return -1;
            }
            if (s->fesc)
                s->fesc = 0;
            else if (c == '\\')
                s->fesc = 1;
            else if (c == '"') {
                s->fstr = 0;
                if (s->fmode == 1) {
                    *found = 1;
                    return (long)i + 1;
                }
            }
            continue;
        }
        if (s->fmode == 2) {
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  c == '+' || c == '-' || c == '.')) {
                /* the byte after a scalar goes with it: the parser then
                 * sees the scalar end as in one piece (ts_carry_parse
                 * hands the byte back to the skeleton) */
                *found = 1;
                return (long)i + 1;
            }
            if (++s->ftok > TSCAN_MAX_TOKEN) {
                ts_fail_at(s, at + i, "no JSON token ends within %zu MiB (an over-long string "
                                      "or number)", TSCAN_MAX_TOKEN >> 20);
                return -1;
            }
            continue;
        }
        if (c == '"') {
            s->fstr = 1;
            s->ftok = 0;
        } else if (c == '{' || c == '[') {
            if (++s->fdepth + s->fbase > TSCAN_MAX_DEPTH) {
                /* too deep: the parser says so there, or finds a fault
                 * before, as it would in one piece */
                *found = 1;
                return (long)i + 1;
            }
        } else if (c == '}' || c == ']') {
            if (--s->fdepth <= 0) {
                *found = 1;
                return (long)i + 1;
            }
        }
    }
    return (long)n;
}

static const char *ts_step(tscan *s, const char *q, const char *end);

/* Parses the complete carried unit; 0 or -1. */
static int ts_carry_parse(tscan *s, int final)
{
    s->end = s->carry + s->clen;
    s->at0 = s->carry;
    s->off0 = s->cstart;
    s->final = final;
    const char *q = ts_unit(s, s->carry);
    if (!q) {
        if (s->perr == P_MORE) /* the finder and the parser disagree: a broken value */
            TS_FAIL(s, s->end, "parse error: premature end of a value");
        return -1;
    }
    if (q != s->end) {
        /* the value ends before where the bracket counter stopped (a scalar
         * followed by letters or digits): the skeleton takes the rest,
         * as it would have in one piece, and fails on it */
        s->carrying = 0;
        ts_after_unit(s);
        while (q < s->end) {
            if (ts_ws((unsigned char)*q)) {
                q++;
                continue;
            }
            const char *r = s->state == O_ROOT_NEXT || s->state == O_EV_NEXT ||
                                    s->state == O_DONE
                                ? ts_step(s, q, s->end)
                                : TS_FAIL(s, q, "lexical error: invalid char in json text.");
            if (!r)
                return -1;
            q = r;
        }
        s->clen = 0;
        return 0;
    }
    s->carrying = 0;
    s->clen = 0;
    ts_after_unit(s);
    return 0;
}

/* Starts carrying the unit at q..end (its parse ran out of bytes): the
 * bytes that belong to it, *found when it ends there; -1 on error. */
static long ts_carry_start(tscan *s, const char *q, const char *end, int *found)
{
    s->carrying = 1;
    s->clen = 0;
    s->cstart = ts_off(s, q);
    unsigned char c = (unsigned char)*q;
    s->fmode = c == '{' || c == '[' ? 0 : c == '"' ? 1 : 2;
    s->fdepth = 0;
    s->fstr = 0;
    s->fesc = 0;
    s->ftok = 0;
    s->fbase = s->unit == U_EVENT ? (s->bare ? 1 : 2) : s->unit == U_TOP ? 0 : 1;
    long k = ts_find(s, q, (size_t)(end - q), s->cstart, found);
    if (k < 0 || ts_carry_append(s, q, (size_t)k) < 0)
        return -1;
    return k;
}

/* ---- the skeleton --------------------------------------------------------------- */

static int ts_is_value_start(unsigned char c)
{
    return c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' ||
           c == 'f' || c == 'n';
}

/* Starts unit u at q: parsed in place, or carried. Returns the byte after
 * it, or NULL: the chunk is used up (carrying) or failed (s->perr). */
static const char *ts_begin_unit(tscan *s, int u, const char *q, const char *end)
{
    s->unit = u;
    const char *r = ts_unit(s, q);
    if (r) {
        ts_after_unit(s);
        return r;
    }
    if (s->perr == P_MORE) {
        s->perr = P_OK;
        int found;
        const char *at0 = s->at0, *e = s->end;
        unsigned long long off0 = s->off0;
        long k = ts_carry_start(s, q, end, &found);
        if (k < 0) {
            s->perr = P_ERR;
        } else if (found) { /* broken input the parser stopped on: parse it whole */
            if (ts_carry_parse(s, 1) < 0) {
                s->perr = P_ERR;
                return NULL;
            }
            s->at0 = at0;
            s->off0 = off0;
            s->end = e;
            s->final = 0;
            return q + k;
        }
    }
    return NULL;
}

/* One byte c = *q (not whitespace) of the skeleton: the byte after what it
 * began, or NULL (s->perr P_ERR: failed; else the rest is carried). */
static const char *ts_step(tscan *s, const char *q, const char *end)
{
    unsigned char c = (unsigned char)*q;
    const char *r = q + 1;
    switch (s->state) {
    case O_START:
        if (c == '{')
            s->state = O_ROOT_FIRST;
        else if (c == '[') {
            s->bare = 1;
            s->seen_events = 1;
            s->state = O_EV_FIRST;
        } else
            r = ts_begin_unit(s, U_TOP, q, end);
        break;
    case O_ROOT_FIRST:
    case O_ROOT_KEY:
        if (c == '}' && s->state == O_ROOT_FIRST)
            s->state = O_DONE;
        else if (c == '"')
            r = ts_begin_unit(s, U_ROOT_KEY, q, end);
        else
            r = TS_FAIL(s, q, "parse error: invalid object key (must be a string)");
        break;
    case O_ROOT_COLON:
        if (c == ':')
            s->state = O_ROOT_VALUE;
        else
            r = TS_FAIL(s, q, "parse error: object key and value must be separated by a "
                              "colon (':')");
        break;
    case O_ROOT_VALUE:
        if (s->root_key == -2 && c == '[') {
            if (s->seen_events)
                r = TS_FAIL(s, q, "traceEvents appears twice");
            s->seen_events = 1;
            s->state = O_EV_FIRST;
        } else if (s->root_key == -2 && c == '{') {
            r = TS_FAIL(s, q, "traceEvents: expected an array");
        } else if (!ts_is_value_start(c)) {
            r = TS_FAIL(s, q, "lexical error: invalid char in json text.");
        } else {
            r = ts_begin_unit(s, U_ROOT_VALUE, q, end);
        }
        break;
    case O_ROOT_NEXT:
        if (c == ',')
            s->state = O_ROOT_KEY;
        else if (c == '}')
            s->state = O_DONE;
        else
            r = TS_FAIL(s, q, "parse error: after key and value, inside map, I expect ',' "
                              "or '}'");
        break;
    case O_EV_FIRST:
    case O_EV_VALUE:
        if (c == '{')
            r = ts_begin_unit(s, U_EVENT, q, end);
        else if (c == ']' && s->state == O_EV_FIRST)
            s->state = s->bare ? O_DONE : O_ROOT_NEXT;
        else if (c == ']' || c == ',' || c == ':' || c == '}')
            r = TS_FAIL(s, q, "parse error: unallowed token at this point in JSON text");
        else if (ts_is_value_start(c))
            r = TS_FAIL(s, q, "traceEvents[%lld]: expected an object", s->nevents);
        else
            r = TS_FAIL(s, q, "lexical error: invalid char in json text.");
        break;
    case O_EV_NEXT:
        if (c == ',')
            s->state = O_EV_VALUE;
        else if (c == ']')
            s->state = s->bare ? O_DONE : O_ROOT_NEXT;
        else
            r = TS_FAIL(s, q, "parse error: after array element, I expect ',' or ']'");
        break;
    default:
        r = TS_FAIL(s, q, "parse error: trailing garbage");
        break;
    }
    return r;
}

int tscan_feed(tscan *s, const char *p, size_t n)
{
    const char *q = p, *end = p + n;
    s->at0 = p;
    s->off0 = s->base;
    s->end = end;
    s->final = 0;
    if (s->carrying) {
        int found;
        long k = ts_find(s, p, n, s->base, &found);
        if (k < 0 || ts_carry_append(s, p, (size_t)k) < 0)
            return -1;
        if (!found) {
            s->base += n;
            return 0;
        }
        if (ts_carry_parse(s, 1) < 0)
            return -1;
        q = p + k;
        s->at0 = p;
        s->off0 = s->base;
        s->end = end;
        s->final = 0;
    }
    while (q < end) {
        if (ts_ws((unsigned char)*q)) {
            q++;
            continue;
        }
        s->any = 1;
        const char *r = ts_step(s, q, end);
        if (!r) {
            if (s->perr == P_ERR)
                return -1;
            break; /* carrying the rest */
        }
        q = r;
    }
    s->base += n;
    return 0;
}

int tscan_finish(tscan *s)
{
    static const char nothing[1] = {0};
    s->at0 = nothing;
    s->off0 = s->base;
    s->end = nothing;
    if (s->carrying && ts_carry_parse(s, 1) < 0)
        return -1;
    if (s->state != O_DONE) {
        ts_fail_at(s, s->base, "parse error: premature EOF");
        return -1;
    }
    if (!s->seen_events) {
        snprintf(s->err->msg, sizeof s->err->msg,
                 "no \"traceEvents\" array: not a Chrome trace / Kineto file");
        s->err->offset = -1;
        return -1;
    }
    return 0;
}

/* ---- the scanner ----------------------------------------------------------------- */

tscan *tscan_new(const tscan_schema *schema, void *ctx, ingest_error *err)
{
    tscan *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->sc = schema;
    s->ctx = ctx;
    s->err = err;
    ts_keytab_init(&s->ev_keys, schema->event_keys, 0);
    ts_keytab_init(&s->args_keys, schema->args_keys, s->ev_keys.n);
    ts_keytab_init(&s->root_keys, schema->root_keys, 0);
    ts_keytab_init(&s->member_keys, schema->member_keys, 0);
    s->capture = schema->capture;
    tscan_reset(s);
    return s;
}

void tscan_reset(tscan *s)
{
    s->state = O_START;
    s->bare = s->seen_events = s->any = 0;
    s->root_key = -1;
    s->nevents = 0;
    s->base = 0;
    s->unit = U_NONE;
    s->carrying = 0;
    s->clen = 0;
    s->perr = P_OK;
}

void tscan_free(tscan *s)
{
    if (!s)
        return;
    free(s->arena);
    free(s->tok);
    free(s->carry);
    free(s);
}

long long tscan_events(const tscan *s)
{
    return s->nevents;
}

int tscan_run(tscan *s, ingest_stream *st, unsigned long long *bytes)
{
    tscan_reset(s);
    const char *p;
    size_t n;
    int got, rc = 0;
    while ((got = ingest_stream_next(st, &p, &n, s->err)) > 0)
        if (tscan_feed(s, p, n) < 0) {
            rc = -1;
            break;
        }
    if (got < 0)
        rc = -1;
    if (rc == 0 && s->base == 0) {
        snprintf(s->err->msg, sizeof s->err->msg, "the input is empty");
        rc = -1;
    } else if (rc == 0 && !s->any) {
        snprintf(s->err->msg, sizeof s->err->msg,
                 "the input holds no JSON value: %llu bytes of whitespace only", s->base);
        rc = -1;
    }
    if (rc == 0)
        rc = tscan_finish(s);
    *bytes = s->base;
    return rc;
}
