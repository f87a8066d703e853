/*
 * limits.h — what one client may take: a token bucket of requests per
 * token (open mode's callers, who have none, are not limited), and a number of
 * uploads per tenant in progress at once, and invalid tokens per client
 * address (below). Over any: 429 with
 * Retry-After. Thread-safe; in memory, per process.
 */
#ifndef PERFCAST_API_LIMITS_H
#define PERFCAST_API_LIMITS_H

#include "api/http.h"

typedef struct api_limits api_limits;

/* rate: requests per second a token is refilled with (0: no rate limit);
 * burst: the bucket's size; uploads: concurrent uploads per tenant (0: no
 * limit). NULL when out of memory. */
api_limits *api_limits_new(double rate, double burst, int uploads);
void api_limits_free(api_limits *l);

/* Takes one request from req->token_id's bucket. 0, or -1 with resp a 429. */
int api_limits_request(api_limits *l, const api_request *req, api_response *resp);
/* An upload of req->tenant_id starts: 0, or -1 with resp a 429 (then no
 * api_limits_upload_end). */
int api_limits_upload_begin(api_limits *l, const api_request *req, api_response *resp);
void api_limits_upload_end(api_limits *l, const api_request *req);

/* Invalid tokens, per client address: each costs a database lookup, so an
 * address whose bucket of failures is empty gets 429 before the lookup.
 * rate: failures per second refilled (0: off); burst: the bucket's size. */
#define API_LIMITS_BAD_TOKEN_RATE 1.0
#define API_LIMITS_BAD_TOKEN_BURST 20.0
void api_limits_set_bad_tokens(api_limits *l, double rate, double burst);
/* 0 when addr may try a token now, or -1 with resp a 429. */
int api_limits_bad_token_check(api_limits *l, const char *addr, api_response *resp);
/* A token from addr was refused: one failure taken from its bucket. */
void api_limits_bad_token_note(api_limits *l, const char *addr);

#endif
