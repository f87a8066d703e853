/*
 * listings.h — pages of what was uploaded or run, for the API's listing
 * routes and the dashboard: an experiment's uploads (profiles) and a
 * simulation's runs, oldest first, a page at a time after a cursor id.
 * Each row comes back as one JSON object text built by PostgreSQL (the
 * columns a listing shows, never the raw bytes or a run's result), so the
 * handler only parses and forwards it. Each function takes a connection
 * from store_acquire().
 */
#ifndef PERFCAST_STORE_LISTINGS_H
#define PERFCAST_STORE_LISTINGS_H

#include <stdint.h>

#include "store/db.h"

typedef struct store_listing {
    int n;
    int64_t *ids;  /* n */
    char **rows;   /* n JSON object texts */
} store_listing;

/* Uploads of experiment exp with id > after, at most limit: id, format,
 * point (an array in the experiment's parameter order), repetition, ranks,
 * size, evaluation, levels, commit, branch, ci_run, job, created_at. */
int store_profile_list(PGconn *c, int64_t exp, int64_t after, int limit, store_listing *out,
                       store_error *err);
/* Runs of simulation sim with id > after, at most limit: id, profile,
 * state, request, error, created_at, finished_at. */
int store_sim_run_list(PGconn *c, int64_t sim, int64_t after, int limit, store_listing *out,
                       store_error *err);
void store_listing_free(store_listing *l);

#endif
