/*
 * analysis_data.c — reads and caches the per-(model set, metric) data the
 * analyses read (see analysis_data.h): one database round trip per kind of
 * data and model set, built by analysis/set_data.h, then everything from
 * memory.
 */
#include "api/analysis_data.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "modeling/model_json.h"
#include "store/models.h"
#include "common/jsonb.h"

#define ROWS_MAX 10000000

_Static_assert(AD_GROUPS == CACHE_PARTS, "analysis groups are the model cache's parts");

/* The rank count at a coordinate by the cached models (ad_set.ranks). */
static double ranks_of(const void *m, const double *point)
{
    return cached_ranks(m, point);
}

/* What the builders need of m and its metric slot. */
static void set_of(const cached_models *m, int slot, ad_set *s)
{
    *s = (ad_set){.nparams = m->nparams, .params = m->names, .strong = !strcmp(m->scaling, "strong"),
                  .cores_per_rank = m->cores_per_rank, .metric = m->metrics[slot],
                  .ranks = ranks_of, .ctx = m};
}

json_t *ad_fit_json(const ad_fit *f, const cached_models *m)
{
    if (!f->present)
        return json_pack("{s:n, s:s}", "function", "reason", f->reason);
    const char *const *names = m->names;
    return api_model_to_json(&f->model, names, 0);
}

const ad_app *ad_app_get(api_ctx *ctx, const cached_models *m, int slot, const cache_blob **ref,
                         store_error *err)
{
    char key[96];
    snprintf(key, sizeof key, "app|%" PRId64 "|%.60s", m->set_id, m->metrics[slot]);
    const cache_blob *b = model_cache_blob_get(ctx->models, key);
    if (b) {
        *ref = b;
        return b->data;
    }
    PGconn *c = store_acquire(ctx->db, err);
    if (!c)
        return NULL;
    store_measurement_row *rows = NULL;
    int n = 0;
    store_model_filter f = {.level = "application", .phase = "epoch",
                            .metric = m->metrics[slot], .limit = ROWS_MAX,
                            .levels = m->levels[0] ? m->levels : NULL};
    int rc = store_measurements_read(c, m->set_id, &f, &rows, &n, err);
    store_release(ctx->db, c);
    if (rc)
        return NULL;
    ad_set s;
    set_of(m, slot, &s);
    ad_app *a = ad_app_build(&s, rows, n);
    store_measurement_rows_free(rows, n);
    if (!a || !(b = model_cache_blob_put(ctx->models, key, a, ad_app_bytes(a), ad_app_free))) {
        store_error_set(err, STORE_INTERNAL, "out of memory");
        return NULL;
    }
    *ref = b;
    return b->data;
}

/* ---- the callpath data ------------------------------------------------------------ */

const ad_callpaths *ad_callpaths_get(api_ctx *ctx, const cached_models *m, int slot,
                                     const ad_app *app, const cache_blob **ref,
                                     store_error *err)
{
    char key[96];
    snprintf(key, sizeof key, "cp|%" PRId64 "|%.60s", m->set_id, m->metrics[slot]);
    const cache_blob *b = model_cache_blob_get(ctx->models, key);
    if (b) {
        *ref = b;
        return b->data;
    }
    PGconn *c = store_acquire(ctx->db, err);
    if (!c)
        return NULL;
    store_model_row *models = NULL;
    store_measurement_row *rows = NULL;
    int nmodels = 0, nrows = 0;
    store_model_filter f = {.level = "callpath", .phase = "epoch", .metric = m->metrics[slot],
                            .limit = ROWS_MAX, .levels = m->levels[0] ? m->levels : NULL};
    int rc = store_models_read(c, m->set_id, &f, &models, &nmodels, err);
    if (!rc)
        rc = store_measurements_read(c, m->set_id, &f, &rows, &nrows, err);
    store_release(ctx->db, c);
    ad_set s;
    set_of(m, slot, &s);
    ad_callpaths *d = rc ? NULL : ad_callpaths_build(&s, app, models, nmodels, rows, nrows);
    store_model_rows_free(models, nmodels);
    store_measurement_rows_free(rows, nrows);
    if (rc)
        return NULL;
    if (!d || !(b = model_cache_blob_put(ctx->models, key, d, ad_callpaths_bytes(d), ad_callpaths_free))) {
        store_error_set(err, STORE_INTERNAL, "out of memory");
        return NULL;
    }
    *ref = b;
    return b->data;
}
