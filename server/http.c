/*
 * http.c — libmicrohttpd glue (see server/http.h).
 *
 * libmicrohttpd calls on_request() several times per request: once when the
 * headers are in (we allocate the request state, and refuse a declared
 * Content-Length over the limit with 413 before any of the body is read —
 * for "Expect: 100-continue" clients before they even send it), once per
 * chunk of body (appended, or dropped once over the limit for bodies without
 * Content-Length), and once at the end, when the request goes to
 * api_dispatch() and its response is queued. on_completed() runs when the
 * response has been sent or the connection died: it records the metrics and
 * writes the request's log line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/http.h"

#define FIRST_BODY_RESERVE ((size_t)64 << 20) /* never reserve more up front */
/* Per-connection buffer (headers, body reads). libmicrohttpd clears what a
 * request used when the next one starts on the connection, so bigger costs
 * every keep-alive request; 16 KiB reads bodies fast enough and holds any
 * sane header block. */
#define CONNECTION_MEMORY ((size_t)16 << 10)

typedef struct srv_request {
    long long start_ns;
    const char *method; /* a literal, for metrics */
    char method_text[16];
    char path[256];
    char *body;
    size_t len, cap;
    size_t limit;  /* body limit of this request's route */
    int too_large; /* over limit: the rest is dropped, 413 at the end */
    int no_memory;
    int status;    /* of the queued response; 0 while none */
    const char *route;
    char error[256];
    /* for the audit line of a write */
    int audited;
    int64_t tenant_id, token_id;
    char sha256[65];
} srv_request;

typedef struct kv_vec {
    api_kv *v;
    size_t n, cap;
    int failed;
} kv_vec;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static enum MHD_Result collect_kv(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    kv_vec *kv = cls;
    if (kv->n == kv->cap) {
        size_t ncap = kv->cap ? kv->cap * 2 : 16;
        api_kv *nv = realloc(kv->v, ncap * sizeof *nv);
        if (!nv) {
            kv->failed = 1;
            return MHD_NO;
        }
        kv->v = nv;
        kv->cap = ncap;
    }
    kv->v[kv->n++] = (api_kv){key, value};
    return MHD_YES;
}

/* Hands resp to libmicrohttpd (the body's ownership goes with it). */
static enum MHD_Result queue(struct MHD_Connection *conn, srv_request *r, api_response *resp)
{
    struct MHD_Response *mr =
        MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
    if (!mr) {
        api_response_free(resp);
        return MHD_NO;
    }
    resp->body = NULL;
    if (resp->content_type)
        MHD_add_response_header(mr, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type);
    for (size_t i = 0; i < resp->nheaders; i++)
        MHD_add_response_header(mr, resp->headers[i].name, resp->headers[i].value);
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)resp->status, mr);
    MHD_destroy_response(mr);
    if (ret == MHD_YES) {
        r->status = resp->status;
        snprintf(r->error, sizeof r->error, "%s", resp->error);
    }
    api_response_free(resp);
    return ret;
}

static enum MHD_Result too_large(srv_http *h, struct MHD_Connection *conn, srv_request *r,
                                 size_t limit, const char *how)
{
    api_response resp = {0};
    api_problem(&resp, 413, NULL, "the request body %s; the limit is %zu bytes (%s)", how, limit,
                limit == h->max_body ? "PERFCAST_MAX_BODY" : "PERFCAST_MAX_REQUEST_BODY");
    return queue(conn, r, &resp);
}

