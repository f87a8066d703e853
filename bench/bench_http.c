/*
 * bench_http.c — figures of the HTTP service against a private PostgreSQL
 * (tests/harness.h), one JSON line each:
 *
 *   http_startup  exec of `perfcast serve` to its "listening" line, migrated
 *                 database (median and max of 5 starts), and SIGTERM to exit
 *   http_health   GET /health under wrk (-t2 -c64 -d5s by default): req/s,
 *                 p50/p99 latency; request lines logged at info as shipped
 *   http_create   POST /v1/experiments one after another on fresh
 *                 connections for 2 s: req/s, p50/p99 latency
 *   read_<route>  the read endpoints (predict, models, scaling, cost,
 *                 bottlenecks, imbalance, configurations over a 16-point
 *                 grid) with a read token, under wrk (-t2 -c64, 10 s in
 *                 all), each next to nginx serving a static file of the same
 *                 size from a private configuration on a free loopback port:
 *                 nginx, perfcast, perfcast, nginx, 5 s each, so that load
 *                 from elsewhere on the machine falls on both alike; req/s
 *                 (mean of the halves), p99 (the worse half) and the ratio
 *                 to nginx (goal: >= 0.5x nginx, p99 <= 10 ms), and the p99
 *                 next to nginx's p99 with their ratio
 *   read_overload predict under wrk -c1024 (--timeout 10s), the server
 *                 started with PERFCAST_MAX_CONNECTIONS=512 and
 *                 PERFCAST_HEADER_TIMEOUT=10, while GET /health is asked
 *                 every 100 ms on new connections: req/s, p99 and slowest
 *                 request next to the configured timeout (10 s), the
 *                 answers refused with 503 and 429 and their share of all,
 *                 refusals without Retry-After, other non-2xx, wrk's
 *                 timeouts and connection errors, and how many health
 *                 checks were answered 200 with their p50, p99 and slowest
 *
 *   bench_http [--wrk-seconds N] [--wrk-connections N] [--read-seconds N]
 *              [--only-read] [--endpoint NAME]
 * --endpoint runs one read figure only (predict, models, ..., or overload).
 * PERFCAST_BIN names the server (bench/run.sh sets it). Without wrk on PATH
 * http_health reports an error line and the others still run; without nginx
 * the read figures say so and are skipped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/service_profile.h"
#include "bench/wrk.h"
#include "tests/harness.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int i = (int)(q * (n - 1) + 0.5);
    return n ? v[i] : 0;
}

static int startup(harness *h)
{
    double start[5], stop[5];
    for (int i = 0; i < 5; i++) {
        double t0 = now_s();
        if (harness_server_stop(h) != 0)
            return -1;
        double t1 = now_s();
        if (harness_server_start(h))
            return -1;
        stop[i] = (t1 - t0) * 1e3;
        start[i] = (now_s() - t1) * 1e3;
    }
    double max = 0;
    for (int i = 0; i < 5; i++)
        max = start[i] > max ? start[i] : max;
    printf("{\"figure\": \"http_startup\", \"starts\": 5, \"start_ms_median\": %.1f, "
           "\"start_ms_max\": %.1f, \"stop_ms_median\": %.1f}\n",
           quantile(start, 5, 0.5), max, quantile(stop, 5, 0.5));
    return 0;
}

static int health(harness *h, int seconds, int connections)
{
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/health", harness_port(h));
    return wrk_run("http_health", url, seconds, connections);
}

static int create(harness *h)
{
    enum { MAX = 200000 };
    double *lat = malloc(MAX * sizeof *lat);
    int n = 0, bad = 0;
    double t0 = now_s();
    while (lat && n < MAX && now_s() - t0 < 2.0) {
        char doc[512];
        snprintf(doc, sizeof doc,
                 "{\"name\":\"bench-%d\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\"},\"cost\":{\"cores_per_rank\":8,"
                 "\"price_per_core_hour\":0.05}}",
                 n);
        harness_response r;
        double t = now_s();
        int rc = harness_post(h, "/v1/experiments", doc, &r);
        lat[n++] = (now_s() - t) * 1e3;
        bad += rc || r.status != 201;
        harness_response_free(&r);
    }
    double wall = now_s() - t0;
    printf("{\"figure\": \"http_create\", \"requests\": %d, \"requests_per_s\": %.0f, "
           "\"p50_ms\": %.3f, \"p99_ms\": %.3f, \"failed\": %d, \"connection\": \"new per request\"}\n",
           n, n / wall, quantile(lat, n, 0.5), quantile(lat, n, 0.99), bad);
    free(lat);
    return bad ? -1 : 0;
}

/* The read endpoints against nginx: see the top of the file. */
#define READ_CONFIG_BODY                                                                  \
    "{\"max_time_s\":40000,\"max_cost\":5000,\"epochs\":90,"                              \
    "\"candidates\":{\"ranks\":{\"min\":2,\"max\":32,\"step\":2}}}"

