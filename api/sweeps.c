/*
 * sweeps.c — how trustworthy the measurements are and what to measure
 * (paper 003 §2.1, §3.1), over the pure sweep/ module:
 *
 *   GET  /v1/experiments/{id}/statistics   repetition statistics of every
 *        measurement of the newest model set (coordinate × callpath ×
 *        metric × phase): n, mean, median, SD, CV, 95% intervals of the
 *        mean (Student t) and of the median (order statistics), IQR
 *        outliers, the repetitions needed for a relative half-width
 *        (`target`, default 0.05); coded `warnings` (analysis/repstats.h)
 *        name the points whose mean's interval is wider than that, and those
 *        with one repetition.
 *   GET  /v1/experiments/{id}/sensitivity  Taguchi S/N ratio per measured
 *        coordinate of one series (default the application's epoch time,
 *        smaller is better), the mean S/N per level of every parameter, the
 *        range and the normalised ranking.
 *   GET  /v1/experiments/{id}/efficiency   scaling efficiency SE_N =
 *        t_baseline / t_N along one parameter, per combination of the other
 *        parameters' values, from the repetitions (sweep_efficiency.h).
 *   POST /v1/experiments/{id}/sweep/plan   a sweep definition
 *        (sweep/sweep_plan.h) against the uploads: every legal point ×
 *        repetition with its status (measured, missing, failed: its upload's
 *        refit failed), the commands of what still has to run, and the
 *        core-hours of that part by the current models (predicted epoch time
 *        × ranks × cores_per_rank / 3600 × epochs_per_run per run).
 *
 * Statistics and sensitivity answer 10,000 coordinates at a time: they keep
 * the rows they read (statistics also each item's text up to its
 * target-dependent end) per model set and filter in the model cache's
 * blobs, a model set never changing, and write their bulk straight to text
 * (api/json_buf.h), byte for byte what a Jansson tree would print.
 *
 * This file answers statistics and holds what the four share
 * (sweeps_internal.h); sensitivity.c, efficiency.c and sweep_plan.c answer
 * the others.
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/json_buf.h"
#include "analysis/repstats.h"
#include "api/predict.h"
#include "api/stats_warm.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"
#include "sweep/sweep_stats.h"
#include "api/sweeps_internal.h"
#include "common/jsonb.h"


json_t *sweeps_interval(double lo, double hi)
{
    return json_pack("[o, o]", predict_number(lo), predict_number(hi));
}

/* Reads the newest set's measurements through f; NULL after answering. */
store_measurement_row *sweeps_read_rows(api_ctx *ctx, const cached_models *m,
                                        const store_model_filter *f, int *n,
                                        api_response *resp)
{
    store_error err = {0};
    store_measurement_row *rows = NULL;
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_repetitions_read(c, m->set_id, f, &rows, n, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        return NULL;
    }
    store_release(ctx->db, c);
    if (!rows) /* nothing matched: an empty answer, not an error */
        rows = calloc(1, sizeof *rows);
    if (!rows)
        api_problem(resp, 500, NULL, "out of memory");
    return rows;
}

static int matches(const char *want, const char *have)
{
    return !want || (have && !strcmp(want, have));
}

/* Whether f asks for a part of the application-level epoch rows the set's
 * load read whole (model_cache_epoch_rows): its level is application, its
 * name epoch, its levels the models' own. Such rows are kept whole, every
 * page of the filter, and each answer takes its page of them. */
static int epoch_filter(const cached_models *m, const store_model_filter *f)
{
    return m->epoch_rows >= 0 && f->level && !strcmp(f->level, "application") && f->name &&
           !strcmp(f->name, "epoch") && !strcmp(f->levels ? f->levels : "", m->levels);
}

/* The rows of f (an epoch_filter(), unpaged) from the set's kept epoch rows:
 * the same rows in the same order as the query would give (filtering keeps
 * the order), their fields those of the kept rows. 1 with *out (malloc'ed,
 * at least one element) and *source, the blob of the kept rows, referenced
 * for as long as *out is used; 0 when those rows are no longer kept, -1
 * when out of memory. */
