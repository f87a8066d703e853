/*
 * models.h — what refits read and write, and what the model endpoints read:
 * the normalized rows of all profiles of an experiment (input of a refit),
 * numbered model sets with their aggregated measurements and models (output
 * of a refit, written in one transaction), and filtered, paginated reads of
 * the latest set.
 */
#ifndef PERFCAST_STORE_MODELS_H
#define PERFCAST_STORE_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/measurement.h"
#include "store/db.h"
#include "store/jobs.h"

/* ---- input of a refit ---------------------------------------------------- */

/* store_fit_row, store_fit_data: the rows of an experiment's profiles as the
 * refit and the analyses read them (analysis/measurement.h) */

/* All rows of all profiles of experiment exp (nparams parameters); the
 * points of fitting uploads first, then those of evaluation-only ones. */
int store_fit_data_load(PGconn *c, int64_t exp, int nparams, store_fit_data *out, store_error *err);
/* The rows of the profiles of job's commit (model sets per commit; the
 * profiles without a commit when the job has none or job is 0). */
int store_fit_data_load_job(PGconn *c, int64_t exp, int64_t job, int nparams,
                            store_fit_data *out, store_error *err);
void store_fit_data_free(store_fit_data *d);
/* The index of metric name in d->metrics, appended when new; -1 when out
 * of memory. */
int store_fit_data_metric(store_fit_data *d, const char *name);

/* ---- output of a refit --------------------------------------------------- */

typedef struct store_measurement {
    const double *point;    /* nparams */
    const char *level;      /* "callpath" | "application" */
    const char *name;
    const char *category;   /* may be NULL (application epoch) */
    const char *metric;
    const char *phase;      /* "train" | "validation" | "between" | "epoch" */
    double value;
    int nreps;
    const double *reps;
    int nranks;
    const double *ranks;
    const int *rank_ids;
    const double *lif_reps; /* nreps load-imbalance factors (max/mean over ranks), or NULL */
    const char *levels;     /* text[] literal of the factor levels; NULL: '{}' */
} store_measurement;

typedef struct store_model {
    const char *level;
    const char *name;
    const char *category;   /* may be NULL */
    const char *metric;
    const char *phase;      /* "epoch" | "between" */
    const char *function;   /* Extra-P syntax, NULL when not modeled */
    const char *model_json; /* the model's data as JSON text, NULL when not modeled */
    double growth_poly, growth_log;
    int points;
    const char *reason;     /* why not modeled, NULL when modeled */
    const char *levels;     /* text[] literal of the factor levels; NULL: '{}' */
} store_model;

/* One transaction: a new model set (number = previous + 1) for exp, its
 * measurements and models. */
int store_model_set_write(PGconn *c, int64_t exp, int64_t job, int nparams,
                          const store_measurement *m, size_t nm, const store_model *models,
                          size_t nmodels, int64_t *set_id, int *number, store_error *err);

/* The same in steps. Direct, inside a transaction the caller began: begin
 * takes the set's number (serialized per experiment until COMMIT) and
 * inserts the set; append adds measurements and models to it; commit
 * notifies the servers' caches and commits (rolled back on failure).
 *
 * Staged, for a writer that sends a set in batches over a long transaction
 * (server/refit.c): stage creates temporary tables (once per connection;
 * emptied at every transaction's end); append with set_id 0 adds to them
 * (COPY, store/model_copy.h); publish then
 * locks the job (when > 0; gone -> STORE_NOT_FOUND with field "job"),
 * inserts the set, moves the staged rows into it in their order, with a
 * claim (may be NULL) records the job done for the set (store_job_done; a
 * claim no longer held -> its STORE_CONFLICT, field "job") and commits. Nothing references the experiment until publish, so deleting it
 * meanwhile is not held up by the refit. Until the commit nothing of the
 * set is seen. */
int store_model_set_begin(PGconn *c, int64_t exp, int64_t job, int64_t *set_id, int *number,
                          store_error *err);
int store_model_set_append(PGconn *c, int64_t set_id, int nparams, const store_measurement *m,
                           size_t nm, const store_model *models, size_t nmodels,
                           store_error *err);
int store_model_set_stage(PGconn *c, store_error *err);
int store_model_set_publish(PGconn *c, int64_t exp, int64_t job, const store_job_claim *claim,
                            const char *worker, int64_t *set_id, int *number, store_error *err);
int store_model_set_commit(PGconn *c, int64_t exp, store_error *err);

/* ---- reads ------------------------------------------------------------------ */

/* Whether model set set_id belongs to experiment exp (a cursor names a set
 * by id): STORE_OK with its number within exp (when number is not NULL),
 * or STORE_NOT_FOUND. */
int store_model_set_of(PGconn *c, int64_t set_id, int64_t exp, int *number, store_error *err);

/* The newest model set of exp; STORE_NOT_FOUND when there is none yet. */
int store_model_set_latest(PGconn *c, int64_t exp, int64_t *set_id, int *number, char *created_at,
                           size_t created_cap, store_error *err);

typedef struct store_model_filter {
    const char *metric;   /* NULL: any */
    const char *level;    /* NULL: any */
    const char *category; /* NULL: any */
    const char *phase;    /* NULL: any */
    const char *name;     /* NULL: any */
    const char *levels;   /* text[] literal of the factor levels; NULL: any */
    int by_growth;        /* order by leading exponents (desc), else by level, name */
    long offset;
    int limit;
} store_model_filter;

/* store_model_row: a stored model as the analyses read it (analysis/measurement.h) */

int store_models_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                      store_model_row **out, int *n, store_error *err);
void store_model_rows_free(store_model_row *v, int n);

/* store_measurement_row: a measurement as the analyses read it (analysis/measurement.h) */

int store_measurements_read(PGconn *c, int64_t set_id, const store_model_filter *f,
                            store_measurement_row **out, int *n, store_error *err);
void store_measurement_rows_free(store_measurement_row *v, int n);

#endif
