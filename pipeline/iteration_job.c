/*
 * iteration_job.c — the per-iteration analyses over the store
 * (iteration_job.h): reading and checking the stored traces, the overhead
 * sets, and the analyses on what was read.
 */
#include "pipeline/iteration_job.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_predict.h"
#include "common/jsonb.h"
#include "execgraph/xg_device.h"
#include "ingest/kineto_xg.h"
#include "store/overheads.h"
#include "store/devices.h"

static int store_failed(it_job_error *e, const store_error *err)
{
    e->from_store = 1;
    e->store = *err;
    return -1;
}

static int failed(it_job_error *e)
{
    e->from_store = 0;
    return -1;
}

/* A store error about profile or set `field`: STORE_NOT_FOUND is 404
 * naming field when there is one. */
static int lookup_failed(it_job_error *e, int rc, const store_error *err, const char *field)
{
    if (rc == STORE_NOT_FOUND && field) {
        an_problem_set(&e->p, 404, field, "%s", err->msg);
        return failed(e);
    }
    return store_failed(e, err);
}

int it_job_trace_size(PGconn *c, const it_job_in *in, int64_t id, const char *field, size_t *len,
                      it_job_error *e)
{
    char format[32];
    store_error err;
    int rc = store_profile_raw_size(c, in->tenant, in->exp, id, len, format, &err);
    if (rc)
        return lookup_failed(e, rc, &err, field);
    if (strcmp(format, "kineto") != 0) {
        iteration_request_not_kineto(id, format, field, &e->p);
        return failed(e);
    }
    if (iteration_caps_bytes(&in->caps, id, *len, field, &e->p) < 0)
        return failed(e);
    return 0;
}

int it_job_load(PGconn *c, const it_job_in *in, int64_t profile, xg_trace *t, long long *used,
                size_t *largest, const char *field, it_job_error *e)
{
    store_error err;
    char *raw;
    size_t len;
    char format[32];
    int rc = store_profile_raw(c, in->tenant, in->exp, profile, &raw, &len, format, &err);
    if (rc)
        return lookup_failed(e, rc, &err, field);
    if (largest && len > *largest)
        *largest = len;
    if (strcmp(format, "kineto") != 0 ||
        iteration_caps_bytes(&in->caps, profile, len, field, &e->p) < 0) {
        free(raw);
        if (strcmp(format, "kineto") != 0)
            iteration_request_not_kineto(profile, format, field, &e->p);
        return failed(e);
    }
    ingest_input input = {.data = raw, .len = len, .fd = -1};
    xg_error xerr;
    xg_trace_init(t);
    t->max_events = iteration_caps_room(&in->caps, *used);
    rc = iteration_load(&input, 0, t, &xerr);
    free(raw);
    if (rc < 0) {
        if (!iteration_caps_events_hit(&in->caps, t, profile, field, &e->p))
            an_problem_set(&e->p, 422, field, "profile %" PRId64 ": %s", profile, xerr.msg);
        xg_trace_free(t);
        return failed(e);
    }
    *used += (long long)t->n;
    return 0;
}

int it_job_overheads(PGconn *c, int64_t tenant, const json_t *v, xg_overheads *ov, char *name,
                     size_t cap, iteration_opts *o, it_job_error *e)
{
    if (!v || json_is_null(v))
        return 1;
    store_error err;
    store_overhead_set s;
    int rc;
    if (json_is_integer(v))
        rc = store_overheads_get(c, tenant, json_integer_value(v), &s, &err);
    else if (json_is_string(v))
        rc = store_overheads_get_by_name(c, tenant, json_string_value(v), &s, &err);
    else {
        an_problem_set(&e->p, 400, "overheads", "must be an overhead set's id or name");
        return failed(e);
    }
    if (rc)
        return lookup_failed(e, rc, &err, "overheads");
    snprintf(name, cap, "%s", s.name);
    json_t *j = jsonb_parse(s.doc, 0);
    store_overhead_set_free(&s);
    xg_error xerr;
    rc = j ? iteration_overheads_parse(j, ov, &xerr) : -1;
    json_decref(j);
    if (rc < 0) {
        an_problem_set(&e->p, 500, NULL, "the stored overhead set cannot be read");
        return failed(e);
    }
    o->ov = ov;
    o->ov_source = "set";
    o->ov_name = name;
    return 0;
}

json_t *it_job_profile(store *db, PGconn *c, const it_job_in *in, int64_t profile,
                       const iteration_opts *o, it_job_error *e)
{
    xg_trace t;
    long long used = 0;
    size_t largest = 0;
    int rc = it_job_load(c, in, profile, &t, &used, &largest, NULL, e);
    store_release_sized(db, c, largest);
    if (rc < 0)
        return NULL;
    xg_error xerr;
    json_t *doc = iteration_analyse(&t, o, &xerr);
    if (!doc) {
        iteration_request_analyse_problem(&xerr, &e->p);
        failed(e);
    } else
        json_object_set_new(doc, "profile", json_integer(profile));
    xg_trace_free(&t);
    return doc;
}

