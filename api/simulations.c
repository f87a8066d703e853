/*
 * simulations.c — the asynchronous-SGD simulator over HTTP: simulation
 * experiments (tenant-owned, api_authorize() checks the {id} as for
 * experiments), uploads of one worker's step graph or trace, and runs.
 *
 *   POST   /v1/simulations                      create {name, batch_size, overhead}
 *   GET    /v1/simulations                      the tenant's, by id (?limit=, ?cursor=)
 *   GET    /v1/simulations/{id}                 one, with its profiles
 *   DELETE /v1/simulations/{id}                 with its profiles and runs
 *   POST   /v1/simulations/{id}/profiles        a step graph, TensorFlow timeline or
 *                                               Kineto trace (ingest/simgraph.h)
 *   POST   /v1/simulations/{id}/runs[?job=always]  a request (analysis/sim_request.h); small
 *                                               runs (API_SIM_DIRECT_EVENTS) answer 201
 *                                               with the result, larger ones (or any with
 *                                               ?job=always) 202 queued for a worker
 *                                               thread, decided without reading the graph
 *   GET    /v1/simulations/{id}/runs/{run}      a run and, once done, its result
 *
 * Bad input answers 400 with "field" (and "operation" and "step" when an
 * operation is at fault); nothing is stored then.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/handlers.h"
#include "analysis/sim_request.h"
#include "analysis/sim_spec.h"
#include "common/memtrim.h"
#include "pipeline/sim_job.h"
#include "ingest/simgraph.h"
#include "store/simulations.h"
#include "common/jsonb.h"

static json_t *sim_view(const store_sim *s)
{
    json_t *o = json_pack("{s:I, s:s}", "id", (json_int_t)s->id, "name", s->name);
    json_object_update(o, s->spec);
    json_object_set_new(o, "created_at", json_string(s->created_at));
    return o;
}

static json_t *profile_view(const store_sim_profile *p)
{
    return json_pack("{s:I, s:I, s:s, s:i, s:i, s:i, s:s}", "id", (json_int_t)p->id,
                     "simulation", (json_int_t)p->sim_id, "source", p->source, "steps", p->steps,
                     "ops", p->ops, "servers", p->servers, "created_at", p->created_at);
}

/* 400 naming the operation (when there is one), the field, and the byte
 * offset where the body is not JSON. */
static void graph_problem(api_response *resp, const sim_error *e)
{
    char field[256], detail[600];
    sim_error_field(e, field, sizeof field);
    if (e->op[0])
        snprintf(detail, sizeof detail, "operation \"%s\" of step %d, %s: %s", e->op, e->step,
                 e->field, e->msg);
    else
        snprintf(detail, sizeof detail, "%s%s%s", field, field[0] ? ": " : "", e->msg);
    json_t *doc = json_pack("{s:s, s:s, s:i, s:s}", "type", "about:blank", "title",
                            api_status_title(400), "status", 400, "detail", detail);
    if (doc && field[0])
        json_object_set_new(doc, "field", json_string(field));
    if (doc && e->op[0]) {
        json_object_set_new(doc, "operation", json_string(e->op));
        json_object_set_new(doc, "step", json_integer(e->step));
    }
    if (doc && !e->field[0] && e->offset >= 0)
        json_object_set_new(doc, "offset", json_integer(e->offset));
    size_t len = 0;
    char *text = doc ? api_json_text(doc, &len) : NULL;
    json_decref(doc);
    if (!text) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    api_send_body(resp, 400, "application/problem+json", text, len);
}

void api_sim_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *body;
    if (api_parse_object(req, resp, &body))
        return;
    store_sim s = {.tenant_id = req->tenant_id};
    const char *name;
    an_problem p;
    if (sim_spec_parse(body, &name, &s.spec, &p)) {
        api_problem(resp, p.status, p.field, "%s", p.msg);
        json_decref(body);
        return;
    }
    s.name = (char *)name;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_create(c, &s, &err) : err.code;
    store_release(ctx->db, c);
    if (rc == STORE_CONFLICT && s.id > 0)
        api_name_taken(resp, "a simulation", name, "/v1/simulations", s.id);
    else if (rc == STORE_CONFLICT)
        api_problem(resp, 409, "name", "this tenant has a simulation named \"%.80s\"", name);
    else if (rc)
        api_store_problem(resp, &err);
    else
        api_send_json(resp, 201, sim_view(&s));
    json_decref(s.spec);
    json_decref(body);
}

void api_sim_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t after;
    long limit;
    if (api_page_query(req, resp, 100, 1000, &after, &limit))
        return;
    store_error err;
    store_sim *v = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    /* one more than asked tells whether there is a next page */
    int rc = c ? store_sim_list(c, req->tenant_id, after, (int)limit + 1, &v, &n, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    int total = n, more = n > limit;
    if (more)
        n = (int)limit;
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, sim_view(&v[i]));
    json_t *next = api_next_cursor(more, n ? v[n - 1].id : 0);
    store_sim_list_free(v, total);
    api_send_json(resp, 200, json_pack("{s:o, s:o}", "simulations", arr, "next_cursor", next));
}

