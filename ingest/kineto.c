/*
 * kineto.c — reader of PyTorch profiler (Kineto) traces: Chrome trace-event
 * JSON, plain or gzip, one rank per file (trace.h says what it produces).
 *
 * The JSON is read as a stream by trace_scan.c, chunk by chunk from
 * stream.c, so memory does not grow with the trace: no document is built,
 * only one event at a time is held (as a record of the members below), and
 * the sums live in stepsum.c. What the reader takes from the document:
 *
 *   distributedInfo.rank / .world_size   the rank (or the caller's)
 *   traceEvents[] with ph "X":
 *     cat kernel                  device: comm (NCCL/collective name) or comp
 *     cat gpu_memcpy, gpu_memset  device: mem, args.bytes -> "bytes"
 *     cat cuda_runtime/_driver    host; also the launch time of the device
 *                                 events with the same args.correlation
 *     cat cpu_op, user_annotation host; "ProfilerStep#N" is a step instead
 *   (older Kineto: Kernel, Memcpy, Memset, Runtime, Operator likewise)
 * Everything else (flows, metadata, python_function, gpu_user_annotation,
 * cuda_sync, ...) is skipped. A ProfilerStep may also be a "B"/"E" pair of
 * the same name. Times are in microseconds.
 *
 * Device events are placed by their launch: the cuda_runtime event with the
 * same args.correlation (or, for a device event without one, the same
 * args."External id"). Kineto writes each device event next to its launch,
 * before or after it; the reader keeps the launches it has seen in a
 * direct-mapped table (by correlation id modulo its size) and the device
 * events still waiting for their launch in a bounded FIFO (max_inflight).
 * A device event whose launch is never found (or was pushed out of those
 * windows by a trace in some other order) is placed by its own start and
 * counted in info->unmatched.
 *
 * Steps usually come before the events they contain (Kineto writes one
 * thread's CPU events in time order, then the GPU events); stepsum.c holds
 * the events whose step is not known yet, and when the trace's order
 * defeats that (too many held, steps out of order) the input is read a
 * second time with every step known. Memory stays bounded either way.
 *
 * Hostile input: invalid UTF-8 (trace_scan.c checks strings), nesting
 * deeper than TSCAN_MAX_DEPTH, a token longer than TSCAN_MAX_TOKEN bytes,
 * an event longer than TSCAN_MAX_UNIT bytes, names longer than
 * INGEST_MAX_NAME, truncated or corrupt gzip, missing or non-finite ts/dur,
 * negative dur or bytes, steps without duration, overlapping or never
 * ending — each is an error naming the byte offset or the event's index.
 * Events with equal or negative timestamps are fine: only order matters.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/numtext.h"
#include "ingest/stepsum.h"
#include "ingest/stream.h"
#include "ingest/trace.h"
#include "ingest/trace_scan.h"

#define KT_LAUNCHES (1u << 17)         /* launch table entries (per id kind), at most */
#define KT_MAX_OPEN 16                 /* "B" ProfilerSteps open at once */
#define KT_NAME_SLOTS 2048             /* names -> callpath ids remembered, direct-mapped */
#define KT_NAME_CACHED 500             /* longer names are looked up in stepsum.c each time */

/* members whose faults end_event names (kt_event.bad) */
enum kt_key { K_NONE = 0, K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_CORR, K_EXT, K_BYTES };

enum kt_kind { EV_IGNORE = 0, EV_KERNEL, EV_MEMCPY, EV_MEMSET, EV_RUNTIME, EV_HOST };

typedef struct kt_event {
    long long index;   /* position in traceEvents */
    int kind;
    int annotation;    /* cat user_annotation: a record_function range */
    char ph;
    int has_ts, has_dur, has_corr, has_ext, has_bytes, has_name;
    int bad;           /* a key we use had a value of the wrong type: its K_ */
    int name_too_long;
    double ts, dur, bytes;
    long long corr, ext;
    size_t name_len;
} kt_event;

/* A device event waiting for its launch: in a hash chain by key and in a
 * FIFO by age (doubly linked, oldest at head). */
