/*
 * fit_request.h — models for points a caller sends, nothing stored: the
 * input of POST /v1/fit and of `perfcast model FILE`.
 *
 * The input is an Extra-P input file (text, JSON, JSON Lines, TaLPas:
 * ingest/extrap.h) or perfcast's own document
 *   {"parameters":["ranks"],"points":[{"point":[2],"values":[1.2,1.3]}],
 *    "callpath":"...","metric":"...","measure":"mean|median","options":{...},
 *    "modeler":"extrap|robust","predict":[[64],[128]]}
 * (at most FIT_MAX_POINTS points of at most FIT_MAX_REPS repetitions, each
 * coordinate and value within ±PMNF_MAX_MAGNITUDE). The answer is
 * {"models":[...]}: one model per (callpath, metric) in the shape of
 * modeling/model_json.h with "callpath" and "metric", and for perfcast's
 * document the predictions at "predict" with their 95% intervals and coded
 * warnings. The robust modeler gets every repetition; the others fit the
 * aggregate (mean or median) of each point, as fit_series_prepare() makes
 * it for the CLI too.
 */
#ifndef PERFCAST_ANALYSIS_FIT_REQUEST_H
#define PERFCAST_ANALYSIS_FIT_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include "analysis/problem.h"
#include "ingest/extrap.h"
#include "modeling/modeler.h"

#define FIT_MAX_POINTS 100000
#define FIT_MAX_REPS 10000
#define FIT_MAX_PREDICT 10000

/* The format of an input: name ("perfcast" or a name of ingest/extrap.h;
 * NULL: recognized from the bytes, a JSON object with "points" and no
 * "measurements" being perfcast's). *is_perfcast 1 for perfcast's
 * document. 0, or -1 with p (415 naming "format"). */
int fit_request_format(const char *name, const char *body, size_t len, ingest_format *fmt,
                       int *is_perfcast, an_problem *p);

/* One series of an Extra-P experiment as pmnf_fit takes it: its
 * coordinates and the aggregate of each point's repetitions, in buffers
 * reused from series to series. */
typedef struct fit_series_buf {
    double *coords, *values, *scratch;
    int cap, rep_cap;
} fit_series_buf;

/* 0, or -1 when out of memory. d points into b. */
int fit_series_prepare(const ingest_experiment *e, const ingest_series *s, pmnf_measure measure,
                       fit_series_buf *b, pmnf_data *d);
void fit_series_buf_free(fit_series_buf *b);
/* The model of series s (fit_series_prepare, then pmnf_fit_reps with every
 * repetition): 0; -1 out of memory; -2 the fit failed, why in err. */
int fit_series_model(pmnf_modeler *m, const ingest_experiment *e, const ingest_series *s,
                     pmnf_measure measure, fit_series_buf *b, pmnf_model *model, char *err,
                     size_t errcap);

/* {"models":[...]} for every series of an Extra-P input, or NULL with p
 * (400 "body" for the reader's error, 400 "points" for a series that
 * cannot be fitted, 500 out of memory). */
json_t *fit_request_extrap(const char *body, size_t len, ingest_format fmt, const pmnf_options *o,
                           an_problem *p);

/* {"models":[one]} for perfcast's document; o holds the defaults (the
 * query's measure and modeler), the document's "measure", "modeler" and
 * "options" are applied over them. NULL with p naming the member. */
json_t *fit_request_perfcast(const json_t *doc, pmnf_options *o, an_problem *p);

#endif
