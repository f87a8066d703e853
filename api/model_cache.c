/*
 * model_cache.c — newest application models per experiment, in memory (see
 * model_cache.h). A small open-addressing table of reference-counted,
 * immutable entries under one mutex; loading happens outside the lock.
 */
#include "api/model_cache.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/epoch_imbalance.h"
#include "analysis/levels.h"
#include "modeling/model_json.h"
#include "store/experiments.h"
#include "store/models.h"
#include "store/sweeps.h"
#include "common/jsonb.h"

#define CACHE_SLOTS 1024 /* experiments held at once; a colliding entry is replaced */
#define PAGE_SLOTS 512   /* rendered pages held at once, direct-mapped by key */
#define BLOB_SLOTS 256   /* derived data of model sets held at once, by key, 2-way
                            set-associative (the least recently used of a pair goes) */
#define PAGE_BUDGET (64u << 20) /* bytes of rendered pages held at once */
#define BLOB_BUDGET MODEL_CACHE_BLOB_BUDGET

#define WARMING_MAX 16 /* experiments being warmed at once */

/* one remembered request (model_cache_warm_note) */
typedef struct warm_note {
    int64_t experiment; /* 0: free */
    uint64_t used;      /* warm_clock when last asked */
    char what[MODEL_CACHE_WARM_TEXT];
} warm_note;

typedef struct cached_page {
    char *key;
    api_shared *body; /* the cache's reference */
    size_t len;
} cached_page;

struct model_cache {
    pthread_mutex_t lock;
    int64_t max_age_ms;
    int coherent;   /* notices are heard: entries live until dropped */
    uint64_t epoch; /* counts drops: a load that overlapped one is not kept */
    cached_models *slots[CACHE_SLOTS];
    cached_page pages[PAGE_SLOTS];
    size_t page_bytes; /* sum of the pages' lengths, at most PAGE_BUDGET */
    cache_blob *blobs[BLOB_SLOTS];
    uint64_t blob_used[BLOB_SLOTS]; /* blob_clock at each blob's last use */
    uint64_t blob_clock;
    size_t blob_bytes; /* sum of the kept blobs' bytes, at most BLOB_BUDGET */
    warm_note notes[MODEL_CACHE_WARM_MAX];
    uint64_t warm_clock;
    int64_t warming[WARMING_MAX]; /* experiments being warmed (0: free) */
    pthread_cond_t warmed;        /* signalled when one is done */
};

static const char *const part_names[CACHE_PARTS] = {"comp", "comm", "mem", "epoch"};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

model_cache *model_cache_new(int64_t max_age_ms)
{
    model_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->warmed, NULL);
    c->max_age_ms = max_age_ms;
    return c;
}

static void cached_models_free(cached_models *m)
{
    if (!m)
        return;
    for (int i = 0; i < CACHE_MAX_METRICS; i++)
        for (int k = 0; k <= CACHE_IMBALANCE; k++)
            free(m->parts[i][k].function);
    free(m);
}

static void unref_locked(cached_models *m)
{
    if (m && --m->refs == 0)
        cached_models_free(m);
}

static void blob_unref_locked(cache_blob *b)
{
    if (b && --b->refs == 0) {
        if (b->free_data)
            b->free_data(b->data);
        blob_unref_locked(b->holds);
        free(b);
    }
}

void model_cache_free(model_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CACHE_SLOTS; i++)
        unref_locked(c->slots[i]);
    for (int i = 0; i < PAGE_SLOTS; i++) {
        free(c->pages[i].key);
        api_shared_release(c->pages[i].body);
    }
    for (int i = 0; i < BLOB_SLOTS; i++)
        blob_unref_locked(c->blobs[i]);
    pthread_cond_destroy(&c->warmed);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int slot_of(int64_t experiment)
{
    return (int)((uint64_t)experiment * 11400714819323198485ULL >> 54) % CACHE_SLOTS;
}

static int metric_slot(cached_models *m, const char *metric)
{
    for (int i = 0; i < m->nmetrics; i++)
        if (!strcmp(m->metrics[i], metric))
            return i;
    if (m->nmetrics == CACHE_MAX_METRICS || strlen(metric) >= sizeof m->metrics[0])
        return -1;
    strcpy(m->metrics[m->nmetrics], metric);
    return m->nmetrics++;
}

