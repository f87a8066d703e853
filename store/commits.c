/*
 * commits.c — model sets by commit (see commits.h).
 */
#include "store/commits.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SET_COLUMNS                                                                  \
    "id, number, commit_sha, branch, ci_run, "                                       \
    "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "

static void copy_col(PGresult *r, int row, int col, char *dst, size_t cap, int *has)
{
    *has = !PQgetisnull(r, row, col);
    snprintf(dst, cap, "%s", *has ? PQgetvalue(r, row, col) : "");
}

static void read_info(PGresult *r, int row, store_set_info *s)
{
    memset(s, 0, sizeof *s);
    s->id = strtoll(PQgetvalue(r, row, 0), NULL, 10);
    s->number = atoi(PQgetvalue(r, row, 1));
    copy_col(r, row, 2, s->commit, sizeof s->commit, &s->has_commit);
    copy_col(r, row, 3, s->branch, sizeof s->branch, &s->has_branch);
    copy_col(r, row, 4, s->ci_run, sizeof s->ci_run, &s->has_ci_run);
    int dummy;
    copy_col(r, row, 5, s->created_at, sizeof s->created_at, &dummy);
}

int store_set_find(PGconn *c, int64_t exp, const char *ref, store_set_info *out,
                   store_error *err)
{
    char e[24], num[16] = "-1";
    snprintf(e, sizeof e, "%" PRId64, exp);
    size_t n = strlen(ref);
    if (n >= 1 && n <= 9 && strspn(ref, "0123456789") == n)
        snprintf(num, sizeof num, "%s", ref);
    const char *vals[] = {e, ref, num};
    PGresult *r = PQexecParams(c,
                               "SELECT " SET_COLUMNS "FROM model_sets WHERE experiment_id = $1 "
                               "AND (commit_sha = $2 OR number = $3::int) "
                               "ORDER BY (commit_sha IS NOT DISTINCT FROM $2) DESC, number DESC "
                               "LIMIT 1",
                               3, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rc = STORE_OK;
    if (PQntuples(r) == 1)
        read_info(r, 0, out);
    else
        rc = store_error_set(err, STORE_NOT_FOUND,
                             "no model set of commit \"%.100s\"%s in experiment %s", ref,
                             strcmp(num, "-1") ? " nor numbered so" : "", e);
    PQclear(r);
    return rc;
}

int store_sets_list(PGconn *c, int64_t exp, int limit, store_set_info **out, int *n,
                    store_error *err)
{
    *out = NULL;
    *n = 0;
    char e[24], lim[16];
    snprintf(e, sizeof e, "%" PRId64, exp);
    snprintf(lim, sizeof lim, "%d", limit);
    const char *vals[] = {e, lim};
    PGresult *r = PQexecParams(c,
                               "SELECT " SET_COLUMNS "FROM model_sets WHERE experiment_id = $1 "
                               "ORDER BY number DESC LIMIT $2::int",
                               2, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int k = PQntuples(r);
    *out = calloc(k ? (size_t)k : 1, sizeof **out);
    if (!*out) {
        PQclear(r);
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    }
    for (int i = 0; i < k; i++)
        read_info(r, i, &(*out)[i]);
    *n = k;
    PQclear(r);
    return STORE_OK;
}

int store_activity(PGconn *c, int64_t exp, char last_upload[40], int64_t *job, char state[16],
                   store_error *err)
{
    char e[24];
    snprintf(e, sizeof e, "%" PRId64, exp);
    const char *vals[] = {e};
    PGresult *r = PQexecParams(
        c,
        "SELECT (SELECT to_char(max(created_at) AT TIME ZONE 'UTC', "
        "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') FROM profiles WHERE experiment_id = $1), "
        "(SELECT id FROM jobs WHERE experiment_id = $1 ORDER BY id DESC LIMIT 1), "
        "(SELECT state FROM jobs WHERE experiment_id = $1 ORDER BY id DESC LIMIT 1)",
        1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    snprintf(last_upload, 40, "%s", PQgetisnull(r, 0, 0) ? "" : PQgetvalue(r, 0, 0));
    *job = PQgetisnull(r, 0, 1) ? 0 : strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    snprintf(state, 16, "%s", PQgetisnull(r, 0, 2) ? "" : PQgetvalue(r, 0, 2));
    PQclear(r);
    return STORE_OK;
}
