/*
 * config.c — reads srv_config from the environment and flags (see
 * server/config.h). Every value is checked here, so a typo stops the
 * process at start with the name of the setting, not later.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server/config.h"
#include "server/log.h"

const char srv_config_usage[] =
    "  --database-url URL      PostgreSQL connection URI or key=value string (DATABASE_URL)\n"
    "  --listen HOST:PORT      address to serve on, default 127.0.0.1:8080 (PERFCAST_LISTEN)\n"
    "  --workers N             background worker threads, default: cores (PERFCAST_WORKERS)\n"
    "  --http-threads N        HTTP threads, default: 2 x cores, at least 4 (PERFCAST_HTTP_THREADS)\n"
    "  --max-body SIZE         largest request body, default 1GiB (PERFCAST_MAX_BODY)\n"
    "  --db-pool N             database connections, default: http threads + workers, at most 32\n"
    "                          (PERFCAST_DB_POOL)\n"
    "  --max-connections N     simultaneous HTTP connections, default 1024\n"
    "                          (PERFCAST_MAX_CONNECTIONS)\n"
    "  --http-timeout SECONDS  idle HTTP connection timeout, default 60 (PERFCAST_HTTP_TIMEOUT)\n"
    "  --job-lease SECONDS     lease of a claimed job, renewed while it runs, default 30\n"
    "                          (PERFCAST_JOB_LEASE)\n"
    "  --log-level LEVEL       debug, info, warn or error, default info (PERFCAST_LOG_LEVEL)\n"
    "  --insecure              serve without tokens (open mode) on a non-loopback address\n"
    "                          (PERFCAST_INSECURE=1)\n"
    "  --rate-limit N          requests per second per token, default 50, 0 off\n"
    "                          (PERFCAST_RATE_LIMIT)\n"
    "  --rate-burst N          requests a token may burst, default 100 (PERFCAST_RATE_BURST)\n"
    "  --max-uploads N         uploads in progress per tenant, default 4, 0 off\n"
    "                          (PERFCAST_MAX_UPLOADS)\n"
    "  --max-request-body SIZE largest body of routes other than uploads, default 16MiB\n"
    "                          (PERFCAST_MAX_REQUEST_BODY)\n"
    "  --header-timeout SECONDS   a request's whole header block, default 10\n"
    "                          (PERFCAST_HEADER_TIMEOUT)\n"
    "  --min-body-rate BYTES   bytes per second a body must average, default 1024, 0 off\n"
    "                          (PERFCAST_MIN_BODY_RATE)\n"
    "  --max-connections-per-address N  default 256, 0 off\n"
    "                          (PERFCAST_MAX_CONNECTIONS_PER_ADDRESS)\n"
    "  --bad-token-rate N      refused tokens per second per address, default 1, 0 off\n"
    "                          (PERFCAST_BAD_TOKEN_RATE)\n"
    "  --max-callpaths N       distinct callpaths of one upload, default 20000\n"
    "                          (PERFCAST_MAX_CALLPATHS)\n"
    "  --max-experiment-callpaths N  distinct callpaths of one experiment, default 50000\n"
    "                          (PERFCAST_MAX_EXPERIMENT_CALLPATHS)\n"
    "  --max-trace-events N    events of one trace after decompression, default 20000000\n"
    "                          (PERFCAST_MAX_TRACE_EVENTS)\n"
    "  --max-iteration-events N  events of interest of the traces of one per-iteration\n"
    "                          analysis together, default 1000000\n"
    "                          (PERFCAST_MAX_ITERATION_EVENTS)\n"
    "  --max-iteration-bytes BYTES  stored bytes of one trace a per-iteration analysis\n"
    "                          reads, default 256M (PERFCAST_MAX_ITERATION_BYTES)\n"
    "  --idempotency-ttl SECONDS  how long an Idempotency-Key and its answer are kept,\n"
    "                          default 86400 (PERFCAST_IDEMPOTENCY_TTL)\n"
    "  --web-dir DIR           the dashboard's files served under /, default the web/ folder\n"
    "                          next to the executable's build folder (PERFCAST_WEB_DIR)\n";

static int parse_int(const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* "1048576", "64K", "512MiB", "1G" -> bytes */
static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned long long mul = 1;
    if (!strcasecmp(end, "k") || !strcasecmp(end, "kib") || !strcasecmp(end, "kb"))
        mul = 1ULL << 10;
    else if (!strcasecmp(end, "m") || !strcasecmp(end, "mib") || !strcasecmp(end, "mb"))
        mul = 1ULL << 20;
    else if (!strcasecmp(end, "g") || !strcasecmp(end, "gib") || !strcasecmp(end, "gb"))
        mul = 1ULL << 30;
    else if (*end)
        return -1;
    if (v == 0 || v > (1ULL << 40) / mul)
        return -1;
    *out = (size_t)(v * mul);
    return 0;
}