static int part_index(const char *name)
{
    for (int i = 0; i < CACHE_PARTS; i++)
        if (!strcmp(part_names[i], name))
            return i;
    return -1;
}

/* The application models of rows into m; -1 when out of memory. */
static int load_parts(cached_models *m, const store_model_row *rows, int n)
{
    const char *const *names = m->names;
    for (int i = 0; i < n; i++) {
        int part = part_index(rows[i].name);
        int metric = metric_slot(m, rows[i].metric);
        if (part < 0 || metric < 0)
            continue;
        cached_part *p = &m->parts[metric][part];
        json_t *doc = rows[i].model_json ? jsonb_parse(rows[i].model_json, 0) : NULL;
        int oom = 0;
        if (doc && api_model_from_json(doc, names, m->nparams, &p->model) == 0) {
            /* the whole text: a segmented factor repeats in each of its terms */
            free(p->function);
            p->function = strdup(rows[i].function ? rows[i].function : "");
            p->present = p->function != NULL;
            oom = !p->present;
        } else {
            snprintf(p->reason, sizeof p->reason, "%s", rows[i].reason ? rows[i].reason : "not modeled");
        }
        json_decref(doc);
        if (oom)
            return -1;
    }
    return 0;
}

static void load_max_measured(cached_models *m, const store_measurement_row *rows, int n)
{
    for (int q = 0; q < m->nparams; q++) {
        m->max_measured[q] = 0;
        m->min_measured[q] = n > 0 ? INFINITY : 0;
    }
    for (int i = 0; i < n; i++)
        for (int q = 0; q < m->nparams && q < rows[i].nparams; q++) {
            if (rows[i].point[q] > m->max_measured[q])
                m->max_measured[q] = rows[i].point[q];
            if (rows[i].point[q] < m->min_measured[q])
                m->min_measured[q] = rows[i].point[q];
        }
}

/* The epoch's imbalance part of metric time (analysis/epoch_imbalance.h)
 * from its application rows; -1 when out of memory. */
static int load_imbalance(cached_models *m, const store_measurement_row *rows, int n)
{
    int slot = -1;
    for (int i = 0; i < m->nmetrics; i++)
        if (!strcmp(m->metrics[i], "time"))
            slot = i;
    if (slot < 0)
        return 0;
    const char *const *names = m->names;
    ei_result r;
    if (ei_fit(&(ei_input){m->nparams, names, !strcmp(m->scaling, "strong")}, rows, n, &r) < 0)
        return -1;
    cached_part *p = &m->parts[slot][CACHE_IMBALANCE];
    p->present = r.present;
    p->model = r.model;
    p->function = r.function; /* taken */
    if (r.included && !r.present)
        snprintf(p->reason, sizeof p->reason, "%s", r.reason[0] ? r.reason : "not modeled");
    return 0;
}

/* The training degrees and the cost set-up from the experiment's spec. */
static void load_setup(cached_models *m, const store_experiment *e)
{
    const json_t *t = json_object_get(e->spec, "training");
    const char *const *names = m->names;
    const char *g = json_string_value(json_object_get(t, "data_parallel"));
    const char *mp = json_string_value(json_object_get(t, "model_parallel"));
    char why[160];
    /* validated at creation; a degree that no longer compiles gives 0 ranks */
    if (expr_compile(g ? g : (m->nparams ? m->params[0] : "1"), names, m->nparams,
                     &m->data_parallel, why, sizeof why))
        memset(&m->data_parallel, 0, sizeof m->data_parallel);
    if (expr_compile(mp ? mp : "1", names, m->nparams, &m->model_parallel, why, sizeof why))
        memset(&m->model_parallel, 0, sizeof m->model_parallel);
    const json_t *cost = json_object_get(e->spec, "cost");
    m->has_cost = json_is_object(cost);
    m->cores_per_rank = m->has_cost ? json_number_value(json_object_get(cost, "cores_per_rank")) : 1;
    if (!(m->cores_per_rank > 0))
        m->cores_per_rank = 1;
    m->price_per_core_hour =
        m->has_cost ? json_number_value(json_object_get(cost, "price_per_core_hour")) : NAN;
    const char *f = json_string_value(json_object_get(cost, "formula"));
    snprintf(m->formula, sizeof m->formula, "%s", f ? f : "");
}

