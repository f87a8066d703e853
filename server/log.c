/*
 * log.c — JSON lines on stderr (see server/log.h). The line is built first
 * and written with one fwrite under write_mu, so lines from different
 * threads never interleave. With batching on, debug and info lines are
 * appended to a buffer under mu instead (a memcpy: a request thread never
 * waits for the file there), which a flusher thread takes and writes every
 * few milliseconds; a warn/error/audit line, or a line that finds the
 * buffer full, takes what waits and writes it and itself at once. Lock
 * order: write_mu, then mu; the buffer is taken under both, so batches
 * reach the file in the order they were taken and no line overtakes one
 * logged before it.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/utf8.h"
#include "server/log.h"

static const char *const level_names[] = {"debug", "info", "warn", "error", "audit"};

#define BATCH_MAX ((size_t)64 << 10) /* bytes waiting: written at once beyond this */

void srv_log_init(srv_log *l, FILE *out, int level)
{
    memset(l, 0, sizeof *l);
    l->out = out;
    l->level = level;
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->write_mu, NULL);
    pthread_cond_init(&l->wake, NULL);
}

/* Takes the waiting lines (swapping buffers) and writes them, then n bytes
 * of text when text is not NULL, and flushes. Not under any lock. */
static void write_out(srv_log *l, const char *text, size_t n)
{
    pthread_mutex_lock(&l->write_mu);
    pthread_mutex_lock(&l->mu);
    char *b = l->buf;
    size_t len = l->len, cap = l->cap;
    l->buf = l->spare;
    l->cap = l->spare_cap;
    l->len = 0;
    pthread_mutex_unlock(&l->mu);
    if (len)
        fwrite(b, 1, len, l->out);
    if (text)
        fwrite(text, 1, n, l->out);
    if (len || text)
        fflush(l->out);
    l->spare = b; /* only ever touched under write_mu */
    l->spare_cap = cap;
    pthread_mutex_unlock(&l->write_mu);
}

static void *flusher_main(void *arg)
{
    srv_log *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long)l->batch_ms * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        int rc = 0;
        while (!l->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&l->wake, &l->mu, &until);
        if (l->len) {
            pthread_mutex_unlock(&l->mu);
            write_out(l, NULL, 0);
            pthread_mutex_lock(&l->mu);
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int srv_log_batch(srv_log *l, int ms)
{
    if (ms <= 0 || l->batch_ms)
        return l->batch_ms ? 0 : -1;
    pthread_mutex_lock(&l->mu);
    l->batch_ms = ms;
    pthread_mutex_unlock(&l->mu);
    if (pthread_create(&l->flusher, NULL, flusher_main, l)) {
        pthread_mutex_lock(&l->mu);
        l->batch_ms = 0;
        pthread_mutex_unlock(&l->mu);
        return -1;
    }
    return 0;
}

void srv_log_destroy(srv_log *l)
{
    pthread_mutex_lock(&l->mu);
    int batching = l->batch_ms != 0;
    l->stop = 1;
    pthread_cond_signal(&l->wake);
    pthread_mutex_unlock(&l->mu);
    if (batching)
        pthread_join(l->flusher, NULL);
    write_out(l, NULL, 0);
    fflush(l->out);
    free(l->buf);
    free(l->spare);
    l->buf = l->spare = NULL;
    l->cap = l->spare_cap = 0;
    pthread_cond_destroy(&l->wake);
    pthread_mutex_destroy(&l->write_mu);
    pthread_mutex_destroy(&l->mu);
}

/* Appends n bytes to the waiting lines; 0, or -1 when there is no room. */
static int append_waiting(srv_log *l, const char *text, size_t n)
{
    if (l->len + n > l->cap) {
        size_t cap = l->cap ? l->cap : 16384;
        while (cap < l->len + n)
            cap *= 2;
        char *p = realloc(l->buf, cap);
        if (!p)
            return -1;
        l->buf = p;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, text, n);
    l->len += n;
    return 0;
}

int srv_log_level_from_name(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, level_names[i]))
            return i;
    return -1;
}

int srv_log_enabled(const srv_log *l, int level)
{
    return level >= l->level;
}

