/*
 * test_server_log.c — the service's log lines (server/log.c, compiled in
 * here: the server's files are not in the library): every line is one JSON
 * object, also for request fields with bytes that are not UTF-8 or control
 * characters; with batching on, lines keep their order, a warn line brings
 * out the info lines before it, and nothing is lost when the log closes.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/log.c"
#include "tests/check.h"

/* The lines written so far to f, parsed; their count. */
static int read_lines(FILE *f, json_t **lines, int cap)
{
    fflush(f);
    rewind(f);
    char buf[4096];
    int n = 0;
    while (n < cap && fgets(buf, sizeof buf, f)) {
        lines[n] = json_loads(buf, 0, NULL);
        check(lines[n] != NULL, "line %d is JSON: %s", n, buf);
        n++;
    }
    fseek(f, 0, SEEK_END);
    return n;
}

static void free_lines(json_t **lines, int n)
{
    for (int i = 0; i < n; i++)
        json_decref(lines[i]);
}

static void test_quote(void)
{
    char buf[64];
    size_t n = srv_log_quote(buf, 0, sizeof buf, "a\"b\\c\n\x01\xff\xc3\xa9");
    buf[n] = '\0';
    check(!strcmp(buf, "\"a\\\"b\\\\c\\u000a\\u0001\\ufffd\xc3\xa9\""), "quoted: %s", buf);
    check(srv_log_quote(buf, 0, 4, "abcdef") == 4, "too long for the buffer: cap");
}

static void test_fields(void)
{
    FILE *f = tmpfile();
    srv_log l;
    srv_log_init(&l, f, SRV_LOG_INFO);
    char fields[256];
    size_t n = (size_t)snprintf(fields, sizeof fields, "\"path\":");
    n = srv_log_quote(fields, n, sizeof fields, "/v1/\xfe\x80x\x7f\t");
    n += (size_t)snprintf(fields + n, sizeof fields - n, ",\"status\":200,\"duration_ms\":0.125");
    srv_log_fields(&l, SRV_LOG_INFO, "request", fields, n);
    srv_log_fields(&l, SRV_LOG_DEBUG, "dropped", "", 0);
    srv_log_fields(&l, SRV_LOG_WARN, "no fields", "", 0);
    json_t *lines[8];
    int got = read_lines(f, lines, 8);
    check(got == 2, "2 lines (debug dropped), got %d", got);
    if (got == 2) {
        check(!strcmp(json_string_value(json_object_get(lines[0], "msg")), "request"), "msg");
        check(!strcmp(json_string_value(json_object_get(lines[0], "level")), "info"), "level");
        check(json_is_string(json_object_get(lines[0], "ts")), "ts");
        const char *path = json_string_value(json_object_get(lines[0], "path"));
        check(path && !strcmp(path, "/v1/\xef\xbf\xbd\xef\xbf\xbdx\x7f\t"), "path: %s",
              path ? path : "(none)");
        check(json_integer_value(json_object_get(lines[0], "status")) == 200, "status");
        check(json_is_number(json_object_get(lines[0], "duration_ms")), "duration_ms");
        check(!strcmp(json_string_value(json_object_get(lines[1], "level")), "warn"), "warn");
    }
    free_lines(lines, got);
    srv_log_destroy(&l);
    fclose(f);
}

static void test_batch(void)
{
    FILE *f = tmpfile();
    srv_log l;
    srv_log_init(&l, f, SRV_LOG_INFO);
    check(srv_log_batch(&l, 60000) == 0, "batching starts"); /* the flusher waits a minute */
    for (int i = 0; i < 100; i++)
        srv_logf(&l, SRV_LOG_INFO, "request", "{s:i}", "i", i);
    srv_logf(&l, SRV_LOG_AUDIT, "audit", "{s:i}", "i", 100);
    json_t *lines[256];
    int got = read_lines(f, lines, 256);
    check(got == 101, "an audit line brings out the 100 info lines before it: %d", got);
    int ordered = 1;
    for (int i = 0; i < got; i++)
        ordered &= json_integer_value(json_object_get(lines[i], "i")) == i;
    check(ordered, "in order");
    free_lines(lines, got);
    srv_logf(&l, SRV_LOG_INFO, "request", "{s:i}", "i", 101);
    char fields[] = "\"i\":102";
    srv_log_fields(&l, SRV_LOG_INFO, "request", fields, strlen(fields));
    srv_log_destroy(&l); /* writes what waits */
    got = read_lines(f, lines, 256);
    check(got == 103, "nothing lost at close: %d lines", got);
    if (got == 103)
        check(json_integer_value(json_object_get(lines[102], "i")) == 102, "the last line last");
    free_lines(lines, got);
    fclose(f);
}

int main(void)
{
    test_quote();
    test_fields();
    test_batch();
    return check_summary();
}
