/*
 * callpath_warnings.c — per-callpath coded warnings and their top-level
 * tally (callpath_warnings.h).
 */
#include "analysis/callpath_warnings.h"

#include <stdio.h>
#include <string.h>

#include "modeling/warning_json.h"

json_t *cpw_model_warnings(const pmnf_model *m, const double *at, const char *const *names,
                           unsigned *bits)
{
    json_t *arr = pmnf_warnings_json(m, names, NULL);
    unsigned b = 0;
    if (arr && at)
        b = pmnf_point_warnings_json(arr, m, at, names, NULL);
    if (bits)
        *bits = b;
    return arr;
}

int cpw_tally_add(cpw_tally *t, const json_t *warnings)
{
    if (!json_array_size(warnings))
        return 0;
    t->count++;
    if (!t->codes && !(t->codes = json_array()))
        return -1;
    for (size_t i = 0; i < json_array_size(warnings); i++) {
        const char *code = json_string_value(json_object_get(json_array_get(warnings, i), "code"));
        int seen = !code;
        for (size_t c = 0; !seen && c < json_array_size(t->codes); c++)
            seen = !strcmp(json_string_value(json_array_get(t->codes, c)), code);
        if (!seen && json_array_append_new(t->codes, json_string(code)) < 0)
            return -1;
    }
    return 0;
}

json_t *cpw_summary_json(const cpw_tally *t, int of, const char *what)
{
    if (t->count == 0)
        return NULL;
    char text[400];
    size_t n = (size_t)snprintf(text, sizeof text, "%d of %d %s carry warnings (", t->count, of,
                                what);
    for (size_t i = 0; i < json_array_size(t->codes) && n < sizeof text; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", i ? ", " : "",
                              json_string_value(json_array_get(t->codes, i)));
    if (n < sizeof text)
        snprintf(text + n, sizeof text - n, "): see each item's warnings");
    json_t *w = pmnf_warning_json(CPW_CODE, text);
    if (w && (json_object_set_new(w, "count", json_integer(t->count)) < 0 ||
              json_object_set_new(w, "of", json_integer(of)) < 0 ||
              json_object_set(w, "codes", t->codes) < 0)) {
        json_decref(w);
        return NULL;
    }
    return w;
}

void cpw_tally_free(cpw_tally *t)
{
    json_decref(t->codes);
    t->codes = NULL;
    t->count = 0;
}