/* "HOST:PORT", "[::1]:PORT", ":PORT" */
static int parse_listen(const char *s, char *host, size_t hostcap, int *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon)
        return -1;
    const char *h = s;
    size_t hlen = (size_t)(colon - s);
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') {
        h++;
        hlen -= 2;
    }
    if (hlen >= hostcap || memchr(h, '[', hlen) || memchr(h, ']', hlen))
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    return parse_int(colon + 1, 0, 65535, port);
}

/* One setting from its source text; name is the variable or flag. */
static int apply(srv_config *cfg, const char *key, const char *val, const char *name, char *err,
                 size_t errcap)
{
    const char *want = NULL;
    if (!strcmp(key, "database-url")) {
        cfg->database_url = val;
    } else if (!strcmp(key, "listen")) {
        if (parse_listen(val, cfg->listen_host, sizeof cfg->listen_host, &cfg->listen_port))
            want = "HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080";
    } else if (!strcmp(key, "workers")) {
        if (parse_int(val, 0, 1024, &cfg->workers))
            want = "an integer from 0 to 1024";
    } else if (!strcmp(key, "http-threads")) {
        if (parse_int(val, 1, 1024, &cfg->http_threads))
            want = "an integer from 1 to 1024";
    } else if (!strcmp(key, "max-body")) {
        if (parse_size(val, &cfg->max_body))
            want = "a size in bytes > 0, optionally with K, M or G (KiB, MiB, GiB), at most 1T";
    } else if (!strcmp(key, "db-pool")) {
        if (parse_int(val, 1, 1024, &cfg->db_pool))
            want = "an integer from 1 to 1024";
    } else if (!strcmp(key, "max-connections")) {
        if (parse_int(val, 1, 1000000, &cfg->max_connections))
            want = "an integer from 1 to 1000000";
    } else if (!strcmp(key, "http-timeout")) {
        if (parse_int(val, 1, 86400, &cfg->http_timeout))
            want = "a number of seconds from 1 to 86400";
    } else if (!strcmp(key, "job-lease")) {
        if (parse_int(val, 1, 86400, &cfg->job_lease))
            want = "a number of seconds from 1 to 86400";
    } else if (!strcmp(key, "insecure")) {
        if (parse_int(val, 0, 1, &cfg->insecure))
            want = "0 or 1";
    } else if (!strcmp(key, "rate-limit") || !strcmp(key, "rate-burst")) {
        int v;
        if (parse_int(val, 0, 1000000, &v))
            want = "an integer from 0 to 1000000";
        else if (key[5] == 'l')
            cfg->rate_limit = v;
        else
            cfg->rate_burst = v;
    } else if (!strcmp(key, "max-uploads")) {
        if (parse_int(val, 0, 100000, &cfg->max_uploads))
            want = "an integer from 0 to 100000";
    } else if (!strcmp(key, "max-request-body")) {
        if (parse_size(val, &cfg->max_request_body))
            want = "a size in bytes > 0, optionally with K, M or G (KiB, MiB, GiB), at most 1T";
    } else if (!strcmp(key, "header-timeout")) {
        if (parse_int(val, 1, 3600, &cfg->header_timeout))
            want = "a number of seconds from 1 to 3600";
    } else if (!strcmp(key, "min-body-rate")) {
        if (parse_int(val, 0, 1 << 30, &cfg->min_body_rate))
            want = "bytes per second from 0 to 1073741824";
    } else if (!strcmp(key, "max-connections-per-address")) {
        if (parse_int(val, 0, 1000000, &cfg->max_connections_per_address))
            want = "an integer from 0 to 1000000";
    } else if (!strcmp(key, "bad-token-rate")) {
        int v;
        if (parse_int(val, 0, 1000000, &v))
            want = "an integer from 0 to 1000000";
        else
            cfg->bad_token_rate = v;
    } else if (!strcmp(key, "max-callpaths")) {
        if (parse_int(val, 1, 100000000, &cfg->max_callpaths))
            want = "an integer from 1 to 100000000";
    } else if (!strcmp(key, "max-experiment-callpaths")) {
        if (parse_int(val, 1, 100000000, &cfg->max_experiment_callpaths))
            want = "an integer from 1 to 100000000";
    } else if (!strcmp(key, "max-trace-events")) {
        int v;
        if (parse_int(val, 1, 2000000000, &v))
            want = "an integer from 1 to 2000000000";
        else
            cfg->max_trace_events = v;
    } else if (!strcmp(key, "max-iteration-events")) {
        int v;
        if (parse_int(val, 1, 2000000000, &v))
            want = "an integer from 1 to 2000000000";
        else
            cfg->max_iteration_events = v;
    } else if (!strcmp(key, "max-iteration-bytes")) {
        size_t v;
        if (parse_size(val, &v))
            want = "a size in bytes > 0, optionally with K, M or G (KiB, MiB, GiB), at most 1T";
        else
            cfg->max_iteration_bytes = (long long)v;
    } else if (!strcmp(key, "idempotency-ttl")) {
        if (parse_int(val, 1, 30 * 86400, &cfg->idempotency_ttl))
            want = "a number of seconds from 1 to 2592000 (30 days)";
    } else if (!strcmp(key, "web-dir")) {
        cfg->web_dir = val;
    } else if (!strcmp(key, "log-level")) {
        cfg->log_level = srv_log_level_from_name(val);
        if (cfg->log_level < 0)
            want = "debug, info, warn or error";
    } else {
        snprintf(err, errcap, "unknown option %s", name);
        return -1;
    }
    if (want) {
        snprintf(err, errcap, "%s=\"%.100s\": expected %s", name, val, want);
        return -1;
    }
    return 0;
}

