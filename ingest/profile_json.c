/*
 * profile_json.c — reader of perfcast's own JSON profile format, the one
 * format anyone can produce without a profiler-specific exporter.
 *
 * One upload is one coordinate x repetition with any number of ranks:
 *
 *   {"point": {"ranks": 8},              optional: the caller may know it
 *    "repetition": 1,                    optional, integer >= 1, default 1
 *    "levels": {"dataloader": "dali"},   optional: categorical factors' levels
 *                                        (checked against the experiment by
 *                                        the service, api/levels.h)
 *    "ranks": [{"rank": 0,
 *               "steps": [{"phase": "train",          or "validation"; default train
 *                          "callpaths": [{"name": "volta_sgemm_128x64_nn",
 *                                         "category": "comp",   comp|comm|mem|host
 *                                         "metrics": {"time": 0.0123, "visits": 4}}]}],
 *               "between_steps": [{"callpaths": [...]}]}]}
 *
 * Each step is already the sum over the callpath's executions inside it
 * (Extra-Deep Eq. 1); a callpath listed twice in one step is summed. A step's
 * index is its position among the rank's steps of the same phase; a gap's is
 * its position in "between_steps". The result is a normalized profile
 * (profile.h) whose rows are sorted by (rank, phase, step, callpath, metric);
 * callpaths and metrics are numbered in order of first appearance.
 *
 * The text is parsed as a stream with yajl's callback parser, straight into
 * compact arrays (48 bytes per callpath entry, 40 per metric value, names
 * kept once where they repeat; the rows are then written over the sorted
 * metric values): memory grows with the rows, not with a document tree of
 * the upload. The JSON accepted is the one the format has always been read
 * with (Jansson, JSON_REJECT_DUPLICATES): the top is an object, a duplicate
 * key in any object is a syntax error, an integer (no fraction, no exponent)
 * must fit a long long and a real must not overflow, strings hold no \u0000
 * and no unpaired surrogate.
 *
 * The bytes come from the network, so everything is checked and a fault is
 * reported with the JSON path ("ranks[0].steps[2].callpaths[5].metrics.time:
 * expected a finite number >= 0") or, for syntax errors, "line L column C:"
 * and the byte offset. A syntax error anywhere wins over any other fault, and
 * of several faults the one reported is the first in a fixed order of checks
 * (point, repetition, levels, then rank by rank, member by member), not in
 * the order of the text, so reordering an object's members does not change
 * the message. Unknown members are refused too, so a misspelt key is not
 * silently ignored. Nesting is bounded before yajl sees the bytes. Names are
 * interned by sorting, and duplicate keys found with a hash seeded per call,
 * so crafted names cannot make the reader quadratic. Nothing is returned
 * half-built.
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

#define PJ_MAX_NAME 4096 /* bytes in a callpath, metric or parameter name */
#define PJ_MAX_DEPTH 32  /* nesting of arrays and objects; the format needs 8 */
#define PJ_SHOWN 40      /* bytes of a name quoted in a message */
#define PJ_PATH 160      /* room for the longest index-only JSON path */
#define PJ_MAX_LEVELS 64 /* factors named in "levels" (an experiment declares at most 8) */
#define PJ_KEY 12        /* components of a fault's place in the order of checks */
#define PJ_RECENT 8      /* distinct metric names looked up before one is copied again */
#define PJ_STR_(x) #x
#define PJ_STR(x) PJ_STR_(x)

/* One entry of a "callpaths" array, in document order. */
typedef struct pj_occ {
    size_t name;      /* offset in pj_reader.text */
    int category;
    int between;      /* 1 under "between_steps" */
    size_t rank_i, step_i, cp_i; /* array positions, for messages */
} pj_occ;

/* One metric of one callpath entry, before duplicates are summed. */
typedef struct pj_raw {
    int rank, phase, step;
    int callpath;         /* set once callpaths are interned */
    int metric;           /* set once metrics are interned */
    uint32_t metric_name; /* index into pj_reader.mnames */
    size_t occ;           /* its pj_occ */
    double value;
} pj_raw;

/* A rank number and where it was given, to find duplicates by sorting. */
typedef struct pj_rank {
    int rank;
    size_t index;
} pj_rank;

/* The keys of one object, to refuse a duplicate: NUL-terminated one after
 * another in text, found through an open-addressing table (offset + 1). */
typedef struct pj_keyset {
    char *text;
    size_t len, cap;
    size_t *slot, nslot, n;
} pj_keyset;

/* What an open object or array is, in the format. */
enum {
    PJ_ROOT, PJ_POINT, PJ_LEVELS, PJ_RANKS, PJ_RANK, PJ_STEPS, PJ_STEP, PJ_CPS, PJ_CP,
    PJ_METRICS,
    PJ_SKIP /* a value the format does not read (refused or unknown) */
};

/* Members of the objects with fixed members (bits of pj_frame.seen). */
enum {
    PJ_M_POINT, PJ_M_REPETITION, PJ_M_LEVELS, PJ_M_RANKS, /* root */
    PJ_M_RANK, PJ_M_STEPS, PJ_M_BETWEEN,                  /* rank */
    PJ_M_PHASE, PJ_M_CALLPATHS,                           /* step */
    PJ_M_NAME, PJ_M_CATEGORY, PJ_M_METRICS,               /* callpath */
    PJ_M_FREE,   /* a key that is a name (point, levels, metrics) */
    PJ_M_UNKNOWN /* an unknown member: its value is skipped */
};

typedef struct pj_frame {
    int kind;      /* PJ_ROOT ... PJ_SKIP */
    int object;    /* 1 object, 0 array */
    int member;    /* object: PJ_M_* of the value that comes next */
    unsigned seen; /* fixed members seen */
    size_t count;  /* members or elements so far */
    pj_keyset keys;
} pj_frame;

/* A JSON number as Jansson would keep it. */
typedef struct pj_num {
    int integer; /* no fraction, no exponent */
    long long i;
    double d;
} pj_num;

