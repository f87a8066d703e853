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
 */
#include "ingest/trace_scan.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_OK = 0, P_MORE, P_ERR };

/* the outer state: what the skeleton expects next */
enum {
    O_START = 0,  /* the top-level value */
    O_ROOT_FIRST, /* after "{": a key or "}" */
    O_ROOT_KEY,   /* after ",": a key */
    O_ROOT_COLON, /* after a key */
    O_ROOT_VALUE, /* after ":" */
    O_ROOT_NEXT,  /* after a member: "," or "}" */
    O_EV_FIRST,   /* after "[": an event or "]" */
    O_EV_VALUE,   /* after ",": an event */
    O_EV_NEXT,    /* after an event: "," or "]" */
    O_DONE,       /* the top-level value ended */
};

/* units: values parsed as a whole */
enum { U_NONE = 0, U_TOP, U_ROOT_KEY, U_ROOT_VALUE, U_EVENT };

#define TS_ARGS 0xFE   /* key id of "args" in an event */
#define TS_EVENTS 0xFD /* key id of "traceEvents" at the top level */
#define TS_NOKEY 0xFF

typedef struct ts_key {
    const char *name;
    unsigned len;
    unsigned char id;
} ts_keydef;

typedef struct ts_keytab {
    ts_keydef k[TSCAN_MAX_FIELDS + 1];
    int n;
    uint64_t lens; /* bit l: a key of length l (< 64) */
} ts_keytab;

struct tscan {
    const tscan_schema *sc;
    void *ctx;
    ingest_error *err;
    ts_keytab ev_keys, args_keys, root_keys, member_keys;
    uint32_t capture;

    /* outer state */
    int state;
    int bare;              /* the top-level value is the events array itself */
    int seen_events;
    int root_key;          /* -2 traceEvents, -1 skipped, else index in root_keys */
    int any;               /* a byte other than whitespace was seen */
    long long nevents;
    unsigned long long base; /* offset of the chunk being fed */

    /* the unit being parsed */
    int unit;
    const char *end;       /* end of the bytes at hand */
    const char *at0;       /* a pointer ... */
    unsigned long long off0; /* ... and its offset in the input */
    int final;             /* the bytes at hand end the unit */
    int perr;
    int escaped;           /* the last string read had escapes */
    unsigned seq;          /* members read in the record */
    tscan_record rec;
    char *arena;           /* unescaped strings of the record */
    size_t alen, acap;
    tscan_token *tok;
    int ntok, tokcap;
    char keybuf[256];      /* an escaped key, unescaped */

    /* a unit cut by the end of a chunk */
    int carrying;
    char *carry;
    size_t clen, ccap;
    unsigned long long cstart;
    int fmode;             /* finder: 0 container, 1 string, 2 scalar */
    int fdepth, fstr, fesc, fbase;
    size_t ftok;           /* bytes of the current string or scalar */
};

/* ---- errors -------------------------------------------------------------------- */

static unsigned long long ts_off(const tscan *s, const char *q)
{
    return s->off0 + (unsigned long long)(q - s->at0);
}

