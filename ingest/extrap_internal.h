/*
 * extrap_internal.h — what the ingest/extrap*.c files share; not a public API.
 *
 * The readers (extrap_text.c, extrap_json.c, extrap_jsonl.c) scan their
 * format and feed an ingest_builder (extrap_build.c), which interns names and
 * coordinates through ingest_idtab hash tables (extrap_table.c), collects the
 * repetitions, checks the result the way Extra-P's validate_experiment does
 * and hands over a finished ingest_experiment. extrap_scan.c holds the
 * byte-level helpers: line splitting, number parsing, UTF-8 checks.
 * extrap.c picks the reader for a format.
 */
#ifndef PERFCAST_INGEST_EXTRAP_INTERNAL_H
#define PERFCAST_INGEST_EXTRAP_INTERNAL_H

#include <jansson.h>
#include <locale.h>
#include <stddef.h>
#include <stdint.h>

#include "ingest/extrap.h"

/* ---- extrap_table.c: open-addressing table of ids, keys kept by the caller */

/* Maps a 32-bit hash to the ids of the entries having it. The caller owns the
 * keys (a name, a coordinate, a pair) and compares them itself: look up with
 * ingest_idtab_first/next, insert with ingest_idtab_add after a miss. */
typedef struct ingest_slot {
    uint32_t hash;
    int32_t id; /* -1 when empty */
} ingest_slot;

typedef struct ingest_idtab {
    ingest_slot *slot;
    size_t mask;   /* slots - 1; slots is a power of two */
    size_t count;
    uint64_t seed; /* keys hash with it; random per read, so crafted keys
                      cannot be made to share one probe chain */
} ingest_idtab;

/* Walks the ids whose hash matches; *pos is the probe state. */
typedef struct ingest_probe {
    size_t pos;
    uint32_t hash;
} ingest_probe;

void ingest_idtab_free(ingest_idtab *t);
/* First candidate id for hash, or -1 when there is none. */
int32_t ingest_idtab_first(const ingest_idtab *t, uint32_t hash, ingest_probe *p);
/* Next candidate id, or -1 when there is none. */
int32_t ingest_idtab_next(const ingest_idtab *t, ingest_probe *p);
/* Records id under hash; returns -1 when out of memory. */
int ingest_idtab_add(ingest_idtab *t, uint32_t hash, int32_t id);

/* A seed for the tables of one read, from the system's random source. */
uint64_t ingest_hash_seed(void);
uint32_t ingest_hash_bytes(uint64_t seed, const void *data, size_t len);
uint32_t ingest_hash_pair(uint64_t seed, uint32_t a, uint32_t b);
/* Hash of n doubles that treats -0.0 and 0.0 alike (they compare equal). */
uint32_t ingest_hash_doubles(uint64_t seed, const double *v, int n);

/* ---- extrap_scan.c: byte-level helpers ---------------------------------- */

/* Iterates the lines of buf[0..len) the way Python's universal newlines do:
 * "\n", "\r\n" and a lone "\r" all end a line. */
typedef struct ingest_lines {
    const char *buf;
    size_t len;
    size_t pos;  /* start of the next line */
    long lineno; /* 1-based number of the line last returned */
} ingest_lines;

void ingest_lines_init(ingest_lines *it, const char *buf, size_t len);
/* Returns 1 and the line (without its terminator) or 0 at the end. */
int ingest_lines_next(ingest_lines *it, const char **line, size_t *n);

/* ASCII whitespace as Python's str.split() and str.isspace() treat it. */
static inline int ingest_is_space(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}
/* 1 when s[0..n) holds only whitespace (or nothing). */
int ingest_is_blank(const char *s, size_t n);

typedef enum ingest_number_status {
    INGEST_NUMBER_OK = 0,
    INGEST_NUMBER_INVALID,   /* not a decimal number */
    INGEST_NUMBER_NONFINITE, /* nan, inf, or overflows a double */
} ingest_number_status;

/* Parses s[0..n) as a decimal floating-point number ([+-]digits[.digits][e[+-]digits])
 * in the C locale; no surrounding whitespace, no hex, no nan or inf. */
ingest_number_status ingest_parse_number(const char *s, size_t n, locale_t c_locale, double *out);

/* 1 when s[0..n) is well-formed UTF-8 without NUL bytes. */
int ingest_utf8_valid(const char *s, size_t n);

/* ---- extrap_build.c: the experiment under construction ------------------ */

/* A list of distinct names with lookup by name. */
typedef struct ingest_names {
    char **name;
    int n;
    size_t cap;
    ingest_idtab index;
} ingest_names;

typedef struct ingest_series_rec {
    int callpath;
    int metric;
    int npoints;
    long line;   /* line that created it, 0 when not line-oriented */
    long offset; /* byte offset of that line, -1 when unknown */
} ingest_series_rec;

typedef struct ingest_point_rec {
    int series;
    int coord;
    int local;   /* index of the point within its series */
    int nvalues;
} ingest_point_rec;

