/*
 * kineto_events.c — the event stream of a Kineto trace (kineto_events.h).
 *
 * The same machinery as kineto.c: chunks from stream.c (gunzipped in a
 * helper thread when the input is gzip), the scanner of trace_scan.c, one
 * event held at a time, the same guards against hostile input (nesting
 * depth, a token that never ends, over-long names). Where kineto.c sums events into
 * steps, this reader hands each one to the caller.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/numtext.h"
#include "ingest/kineto_events.h"
#include "ingest/stepsum.h"
#include "ingest/stream.h"
#include "ingest/trace_scan.h"

#define KE_MAX_OPEN 16

/* Inputs of an operator whose shapes are kept ("Input Dims"), and their
 * dimensions in all (an input with more than KE_MAX_RANK is not kept). */
#define KE_MAX_INPUTS 32
#define KE_MAX_DIMS 128
#define KE_MAX_RANK 8

/* members whose faults end_event names (ke_reader.bad) */
enum ke_key {
    Q_NONE = 0, Q_PH, Q_CAT, Q_NAME, Q_TS, Q_DUR, Q_TID, Q_PID,
    Q_CORR, Q_EXT, Q_STREAM, Q_BYTES, Q_FLOPS, Q_DIMS, Q_TYPES,
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
    /* the event being read */
    kev_event ev;
    char ph;
    int cat;           /* kev_kind, 0 ignored, -1 other host (annotation) */
    int has_ts, has_dur, has_name, bad, name_too_long;
    int stream_text;   /* args.stream given as a string ("0x0" in ROCm runtime calls) */
    const char *name;  /* the event's, from the scanner: valid while it is read */
    /* distributedInfo */
    kev_info *info;
    ke_open open[KE_MAX_OPEN];
    int nopen;
    /* "Input Dims" and "Input type" of the event being read */
    int ninputs, ntypes;
    double prod;
    int had_num;
    double elems[KE_MAX_INPUTS];
    int elem_size[KE_MAX_INPUTS];
    int prec;
    /* each input's dimensions (plain tensors: numbers directly inside) */
    int in_rank[KE_MAX_INPUTS], in_first[KE_MAX_INPUTS];
    double dims[KE_MAX_DIMS];
    int ndims;
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
        r->ev.ninputs = r->ninputs < KE_MAX_INPUTS ? r->ninputs : KE_MAX_INPUTS;
        for (int i = r->ntypes; i < r->ev.ninputs; i++)
            r->elem_size[i] = 0;
        r->ev.in_rank = r->in_rank;
        r->ev.in_dims = r->in_first;
        r->ev.dims = r->dims;
        r->ev.in_elem = r->elem_size;
    }
    r->ev.kind = step ? KEV_STEP : r->cat;
    return deliver(r);
}

/* ---- records from the scanner ------------------------------------------------------ */

enum {
    F_PH, F_CAT, F_NAME, F_TS, F_DUR, F_TID, F_PID,
    F_CORR, F_EXT, F_STREAM, F_BYTES, F_FLOPS, F_DIMS, F_TYPES, F_COUNT,
};

static const char *const ke_event_keys[] = {"ph", "cat", "name", "ts", "dur", "tid", "pid", NULL};
static const char *const ke_args_keys[] = {"correlation", "External id", "stream", "bytes",
                                           "flops", "Input Dims", "Input type", NULL};
static const char *const ke_root_keys[] = {"distributedInfo", "deviceProperties", NULL};
static const char *const ke_dist_keys[] = {"rank", "world_size", NULL};

#define B(t) TSCAN_BIT(TSCAN_##t)
/* What each field may hold; anything else is the event's fault. */
static const unsigned ke_allowed[F_COUNT] = {
    [F_PH] = B(STRING), [F_CAT] = B(STRING) | B(TRUE) | B(FALSE) | B(NULL),
    [F_NAME] = B(STRING), [F_TS] = B(NUMBER), [F_DUR] = B(NUMBER),
    [F_TID] = 0xFF, [F_PID] = 0xFF,
    [F_CORR] = B(NUMBER), [F_EXT] = B(NUMBER), [F_STREAM] = B(NUMBER) | B(STRING),
    [F_BYTES] = B(NUMBER), [F_FLOPS] = B(NUMBER), [F_DIMS] = 0xFF, [F_TYPES] = 0xFF,
};
#undef B