static const char *ts_fail_at(tscan *s, unsigned long long at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *ts_fail_at(tscan *s, unsigned long long at, const char *fmt, ...)
{
    char msg[sizeof s->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(s->err->msg, sizeof s->err->msg, "byte %llu: %.*s", at,
             (int)sizeof s->err->msg - 32, msg);
    s->err->line = 0;
    s->err->offset = at > LONG_MAX ? LONG_MAX : (long)at;
    s->perr = P_ERR;
    return NULL;
}

#define TS_FAIL(s, q, ...) ts_fail_at((s), ts_off((s), (q)), __VA_ARGS__)

/* The bytes at hand ended inside the unit. */
static const char *ts_more(tscan *s)
{
    if (s->final)
        return TS_FAIL(s, s->end, "parse error: premature EOF");
    s->perr = P_MORE;
    return NULL;
}

/* A message a reader's callback left in err, with the offset. */
static int ts_reader_failed(tscan *s, unsigned long long at)
{
    char msg[sizeof s->err->msg];
    memcpy(msg, s->err->msg, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    int limit = s->err->limit;
    ts_fail_at(s, at, "%s", msg);
    s->err->limit = limit;
    return -1;
}

/* ---- characters ---------------------------------------------------------------- */

/* 0 plain, 1 '"', 2 '\\', 3 control, 4 not ASCII */
static const unsigned char ts_cls[256] = {
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
};

/* The bytes of x (8 of the input) that may be '"', '\\', a control
 * character or not ASCII: their high bits (a few false ones may follow the
 * first true one, never precede it). */
static inline uint64_t ts_special8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t qt = x ^ (ones * '"'), bs = x ^ (ones * '\\');
    return (((qt - ones) & ~qt) | ((bs - ones) & ~bs) | ((x - ones * 0x20) & ~x) | x) & high;
}

/* The position of the first flagged byte of ts_special8's mask, in memory
 * order (big-endian: 0, the bytes are then looked at one by one, as the
 * false flags may come first there). */
static inline int ts_first_byte(uint64_t m)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    (void)m;
    return 0;
#else
    return __builtin_ctzll(m) >> 3;
#endif
}

/* JSON whitespace as yajl takes it (\v and \f too) */
static inline int ts_ws(unsigned char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f';
}

static inline const char *ts_skip_ws(const tscan *s, const char *q)
{
    while (q < s->end && ts_ws((unsigned char)*q))
        q++;
    return q;
}

static int ts_hex(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static unsigned ts_hex4(const char *p)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 4 | (unsigned)ts_hex((unsigned char)p[i]);
    return v;
}

static size_t ts_utf8(unsigned cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(cp >> 6 | 0xC0);
        o[1] = (char)((cp & 0x3F) | 0x80);
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(cp >> 12 | 0xE0);
        o[1] = (char)((cp >> 6 & 0x3F) | 0x80);
        o[2] = (char)((cp & 0x3F) | 0x80);
        return 3;
    }
    if (cp < 0x200000) {
        o[0] = (char)(cp >> 18 | 0xF0);
        o[1] = (char)((cp >> 12 & 0x3F) | 0x80);
        o[2] = (char)((cp >> 6 & 0x3F) | 0x80);
        o[3] = (char)((cp & 0x3F) | 0x80);
        return 4;
    }
    o[0] = '?';
    return 1;
}

/* Unescapes the checked string body a[0..n) into o as yajl 2.1 does (a
 * high surrogate takes the next \u escape whatever it is; one without is
 * "?"; a lone low surrogate is encoded as it is). Returns the length
 * written (<= n). */
static size_t ts_unescape(const char *a, size_t n, char *o)
{
    size_t i = 0, w = 0;
    while (i < n) {
        if (a[i] != '\\') {
            o[w++] = a[i++];
            continue;
        }
        char c = a[++i];
        switch (c) {
        case 'r': o[w++] = '\r'; break;
        case 'n': o[w++] = '\n'; break;
        case 't': o[w++] = '\t'; break;
        case 'f': o[w++] = '\f'; break;
        case 'b': o[w++] = '\b'; break;
        case 'u': {
            unsigned cp = ts_hex4(a + i + 1);
            i += 4;
            if ((cp & 0xFC00) == 0xD800) {
                if (i + 2 < n && a[i + 1] == '\\' && a[i + 2] == 'u') {
                    unsigned lo = ts_hex4(a + i + 3);
                    cp = ((cp & 0x3F) << 10) | ((((cp >> 6) & 0xF) + 1) << 16) | (lo & 0x3FF);
                    i += 6;
                } else {
                    o[w++] = '?';
                    break;
                }
            }
            w += ts_utf8(cp, o + w);
            break;
        }
        default: o[w++] = c; break; /* " \ / */
        }
        i++;
    }
    return w;
}

