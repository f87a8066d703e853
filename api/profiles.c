/*
 * profiles.c — POST /v1/experiments/{id}/profiles: one profile upload, or a
 * whole Score-P Cube profile set in one archive (one profile per run, below).
 *
 * The body is one of the profile formats (ingest/format.h): perfcast's JSON
 * profile, a PyTorch profiler (Kineto) trace of one rank, plain or gzip, an
 * Nsight Systems SQLite export of one rank, or a Score-P Cube profile
 * (.cubex, a tar archive: application/x-tar or sniffed). ?format= names it; otherwise
 * the Content-Type does (application/gzip: Kineto; application/vnd.sqlite3:
 * nsys), and application/json, application/octet-stream, text/plain or no
 * Content-Type leave it to the bytes (gzip magic, SQLite header, JSON keys;
 * JSON that says nothing else goes to the perfcast reader, whose message
 * then names the fault). Anything else answers 415, Extra-P files included
 * (aggregated points, not a profile: POST /v1/fit takes them). A trace's
 * rank comes from the trace (distributedInfo) or ?rank=N, which must agree
 * when both say; ?markers= sets an Nsight export's step markers.
 *
 * A malformed body answers 400 with the reader's JSON path, event index or
 * byte offset and stores nothing. The coordinate comes from the body's
 * "point" (perfcast JSON), from query parameters named like the
 * experiment's parameters (?ranks=8), or from both when they agree; the
 * repetition likewise (body "repetition" or ?repetition=N). One upload per
 * rank: the traces of one run are uploads with the same point and
 * repetition. Then store_profile_add() commits the raw bytes, the rows and
 * the refit job in one transaction, and only then the answer goes out:
 *
 *   202 {"profile","job","experiment","duplicate":false,"format",
 *        ["rank","steps" for traces]}, Location: the job
 *   200 the same with "duplicate":true and the first upload's ids
 *
 * so a 202 means the upload survives a crash of the process right after.
 *
 * Other bytes at the coordinate, repetition and ranks of a stored profile
 * answer 409 naming all three (merging them would silently blend two
 * different measurements); ?replace=true replaces the stored profile in the
 * same transaction, and DELETE .../profiles/{pid} removes one. Caps
 * (README "Limits and hardening"): distinct callpaths per upload and per
 * experiment, events per trace after decompression: 413 naming the cap.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/upload_check.h"
#include "api/commits.h"
#include "api/handlers.h"
#include "analysis/levels.h"
#include "analysis/training.h"
#include "ingest/cube.h"
#include "ingest/format.h"
#include "ingest/phase.h"
#include "ingest/profile.h"
#include "ingest/trace.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/profiles.h"

/* Query parameters that are not coordinates. */
static int reserved_query(const char *name)
{
    return !strcmp(name, "format") || !strcmp(name, "repetition") || !strcmp(name, "rank") ||
           !strcmp(name, "markers") || !strcmp(name, "refit") || !strcmp(name, "phase") ||
           !strcmp(name, "validation_markers") || !strcmp(name, "use") || !strcmp(name, "replace") ||
           !strcmp(name, "commit") || !strcmp(name, "branch") || !strcmp(name, "ci_run");
}

/* ?commit=, ?branch=, ?ci_run= (the model set per commit): a commit is 1 to
 * 100 of [A-Za-z0-9._/-] (a hash, a tag, HEAD~1 resolved by the client);
 * branch and CI run 1 to 200 printable characters. 0, or -1 after 400. */
static int query_tags(const api_request *req, store_upload *u, api_response *resp)
{
    static const char *const names[] = {"commit", "branch", "ci_run"};
    const char **dst[] = {&u->commit, &u->branch, &u->ci_run};
    for (int k = 0; k < 3; k++) {
        const char *v = api_query(req, names[k]);
        if (!v)
            continue;
        if (!api_tag_valid(v, k == 0)) {
            api_problem(resp, 400, names[k],
                        k ? "expected 1 to 200 printable characters"
                          : "expected 1 to 100 characters of A-Z a-z 0-9 . _ / - (a commit "
                            "hash or tag)");
            return -1;
        }
        *dst[k] = v;
    }
    if ((u->branch || u->ci_run) && !u->commit) {
        api_problem(resp, 400, "commit", "branch and ci_run describe a commit: give ?commit= too");
        return -1;
    }
    return 0;
}