typedef struct kt_inflight {
    unsigned long long key; /* corr << 1, or ext << 1 | 1 */
    double ts, dur, bytes;
    int cp;
    int hnext;         /* next in the hash chain, -1 */
    int prev, next;    /* FIFO neighbours, -1 */
} kt_inflight;

/* An event name seen before and its callpath id: a kernel's category takes
 * six substring searches of its (long) name, and the same few hundred names
 * come back in every step. */
typedef struct kt_name_slot {
    uint32_t len;      /* 0: empty */
    int group;         /* what decides the category: EV_KERNEL, EV_MEMCPY or EV_HOST */
    int cp;
    char name[KT_NAME_CACHED];
} kt_name_slot;

typedef struct kt_open_step {
    char label[64];
    size_t len;
    double ts;
} kt_open_step;

typedef struct kt_reader {
    const ingest_trace_options *opt;
    ingest_error *err;
    ingest_sum *sum;
    int pass;
    int failed;        /* a callback filled err */

    /* parse state */
    tscan *scan;
    int seen_dist;
    long long nevents;
    kt_event ev;
    const char *name;  /* the event's, from the scanner: valid while it is read */

    /* distributedInfo */
    int has_rank, has_world;
    long long rank, world;

    /* launches: correlation and External id -> launch ts, direct-mapped */
    unsigned long long *corr_key, *ext_key; /* id + 1; 0 empty */
    double *corr_ts, *ext_ts;
    size_t nlaunch;    /* entries: a power of 2, by the input's size */

    /* device events waiting for their launch */
    kt_inflight *fl;
    int *fl_bucket;
    int fl_cap, fl_nbuckets, fl_free, fl_head, fl_tail, fl_count;
    long long unmatched;

    kt_open_step open[KT_MAX_OPEN];
    int nopen;

    kt_name_slot *names; /* KT_NAME_SLOTS, or NULL: none remembered */
} kt_reader;

