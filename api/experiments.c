/*
 * experiments.c — /v1/experiments: create (strictly validated), list, get,
 * delete.
 *
 * The creation document is checked field by field by
 * analysis/experiment_doc.h; the first fault answers 400 naming the field
 * ("training.batch_size: must be an integer > 0, got -3"). What is stored
 * (store/experiments.h) is the normalized document: optional training
 * fields filled with their defaults, degrees of parallelism as text.
 *
 * View of an experiment: {"id","name","parameters","scaling","modeler","training",
 * "cost","created_at"} — the columns plus the keys of the stored spec.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/experiment_doc.h"
#include "api/auth_cache.h"
#include "api/handlers.h"
#include "store/experiments.h"

#define LIST_DEFAULT 100
#define LIST_MAX 1000

/* --- views --------------------------------------------------------------- */

static json_t *experiment_view(const store_experiment *e)
{
    json_t *params = json_array();
    for (int i = 0; params && i < e->nparams; i++)
        json_array_append_new(params, json_string(e->parameters[i]));
    json_t *v = json_pack("{s:I, s:s, s:o, s:s}", "id", (json_int_t)e->id, "name", e->name,
                          "parameters", params, "scaling", e->scaling);
    if (!v || experiment_doc_view_spec(v, e->spec) < 0) {
        json_decref(v);
        return NULL;
    }
    json_object_set_new(v, "created_at", json_string(e->created_at));
    return v;
}

/* --- handlers ------------------------------------------------------------ */

void api_experiment_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *doc;
    if (api_parse_object(req, resp, &doc))
        return;
    experiment_doc d = {0};
    an_problem p;
    int bad = experiment_doc_validate(doc, &d, &p);
    json_decref(doc);
    if (bad) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        experiment_doc_free(&d);
        return;
    }
    /* e takes what d holds */
    store_experiment e = {.name = d.name, .scaling = d.scaling, .parameters = d.parameters,
                          .nparams = d.nparams, .spec = d.spec};
    store_error err;
    e.tenant_id = req->tenant_id;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_create(c, &e, &err) : err.code;
    store_release(ctx->db, c);
    if (rc == STORE_CONFLICT && e.id > 0) {
        api_name_taken(resp, "an experiment", e.name, "/v1/experiments", e.id);
    } else if (rc) {
        api_store_problem(resp, &err);
    } else {
        api_send_json(resp, 201, experiment_view(&e));
        api_add_header(resp, "Location", "/v1/experiments/%" PRId64, e.id);
    }
    store_experiment_free(&e);
}

void api_experiment_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id))
        return;
    store_error err;
    store_experiment e;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 200, experiment_view(&e));
    store_experiment_free(&e);
}

void api_experiment_delete(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_delete(c, id, req->tenant_id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    if (ctx->models)
        model_cache_forget(ctx->models, id);
    if (ctx->auth)
        auth_cache_owner_forget(ctx->auth, id);
    api_send_empty(resp, 204);
}

void api_experiment_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    /* one paging scheme on every listing: ?cursor= from the last page's
     * next_cursor (here the last id seen, opaque to clients) */
    int64_t after;
    long limit;
    if (api_page_query(req, resp, LIST_DEFAULT, LIST_MAX, &after, &limit))
        return;
    store_error err;
    store_experiment *v = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    /* one more than asked tells whether there is a next page */
    int rc = c ? store_experiment_list(c, req->tenant_id, after, (int)limit + 1, &v, &n, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    int total = n, more = n > limit;
    if (more)
        n = (int)limit;
    json_t *items = json_array();
    for (int i = 0; items && i < n; i++)
        json_array_append_new(items, experiment_view(&v[i]));
    json_t *next = api_next_cursor(more, n ? v[n - 1].id : 0);
    store_experiment_list_free(v, total);
    api_send_json(resp, 200, json_pack("{s:o, s:o}", "experiments", items, "next_cursor", next));
}
