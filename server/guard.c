/*
 * guard.c — per-connection deadlines and room for probes (see
 * server/guard.h). Connections are a doubly linked list in accept order
 * under one mutex; the checking thread walks it every 250 ms. A connection
 * is closed by shutdown(2) of its socket, at most once: the daemon notices
 * the end of the stream and closes it on its own thread, and tells us
 * (srv_guard_close) before it closes the descriptor, so the descriptor a
 * shutdown names is always still this connection's.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/guard.h"

enum phase { PH_HEADERS, PH_BODY, PH_BUSY, PH_IDLE };

struct srv_guard_conn {
    srv_guard_conn *prev, *next;
    int fd;
    enum phase phase;
    double since; /* seconds (monotonic) the phase began */
    _Atomic unsigned long long body; /* body bytes of the current request */
    int closing;  /* shut down already */
    int over_cap; /* beyond its address's cap */
    srv_guard_addr addr;
};

struct srv_guard {
    srv_guard_config cfg;
    srv_log *log;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    srv_guard_conn *head, *tail;
    int open;
    int stop;
    pthread_t thread;
    long long deadline_closed, evicted;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void shut(srv_guard_conn *c)
{
    if (!c->closing) {
        c->closing = 1;
        shutdown(c->fd, SHUT_RDWR);
    }
}

/* Why c is past its deadline at now, or NULL. */
static const char *overdue(const srv_guard *g, const srv_guard_conn *c, double now)
{
    double age = now - c->since;
    switch (c->phase) {
    case PH_HEADERS:
        if (c->over_cap && age > g->cfg.evict_grace)
            return "too many connections from its address";
        return age > g->cfg.header_timeout ? "header block too slow" : NULL;
    case PH_IDLE:
        return age > g->cfg.idle_timeout ? "idle" : NULL;
    case PH_BODY:
        if (g->cfg.min_body_rate > 0 && age > g->cfg.header_timeout &&
            (double)atomic_load(&c->body) <
                g->cfg.min_body_rate * (age - g->cfg.header_timeout))
            return "body too slow";
        return NULL;
    case PH_BUSY:
        return NULL;
    }
    return NULL;
}

/* One round: deadlines, then room for probes. Under mu. */
static void check(srv_guard *g)
{
    double now = now_s();
    int shut_now = 0, evict_now = 0;
    for (srv_guard_conn *c = g->head; c; c = c->next)
        if (!c->closing && overdue(g, c, now)) {
            shut(c);
            shut_now++;
        }
    /* connections shut down but not yet cleaned up still hold their slot */
    int live = 0;
    for (srv_guard_conn *c = g->head; c; c = c->next)
        live += !c->closing;
    /* Under pressure every connection still in its header block after the
     * grace goes, not just enough of them: connections waiting in the
     * listen backlog are accepted in arrival order, so a probe behind a
     * queue of slow clients gets in only once that queue has drained. */
    int room = g->cfg.max_connections - g->cfg.reserve;
    if (live > room)
        for (srv_guard_conn *c = g->head; c; c = c->next)
            if (!c->closing && c->phase == PH_HEADERS && now - c->since > g->cfg.evict_grace) {
                shut(c);
                evict_now++;
            }
    g->deadline_closed += shut_now;
    g->evicted += evict_now;
    if ((shut_now || evict_now) && srv_log_enabled(g->log, SRV_LOG_DEBUG))
        srv_logf(g->log, SRV_LOG_DEBUG, "slow connections closed", "{s:i, s:i, s:i}",
                 "deadline", shut_now, "evicted", evict_now, "open", g->open);
}

static void *run(void *arg)
{
    srv_guard *g = arg;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&g->cv, &g->mu, &ts);
        if (!g->stop)
            check(g);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

srv_guard *srv_guard_new(const srv_guard_config *cfg, srv_log *log)
{
    srv_guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->cfg = *cfg;
    g->log = log;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    if (pthread_create(&g->thread, NULL, run, g)) {
        pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g);
        return NULL;
    }
    return g;
}

void srv_guard_free(srv_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->stop = 1;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    for (srv_guard_conn *c = g->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

static int same_addr(const srv_guard_addr *a, const srv_guard_addr *b)
{
    return a->family == b->family && !memcmp(a->bytes, b->bytes, sizeof a->bytes);
}

srv_guard_conn *srv_guard_open(srv_guard *g, int fd, const srv_guard_addr *addr)
{
    srv_guard_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->fd = fd;
    c->phase = PH_HEADERS;
    c->since = now_s();
    if (addr)
        c->addr = *addr;
    pthread_mutex_lock(&g->mu);
    if (addr && g->cfg.max_per_address > 0) {
        int same = 0; /* a walk of the list: cheap next to an accept */
        for (srv_guard_conn *o = g->head; o; o = o->next)
            same += !o->closing && !o->over_cap && same_addr(&o->addr, addr);
        c->over_cap = same >= g->cfg.max_per_address;
    }
    c->prev = g->tail;
    if (g->tail)
        g->tail->next = c;
    else
        g->head = c;
    g->tail = c;
    g->open++;
    pthread_mutex_unlock(&g->mu);
    return c;
}

void srv_guard_close(srv_guard *g, srv_guard_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->prev)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        g->tail = c->prev;
    g->open--;
    pthread_mutex_unlock(&g->mu);
    free(c);
}

static void set_phase(srv_guard *g, srv_guard_conn *c, enum phase p, int keep_since)
{
    if (!c)
        return;
    pthread_mutex_lock(&g->mu);
    if (!keep_since)
        c->since = now_s();
    c->phase = p;
    pthread_mutex_unlock(&g->mu);
}

void srv_guard_request_line(srv_guard *g, srv_guard_conn *c)
{
    /* the first request's header deadline runs from the accept */
    if (c && c->phase == PH_IDLE)
        set_phase(g, c, PH_HEADERS, 0);
}

void srv_guard_body(srv_guard *g, srv_guard_conn *c)
{
    if (c)
        atomic_store(&c->body, 0);
    set_phase(g, c, PH_BODY, 0);
}

void srv_guard_body_bytes(srv_guard_conn *c, size_t n)
{
    if (c)
        atomic_fetch_add(&c->body, n);
}

void srv_guard_busy(srv_guard *g, srv_guard_conn *c)
{
    set_phase(g, c, PH_BUSY, 0);
}

void srv_guard_idle(srv_guard *g, srv_guard_conn *c)
{
    set_phase(g, c, PH_IDLE, 0);
}

void srv_guard_counts(srv_guard *g, long long *deadline, long long *evicted, int *open)
{
    pthread_mutex_lock(&g->mu);
    *deadline = g->deadline_closed;
    *evicted = g->evicted;
    *open = g->open;
    pthread_mutex_unlock(&g->mu);
}

int srv_guard_over_cap(const srv_guard_conn *c)
{
    return c && c->over_cap;
}
