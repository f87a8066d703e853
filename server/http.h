/*
 * http.h — the libmicrohttpd daemon of `perfcast serve`: the listening
 * socket, an internal thread pool with a connection limit and an idle
 * timeout, bodies accumulated up to the size limit, each request handed to
 * api_dispatch(), and one log line plus metrics per finished request.
 */
#ifndef PERFCAST_SERVER_HTTP_H
#define PERFCAST_SERVER_HTTP_H

#include <stddef.h>

#include "api/api.h"
#include "server/config.h"
#include "server/guard.h"
#include "server/log.h"

struct MHD_Daemon;

typedef struct srv_http {
    struct MHD_Daemon *daemon;
    int quiesced_fd; /* the listening socket once quiesced, else -1 */
    char host[256];  /* as bound, for logs */
    int port;        /* as bound (also when PERFCAST_LISTEN asked for port 0) */
    size_t max_body;         /* uploads */
    size_t max_request_body; /* every other route */
    api_ctx *api;
    srv_log *log;
    _Atomic int inflight; /* requests between their first byte and completion */
    srv_guard *guard;     /* deadlines of slow connections (server/guard.h) */
    int max_per_address;  /* connections of one client address (guard's cap) */
    /* overload (see shed() in http.c): connections open now, and how many
     * may be before requests other than /health and /ready get 503 */
    _Atomic int connections;
    int max_connections;
} srv_http;

/* Binds cfg's address and starts serving. Returns 0, or -1 with err. */
int srv_http_start(srv_http *h, const srv_config *cfg, api_ctx *api, srv_log *log, char *err,
                   size_t errcap);
/* Stops accepting connections; requests in progress go on. */
void srv_http_quiesce(srv_http *h);
int srv_http_inflight(srv_http *h);
/* Closes every connection and joins the threads. */
void srv_http_stop(srv_http *h);

#endif
