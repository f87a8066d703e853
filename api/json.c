/*
 * json.c — JSON text of response documents. Jansson prints reals with 17
 * significant digits (0.05 becomes 0.050000000000000003); responses carry
 * the shortest text that reads back as the same double instead
 * (common/numtext.h), so a price sent as 0.05 comes back as 0.05 and a
 * coefficient loses nothing. Non-finite reals, which JSON cannot express,
 * are written as null. Objects keep their insertion order. The text is
 * built in one growing buffer (no stdio stream: a response is rendered per
 * request, and a locked putc per character showed in profiles).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/http.h"
#include "common/numtext.h"

typedef struct jbuf {
    char *p;
    size_t len, cap;
    int failed;
} jbuf;

/* Room for n more bytes (and a NUL); 0, or -1 with b->failed set. */
static int reserve(jbuf *b, size_t n)
{
    if (b->failed)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void put_bytes(jbuf *b, const char *s, size_t n)
{
    if (n && !reserve(b, n)) {
        memcpy(b->p + b->len, s, n);
        b->len += n;
    }
}

static void put_char(jbuf *b, char c)
{
    if (!reserve(b, 1))
        b->p[b->len++] = c;
}

static void put_text(jbuf *b, const char *s)
{
    put_bytes(b, s, strlen(s));
}

static void put_string(jbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    put_char(b, '"');
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put_bytes(b, s + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': put_text(b, "\\\""); break;
        case '\\': put_text(b, "\\\\"); break;
        case '\n': put_text(b, "\\n"); break;
        case '\r': put_text(b, "\\r"); break;
        case '\t': put_text(b, "\\t"); break;
        case '\b': put_text(b, "\\b"); break;
        case '\f': put_text(b, "\\f"); break;
        default:
            put_text(b, "\\u00");
            put_char(b, hex[c >> 4]);
            put_char(b, hex[c & 15]);
        }
    }
    put_bytes(b, s + start, n - start);
    put_char(b, '"');
}

static void put_value(jbuf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *item;
        int first = 1;
        put_char(b, '{');
        json_object_foreach((json_t *)v, key, item)
        {
            if (!first)
                put_char(b, ',');
            first = 0;
            put_string(b, key, strlen(key));
            put_char(b, ':');
            put_value(b, item);
        }
        put_char(b, '}');
        break;
    }
    case JSON_ARRAY:
        put_char(b, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                put_char(b, ',');
            put_value(b, json_array_get(v, i));
        }
        put_char(b, ']');
        break;
    case JSON_STRING:
        put_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER: {
        char buf[32];
        int n = snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        put_bytes(b, buf, (size_t)n);
        break;
    }
    case JSON_REAL: {
        double x = json_real_value(v);
        char buf[32];
        if (x - x != 0) /* inf or nan */
            put_text(b, "null");
        else
            put_bytes(b, buf, (size_t)numtext_format_shortest(x, buf));
        break;
    }
    case JSON_TRUE: put_text(b, "true"); break;
    case JSON_FALSE: put_text(b, "false"); break;
    default: put_text(b, "null"); break;
    }
}

char *api_json_text(const json_t *doc, size_t *len)
{
    jbuf b = {0};
    put_value(&b, doc);
    if (reserve(&b, 0)) {
        free(b.p);
        return NULL;
    }
    b.p[b.len] = '\0';
    *len = b.len;
    return b.p;
}