double cached_ranks(const cached_models *m, const double *point)
{
    double g, mp;
    if (m->data_parallel.nops == 0 || m->model_parallel.nops == 0 ||
        expr_eval(&m->data_parallel, point, &g) || expr_eval(&m->model_parallel, point, &mp))
        return 0;
    double r = g * mp;
    return isfinite(r) && r > 0 ? r : 0;
}

int cached_degrees(const cached_models *m, const double *point, double *dp, double *mp)
{
    *dp = *mp = NAN;
    if (m->data_parallel.nops == 0 || m->model_parallel.nops == 0 ||
        expr_eval(&m->data_parallel, point, dp) || expr_eval(&m->model_parallel, point, mp)) {
        *dp = *mp = NAN;
        return -1;
    }
    return 0;
}

/* The experiment's factor names (in name order, the order of a level
 * combination's levels) and declaration into m. */
static void load_factors(cached_models *m, const store_experiment *e)
{
    const json_t *factors = json_object_get(e->spec, "factors");
    if (!json_is_object(factors))
        return;
    const char *names[LEVELS_MAX_FACTORS];
    size_t nf = levels_names(e->spec, names);
    for (size_t i = 0; i < nf && i < sizeof m->factors / sizeof m->factors[0]; i++)
        snprintf(m->factors[m->nfactors++], sizeof m->factors[0], "%s", names[i]);
    json_t *wrap = json_pack("{s:O}", "factors", (json_t *)factors);
    char *text = wrap ? json_dumps(wrap, JSON_COMPACT) : NULL;
    if (text && strlen(text) < sizeof m->factors_spec)
        strcpy(m->factors_spec, text);
    free(text);
    json_decref(wrap);
}

/* the blob key of a set's epoch rows; "" when the levels make it too long */
static void epoch_rows_key(int64_t set_id, const char *levels, char *key, size_t cap)
{
    int n = snprintf(key, cap, "epochrows|%" PRId64 "|%s", set_id, levels);
    if (n < 0 || (size_t)n >= cap)
        key[0] = '\0';
}

static void epoch_rows_free(void *p)
{
    model_cache_rows *r = p;
    store_measurement_rows_free(r->rows, r->n);
    free(r);
}

/* Keeps the epoch rows a load read (taking them; freed when not kept);
 * extra: rows besides them in their slab (epoch_rows_of), counted in the
 * blob's bytes. */
static void epoch_rows_keep(model_cache *c, const cached_models *m, store_measurement_row *meas,
                            int nmeas, int extra)
{
    char key[sizeof ((cache_blob *)0)->key];
    epoch_rows_key(m->set_id, m->levels, key, sizeof key);
    model_cache_rows *r = key[0] ? malloc(sizeof *r) : NULL;
    if (!r) {
        store_measurement_rows_free(meas, nmeas);
        return;
    }
    r->rows = meas;
    r->n = nmeas;
    size_t bytes = sizeof *r;
    for (int i = 0; i < nmeas; i++)
        bytes += sizeof *meas + 8 * (size_t)(meas[i].nparams + meas[i].nreps) + 64;
    if (nmeas > 0)
        bytes += (size_t)extra * (sizeof *meas + 8 * (size_t)(meas[0].nparams + meas[0].nreps) + 64);
    const cache_blob *b = model_cache_blob_put(c, key, r, bytes, epoch_rows_free);
    if (b)
        model_cache_blob_release(c, b);
}

/* 1 when every application model of the set is of metric time: then its
 * epoch rows (every metric's) are among its time rows. */
static int only_time(const store_model_row *rows, int n)
{
    for (int i = 0; i < n; i++)
        if (!rows[i].metric || strcmp(rows[i].metric, "time"))
            return 0;
    return n > 0;
}

/* The rows named epoch of app (*napp time rows of one store_repetitions_read,
 * in its order), moved into *meas with the slab they share (so app is only
 * the array then, and *napp 0); 0, or -1 when out of memory. No epoch rows:
 * *meas NULL, app untouched. */
static int epoch_rows_of(store_measurement_row *app, int *napp, store_measurement_row **meas,
                         int *nmeas)
{
    int k = 0;
    *meas = NULL;
    *nmeas = 0;
    for (int i = 0; i < *napp; i++)
        k += !strcmp(app[i].name, "epoch");
    if (k == 0 || !app[0].slab)
        return 0;
    store_measurement_row *v = malloc(sizeof *v * (size_t)k);
    if (!v)
        return -1;
    k = 0;
    for (int i = 0; i < *napp; i++)
        if (!strcmp(app[i].name, "epoch"))
            v[k++] = app[i];
    *meas = v;
    *nmeas = k;
    *napp = 0; /* the slab is v's now: app is the array alone */
    return 0;
}

