/*
 * iteration_request.c — the request documents of the per-iteration
 * analyses, their checks and size caps, and the breakdown view of an
 * analysis (analysis/iteration_request.h).
 */
#include "analysis/iteration_request.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iteration_predict.h"
#include "analysis/iteration_trust.h"

iteration_caps iteration_caps_effective(iteration_caps c)
{
    if (c.events <= 0)
        c.events = IT_DEFAULT_MAX_EVENTS;
    if (c.bytes <= 0)
        c.bytes = IT_DEFAULT_MAX_BYTES;
    return c;
}

int iteration_caps_bytes(const iteration_caps *c, int64_t profile, size_t len, const char *field,
                         an_problem *p)
{
    iteration_caps e = iteration_caps_effective(*c);
    if ((long long)len <= e.bytes)
        return 0;
    return an_problem_set(p, 413, field,
                          "profile %" PRId64 " is stored in %zu bytes: beyond %lld, the bytes of "
                          "one trace an iteration analysis reads (PERFCAST_MAX_ITERATION_BYTES)",
                          profile, len, e.bytes);
}

size_t iteration_caps_room(const iteration_caps *c, long long used)
{
    iteration_caps e = iteration_caps_effective(*c);
    long long room = e.events - used;
    return room > 0 ? (size_t)room : 1;
}

int iteration_caps_events_hit(const iteration_caps *c, const xg_trace *t, int64_t profile,
                              const char *field, an_problem *p)
{
    if (!t->max_events || t->n < t->max_events)
        return 0;
    iteration_caps e = iteration_caps_effective(*c);
    an_problem_set(p, 413, field,
                   "profile %" PRId64 ": more than %zu events of interest; the traces of one "
                   "iteration analysis may hold %lld together (PERFCAST_MAX_ITERATION_EVENTS)",
                   profile, t->max_events, e.events);
    return 1;
}

int iteration_request_prof(const json_t *doc, xg_ov_options *o, an_problem *p)
{
    xg_ov_options_default(o);
    json_t *pj = json_object_get(doc, "profiler_overhead_us");
    if (pj && !json_is_null(pj)) {
        const char *keys[] = {"cpu", "gpu"};
        const char *fields[] = {"profiler_overhead_us.cpu", "profiler_overhead_us.gpu"};
        double *dst[] = {&o->cpu_profiler_us, &o->gpu_profiler_us};
        for (int i = 0; i < 2; i++) {
            json_t *v = json_object_get(pj, keys[i]);
            if (!v)
                continue;
            if (!json_is_number(v) || !(json_number_value(v) >= 0) ||
                !isfinite(json_number_value(v)))
                return an_problem_set(p, 400, fields[i], "must be microseconds >= 0");
            *dst[i] = json_number_value(v);
        }
    }
    json_t *k = json_object_get(doc, "keep_outliers");
    if (k && !json_is_boolean(k))
        return an_problem_set(p, 400, "keep_outliers", "must be true or false");
    o->keep_outliers = json_is_true(k);
    return 0;
}

int iteration_request_top(const json_t *doc, int *top, an_problem *p)
{
    json_t *t = json_object_get(doc, "top");
    if (t && (!json_is_integer(t) || json_integer_value(t) < 1 ||
              json_integer_value(t) > IT_MAX_TOP))
        return an_problem_set(p, 400, "top", "must be an integer from 1 to %d", IT_MAX_TOP);
    *top = t ? (int)json_integer_value(t) : 0;
    return 0;
}

int iteration_request_trace(const json_t *doc, iteration_opts *o, xg_kt_entry **kt,
                            an_problem *p)
{
    *kt = NULL;
    if (iteration_request_prof(doc, &o->prof, p) < 0 || iteration_request_top(doc, &o->top, p) < 0)
        return -1;
    xg_error xerr;
    json_t *ktj = json_object_get(doc, "kernel_times");
    if (ktj && !json_is_null(ktj) && iteration_kernel_times_parse(ktj, kt, &o->nkt, &xerr) < 0)
        return an_problem_set(p, 400, "kernel_times", "%s", xerr.msg);
    o->kt = *kt;
    return 0;
}

