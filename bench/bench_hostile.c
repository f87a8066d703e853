/*
 * bench_hostile.c — the service against hostile clients, measured against a
 * private PostgreSQL with tokens required (tests/harness.h), one JSON line
 * per figure:
 *
 *   hostile_anonymous  six anonymous uploads declaring 512 MiB each, sent at
 *                      once and streamed as fast as the server takes them:
 *                      their statuses, how much of each body the server
 *                      took before answering, and the server's RSS growth
 *                      (sampled every 20 ms) against its size before
 *   hostile_slowloris  1,100 connections trickling a header byte a second
 *                      (closed ones reopened at once, from 19 loopback
 *                      addresses) while GET /health is probed every 200 ms:
 *                      probes answered within 2 s, their worst and median
 *                      latency, and the ratio to the latency before the attack
 *   hostile_callpaths  an upload of one callpath over PERFCAST_MAX_CALLPATHS
 *                      (refused, naming the cap), then five uploads just
 *                      under it and their refit: peak RSS during the job
 *                      and RSS after it against the level before
 *
 *   bench_hostile [--slow N] [--seconds S] [--callpaths N]
 * PERFCAST_BIN names the server (bench/run.sh sets it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench/server_mem.h"
#include "tests/harness.h"

#define SLOW_PER_ADDRESS 58 /* one address each 58: well below the per-address cap */

static int connect_from(harness *h, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in b = {.sin_family = AF_INET};
    inet_pton(AF_INET, src, &b.sin_addr);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)harness_port(h))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (bind(fd, (struct sockaddr *)&b, sizeof b) || connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- six anonymous 512 MiB uploads --------------------------------------- */

typedef struct anon_job {
    harness *h;
    char path[128];
    int status;
    unsigned long long sent; /* body bytes the server took before its answer */
    double answer_s;
} anon_job;

static void *anon_thread(void *arg)
{
    anon_job *j = arg;
    const unsigned long long declared = 512ULL << 20;
    int fd = connect_from(j->h, "127.0.0.1");
    if (fd < 0)
        return NULL;
    char head[256];
    snprintf(head, sizeof head,
             "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             "Content-Length: %llu\r\n\r\n",
             j->path, declared);
    double t0 = harness_now();
    if (send(fd, head, strlen(head), MSG_NOSIGNAL) < 0) {
        close(fd);
        return NULL;
    }
    static char chunk[1 << 16];
    memset(chunk, ' ', sizeof chunk);
    char resp[4096];
    size_t got = 0;
    while (j->sent < declared && harness_now() - t0 < 60) {
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        if (p.revents & POLLIN) {
            ssize_t n = recv(fd, resp + got, sizeof resp - 1 - got, 0);
            if (n > 0) {
                got += (size_t)n;
                resp[got] = '\0';
                if (!j->answer_s)
                    j->answer_s = harness_now() - t0;
                if (strstr(resp, "\r\n\r\n"))
                    break;
            } else {
                break;
            }
        } else if (p.revents & POLLOUT) {
            ssize_t n = send(fd, chunk, sizeof chunk, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n > 0)
                j->sent += (unsigned long long)n;
            else if (n < 0 && errno != EAGAIN)
                break;
        } else {
            break;
        }
    }
    if (got == 0) { /* the socket was reset under a send: the answer may still be readable */
        ssize_t n = recv(fd, resp, sizeof resp - 1, MSG_DONTWAIT);
        got = n > 0 ? (size_t)n : 0;
        resp[got] = '\0';
    }
    if (sscanf(resp, "HTTP/1.1 %d", &j->status) != 1)
        j->status = 0;
    close(fd);
    return NULL;
}

static void anonymous(harness *h, long exp)
{
    enum { N = 6 };
    int pid = server_pid(h);
    double before = status_mb(pid, "VmRSS"), peak = before;
    reset_peak(pid);
    anon_job jobs[N];
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i] = (anon_job){.h = h};
        snprintf(jobs[i].path, sizeof jobs[i].path, "/v1/experiments/%ld/profiles?ranks=2", exp);
        pthread_create(&th[i], NULL, anon_thread, &jobs[i]);
    }
    /* sample while they run (VmHWM too, when the kernel resets it) */
    for (int k = 0; k < 150; k++) {
        double rss = status_mb(pid, "VmRSS");
        if (rss > peak)
            peak = rss;
        harness_sleep(0.02);
    }
    int refused = 0;
    unsigned long long most = 0;
    double slowest = 0;
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        refused += jobs[i].status == 401;
        if (jobs[i].sent > most)
            most = jobs[i].sent;
        if (jobs[i].answer_s > slowest)
            slowest = jobs[i].answer_s;
    }
    double hwm = status_mb(pid, "VmHWM");
    if (hwm > peak)
        peak = hwm;
    printf("{\"figure\": \"hostile_anonymous\", \"uploads\": %d, \"declared_mb\": 512, "
           "\"answered_401\": %d, \"most_body_mb_taken\": %.2f, \"slowest_answer_s\": %.3f, "
           "\"rss_before_mb\": %.1f, \"rss_peak_mb\": %.1f, \"rss_growth_mb\": %.1f, "
           "\"target_growth_mb\": 64, \"growth_vs_declared\": %.5f}\n",
           N, refused, (double)most / (1 << 20), slowest, before, peak, peak - before,
           (peak - before) / (N * 512.0));
    fflush(stdout);
}

