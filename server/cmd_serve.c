/*
 * cmd_serve.c — `perfcast serve`: the HTTP service.
 *
 * Start: configuration (server/config.h), the store pool, migrations, the
 * worker pool (server/workers.h), then the HTTP daemon (server/http.h).
 * When the database is down at start the daemon serves anyway — /health
 * answers, /ready and database routes answer 503 — and the main thread
 * retries the migrations every second until they are applied.
 *
 * Authentication (api/auth.h): on a loopback address without any token the
 * service runs open, and says so in its log; on any other address it
 * refuses to start while no token exists, unless --insecure. Once a token
 * exists every /v1 request needs one.
 *
 * Signals: SIGINT and SIGTERM are blocked in every thread and taken by the
 * main thread with sigtimedwait(), so no handler and no global state is
 * needed. On either, the daemon stops accepting, requests in progress get
 * up to DRAIN_SECONDS to finish, then the daemon, the workers and the pool
 * stop in that order, and the process exits 0.
 */
#include <arpa/inet.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "api/auth_cache.h"
#include "api/cache_sync.h"
#include "api/handlers.h"
#include "api/limits.h"
#include "common/memtrim.h"
#include "server/commands.h"
#include "server/crash.h"
#include "server/config.h"
#include "server/http.h"
#include "server/log.h"
#include "server/test_hooks.h"
#include "server/workers.h"

#define LOG_BATCH_MS 50 /* debug/info lines reach the log at most this late */
#define DRAIN_SECONDS 10
#define SERVE_MMAP_THRESHOLD (32 << 20) /* blocks up to this come from the heap */
#define SERVE_TRIM_THRESHOLD (64 << 20) /* free heap top kept, per arena */
#define MODEL_CACHE_MAX_AGE_MS 1000 /* while notices are not heard: a refit reaches predictions within 1 s */

static void usage(FILE *to)
{
    fprintf(to, "usage: perfcast serve [OPTIONS]\n"
                "Serves the HTTP API; flags override the environment.\n\n%s",
            srv_config_usage);
}

/* /metrics collector: the store pool's slots. */
static void pool_metrics(void *arg, FILE *out)
{
    int size, busy, connected;
    store_stats(arg, &size, &busy, &connected);
    fprintf(out,
            "# HELP perfcast_db_pool_size Database connections the pool may hold.\n"
            "# TYPE perfcast_db_pool_size gauge\n"
            "perfcast_db_pool_size %d\n"
            "# HELP perfcast_db_pool_connections Database pool connections by state.\n"
            "# TYPE perfcast_db_pool_connections gauge\n"
            "perfcast_db_pool_connections{state=\"open\"} %d\n"
            "perfcast_db_pool_connections{state=\"in_use\"} %d\n",
            size, connected, busy);
}

/* Whether host (as configured) names a loopback address only. */
static int is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (!strcmp(host, "localhost"))
        return 1;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return 0;
}

/* Decides open mode; -1 when the service must not start. */
/* The dashboard's folder: the one configured, else web/ beside the folder
 * of the executable (build/perfcast in a checkout -> web/), else
 * /usr/share/perfcast/web (an installed copy); NULL when none exists. */
static const char *find_web_dir(const char *configured, char *buf, size_t cap)
{
    if (configured)
        return configured;
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int len = snprintf(buf, cap, "%.4000s/../web", exe);
            if (len > 0 && (size_t)len < cap && access(buf, R_OK | X_OK) == 0)
                return buf;
        }
    }
    snprintf(buf, cap, "/usr/share/perfcast/web");
    return access(buf, R_OK | X_OK) == 0 ? buf : NULL;
}