static int kt_fail(kt_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int kt_fail(kt_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
    va_end(ap);
    r->err->line = 0;
    r->err->offset = -1;
    r->failed = 1;
    return 0;
}

/* Bytes of the event's name to quote, not cutting a UTF-8 sequence. */
static int kt_shown(const kt_reader *r)
{
    size_t n = r->ev.has_name ? r->ev.name_len : 0;
    if (n > 40) {
        n = 40;
        while (n > 0 && ((unsigned char)r->name[n] & 0xC0) == 0x80)
            n--;
    }
    return (int)n;
}

/* "traceEvents[12] (\"aten::mm\")" for messages. */
static int kt_event_fail(kt_reader *r, const char *what)
{
    if (r->ev.has_name)
        return kt_fail(r, "traceEvents[%lld] (\"%.*s\"): %s", r->ev.index, kt_shown(r), r->name,
                       what);
    return kt_fail(r, "traceEvents[%lld]: %s", r->ev.index, what);
}

/* Prefixes the message a helper left in err with the event's index. */
static int kt_wrap(kt_reader *r, long long index)
{
    char msg[sizeof r->err->msg];
    memcpy(msg, r->err->msg, sizeof msg);
    return kt_fail(r, "traceEvents[%lld]: %s", index, msg);
}

/* ---- device events waiting for their launch ----------------------------------- */

/* The waiting room: max_inflight entries, fewer for a small input (an event
 * takes well over 64 bytes of JSON). */
static int fl_init(kt_reader *r, size_t hint)
{
    size_t cap = r->opt->max_inflight > 0 ? r->opt->max_inflight : 65536;
    if (cap > (1u << 24))
        cap = 1u << 24;
    if (cap > hint / 64 + 16)
        cap = hint / 64 + 16;
    r->fl_cap = (int)cap;
    r->fl_nbuckets = 1;
    while ((size_t)r->fl_nbuckets < cap)
        r->fl_nbuckets <<= 1;
    r->fl = malloc(cap * sizeof *r->fl);
    r->fl_bucket = malloc((size_t)r->fl_nbuckets * sizeof *r->fl_bucket);
    return r->fl && r->fl_bucket ? 0 : -1;
}

static void fl_reset(kt_reader *r)
{
    for (int i = 0; i < r->fl_nbuckets; i++)
        r->fl_bucket[i] = -1;
    for (int i = 0; i < r->fl_cap; i++)
        r->fl[i].next = i + 1 < r->fl_cap ? i + 1 : -1;
    r->fl_free = 0;
    r->fl_head = r->fl_tail = -1;
    r->fl_count = 0;
}

static int fl_bucket_of(const kt_reader *r, unsigned long long key)
{
    return (int)((key * 0x9e3779b97f4a7c15ull) >> 40) & (r->fl_nbuckets - 1);
}

/* Unlinks entry i from its hash chain and the FIFO and frees it. */
static void fl_remove(kt_reader *r, int i)
{
    kt_inflight *e = &r->fl[i];
    int *link = &r->fl_bucket[fl_bucket_of(r, e->key)];
    while (*link != i)
        link = &r->fl[*link].hnext;
    *link = e->hnext;
    if (e->prev >= 0)
        r->fl[e->prev].next = e->next;
    else
        r->fl_head = e->next;
    if (e->next >= 0)
        r->fl[e->next].prev = e->prev;
    else
        r->fl_tail = e->prev;
    e->next = r->fl_free;
    r->fl_free = i;
    r->fl_count--;
}

/* Places device event e by time t and counts it. */
static int fl_place(kt_reader *r, const kt_inflight *e, double t)
{
    if (ingest_sum_add(r->sum, t, e->cp, e->dur, e->bytes, r->err) < 0) {
        r->failed = 1;
        return 0;
    }
    return 1;
}

/* The oldest waiting event gives up: placed by its own start. */
static int fl_evict_oldest(kt_reader *r)
{
    int i = r->fl_head;
    kt_inflight e = r->fl[i];
    fl_remove(r, i);
    r->unmatched++;
    return fl_place(r, &e, e.ts);
}

static int fl_put(kt_reader *r, unsigned long long key, double ts, double dur, double bytes,
                  int cp)
{
    if (r->fl_free < 0 && !fl_evict_oldest(r))
        return 0;
    int i = r->fl_free;
    kt_inflight *e = &r->fl[i];
    r->fl_free = e->next;
    int b = fl_bucket_of(r, key);
    *e = (kt_inflight){.key = key, .ts = ts, .dur = dur, .bytes = bytes, .cp = cp,
                       .hnext = r->fl_bucket[b], .prev = r->fl_tail, .next = -1};
    r->fl_bucket[b] = i;
    if (r->fl_tail >= 0)
        r->fl[r->fl_tail].next = i;
    else
        r->fl_head = i;
    r->fl_tail = i;
    r->fl_count++;
    return 1;
}

/* A launch at t arrived: places every device event waiting for key. */
static int fl_match(kt_reader *r, unsigned long long key, double t)
{
    if (r->fl_count == 0)
        return 1;
    int i = r->fl_bucket[fl_bucket_of(r, key)];
    while (i >= 0) {
        int next = r->fl[i].hnext;
        if (r->fl[i].key == key) {
            kt_inflight e = r->fl[i];
            fl_remove(r, i);
            if (!fl_place(r, &e, t))
                return 0;
        }
        i = next;
    }
    return 1;
}

/* End of a pass: what still waits is placed by its own start. */
static int fl_drain(kt_reader *r)
{
    while (r->fl_head >= 0)
        if (!fl_evict_oldest(r))
            return 0;
    return 1;
}

/* ---- launches ---------------------------------------------------------------------- */

static void launch_put(size_t n, unsigned long long *keys, double *ts, long long id, double t)
{
    size_t i = (size_t)id & (n - 1);
    keys[i] = (unsigned long long)id + 1;
    ts[i] = t;
}

static int launch_get(size_t n, const unsigned long long *keys, const double *ts, long long id,
                      double *t)
{
    size_t i = (size_t)id & (n - 1);
    if (keys[i] != (unsigned long long)id + 1)
        return 0;
    *t = ts[i];
    return 1;
}

/* ---- events ------------------------------------------------------------------------- */

static int kind_of_cat(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
    if (IS("kernel") || IS("Kernel"))
        return EV_KERNEL;
    if (IS("cpu_op") || IS("user_annotation") || IS("Operator"))
        return EV_HOST;
    if (IS("cuda_runtime") || IS("cuda_driver") || IS("Runtime"))
        return EV_RUNTIME;
    if (IS("gpu_memcpy") || IS("Memcpy"))
        return EV_MEMCPY;
    if (IS("gpu_memset") || IS("Memset"))
        return EV_MEMSET;
#undef IS
    return EV_IGNORE;
}

static int is_step_name(const char *s, size_t n)
{
    return n > 13 && !memcmp(s, "ProfilerStep#", 13);
}

static unsigned kt_name_slot_of(const char *p, size_t n, int group)
{
    uint64_t h = ((uint64_t)n << 8 | (uint64_t)group) * 0x9e3779b97f4a7c15ull;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    return (unsigned)(h >> 40) & (KT_NAME_SLOTS - 1);
}

/* The callpath of the current event's name: remembered, or from stepsum.c
 * (which checks and counts new names). -1 with r->err. */
static int kt_callpath(kt_reader *r, int kind)
{
    const char *name = r->name;
    size_t len = r->ev.name_len;
    int group = kind == EV_KERNEL ? EV_KERNEL
                : kind == EV_MEMCPY || kind == EV_MEMSET ? EV_MEMCPY
                                                         : EV_HOST;
    kt_name_slot *slot = NULL;
    if (r->names && len > 0 && len <= KT_NAME_CACHED) {
        slot = &r->names[kt_name_slot_of(name, len, group)];
        if (slot->len == len && slot->group == group && !memcmp(slot->name, name, len))
            return slot->cp;
    }
    int category = group == EV_KERNEL  ? ingest_kernel_category(name, len)
                   : group == EV_MEMCPY ? PROFILE_MEM
                                        : PROFILE_HOST;
    int cp = ingest_sum_callpath(r->sum, name, len, category, r->err);
    if (cp >= 0 && slot) {
        slot->len = (uint32_t)len;
        slot->group = group;
        slot->cp = cp;
        memcpy(slot->name, name, len);
    }
    return cp;
}

/* A JSON number (trace_scan.c checked its grammar) as the nearest double: without
 * an exponent and with digits below 2^53 once the fraction's trailing zeros
 * go (Kineto's "1682725898079292.000"), digits / 10^k is exact arithmetic
 * rounded once; anything else goes to numtext_parse. NaN
 * when not all of it is a number. */
static double kt_number(const char *s, size_t n)
{
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    size_t i = 0, end = n;
    int negative = i < n && s[i] == '-';
    i += (size_t)negative;
    const char *dot = memchr(s, '.', n);
    if (dot) /* trailing zeros of the fraction add nothing */
        while (end > (size_t)(dot - s) + 1 && s[end - 1] == '0')
            end--;
    uint64_t m = 0;
    int digits = 0, frac = 0, seen_dot = 0;
    for (; i < end; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            m = m * 10 + (uint64_t)(c - '0');
            digits += m != 0;
            frac += seen_dot;
            if (digits > 16)
                goto slow;
        } else if (c == '.' && !seen_dot) {
            seen_dot = 1;
        } else {
            goto slow;
        }
    }
    if (frac > 22 || i == (size_t)negative || m > ((uint64_t)1 << 53))
        goto slow;
    double d = (double)m / pow10[frac];
    return negative ? -d : d;
slow:;
    double v;
    return numtext_parse(s, n, &v) == n ? v : NAN;
}