/* ---- slowloris ---------------------------------------------------------- */

/* One GET /health on a new connection from 127.0.0.1: seconds to the
 * status line, or -1 when none came within limit seconds. */
static double probe(harness *h, double limit)
{
    double t0 = harness_now();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)harness_port(h))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (fd < 0)
        return -1;
    connect(fd, (struct sockaddr *)&a, sizeof a);
    const char *req = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int sent = 0;
    char buf[512];
    size_t got = 0;
    double took = -1;
    while (harness_now() - t0 < limit) {
        struct pollfd p = {.fd = fd, .events = sent ? POLLIN : POLLOUT};
        int left = (int)((limit - (harness_now() - t0)) * 1000) + 1;
        if (poll(&p, 1, left) <= 0)
            break;
        if (!sent) {
            if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req))
                break;
            sent = 1;
            continue;
        }
        ssize_t n = recv(fd, buf + got, sizeof buf - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        buf[got] = '\0';
        if (strstr(buf, "\r\n")) {
            if (!strncmp(buf, "HTTP/1.1 200", 12))
                took = harness_now() - t0;
            break;
        }
    }
    close(fd);
    return took;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void slowloris(harness *h, int n, double seconds)
{
    /* baseline first */
    double base[20];
    for (int i = 0; i < 20; i++)
        base[i] = probe(h, 2);
    qsort(base, 20, sizeof *base, cmp_double);
    int *fds = calloc((size_t)n, sizeof *fds);
    int reopened = 0;
    for (int i = 0; i < n; i++) {
        char src[32];
        snprintf(src, sizeof src, "127.0.2.%d", 1 + i / SLOW_PER_ADDRESS);
        fds[i] = connect_from(h, src);
    }
    const char *head = "POST /v1/experiments HTTP/1.1\r\nHost: x\r\nX-Pad: ";
    size_t hlen = strlen(head);
    double lat[1000];
    int probes = 0, answered = 0;
    double t0 = harness_now(), next_byte = t0;
    int byte = 0;
    while (harness_now() - t0 < seconds && probes < 1000) {
        if (harness_now() >= next_byte) {
            for (int i = 0; i < n; i++) {
                char c = byte < (int)hlen ? head[byte] : 'a';
                if (fds[i] >= 0 && send(fds[i], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
                    continue;
                if (fds[i] >= 0)
                    close(fds[i]);
                char src[32]; /* an attacker opens another at once */
                snprintf(src, sizeof src, "127.0.2.%d", 1 + i / SLOW_PER_ADDRESS);
                fds[i] = connect_from(h, src);
                if (fds[i] >= 0) {
                    reopened++;
                    send(fds[i], head, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                }
            }
            byte++;
            next_byte += 1.0;
        }
        double t = probe(h, 2.0);
        lat[probes++] = t < 0 ? 99 : t;
        answered += t >= 0;
        harness_sleep(0.2);
    }
    int open_now = 0;
    for (int i = 0; i < n; i++) {
        open_now += fds[i] >= 0;
        if (fds[i] >= 0)
            close(fds[i]);
    }
    free(fds);
    qsort(lat, (size_t)probes, sizeof *lat, cmp_double);
    double p50 = lat[probes / 2], worst = lat[probes - 1];
    printf("{\"figure\": \"hostile_slowloris\", \"slow_connections\": %d, \"seconds\": %.0f, "
           "\"reopened\": %d, \"probes\": %d, \"answered_within_2s\": %d, \"p50_ms\": %.2f, "
           "\"worst_ms\": %.2f, \"baseline_p50_ms\": %.3f, \"p50_vs_baseline\": %.1f}\n",
           n, seconds, reopened, probes, answered, p50 * 1e3, worst * 1e3, base[10] * 1e3,
           base[10] > 0 ? p50 / base[10] : 0);
    fflush(stdout);
}

/* ---- callpaths ---------------------------------------------------------- */

static void callpaths(harness *h, const char *token, int cap_n)
{
    char hdr[256];
    snprintf(hdr, sizeof hdr, "Authorization: Bearer %s\r\nContent-Type: application/json\r\n",
             token);
    char auth[200];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    const char *doc = "{\"name\":\"many-callpaths\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                      "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                      "\"data_parallel\":\"ranks\"}}";
    harness_response r;
    harness_request(h, "POST", "/v1/experiments", auth, doc, strlen(doc), &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);
    char path[160];
    size_t len;
    char *b = bench_wide_profile(2, cap_n + 1, &len);
    snprintf(path, sizeof path, "/v1/experiments/%ld/profiles?refit=defer", exp);
    harness_request(h, "POST", path, hdr, b, len, &r);
    int over = r.status, names = r.body && strstr(r.body, "PERFCAST_MAX_CALLPATHS") != NULL;
    harness_response_free(&r);
    free(b);
    int stored = 0;
    double upload_mb = 0;
    for (int x = 2; x <= 10; x += 2) {
        b = bench_wide_profile(x, cap_n - 1, &len);
        upload_mb += (double)len / (1 << 20);
        harness_request(h, "POST", path, hdr, b, len, &r);
        stored += r.status == 202;
        harness_response_free(&r);
        free(b);
    }
    int pid = server_pid(h);
    harness_sleep(0.5);
    double before = status_mb(pid, "VmRSS"), peak = before;
    int hwm_ok = reset_peak(pid) == 0;
    snprintf(path, sizeof path, "/v1/experiments/%ld/refit", exp);
    double t0 = harness_now();
    harness_request(h, "POST", path, auth, NULL, 0, &r);
    j = harness_json(&r);
    long job = (long)json_integer_value(json_object_get(j, "job"));
    json_decref(j);
    harness_response_free(&r);
    char jpath[64];
    snprintf(jpath, sizeof jpath, "/v1/jobs/%ld", job);
    char state[32] = "";
    while (harness_now() - t0 < 600) {
        double rss = status_mb(pid, "VmRSS");
        if (rss > peak)
            peak = rss;
        harness_request(h, "GET", jpath, auth, NULL, 0, &r);
        j = harness_json(&r);
        snprintf(state, sizeof state, "%s", json_string_value(json_object_get(j, "state")) ?: "");
        json_decref(j);
        harness_response_free(&r);
        if (!strcmp(state, "done") || !strcmp(state, "failed"))
            break;
        harness_sleep(0.05);
    }
    double took = harness_now() - t0;
    double hwm = hwm_ok ? status_mb(pid, "VmHWM") : -1;
    if (hwm > peak)
        peak = hwm;
    harness_sleep(1.0);
    double after = status_mb(pid, "VmRSS");
    printf("{\"figure\": \"hostile_callpaths\", \"cap\": %d, \"over_cap_status\": %d, "
           "\"over_cap_names_it\": %s, \"uploads_just_under\": %d, \"upload_mb\": %.1f, "
           "\"job_state\": \"%s\", \"refit_s\": %.2f, \"rss_before_mb\": %.1f, "
           "\"rss_peak_mb\": %.1f, \"rss_after_mb\": %.1f, \"after_vs_before\": %.2f, "
           "\"target_peak_mb\": 1024, \"target_after_vs_before\": 2}\n",
           cap_n, over, names ? "true" : "false", stored, upload_mb, state, took, before, peak,
           after, before > 0 ? after / before : 0);
    fflush(stdout);
}

static int cli_token(harness *h, char *out, size_t cap)
{
    char cmd[1024], file[300];
    const char *bin = getenv("PERFCAST_BIN") ? getenv("PERFCAST_BIN") : "build/perfcast";
    snprintf(file, sizeof file, "%s/token.txt", harness_dir(h));
    snprintf(cmd, sizeof cmd,
             "env DATABASE_URL='%s' %s token create --tenant bench --scope admin >%s 2>/dev/null",
             harness_database_url(h), bin, file);
    int rc = system(cmd);
    FILE *f = fopen(file, "r");
    size_t n = f ? fread(out, 1, cap - 1, f) : 0;
    out[n] = '\0';
    if (f)
        fclose(f);
    while (n && out[n - 1] == '\n')
        out[--n] = '\0';
    return rc == 0 && !strncmp(out, "pcf_", 4) ? 0 : -1;
}

int main(int argc, char **argv)
{
    int slow = 1100, cap_n = 20000;
    double seconds = 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--slow"))
            slow = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--callpaths"))
            cap_n = atoi(argv[i + 1]);
    }
    signal(SIGPIPE, SIG_IGN);
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl)) { /* 1,100 sockets and then some */
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    char cap_env[64];
    snprintf(cap_env, sizeof cap_env, "PERFCAST_MAX_CALLPATHS=%d", cap_n);
    const char *env[] = {cap_env, "PERFCAST_WORKERS=1", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        printf("{\"figure\": \"hostile_anonymous\", \"error\": \"harness did not start\"}\n");
        return 1;
    }
    char token[128];
    if (cli_token(h, token, sizeof token)) {
        printf("{\"figure\": \"hostile_anonymous\", \"error\": \"no token\"}\n");
        harness_close(h, 1);
        return 1;
    }
    char auth[200];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    const char *doc = "{\"name\":\"target\",\"parameters\":[\"ranks\"],\"scaling\":\"weak\","
                      "\"training\":{\"train_samples\":50000,\"batch_size\":256,"
                      "\"data_parallel\":\"ranks\"}}";
    harness_response r;
    harness_request(h, "POST", "/v1/experiments", auth, doc, strlen(doc), &r);
    json_t *j = harness_json(&r);
    long exp = (long)json_integer_value(json_object_get(j, "id"));
    json_decref(j);
    harness_response_free(&r);

    anonymous(h, exp);
    slowloris(h, slow, seconds);
    harness_sleep(3); /* let the attack's connections drain */
    callpaths(h, token, cap_n);
    harness_close(h, 0);
    return 0;
}