/* The Q_ of each field, for end_event's messages. */
static const int ke_field_key[F_COUNT] = {
    Q_PH, Q_CAT, Q_NAME, Q_TS, Q_DUR, Q_TID, Q_PID, Q_CORR, Q_EXT, Q_STREAM, Q_BYTES, Q_FLOPS,
    Q_DIMS, Q_TYPES,
};

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

static double number_or_nan(const tscan_field *f)
{
    double d;
    return numtext_parse(f->text, f->len, &d) == f->len ? d : NAN;
}

/* "Input Dims": per input (an array directly inside), the product of the
 * numbers in its arrays; objects inside are skipped. */
static void read_dims(ke_reader *r, const tscan_token *t, int n)
{
    unsigned char skip[TSCAN_MAX_DEPTH + 2]; /* per open bracket: 1 skipped */
    int level = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].type == TSCAN_ARRAY || t[i].type == TSCAN_OBJECT) {
            int s = level > 0 && (skip[level - 1] || t[i].type == TSCAN_OBJECT);
            if (i > 0 && !s) {
                if (level == 1) {
                    if (r->ninputs < KE_MAX_INPUTS) {
                        r->elems[r->ninputs] = 0;
                        r->in_rank[r->ninputs] = 0;
                        r->in_first[r->ninputs] = r->ndims;
                    }
                    r->ninputs++;
                } else if (level >= 2 && r->ninputs > 0 && r->ninputs <= KE_MAX_INPUTS) {
                    r->in_rank[r->ninputs - 1] = -1; /* a list of tensors */
                }
                r->prod = 1;
                r->had_num = 0;
            }
            skip[level++] = (unsigned char)s;
        } else if (t[i].type == TSCAN_END) {
            int s = skip[--level];
            if (!s && r->had_num && r->ninputs > 0 && r->ninputs <= KE_MAX_INPUTS) {
                r->elems[r->ninputs - 1] += r->prod;
                r->had_num = 0;
            }
        } else if (t[i].type == TSCAN_NUMBER && level > 0 && !skip[level - 1]) {
            double d;
            if (numtext_parse(t[i].text, t[i].len, &d) != t[i].len || !isfinite(d) || d < 0)
                d = 0;
            r->prod *= d;
            r->had_num = 1;
            if (level == 2 && r->ninputs > 0 && r->ninputs <= KE_MAX_INPUTS) {
                int *rank = &r->in_rank[r->ninputs - 1];
                if (*rank >= 0 && *rank < KE_MAX_RANK && r->ndims < KE_MAX_DIMS) {
                    r->dims[r->ndims++] = d;
                    ++*rank;
                } else {
                    *rank = -1;
                }
            }
        }
    }
}

/* "Input type": the element size of each input (strings directly inside). */
static void read_types(ke_reader *r, const tscan_token *t, int n)
{
    int level = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].type == TSCAN_ARRAY || t[i].type == TSCAN_OBJECT)
            level++;
        else if (t[i].type == TSCAN_END)
            level--;
        else if (t[i].type == TSCAN_STRING && level == 1 && r->ntypes < KE_MAX_INPUTS) {
            int prec;
            r->elem_size[r->ntypes++] = dtype_size(t[i].text, t[i].len, &prec);
            if (r->prec < 0)
                r->prec = prec;
        }
    }
}

/* A number or string tid / pid. */
static long long thread_id(const tscan_field *f)
{
    long long v;
    if (f->type == TSCAN_STRING)
        return hash_id(f->text, f->len);
    if (parse_int(f->text, f->len, &v) == 0)
        return v;
    double d;
    if (numtext_parse(f->text, f->len, &d) != f->len || !isfinite(d))
        d = 0;
    return (long long)d;
}

