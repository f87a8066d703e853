/*
 * warnings.c — coded warnings in answers, and ?strict=true (warnings.h).
 */
#include "api/warnings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *warning_new(const char *code, const char *message)
{
    return pmnf_warning_json(code, message);
}

void warning_append(json_t *doc, json_t *w)
{
    if (!doc || !w) {
        json_decref(w);
        return;
    }
    json_t *arr = json_object_get(doc, "warnings");
    if (!json_is_array(arr)) {
        arr = json_array();
        json_object_set_new(doc, "warnings", arr);
    }
    json_array_append_new(arr, w);
}

void warnings_attach_model(json_t *doc, const pmnf_model *m, const double *point,
                           const char *const *names, const char *model)
{
    json_t *arr = pmnf_warnings_json(m, names, model);
    if (point)
        pmnf_point_warnings_json(arr, m, point, names, model);
    for (size_t i = 0; i < json_array_size(arr); i++)
        warning_append(doc, json_incref(json_array_get(arr, i)));
    json_decref(arr);
}

int warnings_strict_requested(const api_request *req, api_response *resp)
{
    const char *v = api_query(req, "strict");
    if (!v || !strcmp(v, "false"))
        return 0;
    if (!strcmp(v, "true"))
        return 1;
    api_problem(resp, 400, "strict", "must be true or false, got \"%.40s\"", v);
    return -1;
}

/* Collects the codes of every warning object under v, once each. */
static void collect_codes(const json_t *v, json_t *codes, int depth)
{
    if (depth > 32)
        return;
    if (json_is_object(v)) {
        const char *key;
        const json_t *x;
        json_object_foreach((json_t *)v, key, x)
        {
            if (!strcmp(key, "warnings") && json_is_array(x)) {
                size_t i;
                const json_t *w;
                json_array_foreach(x, i, w)
                {
                    const char *code = json_string_value(json_object_get(w, "code"));
                    if (!code && json_is_string(w))
                        code = "warning"; /* a bare text: still a warning */
                    int seen = 0;
                    for (size_t c = 0; code && c < json_array_size(codes) && !seen; c++)
                        seen = !strcmp(json_string_value(json_array_get(codes, c)), code);
                    if (code && !seen)
                        json_array_append_new(codes, json_string(code));
                }
            } else {
                collect_codes(x, codes, depth + 1);
            }
        }
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *x;
        json_array_foreach(v, i, x)
            collect_codes(x, codes, depth + 1);
    }
}

void warnings_strict_apply(api_response *resp)
{
    if (resp->status != 200 || !resp->content_type ||
        strcmp(resp->content_type, "application/json") || !resp->body)
        return;
    json_t *doc = json_loadb(resp->body, resp->body_len, 0, NULL);
    json_t *codes = json_array();
    if (doc && codes)
        collect_codes(doc, codes, 0);
    json_decref(doc);
    if (!json_array_size(codes)) {
        json_decref(codes);
        return;
    }
    char list[400];
    size_t n = 0;
    list[0] = '\0';
    for (size_t i = 0; i < json_array_size(codes) && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
                              json_string_value(json_array_get(codes, i)));
    api_problem(resp, 422, "strict",
                "the answer carries warnings (%s); without strict=true it is answered with them",
                list);
    /* the codes as a list too, for clients */
    json_t *prob = json_loadb(resp->body, resp->body_len, 0, NULL);
    if (prob) {
        json_object_set(prob, "codes", codes);
        size_t len = 0;
        char *text = api_json_text(prob, &len);
        if (text)
            api_send_body(resp, 422, "application/problem+json", text, len);
        json_decref(prob);
    }
    json_decref(codes);
}

void noisy_points_attach(json_t *doc, const noisy_points *np)
{
    if (!doc || !np->count)
        return;
    for (int i = 0; i < np->named; i++)
        warning_append(doc, warning_new(WARN_NOISY_MEASUREMENT, np->text[i]));
    if (np->count > np->named) {
        char text[120];
        snprintf(text, sizeof text, "%d too-noisy points in all; the first %d are named",
                 np->count, np->named);
        json_t *w = warning_new(WARN_NOISY_MEASUREMENT, text);
        json_object_set_new(w, "count", json_integer(np->count));
        warning_append(doc, w);
    }
}
