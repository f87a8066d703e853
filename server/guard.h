/*
 * guard.h — deadlines for slow clients (slowloris), enforced on every HTTP
 * connection of the daemon (server/http.c).
 *
 * libmicrohttpd's own timeout is an idle timeout: it restarts with every
 * byte, so a client sending one header byte every few seconds keeps its
 * connection (and a slot of the connection table) for ever. The guard
 * tracks each connection's phase and closes it (shutdown(2) on its socket;
 * the daemon then sees the end of the stream and cleans up on its own
 * thread) when a phase outlives its deadline, whatever the byte rate:
 *
 *   HEADERS  the request line and headers: header_timeout seconds, counted
 *            from the accept (first request) or from the request line
 *            (later requests of a kept-alive connection)
 *   BODY     at least min_body_rate bytes per second on average once
 *            header_timeout seconds of grace have passed
 *   IDLE     between two requests of a kept-alive connection: idle_timeout
 *            seconds in all (bytes of a request line trickling in do not
 *            restart it)
 *   BUSY     the handler runs, or the answer is sent: no deadline here
 *            (the daemon's idle timeout covers a client that stops reading)
 *
 * It caps the connections of one client address (srv_guard_open), and
 * it keeps room for /health and /ready when the connection table is
 * full: while more than max_connections - reserve connections are open, it
 * closes every connection still in HEADERS after evict_grace seconds, so
 * that a probe (whose headers arrive at once) finds a free slot.
 *
 * Thread-safe: the daemon's threads report phases; one thread of the guard
 * checks the deadlines four times a second.
 */
#ifndef PERFCAST_SERVER_GUARD_H
#define PERFCAST_SERVER_GUARD_H

#include <stddef.h>

#include "server/log.h"

typedef struct srv_guard srv_guard;
typedef struct srv_guard_conn srv_guard_conn;

/* A client address as the guard compares them: family and address bytes. */
typedef struct srv_guard_addr {
    int family;
    unsigned char bytes[16];
} srv_guard_addr;

typedef struct srv_guard_config {
    double header_timeout; /* seconds */
    double idle_timeout;   /* seconds */
    double min_body_rate;  /* bytes per second; 0: no body deadline */
    int max_connections;   /* the daemon's connection limit */
    int reserve;           /* slots kept for quick requests (probes) */
    double evict_grace;    /* seconds a HEADERS connection is safe from eviction */
    int max_per_address;   /* connections of one address; 0: no cap */
} srv_guard_config;

/* Starts the guard's thread. NULL when out of memory or threads. */
srv_guard *srv_guard_new(const srv_guard_config *cfg, srv_log *log);
/* Stops the thread and frees; connections still tracked are forgotten. */
void srv_guard_free(srv_guard *g);

/* A connection was accepted on socket fd from addr: tracked in HEADERS.
 * NULL when out of memory (the connection then goes unguarded).
 *
 * The per-address cap: a connection beyond max_per_address of its address
 * is not refused at accept (a health probe from a busy address must still
 * get through) but marked; the server answers its request 429 unless it is
 * /health or /ready, and the guard closes it if its headers are not in
 * within evict_grace seconds. */
srv_guard_conn *srv_guard_open(srv_guard *g, int fd, const srv_guard_addr *addr);
/* 1 when c is beyond its address's cap (see above). */
int srv_guard_over_cap(const srv_guard_conn *c);
/* The connection is closed (before its socket is): forgotten. */
void srv_guard_close(srv_guard *g, srv_guard_conn *c);

/* Phase changes; each accepts NULL. */
void srv_guard_request_line(srv_guard *g, srv_guard_conn *c); /* a request line arrived */
void srv_guard_body(srv_guard *g, srv_guard_conn *c);         /* headers complete */
void srv_guard_body_bytes(srv_guard_conn *c, size_t n);       /* n more body bytes */
void srv_guard_busy(srv_guard *g, srv_guard_conn *c);         /* body complete */
void srv_guard_idle(srv_guard *g, srv_guard_conn *c);         /* answer sent */

/* Connections closed so far for a deadline, and for room (evictions). */
void srv_guard_counts(srv_guard *g, long long *deadline, long long *evicted, int *open);

#endif
