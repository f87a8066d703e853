/*
 * warning_json.h — the coded warnings of a model and of its predictions as
 * JSON objects {"code", "message", ...details}: the code from
 * pmnf_warning_code(), the text from pmnf_warning_text(), the details from
 * the model's diagnostics and the prediction's check (assess.h): which
 * model (when named), the lowest value on the path and where, the parameter
 * beyond its range and how far, the fit's SMAPE and adjusted R^2, the
 * distinct values. The shape every model document (model_json.h), every
 * prediction and every answer built from models carries.
 */
#ifndef PERFCAST_WARNING_JSON_H
#define PERFCAST_WARNING_JSON_H

#include <jansson.h>

#include "modeling/assess.h"

/* {"code": code, "message": message}; NULL when out of memory. */
json_t *pmnf_warning_json(const char *code, const char *message);
/* The warnings of a model's bits (details from its diagnostics), as an
 * array; each names model when not NULL ("comp time", ...). */
json_t *pmnf_warnings_json(const pmnf_model *m, const char *const *names, const char *model);
/* Appends to arr the warnings of m's prediction at point
 * (pmnf_assess_point), naming model; returns the bits set. */
unsigned pmnf_point_warnings_json(json_t *arr, const pmnf_model *m, const double *point,
                                  const char *const *names, const char *model);

#endif
