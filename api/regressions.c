/*
 * regressions.c — GET /v1/experiments/{id}/regressions?base=REF&head=REF:
 * did the head commit make scaling worse than the base commit?
 *
 * A REF is a commit (the newest model set of the profiles uploaded with
 * ?commit=) or a model set's number within the experiment. The two sets'
 * models of ?metric= (default time) are read (api/set_models.h) and compared
 * by analysis/regressions.h at every measured point of either set and at
 * the target ?at=ranks:512 (default: 4x the largest measured value of each
 * parameter), a change counting when it exceeds ?threshold= (percent,
 * default 5%) and the 95% intervals separate. "regression": true when
 * anything counts as a regression.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/regressions.h"
#include "api/commits.h"
#include "api/handlers.h"
#include "api/set_models.h"
#include "store/commits.h"
#include "store/experiments.h"
#include "store/models.h"

typedef struct side {
    store_set_info info;
    set_models sm;
    store_measurement_row *meas;
    int nmeas;
} side;

static void side_free(side *s)
{
    set_models_free(&s->sm);
    store_measurement_rows_free(s->meas, s->nmeas);
}

static int side_load(PGconn *c, const char *const *names, int np, const char *metric, int strong,
                     side *s, store_error *err)
{
    int rc = set_models_load(c, s->info.id, metric, NULL, NULL, names, np, &s->sm, err);
    if (!rc) /* the epoch as predict composes it (api/set_models.h) */
        rc = set_models_load_imbalance(c, s->info.id, metric, names, np, strong, &s->sm, err);
    store_model_filter fm = {.metric = metric, .level = "application", .name = "epoch",
                             .limit = 100000};
    if (!rc)
        rc = store_measurements_read(c, s->info.id, &fm, &s->meas, &s->nmeas, err);
    return rc;
}

static compare_value side_predict(const void *models, int row, const double *pt)
{
    prediction p = set_models_predict(models, row, pt);
    return (compare_value){p.value, p.lo, p.hi};
}

static reg_side side_view(const side *s)
{
    return (reg_side){.rows = s->sm.rows, .ok = s->sm.ok, .nrows = s->sm.nrows,
                      .predict = side_predict, .models = &s->sm, .meas = s->meas,
                      .nmeas = s->nmeas};
}

static json_t *set_json(const char *ref, const store_set_info *s)
{
    return json_pack("{s:s, s:i, s:o, s:o, s:o, s:s}", "ref", ref, "model_set", s->number,
                     "commit", s->has_commit ? json_string(s->commit) : json_null(), "branch",
                     s->has_branch ? json_string(s->branch) : json_null(), "ci_run",
                     s->has_ci_run ? json_string(s->ci_run) : json_null(), "created_at",
                     s->created_at);
}

/* Core-hours per epoch at the target from the epoch prediction. */
static int query_ok(const api_request *req, api_response *resp)
{
    static const char *const allowed[] = {"base", "head", "threshold", "at", "metric"};
    for (size_t k = 0; k < req->nquery; k++) {
        int ok = 0;
        for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++)
            ok |= req->query[k].name && !strcmp(req->query[k].name, allowed[i]);
        if (!ok) {
            api_problem(resp, 400, req->query[k].name ? req->query[k].name : "",
                        "unknown query parameter; regressions takes base, head, threshold, at, "
                        "metric");
            return -1;
        }
    }
    return 0;
}

static int resolve(PGconn *c, int64_t id, const char *field, const char *ref, side *s,
                   api_response *resp)
{
    if (!ref || !*ref) {
        api_problem(resp, 400, field, "required: a commit or a model set number");
        return -1;
    }
    if (!api_tag_valid(ref, 1)) {
        api_problem(resp, 400, field,
                    "expected a commit (A-Z a-z 0-9 . _ / -, at most 100) or a model set number");
        return -1;
    }
    store_error err;
    int rc = store_set_find(c, id, ref, &s->info, &err);
    if (rc == STORE_NOT_FOUND) {
        api_problem(resp, 404, field, "%s", err.msg);
        return -1;
    }
    if (rc) {
        api_store_problem(resp, &err);
        return -1;
    }
    return 0;
}

void api_regressions(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) || query_ok(req, resp))
        return;
    side b = {0}, h = {0};
    store_experiment e = {0};
    store_error err;
    reg_result out = {0};
    an_problem p;
    const char *names[PMNF_MAX_PARAMS];
    reg_input in = {.names = names, .threshold = REG_DEFAULT_THRESHOLD,
                    .at = api_query(req, "at")};
    if (regressions_threshold_parse(api_query(req, "threshold"), &in.threshold)) {
        api_problem(resp, 400, "threshold",
                    "expected a percentage from 0 to 1000 such as 5 or 5%%, got \"%.40s\"",
                    api_query(req, "threshold"));
        return;
    }
    const char *metric = api_query(req, "metric");
    metric = metric ? metric : "time";
    PGconn *c = store_acquire(ctx->db, &err);
    if (!c || store_experiment_get(c, id, &e, &err)) {
        api_store_problem(resp, &err);
        goto done;
    }
    in.spec = e.spec;
    in.np = e.nparams < PMNF_MAX_PARAMS ? e.nparams : PMNF_MAX_PARAMS;
    for (int i = 0; i < in.np; i++)
        names[i] = e.parameters[i];
    if (resolve(c, id, "base", api_query(req, "base"), &b, resp) ||
        resolve(c, id, "head", api_query(req, "head"), &h, resp))
        goto done;
    if (b.info.id == h.info.id) {
        api_problem(resp, 400, "head", "names the same model set (%d) as base: nothing to compare",
                    b.info.number);
        goto done;
    }
    int strong = e.scaling && !strcmp(e.scaling, "strong");
    if (side_load(c, names, in.np, metric, strong, &b, &err) ||
        side_load(c, names, in.np, metric, strong, &h, &err)) {
        api_store_problem(resp, &err);
        goto done;
    }
    store_release(ctx->db, c);
    c = NULL;
    if (b.sm.nrows == 0 || h.sm.nrows == 0) {
        api_problem(resp, 400, "metric", "no models of metric \"%.60s\" in the %s model set",
                    metric, b.sm.nrows == 0 ? "base" : "head");
        goto done;
    }
    reg_side bs = side_view(&b), hs = side_view(&h);
    if (regressions_compare(&in, &bs, &hs, &out, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        goto done;
    }
    json_t *doc = json_pack(
        "{s:I, s:s, s:f, s:o, s:o, s:O, s:O, s:b, s:i, s:i, s:i, s:O, s:O, s:O, s:O, s:O, s:s}",
        "experiment", (json_int_t)id, "metric", metric, "threshold_pct", in.threshold, "base",
        set_json(api_query(req, "base"), &b.info), "head", set_json(api_query(req, "head"), &h.info),
        "at", out.at, "measured_points", out.measured_points, "regression", out.regressions > 0,
        "regressions", out.regressions, "improvements", out.improvements, "diverging",
        out.diverging, "application", out.application, "callpaths", out.callpaths, "appeared",
        out.appeared, "vanished", out.vanished, "cost", out.cost, "rule", REG_RULE);
    api_send_json(resp, 200, doc);
done:
    store_release(ctx->db, c);
    regressions_result_free(&out);
    side_free(&b);
    side_free(&h);
    store_experiment_free(&e);
}
