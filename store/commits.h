/*
 * commits.h — model sets by the commit they model: finding the set a
 * reference names (a commit, or a model set's number within the
 * experiment) and the experiment's history of sets with their commits.
 * Written by refits (store/models.c takes the commit of the set's job).
 */
#ifndef PERFCAST_STORE_COMMITS_H
#define PERFCAST_STORE_COMMITS_H

#include <stdint.h>

#include "store/db.h"

typedef struct store_set_info {
    int64_t id;
    int number;
    char commit[104];   /* "" when none */
    char branch[204];
    char ci_run[204];
    char created_at[40];
    int has_commit, has_branch, has_ci_run;
} store_set_info;

/* The model set ref names in experiment exp: the newest set of commit ref,
 * else, when ref is all digits, the set numbered ref. Neither ->
 * STORE_NOT_FOUND. */
int store_set_find(PGconn *c, int64_t exp, const char *ref, store_set_info *out,
                   store_error *err);

/* The experiment's model sets, newest first, at most limit. *out malloc'ed
 * (free()), *n of them. */
int store_sets_list(PGconn *c, int64_t exp, int limit, store_set_info **out, int *n,
                    store_error *err);

/* What happened last in experiment exp: the newest upload's time ("" when
 * none) and the newest refit job (*job 0 when none) with its state. */
int store_activity(PGconn *c, int64_t exp, char last_upload[40], int64_t *job, char state[16],
                   store_error *err);

#endif