int iteration_request_model(const json_t *doc, iteration_opts *o, int *method, double *at,
                            size_t *n, an_problem *p)
{
    json_t *list = json_object_get(doc, "profiles"), *aj = json_object_get(doc, "at");
    *n = json_array_size(list);
    if (!json_is_array(list) || *n < 2 || *n > IT_MODEL_MAX_TRACES)
        return an_problem_set(p, 400, "profiles",
                              "must be 2 to %d {\"profile\": id, \"value\": x}, the first the "
                              "trace to predict",
                              IT_MODEL_MAX_TRACES);
    if (!json_is_number(aj) || !isfinite(json_number_value(aj)) || json_number_value(aj) <= 0)
        return an_problem_set(p, 400, "at",
                              "must be a number > 0: the parameter's value to predict at");
    *at = json_number_value(aj);
    json_t *mj = json_object_get(doc, "method");
    *method = ITERATION_BY_OPERATORS;
    if (mj && (!json_is_string(mj) || (strcmp(json_string_value(mj), "operators") &&
                                       strcmp(json_string_value(mj), "kernel_names"))))
        return an_problem_set(p, 400, "method", "must be \"operators\" or \"kernel_names\"");
    if (mj && !strcmp(json_string_value(mj), "kernel_names"))
        *method = ITERATION_BY_KERNEL_NAMES;
    json_t *mixed = json_object_get(doc, "mixed_devices");
    if (mixed && !json_is_boolean(mixed))
        return an_problem_set(p, 400, "mixed_devices", "must be true or false (true: model traces "
                                                        "of different devices together)");
    o->mixed_devices = json_is_true(mixed);
    for (size_t i = 0; i < *n; i++) { /* every entry, measured steps included, before any lookup */
        int64_t profile;
        double x;
        if (iteration_request_model_entry(doc, i, &profile, &x, NULL, p) < 0)
            return -1;
    }
    if (iteration_request_top(doc, &o->top, p) < 0)
        return -1;
    return iteration_request_prof(doc, &o->prof, p);
}

int iteration_request_model_entry(const json_t *doc, size_t i, int64_t *profile, double *value,
                                  double *measured, an_problem *p)
{
    json_t *e = json_array_get(json_object_get(doc, "profiles"), i);
    json_t *pj = json_object_get(e, "profile"), *v = json_object_get(e, "value");
    if (!json_is_integer(pj) || json_integer_value(pj) <= 0 || !json_is_number(v) ||
        !isfinite(json_number_value(v))) {
        char field[48];
        snprintf(field, sizeof field, "profiles[%zu]", i);
        return an_problem_set(p, 400, field, "must be {\"profile\": id, \"value\": x}");
    }
    *profile = json_integer_value(pj);
    *value = json_number_value(v);
    json_t *mj = json_object_get(e, "measured_step");
    double m = NAN;
    if (mj && !json_is_null(mj)) {
        char field[48];
        snprintf(field, sizeof field, "profiles[%zu].measured_step", i);
        if (!json_is_number(mj) || !isfinite(json_number_value(mj)) ||
            json_number_value(mj) <= 0)
            return an_problem_set(p, 400, field, "must be the run's step time without the "
                                                 "profiler, in seconds > 0");
        json_t *ov = json_object_get(doc, "overheads");
        if (ov && !json_is_null(ov))
            return an_problem_set(p, 400, field, "calibrating the profiler's cost needs the "
                                                 "overheads measured on the traces; "
                                                 "\"overheads\" fixes them");
        m = json_number_value(mj);
    }
    if (measured)
        *measured = m;
    return 0;
}

int iteration_request_set(const json_t *doc, const char **name, xg_ov_options *prof,
                          an_problem *p)
{
    *name = json_string_value(json_object_get(doc, "name"));
    if (!*name || !**name || strlen(*name) > 200)
        return an_problem_set(p, 400, "name", "must be a platform name of 1 to 200 characters");
    if (!json_object_get(doc, "set") == !json_object_get(doc, "profiles"))
        return an_problem_set(p, 400, "profiles",
                              "give either \"profiles\" (ids of uploaded traces to measure) or "
                              "\"set\" (an overhead set)");
    return iteration_request_prof(doc, prof, p);
}

