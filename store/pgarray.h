/*
 * pgarray.h — one-dimensional PostgreSQL arrays in the binary wire format,
 * for bulk statements like
 *   INSERT ... SELECT * FROM unnest($1::int4[], $2::float8[], ...)
 * sent through PQexecParams with paramFormats[i] = 1.
 *
 * Binary arrays carry each element as a length and its bytes (numbers in
 * network order), so nothing is quoted or escaped and nothing from the input
 * can change the statement: text elements are copied as they are (they must
 * be valid UTF-8 without NUL, which the readers guarantee).
 *
 * An array is built by appending elements; any allocation failure is
 * remembered and reported once by pgarray_ok(), so call sites append without
 * checking each step.
 */
#ifndef PERFCAST_STORE_PGARRAY_H
#define PERFCAST_STORE_PGARRAY_H

#include <stddef.h>
#include <stdint.h>

/* element type OIDs (pg_type.h) */
enum {
    PGARRAY_INT8 = 20,
    PGARRAY_INT2 = 21,
    PGARRAY_INT4 = 23,
    PGARRAY_TEXT = 25,
    PGARRAY_FLOAT8 = 701,
};

typedef struct pgarray {
    unsigned oid;  /* element type */
    char *buf;     /* header + elements; the header is completed by pgarray_finish */
    size_t len, cap;
    int32_t n;     /* elements appended */
    int failed;    /* an allocation failed or the array grew past 1 GB */
} pgarray;

/* Starts an empty array of element type oid, with room for about hint
 * elements of elem_size bytes (0 when unknown). */
void pgarray_init(pgarray *a, unsigned oid, size_t hint, size_t elem_size);
void pgarray_int2(pgarray *a, int v);
void pgarray_int4(pgarray *a, int32_t v);
void pgarray_int8(pgarray *a, int64_t v);
void pgarray_float8(pgarray *a, double v);
void pgarray_text(pgarray *a, const char *s);
/* Writes the header (dimensions). Returns 0, or -1 when anything failed. */
int pgarray_finish(pgarray *a);
/* Starts over with no elements, keeping the memory (for chunked statements). */
void pgarray_reset(pgarray *a);
void pgarray_free(pgarray *a);

#endif