static int rows_from_epoch(api_ctx *ctx, const cached_models *m, const store_model_filter *f,
                           store_measurement_row **out, int *n, const cache_blob **source)
{
    const cache_blob *b = model_cache_epoch_rows(ctx->models, m);
    if (!b)
        return 0;
    const model_cache_rows *kept = b->data;
    store_measurement_row *v = malloc(sizeof *v * (size_t)(kept->n ? kept->n : 1));
    if (!v) {
        model_cache_blob_release(ctx->models, b);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < kept->n; i++) {
        const store_measurement_row *r = &kept->rows[i];
        if (matches(f->metric, r->metric) && matches(f->category, r->category) &&
            matches(f->phase, r->phase))
            v[k++] = *r;
    }
    *out = v;
    *n = k;
    *source = b;
    return 1;
}
static void kept_rowset_free(void *p)
{
    kept_rowset *s = p;
    if (s->borrowed)
        free(s->rows);
    else
        store_measurement_rows_free(s->rows, s->n);
    free(s->text);
    free(s->at);
    free(s);
}

/* about what a kept_rowset holds, for the cache's byte budget */
static size_t kept_rowset_bytes(const kept_rowset *s)
{
    size_t text = s->at ? s->at[s->n] + (size_t)(s->n + 1) * sizeof(size_t) : 0;
    size_t fields = s->borrowed ? 0 : 64; /* borrowed: the epoch rows' blob counts them */
    return sizeof *s + (size_t)s->n * (sizeof(store_measurement_row) + fields) + text;
}

static int stats_heads(const cached_models *m, kept_rowset *set);

void sweeps_kept_rows_release(api_ctx *ctx, kept_rows *k)
{
    free(k->rows);
    if (k->blob)
        model_cache_blob_release(ctx->models, k->blob);
    if (k->own)
        kept_rowset_free(k->own);
    model_cache_blob_release(ctx->models, k->source);
    memset(k, 0, sizeof *k);
}

/* the blob key of a filter; "" when too long to keep (free text is
 * length-prefixed so that no two filters share a key) */
static void kept_rows_key(const cached_models *m, const store_model_filter *f, int with_text,
                          char *key, size_t cap)
{
#define KEPT_TEXT(s) (s) ? strlen(s) : 0, (s) ? (s) : "-"
    int n = snprintf(key, cap, "%s|%" PRId64 "|%zu:%s|%s|%s|%s|%zu:%s|%ld|%d|%zu:%s",
                     with_text ? "stxt" : "reps", m->set_id,
                     KEPT_TEXT(f->metric), f->level ? f->level : "-",
                     f->category ? f->category : "-", f->phase ? f->phase : "-",
                     KEPT_TEXT(f->name), f->offset, f->limit, KEPT_TEXT(f->levels));
#undef KEPT_TEXT
    if (n < 0 || (size_t)n >= cap)
        key[0] = '\0';
}

/* sweeps_read_rows() through the blob cache (with_text: and the rows' statistics
 * items but for their target-dependent end, stats_heads()); -1 after
 * answering */
