/*
 * stepsum.c — callpaths, steps and per-step sums shared by the trace
 * readers (stepsum.h).
 *
 * Callpaths are interned in an open-addressing table keyed by a seeded hash
 * of (name, category); their names live in one arena. Sums live in a second
 * table keyed by (slot, callpath), where a slot is a step index or a gap
 * index with the top bit set. Both tables double when half full; a probe
 * that runs longer than SUM_MAX_PROBE slots is refused as a crafted input,
 * so no input makes interning quadratic. The hash seed comes from
 * getrandom(), so collisions cannot be planned; results never depend on it
 * (ids are numbered in order of first appearance).
 *
 * Steps are kept sorted by start. In the first pass they must arrive in time
 * order for events to be placed at once; anything else falls back to a
 * second pass (stepsum.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "ingest/stepsum.h"

#include "common/grow.h"
#include "common/utf8.h"
#include "ingest/phase.h"

#define SUM_MAX_PROBE 4096
#define SUM_GAP 0x80000000u /* slot bit: a gap, not a step */

typedef struct sum_callpath {
    uint64_t hash;
    size_t off;      /* name in the arena */
    uint32_t len;
    int category;
} sum_callpath;

typedef struct sum_cell {
    uint64_t key;    /* slot << 32 | callpath */
    double time;     /* trace units */
    double bytes;
    long long visits;
    int has_bytes;
} sum_cell;

typedef struct sum_step {
    double start, end;
    char label[64];
} sum_step;

typedef struct sum_window {
    double start, end;
} sum_window;

typedef struct sum_pending {
    double t, dur, bytes;
    int cp;
} sum_pending;

typedef struct sum_total {
    double time, bytes;
    long long visits;
    int has_bytes;
} sum_total;

struct ingest_sum {
    uint64_t seed;
    /* limits */
    int max_callpaths, max_steps;
    size_t max_cells, max_pending, max_arena;

    /* callpaths */
    sum_callpath *cps;
    sum_total *totals;
    int ncps;
    size_t cps_cap, totals_cap;
    uint32_t *cp_index;  /* 0 empty, else id + 1 */
    size_t cp_index_cap; /* power of 2 */
    char *arena;
    size_t arena_len, arena_cap;

    /* steps */
    sum_step *steps;
    int nsteps, steps_cap;
    int last;            /* the step the previous lookup found */
    int final;           /* every step is known */
    int unordered;       /* a step arrived before an earlier one */
    int overflow;        /* the pending events did not fit */

    /* sums */
    sum_cell *cells;
    size_t ncells, cells_cap;
    uint32_t *cell_index;
    size_t cell_index_cap;

    sum_pending *pending;
    size_t npending, pending_cap;

    long long events;

    /* validation phase (phase.h): patterns, ranges that matched, the
     * upload's override (0 none, else the phase of every step) */
    ingest_phase_patterns vpat;
    sum_window *windows;
    size_t nwindows, windows_cap;
    int force_phase;
    int second;          /* in a second pass: ranges already known */
    int nvalidation;     /* steps found to be validation steps */
};

