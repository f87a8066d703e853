/*
 * http_client.h — a minimal HTTP/1.1 client for the CLI's questions to a
 * perfcast server (perfcast ci-check): one GET per connection over plain
 * TCP ("Connection: close"), Content-Length, read-to-close and chunked
 * bodies. perfcast links no HTTP client library: CI asks a server on
 * loopback or inside its network, and one GET does not justify a new
 * dependency of the whole binary. https:// is refused with a message
 * (use curl against the JSON route there).
 */
#ifndef PERFCAST_SERVER_HTTP_CLIENT_H
#define PERFCAST_SERVER_HTTP_CLIENT_H

#include <stddef.h>

typedef struct cli_url {
    char host[256];
    char port[8];
    char prefix[512]; /* path before the API's, "" or "/perfcast" */
} cli_url;

/* Parses "http://HOST[:PORT][/PREFIX]" ([::1] for IPv6). 0, or -1 with why. */
int cli_url_parse(const char *text, cli_url *u, char *err, size_t errcap);

/* GET prefix+path (path with its query, already encoded) with an optional
 * bearer token. *status and *body (malloc'ed, NUL-terminated) on success
 * (0); -1 with why when no answer came. timeout in seconds. */
int cli_http_get(const cli_url *u, const char *path, const char *token, int timeout,
                 int *status, char **body, size_t *len, char *err, size_t errcap);

/* The same for any method, with an optional body (sent with its
 * Content-Length and content_type). */
int cli_http_request(const cli_url *u, const char *method, const char *path, const char *token,
                     const char *content_type, const void *body, size_t body_len, int timeout,
                     int *status, char **out, size_t *len, char *err, size_t errcap);

/* Appends text percent-encoded (all but A-Z a-z 0-9 - . _ ~) to buf of cap;
 * returns the new length, or cap when it does not fit. */
size_t cli_url_encode(char *buf, size_t used, size_t cap, const char *text);

#endif