static int sim_id(api_request *req, api_response *resp, int64_t *id)
{
    return api_path_id(req, resp, "id", "simulation", id);
}

void api_sim_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (sim_id(req, resp, &id))
        return;
    store_error err;
    store_sim s;
    store_sim_profile *p = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_get(c, id, &s, &err) : err.code;
    if (!rc && (rc = store_sim_profile_list(c, id, &p, &n, &err)))
        store_sim_free(&s);
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *doc = sim_view(&s), *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, profile_view(&p[i]));
    json_object_set_new(doc, "profiles", arr);
    free(p);
    store_sim_free(&s);
    api_send_json(resp, 200, doc);
}

void api_sim_delete(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (sim_id(req, resp, &id))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_delete(c, id, req->tenant_id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc)
        api_store_problem(resp, &err);
    else
        api_send_empty(resp, 204);
}

void api_sim_profile_upload(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (sim_id(req, resp, &id))
        return;
    if (!req->body_len) {
        api_problem(resp, 400, NULL, "the body must be a step graph, a TensorFlow timeline or a "
                    "Kineto trace (JSON)");
        return;
    }
    simgraph_doc d;
    sim_error e = {0};
    if (simgraph_read_pieces(req->body, req->body_len, &d, &e, api_body_done, req)) {
        memtrim();
        graph_problem(resp, &e);
        return;
    }
    /* a step graph is kept once, as uploaded (the stored graph is then "");
     * a trace, with the step graph made of it */
    int own = !strcmp(d.source, "stepgraph");
    char *graph = own ? strdup("") : simgraph_to_json(&d);
    store_sim_profile p = {.sim_id = id, .steps = d.graph.nsteps,
                           .ops = (int)sim_graph_nops(&d.graph), .servers = d.graph.servers};
    snprintf(p.source, sizeof p.source, "%s", d.source);
    simgraph_doc_free(&d);
    memtrim();
    unsigned char sha[32]; /* the body read again once the graph is gone */
    SHA256((const unsigned char *)req->body, req->body_len, sha);
    if (!graph) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    store_error err;
    int dup = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_profile_add(c, &p, req->body, req->body_len, sha, graph, &dup, &err)
               : err.code;
    store_release_sized(ctx->db, c, req->body_len + strlen(graph));
    free(graph);
    memtrim();
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *doc = profile_view(&p);
    json_object_set_new(doc, "duplicate", json_boolean(dup));
    api_send_json(resp, dup ? 200 : 201, doc);
}

static json_t *run_view(const store_sim_run *r)
{
    json_t *o = json_pack("{s:I, s:I, s:I, s:s, s:O, s:s}", "id", (json_int_t)r->id,
                          "simulation", (json_int_t)r->sim_id, "profile",
                          (json_int_t)r->profile_id, "state", r->state, "request", r->request,
                          "created_at", r->created_at);
    json_object_set_new(o, "finished_at",
                        r->finished_at[0] ? json_string(r->finished_at) : json_null());
    json_t *res = r->result ? jsonb_parse(r->result, 0) : NULL;
    json_object_set_new(o, "result", res ? res : json_null());
    json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null());
    return o;
}

/* The stored profile a run reads (profile, or the newest when 0): its id
 * into *profile and its mean operations per step and operations, from what
 * the upload recorded, without reading the graph. 0, or -1 answered. */
static int run_profile(PGconn *c, int64_t sim, int64_t *profile, double *ops_per_step,
                       int *ops, api_response *resp, int named)
{
    store_error err;
    store_sim_profile *p = NULL;
    int n = 0;
    int rc = c ? store_sim_profile_list(c, sim, &p, &n, &err) : STORE_UNAVAILABLE;
    if (!c)
        store_error_set(&err, STORE_UNAVAILABLE, "the database is unreachable");
    if (rc) {
        api_store_problem(resp, &err);
        return -1;
    }
    const store_sim_profile *pick = NULL;
    for (int i = 0; i < n; i++)
        if (*profile ? p[i].id == *profile : !pick || p[i].id > pick->id)
            pick = &p[i];
    if (!pick) {
        if (named)
            api_problem(resp, 404, "profile", "no profile %" PRId64 " in simulation %" PRId64,
                        *profile, sim);
        else
            api_problem(resp, 404, NULL, "simulation %" PRId64 " has no profile yet", sim);
        free(p);
        return -1;
    }
    *profile = pick->id;
    *ops = pick->ops;
    *ops_per_step = (double)pick->ops / (pick->steps > 0 ? pick->steps : 1);
    free(p);
    return 0;
}

/* A run of at most API_SIM_DIRECT_EVENTS on a graph of at most
 * API_SIM_DIRECT_OPS operations is simulated here and answered 201; any
 * other (or ?job=always) is stored queued and answered 202 without the
 * graph being read on this thread: a worker thread loads and simulates it
 * (api_sim_runs). */
