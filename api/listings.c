/*
 * listings.c — GET /v1/experiments/{id}/profiles and GET
 * /v1/simulations/{id}/runs: what was uploaded to an experiment and what
 * was run on a simulation, a page at a time (limit, cursor, next_cursor),
 * oldest first. An upload's point is an object keyed by the experiment's
 * parameters, as everywhere else; raw bytes and run results stay behind
 * their own routes (.../profiles/{pid}/iteration, .../runs/{run}).
 */
#include <stdlib.h>

#include "api/handlers.h"
#include "store/experiments.h"
#include "store/listings.h"

/* The point array of a listed upload as {"name": value} in parameter order. */
static void point_as_object(json_t *row, const store_experiment *e)
{
    json_t *arr = json_object_get(row, "point");
    if (!json_is_array(arr))
        return;
    json_t *pt = json_object();
    for (int i = 0; i < e->nparams && (size_t)i < json_array_size(arr); i++)
        json_object_set(pt, e->parameters[i], json_array_get(arr, (size_t)i));
    json_object_set_new(row, "point", pt);
}

/* The page as {key: [...], "next_cursor": ...}; e (may be NULL) names points. */
static void send_listing(api_response *resp, const char *key, store_listing *l, long limit,
                         const store_experiment *e)
{
    int more = l->n > limit, n = more ? (int)limit : l->n;
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        json_t *row = json_loads(l->rows[i], 0, NULL);
        if (!row)
            continue;
        if (e)
            point_as_object(row, e);
        json_array_append_new(arr, row);
    }
    json_t *next = api_next_cursor(more, n ? l->ids[n - 1] : 0);
    api_send_json(resp, 200, json_pack("{s:o, s:o}", key, arr, "next_cursor", next));
}

void api_profiles_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id, after;
    long limit;
    if (api_path_id(req, resp, "id", "experiment", &id) ||
        api_page_query(req, resp, 100, 1000, &after, &limit))
        return;
    store_error err;
    store_experiment e = {0};
    store_listing l = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    /* one more than asked tells whether there is a next page */
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    if (!rc)
        rc = store_profile_list(c, id, after, (int)limit + 1, &l, &err);
    store_release(ctx->db, c);
    if (rc)
        api_store_problem(resp, &err);
    else
        send_listing(resp, "profiles", &l, limit, &e);
    store_listing_free(&l);
    store_experiment_free(&e);
}

void api_sim_runs_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id, after;
    long limit;
    if (api_path_id(req, resp, "id", "simulation", &id) ||
        api_page_query(req, resp, 100, 1000, &after, &limit))
        return;
    store_error err;
    store_listing l = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_run_list(c, id, after, (int)limit + 1, &l, &err) : err.code;
    store_release(ctx->db, c);
    if (rc)
        api_store_problem(resp, &err);
    else
        send_listing(resp, "runs", &l, limit, NULL);
    store_listing_free(&l);
}
