/*
 * json_buf.h — JSON text written straight into a growing buffer, in the
 * layout of api_json_text() (shortest round-trip reals, null for
 * non-finite ones, objects in insertion order), so that a large answer can
 * be written without building a Jansson tree first and still come out byte
 * for byte as if it had been: handlers write the bulk (thousands of items)
 * with the scalar writers and the small parts with jbuf_value().
 *
 * Errors are sticky: after a failed allocation every call is a no-op and
 * jbuf_take() returns NULL. Callers own the buffer until jbuf_take() (the
 * text then belongs to them) or jbuf_free().
 */
#ifndef PERFCAST_API_JSON_BUF_H
#define PERFCAST_API_JSON_BUF_H

#include <jansson.h>
#include <stddef.h>

typedef struct jbuf {
    char *p;
    size_t len, cap;
    int oom;
} jbuf;

void jbuf_reserve(jbuf *b, size_t n);               /* room for n more bytes */
void jbuf_raw_slow(jbuf *b, const char *s, size_t n);
/* s[0..n) as is; inline, so that short constant pieces cost a store or two */
static inline void jbuf_raw(jbuf *b, const char *s, size_t n)
{
    if (b->len + n < b->cap) {
        __builtin_memcpy(b->p + b->len, s, n);
        b->len += n;
    } else {
        jbuf_raw_slow(b, s, n);
    }
}
#define JBUF_LIT(b, lit) jbuf_raw((b), "" lit, sizeof(lit) - 1) /* a string literal */
void jbuf_insert(jbuf *b, size_t at, const char *s, size_t n); /* s before byte at */
void jbuf_lit(jbuf *b, const char *s);              /* s as is (strlen) */
void jbuf_string(jbuf *b, const char *s);           /* quoted and escaped; NULL: null */
void jbuf_key(jbuf *b, const char *key);            /* "key": */
void jbuf_real(jbuf *b, double v);                  /* shortest text; not finite: null */
void jbuf_int(jbuf *b, long long v);
void jbuf_value(jbuf *b, const json_t *v);          /* a Jansson value */
void jbuf_members(jbuf *b, const json_t *obj);      /* an object's members, no braces */
char *jbuf_take(jbuf *b, size_t *len);              /* NUL-terminated; NULL when out of memory */
void jbuf_free(jbuf *b);

#endif