/* 400 for a body the reader refused: its message, and where. */
static void reader_problem(api_response *resp, ingest_kind kind, const ingest_error *ie)
{
    char detail[400];
    snprintf(detail, sizeof detail, "malformed profile (%s): %s", ingest_kind_name(kind), ie->msg);
    json_t *doc = json_pack("{s:s, s:s, s:i, s:s, s:s}", "type", "about:blank", "title",
                            api_status_title(400), "status", 400, "detail", detail, "field",
                            "body");
    if (doc && ie->line > 0)
        json_object_set_new(doc, "line", json_integer(ie->line));
    if (doc && ie->offset >= 0)
        json_object_set_new(doc, "offset", json_integer(ie->offset));
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text) {
        api_problem(resp, 400, "body", "%s", detail);
        return;
    }
    api_send_body(resp, 400, "application/problem+json", text, strlen(text));
}

/* 415 for a format that is not a profile. */
static int not_a_profile(api_response *resp, ingest_kind k, const char *how)
{
    api_problem(resp, 415, NULL,
                "%s says %s: Extra-P files hold aggregated points, not a profile of one run; "
                "POST them to /v1/fit, or upload kineto, nsys, perfcast or cube",
                how, ingest_kind_name(k));
    return -1;
}

/* Which reader: ?format=, else the Content-Type, else the bytes. Returns
 * the kind, or -1 after answering 415. */
static int choose_format(const api_request *req, api_response *resp, ingest_kind *out)
{
    const char *fmt = api_query(req, "format");
    if (fmt) {
        ingest_kind k = ingest_kind_from_name(fmt);
        if (k == INGEST_KIND_UNKNOWN) {
            api_problem(resp, 415, "format", "\"%.40s\" is not a format; profiles are kineto, "
                        "nsys, perfcast or cube", fmt);
            return -1;
        }
        if (!ingest_kind_is_profile(k))
            return not_a_profile(resp, k, "?format=");
        *out = k;
        return 0;
    }
    const char *ct = api_header(req, "Content-Type");
    int sniff;
    ingest_kind k = ingest_kind_from_content_type(ct, &sniff);
    if (!sniff && k == INGEST_KIND_UNKNOWN) {
        api_problem(resp, 415, NULL,
                    "Content-Type \"%.60s\" is not supported: send application/json (perfcast "
                    "JSON or a Kineto trace), application/gzip (a Kineto trace), "
                    "application/vnd.sqlite3 (an Nsight Systems export), or say ?format=",
                    ct);
        return -1;
    }
    if (sniff) {
        k = ingest_sniff(req->body, req->body_len);
        /* JSON that says nothing else is left to the perfcast reader */
        int json = !ct || !*ct || !strncasecmp(ct, "application/json", 16);
        if (k == INGEST_KIND_UNKNOWN && json)
            k = INGEST_KIND_PERFCAST;
        if (k == INGEST_KIND_UNKNOWN) {
            api_problem(resp, 415, NULL,
                        "cannot tell the format from the body; say ?format=kineto, nsys, cube or "
                        "perfcast");
            return -1;
        }
        if (!ingest_kind_is_profile(k))
            return not_a_profile(resp, k, "the body");
    }
    *out = k;
    return 0;
}

/* ?rank=N into o->rank (-1 when absent). 0, or -1 after answering 400. */
static int query_rank(const api_request *req, ingest_trace_options *o, api_response *resp)
{
    const char *text = api_query(req, "rank");
    if (!text)
        return 0;
    char *end = NULL;
    errno = 0;
    long v = *text >= '0' && *text <= '9' ? strtol(text, &end, 10) : -1;
    if (!end || *end || errno || v < 0 || v > INT_MAX) {
        api_problem(resp, 400, "rank", "expected an integer >= 0, got \"%.40s\"", text);
        return -1;
    }
    o->rank = (int)v;
    return 0;
}

/* ?phase=train|validation (every step's phase) and ?validation_markers=
 * (patterns of validation steps, ingest/phase.h) into o. 0, or -1 after
 * answering 400. */
