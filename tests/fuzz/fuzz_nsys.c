/*
 * fuzz_nsys.c — libFuzzer target for the Nsight Systems SQLite export
 * reader (ingest/nsys.c). Each input is handed over as the bytes of an
 * upload (sqlite3_deserialize, read-only); inputs of odd length use the
 * step marker "fwd" instead of the defaults. Checks: fuzz_trace_common.h.
 * Seeds: tests/fuzz/corpus/nsys/ (small exports in the documented schema).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_trace_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    ingest_trace_options o;
    ingest_trace_options_default(&o);
    if (size & 1)
        o.markers = "fwd";
    profile p;
    ingest_trace_info info;
    ingest_error err;
    int rc = ingest_nsys_memory(buf, size, &o, &p, &info, &err);
    fz_check(rc, &p, &info, &err);
    free(buf);
    return 0;
}
