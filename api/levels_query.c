/*
 * levels_query.c — the level combination a request names in its query
 * (?dataloader=dali&precision=fp16), checked against the experiment's
 * declared factors (analysis/levels.h); a missing or undeclared level is a
 * 400 naming the factor (see levels_query.h).
 */
#include "api/levels_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int levels_from_query(const json_t *spec, const api_request *req, api_response *resp,
                      char **literal)
{
    *literal = NULL;
    const json_t *factors = json_object_get(spec, "factors");
    if (!json_is_object(factors) || json_object_size(factors) == 0)
        return 0;
    const char *names[LEVELS_MAX_FACTORS];
    size_t nf = levels_names(spec, names);
    size_t cap = 3 + nf * (LEVELS_MAX_TEXT + 3);
    char *out = malloc(cap);
    if (!out) {
        api_problem(resp, 500, NULL, "out of memory");
        return -1;
    }
    size_t len = 0;
    out[len++] = '{';
    for (size_t i = 0; i < nf; i++) {
        const json_t *decl = json_object_get(factors, names[i]);
        const char *v = api_query(req, names[i]);
        if (!v) {
            api_problem(resp, 400, names[i],
                        "the experiment has factor \"%s\": name its level in the query "
                        "(?%s=...)",
                        names[i], names[i]);
            free(out);
            return -1;
        }
        if (!levels_declared(decl, v)) {
            char *list = json_dumps(decl, JSON_COMPACT);
            api_problem(resp, 400, names[i], "\"%.64s\" is not a declared level of %s: %s", v,
                        names[i], list ? list : "");
            free(list);
            free(out);
            return -1;
        }
        /* quoted, so that a level "null" is no NULL element */
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"", i ? "," : "", v);
    }
    out[len++] = '}';
    out[len] = '\0';
    *literal = out;
    return 0;
}

int levels_pins_from_query(const json_t *spec, const api_request *req, api_response *resp,
                           const char **pins)
{
    const char *names[LEVELS_MAX_FACTORS];
    size_t nf = levels_names(spec, names);
    const json_t *factors = json_object_get(spec, "factors");
    for (size_t i = 0; i < nf; i++) {
        const json_t *decl = json_object_get(factors, names[i]);
        pins[i] = api_query(req, names[i]);
        if (pins[i] && !levels_declared(decl, pins[i])) {
            char *list = json_dumps(decl, JSON_COMPACT);
            api_problem(resp, 400, names[i], "\"%.64s\" is not a declared level of %s: %s",
                        pins[i], names[i], list ? list : "");
            free(list);
            return -1;
        }
    }
    return (int)nf;
}