enum { PJ_V_NULL, PJ_V_BOOL, PJ_V_NUM, PJ_V_STR, PJ_V_OBJ, PJ_V_ARR };

typedef struct pj_value {
    int type; /* PJ_V_* */
    pj_num num;
    const char *s; /* string: n bytes, not NUL-terminated */
    size_t n;
} pj_value;

typedef struct pj_reader {
    ingest_error *err;
    profile *out;
    const char *buf;
    size_t len;
    yajl_handle h;
    uint64_t seed;
    /* collected */
    pj_occ *occ;
    size_t nocc, occ_cap;
    pj_raw *raw;
    size_t nraw, raw_cap;
    char *text; /* callpath and metric names */
    size_t ntext, text_cap;
    size_t *mnames; /* the metric names kept, offsets in text */
    size_t nmnames, mnames_cap;
    uint32_t recent[PJ_RECENT]; /* indexes into mnames */
    size_t *byslot; /* callpath name last kept per position in "callpaths" */
    size_t nbyslot, byslot_cap;
    int nrecent, next_recent;
    pj_rank *ranks;
    size_t nranks, ranks_cap;
    size_t point_cap;
    /* where the parser is */
    pj_frame frame[PJ_MAX_DEPTH + 1];
    int depth;
    char *key; /* the last key, NUL-terminated */
    size_t key_len, key_cap;
    size_t rank_i, step_i, cp_i; /* positions of the rank, step, callpath being read */
    int between;                 /* the steps being read are "between_steps" */
    int rank, has_rank;
    int count[2];                /* steps per phase in this rank */
    int phase;
    size_t rank_raw, step_raw;   /* the raw rows of this rank and step begin here */
    size_t cp_name;
    int cp_category;
    /* the first \u escape to refuse (from check_depth), (size_t)-1 when none */
    size_t escape_at;
    unsigned escape_code;
    /* outcome */
    size_t start, root_end; /* the top value begins and ends here */
    int stop;               /* a syntax error or out of memory is in err */
    int bad;                /* a semantic fault is in err ... */
    size_t bad_at[PJ_KEY];  /* ... at this place in the order of checks */
} pj_reader;

static const char *const category_names[] = {"comp", "comm", "mem", "host"};
static const char *const phase_names[] = {"train", "validation", "between"};

const char *profile_category_name(int category)
{
    if (category < 0 || category > PROFILE_HOST)
        return NULL;
    return category_names[category];
}

int profile_category_from_name(const char *name)
{
    for (int i = 0; i <= PROFILE_HOST; i++)
        if (strcmp(name, category_names[i]) == 0)
            return i;
    return -1;
}

const char *profile_phase_name(int phase)
{
    if (phase < 0 || phase > PROFILE_BETWEEN)
        return NULL;
    return phase_names[phase];
}

void profile_free(profile *p)
{
    for (int i = 0; i < p->nparams; i++)
        free(p->param_names[i]);
    free(p->param_names);
    free(p->point);
    for (int i = 0; i < p->nlevels; i++) {
        free(p->level_names[i]);
        free(p->level_values[i]);
    }
    free(p->level_names);
    free(p->level_values);
    for (int i = 0; i < p->ncallpaths; i++)
        free(p->callpaths[i].name);
    free(p->callpaths);
    for (int i = 0; i < p->nmetrics; i++)
        free(p->metrics[i]);
    free(p->metrics);
    free(p->rows);
    memset(p, 0, sizeof(*p));
}

/* ---- errors ---------------------------------------------------------------- */

static int pj_fail(pj_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pj_fail(pj_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof(r->err->msg), fmt, ap);
    va_end(ap);
    r->err->line = 0;
    r->err->offset = -1;
    return -1;
}

static int pj_nomem(pj_reader *r)
{
    return pj_fail(r, "out of memory");
}

/* Bytes of s to quote: at most PJ_SHOWN, not cutting a UTF-8 sequence. */
static int shown(const char *s)
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
static void sanitize(char *msg)
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
static void path_key(char *out, size_t cap, const char *path, const char *key)
{
    int simple = key[0] != '\0' && strlen(key) <= PJ_SHOWN;
    for (const char *c = key; *c && simple; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '_'))
            simple = 0;
    if (simple)
        snprintf(out, cap, "%s.%s", path, key);
    else
        snprintf(out, cap, "%s[\"%.*s%s\"]", path, shown(key), key,
                 strlen(key) > PJ_SHOWN ? "..." : "");
}

/* path.metrics.key (or path.metrics["key"]), for messages about one metric. */
static void metric_path(char *out, size_t cap, const char *path, const char *key)
{
    char base[PJ_PATH + 16];
    snprintf(base, sizeof(base), "%s.metrics", path);
    path_key(out, cap, base, key);
}

/* Metrics that count or measure something and so cannot be negative. */
static int nonnegative_metric(const char *name)
{
    return strcmp(name, "time") == 0 || strcmp(name, "visits") == 0 ||
           strcmp(name, "bytes") == 0;
}

