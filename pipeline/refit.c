/*
 * refit.c — a job's work: all stored profiles of an experiment -> a new model
 * set (see refit.h), the product's core pipeline.
 *
 *   1. load the experiment and stream the normalized rows of its profiles
 *      one callpath at a time (store/fit_stream.h): first the frame (which
 *      points, metrics, ranks and steps there are), then each callpath's
 *      rows; steps 2-5 run per callpath and its measurements and models go
 *      to the database in batches, so a refit holds one callpath's data
 *      (and the application sums) rather than the experiment's;
 *   2. per coordinate: aggregate (medians over steps, ranks, repetitions;
 *      warm-up excluded; phases apart) — modeling/aggregate.c;
 *   3. per coordinate: steps per epoch n_t, n_v from the training set-up,
 *      D_t, D_v, B, G and M evaluated for the coordinate (Extra-Deep Eq. 2-3,
 *      analysis/training.h);
 *   4. per callpath and metric: the per-epoch value n_t·V_train + n_v·V_val
 *      ('epoch') and, kept apart, the work between steps n_t·V_between
 *      ('between'); per metric the application values comp, comm, mem (sums
 *      over the category's callpaths, Eq. 8-10, the work between steps
 *      included: n_t·V_between) and epoch = comp+comm+mem, and 'between', the
 *      part of them done between steps, shown on its own;
 *      every measurement also carries its load-imbalance factor per
 *      repetition (max/mean over the ranks' values of that repetition, of the
 *      same sums per rank);
 *   5. fit every series measured at enough coordinates (5 values of every
 *      parameter, Extra-P's minimum) with one shared modeler; a strong-scaling
 *      experiment's modeler also tries negative exponents; the modeler is the
 *      one the job asked for, else the experiment's ("modeler" of its spec,
 *      Extra-P's when absent); the robust one gets every repetition;
 *   6. write measurements and models as one new model set, in the
 *      transaction the rows are read in: the set is seen at its COMMIT, or
 *      never (failure, cancellation).
 *
 * A claimed job takes over the experiment's queued job when one appears
 * while it runs (uploads that came meanwhile): the set it is computing would
 * be stale at its COMMIT, and the queued job would wait for it and then
 * refit everything again. Between callpaths (every CHECK_SECONDS) and before
 * the set is published, the refit looks for a queued job; when there is
 * one it rolls back, makes the queued job ride with it (store_job_absorb,
 * which waits for the uploads joining it to commit) and starts again on a
 * new snapshot, which holds those uploads, reading from the database only
 * the rows of profiles it has not read yet (store_fit_cache: a profile's
 * rows never change); the set it publishes marks both done. It does so
 * only within PERFCAST_REFIT_ABSORB_SECONDS (default ABSORB_SECONDS) of
 * its claim, so that a steady stream of uploads delays a job by at most
 * that much plus one refit.
 *
 * An experiment with categorical factors is refitted per level combination:
 * steps 2-5 run on the profiles of each combination alone, and every
 * measurement and model carries its levels (experiments without factors have
 * one combination, '{}').
 *
 * Coordinates of evaluation-only uploads (Extra-Deep §4's P+) go through
 * steps 2-4 like the others but write no measurements and are not fitted:
 * each model carries, in its document's "accuracy", the percentage error at
 * every modelling point and at every evaluation point and the medians of
 * both (GET /v1/experiments/{id}/accuracy).
 *
 * The steps are files of their own around one state (refit_internal.h):
 * refit_aggregate.c the set-up and steps 2-4, refit_fit.c step 5,
 * refit_group.c one level combination callpath by callpath (its
 * measurements and models written in batches); this file opens the stream
 * (step 1), runs the combinations, publishes the set (step 6) and takes
 * over queued jobs.
 */
#include "pipeline/refit.h"
#include "pipeline/refit_internal.h"

#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "modeling/model_json.h"
#include "analysis/training.h"
#include "ingest/profile.h"
#include "modeling/accuracy.h"
#include "modeling/aggregate.h"
#include "modeling/expr.h"
#include "modeling/imbalance.h"
#include "modeling/modeler.h"
#include "store/experiments.h"
#include "store/job_modeler.h"
#include "store/fit_stream.h"
#include "store/models.h"


/* ---- the arena of one refit ------------------------------------------------ */

void *refit_arena_keep(arena *a, void *p)
{
    if (!p)
        return NULL;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        void **v = realloc(a->ptrs, sizeof(void *) * cap);
        if (!v) {
            free(p);
            return NULL;
        }
        a->ptrs = v;
        a->cap = cap;
    }
    a->ptrs[a->n++] = p;
    return p;
}

void refit_arena_free(arena *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->ptrs[i]);
    free(a->ptrs);
    memset(a, 0, sizeof *a);
}