/* "2026-01-02T03:04:05.678Z" for now; the date and time of day are
 * formatted once a second per thread. */
static void timestamp(char stamp[48])
{
    static _Thread_local time_t last_sec = -1;
    static _Thread_local char last[32];
    static _Thread_local size_t last_len;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (ts.tv_sec != last_sec) {
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        last_len = strftime(last, sizeof last, "%Y-%m-%dT%H:%M:%S", &tm);
        last_sec = ts.tv_sec;
    }
    memcpy(stamp, last, last_len);
    snprintf(stamp + last_len, 48 - last_len, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
}

/* Writes text (n bytes ending in '\n') as the log's policy says. */
static void emit(srv_log *l, int level, const char *text, size_t n);

void srv_logf(srv_log *l, int level, const char *msg, const char *fields, ...)
{
    if (!srv_log_enabled(l, level))
        return;
    char stamp[48];
    timestamp(stamp);

    json_t *line = json_pack("{s:s, s:s, s:s}", "ts", stamp, "level", level_names[level], "msg",
                             msg);
    if (line && fields) {
        va_list ap;
        va_start(ap, fields);
        json_error_t je;
        json_t *extra = json_vpack_ex(&je, 0, fields, ap);
        va_end(ap);
        if (extra)
            json_object_update_missing(line, extra);
        else
            json_object_set_new(line, "log_error", json_string(je.text));
        json_decref(extra);
    }
    char *text = line ? json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(line);
    if (text) {
        size_t n = strlen(text);
        text[n] = '\n'; /* replaces the NUL: written by length */
        emit(l, level, text, n + 1);
    } else {
        char fail[128];
        int n = snprintf(fail, sizeof fail,
                         "{\"ts\":\"%s\",\"level\":\"error\",\"msg\":\"cannot format a log line\"}\n",
                         stamp);
        write_out(l, fail, (size_t)n);
    }
    free(text);
}

static void emit(srv_log *l, int level, const char *text, size_t n)
{
    if (level < SRV_LOG_WARN) {
        pthread_mutex_lock(&l->mu);
        int kept = l->batch_ms && !l->stop && l->len + n <= BATCH_MAX &&
                   !append_waiting(l, text, n);
        pthread_mutex_unlock(&l->mu);
        if (kept)
            return;
    }
    write_out(l, text, n);
}

size_t srv_log_quote(char *buf, size_t len, size_t cap, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    if (len + 1 >= cap)
        return cap;
    buf[len++] = '"';
    while (*p) {
        char esc[8];
        const char *out = esc;
        size_t n;
        int seq = utf8_sequence(p);
        if (seq == 0) {
            out = "\\ufffd", n = 6, seq = 1;
        } else if (*p == '"' || *p == '\\') {
            esc[0] = '\\', esc[1] = (char)*p, n = 2;
        } else if (*p < 0x20 || *p == 0x7F) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[*p >> 4], esc[5] = hex[*p & 15], n = 6;
        } else {
            out = (const char *)p, n = (size_t)seq;
        }
        if (len + n + 1 >= cap)
            return cap;
        memcpy(buf + len, out, n);
        len += n;
        p += seq;
    }
    buf[len++] = '"';
    return len;
}

void srv_log_fields(srv_log *l, int level, const char *msg, const char *fields, size_t len)
{
    if (!srv_log_enabled(l, level))
        return;
    char stamp[48], head[160];
    timestamp(stamp);
    size_t n = (size_t)snprintf(head, sizeof head, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", stamp,
                                level_names[level]);
    n = srv_log_quote(head, n, sizeof head, msg);
    char stack[2048], *line = stack;
    size_t total = n + (len ? 1 + len : 0) + 2;
    if (n >= sizeof head || (total > sizeof stack && !(line = malloc(total)))) {
        srv_logf(l, SRV_LOG_ERROR, "cannot format a log line", NULL);
        return;
    }
    memcpy(line, head, n);
    if (len) {
        line[n++] = ',';
        memcpy(line + n, fields, len);
        n += len;
    }
    line[n++] = '}';
    line[n++] = '\n';
    emit(l, level, line, n);
    if (line != stack)
        free(line);
}
