/*
 * model_copy.h — a refit's measurements and models into the staging tables
 * of store_model_set_stage() (store/models.h) through COPY FROM STDIN, in
 * chunks: the fastest way in for thousands of rows, and nothing spliced
 * into SQL (the rows travel as COPY data, escaped).
 */
#ifndef PERFCAST_STORE_MODEL_COPY_H
#define PERFCAST_STORE_MODEL_COPY_H

#include <stddef.h>

#include "store/models.h"

/* Appends m[0..nm) and models[0..nmodels) to the staging tables, in order.
 * Returns STORE_OK or the failure's code with err filled. */
int store_model_copy_staged(PGconn *c, int nparams, const store_measurement *m, size_t nm,
                            const store_model *models, size_t nmodels, store_error *err);

#endif
