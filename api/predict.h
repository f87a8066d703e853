/*
 * predict.h — what every prediction-bearing answer shares (predict,
 * scaling, bottlenecks, cost, configurations, imbalance): the point a
 * request names, predictions with 95% intervals from the cached models,
 * the epoch composed from its parts, and the extrapolation warning beyond
 * 4x the largest measured value of a parameter (errors grow with the
 * distance, paper 000 §4.3).
 *
 * Epoch = comp + comm + mem (+ imbalance), each part predicted by its own
 * PMNF model, each end of the interval the root sum of squares of the
 * parts' distances to it (their errors taken as independent;
 * modeling/combine.h). The imbalance part (analysis/epoch_imbalance.h) is
 * what the slowest rank adds to the sum of the parts' medians over ranks,
 * so that the epoch predicted is the wall-clock epoch the refit measured
 * (its slowest rank's); sets where the two agree have none. The epoch's own
 * model answers only when a part has no model (or the imbalance was
 * measured but could not be modelled).
 */
#ifndef PERFCAST_API_PREDICT_H
#define PERFCAST_API_PREDICT_H

#include <jansson.h>

#include "analysis/finite_point.h"
#include "api/api.h"

#define PREDICT_EXTRAPOLATION_FACTOR 4.0

typedef struct prediction {
    double value, lo, hi;
    int has_interval; /* 0: lo = hi = value (too few points for an interval) */
} prediction;

prediction predict_part(const cached_part *p, const double *point);
/* 1 when the epoch of these parts is their sum (comp, comm, mem modelled,
 * and the imbalance part modelled or not needed). */
int predict_composed(const cached_part *parts);
/* *composed = 1 when the parts were summed, 0 when the epoch model was used
 * (then parts[3] may be absent too: check parts[3].present). */
prediction predict_epoch(const cached_part *parts, const double *point, int *composed);
/* {"<metric>":v,"interval":[lo,hi]|null,"function":..,"modeler":..,
 * "share":I/epoch,"parts_sum":{"value","interval"}} of the epoch's imbalance
 * part at point (parts_sum: comp + comm + mem, Extra-Deep's Eq. 6 epoch);
 * JSON null where the epoch has none. */
json_t *predict_imbalance_json(const cached_part *parts, const double *point, const char *metric);
/* The prediction's range mapped through a monotone f of T: f at lo and hi,
 * ordered, value f(value). */
prediction predict_map(const prediction *p, double (*f)(double t, const void *arg),
                       const void *arg);

/* The metric's slot in m, or -1. */
int predict_metric_slot(const cached_models *m, const char *metric);
/* The unit of a metric's values: "s" for time, "B" for bytes, "calls" for
 * visits, else the metric's name. */
const char *predict_unit(const char *metric);

/* 1 when a coordinate of point lies beyond 4x the parameter's largest
 * measured value or below a quarter of its smallest (extrapolation_far's
 * rule, modeling/assess.h). */
int predict_beyond(const cached_models *m, const double *point);
/* {"beyond_4x","parameters":[..],"max_measured":{..},"min_measured":{..},
 * "below":[..]}: parameters lists those beyond either way, below those
 * below a quarter of the smallest; the warning itself is extrapolation_far
 * in the answer's "warnings" (predict_warnings_at). */
json_t *predict_extrapolation_json(const cached_models *m, const double *point);

/* Appends to doc's "warnings" (made, empty, when there is none) the coded
 * warnings of the models behind the epoch of metric slot (-1: time) and of
 * their predictions at point (api/warnings.h): comp, comm and mem when the
 * epoch is composed of them, else the epoch's own model; each names its
 * model ("comp time"). With a point where the imbalance part is at least
 * EI_WARN_SHARE of the epoch: epoch_imbalance with the share, and the
 * imbalance model's warnings ("imbalance time"). */
void predict_warnings_at(json_t *doc, const cached_models *m, int slot, const double *point);
/* The same without the models' own warnings: the predictions' only. */
void predict_point_warnings_at(json_t *doc, const cached_models *m, int slot, const double *point);

/* {"<param>":value, ...} */
json_t *predict_point_json(const cached_models *m, const double *point);
/* A number, or null when it is not finite. */
json_t *predict_number(double v);
/* {"value":v,"interval":[lo,hi]|null} */
json_t *predict_json(const prediction *p);

/* The point from query parameters named like the experiment's parameters,
 * every one a finite number > 0. Query names that are neither parameters
 * nor in allowed (NULL-terminated, may be NULL) answer 400. 0, or -1 after
 * answering. */