static long json_field(const harness_response *r, const char *name)
{
    json_t *doc = harness_json(r);
    long v = (long)json_integer_value(json_object_get(doc, name));
    json_decref(doc);
    return v;
}

/* A free loopback TCP port (bound, read, closed), 0 when none. */
static int free_port(void)
{
    char out[64] = "";
    FILE *p = popen("python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\",0)); "
                    "print(s.getsockname()[1])' 2>/dev/null",
                    "r");
    if (p && !fgets(out, sizeof out, p))
        out[0] = '\0';
    if (p)
        pclose(p);
    return atoi(out);
}

/* nginx on a free loopback port serving dir; its pid, or -1 (why in err). */
static pid_t nginx_start(const char *dir, int *port, char *err, size_t cap)
{
    if (system("command -v nginx >/dev/null 2>&1") != 0 &&
        access("/usr/sbin/nginx", X_OK) != 0) {
        snprintf(err, cap, "nginx is not installed (apt-get install nginx-light)");
        return -1;
    }
    *port = free_port();
    char conf[700], path[600];
    snprintf(path, sizeof path, "%s/nginx.conf", dir);
    FILE *f = fopen(path, "w");
    if (!f || !*port) {
        if (f)
            fclose(f);
        snprintf(err, cap, "cannot write %.200s or find a free port", path);
        return -1;
    }
    /* what a packaged nginx does for a static file, minus the access log */
    fprintf(f,
            "daemon off;\nworker_processes auto;\npid %s/nginx.pid;\nerror_log %s/error.log;\n"
            "events { worker_connections 4096; }\n"
            "http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;\n"
            "  client_body_temp_path %s; proxy_temp_path %s; fastcgi_temp_path %s;\n"
            "  uwsgi_temp_path %s; scgi_temp_path %s;\n"
            "  server { listen 127.0.0.1:%d; root %s/www; default_type application/json; } }\n",
            dir, dir, dir, dir, dir, dir, dir, *port, dir);
    fclose(f);
    snprintf(conf, sizeof conf, "%s", path);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM); /* gone with the bench, even when it is killed */
        if (!freopen("/dev/null", "w", stderr))
            _exit(127);
        execlp("nginx", "nginx", "-c", conf, "-p", dir, (char *)NULL);
        execl("/usr/sbin/nginx", "nginx", "-c", conf, "-p", dir, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; pid > 0 && i < 200; i++) { /* until it answers */
        char cmd[128];
        snprintf(cmd, sizeof cmd, "exec 3<>/dev/tcp/127.0.0.1/%d", *port);
        char sh[256];
        snprintf(sh, sizeof sh, "bash -c '%s' 2>/dev/null", cmd);
        if (system(sh) == 0)
            return pid;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            break;
        harness_sleep(0.025);
    }
    snprintf(err, cap, "nginx did not start (see %.200s/error.log)", dir);
    if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    return -1;
}

static void nginx_stop(pid_t pid)
{
    kill(pid, SIGQUIT);
    waitpid(pid, NULL, 0);
}

/* The experiment the read figures ask: 5 points x 8 ranks x 20 callpaths,
 * models ready; its id, or 0. */
