/*
 * sweeps.c — how trustworthy the measurements are and what to measure
 * (paper 003 §2.1, §3.1), over the pure sweep/ module:
 *
 *   GET  /v1/experiments/{id}/statistics   repetition statistics of every
 *        measurement of the newest model set (coordinate × callpath ×
 *        metric × phase): n, mean, median, SD, CV, 95% intervals of the
 *        mean (Student t) and of the median (order statistics), IQR
 *        outliers, the repetitions needed for a relative half-width
 *        (`target`, default 0.05); `warnings` name the points whose mean's
 *        interval is wider than that, and those with one repetition.
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
 */
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/json_buf.h"
#include "api/levels.h"
#include "api/predict.h"
#include "api/stats_warm.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "sweep/sweep_efficiency.h"
#include "sweep/sweep_plan.h"
#include "sweep/sweep_sensitivity.h"
#include "sweep/sweep_stats.h"
#include "store/jsonb.h"

#define STATS_LIMIT_DEFAULT 1000
#define STATS_LIMIT_MAX 100000
#define WARNINGS_MAX 50
#define PLAN_RUNS_MAX 100000
#define KEPT_TEXT_MAX (16u << 20) /* statistics text kept per model set and filter, at most */

static json_t *interval(double lo, double hi)
{
    return json_pack("[o, o]", predict_number(lo), predict_number(hi));
}