/* One field of the event; 0 when it holds what it may. */
static int read_field(ke_reader *r, const tscan_record *rec, int i, const tscan_field *f)
{
    long long v;
    int wrong = (f->types & ~ke_allowed[i]) != 0;
    switch (i) {
    case F_CAT: r->cat = f->type == TSCAN_STRING ? cat_kind(f->text, f->len) : 0; break;
    case F_PH: r->ph = f->type != TSCAN_STRING ? 0 : f->len == 1 ? f->text[0] : '?'; break;
    case F_NAME:
        if (f->type == TSCAN_STRING) {
            r->name = f->text;
            r->ev.name_len = f->len <= INGEST_MAX_NAME ? f->len : 0;
            r->name_too_long = f->len > INGEST_MAX_NAME;
            r->has_name = 1;
        }
        break;
    case F_TS:
    case F_DUR:
        if (f->type == TSCAN_NUMBER) {
            *(i == F_TS ? &r->ev.ts : &r->ev.dur) = number_or_nan(f);
            *(i == F_TS ? &r->has_ts : &r->has_dur) = 1;
        }
        break;
    case F_TID:
    case F_PID:
        if (f->type == TSCAN_NUMBER || f->type == TSCAN_STRING)
            *(i == F_TID ? &r->ev.tid : &r->ev.pid) = thread_id(f);
        break;
    case F_CORR:
    case F_EXT:
    case F_STREAM:
        if (f->types & TSCAN_BIT(TSCAN_STRING) && i == F_STREAM)
            r->stream_text = 1; /* a fault of device work only (end_event) */
        if (f->type != TSCAN_NUMBER)
            break;
        if (parse_int(f->text, f->len, &v) < 0 || (i != F_STREAM && v < 0))
            wrong = 1;
        else
            *(i == F_CORR ? &r->ev.corr : i == F_EXT ? &r->ev.ext : &r->ev.stream) = v;
        break;
    case F_BYTES:
    case F_FLOPS:
        if (f->type == TSCAN_NUMBER)
            *(i == F_BYTES ? &r->ev.bytes : &r->ev.flops) = number_or_nan(f);
        break;
    case F_DIMS:
        if (f->ntok)
            read_dims(r, rec->tok + f->tok, f->ntok);
        break;
    case F_TYPES:
        if (f->ntok)
            read_types(r, rec->tok + f->tok, f->ntok);
        break;
    }
    return wrong;
}

static int ke_on_event(void *ctx, const tscan_record *rec, ingest_error *err)
{
    ke_reader *r = ctx;
    (void)err;
    memset(&r->ev, 0, sizeof r->ev);
    r->ev.index = rec->index;
    r->ev.corr = r->ev.ext = r->ev.stream = -1;
    r->ev.bytes = r->ev.flops = r->ev.in_bytes = -1;
    r->ev.prec = -1;
    r->ninputs = r->ntypes = r->ndims = 0;
    r->prec = -1;
    r->ph = 0;
    r->cat = 0;
    r->has_ts = r->has_dur = r->has_name = r->bad = r->name_too_long = 0;
    r->stream_text = 0;
    const tscan_field *f = tscan_get(rec, F_CAT);
    if (!f || f->type != TSCAN_STRING || !(r->cat = cat_kind(f->text, f->len)))
        return 0;
    unsigned bad_first = ~0u;
    for (int i = 0; i < F_COUNT; i++) {
        if (!(f = tscan_get(rec, i)))
            continue;
        int wrong = read_field(r, rec, i, f);
        if (wrong < 0)
            return -1;
        if (wrong && f->first < bad_first) {
            bad_first = f->first;
            r->bad = ke_field_key[i];
        }
    }
    return end_event(r) ? 0 : -1;
}

/* One member of a device object: name, computeMajor / computeMinor,
 * totalGlobalMem (members of another type are left unset). */