/* A "B"/"E" ProfilerStep pair. */
static int step_begin_end(kt_reader *r)
{
    kt_event *e = &r->ev;
    if (r->pass > 1)
        return 1;
    if (!e->has_ts || !isfinite(e->ts))
        return kt_event_fail(r, "expected a finite number in \"ts\"");
    if (e->ph == 'B') {
        if (r->nopen == KT_MAX_OPEN)
            return kt_event_fail(r, "too many ProfilerSteps begun and not ended");
        kt_open_step *o = &r->open[r->nopen++];
        o->len = e->name_len < sizeof o->label ? e->name_len : sizeof o->label - 1;
        memcpy(o->label, r->name, o->len);
        o->label[o->len] = '\0';
        o->ts = e->ts;
        return 1;
    }
    for (int i = r->nopen - 1; i >= 0; i--) {
        kt_open_step *o = &r->open[i];
        if (o->len == (e->name_len < sizeof o->label ? e->name_len : sizeof o->label - 1) &&
            !memcmp(o->label, r->name, o->len)) {
            if (ingest_sum_step(r->sum, o->ts, e->ts, r->name, e->name_len, r->err) < 0)
                return kt_wrap(r, e->index);
            r->open[i] = r->open[--r->nopen];
            return 1;
        }
    }
    return kt_event_fail(r, "ProfilerStep ends (ph \"E\") but never began");
}

