/*
 * predict.c — predictions with intervals, the composed epoch, points from
 * queries and the extrapolation warning, shared by every answer that
 * predicts (see predict.h).
 */
#include "api/predict.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/epoch_imbalance.h"
#include "analysis/levels.h"
#include "api/levels_query.h"
#include "analysis/finite_point.h"
#include "analysis/rank_count.h"
#include "api/warnings.h"
#include "common/jsonb.h"

prediction predict_part(const cached_part *p, const double *point)
{
    prediction r;
    r.has_interval = pmnf_predict(&p->model, point, &r.value, &r.lo, &r.hi) == 0;
    return r;
}

/* The parts comp, comm, mem and the imbalance of parts as
 * analysis/epoch_imbalance.h takes them (NULL where missing), and whether
 * the imbalance is needed: measured but not modelled (a reason kept), the
 * parts' sum would not be the measured epoch, so the epoch's own model
 * answers. */
static int part_models(const cached_part *parts, const pmnf_model *m[3],
                       const pmnf_model **imb)
{
    for (int i = 0; i < 3; i++)
        m[i] = parts[i].present ? &parts[i].model : NULL;
    const cached_part *ip = &parts[CACHE_IMBALANCE];
    *imb = ip->present ? &ip->model : NULL;
    return ip->reason[0] != '\0';
}

int predict_composed(const cached_part *parts)
{
    const pmnf_model *m[3], *imb;
    int needed = part_models(parts, m, &imb);
    return ei_composable(m, imb, needed);
}

prediction predict_epoch(const cached_part *parts, const double *point, int *composed)
{
    const pmnf_model *m[3], *imb;
    int needed = part_models(parts, m, &imb);
    prediction sum;
    *composed = ei_epoch_at(m, imb, needed, point, &sum.value, &sum.lo, &sum.hi,
                            &sum.has_interval) == 0;
    if (*composed)
        return sum;
    if (parts[3].present)
        return predict_part(&parts[3], point);
    return (prediction){NAN, NAN, NAN, 0};
}

json_t *predict_imbalance_json(const cached_part *parts, const double *point, const char *metric)
{
    const cached_part *imb = &parts[CACHE_IMBALANCE];
    if (!predict_composed(parts) || !imb->present)
        return json_null();
    int composed;
    prediction t = predict_epoch(parts, point, &composed), p = predict_part(imb, point);
    /* Extra-Deep's epoch (Eq. 6): the parts' sum without the imbalance */
    prediction sum;
    const pmnf_model *m[3], *with;
    part_models(parts, m, &with);
    ei_epoch_at(m, NULL, 0, point, &sum.value, &sum.lo, &sum.hi, &sum.has_interval);
    json_t *o = json_object();
    json_object_set_new(o, metric, json_real(p.value));
    json_object_set_new(o, "interval", p.has_interval ? json_pack("[f, f]", p.lo, p.hi)
                                                      : json_null());
    json_object_set_new(o, "function", json_string(imb->function));
    json_object_set_new(o, "modeler", json_string(pmnf_modeler_name(imb->model.modeler)));
    json_object_set_new(o, "share", predict_number(ei_share(p.value, t.value)));
    json_object_set_new(o, "parts_sum", predict_json(&sum));
    return o;
}

prediction predict_map(const prediction *p, double (*f)(double t, const void *arg),
                       const void *arg)
{
    prediction r = {f(p->value, arg), 0, 0, p->has_interval};
    double a = f(p->lo, arg), b = f(p->hi, arg);
    r.lo = a < b ? a : b;
    r.hi = a < b ? b : a;
    return r;
}

int predict_metric_slot(const cached_models *m, const char *metric)
{
    for (int i = 0; i < m->nmetrics; i++)
        if (!strcmp(m->metrics[i], metric))
            return i;
    return -1;
}

const char *predict_unit(const char *metric)
{
    if (!strcmp(metric, "time"))
        return "s";
    if (!strcmp(metric, "bytes"))
        return "B";
    if (!strcmp(metric, "visits"))
        return "calls";
    return metric;
}

/* 1 above 4x the parameter's largest measured value, -1 below a quarter
 * of its smallest (extrapolation_far's rule, modeling/assess.h), else 0 */
static int beyond_param(const cached_models *m, const double *point, int i)
{
    if (point[i] > PREDICT_EXTRAPOLATION_FACTOR * m->max_measured[i])
        return 1;
    if (m->min_measured[i] > 0 && point[i] < m->min_measured[i] / PREDICT_EXTRAPOLATION_FACTOR)
        return -1;
    return 0;
}

