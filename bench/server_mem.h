/*
 * server_mem.h — the memory of the server a bench started through
 * tests/harness.c, read from /proc: its pid, its VmRSS, VmHWM or RssAnon,
 * and a reset of the peak (VmHWM) to the current RSS before a measured
 * step; and the wide one-rank profile (ncp callpaths at ranks = x) whose
 * refit the memory figures measure. Header-only, for bench programs and
 * tests/test_api_memtrim.c (Linux).
 */
#ifndef PERFCAST_BENCH_SERVER_MEM_H
#define PERFCAST_BENCH_SERVER_MEM_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"

/* The pid of the server of h, 0 when unreadable. */
static int server_pid(harness *h) __attribute__((unused));
static int server_pid(harness *h)
{
    char path[512];
    snprintf(path, sizeof path, "%s/server.pid", harness_dir(h));
    FILE *f = fopen(path, "r");
    int pid = 0;
    if (f) {
        if (fscanf(f, "%d", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid;
}

/* The server's VmRSS, VmHWM or RssAnon (key) in MB (-1 when unreadable). */
static double status_mb(int pid, const char *key) __attribute__((unused));
static double status_mb(int pid, const char *key)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    double mb = -1;
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, klen) && line[klen] == ':')
            mb = atof(line + klen + 1) / 1024.0;
    if (f)
        fclose(f);
    return mb;
}

/* Resets the server's peak RSS (VmHWM) to its current RSS. 0, or -1. */
static int reset_peak(int pid) __attribute__((unused));
static int reset_peak(int pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/clear_refs", pid);
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -1;
    int rc = write(fd, "5", 1) == 1 ? 0 : -1;
    close(fd);
    return rc;
}

/* A perfcast JSON profile of one rank and one step with ncp callpaths at
 * ranks = x (malloc'ed, *len bytes). */
static inline char *bench_wide_profile(int x, int ncp, size_t *len)
{
    size_t cap = 256 + (size_t)ncp * 110;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "{\"point\":{\"ranks\":%d},\"ranks\":[{\"rank\":0,"
                                        "\"steps\":[{\"phase\":\"train\",\"callpaths\":[", x);
    for (int k = 0; k < ncp; k++)
        n += (size_t)snprintf(b + n, cap - n,
                              "%s{\"name\":\"kernel_%06d\",\"category\":\"%s\",\"metrics\":"
                              "{\"time\":%.6g}}",
                              k ? "," : "", k, k % 2 ? "comm" : "comp",
                              1e-4 * (k % 97 + 1) * (1 + 0.1 * x));
    n += (size_t)snprintf(b + n, cap - n, "]}]}]}");
    *len = n;
    return b;
}

#endif
