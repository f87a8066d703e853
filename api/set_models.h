/*
 * set_models.h — the models of one model set of one metric, read from the
 * store and parsed for prediction: what answers about a set other than the
 * newest need (regressions.c compares two sets, curve.c plots any model).
 * The newest set's application models are in the model cache instead
 * (api/model_cache.h). Predictions are those of predict.h: the epoch is
 * composed of comp + comm + mem (+ the imbalance part of metric time, after
 * set_models_load_imbalance), each end of the interval from the parts'
 * distances to it in quadrature, its own model only when a part has none.
 */
#ifndef PERFCAST_API_SET_MODELS_H
#define PERFCAST_API_SET_MODELS_H

#include "api/predict.h"
#include "modeling/modeler.h"
#include "store/models.h"

typedef struct set_models {
    store_model_row *rows; /* phase "epoch" models of the metric */
    int nrows;
    pmnf_model *models;    /* per row; valid where ok[i] */
    int *ok;
    /* the epoch's imbalance part (analysis/epoch_imbalance.h): needed when
     * the set's epoch exceeds the parts' sum, present when modelled */
    int imb_needed, imb_present;
    pmnf_model imb;
} set_models;

/* Reads and parses the set's models of metric (names: the experiment's
 * parameters), only those of level and name when not NULL. STORE_OK or the
 * store's error; free with set_models_free. */
int set_models_load(PGconn *c, int64_t set_id, const char *metric, const char *level,
                    const char *name, const char *const *names, int np, set_models *s,
                    store_error *err);
void set_models_free(set_models *s);
/* The imbalance part of the set's epoch of metric time, as the model cache
 * fits it (strong: strong scaling); nothing for another metric. STORE_OK or
 * the store's error. */
int set_models_load_imbalance(PGconn *c, int64_t set_id, const char *metric,
                              const char *const *names, int np, int strong, set_models *s,
                              store_error *err);

/* The row of level/name, or -1. */
int set_models_find(const set_models *s, const char *level, const char *name);

/* Row i's model at pt (NaN when it has none); application "epoch" is
 * composed of its parts. */
prediction set_models_predict(const set_models *s, int i, const double *pt);

#endif
