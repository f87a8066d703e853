/*
 * http.c — request lookups and response helpers (see api/http.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#include "api/http.h"
#include "common/jsonb.h"

static const char *kv_find(const api_kv *kv, size_t n, const char *name, int nocase)
{
    for (size_t i = 0; i < n; i++)
        if (kv[i].name && (nocase ? !strcasecmp(kv[i].name, name) : !strcmp(kv[i].name, name)))
            return kv[i].value ? kv[i].value : "";
    return NULL;
}

const char *api_query(const api_request *req, const char *name)
{
    return kv_find(req->query, req->nquery, name, 0);
}

int api_page_query(const api_request *req, api_response *resp, long dflt, long max,
                   int64_t *after, long *limit)
{
    const char *cur = api_query(req, "cursor"), *l = api_query(req, "limit");
    char *end;
    *after = 0;
    *limit = dflt;
    if (cur) {
        long long a = strtoll(cur, &end, 10);
        if (!isdigit((unsigned char)*cur) || *end || a < 1) {
            api_problem(resp, 400, "cursor", "not a cursor this API returned: \"%.40s\"", cur);
            return -1;
        }
        *after = a;
    }
    if (l) {
        long v = strtol(l, &end, 10);
        if (!isdigit((unsigned char)*l) || *end || v < 1 || v > max) {
            api_problem(resp, 400, "limit", "must be a whole number from 1 to %ld, got \"%.40s\"",
                        max, l);
            return -1;
        }
        *limit = v;
    }
    return 0;
}

json_t *api_next_cursor(int more, int64_t last)
{
    if (!more)
        return json_null();
    char text[32];
    snprintf(text, sizeof text, "%" PRId64, last);
    return json_string(text);
}

static json_t *jsonb_or_null(const char *text)
{
    json_t *j = text ? jsonb_parse(text, 0) : NULL;
    return j ? j : json_null();
}

json_t *api_queued_run_json(const store_queued_run *r, int trace)
{
    json_t *v = json_pack("{s:I, s:o}", "id", (json_int_t)r->id, "experiment",
                          r->experiment_id > 0 ? json_integer(r->experiment_id) : json_null());
    if (trace)
        json_object_set_new(v, "profile", json_integer(r->profile_id));
    json_object_set_new(v, "kind", json_string(r->kind));
    json_object_set_new(v, "state", json_string(r->state));
    json_object_set_new(v, "attempts", json_integer(r->attempts));
    if (!trace)
        json_object_set_new(v, "request", jsonb_or_null(r->request));
    const char *ts[] = {r->created_at, r->started_at, r->finished_at};
    const char *keys[] = {"created_at", "started_at", "finished_at"};
    for (int i = 0; i < 3; i++)
        json_object_set_new(v, keys[i], ts[i][0] ? json_string(ts[i]) : json_null());
    json_object_set_new(v, "result", jsonb_or_null(r->result));
    json_object_set_new(v, "error", jsonb_or_null(r->error));
    return v;
}

const char *api_header(const api_request *req, const char *name)
{
    return kv_find(req->headers, req->nheaders, name, 1);
}

const char *api_path_param(const api_request *req, const char *name)
{
    return kv_find(req->params, req->nparams, name, 0);
}

const char *api_status_title(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 303: return "See Other";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return status < 400 ? "OK" : status < 500 ? "Client Error" : "Server Error";
    }
}

struct api_shared {
    atomic_int refs;
    char *text;
    size_t len;
};

api_shared *api_shared_wrap(char *body, size_t len)
{
    api_shared *s = malloc(sizeof *s);
    if (!s) {
        free(body);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->text = body;
    s->len = len;
    return s;
}

api_shared *api_shared_ref(api_shared *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void api_shared_release(api_shared *s)
{
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
        free(s->text);
        free(s);
    }
}

const char *api_shared_text(const api_shared *s, size_t *len)
{
    *len = s->len;
    return s->text;
}

/* drops the response's body, owned or shared */
static void body_drop(api_response *resp)
{
    if (resp->shared)
        api_shared_release(resp->shared);
    else
        free(resp->body);
    resp->shared = NULL;
    resp->body = NULL;
}

void api_response_free(api_response *resp)
{
    body_drop(resp);
    memset(resp, 0, sizeof *resp);
}

void api_send_shared(api_response *resp, int status, const char *content_type, api_shared *s)
{
    body_drop(resp);
    resp->status = status;
    resp->content_type = content_type;
    resp->shared = s;
    resp->body = s->text;
    resp->body_len = s->len;
}

void api_send_body(api_response *resp, int status, const char *content_type, char *body,
                   size_t len)
{
    body_drop(resp);
    resp->status = status;
    resp->content_type = content_type;
    resp->body = body;
    resp->body_len = len;
}

void api_name_taken(api_response *resp, const char *what, const char *name,
                    const char *collection, int64_t id)
{
    char detail[320];
    snprintf(detail, sizeof detail,
             "name: this tenant has %s named \"%.80s\" (id %" PRId64 "); GET %s/%" PRId64
             " reads it, DELETE it first to make another",
             what, name, id, collection, id);
    json_t *doc = json_pack("{s:s, s:s, s:i, s:s, s:s, s:I}", "type", "about:blank", "title",
                            api_status_title(409), "status", 409, "detail", detail, "field",
                            "name", "id", (json_int_t)id);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text) {
        api_problem(resp, 409, "name", "%s", detail);
        return;
    }
    api_send_body(resp, 409, "application/problem+json", text, strlen(text));
    api_add_header(resp, "Location", "%s/%" PRId64, collection, id);
}

