/*
 * warning_code.h — whether a list of coded warnings ({"code","message",...}
 * objects) holds a code: the check the tests of every answer with coded
 * warnings make. Header-only.
 */
#ifndef PERFCAST_TESTS_WARNING_CODE_H
#define PERFCAST_TESTS_WARNING_CODE_H

#include <jansson.h>
#include <string.h>

/* 1 when an element of warnings (an array; NULL: none) has "code" code. */
static int warning_has_code(const json_t *warnings, const char *code) __attribute__((unused));
static int warning_has_code(const json_t *warnings, const char *code)
{
    for (size_t i = 0; i < json_array_size(warnings); i++) {
        const char *c = json_string_value(json_object_get(json_array_get(warnings, i), "code"));
        if (c && !strcmp(c, code))
            return 1;
    }
    return 0;
}

#endif