int predict_beyond(const cached_models *m, const double *point)
{
    for (int i = 0; i < m->nparams; i++)
        if (beyond_param(m, point, i))
            return 1;
    return 0;
}

json_t *predict_extrapolation_json(const cached_models *m, const double *point)
{
    json_t *beyond = json_array(), *below = json_array(), *max = json_object(),
           *min = json_object();
    for (int i = 0; i < m->nparams; i++) {
        json_object_set_new(max, m->params[i], json_real(m->max_measured[i]));
        json_object_set_new(min, m->params[i], json_real(m->min_measured[i]));
        int b = beyond_param(m, point, i);
        if (b)
            json_array_append_new(beyond, json_string(m->params[i]));
        if (b < 0)
            json_array_append_new(below, json_string(m->params[i]));
    }
    int warn = json_array_size(beyond) > 0;
    return json_pack("{s:b, s:o, s:o, s:o, s:o}", "beyond_4x", warn, "parameters", beyond,
                     "max_measured", max, "min_measured", min, "below", below);
}

static void part_warnings(json_t *doc, const cached_models *m, int slot, const double *point,
                          int with_model)
{
    static const char *const part_names[CACHE_PARTS] = {"comp", "comm", "mem", "epoch"};
    const char *const *names = m->names;
    if (slot < 0)
        slot = predict_metric_slot(m, "time");
    if (slot < 0)
        return;
    const cached_part *parts = m->parts[slot];
    int composed = predict_composed(parts);
    /* the imbalance part's own warnings where it is a noticeable share of
     * the epoch (below, it moves the epoch by less than EI_WARN_SHARE) */
    int imb_warn = 0;
    if (composed && parts[CACHE_IMBALANCE].present && point) {
        int c;
        prediction t = predict_epoch(parts, point, &c);
        prediction p = predict_part(&parts[CACHE_IMBALANCE], point);
        json_t *w = ei_warning_json(p.value, t.value, m->metrics[slot],
                                    predict_unit(m->metrics[slot]));
        imb_warn = w != NULL;
        if (w && doc)
            warning_append(doc, w);
        else
            json_decref(w);
    }
    /* composed: comp, comm, mem (and the imbalance part); else the epoch's own model */
    int list[4] = {3}, nlist = 1;
    if (composed) {
        nlist = 0;
        for (int k = 0; k < 3; k++)
            list[nlist++] = k;
        if (imb_warn)
            list[nlist++] = CACHE_IMBALANCE;
    }
    for (int k = 0; k < nlist; k++) {
        int i = list[k];
        if (!parts[i].present)
            continue;
        char model[100];
        snprintf(model, sizeof model, "%s %.60s", i == CACHE_IMBALANCE ? "imbalance" : part_names[i],
                 m->metrics[slot]);
        if (with_model) {
            warnings_attach_model(doc, &parts[i].model, point, names, model);
        } else {
            json_t *arr = json_array();
            pmnf_point_warnings_json(arr, &parts[i].model, point, names, model);
            for (size_t k = 0; k < json_array_size(arr); k++)
                warning_append(doc, json_incref(json_array_get(arr, k)));
            json_decref(arr);
        }
    }
    if (doc && !json_is_array(json_object_get(doc, "warnings")))
        json_object_set_new(doc, "warnings", json_array());
}

void predict_warnings_at(json_t *doc, const cached_models *m, int slot, const double *point)
{
    part_warnings(doc, m, slot, point, 1);
}

void predict_point_warnings_at(json_t *doc, const cached_models *m, int slot, const double *point)
{
    part_warnings(doc, m, slot, point, 0);
}

json_t *predict_point_json(const cached_models *m, const double *point)
{
    json_t *o = json_object();
    for (int i = 0; o && i < m->nparams; i++)
        json_object_set_new(o, m->params[i], json_real(point[i]));
    return o;
}