json_t *it_job_model(store *db, PGconn *c, const it_job_in *in, const json_t *body, size_t n,
                     double at, int method, const iteration_opts *o, it_job_error *e)
{
    xg_trace *t = calloc(n, sizeof *t);
    const xg_trace **ptrs = calloc(n, sizeof *ptrs);
    double *xs = calloc(n, sizeof *xs), *measured = calloc(n, sizeof *measured);
    size_t loaded = 0, largest = 0;
    long long used = 0;
    json_t *doc = NULL;
    if (!t || !ptrs || !xs || !measured) {
        an_problem_set(&e->p, 500, NULL, "out of memory");
        failed(e);
        goto done;
    }
    for (; loaded < n; loaded++) {
        int64_t profile;
        char field[48];
        snprintf(field, sizeof field, "profiles[%zu]", loaded);
        if (iteration_request_model_entry(body, loaded, &profile, &xs[loaded], &measured[loaded],
                                          &e->p) < 0) {
            failed(e);
            goto done;
        }
        if (it_job_load(c, in, profile, &t[loaded], &used, &largest, field, e) < 0)
            goto done;
        ptrs[loaded] = &t[loaded];
    }
    store_release_sized(db, c, largest);
    c = NULL;
    int bad;
    xg_error xerr;
    iteration_opts om = *o;
    om.measured = measured;
    doc = iteration_predict_at(ptrs, xs, (int)n, at, &om, method, &bad, &xerr);
    if (!doc) {
        iteration_request_predict_problem(&xerr, bad, &e->p);
        failed(e);
    }
done:
    store_release_sized(db, c, largest);
    for (size_t k = 0; k < loaded; k++)
        xg_trace_free(&t[k]);
    free(t);
    free(ptrs);
    free(xs);
    free(measured);
    return doc;
}

json_t *it_job_measure(PGconn *c, const it_job_in *in, const json_t *ids,
                       const xg_ov_options *prof, int *ntraces, size_t *largest,
                       it_job_error *e)
{
    size_t n;
    if (iteration_request_set_ids(ids, &n, &e->p) < 0) {
        failed(e);
        return NULL;
    }
    long long used = 0;
    xg_trace *traces = calloc(n, sizeof *traces);
    const xg_trace **ptrs = calloc(n, sizeof *ptrs);
    json_t *out = NULL;
    size_t loaded = 0;
    if (!traces || !ptrs) {
        an_problem_set(&e->p, 500, NULL, "out of memory");
        failed(e);
        goto done;
    }
    for (; loaded < n; loaded++) {
        int64_t id;
        char field[32];
        snprintf(field, sizeof field, "profiles[%zu]", loaded);
        if (iteration_request_set_id(ids, loaded, &id, &e->p) < 0) {
            failed(e);
            goto done;
        }
        if (it_job_load(c, in, id, &traces[loaded], &used, largest, field, e) < 0)
            goto done;
        ptrs[loaded] = &traces[loaded];
    }
    xg_overheads ov;
    xg_error err;
    if (iteration_measure(ptrs, (int)n, prof, &ov, &err) < 0) {
        an_problem_set(&e->p, 422, err.field[0] ? err.field : "profiles", "%s", err.msg);
        failed(e);
        goto done;
    }
    out = iteration_overheads_json(&ov);
    *ntraces = (int)n;
    xg_overheads_free(&ov);
done:
    for (size_t i = 0; i < loaded && traces; i++)
        xg_trace_free(&traces[i]);
    free(traces);
    free(ptrs);
    return out;
}

int it_job_device(PGconn *c, int64_t tenant, const char *name, xg_device *out, int *found,
                  it_job_error *e)
{
    *found = 0;
    if (!name)
        return 0;
    const xg_device *b = xg_device_builtin(name);
    if (b) {
        *out = *b;
        *found = 1;
        return 0;
    }
    store_error err;
    store_device row;
    int rc = store_devices_get_by_name(c, tenant, name, &row, &err);
    if (rc == STORE_NOT_FOUND) {
        an_problem_set(&e->p, 404, "device", "no device \"%.63s\": built-in V100, A100, H100, "
                       "A100-SXM4-40GB, ..., or one added with POST /v1/devices", name);
        return failed(e);
    }
    if (rc)
        return store_failed(e, &err);
    json_t *doc = jsonb_parse(row.doc, 0);
    store_device_free(&row);
    xg_error xerr;
    rc = doc ? iteration_device_parse(doc, out, &xerr) : -1;
    json_decref(doc);
    if (rc < 0) {
        an_problem_set(&e->p, 500, NULL, "the stored device cannot be read");
        return failed(e);
    }
    *found = 1;
    return 0;
}

