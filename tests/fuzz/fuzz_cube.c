/*
 * fuzz_cube.c — libFuzzer target for the Cube profile reader (ingest/cube.h),
 * the reader of whole sets in one tar or zip (cube_bundle.c) and the .extra-p
 * experiment reader (ingest/extrap_exp.h): any bytes go to all three, with
 * small limits so that sizes claimed by headers and indexes are checked
 * rather than allocated. A success must give a consistent profile
 * (indices in range, finite location count) that also converts to the
 * normalized profile; a failure must say what was wrong. Seeds:
 * tests/fuzz/corpus/cube/ (Extra-P's .cubex files and its .extra-p).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/cube.h"
#include "ingest/extrap_exp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cube_limits lim = {1 << 20, 4 << 20, 100000};
    cube_profile p;
    ingest_error err;
    if (ingest_cube_read(data, size, &lim, &p, &err) == 0) {
        if (p.nlocations <= 0 || p.nmetrics <= 0)
            abort();
        for (int i = 0; i < p.nseries; i++)
            if (p.series[i].callpath < 0 || p.series[i].callpath >= p.ncallpaths ||
                p.series[i].metric < 0 || p.series[i].metric >= p.nmetrics)
                abort();
        profile prof;
        if (ingest_cube_to_profile(&p, &prof, &err) == 0) {
            if (prof.nrows > (size_t)p.nseries * (size_t)p.nlocations)
                abort();
            profile_free(&prof);
        }
        cube_profile_free(&p);
    } else if (!err.msg[0]) {
        abort();
    }
    cube_bundle b;
    if (ingest_cube_bundle_read(data, size, &lim, &b, &err) == 0) {
        if (b.n <= 0)
            abort();
        ingest_cube_bundle_free(&b);
    } else if (!err.msg[0]) {
        abort();
    }
    ingest_experiment e;
    if (ingest_extrap_exp_read(data, size, 0, &e, NULL, &err) == 0)
        ingest_experiment_free(&e);
    else if (!err.msg[0])
        abort();
    return 0;
}
