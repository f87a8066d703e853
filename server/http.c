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
 *
 * Memory after large answers: an answer body over TRIM_AFTER_ANSWER bytes
 * (a sweep plan's page of 1,000 runs with 4 KB commands: 7.5 MB) is freed
 * by free_answer_trim() when libmicrohttpd destroys the response, and what
 * the request used goes back to the system then (memtrim, common/memtrim.h):
 * the body and the pages freed before it, the top of the thread's arena
 * included, which the server's 64 MB trim threshold would keep with each
 * HTTP thread. Not in on_completed(): libmicrohttpd calls it before it
 * destroys the response, while the body is still allocated. Smaller
 * answers are freed plainly, at no cost, unless their handler used much
 * memory for them (api_response.trim_after: a sweep plan's page read from
 * many stored runs).
 *
 * Request acceptance (hostile clients):
 *   - Headers are enough to refuse. At the first call api_admit() checks
 *     the token, its scope and rate, the {id}'s tenant and the tenant's
 *     upload slots; a refusal is answered at once and the connection closes
 *     without any of the body being read (libmicrohttpd does not read the
 *     body of a request answered before it). No body memory is reserved
 *     before admission.
 *   - An admitted upload's body goes to a spool file (unlinked, in
 *     PERFCAST_SPOOL_DIR) once it passes SPOOL_AT bytes, and is mapped
 *     read-only for the handler, so the process holds at most SPOOL_AT
 *     bytes of anyone's body in its heap; the mapped pages are clean file
 *     pages the kernel can drop. Other routes' bodies stay in memory, up to
 *     PERFCAST_MAX_REQUEST_BODY.
 *   - Framing (RFC 9112 §6): a request with both Content-Length and
 *     Transfer-Encoding, or with either header twice, is answered 400 and
 *     the connection closed (its body is never read, so nothing after it
 *     can pass for a request of its own); a transfer coding other than
 *     "chunked" 501, likewise. A query of more than SRV_MAX_QUERY_PARAMS
 *     parameters is cut off before libmicrohttpd splits it (on_uri) and
 *     answered 414. A chunked body is counted as it arrives: past the
 *     route's limit the 413 is written to the socket at once and the
 *     connection closed, since libmicrohttpd cannot queue an answer while
 *     a body is being read (declared lengths get theirs from the headers).
 *   - Slow clients: server/guard.h gives every phase of a connection a
 *     deadline and keeps slots free for health probes;
 *     PERFCAST_MAX_CONNECTIONS_PER_ADDRESS caps one address's connections.
 * Overload: the daemon takes SHED_HEADROOM connections beyond
 * PERFCAST_MAX_CONNECTIONS; a connection opened while that many are open
 * gets 503 with Retry-After at once for requests that arrive while more than
 * PERFCAST_MAX_CONNECTIONS are open (and is closed)
 * instead of waiting in the listen queue, except /health and /ready, so
 * that probes keep their answers while the service sheds load. Connections
 * admitted before are served as usual.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "server/http.h"

#include "common/memtrim.h"

#define FIRST_BODY_RESERVE ((size_t)1 << 20) /* never reserve more up front */
/* An upload's body goes to a spool file once it is larger than this. */
#define SPOOL_AT ((size_t)1 << 20)
/* An answer body larger than this (or marked trim_after) gives the
 * request's memory back to the system once it is sent (free_answer_trim). */
#define TRIM_AFTER_ANSWER ((size_t)1 << 20)
/* Per-connection buffer (headers, body reads). libmicrohttpd clears what a
 * request used when the next one starts on the connection, so bigger costs
 * every keep-alive request; 16 KiB reads bodies fast enough and holds any
 * sane header block. */
#define CONNECTION_MEMORY ((size_t)16 << 10)
#define SHED_HEADROOM 64 /* connections past the limit, answered 503 (probes: served) */
/* Query parameters of one request; more: 414 (README "Limits and hardening").
 * The routes take a few (the experiment's parameters and factors, at most
 * 16, and their options). */
#define SRV_MAX_QUERY_PARAMS 64

/* The context on_uri() gives a request whose query it cut off. */
static char query_cut_marker;

