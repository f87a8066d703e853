/*
 * experiment_doc.h — the creation document of an experiment (POST
 * /v1/experiments), the domain input every later analysis reads: its name,
 * parameters, scaling, training set-up (analysis/training.h), cost
 * (analysis/formula.h), factors (analysis/levels.h), markers, measure and
 * modeler.
 *
 * The document is checked field by field; the first fault is a 400 naming
 * the field ("training.batch_size: must be an integer >= 1 or an expression
 * of the parameters, got -3"). Unknown fields are faults too, so a misspelt
 * optional field cannot pass unnoticed. Expressions are tried at sample
 * coordinates (every parameter 1 to 2^20): a set-up that gives no training
 * step anywhere, or a cost formula never finite, is refused. What is kept
 * is the normalized spec: optional training fields filled with their
 * defaults, degrees of parallelism as text, the modeler named.
 */
#ifndef PERFCAST_ANALYSIS_EXPERIMENT_DOC_H
#define PERFCAST_ANALYSIS_EXPERIMENT_DOC_H

#include <jansson.h>

#include "analysis/problem.h"

#define EXPERIMENT_MAX_PARAMS 8

typedef struct experiment_doc {
    char *name;
    char *scaling;    /* "weak" | "strong" */
    char **parameters;
    int nparams;
    json_t *spec;     /* {"training": {...}, "cost"?: {...}, "modeler", ...} */
} experiment_doc;

/* Checks doc into e. 0, or -1 with p (400 naming the field; 500 out of
 * memory). e holds what it holds either way: experiment_doc_free. */
int experiment_doc_validate(const json_t *doc, experiment_doc *e, an_problem *p);
void experiment_doc_free(experiment_doc *e);

/* Adds to v the view of a stored spec: "training" and "cost" with their
 * keys in the document's order, "modeler" (Extra-P's for experiments stored
 * before there was a choice), then the spec's other keys. 0, or -1 when out
 * of memory. */
int experiment_doc_view_spec(json_t *v, const json_t *spec);

#endif
