/*
 * http.h — the request and response every API handler sees, independent of
 * the HTTP server library.
 *
 * server/http.c fills an api_request from libmicrohttpd (method, decoded
 * path, query parameters, headers, the whole body) and sends the
 * api_response back; api/router.c adds the matched route and its path
 * parameters. Handlers answer with the helpers below: JSON documents, or
 * errors as application/problem+json ({"type","title","status","detail"},
 * plus "field" when one input field is at fault), with store errors mapped
 * to statuses in one place (api_store_problem).
 */
#ifndef PERFCAST_API_HTTP_H
#define PERFCAST_API_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store/db.h"
#include "store/queued_run.h"

#define API_MAX_PATH_PARAMS 4
#define API_MAX_RESPONSE_HEADERS 5
#define API_RETRY_AFTER_SECONDS 1 /* Retry-After on 503 */

typedef struct api_kv {
    const char *name;
    const char *value;
} api_kv;

typedef struct api_request {
    const char *method; /* "GET", "POST", ... */
    const char *path;   /* percent-decoded, without the query string */
    const api_kv *query;
    size_t nquery;
    const api_kv *headers;
    size_t nheaders;
    const char *body;   /* NUL-terminated; may contain NULs before body_len */
    size_t body_len;
    int body_mapped;    /* body is a read-only mapping of the upload's spool file
                           (server/http.c): api_body_done() can let its pages go */
    /* set by the router */
    const char *route;  /* the matched pattern, e.g. "/v1/experiments/{id}" */
    api_kv params[API_MAX_PATH_PARAMS]; /* {name} segments, values in param_buf */
    size_t nparams;
    char param_buf[256];
    /* set by the router's authorization (api/auth.h) */
    int64_t tenant_id; /* the caller's tenant; 0 before authorization */
    int64_t token_id;  /* 0 in open mode */
    int scope;         /* STORE_SCOPE_* of the token */
    /* request acceptance (server/http.c, api_admit() in api/router.c) */
    const char *client_addr; /* numeric peer address, for per-address limits; may be NULL */
    int preauthorized; /* 1: api_admit() checked it from the headers; dispatch skips the checks */
    int upload_held;   /* 1: api_admit() holds one of the tenant's upload slots */
    int strict_route;  /* 1: the route takes ?strict= (API_ROUTE_STRICT, api/warnings.h) */
} api_request;

/* A response body shared read-only between the answers that send it and
 * the cache that keeps it (api/model_cache.h): counted references, freed
 * with the last. A large kept answer is then sent without a copy. */
typedef struct api_shared api_shared;

typedef struct api_response {
    int status;
    const char *content_type;  /* a string literal */
    char *body;                /* malloc'ed, owned; may be NULL when body_len is 0; */
    size_t body_len;
    api_shared *shared;        /* or, when set, body is its text: released, not freed */
    struct {
        const char *name;      /* a string literal */
        char value[160];
    } headers[API_MAX_RESPONSE_HEADERS];
    size_t nheaders;
    char error[256];           /* why a 5xx happened, for the log; never sent */
    char audit_sha256[65];     /* an upload's profile SHA-256 (hex), for the audit line */
    int trim_after;            /* 1: the request used much memory, given back to the system
                                  once the answer is sent (server/http.c; answers over 1 MiB
                                  always are) */
} api_response;

/* Lookups: first match, NULL when absent. Header names ignore case. */
const char *api_query(const api_request *req, const char *name);
const char *api_header(const api_request *req, const char *name);
const char *api_path_param(const api_request *req, const char *name);

/* The paging of a listing by id: ?limit= (1..max, dflt when absent) and
 * ?cursor= (the next_cursor of the previous page: the last id it showed).
 * 0, or -1 after a 400 naming the field. */
int api_page_query(const api_request *req, api_response *resp, long dflt, long max,
                   int64_t *after, long *limit);
/* The next_cursor of a page whose last item has id last: a string, or null
 * when there is no more (more == 0). */
json_t *api_next_cursor(int more, int64_t last);
/* A run queued for the job workers (store/queued_run.h) as its GET and its
 * 202 show it: id, experiment (null for none), profile (trace analyses:
 * trace 1), kind, state, attempts, request (searches: trace 0), created_at,
 * started_at, finished_at (null until then), result and error (the stored
 * JSON, null when none). */
json_t *api_queued_run_json(const store_queued_run *r, int trace);

/* Reason phrase for a status ("Not Found"). */
const char *api_status_title(int status);

/* Compact JSON text of doc, reals in their shortest exact form (api/json.c);
 * malloc'ed, NULL when out of memory. */
char *api_json_text(const json_t *doc, size_t *len);

/* Replaces the response with doc (the reference is stolen), compact JSON. */
void api_send_json(api_response *resp, int status, json_t *doc);

/* A handler that reads a large body once, front to back, calls this with
 * the request (void *: usable as a reader's callback) and the bytes read so
 * far: the pages of a mapped body (body_mapped) below upto leave the
 * process's memory, so that its resident size does not grow with the
 * body's; they stay in the spool file and come back if read again. Nothing
 * for a body in memory. */
void api_body_done(void *req, size_t upto);
/* Replaces the response with body (ownership taken). */
void api_send_body(api_response *resp, int status, const char *content_type, char *body,
                   size_t len);
/* 409 for a name the tenant already uses: the problem names the field
 * "name" and carries the existing resource's "id" (also at Location,
 * collection/id), so that a script run twice finds what it made the first
 * time. what: "an experiment". */
void api_name_taken(api_response *resp, const char *what, const char *name,
                    const char *collection, int64_t id);
/* Shared bodies: wrap takes body (malloc'ed) into a new one holding one
 * reference (NULL when out of memory, body then freed); ref adds one;
 * release drops one and frees the text with the last. */
api_shared *api_shared_wrap(char *body, size_t len);
api_shared *api_shared_ref(api_shared *s);
void api_shared_release(api_shared *s);
const char *api_shared_text(const api_shared *s, size_t *len);
/* Replaces the response with s's text (the caller's reference is taken). */
void api_send_shared(api_response *resp, int status, const char *content_type, api_shared *s);
/* Replaces the response with no body (204, ...). */
void api_send_empty(api_response *resp, int status);
/* Adds a response header; a header beyond API_MAX_RESPONSE_HEADERS is dropped. */
void api_add_header(api_response *resp, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Replaces the response with a problem document. field (may be NULL) names
 * the input at fault, e.g. "training.batch_size"; the detail then reads
 * "<field>: <message>" and the document carries "field" too. */
void api_problem(api_response *resp, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Problem for a store error: NOT_FOUND 404, CONFLICT 409, INVALID 400,
 * UNAVAILABLE 503 with Retry-After, INTERNAL 500 (message only logged). */
void api_store_problem(api_response *resp, const store_error *err);

/* Parses the body as one JSON object. On failure answers 400 with the line,
 * column and byte offset of the fault (or 400 "body must be a JSON object")
 * and returns -1. */
int api_parse_object(const api_request *req, api_response *resp, json_t **out);

/* Path parameter `name` as a positive 64-bit id. Anything else cannot name a
 * resource: answers 404 "<what> <text> not found" and returns -1. */
int api_path_id(const api_request *req, api_response *resp, const char *name, const char *what,
                int64_t *id);

/* Frees what resp owns and zeroes it. */
void api_response_free(api_response *resp);

#endif
