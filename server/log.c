/*
 * log.c — JSON lines on stderr (see server/log.h). The line is built first
 * and written with one fwrite under the mutex, so lines from different
 * threads never interleave. With batching on, debug and info lines are
 * appended to a buffer under the mutex instead, which a flusher thread
 * writes every few milliseconds (and a warn/error/audit line at once).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"

static const char *const level_names[] = {"debug", "info", "warn", "error", "audit"};

#define BATCH_MAX ((size_t)64 << 10) /* bytes waiting: written at once beyond this */

void srv_log_init(srv_log *l, FILE *out, int level)
{
    memset(l, 0, sizeof *l);
    l->out = out;
    l->level = level;
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->wake, NULL);
}

/* Writes the waiting lines; under mu. */
static void write_waiting(srv_log *l)
{
    if (l->len)
        fwrite(l->buf, 1, l->len, l->out);
    l->len = 0;
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
            write_waiting(l);
            fflush(l->out);
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
    write_waiting(l);
    fflush(l->out);
    free(l->buf);
    l->buf = NULL;
    l->cap = 0;
    pthread_cond_destroy(&l->wake);
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

void srv_logf(srv_log *l, int level, const char *msg, const char *fields, ...)
{
    if (!srv_log_enabled(l, level))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[48];
    size_t n = strftime(stamp, sizeof stamp - 6, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + n, sizeof stamp - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);

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
    pthread_mutex_lock(&l->mu);
    if (text) {
        size_t n = strlen(text);
        text[n] = '\n'; /* replaces the NUL: written by length */
        if (l->batch_ms && !l->stop && level < SRV_LOG_WARN && l->len + n + 1 <= BATCH_MAX &&
            !append_waiting(l, text, n + 1)) {
            pthread_mutex_unlock(&l->mu);
            free(text);
            return;
        }
        write_waiting(l);
        fwrite(text, 1, n + 1, l->out);
    } else {
        write_waiting(l);
        fprintf(l->out, "{\"ts\":\"%s\",\"level\":\"error\",\"msg\":\"cannot format a log line\"}\n",
                stamp);
    }
    fflush(l->out);
    pthread_mutex_unlock(&l->mu);
    free(text);
}
