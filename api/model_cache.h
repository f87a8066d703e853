/*
 * model_cache.h — the application models of each experiment's newest model
 * set, parsed and kept in memory, so that predictions (asked per job
 * submission by schedulers, per refresh by dashboards) cost no database
 * round trip. An entry is good until a notice says its experiment has a
 * newer model set or is gone (api/cache_sync.c hears them from every server
 * on the database; model_cache_forget), or until this server sees a job of
 * the experiment done with a newer set (model_cache_saw_set). While notices
 * cannot be heard (not coherent: at start, after the listener lost its
 * connection) an entry is reloaded when older than the cache's max_age_ms.
 * A load that overlapped a drop is used once, not kept, since it may
 * predate the change. Thread-safe.
 *
 * Next to it, immutable data derived from one model set ("blobs": the
 * callpath models and measurements an analysis needs, parsed and
 * summarized), by key; a model set never changes, so a blob whose key names
 * its set is good for as long as it is kept.
 */
#ifndef PERFCAST_API_MODEL_CACHE_H
#define PERFCAST_API_MODEL_CACHE_H

#include <pthread.h>
#include <stdint.h>

#include "analysis/cost.h"
#include "analysis/formula.h"
#include "api/http.h"
#include "analysis/noisy.h"
#include "modeling/expr.h"
#include "modeling/modeler.h"
#include "store/db.h"
#include "store/models.h"

#define CACHE_MAX_METRICS 8
#define CACHE_PARTS 4 /* comp, comm, mem, epoch */
/* parts[metric][CACHE_IMBALANCE]: the epoch's imbalance part, the slowest
 * rank's epoch minus the sum of the median parts (analysis/epoch_imbalance.h),
 * fitted at load from the set's measurements; absent with reason "" where
 * the two agree (the epoch is the parts' sum), absent with a reason where it
 * was measured but could not be modelled */
#define CACHE_IMBALANCE CACHE_PARTS

typedef struct cached_part {
    int present;        /* a model exists */
    pmnf_model model;
    char *function;     /* the stored text, whole (owned by the entry; NULL when none) */
    char reason[200];   /* why there is none */
} cached_part;