static const struct {
    const char *env;
    const char *key;
} env_names[] = {
    {"DATABASE_URL", "database-url"},
    {"PERFCAST_LISTEN", "listen"},
    {"PERFCAST_WORKERS", "workers"},
    {"PERFCAST_HTTP_THREADS", "http-threads"},
    {"PERFCAST_MAX_BODY", "max-body"},
    {"PERFCAST_DB_POOL", "db-pool"},
    {"PERFCAST_MAX_CONNECTIONS", "max-connections"},
    {"PERFCAST_HTTP_TIMEOUT", "http-timeout"},
    {"PERFCAST_JOB_LEASE", "job-lease"},
    {"PERFCAST_LOG_LEVEL", "log-level"},
    {"PERFCAST_INSECURE", "insecure"},
    {"PERFCAST_RATE_LIMIT", "rate-limit"},
    {"PERFCAST_RATE_BURST", "rate-burst"},
    {"PERFCAST_MAX_UPLOADS", "max-uploads"},
    {"PERFCAST_MAX_REQUEST_BODY", "max-request-body"},
    {"PERFCAST_HEADER_TIMEOUT", "header-timeout"},
    {"PERFCAST_MIN_BODY_RATE", "min-body-rate"},
    {"PERFCAST_MAX_CONNECTIONS_PER_ADDRESS", "max-connections-per-address"},
    {"PERFCAST_BAD_TOKEN_RATE", "bad-token-rate"},
    {"PERFCAST_MAX_CALLPATHS", "max-callpaths"},
    {"PERFCAST_MAX_EXPERIMENT_CALLPATHS", "max-experiment-callpaths"},
    {"PERFCAST_MAX_TRACE_EVENTS", "max-trace-events"},
    {"PERFCAST_MAX_ITERATION_EVENTS", "max-iteration-events"},
    {"PERFCAST_MAX_ITERATION_BYTES", "max-iteration-bytes"},
    {"PERFCAST_WEB_DIR", "web-dir"},
    {"PERFCAST_IDEMPOTENCY_TTL", "idempotency-ttl"},
};