/* Appends one chunk of body; past the limit, drops it all and remembers. */
static void append_body(srv_request *r, const char *data, size_t n)
{
    if (r->too_large || r->no_memory)
        return;
    if (n > r->limit - r->len) {
        r->too_large = 1;
        free(r->body);
        r->body = NULL;
        r->len = r->cap = 0;
        return;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 4096;
        while (cap < r->len + n + 1)
            cap *= 2;
        if (cap > r->limit + 1)
            cap = r->limit + 1;
        char *nb = realloc(r->body, cap);
        if (!nb) {
            r->no_memory = 1;
            free(r->body);
            r->body = NULL;
            r->len = r->cap = 0;
            return;
        }
        r->body = nb;
        r->cap = cap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
}

static enum MHD_Result dispatch(srv_http *h, struct MHD_Connection *conn, srv_request *r,
                                const char *url, const char *method)
{
    api_response resp = {0};
    if (r->too_large) {
        r->route = api_route_of(url);
        return too_large(h, conn, r, r->limit, "is too large");
    }
    if (r->no_memory) {
        api_problem(&resp, 503, NULL, "cannot hold the request body now; retry later");
        api_add_header(&resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        snprintf(resp.error, sizeof resp.error, "out of memory for a %zu-byte body", r->len);
        return queue(conn, r, &resp);
    }
    kv_vec headers = {0}, query = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_kv, &headers);
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_kv, &query);
    if (headers.failed || query.failed) {
        api_problem(&resp, 503, NULL, "out of memory; retry later");
        api_add_header(&resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
    } else {
        api_request req = {
            .method = method,
            .path = url,
            .query = query.v,
            .nquery = query.n,
            .headers = headers.v,
            .nheaders = headers.n,
            .body = r->body ? r->body : "",
            .body_len = r->len,
        };
        api_dispatch(h->api, &req, &resp);
        r->route = req.route;
        r->audited = req.route && !strncmp(req.route, "/v1/", 4) && strcmp(method, "GET") &&
                     strcmp(method, "HEAD");
        r->tenant_id = req.tenant_id;
        r->token_id = req.token_id;
        snprintf(r->sha256, sizeof r->sha256, "%s", resp.audit_sha256);
    }
    free(headers.v);
    free(query.v);
    return queue(conn, r, &resp);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    srv_http *h = cls;
    srv_request *r = *con_cls;
    if (!r) { /* headers received */
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        r->start_ns = now_ns();
        r->method = api_metrics_method(method);
        snprintf(r->method_text, sizeof r->method_text, "%s", method);
        snprintf(r->path, sizeof r->path, "%s", url);
        *con_cls = r;
        h->inflight++;
        r->limit = api_route_flags_of(method, url) & API_ROUTE_UPLOAD ? h->max_body
                   : h->max_request_body < h->max_body ? h->max_request_body
                                                       : h->max_body;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            errno = 0;
            unsigned long long declared = strtoull(cl, &end, 10);
            if (!errno && !*end && declared > r->limit) {
                r->route = api_route_of(url);
                return too_large(h, conn, r, r->limit, "declared by Content-Length is too large");
            }
            if (!errno && !*end && declared) {
                r->cap = (declared < FIRST_BODY_RESERVE ? declared : FIRST_BODY_RESERVE) + 1;
                r->body = malloc(r->cap);
                if (!r->body)
                    r->cap = 0;
            }
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!r->status) {
            int before = r->too_large;
            append_body(r, upload_data, *upload_data_size);
            if (!before && r->too_large)
                too_large(h, conn, r, r->limit, "is too large"); /* now, if the library lets us */
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->status) /* answered already (413) */
        return MHD_YES;
    return dispatch(h, conn, r, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)conn;
    srv_http *h = cls;
    srv_request *r = *con_cls;
    if (!r)
        return;
    double seconds = (double)(now_ns() - r->start_ns) / 1e9;
    const char *route = r->route ? r->route : "unmatched";
    api_metrics_observe(h->api->metrics, route, r->method, r->status, seconds);
    int level = r->status >= 500 || r->status == 0 ? SRV_LOG_WARN : SRV_LOG_INFO;
    if (srv_log_enabled(h->log, level)) {
        static const char *const ends[] = {"completed", "error", "timeout", "shutdown",
                                           "read error", "client abort"};
        const char *end = (unsigned)toe < sizeof ends / sizeof *ends ? ends[toe] : "unknown";
        srv_logf(h->log, level, "request", "{s:s, s:s, s:s, s:i, s:f, s:I, s:s*, s:s*}",
                 "method", r->method_text, "route", route, "path", r->path, "status", r->status,
                 "duration_ms", seconds * 1e3, "bytes_in", (json_int_t)r->len, "error",
                 r->error[0] ? r->error : NULL, "end",
                 toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? NULL : end);
    }
    if (r->audited) /* never the token: its id */
        srv_logf(h->log, SRV_LOG_AUDIT, "audit", "{s:s, s:s, s:s, s:I, s:I, s:s*, s:i}", "method",
                 r->method_text, "route", route, "path", r->path, "tenant",
                 (json_int_t)r->tenant_id, "token", (json_int_t)r->token_id, "profile_sha256",
                 r->sha256[0] ? r->sha256 : NULL, "status", r->status);
    free(r->body);
    free(r);
    *con_cls = NULL;
    h->inflight--;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    srv_http *h = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    srv_logf(h->log, SRV_LOG_WARN, "libmicrohttpd", "{s:s}", "detail", msg);
}

/* A listening TCP socket on host:port ("" = every interface). */
static int open_listener(srv_http *h, const char *host, int port, char *err, size_t errcap)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    char service[8];
    snprintf(service, sizeof service, "%d", port);
    int gai = getaddrinfo(*host ? host : NULL, service, &hints, &res);
    if (gai) {
        snprintf(err, errcap, "listen address \"%s\": %s", host, gai_strerror(gai));
        return -1;
    }
    int fd = -1, saved = 0;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1024)) {
            saved = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errcap, "cannot listen on %s:%d: %s", *host ? host : "*", port,
                 strerror(saved));
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char numeric[INET6_ADDRSTRLEN] = "";
    if (!getsockname(fd, (struct sockaddr *)&ss, &sl) &&
        !getnameinfo((struct sockaddr *)&ss, sl, numeric, sizeof numeric, service,
                     sizeof service, NI_NUMERICHOST | NI_NUMERICSERV)) {
        snprintf(h->host, sizeof h->host, "%s", numeric);
        h->port = atoi(service);
    }
    return fd;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* Percent-decoding of the path and of query names and values, as
 * libmicrohttpd's own except that "%00" stays as it is: a decoded NUL would
 * end the string there, so that "/index.html%00.png" became "/index.html".
 * Kept encoded, the '%' makes such a path invalid wherever it is checked
 * (api/web.c refuses it, commit names and coordinates cannot hold it). */
