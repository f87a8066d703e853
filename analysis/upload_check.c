/*
 * upload_check.c — what an uploaded profile must be for its experiment
 * (analysis/upload_check.h).
 */
#include "analysis/upload_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/training.h"
#include "ingest/trace.h"
#include "modeling/expr.h"
#include "modeling/modeler.h"

int upload_check_magnitudes(const profile *p, const upload_experiment *e, const double *point,
                            an_problem *pr)
{
    char field[160];
    for (int i = 0; i < e->nparams; i++)
        if (fabs(point[i]) > PMNF_MAX_MAGNITUDE) {
            snprintf(field, sizeof field, "point.%.100s", e->params[i]);
            return an_problem_set(pr, 400, field,
                                  "%g is beyond +-%g, the largest magnitude of a coordinate "
                                  "perfcast models",
                                  point[i], PMNF_MAX_MAGNITUDE);
        }
    for (size_t k = 0; k < p->nrows; k++) {
        const profile_row *r = &p->rows[k];
        if (fabs(r->value) <= PMNF_MAX_MAGNITUDE)
            continue;
        snprintf(field, sizeof field, "metrics.%.100s", p->metrics[r->metric]);
        return an_problem_set(pr, 400, field,
                              "callpath \"%.200s\", rank %d, %s step %d: %g is beyond +-%g, the "
                              "largest magnitude of a value perfcast models",
                              p->callpaths[r->callpath].name, r->rank,
                              profile_phase_name(r->phase), r->step, r->value,
                              PMNF_MAX_MAGNITUDE);
    }
    return 0;
}

int upload_check_training(const upload_experiment *e, const double *point, an_problem *pr)
{
    const json_t *t = json_object_get(e->spec, "training");
    training_setup s;
    char field[64], msg[400];
    double n_t, n_v;
    if (!json_is_object(t))
        return 0; /* nothing to check; the refit says what is missing */
    if (training_compile(t, e->params, e->nparams, &s, field, sizeof field, msg, sizeof msg) ==
            0 &&
        training_steps_at(&s, point, e->params, e->nparams, &n_t, &n_v, field, sizeof field, msg,
                          sizeof msg) == 0)
        return 0;
    return an_problem_set(pr, 400, field, "%s (the experiment's training set-up)", msg);
}

int upload_check_world_size(const upload_experiment *e, const double *point, int world_size,
                            an_problem *pr)
{
    const json_t *t = json_object_get(e->spec, "training");
    training_setup s;
    char field[64], msg[400];
    double g = 0, m = 0;
    if (world_size <= 0 || !json_is_object(t) ||
        training_compile(t, e->params, e->nparams, &s, field, sizeof field, msg, sizeof msg) ||
        (training_is_constant(&s, TRAINING_G, e->nparams) &&
         training_is_constant(&s, TRAINING_M, e->nparams)) ||
        expr_eval(&s.e[TRAINING_G], point, &g) || expr_eval(&s.e[TRAINING_M], point, &m))
        return 0;
    double workers = g * m;
    if (!isfinite(workers) || fabs(workers - world_size) < 0.5)
        return 0;
    char coord[256] = "";
    size_t n = 0;
    for (int i = 0; i < e->nparams && n < sizeof coord; i++)
        n += (size_t)snprintf(coord + n, sizeof coord - n, "%s%s=%g", i ? "," : "", e->params[i],
                              point[i]);
    return an_problem_set(pr, 409, "world_size",
                          "the trace says world_size %d (distributedInfo), but at the upload's "
                          "coordinate %s the experiment's training set-up gives %g workers "
                          "(data_parallel %g x model_parallel %g): upload it at the coordinate "
                          "of %d workers",
                          world_size, coord, workers, g, m, world_size);
}

void upload_force_phase(profile *p, int phase)
{
    int ph = phase == INGEST_PHASE_VALIDATION ? PROFILE_VALIDATION : PROFILE_TRAIN;
    for (size_t i = 0; phase && i < p->nrows; i++)
        if (p->rows[i].phase != PROFILE_BETWEEN)
            p->rows[i].phase = ph;
}

int upload_run_point(const upload_experiment *e, const cube_bundle_run *r, double *point,
                     an_problem *pr)
{
    for (int i = 0; i < e->nparams; i++) {
        int k = 0;
        while (k < r->np && strcmp(r->names[k], e->params[i]))
            k++;
        if (k == r->np)
            return an_problem_set(pr, 400, "parameters",
                                  "%.100s: the run directory \"%.80s\" does not name the "
                                  "experiment's parameter \"%.40s\"",
                                  r->member, r->dir, e->params[i]);
        point[i] = r->values[k];
    }
    return 0;
}

void upload_repetitions(const cube_bundle *b, const double *points, int np, int *rep)
{
    for (int i = 0; i < b->n; i++) {
        rep[i] = b->runs[i].repetition;
        if (rep[i])
            continue;
        int before = 0;
        for (int j = 0; j < i; j++)
            before += !memcmp(points + (size_t)j * np, points + (size_t)i * np,
                              sizeof *points * (size_t)np);
        rep[i] = before + 1;
    }
}
