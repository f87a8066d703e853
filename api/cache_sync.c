/*
 * cache_sync.c — the cache invalidation listener (see cache_sync.h), and
 * the thread that warms what a notice of new models made stale
 * (api/stats_warm.h): notices only queue the experiment, so that hearing
 * them and reloading tokens never waits for a warm.
 */
#include "api/cache_sync.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/auth_cache.h"
#include "api/stats_warm.h"
#include "store/notify.h"
#include "store/tokens.h"

/* Tokens in use are reloaded once older than SYNC_REFRESH_AGE_MS, checked
 * every SYNC_REFRESH_EVERY_MS: well before AUTH_CACHE_TOKEN_MS. */
#define SYNC_REFRESH_EVERY_MS 100
#define SYNC_REFRESH_AGE_MS 200
#define SYNC_REFRESH_MAX 64 /* tokens reloaded per round */

#define SYNC_WARM_QUEUE 64 /* experiments waiting to be warmed; beyond, not warmed */

struct cache_sync {
    api_ctx *ctx;
    pthread_t thread;
    int stop_pipe[2];
    _Atomic int listening;
    /* the warm queue, a ring, and its thread */
    pthread_t warm_thread;
    int warm_started;
    pthread_mutex_t warm_mu;
    pthread_cond_t warm_cv;
    int64_t warm_queue[SYNC_WARM_QUEUE];
    int warm_head, warm_count, warm_stop;
};

/* Queues the experiment for warming when its statistics were asked for
 * before (model_cache_warm_begin marks it, so requests wait for it). */
static void warm_enqueue(cache_sync *s, int64_t experiment)
{
    model_cache *models = s->ctx->models;
    if (!models || !s->warm_started || !model_cache_warm_begin(models, experiment))
        return;
    pthread_mutex_lock(&s->warm_mu);
    int queued = s->warm_count < SYNC_WARM_QUEUE && !s->warm_stop;
    if (queued) {
        s->warm_queue[(s->warm_head + s->warm_count++) % SYNC_WARM_QUEUE] = experiment;
        pthread_cond_signal(&s->warm_cv);
    }
    pthread_mutex_unlock(&s->warm_mu);
    if (!queued)
        model_cache_warm_end(models, experiment);
}

static void *warm_main(void *arg)
{
    cache_sync *s = arg;
    pthread_mutex_lock(&s->warm_mu);
    for (;;) {
        while (!s->warm_count && !s->warm_stop)
            pthread_cond_wait(&s->warm_cv, &s->warm_mu);
        if (!s->warm_count)
            break; /* asked to stop, nothing left */
        int64_t experiment = s->warm_queue[s->warm_head];
        s->warm_head = (s->warm_head + 1) % SYNC_WARM_QUEUE;
        s->warm_count--;
        int stop = s->warm_stop;
        pthread_mutex_unlock(&s->warm_mu);
        if (!stop)
            api_statistics_warm(s->ctx, experiment);
        model_cache_warm_end(s->ctx->models, experiment);
        pthread_mutex_lock(&s->warm_mu);
    }
    pthread_mutex_unlock(&s->warm_mu);
    return NULL;
}

static void set_coherent(cache_sync *s, int coherent)
{
    if (s->ctx->models)
        model_cache_set_coherent(s->ctx->models, coherent);
    if (s->ctx->auth)
        auth_cache_set_coherent(s->ctx->auth, coherent);
    s->listening = coherent;
}

/* Drops what one notice names; unknown notices are ignored. */
static void apply(cache_sync *s, const char *payload)
{
    char what[32];
    int64_t id;
    if (sscanf(payload, "%31s %" SCNd64, what, &id) != 2)
        return;
    api_ctx *ctx = s->ctx;
    if (!strcmp(what, "models") || !strcmp(what, "experiment")) {
        if (ctx->models)
            model_cache_forget(ctx->models, id);
        if (!strcmp(what, "models"))
            warm_enqueue(s, id);
        if (ctx->auth && !strcmp(what, "experiment"))
            auth_cache_owner_forget(ctx->auth, id);
    } else if (!strcmp(what, "token") && ctx->auth) {
        auth_cache_token_forget(ctx->auth, id);
    }
}

