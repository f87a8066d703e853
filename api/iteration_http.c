/*
 * iteration_http.c — the per-iteration analysis over HTTP
 * (pipeline/iteration_job.h does the work; store/overheads.h keeps the sets):
 *
 *   POST   /v1/overhead-sets        {"name", "profiles": [profile ids],
 *                                    "profiler_overhead_us": {"cpu","gpu"}?,
 *                                    "keep_outliers"?}  measures T1–T5 on the
 *                                    tenant's uploaded Kineto traces; or
 *                                    {"name", "set": {...}} stores a set as
 *                                    given (perfcast iteration --save-overheads)
 *                                    -> 201 {"id","name","traces","created_at","set"}
 *   GET    /v1/overhead-sets        -> {"overhead_sets": [{"id","name","traces","created_at"}]}
 *   GET    /v1/overhead-sets/{id}   -> {"id","name","traces","created_at","set"}
 *   DELETE /v1/overhead-sets/{id}   -> 204
 *   POST   /v1/experiments/{id}/profiles/{profile}/iteration
 *          {"overheads": id | "name"?, "kernel_times": {...}?,
 *           "profiler_overhead_us"?, "keep_outliers"?, "top"?}
 *                                    -> 200 the analysis document (iteration.h)
 *   POST   /v1/experiments/{id}/iteration-model
 *          {"profiles": [{"profile", "value"}, ...] (2 to 32, the first the
 *           trace to predict), "at": value, "overheads"?, "profiler_overhead_us"?,
 *           "keep_outliers"?, "top"?}
 *                                    -> 200 the analysis of the first trace with
 *                                       its kernel times modelled at "at" (PMNF per
 *                                       kernel across the traces), each step with
 *                                       "interval", and "modelled"
 *   GET    /v1/experiments/{id}/profiles/{profile}/breakdown
 *                                    -> 200 {"rank","steps":[{"index","label",
 *                                       "breakdown","efficiency"}],"breakdown",
 *                                       "efficiency"}
 * ?device=NAME on the iteration and breakdown routes: the GPU the efficiency
 * figures are measured against (api/devices.c), 404 naming "device" when
 * neither built in nor the tenant's.
 *
 *   GET    /v1/experiments/{id}/analyses/{run}, GET /v1/analyses/{run}
 *                                    -> 200 a run of the job workers: {"id",
 *                                       "experiment","profile","kind","state",
 *                                       "attempts",...,"result","error"}
 *
 * The traces are the raw bytes stored with each upload (profiles.raw), read
 * in memory; only Kineto uploads qualify (422 otherwise). Uploads stored in
 * more than IT_INLINE_BYTES (together, for the iteration model and a set's
 * measurement), or any with ?job=always, are analysed by a job worker
 * (store/iteration_runs.h, api_iteration_runs): the request checks what
 * it can and answers 202 with the run at Location; the worker runs the same
 * code on a request rebuilt from the run and keeps the answer document, or
 * the problem document, with the run. Bad input is a 4xx naming the field: an unknown profile or
 * set 404, a what-if entry naming nothing or a trace without correlation
 * ids 422 with the entry or the event, a trace beyond the size caps
 * (analysis/iteration_request.h: its stored bytes, the events of all the
 * analysis's traces together) 413 naming the cap; a queued run keeps the
 * caps it was asked under. A set is stored only once measured. The request
 * documents are read, and the breakdown view made, by
 * analysis/iteration_request.h; the stored traces are read, checked against
 * the caps and analysed by pipeline/iteration_job.h, for the request and for
 * the worker alike.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/iteration.h"
#include "analysis/iteration_request.h"
#include "pipeline/iteration_job.h"
#include "store/iteration_runs.h"
#include "store/overheads.h"
#include "common/jsonb.h"

/* Stored uploads above this many bytes are analysed by a job worker: the
 * request answers 202 with the run's location (about 0.05 s of analysis at
 * the reader's rate for plain JSON, 0.15 s for gzip, which holds ~8× as
 * much), so that no HTTP thread analyses for long. ?job=always queues any. */
#define IT_INLINE_BYTES ((size_t)1 << 20)

static void queue_run(api_ctx *ctx, api_request *req, const char *kind, const json_t *body,
                      api_response *resp);
static int check_job_param(const api_request *req, api_response *resp);

static void problem(api_response *resp, const an_problem *p)
{
    api_problem(resp, p->status, p->field[0] ? p->field : NULL, "%s", p->msg);
}

static iteration_caps caps_of(const api_ctx *ctx)
{
    return (iteration_caps){ctx->max_iteration_events, ctx->max_iteration_bytes};
}

