/*
 * warnings.h — coded warnings in answers, and ?strict=true.
 *
 * Every warning an answer carries is an object {"code", "message", ...}:
 * a stable code clients match on (modeler.h's pmnf_warning_code() for the
 * model and prediction warnings of modeling/assess.h, made by
 * modeling/warning_json.h, and the codes below for the others), the text for people, and details such as the part of
 * the epoch, the parameter or the value it is about. A route flagged
 * API_ROUTE_STRICT takes ?strict=true (or false): api_dispatch() then
 * answers 422 naming the codes instead of any 200 whose document carries
 * a warning anywhere, so that a scheduler can refuse to act on a doubtful
 * answer.
 */
#ifndef PERFCAST_API_WARNINGS_H
#define PERFCAST_API_WARNINGS_H

#include <jansson.h>

#include "analysis/noisy.h"
#include "api/http.h"
#include "modeling/assess.h"
#include "modeling/warning_json.h"

/* Codes of warnings that are not about a model. */
#define WARN_NOISY_MEASUREMENT "noisy_measurement" /* a mean's 95% interval wider than +-5% */
#define WARN_NOT_MEASURED "not_measured"           /* something the answer needed is missing */
#define WARN_SIMULATION_FALLBACK "simulation_fallback"
#define WARN_TRACE "trace"                         /* a remark of the trace or graph readers */
#define WARN_WARMUP "warmup" /* warm-up steps in the measurements (set by pipeline/refit_fit.c) */
#define WARN_PHASE_UNMATCHED "phase_unmatched"     /* an iteration phase matches no callpath */

/* {"code": code, "message": message}; NULL when out of memory. */
json_t *warning_new(const char *code, const char *message);
/* Appends w (stolen) to doc's "warnings" array, made when absent. */
void warning_append(json_t *doc, json_t *w);
/* Appends the model's and the prediction's warnings to doc's "warnings". */
void warnings_attach_model(json_t *doc, const pmnf_model *m, const double *point,
                           const char *const *names, const char *model);

/* Appends the too-noisy points' warnings (analysis/noisy.h) to doc's
 * "warnings" array (made when absent); none: doc is left as it is. */
void noisy_points_attach(json_t *doc, const noisy_points *np);

/* 1 when req asks ?strict=true, 0 for false or absent, -1 after answering
 * 400 for another value. */
int warnings_strict_requested(const api_request *req, api_response *resp);
/* When resp is a 200 JSON answer carrying warnings (in any "warnings"
 * array of its document), replaces it by 422 naming their codes. */
void warnings_strict_apply(api_response *resp);

#endif