/* ---- values -------------------------------------------------------------------- */

/* A string whose opening quote is at q[-1]: returns the byte after the
 * closing quote, with *out / *len its text (unescaped when want) or NULL. */
static const char *ts_string(tscan *s, const char *q, const char **out, uint32_t *len, int want)
{
    const char *start = q, *end = s->end;
    int esc = 0;
    for (;;) {
        while (q + 8 <= end) { /* eight plain bytes at a time */
            uint64_t x, m;
            memcpy(&x, q, 8);
            if ((m = ts_special8(x))) {
                q += ts_first_byte(m);
                break;
            }
            q += 8;
        }
        while (q < end && !ts_cls[(unsigned char)*q])
            q++;
        if (q >= end)
            return ts_more(s);
        unsigned char c = (unsigned char)*q;
        switch (ts_cls[c]) {
        case 1:
            goto done;
        case 2:
            if (q + 1 >= end)
                return ts_more(s);
            esc = 1;
            c = (unsigned char)q[1];
            if (c == 'u') {
                if (q + 6 > end) {
                    for (const char *h = q + 2; h < end; h++)
                        if (ts_hex((unsigned char)*h) < 0)
                            return TS_FAIL(s, h, "lexical error: invalid (non-hex) character "
                                                 "occurs after '\\u' inside string.");
                    return ts_more(s);
                }
                for (int i = 2; i < 6; i++)
                    if (ts_hex((unsigned char)q[i]) < 0)
                        return TS_FAIL(s, q + i, "lexical error: invalid (non-hex) character "
                                                 "occurs after '\\u' inside string.");
                q += 6;
            } else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                       c == 'r' || c == 't') {
                q += 2;
            } else {
                return TS_FAIL(s, q + 1, "lexical error: inside a string, '\\' occurs before a "
                                         "character which it may not.");
            }
            break;
        case 3:
            return TS_FAIL(s, q, "lexical error: invalid character inside string.");
        default: { /* UTF-8 as yajl checks it: a lead byte and its continuations */
            int more = (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xE ? 2 : (c >> 3) == 0x1E ? 3 : -1;
            if (more < 0)
                return TS_FAIL(s, q, "lexical error: invalid bytes in UTF8 string.");
            for (int i = 1; i <= more; i++) {
                if (q + i >= end)
                    return ts_more(s);
                if (((unsigned char)q[i] >> 6) != 0x2)
                    return TS_FAIL(s, q + i, "lexical error: invalid bytes in UTF8 string.");
            }
            q += more + 1;
        }
        }
    }
done:
    s->escaped = esc;
    if ((size_t)(q - start) > TSCAN_MAX_TOKEN)
        return TS_FAIL(s, q, "no JSON token ends within %zu MiB (an over-long string or number)",
                       TSCAN_MAX_TOKEN >> 20);
    if (out) {
        size_t n = (size_t)(q - start);
        if (esc && want) {
            char *o = s->arena + s->alen;
            n = ts_unescape(start, n, o);
            o[n] = '\0';
            s->alen += n + 1;
            *out = o;
        } else {
            *out = start;
        }
        *len = (uint32_t)n;
    }
    return q + 1;
}

static inline int ts_digit(const char *q, const char *end)
{
    return q < end && *q >= '0' && *q <= '9';
}