/* Reads the newest set's measurements through f; NULL after answering. */
static store_measurement_row *read_rows(api_ctx *ctx, const cached_models *m,
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

/* The measurements statistics and sensitivity rest on, kept per model set
 * and filter (a model set never changes): rows is the caller's own copy of
 * the row array (to sort at will), the rows' contents are shared read-only. */
typedef struct kept_rows {
    store_measurement_row *rows;
    int n;
    const char *text;                /* with_text: the rows' statistics items up to */
    const size_t *at;                /* their repetitions_needed, row i's at [at[i], at[i+1]) */
    const cache_blob *blob;          /* the kept rows, or NULL: */
    struct kept_rowset *own;         /* rows read for this answer alone, */
    const cache_blob *source;        /* borrowing from these epoch rows (or NULL) */
} kept_rows;

typedef struct kept_rowset {
    store_measurement_row *rows;
    int n;
    char *text;
    size_t *at;
    int borrowed; /* the rows' fields are those of the set's epoch rows (rows_from_epoch) */
} kept_rowset;

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

static void kept_rows_release(api_ctx *ctx, kept_rows *k)
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

/* read_rows() through the blob cache (with_text: and the rows' statistics
 * items but for their target-dependent end, stats_heads()); -1 after
 * answering */
static int read_rows_kept(api_ctx *ctx, const cached_models *m, const store_model_filter *f,
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
        if (from < 0 || (!from && !(fresh->rows = read_rows(ctx, m, &unpaged, &fresh->n, resp)))) {
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
        kept_rows_release(ctx, k);
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
static void sensitivity_answer(api_ctx *ctx, api_request *req, api_response *resp);

/* Remembers a request whose rows were kept (k), for the experiment's next
 * model set: its kind ('S' statistics, 'R' sensitivity) and its query
 * parameters as given; not for level combinations, nor for rows larger
 * than an eighth of the blob budget, nor queries holding the separators. */
static void warm_note(api_ctx *ctx, const api_request *req, const cached_models *m, char kind,
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
static int warm_wait(api_ctx *ctx, const api_request *req, api_response *resp)
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
        sensitivity_answer(ctx, &req, &resp);
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

static int filter_from_query(const api_request *req, api_response *resp, store_model_filter *f)
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
static void row_label(const cached_models *m, const store_measurement_row *r, char *buf,
                      size_t cap)
{
    noisy_names nm = {m->params, m->nparams, m->factors, m->nfactors};
    noisy_point_label(&nm, r, buf, cap);
}

/* The warnings of an answer resting on rows: every row whose mean's 95%
 * interval is wider than ±5% of the mean, and a count of single-repetition
 * rows; NULL when out of memory. */
static json_t *noisy_warnings(const cached_models *m, const store_measurement_row *rows, int n)
{
    json_t *w = json_array();
    sweep_quantiles *q = malloc(sizeof *q);
    int maxreps = 1, single = 0, noisy = 0;
    for (int i = 0; i < n; i++)
        maxreps = rows[i].nreps > maxreps ? rows[i].nreps : maxreps;
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    if (!w || !q || !scratch) {
        free(q);
        free(scratch);
        json_decref(w);
        return NULL;
    }
    sweep_quantiles_init(q);
    char label[400];
    for (int i = 0; i < n; i++) {
        if (rows[i].nreps < 2) {
            single += rows[i].nreps == 1;
            continue;
        }
        sweep_stats st;
        sweep_stats_compute(rows[i].reps, rows[i].nreps, 0.05, q, scratch, NULL, &st);
        if (isfinite(st.rel_half_width) && st.rel_half_width > 0.05 && ++noisy <= WARNINGS_MAX) {
            row_label(m, &rows[i], label, sizeof label);
            json_array_append_new(w, json_sprintf("too noisy: %s: the mean's 95%% interval is "
                                                  "±%.1f%% over %d repetitions",
                                                  label, 100 * st.rel_half_width, st.n));
        }
    }
    if (noisy > WARNINGS_MAX)
        json_array_append_new(w, json_sprintf("%d too-noisy points in all; the first %d are named",
                                              noisy, WARNINGS_MAX));
    if (single)
        json_array_append_new(w, json_sprintf("%d of %d points have one repetition: their "
                                              "run-to-run variation is unknown",
                                              single, n));
    free(q);
    free(scratch);
    return w;
}

/* ---- the large answers, written without a Jansson tree ---------------------------- */

/* {"ranks":8,...}, as predict_point_json() */
static void point_text(jbuf *b, const cached_models *m, const double *point)
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

/* [lo,hi], as interval() */
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
static char *answer_text(json_t *head, const char *key, jbuf *bulk, json_t *tail, size_t *len)
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
static void levels_member(jbuf *b, const cached_models *m, const char *levels)
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
    point_text(b, m, r->point);
    levels_member(b, m, r->levels);
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
static void levels_head(json_t *head, const cached_models *m, const api_request *req)
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
    if (warm_wait(ctx, req, resp) == 0)
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
        filter_from_query(req, resp, &f) < 0 ||
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
    if (read_rows_kept(ctx, m, &f, 1, &kept, resp) < 0)
        goto done;
    warm_note(ctx, req, m, 'S', &kept);
    int n = kept.n;
    const store_measurement_row *rows = kept.rows;
    int maxreps = 1;
    for (int i = 0; i < n; i++)
        maxreps = rows[i].nreps > maxreps ? rows[i].nreps : maxreps;
    sweep_quantiles *q = malloc(sizeof *q);
    double *scratch = malloc(sizeof(double) * (size_t)maxreps);
    int *outl = malloc(sizeof(int) * (size_t)maxreps);
    if (!q || !scratch || !outl) {
        api_problem(resp, 500, NULL, "out of memory");
        goto free_rows;
    }
    sweep_quantiles_init(q);
    jbuf items = {0};
    jbuf_reserve(&items, (size_t)n * 520 + 4096); /* an item is about 500 bytes */
    json_t *warnings = json_array();
    int noisy = 0, single = 0, outlying = 0, nitems = 0;
    char label[400];
    JBUF_LIT(&items, "[");
    for (int i = 0; i < n; i++) {
        const store_measurement_row *r = &rows[i];
        if (r->nreps < 1)
            continue;
        sweep_stats s;
        sweep_stats_compute(r->reps, r->nreps, target, q, scratch, outl, &s);
        int is_noisy = s.has_mean_ci && isfinite(s.rel_half_width) && s.rel_half_width > target;
        if (nitems++)
            JBUF_LIT(&items, ",");
        jbuf_raw(&items, kept.text + kept.at[i], kept.at[i + 1] - kept.at[i]);
        stats_tail(&items, &s, is_noisy);
        outlying += s.noutliers > 0;
        if (is_noisy) {
            if (++noisy <= WARNINGS_MAX) {
                row_label(m, r, label, sizeof label);
                json_array_append_new(
                    warnings, json_sprintf("too noisy: %s: the mean's 95%% interval is ±%.1f%% "
                                           "(target ±%.1f%%); %ld repetitions needed, %d measured",
                                           label, 100 * s.rel_half_width, 100 * target,
                                           s.reps_needed, s.n));
            }
        } else if (s.n == 1 && ++single <= WARNINGS_MAX) {
            row_label(m, r, label, sizeof label);
            json_array_append_new(warnings,
                                  json_sprintf("one repetition: %s has no interval", label));
        }
    }
    JBUF_LIT(&items, "]");
    if (noisy > WARNINGS_MAX || single > WARNINGS_MAX)
        json_array_append_new(warnings,
                              json_sprintf("%d too noisy and %d single-repetition measurements "
                                           "in all; the first %d of each are named",
                                           noisy, single, WARNINGS_MAX));
    json_t *head = json_pack("{s:I, s:i, s:f, s:f, s:i, s:i, s:i, s:i}", "experiment",
                             (json_int_t)id, "model_set", m->set_number, "confidence", 0.95,
                             "target", target, "measurements", nitems, "noisy", noisy,
                             "single_repetition", single, "with_outliers", outlying);
    levels_head(head, m, req);
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
    char *body = answer_text(head, "items", &items, tail, &len);
    predict_page_store_text(ctx, key, resp, body, len);
free_rows:
    free(q);
    free(scratch);
    free(outl);
    kept_rows_release(ctx, &kept);
done:
    model_cache_release(ctx->models, m);
}

/* ---- GET /v1/experiments/{id}/sensitivity --------------------------------------- */

/* The Taguchi columns: the parameters (their measured values as levels),
 * then, when the rows span several level combinations, the factors (their
 * declared levels). */
typedef struct sn_input {
    int ncols, nfactor_cols;     /* nfactor_cols: factors among the columns, after the parameters */
    int *level, *nlevels, *offset;
    double *y, *distinct;        /* distinct: the parameters' values, n per column */
    json_t *declared;            /* per factor column its declared levels (an array) */
} sn_input;

static void sn_input_free(sn_input *s)
{
    free(s->level);
    free(s->nlevels);
    free(s->offset);
    free(s->y);
    free(s->distinct);
    json_decref(s->declared);
}

/* the answer's "factors", ranked */
static json_t *sensitivity_factors(const cached_models *m, int n, const sn_input *in,
                                   const sweep_sn_result *r)
{
    json_t *factors = json_array();
    for (int k = 0; k < in->ncols; k++) {
        int fi = r->order[k], cat = fi >= m->nparams;
        const sweep_sn_factor *fa = &r->factors[fi];
        const double *vals = cat ? NULL : in->distinct + (size_t)fi * (n ? n : 1);
        json_t *decl = cat ? json_array_get(in->declared, (size_t)(fi - m->nparams)) : NULL;
        json_t *levels = json_array();
        for (int l = 0; l < fa->nlevels; l++)
            json_array_append_new(
                levels, json_pack("{s:o, s:o, s:i}", "level",
                                  cat ? json_incref(json_array_get(decl, (size_t)l)) : json_real(vals[l]),
                                  "mean_sn", predict_number(fa->mean_sn[l]), "runs", fa->runs[l]));
        json_t *best = fa->best_level < 0 ? json_null()
                       : cat ? json_incref(json_array_get(decl, (size_t)fa->best_level))
                             : json_real(vals[fa->best_level]);
        json_array_append_new(
            factors, json_pack("{s:i, s:s, s:s, s:f, s:f, s:o, s:o}", "rank", fa->rank, "factor",
                               cat ? m->factors[fi - m->nparams] : m->params[fi], "kind",
                               cat ? "factor" : "parameter", "range", fa->range, "normalized",
                               fa->normalized, "best_level", best, "levels", levels));
    }
    return factors;
}

/* the answer's "runs": per measured coordinate (and level combination) its
 * S/N and repetitions */
static void sn_runs_text(jbuf *b, const cached_models *m, const store_measurement_row *rows,
                         int n, const sweep_sn_result *r)
{
    JBUF_LIT(b, "[");
    for (int i = 0; i < n; i++) {
        jbuf_lit(b, i ? ",{\"point\":" : "{\"point\":");
        point_text(b, m, rows[i].point);
        levels_member(b, m, rows[i].levels);
        JBUF_LIT(b, ",\"sn\":");
        jbuf_real(b, r->sn[i]);
        JBUF_LIT(b, ",\"n\":");
        jbuf_int(b, rows[i].nreps);
        JBUF_LIT(b, "}");
    }
    JBUF_LIT(b, "]");
}

/* runs by point, then by levels */
static int cmp_row_point(const void *x, const void *y)
{
    const store_measurement_row *a = x, *b = y;
    for (int i = 0; i < a->nparams && i < b->nparams; i++)
        if (a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* The factor columns of rows spanning several level combinations: each
 * row's index of its level among the factor's declared ones. 0, or -1 with
 * *bad the row whose levels are not declared ones (or out of memory: -1). */
static int sn_factor_columns(const cached_models *m, const store_measurement_row *rows, int n,
                             sn_input *in, int *bad)
{
    *bad = -1;
    json_t *spec = store_jsonb_parse(m->factors_spec, 0);
    json_t *factors = json_object_get(spec, "factors");
    in->declared = json_array();
    for (int k = 0; k < m->nfactors; k++) {
        json_t *decl = json_object_get(factors, m->factors[k]);
        json_array_append(in->declared, decl ? decl : json_null());
        in->nlevels[m->nparams + k] = (int)json_array_size(decl);
    }
    json_decref(spec);
    /* rows share few combinations: each distinct text is decoded once */
    const char *seen[64];
    int seen_at[64], nseen = 0;
    for (int i = 0; i < n; i++) {
        int *lv = in->level + (size_t)i * (size_t)in->ncols + m->nparams, s = 0;
        while (s < nseen && strcmp(seen[s], rows[i].levels ? rows[i].levels : ""))
            s++;
        if (s < nseen) {
            memcpy(lv, in->level + (size_t)seen_at[s] * (size_t)in->ncols + m->nparams,
                   sizeof(int) * (size_t)m->nfactors);
            continue;
        }
        json_t *arr = store_jsonb_parse(rows[i].levels ? rows[i].levels : "", JSON_DECODE_ANY);
        int ok = json_array_size(arr) == (size_t)m->nfactors;
        for (int k = 0; ok && k < m->nfactors; k++) {
            const char *v = json_string_value(json_array_get(arr, (size_t)k));
            json_t *decl = json_array_get(in->declared, (size_t)k);
            lv[k] = -1;
            for (size_t l = 0; v && l < json_array_size(decl) && lv[k] < 0; l++)
                if (!strcmp(json_string_value(json_array_get(decl, l)) ?: "", v))
                    lv[k] = (int)l;
            ok = lv[k] >= 0;
        }
        json_decref(arr);
        if (!ok) {
            *bad = i;
            return -1;
        }
        if (nseen < 64) {
            seen[nseen] = rows[i].levels ? rows[i].levels : "";
            seen_at[nseen++] = i;
        }
    }
    return 0;
}

/* The Taguchi problem's input from rows (runs by point, then levels);
 * factors: whether the factors are columns too. 0, -1 when out of memory,
 * -2 with *bad a row whose levels are not declared. */
static int sn_build(const cached_models *m, const store_measurement_row *rows, int n, int factors,
                    sn_input *in, int *bad)
{
    int np = m->nparams;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += (size_t)rows[i].nreps;
    memset(in, 0, sizeof *in);
    in->nfactor_cols = factors ? m->nfactors : 0;
    in->ncols = np + in->nfactor_cols;
    int nc = in->ncols;
    in->level = malloc(sizeof(int) * (size_t)(n ? n : 1) * (size_t)nc);
    in->nlevels = malloc(sizeof(int) * (size_t)nc);
    in->offset = malloc(sizeof(int) * (size_t)(n + 1));
    in->y = malloc(sizeof(double) * (total ? total : 1));
    in->distinct = malloc(sizeof(double) * (size_t)(n ? n : 1) * (size_t)np + 1);
    double *col = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (!in->level || !in->nlevels || !in->offset || !in->y || !in->distinct || !col) {
        free(col);
        return -1;
    }
    in->offset[0] = 0;
    for (int i = 0; i < n; i++) {
        memcpy(in->y + in->offset[i], rows[i].reps, sizeof(double) * (size_t)rows[i].nreps);
        in->offset[i + 1] = in->offset[i] + rows[i].nreps;
    }
    for (int k = 0; k < np; k++) {
        for (int i = 0; i < n; i++)
            col[i] = rows[i].point[k];
        in->nlevels[k] = sweep_levels_of(col, n, 1, in->distinct + (size_t)k * (n ? n : 1),
                                         in->level + k, nc);
    }
    free(col);
    if (in->nfactor_cols && sn_factor_columns(m, rows, n, in, bad) < 0)
        return *bad >= 0 ? -2 : -1;
    return 0;
}

void api_sensitivity(api_ctx *ctx, api_request *req, api_response *resp)
{
    if (warm_wait(ctx, req, resp) == 0)
        sensitivity_answer(ctx, req, resp);
}

static void sensitivity_answer(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "name", "phase", "goal", NULL};
    int64_t id;
    const cached_models *m = predict_models_or_all(ctx, req, resp, &id, 1);
    if (!m)
        return;
    store_model_filter f = {.levels = m->levels[0] ? m->levels : NULL};
    kept_rows kept = {0};
    store_measurement_row *rows = NULL;
    int n = 0;
    sn_input in = {0};
    if (predict_check_query(req, resp, m, allowed, 0) < 0 || filter_from_query(req, resp, &f) < 0)
        goto done;
    f.metric = f.metric ? f.metric : "time";
    f.level = f.level ? f.level : "application";
    f.name = f.name ? f.name : "epoch";
    f.phase = f.phase ? f.phase : "epoch";
    const char *goal = api_query(req, "goal");
    if (!goal && strcmp(f.metric, "time") && strcmp(f.metric, "bytes")) {
        api_problem(resp, 400, "goal",
                    "missing: say whether larger or smaller values of metric \"%.60s\" are "
                    "better (time and bytes: smaller by default)",
                    f.metric);
        goto done;
    }
    goal = goal ? goal : "smaller";
    if (strcmp(goal, "smaller") && strcmp(goal, "larger")) {
        api_problem(resp, 400, "goal", "must be smaller or larger, got \"%.40s\"", goal);
        goto done;
    }
    int larger = !strcmp(goal, "larger");
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp))
        goto done;
    f.limit = STATS_LIMIT_MAX;
    if (read_rows_kept(ctx, m, &f, 0, &kept, resp) < 0)
        goto done;
    warm_note(ctx, req, m, 'R', &kept);
    rows = kept.rows;
    n = kept.n;
    if (n == 0) {
        api_problem(resp, 404, "name",
                    "no measurements of %.60s %.60s (level %s, phase %s) in model set %d",
                    f.name, f.metric, f.level, f.phase, m->set_number);
        goto done;
    }
    qsort(rows, (size_t)n, sizeof *rows, cmp_row_point); /* runs by point, then levels */
    int bad;
    char err[200], label[400];
    int built = sn_build(m, rows, n, m->nfactors && !m->levels[0], &in, &bad);
    if (built == -2) {
        row_label(m, &rows[bad], label, sizeof label);
        api_problem(resp, 422, NULL, "%s: its levels are not declared ones", label);
        goto done;
    }
    if (built < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    sweep_sn_problem p = {in.ncols, n, in.nlevels, in.level, in.y, in.offset, larger};
    sweep_sn_result r;
    if (sweep_sensitivity(&p, &r, &bad, err, sizeof err) < 0) {
        if (bad >= 0) {
            row_label(m, &rows[bad], label, sizeof label);
            api_problem(resp, 422, "metric",
                        "%s: a repetition is %s: S/N ratios need observations > 0", label,
                        rows[bad].nreps ? "zero, negative or not finite" : "missing");
        } else {
            api_problem(resp, 500, NULL, "%s", err);
        }
        goto done;
    }
    json_t *head = json_pack("{s:I, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "experiment",
                             (json_int_t)id, "model_set", m->set_number, "metric", f.metric,
                             "level", f.level, "name", f.name, "phase", f.phase, "goal", goal,
                             "formula",
                             larger ? "S/N = -10·log10((1/N)·Σ 1/y²) (larger is better)"
                                    : "S/N = -10·log10((1/N)·Σ y²) (smaller is better)",
                             "ranking",
                             "factors by the range (max - min) of their levels' mean S/N; "
                             "normalized: range / Σ ranges");
    levels_head(head, m, req);
    json_t *tail = json_pack("{s:o, s:{s:s}, s:o}", "factors", sensitivity_factors(m, n, &in, &r),
                             "units", "sn", "dB", "warnings", noisy_warnings(m, rows, n));
    jbuf runs = {0};
    jbuf_reserve(&runs, (size_t)n * 80 + 4096); /* a run is about 70 bytes */
    sn_runs_text(&runs, m, rows, n, &r);
    sweep_sensitivity_free(&r);
    size_t len;
    char *body = answer_text(head, "runs", &runs, tail, &len);
    predict_page_store_text(ctx, key, resp, body, len);
done:
    sn_input_free(&in);
    kept_rows_release(ctx, &kept);
    model_cache_release(ctx->models, m);
}

/* ---- POST /v1/experiments/{id}/sweep/plan --------------------------------------- */

/* The sweep's names against the experiment: every varied parameter is one
 * of its parameters, every parameter varied or constant; every varied
 * factor one of its factors with declared levels, every factor varied
 * (api/levels.h). map[i] = the sweep's source of experiment parameter i:
 * var index, or -1-k for constant k; fmap[k] = the var of the experiment's
 * k-th factor in name order (*nf of them). */
static int match_experiment(const sweep_def *d, const store_experiment *e, int *map, int *fmap,
                            int *nf, api_response *resp)
{
    const json_t *factors = json_object_get(e->spec, "factors");
    for (int v = 0; v < d->nvars; v++) {
        char field[160];
        if (d->vars[v].levels) {
            const json_t *decl = json_object_get(factors, d->vars[v].name);
            snprintf(field, sizeof field, "factors.%s", d->vars[v].name);
            if (!decl) {
                api_problem(resp, 400, field, "the experiment declares no factor \"%s\"",
                            d->vars[v].name);
                return -1;
            }
            for (int l = 0; l < d->vars[v].nvalues; l++) {
                int ok = 0;
                for (size_t k = 0; k < json_array_size(decl) && !ok; k++)
                    ok = !strcmp(json_string_value(json_array_get(decl, k)) ?: "",
                                 d->vars[v].levels[l]);
                if (!ok) {
                    char *list = json_dumps(decl, JSON_COMPACT);
                    snprintf(field, sizeof field, "factors.%s[%d]", d->vars[v].name, l);
                    api_problem(resp, 400, field, "\"%.64s\" is not a declared level of %s: %s",
                                d->vars[v].levels[l], d->vars[v].name, list ? list : "");
                    free(list);
                    return -1;
                }
            }
            continue;
        }
        int found = 0;
        for (int i = 0; i < e->nparams; i++)
            found |= !strcmp(e->parameters[i], d->vars[v].name);
        if (!found) {
            char names[300] = "";
            size_t used = 0;
            for (int i = 0; i < e->nparams && used < sizeof names; i++)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                         e->parameters[i]);
            snprintf(field, sizeof field, "parameters.%s", d->vars[v].name);
            api_problem(resp, 400, field, "not a parameter of the experiment (its parameters: %s)",
                        names);
            return -1;
        }
    }
    for (int i = 0; i < e->nparams; i++) {
        map[i] = 0x7fffffff;
        for (int v = 0; v < d->nparams; v++)
            if (!strcmp(d->vars[v].name, e->parameters[i]))
                map[i] = v;
        for (int k = 0; k < d->nconst && map[i] == 0x7fffffff; k++)
            if (!strcmp(d->const_names[k], e->parameters[i]))
                map[i] = -1 - k;
        if (map[i] == 0x7fffffff) {
            api_problem(resp, 400, "parameters",
                        "parameter \"%s\" of the experiment is neither varied nor a constant",
                        e->parameters[i]);
            return -1;
        }
    }
    const char *names[LEVELS_MAX_FACTORS];
    *nf = (int)levels_names(e->spec, names);
    for (int k = 0; k < *nf; k++) {
        fmap[k] = -1;
        for (int v = d->nparams; v < d->nvars; v++)
            if (!strcmp(d->vars[v].name, names[k]))
                fmap[k] = v;
        if (fmap[k] < 0) {
            api_problem(resp, 400, "factors",
                        "factor \"%s\" of the experiment is not varied: name the levels to plan "
                        "(\"factors\":{\"%s\":[...]})",
                        names[k], names[k]);
            return -1;
        }
    }
    return 0;
}

static int cmp_run(const double *a, const double *b, int np)
{
    for (int i = 0; i < np; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* The stored run of point, repetition and levels (a JSON array text), or
 * NULL (runs ordered by point, repetition, levels). */
static const store_run *find_run(const store_run *runs, int n, int np, const double *point,
                                 int rep, const char *levels)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = cmp_run(runs[mid].point, point, np);
        if (!c)
            c = runs[mid].repetition < rep ? -1 : runs[mid].repetition > rep;
        if (!c)
            c = strcmp(runs[mid].levels, levels);
        if (!c)
            return &runs[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

typedef struct plan_cost {
    const cached_models *m;
    int slot;
    double value, lo, hi;
    int runs, unpriced;
} plan_cost;

/* A run at point priced by models m (the experiment's, or its level
 * combination's; NULL: none). */
static void cost_add(plan_cost *c, const cached_models *m, const double *point, double epochs)
{
    c->runs++;
    int slot = m ? predict_metric_slot(m, "time") : -1;
    if (!c->m || c->slot < 0 || slot < 0) {
        c->unpriced++;
        return;
    }
    int composed;
    prediction t = predict_epoch(m->parts[slot], point, &composed);
    double ranks = cached_ranks(m, point);
    double k = epochs * ranks * m->cores_per_rank / 3600;
    if (!isfinite(t.value) || ranks <= 0) {
        c->unpriced++;
        return;
    }
    c->value += t.value * k;
    c->lo += t.lo * k;
    c->hi += t.hi * k;
}

static json_t *cost_json(const plan_cost *c, const sweep_def *d, const char *why)
{
    if (!c->m || c->slot < 0)
        return json_pack("{s:n, s:i, s:s}", "core_hours", "runs", c->runs, "reason", why);
    json_t *o = json_pack("{s:{s:f, s:o}, s:i, s:f, s:i, s:s}", "core_hours", "value", c->value,
                          "interval", interval(c->lo, c->hi), "runs", c->runs, "epochs_per_run",
                          d->epochs_per_run, "model_set", c->m->set_number, "basis",
                          "per run: predicted epoch time × ranks × cores_per_rank / 3600 × "
                          "epochs_per_run; the interval sums the runs' bounds");
    if (c->unpriced)
        json_object_set_new(o, "unpriced_runs", json_integer(c->unpriced));
    return o;
}

static json_t *plan_point_json(const store_experiment *e, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; i < e->nparams; i++)
        json_object_set_new(o, e->parameters[i], json_real(point[i]));
    return o;
}

/* The models of each level combination a plan prices its runs by, looked
 * up once each (at most PLAN_LEVEL_MODELS; the runs of further
 * combinations are unpriced). */
#define PLAN_LEVEL_MODELS 64
typedef struct plan_levels {
    int n;
    char *text[PLAN_LEVEL_MODELS]; /* the combination's JSON array text */
    const cached_models *m[PLAN_LEVEL_MODELS];
} plan_levels;

static const cached_models *plan_levels_models(api_ctx *ctx, plan_levels *pl, int64_t exp,
                                               const char *text, const char *const *values,
                                               int nf)
{
    for (int i = 0; i < pl->n; i++)
        if (!strcmp(pl->text[i], text))
            return pl->m[i];
    if (pl->n == PLAN_LEVEL_MODELS)
        return NULL;
    char *literal = levels_literal(values, (size_t)nf);
    store_error err = {0};
    const cached_models *m =
        literal ? model_cache_get_levels(ctx->models, ctx->db, exp, literal, &err) : NULL;
    free(literal);
    pl->text[pl->n] = strdup(text);
    if (!pl->text[pl->n]) {
        if (m)
            model_cache_release(ctx->models, m);
        return NULL;
    }
    pl->m[pl->n++] = m;
    return m;
}

static void plan_levels_free(api_ctx *ctx, plan_levels *pl)
{
    for (int i = 0; i < pl->n; i++) {
        free(pl->text[i]);
        if (pl->m[i])
            model_cache_release(ctx->models, pl->m[i]);
    }
}

/* The JSON array text of the levels of point idx, in factor-name order
 * (fmap), as the store writes them ("[\"cpu\",\"fp16\"]"); values[k] the
 * k-th level. Levels need no escaping (api/levels.c). */
static void plan_levels_text(const sweep_def *d, const int *idx, const int *fmap, int nf,
                             char *buf, size_t cap, const char **values)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < nf && n < cap; k++) {
        values[k] = d->vars[fmap[k]].levels[idx[fmap[k]]];
        n += (size_t)snprintf(buf + n, cap - n, "%s\"%s\"", k ? "," : "", values[k]);
    }
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
}

static void plan_answer(api_ctx *ctx, const sweep_def *d, const store_experiment *e,
                        const int *map, const int *fmap, int nf, const store_run *runs,
                        int nruns, api_response *resp)
{
    store_error err = {0};
    plan_cost cost = {0};
    plan_levels pl = {0};
    char why[300] = "", ltext[LEVELS_MAX_FACTORS * (LEVELS_MAX_TEXT + 3) + 3] = "[]";
    const char *lvalues[LEVELS_MAX_FACTORS];
    cost.m = model_cache_get(ctx->models, ctx->db, e->id, &err);
    /* with factors the runs are priced by their combination's models */
    cost.slot = cost.m ? nf ? 0 : predict_metric_slot(cost.m, "time") : -1;
    if (!cost.m)
        snprintf(why, sizeof why, "%s", err.msg);
    else if (cost.slot < 0)
        snprintf(why, sizeof why, "model set %d has no time models", cost.m->set_number);
    int idx[SWEEP_MAX_VARS], np = e->nparams;
    double point[PMNF_MAX_PARAMS];
    long legal = 0, counts[3] = {0, 0, 0};
    static const char *const status_names[3] = {"measured", "missing", "failed"};
    json_t *items = json_array(), *commands = json_array();
    size_t cap = 8192;
    char *cmd = malloc(cap);
    sweep_def_first(d, idx);
    do {
        if (!sweep_def_legal(d, idx))
            continue;
        legal++;
        for (int i = 0; i < np; i++)
            point[i] = map[i] >= 0 ? d->vars[map[i]].values[idx[map[i]]]
                                   : d->const_values[-1 - map[i]];
        if (nf)
            plan_levels_text(d, idx, fmap, nf, ltext, sizeof ltext, lvalues);
        const cached_models *lm = NULL;
        int lm_known = !nf;
        for (int rep = 1; rep <= d->repetitions; rep++) {
            const store_run *r = find_run(runs, nruns, np, point, rep, ltext);
            int st = r && r->ok ? 0 : r && r->failed ? 2 : 1;
            counts[st]++;
            json_t *o = json_pack("{s:o, s:i, s:s}", "point", plan_point_json(e, point),
                                  "repetition", rep, "status", status_names[st]);
            if (d->nvars > d->nparams) {
                json_t *lv = json_object();
                for (int v = d->nparams; v < d->nvars; v++)
                    json_object_set_new(lv, d->vars[v].name,
                                        json_string(d->vars[v].levels[idx[v]]));
                json_object_set_new(o, "levels", lv);
            }
            if (st != 0) {
                if (cmd && sweep_def_command(d, idx, rep, cmd, cap) >= 0) {
                    json_object_set_new(o, "command", json_string(cmd));
                    json_array_append_new(commands, json_string(cmd));
                }
                if (!lm_known && cost.m) {
                    lm = plan_levels_models(ctx, &pl, e->id, ltext, lvalues, nf);
                    lm_known = 1;
                }
                cost_add(&cost, nf ? lm : cost.m, point, d->epochs_per_run);
            }
            json_array_append_new(items, o);
        }
    } while (sweep_def_next(d, idx));
    free(cmd);
    json_t *doc = json_pack(
        "{s:I, s:{s:I, s:I, s:I}, s:i, s:I, s:I, s:I, s:I, s:b, s:o, s:o, s:o}", "experiment",
        (json_int_t)e->id, "points", "product", (json_int_t)d->product, "legal",
        (json_int_t)legal, "illegal", (json_int_t)(d->product - legal), "repetitions",
        d->repetitions, "runs", (json_int_t)(legal * d->repetitions), "measured",
        (json_int_t)counts[0], "missing", (json_int_t)counts[1], "failed", (json_int_t)counts[2],
        "complete", counts[1] + counts[2] == 0, "items", items, "commands", commands,
        "missing_cost", cost_json(&cost, d, why));
    if (nf && cost.m && cost.unpriced)
        json_object_set_new(json_object_get(doc, "missing_cost"), "reason",
                            json_string("runs of level combinations without a model of the "
                                        "epoch time are unpriced"));
    if (cost.m)
        model_cache_release(ctx->models, cost.m);
    plan_levels_free(ctx, &pl);
    api_send_json(resp, 200, doc);
}

void api_sweep_plan(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    json_t *body = NULL;
    store_experiment e = {0};
    sweep_def d;
    memset(&d, 0, sizeof d);
    store_run *runs = NULL;
    int nruns = 0, map[PMNF_MAX_PARAMS], fmap[LEVELS_MAX_FACTORS], nf = 0;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0 ||
        api_parse_object(req, resp, &body) < 0)
        return;
    char field[200], msg[400];
    if (sweep_def_parse(body, &d, field, sizeof field, msg, sizeof msg) < 0) {
        api_problem(resp, 400, *field ? field : NULL, "%s", msg);
        goto done;
    }
    store_error err = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_experiment_get(c, id, &e, &err)) {
        if (c)
            store_release(ctx->db, c);
        api_store_problem(resp, &err);
        goto done;
    }
    if (match_experiment(&d, &e, map, fmap, &nf, resp) < 0) {
        store_release(ctx->db, c);
        goto done;
    }
    /* legal points × repetitions, before anything is read */
    long legal = 0;
    int idx[SWEEP_MAX_VARS];
    sweep_def_first(&d, idx);
    do
        legal += sweep_def_legal(&d, idx);
    while (sweep_def_next(&d, idx));
    if (legal * d.repetitions > PLAN_RUNS_MAX) {
        store_release(ctx->db, c);
        api_problem(resp, 400, "repetitions",
                    "%ld legal points × %d repetitions is more than %d runs", legal,
                    d.repetitions, PLAN_RUNS_MAX);
        goto done;
    }
    int rc = store_runs_read(c, id, e.nparams, &runs, &nruns, &err);
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    plan_answer(ctx, &d, &e, map, fmap, nf, runs, nruns, resp);
done:
    store_runs_free(runs, nruns);
    sweep_def_free(&d);
    store_experiment_free(&e);
    json_decref(body);
}