const cache_blob *model_cache_epoch_rows(model_cache *c, const cached_models *m)
{
    char key[sizeof ((cache_blob *)0)->key];
    epoch_rows_key(m->set_id, m->levels, key, sizeof key);
    return key[0] ? model_cache_blob_get(c, key) : NULL;
}

static cached_models *load(model_cache *cache, store *db, int64_t experiment, const char *levels,
                           store_error *err)
{
    PGconn *c = store_acquire(db, err);
    if (!c)
        return NULL;
    cached_models *m = calloc(1, sizeof *m);
    store_experiment e;
    int rc = m ? store_experiment_get(c, experiment, &e, err)
               : store_error_set(err, STORE_INTERNAL, "out of memory");
    if (rc) {
        store_release(db, c);
        free(m);
        return NULL;
    }
    m->experiment = experiment;
    m->nparams = e.nparams < PMNF_MAX_PARAMS ? e.nparams : PMNF_MAX_PARAMS;
    for (int i = 0; i < m->nparams; i++) {
        snprintf(m->params[i], sizeof m->params[i], "%s", e.parameters[i]);
        m->names[i] = m->params[i];
    }
    snprintf(m->scaling, sizeof m->scaling, "%s", e.scaling ? e.scaling : "weak");
    load_setup(m, &e);
    load_factors(m, &e);
    snprintf(m->levels, sizeof m->levels, "%s", levels ? levels : "");
    store_experiment_free(&e);
    rc = store_model_set_latest(c, experiment, &m->set_id, &m->set_number, NULL, 0, err);
    if (rc == STORE_NOT_FOUND)
        store_error_set(err, STORE_CONFLICT,
                        "experiment %" PRId64 " has no models yet: upload profiles and wait for "
                        "its job to finish",
                        experiment);
    store_model_row *rows = NULL;
    store_measurement_row *meas = NULL;
    int nrows = 0, nmeas = 0;
    const char *lv = m->levels[0] ? m->levels : NULL;
    store_model_filter f = {.level = "application", .phase = "epoch", .limit = 10000,
                            .levels = lv};
    if (!rc)
        rc = store_models_read(c, m->set_id, &f, &rows, &nrows, err);
    /* the parts and the epoch of metric time, for the epoch's imbalance part
     * (one level combination: a set read across combinations has none) */
    store_measurement_row *app = NULL;
    int napp = 0, nimb = 0;
    store_model_filter fa = {.level = "application", .phase = "epoch", .metric = "time",
                             .limit = 500000, .levels = lv};
    if (!rc && (!m->nfactors || lv))
        rc = store_repetitions_read(c, m->set_id, &fa, &app, &napp, err);
    nimb = napp;
    /* the epoch rows of every metric: the coordinates and repetitions alone,
     * in binary (a third of the time of every column as text, for 10,000
     * coordinates); where time is the only metric, those among the time
     * rows just read (every application row is of phase epoch), not read
     * again */
    store_model_filter fm = {.level = "application", .name = "epoch", .limit = 100000,
                             .levels = lv};
    int shared = !rc && napp > 0 && napp < fa.limit && only_time(rows, nrows);
    if (shared && epoch_rows_of(app, &napp, &meas, &nmeas) < 0)
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    if (!rc && !meas)
        rc = store_repetitions_read(c, m->set_id, &fm, &meas, &nmeas, err);
    store_release(db, c);
    if (!rc && load_parts(m, rows, nrows) < 0)
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    if (!rc && nimb < fa.limit && load_imbalance(m, app, nimb) < 0)
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    if (napp == 0 && nimb > 0) /* its slab moved to meas: the array alone */
        free(app);
    else
        store_measurement_rows_free(app, napp);
    if (rc) {
        store_model_rows_free(rows, nrows);
        store_measurement_rows_free(meas, nmeas);
        cached_models_free(m);
        return NULL;
    }
    load_max_measured(m, meas, nmeas);
    noisy_points_scan(&(noisy_names){m->params, m->nparams, m->factors, m->nfactors}, meas, nmeas,
                      &m->noisy);
    store_model_rows_free(rows, nrows);
    m->epoch_rows = nmeas < fm.limit ? nmeas : -1;
    if (m->epoch_rows >= 0) /* all of them: statistics and sensitivity may start from these */
        epoch_rows_keep(cache, m, meas, nmeas, nimb > nmeas && napp == 0 ? nimb - nmeas : 0);
    else
        store_measurement_rows_free(meas, nmeas);
    m->loaded_ms = now_ms();
    return m;
}