/* A number at q (yajl's grammar); the bytes after it must not continue it. */
static const char *ts_number(tscan *s, const char *q)
{
    const char *end = s->end;
    if (*q == '-') {
        q++;
        if (q >= end)
            return ts_more(s);
        if (!ts_digit(q, end))
            return TS_FAIL(s, q, "lexical error: malformed number, a digit is required after "
                                 "the minus sign.");
    }
    if (*q == '0')
        q++;
    else
        while (ts_digit(q, end))
            q++;
    if (q < end && *q == '.') {
        q++;
        if (q >= end)
            return ts_more(s);
        if (!ts_digit(q, end))
            return TS_FAIL(s, q, "lexical error: malformed number, a digit is required after "
                                 "the decimal point.");
        while (ts_digit(q, end))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-'))
            q++;
        if (q >= end)
            return ts_more(s);
        if (!ts_digit(q, end))
            return TS_FAIL(s, q, "lexical error: malformed number, a digit is required after "
                                 "the exponent.");
        while (ts_digit(q, end))
            q++;
    }
    if (q >= end && !s->final)
        return ts_more(s); /* it may go on in the next chunk */
    return q;
}

/* true, false or null at q; *type what it is. */
static const char *ts_literal(tscan *s, const char *q, int *type)
{
    const char *lit = *q == 't' ? "true" : *q == 'f' ? "false" : "null";
    *type = *q == 't' ? TSCAN_TRUE : *q == 'f' ? TSCAN_FALSE : TSCAN_NULL;
    size_t n = strlen(lit);
    for (size_t i = 0; i < n; i++) {
        if (q + i >= s->end)
            return ts_more(s);
        if (q[i] != lit[i])
            return TS_FAIL(s, q + i, "lexical error: invalid string in json text.");
    }
    return q + n;
}

static const char *ts_value(tscan *s, const char *q, int depth, int capture);

static const char *ts_record(tscan *s, const char *q, int depth, const ts_keytab *t,
                             const ts_keytab *args_tab, int capture);

/* The members of an object after its "{", skipped (or captured). */
static const char *ts_skip_object(tscan *s, const char *q, int depth, int capture)
{
    return ts_record(s, q, depth, NULL, NULL, capture);
}

static const char *ts_skip_array(tscan *s, const char *q, int depth, int capture)
{
    if ((q = ts_skip_ws(s, q)) >= s->end)
        return ts_more(s);
    if (*q == ']')
        return q + 1;
    for (;;) {
        if (*q == ']' || *q == ',' || *q == ':' || *q == '}')
            return TS_FAIL(s, q, "parse error: unallowed token at this point in JSON text");
        if (!(q = ts_value(s, q, depth, capture)))
            return NULL;
        if ((q = ts_skip_ws(s, q)) >= s->end)
            return ts_more(s);
        if (*q == ']')
            return q + 1;
        if (*q != ',')
            return TS_FAIL(s, q, "parse error: after array element, I expect ',' or ']'");
        if ((q = ts_skip_ws(s, q + 1)) >= s->end)
            return ts_more(s);
    }
}

static int ts_push(tscan *s, int type, const char *text, uint32_t len)
{
    if (s->ntok == s->tokcap) {
        int cap = s->tokcap ? s->tokcap * 2 : 64;
        tscan_token *t = realloc(s->tok, (size_t)cap * sizeof *t);
        if (!t) {
            snprintf(s->err->msg, sizeof s->err->msg, "out of memory");
            s->perr = P_ERR;
            return -1;
        }
        s->tok = t;
        s->tokcap = cap;
    }
    s->tok[s->ntok++] = (tscan_token){.type = (unsigned char)type, .len = len, .text = text};
    return 0;
}