int predict_query_point(const api_request *req, api_response *resp, const cached_models *m,
                        const char *const *allowed, double *point);
/* A point written "ranks:256,batch:32" (every parameter once) in query
 * parameter `field`. 0, or -1 after answering 400 naming field. */
int predict_parse_at(const char *text, const char *field, api_response *resp,
                     const cached_models *m, double *point);

/* Every query name in allowed (NULL-terminated) or a parameter of m when
 * params_ok; else 400 naming it. 0 / -1. */
int predict_check_query(const api_request *req, api_response *resp, const cached_models *m,
                        const char *const *allowed, int params_ok);

/* An integer query value in [min, max] (dflt when absent). 0 / -1 after 400. */
int predict_query_long(const api_request *req, api_response *resp, const char *name, long min,
                       long max, long dflt, long *out);
/* A finite number > 0 from text; 0 / -1. */
int predict_positive(const char *text, double *out);

/* 0 when the experiment's rank count at point (cached_ranks) is > 0; else
 * -1 after answering 400 naming field (analysis/rank_count.h): speedup,
 * efficiency and core-hours have no meaning where it is not. */
int predict_rank_count(api_response *resp, const cached_models *m, const double *point,
                       const char *field);

/* The coded warning ranks_not_whole (analysis/rank_count.h) of an answer
 * at point, where the experiment's rank count there, or one of its
 * degrees, is not a whole number: its numbers are a what-if. NULL where it
 * can be allocated. Cost, speedups and scaling give it. */
json_t *predict_not_whole_warning(const cached_models *m, const double *point);

/* 0 when the epoch of parts (metric's; where it has a model) and each of
 * its modelled parts predict a finite number at point; else -1 after answering 400
 * (analysis/finite_point.h) naming the field the farthest coordinate came
 * from: fields[i] for parameter i, the parameter itself where fields (or
 * fields[i]) is NULL. An answer there would be of nulls. */
int predict_finite(api_response *resp, const cached_models *m, const cached_part *parts,
                   const double *point, const char *metric, const char *const *fields);
/* The same for the values v[0..n) a handler computed at point (scaling's
 * derived numbers and models): 0 when all are finite, else -1 after the
 * 400. */
int predict_finite_values(api_response *resp, const cached_models *m, const fp_value *v, int n,
                          const double *point, const char *const *fields);

/* Answers depend only on the model set and the request, and model sets never
 * change: a rendered answer is kept in the model cache's pages under a key
 * naming the set, the route, the query as sent and the body. */
#define PREDICT_KEY_MAX 2048
/* The key into key (cap bytes); "" when the request is too long to keep. */
void predict_page_key(const cached_models *m, const api_request *req, char *key, size_t cap);
/* 1 when the answer under key was kept, and has been sent (200). */
int predict_page_send(api_ctx *ctx, const char *key, api_response *resp);
/* Renders doc (the reference is stolen) as the 200 answer, keeping it
 * under key unless key is "". */
void predict_page_store(api_ctx *ctx, const char *key, api_response *resp, json_t *doc);
/* The same for an answer already in text (body malloc'ed, taken; NULL:
 * out of memory, answered 500). Kept and sent without a copy. */
void predict_page_store_text(api_ctx *ctx, const char *key, api_response *resp, char *body,
                             size_t len);

/* The cached models of the experiment in the request path, answering
 * 404/409/503 itself when there are none (NULL). */
const cached_models *predict_models(api_ctx *ctx, const api_request *req,
                                    api_response *resp, int64_t *id);
/* The same, but an experiment with factors may also name none of them:
 * then (none_ok) the models of no combination in particular, whose rows
 * are every combination's (m->levels ""). Statistics, sensitivity and
 * efficiency read so: one combination's rows, or every combination's with
 * each item naming its levels; naming some factors answers 400 as
 * predict_models() does. */
const cached_models *predict_models_or_all(api_ctx *ctx, const api_request *req,
                                           api_response *resp, int64_t *id, int none_ok);
/* predict_models(), then the page kept under the request's key (key[cap],
 * PREDICT_KEY_MAX): NULL when answered already (no models, or the kept
 * page sent); else the models, held, for the handler to compute the page
 * and store it under key. */
const cached_models *predict_models_page(api_ctx *ctx, const api_request *req,
                                         api_response *resp, int64_t *id, char *key, size_t cap);

#endif
