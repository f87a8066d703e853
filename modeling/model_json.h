/*
 * model_json.h — a fitted model as JSON and back: the shape every endpoint
 * and the CLI's --json print, and what a model set stores so that a
 * prediction with its interval can be made later without refitting.
 *
 *   {"function":"<Extra-P syntax>","constant":c0,"terms":[{"coefficient":c,
 *    "factors":[{"parameter":"ranks","poly":0.5,"log":1}]}],"rss","smape",
 *    "adjusted_r2","cv_smape","points","warnings":[{"code","message",...}],
 *    "modeler":"extrap"|"robust","diagnostics":{"smape","adjusted_r2","rss",
 *    "cv_smape"(Extra-P's),"cross_validated_smape","parameters":{"ranks":{"min",
 *    "max","distinct"}},"measurements":{"min","max"},"farthest_point":{...}},
 *    "interval":{"dof","sigma2","t975","cov":[...]}}
 *
 * A segmented factor (pmnf.h) adds "segments" to its factor, each segment
 * {"function","constant","terms","upto"|"from"} as a one-parameter segmented
 * model's "segments" are, its poly and log being the second segment's
 * (the growth beyond the change point); the model then names its first
 * segmented parameter's change point in "break" ({"parameter","low","high"}).
 */
#ifndef PERFCAST_MODELING_MODEL_JSON_H
#define PERFCAST_MODELING_MODEL_JSON_H

#include <jansson.h>

#include "modeling/modeler.h"

/* New JSON object for m; names[param] names the parameters. NULL when out
 * of memory. with_interval adds the "interval" member. */
json_t *api_model_to_json(const pmnf_model *m, const char *const *names, int with_interval);

/* The "diagnostics" member: fit quality, the measured range and distinct
 * values of each parameter, the smallest and largest measurement and the
 * leave-one-out errors (modeling/assess.h). */
json_t *api_model_diagnostics_json(const pmnf_model *m, const char *const *names);

/* Reads a document written by api_model_to_json(..., 1) back. Returns 0, or
 * -1 when it is not one (unknown parameter, missing member). */
int api_model_from_json(const json_t *doc, const char *const *names, int nparams, pmnf_model *m);

/* Leading growth of a model: the largest (poly, log) exponent sum over its
 * terms, compared lexicographically; (0, 0) for a constant. */
void api_model_growth(const pmnf_function *f, double *poly, double *log);

#endif