static PGconn *listen_conn(cache_sync *s)
{
    store_error err;
    PGconn *c = store_connect(s->ctx->db, &err);
    if (!c)
        return NULL;
    PGresult *r = PQexec(c, "LISTEN " STORE_CACHE_CHANNEL);
    int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok) {
        PQfinish(c);
        return NULL;
    }
    /* what changed before we listened was not heard: start afresh */
    if (s->ctx->models)
        model_cache_flush(s->ctx->models);
    if (s->ctx->auth)
        auth_cache_flush(s->ctx->auth);
    set_coherent(s, 1);
    return c;
}

/* Reloads the tokens in use that are due (auth_cache_token_due) on the
 * listening connection; notices that arrive meanwhile are applied after
 * (a revocation that the reload did not see then drops the entry). */
static void refresh_tokens(cache_sync *s, PGconn *c)
{
    int64_t ids[SYNC_REFRESH_MAX];
    auth_cache *cache = s->ctx->auth;
    int n = cache ? auth_cache_token_due(cache, SYNC_REFRESH_AGE_MS, ids, SYNC_REFRESH_MAX) : 0;
    for (int i = 0; i < n; i++) {
        auth_stamp epoch = auth_cache_epoch(cache);
        store_token t;
        store_error err;
        int rc = store_token_get(c, ids[i], &t, &err);
        if (rc == 0)
            auth_cache_token_put(cache, &t, epoch);
        else if (rc == STORE_NOT_FOUND)
            auth_cache_token_forget(cache, ids[i]);
        else
            break; /* the connection's trouble shows below */
    }
}

/* 0 to go on, 1 when asked to stop. */
static int wait_input(cache_sync *s, PGconn *c, int ms)
{
    struct pollfd fds[2] = {{.fd = s->stop_pipe[0], .events = POLLIN},
                            {.fd = c ? PQsocket(c) : -1, .events = POLLIN}};
    int n = poll(fds, 2, ms);
    if (n < 0 && errno != EINTR)
        usleep(100000);
    return n > 0 && (fds[0].revents & POLLIN);
}

static void *sync_main(void *arg)
{
    cache_sync *s = arg;
    PGconn *c = NULL;
    for (;;) {
        if (!c)
            c = listen_conn(s);
        /* a second without a connection, then reconnect; with one, often
         * enough to reload the tokens in use before they expire */
        if (wait_input(s, c, c ? SYNC_REFRESH_EVERY_MS : 1000))
            break;
        if (!c)
            continue;
        PGnotify *note;
        if (PQconsumeInput(c) && PQstatus(c) == CONNECTION_OK) {
            while ((note = PQnotifies(c))) {
                apply(s, note->extra);
                PQfreemem(note);
            }
            refresh_tokens(s, c);
            while ((note = PQnotifies(c))) {
                apply(s, note->extra);
                PQfreemem(note);
            }
            if (PQstatus(c) == CONNECTION_OK)
                continue;
        }
        set_coherent(s, 0); /* lost: entries expire by age until we listen again */
        PQfinish(c);
        c = NULL;
    }
    set_coherent(s, 0);
    PQfinish(c);
    return NULL;
}

/* Stops the warm thread: what is queued is given up (its waiters go on). */
static void warm_stop(cache_sync *s)
{
    if (s->warm_started) {
        pthread_mutex_lock(&s->warm_mu);
        s->warm_stop = 1;
        pthread_cond_signal(&s->warm_cv);
        pthread_mutex_unlock(&s->warm_mu);
        pthread_join(s->warm_thread, NULL);
    }
    pthread_cond_destroy(&s->warm_cv);
    pthread_mutex_destroy(&s->warm_mu);
}

cache_sync *cache_sync_start(api_ctx *ctx)
{
    cache_sync *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ctx = ctx;
    if (pipe(s->stop_pipe)) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->warm_mu, NULL);
    pthread_cond_init(&s->warm_cv, NULL);
    /* without the warm thread notices still drop entries; nothing is warmed */
    s->warm_started = ctx->models && !pthread_create(&s->warm_thread, NULL, warm_main, s);
    if (pthread_create(&s->thread, NULL, sync_main, s)) {
        warm_stop(s);
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
        free(s);
        return NULL;
    }
    return s;
}

void cache_sync_stop(cache_sync *s)
{
    if (!s)
        return;
    if (write(s->stop_pipe[1], "x", 1) != 1) {
        /* the thread still sees the pipe close below */
    }
    close(s->stop_pipe[1]);
    pthread_join(s->thread, NULL);
    warm_stop(s);
    close(s->stop_pipe[0]);
    free(s);
}

int cache_sync_listening(const cache_sync *s)
{
    return s ? s->listening : 0;
}