static int auth_mode(api_ctx *api, const srv_config *cfg, srv_log *log)
{
    int loopback = is_loopback(cfg->listen_host);
    api->open_ok = loopback || cfg->insecure;
    int exist = -1; /* unknown: the database is not reachable yet */
    if (api->schema_ready) {
        store_error err;
        PGconn *c = store_acquire(api->db, &err);
        if (c && !store_tokens_exist(c, &exist, &err))
            api->tokens_exist = exist;
        else
            exist = -1;
        store_release(api->db, c);
    }
    if (!api->open_ok && exist == 0) {
        srv_logf(log, SRV_LOG_ERROR, "refusing to serve without tokens on a non-loopback address",
                 "{s:s, s:s}", "listen_host", *cfg->listen_host ? cfg->listen_host : "*", "hint",
                 "create a token first (perfcast token create --tenant NAME --scope admin), "
                 "listen on 127.0.0.1, or pass --insecure (PERFCAST_INSECURE=1)");
        return -1;
    }
    const char *mode = exist == 0 ? "open" : "tokens";
    srv_logf(log, exist == 0 ? SRV_LOG_WARN : SRV_LOG_INFO, "authentication", "{s:s, s:s}",
             "mode", mode, "detail",
             exist == 0 ? "OPEN MODE: no API token exists, every request acts as an admin of the "
                          "default tenant; creating the first token ends open mode"
             : exist < 0 ? "the database is not reachable yet; /v1 requests need a token "
                           "unless none exists once it is"
                         : "every /v1 request needs an Authorization: Bearer token");
    return 0;
}

/* Migrations done: workers start, database routes open. 0 or -1. */
static int schema_ready(api_ctx *api, srv_workers *workers, const srv_config *cfg, srv_log *log)
{
    char err[256];
    if (srv_workers_start(workers, cfg->workers, cfg->job_lease, api->db, log, err,
                          sizeof err)) {
        srv_logf(log, SRV_LOG_ERROR, "cannot start the workers", "{s:s}", "error", err);
        return -1;
    }
    api->schema_ready = 1;
    return 0;
}

/* Waits for SIGINT/SIGTERM, retrying migrations meanwhile if still needed.
 * Returns the exit status. */
static int run(api_ctx *api, srv_workers *workers, const srv_config *cfg, srv_log *log,
               const sigset_t *stop)
{
    int waited = 0;
    for (;;) {
        struct timespec tick = {1, 0};
        siginfo_t si;
        int sig = sigtimedwait(stop, &si, &tick);
        if (sig > 0) {
            srv_logf(log, SRV_LOG_INFO, "stopping", "{s:s}", "signal",
                     sig == SIGINT ? "SIGINT" : "SIGTERM");
            return 0;
        }
        if (api->schema_ready)
            continue;
        waited++;
        int m = srv_migrate(log, api->db, waited % 30 != 0);
        if (m < 0 || (m == 1 && schema_ready(api, workers, cfg, log)))
            return 1;
    }
}

