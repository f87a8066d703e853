/*
 * export.c — GET /v1/experiments/{id}/export?format=extra-p: the measurements
 * of the experiment's newest model set as an Extra-P experiment (.extra-p: a
 * zip archive with experiment.json, ingest/extrap_exp.h), so that it opens in
 * Extra-P's GUI and command line.
 *
 * Each measurement (point, level, name, metric, phase) becomes one of Extra-P's
 * measurements with the statistics of its repetitions. Callpaths keep their
 * names; the other levels are named "<level>:<name>" ("epoch:epoch",
 * "category:comm"), and a phase other than train adds " (<phase>)". An
 * experiment without a model set yet answers 409.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "ingest/extrap_exp.h"
#include "store/experiments.h"
#include "store/models.h"

#define EXPORT_PAGE 10000

static void series_name(const store_measurement_row *m, char *dst, size_t cap)
{
    int train = !m->phase || !strcmp(m->phase, "train");
    if (m->level && !strcmp(m->level, "callpath"))
        snprintf(dst, cap, "%s%s%s%s", m->name, train ? "" : " (", train ? "" : m->phase,
                 train ? "" : ")");
    else
        snprintf(dst, cap, "%s:%s%s%s%s", m->level ? m->level : "", m->name, train ? "" : " (",
                 train ? "" : m->phase, train ? "" : ")");
}

/* Adds rows to doc's measurements. 0 or -1 (out of memory). */
static int add_rows(json_t *ms, const store_measurement_row *rows, int n)
{
    for (int i = 0; i < n; i++) {
        const store_measurement_row *m = &rows[i];
        if (m->nreps < 1)
            continue;
        char cp[1024];
        series_name(m, cp, sizeof cp);
        json_t *by = json_object_get(ms, cp);
        if (!by && json_object_set_new(ms, cp, by = json_object()) < 0)
            return -1;
        json_t *list = json_object_get(by, m->metric);
        if (!list && json_object_set_new(by, m->metric, list = json_array()) < 0)
            return -1;
        double *scratch = malloc(sizeof *scratch * (size_t)m->nreps);
        json_t *one = scratch ? ingest_extrap_exp_measurement(m->point, m->nparams, m->reps,
                                                               m->nreps, scratch)
                              : NULL;
        free(scratch);
        if (!one || json_array_append_new(list, one) < 0)
            return -1;
    }
    return 0;
}

void api_experiment_export(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id) < 0)
        return;
    const char *fmt = api_query(req, "format");
    if (!fmt || strcmp(fmt, "extra-p")) {
        api_problem(resp, 400, "format", "must be \"extra-p\", got \"%.40s\"", fmt ? fmt : "");
        return;
    }
    store_error err = {0};
    store_experiment e = {0};
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    int64_t set_id = 0;
    int set_number = 0;
    if (!rc) {
        rc = store_model_set_latest(c, id, &set_id, &set_number, NULL, 0, &err);
        if (rc == STORE_NOT_FOUND) {
            store_release(ctx->db, c);
            store_experiment_free(&e);
            api_problem(resp, 409, NULL, "experiment %" PRId64 " has no model set yet: upload "
                        "profiles and let the refit finish", id);
            return;
        }
    }
    json_t *doc = json_object(), *params = json_array(), *ms = json_object();
    for (int i = 0; !rc && i < e.nparams; i++)
        json_array_append_new(params, json_string(e.parameters[i]));
    store_model_filter f = {.limit = EXPORT_PAGE};
    for (int got = EXPORT_PAGE; !rc && got == EXPORT_PAGE; f.offset += got) {
        store_measurement_row *rows = NULL;
        got = 0;
        rc = store_measurements_read(c, set_id, &f, &rows, &got, &err);
        if (!rc && add_rows(ms, rows, got) < 0)
            rc = store_error_set(&err, STORE_INTERNAL, "out of memory");
        store_measurement_rows_free(rows, got);
    }
    store_release(ctx->db, c);
    if (rc) {
        json_decref(doc);
        json_decref(params);
        json_decref(ms);
        store_experiment_free(&e);
        api_store_problem(resp, &err);
        return;
    }
    json_object_set_new(doc, "Extra-P", json_string("4.2.5"));
    json_object_set_new(doc, "parameters", params);
    json_object_set_new(doc, "measurements", ms);
    unsigned char *zip = NULL;
    size_t len = 0;
    char zerr[200];
    if (ingest_extrap_exp_zip(doc, &zip, &len, zerr, sizeof zerr) < 0) {
        api_problem(resp, 500, NULL, "%s", zerr);
    } else {
        api_send_body(resp, 200, "application/zip", (char *)zip, len);
        api_add_header(resp, "Content-Disposition",
                       "attachment; filename=\"experiment-%" PRId64 ".extra-p\"", id);
    }
    json_decref(doc);
    store_experiment_free(&e);
}
