/*
 * idempotency.h — the Idempotency-Key header of POST requests that create
 * work (routes flagged API_ROUTE_IDEMPOTENT in api/router.c): a client that
 * retries a request with the key it first sent gets the first answer again
 * (same status, body and Location, with "Idempotent-Replayed: true") instead
 * of a second upload, refit, run or analysis.
 *
 *   - the key: 1 to 255 visible ASCII characters; other values 400 naming
 *     the header;
 *   - scope: the caller's tenant; the request's fingerprint is the SHA-256
 *     of its method, path, query and body: the same key with another
 *     fingerprint (another body, or another route) is 422 naming the header;
 *   - while the first request runs, a second with its key is 409 with
 *     Retry-After; a first request whose process died frees its key after
 *     API_IDEM_LOCK_SECONDS;
 *   - answers kept: every status below 500 but 408 and 429, bodies up to
 *     API_IDEM_MAX_BODY; any other answer lets the key go, so that a retry
 *     runs anew;
 *   - keys and answers are kept PERFCAST_IDEMPOTENCY_TTL seconds (a day by
 *     default) in PostgreSQL (store/idempotency.h), so that they survive a
 *     restart and hold across server processes on one database.
 * A request without the header runs as before.
 */
#ifndef PERFCAST_API_IDEMPOTENCY_H
#define PERFCAST_API_IDEMPOTENCY_H

#include "api/api.h"

#define API_IDEM_MAX_KEY 255
#define API_IDEM_LOCK_SECONDS 300.0
#define API_IDEM_MAX_BODY ((size_t)4 << 20)

/* Before the handler: 0 to run it (*held set when the key is now this
 * request's: call api_idem_end() after the handler), or 1 when resp is the
 * answer already (a replay, or a refusal). */
int api_idem_begin(api_ctx *ctx, api_request *req, api_response *resp, int *held);
/* After the handler of a request that holds its key: keeps the answer, or
 * lets the key go. */
void api_idem_end(api_ctx *ctx, api_request *req, api_response *resp);

#endif
