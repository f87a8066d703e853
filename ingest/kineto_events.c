/*
 * kineto_events.c — the event stream of a Kineto trace (kineto_events.h).
 *
 * The same machinery as kineto.c: chunks from stream.c (gunzipped in a
 * helper thread when the input is gzip), yajl's callback parser, one event
 * held at a time, the same guards against hostile input (nesting depth, a
 * token that never ends, over-long names). Where kineto.c sums events into
 * steps, this reader hands each one to the caller.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/numtext.h"
#include "ingest/kineto_events.h"
#include "ingest/stepsum.h"
#include "ingest/stream.h"

#define KE_MAX_DEPTH 64
#define KE_MAX_QUIET ((size_t)8 << 20)
#define KE_MAX_OPEN 16

enum ke_ctx { KE_ROOT = 1, KE_EVENTS, KE_EVENT, KE_ARGS, KE_DIST, KE_SKIP, KE_DIMS, KE_TYPES };

/* Inputs of an operator whose shapes are kept ("Input Dims"). */
#define KE_MAX_INPUTS 32

enum ke_key {
    Q_NONE = 0, Q_TRACE_EVENTS, Q_DIST, Q_PH, Q_CAT, Q_NAME, Q_TS, Q_DUR, Q_TID, Q_PID, Q_ARGS,
    Q_CORR, Q_EXT, Q_STREAM, Q_BYTES, Q_FLOPS, Q_RANK, Q_WORLD, Q_DIMS, Q_TYPES,
};

typedef struct ke_open {
    char label[64];
    size_t len;
    double ts;
    long long index;
} ke_open;

typedef struct ke_reader {
    kev_callback cb;
    void *cbctx;
    ingest_error *err;
    int failed;
    unsigned char ctx[KE_MAX_DEPTH + 1];
    int depth;
    int key;
    int seen_events;
    long long nevents;
    unsigned long long calls;
    /* the event being read */
    kev_event ev;
    char ph;
    int cat;           /* kev_kind, 0 ignored, -1 other host (annotation) */
    int has_ts, has_dur, has_name, bad, name_too_long;
    int stream_text;   /* args.stream given as a string ("0x0" in ROCm runtime calls) */
    char *name;
    size_t name_cap;
    /* distributedInfo */
    kev_info *info;
    ke_open open[KE_MAX_OPEN];
    int nopen;
    /* "Input Dims" and "Input type" of the event being read */
    int dims_base, ninputs, ntypes;
    double prod;
    int had_num;
    double elems[KE_MAX_INPUTS];
    int elem_size[KE_MAX_INPUTS];
    int prec;
} ke_reader;

/* Bytes per element of a PyTorch dtype as Kineto spells it ("float",
 * "c10::Half", "long int", ...), 0 for what is not a tensor's type; the
 * precision (XG_FP64.. of execgraph/xg_device.h: 0 fp64, 1 fp32, 3 fp16/bf16)
 * of floating types, else -1. */
static int dtype_size(const char *s, size_t n, int *prec)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
    *prec = -1;
    if (IS("float")) {
        *prec = 1;
        return 4;
    }
    if (IS("double")) {
        *prec = 0;
        return 8;
    }
    if (IS("c10::Half") || IS("c10::BFloat16")) {
        *prec = 3;
        return 2;
    }
    if (IS("long int") || IS("long") || IS("int64_t") || IS("c10::complex<float>"))
        return 8;
    if (IS("int") || IS("unsigned int"))
        return 4;
    if (IS("short int") || IS("short"))
        return 2;
    if (IS("bool") || IS("unsigned char") || IS("signed char") || IS("c10::Float8_e4m3fn") ||
        IS("c10::Float8_e5m2"))
        return 1;
    if (IS("c10::complex<double>"))
        return 16;
#undef IS
    return 0;
}

/* Bytes an operator moves, estimated from its inputs' shapes and types:
 * every input read once and an output as large as the largest input
 * written once (element-wise and memory-bound operators). -1 without
 * shapes. */