static void occ_path(char *out, size_t cap, const pj_occ *o)
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
static int pj_syntax(pj_reader *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pj_syntax(pj_reader *r, size_t at, const char *fmt, ...)
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
static int pj_stop_nomem(pj_reader *r)
{
    pj_nomem(r);
    r->stop = 1;
    return 0;
}

static size_t pj_here(const pj_reader *r)
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
static int check_depth(pj_reader *r, const char *buf, size_t len)
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
static int check_string(pj_reader *r)
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
static int lex_number(pj_reader *r, const char *s, size_t n, pj_num *v)
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
static void pj_refuse(pj_reader *r, const size_t *key, int n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int key_before(const size_t *a, const size_t *b)
{
    for (int i = 0; i < PJ_KEY; i++)
        if (a[i] != b[i])
            return a[i] < b[i];
    return 0;
}

static void pj_refuse(pj_reader *r, const size_t *key, int n, const char *fmt, ...)
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
static void keyset_reset(pj_keyset *k)
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

static void keyset_free(pj_keyset *k)
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
static int keyset_add(pj_keyset *k, uint64_t seed, const char *s, size_t n)
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
static int metric_name(pj_reader *r, const char *s, size_t n, uint32_t *at)
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
static int callpath_name(pj_reader *r, const char *s, size_t n)
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
static const char *name_fault(const char *s, size_t n)
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
static int key_rank(const pj_reader *r, size_t *k)
{
    k[0] = 5, k[1] = 1, k[2] = r->rank_i;
    return 3;
}

static int key_step(const pj_reader *r, size_t *k)
{
    int n = key_rank(r, k);
    k[n] = r->between ? 4 : 3, k[n + 1] = 1, k[n + 2] = r->step_i;
    return n + 3;
}

static int key_cp(const pj_reader *r, size_t *k)
{
    int n = key_step(r, k);
    k[n] = 3, k[n + 1] = 1, k[n + 2] = r->cp_i;
    return n + 3;
}

static void step_path(const pj_reader *r, char *out, size_t cap)
{
    snprintf(out, cap, "ranks[%zu].%s[%zu]", r->rank_i, r->between ? "between_steps" : "steps",
             r->step_i);
}

static void cp_path(const pj_reader *r, char *out, size_t cap)
{
    pj_occ o = {.between = r->between, .rank_i = r->rank_i, .step_i = r->step_i,
                .cp_i = r->cp_i};
    occ_path(out, cap, &o);
}

/* Refuses a value at k (n components, one more appended) with "path: what". */
static void refuse_at(pj_reader *r, size_t *k, int n, size_t last, const char *path,
                      const char *what)
{
    k[n] = last;
    pj_refuse(r, k, n + 1, "%s: %s", path, what);
}

/* ---- values by place ------------------------------------------------------- */

/* An integer in [lo, INT_MAX], as Jansson's integers: no fraction, no exponent. */
static int int_value(const pj_value *v, int lo, int *out)
{
    if (v->type != PJ_V_NUM || !v->num.integer || v->num.i < lo || v->num.i > INT_MAX)
        return -1;
    *out = (int)v->num.i;
    return 0;
}

static int in_root(pj_reader *r, const pj_value *v, int member, int *push)
{
    size_t k[1];
    switch (member) {
    case PJ_M_POINT:
        if (v->type == PJ_V_OBJ)
            *push = PJ_POINT;
        else
            pj_refuse(r, (k[0] = 2, k), 1, "point: expected an object of parameter values");
        return 0;
    case PJ_M_REPETITION:
        if (int_value(v, 1, &r->out->repetition) < 0)
            pj_refuse(r, (k[0] = 3, k), 1, "repetition: expected an integer >= 1");
        return 0;
    case PJ_M_LEVELS:
        if (v->type == PJ_V_OBJ)
            *push = PJ_LEVELS;
        else
            pj_refuse(r, (k[0] = 4, k), 1,
                      "levels: expected an object: factor name -> its level");
        return 0;
    default: /* PJ_M_RANKS */
        if (v->type == PJ_V_ARR)
            *push = PJ_RANKS;
        else
            pj_refuse(r, (k[0] = 5, k), 1, "ranks: expected an array");
        return 0;
    }
}

static int in_point(pj_reader *r, const pj_value *v, size_t i)
{
    char path[PJ_PATH + 64];
    size_t k[3] = {2, 1, i};
    const char *why = name_fault(r->key, r->key_len);
    path_key(path, sizeof(path), "point", r->key);
    if (why)
        pj_refuse(r, k, 3, "%s: %s", path, why);
    else if (v->type != PJ_V_NUM)
        pj_refuse(r, k, 3, "%s: expected a finite number", path);
    if (r->bad)
        return 0;
    profile *p = r->out;
    if (p->nparams == INT_MAX)
        return pj_refuse(r, k, 1, "point: too many parameters"), 0;
    if ((size_t)p->nparams == r->point_cap) {
        size_t cap = r->point_cap ? 2 * r->point_cap : 8;
        char **names = realloc(p->param_names, cap * sizeof(*names));
        if (!names)
            return -1;
        p->param_names = names;
        double *pt = realloc(p->point, cap * sizeof(*pt));
        if (!pt)
            return -1;
        p->point = pt;
        r->point_cap = cap;
    }
    if (!(p->param_names[p->nparams] = strdup(r->key)))
        return -1;
    p->point[p->nparams++] = v->num.d;
    return 0;
}

static int in_levels(pj_reader *r, const pj_value *v, size_t i)
{
    char path[PJ_PATH + 64];
    size_t k[3] = {4, 2, i};
    const char *why = name_fault(r->key, r->key_len);
    path_key(path, sizeof(path), "levels", r->key);
    if (why)
        pj_refuse(r, k, 3, "%s: %s", path, why);
    else if (v->type != PJ_V_STR)
        pj_refuse(r, k, 3, "%s: expected a string", path);
    else if ((why = name_fault(v->s, v->n)))
        pj_refuse(r, k, 3, "%s: %s", path, why);
    profile *p = r->out;
    if (r->bad || i >= PJ_MAX_LEVELS)
        return 0;
    if (!p->level_names) {
        p->level_names = calloc(PJ_MAX_LEVELS, sizeof(*p->level_names));
        p->level_values = calloc(PJ_MAX_LEVELS, sizeof(*p->level_values));
        if (!p->level_names || !p->level_values)
            return -1;
    }
    p->level_names[p->nlevels] = strdup(r->key);
    p->level_values[p->nlevels] = strndup(v->s, v->n);
    /* counted before checking, so that profile_free frees a half pair */
    if (!p->level_names[p->nlevels++] || !p->level_values[p->nlevels - 1])
        return -1;
    return 0;
}

static int in_ranks(pj_reader *r, const pj_value *v, size_t i, int *push)
{
    char path[PJ_PATH];
    r->rank_i = i;
    if (v->type != PJ_V_OBJ) {
        size_t k[PJ_KEY];
        snprintf(path, sizeof(path), "ranks[%zu]", i);
        refuse_at(r, k, key_rank(r, k), 0, path, "expected an object");
        return 0;
    }
    *push = PJ_RANK;
    r->has_rank = 0;
    r->rank_raw = r->nraw;
    r->count[0] = r->count[1] = 0;
    return 0;
}

static int in_rank(pj_reader *r, const pj_value *v, int member, int *push)
{
    char path[PJ_PATH + 32];
    size_t k[PJ_KEY];
    int n = key_rank(r, k);
    if (member == PJ_M_RANK) {
        if (int_value(v, 0, &r->rank) == 0) {
            r->has_rank = 1;
            return 0;
        }
        snprintf(path, sizeof(path), "ranks[%zu].rank", r->rank_i);
        refuse_at(r, k, n, 2, path, "expected an integer >= 0");
        return 0;
    }
    int between = member == PJ_M_BETWEEN;
    if (v->type == PJ_V_ARR) {
        *push = PJ_STEPS;
        r->between = between;
        return 0;
    }
    snprintf(path, sizeof(path), "ranks[%zu].%s", r->rank_i,
             between ? "between_steps" : "steps");
    k[n] = between ? 4 : 3;
    refuse_at(r, k, n + 1, 0, path, "expected an array");
    return 0;
}

static int in_steps(pj_reader *r, const pj_value *v, size_t j, int *push)
{
    char path[PJ_PATH];
    r->step_i = j;
    if (v->type != PJ_V_OBJ) {
        size_t k[PJ_KEY];
        step_path(r, path, sizeof(path));
        refuse_at(r, k, key_step(r, k), 0, path, "expected an object");
        return 0;
    }
    *push = PJ_STEP;
    r->phase = r->between ? PROFILE_BETWEEN : PROFILE_TRAIN;
    r->step_raw = r->nraw;
    return 0;
}

/* Refuses a member of the step being read: "path.sub: what" at key + last. */
static void refuse_step(pj_reader *r, size_t *last, int nlast, const char *sub,
                        const char *what)
{
    char path[PJ_PATH + 32];
    size_t k[PJ_KEY];
    int n = key_step(r, k);
    memcpy(k + n, last, (size_t)nlast * sizeof(*k));
    step_path(r, path, sizeof(path));
    pj_refuse(r, k, n + nlast, "%s%s: %s", path, sub, what);
}

static int in_step(pj_reader *r, const pj_value *v, int member, int *push)
{
    if (member == PJ_M_PHASE) {
        if (v->type == PJ_V_STR && v->n == 5 && memcmp(v->s, "train", 5) == 0)
            r->phase = PROFILE_TRAIN;
        else if (v->type == PJ_V_STR && v->n == 10 && memcmp(v->s, "validation", 10) == 0)
            r->phase = PROFILE_VALIDATION;
        else
            refuse_step(r, (size_t[]){2}, 1, ".phase", "expected \"train\" or \"validation\"");
        return 0;
    }
    if (v->type == PJ_V_ARR)
        *push = PJ_CPS;
    else
        refuse_step(r, (size_t[]){3, 0}, 2, ".callpaths", "expected an array");
    return 0;
}

static int in_callpaths(pj_reader *r, const pj_value *v, size_t c, int *push)
{
    char path[PJ_PATH];
    r->cp_i = c;
    if (v->type != PJ_V_OBJ) {
        size_t k[PJ_KEY];
        cp_path(r, path, sizeof(path));
        refuse_at(r, k, key_cp(r, k), 0, path, "expected an object");
        return 0;
    }
    *push = PJ_CP;
    r->cp_category = -1;
    return 0;
}

/* Refuses a member of the callpath being read: "path.sub: what" at key + last. */
static void refuse_cp(pj_reader *r, size_t *last, int nlast, const char *sub, const char *what)
{
    char path[PJ_PATH + 32];
    size_t k[PJ_KEY];
    int n = key_cp(r, k);
    memcpy(k + n, last, (size_t)nlast * sizeof(*k));
    cp_path(r, path, sizeof(path));
    pj_refuse(r, k, n + nlast, "%s%s: %s", path, sub, what);
}

static int in_callpath(pj_reader *r, const pj_value *v, int member, int *push)
{
    const char *why;
    switch (member) {
    case PJ_M_NAME:
        if (v->type != PJ_V_STR)
            refuse_cp(r, (size_t[]){2}, 1, ".name", "expected a string");
        else if ((why = name_fault(v->s, v->n)))
            refuse_cp(r, (size_t[]){2}, 1, ".name", why);
        else if (!r->bad && callpath_name(r, v->s, v->n) < 0)
            return -1;
        return 0;
    case PJ_M_CATEGORY: {
        char cat[8] = "";
        if (v->type == PJ_V_STR && v->n < sizeof(cat))
            memcpy(cat, v->s, v->n);
        if (v->type != PJ_V_STR || v->n >= sizeof(cat) ||
            (r->cp_category = profile_category_from_name(cat)) < 0)
            refuse_cp(r, (size_t[]){3}, 1, ".category",
                      "expected \"comp\", \"comm\", \"mem\" or \"host\"");
        return 0;
    }
    default: /* PJ_M_METRICS */
        if (v->type == PJ_V_OBJ)
            *push = PJ_METRICS;
        else
            refuse_cp(r, (size_t[]){4, 0}, 2, ".metrics", "expected an object of metric values");
        return 0;
    }
}

static int in_metrics(pj_reader *r, const pj_value *v, size_t m)
{
    char path[PJ_PATH], mpath[PJ_PATH + 64];
    size_t k[PJ_KEY];
    int n = key_cp(r, k);
    k[n] = 4, k[n + 1] = 1, k[n + 2] = m;
    const char *why = name_fault(r->key, r->key_len);
    int nonneg = nonnegative_metric(r->key);
    if (why || v->type != PJ_V_NUM || (nonneg && v->num.d < 0)) {
        cp_path(r, path, sizeof(path));
        metric_path(mpath, sizeof(mpath), path, r->key);
        if (why)
            pj_refuse(r, k, n + 3, "%s: %s", mpath, why);
        else
            pj_refuse(r, k, n + 3, "%s: expected a finite number%s", mpath,
                      nonneg ? " >= 0" : "");
    }
    if (r->bad)
        return 0;
    uint32_t name;
    if (metric_name(r, r->key, r->key_len, &name) < 0 ||
        grow_array((void **)&r->raw, &r->raw_cap, r->nraw + 1, sizeof(*r->raw)) < 0)
        return -1;
    /* rank, phase and step are set when their objects end */
    r->raw[r->nraw++] = (pj_raw){.occ = r->nocc, .metric_name = name, .value = v->num.d + 0.0};
    return 0;
}

/* A value (a scalar, or the start of an object or array) in the place the
 * parser is; *push is the kind of frame a container opens (PJ_SKIP: one the
 * format does not read). 0, or -1 out of memory. */
static int on_value(pj_reader *r, const pj_value *v, int *push)
{
    *push = PJ_SKIP;
    if (r->depth == 0) {
        if (v->type == PJ_V_OBJ)
            *push = PJ_ROOT;
        else
            pj_refuse(r, (size_t[]){0}, 1, "expected a JSON object at the top");
        return 0;
    }
    pj_frame *f = &r->frame[r->depth - 1];
    size_t i = f->object ? f->count - 1 : f->count++;
    if (f->object && f->member == PJ_M_UNKNOWN)
        return 0;
    switch (f->kind) {
    case PJ_ROOT: return in_root(r, v, f->member, push);
    case PJ_POINT: return in_point(r, v, i);
    case PJ_LEVELS: return in_levels(r, v, i);
    case PJ_RANKS: return in_ranks(r, v, i, push);
    case PJ_RANK: return in_rank(r, v, f->member, push);
    case PJ_STEPS: return in_steps(r, v, i, push);
    case PJ_STEP: return in_step(r, v, f->member, push);
    case PJ_CPS: return in_callpaths(r, v, i, push);
    case PJ_CP: return in_callpath(r, v, f->member, push);
    case PJ_METRICS: return in_metrics(r, v, i);
    default: return 0;
    }
}

/* ---- keys and ends of containers ----------------------------------------- */

static const char *const root_members[] = {"point", "repetition", "levels", "ranks"};
static const char *const rank_members[] = {"rank", "steps", "between_steps"};
static const char *const step_members[] = {"phase", "callpaths"};
static const char *const cp_members[] = {"name", "category", "metrics"};

/* The member a known key names in a frame of this kind (PJ_M_*), or -1. */
static int known_member(const pj_reader *r, int kind, const char *s, size_t n)
{
    const char *const *names;
    int count, first;
    switch (kind) {
    case PJ_ROOT: names = root_members, count = 4, first = PJ_M_POINT; break;
    case PJ_RANK: names = rank_members, count = 3, first = PJ_M_RANK; break;
    case PJ_STEP: /* a gap between steps has no phase */
        names = step_members + r->between, count = 2 - r->between;
        first = PJ_M_PHASE + r->between;
        break;
    case PJ_CP: names = cp_members, count = 3, first = PJ_M_NAME; break;
    default: return -1;
    }
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && memcmp(names[i], s, n) == 0)
            return first + i;
    return -1;
}

/* Refuses an unknown member of a frame that has only known ones. */
static void refuse_unknown(pj_reader *r, int kind)
{
    char path[PJ_PATH];
    size_t k[PJ_KEY];
    int n;
    switch (kind) {
    case PJ_ROOT:
        pj_refuse(r, (size_t[]){1}, 1, "unknown member \"%.*s\"", shown(r->key), r->key);
        return;
    case PJ_RANK:
        n = key_rank(r, k);
        snprintf(path, sizeof(path), "ranks[%zu]", r->rank_i);
        break;
    case PJ_STEP:
        n = key_step(r, k);
        step_path(r, path, sizeof(path));
        break;
    default:
        n = key_cp(r, k);
        cp_path(r, path, sizeof(path));
        break;
    }
    k[n] = 1;
    pj_refuse(r, k, n + 1, "%s: unknown member \"%.*s\"", path, shown(r->key), r->key);
}

static int cb_key(void *ctx, const unsigned char *key, size_t n)
{
    pj_reader *r = ctx;
    const char *s = (const char *)key;
    pj_frame *f = &r->frame[r->depth - 1];
    f->count++;
    if (!check_string(r))
        return 0;
    if (grow_array((void **)&r->key, &r->key_cap, n + 1, 1) < 0)
        return pj_stop_nomem(r);
    memcpy(r->key, s, n);
    r->key[n] = '\0';
    r->key_len = n;
    int m = known_member(r, f->kind, s, n);
    if (m >= 0 && (f->seen & 1u << m))
        return pj_syntax(r, pj_here(r), "duplicate object key near '\"%.*s\"'", shown(r->key),
                         r->key);
    if (m >= 0) {
        f->seen |= 1u << m;
        f->member = m;
        return 1;
    }
    int dup = keyset_add(&f->keys, r->seed, s, n);
    if (dup < 0)
        return pj_stop_nomem(r);
    if (dup)
        return pj_syntax(r, pj_here(r), "duplicate object key near '\"%.*s\"'", shown(r->key),
                         r->key);
    f->member = PJ_M_FREE;
    if (f->kind == PJ_ROOT || f->kind == PJ_RANK || f->kind == PJ_STEP || f->kind == PJ_CP) {
        f->member = PJ_M_UNKNOWN;
        refuse_unknown(r, f->kind);
    }
    return 1;
}

static void end_rank(pj_reader *r, const pj_frame *f)
{
    size_t k[PJ_KEY];
    char path[PJ_PATH];
    if (!(f->seen & 1u << PJ_M_RANK)) {
        snprintf(path, sizeof(path), "ranks[%zu].rank", r->rank_i);
        refuse_at(r, k, key_rank(r, k), 2, path, "missing");
    }
    if (r->bad)
        return;
    for (size_t i = r->rank_raw; i < r->nraw; i++)
        r->raw[i].rank = r->rank;
    /* room for every rank was made when the rank began */
    r->ranks[r->nranks++] = (pj_rank){.rank = r->rank, .index = r->rank_i};
}

static void end_step(pj_reader *r, const pj_frame *f)
{
    size_t k[PJ_KEY];
    char path[PJ_PATH + 16];
    if (!(f->seen & 1u << PJ_M_CALLPATHS)) {
        int n = key_step(r, k);
        k[n] = 3;
        step_path(r, path, sizeof(path));
        refuse_at(r, k, n + 1, 0, strcat(path, ".callpaths"), "missing");
    }
    if (r->bad)
        return;
    int step = r->between ? (int)r->step_i : r->count[r->phase]++;
    for (size_t i = r->step_raw; i < r->nraw; i++) {
        r->raw[i].phase = r->phase;
        r->raw[i].step = step;
    }
}

static int end_callpath(pj_reader *r, const pj_frame *f)
{
    static const char *const sub[] = {".name", ".category", ".metrics"};
    size_t k[PJ_KEY];
    char path[PJ_PATH + 16];
    int n = key_cp(r, k);
    for (int m = 0; m < 3; m++)
        if (!(f->seen & 1u << (PJ_M_NAME + m))) {
            cp_path(r, path, sizeof(path));
            refuse_at(r, k, n, (size_t)(2 + m), strcat(path, sub[m]), "missing");
        }
    if (r->bad)
        return 0;
    if (grow_array((void **)&r->occ, &r->occ_cap, r->nocc + 1, sizeof(*r->occ)) < 0)
        return -1;
    r->occ[r->nocc++] = (pj_occ){.name = r->cp_name, .category = r->cp_category,
                                 .between = r->between, .rank_i = r->rank_i,
                                 .step_i = r->step_i, .cp_i = r->cp_i};
    return 0;
}

static int cb_end(void *ctx)
{
    pj_reader *r = ctx;
    pj_frame *f = &r->frame[--r->depth];
    size_t k[PJ_KEY];
    char path[PJ_PATH + 16];
    if (r->depth == 0)
        r->root_end = pj_here(r);
    switch (f->kind) {
    case PJ_ROOT:
        if (!(f->seen & 1u << PJ_M_RANKS))
            pj_refuse(r, (size_t[]){5}, 1, "missing \"ranks\"");
        break;
    case PJ_LEVELS:
        if (f->count > PJ_MAX_LEVELS)
            pj_refuse(r, (size_t[]){4, 1}, 2, "levels: more than %d factors", PJ_MAX_LEVELS);
        break;
    case PJ_RANKS:
        if (f->count == 0)
            pj_refuse(r, (size_t[]){5}, 1, "ranks: expected at least one rank");
        else if (f->count > INT_MAX)
            pj_refuse(r, (size_t[]){5}, 1, "ranks: too many ranks");
        else
            r->out->nranks = (int)f->count;
        break;
    case PJ_RANK:
        end_rank(r, f);
        break;
    case PJ_STEP:
        end_step(r, f);
        break;
    case PJ_CP:
        if (end_callpath(r, f) < 0)
            return pj_stop_nomem(r);
        break;
    case PJ_METRICS:
        if (f->count == 0) {
            int n = key_cp(r, k);
            k[n] = 4;
            cp_path(r, path, sizeof(path));
            refuse_at(r, k, n + 1, 0, strcat(path, ".metrics"), "expected at least one metric");
        }
        break;
    default:
        break;
    }
    return 1;
}

/* ---- yajl callbacks -------------------------------------------------------- */

static int push_frame(pj_reader *r, int kind, int object)
{
    if (r->depth > PJ_MAX_DEPTH) /* check_depth has refused this already */
        return pj_syntax(r, pj_here(r), "arrays and objects nested deeper than %d",
                         PJ_MAX_DEPTH);
    if (kind == PJ_RANK && !r->bad &&
        grow_array((void **)&r->ranks, &r->ranks_cap, r->nranks + 1, sizeof(*r->ranks)) < 0)
        return pj_stop_nomem(r);
    pj_frame *f = &r->frame[r->depth++];
    f->kind = kind;
    f->object = object;
    f->member = PJ_M_FREE;
    f->seen = 0;
    f->count = 0;
    keyset_reset(&f->keys);
    return 1;
}

static int scalar(pj_reader *r, const pj_value *v)
{
    int push;
    if (r->depth == 0) /* yajl may not have counted the token's bytes yet */
        return pj_syntax(r, r->start, "'[' or '{' expected");
    if (on_value(r, v, &push) < 0)
        return pj_stop_nomem(r);
    return 1;
}

static int container(pj_reader *r, int type)
{
    pj_value v = {.type = type};
    int push;
    if (on_value(r, &v, &push) < 0)
        return pj_stop_nomem(r);
    return push_frame(r, push, type == PJ_V_OBJ);
}

static int cb_null(void *ctx)
{
    return scalar(ctx, &(pj_value){.type = PJ_V_NULL});
}

static int cb_bool(void *ctx, int b)
{
    (void)b;
    return scalar(ctx, &(pj_value){.type = PJ_V_BOOL});
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    pj_value v = {.type = PJ_V_NUM};
    if (!lex_number(ctx, s, n, &v.num))
        return 0;
    return scalar(ctx, &v);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    if (!check_string(ctx))
        return 0;
    return scalar(ctx, &(pj_value){.type = PJ_V_STR, .s = (const char *)s, .n = n});
}

static int cb_start_map(void *ctx)
{
    return container(ctx, PJ_V_OBJ);
}

static int cb_start_array(void *ctx)
{
    return container(ctx, PJ_V_ARR);
}

static const yajl_callbacks pj_callbacks = {
    .yajl_null = cb_null,
    .yajl_boolean = cb_bool,
    .yajl_number = cb_number,
    .yajl_string = cb_string,
    .yajl_start_map = cb_start_map,
    .yajl_map_key = cb_key,
    .yajl_end_map = cb_end,
    .yajl_start_array = cb_start_array,
    .yajl_end_array = cb_end,
};

/* yajl's own refusal at byte at, in the shape of the others. */
static void yajl_refusal(pj_reader *r, size_t at)
{
    unsigned char *m = yajl_get_error(r->h, 0, NULL, 0);
    char text[200];
    snprintf(text, sizeof(text), "%s", m ? (const char *)m : "invalid JSON");
    text[strcspn(text, "\r\n")] = '\0';
    pj_syntax(r, at, "%s", text);
    if (m)
        yajl_free_error(r->h, m);
}

/* Streams the text through yajl into r. 0, or -1 with r->err. */
static int parse(pj_reader *r)
{
    size_t i = 0;
    if (check_depth(r, r->buf, r->len) < 0)
        return -1;
    while (i < r->len && strchr(" \t\r\n", r->buf[i]) && r->buf[i] != '\0')
        i++;
    if (i == r->len)
        return pj_syntax(r, r->len, "'[' or '{' expected near end of file"), -1;
    r->start = i;
    if (!(r->h = yajl_alloc(&pj_callbacks, NULL, r)))
        return pj_nomem(r);
    size_t at = r->len;
    yajl_status s = yajl_parse(r->h, (const unsigned char *)r->buf, r->len);
    if (s != yajl_status_ok)
        at = pj_here(r);
    else
        s = yajl_complete_parse(r->h);
    if (s != yajl_status_ok && !r->stop)
        yajl_refusal(r, at);
    yajl_free(r->h);
    r->h = NULL;
    if (s != yajl_status_ok)
        return -1;
    /* yajl lets an unterminated string after the value pass */
    for (i = r->root_end; i < r->len; i++)
        if (!strchr(" \t\r\n", r->buf[i]) || r->buf[i] == '\0')
            return pj_syntax(r, i, "end of file expected"), -1;
    return r->bad ? -1 : 0;
}

/* ---- ranks ----------------------------------------------------------------- */

static int cmp_rank(const void *a, const void *b)
{
    const pj_rank *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int check_unique_ranks(pj_reader *r, pj_rank *ranks, size_t n)
{
    qsort(ranks, n, sizeof(*ranks), cmp_rank);
    for (size_t i = 1; i < n; i++)
        if (ranks[i].rank == ranks[i - 1].rank) {
            size_t first = ranks[i - 1].index, later = ranks[i].index;
            return pj_fail(r, "ranks[%zu].rank: rank %d appears twice (also ranks[%zu])",
                           later, ranks[i].rank, first);
        }
    return 0;
}

/* ---- interning ------------------------------------------------------------- */

typedef struct pj_key {
    const char *name;
    size_t index;
} pj_key;

static int cmp_key(const void *a, const void *b)
{
    const pj_key *x = a, *y = b;
    int c = x->name == y->name ? 0 : strcmp(x->name, y->name); /* names kept once are alike */
    if (c)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Numbers n names in order of first appearance: ids[i] for name i; first[k]
 * the first occurrence of id k. Sorts instead of hashing: O(n log n) whatever
 * the names. Returns the number of distinct names, or -1 (out of memory). */
static long intern(pj_key *keys, size_t n, int *ids, size_t *first)
{
    size_t *rep = malloc((n ? n : 1) * sizeof(*rep));
    if (!rep)
        return -1;
    qsort(keys, n, sizeof(*keys), cmp_key);
    for (size_t i = 0; i < n; i++) {
        size_t head = (i > 0 && (keys[i].name == keys[i - 1].name ||
                                 strcmp(keys[i].name, keys[i - 1].name) == 0))
                          ? rep[keys[i - 1].index] : keys[i].index;
        rep[keys[i].index] = head;
    }
    long next = 0;
    for (size_t i = 0; i < n; i++) {
        if (rep[i] == i) {
            first[next] = i;
            ids[i] = (int)next++;
        } else {
            ids[i] = ids[rep[i]];
        }
    }
    free(rep);
    return next;
}

/* Callpath ids into r->raw, names and categories into out. A callpath given
 * two categories is refused at its second one. */
static int intern_callpaths(pj_reader *r, profile *out)
{
    size_t n = r->nocc;
    pj_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    size_t *first = malloc((n ? n : 1) * sizeof(*first));
    int rc = -1;
    if (!keys || !ids || !first) {
        pj_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (pj_key){r->text + r->occ[i].name, i};
    long nd = intern(keys, n, ids, first);
    if (nd < 0 || nd > INT_MAX) {
        nd < 0 ? pj_nomem(r) : pj_fail(r, "too many callpaths");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const pj_occ *o = &r->occ[i], *f = &r->occ[first[ids[i]]];
        if (o->category != f->category) {
            char path[PJ_PATH];
            occ_path(path, sizeof(path), o);
            const char *name = r->text + o->name;
            pj_fail(r, "%s.category: \"%s\" but callpath \"%.*s\" is \"%s\" earlier", path,
                    category_names[o->category], shown(name), name,
                    category_names[f->category]);
            goto done;
        }
    }
    out->callpaths = calloc(nd ? (size_t)nd : 1, sizeof(*out->callpaths));
    if (!out->callpaths) {
        pj_nomem(r);
        goto done;
    }
    for (long k = 0; k < nd; k++) {
        const pj_occ *f = &r->occ[first[k]];
        out->callpaths[k].category = f->category;
        if (!(out->callpaths[k].name = strdup(r->text + f->name))) {
            pj_nomem(r);
            goto done;
        }
        out->ncallpaths = (int)k + 1;
    }
    for (size_t i = 0; i < r->nraw; i++)
        r->raw[i].callpath = ids[r->raw[i].occ];
    rc = 0;
done:
    free(keys);
    free(ids);
    free(first);
    return rc;
}

/* Metric ids into r->raw, names into out: the names kept (a few) are
 * interned, each row takes its name's id. */
static int intern_metrics(pj_reader *r, profile *out)
{
    size_t n = r->nmnames;
    pj_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    size_t *first = malloc((n ? n : 1) * sizeof(*first));
    int rc = -1;
    if (!keys || !ids || !first) {
        pj_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (pj_key){r->text + r->mnames[i], i};
    long nd = intern(keys, n, ids, first);
    if (nd < 0 || nd > INT_MAX) {
        nd < 0 ? pj_nomem(r) : pj_fail(r, "too many metrics");
        goto done;
    }
    out->metrics = calloc(nd ? (size_t)nd : 1, sizeof(*out->metrics));
    if (!out->metrics) {
        pj_nomem(r);
        goto done;
    }
    for (long k = 0; k < nd; k++) {
        if (!(out->metrics[k] = strdup(r->text + r->mnames[first[k]]))) {
            pj_nomem(r);
            goto done;
        }
        out->nmetrics = (int)k + 1;
    }
    for (size_t i = 0; i < r->nraw; i++)
        r->raw[i].metric = ids[r->raw[i].metric_name];
    rc = 0;
done:
    free(keys);
    free(ids);
    free(first);
    return rc;
}

/* ---- rows ------------------------------------------------------------------ */

static int cmp_raw(const void *a, const void *b)
{
    const pj_raw *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->callpath != y->callpath)
        return x->callpath < y->callpath ? -1 : 1;
    if (x->metric != y->metric)
        return x->metric < y->metric ? -1 : 1;
    return x->occ < y->occ ? -1 : x->occ > y->occ;
}

static int same_cell(const pj_raw *x, const pj_raw *y)
{
    return x->rank == y->rank && x->phase == y->phase && x->step == y->step &&
           x->callpath == y->callpath && x->metric == y->metric;
}

/* Sorts the raw rows and sums the ones of one (rank, phase, step, callpath,
 * metric) cell: a callpath listed twice in a step. The rows are written over
 * the raw rows they come from, so no second array of rows is needed: a row is
 * smaller than a raw row, and row n is written only after raw row n (n <= i)
 * has been copied out; the block then passes to out. */
_Static_assert(sizeof(profile_row) <= sizeof(pj_raw), "rows are written over raw rows");
static int build_rows(pj_reader *r, profile *out)
{
    if (r->nraw == 0)
        return pj_fail(r, "ranks: no callpath has a metric in any step");
    qsort(r->raw, r->nraw, sizeof(*r->raw), cmp_raw);
    profile_row *rows = (profile_row *)(void *)r->raw;
    pj_raw prev = {0};
    size_t n = 0;
    for (size_t i = 0; i < r->nraw; i++) {
        pj_raw x = r->raw[i];
        if (n > 0 && same_cell(&x, &prev)) {
            rows[n - 1].value += x.value;
            if (!isfinite(rows[n - 1].value)) {
                char path[PJ_PATH], mpath[PJ_PATH + 64];
                occ_path(path, sizeof(path), &r->occ[x.occ]);
                metric_path(mpath, sizeof(mpath), path, r->text + r->mnames[x.metric_name]);
                return pj_fail(r, "%s: the sum over the step overflows", mpath);
            }
            continue;
        }
        rows[n++] = (profile_row){.rank = x.rank, .phase = x.phase, .step = x.step,
                                  .callpath = x.callpath, .metric = x.metric, .value = x.value};
        prev = x;
    }
    profile_row *fit = realloc(rows, n * sizeof(*rows));
    out->rows = fit ? fit : rows;
    out->nrows = n;
    r->raw = NULL;
    r->nraw = r->raw_cap = 0;
    return 0;
}

/* ---- entry point ----------------------------------------------------------- */

/* A seed for the key sets' hash that input cannot predict. */
static uint64_t pj_seed(const pj_reader *r)
{
    uint64_t seed;
    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
        seed = (uint64_t)(uintptr_t)r * 0x9E3779B97F4A7C15ull;
    return seed;
}

static void reader_free(pj_reader *r)
{
    for (int i = 0; i <= PJ_MAX_DEPTH; i++)
        keyset_free(&r->frame[i].keys);
    free(r->occ);
    free(r->raw);
    free(r->text);
    free(r->mnames);
    free(r->byslot);
    free(r->ranks);
    free(r->key);
}

int ingest_profile_json(const char *buf, size_t len, profile *out, ingest_error *err)
{
    pj_reader r = {.err = err, .out = out, .buf = buf, .len = len, .escape_at = (size_t)-1};
    memset(out, 0, sizeof(*out));
    memset(err, 0, sizeof(*err));
    err->offset = -1;
    out->repetition = 1;
    r.seed = pj_seed(&r);
    int rc = parse(&r);
    if (rc == 0 && r.nraw > 0 && r.nraw < r.raw_cap) { /* the rows' slack, before sorting */
        pj_raw *fit = realloc(r.raw, r.nraw * sizeof(*r.raw));
        if (fit)
            r.raw = fit, r.raw_cap = r.nraw;
    }
    if (rc == 0 && (check_unique_ranks(&r, r.ranks, r.nranks) < 0 ||
                    intern_callpaths(&r, out) < 0 || intern_metrics(&r, out) < 0 ||
                    build_rows(&r, out) < 0))
        rc = -1;
    reader_free(&r);
    if (rc < 0) {
        profile_free(out);
        sanitize(err->msg);
    }
    return rc;
}
