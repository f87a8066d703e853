/*
 * extrap_exp.h — Extra-P's saved experiments (.extra-p: a zip archive with
 * experiment.json), read as input and written (extrap_exp.c), and the models
 * Extra-P stored in it (extrap_exp_model.c).
 */
#ifndef PERFCAST_INGEST_EXTRAP_EXP_H
#define PERFCAST_INGEST_EXTRAP_EXP_H

#include <jansson.h>
#include <stddef.h>

#include "ingest/extrap.h"
#include "modeling/modeler.h"

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

/* A stored model's "function" object (any of Extra-P's function types:
 * constant, single- and multi-parameter, a SegmentedTerm as a segmented
 * factor, a SegmentedFunction as a two-segment model) as a perfcast model of
 * nparams parameters: the function alone (no quality or interval data), a
 * segmented one's change point in break_*. 0, or -1 with err saying what
 * perfcast cannot hold or read (extrap_exp_model.c). */
int ingest_extrap_exp_model(const json_t *function, int nparams, pmnf_model *out, char *err,
                            size_t errcap);

/* Its text with e's parameter names, as perfcast prints models (Extra-P's
 * syntax, whole; a two-segment model on one line "f for p<=a, g for p>=b"):
 * malloc'ed, or NULL with err. */
char *ingest_extrap_exp_model_text(const json_t *function, const ingest_experiment *e, char *err,
                                   size_t errcap);

#endif
