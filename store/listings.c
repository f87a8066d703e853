/*
 * listings.c — an experiment's uploads and a simulation's runs a page at a
 * time (listings.h).
 */
#include "store/listings.h"

#include <stdlib.h>
#include <string.h>

static int listing_from(PGresult *r, store_listing *out, store_error *err)
{
    int rows = PQntuples(r);
    out->n = 0;
    out->ids = calloc(rows ? (size_t)rows : 1, sizeof *out->ids);
    out->rows = calloc(rows ? (size_t)rows : 1, sizeof *out->rows);
    if (!out->ids || !out->rows) {
        store_listing_free(out);
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < rows; i++) {
        out->ids[i] = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        out->rows[i] = strdup(PQgetvalue(r, i, 1));
        if (!out->rows[i]) {
            store_listing_free(out);
            PQclear(r);
            return store_error_set(err, STORE_INTERNAL, "out of memory");
        }
        out->n++;
    }
    PQclear(r);
    return STORE_OK;
}

int store_profile_list(PGconn *c, int64_t exp, int64_t after, int limit, store_listing *out,
                       store_error *err)
{
    memset(out, 0, sizeof *out);
    PGresult *r = store_page_query(
        c,
        "SELECT id, json_build_object('id', id, 'format', format, 'point', to_json(point), "
        "'repetition', repetition, 'ranks', ranks, 'size', size, 'evaluation', evaluation, "
        "'levels', to_json(levels), 'commit', commit_sha, 'branch', branch, 'ci_run', ci_run, "
        "'job', job_id, 'created_at', to_char(created_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))::text "
        "FROM profiles WHERE experiment_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        exp, after, limit, err);
    return r ? listing_from(r, out, err) : err->code;
}

int store_sim_run_list(PGconn *c, int64_t sim, int64_t after, int limit, store_listing *out,
                       store_error *err)
{
    memset(out, 0, sizeof *out);
    PGresult *r = store_page_query(
        c,
        "SELECT id, json_build_object('id', id, 'simulation', sim_experiment_id, 'profile', "
        "profile_id, 'state', state, 'request', request, 'error', error, 'created_at', "
        "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), "
        "'finished_at', to_char(finished_at AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'))::text "
        "FROM sim_runs WHERE sim_experiment_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        sim, after, limit, err);
    return r ? listing_from(r, out, err) : err->code;
}

void store_listing_free(store_listing *l)
{
    if (l->rows)
        for (int i = 0; i < l->n; i++)
            free(l->rows[i]);
    free(l->rows);
    free(l->ids);
    memset(l, 0, sizeof *l);
}