static int query_phase(const api_request *req, ingest_trace_options *o, api_response *resp)
{
    const char *phase = api_query(req, "phase");
    if (phase) {
        if (!strcmp(phase, "train"))
            o->phase = INGEST_PHASE_TRAIN;
        else if (!strcmp(phase, "validation"))
            o->phase = INGEST_PHASE_VALIDATION;
        else {
            api_problem(resp, 400, "phase", "must be \"train\" or \"validation\", got \"%.40s\"",
                        phase);
            return -1;
        }
    }
    const char *v = api_query(req, "validation_markers");
    if (v && ingest_phase_check(v)) {
        api_problem(resp, 400, "validation_markers",
                    "must be 1 to 256 bytes of comma-separated, non-empty name parts (e.g. "
                    "\"val,eval\")");
        return -1;
    }
    o->validation = v;
    return 0;
}

/* ?phase= on perfcast's own JSON: every step (not the gaps) takes it. */
/* point[0..e->nparams) in the experiment's order from the body's point and
 * the query's coordinates (analysis/upload_check.h). Returns 0, or -1 after
 * answering 400. */
static int resolve_point(const api_request *req, const profile *p, const store_experiment *e,
                         double *point, api_response *resp)
{
    const char **names = calloc(req->nquery + 1, sizeof *names);
    const char **values = calloc(req->nquery + 1, sizeof *values);
    size_t n = 0;
    an_problem pr;
    int rc = -1;
    if (!names || !values) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < req->nquery; k++) {
        const char *name = req->query[k].name;
        if (!name || reserved_query(name) || levels_is_factor(e->spec, name))
            continue;
        names[n] = name;
        values[n++] = req->query[k].value;
    }
    upload_experiment ue = {(const char *const *)e->parameters, e->nparams, e->spec};
    rc = upload_point(p, &ue, names, values, n, point, &pr);
    if (rc)
        api_problem(resp, pr.status, pr.field[0] ? pr.field : NULL, "%s", pr.msg);
done:
    free(names);
    free(values);
    return rc ? -1 : 0;
}

/* The upload's factor levels (api/levels.h) from the query and the
 * profile's "levels": *levels is malloc'ed (NULL without factors). Returns
 * 0, or -1 after answering 400 naming the field. */
static int resolve_levels(const api_request *req, const profile *p, const store_experiment *e,
                          char **levels, api_response *resp)
{
    const json_t *factors = json_object_get(e->spec, "factors");
    const char *names[LEVELS_MAX_FACTORS], *query[LEVELS_MAX_FACTORS] = {0};
    size_t nf = levels_names(e->spec, names);
    for (size_t i = 0; i < nf; i++)
        query[i] = api_query(req, names[i]);
    json_t *doc = NULL;
    if (p->nlevels > 0) {
        doc = json_object();
        for (int i = 0; doc && i < p->nlevels; i++)
            if (json_object_set_new(doc, p->level_names[i], json_string(p->level_values[i]))) {
                json_decref(doc);
                doc = NULL;
            }
        if (!doc) {
            api_problem(resp, 500, NULL, "out of memory");
            return -1;
        }
    }
    char field[96], msg[400];
    int rc = levels_resolve(factors, query, doc, levels, field, sizeof field, msg, sizeof msg);
    json_decref(doc);
    if (rc > 0)
        api_problem(resp, 500, NULL, "out of memory");
    else if (rc < 0)
        api_problem(resp, 400, field, "%s", msg);
    return rc ? -1 : 0;
}

/* The repetition from the body (p) and ?repetition=N. Returns 0 or -1 after
 * answering 400. */
static int resolve_repetition(const api_request *req, ingest_kind kind, const profile *p, int *rep,
                              api_response *resp)
{
    *rep = p->repetition;
    const char *text = api_query(req, "repetition");
    if (!text)
        return 0;
    char *end = NULL;
    errno = 0;
    long q = *text >= '0' && *text <= '9' ? strtol(text, &end, 10) : 0;
    if (!end || *end || errno || q < 1 || q > INT_MAX) {
        api_problem(resp, 400, "repetition", "expected an integer >= 1, got \"%.40s\"", text);
        return -1;
    }
    if (q == p->repetition)
        return 0;
    /* the reader says 1 both when the body says 1 and when it says nothing:
     * look at the body (it parsed a moment ago) to tell which */
    int body_says = p->repetition != 1;
    if (!body_says && kind == INGEST_KIND_PERFCAST) {
        json_t *doc = json_loadb(req->body, req->body_len, 0, NULL);
        body_says = json_object_get(doc, "repetition") != NULL;
        json_decref(doc);
    }
    if (body_says) {
        api_problem(resp, 400, "repetition", "the body says %d, the query %ld", p->repetition, q);
        return -1;
    }
    *rep = (int)q;
    return 0;
}

