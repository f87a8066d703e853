/*
 * http_client.c — one GET over plain HTTP/1.1 (see http_client.h).
 */
#include "server/http_client.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define CLI_MAX_RESPONSE (64 << 20)

int cli_url_parse(const char *text, cli_url *u, char *err, size_t errcap)
{
    memset(u, 0, sizeof *u);
    if (!strncasecmp(text, "https://", 8)) {
        snprintf(err, errcap, "https is not supported by this client; give the server's plain "
                              "http:// address (loopback or inside the network)");
        return -1;
    }
    if (strncasecmp(text, "http://", 7)) {
        snprintf(err, errcap, "expected http://HOST[:PORT][/PREFIX], got \"%.80s\"", text);
        return -1;
    }
    const char *h = text + 7, *end;
    const char *path = strchrnul(h, '/');
    const char *colon;
    if (*h == '[') {
        end = memchr(h, ']', (size_t)(path - h));
        if (!end) {
            snprintf(err, errcap, "unterminated [ in \"%.80s\"", text);
            return -1;
        }
        snprintf(u->host, sizeof u->host, "%.*s", (int)(end - h - 1), h + 1);
        colon = end[1] == ':' ? end + 1 : NULL;
    } else {
        colon = memchr(h, ':', (size_t)(path - h));
        end = colon ? colon : path;
        snprintf(u->host, sizeof u->host, "%.*s", (int)(end - h), h);
    }
    if (!*u->host) {
        snprintf(err, errcap, "no host in \"%.80s\"", text);
        return -1;
    }
    if (colon) {
        int n = (int)(path - colon - 1);
        if (n < 1 || n > 5 || (int)strspn(colon + 1, "0123456789") < n) {
            snprintf(err, errcap, "bad port in \"%.80s\"", text);
            return -1;
        }
        snprintf(u->port, sizeof u->port, "%.*s", n, colon + 1);
    } else {
        snprintf(u->port, sizeof u->port, "80");
    }
    snprintf(u->prefix, sizeof u->prefix, "%s", path);
    size_t pl = strlen(u->prefix);
    while (pl > 0 && u->prefix[pl - 1] == '/')
        u->prefix[--pl] = '\0';
    return 0;
}

size_t cli_url_encode(char *buf, size_t used, size_t cap, const char *text)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        int plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                    (*p >= '0' && *p <= '9') || strchr("-._~", *p);
        if (used + (plain ? 1 : 3) >= cap)
            return cap;
        if (plain) {
            buf[used++] = (char)*p;
        } else {
            buf[used++] = '%';
            buf[used++] = hex[*p >> 4];
            buf[used++] = hex[*p & 15];
        }
    }
    buf[used] = '\0';
    return used;
}

static int connect_to(const cli_url *u, int timeout, char *err, size_t errcap)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(u->host, u->port, &hints, &res);
    if (gai) {
        snprintf(err, errcap, "cannot resolve %s: %s", u->host, gai_strerror(gai));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        struct timeval tv = {.tv_sec = timeout};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, a->ai_addr, a->ai_addrlen)) {
            snprintf(err, errcap, "cannot connect to %s:%s: %s", u->host, u->port,
                     strerror(errno));
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* Decodes a chunked body in place; new length, or -1 when malformed. */
static long dechunk(char *b, size_t n)
{
    size_t in = 0, out = 0;
    for (;;) {
        char *end = NULL;
        if (in >= n)
            return -1;
        unsigned long sz = strtoul(b + in, &end, 16);
        char *crlf = memmem(b + in, n - in, "\r\n", 2);
        if (!crlf || end == b + in)
            return -1;
        in = (size_t)(crlf - b) + 2;
        if (sz == 0)
            return (long)out;
        if (sz > n - in)
            return -1;
        memmove(b + out, b + in, sz);
        out += sz;
        in += sz + 2;
    }
}

int cli_http_get(const cli_url *u, const char *path, const char *token, int timeout,
                 int *status, char **body, size_t *len, char *err, size_t errcap)
{
    return cli_http_request(u, "GET", path, token, NULL, NULL, 0, timeout, status, body, len,
                            err, errcap);
}

/* Sends all of buf; 0, or -1. */
static int send_all(int fd, const char *buf, size_t n)
{
    size_t sent = 0;
    while (sent < n) {
        ssize_t k = send(fd, buf + sent, n - sent, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        sent += (size_t)k;
    }
    return 0;
}

int cli_http_request(const cli_url *u, const char *method, const char *path, const char *token,
                     const char *content_type, const void *payload, size_t payload_len,
                     int timeout, int *status, char **body, size_t *len, char *err,
                     size_t errcap)
{
    *body = NULL;
    *len = 0;
    int fd = connect_to(u, timeout, err, errcap);
    if (fd < 0)
        return -1;
    char *req = NULL, clen[64] = "";
    if (payload)
        snprintf(clen, sizeof clen, "Content-Length: %zu\r\n", payload_len);
    int rl = asprintf(&req,
                      "%s %s%s HTTP/1.1\r\nHost: %s:%s\r\nAccept: application/json\r\n"
                      "User-Agent: perfcast-cli\r\nConnection: close\r\n%s%s%s%s%s%s%s\r\n",
                      method, u->prefix, path, u->host, u->port, token ? "Authorization: Bearer " : "",
                      token ? token : "", token ? "\r\n" : "",
                      content_type ? "Content-Type: " : "", content_type ? content_type : "",
                      content_type ? "\r\n" : "", clen);
    if (rl < 0) {
        close(fd);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    int sent_ok = !send_all(fd, req, (size_t)rl) &&
                  (!payload || !send_all(fd, payload, payload_len));
    free(req);
    /* the server may answer (413, 4xx) before taking the whole body: read
     * what it says either way; nothing read and nothing sent is the error */
    size_t cap = 1 << 16, got = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        if (got == cap) {
            char *nb = cap < CLI_MAX_RESPONSE ? realloc(buf, 2 * cap + 1) : NULL;
            if (!nb)
                break;
            buf = nb;
            cap *= 2;
        }
        ssize_t n = recv(fd, buf + got, cap - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (!buf) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    buf[got] = '\0';
    char *head_end = strstr(buf, "\r\n\r\n");
    if (!head_end || sscanf(buf, "HTTP/1.%*d %d", status) != 1) {
        snprintf(err, errcap, "no HTTP answer from %s:%s%s", u->host, u->port,
                 got ? " (malformed)" : sent_ok ? "" : " (the request could not be sent)");
        free(buf);
        return -1;
    }
    *head_end = '\0';
    char *b = head_end + 4;
    size_t blen = got - (size_t)(b - buf);
    int chunked = 0;
    for (char *line = strstr(buf, "\r\n"); line; line = strstr(line + 2, "\r\n"))
        if (!strncasecmp(line + 2, "Transfer-Encoding:", 18) && strcasestr(line, "chunked"))
            chunked = 1;
    if (chunked) {
        long n = dechunk(b, blen);
        if (n < 0) {
            snprintf(err, errcap, "malformed chunked answer");
            free(buf);
            return -1;
        }
        blen = (size_t)n;
    }
    memmove(buf, b, blen);
    buf[blen] = '\0';
    *body = buf;
    *len = blen;
    return 0;
}
