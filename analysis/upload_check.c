/*
 * upload_check.c — what an uploaded profile must be for its experiment
 * (analysis/upload_check.h).
 */
#include "analysis/upload_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/training.h"
#include "ingest/trace.h"
#include "modeling/expr.h"
#include "modeling/modeler.h"

static int param_index(const upload_experiment *e, const char *name)
{
    for (int i = 0; i < e->nparams; i++)
        if (!strcmp(e->params[i], name))
            return i;
    return -1;
}

/* "ranks, batch" for messages. */
static void param_list(const upload_experiment *e, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < e->nparams && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", e->params[i]);
}

/* Query coordinate name=text into point[i] (have[i]: 1 from the body, 2
 * from the query). 0, or -1 with pr. */
static int query_coordinate(const upload_experiment *e, const char *name, const char *text,
                            const char *list, double *point, int *have, an_problem *pr)
{
    int i = param_index(e, name);
    if (i < 0)
        return an_problem_set(pr, 400, name,
                              "query parameter \"%.100s\" is not a parameter of this experiment "
                              "(parameters: %s) nor format, repetition, rank, markers, refit, "
                              "phase, validation_markers, use, replace, commit, branch or ci_run",
                              name, list);
    char *end = NULL;
    errno = 0;
    double v = text && *text ? strtod(text, &end) : NAN;
    if (!end || *end || errno || !isfinite(v))
        return an_problem_set(pr, 400, name, "expected a finite number, got \"%.40s\"",
                              text ? text : "");
    if (have[i] == 1 && point[i] != v)
        return an_problem_set(pr, 400, name, "the body's point says %.17g, the query %.17g",
                              point[i], v);
    if (have[i] == 2 && point[i] != v)
        return an_problem_set(pr, 400, name, "given twice in the query: %.17g and %.17g",
                              point[i], v);
    point[i] = v;
    have[i] = have[i] ? have[i] : 2;
    return 0;
}

int upload_point(const profile *p, const upload_experiment *e, const char *const *names,
                 const char *const *values, size_t n, double *point, an_problem *pr)
{
    char list[300], field[120];
    param_list(e, list, sizeof list);
    int have[64] = {0}; /* experiments have at most a handful of parameters */
    if (e->nparams > 64)
        return an_problem_set(pr, 500, NULL, "experiment has too many parameters");
    for (int k = 0; k < p->nparams; k++) {
        int i = param_index(e, p->param_names[k]);
        snprintf(field, sizeof field, "point.%.100s", p->param_names[k]);
        if (i < 0)
            return an_problem_set(pr, 400, field,
                                  "not a parameter of this experiment (parameters: %s)", list);
        point[i] = p->point[k];
        have[i] = 1;
    }
    for (size_t k = 0; k < n; k++)
        if (query_coordinate(e, names[k], values[k], list, point, have, pr) < 0)
            return -1;
    for (int i = 0; i < e->nparams; i++)
        if (!have[i]) {
            snprintf(field, sizeof field, "point.%.100s", e->params[i]);
            return an_problem_set(pr, 400, field,
                                  "no value; give it in the body's \"point\" or as ?%.100s=VALUE",
                                  e->params[i]);
        }
    return 0;
}

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
    /* the checks of a single upload, the run's member named */
    if (upload_check_magnitudes(&r->prof, e, point, pr) == 0 &&
        upload_check_training(e, point, pr) == 0)
        return 0;
    char msg[sizeof pr->msg];
    int n = snprintf(msg, sizeof msg, "%.100s: ", r->member ? r->member : r->dir);
    snprintf(msg + n, sizeof msg - (size_t)n, "%.*s", (int)(sizeof msg - (size_t)n - 1), pr->msg);
    memcpy(pr->msg, msg, sizeof msg);
    return -1;
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