int sweeps_read_rows_kept(api_ctx *ctx, const cached_models *m, const store_model_filter *f,
                          int with_text, kept_rows *k, api_response *resp)
{
    char key[sizeof ((cache_blob *)0)->key];
    memset(k, 0, sizeof *k);
    int whole = epoch_filter(m, f);
    store_model_filter unpaged = *f;
    if (whole) {
        unpaged.offset = 0;
        unpaged.limit = INT_MAX;
    }
    kept_rows_key(m, &unpaged, with_text, key, sizeof key);
    const kept_rowset *set = NULL;
    if (key[0] && (k->blob = model_cache_blob_get(ctx->models, key)))
        set = k->blob->data;
    if (!set) {
        kept_rowset *fresh = calloc(1, sizeof *fresh);
        if (!fresh) {
            api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
        const cache_blob *source = NULL;
        int from = whole ? rows_from_epoch(ctx, m, &unpaged, &fresh->rows, &fresh->n, &source) : 0;
        fresh->borrowed = from > 0;
        if (from < 0)
            api_problem(resp, 500, NULL, "out of memory");
        if (from < 0 || (!from && !(fresh->rows = sweeps_read_rows(ctx, m, &unpaged, &fresh->n, resp)))) {
            free(fresh);
            return -1;
        }
        if (with_text && stats_heads(m, fresh) < 0) {
            kept_rowset_free(fresh);
            model_cache_blob_release(ctx->models, source);
            api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
        if (with_text && fresh->at[fresh->n] > KEPT_TEXT_MAX)
            key[0] = '\0'; /* too large to hold on to: for this answer alone */
        if (!key[0]) {
            set = k->own = fresh;
            k->source = source; /* released with the answer */
        } else {
            /* fresh (or rows another request kept first) holds the epoch rows it borrows */
            k->blob = model_cache_blob_put_holding(ctx->models, key, fresh, kept_rowset_bytes(fresh),
                                                   kept_rowset_free, source);
            model_cache_blob_release(ctx->models, source);
            if (!k->blob) { /* out of memory: fresh was freed */
                api_problem(resp, 500, NULL, "out of memory");
                return -1;
            }
            set = k->blob->data;
        }
    }
    /* the page asked for (all there is when the rows were read by page) */
    long start = whole ? (f->offset < set->n ? f->offset : set->n) : 0;
    long count = whole ? (set->n - start < f->limit ? set->n - start : f->limit) : set->n;
    k->n = (int)count;
    k->text = set->text;
    k->at = set->at ? set->at + start : NULL;
    k->rows = malloc(sizeof *k->rows * (size_t)(count ? count : 1));
    if (!k->rows) {
        sweeps_kept_rows_release(ctx, k);
        api_problem(resp, 500, NULL, "out of memory");
        return -1;
    }
    if (count)
        memcpy(k->rows, set->rows + start, sizeof *k->rows * (size_t)count);
    return 0;
}

/* ---- warming (api/stats_warm.h) ------------------------------------------------ */

#define WARM_WAIT_MS 10000 /* a request waits for a warm under way at most this long */
#define WARM_SEP '\x1f'   /* between query parameters in a note */
#define WARM_EQ '\x1e'    /* between a parameter's name and value */
#define WARM_QUERY_MAX 16

static void statistics_answer(api_ctx *ctx, api_request *req, api_response *resp);
void sweeps_sensitivity_answer(api_ctx *ctx, api_request *req, api_response *resp);

/* Remembers a request whose rows were kept (k), for the experiment's next
 * model set: its kind ('S' statistics, 'R' sensitivity) and its query
 * parameters as given; not for level combinations, nor for rows larger
 * than an eighth of the blob budget, nor queries holding the separators. */
void sweeps_warm_note(api_ctx *ctx, const api_request *req, const cached_models *m, char kind,
                      const kept_rows *k)
{
    char what[MODEL_CACHE_WARM_TEXT];
    if (!k->blob || k->blob->bytes > MODEL_CACHE_BLOB_BUDGET / 8 || m->levels[0] ||
        m->factors_spec[0] || req->nquery > WARM_QUERY_MAX)
        return;
    size_t n = 0;
    what[n++] = kind;
    for (size_t q = 0; q < req->nquery; q++) {
        const char *name = req->query[q].name, *value = req->query[q].value;
        value = value ? value : "";
        if (strchr(name, WARM_SEP) || strchr(name, WARM_EQ) || strchr(value, WARM_SEP) ||
            strchr(value, WARM_EQ))
            return;
        int len = snprintf(what + n, sizeof what - n, "%c%s%c%s", WARM_SEP, name, WARM_EQ, value);
        if (len < 0 || (size_t)len >= sizeof what - n)
            return;
        n += (size_t)len;
    }
    model_cache_warm_note(ctx->models, m->experiment, what);
}

/* the experiment's id from the path, after waiting for a warm of it under
 * way; -1 after answering */
int sweeps_warm_wait(api_ctx *ctx, const api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0)
        return -1;
    model_cache_warm_wait(ctx->models, id, WARM_WAIT_MS);
    return 0;
}

/* Asks a noted request again (text: a note, cut up in place) of the
 * experiment's newest set, as the router would have passed it: its rows
 * and its answer are then kept. */
static void warm_replay(api_ctx *ctx, int64_t experiment, char *text)
{
    api_kv query[WARM_QUERY_MAX];
    size_t nq = 0;
    char kind = text[0];
    for (char *p = strchr(text, WARM_SEP); p && nq < WARM_QUERY_MAX; p = strchr(p, WARM_SEP)) {
        *p++ = '\0';
        char *eq = strchr(p, WARM_EQ);
        if (!eq)
            return;
        *eq = '\0';
        query[nq].name = p;
        query[nq++].value = eq + 1;
        p = eq + 1;
    }
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.route = kind == 'S' ? "/v1/experiments/{id}/statistics" : "/v1/experiments/{id}/sensitivity";
    req.path = req.route; /* not looked at: the route names the answer's page */
    req.query = query;
    req.nquery = nq;
    snprintf(req.param_buf, sizeof req.param_buf, "%" PRId64, experiment);
    req.params[0] = (api_kv){"id", req.param_buf};
    req.nparams = 1;
    api_response resp;
    memset(&resp, 0, sizeof resp);
    if (kind == 'S')
        statistics_answer(ctx, &req, &resp);
    else if (kind == 'R')
        sweeps_sensitivity_answer(ctx, &req, &resp);
    api_response_free(&resp);
}

void api_statistics_warm(api_ctx *ctx, int64_t experiment)
{
    char(*what)[MODEL_CACHE_WARM_TEXT] = malloc(sizeof *what * STATS_WARM_PER_EXPERIMENT);
    int n = what ? model_cache_warm_list(ctx->models, experiment, what,
                                         STATS_WARM_PER_EXPERIMENT)
                 : 0;
    if (what && n == 0) { /* never asked: what is asked first, the epoch times */
        snprintf(what[n++], sizeof what[0], "S%clevel%capplication%cname%cepoch", WARM_SEP,
                 WARM_EQ, WARM_SEP, WARM_EQ);
        snprintf(what[n++], sizeof what[0], "R");
    }
    int64_t done = 0;
    /* twice at most: a load that overlapped a drop (a job seen done
     * meanwhile) is not kept, so the models are asked for again */
    for (int round = 0; round < 2 && n > 0; round++) {
        store_error err = {0};
        const cached_models *m = model_cache_get(ctx->models, ctx->db, experiment, &err);
        if (!m)
            break;
        int again = m->set_id != done;
        done = m->set_id;
        model_cache_release(ctx->models, m);
        if (!again)
            break;
        for (int i = 0; i < n; i++) {
            char text[MODEL_CACHE_WARM_TEXT];
            memcpy(text, what[i], sizeof text);
            warm_replay(ctx, experiment, text);
            /* the most recent request's rows are kept (and with them those
             * of every request with its filter): waiting requests go on */
            if (i == 0)
                model_cache_warm_end(ctx->models, experiment);
        }
    }
    free(what);
}

int sweeps_filter_from_query(const api_request *req, api_response *resp, store_model_filter *f)
{
    static const char *const levels[] = {"callpath", "application", NULL};
    static const char *const phases[] = {"train", "validation", "between", "epoch", NULL};
    static const char *const cats[] = {"comp", "comm", "mem", "host", NULL};
    struct {
        const char *name;
        const char *const *allowed;
        const char **out;
    } fs[] = {{"level", levels, &f->level}, {"phase", phases, &f->phase},
              {"category", cats, &f->category}, {"metric", NULL, &f->metric},
              {"name", NULL, &f->name}};
    for (size_t i = 0; i < sizeof fs / sizeof *fs; i++) {
        const char *v = api_query(req, fs[i].name);
        if (!v)
            continue;
        int ok = !fs[i].allowed;
        for (int k = 0; fs[i].allowed && fs[i].allowed[k]; k++)
            ok |= !strcmp(fs[i].allowed[k], v);
        if (!ok) {
            api_problem(resp, 400, fs[i].name, "unknown value \"%.40s\"", v);
            return -1;
        }
        *fs[i].out = v;
    }
    return 0;
}

/* "ranks=8 epoch time (phase epoch)", with its levels when the experiment
 * has factors (noisy.h) */
void sweeps_row_label(const cached_models *m, const store_measurement_row *r, char *buf,
                      size_t cap)
{
    noisy_names nm = {m->params, m->nparams, m->factors, m->nfactors};
    noisy_point_label(&nm, r, buf, cap);
}

/* ---- the large answers, written without a Jansson tree ---------------------------- */

/* {"ranks":8,...}, as predict_point_json() */
void sweeps_point_text(jbuf *b, const cached_models *m, const double *point)
{
    JBUF_LIT(b, "{");
    for (int i = 0; i < m->nparams; i++) {
        if (i)
            JBUF_LIT(b, ",");
        jbuf_key(b, m->params[i]);
        jbuf_real(b, point[i]);
    }
    JBUF_LIT(b, "}");
}

/* [lo,hi], as sweeps_interval() */
static void interval_text(jbuf *b, double lo, double hi)
{
    JBUF_LIT(b, "[");
    jbuf_real(b, lo);
    JBUF_LIT(b, ",");
    jbuf_real(b, hi);
    JBUF_LIT(b, "]");
}

/* {head's members, "key": bulk, tail's members}: the answer's text, in
 * bulk's own buffer (the head is small and goes in front); NULL when out of
 * memory. The parts are consumed. */
char *sweeps_answer_text(json_t *head, const char *key, jbuf *bulk, json_t *tail, size_t *len)
{
    jbuf h = {0};
    JBUF_LIT(&h, "{");
    jbuf_members(&h, head);
    jbuf_lit(&h, json_object_size(head) ? "," : "");
    jbuf_key(&h, key);
    jbuf_insert(bulk, 0, h.p ? h.p : "", h.len);
    if (json_object_size(tail)) {
        JBUF_LIT(bulk, ",");
        jbuf_members(bulk, tail);
    }
    JBUF_LIT(bulk, "}");
    int bad = !head || !tail || h.oom || bulk->oom;
    json_decref(head);
    json_decref(tail);
    jbuf_free(&h);
    if (bad) {
        jbuf_free(bulk);
        return NULL;
    }
    return jbuf_take(bulk, len);
}

/* ---- GET /v1/experiments/{id}/statistics -------------------------------------- */

/* ,"levels":{"dataloader":"cpu",...} of a row of an experiment with
 * factors, from its levels (a JSON array of strings in factor-name order,
 * as PostgreSQL writes it: each element is copied as it is); nothing
 * without factors */
void sweeps_levels_member(jbuf *b, const cached_models *m, const char *levels)
{
    if (!m->nfactors)
        return;
    JBUF_LIT(b, ",\"levels\":");
    const char *p = levels ? levels : "";
    if (*p++ != '[') {
        JBUF_LIT(b, "null");
        return;
    }
    JBUF_LIT(b, "{");
    for (int k = 0; k < m->nfactors; k++) {
        while (*p == ',' || *p == ' ')
            p++;
        const char *start = p;
        if (*p++ != '"')
            break;
        while (*p && *p != '"')
            p += *p == '\\' && p[1] ? 2 : 1;
        if (*p++ != '"')
            break;
        if (k)
            JBUF_LIT(b, ",");
        jbuf_key(b, m->factors[k]);
        jbuf_raw(b, start, (size_t)(p - start));
    }
    JBUF_LIT(b, "}");
}

/* one item of the answer (see the definitions it carries) but for its
 * end, which depends on the target (stats_tail) */
static void stats_head(jbuf *b, const cached_models *m, const store_measurement_row *r,
                       const sweep_stats *s, const int *outliers)
{
    JBUF_LIT(b, "{\"point\":");
    sweeps_point_text(b, m, r->point);
    sweeps_levels_member(b, m, r->levels);
    const char *const keys[] = {",\"level\":", ",\"name\":", ",\"category\":", ",\"metric\":",
                                ",\"phase\":"};
    const char *const vals[] = {r->level, r->name, r->category, r->metric, r->phase};
    for (int k = 0; k < 5; k++) {
        jbuf_lit(b, keys[k]);
        jbuf_string(b, vals[k]);
    }
    JBUF_LIT(b, ",\"n\":");
    jbuf_int(b, s->n);
    JBUF_LIT(b, ",\"mean\":");
    jbuf_real(b, s->mean);
    JBUF_LIT(b, ",\"median\":");
    jbuf_real(b, s->median);
    JBUF_LIT(b, ",\"sd\":");
    jbuf_real(b, s->sd);
    JBUF_LIT(b, ",\"cv\":");
    jbuf_real(b, s->cv);
    JBUF_LIT(b, ",\"mean_ci\":");
    if (s->has_mean_ci)
        interval_text(b, s->mean_lo, s->mean_hi);
    else
        JBUF_LIT(b, "null");
    JBUF_LIT(b, ",\"relative_half_width\":");
    jbuf_real(b, s->rel_half_width);
    JBUF_LIT(b, ",\"median_ci\":");
    if (s->has_median_ci) {
        JBUF_LIT(b, "{\"interval\":");
        interval_text(b, s->median_lo, s->median_hi);
        JBUF_LIT(b, ",\"coverage\":");
        jbuf_real(b, s->median_coverage);
        JBUF_LIT(b, ",\"method\":\"order statistics\"}");
    } else {
        JBUF_LIT(b, "null");
    }
    JBUF_LIT(b, ",\"quartiles\":");
    interval_text(b, s->q1, s->q3);
    JBUF_LIT(b, ",\"outliers\":[");
    for (int k = 0; k < s->noutliers; k++) {
        jbuf_lit(b, k ? ",{\"repetition\":" : "{\"repetition\":");
        jbuf_int(b, outliers[k] + 1);
        JBUF_LIT(b, ",\"value\":");
        jbuf_real(b, r->reps[outliers[k]]);
        JBUF_LIT(b, "}");
    }
    JBUF_LIT(b, "]");
}

static void stats_tail(jbuf *b, const sweep_stats *s, int noisy)
{
    JBUF_LIT(b, ",\"repetitions_needed\":");
    if (s->reps_needed >= 0)
        jbuf_int(b, s->reps_needed);
    else
        JBUF_LIT(b, "null");
    jbuf_lit(b, noisy ? ",\"noisy\":true}" : ",\"noisy\":false}");
}

/* every row's stats_head(), back to back into set->text (rows without
 * repetitions: empty); -1 when out of memory */
static int stats_heads(const cached_models *m, kept_rowset *set)
{
    int maxreps = 1;
    for (int i = 0; i < set->n; i++)
        maxreps = set->rows[i].nreps > maxreps ? set->rows[i].nreps : maxreps;
    sweep_quantiles *q = malloc(sizeof *q);
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    int *outl = malloc(sizeof(int) * (size_t)maxreps);
    set->at = malloc(sizeof(size_t) * (size_t)(set->n + 1));
    jbuf b = {0};
    jbuf_reserve(&b, (size_t)set->n * 480 + 64);
    if (q && scratch && outl && set->at) {
        sweep_quantiles_init(q);
        for (int i = 0; i < set->n; i++) {
            set->at[i] = b.len;
            const store_measurement_row *r = &set->rows[i];
            if (r->nreps < 1)
                continue;
            sweep_stats st;
            sweep_stats_compute(r->reps, r->nreps, 0.05, q, scratch, outl, &st);
            stats_head(&b, m, r, &st, outl);
        }
        set->at[set->n] = b.len;
    }
    int ok = q && scratch && outl && set->at && !b.oom;
    free(q);
    free(scratch);
    free(outl);
    size_t len;
    set->text = ok ? jbuf_take(&b, &len) : NULL;
    jbuf_free(&b);
    return set->text ? 0 : -1;
}

/* the answer's "levels" of an experiment with factors: those the query
 * names, or null (every combination) */
void sweeps_levels_head(json_t *head, const cached_models *m, const api_request *req)
{
    if (!m->nfactors)
        return;
    json_t *o = m->levels[0] ? json_object() : json_null();
    for (int i = 0; m->levels[0] && i < m->nfactors; i++)
        json_object_set_new(o, m->factors[i], json_string(api_query(req, m->factors[i]) ?: ""));
    json_object_set_new(head, "levels", o);
}

void api_statistics(api_ctx *ctx, api_request *req, api_response *resp)
{
    if (sweeps_warm_wait(ctx, req, resp) == 0)
        statistics_answer(ctx, req, resp);
}

static void statistics_answer(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "name", "category", "phase",
                                          "target", "limit", "offset", NULL};
    int64_t id;
    const cached_models *m = predict_models_or_all(ctx, req, resp, &id, 1);
    if (!m)
        return;
    store_model_filter f = {.levels = m->levels[0] ? m->levels : NULL};
    long limit, offset;
    double target = 0.05;
    const char *tt = api_query(req, "target");
    if (predict_check_query(req, resp, m, allowed, 0) < 0 ||
        sweeps_filter_from_query(req, resp, &f) < 0 ||
        predict_query_long(req, resp, "limit", 1, STATS_LIMIT_MAX, STATS_LIMIT_DEFAULT, &limit) < 0 ||
        predict_query_long(req, resp, "offset", 0, 1000000000L, 0, &offset) < 0)
        goto done;
    if (tt && (predict_positive(tt, &target) < 0 || target >= 1)) {
        api_problem(resp, 400, "target",
                    "must be a relative half-width between 0 and 1 (0.05: ±5%%), got \"%.40s\"",
                    tt);
        goto done;
    }
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp))
        goto done;
    f.limit = (int)limit;
    f.offset = offset;
    kept_rows kept;
    repstats st = {0};
    if (sweeps_read_rows_kept(ctx, m, &f, 1, &kept, resp) < 0)
        goto done;
    sweeps_warm_note(ctx, req, m, 'S', &kept);
    int n = kept.n;
    noisy_names nm = {m->params, m->nparams, m->factors, m->nfactors};
    if (repstats_compute(&nm, kept.rows, n, target, &st) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto free_rows;
    }
    jbuf items = {0};
    jbuf_reserve(&items, (size_t)n * 520 + 4096); /* an item is about 500 bytes */
    JBUF_LIT(&items, "[");
    for (int i = 0, k = 0; i < n; i++) {
        if (!st.items[i].s.n)
            continue;
        if (k++)
            JBUF_LIT(&items, ",");
        jbuf_raw(&items, kept.text + kept.at[i], kept.at[i + 1] - kept.at[i]);
        stats_tail(&items, &st.items[i].s, st.items[i].noisy);
    }
    JBUF_LIT(&items, "]");
    json_t *warnings = st.warnings;
    st.warnings = NULL;
    json_t *head = json_pack("{s:I, s:i, s:f, s:f, s:i, s:i, s:i, s:i}", "experiment",
                             (json_int_t)id, "model_set", m->set_number, "confidence", 0.95,
                             "target", target, "measurements", st.nitems, "noisy", st.noisy,
                             "single_repetition", st.single, "with_outliers", st.outlying);
    sweeps_levels_head(head, m, req);
    json_t *tail = json_pack("{s:o, s:o}", "warnings", warnings, "next_offset",
                             n == limit ? json_integer(offset + n) : json_null());
    json_object_set_new(tail, "definitions",
                        json_pack("{s:s, s:s, s:s, s:s}", "mean_ci",
                                  "mean ± t(0.975, n-1)·SD/sqrt(n)", "median_ci",
                                  "[x_(k), x_(n-k+1)], k the largest with 2·P(Binom(n,1/2) <= "
                                  "k-1) <= 0.05 (none for n < 6)",
                                  "outliers", "outside [Q1 - 1.5·IQR, Q3 + 1.5·IQR]",
                                  "repetitions_needed",
                                  "smallest m with t(0.975, m-1)·SD/sqrt(m) <= target·|mean|"));
    size_t len;
    char *body = sweeps_answer_text(head, "items", &items, tail, &len);
    predict_page_store_text(ctx, key, resp, body, len);
free_rows:
    repstats_free(&st);
    sweeps_kept_rows_release(ctx, &kept);
done:
    model_cache_release(ctx->models, m);
}