static int sum_fail(ingest_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sum_fail(ingest_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->line = 0;
    err->offset = -1;
    return -1;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static uint64_t name_hash(const char *p, size_t n, int category, uint64_t seed)
{
    uint64_t h = seed ^ ((uint64_t)n * 0x9e3779b97f4a7c15ull) ^ (uint64_t)category;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ mix64(w)) * 0xff51afd7ed558ccdull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    return mix64(h ^ w ^ ((uint64_t)n << 56));
}

int ingest_contains_nocase(const char *hay, size_t hlen, const char *needle, size_t nlen)
{
    if (nlen == 0)
        return 1;
    for (size_t i = 0; i + nlen <= hlen; i++) {
        size_t k = 0;
        while (k < nlen) {
            unsigned char a = (unsigned char)hay[i + k], b = (unsigned char)needle[k];
            if (a >= 'A' && a <= 'Z')
                a = (unsigned char)(a - 'A' + 'a');
            if (b >= 'A' && b <= 'Z')
                b = (unsigned char)(b - 'A' + 'a');
            if (a != b)
                break;
            k++;
        }
        if (k == nlen)
            return 1;
    }
    return 0;
}

void ingest_clean_message(char *msg)
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

static int contains(const char *hay, size_t hlen, const char *needle)
{
    size_t n = strlen(needle);
    return hlen >= n && memmem(hay, hlen, needle, n) != NULL;
}

int ingest_kernel_category(const char *name, size_t len)
{
    const char *p = name;
    size_t n = len;
    if (n >= 5 && !memcmp(p, "void ", 5))
        p += 5, n -= 5;
    if (n >= 4 && ingest_contains_nocase(p, 4, "nccl", 4))
        return PROFILE_COMM;
    static const char *const collective[] = {"AllReduce", "AllGather", "ReduceScatter",
                                             "Broadcast", "SendRecv", "AllToAll"};
    for (size_t i = 0; i < sizeof collective / sizeof *collective; i++)
        if (contains(name, len, collective[i]))
            return PROFILE_COMM;
    return PROFILE_COMP;
}

/* ---- construction ------------------------------------------------------------ */

static uint64_t random_seed(const void *salt)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)salt;
    }
    return mix64(seed);
}

ingest_sum *ingest_sum_new(const ingest_trace_options *o, ingest_error *err)
{
    ingest_sum *s = calloc(1, sizeof *s);
    if (!s) {
        sum_fail(err, "out of memory");
        return NULL;
    }
    s->seed = random_seed(s);
    s->max_callpaths = o->max_callpaths > 0 ? o->max_callpaths : 100000;
    s->max_steps = o->max_steps > 0 ? o->max_steps : 100000;
    s->max_cells = o->max_cells > 0 ? o->max_cells : (size_t)1 << 20;
    s->max_pending = o->max_pending > 0 ? o->max_pending : (size_t)1 << 19;
    s->max_arena = (size_t)64 << 20;
    s->last = -1;
    ingest_phase_compile(o->validation, &s->vpat);
    s->force_phase = o->phase;
    return s;
}

void ingest_sum_free(ingest_sum *s)
{
    if (!s)
        return;
    free(s->cps);
    free(s->totals);
    free(s->cp_index);
    free(s->arena);
    free(s->steps);
    free(s->cells);
    free(s->cell_index);
    free(s->pending);
    free(s->windows);
    free(s);
}

/* ---- callpaths ---------------------------------------------------------------- */

static int cp_rehash(ingest_sum *s, size_t cap)
{
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return -1;
    for (int i = 0; i < s->ncps; i++) {
        size_t h = (size_t)s->cps[i].hash & (cap - 1);
        while (idx[h])
            h = (h + 1) & (cap - 1);
        idx[h] = (uint32_t)i + 1;
    }
    free(s->cp_index);
    s->cp_index = idx;
    s->cp_index_cap = cap;
    return 0;
}

