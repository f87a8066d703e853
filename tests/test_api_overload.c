/*
 * test_api_overload.c — over its connection limit the server sheds load
 * instead of queueing it (server/http.c): with PERFCAST_MAX_CONNECTIONS=4
 * and four idle keep-alive connections held open, a fifth connection's
 * request to an API route is answered 503 with Retry-After and a
 * problem+json body at once, while /health and /ready on such a connection
 * still answer 200; once the idle connections close, the API answers again.
 * Real server, real PostgreSQL, loopback HTTP.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/harness.h"

#define LIMIT 4

/* An open connection that has sent nothing, or -1. */
static int idle_connection(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((unsigned short)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

int main(void)
{
    static const char *const env[] = {"PERFCAST_MAX_CONNECTIONS=4", NULL};
    harness_opts o = {.env = env};
    harness *h = harness_open(&o);
    if (!h) {
        check(0, "harness");
        return check_summary();
    }
    int idle[LIMIT];
    for (int i = 0; i < LIMIT; i++) {
        idle[i] = idle_connection(harness_port(h));
        check(idle[i] >= 0, "idle connection %d", i);
    }
    harness_sleep(0.2); /* the server has accepted them */
    harness_response r;
    double t0 = harness_now();
    harness_get(h, "/v1/experiments", &r);
    double took = harness_now() - t0;
    char retry[32] = "", type[64] = "";
    check(r.status == 503, "over the limit: 503, got %d %s", r.status, r.body);
    check(harness_header(&r, "Retry-After", retry, sizeof retry) && atoi(retry) > 0,
          "with Retry-After (\"%s\")", retry);
    check(harness_header(&r, "Content-Type", type, sizeof type) &&
              !strcmp(type, "application/problem+json"),
          "as problem+json (\"%s\")", type);
    check(r.body && strstr(r.body, "\"status\":503"), "the problem names 503: %s", r.body);
    check(took < 1.0, "answered at once, not queued (%.3f s)", took);
    harness_response_free(&r);
    harness_get(h, "/health", &r);
    check(r.status == 200, "health over the limit: 200, got %d", r.status);
    harness_response_free(&r);
    harness_get(h, "/ready", &r);
    check(r.status == 200, "ready over the limit: 200, got %d", r.status);
    harness_response_free(&r);
    for (int i = 0; i < LIMIT; i++)
        if (idle[i] >= 0)
            close(idle[i]);
    int status = 0;
    t0 = harness_now();
    while (status != 200 && harness_now() - t0 < 5) {
        harness_get(h, "/v1/experiments", &r);
        status = r.status;
        harness_response_free(&r);
        harness_sleep(0.05);
    }
    check(status == 200, "under the limit again: 200, got %d", status);
    harness_close(h, check_failed_count > 0);
    return check_summary();
}
