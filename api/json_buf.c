/*
 * json_buf.c — the buffer JSON writer of json_buf.h.
 */
#include "api/json_buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"
#include "common/prefault.h"

static int grow(jbuf *b, size_t n)
{
    if (b->oom)
        return -1;
    if (b->len + n + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

/* a large new reservation's pages are mapped at once (common/prefault.h) */
void jbuf_reserve(jbuf *b, size_t n)
{
    size_t before = b->cap;
    if (grow(b, n) == 0 && b->cap > before)
        prefault_write(b->p + b->len, b->cap - b->len);
}

void jbuf_insert(jbuf *b, size_t at, const char *s, size_t n)
{
    if (at > b->len || grow(b, n) < 0)
        return;
    memmove(b->p + at + n, b->p + at, b->len - at);
    memcpy(b->p + at, s, n);
    b->len += n;
}

void jbuf_raw_slow(jbuf *b, const char *s, size_t n)
{
    if (grow(b, n) < 0)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

void jbuf_lit(jbuf *b, const char *s)
{
    jbuf_raw(b, s, strlen(s));
}

static void put_string(jbuf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    jbuf_raw(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        jbuf_raw(b, s + start, i - start);
        start = i + 1;
        switch (c) {
        case '"': jbuf_raw(b, "\\\"", 2); break;
        case '\\': jbuf_raw(b, "\\\\", 2); break;
        case '\n': jbuf_raw(b, "\\n", 2); break;
        case '\r': jbuf_raw(b, "\\r", 2); break;
        case '\t': jbuf_raw(b, "\\t", 2); break;
        case '\b': jbuf_raw(b, "\\b", 2); break;
        case '\f': jbuf_raw(b, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            jbuf_raw(b, u, 6);
        }
        }
    }
    jbuf_raw(b, s + start, n - start);
    jbuf_raw(b, "\"", 1);
}

void jbuf_string(jbuf *b, const char *s)
{
    if (s)
        put_string(b, s, strlen(s));
    else
        jbuf_raw(b, "null", 4);
}

void jbuf_key(jbuf *b, const char *key)
{
    put_string(b, key, strlen(key));
    jbuf_raw(b, ":", 1);
}

/* decimal digits of v, at the end of buf[24]; returns where they start */
static char *int_digits(long long v, char *end)
{
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char *p = end;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return p;
}

void jbuf_int(jbuf *b, long long v)
{
    char buf[24], *p = int_digits(v, buf + sizeof buf);
    jbuf_raw(b, p, (size_t)(buf + sizeof buf - p));
}

void jbuf_real(jbuf *b, double v)
{
    char buf[32];
    if (v - v != 0) { /* inf or nan */
        jbuf_raw(b, "null", 4);
    } else if (v != 0 && fabs(v) < 1e15 && v == (double)(long long)v) {
        /* a whole number: its digits and ".0", as numtext_format_shortest() writes it */
        char *end = buf + 24, *p = int_digits((long long)v, end);
        end[0] = '.';
        end[1] = '0';
        jbuf_raw(b, p, (size_t)(end + 2 - p));
    } else {
        jbuf_raw(b, buf, (size_t)numtext_format_shortest(v, buf));
    }
}

void jbuf_members(jbuf *b, const json_t *obj)
{
    const char *key;
    json_t *item;
    int first = 1;
    json_object_foreach((json_t *)obj, key, item)
    {
        if (!first)
            jbuf_raw(b, ",", 1);
        first = 0;
        jbuf_key(b, key);
        jbuf_value(b, item);
    }
}

void jbuf_value(jbuf *b, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        jbuf_raw(b, "{", 1);
        jbuf_members(b, v);
        jbuf_raw(b, "}", 1);
        break;
    case JSON_ARRAY:
        jbuf_raw(b, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                jbuf_raw(b, ",", 1);
            jbuf_value(b, json_array_get(v, i));
        }
        jbuf_raw(b, "]", 1);
        break;
    case JSON_STRING: put_string(b, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: jbuf_int(b, (long long)json_integer_value(v)); break;
    case JSON_REAL: jbuf_real(b, json_real_value(v)); break;
    case JSON_TRUE: jbuf_raw(b, "true", 4); break;
    case JSON_FALSE: jbuf_raw(b, "false", 5); break;
    default: jbuf_raw(b, "null", 4); break;
    }
}

char *jbuf_take(jbuf *b, size_t *len)
{
    if (grow(b, 0) < 0) {
        jbuf_free(b);
        return NULL;
    }
    b->p[b->len] = '\0';
    char *p = b->p;
    *len = b->len;
    memset(b, 0, sizeof *b);
    return p;
}

void jbuf_free(jbuf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}