/* Whose traces the request reads (exp 0: any of the tenant's), under the
 * server's caps. */
static it_job_in job_in(const api_ctx *ctx, const api_request *req, int64_t exp)
{
    return (it_job_in){req->tenant_id, exp, caps_of(ctx)};
}

/* A failed step of the analysis: a store error answered as every store
 * error is (503 with Retry-After, ...), else its problem. */
static void job_problem(api_response *resp, const it_job_error *e)
{
    if (e->from_store)
        api_store_problem(resp, &e->store);
    else
        problem(resp, &e->p);
}

/* The stored size of profile id (of experiment exp; 0: any of the
 * tenant's) into *len, checking that it exists (404) and is a Kineto trace
 * (422) within the bytes cap (413), naming field. 0, or -1 with resp answered. */
static int trace_size(api_ctx *ctx, PGconn *c, const api_request *req, api_response *resp,
                      int64_t exp, int64_t id, const char *field, size_t *len)
{
    it_job_in in = job_in(ctx, req, exp);
    it_job_error e;
    if (it_job_trace_size(c, &in, id, field, len, &e) < 0) {
        job_problem(resp, &e);
        return -1;
    }
    return 0;
}

/* "overheads": a set id or name of the tenant, into ov. 0, 1 (none asked),
 * -1 with resp answered. */
static int request_set(PGconn *c, const api_request *req, const json_t *v, xg_overheads *ov,
                        char *name, size_t cap, iteration_opts *o, api_response *resp)
{
    it_job_error e;
    int rs = it_job_overheads(c, req->tenant_id, v, ov, name, cap, o, &e);
    if (rs < 0)
        job_problem(resp, &e);
    return rs;
}

static json_t *set_json(const store_overhead_set *s, json_t *set)
{
    json_t *o = json_pack("{s:I, s:s, s:i, s:s}", "id", (json_int_t)s->id, "name", s->name,
                          "traces", s->traces, "created_at", s->created_at);
    if (set)
        json_object_set_new(o, "set", set);
    return o;
}

/* Stores set (taken) under name: the answer document {"id","name","traces",
 * "created_at","set"}, or NULL with resp answered. */
static json_t *store_set(PGconn *c, int64_t tenant, const char *name, int ntraces, json_t *set,
                         api_response *resp)
{
    size_t tl;
    store_error err;
    char *text = api_json_text(set, &tl);
    store_overhead_set s;
    int rc = text ? store_overheads_create(c, tenant, name, ntraces, text, &s, &err)
                  : store_error_set(&err, STORE_INTERNAL, "out of memory");
    free(text);
    if (rc) {
        api_store_problem(resp, &err);
        json_decref(set);
        return NULL;
    }
    store_overhead_set_free(&s);
    return set_json(&s, set);
}

/* Whether measuring a set on profiles goes to a job worker: their stored
 * bytes together over the threshold, or ?job=always. Checks the ids (400),
 * that each is the tenant's (404) Kineto upload (422), and that the name
 * is free (409). 0, or -1 with resp answered. */
static int set_queue(api_ctx *ctx, PGconn *c, const api_request *req, const char *name,
                     const json_t *ids, int *queue, api_response *resp)
{
    size_t n, total = 0;
    an_problem p;
    if (iteration_request_set_ids(ids, &n, &p) < 0) {
        problem(resp, &p);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int64_t id;
        char field[32];
        size_t len;
        snprintf(field, sizeof field, "profiles[%zu]", i);
        if (iteration_request_set_id(ids, i, &id, &p) < 0) {
            problem(resp, &p);
            return -1;
        }
        if (trace_size(ctx, c, req, resp, 0, id, field, &len))
            return -1;
        total += len;
    }
    const char *job = api_query(req, "job");
    *queue = total > IT_INLINE_BYTES || (job && !strcmp(job, "always"));
    if (*queue) {
        store_error err;
        store_overhead_set s;
        int rc = store_overheads_get_by_name(c, req->tenant_id, name, &s, &err);
        if (rc == STORE_OK) {
            store_overhead_set_free(&s);
            api_problem(resp, 409, "name", "an overhead set named \"%.100s\" exists", name);
            return -1;
        }
        if (rc != STORE_NOT_FOUND) {
            api_store_problem(resp, &err);
            return -1;
        }
    }
    return 0;
}

