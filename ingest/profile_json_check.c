/*
 * profile_json_check.c — the checks of the perfcast-JSON profile reader
 * (profile_json.c) that are about the bytes rather than the format: fault
 * messages and JSON paths, syntax (positions, escapes, nesting, numbers as
 * Jansson reads them), the order in which semantic faults win, duplicate
 * keys through a seeded hash, the names kept for the profile, and where the
 * parser is. State in profile_json_internal.h.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <yajl/yajl_parse.h>

#include "common/numtext.h"
#include "common/grow.h"
#include "common/utf8.h"
#include "ingest/profile.h"
#include "ingest/profile_json_internal.h"

/* ---- errors ---------------------------------------------------------------- */

int pj_fail(pj_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pj_fail(pj_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
    va_end(ap);
    r->err->line = 0;
    r->err->offset = -1;
    return -1;
}

int pj_nomem(pj_reader *r)
{
    return pj_fail(r, "out of memory");
}

/* Bytes of s to quote: at most PJ_SHOWN, not cutting a UTF-8 sequence. */
int pj_shown(const char *s)
{
    size_t n = strlen(s);
    if (n <= PJ_SHOWN)
        return (int)n;
    n = PJ_SHOWN;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return (int)n;
}

/* Makes a message safe to put into JSON or a log line: control characters
 * and bytes outside well-formed UTF-8 (messages quote raw input) become '?'. */
void pj_sanitize(char *msg)
{
    unsigned char *s = (unsigned char *)msg;
    while (*s) {
        int n = utf8_sequence(s);
        if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F))) {
            *s++ = '?';
            continue;
        }
        s += n;
    }
}

/* Appends ".key" to a path for a simple key, ["key"] otherwise (truncated). */
void pj_path_key(char *out, size_t cap, const char *path, const char *key)
{
    int simple = key[0] != '\0' && strlen(key) <= PJ_SHOWN;
    for (const char *c = key; *c && simple; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '_'))
            simple = 0;
    if (simple)
        snprintf(out, cap, "%s.%s", path, key);
    else
        snprintf(out, cap, "%s[\"%.*s%s\"]", path, pj_shown(key), key,
                 strlen(key) > PJ_SHOWN ? "..." : "");
}

/* path.metrics.key (or path.metrics["key"]), for messages about one metric. */
void pj_metric_path(char *out, size_t cap, const char *path, const char *key)
{
    char base[PJ_PATH + 16];
    snprintf(base, sizeof(base), "%s.metrics", path);
    pj_path_key(out, cap, base, key);
}

/* Metrics that count or measure something and so cannot be negative. */
int pj_nonnegative_metric(const char *name)
{
    return strcmp(name, "time") == 0 || strcmp(name, "visits") == 0 ||
           strcmp(name, "bytes") == 0;
}

void pj_occ_path(char *out, size_t cap, const pj_occ *o)
{
    snprintf(out, cap, "ranks[%zu].%s[%zu].callpaths[%zu]", o->rank_i,
             o->between ? "between_steps" : "steps", o->step_i, o->cp_i);
}

/* ---- syntax ---------------------------------------------------------------- */