json_t *predict_number(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *predict_json(const prediction *p)
{
    json_t *interval = p->has_interval && isfinite(p->lo) && isfinite(p->hi)
                           ? json_pack("[f, f]", p->lo, p->hi)
                           : json_null();
    return json_pack("{s:o, s:o}", "value", predict_number(p->value), "interval", interval);
}

int predict_rank_count(api_response *resp, const cached_models *m, const double *point,
                       const char *field)
{
    an_problem p;
    if (rank_count_check(cached_ranks(m, point), m->names, m->nparams, point, field, &p) == 0)
        return 0;
    api_problem(resp, p.status, p.field, "%s", p.msg);
    return -1;
}

json_t *predict_not_whole_warning(const cached_models *m, const double *point)
{
    double dp, mp;
    cached_degrees(m, point, &dp, &mp);
    return rank_count_whole_warning(cached_ranks(m, point), dp, mp, m->names, m->nparams, point);
}

int predict_finite(api_response *resp, const cached_models *m, const cached_part *parts,
                   const double *point, const char *metric, const char *const *fields)
{
    static const char *const part_names[4] = {"comp", "comm", "mem", "imbalance"};
    char what[5][96];
    fp_value v[5];
    int n = 0, composed;
    prediction e = predict_epoch(parts, point, &composed);
    if (composed || parts[3].present) { /* without a model: null with its reason */
        snprintf(what[n], sizeof what[n], "the model of the epoch %.60s", metric);
        v[n] = (fp_value){what[n], e.value};
        n++;
    }
    for (int i = 0; i < 4; i++) {
        const cached_part *p = &parts[i < 3 ? i : CACHE_IMBALANCE];
        if (!p->present || (i == 3 && !composed))
            continue;
        snprintf(what[n], sizeof what[n], "the model of %s %.60s", part_names[i], metric);
        v[n] = (fp_value){what[n], predict_part(p, point).value};
        n++;
    }
    return predict_finite_values(resp, m, v, n, point, fields);
}

int predict_finite_values(api_response *resp, const cached_models *m, const fp_value *v, int n,
                          const double *point, const char *const *fields)
{
    const char *const *names = m->names;
    an_problem p;
    if (finite_point_check(v, n, names, m->nparams, point, fields, &p) == 0)
        return 0;
    api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
    return -1;
}

int predict_positive(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || isspace((unsigned char)*text) || !isfinite(v) || v <= 0)
        return -1;
    *out = v;
    return 0;
}

int predict_check_query(const api_request *req, api_response *resp, const cached_models *m,
                        const char *const *allowed, int params_ok)
{
    for (size_t q = 0; q < req->nquery; q++) {
        const char *name = req->query[q].name;
        int known = 0;
        for (int i = 0; allowed && allowed[i] && !known; i++)
            known = !strcmp(name, allowed[i]);
        for (int i = 0; params_ok && i < m->nparams && !known; i++)
            known = !strcmp(name, m->params[i]);
        for (int i = 0; i < m->nfactors && !known; i++) /* the level of a factor */
            known = !strcmp(name, m->factors[i]);
        known |= req->strict_route && !strcmp(name, "strict"); /* api/warnings.h */
        if (!known) {
            api_problem(resp, 400, name, params_ok ? "neither a parameter of this experiment nor "
                                                     "an option of this endpoint"
                                                   : "not an option of this endpoint");
            return -1;
        }
    }
    return 0;
}

int predict_query_point(const api_request *req, api_response *resp, const cached_models *m,
                        const char *const *allowed, double *point)
{
    for (int i = 0; i < m->nparams; i++) {
        const char *t = api_query(req, m->params[i]);
        if (!t) {
            api_problem(resp, 400, m->params[i], "missing: the point needs a value of every "
                                                 "parameter");
            return -1;
        }
        if (predict_positive(t, &point[i]) < 0) {
            api_problem(resp, 400, m->params[i], "must be a finite number > 0, got \"%.40s\"", t);
            return -1;
        }
    }
    return predict_check_query(req, resp, m, allowed, 1);
}

int predict_parse_at(const char *text, const char *field, api_response *resp,
                     const cached_models *m, double *point)
{
    int seen[PMNF_MAX_PARAMS] = {0};
    const char *p = text;
    while (*p) {
        const char *colon = strchr(p, ':');
        const char *comma = strchrnul(p, ',');
        if (!colon || colon > comma) {
            api_problem(resp, 400, field,
                        "must be name:value pairs separated by commas, e.g. \"%s:256\", got "
                        "\"%.60s\"",
                        m->params[0], text);
            return -1;
        }
        size_t nlen = (size_t)(colon - p);
        int which = -1;
        for (int i = 0; i < m->nparams; i++)
            if (strlen(m->params[i]) == nlen && !memcmp(m->params[i], p, nlen))
                which = i;
        if (which < 0) {
            api_problem(resp, 400, field, "\"%.*s\" is not a parameter of this experiment",
                        (int)(nlen < 64 ? nlen : 64), p);
            return -1;
        }
        char num[64];
        size_t vlen = (size_t)(comma - colon - 1);
        snprintf(num, sizeof num, "%.*s", (int)(vlen < 63 ? vlen : 63), colon + 1);
        if (vlen >= sizeof num || predict_positive(num, &point[which]) < 0) {
            api_problem(resp, 400, field, "%s must be a finite number > 0, got \"%s\"",
                        m->params[which], num);
            return -1;
        }
        if (seen[which]++) {
            api_problem(resp, 400, field, "%s is given twice", m->params[which]);
            return -1;
        }
        p = *comma ? comma + 1 : comma;
    }
    for (int i = 0; i < m->nparams; i++)
        if (!seen[i]) {
            api_problem(resp, 400, field, "the point needs a value of every parameter: %s is "
                                          "missing",
                        m->params[i]);
            return -1;
        }
    return 0;
}