int ingest_sum_callpath(ingest_sum *s, const char *name, size_t len, int category,
                        ingest_error *err)
{
    if (len == 0)
        return sum_fail(err, "an event has an empty name");
    if (len > INGEST_MAX_NAME)
        return sum_fail(err, "an event name is longer than %d bytes", INGEST_MAX_NAME);
    uint64_t h = name_hash(name, len, category, s->seed);
    if (s->cp_index_cap) {
        size_t i = (size_t)h & (s->cp_index_cap - 1);
        for (int probe = 0; s->cp_index[i]; probe++) {
            const sum_callpath *c = &s->cps[s->cp_index[i] - 1];
            if (c->hash == h && c->len == len && c->category == category &&
                !memcmp(s->arena + c->off, name, len))
                return (int)(s->cp_index[i] - 1);
            if (probe > SUM_MAX_PROBE)
                return sum_fail(err, "too many event names collide; refusing a crafted input");
            i = (i + 1) & (s->cp_index_cap - 1);
        }
    }
    if (memchr(name, '\0', len))
        return sum_fail(err, "an event name contains a NUL character");
    if (s->ncps >= s->max_callpaths)
        return sum_fail(err, "more than %d distinct event names (the limit)", s->max_callpaths);
    if (s->arena_len + len + 1 > s->max_arena)
        return sum_fail(err, "event names take more than %zu MiB (the limit)",
                        s->max_arena >> 20);
    if (grow_array((void **)&s->cps, &s->cps_cap, (size_t)s->ncps + 1, sizeof *s->cps) < 0 ||
        grow_array((void **)&s->totals, &s->totals_cap, (size_t)s->ncps + 1, sizeof *s->totals) < 0)
        return sum_fail(err, "out of memory");
    if (grow_array((void **)&s->arena, &s->arena_cap, s->arena_len + len + 1, 1) < 0)
        return sum_fail(err, "out of memory");
    if ((size_t)(s->ncps + 1) * 2 > s->cp_index_cap &&
        cp_rehash(s, s->cp_index_cap ? s->cp_index_cap * 2 : 256) < 0)
        return sum_fail(err, "out of memory");
    memcpy(s->arena + s->arena_len, name, len);
    s->arena[s->arena_len + len] = '\0';
    int id = s->ncps++;
    s->cps[id] = (sum_callpath){.hash = h, .off = s->arena_len, .len = (uint32_t)len,
                                .category = category};
    memset(&s->totals[id], 0, sizeof s->totals[id]);
    s->arena_len += len + 1;
    size_t i = (size_t)h & (s->cp_index_cap - 1);
    while (s->cp_index[i])
        i = (i + 1) & (s->cp_index_cap - 1);
    s->cp_index[i] = (uint32_t)id + 1;
    return id;
}

/* ---- steps ---------------------------------------------------------------------- */

int ingest_sum_nsteps(const ingest_sum *s)
{
    return s->nsteps;
}