/* A connection of db, or NULL with e. */
static PGconn *acquire(store *db, it_job_error *e)
{
    store_error err;
    PGconn *c = store_acquire(db, &err);
    if (!c)
        store_failed(e, &err);
    return c;
}

/* A queued analysis of one trace: as POST .../iteration or .../breakdown. */
static json_t *run_profile(store *db, const store_it_run *r, const json_t *body,
                           const char *device, const it_job_in *in, it_job_error *e)
{
    iteration_opts o = {.breakdown = 1};
    xg_kt_entry *kt = NULL;
    xg_overheads ov = {0};
    char name[208];
    xg_device dev;
    int has_dev;
    json_t *doc = NULL;
    if (iteration_request_trace(body, &o, &kt, &e->p) < 0) {
        failed(e);
        goto done;
    }
    PGconn *c = acquire(db, e);
    if (!c)
        goto done;
    int rs = it_job_overheads(c, in->tenant, json_object_get(body, "overheads"), &ov, name,
                              sizeof name, &o, e);
    if (rs < 0 || it_job_device(c, in->tenant, device, &dev, &has_dev, e) < 0) {
        store_release(db, c);
        goto done;
    }
    o.device = has_dev ? &dev : NULL;
    o.no_interval = !strcmp(r->kind, "breakdown"); /* no prediction to bound */
    doc = it_job_profile(db, c, in, r->profile_id, &o, e);
    if (doc && !strcmp(r->kind, "breakdown"))
        doc = iteration_breakdown_view(doc);
done:
    xg_overheads_free(&ov);
    free(kt);
    return doc;
}

/* A queued iteration model: as POST .../iteration-model. */
static json_t *run_model(store *db, const json_t *body, const it_job_in *in, it_job_error *e)
{
    iteration_opts o = {.breakdown = 1};
    size_t n = 0;
    double at;
    int method;
    xg_overheads ov = {0};
    char name[208];
    json_t *doc = NULL;
    if (iteration_request_model(body, &o, &method, &at, &n, &e->p) < 0) {
        failed(e);
        return NULL;
    }
    PGconn *c = acquire(db, e);
    if (!c)
        return NULL;
    int rs = it_job_overheads(c, in->tenant, json_object_get(body, "overheads"), &ov, name,
                              sizeof name, &o, e);
    if (rs < 0) {
        store_release(db, c);
        return NULL;
    }
    doc = it_job_model(db, c, in, body, n, at, method, &o, e);
    xg_overheads_free(&ov);
    return doc;
}

/* A queued overhead set: as POST /v1/overhead-sets, up to storing it. */
static json_t *run_set(store *db, const json_t *body, const it_job_in *in, char *name,
                       size_t cap, int *ntraces, it_job_error *e)
{
    const char *n;
    xg_ov_options prof;
    const json_t *given = json_object_get(body, "set");
    if (iteration_request_set(body, &n, &prof, &e->p) < 0) {
        failed(e);
        return NULL;
    }
    snprintf(name, cap, "%s", n);
    PGconn *c = acquire(db, e);
    if (!c)
        return NULL;
    json_t *set = NULL;
    size_t largest = 0;
    *ntraces = 1;
    if (given) {
        if (!(set = iteration_request_given_set(given, ntraces, &e->p)))
            failed(e);
    } else {
        set = it_job_measure(c, in, json_object_get(body, "profiles"), &prof, ntraces, &largest,
                             e);
    }
    store_release_sized(db, c, largest);
    return set;
}

json_t *it_job_run_claimed(store *db, const store_it_run *r, char *name, size_t cap,
                           int *ntraces, it_job_error *e)
{
    json_t *rq = jsonb_parse(r->request, 0);
    const json_t *body = json_object_get(rq, "body");
    body = json_is_object(body) ? body : NULL;
    const char *device = json_string_value(json_object_get(rq, "device"));
    /* the caps the run was asked under (none kept: the defaults) */
    const json_t *caps = json_object_get(rq, "caps");
    it_job_in in = {r->tenant_id, r->experiment_id,
                    {json_integer_value(json_object_get(caps, "events")),
                     json_integer_value(json_object_get(caps, "bytes"))}};
    json_t *doc;
    if (!strcmp(r->kind, "overhead-set") || !strcmp(r->kind, "iteration-model")) {
        if (!body) { /* a queued request always had its body */
            an_problem_set(&e->p, 400, "body", "the request body is empty; expected a JSON object");
            failed(e);
            doc = NULL;
        } else if (!strcmp(r->kind, "overhead-set")) {
            in.exp = 0;
            doc = run_set(db, body, &in, name, cap, ntraces, e);
        } else {
            doc = run_model(db, body, &in, e);
        }
    } else {
        doc = run_profile(db, r, body, device, &in, e);
    }
    json_decref(rq);
    return doc;
}