int predict_query_long(const api_request *req, api_response *resp, const char *name, long min,
                       long max, long dflt, long *out)
{
    const char *t = api_query(req, name);
    *out = dflt;
    if (!t)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(t, &end, 10);
    if (end == t || *end || errno || v < min || v > max || isspace((unsigned char)*t)) {
        api_problem(resp, 400, name, "must be an integer from %ld to %ld, got \"%.40s\"", min, max,
                    t);
        return -1;
    }
    *out = v;
    return 0;
}

const cached_models *predict_models(api_ctx *ctx, const api_request *req, api_response *resp,
                                    int64_t *id)
{
    return predict_models_or_all(ctx, req, resp, id, 0);
}

const cached_models *predict_models_or_all(api_ctx *ctx, const api_request *req,
                                           api_response *resp, int64_t *id, int none_ok)
{
    if (api_path_id(req, resp, "id", "experiment", id) < 0)
        return NULL;
    store_error err = {0};
    const cached_models *m = model_cache_get(ctx->models, ctx->db, *id, &err);
    if (!m) {
        api_store_problem(resp, &err);
        return NULL;
    }
    int named = 0;
    for (int i = 0; none_ok && i < m->nfactors; i++)
        named += api_query(req, m->factors[i]) != NULL;
    if (!m->factors_spec[0] || (none_ok && !named))
        return m;
    /* an experiment with factors: the models of the level combination the
     * query names (api/levels.h) */
    json_t *spec = jsonb_parse(m->factors_spec, 0);
    char *levels = NULL;
    int rc = spec ? levels_from_query(spec, req, resp, &levels) : -1;
    if (!spec)
        api_problem(resp, 500, NULL, "out of memory");
    json_decref(spec);
    model_cache_release(ctx->models, m);
    if (rc < 0)
        return NULL;
    m = model_cache_get_levels(ctx->models, ctx->db, *id, levels, &err);
    free(levels);
    if (!m)
        api_store_problem(resp, &err);
    return m;
}

void predict_page_key(const cached_models *m, const api_request *req, char *key, size_t cap)
{
    size_t n = (size_t)snprintf(key, cap, "%" PRId64 "|%s %s|", m->set_id, req->method,
                                req->route ? req->route : req->path);
    for (size_t q = 0; q < req->nquery && n < cap; q++)
        n += (size_t)snprintf(key + n, cap - n, "%s=%s&", req->query[q].name,
                              req->query[q].value ? req->query[q].value : "");
    if (n < cap && req->body_len)
        n += (size_t)snprintf(key + n, cap - n, "|%.*s", (int)req->body_len, req->body);
    /* too long, or a body with a NUL in it: not kept */
    if (n >= cap || (req->body_len && strlen(req->body) != req->body_len))
        key[0] = '\0';
}

const cached_models *predict_models_page(api_ctx *ctx, const api_request *req,
                                         api_response *resp, int64_t *id, char *key, size_t cap)
{
    const cached_models *m = predict_models(ctx, req, resp, id);
    if (!m)
        return NULL;
    predict_page_key(m, req, key, cap);
    if (predict_page_send(ctx, key, resp)) {
        model_cache_release(ctx->models, m);
        return NULL;
    }
    return m;
}

int predict_page_send(api_ctx *ctx, const char *key, api_response *resp)
{
    api_shared *kept = key[0] ? model_cache_page_get(ctx->models, key) : NULL;
    if (!kept)
        return 0;
    api_send_shared(resp, 200, "application/json", kept);
    return 1;
}

void predict_page_store_text(api_ctx *ctx, const char *key, api_response *resp, char *body,
                             size_t len)
{
    api_shared *s = body ? api_shared_wrap(body, len) : NULL;
    if (!s) {
        api_problem(resp, 500, NULL, "out of memory");
        return;
    }
    if (key[0])
        model_cache_page_put(ctx->models, key, s);
    api_send_shared(resp, 200, "application/json", s);
}

void predict_page_store(api_ctx *ctx, const char *key, api_response *resp, json_t *doc)
{
    size_t len = 0;
    char *body = doc ? api_json_text(doc, &len) : NULL;
    json_decref(doc);
    predict_page_store_text(ctx, key, resp, body, len);
}