/* Every flag is the key of one variable above. */
static int known_key(const char *key)
{
    for (size_t i = 0; i < sizeof env_names / sizeof *env_names; i++)
        if (!strcmp(env_names[i].key, key))
            return 1;
    return 0;
}

int srv_config_load(srv_config *cfg, int argc, char **argv, char *err, size_t errcap)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->listen_host, sizeof cfg->listen_host, "127.0.0.1");
    cfg->listen_port = 8080;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    cfg->workers = cores > 1024 ? 1024 : (int)cores;
    cfg->http_threads = cores < 2 ? 4 : cores > 512 ? 1024 : (int)(2 * cores);
    cfg->max_body = (size_t)1 << 30;
    cfg->db_pool = 0; /* derived below unless set */
    cfg->max_connections = 1024;
    cfg->http_timeout = 60;
    cfg->job_lease = 30;
    cfg->log_level = SRV_LOG_INFO;
    cfg->rate_limit = 50;
    cfg->rate_burst = 100;
    cfg->max_uploads = 4;
    cfg->max_request_body = (size_t)16 << 20;
    cfg->header_timeout = 10;
    cfg->min_body_rate = 1024;
    cfg->max_connections_per_address = 256;
    cfg->bad_token_rate = 1;
    cfg->max_callpaths = 20000;
    cfg->max_experiment_callpaths = 50000;
    cfg->max_trace_events = 20000000;
    cfg->max_iteration_events = 1000000;
    cfg->max_iteration_bytes = 256LL << 20;
    cfg->idempotency_ttl = 86400;

    for (size_t i = 0; i < sizeof env_names / sizeof *env_names; i++) {
        const char *v = getenv(env_names[i].env);
        if (v && *v && apply(cfg, env_names[i].key, v, env_names[i].env, err, errcap))
            return -1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            return 1;
        if (strncmp(a, "--", 2)) {
            snprintf(err, errcap, "unexpected argument \"%s\"", a);
            return -1;
        }
        char key[64];
        const char *eq = strchr(a, '='), *val;
        size_t klen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (klen >= sizeof key) {
            snprintf(err, errcap, "unknown option %.80s", a);
            return -1;
        }
        memcpy(key, a + 2, klen);
        key[klen] = '\0';
        if (!known_key(key)) {
            snprintf(err, errcap, "unknown option --%s (see perfcast serve --help)", key);
            return -1;
        }
        if (eq) {
            val = eq + 1;
        } else if (!strcmp(key, "insecure")) {
            val = "1"; /* a switch */
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            snprintf(err, errcap, "option %s needs a value", a);
            return -1;
        }
        char name[80];
        snprintf(name, sizeof name, "--%s", key);
        if (apply(cfg, key, val, name, err, errcap))
            return -1;
    }
    if (!cfg->database_url || !*cfg->database_url) {
        snprintf(err, errcap, "no database: set DATABASE_URL or pass --database-url");
        return -1;
    }
    if (!cfg->db_pool) {
        int n = cfg->http_threads + cfg->workers;
        cfg->db_pool = n > 32 ? 32 : n;
    }
    return 0;
}
