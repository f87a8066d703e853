/*
 * levels.c — categorical factors: validation of an experiment's "factors"
 * and the level combination of an upload (see levels.h); the combination a
 * request's query names is read in api/levels_query.c.
 */
#include "analysis/levels.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Query and document names a factor may not take: they mean something else
 * on some route. */
static const char *const reserved[] = {
    "ranks", "epoch", "T", "metric", "at", "limit", "cursor", "format", "repetition", "rank",
    "markers", "refit", "phase", "use", "replace", "validation_markers", "level", "category",
    "sort", "callpath", "name", "point", "points", "levels", "factors", "id", "target",
    "budget", "baseline", "confidence", "comp", "comm", "mem", "between", "time", NULL};

static int is_identifier(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (s++; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

/* A level: 1..64 of [A-Za-z0-9_.+-], so that it needs no quoting anywhere. */
static int is_level(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > LEVELS_MAX_TEXT)
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || strchr("_.+-", *s)))
            return 0;
    return 1;
}

static int fail(char *field, size_t fieldcap, const char *f, char *msg, size_t msgcap,
                const char *m)
{
    snprintf(field, fieldcap, "%s", f);
    snprintf(msg, msgcap, "%s", m);
    return -1;
}

int levels_validate(const json_t *factors, const char *const *params, int nparams, char *field,
                    size_t fieldcap, char *msg, size_t msgcap)
{
    if (!json_is_object(factors))
        return fail(field, fieldcap, "factors", msg, msgcap,
                    "must be an object: factor name -> array of its levels");
    size_t nf = json_object_size(factors);
    if (nf < 1 || nf > LEVELS_MAX_FACTORS)
        return fail(field, fieldcap, "factors", msg, msgcap, "must name 1 to 8 factors");
    const char *name;
    const json_t *levels;
    json_object_foreach((json_t *)factors, name, levels)
    {
        char f[160];
        snprintf(f, sizeof f, "factors.%.64s", name);
        if (strlen(name) > LEVELS_MAX_TEXT || !is_identifier(name))
            return fail(field, fieldcap, f, msg, msgcap,
                        "a factor name must match [A-Za-z_][A-Za-z0-9_]* and be at most 64 "
                        "characters");
        for (int i = 0; i < nparams; i++)
            if (!strcmp(params[i], name))
                return fail(field, fieldcap, f, msg, msgcap, "is also a parameter");
        for (const char *const *r = reserved; *r; r++)
            if (!strcmp(*r, name))
                return fail(field, fieldcap, f, msg, msgcap,
                            "is a reserved name (a built-in or a query field of some route)");
        size_t nl = json_array_size(levels);
        if (!json_is_array(levels) || nl < 1 || nl > LEVELS_MAX_LEVELS)
            return fail(field, fieldcap, f, msg, msgcap,
                        "must be an array of 1 to 64 distinct levels (strings)");
        for (size_t i = 0; i < nl; i++) {
            const char *l = json_string_value(json_array_get(levels, i));
            snprintf(f, sizeof f, "factors.%.64s[%zu]", name, i);
            if (!l || !is_level(l))
                return fail(field, fieldcap, f, msg, msgcap,
                            "a level must be a string of 1 to 64 of [A-Za-z0-9_.+-]");
            for (size_t j = 0; j < i; j++)
                if (!strcmp(l, json_string_value(json_array_get(levels, j))))
                    return fail(field, fieldcap, f, msg, msgcap, "is repeated");
        }
    }
    return 0;
}

int levels_is_factor(const json_t *spec, const char *name)
{
    const json_t *factors = json_object_get(spec, "factors");
    return name && json_is_object(factors) && json_object_get(factors, name) != NULL;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int levels_declared(const json_t *levels, const char *v)
{
    for (size_t i = 0; i < json_array_size(levels); i++) {
        const char *s = json_string_value(json_array_get(levels, i));
        if (s && !strcmp(s, v))
            return 1;
    }
    return 0;
}

size_t levels_names(const json_t *spec, const char **names)
{
    const json_t *factors = json_object_get(spec, "factors");
    size_t nf = 0;
    const char *name;
    const json_t *levels;
    json_object_foreach((json_t *)factors, name, levels)
    {
        if (nf < LEVELS_MAX_FACTORS)
            names[nf++] = name;
    }
    qsort(names, nf, sizeof *names, by_name);
    return nf;
}

char *levels_literal(const char *const *values, size_t n)
{
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += strlen(values[i]) + 3;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    size_t len = 0;
    out[len++] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"", i ? "," : "", values[i]);
    out[len++] = '}';
    out[len] = '\0';
    return out;
}