static double input_bytes(const ke_reader *r)
{
    if (r->ninputs == 0)
        return -1;
    double sum = 0, max = 0;
    int n = r->ninputs < KE_MAX_INPUTS ? r->ninputs : KE_MAX_INPUTS;
    for (int i = 0; i < n; i++) {
        double b = r->elems[i] * (i < r->ntypes ? r->elem_size[i] : 0);
        sum += b;
        if (b > max)
            max = b;
    }
    return sum > 0 ? sum + max : -1;
}

static int ke_fail(ke_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ke_fail(ke_reader *r, const char *fmt, ...)
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

static int ke_event_fail(ke_reader *r, const char *what)
{
    if (r->has_name) {
        size_t n = r->ev.name_len > 40 ? 40 : r->ev.name_len;
        while (n > 0 && n < r->ev.name_len && ((unsigned char)r->name[n] & 0xC0) == 0x80)
            n--;
        return ke_fail(r, "traceEvents[%lld] (\"%.*s\"): %s", r->ev.index, (int)n, r->name, what);
    }
    return ke_fail(r, "traceEvents[%lld]: %s", r->ev.index, what);
}

static int cat_kind(const char *s, size_t n)
{
#define IS(lit) (n == sizeof(lit) - 1 && !memcmp(s, lit, n))
    if (IS("kernel") || IS("Kernel"))
        return KEV_KERNEL;
    if (IS("cpu_op") || IS("Operator"))
        return KEV_OP;
    if (IS("user_annotation"))
        return -1;
    if (IS("cuda_runtime") || IS("cuda_driver") || IS("Runtime"))
        return KEV_RUNTIME;
    if (IS("gpu_memcpy") || IS("Memcpy"))
        return KEV_MEMCPY;
    if (IS("gpu_memset") || IS("Memset"))
        return KEV_MEMSET;
    if (IS("cuda_sync"))
        return KEV_SYNC;
#undef IS
    return 0;
}

static int deliver(ke_reader *r)
{
    r->ev.name = r->name;
    if (r->cb(r->cbctx, &r->ev, r->err)) {
        r->failed = 1;
        return 0;
    }
    return 1;
}

/* A "B"/"E" ProfilerStep pair becomes one KEV_STEP at the "E". */
static int step_begin_end(ke_reader *r)
{
    if (!r->has_ts || !isfinite(r->ev.ts))
        return ke_event_fail(r, "expected a finite number in \"ts\"");
    size_t len = r->ev.name_len < sizeof r->open[0].label ? r->ev.name_len
                                                          : sizeof r->open[0].label - 1;
    if (r->ph == 'B') {
        if (r->nopen == KE_MAX_OPEN)
            return ke_event_fail(r, "too many ProfilerSteps begun and not ended");
        ke_open *o = &r->open[r->nopen++];
        memcpy(o->label, r->name, len);
        o->label[len] = '\0';
        o->len = len;
        o->ts = r->ev.ts;
        o->index = r->ev.index;
        return 1;
    }
    for (int i = r->nopen - 1; i >= 0; i--) {
        ke_open *o = &r->open[i];
        if (o->len == len && !memcmp(o->label, r->name, len)) {
            if (r->ev.ts < o->ts)
                return ke_event_fail(r, "ProfilerStep ends before it begins");
            r->ev.dur = r->ev.ts - o->ts;
            r->ev.ts = o->ts;
            r->ev.kind = KEV_STEP;
            r->open[i] = r->open[--r->nopen];
            return deliver(r);
        }
    }
    return ke_event_fail(r, "ProfilerStep ends (ph \"E\") but never began");
}

static int end_event(ke_reader *r)
{
    if (r->cat == 0)
        return 1;
    if (r->bad) {
        static const char *const what[] = {
            [Q_PH] = "\"ph\" must be a string", [Q_NAME] = "\"name\" must be a string",
            [Q_TS] = "\"ts\" must be a number", [Q_DUR] = "\"dur\" must be a number",
            [Q_CORR] = "args.correlation must be an integer",
            [Q_EXT] = "args.\"External id\" must be an integer",
            [Q_STREAM] = "args.stream must be an integer",
            [Q_BYTES] = "args.bytes must be a number",
            [Q_FLOPS] = "args.flops must be a number"};
        const char *w = r->bad < (int)(sizeof what / sizeof *what) ? what[r->bad] : NULL;
        return ke_event_fail(r, w ? w : "a member has the wrong type");
    }
    if (r->stream_text && (r->cat == KEV_KERNEL || r->cat == KEV_MEMCPY || r->cat == KEV_MEMSET))
        return ke_event_fail(r, "args.stream must be an integer");
    if (!r->has_name)
        return ke_event_fail(r, "no \"name\"");
    if (r->name_too_long)
        return ke_event_fail(r, "name longer than 65536 bytes");
    int step = r->cat != KEV_KERNEL && r->cat != KEV_MEMCPY && r->cat != KEV_MEMSET &&
               r->cat != KEV_SYNC &&
               r->ev.name_len > 13 && !memcmp(r->name, "ProfilerStep#", 13);
    if (step && (r->ph == 'B' || r->ph == 'E'))
        return step_begin_end(r);
    if (r->ph != 'X' || (r->cat < 0 && !step))
        return 1;
    if (!r->has_ts || !isfinite(r->ev.ts))
        return ke_event_fail(r, "expected a finite number in \"ts\"");
    if (!r->has_dur)
        return ke_event_fail(r, "no \"dur\"");
    if (!isfinite(r->ev.dur) || r->ev.dur < 0)
        return ke_event_fail(r, "\"dur\" must be a finite number >= 0");
    if (r->ev.bytes != -1 && (!isfinite(r->ev.bytes) || r->ev.bytes < 0))
        return ke_event_fail(r, "args.bytes must be a finite number >= 0");
    if (r->ev.flops != -1 && (!isfinite(r->ev.flops) || r->ev.flops < 0))
        return ke_event_fail(r, "args.flops must be a finite number >= 0");
    if (r->cat == KEV_OP) {
        r->ev.in_bytes = input_bytes(r);
        r->ev.prec = r->prec;
    }
    r->ev.kind = step ? KEV_STEP : r->cat;
    return deliver(r);
}

/* ---- yajl callbacks --------------------------------------------------------------- */

static int cb_start(ke_reader *r, int is_map)
{
    r->calls++;
    if (r->depth >= KE_MAX_DEPTH)
        return ke_fail(r, "JSON nested deeper than %d levels", KE_MAX_DEPTH);
    int parent = r->ctx[r->depth], ctx = KE_SKIP;
    switch (parent) {
    case 0:
        if (is_map)
            ctx = KE_ROOT;
        else {
            if (r->seen_events)
                return ke_fail(r, "traceEvents appears twice");
            r->seen_events = 1;
            ctx = KE_EVENTS;
        }
        break;
    case KE_ROOT:
        if (r->key == Q_TRACE_EVENTS) {
            if (is_map)
                return ke_fail(r, "traceEvents: expected an array");
            if (r->seen_events)
                return ke_fail(r, "traceEvents appears twice");
            r->seen_events = 1;
            ctx = KE_EVENTS;
        } else if (r->key == Q_DIST && is_map) {
            ctx = KE_DIST;
        }
        break;
    case KE_EVENTS:
        if (!is_map)
            return ke_fail(r, "traceEvents[%lld]: expected an object", r->nevents);
        ctx = KE_EVENT;
        memset(&r->ev, 0, sizeof r->ev);
        r->ev.index = r->nevents++;
        r->ev.corr = r->ev.ext = r->ev.stream = -1;
        r->ev.bytes = r->ev.flops = r->ev.in_bytes = -1;
        r->ev.prec = -1;
        r->ninputs = r->ntypes = 0;
        r->prec = -1;
        r->ph = 0;
        r->cat = 0;
        r->has_ts = r->has_dur = r->has_name = r->bad = r->name_too_long = 0;
        r->stream_text = 0;
        break;
    case KE_EVENT:
        if (r->key == Q_ARGS && is_map)
            ctx = KE_ARGS;
        else if (r->key >= Q_PH && r->key <= Q_DUR && !r->bad)
            r->bad = r->key;
        break;
    case KE_ARGS:
        if (r->key >= Q_CORR && r->key <= Q_FLOPS && !r->bad)
            r->bad = r->key;
        else if (r->key == Q_DIMS && !is_map) {
            ctx = KE_DIMS;
            r->dims_base = r->depth + 1;
        } else if (r->key == Q_TYPES && !is_map)
            ctx = KE_TYPES;
        break;
    case KE_DIMS:
        if (!is_map) {
            ctx = KE_DIMS;
            if (r->depth + 1 - r->dims_base == 1) {
                if (r->ninputs < KE_MAX_INPUTS)
                    r->elems[r->ninputs] = 0;
                r->ninputs++;
            }
            r->prod = 1;
            r->had_num = 0;
        }
        break;
    }
    r->ctx[++r->depth] = (unsigned char)ctx;
    r->key = Q_NONE;
    return 1;
}

static int cb_start_map(void *c)
{
    return cb_start(c, 1);
}

static int cb_start_array(void *c)
{
    return cb_start(c, 0);
}

static int cb_end(void *c)
{
    ke_reader *r = c;
    r->calls++;
    int ctx = r->ctx[r->depth--];
    r->key = Q_NONE;
    if (ctx == KE_DIMS && r->had_num && r->ninputs > 0 && r->ninputs <= KE_MAX_INPUTS) {
        r->elems[r->ninputs - 1] += r->prod;
        r->had_num = 0;
    }
    return ctx == KE_EVENT ? end_event(r) : 1;
}

#define KEY_IS(lit) (n == sizeof(lit) - 1 && !memcmp(k, lit, n))

static int cb_key(void *c, const unsigned char *key, size_t n)
{
    ke_reader *r = c;
    const char *k = (const char *)key;
    r->calls++;
    r->key = Q_NONE;
    switch (r->ctx[r->depth]) {
    case KE_EVENT:
        r->key = KEY_IS("ph") ? Q_PH : KEY_IS("ts") ? Q_TS : KEY_IS("cat") ? Q_CAT
                 : KEY_IS("dur") ? Q_DUR : KEY_IS("tid") ? Q_TID : KEY_IS("pid") ? Q_PID
                 : KEY_IS("name") ? Q_NAME : KEY_IS("args") ? Q_ARGS : Q_NONE;
        break;
    case KE_ARGS:
        r->key = KEY_IS("correlation") ? Q_CORR : KEY_IS("External id") ? Q_EXT
                 : KEY_IS("stream") ? Q_STREAM : KEY_IS("bytes") ? Q_BYTES
                 : KEY_IS("flops") ? Q_FLOPS : KEY_IS("Input Dims") ? Q_DIMS
                 : KEY_IS("Input type") ? Q_TYPES : Q_NONE;
        break;
    case KE_ROOT:
        r->key = KEY_IS("traceEvents") ? Q_TRACE_EVENTS : KEY_IS("distributedInfo") ? Q_DIST : Q_NONE;
        break;
    case KE_DIST:
        r->key = KEY_IS("rank") ? Q_RANK : KEY_IS("world_size") ? Q_WORLD : Q_NONE;
        break;
    }
    return 1;
}

#undef KEY_IS

static int parse_int(const char *s, size_t n, long long *out)
{
    size_t i = 0;
    int neg = 0;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (n == i || n - i > 18)
        return -1;
    long long v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

/* A string tid/pid ("stream 7", "[pid 12] thread") becomes a stable number. */
static long long hash_id(const char *s, size_t n)
{
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return (long long)(h >> 2) | (1ll << 60);
}

static int cb_number(void *c, const char *s, size_t n)
{
    ke_reader *r = c;
    r->calls++;
    int key = r->key, ctx = r->ctx[r->depth];
    r->key = Q_NONE;
    double d;
    long long v;
    if (ctx == KE_EVENT) {
        if (key == Q_TS || key == Q_DUR) {
            if (numtext_parse(s, n, &d) != n)
                d = NAN;
            if (key == Q_TS) {
                r->ev.ts = d;
                r->has_ts = 1;
            } else {
                r->ev.dur = d;
                r->has_dur = 1;
            }
        } else if (key == Q_TID || key == Q_PID) {
            if (parse_int(s, n, &v) < 0) {
                if (numtext_parse(s, n, &d) != n || !isfinite(d))
                    d = 0;
                v = (long long)d;
            }
            if (key == Q_TID)
                r->ev.tid = v;
            else
                r->ev.pid = v;
        } else if ((key == Q_PH || key == Q_CAT || key == Q_NAME) && !r->bad) {
            r->bad = key;
        }
    } else if (ctx == KE_ARGS) {
        if (key == Q_CORR || key == Q_EXT || key == Q_STREAM) {
            if (parse_int(s, n, &v) < 0 || (key != Q_STREAM && v < 0)) {
                if (!r->bad)
                    r->bad = key;
            } else if (key == Q_CORR) {
                r->ev.corr = v;
            } else if (key == Q_EXT) {
                r->ev.ext = v;
            } else {
                r->ev.stream = v;
            }
        } else if (key == Q_BYTES || key == Q_FLOPS) {
            if (numtext_parse(s, n, &d) != n)
                d = NAN;
            *(key == Q_BYTES ? &r->ev.bytes : &r->ev.flops) = d;
        }
    } else if (ctx == KE_DIMS) {
        if (numtext_parse(s, n, &d) != n || !isfinite(d) || d < 0)
            d = 0;
        r->prod *= d;
        r->had_num = 1;
    } else if (ctx == KE_EVENTS) {
        return ke_fail(r, "traceEvents[%lld]: expected an object", r->nevents);
    } else if (ctx == KE_DIST && (key == Q_RANK || key == Q_WORLD)) {
        if (parse_int(s, n, &v) < 0 || v < 0 || v > INT_MAX)
            return ke_fail(r, "distributedInfo.%s: expected an integer >= 0",
                           key == Q_RANK ? "rank" : "world_size");
        if (key == Q_RANK) {
            r->info->rank = (int)v;
            r->info->has_rank = 1;
        } else {
            r->info->world_size = (int)v;
        }
    } else if (ctx == 0) {
        return ke_fail(r, "expected a JSON object with \"traceEvents\"");
    }
    return 1;
}

static int cb_string(void *c, const unsigned char *str, size_t n)
{
    ke_reader *r = c;
    const char *s = (const char *)str;
    r->calls++;
    int key = r->key, ctx = r->ctx[r->depth];
    r->key = Q_NONE;
    if (ctx == KE_EVENT) {
        switch (key) {
        case Q_CAT:
            r->cat = cat_kind(s, n);
            break;
        case Q_PH:
            r->ph = n == 1 ? s[0] : '?';
            break;
        case Q_TID:
            r->ev.tid = hash_id(s, n);
            break;
        case Q_PID:
            r->ev.pid = hash_id(s, n);
            break;
        case Q_NAME:
            if (n > INGEST_MAX_NAME) {
                r->name_too_long = 1;
                n = 0;
            }
            if (n + 1 > r->name_cap) {
                size_t cap = r->name_cap ? r->name_cap : 256;
                while (cap < n + 1)
                    cap *= 2;
                char *p = realloc(r->name, cap);
                if (!p)
                    return ke_fail(r, "out of memory");
                r->name = p;
                r->name_cap = cap;
            }
            memcpy(r->name, s, n);
            r->name[n] = '\0';
            r->ev.name_len = n;
            r->has_name = 1;
            break;
        case Q_TS:
        case Q_DUR:
            if (!r->bad)
                r->bad = key;
            break;
        }
    } else if (ctx == KE_ARGS) {
        if (key == Q_STREAM)
            r->stream_text = 1; /* a fault of device work only (end_event) */
        else if (key >= Q_CORR && key <= Q_FLOPS && !r->bad)
            r->bad = key;
    } else if (ctx == KE_TYPES) {
        if (r->ntypes < KE_MAX_INPUTS) {
            int prec;
            r->elem_size[r->ntypes++] = dtype_size(s, n, &prec);
            if (r->prec < 0)
                r->prec = prec;
        }
    } else if (ctx == KE_EVENTS) {
        return ke_fail(r, "traceEvents[%lld]: expected an object", r->nevents);
    } else if (ctx == 0) {
        return ke_fail(r, "expected a JSON object with \"traceEvents\"");
    }
    return 1;
}

static int cb_other(ke_reader *r)
{
    r->calls++;
    int key = r->key, ctx = r->ctx[r->depth];
    r->key = Q_NONE;
    if (ctx == KE_EVENT && (key == Q_PH || key == Q_NAME || key == Q_TS || key == Q_DUR) && !r->bad)
        r->bad = key;
    else if (ctx == KE_ARGS && key >= Q_CORR && key <= Q_FLOPS && !r->bad)
        r->bad = key;
    else if (ctx == KE_EVENTS)
        return ke_fail(r, "traceEvents[%lld]: expected an object", r->nevents);
    else if (ctx == 0)
        return ke_fail(r, "expected a JSON object with \"traceEvents\"");
    return 1;
}

static int cb_null(void *c)
{
    return cb_other(c);
}

static int cb_bool(void *c, int b)
{
    (void)b;
    return cb_other(c);
}

static const yajl_callbacks ke_callbacks = {
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

static void set_offset(ke_reader *r, yajl_handle h, unsigned long long base, int from_yajl)
{
    unsigned long long at = base + yajl_get_bytes_consumed(h);
    char msg[sizeof r->err->msg];
    if (from_yajl) {
        unsigned char *m = yajl_get_error(h, 0, NULL, 0);
        snprintf(msg, sizeof msg, "%s", m ? (const char *)m : "invalid JSON");
        if (m)
            yajl_free_error(h, m);
    } else {
        memcpy(msg, r->err->msg, sizeof msg);
    }
    snprintf(r->err->msg, sizeof r->err->msg, "byte %llu: %.*s", at, (int)sizeof msg - 32, msg);
    r->err->offset = at > LONG_MAX ? LONG_MAX : (long)at;
    ingest_clean_message(r->err->msg);
}

int ingest_kineto_events(const ingest_input *in, const ingest_trace_options *o, kev_callback cb,
                         void *ctx, kev_info *info_out, ingest_error *err)
{
    kev_info info = {0};
    memset(err, 0, sizeof *err);
    err->offset = -1;
    ke_reader r = {.cb = cb, .cbctx = ctx, .err = err, .info = &info};
    size_t max_bytes = o && o->max_bytes ? o->max_bytes : (size_t)64 << 30;
    ingest_stream *st = ingest_stream_open(in, o ? o->no_threads : 0, max_bytes, err);
    if (!st)
        return -1;
    info.gzip = ingest_stream_is_gzip(st);
    yajl_handle h = yajl_alloc(&ke_callbacks, NULL, &r);
    int rc = 0, got = 0;
    unsigned long long base = 0, quiet = 0;
    const char *p;
    size_t n;
    if (!h) {
        ke_fail(&r, "out of memory");
        rc = -1;
    }
    while (rc == 0 && (got = ingest_stream_next(st, &p, &n, err)) > 0) {
        unsigned long long calls = r.calls;
        if (yajl_parse(h, (const unsigned char *)p, n) != yajl_status_ok) {
            set_offset(&r, h, base, !r.failed);
            rc = -1;
            break;
        }
        quiet = r.calls == calls ? quiet + n : 0;
        if (quiet > KE_MAX_QUIET) {
            ke_fail(&r, "byte %llu: no JSON token ends within %zu MiB", base + n,
                    KE_MAX_QUIET >> 20);
            rc = -1;
        }
        base += n;
    }
    if (rc == 0 && got < 0)
        rc = -1;
    if (rc == 0 && base == 0) {
        ke_fail(&r, "the input is empty");
        rc = -1;
    }
    if (rc == 0 && yajl_complete_parse(h) != yajl_status_ok) {
        set_offset(&r, h, base, !r.failed);
        rc = -1;
    }
    if (rc == 0 && !r.seen_events) {
        ke_fail(&r, "no \"traceEvents\" array: not a Chrome trace / Kineto file");
        rc = -1;
    }
    if (rc == 0 && r.nopen > 0) {
        ke_fail(&r, "traceEvents[%lld] (\"%s\") begins (ph \"B\") but never ends",
                r.open[0].index, r.open[0].label);
        rc = -1;
    }
    if (h)
        yajl_free(h);
    ingest_stream_close(st);
    free(r.name);
    info.events = r.nevents;
    info.bytes = base;
    if (info_out)
        *info_out = info;
    return rc;
}
