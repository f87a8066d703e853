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
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/handlers.h"
#include "analysis/training.h"
#include "api/warnings.h"
#include "modeling/model_json.h"
#include "ingest/phase.h"
#include "ingest/profile.h"
#include "modeling/iteration.h"
#include "modeling/modeler.h"
#include "modeling/scaling.h"
#include "store/experiments.h"
#include "store/models.h"

#define IT_MIN_VALUES 5
#define IT_NSPEED 2 /* Eq. 6, Eq. 7 */

/* The phases an experiment names, in IT_* order (t_c has no patterns). */
static const char *const phase_keys[IT_C] = {"io", "h2d", "md", "forward", "backward", "update"};
static const char *const phase_defaults[IT_C] = {
    "dataloader,data_load,io,fetch",
    "memcpy htod,h2d,to_device",
    "md,minibatch,mini_batch,scatter",
    "forward,fwd",
    "backward,bwd,autograd::engine::evaluate_function",
    "optimizer.step,optimizer,update",
};

/* Per callpath its phase (-1: none); matched[p]: the pattern chosen. */
static void classify(const store_fit_data *d, const json_t *custom, int *cp_phase,
                     char matched[IT_C][64], const char *text[IT_C])
{
    for (int c = 0; c < d->ncallpaths; c++)
        cp_phase[c] = -1;
    for (int p = 0; p < IT_C; p++) {
        const char *t = json_string_value(json_object_get(custom, phase_keys[p]));
        text[p] = t ? t : phase_defaults[p];
        ingest_phase_patterns all;
        ingest_phase_compile(text[p], &all);
        matched[p][0] = '\0';
        for (int k = 0; k < all.n && !matched[p][0]; k++) {
            ingest_phase_patterns one = {.n = 1};
            memcpy(one.pat[0], all.pat[k], sizeof one.pat[0]);
            one.len[0] = all.len[k];
            int any = 0;
            for (int c = 0; c < d->ncallpaths; c++)
                if (cp_phase[c] < 0 &&
                    ingest_phase_match(&one, d->callpaths[c], strlen(d->callpaths[c]))) {
                    cp_phase[c] = p;
                    any = 1;
                }
            if (any)
                snprintf(matched[p], sizeof matched[p], "%s", all.pat[k]);
        }
    }
    for (int c = 0; c < d->ncallpaths; c++)
        if (cp_phase[c] < 0 && d->categories[c] == PROFILE_COMM)
            cp_phase[c] = IT_C;
}

static json_t *stats_json(const it_stats *s)
{
    return json_pack("{s:f, s:f, s:f}", "mean", s->mean, "sd", s->sd, "median", s->median);
}

static int fewest_distinct(const double *coords, int n, int nparams)
{
    int fewest = n;
    for (int q = 0; q < nparams; q++) {
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < i && !seen; j++)
                seen = coords[(size_t)j * nparams + q] == coords[(size_t)i * nparams + q];
            distinct += !seen;
        }
        fewest = distinct < fewest ? distinct : fewest;
    }
    return fewest;
}

