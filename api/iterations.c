/*
 * iterations.c — GET /v1/experiments/{id}/iterations: Kavarakuntla et al.'s
 * iteration model of S-SGD (paper 004 Eq. 1-7, modeling/iteration.h) from
 * the phase annotations in an experiment's profiles, per coordinate (mean ±
 * standard deviation and median over the iterations) and modelled over the
 * parameters with the PMNF like every other part.
 *
 * Which callpaths are which phase: name parts (ingest/phase.h matching: case
 * ignored, at the start of a word), per phase in order of preference; the
 * first part that names any callpath of the experiment is the phase's (so a
 * user's own "backward" range is not added to PyTorch's autograd ops). The
 * experiment's "iteration_phases" ({"io":"...", ...}) replaces the defaults
 * per phase. t_c, the gradient aggregation, is the communication callpaths'.
 * A phase that matches nothing counts 0 and gets a warning.
 *
 * Train steps of fitting uploads only, warm-up steps left out; speedups
 * (Eq. 6 on Eq. 3's t_iter, Eq. 7 on the overlapped times) against P_1 of
 * each coordinate's series along x_1, scaled by the ranks N_k/N_1.
 *
 * The table is computed by analysis/iterations.h; this file reads the
 * experiment's rows and renders it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/iterations.h"
#include "api/handlers.h"
#include "api/warnings.h"
#include "modeling/model_json.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/models.h"

static json_t *stats_json(const it_stats *s)
{
    return json_pack("{s:f, s:f, s:f}", "mean", s->mean, "sd", s->sd, "median", s->median);
}

/* The PMNF model of v over the coordinates where it is finite, as JSON;
 * from 2 to IT_MIN_VALUES - 1 values of a parameter with a few_points
 * warning, below 2 a null function with the reason and the warning. */
static json_t *fit_json(pmnf_modeler *mod, const store_experiment *e, const it_table *t,
                        const double *v)
{
    pmnf_model model;
    char why[200];
    int few = 0;
    json_t *out = NULL;
    if (it_fit(mod, t, v, &model, why, sizeof why, &few) == 0) {
        out = api_model_to_json(&model, (const char *const *)e->parameters, 0);
        if (!out)
            snprintf(why, sizeof why, "out of memory");
    }
    if (!out)
        out = json_pack("{s:n, s:s}", "function", "reason", why);
    if (out && few) {
        json_t *w = json_object_get(out, "warnings");
        if (!json_is_array(w)) {
            w = json_array();
            json_object_set_new(out, "warnings", w);
        }
        json_array_append_new(w, json_pack("{s:s, s:s}", "code", "few_points", "message", why));
    }
    return out;
}

static json_t *point_json(const store_experiment *e, const double *pt)
{
    json_t *o = json_object();
    for (int i = 0; i < e->nparams; i++)
        json_object_set_new(o, e->parameters[i], json_real(pt[i]));
    return o;
}