/* Any value at q (not whitespace), skipped, or its tokens kept when capture. */
static const char *ts_value(tscan *s, const char *q, int depth, int capture)
{
    const char *text = q;
    uint32_t len = 0;
    int type;
    switch (*q) {
    case '"':
        type = TSCAN_STRING;
        q = ts_string(s, q + 1, capture ? &text : NULL, &len, 1);
        break;
    case '{':
    case '[':
        if (depth >= TSCAN_MAX_DEPTH)
            return TS_FAIL(s, q, "arrays and objects nested deeper than %d", TSCAN_MAX_DEPTH);
        type = *q == '{' ? TSCAN_OBJECT : TSCAN_ARRAY;
        if (capture && ts_push(s, type, NULL, 0) < 0)
            return NULL;
        q = type == TSCAN_OBJECT ? ts_skip_object(s, q + 1, depth + 1, capture)
                                 : ts_skip_array(s, q + 1, depth + 1, capture);
        if (q && capture && ts_push(s, TSCAN_END, NULL, 0) < 0)
            return NULL;
        return q;
    case 't':
    case 'f':
    case 'n':
        q = ts_literal(s, q, &type);
        break;
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        type = TSCAN_NUMBER;
        q = ts_number(s, q);
        len = q ? (uint32_t)(q - text) : 0;
        break;
    case '}':
    case ']':
    case ',':
    case ':':
        return TS_FAIL(s, q, "parse error: unallowed token at this point in JSON text");
    default:
        return TS_FAIL(s, q, "lexical error: invalid char in json text.");
    }
    if (q && capture && ts_push(s, type, text, len) < 0)
        return NULL;
    return q;
}

/* ---- records ------------------------------------------------------------------- */

static void ts_keytab_init(ts_keytab *t, const char *const *names, int id0)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; names && names[i] && id0 + i < TSCAN_MAX_FIELDS; i++) {
        size_t n = strlen(names[i]);
        t->k[t->n++] = (ts_keydef){.name = names[i], .len = (unsigned)n,
                                .id = (unsigned char)(id0 + i)};
        if (n < 64)
            t->lens |= 1ull << n;
    }
}

static int ts_match(const ts_keytab *t, const char *k, size_t n)
{
    if (!t || n >= 64 || !(t->lens >> n & 1))
        return TS_NOKEY;
    for (int i = 0; i < t->n; i++)
        if (t->k[i].len == n && !memcmp(t->k[i].name, k, n))
            return t->k[i].id;
    return TS_NOKEY;
}

/* A key at q (after its quote) matched in t (args: also "args"). */
static const char *ts_key(tscan *s, const char *q, const ts_keytab *t, int level, int *id)
{
    const char *k;
    uint32_t n;
    const char *start = q;
    if (!(q = ts_string(s, q, &k, &n, 0)))
        return NULL;
    if (s->escaped) { /* an escaped key: compare its text */
        if (n >= sizeof s->keybuf) {
            *id = TS_NOKEY;
            return q;
        }
        n = (uint32_t)ts_unescape(start, n, s->keybuf);
        k = s->keybuf;
    }
    *id = ts_match(t, k, n);
    if (*id == TS_NOKEY && level == 1 && n == 4 && !memcmp(k, "args", 4))
        *id = TS_ARGS;
    if (*id == TS_NOKEY && level == 2 && n == 11 && !memcmp(k, "traceEvents", 11))
        *id = TS_EVENTS;
    return q;
}

/* The value of member id of the record at q. */
static const char *ts_field(tscan *s, const char *q, int id, int depth)
{
    tscan_field *f = &s->rec.f[id];
    if (!(s->rec.present >> id & 1)) {
        s->rec.present |= 1u << id;
        f->types = 0;
        f->first = (unsigned short)(s->seq < 65535 ? s->seq : 65535);
    }
    s->seq++;
    f->text = NULL;
    f->len = 0;
    f->ntok = 0;
    int type;
    switch (*q) {
    case '"':
        type = TSCAN_STRING;
        q = ts_string(s, q + 1, &f->text, &f->len, 1);
        break;
    case '-':
    case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        type = TSCAN_NUMBER;
        f->text = q;
        q = ts_number(s, q);
        f->len = q ? (uint32_t)(q - f->text) : 0;
        break;
    case '[':
    case '{': {
        type = *q == '[' ? TSCAN_ARRAY : TSCAN_OBJECT;
        int capture = type == TSCAN_ARRAY && (s->capture >> id & 1);
        f->tok = s->ntok;
        q = ts_value(s, q, depth, capture);
        f->ntok = capture ? s->ntok - f->tok : 0;
        break;
    }
    default:
        type = *q == 't' ? TSCAN_TRUE : *q == 'f' ? TSCAN_FALSE : TSCAN_NULL;
        q = ts_value(s, q, depth, 0);
        break;
    }
    f->type = (unsigned char)type;
    f->types |= (unsigned char)TSCAN_BIT(type);
    return q;
}

