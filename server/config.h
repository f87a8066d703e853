/*
 * config.h — the settings of `perfcast serve` and `perfcast migrate`: from
 * the environment first, then flags, which override.
 *
 *   DATABASE_URL            --database-url URL   required
 *   PERFCAST_LISTEN         --listen HOST:PORT   127.0.0.1:8080 (port 0: any free port)
 *   PERFCAST_WORKERS        --workers N          number of online cores
 *   PERFCAST_HTTP_THREADS   --http-threads N     2 x cores, at least 4
 *   PERFCAST_MAX_BODY       --max-body SIZE      1GiB (suffixes K, M, G, KiB, MiB, GiB)
 *   PERFCAST_DB_POOL        --db-pool N          http threads + workers, at most 32
 *   PERFCAST_MAX_CONNECTIONS --max-connections N 1024
 *   PERFCAST_HTTP_TIMEOUT   --http-timeout SECONDS 60 (idle connection timeout)
 *   PERFCAST_JOB_LEASE      --job-lease SECONDS  30 (a claimed job's lease; heartbeats renew it)
 *   PERFCAST_LOG_LEVEL      --log-level LEVEL    info (debug, info, warn, error)
 *   PERFCAST_INSECURE=1     --insecure           serve without tokens on a non-loopback address
 *   PERFCAST_RATE_LIMIT     --rate-limit N       requests per second per token, 50 (0: off)
 *   PERFCAST_RATE_BURST     --rate-burst N       a token's burst, 100
 *   PERFCAST_MAX_UPLOADS    --max-uploads N      uploads in progress per tenant, 4 (0: off)
 *   PERFCAST_MAX_REQUEST_BODY --max-request-body SIZE  body limit of routes other than
 *                                                uploads, 16MiB
 *   PERFCAST_IDEMPOTENCY_TTL --idempotency-ttl SECONDS  86400 (an Idempotency-Key's life)
 *   PERFCAST_WEB_DIR        --web-dir DIR        the dashboard's files (web/ of the build's
 *                                                repository when unset)
 */
#ifndef PERFCAST_SERVER_CONFIG_H
#define PERFCAST_SERVER_CONFIG_H

#include <stddef.h>

typedef struct srv_config {
    const char *database_url; /* from the environment or argv: not owned */
    char listen_host[256];    /* "" = every interface */
    int listen_port;
    int workers;
    int http_threads;
    size_t max_body;
    int db_pool;
    int max_connections;
    int http_timeout;
    int job_lease; /* seconds */
    int log_level; /* srv_log level */
    int insecure;  /* open mode allowed on any address */
    double rate_limit, rate_burst;
    int max_uploads;
    size_t max_request_body; /* non-upload routes; max_body is the uploads' */
    /* request acceptance (README "Limits and hardening") */
    int header_timeout;              /* seconds for a request's header block */
    int min_body_rate;               /* bytes per second a body must average; 0 off */
    int max_connections_per_address; /* 0: no cap */
    double bad_token_rate;           /* refused tokens per second per address; 0 off */
    int max_callpaths;               /* distinct callpaths of one upload */
    int max_experiment_callpaths;    /* distinct callpaths of one experiment */
    long long max_trace_events;      /* events of one trace, after decompression */
    long long max_iteration_events;  /* events of interest of one iteration analysis's traces */
    long long max_iteration_bytes;   /* stored bytes of one trace an iteration analysis reads */
    const char *web_dir;     /* the dashboard's folder; NULL: next to the executable */
    int idempotency_ttl;     /* seconds an Idempotency-Key and its answer are kept */
} srv_config;

/* Fills cfg from the environment and argv (argv[0] is the command name).
 * Returns 0, 1 when --help was asked (the caller prints usage), or -1 with a
 * message naming the variable or flag in err. */
int srv_config_load(srv_config *cfg, int argc, char **argv, char *err, size_t errcap);

/* The flags, for usage texts. */
extern const char srv_config_usage[];

#endif