static long read_setup(harness *h)
{
    harness_response r;
    harness_post(h, "/v1/experiments",
                 "{\"name\":\"bench-read\",\"parameters\":[\"ranks\"],\"scaling\":\"strong\","
                 "\"training\":{\"train_samples\":1281167,\"batch_size\":32,"
                 "\"data_parallel\":\"ranks\",\"warmup_steps\":1},"
                 "\"cost\":{\"cores_per_rank\":8,\"price_per_core_hour\":0.05}}",
                 &r);
    long exp = r.status == 201 ? json_field(&r, "id") : 0;
    harness_response_free(&r);
    const bench_shape shape = {8, 5, 20, 1, 0};
    uint64_t seed = 7;
    long job = 0;
    char path[96];
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles", exp);
    for (int i = 1; exp && i <= 5; i++) {
        char *body = bench_profile(&shape, 2 * i, 1, &seed);
        harness_post(h, path, body, &r);
        job = r.status == 202 ? json_field(&r, "job") : 0;
        harness_response_free(&r);
        free(body);
    }
    return job && harness_wait_job(h, job, 120) ? exp : 0;
}

/* GET /health every 100 ms for seconds (in a child process): writes
 * "<ok> <asked> <p50 ms> <p99 ms> <slowest ms>" to fd. */
static void probe_health(harness *h, double seconds, int fd)
{
    enum { MAX_PROBES = 4096 };
    static double lat[MAX_PROBES];
    int ok = 0, asked = 0;
    double slowest = 0, t0 = harness_now();
    while (harness_now() - t0 < seconds && asked < MAX_PROBES) {
        harness_response r;
        double t = harness_now();
        harness_get(h, "/health", &r);
        t = (harness_now() - t) * 1e3;
        slowest = t > slowest ? t : slowest;
        lat[asked] = t;
        ok += r.status == 200;
        asked++;
        harness_response_free(&r);
        harness_sleep(0.1);
    }
    double p50 = quantile(lat, asked, 0.5), p99 = quantile(lat, asked, 0.99);
    char line[160];
    int n = snprintf(line, sizeof line, "%d %d %.1f %.1f %.1f\n", ok, asked, p50, p99, slowest);
    if (write(fd, line, (size_t)n) != n)
        _exit(1);
}

#define OVERLOAD_TIMEOUT_S 10 /* wrk's --timeout and the server's PERFCAST_HEADER_TIMEOUT */

static int overload(harness *h, long exp, const char *header, const char *dir, int seconds)
{
    char lua[700];
    snprintf(lua, sizeof lua, "%s/status.lua", dir);
    FILE *lf = fopen(lua, "w");
    if (lf) {
        fputs(WRK_STATUS_LUA, lf);
        fclose(lf);
    }
    int p[2];
    if (pipe(p))
        return -1;
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        close(p[0]);
        probe_health(h, seconds + 1, p[1]);
        _exit(0);
    }
    close(p[1]);
    char url[200];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/experiments/%ld/predict?ranks=40",
             harness_port(h), exp);
    wrk_result w;
    char extra[32];
    snprintf(extra, sizeof extra, "--timeout %ds", OVERLOAD_TIMEOUT_S);
    int bad = wrk_measure(url, seconds, 1024, extra, header, lf ? lua : NULL, &w);
    int ok = 0, asked = 0;
    double slowest = 0, hp50 = 0, hp99 = 0;
    FILE *f = fdopen(p[0], "r");
    if (!f || fscanf(f, "%d %d %lf %lf %lf", &ok, &asked, &hp50, &hp99, &slowest) != 5)
        bad = 1;
    if (f)
        fclose(f);
    if (child > 0)
        waitpid(child, NULL, 0);
    if (bad) {
        printf("{\"figure\": \"read_overload\", \"error\": \"wrk or the health probe did not "
               "run\"}\n");
        return -1;
    }
    long refused = w.status_503 + w.status_429;
    printf("{\"figure\": \"read_overload\", \"tool\": \"wrk -t2 -c1024 -d%ds --timeout %ds\", "
           "\"requests\": %ld, \"requests_per_s\": %.0f, \"p99_ms\": %.3f, \"max_ms\": %.1f, "
           "\"timeout_ms\": %d, \"max_within_timeout\": %s, "
           "\"status_503\": %ld, \"status_429\": %ld, \"refused_share\": %.3f, "
           "\"refused_without_retry_after\": %ld, \"other_non_2xx\": %ld, "
           "\"timeouts\": %ld, \"connect_errors\": %ld, \"read_errors\": %ld, "
           "\"health_ok\": %d, \"health_asked\": %d, \"health_p50_ms\": %.1f, "
           "\"health_p99_ms\": %.1f, \"health_max_ms\": %.1f}\n",
           seconds, OVERLOAD_TIMEOUT_S, w.requests, w.rps, w.p99_ms, w.max_ms,
           OVERLOAD_TIMEOUT_S * 1000,
           w.timeouts == 0 && w.max_ms <= OVERLOAD_TIMEOUT_S * 1000.0 ? "true" : "false",
           w.status_503, w.status_429, w.requests > 0 ? (double)refused / (double)w.requests : 0,
           w.no_retry_after, w.has_status ? w.status_other : w.non2xx - refused, w.timeouts,
           w.connect_errors, w.read_errors, ok, asked, hp50, hp99, slowest);
    fflush(stdout);
    return 0;
}