/* The checks of analysis/upload_check.h. 0, or -1 after answering. */
static int upload_checks(const profile *prof, const store_experiment *e, const double *point,
                         int world_size, api_response *resp)
{
    upload_experiment ue = {(const char *const *)e->parameters, e->nparams, e->spec};
    an_problem p;
    if (upload_check_magnitudes(prof, &ue, point, &p) || upload_check_training(&ue, point, &p) ||
        upload_check_world_size(&ue, point, world_size, &p)) {
        api_problem(resp, p.status, p.field, "%s", p.msg);
        return -1;
    }
    return 0;
}

/* 413 for an upload beyond one of the configured caps, naming it. */
static void over_cap(api_response *resp, const char *field, const char *what, long long got,
                     long long limit, const char *variable)
{
    api_problem(resp, 413, field, "the upload holds %s%lld %s; the limit is %lld (%s)",
                got > 0 ? "" : "more than ", got > 0 ? got : limit, what, limit, variable);
}

/* 409: other bytes at the coordinate, repetition and ranks of a stored
 * profile. The document names all three, the stored profile, and the two
 * ways to replace it on purpose. */
static void conflict_problem(api_response *resp, const store_experiment *e, const double *point,
                             int rep, int64_t exp_id, const store_upload_result *res)
{
    char coord[400] = "";
    size_t n = 0;
    json_t *pt = json_object();
    for (int i = 0; i < e->nparams && n < sizeof coord; i++) {
        n += (size_t)snprintf(coord + n, sizeof coord - n, "%s%s=%.17g", i ? ", " : "",
                              e->parameters[i], point[i]);
        json_object_set_new(pt, e->parameters[i], json_real(point[i]));
    }
    char detail[900];
    snprintf(detail, sizeof detail,
             "profile %" PRId64 " already holds coordinate %s, repetition %d, ranks %s with other "
             "bytes; to replace it, DELETE /v1/experiments/%" PRId64 "/profiles/%" PRId64
             " first or upload again with ?replace=true",
             res->conflict_profile, coord, rep, res->conflict_ranks, exp_id,
             res->conflict_profile);
    json_t *ranks = json_array();
    for (const char *p = res->conflict_ranks; *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p)
            break;
        json_array_append_new(ranks, json_integer(v));
        p = *end == ',' ? end + 1 : end;
    }
    json_t *doc = json_pack("{s:s, s:s, s:i, s:s, s:o, s:i, s:o, s:I}", "type", "about:blank",
                            "title", api_status_title(409), "status", 409, "detail", detail,
                            "point", pt, "repetition", rep, "ranks", ranks, "profile",
                            (json_int_t)res->conflict_profile);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text) {
        api_problem(resp, 409, NULL, "%s", detail);
        return;
    }
    api_send_body(resp, 409, "application/problem+json", text, strlen(text));
}

/* ---- a whole Score-P Cube profile set in one upload ---------------------------
 *
 * ?format=cube-set (or Content-Type application/zip): a tar or zip archive of
 * run directories (".../mm.x10y1z1.r1/profile.cubex", ...; ingest/cube.h)
 * becomes one profile per run, all stored in one transaction or none. Each
 * run's coordinate comes from its directory's name: every parameter of the
 * experiment must be named there (other names are ignored); the repetition
 * from a ".r<N>" suffix, else from the order of the runs at the same
 * coordinate. A fault answers 4xx naming the member (the archive's reading, a
 * missing parameter) or the run (what the store refused), and nothing is
 * stored. 202 {"experiment","format":"cube-set","runs","job","profiles":
 * [{"run","profile","point","repetition","duplicate"}]}. */

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

static void profile_upload_set(api_ctx *ctx, api_request *req, api_response *resp)
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
    upload_experiment ue = {(const char *const *)e.parameters, e.nparams, e.spec};
    an_problem p;
    for (int i = 0; i < b.n; i++)
        if (upload_run_point(&ue, &b.runs[i], points + (size_t)i * np, &p) < 0) {
            api_problem(resp, p.status, p.field, "%s", p.msg);
            goto done;
        }
    upload_repetitions(&b, points, np, rep);
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