void api_iterations(api_ctx *ctx, api_request *req, api_response *resp)
{
    int64_t id;
    if (api_path_id(req, resp, "id", "experiment", &id))
        return;
    for (size_t k = 0; k < req->nquery; k++)
        if (req->query[k].name && !(req->strict_route && !strcmp(req->query[k].name, "strict"))) {
            api_problem(resp, 400, req->query[k].name, "unknown query parameter");
            return;
        }
    store_error err = {0};
    store_experiment e = {0};
    store_fit_data d;
    memset(&d, 0, sizeof d);
    PGconn *c = store_acquire(ctx->db, &err);
    int rc = c ? store_experiment_get(c, id, &e, &err) : err.code;
    if (!rc)
        rc = store_fit_data_load(c, id, e.nparams, &d, &err);
    store_release(ctx->db, c);
    it_table t = {0};
    pmnf_modeler *mod = NULL;
    if (rc) {
        api_store_problem(resp, &err);
        goto done;
    }
    training_setup ts;
    char field[64], why[400];
    if (training_compile(json_object_get(e.spec, "training"), (const char *const *)e.parameters,
                         e.nparams, &ts, field, sizeof field, why, sizeof why) < 0) {
        api_problem(resp, 409, field, "%s", why);
        goto done;
    }
    if (it_table_build(&t, &d, json_object_get(e.spec, "iteration_phases"), &ts) < 0) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    int np = t.np;
    if (np == 0) {
        api_problem(resp, 409, NULL,
                    "experiment %lld has no train steps with phase annotations to model", (long long)id);
        goto done;
    }
    const double *coords = t.coords, *ranks = t.ranks, *s6 = it_series(&t, IT_S6),
                 *s7 = it_series(&t, IT_S7), *s7rel = it_series(&t, IT_S7REL),
                 *num7 = it_series(&t, IT_NUM7), *den7 = it_series(&t, IT_DEN7);
    const it_result *res = t.res;
    const int *cp_phase = t.cp_phase;
    pmnf_options o;
    pmnf_options_default(&o);
    o.allow_negative_exponents = !strcmp(e.scaling, "strong");
    mod = pmnf_modeler_new(&o);
    if (!mod) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    json_t *points = json_array(), *models = json_object(), *phases = json_object(),
           *warnings = json_array();
    for (int p = 0; p < np; p++) {
        json_t *o2 = json_pack("{s:o, s:o, s:i}", "point", point_json(&e, coords + (size_t)p * e.nparams),
                               "ranks", isfinite(ranks[p]) ? json_real(ranks[p]) : json_null(),
                               "iterations", res[p].iterations);
        for (int q = 0; q < IT_NQ; q++)
            json_object_set_new(o2, it_name(q), stats_json(&res[p].q[q]));
        json_object_set_new(o2, "speedup_eq6", isfinite(s6[p]) ? json_real(s6[p]) : json_null());
        json_object_set_new(o2, "speedup_eq7", isfinite(s7[p]) ? json_real(s7[p]) : json_null());
        json_object_set_new(o2, "eq7",
                            isfinite(s7[p])
                                ? json_pack("{s:f, s:f, s:f}", "n_g", ranks[p], "numerator",
                                            num7[p], "denominator", den7[p])
                                : json_null());
        json_object_set_new(o2, "speedup_eq7_relative",
                            isfinite(s7rel[p]) ? json_real(s7rel[p]) : json_null());
        json_array_append_new(points, o2);
    }
    for (int q = 0; q < IT_NQ; q++)
        json_object_set_new(models, it_name(q), fit_json(mod, &e, &t, it_series(&t, q)));
    json_object_set_new(models, "speedup_eq6", fit_json(mod, &e, &t, s6));
    json_object_set_new(models, "speedup_eq7", fit_json(mod, &e, &t, s7));
    json_object_set_new(models, "speedup_eq7_relative", fit_json(mod, &e, &t, s7rel));
    for (int p = 0; p < IT_C; p++) {
        json_t *names = json_array();
        for (int k = 0; k < d.ncallpaths && json_array_size(names) < 10; k++)
            if (cp_phase[k] == p)
                json_array_append_new(names, json_string(d.callpaths[k]));
        json_object_set_new(phases, it_name(p),
                            json_pack("{s:s, s:o, s:o}", "patterns", t.text[p], "matched",
                                      t.matched[p][0] ? json_string(t.matched[p]) : json_null(),
                                      "callpaths", names));
        if (!t.matched[p][0]) {
            char w[400];
            snprintf(w, sizeof w,
                     "%s: no callpath matches \"%.200s\" (iteration_phases.%s): it counts 0",
                     it_name(p), t.text[p], it_phase_key(p));
            json_t *wj = warning_new(WARN_PHASE_UNMATCHED, w);
            json_object_set_new(wj, "phase", json_string(it_name(p)));
            json_array_append_new(warnings, wj);
        }
    }
    json_t *comm = json_array();
    for (int k = 0; k < d.ncallpaths && json_array_size(comm) < 10; k++)
        if (cp_phase[k] == IT_C)
            json_array_append_new(comm, json_string(d.callpaths[k]));
    json_object_set_new(phases, "t_c", json_pack("{s:s, s:o}", "patterns",
                                                 "the communication callpaths", "callpaths", comm));
    api_send_json(resp, 200,
                  json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:{s:s, s:s}}", "experiment",
                            (json_int_t)id, "scaling", e.scaling, "phases", phases, "points",
                            points, "models", models, "warnings", warnings, "units", "times",
                            "s per iteration (mean, sample sd, median over the iterations)",
                            "speedup", "ratio (N_k/N_1)·t_1/t_k against P_1 along x_1"));
done:
    pmnf_modeler_free(mod);
    it_table_free(&t);
    store_fit_data_free(&d);
    store_experiment_free(&e);
}
