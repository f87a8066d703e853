/*
 * levels_query.h — the level combination of categorical factors
 * (analysis/levels.h) that a request names in its query.
 */
#ifndef PERFCAST_API_LEVELS_QUERY_H
#define PERFCAST_API_LEVELS_QUERY_H

#include "analysis/levels.h"
#include "api/http.h"

/* The combination the query names: every declared factor given once with a
 * declared level. *literal is malloc'ed (NULL without factors). Returns 0,
 * or -1 after a 400 naming the missing or unknown field. */
int levels_from_query(const json_t *spec, const api_request *req, api_response *resp,
                      char **literal);

/* The levels the query pins, per factor in name order: the level, or NULL
 * where the query does not name the factor (a search over the levels).
 * Returns the number of factors, or -1 after a 400 naming a factor whose
 * level is not declared. */
int levels_pins_from_query(const json_t *spec, const api_request *req, api_response *resp,
                           const char **pins);

#endif