/* ---- GET /v1/experiments/{id}/efficiency ---------------------------------------- */

/* rows by group: the other parameters' values, then the level combination */
static int cmp_group(const store_measurement_row *a, const store_measurement_row *b, int q)
{
    for (int i = 0; i < a->nparams; i++)
        if (i != q && a->point[i] != b->point[i])
            return a->point[i] < b->point[i] ? -1 : 1;
    return strcmp(a->levels ? a->levels : "", b->levels ? b->levels : "");
}

/* by group, then along parameter q; equal rows keep their order */
static int row_before(const store_measurement_row *x, const store_measurement_row *y, int q)
{
    int c = cmp_group(x, y, q);
    return c < 0 || (c == 0 && x->point[q] < y->point[q]);
}

/* A stable merge sort (bottom-up, into tmp and back): rows may be many */
static int sort_rows(store_measurement_row *rows, int n, int q)
{
    store_measurement_row *tmp = malloc(sizeof *tmp * (size_t)(n ? n : 1));
    if (!tmp)
        return -1;
    for (int width = 1; width < n; width *= 2) {
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = row_before(&rows[j], &rows[i], q) ? rows[j++] : rows[i++];
            while (i < mid)
                tmp[k++] = rows[i++];
            while (j < hi)
                tmp[k++] = rows[j++];
        }
        memcpy(rows, tmp, sizeof *rows * (size_t)n);
    }
    free(tmp);
    return 0;
}

