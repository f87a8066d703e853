/*
 * log.c — JSON lines on stderr (see server/log.h). The line is built first
 * and written with one fwrite under the mutex, so lines from different
 * threads never interleave.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/log.h"

static const char *const level_names[] = {"debug", "info", "warn", "error", "audit"};

void srv_log_init(srv_log *l, FILE *out, int level)
{
    l->out = out;
    l->level = level;
    pthread_mutex_init(&l->mu, NULL);
}

void srv_log_destroy(srv_log *l)
{
    pthread_mutex_destroy(&l->mu);
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
        fwrite(text, 1, n + 1, l->out);
    } else {
        fprintf(l->out, "{\"ts\":\"%s\",\"level\":\"error\",\"msg\":\"cannot format a log line\"}\n",
                stamp);
    }
    fflush(l->out);
    pthread_mutex_unlock(&l->mu);
    free(text);
}
