/*
 * levels.h — categorical factors of an experiment (spec "factors": name ->
 * declared levels) and the level combination a request names in its query
 * (?dataloader=dali&precision=fp16). A combination is carried as a
 * PostgreSQL text[] literal with the factors in name order ("{dali,fp16}"),
 * the form profiles, measurements and models store it in; an experiment
 * without factors has none (NULL here, '{}' in the store).
 */
#ifndef PERFCAST_ANALYSIS_LEVELS_H
#define PERFCAST_ANALYSIS_LEVELS_H

#include <jansson.h>
#include <stddef.h>


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

/* 1 when v is one of the declared levels (a JSON array of strings). */
int levels_declared(const json_t *levels, const char *v);

/* The declared factor names of spec in name order into names (at most
 * LEVELS_MAX_FACTORS); returns their number, 0 without factors. */
size_t levels_names(const json_t *spec, const char **names);

/* The text[] literal of n levels in factor-name order ("{\"cpu\",\"fp16\"}"),
 * malloc'ed; NULL when out of memory. */
char *levels_literal(const char *const *values, size_t n);

/* {"dataloader":"cpu",...} of a combination given as a JSON array text of
 * its levels in factor-name order (names from levels_names); NULL when the
 * text does not match. */
json_t *levels_object(const char *const *names, size_t n, const char *array_text);

/* The level combination of one upload: every declared factor (spec
 * "factors") named by the query (query[i]: the level of the i-th factor in
 * name order, or NULL) and/or the document's "levels" object (doc: NULL
 * when it has none) with a declared level; where both name it they agree;
 * doc names nothing else. *literal is malloc'ed ("{}"-free: NULL without
 * factors). Returns 0, or -1 with the offending field ("dataloader" for the
 * query, "levels.dataloader" for the document) and a message; 1 when out
 * of memory. Pure: no I/O. */
int levels_resolve(const json_t *factors, const char *const *query, const json_t *doc,
                   char **literal, char *field, size_t fieldcap, char *msg, size_t msgcap);

#endif
