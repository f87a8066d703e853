/*
 * trace_scan_unit.c — the inner level of the Chrome trace-event scanner
 * (trace_scan.c): the recursive-descent parser of one unit (an event, a
 * top-level member or key) over contiguous bytes — characters, strings,
 * numbers, literals, records of the schema's keys — and the error messages,
 * worded as yajl's. State in trace_scan_internal.h.
 */
#include "ingest/trace_scan_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors -------------------------------------------------------------------- */

const char *ts_fail_at(tscan *s, unsigned long long at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
const char *ts_fail_at(tscan *s, unsigned long long at, const char *fmt, ...)
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


/* The bytes at hand ended inside the unit. */
static const char *ts_more(tscan *s)
{
    if (s->final)
        return TS_FAIL(s, s->end, "parse error: premature EOF");
    s->perr = P_MORE;
    return NULL;
}

/* A message a reader's callback left in err, with the offset. */
int ts_reader_failed(tscan *s, unsigned long long at)
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

const char *ts_value(tscan *s, const char *q, int depth, int capture);

const char *ts_record(tscan *s, const char *q, int depth, const ts_keytab *t,
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
const char *ts_value(tscan *s, const char *q, int depth, int capture)
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

void ts_keytab_init(ts_keytab *t, const char *const *names, int id0)
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
const char *ts_key(tscan *s, const char *q, const ts_keytab *t, int level, int *id)
{
    const char *k;
    uint32_t n;
    const char *start = q;
    if (!(q = ts_string(s, q, &k, &n, 0)))
        return NULL;
    s->key = s->escaped ? NULL : k;
    s->keylen = s->escaped ? 0 : n;
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
const char *ts_record(tscan *s, const char *q, int depth, const ts_keytab *t,
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
        if (id == TS_NOKEY && capture == 2 && ts_push(s, TSCAN_KEY, s->key, s->keylen) < 0)
            return NULL;
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

void ts_record_start(tscan *s)
{
    s->rec.present = 0;
    s->seq = 0;
    s->alen = 0;
    s->ntok = 0;
}

/* Room to unescape every string of a unit of n bytes. */
int ts_reserve(tscan *s, size_t n)
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