/* POST /v1/overhead-sets */
void api_overheads_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *doc;
    if (check_job_param(req, resp) < 0 || api_parse_object(req, resp, &doc))
        return;
    const char *name;
    json_t *given = json_object_get(doc, "set"), *ids = json_object_get(doc, "profiles");
    xg_ov_options prof;
    store_error err;
    an_problem p;
    PGconn *c = NULL;
    json_t *set = NULL;
    int ntraces = 1;
    size_t largest = 0;
    if (iteration_request_set(doc, &name, &prof, &p) < 0) {
        problem(resp, &p);
        goto done;
    }
    if (!(c = store_acquire(ctx->db, &err))) {
        api_store_problem(resp, &err);
        goto done;
    }
    int queue = 0;
    if (!given && set_queue(ctx, c, req, name, ids, &queue, resp) < 0)
        goto done;
    if (queue) {
        store_release(ctx->db, c);
        c = NULL;
        queue_run(ctx, req, "overhead-set", doc, resp);
        goto done;
    }
    if (given) {
        if (!(set = iteration_request_given_set(given, &ntraces, &p))) {
            problem(resp, &p);
            goto done;
        }
    } else {
        it_job_in in = job_in(ctx, req, 0);
        it_job_error e;
        if (!(set = it_job_measure(c, &in, ids, &prof, &ntraces, &largest, &e))) {
            job_problem(resp, &e);
            goto done;
        }
    }
    json_t *out = store_set(c, req->tenant_id, name, ntraces, set, resp);
    set = NULL;
    if (out)
        api_send_json(resp, 201, out);
done:
    store_release_sized(ctx->db, c, largest);
    json_decref(set);
    json_decref(doc);
}

void api_overheads_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t after;
    long limit;
    if (api_page_query(req, resp, 100, 1000, &after, &limit))
        return;
    store_error err;
    store_overhead_set *sets = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    /* one more than asked tells whether there is a next page */
    int rc = c ? store_overheads_list(c, req->tenant_id, after, (int)limit + 1, &sets, &n, &err)
               : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    int more = n > limit;
    if (more)
        n = (int)limit;
    json_t *list = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, set_json(&sets[i], NULL));
    json_t *next = api_next_cursor(more, n ? sets[n - 1].id : 0);
    free(sets);
    api_send_json(resp, 200, json_pack("{s:o, s:o}", "overhead_sets", list, "next_cursor", next));
}

void api_overheads_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "overhead set", &id))
        return;
    store_error err;
    store_overhead_set s;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_overheads_get(c, req->tenant_id, id, &s, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *set = jsonb_parse(s.doc, 0);
    store_overhead_set_free(&s);
    api_send_json(resp, 200, set_json(&s, set));
}

void api_overheads_delete(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "overhead set", &id))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_overheads_delete(c, req->tenant_id, id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc)
        api_store_problem(resp, &err);
    else
        api_send_empty(resp, 204);
}

/* The analysis of one profile with the options of body (may be NULL);
 * breakdown: for the breakdown view, which has no prediction to bound (no
 * interval computed). A trace too large to analyse in the request (or
 * ?job=always) is not read: *queue = 1 and NULL with resp untouched, once
 * the request is found valid. */
static json_t *analyse_profile(api_ctx *ctx, api_request *req, const json_t *body,
                               int breakdown, api_response *resp, int *queue)
{
    int64_t exp, profile;
    if (api_path_id(req, resp, "id", "experiment", &exp) ||
        api_path_id(req, resp, "profile", "profile", &profile))
        return NULL;
    iteration_opts o = {.breakdown = 1, .no_interval = breakdown};
    xg_kt_entry *kt = NULL;
    an_problem p;
    if (iteration_request_trace(body, &o, &kt, &p) < 0) {
        problem(resp, &p);
        free(kt);
        return NULL;
    }
    store_error err;
    xg_overheads ov = {0};
    char name[208];
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c) {
        api_store_problem(resp, &err);
        free(kt);
        return NULL;
    }
    xg_device dev;
    int has_dev;
    size_t len;
    const char *job = api_query(req, "job");
    it_job_in in = job_in(ctx, req, exp);
    it_job_error e;
    int rs = request_set(c, req, json_object_get(body, "overheads"), &ov, name, sizeof name, &o,
                         resp);
    if (rs >= 0 &&
        it_job_device(c, req->tenant_id, api_query(req, "device"), &dev, &has_dev, &e) < 0) {
        job_problem(resp, &e);
        rs = -1;
    }
    if (rs < 0 || trace_size(ctx, c, req, resp, exp, profile, NULL, &len) < 0 ||
        (*queue = len > IT_INLINE_BYTES || (job && !strcmp(job, "always")))) {
        store_release(ctx->db, c);
        xg_overheads_free(&ov);
        free(kt);
        return NULL;
    }
    o.device = has_dev ? &dev : NULL;
    json_t *doc = it_job_profile(ctx->db, c, &in, profile, &o, &e);
    if (!doc)
        job_problem(resp, &e);
    xg_overheads_free(&ov);
    free(kt);
    return doc;
}