static int add_event(kt_reader *r, double t, int cp, double bytes)
{
    if (ingest_sum_add(r->sum, t, cp, r->ev.dur, bytes, r->err) < 0)
        return kt_wrap(r, r->ev.index);
    return 1;
}

static int end_event(kt_reader *r)
{
    kt_event *e = &r->ev;
    if (e->kind == EV_IGNORE)
        return 1;
    if (e->bad) {
        static const char *const what[] = {
            [K_PH] = "\"ph\" must be a string", [K_NAME] = "\"name\" must be a string",
            [K_TS] = "\"ts\" must be a number", [K_DUR] = "\"dur\" must be a number",
            [K_CORR] = "args.correlation must be an integer",
            [K_EXT] = "args.\"External id\" must be an integer",
            [K_BYTES] = "args.bytes must be a number"};
        return kt_event_fail(r, e->bad < (int)(sizeof what / sizeof *what) && what[e->bad]
                                    ? what[e->bad] : "a member has the wrong type");
    }
    if (!e->has_name)
        return kt_event_fail(r, "no \"name\"");
    if (e->name_too_long)
        return kt_event_fail(r, "name longer than 65536 bytes");
    int step = e->kind == EV_HOST && is_step_name(r->name, e->name_len);
    if (step && (e->ph == 'B' || e->ph == 'E'))
        return step_begin_end(r);
    if (e->ph != 'X')
        return 1;
    if (!e->has_ts || !isfinite(e->ts))
        return kt_event_fail(r, "expected a finite number in \"ts\"");
    if (!e->has_dur)
        return kt_event_fail(r, step ? "a ProfilerStep without \"dur\" (a step that never ended)"
                                     : "no \"dur\"");
    if (!isfinite(e->dur) || e->dur < 0)
        return kt_event_fail(r, "\"dur\" must be a finite number >= 0");
    if (step) {
        if (ingest_sum_step(r->sum, e->ts, e->ts + e->dur, r->name, e->name_len, r->err) < 0)
            return kt_wrap(r, e->index);
        return 1;
    }
    if (e->has_bytes && (!isfinite(e->bytes) || e->bytes < 0))
        return kt_event_fail(r, "args.bytes must be a finite number >= 0");
    int cp = kt_callpath(r, e->kind);
    if (cp < 0)
        return kt_wrap(r, e->index);
    if (e->kind == EV_HOST) {
        /* a record_function range named like validation marks its steps */
        if (e->annotation && ingest_sum_range(r->sum, e->ts, e->ts + e->dur, r->name, e->name_len, r->err) < 0)
            return kt_wrap(r, e->index);
        return add_event(r, e->ts, cp, -1);
    }
    if (e->kind == EV_RUNTIME) {
        if (!add_event(r, e->ts, cp, -1))
            return 0;
        if (e->has_corr) {
            launch_put(r->nlaunch, r->corr_key, r->corr_ts, e->corr, e->ts);
            if (!fl_match(r, (unsigned long long)e->corr << 1, e->ts))
                return 0;
        }
        if (e->has_ext) {
            launch_put(r->nlaunch, r->ext_key, r->ext_ts, e->ext, e->ts);
            if (!fl_match(r, (unsigned long long)e->ext << 1 | 1, e->ts))
                return 0;
        }
        return 1;
    }
    /* a device event: by its launch */
    double bytes = e->kind == EV_KERNEL ? -1 : e->has_bytes ? e->bytes : 0;
    double t;
    if (e->has_corr) {
        if (launch_get(r->nlaunch, r->corr_key, r->corr_ts, e->corr, &t))
            return add_event(r, t, cp, bytes);
        return fl_put(r, (unsigned long long)e->corr << 1, e->ts, e->dur, bytes, cp);
    }
    if (e->has_ext) {
        if (launch_get(r->nlaunch, r->ext_key, r->ext_ts, e->ext, &t))
            return add_event(r, t, cp, bytes);
        return fl_put(r, (unsigned long long)e->ext << 1 | 1, e->ts, e->dur, bytes, cp);
    }
    r->unmatched++;
    return add_event(r, e->ts, cp, bytes);
}

