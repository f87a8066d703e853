/*
 * levels.h — categorical factors of an experiment (spec "factors": name ->
 * declared levels) and the level combination a request names in its query
 * (?dataloader=dali&precision=fp16). A combination is carried as a
 * PostgreSQL text[] literal with the factors in name order ("{dali,fp16}"),
 * the form profiles, measurements and models store it in; an experiment
 * without factors has none (NULL here, '{}' in the store).
 */
#ifndef PERFCAST_API_LEVELS_H
#define PERFCAST_API_LEVELS_H

#include <jansson.h>
#include <stddef.h>

#include "api/http.h"

#define LEVELS_MAX_FACTORS 8
#define LEVELS_MAX_LEVELS 64
#define LEVELS_MAX_TEXT 64

/* Validates a creation document's "factors" against the parameter names.
 * Returns 0, or -1 with the offending field ("factors.dataloader[1]") and a
 * message. */
int levels_validate(const json_t *factors, const char *const *params, int nparams, char *field,
                    size_t fieldcap, char *msg, size_t msgcap);

/* 1 when name is one of the factors the experiment spec declares. */
int levels_is_factor(const json_t *spec, const char *name);

/* The combination the query names: every declared factor given once with a
 * declared level. *literal is malloc'ed (NULL without factors). Returns 0,
 * or -1 after a 400 naming the missing or unknown field. */
int levels_from_query(const json_t *spec, const api_request *req, api_response *resp,
                      char **literal);

#endif