/* ---- analyses as jobs ------------------------------------------------------------------ */

/* ?job=auto|always. 0, or -1 after a 400. */
static int check_job_param(const api_request *req, api_response *resp)
{
    const char *job = api_query(req, "job");
    if (job && strcmp(job, "auto") && strcmp(job, "always")) {
        api_problem(resp, 400, "job", "must be auto (a job for uploads over %zu MiB) or always",
                    IT_INLINE_BYTES >> 20);
        return -1;
    }
    return 0;
}

/* Queues the analysis of the request's profile: 202 with the run and its
 * Location. */
static void queue_run(api_ctx *ctx, api_request *req, const char *kind, const json_t *body,
                      api_response *resp)
{
    int64_t exp = 0, profile;
    int tenant_level = !strcmp(kind, "overhead-set");
    if (!tenant_level && api_path_id(req, resp, "id", "experiment", &exp))
        return;
    if (tenant_level)
        profile = json_integer_value(json_array_get(json_object_get(body, "profiles"), 0));
    else if (!strcmp(kind, "iteration-model"))
        profile = json_integer_value(
            json_object_get(json_array_get(json_object_get(body, "profiles"), 0), "profile"));
    else if (api_path_id(req, resp, "profile", "profile", &profile))
        return;
    const char *device = api_query(req, "device");
    iteration_caps caps = iteration_caps_effective(caps_of(ctx));
    json_t *rq = json_pack("{s:O, s:o, s:{s:I, s:I}}", "body", body ? body : json_null(),
                           "device", device ? json_string(device) : json_null(), "caps",
                           "events", (json_int_t)caps.events, "bytes", (json_int_t)caps.bytes);
    size_t len;
    store_it_run r = {.tenant_id = req->tenant_id, .experiment_id = exp, .profile_id = profile};
    snprintf(r.kind, sizeof r.kind, "%s", kind);
    r.request = rq ? api_json_text(rq, &len) : NULL;
    json_decref(rq);
    store_error err;
    PGconn *c = r.request ? store_acquire(ctx->db, &err) : NULL;
    int rc = !r.request ? store_error_set(&err, STORE_INTERNAL, "out of memory")
             : c        ? store_it_run_add(c, &r, &err)
                        : err.code;
    store_release(ctx->db, c);
    if (rc) {
        store_queued_run_free(&r);
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 202, api_queued_run_json(&r, 1));
    if (tenant_level)
        api_add_header(resp, "Location", "/v1/analyses/%" PRId64, r.id);
    else
        api_add_header(resp, "Location", "/v1/experiments/%" PRId64 "/analyses/%" PRId64, exp,
                       r.id);
    store_queued_run_free(&r);
}

void api_profile_iteration(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *body = NULL;
    if (check_job_param(req, resp) < 0 ||
        (req->body_len > 0 && api_parse_object(req, resp, &body)))
        return;
    int queue = 0;
    json_t *doc = analyse_profile(ctx, req, body, 0, resp, &queue);
    if (queue)
        queue_run(ctx, req, "iteration", body, resp);
    json_decref(body);
    if (doc)
        api_send_json(resp, 200, doc);
}

void api_profile_breakdown(api_ctx *ctx, api_request *req, api_response *resp)
{
    if (check_job_param(req, resp) < 0)
        return;
    int queue = 0;
    json_t *doc = analyse_profile(ctx, req, NULL, 1, resp, &queue);
    if (queue)
        queue_run(ctx, req, "breakdown", NULL, resp);
    if (doc)
        api_send_json(resp, 200, iteration_breakdown_view(doc));
}

/* GET /v1/experiments/{id}/analyses/{run}, GET /v1/analyses/{run} */
void api_analysis_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t exp = 0, id;
    if ((api_path_param(req, "id") && api_path_id(req, resp, "id", "experiment", &exp)) ||
        api_path_id(req, resp, "run", "analysis", &id))
        return;
    store_error err;
    store_it_run r;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_it_run_get(c, req->tenant_id, exp, id, &r, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 200, api_queued_run_json(&r, 1));
    store_queued_run_free(&r);
}

/* The analysis a claimed run asks for, as the request would have had it
 * analysed (pipeline/iteration_job.h; a measured set stored as the request
 * stores it): result text, or NULL with *error the problem document text. */
