/*
 * fuzz_extrap_common.h — what the four fuzz_extrap_*.c libFuzzer targets
 * share: read the input with one Extra-P reader, then check the result the
 * way a caller relies on it, aborting (so libFuzzer reports a crash) when a
 * success is inconsistent or a failure leaves anything behind.
 */
#ifndef PERFCAST_FUZZ_EXTRAP_COMMON_H
#define PERFCAST_FUZZ_EXTRAP_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/extrap.h"

/* Every index in range, one point per coordinate, finite numbers. */
static void fuzz_extrap_check(const ingest_experiment *e)
{
    if (e->nparams < 1 || e->ncoords < 1 || e->ncallpaths < 1 || e->nmetrics < 1 ||
        e->nseries < 1)
        abort();
    for (int i = 0; i < e->nparams; i++)
        if (!e->params[i])
            abort();
    for (int i = 0; i < e->ncoords * e->nparams; i++)
        if (!isfinite(e->coords[i]))
            abort();
    for (int s = 0; s < e->nseries; s++) {
        const ingest_series *x = &e->series[s];
        if (x->callpath < 0 || x->callpath >= e->ncallpaths || x->metric < 0 ||
            x->metric >= e->nmetrics || x->npoints != e->ncoords || x->rep_start[0] != 0)
            abort();
        for (int p = 0; p < x->npoints; p++) {
            if (x->coord[p] < 0 || x->coord[p] >= e->ncoords ||
                x->rep_start[p + 1] <= x->rep_start[p])
                abort();
            for (int k = x->rep_start[p]; k < x->rep_start[p + 1]; k++)
                if (!isfinite(x->values[k]))
                    abort();
        }
    }
}

static void fuzz_extrap_read(const uint8_t *data, size_t size, ingest_format fmt)
{
    /* An exact-size copy: any read past size trips AddressSanitizer. */
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return;
    if (size)
        memcpy(buf, data, size);
    ingest_experiment e;
    ingest_error err;
    if (ingest_extrap_read(buf, size, fmt, &e, &err) == 0) {
        fuzz_extrap_check(&e);
        ingest_experiment_free(&e);
    } else {
        static const ingest_experiment zero;
        if (memcmp(&e, &zero, sizeof(zero)) != 0 || err.msg[0] == '\0' ||
            memchr(err.msg, '\0', sizeof(err.msg)) == NULL)
            abort();
    }
    free(buf);
}

#endif