int cmd_serve(int argc, char **argv)
{
    srv_config cfg;
    char err[512];
    int rc = srv_config_load(&cfg, argc, argv, err, sizeof err);
    if (rc == 1) {
        usage(stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "perfcast serve: %s\n", err);
        usage(stderr);
        return 2;
    }

    /* before any thread exists, so that all of them inherit the mask; a
     * disposition inherited as "ignore" (background jobs of a shell) would
     * discard the signals, so restore the default first */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* a refit that crashes the process fails its job first (server/crash.h) */
    srv_crash_install();

    /* Answers of several MB (statistics of 10,000 points: 5 MB) would each
     * be mapped afresh and every page faulted in again; kept in the heap
     * instead, their pages are reused. Jobs and large uploads give theirs
     * back afterwards, the top of their thread's arena included, which this
     * threshold would keep (memtrim in server/workers.c, server/http.c). */
    mallopt(M_MMAP_THRESHOLD, SERVE_MMAP_THRESHOLD);
    memtrim_init(SERVE_TRIM_THRESHOLD);

    srv_log log;
    srv_log_init(&log, stderr, cfg.log_level);
    srv_logf(&log, SRV_LOG_INFO, "starting", "{s:s, s:i, s:i, s:i, s:i, s:I, s:i, s:i}",
             "listen_host", cfg.listen_host, "listen_port", cfg.listen_port, "http_threads",
             cfg.http_threads, "workers", cfg.workers, "db_pool", cfg.db_pool, "max_body",
             (json_int_t)cfg.max_body, "max_connections", cfg.max_connections, "http_timeout",
             cfg.http_timeout);

    api_ctx api = {.db = store_open(cfg.database_url, cfg.db_pool),
                   .metrics = api_metrics_new(),
                   .models = model_cache_new(MODEL_CACHE_MAX_AGE_MS),
                   .limits = api_limits_new(cfg.rate_limit, cfg.rate_burst, cfg.max_uploads),
                   .auth = auth_cache_new()};
    char web_dir[4096];
    api.web_dir = find_web_dir(cfg.web_dir, web_dir, sizeof web_dir);
    srv_logf(&log, SRV_LOG_INFO, "dashboard", "{s:s}", "web_dir",
             api.web_dir ? api.web_dir : "none (PERFCAST_WEB_DIR)");
    srv_workers workers = {0};
    srv_http http = {.quiesced_fd = -1};
    cache_sync *sync = NULL; /* keeps the caches coherent with other servers */
    int status = 1;
    if (api.limits) /* refused tokens per client address (api/limits.h) */
        api_limits_set_bad_tokens(api.limits, cfg.bad_token_rate, 20 * cfg.bad_token_rate);
    api.max_callpaths = cfg.max_callpaths;
    api.max_experiment_callpaths = cfg.max_experiment_callpaths;
    api.max_trace_events = cfg.max_trace_events;
    api.max_iteration_events = cfg.max_iteration_events;
    api.max_iteration_bytes = cfg.max_iteration_bytes;
    api.idempotency_ttl = cfg.idempotency_ttl;
    srv_test_hooks_apply(&api); /* nothing outside the test build */
    if (!api.db || !api.metrics || !api.models || !api.limits || !api.auth ||
        api_metrics_add_collector(api.metrics, pool_metrics, api.db) ||
        api_metrics_add_collector(api.metrics, api_jobs_metrics, api.db) ||
        api_metrics_add_collector(api.metrics, srv_workers_metrics, &workers)) {
        srv_logf(&log, SRV_LOG_ERROR, "out of memory", NULL);
        goto out;
    }
    int m = srv_migrate(&log, api.db, 0);
    if (m < 0 || (m == 1 && schema_ready(&api, &workers, &cfg, &log)))
        goto out;
    if (auth_mode(&api, &cfg, &log)) {
        status = 2;
        goto out;
    }
    sync = cache_sync_start(&api);
    if (srv_http_start(&http, &cfg, &api, &log, err, sizeof err)) {
        srv_logf(&log, SRV_LOG_ERROR, "cannot serve", "{s:s}", "error", err);
        goto out;
    }
    char url[300];
    snprintf(url, sizeof url, strchr(http.host, ':') ? "http://[%s]:%d" : "http://%s:%d",
             http.host, http.port);
    srv_logf(&log, SRV_LOG_INFO, "listening", "{s:s, s:s, s:i, s:b}", "url", url, "host",
             http.host, "port", http.port, "ready", (int)api.schema_ready);
    /* a request line per request: written in batches from now on */
    srv_log_batch(&log, LOG_BATCH_MS);

    status = run(&api, &workers, &cfg, &log, &stop);

    srv_http_quiesce(&http);
    for (int i = 0; i < DRAIN_SECONDS * 100 && srv_http_inflight(&http) > 0; i++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    if (srv_http_inflight(&http) > 0)
        srv_logf(&log, SRV_LOG_WARN, "requests cut off at shutdown", "{s:i}", "requests",
                 srv_http_inflight(&http));
out:
    srv_http_stop(&http);
    cache_sync_stop(sync);
    srv_workers_stop(&workers);
    store_close(api.db);
    api_metrics_free(api.metrics);
    model_cache_free(api.models);
    auth_cache_free(api.auth);
    api_limits_free(api.limits);
    srv_logf(&log, status ? SRV_LOG_ERROR : SRV_LOG_INFO, "stopped", "{s:i}", "exit_status",
             status);
    srv_log_destroy(&log);
    return status;
}