static json_t *ratio_json(const sweep_ratio *r)
{
    return json_pack("{s:o, s:o}", "value", predict_number(r->value), "interval",
                     r->has_interval ? interval(r->lo, r->hi) : json_null());
}

static json_t *group_json(const cached_models *m, const store_measurement_row *rows, int a, int b,
                          int q, const double *baseline)
{
    json_t *fixed = json_object();
    for (int i = 0; i < m->nparams; i++)
        if (i != q)
            json_object_set_new(fixed, m->params[i], json_real(rows[a].point[i]));
    int base = -1;
    for (int i = a; i < b; i++)
        if (baseline ? rows[i].point[q] == *baseline : base < 0)
            base = i;
    json_t *pts = json_array();
    for (int i = a; i < b; i++) {
        double mean = 0;
        for (int k = 0; k < rows[i].nreps; k++)
            mean += rows[i].reps[k] / rows[i].nreps;
        json_t *o = json_pack("{s:f, s:f, s:i}", m->params[q], rows[i].point[q], "mean", mean,
                              "n", rows[i].nreps);
        if (base >= 0) {
            sweep_ratio r = sweep_efficiency(rows[base].reps, rows[base].nreps, rows[i].reps,
                                             rows[i].nreps);
            json_object_set_new(o, "se", ratio_json(&r));
        } else {
            json_object_set_new(o, "se", json_null());
        }
        json_array_append_new(pts, o);
    }
    json_t *g = json_pack("{s:o, s:o, s:o}", "fixed", fixed, "baseline",
                          base >= 0 ? json_real(rows[base].point[q]) : json_null(), "points", pts);
    if (m->nfactors) { /* the group's level combination */
        const char *names[8];
        for (int k = 0; k < m->nfactors; k++)
            names[k] = m->factors[k];
        json_t *lv = levels_object(names, (size_t)m->nfactors, rows[a].levels ? rows[a].levels : "");
        json_object_set_new(g, "levels", lv ? lv : json_null());
    }
    if (base < 0)
        json_object_set_new(g, "reason", json_string("the baseline was not measured with these "
                                                     "values of the other parameters"));
    return g;
}

