/*
 * json.c — JSON text of response documents. Jansson prints reals with 17
 * significant digits (0.05 becomes 0.050000000000000003); responses carry
 * the shortest text that reads back as the same double instead
 * (common/numtext.h), so a price sent as 0.05 comes back as 0.05 and a
 * coefficient loses nothing. Non-finite reals, which JSON cannot express,
 * are written as null. Objects keep their insertion order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/http.h"
#include "common/numtext.h"

static void put_string(FILE *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    putc('"', out);
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        fwrite(s + start, 1, i - start, out);
        start = i + 1;
        switch (c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            fputs("\\u00", out);
            putc(hex[c >> 4], out);
            putc(hex[c & 15], out);
        }
    }
    fwrite(s + start, 1, n - start, out);
    putc('"', out);
}

static void put_value(FILE *out, const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *item;
        int first = 1;
        putc('{', out);
        json_object_foreach((json_t *)v, key, item)
        {
            if (!first)
                putc(',', out);
            first = 0;
            put_string(out, key, strlen(key));
            putc(':', out);
            put_value(out, item);
        }
        putc('}', out);
        break;
    }
    case JSON_ARRAY:
        putc('[', out);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                putc(',', out);
            put_value(out, json_array_get(v, i));
        }
        putc(']', out);
        break;
    case JSON_STRING:
        put_string(out, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL: {
        double x = json_real_value(v);
        char buf[32];
        if (x - x != 0) /* inf or nan */
            fputs("null", out);
        else
            fwrite(buf, 1, (size_t)numtext_format_shortest(x, buf), out);
        break;
    }
    case JSON_TRUE: fputs("true", out); break;
    case JSON_FALSE: fputs("false", out); break;
    default: fputs("null", out); break;
    }
}

char *api_json_text(const json_t *doc, size_t *len)
{
    char *text = NULL;
    size_t n = 0;
    FILE *out = open_memstream(&text, &n);
    if (!out)
        return NULL;
    put_value(out, doc);
    int bad = ferror(out);
    if (fclose(out) || bad) {
        free(text);
        return NULL;
    }
    *len = n;
    return text;
}