static int read_endpoints(harness *h, int seconds, int connections, const char *only)
{
    long exp = read_setup(h);
    harness_response r;
    harness_request(h, "POST", "/v1/tokens", "Content-Type: application/json\r\n",
                    "{\"scope\":\"write\"}", 17, &r);
    json_t *doc = harness_json(&r);
    char token[160] = "", header[200];
    snprintf(token, sizeof token, "%s", json_string_value(json_object_get(doc, "token")) ?: "");
    json_decref(doc);
    harness_response_free(&r);
    if (!exp || !token[0]) {
        printf("{\"figure\": \"read_setup\", \"error\": \"no models or no token\"}\n");
        return -1;
    }
    snprintf(header, sizeof header, "Authorization: Bearer %s", token);
    char dir[] = "/tmp/perfcast-nginx-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    char path[700];
    snprintf(path, sizeof path, "%s/www", dir);
    mkdir(path, 0755);
    char post[700];
    snprintf(post, sizeof post, "%s/post.lua", dir);
    FILE *lua = fopen(post, "w");
    if (lua) {
        fprintf(lua, "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = "
                     "\"application/json\"\nwrk.body = [[%s]]\n", READ_CONFIG_BODY);
        fclose(lua);
    }
    struct {
        const char *name, *query, *method;
    } ep[] = {{"predict", "predict?ranks=40", "GET"},
              {"models", "models?level=application&metric=time", "GET"},
              {"scaling", "scaling?from=2&to=64&step=2", "GET"},
              {"cost", "cost?ranks=64&epochs=90", "GET"},
              {"bottlenecks", "bottlenecks?at=ranks:64&limit=20", "GET"},
              {"imbalance", "imbalance?limit=20", "GET"},
              {"configurations", "configurations", "POST"}};
    int n = (int)(sizeof ep / sizeof ep[0]), rc = 0;
    /* each answer once: its size for nginx's file */
    char hdr[300];
    snprintf(hdr, sizeof hdr, "%s\r\nContent-Type: application/json\r\n", header);
    for (int i = 0; i < n; i++) {
        char url[200];
        snprintf(url, sizeof url, "/v1/experiments/%ld/%s", exp, ep[i].query);
        int isget = !strcmp(ep[i].method, "GET");
        harness_request(h, ep[i].method, url, hdr, isget ? NULL : READ_CONFIG_BODY,
                        isget ? 0 : strlen(READ_CONFIG_BODY), &r);
        snprintf(path, sizeof path, "%s/www/%s.json", dir, ep[i].name);
        FILE *f = fopen(path, "w");
        if (f) {
            fwrite(r.body ? r.body : "", 1, r.body_len, f);
            fclose(f);
        }
        if (r.status != 200) {
            printf("{\"figure\": \"read_%s\", \"error\": \"status %d\"}\n", ep[i].name,
                   r.status);
            rc = -1;
        }
        harness_response_free(&r);
    }
    char err[256];
    int port = 0;
    pid_t ng = nginx_start(dir, &port, err, sizeof err);
    if (ng < 0) {
        printf("{\"figure\": \"read_endpoints\", \"skipped\": \"%s\"}\n", err);
    }
    for (int i = 0; ng > 0 && i < n; i++) {
        if (only && strcmp(only, ep[i].name))
            continue;
        char url[300];
        int isget = !strcmp(ep[i].method, "GET");
        snprintf(path, sizeof path, "%s/www/%s.json", dir, ep[i].name);
        struct stat st;
        long bytes = stat(path, &st) ? 0 : (long)st.st_size;
        wrk_result base, ours, b2, o2;
        char nurl[300];
        int half = seconds / 2 > 0 ? seconds / 2 : 1;
        snprintf(nurl, sizeof nurl, "http://127.0.0.1:%d/%s.json", port, ep[i].name);
        snprintf(url, sizeof url, "http://127.0.0.1:%d/v1/experiments/%ld/%s", harness_port(h),
                 exp, ep[i].query);
        int bad = wrk_measure(nurl, half, connections, NULL, NULL, NULL, &base);
        bad |= wrk_measure(url, half, connections, NULL, header, isget ? NULL : post, &ours);
        bad |= wrk_measure(url, half, connections, NULL, header, isget ? NULL : post, &o2);
        bad |= wrk_measure(nurl, half, connections, NULL, NULL, NULL, &b2);
        base.rps = (base.rps + b2.rps) / 2;
        base.p99_ms = base.p99_ms > b2.p99_ms ? base.p99_ms : b2.p99_ms;
        ours.rps = (ours.rps + o2.rps) / 2;
        ours.p50_ms = (ours.p50_ms + o2.p50_ms) / 2;
        ours.p99_ms = ours.p99_ms > o2.p99_ms ? ours.p99_ms : o2.p99_ms;
        ours.non2xx += o2.non2xx;
        if (bad) {
            printf("{\"figure\": \"read_%s\", \"error\": \"wrk did not run (is it "
                   "installed?)\"}\n", ep[i].name);
            rc = -1;
            break;
        }
        printf("{\"figure\": \"read_%s\", \"tool\": \"wrk -t2 -c%d, 2 x %ds\", \"bytes\": %ld, "
               "\"requests_per_s\": %.0f, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"non_2xx\": %ld, "
               "\"nginx_requests_per_s\": %.0f, \"nginx_p99_ms\": %.3f, \"ratio_to_nginx\": "
               "%.2f, \"p99_ratio_to_nginx\": %.2f, \"p99_goal_ms\": 10}\n",
               ep[i].name, connections, half, bytes, ours.rps, ours.p50_ms, ours.p99_ms,
               ours.non2xx, base.rps, base.p99_ms, base.rps > 0 ? ours.rps / base.rps : 0,
               base.p99_ms > 0 ? ours.p99_ms / base.p99_ms : 0);
        fflush(stdout);
        rc |= ours.non2xx ? -1 : 0;
    }
    if (ng > 0)
        nginx_stop(ng);
    if (!only || !strcmp(only, "overload"))
        rc |= overload(h, exp, header, dir, seconds);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = -1;
    return rc;
}

