/*
 * simgraph_json.c — reader and writer of perfcast's step-graph JSON, the
 * input of the asynchronous-SGD simulator (simgraph.h).
 *
 * The text is parsed as a stream with yajl's callback parser (whole, or fed
 * in pieces: simgraph_reader_feed) straight into the compact graph: the
 * operations of a step go into the graph's pool (sim_graph_alloc, 56 bytes
 * each), ids and names are interned there (a name repeated over the
 * profiled steps is kept once), and dependencies are resolved by id at the
 * end of each step through a hash of the step's interned ids, so crafted
 * ids cannot make the reader quadratic. No document tree of the upload is
 * built: a graph of a million operations takes about 60 MB whatever the
 * size of its text. The graph is then checked (sim_graph_check: cycles,
 * values) before it is returned; nothing is returned half-built.
 *
 * The JSON accepted is the one the format was always read with (Jansson,
 * JSON_REJECT_DUPLICATES): a duplicate key of the graph's objects is
 * refused, a number must be finite, nesting is at most 16 levels. The
 * writer of the same format, the choice between reader and trace
 * converter (simgraph_read) and the nesting check are simgraph_doc.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <yajl/yajl_parse.h>

#include "ingest/simgraph.h"
#include "simulate/sim_prep.h"

#define SG_MAX_DEPTH 16
#define SG_MAX_ID 512

/* ---- what the reader keeps while it streams ---- */

enum { F_ROOT, F_OVERHEAD, F_PAIRS, F_PAIR, F_STEPS, F_STEP, F_OPS, F_OP, F_DEPS, F_SKIP };

/* The kind of a value seen for a member: absent, null, a number, an
 * integer (a number without fraction or exponent), anything else. */
enum { V_ABSENT, V_NULL, V_NUMBER, V_INT, V_OTHER, V_SHAPED /* the array or object expected */ };

typedef struct sg_frame {
    int kind;
    int key;   /* objects: the member whose value comes next (-1 unknown) */
    unsigned seen; /* objects: the known members seen (duplicates) */
    size_t count;  /* arrays: items so far */
} sg_frame;

typedef struct sg_num {
    int kind;
    double v;
} sg_num;

/* One operation being read: its members as seen, checked at its end. */
typedef struct sg_op {
    int has_id, id_bad, name_bad, res_kind; /* res_kind: V_* of "resource" */
    char *id, *name;                        /* interned */
    int res;
    sg_num duration, bytes, server;
    int deps_kind;          /* V_ABSENT, V_NULL, V_OTHER (not an array), V_SHAPED */
    long deps_bad;          /* first item of deps that is not a string, -1 none */
    size_t dfirst, ndeps;   /* its dependency names in the step's dnames */
    char unknown[64];       /* the first unknown member */
} sg_op;

typedef struct sg_pending {
    sim_op op;
    size_t dfirst;
} sg_pending;

struct simgraph_reader {
    yajl_handle h;
    simgraph_doc *doc; /* being built */
    sim_error *e;
    int failed, done;
    size_t fed;        /* bytes fed before the current piece */
    size_t root_end;   /* in the piece where the root ended: bytes consumed then */
    sg_frame stack[SG_MAX_DEPTH + 2];
    int depth;
    /* root members */
    sg_num servers, batch;
    int steps_kind;    /* V_ABSENT, V_SHAPED (an array), V_OTHER */
    int overhead_kind; /* V_ABSENT, V_NULL, V_SHAPED (an object), V_OTHER */
    int pairs_kind;    /* V_ABSENT, V_SHAPED (an array), V_OTHER */
    sg_num alpha, beta;
    double *pairs;     /* x0 y0 x1 y1 ... */
    size_t npairs, pairs_cap;
    size_t pairs_items; /* items of "pairs" */
    long pairs_bad;    /* first pair that is not [number, number], -1 none */
    size_t pair_len;   /* numbers of the pair being read */
    int pair_ok;
    /* steps */
    size_t steps_cap, total_ops;
    int step_has_ops;  /* V_SHAPED an array, V_OTHER not one, V_ABSENT */
    sg_pending *ops;   /* the step's operations so far */
    size_t nops, ops_cap;
    char **dnames;     /* the step's dependency names (interned) */
    size_t nd, dcap;
    int *slot;         /* id hash of a step */
    size_t slot_cap;
    sg_op cur;
    /* interned strings */
    char **itab;
    size_t icap, in;
    uint64_t seed;
};