/* ---- records from the scanner ------------------------------------------------------ */

/* Fields of the scanner's records (kt_event_keys, then kt_args_keys). */
enum { F_PH, F_CAT, F_NAME, F_TS, F_DUR, F_CORR, F_EXT, F_BYTES };

static const char *const kt_event_keys[] = {"ph", "cat", "name", "ts", "dur", NULL};
static const char *const kt_args_keys[] = {"correlation", "External id", "bytes", NULL};
static const char *const kt_root_keys[] = {"distributedInfo", NULL};
static const char *const kt_dist_keys[] = {"rank", "world_size", NULL};

/* What each field may hold; anything else is the event's fault. */
static const unsigned kt_allowed[] = {
    [F_PH] = TSCAN_BIT(TSCAN_STRING),
    [F_CAT] = TSCAN_BIT(TSCAN_STRING) | TSCAN_BIT(TSCAN_TRUE) | TSCAN_BIT(TSCAN_FALSE) |
              TSCAN_BIT(TSCAN_NULL),
    [F_NAME] = TSCAN_BIT(TSCAN_STRING),
    [F_TS] = TSCAN_BIT(TSCAN_NUMBER), [F_DUR] = TSCAN_BIT(TSCAN_NUMBER),
    [F_CORR] = TSCAN_BIT(TSCAN_NUMBER), [F_EXT] = TSCAN_BIT(TSCAN_NUMBER),
    [F_BYTES] = TSCAN_BIT(TSCAN_NUMBER),
};

/* The K_ of each field, for end_event's messages. */
static const int kt_field_key[] = {K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_CORR, K_EXT, K_BYTES};