/* The PMNF model of v over the coordinates where it is finite, as JSON. */
static json_t *fit_json(pmnf_modeler *mod, const store_experiment *e, const double *coords,
                        const double *v, int np)
{
    int nparams = e->nparams, n = 0;
    double *c = malloc(sizeof(double) * (size_t)(np ? np : 1) * nparams);
    double *y = malloc(sizeof(double) * (size_t)(np ? np : 1));
    json_t *out = NULL;
    char why[200] = "out of memory";
    for (int p = 0; c && y && p < np; p++)
        if (isfinite(v[p])) {
            memcpy(c + (size_t)n * nparams, coords + (size_t)p * nparams,
                   sizeof(double) * (size_t)nparams);
            y[n++] = v[p];
        }
    if (c && y) {
        int distinct = fewest_distinct(c, n, nparams);
        pmnf_model model;
        if (distinct < IT_MIN_VALUES)
            snprintf(why, sizeof why,
                     "known at %d coordinate(s) with %d distinct value(s) of a parameter; at "
                     "least %d values of every parameter are needed",
                     n, distinct, IT_MIN_VALUES);
        else if (pmnf_fit(mod, &(pmnf_data){nparams, n, c, y}, &model, why, sizeof why) == 0)
            out = api_model_to_json(&model, (const char *const *)e->parameters, 0);
    }
    free(c);
    free(y);
    return out ? out : json_pack("{s:n, s:s}", "function", "reason", why);
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
    int *cp_phase = NULL, *pidx = NULL;
    it_row *rows = NULL;
    it_result *res = NULL;
    double *coords = NULL, *ranks = NULL, *vals = NULL;
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
    cp_phase = malloc(sizeof(int) * (size_t)(d.ncallpaths ? d.ncallpaths : 1));
    rows = malloc(sizeof(it_row) * (d.nrows ? d.nrows : 1));
    res = calloc((size_t)(d.npoints ? d.npoints : 1), sizeof *res);
    pidx = malloc(sizeof(int) * (size_t)(d.npoints ? d.npoints : 1));
    coords = malloc(sizeof(double) * (size_t)(d.npoints ? d.npoints : 1) * (e.nparams ? e.nparams : 1));
    ranks = malloc(sizeof(double) * (size_t)(d.npoints ? d.npoints : 1));
    vals = malloc(sizeof(double) * (size_t)(d.npoints ? d.npoints : 1) * (IT_NQ + IT_NSPEED + 2));
    if (!cp_phase || !rows || !res || !pidx || !coords || !ranks || !vals) {
        api_problem(resp, 500, NULL, "out of memory");
        goto done;
    }
    char matched[IT_C][64];
    const char *text[IT_C];
    classify(&d, json_object_get(e.spec, "iteration_phases"), cp_phase, matched, text);
    int time_metric = -1;
    for (int m = 0; m < d.nmetrics; m++)
        if (!strcmp(d.metrics[m], "time"))
            time_metric = m;
    /* per fitting coordinate: the iteration statistics */
    int np = 0;
    size_t at = 0;
    for (int p = 0; p < d.npoints; p++) {
        size_t n = 0;
        while (at < d.nrows && d.rows[at].point == p) {
            const store_fit_row *r = &d.rows[at++];
            if (r->phase != PROFILE_TRAIN || r->metric != time_metric ||
                cp_phase[r->callpath] < 0 || r->step < ts.warmup_steps)
                continue;
            rows[n++] = (it_row){r->repetition, r->rank, r->step, cp_phase[r->callpath], r->value};
        }
        if (d.evaluation && d.evaluation[p])
            continue;
        if (it_coordinate(rows, n, &res[np]) < 0) {
            api_problem(resp, 500, NULL, "out of memory");
            goto done;
        }
        if (res[np].iterations == 0)
            continue;
        const double *pt = d.points + (size_t)p * d.nparams;
        memcpy(coords + (size_t)np * e.nparams, pt, sizeof(double) * (size_t)e.nparams);
        double g = NAN, mm = NAN;
        if (expr_eval(&ts.e[TRAINING_G], pt, &g) < 0 || expr_eval(&ts.e[TRAINING_M], pt, &mm) < 0)
            g = mm = NAN;
        ranks[np] = g * mm;
        pidx[np++] = p;
    }
    if (np == 0) {
        api_problem(resp, 409, NULL,
                    "experiment %lld has no train steps with phase annotations to model", (long long)id);
        goto done;
    }
    /* per quantity and coordinate: the medians; then the speedups */
    size_t stride = (size_t)np;
    for (int q = 0; q < IT_NQ; q++)
        for (int p = 0; p < np; p++)
            vals[q * stride + (size_t)p] = res[p].q[q].median;
    double *eq3 = vals + IT_EQ3 * stride, *s6 = vals + IT_NQ * stride,
           *s7 = vals + (IT_NQ + 1) * stride, *ov_base = vals + (IT_NQ + 2) * stride,
           *ov_k = vals + (IT_NQ + 3) * stride;
    for (int p = 0; p < np; p++) {
        const it_result *r = &res[p];
        double io = r->q[IT_IO].median, h2d = r->q[IT_H2D].median, f = r->q[IT_F].median,
               b = r->q[IT_B].median, cc = r->q[IT_C].median;
        ov_base[p] = fmax(io + h2d, f + b);
        ov_k[p] = fmax(io + h2d, f + b + cc);
    }
    for (int p = 0; p < np; p++) {
        int b = scl_series_baseline(coords, np, e.nparams, coords + (size_t)p * e.nparams, eq3);
        s6[p] = b >= 0 ? it_speedup(ranks[b], eq3[b], ranks[p], eq3[p]) : NAN;
        s7[p] = b >= 0 ? it_speedup(ranks[b], ov_base[b], ranks[p], ov_k[p]) : NAN;
    }
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
        json_array_append_new(points, o2);
    }
    for (int q = 0; q < IT_NQ; q++)
        json_object_set_new(models, it_name(q), fit_json(mod, &e, coords, vals + q * stride, np));
    json_object_set_new(models, "speedup_eq6", fit_json(mod, &e, coords, s6, np));
    json_object_set_new(models, "speedup_eq7", fit_json(mod, &e, coords, s7, np));
    for (int p = 0; p < IT_C; p++) {
        json_t *names = json_array();
        for (int k = 0; k < d.ncallpaths && json_array_size(names) < 10; k++)
            if (cp_phase[k] == p)
                json_array_append_new(names, json_string(d.callpaths[k]));
        json_object_set_new(phases, it_name(p),
                            json_pack("{s:s, s:o, s:o}", "patterns", text[p], "matched",
                                      matched[p][0] ? json_string(matched[p]) : json_null(),
                                      "callpaths", names));
        if (!matched[p][0]) {
            char w[400];
            snprintf(w, sizeof w,
                     "%s: no callpath matches \"%.200s\" (iteration_phases.%s): it counts 0",
                     it_name(p), text[p], phase_keys[p]);
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
    free(cp_phase);
    free(rows);
    free(res);
    free(pidx);
    free(coords);
    free(ranks);
    free(vals);
    store_fit_data_free(&d);
    store_experiment_free(&e);
}