static char *run_analysis(store *db, const void *row, char **error)
{
    const store_it_run *r = row;
    api_response resp = {0};
    it_job_error e;
    char name[256];
    int ntraces = 1;
    size_t len;
    char *text = NULL;
    json_t *doc = it_job_run_claimed(db, r, name, sizeof name, &ntraces, &e);
    if (!doc)
        job_problem(&resp, &e);
    else if (!strcmp(r->kind, "overhead-set")) {
        store_error err;
        PGconn *c = store_acquire(db, &err);
        if (!c) {
            api_store_problem(&resp, &err);
            json_decref(doc);
            doc = NULL;
        } else
            doc = store_set(c, r->tenant_id, name, ntraces, doc, &resp);
        store_release(db, c);
    }
    if (doc) {
        text = api_json_text(doc, &len);
        json_decref(doc);
    }
    if (!text) {
        *error = resp.body && resp.body_len ? strndup(resp.body, resp.body_len) : NULL;
        if (!*error)
            *error = strdup("{\"status\":500,\"detail\":\"out of memory\"}");
    }
    api_response_free(&resp);
    return text;
}

static int claim(PGconn *c, const char *worker, double lease_seconds, void *row,
                 run_loop_held *held, store_error *err)
{
    store_it_run *r = row;
    int rc = store_it_run_claim(c, worker, lease_seconds, r, err);
    *held = (run_loop_held){r->id, r->attempts, "analysing traces"};
    return rc;
}

static void release(void *row)
{
    store_queued_run_free(row);
}

const run_loop_kind api_iteration_runs = {
    .name = "it", .type = RUN_LOOP_ITERATION, .row_size = sizeof(store_it_run), .claim = claim,
    .heartbeat = store_it_run_heartbeat, .run = run_analysis, .finish = store_it_run_finish,
    .release = release};

/* Whether the traces of an iteration-model request go to a job worker:
 * their stored bytes together over the threshold, or ?job=always. Checks
 * each entry (400), that it exists (404) and is a Kineto upload (422).
 * 0, or -1 with resp answered. */
static int model_queue(api_ctx *ctx, PGconn *c, const api_request *req, int64_t exp,
                       const json_t *body, size_t n, int *queue, api_response *resp)
{
    size_t total = 0;
    an_problem p;
    for (size_t i = 0; i < n; i++) {
        int64_t profile;
        double x;
        char field[48];
        snprintf(field, sizeof field, "profiles[%zu]", i);
        if (iteration_request_model_entry(body, i, &profile, &x, NULL, &p) < 0) {
            problem(resp, &p);
            return -1;
        }
        size_t len;
        if (trace_size(ctx, c, req, resp, exp, profile, field, &len))
            return -1;
        total += len;
    }
    const char *job = api_query(req, "job");
    *queue = total > IT_INLINE_BYTES || (job && !strcmp(job, "always"));
    return 0;
}

/* POST /v1/experiments/{id}/iteration-model */
void api_iteration_model(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t exp;
    json_t *body;
    if (check_job_param(req, resp) < 0 ||
        api_path_id(req, resp, "id", "experiment", &exp) || api_parse_object(req, resp, &body))
        return;
    iteration_opts o = {.breakdown = 1};
    size_t n = 0;
    double at;
    xg_overheads ov = {0};
    json_t *doc = NULL;
    char name[208];
    PGconn *c = NULL;
    store_error err;
    an_problem p;
    int method;
    if (iteration_request_model(body, &o, &method, &at, &n, &p) < 0) {
        problem(resp, &p);
        goto done;
    }
    if (!(c = store_acquire(ctx->db, &err))) {
        api_store_problem(resp, &err);
        goto done;
    }
    int rs = request_set(c, req, json_object_get(body, "overheads"), &ov, name, sizeof name, &o,
                         resp);
    if (rs < 0)
        goto done;
    int queue = 0;
    if (model_queue(ctx, c, req, exp, body, n, &queue, resp) < 0)
        goto done;
    if (queue) {
        store_release(ctx->db, c);
        c = NULL;
        queue_run(ctx, req, "iteration-model", body, resp);
        goto done;
    }
    it_job_in in = job_in(ctx, req, exp);
    it_job_error e;
    doc = it_job_model(ctx->db, c, &in, body, n, at, method, &o, &e);
    c = NULL; /* given back */
    if (!doc) {
        job_problem(resp, &e);
        goto done;
    }
    api_send_json(resp, 200, doc);
done:
    store_release(ctx->db, c);
    xg_overheads_free(&ov);
    json_decref(body);
}
