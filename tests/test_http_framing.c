/*
 * test_http_framing.c — message framing as RFC 9112 §6 asks, over raw
 * sockets on loopback against a real server (tests/harness.h):
 *
 *   - Content-Length and Transfer-Encoding together: 400, and the
 *     connection closes, so that bytes after the chunked body ("0\r\n\r\n"
 *     then a second request) are never read as a request of their own;
 *   - a transfer coding other than chunked: 501, connection closed;
 *   - more query parameters than the documented limit: 414 with a problem
 *     document, never a silent close (a request line too long for the
 *     connection's memory: libmicrohttpd's own 414);
 *   - a chunked body without Content-Length is counted as it arrives: 413
 *     once it passes the body limit, without waiting for the rest;
 *   - the same routes still take well-framed requests (chunked under the
 *     limit, keep-alive after a good request).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"

#define BODY_LIMIT (1 << 20) /* PERFCAST_MAX_REQUEST_BODY of this server */
#define MAX_QUERY_PARAMS 64  /* SRV_MAX_QUERY_PARAMS (server/http.c) */

static int dial(harness *h)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)harness_port(h))};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Everything the server sends until it closes or stays silent for `quiet`
 * seconds; *closed says which. NUL-terminated, caller frees. */
static char *read_until_close(int fd, double quiet, int *closed)
{
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap);
    *closed = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int k = poll(&p, 1, (int)(quiet * 1000));
        if (k <= 0)
            break;
        if (n + 4096 > cap)
            buf = realloc(buf, cap *= 2);
        ssize_t got = recv(fd, buf + n, cap - n - 1, 0);
        if (got <= 0) {
            *closed = 1;
            break;
        }
        n += (size_t)got;
    }
    buf[n] = '\0';
    return buf;
}

static int count_responses(const char *s)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, "HTTP/1.1 ")); p++)
        n++;
    return n;
}

static int status_of(const char *s)
{
    int st = 0;
    return sscanf(s, "HTTP/1.1 %d", &st) == 1 ? st : 0;
}

/* Sends bytes on a fresh connection and reads what comes back. */
static char *exchange(harness *h, const char *bytes, int *closed)
{
    int fd = dial(h);
    if (fd < 0)
        return NULL;
    send_all(fd, bytes, strlen(bytes));
    char *out = read_until_close(fd, 3.0, closed);
    close(fd);
    return out;
}

static void test_smuggling(harness *h)
{
    /* the body is 5 bytes by Content-Length, and "0\r\n\r\n" by chunked;
     * what follows the terminator is a second request only if the server
     * read the body as chunked and kept the connection */
    const char *req = "POST /v1/fit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "0\r\n\r\n"
                      "GET /v1/tokens HTTP/1.1\r\nHost: x\r\n\r\n";
    int closed;
    char *out = exchange(h, req, &closed);
    check(out && status_of(out) == 400, "Content-Length with Transfer-Encoding: 400, got %.200s",
          out ? out : "(nothing)");
    check(out && count_responses(out) == 1, "one response only, the smuggled request unread: %s",
          out ? out : "");
    check(closed, "the connection is closed after the 400");
    check(out && strstr(out, "Transfer-Encoding"), "the problem names the header: %s",
          out ? out : "");
    free(out);

    /* the same with the headers the other way round and Content-Length 0 */
    req = "POST /v1/fit HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
          "Content-Length: 0\r\nContent-Type: application/json\r\n\r\n"
          "0\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    out = exchange(h, req, &closed);
    check(out && status_of(out) == 400 && count_responses(out) == 1 && closed,
          "either order: one 400, connection closed: %.300s", out ? out : "(nothing)");
    free(out);
}

static void test_unknown_coding(harness *h)
{
    const char *codings[] = {"xchunked", "gzip, chunked", "chunked, chunked", "identity"};
    for (size_t i = 0; i < sizeof codings / sizeof *codings; i++) {
        char req[512];
        snprintf(req, sizeof req,
                 "POST /v1/fit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 "Transfer-Encoding: %s\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                 codings[i]);
        int closed;
        char *out = exchange(h, req, &closed);
        check(out && status_of(out) == 501, "Transfer-Encoding: %s -> 501, got %.200s",
              codings[i], out ? out : "(nothing)");
        check(out && count_responses(out) == 1 && closed, "%s: one answer, then closed: %.300s",
              codings[i], out ? out : "");
        check(out && strstr(out, "application/problem+json"), "%s: a problem document",
              codings[i]);
        free(out);
    }
}

