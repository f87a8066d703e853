/*
 * model_levels.h — which level combinations of categorical factors a model
 * set has models of (api/levels.h): what a search over levels
 * (configurations) walks through.
 */
#ifndef PERFCAST_STORE_MODEL_LEVELS_H
#define PERFCAST_STORE_MODEL_LEVELS_H

#include <stdint.h>

#include "store/db.h"

/* The level combinations of model set set_id that have a fitted model of
 * the application's epoch time or of one of its parts (level application,
 * metric time, phase epoch), ascending; each a JSON array text of its
 * levels in factor-name order ("[\"cpu\",\"fp16\"]"). *out is malloc'ed
 * (free with store_model_levels_free); an experiment without factors has
 * one combination, "[]". */
int store_model_levels_read(PGconn *c, int64_t set_id, char ***out, int *n, store_error *err);
void store_model_levels_free(char **v, int n);

#endif
