/*
 * export.c — GET /v1/experiments/{id}/export?format=extra-p: the measurements
 * of the experiment's newest model set as an Extra-P experiment (.extra-p: a
 * zip archive with experiment.json, ingest/extrap_exp.h), so that it opens in
 * Extra-P's GUI and command line.
 *
 * The document is analysis/extrap_export.h's, filled page by page as the
 * measurements are read. An experiment without a model set yet answers 409.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/extrap_export.h"
#include "api/handlers.h"
#include "ingest/extrap_exp.h"
#include "store/experiments.h"
#include "store/models.h"

#define EXPORT_PAGE 10000

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
    json_t *doc = rc ? NULL : extrap_export_new((const char *const *)e.parameters, e.nparams);
    if (!rc && !doc)
        rc = store_error_set(&err, STORE_INTERNAL, "out of memory");
    store_model_filter f = {.limit = EXPORT_PAGE};
    for (int got = EXPORT_PAGE; !rc && got == EXPORT_PAGE; f.offset += got) {
        store_measurement_row *rows = NULL;
        got = 0;
        rc = store_measurements_read(c, set_id, &f, &rows, &got, &err);
        if (!rc && extrap_export_add(doc, rows, got) < 0)
            rc = store_error_set(&err, STORE_INTERNAL, "out of memory");
        store_measurement_rows_free(rows, got);
    }
    store_release(ctx->db, c);
    if (rc) {
        json_decref(doc);
        store_experiment_free(&e);
        api_store_problem(resp, &err);
        return;
    }
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
