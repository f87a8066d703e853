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
 *
 * The reader is three files around one state (profile_json_internal.h):
 * this one walks the document (yajl's callbacks, each value checked at its
 * place in the format), profile_json_check.c checks the bytes and words the
 * faults, profile_json_rows.c turns what was read into the profile.
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
    const char *why = pj_name_fault(r->key, r->key_len);
    pj_path_key(path, sizeof(path), "point", r->key);
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
    const char *why = pj_name_fault(r->key, r->key_len);
    pj_path_key(path, sizeof(path), "levels", r->key);
    if (why)
        pj_refuse(r, k, 3, "%s: %s", path, why);
    else if (v->type != PJ_V_STR)
        pj_refuse(r, k, 3, "%s: expected a string", path);
    else if ((why = pj_name_fault(v->s, v->n)))
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
        pj_refuse_at(r, k, pj_key_rank(r, k), 0, path, "expected an object");
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
    int n = pj_key_rank(r, k);
    if (member == PJ_M_RANK) {
        if (int_value(v, 0, &r->rank) == 0) {
            r->has_rank = 1;
            return 0;
        }
        snprintf(path, sizeof(path), "ranks[%zu].rank", r->rank_i);
        pj_refuse_at(r, k, n, 2, path, "expected an integer >= 0");
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
    pj_refuse_at(r, k, n + 1, 0, path, "expected an array");
    return 0;
}

static int in_steps(pj_reader *r, const pj_value *v, size_t j, int *push)
{
    char path[PJ_PATH];
    r->step_i = j;
    if (v->type != PJ_V_OBJ) {
        size_t k[PJ_KEY];
        pj_step_path(r, path, sizeof(path));
        pj_refuse_at(r, k, pj_key_step(r, k), 0, path, "expected an object");
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
    int n = pj_key_step(r, k);
    memcpy(k + n, last, (size_t)nlast * sizeof(*k));
    pj_step_path(r, path, sizeof(path));
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
        pj_cp_path(r, path, sizeof(path));
        pj_refuse_at(r, k, pj_key_cp(r, k), 0, path, "expected an object");
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
    int n = pj_key_cp(r, k);
    memcpy(k + n, last, (size_t)nlast * sizeof(*k));
    pj_cp_path(r, path, sizeof(path));
    pj_refuse(r, k, n + nlast, "%s%s: %s", path, sub, what);
}

static int in_callpath(pj_reader *r, const pj_value *v, int member, int *push)
{
    const char *why;
    switch (member) {
    case PJ_M_NAME:
        if (v->type != PJ_V_STR)
            refuse_cp(r, (size_t[]){2}, 1, ".name", "expected a string");
        else if ((why = pj_name_fault(v->s, v->n)))
            refuse_cp(r, (size_t[]){2}, 1, ".name", why);
        else if (!r->bad && pj_callpath_name(r, v->s, v->n) < 0)
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
    int n = pj_key_cp(r, k);
    k[n] = 4, k[n + 1] = 1, k[n + 2] = m;
    const char *why = pj_name_fault(r->key, r->key_len);
    int nonneg = pj_nonnegative_metric(r->key);
    if (why || v->type != PJ_V_NUM || (nonneg && v->num.d < 0)) {
        pj_cp_path(r, path, sizeof(path));
        pj_metric_path(mpath, sizeof(mpath), path, r->key);
        if (why)
            pj_refuse(r, k, n + 3, "%s: %s", mpath, why);
        else
            pj_refuse(r, k, n + 3, "%s: expected a finite number%s", mpath,
                      nonneg ? " >= 0" : "");
    }
    if (r->bad)
        return 0;
    uint32_t name;
    if (pj_metric_name(r, r->key, r->key_len, &name) < 0 ||
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
        pj_refuse(r, (size_t[]){1}, 1, "unknown member \"%.*s\"", pj_shown(r->key), r->key);
        return;
    case PJ_RANK:
        n = pj_key_rank(r, k);
        snprintf(path, sizeof(path), "ranks[%zu]", r->rank_i);
        break;
    case PJ_STEP:
        n = pj_key_step(r, k);
        pj_step_path(r, path, sizeof(path));
        break;
    default:
        n = pj_key_cp(r, k);
        pj_cp_path(r, path, sizeof(path));
        break;
    }
    k[n] = 1;
    pj_refuse(r, k, n + 1, "%s: unknown member \"%.*s\"", path, pj_shown(r->key), r->key);
}

static int cb_key(void *ctx, const unsigned char *key, size_t n)
{
    pj_reader *r = ctx;
    const char *s = (const char *)key;
    pj_frame *f = &r->frame[r->depth - 1];
    f->count++;
    if (!pj_check_string(r))
        return 0;
    if (grow_array((void **)&r->key, &r->key_cap, n + 1, 1) < 0)
        return pj_stop_nomem(r);
    memcpy(r->key, s, n);
    r->key[n] = '\0';
    r->key_len = n;
    int m = known_member(r, f->kind, s, n);
    if (m >= 0 && (f->seen & 1u << m))
        return pj_syntax(r, pj_here(r), "duplicate object key near '\"%.*s\"'", pj_shown(r->key),
                         r->key);
    if (m >= 0) {
        f->seen |= 1u << m;
        f->member = m;
        return 1;
    }
    int dup = pj_keyset_add(&f->keys, r->seed, s, n);
    if (dup < 0)
        return pj_stop_nomem(r);
    if (dup)
        return pj_syntax(r, pj_here(r), "duplicate object key near '\"%.*s\"'", pj_shown(r->key),
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
        pj_refuse_at(r, k, pj_key_rank(r, k), 2, path, "missing");
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
        int n = pj_key_step(r, k);
        k[n] = 3;
        pj_step_path(r, path, sizeof(path));
        pj_refuse_at(r, k, n + 1, 0, strcat(path, ".callpaths"), "missing");
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
    int n = pj_key_cp(r, k);
    for (int m = 0; m < 3; m++)
        if (!(f->seen & 1u << (PJ_M_NAME + m))) {
            pj_cp_path(r, path, sizeof(path));
            pj_refuse_at(r, k, n, (size_t)(2 + m), strcat(path, sub[m]), "missing");
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
            int n = pj_key_cp(r, k);
            k[n] = 4;
            pj_cp_path(r, path, sizeof(path));
            pj_refuse_at(r, k, n + 1, 0, strcat(path, ".metrics"), "expected at least one metric");
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
    pj_keyset_reset(&f->keys);
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
    if (!pj_lex_number(ctx, s, n, &v.num))
        return 0;
    return scalar(ctx, &v);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    if (!pj_check_string(ctx))
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
    if (pj_check_depth(r, r->buf, r->len) < 0)
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
        pj_keyset_free(&r->frame[i].keys);
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
    if (rc == 0 && (pj_check_unique_ranks(&r, r.ranks, r.nranks) < 0 ||
                    pj_intern_callpaths(&r, out) < 0 || pj_intern_metrics(&r, out) < 0 ||
                    pj_build_rows(&r, out) < 0))
        rc = -1;
    reader_free(&r);
    if (rc < 0) {
        profile_free(out);
        pj_sanitize(err->msg);
    }
    return rc;
}
