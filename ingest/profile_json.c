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
 * The bytes come from the network, so everything is checked and a fault is
 * reported with the JSON path ("ranks[0].steps[2].callpaths[5].metrics.time:
 * expected a finite number >= 0") or, for syntax errors, Jansson's line,
 * column and byte offset. Unknown members are refused too, so a misspelt key
 * is not silently ignored. Nesting is bounded before Jansson sees the bytes.
 * Names are interned by sorting, not hashing, so crafted names cannot make
 * the reader quadratic. Nothing is returned half-built.
 */
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/profile.h"

#define PJ_MAX_NAME 4096 /* bytes in a callpath, metric or parameter name */
#define PJ_MAX_DEPTH 32  /* nesting of arrays and objects; the format needs 8 */
#define PJ_SHOWN 40      /* bytes of a name quoted in a message */
#define PJ_PATH 160      /* room for the longest index-only JSON path */
#define PJ_MAX_LEVELS 64 /* factors named in "levels" (an experiment declares at most 8) */

/* One entry of a "callpaths" array, in document order. */
typedef struct pj_occ {
    const char *name; /* owned by the Jansson document */
    int category;
    int between;      /* 1 under "between_steps" */
    size_t rank_i, step_i, cp_i; /* array positions, for messages */
} pj_occ;

/* One metric of one callpath entry, before duplicates are summed. */
typedef struct pj_raw {
    int rank, phase, step;
    int callpath;       /* set once callpaths are interned */
    int metric;         /* set once metrics are interned */
    size_t occ;         /* its pj_occ */
    const char *metric_name;
    double value;
} pj_raw;

typedef struct pj_reader {
    ingest_error *err;
    pj_occ *occ;
    size_t nocc, occ_cap;
    pj_raw *raw;
    size_t nraw, raw_cap;
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

/* Length of the well-formed UTF-8 sequence at s (1 to 4), 0 when there is
 * none; s is NUL-terminated. Overlong forms and surrogates are not well-formed. */
static int utf8_sequence(const unsigned char *s)
{
    int n;
    unsigned min;
    unsigned cp;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2, min = 0x80, cp = s[0] & 0x1F;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, min = 0x800, cp = s[0] & 0x0F;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Makes a message safe to put into JSON or a log line: control characters
 * and bytes outside well-formed UTF-8 (Jansson quotes raw input) become '?'. */
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

/* ---- syntax ---------------------------------------------------------------- */

/* Refuses nesting deeper than PJ_MAX_DEPTH before Jansson recurses into it.
 * Brackets inside strings do not count. */
static int check_depth(pj_reader *r, const char *buf, size_t len)
{
    int depth = 0, in_string = 0, escaped = 0;
    long line = 1;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n')
            line++;
        if (in_string) {
            if (escaped)
                escaped = 0;
            else if (c == '\\')
                escaped = 1;
            else if (c == '"')
                in_string = 0;
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

static json_t *parse(pj_reader *r, const char *buf, size_t len)
{
    json_error_t je;
    if (check_depth(r, buf, len) < 0)
        return NULL;
    json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
    /* Jansson leaves the text empty when an allocation fails mid-parse */
    if (!root && (json_error_code(&je) == json_error_out_of_memory || je.text[0] == '\0')) {
        pj_nomem(r);
        return NULL;
    }
    if (!root) {
        pj_fail(r, "line %d column %d: %s", je.line, je.column, je.text);
        r->err->line = je.line > 0 ? je.line : 0;
        r->err->offset = je.position;
        return NULL;
    }
    if (!json_is_object(root)) {
        json_decref(root);
        pj_fail(r, "expected a JSON object at the top");
        return NULL;
    }
    return root;
}

/* ---- values ---------------------------------------------------------------- */

/* Refuses members of obj other than the NULL-terminated allowed keys. */
static int only_members(pj_reader *r, const char *path, const json_t *obj,
                        const char *const *allowed)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        int ok = 0;
        for (const char *const *a = allowed; *a && !ok; a++)
            ok = strcmp(key, *a) == 0;
        if (!ok)
            return pj_fail(r, "%s%sunknown member \"%.*s\"", path, path[0] ? ": " : "",
                           shown(key), key);
    }
    return 0;
}

/* A name: a non-empty string of at most PJ_MAX_NAME bytes without NUL. */
static int check_name(pj_reader *r, const char *path, const char *s, size_t len)
{
    if (len == 0)
        return pj_fail(r, "%s: expected a non-empty name", path);
    if (len > PJ_MAX_NAME)
        return pj_fail(r, "%s: name longer than %d bytes", path, PJ_MAX_NAME);
    if (strlen(s) != len)
        return pj_fail(r, "%s: name contains a NUL byte", path);
    return 0;
}

static int get_name(pj_reader *r, const char *path, const json_t *v, const char **out)
{
    if (!v)
        return pj_fail(r, "%s: missing", path);
    if (!json_is_string(v))
        return pj_fail(r, "%s: expected a string", path);
    if (check_name(r, path, json_string_value(v), json_string_length(v)) < 0)
        return -1;
    *out = json_string_value(v);
    return 0;
}

/* A finite number; Jansson already refuses NaN, inf and overflowing literals,
 * this guards against any that slip through. */
static int get_number(const json_t *v, double *out)
{
    if (json_is_integer(v))
        *out = (double)json_integer_value(v);
    else if (json_is_real(v))
        *out = json_real_value(v);
    else
        return -1;
    return isfinite(*out) ? 0 : -1;
}

/* An integer in [lo, INT_MAX]. */
static int get_int(pj_reader *r, const char *path, const json_t *v, int lo, int *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > INT_MAX)
        return pj_fail(r, "%s: expected an integer >= %d", path, lo);
    *out = (int)json_integer_value(v);
    return 0;
}

/* Metrics that count or measure something and so cannot be negative. */
static int nonnegative_metric(const char *name)
{
    return strcmp(name, "time") == 0 || strcmp(name, "visits") == 0 ||
           strcmp(name, "bytes") == 0;
}

/* ---- collecting ------------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need) {
        if (n > SIZE_MAX / 2 / size)
            return -1;
        n *= 2;
    }
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Where the callpath entries being read sit. */
typedef struct pj_step {
    int rank, phase, step;
    int between;
    size_t rank_i, step_i;
} pj_step;

static void occ_path(char *out, size_t cap, const pj_occ *o)
{
    snprintf(out, cap, "ranks[%zu].%s[%zu].callpaths[%zu]", o->rank_i,
             o->between ? "between_steps" : "steps", o->step_i, o->cp_i);
}

static int read_metrics(pj_reader *r, const char *path, const json_t *metrics,
                        const pj_step *at, size_t occ)
{
    char mpath[PJ_PATH + 64];
    const char *key;
    const json_t *v;
    if (!metrics)
        return pj_fail(r, "%s.metrics: missing", path);
    if (!json_is_object(metrics))
        return pj_fail(r, "%s.metrics: expected an object of metric values", path);
    if (json_object_size(metrics) == 0)
        return pj_fail(r, "%s.metrics: expected at least one metric", path);
    json_object_foreach((json_t *)metrics, key, v) {
        double d;
        metric_path(mpath, sizeof(mpath), path, key);
        if (check_name(r, mpath, key, strlen(key)) < 0)
            return -1;
        int nonneg = nonnegative_metric(key);
        if (get_number(v, &d) < 0 || (nonneg && d < 0))
            return pj_fail(r, "%s: expected a finite number%s", mpath, nonneg ? " >= 0" : "");
        if (grow((void **)&r->raw, &r->raw_cap, r->nraw + 1, sizeof(*r->raw)) < 0)
            return pj_nomem(r);
        r->raw[r->nraw++] = (pj_raw){.rank = at->rank, .phase = at->phase, .step = at->step,
                                     .occ = occ, .metric_name = key, .value = d + 0.0};
    }
    return 0;
}

static int read_callpath(pj_reader *r, const json_t *cp, const pj_step *at, size_t cp_i)
{
    static const char *const members[] = {"name", "category", "metrics", NULL};
    char path[PJ_PATH], sub[PJ_PATH + 16];
    pj_occ o = {.between = at->between, .rank_i = at->rank_i, .step_i = at->step_i,
                .cp_i = cp_i};
    occ_path(path, sizeof(path), &o);
    if (!json_is_object(cp))
        return pj_fail(r, "%s: expected an object", path);
    if (only_members(r, path, cp, members) < 0)
        return -1;
    snprintf(sub, sizeof(sub), "%s.name", path);
    if (get_name(r, sub, json_object_get(cp, "name"), &o.name) < 0)
        return -1;
    const json_t *cat = json_object_get(cp, "category");
    snprintf(sub, sizeof(sub), "%s.category", path);
    if (!cat)
        return pj_fail(r, "%s: missing", sub);
    if (!json_is_string(cat) || (o.category = profile_category_from_name(json_string_value(cat))) < 0)
        return pj_fail(r, "%s: expected \"comp\", \"comm\", \"mem\" or \"host\"", sub);
    if (grow((void **)&r->occ, &r->occ_cap, r->nocc + 1, sizeof(*r->occ)) < 0)
        return pj_nomem(r);
    r->occ[r->nocc] = o;
    if (read_metrics(r, path, json_object_get(cp, "metrics"), at, r->nocc) < 0)
        return -1;
    r->nocc++;
    return 0;
}

static int read_callpaths(pj_reader *r, const char *path, const json_t *step, const pj_step *at)
{
    const json_t *cps = json_object_get(step, "callpaths");
    if (!cps)
        return pj_fail(r, "%s.callpaths: missing", path);
    if (!json_is_array(cps))
        return pj_fail(r, "%s.callpaths: expected an array", path);
    for (size_t i = 0; i < json_array_size(cps); i++)
        if (read_callpath(r, json_array_get(cps, i), at, i) < 0)
            return -1;
    return 0;
}

static int read_steps(pj_reader *r, const json_t *steps, int rank, size_t rank_i)
{
    static const char *const members[] = {"phase", "callpaths", NULL};
    char path[PJ_PATH], sub[PJ_PATH + 16];
    int count[2] = {0, 0}; /* steps seen per phase */
    if (!steps)
        return 0;
    if (!json_is_array(steps))
        return pj_fail(r, "ranks[%zu].steps: expected an array", rank_i);
    if (json_array_size(steps) > INT_MAX)
        return pj_fail(r, "ranks[%zu].steps: too many steps", rank_i);
    for (size_t i = 0; i < json_array_size(steps); i++) {
        const json_t *s = json_array_get(steps, i);
        snprintf(path, sizeof(path), "ranks[%zu].steps[%zu]", rank_i, i);
        if (!json_is_object(s))
            return pj_fail(r, "%s: expected an object", path);
        if (only_members(r, path, s, members) < 0)
            return -1;
        int phase = PROFILE_TRAIN;
        const json_t *ph = json_object_get(s, "phase");
        if (ph) {
            snprintf(sub, sizeof(sub), "%s.phase", path);
            if (!json_is_string(ph))
                return pj_fail(r, "%s: expected \"train\" or \"validation\"", sub);
            if (strcmp(json_string_value(ph), "train") == 0)
                phase = PROFILE_TRAIN;
            else if (strcmp(json_string_value(ph), "validation") == 0)
                phase = PROFILE_VALIDATION;
            else
                return pj_fail(r, "%s: expected \"train\" or \"validation\"", sub);
        }
        pj_step at = {.rank = rank, .phase = phase, .step = count[phase]++, .between = 0,
                      .rank_i = rank_i, .step_i = i};
        if (read_callpaths(r, path, s, &at) < 0)
            return -1;
    }
    return 0;
}

static int read_between(pj_reader *r, const json_t *gaps, int rank, size_t rank_i)
{
    static const char *const members[] = {"callpaths", NULL};
    char path[PJ_PATH];
    if (!gaps)
        return 0;
    if (!json_is_array(gaps))
        return pj_fail(r, "ranks[%zu].between_steps: expected an array", rank_i);
    if (json_array_size(gaps) > INT_MAX)
        return pj_fail(r, "ranks[%zu].between_steps: too many gaps", rank_i);
    for (size_t i = 0; i < json_array_size(gaps); i++) {
        const json_t *g = json_array_get(gaps, i);
        snprintf(path, sizeof(path), "ranks[%zu].between_steps[%zu]", rank_i, i);
        if (!json_is_object(g))
            return pj_fail(r, "%s: expected an object", path);
        if (only_members(r, path, g, members) < 0)
            return -1;
        pj_step at = {.rank = rank, .phase = PROFILE_BETWEEN, .step = (int)i, .between = 1,
                      .rank_i = rank_i, .step_i = i};
        if (read_callpaths(r, path, g, &at) < 0)
            return -1;
    }
    return 0;
}

/* A rank number and where it was given, to find duplicates by sorting. */
typedef struct pj_rank {
    int rank;
    size_t index;
} pj_rank;

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

static int read_ranks(pj_reader *r, const json_t *root, int *nranks)
{
    static const char *const members[] = {"rank", "steps", "between_steps", NULL};
    char path[PJ_PATH];
    const json_t *ranks = json_object_get(root, "ranks");
    if (!ranks)
        return pj_fail(r, "missing \"ranks\"");
    if (!json_is_array(ranks))
        return pj_fail(r, "ranks: expected an array");
    size_t n = json_array_size(ranks);
    if (n == 0)
        return pj_fail(r, "ranks: expected at least one rank");
    if (n > INT_MAX)
        return pj_fail(r, "ranks: too many ranks");
    pj_rank *seen = malloc(n * sizeof(*seen));
    if (!seen)
        return pj_nomem(r);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const json_t *rk = json_array_get(ranks, i);
        snprintf(path, sizeof(path), "ranks[%zu]", i);
        if (!json_is_object(rk)) {
            rc = pj_fail(r, "%s: expected an object", path);
            break;
        }
        rc = only_members(r, path, rk, members);
        if (rc == 0 && !json_object_get(rk, "rank"))
            rc = pj_fail(r, "%s.rank: missing", path);
        snprintf(path, sizeof(path), "ranks[%zu].rank", i);
        if (rc == 0)
            rc = get_int(r, path, json_object_get(rk, "rank"), 0, &seen[i].rank);
        seen[i].index = i;
        if (rc == 0)
            rc = read_steps(r, json_object_get(rk, "steps"), seen[i].rank, i);
        if (rc == 0)
            rc = read_between(r, json_object_get(rk, "between_steps"), seen[i].rank, i);
    }
    if (rc == 0)
        rc = check_unique_ranks(r, seen, n);
    free(seen);
    *nranks = (int)n;
    return rc;
}

/* ---- interning ------------------------------------------------------------- */

typedef struct pj_key {
    const char *name;
    size_t index;
} pj_key;

static int cmp_key(const void *a, const void *b)
{
    const pj_key *x = a, *y = b;
    int c = strcmp(x->name, y->name);
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
        size_t head = (i > 0 && strcmp(keys[i].name, keys[i - 1].name) == 0)
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
        keys[i] = (pj_key){r->occ[i].name, i};
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
            pj_fail(r, "%s.category: \"%s\" but callpath \"%.*s\" is \"%s\" earlier", path,
                    category_names[o->category], shown(o->name), o->name,
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
        if (!(out->callpaths[k].name = strdup(f->name))) {
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

static int intern_metrics(pj_reader *r, profile *out)
{
    size_t n = r->nraw;
    pj_key *keys = malloc((n ? n : 1) * sizeof(*keys));
    int *ids = malloc((n ? n : 1) * sizeof(*ids));
    size_t *first = malloc((n ? n : 1) * sizeof(*first));
    int rc = -1;
    if (!keys || !ids || !first) {
        pj_nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (pj_key){r->raw[i].metric_name, i};
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
        if (!(out->metrics[k] = strdup(r->raw[first[k]].metric_name))) {
            pj_nomem(r);
            goto done;
        }
        out->nmetrics = (int)k + 1;
    }
    for (size_t i = 0; i < n; i++)
        r->raw[i].metric = ids[i];
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
 * metric) cell: a callpath listed twice in a step. */
static int build_rows(pj_reader *r, profile *out)
{
    if (r->nraw == 0)
        return pj_fail(r, "ranks: no callpath has a metric in any step");
    qsort(r->raw, r->nraw, sizeof(*r->raw), cmp_raw);
    out->rows = malloc(r->nraw * sizeof(*out->rows));
    if (!out->rows)
        return pj_nomem(r);
    size_t n = 0;
    for (size_t i = 0; i < r->nraw; i++) {
        const pj_raw *x = &r->raw[i];
        if (n > 0 && same_cell(x, &r->raw[i - 1])) {
            out->rows[n - 1].value += x->value;
            if (!isfinite(out->rows[n - 1].value)) {
                char path[PJ_PATH], mpath[PJ_PATH + 64];
                occ_path(path, sizeof(path), &r->occ[x->occ]);
                metric_path(mpath, sizeof(mpath), path, x->metric_name);
                return pj_fail(r, "%s: the sum over the step overflows", mpath);
            }
            continue;
        }
        out->rows[n++] = (profile_row){.rank = x->rank, .phase = x->phase, .step = x->step,
                                       .callpath = x->callpath, .metric = x->metric,
                                       .value = x->value};
    }
    out->nrows = n;
    return 0;
}

/* ---- point and repetition -------------------------------------------------- */

static int read_point(pj_reader *r, const json_t *root, profile *out)
{
    char path[PJ_PATH + 64];
    const json_t *point = json_object_get(root, "point");
    const char *key;
    const json_t *v;
    if (!point)
        return 0;
    if (!json_is_object(point))
        return pj_fail(r, "point: expected an object of parameter values");
    size_t n = json_object_size(point);
    if (n == 0)
        return 0;
    if (n > INT_MAX)
        return pj_fail(r, "point: too many parameters");
    out->param_names = calloc(n, sizeof(*out->param_names));
    out->point = calloc(n, sizeof(*out->point));
    if (!out->param_names || !out->point)
        return pj_nomem(r);
    json_object_foreach((json_t *)point, key, v) {
        path_key(path, sizeof(path), "point", key);
        if (check_name(r, path, key, strlen(key)) < 0)
            return -1;
        if (get_number(v, &out->point[out->nparams]) < 0)
            return pj_fail(r, "%s: expected a finite number", path);
        if (!(out->param_names[out->nparams] = strdup(key)))
            return pj_nomem(r);
        out->nparams++;
    }
    return 0;
}

static int read_repetition(pj_reader *r, const json_t *root, profile *out)
{
    const json_t *rep = json_object_get(root, "repetition");
    out->repetition = 1;
    if (!rep)
        return 0;
    return get_int(r, "repetition", rep, 1, &out->repetition);
}

/* "levels": factor name -> level, both names; which factors and levels the
 * experiment declares is the service's to check. */
static int read_levels(pj_reader *r, const json_t *root, profile *out)
{
    char path[PJ_PATH + 64];
    const json_t *levels = json_object_get(root, "levels");
    const char *key;
    const json_t *v;
    if (!levels)
        return 0;
    if (!json_is_object(levels))
        return pj_fail(r, "levels: expected an object: factor name -> its level");
    size_t n = json_object_size(levels);
    if (n == 0)
        return 0;
    if (n > PJ_MAX_LEVELS)
        return pj_fail(r, "levels: more than %d factors", PJ_MAX_LEVELS);
    out->level_names = calloc(n, sizeof(*out->level_names));
    out->level_values = calloc(n, sizeof(*out->level_values));
    if (!out->level_names || !out->level_values)
        return pj_nomem(r);
    json_object_foreach((json_t *)levels, key, v) {
        const char *level;
        path_key(path, sizeof(path), "levels", key);
        if (check_name(r, path, key, strlen(key)) < 0 || get_name(r, path, v, &level) < 0)
            return -1;
        out->level_names[out->nlevels] = strdup(key);
        out->level_values[out->nlevels] = strdup(level);
        /* counted before checking, so that profile_free frees a half pair */
        if (!out->level_names[out->nlevels++] || !out->level_values[out->nlevels - 1])
            return pj_nomem(r);
    }
    return 0;
}

/* ---- entry point ----------------------------------------------------------- */

static int read_document(pj_reader *r, const json_t *root, profile *out)
{
    static const char *const members[] = {"point", "repetition", "levels", "ranks", NULL};
    if (only_members(r, "", root, members) < 0 || read_point(r, root, out) < 0 ||
        read_repetition(r, root, out) < 0 || read_levels(r, root, out) < 0 ||
        read_ranks(r, root, &out->nranks) < 0 ||
        intern_callpaths(r, out) < 0 || intern_metrics(r, out) < 0)
        return -1;
    return build_rows(r, out);
}

int ingest_profile_json(const char *buf, size_t len, profile *out, ingest_error *err)
{
    pj_reader r = {.err = err};
    memset(out, 0, sizeof(*out));
    memset(err, 0, sizeof(*err));
    err->offset = -1;
    json_t *root = parse(&r, buf, len);
    int rc = root ? read_document(&r, root, out) : -1;
    json_decref(root);
    free(r.occ);
    free(r.raw);
    if (rc < 0) {
        profile_free(out);
        sanitize(err->msg);
    }
    return rc;
}
