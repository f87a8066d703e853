/*
 * handlers.h — every request handler, by file. A new resource is a new
 * api/<resource>.c with its handlers declared here, one line per route in
 * api/router.c's table, and its paths in api/openapi.json.
 */
#ifndef PERFCAST_API_HANDLERS_H
#define PERFCAST_API_HANDLERS_H

#include <stdio.h>

#include "api/api.h"
#include "pipeline/run_loop.h"
#include "store/tokens.h"

/* ops.c: operating endpoints */
void api_health(api_ctx *ctx, api_request *req, api_response *resp);
void api_ready(api_ctx *ctx, api_request *req, api_response *resp);
void api_metrics_get(api_ctx *ctx, api_request *req, api_response *resp);
void api_openapi(api_ctx *ctx, api_request *req, api_response *resp);

/* experiments.c */
void api_experiment_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_experiment_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_experiment_get(api_ctx *ctx, api_request *req, api_response *resp);
void api_experiment_delete(api_ctx *ctx, api_request *req, api_response *resp);

/* profiles.c */
void api_profile_upload(api_ctx *ctx, api_request *req, api_response *resp);
/* GET .../export?format=extra-p: the newest model set's measurements as .extra-p (export.c) */
void api_experiment_export(api_ctx *ctx, api_request *req, api_response *resp);
void api_profile_delete(api_ctx *ctx, api_request *req, api_response *resp);

/* jobs.c; api_jobs_metrics is a /metrics collector (api/metrics.h) over a store */
void api_job_get(api_ctx *ctx, api_request *req, api_response *resp);
void api_experiment_refit(api_ctx *ctx, api_request *req, api_response *resp);
void api_jobs_metrics(void *db, FILE *out);

/* models.c: what refits produced */
void api_measurements_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_models_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_predict(api_ctx *ctx, api_request *req, api_response *resp);

/* analyses over the newest models (api/predict.h, api/analysis_data.h) */
void api_scaling(api_ctx *ctx, api_request *req, api_response *resp);        /* scaling.c */
void api_bottlenecks(api_ctx *ctx, api_request *req, api_response *resp);    /* bottlenecks.c */
void api_cost(api_ctx *ctx, api_request *req, api_response *resp);           /* cost.c */
void api_configurations(api_ctx *ctx, api_request *req, api_response *resp); /* configurations.c */
void api_imbalance(api_ctx *ctx, api_request *req, api_response *resp);      /* imbalance.c */
void api_speedups(api_ctx *ctx, api_request *req, api_response *resp);      /* speedups.c */
void api_accuracy(api_ctx *ctx, api_request *req, api_response *resp);      /* accuracy.c */
void api_iterations(api_ctx *ctx, api_request *req, api_response *resp);    /* iterations.c */

/* sweeps.c: repetition statistics; sensitivity.c: Taguchi sensitivity; sweep_plan.c:
 * sweep plans; efficiency.c: scaling efficiency */
void api_statistics(api_ctx *ctx, api_request *req, api_response *resp);
void api_sensitivity(api_ctx *ctx, api_request *req, api_response *resp);
void api_sweep_plan(api_ctx *ctx, api_request *req, api_response *resp);
void api_efficiency(api_ctx *ctx, api_request *req, api_response *resp);
void api_advice(api_ctx *ctx, api_request *req, api_response *resp); /* advice.c */

/* model sets per commit: history (model_sets.c) and comparison (regressions.c) */
void api_model_sets_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_regressions(api_ctx *ctx, api_request *req, api_response *resp);
/* curve.c: one model along one parameter, for plots */
void api_curve(api_ctx *ctx, api_request *req, api_response *resp);

/* web.c: the dashboard's static files under / */
void api_web(api_ctx *ctx, api_request *req, api_response *resp);

/* tokens.c: the caller's tenant's tokens (admin scope) */
void api_token_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_token_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_token_revoke(api_ctx *ctx, api_request *req, api_response *resp);

/* authorize.c: who asks, may they, and is the {id} theirs (api_dispatch
 * calls it for every route with a scope). 0 go on, -1 resp is the answer. */
int api_authorize(api_ctx *ctx, const api_route *r, api_request *req, api_response *resp);

/* iteration_http.c: per-iteration analysis of uploaded Kineto traces, overhead sets */
void api_overheads_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_overheads_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_overheads_get(api_ctx *ctx, api_request *req, api_response *resp);
void api_overheads_delete(api_ctx *ctx, api_request *req, api_response *resp);
void api_devices_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_devices_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_devices_delete(api_ctx *ctx, api_request *req, api_response *resp);
void api_profile_iteration(api_ctx *ctx, api_request *req, api_response *resp);
void api_profile_breakdown(api_ctx *ctx, api_request *req, api_response *resp);
void api_iteration_model(api_ctx *ctx, api_request *req, api_response *resp);
/* simulations.c: the asynchronous-SGD simulator (simulate/) */
void api_sim_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_get(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_delete(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_profile_upload(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_run_create(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_run_get(api_ctx *ctx, api_request *req, api_response *resp);
/* listings of uploads and runs (listings.c) */
void api_profiles_list(api_ctx *ctx, api_request *req, api_response *resp);
void api_sim_runs_list(api_ctx *ctx, api_request *req, api_response *resp);
/* The queued simulation runs, as server/workers.c runs them
 * (pipeline/run_loop.h) when no refit is waiting. */
extern const run_loop_kind api_sim_runs;
/* GET /v1/experiments/{id}/analyses/{run}: a per-iteration analysis run by
 * the job workers (api/iteration_http.c). */
void api_analysis_get(api_ctx *ctx, api_request *req, api_response *resp);
/* The queued per-iteration analyses (pipeline/run_loop.h). */
extern const run_loop_kind api_iteration_runs;
/* POST .../configurations and .../advice (api/configurations.c,
 * api/advice.c) answered here (direct) or, when large, queued for the job
 * workers; GET /v1/experiments/{id}/searches/{run} a queued one
 * (api/search_runs.c). ?job=auto|always into *always: 0, or -1 after a 400. */
void api_configurations_search(api_ctx *ctx, api_request *req, api_response *resp, int direct);
void api_advice_search(api_ctx *ctx, api_request *req, api_response *resp, int direct);
int api_search_job_param(const api_request *req, api_response *resp, int *always);
/* Stores the request (its query but job and strict, and body) queued and
 * answers 202 with the run and its Location. */
void api_search_queue(api_ctx *ctx, const api_request *req, api_response *resp, int64_t exp,
                      const char *kind, const json_t *body);
void api_search_get(api_ctx *ctx, api_request *req, api_response *resp);
/* The queued searches (pipeline/run_loop.h); a test build's hook is called
 * with "search-request" and the run's stored request, then "search-run" and
 * its kind, once claimed. */
extern const run_loop_kind api_search_runs;

/* fit.c: stateless fitting */
void api_fit(api_ctx *ctx, api_request *req, api_response *resp);

#endif