const cached_models *model_cache_get(model_cache *c, store *db, int64_t experiment,
                                     store_error *err)
{
    return model_cache_get_levels(c, db, experiment, NULL, err);
}

/* The slot of (experiment, levels): FNV-1a of the levels mixed into the id. */
static int slot_of_levels(int64_t experiment, const char *levels)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)levels; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return slot_of(experiment ^ (int64_t)(*levels ? h : 0));
}

const cached_models *model_cache_get_levels(model_cache *c, store *db, int64_t experiment,
                                            const char *levels, store_error *err)
{
    if (!levels)
        levels = "";
    if (strlen(levels) >= sizeof ((cached_models *)0)->levels) {
        store_error_set(err, STORE_INVALID, "the factor levels are too long");
        return NULL;
    }
    int slot = slot_of_levels(experiment, levels);
    pthread_mutex_lock(&c->lock);
    cached_models *m = c->slots[slot];
    if (m && m->experiment == experiment && !strcmp(m->levels, levels) &&
        (c->coherent || now_ms() - m->loaded_ms <= c->max_age_ms)) {
        m->refs++;
        pthread_mutex_unlock(&c->lock);
        return m;
    }
    uint64_t epoch = c->epoch;
    pthread_mutex_unlock(&c->lock);
    m = load(c, db, experiment, levels, err);
    if (!m)
        return NULL;
    pthread_mutex_lock(&c->lock);
    if (epoch != c->epoch) { /* something was dropped meanwhile: maybe what we read */
        m->refs = 1;
        pthread_mutex_unlock(&c->lock);
        return m;
    }
    unref_locked(c->slots[slot]);
    m->refs = 2; /* the cache's and the caller's */
    c->slots[slot] = m;
    pthread_mutex_unlock(&c->lock);
    return m;
}

void model_cache_release(model_cache *c, const cached_models *m)
{
    pthread_mutex_lock(&c->lock);
    unref_locked((cached_models *)m);
    pthread_mutex_unlock(&c->lock);
}

void model_cache_forget(model_cache *c, int64_t experiment)
{
    /* every level combination's entry, wherever it hashed to */
    pthread_mutex_lock(&c->lock);
    for (int slot = 0; slot < CACHE_SLOTS; slot++) {
        cached_models *m = c->slots[slot];
        if (m && m->experiment == experiment) {
            unref_locked(m);
            c->slots[slot] = NULL;
        }
    }
    c->epoch++;
    pthread_mutex_unlock(&c->lock);
}

void model_cache_saw_set(model_cache *c, int64_t experiment, int number)
{
    int slot = slot_of(experiment);
    pthread_mutex_lock(&c->lock);
    cached_models *m = c->slots[slot];
    if (!m || m->experiment != experiment || m->set_number < number) {
        if (m && m->experiment == experiment) {
            unref_locked(m);
            c->slots[slot] = NULL;
        }
        c->epoch++; /* a load under way may have read an older set */
    }
    pthread_mutex_unlock(&c->lock);
}

void model_cache_flush(model_cache *c)
{
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < CACHE_SLOTS; i++) {
        unref_locked(c->slots[i]);
        c->slots[i] = NULL;
    }
    c->epoch++;
    pthread_mutex_unlock(&c->lock);
}

void model_cache_set_coherent(model_cache *c, int coherent)
{
    pthread_mutex_lock(&c->lock);
    c->coherent = coherent;
    pthread_mutex_unlock(&c->lock);
}

static int page_slot(const char *key)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (int)(h % PAGE_SLOTS);
}

api_shared *model_cache_page_get(model_cache *c, const char *key)
{
    cached_page *pg = &c->pages[page_slot(key)];
    api_shared *found = NULL;
    pthread_mutex_lock(&c->lock);
    if (pg->key && !strcmp(pg->key, key))
        found = api_shared_ref(pg->body);
    pthread_mutex_unlock(&c->lock);
    return found;
}

