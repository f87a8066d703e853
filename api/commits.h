/*
 * commits.h — the names that tie uploads, refits and model sets to a
 * version of the code measured: commit, branch and CI run (model sets per
 * commit, compared by GET /v1/experiments/{id}/regressions).
 */
#ifndef PERFCAST_API_COMMITS_H
#define PERFCAST_API_COMMITS_H

#include <stddef.h>

/* 1 when text is a valid commit (1 to 100 of A-Z a-z 0-9 . _ / -, e.g. a
 * hash or a tag), or, with is_commit 0, a valid branch or CI run (1 to 200
 * printable characters). */
int api_tag_valid(const char *text, int is_commit);

#endif
