/*
 * model_levels.c — the level combinations a model set has models of (see
 * model_levels.h).
 */
#include "store/model_levels.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_model_levels_read(PGconn *c, int64_t set_id, char ***out, int *n, store_error *err)
{
    *out = NULL;
    *n = 0;
    char set[24];
    snprintf(set, sizeof set, "%" PRId64, set_id);
    const char *vals[] = {set};
    PGresult *r = PQexecParams(c,
                               "SELECT array_to_json(levels)::text FROM models "
                               "WHERE model_set_id = $1 AND level = 'application' "
                               "AND metric = 'time' AND phase = 'epoch' "
                               "AND function IS NOT NULL GROUP BY levels ORDER BY levels",
                               1, NULL, vals, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return store_fail(c, r, err);
    int rows = PQntuples(r);
    char **v = calloc((size_t)(rows ? rows : 1), sizeof *v);
    for (int i = 0; v && i < rows; i++) {
        v[i] = strdup(PQgetvalue(r, i, 0));
        if (!v[i]) {
            store_model_levels_free(v, i);
            v = NULL;
        }
    }
    PQclear(r);
    if (!v)
        return store_error_set(err, STORE_INTERNAL, "out of memory");
    *out = v;
    *n = rows;
    return STORE_OK;
}

void store_model_levels_free(char **v, int n)
{
    for (int i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}