/* The members of an object (after its "{") into the record: keys in t,
 * and when args_tab is given, "args" whose members are keys of args_tab.
 * The other members are skipped (their values captured when capture). */
static const char *ts_record(tscan *s, const char *q, int depth, const ts_keytab *t,
                             const ts_keytab *args_tab, int capture)
{
    if ((q = ts_skip_ws(s, q)) >= s->end)
        return ts_more(s);
    if (*q == '}')
        return q + 1;
    for (;;) {
        if (*q != '"')
            return TS_FAIL(s, q, "parse error: invalid object key (must be a string)");
        int id;
        if (!(q = ts_key(s, q + 1, t, args_tab != NULL, &id)))
            return NULL;
        if (q < s->end && *q == ':')
            q++;
        else {
            if ((q = ts_skip_ws(s, q)) >= s->end)
                return ts_more(s);
            if (*q != ':')
                return TS_FAIL(s, q, "parse error: object key and value must be separated by a "
                                     "colon (':')");
            q++;
        }
        if ((q = ts_skip_ws(s, q)) >= s->end)
            return ts_more(s);
        if (id == TS_NOKEY)
            q = ts_value(s, q, depth, capture);
        else if (id == TS_ARGS && *q == '{')
            q = depth >= TSCAN_MAX_DEPTH
                    ? TS_FAIL(s, q, "arrays and objects nested deeper than %d", TSCAN_MAX_DEPTH)
                    : ts_record(s, q + 1, depth + 1, args_tab, NULL, 0);
        else if (id == TS_ARGS)
            q = ts_value(s, q, depth, 0);
        else
            q = ts_field(s, q, id, depth);
        if (!q)
            return NULL;
        if (q < s->end && *q == ',') {
            if ((q = ts_skip_ws(s, q + 1)) >= s->end)
                return ts_more(s);
            continue;
        }
        if ((q = ts_skip_ws(s, q)) >= s->end)
            return ts_more(s);
        if (*q == '}')
            return q + 1;
        if (*q != ',')
            return TS_FAIL(s, q, "parse error: after key and value, inside map, I expect ',' or "
                                 "'}'");
        if ((q = ts_skip_ws(s, q + 1)) >= s->end)
            return ts_more(s);
    }
}

static void ts_record_start(tscan *s)
{
    s->rec.present = 0;
    s->seq = 0;
    s->alen = 0;
    s->ntok = 0;
}

/* Room to unescape every string of a unit of n bytes. */
static int ts_reserve(tscan *s, size_t n)
{
    if (n + 1 <= s->acap)
        return 0;
    size_t cap = s->acap ? s->acap : 4096;
    while (cap < n + 1)
        cap *= 2;
    char *a = realloc(s->arena, cap);
    if (!a) {
        snprintf(s->err->msg, sizeof s->err->msg, "out of memory");
        s->perr = P_ERR;
        return -1;
    }
    s->arena = a;
    s->acap = cap;
    return 0;
}

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
            if (!(q = ts_value(s, q, 1, 0)))
                return NULL;
            type = *v == '[' ? TSCAN_ARRAY : *v == '"' ? TSCAN_STRING : *v == 't' ? TSCAN_TRUE
                   : *v == 'f' ? TSCAN_FALSE : *v == 'n' ? TSCAN_NULL : TSCAN_NUMBER;
        }
        s->rec.index = -1;
        s->rec.tok = s->tok;
        if (s->sc->on_root(s->ctx, s->root_key, type, type == TSCAN_OBJECT ? &s->rec : NULL,
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