/* empties page slot i */
static void page_drop_locked(model_cache *c, int i)
{
    cached_page *pg = &c->pages[i];
    c->page_bytes -= pg->len;
    free(pg->key);
    api_shared_release(pg->body);
    *pg = (cached_page){0};
}

void model_cache_page_put(model_cache *c, const char *key, api_shared *body)
{
    size_t len;
    api_shared_text(body, &len);
    if (len > PAGE_BUDGET / 4) /* one answer never crowds out the others */
        return;
    char *k = strdup(key);
    if (!k)
        return;
    int slot = page_slot(key);
    cached_page *pg = &c->pages[slot];
    pthread_mutex_lock(&c->lock);
    /* over the budget: drop the pages that follow this slot (pages of sets
     * no longer current are never read again, and would otherwise keep
     * every new answer out once the budget is full) */
    for (int i = 1; i < PAGE_SLOTS && c->page_bytes - pg->len + len > PAGE_BUDGET; i++)
        page_drop_locked(c, (slot + i) % PAGE_SLOTS);
    c->page_bytes = c->page_bytes - pg->len + len;
    free(pg->key);
    api_shared_release(pg->body);
    *pg = (cached_page){k, api_shared_ref(body), len};
    pthread_mutex_unlock(&c->lock);
}

/* the first of the two slots key may occupy */
static int blob_slot(const char *key)
{
    uint64_t h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return (int)(h % (BLOB_SLOTS / 2)) * 2;
}

/* the slot holding key, or -1 */
static int blob_find_locked(model_cache *c, int slot, const char *key)
{
    for (int w = slot; w < slot + 2; w++)
        if (c->blobs[w] && !strcmp(c->blobs[w]->key, key))
            return w;
    return -1;
}

const cache_blob *model_cache_blob_get(model_cache *c, const char *key)
{
    int slot = blob_slot(key);
    pthread_mutex_lock(&c->lock);
    int w = blob_find_locked(c, slot, key);
    cache_blob *b = w >= 0 ? c->blobs[w] : NULL;
    if (b) {
        b->refs++;
        c->blob_used[w] = ++c->blob_clock;
    }
    pthread_mutex_unlock(&c->lock);
    return b;
}

/* empties slot w (its blob lives on while requests hold it) */
static void blob_drop_locked(model_cache *c, int w)
{
    cache_blob *b = c->blobs[w];
    if (!b)
        return;
    c->blob_bytes -= b->bytes;
    c->blobs[w] = NULL;
    blob_unref_locked(b);
}

/* drops the least recently used blobs until `bytes` more fit the budget */
static void blob_make_room_locked(model_cache *c, size_t bytes)
{
    while (c->blob_bytes + bytes > BLOB_BUDGET) {
        int lru = -1;
        for (int w = 0; w < BLOB_SLOTS; w++)
            if (c->blobs[w] && (lru < 0 || c->blob_used[w] < c->blob_used[lru]))
                lru = w;
        if (lru < 0)
            return;
        blob_drop_locked(c, lru);
    }
}

const cache_blob *model_cache_blob_put(model_cache *c, const char *key, void *data, size_t bytes,
                                       void (*free_data)(void *))
{
    return model_cache_blob_put_holding(c, key, data, bytes, free_data, NULL);
}

const cache_blob *model_cache_blob_put_holding(model_cache *c, const char *key, void *data,
                                               size_t bytes, void (*free_data)(void *),
                                               const cache_blob *holds)
{
    cache_blob *b = calloc(1, sizeof *b);
    if (!b || strlen(key) >= sizeof b->key) {
        free(b);
        if (free_data)
            free_data(data);
        return NULL;
    }
    snprintf(b->key, sizeof b->key, "%s", key);
    b->data = data;
    b->free_data = free_data;
    b->bytes = bytes;
    int slot = blob_slot(key);
    pthread_mutex_lock(&c->lock);
    int w = blob_find_locked(c, slot, key);
    if (w >= 0) {
        /* another request built the same data meanwhile: keep the first */
        cache_blob *old = c->blobs[w];
        old->refs++;
        c->blob_used[w] = ++c->blob_clock;
        pthread_mutex_unlock(&c->lock);
        if (free_data)
            free_data(data);
        free(b);
        return old;
    }
    if ((b->holds = (cache_blob *)holds)) /* this blob's data exists: it holds its source */
        b->holds->refs++;
    if (bytes > BLOB_BUDGET) {
        /* larger than everything the cache may hold: for this caller alone */
        b->refs = 1;
        pthread_mutex_unlock(&c->lock);
        return b;
    }
    /* an empty slot of the pair, else the one used longer ago */
    w = !c->blobs[slot]                                      ? slot
        : !c->blobs[slot + 1]                                ? slot + 1
        : c->blob_used[slot] <= c->blob_used[slot + 1] ? slot
                                                             : slot + 1;
    blob_drop_locked(c, w);
    blob_make_room_locked(c, bytes);
    b->refs = 2; /* the cache's and the caller's */
    c->blobs[w] = b;
    c->blob_used[w] = ++c->blob_clock;
    c->blob_bytes += bytes;
    pthread_mutex_unlock(&c->lock);
    return b;
}

