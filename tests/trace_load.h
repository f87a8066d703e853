/*
 * trace_load.h — a profiler trace loaded for the iteration analyses'
 * tests (tests/test_opmodel.c, tests/test_iteration_host.c): from JSON text
 * the test wrote, or from a file (gzip or not) through the same reader the
 * service uses (iteration_load). Header-only.
 */
#ifndef PERFCAST_TESTS_TRACE_LOAD_H
#define PERFCAST_TESTS_TRACE_LOAD_H

#include <stdio.h>
#include <string.h>

#include "analysis/iteration.h"

/* json into t (initialized here); 0, or -1 with the reader's message on
 * stderr after what (the trace's name in the test). */
static int trace_load_text(const char *json, xg_trace *t, const char *what) __attribute__((unused));
static int trace_load_text(const char *json, xg_trace *t, const char *what)
{
    xg_error err;
    xg_trace_init(t);
    ingest_input in = {.data = json, .len = strlen(json), .fd = -1};
    int rc = iteration_load(&in, 1, t, &err);
    if (rc < 0)
        fprintf(stderr, "%s: %s\n", what, err.msg);
    return rc;
}

/* The trace file path into t (initialized here); 0, or -1. */
static int trace_load_file(const char *path, xg_trace *t) __attribute__((unused));
static int trace_load_file(const char *path, xg_trace *t)
{
    xg_error err;
    xg_trace_init(t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    ingest_input in = {.fd = fileno(f)};
    int rc = iteration_load(&in, 1, t, &err);
    fclose(f);
    return rc;
}

#endif
