/*
 * model_cache.h — the application models of each experiment's newest model
 * set, parsed and kept in memory, so that predictions (asked per job
 * submission by schedulers, per refresh by dashboards) cost no database
 * round trip. An entry is reloaded when it is older than the cache's
 * max_age_ms: a refit becomes visible to predictions within that time, on
 * every replica, without any coordination. Thread-safe.
 */
#ifndef PERFCAST_API_MODEL_CACHE_H
#define PERFCAST_API_MODEL_CACHE_H

#include <pthread.h>
#include <stdint.h>

#include "modeling/modeler.h"
#include "store/db.h"

#define CACHE_MAX_METRICS 8
#define CACHE_PARTS 4 /* comp, comm, mem, epoch */

typedef struct cached_part {
    int present;        /* a model exists */
    pmnf_model model;
    char function[512];
    char reason[200];   /* why there is none */
} cached_part;

/* One experiment's predictable state; immutable once published. */
typedef struct cached_models {
    int64_t experiment;
    int64_t set_id;
    int set_number;
    int nparams;
    char params[PMNF_MAX_PARAMS][64];
    char scaling[8];
    double max_measured[PMNF_MAX_PARAMS]; /* per parameter, over the set's coordinates */
    int nmetrics;
    char metrics[CACHE_MAX_METRICS][64];
    cached_part parts[CACHE_MAX_METRICS][CACHE_PARTS];
    int64_t loaded_ms;
    int refs;           /* owned by the cache and by readers */
} cached_models;

typedef struct model_cache model_cache;

model_cache *model_cache_new(int64_t max_age_ms);
void model_cache_free(model_cache *c);

/* The experiment's models, loading them when absent or stale. Returns a
 * reference (release with model_cache_release), or NULL with err:
 * STORE_NOT_FOUND for an unknown experiment or one without models yet
 * (err->msg says which), STORE_UNAVAILABLE, ... */
const cached_models *model_cache_get(model_cache *c, store *db, int64_t experiment,
                                     store_error *err);
void model_cache_release(model_cache *c, const cached_models *m);

/* Rendered responses of immutable model sets (model lists), by key (e.g.
 * "<set id>|<canonical query>"). get copies the body into *body (malloc'ed)
 * and returns 1 when present; put stores a copy (best effort). */
int model_cache_page_get(model_cache *c, const char *key, char **body, size_t *len);
void model_cache_page_put(model_cache *c, const char *key, const char *body, size_t len);

/* Drops the experiment's entry (after a delete). */
void model_cache_forget(model_cache *c, int64_t experiment);

#endif