static void label_copy(char *dst, const char *src, size_t len)
{
    size_t n = len < 63 ? len : 63;
    /* do not cut a UTF-8 sequence */
    while (n > 0 && n < len && ((unsigned char)src[n] & 0xC0) == 0x80)
        n--;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

int ingest_sum_step(ingest_sum *s, double start, double end, const char *label, size_t len,
                    ingest_error *err)
{
    if (s->final)
        return 0;
    char shown[64];
    label_copy(shown, label, len);
    if (!(end > start))
        return sum_fail(err, "step \"%s\" has no duration (start %.17g, end %.17g)", shown, start,
                        end);
    if (s->nsteps >= s->max_steps)
        return sum_fail(err, "more than %d steps (the limit)", s->max_steps);
    size_t cap = (size_t)s->steps_cap;
    if (grow_array((void **)&s->steps, &cap, (size_t)s->nsteps + 1, sizeof *s->steps) < 0)
        return sum_fail(err, "out of memory");
    s->steps_cap = (int)cap;
    if (s->nsteps > 0 && !s->unordered) {
        const sum_step *prev = &s->steps[s->nsteps - 1];
        if (start < prev->start)
            s->unordered = 1;
        else if (start < prev->end)
            return sum_fail(err, "step \"%s\" (start %.17g) overlaps step \"%s\" (end %.17g)",
                            shown, start, prev->label, prev->end);
    }
    sum_step *st = &s->steps[s->nsteps++];
    st->start = start;
    st->end = end;
    memcpy(st->label, shown, sizeof shown);
    return 0;
}

int ingest_sum_range(ingest_sum *s, double start, double end, const char *name, size_t len,
                     ingest_error *err)
{
    /* operator names ("aten::add", "autograd::engine::evaluate_function")
     * are not annotations */
    if (s->second || s->force_phase || !(end > start) ||
        ingest_contains_nocase(name, len, "::", 2) || !ingest_phase_match(&s->vpat, name, len))
        return 0;
    if (s->nwindows >= (size_t)s->max_steps)
        return sum_fail(err, "more than %d validation ranges (the limit)", s->max_steps);
    if (grow_array((void **)&s->windows, &s->windows_cap, s->nwindows + 1, sizeof *s->windows) < 0)
        return sum_fail(err, "out of memory");
    s->windows[s->nwindows++] = (sum_window){start, end};
    return 0;
}

static int cmp_window(const void *a, const void *b)
{
    const sum_window *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* phase[i] of every step: the override, else validation when the step's
 * label matches a pattern or its midpoint lies in a matching range (windows
 * sorted by start, a running maximum of their ends answering "does any range
 * starting before t end after it" by one bisection). */
static int step_phases(ingest_sum *s, unsigned char *phase)
{
    double *reach = NULL;
    if (s->nwindows > 0) {
        qsort(s->windows, s->nwindows, sizeof *s->windows, cmp_window);
        reach = malloc(s->nwindows * sizeof *reach);
        if (!reach)
            return -1;
        for (size_t i = 0; i < s->nwindows; i++)
            reach[i] = i && reach[i - 1] > s->windows[i].end ? reach[i - 1] : s->windows[i].end;
    }
    s->nvalidation = 0;
    for (int i = 0; i < s->nsteps; i++) {
        const sum_step *st = &s->steps[i];
        int v;
        if (s->force_phase) {
            v = s->force_phase == INGEST_PHASE_VALIDATION;
        } else {
            v = ingest_phase_match(&s->vpat, st->label, strlen(st->label));
            double mid = st->start + (st->end - st->start) / 2;
            size_t lo = 0, hi = s->nwindows; /* windows with start <= mid: [0, lo) */
            while (!v && lo < hi) {
                size_t m = (lo + hi) / 2;
                if (s->windows[m].start <= mid)
                    lo = m + 1;
                else
                    hi = m;
            }
            v = v || (lo > 0 && reach[lo - 1] > mid);
        }
        phase[i] = v ? PROFILE_VALIDATION : PROFILE_TRAIN;
        s->nvalidation += v;
    }
    free(reach);
    return 0;
}

static int cmp_step(const void *a, const void *b)
{
    const sum_step *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

int ingest_sum_steps_done(ingest_sum *s, ingest_error *err)
{
    if (s->final)
        return 0;
    if (s->unordered)
        qsort(s->steps, (size_t)s->nsteps, sizeof *s->steps, cmp_step);
    for (int i = 1; i < s->nsteps; i++)
        if (s->steps[i].start < s->steps[i - 1].end)
            return sum_fail(err, "step \"%s\" (start %.17g) overlaps step \"%s\" (end %.17g)",
                            s->steps[i].label, s->steps[i].start, s->steps[i - 1].label,
                            s->steps[i - 1].end);
    s->final = 1;
    s->last = -1;
    return 0;
}

/* The step with the last start <= t, or -1. */
static int step_floor(ingest_sum *s, double t)
{
    int k = s->last;
    if (k >= 0 && k < s->nsteps && s->steps[k].start <= t &&
        (k + 1 == s->nsteps || t < s->steps[k + 1].start))
        return k;
    int lo = 0, hi = s->nsteps - 1, found = -1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (s->steps[mid].start <= t) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    s->last = found;
    return found;
}

/* ---- sums ------------------------------------------------------------------------ */

static int cell_rehash(ingest_sum *s, size_t cap)
{
    uint32_t *idx = calloc(cap, sizeof *idx);
    if (!idx)
        return -1;
    for (size_t i = 0; i < s->ncells; i++) {
        size_t h = (size_t)mix64(s->cells[i].key ^ s->seed) & (cap - 1);
        while (idx[h])
            h = (h + 1) & (cap - 1);
        idx[h] = (uint32_t)i + 1;
    }
    free(s->cell_index);
    s->cell_index = idx;
    s->cell_index_cap = cap;
    return 0;
}

static int cell_add(ingest_sum *s, uint32_t slot, int cp, double dur, double bytes,
                    ingest_error *err)
{
    uint64_t key = (uint64_t)slot << 32 | (uint32_t)cp;
    size_t i = 0;
    if (s->cell_index_cap) {
        i = (size_t)mix64(key ^ s->seed) & (s->cell_index_cap - 1);
        while (s->cell_index[i]) {
            sum_cell *c = &s->cells[s->cell_index[i] - 1];
            if (c->key == key) {
                c->time += dur;
                c->visits++;
                if (bytes >= 0) {
                    c->bytes += bytes;
                    c->has_bytes = 1;
                }
                if (!isfinite(c->time) || !isfinite(c->bytes))
                    return sum_fail(err, "a sum over one step overflows");
                return 0;
            }
            i = (i + 1) & (s->cell_index_cap - 1);
        }
    }
    if (s->ncells >= s->max_cells)
        return sum_fail(err, "more than %zu (step, callpath) sums (the limit); profile fewer steps",
                        s->max_cells);
    if (grow_array((void **)&s->cells, &s->cells_cap, s->ncells + 1, sizeof *s->cells) < 0)
        return sum_fail(err, "out of memory");
    if ((s->ncells + 1) * 2 > s->cell_index_cap) {
        if (cell_rehash(s, s->cell_index_cap ? s->cell_index_cap * 2 : 1024) < 0)
            return sum_fail(err, "out of memory");
        i = (size_t)mix64(key ^ s->seed) & (s->cell_index_cap - 1);
        while (s->cell_index[i])
            i = (i + 1) & (s->cell_index_cap - 1);
    }
    s->cells[s->ncells] = (sum_cell){.key = key, .time = dur, .visits = 1,
                                     .bytes = bytes >= 0 ? bytes : 0, .has_bytes = bytes >= 0};
    s->cell_index[i] = (uint32_t)++s->ncells;
    return 0;
}

/* Slot of key time t with every step known: a step, or the gap before the
 * first step whose start is > t. */
static uint32_t final_slot(ingest_sum *s, double t)
{
    int k = step_floor(s, t);
    if (k >= 0 && t < s->steps[k].end)
        return (uint32_t)k;
    return SUM_GAP | (uint32_t)(k + 1);
}

/* Places the held events that now lie inside a known step; keeps the rest. */
static int pending_compact(ingest_sum *s, ingest_error *err)
{
    size_t keep = 0;
    for (size_t i = 0; i < s->npending; i++) {
        sum_pending *p = &s->pending[i];
        int k = step_floor(s, p->t);
        if (k >= 0 && p->t < s->steps[k].end) {
            if (cell_add(s, (uint32_t)k, p->cp, p->dur, p->bytes, err) < 0)
                return -1;
        } else {
            s->pending[keep++] = *p;
        }
    }
    s->npending = keep;
    return 0;
}

static int pending_add(ingest_sum *s, double t, int cp, double dur, double bytes,
                       ingest_error *err)
{
    if (s->npending == s->max_pending) {
        if (pending_compact(s, err) < 0)
            return -1;
        if (s->npending > s->max_pending / 2) {
            /* the trace's order defeats one pass: read it again */
            s->overflow = 1;
            free(s->pending);
            s->pending = NULL;
            s->npending = s->pending_cap = 0;
            return 0;
        }
    }
    if (grow_array((void **)&s->pending, &s->pending_cap, s->npending + 1, sizeof *s->pending) < 0)
        return sum_fail(err, "out of memory");
    s->pending[s->npending++] = (sum_pending){.t = t, .dur = dur, .bytes = bytes, .cp = cp};
    return 0;
}

int ingest_sum_add(ingest_sum *s, double t, int cp, double dur, double bytes,
                   ingest_error *err)
{
    sum_total *tot = &s->totals[cp];
    tot->time += dur;
    tot->visits++;
    if (bytes >= 0) {
        tot->bytes += bytes;
        tot->has_bytes = 1;
    }
    if (!isfinite(tot->time) || !isfinite(tot->bytes))
        return sum_fail(err, "a sum over the trace overflows");
    s->events++;
    if (s->final)
        return cell_add(s, final_slot(s, t), cp, dur, bytes, err);
    if (s->overflow || s->unordered)
        return 0; /* the second pass does it */
    int k = s->nsteps ? step_floor(s, t) : -1;
    if (k >= 0 && t < s->steps[k].end)
        return cell_add(s, (uint32_t)k, cp, dur, bytes, err);
    return pending_add(s, t, cp, dur, bytes, err);
}

int ingest_sum_second_pass(const ingest_sum *s)
{
    return s->nsteps > 0 && (s->overflow || s->unordered);
}

int ingest_sum_restart(ingest_sum *s, ingest_error *err)
{
    if (ingest_sum_steps_done(s, err) < 0)
        return -1;
    s->ncells = 0;
    if (s->cell_index)
        memset(s->cell_index, 0, s->cell_index_cap * sizeof *s->cell_index);
    free(s->pending);
    s->pending = NULL;
    s->npending = s->pending_cap = 0;
    if (s->totals)
        memset(s->totals, 0, (size_t)s->ncps * sizeof *s->totals);
    s->events = 0;
    s->overflow = s->unordered = 0;
    s->second = 1;
    return 0;
}

/* ---- the profile ------------------------------------------------------------------ */

static int cmp_cell(const void *a, const void *b)
{
    const sum_cell *x = a, *y = b;
    /* steps (train) before gaps (between), then by index, then callpath */
    return x->key < y->key ? -1 : x->key > y->key;
}

typedef struct name_ref {
    const char *name;
    int id;
} name_ref;

static int cmp_name_ref(const void *a, const void *b)
{
    const name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->id > y->id) - (x->id < y->id);
}

/* Callpath names and categories into out; a host callpath whose name a
 * device callpath also has becomes "NAME (host)". */
static int build_callpaths(ingest_sum *s, profile *out, ingest_error *err)
{
    int n = s->ncps;
    out->callpaths = calloc(n ? (size_t)n : 1, sizeof *out->callpaths);
    name_ref *refs = malloc((n ? (size_t)n : 1) * sizeof *refs);
    int *rename = calloc(n ? (size_t)n : 1, sizeof *rename);
    int rc = -1;
    if (!out->callpaths || !refs || !rename) {
        sum_fail(err, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        refs[i] = (name_ref){s->arena + s->cps[i].off, i};
    qsort(refs, (size_t)n, sizeof *refs, cmp_name_ref);
    for (int i = 0; i < n;) {
        int j = i, device = 0;
        while (j < n && !strcmp(refs[j].name, refs[i].name))
            device |= s->cps[refs[j++].id].category != PROFILE_HOST;
        for (int k = i; k < j && device && j - i > 1; k++)
            rename[refs[k].id] = s->cps[refs[k].id].category == PROFILE_HOST;
        i = j;
    }
    for (int i = 0; i < n; i++) {
        const char *name = s->arena + s->cps[i].off;
        size_t len = s->cps[i].len;
        char *copy = malloc(len + sizeof " (host)");
        if (!copy) {
            sum_fail(err, "out of memory");
            goto done;
        }
        memcpy(copy, name, len);
        strcpy(copy + len, rename[i] ? " (host)" : "");
        out->callpaths[i].name = copy;
        out->callpaths[i].category = s->cps[i].category;
        out->ncallpaths = i + 1;
    }
    /* a renamed host callpath must not meet a name of its own */
    for (int i = 0; i < n; i++)
        refs[i] = (name_ref){out->callpaths[i].name, i};
    qsort(refs, (size_t)n, sizeof *refs, cmp_name_ref);
    for (int i = 1; i < n; i++)
        if (!strcmp(refs[i].name, refs[i - 1].name)) {
            sum_fail(err, "two callpaths are both named \"%.60s\" after host ranges were renamed",
                     refs[i].name);
            goto done;
        }
    rc = 0;
done:
    free(refs);
    free(rename);
    return rc;
}

static int push_row(profile *out, size_t *cap, int rank, int phase, int step, int cp, int metric,
                    double value, ingest_error *err)
{
    if (grow_array((void **)&out->rows, cap, out->nrows + 1, sizeof *out->rows) < 0)
        return sum_fail(err, "out of memory");
    out->rows[out->nrows++] = (profile_row){.rank = rank, .phase = phase, .step = step,
                                            .callpath = cp, .metric = metric, .value = value};
    return 0;
}

static int build_rows(ingest_sum *s, int rank, double scale, profile *out, ingest_error *err)
{
    int any_bytes = 0;
    size_t cap = 0;
    if (s->nsteps == 0) {
        /* a trace without steps is one step: the totals (validation only
         * when the upload says so) */
        int ph = s->force_phase == INGEST_PHASE_VALIDATION ? PROFILE_VALIDATION : PROFILE_TRAIN;
        s->nvalidation = ph == PROFILE_VALIDATION;
        for (int i = 0; i < s->ncps; i++)
            any_bytes |= s->totals[i].has_bytes;
        for (int i = 0; i < s->ncps; i++) {
            const sum_total *t = &s->totals[i];
            if (push_row(out, &cap, rank, ph, 0, i, 0, t->time * scale, err) < 0 ||
                push_row(out, &cap, rank, ph, 0, i, 1, (double)t->visits, err) < 0 ||
                (t->has_bytes && push_row(out, &cap, rank, ph, 0, i, 2, t->bytes, err) < 0))
                return -1;
        }
    } else {
        unsigned char *phase = malloc((size_t)s->nsteps);
        if (!phase || step_phases(s, phase) < 0) {
            free(phase);
            return sum_fail(err, "out of memory");
        }
        if (s->ncells > 1)
            qsort(s->cells, s->ncells, sizeof *s->cells, cmp_cell);
        for (size_t i = 0; i < s->ncells; i++)
            any_bytes |= s->cells[i].has_bytes;
        for (size_t i = 0; i < s->ncells; i++) {
            const sum_cell *c = &s->cells[i];
            uint32_t slot = (uint32_t)(c->key >> 32);
            int cp = (int)(uint32_t)c->key;
            int step = (int)(slot & ~SUM_GAP);
            int ph = slot & SUM_GAP ? PROFILE_BETWEEN : phase[step];
            if (push_row(out, &cap, rank, ph, step, cp, 0, c->time * scale, err) < 0 ||
                push_row(out, &cap, rank, ph, step, cp, 1, (double)c->visits, err) < 0 ||
                (c->has_bytes && push_row(out, &cap, rank, ph, step, cp, 2, c->bytes, err) < 0)) {
                free(phase);
                return -1;
            }
        }
        free(phase);
        /* the index is stale after sorting; nothing is added any more */
        s->ncells = 0;
    }
    static const char *const names[] = {"time", "visits", "bytes"};
    int nm = any_bytes ? 3 : 2;
    out->metrics = calloc((size_t)nm, sizeof *out->metrics);
    if (!out->metrics)
        return sum_fail(err, "out of memory");
    for (int i = 0; i < nm; i++) {
        if (!(out->metrics[i] = strdup(names[i])))
            return sum_fail(err, "out of memory");
        out->nmetrics = i + 1;
    }
    return 0;
}

int ingest_sum_finish(ingest_sum *s, int rank, double scale, profile *out,
                      ingest_trace_info *info, ingest_error *err)
{
    memset(out, 0, sizeof *out);
    if (!s->final) {
        if (ingest_sum_steps_done(s, err) < 0)
            return -1;
        for (size_t i = 0; s->nsteps > 0 && i < s->npending; i++) {
            const sum_pending *p = &s->pending[i];
            if (cell_add(s, final_slot(s, p->t), p->cp, p->dur, p->bytes, err) < 0)
                return -1;
        }
        s->npending = 0;
    }
    if (s->ncps == 0)
        return sum_fail(err, "the trace has no kernels, copies or host events to sum");
    out->repetition = 1;
    out->nranks = 1;
    if (build_callpaths(s, out, err) < 0 || build_rows(s, rank, scale, out, err) < 0) {
        profile_free(out);
        return -1;
    }
    if (info) {
        info->nsteps = s->nsteps;
        info->nvalidation = s->nvalidation;
        info->events = s->events;
        free(info->steps);
        info->steps = NULL;
        if (s->nsteps > 0) {
            info->steps = malloc((size_t)s->nsteps * sizeof *info->steps);
            if (!info->steps) {
                profile_free(out);
                return sum_fail(err, "out of memory");
            }
            for (int i = 0; i < s->nsteps; i++) {
                info->steps[i].start = s->steps[i].start * scale;
                info->steps[i].end = s->steps[i].end * scale;
                memcpy(info->steps[i].label, s->steps[i].label, sizeof info->steps[i].label);
            }
        }
    }
    return 0;
}
