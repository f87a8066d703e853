/*
 * extrap_exp.h — Extra-P's saved experiments (.extra-p: a zip archive with
 * experiment.json), read as input and written (extrap_exp.c).
 */
#ifndef PERFCAST_INGEST_EXTRAP_EXP_H
#define PERFCAST_INGEST_EXTRAP_EXP_H

#include <jansson.h>
#include <stddef.h>

#include "ingest/extrap.h"

/* Reads the measurements of a .extra-p file: one repetition per point, its
 * median when median is 1, else its mean. *doc (may be NULL) gets the whole
 * experiment.json (stored models under "modelers"; json_decref it). Returns
 * 0, or -1 with err naming the member and the JSON path. */
int ingest_extrap_exp_read(const void *buf, size_t len, int median, ingest_experiment *out,
                           json_t **doc, ingest_error *err);

/* experiment.json of e: parameters and, per point, median, mean, minimum,
 * maximum, std and repetitions of its values. NULL when out of memory. */
json_t *ingest_extrap_exp_json(const ingest_experiment *e);

/* One measurement of experiment.json from n repetitions v: coordinate,
 * median, mean, minimum, maximum, std (population, as numpy) and
 * repetitions. scratch holds n doubles. NULL when n < 1 or out of memory. */
json_t *ingest_extrap_exp_measurement(const double *coord, int ncoord, const double *v, int n,
                                      double *scratch);

/* The .extra-p archive (deflated zip) of doc; *out is malloc'ed. 0 or -1. */
int ingest_extrap_exp_zip(const json_t *doc, unsigned char **out, size_t *outlen, char *err,
                          size_t errcap);

/* A stored model's "function" object as Extra-P prints it
 * ("c + c1 * x^(3/2) * log2(x)^(2)"), with e's parameter names. 0 or -1. */
int ingest_extrap_exp_model_text(const json_t *function, const ingest_experiment *e, char *dst,
                                 size_t cap);

#endif
