/*
 * fit_stream.h — a refit's input read one callpath at a time, so that a
 * refit holds one callpath's rows rather than the whole experiment's.
 *
 * store_fit_stream_open() begins a transaction on c and declares a cursor
 * over the rows of the profiles a job refits (as store_fit_data_load_job
 * selects them). One statement, hence one snapshot, yields first the
 * experiment's frame — the distinct (profile, rank, phase, step, metric) of
 * those rows, from which come the points, the metrics and which steps and
 * ranks each point has (aggregation needs them: a callpath absent from a
 * step counts 0 there) — then the rows themselves ordered by callpath.
 * store_fit_stream_next() fetches batches of FETCH_ROWS rows and hands out
 * one callpath's rows at a time. The database's sort of every row is most of
 * a refit's time, so an experiment of at most STORE_FIT_WHOLE_ROWS rows is
 * first read unsorted in one statement (one snapshot) and placed by callpath
 * here, in memory bounded by that constant; a larger one gives that up after
 * STORE_FIT_WHOLE_ROWS rows and takes the sorted cursor.
 *
 * The transaction stays open for the caller, who writes the new model set on
 * the same connection (store_model_set_begin/append/commit in models.h) and
 * commits; store_fit_stream_abort() rolls it back. Either way
 * store_fit_stream_free() releases what the stream holds.
 */
#ifndef PERFCAST_STORE_FIT_STREAM_H
#define PERFCAST_STORE_FIT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "store/models.h"

typedef struct store_fit_profile {
    int64_t id;
    int point;
    int repetition;
} store_fit_profile;

typedef struct store_fit_stream {
    PGconn *c;
    /* points, evaluation, levels, callpaths, categories and metrics of the
     * whole input; rows: the current callpath's rows (point order not
     * guaranteed) */
    store_fit_data d;
    int callpath;            /* index of the callpath whose rows d.rows holds */
    store_fit_row *frame;    /* callpath -1, value 0; ascending point */
    size_t nframe;
    store_fit_profile *profiles; /* ascending id */
    size_t nprofiles;
    int64_t *callpath_ids;   /* ascending, parallel to d.callpaths */
    size_t rows_cap;
    void *batch;             /* the current FETCH's PGresult */
    int at, nbatch;
    int exhausted;           /* the cursor has no more rows */
    /* an experiment of at most STORE_FIT_WHOLE_ROWS rows is read in one
     * unsorted pass and handed out from here, callpath after callpath */
    int whole;
    store_fit_row *all;      /* ascending callpath */
    size_t *cp_at;           /* ncallpaths + 1 offsets into all */
    int next_cp;
} store_fit_stream;

/* Rows of the largest experiment read whole by default (32 bytes each,
 * twice while they are placed by callpath); larger ones are sorted by the
 * database. */
#define STORE_FIT_WHOLE_ROWS 1000000

/* BEGIN, the cursor, the frame, the callpaths; read whole when the input
 * has at most whole_rows rows (STORE_FIT_WHOLE_ROWS by default). On error
 * nothing is left open (the transaction is rolled back) and s needs no
 * free. */
int store_fit_stream_open(PGconn *c, int64_t exp, int64_t job, int nparams, size_t whole_rows,
                          store_fit_stream *s, store_error *err);
/* One row as an earlier whole pass read it (store_fit_cache). */
typedef struct store_fit_cached_row {
    int64_t profile_id, callpath_id;
    int rank, phase, step, metric; /* metric: index into the cache's metrics */
    double value;
} store_fit_cached_row;

/* The rows of the profiles earlier whole passes read, kept by the caller
 * across opens (zeroed before the first): a refit that starts again on a
 * newer snapshot reads from the database only the rows of profiles it has
 * not read yet. A profile's rows never change once committed (they are
 * inserted with it and go with it), so the rows are those the new snapshot
 * holds; which profiles there are, their points, levels and repetitions
 * come from the new snapshot. Rows of a pass that did not complete are not
 * kept. */
typedef struct store_fit_cache {
    int64_t *ids;                 /* profiles read completely */
    size_t nids, ids_cap;
    store_fit_cached_row *rows;   /* their rows */
    size_t nrows, rows_cap;
    char **metrics;
    int nmetrics;
} store_fit_cache;

void store_fit_cache_free(store_fit_cache *c);

/* store_fit_stream_open with a cache (may be NULL): the whole pass reads
 * only the rows of profiles not in it, takes the others' from it, and adds
 * the ones it read. */
int store_fit_stream_open_cached(PGconn *c, int64_t exp, int64_t job, int nparams,
                                 size_t whole_rows, store_fit_cache *cache, store_fit_stream *s,
                                 store_error *err);
/* The next callpath's rows into s->d.rows (s->d.nrows, s->callpath): 1, or
 * 0 when there are no more, or -1 with err filled. */
int store_fit_stream_next(store_fit_stream *s, store_error *err);
/* Rolls the transaction back (after an error or cancellation). */
void store_fit_stream_abort(store_fit_stream *s);
void store_fit_stream_free(store_fit_stream *s);

#endif
