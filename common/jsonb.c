/*
 * jsonb.c — JSON text from jsonb columns read with Jansson, integers beyond
 * json_int_t as reals (see jsonb.h).
 *
 * One pass finds the integer tokens outside strings that overflow int64;
 * when there are none (nearly always) the text goes to json_loads() as it
 * is; otherwise a copy with ".0" after each of them does.
 */
#include "common/jsonb.h"

#include <stdlib.h>
#include <string.h>

/* Whether the integer digits d[0..n) (no sign) exceed 2^63 - 1 (or 2^63
 * when negative). */
static int overflows(const char *d, size_t n, int negative)
{
    static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
    if (n != 19)
        return n > 19;
    return strncmp(d, negative ? min : max, 19) > 0;
}

/* Calls mark(end of token) for every overflowing integer token of text;
 * returns how many there are. */
static size_t scan(const char *text, const char **ends, size_t cap)
{
    size_t found = 0;
    int in_string = 0;
    for (const char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == '"')
                in_string = 0;
            continue;
        }
        if (*p == '"') {
            in_string = 1;
            continue;
        }
        if (*p != '-' && (*p < '0' || *p > '9'))
            continue;
        int negative = *p == '-';
        const char *d = p + negative, *q = d;
        while (*q >= '0' && *q <= '9')
            q++;
        int integer = *q != '.' && *q != 'e' && *q != 'E';
        if (integer && overflows(d, (size_t)(q - d), negative)) {
            if (found < cap)
                ends[found] = q;
            found++;
        }
        /* skip the rest of the number */
        while (*q && (strchr("0123456789.eE+-", *q)))
            q++;
        p = q - 1;
    }
    return found;
}

json_t *jsonb_parse(const char *text, size_t flags)
{
    if (!text)
        return NULL;
    size_t n = scan(text, NULL, 0);
    if (n == 0)
        return json_loads(text, flags, NULL);
    const char **ends = malloc(sizeof *ends * n);
    size_t len = strlen(text);
    char *copy = malloc(len + 2 * n + 1);
    json_t *doc = NULL;
    if (ends && copy) {
        scan(text, ends, n);
        char *w = copy;
        const char *r = text;
        for (size_t i = 0; i < n; i++) {
            memcpy(w, r, (size_t)(ends[i] - r));
            w += ends[i] - r;
            *w++ = '.';
            *w++ = '0';
            r = ends[i];
        }
        memcpy(w, r, len - (size_t)(r - text) + 1);
        doc = json_loads(copy, flags, NULL);
    }
    free(ends);
    free(copy);
    return doc;
}