json_t *levels_object(const char *const *names, size_t n, const char *array_text)
{
    json_t *arr = json_loads(array_text, JSON_DECODE_ANY, NULL);
    json_t *out = json_is_array(arr) && json_array_size(arr) == n ? json_object() : NULL;
    for (size_t i = 0; out && i < n; i++) {
        const char *v = json_string_value(json_array_get(arr, i));
        if (!v || json_object_set_new(out, names[i], json_string(v)) < 0) {
            json_decref(out);
            out = NULL;
        }
    }
    json_decref(arr);
    return out;
}

int levels_resolve(const json_t *factors, const char *const *query, const json_t *doc,
                   char **literal, char *field, size_t fieldcap, char *msg, size_t msgcap)
{
    *literal = NULL;
    if (!json_is_object(factors) || json_object_size(factors) == 0) {
        if (doc && json_object_size(doc) > 0) {
            const char *first = json_object_iter_key(json_object_iter((json_t *)doc));
            char f[96];
            snprintf(f, sizeof f, "levels.%.64s", first);
            return fail(field, fieldcap, f, msg, msgcap, "the experiment declares no factors");
        }
        return 0;
    }
    json_t *wrap = json_pack("{s:O}", "factors", (json_t *)factors);
    if (!wrap)
        return 1;
    const char *names[LEVELS_MAX_FACTORS], *values[LEVELS_MAX_FACTORS];
    size_t nf = levels_names(wrap, names);
    char f[96];
    int rc = 0;
    const char *key;
    const json_t *v;
    if (doc && !json_is_object(doc))
        rc = fail(field, fieldcap, "levels", msg, msgcap,
                  "must be an object: factor name -> its level");
    json_object_foreach((json_t *)(rc ? NULL : doc), key, v)
    {
        snprintf(f, sizeof f, "levels.%.64s", key);
        if (!json_object_get(factors, key)) {
            rc = fail(field, fieldcap, f, msg, msgcap, "not a factor of this experiment");
            break;
        }
        if (!json_is_string(v)) {
            rc = fail(field, fieldcap, f, msg, msgcap, "must be a string: a declared level");
            break;
        }
    }
    for (size_t i = 0; !rc && i < nf; i++) {
        const json_t *decl = json_object_get(factors, names[i]);
        const char *q = query ? query[i] : NULL;
        const char *d = doc ? json_string_value(json_object_get(doc, names[i])) : NULL;
        snprintf(f, sizeof f, "%s%.64s", q ? "" : "levels.", names[i]);
        if (!q && !d) {
            snprintf(field, fieldcap, "%s", names[i]);
            snprintf(msg, msgcap,
                     "the experiment has factor \"%s\": name its level in the query (?%s=...)",
                     names[i], names[i]);
            rc = -1;
        } else if (q && d && strcmp(q, d)) {
            snprintf(field, fieldcap, "levels.%.64s", names[i]);
            snprintf(msg, msgcap, "\"%.64s\" disagrees with the query's %s=%.64s", d, names[i],
                     q);
            rc = -1;
        } else if (!levels_declared(decl, q ? q : d)) {
            snprintf(field, fieldcap, "%s", f);
            char *list = json_dumps(decl, JSON_COMPACT);
            snprintf(msg, msgcap, "\"%.64s\" is not a declared level of %s: %s", q ? q : d,
                     names[i], list ? list : "");
            free(list);
            rc = -1;
        }
        values[i] = q ? q : d;
    }
    if (!rc) {
        *literal = levels_literal(values, nf);
        if (!*literal)
            rc = 1;
    }
    json_decref(wrap);
    return rc;
}