int iteration_request_set_ids(const json_t *ids, size_t *n, an_problem *p)
{
    *n = json_array_size(ids);
    if (!json_is_array(ids) || *n == 0 || *n > IT_SET_MAX_TRACES)
        return an_problem_set(p, 400, "profiles", "must be an array of 1 to %d profile ids",
                              IT_SET_MAX_TRACES);
    return 0;
}

int iteration_request_set_id(const json_t *ids, size_t i, int64_t *id, an_problem *p)
{
    json_t *v = json_array_get(ids, i);
    if (!json_is_integer(v) || json_integer_value(v) <= 0) {
        char field[32];
        snprintf(field, sizeof field, "profiles[%zu]", i);
        return an_problem_set(p, 400, field, "must be a profile id");
    }
    *id = json_integer_value(v);
    return 0;
}

json_t *iteration_request_given_set(const json_t *given, int *ntraces, an_problem *p)
{
    xg_overheads ov;
    xg_error xerr;
    if (iteration_overheads_parse(given, &ov, &xerr) < 0) {
        an_problem_set(p, 400, "set", "%s", xerr.msg);
        return NULL;
    }
    *ntraces = ov.traces > 0 ? ov.traces : 1;
    json_t *set = iteration_overheads_json(&ov);
    xg_overheads_free(&ov);
    return set;
}

int iteration_request_not_kineto(int64_t profile, const char *format, const char *field,
                                 an_problem *p)
{
    return an_problem_set(p, 422, field,
                          "profile %" PRId64 " is a %s upload; the analysis reads PyTorch "
                          "profiler (Kineto) traces",
                          profile, format);
}

void iteration_request_analyse_problem(const xg_error *e, an_problem *p)
{
    an_problem_set(p, strstr(e->msg, "out of memory") ? 500 : 422, e->field, "%s", e->msg);
}

void iteration_request_predict_problem(const xg_error *e, int bad, an_problem *p)
{
    if (strstr(e->msg, "out of memory")) {
        an_problem_set(p, 500, NULL, "out of memory");
    } else if (bad >= 0) {
        char field[48];
        snprintf(field, sizeof field, "profiles[%d]", bad);
        an_problem_set(p, 400, field, "%s", e->msg);
    } else {
        an_problem_set(p, !strcmp(e->field, "at") ? 400 : 422,
                       e->field[0] ? e->field : "profiles", "%s", e->msg);
    }
}

/* Whether text is a warning "code: ..." of the prediction: the outliers its
 * overheads dropped, or its interval's (iteration_trust.h). */
static int prediction_warning(const char *text)
{
    static const char *const codes[] = {ITERATION_WARN_OUTLIERS, ITERATION_WARN_NO_INTERVAL,
                                        ITERATION_WARN_STEPS_VARY, ITERATION_WARN_PROFILER};
    for (size_t k = 0; k < sizeof codes / sizeof *codes; k++) {
        size_t n = strlen(codes[k]);
        if (!strncmp(text, codes[k], n) && text[n] == ':')
            return 1;
    }
    return 0;
}

json_t *iteration_breakdown_view(json_t *doc)
{
    json_t *steps = json_array(), *s, *warn = json_array();
    size_t i;
    /* the trace's warnings; the prediction's go with the prediction */
    json_array_foreach(json_object_get(doc, "warnings"), i, s)
        if (!prediction_warning(json_string_value(s) ?: ""))
            json_array_append(warn, s);
    json_array_foreach(json_object_get(doc, "steps"), i, s)
        json_array_append_new(steps, json_pack("{s:O, s:O, s:O, s:O}", "index",
                                               json_object_get(s, "index"), "label",
                                               json_object_get(s, "label"), "breakdown",
                                               json_object_get(s, "breakdown"), "efficiency",
                                               json_object_get(s, "efficiency")));
    json_t *out = json_pack("{s:O, s:O, s:o, s:O, s:O, s:o}", "profile",
                            json_object_get(doc, "profile"), "rank", json_object_get(doc, "rank"),
                            "steps", steps, "breakdown", json_object_get(doc, "breakdown"),
                            "efficiency", json_object_get(doc, "efficiency"), "warnings", warn);
    json_decref(doc);
    return out;
}
