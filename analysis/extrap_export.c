/*
 * extrap_export.c — a model set's measurements as an Extra-P experiment
 * document (analysis/extrap_export.h).
 */
#include "analysis/extrap_export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap_exp.h"

static void series_name(const store_measurement_row *m, char *dst, size_t cap)
{
    int train = !m->phase || !strcmp(m->phase, "train");
    if (m->level && !strcmp(m->level, "callpath"))
        snprintf(dst, cap, "%s%s%s%s", m->name, train ? "" : " (", train ? "" : m->phase,
                 train ? "" : ")");
    else
        snprintf(dst, cap, "%s:%s%s%s%s", m->level ? m->level : "", m->name, train ? "" : " (",
                 train ? "" : m->phase, train ? "" : ")");
}

json_t *extrap_export_new(const char *const *params, int np)
{
    json_t *doc = json_object(), *list = json_array(), *ms = json_object();
    for (int i = 0; list && i < np; i++)
        json_array_append_new(list, json_string(params[i]));
    if (!doc || !list || !ms) {
        json_decref(doc);
        json_decref(list);
        json_decref(ms);
        return NULL;
    }
    json_object_set_new(doc, "Extra-P", json_string("4.2.5"));
    json_object_set_new(doc, "parameters", list);
    json_object_set_new(doc, "measurements", ms);
    return doc;
}

int extrap_export_add(json_t *doc, const store_measurement_row *rows, int n)
{
    json_t *ms = json_object_get(doc, "measurements");
    for (int i = 0; i < n; i++) {
        const store_measurement_row *m = &rows[i];
        if (m->nreps < 1)
            continue;
        char cp[1024];
        series_name(m, cp, sizeof cp);
        json_t *by = json_object_get(ms, cp);
        if (!by && json_object_set_new(ms, cp, by = json_object()) < 0)
            return -1;
        json_t *list = json_object_get(by, m->metric);
        if (!list && json_object_set_new(by, m->metric, list = json_array()) < 0)
            return -1;
        double *scratch = malloc(sizeof *scratch * (size_t)m->nreps);
        json_t *one = scratch ? ingest_extrap_exp_measurement(m->point, m->nparams, m->reps,
                                                               m->nreps, scratch)
                              : NULL;
        free(scratch);
        if (!one || json_array_append_new(list, one) < 0)
            return -1;
    }
    return 0;
}
