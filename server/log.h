/*
 * log.h — structured logging: one JSON object per line on stderr,
 * {"ts","level","msg", ...fields}. Passed explicitly to whatever logs
 * (the HTTP glue, the worker pool, commands); safe from any thread.
 */
#ifndef PERFCAST_SERVER_LOG_H
#define PERFCAST_SERVER_LOG_H

#include <pthread.h>
#include <stdio.h>

/* SRV_LOG_AUDIT lines (one per write request, server/http.c) are written
 * whatever the level; it cannot be chosen as a level itself. */
enum { SRV_LOG_DEBUG = 0, SRV_LOG_INFO = 1, SRV_LOG_WARN = 2, SRV_LOG_ERROR = 3, SRV_LOG_AUDIT = 4 };

typedef struct srv_log {
    FILE *out;
    int level; /* lines below it are dropped */
    pthread_mutex_t mu;       /* buf, len, cap, batch_ms, stop */
    pthread_mutex_t write_mu; /* the file, spare; taken before mu */
    /* batching (srv_log_batch): debug/info lines wait in buf */
    char *buf, *spare;
    size_t len, cap, spare_cap;
    int batch_ms;       /* 0: every line is written at once */
    int stop;
    pthread_cond_t wake;
    pthread_t flusher;
} srv_log;

void srv_log_init(srv_log *l, FILE *out, int level);
/* Writes what waits and stops the flusher. */
void srv_log_destroy(srv_log *l);
/* From now on debug and info lines are written in batches, at most ms
 * milliseconds after they were logged (a request line per request was one
 * write(2) under the log's mutex each); a warn, error or audit line writes
 * what waits and itself at once, in order. 0, or -1 (lines stay unbatched). */
int srv_log_batch(srv_log *l, int ms);

/* "debug" | "info" | "warn" | "error" -> level, -1 otherwise */
int srv_log_level_from_name(const char *name);
/* Cheap test before building fields. */
int srv_log_enabled(const srv_log *l, int level);

/* Writes one line. fields is a Jansson json_pack() format for an object
 * ("{s:s, s:i}") followed by its arguments, or NULL for none; the fields go
 * next to ts/level/msg (which they cannot replace). */
void srv_logf(srv_log *l, int level, const char *msg, const char *fields, ...);

/* The same line from fields already in JSON: `"a":1,"b":"x"` (no braces;
 * "" for none). For lines written per request, where building a Jansson
 * object and dumping it was most of the logging's cost. */
void srv_log_fields(srv_log *l, int level, const char *msg, const char *fields, size_t len);

/* Appends s as a JSON string (quoted; control characters escaped, bytes
 * that are not UTF-8 as U+FFFD) to buf, which holds len bytes of cap; the
 * new length, or cap when it does not fit. */
size_t srv_log_quote(char *buf, size_t len, size_t cap, const char *s);

#endif
