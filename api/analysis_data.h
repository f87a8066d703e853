/*
 * analysis_data.h — what the analyses (scaling, bottlenecks, cost,
 * configurations, imbalance) read of one model set besides the application
 * models (analysis/set_data.h), built once per (model set, metric) and kept
 * in the model cache as blobs (a model set never changes, so neither does
 * anything derived from it).
 */
#ifndef PERFCAST_API_ANALYSIS_DATA_H
#define PERFCAST_API_ANALYSIS_DATA_H

#include "analysis/set_data.h"
#include "api/api.h"

/* The app data of metric slot `slot` of m. *ref is the cache reference to
 * release with model_cache_blob_release(ctx->models, *ref). NULL with err
 * on a store failure. */
const ad_app *ad_app_get(api_ctx *ctx, const cached_models *m, int slot, const cache_blob **ref,
                         store_error *err);

/* The callpath data of the same set and metric; app from ad_app_get. */
const ad_callpaths *ad_callpaths_get(api_ctx *ctx, const cached_models *m, int slot,
                                     const ad_app *app, const cache_blob **ref,
                                     store_error *err);

/* JSON of a fit: the model's document (api/model_json.h) without the
 * interval data, or {"function":null,"reason":...}. */
json_t *ad_fit_json(const ad_fit *f, const cached_models *m);

#endif