typedef struct srv_request {
    long long start_ns;
    const char *method; /* a literal, for metrics */
    char method_text[16];
    char path[256];
    char *body;    /* in memory, or the spool file's mapping (mapped) */
    size_t len, cap;
    int spool_fd;  /* -1, or the spool file holding the body so far */
    int mapped;    /* body is an mmap of spool_fd, len + 1 bytes */
    int upload;    /* the route is an upload: its body may be spooled */
    int spool_failed;
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
    /* admission from the headers (api_admit) */
    int preauthorized, upload_held, scope;
    char addr[INET6_ADDRSTRLEN];
    srv_guard_conn *guard;
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

/* libmicrohttpd is done with a shared body */
static void release_shared(void *cls)
{
    api_shared_release(cls);
}

/* libmicrohttpd is done with a large answer's body: freed, and the memory
 * of its request given back (memtrim: this thread's arena top, then every
 * arena's free pages). The thread that destroys a response is the one its
 * connection's request ran on, whose arena the handler used. */
static void free_answer_trim(void *body)
{
    free(body);
    memtrim();
}

/* Hands resp to libmicrohttpd (the body's ownership goes with it). */
static enum MHD_Result queue(struct MHD_Connection *conn, srv_request *r, api_response *resp)
{
    struct MHD_Response *mr =
        resp->shared ? MHD_create_response_from_buffer_with_free_callback_cls(
                           resp->body_len, resp->body, release_shared, resp->shared)
        : resp->body && (resp->body_len > TRIM_AFTER_ANSWER || resp->trim_after)
            ? MHD_create_response_from_buffer_with_free_callback_cls(
                  resp->body_len, resp->body, free_answer_trim, resp->body)
            : MHD_create_response_from_buffer(resp->body_len, resp->body,
                                              MHD_RESPMEM_MUST_FREE);
    if (!mr) {
        api_response_free(resp);
        return MHD_NO;
    }
    resp->body = NULL; /* the body, or the reference to a shared one, went with mr */
    resp->shared = NULL;
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

/* write(2) all of n bytes. 0, or -1. */
static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* An unlinked file in PERFCAST_SPOOL_DIR (else TMPDIR, else /tmp). */
static int spool_open(void)
{
    const char *dir = getenv("PERFCAST_SPOOL_DIR");
    if (!dir || !*dir)
        dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    char path[4096];
    snprintf(path, sizeof path, "%s/perfcast-spool-XXXXXX", dir);
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Moves the body so far to a spool file; later chunks are written there. */
static int spool_start(srv_request *r)
{
    r->spool_fd = spool_open();
    if (r->spool_fd < 0 || write_all(r->spool_fd, r->body ? r->body : "", r->len)) {
        r->spool_failed = 1;
        return -1;
    }
    free(r->body);
    r->body = NULL;
    r->cap = 0;
    return 0;
}

/* Drops the body, in memory or spooled. After a spooled body (an upload
 * past SPOOL_AT: a trace, a large profile or step graph) the memory its
 * handler freed is given back to the system (memtrim, this thread's arena
 * top included): glibc would keep the pages of its arenas, and the process
 * would stay at the size of its largest upload. */
static void drop_body(srv_request *r)
{
    int spooled = r->spool_fd >= 0;
    if (r->mapped)
        munmap(r->body, r->len + 1);
    else
        free(r->body);
    if (spooled) {
        close(r->spool_fd);
        memtrim();
    }
    r->spool_fd = -1;
    r->mapped = 0;
    r->body = NULL;
    r->len = r->cap = 0;
}

/* Appends one chunk of body; past the limit, drops it all and remembers. */
static void append_body(srv_request *r, const char *data, size_t n)
{
    if (r->too_large || r->no_memory || r->spool_failed)
        return;
    if (n > r->limit - r->len) {
        r->too_large = 1;
        drop_body(r);
        return;
    }
    if (r->upload && r->spool_fd < 0 && r->len + n > SPOOL_AT && spool_start(r))
        return;
    if (r->spool_fd >= 0) {
        if (write_all(r->spool_fd, data, n))
            r->spool_failed = 1;
        else
            r->len += n;
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
    if (r->spool_fd >= 0 && !r->spool_failed) { /* map it, NUL-terminated like any body */
        void *m = write_all(r->spool_fd, "", 1) ? MAP_FAILED
                  : mmap(NULL, r->len + 1, PROT_READ, MAP_PRIVATE, r->spool_fd, 0);
        if (m == MAP_FAILED) {
            r->spool_failed = 1;
        } else {
            r->body = m;
            r->mapped = 1;
        }
    }
    if (r->spool_failed) {
        api_problem(&resp, 503, NULL, "cannot hold the request body now; retry later");
        api_add_header(&resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        snprintf(resp.error, sizeof resp.error, "cannot spool a %zu-byte body: %s", r->len,
                 strerror(errno));
        return queue(conn, r, &resp);
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
            .body_mapped = r->mapped,
            .tenant_id = r->tenant_id,
            .token_id = r->token_id,
            .scope = r->scope,
            .client_addr = r->addr[0] ? r->addr : NULL,
            .preauthorized = r->preauthorized,
            .upload_held = r->upload_held,
        };
        api_dispatch(h->api, &req, &resp);
        if (r->upload_held) {
            /* the upload is stored (or refused): its slot is free before the
             * answer leaves, so a client's next upload never finds it taken */
            api_request done = {.tenant_id = r->tenant_id, .upload_held = 1};
            api_admit_release(h->api, &done);
            r->upload_held = 0;
        }
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

/* The peer's numeric address into r->addr ("" when unknown). */
static void client_address(struct MHD_Connection *conn, srv_request *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    r->addr[0] = '\0';
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                               : sizeof(struct sockaddr_in);
    if (getnameinfo(sa, len, r->addr, sizeof r->addr, NULL, 0, NI_NUMERICHOST))
        r->addr[0] = '\0';
}

static srv_guard_conn *guard_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

/* Admission from the headers (api_admit): 0 to read the body, or -1 after
 * queueing the refusal (the body is then never read). */
static int admit(srv_http *h, struct MHD_Connection *conn, srv_request *r, const char *url,
                 const char *method)
{
    api_response resp = {0};
    kv_vec headers = {0}, query = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_kv, &headers);
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_kv, &query);
    int refused = 0;
    if (headers.failed || query.failed) {
        api_problem(&resp, 503, NULL, "out of memory; retry later");
        api_add_header(&resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
        refused = 1;
    } else {
        api_request req = {.method = method,
                           .path = url,
                           .query = query.v,
                           .nquery = query.n,
                           .headers = headers.v,
                           .nheaders = headers.n,
                           .body = "",
                           .client_addr = r->addr[0] ? r->addr : NULL};
        refused = api_admit(h->api, &req, &resp) != 0;
        r->route = req.route;
        r->tenant_id = req.tenant_id;
        r->token_id = req.token_id;
        r->scope = req.scope;
        r->preauthorized = req.preauthorized;
        r->upload_held = req.upload_held;
    }
    free(headers.v);
    free(query.v);
    if (!refused)
        return 0;
    queue(conn, r, &resp);
    return -1;
}

/* Over the connection limit (more than PERFCAST_MAX_CONNECTIONS open when
 * the request arrives): 503 with Retry-After for all but the probes.
 * 1 when answered. */
static int shed(srv_http *h, struct MHD_Connection *conn, srv_request *r, const char *url)
{
    if (h->connections <= h->max_connections || !strcmp(url, "/health") ||
        !strcmp(url, "/ready"))
        return 0;
    api_response resp = {0};
    api_problem(&resp, 503, NULL, "the server is at its connection limit (%d); retry later",
                h->max_connections);
    api_add_header(&resp, "Retry-After", "%d", API_RETRY_AFTER_SECONDS);
    api_add_header(&resp, "Connection", "close");
    snprintf(resp.error, sizeof resp.error, "shed: over %d connections", h->max_connections);
    r->route = api_route_of(url);
    queue(conn, r, &resp);
    return 1;
}

/* The framing headers of a request, as sent (every occurrence). */
typedef struct framing {
    int content_length, transfer_encoding; /* how many of each */
    char coding[64];                       /* the last Transfer-Encoding, trimmed */
} framing;

static enum MHD_Result count_framing(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    framing *f = cls;
    if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
        f->content_length++;
    } else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
        f->transfer_encoding++;
        const char *v = value ? value : "";
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strlen(v);
        while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
            n--;
        snprintf(f->coding, sizeof f->coding, "%.*s", (int)(n < 63 ? n : 63), v);
    }
    return MHD_YES;
}

/* RFC 9112 §6.1, §6.3: the body's length must be unambiguous and its coding
 * one we read. 1 when refused (answered, the connection to be closed). */
static int bad_framing(struct MHD_Connection *conn, srv_request *r, const char *url)
{
    framing f = {0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_framing, &f);
    api_response resp = {0};
    if (f.transfer_encoding && f.content_length)
        api_problem(&resp, 400, "Transfer-Encoding",
                    "a request may not carry both Content-Length and Transfer-Encoding");
    else if (f.content_length > 1)
        api_problem(&resp, 400, "Content-Length", "Content-Length is given more than once");
    else if (f.transfer_encoding > 1)
        api_problem(&resp, 400, "Transfer-Encoding", "Transfer-Encoding is given more than once");
    else if (f.transfer_encoding && strcasecmp(f.coding, "chunked"))
        api_problem(&resp, 501, "Transfer-Encoding",
                    "the transfer coding \"%s\" is not implemented; only \"chunked\" is",
                    f.coding);
    else
        return 0;
    api_add_header(&resp, "Connection", "close");
    if (resp.status == 501)
        snprintf(resp.error, sizeof resp.error, "transfer coding \"%s\"", f.coding);
    r->route = api_route_of(url);
    queue(conn, r, &resp);
    return 1;
}

/* 414 for a query on_uri() cut off. */
static void too_many_params(struct MHD_Connection *conn, srv_request *r, const char *url)
{
    api_response resp = {0};
    api_problem(&resp, 414, NULL, "the query has more than %d parameters; the limit is %d",
                SRV_MAX_QUERY_PARAMS, SRV_MAX_QUERY_PARAMS);
    api_add_header(&resp, "Connection", "close");
    r->route = api_route_of(url);
    queue(conn, r, &resp);
}

/* A chunked body passed the limit while libmicrohttpd reads it, when no
 * answer can be queued: the 413 goes to the socket now (a few hundred bytes
 * into an empty send buffer) and the connection is then closed, its write
 * side first so that the answer is followed by the end of the stream. */
static void too_large_now(srv_http *h, struct MHD_Connection *conn, srv_request *r)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return;
    char detail[200], head[256];
    int dn = snprintf(detail, sizeof detail,
                      "{\"type\":\"about:blank\",\"title\":\"Content Too Large\",\"status\":413,"
                      "\"detail\":\"the request body is too large; the limit is %zu bytes (%s)\"}",
                      r->limit, r->limit == h->max_body ? "PERFCAST_MAX_BODY"
                                                        : "PERFCAST_MAX_REQUEST_BODY");
    int hn = snprintf(head, sizeof head,
                      "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
                      "Content-Type: application/problem+json\r\nContent-Length: %d\r\n\r\n",
                      dn);
    int fd = ci->connect_fd;
    (void)!send(fd, head, (size_t)hn, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)!send(fd, detail, (size_t)dn, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(fd, SHUT_WR);
    r->status = 413;
    snprintf(r->error, sizeof r->error, "chunked body over %zu bytes", r->limit);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    srv_http *h = cls;
    srv_request *r = *con_cls;
    int query_cut = r == (void *)&query_cut_marker;
    if (query_cut)
        r = NULL;
    if (!r) { /* headers received */
        r = calloc(1, sizeof *r);
        if (!r)
            return MHD_NO;
        r->start_ns = now_ns();
        r->spool_fd = -1;
        r->guard = guard_of(conn);
        srv_guard_body(h->guard, r->guard);
        client_address(conn, r);
        r->method = api_metrics_method(method);
        snprintf(r->method_text, sizeof r->method_text, "%s", method);
        snprintf(r->path, sizeof r->path, "%s", url);
        *con_cls = r;
        h->inflight++;
        r->upload = (api_route_flags_of(method, url) & API_ROUTE_UPLOAD) != 0;
        if (bad_framing(conn, r, url))
            return MHD_YES;
        if (query_cut) {
            too_many_params(conn, r, url);
            return MHD_YES;
        }
        if (shed(h, conn, r, url))
            return MHD_YES;
        r->limit = r->upload ? h->max_body
                   : h->max_request_body < h->max_body ? h->max_request_body
                                                       : h->max_body;
        const char *cl =
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        unsigned long long declared = 0;
        if (cl) {
            char *end;
            errno = 0;
            declared = strtoull(cl, &end, 10);
            if (!errno && !*end && declared > r->limit) {
                r->route = api_route_of(url);
                return too_large(h, conn, r, r->limit, "declared by Content-Length is too large");
            }
            if (errno || *end)
                declared = 0;
        }
        /* one address's connections beyond its cap serve probes only */
        if (srv_guard_over_cap(r->guard) && strcmp(url, "/health") && strcmp(url, "/ready")) {
            api_response resp = {0};
            r->route = api_route_of(url);
            api_problem(&resp, 429, NULL,
                        "too many connections from this address; the limit is %d "
                        "(PERFCAST_MAX_CONNECTIONS_PER_ADDRESS)",
                        h->max_per_address);
            api_add_header(&resp, "Retry-After", "%d", 1);
            api_add_header(&resp, "Connection", "close");
            queue(conn, r, &resp);
            return MHD_YES;
        }
        /* who asks, may they, is there room: from the headers, body unread */
        if (admit(h, conn, r, url, method))
            return MHD_YES;
        if (declared && !(r->upload && declared > SPOOL_AT)) {
            r->cap = (declared < FIRST_BODY_RESERVE ? declared : FIRST_BODY_RESERVE) + 1;
            r->body = malloc(r->cap);
            if (!r->body)
                r->cap = 0;
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        srv_guard_body_bytes(r->guard, *upload_data_size);
        if (!r->status) {
            int before = r->too_large;
            append_body(r, upload_data, *upload_data_size);
            if (!before && r->too_large &&
                too_large(h, conn, r, r->limit, "is too large") != MHD_YES) {
                /* libmicrohttpd reads the body still: answer on the socket, close */
                too_large_now(h, conn, r);
                *upload_data_size = 0;
                return MHD_NO;
            }
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (r->status) /* answered already (413, or refused from the headers) */
        return MHD_YES;
    srv_guard_busy(h->guard, r->guard);
    return dispatch(h, conn, r, url, method);
}

/* The request's log line: method, route, path, status, duration_ms,
 * bytes_in, and error and end when there are any; written without Jansson
 * (one line per request). */
static void log_request(srv_http *h, const srv_request *r, int level, const char *route,
                        double seconds, const char *end)
{
    char f[1024];
    size_t cap = sizeof f, n = 0;
    n = (size_t)snprintf(f, cap, "\"method\":");
    n = srv_log_quote(f, n, cap, r->method_text);
    if (n < cap)
        n += (size_t)snprintf(f + n, cap - n, ",\"route\":");
    n = n < cap ? srv_log_quote(f, n, cap, route) : cap;
    if (n < cap)
        n += (size_t)snprintf(f + n, cap - n, ",\"path\":");
    n = n < cap ? srv_log_quote(f, n, cap, r->path) : cap;
    if (n < cap)
        n += (size_t)snprintf(f + n, cap - n, ",\"status\":%d,\"duration_ms\":%.3f,\"bytes_in\":%zu",
                              r->status, seconds * 1e3, r->len);
    if (n < cap && r->error[0]) {
        n += (size_t)snprintf(f + n, cap - n, ",\"error\":");
        n = n < cap ? srv_log_quote(f, n, cap, r->error) : cap;
    }
    if (n < cap && end) {
        n += (size_t)snprintf(f + n, cap - n, ",\"end\":");
        n = n < cap ? srv_log_quote(f, n, cap, end) : cap;
    }
    if (n < cap)
        srv_log_fields(h->log, level, "request", f, n);
    else /* cannot be: the fields are bounded (path 256, error 256 bytes) */
        srv_logf(h->log, level, "request", "{s:s, s:i}", "route", route, "status", r->status);
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
        log_request(h, r, level, route, seconds,
                    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? NULL : end);
    }
    if (r->audited) /* never the token: its id */
        srv_logf(h->log, SRV_LOG_AUDIT, "audit", "{s:s, s:s, s:s, s:I, s:I, s:s*, s:i}", "method",
                 r->method_text, "route", route, "path", r->path, "tenant",
                 (json_int_t)r->tenant_id, "token", (json_int_t)r->token_id, "profile_sha256",
                 r->sha256[0] ? r->sha256 : NULL, "status", r->status);
    if (r->upload_held) { /* the slot of an upload that never reached its handler */
        api_request req = {.tenant_id = r->tenant_id, .upload_held = 1};
        api_admit_release(h->api, &req);
    }
    srv_guard_idle(h->guard, guard_of(conn));
    drop_body(r);
    free(r);
    *con_cls = NULL;
    h->inflight--;
}

/* Connections come and go: the guard tracks each (server/guard.h). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    srv_http *h = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *ai =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        srv_guard_addr addr = {0}, *ap = NULL;
        if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET) {
            const struct sockaddr_in *in = (const void *)ai->client_addr;
            addr.family = AF_INET;
            memcpy(addr.bytes, &in->sin_addr, 4);
            ap = &addr;
        } else if (ai && ai->client_addr && ai->client_addr->sa_family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const void *)ai->client_addr;
            addr.family = AF_INET6;
            memcpy(addr.bytes, &in6->sin6_addr, 16);
            ap = &addr;
        }
        *socket_context = ci ? srv_guard_open(h->guard, ci->connect_fd, ap) : NULL;
        h->connections++; /* for shed() */
    } else {
        h->connections--;
        srv_guard_close(h->guard, *socket_context);
        *socket_context = NULL;
    }
}

/* A request line arrived: a kept-alive connection's next header block is
 * timed from here. The return value becomes the request's context: none. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    srv_http *h = cls;
    srv_guard_request_line(h->guard, guard_of(conn));
    /* Too many query parameters: each costs libmicrohttpd a record in the
     * connection's memory, and running out there closes the connection
     * without an answer. The query is emptied here, in the request line's
     * own buffer, before libmicrohttpd splits it (it has found the '?'
     * already and splits what follows); on_request() answers 414. */
    char *q = strchr(uri, '?');
    if (!q)
        return NULL;
    int n = 1;
    for (const char *p = q + 1; *p; p++)
        n += *p == '&' || *p == ';';
    if (n <= SRV_MAX_QUERY_PARAMS)
        return NULL;
    q[0] = q[1] = '\0';
    return &query_cut_marker;
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
    h->max_connections = cfg->max_connections;
    h->api = api;
    h->log = log;
    h->max_per_address = cfg->max_connections_per_address;
    /* every connection is a descriptor: the soft limit (often 1024) must
     * not be what refuses them first */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int reserve = cfg->max_connections / 8;
    srv_guard_config gc = {.header_timeout = cfg->header_timeout,
                           .idle_timeout = cfg->http_timeout,
                           .min_body_rate = (double)cfg->min_body_rate,
                           .max_connections = cfg->max_connections + SHED_HEADROOM,
                           .reserve = reserve < 1 ? 1 : reserve > 16 ? 16 : reserve,
                           .evict_grace = 0.5,
                           .max_per_address = cfg->max_connections_per_address};
    h->guard = srv_guard_new(&gc, log);
    if (!h->guard) {
        snprintf(err, errcap, "cannot start the connection guard");
        return -1;
    }
    int fd = open_listener(h, cfg->listen_host, cfg->listen_port, err, errcap);
    if (fd < 0) {
        srv_guard_free(h->guard);
        h->guard = NULL;
        return -1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_USE_ERROR_LOG;
    h->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, h,
        MHD_OPTION_LISTEN_SOCKET, fd,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)cfg->max_connections + SHED_HEADROOM, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned)cfg->http_timeout, MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONNECTION_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
        /* request acceptance: per-address cap, deadlines (server/guard.h) */
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, h, MHD_OPTION_URI_LOG_CALLBACK, on_uri, h,
        /* %00 stays encoded, so that a path cannot be cut short (api/web.c) */
        MHD_OPTION_UNESCAPE_CALLBACK, unescape_keep_nul, NULL, MHD_OPTION_END);
    if (!h->daemon) {
        close(fd);
        srv_guard_free(h->guard);
        h->guard = NULL;
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
    srv_guard_free(h->guard); /* after the daemon: no connection reports any more */
    h->guard = NULL;
    h->daemon = NULL;
    h->quiesced_fd = -1;
}
