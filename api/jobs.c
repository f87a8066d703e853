/*
 * jobs.c — GET /v1/jobs/{id}, where an upload's 202 points, and the jobs-by-
 * state figures of /metrics.
 *
 * View of a job: {"id","experiment","state":"queued|running|done|failed",
 * "attempts","max_attempts","error":null|"...","model_set":null|N,
 * "worker":null|"host/pid/n","created_at","started_at","finished_at",
 * "lease_until"} — model_set is the set's number within the experiment (as
 * the model endpoints show it), timestamps RFC 3339 UTC or null.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/commits.h"
#include "api/handlers.h"
#include "modeling/modeler.h"
#include "store/job_modeler.h"
#include "store/jobs.h"

static json_t *string_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *job_view(const store_job *j)
{
    json_t *v = json_pack("{s:I, s:I, s:s, s:i, s:i}", "id", (json_int_t)j->id, "experiment",
                          (json_int_t)j->experiment_id, "state", store_job_state_name(j->state),
                          "attempts", j->attempts, "max_attempts", j->max_attempts);
    if (!v)
        return NULL;
    json_object_set_new(v, "error", string_or_null(j->error));
    json_object_set_new(v, "model_set",
                        j->model_set_number > 0 ? json_integer(j->model_set_number) : json_null());
    json_object_set_new(v, "worker", string_or_null(j->worker));
    json_object_set_new(v, "created_at", string_or_null(j->created_at));
    json_object_set_new(v, "started_at", string_or_null(j->started_at));
    json_object_set_new(v, "finished_at", string_or_null(j->finished_at));
    json_object_set_new(v, "lease_until", string_or_null(j->lease_until));
    return v;
}

void api_job_get(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "job", &id))
        return;
    store_error err;
    store_job j;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_job_get(c, id, &j, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    /* read-your-writes: whoever sees the job done reads its models next,
     * even should the notice of the new set not have arrived yet */
    if (ctx->models && j.state == STORE_JOB_DONE && j.model_set_number > 0)
        model_cache_saw_set(ctx->models, j.experiment_id, j.model_set_number);
    api_send_json(resp, 200, job_view(&j));
    store_job_free(&j);
}

/* POST /v1/experiments/{id}/refit: aggregation and fitting on demand, e.g.
 * once every rank of a coordinate is uploaded with ?refit=defer. Joins the
 * queued refit when there is one. ?modeler=extrap|robust (or the body
 * {"modeler": ...}) fits with that modeler instead of the experiment's. */
/* The modeler a refit asks for: ?modeler= or {"modeler": ...} (an optional
 * body with nothing else); NULL for the experiment's. -1 after a 400. */
static int refit_modeler(const api_request *req, api_response *resp, const char **modeler)
{
    pmnf_modeler_kind kind;
    *modeler = api_query(req, "modeler");
    json_t *doc = NULL;
    if (req->body_len > 0) {
        if (api_parse_object(req, resp, &doc) < 0)
            return -1;
        const char *key;
        json_t *v;
        json_object_foreach(doc, key, v)
        {
            if (strcmp(key, "modeler")) {
                api_problem(resp, 400, key, "a refit takes only \"modeler\"");
                json_decref(doc);
                return -1;
            }
            if (!json_is_string(v) || (*modeler && strcmp(*modeler, json_string_value(v)))) {
                api_problem(resp, 400, "modeler", "must be one string (extrap, robust, segmented) that the "
                                                  "query does not contradict");
                json_decref(doc);
                return -1;
            }
            *modeler = pmnf_modeler_parse(json_string_value(v), &kind) == 0
                           ? pmnf_modeler_name(kind)
                           : "?";
        }
        json_decref(doc);
    }
    if (*modeler && pmnf_modeler_parse(*modeler, &kind) < 0) {
        api_problem(resp, 400, "modeler", "must be \"extrap\", \"robust\" or \"segmented\"");
        return -1;
    }
    if (*modeler)
        *modeler = pmnf_modeler_name(kind); /* a static string, outliving the body */
    return 0;
}

void api_experiment_refit(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id, job = 0;
    const char *modeler;
    if (api_path_id(req, resp, "id", "experiment", &id) || refit_modeler(req, resp, &modeler) < 0)
        return;
    /* ?commit=: refit that commit's profiles (uploaded with refit=defer) */
    const char *commit = api_query(req, "commit");
    if (commit && !api_tag_valid(commit, 1)) {
        api_problem(resp, 400, "commit",
                    "expected 1 to 100 characters of A-Z a-z 0-9 . _ / - (a commit hash or tag)");
        return;
    }
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = !c ? err.code
             : modeler ? store_job_enqueue_modeler(c, id, modeler, commit, &job, &err)
                       : store_job_enqueue_commit(c, id, commit, NULL, NULL, &job, &err);
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 202, json_pack("{s:I, s:I}", "job", (json_int_t)job, "experiment",
                                       (json_int_t)id));
    api_add_header(resp, "Location", "/v1/jobs/%" PRId64, job);
}

void api_jobs_metrics(void *arg, FILE *out)
{
    store *db = arg;
    store_error err;
    int64_t counts[STORE_JOB_NSTATES];
    PGconn *c = store_acquire(db, &err);
    int rc = c ? store_job_counts(c, counts, &err) : err.code;
    store_release(db, c);
    fputs("# HELP perfcast_jobs Refit jobs in the database by state.\n"
          "# TYPE perfcast_jobs gauge\n",
          out);
    if (rc) {
        fputs("# perfcast_jobs: the database did not answer\n", out);
        return;
    }
    for (int s = 0; s < STORE_JOB_NSTATES; s++)
        fprintf(out, "perfcast_jobs{state=\"%s\"} %lld\n", store_job_state_name(s),
                (long long)counts[s]);
}
