/*
 * pgarray.c — binary one-dimensional arrays for bulk parameters (see
 * store/pgarray.h).
 *
 * Wire layout (PostgreSQL's array_send): int32 ndim, int32 has_nulls, int32
 * element OID, then per dimension int32 length and int32 lower bound, then
 * per element int32 byte length and the bytes. An empty array has ndim 0 and
 * no dimension. The 20 header bytes are reserved up front and filled by
 * pgarray_finish; for an empty array the buffer is cut back to 12 bytes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "store/pgarray.h"

#define HEADER 20
#define MAX_BYTES (1u << 30) /* PostgreSQL's limit on one field value */

static void put32(char *p, uint32_t v)
{
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

static int reserve(pgarray *a, size_t more)
{
    if (a->failed)
        return -1;
    if (a->len + more > MAX_BYTES || a->n == INT32_MAX) {
        a->failed = 1;
        return -1;
    }
    if (a->len + more <= a->cap)
        return 0;
    size_t cap = a->cap ? a->cap : 256;
    while (cap < a->len + more)
        cap *= 2;
    char *b = realloc(a->buf, cap);
    if (!b) {
        a->failed = 1;
        return -1;
    }
    a->buf = b;
    a->cap = cap;
    return 0;
}

void pgarray_init(pgarray *a, unsigned oid, size_t hint, size_t elem_size)
{
    memset(a, 0, sizeof *a);
    a->oid = oid;
    a->len = HEADER;
    size_t want = HEADER + (hint < MAX_BYTES / 16 ? hint * (4 + elem_size) : 0);
    a->buf = malloc(want);
    a->cap = a->buf ? want : 0;
    a->failed = !a->buf;
}

static void put_elem(pgarray *a, const void *bytes, uint32_t n)
{
    if (reserve(a, 4 + (size_t)n) < 0)
        return;
    put32(a->buf + a->len, n);
    memcpy(a->buf + a->len + 4, bytes, n);
    a->len += 4 + (size_t)n;
    a->n++;
}

void pgarray_int2(pgarray *a, int v)
{
    uint16_t u = (uint16_t)v;
    char b[2] = {(char)(u >> 8), (char)u};
    put_elem(a, b, 2);
}

void pgarray_int4(pgarray *a, int32_t v)
{
    char b[4];
    put32(b, (uint32_t)v);
    put_elem(a, b, 4);
}

void pgarray_int8(pgarray *a, int64_t v)
{
    char b[8];
    put32(b, (uint32_t)((uint64_t)v >> 32));
    put32(b + 4, (uint32_t)v);
    put_elem(a, b, 8);
}

void pgarray_float8(pgarray *a, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    char b[8];
    put32(b, (uint32_t)(u >> 32));
    put32(b + 4, (uint32_t)u);
    put_elem(a, b, 8);
}

void pgarray_text(pgarray *a, const char *s)
{
    size_t n = strlen(s);
    if (n >= MAX_BYTES) {
        a->failed = 1;
        return;
    }
    put_elem(a, s, (uint32_t)n);
}

int pgarray_finish(pgarray *a)
{
    if (a->failed || !a->buf)
        return -1;
    put32(a->buf + 4, 0); /* no NULLs */
    put32(a->buf + 8, a->oid);
    if (a->n == 0) {
        put32(a->buf, 0);
        a->len = 12;
        return 0;
    }
    put32(a->buf, 1);
    put32(a->buf + 12, (uint32_t)a->n);
    put32(a->buf + 16, 1);
    return 0;
}

void pgarray_reset(pgarray *a)
{
    a->len = HEADER;
    a->n = 0;
}

void pgarray_free(pgarray *a)
{
    free(a->buf);
    memset(a, 0, sizeof *a);
}
