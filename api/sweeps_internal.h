/*
 * sweeps_internal.h — what the measurement-trust answers share (statistics
 * in api/sweeps.c, sensitivity in api/sensitivity.c, efficiency in
 * api/efficiency.c, the sweep plan in api/sweep_plan.c): the measurement
 * rows kept per model set and filter, the filter of a query, the warnings
 * of too-noisy points, and answers written without a Jansson tree. Not for
 * use outside them.
 */
#ifndef PERFCAST_API_SWEEPS_INTERNAL_H
#define PERFCAST_API_SWEEPS_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "api/api.h"
#include "api/json_buf.h"
#include "api/predict.h"
#include "store/models.h"
#include "sweep/sweep_plan.h"

#define STATS_LIMIT_DEFAULT 1000
#define STATS_LIMIT_MAX 100000
#define PLAN_RUNS_MAX SWEEP_MAX_RUNS /* sweep/sweep_plan.h: the CLI's limit too */
#define PLAN_PAGE_DEFAULT 1000 /* runs a plan's answer lists: items and commands */
#define PLAN_PAGE_MAX 1000
#define KEPT_TEXT_MAX (16u << 20) /* statistics text kept per model set and filter, at most */

/* The measurements statistics and sensitivity rest on, kept per model set
 * and filter (a model set never changes): rows is the caller's own copy of
 * the row array (to sort at will), the rows' contents are shared read-only. */
typedef struct kept_rows {
    store_measurement_row *rows;
    int n;
    const char *text;                /* with_text: the rows' statistics items up to */
    const size_t *at;                /* their repetitions_needed, row i's at [at[i], at[i+1]) */
    const cache_blob *blob;          /* the kept rows, or NULL: */
    struct kept_rowset *own;         /* rows read for this answer alone, */
    const cache_blob *source;        /* borrowing from these epoch rows (or NULL) */
} kept_rows;

typedef struct kept_rowset {
    store_measurement_row *rows;
    int n;
    char *text;
    size_t *at;
    int borrowed; /* the rows' fields are those of the set's epoch rows (rows_from_epoch) */
} kept_rowset;

/* api/sweeps.c */
char *sweeps_answer_text(json_t *head, const char *key, jbuf *bulk, json_t *tail, size_t *len);
int sweeps_filter_from_query(const api_request *req, api_response *resp, store_model_filter *f);
json_t *sweeps_interval(double lo, double hi);
void sweeps_kept_rows_release(api_ctx *ctx, kept_rows *k);
void sweeps_levels_head(json_t *head, const cached_models *m, const api_request *req);
void sweeps_levels_member(jbuf *b, const cached_models *m, const char *levels);
void sweeps_point_text(jbuf *b, const cached_models *m, const double *point);
store_measurement_row *sweeps_read_rows(api_ctx *ctx, const cached_models *m,
                                        const store_model_filter *f, int *n,
                                        api_response *resp);
int sweeps_read_rows_kept(api_ctx *ctx, const cached_models *m, const store_model_filter *f,
                          int with_text, kept_rows *k, api_response *resp);
void sweeps_row_label(const cached_models *m, const store_measurement_row *r, char *buf,
                      size_t cap);
void sweeps_warm_note(api_ctx *ctx, const api_request *req, const cached_models *m, char kind,
                      const kept_rows *k);
int sweeps_warm_wait(api_ctx *ctx, const api_request *req, api_response *resp);
void sweeps_sensitivity_answer(api_ctx *ctx, api_request *req, api_response *resp);

#endif