void api_body_done(void *arg, size_t upto)
{
    const api_request *req = arg;
    if (!req->body_mapped || upto > req->body_len + 1)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = upto / page * page; /* whole pages only: the mapping starts on one */
    if (n)
        madvise((void *)req->body, n, MADV_DONTNEED);
}

void api_send_empty(api_response *resp, int status)
{
    api_send_body(resp, status, NULL, NULL, 0);
}

/* A fixed answer when even the error cannot be built (out of memory). */
static void send_oom(api_response *resp)
{
    static const char doc[] = "{\"type\":\"about:blank\",\"title\":\"Internal Server Error\","
                              "\"status\":500,\"detail\":\"out of memory\"}";
    char *b = malloc(sizeof doc);
    if (b)
        memcpy(b, doc, sizeof doc);
    api_send_body(resp, 500, "application/problem+json", b, b ? sizeof doc - 1 : 0);
    snprintf(resp->error, sizeof resp->error, "out of memory building the response");
}

static void send_doc(api_response *resp, int status, const char *content_type, json_t *doc)
{
    size_t len = 0;
    char *text = doc ? api_json_text(doc, &len) : NULL;
    json_decref(doc);
    if (!text) {
        send_oom(resp);
        return;
    }
    api_send_body(resp, status, content_type, text, len);
}

void api_send_json(api_response *resp, int status, json_t *doc)
{
    send_doc(resp, status, "application/json", doc);
}

void api_add_header(api_response *resp, const char *name, const char *fmt, ...)
{
    if (resp->nheaders >= API_MAX_RESPONSE_HEADERS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(resp->headers[resp->nheaders].value, sizeof resp->headers[0].value, fmt, ap);
    va_end(ap);
    resp->headers[resp->nheaders++].name = name;
}

static void problem_v(api_response *resp, int status, const char *field, const char *fmt,
                      va_list ap)
{
    char msg[512], detail[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t flen = field ? strlen(field) : 0;
    /* messages of the readers and pure modules often name their field
     * already ("peak_flops.fp32: ..."): it is said once */
    int named = field && !strncmp(msg, field, flen) && msg[flen] == ':' && msg[flen + 1] == ' ';
    if (field && !named)
        snprintf(detail, sizeof detail, "%s: %s", field, msg);
    else
        snprintf(detail, sizeof detail, "%s", msg);
    json_t *doc = json_pack("{s:s, s:s, s:i, s:s}", "type", "about:blank", "title",
                            api_status_title(status), "status", status, "detail", detail);
    if (doc && field)
        json_object_set_new(doc, "field", json_string(field));
    resp->nheaders = 0; /* headers of an answer being replaced do not apply */
    send_doc(resp, status, "application/problem+json", doc);
}

void api_problem(api_response *resp, int status, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    problem_v(resp, status, field, fmt, ap);
    va_end(ap);
}

void api_store_problem(api_response *resp, const store_error *err)
{
    switch (err->code) {
    case STORE_NOT_FOUND:
        api_problem(resp, 404, NULL, "%s", err->msg);
        break;
    case STORE_CONFLICT:
        api_problem(resp, 409, NULL, "%s", err->msg);
        break;
    case STORE_INVALID:
        if (err->field[0])
            api_problem(resp, 400, err->field, "%s", err->msg);
        else
            api_problem(resp, 400, "body", "%s", err->msg);
        break;
    case STORE_UNAVAILABLE:
        api_problem(resp, 503, NULL, "the database is unavailable; retry later");
        api_add_header(resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        snprintf(resp->error, sizeof resp->error, "%s", err->msg);
        break;
    default:
        api_problem(resp, 500, NULL, "internal error");
        snprintf(resp->error, sizeof resp->error, "%s", err->msg);
        break;
    }
}

int api_parse_object(const api_request *req, api_response *resp, json_t **out)
{
    json_error_t je;
    *out = NULL;
    if (req->body_len == 0) {
        api_problem(resp, 400, "body", "the request body is empty; expected a JSON object");
        return -1;
    }
    json_t *doc = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &je);
    if (!doc) {
        api_problem(resp, 400, "body", "malformed JSON at line %d, column %d (byte offset %d): %s",
                    je.line, je.column, je.position, je.text);
        return -1;
    }
    if (!json_is_object(doc)) {
        json_decref(doc);
        api_problem(resp, 400, "body", "the request body must be a JSON object");
        return -1;
    }
    *out = doc;
    return 0;
}

int api_path_id(const api_request *req, api_response *resp, const char *name, const char *what,
                int64_t *id)
{
    const char *text = api_path_param(req, name);
    char *end = NULL;
    errno = 0;
    long long v = text && *text >= '1' && *text <= '9' ? strtoll(text, &end, 10) : 0;
    if (v <= 0 || errno || !end || *end) {
        api_problem(resp, 404, NULL, "no %s with id \"%s\" (ids are positive integers)", what,
                    text ? text : "");
        return -1;
    }
    *id = v;
    return 0;
}