void api_sim_run_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (sim_id(req, resp, &id))
        return;
    const char *job = api_query(req, "job");
    if (job && strcmp(job, "auto") && strcmp(job, "always")) {
        api_problem(resp, 400, "job", "job is \"auto\" (the default) or \"always\"");
        return;
    }
    json_t *body;
    if (api_parse_object(req, resp, &body))
        return;
    int64_t profile = 0;
    json_t *pj = json_object_get(body, "profile");
    if (pj) {
        if (!json_is_integer(pj) || json_integer_value(pj) < 1) {
            api_problem(resp, 400, "profile", "profile must be a profile id of this simulation");
            json_decref(body);
            return;
        }
        profile = json_integer_value(pj);
        json_object_del(body, "profile");
    }
    api_sim_request r;
    api_sim_request_default(&r);
    char field[64], msg[256];
    if (api_sim_request_parse(body, &r, field, sizeof field, msg, sizeof msg)) {
        api_problem(resp, 400, field, "%s", msg);
        json_decref(body);
        return;
    }
    json_decref(body);
    store_error err;
    double ops_per_step = 0;
    int ops = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    int bad = run_profile(c, id, &profile, &ops_per_step, &ops, resp, pj != NULL);
    store_release(ctx->db, c);
    if (bad)
        return;
    double events = api_sim_request_events_of(&r, ops_per_step);
    if (events > (double)API_SIM_MAX_EVENTS) {
        api_problem(resp, 400, api_sim_request_heaviest(&r),
                    "the run needs about %.3g events, more than %.3g: ask for fewer steps, "
                    "workers, servers, replications or what-ifs", events,
                    (double)API_SIM_MAX_EVENTS);
        return;
    }
    store_sim_run run = {.sim_id = id, .profile_id = profile, .request = api_sim_request_json(&r)};
    int direct = events <= (double)API_SIM_DIRECT_EVENTS && ops <= API_SIM_DIRECT_OPS &&
                 !(job && !strcmp(job, "always"));
    char *result = NULL;
    if (direct) {
        sim_error e = {0};
        json_t *doc = sim_job_run(ctx->db, id, &profile, &r, &err, &e);
        if (!doc) {
            json_decref(run.request);
            if (err.code)
                api_store_problem(resp, &err);
            else
                graph_problem(resp, &e);
            return;
        }
        size_t rlen;
        result = api_json_text(doc, &rlen);
        json_decref(doc);
    }
    snprintf(run.state, sizeof run.state, "%s", direct ? "done" : "queued");
    run.result = result;
    c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_run_add(c, &run, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        store_sim_run_free(&run);
        api_store_problem(resp, &err);
        return;
    }
    json_t *view = run_view(&run);
    int64_t run_id = run.id;
    store_sim_run_free(&run);
    api_send_json(resp, direct ? 201 : 202, view);
    api_add_header(resp, "Location", "/v1/simulations/%" PRId64 "/runs/%" PRId64, id, run_id);
}

void api_sim_run_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id, rid;
    if (sim_id(req, resp, &id) || api_path_id(req, resp, "run", "run", &rid))
        return;
    store_error err;
    store_sim_run r;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_sim_run_get(c, id, rid, &r, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *view = run_view(&r);
    store_sim_run_free(&r);
    api_send_json(resp, 200, view);
}

/* ---- queued runs: claimed, leased and finished by pipeline/run_loop.h ---- */

static int claim(PGconn *c, const char *worker, double lease_seconds, void *row,
                 run_loop_held *held, store_error *err)
{
    store_sim_run *r = row;
    int rc = store_sim_run_claim(c, worker, lease_seconds, r, err);
    *held = (run_loop_held){r->id, r->attempts, "simulating"};
    return rc;
}

/* The simulation of claimed run row (pipeline/sim_job.h): its result
 * document as text, or NULL with why. */
static char *run_claimed(store *db, const void *row, char **error)
{
    char why[400] = "";
    json_t *doc = sim_job_run_claimed(db, row, why, sizeof why);
    size_t rlen;
    char *result = doc ? api_json_text(doc, &rlen) : NULL;
    if (doc && !result)
        snprintf(why, sizeof why, "out of memory");
    json_decref(doc);
    if (!result)
        *error = strdup(why);
    return result;
}

/* A lease lost meanwhile (STORE_CONFLICT): the run is another worker's now. */
static int finish(PGconn *c, int64_t id, const char *worker, int attempt, const char *result,
                  const char *error, store_error *err)
{
    int rc = store_sim_run_finish(c, id, worker, attempt, result, error, err);
    return rc == STORE_CONFLICT ? STORE_OK : rc;
}

static void release(void *row)
{
    store_sim_run_free(row);
}

const run_loop_kind api_sim_runs = {
    .name = "sim", .type = RUN_LOOP_SIMULATION, .row_size = sizeof(store_sim_run),
    .claim = claim, .heartbeat = store_sim_run_heartbeat, .run = run_claimed,
    .finish = finish, .release = release};