void model_cache_blob_release(model_cache *c, const cache_blob *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&c->lock);
    blob_unref_locked((cache_blob *)b);
    pthread_mutex_unlock(&c->lock);
}

/* ---- warming ------------------------------------------------------------------ */

void model_cache_warm_note(model_cache *c, int64_t experiment, const char *what)
{
    if (experiment <= 0 || strlen(what) >= MODEL_CACHE_WARM_TEXT)
        return;
    pthread_mutex_lock(&c->lock);
    int at = 0;
    for (int i = 0; i < MODEL_CACHE_WARM_MAX; i++) {
        warm_note *w = &c->notes[i];
        if (w->experiment == experiment && !strcmp(w->what, what)) {
            at = i;
            break;
        }
        if (c->notes[i].used < c->notes[at].used) /* free ones have used 0 */
            at = i;
    }
    warm_note *w = &c->notes[at];
    w->experiment = experiment;
    w->used = ++c->warm_clock;
    snprintf(w->what, sizeof w->what, "%s", what);
    pthread_mutex_unlock(&c->lock);
}

static int warming_slot_locked(const model_cache *c, int64_t experiment)
{
    for (int i = 0; i < WARMING_MAX; i++)
        if (c->warming[i] == experiment)
            return i;
    return -1;
}

int model_cache_warm_begin(model_cache *c, int64_t experiment)
{
    int begun = 1;
    pthread_mutex_lock(&c->lock);
    if (warming_slot_locked(c, experiment) >= 0)
        begun = 0; /* under way already: it reads the newest set anyway */
    int slot = begun ? warming_slot_locked(c, 0) : -1;
    if (slot >= 0)
        c->warming[slot] = experiment;
    pthread_mutex_unlock(&c->lock);
    return slot >= 0;
}

int model_cache_warm_list(model_cache *c, int64_t experiment,
                          char (*out)[MODEL_CACHE_WARM_TEXT], int max)
{
    int n = 0;
    uint64_t below = UINT64_MAX; /* most recently asked first */
    pthread_mutex_lock(&c->lock);
    while (n < max) {
        int best = -1;
        for (int i = 0; i < MODEL_CACHE_WARM_MAX; i++)
            if (c->notes[i].experiment == experiment && c->notes[i].used < below &&
                (best < 0 || c->notes[i].used > c->notes[best].used))
                best = i;
        if (best < 0)
            break;
        memcpy(out[n++], c->notes[best].what, MODEL_CACHE_WARM_TEXT);
        below = c->notes[best].used;
    }
    pthread_mutex_unlock(&c->lock);
    return n;
}

void model_cache_warm_end(model_cache *c, int64_t experiment)
{
    pthread_mutex_lock(&c->lock);
    int slot = warming_slot_locked(c, experiment);
    if (slot >= 0)
        c->warming[slot] = 0;
    pthread_cond_broadcast(&c->warmed);
    pthread_mutex_unlock(&c->lock);
}

void model_cache_warm_wait(model_cache *c, int64_t experiment, int max_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += max_ms / 1000;
    until.tv_nsec += (long)(max_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->lock);
    while (experiment > 0 && warming_slot_locked(c, experiment) >= 0)
        if (pthread_cond_timedwait(&c->warmed, &c->lock, &until))
            break; /* timed out (or failed): the request reads for itself */
    pthread_mutex_unlock(&c->lock);
}

void cached_cost_setup(const cached_models *m, cost_setup *out)
{
    *out = (cost_setup){.has_cost = m->has_cost, .cores_per_rank = m->cores_per_rank,
                        .price_per_core_hour = m->price_per_core_hour, .formula = m->formula,
                        .params = m->names, .nparams = m->nparams};
}
