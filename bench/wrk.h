/*
 * wrk.h — runs wrk (Debian package) against one URL and prints its figure as
 * one JSON line: requests/s, p50 and p99 latency, non-2xx responses, socket
 * errors. Shared by the service benchmarks; header-only.
 */
#ifndef PERFCAST_BENCH_WRK_H
#define PERFCAST_BENCH_WRK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds in wrk's latency notation ("812.00us", "1.20ms", "2.00s"). */
static double wrk_seconds(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (!strncmp(end, "us", 2))
        return v / 1e6;
    if (!strncmp(end, "ms", 2))
        return v / 1e3;
    if (!strncmp(end, "m", 1))
        return v * 60;
    return v;
}

/* Runs `wrk -t2 -cC -dSs --latency [-s script] url` and prints {"figure":
 * figure, ...}; script (a Lua file, e.g. setting wrk.method and wrk.body for
 * a POST) may be NULL. Returns 0, or -1 (after printing an error line) when
 * wrk did not run. */
static __attribute__((unused)) int wrk_run_script(const char *figure, const char *url,
                                                  int seconds, int connections,
                                                  const char *script)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "wrk -t2 -c%d -d%ds --latency %s%s%s '%s' 2>&1", connections,
             seconds, script ? "-s '" : "", script ? script : "", script ? "'" : "", url);
    FILE *p = popen(cmd, "r");
    char line[512], p50[32] = "", p99[32] = "";
    double rps = -1;
    long non2xx = 0, errors = 0;
    while (p && fgets(line, sizeof line, p)) {
        sscanf(line, " Requests/sec: %lf", &rps);
        sscanf(line, " 50%% %31s", p50);
        sscanf(line, " 99%% %31s", p99);
        sscanf(line, " Non-2xx or 3xx responses: %ld", &non2xx);
        if (strstr(line, "Socket errors"))
            errors = 1;
    }
    int rc = p ? pclose(p) : -1;
    if (rc != 0 || rps < 0) {
        printf("{\"figure\": \"%s\", \"error\": \"wrk did not run (is it installed?)\"}\n", figure);
        return -1;
    }
    printf("{\"figure\": \"%s\", \"tool\": \"wrk -t2 -c%d -d%ds\", \"requests_per_s\": %.0f, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"non_2xx\": %ld, \"socket_errors\": %s}\n",
           figure, connections, seconds, rps, wrk_seconds(p50) * 1e3, wrk_seconds(p99) * 1e3,
           non2xx, errors ? "true" : "false");
    fflush(stdout);
    return 0;
}

/* One wrk measurement, for figures that compare two servers. */
typedef struct wrk_result {
    double rps, p50_ms, p99_ms, max_ms;
    long non2xx, requests;
    int socket_errors;
    long connect_errors, read_errors, write_errors, timeouts;
    /* from a script that prints "STATUS <503s> <429s> <other non-2xx>
     * <refusals without Retry-After>" in done() (WRK_STATUS_LUA) */
    int has_status;
    long status_503, status_429, status_other, no_retry_after;
} wrk_result;

/* A wrk script counting refusals by status, and those without Retry-After;
 * GET, with the given headers (-H). */
#define WRK_STATUS_LUA                                                                   \
    "local threads = {}\n"                                                               \
    "function setup(thread) table.insert(threads, thread) end\n"                         \
    "function init(args) s503 = 0; s429 = 0; other = 0; noretry = 0 end\n"               \
    "function response(status, headers, body)\n"                                         \
    "  if status == 503 or status == 429 then\n"                                         \
    "    if status == 503 then s503 = s503 + 1 else s429 = s429 + 1 end\n"               \
    "    if headers['Retry-After'] == nil then noretry = noretry + 1 end\n"              \
    "  elseif status >= 300 then other = other + 1 end\n"                                \
    "end\n"                                                                              \
    "function done(summary, latency, requests)\n"                                        \
    "  local a, b, c, d = 0, 0, 0, 0\n"                                                  \
    "  for _, t in ipairs(threads) do\n"                                                 \
    "    a = a + t:get('s503'); b = b + t:get('s429')\n"                                 \
    "    c = c + t:get('other'); d = d + t:get('noretry')\n"                             \
    "  end\n"                                                                            \
    "  io.write(string.format('STATUS %d %d %d %d\\n', a, b, c, d))\n"                   \
    "end\n"

/* Runs `wrk -t2 -cC -dSs --latency [extra] [-H header] [-s script] url`
 * (extra: more options, e.g. "--timeout 10s", or NULL) and fills *out
 * without printing. 0, or -1 when wrk did not run. */
static __attribute__((unused)) int wrk_measure(const char *url, int seconds, int connections,
                                               const char *extra, const char *header,
                                               const char *script, wrk_result *out)
{
    char cmd[1536];
    snprintf(cmd, sizeof cmd, "wrk -t2 -c%d -d%ds --latency %s %s%s%s %s%s%s '%s' 2>&1",
             connections, seconds, extra ? extra : "", header ? "-H '" : "",
             header ? header : "", header ? "'" : "", script ? "-s '" : "",
             script ? script : "", script ? "'" : "", url);
    FILE *p = popen(cmd, "r");
    char line[512], p50[32] = "", p99[32] = "", avg[32] = "", sd[32] = "", max[32] = "";
    *out = (wrk_result){.rps = -1};
    while (p && fgets(line, sizeof line, p)) {
        sscanf(line, " Requests/sec: %lf", &out->rps);
        sscanf(line, " 50%% %31s", p50);
        sscanf(line, " 99%% %31s", p99);
        sscanf(line, " Latency %31s %31s %31s", avg, sd, max);
        sscanf(line, " %ld requests in", &out->requests);
        sscanf(line, " Non-2xx or 3xx responses: %ld", &out->non2xx);
        if (sscanf(line, "STATUS %ld %ld %ld %ld", &out->status_503, &out->status_429,
                   &out->status_other, &out->no_retry_after) == 4)
            out->has_status = 1;
        if (strstr(line, "Socket errors")) {
            out->socket_errors = 1;
            sscanf(line, " Socket errors: connect %ld, read %ld, write %ld, timeout %ld",
                   &out->connect_errors, &out->read_errors, &out->write_errors, &out->timeouts);
        }
    }
    int rc = p ? pclose(p) : -1;
    out->p50_ms = wrk_seconds(p50) * 1e3;
    out->p99_ms = wrk_seconds(p99) * 1e3;
    out->max_ms = wrk_seconds(max) * 1e3;
    return rc != 0 || out->rps < 0 ? -1 : 0;
}

static __attribute__((unused)) int wrk_run(const char *figure, const char *url, int seconds,
                                           int connections)
{
    return wrk_run_script(figure, url, seconds, connections, NULL);
}

#endif