static int fail(simgraph_reader *r, const char *op, int step, const char *field, const char *fmt,
                ...) __attribute__((format(printf, 5, 6)));

static int fail(simgraph_reader *r, const char *op, int step, const char *field, const char *fmt,
                ...)
{
    if (!r->failed) {
        char msg[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        sim_error_set(r->e, op, step, field, "%s", msg);
    }
    r->failed = 1;
    return 0; /* stops yajl */
}

static int nomem(simgraph_reader *r) { return fail(r, NULL, -1, "", "out of memory"); }

static int cur_step(const simgraph_reader *r) { return r->doc->graph.nsteps - 1; }

/* ---- interning: a hash set of the strings, seeded per reader ---- */

static uint64_t str_hash(uint64_t seed, const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static int intern_grow(simgraph_reader *r)
{
    size_t cap = r->icap ? 2 * r->icap : 1024;
    char **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < r->icap; i++)
        if (r->itab[i]) {
            size_t k = str_hash(r->seed, r->itab[i], strlen(r->itab[i])) & (cap - 1);
            while (t[k])
                k = (k + 1) & (cap - 1);
            t[k] = r->itab[i];
        }
    free(r->itab);
    r->itab = t;
    r->icap = cap;
    return 0;
}

/* The pooled copy of s[0..n) (kept once). A string holding a NUL byte is
 * kept up to it. NULL when out of memory. */
static char *intern(simgraph_reader *r, const char *s, size_t n)
{
    const char *z = memchr(s, 0, n);
    if (z)
        n = (size_t)(z - s);
    if (2 * (r->in + 1) > r->icap && intern_grow(r))
        return NULL;
    size_t k = str_hash(r->seed, s, n) & (r->icap - 1);
    for (; r->itab[k]; k = (k + 1) & (r->icap - 1))
        if (!strncmp(r->itab[k], s, n) && r->itab[k][n] == 0)
            return r->itab[k];
    char *p = sim_graph_alloc(&r->doc->graph, n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    r->itab[k] = p;
    r->in++;
    return p;
}

/* ---- keys ---- */

static const char *const root_keys[] = {"batch_size", "servers", "overhead", "steps", NULL};
static const char *const overhead_keys[] = {"alpha", "beta", "pairs", NULL};
static const char *const step_keys[] = {"ops", NULL};
static const char *const op_keys[] = {"id", "name", "resource", "duration", "bytes", "server",
                                      "deps", NULL};

static int key_index(const char *const *keys, const unsigned char *k, size_t n)
{
    for (int i = 0; keys[i]; i++)
        if (strlen(keys[i]) == n && !memcmp(keys[i], k, n))
            return i;
    return -1;
}

static sg_frame *top(simgraph_reader *r) { return &r->stack[r->depth - 1]; }

static int push(simgraph_reader *r, int kind)
{
    if (r->depth >= SG_MAX_DEPTH)
        return fail(r, NULL, -1, "body", "JSON nested deeper than %d levels", SG_MAX_DEPTH);
    r->stack[r->depth++] = (sg_frame){.kind = kind, .key = -1};
    return 1;
}

/* ---- operations ---- */

static void op_name(const simgraph_reader *r, char *where, size_t cap)
{
    if (r->cur.has_id && !r->cur.id_bad)
        snprintf(where, cap, "%s", r->cur.id);
    else
        snprintf(where, cap, "#%zu", r->nops);
}

static int num_ok(const sg_num *n) { return n->kind == V_NUMBER || n->kind == V_INT; }

/* The operation's members, checked in a fixed order (id, unknown members,
 * name, resource, duration, bytes, server, deps) whatever their order in the
 * text; then it joins the step. */
static int op_end(simgraph_reader *r)
{
    sg_op *o = &r->cur;
    int s = cur_step(r);
    char where[SG_MAX_ID + 8];
    op_name(r, where, sizeof where);
    if (!o->has_id || o->id_bad)
        return fail(r, where, s, "id", "each operation needs an id: a non-empty string of at "
                    "most %d bytes", SG_MAX_ID);
    if (o->unknown[0])
        return fail(r, where, s, o->unknown, "unknown member \"%.40s\"", o->unknown);
    if (o->name_bad)
        return fail(r, where, s, "name", "name must be a string");
    if (o->res < 0)
        return fail(r, where, s, "resource", "resource must be downlink, worker, uplink or ps");
    int link = sim_res_is_link(o->res);
    double duration = link ? -1 : NAN;
    if (o->duration.kind != V_ABSENT && o->duration.kind != V_NULL) {
        if (!num_ok(&o->duration) || !(o->duration.v >= 0))
            return fail(r, where, s, "duration", "duration must be a finite number of seconds "
                        ">= 0");
        duration = o->duration.v;
    }
    double bytes = -1;
    if (o->bytes.kind != V_ABSENT) {
        if (!num_ok(&o->bytes) || !(o->bytes.v > 0))
            return fail(r, where, s, "bytes", "bytes must be a positive number");
        bytes = link ? o->bytes.v : -1; /* a computation's size does not matter */
    }
    int server = -1;
    if (o->server.kind != V_ABSENT && o->server.kind != V_NULL) {
        if (o->server.kind != V_INT || o->server.v < 0 || o->server.v >= SIM_MAX_SERVERS)
            return fail(r, where, s, "server", "server must be an integer 0..%d",
                        SIM_MAX_SERVERS - 1);
        server = (int)o->server.v;
    }
    if (o->deps_kind == V_OTHER)
        return fail(r, where, s, "deps", "deps must be an array of operation ids");
    if (o->deps_bad >= 0)
        return fail(r, where, s, "deps", "deps[%ld] must be an operation id", o->deps_bad);
    if (r->nops == r->ops_cap) {
        size_t cap = r->ops_cap ? 2 * r->ops_cap : 256;
        sg_pending *p = realloc(r->ops, cap * sizeof *p);
        if (!p)
            return nomem(r);
        r->ops = p;
        r->ops_cap = cap;
    }
    sg_pending *p = &r->ops[r->nops++];
    memset(p, 0, sizeof *p);
    p->op.id = o->id;
    p->op.name = o->name ? o->name : o->id;
    p->op.res = o->res;
    p->op.duration = duration;
    p->op.bytes = bytes;
    p->op.server = server;
    p->op.ndeps = (int)o->ndeps;
    p->dfirst = o->dfirst;
    return 1;
}

static size_t ptr_hash(uint64_t seed, const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p ^ seed;
    x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ULL;
    return (size_t)(x ^ (x >> 29));
}

/* The step's operations into the pool, their deps resolved by id. */
static int step_end(simgraph_reader *r)
{
    int s = cur_step(r);
    sim_graph *g = &r->doc->graph;
    if (r->step_has_ops != V_SHAPED || !r->nops)
        return fail(r, NULL, s, "ops", "each step needs \"ops\": an array of 1 or more "
                    "operations (at most %d over all steps)", SIMGRAPH_MAX_OPS);
    size_t n = r->nops;
    sim_step *st = &g->steps[s];
    if (!(st->ops = sim_graph_alloc(g, n * sizeof *st->ops)))
        return nomem(r);
    st->nops = (int)n;
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    if (cap > r->slot_cap) {
        int *t = realloc(r->slot, cap * sizeof *t);
        if (!t)
            return nomem(r);
        r->slot = t;
        r->slot_cap = cap;
    }
    for (size_t i = 0; i < cap; i++)
        r->slot[i] = -1;
    for (size_t i = 0; i < n; i++) {
        st->ops[i] = r->ops[i].op;
        size_t k = ptr_hash(r->seed, st->ops[i].id) & (cap - 1);
        while (r->slot[k] >= 0 && st->ops[r->slot[k]].id != st->ops[i].id)
            k = (k + 1) & (cap - 1);
        if (r->slot[k] < 0)
            r->slot[k] = (int)i; /* a duplicate id is refused by the check */
    }
    for (size_t i = 0; i < n; i++) {
        sim_op *op = &st->ops[i];
        if (!op->ndeps)
            continue;
        if ((size_t)op->ndeps > n)
            return fail(r, op->id, s, "deps", "deps must be an array of operation ids");
        int *deps = sim_graph_alloc(g, (size_t)op->ndeps * sizeof *deps);
        if (!deps)
            return nomem(r);
        for (int d = 0; d < op->ndeps; d++) {
            const char *name = r->dnames[r->ops[i].dfirst + (size_t)d];
            size_t k = ptr_hash(r->seed, name) & (cap - 1);
            while (r->slot[k] >= 0 && st->ops[r->slot[k]].id != name)
                k = (k + 1) & (cap - 1);
            if (r->slot[k] < 0)
                return fail(r, op->id, s, "deps", "deps[%d] names \"%.60s\", which is not an "
                            "operation of step %d", d, name, s);
            deps[d] = r->slot[k];
        }
        op->deps = deps;
    }
    r->nops = 0;
    r->nd = 0;
    return 1;
}

/* ---- yajl callbacks ---- */

/* The frame a value goes into, after its key: returns the frame, or NULL
 * after a fault. */
static int number_of(simgraph_reader *r, const char *s, size_t n, sg_num *out)
{
    char buf[128], *t = n < sizeof buf ? buf : malloc(n + 1);
    if (!t)
        return nomem(r);
    memcpy(t, s, n);
    t[n] = 0;
    int integer = !strpbrk(t, ".eE");
    errno = 0;
    double v = strtod(t, NULL);
    int bad = !isfinite(v);
    if (integer && !bad) {
        errno = 0;
        (void)strtoll(t, NULL, 10);
        bad = errno == ERANGE;
    }
    if (bad && !r->failed) {
        size_t at = r->fed + yajl_get_bytes_consumed(r->h);
        fail(r, NULL, -1, "", "invalid JSON at byte %zu: number %.40s out of range", at, t);
        sim_error_at(r->e, (long)at);
    }
    if (t != buf)
        free(t);
    if (bad)
        return 0;
    out->kind = integer ? V_INT : V_NUMBER;
    out->v = v;
    return 1;
}

/* A scalar value (kind V_*; for numbers num, for strings str/len). */
static int scalar(simgraph_reader *r, int kind, const sg_num *num, const unsigned char *str,
                  size_t len)
{
    if (!r->depth)
        return fail(r, NULL, -1, "", "a step graph is a JSON object with \"steps\"");
    sg_frame *f = top(r);
    sg_op *o = &r->cur;
    switch (f->kind) {
    case F_ROOT:
        if (f->key == 0)
            r->batch = num ? *num : (sg_num){kind, 0};
        else if (f->key == 1)
            r->servers = num ? *num : (sg_num){kind, 0};
        else if (f->key == 2)
            r->overhead_kind = kind == V_NULL ? V_NULL : V_OTHER;
        else if (f->key == 3)
            r->steps_kind = V_OTHER;
        break;
    case F_OVERHEAD:
        if (f->key == 0)
            r->alpha = num ? *num : (sg_num){kind, 0};
        else if (f->key == 1)
            r->beta = num ? *num : (sg_num){kind, 0};
        else if (f->key == 2)
            r->pairs_kind = V_OTHER;
        break;
    case F_PAIRS:
        if (r->pairs_bad < 0)
            r->pairs_bad = (long)f->count;
        f->count++;
        break;
    case F_PAIR:
        if (!num || r->pair_len >= 2) {
            r->pair_ok = 0;
        } else {
            if (r->npairs * 2 + 2 > r->pairs_cap) {
                size_t cap = r->pairs_cap ? 2 * r->pairs_cap : 64;
                double *p = realloc(r->pairs, cap * sizeof *p);
                if (!p)
                    return nomem(r);
                r->pairs = p;
                r->pairs_cap = cap;
            }
            r->pairs[2 * r->npairs + r->pair_len] = num->v;
        }
        r->pair_len++;
        break;
    case F_STEPS:
        return fail(r, NULL, (int)f->count, "ops", "each step needs \"ops\": an array of 1 or "
                    "more operations (at most %d over all steps)", SIMGRAPH_MAX_OPS);
    case F_STEP:
        if (f->key == 0)
            r->step_has_ops = V_OTHER;
        break;
    case F_OPS: {
        char where[32];
        snprintf(where, sizeof where, "#%zu", r->nops);
        return fail(r, where, cur_step(r), "ops", "an operation must be an object");
    }
    case F_OP:
        switch (f->key) {
        case 0:
            o->has_id = 1;
            o->id_bad = !str || !len || len > SG_MAX_ID || memchr(str, 0, len);
            if (!o->id_bad && !(o->id = intern(r, (const char *)str, len)))
                return nomem(r);
            break;
        case 1:
            o->name_bad = !str;
            if (str && !(o->name = intern(r, (const char *)str, len)))
                return nomem(r);
            break;
        case 2:
            o->res_kind = kind;
            o->res = -1;
            if (str && len < 16) {
                char t[16];
                memcpy(t, str, len);
                t[len] = 0;
                o->res = sim_res_from_name(t);
            }
            break;
        case 3:
            o->duration = num ? *num : (sg_num){kind, 0};
            break;
        case 4:
            o->bytes = num ? *num : (sg_num){kind, 0};
            break;
        case 5:
            o->server = num ? *num : (sg_num){kind, 0};
            break;
        case 6:
            o->deps_kind = kind == V_NULL ? V_NULL : V_OTHER;
            break;
        }
        break;
    case F_DEPS:
        if (!str) {
            if (o->deps_bad < 0)
                o->deps_bad = (long)f->count;
        } else {
            char *name = intern(r, (const char *)str, len);
            if (!name)
                return nomem(r);
            if (r->nd == r->dcap) {
                size_t cap = r->dcap ? 2 * r->dcap : 256;
                char **d = realloc(r->dnames, cap * sizeof *d);
                if (!d)
                    return nomem(r);
                r->dnames = d;
                r->dcap = cap;
            }
            r->dnames[r->nd++] = name;
            o->ndeps++;
        }
        f->count++;
        break;
    default: /* F_SKIP */
        break;
    }
    return 1;
}

static int cb_null(void *ctx) { return scalar(ctx, V_NULL, NULL, NULL, 0); }

static int cb_bool(void *ctx, int b)
{
    (void)b;
    return scalar(ctx, V_OTHER, NULL, NULL, 0);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    simgraph_reader *r = ctx;
    sg_num v = {V_OTHER, 0};
    if (!number_of(r, s, n, &v))
        return 0;
    return scalar(r, v.kind, &v, NULL, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    return scalar(ctx, V_OTHER, NULL, s, n);
}

/* The frame that a container (is_map: an object, else an array) opens as
 * the value frame f expects next: its kind (F_SKIP: one read past), or -1
 * when f expects no container of that shape there; the container is then
 * a value of the wrong kind, as a scalar would be. */
static int opened(simgraph_reader *r, sg_frame *f, int is_map)
{
    switch (f->kind) {
    case F_ROOT:
        if (f->key == 2 && is_map) {
            r->overhead_kind = V_SHAPED;
            return F_OVERHEAD;
        }
        if (f->key == 3 && !is_map) {
            r->steps_kind = V_SHAPED;
            return F_STEPS;
        }
        return -1;
    case F_OVERHEAD:
        if (f->key == 2 && !is_map) {
            r->pairs_kind = V_SHAPED;
            return F_PAIRS;
        }
        return -1;
    case F_PAIRS:
        if (is_map)
            return -1;
        if (f->count++ >= SIMGRAPH_MAX_PAIRS) /* more are refused at the end */
            return F_SKIP;
        r->pair_len = 0;
        r->pair_ok = 1;
        return F_PAIR;
    case F_STEPS: {
        sim_graph *g = &r->doc->graph;
        if (!is_map)
            return -1;
        if (f->count >= SIMGRAPH_MAX_STEPS)
            return fail(r, NULL, -1, "steps", "steps must be an array of 1..%d steps",
                        SIMGRAPH_MAX_STEPS);
        if ((size_t)g->nsteps == r->steps_cap) {
            size_t cap = r->steps_cap ? 2 * r->steps_cap : 64;
            sim_step *st = realloc(g->steps, cap * sizeof *st);
            if (!st)
                return nomem(r);
            g->steps = st;
            r->steps_cap = cap;
        }
        g->steps[g->nsteps++] = (sim_step){0, NULL};
        f->count++;
        r->step_has_ops = 0;
        r->nops = r->nd = 0;
        return F_STEP;
    }
    case F_STEP:
        if (f->key == 0 && !is_map) {
            r->step_has_ops = V_SHAPED;
            return F_OPS;
        }
        return -1;
    case F_OPS:
        if (!is_map)
            return -1;
        if (++r->total_ops > SIMGRAPH_MAX_OPS)
            return fail(r, NULL, cur_step(r), "ops", "each step needs \"ops\": an array of 1 or "
                        "more operations (at most %d over all steps)", SIMGRAPH_MAX_OPS);
        memset(&r->cur, 0, sizeof r->cur);
        r->cur.res = -1;
        r->cur.deps_bad = -1;
        return F_OP;
    case F_OP:
        if (f->key == 6 && !is_map) {
            r->cur.deps_kind = V_SHAPED;
            r->cur.dfirst = r->nd;
            return F_DEPS;
        }
        return -1;
    default: /* F_PAIR, F_DEPS, F_SKIP */
        return -1;
    }
}

/* The start of an object or an array: the frame it opens, or a value of
 * the wrong kind where something else was expected (an object at the top
 * is the root). */
static int start(simgraph_reader *r, int is_map)
{
    int kind = r->depth ? opened(r, top(r), is_map) : is_map ? F_ROOT : -1;
    if (kind == -1) {
        scalar(r, V_OTHER, NULL, NULL, 0);
        kind = F_SKIP;
    }
    return r->failed ? 0 : push(r, kind);
}

static int cb_start_map(void *ctx) { return start(ctx, 1); }

static int cb_start_array(void *ctx) { return start(ctx, 0); }

static int cb_key(void *ctx, const unsigned char *k, size_t n)
{
    simgraph_reader *r = ctx;
    sg_frame *f = top(r);
    const char *const *keys = f->kind == F_ROOT       ? root_keys
                              : f->kind == F_OVERHEAD ? overhead_keys
                              : f->kind == F_STEP     ? step_keys
                              : f->kind == F_OP       ? op_keys
                                                      : NULL;
    f->key = keys ? key_index(keys, k, n) : -1;
    if (f->key >= 0) {
        if (f->seen & (1u << f->key))
            return fail(r, NULL, f->kind == F_OP || f->kind == F_STEP ? cur_step(r) : -1,
                        keys[f->key], "invalid JSON at byte %zu: duplicate object key \"%s\"",
                        r->fed + yajl_get_bytes_consumed(r->h), keys[f->key]);
        f->seen |= 1u << f->key;
    } else if (f->kind == F_OP && !r->cur.unknown[0]) {
        snprintf(r->cur.unknown, sizeof r->cur.unknown, "%.*s", (int)(n < 63 ? n : 63),
                 (const char *)k);
        if (!r->cur.unknown[0])
            snprintf(r->cur.unknown, sizeof r->cur.unknown, "\"\"");
    }
    return 1;
}

static int cb_end(void *ctx)
{
    simgraph_reader *r = ctx;
    sg_frame f = *top(r);
    r->depth--;
    switch (f.kind) {
    case F_ROOT:
        r->done = 1;
        r->root_end = yajl_get_bytes_consumed(r->h);
        break;
    case F_PAIRS:
        r->pairs_items = f.count;
        break;
    case F_PAIR:
        if (r->pair_len != 2 || !r->pair_ok) {
            if (r->pairs_bad < 0)
                r->pairs_bad = (long)r->stack[r->depth - 1].count - 1;
        } else {
            r->npairs++;
        }
        break;
    case F_STEP:
        return step_end(r);
    case F_OP:
        return op_end(r);
    }
    return 1;
}

static const yajl_callbacks sg_callbacks = {
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

/* ---- the document's own members, checked once it is complete ---- */

static int read_overhead(simgraph_reader *r)
{
    simgraph_doc *out = r->doc;
    if (r->overhead_kind == V_ABSENT || r->overhead_kind == V_NULL)
        return 0;
    if (r->overhead_kind != V_SHAPED)
        return fail(r, NULL, -1, "overhead", "overhead must be an object"), -1;
    if (r->pairs_kind != V_ABSENT) {
        size_t n = r->npairs;
        if (r->pairs_kind != V_SHAPED || r->pairs_items < 2 || r->pairs_items > SIMGRAPH_MAX_PAIRS)
            return fail(r, NULL, -1, "overhead.pairs", "pairs must be 2..%d [bytes, seconds] "
                        "arrays", SIMGRAPH_MAX_PAIRS), -1;
        if (r->pairs_bad >= 0)
            return fail(r, NULL, -1, "overhead.pairs", "pairs[%ld] must be [bytes, seconds]",
                        r->pairs_bad), -1;
        double *x = malloc(2 * n * sizeof *x), *y = x + n;
        if (!x)
            return nomem(r), -1;
        for (size_t i = 0; i < n; i++) {
            x[i] = r->pairs[2 * i];
            y[i] = r->pairs[2 * i + 1];
        }
        int rc = sim_fit_overhead(x, y, (int)n, &out->alpha, &out->beta, r->e);
        free(x);
        if (rc) {
            snprintf(r->e->field, sizeof r->e->field, "overhead.pairs");
            r->failed = 1;
            return -1;
        }
        /* a fitted line may cross zero at small sizes; the model needs >= 0 */
        if (out->alpha < 0)
            out->alpha = 0;
        if (out->beta < 0)
            out->beta = 0;
        out->npairs = (int)n;
        out->has_overhead = 1;
        return 0;
    }
    if (r->alpha.kind == V_OTHER || !(r->alpha.v >= 0) || !isfinite(r->alpha.v))
        return fail(r, NULL, -1, "overhead.alpha", "alpha must be a number >= 0 (s per byte)"), -1;
    if (r->beta.kind == V_OTHER || !(r->beta.v >= 0) || !isfinite(r->beta.v))
        return fail(r, NULL, -1, "overhead.beta", "beta must be a number >= 0 (s)"), -1;
    out->alpha = r->alpha.v;
    out->beta = r->beta.v;
    out->has_overhead = 1;
    return 0;
}

static int read_root(simgraph_reader *r)
{
    sim_graph *g = &r->doc->graph;
    double servers = r->servers.kind == V_ABSENT || r->servers.kind == V_NULL ? 1 : r->servers.v;
    if (r->servers.kind == V_OTHER || servers != floor(servers) || servers < 1 ||
        servers > SIM_MAX_SERVERS)
        return fail(r, NULL, -1, "servers", "servers must be an integer 1..%d", SIM_MAX_SERVERS),
               -1;
    double batch = r->batch.kind == V_ABSENT || r->batch.kind == V_NULL ? 0 : r->batch.v;
    if (r->batch.kind == V_OTHER || !(batch >= 0) || !isfinite(batch))
        return fail(r, NULL, -1, "batch_size", "batch_size must be a number >= 0"), -1;
    g->servers = (int)servers;
    g->batch_size = batch;
    if (read_overhead(r))
        return -1;
    if (r->steps_kind != V_SHAPED || g->nsteps < 1)
        return fail(r, NULL, -1, "steps", "steps must be an array of 1..%d steps",
                    SIMGRAPH_MAX_STEPS), -1;
    if (sim_graph_check(g, r->e)) {
        r->failed = 1;
        return -1;
    }
    return 0;
}

/* ---- the reader ---- */

simgraph_reader *simgraph_reader_new(simgraph_doc *out, sim_error *e)
{
    memset(out, 0, sizeof *out);
    out->source = "stepgraph";
    simgraph_reader *r = calloc(1, sizeof *r);
    if (!r) {
        sim_error_set(e, NULL, -1, "", "out of memory");
        return NULL;
    }
    r->doc = out;
    r->e = e;
    r->pairs_bad = -1;
    if (getrandom(&r->seed, sizeof r->seed, GRND_NONBLOCK) != (ssize_t)sizeof r->seed)
        r->seed = (uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ULL;
    if (!(r->h = yajl_alloc(&sg_callbacks, NULL, r))) {
        free(r);
        sim_error_set(e, NULL, -1, "", "out of memory");
        return NULL;
    }
    return r;
}

/* yajl's own refusal, at the byte where it stopped. */
static void syntax(simgraph_reader *r, const unsigned char *buf, size_t len)
{
    unsigned char *m = yajl_get_error(r->h, 0, buf, len);
    char text[200];
    snprintf(text, sizeof text, "%s", m ? (const char *)m : "invalid JSON");
    text[strcspn(text, "\r\n")] = 0;
    size_t at = r->fed + (buf ? yajl_get_bytes_consumed(r->h) : 0);
    sim_error_set(r->e, NULL, -1, "", "invalid JSON at byte %zu: %s", at, text);
    sim_error_at(r->e, (long)at);
    r->failed = 1;
    if (m)
        yajl_free_error(r->h, m);
}

/* After the root: only white space. */
static int trailing(simgraph_reader *r, const char *buf, size_t len, size_t from)
{
    for (size_t i = from; i < len; i++)
        if (!strchr(" \t\r\n", buf[i]) || !buf[i]) {
            sim_error_set(r->e, NULL, -1, "", "invalid JSON at byte %zu: end of file expected",
                          r->fed + i);
            sim_error_at(r->e, (long)(r->fed + i));
            r->failed = 1;
            return -1;
        }
    return 0;
}

int simgraph_reader_feed(simgraph_reader *r, const char *buf, size_t len)
{
    if (r->failed)
        return -1;
    if (r->done)
        return trailing(r, buf, len, 0) ? -1 : (r->fed += len, 0);
    yajl_status s = yajl_parse(r->h, (const unsigned char *)buf, len);
    if (s != yajl_status_ok) {
        if (!r->failed)
            syntax(r, (const unsigned char *)buf, len);
        return -1;
    }
    if (r->done && trailing(r, buf, len, r->root_end))
        return -1;
    r->fed += len;
    return 0;
}

int simgraph_reader_finish(simgraph_reader *r)
{
    if (r->failed)
        return -1;
    yajl_status s = yajl_complete_parse(r->h);
    if (s != yajl_status_ok) {
        if (!r->failed)
            syntax(r, NULL, 0);
        return -1;
    }
    if (!r->done) {
        sim_error_set(r->e, NULL, -1, "", "invalid JSON at byte %zu: premature end of input",
                      r->fed);
        sim_error_at(r->e, (long)r->fed);
        r->failed = 1;
        return -1;
    }
    return read_root(r);
}

void simgraph_reader_free(simgraph_reader *r)
{
    if (!r)
        return;
    if (r->failed)
        simgraph_doc_free(r->doc);
    yajl_free(r->h);
    free(r->pairs);
    free(r->ops);
    free(r->dnames);
    free(r->slot);
    free(r->itab);
    free(r);
}

/* The end of a read: the reader finished after rc == 0, freed with the
 * document it built when anything failed. rc, or the finish's -1. */
static int reader_end(simgraph_reader *r, int rc)
{
    if (!rc)
        rc = simgraph_reader_finish(r);
    if (rc)
        r->failed = 1;
    simgraph_reader_free(r);
    return rc;
}

int simgraph_read_json_pieces(const char *buf, size_t len, simgraph_doc *out, sim_error *e,
                              void (*done)(void *arg, size_t upto), void *arg)
{
    simgraph_reader *r = simgraph_reader_new(out, e);
    if (!r)
        return -1;
    int rc = 0;
    for (size_t at = 0; !rc && at < len;) {
        size_t n = len - at < SIMGRAPH_PIECE ? len - at : SIMGRAPH_PIECE;
        rc = simgraph_reader_feed(r, buf + at, n);
        at += n;
        if (done)
            done(arg, at);
    }
    return reader_end(r, rc);
}

int simgraph_read_json(const char *buf, size_t len, simgraph_doc *out, sim_error *e)
{
    if (simgraph_check_depth(buf, len, SG_MAX_DEPTH)) {
        memset(out, 0, sizeof *out);
        sim_error_set(e, NULL, -1, "body", "JSON nested deeper than %d levels", SG_MAX_DEPTH);
        return -1;
    }
    simgraph_reader *r = simgraph_reader_new(out, e);
    if (!r)
        return -1;
    int rc = simgraph_reader_feed(r, buf, len);
    return reader_end(r, rc);
}
