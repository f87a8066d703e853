/*
 * warning_code.h — whether a list of coded warnings ({"code","message",...}
 * objects) holds a code, and the warning of a code: the check the tests of
 * every answer with coded warnings make. Header-only.
 */
#ifndef PERFCAST_TESTS_WARNING_CODE_H
#define PERFCAST_TESTS_WARNING_CODE_H

#include <jansson.h>
#include <string.h>

/* The first element of warnings (an array; NULL: none) whose "code" is
 * code, NULL when none is. */
static json_t *warning_find(const json_t *warnings, const char *code) __attribute__((unused));
static json_t *warning_find(const json_t *warnings, const char *code)
{
    for (size_t i = 0; i < json_array_size(warnings); i++) {
        json_t *w = json_array_get(warnings, i);
        const char *c = json_string_value(json_object_get(w, "code"));
        if (c && !strcmp(c, code))
            return w;
    }
    return NULL;
}

/* 1 when an element of warnings (an array; NULL: none) has "code" code. */
static int warning_has_code(const json_t *warnings, const char *code) __attribute__((unused));
static int warning_has_code(const json_t *warnings, const char *code)
{
    return warning_find(warnings, code) != NULL;
}

#endif