/* One experiment's predictable state; immutable once published. */
typedef struct cached_models {
    int64_t experiment;
    int64_t set_id;
    int set_number;
    int nparams;
    char params[PMNF_MAX_PARAMS][64];
    const char *names[PMNF_MAX_PARAMS]; /* params[i], as the pure modules take them */
    char scaling[8];
    double max_measured[PMNF_MAX_PARAMS]; /* per parameter, over the set's coordinates */
    double min_measured[PMNF_MAX_PARAMS];
    int nmetrics;
    char metrics[CACHE_MAX_METRICS][64];
    cached_part parts[CACHE_MAX_METRICS][CACHE_PARTS + 1]; /* + CACHE_IMBALANCE */
    /* from the experiment: ranks of a point = data_parallel × model_parallel */
    expr data_parallel, model_parallel;
    int has_cost;                   /* the experiment has a cost set-up */
    double cores_per_rank;          /* ρ; 1 without a cost set-up */
    double price_per_core_hour;     /* NaN without a cost set-up */
    char formula[FORMULA_MAX_TEXT + 1]; /* cost.formula, "" when none */
    /* categorical factors (api/levels.h): their names, the experiment's
     * declaration as JSON ({"factors":{...}}, "" without factors), and the
     * level combination these models are of (a text[] literal; "" = all) */
    int nfactors;
    char factors[8][65]; /* the factor names in name order */
    char factors_spec[2048];
    char levels[600];
    /* the set's too-noisy measured points (api/noisy.h), found at load */
    noisy_points noisy;
    /* how many application-level epoch measurements the set has, when the
     * load read them all (model_cache_epoch_rows); -1 when there were more
     * than it reads */
    int epoch_rows;
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
/* The same for one level combination of an experiment with factors (levels:
 * a text[] literal from levels_from_query; NULL or "" = no factors). */
const cached_models *model_cache_get_levels(model_cache *c, store *db, int64_t experiment,
                                            const char *levels, store_error *err);

/* Rendered responses of immutable model sets (model lists, analyses), by
 * key (e.g. "<set id>|<canonical query>"), kept without a copy: get returns
 * a new reference to the body (NULL when absent), put keeps one of its own
 * (best effort: not an answer over a quarter of the 64 MiB the pages may
 * hold). */
api_shared *model_cache_page_get(model_cache *c, const char *key);
void model_cache_page_put(model_cache *c, const char *key, api_shared *body);

/* The ranks of a point (data_parallel × model_parallel); 0 when the
 * degrees cannot be evaluated there. */
double cached_ranks(const cached_models *m, const double *point);
/* The two degrees data_parallel and model_parallel whose product
 * cached_ranks is, at point: 0, or -1 with both NaN when they cannot be
 * evaluated there. */
int cached_degrees(const cached_models *m, const double *point, double *dp, double *mp);

/* Derived data of a model set, shared read-only by the requests holding a
 * reference. */
typedef struct cache_blob {
    char key[96];
    void *data;
    void (*free_data)(void *);
    size_t bytes; /* what data holds, as its builder estimated it */
    int refs;
    struct cache_blob *holds; /* a blob data points into, referenced until this one is freed */
} cache_blob;

/* bytes of blobs a cache holds at once */
#define MODEL_CACHE_BLOB_BUDGET ((size_t)256 << 20)

/* The blob under key, referenced, or NULL. */
const cache_blob *model_cache_blob_get(model_cache *c, const char *key);
/* Stores data of about `bytes` bytes under key (taking ownership; a blob
 * already there under the same key wins and data is freed) and returns a
 * reference; NULL when out of memory (data freed). The blobs held stay
 * within a byte budget: the least recently used go first, and data larger
 * than the budget is returned without being kept. */
const cache_blob *model_cache_blob_put(model_cache *c, const char *key, void *data, size_t bytes,
                                       void (*free_data)(void *));
/* The same for data that points into the blob `holds` (referenced by the
 * caller): the new blob keeps a reference of its own to it until it is
 * freed itself, whether or not the cache kept it. */
const cache_blob *model_cache_blob_put_holding(model_cache *c, const char *key, void *data,
                                               size_t bytes, void (*free_data)(void *),
                                               const cache_blob *holds);
void model_cache_blob_release(model_cache *c, const cache_blob *b);

/* The application-level epoch measurements a set's load read (every
 * metric and phase, in store_repetitions_read()'s order), kept as a blob
 * while the budget allows: statistics and sensitivity of those rows start
 * from them instead of reading them again. A reference to a blob whose data
 * is a model_cache_rows, or NULL. */
typedef struct model_cache_rows {
    store_measurement_row *rows;
    int n;
} model_cache_rows;
const cache_blob *model_cache_epoch_rows(model_cache *c, const cached_models *m);

/* Warming. What statistics and sensitivity requests asked for ("what": a
 * handler's own text naming its filter, at most MODEL_CACHE_WARM_TEXT - 1
 * bytes) is remembered per experiment (the MODEL_CACHE_WARM_MAX most
 * recently asked across experiments), so that when a notice says the
 * experiment has a new model set the rows those requests rest on can be
 * read and kept before anyone asks again (api/stats_warm.h). Requests of an
 * experiment being warmed wait for it (bounded) rather than read the same
 * rows at the same time. */
#define MODEL_CACHE_WARM_MAX 64
#define MODEL_CACHE_WARM_TEXT 256
void model_cache_warm_note(model_cache *c, int64_t experiment, const char *what);
/* Unless the experiment is being warmed already (or WARMING_MAX others
 * are), marks it as being warmed and returns 1. */
int model_cache_warm_begin(model_cache *c, int64_t experiment);
/* What was asked of the experiment, most recently asked first, into out
 * (at most max); their count. */
int model_cache_warm_list(model_cache *c, int64_t experiment,
                          char (*out)[MODEL_CACHE_WARM_TEXT], int max);
/* The experiment is warmed (or given up): waiting requests go on. */
void model_cache_warm_end(model_cache *c, int64_t experiment);
/* Waits while the experiment is being warmed, at most max_ms. */
void model_cache_warm_wait(model_cache *c, int64_t experiment, int max_ms);

/* Drops the experiment's entry (after a delete, or a notice of new models). */
void model_cache_forget(model_cache *c, int64_t experiment);
/* Drops the experiment's entry when it holds a set numbered below number
 * (a job of the experiment was seen done with set number). */
void model_cache_saw_set(model_cache *c, int64_t experiment, int number);
/* Drops every entry (notices may have been missed). */
void model_cache_flush(model_cache *c);
/* Whether notices are heard: entries then live until dropped. */
void model_cache_set_coherent(model_cache *c, int coherent);

/* The experiment's cost set-up of m for analysis/cost.h (its names are
 * m's: it lives as long as m). */
void cached_cost_setup(const cached_models *m, cost_setup *out);

#endif