/* A JSON number that is an integer of at most 18 digits. */
static int parse_id(const char *s, size_t n, long long *out)
{
    if (n == 0 || n > 18)
        return -1;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* One event of traceEvents, as the scanner read it. */
static int kt_on_event(void *ctx, const tscan_record *rec, ingest_error *err)
{
    kt_reader *r = ctx;
    (void)err;
    if (r->opt->max_events > 0 && rec->index >= r->opt->max_events) {
        kt_fail(r, "traceEvents: more than %lld events (the limit)", r->opt->max_events);
        r->err->limit = 1;
        return -1;
    }
    kt_event *e = &r->ev;
    memset(e, 0, sizeof *e);
    e->index = rec->index;
    r->nevents = rec->index + 1;
    const tscan_field *f;
    if ((f = tscan_get(rec, F_CAT)) && f->type == TSCAN_STRING) {
        e->kind = kind_of_cat(f->text, f->len);
        e->annotation = f->len == 15 && !memcmp(f->text, "user_annotation", 15);
    }
    if (e->kind == EV_IGNORE)
        return 0;
    unsigned bad_first = ~0u;
    for (int i = F_PH; i <= F_BYTES; i++) {
        if (!(f = tscan_get(rec, i)))
            continue;
        int wrong = (f->types & ~kt_allowed[i]) != 0;
        if (!wrong && (i == F_CORR || i == F_EXT)) {
            long long id;
            wrong = parse_id(f->text, f->len, &id) < 0;
            if (!wrong && i == F_CORR) {
                e->corr = id;
                e->has_corr = 1;
            } else if (!wrong) {
                e->ext = id;
                e->has_ext = 1;
            }
        }
        if (wrong && f->first < bad_first) {
            bad_first = f->first;
            e->bad = kt_field_key[i];
        }
        if (f->type == TSCAN_STRING && i == F_PH)
            e->ph = f->len == 1 ? f->text[0] : '?';
        else if (f->type == TSCAN_STRING && i == F_NAME) {
            r->name = f->text;
            e->name_len = f->len <= INGEST_MAX_NAME ? f->len : 0;
            e->name_too_long = f->len > INGEST_MAX_NAME;
            e->has_name = 1;
        }
        else if (f->type == TSCAN_NUMBER && i == F_TS) {
            e->ts = kt_number(f->text, f->len);
            e->has_ts = 1;
        } else if (f->type == TSCAN_NUMBER && i == F_DUR) {
            e->dur = kt_number(f->text, f->len);
            e->has_dur = 1;
        } else if (f->type == TSCAN_NUMBER && i == F_BYTES) {
            e->bytes = kt_number(f->text, f->len);
            e->has_bytes = 1;
        }
    }
    return end_event(r) ? 0 : -1;
}

/* distributedInfo: rank and world_size. */
static int kt_on_root(void *ctx, int key, int type, const tscan_record *obj, ingest_error *err)
{
    kt_reader *r = ctx;
    (void)key;
    (void)err;
    if (type == TSCAN_ARRAY)
        return kt_fail(r, "distributedInfo: expected an object") ? 0 : -1;
    if (type != TSCAN_OBJECT)
        return 0;
    if (r->seen_dist)
        return kt_fail(r, "distributedInfo appears twice") ? 0 : -1;
    r->seen_dist = 1;
    for (int i = 0; i < 2; i++) {
        const tscan_field *f = tscan_get(obj, i);
        if (!f)
            continue;
        const char *what = i == 0 ? "rank" : "world_size";
        long long v;
        if (f->types & ~(TSCAN_BIT(TSCAN_NUMBER) | TSCAN_BIT(TSCAN_OBJECT) | TSCAN_BIT(TSCAN_ARRAY)))
            return kt_fail(r, "distributedInfo.%s: expected an integer >= 0", what) ? 0 : -1;
        if (f->type != TSCAN_NUMBER)
            continue;
        if (parse_id(f->text, f->len, &v) < 0 || v > INT_MAX)
            return kt_fail(r, "distributedInfo.%s: expected an integer >= 0", what) ? 0 : -1;
        if (i == 0) {
            r->rank = v;
            r->has_rank = 1;
        } else {
            r->world = v;
            r->has_world = 1;
        }
    }
    return 0;
}

static const tscan_schema kt_schema = {
    .event_keys = kt_event_keys,
    .args_keys = kt_args_keys,
    .root_keys = kt_root_keys,
    .member_keys = kt_dist_keys,
    .on_event = kt_on_event,
    .on_root = kt_on_root,
};

/* ---- passes ------------------------------------------------------------------------ */

static void pass_reset(kt_reader *r)
{
    r->seen_dist = 0;
    r->nevents = 0;
    r->has_rank = r->has_world = 0;
    r->nopen = 0;
    r->unmatched = 0;
    memset(r->corr_key, 0, r->nlaunch * sizeof *r->corr_key);
    memset(r->ext_key, 0, r->nlaunch * sizeof *r->ext_key);
    fl_reset(r);
}

/* One pass over the stream. 0, or -1 with r->err. */
static int run_pass(kt_reader *r, ingest_stream *st, unsigned long long *bytes)
{
    pass_reset(r);
    int rc = tscan_run(r->scan, st, bytes);
    if (rc == 0 && r->nopen > 0) {
        kt_fail(r, "\"%s\" begins (ph \"B\") at ts %.17g but never ends", r->open[0].label,
                r->open[0].ts);
        rc = -1;
    }
    if (rc == 0 && !fl_drain(r))
        rc = -1;
    return rc;
}

static int resolve_rank(kt_reader *r, ingest_trace_info *info)
{
    if (r->has_rank && r->has_world && r->rank >= r->world) {
        kt_fail(r, "distributedInfo: rank %lld is not below world_size %lld", r->rank, r->world);
        return -1;
    }
    if (r->has_world && r->world < 1) {
        kt_fail(r, "distributedInfo.world_size: expected an integer >= 1");
        return -1;
    }
    int rank = r->has_rank ? (int)r->rank : 0;
    if (r->opt->rank >= 0) {
        if (r->has_rank && r->rank != r->opt->rank) {
            kt_fail(r, "rank %d was given, but the trace's distributedInfo says rank %lld",
                    r->opt->rank, r->rank);
            return -1;
        }
        rank = r->opt->rank;
    }
    info->rank = rank;
    info->world_size = r->has_world ? (int)r->world : 0;
    return 0;
}

void ingest_trace_options_default(ingest_trace_options *o)
{
    memset(o, 0, sizeof *o);
    o->rank = -1;
}

void ingest_trace_info_free(ingest_trace_info *info)
{
    if (!info)
        return;
    free(info->steps);
    memset(info, 0, sizeof *info);
}

int ingest_kineto(const ingest_input *in, const ingest_trace_options *o, profile *out,
                  ingest_trace_info *info_out, ingest_error *err)
{
    ingest_trace_options defaults;
    if (!o) {
        ingest_trace_options_default(&defaults);
        o = &defaults;
    }
    memset(out, 0, sizeof *out);
    memset(err, 0, sizeof *err);
    err->offset = -1;
    ingest_trace_info info = {0};
    kt_reader r = {.opt = o, .err = err};
    ingest_stream *st = NULL;
    int rc = -1;
    size_t max_bytes = o->max_bytes ? o->max_bytes : (size_t)64 << 30;
    if (!(r.sum = ingest_sum_new(o, err)) ||
        !(st = ingest_stream_open(in, o->no_threads, max_bytes, err)))
        goto done;
    info.gzip = ingest_stream_is_gzip(st);
    /* tables sized by the input: a small upload does not pay for a big one */
    size_t hint = in->data ? in->len : 0;
    struct stat sb;
    if (!in->data && fstat(in->fd, &sb) == 0 && sb.st_size > 0)
        hint = (size_t)sb.st_size;
    if (info.gzip)
        hint = hint > SIZE_MAX / 16 ? SIZE_MAX : hint * 16;
    r.nlaunch = 1024;
    while (r.nlaunch < KT_LAUNCHES && r.nlaunch < hint / 256)
        r.nlaunch *= 2;
    r.corr_key = calloc(r.nlaunch, sizeof *r.corr_key);
    r.ext_key = calloc(r.nlaunch, sizeof *r.ext_key);
    r.corr_ts = malloc(r.nlaunch * sizeof *r.corr_ts);
    r.ext_ts = malloc(r.nlaunch * sizeof *r.ext_ts);
    /* zeroed pages, touched only where names land (NULL: none remembered) */
    r.names = calloc(KT_NAME_SLOTS, sizeof *r.names);
    r.scan = tscan_new(&kt_schema, &r, err);
    if (!r.scan || !r.corr_key || !r.ext_key || !r.corr_ts || !r.ext_ts || fl_init(&r, hint) < 0) {
        kt_fail(&r, "out of memory");
        goto done;
    }
    r.pass = 1;
    if (run_pass(&r, st, &info.bytes) < 0)
        goto done;
    if (ingest_sum_second_pass(r.sum)) {
        r.pass = 2;
        if (ingest_sum_restart(r.sum, err) < 0 || ingest_stream_rewind(st, err) < 0 ||
            run_pass(&r, st, &info.bytes) < 0)
            goto done;
    }
    info.passes = r.pass;
    info.unmatched = r.unmatched;
    if (resolve_rank(&r, &info) < 0 ||
        ingest_sum_finish(r.sum, info.rank, 1e-6, out, &info, err) < 0)
        goto done;
    rc = 0;
done:
    ingest_stream_close(st);
    ingest_sum_free(r.sum);
    free(r.corr_key);
    free(r.ext_key);
    free(r.corr_ts);
    free(r.ext_ts);
    free(r.fl);
    free(r.fl_bucket);
    free(r.names);
    tscan_free(r.scan);
    if (rc < 0) {
        profile_free(out);
        ingest_trace_info_free(&info);
        ingest_clean_message(err->msg);
    }
    if (info_out)
        *info_out = info;
    else
        ingest_trace_info_free(&info);
    return rc;
}