/* Line (1-based) and column (characters since the line's start) of byte at. */
static void pj_position(const char *buf, size_t at, long *line, long *column)
{
    long l = 1, c = 0;
    for (size_t i = 0; i < at; i++) {
        if (buf[i] == '\n') {
            l++;
            c = 0;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *column = c;
}

/* A fault of the JSON text itself at byte at: "line L column C: what".
 * Parsing stops. Returns 0, yajl's "cancel". */
int pj_syntax(pj_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int pj_syntax(pj_reader *r, size_t at, const char *fmt, ...)
{
    char what[200];
    long line, column;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    pj_position(r->buf, at, &line, &column);
    snprintf(r->err->msg, sizeof(r->err->msg), "line %ld column %ld: %s", line, column, what);
    r->err->line = line;
    r->err->offset = (long)at;
    r->stop = 1;
    return 0;
}

/* Out of memory: parsing stops. Returns 0, yajl's "cancel". */
int pj_stop_nomem(pj_reader *r)
{
    pj_nomem(r);
    r->stop = 1;
    return 0;
}

size_t pj_here(const pj_reader *r)
{
    return yajl_get_bytes_consumed(r->h);
}

/* Four hex digits at s (n bytes left) into *u; 0 when they are not there. */
static int hex4(const char *s, size_t n, unsigned *u)
{
    *u = 0;
    if (n < 4)
        return 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)s[i];
        if (!isxdigit(c))
            return 0;
        *u = *u << 4 | (unsigned)(isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return 1;
}

/* 1 when the \u escape whose digits are at s (n bytes left) is one Jansson
 * refuses: \u0000, or a surrogate that is not half of a pair; *code is the
 * escape's value. A malformed escape is yajl's to refuse. */
static int bad_escape(const char *s, size_t n, unsigned *code)
{
    unsigned v;
    if (!hex4(s, n, code))
        return 0;
    if (*code == 0 || (*code >= 0xDC00 && *code <= 0xDFFF))
        return 1;
    if (*code < 0xD800 || *code > 0xDBFF)
        return 0;
    if (n < 10 || s[4] != '\\' || s[5] != 'u' || !hex4(s + 6, n - 6, &v))
        return 1;
    return v < 0xDC00 || v > 0xDFFF;
}

/* Before yajl runs: refuses nesting deeper than PJ_MAX_DEPTH (brackets inside
 * strings do not count) and notes the first escape a string may not hold. */
int pj_check_depth(pj_reader *r, const char *buf, size_t len)
{
    int depth = 0, in_string = 0, escaped = 0;
    long line = 1;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n')
            line++;
        if (in_string) {
            if (escaped) {
                escaped = 0;
                unsigned code = 0;
                if (c != 'u' || r->escape_at != (size_t)-1)
                    continue;
                if (bad_escape(buf + i + 1, len - i - 1, &code))
                    r->escape_at = i, r->escape_code = code;
                else if (code >= 0xD800 && code <= 0xDBFF)
                    i += 10; /* a pair: its second half is no escape of its own */
            } else if (c == '\\') {
                escaped = 1;
            } else if (c == '"') {
                in_string = 0;
            }
        } else if (c == '"') {
            in_string = 1;
        } else if (c == '[' || c == '{') {
            if (++depth > PJ_MAX_DEPTH) {
                pj_fail(r, "line %ld: arrays and objects nested deeper than %d", line,
                        PJ_MAX_DEPTH);
                r->err->line = line;
                r->err->offset = (long)i;
                return -1;
            }
        } else if (c == ']' || c == '}') {
            depth--;
        }
    }
    return 0;
}

/* A string token just read: refused when it holds the escape noted above. */
int pj_check_string(pj_reader *r)
{
    size_t at = pj_here(r);
    if (r->escape_at == (size_t)-1 || at <= r->escape_at)
        return 1;
    if (r->escape_code == 0)
        return pj_syntax(r, at, "\\u0000 is not allowed in a string");
    return pj_syntax(r, at, "invalid Unicode '\\u%04X'", r->escape_code);
}

/* A number token: an integer when it has no fraction or exponent (and then
 * must fit a long long), else a real that must not overflow. */
int pj_lex_number(pj_reader *r, const char *s, size_t n, pj_num *v)
{
    int shown_n = n > 20 ? 20 : (int)n;
    v->integer = !memchr(s, '.', n) && !memchr(s, 'e', n) && !memchr(s, 'E', n);
    if (v->integer) {
        int neg = n > 0 && s[0] == '-';
        unsigned long long u = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
        for (size_t i = neg; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (u > (lim - d) / 10)
                return pj_syntax(r, pj_here(r), "too big %sinteger near '%.*s'",
                                 neg ? "negative " : "", shown_n, s);
            u = u * 10 + d;
        }
        v->i = neg ? (u == lim ? LLONG_MIN : -(long long)u) : (long long)u;
        v->d = (double)v->i;
        return 1;
    }
    if (numtext_parse(s, n, &v->d) != n || isnan(v->d))
        return pj_stop_nomem(r); /* the slow path could not copy the text */
    if (isinf(v->d))
        return pj_syntax(r, pj_here(r), "real number overflow near '%.*s'", shown_n, s);
    return 1;
}

/* ---- semantic faults, in the order the format's checks are made ----------- */

/* A semantic fault is kept when it comes before the one kept so far in the
 * order of the checks (point, repetition, levels, then rank by rank, member
 * by member): the message does not depend on the order of an object's
 * members. Parsing goes on, as a syntax error later in the text wins. */
void pj_refuse(pj_reader *r, const size_t *key, int n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int key_before(const size_t *a, const size_t *b)
{
    for (int i = 0; i < PJ_KEY; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

void pj_refuse(pj_reader *r, const size_t *key, int n, const char *fmt, ...)
{
    size_t k[PJ_KEY] = {0};
    memcpy(k, key, (size_t)n * sizeof(*k));
    if (r->bad && !key_before(k, r->bad_at))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
    va_end(ap);
    r->err->line = 0;
    r->err->offset = -1;
    memcpy(r->bad_at, k, sizeof(k));
    r->bad = 1;
}

/* ---- duplicate keys -------------------------------------------------------- */

static uint64_t pj_hash(uint64_t seed, const char *s, size_t n)
{
    uint64_t h = seed ^ (n * 0x9E3779B97F4A7C15ull);
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    return h ^ (h >> 32);
}

/* Empties a set for the next object; a large table is given back. */
void pj_keyset_reset(pj_keyset *k)
{
    if (k->nslot > 64) {
        free(k->slot);
        k->slot = NULL;
        k->nslot = 0;
    } else if (k->nslot) {
        memset(k->slot, 0, k->nslot * sizeof(*k->slot));
    }
    k->len = 0;
    k->n = 0;
}

void pj_keyset_free(pj_keyset *k)
{
    free(k->text);
    free(k->slot);
    memset(k, 0, sizeof(*k));
}

/* Places the key at text offset at into a table of nslot entries. */
static void keyset_place(pj_keyset *k, uint64_t seed, size_t at)
{
    const char *s = k->text + at;
    size_t i = pj_hash(seed, s, strlen(s)) & (k->nslot - 1);
    while (k->slot[i])
        i = (i + 1) & (k->nslot - 1);
    k->slot[i] = at + 1;
}

static int keyset_grow(pj_keyset *k, uint64_t seed)
{
    size_t old = k->nslot, *was = k->slot, n = old ? old * 2 : 16;
    if (!(k->slot = calloc(n, sizeof(*k->slot)))) {
        k->slot = was;
        return -1;
    }
    k->nslot = n;
    for (size_t i = 0; i < old; i++)
        if (was[i])
            keyset_place(k, seed, was[i] - 1);
    free(was);
    return 0;
}

/* 1 when the object already has key s (n bytes, no NUL inside), else adds
 * it and returns 0; -1 out of memory. The hash is seeded per call, so
 * crafted keys cannot make one object's lookups quadratic. */
int pj_keyset_add(pj_keyset *k, uint64_t seed, const char *s, size_t n)
{
    if ((k->n + 1) * 2 > k->nslot && keyset_grow(k, seed) < 0)
        return -1;
    size_t i = pj_hash(seed, s, n) & (k->nslot - 1);
    for (; k->slot[i]; i = (i + 1) & (k->nslot - 1)) {
        const char *t = k->text + k->slot[i] - 1;
        if (strncmp(t, s, n) == 0 && t[n] == '\0')
            return 1;
    }
    if (grow_array((void **)&k->text, &k->cap, k->len + n + 1, 1) < 0)
        return -1;
    memcpy(k->text + k->len, s, n);
    k->text[k->len + n] = '\0';
    k->slot[i] = k->len + 1;
    k->len += n + 1;
    k->n++;
    return 0;
}

/* ---- names kept for the profile ------------------------------------------- */

/* Copies s (n bytes) into the reader's text; *at is where it starts. */
static int text_add(pj_reader *r, const char *s, size_t n, size_t *at)
{
    if (grow_array((void **)&r->text, &r->text_cap, r->ntext + n + 1, 1) < 0)
        return -1;
    memcpy(r->text + r->ntext, s, n);
    r->text[r->ntext + n] = '\0';
    *at = r->ntext;
    r->ntext += n + 1;
    return 0;
}

/* A metric name: the few a profile uses are kept once (the last PJ_RECENT
 * distinct ones are looked up), so a row costs no name bytes; *at is its
 * index in mnames. */
int pj_metric_name(pj_reader *r, const char *s, size_t n, uint32_t *at)
{
    size_t off;
    for (int i = 0; i < r->nrecent; i++) {
        const char *t = r->text + r->mnames[r->recent[i]];
        if (strncmp(t, s, n) == 0 && t[n] == '\0') {
            *at = r->recent[i];
            return 0;
        }
    }
    if (r->nmnames >= UINT32_MAX || text_add(r, s, n, &off) < 0 ||
        grow_array((void **)&r->mnames, &r->mnames_cap, r->nmnames + 1, sizeof(*r->mnames)) < 0)
        return -1;
    r->mnames[r->nmnames] = off;
    *at = (uint32_t)r->nmnames++;
    r->recent[r->next_recent] = *at;
    r->next_recent = (r->next_recent + 1) % PJ_RECENT;
    if (r->nrecent < PJ_RECENT)
        r->nrecent++;
    return 0;
}

/* A callpath name: steps list much the same callpaths in the same order, so
 * the name last seen at this position in a "callpaths" array is looked at
 * first and kept once when it is the same. */
int pj_callpath_name(pj_reader *r, const char *s, size_t n)
{
    size_t c = r->cp_i;
    if (c < r->nbyslot && r->byslot[c] != (size_t)-1) {
        const char *t = r->text + r->byslot[c];
        if (strncmp(t, s, n) == 0 && t[n] == '\0') {
            r->cp_name = r->byslot[c];
            return 0;
        }
    }
    if (text_add(r, s, n, &r->cp_name) < 0)
        return -1;
    if (c >= r->nbyslot) {
        size_t was = r->nbyslot;
        if (grow_array((void **)&r->byslot, &r->byslot_cap, c + 1, sizeof(*r->byslot)) < 0)
            return -1;
        for (size_t i = was; i <= c; i++)
            r->byslot[i] = (size_t)-1;
        r->nbyslot = c + 1;
    }
    r->byslot[c] = r->cp_name;
    return 0;
}

/* Why s (n bytes) is not a name, or NULL when it is one. */
const char *pj_name_fault(const char *s, size_t n)
{
    if (n == 0)
        return "expected a non-empty name";
    if (n > PJ_MAX_NAME)
        return "name longer than " PJ_STR(PJ_MAX_NAME) " bytes";
    if (memchr(s, '\0', n))
        return "name contains a NUL byte";
    return NULL;
}

/* ---- where the parser is ---------------------------------------------------- */

/* Order keys of the checks (pj_refuse) for the rank, step and callpath being
 * read: {5 ranks, 1 elements, rank, 3 steps | 4 gaps, 1 elements, step, 3
 * callpaths, 1 elements, callpath, ...}. */
int pj_key_rank(const pj_reader *r, size_t *k)
{
    k[0] = 5, k[1] = 1, k[2] = r->rank_i;
    return 3;
}

int pj_key_step(const pj_reader *r, size_t *k)
{
    int n = pj_key_rank(r, k);
    k[n] = r->between ? 4 : 3, k[n + 1] = 1, k[n + 2] = r->step_i;
    return n + 3;
}

int pj_key_cp(const pj_reader *r, size_t *k)
{
    int n = pj_key_step(r, k);
    k[n] = 3, k[n + 1] = 1, k[n + 2] = r->cp_i;
    return n + 3;
}

void pj_step_path(const pj_reader *r, char *out, size_t cap)
{
    snprintf(out, cap, "ranks[%zu].%s[%zu]", r->rank_i, r->between ? "between_steps" : "steps",
             r->step_i);
}

void pj_cp_path(const pj_reader *r, char *out, size_t cap)
{
    pj_occ o = {.between = r->between, .rank_i = r->rank_i, .step_i = r->step_i,
                .cp_i = r->cp_i};
    pj_occ_path(out, cap, &o);
}

/* Refuses a value at k (n components, one more appended) with "path: what". */
void pj_refuse_at(pj_reader *r, size_t *k, int n, size_t last, const char *path,
                      const char *what)
{
    k[n] = last;
    pj_refuse(r, k, n + 1, "%s: %s", path, what);
}
