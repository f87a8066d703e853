/*
 * harness.h — what API tests need around the code under test: a private
 * PostgreSQL, `perfcast serve` running against it, and an HTTP/1.1 client.
 *
 *   harness *h = harness_open(NULL);           // initdb + postgres + serve
 *   harness_response r;
 *   harness_post(h, "/v1/experiments", "{...}", &r);
 *   check(r.status == 201, "got %d: %s", r.status, r.body);
 *   harness_response_free(&r);
 *   harness_close(h);                          // stops both, removes the files
 *
 * PostgreSQL: initdb in a fresh mktemp directory (as the `postgres` user when
 * running as root, since PostgreSQL refuses root), a free loopback port,
 * fsync off. Binaries from PERFCAST_PG_BIN, else initdb on PATH, else the
 * newest /usr/lib/postgresql/N/bin. The server: PERFCAST_BIN (tests/run.sh
 * sets it), else build/perfcast, listening on 127.0.0.1 port 0; the harness
 * reads the bound port from its "listening" log line. Its log is kept in the
 * directory and printed by harness_close() when asked.
 *
 * Clean-up is guaranteed even when the test crashes or is killed: a small
 * reaper process waits on a pipe from the test and, if the test goes away
 * without harness_close(), kills the server, stops PostgreSQL and removes
 * the directory.
 *
 * Link: every tests/test_*.c is linked with $(BUILD)/libtesthelp.a (this
 * file's object), so an API test only includes "tests/harness.h".
 */
#ifndef PERFCAST_TESTS_HARNESS_H
#define PERFCAST_TESTS_HARNESS_H

#include <jansson.h>
#include <stddef.h>

typedef struct harness harness;

typedef struct harness_opts {
    const char *const *env; /* extra "NAME=VALUE" for the server, NULL-terminated */
    int no_server;          /* only PostgreSQL */
} harness_opts;

/* Starts PostgreSQL and (unless o->no_server) the server, and waits until
 * /ready answers 200. NULL, with the reason on stderr, when that fails. */
harness *harness_open(const harness_opts *o);
/* A second `perfcast serve` on first's PostgreSQL (same binary and extra
 * environment), with its own directory, log and port, for tests of servers
 * sharing one database. Requests through it go to its server; close it
 * with harness_close() before first (it leaves the PostgreSQL running).
 * NULL when the server did not become ready. */
harness *harness_second(harness *first);
/* Stops everything and removes the directory; show_log != 0 prints the
 * server's log first (e.g. when a check failed). */
void harness_close(harness *h, int show_log);

const char *harness_database_url(const harness *h);
int harness_port(const harness *h); /* changes on every server start */
const char *harness_dir(const harness *h);

/* The server. start waits for its "listening" line (not for /ready: the
 * database may be down on purpose); stop sends SIGTERM and returns the exit
 * status (-1 when it had to be killed); kill sends SIGKILL. 0 / -1. */
int harness_server_start(harness *h);
int harness_server_stop(harness *h);
int harness_server_kill(harness *h);
/* Prints the last lines of the server's log to stderr. */
void harness_server_log(harness *h, int lines);

/* PostgreSQL, same data and port. 0 / -1. */
int harness_pg_stop(harness *h);
int harness_pg_start(harness *h);

/* First column of the first row of sql into out ("" for no row). 0 / -1. */
int harness_sql(harness *h, const char *sql, char *out, size_t cap);

typedef struct harness_response {
    int status;       /* 0 when no response came */
    char *head;       /* status line and headers */
    char *body;       /* NUL-terminated (chunked bodies decoded) */
    size_t body_len;
} harness_response;

/* One request on a new connection ("Connection: close"). headers: NULL or
 * "Name: value\r\n" lines. A body, when not NULL, gets its Content-Length.
 * Returns 0 when a response was read, -1 otherwise. */
int harness_request(harness *h, const char *method, const char *path, const char *headers,
                    const char *body, size_t body_len, harness_response *r);
int harness_get(harness *h, const char *path, harness_response *r);
int harness_post(harness *h, const char *path, const char *json, harness_response *r);
int harness_delete(harness *h, const char *path, harness_response *r);
/* Sends bytes exactly as given and reads one response (1xx skipped). The
 * whole of bytes is sent before reading unless the server answers first. */
int harness_raw(harness *h, const char *bytes, size_t len, harness_response *r);

/* Value of header name (any case) into out; 1 found, 0 not. */
int harness_header(const harness_response *r, const char *name, char *out, size_t cap);
/* The body parsed as JSON, NULL if it is not. */
json_t *harness_json(const harness_response *r);
void harness_response_free(harness_response *r);

/* Small things every API test needs: monotonic seconds, sleeping for
 * fractional seconds, and the first column of a query (printf-formatted) as
 * an integer, -1 when the query fails. */
double harness_now(void);
void harness_sleep(double seconds);
long harness_sql_long(harness *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The whole of a file, NUL-terminated (malloc'ed, the caller frees), its
 * length in *len; NULL (and *len 0) when it cannot be read. */
char *harness_read_file(const char *path, size_t *len);

/* Polls GET /v1/jobs/{job} until the job is done (1) or failed or seconds
 * pass (0; a failed job's document goes to stderr). */
int harness_wait_job(harness *h, long job, double seconds);

/* Polls GET path until it answers want (or seconds pass); 1 reached, 0 not. */
int harness_wait_status(harness *h, const char *path, int want, double seconds);

#endif
