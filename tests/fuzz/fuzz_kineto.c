/*
 * fuzz_kineto.c — libFuzzer target for the Kineto / Chrome trace reader
 * (ingest/kineto.c, stream.c, stepsum.c). Each input is read from an
 * exact-size buffer (plain or gzip, as it comes), in the calling thread;
 * inputs of odd length run with tiny windows (8 held events, 4 device
 * events in flight, 64 cells) so that the second pass, eviction and the
 * limits are reached by small inputs too. Checks: fuzz_trace_common.h.
 * Seeds: tests/fuzz/corpus/kineto/ (cuts of the real traces, gzip
 * included); dictionary: tests/fuzz/kineto.dict.
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
    o.no_threads = 1;
    if (size & 1) {
        o.max_pending = 8;
        o.max_inflight = 4;
        o.max_cells = 64;
        o.max_callpaths = 32;
    }
    profile p;
    ingest_trace_info info;
    ingest_error err;
    ingest_input in = {.data = buf, .len = size, .fd = -1};
    int rc = ingest_kineto(&in, &o, &p, &info, &err);
    fz_check(rc, &p, &info, &err);
    free(buf);
    return 0;
}
