/*
 * search_runs.c — configuration searches and advice off the HTTP threads:
 * a request over more candidates than its handler answers at once (see
 * api/configurations.c, api/advice.c), or with ?job=always, is stored
 * queued (store/search_runs.h) and answered 202 with the run and its
 * Location; a job worker (server/workers.c) runs it through the same
 * handler code, as the request would have been answered, and keeps the
 * answer document, or the problem it met.
 *
 *   GET /v1/experiments/{id}/searches/{run}   the run: kind, state, the
 *        request, and once done its "result" (the answer the request would
 *        have had) or once failed its "error" (the problem document)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "api/model_cache.h"
#include "common/jsonb.h"
#include "store/search_runs.h"

#define SEARCH_QUERY_MAX 16 /* query parameters a stored request keeps */

int api_search_job_param(const api_request *req, api_response *resp, int *always)
{
    const char *job = api_query(req, "job");
    if (job && strcmp(job, "auto") && strcmp(job, "always")) {
        api_problem(resp, 400, "job", "must be auto (a job when the search is large) or always");
        return -1;
    }
    *always = job && !strcmp(job, "always");
    return 0;
}

void api_search_queue(api_ctx *ctx, const api_request *req, api_response *resp, int64_t exp,
                      const char *kind, const json_t *body)
{
    json_t *query = json_object();
    for (size_t i = 0; query && i < req->nquery; i++)
        if (strcmp(req->query[i].name, "job") && strcmp(req->query[i].name, "strict"))
            json_object_set_new(query, req->query[i].name, json_string(req->query[i].value ?: ""));
    json_t *rq = json_pack("{s:o, s:O}", "query", query, "body", (json_t *)body);
    size_t len;
    store_search_run r = {.tenant_id = req->tenant_id, .experiment_id = exp,
                          .request = rq ? api_json_text(rq, &len) : NULL};
    json_decref(rq);
    snprintf(r.kind, sizeof r.kind, "%s", kind);
    if (!r.request) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_search_run_add(c, &r, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        store_queued_run_free(&r);
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 202, api_queued_run_json(&r, 0));
    api_add_header(resp, "Location", "/v1/experiments/%" PRId64 "/searches/%" PRId64, exp, r.id);
    store_queued_run_free(&r);
}

void api_search_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t exp, id;
    if (api_path_id(req, resp, "id", "experiment", &exp) ||
        api_path_id(req, resp, "run", "search", &id))
        return;
    store_error err;
    store_search_run r;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_search_run_get(c, req->tenant_id, exp, id, &r, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 200, api_queued_run_json(&r, 0));
    store_queued_run_free(&r);
}

/* The answer a claimed run's request would have had: its text, or NULL
 * with *error the problem document's text. A cache of its own holds the
 * models it reads. */
static char *run_search(store *db, const void *row, char **error)
{
    const store_search_run *r = row;
    json_t *rq = jsonb_parse(r->request ? r->request : "", 0);
    const json_t *body = json_object_get(rq, "body");
    api_kv query[SEARCH_QUERY_MAX];
    size_t nq = 0;
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(rq, "query"), k, v)
    {
        if (nq < SEARCH_QUERY_MAX)
            query[nq++] = (api_kv){k, json_string_value(v) ?: ""};
    }
    size_t len;
    char *b = json_is_object(body) ? api_json_text(body, &len) : NULL;
    api_request req = {.method = "POST", .path = "", .query = query, .nquery = nq,
                       .body = b ? b : "", .body_len = b ? len : 0, .tenant_id = r->tenant_id,
                       .nparams = 1};
    req.route = !strcmp(r->kind, "advice") ? "/v1/experiments/{id}/advice"
                                           : "/v1/experiments/{id}/configurations";
    snprintf(req.param_buf, sizeof req.param_buf, "%" PRId64, r->experiment_id);
    req.params[0] = (api_kv){"id", req.param_buf};
    api_ctx ctx = {.db = db, .models = model_cache_new(1000)};
    api_response resp = {0};
    if (!ctx.models)
        api_problem(&resp, 500, NULL, "out of memory");
    else if (!strcmp(r->kind, "advice"))
        api_advice_search(&ctx, &req, &resp, 1);
    else
        api_configurations_search(&ctx, &req, &resp, 1);
    size_t tlen = resp.body_len;
    const char *t = resp.shared ? api_shared_text(resp.shared, &tlen) : resp.body;
    char *text = NULL;
    *error = NULL;
    if (resp.status == 200 && t)
        text = strndup(t, tlen);
    else if (t && tlen)
        *error = strndup(t, tlen);
    if (!text && !*error)
        *error = strdup("{\"type\":\"about:blank\",\"title\":\"Internal Server Error\","
                        "\"status\":500,\"detail\":\"out of memory\"}");
    api_response_free(&resp);
    if (ctx.models)
        model_cache_free(ctx.models);
    free(b);
    json_decref(rq);
    return text;
}

static int claim(PGconn *c, const char *worker, double lease_seconds, void *row,
                 run_loop_held *held, store_error *err)
{
    store_search_run *r = row;
    int rc = store_search_run_claim(c, worker, lease_seconds, r, err);
    *held = (run_loop_held){r->id, r->attempts,
                            !strcmp(r->kind, "advice") ? "searching for advice"
                                                       : "searching configurations"};
    return rc;
}

/* tests: a worker crashed, killed or held on the run */
static void test_points(const void *row, int (*test_hook)(const char *point, const char *detail))
{
    const store_search_run *r = row;
    test_hook("search-request", r->request);
    test_hook("search-run", r->kind);
}

static void release(void *row)
{
    store_queued_run_free(row);
}

const run_loop_kind api_search_runs = {
    .name = "search", .type = RUN_LOOP_SEARCH, .row_size = sizeof(store_search_run),
    .claim = claim, .heartbeat = store_search_run_heartbeat, .test_points = test_points,
    .run = run_search, .finish = store_search_run_finish, .release = release};
