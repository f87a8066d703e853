/*
 * fuzz_levels.c — libFuzzer target for the validation of categorical
 * factors (api/levels.h): an experiment's "factors" declaration
 * (levels_validate) and the level combination of an upload from the query
 * and the profile document's "levels" (levels_resolve).
 *
 * Input: three lines — the "factors" JSON, the document's "levels" JSON
 * (empty: none), the query's levels comma-separated per factor in name order
 * ("-": not in the query). A declaration levels_validate refuses must come
 * with a field and a message; for an accepted one, levels_resolve either
 * refuses with a field that names a factor ("dataloader", "levels.x",
 * "levels") and a message, or gives a literal {"a","b"} with one declared
 * level per factor in name order that agrees with the query and the
 * document. Any breach aborts. Seeds: tests/fuzz/corpus/levels/.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/levels.h"

static char *line(const uint8_t **p, const uint8_t *end)
{
    const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
    const uint8_t *stop = nl ? nl : end;
    size_t n = (size_t)(stop - *p);
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, *p, n);
    s[n] = '\0';
    *p = nl ? nl + 1 : end;
    return s;
}

static int declared(const json_t *levels, const char *v)
{
    for (size_t i = 0; i < json_array_size(levels); i++)
        if (!strcmp(json_string_value(json_array_get(levels, i)), v))
            return 1;
    return 0;
}

/* The literal's i-th element ("{\"a\",\"b\"}": levels need no escaping). */
static void check_literal(const char *lit, const json_t *factors, const char *const *names,
                          size_t nf, const char *const *query, const json_t *doc)
{
    size_t len = strlen(lit);
    if (len < 2 || lit[0] != '{' || lit[len - 1] != '}')
        abort();
    const char *p = lit + 1;
    for (size_t i = 0; i < nf; i++) {
        if (*p != '"')
            abort();
        const char *q = strchr(p + 1, '"');
        if (!q)
            abort();
        char v[LEVELS_MAX_TEXT + 1];
        size_t n = (size_t)(q - p - 1);
        if (n == 0 || n > LEVELS_MAX_TEXT)
            abort();
        memcpy(v, p + 1, n);
        v[n] = '\0';
        if (!declared(json_object_get(factors, names[i]), v))
            abort();
        if (query[i] && strcmp(query[i], v))
            abort();
        const char *d = json_string_value(json_object_get(doc, names[i]));
        if (d && strcmp(d, v))
            abort();
        if (!query[i] && !d)
            abort();
        p = q + 1;
        if (*p != (i + 1 < nf ? ',' : '}'))
            abort();
        p++;
    }
    if (*p)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    char *ftext = line(&p, end), *dtext = line(&p, end), *qtext = line(&p, end);
    json_t *factors = json_loads(ftext, JSON_DECODE_ANY, NULL);
    json_t *doc = dtext[0] ? json_loads(dtext, JSON_DECODE_ANY, NULL) : NULL;
    char field[96], msg[400];
    static const char *const params[] = {"ranks", "batch"};
    if (factors && !levels_validate(factors, params, 2, field, sizeof field, msg, sizeof msg)) {
        json_t *spec = json_pack("{s:O}", "factors", factors);
        const char *names[LEVELS_MAX_FACTORS], *query[LEVELS_MAX_FACTORS] = {0};
        size_t nf = levels_names(spec, names);
        if (nf != json_object_size(factors))
            abort();
        char *save = NULL, *tok = strtok_r(qtext, ",", &save);
        for (size_t i = 0; i < nf && tok; i++, tok = strtok_r(NULL, ",", &save))
            query[i] = strcmp(tok, "-") ? tok : NULL;
        char *lit = NULL;
        field[0] = msg[0] = '\0';
        int rc = levels_resolve(factors, query, doc, &lit, field, sizeof field, msg, sizeof msg);
        if (rc == 0) {
            if (!lit)
                abort();
            check_literal(lit, factors, names, nf, query, doc);
        } else if (rc < 0) {
            if (lit || !field[0] || !msg[0])
                abort();
            const char *f = strncmp(field, "levels.", 7) ? field : field + 7;
            if (strcmp(field, "levels") && strlen(f) < 64 && !json_object_get(doc, f) &&
                !json_object_get(factors, f))
                abort();
        }
        free(lit);
        json_decref(spec);
    } else if (factors && (!field[0] || !msg[0])) {
        abort();
    }
    json_decref(factors);
    json_decref(doc);
    free(ftext);
    free(dtext);
    free(qtext);
    return 0;
}
