/*
 * model_sets.c — GET /v1/experiments/{id}/model_sets?limit=100: the
 * experiment's model sets, newest first, each with the commit, branch and
 * CI run its profiles were uploaded with (null when none): the history a
 * dashboard or CI walks to compare commits (regressions.c); and the time
 * of the newest upload and the newest refit job with its state.
 */
#include <stdlib.h>

#include "api/handlers.h"
#include "api/predict.h"
#include "store/commits.h"

void api_model_sets_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    long limit;
    if (api_path_id(req, resp, "id", "experiment", &id) ||
        predict_query_long(req, resp, "limit", 1, 1000, 100, &limit))
        return;
    store_error err;
    store_set_info *v = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    char last_upload[40] = "", state[16] = "";
    int64_t job = 0;
    int rc = c ? store_sets_list(c, id, (int)limit, &v, &n, &err) : err.code;
    if (!rc)
        rc = store_activity(c, id, last_upload, &job, state, &err);
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *arr = json_array();
    for (int i = 0; i < n; i++) {
        const store_set_info *s = &v[i];
        json_array_append_new(
            arr, json_pack("{s:i, s:o, s:o, s:o, s:s}", "model_set", s->number, "commit",
                           s->has_commit ? json_string(s->commit) : json_null(), "branch",
                           s->has_branch ? json_string(s->branch) : json_null(), "ci_run",
                           s->has_ci_run ? json_string(s->ci_run) : json_null(), "created_at",
                           s->created_at));
    }
    free(v);
    json_t *newest_job = job ? json_pack("{s:I, s:s}", "id", (json_int_t)job, "state", state)
                             : json_null();
    api_send_json(resp, 200,
                  json_pack("{s:I, s:o, s:o, s:o}", "experiment", (json_int_t)id, "last_upload",
                            *last_upload ? json_string(last_upload) : json_null(), "newest_job",
                            newest_job, "model_sets", arr));
}