typedef struct ingest_builder {
    ingest_error *err;
    locale_t c_locale;

    ingest_names params;
    ingest_names callpaths;
    ingest_names metrics;

    double *coords; /* ncoords x params.n */
    int ncoords;
    size_t coords_cap;
    ingest_idtab coord_index;

    ingest_series_rec *series;
    int nseries;
    size_t series_cap;
    ingest_idtab series_index;

    ingest_point_rec *points;
    int npoints;
    size_t points_cap;
    ingest_idtab point_index;
    int points_indexed; /* points [0, points_indexed) are in point_index */

    uint32_t *obs_point; /* for each value read, its point */
    double *obs_value;
    size_t nobs;
    size_t obs_point_cap;
    size_t obs_value_cap;

    /* Final coordinate order: 0 keeps the order they were added in, 1 orders
     * them by first use walking series then points (Extra-P's
     * repetition_dict_to_experiment). */
    int coords_by_series;

    long line;   /* where the reader is, for messages: 1-based, 0 when none */
    long offset; /* byte offset of the reader, -1 when unknown */
} ingest_builder;

/* Returns -1 with err set when the C locale cannot be had. */
int ingest_builder_init(ingest_builder *b, ingest_error *err);
void ingest_builder_free(ingest_builder *b);

/* Records the failure with the reader's position ("line N: " prefix when
 * line-oriented) and returns -1. */
int ingest_fail(ingest_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with an explicit position. */
int ingest_fail_at(ingest_error *err, long line, long offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Names: index of s[0..n) or -1 when absent. */
int ingest_names_find(const ingest_names *names, const char *s, size_t n);
/* Adds s[0..n) when absent; *id gets its index, *added whether it was new.
 * Returns -1 when out of memory (err is set by the builder wrappers below). */
int ingest_names_intern(ingest_names *names, const char *s, size_t n, int *id, int *added);

/* Builder-level name interning; return the index or -1 (err set). */
int ingest_builder_param(ingest_builder *b, const char *s, size_t n);     /* rejects duplicates */
int ingest_builder_callpath(ingest_builder *b, const char *s, size_t n);  /* find or add */
int ingest_builder_metric(ingest_builder *b, const char *s, size_t n);    /* find or add */
/* Coordinate of params.n values: *id gets its index; *added whether new.
 * Rejects non-finite values. Returns 0 or -1 (err set). */
int ingest_builder_coord(ingest_builder *b, const double *v, int *id, int *added);
/* Index of the (callpath, metric) series, created when absent; -1 on error. */
int ingest_builder_series(ingest_builder *b, int callpath, int metric);
/* Index of the point of series at coord, created when absent; -1 on error.
 * *added tells whether it is new. */
int ingest_builder_point(ingest_builder *b, int series, int coord, int *added);
/* Appends a point the caller knows the series does not have yet, skipping
 * the lookup (the text reader's blocks); -1 on error. */
int ingest_builder_point_new(ingest_builder *b, int series, int coord);
/* Appends one repetition to a point; -1 on error. */
int ingest_builder_value(ingest_builder *b, int point, double v);

/* Validates (Extra-P's validate_experiment plus perfcast's own checks) and
 * moves the result into out. On error out is left zeroed. The builder must
 * still be freed. */
int ingest_builder_finish(ingest_builder *b, ingest_experiment *out);

/* Formats a coordinate for messages: "(20, 1)". */
void ingest_format_coord(const ingest_builder *b, int coord, char *dst, size_t cap);

/* ---- extrap_json.c: JSON value helpers the JSON readers share ----------- */

/* json_loadb flags of every JSON reader: a repeated key is an error rather
 * than the last one silently winning (Python's json), and integers are read
 * as doubles so that ones beyond long long still load as Python reads them. */
#define INGEST_JSON_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL)

/* A JSON number as a double; with allow_string also a string holding a
 * decimal number (Extra-P applies float() there). 0, or -1 when not a
 * number, -2 when a string holds nan/inf or overflows. */
int ingest_json_number(const json_t *v, int allow_string, locale_t c_locale, double *out);
/* 1 when buf[0..len) has a non-blank line and each non-blank line starts
 * with '{': Extra-P then reads a file that is not one JSON document as
 * JSON Lines. */
int ingest_looks_like_jsonl(const char *buf, size_t len);

/* ---- readers ------------------------------------------------------------ */

int ingest_read_text(const char *buf, size_t len, ingest_experiment *out, ingest_error *err);
/* Either JSON layout; falls back to JSON Lines like Extra-P does. */
int ingest_read_json(const char *buf, size_t len, ingest_experiment *out, ingest_error *err);
int ingest_read_jsonl(const char *buf, size_t len, ingest_experiment *out, ingest_error *err);
int ingest_read_talpas(const char *buf, size_t len, ingest_experiment *out, ingest_error *err);

#endif
