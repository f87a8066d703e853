/*
 * devices.c — the GPU devices the efficiency figures and roofline times are
 * measured against (execgraph/xg_device.h), over HTTP:
 *
 *   GET    /v1/devices        -> {"devices":[{"id"|null,"name","builtin",
 *                                 "peak_flops":{"fp64","fp32","tf32","fp16"},
 *                                 "dram_bandwidth","created_at"?}]}: the
 *                                 built-in catalog (read-only), then the
 *                                 tenant's own
 *   POST   /v1/devices        {"name","peak_flops":{...},"dram_bandwidth"}
 *                              -> 201 the device; 400 naming the field (a
 *                                 peak that is not a finite number > 0, an
 *                                 unknown field), 409 for a name in use or a
 *                                 built-in's
 *   DELETE /v1/devices/{id}   -> 204 (built-ins have no id: read-only)
 *
 * ?device=NAME of the analyses is resolved by it_job_device()
 * (pipeline/iteration_job.h): a built-in first, then the tenant's.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/iteration.h"
#include "store/devices.h"
#include "common/jsonb.h"

static json_t *row_json(const store_device *d)
{
    json_t *doc = jsonb_parse(d->doc, 0);
    if (!doc)
        doc = json_object();
    json_object_set_new(doc, "id", json_integer(d->id));
    json_object_set_new(doc, "builtin", json_false());
    json_object_set_new(doc, "created_at", json_string(d->created_at));
    return doc;
}

void api_devices_list(api_ctx *ctx, api_request *req, api_response *resp)
{
    store_error err;
    store_device *rows = NULL;
    int n = 0;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_devices_list(c, req->tenant_id, &rows, &n, &err) : err.code;
    store_release(ctx->db, c);
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    json_t *list = json_array();
    int nb;
    const xg_device *b = xg_device_builtins(&nb);
    for (int i = 0; i < nb; i++) {
        json_t *d = iteration_device_json(&b[i]);
        json_object_set_new(d, "id", json_null());
        json_object_set_new(d, "builtin", json_true());
        json_array_append_new(list, d);
    }
    for (int i = 0; i < n; i++)
        json_array_append_new(list, row_json(&rows[i]));
    store_devices_free(rows, n);
    api_send_json(resp, 200, json_pack("{s:o}", "devices", list));
}

void api_devices_create(api_ctx *ctx, api_request *req, api_response *resp)
{
    json_t *body;
    if (api_parse_object(req, resp, &body))
        return;
    xg_device d;
    xg_error xerr;
    if (iteration_device_parse(body, &d, &xerr) < 0) {
        json_decref(body);
        api_problem(resp, 400, xerr.field[0] ? xerr.field : NULL, "%s", xerr.msg);
        return;
    }
    json_decref(body);
    if (xg_device_builtin(d.name)) {
        api_problem(resp, 409, "name", "\"%s\" is a built-in device (read-only); choose "
                    "another name", d.name);
        return;
    }
    json_t *doc = iteration_device_json(&d);
    size_t len;
    char *text = api_json_text(doc, &len);
    json_decref(doc);
    store_error err;
    store_device row;
    PGconn *c = text ? store_acquire(ctx->db, &err) : NULL;
    int rc = !text ? store_error_set(&err, STORE_INTERNAL, "out of memory")
             : c   ? store_devices_create(c, req->tenant_id, d.name, text, &row, &err)
                   : err.code;
    store_release(ctx->db, c);
    free(text);
    if (rc == STORE_CONFLICT) {
        api_problem(resp, 409, "name", "%s", err.msg);
        return;
    }
    if (rc) {
        api_store_problem(resp, &err);
        return;
    }
    api_send_json(resp, 201, row_json(&row));
    store_device_free(&row);
}

void api_devices_delete(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "device", &id))
        return;
    store_error err;
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_devices_delete(c, req->tenant_id, id, &err) : err.code;
    store_release(ctx->db, c);
    if (rc)
        api_store_problem(resp, &err);
    else
        api_send_empty(resp, 204);
}