/* Store errors are worth a retry unless the data itself is refused (an
 * experiment deleted meanwhile: NOT_FOUND; invalid values: INVALID). */
static int store_outcome(const store_error *se, char *err, size_t errcap)
{
    snprintf(err, errcap, "%s", se->msg);
    return se->code == STORE_NOT_FOUND || se->code == STORE_INVALID ? REFIT_FAILED
                                                                     : REFIT_TRANSIENT;
}

/* The job's modeler, else the experiment's, else Extra-P's. */
static int choose_modeler(PGconn *c, const store_experiment *e, int64_t job_id,
                          pmnf_modeler_kind *kind, store_error *se)
{
    char asked[16];
    if (store_job_modeler(c, job_id, asked, sizeof asked, se))
        return -1;
    *kind = PMNF_MODELER_EXTRAP;
    if (pmnf_modeler_parse(asked, kind) < 0)
        pmnf_modeler_parse(json_string_value(json_object_get(e->spec, "modeler")), kind);
    return 0;
}

int refit_run(store *s, int64_t experiment_id, int64_t job_id, int64_t *model_set_id, char *err,
              size_t errcap)
{
    return refit_run_cancellable(s, experiment_id, job_id, model_set_id, err, errcap, NULL);
}

static size_t whole_rows(void)
{
    const char *v = getenv("PERFCAST_REFIT_WHOLE_ROWS");
    char *end;
    unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;
    return v && *v && !*end ? (size_t)n : STORE_FIT_WHOLE_ROWS;
}

/* How often a running refit looks for a queued job of its experiment, and
 * for how long after its claim it takes one over (see the top). */
#define CHECK_SECONDS 0.02
#define ABSORB_SECONDS 10.0
#define REFIT_RESTART 1 /* run_stream: a queued job is waiting, start again */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double absorb_seconds(void)
{
    const char *v = getenv("PERFCAST_REFIT_ABSORB_SECONDS");
    char *end;
    double x = v && *v ? strtod(v, &end) : ABSORB_SECONDS;
    return v && *v && !*end && x >= 0 ? x : ABSORB_SECONDS;
}

/* Whether a claimed refit should start again for a queued job: within its
 * take-over window, at most every CHECK_SECONDS unless final (before the
 * set is published). A failed look is no reason to stop: 0. */
typedef struct refit_watch {
    PGconn *c;
    const store_job_claim *claim; /* NULL: not a claimed job, never */
    double until;                 /* monotonic: no take-over after this */
    double next;                  /* the next look */
} refit_watch;

static int newer_waiting(refit_watch *w, int final)
{
    if (!w || !w->claim)
        return 0;
    double t = mono_now();
    if (t > w->until || (!final && t < w->next))
        return 0;
    w->next = t + CHECK_SECONDS;
    store_error se = {0};
    int yes = 0;
    return store_job_newer_queued(w->c, w->claim, &se, &yes) == STORE_OK && yes;
}

/* Pending measurements and models are written once they reach this many:
 * the batch bounds the memory they hold (with their arena) and one
 * statement per kind and batch keeps the round trips few. */
#define REFIT_BATCH 4096

/* Tells the caller the step about to run (pipeline/refit.h). */
static void note(const refit_progress *p, const char *step, const char *callpath)
{
    if (p && p->note)
        p->note(p->arg, step, callpath);
}