int main(int argc, char **argv)
{
    int seconds = 5, connections = 64, read_seconds = 10, only_read = 0;
    const char *endpoint = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only-read"))
            only_read = 1;
        else if (i + 1 >= argc)
            break;
        else if (!strcmp(argv[i], "--wrk-seconds"))
            seconds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--wrk-connections"))
            connections = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--read-seconds"))
            read_seconds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--endpoint"))
            endpoint = argv[++i];
    }
    /* one token asks at wrk's rate: the per-token limit (50/s by default)
     * off; 512 connections, so that half of read_overload's are excess */
    static const char *const env[] = {"PERFCAST_RATE_LIMIT=0", "PERFCAST_MAX_CONNECTIONS=512",
                                      "PERFCAST_HEADER_TIMEOUT=10", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        printf("{\"figure\": \"http_startup\", \"error\": \"PostgreSQL or the server did not start\"}\n");
        return 1;
    }
    int failed = 0;
    if (!only_read) {
        failed |= startup(h) != 0;
        failed |= health(h, seconds, connections) != 0;
        failed |= create(h) != 0;
    }
    (void)bench_now_s;
    failed |= read_endpoints(h, read_seconds, connections, endpoint) != 0; /* last: it ends open mode */
    harness_close(h, failed);
    return failed;
}