void api_profile_upload(api_ctx *ctx, api_request *req, api_response *resp)
{
    const char *fmt = api_query(req, "format"), *ct = api_header(req, "Content-Type");
    if ((fmt && !strcmp(fmt, "cube-set")) ||
        (!fmt && ct && !strncasecmp(ct, "application/zip", 15))) {
        profile_upload_set(ctx, req, resp); /* a whole Cube profile set */
        return;
    }
    int64_t exp_id;
    ingest_kind kind = INGEST_KIND_UNKNOWN;
    ingest_trace_options opts;
    ingest_trace_options_default(&opts);
    if (api_path_id(req, resp, "id", "experiment", &exp_id) || choose_format(req, resp, &kind) ||
        query_rank(req, &opts, resp) || query_phase(req, &opts, resp))
        return;
    store_upload tags = {0}; /* commit, branch, ci_run: checked before the body is read */
    if (query_tags(req, &tags, resp))
        return;
    opts.markers = api_query(req, "markers");
    /* ?use=evaluation: held out from fitting, compared with the models */
    const char *use = api_query(req, "use");
    if (use && strcmp(use, "fit") && strcmp(use, "evaluation")) {
        api_problem(resp, 400, "use", "must be \"fit\" (default) or \"evaluation\", got \"%.40s\"",
                    use);
        return;
    }
    opts.max_events = ctx->max_trace_events;
    const char *refit = api_query(req, "refit");
    if (refit && strcmp(refit, "now") && strcmp(refit, "defer")) {
        api_problem(resp, 400, "refit", "must be \"now\" (default) or \"defer\", got \"%.40s\"",
                    refit);
        return;
    }
    /* ?replace=true: other bytes at the same coordinate, repetition and
     * ranks replace the stored profile instead of answering 409 */
    const char *replace = api_query(req, "replace");
    if (replace && strcmp(replace, "true") && strcmp(replace, "false")) {
        api_problem(resp, 400, "replace", "must be \"true\" or \"false\", got \"%.40s\"",
                    replace);
        return;
    }
    /* a gzip trace may expand, but not without bound */
    opts.max_bytes = req->body_len > ((size_t)1 << 24) ? req->body_len * 64 : (size_t)1 << 30;
    store_error err = {0};
    store_experiment e = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, exp_id, &e, &err) : err.code;
    store_release(ctx->db, c); /* not held while the body is read */
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    /* the experiment's markers unless the upload names its own */
    if (!opts.markers)
        opts.markers = json_string_value(json_object_get(e.spec, "markers"));
    /* likewise the names of validation steps */
    if (!opts.validation)
        opts.validation = json_string_value(json_object_get(e.spec, "validation_markers"));
    profile prof;
    ingest_trace_info info;
    ingest_error ie = {0};
    if (ingest_read_profile(kind, req->body, req->body_len, &opts, &prof, &info, &ie)) {
        if (ie.limit)
            over_cap(resp, NULL, "events", 0, ctx->max_trace_events, "PERFCAST_MAX_TRACE_EVENTS");
        else
            reader_problem(resp, kind, &ie);
        store_experiment_free(&e);
        return;
    }
    if (ctx->max_callpaths > 0 && prof.ncallpaths > ctx->max_callpaths) {
        over_cap(resp, "callpaths", "distinct callpaths", prof.ncallpaths, ctx->max_callpaths,
                 "PERFCAST_MAX_CALLPATHS");
        profile_free(&prof);
        ingest_trace_info_free(&info);
        store_experiment_free(&e);
        return;
    }
    if (kind == INGEST_KIND_PERFCAST)
        upload_force_phase(&prof, opts.phase);
    if (kind == INGEST_KIND_PERFCAST && opts.rank >= 0)
        for (size_t i = 0; i < prof.nrows; i++)
            if (prof.rows[i].rank != opts.rank) {
                api_problem(resp, 400, "rank", "?rank=%d, but the profile has rank %d",
                            opts.rank, prof.rows[i].rank);
                profile_free(&prof);
                ingest_trace_info_free(&info);
                store_experiment_free(&e);
                return;
            }
    double *point = NULL;
    char *levels = NULL; /* the factor levels (api/levels.h); NULL: no factors */
    store_upload_result res = {0};
    int rep = 1;
    c = NULL;
    point = calloc(e.nparams > 0 ? (size_t)e.nparams : 1, sizeof *point);
    if (!point) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    if (resolve_point(req, &prof, &e, point, resp) ||
        resolve_levels(req, &prof, &e, &levels, resp) ||
        resolve_repetition(req, kind, &prof, &rep, resp) ||
        upload_checks(&prof, &e, point, info.world_size, resp))
        goto done;
    store_upload u = {.experiment_id = exp_id,
                      .format = ingest_kind_name(kind),
                      .raw = req->body,
                      .raw_len = req->body_len,
                      .point = point,
                      .npoint = e.nparams,
                      .repetition = rep,
                      .prof = &prof,
                      .defer_refit = refit && !strcmp(refit, "defer"),
                      .evaluation = use && !strcmp(use, "evaluation"),
                      .replace = replace && !strcmp(replace, "true"),
                      .max_experiment_callpaths = ctx->max_experiment_callpaths,
                      .commit = tags.commit,
                      .branch = tags.branch,
                      .ci_run = tags.ci_run,
                      .levels = levels};
    c = store_acquire(ctx->db, &err);
    rc = c ? store_profile_add(c, &u, &res, &err) : err.code;
    if (rc == STORE_CONFLICT && res.conflict_profile) {
        conflict_problem(resp, &e, point, rep, exp_id, &res);
        goto done;
    }
    if (rc == STORE_INVALID && res.callpaths_after) {
        api_problem(resp, 413, "callpaths",
                    "the experiment would hold %lld distinct callpaths; the limit is %d "
                    "(PERFCAST_MAX_EXPERIMENT_CALLPATHS)",
                    res.callpaths_after, ctx->max_experiment_callpaths);
        goto done;
    }
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    json_t *doc = json_pack("{s:I, s:o, s:I, s:b, s:s}", "profile", (json_int_t)res.profile_id,
                            "job", res.job_id ? json_integer(res.job_id) : json_null(),
                            "experiment", (json_int_t)exp_id, "duplicate", res.duplicate,
                            "format", ingest_kind_name(kind));
    if (doc && use && !strcmp(use, "evaluation"))
        json_object_set_new(doc, "use", json_string("evaluation"));
    if (doc && res.replaced)
        json_object_set_new(doc, "replaced", json_integer(res.replaced));
    if (doc && kind != INGEST_KIND_PERFCAST) {
        json_object_set_new(doc, "rank", json_integer(info.rank));
        json_object_set_new(doc, "steps", json_integer(info.nsteps ? info.nsteps : 1));
        json_object_set_new(doc, "validation_steps", json_integer(info.nvalidation));
        /* patterns someone chose that found nothing: say so */
        if (opts.validation && !opts.phase && info.nvalidation == 0)
            json_object_set_new(
                doc, "warnings",
                json_pack("[s]", "validation_markers matched no step and no range around one: "
                                 "every step of this trace counts as a training step"));
    }
    api_send_json(resp, res.duplicate ? 200 : 202, doc);
    if (res.job_id)
        api_add_header(resp, "Location", "/v1/jobs/%" PRId64, res.job_id);
done:
    store_release(ctx->db, c);
    free(point);
    free(levels);
    store_experiment_free(&e);
    profile_free(&prof);
    ingest_trace_info_free(&info);
}

/* DELETE /v1/experiments/{id}/profiles/{pid}: the profile and its rows go,
 * and a refit of what is left is queued: 202 {"profile","deleted":true,
 * "job","experiment"} + Location of the job; another experiment's or an
 * unknown profile: 404. */
void api_profile_delete(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t exp_id, pid, job = 0;
    if (api_path_id(req, resp, "id", "experiment", &exp_id) ||
        api_path_id(req, resp, "pid", "profile", &pid))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_profile_delete(c, exp_id, pid, &job, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 202,
                  json_pack("{s:I, s:b, s:o, s:I}", "profile", (json_int_t)pid, "deleted", 1,
                            "job", job ? json_integer(job) : json_null(), "experiment",
                            (json_int_t)exp_id));
    if (job)
        api_add_header(resp, "Location", "/v1/jobs/%" PRId64, job);
}