static size_t unescape_keep_nul(void *cls, struct MHD_Connection *conn, char *s)
{
    (void)cls;
    (void)conn;
    char *out = s;
    for (const char *in = s; *in;) {
        int hi, lo;
        if (in[0] == '%' && (hi = hexval(in[1])) >= 0 && (lo = hexval(in[2])) >= 0 &&
            (hi | lo) != 0) {
            *out++ = (char)(hi * 16 + lo);
            in += 3;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
    return (size_t)(out - s);
}

int srv_http_start(srv_http *h, const srv_config *cfg, api_ctx *api, srv_log *log, char *err,
                   size_t errcap)
{
    memset(h, 0, sizeof *h);
    h->quiesced_fd = -1;
    h->max_body = cfg->max_body;
    h->max_request_body = cfg->max_request_body ? cfg->max_request_body : cfg->max_body;
    h->api = api;
    h->log = log;
    int fd = open_listener(h, cfg->listen_host, cfg->listen_port, err, errcap);
    if (fd < 0)
        return -1;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)cfg->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->http_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h, MHD_OPTION_UNESCAPE_CALLBACK,
        unescape_keep_nul, NULL, MHD_OPTION_END);
    if (!h->daemon) {
        close(fd);
        snprintf(err, errcap, "cannot start the HTTP daemon on %s:%d", h->host, h->port);
        return -1;
    }
    return 0;
}

void srv_http_quiesce(srv_http *h)
{
    if (h->daemon && h->quiesced_fd < 0)
        h->quiesced_fd = MHD_quiesce_daemon(h->daemon);
}

int srv_http_inflight(srv_http *h)
{
    return h->inflight;
}

void srv_http_stop(srv_http *h)
{
    if (h->daemon)
        MHD_stop_daemon(h->daemon);
    if (h->quiesced_fd >= 0)
        close(h->quiesced_fd);
    h->daemon = NULL;
    h->quiesced_fd = -1;
}