/* Steps 1-6 on connection c (the stream's transaction). */
static int run_stream(PGconn *c, const store_experiment *e, int64_t experiment_id, int64_t job_id,
                      const store_job_claim *claim, const char *worker,
                      const refit_setup *setup, const _Atomic int *cancel, refit_watch *watch,
                      store_fit_cache *cache, const refit_progress *progress,
                      int64_t *model_set_id, char *err, size_t errcap)
{
    refit_run_state r;
    memset(&r, 0, sizeof r);
    store_error se = {0};
    int64_t set_id = 0;
    int number = 0;
    note(progress, REFIT_STEP_READ, NULL);
    if (store_fit_stream_open_cached(c, experiment_id, job_id, e->nparams, whole_rows(), cache,
                                     &r.fs, &se))
        return store_outcome(&se, err, errcap);
    int rc = refit_groups_init(&r, e, setup, cancel, err, errcap);
    if (rc == REFIT_OK && store_model_set_stage(c, &se))
        rc = store_outcome(&se, err, errcap);
    int got;
    while (rc == REFIT_OK && (got = store_fit_stream_next(&r.fs, &se)) != 0) {
        if (got < 0) {
            rc = store_outcome(&se, err, errcap);
            break;
        }
        if (cancel && *cancel) { /* deleted meanwhile: stop soon */
            rc = REFIT_CANCELLED;
            break;
        }
        if (newer_waiting(watch, 0)) {
            rc = REFIT_RESTART;
            break;
        }
        note(progress, REFIT_STEP_CALLPATH, r.fs.d.callpaths[r.fs.callpath]);
        if (refit_run_callpath(&r) < 0) {
            snprintf(err, errcap, "out of memory");
            rc = REFIT_TRANSIENT;
        } else if (r.out.nmeas + r.out.nmodels >= REFIT_BATCH &&
                   refit_flush_out(c, e->nparams, &r.out, &se)) {
            rc = store_outcome(&se, err, errcap);
        }
    }
    if (rc == REFIT_OK)
        note(progress, REFIT_STEP_APPLICATION, NULL);
    if (rc == REFIT_OK && refit_run_application(&r) < 0) {
        snprintf(err, errcap, "out of memory");
        rc = REFIT_TRANSIENT;
    }
    if (rc == REFIT_OK && cancel && *cancel)
        rc = REFIT_CANCELLED;
    if (rc == REFIT_OK && newer_waiting(watch, 1))
        rc = REFIT_RESTART;
    if (rc == REFIT_OK)
        note(progress, REFIT_STEP_WRITE, NULL);
    if (rc == REFIT_OK && (refit_flush_out(c, e->nparams, &r.out, &se) ||
                           store_model_set_publish(c, experiment_id, job_id, claim, worker,
                                                   &set_id, &number, &se))) {
        /* the job went with its experiment while the set was written, or
         * is no longer ours */
        rc = (se.code == STORE_NOT_FOUND || se.code == STORE_CONFLICT) && !strcmp(se.field, "job")
                 ? REFIT_CANCELLED
                 : store_outcome(&se, err, errcap);
    }
    if (rc != REFIT_OK)
        store_fit_stream_abort(&r.fs);
    else
        *model_set_id = set_id;
    refit_run_free(&r);
    return rc;
}

/* Whether job id no longer exists (deleted with its experiment). */
static int job_gone(PGconn *c, int64_t id)
{
    store_job j;
    store_error se = {0};
    int rc = store_job_get(c, id, &j, &se);
    if (rc == STORE_OK)
        store_job_free(&j);
    return rc == STORE_NOT_FOUND;
}

/* refit_run_cancellable, and with a claim refit_run_job. */
static int run(store *s, int64_t experiment_id, int64_t job_id, const store_job_claim *claim,
               const char *worker, int64_t *model_set_id, char *err, size_t errcap,
               const _Atomic int *cancel, const refit_progress *progress)
{
    store_error se = {0};
    PGconn *c = store_acquire(s, &se);
    if (!c)
        return store_outcome(&se, err, errcap);
    store_experiment e;
    if (store_experiment_get(c, experiment_id, &e, &se)) {
        store_release(s, c);
        return store_outcome(&se, err, errcap);
    }
    refit_setup setup;
    int rc = refit_setup_from_experiment(&e, &setup, err, errcap) < 0 ? REFIT_FAILED : REFIT_OK;
    if (rc == REFIT_OK && choose_modeler(c, &e, job_id, &setup.modeler, &se))
        rc = store_outcome(&se, err, errcap);
    refit_watch watch = {c, claim, mono_now() + absorb_seconds(), 0};
    /* a claimed refit that starts again reads only the profiles it has not
     * read yet (store_fit_cache) */
    store_fit_cache cache = {0};
    while (rc == REFIT_OK) {
        rc = run_stream(c, &e, experiment_id, job_id, claim, worker, &setup, cancel, &watch,
                        claim ? &cache : NULL, progress, model_set_id, err, errcap);
        if (rc != REFIT_RESTART)
            break;
        /* rolled back: take the queued job over, then again from the start */
        int taken = 0;
        rc = store_job_absorb(c, claim, worker, &taken, &se) ? store_outcome(&se, err, errcap)
                                                             : REFIT_OK;
    }
    store_fit_cache_free(&cache);
    if ((rc == REFIT_FAILED || rc == REFIT_TRANSIENT) && job_id > 0 && job_gone(c, job_id))
        rc = REFIT_CANCELLED; /* what failed was reading what a deletion took away */
    if (rc == REFIT_CANCELLED)
        snprintf(err, errcap, "cancelled: the job is gone (its experiment deleted?)");
    store_release(s, c);
    store_experiment_free(&e);
    return rc;
}

int refit_run_cancellable(store *s, int64_t experiment_id, int64_t job_id,
                          int64_t *model_set_id, char *err, size_t errcap,
                          const _Atomic int *cancel)
{
    return run(s, experiment_id, job_id, NULL, NULL, model_set_id, err, errcap, cancel, NULL);
}

int refit_run_job(store *s, const store_job_claim *claim, const char *worker,
                  int64_t *model_set_id, char *err, size_t errcap, const _Atomic int *cancel,
                  const refit_progress *progress)
{
    return run(s, claim->experiment_id, claim->job_id, claim, worker, model_set_id, err, errcap,
               cancel, progress);
}
