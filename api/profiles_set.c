/*
 * profiles_set.c — POST /v1/experiments/{id}/profiles?format=cube-set: a
 * whole Score-P Cube profile set in one tar or zip archive
 * (".../mm.x10y1z1.r1/profile.cubex", ...; ingest/cube.h) becomes one
 * profile per run, all stored in one transaction or none.
 *
 * Each run's coordinate comes from its directory's name: every parameter of
 * the experiment must be named there (other names are ignored); the
 * repetition from a ".r<N>" suffix, else from the order of the runs at the
 * same coordinate. A fault answers 4xx naming the member (the archive's
 * reading, a missing parameter) or the run (what the store refused), and
 * nothing is stored. 202 {"experiment","format":"cube-set","runs","job",
 * "profiles":[{"run","profile","point","repetition","duplicate"}]}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "ingest/cube.h"
#include "store/experiments.h"
#include "store/profiles.h"

/* Experiment parameter i's value in run r, or -1 after answering 400. */
static int run_point(const store_experiment *e, const cube_bundle_run *r, double *point,
                     api_response *resp)
{
    for (int i = 0; i < e->nparams; i++) {
        int k = 0;
        while (k < r->np && strcmp(r->names[k], e->parameters[i]))
            k++;
        if (k == r->np) {
            api_problem(resp, 400, "parameters",
                        "%.100s: the run directory \"%.80s\" does not name the experiment's "
                        "parameter \"%.40s\"", r->member, r->dir, e->parameters[i]);
            return -1;
        }
        point[i] = r->values[k];
    }
    return 0;
}

/* Repetitions: the ".r<N>" suffix, else 1 + the runs before at the point. */
static void repetitions(const cube_bundle *b, const double *points, int np, int *rep)
{
    for (int i = 0; i < b->n; i++) {
        rep[i] = b->runs[i].repetition;
        if (rep[i])
            continue;
        int before = 0;
        for (int j = 0; j < i; j++)
            before += !memcmp(points + (size_t)j * np, points + (size_t)i * np,
                              sizeof *points * (size_t)np);
        rep[i] = before + 1;
    }
}

static json_t *answer(int64_t exp, const cube_bundle *b, const store_upload_result *res,
                      const double *points, int np, const int *rep)
{
    json_t *list = json_array();
    int64_t job = 0;
    for (int i = 0; i < b->n; i++) {
        json_t *pt = json_array();
        for (int k = 0; k < np; k++)
            json_array_append_new(pt, json_real(points[(size_t)i * np + k]));
        json_array_append_new(list, json_pack("{s:s, s:I, s:o, s:i, s:b}", "run", b->runs[i].dir,
                                              "profile", (json_int_t)res[i].profile_id, "point",
                                              pt, "repetition", rep[i], "duplicate",
                                              res[i].duplicate));
        if (res[i].job_id)
            job = res[i].job_id;
    }
    return json_pack("{s:I, s:s, s:i, s:o, s:o}", "experiment", (json_int_t)exp, "format",
                     "cube-set", "runs", b->n, "job", job ? json_integer(job) : json_null(),
                     "profiles", list);
}

void api_profile_upload_set(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t exp_id;
    if (api_path_id(req, resp, "id", "experiment", &exp_id))
        return;
    const char *refit = api_query(req, "refit");
    if (refit && strcmp(refit, "now") && strcmp(refit, "defer")) {
        api_problem(resp, 400, "refit", "must be \"now\" (default) or \"defer\", got \"%.40s\"",
                    refit);
        return;
    }
    store_error err = {0};
    store_experiment e = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, exp_id, &e, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    cube_limits lim = {0};
    /* compressed members may expand, but not without bound */
    lim.max_member = lim.max_total =
        req->body_len > ((size_t)1 << 24) ? req->body_len * 64 : (size_t)1 << 30;
    cube_bundle b;
    ingest_error ie;
    if (ingest_cube_bundle_read(req->body, req->body_len, &lim, &b, &ie) < 0) {
        api_problem(resp, 400, "body", "%s", ie.msg);
        store_experiment_free(&e);
        return;
    }
    int np = e.nparams;
    double *points = calloc((size_t)b.n * (size_t)(np ? np : 1), sizeof *points);
    int *rep = calloc((size_t)b.n, sizeof *rep);
    store_upload *us = calloc((size_t)b.n, sizeof *us);
    store_upload_result *res = calloc((size_t)b.n, sizeof *res);
    c = NULL;
    if (!points || !rep || !us || !res) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    for (int i = 0; i < b.n; i++)
        if (run_point(&e, &b.runs[i], points + (size_t)i * np, resp) < 0)
            goto done;
    repetitions(&b, points, np, rep);
    for (int i = 0; i < b.n; i++)
        us[i] = (store_upload){.experiment_id = exp_id,
                               .format = "cube",
                               .raw = b.runs[i].raw,
                               .raw_len = b.runs[i].raw_len,
                               .point = points + (size_t)i * np,
                               .npoint = np,
                               .repetition = rep[i],
                               .prof = &b.runs[i].prof,
                               .defer_refit = refit && !strcmp(refit, "defer"),
                               .max_experiment_callpaths = ctx->max_experiment_callpaths};
    int failed = -1;
    c = store_acquire(ctx->db, &err);
    rc = c ? store_profiles_add_all(c, us, b.n, res, &failed, &err) : err.code;
    if (rc && failed >= 0) {
        if (rc == STORE_CONFLICT && res[failed].conflict_profile)
            api_problem(resp, 409, "body",
                        "%.100s: profile %" PRId64 " already holds repetition %d at this "
                        "coordinate; nothing of the set was stored",
                        b.runs[failed].member, res[failed].conflict_profile, rep[failed]);
        else
            api_problem(resp, rc == STORE_UNAVAILABLE ? 503 : rc == STORE_NOT_FOUND ? 404 : 400,
                        "body", "%.100s: %.200s; nothing of the set was stored",
                        b.runs[failed].member, err.msg);
        goto done;
    }
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    json_t *doc = answer(exp_id, &b, res, points, np, rep);
    int64_t job = 0;
    for (int i = 0; i < b.n; i++)
        job = res[i].job_id ? res[i].job_id : job;
    api_send_json(resp, 202, doc);
    if (job)
        api_add_header(resp, "Location", "/v1/jobs/%" PRId64, job);
done:
    store_release(ctx->db, c);
    free(points);
    free(rep);
    free(us);
    free(res);
    ingest_cube_bundle_free(&b);
    store_experiment_free(&e);
}