void api_efficiency(api_ctx *ctx, api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"metric", "level", "name", "phase", "category",
                                          "parameter", "baseline", NULL};
    int64_t id;
    const cached_models *m = predict_models_or_all(ctx, req, resp, &id, 1);
    if (!m)
        return;
    store_model_filter f = {.levels = m->levels[0] ? m->levels : NULL};
    store_measurement_row *rows = NULL;
    int n = 0, q = 0;
    double baseline, *bp = NULL;
    if (predict_check_query(req, resp, m, allowed, 0) < 0 || filter_from_query(req, resp, &f) < 0)
        goto done;
    const char *pq = api_query(req, "parameter"), *bq = api_query(req, "baseline");
    if (pq) {
        q = -1;
        for (int i = 0; i < m->nparams; i++)
            q = strcmp(m->params[i], pq) ? q : i;
        if (q < 0) {
            api_problem(resp, 400, "parameter", "not a parameter of the experiment: \"%.60s\"",
                        pq);
            goto done;
        }
    }
    if (bq) {
        if (predict_positive(bq, &baseline) < 0) {
            api_problem(resp, 400, "baseline", "must be a number > 0, got \"%.40s\"", bq);
            goto done;
        }
        bp = &baseline;
    }
    f.metric = f.metric ? f.metric : "time";
    f.level = f.level ? f.level : "application";
    f.name = f.name ? f.name : "epoch";
    f.phase = f.phase ? f.phase : "epoch";
    f.limit = STATS_LIMIT_MAX;
    char key[PREDICT_KEY_MAX];
    predict_page_key(m, req, key, sizeof key);
    if (predict_page_send(ctx, key, resp))
        goto done;
    if (!(rows = read_rows(ctx, m, &f, &n, resp)))
        goto done;
    if (n == 0) {
        api_problem(resp, 404, "name", "no measurements of %.60s %.60s (level %s, phase %s)",
                    f.name, f.metric, f.level, f.phase);
        goto done;
    }
    if (sort_rows(rows, n, q) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    json_t *groups = json_array();
    int found = 0;
    for (int a = 0; a < n;) {
        int b = a + 1;
        while (b < n && cmp_group(&rows[a], &rows[b], q) == 0)
            b++;
        json_t *g = group_json(m, rows, a, b, q, bp);
        found |= !json_is_null(json_object_get(g, "baseline"));
        json_array_append_new(groups, g);
        a = b;
    }
    if (bp && !found) {
        json_decref(groups);
        api_problem(resp, 400, "baseline", "%s = %g was not measured", m->params[q], baseline);
        goto done;
    }
    json_t *doc = json_pack(
        "{s:I, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "experiment", (json_int_t)id,
        "model_set", m->set_number, "metric", f.metric, "level", f.level, "name", f.name,
        "phase", f.phase, "parameter", m->params[q], "definition",
        "SE_N = t_baseline / t_N (paper 003), the ratio of the means over the repetitions",
        "interval",
        "each mean's 97.5% t interval, the ratio's ends from theirs: at least 95% (Bonferroni); "
        "null with fewer than 2 repetitions on a side",
        "groups", groups);
    levels_head(doc, m, req);
    json_object_set_new(doc, "warnings", noisy_warnings(m, rows, n));
    predict_page_store(ctx, key, resp, doc);
done:
    store_measurement_rows_free(rows, n);
    model_cache_release(ctx->models, m);
}
