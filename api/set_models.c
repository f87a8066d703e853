/*
 * set_models.c — one model set's models, parsed for prediction (see
 * set_models.h).
 */
#include "api/set_models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/epoch_imbalance.h"
#include "store/sweeps.h"
#include "modeling/model_json.h"
#include "common/jsonb.h"

int set_models_load(PGconn *c, int64_t set_id, const char *metric, const char *level,
                    const char *name, const char *const *names, int np, set_models *s,
                    store_error *err)
{
    memset(s, 0, sizeof *s);
    store_model_filter f = {.metric = metric, .level = level, .name = name, .phase = "epoch",
                            .limit = 100000};
    int rc = store_models_read(c, set_id, &f, &s->rows, &s->nrows, err);
    if (rc)
        return rc;
    s->models = calloc(s->nrows ? (size_t)s->nrows : 1, sizeof *s->models);
    s->ok = calloc(s->nrows ? (size_t)s->nrows : 1, sizeof *s->ok);
    if (!s->models || !s->ok)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    for (int i = 0; i < s->nrows; i++) {
        if (!s->rows[i].function || !s->rows[i].model_json)
            continue;
        json_t *doc = jsonb_parse(s->rows[i].model_json, 0);
        s->ok[i] = doc && !api_model_from_json(doc, names, np, &s->models[i]);
        json_decref(doc);
    }
    return STORE_OK;
}

void set_models_free(set_models *s)
{
    store_model_rows_free(s->rows, s->nrows);
    free(s->models);
    free(s->ok);
    memset(s, 0, sizeof *s);
}

int set_models_find(const set_models *s, const char *level, const char *name)
{
    for (int i = 0; i < s->nrows; i++)
        if (!strcmp(s->rows[i].level, level) && !strcmp(s->rows[i].name, name))
            return i;
    return -1;
}

static prediction predict_row(const set_models *s, int i, const double *pt)
{
    prediction v = {NAN, NAN, NAN, 0};
    if (i < 0 || !s->ok[i])
        return v;
    v.has_interval = pmnf_predict(&s->models[i], pt, &v.value, &v.lo, &v.hi) == 0;
    if (!v.has_interval)
        v.lo = v.hi = v.value;
    return v;
}

/* The epoch as the model cache composes it (analysis/epoch_imbalance.h's
 * ei_epoch_at), else the epoch's own model. */
static prediction predict_epoch_of(const set_models *s, const double *pt)
{
    static const char *const parts[] = {"comp", "comm", "mem"};
    const pmnf_model *m[3];
    for (int k = 0; k < 3; k++) {
        int i = set_models_find(s, "application", parts[k]);
        m[k] = i >= 0 && s->ok[i] ? &s->models[i] : NULL;
    }
    prediction sum;
    if (ei_epoch_at(m, s->imb_present ? &s->imb : NULL, s->imb_needed, pt, &sum.value, &sum.lo,
                    &sum.hi, &sum.has_interval) == 0)
        return sum;
    return predict_row(s, set_models_find(s, "application", "epoch"), pt);
}

int set_models_load_imbalance(PGconn *c, int64_t set_id, const char *metric,
                              const char *const *names, int np, int strong, set_models *s,
                              store_error *err)
{
    if (strcmp(metric, "time"))
        return STORE_OK;
    store_measurement_row *rows = NULL;
    int n = 0;
    store_model_filter f = {.level = "application", .phase = "epoch", .metric = "time",
                            .limit = 500000};
    int rc = store_repetitions_read(c, set_id, &f, &rows, &n, err);
    if (rc)
        return rc;
    ei_result r;
    if (n < f.limit && ei_fit(&(ei_input){np, names, strong}, rows, n, &r) == 0) {
        s->imb_needed = r.included;
        s->imb_present = r.present;
        s->imb = r.model;
        ei_result_clear(&r);
    } else if (n < f.limit) {
        rc = store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    store_measurement_rows_free(rows, n);
    return rc;
}

prediction set_models_predict(const set_models *s, int i, const double *pt)
{
    if (i >= 0 && !strcmp(s->rows[i].level, "application") && !strcmp(s->rows[i].name, "epoch"))
        return predict_epoch_of(s, pt);
    return predict_row(s, i, pt);
}