static void test_query_params(harness *h)
{
    /* at the limit: the router's own answer (unknown parameters: 400) */
    int counts[] = {MAX_QUERY_PARAMS, MAX_QUERY_PARAMS + 1, 1000, 2000, 3000};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int n = counts[i];
        size_t cap = (size_t)n * 12 + 256;
        char *req = malloc(cap);
        size_t len = (size_t)snprintf(req, cap, "GET /v1/experiments?");
        for (int k = 0; k < n; k++)
            len += (size_t)snprintf(req + len, cap - len, "%sp%d=1", k ? "&" : "", k);
        len += (size_t)snprintf(req + len, cap - len, " HTTP/1.1\r\nHost: x\r\n\r\n");
        int closed;
        char *out = exchange(h, req, &closed);
        int st = out ? status_of(out) : 0;
        if (n <= MAX_QUERY_PARAMS) {
            check(st == 400, "%d parameters: the router's 400 (unknown parameter), got %d", n, st);
        } else if (len > 16000) {
            /* a request line longer than a connection's memory (16 KiB):
             * libmicrohttpd's own 414, before any callback of ours */
            check(st == 414, "a %zu-byte request line: 414, got %d", len, st);
        } else {
            check(st == 414, "%d query parameters -> 414, got %.200s", n, out ? out : "");
            check(out && strstr(out, "application/problem+json") && strstr(out, "\"status\":414"),
                  "%d parameters: a problem document: %.300s", n, out ? out : "");
            char want[64];
            snprintf(want, sizeof want, "%d", MAX_QUERY_PARAMS);
            check(out && strstr(out, want), "%d parameters: the answer names the limit", n);
        }
        free(out);
        free(req);
    }
}

/* A chunked body of `total` bytes in 64 KiB chunks; stops sending when the
 * server answers or closes. The status read, 0 for none. *sent: bytes sent. */
static int chunked_upload(harness *h, size_t total, size_t *sent)
{
    int fd = dial(h);
    if (fd < 0)
        return 0;
    const char *head = "POST /v1/fit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    send_all(fd, head, strlen(head));
    size_t chunk = 65536;
    char *payload = malloc(chunk + 32);
    char *data = payload + 16;
    memset(data, ' ', chunk);
    data[0] = '[';
    *sent = 0;
    int status = 0;
    char resp[8192];
    size_t rn = 0;
    while (*sent < total && !status) {
        struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
        if (poll(&p, 1, 20000) <= 0)
            break;
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t got = recv(fd, resp + rn, sizeof resp - rn - 1, MSG_DONTWAIT);
            if (got <= 0)
                break;
            rn += (size_t)got;
            resp[rn] = '\0';
            status = status_of(resp);
            break;
        }
        char size[16];
        int sl = snprintf(size, sizeof size, "%zx\r\n", chunk);
        if (send_all(fd, size, (size_t)sl) || send_all(fd, data, chunk) ||
            send_all(fd, "\r\n", 2))
            break;
        *sent += chunk;
        data[0] = ' ';
    }
    if (!status) {
        if (*sent >= total)
            send_all(fd, "0\r\n\r\n", 5);
        int closed;
        char *out = read_until_close(fd, 5.0, &closed);
        status = status_of(out);
        free(out);
    }
    free(payload);
    close(fd);
    return status;
}

static void test_chunked_limit(harness *h)
{
    size_t sent = 0;
    int st = chunked_upload(h, (size_t)40 << 20, &sent);
    check(st == 413, "40 MiB chunked against a %d-byte limit: 413, got %d", BODY_LIMIT, st);
    check(sent < ((size_t)40 << 20), "the 413 came before the whole body (sent %zu bytes)", sent);
    /* under the limit the body is read and parsed as usual: 400 (not JSON) */
    st = chunked_upload(h, (size_t)512 << 10, &sent);
    check(st == 400, "512 KiB chunked under the limit: the handler's 400, got %d", st);
}

static void test_well_framed(harness *h)
{
    /* chunked alone, then a keep-alive second request on the connection */
    const char *req = "POST /v1/fit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
                      "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int closed;
    char *out = exchange(h, req, &closed);
    check(out && status_of(out) == 400 && count_responses(out) == 2 &&
              strstr(out, "HTTP/1.1 200"),
          "a chunked request, then /health on the same connection: %.400s", out ? out : "");
    free(out);
    /* Content-Length alone */
    out = exchange(h, "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", &closed);
    check(out && status_of(out) == 200, "Content-Length: 0 alone: 200, got %.200s",
          out ? out : "");
    free(out);
}

int main(void)
{
    char limit[64];
    snprintf(limit, sizeof limit, "PERFCAST_MAX_REQUEST_BODY=%d", BODY_LIMIT);
    const char *env[] = {limit, NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        check(0, "harness did not start");
        return check_summary();
    }
    test_smuggling(h);
    test_unknown_coding(h);
    test_query_params(h);
    test_chunked_limit(h);
    test_well_framed(h);
    harness_response r = {0};
    check(!harness_get(h, "/health", &r) && r.status == 200, "the server still answers /health");
    harness_response_free(&r);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
