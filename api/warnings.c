/*
 * warnings.c — coded warnings in answers, and ?strict=true (warnings.h).
 */
#include "api/warnings.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

json_t *warning_new(const char *code, const char *message)
{
    return json_pack("{s:s, s:s}", "code", code, "message", message);
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

static json_t *number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *point_json(const double *x, int n, const char *const *names)
{
    json_t *o = json_object();
    for (int p = 0; o && p < n; p++)
        json_object_set_new(o, names[p], json_real(x[p]));
    return o;
}

/* The details of one model-level bit. */
static void model_details(json_t *w, unsigned bit, const pmnf_model *m, const char *const *names)
{
    const pmnf_diagnostics *g = &m->diag;
    switch (bit) {
    case PMNF_WARN_POOR_FIT:
        json_object_set_new(w, "smape", number(m->smape));
        json_object_set_new(w, "adjusted_r2", number(m->ar2));
        break;
    case PMNF_WARN_CONSTANT_ON_VARYING:
        if (g->known) {
            json_object_set_new(w, "smallest", number(g->vmin));
            json_object_set_new(w, "largest", number(g->vmax));
        }
        break;
    case PMNF_WARN_FEW_POINTS:
        if (g->known) {
            json_t *v = json_object();
            for (int p = 0; p < m->f.nparams; p++)
                if (g->distinct[p] < PMNF_FEW_VALUES)
                    json_object_set_new(v, names[p], json_integer(g->distinct[p]));
            json_object_set_new(w, "distinct_values", v);
        }
        break;
    case PMNF_WARN_INTERVAL_UNRELIABLE:
        if (g->known) {
            json_object_set_new(w, "left_out_error", number(g->far_loo_error));
            json_object_set_new(w, "interval_half_width", number(g->far_half_width));
        }
        break;
    default:
        break;
    }
}

json_t *warnings_of_model(const pmnf_model *m, const char *const *names, const char *model)
{
    json_t *arr = json_array();
    for (unsigned bit = 1; arr && bit <= PMNF_WARN_LAST; bit <<= 1) {
        if (!(m->warnings & bit))
            continue;
        json_t *w = warning_new(pmnf_warning_code(bit), pmnf_warning_text(bit));
        if (w && model)
            json_object_set_new(w, "model", json_string(model));
        if (w)
            model_details(w, bit, m, names);
        json_array_append_new(arr, w);
    }
    return arr;
}

unsigned warnings_of_point(json_t *arr, const pmnf_model *m, const double *point,
                           const char *const *names, const char *model)
{
    pmnf_point_check pc;
    pmnf_assess_point(m, point, &pc);
    int k = m->f.nparams;
    for (unsigned bit = PMNF_WARN_NEGATIVE_PREDICTION; bit <= PMNF_WARN_EXTRAPOLATION_FAR;
         bit <<= 1) {
        if (!(pc.warnings & bit))
            continue;
        json_t *w = warning_new(pmnf_warning_code(bit), pmnf_warning_text(bit));
        if (!w)
            continue;
        if (model)
            json_object_set_new(w, "model", json_string(model));
        if (bit == PMNF_WARN_EXTRAPOLATION_FAR) {
            json_object_set_new(w, "parameter", json_string(names[pc.far_param]));
            json_object_set_new(w, "factor", number(pc.far_factor));
            json_object_set_new(w, "limit", json_real(PMNF_FAR_FACTOR));
        } else {
            json_object_set_new(w, "lowest", number(pc.min_value));
            json_object_set_new(w, "lowest_at", point_json(pc.min_at, k, names));
            if (bit == PMNF_WARN_IMPLAUSIBLE_EXTRAPOLATION) {
                json_object_set_new(w, "edge_value", number(pc.edge_value));
                if (m->diag.known)
                    json_object_set_new(w, "smallest_measurement", number(m->diag.vmin));
            }
        }
        json_array_append_new(arr, w);
    }
    return pc.warnings;
}

void warnings_attach_model(json_t *doc, const pmnf_model *m, const double *point,
                           const char *const *names, const char *model)
{
    json_t *arr = warnings_of_model(m, names, model);
    if (point)
        warnings_of_point(arr, m, point, names, model);
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