static void device_member(kev_device *d, const tscan_token *k, const tscan_token *v)
{
    double x = NAN;
    if (v->type == TSCAN_NUMBER && numtext_parse(v->text, v->len, &x) != v->len)
        x = NAN;
    if (k->len == 4 && !memcmp(k->text, "name", 4) && v->type == TSCAN_STRING && v->text) {
        size_t n = v->len < sizeof d->name - 1 ? v->len : sizeof d->name - 1;
        memcpy(d->name, v->text, n);
        d->name[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if ((unsigned char)d->name[i] < 0x20)
                d->name[i] = ' ';
    } else if (k->len == 12 && !memcmp(k->text, "computeMajor", 12) && x >= 0 && x < 1000) {
        d->cc_major = (int)x;
    } else if (k->len == 12 && !memcmp(k->text, "computeMinor", 12) && x >= 0 && x < 1000) {
        d->cc_minor = (int)x;
    } else if (k->len == 14 && !memcmp(k->text, "totalGlobalMem", 14) && x >= 0 && isfinite(x)) {
        d->memory = x;
    }
}

/* deviceProperties: [{"name", "computeMajor", "computeMinor", "totalGlobalMem", ...}, ...];
 * the first object is kept, the objects counted. */
static void ke_devices(ke_reader *r, const tscan_record *obj)
{
    const tscan_field *f = tscan_get(obj, 0);
    if (!f)
        return;
    const tscan_token *t = obj->tok + f->tok;
    int depth = 0;
    for (int i = 0; i < f->ntok; i++) {
        int ty = t[i].type;
        if (ty == TSCAN_OBJECT || ty == TSCAN_ARRAY) {
            if (ty == TSCAN_OBJECT && depth == 1 && r->info->ndevices++ == 0)
                r->info->device = (kev_device){.cc_major = -1, .cc_minor = -1, .memory = -1};
            depth++;
        } else if (ty == TSCAN_END) {
            depth--;
        } else if (ty == TSCAN_KEY && depth == 2 && r->info->ndevices == 1 && i + 1 < f->ntok &&
                   t[i].text) {
            device_member(&r->info->device, &t[i], &t[i + 1]);
        }
    }
}

/* distributedInfo: rank and world_size when they are integers >= 0;
 * deviceProperties: the first device. */
static int ke_on_root(void *ctx, int key, int type, const tscan_record *obj, ingest_error *err)
{
    ke_reader *r = ctx;
    (void)err;
    if (key == 1) {
        if (type == TSCAN_ARRAY && obj)
            ke_devices(r, obj);
        return 0;
    }
    if (type != TSCAN_OBJECT)
        return 0;
    for (int i = 0; i < 2; i++) {
        const tscan_field *f = tscan_get(obj, i);
        long long v;
        if (!f || f->type != TSCAN_NUMBER)
            continue;
        if (parse_int(f->text, f->len, &v) < 0 || v < 0 || v > INT_MAX)
            return ke_fail(r, "distributedInfo.%s: expected an integer >= 0",
                           i == 0 ? "rank" : "world_size") ? 0 : -1;
        if (i == 0) {
            r->info->rank = (int)v;
            r->info->has_rank = 1;
        } else {
            r->info->world_size = (int)v;
        }
    }
    return 0;
}

static const tscan_schema ke_schema = {
    .event_keys = ke_event_keys,
    .args_keys = ke_args_keys,
    .capture = 1u << F_DIMS | 1u << F_TYPES,
    .root_keys = ke_root_keys,
    .member_keys = ke_dist_keys,
    .root_capture = 1u << 1,
    .on_event = ke_on_event,
    .on_root = ke_on_root,
};

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
    int rc = -1;
    tscan *scan = tscan_new(&ke_schema, &r, err);
    if (!scan)
        ke_fail(&r, "out of memory");
    else
        rc = tscan_run(scan, st, &info.bytes);
    if (rc == 0 && r.nopen > 0) {
        ke_fail(&r, "traceEvents[%lld] (\"%s\") begins (ph \"B\") but never ends",
                r.open[0].index, r.open[0].label);
        rc = -1;
    }
    if (rc < 0)
        ingest_clean_message(err->msg);
    info.events = scan ? tscan_events(scan) : 0;
    tscan_free(scan);
    ingest_stream_close(st);
    if (info_out)
        *info_out = info;
    return rc;
}
